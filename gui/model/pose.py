"""The pose of a model, without Qt: the numbers a person sets (`Coordinate`), their
ranges, the joints a person moves, and the pose a model keeps when its tables are edited.

q is always the model's configuration, shape (nq,): rad (revolute and universal joints) /
m (prismatic joints), and for a spherical or free joint its entries as core writes them
(docs/floating-bases.md): a free joint's position x, y, z (m) then its unit quaternion,
scalar last; a spherical joint's unit quaternion.

A person does not type quaternions. The pose panel shows one row per `Coordinate`:

- a revolute or prismatic joint: its value (one row, as always);
- a universal joint: its two angles;
- a free joint: its position x, y, z in the base frame, then its orientation as roll,
  pitch, yaw (rad; R = Rz(yaw) Ry(pitch) Rx(roll), the convention of the mechanism
  files' rpy);
- a spherical joint: roll, pitch, yaw of its link in the joint's frame.

Setting one of roll, pitch, yaw keeps the other two as they are shown and writes the
quaternion of the three (`with_coordinate`). At pitch = +-90 deg (gimbal lock) roll and
yaw turn about the same axis: yaw is shown as 0 there and roll carries the turn.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from armdyn.core import JointType, Mechanism, Robot
from armdyn.core.model.arguments import model_of
from armdyn.core.model.rotations import quaternion_rpy, quaternion_rpy_angles

__all__ = ["Coordinate", "pose_coordinates", "coordinate_values", "with_coordinate",
           "carry_pose", "driven_joints",
           "DEFAULT_REVOLUTE_RANGE", "DEFAULT_PRISMATIC_RANGE", "DEFAULT_POSITION_RANGE"]

#: Slider range of a joint without limits: +-180 deg, +-1 m.
DEFAULT_REVOLUTE_RANGE = (-math.pi, math.pi)
DEFAULT_PRISMATIC_RANGE = (-1.0, 1.0)
#: Half the slider range of a free body's position about its home, m (at least).
DEFAULT_POSITION_RANGE = 5.0
#: Slider range of pitch (rad): roll-pitch-yaw angles have pitch in [-90, 90] deg.
_PITCH_RANGE = (-math.pi / 2, math.pi / 2)
_RPY = ("roll", "pitch", "yaw")


@dataclass(frozen=True)
class Coordinate:
    """One number of the pose a person sets.

    label  : what the row says ("3  elbow", "1  trunk x", "1  trunk roll")
    joint  : the joint (0-based) it belongs to
    angle  : True: rad (shown in deg); False: m
    lo, hi : slider range, rad / m
    driven : False for a joint that follows a mechanism's loops (a read-out)
    index  : the entry of q it is (a value), or the first entry of the quaternion it
             is an angle of
    part   : "value", or "roll" / "pitch" / "yaw" of the quaternion at `index`
    """

    label: str
    joint: int
    angle: bool
    lo: float
    hi: float
    driven: bool
    index: int
    part: str = "value"


def driven_joints(robot: Robot | Mechanism) -> tuple[int, ...]:
    """The joints a person moves: the independent joints of a mechanism with loops
    (the others follow by assembly), else every joint."""
    if robot.loops:
        return tuple(robot.independent)
    return tuple(range(robot.n))


def pose_coordinates(robot: Robot | Mechanism) -> tuple[Coordinate, ...]:
    """The pose panel's rows of `robot` (module docstring), in joint order. A DH joint's
    range is its limits or the defaults, widened to contain its home value."""
    model = model_of(robot)
    driven = set(driven_joints(robot))
    iq = model.kernel.views.iq
    home = model.q_home
    out: list[Coordinate] = []
    for j, (name, link) in enumerate(zip(model.joint_names, model.links, strict=True)):
        k, head, on = int(iq[j]), f"{j + 1}  {name}", j in driven
        kind = link.joint
        if kind in (JointType.REVOLUTE, JointType.PRISMATIC):
            if link.limits is not None:
                lo, hi = link.limits
            else:
                lo, hi = (DEFAULT_REVOLUTE_RANGE if link.is_revolute
                          else DEFAULT_PRISMATIC_RANGE)
            out.append(Coordinate(head, j, link.is_revolute, min(lo, link.q_home),
                                  max(hi, link.q_home), on, k))
        elif kind is JointType.UNIVERSAL:
            out += [Coordinate(f"{head} {s}", j, True, *DEFAULT_REVOLUTE_RANGE, on, k + c)
                    for c, s in enumerate(("angle 1", "angle 2"))]
        else:
            if kind is JointType.FREE:
                out += [Coordinate(f"{head} {axis}", j, False,
                                   home[k + c] - DEFAULT_POSITION_RANGE,
                                   home[k + c] + DEFAULT_POSITION_RANGE, on, k + c)
                        for c, axis in enumerate("xyz")]
                k += 3
            out += [Coordinate(f"{head} {part}", j, True,
                               *(_PITCH_RANGE if part == "pitch" else DEFAULT_REVOLUTE_RANGE),
                               on, k, part) for part in _RPY]
    return tuple(out)


def coordinate_values(coords: tuple[Coordinate, ...], q) -> np.ndarray:
    """The value of every coordinate at pose q (nq,), rad / m."""
    q = np.asarray(q, dtype=float)
    rpy: dict[int, np.ndarray] = {}
    out = np.empty(len(coords))
    for c, coord in enumerate(coords):
        if coord.part == "value":
            out[c] = q[coord.index]
        else:
            if coord.index not in rpy:
                rpy[coord.index] = quaternion_rpy_angles(q[coord.index:coord.index + 4])
            out[c] = rpy[coord.index][_RPY.index(coord.part)]
    return out


def with_coordinate(coords: tuple[Coordinate, ...], q, c: int, value: float) -> np.ndarray:
    """Pose q (nq,) with coordinate c set to `value` (rad / m); an angle of an orientation
    keeps the other two of its roll, pitch, yaw."""
    q = np.array(q, dtype=float)
    coord = coords[c]
    if coord.part == "value":
        q[coord.index] = value
        return q
    k = coord.index
    rpy = list(quaternion_rpy_angles(q[k:k + 4]))
    rpy[_RPY.index(coord.part)] = value
    q[k:k + 4] = quaternion_rpy(rpy)
    return q


def carry_pose(old: Robot | Mechanism | None, new: Robot | Mechanism,
               q: np.ndarray | None) -> np.ndarray:
    """The pose to show after the robot changed from `old` to `new`.

    With the same joints (their number and kinds), each joint keeps its values unless
    its home was edited (then it moves to the new home, so typing theta in the table
    moves the arm); DH values are clipped to the new ranges. Otherwise: home.
    """
    if (old is None or q is None or old.n != new.n
            or tuple(old.model.joint_types) != tuple(new.model.joint_types)):
        return new.q_home.copy()
    model = model_of(new)
    q = np.asarray(q, dtype=float)
    home_old, home_new = model_of(old).q_home, model.q_home
    out = q.copy()
    for j in range(model.n):
        at = model.values_of([j])
        if np.any(home_old[at] != home_new[at]):
            out[at] = home_new[at]
    for coord in pose_coordinates(new):
        if model.joint_types[coord.joint].is_dh:
            out[coord.index] = min(max(out[coord.index], coord.lo), coord.hi)
    return out
