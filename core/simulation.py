"""Numerical simulation: integrate the equations of motion (seed 001 eq. 16a) in time.

The state y = [q; qd] is advanced by the adaptive Dormand-Prince 8(5,3) method,
each derivative coming from the O(n) recursive forward dynamics (RFDSIM).
Output is sampled on a regular grid from the method's dense output, so the
step size never depends on the sample rate.

The integration runs compiled, a chunk at a time (`core.integrator.Dop853State`);
the joint forces are a constant vector or a function tau(t, q, qd), called at every
stage through a C callback (`core.torque`): a function numba compiles keeps the whole
run compiled, a plain Python function costs its own calls.

`simulate_chunks` is a generator (a GUI drives it from a worker thread and
cancels between chunks); `simulate` runs it to the end with a progress
callback and a cooperative cancel.
"""
from __future__ import annotations

import time as _time
from collections.abc import Callable, Iterator

import numpy as np

from .closed_chains import constrained_failure
from .dynamics import (kernel_of, link_wrenches, project_samples, sample_quantities,
                       singular_error)
from .workspace import thread_workspace
from .errors import (SimulationCancelled, SimulationError, SingularConfigurationError,
                     SingularMassMatrixError)
from .integrator import (STATUS_BLOWUP, STATUS_FINISHED, STATUS_SINGULAR, STATUS_STEP_TOO_SMALL,
                         STATUS_TORQUE_FAILED, Dop853State, sample_torques)
from .trajectory import Trajectory, output_grid

#: Default tolerances: a 10 s free fall of the shipped arms keeps its energy to
#: better than 1e-6 of the peak kinetic energy (SciPy's defaults do not).
DEFAULT_RTOL = 1e-10
DEFAULT_ATOL = 1e-10
#: A state component larger than this is taken as a blow-up.
HUGE = 1e10

TorqueInput = None | np.ndarray | Callable[[float, np.ndarray, np.ndarray], np.ndarray]


def _joint_vector(x, n: int, name: str, default: np.ndarray) -> np.ndarray:
    if x is None:
        return default.copy()
    v = np.asarray(x, dtype=float)
    if v.shape == ():
        v = np.full(n, float(v))
    if v.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


class _TorqueFailure(Exception):
    """The torque function failed (its exception, if any, is the cause)."""


def simulate_chunks(robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
                    damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                    dt_out: float = 0.01, chunk_duration: float = 0.05,
                    max_wall_per_chunk: float = 0.05, f_ext=None) -> Iterator[Trajectory]:
    """Integrate the motion of an arm or mechanism from (q0, qd0) for `duration` seconds,
    chunk by chunk.

    q0, qd0  : (n,) initial joint values / rates (default: home pose, at rest). With
               loops, q0 is closed by `assemble` (its independent joints held) and the
               rates of the dependent joints follow from the independent ones in qd0.
    tau      : None (free fall), a constant (n,) vector, or a function
               tau(t, q, qd) -> (n,), N m / N: a plain Python function, or one compiled
               by numba (`@numba.njit`, also as tau(t, q, qd, out) writing into out),
               which keeps the whole run compiled (`core.torque`)
    damping  : viscous joint damping (n,) or scalar, N m s/rad / N s/m
    rtol, atol : integrator tolerances on y = [q; qd]
    dt_out   : output sample step (s); samples lie on `output_grid(duration, dt_out)`
    f_ext    : constant external wrenches (see `core.dynamics`): (6,) on the last link,
               (n, 6) per link
    Yields Trajectory chunks of new samples (the first holds t = 0) every
    `chunk_duration` simulated seconds, or sooner when a chunk has taken
    `max_wall_per_chunk` wall seconds (a chunk may then be empty); returns the
    whole Trajectory. Its `tau` column is the applied joint force tau - damping * qd.
    With loops the accelerations keep them closed (Lagrange multipliers with the UDU^T
    factors) and every accepted step is projected back onto them; the samples carry
    the cut-joint forces and the loop residual.
    Raises SimulationError (with `.result`, the samples so far, `.time` and
    `.joint`) when the state becomes non-finite or huge (> 1e10), the mass matrix
    is singular or the step size collapses.
    """
    k = kernel_of(robot)
    n, m = k.n, k.m
    q0 = _joint_vector(q0, n, "q0", robot.q_home)
    qd0 = _joint_vector(qd0, n, "qd0", np.zeros(n))
    if k.nl:
        from .closed_chains import velocity_transformation
        from .loop_kinematics import assemble
        q0 = assemble(robot, q0)
        vt = velocity_transformation(robot, q0)
        qd0 = vt.R @ qd0[list(vt.independent)]
    c = _joint_vector(damping, n, "damping", np.zeros(n))
    if np.any(c < 0):
        raise ValueError("damping must be >= 0")
    if not (rtol > 0 and atol > 0):
        raise ValueError("rtol and atol must be positive")
    w = np.ascontiguousarray(link_wrenches(f_ext, n, 1)[0])  # (n, 6) per link
    grid = output_grid(duration, dt_out)
    y0 = np.concatenate([q0, qd0])
    kind = "free-fall" if tau is None else "simulation"

    if not callable(tau):
        tau = _joint_vector(tau, n, "tau", np.zeros(n))
    stepper = Dop853State(robot, y0, 0.0, float(grid[-1]), rtol, atol, tau=tau, damping=c,
                          f_ext=w)

    def applied_forces(t: np.ndarray, states: np.ndarray) -> np.ndarray:
        """tau(t, q, qd) - damping * qd at the samples, through the run's torque callback."""
        tau_t = np.empty((t.size, n))
        if sample_torques(stepper.torque, t, states, stepper.tau, tau_t) >= 0:
            raise _torque_failure()
        return tau_t - c * states[:, n:]

    Y = np.full((grid.size, 2 * n), np.nan)
    parts: list[Trajectory] = []

    def take(lo: int, hi: int) -> Trajectory:
        """Samples lo..hi-1 with their derived columns (qdd, tau, energy; with loops the
        cut-joint forces and the residual), computed in one compiled pass."""
        if hi == lo:
            return Trajectory.empty(n, kind, m)
        t, states = grid[lo:hi], Y[lo:hi]
        resid = None
        if k.nl:
            # dense-output samples onto the loops, as the accepted steps are
            resid = np.empty(hi - lo)
            project_samples(k.F, k.I, thread_workspace(n, m), states, 1e-14, resid)
        q, qd = states[:, :n].copy(), states[:, n:].copy()
        applied = applied_forces(t, states)
        qdd, E, lam = np.empty_like(q), np.empty((hi - lo, 3)), np.empty((hi - lo, m))
        bad = sample_quantities(k.F, k.I, thread_workspace(n, m), states, applied, w, qdd, E,
                                lam)
        if bad >= 0:
            s, code = divmod(int(bad), n + m)
            if code >= n:
                raise constrained_failure(robot, q[s], code)
            raise singular_error(robot, q[s], code)
        part = Trajectory(t.copy(), q, qd, qdd, applied, E, kind,
                          lam if k.nl else None, resid)
        parts.append(part)
        return part

    def _torque_failure() -> Exception:
        error = stepper.torque_error
        what = f"{type(error).__name__}: {error}" if error is not None else "it failed"
        failure_ = _TorqueFailure(f"the torque function tau(t, q, qd) failed ({what})")
        failure_.__cause__ = error
        return failure_

    def failure(reason: str, joint: int | None) -> SimulationError:
        partial = Trajectory.concatenate(parts) if parts else Trajectory.empty(n, kind, m)
        return SimulationError(reason, time=stepper.t, joint=joint, result=partial)

    sent = 0
    next_out = 0
    while True:
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
            if info >= n:  # a loop's rows lost rank (core.constrained_dynamics)
                from .loop_kinematics import constraint_row_labels
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
            return Trajectory.concatenate(parts) if parts else Trajectory.empty(n, kind, m)


def simulate(robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
             damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
             dt_out: float = 0.01, progress: Callable[[float], None] | None = None,
             cancel: Callable[[], bool] | None = None, f_ext=None) -> Trajectory:
    """Simulate the arm for `duration` seconds and return every sample (see `simulate_chunks`).

    progress(fraction) is called after each chunk with the simulated fraction in
    [0, 1]; when cancel() returns True the run stops and SimulationCancelled is
    raised with `.result`, the samples so far.
    """
    # chunks of 1/10 of the run keep the per-chunk bookkeeping (about 25 us each) small;
    # the wall-time bound of each chunk keeps cancel() prompt
    gen = simulate_chunks(robot, duration, q0, qd0, tau, damping, rtol, atol, dt_out,
                          chunk_duration=max(0.05, duration / 10), f_ext=f_ext)
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
