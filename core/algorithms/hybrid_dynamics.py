"""Hybrid dynamics of a floating system: the joints' accelerations are given, the free
bodies' forces are (zero: nothing drives a floating base); find the free bodies'
accelerations and the joint torques.

Split the rates into the free joints' (U, six per free body) and the others (D), and
write the equations of motion M qdd + h(q, qd) = tau as blocks:

    [M_UU  M_UD] [qdd_U]   [h_U]   [tau_U = 0]
    [M_DU  M_DD] [qdd_D] + [h_D] = [tau_D    ]

Algorithm (Featherstone's hybrid dynamics, RBDA Sec. 9.2, solved by its blocks):

1. b = ID(q, qd, [0; qdd_D])_U  =  M_UD qdd_D + h_U   (inverse dynamics, base held)
2. M_UU, the free bodies' block of the mass matrix (composite rigid bodies)
3. qdd_U = -M_UU^-1 b                                 (first block row, tau_U = 0)
4. tau = ID(q, qd, [qdd_U; qdd_D])                    (tau_U = 0 to round-off)

M_UU is the composite inertia of everything a free body carries, positive definite.
Its tests compare with the full forward dynamics given step 4's torques.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, SingularConfigurationError
from ..kernels.data import thread_workspace
from ..kernels.elements import with_element_wrenches
from ..model.arguments import finite_result, joint_vector, link_wrenches, model_of
from ..model.closure import RANK_TOL
from ..model.parts import JointType
from .dynamics import inverse_dynamics
from .loops import loop_acceleration_term, loop_jacobian
from .tree_dynamics import mass_matrix, tree_inverse_dynamics

__all__ = ["HybridDynamics", "hybrid_dynamics", "free_rates", "ConstrainedHybridDynamics",
           "constrained_hybrid_dynamics", "with_force_elements", "least_norm_solution"]


@dataclass(frozen=True)
class HybridDynamics:
    """qdd (nv,): the given joint accelerations with the free bodies' in their rows, in
    the rates' units (a free body's [dw; dv], body frame); tau (nv,): the joint torques /
    forces that make the motion, zero at the free joints."""

    qdd: np.ndarray
    tau: np.ndarray


def free_rates(model) -> list[int]:
    """The rate indices of the model's free joints (six each, in joint order)."""
    m = model_of(model)
    return m.rates_of([j for j, kind in enumerate(m.joint_types) if kind is JointType.FREE])


def hybrid_dynamics(model, q, qd, qdd, f_ext=None) -> HybridDynamics:
    """The motion of the free bodies when the other joints move with accelerations qdd.

    q (nq,), qd (nv,): the state; qdd (nv,): the joints' accelerations (entries of the
    free joints' rates are ignored). f_ext: external wrenches as `inverse_dynamics`
    takes them. A model without free joints gets qdd back and its inverse dynamics.
    ArgumentError for a model with loops (its joints are not independent):
    `constrained_hybrid_dynamics` takes them.
    """
    m = model_of(model)
    if m.loops:
        raise ArgumentError("hybrid dynamics takes a tree: this model has loops")
    qdd = joint_vector(qdd, m.nv, "qdd").copy()
    U = free_rates(m)
    if U:
        qdd[U] = 0.0
        b = inverse_dynamics(m, q, qd, qdd, f_ext=f_ext)[U]       # step 1
        M_UU = mass_matrix(m, q)[np.ix_(U, U)]                    # step 2
        qdd[U] = -np.linalg.solve(M_UU, b)                        # step 3
    tau = inverse_dynamics(m, q, qd, qdd, f_ext=f_ext)            # step 4
    if U:
        tau[U] = 0.0  # zero by construction; round-off removed
    return HybridDynamics(qdd, tau)


@dataclass(frozen=True)
class ConstrainedHybridDynamics:
    """qdd (nv,): every rate's acceleration (the driven joints' as given); tau (nv,): the
    driven joints' forces (N m / N), zero elsewhere; lam (m,): the cut-joint forces along
    the closure rows (`core.algorithms.loops.constraint_row_labels`), N / N m."""

    qdd: np.ndarray
    tau: np.ndarray
    lam: np.ndarray


def constrained_hybrid_dynamics(model, q, qd, qdd, driven, f_ext=None
                                ) -> ConstrainedHybridDynamics:
    """Hybrid dynamics with loops: the driven joints move with the accelerations qdd, the
    other joints and the free bodies follow with no force on them, the loops closed.

    Featherstone's hybrid dynamics (RBDA Sec. 9.2) whose joints are tied by the loops'
    Lagrange multipliers and whose driven joints are held by Jalon & Bayo's driving
    constraints (rheonomic constraints S_D^T qdd = qdd_D, Sec. 3.3): with M (nv, nv) the
    mass matrix, h = ID(q, qd, 0) the bias, gravity and force elements, J (m, nv) the
    loop Jacobian, gamma = J' qd and S_D (nv, nD) the driven rates' selector,

        [M      -J^T  -S_D] [qdd   ]   [-h     ]
        [J       0     0  ] [lambda] = [-gamma ]        (M qdd + h = S_D tau_D + J^T lambda)
        [S_D^T   0     0  ] [tau_D ]   [qdd_D  ]

    solved by least squares (redundant loop rows give a family of lambda, not of qdd).
    q (nq,), qd (nv,): the state (its loops closed); qdd (nv,): the driven joints'
    accelerations in their rows (the others are ignored); driven: joint indices (a
    spherical joint's three rates are all driven). f_ext: as `inverse_dynamics` takes it
    (rigid bodies, as there: a run adds the force elements, `with_force_elements`).
    With no loop and every non-free joint driven this is `hybrid_dynamics`; with no
    driven joint, the constrained forward dynamics at zero force (a free fall).
    Raises SingularConfigurationError when the loops forbid the driven accelerations
    (the driven joints are not independent coordinates at this pose).
    """
    m = model_of(model)
    nv = m.nv
    q = joint_vector(q, m.nq, "q")
    qd = joint_vector(qd, nv, "qd")
    qdd = joint_vector(qdd, nv, "qdd")
    D = m.rates_of(sorted(driven))
    M = mass_matrix(m, q)
    h = tree_inverse_dynamics(m, q, qd, np.zeros(nv), f_ext)
    if m.loops:
        J, gamma = loop_jacobian(m, q), loop_acceleration_term(m, q, qd)
        U_r, J, gamma = _independent_rows(J, gamma, nv - m.dof)
    else:
        J, gamma = np.zeros((0, nv)), np.zeros(0)
        U_r = np.zeros((0, 0))
    mm, nD = J.shape[0], len(D)
    S_D = np.zeros((nv, nD))
    S_D[D, np.arange(nD)] = 1.0
    K = np.block([[M, -J.T, -S_D],
                  [J, np.zeros((mm, mm + nD))],
                  [S_D.T, np.zeros((nD, mm + nD))]])
    b = np.concatenate([-h, -gamma, qdd[D]])
    x = np.linalg.lstsq(K, b, rcond=RANK_TOL)[0]
    # M is positive definite: qdd is unique when the constraints hold; they fail to when
    # the driven joints are not independent of the loops (a drive the loops forbid)
    miss = K[nv:] @ x - b[nv:]
    if miss.size and np.abs(miss).max() > 1e-8 * max(1.0, np.abs(b[nv:]).max()):
        raise SingularConfigurationError(
            "the driven joints and the loops do not fix the motion here: the loops forbid "
            "the driven joints' accelerations (they are not independent coordinates of "
            "this mechanism at this pose)", q=q.copy())
    tau = np.zeros(nv)
    tau[D] = x[nv + mm:]
    acc = x[:nv].copy()
    acc[D] = qdd[D]  # as given (the solve's round-off removed)
    return ConstrainedHybridDynamics(finite_result(acc, "the accelerations qdd"),
                                     finite_result(tau, "the joint forces tau"),
                                     finite_result(U_r @ x[nv:nv + mm], "the cut-joint forces"))


def least_norm_solution(A: np.ndarray, b: np.ndarray, rank: int) -> np.ndarray:
    """The least-norm x (n,) of A x = b (A (m, n), b (m,)) over A's `rank` largest
    singular values (x = V_r S_r^-1 U_r^T b): with a mechanism's dependent loop rows, a
    state off the loops makes them look independent (singular values ~ the distance off
    them), and a pseudo-inverse at round-off's cutoff would divide by those."""
    U, S, Vt = np.linalg.svd(A, full_matrices=False)
    r = min(rank, S.size)
    return Vt[:r].T @ ((U[:, :r].T @ b) / S[:r])


def _independent_rows(J: np.ndarray, gamma: np.ndarray, r: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The loops' acceleration constraints J qdd + gamma = 0 (J (m, nv), gamma (m,)) as r
    independent rows, r = nv - dof the loops' rank (the mechanism's, from its assembly):
    with J = U S V^T, U_r^T (J qdd + gamma) = 0, i.e. (U_r (m, r), S_r V_r^T (r, nv),
    U_r^T gamma (r,)); the cut-joint forces are U_r lambda_r (the least-norm family
    member, as a least-squares solve of every row gives). A mechanism with dependent
    rows (the truck's planar leaves: 4 of 44) has them dependent only on its loops; a run
    between two projections is ~1e-8 off them, where the dependent rows' singular values
    (~1e-8) would pass a rank tolerance and stiffen the motion into tiny steps."""
    if r >= J.shape[0]:
        return np.eye(J.shape[0]), J, gamma
    U, S, Vt = np.linalg.svd(J, full_matrices=False)
    U_r = U[:, :r]
    return U_r, S[:r, None] * Vt[:r], U_r.T @ gamma


def with_force_elements(model, q, qd, f_ext=None) -> np.ndarray:
    """The link wrenches (n, 6) of f_ext (as `inverse_dynamics` takes it, one state) plus
    the model's force elements' (springs, dampers, tyres: `core.kernels.elements`) at
    (q (nq,), qd (nv,)): what a run adds to the rigid-body functions, which leave the
    elements out. Base frame, moment about each link frame's origin (N m, N)."""
    m = model_of(model)
    k = m.kernel
    q = joint_vector(q, k.nq, "q")
    qd = joint_vector(qd, k.nv, "qd")
    W = link_wrenches(f_ext, k.n, 1)[0].copy()
    out = np.empty_like(W)
    with_element_wrenches(k.F, k.I, thread_workspace(k), q, qd, W, out)
    return out
