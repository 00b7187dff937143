"""The table edit state (gui/model/draft.py, Qt-free): parsing, refused values, last valid robot."""
from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest

from armdyn.core import JointType, Robot
from armdyn.core.io.robot_file import load_robot, robot_from_toml, robot_to_toml
from armdyn.gui.model.draft import Row, RobotDraft, Unparsed, new_link, new_robot
from armdyn.gui.model.units import deg_text_to_rad, rad_to_deg_text

from gui_helpers import PUMA, ROBOT_FILES, SCARA


@pytest.fixture
def draft() -> RobotDraft:
    return RobotDraft.from_robot(load_robot(PUMA))


def edit(draft: RobotDraft, row: int, key: str, text) -> bool:
    return draft.set_cells(draft.changes_for(row, key, draft.parse(row, key, text)))


@pytest.mark.parametrize("path", ROBOT_FILES, ids=lambda p: p.stem)
def test_every_bundled_robot_round_trips_through_the_tables(path):
    robot = load_robot(path)
    draft = RobotDraft.from_robot(robot)
    assert draft.is_valid and draft.n == robot.n
    # Type every cell's edit text back in: nothing changes, the robot stays equal.
    for row in range(draft.n):
        for key in draft.rows[row].cells:
            draft.set_cells([(row, key, draft.parse(row, key, draft.edit_text(row, key)))])
    assert draft.is_valid
    assert draft.robot == robot


@pytest.mark.parametrize("text", ["90", "-90", "45", "33.3", "0.1", "-157.5", "1e-07", "180"])
def test_degrees_typed_are_shown_and_saved_as_typed(text):
    rad = deg_text_to_rad(text)
    assert rad_to_deg_text(rad) == text
    # core's file writer converts the same way: the file says what was typed
    robot = new_robot()
    robot = robot.with_links([replace(robot.links[0], alpha=rad), robot.links[1]])
    written = re.search(r"^alpha = (\S+)$", robot_to_toml(robot), re.M).group(1)
    assert float(written) == float(text)
    assert robot_from_toml(robot_to_toml(robot)).links[0].alpha == rad


def test_display_rounds_but_edit_text_is_exact(draft):
    draft.set_cells([(0, "ixx", 1 / 3)])
    assert draft.display_text(0, "ixx") == "0.333333"
    assert float(draft.edit_text(0, "ixx")) == 1 / 3
    assert draft.display_text(0, "alpha") == "-90"
    assert draft.edit_text(0, "alpha") == "-90"


def test_negative_mass_is_refused_marked_and_the_robot_kept(draft):
    before = draft.robot
    assert not edit(draft, 1, "mass", "-1")
    assert draft.robot is before
    reason = draft.errors[(1, "mass")]
    assert "link 2" in reason and "'mass'" in reason and "> 0" in reason
    assert draft.value(1, "mass") == -1.0  # the typed value stays in its cell
    assert edit(draft, 1, "mass", "5")
    assert draft.is_valid and draft.robot.links[1].mass == 5.0


def test_text_that_is_not_a_number_is_marked_with_cores_message(draft):
    assert not edit(draft, 2, "com_y", "abc")
    assert draft.value(2, "com_y") == Unparsed("abc")
    assert draft.edit_text(2, "com_y") == "abc"
    reason = draft.errors[(2, "com_y")]
    assert "link 3" in reason and "'com'" in reason and "abc" in reason


def test_only_the_edited_cell_of_a_field_is_marked(draft):
    edit(draft, 0, "izz", "100")  # breaks xx + yy >= zz
    assert set(draft.errors) == {(0, "izz")}
    assert "triangle inequality" in draft.errors[(0, "izz")]


def test_two_bad_rows_keep_their_own_reasons_and_fixing_both_applies_them(draft):
    edit(draft, 0, "mass", "0")
    edit(draft, 3, "a", "x")
    assert set(draft.errors) == {(0, "mass"), (3, "a")}
    edit(draft, 0, "mass", "2")
    assert not draft.is_valid  # row 4 still refused: the robot waits
    assert draft.robot.links[0].mass != 2.0
    assert edit(draft, 3, "a", "0.1")
    assert draft.robot.links[0].mass == 2.0 and draft.robot.links[3].a == 0.1


def test_limits_need_both_ends_and_follow_the_joint_unit(draft):
    assert not edit(draft, 0, "lower", "-90")
    assert "both" in draft.errors[(0, "upper")]
    assert edit(draft, 0, "upper", "90")
    assert draft.robot.links[0].limits == (-math.pi / 2, math.pi / 2)
    assert draft.display_text(0, "upper") == "90\u00b0"
    # a prismatic joint: limits in metres, and switching the type clears them
    assert edit(draft, 0, "joint", "prismatic")
    assert draft.robot.links[0].joint == JointType.PRISMATIC
    assert draft.robot.links[0].limits is None
    edit(draft, 0, "lower", "-0.5")
    assert edit(draft, 0, "upper", "0.5")
    assert draft.robot.links[0].limits == (-0.5, 0.5)
    assert draft.display_text(0, "lower") == "-0.5 m"


def test_limits_in_the_wrong_order_are_refused(draft):
    edit(draft, 0, "lower", "10")
    assert not edit(draft, 0, "upper", "-10")
    assert "increasing" in draft.errors[(0, "upper")]


@pytest.mark.parametrize("text,expected", [("R", JointType.REVOLUTE), ("prismatic",
                                           JointType.PRISMATIC), (" P ", JointType.PRISMATIC)])
def test_joint_words(draft, text, expected):
    assert draft.parse(0, "joint", text) == expected


def test_unknown_joint_word_is_marked(draft):
    edit(draft, 0, "joint", "hinge")
    assert "revolute" in draft.errors[(0, "joint")]


@pytest.mark.parametrize("text,value", [("1,5", 1.5), ("\u22122", -2.0), (" 3 ", 3.0)])
def test_numbers_people_type(draft, text, value):
    assert draft.parse(0, "a", text) == value


def test_rows_insert_remove_move(draft):
    robot = draft.robot
    assert draft.insert_rows(6, [Row.from_link(new_link(robot.links))])
    assert draft.robot.n == 7
    removed, changed = draft.remove_rows(0, 2)
    assert changed and draft.robot.links == robot.links[2:] + (draft.robot.links[-1],)
    assert draft.move_row(0, 1)
    assert draft.robot.links[1] == robot.links[2]


def test_removing_every_row_is_refused_by_validation(draft):
    draft.remove_rows(0, draft.n)
    assert not draft.is_valid
    assert draft.robot.n == 6


def test_a_new_link_and_a_new_robot_are_valid():
    robot = load_robot(SCARA)
    link = new_link(robot.links)
    assert link.a > 0 and link.mass > 0
    Robot(name="x", links=(link,))
    assert new_robot().n == 2


# ----------------------------------------------------------------------------------
# Mechanisms: chains, loops and assembly settings as cells (gui/model/mechanism_draft.py)
# ----------------------------------------------------------------------------------

MECHANISM_FILES = sorted(p for p in PUMA.parent.glob("*.toml")
                         if 'format = "armdyn-mechanism/1"' in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", MECHANISM_FILES, ids=lambda p: p.stem)
def test_every_bundled_mechanism_round_trips_through_every_table(path):
    from armdyn.core import load_mechanism
    from armdyn.gui.model.mechanism_draft import MechanismDraft
    mech = load_mechanism(path)
    draft = MechanismDraft.from_mechanism(mech)
    assert draft.is_valid
    cells = [(r, k) for r in range(draft.n) for k in draft.rows[r].cells]
    cells += [(r, k) for sheet in ("chains", "loops", "assembly")
              for r in range(draft.row_count(sheet))
              for k in (draft.chains[r].cells if sheet == "chains" else
                        draft.loops[r].cells if sheet == "loops" else draft.assembly.cells)]
    for row, key in cells:  # every cell's text typed back in: nothing changes
        draft.set_cells([(row, key, draft.parse(row, key, draft.edit_text(row, key)))])
    assert draft.is_valid, draft.errors
    assert draft.robot == mech


def test_mechanism_cells_name_the_chain_the_link_within_it_and_the_loop():
    from armdyn.core import load_mechanism
    from armdyn.gui.model.mechanism_draft import MechanismDraft
    draft = MechanismDraft.from_mechanism(load_mechanism(PUMA.parent / "fivebar_saha.toml"))
    assert not edit(draft, 3, "com_x", "abc")
    assert draft.errors[(3, "com_x")].startswith("chain 'leg 2', link 2 ('leg 2 distal'), "
                                                 "field 'com'")
    edit(draft, 3, "com_x", "-0.6")
    assert not edit(draft, 0, "at_b", "1, 2")
    assert draft.errors[(0, "at_b")] == "loop 'E', field 'at': at must be 3 numbers, got '1, 2'"
    assert not edit(draft, 1, "base_rpy", "0, 0, x")
    assert draft.errors[(1, "base_rpy")].startswith("chain 'leg 2', field 'base.rpy'")


def test_base_angles_are_degrees_typed_exactly_and_points_any_separator():
    from armdyn.core import load_mechanism
    from armdyn.gui.model.mechanism_draft import MechanismDraft
    draft = MechanismDraft.from_mechanism(load_mechanism(PUMA.parent / "fivebar_saha.toml"))
    assert edit(draft, 1, "base_rpy", "0, 0, 33.3")
    assert draft.robot.chains[1].base.rpy == (0.0, 0.0, deg_text_to_rad("33.3"))
    assert draft.edit_text(1, "base_rpy") == "0, 0, 33.3"
    for text in ("[0.1; 0; 0]", "0.1 0 0", "(0.1, 0, 0)"):
        assert draft.parse(0, "at_a", text) == (0.1, 0.0, 0.0)
    assert draft.parse(0, "at_a", "1,5") == Unparsed("1,5")  # no decimal comma in vectors
