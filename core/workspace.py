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
    tau (n,)     applied joint forces (simulation right-hand side)
    tmp66 (2, 6, 6), s3 (8, 3), s6 (4, 6)  scratch
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

Data = namedtuple("Data", (
    "Rj", "oj", "Rl", "ol", "e", "d", "c", "M", "A", "t", "tdot", "w", "M_tilde", "M_hat",
    "psi_hat", "m_hat", "eta", "phi_hat", "mu", "phi", "zero", "tau", "tmp66", "s3",
    "s6", "Phi", "J", "gamma", "Y", "delassus", "lam", "rhs", "qdd_free", "keep"))


@njit(cache=True)
def data_size(n, m):
    """Floats needed by `data_views` for n joints and m constraint rows."""
    return n * (2 * 9 + 6 * 3 + 3 * 36 + 6 * 6 + 6) + 72 + 24 + 24 + m * (5 + 2 * n + m)


@njit(cache=True)
def data_views(ws, n, m):
    """Cut the flat buffer `ws` (at least data_size(n, m) floats) into the fields of Data.

    Fields of one shape are cut with one reshape (each reshape is a call into numba's
    C helpers) and then indexed."""
    i = 0
    R = ws[i:i + 18 * n].reshape((2, n, 3, 3)); i += 18 * n
    v3 = ws[i:i + 18 * n].reshape((6, n, 3)); i += 18 * n
    m66 = ws[i:i + 108 * n].reshape((3, n, 6, 6)); i += 108 * n
    v6 = ws[i:i + 36 * n].reshape((6, n, 6)); i += 36 * n
    s1 = ws[i:i + 6 * n].reshape((6, n)); i += 6 * n
    tmp66 = ws[i:i + 72].reshape((2, 6, 6)); i += 72
    s3 = ws[i:i + 24].reshape((8, 3)); i += 24
    s6 = ws[i:i + 24].reshape((4, 6)); i += 24
    r1 = ws[i:i + 5 * m].reshape((5, m)); i += 5 * m
    rn = ws[i:i + 2 * m * n].reshape((2, m, n)); i += 2 * m * n
    delassus = ws[i:i + m * m].reshape((m, m)); i += m * m
    zero = s1[3]  # never written: a new buffer is all zeros
    return Data(R[0], v3[0], R[1], v3[1], v3[2], v3[3], v3[4], m66[0], v3[5], v6[0], v6[1],
                v6[2], m66[1], m66[2], v6[3], s1[0], v6[4], s1[1], v6[5], s1[2], zero, s1[4],
                tmp66, s3, s6, r1[0], rn[0], r1[1], rn[1], delassus, r1[2], r1[3],
                s1[5], r1[4])


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
    """The named views of a buffer, from Python (for tests and inspection)."""
    return data_views(ws, n, m)
