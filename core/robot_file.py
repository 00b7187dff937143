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

Fields (decided from docs/robot-file.md: a field is optional only where the
doc says "optional" or gives a default)
    top level : format (required, "armdyn-robot/1"), name (required,
                non-empty), description (optional, ""), angle_unit (optional,
                "deg" or "rad", default "deg"), gravity (optional, 3 numbers,
                default [0, 0, -9.81]), link (one or more [[link]] tables)
    [[link]]  : joint ("revolute" or "prismatic"), a, b, alpha, theta, mass,
                com (3 numbers), inertia (table with xx, yy, zz; xy, xz, yz
                default to 0) are required; name (default: "link N", stored
                as "" so `Robot.link_names` supplies it) and limits
                ([lower, upper], strictly increasing) are optional.
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

import difflib
import math
import os
import re
import stat
import tomllib
from datetime import date, datetime, time
from decimal import (MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal, DivisionByZero,
                     InvalidOperation, Overflow)

from .atomic import write_atomically
from .errors import RobotError, RobotFileError
from .robot import DEFAULT_GRAVITY, JointType, Link, Robot

__all__ = ["FORMAT", "MAX_FILE_BYTES", "MAX_LINKS", "load_robot", "save_robot",
           "robot_to_toml", "robot_from_toml", "robot_to_dict", "robot_from_dict"]

#: The value of `format` this version reads and writes.
FORMAT = "armdyn-robot/1"
#: Largest robot file read, bytes (a 1000-link file is about 0.4 MB).
MAX_FILE_BYTES = 1 << 20
#: Most links in one robot.
MAX_LINKS = 1000
#: Largest magnitude of any number, in SI units and radians (as `core.robot`).
MAX_ABS = 1e12

TOP_FIELDS = ("format", "name", "description", "angle_unit", "gravity", "link")
LINK_FIELDS = ("name", "joint", "a", "b", "alpha", "theta", "mass", "com", "inertia", "limits")
LINK_REQUIRED = ("joint", "a", "b", "alpha", "theta", "mass", "com", "inertia")
INERTIA_FIELDS = ("xx", "yy", "zz", "xy", "xz", "yz")
INERTIA_REQUIRED = ("xx", "yy", "zz")
ANGLE_UNITS = ("deg", "rad")

# Decimal arithmetic for degree <-> radian conversion: 60 digits, any exponent.
_CTX = Context(prec=60, rounding=ROUND_HALF_EVEN, Emax=MAX_EMAX, Emin=MIN_EMIN,
               traps=[InvalidOperation, DivisionByZero, Overflow])
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")
_RAD_PER_DEG = Context(prec=80).divide(_PI, 180)
_DEG_PER_RAD = Context(prec=80).divide(180, _PI)


# ======================================================================================
# Public API
# ======================================================================================

def load_robot(path) -> Robot:
    """Read the robot file at `path`; raise only `RobotFileError`."""
    shown = _display(path)
    try:
        if shown is None:
            raise RobotError(f"expected a file path (str or os.PathLike), got "
                             f"{type(path).__name__}")
        text = _decode(_read_bytes(path))
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
    shown = _display(path)
    if shown is None:
        raise RobotFileError(repr(path), f"expected a file path (str or os.PathLike), got "
                             f"{type(path).__name__}")
    try:
        data = robot_to_toml(robot).encode("utf-8")
    except RobotError as e:
        raise _file_error(shown, e) from None
    try:
        write_atomically(os.path.realpath(os.fspath(path)), data)
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
        ang = (lambda x: float(_deg_text(x))) if deg else float
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
        rows.append(row)
    out["link"] = rows
    return out


def robot_to_toml(robot: Robot) -> str:
    """The robot-file text of `robot` (see module docstring); exact round trip.

    Raises RobotError if a string cannot be written as UTF-8 (a lone surrogate).
    """
    unit = robot.angle_unit
    ang = _deg_text if unit == "deg" else _float_text
    out = [
        f"# ArmDyn robot file ({FORMAT}): one [[link]] table per row of the DH table.",
        f"# a, b in m; alpha, theta and revolute-joint limits in {unit}; mass in kg;",
        "# com (m) and inertia (kg m^2, about the mass centre) in the link's own DH frame.",
        f"format = {_toml_str(FORMAT)}",
        f"name = {_toml_str(_utf8(robot.name, field='name'))}",
    ]
    if robot.description:
        out.append(f"description = "
                   f"{_toml_str(_utf8(robot.description, field='description'), multiline=True)}")
    out.append(f"angle_unit = {_toml_str(unit)}")
    out.append(f"gravity = [{', '.join(_float_text(g) for g in robot.gravity)}]")
    for i, link in enumerate(robot.links, start=1):
        out += ["", "[[link]]"]
        if link.name:
            name = _utf8(link.name, field="name", link=i)
            out.append(f"name = {_toml_str(name)}")
        out.append(f"joint = {_toml_str(link.joint.value)}")
        out.append(f"a = {_float_text(link.a)}")
        out.append(f"b = {_float_text(link.b)}")
        out.append(f"alpha = {ang(link.alpha)}")
        out.append(f"theta = {ang(link.theta)}")
        out.append(f"mass = {_float_text(link.mass)}")
        out.append(f"com = [{', '.join(_float_text(c) for c in link.com)}]")
        parts = [f"{k} = {_float_text(v)}" for k, v in zip(INERTIA_FIELDS, link.inertia)
                 if k in INERTIA_REQUIRED or v != 0.0]
        out.append(f"inertia = {{ {', '.join(parts)} }}")
        if link.limits is not None:
            lim = ang if link.is_revolute else _float_text
            out.append(f"limits = [{', '.join(lim(v) for v in link.limits)}]")
    return "\n".join(out) + "\n"


# ======================================================================================
# Reading
# ======================================================================================

def _display(path) -> str | None:
    """The path as shown in messages, or None if `path` is not a path."""
    try:
        if isinstance(path, bytes):
            return os.fsdecode(path)
        if isinstance(path, (str, os.PathLike)):
            p = os.fspath(path)
            return os.fsdecode(p) if isinstance(p, bytes) else p
    except Exception:
        return None
    return None


def _file_error(path: str, e: RobotError) -> RobotFileError:
    return RobotFileError(path, e.reason, link=e.link, link_name=e.link_name, field=e.field)


def _read_bytes(path) -> bytes:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise RobotError("no such file; expected an ArmDyn robot file (.toml)") from None
    except PermissionError:
        raise RobotError("permission denied; cannot read the file") from None
    except (OSError, ValueError) as e:  # ValueError: embedded NUL in the path
        raise RobotError(f"cannot open the file: {getattr(e, 'strerror', None) or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise RobotError("is a directory; expected a robot file (.toml)")
    if not stat.S_ISREG(st.st_mode):
        raise RobotError("is not a regular file; expected a robot file (.toml)")
    if st.st_size > MAX_FILE_BYTES:
        raise RobotError(f"file is {st.st_size} bytes; robot files are at most "
                         f"{MAX_FILE_BYTES} bytes")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except PermissionError:
        raise RobotError("permission denied; cannot read the file") from None
    except OSError as e:
        raise RobotError(f"cannot read the file: {e.strerror or e}") from None
    if len(data) > MAX_FILE_BYTES:
        raise RobotError(f"file is over {MAX_FILE_BYTES} bytes; robot files are smaller")
    return data


def _decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise RobotError(f"not UTF-8 text: byte 0x{data[e.start]:02x} at line {line}, "
                         f"column {col}; expected a UTF-8 TOML file") from None


class _BadFloat:
    """A TOML float that Decimal cannot hold (exponent beyond any range)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _parse_float(text: str):
    try:
        return Decimal(text)
    except (ArithmeticError, ValueError):
        return _BadFloat(text)


_ERR_POS = re.compile(r"at line (\d+), column (\d+)")
_LINK_HEADER = re.compile(r"^\s*\[\[\s*(?:link|\"link\"|'link')\s*\]\]")
_KEY_LINE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")


def _robot_from_text(text: str) -> Robot:
    if not text.strip():
        raise RobotError(f"the file is empty; expected a robot file starting with "
                         f'format = "{FORMAT}"')
    try:
        doc = tomllib.loads(text, parse_float=_parse_float)
    except tomllib.TOMLDecodeError as e:
        raise _syntax_error(text, str(e)) from None
    except RecursionError:
        raise RobotError("TOML nested too deeply to be a robot file") from None
    except ValueError as e:  # e.g. an integer with more than 4300 digits
        raise RobotError(f"TOML value cannot be read: {e}") from None
    if not doc:
        raise RobotError(f"the file is empty (comments only); expected a robot file starting "
                         f'with format = "{FORMAT}"')
    return _build_robot(doc)


def _syntax_error(text: str, message: str) -> RobotError:
    """A RobotError for a TOML syntax error, with the link and key it is in if known."""
    link = None
    key = ""
    m = _ERR_POS.search(message)
    if m:
        line_no = int(m.group(1))
        lines = text.splitlines()
        n = sum(1 for line in lines[:line_no] if _LINK_HEADER.match(line))
        link = n or None
        if 0 < line_no <= len(lines):
            k = _KEY_LINE.match(lines[line_no - 1])
            key = k.group(1) if k else ""
    return RobotError(f"TOML syntax error: {message}", link=link, field=key)


def _describe(v) -> str:
    """What a TOML value is, for messages: 'a string "heavy"'."""
    if isinstance(v, bool):
        return f"a boolean ({'true' if v else 'false'})"
    if isinstance(v, str):
        return f"a string {_short(v)}"
    if isinstance(v, int):
        return f"an integer ({_short_int(v)})"
    if isinstance(v, (float, Decimal, _BadFloat)):
        return f"a number ({_num_text(v)})"
    if isinstance(v, list):
        return f"an array of {len(v)} item{'s' if len(v) != 1 else ''}"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, (datetime, date, time)):
        return f"a date/time ({v.isoformat()})"
    return f"a {type(v).__name__}"


def _num_text(v) -> str:
    """A number as TOML would write it: 1e+308, nan, -inf, 17.4."""
    if isinstance(v, Decimal):
        if v.is_nan():
            return "nan"
        if v.is_infinite():
            return "-inf" if v < 0 else "inf"
        return _short(format(v, "g"), quote=False)
    if isinstance(v, int) and not isinstance(v, bool):
        return _short_int(v)
    return _short(v, quote=False)


def _short(v, quote: bool = True, limit: int = 40) -> str:
    s = repr(v) if quote else str(v)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _short_int(v: int) -> str:
    return str(v) if abs(v) < 10 ** 30 else f"about {len(hex(v)) * 1.2:.0f} digits"


def _suggest(key: str, known) -> str:
    if not isinstance(key, str):
        return ""
    m = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.6)
    return f" (did you mean '{m[0]}'?)" if m else ""


def _check_keys(table: dict, known, *, where: str, link=None, link_name="", prefix=""):
    for key in table:
        if key not in known:
            raise RobotError(f"unknown field {_short(key)} in {where}{_suggest(key, known)}; "
                             f"known fields: {', '.join(known)}", link=link,
                             link_name=link_name, field=prefix + str(key))


class _Where:
    """Link number, link name and unit context for the field checks."""

    def __init__(self, link=None, link_name=""):
        self.link = link
        self.link_name = link_name

    def error(self, field: str, reason: str) -> RobotError:
        return RobotError(reason, link=self.link, link_name=self.link_name, field=field)


def _number(v, w: _Where, field: str, expected: str, *, deg: bool = False) -> float:
    """A finite number |x| <= MAX_ABS (SI / rad) from a TOML value; degrees converted."""
    if isinstance(v, bool) or not isinstance(v, (int, float, Decimal, _BadFloat)):
        raise w.error(field, f"expected {expected}, got {_describe(v)}")
    if isinstance(v, _BadFloat):
        raise w.error(field, f"the number {_num_text(v)} is out of range: |value| must be at "
                             f"most 1e12 (in m, kg, rad); expected {expected}")
    # A float means its shortest repr (what was typed), so 33.3 reads as the text 33.3.
    d = Decimal(repr(float(v))) if isinstance(v, float) else Decimal(v)
    if not d.is_finite():
        raise w.error(field, f"expected a finite number, got {_num_text(v)}; expected {expected}")
    rough = float(d)
    if not abs(rough) <= MAX_ABS * 100:  # cheap guard before exact arithmetic
        x = math.inf
    else:
        x = _deg_to_rad(d) if deg else rough
    if not abs(x) <= MAX_ABS:
        raise w.error(field, f"the number {_num_text(v)} is out of range: |value| must be at "
                             f"most 1e12 (in m, kg, rad); expected {expected}")
    return x


def _deg_to_rad(d: Decimal) -> float:
    """The double nearest d * pi / 180 (d exact, in degrees)."""
    return float(_CTX.multiply(d, _RAD_PER_DEG))


def _string(v, w: _Where, field: str, expected: str) -> str:
    if not isinstance(v, str):
        raise w.error(field, f"expected {expected}, got {_describe(v)}")
    return v


def _numbers(v, n: int, w: _Where, field: str, expected: str, item: str, *,
             deg: bool = False) -> tuple[float, ...]:
    if not isinstance(v, list):
        raise w.error(field, f"expected {expected}, got {_describe(v)}")
    if len(v) != n:
        raise w.error(field, f"expected {expected}, got {len(v)} item{'s' if len(v) != 1 else ''}")
    return tuple(_number(x, w, field, f"{item} (item {k + 1} of {n})", deg=deg)
                 for k, x in enumerate(v))


def _build_robot(doc) -> Robot:
    top = _Where()
    if not isinstance(doc, dict):
        raise RobotError(f"expected a table of robot fields, got {_describe(doc)}")
    if "format" not in doc:
        raise top.error("format", f'missing field \'format\'; expected format = "{FORMAT}" '
                                  "at the top of a robot file")
    fmt = _string(doc["format"], top, "format", f'the string "{FORMAT}"')
    if fmt != FORMAT:
        raise top.error("format", f"unknown format {_short(fmt)}; this version of ArmDyn reads "
                                  f'"{FORMAT}"')
    _check_keys(doc, TOP_FIELDS, where="the robot's top-level fields")

    if "name" not in doc:
        raise top.error("name", "missing field 'name'; expected the robot's name, a string")
    name = _string(doc["name"], top, "name", "the robot's name, a non-empty string")
    if not name.strip():
        raise top.error("name", "expected the robot's name, a non-empty string, got an "
                                "empty string")
    description = _string(doc.get("description", ""), top, "description",
                          "free text, a string")
    unit = _string(doc.get("angle_unit", "deg"), top, "angle_unit", '"deg" or "rad"')
    if unit not in ANGLE_UNITS:
        raise top.error("angle_unit", f'expected "deg" or "rad", got {_short(unit)}'
                                      f"{_suggest(unit, ANGLE_UNITS)}")
    gravity = DEFAULT_GRAVITY
    if "gravity" in doc:
        gravity = _numbers(doc["gravity"], 3, top, "gravity",
                           "an array of 3 numbers [gx, gy, gz] in m/s^2", "a number in m/s^2")

    if "link" not in doc:
        raise top.error("link", "a robot needs at least one [[link]] table, found none")
    rows = doc["link"]
    if isinstance(rows, dict):
        raise top.error("link", "expected [[link]] tables (one per DH row), got a single "
                                "[link] table; write [[link]] with double brackets")
    if not isinstance(rows, list):
        raise top.error("link", f"expected [[link]] tables (one per DH row), got {_describe(rows)}")
    if not rows:
        raise top.error("link", "a robot needs at least one [[link]] table, found none")
    if len(rows) > MAX_LINKS:
        raise top.error("link", f"{len(rows)} links; a robot has at most {MAX_LINKS} links")

    links = tuple(_build_link(row, i, unit) for i, row in enumerate(rows, start=1))
    return Robot(name=name, links=links, gravity=gravity, description=description,
                 angle_unit=unit)


def _build_link(row, i: int, unit: str) -> Link:
    w = _Where(link=i)
    if not isinstance(row, dict):
        raise w.error("link", f"expected a [[link]] table of fields, got {_describe(row)}")
    name = row.get("name", "")
    if isinstance(name, str):
        w.link_name = name
    else:
        raise w.error("name", f"expected the link's name, a string, got {_describe(name)}")
    _check_keys(row, LINK_FIELDS, where="a [[link]] table", link=i, link_name=name)
    for key in LINK_REQUIRED:
        if key not in row:
            raise w.error(key, f"missing field '{key}'; expected {_expected(key, unit)}")

    joint_text = _string(row["joint"], w, "joint", '"revolute" or "prismatic"')
    if joint_text not in ("revolute", "prismatic"):
        raise w.error("joint", f'expected "revolute" or "prismatic", got {_short(joint_text)}'
                               f"{_suggest(joint_text, ('revolute', 'prismatic'))}")
    joint = JointType(joint_text)
    deg = unit == "deg"
    vals = {k: _number(row[k], w, k, _expected(k, unit), deg=deg and k in ("alpha", "theta"))
            for k in ("a", "b", "alpha", "theta", "mass")}
    if not vals["mass"] > 0.0:
        raise w.error("mass", f"mass must be > 0 kg, got {_num_text(row['mass'])}")
    com = _numbers(row["com"], 3, w, "com", _expected("com", unit), "a number in m")
    inertia = _build_inertia(row["inertia"], w, unit)

    limits = None
    if "limits" in row:
        lim_deg = deg and joint is JointType.REVOLUTE
        limits = _numbers(row["limits"], 2, w, "limits", _expected("limits", unit),
                          f"a number in {unit if joint is JointType.REVOLUTE else 'm'}",
                          deg=lim_deg)
        lo, hi = row["limits"]
        if not limits[0] < limits[1]:
            raise w.error("limits", f"limits must be increasing [lower, upper], got "
                                    f"[{_num_text(lo)}, {_num_text(hi)}]")
    return Link(joint=joint, a=vals["a"], b=vals["b"], alpha=vals["alpha"],
                theta=vals["theta"], mass=vals["mass"], com=com, inertia=inertia,
                limits=limits, name=name)


def _build_inertia(v, w: _Where, unit: str) -> tuple[float, ...]:
    if not isinstance(v, dict):
        hint = ""
        if isinstance(v, list):
            hint = ("; write inertia = { xx = ..., yy = ..., zz = ..., "
                    "xy = ..., xz = ..., yz = ... }")
        raise w.error("inertia", f"expected {_expected('inertia', unit)}, got {_describe(v)}{hint}")
    _check_keys(v, INERTIA_FIELDS, where="inertia", link=w.link, link_name=w.link_name,
                prefix="inertia.")
    for key in INERTIA_REQUIRED:
        if key not in v:
            raise w.error(f"inertia.{key}", f"missing inertia component '{key}'; expected "
                                            f"{_expected('inertia', unit)}")
    return tuple(_number(v.get(k, 0), w, f"inertia.{k}", "a number in kg m^2")
                 for k in INERTIA_FIELDS)


def _expected(key: str, unit: str) -> str:
    return {
        "joint": '"revolute" or "prismatic"',
        "a": "the link length a, a number in m",
        "b": "the joint offset b, a number in m",
        "alpha": f"the twist angle alpha, a number in {unit}",
        "theta": f"the joint angle theta, a number in {unit}",
        "mass": "the mass, a number > 0 in kg",
        "com": "the mass centre, an array of 3 numbers [x, y, z] in m",
        "inertia": "a table { xx = ..., yy = ..., zz = ... } in kg m^2 (xy, xz, yz default to 0)",
        "limits": f"an array [lower, upper] of 2 increasing numbers ({unit} or m)",
    }[key]


# ======================================================================================
# Writing
# ======================================================================================

def _float_text(x) -> str:
    """A finite float as TOML: Python's repr is the shortest exact text and valid TOML."""
    return repr(float(x))


def _deg_text(x) -> str:
    """The shortest decimal (in degrees) that `_deg_to_rad` maps back to the double x."""
    x = float(x)
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    exact = _CTX.multiply(Decimal(x), _DEG_PER_RAD)
    # 1. Up to 15 significant digits: such a decimal is also the repr of its double,
    #    so the float form (robot_to_dict) is exact too. The nearest 15-digit decimal
    #    is the best candidate; if it fits, bisect for the fewest digits that fit.
    if _deg_to_rad(_round_digits(exact, 15)) == x:
        lo, hi = 0, 15  # hi digits fit; lo digits are not known to
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _deg_to_rad(_round_digits(exact, mid)) == x:
                hi = mid
            else:
                lo = mid
        return _decimal_text(_round_digits(exact, hi))
    # 2. The repr of a double next to the exact value, again exact as text and as float.
    best = None
    f = float(exact)
    for k in (0, 1, -1, 2, -2, 3, -3):
        g = _ulp_step(f, k)
        text = repr(g)
        if _deg_to_rad(Decimal(text)) == x and (best is None or len(text) < len(best)):
            best = text
    if best is not None:
        return _decimal_text(Decimal(best))
    # 3. Rarely no double fits: 17 digits always identify x as text.
    for digits in range(16, 25):
        d = _round_digits(exact, digits)
        if _deg_to_rad(d) == x:
            return _decimal_text(d)
    return _decimal_text(exact)  # not reached


_ROUND_CTX = [Context(prec=max(p, 1), rounding=ROUND_HALF_EVEN, Emax=MAX_EMAX, Emin=MIN_EMIN)
              for p in range(26)]


def _round_digits(d: Decimal, digits: int) -> Decimal:
    """`d` rounded to `digits` significant digits."""
    return _ROUND_CTX[digits].plus(d)


def _ulp_step(f: float, k: int) -> float:
    for _ in range(abs(k)):
        f = math.nextafter(f, math.inf if k > 0 else -math.inf)
    return f


def _decimal_text(d: Decimal) -> str:
    """A finite nonzero Decimal as a TOML float, positional for ordinary magnitudes."""
    sign, digit_tuple, exp = d.as_tuple()
    ds = "".join(map(str, digit_tuple))
    stripped = ds.rstrip("0")
    exp += len(ds) - len(stripped)
    ds = stripped or "0"
    adjusted = exp + len(ds) - 1  # power of ten of the leading digit
    if -5 <= adjusted < 16:
        point = adjusted + 1  # digits before the decimal point
        if point <= 0:
            body = "0." + "0" * -point + ds
        elif point >= len(ds):
            body = ds + "0" * (point - len(ds)) + ".0"
        else:
            body = ds[:point] + "." + ds[point:]
    else:
        body = f"{ds[0]}.{ds[1:] or '0'}e{adjusted}"
    return ("-" if sign else "") + body


def _inertia_dict(link: Link) -> dict:
    return {k: float(v) for k, v in zip(INERTIA_FIELDS, link.inertia)
            if k in INERTIA_REQUIRED or v != 0.0}


def _utf8(s: str, *, field: str, link: int | None = None) -> str:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise RobotError(f"character {s[e.start]!r} at position {e.start} cannot be written "
                         "as UTF-8 (unpaired surrogate)", link=link, field=field) from None
    return s


_BASIC_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n",
                  "\f": "\\f", "\r": "\\r"}


def _toml_str(s: str, multiline: bool = False) -> str:
    """A TOML basic string; multi-line form (\"\"\"...\"\"\") if it has newlines and may."""
    use_ml = multiline and "\n" in s
    out = []
    for ch in s:
        if use_ml and ch == "\n":
            out.append("\n")
        elif ch in _BASIC_ESCAPES:
            out.append(_BASIC_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    body = "".join(out)
    # A newline right after the opening quotes is dropped by TOML readers.
    return f'"""\n{body}"""' if use_ml else f'"{body}"'


