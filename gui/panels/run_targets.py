"""The Run panel's inverse-dynamics page: the motion law (`gui.panels.run_motion`), the
target pose of every joint and the duration.

Targets belong to revolute and prismatic joints: a floating base, and a joint of several
degrees of freedom, get no row (the cycloid moves joint values one by one). A floating
base moves as the joints push it (core's hybrid dynamics); a note says so.

Each joint's target is a row of a `JointList` (only the rows in sight exist; a filter
for long lists): its name, its current value and its target in a spin box (deg / m).
The targets follow the pose (current + a visible offset, within the limits) until the
user types one; typed targets are kept over an edit of the robot's tables that keeps
its joints. The joints with a target are core's `target_joints` (those the command
line's --target names too): a mechanism with loops has targets for its actuated joints
only; the others follow the loops ("follows"), and its default target is a pose where the loops
still close (`core.algorithms.mechanism_pose.follow_independent`).
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QPushButton,
                               QSizePolicy, QVBoxLayout, QWidget)

from armdyn.core import (JointType, LoopClosureError, Mechanism, Robot,
                         SingularConfigurationError)
from armdyn.core.algorithms.mechanism_pose import follow_independent
from armdyn.core.sim.motions import target_joints

from ..editors.pose_panel import JointList
from ..jobs.motion_choice import MotionKind
from ..look.colors import joint_color
from ..look.text import html, shown_name, tooltip
from .run_fields import caption, seconds_box
from .run_motion import MotionPage

__all__ = ["TargetsPage", "seconds_box", "caption"]

#: Default target offsets from the current pose, cycled over the joints: visible,
#: modest, and different per joint so that the plotted curves do not overlap.
TARGET_OFFSETS_DEG = (30.0, -20.0, 45.0, -30.0, 60.0, -45.0)
TARGET_OFFSET_M = 0.1
#: Spin-box range for joints without limits (deg, m).
FREE_RANGE_DEG = 1080.0
FREE_RANGE_M = 10.0


#: `TargetsPage.preferred_width` measures the names of at most this many joints.
NAMES_MEASURED = 500
#: A target row's columns are as wide as these texts: the current value, and the target
#: box (with its arrows and frame, TARGET_BOX_EXTRA px more); the joint's name takes the
#: rest, elided where it does not fit.
CURRENT_SAMPLE, TARGET_SAMPLE, TARGET_BOX_EXTRA = "-000.00 \u00b0", "-00.0000 m", 30
#: px between a target row's columns
COLUMN_SPACING = 6


def _name_text(i: int, name: str) -> str:
    """Joint i's name as its row shows it (number, then the name from the file)."""
    return f"{i + 1} {name}"


class _TargetRow(QWidget):
    """One row of the target list: joint, its current value, its target (a spin box)."""

    def __init__(self, page: "TargetsPage") -> None:
        super().__init__()
        self.page = page
        self.index = -1
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.RichText)  # a swatch; the name is escaped
        # a long joint name is clipped (its tooltip has it) rather than the Run dock
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.current = QLabel()
        self.current.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        # widths for the usual values (-180.00 deg, -1.0000 m): a narrow Run dock leaves the
        # joint's name the rest (larger values still show, a little clipped)
        self.current.setMinimumWidth(self.fontMetrics().horizontalAdvance(CURRENT_SAMPLE))
        self.box = QDoubleSpinBox()
        self.box.setFixedWidth(self.fontMetrics().horizontalAdvance(TARGET_SAMPLE)
                               + TARGET_BOX_EXTRA)
        self.box.valueChanged.connect(lambda v: page._on_target_edited(self.index, v))
        self._swatch_width = self.fontMetrics().horizontalAdvance("\u25a0 ")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(COLUMN_SPACING)
        row.addWidget(self.label, 1)
        row.addWidget(self.current)
        row.addWidget(self.box)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override: elide anew
        super().resizeEvent(event)
        if self.index >= 0:
            index, self.index = self.index, -1
            self.bind(index)

    def bind(self, i: int) -> None:
        """Show joint i's name, current value and target (no edit signal)."""
        page = self.page
        self.index = -1  # no edit while the box is set up
        revolute = bool(page._revolute[i])
        name, j = page._names[i], page._joints[i]
        # elided with "\u2026" where the dock is too narrow (the tooltip has it whole)
        shown = self.fontMetrics().elidedText(_name_text(j, name), Qt.TextElideMode.ElideRight,
                                              max(self.label.width() - self._swatch_width, 24))
        self.label.setText(f"<span style='color:{joint_color(j)}'>\u25a0</span> "
                           f"{html(shown)}")  # the name, from the file, as plain text
        self.label.setToolTip(tooltip(_name_text(j, name)))
        current = page._display(page._pose[page._qi])[i]
        self.current.setText(f"{current:.2f} \u00b0" if revolute else f"{current:.4f} m")
        box, value = self.box, page._target_shown[i]
        box.setSuffix(" \u00b0" if revolute else " m")
        box.setDecimals(2 if revolute else 4)
        box.setSingleStep(5.0 if revolute else 0.01)
        lo, hi = page._ranges[i]
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


class TargetsPage(QWidget):
    """The inverse-dynamics page: the law (``motion``, a `MotionPage`), targets
    (`target_pose`), duration (`seconds`). The targets hide for the laws that have none
    (Fourier excitation, a measured motion), the duration for a measured motion."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._robot: Robot | Mechanism | None = None
        #: the joints with a target: the revolute and prismatic ones (a floating base
        #: and joints of several degrees of freedom have none), and their entries of q
        self._joints: list[int] = []
        self._qi = np.zeros(0, dtype=int)
        self._revolute = np.zeros(0, dtype=bool)  # of those joints
        self._names: list[str] = []  # of those joints
        self._pose = np.zeros(0)
        self._targets_edited = False
        self._setting_targets = False
        #: target of every joint as shown (deg / m); NaN: a passive joint (follows)
        self._target_shown = np.zeros(0)
        self._ranges = np.zeros((0, 2))  # spin-box range of every joint, shown units

        v = QVBoxLayout(self)
        v.addWidget(caption("Joint torques / forces the drives must deliver to move the arm "
                            "along a motion (inverse dynamics), friction and rotor inertia "
                            "included."))
        self._floating_note = caption(
            "The floating base has no motor: it is not driven to a target but moves as the "
            "joints push it, with the system's momentum kept (the base plots show it).")
        self._floating_note.hide()
        v.addWidget(self._floating_note)
        self.motion = MotionPage(self.target_pose, lambda: self._pose)
        v.addWidget(self.motion)
        self._header = QWidget()
        header = QHBoxLayout(self._header)
        header.setContentsMargins(0, 0, 0, 0)
        for text, stretch in (("Joint", 1), ("Current", 0), ("Target", 0)):
            header.addWidget(QLabel(f"<b>{text}</b>"), stretch)
        v.addWidget(self._header)
        self._targets = JointList(lambda: _TargetRow(self))
        v.addWidget(self._targets, 1)
        self._copy = QPushButton("Copy current pose to target")
        self._copy.clicked.connect(self._copy_current)
        v.addWidget(self._copy)
        # takes the height the targets leave when a law has none (the fields stay on top)
        self._filler = QWidget()
        self._filler.hide()
        v.addWidget(self._filler, 1)
        self._duration = QWidget()
        form = QFormLayout(self._duration)
        form.setContentsMargins(0, 0, 0, 0)
        self._seconds = seconds_box(2.0, 0.05, 600.0)
        form.addRow("Duration T:", self._seconds)
        v.addWidget(self._duration)
        self.motion.kind_changed.connect(self._on_kind)

    # ----- layout ---------------------------------------------------------------------
    def preferred_width(self) -> int:
        """The width of the page that shows every joint's name whole (the longest of the
        first NAMES_MEASURED), beside its current value and target box, px."""
        metrics = self.fontMetrics()
        names = max((metrics.horizontalAdvance(f"\u25a0 {_name_text(i, name)}") + 4
                     for i, name in enumerate(self._names[:NAMES_MEASURED])), default=0)
        values = (metrics.horizontalAdvance(CURRENT_SAMPLE) + metrics.horizontalAdvance(
            TARGET_SAMPLE) + TARGET_BOX_EXTRA + 2 * COLUMN_SPACING)
        margins = self.layout().contentsMargins()
        return names + values + self._targets.chrome_width() + margins.left() + margins.right()

    def bound_rows(self) -> list[QWidget]:
        """The target rows bound to a joint now (each: ``index``, ``label``)."""
        return self._targets.bound_rows()

    # ----- duration -------------------------------------------------------------------
    def seconds(self) -> float:
        """The motion's duration T, s."""
        return self._seconds.value()

    def set_seconds(self, seconds: float) -> None:
        self._seconds.setValue(seconds)

    # ----- model and pose -------------------------------------------------------------
    def set_robot(self, robot: Robot | Mechanism | None, same_joints: bool) -> None:
        """Targets of `robot` from its home pose. Targets the user typed are kept when
        `same_joints` (their number and types did not change), else reset."""
        kept = self.target_pose() if self._targets_edited else None
        self._robot = robot
        # read once per robot: a pose change rebinds the rows in sight (a slider drag)
        types = robot.model.joint_types if robot is not None else ()
        self._joints = [j for j, kind in enumerate(types) if kind.is_dh]
        self._qi = np.array(robot.values_of(self._joints) if robot is not None else [],
                            dtype=int)
        self._revolute = (robot.is_revolute[self._joints] if robot is not None
                          else np.zeros(0, dtype=bool))
        # as shown (a name of a megabyte costs 40 ms per row to elide, issue #20)
        self._names = ([shown_name(robot.link_names[j]) for j in self._joints]
                       if robot is not None else [])
        self._pose = robot.q_home.copy() if robot is not None else np.zeros(0)
        self._rebuild_targets()
        self._targets.refresh()
        if kept is not None and same_joints:
            self._show_targets(kept)
        else:
            self._targets_edited = False
            self._set_default_targets()
        self.motion.set_robot(robot, same_joints)
        # last: showing it lays the page out again, which binds the rows in sight
        self._floating_note.setVisible(JointType.FREE in types)

    def set_pose(self, q: np.ndarray) -> None:
        """The current pose (nq,), rad / m: the motion's start."""
        self._pose = q.copy()
        self._targets.refresh()
        if not self._targets_edited:
            self._set_default_targets()

    def target_pose(self) -> np.ndarray:
        """Target pose of the motion, shape (nq,), rad / m. For a mechanism with loops
        only the actuated joints' values count (the others are the current pose's)."""
        if self._robot is None:
            return np.zeros(0)
        shown = np.nan_to_num(self._target_shown)
        target = np.where(self._revolute, np.radians(shown), shown)
        driven = set(target_joints(self._robot))
        rows = [r for r, j in enumerate(self._joints) if j in driven]
        out = self._pose.copy()
        out[self._qi[rows]] = target[rows]
        return out

    def set_target_pose(self, q) -> None:
        """Set the target pose, shape (nq,), rad / m (counts as a user edit)."""
        self._show_targets(np.asarray(q, dtype=float))
        self._targets_edited = True

    # ----- internals ------------------------------------------------------------------
    def _rebuild_targets(self) -> None:
        """Ranges and passive joints of the robot's targets; the list's rows follow."""
        if self._robot is None:
            self._ranges = np.zeros((0, 2))
            self._target_shown = np.zeros(0)
            self._targets.set_joints([])
            return
        lo, hi = self._robot.joint_limits[self._joints].T
        free = np.where(self._revolute, FREE_RANGE_DEG, FREE_RANGE_M)
        self._ranges = np.column_stack([
            np.where(np.isfinite(lo), self._display(np.where(np.isfinite(lo), lo, 0.0)), -free),
            np.where(np.isfinite(hi), self._display(np.where(np.isfinite(hi), hi, 0.0)), free)])
        driven = set(target_joints(self._robot))
        self._target_shown = np.array([0.0 if j in driven else np.nan
                                       for j in self._joints])
        self._targets.set_joints(self._names)

    def _display(self, q: np.ndarray) -> np.ndarray:
        return np.where(self._revolute, np.degrees(q), q)

    def _show_targets(self, q: np.ndarray) -> None:
        """Targets q (nq,), rad / m (passive joints keep following), clipped to the boxes'
        ranges and rounded as the boxes show them."""
        passive = np.isnan(self._target_shown)
        decimals = np.where(self._revolute, 2, 4)
        shown = np.clip(self._display(q[self._qi]), self._ranges[:, 0], self._ranges[:, 1])
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
        degrees = np.resize(np.array(TARGET_OFFSETS_DEG), len(self._joints))
        offset = np.zeros(self._robot.nq)
        offset[self._qi] = np.where(self._revolute, np.radians(degrees), TARGET_OFFSET_M)
        if self._robot.loops:
            self._show_targets(self._reachable_target(offset))
            return
        lo, hi = self._robot.joint_limits[self._joints].T
        now = self._pose[self._qi]
        ahead = now + offset[self._qi]
        target = self._pose.copy()
        target[self._qi] = np.clip(np.where((ahead >= lo) & (ahead <= hi), ahead,
                                            now - offset[self._qi]), lo, hi)
        self._show_targets(target)

    def _reachable_target(self, offset: np.ndarray) -> np.ndarray:
        """A mechanism's default target: its actuated joints moved by the offsets (or
        back, or by smaller steps) to a pose where the loops still close (checked by
        core's assembly along the way), else the current pose."""
        driven = self._robot.values_of(target_joints(self._robot))
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

    @Slot(object)
    def _on_kind(self, kind) -> None:
        for w in (self._header, self._targets, self._copy):
            w.setVisible(kind.uses_target)
        self._filler.setVisible(not kind.uses_target)
        self._duration.setVisible(kind is not MotionKind.MEASURED)

    @Slot()
    def _copy_current(self) -> None:
        self.set_target_pose(self._pose)
