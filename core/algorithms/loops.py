"""Loop closure in joint coordinates: residual, Jacobian, acceleration term, assembly.

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

Everything is in the base frame. Redundant rows (a planar loop seen in 3D, the
Bricard) are allowed: rows that vanish identically are dropped when the mechanism is
built, and the solvers tolerate rows that depend on others (the mobility comes from
the rank, not from counting rows).

Public: `loop_residual`, `loop_jacobian`, `loop_acceleration_term`, `assemble`,
`mobility`, `constraint_row_labels`, `constraint_row_units`.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..kernels.buffers import compiled_kernel, inline_twin, inlined_kernel
from ..kernels import denoc
from ..errors import LoopClosureError, MechanismError
from ..kernels.layout import (ROW_AXIS_U, ROW_AXIS_V, ROW_LINE_U, ROW_LINE_V, ROW_POINT_X,
                           ROW_POINT_Y, ROW_POINT_Z, ROW_ROLL, model_views)
from ..kernels.data import data_views, thread_workspace

#: Rows whose Jacobian is below this (relative to the largest entry) at every sampled
#: pose are structurally zero (the out-of-plane rows of a planar loop).
STRUCTURAL_ZERO = 1e-12
#: Relative singular-value threshold of the rank (mobility, determinacy).
RANK_TOL = 1e-9
#: Most damped-Newton iterations of an assembly.
MAX_ASSEMBLY_ITERATIONS = 200


# ----------------------------------------------------------------------------------
# Compiled kernels: the closure rows of every loop at the configuration in D
# ----------------------------------------------------------------------------------

# G (20, 3) is the kernels' scratch (Data.G), one 3-vector per row, addressed by index:
_PA, _PB, _U, _V, _ZB, _XB, _DELTA, _C, _D = 0, 1, 2, 3, 4, 5, 6, 7, 8  # geometry of a loop
_VA, _AA, _VB, _AB, _WA, _WDA, _WB, _WDB, _X, _Y = 9, 10, 11, 12, 13, 14, 15, 16, 17, 18
_ZERO = 19  # (0, 0, 0): no gravity, for gamma alone


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _dot_rows(G, i, j):
    return G[i, 0] * G[j, 0] + G[i, 1] * G[j, 1] + G[i, 2] * G[j, 2]


@njit(cache=True, inline="always")
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


@compiled_kernel
def closure_residual(mv, Rl, ol, G, Phi):
    """Phi (m,) at the link frames Rl, ol (filled by link_quantities); G scratch."""
    row_loop, row_kind = mv.row_loop, mv.row_kind
    last = -1
    for r in range(mv.m):
        l = row_loop[r]
        if l != last:
            _loop_geometry(mv, Rl, ol, l, G)
            last = l
        if _row_directions(row_kind[r], G) == 2:
            Phi[r] = _dot_rows(G, _C, _D)
        else:
            Phi[r] = _dot_rows(G, _DELTA, _C)


@inlined_kernel
def _add_path_columns(mv, e, oj, body, point, sign, kind, G, J, row):
    """Add sign * (the row's rate per unit qd_j) to J[row, j] for every joint j on body's
    path to the base. point: G's row of the loop point on `body`; kind as
    _row_directions; G[_X] = d x c (orientation rows); line rows also turn with body a
    (sign < 0): + w_a . (c x delta)."""
    revolute, parent = mv.revolute, mv.parent
    cx, cy, cz = G[_C, 0], G[_C, 1], G[_C, 2]
    j = body
    while j >= 0:
        ex, ey, ez = e[j, 0], e[j, 1], e[j, 2]
        if revolute[j]:
            if kind == 2:
                # (w_b - w_a) . (d x c)
                J[row, j] += sign * (ex * G[_X, 0] + ey * G[_X, 1] + ez * G[_X, 2])
            else:
                # v_P = e x (P - O_j); rate = v_P . c
                rx = G[point, 0] - oj[j, 0]
                ry = G[point, 1] - oj[j, 1]
                rz = G[point, 2] - oj[j, 2]
                vx = ey * rz - ez * ry
                vy = ez * rx - ex * rz
                vz = ex * ry - ey * rx
                J[row, j] += sign * (vx * cx + vy * cy + vz * cz)
                if kind == 1 and sign < 0.0:
                    dx, dy, dz = G[_DELTA, 0], G[_DELTA, 1], G[_DELTA, 2]
                    J[row, j] += (ex * (cy * dz - cz * dy) + ey * (cz * dx - cx * dz)
                                  + ez * (cx * dy - cy * dx))
        elif kind != 2:
            J[row, j] += sign * (ex * cx + ey * cy + ez * cz)
        j = parent[j]


@compiled_kernel
def closure_jacobian(mv, Rl, ol, oj, e, G, J):
    """J (m, n) at the link frames Rl, ol, joint points oj and axes e; G scratch."""
    row_loop, row_kind, loop_body = mv.row_loop, mv.row_kind, mv.loop_body
    last = -1
    for r in range(mv.m):
        for j in range(mv.n):
            J[r, j] = 0.0
        l = row_loop[r]
        if l != last:
            _loop_geometry(mv, Rl, ol, l, G)
            last = l
        kind = _row_directions(row_kind[r], G)
        if kind == 2:
            _cross_rows(G, _D, _C, _X)
        _add_path_columns(mv, e, oj, loop_body[l, 1], _PB, 1.0, kind, G, J, r)
        _add_path_columns(mv, e, oj, loop_body[l, 0], _PA, -1.0, kind, G, J, r)


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _angular(t, tdot, body, G, w, wd):
    for r in range(3):
        G[w, r] = t[body, r] if body >= 0 else 0.0
        G[wd, r] = tdot[body, r] if body >= 0 else 0.0


@compiled_kernel
def closure_acceleration_term(mv, Rl, ol, oj, t, tdot, g_base, G, gamma):
    """gamma (m,) = J' qd, from the twists t and twist rates tdot computed at qdd = 0
    with base acceleration -g_base (the gravity the recursion used; it cancels).

      point rows  : (a_Pb - a_Pa) . c
      line rows   : (a_Pb - a_Pa) . c + 2 (v_Pb - v_Pa) . (w_a x c)
                    + delta . (w'_a x c + w_a x (w_a x c))
      orientation : (w'_b - w'_a) . (d x c) + (w_b - w_a) . ((w_b x d) x c + d x (w_a x c))
    """
    row_loop, row_kind, loop_body = mv.row_loop, mv.row_kind, mv.loop_body
    last = -1
    for r in range(mv.m):
        l = row_loop[r]
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
def _closure_at(F, I, ws, q, qd, want, Phi, J, gamma):
    """Fill Phi (want & 1), J (want & 2) and gamma (want & 4) at (q, qd)."""
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    Rj, oj, Rl, ol, e, A, t, tdot = D.Rj, D.oj, D.Rl, D.ol, D.e, D.A, D.t, D.tdot
    denoc.link_quantities(mv, q, Rj, oj, Rl, ol, e, D.d, D.c, D.M, A)
    G = D.G
    if want & 1:
        closure_residual(mv, Rl, ol, G, Phi)
    if want & 2:
        closure_jacobian(mv, Rl, ol, oj, e, G, J)
    if want & 4:
        zero3 = G[_ZERO]
        zero3[:] = 0.0
        denoc.twist_rates(mv, qd, D.zero, zero3, oj, e, A, t, tdot)
        closure_acceleration_term(mv, Rl, ol, oj, t, tdot, zero3, G, gamma)


# ----------------------------------------------------------------------------------
# Public functions
# ----------------------------------------------------------------------------------

def _kernel(model):
    from .dynamics import kernel_of
    return kernel_of(model)


def _closure(kernel, q, qd=None, want=1):
    from .dynamics import joint_vector
    n, m = kernel.n, kernel.m
    q = joint_vector(q, n, "q")
    qd = np.zeros(n) if qd is None else joint_vector(qd, n, "qd")
    Phi, J, gamma = np.zeros(m), np.zeros((m, n)), np.zeros(m)
    if m:
        _closure_at(kernel.F, kernel.I, thread_workspace(n, m), q, qd, want, Phi, J, gamma)
    return Phi, J, gamma


def loop_residual(model, q) -> np.ndarray:
    """Closure residual Phi(q) of every active constraint row, (m,), m and rad.

    Empty for a tree or serial arm. Rows: see `constraint_row_labels`."""
    return _closure(_kernel(model), q, want=1)[0]


def loop_jacobian(model, q) -> np.ndarray:
    """The loop Jacobian J (m, n): J qd is the rate of the closure residual."""
    return _closure(_kernel(model), q, want=2)[1]


def loop_acceleration_term(model, q, qd) -> np.ndarray:
    """gamma = J' qd, (m,): accelerations qdd keep the loops closed iff J qdd + gamma = 0."""
    return _closure(_kernel(model), q, qd, want=4)[2]


_ROW_NAMES = {ROW_POINT_X: "x", ROW_POINT_Y: "y", ROW_POINT_Z: "z", ROW_AXIS_U: "axis u",
              ROW_AXIS_V: "axis v", ROW_LINE_U: "line u", ROW_LINE_V: "line v",
              ROW_ROLL: "roll"}


def constraint_row_labels(model) -> list[str]:
    """A label per active row: "<loop name> <row>", e.g. "C x", "C axis u"."""
    k = _kernel(model)
    names = [loop.name for loop in getattr(model, "loops", ())]
    v = k.views
    return [f"{names[int(l)]} {_ROW_NAMES[int(r)]}" for l, r in zip(v.row_loop, v.row_kind)]


def constraint_row_units(model) -> list[str]:
    """The unit of each active row's cut-joint force: "N" for point and line rows,
    "N m" for the axis and roll rows (and "m" / "rad" for their residuals)."""
    v = _kernel(model).views
    return ["N" if int(r) in (ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z, ROW_LINE_U, ROW_LINE_V)
            else "N m" for r in v.row_kind]


def numerical_rank(A: np.ndarray, tol: float = RANK_TOL) -> int:
    """Rank of A by its singular values (relative threshold; 0 for an empty matrix)."""
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > tol * max(1.0, s[0])))


def mobility(model, q=None) -> int:
    """Degrees of freedom at q (default q_home): n - rank J(q)."""
    k = _kernel(model)
    q = model.q_home if q is None else q
    return k.n - numerical_rank(loop_jacobian(model, q))


def _loop_of_row(model, r: int) -> str:
    k = _kernel(model)
    return model.loops[int(k.views.row_loop[r])].name


def _wrap_angles(q, guess, revolute):
    """Revolute joints back onto the sheet of the guess (within pi of it); a joint that
    is already there is left bit for bit as it is."""
    out = q.copy()
    turns = np.round((out - guess) / (2 * math.pi))
    moved = revolute & (turns != 0)
    out[moved] -= 2 * math.pi * turns[moved]
    return out


def assemble(model, q, *, independent=None, tolerance: float | None = None,
             max_iterations: int = MAX_ASSEMBLY_ITERATIONS) -> np.ndarray:
    """The closed pose nearest to the guess q, holding the independent joints exactly.

    Damped Newton (Levenberg-Marquardt) on Phi(q) = 0 over the dependent joints,
    starting at the guess, with steps limited so that it stays on the branch of the
    guess; revolute joints stay on the guess's angle sheet. `independent` (indices)
    defaults to the model's. Raises LoopClosureError naming the loop with the largest
    residual when the loops cannot be closed. A tree comes back unchanged.
    """
    from .dynamics import joint_vector
    k = _kernel(model)
    n = k.n
    q0 = joint_vector(q, n, "q").copy()
    if k.m == 0:
        return q0
    tol = getattr(getattr(model, "assembly", None), "tolerance", 1e-10) \
        if tolerance is None else tolerance
    held = set(model.independent if independent is None else independent)
    free = np.array([j for j in range(n) if j not in held], dtype=int)
    if free.size == 0:
        Phi = loop_residual(model, q0)
        if np.max(np.abs(Phi)) > tol:
            r = int(np.argmax(np.abs(Phi)))
            raise LoopClosureError(
                f"the loops cannot close with every joint held: residual "
                f"{abs(Phi[r]):.3g}", loop=_loop_of_row(model, r), residual=float(abs(Phi[r])))
        return q0
    revolute = np.array([bool(x) for x in k.views.revolute])
    qk = q0.copy()
    lam = 1e-6
    Phi = loop_residual(model, qk)
    err = float(np.max(np.abs(Phi)))
    if err <= tol:
        return q0  # closed already: the guess itself, bit for bit
    # a step never turns a joint by more than this (rad) or slides it by more than
    # this times the mechanism's size (m): stays on the branch of the guess
    size = max(1e-3, float(np.max(np.abs(k.views.dh[:, :2]))) if n else 1.0)
    max_step = np.where(revolute[free], 0.3, 0.3 * size)
    polish = 2  # Newton converges quadratically: two more steps once within tol
    for _ in range(max_iterations):
        if err <= tol:
            if polish == 0 or err == 0.0:
                return _wrap_angles(qk, q0, revolute)
            polish -= 1
        Jf = loop_jacobian(model, qk)[:, free]
        # minimum-norm damped step: dq = -Jf^T (Jf Jf^T + lam I)^-1 Phi
        JJ = Jf @ Jf.T
        scale = max(1.0, float(np.trace(JJ)) / max(1, JJ.shape[0]))
        dq = -Jf.T @ np.linalg.solve(JJ + lam * scale * np.eye(JJ.shape[0]), Phi)
        big = np.max(np.abs(dq) / max_step)
        if big > 1.0:
            dq /= big
        trial = qk.copy()
        trial[free] += dq
        Phi_t = loop_residual(model, trial)
        err_t = float(np.max(np.abs(Phi_t)))
        if err_t < err:
            qk, Phi, err = trial, Phi_t, err_t
            lam = max(lam / 10.0, 1e-15)
        else:
            lam *= 10.0
            if lam > 1e8:
                break
    if err <= tol:
        return _wrap_angles(qk, q0, revolute)
    r = int(np.argmax(np.abs(Phi)))
    raise LoopClosureError(
        f"cannot be closed from the given joint values: residual {abs(Phi[r]):.3g} "
        f"(m or rad) left after {max_iterations} damped Newton steps; check the link "
        "lengths and the loop's points, or start nearer a closed pose",
        loop=_loop_of_row(model, r), residual=float(abs(Phi[r])))


def _structural_rows(mech, kernel) -> tuple[list[int], list[int]]:
    """The rows whose Jacobian is not identically zero, sampled at q_home and at random
    poses near it (the out-of-plane rows of a planar loop are dropped)."""
    rng = np.random.default_rng(12345)
    q_home = mech.q_home
    revolute = np.array([link.is_revolute for link in mech.links])
    keep = np.zeros(kernel.m, dtype=bool)
    for s in range(4):
        q = q_home.copy()
        if s:
            q = q + np.where(revolute, rng.uniform(-1.0, 1.0, q.size),
                             rng.uniform(-0.1, 0.1, q.size))
        J = loop_jacobian(kernel_model_holder(kernel), q)
        big = max(1e-300, float(np.max(np.abs(J)))) if J.size else 1.0
        keep |= np.max(np.abs(J), axis=1) > STRUCTURAL_ZERO * big
    v = kernel.views
    rows = np.flatnonzero(keep)
    return [int(v.row_loop[r]) for r in rows], [int(v.row_kind[r]) for r in rows]


class kernel_model_holder:
    """A bare object exposing `.kernel` (to call the public functions on a KernelModel)."""

    def __init__(self, kernel) -> None:
        self.kernel = kernel


def close_on_construction(mech):
    """What a Mechanism with loops derives when it is built: the active rows, the closed
    links, the mobility and warnings. Raises LoopClosureError / MechanismError."""
    from dataclasses import replace

    from ..model.mechanism import pack_mechanism
    all_rows = mech.kernel
    # 1. closure must hold in every row, structurally zero ones included (an offset
    #    out of the plane of a planar loop cannot close)
    q_guess = mech.q_home
    loops_named = [loop.name for loop in mech.loops]
    row_loop, row_kind = _structural_rows(mech, all_rows)
    kernel = pack_mechanism(mech, row_loop, row_kind)
    holder = _Closable(mech, kernel)
    try:
        q = assemble(holder, q_guess)
    except LoopClosureError as err:
        raise LoopClosureError(err.reason, loop=err.loop, residual=err.residual) from None
    full = _Closable(mech, all_rows)
    Phi_all = loop_residual(full, q)
    if Phi_all.size and np.max(np.abs(Phi_all)) > 10 * mech.assembly.tolerance:
        r = int(np.argmax(np.abs(Phi_all)))
        raise LoopClosureError(
            f"cannot be closed: a constraint that no joint can change is off by "
            f"{abs(Phi_all[r]):.3g} (m or rad); for a planar loop check that both points "
            "lie in the plane of motion", loop=loops_named[int(all_rows.views.row_loop[r])],
            residual=float(abs(Phi_all[r])))
    # 2. mobility from the rank; the independent joints must fix the pose
    J = loop_jacobian(holder, q)
    rank = numerical_rank(J)
    dof = mech.n - rank
    if dof <= 0:
        raise MechanismError("the mechanism has no mobility: its loops lock every joint "
                             f"(rank of the loop Jacobian {rank} = {mech.n} joints)",
                             field="loop")
    independent = list(mech.independent)
    dependent = [j for j in range(mech.n) if j not in independent]
    if numerical_rank(J[:, dependent]) < len(dependent):
        missing = dof - len(independent)
        hint = _suggest_independent(J, independent, mech.joint_names)
        what = ("assembly.independent" if mech.assembly.independent is not None
                else "actuated")
        if missing > 0:
            reason = (f"the mechanism has {dof} degree(s) of freedom but only "
                      f"{len(independent)} independent joint(s) are given "
                      f"({_names(independent, mech.joint_names) or 'none'}); {hint}")
        else:
            reason = (f"the independent joints {_names(independent, mech.joint_names)} do "
                      f"not fix the pose (the remaining joints can still move); {hint}")
        raise LoopClosureError(reason, field=what)
    if len(independent) > dof:
        raise LoopClosureError(
            f"{len(independent)} independent joints are given but the mechanism has only "
            f"{dof} degree(s) of freedom ({_names(independent, mech.joint_names)})",
            field="assembly.independent" if mech.assembly.independent is not None
            else "actuated")
    # 3. the closed values become the links' values
    warnings = []
    moved = np.abs(q - q_guess)
    if np.max(moved) > mech.assembly.tolerance:
        j = int(np.argmax(moved))
        warnings.append(f"closing the loops moved joint {mech.joint_names[j]!r} by "
                        f"{moved[j]:.3g} (rad or m) from the file's value")
    chains, k = [], 0
    for chain in mech.chains:
        links = []
        for link in chain.links:
            links.append(link.with_q(float(q[k])))
            k += 1
        chains.append(replace(chain, links=tuple(links)))
    closed = _with_chains(mech, tuple(chains))
    kernel = pack_mechanism(closed, row_loop, row_kind)
    return kernel, tuple(chains), dof, warnings


class _Closable:
    """The bits of a Mechanism the closure functions read, with another kernel."""

    def __init__(self, mech, kernel) -> None:
        self.kernel = kernel
        self.loops = mech.loops
        self.assembly = mech.assembly
        self.independent = mech.independent
        self.q_home = mech.q_home


def _with_chains(mech, chains):
    """A shallow stand-in of mech with other chains (for packing, no validation)."""
    class _M:
        pass
    m = _M()
    for key in ("joint_names", "parent", "independent", "loops", "gravity"):
        setattr(m, key, getattr(mech, key))
    m.chains = chains
    return m


def _names(indices, names) -> str:
    return ", ".join(repr(names[i]) for i in indices)


def _suggest_independent(J, independent, names) -> str:
    """Which joints to add: the pivots of a column-pivoted QR of the null space."""
    import scipy.linalg
    # null-space basis of J; independent coordinates = rows of the basis that are
    # linearly independent (column pivoting on its transpose)
    u, s, vt = np.linalg.svd(J)
    rank = int(np.sum(s > RANK_TOL * max(1.0, s[0] if s.size else 1.0)))
    N = vt[rank:].T  # (n, dof)
    if N.shape[1] == 0:
        return "the loops lock the mechanism"
    _, _, piv = scipy.linalg.qr(N.T, pivoting=True)
    chosen = [int(p) for p in piv[:N.shape[1]]]
    return f"for example hold {_names(sorted(chosen), names)}"
