"""Numerical simulation: integrate the equations of motion (seed 001 eq. 16a) in time.

The state y = [q; qd] is advanced by the adaptive Dormand-Prince 8(5,3) method,
each derivative coming from the O(n) recursive forward dynamics (RFDSIM).
Output is sampled on a regular grid from the method's dense output, so the
step size never depends on the sample rate.

The integration runs compiled, a chunk at a time (`core.kernels.dop853.Dop853State`);
the joint forces are a constant vector or a function tau(t, q, qd), called at every
stage through a C callback (`core.kernels.torque`): a function numba compiles keeps the whole
run compiled, a plain Python function costs its own calls.

`simulate_chunks` is a generator (a GUI drives it from a worker thread and
cancels between chunks); `simulate` runs it to the end with a progress
callback and a cooperative cancel.

End stops. A joint with limits (the links' `limits`, `JointTable.joint_limits`) meets a
stop at each: a stiff spring with a Hunt-Crossley damper that acts only past the limit
(`JointStops`; the force law is `core.algorithms.dynamics.stop_force`), on by default whenever the
model has limits (`stops=False` turns them off). Their force is part of the applied joint
forces (`Trajectory.tau`, and alone `Trajectory.stop_forces`), their spring energy part
of the potential energy, so the total energy falls by exactly the work of their dampers.
"""
from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..algorithms.closed_chains import constrained_failure, velocity_transformation
from ..algorithms.loops import assemble, constraint_row_labels
from ..algorithms.tree_dynamics import mass_matrix, singular_error
from ..errors import (ArgumentError, SimulationCancelled, SimulationError,
                      SingularConfigurationError, SingularMassMatrixError)
from ..kernels.data import thread_workspace
from ..kernels.dop853 import (STATUS_BLOWUP, STATUS_FINISHED, STATUS_SINGULAR,
                              STATUS_STEP_TOO_SMALL, STATUS_TORQUE_FAILED, sample_torques)
from ..kernels.pull import PULL_COLUMNS, pull_buffer
from ..kernels.rhs import project_samples, sample_quantities
from ..model.arguments import joint_vector, link_wrenches, model_of
from .dop853 import Dop853State
from .pull import PointPull
from .trajectory import Trajectory, output_grid

#: Default tolerances: a 10 s free fall of the shipped arms keeps its energy to
#: better than 1e-6 of the peak kinetic energy (SciPy's defaults do not).
DEFAULT_RTOL = 1e-10
DEFAULT_ATOL = 1e-10
#: A state component larger than this is taken as a blow-up.
HUGE = 1e10

TorqueInput = None | np.ndarray | Callable[[float, np.ndarray, np.ndarray], np.ndarray]

#: Default natural frequency of a joint on its stop, Hz (`JointStops.frequency`).
DEFAULT_STOP_FREQUENCY = 50.0
#: Default Hunt-Crossley damping of a stop, s/rad or s/m (`JointStops.damping`).
DEFAULT_STOP_DAMPING = 5.0


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
        if not (isinstance(self.frequency, (int, float)) and math.isfinite(self.frequency)
                and self.frequency > 0):
            raise ValueError(f"stop frequency must be a positive number of Hz, got "
                             f"{self.frequency!r}")
        d = np.asarray(self.damping, dtype=float)
        if d.ndim > 1 or not (np.all(np.isfinite(d)) and np.all(d >= 0)):
            raise ValueError(f"stop damping must be finite and >= 0, got {self.damping!r}")
        if self.stiffness is not None:
            k = np.asarray(self.stiffness, dtype=float)
            if k.ndim > 1 or not (np.all(np.isfinite(k)) and np.all(k > 0)):
                raise ValueError(f"stop stiffness must be finite and > 0, got "
                                 f"{self.stiffness!r}")

    def table(self, model) -> np.ndarray:
        """(n, 4) rows [q_lo, q_hi, K, d] of the model's joints (rad / m, N m/rad / N/m,
        s/rad / s/m); -inf, +inf for a joint without limits: what the integrator takes
        (`core.algorithms.dynamics.passive_table`)."""
        n = model_of(model).kernel.n
        rows = np.empty((n, 4))
        rows[:, :2] = model.joint_limits
        if self.stiffness is None:
            inertia = np.diag(mass_matrix(model, model.q_home))
            rows[:, 2] = inertia * (2 * math.pi * self.frequency) ** 2
        else:
            rows[:, 2] = joint_vector(self.stiffness, n, "stop stiffness", scalar=True)
        rows[:, 3] = joint_vector(self.damping, n, "stop damping", scalar=True)
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
    raise TypeError(f"stops must be None, True, False or a JointStops, got {stops!r}")


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


def simulation_warnings(model, q0=None, stops: StopsInput = None,
                        free_fall: bool = True) -> tuple[str, ...]:
    """What a run of `model` from q0 (n,) (default: home) with `stops` (see
    `resolve_stops`) should warn about before it starts, one sentence each:

    - in a free fall, a prismatic joint (outside any loop) with no stop to hold it:
      no limits, or stops off; gravity may carry it away without bound;
    - with stops, a joint that starts past one of its limits (its stop pushes it back).
    `simulate_chunks` puts these in every chunk's `warnings`."""
    used = resolve_stops(model, stops)
    limits = model.joint_limits
    names = model.joint_names
    q = model.q_home if q0 is None else np.asarray(q0, dtype=float)
    out = []
    if free_fall:
        bound = _joints_in_loops(model)
        for j in range(len(names)):
            if model.is_revolute[j] or j in bound:
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
        for j in range(len(names)):
            lo, hi = limits[j]
            for side, limit, past in (("lower", lo, lo - q[j]), ("upper", hi, q[j] - hi)):
                if past > 0:
                    out.append(f"joint {j + 1} ({names[j]!r}) starts "
                               f"{_joint_value(model, j, past)} past its {side} limit "
                               f"({_joint_value(model, j, limit)}): its stop pushes it back")
    return tuple(out)


def stop_report(model, traj: Trajectory) -> tuple[str, ...]:
    """One sentence per stop that the samples of `traj` show touched: the joint, the
    limit, how many contacts, the peak force and the deepest penetration, e.g.
    "joint 3 ('quill') hit its upper stop (0.21 m) 4 times: peak force 1020 N, at most
    2.1 mm past it". A contact shorter than the sample step can fall between samples."""
    # the window asks at the end of every run: looking at each joint and side took 3 ms
    # for a 600 s PUMA run that met no stop
    if not traj.stop_forces.any():
        return ()
    out = []
    limits = model.joint_limits
    names = model.joint_names
    unit = ["N m" if r else "N" for r in model.is_revolute]
    pushed = {1.0: np.any(traj.stop_forces > 0, axis=0),
              -1.0: np.any(traj.stop_forces < 0, axis=0)}
    for j in range(traj.n):
        f = traj.stop_forces[:, j]
        for side, sign, limit in (("lower", 1.0, limits[j, 0]), ("upper", -1.0, limits[j, 1])):
            if not pushed[sign][j]:  # no stop there, or never touched
                continue
            pushing = sign * f > 0
            past = sign * (limit - traj.q[:, j])  # how far past the limit
            touching = past > 0
            contacts = int(touching[0]) + int(np.count_nonzero(touching[1:] & ~touching[:-1]))
            times = "once" if contacts == 1 else f"{contacts} times"
            out.append(f"joint {j + 1} ({names[j]!r}) hit its {side} stop "
                       f"({_joint_value(model, j, limit)}) {times}: peak force "
                       f"{float(np.max(np.abs(f[pushing]))):.4g} {unit[j]}, at most "
                       f"{_joint_value(model, j, float(np.max(past)))} past it")
    return tuple(out)


class _TorqueFailure(Exception):
    """The torque function failed (its exception, if any, is the cause)."""


def simulate_chunks(robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
                    damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                    dt_out: float = 0.01, chunk_duration: float = 0.05,
                    max_wall_per_chunk: float = 0.05, f_ext=None,
                    stops: StopsInput = None, pull: PointPull | None = None
                    ) -> Iterator[Trajectory]:
    """Integrate the motion of an arm or mechanism from (q0, qd0) for `duration` seconds,
    chunk by chunk.

    q0, qd0  : (n,) initial joint values / rates (default: home pose, at rest). With
               loops, q0 is closed by `assemble` (its independent joints held) and the
               rates of the dependent joints follow from the independent ones in qd0.
    tau      : None (free fall), a constant (n,) vector, or a function
               tau(t, q, qd) -> (n,), N m / N: a plain Python function, or one compiled
               by numba (`@numba.njit`, also as tau(t, q, qd, out) writing into out),
               which keeps the whole run compiled (`core.kernels.torque`)
    damping  : viscous joint damping (n,) or scalar, N m s/rad / N s/m
    rtol, atol : integrator tolerances on y = [q; qd]
    dt_out   : output sample step (s); samples lie on `output_grid(duration, dt_out)`
    f_ext    : constant external wrenches (see `core.algorithms.dynamics`): (6,) on the last link,
               (n, 6) per link
    stops    : end stops at the joint limits: None (the default: `JointStops()` when the
               model has limits), True, False (none) or a `JointStops` (stiffness and
               damping of this run); see `resolve_stops`
    pull     : a `core.sim.pull.PointPull` that another thread may grab, move and release
               while the run goes on: a spring-damper from a point of a link to a target,
               applied at every evaluation of the right-hand side. Its request is read at
               each chunk boundary (a change takes effect from the next chunk); the
               samples record it in `Trajectory.pull`. None: no pull (and no column).
    Yields Trajectory chunks of new samples (the first holds t = 0) every
    `chunk_duration` simulated seconds, or sooner when a chunk has taken
    `max_wall_per_chunk` wall seconds (a chunk may then be empty); returns the
    whole Trajectory. Its `tau` column is the applied joint force
    tau - damping * qd + the stops' forces (these alone in `stop_forces`); its potential
    energy includes the stops' springs; every chunk carries `simulation_warnings`.
    With loops the accelerations keep them closed (Lagrange multipliers with the UDU^T
    factors) and every accepted step is projected back onto them; the samples carry
    the cut-joint forces and the loop residual.
    Raises SimulationError (with `.result`, the samples so far, `.time` and
    `.joint`) when the state becomes non-finite or huge (> 1e10), the mass matrix
    is singular or the step size collapses.
    """
    k = model_of(robot).kernel
    n, m = k.n, k.m
    q0 = joint_vector(q0, n, "q0", default=robot.q_home)
    qd0 = joint_vector(qd0, n, "qd0", default=np.zeros(n))
    if k.nl:
        q0 = assemble(robot, q0)
        vt = velocity_transformation(robot, q0)
        qd0 = vt.R @ qd0[list(vt.independent)]
    c = joint_vector(damping, n, "damping", default=np.zeros(n), scalar=True)
    if np.any(c < 0):
        raise ArgumentError("damping must be >= 0")
    if not (rtol > 0 and atol > 0):
        raise ValueError("rtol and atol must be positive")
    w = np.ascontiguousarray(link_wrenches(f_ext, n, 1)[0])  # (n, 6) per link
    grid = output_grid(duration, dt_out)
    y0 = np.concatenate([q0, qd0])
    kind = "free-fall" if tau is None else "simulation"
    used_stops = resolve_stops(robot, stops)
    notes = simulation_warnings(robot, q0, False if used_stops is None else used_stops,
                                free_fall=tau is None)

    if not callable(tau):
        tau = joint_vector(tau, n, "tau", default=np.zeros(n), scalar=True)
    stop_table = None if used_stops is None else used_stops.table(robot)  # (n, 4)
    pull_now = pull_buffer(n)  # the request in force during the current chunk
    seen = -1 if pull is None else pull.copy_into(pull_now, n, -1)
    stepper = Dop853State(robot, y0, 0.0, float(grid[-1]), rtol, atol, tau=tau, damping=c,
                          f_ext=w, stops=stop_table, pull=pull_now)

    def driving_forces(t: np.ndarray, states: np.ndarray) -> np.ndarray:
        """tau(t, q, qd) (S, n) at the samples, through the run's torque callback."""
        tau_t = np.empty((t.size, n))
        if sample_torques(stepper.torque, t, states, stepper.tau, tau_t) >= 0:
            raise _torque_failure()
        return tau_t

    Y = np.full((grid.size, 2 * n), np.nan)
    parts: list[Trajectory] = []

    def take(lo: int, hi: int) -> Trajectory:
        """Samples lo..hi-1 with their derived columns (qdd, tau, energy; with loops the
        cut-joint forces and the residual), computed in one compiled pass."""
        if hi == lo:
            return Trajectory.empty(n, kind, m, notes, pulled=pull is not None)
        t, states = grid[lo:hi], Y[lo:hi]
        resid = None
        if k.nl:
            # dense-output samples onto the loops, as the accepted steps are
            resid = np.empty(hi - lo)
            project_samples(k.F, k.I, thread_workspace(k), states, 1e-14, resid)
        q, qd = states[:, :n].copy(), states[:, n:].copy()
        applied = driving_forces(t, states)  # + damping and stops, by sample_quantities
        stop, qdd = np.empty_like(q), np.empty_like(q)
        E, lam = np.empty((hi - lo, 3)), np.empty((hi - lo, m))
        pulled = np.empty((hi - lo, PULL_COLUMNS))
        bad = sample_quantities(k.F, k.I, thread_workspace(k), states, stepper.passive, w,
                                pull_now, applied, stop, qdd, E, lam, pulled)
        if bad >= 0:
            s, code = divmod(int(bad), n + m)
            if code >= n:
                raise constrained_failure(robot, q[s], code)
            raise singular_error(robot, q[s], code)
        part = Trajectory(t.copy(), q, qd, qdd, applied, E, kind,
                          lam if k.nl else None, resid, stop, notes,
                          pulled if pull is not None else None)
        parts.append(part)
        return part

    def _torque_failure() -> Exception:
        error = stepper.torque_error
        what = f"{type(error).__name__}: {error}" if error is not None else "it failed"
        failure_ = _TorqueFailure(f"the torque function tau(t, q, qd) failed ({what})")
        failure_.__cause__ = error
        return failure_

    def failure(reason: str, joint: int | None) -> SimulationError:
        partial = (Trajectory.concatenate(parts) if parts
                   else Trajectory.empty(n, kind, m, notes, pulled=pull is not None))
        return SimulationError(reason, time=stepper.t, joint=joint, result=partial)

    sent = 0
    next_out = 0
    while True:
        if pull is not None:
            # the pull's latest request, if it changed, holds for this whole chunk
            version = pull.copy_into(pull_now, n, seen)
            if version != seen:
                seen = version
                stepper.pull_changed()  # f(t, y) under the new force
        t_stop = min(stepper.t + chunk_duration, float(grid[-1]))
        wall_end = _time.perf_counter() + max_wall_per_chunk
        status = 0
        while status == 0 and stepper.t < t_stop and _time.perf_counter() < wall_end:
            status, next_out, info = stepper.advance(grid, Y, next_out, t_stop, max_steps=20)
        try:
            if status == STATUS_TORQUE_FAILED:
                raise _torque_failure()
            chunk = take(sent, next_out)
        except _TorqueFailure as err:
            raise failure(str(err), None) from err.__cause__
        except SingularMassMatrixError as err:
            raise failure(str(err), err.joint) from None
        except SingularConfigurationError as err:
            raise failure(err.reason, None) from None
        sent = next_out
        if status == STATUS_SINGULAR:
            if info >= n:  # a loop's rows lost rank (core.kernels.constrained)
                raise failure(f"loop row {constraint_row_labels(robot)[info - n]!r} loses "
                              "rank: the loops reached a singular configuration", None)
            raise failure(str(SingularMassMatrixError(info + 1)), info + 1)
        if status == STATUS_BLOWUP:
            # name the joint that ran away: the largest |q| or |qd| of the last good state
            # (when a step fails, all its components are usually non-finite together)
            y = np.abs(np.nan_to_num(stepper.y, nan=0.0, posinf=np.inf))
            raise failure("the state became non-finite or huge (> 1e10): the motion blew up",
                          int(np.argmax(y)) % n + 1)
        if status == STATUS_STEP_TOO_SMALL:
            raise failure("the integrator's step size collapsed (the motion is too stiff or "
                          "singular at this point)", None)
        yield chunk
        if status == STATUS_FINISHED:
            return (Trajectory.concatenate(parts) if parts
                    else Trajectory.empty(n, kind, m, notes, pulled=pull is not None))


def simulate(robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
             damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
             dt_out: float = 0.01, progress: Callable[[float], None] | None = None,
             cancel: Callable[[], bool] | None = None, f_ext=None,
             stops: StopsInput = None, pull: PointPull | None = None) -> Trajectory:
    """Simulate the arm for `duration` seconds and return every sample (see `simulate_chunks`).

    progress(fraction) is called after each chunk with the simulated fraction in
    [0, 1]; when cancel() returns True the run stops and SimulationCancelled is
    raised with `.result`, the samples so far.
    """
    # chunks of 1/10 of the run keep the per-chunk bookkeeping (about 25 us each) small;
    # the wall-time bound of each chunk keeps cancel() prompt
    gen = simulate_chunks(robot, duration, q0, qd0, tau, damping, rtol, atol, dt_out,
                          chunk_duration=max(0.05, duration / 10), f_ext=f_ext,
                          stops=stops, pull=pull)
    return run_chunks(gen, duration, progress, cancel)


def run_chunks(gen: Iterator[Trajectory], duration: float,
               progress: Callable[[float], None] | None = None,
               cancel: Callable[[], bool] | None = None) -> Trajectory:
    """Drive a generator of Trajectory chunks (`simulate_chunks`, or another simulator's
    of the same kind) to its end and return the whole Trajectory it returns.

    progress(fraction) is called after each chunk with the simulated fraction of
    `duration` (s); when cancel() returns True the generator is closed and
    SimulationCancelled is raised with `.result`, the samples so far.
    """
    parts: list[Trajectory] = []
    while True:
        try:
            part = next(gen)
        except StopIteration as stop:
            if progress is not None:
                progress(1.0)
            return stop.value
        parts.append(part)
        if progress is not None and len(part):
            progress(min(1.0, float(part.t[-1]) / duration))
        if cancel is not None and cancel():
            gen.close()
            done = Trajectory.concatenate(parts)
            raise SimulationCancelled(time=float(done.t[-1]) if len(done) else 0.0, result=done)


def real_time(chunks: Iterator[Trajectory], clock: Callable[[], float] = _time.perf_counter,
              sleep: Callable[[float], None] = _time.sleep) -> Iterator[Trajectory]:
    """The chunks of `chunks` (e.g. `simulate_chunks` with a short chunk_duration), paced
    to wall-clock time: before yielding a chunk whose last sample is at simulated time t
    (s), sleep until t wall seconds have passed since the first chunk. A run can then be
    watched (and pushed, `core.sim.pull`) as it goes; it never runs ahead by more than a
    chunk. Returns what `chunks` returns."""
    start = None
    while True:
        try:
            part = next(chunks)
        except StopIteration as stop:
            return stop.value
        if start is None:
            start = clock()
        if len(part):
            wait = float(part.t[-1]) - (clock() - start)
            if wait > 0:
                sleep(wait)
        yield part
