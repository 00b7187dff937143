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

from .rotations import rotation_rpy

#: Gravity used when none is given, m/s^2 in the base frame.
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
#: Default closure tolerance of assembly, m and rad.
DEFAULT_TOLERANCE = 1e-10
#: Floating point computes a closure residual to a few units in the last place of the
#: mechanism's size; the smallest tolerance assembly accepts is this many of them
#: (`tolerance_floor`). Newton ends at 5e-17 to 5e-16 on the bundled mechanisms (sizes
#: 1 to 6 m), where the floor is 1.4e-14 to 8.5e-14.
TOLERANCE_ULPS = 64


#: A home quaternion within this of unit length is normalised; one further off is refused.
QUATERNION_TOLERANCE = 1e-3


class JointType(str, Enum):
    """The kinds of joint a link hangs on (`core.kernels.joints` for their values,
    rates and motion)."""

    REVOLUTE = "revolute"
    PRISMATIC = "prismatic"
    SPHERICAL = "spherical"
    UNIVERSAL = "universal"
    FREE = "free"

    @property
    def nq(self) -> int:
        """Entries of the joint in q."""
        return {"spherical": 4, "universal": 2, "free": 7}.get(self.value, 1)

    @property
    def nv(self) -> int:
        """Entries of the joint in the rates (and accelerations, forces)."""
        return {"spherical": 3, "universal": 2, "free": 6}.get(self.value, 1)

    @property
    def is_dh(self) -> bool:
        """Whether the joint moves a DH row (revolute, prismatic)."""
        return self in (JointType.REVOLUTE, JointType.PRISMATIC)


#: The home values of a joint of several degrees of freedom when none are given: the
#: identity orientation, zero angles, the origin.
IDENTITY_HOME = {JointType.SPHERICAL: (0.0, 0.0, 0.0, 1.0), JointType.UNIVERSAL: (0.0, 0.0),
                 JointType.FREE: (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)}


@dataclass(frozen=True)
class Link:
    """One row of the DH and inertia tables: a link and the joint it hangs on.

    joint   : revolute (variable theta) or prismatic (variable b): a DH row; spherical,
              universal or free: a joint of several degrees of freedom placed by xyz,
              rpy (`core.kernels.joints` lists their values and rates)
    a, b    : link length and joint offset, m (DH rows)
    alpha   : twist angle, rad (DH rows)
    theta   : joint angle, rad (DH rows)
    mass    : kg, > 0
    com     : mass centre (x, y, z), m, in this link's own frame
    inertia : (xx, yy, zz, xy, xz, yz), kg m^2, about the mass centre, same frame
    limits  : (lower, upper) joint range in rad or m, or None (DH rows)
    name    : display name
    actuated: whether a motor drives the joint (mechanism files; a serial arm's
              joints are all actuated whatever this says)
    xyz, rpy: where a joint of several degrees of freedom sits: the pose of its frame in
              the previous link's own frame (in the chain's base frame for a chain's
              first link), m and rad (Rz(y) Ry(p) Rx(r)); the link's own frame is that
              frame moved by the joint
    home    : the home values of a joint of several degrees of freedom: a unit quaternion
              [qx, qy, qz, qw] (spherical), two angles in rad (universal), or
              [x, y, z, qx, qy, qz, qw] (free); None: the identity
    friction_viscous : c_v >= 0, N m s/rad (revolute) or N s/m (prismatic)
    friction_coulomb : c_c >= 0, N m or N (smoothed: `core.kernels.drives`)
    gear_ratio       : r > 0, motor turns per joint turn (1: direct drive)
    rotor_inertia    : I_r >= 0, kg m^2 about the motor's axis; reflected to the joint
                       as r^2 I_r
                       (the four: revolute and prismatic joints of a tree only)
    The joint variable's value in a DH row (theta or b) is the home configuration.
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
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    home: tuple[float, ...] | None = None
    friction_viscous: float = 0.0
    friction_coulomb: float = 0.0
    gear_ratio: float = 1.0
    rotor_inertia: float = 0.0

    def __post_init__(self) -> None:
        # normalise containers so equal tables compare equal (lists -> tuples)
        for f in ("com", "inertia", "xyz", "rpy"):
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
        if self.home is not None:
            try:
                home = tuple(float(v) for v in self.home)
            except (TypeError, ValueError):
                return  # reported by validate_link
            if self.joint in (JointType.SPHERICAL, JointType.FREE) and len(home) >= 4:
                quat = np.array(home[-4:])
                norm = float(np.linalg.norm(quat))
                # unit to round-off already: kept as given, so that a file written from
                # this link reads back equal (normalising again moves the last bits)
                if 1e-15 < abs(norm - 1.0) <= QUATERNION_TOLERANCE:  # further off: refused
                    home = home[:-4] + tuple(float(v) for v in quat / norm)
            object.__setattr__(self, "home", home)

    @property
    def is_revolute(self) -> bool:
        return self.joint == JointType.REVOLUTE

    @property
    def has_drive(self) -> bool:
        """Whether the joint has friction or a drive other than a direct, massless one."""
        return (self.friction_viscous != 0.0 or self.friction_coulomb != 0.0
                or self.gear_ratio != 1.0 or self.rotor_inertia != 0.0)

    @property
    def drive_row(self) -> tuple[float, float, float, float]:
        """The joint's row of the model's `drive` field (`core.kernels.drives`): c_v, c_c,
        the reflected rotor inertia r^2 I_r, r."""
        return (float(self.friction_viscous), float(self.friction_coulomb),
                float(self.gear_ratio) ** 2 * float(self.rotor_inertia), float(self.gear_ratio))

    @property
    def q_home(self) -> float:
        """Home value of a DH row's joint variable (rad or m)."""
        return self.theta if self.is_revolute else self.b

    @property
    def q_values(self) -> tuple[float, ...]:
        """The joint's home entries in q (one for a DH row; `home` otherwise)."""
        if self.joint in (JointType.REVOLUTE, JointType.PRISMATIC):
            return (self.q_home,)
        return IDENTITY_HOME[self.joint] if self.home is None else self.home

    @property
    def placement(self) -> np.ndarray:
        """The 4x4 pose of a joint of several degrees of freedom in the previous link's
        own frame (xyz, rpy); the identity for a DH row."""
        T = np.eye(4)
        T[:3, :3] = rotation_rpy(self.rpy)
        T[:3, 3] = self.xyz
        return T

    @property
    def inertia_matrix(self) -> np.ndarray:
        """3x3 inertia tensor about the mass centre in the link frame, kg m^2."""
        xx, yy, zz, xy, xz, yz = self.inertia
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)

    def with_q(self, q) -> "Link":
        """This link with its joint values set to `q`: a number (rad or m) for a DH row,
        the joint's entries of q for a joint of several degrees of freedom."""
        if self.joint == JointType.REVOLUTE:
            return replace(self, theta=float(np.ravel(q)[0]) if np.ndim(q) else float(q))
        if self.joint == JointType.PRISMATIC:
            return replace(self, b=float(np.ravel(q)[0]) if np.ndim(q) else float(q))
        return replace(self, home=tuple(float(v) for v in q))



class LoopJointType(str, Enum):
    REVOLUTE = "revolute"
    SPHERICAL = "spherical"
    PRISMATIC = "prismatic"
    GEAR = "gear"


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
    """A loop-closure (cut) joint between two links ("base" allowed as the second), or a
    gear between the joints of two links.

    at   : the joint's point in each link's own frame (base frame for "base"), m
    axis : the joint's axis in each frame (need not be unit; z by default)
    revolute: points coincide and axes stay parallel; spherical: points coincide;
    prismatic: the axes stay on one line and the frames do not turn about it.
    gear: no point or axis; the joints of links a and b (one degree of freedom each, no
    "base") turn or slide together, q_b - q_b0 = ratio (q_a - q_a0), q_a0 and q_b0 the
    links' joint values as given (`gear_mesh`).
    ratio : a gear's d q_b / d q_a in SI units (rad/rad, m/rad for a rack driven by a
            pinion: its pitch radius, rad/m the other way round); None for the others
    """

    name: str
    joint: LoopJointType
    links: tuple[str, str]
    at: tuple[tuple[float, float, float], tuple[float, float, float]] = ((0.0, 0.0, 0.0),
                                                                         (0.0, 0.0, 0.0))
    axis: tuple[tuple[float, float, float], tuple[float, float, float]] = ((0.0, 0.0, 1.0),
                                                                           (0.0, 0.0, 1.0))
    ratio: float | None = None

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
class SpringDamper:
    """A linear spring and damper between a point of each of two links ("base" allowed
    as either), acting along the line through the points (`core.kernels.elements`).

    at          : the point in each link's own frame (base frame for "base"), m
    stiffness   : k, N/m (>= 0)
    damping     : c, N s/m (>= 0)
    free_length : L0, m (>= 0): the spring pulls the points together when they are
                  further apart, pushes them apart when nearer
    """

    name: str
    links: tuple[str, str]
    at: tuple[tuple[float, float, float], tuple[float, float, float]] = ((0.0, 0.0, 0.0),
                                                                         (0.0, 0.0, 0.0))
    stiffness: float = 0.0
    damping: float = 0.0
    free_length: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", tuple(self.links))
        object.__setattr__(self, "at", tuple(tuple(p) for p in self.at))


@dataclass(frozen=True)
class Tyre:
    """A tyre: a unilateral vertical spring-damper between a point of a link (a wheel
    centre) and the road below it (`Road`); it pushes up along the base z while the
    point is nearer the road than `radius` (`core.kernels.elements`).

    at        : the point in the link's own frame, m
    stiffness : k, N/m (> 0);  damping : c, N s/m (>= 0);  radius : m (> 0)
    """

    name: str
    link: str
    at: tuple[float, float, float] = (0.0, 0.0, 0.0)
    stiffness: float = 0.0
    damping: float = 0.0
    radius: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "at", tuple(self.at))


@dataclass(frozen=True)
class Road:
    """The road's height h(x) (m) along the base x axis: piecewise linear through
    `points` [(x, h), ...] (m), x strictly increasing (a road is a function of position),
    flat beyond the first and last point. No road: h = 0 (the plane z = 0)."""

    points: tuple[tuple[float, float], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "points", tuple(tuple(p) for p in self.points))


#: A force element of a model.
ForceElement = SpringDamper | Tyre


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
    """The chains with the joint values q (in joint order: the chains' links in turn, each
    joint's entries) as their rows' joint values (theta of a revolute row, b of a
    prismatic one, the home of a joint of several degrees of freedom)."""
    out, k = [], 0
    for chain in chains:
        links = []
        for link in chain.links:
            nq = link.joint.nq if isinstance(link.joint, JointType) else 1
            links.append(link.with_q(q[k] if nq == 1 else q[k:k + nq]))
            k += nq
        out.append(replace(chain, links=tuple(links)))
    return tuple(out)


def mechanism_size(chains, loops=()) -> float:
    """A length (m) no point of the loops is farther than from the base origin, at
    least 1: the sum of the chains' base offsets |xyz|, the links' |a|, |b| and
    placements |xyz|, a free joint's home position and the loops' |at| points."""
    size = 0.0
    for chain in chains:
        size += math.hypot(*chain.base.xyz)
        for link in chain.links:
            size += abs(link.a) + abs(link.b) + math.hypot(*link.xyz)
            if link.joint is JointType.FREE and link.home is not None:
                size += math.hypot(*link.home[:3])
    for loop in loops:
        size += sum(math.hypot(*p) for p in loop.at)
    return max(1.0, size)


def tolerance_floor(chains, loops=()) -> float:
    """The smallest closure tolerance (m and rad) that floating point can meet on these
    chains and loops: TOLERANCE_ULPS units in the last place of `mechanism_size` (the
    points of a loop are computed to about eps times their distance from the origin;
    the angle rows, dot products of unit vectors, to a few eps)."""
    return TOLERANCE_ULPS * np.finfo(float).eps * mechanism_size(chains, loops)
