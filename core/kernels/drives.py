"""Joint friction and drives: the forces a joint's bearings and motor add to the rigid body.

A joint k of one degree of freedom (rate qd_k at iv[k]) may carry, in the model's `drive`
field (`core.kernels.layout`), viscous friction c_v, Coulomb friction c_c, and a drive:
a rotor of inertia I_r behind a gear of ratio r (motor turns per joint turn). The joint
force the drive must deliver, beside the rigid body's, is

    tau_drive_k = r^2 I_r qdd_k + c_v qd_k + c_c tanh(qd_k / FRICTION_BAND)

The rotor turns at r qd_k, so its kinetic energy 1/2 I_r (r qd_k)^2 and its inertia
reflected to the joint, r^2 I_r (the armature), add to the joint's diagonal of the mass
matrix (and to its articulated pivot m^_k); the rotor's gyroscopic coupling to the
links is neglected, as in Pinocchio's `armature`. Coulomb friction is smoothed through
the band: c_c tanh(qd / FRICTION_BAND) is within 0.07 % of c_c sign(qd) beyond 4 bands,
and a stiff viscous law of slope c_c / FRICTION_BAND near rest (sticking is not
modelled). The friction power -tau_f . qd is never positive: friction only dissipates.

A model without friction and drives has nd = 0 and none of this runs.
"""
from __future__ import annotations

import math

from .buffers import compiled_kernel, inlined_kernel
from .layout import model_views

#: rad/s (revolute) or m/s (prismatic): the velocity band over which Coulomb friction
#: changes sign, c_c tanh(qd / FRICTION_BAND).
FRICTION_BAND = 0.01

#: The columns of the model's `drive` field.
DRIVE_VISCOUS, DRIVE_COULOMB, DRIVE_ARMATURE, DRIVE_RATIO = 0, 1, 2, 3


#: Below this |x| `coulomb_shape` is libm's tanh; from it on, tanh(x) > 1/2 and
#: 1 - 2 / (exp(2|x|) + 1) loses nothing to the subtraction.
TANH_BY_EXP = 0.55
#: Beyond this |x|, tanh(x) rounds to +-1 (from 19.06 on).
TANH_ONE = 20.0


@inlined_kernel
def coulomb_shape(x):
    """tanh(x), x = qd / FRICTION_BAND: the shape of Coulomb friction, within 2 ulp of
    libm's. Past TANH_BY_EXP it is 1 - 2 / (exp(2|x|) + 1) with the sign of x (libm's
    tanh takes 9 ns here, exp 3), +-1 past TANH_ONE; NaN stays NaN."""
    a = abs(x)
    if TANH_BY_EXP <= a < TANH_ONE:
        return math.copysign(1.0 - 2.0 / (math.exp(2.0 * a) + 1.0), x)
    if a >= TANH_ONE:
        return math.copysign(1.0, x)
    return math.tanh(x)  # near zero, or NaN


@inlined_kernel
def friction_force(mv, k, qd_k):
    """Joint k's friction force at rate qd_k: c_v qd + c_c tanh(qd / FRICTION_BAND)."""
    return (mv.drive[k, DRIVE_VISCOUS] * qd_k
            + mv.drive[k, DRIVE_COULOMB] * coulomb_shape(qd_k / FRICTION_BAND))


@inlined_kernel
def add_drive_forces(mv, qd, qdd, tau):
    """tau (nv,) += r^2 I_r qdd + friction(qd) at every joint (nothing when nd = 0)."""
    for k in range(mv.nd):
        b = mv.iv[k]
        tau[b] += mv.drive[k, DRIVE_ARMATURE] * qdd[b] + friction_force(mv, k, qd[b])


@inlined_kernel
def drive_kinetic_energy(mv, qd):
    """The rotors' kinetic energy, 1/2 sum r^2 I_r qd_k^2, J (0 when nd = 0)."""
    T = 0.0
    for k in range(mv.nd):
        b = mv.iv[k]
        T += 0.5 * mv.drive[k, DRIVE_ARMATURE] * qd[b] * qd[b]
    return T


@compiled_kernel
def friction_batch(F, I, qd, out):
    """out[s, iv_k] = joint k's friction force at the rates qd[s] (S, nv) of the model F,
    I; zero where a joint has none."""
    mv = model_views(F, I)
    for s in range(qd.shape[0]):
        for b in range(qd.shape[1]):
            out[s, b] = 0.0
        for k in range(mv.nd):
            b = mv.iv[k]
            out[s, b] = friction_force(mv, k, qd[s, b])
