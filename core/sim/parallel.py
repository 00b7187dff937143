"""Runs of parallel robots in Saha's minimal coordinates (seed 001 Sec 3): a free fall
integrated in the actuated joints (Fig. 14), and inverse dynamics along a cycloid of the
actuators (Sec 3.5, Fig. 13). The dynamics are `core.algorithms.parallel`.
"""
from __future__ import annotations

import math

import numpy as np

from ..algorithms.loops import assemble
from ..algorithms.parallel import (SIMULATION_SINGULAR_TOL, actuated_values,
                                   parallel_assemble, parallel_forward_dynamics,
                                   parallel_kinematics, parallel_state, parallel_structure)
from ..algorithms.tree_dynamics import energy, tree_inverse_dynamics
from ..errors import LoopClosureError, SimulationError, SingularConfigurationError
from ..model.arguments import joint_vector
from .trajectory import Trajectory, cycloidal_trajectory, output_grid


class _Beyond(Exception):
    """The actuators left the workspace of the current assembly branch."""


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
    Returns the Trajectory (kind "free-fall") sampled every dt_out: q, qd, qdd of all
    tree joints, tau (zeros but the actuated joints), energy.
    Raises SimulationError when the motion runs into a type-II singularity: when
    sqrt(lambda_min(Phi)) (falling linearly in time there) drops below singular_tol,
    located on the solver's dense output, or if the actuators leave the assembly
    branch's workspace. Its reason names the singularity and the time; `.result`
    holds the samples so far, the stopping time last.
    """
    import scipy.integrate as si  # half a second of start-up: only for a parallel run
    S = parallel_structure(mech)
    n, na = mech.n, S.n_legs
    act = list(S.actuated)
    times = output_grid(duration, dt_out)
    if q0 is None:
        q_acc = np.array(mech.q_home)
    else:
        q0a = np.asarray(q0, dtype=float)
        if q0a.shape == (na,) and na != n:
            q_acc = parallel_assemble(mech, q0a)
        else:
            q_acc = assemble(mech, joint_vector(q0a, n, "q0"), independent=act)
    thd0 = np.zeros(na) if qd0 is None else actuated_values(S, n, qd0, "qd0")
    tau = np.zeros(na) if tau_a is None else actuated_values(S, n, tau_a, "tau_a")
    tau_full = np.zeros(n)
    tau_full[act] = tau
    solver_cls = {"DOP853": si.DOP853, "RK45": si.RK45, "RK23": si.RK23}.get(method)
    if solver_cls is None:
        raise ValueError(f"method must be 'DOP853', 'RK45' or 'RK23', got {method!r}")

    guess = {"q": q_acc.copy()}

    def pose(y):
        """The closed pose at th_a = y[:na], on the branch of the last accepted pose."""
        if not np.all(np.isfinite(y)):
            raise _Beyond()
        q = guess["q"].copy()
        q[act] = y[:na]
        try:
            return assemble(mech, q, independent=act)
        except LoopClosureError:
            raise _Beyond() from None

    def rhs(t, y):
        try:
            q = pose(y)
            return np.concatenate([y[na:], parallel_forward_dynamics(mech, q, y[na:], tau)])
        except (_Beyond, SingularConfigurationError, np.linalg.LinAlgError):
            return np.full(2 * na, np.nan)  # rejects the trial step

    def measure(y):
        """sqrt(lambda_min(Phi)) at th_a = y[:na] (0 beyond the workspace)."""
        try:
            return math.sqrt(max(parallel_kinematics(mech, pose(y)).lambda_min, 0.0))
        except (_Beyond, SingularConfigurationError):
            return 0.0

    samples = []  # (t, q, qd, qdd)

    def sample(t, y):
        q = pose(y)
        guess["q"] = q
        S_, kin, qd_full, S_c = parallel_state(mech, q, y[na:])
        thdd = parallel_forward_dynamics(mech, q, y[na:], tau)
        samples.append((t, q, qd_full, kin.R @ thdd + S_c))

    def result():
        if not samples:
            return Trajectory.empty(n, "free-fall")
        t = np.array([s[0] for s in samples])
        Q = np.array([s[1] for s in samples])
        Qd = np.array([s[2] for s in samples])
        Qdd = np.array([s[3] for s in samples])
        return Trajectory(t, Q, Qd, Qdd, np.tile(tau_full, (len(t), 1)), energy(mech, Q, Qd),
                          kind="free-fall")

    def stop(t_stop, why):
        raise SimulationError(
            f"type-II (parallel) singularity at t = {t_stop:.6g} s: {why}; the actuated "
            f"joints no longer fix the passive ones (Phi = sum_l P^l singular, e.g. the "
            f"five-bar's distal links collinear), so th''_a is undefined there",
            time=float(t_stop), result=result())

    y0 = np.concatenate([q_acc[act], thd0])
    if measure(y0) <= singular_tol:
        stop(0.0, "the initial pose is singular")
    sample(0.0, y0)
    solver = solver_cls(rhs, 0.0, y0, float(times[-1]), rtol=rtol, atol=atol)
    next_out = 1
    while solver.status == "running":
        t_old = solver.t
        msg = solver.step()
        if solver.status == "failed":
            stop(t_old, f"the integrator could not continue ({msg})")
        dense = solver.dense_output()
        y_new = solver.y
        m_new = measure(y_new)
        t_end = solver.t
        singular = not np.all(np.isfinite(y_new)) or m_new <= singular_tol
        if singular:
            # locate sqrt(lambda_min) = singular_tol on the step's dense output
            def g(t):
                return measure(dense(t)) - singular_tol
            lo, hi = t_old, solver.t
            if g(lo) > 0 and g(hi) <= 0:
                import scipy.optimize as so  # only where a run meets a singularity
                t_end = so.brentq(g, lo, hi, xtol=1e-12)
            else:
                t_end = lo
        while next_out < len(times) and times[next_out] <= t_end + 1e-12:
            sample(float(times[next_out]), dense(times[next_out]))
            next_out += 1
        if singular:
            if samples[-1][0] < t_end:
                sample(float(t_end), dense(t_end))
            why = f"sqrt(lambda_min(Phi)) fell to {singular_tol:.3g}"
            delta = min(1e-4, 0.5 * (t_end - t_old))
            if delta > 0:
                # sqrt(lambda_min) falls linearly there: where it would reach zero
                slope = (measure(dense(t_end - delta)) - measure(dense(t_end))) / delta
                if slope > 0:
                    why += f" (zero at about t = {t_end + singular_tol / slope:.6g} s)"
            stop(t_end, why)
        guess["q"] = pose(y_new)
    return result()


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
    return Trajectory(times, Q, Qd, Qdd, Tau, energy(mech, Q, Qd), kind="inverse-dynamics")
