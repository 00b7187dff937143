"""The main window driven as a user would: open, edit, undo, links, save, close, pose."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from armdyn.core import forward_kinematics
from armdyn.core.io.robot_file import load_robot

from gui_helpers import PLANAR, PUMA, SCARA, flush_events, type_into

pytestmark = pytest.mark.gui
#: the module's shared window (tests/gui/conftest.py): the PUMA at 1100x720
WINDOW_FILE, WINDOW_SIZE = PUMA, (1100, 720)


@pytest.fixture
def window(window):
    """The shared window (tests/gui/conftest.py) with the PUMA freshly loaded, and the
    view's layers as a new window has them."""
    for action in (window.frames_action, window.com_action, window.ortho_action):
        action.setChecked(False)
    window.floor_action.setChecked(True)
    return window


@pytest.fixture
def no_dialogs(monkeypatch):
    """Record error boxes instead of showing them (a modal box would block the test)."""
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or 0)
    return shown


def answer_unsaved(monkeypatch, button: QMessageBox.StandardButton) -> list[str]:
    """Make the "Unsaved changes" question answer `button`; returns the questions asked."""
    asked: list[str] = []

    def exec_(box):  # the question is a plain-text box of its own (`ask_unsaved`)
        assert box.windowTitle() == "Unsaved changes", box.windowTitle()
        asked.append(box.text())
        return button

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    return asked


def inertia_cell(window, row: int, key: str):
    model = window.editor.inertia_model
    return model.index(row, model.column_of(key))


def dh_cell(window, row: int, key: str):
    model = window.editor.dh_model
    return model.index(row, model.column_of(key))


def test_opens_with_the_robot_and_every_panel(window):
    assert window.document.robot.name.startswith("PUMA 560")
    assert "puma560_saha.toml" in window.windowTitle()
    assert len(window.view3d.actors) > 20
    assert window.pose_panel.joint_widgets(5)[0].isEnabled()
    assert window.validity_label.text().endswith("valid")


def test_bundled_robot_menu_opens_each_robot(window):
    titles = [a.text() for a in window.bundled_menu.actions()]
    assert any(t.startswith("SCARA") for t in titles)
    action = next(a for a in window.bundled_menu.actions() if a.text().startswith("SCARA"))
    action.trigger()
    assert window.document.robot == load_robot(SCARA)
    assert "joint 4" in window.view3d.actors and "joint 5" not in window.view3d.actors
    assert window.files.recent.paths()[0] == SCARA.resolve()


def test_editing_a_cell_moves_the_3d_view(window):
    before = window.view3d.actors["joint 3"].user_matrix.copy()
    window.editor.dh_model.setData(dh_cell(window, 1, "a"), "0.6")
    robot = window.document.robot
    assert robot.links[1].a == 0.6
    frames = forward_kinematics(robot, window.pose).frames
    after = window.view3d.actors["joint 3"].user_matrix
    np.testing.assert_allclose(after, frames[2])
    assert not np.allclose(after, before)
    assert window.isWindowModified()


def test_typing_in_the_dh_table_moves_the_arm(window, qtbot):
    window.editor.tabs.setCurrentIndex(0)
    view = window.editor.dh_view
    type_into(qtbot, view, dh_cell(window, 2, "alpha"), "45")
    robot = window.document.robot
    assert robot.links[2].alpha == pytest.approx(np.pi / 4)
    frames = forward_kinematics(robot, window.pose).frames
    np.testing.assert_allclose(window.view3d.actors["joint 4"].user_matrix, frames[3])
    assert window.undo_action.text() == "&Undo Edit \u03b1 of elbow"


def test_invalid_values_are_refused_marked_and_reported(window, qtbot):
    robot = window.document.robot
    matrices = {k: a.user_matrix.copy() for k, a in window.view3d.actors.items()}
    poses = []
    window.session.pose_changed.connect(poses.append)
    window.editor.inertia_model.setData(inertia_cell(window, 1, "mass"), "-1")
    window.editor.inertia_model.setData(inertia_cell(window, 2, "ixx"), "abc")
    assert window.document.robot is robot
    assert poses == []  # nothing downstream heard of it
    assert {k: a.user_matrix for k, a in window.view3d.actors.items()}.keys() == matrices.keys()
    assert "2 invalid cells" in window.validity_label.text()
    assert "link 2 ('shoulder'), field 'mass'" in window.statusBar().currentMessage()
    assert inertia_cell(window, 2, "ixx").data(Qt.ItemDataRole.ToolTipRole).startswith(
        "link 3 ('elbow'), field 'inertia'")
    if window.run_panel is not None:
        assert not window.run_panel.isEnabled()
    # undo both: valid again, run panel back
    window.undo_action.trigger()
    window.undo_action.trigger()
    assert window.document.is_valid and window.validity_label.text().endswith("valid")
    if window.run_panel is not None:
        assert window.run_panel.isEnabled()
    window.redo_action.trigger()
    assert "1 invalid cell" in window.validity_label.text()


def test_add_and_delete_links_rebuild_the_3d_view(window):
    editor = window.editor
    editor.add_action.trigger()
    assert window.document.robot.n == 7
    assert "joint 7" in window.view3d.actors and window.pose.shape == (7,)
    assert window.pose_panel.joint_widgets(6)[0] is not None
    editor.select_row(0)
    editor.delete_action.trigger()
    assert window.document.robot.n == 6
    assert "joint 7" not in window.view3d.actors
    assert window.document.robot.link_names[0] == "shoulder"
    window.undo_action.trigger()
    assert window.document.robot.link_names[0] == "waist"


def test_save_and_reopen_gives_the_same_robot(window, tmp_path, monkeypatch):
    window.editor.inertia_model.setData(inertia_cell(window, 0, "mass"), "12.5")
    window.editor.dh_model.setData(dh_cell(window, 2, "alpha"), "45")
    target = tmp_path / "puma_edited.toml"
    monkeypatch.setattr(window.files, "ask_save_path", lambda *a: target)
    assert window.files.save()  # a bundled file: Save asks for a new name
    assert not window.isWindowModified() and window.document.path == target
    reread = load_robot(target)
    assert reread == window.document.robot
    assert "alpha = 45.0" in target.read_text()
    window.editor.inertia_model.setData(inertia_cell(window, 0, "mass"), "13")
    assert window.files.save()  # now to the same file, without asking
    assert load_robot(target).links[0].mass == 13.0
    window.files.load(PLANAR)
    window.files.load(target)
    assert window.document.robot == load_robot(target)


def test_save_is_refused_while_a_cell_is_invalid(window, tmp_path, no_dialogs):
    window.editor.inertia_model.setData(inertia_cell(window, 0, "mass"), "0")
    assert not window.files.save_to(tmp_path / "x.toml")
    assert not (tmp_path / "x.toml").exists()
    assert "mass" in no_dialogs[-1]


def test_closing_with_unsaved_edits_asks_first(make_window, monkeypatch):
    window = make_window(PUMA)
    window.editor.inertia_model.setData(inertia_cell(window, 0, "mass"), "12.5")
    asked = answer_unsaved(monkeypatch, QMessageBox.StandardButton.Cancel)
    assert not window.close()
    assert window.isVisible() and len(asked) == 1
    asked = answer_unsaved(monkeypatch, QMessageBox.StandardButton.Discard)
    assert window.close()
    assert not window.isVisible() and len(asked) == 1


def test_opening_another_file_with_unsaved_edits_asks_first(window, monkeypatch, tmp_path):
    window.editor.inertia_model.setData(inertia_cell(window, 0, "mass"), "12.5")
    answer_unsaved(monkeypatch, QMessageBox.StandardButton.Cancel)
    assert not window.files.open(SCARA)
    assert window.document.robot.links[0].mass == 12.5
    target = tmp_path / "saved.toml"
    monkeypatch.setattr(window.files, "ask_save_path", lambda *a: target)
    answer_unsaved(monkeypatch, QMessageBox.StandardButton.Save)
    assert window.files.open(SCARA)
    assert load_robot(target).links[0].mass == 12.5  # saved on the way
    assert window.document.robot == load_robot(SCARA)


def test_a_broken_file_is_reported_and_the_robot_kept(window, tmp_path, no_dialogs):
    bad = tmp_path / "bad.toml"
    bad.write_text(PUMA.read_text().replace("mass = 15.761", "mass = -1"))
    robot = window.document.robot
    assert not window.files.load(bad)
    assert window.document.robot is robot
    assert "link 2 ('shoulder'), field 'mass'" in no_dialogs[-1]


def test_pose_sliders_move_the_arm_and_announce_the_pose(window):
    poses = []
    window.session.pose_changed.connect(poses.append)
    slider, spin = window.pose_panel.joint_widgets(1)
    spin.setValue(30.0)
    assert poses and poses[-1][1] == pytest.approx(np.radians(30.0))
    frames = forward_kinematics(window.document.robot, poses[-1]).frames
    np.testing.assert_allclose(window.view3d.actors["joint 3"].user_matrix, frames[2])
    assert slider.value() == 300  # 0.1 deg ticks
    window.pose_panel.home_button.click()
    assert np.all(poses[-1] == window.document.robot.q_home)


def test_editing_theta_moves_that_joint_and_keeps_the_others(window):
    window.set_pose(np.radians([10, 20, 0, 0, 0, 0]))
    window.editor.dh_model.setData(dh_cell(window, 2, "theta"), "45")
    assert window.pose == pytest.approx(np.radians([10, 20, 45, 0, 0, 0]))


def test_new_file_starts_an_unsaved_robot(window):
    assert window.files.new()
    assert window.document.path is None and window.document.robot.n == 2
    assert "not saved" in window.windowTitle()


def test_a_run_fills_plots_and_playback_and_exports(window, qtbot, tmp_path, monkeypatch):
    if window.run_panel is None or window.plots is None or window.playback is None:
        pytest.skip("the run, plots and playback panels are not there yet")
    with qtbot.waitSignal(window.run_panel.finished, timeout=30000):
        window.run_panel.start_inverse(0.2)
    traj = window.trajectory
    assert traj is not None and len(traj) > 10
    assert window.playback.trajectory() is traj
    # the last frame shows the end pose in the 3D view; the window's pose stays
    window.show_last_frame()
    frames = forward_kinematics(window.document.robot, traj.q[-1]).frames
    np.testing.assert_allclose(window.view3d.actors["joint 3"].user_matrix, frames[2],
                               atol=1e-12)
    assert np.all(window.pose == window.document.robot.q_home)
    # exports: 3D view PNG, results CSV, plot images
    paths = iter([tmp_path / "view.png", tmp_path / "run.csv"])
    monkeypatch.setattr(window.files, "ask_save_path", lambda *a: next(paths))
    monkeypatch.setattr(window.files, "ask_directory", lambda *a: tmp_path / "plots")
    assert window.export_view_png() and (tmp_path / "view.png").stat().st_size > 1000
    assert window.export_csv_action.isEnabled()
    assert window.export_results_csv()
    assert (tmp_path / "run.csv").read_text().count("\n") >= len(traj)
    assert window.export_plot_images()
    assert any((tmp_path / "plots").glob("*.png"))
    # a valid edit makes the results stale: cleared, CSV export off
    window.editor.inertia_model.setData(inertia_cell(window, 0, "mass"), "12")
    assert window.trajectory is None and not window.export_csv_action.isEnabled()


def test_recent_files_menu_lists_opened_files(window):
    window.files.open(PLANAR)
    window.recent_menu.aboutToShow.emit()
    names = [a.text() for a in window.recent_menu.actions()]
    assert names[:2] == ["two_link_planar.toml", "puma560_saha.toml"]
    assert "Clear List" in names


def test_saving_while_typing_in_a_cell_keeps_what_was_typed(window, qtbot, tmp_path):
    window.editor.tabs.setCurrentWidget(window.editor.inertia_view)
    view = window.editor.inertia_view
    view.setFocus()
    view.setCurrentIndex(inertia_cell(window, 0, "mass"))
    qtbot.keyClick(view, "7")  # typing, no Return yet
    assert view.state() == view.State.EditingState
    assert window.files.save_to(tmp_path / "typed.toml")
    assert load_robot(tmp_path / "typed.toml").links[0].mass == 7.0


def test_lab_and_compare_panels_are_built_only_when_first_opened(make_window):
    """The hidden Lab and Compare docks cost nothing at start: their panels appear the
    first time the View-menu action opens them (and then follow the window's model)."""
    window = make_window()
    assert window.lab_dock.widget() is None and window.compare_dock.widget() is None
    window.lab_action.trigger()
    flush_events()
    assert window.lab_dock.widget() is window.lab and window.lab.isVisible()
    assert window.lab.robot is window.document.robot
    assert window.compare_dock.widget() is None
    window.compare.action.trigger()
    flush_events()
    assert window.compare_dock.widget() is window.compare and window.compare.isVisible()
