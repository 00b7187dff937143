"""Identification of a model's inertial, friction and rotor parameters from a measured
motion with torques: `identify(model, motion, validate=None)`.

Algorithm (the regressor's parameters pi, `core.algorithms.regressor`):

1. Stack the regressor W (S n, p) and the measured torques y (S n) of every sample.
2. Base parameters: QR with column pivoting, W P = Q R; the rank r counts the diagonal
   entries of R above RANK_TOLERANCE times the largest. The first r pivoted columns are
   independent; each base parameter is pi_i + sum_j beta_ij pi_j over the others,
   beta = R11^-1 R12 (`Identification.combinations` in words; a parameter in no
   combination is unidentifiable by this motion and named in `.unidentifiable`).
3. Weighted least squares on the base regressor: ordinary least squares first, then each
   joint's rows weighted by 1 / its residual's standard deviation; the covariance
   (W_b^T Sigma^-1 W_b)^-1 gives `.std`. `.condition_number` is the base regressor's
   (its columns scaled to unit norm).
4. A physically consistent model: every link's pseudo-inertia J = [[Sigma, h], [h^T, m]]
   (Sigma = tr(I)/2 1 - I) written as U U^T with U upper triangular of positive diagonal
   (the log-Cholesky parameters of Rucker and Wensing, IEEE RA-L 7(2), 2022), friction
   and rotor inertias as exponentials: consistent by construction, not by clipping.
   Fitted by `scipy.optimize.least_squares` to the weighted rows (compressed to the p
   rows of R by the QR of step 2), plus REGULARIZATION times the distance to the nominal
   parameters, which fixes the directions the motion does not see.
5. `.rms`: per joint, the RMS of measured minus identified-model torque; with
   `validate`, the same on a second motion. A fit worse than the zero torque (RMS of the
   fit above the RMS of the torques) means torques of the wrong sign or joint order and
   is refused (IdentificationError).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.linalg import qr, solve_triangular
from scipy.optimize import least_squares

from ..algorithms.regressor import (JOINT_PARAMETERS, LINK_PARAMETERS, joint_torque_regressor,
                                    parameter_names, parameter_vector)
from ..errors import ArgumentError
from ..model.arguments import model_of

#: Relative size of R's diagonal below which a pivoted column depends on the others.
RANK_TOLERANCE = 1e-8
#: Weight of the nominal parameters in the consistent fit, relative to the data's scale.
REGULARIZATION = 1e-6
#: Evaluations of the consistent fit's residual at most (its Jacobian by differences).
MAX_EVALUATIONS = 500


class IdentificationError(ArgumentError):
    """Identification refused: too few samples, no measured torques, a fit worse than
    zero (wrong sign convention), a motion that excites nothing."""


@dataclass(frozen=True)
class Identification:
    """What `identify` found (module docstring).

    model            the identified model, same kind as the input
    rms              (n,) per-joint RMS of measured - identified torque, N m / N
    validation_rms   (n,) the same on the validation motion, or None
    base_parameters  (r,) the weighted least-squares estimate of the base parameters
    std              (r,) their standard deviations
    combinations     (r,) each base parameter in words ("m upper + 0.5 mcx lower")
    unidentifiable   names of the parameters this motion does not excite at all
    condition_number of the base regressor (columns scaled to unit norm)
    base_matrix      (r, p): base_parameters estimate base_matrix @ pi
    """

    model: object
    rms: np.ndarray
    validation_rms: np.ndarray | None
    base_parameters: np.ndarray
    std: np.ndarray
    combinations: tuple[str, ...]
    unidentifiable: tuple[str, ...]
    condition_number: float
    base_matrix: np.ndarray | None = None


# ----- log-Cholesky parametrization of a link ----------------------------------------
def _pseudo_inertia(pi_k: np.ndarray) -> np.ndarray:
    m, h = pi_k[0], pi_k[1:4]
    xx, yy, zz, xy, xz, yz = pi_k[4:10]
    I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def _from_pseudo_inertia(J: np.ndarray) -> np.ndarray:
    Sigma = J[:3, :3]
    I = np.trace(Sigma) * np.eye(3) - Sigma
    return np.array([J[3, 3], *J[:3, 3], I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def _theta_of(pi_k: np.ndarray) -> np.ndarray:
    """Log-Cholesky parameters (10,) of a physically consistent pi_k."""
    J = _pseudo_inertia(pi_k)
    flip = np.eye(4)[::-1]
    U = flip @ np.linalg.cholesky(flip @ J @ flip) @ flip  # J = U U^T, U upper
    a = U[3, 3]
    V = U / a
    return np.array([np.log(a), np.log(V[0, 0]), np.log(V[1, 1]), np.log(V[2, 2]),
                     V[0, 1], V[1, 2], V[0, 2], V[0, 3], V[1, 3], V[2, 3]])


def _pi_of(theta: np.ndarray) -> np.ndarray:
    a, d1, d2, d3, s12, s23, s13, t1, t2, t3 = theta
    U = np.exp(a) * np.array([[np.exp(d1), s12, s13, t1], [0.0, np.exp(d2), s23, t2],
                              [0.0, 0.0, np.exp(d3), t3], [0.0, 0.0, 0.0, 1.0]])
    return _from_pseudo_inertia(U @ U.T)


def _full_parameters(x: np.ndarray, n: int) -> np.ndarray:
    links = [_pi_of(x[LINK_PARAMETERS * k:LINK_PARAMETERS * (k + 1)]) for k in range(n)]
    return np.concatenate(links + [np.exp(x[LINK_PARAMETERS * n:])])


def _model_with(model, pi: np.ndarray):
    """`model` (a Robot or Mechanism) with the parameters pi: masses, mass centres,
    inertias about them, friction, rotor inertias (gear ratios kept)."""
    m = model_of(model)
    links = []
    for k, link in enumerate(m.links):
        p = pi[LINK_PARAMETERS * k:LINK_PARAMETERS * (k + 1)]
        mass, c = p[0], p[1:4] / p[0]
        xx, yy, zz, xy, xz, yz = p[4:]
        I_P = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        I_C = I_P - mass * (c @ c * np.eye(3) - np.outer(c, c))
        fv, fc, armature = pi[LINK_PARAMETERS * m.n + JOINT_PARAMETERS * k:][:3]
        links.append(replace(link, mass=float(mass), com=tuple(float(v) for v in c),
                             inertia=(float(I_C[0, 0]), float(I_C[1, 1]), float(I_C[2, 2]),
                                      float(I_C[0, 1]), float(I_C[0, 2]), float(I_C[1, 2])),
                             friction_viscous=float(fv), friction_coulomb=float(fc),
                             rotor_inertia=float(armature / link.gear_ratio**2)))
    if hasattr(model, "with_links"):
        return model.with_links(links)
    chains, i = [], 0
    for chain in model.chains:
        chains.append(replace(chain, links=tuple(links[i:i + len(chain.links)])))
        i += len(chain.links)
    return replace(model, chains=tuple(chains))


def _stack(model, motion):
    if motion.tau is None:
        raise IdentificationError(f"the motion {motion.source or ''} has no measured torques "
                                  "(tau1..taun): nothing to identify from")
    Y = joint_torque_regressor(model, motion.q, motion.qd, motion.qdd)
    S, n, p = Y.shape
    return Y.reshape(S * n, p), np.asarray(motion.tau, dtype=float).reshape(S * n), n


def _words(coefficients: np.ndarray, names: list[str]) -> str:
    parts = []
    for c, name in zip(coefficients, names):
        if abs(c) < 1e-9:
            continue
        sign = "-" if c < 0 else "+"
        size = "" if abs(abs(c) - 1.0) < 1e-9 else f"{abs(c):.4g} "
        parts.append(f"{sign} {size}{name}")
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else text


def identify(model, motion, validate=None) -> Identification:
    """Identify `model`'s parameters from `motion` (a Motion with torques, e.g.
    `load_motion`); `validate`, a second one, for `validation_rms`. Module docstring for
    the algorithm; raises IdentificationError (an ArgumentError) for a motion without
    torques, fewer rows than parameters, a motion that excites nothing, or a fit worse
    than zero."""
    m = model_of(model)
    W, y, n = _stack(m, motion)
    names = parameter_names(m)
    p = W.shape[1]
    if W.shape[0] < p:
        raise IdentificationError(f"{W.shape[0] // n} samples give {W.shape[0]} equations for "
                                  f"{p} parameters: log more samples")
    # 2. base parameters by QR with column pivoting
    Q, R, piv = qr(W, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    if not diag[0] > 0:
        raise IdentificationError("the motion excites no parameter (the regressor is zero)")
    r = int(np.sum(diag > RANK_TOLERANCE * diag[0]))
    beta = solve_triangular(R[:r, :r], R[:r, r:])
    base_of = np.zeros((r, p))  # base parameter i = base_of[i] @ pi
    base_of[np.arange(r), piv[:r]] = 1.0
    base_of[:, piv[r:]] = beta
    combinations = tuple(_words(row, names) for row in base_of)
    unidentifiable = tuple(names[j] for j in range(p) if not np.any(np.abs(base_of[:, j]) > 1e-9))
    # 3. weighted least squares on the base regressor
    Wb = W[:, piv[:r]]
    estimate = np.linalg.lstsq(Wb, y, rcond=None)[0]
    residual = (y - Wb @ estimate).reshape(-1, n)
    dof = max(1, residual.shape[0] - r // n - 1)
    sigma = np.sqrt(np.sum(residual**2, axis=0) / dof)
    sigma = np.where(sigma > 0, sigma, max(float(sigma.max()), 1e-12))
    w = np.tile(1.0 / sigma, residual.shape[0])
    Ww, yw = Wb * w[:, None], y * w
    estimate = np.linalg.lstsq(Ww, yw, rcond=None)[0]
    chi = np.sum((yw - Ww @ estimate) ** 2) / max(1, Ww.shape[0] - r)
    cov = chi * np.linalg.inv(Ww.T @ Ww)
    std = np.sqrt(np.diag(cov))
    scaled = Wb / np.linalg.norm(Wb, axis=0)
    condition = float(np.linalg.cond(scaled))
    # the nominal model must fit better than no torque at all: else the torques are of
    # the opposite sign (or in another joint order)
    nominal = parameter_vector(m)
    zero, off = float(np.sqrt(np.mean(y**2))), float(np.sqrt(np.mean((y - W @ nominal) ** 2)))
    if off > zero:
        raise IdentificationError(
            f"the nominal model fits the measured torques worse than zero torque (RMS "
            f"{off:.4g} against {zero:.4g}): are they of the opposite sign, or in another "
            "joint order?")
    # 4. the consistent fit, on the weighted rows compressed by QR
    Qw, Rw = np.linalg.qr(W * w[:, None])
    target = Qw.T @ yw
    scale = float(np.linalg.norm(Rw)) * np.sqrt(REGULARIZATION)
    x0 = np.concatenate([*(_theta_of(nominal[LINK_PARAMETERS * k:LINK_PARAMETERS * (k + 1)])
                           for k in range(n)),
                         np.log(np.maximum(nominal[LINK_PARAMETERS * n:], 1e-3))])

    def rows(x):
        pi = _full_parameters(x, n)
        return np.concatenate([Rw @ pi - target, scale * (pi - nominal)])

    def jacobian(x):
        """d rows / dx: dpi/dx is block diagonal (a link's 10 by 10 block by central
        differences of `_pi_of`, the exponentials' diagonal exactly)."""
        D = np.zeros((p, p))
        h = 1e-7
        for k in range(n):
            block = slice(LINK_PARAMETERS * k, LINK_PARAMETERS * (k + 1))
            for c in range(LINK_PARAMETERS):
                step = np.zeros(LINK_PARAMETERS)
                step[c] = h
                D[block, LINK_PARAMETERS * k + c] = (_pi_of(x[block] + step)
                                                     - _pi_of(x[block] - step)) / (2 * h)
        tail = np.arange(LINK_PARAMETERS * n, p)
        D[tail, tail] = np.exp(x[tail])
        return np.vstack([Rw @ D, scale * D])

    with np.errstate(over="ignore", invalid="ignore"):
        fit = least_squares(rows, x0, jac=jacobian, method="trf", max_nfev=MAX_EVALUATIONS)
    pi = _full_parameters(fit.x, n)
    identified = _model_with(model, pi)
    err = (y - W @ pi).reshape(-1, n)
    rms = np.sqrt(np.mean(err**2, axis=0))
    if np.sqrt(np.mean(err**2)) > np.sqrt(np.mean(y**2)):
        raise IdentificationError(
            f"the identified model fits the torques worse than zero torque (RMS "
            f"{np.sqrt(np.mean(err**2)):.4g} against {np.sqrt(np.mean(y**2)):.4g}): are the "
            "measured torques of the opposite sign, or in another joint order?")
    validation = None
    if validate is not None:
        Wv, yv, _ = _stack(m, validate)
        validation = np.sqrt(np.mean(((yv - Wv @ pi).reshape(-1, n)) ** 2, axis=0))
    return Identification(identified, rms, validation, estimate, std, combinations,
                          unidentifiable, condition, base_of)
