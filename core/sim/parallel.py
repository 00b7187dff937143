"""Runs of parallel robots in Saha's minimal coordinates (seed 001 Sec 3): a free fall
integrated in the actuated joints (Fig. 14), and inverse dynamics along a cycloid of the
actuators (Sec 3.5, Fig. 13). The dynamics are `core.algorithms.parallel`.
"""
from __future__ import annotations

import math
import time as _time
from collections.abc import Iterator

import numpy as np

from ..algorithms.loops import assemble
from ..algorithms.parallel import (SIMULATION_SINGULAR_TOL, actuated_values,
                                   parallel_assemble, parallel_forward_dynamics,
                                   parallel_kinematics, parallel_state, parallel_structure)
from ..algorithms.tree_dynamics import energy, tree_inverse_dynamics
from ..errors import ArgumentError, LoopClosureError, SingularConfigurationError
from ..model.arguments import joint_vector, model_of, one_degree_joints_only
from .driver import Failure, drive, run_chunks
from .motions import cycloidal_trajectory
from .trajectory import RunKind, Trajectory, output_grid


class _Beyond(Exception):
    """The actuators left the workspace of the current assembly branch."""


class ParallelStepper:
    """A run of a parallel robot in minimal coordinates (`core.sim.driver.Stepper`): the
    set-up of `parallel_simulate` (same arguments), SciPy's solver and its samples."""

    def __init__(self, mech, duration: float, q0=None, qd0=None, *, tau_a=None,
                 dt_out: float = 0.01, rtol: float = 1e-10, atol: float = 1e-10,
                 method: str = "DOP853", singular_tol: float = SIMULATION_SINGULAR_TOL
                 ) -> None:
        import scipy.integrate as si  # half a second of start-up: only for a parallel run
        mech = model_of(mech)
        one_degree_joints_only(mech, "a parallel robot's run")
        S = parallel_structure(mech)
        n, na = mech.n, S.n_legs
        act = list(S.actuated)
        self.times = output_grid(duration, dt_out)
        self.t_end = float(self.times[-1])
        if q0 is None:
            q_acc = np.array(mech.q_home)
        else:
            q0a = np.asarray(q0, dtype=float)
            if q0a.shape == (na,) and na != n:
                q_acc = parallel_assemble(mech, q0a)
            else:
                q_acc = assemble(mech, joint_vector(q0a, n, "q0"), independent=act)
        thd0 = np.zeros(na) if qd0 is None else actuated_values(S, n, qd0, "qd0")
        self.tau = np.zeros(na) if tau_a is None else actuated_values(S, n, tau_a, "tau_a")
        self.tau_full = np.zeros(n)
        self.tau_full[act] = self.tau
        solver_cls = {"DOP853": si.DOP853, "RK45": si.RK45, "RK23": si.RK23}.get(method)
        if solver_cls is None:
            raise ArgumentError(f"method must be 'DOP853', 'RK45' or 'RK23', got {method!r}")
        self.mech, self.n, self.na, self.act = mech, n, na, act
        self.kind = RunKind.FREE_FALL if tau_a is None else RunKind.SIMULATION
        self.singular_tol = singular_tol
        self.guess = q_acc.copy()  # the last accepted pose: the branch to stay on
        self.samples: list[tuple] = []  # (t, q, qd, qdd) since the last take
        self.last_sample_t = -math.inf
        self.next_out = 1
        self.pending: Failure | None = None
        y0 = np.concatenate([q_acc[act], thd0])
        self.solver = None
        if self._measure(y0) <= singular_tol:
            self.pending = self._stop(0.0, "the initial pose is singular")
            return
        self._sample(0.0, y0)
        self.solver = solver_cls(self._rhs, 0.0, y0, self.t_end, rtol=rtol, atol=atol)

    @property
    def t(self) -> float:
        return 0.0 if self.solver is None else float(self.solver.t)

    def _pose(self, y):
        """The closed pose at th_a = y[:na], on the branch of the last accepted pose."""
        if not np.all(np.isfinite(y)):
            raise _Beyond()
        q = self.guess.copy()
        q[self.act] = y[:self.na]
        try:
            return assemble(self.mech, q, independent=self.act, branch=self.guess)
        except LoopClosureError:
            raise _Beyond() from None

    def _rhs(self, t, y):
        na = self.na
        try:
            q = self._pose(y)
            return np.concatenate([y[na:], parallel_forward_dynamics(self.mech, q, y[na:],
                                                                     self.tau)])
        except (_Beyond, SingularConfigurationError, np.linalg.LinAlgError):
            return np.full(2 * na, np.nan)  # rejects the trial step

    def _measure(self, y) -> float:
        """sqrt(lambda_min(Phi)) at th_a = y[:na] (0 beyond the workspace)."""
        try:
            return math.sqrt(max(parallel_kinematics(self.mech, self._pose(y)).lambda_min, 0.0))
        except (_Beyond, SingularConfigurationError):
            return 0.0

    def _sample(self, t, y) -> None:
        q = self._pose(y)
        self.guess = q
        _, kin, qd_full, S_c = parallel_state(self.mech, q, y[self.na:])
        thdd = parallel_forward_dynamics(self.mech, q, y[self.na:], self.tau)
        self.samples.append((t, q, qd_full, kin.R @ thdd + S_c))
        self.last_sample_t = t

    def _stop(self, t_stop: float, why: str) -> Failure:
        return Failure(f"type-II (parallel) singularity at t = {t_stop:.6g} s: {why}; the "
                       f"actuated joints no longer fix the passive ones (Phi = sum_l P^l "
                       f"singular, e.g. the five-bar's distal links collinear), so th''_a is "
                       f"undefined there", float(t_stop))

    def empty(self) -> Trajectory:
        return Trajectory.empty(self.n, self.kind)

    def begin_chunk(self) -> None:
        pass

    def take(self) -> Trajectory:
        if not self.samples:
            return self.empty()
        t = np.array([s[0] for s in self.samples])
        Q = np.array([s[1] for s in self.samples])
        Qd = np.array([s[2] for s in self.samples])
        Qdd = np.array([s[3] for s in self.samples])
        self.samples = []
        return Trajectory(t, Q, Qd, Qdd, np.tile(self.tau_full, (len(t), 1)),
                          energy(self.mech, Q, Qd), kind=self.kind)

    def advance(self, t_stop: float, deadline: float) -> bool | Failure:
        """Solver steps until t_stop or the deadline, at least one; the grid samples in
        each step from its dense output, taken inside the step (each sample's pose is the
        next one's starting guess)."""
        if self.pending is not None:
            return self.pending
        solver, times, tol = self.solver, self.times, self.singular_tol
        while solver.status == "running":
            t_old = solver.t
            msg = solver.step()
            if solver.status == "failed":
                return self._stop(t_old, f"the integrator could not continue ({msg})")
            dense = solver.dense_output()
            y_new = solver.y
            m_new = self._measure(y_new)
            t_end = solver.t
            singular = not np.all(np.isfinite(y_new)) or m_new <= tol
            if singular:
                # locate sqrt(lambda_min) = singular_tol on the step's dense output
                def g(t):
                    return self._measure(dense(t)) - tol
                lo, hi = t_old, solver.t
                if g(lo) > 0 and g(hi) <= 0:
                    import scipy.optimize as so  # only where a run meets a singularity
                    t_end = so.brentq(g, lo, hi, xtol=1e-12)
                else:
                    t_end = lo
            while self.next_out < len(times) and times[self.next_out] <= t_end + 1e-12:
                self._sample(float(times[self.next_out]), dense(times[self.next_out]))
                self.next_out += 1
            if singular:
                if self.last_sample_t < t_end:
                    self._sample(float(t_end), dense(t_end))
                why = f"sqrt(lambda_min(Phi)) fell to {tol:.3g}"
                delta = min(1e-4, 0.5 * (t_end - t_old))
                if delta > 0:
                    # sqrt(lambda_min) falls linearly there: where it would reach zero
                    slope = (self._measure(dense(t_end - delta))
                             - self._measure(dense(t_end))) / delta
                    if slope > 0:
                        why += f" (zero at about t = {t_end + tol / slope:.6g} s)"
                return self._stop(t_end, why)
            self.guess = self._pose(y_new)
            if solver.t >= t_stop or _time.perf_counter() >= deadline:
                break
        return solver.status == "finished"


def parallel_simulate_chunks(mech, duration: float, q0=None, qd0=None, *, tau_a=None,
                             dt_out: float = 0.01, rtol: float = 1e-10, atol: float = 1e-10,
                             method: str = "DOP853",
                             singular_tol: float = SIMULATION_SINGULAR_TOL,
                             chunk_duration: float = 0.05, max_wall_per_chunk: float = 0.05
                             ) -> Iterator[Trajectory]:
    """`parallel_simulate` chunk by chunk (`core.sim.driver.drive`): yields Trajectory
    chunks, returns the whole run."""
    stepper = ParallelStepper(mech, duration, q0, qd0, tau_a=tau_a, dt_out=dt_out, rtol=rtol,
                              atol=atol, method=method, singular_tol=singular_tol)
    return (yield from drive(stepper, chunk_duration, max_wall_per_chunk))


def parallel_simulate(mech, duration: float, q0=None, qd0=None, *, tau_a=None,
                      dt_out: float = 0.01, rtol: float = 1e-10, atol: float = 1e-10,
                      method: str = "DOP853",
                      singular_tol: float = SIMULATION_SINGULAR_TOL) -> Trajectory:
    """Integrate (th_a, th'_a) with th''_a = I^-1 (tau_a - h) (eq. 33), re-solving the
    passive joints from the loops at every evaluation (`core.algorithms.loops.assemble`
    with the actuators held): an ODE in minimal coordinates, with no drift.

    q0  : (n,) a pose whose actuated values are used (re-closed), or (na,) the actuator
          values (reached from the home pose by `parallel_assemble`); default: home.
    qd0 : actuator rates (na,) or an (n,) vector; default: rest.
    tau_a : constant actuator torques (na,); default zero (free fall, Fig. 14).
    method : an explicit Runge-Kutta solver of scipy.integrate ("DOP853", "RK45").
    Returns the Trajectory (kind "free-fall", "simulation" with tau_a) sampled every dt_out: q, qd, qdd of all
    tree joints, tau (zeros but the actuated joints), energy.
    Raises SimulationError when the motion runs into a type-II singularity: when
    sqrt(lambda_min(Phi)) (falling linearly in time there) drops below singular_tol,
    located on the solver's dense output, or if the actuators leave the assembly
    branch's workspace. Its reason names the singularity and the time; `.result`
    holds the samples so far, the stopping time last.
    """
    return run_chunks(parallel_simulate_chunks(mech, duration, q0, qd0, tau_a=tau_a,
                                               dt_out=dt_out, rtol=rtol, atol=atol,
                                               method=method, singular_tol=singular_tol,
                                               chunk_duration=math.inf,
                                               max_wall_per_chunk=math.inf), duration)


def parallel_run_inverse_dynamics(mech, theta_start, theta_end, duration: float,
                                  dt_out: float = 0.01) -> Trajectory:
    """Actuator torques along the cycloidal motion of the actuated joints (eq. 22a)
    theta_start -> theta_end (na,) over `duration` s, as in Sec 3.5 (eq. 35, Fig. 13).

    The passive joints come from the loops (on the branch of the home pose), their
    rates and accelerations from eq. 30 and its derivative. Returns a Trajectory of
    all tree joints (tau nonzero at the actuated joints only). Raises
    SingularConfigurationError (with the time) if the motion meets a type-II
    singularity.
    """
    S = parallel_structure(mech)
    n = mech.n
    act = list(S.actuated)
    times = output_grid(duration, dt_out)
    th, thd, thdd = cycloidal_trajectory(theta_start, theta_end, duration, times)
    Q = np.empty((len(times), n))
    Qd, Qdd, Tau = np.empty_like(Q), np.empty_like(Q), np.zeros_like(Q)
    q = parallel_assemble(mech, th[0])
    for s, t in enumerate(times):
        q = parallel_assemble(mech, th[s], q)
        try:
            _, kin, qd_full, S_c = parallel_state(mech, q, thd[s])
        except SingularConfigurationError as err:
            raise SingularConfigurationError(err.reason, q=err.q, time=float(t)) from None
        Q[s], Qd[s] = q, qd_full
        Qdd[s] = kin.R @ thdd[s] + S_c
        Tau[s, act] = kin.R.T @ tree_inverse_dynamics(mech, q, qd_full, Qdd[s])
    return Trajectory(times, Q, Qd, Qdd, Tau, energy(mech, Q, Qd), kind=RunKind.INVERSE_DYNAMICS)
