"""The teaching lab (issue #10): recursion walkthrough, DH frames row by row, inertia in 3D,
complexity of the forward dynamics, power balance of a run.

Three tabs over the window's robot, pose and 3D view:

- **Recursion**: RIDIM and the UDU^T forward dynamics stepped link by link, forward
  and back (`core.lab.walkthrough`): the step's link is highlighted in 3D, its vectors
  are drawn as arrows at O_i (one colour per kind, to an adjustable scale), and its
  numbers are listed with the paper's symbols and equation numbers. The rates
  θ̇, θ̈ are typed in the panel (the pose is the window's).
- **DH frames**: the four elementary transforms Rz(θ) Tz(b) Tx(a) Rx(α) of a row
  (`core.lab.dh_lesson`), animated from frame i-1 to frame i, the value and sign of each
  parameter on screen and its cell selected in the DH table; or the whole chain.
- **Inertia**: the equivalent inertia box or ellipsoid of every link at its mass
  centre, and the list of suspicious values (`core.lab.model_checks`); a click selects
  the offending cell in the tables.
- **Complexity**: DeNOC forward dynamics against the composite-body method for n up to
  several hundred, timed and counted, beside the seeds' formulas
  (`gui.panels.complexity_panel`).
- **Power**: the power balance of the window's runs, live (`gui.panels.power_panel`).

No physics here: the numbers, frames and shapes come from `core`. Work happens on
timers: a debounce after pose or rate changes, and a 30 Hz timer for the DH animation;
the 3D overlays (`gui.scene.lab_overlays`) are built once and moved.
"""
from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QCheckBox, QComboBox,
                               QGridLayout, QHBoxLayout, QHeaderView,
                               QLabel, QListWidget, QListWidgetItem, QPushButton, QRadioButton,
                               QScrollArea, QSlider, QTableWidget, QTableWidgetItem, QTabWidget,
                               QVBoxLayout, QWidget)

from armdyn.core import ArmDynError
from armdyn.core.lab.dh_lesson import ElementaryTransform, chain_transforms, row_transforms
from armdyn.core.lab.model_checks import (LARGE_SHAPE_MEANING, ModelWarning, ShapeNote,
                                          check_model, large_shapes)
from armdyn.core.lab.walkthrough import RIDIM, UDU, ArrowKind, Step, Walkthrough, walkthrough

from ..scene.arm_scene import Sizes
from .complexity_panel import ComplexityPanel
from .inspect_panel import RATE_NAMES
from ..scene.lab_overlays import ARROW_COLORS, LabOverlay
from .power_panel import PowerPanel
from ..look.scroll import scroll_area

__all__ = ["LabPanel", "select_cell", "quantity_row", "DEBOUNCE_MS", "FRAME_MS", "STEP_MS"]

#: Delay between a pose or rate change and the recomputation, ms.
DEBOUNCE_MS = 30
#: DH animation: timer interval and the duration of one elementary transform, ms.
FRAME_MS = 33
STEP_MS = 900
#: Arrow of the largest value of a kind in the whole walkthrough: this share of the reach.
ARROW_SHARE = 0.3

ALGORITHMS = ((RIDIM, "RIDIM \u2014 inverse dynamics"),
              (UDU, "UDU\u1d40 \u2014 forward dynamics"))
DRIVES = (("ridim", "\u03c4 from RIDIM (gives \u03b8'' back)"),
          ("zero", "\u03c4 = 0 (free fall)"))
STEP_NAMES = ("Rz", "Tz", "Tx", "Rx")
TRANSFORM_TITLES = {"Rz": "rotate about the old z by \u03b8", "Tz": "slide along the old z by b",
                    "Tx": "slide along the new x by a", "Rx": "rotate about the new x by \u03b1"}


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "\u00b7"
    return "0" if abs(x) < 1e-12 else f"{x:.4g}"


def _fmt3(x: float) -> str:
    return "0" if abs(x) < 1e-12 else f"{x:.3g}"


def format_value(value: np.ndarray, split: bool = False) -> str:
    """A quantity's value as shown: a scalar, rows for a 6x6 matrix, [..] for a vector
    (· not yet known); with `split`, a 6-vector on two lines [angular; linear]."""
    v = np.asarray(value, dtype=float)
    if v.ndim == 0:
        return _fmt(float(v))
    if v.ndim == 2:  # columns as wide as their widest entry: a 6x6 M_i fits the panel
        cells = [[_fmt3(x) for x in row] for row in v]
        widths = [max(len(row[c]) for row in cells) for c in range(v.shape[1])]
        return "\n".join(" ".join(f"{text:>{w}}" for text, w in zip(row, widths))
                         for row in cells)
    if split and v.shape == (6,):
        return (f"[{', '.join(map(_fmt, v[:3]))};\n {', '.join(map(_fmt, v[3:]))}]")
    return f"[{', '.join(map(_fmt, v))}]"


def quantity_row(k: int) -> int:
    """The row of the recursion table holding quantity k's symbol, eq. and value; its
    meaning and unit are on the next row, across the table."""
    return 2 * k


def select_cell(editor, row: int, key: str) -> None:
    """Select cell (`row`, column `key`) in the robot editor's DH or inertia table: the
    tab is brought forward and the cell made current through the view's selection model."""
    for view, model in ((editor.dh_view, editor.dh_model),
                        (editor.inertia_view, editor.inertia_model)):
        try:
            column = model.column_of(key)
        except ValueError:
            continue
        index = model.index(row, column)
        editor.tabs.setCurrentWidget(view)
        view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        view.scrollTo(index)
        return
    raise KeyError(f"no table column {key!r}")


class LabPanel(QWidget):
    """The lab's tabs (see the module docstring) over an `ArmView`.

    view3d : the window's `ArmView` (overlays are drawn into it)
    editor : the `RobotEditor` whose cells a warning or a DH step selects (optional)

    Methods: `set_robot`, `set_pose`, `set_rates`, stepping (`next_step`, `previous_step`,
    `go_to`), DH lesson (`set_dh_link`, `dh_step`, `play_dh`), `set_shapes`,
    `select_warning`, `shutdown`. Signal ``cell_requested(row, key)``.
    """

    cell_requested = Signal(int, str)

    def __init__(self, view3d, editor=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("labPanel")
        self.view3d = view3d
        self.editor = editor
        self.overlay = LabOverlay(view3d)
        self.robot = None
        self.q = np.zeros(0)
        self.qd = np.zeros(0)
        self.qdd = np.zeros(0)
        self.walk: Walkthrough | None = None
        self.index = 0
        self.error = ""
        self.transforms: tuple[ElementaryTransform, ...] = ()
        self.dh_index = 0
        self.dh_progress = 1.0
        self.dh_playing = False
        self.warnings: list[ModelWarning] = []
        self.shape_notes: list[ShapeNote] = []
        self._active = False

        self._debounce = QTimer(self)
        self._debounce.setObjectName("labDebounce")
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self.flush)
        self._animation = QTimer(self)
        self._animation.setObjectName("labAnimation")
        self._animation.setInterval(FRAME_MS)
        self._animation.timeout.connect(self._tick)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setUsesScrollButtons(True)
        self.complexity = ComplexityPanel()
        self.power = PowerPanel()
        for page, title in ((self._build_recursion(), "Recursion"),
                            (self._build_dh(), "DH frames"), (self._build_inertia(), "Inertia"),
                            (self.complexity, "Complexity"), (self.power, "Power")):
            self.tabs.addTab(_scrolling(page), title)
        self.tabs.currentChanged.connect(self._refresh_overlay)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tabs)

    # ==================================================================================
    # Construction
    # ==================================================================================
    def _build_recursion(self) -> QWidget:
        page = QWidget()
        self.algorithm = QComboBox()
        for key, title in ALGORITHMS:
            self.algorithm.addItem(title, key)
        self.algorithm.currentIndexChanged.connect(self._on_algorithm)
        self.drive = QComboBox()
        for key, title in DRIVES:
            self.drive.addItem(title, key)
        self.drive.setToolTip("The joint forces the forward dynamics is given")
        self.drive.currentIndexChanged.connect(self._schedule)
        self.first_button = QPushButton("|\u25c0")
        self.back_button = QPushButton("\u25c0 Back")
        self.next_button = QPushButton("Next \u25b6")
        self.last_button = QPushButton("\u25b6|")
        self.first_button.setToolTip("First step")
        self.last_button.setToolTip("Last step")
        for b in (self.first_button, self.last_button):
            b.setMaximumWidth(b.fontMetrics().horizontalAdvance(b.text()) + 24)
        self.first_button.clicked.connect(lambda: self.go_to(0))
        self.back_button.clicked.connect(self.previous_step)
        self.next_button.clicked.connect(self.next_step)
        self.last_button.clicked.connect(lambda: self.go_to(len(self.steps()) - 1))
        self.step_label = QLabel()
        self.step_label.setObjectName("labStep")
        self.formula_label = QLabel()
        self.formula_label.setObjectName("labFormula")
        self.formula_label.setWordWrap(True)
        self.formula_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.formula_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.formula_label.setFont(font)

        self.rates = QTableWidget(2, 0)
        self.rates.setObjectName("labRates")
        self.rates.setVerticalHeaderLabels(["\u03b8'", "\u03b8''"])
        self.rates.setToolTip("Joint rates and accelerations of the walkthrough: rad/s, "
                              "rad/s\u00b2 (m/s, m/s\u00b2 for a prismatic joint)")
        self.rates.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.rates.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.rates.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.rates.itemChanged.connect(self._on_rate_edited)

        self.arrows_check = QCheckBox("Arrows")
        self.arrows_check.setChecked(True)
        self.arrows_check.toggled.connect(self._refresh_overlay)
        self.scale_slider = QSlider(Qt.Orientation.Horizontal)
        self.scale_slider.setObjectName("labArrowScale")
        self.scale_slider.setRange(-12, 12)   # 2^(v/4): 1/8 .. 8 times the automatic scale
        self.scale_slider.setValue(0)
        self.scale_slider.setToolTip("Arrow scale (1/8 to 8 times: the longest arrow of each "
                                     "kind at 30 % of the arm's reach)")
        self.scale_slider.valueChanged.connect(self._refresh_overlay)
        self.legend = QLabel()
        self.legend.setObjectName("labLegend")
        self.legend.setWordWrap(True)

        # each quantity takes two rows: symbol, eq., value; then its meaning and unit
        # across the table (columns of their own got a few pixels beside a 6x6 M_i)
        self.numbers = QTableWidget(0, 3)
        self.numbers.setObjectName("labNumbers")
        self.numbers.setHorizontalHeaderLabels(["symbol", "eq.", "value"])
        self.numbers.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.numbers.setWordWrap(True)
        self.numbers.verticalHeader().hide()
        header = self.numbers.horizontalHeader()
        for c in range(3):  # (a matrix's rows are never wrapped: the table scrolls)
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        header.setMinimumSectionSize(24)
        self._meaning_font = QFont(self.numbers.font())
        self._meaning_font.setItalic(True)
        self._serif = QFont("DejaVu Serif")
        self._serif.setStyleHint(QFont.StyleHint.Serif)
        self.formula_label.setFont(QFont(self._serif.family(), font.pointSize()))
        mono = QFont("Monospace")
        mono.setStyleHint(QFont.StyleHint.TypeWriter)
        self._mono = mono

        for combo in (self.algorithm, self.drive):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
        top = QHBoxLayout()
        top.addWidget(self.algorithm, 1)
        top.addWidget(self.drive, 1)
        nav = QHBoxLayout()
        for b in (self.first_button, self.back_button, self.next_button, self.last_button):
            nav.addWidget(b)
        nav.addStretch(1)
        self.step_label.setWordWrap(True)
        scale = QHBoxLayout()
        scale.addWidget(self.arrows_check)
        scale.addWidget(QLabel("scale"))
        scale.addWidget(self.scale_slider, 1)
        left = QVBoxLayout()
        left.addLayout(top)
        left.addLayout(nav)
        left.addWidget(self.step_label)
        left.addWidget(self.formula_label)
        left.addWidget(self.rates)
        left.addLayout(scale)
        left.addWidget(self.legend)
        left.addStretch(1)
        columns = QHBoxLayout(page)
        columns.setContentsMargins(0, 4, 0, 0)
        columns.addLayout(left, 2)
        columns.addWidget(self.numbers, 5)
        self.numbers.setMinimumWidth(420)
        self.rates.setMinimumWidth(200)
        return page

    def _build_dh(self) -> QWidget:
        page = QWidget()
        self.dh_link = QComboBox()
        self.dh_link.setObjectName("labDhLink")
        self.dh_link.currentIndexChanged.connect(self._on_dh_link)
        self.dh_chain = QCheckBox("Whole chain")
        self.dh_chain.setToolTip("Step through every row, from the base outwards")
        self.dh_chain.toggled.connect(self._on_dh_link)
        self.dh_back = QPushButton("\u25c0 Back")
        self.dh_next = QPushButton("Next \u25b6")
        self.dh_play = QPushButton("\u25b6 Play")
        self.dh_play.setCheckable(True)
        self.dh_back.clicked.connect(lambda: self.dh_step(-1))
        self.dh_next.clicked.connect(lambda: self.dh_step(+1))
        self.dh_play.toggled.connect(self.play_dh)
        self.dh_title = QLabel()
        self.dh_title.setObjectName("labDhTitle")
        font = self.dh_title.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.dh_title.setFont(font)
        self.dh_hint = QLabel()
        self.dh_hint.setWordWrap(True)
        self.dh_list = QListWidget()
        self.dh_list.setObjectName("labDhSteps")
        self.dh_list.currentRowChanged.connect(self._on_dh_list)
        row = QHBoxLayout()
        row.addWidget(QLabel("Row"))
        row.addWidget(self.dh_link, 1)
        row.addWidget(self.dh_chain)
        nav = QHBoxLayout()
        for b in (self.dh_back, self.dh_next, self.dh_play):
            nav.addWidget(b)
        nav.addStretch(1)
        left = QVBoxLayout()
        left.addLayout(row)
        left.addLayout(nav)
        left.addWidget(self.dh_title)
        left.addWidget(self.dh_hint)
        left.addStretch(1)
        columns = QHBoxLayout(page)
        columns.setContentsMargins(0, 4, 0, 0)
        columns.addLayout(left, 2)
        columns.addWidget(self.dh_list, 3)
        return page

    def _build_inertia(self) -> QWidget:
        page = QWidget()
        self.shape_buttons = QButtonGroup(self)
        grid = QGridLayout()
        for i, (key, title) in enumerate(((None, "Off"), ("box", "Boxes"),
                                          ("ellipsoid", "Ellipsoids"))):
            button = QRadioButton(title)
            button.setProperty("shape", key)
            self.shape_buttons.addButton(button, i)
            grid.addWidget(button, 0, i)
        self.shape_buttons.button(1).setChecked(True)
        self.shape_buttons.idToggled.connect(self._on_shape_toggled)
        self.shape_hint = QLabel("The uniform solid of each link's mass with its principal "
                                 "moments, at the mass centre: a wrong mass centre shows as a "
                                 "shape away from its link, a wrong moment as a shape of the "
                                 "wrong size. A box much longer than its link can also be "
                                 "right: a hollow link with motors has its mass far from its "
                                 "mass centre (such links are listed on the right).")
        self.shape_hint.setWordWrap(True)
        self.warnings_label = QLabel()
        self.warnings_label.setObjectName("labWarningsLabel")
        self.warnings_label.setWordWrap(True)
        self.warnings_list = QListWidget()
        self.warnings_list.setObjectName("labWarnings")
        self.warnings_list.setWordWrap(True)
        self.warnings_list.itemClicked.connect(
            lambda item: self.select_warning(self.warnings_list.row(item)))
        left = QVBoxLayout()
        left.addLayout(grid)
        left.addWidget(self.shape_hint)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(self.warnings_label)
        right.addWidget(self.warnings_list, 1)
        columns = QHBoxLayout(page)
        columns.setContentsMargins(0, 4, 0, 0)
        columns.addLayout(left, 2)
        columns.addLayout(right, 3)
        return page

    # ==================================================================================
    # State from the window
    # ==================================================================================
    def set_robot(self, robot) -> None:
        """A new valid robot or mechanism (the pose follows with `set_pose`)."""
        same_size = (self.robot is not None and self.robot.nq == robot.nq
                     and self.robot.nv == robot.nv)
        self.robot = robot
        self.overlay.set_robot(robot, Sizes.of(robot).reach)
        if not same_size:
            self.q = robot.q_home.copy()
            angular = robot.rate_is_angular  # (nv,): a free joint's [ω; v] has both
            self.set_rates(np.where(angular, 0.5, 0.1), np.where(angular, 1.0, 0.2))
            self.index = 0
        self.dh_link.blockSignals(True)
        current = self.dh_link.currentIndex()
        self.dh_link.clear()
        for k, link in enumerate(robot.links):
            self.dh_link.addItem(f"{k + 1}" + (f"  {link.name}" if link.name else ""))
        self.dh_link.setCurrentIndex(min(max(current, 0), robot.n - 1))
        self.dh_link.blockSignals(False)
        self.warnings = check_model(robot)
        self.shape_notes = large_shapes(robot)
        self._fill_warnings()
        self._schedule()

    def set_pose(self, q) -> None:
        """The window's pose, (nq,) rad / m (a quaternion per spherical or free joint)."""
        self.q = np.array(q, dtype=float)
        self._schedule()

    def set_rates(self, qd, qdd) -> None:
        """Joint rates and accelerations of the walkthrough, (nv,) each (rad/s, rad/s^2;
        m/s, m/s^2 for prismatic joints and a free joint's v); a column per rate, headed
        by its joint's number ("1 \u03c9x" for a joint of several)."""
        self.qd = np.array(qd, dtype=float)
        self.qdd = np.array(qdd, dtype=float)
        self.rates.blockSignals(True)
        self.rates.setColumnCount(len(self.qd))
        self.rates.setHorizontalHeaderLabels(self._rate_headers(len(self.qd)))
        for r, values in enumerate((self.qd, self.qdd)):
            for c, x in enumerate(values):
                self.rates.setItem(r, c, QTableWidgetItem(f"{x:g}"))
        self.rates.blockSignals(False)
        self.rates.setFixedHeight(self.rates.horizontalHeader().height()
                                  + 2 * self.rates.rowHeight(0) + 4)
        self._schedule()

    def _rate_headers(self, nv: int) -> list[str]:
        """A header per rate: the joint's number, and which rate of a joint of several."""
        robot = self.robot
        if robot is None or robot.nv != nv:
            return [str(k + 1) for k in range(nv)]
        return [f"{j + 1} {part}".strip()
                for j, kind in enumerate(robot.joint_types)
                for part in RATE_NAMES.get(kind.value, ("",))]

    def _on_rate_edited(self, item: QTableWidgetItem) -> None:
        try:
            value = float(item.text().replace(",", "."))
        except ValueError:
            value = math.nan
        target = self.qd if item.row() == 0 else self.qdd
        if not math.isfinite(value):
            item.setText(f"{target[item.column()]:g}")  # back to the last good value
            return
        target[item.column()] = value
        self._schedule()

    def _schedule(self, *_args) -> None:
        self._debounce.start()

    def is_pending(self) -> bool:
        return self._debounce.isActive()

    def flush(self) -> None:
        """Recompute now: walkthrough, DH transforms, inertia shapes, overlays."""
        self._debounce.stop()
        if self.robot is None or self.q.shape != (self.robot.nq,) \
                or self.qd.shape != (self.robot.nv,):
            return
        drive = self.drive.currentData()
        tau_fd = np.zeros(self.robot.nv) if drive == "zero" else None
        try:
            self.walk = walkthrough(self.robot, self.q, self.qd, self.qdd, tau_fd=tau_fd)
            self.error = ""
        except (ArmDynError, ValueError) as e:
            self.walk = None
            self.error = str(e)
        self.index = min(self.index, max(len(self.steps()) - 1, 0))
        self._compute_transforms()
        self.overlay.set_pose(self.q)
        self._show_step()
        self._show_dh()

    # ==================================================================================
    # Recursion walkthrough
    # ==================================================================================
    def algorithm_key(self) -> str:
        return self.algorithm.currentData()

    def set_algorithm(self, key: str) -> None:
        self.algorithm.setCurrentIndex([k for k, _ in ALGORITHMS].index(key))

    def steps(self) -> tuple[Step, ...]:
        return self.walk.of(self.algorithm_key()) if self.walk is not None else ()

    def current_step(self) -> Step | None:
        steps = self.steps()
        return steps[self.index] if steps else None

    def go_to(self, index: int) -> None:
        steps = self.steps()
        if steps:
            self.index = min(max(index, 0), len(steps) - 1)
            self._show_step()

    def next_step(self) -> None:
        self.go_to(self.index + 1)

    def previous_step(self) -> None:
        self.go_to(self.index - 1)

    def _on_algorithm(self) -> None:
        self.index = 0
        self.drive.setEnabled(self.algorithm_key() == UDU)
        self._show_step()

    def arrow_scales(self) -> dict[ArrowKind, float]:
        """Metres per unit of each kind: the largest value of the kind over the whole
        walkthrough of the algorithm is ARROW_SHARE of the reach, times the slider."""
        factor = 2.0 ** (self.scale_slider.value() / 4.0)
        largest: dict[ArrowKind, float] = {}
        for step in self.steps():
            for arrow in step.arrows:
                largest[arrow.kind] = max(largest.get(arrow.kind, 0.0),
                                          float(np.linalg.norm(arrow.vector)))
        return {kind: factor * ARROW_SHARE * self.overlay.reach / big
                for kind, big in largest.items() if big > 1e-12}

    def _show_step(self) -> None:
        step = self.current_step()
        steps = self.steps()
        for b in (self.first_button, self.back_button):
            b.setEnabled(bool(steps) and self.index > 0)
        for b in (self.next_button, self.last_button):
            b.setEnabled(bool(steps) and self.index < len(steps) - 1)
        if step is None:
            self.step_label.setText(self.error or "")
            self.formula_label.setText("")
            self.numbers.setRowCount(0)
            self._refresh_overlay()
            return
        tree = " (spanning tree)" if self.walk.tree_only else ""
        self.step_label.setText(f"step {self.index + 1} / {len(steps)} \u2014 {step.phase}, "
                                f"link {step.link + 1}{tree}")
        self.formula_label.setText(f"{step.formula}    ({step.equation})")
        self.numbers.clearSpans()
        self.numbers.setRowCount(2 * len(step.quantities))
        for k, item in enumerate(step.quantities):
            r = quantity_row(k)
            cells = (item.symbol, item.equation, format_value(item.value, "; " in item.unit))
            for c, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if c == 0:
                    cell.setFont(self._serif)
                if c == 2:
                    cell.setFont(self._mono)
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignLeft
                                          | Qt.AlignmentFlag.AlignVCenter)
                self.numbers.setItem(r, c, cell)
            unit = f"   [{item.unit}]" if item.unit else ""
            meaning = QTableWidgetItem(item.meaning + unit)
            meaning.setFont(self._meaning_font)
            meaning.setForeground(QColor("#505860"))
            self.numbers.setItem(r + 1, 0, meaning)
            self.numbers.setSpan(r + 1, 0, 1, self.numbers.columnCount())
        # no wider than its columns: a wide panel gives the rest to the controls
        table = self.numbers
        table.horizontalHeader().resizeSections(QHeaderView.ResizeMode.ResizeToContents)
        needed = (table.horizontalHeader().length() + 2 * table.frameWidth()
                  + table.verticalScrollBar().sizeHint().width() + 4)
        table.setMaximumWidth(max(needed, table.minimumWidth()))
        table.resizeRowsToContents()
        self._refresh_overlay()

    def _legend(self, step: Step, scales: dict[ArrowKind, float]) -> str:
        lines = []
        for arrow in step.arrows:
            size = float(np.linalg.norm(arrow.vector))
            scale = scales.get(arrow.kind)
            per_metre = f" (1 m \u2194 {_fmt(1.0 / scale)} {arrow.kind.unit})" if scale else ""
            lines.append(f"<span style='color:{ARROW_COLORS[arrow.kind]}'>\u25a0</span> "
                         f"{arrow.symbol}: |{_fmt(size)}| {arrow.kind.unit}{per_metre}")
        return "<br>".join(lines)

    # ==================================================================================
    # DH lesson
    # ==================================================================================
    def set_dh_link(self, link: int, chain: bool = False) -> None:
        """Show row `link` (0-based), or the whole chain, from its first step."""
        self.dh_chain.blockSignals(True)
        self.dh_chain.setChecked(chain)
        self.dh_chain.blockSignals(False)
        self.dh_link.setCurrentIndex(link)
        self._on_dh_link()

    def _on_dh_link(self, *_args) -> None:
        self.dh_index = 0
        self.dh_progress = 0.0
        self._compute_transforms()
        self._show_dh(select=True)

    def _compute_transforms(self) -> None:
        if self.robot is None or self.q.shape != (self.robot.n,):
            self.transforms = ()
            return
        if self.dh_chain.isChecked():
            self.transforms = chain_transforms(self.robot, self.q)
        else:
            self.transforms = row_transforms(self.robot, self.q,
                                             max(self.dh_link.currentIndex(), 0))
        self.dh_index = min(self.dh_index, max(len(self.transforms) - 1, 0))
        self.dh_list.blockSignals(True)
        self.dh_list.clear()
        for s in self.transforms:
            self.dh_list.addItem(QListWidgetItem(f"row {s.link + 1}:  {self._describe(s)}"))
        self.dh_list.setCurrentRow(self.dh_index)
        self.dh_list.blockSignals(False)

    @staticmethod
    def _describe(s: ElementaryTransform, ascii_only: bool = False) -> str:
        """'Rz(θ_2 = +30.00°)': the parameter's value with its sign ('theta_2', 'deg'
        with ascii_only)."""
        if s.rotation:
            value = f"{math.degrees(s.value):+.2f}" + (" deg" if ascii_only else "\u00b0")
        else:
            value = f"{s.value:+.4g} m"
        symbol = f"{s.parameter}_{s.link + 1}" if ascii_only else s.symbol
        return f"{s.name}({symbol} = {value})" + ("  joint variable" if s.variable else "")

    def dh_step(self, delta: int) -> None:
        """Animate the next (+1) or show the previous (-1) elementary transform."""
        if not self.transforms:
            return
        if delta > 0:
            if self.dh_progress < 1.0:
                self.dh_progress = 1.0        # finish the one under way first
            elif self.dh_index < len(self.transforms) - 1:
                self.dh_index += 1
                self.dh_progress = 0.0
                self._animation.start()
        else:
            if self.dh_progress < 1.0 or self.dh_index == 0:
                self.dh_progress = 0.0 if self.dh_index == 0 else 1.0
                self.dh_index = max(self.dh_index - (self.dh_progress == 1.0), 0)
            else:
                self.dh_index -= 1
            self._animation.stop()
        self._show_dh(select=True)

    def play_dh(self, on: bool) -> None:
        """Play (or pause) the animation through every remaining step."""
        self.dh_playing = bool(on)
        if self.dh_play.isChecked() != self.dh_playing:
            self.dh_play.blockSignals(True)
            self.dh_play.setChecked(self.dh_playing)
            self.dh_play.blockSignals(False)
        self.dh_play.setText("\u2016 Pause" if on else "\u25b6 Play")
        if on:
            if self.dh_index >= len(self.transforms) - 1 and self.dh_progress >= 1.0:
                self.dh_index, self.dh_progress = 0, 0.0     # from the start again
            self._animation.start()
        else:
            self._animation.stop()

    def _tick(self) -> None:
        """One animation frame: advance the elementary transform under way."""
        if not self.transforms:
            self._animation.stop()
            return
        self.dh_progress = min(self.dh_progress + FRAME_MS / STEP_MS, 1.0)
        select = False
        if self.dh_progress >= 1.0:
            if self.dh_playing and self.dh_index < len(self.transforms) - 1:
                self.dh_index += 1
                self.dh_progress = 0.0
                select = True
            else:
                self._animation.stop()
                if self.dh_playing:
                    self.play_dh(False)
        self._show_dh(select=select)

    def is_animating(self) -> bool:
        return self._animation.isActive()

    def _on_dh_list(self, row: int) -> None:
        if 0 <= row < len(self.transforms):
            self.dh_index = row
            self.dh_progress = 1.0
            self._animation.stop()
            self._show_dh(select=True)

    def dh_frame(self) -> np.ndarray | None:
        """The moving frame (4, 4) shown now."""
        if not self.transforms:
            return None
        return self.transforms[self.dh_index].at(self.dh_progress)

    def _show_dh(self, select: bool = False) -> None:
        self.dh_back.setEnabled(bool(self.transforms))
        self.dh_next.setEnabled(bool(self.transforms) and (
            self.dh_index < len(self.transforms) - 1 or self.dh_progress < 1.0))
        if not self.transforms:
            self.dh_title.setText("")
            return
        s = self.transforms[self.dh_index]
        self.dh_title.setText(self._describe(s))
        self.dh_hint.setText(
            f"Row {s.link + 1}, step {STEP_NAMES.index(s.name) + 1} "
            f"of 4: {TRANSFORM_TITLES[s.name]}. Frame {s.link} (faint) is carried into frame "
            f"{s.link + 1} (faint, ahead) by Rz(\u03b8) Tz(b) Tx(a) Rx(\u03b1).")
        self.dh_list.blockSignals(True)
        self.dh_list.setCurrentRow(self.dh_index)
        self.dh_list.blockSignals(False)
        if select:
            self._select(s.link, s.parameter)
        self._refresh_overlay()

    def _select(self, row: int, key: str) -> None:
        self.cell_requested.emit(row, key)
        if self.editor is not None:
            select_cell(self.editor, row, key)

    # ==================================================================================
    # Inertia
    # ==================================================================================
    def shape_kind(self) -> str | None:
        return self.shape_buttons.checkedButton().property("shape")

    def set_shapes(self, kind: str | None) -> None:
        """Show the equivalent inertia "box" or "ellipsoid" of every link, or None."""
        index = {None: 0, "box": 1, "ellipsoid": 2}[kind]
        self.shape_buttons.button(index).setChecked(True)

    def _on_shape_toggled(self, _id: int, checked: bool) -> None:
        if checked:
            self._refresh_overlay()

    def _fill_warnings(self) -> None:
        self.warnings_list.clear()
        for w in self.warnings:
            item = QListWidgetItem(f"\u26a0 {w.message}")
            item.setToolTip(f"{w.kind.value}: click to select link {w.link + 1}'s "
                            f"'{w.cell}' cell")
            item.setForeground(QColor("#7A4A00"))
            self.warnings_list.addItem(item)
        for note in self.shape_notes:
            item = QListWidgetItem(f"\u25a1 {note.message}")
            item.setToolTip(f"box larger than its link: click to select link "
                            f"{note.link + 1}'s '{note.cell}' cell")
            item.setForeground(QColor("#2C4A6B"))
            self.warnings_list.addItem(item)
        count, notes = len(self.warnings), len(self.shape_notes)
        text = (f"{count} suspicious value{'s' * (count != 1)}" if count
                else "No suspicious values in this model")
        if notes:
            text += (f". {notes} box{'es are' if notes != 1 else ' is'} much longer than "
                     f"{'their links' if notes != 1 else 'its link'} (\u25a1): "
                     f"{LARGE_SHAPE_MEANING}")
        self.warnings_label.setText(text + (" Click a line to select its cell."
                                            if count or notes else "."))

    def select_warning(self, row: int) -> None:
        """Select the table cell of warning `row` (and highlight its link in 3D); the rows
        after the warnings are the notes on large boxes (`shape_notes`)."""
        entries = [(w.link, w.cell) for w in self.warnings] + [
            (n.link, n.cell) for n in self.shape_notes]
        if 0 <= row < len(entries):
            link, cell = entries[row]
            self.warnings_list.setCurrentRow(row)
            self._select(link, cell)
            self.overlay.highlight(link)

    # ==================================================================================
    # 3D overlays: only the current tab's, only while the panel is visible
    # ==================================================================================
    def _refresh_overlay(self, *_args) -> None:
        if self.robot is None:
            return
        if not self._active:
            self.overlay.clear()
            self.overlay.set_shapes(None)
            return
        tab = self.tabs.currentIndex()
        self.overlay.set_shapes(self.shape_kind() if tab == 2 else None)
        self.overlay.set_pose(self.q)
        if tab == 0:
            step = self.current_step()
            self.overlay.show_frames(None, None, None)
            if step is None:
                self.overlay.clear()
                return
            scales = self.arrow_scales()
            self.overlay.show_arrows(step.arrows if self.arrows_check.isChecked() else (),
                                     scales)
            self.legend.setText(self._legend(step, scales))
            self.overlay.highlight(step.link)
            # (the 3D view's font has Latin letters only)
            self.overlay.set_text(f"{step.algorithm}: {step.phase}, link {step.link + 1}")
        elif tab == 1:
            self.overlay.show_arrows((), {})
            if not self.transforms:
                self.overlay.clear()
                return
            s = self.transforms[self.dh_index]
            row = [t for t in self.transforms if t.link == s.link]
            self.overlay.show_frames(row[0].start, self.dh_frame(), row[-1].end)
            self.overlay.highlight(s.link)
            self.overlay.set_text(f"row {s.link + 1}:  {self._describe(s, ascii_only=True)}")
        elif tab == 2:
            self.overlay.show_arrows((), {})
            self.overlay.show_frames(None, None, None)
            self.overlay.set_text("")
            current = self.warnings_list.currentRow()
            self.overlay.highlight(self.warnings[current].link
                                   if 0 <= current < len(self.warnings) else None)
        else:  # complexity, power: nothing in 3D
            self.overlay.clear()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._active = True
        self._refresh_overlay()

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().hideEvent(event)
        self._active = False
        self._animation.stop()
        if self.dh_playing:
            self.play_dh(False)
        self._refresh_overlay()

    def shutdown(self) -> None:
        """Stop the timers (before the 3D view is closed)."""
        self._debounce.stop()
        self._animation.stop()
        self.complexity.shutdown()
        self.power.shutdown()
        self._active = False


def _scrolling(page: QWidget) -> QScrollArea:
    """`page` in a scroll area: a narrow dock scrolls it rather than widening the window
    (the Lab shares the bottom dock area with Results and Inspect)."""
    return scroll_area(page)
