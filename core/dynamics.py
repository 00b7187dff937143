"""Public dynamics API: inverse and forward dynamics, the GIM and what the papers interpret.

All functions take an immutable `Robot` and joint arrays in SI units
(rad, m, rad/s, N m, N). Each call uses its own workspace (one per thread
and robot size), so the robot is never modified and calls may run in
parallel threads.

The algorithms live in `core.denoc` (compiled with numba); this module
only checks shapes and packs arguments. The first call compiles (or loads
the on-disk cache); later calls are fast.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from numba import njit

from . import denoc
from .errors import SingularMassMatrixError
from .robot import Robot

# ----------------------------------------------------------------------------------
# Compiled entry points: one numba call per public call, everything else inside.
# P is the (n, 17) float parameter table: a, b, alpha, theta | mass | com (3) | inertia (9).
# ----------------------------------------------------------------------------------


@njit(cache=True)
def _setup(P, revolute, V, q):
    """Fill the link quantities of workspace views V at configuration q."""
    R, o, e, d, c, M, A = V[0], V[1], V[2], V[3], V[4], V[5], V[6]
    # P columns: a, b, alpha, theta | mass | com (3) | inertia (9, row-major)
    denoc.link_quantities(P[:, 0:4], revolute, P[:, 4], P[:, 5:8], P[:, 8:17], q,
                          R, o, e, d, c, M, A)


@njit(cache=True)
def _inverse_dynamics_batch(P, revolute, gravity, ws, q, qd, qdd, f_ext, tau):
    """tau[s] = ID(q[s], qd[s], qdd[s]) for every sample s (rows)."""
    V = denoc.workspace_views(ws, P.shape[0])
    o, e, d, M, A, t, tdot, w, s3 = V[1], V[2], V[3], V[5], V[6], V[8], V[9], V[10], V[19]
    for s in range(q.shape[0]):
        _setup(P, revolute, V, q[s])
        denoc.inverse_dynamics_kernel(revolute, gravity, qd[s], qdd[s], f_ext[s], o, e, d, M, A,
                                      t, tdot, w, tau[s], s3)


@njit(cache=True)
def _bias_forces(revolute, gravity, qd, tau, f_ext, V):
    """phi = tau - ID(q, qd, 0): seed 001 Sec 2.4.2, input item 4 (into V's phi)."""
    R, o, e, d, c, M, A, M_hat, t, tdot, w, psi_hat, eta, mu, m_hat, phi_hat, phi, zero, tmp66, s3, _ = V
    denoc.inverse_dynamics_kernel(revolute, gravity, qd, zero, f_ext, o, e, d, M, A, t, tdot, w,
                                  phi, s3)
    for k in range(phi.shape[0]):
        phi[k] = tau[k] - phi[k]


@njit(cache=True)
def _forward_dynamics_denoc(P, revolute, gravity, ws, q, qd, tau, f_ext, qdd):
    """RFDSIM: phi = tau - ID(q, qd, 0), then U D U^T qdd = phi (eqs. 18-21).
    Returns -1, or the 0-based joint whose pivot vanished."""
    V = denoc.workspace_views(ws, P.shape[0])
    R, o, e, d, c, M, A, M_hat, t, tdot, w, psi_hat, eta, mu, m_hat, phi_hat, phi, zero, tmp66, s3, _ = V
    _setup(P, revolute, V, q)
    _bias_forces(revolute, gravity, qd, tau, f_ext, V)
    bad = denoc.articulated_inertias(revolute, e, M, A, M_hat, psi_hat, m_hat, tmp66)
    if bad >= 0:
        return bad
    denoc.udu_solve(revolute, e, A, psi_hat, m_hat, phi, eta, phi_hat, mu, qdd)
    return -1


@njit(cache=True)
def _forward_dynamics_denoc_batch(P, revolute, gravity, ws, q, qd, tau, f_ext, qdd):
    """Row-wise RFDSIM; returns -1 or (sample * n + joint) of the first vanished pivot."""
    n = P.shape[0]
    for s in range(q.shape[0]):
        bad = _forward_dynamics_denoc(P, revolute, gravity, ws, q[s], qd[s], tau[s], f_ext[s], qdd[s])
        if bad >= 0:
            return s * n + bad
    return -1


@njit(cache=True)
def _mass_matrix(P, revolute, ws, q, I):
    """GIM from composite bodies (seed 000 eqs. 23b-24); leaves M~ in V's M_hat slot."""
    V = denoc.workspace_views(ws, P.shape[0])
    _setup(P, revolute, V, q)
    e, M, A, M_tilde, tmp66 = V[2], V[5], V[6], V[7], V[18][0]
    denoc.composite_inertias(M, A, M_tilde, tmp66)
    denoc.gim_from_composite(revolute, e, A, M_tilde, I)


@njit(cache=True)
def _cholesky_solve(I, b, x):
    """Solve I x = b by Cholesky I = L L^T, in place on I (O(n^3)). Returns -1 or the bad row."""
    n = I.shape[0]
    for j in range(n):
        s = I[j, j]
        for k in range(j):
            s -= I[j, k] * I[j, k]
        if not s > 1e-13 * abs(I[j, j]) or not s > 0.0:
            return j
        I[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = I[i, j]
            for k in range(j):
                s -= I[i, k] * I[j, k]
            I[i, j] = s / I[j, j]
    for i in range(n):  # L y = b
        s = b[i]
        for k in range(i):
            s -= I[i, k] * x[k]
        x[i] = s / I[i, i]
    for i in range(n - 1, -1, -1):  # L^T x = y
        s = x[i]
        for k in range(i + 1, n):
            s -= I[k, i] * x[k]
        x[i] = s / I[i, i]
    return -1


@njit(cache=True)
def _forward_dynamics_composite(P, revolute, gravity, ws, q, qd, tau, f_ext, I, qdd):
    """GIM from composite bodies (eqs. 23b-24), phi = tau - ID(q, qd, 0), Cholesky solve."""
    V = denoc.workspace_views(ws, P.shape[0])
    R, o, e, d, c, M, A, M_tilde, t, tdot, w, psi_hat, eta, mu, m_hat, phi_hat, phi, zero, tmp66, s3, _ = V
    _setup(P, revolute, V, q)
    _bias_forces(revolute, gravity, qd, tau, f_ext, V)
    denoc.composite_inertias(M, A, M_tilde, tmp66[0])
    denoc.gim_from_composite(revolute, e, A, M_tilde, I)
    return _cholesky_solve(I, phi, qdd)


@njit(cache=True)
def _energy_batch(P, revolute, gravity, ws, q, qd, out):
    """out[s] = (kinetic, potential) at sample s."""
    V = denoc.workspace_views(ws, P.shape[0])
    o, e, c, M, A, t = V[1], V[2], V[4], V[5], V[6], V[8]
    for s in range(q.shape[0]):
        _setup(P, revolute, V, q[s])
        denoc.twists(revolute, qd[s], o, e, A, t)
        T, U = denoc.energy_kernel(P[:, 4], gravity, c, M, t)
        out[s, 0] = T
        out[s, 1] = U


# ----------------------------------------------------------------------------------
# Packing and workspaces
# ----------------------------------------------------------------------------------

class _Packed:
    """The robot's parameters in the kernels' layout (cached on the robot)."""

    __slots__ = ("P", "revolute", "gravity", "n")

    def __init__(self, robot: Robot) -> None:
        p = robot.params
        n = robot.n
        self.P = np.ascontiguousarray(np.hstack([p.dh, p.mass[:, None], p.com,
                                                 p.inertia.reshape(n, 9)]))
        self.revolute = np.ascontiguousarray(p.revolute)
        self.gravity = np.ascontiguousarray(p.gravity, dtype=float)
        self.n = n


_local = threading.local()


def _packed(robot: Robot) -> _Packed:
    cache = robot.__dict__.get("_packed_kernels")  # written once per robot (frozen dataclass)
    if cache is None:
        cache = _Packed(robot)
        robot.__dict__["_packed_kernels"] = cache  # frozen dataclass: write the cache directly
    return cache


def _workspace(n: int) -> np.ndarray:
    """This thread's workspace buffer for an n-link robot."""
    try:
        return _local.pool[n]
    except (AttributeError, KeyError):
        pool = _local.__dict__.setdefault("pool", {})
        ws = pool[n] = np.zeros(denoc.workspace_size(n))
        return ws


def _is_state(x, n: int) -> bool:
    """x is already a float64 vector of n joint values (cheap test)."""
    return type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (n,)


def _vec(x, n: int, name: str) -> np.ndarray:
    if _is_state(x, n) and x.flags.c_contiguous:
        return x  # the common case, checked cheaply
    a = np.ascontiguousarray(x, dtype=float)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    return a


_NO_WRENCH = np.zeros(6)  # never written; writable so numba compiles one array type



def _rows(x, n: int, name: str) -> tuple[np.ndarray, bool]:
    """(T, n) array and whether the input was a single state."""
    a = np.ascontiguousarray(x, dtype=float)
    if a.ndim == 1 and a.shape == (n,):
        return a[None, :], True
    if a.ndim == 2 and a.shape[1] == n:
        return a, False
    raise ValueError(f"{name} must have shape ({n},) or (T, {n}), got {a.shape}")


def _same_rows(n: int, **arrays) -> tuple[list[np.ndarray], bool]:
    """The named joint arrays as (T, n) rows of one shape, and whether they were single states."""
    rows = [_rows(value, n, name) for name, value in arrays.items()]
    shapes = [r.shape for r, _ in rows]
    if len(set(shapes)) != 1:
        raise ValueError(f"{', '.join(arrays)} must have the same shape, got "
                         f"{', '.join(map(str, shapes))}")
    return [r for r, _ in rows], rows[0][1]


def _wrench(f_ext, T: int) -> np.ndarray:
    if f_ext is None:
        return np.zeros((T, 6))
    w = np.asarray(f_ext, dtype=float)
    if w.shape == (6,):
        return np.ascontiguousarray(np.broadcast_to(w, (T, 6)))
    if w.shape == (T, 6):
        return np.ascontiguousarray(w)
    raise ValueError(f"f_ext must have shape (6,) or ({T}, 6), got {w.shape}")


# ----------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------

def inverse_dynamics(robot: Robot, q, qd, qdd, f_ext=None) -> np.ndarray:
    """Joint torques / forces by the DeNOC two-recursion algorithm (RIDIM).

    q, qd, qdd : shape (n,) for one state or (T, n) for a trajectory;
                 rad, rad/s, rad/s^2 (m, m/s, m/s^2 for prismatic joints).
    f_ext      : optional wrench [n_x, n_y, n_z, f_x, f_y, f_z] (N m, N) that the
                 environment applies to the last link, moment about the origin of
                 the last DH frame, in the base frame; shape (6,) or (T, 6).
    Returns tau with the shape of q: N m for revolute, N for prismatic joints.
    Gravity enters as the base acceleration -g (seed 001 eq. 17).
    """
    k = _packed(robot)
    (Q, Qd, Qdd), single = _same_rows(k.n, q=q, qd=qd, qdd=qdd)
    tau = np.empty_like(Q)
    _inverse_dynamics_batch(k.P, k.revolute, k.gravity, _workspace(k.n), Q, Qd, Qdd,
                            _wrench(f_ext, Q.shape[0]), tau)
    return tau[0] if single else tau


def forward_dynamics(robot: Robot, q, qd, tau, method: str = "denoc", f_ext=None) -> np.ndarray:
    """Joint accelerations qdd from q, qd and joint forces tau.

    q, qd, tau : shape (n,) for one state, or (T, n) for T states (method "denoc");
                 rad, rad/s, N m (m, m/s, N for prismatic joints).
    method="denoc"     : the O(n) recursive UDU^T algorithm (seed 001 eqs. 18-21,
                         seed 000 App. B); no n x n matrix is formed.
    method="composite" : GIM from composite-body inertias (seed 000 eqs. 23b-24)
                         and a Cholesky solve, O(n^3).
    f_ext              : optional external wrench on the last link, as in
                         `inverse_dynamics`; (6,) or (T, 6).
    Returns qdd with the shape of q. Raises SingularMassMatrixError if the GIM is
    singular (naming the joint whose articulated-inertia pivot vanished).
    """
    k = _packed(robot)
    ws = _workspace(k.n)
    if method == "denoc" and f_ext is None and _is_state(q, k.n) and _is_state(qd, k.n) \
            and _is_state(tau, k.n):
        # the common call (one state, float arrays): straight to the kernel
        qdd = np.empty(k.n)
        bad = _forward_dynamics_denoc(k.P, k.revolute, k.gravity, ws, q, qd, tau, _NO_WRENCH, qdd)
        if bad >= 0:
            raise SingularMassMatrixError(int(bad) + 1, _pivot(robot, q, bad))
        return qdd
    if method not in ("denoc", "composite"):
        raise ValueError(f"method must be 'denoc' or 'composite', got {method!r}")
    if np.ndim(q) == 2:
        if method != "denoc":
            raise ValueError("batches (T, n) are computed with method='denoc'")
        (Q, Qd, Tau), _ = _same_rows(k.n, q=q, qd=qd, tau=tau)
        out = np.empty_like(Q)
        bad = _forward_dynamics_denoc_batch(k.P, k.revolute, k.gravity, ws, Q, Qd, Tau,
                                            _wrench(f_ext, Q.shape[0]), out)
        if bad >= 0:
            s, j = divmod(int(bad), k.n)
            raise SingularMassMatrixError(j + 1, _pivot(robot, Q[s], j))
        return out
    q = _vec(q, k.n, "q")
    qd = _vec(qd, k.n, "qd")
    tau = _vec(tau, k.n, "tau")
    w = _NO_WRENCH if f_ext is None else _vec(f_ext, 6, "f_ext")
    qdd = np.empty(k.n)
    if method == "denoc":
        bad = _forward_dynamics_denoc(k.P, k.revolute, k.gravity, ws, q, qd, tau, w, qdd)
    else:
        bad = _forward_dynamics_composite(k.P, k.revolute, k.gravity, ws, q, qd, tau, w,
                                          np.empty((k.n, k.n)), qdd)
    if bad >= 0:
        raise SingularMassMatrixError(int(bad) + 1, _pivot(robot, q, bad))
    return qdd


def _pivot(robot: Robot, q, k: int) -> float:
    """The pivot m_hat_k (0-based k) at configuration q, for error messages."""
    return float(articulated_body_inertias(robot, q, check=False).m_hat[k])


def mass_matrix(robot: Robot, q) -> np.ndarray:
    """The generalized inertia matrix (GIM) I(q), shape (n, n), symmetric positive definite.

    Built from the composite-body mass matrices (seed 000 eqs. 23b-24).
    Units: kg m^2 (revolute-revolute), kg m (mixed), kg (prismatic-prismatic).
    """
    k = _packed(robot)
    I = np.empty((k.n, k.n))
    _mass_matrix(k.P, k.revolute, _workspace(k.n), _vec(q, k.n, "q"), I)
    return I


def composite_body_inertias(robot: Robot, q) -> np.ndarray:
    """Composite-body mass matrices M~_i (seed 000 eq. 23b), shape (n, 6, 6).

    M~_i is the 6x6 extended mass of links i..n welded together, about O_i (the
    point on joint axis i, origin of DH frame i-1), in the base frame.
    """
    k = _packed(robot)
    ws = np.zeros(denoc.workspace_size(k.n))
    I = np.empty((k.n, k.n))
    _mass_matrix(k.P, k.revolute, ws, _vec(q, k.n, "q"), I)
    return denoc.workspace_views(ws, k.n)[7].copy()


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


def articulated_body_inertias(robot: Robot, q, check: bool = True) -> ArticulatedBodyInertias:
    """Articulated-body inertias M^_i, psi^_i and pivots m^_i at q (eqs. 19c-d)."""
    k = _packed(robot)
    n = k.n
    ws = np.zeros(denoc.workspace_size(n))
    qv = _vec(q, n, "q")
    bad = _articulated(k.P, k.revolute, ws, qv)
    if check and bad >= 0:
        raise SingularMassMatrixError(int(bad) + 1, float(denoc.workspace_views(ws, n)[14][bad]))
    V = denoc.workspace_views(ws, n)
    M_hat, psi_hat, m_hat = V[7], V[11], V[14]
    return ArticulatedBodyInertias(M_hat.copy(), psi_hat.copy(), m_hat.copy())


@njit(cache=True)
def _articulated(P, revolute, ws, q):
    V = denoc.workspace_views(ws, P.shape[0])
    _setup(P, revolute, V, q)
    return denoc.articulated_inertias(revolute, V[2], V[5], V[6], V[7], V[11], V[14], V[18])


def udu_factors(robot: Robot, q) -> tuple[np.ndarray, np.ndarray]:
    """U (n, n, unit upper triangular) and D (n,) with I = U diag(D) U^T (seed 001 eq. 18).

    U_kj = p_k^T A_{jk}^T psi^_j / m^_j for k < j; D_k = m^_k.
    """
    abi = articulated_body_inertias(robot, q)
    k = _packed(robot)
    n = k.n
    ws = np.zeros(denoc.workspace_size(n))
    V = denoc.workspace_views(ws, n)
    _setup(k.P, k.revolute, V, _vec(q, n, "q"))
    e, A = V[2], V[6]
    rev = robot.is_revolute
    U = np.eye(n)
    for j in range(n):
        f = abi.psi_hat[j] / abi.m_hat[j]
        for kk in range(j - 1, -1, -1):
            f = _A_matrix(A[kk + 1]).T @ f
            U[kk, j] = e[kk] @ (f[:3] if rev[kk] else f[3:])
    return U, abi.m_hat.copy()


def _A_matrix(a: np.ndarray) -> np.ndarray:
    """The 6x6 twist-propagation matrix [[1, 0], [a x 1, 1]] (seed 001 eq. 11d)."""
    A = np.eye(6)
    A[3:, :3] = [[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]
    return A


def convective_torques(robot: Robot, q, qd) -> np.ndarray:
    """h = C(q, qd) qd, the Coriolis and centrifugal joint forces (seed 001 eq. 16a), (n,)."""
    return inverse_dynamics(_without_gravity(robot), q, qd, np.zeros(robot.n))


def gravity_torques(robot: Robot, q) -> np.ndarray:
    """Joint forces that hold the arm still against gravity at q, shape (n,)."""
    z = np.zeros(robot.n)
    return inverse_dynamics(robot, q, z, z)


def _without_gravity(robot: Robot) -> Robot:
    cached = robot.__dict__.get("_no_gravity")
    if cached is None:
        from dataclasses import replace
        cached = replace(robot, gravity=(0.0, 0.0, 0.0))
        robot.__dict__["_no_gravity"] = cached
    return cached


def energy(robot: Robot, q, qd) -> np.ndarray:
    """Kinetic, potential and total energy (J).

    q, qd: shape (n,) -> returns array [T, V, T + V] of shape (3,);
           shape (S, n) -> returns shape (S, 3).
    Potential energy is -sum m_i g . c_i, zero at the base origin.
    """
    k = _packed(robot)
    (Q, Qd), single = _same_rows(k.n, q=q, qd=qd)
    out = np.empty((Q.shape[0], 2))
    _energy_batch(k.P, k.revolute, k.gravity, _workspace(k.n), Q, Qd, out)
    res = np.column_stack([out, out.sum(axis=1)])
    return res[0] if single else res


@njit(cache=True)
def _state_derivative(P, revolute, gravity, ws, y, tau, damping, f_ext, ydot):
    """ydot = [qd; qdd] for the state y = [q; qd] under tau - damping * qd (eq. 16a).
    Returns -1, or the 0-based joint whose pivot vanished."""
    n = P.shape[0]
    applied = denoc.workspace_views(ws, n)[20]
    for k in range(n):
        applied[k] = tau[k] - damping[k] * y[n + k]
        ydot[k] = y[n + k]
    return _forward_dynamics_denoc(P, revolute, gravity, ws, y[:n], y[n:], applied, f_ext, ydot[n:])
