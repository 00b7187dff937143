"""Mechanisms: trees of DH chains with loop-closure joints. Immutable.

A `Mechanism` is a set of serial **chains** of DH rows (`core.model.parts.Link`), each
fixed to the base or to a link of another chain (that makes trees), plus **loops** that
join two links (that makes closed chains). A serial `Robot` is the one-chain case
(`Mechanism.from_robot`). The joint vector q lists the chains in the order given and,
in each chain, its links in order; every public function uses that order.

Construction validates every rule (the one rule set; file loaders only report
syntax) and compiles the mechanism into its `Model` (`core.model.compile`), which, when
there are loops, closes them: the joint values in the links are a guess, the
independent joints are held and the others moved to the nearest closed pose
(`core.model.closure`). The links of the built mechanism carry the closed values, so
`q_home` is closed.
An invalid or unclosable Mechanism cannot exist: `MechanismError` names the chain,
link, loop and field.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import MechanismError, RobotError
from .compile import compile_model
from .model import Described, Model
from .parts import (DEFAULT_GRAVITY, Assembly, Chain, ForceElement, JointType, Link, Loop,
                    LoopJointType, Placement, Road, SpringDamper, Tyre, chains_with_q,
                    mechanism_size, tolerance_floor)
from .robot import DRIVE_FIELDS, Robot, validate_link
from .units import MAX_ABS

#: Most tree joints in one mechanism.
MAX_JOINTS = 1000
#: Largest closure tolerance of assembly, m and rad (the smallest is
#: `core.model.parts.tolerance_floor`, which depends on the mechanism's size).
MAX_TOLERANCE = 1e-2


@dataclass(frozen=True)
class Mechanism(Described):
    """Chains (trees) and loops of DH links plus gravity. Immutable and always valid.

    `model` is its compiled Model (core.model.model), built at construction; the
    mechanism shows the model's sizes and joint table (n, dof, joint_names, parent,
    actuated, independent, q_home, ...: `core.model.model.Described`).
    """

    name: str
    chains: tuple[Chain, ...]
    loops: tuple[Loop, ...] = ()
    gravity: tuple[float, float, float] = DEFAULT_GRAVITY
    description: str = ""
    angle_unit: str = "deg"
    assembly: Assembly = Assembly()
    warnings: tuple[str, ...] = field(default=(), compare=False)
    forces: tuple[ForceElement, ...] = ()
    road: Road | None = None
    model: Model = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chains", tuple(self.chains))
        object.__setattr__(self, "loops", tuple(self.loops))
        object.__setattr__(self, "gravity", tuple(float(g) for g in self.gravity))
        object.__setattr__(self, "forces", tuple(self.forces))
        warnings = tuple(validate_mechanism_fields(self))
        model = compile_model(name=self.name, chains=self.chains, loops=self.loops,
                              gravity=self.gravity,
                              independent_names=self.assembly.independent,
                              tolerance=self.assembly.tolerance, forces=self.forces,
                              road=self.road)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "chains", model.chains)  # closed
        object.__setattr__(self, "warnings", tuple(self.warnings) + warnings + model.warnings)

    # ----- joints -------------------------------------------------------------------
    @property
    def links(self) -> tuple[Link, ...]:
        """Every link in joint order."""
        return tuple(link for chain in self.chains for link in chain.links)

    def with_links(self, links, **changes) -> "Mechanism":
        """A new mechanism with other links in joint order, each chain keeping its length
        (and other `changes` of its fields), validated and its loops closed again."""
        links = tuple(links)
        if len(links) != self.n:
            raise MechanismError(f"{len(links)} links given for {self.n} joints", field="link")
        chains, k = [], 0
        for chain in self.chains:
            chains.append(replace(chain, links=links[k:k + len(chain.links)]))
            k += len(chain.links)
        return replace(self, chains=tuple(chains), **changes)

    def chain_of(self, joint: int) -> tuple[int, int]:
        """(chain index, link index in that chain) of a 0-based joint."""
        for c, chain in enumerate(self.chains):
            if joint < len(chain.links):
                return c, joint
            joint -= len(chain.links)
        raise IndexError("joint index out of range")

    def with_q(self, q) -> "Mechanism":
        """The same mechanism with other joint values as its guess (closed again); a gear
        loop meshes again at the new values of its two joints."""
        return replace(self, chains=chains_with_q(self.chains, np.asarray(q, dtype=float)),
                       warnings=())

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
    if not all(math.isfinite(v) and abs(v) <= MAX_ABS for v in out):
        raise MechanismError(f"{what} must be finite numbers with |x| <= {MAX_ABS:g}, got "
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
            if link.joint == JointType.FREE and (i > 1 or chain.parent is not None):
                raise MechanismError("a free joint joins a body to the base: it must be the "
                                     "first link of a chain on the base (no parent)",
                                     chain=chain.name, link=i, link_name=link.name,
                                     field="joint")
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
    # chains whose parents form a cycle: walk up from every chain
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
    if mech.loops:  # the closed-chain recursions do not take drives yet
        for chain in mech.chains:
            for i, link in enumerate(chain.links, start=1):
                if link.has_drive:
                    f = next(f for f in DRIVE_FIELDS if getattr(link, f) != (
                        1.0 if f == "gear_ratio" else 0.0))
                    raise MechanismError("friction and drives are for trees (no loops) for "
                                         "now; this mechanism has loops", chain=chain.name,
                                         link=i, link_name=link.name, field=f)
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
            raise MechanismError(f"joint must be 'revolute', 'spherical', 'prismatic' or "
                                 f"'gear', got {loop.joint!r}", loop=loop.name, field="joint")
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
        if loop.joint == LoopJointType.GEAR:
            _validate_gear(loop, {link.name: link for chain in mech.chains
                                  for link in chain.links})
            continue
        if loop.ratio is not None:
            raise MechanismError(f"a {loop.joint.value} loop has no ratio (only a gear loop "
                                 f"couples its links' joints by one)", loop=loop.name,
                                 field="ratio")
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
            and 0 < asm.tolerance <= MAX_TOLERANCE):
        raise MechanismError(f"tolerance must be a number in (0, {MAX_TOLERANCE:g}], got "
                             f"{asm.tolerance!r}", field="assembly.tolerance")
    floor = tolerance_floor(mech.chains, mech.loops)
    if mech.loops and asm.tolerance < floor:  # (a tree has nothing to close)
        size = mechanism_size(mech.chains, mech.loops)
        raise MechanismError(
            f"tolerance {asm.tolerance:g} is below what floating point can meet on this "
            f"mechanism: its loops' points are computed to about eps times its size "
            f"({size:.3g} m), so the tolerance must be at least {floor:.2g} (m and rad)"
            if floor <= MAX_TOLERANCE else
            f"the loops of a mechanism of this size ({size:.3g} m) cannot be closed to "
            f"{MAX_TOLERANCE:g} in floating point; check the lengths' units",
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
    _validate_force_elements(mech, set(link_names))
    return warnings


def _validate_gear(loop: Loop, links: dict[str, Link]) -> None:
    """A gear loop: two links whose own joints have one degree of freedom each, a ratio
    that is a finite number other than zero, no point or axis (the links are known to
    exist, a != b)."""
    for side, name in enumerate(loop.links):
        joint = links[name].joint if name in links else None
        if joint not in (JointType.REVOLUTE, JointType.PRISMATIC):
            what = "the fixed base has no joint" if name == "base" else \
                f"its joint is {joint.value}, of {joint.nv} degrees of freedom"
            raise MechanismError(f"a gear couples the joints of two links with one degree "
                                 f"of freedom each (revolute or prismatic); link "
                                 f"{'ab'[side]}, {name!r}: {what}", loop=loop.name,
                                 field="links")
    ratio = loop.ratio
    if ratio is None:
        raise MechanismError("a gear loop needs a ratio: d q_b / d q_a (rad/rad; m/rad for a "
                             "rack on a pinion: its pitch radius)", loop=loop.name,
                             field="ratio")
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float, np.integer, np.floating)):
        raise MechanismError(f"ratio must be a number, got {loop.ratio!r}", loop=loop.name,
                             field="ratio")
    ratio = float(ratio)
    if not (math.isfinite(ratio) and ratio != 0.0 and abs(ratio) <= MAX_ABS):
        raise MechanismError(f"ratio must be a finite number other than 0 with |x| <= "
                             f"{MAX_ABS:g}, got {loop.ratio!r} (0 would hold link b's joint "
                             f"still: fix it instead)", loop=loop.name, field="ratio")
    if loop.at != ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) or loop.axis != ((0.0, 0.0, 1.0),
                                                                       (0.0, 0.0, 1.0)):
        raise MechanismError("a gear loop couples joint values: it has no point or axis "
                             "(leave at and axis out)", loop=loop.name,
                             field="at" if loop.at != ((0.0,) * 3,) * 2 else "axis")


def _validate_force_elements(mech: Mechanism, link_names: set[str]) -> None:
    """Springs, dampers and tyres: unique names, links that exist, finite points, laws
    that a spring can have; the road a function of position."""
    names: set[str] = set()
    for e in mech.forces:
        if not isinstance(e, (SpringDamper, Tyre)):
            raise MechanismError(f"expected a SpringDamper or a Tyre, got {type(e).__name__}",
                                 field="force")
        name = e.name
        if not isinstance(name, str) or not name.strip():
            raise MechanismError("every force element needs a non-empty name",
                                 field="force.name")
        if name in names:
            raise MechanismError("duplicate force element name", element=name, field="name")
        names.add(name)
        where = dict(element=name)
        if isinstance(e, Tyre):
            if e.link not in link_names:
                raise MechanismError(f"{e.link!r} is not a link of this mechanism",
                                     field="link", **where)
            _finite_vector(e.at, 3, what="at", field="at", **where)
            laws = (("stiffness", e.stiffness, False), ("damping", e.damping, True),
                    ("radius", e.radius, False))
        else:
            if len(e.links) != 2:
                raise MechanismError("links must name two links", field="links", **where)
            for link in e.links:
                if link != "base" and link not in link_names:
                    raise MechanismError(f"{link!r} is not a link of this mechanism (nor "
                                         "'base')", field="links", **where)
            if e.links[0] == e.links[1]:
                raise MechanismError("a spring-damper joins two different links",
                                     field="links", **where)
            if len(e.at) != 2:
                raise MechanismError("at holds one point per link", field="at", **where)
            for p in e.at:
                _finite_vector(p, 3, what="at", field="at", **where)
            laws = (("stiffness", e.stiffness, True), ("damping", e.damping, True),
                    ("free_length", e.free_length, True))
        for f, value, zero_ok in laws:
            try:
                x = float(value)
            except (TypeError, ValueError):
                raise MechanismError(f"expected a number, got {value!r}", field=f,
                                     **where) from None
            if not (math.isfinite(x) and (x >= 0.0 if zero_ok else x > 0.0)
                    and x <= MAX_ABS):
                raise MechanismError(f"{f} must be a finite number {'>=' if zero_ok else '>'} "
                                     f"0, got {value!r}", field=f, **where)
    road = mech.road
    if road is None:
        return
    if not isinstance(road, Road):
        raise MechanismError(f"expected a Road, got {type(road).__name__}", field="road")
    previous = -math.inf
    for i, point in enumerate(road.points, start=1):
        if len(point) != 2:
            raise MechanismError(f"road point {i} must be [x, h], got {list(point)!r}",
                                 field="road.points")
        x, h = _finite_vector(point, 2, what="road point", field="road.points")
        if not x > previous:
            raise MechanismError(f"road point {i}: x = {x:g} m does not increase (previous "
                                 f"{previous:g} m); a road's height is a function of the "
                                 "position x: one height per x", field="road.points")
        previous = x
