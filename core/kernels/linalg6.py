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
def A_times_of(a, k, t, p):
    """A_k t[p] = [w; v + a_k x w] for the twist t[p] = [w; v], as six numbers (for a
    recursion that keeps the result in registers)."""
    w0, w1, w2 = t[p, 0], t[p, 1], t[p, 2]
    ax, ay, az = a[k, 0], a[k, 1], a[k, 2]
    return (w0, w1, w2, t[p, 3] + ay * w2 - az * w1, t[p, 4] + az * w0 - ax * w2,
            t[p, 5] + ax * w1 - ay * w0)


@inlined_kernel
def A_times(a, k, t, p, out, o):
    """out[o] = A_k t[p] = [w; v + a_k x w] for the twist t[p] = [w; v]."""
    out[o, 0], out[o, 1], out[o, 2], out[o, 3], out[o, 4], out[o, 5] = A_times_of(a, k, t, p)


@inlined_kernel
def AT_times_add(a, k, w, kw, out, o):
    """out[o] += A_k^T w[kw] = [n - a_k x f; f] for the wrench w[kw] = [n; f]."""
    AT_add(a, k, w[kw, 0], w[kw, 1], w[kw, 2], w[kw, 3], w[kw, 4], w[kw, 5], out, o)


@inlined_kernel
def AT_add(a, k, n0, n1, n2, f0, f1, f2, out, o):
    """out[o] += A_k^T [n; f] = [n - a_k x f; f] for a wrench held in registers."""
    ax, ay, az = a[k, 0], a[k, 1], a[k, 2]
    out[o, 0] += n0 - (ay * f2 - az * f1)
    out[o, 1] += n1 - (az * f0 - ax * f2)
    out[o, 2] += n2 - (ax * f1 - ay * f0)
    out[o, 3] += f0
    out[o, 4] += f1
    out[o, 5] += f2


@inlined_kernel
def ATMA_add(a, k, M, km, out, ko):
    """out[ko] += A_k^T M[km] A_k for a symmetric 6x6 M[km] (its lower triangle is read)
    and a symmetric out[ko] (its lower triangle is added to, then copied to the upper).

    With S = a x 1 (S^T = -S, S u = a x u) and M = [[M11, M21^T], [M21, M22]]:
      A^T M A = [[M11 + M21^T S + S^T Y, Y^T], [Y, M22]],   Y = M21 + M22 S
    column c of Y is y_c = m_c + M22 (a x e_c) (m_c: column c of M21), and the upper
    left block's entry (r, c) is M11_rc + (m_r x a)_c + (y_c x a)_r. Only the lower
    triangles are formed: 21 entries, all in registers (M[km] is read before out[ko] is
    written, so that the compiler need not assume the two overlap).
    """
    ax, ay, az = a[k, 0], a[k, 1], a[k, 2]
    if ax == 0.0 and ay == 0.0 and az == 0.0:  # O_k = O_λ: A_k = 1
        for r in range(6):
            for c in range(r + 1):
                out[ko, r, c] += M[km, r, c]
                out[ko, c, r] = out[ko, r, c]
        return
    M00, M10, M11, M20, M21, M22 = M[km, 0, 0], M[km, 1, 0], M[km, 1, 1], M[km, 2, 0], \
        M[km, 2, 1], M[km, 2, 2]
    m0x, m0y, m0z = M[km, 3, 0], M[km, 4, 0], M[km, 5, 0]  # the columns of M21
    m1x, m1y, m1z = M[km, 3, 1], M[km, 4, 1], M[km, 5, 1]
    m2x, m2y, m2z = M[km, 3, 2], M[km, 4, 2], M[km, 5, 2]
    N00, N10, N11, N20, N21, N22 = M[km, 3, 3], M[km, 4, 3], M[km, 4, 4], M[km, 5, 3], \
        M[km, 5, 4], M[km, 5, 5]  # M22
    # Y = M21 + M22 S: S e_0 = (0, az, -ay), S e_1 = (-az, 0, ax), S e_2 = (ay, -ax, 0)
    y0x, y0y, y0z = m0x + N10 * az - N20 * ay, m0y + N11 * az - N21 * ay, \
        m0z + N21 * az - N22 * ay
    y1x, y1y, y1z = m1x - N00 * az + N20 * ax, m1y - N10 * az + N21 * ax, \
        m1z - N20 * az + N22 * ax
    y2x, y2y, y2z = m2x + N00 * ay - N10 * ax, m2y + N10 * ay - N11 * ax, \
        m2z + N20 * ay - N21 * ax
    # m_r x a and y_c x a
    u0x, u0y, u0z = m0y * az - m0z * ay, m0z * ax - m0x * az, m0x * ay - m0y * ax
    u1x, u1y, u1z = m1y * az - m1z * ay, m1z * ax - m1x * az, m1x * ay - m1y * ax
    u2x, u2y, u2z = m2y * az - m2z * ay, m2z * ax - m2x * az, m2x * ay - m2y * ax
    v0x, v0y, v0z = y0y * az - y0z * ay, y0z * ax - y0x * az, y0x * ay - y0y * ax
    v1x, v1y, v1z = y1y * az - y1z * ay, y1z * ax - y1x * az, y1x * ay - y1y * ax
    v2x, v2y, v2z = y2y * az - y2z * ay, y2z * ax - y2x * az, y2x * ay - y2y * ax
    out[ko, 0, 0] += M00 + u0x + v0x
    out[ko, 1, 0] += M10 + u1x + v0y
    out[ko, 1, 1] += M11 + u1y + v1y
    out[ko, 2, 0] += M20 + u2x + v0z
    out[ko, 2, 1] += M21 + u2y + v1z
    out[ko, 2, 2] += M22 + u2z + v2z
    out[ko, 3, 0] += y0x
    out[ko, 4, 0] += y0y
    out[ko, 5, 0] += y0z
    out[ko, 3, 1] += y1x
    out[ko, 4, 1] += y1y
    out[ko, 5, 1] += y1z
    out[ko, 3, 2] += y2x
    out[ko, 4, 2] += y2y
    out[ko, 5, 2] += y2z
    out[ko, 3, 3] += N00
    out[ko, 4, 3] += N10
    out[ko, 4, 4] += N11
    out[ko, 5, 3] += N20
    out[ko, 5, 4] += N21
    out[ko, 5, 5] += N22
    for r in range(6):
        for c in range(r):
            out[ko, c, r] = out[ko, r, c]


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
