"""What a sweep can vary: the field registry, and the axes of a grid.

A field is named as `--vary` names it:

- a link field, ``LINK.FIELD``: LINK is the joint's number (1-based, joint order) or
  its name (``3.mass``, ``forearm.mass``, ``"upper arm.com.x"``); FIELD one of
  `LINK_FIELDS` (mass, com.x|y|z, inertia.xx|yy|zz|xy|xz|yz, a, b, alpha, theta,
  limits.lower|upper);
- the payload at the tool: ``payload.mass`` (kg, a point mass, 0 unless varied) and
  ``payload.com.x|y|z`` (m, in the last link's own frame; the frame's origin unless
  varied), merged into the last link in joint order (`merge_payload`);
- the run: ``T`` (or ``duration``), and per run kind the poses and rates:
  ``target.J`` / ``start.J`` (inverse dynamics), ``q0.J`` / ``qd0.J`` and ``damping`` /
  ``damping.J`` (free fall), J a joint's number or name. A whole pose is an axis too:
  ``target``, ``start``, ``q0``, ``qd0``, each value a pose (n joint values).

Adding a link field is one line of `LINK_FIELDS`: its unit and how it changes a `Link`.

Values are SI inside (rad for angles and revolute joints, m for prismatic ones); the
command line types angles in degrees (`scale_of`). An axis keeps the values as given,
for the table, beside the SI values the runs use.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ArgumentError
from ..model.parts import Link

__all__ = ["LinkField", "LINK_FIELDS", "GEOMETRY_FIELDS", "PAYLOAD_FIELDS", "Unit", "FieldRef", "Axis",
           "resolve_field", "parse_values", "parse_vary", "merge_payload", "field_names",
           "field_choices", "typed_units"]


class Unit:
    """How a field's values are typed: a fixed SI unit, an angle (deg on the command
    line with --units deg), or the joint's own kind (angle or length, rate)."""

    ANGLE = "angle"          # rad (deg on the command line)
    JOINT = "joint"          # rad or m by the joint's type
    JOINT_RATE = "joint rate"  # rad/s or m/s by the joint's type
    DAMPING = "damping"      # N m s/rad or N s/m by the joint's type
    EFFORT = "effort"        # N m or N by the joint's type


def _set(name: str) -> Callable[[Link, float], Link]:
    return lambda link, v: replace(link, **{name: v})


def _component(name: str, i: int, size: int) -> Callable[[Link, float], Link]:
    def setter(link: Link, v: float) -> Link:
        old = getattr(link, name)
        values = list(old) if old is not None else [0.0] * size
        values[i] = v
        return replace(link, **{name: tuple(values)})
    return setter


@dataclass(frozen=True)
class LinkField:
    """A field of a link's row: its unit (an SI unit's text or a `Unit`), and how it
    changes a `Link` (the new link is validated when the model is built)."""

    unit: str
    apply: Callable[[Link, float], Link]


#: The link fields a sweep varies, by the name after ``LINK.``. One line per field.
LINK_FIELDS: dict[str, LinkField] = {
    "mass": LinkField("kg", _set("mass")),
    "com.x": LinkField("m", _component("com", 0, 3)),
    "com.y": LinkField("m", _component("com", 1, 3)),
    "com.z": LinkField("m", _component("com", 2, 3)),
    "inertia.xx": LinkField("kg m^2", _component("inertia", 0, 6)),
    "inertia.yy": LinkField("kg m^2", _component("inertia", 1, 6)),
    "inertia.zz": LinkField("kg m^2", _component("inertia", 2, 6)),
    "inertia.xy": LinkField("kg m^2", _component("inertia", 3, 6)),
    "inertia.xz": LinkField("kg m^2", _component("inertia", 4, 6)),
    "inertia.yz": LinkField("kg m^2", _component("inertia", 5, 6)),
    "a": LinkField("m", _set("a")),
    "b": LinkField("m", _set("b")),
    "alpha": LinkField(Unit.ANGLE, _set("alpha")),
    "theta": LinkField(Unit.ANGLE, _set("theta")),
    "limits.lower": LinkField(Unit.JOINT, _component("limits", 0, 2)),
    "limits.upper": LinkField(Unit.JOINT, _component("limits", 1, 2)),
    # friction and the drive (core.model.parts.Link, docs/motions.md)
    "friction_viscous": LinkField(Unit.DAMPING, _set("friction_viscous")),
    "friction_coulomb": LinkField(Unit.EFFORT, _set("friction_coulomb")),
    "gear_ratio": LinkField("1", _set("gear_ratio")),
    "rotor_inertia": LinkField("kg m^2", _set("rotor_inertia")),
}

#: The link fields that move the arm's frames (its geometry).
GEOMETRY_FIELDS = frozenset({"a", "b", "alpha", "theta"})
assert GEOMETRY_FIELDS <= set(LINK_FIELDS)

#: The payload's fields: a point mass at a point of the last link's own frame.
PAYLOAD_FIELDS = {"payload.mass": "kg", "payload.com.x": "m", "payload.com.y": "m",
                  "payload.com.z": "m"}

#: The run's fields by run kind ("inverse", "free-fall"): name -> (unit, per joint?).
#: A per-joint field is named NAME.J (one joint) or NAME (a whole pose per value).
RUN_FIELDS = {
    "inverse": {"T": ("s", False), "target": (Unit.JOINT, True),
                "start": (Unit.JOINT, True)},
    "free-fall": {"T": ("s", False), "q0": (Unit.JOINT, True),
                  "qd0": (Unit.JOINT_RATE, True), "damping": (Unit.DAMPING, None)},
}
#: Other names of run fields.
ALIASES = {"duration": "T"}


@dataclass(frozen=True)
class FieldRef:
    """A resolved field of a model and a run kind.

    what   : "link", "payload" or "run"
    key    : the link field's name (LINK_FIELDS), the payload field or the run field
    joint  : the joint (0-based) a link field or a per-joint run field is of; None for
             a scalar run field, a payload field or a whole pose
    pose   : a whole pose per value (n numbers)
    unit   : the unit's text for the table ("kg", "rad", "m", "rad/s", ...)
    angle  : the values are angles (rad; degrees on the command line)
    angle_mask : a whole pose: which of its n values are angles
    joints : the joints whose values it sets (a link field, a joint's value: one; a
             whole pose, damping of every joint: all; () for the others)
    """

    what: str
    key: str
    joint: int | None = None
    pose: bool = False
    unit: str = ""
    angle: bool = False
    angle_mask: tuple[bool, ...] = ()
    joints: tuple[int, ...] = ()

    @property
    def slots(self) -> set[tuple]:
        """What it sets: two fields with a slot in common set the same thing."""
        if self.joints:
            return {(self.what, self.key, j) for j in self.joints}
        return {(self.what, self.key)}


def field_names(model, kind: str) -> list[str]:
    """What a sweep of a run of `kind` can vary, for messages: "T", "target, target.J",
    "payload.mass", ..., "LINK.FIELD (FIELD: mass, com.x|y|z, ...)"."""
    run = [name if per is False else f"{name}, {name}.J"
           for name, (_, per) in RUN_FIELDS[kind].items()]
    link: list[str] = []
    for name in LINK_FIELDS:  # com.x, com.y, com.z -> com.x|y|z
        head, _, tail = name.rpartition(".")
        if head and link and link[-1].startswith(head + "."):
            link[-1] += "|" + tail
        else:
            link.append(name)
    payload = "payload.mass, payload.com.x|y|z"
    return run + [payload, f"LINK.FIELD (FIELD: {', '.join(link)})"]


def field_choices(model, kind: str) -> list[str]:
    """Every field a sweep of a run of `kind` ("inverse" or "free-fall") can vary on
    `model`, one concrete name each (what a window offers to pick from; each one
    `resolve_field` accepts): the run's fields (a whole pose, then each joint's value by
    its 1-based number), the payload's, then each link's `LINK_FIELDS` by the joint's
    number (its limits only where the link has limits)."""
    names: list[str] = []
    for name, (_, per) in RUN_FIELDS[kind].items():
        names.append(name)
        if per is not False:
            names += [f"{name}.{j + 1}" for j in range(model.n)]
    names += list(PAYLOAD_FIELDS)
    for j, link in enumerate(model.links):
        names += [f"{j + 1}.{field}" for field in LINK_FIELDS
                  if not (field.startswith("limits.") and link.limits is None)]
    return names


def _joint(model, text: str) -> int | None:
    """A joint given by its 1-based number or its name; None if it is neither."""
    names = list(model.joint_names)
    if text in names:
        return names.index(text)
    if re.fullmatch(r"\d+", text):
        j = int(text) - 1
        if 0 <= j < model.n:
            return j
    return None


def _joint_unit(model, j: int, unit: str) -> tuple[str, bool]:
    """The unit's text for joint j and whether it is an angle."""
    rev = bool(model.is_revolute[j])
    if unit == Unit.JOINT:
        return ("rad", True) if rev else ("m", False)
    if unit == Unit.JOINT_RATE:
        return ("rad/s", True) if rev else ("m/s", False)
    if unit == Unit.DAMPING:
        return ("N m s/rad", False) if rev else ("N s/m", False)
    if unit == Unit.EFFORT:
        return ("N m", False) if rev else ("N", False)
    if unit == Unit.ANGLE:
        return "rad", True
    return unit, False


def resolve_field(name: str, model, kind: str) -> FieldRef:
    """The field `name` of `model` for a run of `kind` ("inverse" or "free-fall"), or an
    ArgumentError saying why not (the caller names the option)."""
    text = name.strip()
    text = ALIASES.get(text, text)
    runs = RUN_FIELDS[kind]
    joints = (f"a number 1-{model.n} or one of " + ", ".join(model.joint_names))
    if text in PAYLOAD_FIELDS:
        return FieldRef("payload", text, unit=PAYLOAD_FIELDS[text])
    if text in runs:
        unit, per = runs[text]
        if per is True:  # a whole pose
            mask = tuple(_joint_unit(model, j, unit)[1] for j in range(model.n))
            return FieldRef("run", text, pose=True, unit=_pose_unit(model, unit),
                            angle_mask=mask, joints=tuple(range(model.n)))
        if per is None:  # every joint alike (damping)
            return FieldRef("run", text, unit=_pose_unit(model, unit),
                            joints=tuple(range(model.n)))
        return FieldRef("run", text, unit=unit)
    head, dot, tail = text.partition(".")
    if dot and head in runs and runs[head][1] is not False:
        j = _joint(model, tail)
        if j is None:
            raise ArgumentError(f"{tail!r} is not a joint of {model.name!r} ({joints})")
        unit, angle = _joint_unit(model, j, runs[head][0])
        return FieldRef("run", head, joint=j, unit=unit, angle=angle, joints=(j,))
    known = ("a sweep of " + ("an inverse-dynamics run" if kind == "inverse" else "a free fall")
             + " varies " + "; ".join(field_names(model, kind)) + " (LINK and J: " + joints
             + ")")
    for field in sorted(LINK_FIELDS, key=len, reverse=True):  # com.x before x
        if text.endswith("." + field):
            link = text[:-len(field) - 1]
            j = _joint(model, link)
            if j is None:
                raise ArgumentError(f"unknown field: {link!r} is not a link; {known}")
            spec = LINK_FIELDS[field]
            if field.startswith("limits.") and model.links[j].limits is None:
                raise ArgumentError(f"link {j + 1} ({model.joint_names[j]!r}) has no limits "
                                    "to vary")
            unit, angle = _joint_unit(model, j, spec.unit)
            return FieldRef("link", field, joint=j, unit=unit, angle=angle, joints=(j,))
    raise ArgumentError(f"unknown field; {known}")


def _pose_unit(model, unit: str) -> str:
    units = {_joint_unit(model, j, unit)[0] for j in range(model.n)}
    return " or ".join(sorted(units))


# ----- the values of an axis ----------------------------------------------------------------

def _number(text: str, where: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ArgumentError(f"{where}: {text.strip()!r} is not a number") from None
    if not math.isfinite(v):
        raise ArgumentError(f"{where}: values must be finite, got {text.strip()!r}")
    return v


def parse_values(text: str, where: str, pose_size: int | None = None) -> np.ndarray:
    """The values of `--vary FIELD=...`: "START:STOP:COUNT" (COUNT values from START to
    STOP, both included) or "v1,v2,..."; for a whole pose (`pose_size` numbers each),
    poses separated by "/" ("90,45,0/0,30,0"). Returns (k,) or (k, pose_size);
    ArgumentError naming `where` for an empty range, a count that is not a whole number
    >= 1, or a value that is not a finite number."""
    text = text.strip()
    if not text:
        raise ArgumentError(f"{where}: no values (give START:STOP:COUNT or v1,v2,...)")
    if pose_size is not None:
        poses = []
        for part in text.split("/"):
            values = [_number(v, where) for v in part.split(",") if v.strip()]
            if len(values) != pose_size:
                raise ArgumentError(f"{where}: each pose needs {pose_size} values (one per "
                                    f"joint), got {len(values)} in {part.strip()!r}")
            poses.append(values)
        return np.array(poses, dtype=float)
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise ArgumentError(f"{where}: a range is START:STOP:COUNT, got {text!r}")
        start, stop = _number(parts[0], where), _number(parts[1], where)
        try:
            count = int(parts[2])
        except ValueError:
            count = None
        if count is None or count < 1:
            raise ArgumentError(f"{where}: an empty range: COUNT must be a whole number >= 1, "
                                f"got {parts[2].strip()!r}")
        if count == 1 and start != stop:
            raise ArgumentError(f"{where}: one value cannot go from {start:g} to {stop:g}; "
                                "give COUNT >= 2 or START = STOP")
        return np.linspace(start, stop, count)
    values = [_number(v, where) for v in text.split(",") if v.strip()]
    if not values:
        raise ArgumentError(f"{where}: no values (give START:STOP:COUNT or v1,v2,...)")
    return np.array(values, dtype=float)


@dataclass(frozen=True)
class Axis:
    """One axis of a sweep's grid.

    name   : the field's name as given (the table's column; a whole pose has one column
             per joint, NAME.1 ... NAME.n)
    field  : the resolved field
    values : (k,) or (k, n) the values as given (the table shows these)
    si     : the same values in SI units (what the runs use)
    """

    name: str
    field: FieldRef
    values: np.ndarray
    si: np.ndarray

    def __len__(self) -> int:
        return int(self.values.shape[0])

    @property
    def columns(self) -> list[str]:
        """The table's columns of this axis."""
        if self.field.pose:
            return [f"{self.name}.{j + 1}" for j in range(self.values.shape[1])]
        return [self.name]

    def text(self, k: int) -> str:
        """Value k as given, for messages: "-1", "90,45,0"."""
        v = self.values[k]
        return ",".join(f"{x:g}" for x in v) if np.ndim(v) else f"{float(v):g}"


def scale_of(field: FieldRef, angle_unit: str) -> float | np.ndarray:
    """The factor from the typed values to SI: degrees to radians for angles when
    `angle_unit` is "deg" (per joint for a whole pose)."""
    if angle_unit != "deg":
        return 1.0
    if field.pose:
        return np.where(np.array(field.angle_mask, dtype=bool), math.pi / 180.0, 1.0)
    return math.pi / 180.0 if field.angle else 1.0


def parse_vary(spec: str, model, kind: str, angle_unit: str = "rad") -> Axis:
    """An axis from the command line's ``FIELD=START:STOP:COUNT`` or ``FIELD=v1,v2,...``
    (a whole pose: ``FIELD=v1,...,vn/v1,...,vn``); angles in `angle_unit`. ArgumentError
    naming the field and the value for an unknown field or an empty range."""
    name, eq, text = spec.partition("=")
    name = name.strip()
    if not eq or not name:
        raise ArgumentError(f"--vary {spec}: expected FIELD=START:STOP:COUNT or "
                            "FIELD=v1,v2,...")
    try:
        field = resolve_field(name, model, kind)
    except ArgumentError as err:
        raise ArgumentError(f"--vary {name}: {err}") from None
    values = parse_values(text, f"--vary {name}", model.n if field.pose else None)
    return Axis(name, field, values, values * scale_of(field, angle_unit))


def axis_of(name: str, values, model, kind: str) -> Axis:
    """An axis from Python: `values` a sequence of SI numbers (of poses for a whole pose),
    or a "START:STOP:COUNT" / "v1,v2" string (SI)."""
    where = f"vary[{name!r}]"
    try:
        field = resolve_field(name, model, kind)
    except ArgumentError as err:
        raise ArgumentError(f"{where}: {err}") from None
    if isinstance(values, str):
        array = parse_values(values, where, model.n if field.pose else None)
    else:
        try:
            array = np.array(values, dtype=float)
        except (TypeError, ValueError):
            raise ArgumentError(f"{where}: expected numbers, got {values!r}") from None
        if array.ndim == 0:
            array = array.reshape(1)
        want = 2 if field.pose else 1
        if array.ndim != want or array.shape[0] == 0 or (field.pose and
                                                          array.shape[1] != model.n):
            shape = f"(k, {model.n}) poses" if field.pose else "(k,) numbers"
            raise ArgumentError(f"{where}: expected {shape} with k >= 1, got shape "
                                f"{array.shape}")
        bad = ~np.isfinite(array)
        if bad.any():
            raise ArgumentError(f"{where}: values must be finite, got "
                                f"{array[bad].ravel()[0]!r}")
    return Axis(name, field, array, array.copy())


def typed_units(axes: Sequence[Axis], angle_unit: str) -> list[str]:
    """The varied columns' units as the values were typed (`parse_vary` with
    `angle_unit`: "deg" for angles in degrees), one per column of each axis, for the
    table's CSV (`core.sweeps.sweep.sweep_csv_text`'s ``value_units``)."""
    out = []
    for axis in axes:
        scale = np.broadcast_to(scale_of(axis.field, angle_unit), (len(axis.columns),))
        base = [axis.field.unit] * len(axis.columns)
        if axis.field.pose:
            base = ["rad" if a else "m" for a in axis.field.angle_mask]
            if axis.field.key == "qd0":
                base = [u + "/s" for u in base]
        out += [u.replace("rad", "deg") if s != 1.0 else u for u, s in zip(base, scale)]
    return out


def check_overlaps(axes: Sequence[Axis]) -> None:
    """Refuse two axes that set the same thing: the same field twice, or a joint's value
    that another axis sets too (``target`` and ``target.2``, ``damping`` and
    ``damping.3``)."""
    seen: dict[tuple, str] = {}
    for axis in axes:
        for slot in axis.field.slots:
            if slot in seen:
                raise ArgumentError(f"--vary {axis.name}: sets what --vary {seen[slot]} sets; "
                                    "give each field once")
        seen.update(dict.fromkeys(axis.field.slots, axis.name))


# ----- the payload ------------------------------------------------------------------------

def merge_payload(link: Link, mass: float, at) -> Link:
    """`link` carrying a point mass `mass` (kg) at `at` (3,) of its own frame (m): the
    rigid sum of the two bodies, mass centre and inertia about it by the parallel-axis
    theorem, I' = I + m (|d|^2 E - d d^T) + m_p (|e|^2 E - e e^T) with d = c - c',
    e = p - c'. A zero mass leaves the link as it is."""
    if mass == 0.0:
        return link
    m = link.mass
    c = np.array(link.com, dtype=float)
    p = np.array(at, dtype=float)
    total = m + mass
    c_new = (m * c + mass * p) / total
    d, e = c - c_new, p - c_new
    eye = np.eye(3)
    inertia = (link.inertia_matrix + m * (d @ d * eye - np.outer(d, d))
               + mass * (e @ e * eye - np.outer(e, e)))
    return replace(link, mass=total, com=tuple(float(v) for v in c_new),
                   inertia=(float(inertia[0, 0]), float(inertia[1, 1]), float(inertia[2, 2]),
                            float(inertia[0, 1]), float(inertia[0, 2]), float(inertia[1, 2])))
