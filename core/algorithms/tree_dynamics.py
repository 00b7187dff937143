"""The DeNOC algorithms on a model's tree of joints (loops ignored): RIDIM, RFDSIM, the GIM
from composite bodies, articulated-body inertias and the UDU^T factors, energy.

Every function takes a model (`core.model`) and joint arrays in SI units (rad, m,
rad/s, N m, N), in the model's joint order, checked by `core.model.arguments`; the
recursions are the compiled kernels of `core.kernels.denoc`, called through
`core.kernels.dynamics`. Each call uses a workspace of its thread, so the model is
never modified and calls may run in parallel threads. For a mechanism with loops these
are the functions of its spanning tree; `core.algorithms.dynamics` and
`core.algorithms.closed_chains` keep the loops closed.

External wrenches (`f_ext`): a wrench [n_x, n_y, n_z, f_x, f_y, f_z] (N m, N) that the
environment applies to a link, moment about the origin of that link's own frame, in
the base frame; shapes as `core.model.arguments.link_wrenches`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, SingularMassMatrixError
from ..kernels.data import data_of, new_workspace, thread_workspace
from ..kernels.dynamics import (articulated_kernel, energy_batch, forward_dynamics_batch,
                                forward_dynamics_composite_kernel, inverse_dynamics_batch,
                                mass_matrix_kernel)
from ..kernels.joints import JOINT_NV, JOINT_REVOLUTE
from ..model.arguments import (finite_result, joint_rows, joint_vector, link_wrenches,
                               model_of, one_of)


def singular_error(model, q, joint: int) -> SingularMassMatrixError:
    """The error for a vanished pivot at 0-based `joint`, with the pivot's value."""
    m = model_of(model)
    abi = articulated_body_inertias(m, q, check=False)
    return SingularMassMatrixError(joint + 1, float(abi.m_hat[m.kernel.views.iv[joint]]),
                                   name=m.joint_names[joint])


def tree_inverse_dynamics(model, q, qd, qdd, f_ext=None, gravity: bool = True) -> np.ndarray:
    """RIDIM on the model's spanning tree (loops ignored): the forces at every tree
    joint that give qdd. q: (nq,) or (T, nq); qd, qdd: (nv,) or (T, nv); returns tau
    of qd's shape, N m / N. gravity=False leaves gravity out."""
    k = model_of(model).kernel
    (Q, Qd, Qdd), single = joint_rows((k.nq, k.nv), q=q, qd=qd, qdd=qdd)
    tau = np.empty_like(Qd)
    inverse_dynamics_batch(k.F, k.I, thread_workspace(k), Q, Qd, Qdd,
                           link_wrenches(f_ext, k.n, Q.shape[0]), gravity, tau)
    finite_result(tau, "the joint forces tau")
    return tau[0] if single else tau


def tree_forward_dynamics(model, q, qd, tau, method: str = "denoc", f_ext=None) -> np.ndarray:
    """RFDSIM (method "denoc": the O(n) UDU^T recursion, single states or (T, n) batches)
    or the composite-body GIM with a Cholesky solve (method "composite", O(n^3), single
    states) on the model's spanning tree. Raises SingularMassMatrixError naming the
    joint whose pivot vanished."""
    m = model_of(model)
    k = m.kernel
    n, nq, nv = k.n, k.nq, k.nv
    one_of(method, "method", ("denoc", "composite"))
    if np.ndim(q) == 2:
        if method != "denoc":
            raise ArgumentError("batches (T, n) are computed with method='denoc'")
        (Q, Qd, Tau), _ = joint_rows((nq, nv), q=q, qd=qd, tau=tau)
        out = np.empty_like(Qd)
        bad = forward_dynamics_batch(k.F, k.I, thread_workspace(k), Q, Qd, Tau,
                                     link_wrenches(f_ext, n, Q.shape[0]), out)
        if bad >= 0:
            s, j = divmod(int(bad), n)
            raise singular_error(m, Q[s], j)
        return finite_result(out, "the accelerations qdd")
    q = joint_vector(q, nq, "q")
    qd = joint_vector(qd, nv, "qd")
    tau = joint_vector(tau, nv, "tau")
    w = link_wrenches(f_ext, n, 1)
    qdd = np.empty(nv)
    ws = thread_workspace(k)
    if method == "denoc":
        bad = forward_dynamics_batch(k.F, k.I, ws, q[None], qd[None], tau[None], w, qdd[None])
    else:
        bad = forward_dynamics_composite_kernel(k.F, k.I, ws, q, qd, tau, w, np.empty((nv, nv)),
                                                qdd)
    if bad >= 0:
        raise singular_error(m, q, bad)
    return finite_result(qdd, "the accelerations qdd")


def mass_matrix(model, q) -> np.ndarray:
    """The generalized inertia matrix (GIM) I(q) of the model's tree, (nv, nv), SPD.

    Built from the composite-body mass matrices (seed 000 eqs. 23b-24). For a
    mechanism with loops this is the spanning tree's matrix; the mass matrix of the
    independent coordinates is `core.algorithms.closed_chains.reduced_mass_matrix`.
    Units: kg m^2 (revolute-revolute), kg m (mixed), kg (prismatic-prismatic).
    """
    k = model_of(model).kernel
    GIM = np.empty((k.nv, k.nv))
    mass_matrix_kernel(k.F, k.I, thread_workspace(k), joint_vector(q, k.nq, "q"), GIM)
    return finite_result(GIM, "the mass matrix")


def composite_body_inertias(model, q) -> np.ndarray:
    """Composite-body mass matrices M~_i (seed 000 eq. 23b), shape (n, 6, 6).

    M~_i is the 6x6 extended mass of link i and every link outboard of it, welded
    together, about O_i (the point on joint axis i), in the base frame.
    """
    k = model_of(model).kernel
    ws = new_workspace(k)
    mass_matrix_kernel(k.F, k.I, ws, joint_vector(q, k.nq, "q"), np.empty((k.nv, k.nv)))
    return finite_result(data_of(k, ws).M_tilde, "the composite-body inertias")


@dataclass(frozen=True)
class ArticulatedBodyInertias:
    """What the UDU^T forward dynamics computes at a configuration (seed 001 eqs. 19).

    M_hat   : (n, 6, 6) articulated-body inertias M^_i about O_i, base frame
    psi_hat : (nv, 6)   psi^_i = M^_i p_i, a row per rate (a joint of several degrees of
                        freedom: the columns of Psi^_i = M^_i P_i)
    m_hat   : (nv,)     m^_i = p_i^T M^_i p_i, the diagonal D of I = U D U^T (a joint of
                        several degrees of freedom: the d of its block pivot's
                        P_i^T Psi^_i = L diag(d) L^T)
    """

    M_hat: np.ndarray
    psi_hat: np.ndarray
    m_hat: np.ndarray


def _articulated_data(model, q):
    """(the articulated kernel's code, the workspace's fields) at q."""
    k = model_of(model).kernel
    ws = new_workspace(k)
    bad = articulated_kernel(k.F, k.I, ws, joint_vector(q, k.nq, "q"))
    D = data_of(k, ws)
    if bad < 0:
        finite_result(D.M_hat, "the articulated-body inertias")
    return int(bad), D


def articulated_body_inertias(model, q, check: bool = True) -> ArticulatedBodyInertias:
    """Articulated-body inertias M^_i, psi^_i and pivots m^_i at q (eqs. 19c-d)."""
    bad, D = _articulated_data(model, q)
    if check and bad >= 0:
        raise _singular_pivot(model_of(model), D, bad)
    return ArticulatedBodyInertias(D.M_hat, D.psi_hat, D.m_hat)


def _singular_pivot(m, D, joint: int) -> SingularMassMatrixError:
    return SingularMassMatrixError(joint + 1, float(D.m_hat[m.kernel.views.iv[joint]]),
                                   name=m.joint_names[joint])


def udu_factors(model, q) -> tuple[np.ndarray, np.ndarray]:
    """U (nv, nv) and D (nv,) with I = U diag(D) U^T (seed 001 eq. 18).

    U_kj = p_k^T A_{jk}^T psi^_j / m^_j for every ancestor k of j; D_k = m^_k: U is unit
    upper triangular in a topological order. A joint j of several degrees of freedom
    has a block pivot P_j^T Psi^_j = L_j diag(d_j) L_j^T: its diagonal block of U is L_j
    and its columns above are P_k^T A_{jk}^T Psi^_j L_j^-T / d_j.
    """
    m = model_of(model)
    bad, D = _articulated_data(m, q)
    if bad >= 0:
        raise _singular_pivot(m, D, bad)
    mv = m.kernel.views
    U = np.eye(m.nv)
    for j in range(m.n):
        b, nj = int(mv.iv[j]), _rates(mv, j)
        Psi = D.psi_hat[b:b + nj].T  # (6, nj)
        L = np.tril(D.L_hat[j, :nj, :nj], -1) + np.eye(nj) if nj > 1 else np.eye(1)
        U[b:b + nj, b:b + nj] = L
        Y = np.linalg.solve(L, Psi.T).T / D.m_hat[b:b + nj]  # Psi L^-T diag(1/d)
        c, a = j, int(mv.parent[j])
        while a >= 0:
            Y = twist_propagation_matrix(D.A[c]).T @ Y
            ba, na = int(mv.iv[a]), _rates(mv, a)
            U[ba:ba + na, b:b + nj] = _P(mv, D, a).T @ Y
            c, a = a, int(mv.parent[a])
    return U, D.m_hat.copy()


def _rates(mv, k: int) -> int:
    return JOINT_NV[int(mv.kind[k])]


def _P(mv, D, k: int) -> np.ndarray:
    """P_k, (6, nv_k), base frame, from the workspace's fields."""
    if _rates(mv, k) > 1:
        b = int(mv.iv[k])
        return D.S[b:b + _rates(mv, k)].T
    p = np.zeros((6, 1))
    start = 0 if int(mv.kind[k]) == JOINT_REVOLUTE else 3
    p[start:start + 3, 0] = D.e[k]
    return p


def twist_propagation_matrix(a: np.ndarray) -> np.ndarray:
    """The 6x6 twist-propagation matrix [[1, 0], [a x 1, 1]] (seed 001 eq. 11d)."""
    A = np.eye(6)
    A[3:, :3] = [[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]
    return A


def convective_torques(model, q, qd) -> np.ndarray:
    """h = C(q, qd) qd, the Coriolis and centrifugal joint forces of the tree
    (seed 001 eq. 16a), (nv,)."""
    z = np.zeros(model_of(model).nv)
    return tree_inverse_dynamics(model, q, qd, z, gravity=False)


def gravity_torques(model, q) -> np.ndarray:
    """Joint forces that hold the tree still against gravity at q, shape (nv,)."""
    z = np.zeros(model_of(model).nv)
    return tree_inverse_dynamics(model, q, z, z)


def energy(model, q, qd) -> np.ndarray:
    """Kinetic, potential and total energy (J).

    q, qd: shapes (nq,), (nv,) -> returns array [T, V, T + V] of shape (3,);
           shapes (S, nq), (S, nv) -> returns shape (S, 3).
    Potential energy is -sum m_i g . c_i, zero at the base origin.
    """
    k = model_of(model).kernel
    (Q, Qd), single = joint_rows((k.nq, k.nv), q=q, qd=qd)
    out = np.empty((Q.shape[0], 2))
    energy_batch(k.F, k.I, thread_workspace(k), Q, Qd, out)
    res = finite_result(np.column_stack([out, out.sum(axis=1)]), "the energy")
    return res[0] if single else res
