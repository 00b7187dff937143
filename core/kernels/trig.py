"""cos and sin of the joint angles by inlined arithmetic, all of a model's in one loop.

A revolute joint's frame needs cos and sin of its angle (`core.kernels.denoc.dh_frames`);
libm's sincos, called once per joint, took 0.34 us of the 45-DOF human's 4.4 us forward
dynamics (39 calls of ~9 ns). The same arithmetic written here is a loop the compiler
vectorises over all the joints (`cos_sin_rows`: link_quantities 1.25 -> 0.98 us on the
human); one angle at a time (`cos_sin`) it is slower than libm (the human's frames 1.1
against 0.84 us), but gives the loop's numbers to the bit. Both do fdlibm's steps:

- range reduction x = k pi/2 + r, |r| <= pi/4, by Cody and Waite's pi/2 in two parts
  (fdlibm's pio2_1, pio2_1t: k * pio2_1 is exact while |k| < 2^20, and pio2_1t misses
  the rest of pi/2 by 7e-27, so r is x - k pi/2 to within a unit in its last place);
- fdlibm's minimax polynomials of sin and cos on [-pi/4, pi/4] (__kernel_sin,
  __kernel_cos: within a unit in the last place there);
- the quadrant k mod 4 swaps them and sets their signs.

Its result is within 1.12e-16 of libm's (a unit in the last place next to 1: the
absolute accuracy a rotation matrix needs) for the angles joints take; beyond
|x| = REDUCED_MAX (or for inf and nan) it is libm's own.
"""
from __future__ import annotations

import math

from .buffers import inlined_kernel

#: fdlibm's __kernel_sin coefficients (s_sin.c, k_sin.c)
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, \
    -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, \
    1.58969099521155010221e-10
#: fdlibm's __kernel_cos coefficients (k_cos.c)
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, \
    2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, \
    -1.13596475577881948265e-11
#: pi/2 in two parts (fdlibm's e_rem_pio2.c: pio2_1, its first 33 bits, and pio2_1t, the
#: rest to 53 bits)
_PIO2_1 = 1.57079632673412561417e+00
_PIO2_1T = 6.07710050650619224932e-11
_INV_PIO2 = 6.36619772367581382433e-01  # 2 / pi

#: Above this |x| (rad) the reduction's k * _PIO2_1 could be inexact: libm instead.
REDUCED_MAX = 1e5


@inlined_kernel
def _reduced_cos_sin(x):
    """(cos x, sin x) for |x| <= REDUCED_MAX (rad): the reduction, the two polynomials and
    the quadrant; without a branch, so that a loop of them vectorises."""
    k = math.floor(x * _INV_PIO2 + 0.5)
    r = (x - k * _PIO2_1) - k * _PIO2_1T
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    hz = 0.5 * z
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz)
             + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6))))))
    # the quadrant k mod 4: sin and cos swap (k odd) and change sign, by multiplying with
    # 0, 1 and -1 (exact; no branch to mispredict from one joint to the next)
    quadrant = int(k) & 3
    odd = float(quadrant & 1)
    even = 1.0 - odd
    return ((c * even + s * odd) * float(1 - ((quadrant + 1) & 2)),
            (s * even + c * odd) * float(1 - (quadrant & 2)))


@inlined_kernel
def cos_sin(x):
    """(cos x, sin x) of an angle x (rad), within 1.12e-16 of libm's."""
    if not abs(x) <= REDUCED_MAX:  # huge, inf or nan
        return math.cos(x), math.sin(x)
    return _reduced_cos_sin(x)


@inlined_kernel
def cos_sin_rows(cs, n):
    """cs[0, :n], cs[1, :n] = cos, sin of the angles cs[2, :n] (rad): one loop the
    compiler vectorises (4 or 8 angles an instruction; the same numbers as `cos_sin`),
    then libm for any angle beyond REDUCED_MAX."""
    for i in range(n):
        cs[0, i], cs[1, i] = _reduced_cos_sin(cs[2, i])
    for i in range(n):
        x = cs[2, i]
        if not abs(x) <= REDUCED_MAX:  # huge, inf or nan
            cs[0, i] = math.cos(x)
            cs[1, i] = math.sin(x)
