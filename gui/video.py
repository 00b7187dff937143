"""Recording a run's animation as a video: MP4 (H.264) or GIF.

File > Export > Animation as Video (`export_video`) and ``armdyn ... --video out.mp4``
(`record_window_video`) use the same `VideoRecorder`.

**Frames.** The run's time axis is stepped at ``speed / fps`` seconds of run per frame
(`frame_times`). For each frame the window's 3D view is put at the run's pose q(t)
(`Trajectory.at`, as playback does) and its scene as the view shows it (layers,
colours, background, the camera's direction, up and projection) is drawn at the chosen
size by `SceneMirror`: an off-screen pyvista plotter with one actor per actor of the
view, sharing its mesh and copying its properties, matrix and visibility. The camera is
fitted once, as the view's Fit does, to the arm's boxes at poses spread over the run
(`run_corners`): it holds still, and the arm fills the frame without leaving it. With
plots, the frame's right half is an off-screen `PlotsPanel` (never on screen, without
its row of buttons) laid out at that size, showing the run with its time cursor at t
(`OffscreenPlots`).

**Threads.** Rendering is Qt and OpenGL work: it runs on the GUI thread in timer-driven
batches of at most BATCH_MS, so the window stays responsive and Cancel works. Frames go
through a bounded queue to `VideoEncoder`'s thread, which feeds the encoder:
imageio-ffmpeg (its ffmpeg binary, H.264 in MP4) or imageio's pillow plugin (GIF, each
frame reduced to 256 colours as it comes). The encoder writes a hidden temporary file
(`core.io.atomic.temporary_path`) that the one writer of every output puts at the
chosen name when it is complete (`core.io.atomic.replace_with_file`: renamed over a
regular file, a symbolic link kept, copied into a device or a pipe; a read-only file
or a folder refused). A cancelled or failed recording (ffmpeg's non-zero exit, a full
disk, a write error of the GIF) leaves no partial file, and an existing file untouched.
"""
from __future__ import annotations

import enum
import logging
import math
import os
import queue
import re
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import subprocess
import tempfile
from fractions import Fraction

import imageio_ffmpeg
import numpy as np
from PIL import Image
import pyvista as pv
from PySide6.QtCore import QCoreApplication, QEventLoop, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox,
                               QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel,
                               QProgressDialog, QSpinBox, QWidget)

from armdyn.core.io.atomic import (check_target, discard_temporary, replace_with_file,
                                   temporary_path)
from armdyn.core.sim.trajectory import Trajectory

from .plots.plots_panel import PlotsPanel
from .scene.view3d import ArmView, box_corners, fit_camera

__all__ = ["VideoFormat", "VideoSettings", "video_format", "frame_times", "run_corners",
           "SceneMirror",
           "OffscreenPlots", "FrameSource", "VideoEncoder", "VideoRecorder",
           "VideoOptionsDialog", "record_window_video", "start_window_recording",
           "export_video", "VIDEO_FILTER"]

log = logging.getLogger(__name__)

#: Longest stretch of rendering per timer tick on the GUI thread, ms.
BATCH_MS = 40
#: How often a waiting recorder looks at the encoder thread, ms.
POLL_MS = 15
#: Frames rendered ahead of the encoder (the queue between the two threads).
QUEUE_FRAMES = 8
#: Frame rates: any up to MAX_FPS; a GIF's frame delays are counted in 1/100 s and
#: viewers slow down delays under 2/100 s, so a GIF takes at most MAX_GIF_FPS.
MAX_FPS = 120.0
MAX_GIF_FPS = 50.0
#: Frame sides, px.
MIN_SIDE, MAX_SIDE = 64, 4096
#: The plots beside the 3D view are laid out at least this wide, then scaled to the frame.
PLOTS_LAYOUT_WIDTH = 900
#: Rounds of posted events that lay out the off-screen plots before the first frame.
LAYOUT_PASSES = 3
#: Poses of the run whose arm boxes a video's camera is fitted to.
BOUNDS_SAMPLES = 120
#: Seconds of run per second of video: 0.25x (slow motion) to 4x.
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: imageio-ffmpeg's quality scale (1-10): 7 is H.264's crf 15, sharp lines and text.
MP4_QUALITY = 7
VIDEO_FILTER = "MP4 video (*.mp4);;GIF animation (*.gif)"


class VideoFormat(enum.Enum):
    """The video files ArmDyn writes, by suffix."""

    MP4 = ".mp4"
    GIF = ".gif"


def video_format(path: str | os.PathLike) -> VideoFormat:
    """The format of `path` by its suffix (any case); ValueError for another suffix."""
    suffix = Path(path).suffix.lower()
    for fmt in VideoFormat:
        if fmt.value == suffix:
            return fmt
    raise ValueError(f"cannot record a video of type {suffix or '(no suffix)'!r}; give a "
                     "file name ending in .mp4 or .gif")


@dataclass(frozen=True)
class VideoSettings:
    """How a run is recorded.

    fps        : frames per second of video
    size       : (width, height) of a frame, px; with plots the 3D view takes the left
                 half and the plots the right half
    with_plots : the plots (with a time cursor) beside the 3D view
    speed      : seconds of run per second of video (1: real time)
    """

    fps: float = 30.0
    size: tuple[int, int] = (1280, 720)
    with_plots: bool = False
    speed: float = 1.0

    def checked_for(self, fmt: VideoFormat) -> "VideoSettings":
        """These settings for `fmt`, or ValueError saying which is out of range. An MP4's
        sides are rounded down to even numbers (H.264's 4:2:0 colour needs them)."""
        limit = MAX_GIF_FPS if fmt is VideoFormat.GIF else MAX_FPS
        if not 0.0 < self.fps <= limit:
            raise ValueError(f"frame rate {self.fps:g} fps: a {fmt.name} takes more than 0 "
                             f"and at most {limit:g} fps")
        width, height = (int(side) for side in self.size)
        if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
            raise ValueError(f"frame size {width}x{height}: each side must be {MIN_SIDE} "
                             f"to {MAX_SIDE} px")
        if self.with_plots and width < 2 * MIN_SIDE:
            raise ValueError(f"frame size {width}x{height}: with plots the width must be at "
                             f"least {2 * MIN_SIDE} px")
        if not 0.0 < self.speed <= 100.0:
            raise ValueError(f"speed {self.speed:g}: expected more than 0 and at most 100")
        if fmt is VideoFormat.MP4:
            width, height = width - width % 2, height - height % 2
        return replace(self, size=(width, height))


def frame_times(t_start: float, t_end: float, fps: float, speed: float = 1.0) -> np.ndarray:
    """Run times of the frames, s, shape (F,): ``t_start + k speed / fps`` up to `t_end`,
    then `t_end` itself if the grid misses it, so that the video ends on the run's last
    pose."""
    step = speed / fps
    count = int(math.floor((t_end - t_start) / step + 1e-9)) + 1
    times = t_start + step * np.arange(count)
    if t_end - times[-1] > 1e-9 * max(1.0, abs(t_end)):
        times = np.append(times, t_end)
    return times


class SceneMirror:
    """The scene of an `ArmView`, drawn off screen at `size` (width, height) px.

    Built once from the view: the same meshes (shared), actor properties, background,
    anti-aliasing and camera direction, up and projection; the camera is then fitted to
    `points` (the corners of the arm's boxes over the run, `run_corners`) at the frame's
    size, as the view's Fit frames the arm at the view's size (`view3d.fit_camera`), or
    without `points` keeps the view's camera as it is. Call `image()` after each
    ``view.set_pose``: it copies every actor's matrix and visibility and renders.
    """

    def __init__(self, view: ArmView, size: tuple[int, int], points=None) -> None:
        self.size = (int(size[0]), int(size[1]))
        self.plotter = pv.Plotter(off_screen=True, window_size=list(self.size))
        shown, renderer = view.plotter.renderer, self.plotter.renderer
        renderer.SetBackground(shown.GetBackground())
        renderer.SetBackground2(shown.GetBackground2())
        renderer.SetGradientBackground(shown.GetGradientBackground())
        # The view's anti-aliasing (FXAA renders black over multisampling, so both go)
        self.plotter.render_window.SetMultiSamples(
            view.plotter.render_window.GetMultiSamples())
        renderer.SetUseFXAA(shown.GetUseFXAA())
        self._pairs = []
        for actor in view.actors.values():
            mirror = pv.Actor()
            mapper = actor.GetMapper().NewInstance()
            mapper.ShallowCopy(actor.GetMapper())
            mapper.SetInputDataObject(actor.GetMapper().GetInputDataObject(0, 0))
            mirror.SetMapper(mapper)
            mirror.GetProperty().DeepCopy(actor.GetProperty())
            renderer.AddActor(mirror)
            self._pairs.append((actor, mirror))
        camera = self.plotter.renderer.camera
        camera.DeepCopy(shown.GetActiveCamera())
        # pyvista resets a camera it thinks nobody set at the first picture (its default
        # view, z up: a model with y up was recorded on a wall, small and off-centre)
        camera.is_set = True
        if points is not None:
            fit_camera(camera, points, *self.size, fallback_up=view.basis()[1])

    def image(self) -> np.ndarray:
        """The scene as the view holds it now: (height, width, 3) uint8 RGB."""
        for actor, mirror in self._pairs:
            mirror.SetUserMatrix(actor.GetUserMatrix())
            mirror.SetVisibility(actor.GetVisibility())
        self.plotter.renderer.ResetCameraClippingRange()
        self.plotter.render_window.Render()
        image = self.plotter.screenshot(None, return_img=True)
        return np.ascontiguousarray(image[:, :, :3])

    def close(self) -> None:
        self.plotter.close()


def _rgb_array(image: QImage, size: tuple[int, int]) -> np.ndarray:
    """`image` as (height, width, 3) uint8 RGB at exactly `size` (scaled if it is not,
    as on a high-DPI screen)."""
    width, height = size
    if (image.width(), image.height()) != (width, height):
        image = image.scaled(width, height, Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(image.constBits(), np.uint8, image.bytesPerLine() * height)
    return rows.reshape(height, image.bytesPerLine())[:, :3 * width].reshape(
        height, width, 3).copy()


class OffscreenPlots:
    """A `PlotsPanel` that is never on screen, showing `traj` of `robot` (the plots named
    in `shown`, or the panel's default), pictured at `size` (width, height) px."""

    def __init__(self, robot, traj: Trajectory, size: tuple[int, int],
                 shown: list[str] | None = None) -> None:
        self.size = (int(size[0]), int(size[1]))
        # Laid out at least PLOTS_LAYOUT_WIDTH px wide (axes, legends and titles need the
        # room), then scaled down to the frame.
        scale = max(1.0, PLOTS_LAYOUT_WIDTH / self.size[0])
        self.layout_size = (round(self.size[0] * scale), round(self.size[1] * scale))
        self.panel = PlotsPanel()
        self.panel.setObjectName("videoPlots")
        self.panel.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
        self.panel.set_controls_visible(False)  # no "Show:" buttons in a video
        self.panel.set_robot(robot)
        if shown:
            self.panel.set_visible_plots(shown)
        self.panel.set_trajectory(traj)
        self.panel.resize(*self.layout_size)
        self.panel.show()  # WA_DontShowOnScreen keeps it off the screen
        for _ in range(LAYOUT_PASSES):  # layout requests, the plots' deferred updates
            QCoreApplication.sendPostedEvents()
            self.panel.align_axes()  # (its timer would wait for an event loop)

    def image(self, t: float) -> np.ndarray:
        """The plots with the time cursor at `t` s: (height, width, 3) uint8 RGB."""
        self.panel.set_cursor_time(t)
        return _rgb_array(self.panel.grab().toImage(), self.size)

    def close(self) -> None:
        self.panel.close()
        self.panel.deleteLater()


def run_corners(view: ArmView, traj: Trajectory, times: np.ndarray,
                samples: int = BOUNDS_SAMPLES) -> np.ndarray:
    """(8 k, 3) the corners of the box holding the arm's visible parts
    (`ArmView.arm_bounds`, what Fit frames) at each of k = `samples` frame times spread
    over `times` (all of them if fewer), the first and last included: fitted to them, a
    video's camera holds still and keeps the arm in the picture all along (tighter than
    the box of them all). Moves `view` through those poses and back."""
    before = view.q.copy()
    picked = times[np.unique(np.linspace(0, len(times) - 1, min(samples, len(times)))
                             .round().astype(int))]
    corners = []
    try:
        for t in picked:
            view.set_pose(traj.at(float(t)))
            corners.append(box_corners(view.arm_bounds()))
    finally:
        view.set_pose(before)
    return np.concatenate(corners)


class FrameSource:
    """The frames of one run: `frame(t)` puts `view` at the run's pose q(t) and returns
    the picture, (height, width, 3) uint8 RGB at ``settings.size``: the 3D view, with the
    plots on the right half if ``settings.with_plots``. `close` puts the view back at the
    pose it showed before."""

    def __init__(self, view: ArmView, traj: Trajectory, settings: VideoSettings,
                 shown_plots: list[str] | None = None) -> None:
        width, height = settings.size
        view_width = 2 * (width // 4) if settings.with_plots else width  # even, for MP4
        self.view = view
        self.traj = traj
        self._pose_before = view.q.copy()
        corners = run_corners(view, traj, frame_times(float(traj.t[0]), float(traj.t[-1]),
                                                      settings.fps, settings.speed))
        self.scene = SceneMirror(view, (view_width, height), corners)
        self.plots = (OffscreenPlots(view.robot, traj, (width - view_width, height),
                                     shown_plots) if settings.with_plots else None)

    def frame(self, t: float) -> np.ndarray:
        self.view.set_pose(self.traj.at(t))
        images = [self.scene.image()]
        if self.plots is not None:
            images.append(self.plots.image(t))
        return np.ascontiguousarray(np.hstack(images))

    def close(self) -> None:
        self.scene.close()
        if self.plots is not None:
            self.plots.close()
        self.view.set_pose(self._pose_before)


# ======================================================================================
# Encoding (a thread of its own)
# ======================================================================================

#: H.264's constant rate factor for MP4_QUALITY (imageio-ffmpeg's mapping: 51 (1 - q/10)).
MP4_CRF = int((1 - MP4_QUALITY / 10) * 51)


#: The "[out#0/mp4 @ 0x...] " before each of ffmpeg's messages.
_FFMPEG_PREFIX = re.compile(r"^(\[[^]]*\]\s*)+")


class _Mp4Writer:
    """H.264 in MP4 through imageio-ffmpeg's ffmpeg binary, frames piped to its process.

    The process is run here, not by ``imageio_ffmpeg.write_frames``, which never looks
    at ffmpeg's exit status: a full disk while ffmpeg writes its trailer left a corrupt
    file that counted as a success. `close` waits for ffmpeg and raises OSError with
    ffmpeg's own message if it failed; `abort` kills it.
    """

    def __init__(self, path: str, fps: float, size: tuple[int, int]) -> None:
        rate = str(Fraction(fps).limit_denominator())
        command = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-f", "rawvideo",
                   "-vcodec", "rawvideo", "-s", f"{size[0]}x{size[1]}", "-pix_fmt", "rgb24",
                   "-r", rate, "-i", "-", "-an", "-vcodec", "libx264",
                   "-pix_fmt", "yuv420p", "-crf", str(MP4_CRF), "-v", "error",
                   "-movflags", "+faststart", "-f", "mp4", path]
        self._errors = tempfile.TemporaryFile()  # ffmpeg's messages (a pipe could fill)
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL, stderr=self._errors)

    def write(self, frame: np.ndarray) -> None:
        try:
            self._process.stdin.write(np.ascontiguousarray(frame, dtype=np.uint8).data)
        except (BrokenPipeError, ValueError):  # ffmpeg has ended: close says why
            self.close()
            raise OSError("ffmpeg stopped before the last frame") from None

    def close(self) -> None:
        """Wait for ffmpeg to write the file; OSError with its message if it failed."""
        try:
            self._process.stdin.close()
        except BrokenPipeError:
            pass
        status = self._process.wait()
        self._errors.seek(0)
        message = self._errors.read().decode("utf-8", "replace").strip()
        self._errors.close()
        if status != 0:  # its last line, without the "[out#0/mp4 @ 0x...]" prefix
            last = message.splitlines()[-1] if message else f"exit status {status}"
            raise OSError("ffmpeg failed: " + _FFMPEG_PREFIX.sub("", last))

    def abort(self) -> None:
        self._process.kill()
        self._process.wait()
        self._errors.close()


class _GifWriter:
    """An endlessly looping GIF through pillow; each frame is reduced to 256 colours as it
    comes (as imageio's pillow plugin with ``bits=8`` did), the file is written on close.

    Pillow directly, not imageio's plugin: the plugin, closed after a failed write (a
    full disk), tried again when it was collected and printed a traceback."""

    def __init__(self, path: str, fps: float, size: tuple[int, int]) -> None:
        self._path = path
        self._duration_ms = 1000.0 / fps
        self._frames: list[Image.Image] = []

    def write(self, frame: np.ndarray) -> None:
        self._frames.append(Image.fromarray(frame).quantize(colors=256))

    def close(self) -> None:
        frames, self._frames = self._frames, []
        if frames:
            frames[0].save(self._path, format="GIF", save_all=True, append_images=frames[1:],
                           duration=self._duration_ms, loop=0)

    def abort(self) -> None:
        self._frames = []


_WRITERS = {VideoFormat.MP4: _Mp4Writer, VideoFormat.GIF: _GifWriter}


class VideoEncoder:
    """Writes frames to a video file from a thread of its own.

    `put` a frame only when `has_room` (the queue holds QUEUE_FRAMES frames), then
    `finish`, or `cancel`; `done` is True once the thread has ended, with `error` None
    (the file is complete at `path`) or the reason. The file is written to a hidden
    temporary file (`core.io.atomic.temporary_path`) and put at `path` when complete
    (`core.io.atomic.replace_with_file`).
    """

    def __init__(self, path: Path, fmt: VideoFormat, fps: float, size: tuple[int, int],
                 queue_frames: int = QUEUE_FRAMES) -> None:
        self.path = Path(path)
        self.error: str | None = None
        self._partial: str | None = None  # the temporary file, made in the thread
        self._fmt, self._fps, self._size = fmt, fps, size
        self._queue: queue.Queue[np.ndarray] = queue.Queue(maxsize=queue_frames)
        self._ending = threading.Event()
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._run, name="armdyn-video-encoder",
                                        daemon=True)
        self._thread.start()

    def has_room(self) -> bool:
        return not self._queue.full()

    def put(self, frame: np.ndarray) -> None:
        """Queue one (height, width, 3) uint8 frame (waits if the queue is full)."""
        self._queue.put(frame)

    def finish(self) -> None:
        """No more frames: the thread writes what is queued and completes the file."""
        self._ending.set()

    def cancel(self) -> None:
        """Stop as soon as possible and remove the partial file."""
        self._cancelled.set()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        writer = None
        try:
            self._partial = temporary_path(self.path)
            writer = _WRITERS[self._fmt](self._partial, self._fps, self._size)
            while not self._cancelled.is_set():
                try:
                    frame = self._queue.get(timeout=POLL_MS / 1000)
                except queue.Empty:
                    if self._ending.is_set():
                        break
                    continue
                writer.write(frame)
            writer, closing = None, writer
            if self._cancelled.is_set():
                closing.abort()
            else:
                closing.close()  # raises if the file could not be written whole
                replace_with_file(self.path, self._partial)
        except OSError as e:  # a full disk, a refused target, ffmpeg's failure: expected
            log.info("video not written: %s", e)
            self.error = e.strerror or str(e)
        except Exception as e:  # noqa: BLE001 - any encoder failure is reported to the GUI
            log.exception("video encoding failed")
            self.error = str(e) or type(e).__name__
        finally:
            if writer is not None:
                writer.abort()
            if self._partial is not None:
                discard_temporary(self._partial)


# ======================================================================================
# The recorder: timer-driven rendering on the GUI thread
# ======================================================================================

class VideoRecorder(QObject):
    """Records `traj` as `view` shows it into the video file `path` (MP4 or GIF).

    `start` builds the frame source and the encoder; a timer then renders frames in
    batches of at most BATCH_MS while the encoder has room. Signals:
    ``progress(done, total)`` (frames rendered), then one of ``finished(Path)``,
    ``failed(str)`` (the reason) or ``cancelled()``. `cancel` may be called at any time.
    """

    progress = Signal(int, int)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, view: ArmView, traj: Trajectory, path: str | os.PathLike,
                 settings: VideoSettings, shown_plots: list[str] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        if traj is None or len(traj) == 0:
            raise ValueError("there is no run to record")
        self.path = Path(path)
        self.format = video_format(self.path)
        check_target(self.path)  # a folder or a read-only file: refused before any work
        self.settings = settings.checked_for(self.format)
        self.times = frame_times(float(traj.t[0]), float(traj.t[-1]), self.settings.fps,
                                 self.settings.speed)
        self._view, self._traj, self._shown_plots = view, traj, shown_plots
        self._source: FrameSource | None = None
        self._encoder: VideoEncoder | None = None
        self._next = 0
        self._state = "idle"  # -> rendering -> encoding -> done; or -> cancelling -> done
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._step)

    @property
    def total(self) -> int:
        """Frames in the video."""
        return len(self.times)

    @property
    def state(self) -> str:
        """"idle", "rendering", "encoding", "cancelling" or "done"."""
        return self._state

    def start(self) -> None:
        if self._state != "idle":
            raise RuntimeError("a recorder records once")
        try:
            self._source = FrameSource(self._view, self._traj, self.settings,
                                       self._shown_plots)
        except (RuntimeError, ValueError) as e:
            self._fail(f"cannot draw the frames: {e}")
            return
        self._encoder = VideoEncoder(self.path, self.format, self.settings.fps,
                                     self.settings.size)
        self._state = "rendering"
        self._timer.start(0)

    def cancel(self) -> None:
        if self._state in ("idle", "done"):
            self._state = "done"
            return
        if self._state == "cancelling":
            return
        self._state = "cancelling"
        self._close_source()
        self._encoder.cancel()
        self._timer.start(POLL_MS)

    def _step(self) -> None:
        if self._state == "rendering":
            self._render_batch()
        elif self._encoder is not None and self._encoder.done:
            self._end()

    def _render_batch(self) -> None:
        encoder = self._encoder
        if encoder.done:  # the encoder failed
            self._end()
            return
        deadline = time.perf_counter() + BATCH_MS / 1000
        try:
            while (self._next < self.total and encoder.has_room()
                   and time.perf_counter() < deadline):
                encoder.put(self._source.frame(float(self.times[self._next])))
                self._next += 1
        except Exception as e:  # noqa: BLE001 - a failed render ends the recording, reported
            log.exception("rendering a video frame failed")
            self._close_source()
            encoder.cancel()
            encoder.join()
            self._fail(f"cannot draw frame {self._next + 1}: {e}")
            return
        self.progress.emit(self._next, self.total)
        if self._next == self.total:
            self._close_source()
            encoder.finish()
            self._state = "encoding"
        self._timer.setInterval(0 if self._state == "rendering" and encoder.has_room()
                                else POLL_MS)

    def _end(self) -> None:
        """The encoder thread has ended: report how."""
        was_cancelling = self._state == "cancelling"
        self._close_source()
        if was_cancelling:
            self._timer.stop()
            self._state = "done"
            self.cancelled.emit()
        elif self._encoder.error is not None:
            self._fail(f"cannot write {self.path}: {self._encoder.error}")
        else:
            self._timer.stop()
            self._state = "done"
            self.finished.emit(self.path)

    def _fail(self, message: str) -> None:
        self._timer.stop()
        self._state = "done"
        self.failed.emit(message)

    def _close_source(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None


# ======================================================================================
# The window: scripted mode, File > Export
# ======================================================================================

def _window_recorder(window, path: Path, settings: VideoSettings) -> VideoRecorder:
    """A recorder of `window`'s last run in its 3D view (plots as the window shows them);
    playback is paused so that it does not move the view meanwhile."""
    window.playback.pause()
    shown = window.plots.visible_plots()
    return VideoRecorder(window.view3d, window.trajectory, path, settings, shown, window)


def record_window_video(window, path: Path, settings: VideoSettings,
                        timeout_s: float = 600.0) -> str | None:
    """Record `window`'s last run to `path` and wait (the event loop runs); returns None,
    or why it could not be recorded."""
    try:
        recorder = _window_recorder(window, path, settings)
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    except ValueError as e:
        return str(e)
    loop = QEventLoop()
    outcome: dict[str, str] = {}
    recorder.finished.connect(lambda _path: loop.quit())
    recorder.failed.connect(lambda message: (outcome.setdefault("error", message), loop.quit()))
    recorder.cancelled.connect(loop.quit)
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(lambda: (outcome.setdefault("error", f"timed out after "
                                                      f"{timeout_s:g} s"), recorder.cancel()))
    timer.start(int(timeout_s * 1000))
    recorder.start()
    if recorder.state != "done":
        loop.exec()
    timer.stop()
    recorder.deleteLater()
    return outcome.get("error")


def start_window_recording(window, path: Path,
                           settings: VideoSettings) -> tuple[VideoRecorder, QProgressDialog]:
    """Start recording `window`'s last run with a window-modal progress dialog whose
    Cancel cancels; the outcome goes to the status bar (or an error box). Returns the
    recorder and the dialog (both deleted when the recording ends)."""
    recorder = _window_recorder(window, path, settings)
    dialog = QProgressDialog(f"Recording {path.name}\u2026", "Cancel", 0, recorder.total,
                             window)
    dialog.setObjectName("videoProgress")
    dialog.setWindowTitle("Export Animation")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    dialog.canceled.connect(recorder.cancel)

    def on_progress(done: int, total: int) -> None:
        dialog.setValue(done)
        if done == total:
            dialog.setLabelText(f"Encoding {path.name}\u2026")

    def end(message: str | None = None, status: str = "") -> None:
        dialog.canceled.disconnect(recorder.cancel)
        dialog.close()
        dialog.deleteLater()
        recorder.deleteLater()
        if message is not None:
            window.files.error("Cannot export the animation", message)
        elif status:
            window.statusBar().showMessage(status, 5000)

    recorder.progress.connect(on_progress)
    recorder.finished.connect(lambda p: end(status=f"Saved {p}"))
    recorder.failed.connect(lambda message: end(message))
    recorder.cancelled.connect(lambda: end(status="Recording cancelled"))
    dialog.open()
    recorder.start()
    return recorder, dialog


class VideoOptionsDialog(QDialog):
    """Frame size, frame rate, speed and plots of a recording (`settings()`)."""

    def __init__(self, fmt: VideoFormat, plots_available: bool,
                 parent: QWidget | None = None,
                 initial: VideoSettings | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("videoOptions")
        self.setWindowTitle(f"Export Animation as {fmt.name}")
        self._format = fmt
        initial = initial or (VideoSettings(fps=20.0, size=(640, 360))
                              if fmt is VideoFormat.GIF else VideoSettings())
        self.width_box, self.height_box = QSpinBox(), QSpinBox()
        for box, value in ((self.width_box, initial.size[0]), (self.height_box, initial.size[1])):
            box.setRange(MIN_SIDE, MAX_SIDE)
            box.setSuffix(" px")
            box.setValue(value)
        size_row = QHBoxLayout()
        size_row.addWidget(self.width_box)
        size_row.addWidget(QLabel("\u00d7"))
        size_row.addWidget(self.height_box)
        self.fps_box = QDoubleSpinBox()
        self.fps_box.setDecimals(1)
        self.fps_box.setRange(1.0, MAX_GIF_FPS if fmt is VideoFormat.GIF else MAX_FPS)
        self.fps_box.setSuffix(" fps")
        self.fps_box.setValue(initial.fps)
        self.speed_box = QComboBox()
        for speed in SPEEDS:
            self.speed_box.addItem(f"{speed:g}\u00d7", speed)
        self.speed_box.setCurrentIndex(SPEEDS.index(initial.speed)
                                       if initial.speed in SPEEDS else SPEEDS.index(1.0))
        self.plots_box = QCheckBox("Plots beside the 3D view")
        self.plots_box.setChecked(initial.with_plots and plots_available)
        self.plots_box.setEnabled(plots_available)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Frame size", size_row)
        form.addRow("Frame rate", self.fps_box)
        form.addRow("Speed", self.speed_box)
        form.addRow("", self.plots_box)
        form.addRow(buttons)

    def settings(self) -> VideoSettings:
        """The settings as chosen, checked for the format (an MP4's sides made even)."""
        return VideoSettings(fps=self.fps_box.value(),
                             size=(self.width_box.value(), self.height_box.value()),
                             with_plots=self.plots_box.isChecked(),
                             speed=float(self.speed_box.currentData())).checked_for(self._format)


def export_video(window) -> VideoRecorder | None:
    """File > Export > Animation as Video: ask for the file and the settings, then record
    with a progress dialog. Returns the recorder (None if there is no run or the user
    cancelled a question)."""
    traj = window.trajectory
    if traj is None or len(traj) == 0:
        return None
    stem = Path(window.files.suggested_name()).with_suffix("")
    path = window.files.ask_save_path("Export Animation", VIDEO_FILTER, ".mp4",
                                      f"{stem}_{traj.kind}.mp4")
    if path is None:
        return None
    try:
        fmt = video_format(path)
    except ValueError as e:
        window.files.error("Cannot export the animation", f"{path}: {e}")
        return None
    dialog = VideoOptionsDialog(fmt, True, window)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        settings = dialog.settings()
    finally:
        dialog.deleteLater()
    try:
        recorder, _progress = start_window_recording(window, path, settings)
    except OSError as e:  # a folder, a read-only file
        window.files.error("Cannot export the animation", f"{path}: {e.strerror or e}")
        return None
    return recorder
