"""A measured motion: logged joint values (and drive torques), their rates and
accelerations from a smoothing differentiator.

The differentiator is Savitzky-Golay (Savitzky and Golay, Anal. Chem. 36, 1964): at each
sample a polynomial of order POLYORDER is fitted by least squares to the 2M + 1 samples
around it, and qd (qdd) is its first (second) derivative there
(`scipy.signal.savgol_filter`, the ends fitted by the first and last window). Each is a
low-pass differentiator: exact at low frequencies, falling off above a cut-off that drops
as M grows. Schafer (IEEE Signal Processing Magazine 28(4), 2011, eq. 13) gives the
smoothing filter's f_c ~ (N + 1) / (3.2 M - 4.6) of the Nyquist frequency;
`window_for_cutoff` starts there and bisects to the smallest M whose differentiator's
own response (from its coefficients, relative to the exact derivative's 2 pi f or
(2 pi f)^2) is down by 3 dB at the requested cut-off. Rates and accelerations get a
window each: with one window, a cubic's second derivative cuts off at 0.55 times its
first derivative's (measured: 5.3 Hz against 9.5 Hz for 131 samples at 1 kHz).
`Motion.cutoff` is the rates' differentiator's measured cut-off, not the formula's.
q is kept as logged.

The default cut-off is DEFAULT_CUTOFF (10 Hz: an arm's joint motions lie below a few Hz,
encoder and quantization noise above), lowered to a fifth of the Nyquist frequency for
slow logs. Sampling: the steps must be positive; a step longer than GAP_RATIO times the
median is a gap and refused; steps that vary less (jitter) are resampled onto the median
step by a cubic spline, with a warning saying so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..model.arguments import finite_array, positive_number
from .joint_motions import JointMotion

#: Order of the polynomial fitted in every window (a cubic: exact for a cubic's
#: rates and accelerations; its qdd is the fitted cubic's, linear over the window).
POLYORDER = 3
#: Hz, the smoothing cut-off when none is given (at most a fifth of the Nyquist frequency).
DEFAULT_CUTOFF = 10.0
#: A step longer than this many times the median step is a gap (refused).
GAP_RATIO = 1.5
#: Steps within this fraction of the median are regular (a log's printed times round).
JITTER = 1e-4
#: At least this many samples (and at least one window).
MIN_SAMPLES = 2 * POLYORDER + 3


def _gains(c: np.ndarray, f, deriv: int) -> np.ndarray:
    """The gains at frequencies f (fractions of the sample rate) of the Savitzky-Golay
    filter of coefficients c (`savgol_coeffs(..., use="dot")`) giving derivative `deriv`
    (0, 1, 2), relative to the exact derivative's |2 pi f|^deriv (1 at low frequencies)."""
    k = np.arange(c.size) - c.size // 2
    f = np.atleast_1d(f)
    return np.abs(np.exp(2j * np.pi * np.outer(f, k)) @ c) / (2.0 * np.pi * f) ** deriv


def filter_cutoff(window: int, rate: float, deriv: int = 1) -> float:
    """The -3 dB frequency (Hz) at `rate` Hz of the Savitzky-Golay differentiator of
    `window` samples for derivative `deriv`: the lowest frequency where its gain,
    relative to the exact derivative's, falls to 1/sqrt(2) (a scan, then bisection)."""
    from scipy.signal import savgol_coeffs  # with scipy.stats: 0.5 s, imported when used

    low = 1.0 / math.sqrt(2.0)
    c = savgol_coeffs(window, POLYORDER, deriv=deriv, use="dot")
    grid = np.geomspace(1e-5, 0.5, 400)
    below = np.flatnonzero(_gains(c, grid, deriv) <= low)
    first = int(below[0]) if below.size else grid.size - 1
    lo, hi = (grid[first - 1], grid[first]) if first > 0 else (0.0, grid[0])
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if _gains(c, mid, deriv)[0] > low:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi) * rate


def window_for_cutoff(cutoff: float, rate: float, deriv: int = 1) -> int:
    """The shortest odd window (2M + 1 samples) whose differentiator for derivative
    `deriv`, at `rate` Hz, has its -3 dB frequency at or below `cutoff` Hz. Brackets from
    Schafer's estimate M = ((N + 1) / f_n + 4.6) / 3.2, f_n = cutoff / (rate / 2), then
    bisects on M (the cut-off falls as M grows)."""
    f_n = cutoff / (rate / 2.0)
    if not 0.0 < f_n < 1.0:
        raise ArgumentError(f"cutoff must lie between 0 and the Nyquist frequency "
                            f"{rate / 2.0:g} Hz, got {cutoff:g} Hz")
    def passes(M):  # the cut-off of 2M + 1 samples is still above the one asked for
        return filter_cutoff(2 * M + 1, rate, deriv) > cutoff

    lo = POLYORDER // 2 + 1  # the fewest samples a fit of order POLYORDER needs
    if not passes(lo):
        return 2 * lo + 1
    hi = max(lo + 1, round(((POLYORDER + 1) / f_n + 4.6) / 3.2))
    while passes(hi):  # the cut-off falls as M grows: bracket, then bisect
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if passes(mid) else (lo, mid)
    return 2 * hi + 1


def sampling_problem(t: np.ndarray) -> tuple[int, str] | None:
    """The first problem of the sample times t (S,), s, as (index of the sample, reason),
    or None: a time that does not increase, or a gap (a step over GAP_RATIO times the
    median step)."""
    steps = np.diff(t)
    bad = np.flatnonzero(~(steps > 0))
    if bad.size:
        i = int(bad[0]) + 1
        return i, (f"t = {t[i]:.10g} s does not increase (the sample before is at "
                   f"{t[i - 1]:.10g} s)")
    h = float(np.median(steps))
    gap = np.flatnonzero(steps > GAP_RATIO * h)
    if gap.size:
        i = int(gap[0]) + 1
        return i, (f"a gap of {steps[i - 1]:.4g} s before t = {t[i]:.10g} s ({steps[i - 1] / h:.3g}"
                   f" times the median step {h:.4g} s): samples are missing; cut the log "
                   "there or fill the gap")
    return None


@dataclass(frozen=True, eq=False)
class Motion(JointMotion):
    """A measured motion (what `load_motion` returns), sampled at a regular step.

    t      (S,)    s, as logged (resampled onto the median step if it jittered)
    q      (S, n)  rad / m
    qd     (S, n)  rad/s / m/s    } from the log's own columns, or by the smoothing
    qdd    (S, n)  rad/s^2 / m/s^2} differentiator (module docstring)
    tau    (S, n)  N m / N, the torques the drives delivered at the joints; or None
    cutoff         Hz, the rates' differentiator's -3 dB frequency (None: rates were
                   logged); the accelerations' is at or below it, as near as its window
                   allows
    window         (rates, accelerations): samples of each differentiator's window (None:
                   rates were logged)
    source         where it came from (a path), for messages
    warnings       what was done to the samples, one sentence each
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray | None = None
    cutoff: float | None = None
    window: tuple[int, int] | None = None
    source: str = ""
    warnings: tuple[str, ...] = ()
    name = "measured"

    @property
    def n(self) -> int:
        return self.q.shape[1]

    @property
    def duration(self) -> float:  # type: ignore[override]
        return float(self.t[-1])

    @property
    def rate(self) -> float:
        """The sample rate, Hz."""
        return (len(self.t) - 1) / float(self.t[-1] - self.t[0])

    def __len__(self) -> int:
        return self.t.shape[0]

    def sample_times(self, dt_out: float | None = None) -> np.ndarray:
        """The motion's own times (`dt_out` is ignored: a run follows the samples)."""
        return self.t

    def sample(self, t):
        """q, qd, qdd (S, n) at times t (S,), linearly interpolated between samples (the
        samples themselves at their own times), held at the ends."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if t.shape == self.t.shape and np.array_equal(t, self.t):
            return self.q, self.qd, self.qdd
        out = []
        for x in (self.q, self.qd, self.qdd):
            out.append(np.column_stack([np.interp(t, self.t, x[:, j])
                                        for j in range(self.n)]))
        return tuple(out)

    def extreme_times(self):
        return self.t

    @classmethod
    def from_samples(cls, t, q, tau=None, *, qd=None, qdd=None, cutoff: float | None = None,
                     source: str = "") -> "Motion":
        """A Motion from logged samples: t (S,) s, q (S, n), tau (S, n) or None; qd and qdd
        (S, n) when logged, else from the smoothing differentiator with `cutoff` Hz
        (default DEFAULT_CUTOFF, at most a fifth of the Nyquist frequency). Jittered
        times are resampled onto the median step (warned about); times that do not
        increase, gaps, too few samples and values that are not finite raise
        ArgumentError naming the sample."""
        t = np.asarray(t, dtype=float)
        q = np.asarray(q, dtype=float)
        if t.ndim != 1 or q.ndim != 2 or q.shape[0] != t.size:
            raise ArgumentError(f"t must be (S,) and q (S, n), got shapes {t.shape} and "
                                f"{q.shape}")
        S, n = q.shape
        if S < MIN_SAMPLES:
            raise ArgumentError(f"a measured motion needs at least {MIN_SAMPLES} samples, "
                                f"got {S}")
        finite_array(t, t.shape, "t")
        finite_array(q, q.shape, "q")
        arrays = {"tau": tau, "qd": qd, "qdd": qdd}
        for name, x in arrays.items():
            if x is not None:
                arrays[name] = finite_array(np.asarray(x, dtype=float), q.shape, name)
        problem = sampling_problem(t)
        if problem is not None:
            i, reason = problem
            raise ArgumentError(f"t: sample {i + 1}: {reason}")
        warnings = []
        steps = np.diff(t)
        h = float(np.median(steps))
        if np.max(np.abs(steps - h)) > JITTER * h:
            grid = t[0] + h * np.arange(int(round((t[-1] - t[0]) / h)) + 1)
            grid = grid[grid <= t[-1] + JITTER * h]
            warnings.append(f"uneven sampling (steps from {steps.min():.4g} s to "
                            f"{steps.max():.4g} s): resampled onto the median step {h:.4g} s "
                            "by a cubic spline")
            from scipy.interpolate import CubicSpline

            q = CubicSpline(t, q, axis=0)(grid)
            for name, x in arrays.items():
                if x is not None:
                    arrays[name] = CubicSpline(t, x, axis=0)(grid)
            t = grid
        rate = 1.0 / h
        window = fc = None
        if arrays["qd"] is None or arrays["qdd"] is None:
            fc = DEFAULT_CUTOFF if cutoff is None else positive_number(cutoff, "cutoff")
            if cutoff is None:
                fc = min(fc, rate / 10.0)
            window = (window_for_cutoff(fc, rate, 1), window_for_cutoff(fc, rate, 2))
            if max(window) > t.size:
                raise ArgumentError(f"a measured motion of {t.size} samples is shorter than the "
                                    f"differentiator's window of {max(window)} samples (cut-off "
                                    f"{fc:g} Hz at {rate:.4g} Hz): log longer, or raise the "
                                    "cut-off")
            from scipy.signal import savgol_filter  # imported when used, as above

            arrays["qd"] = savgol_filter(q, window[0], POLYORDER, deriv=1, delta=h, axis=0)
            arrays["qdd"] = savgol_filter(q, window[1], POLYORDER, deriv=2, delta=h, axis=0)
            fc = filter_cutoff(window[0], rate, 1)
        return cls(t, q, arrays["qd"], arrays["qdd"], arrays["tau"], fc, window, source,
                   tuple(warnings))
