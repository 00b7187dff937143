"""Identification of a model's inertial, friction and rotor parameters from a measured
motion with torques: `identify(model, motion, validate=None)`.

Symbols (Gautier and Khalil's base parameters; Wensing, Kim and Slotine's physical
consistency, IEEE RA-L 3(1), 2018):

  pi      (p,)    the regressor's parameters, p = 13 n (`core.algorithms.regressor`)
  W       (S n, p) the regressor of every sample stacked; y (S n,) the measured torques
  K       (r, p)  the base parameters pi_b = K pi: the model's r independent combinations
  W_b     (S n, r) W's columns of the independent parameters, W = W_b K
  Sigma   (r, r)  the covariance of the weighted least-squares estimate of pi_b
  J_k     (4, 4)  link k's pseudo-inertia [[1/2 tr(I) 1 - I, h], [h^T, m]]; positive
                  definite if and only if the link's mass, mass centre and inertia are
                  those of a body of positive density (Wensing et al., Theorem 1)

Algorithm:

1. Base parameters (a property of the model, not of the motion): the regressor at
   STRUCTURE_SAMPLES random states, its columns scaled to unit norm, QR with column
   pivoting: W P = Q R. The rank r counts R's diagonal above RANK_TOLERANCE of its
   largest; the first r pivoted columns are independent and each base parameter is
   pi_i + sum_j beta_ij pi_j over the dependent ones, beta = R11^-1 R12 (unscaled back):
   the rows of K, `Identification.combinations` in words. Parameters in no combination
   (`.unidentifiable`) no motion can identify.
2. The motion's W_b must have rank r (singular values above EXCITATION_TOLERANCE of the
   largest): else the combinations its near-null directions involve are named
   (IdentificationError): the motion does not excite them.
3. Weighted least squares, on the normal equations per joint (W_j^T W_j, W_j^T y_j,
   y_j^T y_j summed CHUNK samples at a time: the samples never stack): ordinary least squares first, then each joint's rows weighted
   by 1 / its residual's standard deviation; Sigma = chi^2 (W_b^T W_w W_b)^-1 gives
   `.std`. `.condition_number` is W_b's with its columns scaled to unit norm.
4. Physical consistency by a constrained fit, not by clipping: the full pi nearest the
   nominal one whose base parameters match the estimate in Sigma's metric,

       min  |L_Sigma^T (K pi - pi_b_hat)|^2 + PRIOR^2 |(pi - pi_nominal) / s|^2
       pi_k = pi(C_k C_k^T) for each link (J_k = C_k C_k^T, C_k lower triangular),
       c_v, c_c, r^2 I_r >= 0

   (Sigma^-1 = L_Sigma L_Sigma^T; s_j = RMS(y) / RMS(W_j), the change of pi_j alone that
   moves the torques by their RMS). First the nearest pi with K pi = pi_b_hat exactly
   (linear); when that one is consistent it is the answer. Else, the map C -> pi being
   quadratic, Gauss-Newton in `scipy.optimize.least_squares` from the nominal model's
   C, with the exact Jacobian (the PUMA: 0.1-0.3 s, the base parameters kept to 5e-8
   of their standard deviations when the truth is consistent).
   The base parameters of the consistent model are compared with the estimate:
   `.base_shift` (r,) in standard deviations (zero when the estimate was consistent).
5. `.rms`: per joint, the RMS of measured minus identified-model torque; with
   `validate`, the same on a second motion. A nominal model that fits worse than zero
   torque, or an identified consistent model that does, means torques of the wrong sign
   or joint order: refused.

Rejected: the log-Cholesky fit of all rows with the nominal parameters as a weak pull
(52 s for the PUMA and a fit RMS of 0.1-0.6 N m against the 0.05 N m noise: its
exponentials make a badly scaled problem and the data fit and the pull fight in the
same residual).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
from scipy.linalg import qr, solve_triangular
from scipy.optimize import least_squares

from ..algorithms.regressor import (JOINT_PARAMETERS, LINK_PARAMETERS, joint_torque_regressor,
                                    parameter_names, parameter_vector)
from ..errors import IdentificationError
from ..model.arguments import model_of
from .checkpoints import Cancel, Progress, checkpoint

#: Relative size of R's diagonal (unit-norm columns) below which a column depends on the
#: others: structural dependencies sit at 1e-14, a poorly excited direction above 1e-6.
RANK_TOLERANCE = 1e-8
#: A regressor column below this share of the largest one's norm is round-off of zero.
ZERO_COLUMN = 1e-10
#: Random states at which the model's base parameters are found (step 1).
STRUCTURE_SAMPLES = 200
#: Weight of the pull to the nominal parameters in the consistent fit (step 4): moving an
#: unidentified direction by its torque scale s costs PRIOR^2 of one standard deviation.
PRIOR = 1e-3
#: Residual evaluations of the consistent fit at most.
MAX_EVALUATIONS = 60
#: W_b's smallest singular value (columns scaled to unit norm), relative to its largest,
#: below which the motion does not excite a direction (condition number above 1e6; found
#: from the normal matrix, whose eigenvalues are their squares, so no finer than ~1e-7).
EXCITATION_TOLERANCE = 1e-6
#: Samples per block of the regressor when the normal equations are summed.
CHUNK = 4096
#: The smallest share of a null direction that names a base parameter as unexcited.
NULL_SHARE = 0.2


@dataclass(frozen=True)
class Identification:
    """What `identify` found (module docstring for the symbols).

    model            the identified model, same kind as the input, consistent
    rms              (n,) per-joint RMS of measured - identified torque, N m / N
    validation_rms   (n,) the same on the validation motion, or None
    base_parameters  (r,) the weighted least-squares estimate of pi_b = K pi (SI units of
                     the parameters each combines)
    std              (r,) their standard deviations
    combinations     (r,) each base parameter in words ("Izz upper + Ia shoulder")
    unidentifiable   names of the parameters no motion identifies (in no combination)
    condition_number of W_b with columns scaled to unit norm
    base_matrix      (r, p) K
    base_shift       (r,) K pi of the identified model minus the estimate, in std
    base_rms         (n,) per-joint RMS of the unconstrained base-parameter fit
    """

    model: object
    rms: np.ndarray
    validation_rms: np.ndarray | None
    base_parameters: np.ndarray
    std: np.ndarray
    combinations: tuple[str, ...]
    unidentifiable: tuple[str, ...]
    condition_number: float
    base_matrix: np.ndarray
    base_shift: np.ndarray
    base_rms: np.ndarray


@dataclass(frozen=True)
class BaseParameters:
    """A model's base parameters (step 1): `independent` (r,) indices into pi, `K` (r, p),
    `combinations` (r,) in words, `unidentifiable` names."""

    independent: np.ndarray
    K: np.ndarray
    combinations: tuple[str, ...]
    unidentifiable: tuple[str, ...]


# ----- a link's parameters and its pseudo-inertia --------------------------------------
def pseudo_inertia_of(pi_k: np.ndarray) -> np.ndarray:
    """J (4, 4) of a link's pi_k (10,) = [m, m c, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz]
    about its frame's origin: [[1/2 tr(I) 1 - I, m c], [m c^T, m]] (kg m^2, kg m, kg);
    `core.algorithms.matrix_dynamics.pseudo_inertia` forms the same from a Link."""
    m, h = pi_k[0], pi_k[1:4]
    xx, yy, zz, xy, xz, yz = pi_k[4:10]
    I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def _parameters_of(J: np.ndarray) -> np.ndarray:
    """pi_k (10,) of a pseudo-inertia J (4, 4): the inverse of `pseudo_inertia_of`."""
    Sigma = J[:3, :3]
    I = np.trace(Sigma) * np.eye(3) - Sigma
    return np.array([J[3, 3], *J[:3, 3], I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


_TRIL = np.tril_indices(4)  # the 10 entries of a lower-triangular C


def _link_parameters(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pi_k (10,) of J = C C^T for C's lower triangle c (10,), and d pi_k / d c (10, 10)."""
    C = np.zeros((4, 4))
    C[_TRIL] = c
    pi = _parameters_of(C @ C.T)
    D = np.empty((LINK_PARAMETERS, LINK_PARAMETERS))
    for e, (a, b) in enumerate(zip(*_TRIL)):  # dJ = E_ab C^T + C E_ba, pi linear in J
        dJ = np.zeros((4, 4))
        dJ[a, :] += C[:, b]
        dJ[:, a] += C[:, b]
        D[:, e] = _parameters_of(dJ)
    return pi, D


# ----- base parameters ------------------------------------------------------------------
def _words(coefficients: np.ndarray, names: list[str]) -> str:
    parts = []
    for c, name in zip(coefficients, names):
        if abs(c) < 1e-9:
            continue
        size = "" if abs(abs(c) - 1.0) < 1e-9 else f"{abs(c):.4g} "
        parts.append(f"{'-' if c < 0 else '+'} {size}{name}")
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else text


def base_parameters(model) -> BaseParameters:
    """The model's base parameters (module docstring, step 1), from its regressor at
    STRUCTURE_SAMPLES random states (a fixed seed: the same model gives the same ones)."""
    m = model_of(model)
    rng = np.random.default_rng(0)
    lower, upper = m.joint_limits.T
    lo, hi = np.where(np.isfinite(lower), lower, -np.pi), np.where(np.isfinite(upper), upper, np.pi)
    S = STRUCTURE_SAMPLES
    q = lo + (hi - lo) * rng.uniform(size=(S, m.n))
    W = joint_torque_regressor(m, q, rng.normal(size=(S, m.n)), rng.normal(size=(S, m.n)))
    W = W.reshape(S * m.n, -1)
    p = W.shape[1]
    norms = np.linalg.norm(W, axis=0)
    W[:, norms <= ZERO_COLUMN * norms.max()] = 0.0  # round-off of a column that is zero
    scale = np.where(norms > ZERO_COLUMN * norms.max(), norms, 1.0)
    _, R, piv = qr(W / scale, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    r = int(np.sum(diag > RANK_TOLERANCE * diag[0]))
    beta = solve_triangular(R[:r, :r], R[:r, r:])  # scaled: W_s[:, dep] = W_s[:, ind] beta
    beta = beta / scale[piv[:r], None] * scale[None, piv[r:]]
    K = np.zeros((r, p))
    K[np.arange(r), piv[:r]] = 1.0
    K[:, piv[r:]] = beta
    K[np.abs(K) < 1e-10] = 0.0
    order = np.argsort(piv[:r])  # base parameters in pi's order
    K = K[order]
    names = parameter_names(m)
    return BaseParameters(np.sort(piv[:r]), K, tuple(_words(row, names) for row in K),
                          tuple(names[j] for j in range(p) if not np.any(K[:, j])))


# ----- the identified model -------------------------------------------------------------
def model_with_parameters(model, pi: np.ndarray):
    """`model` (a Robot or Mechanism) with the parameters pi (p,): masses, mass centres,
    inertias about them, friction, rotor inertias (gear ratios kept)."""
    m = model_of(model)
    links = []
    for k, link in enumerate(m.links):
        p = pi[LINK_PARAMETERS * k:LINK_PARAMETERS * (k + 1)]
        mass = float(p[0])
        c = p[1:4] / mass if mass > 0 else np.zeros(3)
        xx, yy, zz, xy, xz, yz = p[4:]
        I_P = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        I_C = I_P - mass * (c @ c * np.eye(3) - np.outer(c, c))
        fv, fc, armature = pi[LINK_PARAMETERS * m.n + JOINT_PARAMETERS * k:][:3]
        links.append(replace(link, mass=mass, com=tuple(float(v) for v in c),
                             inertia=(float(I_C[0, 0]), float(I_C[1, 1]), float(I_C[2, 2]),
                                      float(I_C[0, 1]), float(I_C[0, 2]), float(I_C[1, 2])),
                             friction_viscous=float(fv), friction_coulomb=float(fc),
                             rotor_inertia=float(armature / link.gear_ratio**2)))
    return model.with_links(links)


def _named(motion) -> str:
    """'the motion log.csv' (its source), or 'the motion'."""
    source = getattr(motion, "source", "")
    return f"the motion {source}" if source else "the motion"


@dataclass(frozen=True)
class NormalEquations:
    """A motion's least-squares data per joint j, summed over its S samples:
    H (n, p, p) = W_j^T W_j, h (n, p) = W_j^T y_j, yy (n,) = y_j^T y_j, with W_j (S, p)
    the regressor's rows of joint j and y_j (S,) its measured torques."""

    H: np.ndarray
    h: np.ndarray
    yy: np.ndarray
    samples: int

    def squared_residuals(self, pi: np.ndarray) -> np.ndarray:
        """(n,) sum over samples of (y_j - W_j pi)^2 for pi (p,): yy - 2 pi.h + pi^T H pi."""
        return np.maximum(self.yy - 2.0 * self.h @ pi + np.einsum("i,jik,k->j", pi, self.H, pi),
                          0.0)

    def rms(self, pi: np.ndarray) -> np.ndarray:
        """(n,) per-joint RMS of y - W pi."""
        return np.sqrt(self.squared_residuals(pi) / self.samples)


def normal_equations(model, motion) -> NormalEquations:
    """The NormalEquations of a motion with torques, the regressor built CHUNK samples at
    a time (a 60 s log at 1 kHz of a 6-joint arm would otherwise hold 225 MB of it)."""
    if motion.tau is None:
        raise IdentificationError(f"{_named(motion)} has no measured torques "
                                  "(tau1..taun): nothing to identify from")
    tau = np.asarray(motion.tau, dtype=float)
    S, n = tau.shape
    p = (LINK_PARAMETERS + JOINT_PARAMETERS) * n
    H, h = np.zeros((n, p, p)), np.zeros((n, p))
    for start in range(0, S, CHUNK):
        c = slice(start, start + CHUNK)
        Y = joint_torque_regressor(model, motion.q[c], motion.qd[c], motion.qdd[c])
        Yj = np.ascontiguousarray(Y.transpose(1, 0, 2))  # (n, s, p): joint j's rows
        H += np.matmul(Yj.transpose(0, 2, 1), Yj)
        h += np.einsum("jsp,sj->jp", Yj, tau[c])
    return NormalEquations(H, h, np.sum(tau**2, axis=0), S)


def is_consistent(pi: np.ndarray, n: int) -> bool:
    """Every link's pseudo-inertia of pi (p,) positive definite, every friction and rotor
    parameter >= 0."""
    links = LINK_PARAMETERS * n
    return (all(np.linalg.eigvalsh(pseudo_inertia_of(pi[LINK_PARAMETERS * k:][:10]))[0] > 0
                for k in range(n)) and bool(np.all(pi[links:] >= 0)))


def _consistent_fit(n: int, K: np.ndarray, estimate: np.ndarray,
                    covariance_inverse: np.ndarray, nominal: np.ndarray,
                    s: np.ndarray) -> np.ndarray:
    """Step 4: the consistent pi (p,) nearest `nominal` that reproduces `estimate` (r,) in
    the metric `covariance_inverse` (r, r); s (p,) the parameters' torque scales.

    First the nearest pi that reproduces the estimate exactly (linear: the minimum of
    |(pi - nominal) / s| subject to K pi = estimate); if it is consistent it is the
    answer. Else Gauss-Newton on the module docstring's problem from the nominal model
    (at most MAX_EVALUATIONS residuals; starting from that point's pseudo-inertias with
    their negative eigenvalues raised to a small positive one, tried first, did not
    converge: the clipping moves identified directions by 1e7 standard deviations)."""
    links = LINK_PARAMETERS * n
    Ks = K * s
    pi = nominal + s * np.linalg.lstsq(Ks, estimate - K @ nominal, rcond=None)[0]
    if is_consistent(pi, n):
        return pi
    start = [np.linalg.cholesky(pseudo_inertia_of(nominal[LINK_PARAMETERS * k:][:10]))[_TRIL]
             for k in range(n)]
    lower = np.concatenate([np.full(links, -np.inf), np.zeros(JOINT_PARAMETERS * n)])
    x0 = np.concatenate(start + [np.maximum(nominal[links:], 0.0)])
    L_Sigma = np.linalg.cholesky(covariance_inverse)
    A, b = L_Sigma.T @ K, L_Sigma.T @ estimate  # data rows A pi - b
    weight = PRIOR / s

    def parameters(x):
        pi, D = np.empty(x.size), np.zeros((x.size, x.size))
        for k in range(n):
            block = slice(LINK_PARAMETERS * k, LINK_PARAMETERS * (k + 1))
            pi[block], D[block, block] = _link_parameters(x[block])
        pi[links:] = x[links:]
        D[np.arange(links, x.size), np.arange(links, x.size)] = 1.0
        return pi, D

    def rows(x):
        pi, _ = parameters(x)
        return np.concatenate([A @ pi - b, weight * (pi - nominal)])

    def jacobian(x):
        _, D = parameters(x)
        return np.vstack([A @ D, weight[:, None] * D])

    fit = least_squares(rows, x0, jac=jacobian, bounds=(lower, np.inf), method="trf",
                        ftol=1e-10, xtol=1e-10, gtol=1e-10, max_nfev=MAX_EVALUATIONS)
    return parameters(fit.x)[0]


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within it, BLAS and LAPACK (numpy's, SciPy's) run on one thread. Identification's
    matrices are small (78 columns for a 6-joint arm): OpenBLAS's threads gain nothing on
    them, and on a machine whose cores are busy they wait for each other: the PUMA's
    identification from a 60 s log took 20 s with OpenBLAS's default threads on the
    project's loaded 2-core machine, 1.0 s on one thread (docs/identification.md)."""
    from threadpoolctl import threadpool_limits  # here: `import armdyn.core` stays lean

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def identify(model, motion, validate=None, progress: Progress | None = None,
             cancel: Cancel | None = None) -> Identification:
    """Identify `model`'s parameters from `motion` (a Motion with torques, e.g.
    `load_motion`); `validate`, a second one, for `validation_rms`. Module docstring for
    the algorithm; the least squares run on the per-joint normal equations
    (`normal_equations`), on one BLAS thread (`one_blas_thread`). Raises
    IdentificationError (an ArgumentError) for a motion without torques, too few
    samples, a motion that does not excite every base parameter (named), or a fit worse
    than zero torque.

    Between its stages (base parameters, the motion's regressor, the least squares, the
    consistent fit, the validation) it calls `progress(fraction)` and asks `cancel()`:
    True raises Cancelled (`core.sim.checkpoints`), nothing returned."""
    with one_blas_thread():
        return _identify(model, motion, validate, progress, cancel)


def _identify(model, motion, validate, progress, cancel) -> Identification:
    def stage(fraction, after):
        checkpoint(progress, cancel, fraction, "identification", f"after {after}")

    m = model_of(model)
    n = m.n
    stage(0.0, "nothing")
    base = base_parameters(m)
    stage(0.1, "the base parameters")
    r = base.K.shape[0]
    S = motion.q.shape[0]
    if S < 2 * r // n + 2:
        raise IdentificationError(f"{S} samples of {n} joints give {S * n} equations for "
                                  f"{r} base parameters: log at least {2 * r // n + 2} samples")
    data = normal_equations(m, motion)
    stage(0.6, "the motion's regressor")
    ind = base.independent
    G = data.H[:, ind][:, :, ind]  # (n, r, r): W_b's normal matrices per joint
    g = data.h[:, ind]  # (n, r)
    # 2. the motion must excite every base parameter: W_b's singular values (columns
    # scaled to unit norm) from its normal matrix's eigenvalues
    G_all = G.sum(axis=0)
    d = np.sqrt(np.diag(G_all))
    d = np.where(d > 0, d, 1.0)
    lam, V = np.linalg.eigh(G_all / np.outer(d, d))
    sv = np.sqrt(np.maximum(lam, 0.0))[::-1]
    V = V[:, ::-1]
    null = V[:, sv <= EXCITATION_TOLERANCE * sv[0]].T if sv[0] > 0 else V.T
    if len(null):
        share = np.max(np.abs(null), axis=0)
        missed = tuple(base.combinations[i] for i in np.flatnonzero(share >= NULL_SHARE))
        raise IdentificationError(
            f"{_named(motion)} does not excite {len(null)} of the {r} base parameters (its "
            f"regressor has rank {r - len(null)}): " + "; ".join(missed)
            + ": move those joints more, or faster", unexcited=missed)
    condition = float(sv[0] / sv[-1])
    # the wrong sign convention: the nominal model fits worse than zero torque
    nominal = parameter_vector(m)
    zero = float(np.sqrt(data.yy.sum() / (S * n)))
    off = float(np.sqrt(data.squared_residuals(nominal).sum() / (S * n)))
    if off > zero:
        raise IdentificationError(
            f"the nominal model fits the measured torques of {_named(motion)} worse than "
            f"zero torque (RMS {off:.4g} against {zero:.4g}): are they of the opposite sign, "
            "or in another joint order?")

    def solve(weights):  # the (weighted) least-squares estimate of the base parameters
        A = np.tensordot(weights, G, axes=1) / np.outer(d, d)
        return np.linalg.solve(A, (weights @ g) / d) / d

    def squared_residuals(b):  # (n,) per joint, of y - W_b b
        return np.maximum(data.yy - 2.0 * g @ b + np.einsum("i,jik,k->j", b, G, b), 0.0)

    # 3. weighted least squares on the base regressor
    estimate = solve(np.ones(n))
    ss = squared_residuals(estimate)
    base_rms = np.sqrt(ss / S)
    sigma2 = ss / max(1, S - r // n - 1)
    sigma2 = np.where(sigma2 > 0, sigma2, max(float(sigma2.max()), 1e-24))
    estimate = solve(1.0 / sigma2)
    chi2 = float(np.sum(squared_residuals(estimate) / sigma2)) / max(1, S * n - r)
    information = np.tensordot(1.0 / sigma2, G, axes=1) / max(chi2, 1e-300)  # Sigma^-1
    std = np.sqrt(np.diag(np.linalg.inv(information)))
    stage(0.65, "the least squares")
    # 4. the consistent model nearest the nominal one
    column_rms = np.sqrt(np.diag(data.H.sum(axis=0)) / (S * n))
    seen = column_rms > ZERO_COLUMN * column_rms.max()
    s = np.where(seen, zero / np.where(seen, column_rms, 1.0), np.maximum(np.abs(nominal), 1.0))
    pi = _consistent_fit(n, base.K, estimate, information, nominal, s)
    stage(0.9, "the consistent fit")
    shift = (base.K @ pi - estimate) / std
    rms = data.rms(pi)
    fit = float(np.sqrt(np.sum(rms**2) / n))
    if fit > zero:
        raise IdentificationError(
            f"the identified model fits the torques of {_named(motion)} worse than zero "
            f"torque (RMS {fit:.4g} against {zero:.4g}): are the measured torques of the "
            "opposite sign, or in another joint order?")
    validation = None if validate is None else normal_equations(m, validate).rms(pi)
    identified = model_with_parameters(model, pi)
    stage(1.0, "the validation")
    return Identification(identified, rms, validation, estimate, std, base.combinations,
                          base.unidentifiable, condition, base.K, shift, base_rms)
