"""The robot model: immutable DH and inertia tables.

A `Robot` is frozen data, as in Pinocchio's Model: algorithms never modify
it; per-call state lives in the algorithms. Units are SI and radians
internally; `angle_unit` only records how a file writes its angles.

DH convention (Saha 1999, App. A = standard DH with d written b): the
transform from frame i-1 to frame i is Rz(theta_i) Tz(b_i) Tx(a_i) Rx(alpha_i).
Joint i moves about / along z_{i-1}. Link i's own frame is frame i; its mass
centre `com` and inertia about the mass centre are given in that frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from ..errors import RobotError
from ..kernels.layout import KernelModel, pack_model

#: Gravity used when none is given, m/s^2 in the base frame.
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)
#: A link longer than this (m) is probably millimetres typed as metres.
SUSPICIOUS_LENGTH = 10.0


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


class JointTable:
    """Per-joint arrays read off a model's `links` (in joint order): what a serial
    `Robot` and a `Mechanism` share."""

    links: tuple[Link, ...]

    @property
    def q_home(self) -> np.ndarray:
        """Home configuration, shape (n,), rad / m (closed, for a mechanism)."""
        return np.array([link.q_home for link in self.links], dtype=float)

    @property
    def is_revolute(self) -> np.ndarray:
        """Boolean mask of revolute joints, shape (n,)."""
        return np.array([link.is_revolute for link in self.links], dtype=bool)

    @property
    def joint_limits(self) -> np.ndarray:
        """Joint ranges, shape (n, 2); -inf/+inf where a link has none."""
        out = np.empty((len(self.links), 2))
        for i, link in enumerate(self.links):
            out[i] = link.limits if link.limits is not None else (-np.inf, np.inf)
        return out

    @property
    def total_mass(self) -> float:
        """kg."""
        return float(sum(link.mass for link in self.links))


@dataclass(frozen=True)
class Robot(JointTable):
    """A serial arm: DH and inertia tables plus gravity. Immutable.

    Construction validates every field and raises `RobotError` naming the
    link and field; an invalid Robot cannot exist.
    """

    name: str
    links: tuple[Link, ...]
    gravity: tuple[float, float, float] = DEFAULT_GRAVITY
    description: str = ""
    angle_unit: str = "deg"
    warnings: tuple[str, ...] = field(default=(), compare=False)
    kernel: KernelModel = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", tuple(self.links))
        object.__setattr__(self, "gravity", tuple(float(g) for g in self.gravity))
        object.__setattr__(self, "warnings", tuple(validate_robot(self)))
        # the kernels' layout, owned by the model from construction on (never rewritten)
        object.__setattr__(self, "kernel", pack_links(self.links, self.parent, self.gravity))

    # ----- sizes and configurations -------------------------------------------------
    @property
    def n(self) -> int:
        """Number of joints (= moving links)."""
        return len(self.links)

    @property
    def link_names(self) -> list[str]:
        return [link.name or f"link {i + 1}" for i, link in enumerate(self.links)]

    def with_links(self, links) -> "Robot":
        """A new robot with other links (validated)."""
        return replace(self, links=tuple(links))

    # ----- the mechanism view: one chain on the base, no loops -----------------------
    @property
    def joint_names(self) -> list[str]:
        """Link names in joint order (as `Mechanism.joint_names`)."""
        return self.link_names

    @property
    def dof(self) -> int:
        return self.n

    @property
    def actuated(self) -> tuple[int, ...]:
        """Every joint of a serial arm is actuated."""
        return tuple(range(self.n))

    @property
    def independent(self) -> tuple[int, ...]:
        """Every joint of a serial arm is an independent coordinate."""
        return tuple(range(self.n))

    @property
    def loops(self) -> tuple:
        """A serial arm has no loops."""
        return ()

    @property
    def parent(self) -> tuple[int, ...]:
        """Parent joint of each joint (-1: the base)."""
        return tuple(range(-1, self.n - 1))

    def __hash__(self) -> int:  # tuples of floats: cheap and stable
        return hash((self.name, self.links, self.gravity))


def pack_links(links, parent, gravity, place_R=None, place_p=None, **loops) -> KernelModel:
    """The kernel layout (core.kernels.layout) of links joined by a parent array."""
    return pack_model(
        dh=np.array([[l.a, l.b, l.alpha, l.theta] for l in links], dtype=float).reshape(-1, 4),
        revolute=np.array([1 if l.is_revolute else 0 for l in links], dtype=np.int64),
        mass=np.array([l.mass for l in links], dtype=float),
        com=np.array([l.com for l in links], dtype=float).reshape(-1, 3),
        inertia=np.array([l.inertia_matrix for l in links], dtype=float).reshape(-1, 3, 3),
        parent=parent, place_R=place_R, place_p=place_p, gravity=gravity, **loops)


# ----------------------------------------------------------------------------------
# Validation: one place, used by the file loader and the GUI's table editor alike.
# ----------------------------------------------------------------------------------

def _finite(value, *, link, name, field_name) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise RobotError(f"expected a number, got {value!r}", link=link, link_name=name,
                         field=field_name) from None
    if not math.isfinite(x):
        raise RobotError(f"expected a finite number, got {value!r}", link=link, link_name=name,
                         field=field_name)
    if abs(x) > 1e12:
        raise RobotError(f"value {x:g} is out of range (|x| <= 1e12)", link=link,
                         link_name=name, field=field_name)
    return x


def validate_link(link: Link, index: int) -> list[str]:
    """Check one link; raise `RobotError` (1-based `index`) or return warnings."""
    name = link.name
    where = dict(link=index, name=name)
    if not isinstance(link.joint, JointType):
        raise RobotError(f"joint must be 'revolute' or 'prismatic', got {link.joint!r}",
                         link=index, link_name=name, field="joint")
    for f in ("a", "b", "alpha", "theta", "mass"):
        _finite(getattr(link, f), field_name=f, **where)
    if len(link.com) != 3:
        raise RobotError("com must have 3 components [x, y, z]", link=index, link_name=name,
                         field="com")
    com = [_finite(c, field_name="com", **where) for c in link.com]
    if len(link.inertia) != 6:
        raise RobotError("inertia must have 6 components xx, yy, zz, xy, xz, yz", link=index,
                         link_name=name, field="inertia")
    inertia = [_finite(c, field_name="inertia", **where) for c in link.inertia]

    if not link.mass > 0.0:
        raise RobotError(f"mass must be > 0 kg, got {link.mass:g}", link=index, link_name=name,
                         field="mass")

    # Inertia about the mass centre: positive definite and the triangle inequality,
    # with a tolerance relative to the tensor's own scale.
    xx, yy, zz = inertia[:3]
    scale = max(abs(v) for v in inertia)
    tol = 1e-9 * scale
    if scale == 0.0:
        raise RobotError("inertia is zero; a rigid body needs xx, yy, zz > 0", link=index,
                         link_name=name, field="inertia")
    for label, lhs, rhs in (("xx + yy >= zz", xx + yy, zz), ("yy + zz >= xx", yy + zz, xx),
                            ("xx + zz >= yy", xx + zz, yy)):
        if lhs < rhs - tol:
            raise RobotError(f"inertia breaks the triangle inequality {label} "
                             f"({lhs:g} < {rhs:g})", link=index, link_name=name,
                             field="inertia")
    eig = np.linalg.eigvalsh(link.inertia_matrix)
    if not eig[0] > tol:
        raise RobotError(f"inertia is not positive definite (smallest principal moment "
                         f"{eig[0]:.3g} kg m^2)", link=index, link_name=name, field="inertia")

    if link.limits is not None:
        if len(link.limits) != 2:
            raise RobotError("limits must be [lower, upper]", link=index, link_name=name,
                             field="limits")
        lo, hi = (_finite(v, field_name="limits", **where) for v in link.limits)
        if not lo < hi:
            raise RobotError(f"limits must be increasing, got [{lo:g}, {hi:g}]", link=index,
                             link_name=name, field="limits")

    warnings = []
    for f in ("a", "b"):
        if abs(getattr(link, f)) > SUSPICIOUS_LENGTH:
            warnings.append(f"link {index}{f' ({name!r})' if name else ''}: {f} = "
                            f"{getattr(link, f):g} m is over {SUSPICIOUS_LENGTH:g} m "
                            "(millimetres typed as metres?)")
    if max(abs(c) for c in com) > SUSPICIOUS_LENGTH:
        warnings.append(f"link {index}{f' ({name!r})' if name else ''}: com is more than "
                        f"{SUSPICIOUS_LENGTH:g} m from the frame origin (millimetres?)")
    return warnings


def validate_robot(robot: Robot) -> list[str]:
    """Validate every field of `robot`; raise `RobotError` or return warnings."""
    if not isinstance(robot.name, str) or not robot.name.strip():
        raise RobotError("name must be a non-empty string", field="name")
    if robot.angle_unit not in ("deg", "rad"):
        raise RobotError(f"angle_unit must be 'deg' or 'rad', got {robot.angle_unit!r}",
                         field="angle_unit")
    if len(robot.gravity) != 3:
        raise RobotError("gravity must have 3 components", field="gravity")
    for g in robot.gravity:
        _finite(g, link=None, name="", field_name="gravity")
    if len(robot.links) == 0:
        raise RobotError("a robot needs at least one link", field="link")
    warnings: list[str] = []
    for i, link in enumerate(robot.links, start=1):
        if not isinstance(link, Link):
            raise RobotError(f"expected a Link, got {type(link).__name__}", link=i, field="link")
        warnings += validate_link(link, i)
    return warnings
