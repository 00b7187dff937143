"""Per-call state of the kernels: one flat float buffer cut into the named fields of `Data`.

As Pinocchio's Data and MuJoCo's mjData: the model is never written; everything an
algorithm computes at one state lives here, one field per quantity, documented once
below with its shape and the equation that fills it. Each thread owns its buffers
(`thread_workspace`), so calls may run in parallel threads.

Fields (n joints, m active constraint rows; base frame throughout):

    Rj (n, 3, 3), oj (n, 3)  DH frame 0 of each joint's row (joint k turns about / slides
                             along its z); O_k = oj[k]                   (App. A)
    Rl (n, 3, 3), ol (n, 3)  each link's own frame (the frame its DH row ends in)
    e (n, 3)     unit vector of joint axis k                              (eq. 11a)
    d (n, 3)     O_k -> mass centre C_k                                   (eq. 2a)
    c (n, 3)     mass centre C_k
    M (n, 6, 6)  extended mass matrix of link k about O_k                 (eq. 6)
    A (n, 3)     a_{k,λ} = O_λ - O_k (λ = parent(k)), the vector of the twist
                 propagation A_{k,λ} = [[1, 0], [a x 1, 1]]              (eq. 11d)
    t, tdot (n, 6)   twists and twist rates at O_k                       (eqs. 11c, 17)
    w (n, 6)     wrenches at O_k (inertia + children)                     (Sec 2.4.1)
    M_tilde (n, 6, 6)  composite-body mass matrices                       (seed 000 eq. 23b)
    M_hat (n, 6, 6), psi_hat (n, 6), m_hat (n,)  articulated-body inertias (eqs. 19c-d)
    eta (n, 6), phi_hat (n,), mu (n, 6), phi (n,)  UDU^T solve            (eqs. 19a-21)
    zero (n,)    zeros (qdd = 0 for the bias forces); never written
    no_wrench (n, 6)  zeros (no external wrench on any link); never written
    tau (n,)     applied joint forces (simulation right-hand side): tau - c qd + stops
    stop (n,)    the end stops' share of tau                 (core.algorithms.dynamics, stop_force)
    tmp66 (2, 6, 6), s3 (8, 3), s6 (4, 6)  scratch
    G (20, 3)    scratch of the loop kernels (core.algorithms.loops names its rows)
    Phi (m,)     loop-closure residual (m, rad)                           (Jalon 8.3)
    J (m, n)     loop Jacobian: J qd = time derivative of Phi
    gamma (m,)   J' qd: the rows' second derivative at qdd = 0, so J qdd + gamma = 0
    Y (m, n)     rows of M^-1 J^T (m UDU^T solves)
    delassus (m, m)  J M^-1 J^T
    lam (m,)     Lagrange multipliers of the active rows (cut-joint forces)
    rhs (m,)     right-hand side of the Delassus system
    qdd_free (n,)    tree accelerations without the loops
    keep (m,)    1 where the Delassus pivot of a row is kept, 0 for a redundant row
"""
from __future__ import annotations

import threading
from collections import namedtuple

import numpy as np

from numba import njit

from .buffers import compiled_kernel, view

Data = namedtuple("Data", (
    "Rj", "oj", "Rl", "ol", "e", "d", "c", "M", "A", "t", "tdot", "w", "M_tilde", "M_hat",
    "psi_hat", "m_hat", "eta", "phi_hat", "mu", "phi", "zero", "no_wrench", "tau", "stop", "tmp66",
    "s3", "s6", "G", "Phi", "J", "gamma", "Y", "delassus", "lam", "rhs", "qdd_free", "keep"))


@compiled_kernel
def data_size(n, m):
    """Floats needed by `data_views` for n joints and m constraint rows."""
    return n * (2 * 9 + 6 * 3 + 3 * 36 + 7 * 6 + 7) + 72 + 24 + 24 + 60 + m * (5 + 2 * n + m)


@compiled_kernel
def data_views(ws, n, m):
    """Cut the flat buffer `ws` (at least data_size(n, m) floats) into the fields of Data
    (`core.kernels.buffers.view`: no copies, no reference counting; ws must outlive them)."""
    i = 0
    Rj = view(ws, i, (n, 3, 3)); i += 9 * n
    Rl = view(ws, i, (n, 3, 3)); i += 9 * n
    oj = view(ws, i, (n, 3)); i += 3 * n
    ol = view(ws, i, (n, 3)); i += 3 * n
    e = view(ws, i, (n, 3)); i += 3 * n
    d = view(ws, i, (n, 3)); i += 3 * n
    c = view(ws, i, (n, 3)); i += 3 * n
    A = view(ws, i, (n, 3)); i += 3 * n
    M = view(ws, i, (n, 6, 6)); i += 36 * n
    M_tilde = view(ws, i, (n, 6, 6)); i += 36 * n
    M_hat = view(ws, i, (n, 6, 6)); i += 36 * n
    t = view(ws, i, (n, 6)); i += 6 * n
    tdot = view(ws, i, (n, 6)); i += 6 * n
    w = view(ws, i, (n, 6)); i += 6 * n
    psi_hat = view(ws, i, (n, 6)); i += 6 * n
    eta = view(ws, i, (n, 6)); i += 6 * n
    mu = view(ws, i, (n, 6)); i += 6 * n
    no_wrench = view(ws, i, (n, 6)); i += 6 * n  # never written: all zeros
    m_hat = view(ws, i, (n,)); i += n
    phi_hat = view(ws, i, (n,)); i += n
    phi = view(ws, i, (n,)); i += n
    zero = view(ws, i, (n,)); i += n  # never written: a new buffer is all zeros
    tau = view(ws, i, (n,)); i += n
    stop = view(ws, i, (n,)); i += n
    qdd_free = view(ws, i, (n,)); i += n
    tmp66 = view(ws, i, (2, 6, 6)); i += 72
    s3 = view(ws, i, (8, 3)); i += 24
    s6 = view(ws, i, (4, 6)); i += 24
    G = view(ws, i, (20, 3)); i += 60
    Phi = view(ws, i, (m,)); i += m
    gamma = view(ws, i, (m,)); i += m
    lam = view(ws, i, (m,)); i += m
    rhs = view(ws, i, (m,)); i += m
    keep = view(ws, i, (m,)); i += m
    J = view(ws, i, (m, n)); i += m * n
    Y = view(ws, i, (m, n)); i += m * n
    delassus = view(ws, i, (m, m)); i += m * m
    return Data(Rj, oj, Rl, ol, e, d, c, M, A, t, tdot, w, M_tilde, M_hat, psi_hat, m_hat, eta,
                phi_hat, mu, phi, zero, no_wrench, tau, stop, tmp66, s3, s6, G, Phi, J, gamma, Y,
                delassus, lam, rhs, qdd_free, keep)


_local = threading.local()


def new_workspace(n: int, m: int = 0) -> np.ndarray:
    """A fresh buffer for n joints and m constraint rows."""
    return np.zeros(data_size(n, m))


def thread_workspace(n: int, m: int = 0) -> np.ndarray:
    """This thread's reusable buffer for models of n joints and m constraint rows."""
    try:
        return _local.pool[(n, m)]
    except (AttributeError, KeyError):
        pool = _local.__dict__.setdefault("pool", {})
        ws = pool[(n, m)] = new_workspace(n, m)
        return ws


def data_of(ws: np.ndarray, n: int, m: int = 0) -> Data:
    """The fields of a buffer as numpy copies, from Python (for inspection; the
    kernels' views hold raw pointers, unsafe to keep in Python)."""
    return Data(*(a.copy() for a in _data_views_from_python(ws, n, m)))


@njit(cache=True)
def _data_views_from_python(ws, n, m):
    """`data_views` for `data_of` (compiled with reference counting, which numba needs
    to hand arrays to Python)."""
    return data_views(ws, n, m)
