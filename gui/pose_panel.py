"""Move the arm by hand: one slider and spin box per joint, and a Home button.

The panel shows a pose and reports the user's edits with ``pose_edited(q)``;
it does not own the pose (the main window does). Revolute joints are shown in
degrees, prismatic joints in metres; q is always in rad / m.

For a mechanism with loops only the independent joints get a slider; the other
joints follow by assembly (the window closes the loops) and show their values
read-only.
"""
from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QDoubleSpinBox, QGridLayout, QHBoxLayout, QLabel, QPushButton,
                               QScrollArea, QSlider, QStyle, QVBoxLayout, QWidget)

from core import Mechanism, Robot

from .colors import joint_color

__all__ = ["PosePanel", "pose_ranges", "carry_pose", "driven_joints", "DEFAULT_REVOLUTE_RANGE",
           "DEFAULT_PRISMATIC_RANGE"]

#: Slider range of a joint without limits: +-180 deg, +-1 m.
DEFAULT_REVOLUTE_RANGE = (-math.pi, math.pi)
DEFAULT_PRISMATIC_RANGE = (-1.0, 1.0)
#: Slider steps per unit shown: 0.1 deg, 1 mm.
_TICKS_PER_DEG = 10
_TICKS_PER_M = 1000


def driven_joints(robot: Robot | Mechanism) -> tuple[int, ...]:
    """The joints a person moves: the independent joints of a mechanism with loops
    (the others follow by assembly), else every joint."""
    if isinstance(robot, Mechanism) and robot.loops:
        return tuple(robot.independent)
    return tuple(range(robot.n))


def pose_ranges(robot: Robot) -> np.ndarray:
    """Slider ranges, shape (n, 2), rad / m: the joint limits, or the defaults,
    widened if needed to contain the home value."""
    out = np.empty((robot.n, 2))
    for i, link in enumerate(robot.links):
        if link.limits is not None:
            lo, hi = link.limits
        else:
            lo, hi = DEFAULT_REVOLUTE_RANGE if link.is_revolute else DEFAULT_PRISMATIC_RANGE
        out[i] = (min(lo, link.q_home), max(hi, link.q_home))
    return out


def carry_pose(old: Robot | None, new: Robot, q: np.ndarray | None) -> np.ndarray:
    """The pose to show after the robot changed from `old` to `new`.

    With the same joints, each joint keeps its value unless its home value was
    edited (then it moves to the new home, so typing theta in the table moves
    the arm); values are clipped to the new ranges. Otherwise: home.
    """
    if old is None or q is None or old.n != new.n or np.any(old.is_revolute != new.is_revolute):
        return new.q_home.copy()
    q = np.where(old.q_home != new.q_home, new.q_home, np.asarray(q, dtype=float))
    r = pose_ranges(new)
    return np.clip(q, r[:, 0], r[:, 1])


class _JointRow:
    """The widgets of one joint: swatch, name, slider, spin box."""

    def __init__(self, grid: QGridLayout, row: int, name: str, revolute: bool,
                 lo: float, hi: float, driven: bool = True) -> None:
        self.revolute = revolute
        self.scale = math.degrees(1.0) if revolute else 1.0   # shown units per rad / m
        ticks = _TICKS_PER_DEG if revolute else _TICKS_PER_M
        self.ticks = ticks * self.scale                          # slider ticks per rad / m
        self.swatch = QLabel()
        self.swatch.setFixedSize(12, 12)
        self.swatch.setStyleSheet(f"background: {joint_color(row)}; border-radius: 2px;")
        self.label = QLabel(f"{row + 1}  {name}")
        self.label.setToolTip(f"Joint {row + 1} ({'revolute' if revolute else 'prismatic'})")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(math.floor(lo * self.ticks), math.ceil(hi * self.ticks))
        self.slider.setSingleStep(int(ticks))
        self.slider.setPageStep(int(ticks * (15 if revolute else 0.05)))
        self.slider.setMinimumWidth(120)
        self.spin = QDoubleSpinBox()
        self.spin.setDecimals(1 if revolute else 3)
        self.spin.setRange(lo * self.scale, hi * self.scale)
        self.spin.setSingleStep(1.0 if revolute else 0.01)
        self.spin.setSuffix(" \u00b0" if revolute else " m")
        self.spin.setKeyboardTracking(False)
        self.spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.spin.setMinimumWidth(96)
        self.slider.setObjectName(f"poseSlider{row + 1}")
        self.spin.setObjectName(f"poseSpin{row + 1}")
        if not driven:  # follows the loops: a read-out, no slider
            self.slider.hide()
            self.spin.setReadOnly(True)
            self.spin.setButtonSymbols(QDoubleSpinBox.ButtonSymbols.NoButtons)
            self.spin.setRange(-1e9, 1e9)
            self.spin.setToolTip("Follows the loops (a dependent joint): move the joints "
                                 "with sliders")
            self.label.setText(f"{row + 1}  {name}  (follows)")
            self.label.setEnabled(False)
        grid.addWidget(self.swatch, row, 0)
        grid.addWidget(self.label, row, 1)
        grid.addWidget(self.slider, row, 2)
        grid.addWidget(self.spin, row, 3)

    def show(self, value: float) -> None:
        """Show `value` (rad / m) without emitting."""
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.slider.setValue(round(value * self.ticks))
        self.spin.setValue(value * self.scale)
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    def widgets(self) -> tuple[QWidget, ...]:
        return (self.swatch, self.label, self.slider, self.spin)


class PosePanel(QWidget):
    """Sliders and spin boxes for every joint; ``pose_edited(np.ndarray)`` on user edits."""

    pose_edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._robot: Robot | None = None
        self._q = np.zeros(0)
        self._rows: list[_JointRow] = []
        self._shape: tuple | None = None

        self.home_button = QPushButton(self.style().standardIcon(
            QStyle.StandardPixmap.SP_DialogResetButton), "Home")
        self.home_button.setToolTip("Move every joint to its home value (the table's "
                                    "theta or b)")
        self.home_button.clicked.connect(self.go_home)
        self._summary = QLabel()
        self._summary.setObjectName("hint")
        top = QHBoxLayout()
        top.addWidget(self.home_button)
        top.addStretch(1)
        top.addWidget(self._summary)

        self._inner = QWidget()
        self._grid = QGridLayout(self._inner)
        self._grid.setContentsMargins(0, 0, 4, 0)
        self._grid.setHorizontalSpacing(8)
        self._grid.setVerticalSpacing(6)
        self._grid.setColumnStretch(2, 1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(self._inner)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)

    # ----- public -----------------------------------------------------------------
    def set_robot(self, robot: Robot, q: np.ndarray) -> None:
        """Show the joints of `robot` at pose q (rebuilding rows only if they changed)."""
        self._robot = robot
        ranges = pose_ranges(robot)
        driven = driven_joints(robot)
        shape = (tuple(robot.link_names), tuple(robot.is_revolute), ranges.tobytes(), driven)
        if shape != self._shape:
            self._shape = shape
            self._build_rows(robot, ranges, driven)
        if len(driven) < robot.n:
            self._summary.setText(f"{len(driven)} of {robot.n} joints driven \u00b7 deg / m")
        else:
            self._summary.setText(f"{robot.n} joints \u00b7 deg / m")
        self.set_pose(q)

    def set_pose(self, q: np.ndarray) -> None:
        """Show pose q (rad / m) without emitting ``pose_edited``."""
        self._q = np.array(q, dtype=float)
        for row, value in zip(self._rows, self._q, strict=True):
            row.show(float(value))

    def pose(self) -> np.ndarray:
        return self._q.copy()

    def go_home(self) -> None:
        """Move every joint to its home value (emits ``pose_edited``)."""
        if self._robot is not None:
            self._edit(self._robot.q_home.copy())

    def joint_widgets(self, i: int) -> tuple[QSlider, QDoubleSpinBox]:
        """The slider and spin box of joint i (0-based)."""
        return self._rows[i].slider, self._rows[i].spin

    # ----- internals ----------------------------------------------------------------
    def _build_rows(self, robot: Robot, ranges: np.ndarray, driven: tuple[int, ...]) -> None:
        for row in self._rows:
            for w in row.widgets():
                self._grid.removeWidget(w)
                w.deleteLater()
        self._rows = []
        for r in range(self._grid.rowCount()):
            self._grid.setRowStretch(r, 0)
        for i, (name, revolute) in enumerate(zip(robot.link_names, robot.is_revolute,
                                                        strict=True)):
            row = _JointRow(self._grid, i, name, bool(revolute), *ranges[i],
                            driven=i in driven)
            row.slider.valueChanged.connect(lambda v, i=i: self._on_slider(i, v))
            row.spin.valueChanged.connect(lambda v, i=i: self._on_spin(i, v))
            self._rows.append(row)
        self._grid.setRowStretch(len(self._rows), 1)

    def _on_slider(self, i: int, ticks: int) -> None:
        q = self._q.copy()
        q[i] = ticks / self._rows[i].ticks
        self._edit(q)

    def _on_spin(self, i: int, shown: float) -> None:
        q = self._q.copy()
        q[i] = shown / self._rows[i].scale
        self._edit(q)

    def _edit(self, q: np.ndarray) -> None:
        self.set_pose(q)
        self.pose_edited.emit(q.copy())
