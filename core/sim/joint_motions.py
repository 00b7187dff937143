"""Joint-space motions: the laws a model can be driven along, each a closed form in time.

Every motion has a `duration` T (s), `n` joints and `sample(t) -> (q, qd, qdd)`, each
(S, n) for times t (S,) in s (clamped to [0, T]). The laws (Biagiotti and Melchiorri,
"Trajectory Planning for Automatic Machines and Robots", 2008, Ch. 2-4; Swevers et al.,
IEEE Trans. Robot. Autom. 13(5), 1997, for the Fourier series):

    Cycloid       rest to rest, q0 + D [tau - sin(2 pi tau) / (2 pi)]   (seed 001 eq. 22)
    Quintic       rest to rest, q0 + D (10 tau^3 - 15 tau^4 + 6 tau^5)  (zero qd, qdd at ends)
    Trapezoid     rest to rest, constant acceleration for t_b, constant rate, constant
                  deceleration for t_b (a "trapezoidal velocity" or linear segment with
                  parabolic blends)
    ViaPoints     through points at given times, a cubic spline with zero rate at both
                  ends (continuous qdd)
    FourierSeries q0 + sum_l a_l / (w_f l) sin(w_f l t) - b_l / (w_f l) cos(w_f l t),
                  w_f = 2 pi f (the excitation motion of identification)

with tau = t / T and D = q_T - q_0. A measured motion (`core.sim.measured.Motion`) has the
same interface. `limit_violations(model, motion)` names every joint that leaves its
limits (and, given them, its rate and acceleration limits); `check_limits` raises the
first as a `MotionError`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..algorithms.dynamics import inverse_dynamics
from ..errors import ArgumentError, MotionError
from ..model.arguments import finite_array, joint_vector, model_of, positive_number
from .trajectory import output_grid

if TYPE_CHECKING:
    from scipy.interpolate import CubicSpline

#: Samples per motion that `limit_violations` looks at (plus each law's own extreme
#: times): a quintic's peak rate is at T/2, exactly on this grid.
CHECK_SAMPLES = 2001


def _times(t, T: float) -> np.ndarray:
    """t (S,) or a scalar, finite, clamped to [0, T]; as a column (S, 1)."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    t = finite_array(t, (t.size,), "times")
    return np.clip(t, 0.0, T)[:, None]


def _endpoints(q_start, q_end, duration) -> tuple[np.ndarray, np.ndarray, float]:
    q0 = joint_vector(q_start, np.size(q_start), "q_start")
    qT = joint_vector(q_end, q0.size, "q_end")
    return q0, qT, positive_number(duration, "duration")


class JointMotion:
    """The interface of every motion: `duration` (s), `n` (joints), `name` (in words),
    `sample(t)` and `sample_times(dt_out)` (the sample times a run uses: a regular grid for a
    law, a measured motion's own times)."""

    name = "motion"
    duration: float

    @property
    def n(self) -> int:
        raise NotImplementedError

    def sample(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def sample_times(self, dt_out: float) -> np.ndarray:
        return output_grid(self.duration, dt_out)

    def extreme_times(self) -> np.ndarray:
        """Times where a rate or acceleration peaks, besides CHECK_SAMPLES's grid."""
        return np.zeros(0)


class _RestToRest(JointMotion):
    """q = q0 + D s(t/T): a normalized law s(tau) (s(0) = 0, s(1) = 1) scaled per joint."""

    q_start: np.ndarray
    q_end: np.ndarray

    def __post_init__(self) -> None:
        """The end poses as checked vectors of one size, the duration a positive number
        (`_endpoints`)."""
        q0, qT, T = _endpoints(self.q_start, self.q_end, self.duration)
        object.__setattr__(self, "q_start", q0)
        object.__setattr__(self, "q_end", qT)
        object.__setattr__(self, "duration", T)

    @property
    def n(self) -> int:
        return self.q_start.size

    def law(self, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """s, ds/dtau, d2s/dtau2 at tau (S, 1)."""
        raise NotImplementedError

    def sample(self, t):
        T = self.duration
        tau = _times(t, T) / T
        s, s1, s2 = self.law(tau)
        D = self.q_end - self.q_start
        return self.q_start + D * s, D * s1 / T, D * s2 / T / T  # (T**2 may overflow)


@dataclass(frozen=True, eq=False)
class Cycloid(_RestToRest):
    """Cycloidal rest-to-rest motion, seed 001 eqs. 22a-b: s = tau - sin(2 pi tau)/(2 pi).
    q_start, q_end (n,) rad / m; duration T s."""

    q_start: np.ndarray
    q_end: np.ndarray
    duration: float
    name = "cycloidal"

    def law(self, tau):
        w = 2.0 * np.pi
        return tau - np.sin(w * tau) / w, 1.0 - np.cos(w * tau), w * np.sin(w * tau)

    def extreme_times(self):
        return self.duration * np.array([0.25, 0.5, 0.75])


@dataclass(frozen=True, eq=False)
class Quintic(_RestToRest):
    """Quintic (fifth-order polynomial) rest-to-rest motion: s = 10 tau^3 - 15 tau^4 +
    6 tau^5, zero rate and acceleration at both ends; peak rate 15/8 D/T at T/2, peak
    acceleration 10 sqrt(3)/3 D/T^2 at tau = 1/2 -+ sqrt(3)/6."""

    q_start: np.ndarray
    q_end: np.ndarray
    duration: float
    name = "quintic"

    def law(self, tau):
        return (tau**3 * (10.0 - 15.0 * tau + 6.0 * tau**2),
                30.0 * tau**2 * (1.0 - tau) ** 2,
                60.0 * tau * (1.0 - tau) * (1.0 - 2.0 * tau))

    def extreme_times(self):
        r = math.sqrt(3.0) / 6.0
        return self.duration * np.array([0.5 - r, 0.5, 0.5 + r])


@dataclass(frozen=True, eq=False)
class Trapezoid(_RestToRest):
    """Trapezoidal-velocity rest-to-rest motion: every joint accelerates for the blend
    time t_b, moves at its peak rate V = D / (T - t_b), decelerates for t_b; its
    acceleration is A = V / t_b. 0 < t_b <= T/2 (t_b = T/2: the triangular profile);
    default T/3. All joints share t_b and T, so they start and stop together.

    `Trapezoid.fastest(q_start, q_end, rate_limit, accel_limit)` is the shortest one within
    the limits."""

    q_start: np.ndarray
    q_end: np.ndarray
    duration: float
    blend: float | None = None
    name = "trapezoidal"

    def __post_init__(self) -> None:
        super().__post_init__()
        T = self.duration
        tb = T / 3.0 if self.blend is None else positive_number(self.blend, "blend")
        if tb > T / 2.0 * (1.0 + 1e-12):
            raise ArgumentError(f"blend must be at most duration / 2 = {T / 2.0:g} s (a "
                                f"triangular profile), got {tb:g} s")
        object.__setattr__(self, "blend", min(tb, T / 2.0))

    @classmethod
    def fastest(cls, q_start, q_end, rate_limit, accel_limit) -> "Trapezoid":
        """The shortest trapezoid q_start -> q_end (n,) whose every joint keeps |qd| <=
        rate_limit and |qdd| <= accel_limit (scalars or (n,), rad/s and rad/s^2 or m/s and
        m/s^2). With a shared blend t_b, joint j needs T - t_b >= |D_j| / v_j and
        t_b (T - t_b) >= |D_j| / a_j; with D_v = max |D_j| / v_j and D_a = max |D_j| / a_j
        the least T is D_v + D_a / D_v at t_b = D_a / D_v when D_v^2 >= D_a, else the
        triangle 2 sqrt(D_a) at t_b = sqrt(D_a)."""
        q0 = joint_vector(q_start, np.size(q_start), "q_start")
        qT = joint_vector(q_end, q0.size, "q_end")
        v = positive_limits(rate_limit, q0.size, "rate_limit")
        a = positive_limits(accel_limit, q0.size, "accel_limit")
        D = np.abs(qT - q0)
        D_v, D_a = float(np.max(D / v)), float(np.max(D / a))
        if D_a == 0.0:
            raise ArgumentError("q_end equals q_start: there is no motion to time")
        if D_v**2 >= D_a:
            tb, T = D_a / D_v, D_v + D_a / D_v
        else:
            tb = math.sqrt(D_a)
            T = 2.0 * tb
        return cls(q0, qT, T, blend=tb)

    @property
    def peak_rate(self) -> np.ndarray:
        """V (n,), signed: D / (T - t_b)."""
        return (self.q_end - self.q_start) / (self.duration - self.blend)

    @property
    def acceleration(self) -> np.ndarray:
        """A (n,), signed: V / t_b."""
        return self.peak_rate / self.blend

    def law(self, tau):
        T, tb = self.duration, self.blend
        t = tau * T
        up, down = t < tb, t > T - tb
        # s = D-normalized position: t^2 / (2 t_b (T - t_b)) while accelerating, then
        # (t - t_b/2) / (T - t_b), then 1 - (T - t)^2 / (2 t_b (T - t_b)); written as
        # products of ratios so that no square of a time overflows
        s = np.where(up, 0.5 * (t / tb) * (t / (T - tb)),
                     np.where(down, 1.0 - 0.5 * ((T - t) / tb) * ((T - t) / (T - tb)),
                              (t - tb / 2.0) / (T - tb)))
        s1 = np.where(up, t / tb, np.where(down, (T - t) / tb, 1.0)) * (T / (T - tb))
        s2 = np.where(up, 1.0, np.where(down, -1.0, 0.0)) * (T / tb) * (T / (T - tb))
        return s, s1, s2

    def extreme_times(self):
        T, tb = self.duration, self.blend
        return np.array([0.0, tb * (1 - 1e-12), tb, T / 2.0, T - tb, T])


#: The rest-to-rest laws by name (`armdyn inverse --law`, a sweep's `InverseRun.law`): each
#: is built as LAW(q_start, q_end, duration) (the trapezoid also takes `blend`).
REST_TO_REST = {"cycloid": Cycloid, "quintic": Quintic, "trapezoid": Trapezoid}


def positive_limits(x, n: int, name: str) -> np.ndarray:
    """x, a scalar or (n,) limit (a rate, an acceleration, a joint force), as (n,) > 0;
    ArgumentError naming `name` otherwise."""
    v = joint_vector(x, n, name, scalar=True)
    if not np.all(v > 0):
        raise ArgumentError(f"{name} must be > 0 for every joint, got {v}")
    return v


@dataclass(frozen=True, eq=False)
class ViaPoints(JointMotion):
    """A smooth motion through via points: at `times` (K,) s, increasing from 0, the poses
    `points` (K, n); a cubic spline per joint with zero rate at the first and the last
    point (clamped ends), so q, qd and qdd are continuous (K >= 2)."""

    times: np.ndarray
    points: np.ndarray
    name = "via-point"
    _spline: CubicSpline = field(init=False, repr=False)

    def __post_init__(self) -> None:
        t = np.asarray(self.times, dtype=float)
        t = finite_array(t, (t.size,), "times")
        if t.size < 2:
            raise ArgumentError(f"times: a via-point motion needs at least 2 points, got {t.size}")
        if t[0] != 0.0:
            raise ArgumentError(f"times must start at 0 s, got {t[0]:g} s")
        steps = np.diff(t)
        if not np.all(steps > 0):
            k = int(np.argmax(~(steps > 0)))
            raise ArgumentError(f"times must increase: point {k + 2} is at {t[k + 1]:g} s, "
                                f"point {k + 1} at {t[k]:g} s")
        p = np.asarray(self.points, dtype=float)
        if p.ndim != 2 or p.shape[0] != t.size:
            raise ArgumentError(f"points must be ({t.size}, n), one pose per time, got shape "
                                f"{p.shape}")
        p = finite_array(p, p.shape, "points")
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "points", p)
        from scipy.interpolate import CubicSpline  # imported by via-point motions only

        object.__setattr__(self, "_spline", CubicSpline(t, p, axis=0, bc_type="clamped"))

    @property
    def duration(self) -> float:  # type: ignore[override]
        return float(self.times[-1])

    @property
    def n(self) -> int:
        return self.points.shape[1]

    def sample(self, t):
        t = _times(t, self.duration)[:, 0]
        s = self._spline
        return s(t), s(t, 1), s(t, 2)

    def extreme_times(self):
        return self.times


@dataclass(frozen=True, eq=False)
class FourierSeries(JointMotion):
    """A finite Fourier series per joint (Swevers et al. 1997, eq. 9):

        q_j(t)   = q0_j + sum_{l=1..L} a_jl / (w_f l) sin(w_f l t) - b_jl / (w_f l) cos(w_f l t)
        qd_j(t)  = sum_l a_jl cos(w_f l t) + b_jl sin(w_f l t)
        qdd_j(t) = sum_l w_f l (-a_jl sin(w_f l t) + b_jl cos(w_f l t))

    q0 (n,) rad / m; a, b (n, L) rad/s or m/s; base_frequency f Hz (w_f = 2 pi f); the
    duration defaults to one period 1/f. Periodic: a whole number of periods starts and
    ends in the same state."""

    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray
    base_frequency: float
    duration: float | None = None
    name = "Fourier"

    def __post_init__(self) -> None:
        q0 = joint_vector(self.q0, np.size(self.q0), "q0")
        a = np.atleast_2d(np.asarray(self.a, dtype=float))
        if a.shape[0] != q0.size:
            raise ArgumentError(f"a must be (n, L) = ({q0.size}, L), got shape {a.shape}")
        a = finite_array(a, a.shape, "a")
        b = finite_array(np.atleast_2d(np.asarray(self.b, dtype=float)), a.shape, "b")
        f = positive_number(self.base_frequency, "base_frequency")
        T = 1.0 / f if self.duration is None else positive_number(self.duration, "duration")
        for name, value in (("q0", q0), ("a", a), ("b", b), ("base_frequency", f),
                            ("duration", T)):
            object.__setattr__(self, name, value)

    @property
    def n(self) -> int:
        return self.q0.size

    def sample(self, t):
        t = _times(t, self.duration)  # (S, 1)
        w = 2.0 * np.pi * self.base_frequency * np.arange(1, self.a.shape[1] + 1)  # (L,)
        wt = t[:, :, None] * w  # (S, 1, L)
        s, c = np.sin(wt), np.cos(wt)
        a, b = self.a[None], self.b[None]  # (1, n, L)
        q = self.q0 + np.sum(a / w * s - b / w * c, axis=2)
        qd = np.sum(a * c + b * s, axis=2)
        qdd = np.sum(w * (-a * s + b * c), axis=2)
        return q, qd, qdd


# ----- limits ---------------------------------------------------------------------
def _value(model, j: int, x: float, rate: int = 0) -> str:
    """x of joint j as a user reads it: rate 0, 1, 2 a position, rate, acceleration (deg
    or m based), 3 a joint force (N m or N)."""
    if rate == 3:
        return f"{x:.4g} {'N m' if model.is_revolute[j] else 'N'}"
    unit = ("deg", "deg/s", "deg/s^2")[rate] if model.is_revolute[j] else \
        ("m", "m/s", "m/s^2")[rate]
    return f"{math.degrees(x):.4g} {unit}" if model.is_revolute[j] else f"{x:.4g} {unit}"


def check_times(motion: JointMotion) -> np.ndarray:
    """The times at which a motion's limits are checked (`limit_violations`), s:
    CHECK_SAMPLES over its duration and the law's own extreme times."""
    return np.union1d(np.linspace(0.0, motion.duration, CHECK_SAMPLES),
                      np.clip(motion.extreme_times(), 0.0, motion.duration))


def limit_violations(model, motion: JointMotion, rate_limit=None, accel_limit=None,
                     torque_limit=None) -> list[MotionError]:
    """Every joint of `model` that `motion` takes past a limit, one MotionError each (not
    raised): its joint limits (`Model.joint_limits`), and, when given, |qd| <= rate_limit,
    |qdd| <= accel_limit and |tau| <= torque_limit, tau the inverse dynamics along the
    motion (scalars or (n,), rad/s, rad/s^2, N m or m/s, m/s^2, N). Looks at
    `check_times(motion)` and names the time of the worst excess per joint and limit."""
    m = model_of(model)
    if motion.n != m.n or m.nq != m.n:
        raise ArgumentError(f"the {motion.name} motion moves {motion.n} joints; the model "
                            f"{m.name!r} has {m.n}" if motion.n != m.n else
                            f"the {motion.name} motion moves joint values one by one; "
                            f"{m.name!r} has joints of several degrees of freedom")
    t = check_times(motion)
    q, qd, qdd = motion.sample(t)
    names = m.joint_names
    out = []
    limits = m.joint_limits
    for j in range(m.n):
        for side, sign, limit in (("lower", -1.0, limits[j, 0]), ("upper", 1.0, limits[j, 1])):
            past = sign * (q[:, j] - limit)
            i = int(np.argmax(past))
            if past[i] > 1e-12 * max(1.0, abs(limit)):
                out.append(MotionError(
                    f"{motion.name} motion: joint {j + 1} ({names[j]!r}) reaches "
                    f"{_value(m, j, q[i, j])} at t = {t[i]:.4g} s, {_value(m, j, past[i])} "
                    f"past its {side} limit ({_value(m, j, limit)})",
                    joint=j + 1, time=float(t[i]), what=f"{side} limit"))
    tau = None
    if torque_limit is not None:
        positive_limits(torque_limit, m.n, "torque_limit")  # before the dynamics
        tau = inverse_dynamics(m, q, qd, qdd)
    for order, given, what, values in ((1, rate_limit, "rate limit", qd),
                                       (2, accel_limit, "acceleration limit", qdd),
                                       (3, torque_limit, "torque limit", tau)):
        if given is None:
            continue
        bound = positive_limits(given, m.n, ("rate_limit", "accel_limit",
                                             "torque_limit")[order - 1])
        for j in range(m.n):
            i = int(np.argmax(np.abs(values[:, j])))
            if abs(values[i, j]) > bound[j] * (1.0 + 1e-9):
                out.append(MotionError(
                    f"{motion.name} motion: joint {j + 1} ({names[j]!r}) needs "
                    f"{_value(m, j, abs(values[i, j]), order)} at t = {t[i]:.4g} s, above its "
                    f"{what} ({_value(m, j, bound[j], order)})",
                    joint=j + 1, time=float(t[i]), what=what))
    return out


def check_limits(model, motion: JointMotion, rate_limit=None, accel_limit=None,
                 torque_limit=None) -> None:
    """Raise the first of `limit_violations(model, motion, rate_limit, accel_limit,
    torque_limit)`."""
    found = limit_violations(model, motion, rate_limit, accel_limit, torque_limit)
    if found:
        raise found[0]
