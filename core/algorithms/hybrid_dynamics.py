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

from ..errors import ArgumentError
from ..model.arguments import joint_vector, model_of
from ..model.parts import JointType
from .dynamics import inverse_dynamics
from .tree_dynamics import mass_matrix

__all__ = ["HybridDynamics", "hybrid_dynamics", "free_rates"]


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
    ArgumentError for a model with loops (its joints are not independent).
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
