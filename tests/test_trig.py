"""core.kernels.trig: a joint's cos and sin by inlined arithmetic, against libm."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from armdyn.core.kernels.trig import REDUCED_MAX, cos_sin, cos_sin_rows


@njit(cache=False)
def one_at_a_time(x, out):
    for i in range(x.shape[0]):
        out[0, i], out[1, i] = cos_sin(x[i])


@njit(cache=False)
def in_rows(cs):
    cos_sin_rows(cs, cs.shape[1])


def angles():
    rng = np.random.default_rng(7)
    k = np.arange(-400, 401)
    return np.concatenate([
        rng.uniform(-60.0, 60.0, 20000), rng.normal(scale=1e-3, size=2000),
        np.linspace(-8.0, 8.0, 20001), k * (np.pi / 2), k * (np.pi / 4),  # quadrant edges
        np.nextafter(k * (np.pi / 4), np.inf), rng.uniform(-REDUCED_MAX, REDUCED_MAX, 2000),
        [0.0, -0.0, 1e-300, REDUCED_MAX, -REDUCED_MAX, 2 * REDUCED_MAX, 1e300, -1e22,
         np.inf, -np.inf, np.nan]])


def test_cos_sin_is_libms_to_round_off():
    """Within 1.12e-16 of libm's cos and sin (a unit in the last place of a number next
    to 1; libm's own error is half of one): the frames built from them are libm's to
    round-off; beyond REDUCED_MAX, inf and nan: libm's own values."""
    x = angles()
    got = np.empty((2, x.size))
    one_at_a_time(x, got)
    with np.errstate(invalid="ignore"):
        want = np.array([np.cos(x), np.sin(x)])
    finite = np.isfinite(x)
    assert np.abs(got[:, finite] - want[:, finite]).max() <= 1.12e-16
    assert np.all(np.isnan(got[:, ~finite]))
    far = np.isfinite(x) & (np.abs(x) > REDUCED_MAX)
    assert np.array_equal(got[:, far], want[:, far])
    assert got[0, x.size - 11 + 2] == 1.0 and got[1, x.size - 11 + 2] == 1e-300  # tiny x
    # sin^2 + cos^2 = 1 to round-off (a second law, beside libm)
    assert np.abs(got[0, finite] ** 2 + got[1, finite] ** 2 - 1.0).max() <= 4.5e-16


def test_the_vectorised_rows_give_the_same_numbers():
    """cos_sin_rows (all angles in one loop) is cos_sin angle by angle, bit for bit:
    the frames do not depend on which path computed them."""
    x = angles()
    one = np.empty((2, x.size))
    one_at_a_time(x, one)
    cs = np.empty((3, x.size))
    cs[2] = x
    in_rows(cs)
    assert np.array_equal(cs[:2], one, equal_nan=True)
    assert np.array_equal(cs[2], x, equal_nan=True)
    assert math.isnan(cs[0, -1]) and math.isnan(cs[1, -1])
