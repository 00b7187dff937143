"""Mechanism files: the format of docs/mechanism-file.md, errors, round trips, fuzzing,
robot files read as mechanisms, atomic save.

Expected values are derived here independently (tomllib, math.radians, tomli_w for
writing test files, core.io.robot_file / Mechanism.from_robot for robot files), never
copied from core.io.mechanism_file's output.
"""
from __future__ import annotations

import glob
import math
import os
import re
import stat
import time
import tomllib
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
import tomli_w
from hypothesis import HealthCheck, assume, given
from hypothesis import strategies as st

from armdyn.core import forward_dynamics, inverse_dynamics
from armdyn.core import MechanismError, MechanismFileError, RobotFileError
from armdyn.core import Assembly, Chain, LoopJointType, Mechanism, Placement
from armdyn.core.io.mechanism_file import MAX_LOOPS, mechanism_from_toml, mechanism_to_toml
from armdyn.core import load_mechanism, save_mechanism
from armdyn.core import loop_residual
from armdyn.core import JointType, Link, Robot
from armdyn.core import load_robot, save_robot
from armdyn.core.io.robot_file import robot_from_toml
from armdyn.core.io.toml_io import MAX_FILE_BYTES
from armdyn.core.model.units import deg_to_rad
from strategies import LINK_CASES as ROBOT_LINK_CASES
from strategies import TOP_CASES as ROBOT_TOP_CASES
from strategies import VALID_TEXT as ROBOT_TEXT
from strategies import assert_close, fast, gravities, random_link, robots_and_states, seeds

FAST = fast(40)
ROBOTS = Path(__file__).resolve().parent.parent / "robots"

# A tree in the documented layout: the first chain starts on a link of a chain written
# after it, a base placement with rpy, a prismatic joint with limits, actuated flags.
TREE_TEXT = """\
format = "armdyn-mechanism/1"
name = "Test tree"
description = "Three chains; numbers made up for the tests."
angle_unit = "deg"
gravity = [0.0, 0.0, -9.81]

[[chain]]
name = "left arm"
parent = "chest"
base = { xyz = [0.0, 0.2, 0.1], rpy = [-90.0, 0.0, 30.0] }

[[chain.link]]
name = "left shoulder"
joint = "revolute"
a = 0.3
b = 0.0
alpha = 0.0
theta = 45.0
mass = 2.0
com = [-0.15, 0.0, 0.0]
inertia = { xx = 0.002, yy = 0.015, zz = 0.015 }
limits = [-90.0, 90.0]
actuated = true

[[chain.link]]
name = "left elbow"
joint = "revolute"
a = 0.25
b = 0.0
alpha = 90.0
theta = -20.0
mass = 1.5
com = [-0.12, 0.0, 0.01]
inertia = { xx = 0.001, yy = 0.008, zz = 0.008, xy = 0.0001 }

[[chain]]
name = "torso"
base = { xyz = [0.0, 0.0, 0.8] }

[[chain.link]]
name = "hip"
joint = "revolute"
a = 0.0
b = 0.1
alpha = -90.0
theta = 10.0
mass = 8.0
com = [0.0, 0.0, -0.05]
inertia = { xx = 0.1, yy = 0.1, zz = 0.05 }
actuated = false

[[chain.link]]
name = "chest"
joint = "prismatic"
a = 0.0
b = 0.05
alpha = 90.0
theta = 0.0
mass = 12.0
com = [0.0, 0.1, 0.0]
inertia = { xx = 0.3, yy = 0.2, zz = 0.25 }
limits = [0.0, 0.2]

[[chain]]
name = "head"
parent = "chest"

[[chain.link]]
name = "neck"
joint = "revolute"
a = 0.05
b = 0.1
alpha = 0.0
theta = 0.0
mass = 3.0
com = [0.0, 0.0, 0.05]
inertia = { xx = 0.02, yy = 0.02, zz = 0.015 }

[assembly]
tolerance = 1e-9
"""

# The planar four-bar of the format's example: the file's joint values are a guess
# off the closed pose by about 0.02 deg.
FOURBAR_TEXT = """\
format = "armdyn-mechanism/1"
name = "Four-bar FB-1"
description = "Crank-rocker of uniform rods; home = closed pose at crank 60 deg."
angle_unit = "deg"
gravity = [0.0, -9.81, 0.0]

[[chain]]
name = "crank side"
base = { xyz = [0.0, 0.0, 0.0], rpy = [0.0, 0.0, 0.0] }

[[chain.link]]
name = "crank"
joint = "revolute"
a = 0.2
b = 0.0
alpha = 0.0
theta = 60.0
mass = 1.0
com = [-0.1, 0.0, 0.0]
inertia = { xx = 5.0e-5, yy = 0.0033583, zz = 0.0033583 }
actuated = true

[[chain.link]]
name = "coupler"
joint = "revolute"
a = 0.5
b = 0.0
alpha = 0.0
theta = -34.7
mass = 2.0
com = [-0.25, 0.0, 0.0]
inertia = { xx = 1.0e-4, yy = 0.0417167, zz = 0.0417167 }

[[chain]]
name = "rocker side"
base = { xyz = [0.45, 0.0, 0.0] }

[[chain.link]]
name = "rocker"
joint = "revolute"
a = 0.4
b = 0.0
alpha = 0.0
theta = 75.2
mass = 1.5
com = [-0.2, 0.0, 0.0]
inertia = { xx = 7.5e-5, yy = 0.0200375, zz = 0.0200375 }

[[loop]]
name = "C"
joint = "revolute"
links = ["coupler", "rocker"]

[assembly]
independent = ["crank"]
tolerance = 1e-10
"""


def write(tmp_path, content, name="mech.toml"):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    elif isinstance(content, dict):
        p.write_text(tomli_w.dumps(content), encoding="utf-8")
    else:
        p.write_text(content, encoding="utf-8")
    return p


def tree_doc():
    return tomllib.loads(TREE_TEXT)


def fourbar_doc():
    return tomllib.loads(FOURBAR_TEXT)


def ulps_apart(x: float, y: float) -> float:
    if x == y:
        return 0.0
    return abs(x - y) / math.ulp(max(abs(x), abs(y)))


def closed_fourbar_thetas(doc) -> tuple[float, float]:
    """Coupler (relative) and rocker angles, rad, of the closed four-bar at the file's
    crank angle, open branch: circle intersection, computed here independently."""
    links = {l["name"]: l for c in doc["chain"] for l in c["link"]}
    l1, l2, l3 = links["crank"]["a"], links["coupler"]["a"], links["rocker"]["a"]
    ground = doc["chain"][1]["base"]["xyz"][0]
    t1 = math.radians(links["crank"]["theta"])
    B = np.array([l1 * math.cos(t1), l1 * math.sin(t1)])
    D = np.array([ground, 0.0])
    d = float(np.linalg.norm(D - B))
    x = (l2 ** 2 - l3 ** 2 + d ** 2) / (2 * d)
    h = math.sqrt(l2 ** 2 - x ** 2)
    u = (D - B) / d
    C = B + x * u + h * np.array([-u[1], u[0]])  # the pin above the line B-D
    t_coupler = math.atan2(C[1] - B[1], C[0] - B[0]) - t1
    t_rocker = math.atan2(C[1] - D[1], C[0] - D[0])
    return t_coupler, t_rocker


# ======================================================================================
# Reading the documented format
# ======================================================================================

def test_tree_file_reads_as_written(tmp_path):
    mech = load_mechanism(write(tmp_path, TREE_TEXT))
    doc = tree_doc()
    assert isinstance(mech, Mechanism)
    assert mech.name == doc["name"] and mech.description == doc["description"]
    assert mech.angle_unit == "deg" and mech.gravity == (0.0, 0.0, -9.81)
    assert [c.name for c in mech.chains] == ["left arm", "torso", "head"]
    assert [c.parent for c in mech.chains] == ["chest", None, "chest"]
    # joint order: chains in file order, links in order (a parent written later is fine)
    assert mech.joint_names == ("left shoulder", "left elbow", "hip", "chest", "neck")
    assert mech.n == 5 and mech.dof == 5 and mech.loops == ()
    assert mech.actuated == (0, 1, 2, 3, 4)  # no loops: every joint is actuated
    assert [l.actuated for l in mech.links] == [True, False, False, False, False]
    rows = [row for chain in doc["chain"] for row in chain["link"]]
    for link, row in zip(mech.links, rows):
        assert link.name == row["name"] and link.joint.value == row["joint"]
        assert link.a == row["a"] and link.b == row["b"] and link.mass == row["mass"]
        assert ulps_apart(link.alpha, math.radians(row["alpha"])) <= 1
        assert ulps_apart(link.theta, math.radians(row["theta"])) <= 1
        assert link.com == tuple(row["com"])
        keys = ("xx", "yy", "zz", "xy", "xz", "yz")
        assert link.inertia == tuple(row["inertia"].get(k, 0.0) for k in keys)
        if "limits" not in row:
            assert link.limits is None
        elif link.joint is JointType.REVOLUTE:
            assert all(ulps_apart(v, math.radians(w)) <= 1
                       for v, w in zip(link.limits, row["limits"]))
        else:  # prismatic limits are lengths: not converted
            assert link.limits == tuple(row["limits"])
    # base placements: xyz in m, rpy in the file's angle unit
    arm, torso, head = mech.chains
    assert arm.base.xyz == (0.0, 0.2, 0.1)
    assert arm.base.rpy[0] == -math.pi / 2 and arm.base.rpy[1] == 0.0
    assert ulps_apart(arm.base.rpy[2], math.radians(30.0)) <= 1
    assert torso.base == Placement(xyz=(0.0, 0.0, 0.8))
    assert head.base == Placement()
    assert mech.assembly == Assembly(independent=None, tolerance=1e-9)
    assert mech.warnings == ()


def test_defaults_and_integers(tmp_path):
    text = """\
format = "armdyn-mechanism/1"
name = "minimal"

[[chain]]
name = "only"

[[chain.link]]
name = "one"
joint = "revolute"
a = 1
b = 0
alpha = 90
theta = 0
mass = 2
com = [0, 0, 0]
inertia = { xx = 1, yy = 1, zz = 1 }
"""
    mech = load_mechanism(write(tmp_path, text))
    assert mech.angle_unit == "deg" and mech.gravity == (0.0, 0.0, -9.81)
    assert mech.description == "" and mech.loops == () and mech.assembly == Assembly()
    chain = mech.chains[0]
    assert chain.parent is None and chain.base == Placement()
    link = chain.links[0]
    assert link.actuated is False and link.limits is None
    assert link.alpha == math.pi / 2 and isinstance(link.a, float)
    assert link.inertia == (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)


def test_radian_files_are_not_converted(tmp_path):
    doc = tree_doc()
    doc["angle_unit"] = "rad"
    doc["chain"][0]["base"]["rpy"] = [0.5, -0.25, 3.0]
    doc["chain"][0]["link"][0]["limits"] = [-1.5, 1.25]
    mech = load_mechanism(write(tmp_path, doc))
    assert mech.chains[0].base.rpy == (0.5, -0.25, 3.0)
    rows = [row for chain in doc["chain"] for row in chain["link"]]
    for link, row in zip(mech.links, rows):
        assert (link.alpha, link.theta) == (row["alpha"], row["theta"])
    assert mech.links[0].limits == (-1.5, 1.25)


@given(st.floats(-1e6, 1e6, allow_nan=False))
@FAST
def test_rpy_degrees_convert_to_nearest_radians(tmp_path, deg):
    doc = tree_doc()
    doc["chain"][0]["base"]["rpy"] = [deg, 0.0, -deg]
    mech = load_mechanism(write(tmp_path, doc))
    r, _, y = mech.chains[0].base.rpy
    assert ulps_apart(r, math.radians(deg)) <= 1 and ulps_apart(y, -math.radians(deg)) <= 1


def test_bom_is_tolerated(tmp_path):
    assert load_mechanism(write(tmp_path, b"\xef\xbb\xbf" + TREE_TEXT.encode())).n == 5


def test_long_link_gives_warning_not_error(tmp_path):
    doc = tree_doc()
    doc["chain"][1]["link"][0]["a"] = 12.0
    mech = load_mechanism(write(tmp_path, doc))
    assert len(mech.warnings) == 1 and "a = 12" in mech.warnings[0]


def test_mechanism_from_toml_source_name():
    with pytest.raises(MechanismFileError) as info:
        mechanism_from_toml("format = 1", source="<clipboard>")
    assert info.value.path == "<clipboard>" and "<clipboard>" in str(info.value)
    with pytest.raises(MechanismFileError):
        mechanism_from_toml(b"format = 1")
    assert mechanism_from_toml(TREE_TEXT).n == 5


# ======================================================================================
# Loops: closing on load, warnings, saving the closed values
# ======================================================================================

def test_four_bar_is_closed_on_load(tmp_path):
    doc = fourbar_doc()
    mech = load_mechanism(write(tmp_path, FOURBAR_TEXT))
    assert mech.n == 3 and mech.dof == 1 and mech.actuated == (0,)
    assert mech.joint_names == ("crank", "coupler", "rocker")
    assert [l.name for l in mech.loops] == ["C"]
    loop = mech.loops[0]
    assert loop.joint is LoopJointType.REVOLUTE and loop.links == ("coupler", "rocker")
    assert loop.at == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))         # default: the frame origins
    assert loop.axis == ((0.0, 0.0, 1.0), (0.0, 0.0, 1.0))       # default: z
    assert mech.assembly == Assembly(independent=("crank",), tolerance=1e-10)
    # the independent joint is held, the others moved to the closed pose
    assert ulps_apart(mech.links[0].theta, math.pi / 3) <= 4
    t_coupler, t_rocker = closed_fourbar_thetas(doc)
    assert abs(mech.links[1].theta - t_coupler) < 1e-9
    assert abs(mech.links[2].theta - t_rocker) < 1e-9
    assert np.max(np.abs(loop_residual(mech, mech.q_home))) <= 1e-10
    # the file's values were off by about 0.02 deg: the move is reported
    assert mech.warnings and any("coupler" in w or "rocker" in w for w in mech.warnings)


def test_independent_joint_is_held_exactly():
    mech = mechanism_from_toml(FOURBAR_TEXT)
    assert mech.links[0].theta == deg_to_rad(Decimal("60.0"))  # the file's value, exactly


def test_saving_writes_the_closed_values(tmp_path):
    mech = load_mechanism(write(tmp_path, FOURBAR_TEXT))
    p = tmp_path / "closed.toml"
    save_mechanism(mech, p)
    doc = tomllib.loads(p.read_text(encoding="utf-8"))
    rows = [row for chain in doc["chain"] for row in chain["link"]]
    t_coupler, t_rocker = closed_fourbar_thetas(fourbar_doc())
    assert abs(rows[0]["theta"] - 60.0) < 1e-12  # held
    assert rows[1]["theta"] != -34.7 and abs(math.radians(rows[1]["theta"]) - t_coupler) < 1e-9
    assert abs(math.radians(rows[2]["theta"]) - t_rocker) < 1e-9
    again = load_mechanism(p)
    assert again == mech and again.warnings == ()  # closed already: nothing moves


@pytest.mark.parametrize("text", ["fourbar", "moved"])
def test_closing_a_closed_pose_changes_nothing(text):
    # what makes load(save(m)) == m hold for loops: building a mechanism whose joint
    # values are closed already (within the tolerance) keeps them bit for bit
    mech = mechanism_from_toml(FOURBAR_TEXT)
    if text == "moved":
        mech = mech.with_q(mech.q_home + np.array([0.3, 0.0, 0.0]))
    again = mech.with_q(mech.q_home)
    assert [float(v).hex() for v in again.q_home] == [float(v).hex() for v in mech.q_home]
    assert again.warnings == ()


def test_loop_fields_as_written(tmp_path):
    doc = fourbar_doc()
    doc["loop"][0]["joint"] = "spherical"
    doc["loop"][0]["at"] = [[0.0, 0.0, 0.0], [0, 0, 0]]
    doc["loop"][0]["axis"] = [[0.0, 0.0, 2.0], [0, 0, 1]]
    mech = load_mechanism(write(tmp_path, doc))
    loop = mech.loops[0]
    assert loop.joint is LoopJointType.SPHERICAL
    assert loop.axis == ((0.0, 0.0, 2.0), (0.0, 0.0, 1.0))
    assert all(isinstance(v, float) for p in loop.at + loop.axis for v in p)


def test_loop_to_the_base(tmp_path):
    # the same four-bar as one serial chain crank - coupler - rocker whose far end is
    # pinned to the base at the rocker's pivot (0.45, 0, 0)
    doc = fourbar_doc()
    t_coupler, t_rocker = closed_fourbar_thetas(doc)
    t1 = math.radians(60.0)
    rocker = dict(doc["chain"][1]["link"][0])
    # the rocker now runs from the coupler's end to the ground pivot: theta relative to
    # the coupler, pointing the other way (pi + t_rocker in the base frame)
    rocker["theta"] = math.degrees(math.pi + t_rocker - (t1 + t_coupler))
    rocker["com"] = [-0.2, 0.0, 0.0]
    doc["chain"] = doc["chain"][:1]
    doc["chain"][0]["link"].append(rocker)
    doc["loop"][0]["links"] = ["rocker", "base"]
    doc["loop"][0]["at"] = [[0.0, 0.0, 0.0], [0.45, 0.0, 0.0]]
    mech = load_mechanism(write(tmp_path, doc))
    assert mech.n == 3 and mech.dof == 1 and mech.loops[0].links == ("rocker", "base")
    assert abs(mech.links[1].theta - t_coupler) < 1e-9
    assert load_mechanism(save_and_path(tmp_path, mech)) == mech


def save_and_path(tmp_path, mech, name="saved.toml"):
    p = tmp_path / name
    save_mechanism(mech, p)
    return p


# ======================================================================================
# Robot files read as mechanisms
# ======================================================================================

ROBOT_FILES = sorted(p for p in glob.glob(str(ROBOTS / "*.toml"))
                     if re.search(r'^format\s*=\s*"armdyn-robot/1"', Path(p).read_text("utf-8"),
                                  re.M))


def test_there_are_robot_files_to_test():
    assert len(ROBOT_FILES) >= 3


@pytest.mark.parametrize("path", ROBOT_FILES, ids=[Path(p).stem for p in ROBOT_FILES])
def test_robot_file_loads_as_its_one_chain_mechanism(path):
    robot = load_robot(path)
    expected = Mechanism.from_robot(robot)
    mech = load_mechanism(path)
    assert mech == expected
    assert mech.n == robot.n and mech.dof == robot.n and mech.loops == ()
    # names a mechanism cannot hold twice, or "base", get " (link i)" appended
    for i, (joint, link) in enumerate(zip(mech.joint_names, robot.link_names), start=1):
        assert joint == link or (joint == f"{link} (link {i})".strip()
                                 and (link == "base" or robot.link_names.count(link) > 1))
    assert mech.actuated == tuple(range(robot.n))
    assert np.array_equal(mech.q_home, robot.q_home)
    # the same dynamics
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = robot.q_home + rng.uniform(-1.0, 1.0, robot.n)
        qd, qdd = rng.uniform(-2.0, 2.0, robot.n), rng.uniform(-3.0, 3.0, robot.n)
        tau_robot = inverse_dynamics(robot, q, qd, qdd)
        tau_mech = inverse_dynamics(mech, q, qd, qdd)
        assert_close(tau_mech, tau_robot, 1e-12, what="inverse dynamics")


def test_unnamed_robot_links_get_default_names(tmp_path):
    text = re.sub(r'^name = "(waist|slide)"\n', "", ROBOT_TEXT, flags=re.M)
    mech = load_mechanism(write(tmp_path, text))
    assert mech.joint_names == ("link 1", "shoulder", "link 3")
    assert mech == Mechanism.from_robot(robot_from_toml(text))


@given(st.data())
@fast(15, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_robot_same_dynamics_as_mechanism(tmp_path, data):
    robot, q, qd, qdd = data.draw(robots_and_states(max_links=12))
    robot = replace(robot, links=tuple(replace(l, name=f"j{i}") for i, l in enumerate(robot.links)))
    p = tmp_path / "r.toml"
    save_robot(robot, p)
    mech = load_mechanism(p)
    tau = inverse_dynamics(load_robot(p), q, qd, qdd)
    assert_close(inverse_dynamics(mech, q, qd, qdd), tau, 1e-12, what="inverse dynamics")


ROBOT_ERROR_CASES = [c for c in ROBOT_LINK_CASES + ROBOT_TOP_CASES if c[1] != "format"]


@pytest.mark.parametrize("mutation,field,words", ROBOT_ERROR_CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(ROBOT_ERROR_CASES)])
def test_robot_file_errors_are_the_robot_readers(tmp_path, mutation, field, words):
    doc = tomllib.loads(ROBOT_TEXT)
    mutation(doc)
    p = write(tmp_path, doc)
    with pytest.raises(RobotFileError) as want:
        load_robot(p)
    err = load_error(tmp_path, doc)
    assert (err.reason, err.link, err.link_name, err.field) == \
        (want.value.reason, want.value.link, want.value.link_name, want.value.field)
    assert err.chain is None and err.loop is None and str(err) == str(want.value)


def test_robot_file_syntax_error_is_the_robot_readers(tmp_path):
    text = ROBOT_TEXT.replace("mass = 17.4", "mass = = 17.4")
    p = write(tmp_path, text)
    with pytest.raises(RobotFileError) as want:
        load_robot(p)
    err = load_error(tmp_path, text)
    assert str(err) == str(want.value) and err.link == 2 and err.field == "mass"


def test_robot_file_with_duplicate_link_names_still_loads(tmp_path):
    # a valid robot file keeps loading: the repeated name becomes unique in the mechanism
    text = ROBOT_TEXT.replace('name = "slide"', 'name = "waist"')
    assert robot_from_toml(text).n == 3
    mech = load_mechanism(write(tmp_path, text))
    assert mech.joint_names[0] == "waist" and mech.joint_names[2] == "waist (link 3)"


# ======================================================================================
# Errors: every rule, each message names the file, chain / loop / link and field
# ======================================================================================

def load_error(tmp_path, content) -> MechanismFileError:
    p = write(tmp_path, content)
    result = None
    with pytest.raises(MechanismFileError) as info:
        result = load_mechanism(p)
    assert result is None  # nothing half-loaded
    err = info.value
    assert isinstance(err, RobotFileError)
    assert err.path == str(p) and str(err).startswith(f"{p}: ")
    return err


def assert_names(err, *, field, chain=None, loop=None, link=None, link_name=""):
    text = str(err)
    assert err.field == field, text
    assert f"field '{field}'" in text, text
    assert err.chain == chain, text
    if chain is not None:
        assert f"chain {chain!r}" in text, text
    assert err.loop == loop, text
    if loop is not None:
        assert f"loop {loop!r}" in text, text
    assert err.link == link, text
    if link is not None:
        assert f"link {link}" in text, text
        assert err.link_name == link_name, text
        if link_name:
            assert repr(link_name) in text, text


DELETE = object()


def at(*path):
    """A mutation setting (or deleting) doc[path[0]][path[1]]... = value."""
    def make(value):
        def f(doc):
            d = doc
            for k in path[:-1]:
                d = d[k]
            if value is DELETE:
                del d[path[-1]]
            else:
                d[path[-1]] = value
        return f
    return make


def both(*mutations):
    def f(doc):
        for m in mutations:
            m(doc)
    return f


TRIANGLE = {"xx": 1.0, "yy": 1.0, "zz": 3.0}

# (mutation, where (chain, loop, link, link_name), field, words in the reason)
TREE_CASES = [
    # top level
    (at("format")(DELETE), {}, "format", ["missing", "armdyn-mechanism/1"]),
    (at("format")("armdyn-mechanism/3"), {}, "format", ["unknown", "armdyn-mechanism/2"]),
    (at("format")(1), {}, "format", ["expected"]),
    (at("name")(DELETE), {}, "name", ["missing"]),
    (at("name")(" "), {}, "name", ["non-empty"]),
    (at("description")(3), {}, "description", ["expected", "string"]),
    (at("angle_unit")("degrees"), {}, "angle_unit", ['"deg"', '"rad"']),
    (at("gravity")([0.0, -9.81]), {}, "gravity", ["3"]),
    (at("gravity")([0.0, 0.0, math.nan]), {}, "gravity", ["finite"]),
    (at("gravty")([0.0, 0.0, -9.81]), {}, "gravty", ["unknown", "did you mean 'gravity'"]),
    (at("loops")([]), {}, "loops", ["unknown", "did you mean 'loop'"]),
    (at("chain")(DELETE), {}, "chain", ["[[chain]]", "none"]),
    (at("chain")([]), {}, "chain", ["at least one"]),
    (at("chain")(3), {}, "chain", ["[[chain]]"]),
    (both(at("link")([{"name": "x"}]), at("chain")(DELETE)), {}, "link", ["[[chain.link]]"]),
    (at("link")([{"name": "x"}]), {}, "link", ["unknown"]),
    (at("loop")(3), {}, "loop", ["[[loop]]"]),
    (at("loop")([3]), {}, "loop", ["[[loop]]", "loop number 1"]),
    # chains
    (at("chain", 1, "name")(DELETE), {}, "name", ["missing", "[[chain]] number 2"]),
    (at("chain", 1, "name")(5), {}, "name", ["expected", "[[chain]] number 2"]),
    (at("chain", 1, "name")(""), {}, "name", ["non-empty", "[[chain]] number 2"]),
    (at("chain", 2, "name")("left arm"), {"chain": "left arm"}, "name", ["duplicate"]),
    (at("chain", 0, "parnet")("hip"), {"chain": "left arm"}, "parnet",
     ["unknown", "did you mean 'parent'"]),
    (at("chain", 0, "parent")("chset"), {"chain": "left arm"}, "parent",
     ["'chset'", "not a link"]),
    (at("chain", 0, "parent")(3), {"chain": "left arm"}, "parent", ["expected", "string"]),
    (at("chain", 2, "parent")("neck"), {"chain": "head"}, "parent", ["own"]),
    (at("chain", 0, "base")([0.0, 0.0, 0.0]), {"chain": "left arm"}, "base",
     ["expected", "table"]),
    (at("chain", 0, "base", "xyz")([0.0, 0.2]), {"chain": "left arm"}, "base.xyz",
     ["3", "2 items"]),
    (at("chain", 0, "base", "xyz")([0.0, math.inf, 0.0]), {"chain": "left arm"}, "base.xyz",
     ["finite"]),
    (at("chain", 0, "base", "rpy")([0.0, math.nan, 0.0]), {"chain": "left arm"}, "base.rpy",
     ["finite"]),
    (at("chain", 0, "base", "rpy")("x"), {"chain": "left arm"}, "base.rpy", ["expected"]),
    (at("chain", 0, "base", "rpy")([0.0, 1e300, 0.0]), {"chain": "left arm"}, "base.rpy",
     ["range"]),
    (at("chain", 0, "base", "xzy")([0.0, 0.0, 0.0]), {"chain": "left arm"}, "base.xzy",
     ["unknown", "did you mean 'xyz'"]),
    (at("chain", 1, "link")(DELETE), {"chain": "torso"}, "link", ["[[chain.link]]", "none"]),
    (at("chain", 1, "link")([]), {"chain": "torso"}, "link", ["at least one"]),
    (at("chain", 1, "link")({"name": "x"}), {"chain": "torso"}, "link", ["double brackets"]),
    (at("chain", 1, "link")([3]), {"chain": "torso", "link": 1}, "link",
     ["[[chain.link]]"]),
    # links
    (at("chain", 0, "link", 1, "name")(DELETE), {"chain": "left arm", "link": 2}, "name",
     ["missing"]),
    (at("chain", 0, "link", 1, "name")(4), {"chain": "left arm", "link": 2}, "name",
     ["expected", "string"]),
    (at("chain", 1, "link", 0, "name")("left elbow"),
     {"chain": "torso", "link": 1, "link_name": "left elbow"}, "name", ["duplicate"]),
    (at("chain", 1, "link", 0, "name")("base"),
     {"chain": "torso", "link": 1, "link_name": "base"}, "name", ["reserved"]),
    (at("chain", 1, "link", 0, "name")(""), {"chain": "torso", "link": 1}, "name", ["name"]),
    (at("chain", 0, "link", 1, "actuated")("yes"),
     {"chain": "left arm", "link": 2, "link_name": "left elbow"}, "actuated",
     ["true or false"]),
    (at("chain", 0, "link", 1, "actuated")(1),
     {"chain": "left arm", "link": 2, "link_name": "left elbow"}, "actuated",
     ["true or false"]),
    (at("chain", 0, "link", 1, "actuatd")(True),
     {"chain": "left arm", "link": 2, "link_name": "left elbow"}, "actuatd",
     ["unknown", "did you mean 'actuated'"]),
    (at("chain", 1, "link", 1, "joint")("spherical"),
     {"chain": "torso", "link": 2, "link_name": "chest"}, "joint", ["revolute", "prismatic"]),
    (at("chain", 1, "link", 1, "mass")(-1.0),
     {"chain": "torso", "link": 2, "link_name": "chest"}, "mass", ["> 0"]),
    (at("chain", 1, "link", 1, "mass")(DELETE),
     {"chain": "torso", "link": 2, "link_name": "chest"}, "mass", ["missing"]),
    (at("chain", 1, "link", 1, "theta")(math.inf),
     {"chain": "torso", "link": 2, "link_name": "chest"}, "theta", ["finite"]),
    (at("chain", 1, "link", 1, "com")([0.0, 0.0]),
     {"chain": "torso", "link": 2, "link_name": "chest"}, "com", ["3", "2 items"]),
    (at("chain", 1, "link", 1, "inertia")(TRIANGLE),
     {"chain": "torso", "link": 2, "link_name": "chest"}, "inertia", ["triangle"]),
    (at("chain", 1, "link", 1, "inertia", "xy")(math.nan),
     {"chain": "torso", "link": 2, "link_name": "chest"}, "inertia.xy", ["finite"]),
    (at("chain", 0, "link", 0, "limits")([90.0, -90.0]),
     {"chain": "left arm", "link": 1, "link_name": "left shoulder"}, "limits", ["increasing"]),
    # assembly
    (at("assembly", "tolerence")(1e-9), {}, "assembly.tolerence",
     ["unknown", "did you mean 'tolerance'"]),
    (at("assembly", "tolerance")(-1.0), {}, "assembly.tolerance", ["tolerance"]),
    (at("assembly", "tolerance")(0.5), {}, "assembly.tolerance", ["tolerance"]),
    (at("assembly", "tolerance")("small"), {}, "assembly.tolerance", ["expected", "number"]),
    (at("assembly", "independent")("hip"), {}, "assembly.independent", ["expected", "array"]),
    (at("assembly", "independent")(["hpi"]), {}, "assembly.independent",
     ["'hpi'", "not a link"]),
    (at("assembly", "independent")(["hip", "hip"]), {}, "assembly.independent", ["twice"]),
    (at("assembly", "independent")([1]), {}, "assembly.independent", ["expected"]),
    (at("assembly")([{"tolerance": 1e-9}]), {}, "assembly", ["[assembly]"]),
    (at("assembly")(1.0), {}, "assembly", ["[assembly]"]),
]


@pytest.mark.parametrize("mutation,where,field,words", TREE_CASES,
                         ids=[f"{c[2]}-{i}" for i, c in enumerate(TREE_CASES)])
def test_tree_rule_is_enforced_and_named(tmp_path, mutation, where, field, words):
    doc = tree_doc()
    mutation(doc)
    err = load_error(tmp_path, doc)
    assert_names(err, field=field, **where)
    for w in words:
        assert w.lower() in err.reason.lower(), err.reason


def test_parent_cycle_is_refused(tmp_path):
    doc = tree_doc()
    doc["chain"][1]["parent"] = "left elbow"  # torso on the arm, the arm on the torso
    err = load_error(tmp_path, doc)
    assert err.field == "parent" and err.chain in ("left arm", "torso")
    assert "cycle" in err.reason and f"chain {err.chain!r}" in str(err)


LOOP_D = {"name": "D", "joint": "revolute", "links": ["crank", "base"],
          "at": [[0.0, 0.0, 0.0], [0.1, 0.17320508075688773, 0.0]]}

FOURBAR_CASES = [
    (at("loop", 0, "name")(DELETE), {}, "name", ["missing", "[[loop]] number 1"]),
    (at("loop", 0, "name")(["C"]), {}, "name", ["expected", "[[loop]] number 1"]),
    (lambda d: d["loop"].append(dict(d["loop"][0])), {"loop": "C"}, "name", ["duplicate"]),
    (at("loop", 0, "joint")(DELETE), {"loop": "C"}, "joint", ["missing"]),
    (at("loop", 0, "joint")("hinge"), {"loop": "C"}, "joint",
     ['"revolute"', '"spherical"', '"prismatic"']),
    (at("loop", 0, "joint")("revolut"), {"loop": "C"}, "joint", ["did you mean 'revolute'"]),
    (at("loop", 0, "joint")(1), {"loop": "C"}, "joint", ["expected"]),
    (at("loop", 0, "links")(DELETE), {"loop": "C"}, "links", ["missing"]),
    (at("loop", 0, "links")(["coupler"]), {"loop": "C"}, "links", ["two", "1 item"]),
    (at("loop", 0, "links")("coupler"), {"loop": "C"}, "links", ["expected", "array"]),
    (at("loop", 0, "links")(["coupler", 3]), {"loop": "C"}, "links", ["item 2"]),
    (at("loop", 0, "links")(["coupler", "rockr"]), {"loop": "C"}, "links",
     ["'rockr'", "not a link"]),
    (at("loop", 0, "links")(["base", "rocker"]), {"loop": "C"}, "links", ["'base'"]),
    (at("loop", 0, "links")(["rocker", "rocker"]), {"loop": "C"}, "links", ["different"]),
    (at("loop", 0, "at")([[0.0, 0.0, 0.0]]), {"loop": "C"}, "at", ["2", "1 item"]),
    (at("loop", 0, "at")([[0.0, 0.0, 0.0], [0.0, 0.0]]), {"loop": "C"}, "at", ["3", "2 items"]),
    (at("loop", 0, "at")([[0.0, math.nan, 0.0], [0.0, 0.0, 0.0]]), {"loop": "C"}, "at",
     ["finite"]),
    (at("loop", 0, "at")([0.0, 0.0, 0.0]), {"loop": "C"}, "at", ["2", "3 items"]),
    (at("loop", 0, "axis")([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), {"loop": "C"}, "axis",
     ["zero"]),
    (at("loop", 0, "axis")("z"), {"loop": "C"}, "axis", ["expected"]),
    (at("loop", 0, "axis")([[0.0, 0.0, 1.0], [0.0, -math.inf, 1.0]]), {"loop": "C"}, "axis",
     ["finite"]),
    (at("loop", 0, "axes")([[0, 0, 1], [0, 0, 1]]), {"loop": "C"}, "axes",
     ["unknown", "did you mean 'axis'"]),
    (at("loop")({"name": "C"}), {}, "loop", ["double brackets"]),
    # the loop cannot be closed from the given values: name the loop and its residual
    (at("chain", 1, "link", 0, "a")(0.05), {"loop": "C"}, "", ["residual", "closed"]),
    (at("loop", 0, "at")([[0.0, 0.0, 0.1], [0.0, 0.0, 0.0]]), {"loop": "C"}, "",
     ["residual"]),
    # independent joints that do not determine the pose: say which to hold
    (at("assembly", "independent")([]), {}, "assembly.independent",
     ["1 degree", "hold"]),
    (both(at("assembly", "independent")(DELETE),
          at("chain", 0, "link", 0, "actuated")(DELETE)), {}, "actuated",
     ["1 degree", "hold"]),
    # no mobility: a second pin fixes the crank's end to the base
    (lambda d: d["loop"].append(dict(LOOP_D)), {}, "loop", ["no mobility"]),
]


@pytest.mark.parametrize("mutation,where,field,words", FOURBAR_CASES,
                         ids=[f"{c[2] or 'closure'}-{i}" for i, c in enumerate(FOURBAR_CASES)])
def test_loop_rule_is_enforced_and_named(tmp_path, mutation, where, field, words):
    doc = fourbar_doc()
    mutation(doc)
    err = load_error(tmp_path, doc)
    if field:
        assert_names(err, field=field, **where)
    else:
        assert err.loop == where["loop"] and f"loop {where['loop']!r}" in str(err)
    for w in words:
        assert w.lower() in err.reason.lower(), err.reason


def test_residual_is_a_number(tmp_path):
    doc = fourbar_doc()
    doc["chain"][1]["link"][0]["a"] = 0.05
    err = load_error(tmp_path, doc)
    m = re.search(r"residual (\S+)", err.reason)
    assert m and float(m.group(1).rstrip(",;)")) > 0.01  # the rocker misses by about 5 cm


# ----- syntax errors: the line, and the chain, link, loop and key they are in --------

def break_line(text, after, key):
    """`text` with the `key = ...` line that follows the line `after` made invalid."""
    lines = text.splitlines()
    start = lines.index(after)
    i = next(k for k in range(start, len(lines)) if lines[k].startswith(key + " ="))
    lines[i] = lines[i].replace("=", "= =", 1)
    return "\n".join(lines) + "\n", i + 1


def test_syntax_error_in_a_link_names_chain_link_and_key(tmp_path):
    text, line = break_line(TREE_TEXT, 'name = "left elbow"', "mass")
    err = load_error(tmp_path, text)
    assert f"line {line}" in err.reason and "syntax" in err.reason.lower()
    assert_names(err, chain="left arm", link=2, link_name="left elbow", field="mass")


def test_syntax_error_in_a_chain_names_it(tmp_path):
    text, line = break_line(TREE_TEXT, 'name = "torso"', "base")
    err = load_error(tmp_path, text)
    assert f"line {line}" in err.reason
    assert_names(err, chain="torso", field="base")


def test_syntax_error_before_the_chain_name_gives_its_number(tmp_path):
    text = TREE_TEXT.replace('[[chain]]\nname = "torso"', '[[chain]]\nbase = = 1\nname = "torso"')
    err = load_error(tmp_path, text)
    assert err.field == "base" and err.chain is None and "[[chain]] number 2" in err.reason


def test_syntax_error_in_a_loop_names_it(tmp_path):
    text, line = break_line(FOURBAR_TEXT, 'name = "C"', "links")
    err = load_error(tmp_path, text)
    assert f"line {line}" in err.reason
    assert_names(err, loop="C", field="links")


def test_syntax_error_in_assembly(tmp_path):
    text, line = break_line(FOURBAR_TEXT, "[assembly]", "tolerance")
    err = load_error(tmp_path, text)
    assert f"line {line}" in err.reason and err.field == "assembly.tolerance"


def test_duplicate_key_is_refused(tmp_path):
    err = load_error(tmp_path, TREE_TEXT.replace("mass = 12.0", "mass = 12.0\nmass = 1.0"))
    assert err.chain == "torso" and err.link == 2 and "syntax" in err.reason.lower()


# ----- files that are not mechanism files at all ---------------------------------------

@pytest.mark.parametrize("content,words", [
    (b"", ["empty"]),
    (b"   \n\n# only a comment\n", ["empty"]),
    (b"\xff\xfe\x00f\x00o\x00r\x00m", ["utf-8"]),
    (TREE_TEXT.encode().replace(b"Three", b"Thr\xe9e"), ["utf-8", "line 3"]),
    (bytes(range(256)) * 4, []),
    (b"\x00" * 100, []),
    (b"a = " + b"[" * 100_000, []),
    (b"format = \"armdyn-mechanism/1\"\nx = " + b"9" * 5000, []),
    (b"format = \"armdyn-mechanism/1\"\nname = \"x\"\n" + b"k = {" * 3000, []),
    (TREE_TEXT.encode()[:len(TREE_TEXT) // 2], []),
    (b"format = \"armdyn-robot/1\"\nname = \"x\"\n" + b"k = {" * 3000, []),
])
def test_garbage_is_refused_with_mechanismfileerror(tmp_path, content, words):
    err = load_error(tmp_path, content)
    for w in words:
        assert w.lower() in err.reason.lower(), err.reason


def test_missing_file_and_directory(tmp_path):
    missing = tmp_path / "nope.toml"
    with pytest.raises(MechanismFileError) as info:
        load_mechanism(missing)
    assert str(missing) in str(info.value) and "no such file" in info.value.reason
    with pytest.raises(MechanismFileError) as info:
        load_mechanism(tmp_path)
    assert "directory" in str(info.value)
    with pytest.raises(MechanismFileError):
        load_mechanism(str(tmp_path / "bad\0name.toml"))
    with pytest.raises(MechanismFileError):
        load_mechanism(3)  # not a path: must not read file descriptor 3
    with pytest.raises(MechanismFileError):
        load_mechanism(None)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_refused_without_blocking(tmp_path):
    p = tmp_path / "pipe.toml"
    os.mkfifo(p)
    with pytest.raises(MechanismFileError) as info:
        load_mechanism(p)
    assert "regular file" in info.value.reason


def test_oversized_file_fails_fast(tmp_path):
    text = TREE_TEXT + "#" * (MAX_FILE_BYTES + 10)
    t0 = time.perf_counter()
    err = load_error(tmp_path, text)
    assert time.perf_counter() - t0 < 1.0 and "bytes" in err.reason


def test_too_many_links_fails_fast(tmp_path):
    first = TREE_TEXT.index("[[chain.link]]")
    one = TREE_TEXT[first:TREE_TEXT.index("[[chain.link]]", first + 10)]
    # (the names repeat too, but the count is checked before anything else)
    text = TREE_TEXT[:first] + one * 1001
    assert len(text.encode()) < MAX_FILE_BYTES
    t0 = time.perf_counter()
    err = load_error(tmp_path, text)
    assert time.perf_counter() - t0 < 5.0
    assert err.field == "link" and "1000" in err.reason


def test_too_many_loops_fail_fast(tmp_path):
    loop = '\n[[loop]]\nname = "x"\njoint = "revolute"\nlinks = ["coupler", "rocker"]\n'
    err = load_error(tmp_path, FOURBAR_TEXT + loop * (MAX_LOOPS + 1))
    assert err.field == "loop" and str(MAX_LOOPS) in err.reason


def test_model_errors_are_wrapped(tmp_path, monkeypatch):
    # Whatever the model's validation raises arrives with its place.
    import armdyn.core.io.mechanism_file as mf
    def failing(**kwargs):
        raise MechanismError("made-up rule", chain="torso", link=2, link_name="chest",
                             field="theta")
    monkeypatch.setattr(mf, "Mechanism", failing)
    err = load_error(tmp_path, TREE_TEXT)
    assert (err.chain, err.loop, err.link, err.link_name, err.field, err.reason) == \
        ("torso", None, 2, "chest", "theta", "made-up rule")


def test_unexpected_exceptions_are_wrapped(tmp_path, monkeypatch):
    import armdyn.core.io.mechanism_file as mf
    def boom(**kwargs):
        raise ZeroDivisionError("internal bug")
    monkeypatch.setattr(mf, "Mechanism", boom)
    err = load_error(tmp_path, TREE_TEXT)
    assert "ZeroDivisionError" in err.reason


# ======================================================================================
# Round trips
# ======================================================================================

def floats_of(mech):
    """Every float a mechanism holds, in a fixed order."""
    for chain in mech.chains:
        yield from chain.base.xyz
        yield from chain.base.rpy
        for link in chain.links:
            yield from (link.a, link.b, link.alpha, link.theta, link.mass, *link.com,
                        *link.inertia, *(link.limits or ()))
    for loop in mech.loops:
        for v in loop.at + loop.axis:
            yield from v
    yield from mech.gravity
    yield mech.assembly.tolerance


def signed(xs):
    return [(math.copysign(1.0, x), abs(x)) for x in xs]


def assert_round_trip(tmp_path, mech):
    p = tmp_path / "rt.toml"
    save_mechanism(mech, p)
    loaded = load_mechanism(p)
    assert loaded == mech
    assert signed(floats_of(loaded)) == signed(floats_of(mech))  # bit for bit, sign of zero
    assert [l.actuated for l in loaded.links] == [l.actuated for l in mech.links]
    p2 = tmp_path / "rt2.toml"
    save_mechanism(loaded, p2)
    assert p2.read_bytes() == p.read_bytes()  # a fixed point
    assert mechanism_from_toml(mechanism_to_toml(mech)) == mech
    return loaded


@pytest.mark.parametrize("unit", ["deg", "rad"])
def test_hand_made_tree_round_trip(tmp_path, unit):
    mech = replace(mechanism_from_toml(TREE_TEXT), angle_unit=unit)
    assert_round_trip(tmp_path, mech)


@pytest.mark.parametrize("unit", ["deg", "rad"])
def test_four_bar_round_trip(tmp_path, unit):
    mech = replace(mechanism_from_toml(FOURBAR_TEXT), angle_unit=unit, warnings=())
    assert_round_trip(tmp_path, mech)
    # other loop fields: a point and axes off their defaults, -0.0 kept
    loop = replace(mech.loops[0], at=((-0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
                   axis=((0.0, 0.0, 2.0), (0.0, 0.0, -1.0)))
    other = replace(mech, loops=(loop,), assembly=Assembly(None, 1e-9))
    assert_round_trip(tmp_path, other)
    # a pose moved along the loop (re-closed near the guess): the closed values written
    moved = mech.with_q(mech.q_home + np.array([0.3, 0.0, 0.0]))
    assert abs(moved.q_home[0] - mech.q_home[0] - 0.3) < 1e-15
    assert_round_trip(tmp_path, moved)


def test_degrees_typed_by_hand_are_written_back_unchanged():
    doc = tomllib.loads(mechanism_to_toml(mechanism_from_toml(TREE_TEXT)))
    orig = tree_doc()
    for c, chain in enumerate(doc["chain"]):
        assert chain.get("base") == orig["chain"][c].get("base")
        for row, want in zip(chain["link"], orig["chain"][c]["link"]):
            want = {k: v for k, v in want.items() if not (k == "actuated" and v is False)}
            row["inertia"] = {k: v for k, v in row["inertia"].items() if v != 0.0}
            assert row == want


def test_saving_a_robot_writes_a_mechanism_file(tmp_path):
    robot = robot_from_toml(ROBOT_TEXT)
    p = tmp_path / "arm.toml"
    save_mechanism(robot, p)
    assert tomllib.loads(p.read_text("utf-8"))["format"] == "armdyn-mechanism/1"
    assert load_mechanism(p) == Mechanism.from_robot(robot)


BUNDLED = sorted(glob.glob(str(ROBOTS / "*.toml")))


@pytest.mark.parametrize("path", BUNDLED, ids=[Path(p).stem for p in BUNDLED])
def test_bundled_files_round_trip(tmp_path, path):
    assert_round_trip(tmp_path, load_mechanism(path))


odd_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ['say "hi"', "back\\slash", "line1\nline2", 'triple """ quotes', "tab\tand\rcr",
     "\x00\x1f\x7f", "ünïcødé 机器人 🤖", "'single'", "trailing\\", "\n", '"""', "base"])

angle_values = (st.floats(-20.0, 20.0, allow_nan=False) | st.sampled_from(
    [0.0, -0.0, math.pi, -math.pi / 2, 5e-324, 1e-310, 1e6, -1e12, 0.1, math.radians(33.3)]))


@st.composite
def tree_mechanisms(draw, max_chains=4, max_links=4):
    """A random valid tree: 1..max_chains chains of random links (tests/strategies.py),
    the chains hung on one another in a random order (so a parent may come later in the
    file), random bases, names with odd characters, limits, actuated flags, assembly."""
    n_chains = draw(st.integers(1, max_chains))
    rng = np.random.default_rng(draw(seeds))
    prefix = draw(odd_text)
    sizes = [draw(st.integers(1, max_links)) for _ in range(n_chains)]
    names = [[f"{prefix}{c}.{i}" for i in range(k)] for c, k in enumerate(sizes)]
    order = draw(st.permutations(range(n_chains)))
    parents: dict[int, str | None] = {order[0]: None}
    for k in range(1, n_chains):
        if draw(st.booleans()):
            host = order[draw(st.integers(0, k - 1))]
            parents[order[k]] = names[host][draw(st.integers(0, sizes[host] - 1))]
        else:
            parents[order[k]] = None
    chains = []
    for c in range(n_chains):
        links = []
        for i in range(sizes[c]):
            kind = draw(st.sampled_from([JointType.REVOLUTE, JointType.PRISMATIC]))
            link = random_link(rng, kind)
            limits = None
            if draw(st.booleans()):
                lo, hi = sorted(rng.uniform(-3.0, 3.0, 2))
                limits = (float(lo), float(hi) + 0.01)
            links.append(replace(link, name=names[c][i], limits=limits,
                                 actuated=draw(st.booleans())))
        xyz = (0.0, 0.0, 0.0)
        if draw(st.booleans()):
            xyz = tuple(draw(st.floats(-2.0, 2.0)) for _ in range(3))
        rpy = (0.0, 0.0, 0.0)
        if draw(st.booleans()):
            rpy = tuple(draw(angle_values) for _ in range(3))
        chains.append(Chain(name=f"{prefix}chain {c}", links=tuple(links), parent=parents[c],
                            base=Placement(xyz=xyz, rpy=rpy)))
    all_names = [n for chain in names for n in chain]
    independent = None
    if draw(st.booleans()):
        independent = tuple(draw(st.lists(st.sampled_from(all_names), unique=True,
                                          max_size=3)))
    tolerance = draw(st.sampled_from([1e-10, 1e-12, 1e-6, 0.01]) |
                     st.floats(1e-15, 0.01, allow_nan=False))
    try:
        return Mechanism(name=draw(odd_text.filter(lambda s: s.strip())), chains=tuple(chains),
                         gravity=draw(gravities()), description=draw(st.just("") | odd_text),
                         angle_unit=draw(st.sampled_from(["deg", "rad"])),
                         assembly=Assembly(independent=independent, tolerance=tolerance))
    except MechanismError:  # e.g. a prefix of "base" or a clash of odd names
        assume(False)


@given(tree_mechanisms())
@FAST
def test_random_tree_round_trip_is_exact(tmp_path, mech):
    assert_round_trip(tmp_path, mech)


@given(tree_mechanisms(max_chains=3, max_links=3))
@FAST
def test_written_text_is_toml_in_the_mechanism_units(mech):
    text = mechanism_to_toml(mech)
    doc = tomllib.loads(text)  # an independent TOML reader accepts it
    assert text.startswith("#")
    assert doc["format"] == "armdyn-mechanism/1" and doc["name"] == mech.name
    assert doc["angle_unit"] == mech.angle_unit and len(doc["chain"]) == len(mech.chains)
    to_rad = math.radians if mech.angle_unit == "deg" else (lambda v: v)
    for chain, table in zip(mech.chains, doc["chain"]):
        assert table["name"] == chain.name and table.get("parent") == chain.parent
        base = table.get("base", {})
        assert tuple(base.get("xyz", (0.0, 0.0, 0.0))) == chain.base.xyz
        for v, w in zip(base.get("rpy", (0.0, 0.0, 0.0)), chain.base.rpy):
            assert math.isclose(to_rad(v), w, rel_tol=4e-16, abs_tol=1e-300)
        for link, row in zip(chain.links, table["link"]):
            order = ["name", "joint", "a", "b", "alpha", "theta", "mass", "com", "inertia"]
            assert list(row)[:len(order)] == order
            assert row["name"] == link.name and row.get("actuated", False) == link.actuated
            assert math.isclose(to_rad(row["theta"]), link.theta, rel_tol=4e-16,
                                abs_tol=1e-300)
    assembly = doc.get("assembly", {})
    assert assembly.get("tolerance", 1e-10) == mech.assembly.tolerance
    independent = assembly.get("independent")
    assert (tuple(independent) if independent is not None else None) == \
        mech.assembly.independent


def test_unwritable_string_is_refused_before_touching_disk(tmp_path):
    mech = mechanism_from_toml(TREE_TEXT)
    chain = mech.chains[2]
    bad = replace(mech, chains=mech.chains[:2] + (replace(chain, links=(
        replace(chain.links[0], name="x\ud800"),)),))
    target = tmp_path / "bad.toml"
    with pytest.raises(MechanismFileError) as info:
        save_mechanism(bad, target)
    assert info.value.chain == "head" and info.value.link == 1 and info.value.field == "name"
    assert os.listdir(tmp_path) == []


# ======================================================================================
# The user docs: their examples load as they say
# ======================================================================================

DOCS = Path(__file__).resolve().parent.parent / "docs"


def toml_blocks(name):
    return re.findall(r"```toml\n(.*?)```", (DOCS / name).read_text("utf-8"), re.S)


def test_robot_file_doc_example_loads():
    (text,) = toml_blocks("robot-file.md")
    robot = robot_from_toml(text)
    assert robot.n == 3 and robot.warnings == ()
    assert mechanism_from_toml(text) == Mechanism.from_robot(robot)


def test_mechanism_file_doc_examples_load():
    fourbar, hand, tumbler, rack = toml_blocks("mechanism-file.md")
    mech = mechanism_from_toml(fourbar)
    assert mech.joint_names == ("crank", "coupler", "rocker") and mech.dof == 1
    assert mech.warnings == ()  # written closed
    assert mechanism_from_toml(fourbar.replace("-34.71715535634888", "-34.7")).warnings
    tree = mechanism_from_toml(hand)
    assert tree.joint_names == ("wrist", "index base", "index tip", "thumb base")
    assert tree.parent == (-1, 0, 1, 0)
    # version 2: a free trunk (7 values, 6 rates), a spherical shoulder (4, 3), a revolute
    floating = mechanism_from_toml(tumbler)
    assert (floating.nq, floating.nv) == (7 + 4 + 1, 6 + 3 + 1)
    assert [f.name for f in floating.forces] == ["strap", "wheel"]
    # a gear loop: a rack on a pinion, one degree of freedom; it falls as the doc says
    geared = mechanism_from_toml(rack)
    assert geared.dof == 1 and geared.loops[0].ratio == 0.05
    qdd = forward_dynamics(geared, geared.q_home, [0.0, 0.0], [0.0, 0.0])
    assert round(-qdd[1], 2) == 0.89
    np.testing.assert_allclose(forward_dynamics(geared, geared.q_home, [0.0, 0.0],
                                                [0.05 * 2.0 * 9.81, 0.0]), 0.0, atol=1e-12)


@pytest.mark.parametrize("name", ["robot-file.md", "mechanism-file.md"])
def test_docs_are_for_users(name):
    text = (DOCS / name).read_text("utf-8")
    assert "/work/" not in text and "shared" not in text and "seed" not in text.lower()


# ======================================================================================
# Fuzzing: only MechanismFileError, or a valid Mechanism
# ======================================================================================

def check_load(path):
    try:
        mech = load_mechanism(path)
    except MechanismFileError as e:
        assert e.path == str(path)
        return None
    assert isinstance(mech, Mechanism)
    assert all(math.isfinite(x) for x in floats_of(mech))
    return mech


@given(st.binary(max_size=3000))
@FAST
def test_fuzz_random_bytes(tmp_path, data):
    check_load(write(tmp_path, data))


@given(st.text(max_size=500))
@FAST
def test_fuzz_random_text(tmp_path, text):
    check_load(write(tmp_path, text))


@pytest.mark.parametrize("text,step", [(TREE_TEXT, 1), (FOURBAR_TEXT, 3)], ids=["tree", "loop"])
def test_fuzz_truncations(tmp_path, text, step):
    data = text.encode()
    loaded = 0
    for cut in range(0, len(data), step):
        loaded += check_load(write(tmp_path, data[:cut])) is not None
    assert loaded > 0  # a cut after a complete chain gives a smaller mechanism


TOKEN = re.compile(r'"[^"\n]*"|[A-Za-z_][A-Za-z0-9_.]*|[-+]?[0-9][0-9._eE+-]*|\s+|.', re.S)
NASTY = ["nan", "-nan", "inf", "-inf", "1e308", "1e999", "-1e-999", "1e99999999999999999999",
         "0", "-0.0", "true", "false", '"x"', '""', "[", "]", "{", "}", "=", ",", "\n",
         "[[chain]]", "[[chain.link]]", "[[loop]]", "[assembly]", "[chain]", "[[link]]",
         "0x1F", "1979-05-27", "'lit'", '"""', "9" * 5000, "1" * 30, '"base"', '"crank"',
         '"rocker"', '"chest"', "parent", "links", "at", "axis", "rpy", "actuated",
         "independent", "#", "\\", "\x00", "é", "[1, 2]", "[[0, 0, 0], [0, 0, 0]]",
         '"spherical"', '"prismatic"', '"armdyn-robot/1"']


@pytest.mark.parametrize("base", [TREE_TEXT, FOURBAR_TEXT], ids=["tree", "loop"])
@given(data=st.data())
@fast(120, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_fuzz_token_mutations(tmp_path, base, data):
    tokens = TOKEN.findall(base)
    assert "".join(tokens) == base
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
    st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from(["crank", "rocker", "base", "revolute", "spherical"]),
    lambda inner: (st.lists(inner, max_size=4)
                   | st.dictionaries(st.sampled_from(["name", "xyz", "rpy", "x"]), inner,
                                     max_size=3)),
    max_leaves=12)
LINK_KEYS = ["name", "joint", "a", "b", "alpha", "theta", "mass", "com", "inertia", "limits",
             "actuated"]


@given(st.dictionaries(st.sampled_from(["name", "parent", "base", "x"]), toml_values,
                       max_size=3),
       st.lists(st.dictionaries(st.sampled_from(LINK_KEYS), toml_values, max_size=11),
                max_size=2),
       st.lists(st.dictionaries(st.sampled_from(["name", "joint", "links", "at", "axis"]),
                                toml_values, max_size=5), max_size=2),
       st.dictionaries(st.sampled_from(["independent", "tolerance", "x"]), toml_values,
                       max_size=2))
@FAST
def test_fuzz_structures(tmp_path, chain, rows, loops, assembly):
    doc = fourbar_doc()
    doc["chain"][0].update(chain)
    if rows:
        for row, extra in zip(doc["chain"][0]["link"], rows):
            row.update(extra)
    if loops:
        doc["loop"] = [dict(doc["loop"][0], **extra) for extra in loops]
    doc["assembly"].update(assembly)
    try:
        content = tomli_w.dumps(doc)
    except Exception:
        assume(False)
    check_load(write(tmp_path, content))


# ======================================================================================
# Atomic save
# ======================================================================================

@pytest.fixture(scope="module")
def mech():
    return mechanism_from_toml(TREE_TEXT)


def other_mech(mech):
    return replace(mech, chains=mech.chains[1:2])


@pytest.mark.parametrize("where", ["replace", "fsync", "write"])
def test_failed_save_keeps_original_and_leaves_no_temp(tmp_path, monkeypatch, mech, where):
    target = write(tmp_path, TREE_TEXT)
    before = target.read_bytes()

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    if where == "write":
        real_open = os.open

        def read_only_open(path, flags, *args, **kwargs):
            return real_open(path, flags & ~(os.O_WRONLY | os.O_RDWR), *args, **kwargs)
        monkeypatch.setattr(os, "open", read_only_open)
    else:
        monkeypatch.setattr(os, where, fail)
    with pytest.raises(MechanismFileError) as info:
        save_mechanism(other_mech(mech), target)
    monkeypatch.undo()
    assert str(target) in str(info.value) and "cannot write" in info.value.reason
    if where != "write":
        assert "No space left" in info.value.reason
    assert target.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["mech.toml"]


def test_interrupted_save_keeps_original(tmp_path, monkeypatch, mech):
    target = write(tmp_path, TREE_TEXT)
    before = target.read_bytes()

    def interrupt(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        save_mechanism(other_mech(mech), target)
    monkeypatch.undo()
    assert target.read_bytes() == before and os.listdir(tmp_path) == ["mech.toml"]


def test_save_replaces_and_keeps_permissions(tmp_path, mech):
    target = write(tmp_path, "old contents")
    target.chmod(0o640)
    save_mechanism(mech, target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert load_mechanism(target) == mech and os.listdir(tmp_path) == ["mech.toml"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_save_through_symlink_updates_target(tmp_path, mech):
    real = write(tmp_path, TREE_TEXT, name="real.toml")
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    small = other_mech(mech)
    save_mechanism(small, link)
    assert link.is_symlink() and load_mechanism(real) == small


def test_save_errors(tmp_path, mech):
    with pytest.raises(MechanismFileError):
        save_mechanism(mech, tmp_path / "no" / "such" / "dir.toml")
    (tmp_path / "adir").mkdir()
    with pytest.raises(MechanismFileError):
        save_mechanism(mech, tmp_path / "adir")
    assert os.listdir(tmp_path) == ["adir"] and os.listdir(tmp_path / "adir") == []
    with pytest.raises(TypeError):
        save_mechanism("not a mechanism", tmp_path / "x.toml")
    with pytest.raises(MechanismFileError):
        save_mechanism(mech, 7)


def test_robot_with_repeated_names_is_saved_with_unique_names(tmp_path):
    robot = Robot(name="dup", links=(Link(name="j"), Link(name="j")))
    save_mechanism(robot, tmp_path / "dup.toml")
    assert load_mechanism(tmp_path / "dup.toml").joint_names == ("j", "j (link 2)")
