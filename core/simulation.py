"""Numerical simulation: integrate the equations of motion (seed 001 eq. 16a) in time.

The state y = [q; qd] is advanced by an adaptive Dormand-Prince 8(5,3) method
(SciPy's DOP853 stepper), each derivative coming from the O(n) recursive
forward dynamics (RFDSIM). Output is sampled on a regular grid from the
method's dense output, so the step size never depends on the sample rate.

`simulate_chunks` is a generator (a GUI drives it from a worker thread and
cancels between chunks); `simulate` runs it to the end with a progress
callback and a cooperative cancel.
"""
from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Iterator

import numpy as np
from scipy.integrate import DOP853

from .dynamics import _packed, _state_derivative, _workspace, energy, forward_dynamics
from .errors import SimulationCancelled, SimulationError, SingularMassMatrixError
from .robot import Robot
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


def _torque_function(tau: TorqueInput, n: int) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
    if tau is None:
        zero = np.zeros(n)
        return lambda t, q, qd: zero
    if callable(tau):
        def call(t, q, qd):
            out = np.asarray(tau(t, q, qd), dtype=float)
            if out.shape != (n,):
                raise ValueError(f"tau(t, q, qd) must return shape ({n},), got {out.shape}")
            return out
        return call
    const = _joint_vector(tau, n, "tau", np.zeros(n))
    return lambda t, q, qd: const


def _first_bad_joint(y: np.ndarray, n: int) -> int:
    bad = ~np.isfinite(y) | (np.abs(y) > HUGE)
    idx = int(np.flatnonzero(bad)[0])
    return idx % n + 1


def simulate_chunks(robot: Robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
                    damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                    dt_out: float = 0.01, chunk_duration: float = 0.05,
                    max_wall_per_chunk: float = 0.05, f_ext=None) -> Iterator[Trajectory]:
    """Integrate the arm's motion from (q0, qd0) for `duration` seconds, chunk by chunk.

    q0, qd0  : (n,) initial joint values / rates (default: home pose, at rest)
    tau      : None (free fall), a constant (n,) vector, or a function
               tau(t, q, qd) -> (n,), N m / N
    damping  : viscous joint damping (n,) or scalar, N m s/rad / N s/m
    rtol, atol : integrator tolerances on y = [q; qd]
    dt_out   : output sample step (s); samples lie on `output_grid(duration, dt_out)`
    Yields Trajectory chunks of new samples (the first holds t = 0) at least every
    `chunk_duration` simulated seconds or `max_wall_per_chunk` wall seconds (a
    chunk may then be empty), and returns the whole Trajectory.
    The `tau` column of the result is the applied joint force tau - damping * qd.
    Raises SimulationError (with `.result`, the samples so far) when the state
    becomes non-finite or huge, the mass matrix is singular or the step size
    collapses.
    """
    n = robot.n
    q0 = _joint_vector(q0, n, "q0", robot.q_home)
    qd0 = _joint_vector(qd0, n, "qd0", np.zeros(n))
    c = _joint_vector(damping, n, "damping", np.zeros(n))
    if np.any(c < 0):
        raise ValueError("damping must be >= 0")
    if not (rtol > 0 and atol > 0):
        raise ValueError("rtol and atol must be positive")
    w = np.zeros(6) if f_ext is None else np.asarray(f_ext, dtype=float).reshape(6)
    grid = output_grid(duration, dt_out)
    tau_of = _torque_function(tau, n)
    k = _packed(robot)
    ws = _workspace(n)  # this thread's workspace: the generator runs in one thread
    kind = "free-fall" if tau is None else "simulation"

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        ydot = np.empty(2 * n)
        bad = _state_derivative(k.P, k.revolute, k.gravity, ws, y, tau_of(t, y[:n], y[n:]), c, w, ydot)
        if bad >= 0:
            raise SingularMassMatrixError(int(bad) + 1, float("nan"))
        return ydot

    parts: list[Trajectory] = []

    def samples(t: np.ndarray, Y: np.ndarray) -> Trajectory:
        """Derived columns (qdd, tau, energy) at the output samples."""
        q, qd = Y[:, :n], Y[:, n:]
        applied = np.array([tau_of(ti, qi, qdi) - c * qdi for ti, qi, qdi in zip(t, q, qd)]).reshape(-1, n)
        qdd = np.array([forward_dynamics(robot, qi, qdi, ai, f_ext=w)
                        for qi, qdi, ai in zip(q, qd, applied)]).reshape(-1, n)
        return Trajectory(t.copy(), q.copy(), qd.copy(), qdd, applied, energy(robot, q, qd), kind)

    def fail(reason: str, t: float, joint: int | None) -> SimulationError:
        partial = Trajectory.concatenate(parts) if parts else Trajectory.empty(n, kind)
        return SimulationError(reason, time=t, joint=joint, result=partial)

    y0 = np.concatenate([q0, qd0])
    try:
        first = samples(grid[:1], y0[None, :])
    except SingularMassMatrixError as err:
        raise fail(str(err), 0.0, err.joint) from None
    parts.append(first)
    pending: list[Trajectory] = [first]
    next_sample = 1
    solver = DOP853(rhs, 0.0, y0, float(grid[-1]), rtol=rtol, atol=atol)
    last_yield_t, last_yield_wall = 0.0, _time.perf_counter()
    while solver.status == "running":
        try:
            message = solver.step()
        except SingularMassMatrixError as err:
            raise fail(str(err), float(solver.t), err.joint) from None
        if solver.status == "failed":
            raise fail(f"integrator failed: {message}", float(solver.t), None)
        y = solver.y
        if not np.all(np.isfinite(y)) or np.max(np.abs(y)) > HUGE:
            joint = _first_bad_joint(y, n)
            raise fail("the state became non-finite or huge (> 1e10): the motion blew up",
                       float(solver.t), joint)
        stop = int(np.searchsorted(grid, solver.t, side="right"))
        if solver.status == "finished":
            stop = grid.size
        if stop > next_sample:
            t_new = grid[next_sample:stop]
            Y = solver.dense_output()(t_new).T.reshape(-1, 2 * n)
            Y[t_new == solver.t] = y
            try:
                part = samples(t_new, Y)
            except SingularMassMatrixError as err:
                raise fail(str(err), float(solver.t), err.joint) from None
            parts.append(part)
            pending.append(part)
            next_sample = stop
        now = _time.perf_counter()
        if (solver.t - last_yield_t >= chunk_duration or now - last_yield_wall >= max_wall_per_chunk
                or solver.status == "finished"):
            yield Trajectory.concatenate(pending) if pending else Trajectory.empty(n, kind)
            pending = []
            last_yield_t, last_yield_wall = solver.t, _time.perf_counter()
    return Trajectory.concatenate(parts)


def simulate(robot: Robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
             damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
             dt_out: float = 0.01, progress: Callable[[float], None] | None = None,
             cancel: Callable[[], bool] | None = None, f_ext=None) -> Trajectory:
    """Simulate the arm for `duration` seconds and return every sample (see `simulate_chunks`).

    progress(fraction) is called after each chunk with the simulated fraction in
    [0, 1]; when cancel() returns True the run stops and SimulationCancelled is
    raised with `.result`, the samples so far.
    """
    gen = simulate_chunks(robot, duration, q0, qd0, tau, damping, rtol, atol, dt_out, f_ext=f_ext)
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
            t_now = float(parts[-1].t[-1]) if any(len(p) for p in parts) else 0.0
            raise SimulationCancelled(time=t_now, result=Trajectory.concatenate(parts))
