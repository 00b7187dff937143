"""The pose of a model, without Qt: slider ranges, the joints a person moves, and the
pose a model keeps when its tables are edited.

q is always in rad (revolute joints) / m (prismatic joints), shape (n,).
"""
from __future__ import annotations

import math

import numpy as np

from armdyn.core import Mechanism, Robot

__all__ = ["pose_ranges", "carry_pose", "driven_joints", "DEFAULT_REVOLUTE_RANGE",
           "DEFAULT_PRISMATIC_RANGE"]

#: Slider range of a joint without limits: +-180 deg, +-1 m.
DEFAULT_REVOLUTE_RANGE = (-math.pi, math.pi)
DEFAULT_PRISMATIC_RANGE = (-1.0, 1.0)


def driven_joints(robot: Robot | Mechanism) -> tuple[int, ...]:
    """The joints a person moves: the independent joints of a mechanism with loops
    (the others follow by assembly), else every joint."""
    if robot.loops:
        return tuple(robot.independent)
    return tuple(range(robot.n))


def pose_ranges(robot: Robot | Mechanism) -> np.ndarray:
    """Slider ranges, shape (n, 2), rad / m: the joint limits, or the defaults,
    widened if needed to contain the home value."""
    out = np.empty((robot.n, 2))
    for i, link in enumerate(robot.links):
        if link.limits is not None:
            lo, hi = link.limits
        else:
            lo, hi = DEFAULT_REVOLUTE_RANGE if link.is_revolute else DEFAULT_PRISMATIC_RANGE
        out[i] = (min(lo, link.q_home), max(hi, link.q_home))
    return out


def carry_pose(old: Robot | Mechanism | None, new: Robot | Mechanism,
               q: np.ndarray | None) -> np.ndarray:
    """The pose to show after the robot changed from `old` to `new`.

    With the same joints, each joint keeps its value unless its home value was
    edited (then it moves to the new home, so typing theta in the table moves
    the arm); values are clipped to the new ranges. Otherwise: home.
    """
    if old is None or q is None or old.n != new.n or np.any(old.is_revolute != new.is_revolute):
        return new.q_home.copy()
    q = np.where(old.q_home != new.q_home, new.q_home, np.asarray(q, dtype=float))
    r = pose_ranges(new)
    return np.clip(q, r[:, 0], r[:, 1])
