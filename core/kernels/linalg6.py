"""Small fixed-size linear algebra for the compiled kernels, by row index.

The DeNOC algorithms work with 3-vectors, 6-vectors (twists t = [w; v], wrenches
w = [n; f]) and 6x6 matrices (extended mass M_i, twist propagation A_ij), stored as
rows of per-link arrays: t (n, 6), M (n, 6, 6), a (n, 3). These helpers take the
array and the row index (`t, k` for t_k) rather than a row view `t[k]`: inside numba
every view is a reference-counted object, and a recursion that made a few views per
link spent most of its time counting references (three times slower). Every helper
is compiled by numba, inlined, and writes into a row of a preallocated output.
"""
from __future__ import annotations

from .buffers import inlined_kernel


# The twist-propagation matrix A_{k,λ} = [[1, 0], [a x 1, 1]] (seed 001 eq. 11d) is
# stored by its vector a_k = O_λ - O_k; these apply A, A^T and A^T M A without forming it.

@inlined_kernel
def A_times(a, k, t, p, out, o):
    """out[o] = A_k t[p] = [w; v + a_k x w] for the twist t[p] = [w; v]."""
    w0, w1, w2 = t[p, 0], t[p, 1], t[p, 2]
    ax, ay, az = a[k, 0], a[k, 1], a[k, 2]
    v0, v1, v2 = t[p, 3], t[p, 4], t[p, 5]
    out[o, 0] = w0
    out[o, 1] = w1
    out[o, 2] = w2
    out[o, 3] = v0 + ay * w2 - az * w1
    out[o, 4] = v1 + az * w0 - ax * w2
    out[o, 5] = v2 + ax * w1 - ay * w0


@inlined_kernel
def AT_times_add(a, k, w, kw, out, o):
    """out[o] += A_k^T w[kw] = [n - a_k x f; f] for the wrench w[kw] = [n; f]."""
    f0, f1, f2 = w[kw, 3], w[kw, 4], w[kw, 5]
    ax, ay, az = a[k, 0], a[k, 1], a[k, 2]
    n0, n1, n2 = w[kw, 0], w[kw, 1], w[kw, 2]
    out[o, 0] += n0 - (ay * f2 - az * f1)
    out[o, 1] += n1 - (az * f0 - ax * f2)
    out[o, 2] += n2 - (ax * f1 - ay * f0)
    out[o, 3] += f0
    out[o, 4] += f1
    out[o, 5] += f2


@inlined_kernel
def ATMA_add(a, k, M, km, out, ko, tmp):
    """out[ko] += A_k^T M[km] A_k for a symmetric 6x6 M[km]; tmp (6, 6) is scratch.

    With S = a x 1 and M = [[M11, M12], [M21, M22]]:
      M A   = [[M11 + M12 S, M12], [M21 + M22 S, M22]]
      A^T X = [[X11 - S X21, X12 - S X22], [X21, X22]]   (S^T = -S)
    """
    ax, ay, az = a[k, 0], a[k, 1], a[k, 2]
    for r in range(6):  # tmp = M A: columns 0..2 gain M[:, 3:] S (S's columns: a x e_j)
        m3, m4, m5 = M[km, r, 3], M[km, r, 4], M[km, r, 5]
        tmp[r, 0] = M[km, r, 0] + m4 * az - m5 * ay
        tmp[r, 1] = M[km, r, 1] - m3 * az + m5 * ax
        tmp[r, 2] = M[km, r, 2] + m3 * ay - m4 * ax
        tmp[r, 3] = m3
        tmp[r, 4] = m4
        tmp[r, 5] = m5
    for c in range(6):  # out += A^T tmp: rows 0..2 lose S tmp[3:, :]
        x3, x4, x5 = tmp[3, c], tmp[4, c], tmp[5, c]
        out[ko, 0, c] += tmp[0, c] - (ay * x5 - az * x4)
        out[ko, 1, c] += tmp[1, c] - (az * x3 - ax * x5)
        out[ko, 2, c] += tmp[2, c] - (ax * x4 - ay * x3)
        out[ko, 3, c] += x3
        out[ko, 4, c] += x4
        out[ko, 5, c] += x5


@inlined_kernel
def p_dot(revolute_k, e, k, w, kw):
    """p_k^T w[kw]: the joint component of a wrench (n . e_k or f . e_k)."""
    b = 0 if revolute_k else 3
    return e[k, 0] * w[kw, b] + e[k, 1] * w[kw, b + 1] + e[k, 2] * w[kw, b + 2]


@inlined_kernel
def add_p_times(revolute_k, e, k, s, out, o):
    """out[o] += p_k s, with p_k = [e_k; 0] (revolute) or [0; e_k] (prismatic)."""
    b = 0 if revolute_k else 3
    out[o, b] += e[k, 0] * s
    out[o, b + 1] += e[k, 1] * s
    out[o, b + 2] += e[k, 2] * s


@inlined_kernel
def M_p(revolute_k, e, k, M, km, out, o):
    """out[o] = M[km] p_k (a 6-vector: the columns of the block p_k selects, times e_k)."""
    b = 0 if revolute_k else 3
    for r in range(6):
        out[o, r] = M[km, r, b] * e[k, 0] + M[km, r, b + 1] * e[k, 1] + M[km, r, b + 2] * e[k, 2]
