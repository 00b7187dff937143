"""Joint values on their manifold: local charts of the rotations for the integrators.

A spherical joint's value is a unit quaternion and a free joint's a position and a unit
quaternion (`core.kernels.joints`): q has nq entries, the rates nv. An integrator cannot
add rates to quaternion components; it steps instead a vector x of nv entries, a local
chart of q around a base configuration q_b held fixed during a step:

    revolute, prismatic, universal   x = q (the joint's values themselves)
    spherical                        x = delta, q = q_b (x) exp(delta)
    free                             x = [delta; p], q = [p; q_b (x) exp(delta)]

delta (rad) is a rotation vector in the body frame, exp its unit quaternion
(`quaternion_exp`), (x) the quaternion product; p (m) is the body origin's position in
the parent frame. The chart's rates, with w the body-frame angular velocity and v the
body origin's velocity (the joint's rates, body frame):

    delta' = J_r(delta)^-1 w                                 (`right_jacobian_inverse`)
    p'     = R(q) v

After each accepted step the integrator moves the base to the new configuration and
delta back to 0 (`recentre`), so delta stays small (a step's rotation) and the chart
never reaches its singularity at |delta| = 2 pi. Models without spherical or free
joints have nq == nv and x = q: the integrators then skip everything here.

`retract` moves q by a rate-sized correction (the projection onto the loops): q (+) dx,
the same maps with the base q.
"""
from __future__ import annotations

import math

from .buffers import compiled_kernel, inlined_kernel
from .joints import JOINT_FREE, JOINT_NV, JOINT_SPHERICAL, quaternion_matrix
from .layout import model_views

#: Below this rotation angle (rad) the series of the chart's maps replace their closed
#: forms (which divide by the angle).
SMALL_ANGLE = 1e-4


@inlined_kernel
def quaternion_exp(dx, dy, dz):
    """The unit quaternion (x, y, z, w) of the rotation vector (dx, dy, dz), rad."""
    theta2 = dx * dx + dy * dy + dz * dz
    theta = math.sqrt(theta2)
    if theta < SMALL_ANGLE:
        s = 0.5 - theta2 / 48.0   # sin(theta / 2) / theta
        c = 1.0 - theta2 / 8.0
    else:
        s = math.sin(0.5 * theta) / theta
        c = math.cos(0.5 * theta)
    return dx * s, dy * s, dz * s, c


@inlined_kernel
def quaternion_product(ax, ay, az, aw, bx, by, bz, bw):
    """a (x) b (scalar last): the rotation b, then a (R(a b) = R(a) R(b))."""
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


@inlined_kernel
def _turn(q, i, dx, dy, dz, out, o):
    """out[o:o + 4] = q[i:i + 4] (x) exp(d), normalised."""
    ex, ey, ez, ew = quaternion_exp(dx, dy, dz)
    x, y, z, w = quaternion_product(q[i], q[i + 1], q[i + 2], q[i + 3], ex, ey, ez, ew)
    s = 1.0 / math.sqrt(x * x + y * y + z * z + w * w)
    out[o] = x * s
    out[o + 1] = y * s
    out[o + 2] = z * s
    out[o + 3] = w * s


@inlined_kernel
def right_jacobian_inverse(dx, dy, dz, wx, wy, wz):
    """J_r(delta)^-1 w: the rate of the rotation vector delta whose rotation turns with
    the body-frame angular velocity w,
    w + delta x w / 2 + (1 / theta^2 - (1 + cos theta) / (2 theta sin theta))
    delta x (delta x w)."""
    theta2 = dx * dx + dy * dy + dz * dz
    if theta2 < SMALL_ANGLE * SMALL_ANGLE:
        beta = 1.0 / 12.0 + theta2 / 720.0
    else:
        theta = math.sqrt(theta2)
        beta = 1.0 / theta2 - (1.0 + math.cos(theta)) / (2.0 * theta * math.sin(theta))
    cx = dy * wz - dz * wy   # delta x w
    cy = dz * wx - dx * wz
    cz = dx * wy - dy * wx
    ccx = dy * cz - dz * cy  # delta x (delta x w)
    ccy = dz * cx - dx * cz
    ccz = dx * cy - dy * cx
    return (wx + 0.5 * cx + beta * ccx, wy + 0.5 * cy + beta * ccy,
            wz + 0.5 * cz + beta * ccz)


@inlined_kernel
def chart_to_q(mv, q_b, x, q):
    """q (nq,) of the chart values x (nv,) around the base q_b (nq,)."""
    kind, iq, iv = mv.kind, mv.iq, mv.iv
    for k in range(mv.n):
        a, b = iq[k], iv[k]
        if kind[k] == JOINT_SPHERICAL:
            _turn(q_b, a, x[b], x[b + 1], x[b + 2], q, a)
        elif kind[k] == JOINT_FREE:
            q[a] = x[b + 3]
            q[a + 1] = x[b + 4]
            q[a + 2] = x[b + 5]
            _turn(q_b, a + 3, x[b], x[b + 1], x[b + 2], q, a + 3)
        else:
            for j in range(JOINT_NV[kind[k]]):
                q[a + j] = x[b + j]


@inlined_kernel
def chart_origin(mv, q, x):
    """x (nv,) of q itself as the base: delta = 0, the other entries copied."""
    kind, iq, iv = mv.kind, mv.iq, mv.iv
    for k in range(mv.n):
        a, b = iq[k], iv[k]
        if kind[k] == JOINT_SPHERICAL:
            x[b] = x[b + 1] = x[b + 2] = 0.0
        elif kind[k] == JOINT_FREE:
            x[b] = x[b + 1] = x[b + 2] = 0.0
            x[b + 3] = q[a]
            x[b + 4] = q[a + 1]
            x[b + 5] = q[a + 2]
        else:
            for j in range(JOINT_NV[kind[k]]):
                x[b + j] = q[a + j]


@inlined_kernel
def chart_rates(mv, q, x, v, xdot):
    """xdot (nv,): the chart's rates at x (configuration q) under the joint rates v."""
    kind, iq, iv = mv.kind, mv.iq, mv.iv
    for k in range(mv.n):
        a, b = iq[k], iv[k]
        if kind[k] == JOINT_SPHERICAL or kind[k] == JOINT_FREE:
            rx, ry, rz = right_jacobian_inverse(x[b], x[b + 1], x[b + 2],
                                                v[b], v[b + 1], v[b + 2])
            xdot[b] = rx
            xdot[b + 1] = ry
            xdot[b + 2] = rz
            if kind[k] == JOINT_FREE:  # p' = R(q) v
                R = quaternion_matrix(q[a + 3], q[a + 4], q[a + 5], q[a + 6])
                vx, vy, vz = v[b + 3], v[b + 4], v[b + 5]
                xdot[b + 3] = R[0] * vx + R[1] * vy + R[2] * vz
                xdot[b + 4] = R[3] * vx + R[4] * vy + R[5] * vz
                xdot[b + 5] = R[6] * vx + R[7] * vy + R[8] * vz
        else:
            for j in range(JOINT_NV[kind[k]]):
                xdot[b + j] = v[b + j]


@inlined_kernel
def recentre(mv, q_b, x, v, xdot):
    """Move the chart's base to its point x: q_b <- q(x), delta <- 0, and delta's rates
    in xdot to their value at 0 (w itself); the other entries keep their values."""
    kind, iq, iv = mv.kind, mv.iq, mv.iv
    for k in range(mv.n):
        a, b = iq[k], iv[k]
        if kind[k] == JOINT_SPHERICAL or kind[k] == JOINT_FREE:
            r = a if kind[k] == JOINT_SPHERICAL else a + 3
            _turn(q_b, r, x[b], x[b + 1], x[b + 2], q_b, r)
            for j in range(3):
                x[b + j] = 0.0
                xdot[b + j] = v[b + j]
            if kind[k] == JOINT_FREE:
                q_b[a] = x[b + 3]
                q_b[a + 1] = x[b + 4]
                q_b[a + 2] = x[b + 5]
        else:
            for j in range(JOINT_NV[kind[k]]):
                q_b[a + j] = x[b + j]


@inlined_kernel
def retract(mv, q, dx, scale):
    """q <- q (+) scale dx in place (dx (nv,) a rate-sized correction): added to the
    values of one-degree-of-freedom and universal joints; a rotation turned by
    exp(scale dx) in the body frame; a free joint's position moved by R(q) scale dx_v."""
    kind, iq, iv = mv.kind, mv.iq, mv.iv
    for k in range(mv.n):
        a, b = iq[k], iv[k]
        if kind[k] == JOINT_SPHERICAL:
            _turn(q, a, scale * dx[b], scale * dx[b + 1], scale * dx[b + 2], q, a)
        elif kind[k] == JOINT_FREE:
            R = quaternion_matrix(q[a + 3], q[a + 4], q[a + 5], q[a + 6])
            vx, vy, vz = scale * dx[b + 3], scale * dx[b + 4], scale * dx[b + 5]
            q[a] += R[0] * vx + R[1] * vy + R[2] * vz
            q[a + 1] += R[3] * vx + R[4] * vy + R[5] * vz
            q[a + 2] += R[6] * vx + R[7] * vy + R[8] * vz
            _turn(q, a + 3, scale * dx[b], scale * dx[b + 1], scale * dx[b + 2], q, a + 3)
        else:
            for j in range(JOINT_NV[kind[k]]):
                q[a + j] += scale * dx[b + j]


@compiled_kernel
def chart_of(MF, MI, q, x):
    """x (nv,) = the chart of q (nq,) around q itself (`chart_origin`), from Python."""
    chart_origin(model_views(MF, MI), q, x)


@compiled_kernel
def q_of_chart(MF, MI, q_b, x, q):
    """q (nq,) of the chart values x (nv,) around q_b (`chart_to_q`), from Python."""
    chart_to_q(model_views(MF, MI), q_b, x, q)


@compiled_kernel
def retracted(MF, MI, q, dx, scale):
    """q <- q (+) scale dx in place (`retract`), from Python."""
    retract(model_views(MF, MI), q, dx, scale)
