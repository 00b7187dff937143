"""URDF reading at the edges: entity declarations refused, names and texts capped before
anything is built, numbers read as XML writes them.

Each case is a small URDF written out here; what the reader must say is the file's own
field (the joint and attribute), never a number taken from the reader.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import ArmDynError, load_urdf
from armdyn.core.io.urdf import (MAX_NAME_CHARS, MAX_URDF_BYTES, UrdfFileError,
                                 mechanism_from_urdf, mechanism_to_urdf)

INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" '
            'iyz="0" izz="0.01"/></inertial>')


def urdf(*, robot="arm", link="arm_link", joint="shoulder", axis="0 0 1", doctype="") -> str:
    """A one-joint URDF: a base and one revolute link about `axis`."""
    return (f'<?xml version="1.0"?>\n{doctype}<robot name="{robot}">'
            f'<link name="base"/><link name="{link}">{INERTIAL}</link>'
            f'<joint name="{joint}" type="revolute"><parent link="base"/>'
            f'<child link="{link}"/><origin xyz="0 0 0.1" rpy="0 0 0"/>'
            f'<axis xyz="{axis}"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
            f'</joint></robot>')


def test_the_one_joint_urdf_reads():
    mech = mechanism_from_urdf(urdf())
    assert mech.name == "arm" and mech.joint_names == ("arm_link",)


# ----------------------------------------------------------------------------------
# Entity declarations
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE robot [<!ENTITY n "abcdefgh">]>\n',                   # internal
    '<!DOCTYPE robot [<!ENTITY n "a"><!ENTITY m "&n;&n;&n;&n;">]>\n',  # nested
    '<!DOCTYPE robot [<!ENTITY n SYSTEM "file:///etc/passwd">]>\n',    # external
    '<!DOCTYPE robot [<!ENTITY % p "x">]>\n',                          # parameter
])
def test_entity_declarations_are_refused_by_name(doctype):
    """An internal entity used to expand: a 2 MB file gave a 30 MB robot name that broke
    the window's X11 connection."""
    text = urdf(doctype=doctype, robot="&n;" if "ENTITY n" in doctype else "arm")
    with pytest.raises(UrdfFileError) as err:
        mechanism_from_urdf(text, "bomb.urdf")
    e = err.value
    assert isinstance(e, ArmDynError)
    assert str(e).startswith("bomb.urdf: ") and "entity" in e.reason
    assert ("'n'" in e.reason) or ("'p'" in e.reason)


def test_a_document_type_without_entities_still_reads():
    mech = mechanism_from_urdf(urdf(doctype="<!DOCTYPE robot>\n"))
    assert mech.joint_names == ("arm_link",)


def test_an_expanding_file_is_refused_from_disk(tmp_path):
    """A 60 kB file whose robot name expands to 2 MB: 20,000 references to a
    100-character entity."""
    entity = "x" * 100
    text = urdf(doctype=f'<!DOCTYPE robot [<!ENTITY n "{entity}">]>\n',
                robot="&n;" * 20_000)
    path = tmp_path / "big.urdf"
    path.write_text(text)
    assert path.stat().st_size < 20_000 * 100 // 10
    with pytest.raises(UrdfFileError, match="entity"):
        load_urdf(path)


# ----------------------------------------------------------------------------------
# Names and sizes
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("where, field", [("robot", "robot.name"), ("link", "name"),
                                          ("joint", "name")])
def test_a_name_over_the_cap_is_refused_naming_the_field(where, field):
    long = "n" * (MAX_NAME_CHARS + 1)
    with pytest.raises(UrdfFileError) as err:
        mechanism_from_urdf(urdf(**{where: long}), "long.urdf")
    e = err.value
    assert e.field == field and f"{MAX_NAME_CHARS + 1} characters" in e.reason
    assert len(str(e)) < 400  # the name is cut in the message, not repeated whole


def test_a_name_at_the_cap_reads():
    name = "n" * MAX_NAME_CHARS
    assert mechanism_from_urdf(urdf(link=name)).joint_names == (name,)


def test_a_text_over_the_size_cap_is_refused_before_parsing(tmp_path):
    text = urdf().replace("</robot>", "<!--" + "x" * MAX_URDF_BYTES + "--></robot>")
    with pytest.raises(UrdfFileError, match=str(MAX_URDF_BYTES)):
        mechanism_from_urdf(text, "huge.urdf")
    path = tmp_path / "huge.urdf"
    path.write_text(text)
    with pytest.raises(UrdfFileError, match=str(MAX_URDF_BYTES)):
        load_urdf(path)


# ----------------------------------------------------------------------------------
# Numbers
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("word", ["1_0", "\uff11", "\u0661", "0x1", "1e", ".", "--1", "1d0",
                                  "nan", "-inf", "Infinity"])
def test_numbers_that_python_might_take_are_refused(word):
    """float() reads '1_0' as 10, a full-width or Arabic-Indic 1 as 1: an axis written
    '0 0 1_0' was read as (0, 0, 10)."""
    with pytest.raises(UrdfFileError) as err:
        mechanism_from_urdf(urdf(axis=f"0 0 {word}"), "axis.urdf")
    e = err.value
    assert (e.joint, e.field) == ("shoulder", "axis.xyz") and repr(word) in e.reason


@pytest.mark.parametrize("axis, z", [("0 0 1", 1.0), ("0,0,1", 1.0), ("0 0 +1.", 1.0),
                                     (" 0\t0\n1e0 ", 1.0), ("-0 .0 -1E+0", -1.0)])
def test_numbers_as_xml_writes_them_read(axis, z):
    """Digits with an optional sign, point and exponent, separated by white space or
    commas; an axis of -z turns the joint the other way (the sign of its q)."""
    mech = mechanism_from_urdf(urdf(axis=axis))
    ref = mechanism_from_urdf(urdf(axis="0 0 1"))
    # the same joint axis up to its sense: the same DH row, or the one of the turned axis
    assert mech.links[0].a == ref.links[0].a and mech.links[0].b == ref.links[0].b
    if z > 0:
        assert mech.links[0] == ref.links[0]


# ----------------------------------------------------------------------------------
# Round trips: the same DH table to the round-off docs/urdf.md states
# ----------------------------------------------------------------------------------

def documented_round_trip_bound() -> float:
    """The bound docs/urdf.md gives for load(save(m)) - m on a table read from a URDF
    ("... within N m and rad ..." in its Writing section)."""
    docs = (Path(__file__).resolve().parents[1] / "docs" / "urdf.md").read_text()
    found = re.search(r"round trip[^.]*?within ([0-9.e-]+) m and rad", docs, re.S)
    assert found, "docs/urdf.md must say how close a round trip's DH table is"
    return float(found.group(1))


def test_a_round_trip_gives_the_dh_table_to_the_documented_round_off():
    """A round trip promised 'the same DH table' and gave differences of 4e-14: the
    documents now give the bound, and random trees and chains stay within it (lengths
    and mass centres in m, angles in rad, inertias relative to the link's largest
    moment). The reference is the first reading, the table compared entry by entry."""
    from strategies import dh_tables, random_urdf

    bound = documented_round_trip_bound()
    assert bound <= 1e-12
    worst = 0.0
    for seed in range(60):
        for tree in (False, True):
            first = mechanism_from_urdf(random_urdf(seed, 6, tree))
            again = mechanism_from_urdf(mechanism_to_urdf(first))
            assert again.joint_names == first.joint_names
            a, b = dh_tables(first), dh_tables(again)
            geometry = [0, 1, 2, 3, 5, 6, 7, 14, 15, 16, 17, 18, 19]
            d = np.abs(b[:, geometry] - a[:, geometry])
            # angles on either side of +-pi are the same angle
            for c in (2, 3, 17, 18, 19):
                k = geometry.index(c)
                d[:, k] = np.minimum(d[:, k], 2 * math.pi - d[:, k])
            worst = max(worst, float(d.max()))
            inertia = np.abs(b[:, 8:14] - a[:, 8:14])
            scale = np.max(np.abs(a[:, 8:11]), axis=1, keepdims=True)
            assert np.all(inertia <= bound * scale), seed
            assert np.array_equal(b[:, 4], a[:, 4])  # the masses: sums of the file's
    assert worst <= bound


def test_more_moving_joints_than_a_mechanism_holds_are_refused_before_any_pose():
    from armdyn.core.model.mechanism import MAX_JOINTS
    n = MAX_JOINTS + 1
    links = "".join(f'<link name="l{i}">{INERTIAL}</link>' for i in range(n))
    joints = "".join(f'<joint name="j{i}" type="continuous"><parent link="'
                     f'{"base" if i == 0 else f"l{i - 1}"}"/><child link="l{i}"/>'
                     f'<axis xyz="0 0 1"/></joint>' for i in range(n))
    text = f'<robot name="long"><link name="base"/>{links}{joints}</robot>'
    with pytest.raises(UrdfFileError, match=f"{n} revolute, continuous, prismatic and "
                                            f"floating joints; a mechanism has at most "
                                            f"{MAX_JOINTS}"):
        mechanism_from_urdf(text, "long.urdf")
