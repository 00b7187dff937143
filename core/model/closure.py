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

from typing import NamedTuple

from ..errors import ArgumentError, ArgumentTypeError, LoopClosureError, MechanismError
from ..kernels.data import thread_workspace
from ..kernels.loops import closure_at
from .arguments import joint_vector
from .model import Model, with_chains
from .parts import JointType, chains_with_q, tolerance_floor

#: Rows whose Jacobian is below this (relative to the largest entry) at every sampled
#: pose are structurally zero (the out-of-plane rows of a planar loop).
STRUCTURAL_ZERO = 1e-12
#: Relative singular-value threshold of the rank (mobility, determinacy).
RANK_TOL = 1e-9
#: Most damped-Newton iterations of one solve of an assembly.
MAX_ASSEMBLY_ITERATIONS = 200
#: Largest move of a held joint per continuation step: rad, or this many times the
#: mechanism's largest DH length for a prismatic joint.
CONTINUATION_STEP = 0.1
#: A continuation step below this share of the path means that the branch ends there.
MIN_CONTINUATION_STEP = 1e-6
#: Where Newton over the independent joints cannot close the loops from the guess (it
#: stops at a stationary point of |Phi|^2, as at the crank angle antipodal to a closed
#: pose), it starts again this far to either side: rad, or this many times the
#: mechanism's largest DH length.
NUDGE = 0.1
#: Most Newton solves of one continuation.
MAX_CONTINUATION_SOLVES = 400


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


def _size(model: Model) -> float:
    """The mechanism's largest DH length or joint placement (m, at least 1 mm): the scale
    of a sliding rate's move, as 1 rad is a turning one's."""
    v = model.kernel.views
    size = max(1e-3, float(np.max(np.abs(v.dh[:, :2]))))
    placed = [j for j, t in enumerate(model.joint_types) if not t.is_dh]
    if placed:  # joints placed by xyz rather than DH lengths
        size = max(size, float(np.max(np.abs(v.place_p[placed]))))
    return size


def _rate_scale(model: Model, rates) -> np.ndarray:
    """Per rate in `rates`: 1 (rad) for a turning rate, `_size` (m) for a sliding one."""
    return np.where(model.rate_is_angular[rates], 1.0, _size(model))


def _pose_text(model: Model, q) -> str:
    """q as "name = value unit" per joint: degrees for revolute joints, m for prismatic,
    the values themselves for a joint of several degrees of freedom."""
    iq = model.kernel.views.iq
    out = []
    for j, (name, kind) in enumerate(zip(model.joint_names, model.joint_types)):
        v = q[int(iq[j]):int(iq[j]) + kind.nq]
        if kind is JointType.REVOLUTE:
            out.append(f"{name} = {math.degrees(v[0]):.6g} deg")
        elif kind is JointType.PRISMATIC:
            out.append(f"{name} = {v[0]:.6g} m")
        else:
            out.append(f"{name} = ({', '.join(f'{x:.6g}' for x in v)})")
    return ", ".join(out)


def _moved(model: Model, q, rates, dq) -> np.ndarray:
    """q moved by dq along `rates` (the others still): q + dq there when nq == nv, else
    quaternions turned by exp (`Model.moved_by`)."""
    if model.kernel.nq == model.kernel.nv:
        out = np.array(q, dtype=float)
        out[rates] += dq
        return out
    step = np.zeros(model.kernel.nv)
    step[rates] = dq
    return model.moved_by(q, step)


def checked_tolerance(model: Model, tolerance) -> float:
    """The assembly tolerance (m, rad): the model's for None, else `tolerance` if floating
    point can meet it (at least `tolerance_floor` of the model's chains and loops)."""
    if tolerance is None:
        return model.tolerance
    try:
        tol = float(tolerance)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"tolerance must be a number (m and rad), got "
                                f"{tolerance!r}") from None
    floor = tolerance_floor(model.chains, model.loops)
    if not (math.isfinite(tol) and tol >= floor):
        raise ArgumentError(f"tolerance must be a finite number >= {floor:.2g} (m and rad), "
                            f"what floating point can meet on this model, got {tolerance!r}")
    return tol


class _Loops:
    """Phi and J of one model at poses that are already float64 vectors of nq values:
    `closure_values` without the argument checks, for the inner loops of assembly."""

    def __init__(self, model: Model) -> None:
        k = model.kernel
        self.m, self.nv = k.m, k.nv
        self.kernel_args = (k.F, k.I, thread_workspace(k))
        self.qd = np.zeros(k.nv)
        self.Phi, self.J, self.gamma = np.zeros(k.m), np.zeros((k.m, k.nv)), np.zeros(k.m)

    def residual(self, q) -> np.ndarray:
        Phi = np.zeros(self.m)
        closure_at(*self.kernel_args, q, self.qd, 1, Phi, self.J, self.gamma)
        return Phi

    def jacobian(self, q) -> np.ndarray:
        J = np.zeros((self.m, self.nv))
        closure_at(*self.kernel_args, q, self.qd, 2, self.Phi, J, self.gamma)
        return J


class _Newton(NamedTuple):
    """What a damped Newton solve ended with."""
    q: np.ndarray     # the last pose (nq,)
    Phi: np.ndarray   # its residual (m,)
    err: float        # max |Phi|, m or rad
    steps: int        # steps taken (0: it could not leave its start)
    full: bool        # every step a full Newton step (none cut to the largest step,
                      # none rejected): the solve never searched


def _newton(model: Model, q, free, tol: float, max_iterations: int, Phi=None,
            strict: bool = False, polish: int = 1) -> _Newton:
    """Damped Newton (Levenberg-Marquardt) on Phi(q) = 0 over the joints `free` from q:
    each step the minimum-norm one (prismatic joints scaled by the mechanism's size),
    at most 0.3 rad or 0.3 sizes per joint; `polish` more steps once within tol. With
    fewer joints than independent rows it is Gauss-Newton on |Phi|^2 (the LM step is
    both). `strict`: give up at the first step that is not a full one (the caller only
    wants a solve that never searched)."""
    loops = _Loops(model)
    scale = _rate_scale(model, free)  # a rate's move in "rad": dq / scale
    max_step = 0.3 * scale
    qk = np.array(q, dtype=float)
    if Phi is None:
        Phi = loops.residual(qk)
    err = float(np.max(np.abs(Phi)))
    lam, steps, full = 1e-6, 0, True
    eye = np.eye(len(Phi))
    for _ in range(max_iterations):
        if err <= tol:
            if polish == 0 or err == 0.0:
                break
            polish -= 1
        Jf = loops.jacobian(qk)[:, free] * scale
        # minimum-norm damped step: dq = -Jf^T (Jf Jf^T + lam I)^-1 Phi
        JJ = Jf @ Jf.T
        mu = lam * max(1.0, float(np.trace(JJ)) / max(1, JJ.shape[0]))
        dq = -scale * (Jf.T @ np.linalg.solve(JJ + mu * eye, Phi))
        big = float(np.max(np.abs(dq) / max_step))
        if big > 1.0:
            dq /= big
            full = False
            if strict:
                break
        trial = _moved(model, qk, free, dq)
        Phi_t = loops.residual(trial)
        err_t = float(np.max(np.abs(Phi_t)))
        # a step is taken when |Phi|^2 descends (the least-squares sense: max |Phi|
        # may rise on the way); closed, when max |Phi| does
        better = err_t < err if err <= tol else float(Phi_t @ Phi_t) < float(Phi @ Phi)
        if better:
            qk, Phi, err = trial, Phi_t, err_t
            steps += 1
            lam = max(lam / 10.0, 1e-15)
        elif err <= tol:
            break  # closed to the last digits: no step can do better
        else:
            full = False
            if strict:
                break
            lam *= 10.0
            if lam > 1e8:
                break
    return _Newton(qk, Phi, err, steps, full)


def _orientation(model: Model, q, free, frame=None) -> tuple[int, np.ndarray | None]:
    """(the sign of det(U^T J_free(q)), U): the orientation of the dependent joints'
    Jacobian in the frame U of its column space (from q when `frame` is None; pass the
    U returned to compare another pose; None for a square J_free, whose own determinant
    is used). It changes only through a singular pose, where two assembly modes meet,
    so two closed poses of the same independent values and opposite signs lie on
    different branches. 0 where it is singular or the dependent joints are not fixed
    (more of them than rows)."""
    Jf = _Loops(model).jacobian(q)[:, free]
    if Jf.shape[0] == Jf.shape[1]:  # square: det J_free itself, singular below RANK_TOL
        det = float(np.linalg.det(Jf))  # of the product of its column lengths (Hadamard)
        size = float(np.prod(np.linalg.norm(Jf, axis=0)))
        return (0 if not abs(det) > RANK_TOL * size else int(np.sign(det))), None
    if frame is None:
        if Jf.shape[1] > Jf.shape[0]:
            return 0, None
        u, sv, _ = np.linalg.svd(Jf)
        if sv[-1] <= RANK_TOL * max(1.0, sv[0]):
            return 0, None
        frame = u[:, :Jf.shape[1]]
    M = frame.T @ Jf
    sv = np.linalg.svd(M, compute_uv=False)
    if sv[-1] <= RANK_TOL * max(1.0, sv[0]):
        return 0, frame
    return int(np.sign(np.linalg.det(M))), frame


class _BranchEnds(Exception):
    """A continuation could not go on: its last closed pose `q`, a share `s` of the way."""

    def __init__(self, q: np.ndarray, s: float, exhausted: bool) -> None:
        super().__init__("the branch ends")
        self.q, self.s, self.exhausted = q, s, exhausted


def _quaternion_blocks(model: Model, joints) -> list[slice]:
    """The entries of q that hold the unit quaternions of `joints` (a spherical joint's
    four, a free joint's last four)."""
    iq = model.kernel.views.iq
    out = []
    for j in joints:
        kind = model.joint_types[j]
        if kind is JointType.SPHERICAL:
            out.append(slice(int(iq[j]), int(iq[j]) + 4))
        elif kind is JointType.FREE:
            out.append(slice(int(iq[j]) + 3, int(iq[j]) + 7))
    return out


def _continue(model: Model, q: np.ndarray, target: np.ndarray, held, free, tol: float,
              max_iterations: int, max_step: float = CONTINUATION_STEP) -> np.ndarray:
    """Continuation: from the closed pose q (nq,), move the held joints to their values
    in `target` (nq,) along the straight path between (quaternions: the normalised
    chord, nlerp, the target's sign taken nearer the start), closing the loops over the
    rates `free` at each step, and return the closed pose at the end.

    Each step starts from the previous closed pose moved along the branch's tangent,
    dq_free = -J_free^+ J_held d(held) (first-order predictor; with quaternions held,
    from the previous pose itself, whose first Newton step is that predictor to first
    order). A step is kept when its Newton solve closes the loops with full steps and
    the dependent joints' Jacobian keeps its orientation (`_orientation`: so it cannot
    have jumped to another branch), else halved; a step below MIN_CONTINUATION_STEP of
    the path means the branch ends there (a singular pose, or a turning point of the
    held joints): raises _BranchEnds."""
    values = np.array(model.values_of(held), dtype=int)
    rates = np.array(model.rates_of(held), dtype=int)
    quaternions = _quaternion_blocks(model, held)
    start, end = q[values].copy(), np.array(target, dtype=float)[values]
    where = np.full(model.kernel.nq, -1)
    where[values] = np.arange(values.size)
    for block in quaternions:  # the nearer of the target's two signs
        e = where[block]
        if float(start[e] @ end[e]) < 0.0:
            end[e] = -end[e]
    delta = end - start
    # the path's length in steps: rad for angles (and twice a quaternion's entries, about
    # the angle they turn), sizes for lengths
    reach = np.where(model.value_is_angle[values], 1.0, _size(model))
    for block in quaternions:
        reach[where[block]] = 0.5
    span = float(np.max(np.abs(delta) / (max_step * reach), initial=0.0))
    if span == 0.0:
        return q
    scalar = not quaternions  # the tangent predictor needs d(held) as rates

    def on_path(s: float) -> np.ndarray:
        v = end.copy() if s == 1.0 else start + s * delta
        for block in quaternions:
            e = where[block]
            v[e] /= np.linalg.norm(v[e])
        return v

    s, ds, tries = 0.0, min(1.0, 1.0 / span), 0
    sign, frame = _orientation(model, q, free)
    while s < 1.0:
        s_next = min(1.0, s + ds)
        guess = q.copy()
        guess[values] = on_path(s_next)
        if scalar:  # predictor: the tangent of the branch, dq_free = -J_free^+ J_held dh
            J = closure_values(model, q, want=2)[1]
            dh = guess[values] - q[values]
            guess = _moved(model, guess, free,
                           -np.linalg.lstsq(J[:, free], J[:, rates] @ dh, rcond=None)[0])
        last = _newton(model, guess, free, tol, max_iterations, strict=True)
        tries += 1
        if last.err <= tol and last.full and (
                sign == 0 or _orientation(model, last.q, free, frame)[0] == sign):
            q, s, ds = last.q, s_next, min(2.0 * ds, 1.0 / span)
            sign, frame = _orientation(model, q, free)  # the frame follows the branch
            continue
        ds /= 2.0
        if ds < MIN_CONTINUATION_STEP or tries > MAX_CONTINUATION_SOLVES:
            raise _BranchEnds(q, s, tries > MAX_CONTINUATION_SOLVES)
    return q


def _loop_losing_rank(model: Model, q, cols) -> str:
    """The loop of the row that the loop Jacobian's columns `cols` come nearest to losing
    at q (the largest entry of the left singular vector of their smallest singular
    value)."""
    Jc = closure_values(model, q, want=2)[1][:, cols]
    u, sv, _ = np.linalg.svd(Jc)
    return loop_of_row(model, int(np.argmax(np.abs(u[:, len(sv) - 1]))))


def _branch_ends(model: Model, free, end: _BranchEnds) -> str:
    """Where a continuation stopped (the closed pose end.q, a share end.s of the way from
    the guess's branch to its independent values), in words."""
    where = "the guess's branch, followed from the closed pose its dependent joints reach, "
    if end.exhausted:
        return where + (f"took more than {MAX_CONTINUATION_SOLVES} steps and stopped "
                        f"{end.s:.0%} of the way, at {_pose_text(model, end.q)}")
    Jf = closure_values(model, end.q, want=2)[1][:, free]
    sv = np.linalg.svd(Jf, compute_uv=False)
    cond = float(sv[-1] / sv[0]) if len(free) <= Jf.shape[0] and sv[0] > 0 else 0.0
    return where + (f"ends at a singular pose {end.s:.0%} of the way, where the "
                    f"independent joints no longer fix the others ({_pose_text(model, end.q)}; "
                    f"smallest singular value of the dependent joints' Jacobian {cond:.2g} "
                    f"of its largest)")


def _singular_at(model: Model, q, cols) -> tuple[int, int]:
    """(rank of the loop Jacobian's columns `cols` at q, their largest rank at three
    random poses within 0.01 rad (or 0.01 sizes) of q)."""
    rng = np.random.default_rng(7)
    every = np.arange(model.nv)
    rank = numerical_rank(closure_values(model, q, want=2)[1][:, cols])
    near = 0
    for _ in range(3):
        p = _moved(model, q, every, 1e-2 * _rate_scale(model, every)
                   * rng.uniform(-1, 1, every.size))
        near = max(near, numerical_rank(closure_values(model, p, want=2)[1][:, cols]))
    return rank, near


def _unclosable(model: Model, q0, free, holding: _Newton, max_iterations: int,
                end: _BranchEnds | None = None):
    """The LoopClosureError of an assembly from the guess q0 that could not close the
    loops: `holding` is Newton from the guess with the independent joints held (its
    residual is how far the loops stay open at their values), `end` where the guess's
    branch ended, if it was followed. A guess at which the Jacobian of the dependent
    joints `free` loses rank is said to be a singular pose."""
    r = int(np.argmax(np.abs(holding.Phi)))
    residual = float(abs(holding.Phi[r]))
    branch = "" if end is None else f"; {_branch_ends(model, free, end)}"
    rank, near = _singular_at(model, q0, free)
    if rank < near:
        names = model.joint_names
        return LoopClosureError(
            f"cannot be closed from the given joint values: the guess is a singular pose "
            f"({_pose_text(model, q0)}): the Jacobian of the dependent joints "
            f"({_names(sorted({int(model.rate_joint[v]) for v in free}), names)}) has "
            f"rank {rank} there and "
            f"{near} at poses nearby, and damped Newton could not close the loops from it "
            f"(residual {residual:.3g} m or rad left){branch}; move a dependent joint off "
            f"it", loop=loop_of_row(model, r), residual=residual)
    return LoopClosureError(
        f"cannot be closed from the given joint values: residual {residual:.3g} "
        f"(m or rad) left after {max_iterations} damped Newton steps{branch}; check the "
        "link lengths and the loop's points, or start nearer a closed pose",
        loop=loop_of_row(model, r), residual=residual)


def _closed_pose(model: Model, q, tol: float) -> _Newton:
    """The pose q (nq,) given as `branch`, as a finished solve; ArgumentError unless its
    loops are closed to tol."""
    q_b = joint_vector(q, model.kernel.nq, "branch").copy()
    Phi_b = closure_values(model, q_b)[0]
    err_b = float(np.max(np.abs(Phi_b)))
    if not err_b <= tol:
        raise ArgumentError(f"branch must be a closed pose (the loops closed to the "
                            f"tolerance {tol:.3g}), its residual is {err_b:.3g} m or rad")
    return _Newton(q_b, Phi_b, err_b, 0, True)


def assemble_pose(model: Model, q, independent=None, tolerance: float | None = None,
                  max_iterations: int = MAX_ASSEMBLY_ITERATIONS, branch=None) -> np.ndarray:
    """The closed pose on the branch of the guess q with the independent joints at the
    guess's values (`core.algorithms.loops.assemble` documents it).

    1. The guess's branch: the closed pose `branch` if given (a caller that moves from
       a closed pose, as a drag or an integrator, knows it), else the closed pose that
       the guess's dependent joints reach when only the independent joints move
       (Newton over those; for a drag, the pose dragged from). If they cannot close the
       loops, the closed pose nearest the guess (Newton over every joint).
    2. Damped Newton over the dependent joints from the guess; its result is kept when
       every step was a full Newton step (none cut, none rejected) and the dependent
       joints' Jacobian has the orientation it has at the branch's pose
       (`_orientation`: it flips only through a singular pose, where assembly modes
       meet). A drag of the independent joints ends here.
    3. Else the independent joints are moved from their values at the branch's pose to
       the guess's by continuation (`_continue`), which stays on the branch or says
       where it ends.
    """
    k = model.kernel
    n = k.n
    q0 = joint_vector(q, k.nq, "q").copy()
    if k.m == 0:
        return q0
    tol = checked_tolerance(model, tolerance)
    held = sorted(set(model.independent if independent is None else independent))
    # the rates and values of the held joints, the rates that move (a joint of several
    # degrees of freedom has several of each)
    held_rates = np.array(model.rates_of(held), dtype=int)
    held_values = np.array(model.values_of(held), dtype=int)
    free = np.array(model.rates_of([j for j in range(n) if j not in held]), dtype=int)
    revolute = model.value_is_angle  # per entry of q
    given = None if branch is None else _closed_pose(model, branch, tol)
    Phi = closure_values(model, q0)[0]
    if not held:  # nothing held: the closed pose nearest the guess
        direct = _newton(model, q0, free, tol, max_iterations, Phi)
        if direct.err > tol:
            raise _unclosable(model, q0, free, direct, max_iterations)
        return _wrap_angles(direct.q, q0, revolute)
    if free.size == 0:
        if np.max(np.abs(Phi)) > tol:
            r = int(np.argmax(np.abs(Phi)))
            raise LoopClosureError(
                f"the loops cannot close with every joint held: residual "
                f"{abs(Phi[r]):.3g}", loop=loop_of_row(model, r), residual=float(abs(Phi[r])))
        return q0
    if float(np.max(np.abs(Phi))) <= tol:
        return q0  # closed already: the guess itself, bit for bit
    # 1. the guess's branch: the closed pose given, or the one the guess's dependent
    #    joints reach by moving the independent ones (for a drag, the pose dragged
    #    from) ...
    if given is not None:
        anchor = given
    else:
        anchor = _newton(model, q0, held_rates, tol, max_iterations, Phi, polish=0)
    for side in (1.0, -1.0):  # stuck (a stationary point of |Phi|^2): start beside it
        if anchor.err <= tol:
            break
        nudge = np.zeros(k.nv)
        nudge[held_rates] = side * _rate_scale(model, held_rates) * NUDGE
        anchor = min(anchor, _newton(model, model.moved_by(q0, nudge), held_rates, tol,
                                     max_iterations, polish=0), key=lambda r: r.err)
    # 2. Newton from the guess over the dependent joints, kept if it never searched and
    #    ends with the branch's orientation (it did not jump to another assembly mode)
    direct = _newton(model, q0, free, tol, max_iterations, Phi, strict=True)
    if anchor.err <= tol and direct.err <= tol and direct.full:
        sign, frame = _orientation(model, anchor.q, free)
        if sign != 0 and _orientation(model, direct.q, free, frame)[0] == sign:
            return _wrap_angles(direct.q, q0, revolute)

    def holding() -> _Newton:  # Newton from the guess to its end, for the messages
        return _newton(model, q0, free, tol, max_iterations, Phi)

    # 3. if the independent joints alone cannot close the loops at the guess's dependent
    #    values, the branch is that of the closed pose nearest the guess (every joint
    #    moved, from the guess and then from where the first try ended) ...
    if anchor.err > tol:
        every = np.arange(k.nv)
        first = anchor
        anchor = _newton(model, q0, every, tol, max_iterations, Phi)
        if anchor.err > tol and first.steps:
            anchor = _newton(model, first.q, every, tol, max_iterations, first.Phi)
        if anchor.err > tol:
            raise _unclosable(model, q0, free, holding(), max_iterations)
    # ... continued back to the guess's independent values
    try:
        q = _continue(model, anchor.q, q0, held, free, tol, max_iterations)
    except _BranchEnds as end:
        direct = holding()
        if direct.err > tol or end.exhausted:
            raise _unclosable(model, q0, free, direct, max_iterations, end) from None
        # the loops close at the guess's values, but not on its branch
        raise LoopClosureError(
            f"the loops cannot be closed at the guess's independent joint values on the "
            f"guess's branch: {_branch_ends(model, free, end)}; Newton from the guess "
            f"closes them at {_pose_text(model, direct.q)}, off that path (another "
            f"assembly mode, or the branch's far side): start the guess nearer it",
            loop=_loop_losing_rank(model, end.q, free)) from None
    q[held_values] = q0[held_values]  # bit for bit
    return _wrap_angles(q, q0, revolute)


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
    # 2. mobility and the independent joints. A pose where the loop Jacobian (or its
    #    dependent columns) has a lower rank than at the closed poses nearby (the generic
    #    rank) is singular: a change point, a dead centre. If the independent joints fix
    #    the pose only nearby, not there, that is what is said (not "too few of them");
    #    a singular pose they do fix is kept, with its own mobility, and a warning.
    independent = list(model.independent)
    held = model.rates_of(independent)  # their rates
    dependent = [r for r in range(model.nv) if r not in set(held)]
    J = closure_values(active, q, want=2)[1]
    rank, rank_dep = numerical_rank(J), numerical_rank(J[:, dependent])
    generic, generic_dep, J_near = rank, rank_dep, J
    if rank < J.shape[0] or rank_dep < len(dependent):  # else no pose has more
        generic, generic_dep, J_near = _ranks_nearby(active, q, dependent, J)
    singular = rank < generic or rank_dep < generic_dep
    if model.nv - generic <= 0:
        raise MechanismError("the mechanism has no mobility: its loops lock every joint "
                             f"(rank of the loop Jacobian {generic} = {model.nv} joint rates)",
                             field="loop")
    if rank_dep < len(dependent):
        if singular and generic_dep == len(dependent):
            reason, loop = _singular_pose(active, q, J, dependent, generic, generic_dep)
            raise LoopClosureError(reason, loop=loop)
        dof = model.nv - generic
        missing = dof - len(held)
        hint = _suggest_independent(J_near, names, model.rate_joint)
        if missing > 0:
            reason = (f"the mechanism has {dof} degree(s) of freedom but only "
                      f"{len(independent)} independent joint(s) are given "
                      f"({_names(independent, names) or 'none'}); {hint}")
        else:
            reason = (f"the independent joints {_names(independent, names)} do "
                      f"not fix the pose (the remaining joints can still move); {hint}")
        raise LoopClosureError(reason, field=independent_field)
    dof = model.nv - rank
    if len(held) > dof:
        raise LoopClosureError(
            f"{len(independent)} independent joints are given but the mechanism has only "
            f"{dof} degree(s) of freedom ({_names(independent, names)})",
            field=independent_field)
    # 3. the closed values become the links' values
    warnings = list(model.warnings)
    if singular:
        reason, loop = _singular_pose(active, q, J, dependent, generic, generic_dep)
        warnings.append(f"loop {loop!r}: {reason}; its mobility there is {dof}, "
                        f"{model.nv - generic} elsewhere")
    moved = np.abs(q - q_guess)
    if np.max(moved) > model.tolerance:
        e = int(np.argmax(moved))
        warnings.append(f"closing the loops moved joint {names[model.value_joint[e]]!r} by "
                        f"{moved[e]:.3g} (rad or m) from the file's value")
    return with_chains(model, chains_with_q(model.chains, q), row_loop, row_kind, dof=dof,
                       warnings=tuple(warnings))


def _ranks_nearby(model: Model, q, dependent, J) -> tuple[int, int, np.ndarray]:
    """(rank of the loop Jacobian, rank of its dependent columns, the Jacobian of the
    larger rank) at the closed pose q and at three closed poses near it: q moved by up
    to 0.01 rad (0.01 sizes for prismatic joints) at random and closed again, every
    joint free. Where q is singular, the poses nearby are not (almost surely)."""
    rng = np.random.default_rng(2718)
    every = np.arange(model.nv)
    rank, rank_dep, J_best = numerical_rank(J), numerical_rank(J[:, dependent]), J
    for _ in range(3):
        p = _moved(model, q, every, 1e-2 * _rate_scale(model, every)
                   * rng.uniform(-1, 1, every.size))
        near = _newton(model, p, every, model.tolerance, MAX_ASSEMBLY_ITERATIONS)
        if near.err > model.tolerance:
            continue
        Jn = closure_values(model, near.q, want=2)[1]
        rank_dep = max(rank_dep, numerical_rank(Jn[:, dependent]))
        if numerical_rank(Jn) > rank:
            rank, J_best = numerical_rank(Jn), Jn
    return rank, rank_dep, J_best


def _singular_pose(model: Model, q, J, dependent, generic: int, generic_dep: int
                   ) -> tuple[str, str]:
    """(what is singular, the loop) at a closed pose q at which the loop Jacobian J (or
    its dependent columns) has a lower rank than at the closed poses nearby; the loop is
    that of the row that lost its rank."""
    names = model.joint_names
    rank = numerical_rank(J)
    if rank < generic:
        u = np.linalg.svd(J)[0]
        lost = u[:, rank:generic]
        reason = (f"the closed pose is a singular configuration ({_pose_text(model, q)}): "
                  f"the loop Jacobian has rank {rank} there and {generic} at the closed "
                  f"poses nearby (a change point, where branches of the motion cross), so "
                  f"the motion from it is not determined; give joint values off it")
    else:
        Jd = J[:, dependent]
        u = np.linalg.svd(Jd)[0]
        rank_dep = numerical_rank(Jd)
        lost = u[:, rank_dep:generic_dep]
        independent = sorted({int(model.rate_joint[r]) for r in range(model.nv)
                              if r not in set(dependent)})
        reason = (f"the closed pose is a singular configuration ({_pose_text(model, q)}): "
                  f"the independent joints ({_names(independent, names)}) do not fix the "
                  f"others there (the dependent joints' Jacobian has rank {rank_dep} there "
                  f"and {generic_dep} at the closed poses nearby: a dead centre, or a "
                  f"type-II singularity); give joint values off it")
    r = int(np.argmax(np.sum(lost * lost, axis=1)))
    return reason, loop_of_row(model, r)


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
