"""A run's envelope in one pass: what a sweep keeps of each point (`core.sweeps.plan`).

For each joint j over the samples k = 0..S-1 at times t_k:

    peak_tau_j   = max_k |tau_kj|
    rms_tau_j    = sqrt( 1/(t_S-1 - t_0) sum_k (t_k+1 - t_k) (tau_kj^2 + tau_k+1,j^2) / 2 )
                   (the trapezoidal rule; |tau_0j| for a single sample)
    peak_qd_j    = max_k |qd_kj|
    peak_power_j = max_k |tau_kj qd_kj|

One compiled pass instead of a dozen NumPy calls: the NumPy reduction cost 33 us a
point, 9 % of a 2 s PUMA run, most of the sweep's own overhead; this costs about 2 us.
"""
from __future__ import annotations

import math

from .buffers import compiled_kernel


@compiled_kernel
def run_envelope(t, tau, qd, out):
    """out (4 n,) = [peak |tau|, RMS tau, peak |qd|, peak |tau qd|], joint order, from
    t (S,) s, tau (S, n) N m / N and qd (S, n) rad/s / m/s; S >= 1."""
    S, n = tau.shape
    span = t[S - 1] - t[0]
    for j in range(n):
        peak_tau = 0.0
        peak_qd = 0.0
        peak_power = 0.0
        area = 0.0  # the integral of tau^2 dt, trapezoidal
        for k in range(S):
            f = tau[k, j]
            v = qd[k, j]
            peak_tau = max(peak_tau, abs(f))
            peak_qd = max(peak_qd, abs(v))
            peak_power = max(peak_power, abs(f * v))
            if k > 0:
                g = tau[k - 1, j]
                area += 0.5 * (t[k] - t[k - 1]) * (g * g + f * f)
        out[j] = peak_tau
        out[n + j] = math.sqrt(area / span) if span > 0 else abs(tau[0, j])
        out[2 * n + j] = peak_qd
        out[3 * n + j] = peak_power
    return out
