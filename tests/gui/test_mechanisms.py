"""Mechanisms in the window (issue #7): open, draw, drag, edit, run, stop, save, reopen.

Everything is checked against core: assembled poses close the loops, the drawn cut
joints sit where core's kinematics puts them, the plotted torques are the run's.
"""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from armdyn.core import Mechanism, forward_kinematics, load_mechanism, loop_residual
from armdyn.core import run_inverse_dynamics
from armdyn.gui.scene.arm_scene import loop_points, scene_frames
from armdyn.gui.panels.run_panel import FallMethod

from gui_helpers import PUMA, ROBOTS, flush_events, plots_final

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("no_modal_boxes")]

FIVEBAR = ROBOTS / "fivebar_saha.toml"
#: the module's shared window (tests/gui/conftest.py): the five-bar, at 1280x800
WINDOW_FILE, WINDOW_SIZE = FIVEBAR, (1280, 800)
SCRAPER = ROBOTS / "carpet_scraper_saha.toml"
FOURBAR = ROBOTS / "fourbar.toml"
MECHANISM_FILES = sorted(p for p in ROBOTS.glob("*.toml")
                         if 'format = "armdyn-mechanism/1"' in p.read_text(encoding="utf-8"))


def closure(mech: Mechanism, q) -> float:
    r = loop_residual(mech, q)
    return float(np.max(np.abs(r), initial=0.0))


@pytest.mark.parametrize("path", MECHANISM_FILES, ids=lambda p: p.stem)
def test_every_bundled_mechanism_opens_from_the_menu_and_is_drawn(window, path):
    action = next(a for a in window.bundled_mechanism_menu.actions()
                  if a.statusTip() == str(path))
    action.trigger()
    mech = window.document.robot
    assert isinstance(mech, Mechanism) and mech == load_mechanism(path)
    assert window.files.recent.paths()[0] == path.resolve()
    view = window.view3d
    frames = scene_frames(forward_kinematics(mech, window.pose))
    for i in range(mech.n):  # every joint body on core's joint frame
        np.testing.assert_allclose(view.actors[f"joint {i + 1}"].user_matrix,
                                   forward_kinematics(mech, window.pose).joint_frames[i],
                                   atol=1e-12)
    for c, chain in enumerate(mech.chains):  # every chain root marked
        assert f"root {c + 1}" in view.actors
    points = loop_points(mech, frames)
    for l in range(len(mech.loops)):  # both attachment points drawn; closed: no gap
        assert {f"cut {l + 1} a", f"cut {l + 1} b"} <= set(view.actors)
        assert not view.actors[f"gap {l + 1}"].GetVisibility()
        np.testing.assert_allclose(points[l, 0], points[l, 1], atol=1e-8)
    assert closure(mech, window.pose) < 1e-8
    assert f"{mech.dof} DOF" in window.summary_label.text()


def test_a_robot_file_still_opens_as_a_serial_robot(window):
    window.files.load(PUMA)
    assert not window.document.is_mechanism
    assert window.editor.dh_model.columnCount() == 8  # no actuated column
    assert "effector" in window.view3d.actors


def test_the_gap_rod_shows_an_open_loop_between_its_two_points(window):
    mech = window.document.robot
    q = window.pose.copy()
    q[1] += 0.2  # a dependent joint moved by hand: the loop opens
    window.view3d.set_pose(q)
    gap = window.view3d.loop_gaps[0]
    p_a, p_b = loop_points(mech, scene_frames(forward_kinematics(mech, q)))[0]
    assert gap == pytest.approx(np.linalg.norm(p_b - p_a)) and gap > 0.05
    actor = window.view3d.actors["gap 1"]
    assert actor.GetVisibility()
    np.testing.assert_allclose(actor.user_matrix[:3, 3], p_a)
    np.testing.assert_allclose(actor.user_matrix[:3, 2], p_b - p_a)
    window.view3d.set_pose(window.pose)
    assert not actor.GetVisibility()


def test_sliders_exist_for_the_independent_joints_and_the_linkage_follows(window, qtbot):
    mech = window.document.robot
    panel = window.pose_panel
    independent = set(mech.independent)
    for i in range(mech.n):
        slider, spin = panel.joint_widgets(i)
        assert slider.isHidden() == (i not in independent)
        assert spin.isReadOnly() == (i not in independent)
    slider, _ = panel.joint_widgets(0)
    before = window.pose.copy()
    for _ in range(20):  # a drag: small steps, each closed at once
        slider.setValue(slider.value() + 10)  # +1 deg
    q = window.pose
    assert q[0] == pytest.approx(before[0] + np.radians(20.0), abs=1e-9)
    assert q[2] == before[2]  # the other input held
    assert abs(q[1] - before[1]) > 1e-3 and abs(q[3] - before[3]) > 1e-3  # the legs follow
    assert closure(mech, q) < 1e-9
    np.testing.assert_allclose(window.view3d.q, q)
    _, spin = panel.joint_widgets(1)
    assert spin.value() == pytest.approx(np.degrees(q[1]), abs=0.06)


def test_a_pose_that_cannot_close_snaps_back_and_names_the_loop(window):
    before = window.pose.copy()
    slider, _ = window.pose_panel.joint_widgets(0)
    slider.setValue(slider.maximum())  # crank at +180 deg: the legs cannot reach
    assert np.array_equal(window.pose, before)
    assert slider.value() == round(np.degrees(before[0]) * 10)  # 0.1 deg per tick
    assert "loop 'E'" in window.statusBar().currentMessage()


def test_dragging_is_fast_enough_to_feel_live(window):
    import time
    slider, _ = window.pose_panel.joint_widgets(0)
    start = time.perf_counter()
    for _ in range(30):
        slider.setValue(slider.value() + 5)
    per_move = (time.perf_counter() - start) / 30
    assert per_move < 1 / 30, f"{1000 * per_move:.1f} ms per slider move"


def test_a_link_length_that_opens_the_loop_is_refused_in_place(window):
    mech = window.document.robot
    model = window.editor.dh_model
    a = model.column_of("a")
    model.setData(model.index(1, a), "5")  # leg 1 distal far too long to close
    doc = window.document
    assert doc.robot is mech  # nothing downstream changed
    assert "loop 'E'" in doc.model_error
    assert window.editor.model_error_label.isVisible()
    assert "loop 'E'" in window.editor.model_error_label.text()
    assert doc.errors[(1, "a")] == doc.model_error  # the cell of the edit is marked
    assert not window.run_panel.isEnabled()
    assert model.index(1, a).data() == "5"  # what was typed is kept
    window.undo_action.trigger()
    assert doc.is_valid and not doc.model_error
    assert not window.editor.model_error_label.isVisible()
    assert doc.robot == mech


def test_a_valid_edit_rebuilds_and_recloses_the_mechanism(window):
    model = window.editor.dh_model
    model.setData(model.index(0, model.column_of("a")), "0.65")
    mech = window.document.robot
    assert mech.chains[0].links[0].a == 0.65
    assert closure(mech, window.pose) < 1e-8
    assert closure(mech, mech.q_home) < 1e-8


def test_the_actuated_column_edits_the_actuators(window):
    model = window.editor.dh_model
    col = model.column_of("actuated")
    edit = Qt.ItemDataRole.EditRole  # (shown as a tick or a dash in a narrow column)
    assert model.index(0, col).data(edit) == "yes" and model.index(1, col).data(edit) == "no"
    assert model.index(0, col).data() == "\u2714" and model.index(1, col).data() == "\u2013"
    # actuating a distal joint instead of a proximal one: still 2 inputs for 2 DOF
    model.setData(model.index(2, col), "no")
    model.setData(model.index(3, col), "yes")
    assert window.document.robot.actuated == (0, 3)
    flush_events()  # rows added to a shown panel appear at the next event-loop turn
    assert not window.pose_panel.joint_widgets(3)[0].isHidden()
    assert window.pose_panel.joint_widgets(2)[0].isHidden()


def test_save_and_reopen_gives_the_same_mechanism(window, tmp_path):
    model = window.editor.inertia_model
    model.setData(model.index(0, model.column_of("mass")), "3.5")  # an inertia-side edit
    mech = window.document.robot
    path = tmp_path / "fivebar_copy.toml"
    assert window.files.save_to(path)
    assert not window.isWindowModified()
    assert load_mechanism(path) == mech
    window.files.load(PUMA)
    assert window.files.load(path)
    assert window.document.robot == mech


def test_inverse_dynamics_run_plots_the_cores_torques_and_cut_forces(window, qtbot):
    panel = window.run_panel
    mech = window.document.robot
    target = panel.target_pose()
    assert target[1] == window.pose[1] and target[0] != window.pose[0]  # actuated only
    with qtbot.waitSignal(panel.finished, timeout=60000) as done:
        panel.start_inverse(1.0)
    plots_final(qtbot, window)
    traj = done.args[0]
    expected = run_inverse_dynamics(mech, window.pose, target, 1.0, 0.01)
    np.testing.assert_allclose(traj.tau, expected.tau, rtol=1e-9, atol=1e-9)
    assert np.all(traj.tau[:, [1, 3]] == 0.0)  # passive joints
    assert traj.cut_forces.shape[1] == len(mech.loops) * 2
    plots = window.plots
    assert set(plots.visible_plots()) >= {"cut_forces", "loop_residual"}
    torques = next(p for p in plots._plots if p.spec.key == "joint_torques")
    assert len(torques.curves) == len(mech.actuated)
    t, y = torques.curves[0].samples()
    np.testing.assert_allclose(y, traj.tau[:, mech.actuated[0]])
    cut = next(p for p in plots._plots if p.spec.key == "cut_forces")
    np.testing.assert_allclose(cut.curves[1].samples()[1], traj.cut_forces[:, 1])
    residual = next(p for p in plots._plots if p.spec.key == "loop_residual")
    assert residual.item.ctrl.logYCheck.isChecked()
    assert np.all(residual.series.y[0, :residual.series.size] > 0)


@pytest.mark.parametrize("method", list(FallMethod))
def test_free_fall_with_loops_keeps_them_closed(window, qtbot, method):
    panel = window.run_panel
    with qtbot.waitSignal(panel.finished, timeout=120000) as done:
        panel.start_free_fall(0.3, method)
    traj = done.args[0]
    mech = window.document.robot
    assert traj.t[-1] == pytest.approx(0.3)
    tol = 1e-8 if method == FallMethod.MULTIPLIERS else 1e-4
    assert max(closure(mech, q) for q in traj.q) < tol
    assert np.abs(traj.q[-1] - traj.q[0]).max() > 1e-3  # it fell
    window.show_last_frame()
    np.testing.assert_allclose(window.view3d.q, traj.q[-1])


def test_stop_keeps_what_was_computed(window, qtbot):
    panel = window.run_panel
    window.files.load(SCRAPER)
    with qtbot.waitSignal(panel.chunk, timeout=60000):
        panel.start_free_fall(600.0, FallMethod.MULTIPLIERS)
    with qtbot.waitSignal(panel.stopped, timeout=5000) as stopped:
        panel.stop()
    partial = stopped.args[0]
    assert 0 < len(partial) and partial.t[-1] < 600.0
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=10000)
    assert window.trajectory is partial


def test_a_run_that_breaks_down_stops_with_the_time_and_reason_keeping_samples(
        window, qtbot, monkeypatch):
    """A penalty run that breaks down at t = 0.6 s (the carpet scraper did at the old
    fixed step; it no longer does, so core's chunks are cut there on purpose): the
    window says when and why and keeps the samples up to there (plots and playback)."""
    import armdyn.gui.jobs.runs as runs
    from armdyn.core.errors import SimulationError
    real = runs.penalty_simulate_chunks

    def breaking(*args, **kwargs):
        for part in real(*args, **kwargs):
            if len(part.t) and part.t[-1] > 0.6 + 1e-9:  # (a chunk may be empty)
                raise SimulationError("the Newton iteration diverged", time=0.6)
            yield part

    monkeypatch.setattr(runs, "penalty_simulate_chunks", breaking)
    window.files.load(SCRAPER)
    panel = window.run_panel
    failures: list[str] = []
    panel.failed.connect(failures.append)
    with qtbot.waitSignal(panel.stopped, timeout=120000) as stopped:
        panel.start_free_fall(2.0, FallMethod.PENALTY)
    partial = stopped.args[0]
    assert failures and "t = 0.6" in failures[0] and "Newton" in failures[0]
    assert "samples kept" in failures[0]
    assert len(partial) > 10 and partial.t[-1] <= 0.6 + 1e-9
    assert window.trajectory is partial
    assert window.plots.sample_count() == len(partial)
    assert "t = 0.6" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=10000)


def test_inspect_shows_reduced_mass_matrix_conditioning_and_subsystems(window):
    from armdyn.core import closed_chain_inverse_dynamics, reduced_mass_matrix
    from armdyn.core.algorithms.mechanism_pose import dependent_jacobian_conditioning
    window.files.load(SCRAPER)
    mech = window.document.robot
    inspect = window.inspect
    inspect.flush()
    assert inspect._loops_box.isVisibleTo(inspect)
    Mr = reduced_mass_matrix(mech, window.pose)
    assert inspect._reduced.rowCount() == mech.dof == Mr.shape[0]
    assert float(inspect._reduced.item(0, 0).toolTip().split()[0]) == pytest.approx(Mr[0, 0])
    ratio, _ = dependent_jacobian_conditioning(mech, window.pose)
    assert f"{ratio:.3g}" in inspect._singularity.text()
    subsystems = closed_chain_inverse_dynamics(mech, window.pose, np.zeros(mech.n),
                                               np.zeros(mech.n)).subsystems
    rows = inspect.subsystem_rows()
    assert [r[0] for r in rows] == sorted(str(s.order) for s in subsystems)
    assert all(r[3] == "determinate" for r in rows)  # Saha: the scraper is determinate
    assert any("crank #1" in r[2] for r in rows)
    window.files.load(PUMA)
    inspect.flush()
    assert not inspect._loops_box.isVisibleTo(inspect)
