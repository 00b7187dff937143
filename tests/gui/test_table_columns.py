"""A mechanism's DH table shows its `actuated` column whole at a laptop's size: it came
last and was cut off at the right of the Robot dock for every mechanism."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelection, QItemSelectionModel

from gui_helpers import ROBOTS, flush_events

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
@pytest.mark.parametrize("name", ["fivebar_saha", "bricard", "humanoid"])
def test_the_actuated_column_is_in_sight(make_window, size, name):
    window = make_window(ROBOTS / f"{name}.toml", size=size)
    flush_events()
    view, model = window.editor.dh_view, window.editor.dh_model
    col = model.column_of("actuated")
    header = view.horizontalHeader()
    assert header.visualIndex(col) == header.visualIndex(model.column_of("joint")) + 1
    cell = view.visualRect(model.index(0, col))
    assert cell.left() >= 0 and cell.right() <= view.viewport().width()
    assert model.index(0, col).data() in ("\u2714", "\u2013")
    assert "act." in model.headerData(col, header.orientation())


def test_copy_and_paste_follow_the_columns_as_shown(make_window, qtbot):
    window = make_window(ROBOTS / "fivebar_saha.toml")
    view, model = window.editor.dh_view, window.editor.dh_model
    header = view.horizontalHeader()
    joint, a = model.column_of("joint"), model.column_of("a")
    # the block joint .. a as seen: joint, actuated, a
    selection = QItemSelection(model.index(0, joint), model.index(1, joint))
    for col in (model.column_of("actuated"), a):
        selection.select(model.index(0, col), model.index(1, col))
    view.selectionModel().select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)
    text = view.copy()
    assert text.splitlines()[0].split("\t") == ["revolute", "yes", "0.6"]
    assert text.splitlines()[1].split("\t") == ["revolute", "no", "1.1"]
    # pasted from the actuated column onwards: actuated, then a
    view.selectionModel().clearSelection()
    view.setCurrentIndex(model.index(1, model.column_of("actuated")))
    assert header.visualIndex(model.column_of("actuated")) + 1 == header.visualIndex(a)
    assert view.paste("no\t1.25")
    assert model.index(1, a).data(2) == "1.25"
    window.document.undo_stack.undo()
    assert model.index(1, a).data(2) == "1.1"
