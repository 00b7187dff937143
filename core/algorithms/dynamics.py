"""Public dynamics API: inverse and forward dynamics, the GIM and what the papers interpret.

Every function takes a model (a serial `Robot` or a `Mechanism`: a tree of DH chains,
possibly with loops) and joint arrays in SI units (rad, m, rad/s, N m, N), in the
model's joint order. Each call uses its own workspace (one per thread and size), so
the model is never modified and calls may run in parallel threads.

The algorithms live in `core.kernels.denoc` (tree recursions) and `core.algorithms.closed_chains`
(loops), compiled with numba; this module checks shapes and packs arguments. The
first call compiles (or loads the on-disk cache); later calls are fast.

External wrenches (`f_ext`): a wrench [n_x, n_y, n_z, f_x, f_y, f_z] (N m, N) that the
environment applies to a link, moment about the origin of that link's own frame, in
the base frame. Shape (6,) puts it on the last link (the serial arm's tool); (n, 6)
gives one per link; batches add a leading T axis: (T, 6) or (T, n, 6).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..kernels import denoc
from ..kernels.buffers import closed_kernel, compile_and_call, compiled_kernel, inlined_kernel
from ..kernels.constrained import constrained_forward_dynamics_kernel, project_onto_loops
from ..errors import SingularMassMatrixError
from ..kernels.layout import KernelModel, model_views
from .loops import closure_residual
from ..sim.pull import LINK as PULL_ACTIVE
from ..sim.pull import pulled_wrenches, record_pull
from ..kernels.data import data_of, data_views, new_workspace, thread_workspace

#: What the single-state kernels return when an argument has the wrong length, or is
#: not finite.
WRONG_LENGTH, NOT_FINITE = -2, -3

# ----------------------------------------------------------------------------------
# Compiled entry points: one numba call per public call, everything else inside.
# F, I: the model buffers (core.kernels.layout); ws: a workspace buffer (core.kernels.data).
# ----------------------------------------------------------------------------------


@compiled_kernel
def _gravity(mv, with_gravity, out):
    """The model's gravity, or zeros, in out (3,)."""
    for r in range(3):
        out[r] = mv.gravity[r] if with_gravity else 0.0
    return out


@compiled_kernel
def _inverse_dynamics_batch(F, I, ws, q, qd, qdd, f_ext, with_gravity, tau):
    """tau[s] = ID(q[s], qd[s], qdd[s]) for every sample s; f_ext (1 or T, n, 6)."""
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    Rj, oj, Rl, ol, e, d, c, M, A = D.Rj, D.oj, D.Rl, D.ol, D.e, D.d, D.c, D.M, D.A
    t, tdot, w = D.t, D.tdot, D.w
    g = _gravity(mv, with_gravity, D.s3[7])
    for s in range(q.shape[0]):
        denoc.link_quantities_inline(mv, q[s], Rj, oj, Rl, ol, e, d, c, M, A)
        denoc.inverse_dynamics_inline(mv, qd[s], qdd[s], g, oj, ol, e, d, M, A,
                                      f_ext[s if f_ext.shape[0] > 1 else 0], t, tdot, w,
                                      tau[s])


@closed_kernel
def inverse_dynamics_state_kernel(F, I, ws, q, qd, qdd, tau):
    """RIDIM at one state (q, qd, qdd (n,) -> tau (n,)), no external wrench, gravity in:
    `inverse_dynamics`'s common call, and the kernel `core.lab.op_count` counts. Returns -1,
    or WRONG_LENGTH, or NOT_FINITE (the caller then takes the checked path)."""
    mv = model_views(F, I)
    n = mv.n
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n:
        return WRONG_LENGTH
    s = 0.0
    for k in range(n):
        s += q[k] + qd[k] + qdd[k]
    if not math.isfinite(s):
        return NOT_FINITE
    D = data_views(ws, n, mv.m)
    denoc.link_quantities_inline(mv, q, D.Rj, D.oj, D.Rl, D.ol, D.e, D.d, D.c, D.M, D.A)
    denoc.inverse_dynamics_inline(mv, qd, qdd, mv.gravity, D.oj, D.ol, D.e, D.d, D.M, D.A,
                                  D.no_wrench, D.t, D.tdot, D.w, tau)
    return -1


@closed_kernel
def forward_dynamics_state_kernel(F, I, ws, q, qd, tau, qdd):
    """The UDU^T forward dynamics at one state (q, qd, tau (n,) -> qdd (n,)), no external
    wrench: `forward_dynamics`'s common call, and the kernel `core.lab.op_count` counts and
    `core.lab.complexity` times. Returns -1, the singular joint, or WRONG_LENGTH."""
    mv = model_views(F, I)
    n = mv.n
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n:
        return WRONG_LENGTH
    return denoc.forward_dynamics_on(mv, ws, q, qd, tau, data_views(ws, n, mv.m).no_wrench,
                                     mv.gravity, qdd)


@closed_kernel
def _constrained_one(F, I, ws, q, qd, tau, qdd):
    """One state of a mechanism with loops, no external wrench (the common call)."""
    mv = model_views(F, I)
    n = mv.n
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n:
        return WRONG_LENGTH
    return constrained_forward_dynamics_kernel(mv, ws, q, qd, tau,
                                               data_views(ws, n, mv.m).no_wrench, qdd)


@compiled_kernel
def _forward_dynamics_batch(F, I, ws, q, qd, tau, f_ext, qdd):
    """Row-wise RFDSIM; returns -1 or (sample * n + joint) of the first vanished pivot."""
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    Rj, oj, Rl, ol, e, d, c, M, A = D.Rj, D.oj, D.Rl, D.ol, D.e, D.d, D.c, D.M, D.A
    t, tdot, w, tmp66, zero, phi = D.t, D.tdot, D.w, D.tmp66, D.zero, D.phi
    M_hat, psi_hat, m_hat, eta, phi_hat, mu = (D.M_hat, D.psi_hat, D.m_hat, D.eta, D.phi_hat,
                                               D.mu)
    n = mv.n
    for s in range(q.shape[0]):
        bad = denoc.forward_dynamics_tree(mv, q[s], qd[s], tau[s],
                                          f_ext[s if f_ext.shape[0] > 1 else 0], mv.gravity,
                                          Rj, oj, Rl, ol, e, d, c, M, A, t, tdot, w, tmp66,
                                          zero, phi, M_hat, psi_hat, m_hat, eta, phi_hat, mu,
                                          qdd[s])
        if bad >= 0:
            return s * n + bad
    return -1


@compiled_kernel
def _mass_matrix(F, I, ws, q, GIM):
    """GIM from composite bodies (seed 000 eqs. 23b-24); leaves M~ in D.M_tilde."""
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    e, M, A = D.e, D.M, D.A
    denoc.link_quantities(mv, q, D.Rj, D.oj, D.Rl, D.ol, e, D.d, D.c, M, A)
    denoc.composite_inertias(mv, M, A, D.M_tilde, D.tmp66)
    denoc.gim_from_composite(mv, e, A, D.M_tilde, D.s6, GIM)


@compiled_kernel
def cholesky_solve(A, b, x):
    """Solve A x = b by Cholesky A = L L^T, in place on A (O(n^3)). Returns -1 or the bad row."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if not s > 1e-13 * abs(A[j, j]) or not s > 0.0:
            return j
        A[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / A[j, j]
    for i in range(n):  # L y = b
        s = b[i]
        for k in range(i):
            s -= A[i, k] * x[k]
        x[i] = s / A[i, i]
    for i in range(n - 1, -1, -1):  # L^T x = y
        s = x[i]
        for k in range(i + 1, n):
            s -= A[k, i] * x[k]
        x[i] = s / A[i, i]
    return -1


@compiled_kernel
def forward_dynamics_composite_kernel(F, I, ws, q, qd, tau, f_ext, GIM, qdd):
    """Forward dynamics by the composite-body method (`forward_dynamics(...,
    method="composite")`, and what `core.lab.op_count` / `core.lab.complexity` compare with):
    GIM from composite bodies (eqs. 23b-24), phi = tau - ID(q, qd, 0), Cholesky solve."""
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    oj, e, d, M, A, phi = D.oj, D.e, D.d, D.M, D.A, D.phi
    denoc.link_quantities(mv, q, D.Rj, oj, D.Rl, D.ol, e, d, D.c, M, A)
    denoc.inverse_dynamics_kernel(mv, qd, D.zero, mv.gravity, oj, D.ol, e, d, M, A, f_ext[0],
                                  D.t, D.tdot, D.w, phi)
    for k in range(mv.n):
        phi[k] = tau[k] - phi[k]  # seed 001 Sec 2.4.2: phi = tau - ID(q, qd, 0)
    denoc.composite_inertias(mv, M, A, D.M_tilde, D.tmp66)
    denoc.gim_from_composite(mv, e, A, D.M_tilde, D.s6, GIM)
    return cholesky_solve(GIM, phi, qdd)


@compiled_kernel
def _energy_batch(F, I, ws, q, qd, out):
    """out[s] = (kinetic, potential) at sample s."""
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    Rj, oj, Rl, ol, e, d, c, M, A, t = D.Rj, D.oj, D.Rl, D.ol, D.e, D.d, D.c, D.M, D.A, D.t
    for s in range(q.shape[0]):
        denoc.link_quantities(mv, q[s], Rj, oj, Rl, ol, e, d, c, M, A)
        denoc.twists(mv, qd[s], e, A, t)
        T, U = denoc.energy_kernel(mv, mv.gravity, c, M, t)
        out[s, 0] = T
        out[s, 1] = U


@compiled_kernel
def _articulated(F, I, ws, q):
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    e, M, A = D.e, D.M, D.A
    denoc.link_quantities(mv, q, D.Rj, D.oj, D.Rl, D.ol, e, D.d, D.c, M, A)
    return denoc.articulated_inertias(mv, e, M, A, D.M_hat, D.psi_hat, D.m_hat, D.tmp66)


# ----------------------------------------------------------------------------------
# Argument checks
# ----------------------------------------------------------------------------------

def kernel_of(model) -> KernelModel:
    """The packed kernel model of a Robot or Mechanism."""
    try:
        return model.kernel
    except AttributeError:
        raise TypeError(f"expected a Robot or Mechanism, got {type(model).__name__}") from None


def has_loops(model) -> bool:
    return kernel_of(model).nl > 0


def is_state(x, n: int) -> bool:
    """x is already a float64 vector of n joint values (cheap test; numba takes any
    memory layout)."""
    return type(x) is np.ndarray and x.shape == (n,) and x.dtype == np.float64


def joint_vector(x, n: int, name: str) -> np.ndarray:
    """x as a finite float64 (n,) vector, or ValueError naming `name`."""
    if is_state(x, n) and x.flags.c_contiguous:
        a = x
    else:
        a = np.ascontiguousarray(x, dtype=float)
        if a.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite, got {a}")
    return a


def joint_rows(n: int, **arrays) -> tuple[list[np.ndarray], bool]:
    """The named joint arrays as finite (T, n) rows of one shape, and whether they were
    single states (n,)."""
    rows, singles, shapes = [], [], []
    for name, value in arrays.items():
        a = np.ascontiguousarray(value, dtype=float)
        if a.ndim == 1 and a.shape == (n,):
            a, single = a[None, :], True
        elif a.ndim == 2 and a.shape[1] == n:
            single = False
        else:
            raise ValueError(f"{name} must have shape ({n},) or (T, {n}), got {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"{name} must be finite")
        rows.append(a)
        singles.append(single)
        shapes.append(a.shape)
    if len(set(shapes)) != 1:
        raise ValueError(f"{', '.join(arrays)} must have the same shape, got "
                         f"{', '.join(map(str, shapes))}")
    return rows, singles[0]


_NO_WRENCH: dict[int, np.ndarray] = {}


def link_wrenches(f_ext, n: int, T: int) -> np.ndarray:
    """f_ext (see the module docstring) as a (1 or T, n, 6) array of per-link wrenches."""
    if f_ext is None:
        z = _NO_WRENCH.get(n)
        if z is None:  # never written; writable so that numba compiles one array type
            z = _NO_WRENCH[n] = np.zeros((1, n, 6))
        return z
    w = np.asarray(f_ext, dtype=float)
    if not np.isfinite(w).all():
        raise ValueError("f_ext must be finite")
    if w.shape == (6,) or (w.ndim == 2 and w.shape == (T, 6) and (T > 1 or T != n)):
        # on the last link: one wrench, or one per sample (a (T, 6) batch wins over
        # per-link (n, 6) when T == n; write (T, n, 6) to be explicit)
        rows = w.reshape(-1, 6)
        out = np.zeros((rows.shape[0], n, 6))
        out[:, n - 1, :] = rows
        return out
    if w.shape == (n, 6):
        return np.ascontiguousarray(w[None])
    if w.ndim == 3 and w.shape[1:] == (n, 6) and w.shape[0] in (1, T):
        return np.ascontiguousarray(w)
    raise ValueError(f"f_ext must have shape (6,), ({n}, 6), ({T}, 6) or ({T}, {n}, 6), "
                     f"got {w.shape}")


def singular_error(model, q, joint: int) -> SingularMassMatrixError:
    """The error for a vanished pivot at 0-based `joint`, with the pivot's value."""
    abi = articulated_body_inertias(model, q, check=False)
    names = getattr(model, "joint_names", None)
    name = names[joint] if names else ""
    return SingularMassMatrixError(joint + 1, float(abi.m_hat[joint]), name=name)


# ----------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------

def inverse_dynamics(model, q, qd, qdd, f_ext=None) -> np.ndarray:
    """Joint torques / forces by the DeNOC two-recursion algorithm (RIDIM).

    q, qd, qdd : shape (n,) for one state or (T, n) for a trajectory;
                 rad, rad/s, rad/s^2 (m, m/s, m/s^2 for prismatic joints).
    f_ext      : optional external wrenches (module docstring).
    Returns tau with the shape of q: N m for revolute, N for prismatic joints.
    Gravity enters as the base acceleration -g (seed 001 eq. 17).

    With loops (a closed-chain mechanism) the motion must keep the loops closed;
    the result is the force at each actuated joint, zero at passive joints (Saha's
    Sec 4 subsystem recursion, see `core.algorithms.closed_chains.closed_chain_inverse_dynamics`).
    """
    k = kernel_of(model)
    if f_ext is None and not k.nl:
        # the common call, one state: straight to the kernel (closed to argument types
        # other than float vectors; it checks lengths and finiteness), else checked below
        tau = np.empty(k.n)
        try:
            ws = k.per_thread.workspace
        except AttributeError:
            ws = k.per_thread.workspace = thread_workspace(k.n, k.m)
        try:
            if inverse_dynamics_state_kernel(k.F, k.I, ws, q, qd, qdd, tau) == -1:
                return tau
        except TypeError:
            if np.ndim(q) == 1:
                q, qd, qdd = (joint_vector(q, k.n, "q"), joint_vector(qd, k.n, "qd"),
                              joint_vector(qdd, k.n, "qdd"))
                if compile_and_call(inverse_dynamics_state_kernel, k.F, k.I, ws, q, qd, qdd,
                                    tau) == -1:
                    return tau
    if k.nl:
        from .closed_chains import closed_chain_inverse_dynamics
        (Q, Qd, Qdd), single = joint_rows(k.n, q=q, qd=qd, qdd=qdd)
        W = link_wrenches(f_ext, k.n, Q.shape[0])
        tau = np.array([closed_chain_inverse_dynamics(
            model, Q[s], Qd[s], Qdd[s], f_ext=W[s if W.shape[0] > 1 else 0]).tau
            for s in range(Q.shape[0])])
        return tau[0] if single else tau
    return tree_inverse_dynamics(model, q, qd, qdd, f_ext)


def tree_inverse_dynamics(model, q, qd, qdd, f_ext=None, gravity: bool = True) -> np.ndarray:
    """RIDIM on the model's spanning tree (loops ignored): the forces at every tree
    joint that give qdd. Shapes as `inverse_dynamics`."""
    k = kernel_of(model)
    (Q, Qd, Qdd), single = joint_rows(k.n, q=q, qd=qd, qdd=qdd)
    tau = np.empty_like(Q)
    _inverse_dynamics_batch(k.F, k.I, thread_workspace(k.n, k.m), Q, Qd, Qdd,
                            link_wrenches(f_ext, k.n, Q.shape[0]), gravity, tau)
    return tau[0] if single else tau


def forward_dynamics(model, q, qd, tau, method: str = "denoc", f_ext=None) -> np.ndarray:
    """Joint accelerations qdd from q, qd and joint forces tau.

    q, qd, tau : shape (n,) for one state, or (T, n) for T states (method "denoc");
                 rad, rad/s, N m (m, m/s, N for prismatic joints). tau is the force
                 applied at every tree joint (zero where nothing drives a joint).
    method="denoc"     : the O(n) recursive UDU^T algorithm (seed 001 eqs. 18-21,
                         seed 000 App. B); no n x n matrix is formed.
    method="composite" : GIM from composite-body inertias (seed 000 eqs. 23b-24)
                         and a Cholesky solve, O(n^3).
    f_ext              : optional external wrenches (module docstring).
    With loops, the accelerations keep them closed: "denoc" solves the constrained
    system with the UDU^T factors (Lagrange multipliers), "minimal" uses the minimal
    coordinates R^T M R (see `core.algorithms.closed_chains`).
    Returns qdd with the shape of q. Raises SingularMassMatrixError if the GIM is
    singular (naming the joint whose articulated-inertia pivot vanished).
    """
    k = kernel_of(model)
    n = k.n
    if f_ext is None and method == "denoc":
        # the common call, one state: straight to the kernel (closed to argument types
        # other than float vectors; it checks lengths), else checked first
        qdd = np.empty(n)
        one = _constrained_one if k.nl else forward_dynamics_state_kernel
        try:
            ws = k.per_thread.workspace
        except AttributeError:
            ws = k.per_thread.workspace = thread_workspace(n, k.m)
        try:
            bad = one(k.F, k.I, ws, q, qd, tau, qdd)
        except TypeError:
            bad = None
            if np.ndim(q) == 1:
                q, qd, tau = (joint_vector(q, n, "q"), joint_vector(qd, n, "qd"),
                              joint_vector(tau, n, "tau"))
                bad = compile_and_call(one, k.F, k.I, ws, q, qd, tau, qdd)
        if bad == -1:
            return qdd
        if bad is not None:
            if bad == WRONG_LENGTH or not (np.isfinite(q).all() and np.isfinite(qd).all()
                                           and np.isfinite(tau).all()):
                joint_vector(q, n, "q"), joint_vector(qd, n, "qd"), joint_vector(tau, n, "tau")
            if k.nl:
                from .closed_chains import constrained_failure
                raise constrained_failure(model, q, bad)
            raise singular_error(model, q, bad)
    if k.nl:
        from .closed_chains import constrained_forward_dynamics
        return constrained_forward_dynamics(model, q, qd, tau, method=method, f_ext=f_ext)
    if method not in ("denoc", "composite"):
        raise ValueError(f"method must be 'denoc' or 'composite', got {method!r}")
    if np.ndim(q) == 2:
        if method != "denoc":
            raise ValueError("batches (T, n) are computed with method='denoc'")
        (Q, Qd, Tau), _ = joint_rows(n, q=q, qd=qd, tau=tau)
        out = np.empty_like(Q)
        bad = _forward_dynamics_batch(k.F, k.I, thread_workspace(n, k.m), Q, Qd, Tau,
                                      link_wrenches(f_ext, n, Q.shape[0]), out)
        if bad >= 0:
            s, j = divmod(int(bad), n)
            raise singular_error(model, Q[s], j)
        return out
    q = joint_vector(q, n, "q")
    qd = joint_vector(qd, n, "qd")
    tau = joint_vector(tau, n, "tau")
    w = link_wrenches(f_ext, n, 1)
    qdd = np.empty(n)
    ws = thread_workspace(n, k.m)
    if method == "denoc":
        bad = _forward_dynamics_batch(k.F, k.I, ws, q[None], qd[None], tau[None], w, qdd[None])
    else:
        bad = forward_dynamics_composite_kernel(k.F, k.I, ws, q, qd, tau, w, np.empty((n, n)), qdd)
    if bad >= 0:
        raise singular_error(model, q, bad)
    return qdd


def mass_matrix(model, q) -> np.ndarray:
    """The generalized inertia matrix (GIM) I(q) of the model's tree, (n, n), SPD.

    Built from the composite-body mass matrices (seed 000 eqs. 23b-24). For a
    mechanism with loops this is the spanning tree's matrix; the mass matrix of the
    independent coordinates is `core.algorithms.closed_chains.reduced_mass_matrix`.
    Units: kg m^2 (revolute-revolute), kg m (mixed), kg (prismatic-prismatic).
    """
    k = kernel_of(model)
    GIM = np.empty((k.n, k.n))
    _mass_matrix(k.F, k.I, thread_workspace(k.n, k.m), joint_vector(q, k.n, "q"), GIM)
    return GIM


def composite_body_inertias(model, q) -> np.ndarray:
    """Composite-body mass matrices M~_i (seed 000 eq. 23b), shape (n, 6, 6).

    M~_i is the 6x6 extended mass of link i and every link outboard of it, welded
    together, about O_i (the point on joint axis i), in the base frame.
    """
    k = kernel_of(model)
    ws = new_workspace(k.n, k.m)
    _mass_matrix(k.F, k.I, ws, joint_vector(q, k.n, "q"), np.empty((k.n, k.n)))
    return data_of(ws, k.n, k.m).M_tilde


@dataclass(frozen=True)
class ArticulatedBodyInertias:
    """What the UDU^T forward dynamics computes at a configuration (seed 001 eqs. 19).

    M_hat   : (n, 6, 6) articulated-body inertias M^_i about O_i, base frame
    psi_hat : (n, 6)    psi^_i = M^_i p_i
    m_hat   : (n,)      m^_i = p_i^T M^_i p_i, the diagonal D of I = U D U^T
    """

    M_hat: np.ndarray
    psi_hat: np.ndarray
    m_hat: np.ndarray


def articulated_body_inertias(model, q, check: bool = True) -> ArticulatedBodyInertias:
    """Articulated-body inertias M^_i, psi^_i and pivots m^_i at q (eqs. 19c-d)."""
    k = kernel_of(model)
    ws = new_workspace(k.n, k.m)
    bad = _articulated(k.F, k.I, ws, joint_vector(q, k.n, "q"))
    D = data_of(ws, k.n, k.m)
    if check and bad >= 0:
        raise SingularMassMatrixError(int(bad) + 1, float(D.m_hat[bad]))
    return ArticulatedBodyInertias(D.M_hat, D.psi_hat, D.m_hat)


def udu_factors(model, q) -> tuple[np.ndarray, np.ndarray]:
    """U (n, n, unit upper triangular in a topological order) and D (n,) with
    I = U diag(D) U^T (seed 001 eq. 18).

    U_kj = p_k^T A_{jk}^T psi^_j / m^_j for every ancestor k of j; D_k = m^_k.
    """
    abi = articulated_body_inertias(model, q)
    k = kernel_of(model)
    ws = new_workspace(k.n, k.m)
    _articulated(k.F, k.I, ws, joint_vector(q, k.n, "q"))
    D = data_of(ws, k.n, k.m)
    mv = k.views
    U = np.eye(k.n)
    for j in range(k.n):
        f = abi.psi_hat[j] / abi.m_hat[j]
        c, a = j, int(mv.parent[j])
        while a >= 0:
            f = twist_propagation_matrix(D.A[c]).T @ f
            U[a, j] = D.e[a] @ (f[:3] if mv.revolute[a] else f[3:])
            c, a = a, int(mv.parent[a])
    return U, abi.m_hat.copy()


def twist_propagation_matrix(a: np.ndarray) -> np.ndarray:
    """The 6x6 twist-propagation matrix [[1, 0], [a x 1, 1]] (seed 001 eq. 11d)."""
    A = np.eye(6)
    A[3:, :3] = [[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]
    return A


def convective_torques(model, q, qd) -> np.ndarray:
    """h = C(q, qd) qd, the Coriolis and centrifugal joint forces of the tree
    (seed 001 eq. 16a), (n,)."""
    z = np.zeros(kernel_of(model).n)
    return tree_inverse_dynamics(model, q, qd, z, gravity=False)


def gravity_torques(model, q) -> np.ndarray:
    """Joint forces that hold the tree still against gravity at q, shape (n,)."""
    z = np.zeros(kernel_of(model).n)
    return tree_inverse_dynamics(model, q, z, z)


def energy(model, q, qd) -> np.ndarray:
    """Kinetic, potential and total energy (J).

    q, qd: shape (n,) -> returns array [T, V, T + V] of shape (3,);
           shape (S, n) -> returns shape (S, 3).
    Potential energy is -sum m_i g . c_i, zero at the base origin.
    """
    k = kernel_of(model)
    (Q, Qd), single = joint_rows(k.n, q=q, qd=qd)
    out = np.empty((Q.shape[0], 2))
    _energy_batch(k.F, k.I, thread_workspace(k.n, k.m), Q, Qd, out)
    res = np.column_stack([out, out.sum(axis=1)])
    return res[0] if single else res


# ----------------------------------------------------------------------------------
# Passive joint forces: viscous damping and end stops at the joint limits
# ----------------------------------------------------------------------------------
#
# A run's passive joint forces are one (n, PASSIVE_COLUMNS) table, `passive`, a row per
# joint (SI units; rad and N m for revolute joints, m and N for prismatic ones):
#
#     passive[k, PASSIVE_DAMPING]    c_k   viscous damping, N m s/rad / N s/m
#     passive[k, PASSIVE_LOWER]      q_lo  lower stop (joint limit), rad / m; -inf: none
#     passive[k, PASSIVE_UPPER]      q_hi  upper stop, rad / m; +inf: none
#     passive[k, PASSIVE_STIFFNESS]  K_k   stop stiffness, N m/rad / N/m
#     passive[k, PASSIVE_STOP_DAMPING]  d_k  Hunt-Crossley damping of the stop, s/rad / s/m
#
# Past a stop the joint meets a spring whose damper scales with the penetration
# delta (Hunt and Crossley 1975, with a linear spring):
#
#     delta = q_lo - q (lower stop) or q - q_hi (upper stop), > 0 in contact
#     f     = max(0, K delta (1 + d delta_dot))      pushes the joint back, never pulls
#     V     = K delta^2 / 2                          the spring's energy (potential energy)
#
# f is continuous (zero at first touch) and the damper's power -(f - K delta) delta_dot
# is never positive. `passive_table` builds the table.

PASSIVE_DAMPING, PASSIVE_LOWER, PASSIVE_UPPER, PASSIVE_STIFFNESS, PASSIVE_STOP_DAMPING = range(5)
PASSIVE_COLUMNS = 5


def passive_table(n: int, damping=None, stops=None) -> np.ndarray:
    """The (n, PASSIVE_COLUMNS) table of a run's passive joint forces (see above).

    damping : (n,) viscous damping, N m s/rad / N s/m (None: none)
    stops   : (n, 4) rows [q_lo, q_hi, K, d] of the end stops (None: none); a joint
              without limits has q_lo = -inf, q_hi = +inf
    """
    table = np.zeros((n, PASSIVE_COLUMNS))
    table[:, PASSIVE_LOWER] = -np.inf
    table[:, PASSIVE_UPPER] = np.inf
    if damping is not None:
        table[:, PASSIVE_DAMPING] = damping
    if stops is not None:
        table[:, PASSIVE_LOWER:] = np.asarray(stops, dtype=float).reshape(n, 4)
    return table


@inlined_kernel
def stop_force(row, q, qd):
    """(f, V): the force of joint row's end stops at (q, qd) along the joint (N m / N;
    > 0 pushes q up) and their spring energy (J); the Hunt-Crossley law above."""
    if q < row[PASSIVE_LOWER]:
        delta = row[PASSIVE_LOWER] - q
        push = row[PASSIVE_STIFFNESS] * delta * (1.0 - row[PASSIVE_STOP_DAMPING] * qd)
        return max(push, 0.0), 0.5 * row[PASSIVE_STIFFNESS] * delta * delta
    if q > row[PASSIVE_UPPER]:
        delta = q - row[PASSIVE_UPPER]
        push = row[PASSIVE_STIFFNESS] * delta * (1.0 + row[PASSIVE_STOP_DAMPING] * qd)
        return -max(push, 0.0), 0.5 * row[PASSIVE_STIFFNESS] * delta * delta
    return 0.0, 0.0


@inlined_kernel
def applied_joint_forces(passive, q, qd, tau, applied, stop):
    """applied = tau - c qd + the stops' forces (n,), the stops' forces alone in stop (n,);
    returns their spring energy (J). Between the stops applied is tau - c qd exactly."""
    V_stop = 0.0
    for k in range(q.shape[0]):
        applied[k] = tau[k] - passive[k, PASSIVE_DAMPING] * qd[k]
        stop[k] = 0.0
        if q[k] < passive[k, PASSIVE_LOWER] or q[k] > passive[k, PASSIVE_UPPER]:
            f, V = stop_force(passive[k], q[k], qd[k])
            applied[k] += f
            stop[k] = f
            V_stop += V
    return V_stop


@compiled_kernel
def state_derivative(F, I, ws, y, tau, passive, f_ext, ydot):
    """ydot = [qd; qdd] for the state y = [q; qd] under tau - c qd + the end stops'
    forces (eq. 16a; passive: the (n, PASSIVE_COLUMNS) table above).

    f_ext (n, 6): wrenches on the links. With loops, qdd keeps them closed
    (`core.kernels.constrained`). Returns -1, or the 0-based joint whose pivot
    vanished. The right-hand side the integrators call, compiled; inside numba call
    `state_derivative_kernel` with the model views cut once."""
    return state_derivative_kernel(model_views(F, I), ws, y, tau, passive, f_ext, ydot)


@compiled_kernel
def state_derivative_kernel(mv, ws, y, tau, passive, f_ext, ydot):
    """`state_derivative` on model views mv and the workspace buffer ws."""
    n = mv.n
    D = data_views(ws, n, mv.m)
    applied = D.tau
    applied_joint_forces(passive, y[:n], y[n:], tau, applied, D.stop)
    for k in range(n):
        ydot[k] = y[n + k]
    if mv.m > 0:  # loops: the accelerations that keep them closed
        return constrained_forward_dynamics_kernel(mv, ws, y[:n], y[n:], applied, f_ext,
                                                   ydot[n:])
    return denoc.forward_dynamics_tree(mv, y[:n], y[n:], applied, f_ext, mv.gravity, D.Rj,
                                       D.oj, D.Rl, D.ol, D.e, D.d, D.c, D.M, D.A, D.t, D.tdot,
                                       D.w, D.tmp66, D.zero, D.phi, D.M_hat, D.psi_hat,
                                       D.m_hat, D.eta, D.phi_hat, D.mu, ydot[n:])


@compiled_kernel
def sample_quantities(F, I, ws, Y, passive, f_ext, pull, applied, stop, qdd, E, lam, pulled):
    """What a run records at each output sample, in one pass per sample, for the states
    Y (S, 2n) = [q; qd] under the passive joint forces `passive` (the table above), the
    link wrenches f_ext (n, 6) and the pull of the buffer `pull` (`core.sim.pull`):

    applied (S, n) in: the driving forces tau(t, q, qd); out: the applied joint forces
            tau - c qd + the end stops' forces, N m / N
    stop    (S, n) out: the end stops' forces alone
    qdd     (S, n) out: the accelerations (keeping the loops closed, with their
            multipliers in lam (S, m))
    E       (S, 3) out: kinetic, potential (gravity and the stops' springs), total
            energy (J), from the same pass's link quantities and twists.
    pulled  (S, PULL_COLUMNS) out: the pull at the sample [link, p, x*, F, P]
            (`core.sim.pull`; zeros while the buffer holds none).
    Returns -1, or s * (n + m) + the failure code of sample s (a joint < n, or n + a
    loop row)."""
    mv = model_views(F, I)
    n, m = mv.n, mv.m
    D = data_views(ws, n, m)
    for s in range(Y.shape[0]):
        q, qd = Y[s, :n], Y[s, n:]
        V_stop = applied_joint_forces(passive, q, qd, applied[s], applied[s], stop[s])
        wrenches = f_ext
        if pull[PULL_ACTIVE] > 0.0:  # f_ext + the pull's wrench at this state
            wrenches = pulled_wrenches(mv, pull, q, qd, f_ext)
        record_pull(pull, pulled[s])
        if m > 0:
            bad = constrained_forward_dynamics_kernel(mv, ws, q, qd, applied[s], wrenches,
                                                      qdd[s])
            for r in range(m):
                lam[s, r] = D.lam[r]
        else:
            bad = denoc.forward_dynamics_tree(mv, q, qd, applied[s], wrenches, mv.gravity,
                                              D.Rj, D.oj, D.Rl, D.ol, D.e, D.d, D.c, D.M, D.A,
                                              D.t, D.tdot, D.w, D.tmp66, D.zero, D.phi,
                                              D.M_hat, D.psi_hat, D.m_hat, D.eta, D.phi_hat,
                                              D.mu, qdd[s])
        if bad >= 0:
            return s * (n + m) + bad
        # the pass left the link quantities and the twists t at (q, qd)
        T, V = denoc.energy_kernel(mv, mv.gravity, D.c, D.M, D.t)
        E[s, 0] = T
        E[s, 1] = V + V_stop
        E[s, 2] = T + V + V_stop
    return -1


@compiled_kernel
def project_samples(F, I, ws, Y, tol, residual):
    """Project every state row of Y (S, 2n) onto the loops (in place) and write the
    largest closure error |Phi| left in each into residual (S,)."""
    mv = model_views(F, I)
    D = data_views(ws, mv.n, mv.m)
    Phi = D.Phi
    for s in range(Y.shape[0]):
        project_onto_loops(mv, ws, Y[s], tol)
        denoc.link_quantities(mv, Y[s, :mv.n], D.Rj, D.oj, D.Rl, D.ol, D.e, D.d, D.c, D.M,
                              D.A)
        closure_residual(mv, D.Rl, D.ol, D.G, Phi)
        err = 0.0
        for r in range(mv.m):
            err = max(err, abs(Phi[r]))
        residual[s] = err
