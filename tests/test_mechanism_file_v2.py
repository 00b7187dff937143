"""Mechanism files version 2: spherical, universal and free joints, force elements and
roads; version 1 stays version 1."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given

from armdyn.core import (JointType, MechanismFileError, Road, SpringDamper, Tyre,
                         load_mechanism, save_mechanism)
from armdyn.core.io.bundled import ROBOTS_DIR
from armdyn.core.io.mechanism_file import (FORMAT, FORMAT_2, mechanism_from_toml,
                                           mechanism_to_toml)
from strategies import fast, random_tree


@fast(20)
@given(random_tree(min_joints=1, max_joints=10, joints="several", floating=True))
def test_floating_trees_with_force_elements_round_trip_exactly(mech):
    from dataclasses import replace
    names = [link.name for link in mech.links]
    forces = (SpringDamper("s", (names[0], "base"), ((0.1, 0.0, 0.0), (0.0, 0.0, 1.0)), 10.0,
                           1.5, 0.5),
              Tyre("t", names[-1], (0.0, 0.1, 0.0), 1.0e4, 10.0, 0.2))
    mech = replace(mech, forces=forces, road=Road(((0.0, 0.0), (1.0, 0.1), (2.0, -0.05))))
    text = mechanism_to_toml(mech)
    assert f'format = "{FORMAT_2}"' in text
    back = mechanism_from_toml(text)
    assert back == mech
    np.testing.assert_array_equal(back.q_home, mech.q_home)


def test_a_mechanism_that_fits_version_1_is_written_as_version_1(tmp_path):
    for path in sorted(ROBOTS_DIR.glob("*.toml")):
        mech = load_mechanism(path)
        if all(link.joint.is_dh for link in mech.links) and not mech.forces:
            assert f'format = "{FORMAT}"' in mechanism_to_toml(mech), path.name


_V2 = '''format = "armdyn-mechanism/2"
name = "ball"
angle_unit = "deg"
[[chain]]
name = "c"
[[chain.link]]
name = "trunk"
joint = "free"
mass = 2.0
com = [0.0, 0.0, 0.0]
inertia = { xx = 0.1, yy = 0.1, zz = 0.1 }
home = { xyz = [0.0, 0.0, 1.0], rpy = [0.0, 0.0, 90.0] }
[[chain.link]]
name = "arm"
joint = "spherical"
xyz = [0.1, 0.0, 0.0]
rpy = [90.0, 0.0, 0.0]
mass = 1.0
com = [0.1, 0.0, 0.0]
inertia = { xx = 0.01, yy = 0.01, zz = 0.01 }
home = { rpy = [0.0, 30.0, 0.0] }
'''


def test_a_version_2_file_reads_angles_in_its_unit_and_homes_as_quaternions(tmp_path):
    path = tmp_path / "ball.toml"
    path.write_text(_V2)
    mech = load_mechanism(path)
    assert [link.joint for link in mech.links] == [JointType.FREE, JointType.SPHERICAL]
    home = mech.q_home
    np.testing.assert_allclose(home[:7], [0, 0, 1, 0, 0, math.sin(math.pi / 4),
                                          math.cos(math.pi / 4)], atol=1e-15)
    np.testing.assert_allclose(home[7:], [0, math.sin(math.pi / 12), 0, math.cos(math.pi / 12)],
                               atol=1e-15)
    assert mech.links[1].rpy == pytest.approx((math.pi / 2, 0.0, 0.0))
    save_mechanism(mech, tmp_path / "back.toml")
    assert load_mechanism(tmp_path / "back.toml") == mech


@pytest.mark.parametrize("change, field, words", [
    (('format = "armdyn-mechanism/2"', 'format = "armdyn-mechanism/1"'), "joint",
     ["needs format", "armdyn-mechanism/2"]),
    (("home = { rpy = [0.0, 30.0, 0.0] }", "home = { quaternion = [0.0, 0.0, 0.0, 2.0] }"),
     "home", ["length 2", "unit quaternion"]),
    (("home = { rpy = [0.0, 30.0, 0.0] }", "home = [1.0, 2.0]"), "home", ["expected"]),
    (("xyz = [0.1, 0.0, 0.0]", "a = 0.1"), "a", ["placed by xyz"]),
    (("home = { rpy = [0.0, 30.0, 0.0] }", "home = { rpy = [0.0, 0.0, 0.0], quaternion = "
      "[0.0, 0.0, 0.0, 1.0] }"), "home", ["not both"]),
])
def test_bad_joints_of_several_degrees_of_freedom_are_named(tmp_path, change, field, words):
    path = tmp_path / "bad.toml"
    path.write_text(_V2.replace(*change))
    with pytest.raises(MechanismFileError) as err:
        load_mechanism(path)
    e = err.value
    named = "trunk" if field == "joint" else "arm"  # (the first joint a version 1 refuses)
    assert e.field == field and e.link_name == named and str(e).startswith(str(path))
    assert all(w in str(e) for w in words), str(e)


@pytest.mark.parametrize("extra, field, words", [
    ('[[force]]\nname = "s"\nkind = "spring-damper"\nlinks = ["trunk", "wheel"]\n'
     'stiffness = 1.0\n', "links", ["force element 's'", "'wheel'"]),
    ('[[force]]\nname = "t"\nkind = "tyre"\nlink = "arm"\nstiffness = -1.0\nradius = 0.3\n',
     "stiffness", ["force element 't'", "> 0"]),
    ('[[force]]\nname = "t"\nkind = "wheel"\nlink = "arm"\n', "kind", ["tyre"]),
    ('[road]\npoints = [[0.0, 0.0], [1.0, 0.1], [0.5, 0.2]]\n', "road.points",
     ["road point 3", "function of the position"]),
])
def test_bad_force_elements_and_roads_are_named(tmp_path, extra, field, words):
    path = tmp_path / "bad.toml"
    path.write_text(_V2 + extra)
    with pytest.raises(MechanismFileError) as err:
        load_mechanism(path)
    assert err.value.field == field and all(w in str(err.value) for w in words), str(err.value)


def test_force_elements_in_a_version_1_file_are_refused(tmp_path):
    path = tmp_path / "v1.toml"
    text = (ROBOTS_DIR / "fourbar.toml").read_text() + \
        '\n[[force]]\nname = "s"\nkind = "spring-damper"\nlinks = ["crank", "base"]\n'
    path.write_text(text)
    with pytest.raises(MechanismFileError, match="armdyn-mechanism/2") as err:
        load_mechanism(path)
    assert err.value.field == "force"
