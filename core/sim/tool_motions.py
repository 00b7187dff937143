"""Tool-space motions: the tool (the last link's frame) along a straight line or a circular
arc, its orientation turned at a constant axis, solved for the joints by inverse
kinematics (`core.algorithms.inverse_kinematics.solve_position`, damped least squares,
each solution started from the last: a continued path).

The path is timed by the quintic law s(t/T) = 10 tau^3 - 15 tau^4 + 6 tau^5 (rest to
rest). With p0, R0 the tool's pose at q_start and phi = log(R0^T R1) the turn to the end
orientation (in the start frame):

    line   p(s) = p0 + s (p1 - p0)
    arc    p(s) = c + r (cos(s theta) u + sin(s theta) v)   (the circle through p0, a
           via point and p1; u from c to p0, v in the plane, theta the swept angle)
    R(s) = R0 exp(s phi),  angular velocity w = R0 phi s',  w' = R0 phi s''
    x'   = [R0 phi; p'(s)]  (the task's rate per unit s; its linear rows only when the
           orientation is not followed),  x'' = [0; p''(s)]
    qd   = J^+ x' s'
    qdd  = J^+ (x'' s'^2 + x' s'' - Jdot qd) + (1 - J^+ J) Jdot^T J^+^T qd
           (the time rate of qd = J^+ x' s': the second term, zero unless the task has
           fewer rows than the arm has joints, is the rate of J^+ in its null space;
           Jdot = H qd, H = dJ/dq from
           `core.algorithms.inverse_kinematics.tool_jacobian_derivative`)

At construction the path is solved at PATH_SAMPLES points (and dq/ds = J^+ x' kept
there); a point the tool cannot reach (the IK stops short by more than its tolerance) or
a pose near a singularity (the task Jacobian's smallest singular value below
`core.algorithms.inverse_kinematics.NEAR_SINGULAR`) raises MotionError naming where on
the path (t, the fraction travelled and the point). `sample(t)` starts at each t from the
cubic (Hermite) through the two solved points around it, their q and dq/ds: a guess that
usually meets the path within IK_TOLERANCE already (then no IK step is taken; otherwise
the IK starts from it), and computes qd and qdd for all times at once. A model with fewer
than six joints (or without an orientation asked) follows the position only.
"""
from __future__ import annotations

import math

import numpy as np

from ..algorithms.inverse_kinematics import (NEAR_SINGULAR, rotation_error, solve_position,
                                             tool_jacobian_derivative)
from ..algorithms.kinematics import forward_kinematics
from ..errors import ArgumentError, MotionError
from ..model.arguments import finite_array, joint_vector, model_of, positive_number
from .joint_motions import JointMotion, Quintic

#: Points at which the path is solved when the motion is built.
PATH_SAMPLES = 101
#: m (and rad): a path point is reached when the IK comes this close.
IK_TOLERANCE = 1e-9


class _ToolPath(JointMotion):
    """A timed tool path (module docstring); subclasses give `point(s)` and `point_rate(s)`
    (dp/ds) for s in [0, 1]."""

    name = "tool-path"

    def __init__(self, model, q_start, duration: float, end_rotation=None,
                 orientation: bool | None = None) -> None:
        self.model = model_of(model)
        m = self.model
        self.q_start = joint_vector(q_start, m.n, "q_start")
        self.duration = positive_number(duration, "duration")
        if m.nq != m.n:
            raise ArgumentError("tool paths move joints of one degree of freedom; "
                                f"{m.name!r} has joints of several")
        start = forward_kinematics(m, self.q_start).end_effector
        self.p0, self.R0 = start[:3, 3].copy(), start[:3, :3].copy()
        self.orientation = (m.n >= 6) if orientation is None else bool(orientation)
        R1 = self.R0 if end_rotation is None else finite_array(end_rotation, (3, 3),
                                                               "end_rotation")
        from scipy.spatial.transform import Rotation  # (scipy.spatial: not at a window's start)

        self.phi = Rotation.from_matrix(self.R0.T @ R1).as_rotvec()
        self._timing = Quintic(np.zeros(1), np.ones(1), self.duration)
        self._s = np.linspace(0.0, 1.0, PATH_SAMPLES)
        self._q = np.empty((PATH_SAMPLES, m.n))
        self._limits = m.joint_limits.T
        q = self.q_start
        for i, s in enumerate(self._s):
            q = self._solve(q, s, self.duration * self._time_of(s))
            self._q[i] = q
        self._dq = self._rates(self._q, self._s, np.ones(PATH_SAMPLES),
                               np.zeros(PATH_SAMPLES))[0]

    @property
    def n(self) -> int:
        return self.model.n

    # ----- the path ---------------------------------------------------------------
    def point(self, s: float) -> np.ndarray:
        raise NotImplementedError

    def point_rate(self, s: float) -> np.ndarray:
        raise NotImplementedError

    def point_curvature(self, s: float) -> np.ndarray:
        """d^2 p / ds^2, (3,), m."""
        raise NotImplementedError

    def rotation(self, s: float) -> np.ndarray:
        """R(s) = R0 exp(s phi), (3, 3)."""
        from scipy.spatial.transform import Rotation

        return self.R0 @ Rotation.from_rotvec(s * self.phi).as_matrix()

    def _time_of(self, s: float) -> float:
        """tau with s(tau) = s (the quintic is increasing: bisection), as a fraction of T."""
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self._timing.law(np.array([[mid]]))[0][0, 0] < s:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    def _where(self, s: float, t: float) -> str:
        return (f"the {self.name} motion at t = {t:.4g} s ({s:.0%} of the path, tool at "
                f"[{', '.join(f'{x:.4g}' for x in self.point(s))}] m)")

    def _singular(self, s: float, t: float, smallest: float) -> MotionError:
        return MotionError(f"{self._where(s, t)}: near a singularity (smallest singular "
                           f"value {smallest:.3g})", time=t, what="singularity")

    def _solve(self, guess: np.ndarray, s: float, t: float) -> np.ndarray:
        R = self.rotation(s) if self.orientation else None
        found = solve_position(self.model, guess, self.point(s), R, tolerance=IK_TOLERANCE,
                               max_iterations=200)
        if not found.reached:
            raise MotionError(f"{self._where(s, t)}: out of reach (the tool stops "
                              f"{found.residual:.3g} m and "
                              f"{math.degrees(found.rotation_residual):.3g} deg short)",
                              time=t, what="reach")
        if found.near_singular():
            raise self._singular(s, t, found.smallest_singular_value)
        return found.q

    def _on_path(self, q: np.ndarray, s: float, R: np.ndarray) -> bool:
        """q (n,) puts the tool at s (orientation R (3, 3)) within IK_TOLERANCE, inside the
        joint limits."""
        lo, hi = self._limits
        if np.any(q < lo) or np.any(q > hi):
            return False
        tool = forward_kinematics(self.model, q).end_effector
        if np.linalg.norm(self.point(s) - tool[:3, 3]) > IK_TOLERANCE:
            return False
        return not self.orientation or np.linalg.norm(
            rotation_error(R, tool[:3, :3])) <= IK_TOLERANCE

    # ----- sampling ---------------------------------------------------------------
    def _rates(self, q: np.ndarray, s: np.ndarray, sd: np.ndarray, sdd: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """qd and qdd (S, n) on the path at q (S, n), s (S,) with s' = sd (S,) (1/s) and
        s'' = sdd (S,) (1/s^2) (module docstring), and the task Jacobian's smallest
        singular value (S,)."""
        xd = np.array([self.point_rate(si) for si in s])                   # (S, 3)
        xdd = np.array([self.point_curvature(si) for si in s])
        if self.orientation:
            xd = np.concatenate([np.broadcast_to(self.R0 @ self.phi, xd.shape), xd], axis=1)
            xdd = np.concatenate([np.zeros_like(xdd), xdd], axis=1)
        rows = slice(0, 6) if self.orientation else slice(3, 6)
        J, H = tool_jacobian_derivative(self.model, q)
        J, H = J[:, rows], H[:, rows]
        U, sv, Vt = np.linalg.svd(J, full_matrices=False)
        with np.errstate(divide="ignore", invalid="ignore"):  # sv checked by the caller
            J_plus = np.swapaxes(Vt, -1, -2) @ (np.swapaxes(U, -1, -2) / sv[:, :, None])
        qd = np.einsum("sij,sj->si", J_plus, xd * sd[:, None])
        Jd = np.einsum("sijk,sk->sij", H, qd)                                # Jdot
        a = xdd * (sd * sd)[:, None] + xd * sdd[:, None] - np.einsum("sij,sj->si", Jd, qd)
        qdd = np.einsum("sij,sj->si", J_plus, a)
        # the rate of J^+ in its null space (zero when J has full column rank)
        y = np.einsum("sji,sj->si", J_plus, qd)                           # J^+^T qd
        z = np.einsum("sji,sj->si", Jd, y)                                 # Jdot^T J^+^T qd
        qdd += z - np.einsum("sij,sjk,sk->si", J_plus, J, z)
        return qd, qdd, sv[:, -1]

    def _guess(self, s: np.ndarray) -> np.ndarray:
        """q (S, n) at s (S,) by the cubic (Hermite) through the solved points around each."""
        k = np.clip(np.searchsorted(self._s, s, side="right") - 1, 0, PATH_SAMPLES - 2)
        ds = (self._s[k + 1] - self._s[k])[:, None]
        x = (s[:, None] - self._s[k][:, None]) / ds
        h00, h10 = (1 + 2 * x) * (1 - x) ** 2, x * (1 - x) ** 2
        h01, h11 = x * x * (3 - 2 * x), x * x * (x - 1)
        return (h00 * self._q[k] + h10 * ds * self._dq[k] + h01 * self._q[k + 1]
                + h11 * ds * self._dq[k + 1])

    def sample(self, t):
        T = self.duration
        t = np.clip(finite_array(np.atleast_1d(np.asarray(t, dtype=float)),
                                 (np.size(t),), "times"), 0.0, T)
        if t.size == 0:
            return (np.zeros((0, self.n)),) * 3
        s, s1, s2 = (x[:, 0] for x in self._timing.law((t / T)[:, None]))
        q = np.empty((t.size, self.n))
        guesses = self._guess(s)
        from scipy.spatial.transform import Rotation

        R = self.R0 @ Rotation.from_rotvec(s[:, None] * self.phi).as_matrix()  # R(s), (S, 3, 3)
        for i, ti in enumerate(t):
            # the cubic meets the path to ~1e-8 of a step: most times need no IK step
            q[i] = (guesses[i] if self._on_path(guesses[i], s[i], R[i])
                    else self._solve(guesses[i], s[i], ti))
        qd, qdd, smallest = self._rates(q, s, s1 / T, s2 / T**2)
        near = np.flatnonzero(smallest < NEAR_SINGULAR)
        if near.size:
            i = near[0]
            raise self._singular(s[i], t[i], smallest[i])
        return q, qd, qdd


class ToolLine(_ToolPath):
    """The tool's origin on the straight line from its place at q_start (n,) to
    `end_point` (3,), m, base frame, over `duration` s; its orientation turned to
    `end_rotation` (3, 3) (default: kept). Module docstring."""

    name = "tool line"

    def __init__(self, model, q_start, end_point, duration: float, end_rotation=None,
                 orientation: bool | None = None) -> None:
        self.p1 = finite_array(end_point, (3,), "end_point")
        super().__init__(model, q_start, duration, end_rotation, orientation)

    def point(self, s):
        return self.p0 + s * (self.p1 - self.p0)

    def point_rate(self, s):
        return self.p1 - self.p0

    def point_curvature(self, s):
        return np.zeros(3)


class ToolArc(_ToolPath):
    """The tool's origin on the circular arc from its place at q_start (n,) through
    `via_point` to `end_point` (each (3,), m, base frame), over `duration` s; orientation
    as `ToolLine`. Three points on one line are refused."""

    name = "tool arc"

    def __init__(self, model, q_start, via_point, end_point, duration: float,
                 end_rotation=None, orientation: bool | None = None) -> None:
        p0 = forward_kinematics(model_of(model), joint_vector(q_start, model_of(model).n,
                                                              "q_start")).end_effector[:3, 3]
        pm = finite_array(via_point, (3,), "via_point")
        p1 = finite_array(end_point, (3,), "end_point")
        a, b = pm - p0, p1 - p0
        normal = np.cross(a, b)
        if not np.linalg.norm(normal) > 1e-9 * max(1e-300, np.linalg.norm(a) * np.linalg.norm(b)):
            raise ArgumentError("via_point: the start, via and end points are on one line "
                                "(or coincide): no circle passes through them")
        # the circle's centre: p0 + (|a|^2 b x n + |b|^2 n x a) / (2 |n|^2)
        c = p0 + (a @ a * np.cross(b, normal) + b @ b * np.cross(normal, a)) / (
            2.0 * normal @ normal)
        self.centre, self.radius = c, float(np.linalg.norm(p0 - c))
        self.u = (p0 - c) / self.radius
        self.v = np.cross(normal / np.linalg.norm(normal), self.u)
        end = p1 - c
        self.sweep = math.atan2(end @ self.v, end @ self.u) % (2.0 * math.pi)
        self.via = pm
        super().__init__(model, q_start, duration, end_rotation, orientation)

    def point(self, s):
        th = s * self.sweep
        return self.centre + self.radius * (math.cos(th) * self.u + math.sin(th) * self.v)

    def point_rate(self, s):
        th = s * self.sweep
        return self.radius * self.sweep * (-math.sin(th) * self.u + math.cos(th) * self.v)

    def point_curvature(self, s):
        th = s * self.sweep
        return -self.radius * self.sweep**2 * (math.cos(th) * self.u + math.sin(th) * self.v)
