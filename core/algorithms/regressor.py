"""The joint-torque regressor: tau = Y(q, qd, qdd) pi, linear in the model's parameters.

Parameter vector pi (p = 10 n + 3 n), per link k (its own frame, origin P_k = the link
frame's origin `ol`, rotation R_k = `Rl`):

    pi_k = [m, m c_x, m c_y, m c_z, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz]

with c the mass centre and I the inertia about P_k (not about the mass centre:
I_P = I_C + m (c.c 1 - c c^T), the parallel-axis theorem), both in the link's own frame;
then per joint j: [c_v, c_c, r^2 I_r] (viscous and Coulomb friction, reflected rotor
inertia: `core.kernels.drives`).

Newton-Euler for link k about P_k, base frame, from the twist and twist rate the DeNOC
recursion leaves at O_k (t_k = [w; v_O], tdot_k = [w'; a_O - g], gravity as the base's
acceleration, seed 001 eq. 17), with r = P_k - O_k, a_P = a_O - g + w' x r + w x (w x r),
h = R_k m c, w_l = R_k^T w, w'_l = R_k^T w':

    f_k = m a_P + (w' x + w x w x) h
    n_k = R_k (L(w'_l) + [w_l x] L(w_l)) I_vec - a_P x h ... as h x a_P

where L(u) I_vec = I u for I_vec = (xx, yy, zz, xy, xz, yz). Joint j carries the
wrenches of every link k it supports: tau_j += e_j . (n_k + (P_k - O_j) x f_k) for a
revolute joint, e_j . f_k for a prismatic one. The friction and rotor columns are
qd_j, tanh(qd_j / FRICTION_BAND) and qdd_j in row j.
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..kernels.data import new_workspace
from ..kernels.drives import DRIVE_ARMATURE, DRIVE_COULOMB, DRIVE_VISCOUS, FRICTION_BAND
from ..kernels.dynamics import regressor_kinematics_batch
from ..model.arguments import finite_result, joint_rows, model_of

#: Parameters per link and per joint.
LINK_PARAMETERS = 10
JOINT_PARAMETERS = 3


def parameter_names(model) -> list[str]:
    """The names of pi's entries: 'm upper', 'mcx upper', ..., 'Ixx upper', ..., then
    'fv shoulder', 'fc shoulder', 'Ia shoulder'."""
    m = model_of(model)
    link = ("m", "mcx", "mcy", "mcz", "Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")
    joint = ("fv", "fc", "Ia")
    return ([f"{p} {name}" for name in m.joint_names for p in link]
            + [f"{p} {name}" for name in m.joint_names for p in joint])


def parameter_vector(model) -> np.ndarray:
    """The model's own pi (module docstring), (13 n,)."""
    m = model_of(model)
    out = []
    for link in m.links:
        c = np.array(link.com)
        I_P = link.inertia_matrix + link.mass * (c @ c * np.eye(3) - np.outer(c, c))
        out += [link.mass, *(link.mass * c), I_P[0, 0], I_P[1, 1], I_P[2, 2], I_P[0, 1],
                I_P[0, 2], I_P[1, 2]]
    k = m.kernel
    drive = k.views.drive if k.nd else np.zeros((m.n, 4))
    for j in range(m.n):
        out += [drive[j, DRIVE_VISCOUS], drive[j, DRIVE_COULOMB], drive[j, DRIVE_ARMATURE]]
    return np.array(out, dtype=float)


def _cross(a):
    """[a x] for a (..., 3): (..., 3, 3)."""
    z = np.zeros(a.shape[:-1])
    return np.stack([np.stack([z, -a[..., 2], a[..., 1]], -1),
                     np.stack([a[..., 2], z, -a[..., 0]], -1),
                     np.stack([-a[..., 1], a[..., 0], z], -1)], -2)


def _L(u):
    """L(u) for u (..., 3): (..., 3, 6), L(u) I_vec = I u."""
    z = np.zeros(u.shape[:-1])
    x, y, w = u[..., 0], u[..., 1], u[..., 2]
    return np.stack([np.stack([x, z, z, y, w, z], -1),
                     np.stack([z, y, z, x, z, w], -1),
                     np.stack([z, z, w, z, x, y], -1)], -2)


def _link_wrench_matrix(R, r, w, wd, a_O):
    """(S, 6, 10): [n at P; f] = this times pi_k (module docstring), for S samples of the
    link's rotation R (S, 3, 3), r = P - O (S, 3), w, w' and a_O - g (S, 3)."""
    a_P = a_O + np.cross(wd, r) + np.cross(w, np.cross(w, r))
    Y = np.zeros(R.shape[:1] + (6, LINK_PARAMETERS))
    W = _cross(wd) + _cross(w) @ _cross(w)
    Y[:, 3:, 0] = a_P
    Y[:, 3:, 1:4] = W @ R
    Y[:, :3, 1:4] = -_cross(a_P) @ R  # h x a_P = -a_P x h
    RT = np.swapaxes(R, 1, 2)
    w_l, wd_l = np.einsum("sij,sj->si", RT, w), np.einsum("sij,sj->si", RT, wd)
    Y[:, :3, 4:10] = R @ (_L(wd_l) + _cross(w_l) @ _L(w_l))
    return Y


def joint_torque_regressor(model, q, qd, qdd) -> np.ndarray:
    """Y with tau = Y @ pi (`parameter_vector`; module docstring), gravity, friction and
    rotor inertia included: (n, 13 n) for one state (n,), (T, n, 13 n) for (T, n)
    arrays. Trees of revolute and prismatic joints only (ArgumentError naming a joint
    of several degrees of freedom, or the loops). The DeNOC kinematics of all samples run
    in one compiled call (`regressor_kinematics_batch`); the algebra of the columns is
    vectorized over samples."""
    m = model_of(model)
    for name, kind in zip(m.joint_names, m.joint_types):
        if not kind.is_dh:
            raise ArgumentError(f"the regressor takes revolute and prismatic joints; joint "
                                f"{name!r} is {kind.value}")
    if m.loops:
        raise ArgumentError("the regressor is for trees; this model has loops")
    k = m.kernel
    n = m.n
    (Q, Qd, Qdd), single = joint_rows(n, q=q, qd=qd, qdd=qdd)
    S = Q.shape[0]
    Rl, ol, oj = np.empty((S, n, 3, 3)), np.empty((S, n, 3)), np.empty((S, n, 3))
    e, t, tdot = np.empty((S, n, 3)), np.empty((S, n, 6)), np.empty((S, n, 6))
    # the kinematics of each sample: frames, twists, twist rates
    regressor_kinematics_batch(k.F, k.I, new_workspace(k), np.ascontiguousarray(Q),
                               np.ascontiguousarray(Qd), np.ascontiguousarray(Qdd),
                               Rl, ol, oj, e, t, tdot)
    parent = np.array(m.parent)
    revolute = np.asarray(m.is_revolute, dtype=bool)
    p = LINK_PARAMETERS * n
    out = np.zeros((S, n, p + JOINT_PARAMETERS * n))
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(n):  # link i's wrench, carried by i and its ancestors
            Yk = _link_wrench_matrix(Rl[:, i], ol[:, i] - oj[:, i], t[:, i, :3],
                                     tdot[:, i, :3], tdot[:, i, 3:])
            cols = slice(LINK_PARAMETERS * i, LINK_PARAMETERS * (i + 1))
            j = i
            while j >= 0:
                if revolute[j]:  # e_j . (n + (P_i - O_j) x f)
                    moment = Yk[:, :3] + _cross(ol[:, i] - oj[:, j]) @ Yk[:, 3:]
                    out[:, j, cols] = np.einsum("si,sic->sc", e[:, j], moment)
                else:  # e_j . f
                    out[:, j, cols] = np.einsum("si,sic->sc", e[:, j], Yk[:, 3:])
                j = parent[j]
        c = p + JOINT_PARAMETERS * np.arange(n)
        rows = np.arange(n)
        out[:, rows, c] = Qd
        out[:, rows, c + 1] = np.tanh(Qd / FRICTION_BAND)
        out[:, rows, c + 2] = Qdd
    finite_result(out, "the regressor")
    return out[0] if single else out
