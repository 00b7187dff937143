"""Inverse kinematics of the last link's frame by damped least squares (DLS).

Symbols (base frame; angular rows first, as in Saha's twists t = [w; v]):

    J      (6, n)  geometric Jacobian of the tool (the last link's frame, origin p):
                   t_tool = J qd, t_tool = [w; v] with v the velocity of p
    e_j, O_j       axis (unit) and a point of joint j (`Kinematics.joint_axes`,
                   `Kinematics.joint_origins`)
    J_j = [e_j; e_j x (p - O_j)]   revolute joint j                      (twist, eq. 7)
    J_j = [0; e_j]                 prismatic joint j
    r      task error: [rotation vector of R_target R^T; p_target - p] (or its
           linear rows only when no orientation is asked)
    dq = V diag(s / (s^2 + lambda^2)) U^T r,   J = U diag(s) V^T       (DLS step)

    H      (6, n, n)  H[:, j, k] = dJ_j / dq_k (`tool_jacobian_derivative`), Jdot = H qd:
           revolute k before j (turns axis j):
               dJ_j/dq_k = [e_k x e_j; (e_k x e_j) x (p - O_j) + e_j x (e_k x (p - O_j))]
           k = j or after it (moves p only):  dJ_j/dq_k = [0; e_j x J_v,k]
           prismatic k before j: 0;  prismatic j: [0; e_k x e_j] for a revolute k before j
    The tool's acceleration is [w'; a_p] = J qdd + Jdot qd, so a task acceleration a
    needs qdd = J^+ (a - Jdot qd) (plus a null-space term when the task has fewer rows
    than the arm has joints: `core.sim.tool_motions`).

Column j of J is also the tool's twist for the unit joint rate qd = e_j: the same
twist the DeNOC recursion propagates (`core.kernels.denoc.twists`), here taken at p.

`solve_position` iterates DLS steps (Levenberg-Marquardt: a step is kept only if
it lowers |r|; the damping grows when it does not and shrinks when it does),
clamps the joints to their limits after every step (a joint that sits on its
limit and is pushed outward is taken out of the step), and reports whether the
target was reached, the residual, and the Jacobian's singular values at the end
(a small one: near a singularity; the edge of the workspace is one).

Pure numpy on `core.forward_kinematics`; no Qt.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.arguments import finite_array, finite_result, joint_vector, model_of
from .kinematics import forward_kinematics

__all__ = ["IKResult", "tool_jacobian", "tool_jacobian_derivative",
           "damped_least_squares_step", "rotation_error", "solve_position", "wrap_revolute"]

#: Default damping lambda of the DLS step (m, or rad for orientation rows).
DAMPING = 1e-3
#: Default bound of one step, max |dq_j| (rad / m): keeps a far target's first step sane.
MAX_STEP = 0.5
#: Singular values below this (m/rad for the position rows) flag "near a singularity".
NEAR_SINGULAR = 1e-2


def _tool_ancestors(model) -> np.ndarray:
    """(n,) bool: the joints that move the last link (all of them in a serial arm)."""
    parent = model.parent
    moves = np.zeros(model.n, dtype=bool)
    j = model.n - 1
    while j >= 0:
        moves[j] = True
        j = parent[j]
    return moves


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (3), broadcast: np.cross without its per-call overhead
    (which is most of a small Jacobian's cost)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _strict_ancestors(model) -> np.ndarray:
    """(n, n) bool: [k, j] when joint k is before joint j on the way from the base."""
    before = np.zeros((model.n, model.n), dtype=bool)
    for j in range(model.n):
        k = model.parent[j]
        while k >= 0:
            before[k, j] = True
            k = model.parent[k]
    return before


def _jacobian_of(e: np.ndarray, O: np.ndarray, p: np.ndarray, revolute: np.ndarray,
                 moves: np.ndarray) -> np.ndarray:
    """J (..., 6, n) from the joint axes e and origins O (..., n, 3) and the tool's origin
    p (..., 3): the columns of `tool_jacobian`."""
    eT = np.swapaxes(e, -1, -2)
    J = np.concatenate([np.where(revolute, eT, 0.0),                       # w: e_j or 0
                        np.where(revolute, np.swapaxes(_cross(e, p[..., None, :] - O), -1, -2),
                                 eT)], axis=-2)                 # v: e_j x (p - O_j) or e_j
    return np.where(moves, J, 0.0)


def _jacobian(model, kin) -> np.ndarray:
    """`tool_jacobian` from forward kinematics `kin` already at hand."""
    return _jacobian_of(kin.joint_axes, kin.joint_origins, kin.end_effector[:3, 3],
                        np.asarray(model.is_revolute, dtype=bool), _tool_ancestors(model))


def tool_jacobian(model, q) -> np.ndarray:
    """Geometric Jacobian of the last link's frame, (6, n), base frame.

    Rows: angular velocity (rad/s per unit rate), then the velocity of the frame's
    origin p (m/s per unit rate). Column j: [e_j; e_j x (p - O_j)] for a revolute
    joint, [0; e_j] for a prismatic one, zero for a joint that does not move the last
    link (another branch of a tree). q: (n,) rad / m.
    """
    return _jacobian(model, forward_kinematics(model, q))


def tool_jacobian_derivative(model, q) -> tuple[np.ndarray, np.ndarray]:
    """The tool Jacobian J (6, n) at q (n,), rad / m, and its derivative H (6, n, n),
    H[:, j, k] = dJ[:, j] / dq_k (per rad or m; module docstring): Jdot = H qd, and the
    tool's angular acceleration and the acceleration of its origin are J qdd + Jdot qd
    (rad/s^2, m/s^2), base frame. q may be (S, n), S configurations at once: then J is
    (S, 6, n) and H (S, 6, n, n)."""
    m = model_of(model)
    q = np.asarray(q, dtype=float)
    Q = [joint_vector(qi, m.n, "q") for qi in (q if q.ndim == 2 else [q])]
    kins = [forward_kinematics(m, qi) for qi in Q]
    e = np.array([k.joint_axes for k in kins])                           # (S, n, 3)
    O = np.array([k.joint_origins for k in kins])
    p = np.array([k.end_effector[:3, 3] for k in kins])                 # (S, 3)
    revolute = np.asarray(m.is_revolute, dtype=bool)
    moves = _tool_ancestors(m)
    J = _jacobian_of(e, O, p, revolute, moves)
    D = (p[:, None, :] - O)[:, None, :, :]                 # [s, ., j] = p - O_j
    ek, ej = e[:, :, None, :], e[:, None, :, :]           # [s, k, .], [s, ., j]
    before = _strict_ancestors(m)[None, :, :, None]        # [s, k, j]: k before j
    turns = before & revolute[None, :, None, None]         # a revolute k before j
    # the turn of joint j's axis by joint k: e_k x e_j (column j's angular rows)
    de = np.where(turns, _cross(ek, ej), 0.0)
    # revolute j, k before it: (e_k x e_j) x (p - O_j) + e_j x (e_k x (p - O_j));
    # k after it (or j itself): e_j x dp/dq_k, dp/dq_k = J_v[:, k]
    dv_before = _cross(de, D) + _cross(ej, np.where(turns, _cross(ek, D), 0.0))
    Jv = np.swapaxes(J[:, 3:], -1, -2)[:, :, None, :]    # [s, k, .]
    dv_after = np.where(~before, _cross(ej, Jv), 0.0)
    rev_j = revolute[None, None, :, None]
    dv = np.where(rev_j, dv_before + dv_after, de)       # prismatic j: e_j'
    H = np.concatenate([np.where(rev_j, de, 0.0), dv], axis=-1).transpose(0, 3, 2, 1)
    H = np.where(moves[None, None, :, None] & moves[None, None, None, :], H, 0.0)
    return (J, H) if q.ndim == 2 else (J[0], H[0])


def wrap_revolute(model, q) -> np.ndarray:
    """q (n,) with every revolute joint that has no limits turned into [-pi, pi) (the
    same frames; for sliders and run targets, whose unlimited range is +-180 deg)."""
    q = np.array(q, dtype=float)
    lo, hi = model.joint_limits.T
    free = np.asarray(model.is_revolute, dtype=bool) & ~np.isfinite(lo) & ~np.isfinite(hi)
    q[free] = (q[free] + np.pi) % (2 * np.pi) - np.pi
    return q


def rotation_error(R_target: np.ndarray, R: np.ndarray) -> np.ndarray:
    """(3,) rotation vector (base frame, rad) of R_target R^T: the turn from R to R_target."""
    Re = np.asarray(R_target, dtype=float) @ np.asarray(R, dtype=float).T
    w = 0.5 * np.array([Re[2, 1] - Re[1, 2], Re[0, 2] - Re[2, 0], Re[1, 0] - Re[0, 1]])
    s, c = np.linalg.norm(w), 0.5 * (np.trace(Re) - 1.0)
    angle = np.arctan2(s, np.clip(c, -1.0, 1.0))
    if s > 1e-12:
        return w * (angle / s)
    if c > 0.0:  # no turn
        return w
    # a half turn: the axis from the symmetric part (R = 2 a a^T - 1)
    B = 0.5 * (Re + np.eye(3))
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / np.sqrt(max(B[k, k], 1e-300))
    return np.pi * axis / np.linalg.norm(axis)


def damped_least_squares_step(J: np.ndarray, r: np.ndarray, damping: float
                              ) -> tuple[np.ndarray, np.ndarray]:
    """One DLS step for the task error r, (m,), with the task Jacobian J, (m, n).

    dq = J^T (J J^T + lambda^2 1)^-1 r = V diag(s / (s^2 + lambda^2)) U^T r.
    Returns (dq (n,), s (min(m, n),) J's singular values, descending).
    """
    U, s, Vt = np.linalg.svd(J, full_matrices=False)
    dq = Vt.T @ ((s / (s * s + damping * damping)) * (U.T @ r))
    return dq, s


@dataclass(frozen=True)
class IKResult:
    """What `solve_position` found.

    q               : (n,) the joints at the end, within their limits, rad / m
    reached         : the target was met within the tolerances
    residual        : |p_target - p|, m (the tool stops this short: out of reach)
    rotation_residual: rad, angle of R_target R^T (0 when no orientation was asked)
    singular_values : the task Jacobian's singular values at q, descending
    iterations      : DLS steps taken
    at_limits       : joints (0-based) on one of their limits at the end
    """

    q: np.ndarray
    reached: bool
    residual: float
    rotation_residual: float
    singular_values: np.ndarray
    iterations: int
    at_limits: tuple[int, ...]

    @property
    def smallest_singular_value(self) -> float:
        return float(self.singular_values[-1]) if len(self.singular_values) else 0.0

    @property
    def manipulability(self) -> float:
        """Yoshikawa's measure sqrt(det(J J^T)): the product of the singular values."""
        return float(np.prod(self.singular_values))

    def near_singular(self, threshold: float = NEAR_SINGULAR) -> bool:
        return self.smallest_singular_value < threshold


def _task(model, q, target_point, target_rotation):
    """Task error r and Jacobian rows at q."""
    kin = forward_kinematics(model, q)
    T = kin.end_effector
    dp = target_point - T[:3, 3]
    J = _jacobian(model, kin)
    if target_rotation is None:
        return dp, J[3:], 0.0
    dw = rotation_error(target_rotation, T[:3, :3])
    return np.concatenate([dw, dp]), J, float(np.linalg.norm(dw))


def solve_position(model, q0, target_point, target_rotation=None, *, damping: float = DAMPING,
                   max_iterations: int = 100, limits: bool = True, tolerance: float = 1e-10,
                   max_step: float = MAX_STEP) -> IKResult:
    """Move the last link's frame origin to `target_point` (3,), m, base frame (and its
    orientation to `target_rotation` (3, 3) if given) by DLS steps from q0 (n,).

    damping        : the least lambda of the DLS step (grows while steps fail)
    limits         : clamp the joints to `model.joint_limits` after every step
    tolerance      : reached when |dp| <= tolerance (m) and the angle <= tolerance (rad)
    max_step       : the largest change of one joint in one step, rad / m
    Stops when reached, after `max_iterations` steps, or when no step lowers the error
    (out of reach, or held by a limit). Never raises for an unreachable target.
    """
    n = model_of(model).n
    q0 = joint_vector(q0, n, "q0")
    target_point = finite_array(target_point, (3,), "target_point")
    if target_rotation is not None:
        target_rotation = finite_array(target_rotation, (3, 3), "target_rotation")
    lo, hi = (model.joint_limits.T if limits
              else (np.full(n, -np.inf), np.full(n, np.inf)))
    q = np.clip(q0, lo, hi)
    r, J, angle = _task(model, q, target_point, target_rotation)
    with np.errstate(over="ignore"):
        cost = finite_result(float(r @ r), "the squared distance to the target")
    lam = damping
    it = 0
    for it in range(1, max_iterations + 1):
        if np.linalg.norm(r[-3:]) <= tolerance and (len(r) == 3 or np.linalg.norm(r[:3])
                                                    <= tolerance):
            it -= 1
            break
        # joints on a limit and pushed outward leave the step (projected DLS)
        free = np.ones(n, dtype=bool)
        for _ in range(n):
            dq, _s = damped_least_squares_step(J[:, free], r, lam)
            full = np.zeros(n)
            full[free] = dq
            blocked = free & (((q <= lo) & (full < 0)) | ((q >= hi) & (full > 0)))
            if not blocked.any():
                break
            free &= ~blocked
        biggest = float(np.max(np.abs(full))) if n else 0.0
        if biggest > max_step:
            full *= max_step / biggest
        q_new = np.clip(q + full, lo, hi)
        r_new, J_new, angle_new = _task(model, q_new, target_point, target_rotation)
        cost_new = float(r_new @ r_new)
        if cost_new < cost:  # Levenberg-Marquardt: keep the step, trust the model more
            stalled = cost - cost_new <= 1e-15 * max(cost, 1e-300) or not np.any(q_new != q)
            q, r, J, angle, cost = q_new, r_new, J_new, angle_new, cost_new
            lam = max(damping, lam / 3.0)
            if stalled:
                break
        else:
            lam *= 4.0
            if lam > 1e6:  # no step lowers the error: as close as it gets
                break
    residual = float(np.linalg.norm(r[-3:]))
    reached = residual <= tolerance and angle <= tolerance
    s = np.linalg.svd(J, compute_uv=False)
    span = 1e-9 * max(1.0, float(np.max(np.abs(np.where(np.isfinite(hi), hi, 0.0)))))
    at_limits = tuple(int(j) for j in np.flatnonzero((q <= lo + span) | (q >= hi - span)))
    return IKResult(q=q, reached=bool(reached), residual=residual, rotation_residual=angle,
                    singular_values=s, iterations=it, at_limits=at_limits)
