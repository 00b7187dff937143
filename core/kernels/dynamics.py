"""Compiled entry points of the dynamics: one numba call per public call.

Each takes the model's buffers F, I (`core.kernels.layout`), a workspace buffer ws
(`core.kernels.data`) and the call's arrays, cuts the views once and runs the
recursions of `core.kernels.denoc` (inlined into these hot paths). The Python side
(`core.algorithms.dynamics`) checks arguments and raises the errors.

The single-state kernels are closed to argument types they were not compiled for
(`core.kernels.buffers.closed_kernel`): they check lengths and finiteness themselves
and return a code, so that the common call needs no Python-side checks.
"""
from __future__ import annotations

import math

import numpy as np

from . import denoc
from .buffers import closed_kernel, compiled_kernel, inlined_kernel, inner_kernel
from .constrained import constrained_forward_dynamics_inline, constrained_forward_dynamics_kernel
from .data import data_views
from .layout import model_views

#: What the single-state kernels return when an argument has the wrong length, or is
#: not finite, or the result is not finite (an overflow).
WRONG_LENGTH, NOT_FINITE, RESULT_NOT_FINITE = -2, -3, -4

@inner_kernel
def _call_gravity(mv, with_gravity, g):
    """g (3,) = the model's gravity, or zeros."""
    for r in range(3):
        g[r] = mv.gravity[r] if with_gravity else 0.0
    return g


@inlined_kernel
def _all_finite(x):
    """Whether every entry of x is finite (tested one by one: no arithmetic to count, and
    no overflow of a sum to mistake for a bad entry). Inlined: a compiled call passes x
    member by member, which cost the single-state kernels more than the test itself."""
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return False
    return True


@compiled_kernel
def inverse_dynamics_batch(F, I, ws, q, qd, qdd, f_ext, with_gravity, tau):
    """tau[s] = ID(q[s], qd[s], qdd[s]) for every sample s; f_ext (1 or T, n, 6)."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    g = _call_gravity(mv, with_gravity, D.g)
    for s in range(q.shape[0]):
        denoc.link_quantities_inline(mv, D, q[s])
        denoc.inverse_dynamics_inline(mv, D, qd[s], qdd[s], g,
                                      f_ext[s if f_ext.shape[0] > 1 else 0], tau[s])


@closed_kernel
def inverse_dynamics_state_kernel(F, I, ws, q, qd, qdd, tau):
    """RIDIM at one state (q (nq,), qd, qdd (nv,) -> tau (nv,)), no external wrench,
    gravity in: `inverse_dynamics`'s common call, and the kernel `core.lab.op_count`
    counts. Returns -1, or WRONG_LENGTH, NOT_FINITE or RESULT_NOT_FINITE (the caller then
    takes the checked path)."""
    mv = model_views(F, I)
    if q.shape[0] != mv.nq or qd.shape[0] != mv.nv or qdd.shape[0] != mv.nv:
        return WRONG_LENGTH
    if not (_all_finite(q) and _all_finite(qd) and _all_finite(qdd)):
        return NOT_FINITE
    D = data_views(mv, ws)
    denoc.link_quantities_inline(mv, D, q)
    denoc.inverse_dynamics_inline(mv, D, qd, qdd, mv.gravity, D.no_wrench, tau)
    if not _all_finite(tau):
        return RESULT_NOT_FINITE
    return -1


@closed_kernel
def forward_dynamics_state_kernel(F, I, ws, q, qd, tau, qdd):
    """The UDU^T forward dynamics at one state (q (nq,), qd, tau (nv,) -> qdd (nv,)), no
    external wrench: `forward_dynamics`'s common call, and the kernel `core.lab.op_count`
    counts and `core.lab.complexity` times. Returns -1, the singular joint, or
    WRONG_LENGTH, NOT_FINITE or RESULT_NOT_FINITE."""
    mv = model_views(F, I)
    if q.shape[0] != mv.nq or qd.shape[0] != mv.nv or tau.shape[0] != mv.nv:
        return WRONG_LENGTH
    if not (_all_finite(q) and _all_finite(qd) and _all_finite(tau)):
        return NOT_FINITE
    bad = denoc.forward_dynamics_tree_inline(mv, ws, q, qd, tau,
                                             data_views(mv, ws).no_wrench, mv.gravity, qdd)
    if bad == -1 and not _all_finite(qdd):
        return RESULT_NOT_FINITE
    return bad


@closed_kernel
def constrained_state_kernel(F, I, ws, q, qd, tau, qdd):
    """One state of a mechanism with loops, no external wrench (the common call).
    Returns as `forward_dynamics_state_kernel`, or n + a loop row that lost rank."""
    mv = model_views(F, I)
    if q.shape[0] != mv.nq or qd.shape[0] != mv.nv or tau.shape[0] != mv.nv:
        return WRONG_LENGTH
    if not (_all_finite(q) and _all_finite(qd) and _all_finite(tau)):
        return NOT_FINITE
    bad = constrained_forward_dynamics_inline(mv, ws, q, qd, tau, data_views(mv, ws).no_wrench,
                                              qdd)
    if bad == -1 and not _all_finite(qdd):
        return RESULT_NOT_FINITE
    return bad


@compiled_kernel
def forward_dynamics_batch(F, I, ws, q, qd, tau, f_ext, qdd):
    """Row-wise RFDSIM; returns -1 or (sample * n + joint) of the first vanished pivot."""
    mv = model_views(F, I)
    n = mv.n
    for s in range(q.shape[0]):
        bad = denoc.forward_dynamics_tree(mv, ws, q[s], qd[s], tau[s],
                                          f_ext[s if f_ext.shape[0] > 1 else 0], mv.gravity,
                                          qdd[s])
        if bad >= 0:
            return s * n + bad
    return -1


@compiled_kernel
def constrained_batch(F, I, ws, q, qd, tau, f_ext, qdd, lam):
    """Row-wise constrained FD; lam (T, m). Returns -1, or sample * (n + m) + the
    kernel's code (a singular joint j < n, or n + an inconsistent row)."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    for s in range(q.shape[0]):
        bad = constrained_forward_dynamics_kernel(mv, ws, q[s], qd[s], tau[s],
                                                  f_ext[s if f_ext.shape[0] > 1 else 0],
                                                  qdd[s])
        if bad >= 0:
            return s * (mv.n + mv.m) + bad
        for r in range(mv.m):
            lam[s, r] = D.lam[r]
    return -1


@compiled_kernel
def mass_matrix_kernel(F, I, ws, q, GIM):
    """GIM from composite bodies (seed 000 eqs. 23b-24); leaves M~ in D.M_tilde."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    denoc.link_quantities(mv, D, q)
    denoc.composite_inertias(mv, D)
    denoc.gim_from_composite(mv, D, GIM)


@compiled_kernel
def cholesky_solve(A, b, x):
    """Solve A x = b by Cholesky A = L L^T, in place on A (O(n^3)). Returns -1 or the bad row."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if not s > 1e-13 * abs(A[j, j]) or not s > 0.0:
            return j
        A[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / A[j, j]
    for i in range(n):  # L y = b
        s = b[i]
        for k in range(i):
            s -= A[i, k] * x[k]
        x[i] = s / A[i, i]
    for i in range(n - 1, -1, -1):  # L^T x = y
        s = x[i]
        for k in range(i + 1, n):
            s -= A[k, i] * x[k]
        x[i] = s / A[i, i]
    return -1


@compiled_kernel
def forward_dynamics_composite_kernel(F, I, ws, q, qd, tau, f_ext, GIM, qdd):
    """Forward dynamics by the composite-body method (`forward_dynamics(...,
    method="composite")`, and what `core.lab.op_count` / `core.lab.complexity` compare
    with): GIM from composite bodies (eqs. 23b-24), phi = tau - ID(q, qd, 0), Cholesky
    solve."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    phi = D.phi
    denoc.link_quantities(mv, D, q)
    denoc.inverse_dynamics_kernel(mv, D, qd, D.zero, mv.gravity, f_ext[0], phi)
    for k in range(mv.nv):
        phi[k] = tau[k] - phi[k]  # seed 001 Sec 2.4.2: phi = tau - ID(q, qd, 0)
    denoc.composite_inertias(mv, D)
    denoc.gim_from_composite(mv, D, GIM)
    return cholesky_solve(GIM, phi, qdd)


@compiled_kernel
def energy_batch(F, I, ws, q, qd, out):
    """out[s] = (kinetic, potential) at sample s."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    for s in range(q.shape[0]):
        denoc.link_quantities(mv, D, q[s])
        denoc.twists(mv, D, qd[s])
        T, U = denoc.energy_kernel(mv, D, mv.gravity, qd[s])
        out[s, 0] = T
        out[s, 1] = U


@compiled_kernel
def momentum_batch(F, I, ws, q, qd, out):
    """out[s] = [mass centre, linear momentum, angular momentum about the mass centre]
    (9,) at sample s (`denoc.momentum_kernel`)."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    for s in range(q.shape[0]):
        denoc.link_quantities(mv, D, q[s])
        denoc.twists(mv, D, qd[s])
        denoc.momentum_kernel(mv, D, out[s])


@compiled_kernel
def articulated_kernel(F, I, ws, q):
    """The articulated-body inertias at q into ws; -1 or the joint whose pivot vanished."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    denoc.link_quantities(mv, D, q)
    return denoc.articulated_inertias(mv, D)


@compiled_kernel
def frames_kernel(F, I, q, Rj, oj, Rl, ol):
    """The joint frames (Rj, oj) and link frames (Rl, ol) at q (forward kinematics)."""
    denoc.dh_frames(model_views(F, I), q, Rj, oj, Rl, ol)


@compiled_kernel
def state_quantities_kernel(F, I, ws, q, qd, qdd, with_gravity):
    """The workspace at (q, qd, qdd): link quantities (frames, axes, extended masses,
    eq. 6), twists and twist rates (eqs. 11c, 17), with the model's gravity or none."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    denoc.link_quantities(mv, D, q)
    denoc.twist_rates(mv, D, qd, qdd, _call_gravity(mv, with_gravity, D.g))
