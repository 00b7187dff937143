"""End stops at the joint limits, and what a run warns about and reports of them.

A joint with limits (the links' `limits`, `Model.joint_limits`) meets a stop at each: a
stiff spring with a Hunt-Crossley damper that acts only past the limit (`JointStops`;
the force law is `core.kernels.passive.stop_force`), on by default whenever the model
has limits (`stops=False` turns them off). Their force is part of the applied joint
forces (`Trajectory.tau`, and alone `Trajectory.stop_forces`), their spring energy part
of the potential energy, so the total energy falls by exactly the work of their dampers.
`simulation_warnings` says before a run what may go wrong (a prismatic joint nothing
stops); `stop_report` says after it which stops were hit, from the hits the integrator
counted at every accepted step (`core.kernels.passive.record_stop_contacts`), and
`dissipated_energy` how much energy their dampers took out.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..algorithms.tree_dynamics import mass_matrix
from ..errors import ArgumentError, ArgumentTypeError
from ..kernels.passive import STOP_HIT_DEPTH
from ..model.arguments import joint_vector, model_of, positive_number
from .trajectory import Trajectory

#: Default natural frequency of a joint on its stop, Hz (`JointStops.frequency`).
DEFAULT_STOP_FREQUENCY = 50.0
#: Default Hunt-Crossley damping of a stop, s/rad or s/m (`JointStops.damping`).
DEFAULT_STOP_DAMPING = 5.0
#: The total energy a run keeps to, relative to its energy scale (`dissipated_energy`):
#: the default tolerances keep a 10 s free fall's energy to better than 1e-6 of its peak
#: kinetic energy (`core.sim.simulation.DEFAULT_RTOL`).
ENERGY_RESOLUTION = 1e-6


@dataclass(frozen=True)
class JointStops:
    """End stops at the model's joint limits: past a limit the joint meets a spring whose
    damper scales with the penetration delta (Hunt and Crossley 1975):

        f = max(0, K delta (1 + d delta_dot)),   V = K delta^2 / 2

    f pushes the joint back (continuous, zero at first touch, never pulling); V, the
    spring's energy, is part of the potential energy. SI units: rad and N m for revolute
    joints, m and N for prismatic ones.

    stiffness : K per joint, N m/rad / N/m: one number for every joint, n numbers, or
                None (the default): K_k = I_kk (2 pi frequency)^2, with I_kk the diagonal
                of the mass matrix at the home pose (kg m^2 / kg), so that each joint rings
                on its stop at about `frequency`. A joint that hits its stop at speed v
                then goes about v / (2 pi frequency) past it, and a load F holds it F / K
                past it.
    frequency : Hz (> 0), for stiffness None (default DEFAULT_STOP_FREQUENCY, 50 Hz: a
                contact lasts about 10 ms).
    damping   : d, s/rad / s/m (>= 0): one number or n numbers (default
                DEFAULT_STOP_DAMPING, 5). The coefficient of restitution of an impact at
                speed v depends on d v alone: e = 1 at d v = 0 (elastic), 0.94 at 0.1,
                0.75 at 0.5, 0.59 at 1, 0.41 at 2, 0.31 at 3, 0.20 at 5, 0.10 at 10, and
                about 1 / (d v) beyond (tests/test_joint_stops.py checks three); slow
                impacts are the most elastic. The default gives e = 0.2 at 1 m/s or rad/s.
    """

    stiffness: float | Sequence[float] | None = None
    frequency: float = DEFAULT_STOP_FREQUENCY
    damping: float | Sequence[float] = DEFAULT_STOP_DAMPING

    def __post_init__(self) -> None:
        positive_number(self.frequency, "stop frequency (Hz)")
        d = self._numbers(self.damping, "stop damping")
        if d.ndim > 1 or not (np.all(np.isfinite(d)) and np.all(d >= 0)):
            raise ArgumentError(f"stop damping must be finite and >= 0, got {self.damping!r}")
        if self.stiffness is not None:
            k = self._numbers(self.stiffness, "stop stiffness")
            if k.ndim > 1 or not (np.all(np.isfinite(k)) and np.all(k > 0)):
                raise ArgumentError(f"stop stiffness must be finite and > 0, got "
                                    f"{self.stiffness!r}")

    @staticmethod
    def _numbers(x, name: str) -> np.ndarray:
        try:
            return np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"{name} must be numbers, got {x!r}") from None

    def table(self, model) -> np.ndarray:
        """(nv, 4) rows [q_lo, q_hi, K, d] of the model's joint rates (rad / m, N m/rad /
        N/m, s/rad / s/m); -inf, +inf for a joint without limits (the rates of a joint of
        several degrees of freedom: limits are a revolute or prismatic joint's): what the
        integrator takes (`core.algorithms.dynamics.passive_table`)."""
        k = model_of(model).kernel
        n, iv = k.n, k.views.iv
        rows = np.empty((k.nv, 4))
        rows[:, 0], rows[:, 1] = -np.inf, np.inf
        rows[iv, :2] = model.joint_limits
        if self.stiffness is None:
            inertia = np.diag(mass_matrix(model, model.q_home))
            rows[:, 2] = inertia * (2 * math.pi * self.frequency) ** 2
        else:
            rows[:, 2] = 1.0
            rows[iv, 2] = joint_vector(self.stiffness, n, "stop stiffness", scalar=True)
        rows[:, 3] = 0.0
        rows[iv, 3] = joint_vector(self.damping, n, "stop damping", scalar=True)
        return rows


StopsInput = None | bool | JointStops


def resolve_stops(model, stops: StopsInput = None) -> JointStops | None:
    """The end stops a run of `model` uses: `stops` if it is a JointStops; None (the
    default) gives JointStops() when any joint has limits, else no stops; True gives
    JointStops(), False no stops."""
    if isinstance(stops, JointStops):
        return stops
    if stops is None:
        return JointStops() if np.isfinite(model.joint_limits).any() else None
    if stops is True:
        return JointStops()
    if stops is False:
        return None
    raise ArgumentTypeError(f"stops must be None, True, False or a JointStops, got {stops!r}")


def _joints_in_loops(model) -> set[int]:
    """Tree joints on the path of some loop (their motion is bound by the loop)."""
    k = model_of(model).kernel
    if not k.nl:
        return set()
    parent = k.views.parent

    def ancestors(j: int) -> set[int]:
        out = set()
        while j >= 0:
            out.add(j)
            j = int(parent[j])
        return out

    bound: set[int] = set()
    for a, b in k.views.loop_body:
        bound |= ancestors(int(a)) ^ ancestors(int(b))
    return bound


def _joint_value(model, j: int, value: float) -> str:
    """A joint value in words: deg for a revolute joint, m for a prismatic one."""
    return f"{math.degrees(value):.4g} deg" if model.is_revolute[j] else f"{value:.4g} m"


def _joint_values(model, q) -> np.ndarray:
    """The value of each joint in q (nq,) or (S, nq): (n,) or (S, n), a revolute or
    prismatic joint's own; nan for a joint of several degrees of freedom (no limits)."""
    m = model_of(model)
    q = np.asarray(q, dtype=float)
    out = q[..., m.kernel.views.iq]
    out[..., ~np.array([t.is_dh for t in m.joint_types], dtype=bool)] = np.nan
    return out


def _past_limits(model, q):
    """(j, side, limit, past) for every joint of q (nq,) outside its limits: past > 0 is
    how far (rad / m)."""
    limits = model.joint_limits
    q = _joint_values(model, q)
    for j in range(len(limits)):
        lo, hi = limits[j]
        for side, limit, past in (("lower", lo, lo - q[j]), ("upper", hi, q[j] - hi)):
            if past > 0:
                yield j, side, limit, float(past)


def limit_warnings(model, q, name: str) -> tuple[str, ...]:
    """One sentence per joint of the pose q (n,), the argument `name`, that lies outside
    its limits (`Model.joint_limits`), e.g. "q_end: joint 2 ('shoulder') is 12 deg past
    its upper limit (90 deg)"."""
    names = model.joint_names
    return tuple(f"{name}: joint {j + 1} ({names[j]!r}) is {_joint_value(model, j, past)} "
                 f"past its {side} limit ({_joint_value(model, j, limit)})"
                 for j, side, limit, past in _past_limits(model, np.asarray(q, dtype=float)))


def simulation_warnings(model, q0=None, stops: StopsInput = None,
                        free_fall: bool = True) -> tuple[str, ...]:
    """What a run of `model` from q0 (n,) (default: home) with `stops` (see
    `resolve_stops`) should warn about before it starts, one sentence each:

    - in a free fall, a prismatic joint (outside any loop) with no stop to hold it:
      no limits, or stops off; gravity may carry it away without bound;
    - a joint that starts past one of its limits: with stops, its stop pushes it back;
      without, nothing does (`limit_warnings`).
    `simulate_chunks` puts these in every chunk's `warnings`."""
    used = resolve_stops(model, stops)
    limits = model.joint_limits
    names = model.joint_names
    q = model.q_home if q0 is None else np.asarray(q0, dtype=float)
    out = []
    if free_fall:
        bound = _joints_in_loops(model)
        for j in range(len(names)):
            if model.joint_types[j].value != "prismatic" or j in bound:
                continue
            if not np.isfinite(limits[j]).all():
                out.append(f"joint {j + 1} ({names[j]!r}) is prismatic and has no limits: "
                           "nothing stops it in a free fall, it may slide away without "
                           "bound (give it limits in the model file)")
            elif used is None:
                out.append(f"joint {j + 1} ({names[j]!r}) is prismatic and its stops are "
                           "off: nothing stops it in a free fall, it may slide away "
                           "without bound")
    if used is not None:
        for j, side, limit, past in _past_limits(model, q):
            out.append(f"joint {j + 1} ({names[j]!r}) starts "
                       f"{_joint_value(model, j, past)} past its {side} limit "
                       f"({_joint_value(model, j, limit)}): its stop pushes it back")
    else:
        out.extend(f"{w}; its stops are off" for w in limit_warnings(model, q, "q0"))
    return tuple(out)


def _contacts_of_samples(model, traj: Trajectory) -> np.ndarray:
    """(n, 2, 3) [hits, peak force, deepest penetration] per joint and side (0 lower, 1
    upper) as the samples show them: a hit is a run of samples past the limit that goes
    more than STOP_HIT_DEPTH past it."""
    n = model_of(model).n
    rows = np.zeros((n, 2, 3))
    limits = model.joint_limits
    forces = traj.stop_forces[:, model_of(model).kernel.views.iv]  # (S, n)
    values = _joint_values(model, traj.q)
    for sign, side in ((1.0, 0), (-1.0, 1)):
        pushed = np.flatnonzero(np.any(sign * forces > 0, axis=0))
        for j in pushed:  # (only where a stop pushed: a stop there, touched)
            f = forces[:, j]
            past = sign * (limits[j, side] - values[:, j])  # how far past the limit
            inside = np.concatenate([[0], (past > 0).astype(np.int8), [0]])
            edges = np.flatnonzero(np.diff(inside))  # [start, end) of each contact
            deepest = np.maximum.reduceat(np.append(past, -np.inf), edges)[::2]
            rows[j, side] = (np.count_nonzero(deepest > STOP_HIT_DEPTH),
                             np.max(np.abs(f[sign * f > 0])), np.max(past))
    return rows


def stop_report(model, traj: Trajectory) -> tuple[str, ...]:
    """One sentence per stop hit during the run: the joint, the limit, how many hits, the
    peak force and the deepest penetration, e.g. "joint 3 ('quill') hit its upper stop
    (0.21 m) 4 times: peak force 1020 N, at most 2.1 mm past it".

    A simulation's hits are those the integrator counted at every accepted step
    (`Trajectory.stop_contacts`): a bounce between two output samples is named too.
    Without that count (another run's Trajectory) the samples are read, and a contact
    shorter than the sample step can fall between them. Either way a contact is a hit
    once the joint goes more than STOP_HIT_DEPTH (1e-9 rad or m) past its limit: a joint
    that starts on its limit and stays there within round-off is not hit."""
    if traj.stop_contacts is not None:
        rows = traj.stop_contacts[model_of(model).kernel.views.iv]  # per joint
    elif traj.stop_forces.any():
        # the window asks at the end of every run: looking at each joint and side took
        # 3 ms for a 600 s PUMA run that met no stop
        rows = _contacts_of_samples(model, traj)
    else:
        return ()
    out = []
    limits = model.joint_limits
    names = model.joint_names
    unit = ["N m" if r else "N" for r in model.is_revolute]
    for j in range(len(names)):
        for side, name in ((0, "lower"), (1, "upper")):
            hits, peak, deepest = rows[j, side]
            if hits < 1:  # no stop there, never touched, or only within round-off
                continue
            times = "once" if hits == 1 else f"{int(hits)} times"
            out.append(f"joint {j + 1} ({names[j]!r}) hit its {name} stop "
                       f"({_joint_value(model, j, limits[j, side])}) {times}: peak force "
                       f"{float(peak):.4g} {unit[j]}, at most "
                       f"{_joint_value(model, j, float(deepest))} past it")
    return tuple(out)


def dissipated_energy(traj: Trajectory) -> float:
    """E(0) - E(end), J: the energy a free fall's dampers (the joints' viscous damping, the
    stops' Hunt-Crossley dampers) took out. A value within ENERGY_RESOLUTION of the
    run's energy scale (its peak kinetic energy plus the range of its potential energy)
    is the integrator's error, not dissipation, and is reported as 0.0: an elastic stop
    dissipates nothing (it reported -2.2e-8 J)."""
    if len(traj) == 0:
        return 0.0
    E = traj.energy
    lost = float(E[0, 2] - E[-1, 2])
    scale = float(np.max(np.abs(E[:, 0])) + np.ptp(E[:, 1]))
    return 0.0 if abs(lost) <= ENERGY_RESOLUTION * scale else lost
