"""Dynamics of closed chains: constrained forward dynamics (two methods), the cut-joint
forces, and the inverse dynamics of Saha's subsystem recursion (seed 001 Sec 4).

Notation: q (nq,) are the joint values of the spanning tree and qd, qdd, tau (nv,) its
rates, accelerations and forces (nq = nv = n for revolute and prismatic joints; a
spherical or free joint has a quaternion in q, `core.kernels.joints`), J (m, nv) the
loop Jacobian and
gamma = J' qd (`core.algorithms.loops`), lambda (m,) the cut-joint forces along the
closure rows (`constraint_row_labels`). The tree obeys

    M qdd + h = tau + J^T lambda,        J qdd + gamma = 0.          (Jalon 8.114)

Forward dynamics:
  method "denoc"     - the Lagrange-multiplier system solved with the O(n) UDU^T
                       factors (`core.kernels.constrained`), no dense M;
  method "composite" - the same system with the composite-body GIM, dense KKT solve;
  method "minimal"   - minimal coordinates (velocity transformation, Jalon Sec 8.3 and
                       Saha's N^T M N): qd = R zd, qdd = R zdd + S_c,
                       (R^T M R) zdd = R^T (tau - h - M S_c).        (Jalon 8.119-8.120)
                       The independent joints z are the mechanism's; where they stop
                       fixing the motion (a type-II singularity) it raises
                       SingularConfigurationError instead of returning NaN.

Inverse dynamics (`closed_chain_inverse_dynamics`): given a motion that keeps the loops
closed, RIDIM of the tree gives tau* = M qdd + h (the inertia and gravity wrenches
projected on every tree joint), and each subsystem j (a branch of the tree on the base)
must satisfy (Saha eqs. 40-42)

    tau*_j = S_j^T tau_a + sum over the loops k touching j of J_kj^T lambda_k.

A subsystem is determinate when its unknowns (its actuator forces and the not yet
known multipliers of its loops) are as many as its joints; it is solved, its
multipliers are substituted into the neighbouring subsystems, and so on (the subsystem
recursion). When no subsystem is determinate the remaining equations are solved
together (the system approach, eqs. 43-46), by least squares with minimum norm for
redundant loops. Both give the same forces.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, MechanismError, SingularConfigurationError
from ..kernels.data import thread_workspace
from ..kernels.dynamics import constrained_batch
from ..model.arguments import (finite_result, joint_rows, joint_vector, link_wrenches,
                               model_of, one_of)
from ..model.closure import RANK_TOL, numerical_rank
from .loops import assemble, constraint_row_labels, loop_acceleration_term, loop_jacobian
from .tree_dynamics import mass_matrix, singular_error, tree_inverse_dynamics


# ----------------------------------------------------------------------------------
# Forward dynamics
# ----------------------------------------------------------------------------------

def kkt_forward_dynamics(model, q, qd, tau, f_ext=None):
    """(qdd, lam): accelerations and cut-joint forces by the UDU^T Lagrange-multiplier
    method, for single states (q (nq,), qd, tau (nv,)) or batches (T rows of each)."""
    k = model_of(model).kernel
    (Q, Qd, Tau), single = joint_rows((k.nq, k.nv), q=q, qd=qd, tau=tau)
    qdd = np.empty_like(Qd)
    lam = np.empty((Q.shape[0], k.m))
    bad = constrained_batch(k.F, k.I, thread_workspace(k), Q, Qd, Tau,
                            link_wrenches(f_ext, k.n, Q.shape[0]), qdd, lam)
    if bad >= 0:
        s, code = divmod(int(bad), k.n + k.m)
        raise constrained_failure(model, Q[s], code)
    finite_result(qdd, "the accelerations qdd")
    finite_result(lam, "the cut-joint forces")
    return (qdd[0], lam[0]) if single else (qdd, lam)


def constrained_failure(model, q, code: int) -> Exception:
    """The error for a code of the constrained forward dynamics kernel at pose q."""
    k = model_of(model).kernel
    if code < k.n:
        return singular_error(model, q, code)
    label = constraint_row_labels(model)[code - k.n]
    return SingularConfigurationError(
        f"loop row {label!r} loses rank at this pose: no acceleration keeps the loops "
        "closed (the loop is at a singular configuration)", q=np.array(q, dtype=float))


def constrained_forward_dynamics(model, q, qd, tau, method: str = "denoc", f_ext=None
                                 ) -> np.ndarray:
    """Accelerations qdd (shape of q) that keep the loops closed under the tree joint
    forces tau; methods in the module docstring ("minimal": single states only)."""
    method = one_of(method, "method", ("denoc", "composite", "minimal"))
    if method == "denoc":
        return kkt_forward_dynamics(model, q, qd, tau, f_ext)[0]
    if method == "composite":
        qdd = _kkt_dense(model, q, qd, tau, f_ext)[0]
    else:
        qdd = minimal_coordinate_forward_dynamics(model, q, qd, tau, f_ext)
    return finite_result(qdd, "the accelerations qdd")


def _kkt_dense(model, q, qd, tau, f_ext):
    """The same Lagrange-multiplier system with the composite-body GIM (dense)."""
    k = model_of(model).kernel
    q = joint_vector(q, k.nq, "q")
    qd = joint_vector(qd, k.nv, "qd")
    tau = joint_vector(tau, k.nv, "tau")
    M = mass_matrix(model, q)
    h = tree_inverse_dynamics(model, q, qd, np.zeros(k.nv), f_ext)  # bias forces, gravity in
    J = loop_jacobian(model, q)
    gamma = loop_acceleration_term(model, q, qd)
    m = J.shape[0]
    K = np.block([[M, J.T], [J, np.zeros((m, m))]])
    sol = np.linalg.lstsq(K, np.concatenate([tau - h, -gamma]), rcond=1e-12)[0]
    return sol[:k.nv], -sol[k.nv:]


def cut_joint_forces(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """Lagrange multipliers lambda (m,) (or (T, m)) of the forward dynamics under tau:
    the force (N) or moment (N m) of each cut joint along its closure row, on the
    loop's second link. Rows: `core.algorithms.loops.constraint_row_labels`."""
    return kkt_forward_dynamics(model, q, qd, tau, f_ext)[1]


# ----------------------------------------------------------------------------------
# Velocity transformation (minimal coordinates)
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class VelocityTransformation:
    """qd = R zd and qdd = R zdd + S_c at one state (Jalon eqs. 8.36, 8.119).

    R   : (nv, nz) column k = the tree joint rates of a unit rate k of the independent
          joints (one column per rate: a spherical joint has three)
    S_c : (nv,)    the tree accelerations at zdd = 0 (from gamma)
    independent : (ni,) the independent joints (joint indices)
    rates : (nz,) their rates: the rows of qd that zd holds (`Model.rates_of`)
    """

    R: np.ndarray
    S_c: np.ndarray
    independent: tuple[int, ...]
    rates: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.rates:  # one-degree-of-freedom joints: the joints' own indices
            object.__setattr__(self, "rates", tuple(self.independent))


def velocity_transformation(model, q, qd=None, independent=None) -> VelocityTransformation:
    """R and S_c by coordinate partitioning: J_d qd_d = -J_z zd (least squares where loop
    rows are redundant). `independent`: joint indices (default: the model's). Raises
    SingularConfigurationError when the independent joints no longer fix the motion
    (J_d loses column rank: a type-II singularity)."""
    m = model_of(model)
    k = m.kernel
    nv = k.nv
    q = joint_vector(q, k.nq, "q")
    joints = sorted(independent if independent is not None else m.independent)
    z = m.rates_of(joints)  # the independent rates
    d = [r for r in range(nv) if r not in set(z)]
    J = loop_jacobian(model, q)
    R = np.zeros((nv, len(z)))
    R[z, range(len(z))] = 1.0
    S_c = np.zeros(nv)
    if not d:
        return VelocityTransformation(R, S_c, tuple(joints), tuple(z))
    Jd, Jz = J[:, d], J[:, z]
    s = np.linalg.svd(Jd, compute_uv=False)
    if s.size == 0 or s[-1] <= RANK_TOL * max(1.0, s[0]) or len(d) > J.shape[0]:
        cond = np.inf if s.size == 0 or s[-1] == 0 else s[0] / s[-1]
        dependent = sorted({int(j) for j in m.rate_joint[d]})
        raise SingularConfigurationError(
            f"the independent joints ({', '.join(_names(model, joints))}) no longer fix "
            f"the motion of {', '.join(_names(model, dependent))} (loop Jacobian of the "
            f"dependent joints has condition number {cond:.3g}): a parallel (type-II) "
            "singularity", q=q.copy())
    pinv = np.linalg.pinv(Jd, rcond=RANK_TOL)
    R[d] = -pinv @ Jz
    if qd is not None:
        gamma = loop_acceleration_term(model, q, joint_vector(qd, nv, "qd"))
        S_c[d] = -pinv @ gamma
    return VelocityTransformation(R, S_c, tuple(joints), tuple(z))


def _names(model, joints) -> list[str]:
    names = model_of(model).joint_names
    return [repr(names[j]) for j in joints]


def reduced_mass_matrix(model, q) -> np.ndarray:
    """R^T M R (ni, ni): the mass matrix of the independent coordinates (Saha's I of
    eq. 33, Jalon's eq. 8.120), symmetric positive definite away from singularities."""
    vt = velocity_transformation(model, q)
    return vt.R.T @ mass_matrix(model, q) @ vt.R


def minimal_coordinate_forward_dynamics(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """qdd (nv,) from (R^T M R) zdd = R^T (tau - h - M S_c), qdd = R zdd + S_c."""
    k = model_of(model).kernel
    q = joint_vector(q, k.nq, "q")
    qd = joint_vector(qd, k.nv, "qd")
    tau = joint_vector(tau, k.nv, "tau")
    vt = velocity_transformation(model, q, qd)
    M = mass_matrix(model, q)
    h = tree_inverse_dynamics(model, q, qd, np.zeros(k.nv), f_ext)
    Mr = vt.R.T @ M @ vt.R
    zdd = np.linalg.solve(Mr, vt.R.T @ (tau - h - M @ vt.S_c))
    return vt.R @ zdd + vt.S_c


# ----------------------------------------------------------------------------------
# Inverse dynamics: Saha's subsystem recursion (seed 001 Sec 4)
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Subsystem:
    """One branch of the spanning tree on the base (Saha Sec 4.2).

    joints   : tree joints of the subsystem (joint indices)
    unknowns : what its equations are solved for, as labels ("tau 'crank'", "C x")
    determinate : whether it was solved on its own (else: by the system approach)
    order    : 1-based position in the solution sequence (the system approach shares
               one position for all the subsystems it solves together)
    """

    joints: tuple[int, ...]
    unknowns: tuple[str, ...]
    determinate: bool
    order: int


@dataclass(frozen=True)
class ClosedChainInverseDynamics:
    """tau (nv,): forces at the actuated joints (zeros at passive joints), N m / N;
    lam (m,): the cut-joint forces (N / N m) along the closure rows;
    subsystems: how they were solved; method: "subsystem" or "system"."""

    tau: np.ndarray
    lam: np.ndarray
    subsystems: tuple[Subsystem, ...]
    method: str


def subsystems_of(model) -> list[tuple[int, ...]]:
    """The branches of the spanning tree on the base: joints grouped by root joint."""
    parent = list(model_of(model).kernel.views.parent)
    root = []
    for j in range(len(parent)):
        r = j
        while parent[r] >= 0:
            r = parent[r]
        root.append(r)
    groups: dict[int, list[int]] = {}
    for j, r in enumerate(root):
        groups.setdefault(r, []).append(j)
    return [tuple(g) for _, g in sorted(groups.items())]


def _row_owner(model) -> list[set[int]]:
    """For every closure row, the subsystems (indices) whose joints it involves."""
    k = model_of(model).kernel
    v = k.views
    subs = subsystems_of(model)
    sub_of = {}
    for i, g in enumerate(subs):
        for j in g:
            sub_of[j] = i
    owners = []
    for r in range(k.m):
        l = int(v.row_loop[r])
        owners.append({sub_of[int(b)] for b in v.loop_body[l] if b >= 0})
    return owners


def _actuator_equations(g: list[int], act: list[int], open_rows: list[int],
                        known_rows: set[int], J: np.ndarray, tau_star: np.ndarray,
                        lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The equations of rates g, eqs. 41-42 (one subsystem) or 43-46 (the rest at once).

    [S^T  J_open^T] [tau_a; lam_open] = tau*_g - J_known^T lam_known: A is
    (len(g), len(act) + len(open_rows)), its first columns pick the actuated rates act
    (S^T), the others hold the transposed rows of the loop Jacobian J still unknown; b
    subtracts the cut-joint forces of the rows already solved (lam at known_rows).
    """
    A = np.zeros((len(g), len(act) + len(open_rows)))
    for c, j in enumerate(act):
        A[g.index(j), c] = 1.0
    if open_rows:
        A[:, len(act):] = J[np.ix_(open_rows, g)].T
    known = sorted(known_rows)
    b = tau_star[g] - (J[np.ix_(known, g)].T @ lam[known] if known else 0.0)
    return A, b


def closed_chain_inverse_dynamics(model, q, qd, qdd, f_ext=None, method: str = "subsystem"
                                  ) -> ClosedChainInverseDynamics:
    """Actuator forces and cut-joint forces of a closed chain along a consistent motion.

    q (nq,), qd, qdd (nv,): a state of the tree that keeps the loops closed (J qd = 0,
    J qdd + gamma = 0; see `closed_chain_motion`). method "subsystem" (Saha's
    recursion, falling back to the system approach for what stays indeterminate) or
    "system" (all at once). Raises MechanismError if fewer joints are actuated than the
    mechanism has degrees of freedom.
    """
    model = model_of(model)
    k = model.kernel
    nv, m = k.nv, k.m
    q = joint_vector(q, k.nq, "q")
    qd = joint_vector(qd, nv, "qd")
    qdd = joint_vector(qdd, nv, "qdd")
    one_of(method, "method", ("subsystem", "system"))
    # the equations are per rate: a joint of several degrees of freedom has several
    actuated = model.rates_of(model.actuated)
    label = _rate_labels(model)
    dof = model.dof
    if len(actuated) < dof:
        raise MechanismError(f"inverse dynamics needs at least as many actuated joints as "
                             f"degrees of freedom ({dof}); {len(actuated)} are actuated",
                             field="actuated")
    # RIDIM of the tree: tau* = M qdd + h - (known external wrenches), eq. 40's left side
    tau_star = tree_inverse_dynamics(model, q, qd, qdd, f_ext)
    J = loop_jacobian(model, q)
    rows = constraint_row_labels(model) if m else []
    subs = subsystems_of(model)
    owners = _row_owner(model)
    tau = np.zeros(nv)
    lam = np.zeros(m)
    known_rows: set[int] = set()
    solved: list[Subsystem | None] = [None] * len(subs)
    order = 0
    progress = method == "subsystem"
    while progress:
        progress = False
        for i, joints in enumerate(subs):
            if solved[i] is not None:
                continue
            g = model.rates_of(joints)
            act = [j for j in g if j in actuated]
            open_rows = [r for r in range(m) if i in owners[r] and r not in known_rows]
            # drop rows that do not touch this subsystem's joints (e.g. structurally zero)
            open_rows = [r for r in open_rows if np.any(J[r, g])]
            if len(act) + len(open_rows) != len(g):
                continue
            # eqs. 41-42 for subsystem i
            A, b = _actuator_equations(g, act, open_rows, known_rows, J, tau_star, lam)
            if numerical_rank(A) < len(g):
                continue  # singular here: leave it to the system approach
            x = np.linalg.solve(A, b)
            tau[act] = x[:len(act)]
            lam[open_rows] = x[len(act):]
            known_rows.update(open_rows)
            order += 1
            solved[i] = Subsystem(joints, tuple([label[j] for j in act]
                                                + [rows[r] for r in open_rows]), True, order)
            progress = True
    remaining = [i for i in range(len(subs)) if solved[i] is None]
    if remaining:
        # the system approach, eqs. 43-46: every remaining equation at once
        g = [r for i in remaining for r in model.rates_of(subs[i])]
        act = [j for j in g if j in actuated]
        open_rows = [r for r in range(m) if r not in known_rows]
        A, b = _actuator_equations(g, act, open_rows, known_rows, J, tau_star, lam)
        x = np.linalg.lstsq(A, b, rcond=1e-12)[0]  # minimum norm for redundant rows
        tau[act] = x[:len(act)]
        lam[open_rows] = x[len(act):]
        order += 1
        for i in remaining:
            joints = subs[i]
            solved[i] = Subsystem(joints, tuple([label[j] for j in model.rates_of(joints)
                                                 if j in actuated]
                                                + [rows[r] for r in open_rows
                                                   if i in owners[r]]), False, order)
    finite_result(tau, "the joint forces tau")
    finite_result(lam, "the cut-joint forces")
    return ClosedChainInverseDynamics(tau, lam, tuple(solved), method)


def _rate_labels(model) -> list[str]:
    """"tau 'crank'" per rate; "tau 'hip'[2]" for the rates of a joint of several."""
    out = []
    for name, kind in zip(model.joint_names, model.joint_types):
        out += [f"tau {name!r}"] if kind.nv == 1 else \
            [f"tau {name!r}[{c + 1}]" for c in range(kind.nv)]
    return out


# ----------------------------------------------------------------------------------
# Consistent motions: drive some joints, solve the others (position, velocity and
# acceleration analysis)
# ----------------------------------------------------------------------------------

def closed_chain_motion(model, q_guess, z, zd, zdd, driven=None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tree joint values, rates and accelerations ((S, nq), (S, nv), (S, nv)) of a closed
    chain whose driven joints (default: the actuated ones) follow z, zd, zdd (each
    (S, nd), nd the driven joints' values).

    Position: `assemble` from the previous sample (the first from q_guess), so the
    branch of the guess is followed; velocity and acceleration: qd = R zd,
    qdd = R zdd + S_c with the driven joints as independent coordinates.
    Raises LoopClosureError or SingularConfigurationError (with the sample's pose).
    """
    model = model_of(model)
    k = model.kernel
    driven = sorted(model.actuated if driven is None else driven)
    for j in driven:
        if model.joint_types[j].nq != model.joint_types[j].nv:
            raise ArgumentError(f"driven joint {model.joint_names[j]!r} is "
                                f"{model.joint_types[j].value}: a motion drives joints whose "
                                "values are their own coordinates (revolute, prismatic, "
                                "universal)")
    values = model.values_of(driven)
    (z, zd, zdd), _ = joint_rows(len(values), z=z, zd=zd, zdd=zdd)
    S = z.shape[0]
    Q, Qd, Qdd = np.empty((S, k.nq)), np.empty((S, k.nv)), np.empty((S, k.nv))
    guess = joint_vector(q_guess, k.nq, "q_guess").copy()
    branch = None  # from the second sample on, the branch of the last closed pose
    for s in range(S):
        guess[values] = z[s]
        q = assemble(model, guess, independent=driven, branch=branch)
        vt = velocity_transformation(model, q, independent=driven)
        qd = vt.R @ zd[s]
        vt = velocity_transformation(model, q, qd, independent=driven)
        Q[s], Qd[s], Qdd[s] = q, qd, vt.R @ zdd[s] + vt.S_c
        branch, guess = q, q.copy()
    finite_result(Qd, "the joint rates qd")
    return Q, Qd, finite_result(Qdd, "the accelerations qdd")
