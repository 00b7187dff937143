"""Simulation: integrate the equations of motion (seed 001 eq. 16a) in time.

The state y = [q; qd] is advanced by the adaptive Dormand-Prince 8(5,3) method,
each derivative coming from the O(n) recursive forward dynamics (RFDSIM).
Output is sampled on a regular grid from the method's dense output, so the
step size never depends on the sample rate.

The integration runs compiled (`core.kernels.dop853`, set up by `core.sim.dop853`);
the joint forces are a constant vector or a function tau(t, q, qd), called at every
stage through a C callback (`core.kernels.torque`): a function numba compiles keeps the
whole run compiled, a plain Python function costs its own calls. `Dop853Stepper` is the
run's stepper for the one driver (`core.sim.driver`).

`simulate_chunks` is a generator (a GUI drives it from a worker thread and
cancels between chunks); `simulate` runs it to the end with a progress
callback and a cooperative cancel. End stops at the joint limits: `core.sim.stops`.
"""
from __future__ import annotations

import time as _time
from collections.abc import Callable, Iterator

import numpy as np

from ..algorithms.closed_chains import constrained_failure, velocity_transformation
from ..algorithms.loops import assemble, constraint_row_labels
from ..algorithms.tree_dynamics import singular_error
from ..errors import (ArgumentError, SingularConfigurationError, SingularMassMatrixError)
from ..kernels.constrained import loops_of
from ..kernels.data import thread_workspace
from ..kernels.dop853 import (STATUS_BLOWUP, STATUS_FINISHED, STATUS_SINGULAR,
                              STATUS_STEP_TOO_SMALL, STATUS_TORQUE_FAILED, sample_torques)
from ..kernels.pull import PULL_COLUMNS, pull_buffer
from ..kernels.rhs import project_samples, sample_quantities
from ..model.arguments import (joint_vector, link_wrenches, model_of, physical_joint_values,
                               positive_number, tolerance)
from .dop853 import Dop853State
from .driver import DEFAULT_MAX_WALL_TIME, Failure, SampleFailure, drive, run_chunks
from .pull import PointPull
from .stops import StopsInput, resolve_stops, simulation_warnings
from .trajectory import RUN_COPIES, RunKind, Trajectory, check_sample_memory, output_grid

#: Default tolerances: a 10 s free fall of the shipped arms keeps its energy to
#: better than 1e-6 of the peak kinetic energy (SciPy's defaults do not).
DEFAULT_RTOL = 1e-10
DEFAULT_ATOL = 1e-10
#: A state component larger than this is taken as a blow-up.
HUGE = 1e10
#: Steps of a call of the compiled integrator (`Dop853Stepper.advance`): the first of a
#: run takes MIN_CALL_STEPS, later ones as many as fit before the chunk's wall-clock
#: deadline at the last call's pace, at least MIN_CALL_STEPS (a thread that waited for
#: a CPU measures a slow pace: the humanoid's run then made calls of a step or two, and
#: their returns to Python made it 1.5-2 times slower) and at most MAX_CALL_STEPS.
MIN_CALL_STEPS = 20
MAX_CALL_STEPS = 100_000

TorqueInput = None | np.ndarray | Callable[[float, np.ndarray, np.ndarray], np.ndarray]


class Dop853Stepper:
    """A run of the compiled DOP853 (`core.sim.driver.Stepper`): the set-up of a
    simulation (arguments as `simulate_chunks`), its output grid and samples."""

    def __init__(self, robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
                 damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                 dt_out: float = 0.01, f_ext=None, stops: StopsInput = None,
                 pull: PointPull | None = None, max_step: float = np.inf) -> None:
        self.model = model = model_of(robot)
        k = self.kernel = model.kernel
        n, nq, nv = k.n, k.nq, k.nv
        self.grid = output_grid(duration, dt_out)
        check_sample_memory(self.grid.size, RUN_COPIES * Trajectory.bytes_per_sample(
            nv, k.m, pulled=pull is not None, nq=nq, ne=k.ne))
        q0 = physical_joint_values(model, joint_vector(q0, nq, "q0", default=model.q_home),
                                   "q0")
        qd0 = physical_joint_values(model, joint_vector(qd0, nv, "qd0", default=np.zeros(nv)),
                                    "qd0", rates=True)
        rtol, atol = tolerance(rtol, "rtol"), tolerance(atol, "atol")
        if k.nl:
            q0 = assemble(model, q0)
            vt = velocity_transformation(model, q0)
            qd0 = vt.R @ qd0[list(vt.rates)]
        c = joint_vector(damping, nv, "damping", default=np.zeros(nv), scalar=True)
        if np.any(c < 0):
            raise ArgumentError("damping must be >= 0")
        self.w = np.ascontiguousarray(link_wrenches(f_ext, n, 1)[0])  # (n, 6) per link
        self.t_end = float(self.grid[-1])
        self.kind = RunKind.FREE_FALL if tau is None else RunKind.SIMULATION
        used_stops = resolve_stops(model, stops)
        self.counts_stops = used_stops is not None
        self.warnings = simulation_warnings(model, q0, False if used_stops is None
                                            else used_stops, free_fall=tau is None)
        if not callable(tau):
            tau = joint_vector(tau, nv, "tau", default=np.zeros(nv), scalar=True)
        stop_table = None if used_stops is None else used_stops.table(model)  # (nv, 4)
        self.pull = pull
        self.pull_now = pull_buffer(n, k.nv)  # the request in force during the current chunk
        self.seen = -1 if pull is None else pull.copy_into(self.pull_now, n, -1)
        self.state = Dop853State(model, np.concatenate([q0, qd0]), 0.0, self.t_end, rtol,
                                 atol, tau=tau, damping=c, f_ext=self.w, stops=stop_table,
                                 pull=self.pull_now, max_step=max_step)
        # the integrator writes rows 0..next_out-1 (`advance`); only those are read
        S = self.grid.size
        self.Y = np.empty((S, nq + nv))
        # the whole run's columns, filled chunk by chunk (`take`; pages are touched as
        # they are filled): the chunks are views of their rows, and so is the whole run
        # (`Trajectory.concatenate` joins them without a copy)
        self.columns = {"q": np.empty((S, nq)), "qd": np.empty((S, nv)), "qdd": np.empty((S, nv)),
                    "tau": np.empty((S, nv)), "stop_forces": np.empty((S, nv)),
                    "energy": np.empty((S, 3)), "cut_forces": np.empty((S, k.m)),
                    "loop_residual": np.zeros(S), "momentum": np.empty((S, 9)),
                    "element_forces": np.empty((S, k.ne)),
                    "pull": np.empty((S, PULL_COLUMNS) if pull is not None else (0, PULL_COLUMNS))}
        self.step_wall: float | None = None  # wall s per accepted step, last call
        self.sent = 0      # samples handed out by `take`
        self.next_out = 0  # samples the integrator has written

    @property
    def t(self) -> float:
        return self.state.t

    def empty(self) -> Trajectory:
        k = self.kernel
        return Trajectory.empty(k.nq, self.kind, k.m, self.warnings,
                                pulled=self.pull is not None, nv=k.nv, recorded=True, ne=k.ne)

    def begin_chunk(self) -> None:
        """The pull's latest request, if it changed, holds for this whole chunk."""
        if self.pull is not None:
            version = self.pull.copy_into(self.pull_now, self.kernel.n, self.seen)
            if version != self.seen:
                self.seen = version
                self.state.pull_changed()  # f(t, y) under the new force

    def advance(self, t_stop: float, deadline: float) -> bool | Failure:
        """Step in calls of the compiled integrator, each of as many steps as fit before
        the deadline at the pace of the last call (`MIN_CALL_STEPS` at least): every
        return to Python takes Python's lock, which the window's thread may then wait
        for, the longer when this thread runs at a lower priority (`gui.jobs.job`); the
        humanoid's chunks took 16 calls of 20 steps each, now one or two."""
        status, stats = 0, self.state.stats
        while status == 0 and self.state.t < t_stop:
            start, accepted = _time.perf_counter(), int(stats[1])
            steps = (MIN_CALL_STEPS if self.step_wall is None else min(
                MAX_CALL_STEPS, max(MIN_CALL_STEPS, int((deadline - start) / self.step_wall))))
            status, self.next_out, info = self.state.advance(self.grid, self.Y, self.next_out,
                                                             t_stop, max_steps=steps)
            end = _time.perf_counter()
            if stats[1] > accepted:
                self.step_wall = (end - start) / (int(stats[1]) - accepted)
            if end >= deadline:
                break
        n = self.kernel.n
        if status == STATUS_FINISHED:
            return True
        if status == 0:
            return False
        if status == STATUS_TORQUE_FAILED:
            error = self.state.torque_error
            return Failure(self._torque_failure_text(), self.t, None, error, keep_chunk=False)
        if status == STATUS_SINGULAR:
            if info >= n:  # a loop's rows lost rank (core.kernels.constrained)
                label = constraint_row_labels(self.model)[info - n]
                return Failure(f"loop row {label!r} loses rank: the loops reached a "
                               "singular configuration", self.t)
            return Failure(str(SingularMassMatrixError(info + 1)), self.t, info + 1)
        if status == STATUS_BLOWUP:
            # name the joint that ran away: the largest |q| or |qd| of the last good state
            # (when a step fails, all its components are usually non-finite together)
            y = np.abs(np.nan_to_num(self.state.y, nan=0.0, posinf=np.inf))
            rate = int(np.argmax(y)) % self.kernel.nv
            return Failure("the state became non-finite or huge (> 1e10): the motion blew up",
                           self.t, int(self.model.rate_joint[rate]) + 1)
        assert status == STATUS_STEP_TOO_SMALL
        where, joint = self.motion_now()
        return Failure("the integrator's step size collapsed (the motion is too stiff or "
                       f"singular at this point); {where}", self.t, joint)

    def motion_now(self) -> tuple[str, int | None]:
        """(the step size and the fastest joint (largest |qd|) at the last accepted state,
        in words; that joint, 1-based): what a run stopped by its budget or a collapsed
        step reports (`core.sim.driver.ReportsMotion`)."""
        qd = np.abs(np.nan_to_num(self.state.y[self.kernel.nv:], nan=0.0))
        r = int(np.argmax(qd))
        j = int(self.model.rate_joint[r])
        unit = "rad/s" if self.model.rate_is_angular[r] else "m/s"
        return (f"the step size is {self.state.h_abs:.3g} s and the fastest joint is {j + 1} "
                f"({self.model.joint_names[j]!r}) at {qd[r]:.4g} {unit}", j + 1)

    def _torque_failure_text(self) -> str:
        error = self.state.torque_error
        what = f"{type(error).__name__}: {error}" if error is not None else "it failed"
        return f"the torque function tau(t, q, qd) failed ({what})"

    def take(self) -> Trajectory:
        """Samples sent..next_out-1 with their derived columns (qdd, tau, energy; with
        loops the cut-joint forces and the residual), computed in one compiled pass into
        the rows of the whole run's columns (`columns`): views of them."""
        lo, hi = self.sent, self.next_out
        self.sent = hi
        if hi == lo:
            return self.empty()
        k = self.kernel
        n, m, nq = k.n, k.m, k.nq
        t, states = self.grid[lo:hi], self.Y[lo:hi]
        rows = {name: column[lo:hi] for name, column in self.columns.items()}
        if self.pull is None:  # computed, not kept
            rows["pull"] = np.empty((hi - lo, PULL_COLUMNS))
        if k.nl:
            # dense-output samples onto the loops, as the accepted steps are
            project_samples(k.F, k.I, thread_workspace(k), states, 1e-14,
                            rows["loop_residual"])
        q, qd, applied = rows["q"], rows["qd"], rows["tau"]
        q[:], qd[:] = states[:, :nq], states[:, nq:]
        # tau(t, q, qd); + damping and stops below
        if sample_torques(self.state.torque, t, states, self.state.tau, applied) >= 0:
            raise SampleFailure(Failure(self._torque_failure_text(), self.t, None,
                                        self.state.torque_error))
        bad = sample_quantities(k.F, k.I, thread_workspace(k), states, self.state.passive,
                                self.w, self.pull_now, applied, rows["stop_forces"],
                                rows["qdd"], rows["energy"], rows["cut_forces"],
                                rows["pull"], rows["element_forces"], rows["momentum"],
                                loops_of(m))
        if bad >= 0:
            s, code = divmod(int(bad), n + m)
            try:
                raise (constrained_failure(self.model, q[s], code) if code >= n
                       else singular_error(self.model, q[s], code))
            except SingularMassMatrixError as err:
                raise SampleFailure(Failure(str(err), self.t, err.joint)) from None
            except SingularConfigurationError as err:
                raise SampleFailure(Failure(err.reason, self.t)) from None
        return Trajectory(t, q, qd, rows["qdd"], applied, rows["energy"], self.kind,
                          rows["cut_forces"], rows["loop_residual"], rows["stop_forces"],
                          self.warnings, rows["pull"] if self.pull is not None else None,
                          self.state.contacts[:, :, :3].copy() if self.counts_stops else None,
                          momentum=rows["momentum"],
                          element_forces=rows["element_forces"] if k.ne else None)


def simulate_chunks(robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
                    damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                    dt_out: float = 0.01, chunk_duration: float = 0.05,
                    max_wall_per_chunk: float = 0.05, f_ext=None,
                    stops: StopsInput = None, pull: PointPull | None = None,
                    max_wall_time: float = DEFAULT_MAX_WALL_TIME) -> Iterator[Trajectory]:
    """Integrate the motion of an arm or mechanism from (q0, qd0) for `duration` seconds,
    chunk by chunk.

    q0, qd0  : (n,) initial joint values / rates (default: home pose, at rest), within
               the physical bounds of `core.model.arguments` (|q| <= 1e4 rad or 1e3 m,
               |qd| <= 1e4 rad/s or 1e3 m/s); a q0 outside the joint limits is warned
               about (`simulation_warnings`). With loops, q0 is closed by `assemble` (its
               independent joints held) and the rates of the dependent joints follow
               from the independent ones in qd0.
    tau      : None (free fall), a constant (n,) vector, or a function
               tau(t, q, qd) -> (n,), N m / N: a plain Python function, or one compiled
               by numba (`@numba.njit`, also as tau(t, q, qd, out) writing into out),
               which keeps the whole run compiled (`core.kernels.torque`)
    damping  : viscous joint damping (n,) or scalar, N m s/rad / N s/m
    rtol, atol : integrator tolerances on y = [q; qd], each in [1e-14, 1e-2]
               (`core.model.arguments.RTOL_RANGE`, `ATOL_RANGE`)
    dt_out   : output sample step (s); samples lie on `output_grid(duration, dt_out)`;
               a run whose samples would need more than half the machine's available
               memory is refused before it starts (`check_sample_memory`)
    f_ext    : constant external wrenches (see `core.algorithms.dynamics`): (6,) on the last link,
               (n, 6) per link
    stops    : end stops at the joint limits: None (the default: `JointStops()` when the
               model has limits), True, False (none) or a `JointStops` (stiffness and
               damping of this run); see `resolve_stops`
    pull     : a `core.sim.pull.PointPull` that another thread may grab, move and release
               while the run goes on: a spring-damper from a point of a link to a target,
               applied at every evaluation of the right-hand side. Its request is read at
               each chunk boundary (a change takes effect from the next chunk); the
               samples record it in `Trajectory.pull`; no integrator step is longer
               than a chunk. None: no pull (and no column).
    max_wall_time : the run's wall-time budget, s (default 120; `core.sim.driver`): the
               wall time its stepping may take. Measured over every half second of
               stepping, a run whose pace projects it past the budget (a collapsed step
               size, a stiff joint) stops at once with SimulationError (the time, the
               pace, the step size and the fastest joint, and the samples so far).
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
    is singular, the step size collapses or the run is over its wall-time budget.
    """
    # with a pull, no step longer than a chunk: a body at rest (a floating base in zero
    # gravity) takes steps of seconds, and a grab would act only a step later
    stepper = Dop853Stepper(robot, duration, q0, qd0, tau, damping, rtol, atol, dt_out, f_ext,
                            stops, pull, max_step=np.inf if pull is None else chunk_duration)
    return (yield from drive(stepper, chunk_duration, max_wall_per_chunk, max_wall_time))


def simulate(robot, duration: float, q0=None, qd0=None, tau: TorqueInput = None,
             damping=None, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
             dt_out: float = 0.01, progress: Callable[[float], None] | None = None,
             cancel: Callable[[], bool] | None = None, f_ext=None,
             stops: StopsInput = None, pull: PointPull | None = None,
             max_wall_time: float = DEFAULT_MAX_WALL_TIME) -> Trajectory:
    """Simulate the arm for `duration` seconds and return every sample (see `simulate_chunks`).

    progress(fraction) is called after each chunk with the simulated fraction in
    [0, 1]; when cancel() returns True the run stops and SimulationCancelled is
    raised with `.result`, the samples so far.
    """
    # chunks of 1/10 of the run keep the per-chunk bookkeeping (about 25 us each) small;
    # the wall-time bound of each chunk keeps cancel() prompt
    gen = simulate_chunks(robot, duration, q0, qd0, tau, damping, rtol, atol, dt_out,
                          chunk_duration=max(0.05, positive_number(duration, "duration") / 10),
                          f_ext=f_ext,
                          stops=stops, pull=pull, max_wall_time=max_wall_time)
    return run_chunks(gen, duration, progress, cancel)
