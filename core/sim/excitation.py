"""An excitation motion for identification: the Fourier series (Swevers et al. 1997) whose
base regressor is best conditioned, within the joint limits and, when given, rate,
acceleration and torque limits.

    minimise   log cond(W_b(a, b) D^-1)  +  LIMIT_PENALTY * sum excess^2
    over       the coefficients a, b (n, L) of `FourierSeries(q0, a, b, f)`

W_b (S n, r) is the regressor's base columns (`core.sim.identification.base_parameters`)
at `samples` times over one period, D its column norms (the condition number of
`Identification.condition_number`); `excess` how far q passes a joint limit (less a
margin of LIMIT_MARGIN of the range, rad or m) and, relative to the limit, how far |qd|,
|qdd| and |tau| pass theirs (less LIMIT_MARGIN of the limit) at those times; tau = W pi
of the model's own parameters pi (`core.algorithms.regressor.parameter_vector`): the
regressor already computed gives the torques at no cost. q0 is the middle of each
joint's range. L-BFGS-B with differences for the gradient, from random coefficients (a
fixed seed); the optimum is then shrunk towards q0 until `limit_violations` (with the
same limits, at its denser check times) finds nothing: q - q0, qd and qdd shrink in
proportion, the torques towards those of holding q0 against gravity. Models carry no
rate or torque limits of their own (a URDF's velocity and effort are not read): they
are arguments.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ..algorithms.dynamics import inverse_dynamics
from ..algorithms.regressor import joint_torque_regressor, parameter_vector
from ..errors import ArgumentError
from ..model.arguments import model_of, number_in
from .checkpoints import Cancel, Progress, checkpoint
from .identification import base_parameters, one_blas_thread
from .joint_motions import FourierSeries, check_times, limit_violations, positive_limits

#: Weight of the squared excess over a joint limit (rad^-2) against log cond.
LIMIT_PENALTY = 1e3
#: The share of each joint's range kept free at both ends, and of a rate, acceleration
#: or torque limit kept free in the optimisation.
LIMIT_MARGIN = 0.05
#: Shrinking steps towards q0 (by SHRINK each) before the limits are declared unmet.
SHRINK, SHRINK_STEPS = 0.95, 90


@dataclass(frozen=True)
class Excitation:
    """What `optimise_excitation` found: `motion` (a FourierSeries within the limits),
    its base regressor's `condition_number`, `initial_condition_number` (the starting
    coefficients'), `limits` the names of the limits it keeps ("joint limits", "rate
    limits", "acceleration limits", "torque limits"), and at `check_times(motion)` the
    per-joint peaks (n,) `peak_rate` (rad/s or m/s), `peak_acceleration` (rad/s^2 or
    m/s^2) and `peak_torque` (N m or N, the model's inverse dynamics)."""

    motion: FourierSeries
    condition_number: float
    initial_condition_number: float
    limits: tuple[str, ...]
    peak_rate: np.ndarray
    peak_acceleration: np.ndarray
    peak_torque: np.ndarray


def excitation_condition(model, motion, samples: int = 100) -> float:
    """cond(W_b D^-1) of `motion` at `samples` evenly spaced times over its duration."""
    m = model_of(model)
    t = np.linspace(0.0, motion.duration, samples, endpoint=False)
    q, qd, qdd = motion.sample(t)
    W = joint_torque_regressor(m, q, qd, qdd).reshape(samples * m.n, -1)
    Wb = W[:, base_parameters(m).independent]
    norms = np.linalg.norm(Wb, axis=0)
    if not np.all(norms > 0):
        return float("inf")
    sv = np.linalg.svd(Wb / norms, compute_uv=False)
    return float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")


def optimise_excitation(model, base_frequency: float = 0.1, harmonics: int = 3,
                        samples: int = 100, seed: int = 0, max_iterations: int = 100,
                        rate_limit=None, accel_limit=None, torque_limit=None,
                        progress: Progress | None = None, cancel: Cancel | None = None
                        ) -> Excitation:
    """The Fourier excitation of `harmonics` terms at `base_frequency` (Hz) with the best
    conditioned base regressor within the joint limits and the given `rate_limit`,
    `accel_limit` and `torque_limit` (scalars or (n,): rad/s, rad/s^2, N m, or m/s,
    m/s^2, N for a prismatic joint; module docstring). Joints without limits are kept
    within +-pi of their home value. Runs on one BLAS thread (`one_blas_thread`).
    Raises ArgumentError for fewer than 1 harmonic or 10 samples, or a limit that is
    not positive; MotionError (naming the joint, the time and the limit) when even the
    shrunk motion breaks a limit, e.g. a torque limit below the torque that holds the
    middle pose against gravity.

    `progress(fraction)` is called after each optimiser iteration (iterations done /
    `max_iterations`, 1.0 at the end); `cancel()` is asked at every evaluation of the
    objective (a PUMA's takes ~2 ms): True raises Cancelled (`core.sim.checkpoints`)."""
    m = model_of(model)
    # an excitation's period between 1 ms and a day: beyond, the regressor's samples
    # are meaningless (and the Fourier terms overflow)
    base_frequency = number_in(base_frequency, "base_frequency", 1.0 / 86_400.0, 1.0e3, "Hz")
    if harmonics < 1 or samples < 10:
        raise ArgumentError(f"harmonics must be >= 1 and samples >= 10, got {harmonics} and "
                            f"{samples}")
    bounds = {name: None if given is None else positive_limits(given, m.n, name)
              for name, given in (("rate_limit", rate_limit), ("accel_limit", accel_limit),
                                  ("torque_limit", torque_limit))}
    with one_blas_thread():
        return _optimise(m, model, base_frequency, harmonics, samples, seed, max_iterations,
                         bounds, progress, cancel)


def _optimise(m, model, base_frequency, L, samples, seed, max_iterations, bounds,
              progress, cancel) -> Excitation:
    """`optimise_excitation` for the checked arguments; bounds: {"rate_limit": (n,) or
    None, "accel_limit": ..., "torque_limit": ...}."""
    n = m.n
    lower, upper = m.joint_limits.T
    home = np.asarray(getattr(model, "q_home", np.zeros(n)), dtype=float)
    lower = np.where(np.isfinite(lower), lower, home - np.pi)
    upper = np.where(np.isfinite(upper), upper, home + np.pi)
    q0 = 0.5 * (lower + upper)
    half = 0.5 * (upper - lower) * (1.0 - 2.0 * LIMIT_MARGIN)
    w = 2.0 * np.pi * base_frequency
    scale = (w * np.arange(1, L + 1))[None, :] * half[:, None] / L  # amplitude of q: half / L
    t = np.linspace(0.0, 1.0 / base_frequency, samples, endpoint=False)
    independent = base_parameters(m).independent
    pi = parameter_vector(m)
    rate, accel, torque = (bounds["rate_limit"], bounds["accel_limit"],
                           bounds["torque_limit"])

    def law(x):
        a, b = (x.reshape(2, n, L) * scale)
        return FourierSeries(q0, a, b, base_frequency)

    def relative_excess(values, bound):  # sum over samples and joints, squared
        if bound is None:
            return 0.0
        return float(np.sum(np.maximum(np.abs(values) / ((1.0 - LIMIT_MARGIN) * bound) - 1.0,
                                       0.0) ** 2))

    def terms(x):  # (log cond, the excess over the limits), at the times t
        q, qd, qdd = law(x).sample(t)
        Y = joint_torque_regressor(m, q, qd, qdd)
        Wb = Y.reshape(samples * n, -1)[:, independent]
        norms = np.linalg.norm(Wb, axis=0)
        sv = np.linalg.svd(Wb / np.where(norms > 0, norms, 1.0), compute_uv=False)
        excess = np.sum(np.maximum(np.abs(q - q0) - half, 0.0) ** 2)
        excess += relative_excess(qd, rate) + relative_excess(qdd, accel)
        if torque is not None:
            excess += relative_excess(Y @ pi, torque)
        return float(np.log(sv[0] / max(sv[-1], 1e-300))), float(excess)

    def objective(x):
        checkpoint(None, cancel, 0.0, "the excitation's optimisation", "while optimising")
        log_cond, excess = terms(x)
        return log_cond + LIMIT_PENALTY * excess

    at_rest = limit_violations(m, law(np.zeros(2 * n * L)), rate, accel, torque)
    if at_rest:  # holding q0 breaks a limit: no motion about q0 keeps it
        raise at_rest[0]
    x0 = np.random.default_rng(seed).uniform(-0.5, 0.5, 2 * n * L)
    for _ in range(SHRINK_STEPS):  # start within the limits: the optimiser then improves
        if terms(x0)[1] == 0.0:   # the conditioning instead of fighting the penalty
            break
        x0 = SHRINK * x0
    initial = excitation_condition(m, law(x0), samples)
    iterations = [0]

    def iterated(_x):  # scipy's callback, after each iteration
        iterations[0] += 1
        checkpoint(progress, cancel, iterations[0] / max(1, max_iterations),
                   "the excitation's optimisation", f"after iteration {iterations[0]}")

    fit = minimize(objective, x0, method="L-BFGS-B", bounds=[(-1.0, 1.0)] * x0.size,
                   options={"maxiter": max_iterations}, callback=iterated)
    x = fit.x
    for _ in range(SHRINK_STEPS):  # shrink towards q0 until no limit is passed
        broken = limit_violations(m, law(x), rate, accel, torque)
        if not broken:
            break
        x = SHRINK * x
    else:
        raise broken[0]
    motion = law(x)
    T = check_times(motion)
    q, qd, qdd = motion.sample(T)
    tau = inverse_dynamics(m, q, qd, qdd)
    kept = ("joint limits",) + tuple(
        name for name, bound in (("rate limits", rate), ("acceleration limits", accel),
                                 ("torque limits", torque)) if bound is not None)
    checkpoint(progress, cancel, 1.0, "the excitation's optimisation", "at its end")
    return Excitation(motion, excitation_condition(m, motion, samples), initial, kept,
                      np.abs(qd).max(axis=0), np.abs(qdd).max(axis=0),
                      np.abs(tau).max(axis=0))
