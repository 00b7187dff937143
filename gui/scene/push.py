"""Push the arm: during a live free fall, Ctrl+left-drag on a link in the 3D view pulls
the grabbed point toward the mouse with a spring (as MuJoCo's viewer does).

The physics is the core's (`core.sim.pull`): this module picks, maps the mouse to a target
and draws; the pull it moves is the Run panel's (`RunPanel.pull`, read by a live run;
`RunPanel.is_live`), the runs it follows are the window's session's. A Ctrl+press on a part of the arm (VTK's cell picker on the 3D view's
actors; each actor's part rides on a link frame, `gui.scene.arm_scene.part_link`) grabs that
point of the link: `PointPull.grab` with the point in the link's own frame, the target
at the point, and gains that hold the whole arm's weight at 10 cm of stretch,
critically damped (`core.sim.pull.arm_pull_gains`). Moving the mouse moves the target in the
plane through the grabbed point parallel to the screen; release ends the pull. The run
reads the request at its next chunk (1/60 s in a live run, `RunPanel` "Live").

While a live free fall runs, every chunk moves the 3D view to its newest sample and
the pull line (a line from the point to the target, a small ball at each end) to the
sample's point. Playback of a run draws the line at each sample where the recorded
pull (`Trajectory.pull`) was active. The Ctrl+drag events are taken from the 3D view
before VTK sees them (a Qt event filter), so the camera does not orbit meanwhile.
"""
from __future__ import annotations

import numpy as np
import pyvista as pv
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from vtkmodules.vtkRenderingCore import vtkCellPicker  # not `import vtk`: every module, 0.6 s

from armdyn.core.model.arguments import kernel_of
from armdyn.core.sim.pull import PULL_AT, PULL_LINK, PULL_TARGET, arm_pull_gains, point_in_link

from .arm_scene import Sizes, part_link

__all__ = ["PushController", "install_push", "LINE_COLOR", "STRETCH_M"]

LINE_COLOR = "#D55E00"
#: A live run's 3D view shows its newest sample at most this often, ms.
FRAME_MS = 33
#: The pull holds the whole arm's weight at this stretch, m.
STRETCH_M = 0.1


class PushController(QObject):
    """The push interaction of one `MainWindow` (module docstring).

    Public: `pick(x, y)` -> (link, point) or None (widget pixels of the 3D view);
    `grab(link, point)`, `move_to(point)`, `release()` (base-frame points, m);
    `grabbed` (the link, 0 when none); `line_visible()`; `show_pull(p, target)`.
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.session = window.session
        self.view = window.view3d
        self.run_panel = window.run_panel
        self.grabbed = 0
        self._closed = False
        self._depth = 0.0  # display depth of the grabbed point (the drag's plane)
        self._target = np.zeros(3)
        self._picker = vtkCellPicker()
        self._picker.SetTolerance(0.005)
        self._newest = None  # the newest chunk of a live run, not shown yet
        self._frame_timer = QTimer(self)
        self._frame_timer.setSingleShot(True)
        self._frame_timer.setInterval(FRAME_MS)
        self._frame_timer.timeout.connect(self._show_newest)
        self._build_line()
        self.view.plotter.installEventFilter(self)
        session = self.session
        session.chunk.connect(self._on_chunk)
        session.run_started.connect(self._on_run_ended)  # a new run: no pull line yet
        session.run_ended.connect(self._on_run_ended)
        window.playback.frame.connect(self._on_playback_frame)

    # ----- the line -----------------------------------------------------------------
    def _build_line(self) -> None:
        self._line = pv.Line((0.0, 0.0, 0.0), (1.0, 0.0, 0.0))
        self._ends = [pv.Sphere(radius=1.0, center=(0.0, 0.0, 0.0)) for _ in range(2)]
        self._end_points = [end.points.copy() for end in self._ends]
        plotter = self.view.plotter
        self.line_actor = plotter.add_mesh(self._line, color=LINE_COLOR, line_width=3,
                                           name="push line", reset_camera=False,
                                           render=False, pickable=False)
        self.end_actors = [plotter.add_mesh(end, color=LINE_COLOR, name=f"push end {i}",
                                            reset_camera=False, render=False,
                                            pickable=False)
                           for i, end in enumerate(self._ends)]
        self._set_line_visible(False)

    def _set_line_visible(self, on: bool) -> None:
        for actor in (self.line_actor, *self.end_actors):
            actor.SetVisibility(on)

    def line_visible(self) -> bool:
        return bool(self.line_actor.GetVisibility())

    def show_pull(self, p, target) -> None:
        """Draw the pull line from p to target (base frame, m); None hides it."""
        if p is None:
            if self.line_visible():
                self._set_line_visible(False)
                self.view.request_render()
            return
        p, target = np.asarray(p, float), np.asarray(target, float)
        self._line.points = np.array([p, target])
        robot = self.view.robot
        radius = 0.5 * Sizes.of(robot).joint_radius if robot is not None else 0.01
        for end, unit, centre in zip(self._ends, self._end_points, (p, target)):
            end.points = unit * radius + centre
        self._set_line_visible(True)
        self.view.request_render()

    # ----- picking and the drag -------------------------------------------------------
    def _display(self, x: float, y: float) -> tuple[float, float]:
        """Qt widget pixels of the 3D view -> VTK display pixels (y up, device pixels)."""
        ratio = self.view.plotter.devicePixelRatioF()
        height = self.view.plotter.height()
        return x * ratio, (height - y) * ratio

    def pick(self, x: float, y: float) -> tuple[int, np.ndarray] | None:
        """The link (1-based) and the base-frame point (3,) of the arm under widget
        pixel (x, y) of the 3D view, or None (nothing, or the base)."""
        robot = self.view.robot
        if robot is None:
            return None
        renderer = self.view.plotter.renderer
        dx, dy = self._display(x, y)
        parents = np.asarray(kernel_of(robot).views.parent)
        # the view's actors are not pickable (no stray picks elsewhere): the arm's links,
        # and the merged layers of a big arm, are, for this pick only
        actors = [self.view.actors[part.name] for part in self.view.parts
                  if part.name in self.view.actors and part_link(part, parents) > 0]
        actors += self.view.merged_actors()
        for actor in actors:
            actor.SetPickable(True)
        try:
            hit = self._picker.Pick(dx, dy, 0.0, renderer)
        finally:
            for actor in actors:
                actor.SetPickable(False)
        if not hit:
            return None
        part = self.view.picked_part(self._picker.GetActor(), self._picker.GetCellId())
        link = 0 if part is None else part_link(part, parents)
        if link <= 0:
            return None
        return link, np.array(self._picker.GetPickPosition())

    def grab(self, link: int, point) -> None:
        """Start pulling `point` (base frame, m) of `link` (1-based) at the shown pose."""
        robot = self.view.robot
        point = np.asarray(point, dtype=float)
        r = point_in_link(robot, self.view.q, link, point)
        k, c = arm_pull_gains(robot, STRETCH_M)
        self.run_panel.pull.grab(link, r, point, k, c)
        self.grabbed = int(link)
        self._target = point.copy()
        renderer = self.view.plotter.renderer
        renderer.SetWorldPoint(*point, 1.0)
        renderer.WorldToDisplay()
        self._depth = renderer.GetDisplayPoint()[2]
        self.show_pull(point, point)
        self.window.statusBar().showMessage(f"Pulling link {link} "
                                            f"(k = {k:.3g} N/m, c = {c:.3g} N s/m)", 3000)

    def move_to(self, target) -> None:
        """A new target (3,), base frame, m."""
        if not self.grabbed:
            return
        self._target = np.asarray(target, dtype=float).copy()
        self.run_panel.pull.move(self._target)
        self.show_pull(self._line.points[0], self._target)

    def target_at(self, x: float, y: float) -> np.ndarray:
        """The point under widget pixel (x, y) in the plane through the grabbed point
        parallel to the screen (at its display depth), base frame, m."""
        renderer = self.view.plotter.renderer
        dx, dy = self._display(x, y)
        renderer.SetDisplayPoint(dx, dy, self._depth)
        renderer.DisplayToWorld()
        w = np.array(renderer.GetWorldPoint())
        return w[:3] / w[3]

    def release(self) -> None:
        self.run_panel.pull.release()
        self.grabbed = 0
        self.show_pull(None, None)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        """Ctrl+left press on a link during a live free fall grabs; moves and the release
        that follow are ours (VTK never sees them)."""
        kind = event.type()
        if kind == QEvent.Type.MouseButtonPress and event.button() == Qt.LeftButton \
                and event.modifiers() & Qt.ControlModifier and self.run_panel.is_live():
            pos = event.position()
            hit = self.pick(pos.x(), pos.y())
            if hit is not None:
                self.grab(*hit)
                return True
        elif self.grabbed and kind == QEvent.Type.MouseMove:
            pos = event.position()
            self.move_to(self.target_at(pos.x(), pos.y()))
            return True
        elif self.grabbed and kind == QEvent.Type.MouseButtonRelease \
                and event.button() == Qt.LeftButton:
            self.release()
            return True
        return super().eventFilter(watched, event)

    # ----- runs and playback ----------------------------------------------------------
    def _on_chunk(self, part) -> None:
        """A live run's newest sample, shown at the next frame (`_show_newest`)."""
        if self.run_panel.is_live() and len(part):
            self._newest = part
            if not self._frame_timer.isActive():
                self._frame_timer.start()

    def _show_newest(self) -> None:
        """The arm and the pull line at the newest sample (at most FRAME_MS apart)."""
        part, self._newest = self._newest, None
        if part is None or not self.run_panel.is_live():
            return
        self.view.set_pose(part.q[-1])
        if self.grabbed and part.pull is not None and part.pull[-1, PULL_LINK] > 0:
            self.show_pull(part.pull[-1, PULL_AT], self._target)

    def _on_run_ended(self, *_args) -> None:
        if self.grabbed:
            self.release()
        self.show_pull(None, None)

    def _on_playback_frame(self, t: float, _q) -> None:
        """Playback: the line where the recorded pull was active at the sample at t."""
        traj = self.session.trajectory
        if self.grabbed or traj is None or traj.pull is None or not len(traj):
            return
        k = min(int(np.searchsorted(traj.t, t)), len(traj) - 1)
        if k > 0 and t - traj.t[k - 1] < traj.t[k] - t:
            k -= 1
        row = traj.pull[k]
        if row[PULL_LINK] > 0:
            self.show_pull(row[PULL_AT], row[PULL_TARGET])
        else:
            self.show_pull(None, None)

    def shutdown(self) -> None:
        """Let go of a grab, stop the frame timer, leave the 3D view's events alone
        (before the 3D view is shut down; once)."""
        if self._closed:
            return
        self._closed = True
        if self.grabbed:
            self.release()
        self._frame_timer.stop()
        self.view.plotter.removeEventFilter(self)


def install_push(window) -> PushController:
    """Push the arm in `window`'s 3D view during a live free fall (module docstring).
    Returns the `PushController`."""
    return PushController(window)
