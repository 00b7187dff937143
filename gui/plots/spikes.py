"""Spikes in a plot's samples and the robust y range that keeps the rest readable. Qt-free.

A few samples far beyond the others (the carpet scraper's cut forces reach -18 kN near
its toggle poses while they stay within 2 kN elsewhere; an arm's joint torques when a
joint hits its end stop) flatten every other curve of the plot to a line at zero. The
robust range is the samples' 1st to 99th percentiles, widened to the median plus or
minus SPIKE_MADS scaled median absolute deviations: the curves keep their shape and the
spikes leave the view, marked where they do (`SpikeRange.marks`).

It is used only for spikes: short excursions. A plot whose full range is at most
SPIKE_RATIO times the robust range, or whose samples leave the robust range during
more than SPIKE_SHARE of the run (a quill falling for 0.3 s of a 3 s run, then resting
on its stop, is not a spike), keeps its full range.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SpikeRange", "spike_range", "SPIKE_RATIO", "SPIKE_SHARE", "SPIKE_MADS"]

#: The full range is more than this many times the robust one: spikes.
SPIKE_RATIO = 4.0
#: ... and the samples beyond the robust range are at most this share of the run.
SPIKE_SHARE = 0.08
#: The robust range reaches at least this many scaled MADs from the median.
SPIKE_MADS = 8.0
#: The median, MAD and percentiles are taken over at most about this many values.
STATS_SAMPLES = 20_000
#: A normal distribution's MAD times this is its standard deviation.
_MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class SpikeRange:
    """The robust range of a view's samples and the samples beyond it.

    lo, hi     : the robust range, in the plot's units
    full       : (min, max) of every sample
    above      : (S, m) samples above `hi`
    below      : (S, m) samples below `lo`
    """

    lo: float
    hi: float
    full: tuple[float, float]
    above: np.ndarray
    below: np.ndarray

    @property
    def outside(self) -> np.ndarray:
        """(S,) the sample times at which some curve is beyond the range."""
        return (self.above | self.below).any(axis=1)

    def marks(self, t: np.ndarray, values: np.ndarray) -> list[tuple[float, int, bool]]:
        """One mark per stretch of consecutive samples of one curve beyond the range:
        (the time of its farthest sample, s; the curve's column; above the range?), in
        time order. t (S,) the sample times, values (S, m)."""
        out = []
        for side, mask in ((True, self.above), (False, self.below)):
            for c in range(mask.shape[1]):
                column = mask[:, c]
                if not column.any():
                    continue
                edges = np.diff(np.concatenate([[0], column.astype(np.int8), [0]]))
                starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
                for a, b in zip(starts, ends):
                    stretch = values[a:b, c]
                    k = a + int(np.argmax(stretch) if side else np.argmin(stretch))
                    out.append((float(t[k]), c, side))
        return sorted(out)

    def peaks(self, values: np.ndarray, count: int = 3) -> list[int]:
        """Sample indices of the `count` largest stretches beyond the range, by their
        farthest value, in time order. values (S, m)."""
        outside = self.outside
        edges = np.diff(np.concatenate([[0], outside.astype(np.int8), [0]]))
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        middle = (self.lo + self.hi) / 2
        best = []
        for a, b in zip(starts, ends):
            far = np.abs(np.nan_to_num(values[a:b] - middle)).max(axis=1)
            k = a + int(np.argmax(far))
            best.append((float(far.max()), k))
        return sorted(k for _, k in sorted(best, reverse=True)[:count])


def spike_range(values: np.ndarray) -> SpikeRange | None:
    """The robust range of `values` (S samples, m curves) if they hold spikes (see the
    module docstring), else None."""
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[:, None]
    # the statistics of at most STATS_SAMPLES values, every k-th in time order (a 600 s
    # run's six curves hold 360,000: their medians took 8 ms a plot at the end of the run)
    if np.isfinite(v).all():
        # the usual run: v as it is, neither the finite ones nor v flattened (a plot's
        # values are a transposed view of its buffer: flattening copied them, the
        # human's 600 s run: 2.7 million values a plot, issue #23)
        if v.size < 20:
            return None
        full = (float(v.min()), float(v.max()))
        flat = np.arange(0, v.size, max(1, v.size // STATS_SAMPLES))
        sample = v[flat // v.shape[1], flat % v.shape[1]]  # = v.reshape(-1)[::k]
    else:
        finite = v[np.isfinite(v)]
        if finite.size < 20:
            return None
        full = (float(finite.min()), float(finite.max()))
        sample = finite[::max(1, finite.size // STATS_SAMPLES)]
    median = float(np.median(sample))
    mad = _MAD_TO_SIGMA * float(np.median(np.abs(sample - median)))
    p1, p99 = (float(x) for x in np.percentile(sample, [1.0, 99.0]))
    lo = max(full[0], min(p1, median - SPIKE_MADS * mad))
    hi = min(full[1], max(p99, median + SPIKE_MADS * mad))
    if not hi > lo or full[1] - full[0] <= SPIKE_RATIO * (hi - lo):
        return None
    with np.errstate(invalid="ignore"):
        above, below = v > hi, v < lo
    spikes = SpikeRange(lo, hi, full, above, below)
    if spikes.outside.mean() > SPIKE_SHARE:
        return None
    return spikes
