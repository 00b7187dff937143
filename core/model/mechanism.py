"""Mechanisms: trees of DH chains with loop-closure joints. Immutable.

A `Mechanism` is a set of serial **chains** of DH rows (`core.model.robot.Link`), each fixed
to the base or to a link of another chain (that makes trees), plus **loops** that
join two links (that makes closed chains). A serial `Robot` is the one-chain case
(`Mechanism.from_robot`). The model's joint vector q lists the chains in the order
given and, in each chain, its links in order; every public function uses that order.

Construction validates every rule (the one rule set; file loaders only report
syntax), packs the kernel layout (`core.kernels.layout`) and, when there are loops,
closes them: the joint values in the links are a guess, the independent joints are
held and the others moved to the nearest closed pose (`core.algorithms.loops`). The
links of the built mechanism carry the closed values, so `q_home` is closed.
An invalid or unclosable Mechanism cannot exist: `MechanismError` names the chain,
link, loop and field.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from ..errors import MechanismError, RobotError
from ..kernels.layout import (LOOP_PRISMATIC, LOOP_REVOLUTE, LOOP_SPHERICAL, KernelModel,
                           pack_model)
from .robot import DEFAULT_GRAVITY, JointTable, Link, Robot, validate_link

#: Most tree joints in one mechanism.
MAX_JOINTS = 1000
#: Default closure tolerance, m and rad.
DEFAULT_TOLERANCE = 1e-10


class LoopJointType(str, Enum):
    REVOLUTE = "revolute"
    SPHERICAL = "spherical"
    PRISMATIC = "prismatic"


_LOOP_CODES = {LoopJointType.REVOLUTE: LOOP_REVOLUTE, LoopJointType.SPHERICAL: LOOP_SPHERICAL,
               LoopJointType.PRISMATIC: LOOP_PRISMATIC}


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


@dataclass(frozen=True)
class Mechanism(JointTable):
    """Chains (trees) and loops of DH links plus gravity. Immutable and always valid.

    Derived at construction (read-only attributes):
      n            : number of tree joints (the length of q)
      dof          : mobility (n minus the rank of the loop Jacobian at q_home)
      joint_names  : link names in joint order
      parent       : (n,) parent joint of each joint, -1 for the base
      actuated     : indices of the actuated joints (all joints when there are no loops)
      independent  : indices of the joints held by assembly (minimal coordinates)
      q_home       : (n,) the closed home pose, rad / m
      kernel       : the compiled kernels' layout (core.kernels.layout.KernelModel)
    """

    name: str
    chains: tuple[Chain, ...]
    loops: tuple[Loop, ...] = ()
    gravity: tuple[float, float, float] = DEFAULT_GRAVITY
    description: str = ""
    angle_unit: str = "deg"
    assembly: Assembly = Assembly()
    warnings: tuple[str, ...] = field(default=(), compare=False)
    n: int = field(init=False, compare=False)
    dof: int = field(init=False, compare=False)
    joint_names: tuple[str, ...] = field(init=False, compare=False, repr=False)
    parent: tuple[int, ...] = field(init=False, compare=False, repr=False)
    actuated: tuple[int, ...] = field(init=False, compare=False, repr=False)
    independent: tuple[int, ...] = field(init=False, compare=False, repr=False)
    kernel: KernelModel = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chains", tuple(self.chains))
        object.__setattr__(self, "loops", tuple(self.loops))
        object.__setattr__(self, "gravity", tuple(float(g) for g in self.gravity))
        warnings = list(validate_mechanism_fields(self))
        structure = _structure(self)
        for key, value in structure.items():
            object.__setattr__(self, key, value)
        kernel = _pack(self, structure)
        object.__setattr__(self, "kernel", kernel)
        object.__setattr__(self, "dof", self.n)
        if self.loops:
            from ..algorithms.loops import close_on_construction
            kernel, chains, dof, more = close_on_construction(self)
            object.__setattr__(self, "kernel", kernel)
            object.__setattr__(self, "chains", chains)
            object.__setattr__(self, "dof", dof)
            warnings += more
        object.__setattr__(self, "warnings", tuple(self.warnings) + tuple(warnings))

    # ----- joints -------------------------------------------------------------------
    @property
    def links(self) -> tuple[Link, ...]:
        """Every link in joint order."""
        return tuple(link for chain in self.chains for link in chain.links)

    @property
    def link_names(self) -> list[str]:
        return list(self.joint_names)

    def joint_index(self, name: str) -> int:
        """0-based joint index of the link called `name` (KeyError if none)."""
        return self.joint_names.index(name)

    def chain_of(self, joint: int) -> tuple[int, int]:
        """(chain index, link index in that chain) of a 0-based joint."""
        for c, chain in enumerate(self.chains):
            if joint < len(chain.links):
                return c, joint
            joint -= len(chain.links)
        raise IndexError("joint index out of range")

    def with_q(self, q) -> "Mechanism":
        """The same mechanism with other joint values as its guess (closed again)."""
        q = np.asarray(q, dtype=float)
        chains, k = [], 0
        for chain in self.chains:
            links = []
            for link in chain.links:
                links.append(link.with_q(float(q[k])))
                k += 1
            chains.append(replace(chain, links=tuple(links)))
        return replace(self, chains=tuple(chains), warnings=())

    @classmethod
    def from_robot(cls, robot: Robot) -> "Mechanism":
        """The one-chain mechanism of a serial arm. Joint names are the robot's link names
        ("link i" where a link has none); a name that a mechanism cannot have twice or
        reserves ("base") gets " (link i)" appended."""
        names, seen = [], set()
        for i, name in enumerate(robot.link_names, start=1):
            if name in seen or name == "base" or not name.strip():
                name = f"{name} (link {i})".strip()
            seen.add(name)
            names.append(name)
        links = tuple(replace(link, name=name) for link, name in zip(robot.links, names))
        return cls(name=robot.name, chains=(Chain("arm", links),), gravity=robot.gravity,
                   description=robot.description, angle_unit=robot.angle_unit)

    def __hash__(self) -> int:
        return hash((self.name, self.chains, self.loops, self.gravity))


# ----------------------------------------------------------------------------------
# Validation: the one rule set (the file loader reports syntax only)
# ----------------------------------------------------------------------------------

def _finite_vector(values, n: int, *, what: str, **where) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise MechanismError(f"{what} must be {n} numbers, got {values!r}", **where) from None
    if len(out) != n:
        raise MechanismError(f"{what} must have {n} components, got {len(out)}", **where)
    if not all(math.isfinite(v) and abs(v) <= 1e12 for v in out):
        raise MechanismError(f"{what} must be finite numbers with |x| <= 1e12, got "
                             f"{list(out)}", **where)
    return out


def validate_mechanism_fields(mech: Mechanism) -> list[str]:
    """Check every field; raise MechanismError (naming chain, link, loop, field) or
    return warnings. Closure is checked later, by assembly."""
    if not isinstance(mech.name, str) or not mech.name.strip():
        raise MechanismError("name must be a non-empty string", field="name")
    if mech.angle_unit not in ("deg", "rad"):
        raise MechanismError(f"angle_unit must be 'deg' or 'rad', got {mech.angle_unit!r}",
                             field="angle_unit")
    _finite_vector(mech.gravity, 3, what="gravity", field="gravity")
    if not mech.chains:
        raise MechanismError("a mechanism needs at least one [[chain]] with links", field="chain")
    warnings: list[str] = []
    chain_names: set[str] = set()
    link_names: dict[str, str] = {}
    total = 0
    for c, chain in enumerate(mech.chains, start=1):
        if not isinstance(chain, Chain):
            raise MechanismError(f"expected a Chain, got {type(chain).__name__}", field="chain")
        if not isinstance(chain.name, str) or not chain.name.strip():
            raise MechanismError(f"chain {c} needs a non-empty name", field="name")
        if chain.name in chain_names:
            raise MechanismError("duplicate chain name; chain names must be unique",
                                 chain=chain.name, field="name")
        chain_names.add(chain.name)
        if not chain.links:
            raise MechanismError("a chain needs at least one link", chain=chain.name,
                                 field="link")
        if not isinstance(chain.base, Placement):
            raise MechanismError("base must be a Placement", chain=chain.name, field="base")
        _finite_vector(chain.base.xyz, 3, what="base xyz", chain=chain.name, field="base.xyz")
        _finite_vector(chain.base.rpy, 3, what="base rpy", chain=chain.name, field="base.rpy")
        if chain.parent is not None and not isinstance(chain.parent, str):
            raise MechanismError("parent must be a link name", chain=chain.name, field="parent")
        for i, link in enumerate(chain.links, start=1):
            if not isinstance(link, Link):
                raise MechanismError(f"expected a Link, got {type(link).__name__}",
                                     chain=chain.name, link=i, field="link")
            try:
                warnings += validate_link(link, i)
            except RobotError as e:
                raise MechanismError(e.reason, chain=chain.name, link=i,
                                     link_name=e.link_name, field=e.field) from None
            if not isinstance(link.name, str) or not link.name.strip():
                raise MechanismError("every link of a mechanism needs a unique name",
                                     chain=chain.name, link=i, field="name")
            if link.name == "base":
                raise MechanismError("'base' is reserved for the fixed base; rename the link",
                                     chain=chain.name, link=i, link_name=link.name, field="name")
            if link.name in link_names:
                raise MechanismError(f"duplicate link name (also in chain "
                                     f"{link_names[link.name]!r}); link names must be unique",
                                     chain=chain.name, link=i, link_name=link.name,
                                     field="name")
            link_names[link.name] = chain.name
        total += len(chain.links)
    if total > MAX_JOINTS:
        raise MechanismError(f"{total} joints; a mechanism has at most {MAX_JOINTS}",
                             field="link")
    for chain in mech.chains:
        if chain.parent is not None and chain.parent not in link_names:
            raise MechanismError(f"parent {chain.parent!r} is not a link of this mechanism",
                                 chain=chain.name, field="parent")
        if chain.parent is not None and link_names[chain.parent] == chain.name:
            raise MechanismError("a chain cannot start on one of its own links",
                                 chain=chain.name, field="parent")
    loop_names: set[str] = set()
    for loop in mech.loops:
        if not isinstance(loop, Loop):
            raise MechanismError(f"expected a Loop, got {type(loop).__name__}", field="loop")
        if not isinstance(loop.name, str) or not loop.name.strip():
            raise MechanismError("every loop needs a non-empty name", field="loop.name")
        if loop.name in loop_names:
            raise MechanismError("duplicate loop name", loop=loop.name, field="name")
        loop_names.add(loop.name)
        if not isinstance(loop.joint, LoopJointType):
            raise MechanismError(f"joint must be 'revolute', 'spherical' or 'prismatic', got "
                                 f"{loop.joint!r}", loop=loop.name, field="joint")
        if len(loop.links) != 2:
            raise MechanismError("links must name two links", loop=loop.name, field="links")
        a, b = loop.links
        if a not in link_names:
            raise MechanismError(f"{a!r} is not a link of this mechanism" +
                                 (" ('base' may only be the second link)" if a == "base" else ""),
                                 loop=loop.name, field="links")
        if b != "base" and b not in link_names:
            raise MechanismError(f"{b!r} is not a link of this mechanism (nor 'base')",
                                 loop=loop.name, field="links")
        if a == b:
            raise MechanismError("a loop joins two different links", loop=loop.name,
                                 field="links")
        if len(loop.at) != 2 or len(loop.axis) != 2:
            raise MechanismError("at and axis hold one vector per link", loop=loop.name,
                                 field="at")
        for side in range(2):
            _finite_vector(loop.at[side], 3, what="at", loop=loop.name, field="at")
            axis = _finite_vector(loop.axis[side], 3, what="axis", loop=loop.name,
                                  field="axis")
            if not math.hypot(*axis) > 1e-9:
                raise MechanismError("axis must not be zero", loop=loop.name, field="axis")
    asm = mech.assembly
    if not isinstance(asm, Assembly):
        raise MechanismError("assembly must be an Assembly", field="assembly")
    if not (isinstance(asm.tolerance, (int, float)) and math.isfinite(asm.tolerance)
            and 0 < asm.tolerance <= 1e-2):
        raise MechanismError(f"tolerance must be a number in (0, 0.01], got {asm.tolerance!r}",
                             field="assembly.tolerance")
    if asm.independent is not None:
        seen = set()
        for name in asm.independent:
            if name not in link_names:
                raise MechanismError(f"independent joint {name!r} is not a link of this "
                                     "mechanism", field="assembly.independent")
            if name in seen:
                raise MechanismError(f"independent joint {name!r} is listed twice",
                                     field="assembly.independent")
            seen.add(name)
    return warnings


def _structure(mech: Mechanism) -> dict:
    """Joint order, parent array (cycle check) and the actuated / independent sets."""
    names = tuple(link.name for chain in mech.chains for link in chain.links)
    index = {name: k for k, name in enumerate(names)}
    parent = []
    k = 0
    for chain in mech.chains:
        for i in range(len(chain.links)):
            parent.append((index[chain.parent] if chain.parent is not None else -1)
                          if i == 0 else k - 1)
            k += 1
    # chains whose parents form a cycle: walk up from every joint
    for c, chain in enumerate(mech.chains):
        seen = {chain.name}
        owner = {link.name: ch.name for ch in mech.chains for link in ch.links}
        p = chain.parent
        while p is not None:
            pc = owner[p]
            if pc in seen:
                raise MechanismError(f"the chains' parents form a cycle through chain {pc!r}",
                                     chain=chain.name, field="parent")
            seen.add(pc)
            p = next(ch.parent for ch in mech.chains if ch.name == pc)
    links = [link for chain in mech.chains for link in chain.links]
    if mech.loops:
        actuated = tuple(k for k, link in enumerate(links) if link.actuated)
    else:
        actuated = tuple(range(len(links)))
    if not mech.loops:  # a tree: every joint is a coordinate of its own
        independent = tuple(range(len(links)))
    elif mech.assembly.independent is not None:
        independent = tuple(index[name] for name in mech.assembly.independent)
    else:
        independent = actuated
    return dict(n=len(names), joint_names=names, parent=tuple(parent), actuated=actuated,
                independent=tuple(sorted(independent)))


def _pack(mech: Mechanism, s: dict, row_loop=None, row_kind=None) -> KernelModel:
    links = [link for chain in mech.chains for link in chain.links]
    n = len(links)
    place_R = np.tile(np.eye(3), (n, 1, 1))
    place_p = np.zeros((n, 3))
    k = 0
    for chain in mech.chains:
        place_R[k] = chain.base.rotation
        place_p[k] = chain.base.xyz
        k += len(chain.links)
    index = {name: i for i, name in enumerate(s["joint_names"])}
    loop_body = [(index[l.links[0]], -1 if l.links[1] == "base" else index[l.links[1]])
                 for l in mech.loops]
    return pack_model(
        dh=np.array([[l.a, l.b, l.alpha, l.theta] for l in links], dtype=float).reshape(-1, 4),
        revolute=np.array([1 if l.is_revolute else 0 for l in links], dtype=np.int64),
        mass=np.array([l.mass for l in links], dtype=float),
        com=np.array([l.com for l in links], dtype=float).reshape(-1, 3),
        inertia=np.array([l.inertia_matrix for l in links], dtype=float).reshape(-1, 3, 3),
        parent=s["parent"], place_R=place_R, place_p=place_p, gravity=mech.gravity,
        loop_body=loop_body, loop_type=[_LOOP_CODES[l.joint] for l in mech.loops],
        loop_point=[l.at for l in mech.loops], loop_axis=[l.axis for l in mech.loops],
        independent=s["independent"], row_loop=row_loop, row_kind=row_kind)


def pack_mechanism(mech: Mechanism, row_loop=None, row_kind=None) -> KernelModel:
    """The kernel layout of `mech` (optionally with a chosen set of active rows)."""
    s = dict(joint_names=mech.joint_names, parent=mech.parent, independent=mech.independent)
    return _pack(mech, s, row_loop, row_kind)


def as_mechanism(model) -> Mechanism:
    """A Mechanism for a Robot or a Mechanism."""
    if isinstance(model, Mechanism):
        return model
    if isinstance(model, Robot):
        return Mechanism.from_robot(model)
    raise TypeError(f"expected a Robot or Mechanism, got {type(model).__name__}")
