"""Forward dynamics with loops: the constrained system solved with the O(n) UDU^T factors.

The equations of motion of the spanning tree with the loops' Lagrange multipliers
lambda (Jalon & Bayo eq. 8.114; Saha seed 001 eqs. 40-42 with N^T):

    M qdd + h = tau + J^T lambda,     J qdd + gamma = 0

are solved without forming or inverting M:

    qdd_free = FD_tree(q, qd, tau)               RFDSIM, eqs. 18-21 (UDU^T)
    Y_r      = M^-1 J_r^T                        one UDU^T solve per constraint row
    (J Y^T) lambda = -gamma - J qdd_free         the m x m Delassus system
    qdd      = qdd_free + Y^T lambda

The Delassus matrix J M^-1 J^T is positive semi-definite; rows that depend on others
(the Bricard's sixth closure row, or any loop at a pose where its rows lose rank) give
vanishing pivots and are dropped by a diagonally pivoted Cholesky factorisation: their
multipliers are zero and, the system being consistent, their rows hold anyway.

lambda_r is the cut joint's force (N) or moment (N m) along row r's direction, exerted
on the loop's second link by its first (`core.algorithms.loops.constraint_row_labels`).

`project_onto_loops` is the post-step projection that keeps the loops closed while a
simulation integrates: Gauss-Newton steps on Phi(q) = 0 and a velocity projection on
J qd = 0, each the least-norm correction.
"""
from __future__ import annotations

import numpy as np

from . import denoc
from .buffers import compiled_kernel, inline_twin, inlined_kernel, inner_kernel
from .charts import retract
from .data import data_views
from .loops import (closure_acceleration_inline, closure_jacobian, closure_jacobian_inline,
                    closure_residual)

#: Relative pivot below which a Delassus row is taken as redundant.
REDUNDANT_PIVOT = 1e-13
#: A dropped row whose acceleration constraint is off by more than this (relative to
#: its terms) marks a singular configuration.
INCONSISTENT_ROW = 1e-8


@inlined_kernel
def pivoted_cholesky_solve(A, b, x, keep, y, tol):
    """Solve the symmetric positive semi-definite A x = b by Cholesky with diagonal
    pivoting, in place on A (y (m,) is scratch). Rows whose pivot falls below
    tol * (largest diagonal) are dropped (x = 0 there, keep = 0). Returns the rank.
    The pivot order is kept in `keep` while factoring (as floats; m is small)."""
    m = A.shape[0]
    perm = keep
    for i in range(m):
        perm[i] = i
    dmax = 0.0
    for i in range(m):
        dmax = max(dmax, A[i, i])
        x[i] = 0.0
    rank = 0
    for k in range(m):
        # choose the largest remaining diagonal (after the updates)
        best = -1.0
        p = k
        for i in range(k, m):
            ii = int(perm[i])
            s = A[ii, ii]
            for j in range(k):
                s -= A[ii, int(perm[j])] ** 2
            if s > best:
                best = s
                p = i
        if not best > tol * dmax or dmax == 0.0:
            break
        perm[k], perm[p] = perm[p], perm[k]
        kk = int(perm[k])
        # L[kk, kk] and the column below (stored in A[row, perm[k]] for the rows)
        d = np.sqrt(best)
        A[kk, kk] = d
        for i in range(k + 1, m):
            ii = int(perm[i])
            s = A[ii, kk]
            for j in range(k):
                s -= A[ii, int(perm[j])] * A[kk, int(perm[j])]
            A[ii, kk] = s / d
        rank += 1
    # L y = P b (first `rank` rows), then L^T z = y; x[perm] = z
    for i in range(rank):
        ii = int(perm[i])
        s = b[ii]
        for j in range(i):
            s -= A[ii, int(perm[j])] * y[j]
        y[i] = s / A[ii, ii]
    for i in range(rank - 1, -1, -1):
        ii = int(perm[i])
        s = y[i]
        for j in range(i + 1, rank):
            jj = int(perm[j])
            s -= A[jj, ii] * x[jj]
        x[ii] = s / A[ii, ii]
    # keep: 1 for the rows kept, 0 for the redundant ones
    for i in range(m):
        y[i] = 0.0
    for i in range(rank):
        y[int(perm[i])] = 1.0
    for i in range(m):
        keep[i] = y[i]
    return rank


@inner_kernel
def constrained_forward_dynamics_kernel(mv, ws, q, qd, tau, f_ext, qdd):
    """qdd (nv,) that keeps the loops closed under joint forces tau and link wrenches
    f_ext (n, 6), on the data of the workspace buffer ws (which then holds the
    multipliers in lam; the buffer, not the fields, as `denoc.forward_dynamics_tree`). Returns -1; or the 0-based tree
    joint whose articulated pivot vanished; or n + r when row r was dropped as redundant
    but its acceleration constraint does not hold (the rows lose rank at this pose only:
    no acceleration keeps the loops closed, a singular configuration)."""
    n, m = mv.nv, mv.m
    D = data_views(mv, ws)
    J, Y, gamma, qdd_free, rhs, delassus, lam = D.J, D.Y, D.gamma, D.qdd_free, D.rhs, \
        D.delassus, D.lam
    bad = denoc.forward_dynamics_tree_inline(mv, ws, q, qd, tau, f_ext, mv.gravity, qdd_free)
    if bad >= 0:
        return bad
    # J and gamma at (q, qd); D.tdot is the bias pass's (qdd = 0, base accelerating by -g)
    closure_jacobian_inline(mv, D, J)
    closure_acceleration_inline(mv, D, mv.gravity, gamma)
    # Y_r = M^-1 J_r^T with the UDU^T factors already in D
    for r in range(m):
        denoc.udu_solve_inline(mv, D, J[r], Y[r])
    # Delassus system (J M^-1 J^T) lambda = -gamma - J qdd_free
    for r in range(m):
        s = -gamma[r]
        for j in range(n):
            s -= J[r, j] * qdd_free[j]
        rhs[r] = s
        for c in range(r, m):
            acc = 0.0
            for j in range(n):
                acc += J[r, j] * Y[c, j]
            delassus[r, c] = acc
            delassus[c, r] = acc
    pivoted_cholesky_solve(delassus, rhs, lam, D.keep, D.chol, REDUNDANT_PIVOT)
    for j in range(n):
        s = qdd_free[j]
        for r in range(m):
            s += Y[r, j] * lam[r]
        qdd[j] = s
    # a dropped row must hold by itself (it does when it is truly redundant)
    keep = D.keep
    for r in range(m):
        if keep[r] == 0.0:
            s = gamma[r]
            size = abs(gamma[r])
            for j in range(n):
                s += J[r, j] * qdd[j]
                size += abs(J[r, j] * qdd[j])
            if abs(s) > INCONSISTENT_ROW * (1.0 + size):
                return mv.n + r
    return -1


#: The closed-chain forward dynamics inlined into the single-state kernel
#: (`core.kernels.dynamics.constrained_state_kernel`): called, it is passed the model views
#: word by word, as the tree's forward dynamics it calls (inlined into it), a third of a
#: four-bar's call.
# inlined by LLVM into the integrator's right-hand side and the single-state call: by
# numba's IR inliner it was typed again in every kernel the right-hand side is inlined
# into (a fresh compile of every kernel 228 -> 149 s of CPU)
constrained_forward_dynamics_inline = inline_twin(constrained_forward_dynamics_kernel,
                                                  llvm=True)


def loops_of(m: int) -> bool | None:
    """The `loops` argument of the integrator's kernels for a model of m loop rows: True,
    or None for a model without loops, whose kernels numba then compiles without the
    closed chains' code (`closed_forward_dynamics`, `project_if_loops`): a branch on an
    argument typed None is pruned when compiling. A tree's first run compiled the closed
    chains' forward dynamics and projection into every kernel of the integrator (LLVM
    inlines them, numba links a copy of what a kernel calls into each): 59.5 s of CPU for
    a PUMA's first free fall, 27 s without them."""
    return True if m > 0 else None


@inlined_kernel
def closed_forward_dynamics(loops, mv, ws, q, qd, tau, f_ext, qdd):
    """`constrained_forward_dynamics_inline` (loops True, `loops_of`); for loops None
    nothing of it is compiled. Called only where mv.m > 0: a caller that passed None for
    a model with loops gets qdd NaN (its run stops on a non-finite state), never a tree's
    motion with the loops left open."""
    if loops is None:
        qdd[:] = np.nan
        return -1
    return constrained_forward_dynamics_inline(mv, ws, q, qd, tau, f_ext, qdd)


@compiled_kernel
def _least_norm_correction(J, v, rhs, delassus, lam, keep, y, out):
    """out = J^T (J J^T)^+ v: the least-norm x with J x = v (rhs, delassus, lam, keep, y:
    work arrays of the m rows)."""
    m, n = J.shape
    for r in range(m):
        rhs[r] = v[r]
        for c in range(r, m):
            acc = 0.0
            for j in range(n):
                acc += J[r, j] * J[c, j]
            delassus[r, c] = acc
            delassus[c, r] = acc
    pivoted_cholesky_solve(delassus, rhs, lam, keep, y, 1e-12)
    for j in range(n):
        s = 0.0
        for r in range(m):
            s += J[r, j] * lam[r]
        out[j] = s


@inner_kernel
def project_onto_loops(mv, ws, q, qd, tol):
    """Move the state (q (nq,), qd (nv,)) back onto Phi(q) = 0 and J qd = 0 when it has
    drifted by more than tol (m, rad, and per second), on the data of the workspace
    buffer ws; q moves on its manifold (`core.kernels.charts.retract`). Returns True if
    the state changed."""
    nv, m = mv.nv, mv.m
    D = data_views(mv, ws)
    rhs, delassus, lam, keep, chol = D.rhs, D.delassus, D.lam, D.keep, D.chol
    dq, Phi, J, Jqd = D.dq, D.Phi, D.J, D.Jqd
    changed = False
    for _ in range(4):
        denoc.link_quantities(mv, D, q)
        closure_residual(mv, D, q, Phi)
        err = 0.0
        for r in range(m):
            err = max(err, abs(Phi[r]))
        if err <= tol:
            break
        closure_jacobian(mv, D, J)
        _least_norm_correction(J, Phi, rhs, delassus, lam, keep, chol, dq)
        if mv.nq == nv:
            for j in range(nv):
                q[j] -= dq[j]
        else:
            retract(mv, q, dq, -1.0)
        changed = True
    if changed:
        denoc.link_quantities(mv, D, q)
    closure_jacobian(mv, D, J)
    err = 0.0
    for r in range(m):
        s = 0.0
        for j in range(nv):
            s += J[r, j] * qd[j]
        Jqd[r] = s
        err = max(err, abs(s))
    if err > tol:
        _least_norm_correction(J, Jqd, rhs, delassus, lam, keep, chol, dq)
        for j in range(nv):
            qd[j] -= dq[j]
        changed = True
    return changed


@inlined_kernel
def project_if_loops(loops, mv, ws, q, qd, tol):
    """`project_onto_loops` (loops True, `loops_of`); for loops None nothing is compiled
    and False returned (the state is left as it is)."""
    if loops is None:
        return False
    return project_onto_loops(mv, ws, q, qd, tol)
