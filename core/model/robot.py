"""A serial arm described by its DH and inertia tables (a robot file). Immutable.

A `Robot` is frozen data: the DH and inertia rows of a serial arm, as a robot file
(docs/robot-file.md) or a paper's table gives them. Built, it is validated (every
field, naming the link) and compiled into a `Model` (`core.model.model`: one chain on
the base, no loops), which every algorithm takes; the Robot shows the model's sizes and
joint table too. Units are SI and radians internally; `angle_unit` only records how a
file writes its angles.

DH convention (Saha 1999, App. A = standard DH with d written b): the
transform from frame i-1 to frame i is Rz(theta_i) Tz(b_i) Tx(a_i) Rx(alpha_i).
Joint i moves about / along z_{i-1}. Link i's own frame is frame i; its mass
centre `com` and inertia about the mass centre are given in that frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import RobotError
from .compile import compile_model
from .model import Described, Model
from .parts import DEFAULT_GRAVITY, QUATERNION_TOLERANCE, Chain, JointType, Link
from .units import MAX_ABS
#: A link longer than this (m) is probably millimetres typed as metres.
SUSPICIOUS_LENGTH = 10.0
#: The lightest link, kg (a milligram). Lighter ones are placeholders for "massless"
#: and make the dynamics lose every digit: a slider of 1e-15 kg beside 1 kg links makes
#: the loops' Delassus matrix look singular, one of 5e-324 kg overflows. The lightest
#: moving link of the 47 URDFs of example-robot-data that load weighs 9 g.
MIN_MASS = 1e-6
#: The smallest principal moment of inertia about the mass centre, kg m^2 (a milligram
#: at a millimetre). The smallest in example-robot-data's URDFs is 1.7e-7 kg m^2.
MIN_INERTIA = 1e-12


@dataclass(frozen=True)
class Robot(Described):
    """A serial arm: DH and inertia tables plus gravity. Immutable.

    Construction validates every field and raises `RobotError` naming the
    link and field; an invalid Robot cannot exist. `model` is its compiled Model.
    """

    name: str
    links: tuple[Link, ...]
    gravity: tuple[float, float, float] = DEFAULT_GRAVITY
    description: str = ""
    angle_unit: str = "deg"
    warnings: tuple[str, ...] = field(default=(), compare=False)
    model: Model = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "links", tuple(self.links))
        object.__setattr__(self, "gravity", tuple(float(g) for g in self.gravity))
        object.__setattr__(self, "warnings", tuple(validate_robot(self)))
        # compiled once, at construction: one chain on the base, every joint actuated
        object.__setattr__(self, "model", compile_model(
            name=self.name, chains=(Chain("arm", self.links),), gravity=self.gravity,
            joint_names=self.link_names, actuated_flags=[True] * len(self.links)))

    @property
    def link_names(self) -> list[str]:
        """The links' names; "link i" where a link has none."""
        return [link.name or f"link {i + 1}" for i, link in enumerate(self.links)]

    def with_links(self, links, **changes) -> "Robot":
        """A new robot with other links in joint order (and other `changes` of its
        fields), validated."""
        return replace(self, links=tuple(links), **changes)

    def __hash__(self) -> int:  # tuples of floats: cheap and stable
        return hash((self.name, self.links, self.gravity))


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
    if abs(x) > MAX_ABS:
        raise RobotError(f"value {x:g} is out of range (|x| <= {MAX_ABS:g})", link=link,
                         link_name=name, field=field_name)
    return x


def validate_link(link: Link, index: int) -> list[str]:
    """Check one link; raise `RobotError` (1-based `index`) or return warnings."""
    name = link.name
    where = dict(link=index, name=name)
    if not isinstance(link.joint, JointType):
        kinds = ", ".join(repr(j.value) for j in JointType)
        raise RobotError(f"joint must be one of {kinds}, got {link.joint!r}",
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
    if link.mass < MIN_MASS:
        raise RobotError(f"mass {link.mass:g} kg is below the floor of {MIN_MASS:g} kg: the "
                         "dynamics of a lighter link lose every digit (a massless part is a "
                         "part of the link it is fixed to)", link=index, link_name=name,
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
    if eig[0] < MIN_INERTIA:
        raise RobotError(f"inertia's smallest principal moment {eig[0]:.3g} kg m^2 is below "
                         f"the floor of {MIN_INERTIA:g} kg m^2 (a milligram at a millimetre)",
                         link=index, link_name=name, field="inertia")

    if not link.joint.is_dh:
        _validate_joint_of_several(link, where)
    if link.limits is not None:
        if not link.joint.is_dh:
            raise RobotError(f"a {link.joint.value} joint has no limits (limits apply to "
                             "revolute and prismatic joints)", link=index, link_name=name,
                             field="limits")
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


def _validate_joint_of_several(link: Link, where: dict) -> None:
    """The fields of a spherical, universal or free joint: its placement (xyz, rpy), its
    home values (a unit quaternion within QUATERNION_TOLERANCE, normalised by Link), no
    DH values (a, b, alpha, theta describe DH rows only)."""
    index, name = where["link"], where["name"]
    kind = link.joint.value
    for f in ("a", "b", "alpha", "theta"):
        if getattr(link, f) != 0.0:
            raise RobotError(f"a {kind} joint is placed by xyz and rpy, not by DH values: "
                             f"{f} must be 0 (got {getattr(link, f):g})", link=index,
                             link_name=name, field=f)
    for f in ("xyz", "rpy"):
        value = getattr(link, f)
        if len(value) != 3:
            raise RobotError(f"{f} must have 3 components", link=index, link_name=name,
                             field=f)
        for v in value:
            _finite(v, field_name=f, **where)
    if link.home is None:
        return
    layout = {"spherical": "a quaternion [qx, qy, qz, qw]", "universal": "two angles",
              "free": "[x, y, z, qx, qy, qz, qw]"}[kind]
    if len(link.home) != link.joint.nq:
        raise RobotError(f"home of a {kind} joint must be {layout} ({link.joint.nq} "
                         f"numbers), got {len(link.home)}", link=index, link_name=name,
                         field="home")
    for v in link.home:
        _finite(v, field_name="home", **where)
    if kind in ("spherical", "free"):
        norm = math.sqrt(sum(v * v for v in link.home[-4:]))
        if abs(norm - 1.0) > QUATERNION_TOLERANCE:
            raise RobotError(f"the home quaternion has length {norm:.6g}, far from 1: "
                             f"[qx, qy, qz, qw] must be a unit quaternion (scalar last; "
                             f"within {QUATERNION_TOLERANCE:g}, it is normalised)",
                             link=index, link_name=name, field="home")


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
        if not link.joint.is_dh:
            raise RobotError(f"a robot's joints are DH rows (revolute or prismatic); a "
                             f"{link.joint.value} joint needs a mechanism (chains of links)",
                             link=i, link_name=link.name, field="joint")
    return warnings
