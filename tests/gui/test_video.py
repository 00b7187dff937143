"""Recording a run as MP4 and GIF (gui.video): from File > Export with progress and
Cancel, and from `armdyn ... --video`; the files are read back with imageio."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import imageio.v3 as iio
import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QProgressDialog, QPushButton

from armdyn.gui.video import (MAX_GIF_FPS, VideoFormat, VideoOptionsDialog, VideoRecorder,
                       VideoSettings, frame_times, start_window_recording)

from gui_helpers import PUMA, ROOT, armdyn, flush_events

pytestmark = pytest.mark.gui


def frames_of(path) -> np.ndarray:
    """Every frame of a video file, (F, height, width, 3) uint8, read with imageio."""
    return iio.imread(path, index=None)[..., :3]


def assert_the_arm_moves(frames: np.ndarray, region: slice = slice(None)) -> None:
    """Frames differ over time (beyond the encoder's noise): the arm moves."""
    first, last = frames[0][:, region].astype(int), frames[-1][:, region].astype(int)
    changed = np.abs(first - last).max(axis=2) > 40
    assert changed.mean() > 0.002, f"only {changed.mean():.4%} of the pixels changed"


@pytest.fixture
def fallen(make_window, qtbot):
    """A window with the PUMA after a 1 s free fall."""
    window = make_window(PUMA, size=(1100, 720))
    with qtbot.waitSignal(window.run_panel.finished, timeout=60000):
        window.run_panel.start_free_fall(1.0)
    return window


def wait_for(recorder: VideoRecorder, qtbot, timeout_ms: int = 120000) -> list[tuple]:
    """Run the event loop until the recorder ends; its progress and outcome signals."""
    events: list[tuple] = []
    recorder.progress.connect(lambda done, total: events.append(("progress", done, total)))
    recorder.finished.connect(lambda path: events.append(("finished", path)))
    recorder.failed.connect(lambda message: events.append(("failed", message)))
    recorder.cancelled.connect(lambda: events.append(("cancelled",)))
    qtbot.waitUntil(lambda: recorder.state == "done", timeout=timeout_ms)
    return events


def test_frame_times_step_the_run_and_end_on_its_last_pose():
    np.testing.assert_allclose(frame_times(0.0, 1.0, 10.0), np.linspace(0.0, 1.0, 11))
    np.testing.assert_allclose(frame_times(0.0, 1.05, 10.0)[-2:], [1.0, 1.05])
    assert len(frame_times(0.0, 2.0, 10.0, speed=2.0)) == 11  # 2x: one second of video


def test_settings_are_checked_for_the_format():
    assert VideoSettings(size=(641, 361)).checked_for(VideoFormat.MP4).size == (640, 360)
    assert VideoSettings(size=(641, 361)).checked_for(VideoFormat.GIF).size == (641, 361)
    with pytest.raises(ValueError, match="at most 50 fps"):
        VideoSettings(fps=60).checked_for(VideoFormat.GIF)
    with pytest.raises(ValueError, match="frame size 20x360"):
        VideoSettings(size=(20, 360)).checked_for(VideoFormat.MP4)


def test_export_mp4_from_the_menu_with_progress_and_a_responsive_window(fallen, qtbot,
                                                                         tmp_path,
                                                                         monkeypatch):
    window = fallen
    target = tmp_path / "fall.mp4"
    assert window.export_video_action.isEnabled()
    export_menu = next(a.menu() for a in window.menuBar().actions()[0].menu().actions()
                       if a.menu() is not None and a.text() == "&Export")
    assert window.export_video_action in export_menu.actions()
    monkeypatch.setattr(window.files, "ask_save_path", lambda *a: target)  # the file dialog
    progress_seen: list[int] = []

    def fill_in_the_options() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, VideoOptionsDialog):
            QTimer.singleShot(20, fill_in_the_options)
            return
        dialog.width_box.setValue(480)
        dialog.height_box.setValue(320)
        dialog.fps_box.setValue(25)
        dialog.accept()

    QTimer.singleShot(0, fill_in_the_options)
    ticks: list[float] = []
    heartbeat = QTimer()
    heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
    heartbeat.start(10)
    try:
        recorder = window.export_video()  # what File > Export > Animation as Video does
        recorder.progress.connect(lambda done, total: progress_seen.append(done))
        dialogs = [w for w in QApplication.topLevelWidgets()
                   if isinstance(w, QProgressDialog) and w.isVisible()]
        assert len(dialogs) == 1 and dialogs[0].maximum() == 26  # 1 s at 25 fps, both ends
        with qtbot.waitSignal(recorder.finished, timeout=120000):
            pass
    finally:
        heartbeat.stop()
    flush_events()
    assert progress_seen and progress_seen[-1] == 26
    gaps = np.diff(ticks)
    assert len(ticks) >= 5 and gaps.max() < 0.5, f"the window froze for {gaps.max():.2f} s"
    frames = frames_of(target)
    assert frames.shape == (26, 320, 480, 3)
    assert iio.immeta(target)["fps"] == pytest.approx(25)
    assert_the_arm_moves(frames)
    assert "Saved" in window.statusBar().currentMessage()
    # the view is back at the pose it showed before
    np.testing.assert_allclose(window.view3d.q, window.trajectory.q[0], atol=1e-12)


def test_gif_with_the_plots_beside_the_3d_view(fallen, qtbot, tmp_path):
    window = fallen
    target = tmp_path / "fall.gif"
    settings = VideoSettings(fps=10, size=(800, 400), with_plots=True, speed=2.0)
    recorder, progress = start_window_recording(window, target, settings)
    events = wait_for(recorder, qtbot)
    assert events[-1] == ("finished", target)
    frames = frames_of(target)
    assert frames.shape == (6, 400, 800, 3)  # 1 s at 2x: 0.5 s of video at 10 fps
    assert iio.immeta(target, index=0)["duration"] == 100  # ms per frame
    assert iio.immeta(target, index=0)["loop"] == 0  # loops for ever
    assert_the_arm_moves(frames, slice(0, 400))  # the 3D view on the left
    plots = frames[0][:, 400:].astype(int)
    # the plots' white background and their coloured curves on the right (hundreds of
    # clearly coloured pixels: GIF's 256-colour palette desaturates thin curves)
    assert (plots.min(axis=2) > 245).mean() > 0.3 and (np.ptp(plots, axis=2) > 60).sum() > 200
    cursor_moves = np.abs(frames[0][:, 400:].astype(int) - frames[-1][:, 400:]).max() > 100
    assert cursor_moves  # the time cursor runs along the plots
    flush_events()


def test_cancel_leaves_no_file_and_an_old_file_untouched(fallen, qtbot, tmp_path):
    window = fallen
    target = tmp_path / "fall.mp4"
    target.write_bytes(b"an older video")
    settings = VideoSettings(fps=120, size=(640, 480))  # 121 frames: time to cancel
    recorder, progress = start_window_recording(window, target, settings)
    cancel_button = progress.findChild(QPushButton)
    assert cancel_button.text() == "Cancel"
    recorder.progress.connect(lambda done, total: cancel_button.click() if done else None)
    events = wait_for(recorder, qtbot)
    assert events[-1] == ("cancelled",)
    assert all(e[1] < e[2] for e in events if e[0] == "progress")  # stopped early
    assert target.read_bytes() == b"an older video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fall.mp4"]  # no partial file
    assert "cancelled" in window.statusBar().currentMessage()
    flush_events()


def test_a_gif_refuses_a_frame_rate_over_the_limit(fallen):
    dialog = VideoOptionsDialog(VideoFormat.GIF, plots_available=True, parent=fallen)
    try:
        assert dialog.fps_box.maximum() == MAX_GIF_FPS
        dialog.fps_box.setValue(80)
        assert dialog.settings().fps == MAX_GIF_FPS
    finally:
        dialog.deleteLater()


def test_video_from_the_command_line(tmp_path):
    mp4, png = tmp_path / "fall.mp4", tmp_path / "end.png"
    result = armdyn(str(PUMA), "--free-fall", "0.5", "--video", str(mp4), "--fps", "10",
                    "--video-size", "320x240", "--video-plots", "--screenshot", str(png),
                    "--size", "1000x700")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    frames = frames_of(mp4)
    assert frames.shape == (6, 240, 320, 3)
    assert_the_arm_moves(frames, slice(0, 160))
    assert png.stat().st_size > 10000


@pytest.mark.parametrize("args, message", [
    (["--video", "x.mp4"],
     "--video records a run: give --free-fall SECONDS or --inverse SECONDS"),
    (["--free-fall", "1", "--video", "x.gif", "--fps", "60"],
     "--video x.gif: frame rate 60 fps: a GIF takes more than 0 and at most 50 fps"),
    (["--fps", "10"], "--fps, --video-size and --video-plots go with --video"),
], ids=["no-run", "gif-fps", "fps-alone"])
def test_video_options_are_refused_before_any_work(args, message, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = subprocess.run([sys.executable, "-m", "armdyn.gui.app", str(PUMA), *args], cwd=tmp_path,
                            env=env | {"PYTHONPATH": str(ROOT)}, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == f"armdyn: {message}"


def ndc(camera, points: np.ndarray, aspect: float) -> np.ndarray:
    """(N, 2) the points as `camera` projects them into a picture of width / height
    `aspect`: -1..1 across and up."""
    m = camera.GetCompositeProjectionTransformMatrix(aspect, -1.0, 1.0)
    matrix = np.array([[m.GetElement(i, j) for j in range(4)] for i in range(4)])
    clip = np.c_[points, np.ones(len(points))] @ matrix.T
    return clip[:, :2] / clip[:, 3:]


@pytest.mark.parametrize("name", ["fivebar_saha", "two_link_planar", "puma560_saha"])
def test_a_video_frames_the_run_like_fit_with_the_models_up(make_window, qtbot, name):
    """Videos recorded with pyvista's default camera (z up) put the floor of every model
    with gravity along -y on a wall, small and off-centre, and left the PUMA a fifth of
    its half: a frame looks from the view's direction with the view's up, and is fitted
    (as Fit does) to the arm over the whole run, filling the frame."""
    from armdyn.gui.scene.arm_scene import FLOOR_COLOR
    from armdyn.gui.scene.view3d import box_corners
    from armdyn.gui.video import FrameSource

    from gui_helpers import ROBOTS

    window = make_window(ROBOTS / f"{name}.toml", size=(1100, 720))
    with qtbot.waitSignal(window.session.run_ended, timeout=60000) as ended:
        window.run_panel.start_free_fall(1.0)
    traj = ended.args[0].trajectory
    view = window.view3d
    shown = view.plotter.camera
    width, height = 480, 320
    source = FrameSource(view, traj, VideoSettings(fps=10, size=(width, height)))
    try:
        camera = source.scene.plotter.renderer.GetActiveCamera()
        fill = 0.0
        for t in np.linspace(traj.t[0], traj.t[-1], 6):
            picture = source.frame(float(t))
            # (checked after a frame: pyvista reset an unset camera at the first picture)
            assert np.allclose(camera.GetViewUp(), shown.GetViewUp(), atol=1e-9)
            assert np.allclose(camera.GetDirectionOfProjection(),
                               shown.GetDirectionOfProjection(), atol=1e-9)
            corners = ndc(camera, box_corners(view.arm_bounds()), width / height)
            assert np.abs(corners).max() <= 1.0 + 1e-9, "the arm left the frame"
            fill = max(fill, float(np.ptp(corners, axis=0).max()) / 2)
        assert fill > 0.6, f"the arm fills {fill:.0%} of the frame at most"
        # the floor lies under the arm: its pixels are in the frame's lower part
        floor = np.array([int(FLOOR_COLOR[k:k + 2], 16) for k in (1, 3, 5)])
        rows = np.nonzero((np.abs(picture.astype(int) - floor).max(axis=2) <= 3))[0]
        assert rows.size > 0.02 * width * height and rows.mean() > 0.55 * height
    finally:
        source.close()
