"""The joint-torque regressor: tau = Y(q, qd, qdd) pi, linear in the model's parameters.

Parameter vector pi (p = 10 n + 3 n), per link k (its own frame, origin P_k = the link
frame's origin `ol`, rotation R_k = `Rl`):

    pi_k = [m, m c_x, m c_y, m c_z, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz]

with c the mass centre and I the inertia about P_k (not about the mass centre:
I_P = I_C + m (c.c 1 - c c^T), the parallel-axis theorem), both in the link's own frame;
then per joint j: [c_v, c_c, r^2 I_r] (viscous and Coulomb friction, reflected rotor
inertia: `core.kernels.drives`).

The columns: Newton-Euler for each link about P_k from the DeNOC twists and twist
rates, carried to every joint that supports it; one compiled pass per sample, written
out in `core.kernels.regressor`.
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..kernels.buffers import zeroed_result
from ..kernels.data import new_workspace
from ..kernels.drives import DRIVE_ARMATURE, DRIVE_COULOMB, DRIVE_VISCOUS, FRICTION_BAND
from ..kernels.regressor import JOINT_PARAMETERS, LINK_PARAMETERS, regressor_batch
from ..model.arguments import finite_result, joint_rows, model_of


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


def joint_torque_regressor(model, q, qd, qdd) -> np.ndarray:
    """Y with tau = Y @ pi (`parameter_vector`; module docstring), gravity, friction and
    rotor inertia included: (n, 13 n) for one state (n,), (T, n, 13 n) for (T, n)
    arrays. Trees of revolute and prismatic joints only (ArgumentError naming a joint
    of several degrees of freedom, or the loops); ResultOverflowError when an entry
    overflows. One compiled pass over the samples (`core.kernels.regressor`)."""
    m = model_of(model)
    for name, kind in zip(m.joint_names, m.joint_types):
        if not kind.is_dh:
            raise ArgumentError(f"the regressor takes revolute and prismatic joints; joint "
                                f"{name!r} is {kind.value}")
    if m.loops:
        raise ArgumentError("the regressor is for trees; this model has loops")
    k = m.kernel
    (Q, Qd, Qdd), single = joint_rows(m.n, q=q, qd=qd, qdd=qdd)
    out = zeroed_result((Q.shape[0], m.n, (LINK_PARAMETERS + JOINT_PARAMETERS) * m.n))
    bounded = regressor_batch(k.F, k.I, new_workspace(k), np.ascontiguousarray(Q),
                             np.ascontiguousarray(Qd), np.ascontiguousarray(Qdd),
                             FRICTION_BAND, out)
    if not bounded:  # an argument beyond 1e30: an entry may have overflowed
        finite_result(out, "the regressor")  # raises ResultOverflowError if one did
    return out[0] if single else out
