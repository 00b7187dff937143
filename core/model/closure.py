"""Closing a model's loops: the residual and Jacobian of its closure rows, assembly by
damped Newton, and what compiling a model with loops derives (the active rows, the
closed home pose, the mobility).

A loop's closure is a few scalar rows Phi(q) = 0 (`core.kernels.loops`). Redundant rows
(a planar loop seen in 3D, the Bricard) are allowed: rows whose Jacobian vanishes
identically are dropped when the model is compiled (`close_loops`), and the solvers
tolerate rows that depend on others (the mobility comes from the rank, not from
counting rows). The public functions on top are `core.algorithms.loops`.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import LoopClosureError, MechanismError
from ..kernels.data import thread_workspace
from ..kernels.loops import closure_at
from .arguments import joint_vector
from .model import Model, with_chains
from .parts import chains_with_q

#: Rows whose Jacobian is below this (relative to the largest entry) at every sampled
#: pose are structurally zero (the out-of-plane rows of a planar loop).
STRUCTURAL_ZERO = 1e-12
#: Relative singular-value threshold of the rank (mobility, determinacy).
RANK_TOL = 1e-9
#: Most damped-Newton iterations of an assembly.
MAX_ASSEMBLY_ITERATIONS = 200


def closure_values(model: Model, q, qd=None, want: int = 1
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Phi (m,), J (m, nv), gamma (m,)) at (q, qd); only what `want` asks for is filled
    (1: Phi, 2: J, 4: gamma; zeros otherwise)."""
    k = model.kernel
    q = joint_vector(q, k.nq, "q")
    qd = np.zeros(k.nv) if qd is None else joint_vector(qd, k.nv, "qd")
    Phi, J, gamma = np.zeros(k.m), np.zeros((k.m, k.nv)), np.zeros(k.m)
    if k.m:
        closure_at(k.F, k.I, thread_workspace(k), q, qd, want, Phi, J, gamma)
    return Phi, J, gamma


def numerical_rank(A: np.ndarray, tol: float = RANK_TOL) -> int:
    """Rank of A by its singular values (relative threshold; 0 for an empty matrix)."""
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > tol * max(1.0, s[0])))


def loop_of_row(model: Model, r: int) -> str:
    """The name of the loop that active row r belongs to."""
    return model.loops[int(model.kernel.views.row_loop[r])].name


def _wrap_angles(q, guess, revolute):
    """Angles (the entries of q where `revolute`) back onto the sheet of the guess
    (within pi of it); an angle that is already there is left bit for bit as it is."""
    out = q.copy()
    turns = np.round((out - guess) / (2 * math.pi))
    moved = revolute & (turns != 0)
    out[moved] -= 2 * math.pi * turns[moved]
    return out


def assemble_pose(model: Model, q, independent=None, tolerance: float | None = None,
                  max_iterations: int = MAX_ASSEMBLY_ITERATIONS) -> np.ndarray:
    """The closed pose nearest to the guess q, holding the independent joints exactly
    (`core.algorithms.loops.assemble` documents it)."""
    k = model.kernel
    n = k.n
    q0 = joint_vector(q, k.nq, "q").copy()
    if k.m == 0:
        return q0
    tol = model.tolerance if tolerance is None else tolerance
    held = set(model.independent if independent is None else independent)
    # the rates that move (a joint of several degrees of freedom has several)
    free = np.array(model.rates_of([j for j in range(n) if j not in held]), dtype=int)
    if free.size == 0:
        Phi = closure_values(model, q0)[0]
        if np.max(np.abs(Phi)) > tol:
            r = int(np.argmax(np.abs(Phi)))
            raise LoopClosureError(
                f"the loops cannot close with every joint held: residual "
                f"{abs(Phi[r]):.3g}", loop=loop_of_row(model, r), residual=float(abs(Phi[r])))
        return q0
    revolute = model.value_is_angle  # per entry of q
    qk = q0.copy()
    lam = 1e-6
    Phi = closure_values(model, qk)[0]
    err = float(np.max(np.abs(Phi)))
    if err <= tol:
        return q0  # closed already: the guess itself, bit for bit
    # a step never turns a joint by more than this (rad) or slides it by more than
    # this times the mechanism's size (m): stays on the branch of the guess
    size = max(1e-3, float(np.max(np.abs(k.views.dh[:, :2]))) if n else 1.0)
    placed = [j for j, t in enumerate(model.joint_types) if not t.is_dh]
    if placed:  # joints placed by xyz rather than DH lengths
        size = max(size, float(np.max(np.abs(k.views.place_p[placed]))))
    max_step = np.where(model.rate_is_angular[free], 0.3, 0.3 * size)
    polish = 2  # Newton converges quadratically: two more steps once within tol
    for _ in range(max_iterations):
        if err <= tol:
            if polish == 0 or err == 0.0:
                return _wrap_angles(qk, q0, revolute)
            polish -= 1
        Jf = closure_values(model, qk, want=2)[1][:, free]
        # minimum-norm damped step: dq = -Jf^T (Jf Jf^T + lam I)^-1 Phi
        JJ = Jf @ Jf.T
        scale = max(1.0, float(np.trace(JJ)) / max(1, JJ.shape[0]))
        dq = -Jf.T @ np.linalg.solve(JJ + lam * scale * np.eye(JJ.shape[0]), Phi)
        big = np.max(np.abs(dq) / max_step)
        if big > 1.0:
            dq /= big
        if k.nq == k.nv:
            trial = qk.copy()
            trial[free] += dq
        else:  # quaternions turn by exp(dq)
            step = np.zeros(k.nv)
            step[free] = dq
            trial = model.moved_by(qk, step)
        Phi_t = closure_values(model, trial)[0]
        err_t = float(np.max(np.abs(Phi_t)))
        if err_t < err:
            qk, Phi, err = trial, Phi_t, err_t
            lam = max(lam / 10.0, 1e-15)
        else:
            lam *= 10.0
            if lam > 1e8:
                break
    if err <= tol:
        return _wrap_angles(qk, q0, revolute)
    r = int(np.argmax(np.abs(Phi)))
    raise LoopClosureError(
        f"cannot be closed from the given joint values: residual {abs(Phi[r]):.3g} "
        f"(m or rad) left after {max_iterations} damped Newton steps; check the link "
        "lengths and the loop's points, or start nearer a closed pose",
        loop=loop_of_row(model, r), residual=float(abs(Phi[r])))


def _structural_rows(model: Model) -> tuple[list[int], list[int]]:
    """The rows whose Jacobian is not identically zero, sampled at the guess and at
    random poses near it (the out-of-plane rows of a planar loop are dropped)."""
    rng = np.random.default_rng(12345)
    q_home = model.q_home
    angular = model.rate_is_angular
    keep = np.zeros(model.kernel.m, dtype=bool)
    for s in range(4):
        q = q_home.copy()
        if s:
            q = model.moved_by(q, np.where(angular, rng.uniform(-1.0, 1.0, angular.size),
                                           rng.uniform(-0.1, 0.1, angular.size)))
        J = closure_values(model, q, want=2)[1]
        big = max(1e-300, float(np.max(np.abs(J)))) if J.size else 1.0
        keep |= np.max(np.abs(J), axis=1) > STRUCTURAL_ZERO * big
    v = model.kernel.views
    rows = np.flatnonzero(keep)
    return [int(v.row_loop[r]) for r in rows], [int(v.row_kind[r]) for r in rows]


def close_loops(model: Model, independent_field: str = "actuated") -> Model:
    """The compiled model of `model` (every raw row of its loops active, its joint values
    a guess) with its loops closed: the structurally zero rows dropped, the pose closed
    holding the independent joints, the mobility from the rank, the closed values in its
    chains. `independent_field` names the description's field that chose the independent
    joints, for the messages. Raises LoopClosureError / MechanismError."""
    all_rows = model
    names = model.joint_names
    # 1. closure must hold in every row, structurally zero ones included (an offset
    #    out of the plane of a planar loop cannot close)
    q_guess = model.q_home
    row_loop, row_kind = _structural_rows(all_rows)
    active = with_chains(model, model.chains, row_loop, row_kind)
    q = assemble_pose(active, q_guess)
    Phi_all = closure_values(all_rows, q)[0]
    if Phi_all.size and np.max(np.abs(Phi_all)) > 10 * model.tolerance:
        r = int(np.argmax(np.abs(Phi_all)))
        raise LoopClosureError(
            f"cannot be closed: a constraint that no joint can change is off by "
            f"{abs(Phi_all[r]):.3g} (m or rad); for a planar loop check that both points "
            "lie in the plane of motion", loop=loop_of_row(all_rows, r),
            residual=float(abs(Phi_all[r])))
    # 2. mobility from the rank; the independent joints must fix the pose
    J = closure_values(active, q, want=2)[1]
    rank = numerical_rank(J)
    dof = model.nv - rank
    if dof <= 0:
        raise MechanismError("the mechanism has no mobility: its loops lock every joint "
                             f"(rank of the loop Jacobian {rank} = {model.nv} joint rates)",
                             field="loop")
    independent = list(model.independent)
    held = model.rates_of(independent)  # their rates
    dependent = [r for r in range(model.nv) if r not in set(held)]
    if numerical_rank(J[:, dependent]) < len(dependent):
        missing = dof - len(held)
        hint = _suggest_independent(J, names, model.rate_joint)
        if missing > 0:
            reason = (f"the mechanism has {dof} degree(s) of freedom but only "
                      f"{len(independent)} independent joint(s) are given "
                      f"({_names(independent, names) or 'none'}); {hint}")
        else:
            reason = (f"the independent joints {_names(independent, names)} do "
                      f"not fix the pose (the remaining joints can still move); {hint}")
        raise LoopClosureError(reason, field=independent_field)
    if len(held) > dof:
        raise LoopClosureError(
            f"{len(independent)} independent joints are given but the mechanism has only "
            f"{dof} degree(s) of freedom ({_names(independent, names)})",
            field=independent_field)
    # 3. the closed values become the links' values
    warnings = list(model.warnings)
    moved = np.abs(q - q_guess)
    if np.max(moved) > model.tolerance:
        e = int(np.argmax(moved))
        warnings.append(f"closing the loops moved joint {names[model.value_joint[e]]!r} by "
                        f"{moved[e]:.3g} (rad or m) from the file's value")
    return with_chains(model, chains_with_q(model.chains, q), row_loop, row_kind, dof=dof,
                       warnings=tuple(warnings))


def _names(indices, names) -> str:
    return ", ".join(repr(names[i]) for i in indices)


def _suggest_independent(J, names, rate_joint) -> str:
    """Which joints to hold: the pivots of a column-pivoted QR of the null space."""
    import scipy.linalg  # only for this message: not at every start (about 0.1 s)
    # null-space basis of J; independent coordinates = rows of the basis that are
    # linearly independent (column pivoting on its transpose)
    u, s, vt = np.linalg.svd(J)
    rank = int(np.sum(s > RANK_TOL * max(1.0, s[0] if s.size else 1.0)))
    N = vt[rank:].T  # (n, dof)
    if N.shape[1] == 0:
        return "the loops lock the mechanism"
    _, _, piv = scipy.linalg.qr(N.T, pivoting=True)
    chosen = sorted({int(rate_joint[p]) for p in piv[:N.shape[1]]})
    return f"for example hold {_names(chosen, names)}"
