"""Adaptive Dormand-Prince 8(5,3) integrator compiled with numba, driving the forward dynamics.

This is the algorithm of SciPy's `scipy.integrate.DOP853` (scipy/integrate/_ivp/rk.py and
common.py): the same Butcher tableau (read from `scipy.integrate._ivp.dop853_coefficients`
at import time), the same step-size control (SAFETY 0.9, factors in [0.2, 10], no growth
right after a rejection, error exponent -1/8), the same blended 5th/3rd order error norm,
the same initial step selection (`select_initial_step`, order 7, RMS norm) and the same
7th-degree dense output (3 extra stages, evaluated only on steps that hold an output sample
strictly inside the step). The right-hand side is `rhs` (the accelerations of
`core.kernels.rhs`), called inside numba through its address (`core.kernels.calls`:
compiled once per build, not linked into and optimised again in every kernel that calls
it), so a whole chunk runs without returning to Python; the joints' damping and
end stops (`core.algorithms.dynamics.stop_force`) are part of it. Integration runs forward in time
only (t_bound > t0).

Compiled kernels
----------------
Both take first `rhs_address`: `rhs_address(...)` of the arguments they pass on (the
address of `rhs`'s compiled code for their types).

``initial_step(rhs_address, MF, MI, ws, torque, tau, passive, f_ext, t0, y0, f0, t_bound,
rtol, atol, max_step, y1, f1) -> (h_abs, info)``
    SciPy's select_initial_step (MF, MI: the model's kernel buffers, core.kernels.layout;
    ws: a workspace, core.kernels.data; torque, tau: the torque callback and its (n,)
    buffer, core.kernels.torque; passive: the (n, PASSIVE_COLUMNS) table of viscous damping and
    end stops, core.algorithms.dynamics.passive_table). y1, f1: (2n,) scratch. info = -1, or the
    0-based joint whose pivot vanished at the probe state (then h_abs = nan).

``dop853_advance(rhs_address, MF, MI, ws, torque, tau, passive, f_ext, state, y, f, K, scratch,
stats, t_out, next_out, Y_out, t_stop, max_steps, huge) -> (status, next_out, info)``
    state   float64 (5,), (6,) or (7,): [t, h_abs, t_bound, rtol, atol(, max_step(,
            project_tol))]; t and h_abs are updated in place. max_step defaults to inf,
            project_tol to 0. With project_tol > 0 (a mechanism with loops) every accepted
            state is projected back onto the loops when it drifted by more than that
            (`core.kernels.constrained.project_onto_loops`) and f is evaluated again.
    y, f    float64 (2n,): current state and its derivative, updated in place.
    K       float64 (16, 2n): stages (0..11), f_new (12), extra dense-output stages (13..15).
    scratch float64 (SCRATCH_ROWS=14, 2n): rows y_old, f_old, y_new, y_stage, sample, the
            7 dense-output rows F and the 5th and 3rd order error sums. Make it with
            `new_scratch(2n)`.
    stats   int64 (4,): [nfev, accepted steps, rejected steps, dense-output builds], added to.
    t_out   float64 (S,): increasing output times in [t0, t_bound].
    next_out int: first sample of t_out not yet written.
    Y_out   float64 (S, 2n): a sample at t_out[j] is written when the step (t_old, t_new]
            holding it is accepted (samples <= t at entry are copied from y); samples landing
            exactly on a step end (including t_bound) are copies of y, not interpolated.
    t_stop  return (status 0) once t >= t_stop; the step size is NOT clipped to t_stop, so
            chunked and one-go integration give identical results.
    max_steps  return (status 0) after this many accepted steps in this call.
    huge    an accepted state with |y_i| > huge (or non-finite) is a blow-up.
    status  0  still running (t >= t_stop or max_steps accepted steps taken)
            1  finished (t == t_bound, all samples <= t_bound written)
           -1  step size too small (SciPy's rule: h < 10 * |nextafter(t, inf) - t|)
           -2  singular mass matrix; info = 0-based joint from the accelerations. A trial
               step whose stage hits a singular pivot is rejected (h *= 0.2) like a failed
               error test; -2 is returned only when that persists down to the minimum step
               (y, f, t stay at the last accepted step). Exception: a singular pivot in the
               3 extra dense-output stages (inside an already accepted step) returns -2 at
               once with t, y already advanced to that step's end.
           -3  blow-up: info = 0-based index into y of the first bad component.
               (a) the accepted step's y_new has |y_i| > huge: the step is NOT accepted
                   (y, f, t stay at the last good step, h_abs is the size it would have
                   used next);
               (b) trial steps kept producing inf/nan stages down to the minimum step.
               Trial steps with inf/nan stages are otherwise just rejected (h *= 0.2),
               as SciPy's nan error norm would be.
    info is -1 for status 0, 1, -1.

Both kernels take a last, optional argument `pull`: a run's pull buffer (`core.sim.pull`;
None: none), whose spring-damper wrench every right-hand side evaluation adds to f_ext
while it holds a pull (`rhs`), and `chart`: None for a model whose q is its own chart
(nq == nv), else the (2, nq) buffer of the chart the integrator steps (`core.kernels.charts`:
y = [x; qd] with x a chart of q around chart[0], moved to each accepted state; the
samples Y_out are [q; qd], (S, nq + nv)). `dop853_advance` takes one more, `contacts`:
None, or the run's (nv, 2, CONTACT_COLUMNS) table of end-stop contacts, which every
accepted state updates (`core.kernels.passive.record_stop_contacts`: hits counted by the
integrator's steps, not by the output samples). All three take `loops` last:
`core.kernels.constrained.loops_of` the model (None: no loops, and none of their code
compiled).

The Python side (set-up, buffers, `advance`) is `core.sim.dop853`.
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np

from .buffers import address_of, compiled_kernel, inlined_kernel
from .calls import address_of_kernel, call_at
from .charts import chart_origin, chart_rates, chart_to_q, recentre
from .constrained import project_if_loops
from .layout import model_views
from .passive import record_stop_contacts
from .pull import LINK as PULL_ACTIVE
from .pull import pulled_wrenches
from .rhs import accelerations

# ---------------------------------------------------------------------------------------
# Tableau (from SciPy, not retyped). Numba freezes these module globals as constants.
# ---------------------------------------------------------------------------------------

def _scipy_dop853_tableau():
    """scipy.integrate._ivp.dop853_coefficients, loaded by itself: importing it through
    scipy.integrate would load all of that package, half a second of every start."""
    spec = importlib.util.find_spec("scipy")
    path = Path(spec.origin).parent / "integrate" / "_ivp" / "dop853_coefficients.py"
    if not path.is_file():  # another layout of SciPy: the ordinary import
        from scipy.integrate._ivp import dop853_coefficients
        return dop853_coefficients
    module_spec = importlib.util.spec_from_file_location("armdyn_scipy_dop853", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


_dop = _scipy_dop853_tableau()
N_STAGES = int(_dop.N_STAGES)                      # 12
N_STAGES_EXTENDED = int(_dop.N_STAGES_EXTENDED)    # 16
INTERPOLATOR_POWER = int(_dop.INTERPOLATOR_POWER)  # 7
_A = np.ascontiguousarray(_dop.A, dtype=np.float64)    # (16, 16)
_B = np.ascontiguousarray(_dop.B, dtype=np.float64)    # (12,)
_C = np.ascontiguousarray(_dop.C, dtype=np.float64)    # (16,)
_E3 = np.ascontiguousarray(_dop.E3, dtype=np.float64)  # (13,)
_E5 = np.ascontiguousarray(_dop.E5, dtype=np.float64)  # (13,)
_D = np.ascontiguousarray(_dop.D, dtype=np.float64)    # (4, 16)

SAFETY = 0.9
MIN_FACTOR = 0.2
MAX_FACTOR = 10.0
ERROR_EXPONENT = -1.0 / (7 + 1)   # error estimator order 7

# scratch rows
_Y_OLD, _F_OLD, _Y_NEW, _Y_STAGE, _SAMPLE, _F0 = 0, 1, 2, 3, 4, 5   # _F0..: 7 dense rows
_ERR5 = _F0 + INTERPOLATOR_POWER          # 12, 13: the error estimates' sums
_ERR3 = _ERR5 + 1
SCRATCH_ROWS = _ERR3 + 1                  # 14

STATUS_RUNNING = 0
STATUS_FINISHED = 1
STATUS_STEP_TOO_SMALL = -1
STATUS_SINGULAR = -2
STATUS_BLOWUP = -3
STATUS_TORQUE_FAILED = -4

#: What `rhs` returns when the torque function failed (joint codes are >= 0).
TORQUE_FAILED = -4


def new_scratch(n2: int) -> np.ndarray:
    """Scratch buffer for dop853_advance: (SCRATCH_ROWS, 2n)."""
    return np.zeros((SCRATCH_ROWS, n2))


@compiled_kernel
def rhs(MF, MI, ws, torque, t, y, tau, passive, f_ext, pull, ydot, chart, loops):
    """ydot = f(t, y): the joint forces tau(t, q, qd) from the torque callback (written
    into tau; `core.kernels.torque`), the link wrenches f_ext (n, 6) plus, while the buffer
    `pull` (`core.sim.pull`; None: none) holds a pull, its spring-damper's wrench at this
    state, then the accelerations (with the passive forces: damping and end stops).
    y = [x; qd] (2 nv): x is q itself (chart None) or the chart of `core.kernels.charts`
    around chart[0] (chart (2, nq): the base q_b, and a row for q); loops:
    `core.kernels.constrained.loops_of` the model. Returns -1, the code
    of a singular pivot (>= 0), or TORQUE_FAILED. It takes the model's buffers MF, MI
    and cuts their views itself (a few integer operations, inlined): passed the views, a
    call passed every field word by word, ~300 words (0.1 us of the human's 4.7 us)."""
    mv = model_views(MF, MI)
    nv = mv.nv
    if chart is None:
        q = y[:nv]
    else:
        q = chart[1]
        chart_to_q(mv, chart[0], y[:nv], q)
    if torque(t, address_of(q, 0), address_of(y, nv), address_of(tau, 0), mv.nq, nv) != 0:
        return TORQUE_FAILED
    if pull is not None:
        if pull[PULL_ACTIVE] > 0.0:  # the one branch a run without a pull pays
            # w_i = [(p - o_i) x F; F], F = k (x* - p) - c v_p at this state (core.sim.pull)
            f_ext = pulled_wrenches(mv, pull, q, y[nv:], f_ext)
    if chart is None:  # qdot = qd (no call)
        for k in range(nv):
            ydot[k] = y[nv + k]
    else:
        chart_rates(mv, q, y[:nv], y[nv:], ydot[:nv])
    return accelerations(mv, ws, q, y[:nv], y[nv:], tau, passive, f_ext, ydot[nv:], loops)


def rhs_address(MF, MI, ws, torque, y, tau, passive, f_ext, pull, ydot, chart,
                loops) -> int:
    """The address of `rhs`'s compiled code for these arguments' types (compiled or
    loaded now if new), which `initial_step` and `dop853_advance` call (`call_at`): y,
    ydot any float64 (2 nv,) C-contiguous vectors (the kernels pass their own rows)."""
    return address_of_kernel(rhs, MF, MI, ws, torque, 0.0, y, tau, passive, f_ext, pull,
                             ydot, chart, loops)


@inlined_kernel
def _write_sample(mv, chart, y, out):
    """out = [q; qd] (nq + nv) of the integrator's state y = [x; qd] (2 nv)."""
    if chart is None:
        for i in range(y.shape[0]):
            out[i] = y[i]
        return
    nq, nv = mv.nq, mv.nv
    chart_to_q(mv, chart[0], y[:nv], out[:nq])
    for i in range(nv):
        out[nq + i] = y[nv + i]


@compiled_kernel
def sample_torques(torque, t, Y, tau, out):
    """out[s] = tau(t[s], q, qd) at the states Y (S, nq + nv) through the torque callback
    (tau: its (nv,) buffer). Returns -1, or the first sample where it failed."""
    nv = tau.shape[0]
    nq = Y.shape[1] - nv
    for s in range(Y.shape[0]):
        if torque(t[s], address_of(Y[s], 0), address_of(Y[s], nq), address_of(tau, 0), nq,
                  nv) != 0:
            return s
        for k in range(nv):
            out[s, k] = tau[k]
    return -1


@compiled_kernel
def _rms_unit(v):
    """RMS norm of v, scaled against overflow/underflow like np.linalg.norm."""
    big = 0.0
    for i in range(v.shape[0]):
        big = max(big, abs(v[i]))
    if big == 0.0 or not np.isfinite(big):
        return big
    s = 0.0
    for i in range(v.shape[0]):
        w = v[i] / big
        s += w * w
    return big * math.sqrt(s) / math.sqrt(v.shape[0])


@compiled_kernel
def _rms(x, scale):
    """RMS norm of x / scale (common.norm)."""
    big = 0.0
    for i in range(x.shape[0]):
        big = max(big, abs(x[i] / scale[i]))
    if big == 0.0 or not np.isfinite(big):
        return big
    s = 0.0
    for i in range(x.shape[0]):
        w = x[i] / scale[i] / big
        s += w * w
    return big * math.sqrt(s) / math.sqrt(x.shape[0])


@compiled_kernel
def initial_step(rhs_address, MF, MI, ws, torque, tau, passive, f_ext, t0, y0, f0, t_bound,
                 rtol, atol, max_step, y1, f1, pull=None, chart=None, loops=None):
    """SciPy's select_initial_step (order 7, RMS norm). Returns (h_abs, info)."""
    m = y0.shape[0]
    if m == 0:
        return np.inf, -1
    interval_length = abs(t_bound - t0)
    if interval_length == 0.0:
        return 0.0, -1
    for i in range(m):
        y1[i] = atol + abs(y0[i]) * rtol       # y1 holds the scale for now
    d0 = _rms(y0, y1)
    d1 = _rms(f0, y1)
    if d0 < 1e-5 or d1 < 1e-5:
        h0 = 1e-6
    else:
        h0 = 0.01 * d0 / d1
    h0 = min(h0, interval_length)
    for i in range(m):
        y1[i] = y0[i] + h0 * f0[i]
    bad = call_at(rhs_address, (MF, MI, ws, torque, t0 + h0, y1, tau, passive, f_ext, pull, f1,
                                 chart, loops))
    if bad != -1:
        return np.nan, bad
    for i in range(m):
        y1[i] = (f1[i] - f0[i]) / (atol + abs(y0[i]) * rtol)
    d2 = _rms_unit(y1) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / (7 + 1))
    return min(100 * h0, h1, interval_length, max_step), -1


@compiled_kernel
def _first_nonfinite(x):
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return i
    return -1


@compiled_kernel
def _stage_input(K, s, a_row, y, h, out):
    """out = y + (K[:s].T @ a_row[:s]) * h (SciPy's evaluation order; out is not y). With
    a_row = B and s = 12 it is the step's y_new = y + h (K[:12].T @ B)."""
    m = y.shape[0]
    # stage by stage over contiguous rows of K (vectorised), each out[i] summed in j order
    for i in range(m):
        out[i] = 0.0
    for j in range(s):
        a = a_row[j]
        for i in range(m):
            out[i] += K[j, i] * a
    for i in range(m):
        out[i] = y[i] + out[i] * h


@compiled_kernel
def _dense_build(rhs_address, MF, MI, ws, torque, t_old, tau, passive, f_ext, pull, chart, loops,
                 K, y_old, y_new, f_new, h, ystage, F):
    """Extra stages 13..15 and the 7 interpolation rows F. Returns -1, a singular joint
    or TORQUE_FAILED."""
    m = y_old.shape[0]
    for s in range(N_STAGES + 1, N_STAGES_EXTENDED):
        _stage_input(K, s, _A[s], y_old, h, ystage)
        bad = call_at(rhs_address, (MF, MI, ws, torque, t_old + _C[s] * h, ystage, tau,
                                    passive, f_ext, pull, K[s], chart, loops))
        if bad != -1:
            return bad
    for i in range(m):
        dy = y_new[i] - y_old[i]
        f_old = K[0, i]
        F[0, i] = dy
        F[1, i] = h * f_old - dy
        F[2, i] = 2 * dy - h * (f_new[i] + f_old)
    for r in range(INTERPOLATOR_POWER - 3):
        Fr = F[3 + r]
        for i in range(m):
            Fr[i] = 0.0
        for j in range(N_STAGES_EXTENDED):  # row by row, as _stage_input
            d = _D[r, j]
            for i in range(m):
                Fr[i] += d * K[j, i]
        for i in range(m):
            Fr[i] = h * Fr[i]
    return -1


@compiled_kernel
def _dense_eval(F, y_old, x, out):
    """SciPy's Dop853DenseOutput at x = (t - t_old) / h."""
    m = y_old.shape[0]
    for i in range(m):
        v = 0.0
        for k in range(INTERPOLATOR_POWER):
            v += F[INTERPOLATOR_POWER - 1 - k, i]
            if k % 2 == 0:
                v *= x
            else:
                v *= 1 - x
        out[i] = v + y_old[i]


@compiled_kernel
def dop853_advance(rhs_address, MF, MI, ws, torque, tau, passive, f_ext, state, y, f, K, scratch,
                   stats, t_out, next_out, Y_out, t_stop, max_steps, huge, pull=None,
                   chart=None, contacts=None, loops=None):
    """Advance the DOP853 integration; see the module docstring for the contract."""
    t = state[0]
    h_abs = state[1]
    t_bound = state[2]
    rtol = state[3]
    atol = state[4]
    max_step = state[5] if state.shape[0] > 5 else np.inf
    project_tol = state[6] if state.shape[0] > 6 else 0.0
    mv = model_views(MF, MI)  # cut once per call: the stages reuse them
    m = y.shape[0]
    nv = mv.nv
    S = t_out.shape[0]

    y_old = scratch[_Y_OLD]
    f_old = scratch[_F_OLD]
    y_new = scratch[_Y_NEW]
    ystage = scratch[_Y_STAGE]
    sample = scratch[_SAMPLE]
    F = scratch[_F0:_F0 + INTERPOLATOR_POWER]
    err5 = scratch[_ERR5]
    err3 = scratch[_ERR3]

    # samples at or before the current time (e.g. t0): copies of y
    while next_out < S and t_out[next_out] <= t:
        _write_sample(mv, chart, y, Y_out[next_out])
        next_out += 1

    taken = 0
    while True:
        if t == t_bound:
            state[0] = t
            state[1] = h_abs
            return STATUS_FINISHED, next_out, -1
        if t >= t_stop or taken >= max_steps:
            state[0] = t
            state[1] = h_abs
            return STATUS_RUNNING, next_out, -1

        # ---- one step (RungeKutta._step_impl) ----
        min_step = 10 * abs(np.nextafter(t, np.inf) - t)
        if h_abs > max_step:
            h_abs = max_step
        elif h_abs < min_step:
            h_abs = min_step
        step_rejected = False
        last_nonfinite = -1
        last_singular = -1
        while True:
            if h_abs < min_step:
                state[0] = t
                state[1] = h_abs
                if last_singular >= 0:    # singular at every trial step down to min_step
                    return STATUS_SINGULAR, next_out, last_singular
                if last_nonfinite >= 0:   # shrinking never got rid of inf/nan: a blow-up
                    return STATUS_BLOWUP, next_out, last_nonfinite
                return STATUS_STEP_TOO_SMALL, next_out, -1
            t_new = t + h_abs
            if t_new - t_bound > 0:
                t_new = t_bound
            h = t_new - t
            h_abs = abs(h)

            # rk_step
            for i in range(m):
                K[0, i] = f[i]
            # A trial step that hits a non-finite stage input or a singular mass matrix at
            # some stage (typically a trial step far too long for a fast-growing solution)
            # is rejected like SciPy's nan/inf error norm would be (h *= MIN_FACTOR). Only
            # if that persists down to min_step is it reported (-3 resp. -2).
            # stages 1..11 at ystage, then f_new (K[12]) at y_new
            nonfinite = -1
            singular = -1
            for s in range(1, N_STAGES + 1):
                if s < N_STAGES:
                    _stage_input(K, s, _A[s], y, h, ystage)
                    y_s = ystage
                    t_s = t + _C[s] * h
                else:
                    _stage_input(K, N_STAGES, _B, y, h, y_new)
                    y_s = y_new
                    t_s = t_new
                nonfinite = _first_nonfinite(y_s)
                if nonfinite >= 0:
                    break
                singular = call_at(rhs_address, (MF, MI, ws, torque, t_s, y_s, tau, passive,
                                                 f_ext, pull, K[s], chart, loops))
                stats[0] += 1
                if singular == TORQUE_FAILED:
                    state[0] = t
                    state[1] = h_abs
                    return STATUS_TORQUE_FAILED, next_out, -1
                if singular >= 0:
                    break
            if nonfinite >= 0 or singular >= 0:
                last_nonfinite = nonfinite
                last_singular = singular
                h_abs *= MIN_FACTOR
                step_rejected = True
                stats[2] += 1
                continue

            # error norm (DOP853._estimate_error_norm)
            for i in range(m):
                err5[i] = 0.0
                err3[i] = 0.0
            for j in range(N_STAGES + 1):  # row by row, as _stage_input
                b5 = _E5[j]
                b3 = _E3[j]
                for i in range(m):
                    err5[i] += K[j, i] * b5
                    err3[i] += K[j, i] * b3
            e5 = 0.0
            e3 = 0.0
            for i in range(m):
                sc = atol + max(abs(y[i]), abs(y_new[i])) * rtol
                a5 = err5[i] / sc
                a3 = err3[i] / sc
                e5 += a5 * a5
                e3 += a3 * a3
            if e5 == 0 and e3 == 0:
                error_norm = 0.0
            else:
                error_norm = abs(h) * e5 / math.sqrt((e5 + 0.01 * e3) * m)

            if error_norm < 1:
                if error_norm == 0:
                    factor = MAX_FACTOR
                else:
                    factor = min(MAX_FACTOR, SAFETY * error_norm ** ERROR_EXPONENT)
                if step_rejected:
                    factor = min(1.0, factor)
                h_abs *= factor
                break
            else:
                # nan/inf error norm: SciPy's max(MIN_FACTOR, nan) gives MIN_FACTOR
                fac = SAFETY * error_norm ** ERROR_EXPONENT
                if not (fac > MIN_FACTOR):
                    fac = MIN_FACTOR
                last_nonfinite = -1
                last_singular = -1
                h_abs *= fac
                step_rejected = True
                stats[2] += 1

        # ---- blow-up check before accepting ----
        for i in range(m):
            v = y_new[i]
            if not (abs(v) <= huge):   # catches nan and inf
                state[0] = t
                state[1] = h_abs
                return STATUS_BLOWUP, next_out, i

        # ---- accept: y_old <- y, y <- y_new, f <- f_new ----
        t_old = t
        for i in range(m):
            y_old[i] = y[i]
            f_old[i] = f[i]
            y[i] = y_new[i]
            f[i] = K[N_STAGES, i]
        t = t_new
        taken += 1
        stats[1] += 1
        # ---- loops: project the accepted state back onto them (a no-op for trees) ----
        if chart is None and project_tol > 0.0 and project_if_loops(loops, mv, ws, y[:nv],
                                                                     y[nv:], project_tol):
            bad = call_at(rhs_address, (MF, MI, ws, torque, t, y, tau, passive, f_ext, pull,
                                        f, chart, loops))
            stats[0] += 1
            if bad != -1:
                state[0] = t
                state[1] = h_abs
                if bad == TORQUE_FAILED:
                    return STATUS_TORQUE_FAILED, next_out, -1
                return STATUS_SINGULAR, next_out, bad
        # ---- end stops: count the contacts at every accepted state ----
        if contacts is not None:
            record_stop_contacts(passive, y, contacts)

        # ---- output samples in (t_old, t] ----
        built = False
        while next_out < S and t_out[next_out] <= t:
            tj = t_out[next_out]
            if tj == t:
                _write_sample(mv, chart, y, Y_out[next_out])
            else:
                if not built:
                    bad = _dense_build(rhs_address, MF, MI, ws, torque, t_old, tau, passive,
                                       f_ext, pull, chart, loops, K, y_old, y, f, h, ystage,
                                       F)
                    stats[0] += 3
                    stats[3] += 1
                    if bad != -1:
                        # the step itself is fine; report the failed stage (t stays new)
                        state[0] = t
                        state[1] = h_abs
                        if bad == TORQUE_FAILED:
                            return STATUS_TORQUE_FAILED, next_out, -1
                        return STATUS_SINGULAR, next_out, bad
                    built = True
                if chart is None:
                    _dense_eval(F, y_old, (tj - t_old) / h, Y_out[next_out])
                else:  # the step's chart, around its base
                    _dense_eval(F, y_old, (tj - t_old) / h, sample)
                    _write_sample(mv, chart, sample, Y_out[next_out])
            next_out += 1

        # ---- a chart moves its base to the new state (delta back to 0), after the
        # step's samples (they are points of the step's chart); then the loops ----
        if chart is not None:
            recentre(mv, chart[0], y[:nv], y[nv:], f[:nv])
            if project_tol > 0.0 and project_if_loops(loops, mv, ws, chart[0], y[nv:],
                                                      project_tol):
                chart_origin(mv, chart[0], y[:nv])
                bad = call_at(rhs_address, (MF, MI, ws, torque, t, y, tau, passive, f_ext,
                                            pull, f, chart, loops))
                stats[0] += 1
                if bad != -1:
                    state[0] = t
                    state[1] = h_abs
                    if bad == TORQUE_FAILED:
                        return STATUS_TORQUE_FAILED, next_out, -1
                    return STATUS_SINGULAR, next_out, bad
