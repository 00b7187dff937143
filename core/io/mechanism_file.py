"""Read and write mechanism files (TOML, formats "armdyn-mechanism/1" and "/2").

A mechanism file (docs/mechanism-file.md) holds serial **chains** of DH rows, each
fixed to the base or to a link of another chain (trees), plus **loops** that join
two links (closed chains). A robot file ("armdyn-robot/1", docs/robot-file.md) is
a mechanism with one chain and no loops and loads here too.

Public functions
----------------
load_mechanism(path) -> Mechanism
    Read a mechanism file or a robot file. The only exception it raises is
    `MechanismFileError` (a `RobotFileError`), whatever the file holds; its
    message names the file, then the chain, loop, link (1-based in its chain,
    and name) and field that apply, and says what was expected. This module
    reports syntax, types and unknown fields (and, as robot files do, mass <= 0
    and limits not increasing, in the file's units); every other rule is the
    `Mechanism` model's own (`core.model.mechanism`), whose `MechanismError` arrives
    as a `MechanismFileError` naming the same chain, loop, link and field.
    Nothing is half-loaded. A robot file gives ``Mechanism.from_robot(robot)``
    (one chain "arm", links named "link 1", ... where the file names none).
    When the mechanism has loops, building it closes them: the links of the
    result carry the closed joint values and ``mech.warnings`` says when they
    moved more than the tolerance.
save_mechanism(mech, path) -> None
    Write a mechanism file atomically (temporary file in the same directory,
    fsync, ``os.replace``); on failure the old file is left as it was and
    `MechanismFileError` is raised. A `Robot` is written as its one-chain
    mechanism. The joint values written are the mechanism's (closed) ones.
mechanism_to_toml(mech) -> str / mechanism_from_toml(text, source="<memory>")
    The same, to and from a string.

Fields (a field is optional only where the format gives a default)
    top level      : format (required), name (required, non-empty), description
                     (""), angle_unit ("deg" or "rad", default "deg"), gravity
                     (3 numbers, m/s^2, default [0, 0, -9.81]), chain (one or more
                     [[chain]] tables), loop ([[loop]] tables, default none),
                     assembly (an [assembly] table, optional)
    [[chain]]      : name (required, unique), base (optional table { xyz = [3 m],
                     rpy = [3 angles] }, each defaulting to zeros), parent (optional
                     link name), link (one or more [[chain.link]] tables)
    [[chain.link]] : the fields of a robot file's [[link]] with the name required,
                     plus actuated (optional boolean, default false)
    [[loop]]       : name (required, unique), joint ("revolute", "spherical" or
                     "prismatic", required), links (two link names, the second may
                     be "base", required), at (optional [[x, y, z], [x, y, z]], m,
                     default the frame origins), axis (optional, two 3-vectors,
                     default z)
    [assembly]     : independent (optional array of link names, default the
                     actuated joints), tolerance (optional number, m and rad,
                     default 1e-10)
    Version 2 ("armdyn-mechanism/2") adds, and a version-1 file refuses by name:
    [[chain.link]] with joint "spherical", "universal" or "free": name, joint, mass,
                     com, inertia (required), xyz (m) and rpy (angle_unit) placing the
                     joint's frame in the previous link's own frame (zeros by default),
                     home: a spherical joint's { rpy = [3 angles] } or { quaternion =
                     [qx, qy, qz, qw] }, a free joint's the same with xyz = [x, y, z],
                     a universal joint's [2 angles] (default: the identity), actuated;
                     no a, b, alpha, theta or limits (a free joint: the first link of a
                     chain on the base)
    [[force]]      : name (required, unique), kind ("spring-damper" or "tyre"); a
                     spring-damper: links (two names, "base" allowed), at (optional two
                     points, m), stiffness (N/m), damping (N s/m), free_length (m); a
                     tyre: link, at (optional point, m), stiffness, damping, radius (m)
    [road]         : points = [[x, h], ...] (m), x increasing: the road's height
                     along the base x axis under the tyres (none: h = 0)
    [[loop]] with joint "gear": name, joint, links (two links whose joints are revolute
                     or prismatic, no "base"), ratio (required, d q_b / d q_a in SI
                     units whatever angle_unit says, finite, not 0); no at or axis
    save_mechanism writes version 1 whenever the mechanism fits it, version 2 otherwise.
    Errors name the fields by their keys; keys of nested tables read "base.xyz",
    "inertia.xx", "assembly.tolerance".

Angles
    alpha, theta, the limits of a revolute joint and a base's rpy are in
    ``angle_unit`` and converted exactly as in robot files (`core.io.toml_io`): the
    writer puts the shortest decimal that reads back as the same double, so
    load(save(m)) == m exactly in both units. xyz and at are in m; axis has no
    unit; tolerance is in m and rad whatever ``angle_unit`` says.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import replace

from .atomic import write_atomically
from ..errors import MechanismError, MechanismFileError, RobotError, RobotFileError
from ..model.mechanism import MAX_JOINTS, Mechanism
from ..model.parts import (DEFAULT_TOLERANCE, IDENTITY_HOME, Assembly, Chain, JointType,
                           Link, Loop, LoopJointType, Placement, Road, SpringDamper, Tyre)
from ..model.robot import Robot
from ..model.rotations import quaternion_rpy
from .robot_file import FORMAT as ROBOT_FORMAT
from .robot_file import LINK_FIELDS as ROBOT_LINK_FIELDS
from .robot_file import LINK_REQUIRED as ROBOT_LINK_REQUIRED
from .robot_file import (header_fields, inertia_from_table, inertia_toml, link_from_table,
                         link_toml_lines, robot_from_dict, robot_from_toml)
from .toml_io import (Where, boolean, check_keys, decode_utf8, deg_text, describe,
                      display_path, float_text, key_on_line, number, numbers, parse_toml,
                      read_bytes, short, string, suggest, syntax_error_line, toml_str, utf8)

__all__ = ["FORMAT", "FORMAT_2", "MAX_LOOPS", "load_mechanism", "save_mechanism",
           "mechanism_to_toml", "mechanism_from_toml", "needs_version_2"]

#: The value of `format` of a mechanism that fits version 1 (robot files,
#: "armdyn-robot/1", are read too).
FORMAT = "armdyn-mechanism/1"
#: The format of a mechanism with spherical, universal or free joints, force elements, a
#: road or a gear loop.
FORMAT_2 = "armdyn-mechanism/2"
#: Most loops in one mechanism (as many as the joints it may have).
MAX_LOOPS = MAX_JOINTS

TOP_FIELDS = ("format", "name", "description", "angle_unit", "gravity", "chain", "loop",
              "assembly", "force", "road")
#: Fields only version 2 reads.
TOP_FIELDS_2 = ("force", "road")
#: The joints of several degrees of freedom (version 2) and their link fields.
JOINTS_2 = ("spherical", "universal", "free")
LINK_FIELDS_2 = ("name", "joint", "mass", "com", "inertia", "xyz", "rpy", "home", "actuated")
LINK_REQUIRED_2 = ("name", "joint", "mass", "com", "inertia")
FORCE_KINDS = ("spring-damper", "tyre")
SPRING_FIELDS = ("name", "kind", "links", "at", "stiffness", "damping", "free_length")
TYRE_FIELDS = ("name", "kind", "link", "at", "stiffness", "damping", "radius")
CHAIN_FIELDS = ("name", "base", "parent", "link")
BASE_FIELDS = ("xyz", "rpy")
LINK_FIELDS = ROBOT_LINK_FIELDS + ("actuated",)
LINK_REQUIRED = ("name",) + ROBOT_LINK_REQUIRED
LOOP_FIELDS = ("name", "joint", "links", "at", "axis", "ratio")
LOOP_REQUIRED = ("name", "joint", "links")
ASSEMBLY_FIELDS = ("independent", "tolerance")
LOOP_JOINTS = tuple(t.value for t in LoopJointType)

_DEFAULT_AT = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
_DEFAULT_AXIS = ((0.0, 0.0, 1.0), (0.0, 0.0, 1.0))
_KIND = "mechanism file"


# ======================================================================================
# Public API
# ======================================================================================

def load_mechanism(path) -> Mechanism:
    """Read the mechanism (or robot) file at `path`; raise only `MechanismFileError`."""
    shown = display_path(path)
    where = shown or repr(path)

    def read() -> Mechanism:
        if shown is None:
            raise RobotError(f"expected a file path (str or os.PathLike), got "
                             f"{type(path).__name__}")
        return _mechanism_from_text(decode_utf8(read_bytes(path, _KIND)), where)
    return _only_file_errors(read, where, "file")


def mechanism_from_toml(text: str, source: str = "<memory>") -> Mechanism:
    """Parse mechanism-file (or robot-file) text; raise only `MechanismFileError`
    (its path is `source`)."""
    def read() -> Mechanism:
        if not isinstance(text, str):
            raise RobotError(f"expected text (str), got {type(text).__name__}")
        return _mechanism_from_text(text, source)
    return _only_file_errors(read, source, "text")


def _only_file_errors(read, where: str, what: str) -> Mechanism:
    """`read()`, with every failure turned into a `MechanismFileError` at `where` (the
    file's path or the text's source; `what` is "file" or "text")."""
    try:
        return read()
    except MechanismFileError:
        raise
    except RobotFileError as e:
        raise _from_robot_file_error(e) from None
    except (RobotError, MechanismError) as e:
        raise _file_error(where, e) from None
    except RecursionError:
        raise MechanismFileError(where, f"the {what} is nested too deeply to be a "
                                 "mechanism file") from None
    except MemoryError:
        raise MechanismFileError(where, f"out of memory while reading the {what}") from None
    except Exception as e:  # anything else: still a MechanismFileError, with the cause chained
        raise MechanismFileError(where, f"cannot read the {what} ({type(e).__name__}: {e})"
                                 ) from e


def save_mechanism(mech, path) -> None:
    """Write `mech` (a Mechanism, or a Robot as its one-chain mechanism) to `path` in the
    mechanism-file format, atomically.

    The text is written to a temporary file in the target's directory, flushed and
    fsynced, then moved over the target with ``os.replace`` (the target keeps its
    permission bits). On any failure the target is unchanged, no temporary file
    remains and `MechanismFileError` is raised (another type raises TypeError).
    """
    if not isinstance(mech, (Mechanism, Robot)):
        raise TypeError(f"save_mechanism expects a Mechanism or a Robot, got "
                        f"{type(mech).__name__}")
    shown = display_path(path)
    if shown is None:
        raise MechanismFileError(repr(path), f"expected a file path (str or os.PathLike), got "
                                 f"{type(path).__name__}")
    try:
        data = mechanism_to_toml(mech).encode("utf-8")
    except (RobotError, MechanismError) as e:
        raise _file_error(shown, e) from None
    try:
        write_atomically(path, data)
    except OSError as e:
        raise MechanismFileError(shown, f"cannot write the file: {e.strerror or e}") from e


def mechanism_to_toml(mech) -> str:
    """The mechanism-file text of `mech` (a Mechanism, or a Robot as its one-chain
    mechanism); load(save(m)) == m exactly.

    Raises MechanismError if a string cannot be written as UTF-8 (a lone surrogate),
    or if a Robot is no valid one-chain mechanism (two links of the same name).
    """
    if isinstance(mech, Robot):
        mech = Mechanism.from_robot(mech)
    if not isinstance(mech, Mechanism):
        raise TypeError(f"expected a Mechanism or a Robot, got {type(mech).__name__}")
    unit = mech.angle_unit
    ang = deg_text if unit == "deg" else float_text
    top = Where()
    fmt = FORMAT_2 if needs_version_2(mech) else FORMAT
    out = [
        f"# ArmDyn mechanism file ({fmt}): serial chains of DH rows ([[chain]] with one",
        "# [[chain.link]] per row), each on the base or on a link of another chain, and loops",
        "# ([[loop]]) joining two links. a, b, xyz, at in m; alpha, theta, rpy and",
        f"# revolute-joint limits in {unit}; mass in kg; com (m) and inertia (kg m^2, about",
        "# the mass centre) in the link's own DH frame. Joint values: the closed pose.",
        f"format = {toml_str(fmt)}",
        f"name = {toml_str(utf8(mech.name, top, 'name'))}",
    ]
    if mech.description:
        out.append(f"description = "
                   f"{toml_str(utf8(mech.description, top, 'description'), multiline=True)}")
    out.append(f"angle_unit = {toml_str(unit)}")
    out.append(f"gravity = {_vector(mech.gravity)}")
    for chain in mech.chains:
        out += ["", *_chain_lines(chain, unit, ang)]
    for loop in mech.loops:
        out += ["", *_loop_lines(loop)]
    for element in mech.forces:
        out += ["", *_force_lines(element)]
    if mech.road is not None:
        points = ", ".join(_vector(p) for p in mech.road.points)
        out += ["", "[road]", f"points = [{points}]"]
    out += _assembly_lines(mech.assembly)
    return "\n".join(out) + "\n"


def needs_version_2(mech: Mechanism) -> bool:
    """Whether `mech` needs "armdyn-mechanism/2": a spherical, universal or free joint,
    a force element, a road or a gear loop."""
    return (any(not link.joint.is_dh for link in mech.links) or bool(mech.forces)
            or mech.road is not None
            or any(loop.joint == LoopJointType.GEAR for loop in mech.loops))


# ======================================================================================
# Writing
# ======================================================================================

def _vector(values, text=float_text) -> str:
    return f"[{', '.join(text(v) for v in values)}]"


def _is_default(values, default) -> bool:
    """Bit for bit (so -0.0 is written, and read back, as -0.0)."""
    return [float_text(v) for v in values] == [float_text(v) for v in default]


def _chain_lines(chain: Chain, unit: str, ang) -> list[str]:
    w = Where(chain=chain.name)
    out = ["[[chain]]", f"name = {toml_str(utf8(chain.name, w, 'name'))}"]
    if chain.parent is not None:
        out.append(f"parent = {toml_str(utf8(chain.parent, w, 'parent'))}")
    parts = []
    if not _is_default(chain.base.xyz, (0.0, 0.0, 0.0)):
        parts.append(f"xyz = {_vector(chain.base.xyz)}")
    if not _is_default(chain.base.rpy, (0.0, 0.0, 0.0)):
        parts.append(f"rpy = {_vector(chain.base.rpy, ang)}")
    if parts:
        out.append(f"base = {{ {', '.join(parts)} }}")
    for i, link in enumerate(chain.links, start=1):
        out += ["", "[[chain.link]]"]
        w = Where(chain=chain.name, link=i, link_name=link.name)
        out += link_toml_lines(link, unit, w) if link.joint.is_dh else \
            _several_link_lines(link, ang, w)
        if link.actuated:
            out.append("actuated = true")
    return out


def _several_link_lines(link: Link, ang, w: Where) -> list[str]:
    """A spherical, universal or free joint's link table (version 2): its placement and
    its home values (quaternions as such: they read back bit for bit)."""
    out = [f"name = {toml_str(utf8(link.name, w, 'name'))}",
           f"joint = {toml_str(link.joint.value)}", f"mass = {float_text(link.mass)}",
           f"com = {_vector(link.com)}", inertia_toml(link)]
    if not _is_default(link.xyz, (0.0, 0.0, 0.0)):
        out.append(f"xyz = {_vector(link.xyz)}")
    if not _is_default(link.rpy, (0.0, 0.0, 0.0)):
        out.append(f"rpy = {_vector(link.rpy, ang)}")
    home = link.q_values
    if not _is_default(home, IDENTITY_HOME[link.joint]):
        if link.joint == JointType.UNIVERSAL:
            out.append(f"home = {_vector(home, ang)}")
        elif link.joint == JointType.SPHERICAL:
            out.append(f"home = {{ quaternion = {_vector(home)} }}")
        else:
            out.append(f"home = {{ xyz = {_vector(home[:3])}, quaternion = "
                       f"{_vector(home[3:])} }}")
    return out


def _force_lines(e) -> list[str]:
    w = Where(element=e.name)
    out = ["[[force]]", f"name = {toml_str(utf8(e.name, w, 'name'))}"]
    if isinstance(e, Tyre):
        out += ['kind = "tyre"', f"link = {toml_str(utf8(e.link, w, 'link'))}"]
        if not _is_default(e.at, (0.0, 0.0, 0.0)):
            out.append(f"at = {_vector(e.at)}")
        laws = (("stiffness", e.stiffness), ("damping", e.damping), ("radius", e.radius))
    else:
        names = ", ".join(toml_str(utf8(n, w, "links")) for n in e.links)
        out += ['kind = "spring-damper"', f"links = [{names}]"]
        if not all(_is_default(p, d) for p, d in zip(e.at, _DEFAULT_AT)):
            out.append(f"at = [{', '.join(_vector(p) for p in e.at)}]")
        laws = (("stiffness", e.stiffness), ("damping", e.damping),
                ("free_length", e.free_length))
    out += [f"{key} = {float_text(value)}" for key, value in laws]
    return out


def _loop_lines(loop: Loop) -> list[str]:
    w = Where(loop=loop.name)
    names = ", ".join(toml_str(utf8(n, w, "links")) for n in loop.links)
    out = ["[[loop]]", f"name = {toml_str(utf8(loop.name, w, 'name'))}",
           f"joint = {toml_str(LoopJointType(loop.joint).value)}", f"links = [{names}]"]
    if loop.ratio is not None:
        out.append(f"ratio = {float_text(loop.ratio)}")
    if not all(_is_default(p, d) for p, d in zip(loop.at, _DEFAULT_AT)):
        out.append(f"at = [{', '.join(_vector(p) for p in loop.at)}]")
    if not all(_is_default(a, d) for a, d in zip(loop.axis, _DEFAULT_AXIS)):
        out.append(f"axis = [{', '.join(_vector(a) for a in loop.axis)}]")
    return out


def _assembly_lines(asm: Assembly) -> list[str]:
    out = []
    if asm.independent is not None:
        w = Where()
        names = ", ".join(toml_str(utf8(n, w, "assembly.independent")) for n in asm.independent)
        out.append(f"independent = [{names}]")
    if float_text(asm.tolerance) != float_text(DEFAULT_TOLERANCE):
        out.append(f"tolerance = {float_text(asm.tolerance)}")
    return ["", "[assembly]", *out] if out else []


# ======================================================================================
# Reading
# ======================================================================================

def _file_error(path: str, e: RobotError | MechanismError) -> MechanismFileError:
    """The file error of a model or field error: same chain, loop, link and field."""
    reason = e.reason
    residual = getattr(e, "residual", None)
    if residual is not None and "residual" not in reason:
        reason = f"{reason} (residual {residual:.3g})"
    return MechanismFileError(path, reason, chain=getattr(e, "chain", None),
                              loop=getattr(e, "loop", None), link=e.link,
                              link_name=e.link_name, field=e.field,
                              element=getattr(e, "element", None))


def _from_robot_file_error(e: RobotFileError) -> MechanismFileError:
    return MechanismFileError(e.path, e.reason, link=e.link, link_name=e.link_name,
                              field=e.field)


_ROBOT_FORMAT_LINE = re.compile(r"^\s*format\s*=\s*[\"']armdyn-robot/1[\"']", re.M)


def _mechanism_from_text(text: str, source: str) -> Mechanism:
    if not text.strip():
        raise RobotError(f"the file is empty; expected a mechanism file starting with "
                         f'format = "{FORMAT}"')
    try:
        doc = parse_toml(text, _syntax_error)
    except (RobotError, MechanismError):
        if _ROBOT_FORMAT_LINE.search(text):  # a robot file: its own reader says where
            robot_from_toml(text, source)
        raise
    if not doc:
        raise RobotError(f"the file is empty (comments only); expected a mechanism file "
                         f'starting with format = "{FORMAT}"')
    return _build_document(doc, source)


_HEADER = re.compile(r"^\s*(\[\[?)([^\]]*)\]")
_SECTIONS = {("[[", "chain"): "chain", ("[[", "chain.link"): "link", ("[[", "loop"): "loop",
             ("[", "assembly"): "assembly", ("[[", "link"): "robot link"}


def _syntax_error(text: str, message: str) -> RobotError | MechanismError:
    """The error for a TOML syntax error, naming the chain, link, loop and key it is in
    (found from the table headers and name lines above it)."""
    line_no = syntax_error_line(message)
    if line_no is None:
        return RobotError(f"TOML syntax error: {message}")
    lines = text.splitlines()
    section = None
    number = {"chain": 0, "link": 0, "loop": 0, "robot link": 0}
    names = {"chain": None, "link": "", "loop": None, "robot link": ""}
    for k, line in enumerate(lines[:line_no], start=1):
        m = _HEADER.match(line)
        if m:
            section = _SECTIONS.get((m.group(1), re.sub(r"[\s\"']", "", m.group(2))), "other")
            if section in number:
                number[section] += 1
                names[section] = None if section in ("chain", "loop") else ""
            if section == "chain":
                number["link"], names["link"] = 0, ""
        elif k < line_no and section in number and re.match(r"^\s*name\s*=", line):
            try:
                value = tomllib.loads(line).get("name")
            except Exception:
                value = None
            if isinstance(value, str):
                names[section] = value
    key = key_on_line(lines, line_no)
    reason = f"TOML syntax error: {message}"
    if section == "robot link":
        return RobotError(reason, link=number[section] or None, link_name=names[section],
                          field=key)
    if section == "assembly":
        return RobotError(reason, field=f"assembly.{key}" if key else "assembly")
    if section in ("chain", "link"):
        link = number["link"] if section == "link" else None
        if names["chain"] is None:
            reason += f" (in [[chain]] number {number['chain']})"
        w = Where(chain=names["chain"], link=link, link_name=names["link"] if link else "")
        return w.error(key, reason)
    if section == "loop":
        if names["loop"] is None:
            reason += f" (in [[loop]] number {number['loop']})"
        return Where(loop=names["loop"]).error(key, reason)
    return RobotError(reason, field=key)


def _build_document(doc, source: str) -> Mechanism:
    """A Mechanism from the parsed file: a mechanism file, or a robot file."""
    top = Where()
    if not isinstance(doc, dict):
        raise RobotError(f"expected a table of mechanism fields, got {describe(doc)}")
    expected_format = f'format = "{FORMAT}" (or "{ROBOT_FORMAT}" for a serial arm)'
    if "format" not in doc:
        # say which file it looks like: a serial arm's [[link]] tables, or chains
        if "link" in doc and "chain" not in doc:
            raise top.error("format", "missing field 'format'; the file's [[link]] tables "
                                      f'make it a robot file: put format = "{ROBOT_FORMAT}" '
                                      "at its top")
        if "chain" in doc:
            raise top.error("format", "missing field 'format'; the file's [[chain]] tables "
                                      f'make it a mechanism file: put format = "{FORMAT}" '
                                      f'(or "{FORMAT_2}") at its top')
        raise top.error("format", f"missing field 'format'; expected {expected_format} at the "
                                  "top of the file")
    fmt = string(doc["format"], top, "format",
                 f'the string "{FORMAT}", "{FORMAT_2}" or "{ROBOT_FORMAT}"')
    if fmt == ROBOT_FORMAT:
        return _robot_mechanism(robot_from_dict(doc, source))
    if fmt not in (FORMAT, FORMAT_2):
        raise top.error("format", f"unknown format {short(fmt)}; this version of ArmDyn reads "
                                  f'"{FORMAT}", "{FORMAT_2}" and "{ROBOT_FORMAT}"')
    return _build_mechanism(doc, version=2 if fmt == FORMAT_2 else 1)


def _robot_mechanism(robot: Robot) -> Mechanism:
    """The one-chain mechanism of a robot file; its errors name no chain (the file has
    none)."""
    try:
        return Mechanism.from_robot(robot)
    except MechanismError as e:
        raise RobotError(e.reason, link=e.link, link_name=e.link_name, field=e.field) from None


def _build_mechanism(doc: dict, version: int = 1) -> Mechanism:
    top = Where()
    if "link" in doc and "chain" not in doc:
        raise top.error("link", "a mechanism file has no top-level [[link]] tables; write "
                                "the links as [[chain.link]] tables under a [[chain]] (or "
                                f'format = "{ROBOT_FORMAT}" for a serial arm)')
    check_keys(doc, TOP_FIELDS, where="the mechanism's top-level fields", w=top)
    for key, what in (("force", "force elements ([[force]]) need"), ("road", "a road needs")):
        if key in doc and version < 2:
            raise top.error(key, f'{what} format = "{FORMAT_2}"')

    name, description, unit, gravity = header_fields(doc, top, "mechanism")

    rows = _tables(doc, "chain", "[[chain]]", "one per serial chain", required=True)
    total = sum(len(r["link"]) for r in rows
                if isinstance(r, dict) and isinstance(r.get("link"), list))
    if total > MAX_JOINTS:
        raise top.error("link", f"{total} links; a mechanism has at most {MAX_JOINTS} joints")
    chains = tuple(_build_chain(row, c, unit, version) for c, row in enumerate(rows, start=1))
    loop_rows = _tables(doc, "loop", "[[loop]]", "one per loop joint", required=False)
    if len(loop_rows) > MAX_LOOPS:
        raise top.error("loop", f"{len(loop_rows)} loops; a mechanism has at most "
                                f"{MAX_LOOPS} loops")
    loops = tuple(_build_loop(row, k, version) for k, row in enumerate(loop_rows, start=1))
    assembly = _build_assembly(doc["assembly"]) if "assembly" in doc else Assembly()
    force_rows = _tables(doc, "force", "[[force]]", "one per force element", required=False)
    forces = tuple(_build_force(row, k) for k, row in enumerate(force_rows, start=1))
    road = _build_road(doc["road"]) if "road" in doc else None
    return Mechanism(name=name, chains=chains, loops=loops, gravity=gravity,
                     description=description, angle_unit=unit, assembly=assembly,
                     forces=forces, road=road)


def _tables(doc: dict, key: str, header: str, what: str, *, required: bool,
            w: Where | None = None, field: str | None = None) -> list:
    """The array of tables `doc[key]` ([[key]]); refuse a single [key] table, another
    type and, if `required`, none at all."""
    w = w or Where()
    field = field or key
    single = header.replace("[[", "[").replace("]]", "]")
    if key not in doc:
        if required:
            raise w.error(field, f"expected at least one {header} table ({what}), found none")
        return []
    rows = doc[key]
    if isinstance(rows, dict):
        raise w.error(field, f"expected {header} tables ({what}), got a single {single} "
                             f"table; write {header} with double brackets")
    if not isinstance(rows, list):
        raise w.error(field, f"expected {header} tables ({what}), got {describe(rows)}")
    if required and not rows:
        raise w.error(field, f"expected at least one {header} table ({what}), found none")
    return rows


def _required_name(row, w: Where, table: str, number: int, what: str) -> str:
    """The `name` of a [[chain]] or [[loop]] table: a non-empty string."""
    if "name" not in row:
        raise w.error("name", f"missing field 'name' in {table} number {number}; expected "
                              f"{what}, a string unique in the file")
    name = string(row["name"], w, "name", f"{what}, a non-empty string ({table} number "
                                          f"{number})")
    if not name.strip():
        raise w.error("name", f"expected {what}, a non-empty string, got an empty string "
                              f"({table} number {number})")
    return name


def _build_chain(row, c: int, unit: str, version: int = 1) -> Chain:
    if not isinstance(row, dict):
        raise Where().error("chain", f"expected a [[chain]] table of fields (chain number {c}), "
                                     f"got {describe(row)}")
    name = _required_name(row, Where(), "[[chain]]", c, "the chain's name")
    w = Where(chain=name)
    check_keys(row, CHAIN_FIELDS, where="a [[chain]] table", w=w)
    base = Placement()
    if "base" in row:
        base = _build_base(row["base"], w, unit)
    parent = None
    if "parent" in row:
        parent = string(row["parent"], w, "parent", "the name of the link this chain starts "
                                                    "on, a string")
    rows = _tables(row, "link", "[[chain.link]]", "one per DH row", required=True, w=w)
    links = tuple(_build_link(r, Where(chain=name, link=i), unit, version)
                  for i, r in enumerate(rows, start=1))
    return Chain(name=name, links=links, parent=parent, base=base)


def _build_base(v, w: Where, unit: str) -> Placement:
    expected = ("a table { xyz = [x, y, z], rpy = [r, p, y] } (m and " + unit +
                "; both keys optional)")
    if not isinstance(v, dict):
        raise w.error("base", f"expected {expected}, got {describe(v)}")
    check_keys(v, BASE_FIELDS, where="base", w=w, prefix="base.")
    xyz = rpy = (0.0, 0.0, 0.0)
    if "xyz" in v:
        xyz = numbers(v["xyz"], 3, w, "base.xyz", "an array of 3 numbers [x, y, z] in m",
                      "a number in m")
    if "rpy" in v:
        rpy = numbers(v["rpy"], 3, w, "base.rpy", f"an array of 3 angles [roll, pitch, yaw] "
                                                  f"in {unit}", f"an angle in {unit}",
                      deg=unit == "deg")
    return Placement(xyz=xyz, rpy=rpy)


def _build_link(row, w: Where, unit: str, version: int = 1):
    joint = row.get("joint") if isinstance(row, dict) else None
    if joint in JOINTS_2:
        if isinstance(row.get("name"), str):
            w.link_name = row["name"]
        if version < 2:
            raise w.error("joint", f'a {joint} joint needs format = "{FORMAT_2}" (version 1 '
                                   'files hold revolute and prismatic DH rows)')
        return _build_several(row, w, unit, JointType(joint))
    link = link_from_table(row, w, unit, known=LINK_FIELDS, required=LINK_REQUIRED,
                           table="[[chain.link]]")
    actuated = boolean(row.get("actuated", False), w, "actuated",
                       "true or false (whether a motor drives the joint)")
    return replace(link, actuated=actuated) if actuated else link


def _build_several(row: dict, w: Where, unit: str, joint: JointType) -> Link:
    """A spherical, universal or free joint's [[chain.link]] table (version 2)."""
    for key in ("a", "b", "alpha", "theta", "limits"):
        if key in row:
            raise w.error(key, f"a {joint.value} joint is placed by xyz and rpy and has no "
                               f"{key} (DH values and limits belong to revolute and "
                               "prismatic rows)")
    check_keys(row, LINK_FIELDS_2, where=f"a {joint.value} joint's [[chain.link]] table", w=w)
    for key in LINK_REQUIRED_2:
        if key not in row:
            raise w.error(key, f"missing field '{key}'")
    name = string(row["name"], w, "name", "the link's name, a string unique in the file")
    deg = unit == "deg"
    mass = number(row["mass"], w, "mass", "the mass, a number > 0 in kg")
    com = numbers(row["com"], 3, w, "com", "the mass centre [x, y, z] in m", "a number in m")
    inertia = inertia_from_table(row["inertia"], w, unit)
    xyz = numbers(row["xyz"], 3, w, "xyz", "the joint's place [x, y, z] in m",
                  "a number in m") if "xyz" in row else (0.0, 0.0, 0.0)
    rpy = numbers(row["rpy"], 3, w, "rpy", f"the joint frame's [roll, pitch, yaw] in {unit}",
                  f"an angle in {unit}", deg=deg) if "rpy" in row else (0.0, 0.0, 0.0)
    home = _build_home(row["home"], w, unit, joint) if "home" in row else None
    actuated = boolean(row.get("actuated", False), w, "actuated",
                       "true or false (whether a motor drives the joint)")
    return Link(joint=joint, mass=mass, com=com, inertia=inertia, xyz=xyz, rpy=rpy, home=home,
                name=name, actuated=actuated)


def _build_home(v, w: Where, unit: str, joint: JointType) -> tuple[float, ...]:
    """The home values of a joint of several degrees of freedom (module docstring)."""
    deg = unit == "deg"
    if joint == JointType.UNIVERSAL:
        return numbers(v, 2, w, "home", f"the two angles [theta1, theta2] in {unit}",
                       f"an angle in {unit}", deg=deg)
    keys = ("xyz", "rpy", "quaternion") if joint == JointType.FREE else ("rpy", "quaternion")
    expected = (("{ xyz = [x, y, z], rpy = [r, p, y] } or { xyz = [...], quaternion = "
                 "[qx, qy, qz, qw] }") if joint == JointType.FREE else
                "{ rpy = [r, p, y] } or { quaternion = [qx, qy, qz, qw] }")
    if not isinstance(v, dict):
        raise w.error("home", f"expected {expected}, got {describe(v)}")
    check_keys(v, keys, where="home", w=w, prefix="home.")
    if "rpy" in v and "quaternion" in v:
        raise w.error("home", f"give the orientation once: rpy or quaternion, not both; "
                              f"expected {expected}")
    if "quaternion" in v:
        quat = numbers(v["quaternion"], 4, w, "home.quaternion",
                       "a unit quaternion [qx, qy, qz, qw] (scalar last)", "a number")
    elif "rpy" in v:
        quat = quaternion_rpy(numbers(v["rpy"], 3, w, "home.rpy",
                                      f"[roll, pitch, yaw] in {unit}", f"an angle in {unit}",
                                      deg=deg))
    else:
        quat = (0.0, 0.0, 0.0, 1.0)
    if joint == JointType.SPHERICAL:
        return tuple(quat)
    xyz = numbers(v["xyz"], 3, w, "home.xyz", "the body's position [x, y, z] in m",
                  "a number in m") if "xyz" in v else (0.0, 0.0, 0.0)
    return tuple(xyz) + tuple(quat)


def _build_force(row, k: int):
    if not isinstance(row, dict):
        raise Where().error("force", f"expected a [[force]] table of fields (force element "
                                     f"number {k}), got {describe(row)}")
    name = _required_name(row, Where(), "[[force]]", k, "the force element's name")
    w = Where(element=name)
    kinds = " or ".join(f'"{kind}"' for kind in FORCE_KINDS)
    if "kind" not in row:
        raise w.error("kind", f"missing field 'kind'; expected {kinds}")
    kind = string(row["kind"], w, "kind", kinds)
    if kind not in FORCE_KINDS:
        raise w.error("kind", f"expected {kinds}, got {short(kind)}{suggest(kind, FORCE_KINDS)}")
    if kind == "tyre":
        check_keys(row, TYRE_FIELDS, where="a tyre's [[force]] table", w=w)
        if "link" not in row:
            raise w.error("link", "missing field 'link'; expected the name of the link the "
                                  "tyre's wheel is on")
        link = string(row["link"], w, "link", "a link name")
        at = numbers(row["at"], 3, w, "at", "the wheel centre [x, y, z] in m in the link's "
                                            "own frame", "a number in m") \
            if "at" in row else (0.0, 0.0, 0.0)
        laws = _laws(row, w, ("stiffness", "damping", "radius"))
        return Tyre(name=name, link=link, at=at, **laws)
    check_keys(row, SPRING_FIELDS, where="a spring-damper's [[force]] table", w=w)
    if "links" not in row:
        raise w.error("links", 'missing field \'links\'; expected two link names ["a", "b"] '
                               '(either may be "base")')
    links = _link_names(row["links"], w)
    at = _vector_pair(row, "at", w, "points", "in m", _DEFAULT_AT)
    laws = _laws(row, w, ("stiffness", "damping", "free_length"))
    return SpringDamper(name=name, links=links, at=at, **laws)


def _laws(row: dict, w: Where, keys) -> dict:
    units = {"stiffness": "N/m", "damping": "N s/m", "free_length": "m", "radius": "m"}
    return {key: number(row.get(key, 0.0), w, key, f"a number >= 0 in {units[key]}")
            for key in keys}


def _build_road(v) -> Road:
    w = Where()
    expected = "a [road] table with points = [[x, h], ...] (m, x increasing)"
    if not isinstance(v, dict):
        raise w.error("road", f"expected {expected}, got {describe(v)}")
    check_keys(v, ("points",), where="[road]", w=w, prefix="road.")
    points = v.get("points", [])
    if not isinstance(points, list):
        raise w.error("road.points", f"expected {expected}, got {describe(points)}")
    return Road(tuple(numbers(p, 2, w, "road.points", f"road point {k}: [x, h] in m",
                              "a number in m") for k, p in enumerate(points, start=1)))


def _build_loop(row, k: int, version: int = 1) -> Loop:
    if not isinstance(row, dict):
        raise Where().error("loop", f"expected a [[loop]] table of fields (loop number {k}), "
                                    f"got {describe(row)}")
    name = _required_name(row, Where(), "[[loop]]", k, "the loop's name")
    w = Where(loop=name)
    check_keys(row, LOOP_FIELDS, where="a [[loop]] table", w=w)
    joints = " or ".join(f'"{j}"' for j in LOOP_JOINTS)
    for key, expected in (("joint", joints),
                          ("links", 'two link names ["a", "b"] (the second may be "base")')):
        if key not in row:
            raise w.error(key, f"missing field '{key}'; expected {expected}")
    joint = string(row["joint"], w, "joint", joints)
    if joint not in LOOP_JOINTS:
        raise w.error("joint", f"expected {joints}, got {short(joint)}"
                               f"{suggest(joint, LOOP_JOINTS)}")
    if joint == LoopJointType.GEAR and version < 2:
        raise w.error("joint", f'a gear loop needs format = "{FORMAT_2}" (version 1 files '
                               'hold revolute, spherical and prismatic loops)')
    links = _link_names(row["links"], w)
    at = _vector_pair(row, "at", w, "points", "in m", _DEFAULT_AT)
    axis = _vector_pair(row, "axis", w, "axes", "(any length but zero)", _DEFAULT_AXIS)
    ratio = None
    if "ratio" in row:  # the Mechanism says which loops take one and which values
        ratio = number(row["ratio"], w, "ratio", "a gear's ratio d q_b / d q_a, a number "
                                                 "(rad/rad, m/rad or rad/m)")
    return Loop(name=name, joint=LoopJointType(joint), links=links, at=at, axis=axis,
                ratio=ratio)


def _link_names(v, w: Where) -> tuple[str, str]:
    expected = 'an array of two link names ["a", "b"] (the second may be "base")'
    if not isinstance(v, list):
        raise w.error("links", f"expected {expected}, got {describe(v)}")
    if len(v) != 2:
        items = f"{len(v)} item{'s' if len(v) != 1 else ''}"
        raise w.error("links", f"expected {expected}, got {items}")
    for k, item in enumerate(v, start=1):
        if not isinstance(item, str):
            raise w.error("links", f"expected {expected}; item {k} is {describe(item)}")
    return (v[0], v[1])


def _vector_pair(row: dict, key: str, w: Where, what: str, unit: str, default):
    """`row[key]`: two 3-vectors, one per link of the loop, or `default` if absent."""
    if key not in row:
        return default
    v = row[key]
    expected = f"an array of 2 {what} [[x, y, z], [x, y, z]] {unit}, one in each link's frame"
    if not isinstance(v, list):
        raise w.error(key, f"expected {expected}, got {describe(v)}")
    if len(v) != 2:
        raise w.error(key, f"expected {expected}, got {len(v)} item{'s' if len(v) != 1 else ''}")
    return tuple(numbers(p, 3, w, key, f"{expected}; item {k + 1} must be 3 numbers",
                         "a number") for k, p in enumerate(v))


def _build_assembly(v) -> Assembly:
    w = Where()
    if isinstance(v, list):
        raise w.error("assembly", "expected one [assembly] table, got an array; write "
                                  "[assembly] with single brackets")
    if not isinstance(v, dict):
        raise w.error("assembly", f"expected an [assembly] table, got {describe(v)}")
    check_keys(v, ASSEMBLY_FIELDS, where="[assembly]", w=w, prefix="assembly.")
    independent = None
    if "independent" in v:
        names = v["independent"]
        expected = "an array of link names (the joints held while the loops are closed)"
        if not isinstance(names, list):
            raise w.error("assembly.independent", f"expected {expected}, got {describe(names)}")
        for k, item in enumerate(names, start=1):
            if not isinstance(item, str):
                raise w.error("assembly.independent", f"expected {expected}; item {k} is "
                                                      f"{describe(item)}")
        independent = tuple(names)
    tolerance = DEFAULT_TOLERANCE
    if "tolerance" in v:
        tolerance = number(v["tolerance"], w, "assembly.tolerance",
                           "the closure tolerance, a number > 0 in m and rad")
    return Assembly(independent=independent, tolerance=tolerance)
