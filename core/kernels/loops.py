"""Loop closure, compiled: the residual, Jacobian and acceleration term of every loop.

A loop joint between link a (point P_a, fixed on a) and link b (or the base) is the
cut joint of a closed chain (Jalon & Bayo Sec 8.3; Saha seed 001 Sec 4). Its closure
is a few scalar rows Phi(q) = 0 (`core.kernels.layout`, ROW_*): the points coincide
(revolute, spherical), the axes stay parallel (revolute, prismatic), P_b stays on a's
line and the frames do not roll about it (prismatic). With the twists and twist rates
the DeNOC recursions already compute:

    Phi(q)                          closure residual (m, rad)
    J(q) qd   = d Phi / dt          J's column j: p_j moved to the loop point, with
                                    + for the joints on b's path, - on a's path
    J qdd + gamma = d^2 Phi / dt^2  gamma = J' qd: the rows' second derivative with
                                    qdd = 0, from the twist rates at qdd = 0

A gear loop (ROW_GEAR) is no cut joint: its one row couples the values of the two
links' own joints (one degree of freedom each), q_a at rate column iv_a and q_b at iv_b,

    Phi = (q_b - q_b0) - ratio (q_a - q_a0),   J: -ratio at iv_a, 1 at iv_b,   gamma = 0

(ratio, q_a0, q_b0 in loop_gear[l]); its multiplier is the joint force it adds to
b's joint (-ratio times it to a's): workless, since lambda J qd = lambda dPhi/dt = 0.

Everything is in the base frame. `closure_at` fills them from Python
(`core.algorithms.loops` and the model's assembly, `core.model.closure`).
"""
from __future__ import annotations


from . import denoc
from .buffers import compiled_kernel, inline_twin, inlined_kernel, inner_kernel
from .data import data_views
from .joints import (JOINT_NV, JOINT_PRISMATIC, angular_velocity_per_rate,
                     point_velocity_per_rate)
from .layout import (ROW_AXIS_U, ROW_GEAR, ROW_LINE_U, ROW_LINE_V, ROW_POINT_Z, ROW_ROLL,
                     model_views)


# G (20, 3) is the kernels' scratch (Data.G), one 3-vector per row, addressed by index:
_PA, _PB, _U, _V, _ZB, _XB, _DELTA, _C, _D = 0, 1, 2, 3, 4, 5, 6, 7, 8  # geometry of a loop
_VA, _AA, _VB, _AB, _WA, _WDA, _WB, _WDB, _X, _Y = 9, 10, 11, 12, 13, 14, 15, 16, 17, 18
_ZERO = 19  # (0, 0, 0): no gravity, for gamma alone


@inlined_kernel
def _rotate_into(Rl, ol, body, x, y, z, point, G, o):
    """G[o] = R_body (x, y, z), plus o_body for a point (the base for body < 0)."""
    if body < 0:
        G[o, 0], G[o, 1], G[o, 2] = x, y, z
        return
    for r in range(3):
        G[o, r] = Rl[body, r, 0] * x + Rl[body, r, 1] * y + Rl[body, r, 2] * z
        if point:
            G[o, r] += ol[body, r]


@inlined_kernel
def _loop_geometry(mv, Rl, ol, l, G):
    """G[_PA], G[_PB]: the loop's points on links a and b; G[_U], G[_V] (on a), G[_ZB],
    G[_XB] (on b): its directions; G[_DELTA] = P_b - P_a (all in the base frame)."""
    a = mv.loop_body[l, 0]
    b = mv.loop_body[l, 1]
    P, X, U, V = mv.loop_point, mv.loop_axis, mv.loop_u, mv.loop_v
    _rotate_into(Rl, ol, a, P[l, 0, 0], P[l, 0, 1], P[l, 0, 2], True, G, _PA)
    _rotate_into(Rl, ol, b, P[l, 1, 0], P[l, 1, 1], P[l, 1, 2], True, G, _PB)
    _rotate_into(Rl, ol, a, U[l, 0], U[l, 1], U[l, 2], False, G, _U)
    _rotate_into(Rl, ol, a, V[l, 0], V[l, 1], V[l, 2], False, G, _V)
    _rotate_into(Rl, ol, b, X[l, 1, 0], X[l, 1, 1], X[l, 1, 2], False, G, _ZB)
    xb = mv.loop_x
    _rotate_into(Rl, ol, b, xb[l, 0], xb[l, 1], xb[l, 2], False, G, _XB)
    for r in range(3):
        G[_DELTA, r] = G[_PB, r] - G[_PA, r]


@inlined_kernel
def _dot_rows(G, i, j):
    return G[i, 0] * G[j, 0] + G[i, 1] * G[j, 1] + G[i, 2] * G[j, 2]


@inlined_kernel
def _cross_rows(G, i, j, o):
    """G[o] = G[i] x G[j] (o may equal i or j)."""
    x = G[i, 1] * G[j, 2] - G[i, 2] * G[j, 1]
    y = G[i, 2] * G[j, 0] - G[i, 0] * G[j, 2]
    z = G[i, 0] * G[j, 1] - G[i, 1] * G[j, 0]
    G[o, 0], G[o, 1], G[o, 2] = x, y, z


@inlined_kernel
def _row_directions(kind, G):
    """G[_C] = c: the direction a point or line row projects P_b - P_a on, or the vector
    on a of an orientation row c . d, with G[_D] = d on b. Returns 0 for point rows (a
    fixed base direction), 1 for line rows (c turns with a), 2 for orientation rows."""
    if kind <= ROW_POINT_Z:
        for r in range(3):
            G[_C, r] = 1.0 if r == kind else 0.0
        return 0
    if kind == ROW_LINE_U or kind == ROW_LINE_V:
        src = _U if kind == ROW_LINE_U else _V
        for r in range(3):
            G[_C, r] = G[src, r]
        return 1
    src_c = _U if kind == ROW_AXIS_U else _V  # u . z_b, v . z_b, v . x_b (roll)
    src_d = _XB if kind == ROW_ROLL else _ZB
    for r in range(3):
        G[_C, r] = G[src_c, r]
        G[_D, r] = G[src_d, r]
    return 2


@inlined_kernel
def _gear_residual(mv, q, l):
    """(q_b - q_b0) - ratio (q_a - q_a0) of gear loop l at the joint values q."""
    ratio, qa0, qb0 = mv.loop_gear[l, 0], mv.loop_gear[l, 1], mv.loop_gear[l, 2]
    qa = q[mv.iq[mv.loop_body[l, 0]]]
    qb = q[mv.iq[mv.loop_body[l, 1]]]
    return (qb - qb0) - ratio * (qa - qa0)


@inner_kernel
def closure_residual(mv, D, q, Phi):
    """Phi (m,) at the link frames D.Rl, D.ol (filled by link_quantities from q (nq,),
    which the gear rows read)."""
    row_loop, row_kind = mv.row_loop, mv.row_kind
    Rl, ol, G = D.Rl, D.ol, D.G
    last = -1
    for r in range(mv.m):
        l = row_loop[r]
        if row_kind[r] == ROW_GEAR:
            Phi[r] = _gear_residual(mv, q, l)
            continue
        if l != last:
            _loop_geometry(mv, Rl, ol, l, G)
            last = l
        if _row_directions(row_kind[r], G) == 2:
            Phi[r] = _dot_rows(G, _C, _D)
        else:
            Phi[r] = _dot_rows(G, _DELTA, _C)


@inlined_kernel
def _add_path_columns(mv, e, S, oj, body, point, sign, kind, G, J, row):
    """Add sign * (the row's rate per unit rate of joint j) to J[row, iv_j + c] for every
    rate c of every joint j on body's path to the base. point: G's row of the loop point
    on `body`; kind as _row_directions; G[_X] = d x c (orientation rows); line rows also
    turn with body a (sign < 0): + w_a . (c x delta)."""
    parent, joint_kind, iv = mv.parent, mv.kind, mv.iv
    cx, cy, cz = G[_C, 0], G[_C, 1], G[_C, 2]
    px, py, pz = G[point, 0], G[point, 1], G[point, 2]
    j = body
    while j >= 0:
        for col in range(iv[j], iv[j] + JOINT_NV[joint_kind[j]]):
            if joint_kind[j] <= JOINT_PRISMATIC:
                ex, ey, ez = e[j, 0], e[j, 1], e[j, 2]
                wx, wy, wz = angular_velocity_per_rate(joint_kind[j], ex, ey, ez)
                vx, vy, vz = point_velocity_per_rate(joint_kind[j], ex, ey, ez, oj[j, 0],
                                                     oj[j, 1], oj[j, 2], px, py, pz)
            else:  # the twist of a unit rate at O_j, moved to the point
                wx, wy, wz = S[col, 0], S[col, 1], S[col, 2]
                rx, ry, rz = px - oj[j, 0], py - oj[j, 1], pz - oj[j, 2]
                vx = S[col, 3] + wy * rz - wz * ry
                vy = S[col, 4] + wz * rx - wx * rz
                vz = S[col, 5] + wx * ry - wy * rx
            if kind == 2:
                # (w_b - w_a) . (d x c)
                J[row, col] += sign * (wx * G[_X, 0] + wy * G[_X, 1] + wz * G[_X, 2])
            else:
                # rate = v_P . c, v_P the point's velocity per unit rate
                J[row, col] += sign * (vx * cx + vy * cy + vz * cz)
                if kind == 1 and sign < 0.0:
                    dx, dy, dz = G[_DELTA, 0], G[_DELTA, 1], G[_DELTA, 2]
                    J[row, col] += (wx * (cy * dz - cz * dy) + wy * (cz * dx - cx * dz)
                                    + wz * (cx * dy - cy * dx))
        j = parent[j]


@inner_kernel
def closure_jacobian(mv, D, J):
    """J (m, nv) at the link quantities in D."""
    row_loop, row_kind, loop_body = mv.row_loop, mv.row_kind, mv.loop_body
    Rl, ol, oj, e, S, G = D.Rl, D.ol, D.oj, D.e, D.S, D.G
    last = -1
    for r in range(mv.m):
        for j in range(mv.nv):
            J[r, j] = 0.0
        l = row_loop[r]
        if row_kind[r] == ROW_GEAR:  # d/dt: qd_b - ratio qd_a
            J[r, mv.iv[loop_body[l, 1]]] += 1.0
            J[r, mv.iv[loop_body[l, 0]]] -= mv.loop_gear[l, 0]
            continue
        if l != last:
            _loop_geometry(mv, Rl, ol, l, G)
            last = l
        kind = _row_directions(row_kind[r], G)
        if kind == 2:
            _cross_rows(G, _D, _C, _X)
        _add_path_columns(mv, e, S, oj, loop_body[l, 1], _PB, 1.0, kind, G, J, r)
        _add_path_columns(mv, e, S, oj, loop_body[l, 0], _PA, -1.0, kind, G, J, r)


@inlined_kernel
def _point_motion(t, tdot, oj, body, g_base, G, P, v, acc):
    """G[v], G[acc]: velocity and acceleration of the material point of `body` at G[P],
    from the twist t and twist rate tdot at O_body (the base: at rest, accelerating by
    -g_base as the recursions' tdot_base = [0; -g] does)."""
    if body < 0:
        for r in range(3):
            G[v, r] = 0.0
            G[acc, r] = -g_base[r]
        return
    wx, wy, wz = t[body, 0], t[body, 1], t[body, 2]
    ax, ay, az = tdot[body, 0], tdot[body, 1], tdot[body, 2]
    rx = G[P, 0] - oj[body, 0]
    ry = G[P, 1] - oj[body, 1]
    rz = G[P, 2] - oj[body, 2]
    cx = wy * rz - wz * ry  # w x r
    cy = wz * rx - wx * rz
    cz = wx * ry - wy * rx
    G[v, 0] = t[body, 3] + cx  # v_P = v_O + w x r
    G[v, 1] = t[body, 4] + cy
    G[v, 2] = t[body, 5] + cz
    # a_P = a_O + w' x r + w x (w x r)
    G[acc, 0] = tdot[body, 3] + (ay * rz - az * ry) + (wy * cz - wz * cy)
    G[acc, 1] = tdot[body, 4] + (az * rx - ax * rz) + (wz * cx - wx * cz)
    G[acc, 2] = tdot[body, 5] + (ax * ry - ay * rx) + (wx * cy - wy * cx)


@inlined_kernel
def _angular(t, tdot, body, G, w, wd):
    for r in range(3):
        G[w, r] = t[body, r] if body >= 0 else 0.0
        G[wd, r] = tdot[body, r] if body >= 0 else 0.0


@inner_kernel
def closure_acceleration_term(mv, D, g_base, gamma):
    """gamma (m,) = J' qd, from the twists D.t and twist rates D.tdot computed at qdd = 0
    with base acceleration -g_base (the gravity the recursion used; it cancels).

      point rows  : (a_Pb - a_Pa) . c
      line rows   : (a_Pb - a_Pa) . c + 2 (v_Pb - v_Pa) . (w_a x c)
                    + delta . (w'_a x c + w_a x (w_a x c))
      orientation : (w'_b - w'_a) . (d x c) + (w_b - w_a) . ((w_b x d) x c + d x (w_a x c))
      gear        : 0
    """
    row_loop, row_kind, loop_body = mv.row_loop, mv.row_kind, mv.loop_body
    Rl, ol, oj, t, tdot, G = D.Rl, D.ol, D.oj, D.t, D.tdot, D.G
    last = -1
    for r in range(mv.m):
        l = row_loop[r]
        if row_kind[r] == ROW_GEAR:  # linear in q: no second-order term
            gamma[r] = 0.0
            continue
        if l != last:
            a = loop_body[l, 0]
            b = loop_body[l, 1]
            _loop_geometry(mv, Rl, ol, l, G)
            _point_motion(t, tdot, oj, a, g_base, G, _PA, _VA, _AA)
            _point_motion(t, tdot, oj, b, g_base, G, _PB, _VB, _AB)
            _angular(t, tdot, a, G, _WA, _WDA)
            _angular(t, tdot, b, G, _WB, _WDB)
            last = l
        kind = _row_directions(row_kind[r], G)
        if kind == 2:
            _cross_rows(G, _D, _C, _X)  # d x c
            s = 0.0
            for k in range(3):
                s += (G[_WDB, k] - G[_WDA, k]) * G[_X, k]
            _cross_rows(G, _WB, _D, _Y)  # d' = w_b x d
            _cross_rows(G, _Y, _C, _X)  # d' x c
            _cross_rows(G, _WA, _C, _Y)  # c' = w_a x c
            _cross_rows(G, _D, _Y, _Y)  # d x c'
            for k in range(3):
                s += (G[_WB, k] - G[_WA, k]) * (G[_X, k] + G[_Y, k])
            gamma[r] = s
        else:
            s = 0.0
            for k in range(3):
                s += (G[_AB, k] - G[_AA, k]) * G[_C, k]
            if kind == 1:
                _cross_rows(G, _WA, _C, _X)  # c' = w_a x c
                for k in range(3):
                    s += 2.0 * (G[_VB, k] - G[_VA, k]) * G[_X, k]
                _cross_rows(G, _WA, _X, _Y)  # w_a x (w_a x c)
                _cross_rows(G, _WDA, _C, _X)  # w'_a x c
                s += _dot_rows(G, _DELTA, _X) + _dot_rows(G, _DELTA, _Y)
            gamma[r] = s


# inlined into the closed-chain forward dynamics (`core.kernels.buffers.inline_twin`)
closure_jacobian_inline = inline_twin(closure_jacobian)
closure_acceleration_inline = inline_twin(closure_acceleration_term)


@compiled_kernel
def closure_at(F, I, ws, q, qd, want, Phi, J, gamma):
    """Fill Phi (want & 1), J (want & 2) and gamma (want & 4) at (q, qd)."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    denoc.link_quantities(mv, D, q)
    if want & 1:
        closure_residual(mv, D, q, Phi)
    if want & 2:
        closure_jacobian(mv, D, J)
    if want & 4:
        zero3 = D.G[_ZERO]
        zero3[:] = 0.0
        denoc.twist_rates(mv, D, qd, D.zero, zero3)
        closure_acceleration_term(mv, D, zero3, gamma)
