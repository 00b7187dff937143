"""Joint kinds: the one place the recursions ask what a joint is.

A joint of the tree is a row of the model's joint table (`core.kernels.layout`): its
kind, where its values start in q (`iq`) and where its rates start in the rate vector
(`iv`). Everything that depends on the kind is here, and nowhere else:

    kind        q entries                 rates (nv)                     motion
    revolute    1: theta                  1: theta'                      its DH row
    prismatic   1: b                      1: b'                          its DH row
    spherical   4: unit quaternion        3: angular velocity, body      R(quat)
                   [qx, qy, qz, qw]          frame (the child's axes)
    universal   2: theta1, theta2         2: their rates                 Rz(theta1) Rx(theta2)
    free        7: [x, y, z, qx, qy, qz,  6: [w; v], body frame: the     T(x, y, z) R(quat)
                   qw] in the parent frame   angular velocity and the
                                             velocity of the body origin

A revolute or prismatic joint moves its DH row (`dh_variables`); the others move the
frame they sit in, their placement (`joint_motion`), and their link's own frame is the
frame after that motion. The joint's point O_k (where the recursions take link k's
twist) is on the axis of a revolute or prismatic joint, the centre of a spherical or
universal joint, and the body origin of a free joint.

The motion subspace, Saha's joint-rate propagation p_k (seed 001 eqs. 11d, 12b),
becomes 6 x nv_k for a joint of several degrees of freedom:

    p_k = [e_k; 0]  revolute (a rate turns link k about the axis e_k)
    p_k = [0; e_k]  prismatic (a rate slides it along e_k)
    P_k = [R_k; 0]  spherical (R_k: the child's axes, base frame)
    P_k = [[z, x']; [0, 0]]  universal (z the first axis, x' the second, turned by theta1)
    P_k = [[R_k, 0]; [0, R_k]]  free

A one-degree-of-freedom joint's p_k is applied through its axis e_k (`add_p_times`,
`p_dot`, `M_p`), never formed; a joint of several has its columns in the data's `S`
(one row per rate, `motion_subspace`) and the general helpers below. The extra term of
the twist rate a joint's motion brings (eq. 17's pdot_k qd_k) is `joint_rate_terms_add`.

Every helper is compiled by numba and inlined into its caller; they take the joint's
kind and the per-link arrays by row index (see `core.kernels.linalg6`).
"""
from __future__ import annotations

import numpy as np
from .buffers import inlined_kernel
from .trig import cos_sin

JOINT_REVOLUTE = 0
JOINT_PRISMATIC = 1
JOINT_SPHERICAL = 2
JOINT_UNIVERSAL = 3
JOINT_FREE = 4

#: Entries in q and in the rate vector of each kind (indexed by the kind's code).
JOINT_NQ = (1, 1, 4, 2, 7)
JOINT_NV = (1, 1, 3, 2, 6)


@inlined_kernel
def dh_variables(kind, a, b, alpha, theta, q, iq):
    """(theta, b) of a DH row whose joint has the values q[iq:] (rad, m)."""
    if kind == JOINT_REVOLUTE:
        return q[iq], b
    return theta, q[iq]


@inlined_kernel
def _block(kind):
    """First row of p_k's non-zero block: 0 (angular) or 3 (linear)."""
    return 0 if kind == JOINT_REVOLUTE else 3


@inlined_kernel
def p_dot(kind, e, k, w, kw):
    """p_k^T w[kw]: the joint component of a wrench (n . e_k or f . e_k)."""
    b = _block(kind)
    return e[k, 0] * w[kw, b] + e[k, 1] * w[kw, b + 1] + e[k, 2] * w[kw, b + 2]


@inlined_kernel
def add_p_times(kind, e, k, s, out, o):
    """out[o] += p_k s for a joint rate (or acceleration) s."""
    b = _block(kind)
    out[o, b] += e[k, 0] * s
    out[o, b + 1] += e[k, 1] * s
    out[o, b + 2] += e[k, 2] * s


@inlined_kernel
def p_times_add(kind, e, k, s, m0, m1, m2, m3, m4, m5):
    """[m0..m5] + p_k s (`add_p_times` on a 6-vector held in registers)."""
    if kind == JOINT_REVOLUTE:
        return m0 + e[k, 0] * s, m1 + e[k, 1] * s, m2 + e[k, 2] * s, m3, m4, m5
    return m0, m1, m2, m3 + e[k, 0] * s, m4 + e[k, 1] * s, m5 + e[k, 2] * s


@inlined_kernel
def M_p(kind, e, k, M, km, out, o):
    """out[o] = M[km] p_k (a 6-vector: the columns of the block p_k selects, times e_k)."""
    b = _block(kind)
    for r in range(6):
        out[o, r] = M[km, r, b] * e[k, 0] + M[km, r, b + 1] * e[k, 1] + M[km, r, b + 2] * e[k, 2]


@inlined_kernel
def joint_rate_terms_add(kind, e, k, wx, wy, wz, s, m0, m1, m2, m3, m4, m5):
    """[m0..m5] + pdot_k s with pdot_k = W_λ p_k (e_k is fixed in the parent λ, which
    turns at w = (wx, wy, wz)): w x e_k s in the angular rows of a revolute joint. For a
    prismatic joint the material point of link k at O_k also feels the sliding part of
    Adot, which doubles the Coriolis term: 2 w x e_k s in the linear rows. (A 6-vector
    held in registers: the twist-rate recursion keeps tdot_k there.)"""
    cx = wy * e[k, 2] - wz * e[k, 1]
    cy = wz * e[k, 0] - wx * e[k, 2]
    cz = wx * e[k, 1] - wy * e[k, 0]
    if kind == JOINT_REVOLUTE:
        return m0 + cx * s, m1 + cy * s, m2 + cz * s, m3, m4, m5
    return m0, m1, m2, m3 + 2.0 * cx * s, m4 + 2.0 * cy * s, m5 + 2.0 * cz * s


@inlined_kernel
def pivot_scale(kind, M_hat, k):
    """The size a pivot m^_k is measured against: the largest diagonal entry of the
    block of M^_k that p_k selects (rotational for a revolute joint, translational for
    a prismatic one)."""
    b = _block(kind)
    return max(abs(M_hat[k, b, b]), abs(M_hat[k, b + 1, b + 1]), abs(M_hat[k, b + 2, b + 2]))


@inlined_kernel
def is_angular(kind):
    """Whether the joint's rates are angular (rad/s) rather than linear (m/s)."""
    return kind == JOINT_REVOLUTE


@inlined_kernel
def point_velocity_per_rate(kind, ex, ey, ez, ox, oy, oz, px, py, pz):
    """The velocity of a point P = (px, py, pz) carried by the links beyond a joint with
    axis e through O (base frame), per unit rate of the joint: e x (P - O) for a revolute
    joint, e for a prismatic one (a column of the point's Jacobian)."""
    if kind == JOINT_REVOLUTE:
        rx, ry, rz = px - ox, py - oy, pz - oz
        return ey * rz - ez * ry, ez * rx - ex * rz, ex * ry - ey * rx
    return ex, ey, ez


@inlined_kernel
def angular_velocity_per_rate(kind, ex, ey, ez):
    """The angular velocity of the links beyond a joint with axis e, per unit rate of the
    joint: e for a revolute joint, zero for a prismatic one."""
    if kind == JOINT_REVOLUTE:
        return ex, ey, ez
    return 0.0, 0.0, 0.0



# ----------------------------------------------------------------------------------
# Joints of several degrees of freedom
# ----------------------------------------------------------------------------------

@inlined_kernel
def quaternion_matrix(x, y, z, w):
    """The rotation matrix (9 numbers, row by row) of the quaternion [x, y, z, w]
    (scalar last), normalised first."""
    s = 1.0 / np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x * s, y * s, z * s, w * s
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
            2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
            2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y))


@inlined_kernel
def joint_motion(kind, q, iq):
    """The motion of a spherical, universal or free joint at the values q[iq:]: its
    rotation Q (9 numbers, row by row) and translation p (3), both in the frame the
    joint sits in (its placement)."""
    if kind == JOINT_UNIVERSAL:
        c1, s1 = cos_sin(q[iq])
        c2, s2 = cos_sin(q[iq + 1])
        # Rz(theta1) Rx(theta2)
        return (c1, -s1 * c2, s1 * s2, s1, c1 * c2, -c1 * s2, 0.0, s2, c2, 0.0, 0.0, 0.0)
    if kind == JOINT_SPHERICAL:
        Q = quaternion_matrix(q[iq], q[iq + 1], q[iq + 2], q[iq + 3])
        return Q + (0.0, 0.0, 0.0)
    # free: T(x, y, z) R(quat)
    Q = quaternion_matrix(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6])
    return Q + (q[iq], q[iq + 1], q[iq + 2])


@inlined_kernel
def motion_subspace(kind, Rj, Rl, k, iv, S):
    """The columns of P_k (a joint of several degrees of freedom), base frame, into the
    rows S[iv:iv + nv] (table above); Rj, Rl: the joint's frame before its motion and
    its link's own frame."""
    if kind == JOINT_SPHERICAL or kind == JOINT_FREE:
        for c in range(3):
            for r in range(3):
                S[iv + c, r] = Rl[k, r, c]
                S[iv + c, 3 + r] = 0.0
        if kind == JOINT_FREE:
            for c in range(3):
                for r in range(3):
                    S[iv + 3 + c, r] = 0.0
                    S[iv + 3 + c, 3 + r] = Rl[k, r, c]
        return
    # universal: z of the joint frame, then x of the frame turned by theta1, which is also
    # the first column of Rl = Rj Rz(theta1) Rx(theta2) (Rx keeps x)
    for r in range(3):
        S[iv, r] = Rj[k, r, 2]
        S[iv + 1, r] = Rl[k, r, 0]
        S[iv, 3 + r] = 0.0
        S[iv + 1, 3 + r] = 0.0


@inlined_kernel
def add_P_times(kind, e, S, k, iv, x, out, o):
    """out[o] += P_k x[iv:iv + nv_k]: the twist (or twist rate) of joint k's rates x."""
    if kind == JOINT_REVOLUTE or kind == JOINT_PRISMATIC:
        add_p_times(kind, e, k, x[iv], out, o)
        return
    for c in range(JOINT_NV[kind]):
        s = x[iv + c]
        for r in range(6):
            out[o, r] += S[iv + c, r] * s


@inlined_kernel
def joint_forces(kind, e, S, k, iv, w, kw, tau):
    """tau[iv:iv + nv_k] = P_k^T w[kw]: the joint's share of a wrench (N m, N; for a free
    joint the wrench [n; f] at its body origin in the body frame)."""
    if kind == JOINT_REVOLUTE or kind == JOINT_PRISMATIC:
        tau[iv] = p_dot(kind, e, k, w, kw)
        return
    for c in range(JOINT_NV[kind]):
        s = 0.0
        for r in range(6):
            s += S[iv + c, r] * w[kw, r]
        tau[iv + c] = s


@inlined_kernel
def add_joint_rate_terms_of(kind, e, S, k, iv, wx, wy, wz, qd, t, out, o):
    """out[o] += Pdot_k qd_k (eq. 17's joint term) for any kind; (wx, wy, wz) the parent's
    angular velocity, t the twists (t[k] already known).

      revolute, prismatic: as `joint_rate_terms_add`
      spherical: [w_parent x w_rel; 0]   (the child's axes turn with the child)
      universal: [w_parent x w_rel + theta1' theta2' (z x x'); 0]
      free (on the base): [0; w x v], w and v the body's angular velocity and the
                          velocity of its origin (the origin is a material point)
    """
    if kind == JOINT_REVOLUTE or kind == JOINT_PRISMATIC:
        (out[o, 0], out[o, 1], out[o, 2], out[o, 3], out[o, 4],
         out[o, 5]) = joint_rate_terms_add(kind, e, k, wx, wy, wz, qd[iv], out[o, 0],
                                           out[o, 1], out[o, 2], out[o, 3], out[o, 4],
                                           out[o, 5])
        return
    if kind == JOINT_FREE:
        ax, ay, az = t[k, 0], t[k, 1], t[k, 2]
        vx, vy, vz = t[k, 3], t[k, 4], t[k, 5]
        out[o, 3] += ay * vz - az * vy
        out[o, 4] += az * vx - ax * vz
        out[o, 5] += ax * vy - ay * vx
        return
    # w_rel = P_k qd_k (angular rows); out += w_parent x w_rel
    rx = ry = rz = 0.0
    for c in range(JOINT_NV[kind]):
        rx += S[iv + c, 0] * qd[iv + c]
        ry += S[iv + c, 1] * qd[iv + c]
        rz += S[iv + c, 2] * qd[iv + c]
    out[o, 0] += wy * rz - wz * ry
    out[o, 1] += wz * rx - wx * rz
    out[o, 2] += wx * ry - wy * rx
    if kind == JOINT_UNIVERSAL:
        s = qd[iv] * qd[iv + 1]
        zx, zy, zz = S[iv, 0], S[iv, 1], S[iv, 2]
        xx, xy, xz = S[iv + 1, 0], S[iv + 1, 1], S[iv + 1, 2]
        out[o, 0] += (zy * xz - zz * xy) * s
        out[o, 1] += (zz * xx - zx * xz) * s
        out[o, 2] += (zx * xy - zy * xx) * s


@inlined_kernel
def P_col_dot(kind, e, S, k, iv, c, w, kw):
    """Column c of P_k dotted with w[kw] (a wrench's share of rate c of joint k)."""
    if kind == JOINT_REVOLUTE or kind == JOINT_PRISMATIC:
        return p_dot(kind, e, k, w, kw)
    s = 0.0
    for r in range(6):
        s += S[iv + c, r] * w[kw, r]
    return s


@inlined_kernel
def M_P_col(kind, e, S, k, iv, c, M, km, out, o):
    """out[o] = M[km] times column c of P_k."""
    if kind == JOINT_REVOLUTE or kind == JOINT_PRISMATIC:
        M_p(kind, e, k, M, km, out, o)
        return
    for r in range(6):
        s = 0.0
        for col in range(6):
            s += M[km, r, col] * S[iv + c, col]
        out[o, r] = s


@inlined_kernel
def ldl_solve(L, k, d, b, nk, x, xo):
    """x[xo, :nk] = D^-1 x[xo, :nk] for the block D = L diag(d[b:b + nk]) L^T of joint k
    (L[k] unit lower triangular, `factor_pivot_block`)."""
    for i in range(nk):  # L z = x
        s = x[xo, i]
        for l in range(i):
            s -= L[k, i, l] * x[xo, l]
        x[xo, i] = s
    for i in range(nk):
        x[xo, i] /= d[b + i]
    for i in range(nk - 1, -1, -1):  # L^T x = z / d
        s = x[xo, i]
        for l in range(i + 1, nk):
            s -= L[k, l, i] * x[xo, l]
        x[xo, i] = s


@inlined_kernel
def factor_pivot_block(L, k, d, b, nk):
    """The block pivot of a joint of several degrees of freedom, D = P^T M^ P (its lower
    triangle in L[k]), factored in place as L diag(d[b:b + nk]) L^T (L unit lower
    triangular). Returns the first rate whose pivot is not positive relative to D's own
    diagonal entry (singular), or -1."""
    for j in range(nk):
        dj = L[k, j, j]
        scale = abs(dj)
        for l in range(j):
            dj -= L[k, j, l] * L[k, j, l] * d[b + l]
        if not dj > 1e-13 * scale:
            return j
        d[b + j] = dj
        L[k, j, j] = 1.0
        for i in range(j + 1, nk):
            s = L[k, i, j]
            for l in range(j):
                s -= L[k, i, l] * L[k, j, l] * d[b + l]
            L[k, i, j] = s / dj
    return -1
