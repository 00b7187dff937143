"""Friction and drives seen from outside the recursions: the friction forces alone, the
motor torques behind the joint torques.

The law (`core.kernels.drives`, one home): joint k's friction force is
c_v qd_k + c_c tanh(qd_k / FRICTION_BAND); its drive, of gear ratio r and rotor inertia
I_r, adds r^2 I_r qdd_k to the joint torque and 1/2 r^2 I_r qd_k^2 to the kinetic energy.
`inverse_dynamics` already includes both; these functions split them out.
"""
from __future__ import annotations

import numpy as np

from ..kernels.drives import DRIVE_RATIO, friction_batch
from ..model.arguments import finite_result, joint_rows, model_of


def friction_torques(model, qd) -> np.ndarray:
    """The joints' friction forces at the rates qd, (nv,) or (T, nv) rad/s (m/s) -> the
    same shape, N m (N): what the drive must add to overcome friction (its power
    -qd . friction <= 0 is what friction dissipates). Zeros for a model without
    friction."""
    m = model_of(model)
    k = m.kernel
    (Qd,), single = joint_rows(k.nv, qd=qd)
    out = np.zeros_like(Qd)
    if k.nd:
        friction_batch(k.F, k.I, Qd, out)
    finite_result(out, "the friction forces")
    return out[0] if single else out


def gear_ratios(model) -> np.ndarray:
    """Each joint's gear ratio r (motor turns per joint turn), (nv,); 1 where a joint has
    no drive."""
    k = model_of(model).kernel
    r = np.ones(k.nv)
    if k.nd:
        r[k.views.iv] = k.views.drive[:, DRIVE_RATIO]
    return r


def motor_torques(model, tau) -> np.ndarray:
    """The motor torques behind joint torques tau (nv,) or (T, nv), N m (N): tau / r per
    joint (the gear's losses are the joint's friction, already in tau)."""
    m = model_of(model)
    (T,), single = joint_rows(m.kernel.nv, tau=tau)
    out = T / gear_ratios(m)
    return out[0] if single else out
