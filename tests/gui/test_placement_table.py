"""The Joint placement tab (issue #23): a spherical, universal or free joint's placement
xyz, rpy and its home (a free joint's position, a free or spherical joint's orientation
as roll, pitch, yaw) in a table of their own, shown only for models that have such
joints; edits are undoable, bad cells refused with core's message."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

from armdyn.core.io.model_files import load_model
from armdyn.gui.model.document import RobotDocument
from armdyn.core import Chain, JointType, Link, Mechanism
from armdyn.gui.editors.tables import RobotTableModel
from armdyn.gui.model.draft import DH_COLUMNS, PLACEMENT_COLUMNS

from gui_helpers import PUMA, ROBOTS, type_into

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("no_modal_boxes")]

CAR = ROBOTS / "car_jalon.toml"
HUMAN = ROBOTS / "human_body_jalon.toml"


def _cell(editor, row: int, key: str):
    model = editor.placement_model
    return model.index(row, model.column_of(key))


def test_a_dh_arm_shows_no_placement_tab_and_its_dh_table_is_unchanged(make_window):
    editor = make_window(PUMA).editor
    tabs = editor.tabs
    assert not tabs.isTabVisible(tabs.indexOf(editor.placement_view))
    assert editor.dh_model.columns == DH_COLUMNS


def test_the_human_shows_its_free_joint_only_with_its_home(make_window):
    window = make_window(HUMAN)
    editor, draft = window.editor, window.document.draft
    tabs, view = editor.tabs, editor.placement_view
    assert tabs.isTabVisible(tabs.indexOf(view))
    free = next(r for r in range(draft.n) if draft.joint(r).value == "free")
    link = window.document.robot.links[free]
    assert _cell(editor, free, "home_xyz").data() == ", ".join(
        f"{v:g}" for v in link.q_values[:3])
    assert [r for r in range(draft.n) if not view.isRowHidden(r)] == [free]
    # a DH row has no placement: its cells are empty and take no value
    dh = next(r for r in range(draft.n) if draft.joint(r).is_dh)
    assert _cell(editor, dh, "xyz").data() == ""
    assert not _cell(editor, dh, "xyz").flags() & Qt.ItemFlag.ItemIsEditable
    assert not window.document.set_text(dh, "xyz", "1, 2, 3")


def test_a_home_typed_moves_the_body_and_undo_restores_it(make_window, qtbot):
    window = make_window(HUMAN)
    editor, doc = window.editor, window.document
    editor.tabs.setCurrentWidget(editor.placement_view)
    free = next(r for r in range(doc.draft.n) if doc.draft.joint(r).value == "free")
    before = doc.robot
    type_into(qtbot, editor.placement_view, _cell(editor, free, "home_rpy"), "0, 0, 90")
    assert not doc.errors
    home = doc.robot.links[free].home
    assert np.allclose(home[3:], (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)))
    assert _cell(editor, free, "home_rpy").data() == "0, 0, 90"
    doc.undo_stack.undo()
    assert doc.robot == before


def test_a_bad_home_is_refused_with_core_s_message_and_the_model_kept(make_window, qtbot):
    window = make_window(HUMAN)
    editor, doc = window.editor, window.document
    editor.tabs.setCurrentWidget(editor.placement_view)
    free = next(r for r in range(doc.draft.n) if doc.draft.joint(r).value == "free")
    before = doc.robot
    type_into(qtbot, editor.placement_view, _cell(editor, free, "home_xyz"), "0, abc, 1")
    message = _cell(editor, free, "home_xyz").data(Qt.ItemDataRole.ToolTipRole)
    assert message == doc.errors[(free, "home_xyz")]
    assert "field 'home'" in message and "expected a number, got 'abc'" in message
    assert doc.robot == before
    doc.undo_stack.undo()
    assert not doc.errors


def test_the_car_s_ball_and_universal_joints_are_placed_undone_and_refused(qtbot):
    doc = RobotDocument(load_model(CAR))
    draft = doc.draft
    rod = next(r for r in range(draft.n) if draft.link_name(r) == "left damper rod")
    link = next(r for r in range(draft.n) if draft.link_name(r) == "left rear trailing link")
    assert (draft.joint(rod).value, draft.joint(link).value) == ("spherical", "universal")
    assert not draft.has_cell(link, "home_rpy")  # two angles: the Pose dock's
    before = doc.robot
    assert doc.set_text(link, "rpy", "0, 0, 90")
    assert np.allclose(doc.robot.links[link].rpy, (0.0, 0.0, math.pi / 2))
    doc.undo_stack.undo()
    assert doc.robot == before
    doc.set_text(rod, "xyz", "1.07, abc, 0.4")
    message = doc.errors[(rod, "xyz")]
    assert "'left damper rod'" in message and "field 'xyz'" in message
    assert "expected a number, got 'abc'" in message
    doc.set_text(rod, "xyz", "1.07, 0.58")
    assert "xyz must have 3 components" in doc.errors[(rod, "xyz")]
    assert doc.robot == before


def test_a_home_edited_is_saved_in_a_version_2_file_and_read_back(make_window, tmp_path):
    window = make_window(HUMAN)
    doc = window.document
    free = next(r for r in range(doc.draft.n) if doc.draft.joint(r).value == "free")
    assert doc.set_text(free, "home_rpy", "10, 20, 30")
    assert doc.set_text(free, "home_xyz", "0.1, 0.2, 1.5")
    assert not doc.errors
    saved = tmp_path / "human.toml"
    assert window.files.save_to(saved)
    assert 'format = "armdyn-mechanism/2"' in saved.read_text()
    again = load_model(saved)
    assert np.allclose(again.links[free].home, doc.robot.links[free].home, atol=1e-9)
    assert np.allclose(again.links[free].home[:3], (0.1, 0.2, 1.5))
    assert _cell(window.editor, free, "home_rpy").data() == "10, 20, 30"


def test_a_placement_row_pasted_is_one_undo_step(make_window):
    window = make_window(HUMAN)
    editor, doc = window.editor, window.document
    view = editor.placement_view
    editor.tabs.setCurrentWidget(view)
    free = next(r for r in range(doc.draft.n) if doc.draft.joint(r).value == "free")
    before, steps = doc.robot, doc.undo_stack.count()
    view.setCurrentIndex(_cell(editor, free, "home_xyz"))
    assert view.paste("0, 0, 1.2\t0, 0, 45")
    assert doc.undo_stack.count() == steps + 1
    assert np.allclose(doc.robot.links[free].home[:3], (0.0, 0.0, 1.2))
    assert view.copy() == "0, 0, 1.2"
    doc.undo_stack.undo()
    assert doc.robot == before


def test_a_universal_joint_s_two_home_angles_are_a_column_of_their_own(qtbot):
    # a chain without loops: its home is the model's home as typed (the car's loops
    # would move a universal joint to close them)
    rod = dict(mass=1.0, com=(0.1, 0.0, 0.0), inertia=(1e-3, 4e-3, 4e-3, 0.0, 0.0, 0.0))
    mech = Mechanism(name="u", chains=(Chain("c", (
        Link(joint=JointType.UNIVERSAL, xyz=(0.0, 0.0, 0.5), name="cardan", **rod),
        Link(a=0.2, name="rod", **rod))),))
    doc = RobotDocument(mech)
    draft, before = doc.draft, doc.robot
    link = 0
    assert draft.has_cell(link, "home_uv") and not draft.has_cell(link, "home_xyz")
    assert draft.display_text(link, "home_uv") == ", ".join(
        f"{math.degrees(v):g}" for v in before.links[link].q_values)
    assert doc.set_text(link, "home_uv", "10, -5")
    assert doc.robot.links[link].home == (math.radians(10), math.radians(-5))
    q = doc.robot.q_home[doc.robot.q_slice(doc.robot.joint_names[link])]
    assert np.allclose(q, np.radians([10, -5]))
    doc.set_text(link, "home_uv", "10")  # one angle: core's count, naming the link
    message = doc.errors[(link, "home_uv")]
    assert "'cardan'" in message and "two angles (2 numbers), got 1" in message
    doc.set_text(link, "home_uv", "10, abc")
    assert "expected a number, got 'abc'" in doc.errors[(link, "home_uv")]
    assert doc.robot.links[link].home == (math.radians(10), math.radians(-5))
    for _ in range(3):
        doc.undo_stack.undo()
    assert doc.robot == before and not doc.errors


def test_a_file_in_radians_shows_and_reads_its_angles_in_radians(qtbot):
    human = dataclasses.replace(load_model(HUMAN), angle_unit="rad")
    doc = RobotDocument(human)
    draft = doc.draft
    free = next(r for r in range(draft.n) if draft.joint(r).value == "free")
    model = RobotTableModel(doc, PLACEMENT_COLUMNS)
    header = model.headerData(model.column_of("home_rpy"), Qt.Orientation.Horizontal)
    assert header.endswith("(rad)")
    assert doc.set_text(free, "home_rpy", f"0, 0, {math.pi / 2!r}")
    assert draft.edit_text(free, "home_rpy") == f"0, 0, {math.pi / 2!r}"
    home = doc.robot.links[free].home
    assert np.allclose(home[3:], (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)))
    dh = next(r for r in range(draft.n) if draft.joint(r) == JointType.REVOLUTE)
    assert draft.unit(dh, "theta") == "rad" and draft.unit(dh, "lower") == "rad"
    assert doc.set_text(dh, "theta", "0.25")
    assert doc.robot.links[dh].theta == 0.25
    assert model.headerData(model.column_of("rpy"), Qt.Orientation.Horizontal) \
        .endswith("(rad)")
