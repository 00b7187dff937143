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


# The twist-propagation matrix A = [[1, 0], [a x 1, 1]] (seed 001 eq. 11d) is stored
# by its vector a; these apply A, A^T and A^T M A without forming the 6x6 matrix.

@njit(cache=True)
def A_times(a, t, out):
    """out = A t = [w; v + a x w] for the twist t = [w; v]."""
    w0, w1, w2 = t[0], t[1], t[2]
    out[0] = w0
    out[1] = w1
    out[2] = w2
    out[3] = t[3] + a[1] * w2 - a[2] * w1
    out[4] = t[4] + a[2] * w0 - a[0] * w2
    out[5] = t[5] + a[0] * w1 - a[1] * w0


@njit(cache=True)
def AT_times_add(a, w, out):
    """out += A^T w = [n - a x f; f] for the wrench w = [n; f]."""
    f0, f1, f2 = w[3], w[4], w[5]
    out[0] += w[0] - (a[1] * f2 - a[2] * f1)
    out[1] += w[1] - (a[2] * f0 - a[0] * f2)
    out[2] += w[2] - (a[0] * f1 - a[1] * f0)
    out[3] += f0
    out[4] += f1
    out[5] += f2


@njit(cache=True)
def ATMA_add(a, M, out, tmp):
    """out += A^T M A for a symmetric 6x6 M; `tmp` is 6x6 scratch.

    With S = a x 1 and M = [[M11, M12], [M21, M22]]:
      M A   = [[M11 + M12 S, M12], [M21 + M22 S, M22]]
      A^T X = [[X11 - S X21, X12 - S X22], [X21, X22]]   (S^T = -S)
    """
    # tmp = M A: columns 0..2 gain M[:, 3:] S; S's columns are a x e_j
    for r in range(6):
        m3, m4, m5 = M[r, 3], M[r, 4], M[r, 5]
        # (M12 S)[r, j] = sum_k M[r, 3+k] S[k, j]
        tmp[r, 0] = M[r, 0] + m4 * a[2] - m5 * a[1]
        tmp[r, 1] = M[r, 1] - m3 * a[2] + m5 * a[0]
        tmp[r, 2] = M[r, 2] + m3 * a[1] - m4 * a[0]
        tmp[r, 3] = m3
        tmp[r, 4] = m4
        tmp[r, 5] = m5
    # out += A^T tmp: rows 0..2 lose S tmp[3:, :]
    for c in range(6):
        x3, x4, x5 = tmp[3, c], tmp[4, c], tmp[5, c]
        out[0, c] += tmp[0, c] - (a[1] * x5 - a[2] * x4)
        out[1, c] += tmp[1, c] - (a[2] * x3 - a[0] * x5)
        out[2, c] += tmp[2, c] - (a[0] * x4 - a[1] * x3)
        out[3, c] += x3
        out[4, c] += x4
        out[5, c] += x5


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
