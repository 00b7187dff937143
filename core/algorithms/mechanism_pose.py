"""Moving a closed chain by its independent joints: assembly along a path (no Qt).

A person dragging a five-bar's crank expects the linkage to follow continuously and
to stay on the branch it is on (elbow up stays up). `assemble` (core.algorithms.loops)
closes the loops from one guess; a large jump of the input can land Newton on the
other branch, or fail where a small step would not. `follow_independent` moves the
independent joints from the current closed pose to their new values in small steps
and closes the loops at each one, starting from the previous closed pose: the
dependent joints are continued along the path, as in a position analysis.
"""
from __future__ import annotations

import math

import numpy as np

from ..model.arguments import joint_vector, model_of
from ..model.parts import JointType
from .loops import assemble, loop_jacobian

__all__ = ["follow_independent", "dependent_jacobian_conditioning", "MAX_FOLLOW_STEP"]

#: Largest move of an independent joint between two assemblies: rad (revolute) or this
#: share of the mechanism's size (prismatic).
MAX_FOLLOW_STEP = 0.1


def follow_independent(mech, q_closed, q_target, *, max_step: float = MAX_FOLLOW_STEP
                       ) -> np.ndarray:
    """The closed pose reached by moving the independent joints of `mech` from their
    values in `q_closed` (a closed pose, (nq,), rad / m) to those in `q_target` ((nq,);
    its other joints are ignored), continuing the dependent joints along the way.

    The independent joints move together in equal steps of at most `max_step` (rad,
    or m times the largest DH length for prismatic joints and positions); each step is
    assembled from the previous closed pose, on its branch. A ball or free joint's
    orientation (a quaternion) is not interpolated entry by entry: it takes the
    target's at the last step. Raises LoopClosureError (naming the loop) at the first
    step whose loops cannot close; a mechanism without loops returns `q_target`
    unchanged.
    """
    mech = model_of(mech)
    q0 = joint_vector(q_closed, mech.nq, "q_closed").copy()
    q1 = joint_vector(q_target, mech.nq, "q_target").copy()
    if not mech.loops:
        return q1
    held = np.array(mech.values_of(mech.independent), dtype=int)
    rotation = np.zeros(mech.nq, dtype=bool)  # the quaternions' entries
    for name, kind in zip(mech.joint_names, mech.joint_types):
        if kind in (JointType.SPHERICAL, JointType.FREE):  # [qx qy qz qw] last
            end = mech.q_slice(name).stop
            rotation[end - 4:end] = True
    moving = held[~rotation[held]]
    delta = q1[moving] - q0[moving]
    size = max((max(abs(link.a), abs(link.b)) for link in mech.links), default=1.0)
    step = np.where(mech.value_is_angle[moving], max_step, max_step * max(size, 1e-3))
    count = max(1, int(math.ceil(float(np.max(np.abs(delta) / step, initial=0.0)) - 1e-12)))
    q = q0
    for k in range(1, count + 1):
        guess = q.copy()
        if k == count:
            guess[held] = q1[held]
        else:
            guess[moving] = q0[moving] + delta * (k / count)
        q = assemble(mech, guess, branch=q)
    return q


def dependent_jacobian_conditioning(mech, q) -> tuple[float, float]:
    """How far pose q ((nq,), rad / m) is from a singularity of the loops: the smallest
    singular value of the loop Jacobian's dependent columns, relative to its largest
    (1: well conditioned, 0: the independent joints no longer fix the pose, a type-II
    singularity), and that block's condition number sigma_max / sigma_min (inf when
    singular). A mechanism without loops gives (1.0, 1.0)."""
    mech = model_of(mech)
    if not mech.loops:
        return 1.0, 1.0
    dependent = [j for j in range(mech.n) if j not in set(mech.independent)]
    J = loop_jacobian(mech, q)[:, mech.rates_of(dependent)]  # columns: the rates
    s = np.linalg.svd(J, compute_uv=False)[:len(dependent)]
    if s.size == 0 or s[0] == 0.0:
        return 0.0, math.inf
    return float(s[-1] / s[0]), (float(s[0] / s[-1]) if s[-1] > 0 else math.inf)
