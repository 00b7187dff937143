"""An excitation motion for identification: the Fourier series (Swevers et al. 1997) whose
base regressor is best conditioned, within the joint limits.

    minimise   log cond(W_b(a, b) D^-1)  +  LIMIT_PENALTY * sum excess^2
    over       the coefficients a, b (n, L) of `FourierSeries(q0, a, b, f)`

W_b (S n, r) is the regressor's base columns (`core.sim.identification.base_parameters`)
at `samples` times over one period, D its column norms (the condition number of
`Identification.condition_number`); `excess` how far q passes a joint limit (less a
margin of LIMIT_MARGIN of the range) at those times. q0 is the middle of each joint's
range. L-BFGS-B with differences for the gradient, from random coefficients (a fixed
seed); the optimum is then shrunk towards q0 until `limit_violations` finds nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ..algorithms.regressor import joint_torque_regressor
from ..errors import ArgumentError
from ..model.arguments import model_of, number_in
from .identification import base_parameters
from .joint_motions import FourierSeries, limit_violations

#: Weight of the squared excess over a joint limit (rad^-2) against log cond.
LIMIT_PENALTY = 1e3
#: The share of each joint's range kept free at both ends.
LIMIT_MARGIN = 0.05


@dataclass(frozen=True)
class Excitation:
    """What `optimise_excitation` found: `motion` (a FourierSeries within the joint
    limits), its base regressor's `condition_number`, and `initial_condition_number`, the
    starting coefficients'."""

    motion: FourierSeries
    condition_number: float
    initial_condition_number: float


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
                        samples: int = 100, seed: int = 0,
                        max_iterations: int = 100) -> Excitation:
    """The Fourier excitation of `harmonics` terms at `base_frequency` (Hz) with the best
    conditioned base regressor within the joint limits (module docstring). Joints
    without limits are kept within +-pi of their home value. Raises ArgumentError for
    fewer than 1 harmonic or 10 samples."""
    m = model_of(model)
    # an excitation's period between 1 ms and a day: beyond, the regressor's samples
    # are meaningless (and the Fourier terms overflow)
    base_frequency = number_in(base_frequency, "base_frequency", 1.0 / 86_400.0, 1.0e3, "Hz")
    if harmonics < 1 or samples < 10:
        raise ArgumentError(f"harmonics must be >= 1 and samples >= 10, got {harmonics} and "
                            f"{samples}")
    n, L = m.n, harmonics
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

    def law(x):
        a, b = (x.reshape(2, n, L) * scale)
        return FourierSeries(q0, a, b, base_frequency)

    def objective(x):
        q, qd, qdd = law(x).sample(t)
        Wb = joint_torque_regressor(m, q, qd, qdd).reshape(samples * n, -1)[:, independent]
        norms = np.linalg.norm(Wb, axis=0)
        sv = np.linalg.svd(Wb / np.where(norms > 0, norms, 1.0), compute_uv=False)
        excess = np.maximum(np.abs(q - q0) - half, 0.0)
        return float(np.log(sv[0] / max(sv[-1], 1e-300)) + LIMIT_PENALTY * np.sum(excess**2))

    x0 = np.random.default_rng(seed).uniform(-0.5, 0.5, 2 * n * L)
    initial = excitation_condition(m, law(x0), samples)
    fit = minimize(objective, x0, method="L-BFGS-B", bounds=[(-1.0, 1.0)] * x0.size,
                   options={"maxiter": max_iterations})
    x = fit.x
    for _ in range(50):  # shrink towards q0 until no limit is passed
        if not limit_violations(m, law(x)):
            break
        x = 0.95 * x
    motion = law(x)
    return Excitation(motion, excitation_condition(m, motion, samples), initial)
