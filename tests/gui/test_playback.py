"""PlaybackBar: real-time rate, speed, loop, steps and scrubbing with interpolated q."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from armdyn.core.io.robot_file import load_robot
from armdyn.core import Trajectory, run_inverse_dynamics
from armdyn.gui.plots.playback import SLIDER_STEP_S, PlaybackBar

ROBOTS = Path(__file__).resolve().parents[2] / "robots"


@pytest.fixture(scope="module")
def planar():
    return load_robot(ROBOTS / "two_link_planar.toml")


def motion(robot, seconds: float, dt: float = 0.05) -> Trajectory:
    """A real inverse-dynamics run of the planar arm (0 -> +1 rad, -0.5 rad)."""
    return run_inverse_dynamics(robot, [0.0, 0.0], [1.0, -0.5], seconds, dt_out=dt)


@pytest.fixture
def bar(qtbot):
    b = PlaybackBar()
    qtbot.addWidget(b)
    b.show()
    return b


class Frames:
    def __init__(self, bar: PlaybackBar) -> None:
        self.t: list[float] = []
        self.q: list[np.ndarray] = []
        bar.frame.connect(self.on_frame)

    def on_frame(self, t: float, q) -> None:
        self.t.append(t)
        self.q.append(np.asarray(q))


def played(qtbot, bar: PlaybackBar, seconds: float) -> float:
    """Play for `seconds` of wall time; the wall time that really passed."""
    start = bar.time()
    t0 = time.perf_counter()
    bar.play()
    qtbot.wait(round(seconds * 1000))
    bar.pause()
    elapsed = time.perf_counter() - t0
    return (bar.time() - start) / elapsed


@pytest.mark.parametrize("speed", [1.0, 2.0, 0.5])
def test_play_runs_at_real_time_times_speed(qtbot, bar, planar, speed):
    bar.set_trajectory(motion(planar, 10.0))
    bar.set_speed(speed)
    frames = Frames(bar)
    rate = played(qtbot, bar, 0.5)
    assert rate == pytest.approx(speed, rel=0.2)
    assert len(frames.t) >= 10  # ~60 Hz
    assert all(b >= a for a, b in zip(frames.t, frames.t[1:]))
    assert not bar.is_playing()


def test_stops_at_the_end_without_loop(qtbot, bar, planar):
    traj = motion(planar, 0.2, dt=0.01)
    bar.set_trajectory(traj)
    frames = Frames(bar)
    bar.play()
    qtbot.waitUntil(lambda: not bar.is_playing(), timeout=2000)
    assert frames.t[-1] == traj.t[-1]
    np.testing.assert_allclose(frames.q[-1], traj.q[-1])
    bar.play()  # at the end: starts again from the beginning
    assert bar.is_playing() and bar.time() == 0.0
    bar.pause()


def test_loop_wraps_around(qtbot, bar, planar):
    bar.set_trajectory(motion(planar, 0.2, dt=0.01))
    bar.set_loop(True)
    frames = Frames(bar)
    bar.play()
    qtbot.wait(500)
    assert bar.is_playing()
    bar.pause()
    assert any(b < a for a, b in zip(frames.t, frames.t[1:]))  # went back to the start
    assert all(0.0 <= t <= 0.2 for t in frames.t)


def test_single_steps_go_sample_by_sample(qtbot, bar, planar):
    traj = motion(planar, 1.0, dt=0.1)
    bar.set_trajectory(traj)
    frames = Frames(bar)
    bar.step_forward()
    bar.step_forward()
    assert frames.t == [traj.t[1], traj.t[2]]
    np.testing.assert_allclose(frames.q[-1], traj.q[2])
    bar.step_back()
    assert bar.time() == traj.t[1]
    bar.seek(0.0)
    bar.step_back()  # stays at the start
    assert bar.time() == 0.0


def test_scrubbing_the_slider_emits_interpolated_q(qtbot, bar, planar):
    traj = motion(planar, 1.0, dt=0.1)
    bar.set_trajectory(traj)
    frames = Frames(bar)
    bar._slider.setValue(round(0.437 / SLIDER_STEP_S))  # as a drag does
    assert frames.t[-1] == pytest.approx(0.437)
    expected = [np.interp(0.437, traj.t, traj.q[:, j]) for j in range(2)]
    np.testing.assert_allclose(frames.q[-1], expected)
    assert frames.q[-1].shape == (2,)
    assert "0.437" in bar._label.text()


def test_seek_clamps_and_clear_disables(qtbot, bar, planar):
    bar.set_trajectory(motion(planar, 1.0, dt=0.1))
    bar.seek(5.0)
    assert bar.time() == 1.0
    bar.seek(-1.0)
    assert bar.time() == 0.0
    bar.play()
    bar.clear()
    assert not bar.is_playing() and bar.trajectory() is None
    assert not bar._play.isEnabled()
