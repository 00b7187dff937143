"""What the tables hold while someone edits a mechanism. Qt-free.

A `MechanismDraft` is a `RobotDraft` whose rows are every link of every chain, in
joint order (the file's chain order, then each chain's links); each `Row` carries
the id of its chain, so a chain keeps its rows whatever its name says. Next to the
link rows it keeps, as cells too, what the link tables do not show:

- the **chains** (one `Record` each): name, the link it starts on ("base": the
  fixed base), the pose of its frame 0 (xyz in m, rpy in the file's angle unit);
- the **loops** (one `Record` each): name, joint type, the two links ("base" may
  be the second), the joint's point and axis in each link's own frame; a gear loop
  has a ratio instead of the points and axes (it keeps them, unused, for a change
  of kind back);
- the **assembly** settings (one record): the independent joints and the tolerance.

- the **force elements** (one `Record` each): name, kind (spring-damper or tyre, the
  file's), links, points (a tyre has one), stiffness, damping, free length or radius;
- the **road** (one `Record` per point): x and h.

A link row keeps what its columns do not show (a universal joint's home) from its last
valid link. Force and road cells go to core as typed (a refused text too, so that
core's message quotes it): core's Mechanism validation names the element and field.

Every cell key is unique across these tables ("a" is a link's, "parent" a chain's,
"at_a" a loop's), so a cell change is ``(row, key, value)`` whatever table it is in
and the undo commands of gui/model/document.py work unchanged.

Validation: link rows cell by cell exactly as a serial arm's (core's
`validate_link`; the message names the chain and counts the link within it);
chain, loop and assembly cells that are not values of their column (a point
"1, abc") are refused in place. When every cell is valid, the whole mechanism is
built (`core.Mechanism`, which closes the loops). If core refuses it (a loop that
can no longer close, a parent cycle, a loop naming a missing link), nothing
downstream changes: the last valid mechanism stays, `model_error` holds core's
message (it names the loop or chain), and the cells it names, plus the cells of the
last edit, are marked with it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import singledispatch
from typing import ClassVar

import numpy as np

from armdyn.core import (Assembly, Chain, Link, Loop, LoopJointType, Mechanism, MechanismError,
                  Placement, Road, Robot, RobotError, SpringDamper, Tyre, forward_kinematics)

from .draft import (COLUMNS, FIELD_CELLS, Column, RobotDraft, Row, Unparsed, Value,
                    link_has_cell, new_link, vector_parts)

__all__ = ["Record", "MechanismDraft", "draft_for", "MODEL_ERROR_KEY", "CHAIN_COLUMNS",
           "LOOP_COLUMNS", "ASSEMBLY_COLUMNS", "FORCE_COLUMNS", "ROAD_COLUMNS", "BASE",
           "SPRING_DAMPER", "TYRE"]

#: The key of `errors` for a model error that no cell was edited for (a load, undo of
#: a row insert): row -1, so it sorts first and no table shows it in a cell.
MODEL_ERROR_KEY = (-1, "mechanism")
#: The name that stands for the fixed base (a chain's parent, a loop's second link).
BASE = "base"

CHAIN_COLUMNS: tuple[Column, ...] = (
    Column("chain", "name", "", "name", "name", "Chain name, unique among the chains"),
    Column("parent", "starts on", "", "choice", "parent",
           "The link the chain starts on (the chain then moves with it), or base: the "
           "fixed base"),
    Column("base_xyz", "base x, y, z", "m", "vector", "base.xyz",
           "Position of the chain's DH frame 0: in the base frame, or in the own frame of "
           "the link it starts on"),
    Column("base_rpy", "base roll, pitch, yaw", "deg", "vector", "base.rpy",
           "Orientation of the chain's frame 0: Rz(yaw) Ry(pitch) Rx(roll), about fixed "
           "axes"),
)
LOOP_COLUMNS: tuple[Column, ...] = (
    Column("loop", "name", "", "name", "name", "Loop (cut) joint name, unique among the "
           "loops"),
    Column("loop_joint", "joint", "", "loopjoint", "joint",
           "revolute: the points coincide and the axes stay parallel; spherical: the points "
           "coincide; prismatic: the axes stay on one line and do not turn about it; gear: "
           "the joints of links a and b (revolute or prismatic) turn or slide together by "
           "the ratio"),
    Column("link_a", "link a", "", "choice", "links", "The first link the joint joins"),
    Column("link_b", "link b", "", "choice", "links",
           "The second link the joint joins, or base: the fixed base"),
    Column("loop_ratio", "ratio", "", "number", "ratio",
           "A gear's ratio, d q_b / d q_a in SI units: -z_a / z_b for a gear pair, the "
           "pinion's pitch radius (m/rad) for a rack driven by a pinion, its sign by the "
           "direction; it meshes at the joint values the links have (a gear loop only)"),
    Column("at_a", "point in a", "m", "vector", "at",
           "The joint's point in link a's own frame (0, 0, 0: the link's far end)"),
    Column("at_b", "point in b", "m", "vector", "at",
           "The joint's point in link b's own frame (in the base frame for base)"),
    Column("axis_a", "axis in a", "", "vector", "axis",
           "The joint's axis in link a's own frame (any length but zero)"),
    Column("axis_b", "axis in b", "", "vector", "axis",
           "The joint's axis in link b's own frame (in the base frame for base)"),
)
ASSEMBLY_COLUMNS: tuple[Column, ...] = (
    Column("independent", "independent joints", "", "names", "assembly.independent",
           "The joints held at their values while the loops are closed; none given: the "
           "actuated joints"),
    Column("tolerance", "tolerance", "m, rad", "number", "assembly.tolerance",
           "How closely the loops must close, m and rad, in (0, 0.01]"),
)
#: The kinds of force element, as the Forces tab shows them.
SPRING_DAMPER, TYRE = "spring-damper", "tyre"
FORCE_COLUMNS: tuple[Column, ...] = (
    Column("force", "name", "", "name", "name", "Force element name, unique among them"),
    Column("force_kind", "kind", "", "name", "kind",
           "spring-damper: between a point of each of two links (or base), along the line "
           "through them; tyre: a wheel centre pushed up by the road below it (the file "
           "says which; not edited here)"),
    Column("force_links", "links", "", "names", "links",
           "spring-damper: the two links it joins (base allowed), separated by ';'; "
           "tyre: the wheel's link"),
    Column("force_at_a", "point 1", "m", "vector", "at",
           "The point in the (first) link's own frame (0, 0, 0: its far end); a tyre's "
           "wheel centre"),
    Column("force_at_b", "point 2", "m", "vector", "at",
           "A spring-damper's point in its second link's own frame (base frame for base)"),
    Column("force_k", "stiffness", "N/m", "number", "stiffness",
           "k: >= 0 for a spring-damper, > 0 for a tyre"),
    Column("force_c", "damping", "N s/m", "number", "damping", "c, >= 0"),
    Column("force_length", "free length | radius", "m", "number", "free_length",
           "A spring-damper's free length (>= 0) or a tyre's radius (> 0)"),
)
ROAD_COLUMNS: tuple[Column, ...] = (
    Column("road_x", "x", "m", "number", "road.points",
           "Position along the base x axis; strictly increasing from row to row"),
    Column("road_h", "h", "m", "number", "road.points",
           "Road height at x (linear between points, flat beyond the ends)"),
)
_SHEETS: dict[str, tuple[Column, ...]] = {
    "chains": CHAIN_COLUMNS, "loops": LOOP_COLUMNS, "assembly": ASSEMBLY_COLUMNS,
    "forces": FORCE_COLUMNS, "road": ROAD_COLUMNS}
#: The cells of a force element's core fields (core's errors name fields).
_FORCE_FIELDS = {"name": ("force",), "force.name": ("force",), "link": ("force_links",),
                 "links": ("force_links",), "at": ("force_at_a", "force_at_b"),
                 "stiffness": ("force_k",), "damping": ("force_c",),
                 "free_length": ("force_length",), "radius": ("force_length",)}
_STRUCTURE: dict[str, tuple[str, Column]] = {
    c.key: (sheet, c) for sheet, cols in _SHEETS.items() for c in cols}
#: The cells of a chain's and a loop's core fields (core's errors name fields).
_CHAIN_FIELDS = {"name": ("chain",), "parent": ("parent",), "base.xyz": ("base_xyz",),
                 "base.rpy": ("base_rpy",), "base": ("base_xyz", "base_rpy")}
_LOOP_FIELDS = {"name": ("loop",), "joint": ("loop_joint",), "links": ("link_a", "link_b"),
                "at": ("at_a", "at_b"), "axis": ("axis_a", "axis_b"), "ratio": ("loop_ratio",)}
#: A loop's cells that only a cut joint has (not a gear).
_CUT_JOINT_CELLS = ("at_a", "at_b", "axis_a", "axis_b")
_LOOP_CELLS = _CUT_JOINT_CELLS + ("loop_ratio",)
#: What core calls a vector field in its messages.
_VECTOR_WHAT = {"base_xyz": "base xyz", "base_rpy": "base rpy", "at_a": "at", "at_b": "at",
                "axis_a": "axis", "axis_b": "axis"}


@dataclass
class Record:
    """One row of the chains, loops or assembly table: its cells and, for a chain, the
    id its link rows carry."""

    cells: dict[str, Value]
    ident: int = 0

    def copy(self) -> "Record":
        return Record(dict(self.cells), self.ident)


def chain_record(chain: Chain, ident: int) -> Record:
    return Record({"chain": chain.name, "parent": chain.parent or BASE,
                   "base_xyz": tuple(chain.base.xyz), "base_rpy": tuple(chain.base.rpy)},
                  ident)


def loop_record(loop: Loop) -> Record:
    return Record({"loop": loop.name, "loop_joint": loop.joint,
                   "link_a": loop.links[0], "link_b": loop.links[1],
                   "at_a": tuple(loop.at[0]), "at_b": tuple(loop.at[1]),
                   "axis_a": tuple(loop.axis[0]), "axis_b": tuple(loop.axis[1]),
                   "loop_ratio": loop.ratio})


def assembly_record(asm: Assembly) -> Record:
    return Record({"independent": asm.independent, "tolerance": float(asm.tolerance)})


def force_record(element: SpringDamper | Tyre) -> Record:
    """A force element's row: a tyre has one link and one point (no point 2)."""
    if isinstance(element, Tyre):
        return Record({"force": element.name, "force_kind": TYRE,
                       "force_links": (element.link,), "force_at_a": tuple(element.at),
                       "force_at_b": None, "force_k": float(element.stiffness),
                       "force_c": float(element.damping),
                       "force_length": float(element.radius)})
    return Record({"force": element.name, "force_kind": SPRING_DAMPER,
                   "force_links": tuple(element.links), "force_at_a": tuple(element.at[0]),
                   "force_at_b": tuple(element.at[1]), "force_k": float(element.stiffness),
                   "force_c": float(element.damping),
                   "force_length": float(element.free_length)})


def road_records(road: Road | None) -> list[Record]:
    return [Record({"road_x": float(x), "road_h": float(h)})
            for x, h in (road.points if road is not None else ())]


def _raw(value: Value) -> object:
    """A cell as core should read it: a refused text as typed (so that core's message
    quotes it), a vector's text as its parts."""
    if not isinstance(value, Unparsed):
        return value
    parts = vector_parts(value.text)
    return parts if len(parts) > 1 else value.text


def _force_element(c: dict[str, Value]) -> SpringDamper | Tyre:
    """The force element a Forces row describes (core validates it with the mechanism)."""
    links = c["force_links"] or ()
    if c["force_kind"] == TYRE:
        return Tyre(str(c["force"]), links[0] if len(links) == 1 else "; ".join(links),
                    _raw(c["force_at_a"]), _raw(c["force_k"]), _raw(c["force_c"]),
                    _raw(c["force_length"]))
    return SpringDamper(str(c["force"]), links, (_raw(c["force_at_a"]), _raw(c["force_at_b"])),
                        _raw(c["force_k"]), _raw(c["force_c"]), _raw(c["force_length"]))


def _loop(c: dict[str, Value]) -> Loop:
    """The loop a Loops row describes: a gear's ratio as typed (core's message quotes a
    refused one; an empty cell: none), a cut joint's points and axes."""
    links = (str(c["link_a"]), str(c["link_b"]))
    if c["loop_joint"] == LoopJointType.GEAR:
        ratio = c["loop_ratio"]
        if isinstance(ratio, Unparsed) and not ratio.text.strip():
            ratio = None
        return Loop(str(c["loop"]), c["loop_joint"], links, ratio=_raw(ratio))
    return Loop(str(c["loop"]), c["loop_joint"], links, (c["at_a"], c["at_b"]),
                (c["axis_a"], c["axis_b"]))


@dataclass
class MechanismDraft(RobotDraft):
    """The edit state of a mechanism (see the module docstring).

    chains      : the chains in file order (their link rows are `rows` with that id)
    loops       : the loop (cut) joints
    assembly    : the assembly settings (one record)
    model_error : core's reason why the valid cells make no mechanism, or ""
    """

    edits_chains: ClassVar[bool] = True

    chains: list[Record] = field(default_factory=list)
    loops: list[Record] = field(default_factory=list)
    assembly: Record = field(default_factory=lambda: assembly_record(Assembly()))
    forces: list[Record] = field(default_factory=list)
    road: list[Record] = field(default_factory=list)
    #: the road without points the file gave (`Road(())`), kept while no point is
    #: typed; None: no road (removing every point leaves none, as before the first)
    pointless_road: Road | None = None
    model_error: str = ""
    _touched: list[tuple[int, str]] = field(default_factory=list, repr=False)

    @classmethod
    def from_mechanism(cls, mech: Mechanism) -> "MechanismDraft":
        rows = [Row.from_link(link, c + 1) for c, chain in enumerate(mech.chains)
                for link in chain.links]
        return cls(mech, rows, chains=[chain_record(ch, c + 1)
                                       for c, ch in enumerate(mech.chains)],
                   loops=[loop_record(loop) for loop in mech.loops],
                   assembly=assembly_record(mech.assembly),
                   forces=[force_record(e) for e in mech.forces],
                   road=road_records(mech.road),
                   pointless_road=mech.road if mech.road is not None and not mech.road.points
                   else None)

    # ----- cells of every table -----------------------------------------------------
    @staticmethod
    def sheet_of(key: str) -> str:
        """The table a cell key belongs to: "links", "chains", "loops" or "assembly"."""
        return "links" if key in COLUMNS else _STRUCTURE[key][0]

    def row_count(self, sheet: str) -> int:
        return {"links": self.n, "chains": len(self.chains), "loops": len(self.loops),
                "assembly": 1, "forces": len(self.forces), "road": len(self.road)}[sheet]

    def column(self, key: str) -> Column:
        return COLUMNS[key] if key in COLUMNS else _STRUCTURE[key][1]

    def has_cell(self, row: int, key: str) -> bool:
        if key in COLUMNS:
            return 0 <= row < self.n and link_has_cell(self.joint(row), key)
        if key not in _STRUCTURE or key == "force_kind":  # the kind: the file's
            return False
        if key == "force_at_b" and 0 <= row < len(self.forces):  # a tyre has one point
            return self.forces[row].cells["force_kind"] != TYRE
        if (key == "loop_ratio" or key in _CUT_JOINT_CELLS) and 0 <= row < len(self.loops):
            # a gear has a ratio, a cut joint points and axes
            return (self.loops[row].cells["loop_joint"] == LoopJointType.GEAR) == (
                key == "loop_ratio")
        return 0 <= row < self.row_count(self.sheet_of(key))

    def display_text(self, row: int, key: str) -> str:
        """As a link table's; a loop cell its kind does not have (a gear's point, a cut
        joint's ratio) shows empty, whatever it keeps for a change of kind."""
        if key in _LOOP_CELLS and not self.has_cell(row, key):
            return ""
        return super().display_text(row, key)

    def _record(self, row: int, key: str) -> Record:
        sheet = self.sheet_of(key)
        if sheet == "chains":
            return self.chains[row]
        if sheet == "loops":
            return self.loops[row]
        if sheet == "forces":
            return self.forces[row]
        if sheet == "road":
            return self.road[row]
        return self.assembly

    def value(self, row: int, key: str) -> Value:
        if key in COLUMNS:
            return self.rows[row].cells[key]
        return self._record(row, key).cells[key]

    # ----- chains and link rows ---------------------------------------------------
    def chain_index_of_row(self, row: int) -> int:
        """Index in `chains` of the chain the link row belongs to."""
        ident = self.rows[row].chain
        return next(c for c, rec in enumerate(self.chains) if rec.ident == ident)

    def chain_name(self, c: int) -> str:
        return str(self.chains[c].cells["chain"])

    def chain_of_row(self, row: int) -> str | None:
        """The name of the chain of link row `row` (None outside the table)."""
        return self.chain_name(self.chain_index_of_row(row)) if 0 <= row < self.n else None

    def chain_rows(self, c: int) -> list[int]:
        """Link row indices of chain number `c` (index in `chains`), in order."""
        ident = self.chains[c].ident
        return [i for i, row in enumerate(self.rows) if row.chain == ident]

    def link_number(self, row: int) -> int:
        """The link's 1-based number within its chain (as core's messages count)."""
        ident = self.rows[row].chain
        return sum(1 for r in self.rows[:row + 1] if r.chain == ident)

    def link_names(self) -> list[str]:
        """The names typed in the link rows, in joint order."""
        return [str(r.cells["name"]) for r in self.rows]

    def new_row(self, index: int, chain: int | None = None) -> Row:
        """A new link for chain number `chain` (None: the chain of the row at `index`, the
        last chain at the end), with a name no other link has."""
        if chain is None:
            chain = self.chain_index_of_row(min(index, self.n - 1)) if self.n else 0
        return self._new_link_row(self.chains[chain].ident)

    def _new_link_row(self, ident: int) -> Row:
        taken = set(self.link_names())
        k = self.n + 1
        while f"link {k}" in taken:
            k += 1
        # Actuated: a new joint adds a degree of freedom, and an actuated joint is held
        # while the loops close, so the mechanism stays determinate.
        link = replace(new_link(self.robot.links), name=f"link {k}", actuated=True)
        return Row.from_link(link, ident)

    def can_move(self, src: int, dst: int) -> bool:
        """Rows move only within their chain (joint order follows the chains)."""
        return (super().can_move(src, dst)
                and self.rows[src].chain == self.rows[dst].chain)

    def can_remove(self, first: int, count: int) -> bool:
        """Rows may go if they are of one chain and leave it a link (to remove a whole
        chain, remove the chain)."""
        if first < 0 or count <= 0 or first + count > self.n:
            return False
        ident = self.rows[first].chain
        return (all(r.chain == ident for r in self.rows[first:first + count])
                and sum(1 for r in self.rows if r.chain == ident) > count)

    def new_chain(self) -> tuple[Record, Row]:
        """A new chain on the base (a name no chain has) with one new link."""
        taken = {str(r.cells["chain"]) for r in self.chains}
        k = len(self.chains) + 1
        while f"chain {k}" in taken:
            k += 1
        ident = max((r.ident for r in self.chains), default=0) + 1
        record = Record({"chain": f"chain {k}", "parent": BASE, "base_xyz": (0.0, 0.0, 0.0),
                         "base_rpy": (0.0, 0.0, 0.0)}, ident)
        return record, self._new_link_row(ident)

    def chain_start(self, c: int) -> int:
        """The link row where chain number `c` starts (or would start)."""
        idents = {rec.ident for rec in self.chains[c:]}
        return next((i for i, r in enumerate(self.rows) if r.chain in idents), self.n)

    def insert_chain(self, c: int, record: Record, rows: list[Row]) -> bool:
        """Put a chain (and its link rows) back at index `c`."""
        start = self.chain_start(c) if c < len(self.chains) else self.n
        self.chains.insert(c, record.copy())
        self.rows[start:start] = [r.copy() for r in rows]
        return self.revalidate()

    def remove_chain(self, c: int) -> tuple[Record, list[Row], bool]:
        """Remove chain number `c` and its link rows; return them (for undo)."""
        record = self.chains.pop(c)
        rows = [r for r in self.rows if r.chain == record.ident]
        self.rows = [r for r in self.rows if r.chain != record.ident]
        return record, rows, self.revalidate()

    # ----- loops ------------------------------------------------------------------
    def new_loop(self, chain: int | None = None) -> Record:
        """A new revolute loop that pins the far end of a chain's last link (chain number
        `chain` of the valid mechanism; None: the last) to the base where it is now:
        closed at home, so that only the change of mobility remains to be settled."""
        mech = self.robot
        taken = {str(r.cells["loop"]) for r in self.loops}
        k = len(self.loops) + 1
        while f"loop {k}" in taken:
            k += 1
        chains = mech.chains
        c = chain if chain is not None and 0 <= chain < len(chains) else len(chains) - 1
        name = chains[c].links[-1].name if chains else mech.links[-1].name
        frame = forward_kinematics(mech, mech.q_home).frames[mech.link_names.index(name) + 1]
        point = tuple(float(v) for v in frame[:3, 3])
        axis = tuple(float(v) for v in np.where(np.abs(frame[:3, 2]) < 1e-15, 0.0,
                                                frame[:3, 2]))
        return Record({"loop": f"loop {k}", "loop_joint": LoopJointType.REVOLUTE,
                       "link_a": name, "link_b": BASE, "at_a": (0.0, 0.0, 0.0),
                       "at_b": point, "axis_a": (0.0, 0.0, 1.0), "axis_b": axis,
                       "loop_ratio": None})

    # ----- rows of the loops, forces and road tables --------------------------------
    def records(self, sheet: str) -> list[Record]:
        """The rows of the "loops", "forces" or "road" table (the list itself)."""
        return {"loops": self.loops, "forces": self.forces, "road": self.road}[sheet]

    def insert_record(self, sheet: str, index: int, record: Record) -> bool:
        """Put a row (a copy of `record`) at `index` of a table; True if the model changed."""
        self.records(sheet).insert(index, record.copy())
        return self.revalidate()

    def remove_record(self, sheet: str, index: int) -> tuple[Record, bool]:
        """Remove row `index` of a table; return it (for undo) and whether the model
        changed."""
        record = self.records(sheet).pop(index)
        return record, self.revalidate()

    def new_force(self, kind: str) -> Record:
        """A new force element of `kind` (SPRING_DAMPER or TYRE), named as no other is,
        that changes no motion until its numbers are typed: a spring-damper from the base
        origin to the far end of the last link, its free length their distance at home,
        k = c = 0; a tyre on the last link's far end like the last tyre (stiffness, damping,
        radius), or 1e5 N/m, 1e3 N s/m, 0.3 m if there is none."""
        taken = {str(r.cells["force"]) for r in self.forces}
        word = "spring" if kind == SPRING_DAMPER else "tyre"
        k = len(self.forces) + 1
        while f"{word} {k}" in taken:
            k += 1
        mech = self.robot
        last = mech.link_names[-1]
        if kind == TYRE:
            like = next((r.cells for r in reversed(self.forces)
                         if r.cells["force_kind"] == TYRE), None)
            k_c_r = ((like["force_k"], like["force_c"], like["force_length"]) if like
                     else (1e5, 1e3, 0.3))
            return Record({"force": f"{word} {k}", "force_kind": TYRE,
                           "force_links": (last,), "force_at_a": (0.0, 0.0, 0.0),
                           "force_at_b": None, "force_k": k_c_r[0], "force_c": k_c_r[1],
                           "force_length": k_c_r[2]})
        end = forward_kinematics(mech, mech.q_home).frames[mech.link_names.index(last) + 1]
        return Record({"force": f"{word} {k}", "force_kind": SPRING_DAMPER,
                       "force_links": (BASE, last), "force_at_a": (0.0, 0.0, 0.0),
                       "force_at_b": (0.0, 0.0, 0.0), "force_k": 0.0, "force_c": 0.0,
                       "force_length": float(np.linalg.norm(end[:3, 3]))})

    def new_road_point(self) -> Record:
        """A road point 1 m beyond the last (x strictly increases) at its height; the
        first point at x = 0, h = 0."""
        last = next((r.cells for r in reversed(self.road)
                     if not isinstance(r.cells["road_x"], Unparsed)
                     and not isinstance(r.cells["road_h"], Unparsed)), None)
        if last is None:
            return Record({"road_x": 0.0, "road_h": 0.0})
        return Record({"road_x": float(last["road_x"]) + 1.0, "road_h": float(last["road_h"])})

    # ----- editing ----------------------------------------------------------------
    def changes_for(self, row: int, key: str, value: Value) -> list[tuple[int, str, Value]]:
        """Setting one cell; renaming a link also renames it where chains, loops and the
        assembly settings refer to it (when the new name is free)."""
        if key == "parent" and value == "":
            value = BASE
        changes = super().changes_for(row, key, value)
        old = self.value(row, key)
        if (key != "name" or not isinstance(old, str) or not old or not isinstance(value, str)
                or not value or value == old or value in self.link_names()):
            return changes
        for c, rec in enumerate(self.chains):
            if rec.cells["parent"] == old:
                changes.append((c, "parent", value))
        for i, rec in enumerate(self.loops):
            for k in ("link_a", "link_b"):
                if rec.cells[k] == old:
                    changes.append((i, k, value))
        independent = self.assembly.cells["independent"]
        if isinstance(independent, tuple) and old in independent:
            changes.append((0, "independent",
                            tuple(value if n == old else n for n in independent)))
        return changes

    def set_cells(self, changes: list[tuple[int, str, Value]]) -> bool:
        self._touched = [(row, key) for row, key, _ in changes]
        try:
            for row, key, value in changes:
                if key in COLUMNS:
                    self.rows[row].cells[key] = value
                else:
                    self._record(row, key).cells[key] = value
            return self.revalidate()
        finally:
            self._touched = []

    # ----- validation -------------------------------------------------------------
    def revalidate(self) -> bool:
        self.model_error = ""
        return super().revalidate()

    def _link_message(self, err: RobotError, row: int) -> str:
        return str(MechanismError(err.reason, chain=self.chain_of_row(row), link=err.link,
                                  link_name=err.link_name, field=err.field))

    def _other_errors(self) -> dict[tuple[int, str], str]:
        """Chain, loop and assembly cells that are not values of their column (a force
        element's or road point's text goes to core, whose message names the element)."""
        errors: dict[tuple[int, str], str] = {}
        for sheet, records, where in (("chains", self.chains, "chain"),
                                      ("loops", self.loops, "loop"),
                                      ("assembly", [self.assembly], None)):
            for i, rec in enumerate(records):
                for key, v in rec.cells.items():
                    if not isinstance(v, Unparsed) or key == "loop_ratio" or (
                            sheet == "loops" and not self.has_cell(i, key)):
                        continue  # (a ratio goes to core as typed: `_loop`; a gear
                        # keeps its unused points as they were)
                    col = self.column(key)
                    if col.kind == "vector":
                        what = _VECTOR_WHAT[key]
                        reason = f"{what} must be 3 numbers, got {v.text!r}"
                    elif col.kind == "loopjoint":
                        reason = ("joint must be 'revolute', 'spherical', 'prismatic' or "
                                  f"'gear', got {v.text!r}")
                    else:
                        reason = f"{col.title} must be a number in (0, 0.01], got {v.text!r}"
                    name = {where: str(rec.cells[where])} if where else {}
                    errors[(i, key)] = str(MechanismError(reason, field=col.field, **name))
        return errors

    def _candidate(self, links: list[Link]) -> Mechanism | None:
        """The mechanism of the valid cells, or None with core's reason in `model_error`,
        on the cells it names and on the cells of the last edit."""
        old = self.robot
        by_chain: dict[int, list[Link]] = {rec.ident: [] for rec in self.chains}
        for link, row in zip(links, self.rows, strict=True):
            by_chain[row.chain].append(link)
        try:
            chains = [Chain(str(rec.cells["chain"]), tuple(by_chain[rec.ident]),
                            None if rec.cells["parent"] in (BASE, "") else
                            str(rec.cells["parent"]),
                            Placement(rec.cells["base_xyz"], rec.cells["base_rpy"]))
                      for rec in self.chains]
            loops = [_loop(rec.cells) for rec in self.loops]
            asm = self.assembly.cells
            forces = tuple(_force_element(rec.cells) for rec in self.forces)
            road = (Road(tuple((_raw(r.cells["road_x"]), _raw(r.cells["road_h"]))
                               for r in self.road)) if self.road else self.pointless_road)
            return Mechanism(name=old.name, chains=tuple(chains), loops=tuple(loops),
                             gravity=old.gravity, description=old.description,
                             forces=forces, road=road,
                             angle_unit=old.angle_unit,
                             assembly=Assembly(asm["independent"], asm["tolerance"]))
        except MechanismError as err:
            self.model_error = str(err)
            touched = [c for c in self._touched if c[0] >= 0]
            for cell in dict.fromkeys(self._error_cells(err) + touched) or [MODEL_ERROR_KEY]:
                self.errors[cell] = self.model_error
            return None

    def _error_cells(self, err: MechanismError) -> list[tuple[int, str]]:
        """The cells core's error names (none for a loop that cannot close)."""
        f = err.field
        if err.element is not None or f == "force.name":
            rows = [i for i, rec in enumerate(self.forces)
                    if (rec.cells["force"] == err.element if err.element is not None
                        else not str(rec.cells["force"]).strip())]
            return [(i, k) for i in rows for k in _FORCE_FIELDS.get(f, ())
                    if self.has_cell(i, k)]
        if f.startswith("road"):  # core counts the point: the cells of the last edit
            return []
        if err.loop is not None:
            rows = [i for i, rec in enumerate(self.loops) if rec.cells["loop"] == err.loop]
            keys = list(_LOOP_FIELDS.get(f, ()))
            if f == "links":
                names = set(self.link_names())
                bad = [k for i in rows for k in keys if self.loops[i].cells[k] not in
                       names | ({BASE} if k == "link_b" else set())]
                keys = bad or keys
            return [(i, k) for i in rows for k in keys]
        if err.chain is not None:
            chains = [c for c, rec in enumerate(self.chains) if rec.cells["chain"] == err.chain]
            if err.link is not None:
                rows = [self.chain_rows(c)[err.link - 1] for c in chains
                        if err.link <= len(self.chain_rows(c))]
                return [(r, k) for r in rows for k in FIELD_CELLS.get(f.split(".")[0], ())]
            return [(c, k) for c in chains for k in _CHAIN_FIELDS.get(f, ())]
        if f.startswith("assembly."):
            return [(0, f.split(".", 1)[1])] if f != "assembly." else []
        if f == "name":  # "chain N needs a non-empty name"
            return [(c, "chain") for c, rec in enumerate(self.chains)
                    if not str(rec.cells["chain"]).strip()]
        if f == "loop.name":
            return [(i, "loop") for i, rec in enumerate(self.loops)
                    if not str(rec.cells["loop"]).strip()]
        return []


@singledispatch
def draft_for(model) -> RobotDraft:
    """The draft that edits `model`: a `RobotDraft` for a Robot (a serial arm's DH table),
    a `MechanismDraft` for a Mechanism (chains and loops)."""
    raise TypeError(f"expected a Robot or Mechanism, got {type(model).__name__}")


draft_for.register(Robot, RobotDraft.from_robot)
draft_for.register(Mechanism, MechanismDraft.from_mechanism)
