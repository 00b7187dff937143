"""The "Friction and drives" table: each joint's viscous and Coulomb friction, gear ratio
and rotor inertia, edited like every other cell (undoable, refused cells red with core's
reason), reaching the model the runs use and the file it is saved to."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from armdyn.core import inverse_dynamics
from armdyn.core.io.model_files import save_model
from armdyn.core.io.robot_file import load_robot
from armdyn.gui.editors.tables import ERROR_BACKGROUND

from gui_helpers import PUMA, ROBOTS, open_robot_editor, type_into

pytestmark = pytest.mark.gui


def _cell(view, row: int, key: str):
    model = view.model()
    return model.index(row, model.column_of(key))


def test_drive_cells_reach_the_dynamics_undo_and_the_file(qtbot, tmp_path):
    editor = open_robot_editor(qtbot, PUMA, (900, 400))
    view, doc = editor.drive_view, editor.document
    editor.tabs.setCurrentWidget(view)
    rigid = doc.robot
    # defaults as core has them: no friction, a ratio of 1; units by joint type
    assert _cell(view, 1, "gear_ratio").data() == "1"
    assert _cell(view, 1, "friction_viscous").data(Qt.ItemDataRole.ToolTipRole) == \
        "0 N m s/rad"
    for key, text in (("gear_ratio", "60"), ("rotor_inertia", "2e-4"),
                      ("friction_viscous", "0.8")):
        type_into(qtbot, view, _cell(view, 1, key), text)
    geared = doc.robot
    assert (geared.links[1].gear_ratio, geared.links[1].rotor_inertia,
            geared.links[1].friction_viscous) == (60.0, 2e-4, 0.8)
    # the drive torque grows by the reflected rotor inertia r^2 I_r qdd and c_v qd, at
    # joint 2 only
    q, qd, qdd = rigid.q_home, np.full(6, 0.5), np.full(6, 2.0)
    extra = inverse_dynamics(geared, q, qd, qdd) - inverse_dynamics(rigid, q, qd, qdd)
    assert extra == pytest.approx([0, 60.0 ** 2 * 2e-4 * 2.0 + 0.8 * 0.5, 0, 0, 0, 0],
                                  abs=1e-9)
    # saved, and read back
    path = tmp_path / "geared.toml"
    save_model(geared, path)
    assert load_robot(path).links[1].gear_ratio == 60.0
    # each edit is one undo step
    doc.undo_stack.undo()
    assert doc.robot.links[1].friction_viscous == 0.0
    assert doc.robot.links[1].gear_ratio == 60.0
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.robot == rigid


def test_a_refused_drive_cell_is_red_with_cores_reason(qtbot):
    editor = open_robot_editor(qtbot, PUMA, (900, 400))
    view, doc = editor.drive_view, editor.document
    before = doc.robot
    for key, text in (("gear_ratio", "0"), ("friction_coulomb", "-1")):
        index = _cell(view, 2, key)
        editor.drive_model.setData(index, text)
        assert doc.robot is before
        assert index.data(Qt.ItemDataRole.BackgroundRole) == ERROR_BACKGROUND
        tip = index.data(Qt.ItemDataRole.ToolTipRole)
        assert "link 3" in tip and key in tip, tip


def test_a_mechanism_with_loops_refuses_friction_by_name(qtbot):
    editor = open_robot_editor(qtbot, ROBOTS / "fourbar.toml", (900, 400))
    doc = editor.document
    before = doc.robot
    index = _cell(editor.drive_view, 0, "friction_viscous")
    editor.drive_model.setData(index, "0.5")
    assert doc.robot is before
    tip = index.data(Qt.ItemDataRole.ToolTipRole)
    assert "loops" in tip and "friction_viscous" in tip, tip
