"""The Run panel's free-fall page: duration, joint damping, end stops, method (with the
penalty method's step and Newton iterations), live.

A free fall releases the arm at rest from the current pose with no joint torques,
optionally damped, with end stops at the joint limits (on by default when the model
has limits; `core.sim.simulation.JointStops`, their frequency and damping typed). A
mechanism with loops may instead use the penalty / augmented-Lagrangian method, which
has no end stops (`FallMethod`). Live: paced to wall-clock time, pushable (gui/scene/push.py).
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Slot
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLabel,
                               QSpinBox, QVBoxLayout, QWidget)

from armdyn.core import ArmDynError, JointStops, Mechanism, Robot
from armdyn.core.sim.penalty import DEFAULT_H, penalty_step
from armdyn.core.sim.stops import DEFAULT_STOP_DAMPING, DEFAULT_STOP_FREQUENCY

from ..jobs.runs import DEFAULT_NEWTON_ITERATIONS, FallMethod
from .run_targets import caption, seconds_box

__all__ = ["FreeFallPage"]

LIVE_TIP = ("Run the free fall in real time and show the arm as it moves; hold Ctrl and "
            "drag a link in the 3D view to pull it with a spring. Off: the run computes "
            "as fast as it can (play it back afterwards).")
STOPS_TIP = ("A stiff spring with a damper just past each joint limit pushes the joint "
             "back (an end stop); its spring energy counts in the potential energy. Off: "
             "the joints pass through their limits.")
NO_LIMITS_TIP = "The model gives no joint limits: there is nothing to stop at."
PENALTY_NO_STOPS_TIP = ("The penalty method has no end stops: choose Lagrange multipliers "
                        "to stop the joints at their limits.")


class FreeFallPage(QWidget):
    """The free-fall options: `seconds`, `damping`, `fall_method`, `stops`, `live`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._robot: Robot | Mechanism | None = None
        v = QVBoxLayout(self)
        v.addWidget(caption("The arm is released at rest from the current pose with zero "
                            "joint torques and falls under gravity (forward dynamics, "
                            "integrated in time)."))
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # a narrow dock
        self._seconds = seconds_box(3.0, 0.05, 600.0)
        form.addRow("Duration T:", self._seconds)
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
        self._add_penalty_rows(form)
        self._live = QCheckBox("Live: real time, Ctrl+drag pushes")
        self._live.setToolTip(LIVE_TIP)
        form.addRow(self._live)
        v.addLayout(form)
        v.addStretch(1)

    def _add_penalty_rows(self, form: QFormLayout) -> None:
        """The penalty method's step h and Newton iterations (`core.sim.penalty`)."""
        self._step = seconds_box(DEFAULT_H, 1e-5, 0.1, decimals=5, step=0.0005)
        self._step.setToolTip(
            "The penalty method's time step h. The default comes from the mechanism's "
            "highest natural frequency ω at its home pose (h ≈ 0.0125/ω, "
            "core.sim.penalty.penalty_step); a step whose Newton iteration diverges is "
            "taken again in halves. Smaller: more accurate, slower.")
        self._step.valueChanged.connect(self._on_step_edited)
        self._step_label = QLabel("Step h:")
        form.addRow(self._step_label, self._step)
        self._iterations = QSpinBox()
        self._iterations.setRange(1, 50)
        self._iterations.setValue(DEFAULT_NEWTON_ITERATIONS)
        self._iterations.setToolTip("Newton iterations per solve of a step (the book: two); "
                                    "more help a fast or stiff mechanism.")
        self._iterations_label = QLabel("Newton iterations:")
        form.addRow(self._iterations_label, self._iterations)
        self._step_edited = False  # the user's step, kept while the joints stay

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

    # ----- the model ------------------------------------------------------------------
    def set_robot(self, robot: Robot | Mechanism | None, same_joints: bool) -> None:
        """The options `robot` has: the method with loops only, and only where the
        penalty method applies (revolute and prismatic joints, no force elements: else
        multipliers), stops with limits only (on, unless the user turned them off for
        these joints: `same_joints`)."""
        self._robot = robot
        loops = self._method_applies()
        for w in (self._method, self._method_label, self._step, self._step_label,
                  self._iterations, self._iterations_label):
            w.setVisible(loops)
        if not same_joints:
            self._stops_choice = None
            self._step_edited = False
        if loops and not self._step_edited:
            self._set_step_quietly(self._default_step(robot))
        self._stops.setChecked(self._has_limits() and self._stops_choice is not False)
        self._update_stop_fields()

    # ----- the options ----------------------------------------------------------------
    def seconds(self) -> float:
        """The fall's duration T, s."""
        return self._seconds.value()

    def set_seconds(self, seconds: float) -> None:
        self._seconds.setValue(seconds)

    def damping(self) -> float:
        """Viscous joint damping c, the same at every joint, N m s/rad (N s/m)."""
        return self._damping.value()

    def set_damping(self, c: float) -> None:
        self._damping.setValue(c)

    def fall_method(self) -> FallMethod:
        """The method in use (multipliers unless the model has loops and the penalty
        method applies to it)."""
        if not self._method_applies():
            return FallMethod.MULTIPLIERS
        return self._method.currentData()

    def _method_applies(self) -> bool:
        """Whether the method is a choice: loops, revolute and prismatic joints only, no
        force elements (what `core.sim.penalty` takes)."""
        robot = self._robot
        return (robot is not None and bool(robot.loops)
                and all(kind.is_dh for kind in robot.model.joint_types)
                and not robot.model.forces)

    def set_fall_method(self, method: FallMethod) -> None:
        self._method.setCurrentIndex(self._method.findData(method))

    def stops(self) -> JointStops | bool:
        """The end stops: a `JointStops` with the frequency and damping typed, or False
        (off, or the model has no limits, or the penalty method, which has none)."""
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

    def penalty_step(self) -> float:
        """The penalty method's step h, s (default: from the mechanism's frequencies)."""
        return self._step.value()

    def set_penalty_step(self, h: float) -> None:
        self._step.setValue(h)

    def newton_iterations(self) -> int:
        """Newton iterations per solve of the penalty method."""
        return self._iterations.value()

    def set_newton_iterations(self, count: int) -> None:
        self._iterations.setValue(count)

    def live(self) -> bool:
        """Run the next free falls live (paced to wall-clock time, pushable)."""
        return self._live.isChecked()

    def set_live(self, on: bool) -> None:
        self._live.setChecked(on)

    # ----- internals ------------------------------------------------------------------
    @staticmethod
    def _default_step(robot) -> float:
        try:
            return penalty_step(robot)
        except (ArmDynError, np.linalg.LinAlgError):  # a pose the frequencies miss
            return DEFAULT_H

    def _set_step_quietly(self, h: float) -> None:
        self._step.blockSignals(True)
        self._step.setValue(h)
        self._step.blockSignals(False)

    @Slot()
    def _on_step_edited(self) -> None:
        self._step_edited = True

    def _has_limits(self) -> bool:
        return self._robot is not None and bool(np.isfinite(self._robot.joint_limits).any())

    @Slot(bool)
    def _on_stops_clicked(self, checked: bool) -> None:
        self._stops_choice = checked

    @Slot()
    def _update_stop_fields(self) -> None:
        """The checkbox is usable when there are limits and the method has stops; the
        frequency and damping fields when the stops are on."""
        limited = self._has_limits()
        penalty = self.fall_method() == FallMethod.PENALTY
        for w in (self._step, self._step_label, self._iterations, self._iterations_label):
            w.setEnabled(penalty)
        self._stops.setEnabled(limited and not penalty)
        self._stops.setToolTip(NO_LIMITS_TIP if not limited else
                               PENALTY_NO_STOPS_TIP if penalty else STOPS_TIP)
        on = self._stops.isEnabled() and self._stops.isChecked()
        for w in (self._stop_frequency, self._stop_damping, self._stop_fields_label,
                  self._stop_damping_label):
            w.setEnabled(on)
