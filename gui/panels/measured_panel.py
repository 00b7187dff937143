"""Measured against modelled: a log's measured joint torques beside the model's, the
residual below them with its RMS, and the model torque's parts (inertial, gravity,
friction, rotor) switched on and off to see which one explains the residual.

The parts come from the core (`core.algorithms.torque_parts`), computed in a job
(`gui.jobs.measured.torque_parts_steps`) when a log is opened and again, debounced by
RECOMPUTE_MS, whenever the document's model changes (an edited mass or friction
coefficient redraws the prediction at once). Switching parts or joints only re-adds
the kept parts: no physics here. The curves are drawn downsampled to the screen
(`gui.plots.curves.SampleCurve`), so a 60 s log at 1 kHz draws in a few ms.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel,
                               QPushButton, QVBoxLayout, QWidget)

from armdyn.core import Motion, TorqueParts
from armdyn.core.algorithms.torque_parts import PARTS

from ..jobs.job import Job
from ..jobs.measured import torque_parts_steps
from ..jobs.motion_loading import load_motion_steps
from ..look.progress import progress_and_cancel
from ..look.text import plain_label, shown_name, tooltip
from ..plots.curves import SampleCurve
from ..plots.plots_panel import (LABEL_STYLE, adopt_menus, align_axis_widths, legend_beside,
                                 style_like_results, time_plot_pair)

__all__ = ["MeasuredPanel", "RECOMPUTE_MS", "LOG_FILTER"]

#: ms after the last model change before the prediction is computed again.
RECOMPUTE_MS = 150
#: The open dialog's filter.
LOG_FILTER = "Motion logs (*.csv *.txt);;All files (*)"
#: The parts' check-box labels.
PART_LABELS = {"inertial": "Inertial (M qdd + C qd)", "gravity": "Gravity",
               "friction": "Friction", "rotor": "Rotor inertia"}


def _follow(plot, x_range) -> None:
    """`plot` takes the time range `x_range` (s) of the other plot."""
    if list(plot.viewRange()[0]) != list(x_range):
        plot.setXRange(*x_range, padding=0.0)


def _unit(model, j: int) -> str:
    """N for a prismatic joint, else N m."""
    kind = str(model.model.joint_types[j]).lower() if model is not None else ""
    return "N" if "prismatic" in kind else "N m"


class MeasuredPanel(QWidget):
    """The measured-motion view. `set_robot(model)` follows the document's model,
    `open_motion(path)` loads a log (a dialog when `path` is None).

    Signals: ``motion_loaded(Motion)`` when a log is in; ``predicted()`` when the
    prediction for the current model and log is drawn.
    """

    motion_loaded = Signal(object)
    predicted = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("measuredPanel")
        self.robot = None
        self.motion: Motion | None = None
        self.parts: TorqueParts | None = None  # of the current model along the motion
        self._job: Job | None = None
        self._load_job: Job | None = None
        self._timer = QTimer(self)
        self._timer.setObjectName("measuredRecompute")
        self._timer.setSingleShot(True)
        self._timer.setInterval(RECOMPUTE_MS)
        self._timer.timeout.connect(self._predict)

        self.open_button = QPushButton("Open measured motion\u2026")
        self.open_button.setToolTip("A CSV log t, q1..qn, tau1..taun (docs/motions.md)")
        self.open_button.clicked.connect(lambda: self.open_motion())
        self.source_label = plain_label("No log open.")
        self.source_label.setObjectName("measuredSource")
        self.joint_box = QComboBox()
        self.joint_box.setObjectName("measuredJoint")
        self.joint_box.setToolTip("The joint whose torques are drawn")
        self.joint_box.currentIndexChanged.connect(self._redraw)
        self.part_boxes: dict[str, QCheckBox] = {}
        parts_row = QHBoxLayout()
        parts_row.addWidget(QLabel("Model torque:"))
        for name in PARTS:
            box = QCheckBox(PART_LABELS[name])
            box.setChecked(True)
            box.setToolTip(f"Include the {name} part in the model torque")
            box.toggled.connect(self._redraw)
            self.part_boxes[name] = box
            parts_row.addWidget(box)
        parts_row.addStretch(1)
        self.progress, self.cancel_button = progress_and_cancel(self.cancel)
        self.summary = plain_label("Open a log with measured torques: the model's "
                                   "torques are computed along it.")
        self.summary.setObjectName("measuredSummary")
        self.summary.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.source_label, 1)
        top.addWidget(QLabel("Joint:"))
        top.addWidget(self.joint_box)
        top.addWidget(self.progress)
        top.addWidget(self.cancel_button)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.ci.layout.setContentsMargins(0, 0, 24, 0)
        self.torque_plot, self.residual_plot = time_plot_pair(self.graphics)
        # one time range for both, followed by value (setXLink maps pixels, and the
        # plots' axes may differ in width)
        for a, b in ((self.torque_plot, self.residual_plot),
                     (self.residual_plot, self.torque_plot)):
            a.sigXRangeChanged.connect(lambda _vb, r, other=b: _follow(other, r))
        legend_beside(self.torque_plot, below=True, columns=2)
        for plot, title in ((self.torque_plot, "measured and model torque"),
                            (self.residual_plot, "residual: measured \u2212 model")):
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.hideAxis("right")
            style_like_results(plot, title, left="N m")
            adopt_menus(plot, self)
            plot.hideButtons()
            plot.vb.sigResized.connect(self._align)
        self.residual_plot.getAxis("bottom").setLabel("time (s)", **LABEL_STYLE)
        self.measured_curve = SampleCurve(pg.mkPen("#000000", width=1))
        self.model_curve = SampleCurve(pg.mkPen("#D55E00", width=2))
        self.residual_curve = SampleCurve(pg.mkPen("#CC79A7", width=1))
        self.torque_plot.addItem(self.measured_curve)
        self.torque_plot.addItem(self.model_curve)
        self.torque_plot.legend.addItem(self.measured_curve, "measured")
        self.torque_plot.legend.addItem(self.model_curve, "model")
        self.residual_plot.addItem(self.residual_curve)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(parts_row)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.summary)

    # ----- inputs ---------------------------------------------------------------------
    def set_robot(self, robot) -> None:
        """The document's (valid) model changed: predict again after RECOMPUTE_MS."""
        self.robot = robot
        self._fill_joints()
        if self.motion is not None:
            self._timer.start()

    def open_motion(self, path: str | Path | None = None) -> bool:
        """Load the log at `path` (ask for one when None) in a job; False if none was
        chosen. Its errors are shown in the summary, the log open before stays."""
        if path is None:
            name, _ = QFileDialog.getOpenFileName(self, "Open Measured Motion", "",
                                                  LOG_FILTER)
            if not name:
                return False
            path = name
        if self._load_job is not None:
            self._load_job.cancel()
        job = Job(load_motion_steps, path, self.robot, name="load motion")
        job.finished.connect(self.set_motion)
        job.failed.connect(lambda message, _err: self._show_problem(message))
        job.done.connect(lambda: self._busy(self._job is not None and self._job.is_running()))
        self._load_job = job
        self._busy(True, f"Reading {Path(path).name}\u2026")
        job.start()
        return True

    def set_motion(self, motion: Motion) -> None:
        """Show this measured motion (its torques, if it has them) and predict along it."""
        self.motion = motion
        self.parts = None
        torques = "measured torques" if motion.tau is not None else "no measured torques"
        self.source_label.setToolTip(tooltip(motion.source))
        self.source_label.setText(f"{shown_name(Path(motion.source).name or 'log')}: {len(motion)} "
                                  f"samples, {motion.duration - motion.t[0]:.4g} s, "
                                  f"{motion.rate:.4g} Hz, {torques}")
        self.motion_loaded.emit(motion)
        self._predict()

    # ----- the prediction -------------------------------------------------------------
    def _predict(self) -> None:
        """Compute the parts of the current model's torques along the log in a job
        (the job before is cancelled)."""
        self._timer.stop()
        if self.robot is None or self.motion is None:
            return
        if self.motion.n != self.robot.model.nv:
            self._show_problem(f"the log has {self.motion.n} joints, the model "
                               f"{self.robot.model.nv}: open a log of this model")
            return
        if self._job is not None:
            self._job.cancel()
        job = Job(torque_parts_steps, self.robot, self.motion,
                  progress_of=lambda fraction: fraction, name="torque parts")
        job.progress.connect(lambda f: self.progress.setValue(round(100 * f)))
        job.finished.connect(self._on_parts)
        job.failed.connect(lambda message, _err: self._show_problem(message))
        job.done.connect(lambda: self._busy(False))
        self._job = job
        self._busy(True, "Computing the model's torques along the log\u2026")
        job.start()

    def _on_parts(self, parts: TorqueParts) -> None:
        self.parts = parts
        self._redraw()
        self.predicted.emit()

    def cancel(self) -> None:
        """Stop the loading and the prediction (what was drawn stays)."""
        self._timer.stop()
        for job in (self._job, self._load_job):
            if job is not None:
                job.cancel()
        self._busy(False)

    def shutdown(self) -> None:
        """Cancel the jobs (nothing waits for their threads)."""
        self.cancel()

    # ----- what is drawn --------------------------------------------------------------
    def selected_parts(self) -> tuple[str, ...]:
        """The parts switched on, in PARTS order."""
        return tuple(name for name in PARTS if self.part_boxes[name].isChecked())

    def prediction(self) -> np.ndarray | None:
        """(S, n) the model torque with the parts switched on, N m / N; None before
        the first prediction."""
        return None if self.parts is None else self.parts.sum_of(self.selected_parts())

    def residual(self) -> np.ndarray | None:
        """(S, n) measured minus `prediction()`; None without both."""
        model = self.prediction()
        if model is None or self.motion is None or self.motion.tau is None:
            return None
        return self.motion.tau - model

    def residual_rms(self) -> np.ndarray | None:
        """(n,) the residual's RMS per joint, N m / N."""
        r = self.residual()
        return None if r is None else np.sqrt(np.mean(r**2, axis=0))

    def _redraw(self, *_args) -> None:
        j = max(self.joint_box.currentIndex(), 0)
        motion, model = self.motion, self.prediction()
        if motion is None or model is None or j >= model.shape[1]:
            for curve in (self.measured_curve, self.model_curve, self.residual_curve):
                curve.set_samples(np.zeros(0), np.zeros(0))
            return
        t = motion.t
        unit = _unit(self.robot, j)
        self.model_curve.set_samples(t, np.ascontiguousarray(model[:, j]))
        name = self.joint_box.currentText()
        if motion.tau is None:
            self.measured_curve.set_samples(np.zeros(0), np.zeros(0))
            self.residual_curve.set_samples(np.zeros(0), np.zeros(0))
            self.summary.setText("The log has no measured torques (tau1..taun): only the "
                                 "model's are drawn.")
        else:
            residual = motion.tau[:, j] - model[:, j]
            self.measured_curve.set_samples(t, np.ascontiguousarray(motion.tau[:, j]))
            self.residual_curve.set_samples(t, residual)
            rms = float(np.sqrt(np.mean(residual**2)))
            peak = float(np.sqrt(np.mean(motion.tau[:, j]**2)))
            self.residual_plot.setTitle(f"residual: measured \u2212 model, RMS {rms:.4g} {unit}",
                                        color="#000")
            off = [PART_LABELS[p].split(" (")[0].lower() for p in PARTS
                   if p not in self.selected_parts()]
            self.summary.setText(
                f"{name}: residual RMS {rms:.4g} {unit} against the measured torque's RMS "
                f"{peak:.4g} {unit}" + (f"; left out of the model: {', '.join(off)}"
                                        if off else "") + ".")
        for plot in (self.torque_plot, self.residual_plot):
            plot.setLabel("left", unit, **LABEL_STYLE)
            plot.enableAutoRange(axis=pg.ViewBox.YAxis)
        self.torque_plot.setXRange(float(t[0]), float(t[-1]), padding=0.0)

    def _fill_joints(self) -> None:
        names = [shown_name(n) for n in self.robot.model.joint_names] if self.robot else []
        current = [self.joint_box.itemText(i) for i in range(self.joint_box.count())]
        if names == current:
            return
        index = self.joint_box.currentIndex()
        self.joint_box.blockSignals(True)
        self.joint_box.clear()
        for j, name in enumerate(names):
            self.joint_box.addItem(f"{j + 1}: {name}")
        self.joint_box.setCurrentIndex(min(max(index, 0), len(names) - 1))
        self.joint_box.blockSignals(False)

    def _busy(self, busy: bool, text: str = "") -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.progress.setValue(0)
            if text:
                self.summary.setText(text)

    def _show_problem(self, message: str) -> None:
        self.summary.setText(message)

    def _align(self, *_args) -> None:
        align_axis_widths((self.torque_plot, self.residual_plot))
