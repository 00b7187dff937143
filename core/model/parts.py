"""The parts of a model description: DH rows (links), chains of them, loop joints.

A `Link` is one row of the DH and inertia tables (Saha 1999, App. A = standard DH with
d written b: the transform from frame i-1 to frame i is Rz(theta_i) Tz(b_i) Tx(a_i)
Rx(alpha_i); joint i moves about / along z_{i-1}; link i's mass centre and inertia are
given in its own frame i). A `Chain` is a serial chain of links, placed on the base or
on a link of another chain; a `Loop` joins two links (a closed chain). Units are SI
and radians; all parts are frozen data. Their validation is the descriptions' own
(`core.model.robot`, `core.model.mechanism`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

#: Gravity used when none is given, m/s^2 in the base frame.
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
#: Default closure tolerance of assembly, m and rad.
DEFAULT_TOLERANCE = 1e-10
#: Floating point computes a closure residual to a few units in the last place of the
#: mechanism's size; the smallest tolerance assembly accepts is this many of them
#: (`tolerance_floor`). Newton ends at 5e-17 to 5e-16 on the bundled mechanisms (sizes
#: 1 to 6 m), where the floor is 1.4e-14 to 8.5e-14.
TOLERANCE_ULPS = 64


class JointType(str, Enum):
    REVOLUTE = "revolute"
    PRISMATIC = "prismatic"


@dataclass(frozen=True)
class Link:
    """One row of the DH and inertia tables.

    joint   : revolute (variable theta) or prismatic (variable b)
    a, b    : link length and joint offset, m
    alpha   : twist angle, rad
    theta   : joint angle, rad
    mass    : kg, > 0
    com     : mass centre (x, y, z), m, in this link's own DH frame
    inertia : (xx, yy, zz, xy, xz, yz), kg m^2, about the mass centre, same frame
    limits  : (lower, upper) joint range in rad or m, or None
    name    : display name
    actuated: whether a motor drives the joint (mechanism files; a serial arm's
              joints are all actuated whatever this says)
    The joint variable's value in the row (theta or b) is the home configuration.
    """

    joint: JointType = JointType.REVOLUTE
    a: float = 0.0
    b: float = 0.0
    alpha: float = 0.0
    theta: float = 0.0
    mass: float = 1.0
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia: tuple[float, float, float, float, float, float] = (0.01, 0.01, 0.01, 0.0, 0.0, 0.0)
    limits: tuple[float, float] | None = None
    name: str = ""
    actuated: bool = False

    def __post_init__(self) -> None:
        # normalise containers so equal tables compare equal (lists -> tuples)
        for f in ("com", "inertia"):
            value = getattr(self, f)
            if isinstance(value, (list, np.ndarray)):
                object.__setattr__(self, f, tuple(float(v) for v in value))
        if isinstance(self.limits, (list, np.ndarray)):
            object.__setattr__(self, "limits", tuple(float(v) for v in self.limits))
        if isinstance(self.joint, str) and not isinstance(self.joint, JointType):
            try:
                object.__setattr__(self, "joint", JointType(self.joint))
            except ValueError:
                pass  # reported by validate_link with the link's number

    @property
    def is_revolute(self) -> bool:
        return self.joint == JointType.REVOLUTE

    @property
    def q_home(self) -> float:
        """Home value of the joint variable (rad or m)."""
        return self.theta if self.is_revolute else self.b

    @property
    def inertia_matrix(self) -> np.ndarray:
        """3x3 inertia tensor about the mass centre in the link frame, kg m^2."""
        xx, yy, zz, xy, xz, yz = self.inertia
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)

    def with_q(self, q: float) -> "Link":
        """This link with its joint variable set to `q` (rad or m)."""
        return replace(self, theta=q) if self.is_revolute else replace(self, b=q)



class LoopJointType(str, Enum):
    REVOLUTE = "revolute"
    SPHERICAL = "spherical"
    PRISMATIC = "prismatic"


def rotation_rpy(rpy) -> np.ndarray:
    """Rz(y) Ry(p) Rx(r) for rpy = (r, p, y) in rad (fixed axes x, then y, then z)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), \
        math.cos(y), math.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


@dataclass(frozen=True)
class Placement:
    """Pose of a chain's DH frame 0: xyz (m) and rpy (rad, Rz(y) Ry(p) Rx(r)) in the base
    frame, or in the parent link's own frame for a chain on a link."""

    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "xyz", tuple(self.xyz))
        object.__setattr__(self, "rpy", tuple(self.rpy))

    @property
    def rotation(self) -> np.ndarray:
        return rotation_rpy(self.rpy)

    @property
    def is_identity(self) -> bool:
        return not any(self.xyz) and not any(self.rpy)


@dataclass(frozen=True)
class Chain:
    """A serial chain of DH rows. `parent`: the link it starts on (None: the base)."""

    name: str
    links: tuple[Link, ...]
    parent: str | None = None
    base: Placement = Placement()

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", tuple(self.links))


@dataclass(frozen=True)
class Loop:
    """A loop-closure (cut) joint between two links ("base" allowed as the second).

    at   : the joint's point in each link's own frame (base frame for "base"), m
    axis : the joint's axis in each frame (need not be unit; z by default)
    revolute: points coincide and axes stay parallel; spherical: points coincide;
    prismatic: the axes stay on one line and the frames do not turn about it.
    """

    name: str
    joint: LoopJointType
    links: tuple[str, str]
    at: tuple[tuple[float, float, float], tuple[float, float, float]] = ((0.0, 0.0, 0.0),
                                                                         (0.0, 0.0, 0.0))
    axis: tuple[tuple[float, float, float], tuple[float, float, float]] = ((0.0, 0.0, 1.0),
                                                                           (0.0, 0.0, 1.0))

    def __post_init__(self) -> None:
        if isinstance(self.joint, str) and not isinstance(self.joint, LoopJointType):
            try:
                object.__setattr__(self, "joint", LoopJointType(self.joint))
            except ValueError:
                pass  # reported by validation with the loop's name
        object.__setattr__(self, "links", tuple(self.links))
        object.__setattr__(self, "at", tuple(tuple(p) for p in self.at))
        object.__setattr__(self, "axis", tuple(tuple(a) for a in self.axis))


@dataclass(frozen=True)
class Assembly:
    """How loops are closed: `independent` joint names held (None: the actuated joints),
    `tolerance` on the closure residual (m and rad)."""

    independent: tuple[str, ...] | None = None
    tolerance: float = DEFAULT_TOLERANCE

    def __post_init__(self) -> None:
        if self.independent is not None:
            object.__setattr__(self, "independent", tuple(self.independent))


def chains_with_q(chains, q) -> tuple[Chain, ...]:
    """The chains with the joint values q (in joint order: the chains' links in turn) as
    their rows' joint variables (theta of a revolute row, b of a prismatic one)."""
    out, k = [], 0
    for chain in chains:
        links = tuple(link.with_q(float(q[k + i])) for i, link in enumerate(chain.links))
        out.append(replace(chain, links=links))
        k += len(links)
    return tuple(out)


def mechanism_size(chains, loops=()) -> float:
    """A length (m) no point of the loops is farther than from the base origin, at
    least 1: the sum of the chains' base offsets |xyz|, the links' |a| and |b| and the
    loops' |at| points."""
    size = 0.0
    for chain in chains:
        size += math.hypot(*chain.base.xyz)
        size += sum(abs(link.a) + abs(link.b) for link in chain.links)
    for loop in loops:
        size += sum(math.hypot(*p) for p in loop.at)
    return max(1.0, size)


def tolerance_floor(chains, loops=()) -> float:
    """The smallest closure tolerance (m and rad) that floating point can meet on these
    chains and loops: TOLERANCE_ULPS units in the last place of `mechanism_size` (the
    points of a loop are computed to about eps times their distance from the origin;
    the angle rows, dot products of unit vectors, to a few eps)."""
    return TOLERANCE_ULPS * np.finfo(float).eps * mechanism_size(chains, loops)
