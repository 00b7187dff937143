"""Recursion walkthrough: RIDIM and the UDU^T forward dynamics, link by link.

For teaching and debugging (issue #10): the per-link intermediates of the two
recursive algorithms of seed 001 Sec 2.4, as an ordered list of `Step`s, each
with the paper's symbols and equation numbers and the vectors to draw at O_i.

The numbers are the core's own: the compiled kernels of `core.kernels.denoc`
(`link_quantities`, `inverse_dynamics_kernel`, `forward_dynamics_tree`, the very
kernels `inverse_dynamics` and `forward_dynamics` run) fill the fields of a fresh
workspace (`core.kernels.data.new_workspace`, read with `data_of`), and the steps are
cut from those fields. Only two quantities the kernels accumulate in place are
taken apart again here (marked "from the kernel's sums" below): the link's own
inertia wrench inside w*_i, and the eta_{i,i+1} inside eta_i.

RIDIM (seed 001 Sec 2.4.1), three phases:

    forward   t_i  = A_{i,λ} t_λ + p_i θ'_i                               (eq. 11c)
              ṫ_i  = A_{i,λ} ṫ_λ + Ȧ_{i,λ} t_λ + p_i θ''_i + W_λ p_i θ'_i  (Sec 2.4.1; ṫ_0 = ρ, eq. 17)
    backward  w*_i = M_i ṫ_i + W_i M_i E_i t_i + Σ_c A_{c,i}^T w*_c      (eq. 5, Sec 2.4.1)
    project   τ_i  = p_i^T w*_i                                            (Sec 2.4.1, eq. 16a)

UDU^T forward dynamics (RFDSIM, seed 001 Sec 2.4.2), with φ = τ - C θ' (eq. 18):

    inward    M̂_i = M_i + Σ_c A_{c,i}^T M̄_c A_{c,i};  M̄_i = M̂_i - ψ̂_i ψ̂_i^T / m̂_i     (eq. 19d)
              ψ̂_i = M̂_i p_i;  m̂_i = p_i^T ψ̂_i                                        (eq. 19c)
              φ̂_i = φ_i - p_i^T η_{i,i+1};  η_{λ,i} = A_{i,λ}^T (η_{i,i+1} + ψ̂_i φ̂_i / m̂_i)  (eqs. 19a-b)
              φ̃_i = φ̂_i / m̂_i                                                         (eq. 20)
    outward   μ̃_{i,λ} = A_{i,λ} μ̃_λ;  θ''_i = φ̃_i - ψ̂_i^T μ̃_{i,λ} / m̂_i;  μ̃_i = p_i θ''_i + μ̃_{i,λ}  (eqs. 21a-b)

Symbols: θ' and θ'' are the paper's θ-dot and θ-double-dot (joint rates and
accelerations; ḃ for a prismatic joint's rate), written with primes because common
fonts drop a combining dot over a Greek letter. Link numbers in symbols are 1-based
(Saha's); `Step.link` is the 0-based joint index.
On a tree λ = parent(i) and the sums run over the children c; a mechanism with loops
is walked through on its spanning tree (`Walkthrough.tree_only`): the loops' cut-joint
forces are not part of these recursions.

A joint of k > 1 degrees of freedom (spherical k = 3, universal k = 2, free k = 6) is
one step like any other: its p_i is the 6 x k motion subspace P_i (`core.kernels.joints`),
its rates, accelerations and forces are k-vectors, and the UDU^T pivot m̂_i becomes the
k x k block D_i = P_i^T M̂_i P_i (the kernel's L_i diag(d_i) L_i^T), so that
ψ̂_i = M̂_i P_i is 6 x k, φ̃_i = D_i^-1 φ̂_i and θ''_i = D_i^-1 (φ̂_i − ψ̂_i^T μ̃_{i,λ}).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from ..algorithms.tree_dynamics import twist_propagation_matrix
from ..errors import SingularMassMatrixError
from ..kernels import denoc
from ..kernels.data import Data, data_of, new_workspace
from ..kernels.joints import JOINT_NV, JOINT_PRISMATIC, JOINT_REVOLUTE
from ..kernels.layout import ModelViews
from ..model.arguments import joint_vector, kernel_of

__all__ = ["ArrowKind", "Arrow", "Quantity", "Step", "Walkthrough", "walkthrough",
           "RIDIM", "UDU"]

RIDIM = "RIDIM"
UDU = "UDU^T"


class ArrowKind(str, Enum):
    """What an arrow at O_i shows; the value is its unit."""

    ANGULAR_VELOCITY = "rad/s"
    LINEAR_VELOCITY = "m/s"
    ANGULAR_ACCELERATION = "rad/s\u00b2"
    LINEAR_ACCELERATION = "m/s\u00b2"
    MOMENT = "N m"
    FORCE = "N"

    @property
    def unit(self) -> str:
        return self.value

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", " ")


@dataclass(frozen=True)
class Arrow:
    """A vector to draw at a point.

    kind   : what it is (and its unit, `kind.unit`)
    symbol : the paper's symbol, e.g. "ω_3"
    origin : (3,) the point O_i on joint axis i, base frame, m
    vector : (3,) base frame, in `kind.unit`
    """

    kind: ArrowKind
    symbol: str
    origin: np.ndarray
    vector: np.ndarray


@dataclass(frozen=True)
class Quantity:
    """One number, vector or matrix of a step.

    symbol   : the paper's symbol with the 1-based link number ("t_3", "M̂_2", "τ")
    equation : where the paper defines it ("eq. 11c", "Sec 2.4.1")
    value    : () a scalar; (6,) a twist [ω; v] or wrench [n; f] at O_i; (6, 6) an
               extended mass matrix about O_i; (nv,) a joint vector; for a joint of k
               degrees of freedom (k,) its rates or forces, (6, k) its motion subspace
               or ψ̂, (k, k) its block pivot. Base frame, SI.
    unit     : unit text (a 6-vector: "angular part; linear part")
    meaning  : a few words
    """

    symbol: str
    equation: str
    value: np.ndarray
    unit: str
    meaning: str


@dataclass(frozen=True)
class Step:
    """One step of a walkthrough.

    algorithm : `RIDIM` or `UDU`
    phase     : "forward recursion", "backward recursion", "projection",
                "articulated inertias (inward)", "accelerations (outward)"
    link      : 0-based joint index the step works on
    formula   : the step's equation in the paper's symbols
    equation  : its equation number
    quantities: what the step computes (and what it reads), in order
    arrows    : vectors to draw at O_i (one per `ArrowKind` at most)
    """

    algorithm: str
    phase: str
    link: int
    formula: str
    equation: str
    quantities: tuple[Quantity, ...]
    arrows: tuple[Arrow, ...]

    def quantity(self, symbol: str) -> Quantity:
        """The quantity with this symbol; KeyError if the step has none."""
        for item in self.quantities:
            if item.symbol == symbol:
                return item
        raise KeyError(symbol)


@dataclass(frozen=True)
class Walkthrough:
    """Both algorithms at one state (q, θ', θ''), the forward dynamics driven by τ_fd.

    steps     : RIDIM's steps, then the UDU^T steps
    tau       : (nv,) RIDIM's result, N m / N (one entry per rate)
    qdd       : (nv,) the UDU^T result for the driving forces tau_fd, rad/s^2 / m/s^2
    tau_fd    : (nv,) the forces the forward dynamics was given
    ridim     : the workspace fields the RIDIM kernels filled (`core.kernels.data.Data`)
    udu       : the workspace fields the forward-dynamics kernel filled
    tree_only : True for a mechanism with loops: the recursions ran on its spanning
                tree (compare with `tree_inverse_dynamics`)
    """

    steps: tuple[Step, ...]
    tau: np.ndarray
    qdd: np.ndarray
    tau_fd: np.ndarray
    ridim: Data
    udu: Data
    tree_only: bool

    def of(self, algorithm: str) -> tuple[Step, ...]:
        """The steps of one algorithm (`RIDIM` or `UDU`), in order."""
        return tuple(s for s in self.steps if s.algorithm == algorithm)


# ----------------------------------------------------------------------------------
# Running the core's kernels on a fresh workspace
# ----------------------------------------------------------------------------------

def _model_views(model) -> ModelViews:
    """The model's named fields as writable arrays: the array types the compiled entry
    points pass the kernels, so numba reuses their compiled code (no new compile)."""
    return ModelViews(*(np.array(x) if isinstance(x, np.ndarray) else x
                        for x in kernel_of(model).views))


def _fresh(k) -> Data:
    """The fields of a new workspace of the kernel model k as writable arrays for the
    kernels to fill."""
    return data_of(k, new_workspace(k))


def run_ridim(model, q, qd, qdd) -> tuple[np.ndarray, Data]:
    """tau (nv,) and the fields RIDIM filled (link quantities, t, tdot, w), from
    `core.kernels.denoc.link_quantities` and `inverse_dynamics_kernel` on a fresh workspace."""
    k = kernel_of(model)
    mv = _model_views(model)
    D = _fresh(k)
    tau = np.zeros(k.nv)
    denoc.link_quantities(mv, D, q)
    denoc.inverse_dynamics_kernel(mv, D, qd, qdd, mv.gravity, np.zeros((k.n, 6)), tau)
    return tau, D


def run_udu(model, q, qd, tau) -> tuple[np.ndarray, Data]:
    """qdd (nv,) and the fields `core.kernels.denoc.forward_dynamics_tree` filled (phi, M_hat,
    psi_hat, m_hat, eta, phi_hat, mu, ...) on a fresh workspace."""
    k = kernel_of(model)
    mv = _model_views(model)
    ws = new_workspace(k)
    qdd = np.zeros(k.nv)
    bad = denoc.forward_dynamics_tree(mv, ws, q, qd, tau, np.zeros((k.n, 6)), mv.gravity, qdd)
    D = data_of(k, ws)
    if bad >= 0:
        raise SingularMassMatrixError(int(bad) + 1, float(D.m_hat[bad]))
    return qdd, D


# ----------------------------------------------------------------------------------
# The steps
# ----------------------------------------------------------------------------------

_TWIST = "rad/s; m/s"
_RATE = "rad/s\u00b2; m/s\u00b2"
_WRENCH = "N m; N"


def _children(parent: np.ndarray) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in parent]
    for k, p in enumerate(parent):
        if p >= 0:
            kids[int(p)].append(k)
    return kids


def _p(revolute: bool, e: np.ndarray) -> np.ndarray:
    """p_i = [e_i; 0] (revolute) or [0; e_i] (prismatic), eqs. 11d, 12b."""
    p = np.zeros(6)
    p[(0 if revolute else 3):(3 if revolute else 6)] = e
    return p


def _pair(kinds: tuple[ArrowKind, ArrowKind], symbols: tuple[str, str], origin: np.ndarray,
          six: np.ndarray) -> tuple[Arrow, Arrow]:
    return (Arrow(kinds[0], symbols[0], origin.copy(), six[:3].copy()),
            Arrow(kinds[1], symbols[1], origin.copy(), six[3:].copy()))


def walkthrough(model, q, qd, qdd, tau_fd=None) -> Walkthrough:
    """RIDIM at (q, θ', θ'') and the UDU^T forward dynamics at (q, θ') driven by tau_fd
    (default: RIDIM's τ, so that the forward dynamics gives θ'' back), link by link.

    model : a Robot or Mechanism (a mechanism with loops runs on its spanning tree)
    q : (nq,) joint values (rad, m; a quaternion [qx, qy, qz, qw] per spherical or free
        joint)
    qd, qdd, tau_fd : (nv,) rad/s, rad/s^2, N m (m/s, m/s^2, N for linear rates)
    Raises SingularMassMatrixError if an articulated-inertia pivot m̂_i vanishes.
    """
    k = kernel_of(model)
    q = joint_vector(q, k.nq, "q")
    qd = joint_vector(qd, k.nv, "qd")
    qdd = joint_vector(qdd, k.nv, "qdd")
    tau, R = run_ridim(model, q, qd, qdd)
    tau_fd = tau.copy() if tau_fd is None else joint_vector(tau_fd, k.nv, "tau_fd")
    qdd_fd, F = run_udu(model, q, qd, tau_fd)
    mv = kernel_of(model).views
    steps = _ridim_steps(mv, qd, qdd, tau, R) + _udu_steps(mv, tau_fd, qdd_fd, F)
    return Walkthrough(steps=tuple(steps), tau=tau, qdd=qdd_fd, tau_fd=tau_fd, ridim=R,
                       udu=F, tree_only=k.nl > 0)


def _names(mv, k: int) -> tuple[str, str, bool, str]:
    """(i, λ or "", angular, joint-force unit) of 0-based joint k, 1-based names (a free
    joint's force unit is "N m; N": its rates are [ω; v])."""
    p = int(mv.parent[k])
    kind = int(mv.kind[k])
    rev = kind != JOINT_PRISMATIC
    return (str(k + 1), (str(p + 1) if p >= 0 else ""), rev,
            _UNITS[kind][2])


#: Per joint kind: the units of its rates, accelerations, forces, pivot and ψ̂.
_UNITS = {
    JOINT_REVOLUTE: ("rad/s", "rad/s\u00b2", "N m", "kg m\u00b2", "kg m\u00b2; kg m"),
    JOINT_PRISMATIC: ("m/s", "m/s\u00b2", "N", "kg", "kg m; kg"),
}
for _kind, _nv in enumerate(JOINT_NV):
    if _kind > JOINT_PRISMATIC:
        _UNITS[_kind] = (("rad/s; m/s", "rad/s\u00b2; m/s\u00b2", "N m; N",
                          "kg m\u00b2, kg m, kg", "kg m\u00b2, kg m; kg m, kg")
                         if _nv == 6 else _UNITS[JOINT_REVOLUTE])


def _rates(mv, k: int) -> slice:
    """The entries of joint k in the rate vector (one, or k of a joint of several)."""
    b = int(mv.iv[k])
    return slice(b, b + JOINT_NV[int(mv.kind[k])])


def _several(mv, k: int) -> bool:
    return int(mv.kind[k]) > JOINT_PRISMATIC


def _of_joint(mv, k: int, x: np.ndarray) -> np.ndarray:
    """Joint k's entries of a rate vector: a scalar (one degree of freedom) or (k,)."""
    s = _rates(mv, k)
    return np.array(x[s.start]) if not _several(mv, k) else np.array(x[s])


def _P(mv, D: Data, k: int) -> np.ndarray:
    """p_i (6,) of a revolute or prismatic joint; P_i (6, k), the motion subspace of a
    joint of k degrees of freedom (its columns are the kernel's rows of S)."""
    kind = int(mv.kind[k])
    if kind <= JOINT_PRISMATIC:
        return _p(kind == JOINT_REVOLUTE, D.e[k])
    return D.S[_rates(mv, k)].T.copy()


def _p_meaning(mv, k: int) -> tuple[str, str]:
    """(equation, meaning) of p_i."""
    kind = int(mv.kind[k])
    if kind == JOINT_REVOLUTE:
        return "eq. 11d", "joint-rate propagation: [e; 0] revolute, [0; e] prismatic"
    if kind == JOINT_PRISMATIC:
        return "eq. 12b", "joint-rate propagation: [e; 0] revolute, [0; e] prismatic"
    nv = JOINT_NV[kind]
    what = {3: "[R_i; 0]: the child's axes (spherical)",
            2: "[[z, x']; [0, 0]]: the two axes (universal)",
            6: "[[R_i, 0]; [0, R_i]]: the body's axes (free)"}[nv]
    return "eq. 11d", f"motion subspace P_i, 6 x {nv}: {what}"


def _block_pivot(mv, D: Data, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(D_i, d_i) of a joint of several degrees of freedom: the k x k block pivot
    D_i = L_i diag(d_i) L_i^T the kernel factored (L_hat, m_hat), and its d_i."""
    s = _rates(mv, k)
    nk = s.stop - s.start
    L = np.tril(D.L_hat[k, :nk, :nk])
    d = D.m_hat[s].copy()
    return L @ np.diag(d) @ L.T, d


def _ridim_steps(mv, qd, qdd, tau, D: Data) -> list[Step]:
    order = [int(k) for k in mv.order]
    kids = _children(mv.parent)
    steps: list[Step] = []
    # ---- forward recursion: twists and twist rates (eqs. 11c, 17) ----
    for k in order:
        i, lam, rev, _ = _names(mv, k)
        p = _P(mv, D, k)
        rate_unit, acc_unit = _UNITS[int(mv.kind[k])][:2]
        p_equation, p_meaning = _p_meaning(mv, k)
        rate = "\u03b8'" if rev else "\u1e03"
        if lam:
            formula = (f"t_{i} = A_{i},{lam} t_{lam} + p_{i} {rate}_{i};   "
                       f"\u1e6b_{i} = A_{i},{lam} \u1e6b_{lam} + \u0226_{i},{lam} t_{lam} "
                       f"+ p_{i} \u03b8''_{i} + W_{lam} p_{i} {rate}_{i}")
        else:
            formula = (f"t_{i} = p_{i} {rate}_{i};   \u1e6b_{i} = p_{i} \u03b8''_{i} + \u03c1,"
                       "  \u03c1 = [0; \u2212g]")
        quantities = [
            Quantity(f"p_{i}", p_equation, p, "1", p_meaning),
            Quantity(f"{rate}_{i}", "input", _of_joint(mv, k, qd), rate_unit, "joint rate"),
            Quantity(f"\u03b8''_{i}", "input", _of_joint(mv, k, qdd), acc_unit,
                     "joint acceleration"),
        ]
        if lam:
            quantities.append(Quantity(f"a_{i},{lam}", "eq. 11d", D.A[k].copy(), "m",
                                       f"O_{lam} \u2212 O_{i}, the vector of A_{i},{lam}"))
        quantities += [
            Quantity(f"t_{i}", "eq. 11c", D.t[k].copy(), _TWIST,
                     f"twist [\u03c9_{i}; v_{i}] of link {i} at O_{i}"),
            Quantity(f"\u1e6b_{i}", "Sec 2.4.1, eq. 17", D.tdot[k].copy(), _RATE,
                     f"twist rate at O_{i} (gravity in as \u03c1 = [0; \u2212g])"),
        ]
        arrows = (_pair((ArrowKind.ANGULAR_VELOCITY, ArrowKind.LINEAR_VELOCITY),
                        (f"\u03c9_{i}", f"v_{i}"), D.oj[k], D.t[k])
                  + _pair((ArrowKind.ANGULAR_ACCELERATION, ArrowKind.LINEAR_ACCELERATION),
                          (f"\u03c9'_{i}", f"v'_{i}"), D.oj[k], D.tdot[k]))
        steps.append(Step(RIDIM, "forward recursion", k, formula, "eq. 11c", tuple(quantities),
                          arrows))
    # ---- backward recursion: wrenches (eq. 5 and Sec 2.4.1) ----
    for k in reversed(order):
        i, lam, rev, _ = _names(mv, k)
        child_sum = np.zeros(6)
        for c in kids[k]:
            child_sum += twist_propagation_matrix(D.A[c]).T @ D.w[c]
        own = D.w[k] - child_sum  # from the kernel's sums: w*_i minus what the children add
        names = ", ".join(str(c + 1) for c in kids[k])
        formula = f"w*_{i} = M_{i} \u1e6b_{i} + W_{i} M_{i} E_{i} t_{i}" + (
            " + \u03a3_c A_c," + i + "^T w*_c  (c = " + names + ")" if kids[k] else "")
        quantities = [
            Quantity(f"M_{i}", "eq. 6", D.M[k].copy(), "kg, kg m, kg m\u00b2",
                     f"extended mass matrix of link {i} about O_{i}"),
            Quantity(f"w*_{i},own", "eq. 5", own, _WRENCH,
                     f"M_{i} \u1e6b_{i} + W_{i} M_{i} E_{i} t_{i}: the inertia wrench of link "
                     f"{i} alone (w*_{i} minus the children's part)"),
        ]
        if kids[k]:
            quantities.append(Quantity("\u03a3 A^T w*_c", "Sec 2.4.1", child_sum, _WRENCH,
                                       f"the outboard links' wrenches moved to O_{i}"))
        quantities.append(Quantity(f"w*_{i}", "Sec 2.4.1", D.w[k].copy(), _WRENCH,
                                   f"wrench [n_{i}; f_{i}] at O_{i} (links {i} and outboard)"))
        arrows = _pair((ArrowKind.MOMENT, ArrowKind.FORCE), (f"n_{i}", f"f_{i}"), D.oj[k],
                       D.w[k])
        steps.append(Step(RIDIM, "backward recursion", k, formula, "eq. 5",
                          tuple(quantities), arrows))
    # ---- projection onto the joint axes: tau_i = p_i^T w*_i ----
    done = np.full(len(tau), np.nan)
    for k in reversed(order):
        i, lam, rev, unit = _names(mv, k)
        done[_rates(mv, k)] = tau[_rates(mv, k)]
        quantities = [
            Quantity(f"p_{i}", _p_meaning(mv, k)[0], _P(mv, D, k), "1",
                     "joint-rate propagation" + (" (motion subspace)" if _several(mv, k)
                                                 else " vector")),
            Quantity(f"w*_{i}", "Sec 2.4.1", D.w[k].copy(), _WRENCH, f"wrench at O_{i}"),
            Quantity(f"\u03c4_{i}", "Sec 2.4.1", _of_joint(mv, k, tau), unit,
                     "joint forces (one per rate)" if _several(mv, k)
                     else "joint torque" if rev else "joint force"),
            Quantity("\u03c4", "eq. 16a", done.copy(), "N m / N",
                     "joint forces so far (\u03c4 = N^T w)"),
        ]
        arrows = _pair((ArrowKind.MOMENT, ArrowKind.FORCE), (f"n_{i}", f"f_{i}"), D.oj[k],
                       D.w[k])
        steps.append(Step(RIDIM, "projection", k, f"\u03c4_{i} = p_{i}^T w*_{i}", "Sec 2.4.1",
                          tuple(quantities), arrows))
    return steps


def _udu_steps(mv, tau_fd, qdd, D: Data) -> list[Step]:
    order = [int(k) for k in mv.order]
    kids = _children(mv.parent)
    steps: list[Step] = []
    # ---- inward: articulated-body inertias and U^-1 phi (eqs. 19a-d, 20) ----
    for k in reversed(order):
        i, lam, rev, unit = _names(mv, k)
        s = _rates(mv, k)
        several = _several(mv, k)
        _, acc_unit, _, mass_unit, psi_unit = _UNITS[int(mv.kind[k])]
        if several:  # a block pivot: Psi^_i (6 x k), D_i (k x k), phi~_i = D_i^-1 phi^_i
            psi = D.psi_hat[s].T.copy()
            pivot, d = _block_pivot(mv, D, k)
            phi_hat = D.phi_hat[s].copy()
            scale = np.linalg.solve(pivot, phi_hat)
            passed = psi @ scale
        else:
            psi = D.psi_hat[s.start].copy()
            pivot = np.array(D.m_hat[s.start])
            phi_hat = np.array(D.phi_hat[s.start])
            scale = np.array(phi_hat / pivot)
            passed = psi * scale
        # from the kernel's sums: eta_k holds eta_{i,i+1} + psi^_i phi^_i / m^_i once it
        # is passed to a parent; a root's eta_k is eta_{i,i+1} alone
        eta_in = D.eta[k] - (passed if mv.parent[k] >= 0 else 0.0)
        if several:
            formula = (f"M\u0302_{i} = M_{i} + \u03a3 A^T M\u0304_c A;  \u03c8\u0302_{i} = "
                       f"M\u0302_{i} P_{i};  D_{i} = P_{i}^T \u03c8\u0302_{i} = L D L^T;  "
                       f"\u03c6\u0302_{i} = \u03c6_{i} \u2212 P_{i}^T \u03b7_{i},{int(i) + 1};  "
                       f"\u03c6\u0303_{i} = D_{i}^\u22121 \u03c6\u0302_{i}")
        else:
            formula = (f"M\u0302_{i} = M_{i} + \u03a3 A^T M\u0304_c A;  \u03c8\u0302_{i} = "
                       f"M\u0302_{i} p_{i};  m\u0302_{i} = p_{i}^T \u03c8\u0302_{i};  "
                       f"\u03c6\u0302_{i} = \u03c6_{i} \u2212 p_{i}^T \u03b7_{i},{int(i) + 1};  "
                       f"\u03c6\u0303_{i} = \u03c6\u0302_{i} / m\u0302_{i}")
        nk = s.stop - s.start
        quantities = [
            Quantity(f"M\u0302_{i}", "eq. 19d", D.M_hat[k].copy(), "kg, kg m, kg m\u00b2",
                     f"articulated-body inertia of links {i}.. about O_{i}"),
        ]
        if several:
            quantities.append(Quantity(f"P_{i}", "eq. 11d", _P(mv, D, k), "1",
                                       f"motion subspace, 6 x {nk}"))
        quantities += [
            Quantity(f"\u03c8\u0302_{i}", "eq. 19c", psi, psi_unit,
                     f"M\u0302 P, 6 x {nk}: the wrench per unit joint acceleration" if several
                     else "M\u0302 p: the wrench per unit joint acceleration"),
        ]
        if several:
            quantities += [
                Quantity(f"D_{i}", "eq. 19c", pivot, mass_unit,
                         f"block pivot P^T M\u0302 P, {nk} x {nk}: the block D_{i} of "
                         "I = U D U^T (eq. 18)"),
                Quantity(f"d_{i}", "eq. 19c", d, mass_unit,
                         f"the pivots of D_{i} = L diag(d) L^T, as the kernel factors it"),
            ]
        else:
            quantities.append(Quantity(f"m\u0302_{i}", "eq. 19c", pivot, mass_unit,
                                       f"pivot: D_{i} of I = U D U^T (eq. 18)"))
        quantities += [
            Quantity(f"\u03c6_{i}", "eq. 18", _of_joint(mv, k, D.phi), unit,
                     "\u03c4 \u2212 C\u03b8' (bias and gravity removed)"),
            Quantity(f"\u03b7_{i},{int(i) + 1}", "eq. 19b", eta_in, _WRENCH,
                     "what the outboard links pass in" if kids[k] else "zero at a leaf"),
            Quantity(f"\u03c6\u0302_{i}", "eq. 19a", phi_hat, unit,
                     "\u03c6\u0302 = U^\u22121 \u03c6"),
            Quantity(f"\u03c6\u0303_{i}", "eq. 20", scale, acc_unit,
                     "\u03c6\u0303 = D^\u22121 \u03c6\u0302"),
        ]
        arrows = _pair((ArrowKind.MOMENT, ArrowKind.FORCE),
                       ((f"\u03c8\u0302_{i} \u03c6\u0303_{i} (n)", f"\u03c8\u0302_{i} "
                         f"\u03c6\u0303_{i} (f)") if several else
                        (f"\u03c8\u0302_{i} (n)", f"\u03c8\u0302_{i} (f)")), D.oj[k],
                       passed if several else psi)
        steps.append(Step(UDU, "articulated inertias (inward)", k, formula, "eqs. 19a-d, 20",
                          tuple(quantities), arrows))
    # ---- outward: accelerations (eqs. 21a-b) ----
    done = np.full(len(qdd), np.nan)
    for k in order:
        i, lam, rev, _ = _names(mv, k)
        p = _P(mv, D, k)
        acc_k = _of_joint(mv, k, qdd)
        mu_in = D.mu[k] - p @ acc_k if _several(mv, k) else D.mu[k] - p * acc_k
        # (from the kernel's sums: mu~_{i,λ} = mu~_i - p_i qdd_i)
        done[_rates(mv, k)] = qdd[_rates(mv, k)]
        acc = _UNITS[int(mv.kind[k])][1]
        formula = (f"\u03bc\u0303_{i},{lam} = A_{i},{lam} \u03bc\u0303_{lam};  " if lam else
                   f"\u03bc\u0303_{i},0 = 0;  ") + (
            (f"\u03b8''_{i} = D_{i}^\u22121 (\u03c6\u0302_{i} \u2212 \u03c8\u0302_{i}^T "
             f"\u03bc\u0303_{i},{lam or 0});  \u03bc\u0303_{i} = P_{i} "
             f"\u03b8''_{i} + \u03bc\u0303_{i},{lam or 0}") if _several(mv, k) else
            (f"\u03b8''_{i} = \u03c6\u0303_{i} \u2212 \u03c8\u0302_{i}^T "
             f"\u03bc\u0303_{i},{lam or 0} / m\u0302_{i};  \u03bc\u0303_{i} = p_{i} "
             f"\u03b8''_{i} + \u03bc\u0303_{i},{lam or 0}"))
        quantities = [
            Quantity(f"\u03bc\u0303_{i},{lam or 0}", "eq. 21b", mu_in, _RATE,
                     "the inboard links' acceleration (no bias) moved to O_" + i),
            Quantity(f"\u03b8''_{i}", "eq. 21a", acc_k, acc,
                     "joint acceleration"),
            Quantity(f"\u03bc\u0303_{i}", "eq. 21b", D.mu[k].copy(), _RATE,
                     f"acceleration of link {i} at O_{i} (no bias terms)"),
            Quantity("\u03b8''", "eq. 18", done.copy(), "rad/s\u00b2 / m/s\u00b2",
                     "joint accelerations so far (U D U^T \u03b8'' = \u03c6)"),
        ]
        arrows = _pair((ArrowKind.ANGULAR_ACCELERATION, ArrowKind.LINEAR_ACCELERATION),
                       (f"\u03bc\u0303_{i} (\u03c9')", f"\u03bc\u0303_{i} (v')"),
                       D.oj[k], D.mu[k])
        steps.append(Step(UDU, "accelerations (outward)", k, formula, "eqs. 21a-b",
                          tuple(quantities), arrows))
    return steps
