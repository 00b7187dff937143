"""The Run panel's motion choice: which law an inverse-dynamics run follows, and the
fields that law needs (`gui.jobs.motion_choice` says what each takes).

A combo box of the laws, and below it one small page per law:

- cycloid, quintic: nothing more (the targets and the duration below)
- trapezoid: the blend time (0: T/3)
- via points: the list of via points; "Add the target as via point at t =" takes the
  target rows' pose at that time (the motion runs current pose -> via points -> target)
- Fourier excitation: base frequency, harmonics, the swing of revolute and prismatic
  joints about the current pose (a fixed phase pattern); "Optimise for identification"
  runs core's `optimise_excitation` in a job (`gui.jobs.excitation`: progress, Cancel)
  and the Fourier motion becomes the optimised one, about the middle of the joints'
  ranges; below, both condition numbers in words, or core's refusal. Changing a field,
  or the model, goes back to the fixed pattern
- tool line / arc: the end point (and the arc's via point), x, y, z in m in the base
  frame; empty: where the target pose (the halfway pose) puts the tool
- measured motion: "Open measured motion..." reads a log in a job's thread
  (`gui.jobs.motion_loading.MotionLoader`), with the differentiator's cut-off; what was
  read, or core's refusal naming the file, line and column, shows below it as plain text

`choice()` gives the `MotionChoice` of the fields. Text that is not three numbers in a
point field is refused there, by name; everything else is checked by core when the run
builds the motion (its message is the run's).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLineEdit, QListWidget, QPushButton,
                               QSpinBox, QVBoxLayout, QWidget)

from armdyn.core import JointType, Mechanism, Robot
from armdyn.core.sim.joint_motions import FourierSeries
from armdyn.core.errors import ArgumentError, ArmDynError
if TYPE_CHECKING:  # a start does not import measured motions
    from armdyn.core.sim.measured import Motion

from ..jobs.excitation import ITERATIONS, ExcitationOptimiser, ExcitationOutcome
from ..jobs.motion_choice import (DEFAULT_BASE_FREQUENCY, DEFAULT_HARMONICS,
                                  DEFAULT_SWING_M, DEFAULT_SWING_RAD, MotionChoice,
                                  MotionKind)
from ..jobs.motion_loading import LOG_FILTER, MotionLoader, describe
from ..look.progress import progress_and_cancel
from ..model.draft import vector_parts
from .run_fields import caption, number_box

__all__ = ["MotionPage"]

#: Text colour of a refusal in the measured page.
REFUSED_COLOR = "#B00020"
#: A via point's pose is listed with at most this many joints (then "...").
VIA_JOINTS_SHOWN = 6


class MotionPage(QWidget):
    """The motion choice (module docstring). ``target_of()`` gives the target rows'
    pose (nq,), rad / m (for "Add the target as via point"), ``pose_of()`` the current
    pose (the fixed Fourier pattern's middle, for its condition number).

    Signals: ``kind_changed(object)`` the `MotionKind` chosen; ``measured_loaded(object)``
    a log was read (the `Motion`).
    """

    kind_changed = Signal(object)
    measured_loaded = Signal(object)

    def __init__(self, target_of: Callable[[], np.ndarray],
                 pose_of: Callable[[], np.ndarray] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._target_of = target_of
        self._pose_of = pose_of
        self._excitation: FourierSeries | None = None
        self.optimiser = ExcitationOptimiser(self)
        self.optimiser.found.connect(self._on_optimised)
        self.optimiser.refused.connect(self._on_optimise_refused)
        self._robot: Robot | Mechanism | None = None
        self._via: list[tuple[float, np.ndarray]] = []
        self._measured: Motion | None = None
        self.loader = MotionLoader(self)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.refused.connect(self._on_refused)
        self.loader.loading.connect(lambda path: self._show_info(f"Reading {path} ..."))

        self.combo = QComboBox()
        self.combo.setObjectName("motionKind")
        for kind in MotionKind:
            self.combo.addItem(kind.value, kind)
        self.combo.setToolTip("The law the joints follow (docs/motions.md)")
        # as wide as the dock gives it, not as its longest entry (a narrow Run dock)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setMinimumContentsLength(12)
        self.combo.currentIndexChanged.connect(self._on_kind)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Motion:", self.combo)
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 0, 0, 0)
        v.addLayout(form)
        # one page per law, the chosen one shown (a hidden page takes no height)
        self._pages: dict[MotionKind, QWidget] = {}
        for kind in MotionKind:
            page = self._build_page(kind)
            page.setObjectName(f"motionPage_{kind.name.lower()}")
            self._pages[kind] = page
            v.addWidget(page)
        self._on_kind()

    # ----- pages ----------------------------------------------------------------------
    def _build_page(self, kind: MotionKind) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        if kind is MotionKind.TRAPEZOID:
            self.blend = number_box(0.0, 0.0, 300.0, 3, 0.1, " s")
            self.blend.setSpecialValueText("T/3")
            self.blend.setToolTip("Time to reach the cruise rate, and to stop from it")
            form.addRow("Blend time:", self.blend)
        elif kind is MotionKind.VIA_POINTS:
            form.addRow(caption("From the current pose through the via points to the "
                                 "target, by a cubic spline at rest at both ends."))
            self.via_list = QListWidget()
            self.via_list.setObjectName("viaPoints")
            self.via_list.setMaximumHeight(72)
            form.addRow(self.via_list)
            self.via_time = number_box(1.0, 0.001, 600.0, 3, 0.1, " s")
            self.via_time.setToolTip("When the motion passes the via point, s from its start")
            add = QPushButton("Add target as via point")
            add.setToolTip("The target rows' pose becomes a via point at the time beside; "
                           "then set the next target")
            add.clicked.connect(lambda: self.add_via(self.via_time.value()))
            clear = QPushButton("Clear")
            clear.clicked.connect(self.clear_via)
            row = QHBoxLayout()  # two rows: the Run dock may be narrow
            row.addWidget(add, 1)
            row.addWidget(clear)
            form.addRow(row)
            form.addRow("at t =", self.via_time)
        elif kind is MotionKind.FOURIER:
            form.addRow(caption("Swings about the current pose: a Fourier series "
                                 "(Swevers 1997), periodic in 1/f."))
            self.base_frequency = number_box(DEFAULT_BASE_FREQUENCY, 0.01, 20.0, 3, 0.05,
                                             " Hz")
            self.harmonics = QSpinBox()
            self.harmonics.setRange(1, 10)
            self.harmonics.setValue(DEFAULT_HARMONICS)
            self.swing_deg = number_box(float(np.degrees(DEFAULT_SWING_RAD)), 0.0, 180.0, 1,
                                        5.0, " \u00b0")
            self.swing_m = number_box(DEFAULT_SWING_M, 0.0, 5.0, 3, 0.01, " m")
            form.addRow("Base frequency f:", self.base_frequency)
            form.addRow("Harmonics:", self.harmonics)
            form.addRow("Swing, revolute:", self.swing_deg)
            form.addRow("Swing, prismatic:", self.swing_m)
            self.torque_limit = number_box(0.0, 0.0, 1.0e5, 1, 10.0, " N m")
            self.torque_limit.setSpecialValueText("none")
            self.torque_limit.setToolTip("The optimised motion's torques stay below this, "
                                         "on every joint (N for a prismatic one); none: "
                                         "no torque limit")
            self.optimise_button = QPushButton("Optimise for identification")
            self.optimise_button.setObjectName("optimiseExcitation")
            self.optimise_button.setToolTip(
                "Fourier coefficients of this frequency and number of harmonics whose "
                "regressor is best conditioned, within the joint limits "
                "(docs/identification.md)")
            self.optimise_button.clicked.connect(lambda: self.optimise())
            self.optimise_progress, self.optimise_cancel = progress_and_cancel(
                self.cancel_optimise)
            self.optimiser.progress.connect(
                lambda f: self.optimise_progress.setValue(round(100 * f)))
            row = QHBoxLayout()
            row.addWidget(self.optimise_progress, 1)
            row.addWidget(self.optimise_cancel)
            self.excitation_info = caption("The fixed phase pattern.")
            self.excitation_info.setObjectName("excitationInfo")
            self.excitation_info.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow("Torque limit:", self.torque_limit)
            form.addRow(self.optimise_button)
            form.addRow(row)
            form.addRow(self.excitation_info)
            for box in (self.base_frequency, self.harmonics, self.swing_deg, self.swing_m,
                        self.torque_limit):
                box.valueChanged.connect(self._on_fourier_edited)
        elif kind in (MotionKind.TOOL_LINE, MotionKind.TOOL_ARC):
            line = kind is MotionKind.TOOL_LINE
            form.addRow(caption(("The tool (the last link's frame) moves along a straight "
                                  "line" if line else "The tool moves along the circular arc "
                                  "through the via point") + "; its orientation is kept."))
            end = QLineEdit()
            end.setPlaceholderText("where the target puts the tool")
            end.setToolTip("x, y, z in m, base frame; empty: where the target pose puts "
                           "the tool")
            if line:
                self.line_end = end
            else:
                self.arc_end = end
                self.arc_via = QLineEdit()
                self.arc_via.setPlaceholderText("where the halfway pose puts it")
                self.arc_via.setToolTip("x, y, z in m, base frame; empty: where the pose "
                                        "halfway to the target puts the tool")
                form.addRow("Via point (m):", self.arc_via)
            form.addRow("End point (m):", end)
        elif kind is MotionKind.MEASURED:
            self.open_button = QPushButton("Open measured motion...")
            self.open_button.setObjectName("openMeasured")
            self.open_button.setToolTip("A CSV log: t, q1..qn [, tau1..taun] "
                                        "(docs/motions.md)")
            self.open_button.clicked.connect(self._ask_log)
            self.cutoff = number_box(0.0, 0.0, 1000.0, 2, 1.0, " Hz")
            self.cutoff.setSpecialValueText("auto")
            self.cutoff.setToolTip("The differentiator's cut-off (auto: 10 Hz, at most a "
                                   "tenth of the sample rate); used when the log has no "
                                   "rates")
            self.measured_info = caption("No log read yet.")
            self.measured_info.setObjectName("measuredInfo")
            self.measured_info.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(self.open_button)
            form.addRow("Cut-off:", self.cutoff)
            form.addRow(self.measured_info)
        return page  # cycloid, quintic: the combo says it all (rest to rest)

    # ----- the choice -----------------------------------------------------------------
    def kind(self) -> MotionKind:
        return self.combo.currentData()

    def page(self, kind: MotionKind) -> QWidget:
        """The fields of `kind` (shown while it is chosen)."""
        return self._pages[kind]

    def set_kind(self, kind: MotionKind) -> None:
        self.combo.setCurrentIndex(self.combo.findData(kind))

    def measured(self) -> Motion | None:
        """The log read last (None before one was)."""
        return self._measured

    def choice(self) -> MotionChoice:
        """The `MotionChoice` of the fields. ArgumentError for a point field's text that is
        not three numbers (naming the field)."""
        kind = self.kind()
        if kind is MotionKind.TRAPEZOID:
            return MotionChoice(kind, blend=self.blend.value() or None)
        if kind is MotionKind.VIA_POINTS:
            return MotionChoice(kind, via=tuple(self._via))
        if kind is MotionKind.FOURIER:
            swing = None
            if self._robot is not None:
                swing = np.where(self._robot.is_revolute, np.radians(self.swing_deg.value()),
                                 self.swing_m.value())
            return MotionChoice(kind, base_frequency=self.base_frequency.value(),
                                harmonics=self.harmonics.value(), swing=swing,
                                excitation=self._excitation)
        if kind is MotionKind.TOOL_LINE:
            return MotionChoice(kind, end_point=_point(self.line_end, "the line's end point"))
        if kind is MotionKind.TOOL_ARC:
            return MotionChoice(kind, end_point=_point(self.arc_end, "the arc's end point"),
                                via_point=_point(self.arc_via, "the arc's via point"))
        if kind is MotionKind.MEASURED:
            return MotionChoice(kind, measured=self._measured)
        return MotionChoice(kind)

    # ----- model ----------------------------------------------------------------------
    def set_robot(self, robot: Robot | Mechanism | None, same_joints: bool) -> None:
        """Via points and a read log are kept when the joints keep their number and types;
        the Fourier page shows the swing of the joint types the model has."""
        self._robot = robot
        types = set(robot.model.joint_types) if robot is not None else set()
        form = self._pages[MotionKind.FOURIER].layout()
        form.setRowVisible(self.swing_deg, JointType.REVOLUTE in types or robot is None)
        form.setRowVisible(self.swing_m, JointType.PRISMATIC in types)
        self.optimiser.cancel()
        self._optimising(False)
        if self._excitation is not None:
            self._excitation = None
            self._show_excitation("The model changed: the fixed phase pattern again "
                                  "(optimise again for this model).")
        if not same_joints:
            self.clear_via()
            self.loader.cancel()
            if self._measured is not None:
                self._measured = None
                self._show_info("The model changed: open the log again for it.")

    # ----- the optimised excitation -------------------------------------------------
    def excitation(self) -> FourierSeries | None:
        """The optimised Fourier motion in use (None: the fixed pattern)."""
        return self._excitation

    def optimise(self, iterations: int = ITERATIONS) -> bool:
        """Start optimising the excitation for the current model, frequency, harmonics
        and torque limit in a job (at most `iterations` of the optimiser); False when
        there is no model or the fixed pattern is refused (said below the button)."""
        if self._robot is None:
            self._show_excitation("Load a robot first.", refused=True)
            return False
        f, L = self.base_frequency.value(), self.harmonics.value()
        pose = (self._pose_of() if self._pose_of is not None
                else self._robot.q_home)
        try:  # the fixed pattern over one period, for the comparison
            fixed = MotionChoice(MotionKind.FOURIER, base_frequency=f, harmonics=L,
                                 swing=self.choice().swing).build(self._robot, pose, pose,
                                                                   1.0 / f)
        except ArmDynError as err:
            self._show_excitation(str(err), refused=True)
            return False
        self._optimising(True)
        self._show_excitation("Optimising the excitation\u2026")
        self.optimiser.optimise(self._robot, f, L, fixed, self.torque_limit.value() or None,
                                iterations)
        return True

    @Slot()
    def cancel_optimise(self) -> None:
        """Stop optimising; the motion in use stays."""
        self.optimiser.cancel()
        self._optimising(False)
        self._show_excitation("Optimisation cancelled; "
                              + ("the optimised motion found before stays in use."
                                 if self._excitation is not None
                                 else "the fixed phase pattern stays in use."))

    def _optimising(self, busy: bool) -> None:
        self.optimise_progress.setVisible(busy)
        self.optimise_cancel.setVisible(busy)
        self.optimise_button.setEnabled(not busy)
        if busy:
            self.optimise_progress.setValue(0)

    @Slot(object)
    def _on_optimised(self, outcome: ExcitationOutcome) -> None:
        self._optimising(False)
        found = outcome.found
        self._excitation = found.motion
        self._show_excitation(
            f"Optimised for identification: condition number {found.condition_number:.3g} "
            f"(the fixed phase pattern's: {outcome.fixed_condition:.3g}; lower is better). "
            f"It swings about the middle of each joint's range, within its "
            f"{', '.join(found.limits)}"
            + (" (a joint without limits: within 180\u00b0 of its home value)"
               if self._robot is not None
               and not np.all(np.isfinite(self._robot.model.joint_limits)) else "")
            + ". Change a field to go back to the fixed pattern.")

    @Slot(str)
    def _on_optimise_refused(self, message: str) -> None:
        self._optimising(False)
        self._show_excitation(message, refused=True)

    @Slot()
    def _on_fourier_edited(self, *_args) -> None:
        if self._excitation is not None or self.optimiser.is_running():
            self.optimiser.cancel()
            self._optimising(False)
            self._excitation = None
            self._show_excitation("The fixed phase pattern.")

    def _show_excitation(self, text: str, refused: bool = False) -> None:
        self.excitation_info.setStyleSheet(
            f"color: {REFUSED_COLOR if refused else '#444'};")
        self.excitation_info.setText(text)

    # ----- via points -----------------------------------------------------------------
    def add_via(self, t: float) -> None:
        """The target rows' pose as a via point at `t` s (the list stays sorted by time)."""
        q = np.asarray(self._target_of(), dtype=float).copy()
        self._via = sorted([(tt, qq) for tt, qq in self._via if tt != t] + [(float(t), q)],
                           key=lambda p: p[0])
        self._show_via()

    @Slot()
    def clear_via(self) -> None:
        self._via = []
        self._show_via()

    def via_points(self) -> list[tuple[float, np.ndarray]]:
        return list(self._via)

    def _show_via(self) -> None:
        self.via_list.clear()
        revolute = (self._robot.is_revolute if self._robot is not None else None)
        for t, q in self._via:
            shown = [f"{np.degrees(x):.1f}\u00b0" if revolute is not None and revolute[j]
                     else f"{x:.3f} m" for j, x in enumerate(q[:VIA_JOINTS_SHOWN])]
            more = ", \u2026" if q.size > VIA_JOINTS_SHOWN else ""
            self.via_list.addItem(f"t = {t:.3f} s: {', '.join(shown)}{more}")
            item = self.via_list.item(self.via_list.count() - 1)
            item.setToolTip(item.text())  # the list may be narrower than the text

    # ----- measured motion ------------------------------------------------------------
    @Slot()
    def _ask_log(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open measured motion", "", LOG_FILTER)
        if path:
            self.open_log(path)

    def open_log(self, path: str) -> None:
        """Read the log at `path` in a job's thread, against the current model."""
        self.set_kind(MotionKind.MEASURED)
        self.loader.load(path, self._robot, self.cutoff.value() or None)

    def _show_info(self, text: str, refused: bool = False) -> None:
        self.measured_info.setStyleSheet(f"color: {REFUSED_COLOR if refused else '#444'};")
        self.measured_info.setText(text)

    @Slot(object)
    def _on_loaded(self, motion: Motion) -> None:
        self._measured = motion
        self._show_info(describe(motion))
        self.measured_loaded.emit(motion)

    @Slot(str)
    def _on_refused(self, message: str) -> None:
        self._show_info(message, refused=True)

    @Slot()
    def _on_kind(self, *_args) -> None:
        kind = self.kind()
        for k, page in self._pages.items():
            page.setVisible(k is kind)
        self.kind_changed.emit(kind)


def _point(edit: QLineEdit, what: str) -> np.ndarray | None:
    """The three numbers of a point field (None when it is empty)."""
    text = edit.text().strip()
    if not text:
        return None
    parts = vector_parts(text)
    try:
        if len(parts) != 3:
            raise ValueError
        return np.array([float(p) for p in parts])
    except ValueError:
        raise ArgumentError(f"{what}: {text!r} is not a point x, y, z (three numbers, "
                            "m)") from None
