"""Joint kinds: the one place the recursions ask what a joint is.

A joint of the tree is a row of the model's joint table (`core.kernels.layout`): its
kind, where its values start in q (`iq`) and where its rates start in the rate vector
(`iv`). Everything that depends on the kind is here, and nowhere else:

- how the joint's values move its DH row (`dh_variables`): a revolute joint turns
  theta, a prismatic one slides b;
- its motion subspace, Saha's joint-rate propagation vector (seed 001 eqs. 11d, 12b):

      p_k = [e_k; 0]  revolute (a rate turns link k about the axis e_k)
      p_k = [0; e_k]  prismatic (a rate slides it along e_k)

  applied by its products with twists, wrenches and 6x6 inertias (`add_p_times`,
  `p_dot`, `M_p`), never formed;
- the extra term of the twist rate the joint's motion brings (`add_joint_rate_terms`,
  eq. 17's pdot_k qd_k);
- the block of an articulated inertia its pivot is measured against
  (`pivot_scale`).

Every helper is compiled by numba and inlined into its caller; they take the joint's
kind and the per-link arrays by row index (see `core.kernels.linalg6`).
"""
from __future__ import annotations

from numba import njit

JOINT_REVOLUTE = 0
JOINT_PRISMATIC = 1

#: Entries in q and in the rate vector of each kind (indexed by the kind's code).
JOINT_NQ = (1, 1)
JOINT_NV = (1, 1)


@njit(cache=True, inline="always")
def dh_variables(kind, a, b, alpha, theta, q, iq):
    """(theta, b) of a DH row whose joint has the values q[iq:] (rad, m)."""
    if kind == JOINT_REVOLUTE:
        return q[iq], b
    return theta, q[iq]


@njit(cache=True, inline="always")
def _block(kind):
    """First row of p_k's non-zero block: 0 (angular) or 3 (linear)."""
    return 0 if kind == JOINT_REVOLUTE else 3


@njit(cache=True, inline="always")
def p_dot(kind, e, k, w, kw):
    """p_k^T w[kw]: the joint component of a wrench (n . e_k or f . e_k)."""
    b = _block(kind)
    return e[k, 0] * w[kw, b] + e[k, 1] * w[kw, b + 1] + e[k, 2] * w[kw, b + 2]


@njit(cache=True, inline="always")
def add_p_times(kind, e, k, s, out, o):
    """out[o] += p_k s for a joint rate (or acceleration) s."""
    b = _block(kind)
    out[o, b] += e[k, 0] * s
    out[o, b + 1] += e[k, 1] * s
    out[o, b + 2] += e[k, 2] * s


@njit(cache=True, inline="always")
def M_p(kind, e, k, M, km, out, o):
    """out[o] = M[km] p_k (a 6-vector: the columns of the block p_k selects, times e_k)."""
    b = _block(kind)
    for r in range(6):
        out[o, r] = M[km, r, b] * e[k, 0] + M[km, r, b + 1] * e[k, 1] + M[km, r, b + 2] * e[k, 2]


@njit(cache=True, inline="always")
def add_joint_rate_terms(kind, e, k, wx, wy, wz, s, out, o):
    """out[o] += pdot_k s with pdot_k = W_λ p_k (e_k is fixed in the parent λ, which turns
    at w = (wx, wy, wz)): w x e_k s in the angular rows of a revolute joint. For a
    prismatic joint the material point of link k at O_k also feels the sliding part of
    Adot, which doubles the Coriolis term: 2 w x e_k s in the linear rows."""
    cx = wy * e[k, 2] - wz * e[k, 1]
    cy = wz * e[k, 0] - wx * e[k, 2]
    cz = wx * e[k, 1] - wy * e[k, 0]
    if kind == JOINT_REVOLUTE:
        out[o, 0] += cx * s
        out[o, 1] += cy * s
        out[o, 2] += cz * s
    else:
        out[o, 3] += 2.0 * cx * s
        out[o, 4] += 2.0 * cy * s
        out[o, 5] += 2.0 * cz * s


@njit(cache=True, inline="always")
def pivot_scale(kind, M_hat, k):
    """The size a pivot m^_k is measured against: the largest diagonal entry of the
    block of M^_k that p_k selects (rotational for a revolute joint, translational for
    a prismatic one)."""
    b = _block(kind)
    return max(abs(M_hat[k, b, b]), abs(M_hat[k, b + 1, b + 1]), abs(M_hat[k, b + 2, b + 2]))


@njit(cache=True, inline="always")
def is_angular(kind):
    """Whether the joint's rates are angular (rad/s) rather than linear (m/s)."""
    return kind == JOINT_REVOLUTE


@njit(cache=True, inline="always")
def point_velocity_per_rate(kind, ex, ey, ez, ox, oy, oz, px, py, pz):
    """The velocity of a point P = (px, py, pz) carried by the links beyond a joint with
    axis e through O (base frame), per unit rate of the joint: e x (P - O) for a revolute
    joint, e for a prismatic one (a column of the point's Jacobian)."""
    if kind == JOINT_REVOLUTE:
        rx, ry, rz = px - ox, py - oy, pz - oz
        return ey * rz - ez * ry, ez * rx - ex * rz, ex * ry - ey * rx
    return ex, ey, ez


@njit(cache=True, inline="always")
def angular_velocity_per_rate(kind, ex, ey, ez):
    """The angular velocity of the links beyond a joint with axis e, per unit rate of the
    joint: e for a revolute joint, zero for a prismatic one."""
    if kind == JOINT_REVOLUTE:
        return ex, ey, ez
    return 0.0, 0.0, 0.0
