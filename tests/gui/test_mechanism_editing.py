"""Editing mechanisms in the Robot dock (issue #7): one chain at a time in the link
tables, the Chains and Loops tabs, the assembly settings; undo, paste, errors per cell
and in the banner; every valid edit reaches the 3D view, the pose and runs; Save and
reopen give back exactly what was edited.

Every check is against core: the mechanism downstream, files read back by
`load_mechanism`, loop closure by `loop_residual`.
"""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocumentFragment

from armdyn.core import LoopJointType, Mechanism, forward_kinematics, load_mechanism, loop_residual
from armdyn.gui.scene.arm_scene import loop_points, scene_frames
from armdyn.gui.editors.robot_editor import ALL_CHAINS

from gui_helpers import PUMA, ROBOTS, flush_events

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("no_modal_boxes")]

FIVEBAR = ROBOTS / "fivebar_saha.toml"
#: the module's shared window (tests/gui/conftest.py): the five-bar, at 1280x800
WINDOW_FILE, WINDOW_SIZE = FIVEBAR, (1280, 800)
SCRAPER = ROBOTS / "carpet_scraper_saha.toml"
HUMANOID = ROBOTS / "humanoid.toml"


def closure(mech: Mechanism, q) -> float:
    return float(np.max(np.abs(loop_residual(mech, q)), initial=0.0))


def set_cell(model, row: int, key: str, text) -> None:
    model.setData(model.index(row, model.column_of(key)), text)


def shown_rows(view) -> list[int]:
    return [r for r in range(view.model().rowCount()) if not view.isRowHidden(r)]


# ----------------------------------------------------------------------------------
# One chain at a time
# ----------------------------------------------------------------------------------

def test_the_link_tables_show_one_chain_numbered_as_core_counts(window):
    editor = window.editor
    combo = editor.chain_combo
    assert editor.chain_bar.isVisible()
    assert [combo.itemText(i) for i in range(combo.count())] == ["leg 1", "leg 2", ALL_CHAINS]
    assert shown_rows(editor.dh_view) == [0, 1] == shown_rows(editor.inertia_view)
    combo.activated.emit(1)
    assert shown_rows(editor.dh_view) == [2, 3]
    vertical = Qt.Orientation.Vertical
    assert editor.dh_model.headerData(3, vertical) == "2"  # leg 2, link 2
    assert "chain 'leg 2'" in editor.dh_model.headerData(3, vertical,
                                                         Qt.ItemDataRole.ToolTipRole)
    assert "joints 3\u20134" in editor.chain_info.text()
    editor.show_chain(None)  # every chain, each named where it starts
    assert shown_rows(editor.dh_view) == [0, 1, 2, 3]
    assert editor.dh_model.headerData(2, vertical) == "2.1"  # chain 2, link 1


def test_a_serial_robot_looks_as_before(window):
    window.files.load(PUMA)
    editor = window.editor
    assert not editor.chain_bar.isVisible()
    tabs = editor.tabs
    assert not any(tabs.isTabVisible(tabs.indexOf(page))
                   for page in (editor.placement_view, editor.chains, editor.loops))
    assert editor.dh_model.columnCount() == 8
    assert shown_rows(editor.dh_view) == list(range(6))


def test_a_refused_link_cell_names_the_chain_and_the_link_within_it(window):
    set_cell(window.editor.inertia_model, 3, "mass", "-1")
    reason = window.document.errors[(3, "mass")]
    assert reason.startswith("chain 'leg 2', link 2 ('leg 2 distal'), field 'mass'")
    set_cell(window.editor.dh_model, 2, "a", "abc")
    assert window.document.errors[(2, "a")].startswith("chain 'leg 2', link 1 ")


def test_add_and_delete_act_on_the_chain_shown(window):
    editor = window.editor
    editor.show_chain(1)
    editor.select_row(3)
    editor.add_action.trigger()
    mech = window.document.robot
    assert [len(c.links) for c in mech.chains] == [2, 3]  # a new actuated joint: 3 DOF
    assert mech.dof == 3 and closure(mech, window.pose) < 1e-8
    assert shown_rows(editor.dh_view) == [2, 3, 4] and editor.current_row() == 4
    assert f"joint {mech.n}" in window.view3d.actors
    editor.delete_action.trigger()
    assert window.document.robot == load_mechanism(FIVEBAR)
    editor.show_chain(0)
    editor.select_row(0)
    assert editor.delete_action.isEnabled()
    window.document.remove_links(0, 1)
    editor.select_row(0)
    assert not editor.delete_action.isEnabled()  # the chain's last link: remove the chain
    assert not window.document.remove_links(0, 1)


# ----------------------------------------------------------------------------------
# Loops
# ----------------------------------------------------------------------------------

def test_a_valid_loop_edit_reaches_the_mechanism_the_pose_and_the_3d_view(window):
    loops = window.editor.loops.model
    set_cell(loops, 0, "at_a", "-0.1, 0, 0")  # the pin 0.1 m back along leg 1's distal
    mech = window.document.robot
    assert mech.loops[0].at[0] == (-0.1, 0.0, 0.0)
    assert window.document.is_valid
    assert closure(mech, window.pose) < 1e-8
    points = loop_points(mech, scene_frames(forward_kinematics(mech, window.pose)))
    np.testing.assert_allclose(points[0, 0], points[0, 1], atol=1e-8)
    actor = window.view3d.actors["cut 1 a"]  # the sleeve, drawn in leg 1 distal's frame
    centre = np.array(actor.GetMapper().GetInput().GetCenter())
    m = actor.user_matrix
    np.testing.assert_allclose(m[:3, :3] @ centre + m[:3, 3], points[0, 0], atol=1e-6)
    assert window.view3d.loop_gaps[0] < 1e-8
    assert window.run_panel.isEnabled()


def test_a_loop_that_cannot_close_is_named_in_the_banner_and_the_cell_keeps_the_text(window):
    before = window.document.robot
    loops = window.editor.loops.model
    set_cell(loops, 0, "at_a", "5, 0, 0")
    doc = window.document
    assert doc.robot is before
    assert "loop 'E'" in doc.model_error and "cannot be closed" in doc.model_error
    assert doc.errors[(0, "at_a")] == doc.model_error
    banner = window.editor.model_error_label
    assert banner.isVisible() and "loop 'E'" in banner.text()
    assert loops.index(0, loops.column_of("at_a")).data() == "5, 0, 0"
    assert not window.run_panel.isEnabled()
    window.undo_action.trigger()
    assert doc.is_valid and doc.robot == before and not banner.isVisible()


def test_text_that_is_not_a_point_is_refused_in_its_cell_naming_the_loop(window):
    loops = window.editor.loops.model
    set_cell(loops, 0, "axis_b", "0, abc, 1")
    reason = window.document.errors[(0, "axis_b")]
    assert reason.startswith("loop 'E', field 'axis'") and "abc" in reason
    assert loops.index(0, loops.column_of("axis_b")).data() == "0, abc, 1"
    assert window.document.robot == load_mechanism(FIVEBAR)
    set_cell(loops, 0, "axis_b", "0 0 2")  # any length, blanks as separators
    assert window.document.robot.loops[0].axis[1] == (0.0, 0.0, 2.0)


def test_renaming_a_link_renames_it_in_the_loops_in_one_undo_step(window):
    set_cell(window.editor.dh_model, 1, "name", "left distal")
    mech = window.document.robot
    assert mech.loops[0].links == ("left distal", "leg 2 distal")
    loops = window.editor.loops.model
    assert loops.index(0, loops.column_of("link_a")).data() == "left distal"
    window.undo_action.trigger()
    assert window.document.robot == load_mechanism(FIVEBAR)


def test_the_loop_joint_type_and_links_are_chosen_from_combos(window, qtbot):
    from PySide6.QtWidgets import QComboBox
    view = window.editor.loops.view
    window.editor.tabs.setCurrentWidget(window.editor.loops)
    model = view.model()
    index = model.index(0, model.column_of("link_b"))
    view.setCurrentIndex(index)
    view.edit(index)
    combo = view.indexWidget(index)
    assert isinstance(combo, QComboBox)
    items = [combo.itemText(i) for i in range(combo.count())]
    assert items == ["leg 1 proximal", "leg 1 distal", "leg 2 proximal", "leg 2 distal", "base"]
    view.closeEditor(combo, view.itemDelegate().EndEditHint.NoHint)
    index = model.index(0, model.column_of("loop_joint"))
    view.edit(index)
    combo = view.indexWidget(index)
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "revolute", "spherical", "prismatic", "gear"]
    combo.setCurrentIndex(1)
    combo.activated.emit(1)
    flush_events()
    assert window.document.robot.loops[0].joint == LoopJointType.SPHERICAL
    window.editor.tabs.setCurrentIndex(0)


def test_a_loop_made_a_gear_takes_a_ratio_refused_with_cores_message_and_undone(window):
    """The kind "gear": the points and axes no longer apply (not editable), the ratio
    does; a missing, non-numeric or zero ratio is refused in its cell with core's
    message naming the loop and field; a valid one with the independent joints the
    gear's extra freedom needs gives core's mechanism; every step undoes."""
    editor, doc = window.editor, window.document
    original = doc.robot
    loops = editor.loops.model
    ratio = loops.index(0, loops.column_of("loop_ratio"))
    assert not ratio.flags() & Qt.ItemFlag.ItemIsEditable  # a revolute loop has none
    set_cell(loops, 0, "loop_joint", "gear")
    assert ratio.flags() & Qt.ItemFlag.ItemIsEditable
    at_a = loops.index(0, loops.column_of("at_a"))
    assert not at_a.flags() & Qt.ItemFlag.ItemIsEditable and at_a.data() == ""
    assert doc.robot is original and "needs a ratio" in doc.errors[(0, "loop_ratio")]
    for text, words in (("abc", "must be a number, got 'abc'"), ("0", "other than 0")):
        set_cell(loops, 0, "loop_ratio", text)
        reason = doc.errors[(0, "loop_ratio")]
        assert reason.startswith("loop 'E', field 'ratio'") and words in reason, reason
        assert ratio.data() == text and doc.robot is original
    set_cell(loops, 0, "loop_ratio", "-0.5")  # the gear leaves 3 freedoms, 2 are held
    assert "degree(s) of freedom" in doc.model_error
    editor.loops.assembly.set_independent(("leg 1 proximal", "leg 1 distal",
                                           "leg 2 proximal"))
    mech = doc.robot
    assert doc.is_valid and mech.loops[0].joint == LoopJointType.GEAR
    assert mech.loops[0].ratio == -0.5 and mech.dof == 3
    assert mech.loops[0].at == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))  # a gear has no point
    assert closure(mech, window.pose) < 1e-12
    assert "cut 1 a" not in window.view3d.actors  # nothing drawn for a gear
    for _ in range(5):
        window.undo_action.trigger()
    assert doc.robot == original and doc.is_valid
    assert "cut 1 a" in window.view3d.actors


def test_loops_added_and_removed_with_the_assembly_settings(window):
    editor, doc = window.editor, window.document
    original = doc.robot
    editor.tabs.setCurrentWidget(editor.loops)
    editor.loops.select(0)
    editor.loops.remove_action.trigger()  # E gone: two free legs, 4 DOF
    assert doc.robot.loops == () and doc.robot.dof == 4
    editor.show_chain(0)
    editor.loops.add_action.trigger()  # pins leg 1's end where it is: leg 1 locked
    assert doc.model_error and doc.robot.loops == ()  # its actuated joint cannot move
    assert "independent" in doc.model_error or "fix the pose" in doc.model_error
    form = editor.loops.assembly
    form.set_independent(("leg 2 proximal", "leg 2 distal"))
    mech = doc.robot
    assert doc.is_valid and len(mech.loops) == 1 and mech.dof == 2
    assert mech.loops[0].links == ("leg 1 distal", "base")
    assert mech.independent == (2, 3)
    # the button shows the list elided to its width, the tooltip all of it
    tip = QTextDocumentFragment.fromHtml(form.independent_button.toolTip()).toPlainText()
    assert tip.startswith("leg 2 proximal, leg 2 distal")  # (escaped: names are plain text)
    shown = form.independent_button.text()
    assert shown and ("leg 2 proximal, leg 2 distal".startswith(shown.rstrip("…"))
                      or shown == "leg 2 proximal, leg 2 distal")
    assert closure(mech, window.pose) < 1e-8
    for _ in range(3):
        window.undo_action.trigger()
    assert doc.robot == original and doc.is_valid
    editor.tabs.setCurrentIndex(0)


def test_the_tolerance_is_refused_in_place_then_applied(window, qtbot):
    form = window.editor.loops.assembly
    window.editor.tabs.setCurrentWidget(window.editor.loops)
    form.tolerance_edit.setFocus()
    form.tolerance_edit.selectAll()
    qtbot.keyClicks(form.tolerance_edit, "0.5")
    qtbot.keyClick(form.tolerance_edit, "\r")
    reason = window.document.errors[(0, "tolerance")]
    assert "tolerance" in reason and "(0, 0.01]" in reason
    assert "background" in form.tolerance_edit.styleSheet()
    assert form.tolerance_edit.text() == "0.5"
    form.tolerance_edit.setText("1e-9")
    form.tolerance_edit.editingFinished.emit()
    assert window.document.robot.assembly.tolerance == 1e-9
    assert form.tolerance_edit.styleSheet() == ""
    window.editor.tabs.setCurrentIndex(0)


def test_paste_into_the_loops_table_is_one_undo_step(window):
    view = window.editor.loops.view
    model = view.model()
    view.setCurrentIndex(model.index(0, model.column_of("at_a")))
    assert view.paste("-0.1, 0, 0\t0.1, 0, 0")  # both points 0.1 m back: still closes
    mech = window.document.robot
    assert mech.loops[0].at == ((-0.1, 0.0, 0.0), (0.1, 0.0, 0.0))
    assert window.document.undo_stack.undoText() == "Paste (2 cells)"
    view.setCurrentIndex(model.index(0, model.column_of("at_a")))
    assert view.copy() == "-0.1, 0, 0"
    window.undo_action.trigger()
    assert window.document.robot == load_mechanism(FIVEBAR)


def test_the_banner_shows_the_cell_core_names(window):
    editor = window.editor
    set_cell(editor.dh_model, 1, "name", "leg 2 distal")  # a duplicate link name
    assert "duplicate link name" in window.document.model_error
    assert "Show" in editor.model_error_label.text()
    assert editor.reveal_error()
    assert editor.tabs.currentWidget() is editor.dh_view
    assert editor.dh_view.currentIndex().row() in (1, 3)
    window.undo_action.trigger()
    set_cell(editor.loops.model, 0, "link_b", "nowhere")
    editor.tabs.setCurrentIndex(0)
    assert editor.reveal_error()
    assert editor.tabs.currentWidget() is editor.loops
    assert editor.loops.view.currentIndex().column() == editor.loops.model.column_of("link_b")
    editor.tabs.setCurrentIndex(0)


# ----------------------------------------------------------------------------------
# Chains
# ----------------------------------------------------------------------------------

def test_chains_renamed_moved_added_and_removed(window):
    editor, doc = window.editor, window.document
    chains = editor.chains.model
    set_cell(chains, 0, "chain", "left leg")
    assert doc.robot.chains[0].name == "left leg"
    assert editor.chain_combo.itemText(0) == "left leg"
    set_cell(chains, 1, "base_xyz", "1.25, 0, 0")  # leg 2 moved: the loop closes again
    mech = doc.robot
    assert mech.chains[1].base.xyz == (1.25, 0.0, 0.0) and closure(mech, window.pose) < 1e-8
    set_cell(chains, 1, "base_rpy", "0, 0, 90")  # degrees, converted exactly
    assert doc.robot.chains[1].base.rpy[2] == np.pi / 2 or doc.model_error
    window.undo_action.trigger()
    editor.chains.add_action.trigger()  # a free chain with one actuated link: 3 DOF
    mech = doc.robot
    assert [c.name for c in mech.chains] == ["left leg", "leg 2", "chain 3"]
    assert mech.dof == 3 and doc.is_valid
    assert editor.chain_combo.count() == 4
    editor.chains.select(2)
    editor.chains.remove_action.trigger()
    assert [c.name for c in doc.robot.chains] == ["left leg", "leg 2"]
    for _ in range(4):
        window.undo_action.trigger()
    assert doc.robot == load_mechanism(FIVEBAR) and not window.isWindowModified()


def test_a_parent_cycle_is_refused_naming_the_chain(window):
    window.files.load(HUMANOID)
    doc, chains = window.document, window.editor.chains.model
    before = doc.robot
    set_cell(chains, 0, "parent", "head")  # torso on the head, which is on the torso
    assert doc.robot is before
    assert "cycle" in doc.model_error and "chain 'torso'" in doc.model_error
    assert doc.errors[(0, "parent")] == doc.model_error
    assert "cycle" in window.editor.model_error_label.text()
    set_cell(chains, 0, "parent", "")  # empty: the base
    assert doc.is_valid and doc.robot == before
    assert chains.index(0, chains.column_of("parent")).data() == "base"


def test_reparenting_a_chain_moves_it_with_its_new_link(window):
    window.files.load(HUMANOID)
    doc, chains = window.document, window.editor.chains.model
    row = [c.name for c in doc.robot.chains].index("left arm")
    set_cell(chains, row, "parent", "abdomen")
    mech = doc.robot
    assert mech.chains[row].parent == "abdomen"
    first = mech.joint_names.index("left upper arm")
    assert mech.parent[first] == mech.joint_names.index("abdomen")
    np.testing.assert_allclose(window.view3d.actors[f"joint {first + 1}"].user_matrix,
                               forward_kinematics(mech, window.pose).joint_frames[first],
                               atol=1e-12)


# ----------------------------------------------------------------------------------
# Save and reopen
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [FIVEBAR, SCRAPER], ids=["fivebar", "scraper"])
def test_edits_save_and_reopen_exactly(window, tmp_path, path):
    window.files.load(path)
    editor, doc = window.editor, window.document
    set_cell(editor.chains.model, 0, "chain", "first chain")
    set_cell(editor.loops.model, 0, "loop", "renamed loop")
    set_cell(editor.chains.model, 1, "base_rpy", "0, 0, 1e-7")  # a tiny turn, in degrees
    editor.loops.assembly.tolerance_edit.setText("2.5e-9")
    editor.loops.assembly.tolerance_edit.editingFinished.emit()
    set_cell(editor.dh_model, 0, "name", "first link")  # renamed in loops and parents too
    assert doc.is_valid, doc.errors
    mech = doc.robot
    saved = tmp_path / "edited.toml"
    assert window.files.save_to(saved)
    assert load_mechanism(saved) == mech
    text = saved.read_text(encoding="utf-8")
    assert 'name = "first chain"' in text and 'name = "renamed loop"' in text
    assert "tolerance = 2.5e-09" in text
    window.files.load(PUMA)
    assert window.files.load(saved)
    assert doc.robot == mech
    assert doc.draft.chains[0].cells["chain"] == "first chain"
    assert not window.isWindowModified()
