"""Where a point of a link is and how fast it moves: for the pull and the force elements.

    p   = o_i + Q_i r                        the point r of link i (o_i, Q_i: link i's own
                                             frame, base frame)
    v_p = sum_{j in path(i)} J_j qd_j        its velocity: each joint from link i down to
                                             the base moves it by its column(s) J_j

A one-degree-of-freedom joint's column is `point_velocity_per_rate` (its axis e_j); a
joint of several degrees of freedom moves it by its twist P_j qd_j taken at p. Link -1
is the base: p = r, v_p = 0. The frames (Rj, oj, Rl, ol) come from
`core.kernels.denoc.dh_frames` at the same q; S is a rate-row buffer for the motion
subspaces (`core.kernels.joints.motion_subspace`).
"""
from __future__ import annotations

from .buffers import inlined_kernel
from .joints import JOINT_NV, JOINT_PRISMATIC, motion_subspace, point_velocity_per_rate


@inlined_kernel
def point_position(Rl, ol, i, rx, ry, rz):
    """p = o_i + Q_i r (base frame, m); r itself for the base (i = -1)."""
    if i < 0:
        return rx, ry, rz
    return (ol[i, 0] + Rl[i, 0, 0] * rx + Rl[i, 0, 1] * ry + Rl[i, 0, 2] * rz,
            ol[i, 1] + Rl[i, 1, 0] * rx + Rl[i, 1, 1] * ry + Rl[i, 1, 2] * rz,
            ol[i, 2] + Rl[i, 2, 0] * rx + Rl[i, 2, 1] * ry + Rl[i, 2, 2] * rz)


@inlined_kernel
def point_velocity(mv, Rj, oj, Rl, S, i, px, py, pz, qd):
    """v_p of the point p (base frame) carried by link i, at the rates qd (m/s)."""
    vx = vy = vz = 0.0
    j = i
    while j >= 0:
        kind, b = mv.kind[j], mv.iv[j]
        if kind <= JOINT_PRISMATIC:
            # e_j: z of joint j's frame
            Jx, Jy, Jz = point_velocity_per_rate(kind, Rj[j, 0, 2], Rj[j, 1, 2], Rj[j, 2, 2],
                                                 oj[j, 0], oj[j, 1], oj[j, 2], px, py, pz)
            s = qd[b]
            vx += Jx * s
            vy += Jy * s
            vz += Jz * s
        else:  # the twist P_j qd_j at O_j, moved to p
            motion_subspace(kind, Rj, Rl, j, b, S)
            rx, ry, rz = px - oj[j, 0], py - oj[j, 1], pz - oj[j, 2]
            for c in range(JOINT_NV[kind]):
                s = qd[b + c]
                wx, wy, wz = S[b + c, 0], S[b + c, 1], S[b + c, 2]
                vx += (S[b + c, 3] + wy * rz - wz * ry) * s
                vy += (S[b + c, 4] + wz * rx - wx * rz) * s
                vz += (S[b + c, 5] + wx * ry - wy * rx) * s
        j = mv.parent[j]
    return vx, vy, vz


@inlined_kernel
def add_point_force(W, ol, i, px, py, pz, Fx, Fy, Fz):
    """W[i] += the wrench of the force F at p on link i: [(p - o_i) x F; F] (moment about
    o_i, base frame); nothing for the base (i = -1)."""
    if i < 0:
        return
    ax, ay, az = px - ol[i, 0], py - ol[i, 1], pz - ol[i, 2]
    W[i, 0] += ay * Fz - az * Fy
    W[i, 1] += az * Fx - ax * Fz
    W[i, 2] += ax * Fy - ay * Fx
    W[i, 3] += Fx
    W[i, 4] += Fy
    W[i, 5] += Fz
