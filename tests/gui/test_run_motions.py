"""The Run panel's motion choice and "Open measured motion...", on the real panel and
core's generators: each law's run checked against its closed form or its geometry,
a log read in a job and run at its own samples, refusals shown by name."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from armdyn.core import forward_kinematics, inverse_dynamics
from armdyn.core.io.robot_file import load_robot
from armdyn.gui.jobs.motion_choice import MotionKind
from armdyn.gui.panels.run_panel import RunPanel

from gui_helpers import PLANAR, PUMA, ROBOTS

pytestmark = pytest.mark.gui


@pytest.fixture
def panel(qtbot):
    p = RunPanel()
    qtbot.addWidget(p)
    p.resize(520, 900)
    p.show()
    yield p
    p.shutdown()


def _run(qtbot, panel, kind: MotionKind, seconds: float = 1.0, dt: float | None = None):
    """Run `kind` for `seconds` s from the panel's fields (every `dt` s if given)."""
    panel.targets.motion.set_kind(kind)
    panel.targets.set_seconds(seconds)
    result = []
    panel.finished.connect(result.append)
    with qtbot.waitSignal(panel.finished, timeout=30000):
        panel.run(None if dt is None else replace(panel.spec(), dt=dt))
    return result[0]


def test_the_quintic_runs_its_closed_form_and_the_torques_are_the_models(qtbot, panel):
    puma = load_robot(PUMA)
    panel.set_robot(puma)
    q0, qT = puma.q_home, panel.target_pose()
    traj = _run(qtbot, panel, MotionKind.QUINTIC, 1.0)
    s = traj.t / 1.0
    np.testing.assert_allclose(traj.q, q0 + np.outer(10 * s**3 - 15 * s**4 + 6 * s**5, qT - q0),
                               atol=1e-12)
    np.testing.assert_allclose(traj.qdd[0], 0.0, atol=1e-12)  # at rest, not the cycloid's jump
    np.testing.assert_allclose(traj.tau, inverse_dynamics(puma, traj.q, traj.qd, traj.qdd))
    assert "quintic" in panel.status_text()


def test_the_default_fourier_excitation_swings_within_its_bound_and_is_periodic(qtbot, panel):
    puma = load_robot(PUMA)
    panel.set_robot(puma)
    page = panel.targets
    page.motion.set_kind(MotionKind.FOURIER)
    assert not page._targets.isVisible()  # no targets for an excitation
    traj = _run(qtbot, panel, MotionKind.FOURIER, 2.0)  # one period of 0.5 Hz
    swing = np.radians(page.motion.swing_deg.value())
    excursion = np.abs(traj.q - puma.q_home).max(axis=0)
    assert np.all(excursion <= swing + 1e-12) and np.all(excursion > 0.5 * swing)
    np.testing.assert_allclose(traj.q[-1], traj.q[0], atol=1e-9)
    np.testing.assert_allclose(traj.qd[-1], traj.qd[0], atol=1e-9)


def test_via_points_pass_through_the_target_taken_at_their_time(qtbot, panel):
    robot = load_robot(PLANAR)
    panel.set_robot(robot)
    panel.set_target_pose(robot.q_home + np.array([0.4, -0.3]))
    via = panel.target_pose()  # as the rows show it (0.01 deg)
    panel.targets.motion.add_via(0.5)
    panel.set_target_pose(robot.q_home + np.array([-0.2, 0.6]))
    end = panel.target_pose()
    assert panel.targets.motion.via_list.count() == 1
    traj = _run(qtbot, panel, MotionKind.VIA_POINTS, 1.0)
    i = int(np.argmin(np.abs(traj.t - 0.5)))
    np.testing.assert_allclose(traj.q[i], via, atol=1e-12)
    np.testing.assert_allclose(traj.q[-1], end, atol=1e-12)
    np.testing.assert_allclose(traj.qd[[0, -1]], 0.0, atol=1e-12)


@pytest.mark.slow  # core checks the path's limits at 2001 inverse-kinematics solves (~9 s)
def test_the_tool_line_keeps_the_tool_on_the_segment_and_bad_text_is_named(qtbot, panel):
    robot = load_robot(PLANAR)
    panel.set_robot(robot)
    page = panel.targets.motion
    page.set_kind(MotionKind.TOOL_LINE)
    page.line_end.setText("0.5, abc, 0")
    panel.run()
    assert not panel.is_running()
    assert "the line's end point" in panel.status_text() and "abc" in panel.status_text()
    bent = robot.q_home + np.radians([30, 60])  # stretched out, the arm is singular
    panel.set_pose(bent)
    p0 = forward_kinematics(robot, bent).end_effector[:3, 3]
    p1 = p0 + np.array([0.05, -0.05, 0.0])
    page.line_end.setText(", ".join(f"{x:.12g}" for x in p1))
    traj = _run(qtbot, panel, MotionKind.TOOL_LINE, 1.0, dt=0.1)
    points = np.array([forward_kinematics(robot, q).end_effector[:3, 3] for q in traj.q])
    u = (p1 - p0) / np.linalg.norm(p1 - p0)
    off_line = (points - p0) - np.outer((points - p0) @ u, u)
    assert np.abs(off_line).max() < 1e-6
    np.testing.assert_allclose(points[-1], p1, atol=1e-6)


def _write_log(path, t, q, bad_line: int | None = None) -> None:
    lines = ["# a logged sine", "t,q1,q2"]
    lines += [f"{ti:.6f},{a:.10f},{b:.10f}" for ti, (a, b) in zip(t, q)]
    if bad_line is not None:  # as an editor numbers the lines
        lines[bad_line - 1] = lines[bad_line - 1].rsplit(",", 1)[0] + ",nan"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_measured_log_is_read_in_a_job_and_run_at_its_samples(qtbot, panel, tmp_path):
    robot = load_robot(PLANAR)
    panel.set_robot(robot)
    page = panel.targets.motion
    t = np.arange(0.0, 3.0 + 1e-9, 0.002)  # 500 Hz
    w = 2 * np.pi * 0.5
    q = np.column_stack([0.3 * np.sin(w * t), 0.2 * np.cos(w * t)])
    bad = tmp_path / "bad.csv"
    _write_log(bad, t, q, bad_line=13)
    with qtbot.waitSignal(page.loader.refused, timeout=20000):
        page.open_log(str(bad))
    info = page.measured_info.text()
    assert "bad.csv" in info and "line 13" in info and "'q2'" in info, info
    assert not panel.is_running()

    good = tmp_path / "sine.csv"
    _write_log(good, t, q)
    result = []
    panel.finished.connect(result.append)
    with qtbot.waitSignal(panel.finished, timeout=30000):
        page.open_log(str(good))  # read, then run
    assert not panel._dt.isVisibleTo(panel)  # the log's own samples: no dt
    info = page.measured_info.text()
    assert f"{t.size} samples" in info and "500 Hz" in info and "cut-off" in info, info
    traj = result[0]
    np.testing.assert_allclose(traj.t, t, atol=1e-9)  # the log's times, as printed
    assert panel.duration == pytest.approx(3.0)
    # the differentiated rates and accelerations against the sine's own, away from the
    # ends; the torques the model's along them
    inner = slice(200, -200)
    qd = w * np.column_stack([0.3 * np.cos(w * t), -0.2 * np.sin(w * t)])
    qdd = -w**2 * q
    np.testing.assert_allclose(traj.qd[inner], qd[inner], atol=0.01 * w * 0.3)
    np.testing.assert_allclose(traj.qdd[inner], qdd[inner], atol=0.02 * w**2 * 0.3)
    exact = inverse_dynamics(robot, q, qd, qdd)
    scale = np.abs(exact).max(axis=0)
    assert np.all(np.abs(traj.tau[inner] - exact[inner]).max(axis=0) < 0.02 * scale)


def test_a_floating_system_keeps_its_cycloid(qtbot, panel):
    from armdyn.core.io.model_files import load_model
    robot = load_model(ROBOTS / "space_robot.toml")
    panel.set_robot(robot)
    panel.targets.motion.set_kind(MotionKind.QUINTIC)
    with qtbot.waitSignal(panel.failed, timeout=20000) as failed:
        panel.run()
    assert "floating system" in failed.args[0] and "cycloid" in failed.args[0]
