"""The inspect panel: the dynamics quantities of the current pose, as captioned tables.

Shows the generalized inertia matrix (GIM) I(q) and its condition number, the
D of I = U D U^T, the gravity torques, and, for a chosen link, the composite-
and articulated-body 6x6 inertias and the 4x4 velocity and acceleration matrices
W and H (seed 004, `core.link_motion_matrices`, in the base or the link frame) at
the state's rates (zero unless `set_state` is given qd, qdd). For a mechanism with loops it adds the
reduced mass matrix (in the independent coordinates), how far the pose is from a
singularity of the loops, and Saha's subsystem table (which subsystems of the
spanning tree are determinate, and in what order they are solved). Every number
comes from `core`'s compiled functions (D is the articulated pivots m^, no Python
factorization) and numpy; a 200-link robot takes a few milliseconds, so they run
on the GUI thread, debounced while the pose changes quickly (slider drags).

A hidden panel (the Inspect tab behind Results) does no work: `set_state` only
remembers the pose, and the panel computes when it is shown. The n x n and n x 2
tables are model/view (`_MatrixTable`): only the visible cells are ever drawn.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QSize, Qt, QTimer, Slot
from PySide6.QtGui import QCloseEvent, QColor, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QDockWidget, QHBoxLayout, QHeaderView, QLabel,
    QSizePolicy, QTableView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from armdyn.core import (
    ArmDynError, JointType, Mechanism, Robot, articulated_body_inertias,
    closed_chain_inverse_dynamics, composite_body_inertias, gravity_torques, link_motion_matrices, mass_matrix,
    reduced_mass_matrix,
)
from armdyn.core.algorithms.mechanism_pose import dependent_jacobian_conditioning

from ..look.scroll import scroll_area

#: Debounce delay between a pose change and the recomputation, ms.
DEBOUNCE_MS = 30
#: A _MatrixTable shows at most this many rows and columns without scrolling.
FIT_CELLS = 12
ROWS_6 = ("n x", "n y", "n z", "f x", "f y", "f z")          # moment, force components
COLS_6 = ("\u03c9 x", "\u03c9 y", "\u03c9 z", "v x", "v y", "v z")  # angular, linear rates
DIAGONAL_BG = QColor("#EEF3FA")
#: A floating base's block of the mass matrix.
BLOCK_BG = QColor("#FCE9C8")
ERROR_STYLE = "color: #B00020; font-weight: bold;"
#: The frames W and H can be shown in (`core.link_motion_matrices`' `frame`).
MOTION_FRAMES = ("base", "link")
ROWS_4 = ("1", "2", "3", "4")


def _fmt(x: float) -> str:
    return "0" if x == 0.0 else f"{x:.4g}"


#: What Inspect says of a model with a joint of several degrees of freedom.
NOT_SHOWN = ("The per-joint and per-link tables below are for models of revolute and "
             "prismatic joints only.")
#: The names of a joint's rates, by kind (revolute and prismatic: the joint's own).
RATE_NAMES = {"spherical": ("\u03c9x", "\u03c9y", "\u03c9z"),
              "universal": ("\u03b81", "\u03b82"),
              "free": ("\u03c9x", "\u03c9y", "\u03c9z", "vx", "vy", "vz")}


def rate_labels(robot) -> list[str]:
    """A label per rate (row of the mass matrix): "3 elbow", "1 pelvis \u03c9x"."""
    return [f"{j + 1} {name}" + (f" {part}" if part else "")
            for j, (name, kind) in enumerate(zip(robot.joint_names, robot.model.joint_types))
            for part in RATE_NAMES.get(kind.value, ("",))]


def _inertia_unit(rev_i: bool, rev_j: bool) -> str:
    """Units of the GIM entry coupling joints i and j."""
    if rev_i and rev_j:
        return "kg m\u00b2"
    return "kg m" if rev_i or rev_j else "kg"


def _motion_unit(per: str):
    """units(i, j) of a 4x4 velocity (per="s") or acceleration (per="s²") matrix:
    the rotation block 1/per, the last column m/per, the bottom row none."""
    def unit(i: int, j: int) -> str:
        if i == 3:
            return ""
        return f"m/{per}" if j == 3 else f"1/{per}"
    return unit


def _block_unit(i: int, j: int) -> str:
    """Units of entry (i, j) of a 6x6 extended mass matrix [[I, m c~], [m c~^T, m 1]]."""
    return _inertia_unit(i < 3, j < 3)


class _Table(QTableWidget):
    """A read-only numeric table sized to its contents (no scroll bars)."""

    def __init__(self, rows: int = 0, cols: int = 0) -> None:
        super().__init__(rows, cols)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.ContiguousSelection)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.Fixed)
        self.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)

    def set_headers(self, rows: list[str], cols: list[str]) -> None:
        self.setRowCount(len(rows))
        self.setColumnCount(len(cols))
        self.setVerticalHeaderLabels(rows)
        self.setHorizontalHeaderLabels(cols)

    def set_values(self, values: np.ndarray, units, diagonal: bool = False) -> None:
        """values (rows, cols); units(i, j) -> str for the tooltip.

        Entries below 1e-12 of the table's largest magnitude are rounding noise: shown as 0.
        """
        finite = np.abs(values[np.isfinite(values)])
        noise = 1e-12 * (finite.max() if finite.size else 0.0)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                item = self.item(i, j)
                if item is None:
                    item = QTableWidgetItem()
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                    if diagonal and i == j:
                        item.setBackground(DIAGONAL_BG)
                    self.setItem(i, j, item)
                item.setText(_fmt(0.0 if abs(values[i, j]) < noise else values[i, j]))
                item.setToolTip(f"{values[i, j]:.10g} {units(i, j)}")
        self._fit()

    def clear_values(self) -> None:
        for i in range(self.rowCount()):
            for j in range(self.columnCount()):
                if self.item(i, j) is not None:
                    self.item(i, j).setText("")

    def _fit(self) -> None:
        self.resizeColumnsToContents()
        self.resizeRowsToContents()
        cols = sum(self.columnWidth(j) for j in range(self.columnCount()))
        rows = sum(self.rowHeight(i) for i in range(self.rowCount()))
        w = self.verticalHeader().sizeHint().width() + cols + 2 * self.frameWidth()
        h = self.horizontalHeader().sizeHint().height() + rows + 2 * self.frameWidth()
        self.setFixedSize(QSize(w, h))


class _MatrixModel(QAbstractTableModel):
    """A read-only numeric matrix for a QTableView: values (rows, cols), headers,
    units(i, j) -> str for the tooltips; entries below 1e-12 of the largest
    magnitude are rounding noise, shown as 0."""

    def __init__(self) -> None:
        super().__init__()
        self.values = np.zeros((0, 0))
        self.rows: list[str] = []
        self.cols: list[str] = []
        self.units = lambda i, j: ""
        self.diagonal = False
        self.blocks: list[tuple[int, int]] = []  # (start, stop) of shaded diagonal blocks
        self._noise = 0.0

    def set_headers(self, rows: list[str], cols: list[str]) -> None:
        self.beginResetModel()
        self.rows, self.cols = list(rows), list(cols)
        self.values = np.full((len(rows), len(cols)), np.nan)
        self.endResetModel()

    def set_values(self, values: np.ndarray, units, diagonal: bool) -> None:
        values = np.asarray(values, dtype=float)
        if values.shape != self.values.shape:
            self.beginResetModel()
            self.rows = self.rows[:values.shape[0]] + [
                str(i + 1) for i in range(len(self.rows), values.shape[0])]
            self.cols = self.cols[:values.shape[1]] + [
                str(j + 1) for j in range(len(self.cols), values.shape[1])]
            self.values = values.copy()
            self.endResetModel()
        else:
            self.values = values.copy()
        self.units, self.diagonal = units, diagonal
        finite = np.abs(values[np.isfinite(values)])
        self._noise = 1e-12 * (finite.max() if finite.size else 0.0)
        if values.size:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(values.shape[0] - 1, values.shape[1] - 1))

    def clear_values(self) -> None:
        self.set_values(np.full(self.values.shape, np.nan), self.units, self.diagonal)

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else self.values.shape[0]

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else self.values.shape[1]

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole):
        i, j = index.row(), index.column()
        value = self.values[i, j]
        if role == Qt.DisplayRole:
            if not np.isfinite(value):
                return ""
            return _fmt(0.0 if abs(value) < self._noise else value)
        if role == Qt.ToolTipRole and np.isfinite(value):
            return f"{value:.10g} {self.units(i, j)}"
        if role == Qt.TextAlignmentRole:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.BackgroundRole:
            if any(a <= i < b and a <= j < b for a, b in self.blocks):
                return BLOCK_BG
            if self.diagonal and i == j:
                return DIAGONAL_BG
        return None

    def headerData(self, section: int, orientation, role: int = Qt.DisplayRole):  # noqa: N802
        if role != Qt.DisplayRole:
            return None
        names = self.cols if orientation == Qt.Horizontal else self.rows
        return names[section] if section < len(names) else None


class _MatrixTable(QTableView):
    """A read-only numeric table of any size (model/view: only visible cells are drawn).

    Up to FIT_CELLS rows and columns it is sized to its contents, without scroll
    bars; a bigger matrix scrolls inside that size. Columns have one width (the
    widest number format, or the widest column heading), so no cell is measured.
    """

    def __init__(self) -> None:
        super().__init__()
        self._model = _MatrixModel()
        self.setModel(self._model)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.ContiguousSelection)
        self.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
        for header in (self.horizontalHeader(), self.verticalHeader()):
            header.setSectionResizeMode(QHeaderView.Fixed)
        metrics = self.fontMetrics()
        self._number_width = metrics.horizontalAdvance("-0.0000e-00") + 12  # px
        self.horizontalHeader().setDefaultSectionSize(self._number_width)
        self.verticalHeader().setDefaultSectionSize(metrics.height() + 8)

    def set_headers(self, rows: list[str], cols: list[str]) -> None:
        self._model.set_headers(rows, cols)
        header = self.horizontalHeader()
        heading = max((header.fontMetrics().horizontalAdvance(c) + 16 for c in cols), default=0)
        header.setDefaultSectionSize(max(self._number_width, heading))
        self._fit()

    def set_values(self, values: np.ndarray, units, diagonal: bool = False) -> None:
        """values (rows, cols); units(i, j) -> str for the tooltip."""
        self._model.set_values(values, units, diagonal)
        self._fit()

    def clear_values(self) -> None:
        self._model.clear_values()

    def set_blocks(self, blocks: list[tuple[int, int]]) -> None:
        """Shade the diagonal blocks [start, stop) (a floating base's rates)."""
        self._model.blocks = list(blocks)
        self.viewport().update()

    def is_shaded(self, i: int, j: int) -> bool:
        """Whether cell (i, j) lies in a shaded block."""
        return self._model.data(self._model.index(i, j), Qt.BackgroundRole) == BLOCK_BG

    def rowCount(self) -> int:  # noqa: N802 - as QTableWidget
        return self._model.rowCount()

    def columnCount(self) -> int:  # noqa: N802 - as QTableWidget
        return self._model.columnCount()

    def text(self, i: int, j: int) -> str:
        """The text of cell (i, j)."""
        return self._model.data(self._model.index(i, j), Qt.DisplayRole)

    def tool_tip(self, i: int, j: int) -> str:
        """The tooltip of cell (i, j): the full value and its unit."""
        return self._model.data(self._model.index(i, j), Qt.ToolTipRole) or ""

    def _fit(self) -> None:
        self.verticalHeader().setMinimumWidth(0)
        rows, cols = min(self.rowCount(), FIT_CELLS), min(self.columnCount(), FIT_CELLS)
        scrolls = self.rowCount() > FIT_CELLS or self.columnCount() > FIT_CELLS
        policy = Qt.ScrollBarAsNeeded if scrolls else Qt.ScrollBarAlwaysOff
        self.setVerticalScrollBarPolicy(policy)
        self.setHorizontalScrollBarPolicy(policy)
        bar = self.style().pixelMetric(self.style().PixelMetric.PM_ScrollBarExtent) if scrolls else 0
        w = (self.verticalHeader().sizeHint().width() + cols * self.horizontalHeader()
             .defaultSectionSize() + 2 * self.frameWidth() + bar)
        h = (self.horizontalHeader().sizeHint().height() + rows * self.verticalHeader()
             .defaultSectionSize() + 2 * self.frameWidth() + bar)
        self.setFixedSize(QSize(w, h))


def _heading(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setPointSize(font.pointSize() + 2)
    font.setBold(True)
    label.setFont(font)
    return label


def _caption(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet("color: #333;")
    label.setTextFormat(Qt.RichText)
    return label


def _side_by_side(tables: tuple[tuple[str, QWidget], ...]) -> QHBoxLayout:
    """Tables in a left-aligned row, each under its bold title."""
    row = QHBoxLayout()
    for title, table in tables:
        col = QVBoxLayout()
        col.addWidget(QLabel(f"<b>{title}</b>"))
        col.addWidget(table)
        col.addStretch(1)
        row.addLayout(col)
    row.addStretch(1)
    return row


def _chooser(text: str, combo: QComboBox) -> QHBoxLayout:
    """A left-aligned row: a label and its combo box."""
    row = QHBoxLayout()
    row.addWidget(QLabel(text))
    row.addWidget(combo)
    row.addStretch(1)
    return row


class InspectPanel(QWidget):
    """Mass matrix, UDU^T pivots, gravity torques and link inertias at a pose.

    ``set_state(robot, q)`` (q: (n,), rad / m) schedules an update 30 ms later;
    a burst of calls costs one computation. ``flush()`` updates at once.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._robot: Robot | None = None
        self._q = np.zeros(0)
        self._qd: np.ndarray | None = None   # None: zero rates
        self._qdd: np.ndarray | None = None
        #: (robot, q, qd, qdd) of the last computation (W and H of another link use it)
        self._computed: tuple | None = None
        self._shown_robot: Robot | None = None
        self._dirty = False  # a state came while hidden: compute when shown
        self._dock: QDockWidget | None = None  # the dock it lives in, if any
        self._dock_shown = True  # False while the dock is a tab behind another
        #: how many times the quantities were computed (tests: a hidden panel does no work)
        self.computations = 0
        self._composite_all: np.ndarray | None = None    # (n, 6, 6)
        self._articulated_all: np.ndarray | None = None  # (n, 6, 6)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._flush_in_sight)
        self._built = False  # the widgets: made the first time they are needed

    # ----- construction ---------------------------------------------------------------
    def _ensure_built(self) -> None:
        """Make the widgets the first time the panel is shown or asked for: it starts
        as a tab behind the results, and most sessions never show it (50 ms a start)."""
        if not self._built:
            self._built = True
            self._build()

    def _build(self) -> None:
        self._error = QLabel()
        self._error.setStyleSheet(ERROR_STYLE)
        self._error.setWordWrap(True)
        self._error.hide()

        self._gim = _MatrixTable()
        self._cond = QLabel()
        self._cond.setWordWrap(True)
        self._cond.setTextFormat(Qt.RichText)
        self._per_joint = _MatrixTable()  # columns: D, g
        self._link = QComboBox()
        self._link.currentIndexChanged.connect(self._show_link)
        self._composite = _Table(6, 6)
        self._articulated = _Table(6, 6)
        for t in (self._composite, self._articulated):
            t.set_headers(list(ROWS_6), list(COLS_6))
        self._frame = QComboBox()
        self._frame.addItems(list(MOTION_FRAMES))
        self._frame.setToolTip("base: W_0,i and H_0,i in base axes; link: the same "
                               "motion in link i's own frame")
        self._frame.currentIndexChanged.connect(self._show_motion)
        self._velocity = _Table(4, 4)
        self._acceleration = _Table(4, 4)
        for t in (self._velocity, self._acceleration):
            t.set_headers(list(ROWS_4), list(ROWS_4))

        body = QWidget()
        v = QVBoxLayout(body)
        v.addWidget(self._error)
        self._loops_box = self._build_loops_section()
        v.addWidget(self._loops_box)
        v.addWidget(_heading("Mass matrix (GIM) I(q)"))
        v.addWidget(_caption(
            "The generalized inertia matrix relates the joint accelerations q\u2033 to the joint "
            "forces: \u03c4 = I(q) q\u2033 + h(q, q\u2032) + g(q). It is symmetric and positive "
            "definite. "
            "Units: kg m\u00b2 between two revolute joints, kg m between a revolute and a "
            "prismatic joint, kg between two prismatic joints (tooltips give each entry)."))
        v.addWidget(self._gim)
        v.addWidget(self._cond)
        v.addWidget(_heading("Per joint: D of I = U D U\u1d40, gravity torques g(q)"))
        v.addWidget(_caption(
            "<b>D</b>: the recursive forward dynamics factors the GIM as U D U\u1d40 (U unit "
            "upper triangular) without forming it. D<sub>i</sub> (Saha's m-hat<sub>i</sub>) is the "
            "inertia felt at joint i when joints i+1\u2026n move freely (kg m\u00b2 revolute, "
            "kg prismatic); a D<sub>i</sub> near zero means a (nearly) singular mass matrix. "
            "<b>g(q)</b>: the joint torques (N m) and forces (N) that hold the arm still at "
            "this pose against gravity."))
        v.addWidget(self._per_joint)
        v.addWidget(_heading("Link inertias, 6\u00d76"))
        v.addLayout(_chooser("Link i:", self._link))
        v.addWidget(_caption(
            "6\u00d76 extended mass matrices about O<sub>i</sub>, the point on joint axis i "
            "(origin of DH frame i\u22121), in base-frame axes: they map the twist [\u03c9; v] "
            "of O<sub>i</sub> to the momentum [n; f]. Blocks: rotational inertia about "
            "O<sub>i</sub> (kg m\u00b2) | first moment of mass (kg m) / its transpose | "
            "mass times identity (kg). <b>Composite</b>: links i\u2026n welded into one rigid "
            "body (they build the GIM). <b>Articulated</b>: links i\u2026n with joints "
            "i+1\u2026n free, so never more than the composite one (they build D)."))
        v.addLayout(_side_by_side((("Composite body inertia of link i", self._composite),
                                   ("Articulated body inertia of link i", self._articulated))))
        v.addWidget(_heading("Velocity and acceleration matrices of link i, 4×4"))
        v.addLayout(_chooser("Frame:", self._frame))
        v.addWidget(_caption(
            "The motion of link i as 4×4 matrices (seed 004, eq. 11): W = "
            "[ω̃ v; 0 0] and H = [α̃ + ω̃² a; 0 0], with "
            "Ṁ = W M and M̈ = H M for the link's position matrix M. <b>base</b>: "
            "W<sub>0,i</sub>, H<sub>0,i</sub> in base axes (the last column belongs to the "
            "body point at the base origin); <b>link</b>: M<sup>-1</sup> W M, "
            "M<sup>-1</sup> H M (the link frame's origin, in link axes). At the shown pose "
            "with the state's rates (zero rates for a pose from the sliders). "
            "Units: 1/s, 1/s² in the rotation block, m/s, m/s² in the last column."))
        v.addLayout(_side_by_side((("Velocity matrix W", self._velocity),
                                   ("Acceleration matrix H", self._acceleration))))
        v.addStretch(1)

        scroll = scroll_area(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        scroll.show()  # built after the panel was shown: not shown with it

    def _build_loops_section(self) -> QWidget:
        """Reduced mass matrix, loop conditioning and subsystems (mechanisms with loops)."""
        box = QWidget()
        v = QVBoxLayout(box)
        v.setContentsMargins(0, 0, 0, 0)
        v.addWidget(_heading("Reduced mass matrix (independent coordinates)"))
        v.addWidget(_caption(
            "The mass matrix the independent joints feel with the loops closed: "
            "R<sup>T</sup> I(q) R, where R maps the independent rates to all joint rates "
            "(velocity transformation). Forward dynamics in minimal coordinates solves it."))
        self._reduced = _Table()
        v.addWidget(self._reduced)
        v.addWidget(_heading("Distance to a singularity of the loops"))
        self._singularity = _caption("")
        v.addWidget(self._singularity)
        v.addWidget(_heading("Saha's subsystems"))
        v.addWidget(_caption(
            "Inverse dynamics of a closed chain splits the spanning tree into subsystems "
            "(one per branch on the base). A <b>determinate</b> subsystem has as many "
            "unknowns (actuator torques, cut-joint forces) as equations and is solved on its "
            "own, in the order shown; the others are solved together (system approach)."))
        self._subsystems = _Table()
        v.addWidget(self._subsystems)
        self._subsystem_rows: list[tuple[str, str, str, str]] = []
        box.hide()
        return box

    # ----- state ----------------------------------------------------------------------
    def observe(self, session) -> None:
        """Show `session`'s model at its pose (`gui.model.session.Session`)."""
        session.pose_changed.connect(lambda q: self.set_state(session.model, q))

    def set_state(self, robot: Robot | None, q, qd=None, qdd=None) -> None:
        """Show the quantities of `robot` at pose `q` ((n,), rad / m), after a 30 ms
        debounce; a hidden panel computes them when it is shown. qd, qdd ((n,), rad/s /
        m/s, rad/s² / m/s²; None: zero) only enter W and H."""
        self._robot = robot
        self._q = np.zeros(0) if robot is None else np.asarray(q, dtype=float).reshape(robot.nq)
        rates = [None if r is None or robot is None
                 else np.asarray(r, dtype=float).reshape(robot.nv) for r in (qd, qdd)]
        self._qd, self._qdd = rates
        if self._in_sight():
            self._timer.start()
        else:
            self._dirty = True

    def _in_sight(self) -> bool:
        """Shown, and not in a dock that is a tab behind another one."""
        return self.isVisible() and self._dock_shown

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ParentChange:
            self._watch_dock()
        return super().event(event)

    def _watch_dock(self) -> None:
        """Follow the visibility of the dock the panel is put in (a tabified dock
        behind another one stays 'visible' to Qt; its visibilityChanged tells)."""
        dock = self.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        if dock is self._dock:
            return
        if self._dock is not None:
            self._dock.visibilityChanged.disconnect(self._on_dock_visibility)
        self._dock = dock
        self._dock_shown = True
        if dock is not None:
            dock.visibilityChanged.connect(self._on_dock_visibility)

    @Slot(bool)
    def _on_dock_visibility(self, shown: bool) -> None:
        self._dock_shown = shown
        if shown:
            self._ensure_built()
        if shown and self._dirty:
            self._timer.start()

    def is_pending(self) -> bool:
        """True while an update waits (for the debounce timer, or for the panel to show)."""
        return self._timer.isActive() or self._dirty

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._in_sight():
            # once the dock's own visibility is known: a tab behind another builds nothing
            QTimer.singleShot(0, self._build_in_sight)
            if self._dirty:
                self._timer.start()

    @Slot()
    def _build_in_sight(self) -> None:
        if self._in_sight():
            self._ensure_built()

    @Slot()
    def _flush_in_sight(self) -> None:
        """The debounce timer: compute if the panel is in sight, else when it shows."""
        if self._in_sight():
            self.flush()
        else:
            self._dirty = True

    @Slot()
    def flush(self) -> None:
        """Recompute and show now (shown or not)."""
        self._ensure_built()
        self._timer.stop()
        self._dirty = False
        self.computations += 1
        robot, q = self._robot, self._q
        if robot is not self._shown_robot:
            self._set_robot_layout(robot)
        if robot is None:
            self._computed = None
            self._show_motion()
            return
        if not all(kind.is_dh for kind in robot.model.joint_types):
            self._show_mass_matrix_only(robot, q)
            return
        zero = np.zeros(robot.n)
        self._computed = (robot, q, zero if self._qd is None else self._qd,
                          zero if self._qdd is None else self._qdd)
        rev = robot.is_revolute
        M = mass_matrix(robot, q)
        self._gim.set_values(M, lambda i, j: _inertia_unit(rev[i], rev[j]), diagonal=True)
        eig = np.linalg.eigvalsh(M)  # I is symmetric positive definite: kappa from them
        cond = eig[-1] / eig[0] if eig[0] > 0 else np.inf
        self._cond.setText(
            f"Condition number \u03ba(I) = \u03bb<sub>max</sub>/\u03bb<sub>min</sub> = "
            f"<b>{cond:.4g}</b> (eigenvalues {eig[0]:.4g} \u2026 {eig[-1]:.4g}). "
            "Large \u03ba: the arm is much easier to accelerate in some joint directions than "
            "in others, and forward dynamics amplifies errors in \u03c4 by up to \u03ba.")
        self._composite_all = composite_body_inertias(robot, q)
        try:  # D of I = U D U^T is the articulated pivots m^ (udu_factors' D)
            abi = articulated_body_inertias(robot, q)
            self._error.hide()
        except ArmDynError as err:  # singular: show the pivots anyway, and why
            abi = articulated_body_inertias(robot, q, check=False)
            self._error.setText(str(err))
            self._error.show()
        self._articulated_all = abi.M_hat
        D = abi.m_hat
        g = gravity_torques(robot, q)
        self._per_joint.set_values(np.column_stack([D, g]), self._per_joint_unit)
        self._show_link()
        self._show_loops(robot, q)

    def _show_mass_matrix_only(self, robot: Robot | Mechanism, q: np.ndarray) -> None:
        """A model with a joint of several degrees of freedom: its mass matrix (nv x nv,
        a row per rate) with each free body's 6 x 6 block shaded, and its conditioning;
        the per-joint and per-link tables are for revolute and prismatic models only."""
        self._computed = None
        self._show_motion()
        angular = robot.rate_is_angular
        M = mass_matrix(robot, q)
        self._gim.set_values(M, lambda i, j: _inertia_unit(angular[i], angular[j]),
                             diagonal=True)
        free = [j for j, kind in enumerate(robot.model.joint_types) if kind is JointType.FREE]
        self._gim.set_blocks([(r[0], r[-1] + 1) for r in (robot.rates_of([j]) for j in free)])
        eig = np.linalg.eigvalsh(M)
        cond = eig[-1] / eig[0] if eig[0] > 0 else np.inf
        self._cond.setText(
            f"Condition number \u03ba(I) = <b>{cond:.4g}</b> (eigenvalues {eig[0]:.4g} "
            f"\u2026 {eig[-1]:.4g}). The shaded block of a free body (its rates "
            "[\u03c9; v], body frame) is the inertia of everything it carries, locked: the "
            "whole system's 6\u00d76 inertia about the body's origin when no joint moves. "
            + NOT_SHOWN)
        self._loops_box.setVisible(False)

    def _show_loops(self, robot: Robot | Mechanism, q: np.ndarray) -> None:
        """The mechanism section: reduced mass matrix, conditioning, subsystems."""
        loops = bool(robot.loops)
        self._loops_box.setVisible(loops)
        if not loops:
            return
        names = [robot.joint_names[j] for j in robot.independent]
        rev = robot.is_revolute[list(robot.independent)]
        Mr = reduced_mass_matrix(robot, q)
        self._reduced.set_headers(names, [str(j + 1) for j in robot.independent])
        self._reduced.set_values(Mr, lambda i, j: _inertia_unit(rev[i], rev[j]), diagonal=True)
        ratio, cond = dependent_jacobian_conditioning(robot, q)
        self._singularity.setText(
            f"Loop Jacobian of the dependent joints: \u03c3<sub>min</sub>/\u03c3<sub>max</sub> = "
            f"<b>{ratio:.3g}</b> (condition number {cond:.4g}). 1 is far from a singularity; "
            "at 0 the independent joints no longer fix the pose (a type-II, parallel "
            "singularity) and inverse dynamics and assembly fail there.")
        try:
            result = closed_chain_inverse_dynamics(robot, q, np.zeros(robot.n),
                                                   np.zeros(robot.n))
        except ArmDynError as err:
            self._subsystems.set_headers(["\u2013"], ["why not"])
            self._subsystems.setItem(0, 0, QTableWidgetItem(str(err)))
            self._subsystems._fit()
            return
        rows = sorted(result.subsystems, key=lambda sub: sub.order)
        self._subsystem_rows = [
            (str(sub.order), ", ".join(robot.joint_names[j] for j in sub.joints),
             ", ".join(sub.unknowns), "determinate" if sub.determinate else "system approach")
            for sub in rows]
        self._subsystems.set_headers([f"S{k + 1}" for k in range(len(rows))],
                                     ["order", "joints", "unknowns", "solved"])
        for i, cells in enumerate(self._subsystem_rows):
            for j, text in enumerate(cells):
                self._subsystems.setItem(i, j, QTableWidgetItem(text))
        self._subsystems._fit()

    def subsystem_rows(self) -> list[tuple[str, str, str, str]]:
        """The subsystem table as text: (order, joints, unknowns, how solved) per row."""
        self._ensure_built()
        return list(self._subsystem_rows)

    def _set_robot_layout(self, robot: Robot | None) -> None:
        self._shown_robot = robot
        keep = self._link.currentIndex()
        self._link.blockSignals(True)
        self._link.clear()
        self._composite_all = self._articulated_all = None
        if robot is None:
            self._gim.set_headers([], [])
            self._per_joint.set_headers([], [])
            self._cond.clear()
            self._error.hide()
        elif not all(kind.is_dh for kind in robot.model.joint_types):
            labels = rate_labels(robot)
            self._gim.set_headers(labels, labels)
            self._per_joint.set_headers([], [])
        else:
            names = [f"{i + 1} {name}" for i, name in enumerate(robot.link_names)]
            self._link.addItems(names)
            self._link.setCurrentIndex(keep if 0 <= keep < robot.n else 0)
            self._gim.set_headers(names, [str(i + 1) for i in range(robot.n)])
            self._per_joint.set_headers(names, ["D (kg m\u00b2 | kg)", "g(q) (N m | N)"])
        self._link.blockSignals(False)
        self._gim.set_blocks([])

    def _per_joint_unit(self, i: int, j: int) -> str:
        revolute = bool(self._robot.is_revolute[i])
        if j == 0:
            return _inertia_unit(revolute, revolute)
        return "N m" if revolute else "N"

    @Slot()
    def _show_link(self) -> None:
        i = self._link.currentIndex()
        for table, data in ((self._composite, self._composite_all),
                            (self._articulated, self._articulated_all)):
            if data is None or i < 0:
                table.clear_values()
            else:
                table.set_values(data[i], _block_unit, diagonal=True)
        self._show_motion()

    @Slot()
    def _show_motion(self) -> None:
        """W and H of the chosen link at the last computed state, in the chosen frame."""
        i = self._link.currentIndex()
        if self._computed is None or i < 0:
            self._velocity.clear_values()
            self._acceleration.clear_values()
            return
        robot, q, qd, qdd = self._computed
        W, H = link_motion_matrices(robot, q, qd, qdd, i, frame=self.motion_frame())
        self._velocity.set_values(W, _motion_unit("s"))
        self._acceleration.set_values(H, _motion_unit("s²"))

    def motion_frame(self) -> str:
        """The frame W and H are shown in: "base" or "link"."""
        self._ensure_built()
        return MOTION_FRAMES[max(self._frame.currentIndex(), 0)]

    def set_motion_frame(self, frame: str) -> None:
        self._ensure_built()
        self._frame.setCurrentIndex(MOTION_FRAMES.index(frame))

    def selected_link(self) -> int:
        """0-based index of the link whose 6x6 inertias are shown."""
        self._ensure_built()
        return self._link.currentIndex()

    def set_selected_link(self, i: int) -> None:
        self._ensure_built()
        self._link.setCurrentIndex(i)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self._timer.stop()
        super().closeEvent(event)
