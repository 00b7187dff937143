"""Move the arm by hand: one slider and spin box per coordinate of the pose, and a Home
button. A revolute or prismatic joint has one; a free body has its position x, y, z and
its orientation as roll, pitch, yaw; a spherical joint its roll, pitch, yaw; a
universal joint its two angles (`gui.model.pose`).

The panel shows a pose and reports the user's edits with ``pose_edited(q)``;
it does not own the pose (the window's `gui.model.session.Session` does: `observe`). Revolute joints are shown in
degrees, prismatic joints in metres; q is always in rad / m.

For a mechanism with loops only the independent joints get a slider; the other
joints follow by assembly (the window closes the loops) and show their values
read-only.

The rows live in a `JointList`: only the rows in sight exist (a pool bound to
joints as the list scrolls), with a filter for long lists, so a 1,000-link robot
costs the same as a 20-link one.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (QDoubleSpinBox, QHBoxLayout, QLabel, QLineEdit, QPushButton,
                               QScrollBar, QSlider, QStyle, QVBoxLayout, QWidget)

from armdyn.core import Robot

from ..look.colors import joint_color
from ..look.text import ElidedLabel, shown_name, tooltip
from ..model.pose import (Coordinate, coordinate_values, driven_joints, pose_coordinates,
                          with_coordinate)

__all__ = ["PosePanel", "JointList"]

#: Slider steps per unit shown: 0.1 deg, 1 mm.
_TICKS_PER_DEG = 10
_TICKS_PER_M = 1000
#: A joint list offers a filter box above this many joints.
FILTER_ABOVE = 12
ROW_SPACING = 6  # px between rows


class JointList(QWidget):
    """A list of one row per joint that stays fast for thousands of joints.

    Only the rows in sight exist: a pool of row widgets (made by `make_row`, each
    with a ``bind(i)`` method that shows joint i) is bound to the joints from the
    scroll bar's position on. A filter box (shown for more than FILTER_ABOVE
    joints) keeps the joints whose number or name contains its text.
    """

    def __init__(self, make_row: Callable[[], QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._make_row = make_row
        self._names: list[str] = []
        self._indices: list[int] = []  # the joints that pass the filter
        self._pool: list[QWidget] = []
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter joints by number or name")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        self.filter.hide()
        self._rows = QWidget()
        self._column = QVBoxLayout(self._rows)
        self._column.setContentsMargins(0, 0, 4, 0)
        self._column.setSpacing(ROW_SPACING)
        self._column.addStretch(1)
        self._bar = QScrollBar(Qt.Orientation.Vertical)
        self._bar.valueChanged.connect(self._bind_all)
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self._rows, 1)
        body.addWidget(self._bar)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter)
        layout.addLayout(body, 1)
        self._row_height = self._new_row().sizeHint().height()

    def set_joints(self, names: list[str]) -> None:
        """A new list of joints (names in joint order); the rows are bound again."""
        self._names = list(names)
        self.filter.setVisible(len(names) > FILTER_ABOVE)
        self._apply_filter()

    def rows_in_sight(self) -> int:
        """How many rows the list's height shows."""
        return max(1, (self._rows.height() + ROW_SPACING) // (self._row_height + ROW_SPACING))

    def row_for(self, i: int) -> QWidget:
        """The row widget showing joint i (0-based), scrolled into sight (and the
        filter cleared if it hid the joint)."""
        if i not in self._indices:
            self.filter.clear()
        k = self._indices.index(i)
        first = self._bar.value()
        if not first <= k < first + self.rows_in_sight():
            self._bar.setValue(max(0, k - self.rows_in_sight() // 2))
        return self._pool[k - self._bar.value()]

    def bound_rows(self) -> list[QWidget]:
        """The row widgets bound to a joint now."""
        return [row for row in self._pool if not row.isHidden()]

    def chrome_width(self) -> int:
        """The list's width beside its rows' (the scroll bar, the column's margin), px."""
        margins = self._column.contentsMargins()
        return (self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
                + margins.left() + margins.right())

    def refresh(self) -> None:
        """Show the joints' current values again (bound rows only)."""
        self._bind_all()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        hint = super().minimumSizeHint()
        return QSize(hint.width(), min(hint.height(), 3 * self._row_height))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        rows = min(len(self._indices), 12)
        return QSize(super().sizeHint().width(), rows * (self._row_height + ROW_SPACING))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._bind_all()

    def wheelEvent(self, event) -> None:  # noqa: N802 - Qt override
        steps = -event.angleDelta().y() // 40
        self._bar.setValue(self._bar.value() + steps)
        event.accept()

    def _new_row(self) -> QWidget:
        row = self._make_row()
        row.setParent(self._rows)
        row.hide()
        return row

    def _apply_filter(self, *_args) -> None:
        text = self.filter.text().strip().lower()
        self._indices = [i for i, name in enumerate(self._names)
                         if not text or text in f"{i + 1} {name}".lower()]
        self._bind_all()

    def _bind_all(self, *_args) -> None:
        sight = self.rows_in_sight()
        self._bar.blockSignals(True)
        self._bar.setRange(0, max(0, len(self._indices) - sight))
        self._bar.setPageStep(sight)
        self._bar.blockSignals(False)
        self._bar.setVisible(len(self._indices) > sight)
        count = min(sight, len(self._indices))
        while len(self._pool) < count:
            row = self._new_row()
            self._column.insertWidget(len(self._pool), row)
            self._pool.append(row)
        first = self._bar.value()
        for k, row in enumerate(self._pool):
            if k < count and first + k < len(self._indices):
                row.bind(self._indices[first + k])
                row.show()
            else:
                row.hide()


def _scale(coord: Coordinate) -> float:
    """Shown units per rad / m: deg for an angle, m for a length."""
    return math.degrees(1.0) if coord.angle else 1.0


def _ticks(coord: Coordinate) -> float:
    """Slider ticks per rad / m."""
    return (_TICKS_PER_DEG if coord.angle else _TICKS_PER_M) * _scale(coord)


class _JointRow(QWidget):
    """One row of the pose list: swatch, name, slider, spin box; shows coordinate
    `index` (`gui.model.pose.Coordinate`: a joint's value, a free body's x, its roll)."""

    def __init__(self, panel: "PosePanel") -> None:
        super().__init__()
        self.panel = panel
        self.index = -1
        self._spec: Coordinate | None = None  # what the widgets are set up for
        self.swatch = QLabel()
        self.swatch.setFixedSize(12, 12)
        self.label = ElidedLabel()  # the link's name, from the file; cut where narrow
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setMinimumWidth(120)
        self.spin = QDoubleSpinBox()
        self.spin.setKeyboardTracking(False)
        self.spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.spin.setMinimumWidth(96)
        self.slider.valueChanged.connect(lambda v: panel._on_slider(self.index, v))
        self.spin.valueChanged.connect(lambda v: panel._on_spin(self.index, v))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        row.addWidget(self.swatch)
        row.addWidget(self.label)
        row.addWidget(self.slider, 1)
        row.addWidget(self.spin)

    def bind(self, i: int) -> None:
        """Show coordinate i (its spec and the panel's value) without emitting."""
        spec = self.panel._rows[i]
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.index = i
        if spec is not self._spec:
            self._spec = spec
            scale, ticks = _scale(spec), _ticks(spec)
            per_unit = _TICKS_PER_DEG if spec.angle else _TICKS_PER_M
            kind = self.panel._kinds[spec.joint]
            self.swatch.setStyleSheet(f"background: {joint_color(spec.joint)}; "
                                      "border-radius: 2px;")
            self.label.set_preferred_width(self.panel._label_width)  # the rows line up
            text = shown_name(spec.label) + ("" if spec.driven else "  (follows)")
            self.label.setText(text)
            self.label.setToolTip(tooltip(f"{text}\nJoint {spec.joint + 1} ({kind})" + (
                "" if spec.part == "value" else
                ": its orientation as roll, pitch, yaw (R = Rz(yaw) Ry(pitch) Rx(roll))")))
            self.label.setEnabled(spec.driven)
            self.slider.setRange(math.floor(spec.lo * ticks), math.ceil(spec.hi * ticks))
            self.slider.setSingleStep(int(per_unit))
            self.slider.setPageStep(int(per_unit * (15 if spec.angle else 0.05)))
            self.slider.setVisible(spec.driven)
            self.slider.setObjectName(f"poseSlider{i + 1}")
            self.spin.setObjectName(f"poseSpin{i + 1}")
            self.spin.setDecimals(1 if spec.angle else 3)
            self.spin.setSingleStep(1.0 if spec.angle else 0.01)
            self.spin.setSuffix(" \u00b0" if spec.angle else " m")
            self.spin.setReadOnly(not spec.driven)
            self.spin.setButtonSymbols(QDoubleSpinBox.ButtonSymbols.UpDownArrows if spec.driven
                                       else QDoubleSpinBox.ButtonSymbols.NoButtons)
            if spec.driven:
                self.spin.setRange(spec.lo * scale, spec.hi * scale)
                self.spin.setToolTip("")
            else:  # follows the loops: a read-out, no slider
                self.spin.setRange(-1e9, 1e9)
                self.spin.setToolTip("Follows the loops (a dependent joint): move the "
                                     "joints with sliders")
        value = float(self.panel._values[i])
        self.slider.setValue(round(value * _ticks(spec)))
        self.spin.setValue(value * _scale(spec))
        for w in (self.slider, self.spin):
            w.blockSignals(False)


class PosePanel(QWidget):
    """A slider and spin box per coordinate of the pose (`gui.model.pose.Coordinate`: a
    joint's value; a free body's x, y, z, roll, pitch, yaw; a spherical joint's roll,
    pitch, yaw), in a `JointList` (long lists scroll, with a filter);
    ``pose_edited(np.ndarray)`` (the pose q, (nq,)) on user edits."""

    pose_edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._robot: Robot | None = None
        self._q = np.zeros(0)
        self._values = np.zeros(0)  # of the coordinates, rad / m
        self._rows: tuple[Coordinate, ...] = ()
        self._kinds: list[str] = []  # of the joints
        self._shape: tuple | None = None
        self._label_width = 0

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
        self.joints = JointList(lambda: _JointRow(self))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.joints, 1)

    # ----- public -----------------------------------------------------------------
    def observe(self, session) -> None:
        """Show `session`'s model and pose (a refused pose snaps the sliders back), and
        hand the user's edits to it (`Session.set_pose`)."""
        session.model_changed.connect(lambda model: self.set_robot(model, session.pose))
        session.pose_changed.connect(self.set_pose)
        session.pose_refused.connect(lambda _why: self.set_pose(session.pose))
        self.pose_edited.connect(session.set_pose)

    def set_robot(self, robot: Robot, q: np.ndarray) -> None:
        """Show the joints of `robot` at pose q (the rows change only if the joints did)."""
        self._robot = robot
        self._q = np.array(q, dtype=float)
        coords = pose_coordinates(robot)
        driven = driven_joints(robot)
        if coords != self._rows:
            self._rows = coords
            self._values = coordinate_values(coords, self._q)
            self._kinds = [t.value for t in robot.model.joint_types]
            metrics = self.fontMetrics()
            self._label_width = max((metrics.horizontalAdvance(
                shown_name(c.label) + ("" if c.driven else "  (follows)")) for c in coords),
                default=0) + 4
            self.joints.set_joints([shown_name(c.label) for c in coords])
        unit = "deg / m"
        if len(driven) < robot.n:
            self._summary.setText(f"{len(driven)} of {robot.n} joints driven \u00b7 {unit}")
        else:
            self._summary.setText(f"{robot.n} joints \u00b7 {unit}")
        self.set_pose(q)

    def set_pose(self, q: np.ndarray) -> None:
        """Show pose q (rad / m, (nq,)) without emitting ``pose_edited`` (rows in sight
        only)."""
        q = np.array(q, dtype=float)
        nq = self._robot.nq if self._robot is not None else 0
        if q.shape != (nq,):
            raise ValueError(f"pose must have shape ({nq},), got {q.shape}")
        self._q = q
        self._values = coordinate_values(self._rows, q)
        self.joints.refresh()

    def pose(self) -> np.ndarray:
        return self._q.copy()

    def go_home(self) -> None:
        """Move every joint to its home value (emits ``pose_edited``)."""
        if self._robot is not None:
            self._edit(self._robot.q_home.copy())

    def joint_widgets(self, i: int) -> tuple[QSlider, QDoubleSpinBox]:
        """The slider and spin box of coordinate i (0-based; joint i's when every joint
        has one value), scrolled into sight."""
        row = self.joints.row_for(i)
        return row.slider, row.spin

    # ----- internals ----------------------------------------------------------------
    def _on_slider(self, i: int, ticks: int) -> None:
        self._edit(with_coordinate(self._rows, self._q, i, ticks / _ticks(self._rows[i])))

    def _on_spin(self, i: int, shown: float) -> None:
        self._edit(with_coordinate(self._rows, self._q, i, shown / _scale(self._rows[i])))

    def _edit(self, q: np.ndarray) -> None:
        self.set_pose(q)
        self.pose_edited.emit(q.copy())
