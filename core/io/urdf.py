"""Read and write URDF files: robots from elsewhere as mechanisms (docs/urdf.md).

Public functions
----------------
load_urdf(path, floating_base=False) -> Mechanism
    Read a URDF (revolute, continuous, prismatic, fixed and floating joints) into a tree
    of DH chains with their bases placed; with floating_base=True the root link is a
    free body (a free joint, first in q and in the rates, home at the origin with the
    identity orientation). The only exception it raises is `UrdfFileError`
    (a `MechanismFileError`), naming the file, the joint or link and the field.
save_urdf(mech, path) -> tuple[str, ...]
    Write a Mechanism (or a Robot) as a URDF, atomically; returns the warnings
    (a gravity other than [0, 0, -9.81], drives' gear ratios and rotor inertias, which
    URDF cannot hold). Loops are refused.
mechanism_from_urdf(text, source) / mechanism_to_urdf(mech)
    The same, from and to a string.

Rules (the contract of docs/urdf.md)
------------------------------------
* Joint order: the URDF's moving joints depth first from the root, children in the
  order of the file. A body with several moving children starts a chain per child
  after the first (a tree); each chain is named after its first URDF joint, each link
  after the URDF link its joint moves.
* Joint values: ArmDyn value = URDF value + q_home, with the same sense of motion;
  q_home (the links' theta / b) is the URDF's zero pose. Limits follow the same rule.
* Friction: a moving joint's <dynamics damping friction> is its viscous and Coulomb
  friction (`Link.friction_viscous`, `friction_coulomb`), read and written.
* Fixed joints merge their child links into the moving body above them (mass, mass
  centre and inertia summed); the base's own mass is dropped (it does not move).
* DH frames (standard DH of docs/robot-file.md, built at the zero pose, world frame):
    frame 0 of a chain : z on the chain's first joint axis, origin the projection of
                         the parent frame's origin onto that axis, x the parent's x
                         projected normal to the axis (its y when x is within 8 deg of
                         the axis); the parent frame is the base, or the DH frame of
                         the link the chain hangs on; frame 0 becomes `Chain.base`.
    frame i            : z on the axis of the next joint of the chain; origin and x on
                         the common normal from axis i to that axis (a >= 0); for axes
                         within `PARALLEL_TOLERANCE` of parallel (either sense) the
                         next axis is taken as exactly parallel (its sense kept) and
                         the normal through the previous origin is used (b = 0);
                         coincident axes keep the previous x.
    last frame         : a link with no moving child keeps its joint frame
                         (a = b = alpha = 0, home value 0).
  A prismatic joint's axis is the line through its URDF joint origin. DH lengths and
  mass centres are rounded to 15 significant digits (below 1e-12 m: 0) and angles
  within 1e-12 rad of a multiple of 90 deg set to it;
  each frame is then rebuilt from the rounded row, and the inertias are expressed in
  the frames of the model so built.
* Free bodies: with floating_base=True the root link (with the links fixed to it, its
  mass now counted) hangs on a free joint; a `floating` joint from the root link (the
  fixed base) makes its child a free body, home at the joint's pose. A free body's
  moving children start chains on it. A `floating` joint anywhere else is refused
  (a free joint joins a body to the base).
* Refused, with the joint's name and the reason: planar joints, floating joints below
  a moving link, mimic joints, unknown joint types, a moving link (with the links fixed
  to it) without mass.
* Written (save_urdf): a mechanism whose only free joint is the root of a chain that
  holds every other chain writes that body as the URDF's root link (URDF's own
  convention for a floating base; its home pose is not written); other free joints as
  `floating` joints from "base". Spherical and universal joints are refused.
"""
from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .atomic import write_atomically
from ..errors import (ArgumentTypeError, ArmDynError, MechanismError, MechanismFileError,
                      RobotError)
from ..model.mechanism import MAX_JOINTS, Mechanism
from ..model.parts import DEFAULT_GRAVITY, Chain, JointType, Link, Placement
from ..model.rotations import quaternion_rpy, rotation_rpy, rpy_from_rotation
from ..model.robot import Robot
from ..model.units import MAX_ABS
from .toml_io import display_path

__all__ = ["MAX_NAME_CHARS", "MAX_URDF_BYTES", "PARALLEL_TOLERANCE", "UNLIMITED_PRISMATIC_RANGE",
           "UrdfFileError", "is_urdf", "load_urdf", "mechanism_from_urdf", "mechanism_to_urdf",
           "save_urdf"]

#: Consecutive joint axes closer than this to parallel (either sense) are taken as
#: parallel, rad (about 20 arc seconds): files writing pi as 3.14159 or pi/2 as 1.5708
#: are off by 3e-6 rad, and a skew pair that close would put the common normal km away.
PARALLEL_TOLERANCE = 1e-4
#: The name of a floating root link called "base" in the URDF ("base" is ArmDyn's fixed
#: base).
FLOATING_BASE_NAME = "base_body"
#: A saved prismatic joint without limits gets this range, m (URDF has no unlimited one).
UNLIMITED_PRISMATIC_RANGE = (-1000.0, 1000.0)
#: Largest URDF read, bytes of a file or characters of a text: 4 MiB, twenty times the
#: largest of example-robot-data's (tiago_dual.urdf, 0.2 MB).
MAX_URDF_BYTES = 4 << 20
#: Longest name (robot, link, joint, and the links a joint names), characters; the
#: longest in example-robot-data's files has 56.
MAX_NAME_CHARS = 256
#: DH lengths below this (m) are set to 0, angles this close to a multiple of 90 deg
#: are set to it (rad).
_CLEAN = 1e-12
#: Notice of a snapped pair: axes further than this from parallel (rad) are reported.
_SNAP_NOTICE = 1e-10

_MOVING = {"revolute": JointType.REVOLUTE, "continuous": JointType.REVOLUTE,
           "prismatic": JointType.PRISMATIC}
_CANNOT = {
    "planar": "a planar joint (3 degrees of freedom) cannot be a DH joint; write it as two "
              "prismatic joints and a revolute one",
}


class UrdfFileError(MechanismFileError):
    """A URDF could not be read or written. ``str(err)`` reads
    ``"<path>: joint 'elbow', field 'axis.xyz': ..."``; ``joint`` is the URDF joint's name
    (or None), ``link_name`` the URDF link's name ("" if none), ``field`` the element and
    attribute ("origin.rpy", "limit.lower", "inertial.mass.value")."""

    def __init__(self, path: str, reason: str, *, joint: str | None = None,
                 link_name: str = "", field: str = "", loop: str | None = None) -> None:
        parts = []
        if joint is not None:
            parts.append(f"joint {joint!r}")
        if link_name:
            parts.append(f"link {link_name!r}")
        if loop is not None:
            parts.append(f"loop {loop!r}")
        if field:
            parts.append(f"field '{field}'")
        where = ", ".join(parts)
        ArmDynError.__init__(self, f"{path}: {where}: {reason}" if where else f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason
        self.joint = joint
        self.link = None
        self.link_name = link_name
        self.field = field
        self.chain = None
        self.loop = loop


class _Problem(Exception):
    """A UrdfFileError without the file: raised while reading, given the path on the way
    out."""

    def __init__(self, reason: str, *, joint: str | None = None, link: str = "",
                 field: str = "", loop: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.joint, self.link, self.field, self.loop = reason, joint, link, \
            field, loop

    def at(self, path: str) -> UrdfFileError:
        return UrdfFileError(path, self.reason, joint=self.joint, link_name=self.link,
                             field=self.field, loop=self.loop)


# ======================================================================================
# Rigid transforms (4x4 homogeneous matrices, m and rad)
# ======================================================================================

def is_urdf(path) -> bool:
    """True if `path` names a URDF file (the suffix ``.urdf``, any case)."""
    return Path(path).suffix.lower() == ".urdf"


def _transform(R: np.ndarray, p) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def _origin(xyz, rpy) -> np.ndarray:
    """The transform of a URDF <origin xyz rpy>: Tp(xyz) Rz(y) Ry(p) Rx(r)."""
    return _transform(rotation_rpy(rpy), xyz)


def _dh_row(a: float, b: float, alpha: float, theta: float) -> np.ndarray:
    """Rz(theta) Tz(b) Tx(a) Rx(alpha): frame i-1 -> frame i (docs/robot-file.md)."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct],
                     [st, ct * ca, -ct * sa, a * st],
                     [0.0, sa, ca, b],
                     [0.0, 0.0, 0.0, 1.0]])


def _rz(theta: float) -> np.ndarray:
    return _dh_row(0.0, 0.0, 0.0, theta)


def _tz(b: float) -> np.ndarray:
    return _dh_row(0.0, b, 0.0, 0.0)


def _inverse(T: np.ndarray) -> np.ndarray:
    R, p = T[:3, :3], T[:3, 3]
    return _transform(R.T, -R.T @ p)


def _clean_length(x: float) -> float:
    """0 below 1e-12 m, else 15 significant digits (0.42499999999999993 -> 0.425)."""
    return 0.0 if abs(x) < _CLEAN else float(f"{x:.15g}")


def _clean_angle(x: float) -> float:
    """x (rad, in [-pi, pi]) set to the multiple of pi/2 within 1e-12 rad of it, if any;
    -pi written as pi."""
    quarter = round(x / (math.pi / 2))
    if abs(x - quarter * (math.pi / 2)) < _CLEAN:
        return {0: 0.0, 1: math.pi / 2, -1: -math.pi / 2, 2: math.pi, -2: math.pi}.get(
            quarter, quarter * (math.pi / 2))
    return float(x) + 0.0 if x > -math.pi else math.pi


# ======================================================================================
# Reading: the URDF's tree
# ======================================================================================

@dataclass
class _UrdfJoint:
    name: str
    kind: str                  # the URDF type
    parent: str
    child: str
    origin: np.ndarray         # (4, 4) parent link frame -> joint frame at zero
    axis: np.ndarray           # (3,) unit, in the joint frame
    limits: tuple[float, float] | None   # URDF values, rad or m
    damping: float = 0.0       # <dynamics damping>: viscous friction, N m s/rad or N s/m
    friction: float = 0.0      # <dynamics friction>: Coulomb friction, N m or N


@dataclass
class _Body:
    """A moving body: the link a moving joint moves and the links fixed to it."""
    joint: _UrdfJoint | None   # None: the root link on a free joint (floating_base)
    links: list[str] = field(default_factory=list)
    parent: int = -1           # body index of the parent body, -1 for the base
    free: bool = False         # on a free joint (the root, or a URDF floating joint)


#: A number as URDF writes one (XML Schema's double without INF and NaN): digits with an
#: optional point and exponent, ASCII only; Python's float() would also take "1_0",
#: "nan", "inf", "0x1p3"'s cousins and non-ASCII digits.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
#: What separates the numbers of an attribute: XML white space (commas, too).
_SEPARATORS = re.compile(r"[ \t\r\n,]+")


def _shown(text: str, most: int = 60) -> str:
    """repr(text), cut to about `most` characters for a message."""
    return repr(text) if len(text) <= most else f"{text[:most]!r}... ({len(text)} characters)"


def _numbers(text: str | None, n: int, default, *, field: str, joint=None, link="") -> tuple:
    """n finite numbers from an attribute's text (None: `default`), each as `_NUMBER`
    reads them."""
    if text is None:
        if default is None:
            raise _Problem(f"missing; expected {n} number{'s' if n > 1 else ''}",
                           joint=joint, link=link, field=field)
        return tuple(default)
    words = [w for w in _SEPARATORS.split(text) if w]
    if len(words) != n:
        raise _Problem(f"expected {n} number{'s' if n > 1 else ''}, got "
                       f"{_shown(text.strip())}", joint=joint, link=link, field=field)
    out = []
    for w in words:
        if w.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise _Problem(f"expected finite numbers with |x| <= {MAX_ABS:g}, got {w!r}",
                           joint=joint, link=link, field=field)
        if not _NUMBER.fullmatch(w):
            raise _Problem(f"{_shown(w)} is not a number (in {_shown(text.strip())}); numbers "
                           "are digits with an optional point and exponent, such as 0.25 or "
                           "-1.5e-3", joint=joint, link=link, field=field)
        x = float(w)
        if not math.isfinite(x) or abs(x) > MAX_ABS:
            raise _Problem(f"expected finite numbers with |x| <= {MAX_ABS:g}, got {_shown(w)}",
                           joint=joint, link=link, field=field)
        out.append(x)
    return tuple(out)


def _name(elem, attribute: str, *, field: str, joint=None, link="") -> str | None:
    """The name in `attribute` of `elem` (None if absent), at most MAX_NAME_CHARS long."""
    value = elem.get(attribute)
    if value is not None and len(value) > MAX_NAME_CHARS:
        raise _Problem(f"a name of {len(value)} characters ({_shown(value, 40)}); names are "
                       f"at most {MAX_NAME_CHARS}", joint=joint, link=link, field=field)
    return value


def _origin_of(elem, *, joint=None, link="", prefix="origin") -> np.ndarray:
    o = elem.find("origin")
    if o is None:
        return np.eye(4)
    xyz = _numbers(o.get("xyz"), 3, (0, 0, 0), field=f"{prefix}.xyz", joint=joint, link=link)
    rpy = _numbers(o.get("rpy"), 3, (0, 0, 0), field=f"{prefix}.rpy", joint=joint, link=link)
    return _origin(xyz, rpy)


def _read_joint(e) -> _UrdfJoint:
    name = _name(e, "name", field="name")
    if not name:
        raise _Problem("a <joint> without a name; every joint needs a unique name",
                       field="name")
    kind = e.get("type")
    if kind is None:
        raise _Problem("missing; expected revolute, continuous, prismatic or fixed",
                       joint=name, field="type")
    if kind in _CANNOT:
        raise _Problem(_CANNOT[kind], joint=name, field="type")
    if kind not in _MOVING and kind not in ("fixed", "floating"):
        raise _Problem(f"unknown joint type {_shown(kind)}; expected revolute, continuous, "
                       "prismatic, fixed or floating", joint=name, field="type")
    if e.find("mimic") is not None:
        leader = _shown(e.find("mimic").get("joint") or "", 40)
        raise _Problem(f"a mimic joint (its value tied to joint {leader}) cannot be "
                       "expressed: ArmDyn's "
                       "joints are independent; remove the <mimic> element to read it as "
                       "a joint of its own, or make it fixed", joint=name, field="mimic")
    ends = []
    for tag in ("parent", "child"):
        t = e.find(tag)
        if t is None or not t.get("link"):
            raise _Problem(f"missing <{tag} link=\"...\"/>", joint=name, field=f"{tag}.link")
        ends.append(_name(t, "link", joint=name, field=f"{tag}.link"))
    origin = _origin_of(e, joint=name)
    axis = np.array([1.0, 0.0, 0.0])
    limits = None
    if kind in _MOVING:
        a = e.find("axis")
        if a is not None:
            axis = np.array(_numbers(a.get("xyz"), 3, (1, 0, 0), field="axis.xyz", joint=name))
        norm = float(np.linalg.norm(axis))
        if not norm > 1e-9:
            raise _Problem("the axis is zero; expected a direction such as \"0 0 1\"",
                           joint=name, field="axis.xyz")
        axis = axis / norm
        lim = e.find("limit")
        if kind != "continuous" and lim is not None:
            lo = _numbers(lim.get("lower"), 1, (0.0,), field="limit.lower", joint=name)[0]
            hi = _numbers(lim.get("upper"), 1, (0.0,), field="limit.upper", joint=name)[0]
            if lo > hi:
                raise _Problem(f"lower limit {lo:g} is above upper limit {hi:g}", joint=name,
                               field="limit")
            limits = (lo, hi) if lo < hi else None  # lower == upper (both 0 when left out)
    dyn = e.find("dynamics")
    damping = friction = 0.0
    if dyn is not None:
        damping, friction = (_numbers(dyn.get(k), 1, (0.0,), field=f"dynamics.{k}",
                                      joint=name)[0] for k in ("damping", "friction"))
        for k, v in (("damping", damping), ("friction", friction)):
            if not v >= 0.0:
                raise _Problem(f"{k} must be >= 0, got {v:g}", joint=name,
                               field=f"dynamics.{k}")
    return _UrdfJoint(name, kind, ends[0], ends[1], origin, axis, limits, damping, friction)


def _read_inertial(e, link: str):
    """(mass kg, mass centre (3,) and inertia (3, 3) about it, both in the link frame), or
    None for a link without <inertial>."""
    ine = e.find("inertial")
    if ine is None:
        return None
    origin = _origin_of(ine, link=link, prefix="inertial.origin")
    m = ine.find("mass")
    if m is None:
        raise _Problem("an <inertial> without <mass value=\"...\"/>", link=link,
                       field="inertial.mass")
    mass = _numbers(m.get("value"), 1, None, field="inertial.mass.value", link=link)[0]
    if mass < 0:
        raise _Problem(f"mass must be >= 0 kg, got {mass:g}", link=link,
                       field="inertial.mass.value")
    t = ine.find("inertia")
    if t is None:
        raise _Problem("an <inertial> without <inertia .../>", link=link,
                       field="inertial.inertia")
    xx, xy, xz, yy, yz, zz = (_numbers(t.get(k), 1, None, field=f"inertial.inertia.{k}",
                                       link=link)[0]
                              for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    R = origin[:3, :3]
    inertia = R @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ R.T
    return mass, origin[:3, 3].copy(), inertia


@dataclass
class _Tree:
    """The URDF at its zero pose: link frames in the root's frame and the moving bodies in
    depth-first order."""
    name: str
    root: str
    pose: dict                         # link name -> (4, 4) pose at zero, root frame
    inertial: dict                     # link name -> _read_inertial(...)
    bodies: list[_Body]
    warnings: list[str]


def _refuse_entity(name, is_parameter_entity, *rest) -> None:
    raise _Problem(f"the document type declares the entity {_shown(name, 40)} "
                   "(<!ENTITY ...>): entity declarations are refused, as defusedxml does (an "
                   "entity can expand a small file into gigabytes); write the text out")


def _parse_xml(text: str) -> ET.Element:
    """The element tree of `text`, read by expat with entity declarations refused (the
    ElementTree parser gives no hook for them); namespaced names as ElementTree writes
    them ("{uri}tag")."""
    parser = xml.parsers.expat.ParserCreate(namespace_separator="}")
    builder = ET.TreeBuilder()

    def fixed(name: str) -> str:
        return "{" + name if "}" in name else name

    parser.StartElementHandler = lambda tag, attrib: builder.start(
        fixed(tag), {fixed(k): v for k, v in attrib.items()})
    parser.EndElementHandler = lambda tag: builder.end(fixed(tag))
    parser.CharacterDataHandler = builder.data
    parser.EntityDeclHandler = _refuse_entity
    parser.UnparsedEntityDeclHandler = _refuse_entity
    parser.buffer_text = True
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as e:  # the message gives the line and column
        raise _Problem(f"not well-formed XML: {e}") from None
    return builder.close()


def _read_tree(text: str, floating_base: bool = False) -> _Tree:
    root = _parse_xml(text)
    if root.tag != "robot":
        tag = root.tag if len(root.tag) <= 40 else root.tag[:40] + "..."
        raise _Problem(f"the top element is <{tag}>; a URDF's is <robot>")
    robot_name = _name(root, "name", field="robot.name") or ""
    links: dict[str, object] = {}
    for e in root.findall("link"):
        name = _name(e, "name", field="name")
        if not name:
            raise _Problem("a <link> without a name", field="name")
        if name in links:
            raise _Problem("two <link> elements have this name", link=name, field="name")
        links[name] = e
    joints: list[_UrdfJoint] = []
    by_child: dict[str, _UrdfJoint] = {}
    names = set()
    for e in root.findall("joint"):
        j = _read_joint(e)
        if j.name in names:
            raise _Problem("two <joint> elements have this name", joint=j.name, field="name")
        names.add(j.name)
        for tag, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                raise _Problem(f"{link!r} is not a <link> of this file", joint=j.name,
                               field=f"{tag}.link")
        if j.child in by_child:
            raise _Problem(f"link {j.child!r} is already the child of joint "
                           f"{by_child[j.child].name!r}: a URDF is a tree (closed loops "
                           "cannot be written in URDF)", joint=j.name, field="child.link")
        by_child[j.child] = j
        joints.append(j)
    if not links:
        raise _Problem("no <link> elements")
    moving = sum(j.kind in _MOVING or j.kind == "floating" for j in joints)
    if moving > MAX_JOINTS:  # before any pose is computed
        raise _Problem(f"{moving} revolute, continuous, prismatic and floating joints; a "
                       f"mechanism has at most {MAX_JOINTS}")
    roots = [name for name in links if name not in by_child]
    if len(roots) != 1:
        raise _Problem("the joints form a cycle: every link is some joint's child" if not roots
                       else f"{len(roots)} root links ({', '.join(map(repr, roots[:5]))}); "
                            "a URDF is one tree with a single root link")
    children: dict[str, list[_UrdfJoint]] = {name: [] for name in links}
    for j in joints:
        children[j.parent].append(j)

    # depth first from the root, children in the file's order: poses at zero, bodies
    warnings: list[str] = []
    pose = {roots[0]: np.eye(4)}
    body_of = {roots[0]: -1}
    bodies: list[_Body] = []
    if floating_base:  # the root link's group is a body of its own, on a free joint
        bodies.append(_Body(None, [roots[0]], -1, free=True))
        body_of[roots[0]] = 0
    stack = list(reversed(children[roots[0]]))
    while stack:
        j = stack.pop()
        pose[j.child] = pose[j.parent] @ j.origin
        if j.kind == "floating":
            if body_of[j.parent] != -1:
                raise _Problem("a floating joint below a moving link (or below a floating "
                               "base) cannot be read: a free joint joins a body to the "
                               "base; ArmDyn reads a floating joint from the root link only",
                               joint=j.name, field="type")
            bodies.append(_Body(j, [j.child], -1, free=True))
            body_of[j.child] = len(bodies) - 1
        elif j.kind in _MOVING:
            bodies.append(_Body(j, [j.child], body_of[j.parent]))
            body_of[j.child] = len(bodies) - 1
        else:
            body_of[j.child] = body_of[j.parent]
            if body_of[j.parent] >= 0:
                bodies[body_of[j.parent]].links.append(j.child)
        stack.extend(reversed(children[j.child]))
    if len(pose) != len(links):
        lost = [name for name in links if name not in pose]
        raise _Problem(f"links {', '.join(map(repr, lost[:5]))} are not reachable from the "
                       f"root {roots[0]!r}: the joints form a cycle")
    if not bodies:
        raise _Problem("no revolute, continuous, prismatic or floating joint: nothing "
                       "moves (a floating base: load_urdf(path, floating_base=True))")
    inertial = {name: _read_inertial(e, name) for name, e in links.items()}
    damped = [j.name for j in joints if (j.damping or j.friction) and j.kind not in _MOVING]
    if damped:
        warnings.append(f"<dynamics> damping and friction are read for revolute, continuous "
                        f"and prismatic joints only (not for joints "
                        f"{', '.join(map(repr, damped))})")
    return _Tree(robot_name, roots[0], pose, inertial, bodies, warnings)


def _merged_inertia(tree: _Tree, body: _Body):
    """Mass (kg), mass centre (3,) and inertia about it (3, 3) of a body's links, root
    frame at the zero pose; mass 0 when none of them has any."""
    parts = []
    for name in body.links:
        ine = tree.inertial[name]
        if ine is None:
            continue
        m, c, I = ine
        R, p = tree.pose[name][:3, :3], tree.pose[name][:3, 3]
        parts.append((m, R @ c + p, R @ I @ R.T))
    mass = sum(m for m, _, _ in parts)
    if mass <= 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    com = sum(m * c for m, c, _ in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, I in parts:  # parallel axes to the common mass centre
        d = c - com
        inertia += I + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


# ======================================================================================
# Reading: DH frames from the joint axes
# ======================================================================================

def _first_frame(parent: np.ndarray, point: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """A chain's frame 0: z along `axis` through `point`, origin the projection of the
    parent frame's origin onto that line, x the parent's x (or y, if x is within 8 deg of
    the axis) projected normal to it."""
    o = parent[:3, 3]
    origin = point + float((o - point) @ axis) * axis
    ref = parent[:3, 0] if abs(float(parent[:3, 0] @ axis)) < 0.99 else parent[:3, 1]
    x = ref - float(ref @ axis) * axis
    x /= np.linalg.norm(x)
    return _transform(np.column_stack([x, np.cross(axis, x), axis]), origin)


def _next_frame(prev: np.ndarray, point: np.ndarray, axis: np.ndarray):
    """Frame i from frame i-1 (z on axis i) and axis i+1 (a line through `point` along the
    unit `axis`): z along axis i+1, origin and x on the common normal (a >= 0). Returns
    (frame, angle from parallel in rad, True if taken as parallel)."""
    z0, x0, o = prev[:3, 2], prev[:3, 0], prev[:3, 3]
    n = np.cross(z0, axis)
    s = float(np.linalg.norm(n))
    c = float(z0 @ axis)
    off_parallel = math.atan2(s, abs(c))
    w = point - o
    if off_parallel <= PARALLEL_TOLERANCE:
        # parallel (either sense): the common normal through O_{i-1} (b = 0)
        z = z0 if c > 0 else -z0
        perp = w - float(w @ z0) * z0
        d = float(np.linalg.norm(perp))
        x = perp / d if d > _CLEAN else x0
        origin = o + perp if d > _CLEAN else o.copy()
        return _transform(np.column_stack([x, np.cross(z, x), z]), origin), off_parallel, True
    # skew or intersecting: feet of the common normal, O_{i-1} + t0 z0 and point + t1 axis
    x = n / s
    t0 = float(np.cross(w, axis) @ n) / (s * s)
    t1 = float(np.cross(w, z0) @ n) / (s * s)
    a = float((point + t1 * axis - o - t0 * z0) @ x)
    if a < -_CLEAN:  # (intersecting axes keep x = z_{i-1} x z_i)
        x, a = -x, -a
    origin = o + t0 * z0 + a * x
    return _transform(np.column_stack([x, np.cross(axis, x), axis]), origin), off_parallel, False


def _dh_parameters(prev: np.ndarray, frame: np.ndarray) -> tuple[float, float, float, float]:
    """(a, b, alpha, theta) with prev @ Rz(theta) Tz(b) Tx(a) Rx(alpha) = frame (frame's x
    normal to prev's z and meeting its z axis), cleaned (`_clean_length`, `_clean_angle`)."""
    T = _inverse(prev) @ frame
    theta = math.atan2(T[1, 0], T[0, 0])
    alpha = math.atan2(T[2, 1], T[2, 2])
    a = T[0, 3] * math.cos(theta) + T[1, 3] * math.sin(theta)
    return _clean_length(a), _clean_length(T[2, 3]), _clean_angle(alpha), _clean_angle(theta)


def _placement(parent: np.ndarray, frame: np.ndarray) -> Placement:
    T = _inverse(parent) @ frame
    return Placement(xyz=tuple(_clean_length(v) for v in T[:3, 3]),
                     rpy=tuple(_clean_angle(v) for v in rpy_from_rotation(T[:3, :3])))


def _mass_properties_in(frame: np.ndarray, mass: float, com: np.ndarray, inertia: np.ndarray):
    """com (3-tuple, m) and inertia (xx, yy, zz, xy, xz, yz) in `frame`, as a Link holds."""
    R = frame[:3, :3]
    c = R.T @ (com - frame[:3, 3])
    I = R.T @ inertia @ R
    scale = max(abs(I[0, 0]), abs(I[1, 1]), abs(I[2, 2]))
    clean = [0.0 if abs(v) < _CLEAN * scale else float(v) + 0.0
             for v in (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2])]
    return tuple(_clean_length(v) for v in c), tuple(clean)


def _build(tree: _Tree, source: str) -> Mechanism:
    bodies = tree.bodies
    warnings = list(tree.warnings)
    # world axes at the zero pose
    points, axes = [], []
    for body in bodies:
        if body.free:  # (no axis: moved by a free joint)
            points.append(None)
            axes.append(None)
            continue
        j = body.joint
        joint_frame = tree.pose[j.parent] @ j.origin
        points.append(joint_frame[:3, 3].copy())
        axes.append(joint_frame[:3, :3] @ j.axis)
    # chains: each body continues its parent's chain if it is the parent's first moving
    # child, else starts a chain of its own; a free body is a chain of its own, and its
    # children start chains on it (its frame is no DH frame of the next joint)
    first_child: dict[int, int] = {}
    for k, body in enumerate(bodies):
        first_child.setdefault(body.parent, k)
    chains: list[list[int]] = []
    chain_of: dict[int, int] = {}
    for k, body in enumerate(bodies):
        if (body.parent >= 0 and first_child[body.parent] == k and not body.free
                and not bodies[body.parent].free):
            chains[chain_of[body.parent]].append(k)
            chain_of[k] = chain_of[body.parent]
        else:
            chains.append([k])
            chain_of[k] = len(chains) - 1

    home_frame: dict[int, np.ndarray] = {}   # the model's frame of body k at q_home
    built_name = {k: body.links[0] for k, body in enumerate(bodies)}  # its link's name
    built: list[Chain] = []
    for members in chains:
        head = bodies[members[0]]
        if head.free:
            built.append(_free_chain(tree, head))
            home_frame[members[0]] = tree.pose[head.links[0]]
            built_name[members[0]] = built[-1].links[0].name
            continue
        parent_frame = np.eye(4) if head.parent < 0 else home_frame[head.parent]
        raw0 = _first_frame(parent_frame, points[members[0]], axes[members[0]])
        base = _placement(parent_frame, raw0)
        prev = parent_frame @ _transform(base.rotation, base.xyz)
        links = []
        for i, k in enumerate(members):
            body, j = bodies[k], bodies[k].joint
            nxt = members[i + 1] if i + 1 < len(members) else None
            if nxt is None:  # a link without a moving child keeps its joint frame
                a = b = alpha = theta = 0.0
            else:
                raw, off, snapped = _next_frame(prev, points[nxt], axes[nxt])
                a, b, alpha, theta = _dh_parameters(prev, raw)
                follower = bodies[nxt].joint.name
                if snapped and off > _SNAP_NOTICE:
                    warnings.append(f"joints {j.name!r} and {follower!r}: axes {off:.3g} rad "
                                    f"from parallel, taken as parallel (tolerance "
                                    f"{PARALLEL_TOLERANCE:g} rad)")
                elif not snapped and off < 1e3 * PARALLEL_TOLERANCE and max(abs(a), abs(b)) > 10:
                    warnings.append(f"joints {j.name!r} and {follower!r}: axes {off:.3g} rad "
                                    f"from parallel (more than the {PARALLEL_TOLERANCE:g} rad "
                                    "taken as parallel); their common normal is far away "
                                    f"(a = {a:.4g} m, b = {b:.4g} m)")
            frame = prev @ _dh_row(a, b, alpha, theta)
            home_frame[k] = frame
            mass, com, inertia = _merged_inertia(tree, body)
            if mass <= 0.0:
                merged = body.links[1:]
                raise _Problem("no mass: a moving link needs mass > 0 and a positive-definite "
                               "inertia" + (f" (with the links fixed to it: "
                                            f"{', '.join(map(repr, merged))})" if merged else
                                            "") + "; give it an <inertial>",
                               joint=j.name, link=j.child, field="inertial")
            com_dh, inertia_dh = _mass_properties_in(frame, mass, com, inertia)
            kind = _MOVING[j.kind]
            q_home = theta if kind is JointType.REVOLUTE else b
            limits = None if j.limits is None else (j.limits[0] + q_home, j.limits[1] + q_home)
            links.append(Link(joint=kind, a=a, b=b, alpha=alpha, theta=theta, mass=mass,
                              com=com_dh, inertia=inertia_dh, limits=limits, name=j.child,
                              friction_viscous=j.damping, friction_coulomb=j.friction))
            prev = frame
        parent_link = None if head.parent < 0 else built_name[head.parent]
        built.append(Chain(name=head.joint.name, links=tuple(links), parent=parent_link,
                           base=base))
    name = tree.name or os.path.splitext(os.path.basename(source))[0] or "URDF robot"
    description = (f"Read from the URDF {os.path.basename(source)!r} (robot {tree.name!r}). "
                   "Joint values are the URDF's plus q_home, the URDF's zero pose; links "
                   "fixed to a moving link are merged into it." +
                   (f" The root link {tree.root!r} floats on a free joint."
                    if bodies[0].free and bodies[0].joint is None else ""))
    try:
        return Mechanism(name=name, chains=tuple(built), description=description,
                         warnings=tuple(warnings))
    except MechanismError as e:
        moved_by = {body.joint.child: body.joint.name for body in bodies
                    if body.joint is not None}
        joint = moved_by.get(e.link_name)
        field_name = {"inertia": "inertial", "mass": "inertial.mass.value", "com":
                      "inertial.origin", "limits": "limit", "name": "child.link",
                      "friction_viscous": "dynamics.damping",
                      "friction_coulomb": "dynamics.friction"}.get(
                          e.field, e.field)
        raise _Problem(e.reason, joint=joint, link=e.link_name, field=field_name) from None


def _free_chain(tree: _Tree, body: _Body) -> Chain:
    """The one-link chain of a free body: the root link (floating_base, home at the
    origin with the identity orientation) or the child of a floating joint (home at the
    joint's pose at zero); its mass properties in its own (URDF link) frame."""
    urdf_name = body.links[0]
    pose = tree.pose[urdf_name]
    # (ArmDyn reserves "base" for the fixed base: a floating root link of that name, as
    # many robots call it, is renamed)
    name = FLOATING_BASE_NAME if urdf_name == "base" else urdf_name
    mass, com, inertia = _merged_inertia(tree, body)
    joint = None if body.joint is None else body.joint.name
    if mass <= 0.0:
        raise _Problem("no mass: a free body needs mass > 0 and a positive-definite inertia; "
                       "give it an <inertial>", joint=joint, link=urdf_name, field="inertial")
    com_b, inertia_b = _mass_properties_in(pose, mass, com, inertia)
    home = None
    if body.joint is not None:
        home = tuple(float(v) for v in pose[:3, 3]) + \
            quaternion_rpy(rpy_from_rotation(pose[:3, :3]))
    link = Link(joint=JointType.FREE, mass=mass, com=com_b, inertia=inertia_b, home=home,
                name=name)
    return Chain(name=joint or "floating base", links=(link,))


def mechanism_from_urdf(text: str, source: str = "<memory>",
                        floating_base: bool = False) -> Mechanism:
    """The Mechanism of a URDF's text (str or bytes; module docstring); `UrdfFileError`
    naming `source`, ArgumentTypeError for a `text` that is neither. floating_base=True
    puts the root link on a free joint."""
    if not isinstance(text, (str, bytes)):
        raise ArgumentTypeError(f"text must be a URDF's text (str or bytes), got "
                                f"{type(text).__name__}")
    if len(text) > MAX_URDF_BYTES:
        raise UrdfFileError(source, f"the text is {len(text)} characters; a URDF is at most "
                                    f"{MAX_URDF_BYTES}")
    try:
        return _build(_read_tree(text, bool(floating_base)), source)
    except _Problem as p:
        raise p.at(source) from None
    except RobotError as e:  # a Link refused outside the Mechanism (not expected)
        raise UrdfFileError(source, e.reason, link_name=e.link_name, field=e.field) from None


def load_urdf(path, floating_base: bool = False) -> Mechanism:
    """Read the URDF at `path` into a Mechanism (module docstring, docs/urdf.md).

    Joint values (rad / m): ArmDyn q = URDF q + mech.q_home, in the URDF's depth-first
    joint order. floating_base=True: the root link on a free joint, first in q
    ([x, y, z, qx, qy, qz, qw], home at the origin, identity) and in the rates ([w; v]
    in the body frame). Raises only `UrdfFileError`, naming the file, joint or link and
    field.
    """
    shown = display_path(path)
    if shown is None:
        raise UrdfFileError(repr(path), f"expected a file path (str or os.PathLike), got "
                            f"{type(path).__name__}")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_URDF_BYTES + 1)
    except OSError as e:
        raise UrdfFileError(shown, f"cannot read the file: {e.strerror or e}") from None
    if len(data) > MAX_URDF_BYTES:
        raise UrdfFileError(shown, f"file is over {MAX_URDF_BYTES} bytes; too large for a URDF")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UrdfFileError(shown, f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset "
                                   f"{e.start})") from None
    try:
        return mechanism_from_urdf(text, shown, floating_base)
    except UrdfFileError:
        raise
    except RecursionError:
        raise UrdfFileError(shown, "the XML is nested too deeply") from None
    except Exception as e:  # anything else is still a file error, cause chained
        raise UrdfFileError(shown, f"cannot read the file ({type(e).__name__}: {e})") from e


# ======================================================================================
# Writing
# ======================================================================================

def _text(values) -> str:
    return " ".join(repr(float(v) + 0.0) for v in values)


def _row_rest(link: Link) -> np.ndarray:
    """The DH row without its joint: moved joint frame -> link's own frame (the identity
    for a free joint: its moved frame is its link's)."""
    if link.joint == JointType.FREE:
        return np.eye(4)
    if link.is_revolute:
        return _dh_row(link.a, link.b, link.alpha, 0.0)
    return _dh_row(link.a, 0.0, link.alpha, link.theta)


def _home_motion(link: Link) -> np.ndarray:
    """The joint's motion at q_home: Rz(theta) (revolute), Tz(b) (prismatic), the home
    pose of a free joint."""
    if link.joint == JointType.FREE:
        x, y, z, qx, qy, qz, qw = link.q_values
        T = np.eye(4)
        T[:3, :3] = np.array([[1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw),
                               2 * (qx * qz + qy * qw)],
                              [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz),
                               2 * (qy * qz - qx * qw)],
                              [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw),
                               1 - 2 * (qx * qx + qy * qy)]])
        T[:3, 3] = (x, y, z)
        return T
    return _rz(link.theta) if link.is_revolute else _tz(link.b)


def _floating_root(mech: Mechanism) -> str | None:
    """The link written as the URDF's root (a floating base, URDF's own convention):
    the free first link of the only chain on the base, when every other chain hangs on
    it; else None (the root is "base")."""
    on_base = [chain for chain in mech.chains if chain.parent is None]
    if len(on_base) == 1 and on_base[0].links[0].joint == JointType.FREE and \
            on_base[0].base.is_identity:
        return on_base[0].links[0].name
    return None


def _comment(text: str) -> ET.Element:
    return ET.Comment(" " + text.replace("--", "- -").strip() + " ")


def _export_warnings(mech: Mechanism) -> tuple[str, ...]:
    out = []
    if tuple(mech.gravity) != tuple(DEFAULT_GRAVITY):
        out.append(f"gravity {list(mech.gravity)} m/s^2 is not written: URDF has no gravity, "
                   f"and a simulator reading the file will use its own (usually "
                   f"{list(DEFAULT_GRAVITY)})")
    root = _floating_root(mech)
    if root is not None and not np.array_equal(mech.links[mech.joint_index(root)].q_values,
                                               (0, 0, 0, 0, 0, 0, 1)):
        out.append(f"the floating base {root!r} is written as the URDF's root link: its home "
                   "pose (not the origin) is not written (URDF's root sits at the origin)")
    geared = [link.name for link in mech.links
              if link.gear_ratio != 1.0 or link.rotor_inertia != 0.0]
    if geared:
        out.append(f"the drives (gear_ratio, rotor_inertia) of joints "
                   f"{', '.join(map(repr, geared))} are not written: URDF has no field for "
                   "them (friction is, in <dynamics>)")
    return tuple(out)


def _as_mechanism(description) -> Mechanism:
    """The mechanism description to write: a Mechanism itself, a Robot's one-chain
    mechanism (`Mechanism.from_robot`: its links named uniquely, as URDF needs)."""
    if isinstance(description, Mechanism):
        return description
    if isinstance(description, Robot):
        return Mechanism.from_robot(description)
    raise TypeError(f"expected a Robot or Mechanism, got {type(description).__name__}")


def mechanism_to_urdf(mech) -> str:
    """The URDF text of a Mechanism (or Robot) without loops. Its zero pose is q_home: URDF
    value = ArmDyn value - q_home. Each ArmDyn link becomes a URDF link of the same name
    whose frame is its joint frame (z the joint axis) moved by the joint, with the
    inertial placed by the rest of the DH row; its joint is "<link>_joint" with
    axis z and, for revolute joints with limits and every prismatic joint, a <limit>
    (revolute joints without limits are written as continuous). The root link is "base".
    Raises `MechanismError` naming the first loop if there are loops."""
    mech = _as_mechanism(mech)
    if mech.loops:
        raise MechanismError("URDF is a tree and cannot hold closed loops; save the "
                             "mechanism as a mechanism file (.toml) instead",
                             loop=mech.loops[0].name)
    for chain in mech.chains:
        for i, link in enumerate(chain.links, start=1):
            if link.joint in (JointType.SPHERICAL, JointType.UNIVERSAL):
                raise MechanismError(f"URDF has no {link.joint.value} joint; save the "
                                     "mechanism as a mechanism file (.toml) instead",
                                     chain=chain.name, link=i, link_name=link.name,
                                     field="joint")
    root = _floating_root(mech)
    robot = ET.Element("robot", name=mech.name)
    robot.append(_comment(f"Written by ArmDyn from the mechanism {mech.name!r}. Joint values "
                          "are ArmDyn's minus q_home: this file's zero pose is ArmDyn's home "
                          "pose. Units: m, kg, rad."))
    if mech.description.strip():
        robot.append(_comment(mech.description))
    for w in _export_warnings(mech):
        robot.append(_comment(w))
    if root is None:
        ET.SubElement(robot, "link", name="base")
    rest = {}
    for chain in mech.chains:
        for i, link in enumerate(chain.links):
            rest[link.name] = _row_rest(link)
            # the link's URDF frame: its moved joint frame; its inertial by the row's rest
            urdf_link = ET.SubElement(robot, "link", name=link.name)
            inertial = ET.SubElement(urdf_link, "inertial")
            X = rest[link.name]
            rpy = (0.0, 0.0, 0.0) if link.joint == JointType.FREE else \
                (link.alpha, 0.0, 0.0) if link.is_revolute else (link.alpha, 0.0, link.theta)
            ET.SubElement(inertial, "origin", xyz=_text(X[:3, :3] @ np.array(link.com)
                                                        + X[:3, 3]), rpy=_text(rpy))
            ET.SubElement(inertial, "mass", value=_text([link.mass]))
            xx, yy, zz, xy, xz, yz = link.inertia
            ET.SubElement(inertial, "inertia", ixx=_text([xx]), ixy=_text([xy]),
                          ixz=_text([xz]), iyy=_text([yy]), iyz=_text([yz]), izz=_text([zz]))
            if link.name == root:  # the floating base: URDF's root link, no joint
                continue
            # its joint: parent frame x (chain placement) x the motion at q_home
            if i == 0:
                parent = chain.parent or "base"
                before = (rest[chain.parent] if chain.parent is not None else np.eye(4)) \
                    @ _transform(chain.base.rotation, chain.base.xyz)
            else:
                parent = chain.links[i - 1].name
                before = rest[parent]
            origin = before @ _home_motion(link)
            kind = "floating" if link.joint == JointType.FREE else \
                ("revolute" if link.limits is not None else "continuous") \
                if link.is_revolute else "prismatic"
            joint = ET.SubElement(robot, "joint", name=f"{link.name}_joint", type=kind)
            ET.SubElement(joint, "parent", link=parent)
            ET.SubElement(joint, "child", link=link.name)
            ET.SubElement(joint, "origin", xyz=_text(origin[:3, 3]),
                          rpy=_text(rpy_from_rotation(origin[:3, :3])))
            if kind == "floating":
                continue
            ET.SubElement(joint, "axis", xyz="0 0 1")
            if kind != "continuous":
                lo, hi = (np.array(link.limits) - link.q_home if link.limits is not None
                          else UNLIMITED_PRISMATIC_RANGE)
                # ArmDyn has no effort or velocity limits; URDF requires the attributes
                ET.SubElement(joint, "limit", lower=_text([lo]), upper=_text([hi]),
                              effort="0", velocity="0")
            if link.friction_viscous or link.friction_coulomb:
                ET.SubElement(joint, "dynamics", damping=_text([link.friction_viscous]),
                              friction=_text([link.friction_coulomb]))
    ET.indent(robot, space="  ")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") \
        + "\n"


def save_urdf(mech, path) -> tuple[str, ...]:
    """Write `mech` (a Mechanism or Robot, no loops) to `path` as a URDF, atomically
    (`core.io.atomic.write_atomically`: the old file stays whole if the write fails).

    Returns the warnings: a gravity other than the default, which URDF cannot hold
    (it is named in a comment in the file). Raises `UrdfFileError` for a mechanism with
    loops or a failed write (TypeError for another type)."""
    shown = display_path(path)
    if shown is None:
        raise UrdfFileError(repr(path), f"expected a file path (str or os.PathLike), got "
                            f"{type(path).__name__}")
    try:
        model = _as_mechanism(mech)
    except TypeError:
        raise TypeError(f"save_urdf expects a Mechanism or a Robot, got "
                        f"{type(mech).__name__}") from None
    try:
        data = mechanism_to_urdf(model).encode("utf-8")
    except MechanismError as e:
        raise UrdfFileError(shown, e.reason, loop=e.loop) from None
    try:
        write_atomically(path, data)
    except OSError as e:
        raise UrdfFileError(shown, f"cannot write the file: {e.strerror or e}") from e
    return _export_warnings(model)
