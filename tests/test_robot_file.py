"""Robot files: the format contract of docs/robot-file.md, round trips, fuzzing, atomic save.

Expected values are derived here independently (tomllib, math.radians, tomli_w
for writing test files), never copied from core.io.robot_file's output. The valid file
(`VALID_TEXT`) and the rule cases (`LINK_CASES`, `TOP_CASES`) are in tests/strategies.py
("robot-file cases"): test_mechanism_file.py reads them as mechanisms too.
"""
from __future__ import annotations

import math
import os
import re
import stat
import sys
import time
import tomllib

import numpy as np
import pytest
import tomli_w
from hypothesis import HealthCheck, assume, given
from hypothesis import strategies as st

from armdyn.core import RobotError, RobotFileError
from armdyn.core import JointType, Link, Robot
from armdyn.core.model.robot import validate_robot
from armdyn.core.io.toml_io import MAX_FILE_BYTES
from armdyn.core.io.robot_file import (MAX_LINKS, robot_from_dict, robot_from_toml,
                                       robot_to_dict, robot_to_toml)
from armdyn.core import load_robot, save_robot
from strategies import LINK_CASES, TOP_CASES, VALID_TEXT, fast

FAST = fast(40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def write(tmp_path, content, name="robot.toml"):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif isinstance(content, dict):
        p.write_text(tomli_w.dumps(content), encoding="utf-8")
    else:
        p.write_text(content, encoding="utf-8")
    return p


def base_doc():
    return tomllib.loads(VALID_TEXT)


def ulps_apart(x: float, y: float) -> float:
    if x == y:
        return 0.0
    return abs(x - y) / math.ulp(max(abs(x), abs(y)))


# ======================================================================================
# Reading the documented format
# ======================================================================================

def test_valid_file_reads_as_written(tmp_path):
    robot = load_robot(write(tmp_path, VALID_TEXT))
    doc = base_doc()
    assert robot.name == doc["name"] and robot.description == doc["description"]
    assert robot.angle_unit == "deg" and robot.gravity == (0.0, 0.0, -9.81)
    assert robot.n == 3
    assert [l.name for l in robot.links] == ["waist", "shoulder", "slide"]
    assert [l.joint for l in robot.links] == [JointType.REVOLUTE, JointType.REVOLUTE,
                                              JointType.PRISMATIC]
    for link, row in zip(robot.links, doc["link"]):
        # lengths as written, angles converted from degrees
        assert link.a == row["a"] and link.b == row["b"]
        assert ulps_apart(link.alpha, math.radians(row["alpha"])) <= 1
        assert ulps_apart(link.theta, math.radians(row["theta"])) <= 1
        assert link.mass == row["mass"] and link.com == tuple(row["com"])
        inertia = row["inertia"]
        keys = ("xx", "yy", "zz", "xy", "xz", "yz")
        assert link.inertia == tuple(inertia.get(k, 0.0) for k in keys)
        if link.joint is JointType.REVOLUTE:
            assert all(ulps_apart(v, math.radians(w)) <= 1
                       for v, w in zip(link.limits, row["limits"]))
        else:  # prismatic limits are lengths: not converted
            assert link.limits == tuple(row["limits"])
    assert robot.links[0].alpha == -math.pi / 2  # -90 deg is the double nearest -pi/2
    assert robot.warnings == ()


def test_defaults_and_integers(tmp_path):
    text = """\
format = "armdyn-robot/1"
name = "minimal"

[[link]]
joint = "revolute"
a = 1
b = 0
alpha = 90
theta = 0
mass = 2
com = [0, 0, 0]
inertia = { xx = 1, yy = 1, zz = 1 }
"""
    robot = load_robot(write(tmp_path, text))
    assert robot.angle_unit == "deg"                # default unit
    assert robot.gravity == (0.0, 0.0, -9.81)       # default gravity
    assert robot.description == ""
    link = robot.links[0]
    assert link.name == "" and robot.link_names == ["link 1"]
    assert link.limits is None
    assert link.inertia == (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)
    assert link.alpha == math.pi / 2
    assert isinstance(link.a, float) and isinstance(link.mass, float)


def test_radian_files_are_not_converted(tmp_path):
    doc = base_doc()
    doc["angle_unit"] = "rad"
    doc["link"][1]["limits"] = [-2.5, 0.75]
    robot = load_robot(write(tmp_path, doc))
    for link, row in zip(robot.links, doc["link"]):
        assert link.alpha == row["alpha"] and link.theta == row["theta"]
    assert robot.links[1].limits == (-2.5, 0.75)


@given(st.floats(-1e6, 1e6, allow_nan=False))
@FAST
def test_degrees_convert_to_nearest_radians(tmp_path, deg):
    doc = base_doc()
    doc["link"][1]["theta"] = deg
    robot = load_robot(write(tmp_path, doc))
    assert ulps_apart(robot.links[1].theta, math.radians(deg)) <= 1


def test_bom_is_tolerated(tmp_path):
    robot = load_robot(write(tmp_path, b"\xef\xbb\xbf" + VALID_TEXT.encode()))
    assert robot.n == 3


def test_long_link_gives_warning_not_error(tmp_path, capsys):
    doc = base_doc()
    doc["link"][1]["a"] = 12.0  # metres: probably millimetres typed as metres
    robot = load_robot(write(tmp_path, doc))
    assert len(robot.warnings) == 1
    assert "link 2" in robot.warnings[0] and "a = 12" in robot.warnings[0]
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_thousand_links_load_quickly(tmp_path):
    link = Link(a=0.1, alpha=0.5, mass=1.0, inertia=(0.1, 0.1, 0.1, 0.0, 0.0, 0.0))
    robot = Robot(name="long", links=(link,) * MAX_LINKS)
    p = tmp_path / "long.toml"
    save_robot(robot, p)
    t0 = time.perf_counter()
    assert load_robot(p) == robot
    assert time.perf_counter() - t0 < 5.0


# ======================================================================================
# Errors: every rule of docs/robot-file.md, each message names file, link and field
# ======================================================================================

def load_error(tmp_path, content) -> RobotFileError:
    p = write(tmp_path, content)
    result = None
    with pytest.raises(RobotFileError) as info:
        result = load_robot(p)
    assert result is None  # nothing half-loaded
    err = info.value
    assert err.path == str(p) and str(p) in str(err)
    return err


def assert_names(err: RobotFileError, link, link_name, field):
    text = str(err)
    assert err.field == field, text
    assert f"'{field}'" in text, text
    assert err.link == link, text
    if link is not None:
        assert f"link {link}" in text, text
        assert err.link_name == link_name, text
        if link_name:
            assert link_name in text, text
    else:
        assert "link " not in text.split(": ", 1)[1].split("field")[0], text


@pytest.mark.parametrize("mutation,field,words", LINK_CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(LINK_CASES)])
def test_link_rule_is_enforced_and_named(tmp_path, mutation, field, words):
    doc = base_doc()
    mutation(doc)
    err = load_error(tmp_path, doc)
    assert_names(err, 2, "shoulder", field)
    for w in words:
        assert w.lower() in err.reason.lower(), err.reason


def test_suggestions_name_the_closest_field(tmp_path):
    doc = base_doc()
    doc["link"][1]["mas"] = doc["link"][1].pop("mass")
    err = load_error(tmp_path, doc)
    assert "did you mean 'mass'" in err.reason
    doc = base_doc()
    doc["gravty"] = doc.pop("gravity")
    err = load_error(tmp_path, doc)
    assert "did you mean 'gravity'" in err.reason


def test_unnamed_link_is_named_by_number(tmp_path):
    doc = base_doc()
    del doc["link"][2]["name"]
    doc["link"][2]["mass"] = -2.0
    err = load_error(tmp_path, doc)
    assert_names(err, 3, "", "mass")


def test_link_name_of_wrong_type(tmp_path):
    doc = base_doc()
    doc["link"][0]["name"] = 5
    assert_names(load_error(tmp_path, doc), 1, "", "name")


@pytest.mark.parametrize("mutation,field,words", TOP_CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(TOP_CASES)])
def test_top_level_rule_is_enforced_and_named(tmp_path, mutation, field, words):
    doc = base_doc()
    mutation(doc)
    err = load_error(tmp_path, doc)
    assert_names(err, None, "", field)
    for w in words:
        assert w.lower() in err.reason.lower(), err.reason


def test_single_link_table_instead_of_array(tmp_path):
    text = VALID_TEXT.split("[[link]]")[0] + "[link]\n" + VALID_TEXT.split("[[link]]")[1]
    err = load_error(tmp_path, text)
    assert err.field == "link" and "[[link]]" in err.reason


def test_non_table_link_entry(tmp_path):
    doc = base_doc()
    text = tomli_w.dumps({k: v for k, v in doc.items() if k != "link"}) + "link = [1, 2]\n"
    err = load_error(tmp_path, text)
    assert err.link == 1 and err.field == "link"


def test_too_many_links_fails_fast(tmp_path):
    first = VALID_TEXT.index("[[link]]")
    one = VALID_TEXT[first:VALID_TEXT.index("[[link]]", first + 10)]
    head = VALID_TEXT[:first]
    text = head + one * (MAX_LINKS + 1)
    assert len(text.encode()) < MAX_FILE_BYTES  # the link count, not the size, refuses it
    t0 = time.perf_counter()
    err = load_error(tmp_path, text)
    assert time.perf_counter() - t0 < 5.0
    assert err.field == "link" and str(MAX_LINKS) in err.reason


def test_oversized_file_fails_fast(tmp_path):
    text = VALID_TEXT + "[[link]]\n" * (MAX_FILE_BYTES // 9 + 10)
    t0 = time.perf_counter()
    err = load_error(tmp_path, text)
    assert time.perf_counter() - t0 < 1.0
    assert "bytes" in err.reason


def test_syntax_error_names_line_link_and_key(tmp_path):
    lines = VALID_TEXT.splitlines()
    # break the mass of the second link
    second = [i for i, l in enumerate(lines) if l.strip() == "[[link]]"][1]
    mass_line = next(i for i in range(second, len(lines)) if lines[i].startswith("mass"))
    lines[mass_line] = "mass = = 17.4"
    err = load_error(tmp_path, "\n".join(lines) + "\n")
    assert f"line {mass_line + 1}" in err.reason and "syntax" in err.reason.lower()
    assert err.link == 2 and err.field == "mass"


def test_duplicate_key_is_refused(tmp_path):
    err = load_error(tmp_path, VALID_TEXT.replace("mass = 17.4", "mass = 17.4\nmass = 1.0"))
    assert err.link == 2


@pytest.mark.parametrize("content,words", [
    (b"", ["empty"]),
    (b"   \n\n# only a comment\n", ["empty"]),
    (b"\xff\xfe\x00f\x00o\x00r\x00m", ["utf-8"]),
    (VALID_TEXT.encode().replace(b"Three", b"Thr\xe9e"), ["utf-8", "line 3"]),
    (bytes(range(256)) * 4, []),
    (b"\x00" * 100, []),
    (b"a = " + b"[" * 100_000, []),
    (b"format = \"armdyn-robot/1\"\nx = " + b"9" * 5000, []),
    (b"format = \"armdyn-robot/1\"\nname = \"x\"\n" + b"k = {" * 3000, []),
    (VALID_TEXT.encode()[:len(VALID_TEXT) // 2], []),
])
def test_garbage_is_refused_with_robotfileerror(tmp_path, content, words):
    err = load_error(tmp_path, content)
    for w in words:
        assert w.lower() in err.reason.lower(), err.reason


def test_missing_file_and_directory(tmp_path):
    missing = tmp_path / "nope.toml"
    with pytest.raises(RobotFileError) as info:
        load_robot(missing)
    assert str(missing) in str(info.value)
    with pytest.raises(RobotFileError) as info:
        load_robot(tmp_path)
    assert "directory" in str(info.value)
    with pytest.raises(RobotFileError):
        load_robot(tmp_path / "nope" / "deeper.toml")
    with pytest.raises(RobotFileError):
        load_robot(str(tmp_path / "bad\0name.toml"))
    with pytest.raises(RobotFileError):
        load_robot(3)  # not a path: must not read file descriptor 3
    with pytest.raises(RobotFileError):
        load_robot(None)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_refused_without_blocking(tmp_path):
    p = tmp_path / "pipe.toml"
    os.mkfifo(p)
    with pytest.raises(RobotFileError) as info:
        load_robot(p)
    assert "regular file" in info.value.reason


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0,
                    reason="permissions are not enforced for root / on Windows")
def test_unreadable_file(tmp_path):
    p = write(tmp_path, VALID_TEXT)
    p.chmod(0)
    try:
        with pytest.raises(RobotFileError) as info:
            load_robot(p)
        assert "permission" in info.value.reason.lower()
    finally:
        p.chmod(0o644)


def test_robot_validation_errors_are_wrapped(tmp_path, monkeypatch):
    # Whatever Robot's own validation raises arrives as RobotFileError with its place.
    import armdyn.core.io.robot_file as rf
    def failing_robot(**kwargs):
        raise RobotError("made-up rule", link=3, link_name="slide", field="theta")
    monkeypatch.setattr(rf, "Robot", failing_robot)
    err = load_error(tmp_path, VALID_TEXT)
    assert (err.link, err.link_name, err.field, err.reason) == (3, "slide", "theta", "made-up rule")


def test_unexpected_exceptions_are_wrapped(tmp_path, monkeypatch):
    import armdyn.core.io.robot_file as rf
    def boom(**kwargs):
        raise ZeroDivisionError("internal bug")
    monkeypatch.setattr(rf, "Robot", boom)
    err = load_error(tmp_path, VALID_TEXT)
    assert "ZeroDivisionError" in err.reason


# ======================================================================================
# Round trips for random valid robots
# ======================================================================================

odd_text = st.text(st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ['say "hi"', "back\\slash", "line1\nline2", 'triple """ quotes', "tab\tand\rcr",
     "\x00\x1f\x7f", "ünïcødé 机器人 🤖", "'single'", "trailing\\", "\n", '"""'])


def finite(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


lengths = finite(-5.0, 5.0) | st.sampled_from([0.0, -0.0, 1e-300, 5e-324, 1e12, -1e12, 15.0])
angles = finite(-20.0, 20.0) | finite(-1e6, 1e6) | st.sampled_from(
    [0.0, -0.0, math.pi, -math.pi / 2, 5e-324, 1e-310, 1e12, -1e12, 0.1, math.radians(33.3)])


@st.composite
def inertias(draw):
    """A valid inertia tensor: positive principal moments meeting the triangle
    inequality, turned by a random rotation (or not, to get zero products)."""
    p1 = draw(finite(1e-3, 1.0))
    p2 = draw(finite(1e-3, 1.0))
    t = draw(finite(0.05, 0.95))
    lo, hi = abs(p1 - p2), p1 + p2
    p3 = lo + t * (hi - lo)
    scale = draw(st.sampled_from([1e-4, 1e-2, 1.0, 37.0]))
    moments = np.array([p1, p2, p3]) * scale
    if draw(st.booleans()):
        return (float(moments[0]), float(moments[1]), float(moments[2]), 0.0, 0.0, 0.0)
    q = np.array([draw(finite(-1.0, 1.0)) for _ in range(4)])
    assume(np.linalg.norm(q) > 0.1)
    w, x, y, z = q / np.linalg.norm(q)
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    I = R @ np.diag(moments) @ R.T
    return tuple(float(v) for v in (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]))


@st.composite
def links(draw):
    joint = draw(st.sampled_from([JointType.REVOLUTE, JointType.PRISMATIC]))
    limits = None
    if draw(st.booleans()):
        span = angles if joint is JointType.REVOLUTE else lengths
        lo, hi = draw(span), draw(span)
        assume(lo != hi)
        limits = (min(lo, hi), max(lo, hi))
    return Link(joint=joint, a=draw(lengths), b=draw(lengths), alpha=draw(angles),
                theta=draw(angles), mass=draw(finite(1e-6, 1e6)),
                com=tuple(draw(lengths) for _ in range(3)), inertia=draw(inertias()),
                limits=limits, name=draw(st.just("") | odd_text))


@st.composite
def robots(draw, max_links=30):
    name = draw(odd_text.filter(lambda s: s.strip()))
    try:
        rows = draw(st.lists(links(), min_size=1, max_size=max_links))
        return Robot(name=name, links=tuple(rows),
                     gravity=tuple(draw(finite(-20.0, 20.0)) for _ in range(3)),
                     description=draw(st.just("") | odd_text),
                     angle_unit=draw(st.sampled_from(["deg", "rad"])))
    except RobotError:
        assume(False)


def _floats_of(robot):
    for link in robot.links:
        yield from (link.a, link.b, link.alpha, link.theta, link.mass, *link.com, *link.inertia,
                    *(link.limits or ()))
    yield from robot.gravity


@given(robots())
@FAST
def test_save_load_round_trip_is_exact(tmp_path, robot):
    p = tmp_path / "rt.toml"
    save_robot(robot, p)
    loaded = load_robot(p)
    assert loaded == robot
    # bit for bit, including the sign of zero
    assert [math.copysign(1, x) * abs(x) for x in _floats_of(loaded)] == \
           [math.copysign(1, x) * abs(x) for x in _floats_of(robot)]
    # and a fixed point: saving the loaded robot writes the same bytes
    p2 = tmp_path / "rt2.toml"
    save_robot(loaded, p2)
    assert p2.read_bytes() == p.read_bytes()


@given(robots())
@FAST
def test_written_text_is_toml_in_the_robot_units(robot):
    text = robot_to_toml(robot)
    doc = tomllib.loads(text)  # an independent TOML reader accepts it
    assert text.startswith("#")  # a header comment for people
    assert doc["format"] == "armdyn-robot/1" and doc["name"] == robot.name
    assert doc.get("description", "") == robot.description
    assert doc["angle_unit"] == robot.angle_unit and len(doc["link"]) == robot.n
    for link, row in zip(robot.links, doc["link"]):
        assert row.get("name", "") == link.name and row["joint"] == link.joint.value
        # the documented column order: name, joint, DH columns, then mass and inertia
        order = (["name"] if link.name else []) + ["joint", "a", "b", "alpha", "theta", "mass",
                                                   "com", "inertia"]
        assert list(row)[:len(order)] == order
        assert row["a"] == link.a and row["mass"] == link.mass
        assert isinstance(row["inertia"], dict)
        to_rad = math.radians if robot.angle_unit == "deg" else (lambda v: v)
        for key in ("alpha", "theta"):
            want = getattr(link, key)
            assert math.isclose(to_rad(row[key]), want, rel_tol=4e-16, abs_tol=1e-300)
        if link.limits is not None:
            conv = to_rad if link.is_revolute else (lambda v: v)
            assert all(math.isclose(conv(v), w, rel_tol=4e-16, abs_tol=1e-300)
                       for v, w in zip(row["limits"], link.limits))
        else:
            assert "limits" not in row


@given(robots(max_links=5))
@FAST
def test_dict_round_trip(robot):
    data = robot_to_dict(robot)
    assert tomllib.loads(tomli_w.dumps(data)) == data  # plain TOML-able data
    back = robot_from_dict(data)
    if robot.angle_unit == "rad":
        assert back == robot
    else:
        for x, y in zip(_floats_of(back), _floats_of(robot)):
            assert ulps_apart(x, y) <= 1 or abs(x - y) < 1e-320


def test_degrees_typed_by_hand_are_written_back_unchanged(tmp_path):
    robot = load_robot(write(tmp_path, VALID_TEXT))
    doc = tomllib.loads(robot_to_toml(robot))
    for row, orig in zip(doc["link"], base_doc()["link"]):
        assert (row["alpha"], row["theta"], row["limits"]) == \
               (orig["alpha"], orig["theta"], orig["limits"])
    assert robot_to_dict(robot)["link"][1]["theta"] == 30.0


def test_robot_from_toml_source_name():
    with pytest.raises(RobotFileError) as info:
        robot_from_toml("format = 1", source="<clipboard>")
    assert info.value.path == "<clipboard>"
    with pytest.raises(RobotFileError):
        robot_from_toml(b"format = 1")
    assert robot_from_toml(VALID_TEXT).n == 3


# ======================================================================================
# Fuzzing: only RobotFileError, or a valid Robot
# ======================================================================================

def check_load(path):
    try:
        robot = load_robot(path)
    except RobotFileError as e:
        assert e.path == str(path)
        return None
    assert isinstance(robot, Robot)
    validate_robot(robot)
    assert all(math.isfinite(x) for x in _floats_of(robot))
    return robot


@given(st.binary(max_size=3000))
@FAST
def test_fuzz_random_bytes(tmp_path, data):
    check_load(write(tmp_path, data))


@given(st.text(max_size=500))
@FAST
def test_fuzz_random_text(tmp_path, text):
    check_load(write(tmp_path, text))


def test_fuzz_every_truncation(tmp_path):
    data = VALID_TEXT.encode()
    loaded = 0
    for cut in range(len(data)):
        loaded += check_load(write(tmp_path, data[:cut])) is not None
    assert loaded > 0  # cuts after the first complete link give a smaller robot


TOKEN = re.compile(r'"[^"\n]*"|[A-Za-z_][A-Za-z0-9_]*|[-+]?[0-9][0-9._eE+-]*|\s+|.', re.S)
NASTY = ["nan", "-nan", "inf", "-inf", "1e308", "1e999", "-1e-999", "1e99999999999999999999",
         "0", "-0.0", "true", "false", '"x"', '""', "[", "]", "{", "}", "=", ",", "\n", "[[link]]",
         "[link]", "0x1F", "1979-05-27", "07:32:00", "'lit'", '"""', "9" * 5000, "1" * 30,
         "mass", "inertia", "xx", "limits", "#", "\\", "\x00", "é", "[1, 2]", "{ xx = 1 }"]


@given(st.data())
@fast(150, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_fuzz_token_mutations(tmp_path, data):
    tokens = TOKEN.findall(VALID_TEXT)
    assert "".join(tokens) == VALID_TEXT
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(tokens) - 1))
        op = data.draw(st.sampled_from(["replace", "insert", "delete"]))
        new = data.draw(st.sampled_from(NASTY) | st.text(max_size=5))
        if op == "replace":
            tokens[i] = new
        elif op == "insert":
            tokens.insert(i, new)
        else:
            del tokens[i]
    check_load(write(tmp_path, "".join(tokens)))


toml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (st.lists(inner, max_size=4)
                   | st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20)


@given(st.dictionaries(st.sampled_from(["format", "name", "angle_unit", "gravity", "link", "x"]),
                       toml_values, max_size=6), st.lists(toml_values, max_size=3))
@FAST
def test_fuzz_robot_from_dict(data, link_rows):
    data = dict(data)
    if link_rows:
        data["link"] = link_rows
    try:
        robot = robot_from_dict(data, source="<fuzz>")
    except RobotFileError as e:
        assert e.path == "<fuzz>"
    else:
        validate_robot(robot)


@given(st.sampled_from(["a", "b", "alpha", "theta", "mass"]),
       st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 1e13, 5e-324, 1e200]))
@FAST
def test_fuzz_extreme_numbers(tmp_path, key, value):
    doc = base_doc()
    doc["link"][0][key] = value
    robot = check_load(write(tmp_path, doc))
    if robot is not None:
        assert abs(getattr(robot.links[0], key)) <= 1e12


# ======================================================================================
# Atomic save
# ======================================================================================

@pytest.fixture
def robot():
    return robot_from_toml(VALID_TEXT)


def other_robot(robot):
    return robot.with_links(robot.links[:1])


@pytest.mark.parametrize("where", ["replace", "fsync", "write"])
def test_failed_save_keeps_original_and_leaves_no_temp(tmp_path, monkeypatch, robot, where):
    target = write(tmp_path, VALID_TEXT)
    before = target.read_bytes()

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    if where == "write":
        # the temporary file is created, but opened read-only, so writing to it fails
        real_open = os.open

        def read_only_open(path, flags, *args, **kwargs):
            return real_open(path, flags & ~(os.O_WRONLY | os.O_RDWR), *args, **kwargs)
        monkeypatch.setattr(os, "open", read_only_open)
    else:
        monkeypatch.setattr(os, where, fail)
    with pytest.raises(RobotFileError) as info:
        save_robot(other_robot(robot), target)
    monkeypatch.undo()
    assert str(target) in str(info.value) and "cannot write" in info.value.reason
    if where != "write":
        assert "No space left" in info.value.reason
    assert target.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["robot.toml"]


def test_interrupted_save_keeps_original(tmp_path, monkeypatch, robot):
    target = write(tmp_path, VALID_TEXT)
    before = target.read_bytes()

    def interrupt(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        save_robot(other_robot(robot), target)
    monkeypatch.undo()
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["robot.toml"]


def test_save_replaces_and_keeps_permissions(tmp_path, robot):
    target = write(tmp_path, "old contents")
    target.chmod(0o640)
    save_robot(robot, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert load_robot(target) == robot
    assert os.listdir(tmp_path) == ["robot.toml"]


def test_new_file_gets_ordinary_permissions(tmp_path, robot):
    umask = os.umask(0o022)
    os.umask(umask)
    target = tmp_path / "new.toml"
    save_robot(robot, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_save_through_symlink_updates_target(tmp_path, robot):
    real = write(tmp_path, VALID_TEXT, name="real.toml")
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    small = other_robot(robot)
    save_robot(small, link)
    assert link.is_symlink() and load_robot(real) == small


def test_save_errors(tmp_path, robot):
    with pytest.raises(RobotFileError):
        save_robot(robot, tmp_path / "no" / "such" / "dir.toml")
    (tmp_path / "adir").mkdir()
    with pytest.raises(RobotFileError):
        save_robot(robot, tmp_path / "adir")
    assert os.listdir(tmp_path) == ["adir"] and os.listdir(tmp_path / "adir") == []
    with pytest.raises(TypeError):
        save_robot("not a robot", tmp_path / "x.toml")
    with pytest.raises(RobotFileError):
        save_robot(robot, 7)


def test_unwritable_string_is_refused_before_touching_disk(tmp_path, robot):
    bad = robot.with_links([robot.links[0], Link(**{**robot.links[1].__dict__, "name": "x\ud800"})])
    target = tmp_path / "bad.toml"
    with pytest.raises(RobotFileError) as info:
        save_robot(bad, target)
    assert info.value.link == 2 and info.value.field == "name"
    assert os.listdir(tmp_path) == []
