"""The DH and inertia tables: model roles, typing in cells, combo delegate, copy/paste."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QComboBox

from armdyn.core import JointType
from armdyn.core.io.robot_file import load_robot
from armdyn.gui.editors.tables import ERROR_BACKGROUND

from gui_helpers import PUMA, open_robot_editor, type_into

pytestmark = pytest.mark.gui


@pytest.fixture
def editor(qtbot):
    return open_robot_editor(qtbot, PUMA)


def cell(view, row: int, key: str):
    model = view.model()
    return model.index(row, model.column_of(key))


def test_headers_show_units_and_link_colours(editor):
    dh, inertia = editor.dh_model, editor.inertia_model
    headers = [dh.headerData(c, Qt.Orientation.Horizontal) for c in range(dh.columnCount())]
    assert headers[2] == "a\n(m)" and headers[4] == "\u03b1\n(\u00b0)"
    assert "kg m\u00b2" in inertia.headerData(4, Qt.Orientation.Horizontal)
    assert inertia.headerData(1, Qt.Orientation.Vertical) == "2  shoulder"
    assert not dh.headerData(0, Qt.Orientation.Vertical, Qt.ItemDataRole.DecorationRole).isNull()


def test_cells_show_degrees_and_edit_exactly(editor):
    index = cell(editor.dh_view, 0, "alpha")
    assert index.data() == "-90"
    assert index.data(Qt.ItemDataRole.EditRole) == "-90"
    assert cell(editor.dh_view, 1, "a").data() == "0.432"


def test_set_data_through_the_model_changes_the_robot(editor):
    model = editor.inertia_model
    assert model.setData(cell(editor.inertia_view, 1, "mass"), "20")
    assert editor.document.robot.links[1].mass == 20.0
    assert cell(editor.inertia_view, 1, "mass").data(Qt.ItemDataRole.BackgroundRole) is None


def test_invalid_value_is_kept_red_with_the_reason_as_tooltip(editor):
    index = cell(editor.inertia_view, 1, "mass")
    before = editor.document.robot
    editor.inertia_model.setData(index, "-1")
    assert editor.document.robot is before
    assert index.data() == "-1"
    assert index.data(Qt.ItemDataRole.BackgroundRole) == ERROR_BACKGROUND
    tip = index.data(Qt.ItemDataRole.ToolTipRole)
    assert "link 2 ('shoulder')" in tip and "mass" in tip


def test_typing_in_the_view_edits_the_cell(editor, qtbot):
    view = editor.dh_view
    type_into(qtbot, view, cell(view, 1, "a"), "0.5")
    assert editor.document.robot.links[1].a == 0.5
    # "abc" is refused: marked, and the robot keeps a = 0.5
    type_into(qtbot, view, cell(view, 1, "a"), "abc")
    assert (1, "a") in editor.document.errors
    assert editor.document.robot.links[1].a == 0.5
    assert cell(view, 1, "a").data() == "abc"


def test_joint_type_combo_commits_on_choice(editor, qtbot):
    view = editor.dh_view
    index = cell(view, 2, "joint")
    view.setCurrentIndex(index)
    view.edit(index)
    combo = view.findChild(QComboBox)
    assert combo is not None and combo.currentText() == "revolute"
    combo.setCurrentIndex(combo.findText("prismatic"))
    combo.activated.emit(combo.currentIndex())
    assert editor.document.robot.links[2].joint == JointType.PRISMATIC


def test_copy_and_paste_a_block_of_cells(editor):
    view = editor.inertia_view
    view.clearSelection()
    block = QItemSelection(cell(view, 0, "com_x"), cell(view, 1, "com_z"))
    view.selectionModel().select(block, QItemSelectionModel.SelectionFlag.Select)
    text = view.copy()
    assert text == "0\t0\t-0.054\n-0.292\t0\t0"
    assert QGuiApplication.clipboard().text() == text
    # paste the block two rows down: one undo step
    view.clearSelection()
    view.setCurrentIndex(cell(view, 3, "com_x"))
    assert view.paste(text)
    links = editor.document.robot.links
    assert links[3].com == (0.0, 0.0, -0.054) and links[4].com == (-0.292, 0.0, 0.0)
    editor.document.undo_stack.undo()
    assert editor.document.robot == load_robot(PUMA)


def test_one_value_pasted_on_a_selection_fills_it(editor):
    view = editor.inertia_view
    view.clearSelection()
    for row in range(3):
        view.selectionModel().select(cell(view, row, "mass"),
                                     QItemSelectionModel.SelectionFlag.Select)
    assert view.paste("2.5\n")
    assert [link.mass for link in editor.document.robot.links[:3]] == [2.5] * 3


def test_delete_clears_limits_only(editor, qtbot):
    doc = editor.document
    doc.set_many([(0, "lower", "-90"), (0, "upper", "90")])
    view = editor.dh_view
    view.setFocus()
    view.setCurrentIndex(cell(view, 0, "lower"))
    view.selectionModel().select(cell(view, 0, "upper"), QItemSelectionModel.SelectionFlag.Select)
    view.selectionModel().select(cell(view, 0, "a"), QItemSelectionModel.SelectionFlag.Select)
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    assert doc.robot.links[0].limits is None and doc.robot.links[0].a == 0.0


def test_link_actions_follow_the_current_row(editor):
    editor.select_row(0)
    assert not editor.up_action.isEnabled() and editor.down_action.isEnabled()
    editor.down_action.trigger()
    assert editor.document.robot.link_names[1] == "waist"
    assert editor.current_row() == 1
    editor.add_action.trigger()
    assert editor.document.robot.n == 7 and editor.current_row() == 6
    editor.delete_action.trigger()
    assert editor.document.robot.n == 6
    editor.tabs.setCurrentWidget(editor.inertia_view)  # the inertia table shows the same row
    assert editor.current_row() == 5
