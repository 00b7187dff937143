"""The run panel: choose a computation, run it in a worker thread, stream its results.

Two modes, one tab each:
  * Inverse dynamics: the torques along a cycloidal rest-to-rest motion from the
    current pose to a target pose (`core.sim.trajectory.inverse_dynamics_chunks`). For a
    mechanism with loops only the actuated joints have targets: they move along
    the cycloid and the other joints follow the loops.
  * Free fall: the arm released at rest from the current pose with no joint
    torques, optionally damped, with end stops at the joint limits (on by default
    when the model has limits; `core.sim.simulation.JointStops`, their frequency and
    damping typed) (`core.sim.simulation.simulate_chunks`). A mechanism
    with loops may instead use the penalty / augmented-Lagrangian method
    (`core.sim.penalty.penalty_simulate_chunks`), chosen by `FallMethod`.

The status text under the progress bar is the home of a run's messages: its line,
then the run's warnings (`Trajectory.warnings`) and, when it ends, the stops it hit
(`core.sim.simulation.stop_report`).

The GUI thread only moves widgets: the core generator runs in a `GeneratorWorker`
and its small Trajectory chunks arrive through queued signals; the progress bar
and the status line follow from a timer (every DISPLAY_MS), not per chunk.

Run / Pause / Stop, the progress bar and the status line sit below the
parameters, which scroll: they stay in sight however low the dock. The target
of every joint is a row of a `JointList` (only the rows in sight exist; a filter
for long lists).
"""
from __future__ import annotations

import logging
from enum import Enum
from html import escape

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QTextDocumentFragment
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel,
    QProgressBar, QPushButton, QSizePolicy, QTabWidget, QVBoxLayout, QWidget,
)

from armdyn.core import (LoopClosureError, Mechanism, PointPull, Robot, SimulationError,
                  SingularConfigurationError)
from armdyn.core.algorithms.mechanism_pose import follow_independent
from armdyn.core.sim.penalty import penalty_simulate_chunks
from armdyn.core.sim.simulation import (DEFAULT_STOP_DAMPING, DEFAULT_STOP_FREQUENCY, JointStops,
                             real_time, simulate_chunks, stop_report)
from armdyn.core.sim.trajectory import Trajectory, inverse_dynamics_chunks
from ..look.colors import joint_color
from ..editors.pose_panel import JointList
from ..look.scroll import scroll_area
from ..jobs.worker import GeneratorWorker

log = logging.getLogger(__name__)

#: Default target offsets from the current pose, cycled over the joints: visible,
#: modest, and different per joint so that the plotted curves do not overlap.
TARGET_OFFSETS_DEG = (30.0, -20.0, 45.0, -30.0, 60.0, -45.0)
TARGET_OFFSET_M = 0.1
#: Spin-box range for joints without limits (deg, m).
FREE_RANGE_DEG = 1080.0
FREE_RANGE_M = 10.0
#: Inverse dynamics: samples per chunk (small enough to cancel fast and plot smoothly).
ID_CHUNK_SAMPLES = 50
#: Free fall: a chunk at least every SIM_CHUNK_WALL_S of computing (prompt cancel, live
#: plots) and at most every SIM_CHUNK_S simulated seconds, so a fast simulation sends a
#: few large chunks instead of flooding the GUI thread's queue with thousands of small ones.
SIM_CHUNK_S = 1.0
SIM_CHUNK_WALL_S = 0.03
#: A live free fall (paced to wall-clock time): one chunk per display frame, s.
LIVE_CHUNK_S = 1.0 / 60.0
LIVE_TIP = ("Run the free fall in real time and show the arm as it moves; hold Ctrl and "
            "drag a link in the 3D view to pull it with a spring. Off: the run computes "
            "as fast as it can (play it back afterwards).")
#: At most this many run messages (warnings, stop hits) in the status text; the others
#: are in its tooltip.
MESSAGES_SHOWN = 4
#: The progress bar's text between runs; during one it shows the time reached.
PROGRESS_FORMAT = "%p %"
STOPS_TIP = ("A stiff spring with a damper just past each joint limit pushes the joint "
             "back (an end stop); its spring energy counts in the potential energy. Off: "
             "the joints pass through their limits.")
NO_LIMITS_TIP = "The model gives no joint limits: there is nothing to stop at."
PENALTY_NO_STOPS_TIP = ("The penalty method has no end stops: choose Lagrange multipliers "
                        "to stop the joints at their limits.")
#: How long shutdown() waits for the worker thread, s.
JOIN_TIMEOUT_S = 5.0
#: The progress bar and status line follow a run this often, ms (a chunk can come
#: every few milliseconds; QProgressBar repaints at once on every setValue).
DISPLAY_MS = 50

MODE_INVERSE = 0
MODE_FREE_FALL = 1


def _live_free_fall(*args, **kwargs):
    """`simulate_chunks(*args, **kwargs)` paced to wall-clock time (`real_time`)."""
    return (yield from real_time(simulate_chunks(*args, **kwargs)))


class FallMethod(Enum):
    """How a free fall is integrated."""

    #: adaptive DOP853; with loops, Lagrange multipliers and projection onto the loops
    MULTIPLIERS = "Lagrange multipliers (DOP853, projected)"
    #: with loops only: Jalon & Bayo's penalty / augmented Lagrangian, trapezoidal rule
    PENALTY = "Penalty, augmented Lagrangian (trapezoidal, h = 0.01 s)"


def driven_by_targets(model: Robot | Mechanism) -> tuple[int, ...]:
    """The joints an inverse-dynamics run moves along the cycloid: a mechanism's actuated
    joints (the others follow the loops), else every joint."""
    return tuple(model.actuated) if model.loops else tuple(range(model.n))


def _seconds_box(value: float, lo: float, hi: float, decimals: int = 2, step: float = 0.5
                 ) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setValue(value)
    box.setSuffix(" s")
    return box


def _caption(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet("color: #444;")
    return label


class _TargetRow(QWidget):
    """One row of the target list: joint, its current value, its target (a spin box)."""

    def __init__(self, panel: "RunPanel") -> None:
        super().__init__()
        self.panel = panel
        self.index = -1
        self.label = QLabel()
        # a long joint name is clipped (its tooltip has it) rather than the Run dock
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.current = QLabel()
        self.current.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        # widths for the usual values (-180.00 deg, -1.0000 m): a narrow Run dock leaves the
        # joint's name the rest (larger values still show, a little clipped)
        self.current.setMinimumWidth(self.fontMetrics().horizontalAdvance("-000.00 \u00b0"))
        self.box = QDoubleSpinBox()
        self.box.setFixedWidth(self.fontMetrics().horizontalAdvance("-00.0000 m") + 30)
        self.box.valueChanged.connect(lambda v: panel._on_target_edited(self.index, v))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.current)
        row.addWidget(self.box)

    def bind(self, i: int) -> None:
        """Show joint i's name, current value and target (no edit signal)."""
        panel = self.panel
        self.index = -1  # no edit while the box is set up
        revolute = bool(panel._revolute[i])
        name = panel._names[i]
        self.label.setText(f"<span style='color:{joint_color(i)}'>\u25a0</span> {i + 1} {name}")
        self.label.setToolTip(f"{i + 1} {name}")
        current = panel._display(panel._pose)[i]
        self.current.setText(f"{current:.2f} \u00b0" if revolute else f"{current:.4f} m")
        box, value = self.box, panel._target_shown[i]
        box.setSuffix(" \u00b0" if revolute else " m")
        box.setDecimals(2 if revolute else 4)
        box.setSingleStep(5.0 if revolute else 0.01)
        lo, hi = panel._ranges[i]
        if np.isnan(value):  # follows the loops: no target of its own
            box.setEnabled(False)
            box.setToolTip("A passive joint: it follows the loops")
            box.setSpecialValueText("follows")
            box.setRange(lo - 1.0, hi)
            box.setValue(lo - 1.0)
        else:
            box.setEnabled(True)
            box.setToolTip("")
            box.setSpecialValueText("")
            box.setRange(lo, hi)
            box.setValue(float(value))
        self.index = i


class RunPanel(QWidget):
    """Parameters, Run / Pause / Stop and progress for the two computations.

    Signals (all in the GUI thread):
      started()         a run began
      chunk(object)     a Trajectory chunk of new samples (never empty)
      finished(object)  the whole Trajectory of a completed run
      failed(str)       the core's error message; followed by stopped(partial)
      stopped(object)   the run ended early (user stop or failure): the partial
                        Trajectory (possibly with 0 samples)
    `set_robot` and `shutdown` cancel a running job silently (no stopped()).
    """

    started = Signal()
    chunk = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    stopped = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._robot: Robot | None = None
        self._revolute = np.zeros(0, dtype=bool)  # of the robot's joints (n,)
        self._names: list[str] = []  # of the robot's joints
        self._pose = np.zeros(0)
        self._targets_edited = False
        self._setting_targets = False
        #: target of every joint as shown (deg / m); NaN: a passive joint (follows)
        self._target_shown = np.zeros(0)
        self._ranges = np.zeros((0, 2))  # spin-box range of every joint, shown units
        self._shown_t = 0.0  # time of the newest sample of the running job, s
        self._display_timer = QTimer(self)
        self._display_timer.setInterval(DISPLAY_MS)
        self._display_timer.timeout.connect(self._show_progress)
        self._worker: GeneratorWorker | None = None
        self._stop_emitted = False
        self._orphans: list[GeneratorWorker] = []  # cancelled but not yet ended (rare)
        self._chunks: list[Trajectory] = []
        self._error: BaseException | None = None
        self._duration = 0.0
        self._kind = ""
        #: the pull of a live free fall (gui/scene/push.py grabs, moves and releases it)
        self.pull = PointPull()
        self._live_run = False
        #: the status line (plain or rich text) and the run's messages shown below it
        self._status_line, self._status_rich = "", False
        self._messages: tuple[str, ...] = ()
        self._build()
        self._update_buttons()

    # ----- construction ---------------------------------------------------------------
    def _build(self) -> None:
        self._tabs = QTabWidget()
        self._tabs.addTab(self._build_inverse_page(), "Inverse dynamics")
        self._tabs.addTab(self._build_free_fall_page(), "Free fall")

        self._dt = _seconds_box(0.01, 0.001, 0.5, decimals=3, step=0.005)
        self._dt.setToolTip("Time between output samples (plots, playback, CSV). "
                            "The integrator chooses its own, finer steps.")
        common = QFormLayout()
        common.addRow("Output sample step dt:", self._dt)

        self._run = QPushButton("Run")
        self._pause = QPushButton("Pause")
        self._pause.setCheckable(True)
        self._stop = QPushButton("Stop")
        self._run.clicked.connect(self.run)
        self._pause.toggled.connect(self._on_pause_toggled)
        self._stop.clicked.connect(self.stop)
        buttons = QHBoxLayout()
        for b in (self._run, self._pause, self._stop):
            buttons.addWidget(b)

        self._progress = QProgressBar()
        self._progress.setRange(0, 1000)
        self._progress.setFormat(PROGRESS_FORMAT)
        self._status = QLabel("Load a robot to start.")
        self._status.setObjectName("runStatus")
        self._status.setTextFormat(Qt.TextFormat.RichText)
        self._status.setWordWrap(True)
        self._status.setTextInteractionFlags(Qt.TextSelectableByMouse)

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
        layout.addWidget(self._progress)
        layout.addWidget(self._status)

    def _build_inverse_page(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        v.addWidget(_caption("Joint torques / forces needed to move the arm along a cycloidal "
                             "rest-to-rest motion from the current pose to the target pose "
                             "(inverse dynamics)."))
        header = QHBoxLayout()
        for text, stretch in (("Joint", 1), ("Current", 0), ("Target", 0)):
            header.addWidget(QLabel(f"<b>{text}</b>"), stretch)
        v.addLayout(header)
        self._targets = JointList(lambda: _TargetRow(self))
        v.addWidget(self._targets, 1)
        self._copy = QPushButton("Copy current pose to target")
        self._copy.clicked.connect(self._copy_current)
        v.addWidget(self._copy)
        form = QFormLayout()
        self._id_seconds = _seconds_box(2.0, 0.05, 600.0)
        form.addRow("Duration T:", self._id_seconds)
        v.addLayout(form)
        return page

    def _build_free_fall_page(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        v.addWidget(_caption("The arm is released at rest from the current pose with zero "
                             "joint torques and falls under gravity (forward dynamics, "
                             "integrated in time)."))
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # a narrow dock
        self._ff_seconds = _seconds_box(3.0, 0.05, 600.0)
        form.addRow("Duration T:", self._ff_seconds)
        self._damping = QDoubleSpinBox()
        self._damping.setRange(0.0, 1e4)
        self._damping.setDecimals(3)
        self._damping.setSingleStep(0.1)
        self._damping.setToolTip("Viscous joint damping c, the same at every joint: torque "
                                 "-c q\u0307 (N m s/rad at revolute, N s/m at prismatic joints).")
        form.addRow("Joint damping c:", self._damping)
        unit = QLabel("N m s/rad (N s/m at sliding joints)")
        unit.setWordWrap(True)  # the Run dock may be narrow
        form.addRow("", unit)
        self._add_stop_rows(form)
        self._method = QComboBox()
        # its long item texts would widen the whole Run dock: show ~16 characters
        self._method.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self._method.setMinimumContentsLength(10)
        for method in FallMethod:
            self._method.addItem(method.value, method)
        self._method.setToolTip("For a mechanism with loops: keep the loops closed with "
                                "Lagrange multipliers (exact) or hold them with stiff "
                                "penalty springs and an augmented Lagrangian (Garc\u00eda de "
                                "Jal\u00f3n and Bayo, fixed step)")
        self._method.currentIndexChanged.connect(self._update_stop_fields)  # penalty: none
        self._method_label = QLabel("Method:")
        form.addRow(self._method_label, self._method)
        self._live = QCheckBox("Live: real time, Ctrl+drag pushes")
        self._live.setToolTip(LIVE_TIP)
        form.addRow(self._live)
        v.addLayout(form)
        v.addStretch(1)
        return page

    def set_live(self, on: bool) -> None:
        """Run the next free falls live (paced to wall-clock time, pushable) or not."""
        self._live.setChecked(on)

    def is_live(self) -> bool:
        """True while a live free fall runs (the one `pull` acts on)."""
        return self._worker is not None and self._live_run

    def _add_stop_rows(self, form: QFormLayout) -> None:
        """The end-stop option of a free fall (`core.sim.simulation.JointStops`)."""
        self._stops = QCheckBox("End stops at joint limits")
        self._stops.setToolTip(STOPS_TIP)
        self._stops.clicked.connect(self._on_stops_clicked)  # the user's choice only
        self._stops.toggled.connect(self._update_stop_fields)
        form.addRow(self._stops)
        self._stop_frequency = QDoubleSpinBox()
        self._stop_frequency.setRange(0.1, 10000.0)
        self._stop_frequency.setDecimals(1)
        self._stop_frequency.setSingleStep(10.0)
        self._stop_frequency.setValue(DEFAULT_STOP_FREQUENCY)
        self._stop_frequency.setSuffix(" Hz")
        self._stop_frequency.setToolTip(
            "How hard the stops are: a joint on its stop rings at about f. A contact lasts "
            "about 1/(2 f) (10 ms at 50 Hz), and a joint that hits its stop at speed v "
            "goes about v/(2π f) past the limit (1.6 mm at 0.5 m/s and 50 Hz; "
            "the same in rad at a revolute joint). Higher: harder stops, smaller steps, "
            "slower runs.")
        form.addRow("Stop frequency f:", self._stop_frequency)
        self._stop_damping = QDoubleSpinBox()
        self._stop_damping.setRange(0.0, 1e4)
        self._stop_damping.setDecimals(2)
        self._stop_damping.setSingleStep(1.0)
        self._stop_damping.setValue(DEFAULT_STOP_DAMPING)
        self._stop_damping.setToolTip(
            "How much of an impact the stop absorbs (Hunt-Crossley damping d, s/rad at "
            "revolute, s/m at prismatic joints). The bounce-back speed over the impact "
            "speed v (restitution e) depends on d v alone: e = 1 at 0 (an elastic "
            "bounce), 0.94 at d v = 0.1, 0.59 at 1, 0.2 at 5, 0.1 at 10. The energy the "
            "stops absorb leaves the total energy.")
        form.addRow("Stop damping d:", self._stop_damping)
        self._stop_fields_label = form.labelForField(self._stop_frequency)
        self._stop_damping_label = form.labelForField(self._stop_damping)
        self._stops_choice: bool | None = None  # the user's click, kept while the joints stay

    def _rebuild_targets(self) -> None:
        """Ranges and passive joints of the robot's targets; the list's rows follow."""
        if self._robot is None:
            self._ranges = np.zeros((0, 2))
            self._target_shown = np.zeros(0)
            self._targets.set_joints([])
            return
        lo, hi = self._robot.joint_limits.T
        free = np.where(self._revolute, FREE_RANGE_DEG, FREE_RANGE_M)
        self._ranges = np.column_stack([
            np.where(np.isfinite(lo), self._display(np.where(np.isfinite(lo), lo, 0.0)), -free),
            np.where(np.isfinite(hi), self._display(np.where(np.isfinite(hi), hi, 0.0)), free)])
        driven = driven_by_targets(self._robot)
        self._target_shown = np.array([0.0 if i in driven else np.nan
                                       for i in range(self._robot.n)])
        self._targets.set_joints(self._robot.link_names)

    # ----- robot and pose -------------------------------------------------------------
    def set_robot(self, robot: Robot | None) -> None:
        """Use `robot` (cancels a running job silently); the pose becomes its home pose.

        Targets the user typed are kept when the joints keep their number and types
        (an edit of the robot's tables), else they are reset to the default offsets.
        """
        self._cancel_and_join()
        old = self._robot
        kept = self.target_pose() if self._targets_edited else None
        same_joints = (old is not None and robot is not None and old.n == robot.n
                       and bool(np.all(old.is_revolute == robot.is_revolute)))
        self._robot = robot
        # read once per robot: a pose change rebinds the rows in sight (a slider drag)
        self._revolute = robot.is_revolute if robot is not None else np.zeros(0, dtype=bool)
        self._names = robot.link_names if robot is not None else []
        self._pose = robot.q_home.copy() if robot is not None else np.zeros(0)
        self._rebuild_targets()
        self._show_pose()
        if kept is not None and same_joints:
            self._show_targets(kept)
        else:
            self._targets_edited = False
            self._set_default_targets()
        loops = robot is not None and bool(robot.loops)
        self._method.setVisible(loops)
        self._method_label.setVisible(loops)
        self._set_stops_default(same_joints)
        self._set_progress(0)
        self._messages = ()
        self._set_status("Ready." if robot is not None else "Load a robot to start.")
        self._update_buttons()

    def set_pose(self, q) -> None:
        """The current pose, shape (n,), rad / m: start of both computations."""
        if self._robot is None:
            return
        q = np.asarray(q, dtype=float).reshape(self._robot.n)
        self._pose = q.copy()
        self._show_pose()
        if not self._targets_edited:
            self._set_default_targets()

    def target_pose(self) -> np.ndarray:
        """Target pose of the inverse-dynamics motion, shape (n,), rad / m. For a
        mechanism with loops only the actuated joints' values count (the others are
        the current pose's)."""
        if self._robot is None:
            return np.zeros(0)
        shown = np.nan_to_num(self._target_shown)
        target = np.where(self._revolute, np.radians(shown), shown)
        driven = list(driven_by_targets(self._robot))
        out = self._pose.copy()
        out[driven] = target[driven]
        return out

    def set_target_pose(self, q) -> None:
        """Set the target pose, shape (n,), rad / m (counts as a user edit)."""
        self._show_targets(np.asarray(q, dtype=float))
        self._targets_edited = True

    def _display(self, q: np.ndarray) -> np.ndarray:
        return np.where(self._revolute, np.degrees(q), q)

    def _show_pose(self) -> None:
        self._targets.refresh()

    def _show_targets(self, q: np.ndarray) -> None:
        """Targets q (n,), rad / m (passive joints keep following), clipped to the boxes'
        ranges and rounded as the boxes show them."""
        passive = np.isnan(self._target_shown)
        decimals = np.where(self._revolute, 2, 4)
        shown = np.clip(self._display(q), self._ranges[:, 0], self._ranges[:, 1])
        shown = np.array([round(float(v), int(d)) for v, d in zip(shown, decimals)])
        self._target_shown = np.where(passive, np.nan, shown)
        self._setting_targets = True
        try:
            self._targets.refresh()
        finally:
            self._setting_targets = False

    def _set_default_targets(self) -> None:
        """Target = current pose + a visible offset, kept inside the joint limits."""
        if self._robot is None:
            return
        n = self._robot.n
        degrees = np.resize(np.array(TARGET_OFFSETS_DEG), n)
        offset = np.where(self._revolute, np.radians(degrees), TARGET_OFFSET_M)
        lo, hi = self._robot.joint_limits.T
        if self._robot.loops:
            self._show_targets(self._reachable_target(offset))
            return
        ahead = self._pose + offset
        target = np.where((ahead >= lo) & (ahead <= hi), ahead, self._pose - offset)
        self._show_targets(np.clip(target, lo, hi))

    def _reachable_target(self, offset: np.ndarray) -> np.ndarray:
        """A mechanism's default target: its actuated joints moved by the offsets (or
        back, or by smaller steps) to a pose where the loops still close (checked by
        core's assembly along the way), else the current pose."""
        driven = list(driven_by_targets(self._robot))
        for scale in (1.0, -1.0, 0.5, -0.5, 0.25, -0.25):
            target = self._pose.copy()
            target[driven] += scale * offset[driven]
            try:
                return follow_independent(self._robot, self._pose, target)
            except (LoopClosureError, SingularConfigurationError):
                continue
        return self._pose.copy()

    def _on_target_edited(self, i: int, value: float) -> None:
        """The user typed a target for joint i (0-based), shown units."""
        if not self._setting_targets and i >= 0:
            self._target_shown[i] = value
            self._targets_edited = True

    @Slot()
    def _copy_current(self) -> None:
        self.set_target_pose(self._pose)

    # ----- running --------------------------------------------------------------------
    def start_inverse(self, seconds: float) -> None:
        """Run inverse dynamics for `seconds` s (current pose -> target pose)."""
        self._tabs.setCurrentIndex(MODE_INVERSE)
        self._id_seconds.setValue(seconds)
        self.run()

    def start_free_fall(self, seconds: float, method: FallMethod | None = None) -> None:
        """Run a free fall of `seconds` s from the current pose (by `method`, if given)."""
        self._tabs.setCurrentIndex(MODE_FREE_FALL)
        self._ff_seconds.setValue(seconds)
        if method is not None:
            self.set_fall_method(method)
        self.run()

    def fall_method(self) -> FallMethod:
        """The free-fall method in use (multipliers unless the model has loops)."""
        if self._robot is None or not self._robot.loops:
            return FallMethod.MULTIPLIERS
        return self._method.currentData()

    def set_fall_method(self, method: FallMethod) -> None:
        self._method.setCurrentIndex(self._method.findData(method))

    def stops(self) -> JointStops | bool:
        """The end stops of the next free fall: a `JointStops` with the frequency and
        damping typed, or False (off, or the model has no limits, or the penalty method,
        which has none)."""
        if not (self._stops.isEnabled() and self._stops.isChecked()):
            return False
        return JointStops(frequency=self._stop_frequency.value(),
                          damping=self._stop_damping.value())

    def set_stops(self, on: bool, frequency: float | None = None,
                  damping: float | None = None) -> None:
        """Turn the end stops on or off (as a click does), and set their frequency (Hz)
        and damping (s/rad, s/m) if given."""
        self._stops.setChecked(on)
        self._on_stops_clicked(on)
        if frequency is not None:
            self._stop_frequency.setValue(frequency)
        if damping is not None:
            self._stop_damping.setValue(damping)

    def _has_limits(self) -> bool:
        return self._robot is not None and bool(np.isfinite(self._robot.joint_limits).any())

    def _set_stops_default(self, same_joints: bool) -> None:
        """Stops on when the model has limits, unless the user turned them off for
        these joints (the choice is kept over edits that keep the joints)."""
        if not same_joints:
            self._stops_choice = None
        self._stops.setChecked(self._has_limits() and self._stops_choice is not False)
        self._update_stop_fields()

    @Slot(bool)
    def _on_stops_clicked(self, checked: bool) -> None:
        self._stops_choice = checked

    @Slot()
    def _update_stop_fields(self) -> None:
        """The checkbox is usable when there are limits and the method has stops; the
        frequency and damping fields when the stops are on."""
        limited = self._has_limits()
        penalty = self.fall_method() == FallMethod.PENALTY
        self._stops.setEnabled(limited and not penalty)
        self._stops.setToolTip(NO_LIMITS_TIP if not limited else
                               PENALTY_NO_STOPS_TIP if penalty else STOPS_TIP)
        on = self._stops.isEnabled() and self._stops.isChecked()
        for w in (self._stop_frequency, self._stop_damping, self._stop_fields_label,
                  self._stop_damping_label):
            w.setEnabled(on)

    @Slot()
    def run(self) -> None:
        """Start the computation of the selected tab (a running one is cancelled first)."""
        if self._robot is None:
            self._set_status("Load a robot first.")
            return
        self._cancel_and_join()
        dt = self._dt.value()
        live = False
        if self._tabs.currentIndex() == MODE_INVERSE:
            self._duration = self._id_seconds.value()
            self._kind = "Inverse dynamics"
            worker = GeneratorWorker(inverse_dynamics_chunks, self._robot, self._pose.copy(),
                                     self.target_pose(), self._duration, dt_out=dt,
                                     chunk_samples=ID_CHUNK_SAMPLES)
        elif self.fall_method() == FallMethod.PENALTY:
            self._duration = self._ff_seconds.value()
            self._kind = "Free fall (penalty)"
            worker = GeneratorWorker(penalty_simulate_chunks, self._robot, self._duration,
                                     q0=self._pose.copy(), qd0=np.zeros(self._robot.n),
                                     damping=self._damping.value(), dt_out=dt,
                                     chunk_duration=SIM_CHUNK_S,
                                     max_wall_per_chunk=SIM_CHUNK_WALL_S)
        elif self._live.isChecked():
            # live: paced to wall-clock time in small chunks, pushable through `pull`
            self._duration = self._ff_seconds.value()
            self._kind = "Free fall (live)"
            self.pull.release()
            live = True
            worker = GeneratorWorker(_live_free_fall, self._robot, self._duration,
                                     q0=self._pose.copy(), qd0=np.zeros(self._robot.n),
                                     damping=self._damping.value(), dt_out=dt,
                                     chunk_duration=LIVE_CHUNK_S,
                                     max_wall_per_chunk=SIM_CHUNK_WALL_S,
                                     stops=self.stops(), pull=self.pull)
        else:
            self._duration = self._ff_seconds.value()
            self._kind = "Free fall"
            worker = GeneratorWorker(simulate_chunks, self._robot, self._duration,
                                     q0=self._pose.copy(), qd0=np.zeros(self._robot.n),
                                     damping=self._damping.value(), dt_out=dt,
                                     chunk_duration=SIM_CHUNK_S,
                                     max_wall_per_chunk=SIM_CHUNK_WALL_S,
                                     stops=self.stops())
        worker.yielded.connect(self._on_chunk)
        worker.finished.connect(self._on_finished)
        worker.raised.connect(self._on_raised)
        worker.errored.connect(self._on_errored)
        worker.aborted.connect(self._on_aborted)
        worker.done.connect(self._on_done)
        self._worker = worker
        self._live_run = live
        self._stop_emitted = False
        self._chunks = []
        self._error = None
        self._set_progress(0)
        self._progress.setFormat(PROGRESS_FORMAT)
        self._shown_t = 0.0
        self._messages = ()
        self._set_status(f"{self._kind}: computing\u2026")
        self._pause.setChecked(False)
        self._update_buttons()
        self._display_timer.start()
        worker.start()
        self.started.emit()

    @Slot()
    def stop(self) -> None:
        """Stop the running job: `stopped(partial)` is emitted at once with the chunks shown
        so far; chunks still queued from the worker are dropped, and its thread ends at
        its next chunk boundary (is_running() turns False then)."""
        if self._worker is not None and not self._stop_emitted:
            self._worker.cancel()
            self._emit_stopped()

    def pause(self, paused: bool = True) -> None:
        """Pause (or resume) the running job at its next chunk."""
        self._pause.setChecked(paused)

    def is_running(self) -> bool:
        """True while a job runs or is paused."""
        return self._worker is not None

    @property
    def duration(self) -> float:
        """Duration of the current (or last) run, s: the duration field of its mode."""
        return self._duration

    def status_text(self) -> str:
        """The status line and every message of the run (its warnings, then the end
        stops it hit), one a line, as plain text."""
        return "\n".join([QTextDocumentFragment.fromHtml(self._status_line).toPlainText()
                          if self._status_rich else self._status_line, *self._messages])

    def _set_status(self, line: str, rich: bool = False) -> None:
        """Show `line` (plain text, or rich text if `rich`) with the run's messages below
        it: at most MESSAGES_SHOWN, all of them in the tooltip."""
        self._status_line, self._status_rich = line, rich
        parts = [line if rich else escape(line)]
        shown = self._messages[:MESSAGES_SHOWN]
        parts += [f"\u2022 {escape(m)}" for m in shown]
        if len(self._messages) > len(shown):
            parts.append(f"<i>\u2026 and {len(self._messages) - len(shown)} more (tooltip)</i>")
        self._status.setText("<br>".join(parts))
        self._status.setToolTip("\n".join(f"\u2022 {m}" for m in self._messages))

    def _run_messages(self, traj: Trajectory) -> tuple[str, ...]:
        """What a run says when it ends: its warnings, then the stops it hit
        (`core.sim.simulation.stop_report`)."""
        hits = stop_report(self._robot, traj) if len(traj) else ()
        return (*traj.warnings, *hits)

    def shutdown(self) -> None:
        """Cancel a running job and wait for its thread (window close)."""
        self._cancel_and_join()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.shutdown()
        super().closeEvent(event)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        """The least height that shows everything at `width` (the parameters scroll):
        a scroll area that holds the panel (the window's dock) then fits it to the dock
        and keeps Run / Pause / Stop in sight, instead of growing it to the height the
        parameters would like (the layout's own answer, with the wrapped status text)."""
        return self.layout().totalMinimumHeightForWidth(width)

    def controls_in_sight(self) -> bool:
        """True if Run, Pause, Stop and the progress bar are wholly inside the visible
        part of the panel (what a small screen must keep)."""
        visible = self.visibleRegion()
        return all(w.isVisible() and visible.contains(w.geometry())
                   for w in (self._run, self._pause, self._stop, self._progress))

    def _cancel_and_join(self) -> None:
        worker, self._worker = self._worker, None  # late queued signals are now ignored
        if worker is None:
            return
        if worker.quit(JOIN_TIMEOUT_S):
            worker.deleteLater()
        else:  # stuck inside one long step: let it end on its own, then delete it
            log.warning("the computation did not stop within %.0f s; it is left to finish",
                        JOIN_TIMEOUT_S)
            self._orphans.append(worker)
            worker.done.connect(self._on_orphan_done)
        self._set_progress(0)
        self._progress.setFormat(PROGRESS_FORMAT)
        self._update_buttons()

    @Slot()
    def _on_orphan_done(self) -> None:
        worker = self.sender()
        if worker in self._orphans:
            self._orphans.remove(worker)
            worker.join()
            worker.deleteLater()

    @Slot(bool)
    def _on_pause_toggled(self, paused: bool) -> None:
        if self._worker is None:
            return
        if paused:
            self._worker.pause()
            self._set_status(f"{self._kind}: paused.")
        else:
            self._worker.resume()
            self._set_status(f"{self._kind}: computing\u2026")
        self._pause.setText("Resume" if paused else "Pause")

    def _update_buttons(self) -> None:
        running = self._worker is not None
        self._run.setEnabled(self._robot is not None and not running)
        self._pause.setEnabled(running)
        self._stop.setEnabled(running)
        if not running:
            self._display_timer.stop()
        self._tabs.setEnabled(not running)
        self._dt.setEnabled(not running)
        if not running:
            self._pause.setChecked(False)
            self._pause.setText("Pause")

    # ----- worker signals (GUI thread; ignored when not from the current worker) -------
    def _current(self) -> bool:
        return self._worker is not None and self.sender() is self._worker

    @Slot(object)
    def _on_chunk(self, part: Trajectory) -> None:
        if not self._current() or len(part) == 0 or self._stop_emitted:
            return
        self._chunks.append(part)
        self._shown_t = float(part.t[-1])  # shown by _show_progress, from a timer
        if part.warnings and not self._messages:  # known from the start: shown at once
            self._messages = tuple(part.warnings)
            self._set_status(self._status_line, rich=self._status_rich)
        self.chunk.emit(part)

    @Slot()
    def _show_progress(self) -> None:
        """Timer, while a job runs: progress bar and status line at the newest sample."""
        if self._worker is None or self._stop_emitted or self._worker.is_paused:
            return
        t = self._shown_t
        value = round(1000 * min(1.0, t / self._duration))
        if value != self._progress.value():
            # the time goes in the bar, not the status line: a new word-wrapped rich
            # text there re-lays out the dock (10-17 ms at every tick, issue #8)
            self._progress.setFormat(f"t = {t:.2f} / {self._duration:.2f} s")
            self._set_progress(value)

    def _set_progress(self, value: int) -> None:
        """The bar's value (0-1000), painted with the window's next paint.

        QProgressBar.setValue repaints at once, and a synchronous repaint paints every
        dirty region of the window (the streaming plots: 12-17 ms, issue #8); with updates
        off it only stores the value, and turning them on queues a paint.
        """
        self._progress.setUpdatesEnabled(False)
        self._progress.setValue(value)
        self._progress.setUpdatesEnabled(True)

    @Slot(object)
    def _on_finished(self, traj: Trajectory) -> None:
        if not self._current() or self._stop_emitted:
            return  # (a run that ended while Stop was pressed stays stopped)
        self._set_progress(1000)
        self._progress.setFormat(PROGRESS_FORMAT)
        self._messages = self._run_messages(traj)
        self._set_status(f"{self._kind}: finished, {len(traj)} samples over "
                         f"{self._duration:.2f} s.")
        self.finished.emit(traj)

    @Slot(object)
    def _on_raised(self, err: BaseException) -> None:
        if self._current():
            self._error = err

    @Slot(str)
    def _on_errored(self, message: str) -> None:
        if not self._current():
            return
        # a SimulationError carries every sample computed so far, some perhaps not yet yielded
        partial = self._error.result if isinstance(self._error, SimulationError) else None
        partial = partial if isinstance(partial, Trajectory) else self._partial()
        if isinstance(self._error, SingularConfigurationError) and self._error.time is None:
            # inverse dynamics along a motion: the pose after the last computed sample
            after = f"t = {partial.t[-1]:.3f} s" if len(partial) else "the start"
            message = f"{message} (after {after}; {len(partial)} samples kept)"
        elif isinstance(self._error, SimulationError):
            message = f"{message} ({len(partial)} samples kept)"
        self._messages = self._run_messages(partial)
        self._set_status(f"<span style='color:#B00020'><b>Stopped:</b> "
                         f"{escape(message)}</span>", rich=True)
        self.failed.emit(message)
        self.stopped.emit(partial)

    @Slot(object)
    def _on_aborted(self, _values: list) -> None:
        if not self._current() or self._stop_emitted:
            return
        self._emit_stopped()

    def _emit_stopped(self) -> None:
        self._stop_emitted = True
        partial = self._partial()
        end = f"t = {partial.t[-1]:.2f} s" if len(partial) else "the start"
        self._messages = self._run_messages(partial)
        self._set_status(f"{self._kind}: stopped at {end} ({len(partial)} samples).")
        self.stopped.emit(partial)

    @Slot()
    def _on_done(self) -> None:
        if not self._current():
            return
        worker, self._worker = self._worker, None
        worker.join(JOIN_TIMEOUT_S)  # done() is its thread's last act: this returns at once
        worker.deleteLater()
        self._update_buttons()

    def _partial(self) -> Trajectory:
        if self._chunks:
            return Trajectory.concatenate(self._chunks)
        kind = "inverse-dynamics" if self._kind == "Inverse dynamics" else "free-fall"
        m = self._robot.kernel.m
        return Trajectory.empty(self._robot.n, kind, m)
