"""Small fixed-size linear algebra for the compiled kernels.

The DeNOC algorithms work with 3-vectors, 6-vectors (twists t = [w; v],
wrenches w = [n; f]) and 6x6 matrices (extended mass M_i, twist-propagation
A_ij). These helpers write into preallocated outputs so that the recursions
allocate nothing per link. Every function is compiled by numba.
"""
from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def cross(a, b, out):
    """out = a x b (3-vectors)."""
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0] = x
    out[1] = y
    out[2] = z


@njit(cache=True, inline="always")
def cross_add(a, b, out):
    """out += a x b (3-vectors)."""
    out[0] += a[1] * b[2] - a[2] * b[1]
    out[1] += a[2] * b[0] - a[0] * b[2]
    out[2] += a[0] * b[1] - a[1] * b[0]


@njit(cache=True, inline="always")
def dot(a, b):
    s = 0.0
    for k in range(a.shape[0]):
        s += a[k] * b[k]
    return s


@njit(cache=True)
def matvec(M, x, out):
    """out = M x."""
    for r in range(M.shape[0]):
        s = 0.0
        for c in range(M.shape[1]):
            s += M[r, c] * x[c]
        out[r] = s


@njit(cache=True)
def matvec_add(M, x, out):
    """out += M x."""
    for r in range(M.shape[0]):
        s = 0.0
        for c in range(M.shape[1]):
            s += M[r, c] * x[c]
        out[r] += s


@njit(cache=True)
def matTvec(M, x, out):
    """out = M^T x."""
    for c in range(M.shape[1]):
        s = 0.0
        for r in range(M.shape[0]):
            s += M[r, c] * x[r]
        out[c] = s


@njit(cache=True)
def congruence_add(A, M, out, tmp):
    """out += A^T M A for 6x6 matrices; `tmp` is 6x6 scratch."""
    for r in range(6):  # tmp = M A
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += M[r, k] * A[k, c]
            tmp[r, c] = s
    for r in range(6):  # out += A^T tmp
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += A[k, r] * tmp[k, c]
            out[r, c] += s


@njit(cache=True, inline="always")
def skew_into(a, out, r0, c0, scale):
    """Write scale * (a x 1), the cross-product tensor of a, into out[r0:r0+3, c0:c0+3]."""
    out[r0 + 0, c0 + 0] = 0.0
    out[r0 + 0, c0 + 1] = -scale * a[2]
    out[r0 + 0, c0 + 2] = scale * a[1]
    out[r0 + 1, c0 + 0] = scale * a[2]
    out[r0 + 1, c0 + 1] = 0.0
    out[r0 + 1, c0 + 2] = -scale * a[0]
    out[r0 + 2, c0 + 0] = -scale * a[1]
    out[r0 + 2, c0 + 1] = scale * a[0]
    out[r0 + 2, c0 + 2] = 0.0
