"""What the robot tables hold while someone edits them. Qt-free.

A `RobotDraft` is the text a person typed, cell by cell, next to the last
valid `core.Robot`. Editing never raises: a value that core refuses (a
negative mass, "abc", an inertia that breaks the triangle inequality) stays
in its cell, the cell gets the reason (core's `RobotError` message, which
names the link and the field) in `errors`, and `robot` stays the last robot
that passed core's validation. Nothing downstream ever sees an invalid robot.

Cells hold values in SI units and radians (`float`), a link name (`str`), a
`JointType`, `None` (an empty limit) or `Unparsed(text)` (text that is not a
number). The table columns are described once, in `COLUMNS`.

Undo is built on top of this (gui/model/document.py): every edit is a list of
``(row, key, value)`` cell changes or a row insert/remove/move, each exactly
reversible.
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field, replace
from typing import ClassVar, Union

from armdyn.core import JointType, Link, LoopJointType, Robot, RobotError
from armdyn.core.model.rotations import quaternion_rpy, quaternion_rpy_angles
from armdyn.core.model.robot import DRIVE_FIELDS, validate_link

from .units import deg_text_to_rad, display_text, float_text, parse_number, rad_to_deg_text

__all__ = ["Column", "Unparsed", "Row", "RobotDraft", "DH_COLUMNS", "INERTIA_COLUMNS",
           "MECHANISM_DH_COLUMNS", "PLACEMENT_COLUMNS", "DRIVE_COLUMNS", "COLUMNS", "link_has_cell",
           "new_link", "new_robot", "link_cells", "parse_cell", "cell_edit_text",
           "cell_display_text", "vector_parts"]


@dataclass(frozen=True)
class Unparsed:
    """Cell text that is not a value of its column (e.g. "abc" for a mass)."""

    text: str


#: What a cell holds: a number (SI, rad), a flag, a name, a joint type, a 3-vector (a
#: mechanism's base placement, a loop's point or axis), a tuple of names or None.
Value = Union[float, bool, str, JointType, LoopJointType, tuple, None, Unparsed]


@dataclass(frozen=True)
class Column:
    """One table column.

    key   : cell key ("a", "com_x", "ixx", ...)
    title : header text
    unit  : unit shown in the header ("m", "deg", "kg", ...; "" for none)
    kind  : how cells are read and shown: "name", "joint", "length", "angle",
            "limit" (deg for a revolute row, m for a prismatic one), "number",
            "flag" (yes / no); a mechanism's structure adds "choice" (a link name
            picked from a list), "loopjoint" (revolute / spherical / prismatic / gear),
            "vector" (three numbers in `unit`: m, deg, or none) and "names" (link
            names separated by ";", empty for none)
    field : the core field the cell belongs to (`core.Link`'s, or a chain's, loop's
            or [assembly]'s as core's errors name it)
    tip   : header tooltip
    size  : how many numbers a "vector" cell holds (3; a universal joint's home: 2)
    """

    key: str
    title: str
    unit: str
    kind: str
    field: str
    tip: str
    size: int = 3


DH_COLUMNS: tuple[Column, ...] = (
    Column("name", "name", "", "name", "name", "Link name (optional)"),
    Column("joint", "joint", "", "joint", "joint", "Revolute (joint variable theta) or "
           "prismatic (joint variable b)"),
    Column("a", "a", "m", "length", "a", "Link length: along x_i, from the axis of this "
           "joint's frame to the next frame"),
    Column("b", "b", "m", "length", "b", "Joint offset along z_(i-1); the joint variable "
           "of a prismatic joint (the value here is its home position)"),
    Column("alpha", "\u03b1", "deg", "angle", "alpha", "Twist angle alpha: about x_i, "
           "from z_(i-1) to z_i"),
    Column("theta", "\u03b8", "deg", "angle", "theta", "Joint angle theta about z_(i-1); "
           "the joint variable of a revolute joint (the value here is its home position)"),
    Column("lower", "lower", "deg | m", "limit", "limits", "Lower joint limit (deg for a "
           "revolute joint, m for a prismatic one); leave both limits empty for none"),
    Column("upper", "upper", "deg | m", "limit", "limits", "Upper joint limit (deg for a "
           "revolute joint, m for a prismatic one); leave both limits empty for none"),
)

_FRAME = "in the link's own DH frame"
_KG_M2 = "kg m\u00b2"
_MOMENT = f"Moment of inertia about the mass centre, {_FRAME}"
INERTIA_COLUMNS: tuple[Column, ...] = (
    Column("mass", "mass", "kg", "number", "mass", "Link mass, > 0"),
    Column("com_x", "COM x", "m", "number", "com", f"Mass centre x, {_FRAME}"),
    Column("com_y", "COM y", "m", "number", "com", f"Mass centre y, {_FRAME}"),
    Column("com_z", "COM z", "m", "number", "com", f"Mass centre z, {_FRAME}"),
    Column("ixx", "Ixx", _KG_M2, "number", "inertia", _MOMENT),
    Column("iyy", "Iyy", _KG_M2, "number", "inertia", _MOMENT),
    Column("izz", "Izz", _KG_M2, "number", "inertia", _MOMENT),
    Column("ixy", "Ixy", _KG_M2, "number", "inertia", "Product of inertia (tensor "
           "element, not its negative)"),
    Column("ixz", "Ixz", _KG_M2, "number", "inertia", "Product of inertia (tensor "
           "element, not its negative)"),
    Column("iyz", "Iyz", _KG_M2, "number", "inertia", "Product of inertia (tensor "
           "element, not its negative)"),
)

#: Whether a motor drives the joint: shown in the tables of a mechanism (a serial arm's
#: joints are all actuated, so its tables leave the column out).
ACTUATED_COLUMN = Column("actuated", "actuated", "", "flag", "actuated",
                         "yes: a motor drives this joint (inverse dynamics gives its torque; "
                         "by default it is held while the loops are closed); no: passive")
#: The DH table of a mechanism's chains: a serial arm's columns plus `actuated`.
MECHANISM_DH_COLUMNS: tuple[Column, ...] = DH_COLUMNS + (ACTUATED_COLUMN,)

_OWN_FRAME = "in the parent's frame (the frame at the end of the link it hangs on)"
#: Where a spherical, universal or free joint sits and where it starts (a DH row has
#: none of these: its cells are empty and take no value). Angles are roll, pitch, yaw
#: (R = Rz(yaw) Ry(pitch) Rx(roll)), shown in the file's angle unit like every angle of
#: the tables.
PLACEMENT_COLUMNS: tuple[Column, ...] = (
    Column("xyz", "x, y, z", "m", "vector", "xyz",
           f"Where the joint's frame sits, {_OWN_FRAME} (spherical, universal, free)"),
    Column("rpy", "roll, pitch, yaw", "deg", "vector", "rpy",
           f"How the joint's frame is turned (roll, pitch, yaw), {_OWN_FRAME}"),
    Column("home_xyz", "home x, y, z", "m", "vector", "home",
           "A free joint's home position (its body's origin in the parent's frame)"),
    Column("home_rpy", "home r, p, y", "deg", "vector", "home",
           "A free or spherical joint's home orientation (roll, pitch, yaw; the file "
           "may give a quaternion, it is shown as angles)"),
    Column("home_uv", "home \u03b81, \u03b82", "deg", "vector", "home",
           "A universal joint's home: its two joint angles (about its first axis, then "
           "the second)", size=2),
)
#: The placement keys and the joints that have them.
_PLACEMENT_JOINTS: dict[str, tuple[JointType, ...]] = {
    "xyz": (JointType.SPHERICAL, JointType.UNIVERSAL, JointType.FREE),
    "rpy": (JointType.SPHERICAL, JointType.UNIVERSAL, JointType.FREE),
    "home_xyz": (JointType.FREE,),
    "home_rpy": (JointType.SPHERICAL, JointType.FREE),
    "home_uv": (JointType.UNIVERSAL,),
}

#: A joint's friction and drive (docs/motions.md, "Friction and drives"): the keys are
#: core's `Link` fields (`core.model.robot.DRIVE_FIELDS`). Revolute and prismatic joints
#: only; always SI and per radian, whatever a file's angle unit.
DRIVE_COLUMNS: tuple[Column, ...] = (
    Column("friction_viscous", "viscous c_v", "N m s | N s/m", "number",
           "friction_viscous", "Viscous friction c_v >= 0: the joint force c_v qd (N m s/rad "
           "for a revolute joint, N s/m for a prismatic one)"),
    Column("friction_coulomb", "Coulomb c_c", "N m | N", "number", "friction_coulomb",
           "Coulomb friction c_c >= 0: the joint force c_c tanh(qd / 0.01), N m or N"),
    Column("gear_ratio", "gear ratio r", "", "number", "gear_ratio",
           "Motor turns per joint turn, > 0 (1: no gear); the motor torque is the joint "
           "torque / r"),
    Column("rotor_inertia", "rotor inertia I_r", _KG_M2, "number", "rotor_inertia",
           "The motor rotor's inertia about its axis, >= 0, kg m\u00b2 at the motor "
           "(r\u00b2 I_r at the joint)"),
)
#: The joints that have friction and drive cells, and their units by joint.
_DRIVE_JOINTS = (JointType.REVOLUTE, JointType.PRISMATIC)
_DRIVE_UNITS = {"friction_viscous": ("N m s/rad", "N s/m"), "friction_coulomb": ("N m", "N")}
_DRIVE_DEFAULTS = {f: (1.0 if f == "gear_ratio" else 0.0) for f in DRIVE_FIELDS}

#: Every column by key.
COLUMNS: dict[str, Column] = {c.key: c for c in MECHANISM_DH_COLUMNS + INERTIA_COLUMNS
                              + PLACEMENT_COLUMNS + DRIVE_COLUMNS}


def link_has_cell(joint: JointType, key: str) -> bool:
    """Whether a link on `joint` has the cell `key` (a DH row has no placement cells, a
    spherical joint no home position, friction or drive)."""
    if key in _DRIVE_DEFAULTS:
        return joint in _DRIVE_JOINTS
    return joint in _PLACEMENT_JOINTS.get(key, (joint,))

_COM_KEYS = ("com_x", "com_y", "com_z")
_INERTIA_KEYS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
#: The cells of each core field (core's errors name fields, the table marks cells).
FIELD_CELLS: dict[str, tuple[str, ...]] = {
    "com": _COM_KEYS, "inertia": _INERTIA_KEYS, "limits": ("lower", "upper"),
    "home": ("home_xyz", "home_rpy", "home_uv"),
    **{k: (k,) for k in ("name", "joint", "a", "b", "alpha", "theta", "mass", "xyz",
                         "rpy", *DRIVE_FIELDS)},
}

_FLAG_WORDS = {"yes": True, "y": True, "true": True, "1": True, "x": True, "on": True,
               "no": False, "n": False, "false": False, "0": False, "": False, "off": False}
_JOINT_WORDS = {"revolute": JointType.REVOLUTE, "r": JointType.REVOLUTE,
                "rev": JointType.REVOLUTE, "prismatic": JointType.PRISMATIC,
                "p": JointType.PRISMATIC, "pri": JointType.PRISMATIC,
                "slider": JointType.PRISMATIC}
_LOOP_JOINT_WORDS = {"revolute": LoopJointType.REVOLUTE, "r": LoopJointType.REVOLUTE,
                     "rev": LoopJointType.REVOLUTE, "pin": LoopJointType.REVOLUTE,
                     "spherical": LoopJointType.SPHERICAL, "s": LoopJointType.SPHERICAL,
                     "sph": LoopJointType.SPHERICAL, "ball": LoopJointType.SPHERICAL,
                     "prismatic": LoopJointType.PRISMATIC, "p": LoopJointType.PRISMATIC,
                     "pri": LoopJointType.PRISMATIC, "slider": LoopJointType.PRISMATIC,
                     "gear": LoopJointType.GEAR, "g": LoopJointType.GEAR}


# ----------------------------------------------------------------------------------
# Cell text: one set of rules for every table (links, chains, loops, assembly)
# ----------------------------------------------------------------------------------

def _number_text(x: float, degrees: bool) -> str:
    return rad_to_deg_text(x) if degrees else float_text(x)


def cell_edit_text(value: Value, degrees: bool) -> str:
    """A cell value as text to edit or copy: exact (reads back as the same value).
    `degrees`: the cell's numbers are angles shown in degrees."""
    if isinstance(value, Unparsed):
        return value.text
    if value is None:
        return ""
    if isinstance(value, (JointType, LoopJointType)):
        return value.value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, tuple):
        if all(isinstance(v, str) for v in value):
            return "; ".join(value)
        return ", ".join(_number_text(v, degrees) for v in value)
    return _number_text(value, degrees)


def cell_display_text(col: Column, value: Value, degrees: bool, unit: str = "") -> str:
    """A cell value as shown: numbers rounded to 6 significant digits; limits with
    their unit (`unit`: the cell's, "m" or "rad" when not in degrees)."""
    if isinstance(value, bool):
        return "\u2714 yes" if value else "no"
    if isinstance(value, float):
        text = display_text(math.degrees(value) if degrees else value)
        if col.kind == "limit":
            text += "\u00b0" if degrees else f" {unit or 'm'}"
        return text
    if isinstance(value, tuple) and col.kind == "vector":
        return ", ".join(display_text(math.degrees(v) if degrees else v) for v in value)
    return cell_edit_text(value, degrees)


def vector_parts(text: str) -> tuple[str, ...]:
    """The numbers of a vector cell's text, as typed: separated by commas, semicolons or
    blanks, brackets allowed ("[1, 2; 3]" -> ("1", "2", "3"))."""
    return tuple(p for p in re.split(r"[,;\s]+", text.strip().strip("[]()")) if p)


def _parse_vector(text: str, degrees: bool, size: int = 3) -> Value:
    """`size` numbers separated by commas, semicolons or blanks (brackets allowed)."""
    parts = vector_parts(text)
    if len(parts) != size:
        return Unparsed(text)
    try:
        return tuple(deg_text_to_rad(p) if degrees else parse_number(p) for p in parts)
    except ValueError:
        return Unparsed(text)


def parse_cell(col: Column, value: object, degrees: bool) -> Value:
    """What typing `value` (text, a number, a flag, a joint type, a tuple) into a cell of
    column `col` stores. Never raises: text that is not a value of the column becomes
    `Unparsed`. Numbers typed in degrees (`degrees`) are converted to radians exactly."""
    kind = col.kind
    if kind in ("name", "choice"):
        return str(value).strip()
    if kind in ("joint", "loopjoint"):
        types, words = ((JointType, _JOINT_WORDS) if kind == "joint"
                        else (LoopJointType, _LOOP_JOINT_WORDS))
        if isinstance(value, types):
            return value
        return words.get(str(value).strip().lower(), Unparsed(str(value)))
    if kind == "flag":
        if isinstance(value, bool):
            return value
        return _FLAG_WORDS.get(str(value).strip().lower().lstrip("\u2714 "),
                               Unparsed(str(value)))
    if kind == "names":
        if value is None or isinstance(value, tuple):
            return value
        names = tuple(n.strip() for n in str(value).split(";") if n.strip())
        return names or None
    if kind == "vector":
        if isinstance(value, (tuple, list)) and len(value) == col.size and not any(
                isinstance(v, (bool, str)) for v in value):
            return tuple(math.radians(v) if degrees else float(v) for v in value)
        return _parse_vector(str(value), degrees, col.size)
    if isinstance(value, bool):
        return Unparsed(str(value))
    if isinstance(value, (int, float)):
        return math.radians(value) if degrees else float(value)
    text = str(value)
    if kind == "limit" and not text.strip():
        return None
    try:
        return deg_text_to_rad(text) if degrees else parse_number(text)
    except ValueError:
        return Unparsed(text)


# ----------------------------------------------------------------------------------
# Links <-> cells
# ----------------------------------------------------------------------------------

def link_cells(link: Link) -> dict[str, Value]:
    """The cells of one table row showing `link` (SI units, radians)."""
    lower, upper = link.limits if link.limits is not None else (None, None)
    cells: dict[str, Value] = {
        "name": link.name, "joint": link.joint, "a": link.a, "b": link.b,
        "alpha": link.alpha, "theta": link.theta, "lower": lower, "upper": upper,
        "mass": link.mass, "actuated": bool(link.actuated),
    }
    cells.update(zip(_COM_KEYS, link.com, strict=True))
    cells.update(zip(_INERTIA_KEYS, link.inertia, strict=True))
    has = {key: link_has_cell(link.joint, key) for key in _PLACEMENT_JOINTS}
    home = link.q_values
    cells["xyz"] = tuple(link.xyz) if has["xyz"] else None
    cells["rpy"] = tuple(link.rpy) if has["rpy"] else None
    cells["home_xyz"] = tuple(home[:3]) if has["home_xyz"] else None
    cells["home_rpy"] = (tuple(float(v) for v in quaternion_rpy_angles(home[-4:]))
                         if has["home_rpy"] else None)
    cells["home_uv"] = tuple(float(v) for v in home) if has["home_uv"] else None
    driven = link_has_cell(link.joint, DRIVE_FIELDS[0])
    cells.update({f: float(getattr(link, f)) if driven else None for f in DRIVE_FIELDS})
    return cells


def _home(joint: JointType, placed: dict[str, Value]) -> tuple[float, ...] | None:
    """A link's `home` from its home cells (a quaternion from the angles; a universal
    joint's two angles as they are, rad)."""
    if joint == JointType.FREE:
        return tuple(placed["home_xyz"]) + quaternion_rpy(placed["home_rpy"])
    if joint == JointType.SPHERICAL:
        return quaternion_rpy(placed["home_rpy"])
    if joint == JointType.UNIVERSAL:
        return tuple(placed["home_uv"]) if placed["home_uv"] is not None else None
    return None


def _cells_link(cells: dict[str, Value], fallback: Link,
                origin: Link | None = None) -> Link:
    """The link the cells describe; an `Unparsed` cell takes `fallback`'s value, and
    a joint with no friction and drive cells (spherical, universal, free) has none. Home
    cells that read as `fallback`'s or `origin`'s (the row's link as
    loaded) give that link's home exactly: angles read from a quaternion do not make
    the same quaternion bit for bit, and an undo must give back the model it had."""
    def pick(key: str, default):
        v = cells[key]
        return default if isinstance(v, Unparsed) else v

    old = link_cells(fallback)
    lower, upper = pick("lower", old["lower"]), pick("upper", old["upper"])
    joint = pick("joint", fallback.joint)
    placed = {key: pick(key, old[key]) if link_has_cell(joint, key) else None
              for key in _PLACEMENT_JOINTS}
    kept = next((link for link in (fallback, origin) if link is not None
                 and link.joint == joint and _same_home(placed, link)), None)
    if kept is None and joint == fallback.joint and any(
            placed[k] is None for k in _PLACEMENT_JOINTS if link_has_cell(joint, k)):
        kept = fallback
    home = (kept.home if kept is not None
            else _home(joint, placed))
    drive = {f: (pick(f, getattr(fallback, f)) if link_has_cell(joint, f) else None)
             for f in DRIVE_FIELDS}
    drive = {f: _DRIVE_DEFAULTS[f] if v is None else v for f, v in drive.items()}
    return replace(
        fallback,
        **drive,
        joint=joint,
        xyz=placed["xyz"] or (0.0, 0.0, 0.0), rpy=placed["rpy"] or (0.0, 0.0, 0.0),
        home=home,
        a=pick("a", fallback.a), b=pick("b", fallback.b),
        alpha=pick("alpha", fallback.alpha), theta=pick("theta", fallback.theta),
        mass=pick("mass", fallback.mass),
        com=tuple(pick(k, old[k]) for k in _COM_KEYS),
        inertia=tuple(pick(k, old[k]) for k in _INERTIA_KEYS),
        limits=None if lower is None and upper is None else (lower, upper),
        name=str(cells["name"]),
        actuated=bool(pick("actuated", fallback.actuated)),
    )


def _same_home(placed: dict[str, Value], link: Link) -> bool:
    """Whether the home cells `placed` read as `link`'s home."""
    cells = link_cells(link)
    return all(placed[k] == cells[k] for k in FIELD_CELLS["home"])


def _probe(link: Link, key: str, raw: object) -> Link:
    """`link` with the field of cell `key` holding `raw` (to get core's message for it)."""
    col = COLUMNS[key]
    if col.field == "com":
        com = list(link.com)
        com[_COM_KEYS.index(key)] = raw
        return replace(link, com=tuple(com))
    if col.field == "inertia":
        inertia = list(link.inertia)
        inertia[_INERTIA_KEYS.index(key)] = raw
        return replace(link, inertia=tuple(inertia))
    if col.kind == "vector":  # core reads each of the typed numbers, or counts them
        parts = vector_parts(str(raw))
        if key == "home_uv":  # a universal joint's whole home: core counts the angles
            return replace(link, home=parts)
        if col.field == "home":  # the typed angles or position, the rest of home kept
            home = list(link.q_values)
            at = 0 if key == "home_xyz" else len(home) - 4
            if len(parts) == 3:
                home[at:at + 3] = parts
            return replace(link, home=tuple(home))
        return replace(link, **{col.field: parts})
    if col.field == "limits":
        lo, hi = link.limits if link.limits is not None else (-1.0, 1.0)
        return replace(link, limits=(raw, hi) if key == "lower" else (lo, raw))
    return replace(link, **{col.field: raw})


def new_link(existing: tuple[Link, ...] | list[Link] = ()) -> Link:
    """A plausible link to add to a robot: the typical link length of `existing`.

    A revolute joint, a rod of length `a` along x with its mass centre at mid
    length (com = [-a/2, 0, 0]), 1 kg, inertia of a slender rod.
    """
    lengths = [abs(v) for link in existing for v in (link.a, link.b) if abs(v) > 1e-9]
    a = round(statistics.median(lengths), 3) if lengths else 0.3
    rod = 1.0 * a * a / 12.0
    return Link(a=a, mass=1.0, com=(-a / 2.0, 0.0, 0.0),
                inertia=(1e-3, rod + 1e-3, rod + 1e-3, 0.0, 0.0, 0.0))


def new_robot() -> Robot:
    """The robot of File > New: a two-link planar arm with z_0 up."""
    first = new_link()
    return Robot(name="Untitled robot", links=(first, first),
                 description="A new robot made in ArmDyn.")


# ----------------------------------------------------------------------------------
# The draft
# ----------------------------------------------------------------------------------

@dataclass
class Row:
    """One link as the tables hold it.

    cells      : the cell values (see module docstring)
    valid_link : the last link this row held that core accepted; an `Unparsed`
                 cell shows its text but the row otherwise keeps this value
    """

    cells: dict[str, Value]
    valid_link: Link
    chain: int | None = None  # a mechanism's rows: the id of the chain they belong to
    origin: Link | None = None  # the link as loaded or added (its home, exactly)

    @classmethod
    def from_link(cls, link: Link, chain: int | None = None) -> "Row":
        return cls(link_cells(link), link, chain, link)

    def copy(self) -> "Row":
        return Row(dict(self.cells), self.valid_link, self.chain, self.origin)


@dataclass
class RobotDraft:
    """The edit state of the robot tables: cells, errors and the last valid robot.

    robot  : the last valid robot (what the 3D view, the pose and runs use)
    rows   : one `Row` per link, in table order
    errors : {(row, key): reason} for every cell that core refuses; reason is
             core's message naming the link and the field
    """

    robot: Robot
    rows: list[Row] = field(default_factory=list)
    errors: dict[tuple[int, str], str] = field(default_factory=dict)
    #: whether the draft edits chains and loops (a mechanism) besides its links
    edits_chains: ClassVar[bool] = False

    @classmethod
    def from_robot(cls, robot: Robot) -> "RobotDraft":
        return cls(robot, [Row.from_link(link) for link in robot.links])

    # ----- reading ----------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of rows (links) in the tables (may differ from robot.n while invalid)."""
        return len(self.rows)

    @property
    def is_valid(self) -> bool:
        """True if the tables describe `robot` exactly (no refused cell)."""
        return not self.errors

    def column(self, key: str) -> Column:
        """The column of a cell key (KeyError if there is none)."""
        return COLUMNS[key]

    def has_cell(self, row: int, key: str) -> bool:
        """Whether (row, key) addresses a cell of this draft (a DH row has no placement)."""
        return 0 <= row < self.n and key in COLUMNS and link_has_cell(self.joint(row), key)

    def value(self, row: int, key: str) -> Value:
        return self.rows[row].cells[key]

    def joint(self, row: int) -> JointType:
        j = self.rows[row].cells["joint"]
        return j if isinstance(j, JointType) else self.rows[row].valid_link.joint

    def link_name(self, row: int) -> str:
        """The row's name, or "link N" when it has none (as `Robot.link_names`)."""
        name = self.rows[row].cells["name"]
        return name if isinstance(name, str) and name else f"link {row + 1}"

    def link_number(self, row: int) -> int:
        """The 1-based number of the row's link as core's messages count it."""
        return row + 1

    @property
    def angle_unit(self) -> str:
        """The unit the tables show and read angles in: the file's `angle_unit`, "deg"
        or "rad" (the values held are radians either way)."""
        return self.robot.angle_unit

    def column_unit(self, col: Column) -> str:
        """A column's unit as its header shows it: angles in `angle_unit`."""
        return col.unit.replace("deg", self.angle_unit)

    def unit(self, row: int, key: str, joint: JointType | None = None) -> str:
        """The unit of one cell ("deg" or "rad" as the file says, "m", ...); a limit's
        unit follows the joint type (the row's, or `joint` if given)."""
        col = self.column(key)
        if col.kind == "limit":
            joint = joint or self.joint(row)
            return self.angle_unit if joint == JointType.REVOLUTE else "m"
        if key in _DRIVE_UNITS:
            return _DRIVE_UNITS[key][(joint or self.joint(row)) != JointType.REVOLUTE]
        return self.column_unit(col)

    def _in_degrees(self, row: int, key: str, joint: JointType | None = None) -> bool:
        return self.unit(row, key, joint) == "deg"

    def edit_text(self, row: int, key: str) -> str:
        """The cell as text to edit or copy: exact (reads back as the same value)."""
        return cell_edit_text(self.value(row, key), self._in_degrees(row, key))

    def display_text(self, row: int, key: str) -> str:
        """The cell as shown: rounded to 6 significant digits; limits with their unit."""
        return cell_display_text(self.column(key), self.value(row, key),
                                 self._in_degrees(row, key), self.unit(row, key))

    # ----- parsing ----------------------------------------------------------------
    def parse(self, row: int, key: str, value: object, joint: JointType | None = None) -> Value:
        """What typing `value` (text, a number or a JointType) into a cell stores.

        Never raises: text that is not a value of the column becomes `Unparsed`.
        Numbers typed in degree columns are converted to radians. `joint`
        overrides the row's joint type (to read limits pasted with a new type). A
        cell the row's joint does not have (a DH row's placement) holds None.
        """
        if ((key in _PLACEMENT_JOINTS or key in _DRIVE_DEFAULTS)
                and not link_has_cell(joint or self.joint(row), key)):
            return None
        return parse_cell(self.column(key), value, self._in_degrees(row, key, joint))

    def changes_for(self, row: int, key: str, value: Value) -> list[tuple[int, str, Value]]:
        """The cell changes that setting one cell implies.

        Changing the joint type clears the limits (degrees do not become metres), and
        friction and drive: a spherical, universal or free joint has none, and a revolute
        joint's per radian are not a prismatic joint's per metre (they start at their
        defaults).
        """
        changes = [(row, key, value)]
        if key == "joint" and isinstance(value, JointType) and value != self.joint(row):
            changes += [(row, "lower", None), (row, "upper", None)]
            changes += [(row, f, _DRIVE_DEFAULTS[f] if link_has_cell(value, f) else None)
                        for f in DRIVE_FIELDS]
        return changes

    def new_row(self, index: int) -> Row:
        """The row that File > Add / Insert puts at `index` (a plausible new link)."""
        return Row.from_link(new_link(self.robot.links))

    def can_remove(self, first: int, count: int) -> bool:
        """Whether `count` rows from `first` may be deleted (a link must remain)."""
        return first >= 0 and count > 0 and first + count <= self.n and count < self.n

    def can_move(self, src: int, dst: int) -> bool:
        """Whether row `src` may move to `dst` (both in range)."""
        return 0 <= src < self.n and 0 <= dst < self.n and src != dst

    # ----- editing (each returns True if the valid robot changed) -----------------
    def set_cells(self, changes: list[tuple[int, str, Value]]) -> bool:
        """Store values (already parsed) in cells, then revalidate."""
        for row, key, value in changes:
            self.rows[row].cells[key] = value
        return self.revalidate()

    def insert_rows(self, index: int, rows: list[Row]) -> bool:
        self.rows[index:index] = [r.copy() for r in rows]
        return self.revalidate()

    def remove_rows(self, index: int, count: int) -> tuple[list[Row], bool]:
        """Remove `count` rows at `index`; return them (for undo) and whether robot changed."""
        removed = self.rows[index:index + count]
        del self.rows[index:index + count]
        return removed, self.revalidate()

    def move_row(self, src: int, dst: int) -> bool:
        """Move row `src` so that it ends up at index `dst`."""
        self.rows.insert(dst, self.rows.pop(src))
        return self.revalidate()

    # ----- validation -------------------------------------------------------------
    def revalidate(self) -> bool:
        """Recompute `errors`; adopt the rows as `robot` if all are valid.

        Returns True if `robot` changed.
        """
        errors: dict[tuple[int, str], str] = {}
        links: list[Link] = []
        for i, row in enumerate(self.rows):
            link, row_errors = self._check_row(i, row)
            if row_errors:
                errors.update(row_errors)
            else:
                row.valid_link = link
                links.append(link)
        if not self.rows:
            errors[(-1, "link")] = str(RobotError("a robot needs at least one link",
                                                  field="link"))
        errors.update(self._other_errors())
        self.errors = errors
        if errors:
            return False
        candidate = self._candidate(links)
        if candidate is None or candidate == self.robot:
            return False
        self.robot = candidate
        return True

    def _other_errors(self) -> dict[tuple[int, str], str]:
        """Refused cells outside the link rows (a mechanism's chains, loops, assembly)."""
        return {}

    def _link_message(self, err: RobotError, row: int) -> str:
        """Core's message for a refused cell of link row `row` (a mechanism names the
        chain and numbers the link within it)."""
        return str(err)

    def _candidate(self, links: list[Link]) -> Robot | None:
        """The model the valid rows describe (a subclass may refuse it: None, with its
        reasons added to `errors`)."""
        return replace(self.robot, links=tuple(links))  # cannot fail: links are valid

    def _check_row(self, i: int, row: Row) -> tuple[Link, dict[tuple[int, str], str]]:
        """The row's link and the reasons of its refused cells (empty if valid)."""
        index = self.link_number(i)
        name = str(row.cells["name"])
        errors: dict[tuple[int, str], str] = {}
        base = replace(row.valid_link, name=name)
        for key, v in row.cells.items():
            if isinstance(v, Unparsed):
                errors[(i, key)] = self._link_message(
                    _reason(_probe(base, key, v.text), index, key, v.text), i)
        link = _cells_link(row.cells, row.valid_link, row.origin)
        lower, upper = row.cells["lower"], row.cells["upper"]
        if (lower is None) != (upper is None):
            missing = "lower" if lower is None else "upper"
            errors[(i, missing)] = self._link_message(RobotError(
                "give both a lower and an upper limit, or leave both empty for none",
                link=index, link_name=name, field="limits"), i)
            return link, errors
        try:
            validate_link(link, index)
        except RobotError as e:
            cells = [k for k in FIELD_CELLS.get(e.field.split(".")[0], ())
                     if (i, k) not in errors]
            old = link_cells(row.valid_link)
            changed = [k for k in cells if not _same(row.cells[k], old[k])]
            for k in changed or cells:
                errors[(i, k)] = self._link_message(e, i)
        return link, errors


def _reason(probe: Link, index: int, key: str, text: str) -> RobotError:
    """Core's error for the one bad field of `probe` (which holds `text`)."""
    try:
        validate_link(probe, index)
    except RobotError as e:
        return e
    # Not reached (core refuses every non-number), but never report a bad cell as fine.
    return RobotError(f"cannot read {text!r}", link=index, link_name=probe.name,
                      field=COLUMNS[key].field)


def _same(a: Value, b: Value) -> bool:
    """Cell values equal (two NaNs are not: a NaN is always a change)."""
    return type(a) is type(b) and a == b
