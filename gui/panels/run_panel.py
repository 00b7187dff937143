"""The run panel: choose a computation, run it in a background job, stream its results.

Two modes, one tab each:
  * Inverse dynamics: the torques along a motion (`core.inverse_dynamics_chunks`): a
    rest-to-rest law from the current pose to a target pose (cycloid, quintic,
    trapezoid), via points, a Fourier excitation, a line or arc of the tool, or a
    measured motion read from a log ("Open measured motion...", which runs it once
    read). For a mechanism with loops only the actuated joints have targets: they move
    along the motion and the other joints follow the loops; a floating system moves
    along the cycloid only (core refuses the others by name).
    (`gui.panels.run_targets.TargetsPage`, `gui.panels.run_motion.MotionPage`)
  * Free fall: the arm released at rest from the current pose with no joint torques,
    optionally damped, with end stops at the joint limits; live or not; a mechanism
    with loops may use the penalty method. (`gui.panels.free_fall_page.FreeFallPage`)

The panel's fields make a `gui.jobs.runs.RunSpec` (`spec()`); `run(spec)` hands it to
a `gui.panels.run_control.RunControl`, which runs core's generator in a
`gui.jobs.job.Job` and collects its Trajectory chunks; `gui.panels.run_status.RunStatus`
shows the progress bar and the status text (the home of a run's messages). The GUI
thread only moves widgets.

With a `gui.model.session.Session` (`observe`), the panel follows the session's model
and pose and reports its runs to it (started, chunks, the `RunResult`), before its own
signals say the same.

Run / Pause / Stop, the progress bar and the status line sit below the parameters,
which scroll: they stay in sight however low the dock.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (QFormLayout, QHBoxLayout, QPushButton, QStyle, QTabWidget,
                               QVBoxLayout, QWidget)

from armdyn.core import ArmDynError, JointStops, Mechanism, PointPull, Robot
from armdyn.core.sim.trajectory import Trajectory

from ..jobs.motion_choice import MotionKind
from ..jobs.runs import FallMethod, RunKind, RunResult, RunSpec
from ..look.scroll import scroll_area
from .free_fall_page import FreeFallPage
from .run_control import RunControl
from .run_status import DISPLAY_MS, RunStatus
from .run_targets import TargetsPage, seconds_box

__all__ = ["RunPanel", "FallMethod", "DISPLAY_MS", "MODE_INVERSE", "MODE_FREE_FALL"]

MODE_INVERSE = 0
MODE_FREE_FALL = 1
#: px a tab's page is narrower than its tab widget, frame aside (Fusion's padding)
TAB_PAGE_FRAME = 18


class RunPanel(QWidget):
    """Parameters, Run / Pause / Stop and progress for the two computations.

    ``targets`` and ``free_fall`` are its two pages; ``pull`` is the `core.PointPull`
    a live free fall reads (gui/scene/push.py grabs, moves and releases it).

    Signals (all in the GUI thread):
      started()         a run began
      chunk(object)     a Trajectory chunk of new samples (never empty)
      finished(object)  the whole Trajectory of a completed run
      failed(str)       the core's message; followed by stopped(partial)
      stopped(object)   the run ended early (user stop or failure): the partial
                        Trajectory (possibly with 0 samples)
    `set_robot`, a new `run` and `shutdown` cancel a running one silently (no stopped()).
    """

    started = Signal()
    chunk = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    stopped = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._robot: Robot | Mechanism | None = None
        self._pose = np.zeros(0)
        self._session = None
        #: the pull of a live free fall (gui/scene/push.py grabs, moves and releases it)
        self.pull = PointPull()
        self._control = RunControl(self)
        self._build()
        control = self._control
        control.started.connect(self._on_started)
        control.chunk.connect(self._on_chunk)
        control.ended.connect(self._on_ended)
        control.finished.connect(self.finished)
        control.failed.connect(self.failed)
        control.stopped.connect(self.stopped)
        self._update_buttons()

    # ----- construction ---------------------------------------------------------------
    def _build(self) -> None:
        self.targets = TargetsPage()
        self.free_fall = FreeFallPage()
        self._tabs = QTabWidget()
        self._tabs.addTab(self.targets, "Inverse dynamics")
        self._tabs.addTab(self.free_fall, "Free fall")

        self._dt = seconds_box(0.01, 0.001, 0.5, decimals=3, step=0.005)
        self._dt.setToolTip("Time between output samples (plots, playback, CSV). "
                            "The integrator chooses its own, finer steps.")
        common = QFormLayout()
        common.addRow("Output sample step dt:", self._dt)
        self._common = common
        # a measured motion is run at its own samples: no dt of its own
        self._tabs.currentChanged.connect(self._show_dt)
        self.targets.motion.kind_changed.connect(self._show_dt)

        self._run = QPushButton("Run")
        self._pause = QPushButton("Pause")
        self._pause.setCheckable(True)
        self._stop = QPushButton("Stop")
        self._run.clicked.connect(lambda: self.run())
        self._pause.toggled.connect(self._on_pause_toggled)
        self._stop.clicked.connect(self.stop)
        buttons = QHBoxLayout()
        for b in (self._run, self._pause, self._stop):
            buttons.addWidget(b)
        self._status = RunStatus(self._control, self)
        self.targets.motion.measured_loaded.connect(self._on_measured_loaded)
        self.targets.motion.loader.refused.connect(
            lambda message: self._status.set_line(message))

        params = QWidget()
        top = QVBoxLayout(params)
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self._tabs, 1)
        top.addLayout(common)
        scroll = scroll_area(params, name="runParameters", vertical_only=True)
        scroll.setMinimumHeight(60)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)  # always in sight: below the scrolling parameters
        progress = QHBoxLayout()  # the messages' count beside the bar: no height taken
        progress.addWidget(self._status.bar, 1)
        progress.addWidget(self._status.messages_button)
        layout.addLayout(progress)
        layout.addWidget(self._status.label)

    def observe(self, session) -> None:
        """Follow `session`'s model and pose, and report the runs to it."""
        self._session = session
        session.model_changed.connect(self.set_robot)
        session.pose_changed.connect(self.set_pose)

    # ----- model and pose -------------------------------------------------------------
    def set_robot(self, robot: Robot | Mechanism | None) -> None:
        """Use `robot` (cancels a running job silently); the pose becomes its home pose.

        Targets the user typed, and a choice of end stops, are kept when the joints keep
        their number and types (an edit of the robot's tables).
        """
        self._control.cancel()
        old = self._robot
        same_joints = (old is not None and robot is not None
                       and old.model.joint_types == robot.model.joint_types)
        self._robot = robot
        self._pose = robot.q_home.copy() if robot is not None else np.zeros(0)
        self.targets.set_robot(robot, same_joints)
        self.free_fall.set_robot(robot, same_joints)
        self._status.show_idle("Ready." if robot is not None else "Load a robot to start.")
        self._update_buttons()

    def set_pose(self, q) -> None:
        """The current pose, shape (nq,), rad / m: start of both computations."""
        if self._robot is None:
            return
        self._pose = np.asarray(q, dtype=float).reshape(self._robot.nq).copy()
        self.targets.set_pose(self._pose)

    def target_pose(self) -> np.ndarray:
        """Target pose of the inverse-dynamics motion, shape (n,), rad / m (see
        `TargetsPage.target_pose`)."""
        return self.targets.target_pose()

    def set_target_pose(self, q) -> None:
        """Set the target pose, shape (n,), rad / m (counts as a user edit)."""
        self.targets.set_target_pose(q)

    # ----- free-fall options ----------------------------------------------------------
    def fall_method(self) -> FallMethod:
        """The free-fall method in use (multipliers unless the model has loops)."""
        return self.free_fall.fall_method()

    def set_fall_method(self, method: FallMethod) -> None:
        self.free_fall.set_fall_method(method)

    def stops(self) -> JointStops | bool:
        """The end stops of the next free fall (`FreeFallPage.stops`)."""
        return self.free_fall.stops()

    def set_stops(self, on: bool, frequency: float | None = None,
                  damping: float | None = None) -> None:
        """Turn the end stops on or off (as a click does), with their frequency (Hz) and
        damping (s/rad, s/m) if given."""
        self.free_fall.set_stops(on, frequency, damping)

    def set_damping(self, c: float) -> None:
        """The free fall's joint damping c, the same at every joint (N m s/rad, N s/m)."""
        self.free_fall.set_damping(c)

    def set_live(self, on: bool) -> None:
        """Run the next free falls live (paced to wall-clock time, pushable) or not."""
        self.free_fall.set_live(on)

    # ----- running --------------------------------------------------------------------
    def spec(self) -> RunSpec:
        """The run the fields describe (the selected tab's), from the current pose."""
        if self._robot is None:
            raise ValueError("no model to run")
        dt, q0 = self._dt.value(), self._pose.copy()
        if self._tabs.currentIndex() == MODE_INVERSE:
            motion = self.targets.motion.choice()  # ArgumentError: a point field's text
            return RunSpec(self._robot, RunKind.INVERSE, q0,
                           motion.duration(self.targets.seconds()), dt,
                           target=self.target_pose(), motion=motion)
        fall = self.free_fall
        return RunSpec(self._robot, RunKind.FREE_FALL, q0, fall.seconds(), dt,
                       damping=fall.damping(), method=fall.fall_method(), stops=fall.stops(),
                       live=fall.live(), pull=self.pull, step=fall.penalty_step(),
                       newton_iterations=fall.newton_iterations())

    def run(self, spec: RunSpec | None = None) -> None:
        """Start `spec`, or the selected tab's run (`spec()`); a running one is
        cancelled first."""
        if spec is None:
            if self._robot is None:
                self._status.set_line("Load a robot first.")
                return
            try:
                spec = self.spec()
            except ArmDynError as err:  # a field the run cannot start from, by name
                self._status.set_line(str(err))
                return
        self._pause.blockSignals(True)
        self._pause.setChecked(False)
        self._pause.setText("Pause")
        self._pause.blockSignals(False)
        self._control.run(spec)

    def show_run(self, spec: RunSpec) -> None:
        """Run `spec` (on its own model: a sweep's point) with the fields showing its
        settings: its tab, duration, sample step, and its target or damping."""
        inverse = spec.kind is RunKind.INVERSE
        self._tabs.setCurrentIndex(MODE_INVERSE if inverse else MODE_FREE_FALL)
        self._dt.setValue(spec.dt)
        if inverse:
            self.targets.set_seconds(spec.duration)
            if spec.target is not None:
                self.set_target_pose(spec.target)
        else:
            self.free_fall.set_seconds(spec.duration)
            if np.ndim(spec.damping) == 0:
                self.set_damping(float(spec.damping))
        self.run(spec)

    def start_inverse(self, seconds: float) -> None:
        """Run inverse dynamics for `seconds` s (current pose -> target pose)."""
        self._tabs.setCurrentIndex(MODE_INVERSE)
        self.targets.set_seconds(seconds)
        self.run()

    def start_free_fall(self, seconds: float, method: FallMethod | None = None) -> None:
        """Run a free fall of `seconds` s from the current pose (by `method`, if given)."""
        self._tabs.setCurrentIndex(MODE_FREE_FALL)
        self.free_fall.set_seconds(seconds)
        if method is not None:
            self.set_fall_method(method)
        self.run()

    @Slot()
    def stop(self) -> None:
        """Stop the running job: `stopped(partial)` is emitted at once with the chunks shown
        so far; what the job still computes is dropped (its thread ends at its next
        chunk boundary, in the background)."""
        self._control.stop()

    def pause(self, paused: bool = True) -> None:
        """Pause (or resume) the running job at its next chunk."""
        self._pause.setChecked(paused)

    def is_running(self) -> bool:
        """True while a job runs or is paused."""
        return self._control.is_running()

    def is_live(self) -> bool:
        """True while a live free fall runs (the one `pull` acts on)."""
        return self._control.is_live()

    @property
    def duration(self) -> float:
        """Duration of the current (or last) run, s (0 before the first)."""
        spec = self._control.spec
        return spec.duration if spec is not None else 0.0

    def show_messages(self):
        """Open the window with the last run's status and messages (`RunStatus`)."""
        return self._status.show_messages()

    def status_text(self) -> str:
        """The status line and every message of the run (its warnings, then the end
        stops it hit), one a line, as plain text."""
        return self._status.text()

    def shutdown(self) -> None:
        """Cancel a running job (window close); its thread ends on its own."""
        self._control.cancel()
        self.targets.motion.optimiser.cancel()
        self._status.clear_progress()
        self._update_buttons()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.shutdown()
        super().closeEvent(event)

    # ----- layout ---------------------------------------------------------------------
    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        """The least height that shows everything at `width` (the parameters scroll):
        a scroll area that holds the panel (the window's dock) then fits it to the dock
        and keeps Run / Pause / Stop in sight, instead of growing it to the height the
        parameters would like (the layout's own answer, with the wrapped status text)."""
        return self.layout().totalMinimumHeightForWidth(width)

    def preferred_width(self) -> int:
        """The width that shows the parameters whole, every joint's name included (the
        window's default layout gives the Run dock this much where it can), px."""
        margins = self.layout().contentsMargins()
        frame = (2 * self.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth)
                 + TAB_PAGE_FRAME)
        scroll_bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        return (self.targets.preferred_width() + frame + scroll_bar + margins.left()
                + margins.right())

    def controls_in_sight(self) -> bool:
        """True if Run, Pause, Stop and the progress bar are wholly inside the visible
        part of the panel (what a small screen must keep)."""
        visible = self.visibleRegion()
        return all(w.isVisible() and visible.contains(w.geometry())
                   for w in (self._run, self._pause, self._stop, self._status.bar))

    # ----- the run's course (GUI thread) ----------------------------------------------
    @Slot()
    def _on_started(self) -> None:
        self._update_buttons()
        if self._session is not None:
            self._session.start_run(self._control.spec)
        self.started.emit()

    @Slot(object)
    def _on_chunk(self, part: Trajectory) -> None:
        if self._session is not None:
            self._session.add_chunk(part)
        self.chunk.emit(part)

    @Slot(object)
    def _on_ended(self, result: RunResult) -> None:
        self._update_buttons()
        if self._session is not None:
            self._session.end_run(result)

    @Slot()
    def _show_dt(self, *_args) -> None:
        measured = (self._tabs.currentIndex() == MODE_INVERSE
                    and self.targets.motion.kind() is MotionKind.MEASURED)
        self._common.setRowVisible(self._dt, not measured)

    @Slot(object)
    def _on_measured_loaded(self, _motion) -> None:
        """A log was read: run inverse dynamics along it (unless a run is going)."""
        self._status.set_line("Measured motion read; running inverse dynamics along it.")
        if self._robot is not None and not self._control.is_running():
            self._tabs.setCurrentIndex(MODE_INVERSE)
            self.run()

    @Slot(bool)
    def _on_pause_toggled(self, paused: bool) -> None:
        if not self._control.is_running():
            return
        self._control.pause(paused)
        self._status.show_paused(paused)
        self._pause.setText("Resume" if paused else "Pause")

    def _update_buttons(self) -> None:
        running = self._control.is_running()
        self._run.setEnabled(self._robot is not None and not running)
        self._pause.setEnabled(running)
        self._stop.setEnabled(running)
        self._tabs.setEnabled(not running)
        self._dt.setEnabled(not running)
        if not running:
            self._pause.setChecked(False)
            self._pause.setText("Pause")
