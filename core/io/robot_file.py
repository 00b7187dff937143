"""Read and write robot files (TOML, format "armdyn-robot/1").

The format is the contract in docs/robot-file.md: one ``[[link]]`` table per
row of the DH table, DH columns first, then mass, mass centre and inertia.

Public functions
----------------
load_robot(path) -> Robot
    Read a robot file. The only exception it raises is `RobotFileError`,
    whatever the file holds; its message names the file, the link (1-based
    number and name) and the field, and says what was expected. Nothing is
    half-loaded: either a fully validated `Robot` comes back or an error.
    Warnings (a link longer than 10 m, ...) are on ``robot.warnings``.
save_robot(robot, path) -> None
    Write a robot file atomically (temporary file in the same directory,
    fsync, ``os.replace``); on failure the old file is left as it was, no
    temporary file remains, and `RobotFileError` is raised.
robot_to_toml(robot) -> str / robot_from_toml(text, source="<memory>") -> Robot
    The same, to and from a string (e.g. for copy and paste).
robot_to_dict(robot) -> dict / robot_from_dict(data, source="<memory>") -> Robot
    The same, to and from the parsed TOML layout (plain dicts, lists, floats).
link_from_table(row, where, unit) -> Link / link_toml_lines(link, unit, where)
    One link table read or written; shared with mechanism files
    (`core.io.mechanism_file`), whose [[chain.link]] tables hold the same fields.

The number parsing, angle conversion, string quoting and file reading are
`core.io.toml_io`'s, shared with mechanism files.

Fields (decided from docs/robot-file.md: a field is optional only where the
doc says "optional" or gives a default)
    top level : format (required, "armdyn-robot/1"), name (required,
                non-empty), description (optional, ""), angle_unit (optional,
                "deg" or "rad", default "deg"), gravity (optional, 3 numbers,
                default [0, 0, -9.81]), link (one or more [[link]] tables)
    [[link]]  : joint ("revolute" or "prismatic"), a, b, alpha, theta, mass,
                com (3 numbers), inertia (table with xx, yy, zz; xy, xz, yz
                default to 0) are required; name (default: "link N", stored
                as "" so `Robot.link_names` supplies it), limits
                ([lower, upper], strictly increasing) and the friction and drive
                fields (`DRIVE_FIELDS`: friction_viscous, friction_coulomb >= 0,
                gear_ratio > 0 (default 1), rotor_inertia >= 0; SI units, per
                radian whatever angle_unit says; written only when not the
                default) are optional.
    Integers are accepted wherever a number is; booleans are not. Unknown
    fields are refused and the closest known name is suggested. At most
    `MAX_LINKS` links and `MAX_FILE_BYTES` bytes. A UTF-8 byte-order mark is
    tolerated. Numbers must be finite and, in SI units and radians, at most
    1e12 in magnitude.

Error fields are the file's key names; keys inside ``inertia`` are reported
as "inertia.xx" and so on (the part before the dot is the table column).

Angles
    alpha, theta and the limits of a revolute joint are in ``angle_unit``.
    Degrees are converted with 60-digit decimal arithmetic from the exact
    decimal text in the file, so the radian value is the double nearest to
    deg * pi / 180. The writer puts, for every angle, the shortest decimal
    whose conversion gives back that double, so load(save(robot)) == robot
    exactly in both units (a value typed as 90 reads as the double nearest
    pi/2, and is written back as 90.0).
"""
from __future__ import annotations

import re

from .atomic import write_atomically
from ..errors import RobotError, RobotFileError
from ..model.parts import DEFAULT_GRAVITY, JointType, Link
from ..model.robot import DRIVE_FIELDS, Robot
from .toml_io import MAX_FILE_BYTES
from .toml_io import (ANGLE_UNITS, Where, check_keys, decode_utf8, deg_text, describe,
                      display_path, float_text, key_on_line, number, numbers,
                      parse_toml, read_bytes, short, string, suggest, syntax_error_line,
                      toml_str, utf8)

__all__ = ["FORMAT", "MAX_FILE_BYTES", "MAX_LINKS", "load_robot", "save_robot",
           "robot_to_toml", "robot_from_toml", "robot_to_dict", "robot_from_dict",
           "link_from_table", "link_toml_lines", "LINK_FIELDS", "LINK_REQUIRED",
           "INERTIA_FIELDS"]

#: The value of `format` this version reads and writes.
FORMAT = "armdyn-robot/1"
#: Most links in one robot.
MAX_LINKS = 1000
# MAX_FILE_BYTES (largest file read, bytes) and MAX_ABS (largest magnitude of any
# number, SI and rad) come from core.io.toml_io, shared with mechanism files.

TOP_FIELDS = ("format", "name", "description", "angle_unit", "gravity", "link")
LINK_FIELDS = ("name", "joint", "a", "b", "alpha", "theta", "mass", "com", "inertia", "limits",
               *DRIVE_FIELDS)
LINK_REQUIRED = ("joint", "a", "b", "alpha", "theta", "mass", "com", "inertia")
INERTIA_FIELDS = ("xx", "yy", "zz", "xy", "xz", "yz")
INERTIA_REQUIRED = ("xx", "yy", "zz")


# ======================================================================================
# Public API
# ======================================================================================

def load_robot(path) -> Robot:
    """Read the robot file at `path`; raise only `RobotFileError`."""
    shown = display_path(path)
    try:
        if shown is None:
            raise RobotError(f"expected a file path (str or os.PathLike), got "
                             f"{type(path).__name__}")
        text = decode_utf8(read_bytes(path, "robot file"))
        return _robot_from_text(text)
    except RobotFileError:
        raise
    except RobotError as e:
        raise _file_error(shown or repr(path), e) from None
    except RecursionError:
        raise RobotFileError(shown or repr(path), "the file is nested too deeply to be a "
                             "robot file") from None
    except MemoryError:
        raise RobotFileError(shown or repr(path), "out of memory while reading the file") from None
    except Exception as e:  # anything else: still a RobotFileError, with the cause chained
        raise RobotFileError(shown or repr(path),
                             f"cannot read the file ({type(e).__name__}: {e})") from e


def save_robot(robot: Robot, path) -> None:
    """Write `robot` to `path` in the robot-file format, atomically.

    The text is written to a temporary file in the target's directory,
    flushed and fsynced, then moved over the target with ``os.replace``
    (the target keeps its permission bits). On any failure the target is
    unchanged, the temporary file is removed and `RobotFileError` is raised
    (a non-Robot argument raises TypeError).
    """
    if not isinstance(robot, Robot):
        raise TypeError(f"save_robot expects a Robot, got {type(robot).__name__}")
    shown = display_path(path)
    if shown is None:
        raise RobotFileError(repr(path), f"expected a file path (str or os.PathLike), got "
                             f"{type(path).__name__}")
    try:
        data = robot_to_toml(robot).encode("utf-8")
    except RobotError as e:
        raise _file_error(shown, e) from None
    try:
        write_atomically(path, data)
    except OSError as e:
        raise RobotFileError(shown, f"cannot write the file: {e.strerror or e}") from e


def robot_from_toml(text: str, source: str = "<memory>") -> Robot:
    """Parse robot-file text; raise only `RobotFileError` (path = `source`)."""
    try:
        if not isinstance(text, str):
            raise RobotError(f"expected text (str), got {type(text).__name__}")
        return _robot_from_text(text)
    except RobotError as e:
        raise _file_error(source, e) from None
    except RecursionError:
        raise RobotFileError(source, "the text is nested too deeply to be a robot file") from None
    except Exception as e:
        raise RobotFileError(source, f"cannot read the text ({type(e).__name__}: {e})") from e


def robot_from_dict(data: dict, source: str = "<memory>") -> Robot:
    """Build a Robot from the parsed-file layout; raise only `RobotFileError`.

    Numbers may be int, float or Decimal (a float is read as its repr, e.g.
    33.3 as the decimal 33.3); angles are in ``data["angle_unit"]``.
    """
    try:
        return _build_robot(data)
    except RobotError as e:
        raise _file_error(source, e) from None
    except RecursionError:
        raise RobotFileError(source, "the data is nested too deeply") from None
    except Exception as e:
        raise RobotFileError(source, f"cannot read the data ({type(e).__name__}: {e})") from e


def robot_to_dict(robot: Robot) -> dict:
    """The robot in the file's layout: plain dicts, lists, str and float.

    Angles are in ``robot.angle_unit``. `robot_from_dict` reads a float as
    its shortest repr (the text a person would type), so the dict round-trips
    exactly, except that with "deg" some radian values (about one in ten
    of arbitrary ones; none typed in degrees with up to 15 digits) are
    reached by no double's repr, and come back one unit in the last place
    off. The text form, `robot_to_toml`, is always exact.
    """
    deg = robot.angle_unit == "deg"
    out: dict = {"format": FORMAT, "name": robot.name}
    if robot.description:
        out["description"] = robot.description
    out["angle_unit"] = robot.angle_unit
    out["gravity"] = [float(g) for g in robot.gravity]
    rows = []
    for link in robot.links:
        ang = (lambda x: float(deg_text(x))) if deg else float
        row: dict = {}
        if link.name:
            row["name"] = link.name
        row["joint"] = link.joint.value
        row.update(a=float(link.a), b=float(link.b), alpha=ang(link.alpha),
                   theta=ang(link.theta), mass=float(link.mass),
                   com=[float(c) for c in link.com], inertia=_inertia_dict(link))
        if link.limits is not None:
            lim = ang if link.is_revolute else float
            row["limits"] = [lim(v) for v in link.limits]
        row.update({f: float(v) for f, v in _drive_values(link)})
        rows.append(row)
    out["link"] = rows
    return out


def robot_to_toml(robot: Robot) -> str:
    """The robot-file text of `robot` (see module docstring); exact round trip.

    Raises RobotError if a string cannot be written as UTF-8 (a lone surrogate).
    """
    unit = robot.angle_unit
    top = Where()
    out = [
        f"# ArmDyn robot file ({FORMAT}): one [[link]] table per row of the DH table.",
        f"# a, b in m; alpha, theta and revolute-joint limits in {unit}; mass in kg;",
        "# com (m) and inertia (kg m^2, about the mass centre) in the link's own DH frame.",
        f"format = {toml_str(FORMAT)}",
        f"name = {toml_str(utf8(robot.name, top, 'name'))}",
    ]
    if robot.description:
        out.append(f"description = "
                   f"{toml_str(utf8(robot.description, top, 'description'), multiline=True)}")
    out.append(f"angle_unit = {toml_str(unit)}")
    out.append(f"gravity = [{', '.join(float_text(g) for g in robot.gravity)}]")
    for i, link in enumerate(robot.links, start=1):
        out += ["", "[[link]]"]
        out += link_toml_lines(link, unit, Where(link=i))
    return "\n".join(out) + "\n"


def inertia_toml(link: Link) -> str:
    """The line ``inertia = { xx = ..., ... }`` of a link (zero products left out)."""
    parts = [f"{k} = {float_text(v)}" for k, v in zip(INERTIA_FIELDS, link.inertia)
             if k in INERTIA_REQUIRED or v != 0.0]
    return f"inertia = {{ {', '.join(parts)} }}"


def link_toml_lines(link: Link, unit: str, w: Where) -> list[str]:
    """The ``key = value`` lines of one link table in the documented column order
    (name if any, joint, a, b, alpha, theta, mass, com, inertia, limits if any);
    angles in `unit`. `w` places the error for a name that is not UTF-8."""
    ang = deg_text if unit == "deg" else float_text
    out = []
    if link.name:
        out.append(f"name = {toml_str(utf8(link.name, w, 'name'))}")
    out.append(f"joint = {toml_str(link.joint.value)}")
    out.append(f"a = {float_text(link.a)}")
    out.append(f"b = {float_text(link.b)}")
    out.append(f"alpha = {ang(link.alpha)}")
    out.append(f"theta = {ang(link.theta)}")
    out.append(f"mass = {float_text(link.mass)}")
    out.append(f"com = [{', '.join(float_text(c) for c in link.com)}]")
    out.append(inertia_toml(link))
    if link.limits is not None:
        lim = ang if link.is_revolute else float_text
        out.append(f"limits = [{', '.join(lim(v) for v in link.limits)}]")
    out += [f"{f} = {float_text(v)}" for f, v in _drive_values(link)]
    return out


def _drive_values(link: Link) -> list[tuple[str, float]]:
    """(field, value) of the friction and drive fields that are not their defaults."""
    return [(f, getattr(link, f)) for f in DRIVE_FIELDS
            if getattr(link, f) != (1.0 if f == "gear_ratio" else 0.0)]


# ======================================================================================
# Reading
# ======================================================================================

def _file_error(path: str, e: RobotError) -> RobotFileError:
    return RobotFileError(path, e.reason, link=e.link, link_name=e.link_name, field=e.field)


_LINK_HEADER = re.compile(r"^\s*\[\[\s*(?:link|\"link\"|'link')\s*\]\]")


def _robot_from_text(text: str) -> Robot:
    if not text.strip():
        raise RobotError(f"the file is empty; expected a robot file starting with "
                         f'format = "{FORMAT}"')
    doc = parse_toml(text, _syntax_error)
    if not doc:
        raise RobotError(f"the file is empty (comments only); expected a robot file starting "
                         f'with format = "{FORMAT}"')
    return _build_robot(doc)


def _syntax_error(text: str, message: str) -> RobotError:
    """A RobotError for a TOML syntax error, with the link and key it is in if known."""
    link = None
    key = ""
    line_no = syntax_error_line(message)
    if line_no is not None:
        lines = text.splitlines()
        n = sum(1 for line in lines[:line_no] if _LINK_HEADER.match(line))
        link = n or None
        key = key_on_line(lines, line_no)
    return RobotError(f"TOML syntax error: {message}", link=link, field=key)


def _build_robot(doc) -> Robot:
    top = Where()
    if not isinstance(doc, dict):
        raise RobotError(f"expected a table of robot fields, got {describe(doc)}")
    if "format" not in doc:
        raise top.error("format", f'missing field \'format\'; expected format = "{FORMAT}" '
                                  "at the top of a robot file")
    fmt = string(doc["format"], top, "format", f'the string "{FORMAT}"')
    if fmt != FORMAT:
        raise top.error("format", f"unknown format {short(fmt)}; this version of ArmDyn reads "
                                  f'"{FORMAT}"')
    check_keys(doc, TOP_FIELDS, where="the robot's top-level fields", w=top)

    name, description, unit, gravity = header_fields(doc, top, "robot")

    if "link" not in doc:
        raise top.error("link", "a robot needs at least one [[link]] table, found none")
    rows = doc["link"]
    if isinstance(rows, dict):
        raise top.error("link", "expected [[link]] tables (one per DH row), got a single "
                                "[link] table; write [[link]] with double brackets")
    if not isinstance(rows, list):
        raise top.error("link", f"expected [[link]] tables (one per DH row), got {describe(rows)}")
    if not rows:
        raise top.error("link", "a robot needs at least one [[link]] table, found none")
    if len(rows) > MAX_LINKS:
        raise top.error("link", f"{len(rows)} links; a robot has at most {MAX_LINKS} links")

    links = tuple(link_from_table(row, Where(link=i), unit)
                  for i, row in enumerate(rows, start=1))
    return Robot(name=name, links=links, gravity=gravity, description=description,
                 angle_unit=unit)


def header_fields(doc: dict, top: Where, what: str) -> tuple[str, str, str, tuple]:
    """name, description, angle_unit and gravity, the top-level fields robot and mechanism
    files share (`what`: "robot" or "mechanism", for messages)."""
    if "name" not in doc:
        raise top.error("name", f"missing field 'name'; expected the {what}'s name, a string")
    name = string(doc["name"], top, "name", f"the {what}'s name, a non-empty string")
    if not name.strip():
        raise top.error("name", f"expected the {what}'s name, a non-empty string, got an "
                                "empty string")
    description = string(doc.get("description", ""), top, "description",
                         "free text, a string")
    unit = string(doc.get("angle_unit", "deg"), top, "angle_unit", '"deg" or "rad"')
    if unit not in ANGLE_UNITS:
        raise top.error("angle_unit", f'expected "deg" or "rad", got {short(unit)}'
                                      f"{suggest(unit, ANGLE_UNITS)}")
    gravity = DEFAULT_GRAVITY
    if "gravity" in doc:
        gravity = numbers(doc["gravity"], 3, top, "gravity",
                          "an array of 3 numbers [gx, gy, gz] in m/s^2", "a number in m/s^2")
    return name, description, unit, gravity


def link_from_table(row, w: Where, unit: str, *, known=LINK_FIELDS,
                    required=LINK_REQUIRED, table: str = "[[link]]") -> Link:
    """One link from its parsed table (a robot file's [[link]], a mechanism file's
    [[chain.link]]): every field's type and finite numbers, angles in `unit` converted
    to rad. What the values must satisfy (mass > 0, increasing limits, the inertia's
    triangle inequality) is checked once, by the model (`core.model.robot.validate_link`). `w` places errors (its link number is set by
    the caller; the link's name is filled in here). `known` lists the fields allowed
    (extra ones, such as "actuated", are left to the caller), `required` the fields
    that must be present, `table` names the table in messages. Raises what
    ``w.error`` builds."""
    if not isinstance(row, dict):
        raise w.error("link", f"expected a {table} table of fields, got {describe(row)}")
    name = row.get("name", "")
    if isinstance(name, str):
        w.link_name = name
    else:
        raise w.error("name", f"expected the link's name, a string, got {describe(name)}")
    check_keys(row, known, where=f"a {table} table", w=w)
    for key in required:
        if key not in row:
            raise w.error(key, f"missing field '{key}'; expected {_expected(key, unit)}")

    joint_text = string(row["joint"], w, "joint", '"revolute" or "prismatic"')
    if joint_text not in ("revolute", "prismatic"):
        raise w.error("joint", f'expected "revolute" or "prismatic", got {short(joint_text)}'
                               f"{suggest(joint_text, ('revolute', 'prismatic'))}")
    joint = JointType(joint_text)
    deg = unit == "deg"
    vals = {k: number(row[k], w, k, _expected(k, unit), deg=deg and k in ("alpha", "theta"))
            for k in ("a", "b", "alpha", "theta", "mass")}
    com = numbers(row["com"], 3, w, "com", _expected("com", unit), "a number in m")
    inertia = inertia_from_table(row["inertia"], w, unit)

    limits = None
    if "limits" in row:
        lim_deg = deg and joint is JointType.REVOLUTE
        limits = numbers(row["limits"], 2, w, "limits", _expected("limits", unit),
                         f"a number in {unit if joint is JointType.REVOLUTE else 'm'}",
                         deg=lim_deg)
    drive = {f: number(row[f], w, f, _expected(f, unit)) for f in DRIVE_FIELDS if f in row}
    return Link(joint=joint, a=vals["a"], b=vals["b"], alpha=vals["alpha"],
                theta=vals["theta"], mass=vals["mass"], com=com, inertia=inertia,
                limits=limits, name=name, **drive)


def inertia_from_table(v, w: Where, unit: str) -> tuple[float, ...]:
    """A link's inertia (xx, yy, zz, xy, xz, yz) from its parsed { xx = ..., ... } table."""
    if not isinstance(v, dict):
        hint = ""
        if isinstance(v, list):
            hint = ("; write inertia = { xx = ..., yy = ..., zz = ..., "
                    "xy = ..., xz = ..., yz = ... }")
        raise w.error("inertia", f"expected {_expected('inertia', unit)}, got {describe(v)}{hint}")
    check_keys(v, INERTIA_FIELDS, where="inertia", w=w, prefix="inertia.")
    for key in INERTIA_REQUIRED:
        if key not in v:
            raise w.error(f"inertia.{key}", f"missing inertia component '{key}'; expected "
                                            f"{_expected('inertia', unit)}")
    return tuple(number(v.get(k, 0), w, f"inertia.{k}", "a number in kg m^2")
                 for k in INERTIA_FIELDS)


def _expected(key: str, unit: str) -> str:
    return {
        "name": "the link's name, a string unique in the file",
        "joint": '"revolute" or "prismatic"',
        "a": "the link length a, a number in m",
        "b": "the joint offset b, a number in m",
        "alpha": f"the twist angle alpha, a number in {unit}",
        "theta": f"the joint angle theta, a number in {unit}",
        "mass": "the mass, a number > 0 in kg",
        "com": "the mass centre, an array of 3 numbers [x, y, z] in m",
        "inertia": "a table { xx = ..., yy = ..., zz = ... } in kg m^2 (xy, xz, yz default to 0)",
        "limits": f"an array [lower, upper] of 2 increasing numbers ({unit} or m)",
        "friction_viscous": "viscous friction, a number >= 0 in N m s/rad (N s/m)",
        "friction_coulomb": "Coulomb friction, a number >= 0 in N m (N)",
        "gear_ratio": "the drive's gear ratio, motor turns per joint turn, a number > 0",
        "rotor_inertia": "the motor rotor's inertia, a number >= 0 in kg m^2",
    }[key]


def _inertia_dict(link: Link) -> dict:
    return {k: float(v) for k, v in zip(INERTIA_FIELDS, link.inertia)
            if k in INERTIA_REQUIRED or v != 0.0}
