"""The Forces and Road tabs (issue #23): a mechanism's spring-dampers and tyres, and its
road points, in tables of their own (Forces for every mechanism, Road while there is a
road or a tyre); rows added and removed; every edit one undo step, every bad cell
refused with core's message (which names the element and the field), the model kept on
refusal; an edit saved and read back."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from armdyn.core import forward_kinematics, simulate
from armdyn.core.io.model_files import load_model, save_model
from armdyn.core.model.parts import SpringDamper, Tyre
from armdyn.gui.editors.robot_editor import RobotEditor
from armdyn.gui.model.document import RobotDocument

from gui_helpers import PUMA, ROBOTS, type_into

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("no_modal_boxes")]

CAR = ROBOTS / "car_jalon.toml"
PENDULUM = ROBOTS / "five_link_pendulum.toml"


@pytest.fixture(scope="module")
def car():
    return load_model(CAR)


@pytest.fixture
def editor(qtbot, car):
    # The car does not open in the window on this branch (gui.md, Not yet): the Robot
    # dock's editor on its own document.
    doc = RobotDocument(car)
    widget = RobotEditor(doc)
    qtbot.addWidget(widget)
    widget.resize(900, 500)
    widget.show()
    return widget


def _force_row(doc, name: str) -> int:
    return next(i for i, rec in enumerate(doc.draft.forces) if rec.cells["force"] == name)


def _cell(model, row: int, key: str):
    return model.index(row, model.column_of(key))


def test_the_car_shows_forces_and_road_the_puma_does_not(editor, make_window, car):
    tabs = editor.tabs
    assert tabs.isTabVisible(tabs.indexOf(editor.forces))
    assert tabs.isTabVisible(tabs.indexOf(editor.road))
    assert editor.forces_model.rowCount() == len(car.forces)
    assert editor.road_model.rowCount() == len(car.road.points)
    tyre = _force_row(editor.document, "left front tyre")
    assert _cell(editor.forces_model, tyre, "force_kind").data() == "tyre"
    assert _cell(editor.forces_model, tyre, "force_links").data() == "left front wheel"
    assert _cell(editor.forces_model, tyre, "force_length").data() == "0.3"
    editable = Qt.ItemFlag.ItemIsEditable
    flags = editor.forces_model.flags
    assert flags(_cell(editor.forces_model, tyre, "force_at_a")) & editable
    assert not flags(_cell(editor.forces_model, tyre, "force_at_b")) & editable  # one point
    assert not flags(_cell(editor.forces_model, tyre, "force_kind")) & editable  # the file's
    puma = make_window(PUMA).editor
    assert not puma.tabs.isTabVisible(puma.tabs.indexOf(puma.forces))
    assert not puma.tabs.isTabVisible(puma.tabs.indexOf(puma.road))


def test_a_stiffness_typed_changes_the_model_and_undo_restores_it(editor, qtbot, car):
    doc = editor.document
    editor.tabs.setCurrentWidget(editor.forces)
    row = _force_row(doc, "left front strut")
    type_into(qtbot, editor.forces_view, _cell(editor.forces_model, row, "force_k"), "35000")
    qtbot.waitUntil(lambda: doc.robot != car)
    strut = next(e for e in doc.robot.forces if e.name == "left front strut")
    assert isinstance(strut, SpringDamper) and strut.stiffness == 35000.0
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert doc.robot == car


def test_a_road_point_typed_changes_the_road_and_undo_restores_it(editor, qtbot, car):
    doc = editor.document
    editor.tabs.setCurrentWidget(editor.road)
    type_into(qtbot, editor.road_view, _cell(editor.road_model, 1, "road_h"), "0.05")
    qtbot.waitUntil(lambda: doc.robot != car)
    assert doc.robot.road.points[1][1] == 0.05
    assert doc.robot.road.points[0] == car.road.points[0]
    doc.undo_stack.undo()
    assert doc.robot == car


@pytest.mark.parametrize("element, key, text, expected", [
    ("left front strut", "force_k", "-5", "stiffness must be a finite number >= 0"),
    ("left front strut", "force_c", "abc", "expected a number, got 'abc'"),
    ("left front strut", "force_links", "chassis; no such link",
     "'no such link' is not a link of this mechanism"),
    ("left front strut", "force_at_b", "0, abc, 0", "at must be 3 numbers"),
    ("left front tyre", "force_length", "0", "radius must be a finite number > 0"),
    ("left front tyre", "force_links", "wing", "'wing' is not a link of this mechanism"),
])
def test_a_bad_force_cell_is_refused_with_core_s_message(editor, car, element, key, text,
                                                         expected):
    doc = editor.document
    row = _force_row(doc, element)
    doc.set_text(row, key, text)
    message = doc.errors[(row, key)]
    assert f"force element {element!r}" in message and expected in message
    assert doc.robot == car  # nothing downstream sees it
    model = editor.forces_model
    assert _cell(model, row, key).data(Qt.ItemDataRole.ToolTipRole) == message  # the cell's tooltip
    doc.undo_stack.undo()
    assert not doc.errors and doc.robot == car


def test_a_road_whose_x_does_not_increase_is_refused(editor, car):
    doc = editor.document
    first = car.road.points[0][0]
    doc.set_text(2, "road_x", repr(first))
    message = doc.errors[(2, "road_x")]
    assert "road point 3" in message and "does not increase" in message
    assert doc.robot == car
    doc.set_text(1, "road_h", "abc")
    assert "road point" in doc.errors[(1, "road_h")]
    assert doc.robot == car


def test_an_edit_saved_round_trips_through_the_file(editor, tmp_path):
    doc = editor.document
    row = _force_row(doc, "left front tyre")
    assert doc.set_text(row, "force_c", "150")
    assert doc.set_text(0, "road_h", "-0.02")
    assert not doc.errors
    path = tmp_path / "car.toml"
    save_model(doc.robot, path)
    again = load_model(path)
    assert again.forces == doc.robot.forces and again.road == doc.robot.road
    tyre = next(e for e in again.forces if e.name == "left front tyre")
    assert isinstance(tyre, Tyre) and tyre.damping == 150.0
    assert again.road.points[0][1] == -0.02


def test_a_road_row_pasted_is_one_undo_step(editor, car):
    doc = editor.document
    view = editor.road_view
    editor.tabs.setCurrentWidget(editor.road)
    view.setCurrentIndex(_cell(editor.road_model, 0, "road_x"))
    assert view.paste("-12\t0.01")
    assert doc.robot.road.points[0] == (-12.0, 0.01)
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert doc.robot == car


def test_the_model_error_above_the_tables_leads_to_the_bad_road_cell(editor):
    doc = editor.document
    editor.tabs.setCurrentWidget(editor.dh_view)
    doc.set_text(3, "road_x", "0")
    assert "road point 4" in editor.model_error_label.text()
    assert editor.reveal_error()
    assert editor.tabs.currentWidget() is editor.road
    index = editor.road_view.currentIndex()
    assert (index.row(), editor.road_model.key(index.column())) == (3, "road_x")


def test_elements_and_road_points_are_added_and_removed_undoably_and_saved(qtbot, tmp_path):
    """The five-link pendulum (a mechanism) has no force element and no road: its Forces
    tab adds a spring-damper (inert until typed: a fall is the same, bit for bit) and a
    tyre, which brings the Road tab; a stiffness and free length typed into the spring
    give Hooke's tension at the start, k (L - L0); each step is one undo step, and saved."""
    pendulum = load_model(PENDULUM)
    doc = RobotDocument(pendulum)
    editor = RobotEditor(doc)
    qtbot.addWidget(editor)
    editor.resize(900, 500)
    editor.show()
    tabs = editor.tabs
    assert tabs.isTabVisible(tabs.indexOf(editor.forces))
    assert not tabs.isTabVisible(tabs.indexOf(editor.road))
    tabs.setCurrentWidget(editor.forces)
    assert editor.forces.add_action.isEnabled() and not editor.forces.remove_action.isEnabled()
    free = simulate(pendulum, 0.05, dt_out=0.01)

    editor.forces.add_action.trigger()
    spring = doc.robot.forces[0]
    assert isinstance(spring, SpringDamper) and editor.forces_model.rowCount() == 1
    assert editor.forces_view.currentIndex().row() == 0  # the new row is current
    assert np.array_equal(simulate(doc.robot, 0.05, dt_out=0.01).q, free.q)
    end = forward_kinematics(pendulum, pendulum.q_home).frames[-1][:3, 3]
    L = float(np.linalg.norm(end))  # base origin to the last link's far end, at home
    assert spring.free_length == pytest.approx(L, rel=1e-12)
    assert doc.set_text(0, "force_k", "500")
    assert doc.set_text(0, "force_length", repr(L - 0.1))
    sprung = simulate(doc.robot, 0.05, dt_out=0.01)
    assert sprung.element_forces[0, 0] == pytest.approx(500 * 0.1, rel=1e-9)
    assert np.abs(sprung.q[-1] - free.q[-1]).max() > 1e-6
    assert doc.set_text(0, "force_k", "-1")  # refused with core's message, model kept
    assert "stiffness must be a finite number >= 0" in doc.errors[(0, "force_k")]
    doc.undo_stack.undo()

    editor.forces.add_tyre_action.trigger()
    assert isinstance(doc.robot.forces[1], Tyre) and tabs.isTabVisible(tabs.indexOf(editor.road))
    tabs.setCurrentWidget(editor.road)
    for _ in range(2):
        editor.road.add_action.trigger()
    assert doc.robot.road.points == ((0.0, 0.0), (1.0, 0.0))
    assert doc.set_text(1, "road_h", "0.05")
    editor.road.add_action.trigger()
    assert doc.robot.road.points[-1] == (2.0, 0.05)
    editor.road.select(0)
    assert editor.road.remove_current()
    assert doc.robot.road.points == ((1.0, 0.05), (2.0, 0.05))
    assert not doc.errors

    path = tmp_path / "pendulum.toml"
    save_model(doc.robot, path)
    again = load_model(path)
    assert again.forces == doc.robot.forces and again.road == doc.robot.road
    steps = doc.undo_stack.count()
    assert steps == 9  # add, k, length, tyre, 2 points, h, point, remove: one step each
    for _ in range(steps):
        doc.undo_stack.undo()
    assert doc.robot == pendulum and editor.forces_model.rowCount() == 0
    assert not tabs.isTabVisible(tabs.indexOf(editor.road))
    doc.undo_stack.redo()
    assert doc.robot.forces == (spring,)


def test_a_new_element_with_a_bad_link_is_refused_naming_it(editor, car):
    doc = editor.document
    row = doc.add_force("spring-damper")
    assert doc.robot.forces[-1].name == doc.draft.forces[row].cells["force"]
    doc.set_text(row, "force_links", "base; nowhere")
    message = doc.errors[(row, "force_links")]
    assert f"force element {doc.draft.forces[row].cells['force']!r}" in message
    assert "'nowhere' is not a link of this mechanism" in message
    editor.forces.select(row)
    assert editor.forces.remove_current()
    assert not doc.errors and doc.robot == car
