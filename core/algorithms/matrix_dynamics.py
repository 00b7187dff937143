"""Homogeneous 4x4 matrix dynamics (Legnani et al., seed 004): a third formulation of
the dynamics, independent of the DeNOC recursions, for cross-checks and for Inspect.

Plain numpy, one state at a time, written with the paper's symbols. Frames are the
project's (core.model.robot, docs/robot-file.md): standard DH rows
M_{i-1,i} = Rz(theta) Tz(b) Tx(a) Rx(alpha), joint i turning about / sliding along
z_{i-1}, which is the frame placement the paper uses (Sec 2.1: "if the reference frames
... are placed according to the Denavit and Hartenberg notation vector u assumes the
simple form u = [0, 0, 1]"; its Stanford-arm matrices M_{0,1} ... M_{5,6} of Sec 4.1 are
these rows). Link i's own frame is frame i; `com` and `inertia` are given in it.
Trees (a Mechanism's chains) are handled by running every recursion over the parent
array, with a chain's base placement between its parent link's frame and its frame 0.

Symbols (seed 004 part 2; all 4x4; "(0)" = expressed in the base frame):
  M_{0,i}      position matrix of link i: its own frame in (0)               (eq. 2)
  L_i          joint matrix of joint i in (0): for a screw of unit axis u through
               the point t, pitch p: L = [[u x, -u x t + p u], [0, 0]]
               (revolute p = 0; prismatic [[0, u], [0, 0]])                  (eq. 1)
  W_{0,i}      absolute velocity matrix, dM_{0,i}/dt = W_{0,i} M_{0,i};
               W = [[omega x, v_O], [0, 0]], v_O the velocity of the body
               point at the origin of (0)                                     (eqs. 2, 11)
  H_{0,i}      absolute acceleration matrix, d2M_{0,i}/dt2 = H_{0,i} M_{0,i},
               H = dW/dt + W^2 = [[omega_dot x + omega x omega x, a_O], [0, 0]]  (eqs. 3, 11)
  H~_{0,i}     H at qdd = 0: the Coriolis and centrifugal part                (eq. 3bis)
  J_i          pseudo-inertia, the integral of P P^T dm over the body, in link i's
               frame (Sec 4.2); J_i(0) = M_{0,i} J_i M_{0,i}^T                (Fig. 4 step 11)
  H_g          gravity acceleration matrix [[0, g], [0, 0]]
  Phi          action matrix [[c x, f], [-f^T, 0]]: moment c about the origin of (0)
               and force f
  Skew(A)      A - A^T
  A (x) B      the pseudo-scalar product (eq. 10): Phi (x) L = c . u + f . b
  Psi_i        action matrix of everything outboard of joint i (Sec 2.3, Fig. 4 step 13)

Dynamics:
  Newton-Euler (Sec 2.3, Fig. 4): Phi_i = Skew((H_g - H_{0,i}) J_i(0)) (inertia and
  weight), Psi_i = Phi_i + sum of Psi over the children, and the actuator supplies
  tau_i = -Psi_i (x) L_i.
  Lagrange (Sec 3): t_h = 1/2 Tr(W_{0,h} J_h(0) W_{0,h}^T) (eq. 8),
  v_h = -Tr(H_g J_h(0)) (eq. 9), mass matrix M[i, m] = sum_h Tr(L_i J_h(0) L_m^T) over the
  links h moved by both joints, C_m = sum_h Tr((H~_{0,h} - H_g) J_h(0) L_m^T) over the
  links h moved by joint m, and tau = M qdd + C.
  Closed loops (Sec 2.2): W_{0,b} = W_{0,a} + W of the cut joint (eq. 5), i.e.
  sum L q_dot = [0] around the loop (eq. 7), six scalar equations A q_dot = 0 per loop;
  the acceleration equations (eq. 6) are A q_ddot = b with the same A.

Units: SI (m, kg, s), rad for revolute and m for prismatic joints; torques N m, forces N.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, MechanismError
from ..model.arguments import (finite_array, finite_result, joint_vector, model_of, one_of,
                               one_degree_joints_only)
from ..model.parts import Link

__all__ = [
    "LinkMatrices", "LoopClosureMatrices", "action_matrix", "dh_position_matrix",
    "gravity_acceleration_matrix", "inverse_position_matrix", "joint_action_matrices",
    "joint_matrix", "lagrange_inverse_dynamics", "link_matrices", "link_motion_matrices",
    "loop_closure_matrices", "matrix_closed_chain_inverse_dynamics", "matrix_energy",
    "matrix_inverse_dynamics", "matrix_mass_matrix", "matrix_velocity_transformation",
    "pseudo_inertia", "pseudo_scalar_product", "screw_matrix", "skew", "vec6",
]


# ----------------------------------------------------------------------------------
# The 4x4 building blocks
# ----------------------------------------------------------------------------------

def cross_matrix(u) -> np.ndarray:
    """The 3x3 matrix u x (u x r = cross_matrix(u) @ r)."""
    x, y, z = (float(c) for c in u)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def dh_position_matrix(link: Link, q: float) -> np.ndarray:
    """M_{i-1,i} (4, 4): link i's frame in frame i-1 for the joint value q (rad or m),
    Rz(theta) Tz(b) Tx(a) Rx(alpha) with theta = q (revolute) or b = q (prismatic)."""
    theta, b = (q, link.b) if link.is_revolute else (link.theta, q)
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = np.cos(link.alpha), np.sin(link.alpha)
    # the Stanford-arm matrices of Sec 4.1 are this product for their DH rows
    return np.array([[ct, -st * ca, st * sa, link.a * ct],
                     [st, ct * ca, -ct * sa, link.a * st],
                     [0.0, sa, ca, b],
                     [0.0, 0.0, 0.0, 1.0]])


def inverse_position_matrix(M: np.ndarray) -> np.ndarray:
    """M^-1 of a position matrix [[R, p], [0, 1]]: [[R^T, -R^T p], [0, 1]] (part 1, 2.2)."""
    out = np.eye(4)
    out[:3, :3] = M[:3, :3].T
    out[:3, 3] = -M[:3, :3].T @ M[:3, 3]
    return out


def screw_matrix(u, t=(0.0, 0.0, 0.0), pitch: float = 0.0, prismatic: bool = False
                 ) -> np.ndarray:
    """L (4, 4) of a screw pair (eq. 1): unit axis u through the point t, pitch p (m/rad):
    L = [[u x, b], [0, 0]] with b = -u x t + p u; prismatic: [[0, u], [0, 0]].
    A revolute joint is the screw of pitch 0."""
    u = np.asarray(u, dtype=float)
    L = np.zeros((4, 4))
    if prismatic:
        L[:3, 3] = u                       # eq. 1, L_p
        return L
    L[:3, :3] = cross_matrix(u)            # eq. 1, L_s: the rotation part
    L[:3, 3] = -np.cross(u, np.asarray(t, dtype=float)) + pitch * u  # b = -u x t + p u
    return L


def joint_matrix(link: Link) -> np.ndarray:
    """L_{i-1,i(i-1)} (4, 4): joint i's L matrix in frame i-1, where its axis is z through
    the origin (Sec 2.1): revolute [[0,-1,0,0],[1,0,0,0],0,0], prismatic L[2, 3] = 1."""
    return screw_matrix((0.0, 0.0, 1.0), prismatic=not link.is_revolute)


def pseudo_inertia(link: Link) -> np.ndarray:
    """J_i (4, 4), kg and kg m^2: the integral of P P^T dm over link i, P = (x, y, z, 1)
    in the link's own frame (Sec 4.2).

    J = [[I_xx, I_xy, I_xz, m x_g], ..., [m x_g, m y_g, m z_g, m]] where the 3x3 block is
    the second-moment tensor about the frame origin, integral of r r^T dm (not the inertia
    tensor): from the inertia tensor I_c about the mass centre c it is
    1/2 Tr(I_c) 1 - I_c + m c c^T.
    """
    m = link.mass
    c = np.asarray(link.com, dtype=float)
    I_c = link.inertia_matrix
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_c) * np.eye(3) - I_c + m * np.outer(c, c)
    J[:3, 3] = J[3, :3] = m * c
    J[3, 3] = m
    return J


def gravity_acceleration_matrix(g) -> np.ndarray:
    """H_g (4, 4) = [[0, g], [0, 0]] for gravity g (3,), m/s^2 in the base frame."""
    H_g = np.zeros((4, 4))
    H_g[:3, 3] = np.asarray(g, dtype=float)
    return H_g


def action_matrix(moment, force) -> np.ndarray:
    """Phi (4, 4) = [[c x, f], [-f^T, 0]] of a force f (N) and a moment c (N m, about the
    origin of the frame both are expressed in)."""
    Phi = np.zeros((4, 4))
    Phi[:3, :3] = cross_matrix(moment)
    Phi[:3, 3] = force
    Phi[3, :3] = -np.asarray(force, dtype=float)
    return Phi


def skew(A: np.ndarray) -> np.ndarray:
    """Skew(A) = A - A^T (part 1, 4.6)."""
    return A - A.T


def pseudo_scalar_product(A: np.ndarray, B: np.ndarray) -> float:
    """A (x) B (eq. 10), 1-based as in the paper:
    A[3,2]B[3,2] + A[1,3]B[1,3] + A[2,1]B[2,1] + A[1,4]B[1,4] + A[2,4]B[2,4] + A[3,4]B[3,4].
    For an action Phi and a joint matrix L it is the work of Phi on the joint's motion."""
    return float(A[2, 1] * B[2, 1] + A[0, 2] * B[0, 2] + A[1, 0] * B[1, 0]
                 + A[0, 3] * B[0, 3] + A[1, 3] * B[1, 3] + A[2, 3] * B[2, 3])


def vec6(A: np.ndarray) -> np.ndarray:
    """The six independent elements of a matrix [[w x, v], [0, 0]] (a W, H or L):
    (w_x, w_y, w_z, v_x, v_y, v_z) = (A[3,2], A[1,3], A[2,1], A[1,4], A[2,4], A[3,4])."""
    return np.array([A[2, 1], A[0, 2], A[1, 0], A[0, 3], A[1, 3], A[2, 3]])


# ----------------------------------------------------------------------------------
# Model access: links, parents, placements (of any model)
# ----------------------------------------------------------------------------------

def joint_placements(model) -> np.ndarray:
    """(n, 4, 4): the fixed pose of each joint's frame (the frame its DH row starts
    from) in its parent link's own frame, or in the base frame for a joint on the base:
    a chain's base placement for the chain's first link, the identity elsewhere."""
    n = len(model.links)
    P = np.tile(np.eye(4), (n, 1, 1))
    k = 0
    for chain in model_of(model).chains:
        P[k, :3, :3] = chain.base.rotation
        P[k, :3, 3] = chain.base.xyz
        k += len(chain.links)
    return P


def parents_first(parent) -> list[int]:
    """The joints with every parent before its children (depth first from the base)."""
    children: list[list[int]] = [[] for _ in parent]
    roots = []
    for j, p in enumerate(parent):
        (roots if p < 0 else children[p]).append(j)
    order, stack = [], list(reversed(roots))
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(children[j]))
    if len(order) != len(parent):
        raise ValueError("the parent array has a cycle")
    return order


def _ancestors(parent, j: int) -> list[int]:
    """j and every joint between it and the base (the joints that move link j)."""
    out = []
    while j >= 0:
        out.append(j)
        j = parent[j]
    return out


def _state(model, x, name: str) -> np.ndarray:
    """Joint values (n,) checked by `core.model.arguments.joint_vector` (None: zeros)."""
    n = len(model.links)
    return joint_vector(x, n, name, default=np.zeros(n))


def _gravity(model, gravity) -> np.ndarray:
    """H_g of the model's gravity, or of `gravity` (3,), m/s^2."""
    g = model.gravity if gravity is None else finite_array(gravity, (3,), "gravity")
    return gravity_acceleration_matrix(g)


# ----------------------------------------------------------------------------------
# Kinematics: M, W, H and L of every link (Sec 2.1)
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class LinkMatrices:
    """The 4x4 kinematics of every link at one state (n links, joint order), frame (0).

    M           : (n, 4, 4) position matrices M_{0,i} (link i's own frame), m   (eq. 2)
    W           : (n, 4, 4) absolute velocity matrices W_{0,i}, 1/s and m/s    (eq. 11)
    H           : (n, 4, 4) absolute acceleration matrices H_{0,i}, 1/s^2, m/s^2 (eq. 11)
    L           : (n, 4, 4) joint matrices L_i(0) (per unit joint rate)        (eq. 1)
    joint_frames: (n, 4, 4) the frame each joint's row starts from (M_{0,i-1} in a
                  serial arm): joint i turns about / slides along its z
    """

    M: np.ndarray
    W: np.ndarray
    H: np.ndarray
    L: np.ndarray
    joint_frames: np.ndarray


def link_matrices(model, q, qd=None, qdd=None) -> LinkMatrices:
    """Position, velocity and acceleration matrices of every link of a Robot or a
    Mechanism's tree (loops ignored) at q, qd, qdd (each (n,); rad, rad/s, rad/s^2 or m,
    m/s, m/s^2; rates default to zero), by the motion composition rule of Sec 2.1.
    The formulation is written for revolute and prismatic joints: others are refused."""
    one_degree_joints_only(model, "the 4x4 matrix formulation")
    links, parent = model.links, tuple(model.parent)
    n = len(links)
    q, qd, qdd = _state(model, q, "q"), _state(model, qd, "qd"), _state(model, qdd, "qdd")
    P = joint_placements(model)
    M, W, H, L, F = (np.zeros((n, 4, 4)) for _ in range(5))
    for i in parents_first(parent):
        p = parent[i]
        M_prev = M[p] if p >= 0 else np.eye(4)         # M_{0,0} = [1]
        W_prev = W[p] if p >= 0 else np.zeros((4, 4))  # W_{0,0} = [0]
        H_prev = H[p] if p >= 0 else np.zeros((4, 4))  # H_{0,0} = [0]
        F[i] = M_prev @ P[i]                           # frame (i-1) of joint i
        # eq. 2: M_{0,i} = M_{0,i-1} M_{i-1,i}(q_i)
        M[i] = F[i] @ dh_position_matrix(links[i], q[i])
        # L_{i-1,i(0)} = M_{0,i-1} L_{i-1,i(i-1)} M_{0,i-1}^-1   (Sec 4.1)
        L[i] = F[i] @ joint_matrix(links[i]) @ inverse_position_matrix(F[i])
        # relative velocity and acceleration in (0): W = L q_dot, H = L q_ddot + L^2 q_dot^2
        W_rel = L[i] * qd[i]
        H_rel = L[i] * qdd[i] + (L[i] @ L[i]) * qd[i] ** 2
        # eq. 11: W_{0,i} = W_{0,i-1} + W_{i-1,i(0)}
        W[i] = W_prev + W_rel
        # eq. 11 (Coriolis' theorem): H_{0,i} = H_{0,i-1} + H_{i-1,i(0)} + 2 W_{0,i-1} W_{i-1,i(0)}
        H[i] = H_prev + H_rel + 2.0 * W_prev @ W_rel
    finite_result(W, "the velocity matrices W")
    finite_result(H, "the acceleration matrices H")
    return LinkMatrices(M=M, W=W, H=H, L=L, joint_frames=F)


def link_motion_matrices(model, q, qd, qdd, link: int, frame: str = "base"
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(W, H), each (4, 4): the absolute velocity and acceleration matrices of one link
    (0-based `link`) at the state q, qd, qdd (each (n,)). frame "base": W_{0,i}, H_{0,i}
    in (0) (the velocity and acceleration of the body point at the base origin in the
    last column); frame "link": the same matrices in the link's own frame,
    M_{0,i}^-1 W_{0,i} M_{0,i} (the velocity and acceleration of the link frame's
    origin, and the angular velocity, in link axes). For the GUI's Inspect."""
    n = len(model.links)
    if not 0 <= link < n:
        raise IndexError(f"link must be in 0..{n - 1}, got {link}")
    one_of(frame, "frame", ("base", "link"))
    km = link_matrices(model, q, qd, qdd)
    W, H = km.W[link], km.H[link]
    if frame == "link":
        M = km.M[link]
        Minv = inverse_position_matrix(M)
        W, H = Minv @ W @ M, Minv @ H @ M
    return finite_result(W.copy(), "W"), finite_result(H.copy(), "H")


# ----------------------------------------------------------------------------------
# Newton-Euler with 4x4 matrices (Sec 2.3, Sec 4.2, Fig. 4 and 6)
# ----------------------------------------------------------------------------------

def _external_actions(model, km: LinkMatrices, f_ext) -> np.ndarray:
    """Phi_j(0) (n, 4, 4) of external wrenches in core's convention ([moment, force] on
    the link, moment about the link frame's origin, base frame; (6,) on the last link or
    (n, 6)): the moment is moved to the base origin, c = n + o_j x f."""
    n = len(model.links)
    Phi = np.zeros((n, 4, 4))
    if f_ext is None:
        return Phi
    w = np.asarray(f_ext, dtype=float)
    w = finite_array(f_ext, (6,) if w.shape == (6,) else (n, 6), "f_ext")
    if w.shape == (6,):
        w = np.vstack([np.zeros((n - 1, 6)), w])
    for j in range(n):
        o = km.M[j, :3, 3]
        Phi[j] = action_matrix(w[j, :3] + np.cross(o, w[j, 3:]), w[j, 3:])
    return Phi


def joint_action_matrices(model, q, qd, qdd, f_ext=None, gravity=None) -> np.ndarray:
    """Psi_i (n, 4, 4), frame (0): the action matrix of the inertia, weight and external
    actions on link i and every link it carries (Sec 2.3; Fig. 4 steps 10-13), i.e. the
    joint reaction the rest of the mechanism must supply is -Psi_i (moment about the base
    origin in its skew block, force in its last column).

    gravity: (3,) m/s^2 in the base frame (default: the model's; zeros for none).
    f_ext: external wrenches as in `core.algorithms.dynamics` (moment about the link frame's origin,
    base frame; (6,) on the last link or (n, 6)).
    """
    km = link_matrices(model, q, qd, qdd)
    parent = tuple(model.parent)
    H_g = _gravity(model, gravity)
    Phi_ext = _external_actions(model, km, f_ext)
    Psi = np.zeros_like(km.M)
    for i in reversed(parents_first(parent)):   # from the end effector to the base
        # step 11: J_i(0) = M_{0,i} J_i M_{0,i}^T
        J0 = km.M[i] @ pseudo_inertia(model.links[i]) @ km.M[i].T
        # step 12: Phi_i = Skew((H_g - H_{0,i}) J_i(0)), inertia and weight together
        Phi = skew((H_g - km.H[i]) @ J0)
        # step 13: Psi_i = Phi_i + Psi_{i+1} (+ the external action, step 10)
        Psi[i] += Phi + Phi_ext[i]
        if parent[i] >= 0:
            Psi[parent[i]] += Psi[i]
    return finite_result(Psi, "the action matrices Psi")


def matrix_inverse_dynamics(model, q, qd, qdd, f_ext=None, gravity=None) -> np.ndarray:
    """Joint torques / forces (n,), N m / N, of a Robot or a Mechanism's tree (loops
    ignored) by the 4x4 Newton-Euler form: tau_i = -Psi_i (x) L_i (eq. 10), the
    component of the outboard action along the displacement joint i allows.
    q, qd, qdd (n,); gravity and f_ext as in `joint_action_matrices`."""
    km = link_matrices(model, q, qd, qdd)
    Psi = joint_action_matrices(model, q, qd, qdd, f_ext, gravity)
    return finite_result(np.array([-pseudo_scalar_product(Psi[i], km.L[i])
                                   for i in range(len(Psi))]), "the joint forces tau")


# ----------------------------------------------------------------------------------
# Lagrange form with the trace formula (Sec 3)
# ----------------------------------------------------------------------------------

def _absolute_pseudo_inertias(model, km: LinkMatrices) -> np.ndarray:
    """J_h(0) = M_{0,h} J_h M_{0,h}^T for every link, (n, 4, 4)."""
    return np.array([km.M[h] @ pseudo_inertia(link) @ km.M[h].T
                     for h, link in enumerate(model.links)])


def _subtree_sums(parent, X: np.ndarray) -> np.ndarray:
    """S_i = sum of X_h over link i and every link it carries (the sums over h >= i of
    Sec 3, on a tree)."""
    S = X.copy()
    for i in reversed(parents_first(parent)):
        if parent[i] >= 0:
            S[parent[i]] += S[i]
    return S


def matrix_mass_matrix(model, q) -> np.ndarray:
    """The mass matrix (n, n) by the trace formula of Sec 3,
    M[i, m] = sum over the links h moved by both joints of Tr(L_i J_h(0) L_m^T)
    (serial: h from max(i, m) to N). Units as `core.mass_matrix`."""
    km = link_matrices(model, q)
    parent = tuple(model.parent)
    J_sum = _subtree_sums(parent, _absolute_pseudo_inertias(model, km))
    n = len(parent)
    Mass = np.zeros((n, n))
    for i in range(n):
        for m in _ancestors(parent, i):  # m moves every link that i moves
            # links moved by both i and m: those carried by i (the deeper joint)
            Mass[i, m] = Mass[m, i] = np.trace(km.L[i] @ J_sum[i] @ km.L[m].T)
    return finite_result(Mass, "the mass matrix")


def lagrange_inverse_dynamics(model, q, qd, qdd, gravity=None) -> np.ndarray:
    """Joint torques / forces (n,) by the Lagrange form of Sec 3: tau = M qdd + C with
    M from `matrix_mass_matrix` and C_m = sum over the links h moved by joint m of
    Tr((H~_{0,h} - H_g) J_h(0) L_m^T), H~ the acceleration matrices at qdd = 0
    (eq. 3bis: Coriolis and centrifugal) and H_g the gravity (model's by default)."""
    parent = tuple(model.parent)
    n = len(parent)
    qdd = _state(model, qdd, "qdd")
    km = link_matrices(model, q, qd, np.zeros(n))   # H~: the accelerations at qdd = 0
    H_g = _gravity(model, gravity)
    J0 = _absolute_pseudo_inertias(model, km)
    # d/dt dt/dq_dot_m - dt/dq_m + dv/dq_m at qdd = 0, summed over the links h >= m
    G_sum = _subtree_sums(parent, np.array([(km.H[h] - H_g) @ J0[h] for h in range(n)]))
    C = np.array([np.trace(G_sum[m] @ km.L[m].T) for m in range(n)])
    return finite_result(matrix_mass_matrix(model, q) @ qdd + C, "the joint forces tau")


def matrix_energy(model, q, qd) -> np.ndarray:
    """[t, v, t + v] (3,), J: kinetic energy sum 1/2 Tr(W_{0,h} J_h(0) W_{0,h}^T)
    (eq. 8) and potential energy sum -Tr(H_g J_h(0)) (eq. 9), zero at the base origin."""
    km = link_matrices(model, q, qd)
    J0 = _absolute_pseudo_inertias(model, km)
    H_g = gravity_acceleration_matrix(model.gravity)
    t = sum(0.5 * np.trace(km.W[h] @ J0[h] @ km.W[h].T) for h in range(len(J0)))  # eq. 8
    v = sum(-np.trace(H_g @ J0[h]) for h in range(len(J0)))                        # eq. 9
    return finite_result(np.array([t, v, t + v]), "the energy")


# ----------------------------------------------------------------------------------
# Closed loops (Sec 2.2, Sec 5)
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class LoopClosureMatrices:
    """The loop equations of Sec 2.2 at one state, six rows per loop (vec6 order).

    A        : (6 nl, n + c) the coefficients of eq. 7, A [q_dot; s_dot] = 0, columns
               the n tree joints then the c cut-joint rates s (revolute and prismatic
               cut joints 1 each, spherical 3: the angular rate components about the
               axes of (0), the axes turning with the loop's first link)
    b        : (6 nl,) the right side of the acceleration equations (eq. 6),
               A [q_ddot; s_ddot] = b (zeros when no rates were given)
    s_dot    : (c,) the cut-joint rates that close eq. 7 for the given qd (least squares)
    n_tree   : n
    """

    A: np.ndarray
    b: np.ndarray
    s_dot: np.ndarray
    n_tree: int


def _cut_joint_matrices(loop, M_a: np.ndarray) -> list[np.ndarray]:
    """L(0) of the cut joint's relative motions, on the loop's first link a: the point
    and axis of side a in (0)."""
    P = M_a @ np.append(np.asarray(loop.at[0], dtype=float), 1.0)
    u = M_a[:3, :3] @ np.asarray(loop.axis[0], dtype=float)
    u = u / np.linalg.norm(u)
    kind = getattr(loop.joint, "value", loop.joint)
    if kind == "revolute":
        return [screw_matrix(u, P[:3])]
    if kind == "prismatic":
        return [screw_matrix(u, prismatic=True)]
    return [screw_matrix(e, P[:3]) for e in np.eye(3)]   # spherical: three concurrent axes


def loop_closure_matrices(mech, q, qd=None) -> LoopClosureMatrices:
    """A and b of the velocity (eq. 7) and acceleration (eq. 6) loop equations of a
    Mechanism at q (and qd, for b), each loop written as W_{0,b} = W_{0,a} + W_cut
    (eq. 5): sum of L_j q_dot_j over the joints moving link b, minus those moving link a,
    minus the cut joint's L s_dot, is [0]."""
    n = len(mech.links)
    parent = tuple(mech.parent)
    names = list(mech.joint_names)
    qd = _state(mech, qd, "qd")
    km = link_matrices(mech, q, qd, np.zeros(n))   # H~ (eq. 3bis) for b
    cuts, bodies = [], []
    for loop in mech.loops:
        if getattr(loop.joint, "value", loop.joint) == "gear":
            raise MechanismError("the matrix formulation writes a loop as a cut joint "
                                 "(eq. 5); a gear couples two joint values: use the "
                                 "recursive closed-chain functions", loop=loop.name,
                                 field="joint")
        a = names.index(loop.links[0])
        b = -1 if loop.links[1] == "base" else names.index(loop.links[1])
        cuts.append(_cut_joint_matrices(loop, km.M[a]))
        bodies.append((a, b))
    c = sum(len(L) for L in cuts)
    A = np.zeros((6 * len(cuts), n + c))
    col = n
    for k, ((a, b), L_cut) in enumerate(zip(bodies, cuts)):
        rows = slice(6 * k, 6 * k + 6)
        # eq. 7: sum L_j q_dot_j along the loop (+ on the way to b, - on the way to a)
        for j in (_ancestors(parent, b) if b >= 0 else []):
            A[rows, j] += vec6(km.L[j])
        for j in _ancestors(parent, a):
            A[rows, j] -= vec6(km.L[j])
        for L in L_cut:
            A[rows, col] = -vec6(L)
            col += 1
    # the cut-joint rates that close the velocity equations
    A_tree, A_cut = A[:, :n], A[:, n:]
    s_dot = np.linalg.lstsq(A_cut, -A_tree @ qd, rcond=None)[0]
    # eq. 6: H_{0,b} = H_{0,a} + H_cut(0) + 2 W_{0,a} W_cut(0), H_cut = L s_ddot + W_cut^2;
    # the terms without accelerations go to the right side
    rhs = np.zeros(6 * len(cuts))
    col = 0
    for k, ((a, b), L_cut) in enumerate(zip(bodies, cuts)):
        W_cut = sum(L * s_dot[col + r] for r, L in enumerate(L_cut))
        col += len(L_cut)
        H_b = km.H[b] if b >= 0 else np.zeros((4, 4))
        rhs[6 * k:6 * k + 6] = -vec6(H_b - km.H[a] - W_cut @ W_cut - 2.0 * km.W[a] @ W_cut)
    finite_result(rhs, "the acceleration terms b")
    return LoopClosureMatrices(A=A, b=rhs, s_dot=s_dot, n_tree=n)


def matrix_velocity_transformation(mech, q, rank_tol: float = 1e-9) -> np.ndarray:
    """R (n, na): the tree joint rates per unit rate of each actuated joint,
    q_dot = R q_dot_actuated, from the null space of eq. 7's A (the cut-joint rates
    eliminated). Raises ValueError unless the loops leave exactly as many degrees of
    freedom as there are actuated joints (else MechanismError), and those fix the motion
    at q (else ArgumentError naming q: a singular pose)."""
    n = len(mech.links)
    actuated = list(mech.actuated)
    A = loop_closure_matrices(mech, q).A
    if A.shape[0] == 0:
        return np.eye(n)[:, actuated]
    _, s, Vt = np.linalg.svd(A)
    rank = int(np.sum(s > rank_tol * max(1.0, s[0])))
    N = Vt[rank:].T                               # (n + c, dof): all closed motions
    if N.shape[1] != len(actuated):
        raise MechanismError(f"the loops leave {N.shape[1]} degrees of freedom but "
                             f"{len(actuated)} joints are actuated", field="actuated")
    N_a = N[actuated]
    if np.linalg.svd(N_a, compute_uv=False)[-1] <= rank_tol:
        raise ArgumentError("q: the actuated joints do not fix the motion at this pose "
                            "(a singular pose)")
    return (N @ np.linalg.inv(N_a))[:n]           # actuated rows = identity


def matrix_closed_chain_inverse_dynamics(mech, q, qd, qdd, f_ext=None) -> np.ndarray:
    """Actuator torques / forces (n,) of a closed chain along a motion that keeps its
    loops closed (zeros at passive joints): the 4x4 Newton-Euler torques of the tree
    projected on the closed motions by virtual power, tau_a = R^T tau_tree, R from
    `matrix_velocity_transformation` (the cut joints do no work)."""
    tau_tree = matrix_inverse_dynamics(mech, q, qd, qdd, f_ext)
    R = matrix_velocity_transformation(mech, q)
    tau = np.zeros(len(mech.links))
    tau[list(mech.actuated)] = R.T @ tau_tree
    return finite_result(tau, "the joint forces tau")
