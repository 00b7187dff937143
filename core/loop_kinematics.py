"""Loop closure in joint coordinates: residual, Jacobian, acceleration term, assembly.

A loop joint between link a (point P_a, fixed on a) and link b (or the base) is the
cut joint of a closed chain (Jalon & Bayo Sec 8.3; Saha seed 001 Sec 4). Its closure
is a few scalar rows Phi(q) = 0 (`core.kernel_model`, ROW_*): the points coincide
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

from . import denoc
from .errors import LoopClosureError, MechanismError
from .kernel_model import (ROW_AXIS_U, ROW_AXIS_V, ROW_LINE_U, ROW_LINE_V, ROW_POINT_X,
                           ROW_POINT_Y, ROW_POINT_Z, ROW_ROLL, model_views)
from .workspace import data_views, thread_workspace

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

@njit(cache=True, inline="always")
def _frame_vector(Rl, body, local, out):
    """out = R_body local (a direction fixed on `body`; the base for body < 0)."""
    if body < 0:
        for r in range(3):
            out[r] = local[r]
    else:
        for r in range(3):
            out[r] = Rl[body, r, 0] * local[0] + Rl[body, r, 1] * local[1] \
                + Rl[body, r, 2] * local[2]


@njit(cache=True, inline="always")
def _frame_point(Rl, ol, body, local, out):
    """out = o_body + R_body local (a point fixed on `body`)."""
    _frame_vector(Rl, body, local, out)
    if body >= 0:
        for r in range(3):
            out[r] += ol[body, r]


@njit(cache=True)
def _loop_geometry(mv, Rl, ol, l, G):
    """G (8, 3): P_a, P_b, u, v (on a), z_b, x_b (on b), P_b - P_a, scratch."""
    a = mv.loop_body[l, 0]
    b = mv.loop_body[l, 1]
    _frame_point(Rl, ol, a, mv.loop_point[l, 0], G[0])
    _frame_point(Rl, ol, b, mv.loop_point[l, 1], G[1])
    _frame_vector(Rl, a, mv.loop_u[l], G[2])
    _frame_vector(Rl, a, mv.loop_v[l], G[3])
    _frame_vector(Rl, b, mv.loop_axis[l, 1], G[4])
    _frame_vector(Rl, b, mv.loop_x[l], G[5])
    for r in range(3):
        G[6, r] = G[1, r] - G[0, r]


@njit(cache=True, inline="always")
def _dot3(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]


@njit(cache=True)
def _row_directions(kind, G, c, dvec):
    """For an orientation row (c fixed on a) . (d fixed on b): fill c and d; for a point
    or line row: c is the direction the point difference is projected on.
    Returns 0 for point rows (fixed base direction), 1 line rows (c turns with a),
    2 orientation rows."""
    if kind <= ROW_POINT_Z:
        for r in range(3):
            c[r] = 1.0 if r == kind else 0.0
        return 0
    if kind == ROW_LINE_U or kind == ROW_LINE_V:
        src = 2 if kind == ROW_LINE_U else 3
        for r in range(3):
            c[r] = G[src, r]
        return 1
    # orientation rows: c on a, d on b
    src_c = 2 if kind == ROW_AXIS_U else 3  # u . z_b, v . z_b, v . x_b (roll)
    src_d = 5 if kind == ROW_ROLL else 4
    for r in range(3):
        c[r] = G[src_c, r]
        dvec[r] = G[src_d, r]
    return 2


@njit(cache=True)
def closure_residual(mv, Rl, ol, Phi):
    """Phi (m,) at the link frames Rl, ol (filled by link_quantities)."""
    G = np.empty((8, 3))
    c = np.empty(3)
    dv = np.empty(3)
    row_loop, row_kind = mv.row_loop, mv.row_kind
    last = -1
    for r in range(mv.m):
        l = row_loop[r]
        if l != last:
            _loop_geometry(mv, Rl, ol, l, G)
            last = l
        kind = _row_directions(row_kind[r], G, c, dv)
        if kind == 2:
            Phi[r] = _dot3(c, dv)
        else:
            Phi[r] = _dot3(G[6], c)


@njit(cache=True)
def _add_path_columns(mv, axes, origins, body, P, sign, kind, c, dxc, delta, Jrow):
    """Add sign * (the row's rate per unit qd_j) for every joint j on body's path to
    the base. P: the loop point on `body`; kind as _row_directions; dxc = d x c
    (orientation rows); delta = P_b - P_a (line rows, whose c turns with body a)."""
    revolute, parent = mv.revolute, mv.parent
    j = body
    while j >= 0:
        e = axes[j]
        if revolute[j]:
            if kind == 2:
                # (w_b - w_a) . (d x c)
                Jrow[j] += sign * _dot3(e, dxc)
            else:
                # v_P = e x (P - O_j); rate = v_P . c
                rx = P[0] - origins[j, 0]
                ry = P[1] - origins[j, 1]
                rz = P[2] - origins[j, 2]
                vx = e[1] * rz - e[2] * ry
                vy = e[2] * rx - e[0] * rz
                vz = e[0] * ry - e[1] * rx
                Jrow[j] += sign * (vx * c[0] + vy * c[1] + vz * c[2])
                if kind == 1 and sign < 0.0:
                    # line rows: + w_a . (c x delta) from the turning direction c
                    cx = c[1] * delta[2] - c[2] * delta[1]
                    cy = c[2] * delta[0] - c[0] * delta[2]
                    cz = c[0] * delta[1] - c[1] * delta[0]
                    Jrow[j] += e[0] * cx + e[1] * cy + e[2] * cz
        else:
            if kind != 2:
                Jrow[j] += sign * _dot3(e, c)
        j = parent[j]


@njit(cache=True)
def closure_jacobian(mv, Rl, ol, oj, e, J):
    """J (m, n) at the link frames Rl, ol, joint points oj and axes e."""
    G = np.empty((8, 3))
    c = np.empty(3)
    dv = np.empty(3)
    dxc = np.empty(3)
    row_loop, row_kind, loop_body = mv.row_loop, mv.row_kind, mv.loop_body
    last = -1
    for r in range(mv.m):
        for j in range(mv.n):
            J[r, j] = 0.0
        l = row_loop[r]
        if l != last:
            _loop_geometry(mv, Rl, ol, l, G)
            last = l
        kind = _row_directions(row_kind[r], G, c, dv)
        if kind == 2:
            dxc[0] = dv[1] * c[2] - dv[2] * c[1]
            dxc[1] = dv[2] * c[0] - dv[0] * c[2]
            dxc[2] = dv[0] * c[1] - dv[1] * c[0]
        _add_path_columns(mv, e, oj, loop_body[l, 1], G[1], 1.0, kind, c, dxc, G[6], J[r])
        _add_path_columns(mv, e, oj, loop_body[l, 0], G[0], -1.0, kind, c, dxc, G[6], J[r])


@njit(cache=True, inline="always")
def _point_motion(t, tdot, oj, body, P, g_base, v, acc):
    """Velocity v and acceleration acc of the material point of `body` at P, from the
    twist t and twist rate tdot at O_body (the base: at rest, accelerating by -g_base
    as the recursions' tdot_base = [0; -g] does)."""
    if body < 0:
        for r in range(3):
            v[r] = 0.0
            acc[r] = -g_base[r]
        return
    w = t[body]
    wd = tdot[body]
    rx = P[0] - oj[body, 0]
    ry = P[1] - oj[body, 1]
    rz = P[2] - oj[body, 2]
    # v_P = v_O + w x r
    cx = w[1] * rz - w[2] * ry
    cy = w[2] * rx - w[0] * rz
    cz = w[0] * ry - w[1] * rx
    v[0] = w[3] + cx
    v[1] = w[4] + cy
    v[2] = w[5] + cz
    # a_P = a_O + w' x r + w x (w x r)
    acc[0] = wd[3] + (wd[1] * rz - wd[2] * ry) + (w[1] * cz - w[2] * cy)
    acc[1] = wd[4] + (wd[2] * rx - wd[0] * rz) + (w[2] * cx - w[0] * cz)
    acc[2] = wd[5] + (wd[0] * ry - wd[1] * rx) + (w[0] * cy - w[1] * cx)


@njit(cache=True, inline="always")
def _angular(t, tdot, body, out_w, out_wd):
    if body < 0:
        for r in range(3):
            out_w[r] = 0.0
            out_wd[r] = 0.0
    else:
        for r in range(3):
            out_w[r] = t[body, r]
            out_wd[r] = tdot[body, r]


@njit(cache=True, inline="always")
def _cross(x, y, out):
    a0 = x[1] * y[2] - x[2] * y[1]
    a1 = x[2] * y[0] - x[0] * y[2]
    a2 = x[0] * y[1] - x[1] * y[0]
    out[0] = a0
    out[1] = a1
    out[2] = a2


@njit(cache=True)
def closure_acceleration_term(mv, Rl, ol, oj, t, tdot, g_base, gamma):
    """gamma (m,) = J' qd, from the twists t and twist rates tdot computed at qdd = 0
    with base acceleration -g_base (the gravity the recursion used; it cancels).

      point rows  : (a_Pb - a_Pa) . c
      line rows   : (a_Pb - a_Pa) . c + 2 (v_Pb - v_Pa) . (w_a x c)
                    + delta . (w'_a x c + w_a x (w_a x c))
      orientation : (w'_b - w'_a) . (d x c) + (w_b - w_a) . ((w_b x d) x c + d x (w_a x c))
    """
    G = np.empty((8, 3))
    c = np.empty(3)
    dv = np.empty(3)
    S = np.empty((10, 3))
    va, aa, vb, ab = S[0], S[1], S[2], S[3]
    wa, wda, wb, wdb = S[4], S[5], S[6], S[7]
    x, y = S[8], S[9]
    row_loop, row_kind, loop_body = mv.row_loop, mv.row_kind, mv.loop_body
    last = -1
    for r in range(mv.m):
        l = row_loop[r]
        a = loop_body[l, 0]
        b = loop_body[l, 1]
        if l != last:
            _loop_geometry(mv, Rl, ol, l, G)
            _point_motion(t, tdot, oj, a, G[0], g_base, va, aa)
            _point_motion(t, tdot, oj, b, G[1], g_base, vb, ab)
            _angular(t, tdot, a, wa, wda)
            _angular(t, tdot, b, wb, wdb)
            last = l
        kind = _row_directions(row_kind[r], G, c, dv)
        if kind == 0:
            gamma[r] = (ab[0] - aa[0]) * c[0] + (ab[1] - aa[1]) * c[1] + (ab[2] - aa[2]) * c[2]
        elif kind == 1:
            s = (ab[0] - aa[0]) * c[0] + (ab[1] - aa[1]) * c[1] + (ab[2] - aa[2]) * c[2]
            _cross(wa, c, x)  # c' = w_a x c
            s += 2.0 * ((vb[0] - va[0]) * x[0] + (vb[1] - va[1]) * x[1] + (vb[2] - va[2]) * x[2])
            _cross(wa, x, y)  # w_a x (w_a x c)
            _cross(wda, c, x)  # w'_a x c
            s += _dot3(G[6], x) + _dot3(G[6], y)
            gamma[r] = s
        else:
            _cross(dv, c, x)  # d x c
            s = ((wdb[0] - wda[0]) * x[0] + (wdb[1] - wda[1]) * x[1]
                 + (wdb[2] - wda[2]) * x[2])
            _cross(wb, dv, y)  # d' = w_b x d
            _cross(y, c, x)  # d' x c
            _cross(wa, c, y)  # c' = w_a x c
            _cross(dv, y, y)  # d x c'
            s += ((wb[0] - wa[0]) * (x[0] + y[0]) + (wb[1] - wa[1]) * (x[1] + y[1])
                  + (wb[2] - wa[2]) * (x[2] + y[2]))
            gamma[r] = s


@njit(cache=True)
def _closure_at(F, I, ws, q, qd, want, Phi, J, gamma):
    """Fill Phi (want & 1), J (want & 2) and gamma (want & 4) at (q, qd)."""
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    Rj, oj, Rl, ol, e, A, t, tdot = D.Rj, D.oj, D.Rl, D.ol, D.e, D.A, D.t, D.tdot
    denoc.link_quantities(mv, q, Rj, oj, Rl, ol, e, D.d, D.c, D.M, A)
    if want & 1:
        closure_residual(mv, Rl, ol, Phi)
    if want & 2:
        closure_jacobian(mv, Rl, ol, oj, e, J)
    if want & 4:
        zero3 = np.zeros(3)
        denoc.twist_rates(mv, qd, D.zero, zero3, oj, e, A, t, tdot)
        closure_acceleration_term(mv, Rl, ol, oj, t, tdot, zero3, gamma)


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

    from .mechanism import pack_mechanism
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
    n = J.shape[1]
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
