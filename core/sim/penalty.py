"""Penalty formulation, augmented Lagrangian and the trapezoidal rule: a fixed-step
simulation for mechanisms with loops (Garcia de Jalon & Bayo, Sec 8.5, eqs. 8.121-8.135).

The loops are not solved exactly. Springs and dampers hold them closed: a potential
V* = 1/2 Phi^T alpha Phi (8.121) and a Rayleigh dissipation acting on Phi' (8.122).
The augmented Lagrangian adds multipliers lambda*, updated within each step, which
remove most of the closure error that a finite alpha leaves. The
equations are written for the tree joints q (n,). The book uses natural
coordinates; here

    M(q) q'' + h(q, q') + Phi_q^T [lambda* + alpha (Phi + mu Phi')] = Q     (8.124)
    lambda = lambda* + alpha (Phi + mu Phi')                                 (8.125)
    lambda*_{i+1} = lambda*_i + alpha (Phi_i + mu Phi'_i)                    (8.126)

Q = tau - c q' are the applied joint forces: the torques tau and viscous joint
damping c. External wrenches f_ext enter through h. Phi (m,) is the closure
residual and Phi_q = J the loop Jacobian (`core.algorithms.loops`). The constraints
are scleronomic, so Phi_t = 0 and Phi' = J q'. The equations are integrated by the
trapezoidal rule (8.127), with the positions q_{n+1} as the unknowns:

    q'_{n+1}  = (2/h) q_{n+1} - qd_hat,      qd_hat  = (2/h) q_n + q'_n                (8.128-9)
    q''_{n+1} = (4/h^2) q_{n+1} - qdd_hat,   qdd_hat = (4/h^2) q_n + (4/h) q'_n + q''_n
    f(q_{n+1}) = M q'' + h - Q + Phi_q^T [lambda* + alpha (Phi + mu Phi')] = 0        (8.132)

f = 0 is solved by Newton iterations (8.131), at most `newton_iterations` per solve.
They stop early when ||dq||_inf < newton_tol. The start is the Heun predictor
q_n + h q'_n + h^2/2 q''_n (8.135). The quasi-tangent is (8.134)

    df/dq ~ (4/h^2) M + Phi_q^T beta Phi_q - Q_q,      beta = alpha (1 + 2 mu / h)

In joint coordinates -Q_q is (2/h)(dh/dq' + diag(c)). The Coriolis and damping
forces depend on q_{n+1} through q' = (2/h) q - qd_hat. dh/dq' is exact and costs
one batched RIDIM call (`velocity_stiffness`). Without it, two iterations at the
book's h = 0.03 s leave 59 % of the Bricard's steps above the tolerance, and the
energy error is 6 times larger (0.078 % against 0.013 % of the peak kinetic
energy). Neglected terms: Phi_qq^T alpha (Phi + mu Phi') and Phi_q^T alpha mu Phi'_q
(8.133), the position derivatives of M q'' + h, and those of tau(t, q, q')
functions. The tangent is formed at every iteration, as in the book. Forming it
once per step is 20-30 % cheaper, but the energy error grows by a factor of 1.7.
The system is multiplied by h^2/4, so the matrix solved is
M + (h^2/4) Phi_q^T beta Phi_q + (h/2)(dh/dq' + C).

The augmented Lagrangian (8.126) restarts from lambda*_0 = 0 at every step, as in
the book. A step solves Newton once with lambda*_0, then `al_iterations` times
updates lambda* and solves again, 1 + al_iterations solves in all. With
al_iterations = 0 it is the pure penalty method. On the Bricard one update divides
the closure error by 8 at alpha = 1e6 and by 60 at alpha = 1e7 (Sec. 8.5.1: "one or
two iterations").
*Carrying lambda* from step to step* (one update per step, no extra solve) is
cheaper, but it is unstable when alpha h^2 is not large against the mass m_c that
the closure rows see. For a scalar model m_c x'' + alpha (x + mu x') + lambda* = 0,
the spectral radius of the step exceeds 1 for alpha h^2 / m_c below about 100. The
Bricard at alpha = 1e6, h = 0.008 s and a four-bar at h = 0.0025 s blew up. It is
therefore not offered.

**Differences from the book** (in joint coordinates, not the book's natural coordinates):
- Joint coordinates. M(q) varies and h(q, q') holds Coriolis and centrifugal terms.
  M q'' + h is evaluated by one RIDIM call (`tree_inverse_dynamics`). Only the few
  loop-closure rows are penalised, not the rigid-body conditions of natural
  coordinates. A tree (no loops) is integrated by the plain trapezoidal rule with
  the same Newton iteration.
- The closure error is about max|lambda| / alpha (a spring of stiffness alpha
  carrying the cut force). Tune alpha to the mechanism's forces, not only its
  masses.
- The initial state is made consistent. q0 is closed by `assemble` and the rates
  of the dependent joints follow from the independent ones, as in
  `core.sim.simulation`. q''_0 is the exact constrained acceleration (Lagrange
  multipliers, `core.algorithms.closed_chains`), not the acceleration of the penalised system
  with Phi = 0 (which would be the unconstrained tree's).

Sign of the cut forces. `Trajectory.cut_forces` uses the convention of
`core.algorithms.closed_chains.cut_joint_forces` (M q'' + h = tau + J^T lambda_core), so it
holds -lambda of eq. 8.125. Like the trapezoidal accelerations, they carry the
high-frequency ripple of the penalty springs that mu damps (Fig. 8.24).

Public: `penalty_simulate_chunks`, `penalty_simulate`, `penalty_step` (a step from the
mechanism's frequencies, what the window uses), and the steps of the
algorithm (`trapezoidal_history`, `heun_predictor`, `trapezoidal_rates`,
`penalty_residual`, `closure_state`, `velocity_stiffness`, `quasi_tangent`,
`augmented_lagrangian_update`, `penalty_trapezoidal_step`).
"""
from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..algorithms.closed_chains import (constrained_forward_dynamics, cut_joint_forces,
                                        velocity_transformation)
from ..algorithms.dynamics import forward_dynamics
from ..algorithms.loops import assemble, loop_jacobian, loop_residual
from ..algorithms.tree_dynamics import energy, mass_matrix, tree_inverse_dynamics
from ..errors import ArgumentError
from ..model.arguments import (joint_vector, model_of, one_degree_joints_only,
                               positive_number, whole_number)
from .driver import DEFAULT_MAX_WALL_TIME, Failure, drive, run_chunks
from .trajectory import RunKind, Trajectory

#: Penalty factor alpha of the book's examples (unit masses, metres).
DEFAULT_ALPHA = 1e7
#: Default fixed step, s. The book uses 0.008 s (5-link pendulum) and 0.03 s (Bricard).
DEFAULT_H = 0.01
#: Default mu = h / DEFAULT_H_OVER_MU. The book keeps h/mu between 30 and 80.
DEFAULT_H_OVER_MU = 60.0
#: A state component larger than this is taken as a blow-up (as core.sim.simulation).
HUGE = 1e10
#: `penalty_step`: h times the mechanism's highest natural frequency (rad/s). With two
#: Newton iterations a step of h omega = 0.025 held the bundled four-bar (omega = 5.2),
#: five-bar (5.0), slider-crank (8.1 on the tree joints) and Bricard (2.5) with an energy
#: drift under 3 % over 10 s, 0.05 did not (the four-bar at h = 0.01 s: 9 %, Newton
#: diverging in 64 % of the steps); half of that, for margin.
STEP_TIMES_FREQUENCY = 0.0125
#: Steps `penalty_step` chooses from (times powers of ten): they divide output steps.
NICE_STEPS = (1.0, 2.0, 2.5, 5.0)
#: Step control: a step whose Newton iteration diverges is taken again as two half steps,
#: each of which may be halved again, down to h / 2**MAX_HALVINGS. A fall gathers speed
#: that a fixed h cannot follow with two Newton iterations: at the default h = 0.01 s
#: four of the five bundled closed chains failed within 0.6-3.2 s (the carpet scraper
#: needs h = 0.0025 s near t = 0.6 s, the slider-crank near t = 7.4 s); halving only
#: there keeps h elsewhere, and the samples stay on the grid of h.
MAX_HALVINGS = 6
#: Newton diverges when a correction is more than DIVERGENCE_GROWTH times the one before
#: and larger than DIVERGENCE_SIZE (rad or m), when it is not finite, or when the last
#: correction of a solve (of two or more iterations) is still larger than DIVERGENCE_SIZE.
DIVERGENCE_GROWTH = 2.0
DIVERGENCE_SIZE = 1e-3

TorqueInput = None | np.ndarray | Callable[[float, np.ndarray, np.ndarray], np.ndarray]


# ----------------------------------------------------------------------------------
# The algorithm, one function per equation group
# ----------------------------------------------------------------------------------

def trapezoidal_history(q_n, qd_n, qdd_n, h: float) -> tuple[np.ndarray, np.ndarray]:
    """qd_hat, qdd_hat of step n -> n+1, eq. 8.129 (what the rule knows from step n)."""
    qd_hat = (2.0 / h) * q_n + qd_n  # 8.129a
    qdd_hat = (4.0 / h ** 2) * q_n + (4.0 / h) * qd_n + qdd_n  # 8.129b
    return qd_hat, qdd_hat


def heun_predictor(q_n, qd_n, qdd_n, h: float) -> np.ndarray:
    """The start of Newton's iteration, q_n + h q'_n + h^2/2 q''_n, eq. 8.135."""
    return q_n + h * qd_n + (0.5 * h * h) * qdd_n


def trapezoidal_rates(q, qd_hat, qdd_hat, h: float) -> tuple[np.ndarray, np.ndarray]:
    """q'_{n+1}, q''_{n+1} for the position q_{n+1}, eq. 8.128."""
    return (2.0 / h) * q - qd_hat, (4.0 / h ** 2) * q - qdd_hat


def penalty_residual(mech, q, qd, qdd, lam_star, alpha, mu, Q, f_ext=None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """f = M q'' + h - Q + Phi_q^T [lambda* + alpha (Phi + mu Phi')], eqs. 8.124 / 8.132.

    Returns (f, Phi, Phi_q, Phi_dot, lam) with Phi_dot = Phi_q q' (Phi_t = 0) and lam
    = lambda* + alpha (Phi + mu Phi') (8.125), the book's sign."""
    Phi, Phi_q, Phi_dot, lam = closure_state(mech, q, qd, lam_star, alpha, mu)
    # M q'' + h by one RIDIM call (external wrenches in), minus the applied forces
    f = tree_inverse_dynamics(mech, q, qd, qdd, f_ext) - Q
    if Phi.size:
        f += Phi_q.T @ lam  # penalty and multiplier forces, 8.124
    return f, Phi, Phi_q, Phi_dot, lam


def closure_state(mech, q, qd, lam_star, alpha, mu
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Phi, Phi_q, Phi' = Phi_q q' and lambda = lambda* + alpha (Phi + mu Phi') (8.125)."""
    if lam_star.size == 0:
        z = np.zeros(0)
        return z, np.zeros((0, q.size)), z, z
    Phi = loop_residual(mech, q)
    Phi_q = loop_jacobian(mech, q)
    Phi_dot = Phi_q @ qd  # Phi' = Phi_q q' + Phi_t, Phi_t = 0
    lam = lam_star + alpha * (Phi + mu * Phi_dot)  # 8.125
    return Phi, Phi_q, Phi_dot, lam


def velocity_stiffness(mech, q, qd) -> np.ndarray:
    """dh/dq' (n, n): how the Coriolis and centrifugal forces h(q, q') change with q'.

    h is quadratic in q', so the central difference (h(q' + e_j) - h(q' - e_j)) / 2 is
    exact for any step; one batched RIDIM call with 2n rows."""
    n = q.size
    E = np.eye(n)
    Qd = np.concatenate([qd + E, qd - E])
    H = tree_inverse_dynamics(mech, np.broadcast_to(q, (2 * n, n)), Qd, np.zeros((2 * n, n)),
                              gravity=False)
    return 0.5 * (H[:n] - H[n:]).T


def quasi_tangent(M, Phi_q, alpha, mu, h: float, damping, C=None) -> np.ndarray:
    """(h^2/4) times the quasi-tangent (4/h^2) M + Phi_q^T beta Phi_q - Q_q, eq. 8.134.

    beta = alpha (1 + 2 mu / h) (8.133). In joint coordinates -Q_q is (2/h)(C +
    diag(damping)), with C = dh/dq' (`velocity_stiffness`, None: left out): the
    Coriolis and damping forces depend on q_{n+1} through q' = (2/h) q - qd_hat.
    tau(t, q, q') functions are not differentiated."""
    beta = alpha * (1.0 + 2.0 * mu / h)  # 8.133
    K = M.copy()
    if Phi_q.shape[0]:
        K += (0.25 * h * h) * (Phi_q.T @ (beta[:, None] * Phi_q))
    if C is not None:
        K += (0.5 * h) * C
    K[np.diag_indices_from(K)] += (0.5 * h) * damping
    return K


def augmented_lagrangian_update(lam_star, alpha, mu, Phi, Phi_dot) -> np.ndarray:
    """lambda*_{i+1} = lambda*_i + alpha (Phi_i + mu Phi'_i), eq. 8.126."""
    return lam_star + alpha * (Phi + mu * Phi_dot)


@dataclass
class PenaltyState:
    """The state the trapezoidal rule carries: t, q, q', q'' (n,), and lambda (m,), the
    multipliers of eq. 8.125 at t (book sign; for information, each step restarts
    from lambda* = 0)."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray


@dataclass
class StepReport:
    """What one step did: Newton iterations in all, whether the last correction was below
    the tolerance, its size, the closure (Phi, lambda of 8.125, book sign) at the end."""

    iterations: int
    converged: bool
    correction: float
    Phi: np.ndarray
    lam: np.ndarray


class NewtonDivergence(ArithmeticError):
    """Newton's corrections grew, became non-finite, or were still large (> 1e-3 rad or
    m) after the last iteration; `correction` is the last size."""

    def __init__(self, correction: float) -> None:
        self.correction = correction
        super().__init__(f"Newton's iteration diverged (correction {correction:.3g})")


def penalty_trapezoidal_step(mech, s: PenaltyState, h: float, Q_of: Callable, *, alpha, mu,
                             damping, al_iterations: int, newton_iterations: int,
                             newton_tol: float, f_ext=None) -> tuple[PenaltyState, StepReport]:
    """One step t -> t + h of the penalty / augmented-Lagrangian / trapezoidal scheme.

    Q_of(t, q, qd) -> the applied joint forces (tau - c qd). lambda*_0 = 0 (8.126), a
    Newton solve of f(q_{n+1}) = 0, then `al_iterations` times the update 8.126 and
    another solve (1 + al_iterations solves; one for a tree). The quasi-tangent is
    formed at every iteration, as in the book. Raises NewtonDivergence.
    """
    t1 = s.t + h
    qd_hat, qdd_hat = trapezoidal_history(s.q, s.qd, s.qdd, h)  # 8.129
    q = heun_predictor(s.q, s.qd, s.qdd, h)  # 8.135
    lam_star = np.zeros_like(s.lam)  # lambda*_0 = 0
    total = 0
    converged = False
    correction = 0.0
    for p in range(1 + al_iterations if s.lam.size else 1):  # a tree has no multipliers
        if p > 0:
            lam_star = augmented_lagrangian_update(lam_star, alpha, mu, Phi, Phi_dot)  # 8.126
        previous = math.inf
        for _ in range(newton_iterations):
            qd, qdd = trapezoidal_rates(q, qd_hat, qdd_hat, h)  # 8.128
            f, _, Phi_q, _, _ = penalty_residual(mech, q, qd, qdd, lam_star, alpha, mu,
                                                 Q_of(t1, q, qd), f_ext)  # 8.132
            K = quasi_tangent(mass_matrix(mech, q), Phi_q, alpha, mu, h, damping,
                              velocity_stiffness(mech, q, qd))  # 8.134
            try:
                dq = -np.linalg.solve(K, (0.25 * h * h) * f)  # 8.131
            except np.linalg.LinAlgError:
                raise NewtonDivergence(math.inf) from None
            correction = float(np.max(np.abs(dq)))
            total += 1
            if not math.isfinite(correction) or (correction > DIVERGENCE_GROWTH * previous
                                                 and correction > DIVERGENCE_SIZE):
                raise NewtonDivergence(correction)
            q = q + dq
            previous = correction
            converged = correction < newton_tol
            if converged:
                break
        if newton_iterations > 1 and correction > DIVERGENCE_SIZE:
            raise NewtonDivergence(correction)  # still far from a solution at the end
        qd, qdd = trapezoidal_rates(q, qd_hat, qdd_hat, h)  # 8.128
        Phi, _, Phi_dot, lam = closure_state(mech, q, qd, lam_star, alpha, mu)  # 8.125
    return PenaltyState(t1, q, qd, qdd, lam), StepReport(total, converged, correction, Phi, lam)


# ----------------------------------------------------------------------------------
# The step from the mechanism's frequencies
# ----------------------------------------------------------------------------------

def natural_frequencies(mech, q0=None) -> np.ndarray:
    """The natural frequencies (rad/s, ascending, shape (dof,)) of the mechanism's small
    motions under gravity about q0 (default: home), its loops closed (`assemble`).

    In minimal coordinates: omega^2 are the eigenvalues' magnitudes of M_r^-1 K_r, with
    M_r = R^T M R and K_r = R^T K R, R the velocity transformation (q' = R z') and K =
    dg/dq the gravity stiffness (central differences of the gravity torques g(q), one
    batched RIDIM call). The curvature of the loops (dR/dz g) is left out: an estimate
    of the frequencies, which is what a step size needs. A tree or an arm: R = 1.
    """
    mech = model_of(mech)
    one_degree_joints_only(mech, "the natural frequencies (for the penalty method's step)")
    n = mech.kernel.n
    q = joint_vector(q0, n, "q0", default=mech.q_home, scalar=True).copy()
    if mech.kernel.m:
        q = assemble(mech, q)
        R = velocity_transformation(mech, q).R
    else:
        R = np.eye(n)
    e = 1e-6
    E = e * np.eye(n)
    Q = np.concatenate([q + E, q - E])
    g = tree_inverse_dynamics(mech, Q, np.zeros((2 * n, n)), np.zeros((2 * n, n)))
    K = ((g[:n] - g[n:]) / (2 * e)).T  # K[:, j] = dg/dq_j
    M_r = R.T @ mass_matrix(mech, q) @ R
    K_r = R.T @ K @ R
    omega2 = np.abs(np.linalg.eigvals(np.linalg.solve(M_r, K_r)))
    return np.sort(np.sqrt(omega2))


def penalty_step(mech, q0=None) -> float:
    """A step h (s) for `penalty_simulate` from the mechanism's frequencies: h =
    STEP_TIMES_FREQUENCY / omega_max (`natural_frequencies` at q0), rounded down to 1,
    2, 2.5 or 5 times a power of ten, at most DEFAULT_H (without gravity: DEFAULT_H).
    The book's h/mu and alpha are kept; the step control of the run (`MAX_HALVINGS`)
    remains for the fast moments a start pose does not show."""
    omega = float(np.max(natural_frequencies(mech, q0), initial=0.0))
    if not omega > STEP_TIMES_FREQUENCY / DEFAULT_H:
        return DEFAULT_H
    h = STEP_TIMES_FREQUENCY / omega
    decade = 10.0 ** math.floor(math.log10(h))
    return max(decade * f for f in NICE_STEPS if decade * f <= h * (1 + 1e-12))


# ----------------------------------------------------------------------------------
# Runs
# ----------------------------------------------------------------------------------

class PenaltyStepper:
    """A run of the penalty / augmented-Lagrangian / trapezoidal scheme
    (`core.sim.driver.Stepper`): the set-up of `penalty_simulate_chunks` (same
    arguments), its state and its recorded rows."""

    def __init__(self, mech, duration: float, q0=None, qd0=None, h: float = DEFAULT_H,
                 alpha=DEFAULT_ALPHA, mu=None, al_iterations: int = 1,
                 newton_iterations: int = 2, newton_tol: float = 5e-7,
                 dt_out: float | None = None, damping=None, tau: TorqueInput = None,
                 f_ext=None, stats: dict | None = None) -> None:
        mech = model_of(mech)
        one_degree_joints_only(mech, "the penalty method")
        k = mech.kernel
        n, m = k.n, k.m
        duration = positive_number(duration, "duration")
        h = positive_number(h, "h")
        if duration / h > 1e8:
            raise ArgumentError(f"{duration / h:.3g} steps requested (duration / h); use a "
                                "larger h")
        alpha_v = (joint_vector(alpha, m, "alpha", default=np.full(m, DEFAULT_ALPHA),
                                scalar=True).copy() if m else np.zeros(0))
        if np.any(alpha_v <= 0):
            raise ArgumentError("alpha must be > 0")
        mu_v = (joint_vector(mu, m, "mu", default=np.full(m, h / DEFAULT_H_OVER_MU),
                             scalar=True).copy() if m else np.zeros(0))
        if np.any(mu_v < 0):
            raise ArgumentError("mu must be >= 0")
        al_iterations = whole_number(al_iterations, "al_iterations", 0)
        newton_iterations = whole_number(newton_iterations, "newton_iterations", 1)
        newton_tol = positive_number(newton_tol, "newton_tol", allow_zero=True)
        self.every = 1 if dt_out is None else max(1, round(positive_number(dt_out, "dt_out") / h))
        c = joint_vector(damping, n, "damping", default=np.zeros(n), scalar=True).copy()
        if np.any(c < 0):
            raise ArgumentError("damping must be >= 0")
        q0 = joint_vector(q0, n, "q0", default=mech.q_home, scalar=True).copy()
        qd0 = joint_vector(qd0, n, "qd0", default=np.zeros(n), scalar=True).copy()
        if m:
            q0 = assemble(mech, q0)
            vt = velocity_transformation(mech, q0)
            qd0 = vt.R @ qd0[list(vt.rates)]
        self.kind = RunKind.FREE_FALL if tau is None else RunKind.SIMULATION
        if callable(tau):
            def applied(t, q, qd):
                v = np.asarray(tau(t, q.copy(), qd.copy()), dtype=float)
                if v.shape != (n,):
                    raise ArgumentError(f"tau(t, q, qd) must return shape ({n},), got "
                                        f"{v.shape}")
                return v - c * qd
        else:
            tau_const = joint_vector(tau, n, "tau", default=np.zeros(n), scalar=True).copy()

            def applied(t, q, qd):
                return tau_const - c * qd

        # the consistent start: exact accelerations and cut forces (Lagrange multipliers)
        Q0 = applied(0.0, q0, qd0)
        if m:
            qdd0 = constrained_forward_dynamics(mech, q0, qd0, Q0, f_ext=f_ext)
            lam0 = cut_joint_forces(mech, q0, qd0, Q0, f_ext=f_ext)  # core sign
        else:
            qdd0 = forward_dynamics(mech, q0, qd0, Q0, f_ext=f_ext)
            lam0 = np.zeros(0)
        self.state = PenaltyState(0.0, q0, qd0, qdd0, -lam0)
        self.mech, self.n, self.m, self.h, self.t_end = mech, n, m, h, duration
        self.applied, self.damping, self.f_ext = applied, c, f_ext
        self.alpha, self.mu = alpha_v, mu_v
        self.al_iterations, self.newton_iterations = al_iterations, newton_iterations
        self.newton_tol = newton_tol
        self.stats = stats
        if stats is not None:
            stats.update(steps=0, newton_iterations=0, unconverged_steps=0,
                         max_correction=0.0, wall=0.0, halved_steps=0)
        self.rows: dict[str, list] = {f: [] for f in ("t", "q", "qd", "qdd", "tau", "cut",
                                                      "res")}
        self._record(self.state, Q0, lam0, loop_residual(mech, q0) if m else np.zeros(0))
        self.steps_total = max(1, math.ceil(duration / h - 1e-9))
        self.step = 0
        self.wall_start = _time.perf_counter()

    @property
    def t(self) -> float:
        return self.state.t

    def _record(self, s: PenaltyState, Q: np.ndarray, lam_core: np.ndarray,
                Phi: np.ndarray) -> None:
        rows = self.rows
        rows["t"].append(s.t)
        rows["q"].append(s.q)
        rows["qd"].append(s.qd)
        rows["qdd"].append(s.qdd)
        rows["tau"].append(Q)
        rows["cut"].append(lam_core)
        rows["res"].append(float(np.max(np.abs(Phi), initial=0.0)))

    def empty(self) -> Trajectory:
        return Trajectory.empty(self.n, self.kind, self.m)

    def begin_chunk(self) -> None:
        pass

    def take(self) -> Trajectory:
        rows = self.rows
        if not rows["t"]:
            return self.empty()
        q, qd = np.array(rows["q"]), np.array(rows["qd"])
        part = Trajectory(t=np.array(rows["t"]), q=q, qd=qd, qdd=np.array(rows["qdd"]),
                          tau=np.array(rows["tau"]), energy=energy(self.mech, q, qd),
                          kind=self.kind,
                          cut_forces=np.array(rows["cut"]).reshape(len(rows["t"]), self.m),
                          loop_residual=np.array(rows["res"]))
        for v in rows.values():
            v.clear()
        return part

    def _controlled_step(self, state: PenaltyState, h: float, depth: int
                         ) -> tuple[PenaltyState, StepReport]:
        """One step of `h` (module docstring), or, if its Newton iteration diverges, two
        of h/2, each halved again as needed, at most MAX_HALVINGS deep (then
        NewtonDivergence). The report sums the iterations; the closure is the end's."""
        try:
            return penalty_trapezoidal_step(
                self.mech, state, h, self.applied, alpha=self.alpha, mu=self.mu,
                damping=self.damping, al_iterations=self.al_iterations,
                newton_iterations=self.newton_iterations, newton_tol=self.newton_tol,
                f_ext=self.f_ext)
        except NewtonDivergence:
            if depth >= MAX_HALVINGS:
                raise
        if self.stats is not None:
            self.stats["halved_steps"] += 1
        middle, first = self._controlled_step(state, 0.5 * h, depth + 1)
        end, second = self._controlled_step(middle, 0.5 * h, depth + 1)
        return end, StepReport(first.iterations + second.iterations,
                               first.converged and second.converged,
                               max(first.correction, second.correction), second.Phi, second.lam)

    def advance(self, t_stop: float, deadline: float) -> bool | Failure:
        """Fixed steps h until t_stop (within 1e-12 of the run's duration), at least one."""
        stats = self.stats
        while self.step < self.steps_total and \
                self.state.t < t_stop - 1e-12 * self.t_end:
            state = self.state
            h_n = self.h if self.step < self.steps_total - 1 else self.t_end - state.t
            try:
                new, rep = self._controlled_step(state, h_n, 0)
            except NewtonDivergence as err:
                return Failure(f"Newton's iteration diverged or did not converge in the "
                               f"step from t = {state.t:.6g} s, even in steps of "
                               f"{h_n / 2 ** MAX_HALVINGS:.3g} s (last correction "
                               f"{err.correction:.3g} rad or m); use a smaller step h or "
                               "more Newton iterations", state.t)
            y = np.abs(np.concatenate([new.q, new.qd]))
            if not np.all(np.isfinite(y)) or np.max(y) > HUGE:
                y = np.nan_to_num(y, nan=np.inf)
                return Failure("the state became non-finite or huge (> 1e10): the motion "
                               "blew up", new.t, int(np.argmax(y)) % self.n + 1)
            self.step += 1
            if self.step == self.steps_total:
                new.t = self.t_end  # no round-off in the last time
            self.state = new
            if stats is not None:
                stats["steps"] += 1
                stats["newton_iterations"] += rep.iterations
                stats["unconverged_steps"] += 0 if rep.converged else 1
                stats["max_correction"] = max(stats["max_correction"], rep.correction)
            if self.step % self.every == 0 or self.step == self.steps_total:
                self._record(new, self.applied(new.t, new.q, new.qd), -rep.lam, rep.Phi)
            if _time.perf_counter() >= deadline:
                break
        if stats is not None:
            stats["wall"] = _time.perf_counter() - self.wall_start
        return self.step == self.steps_total


def penalty_simulate_chunks(mech, duration: float, q0=None, qd0=None, h: float = DEFAULT_H,
                            alpha=DEFAULT_ALPHA, mu=None, al_iterations: int = 1,
                            newton_iterations: int = 2, newton_tol: float = 5e-7,
                            dt_out: float | None = None, damping=None, tau: TorqueInput = None,
                            f_ext=None, chunk_duration: float = 0.05,
                            max_wall_per_chunk: float = 0.05, stats: dict | None = None,
                            max_wall_time: float = DEFAULT_MAX_WALL_TIME
                            ) -> Iterator[Trajectory]:
    """Simulate a mechanism (or tree, or arm) with the penalty / augmented-Lagrangian /
    trapezoidal scheme of Jalon & Bayo Sec 8.5 (module docstring), chunk by chunk.

    q0, qd0   : (n,) initial joint values / rates (default: home pose, at rest). With
                loops, q0 is closed by `assemble` (its independent joints held) and the
                rates of the dependent joints follow from the independent ones in qd0.
    h         : the step, s. A last, shorter step ends the run exactly at `duration`
                when duration is not a multiple of h. A step whose Newton iteration
                diverges is taken again in halves (step control, `MAX_HALVINGS`); the
                samples stay at the times of the steps of h.
    alpha     : penalty factor(s), scalar or (m,) per closure row (N/m, N m/rad).
    mu        : damping time constant(s) of the closure, s, scalar or (m,); default h/60.
    al_iterations : multiplier updates (8.126) per step; 0 is the pure penalty method.
    newton_iterations, newton_tol : at most this many Newton iterations per solve; stop
                early when ||dq||_inf < newton_tol (rad or m). Steps that do not reach
                the tolerance are accepted (a real-time scheme); `stats` counts them.
    dt_out    : output sample step, s. Samples are taken at the step times, every
                max(1, round(dt_out / h)) steps, plus the final time. Default: every step.
    damping   : viscous joint damping (n,) or scalar, N m s/rad / N s/m.
    tau       : None (free fall), a constant (n,) vector, or tau(t, q, qd) -> (n,), at the
                tree joints, N m / N.
    f_ext     : constant external wrenches, (6,) on the last link or (n, 6) per link.
    max_wall_time : the run's wall-time budget, s (`core.sim.driver`; default 120).
    stats     : optional dict, filled (and updated chunk by chunk) with "steps",
                "newton_iterations", "unconverged_steps" (last correction >= newton_tol),
                "max_correction" (largest last correction of a step), "wall" (s),
                "halved_steps" (steps taken again as two halves, `MAX_HALVINGS`).
    Yields Trajectory chunks of new samples (the first holds t = 0) every
    `chunk_duration` simulated seconds, or sooner when a chunk has taken
    `max_wall_per_chunk` wall seconds (a chunk may then be empty). Returns the whole
    Trajectory. `tau` is the applied force tau - damping * qd, `qdd` the trapezoidal
    acceleration, `cut_forces` (S, m) the multipliers lambda of eq. 8.125 in the sign
    of `core.algorithms.closed_chains.cut_joint_forces` (at t = 0 the exact ones), and
    `loop_residual` max |Phi| of each sample.
    Raises SimulationError (with `.result`, the samples so far) when Newton's iteration
    diverges or the state becomes non-finite or huge (> 1e10). Raises ArgumentError for
    invalid arguments.
    """
    stepper = PenaltyStepper(mech, duration, q0, qd0, h, alpha, mu, al_iterations,
                             newton_iterations, newton_tol, dt_out, damping, tau, f_ext, stats)
    return (yield from drive(stepper, positive_number(chunk_duration, "chunk_duration"),
                             max_wall_per_chunk, max_wall_time))


def penalty_simulate(mech, duration: float, q0=None, qd0=None, h: float = DEFAULT_H,
                     alpha=DEFAULT_ALPHA, mu=None, al_iterations: int = 1,
                     newton_iterations: int = 2, newton_tol: float = 5e-7,
                     dt_out: float | None = None, damping=None, tau: TorqueInput = None,
                     f_ext=None, progress: Callable[[float], None] | None = None,
                     cancel: Callable[[], bool] | None = None, stats: dict | None = None
                     ) -> Trajectory:
    """The whole run of `penalty_simulate_chunks` (same arguments).

    progress(fraction) is called after each chunk with the simulated fraction in
    [0, 1]. When cancel() returns True the run stops and SimulationCancelled is raised
    with `.result`, the samples so far.
    """
    duration = positive_number(duration, "duration")
    # chunks of 1/50 of the run; the wall-time bound of each keeps cancel() prompt
    gen = penalty_simulate_chunks(mech, duration, q0, qd0, h=h, alpha=alpha, mu=mu,
                                  al_iterations=al_iterations,
                                  newton_iterations=newton_iterations, newton_tol=newton_tol,
                                  dt_out=dt_out, damping=damping, tau=tau, f_ext=f_ext,
                                  chunk_duration=max(0.05, duration / 50), stats=stats)
    return run_chunks(gen, duration, progress, cancel)
