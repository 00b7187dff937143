"""RunPanel with the real core generators: streaming, stop, pause, finish, CSV export."""
from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import SimulationError, inverse_dynamics, simulate
from armdyn.core.io.robot_file import load_robot
from armdyn.core.sim.stops import simulation_warnings, stop_report
from armdyn.core.sim.trajectory import Trajectory
from armdyn.gui.export import CSV_HEADER_LINES, export_trajectory_csv
from armdyn.gui.jobs.runs import RunKind, RunSpec
from armdyn.gui.panels.run_panel import RunPanel

ROBOTS = Path(__file__).resolve().parents[2] / "robots"


@pytest.fixture
def puma():
    return load_robot(ROBOTS / "puma560_saha.toml")


@pytest.fixture
def stanford():
    return load_robot(ROBOTS / "stanford_saha2009.toml")


@pytest.fixture
def scara():
    return load_robot(ROBOTS / "scara.toml")


@pytest.fixture
def panel(qtbot):
    p = RunPanel()
    qtbot.addWidget(p)
    yield p
    p.shutdown()
    assert not p.is_running()


class Recorder:
    """Collects everything a RunPanel emits, with arrival times."""

    def __init__(self, panel: RunPanel) -> None:
        self.chunks: list[Trajectory] = []
        self.finished: list[Trajectory] = []
        self.stopped: list[tuple[float, Trajectory]] = []
        self.failed: list[str] = []
        self.started = 0
        panel.started.connect(self._on_started)
        panel.chunk.connect(self.chunks.append)
        panel.finished.connect(self.finished.append)
        panel.failed.connect(self.failed.append)
        panel.stopped.connect(lambda tr: self.stopped.append((time.perf_counter(), tr)))

    def _on_started(self) -> None:
        self.started += 1


def test_free_fall_streams_chunks_and_stops_within_100_ms(qtbot, panel, puma):
    threads_before = threading.active_count()
    panel.set_robot(puma)
    panel.set_pose(puma.q_home + 0.2)
    rec = Recorder(panel)
    panel.start_free_fall(600.0)
    assert panel.is_running() and rec.started == 1
    qtbot.waitUntil(lambda: len(rec.chunks) >= 5, timeout=20000)
    assert panel.is_running()  # chunks arrive while the worker still runs
    t0 = time.perf_counter()
    panel.stop()
    qtbot.waitUntil(lambda: bool(rec.stopped), timeout=2000)
    assert rec.stopped[0][0] - t0 < 0.1
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=1000)
    partial = rec.stopped[0][1]
    streamed = Trajectory.concatenate(rec.chunks)
    assert partial.kind == "free-fall" and 0 < partial.t[-1] < 600.0
    np.testing.assert_array_equal(partial.t, streamed.t)
    np.testing.assert_allclose(partial.q[0], puma.q_home + 0.2)
    assert np.all(np.diff(partial.t) > 0)  # chunks arrived in order, no duplicates
    assert not rec.finished and not rec.failed
    assert threading.active_count() == threads_before


def test_inverse_dynamics_runs_to_finished(qtbot, panel, stanford):
    panel.set_robot(stanford)
    start = stanford.q_home + 0.1
    panel.set_pose(start)
    target = panel.target_pose()
    assert np.all(np.abs(target - start) > 0.05)  # the default target moves every joint
    rec = Recorder(panel)
    with qtbot.waitSignal(panel.finished, timeout=20000):
        panel.start_inverse(1.5)
    traj = rec.finished[0]
    assert traj.kind == "inverse-dynamics"
    assert panel.duration == 1.5
    assert traj.t[0] == 0.0 and traj.t[-1] == pytest.approx(1.5)
    np.testing.assert_allclose(traj.q[0], start, atol=1e-12)
    np.testing.assert_allclose(traj.q[-1], target, atol=1e-12)
    np.testing.assert_allclose(traj.tau, inverse_dynamics(stanford, traj.q, traj.qd, traj.qdd))
    streamed = Trajectory.concatenate(rec.chunks)
    assert len(rec.chunks) > 1
    np.testing.assert_array_equal(streamed.t, traj.t)
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=1000)
    assert not rec.stopped and not rec.failed


def test_pause_holds_the_stream_and_resume_continues(qtbot, panel, puma):
    panel.set_robot(puma)
    rec = Recorder(panel)
    panel.start_free_fall(600.0)
    qtbot.waitUntil(lambda: len(rec.chunks) >= 2, timeout=20000)
    panel.pause(True)
    qtbot.wait(300)  # a chunk already being computed (<= 50 ms of work) may still arrive
    held = len(rec.chunks)
    qtbot.wait(200)
    assert len(rec.chunks) == held and panel.is_running()
    panel.pause(False)
    qtbot.waitUntil(lambda: len(rec.chunks) >= held + 3, timeout=5000)
    with qtbot.waitSignal(panel.stopped, timeout=2000):
        panel.stop()


class _FailsLate(RunSpec):
    """A run whose generator yields one chunk, then fails inside a long step (whatever
    the core's generators would say after a Stop)."""

    def chunks(self):
        first = simulate(self.model, 0.05)
        yield first
        time.sleep(0.3)
        raise SimulationError("blew up after the stop", time=0.05, result=first)


def test_nothing_is_heard_of_a_run_after_its_stop(qtbot, panel, puma):
    """Stop during a long step: one stopped(partial) at once; the error the step raises
    later reaches nobody (no failed(), no second stopped())."""
    panel.set_robot(puma)
    rec = Recorder(panel)
    panel.run(_FailsLate(puma, RunKind.FREE_FALL, puma.q_home, 1.0))
    qtbot.waitUntil(lambda: len(rec.chunks) == 1, timeout=20000)
    t0 = time.perf_counter()
    panel.stop()
    assert time.perf_counter() - t0 < 0.05 and not panel.is_running()
    qtbot.wait(600)  # the step ends and raises meanwhile
    assert len(rec.stopped) == 1 and not rec.failed and not rec.finished
    np.testing.assert_array_equal(rec.stopped[0][1].t, rec.chunks[0].t)
    assert "stopped at" in panel.status_text()


def test_targets_follow_the_pose_until_edited(qtbot, panel, puma):
    panel.set_robot(puma)
    before = panel.target_pose()
    panel.set_pose(puma.q_home + 0.3)
    np.testing.assert_allclose(panel.target_pose() - before, 0.3, atol=1e-4)
    panel.set_target_pose(np.zeros(6))
    panel.set_pose(puma.q_home + 0.5)
    np.testing.assert_allclose(panel.target_pose(), 0.0, atol=1e-4)
    panel.targets._copy.click()
    np.testing.assert_allclose(panel.target_pose(), puma.q_home + 0.5, atol=1e-4)


def test_shutdown_cancels_and_joins(qtbot, panel, puma):
    panel.set_robot(puma)
    rec = Recorder(panel)
    panel.start_free_fall(600.0)
    qtbot.waitUntil(lambda: len(rec.chunks) >= 1, timeout=20000)
    t0 = time.perf_counter()
    panel.shutdown()
    assert time.perf_counter() - t0 < 0.5
    assert not panel.is_running()
    qtbot.wait(50)
    assert not rec.stopped  # silent: the window is closing


def test_csv_export_round_trips(qtbot, panel, stanford, tmp_path):
    panel.set_robot(stanford)
    with qtbot.waitSignal(panel.finished, timeout=20000) as blocker:
        panel.start_inverse(0.5)
    traj = blocker.args[0]
    path = export_trajectory_csv(traj, stanford, tmp_path / "run.csv")
    data = np.loadtxt(path, delimiter=",", skiprows=CSV_HEADER_LINES)
    n = stanford.n
    assert data.shape == (len(traj), 1 + 4 * n + 3)
    np.testing.assert_allclose(data[:, 0], traj.t, rtol=1e-9)
    np.testing.assert_allclose(data[:, 1:1 + n], traj.q, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(data[:, 1 + 3 * n:1 + 4 * n], traj.tau, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(data[:, -3:], traj.energy, rtol=1e-9, atol=1e-9)
    header = path.read_text().splitlines()[CSV_HEADER_LINES - 1]
    assert "q3 boom [m]" in header and "tau2 shoulder [N m]" in header
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left


def test_edited_targets_survive_a_table_edit_of_the_robot(qtbot, panel, puma):
    panel.set_robot(puma)
    panel.set_target_pose(np.full(6, 0.25))
    heavier = puma.with_links([replace(puma.links[0], mass=20.0), *puma.links[1:]])
    panel.set_robot(heavier)
    np.testing.assert_allclose(panel.target_pose(), 0.25, atol=1e-4)


# ----- end stops at the joint limits (issue #9) -------------------------------------------
# The SCARA's quill (joint 3, prismatic, z_2 down) is the only joint gravity loads, and the
# mass matrix does not couple it to the others: alone, it falls as m b'' = m g from its
# home b0 = 0.1 m and meets its upper limit 0.21 m at v = sqrt(2 g (0.21 - b0)). On a stop
# of stiffness K = m (2 pi f)^2 without damping, under the load m g, it goes
# x = g/w^2 + sqrt((g/w^2)^2 + (v/w)^2) past the limit (w = 2 pi f; about v/w); a damper
# only takes energy away, so x is a bound for d > 0.
QUILL = 2


def quill_overshoot_bound(scara, frequency: float) -> float:
    g = float(np.linalg.norm(scara.gravity))
    v = np.sqrt(2 * g * (scara.joint_limits[QUILL, 1] - scara.q_home[QUILL]))
    w = 2 * np.pi * frequency
    static = g / w**2
    return static + np.sqrt(static**2 + (v / w) ** 2)


def run_free_fall(qtbot, panel, seconds: float) -> Trajectory:
    with qtbot.waitSignal(panel.finished, timeout=30000) as blocker:
        panel.start_free_fall(seconds)
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=1000)
    return blocker.args[0]


def test_the_stops_checkbox_follows_the_models_limits(qtbot, panel, puma, scara):
    for model in (scara, puma, scara):
        panel.set_robot(model)
        limited = bool(np.isfinite(model.joint_limits).any())
        assert limited == (model is scara)  # the files as this test assumes them
        assert panel.free_fall._stops.isChecked() == limited
        assert panel.free_fall._stops.isEnabled() == limited
        assert (panel.stops() is not False) == limited
        assert ("no joint limits" in panel.free_fall._stops.toolTip()) == (not limited)
    panel.set_stops(False)  # the user's choice stays over an edit of the same joints
    heavier = scara.with_links([replace(scara.links[0], mass=12.0), *scara.links[1:]])
    panel.set_robot(heavier)
    assert not panel.free_fall._stops.isChecked() and panel.stops() is False
    assert not panel.free_fall._stop_frequency.isEnabled()


def test_without_stops_the_scara_quill_falls_past_its_limit(qtbot, panel, scara):
    panel.set_robot(scara)
    panel.set_stops(False)
    traj = run_free_fall(qtbot, panel, 0.5)
    assert not np.any(traj.stop_forces)
    g = float(np.linalg.norm(scara.gravity))
    np.testing.assert_allclose(traj.q[:, QUILL], scara.q_home[QUILL] + g * traj.t**2 / 2,
                               rtol=1e-8)  # a free fall, through the limit
    assert traj.q[-1, QUILL] > scara.joint_limits[QUILL, 1] + 0.5
    for warning in simulation_warnings(scara, scara.q_home, False):  # core's, shown
        assert warning in panel.status_text()
    assert "stops are off" in panel.status_text()


def test_with_stops_the_quill_stays_within_the_stops_penetration(qtbot, panel, scara):
    panel.set_robot(scara)
    assert panel.free_fall._stops.isChecked()  # the default
    panel._dt.setValue(0.001)  # samples every ms: a contact lasts about 10 ms
    traj = run_free_fall(qtbot, panel, 0.5)
    limit = scara.joint_limits[QUILL, 1]
    past = traj.q[:, QUILL].max() - limit
    assert 0 < past <= quill_overshoot_bound(scara, 50.0)  # about 4.8 mm
    assert np.all(traj.q[:, QUILL] > scara.joint_limits[QUILL, 0])
    others = np.delete(traj.stop_forces, QUILL, axis=1)
    assert not np.any(others) and np.all(traj.stop_forces[:, QUILL] <= 0)  # pushes up
    assert traj.stop_forces[:, QUILL].min() < 0
    report = stop_report(scara, traj)
    assert report and all(line in panel.status_text() for line in report)
    assert "quill" in report[0] and "upper stop" in report[0]


def test_the_stop_frequency_reaches_the_run(qtbot, panel, scara):
    panel.set_robot(scara)
    panel.set_stops(True, frequency=20.0, damping=0.0)
    panel._dt.setValue(0.001)
    traj = run_free_fall(qtbot, panel, 0.5)
    past = traj.q[:, QUILL].max() - scara.joint_limits[QUILL, 1]
    # an undamped stop: the closed form (12.3 mm at 20 Hz, 4.8 mm at the default 50 Hz)
    assert past == pytest.approx(quill_overshoot_bound(scara, 20.0), rel=1e-2)
    E = traj.energy[:, 2]  # no damper: the spring's energy is in the potential energy
    assert np.ptp(E) < 1e-6 * np.ptp(traj.energy[:, 0])


def test_run_stop_and_the_stop_report_stay_in_sight_in_a_low_dock(qtbot, scara):
    """The window puts the panel in a resizing scroll area (a dock that may be low): the
    free-fall page with its stop rows, and a run's messages below the progress bar, must
    not grow the panel past the dock and push Run / Pause / Stop out of sight."""
    from PySide6.QtWidgets import QScrollArea

    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    panel = RunPanel()
    scroll.setWidget(panel)
    qtbot.addWidget(scroll)
    panel.set_robot(scara)
    scroll.resize(300, 340)
    scroll.show()
    qtbot.waitExposed(scroll)
    panel._tabs.setCurrentIndex(1)  # the free-fall page, the taller one
    qtbot.waitUntil(panel.controls_in_sight, timeout=2000)
    run_free_fall(qtbot, panel, 0.5)
    assert "upper stop" in panel.status_text()
    qtbot.waitUntil(panel.controls_in_sight, timeout=2000)
    assert panel.height() <= scroll.viewport().height()
    panel.shutdown()
