"""The Sweep panel's results: the envelope plots, the heat map, the table of points and
the worst point.

- **Envelope**: per varied field one plot of each joint's peak |tau| against that field's
  values (joint colours, `gui.look.colors`); with several fields, each value's largest
  peak over the other fields (`core.sweeps.sweep.SweepResult.envelope`), which the axis
  label says.
- **Heat map**: the peak |tau| of the chosen joint over two chosen fields (pyqtgraph
  `ImageItem`, a colour bar beside it), the largest over any other field; a cell whose
  points all failed stays empty.
- **Points**: one row per grid point (Qt model/view, sortable by any column): the varied
  values as typed, every result, the status (a failed point's reason).
- **Worst point**: the point with the highest peak |tau| of the chosen joint, with its
  values; "Show in Run panel" (or a double-click on a row) asks for a point to be run in
  the window (``point_requested``).

`show_result(result)` gives it a `SweepResult` (a snapshot while the sweep runs); the panel calls
it from a timer, never per batch. The plots are built once per grid (new axes) and
updated in place.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QTableView, QTabWidget, QVBoxLayout, QWidget)

from armdyn.core.sweeps.fields import typed_units
from armdyn.core.sweeps.sweep import SweepResult

from ..jobs.sweeps import ANGLE_UNIT
from ..look.colors import joint_color
from ..look.text import html, plain_label, shown_name
from ..plots.plots_panel import LABEL_STYLE, adopt_menus

__all__ = ["SweepResults", "SweepTableModel", "HEAT_MAP", "ENVELOPE_PLOTS_MAX"]

#: The colour map of the heat map (perceptually uniform, readable in grey).
HEAT_MAP = "viridis"
#: The tabs' order: the envelope, the heat map, the points.
ENVELOPE_TAB, HEAT_MAP_TAB, POINTS_TAB = 0, 1, 2
#: Envelope plots shown side by side at most (a grid has rarely more fields).
ENVELOPE_PLOTS_MAX = 4
#: At most this many value labels on a heat map's axis (the others are ticks only).
TICK_LABELS_MAX = 8
#: Column widths are fitted to this many rows (a grid may have ten thousand).
RESIZE_ROWS = 50


def _number(v: float) -> str:
    return "" if v != v else f"{v:.6g}"


def _joint_unit(model, j: int) -> str:
    return "N m" if model.is_revolute[j] else "N"


def _torque_unit(model) -> str:
    units = {_joint_unit(model, j) for j in range(model.n)}
    return "N m" if units == {"N m"} else "N" if units == {"N"} else "N m or N"


class SweepTableModel(QAbstractTableModel):
    """The points of a `SweepResult`, read-only: "#", the varied columns, the results,
    "status". Display: 6 significant digits. Sorted here (`sort`, what a click on a
    header asks) by NumPy, the order kept when the result is updated: a grid may have
    ten thousand points, and a proxy model's sort asked Python for every cell it
    compared (seconds). `point(row)` is the point a row shows."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.result: SweepResult | None = None
        self._headers: list[str] = []
        self._numbers = np.zeros((0, 0))
        self._order = np.zeros(0, dtype=int)  # row -> point
        self._sort: tuple[int, Qt.SortOrder] = (0, Qt.SortOrder.AscendingOrder)

    def set_result(self, result: SweepResult | None) -> None:
        """Show `result` (None: nothing); a grid of the same shape is updated in place,
        in the same order."""
        same = (result is not None and self.result is not None
                and result.plan is self.result.plan)
        if result is None:
            headers, numbers = [], np.zeros((0, 0))
        else:
            units = typed_units(result.plan.axes, ANGLE_UNIT) + list(result.units)
            names = result.columns + result.result_columns
            headers = ["#"] + [f"{c} ({u})" for c, u in zip(names, units)] + ["status"]
            numbers = np.column_stack([np.arange(1, result.size + 1), result.values,
                                       result.rows])
        if not same:
            self.beginResetModel()
            self.result, self._headers, self._numbers = result, headers, numbers
            self._order = np.arange(0 if result is None else result.size)
            self._sort = (0, Qt.SortOrder.AscendingOrder)
            self.endResetModel()
            return
        self.layoutAboutToBeChanged.emit()
        self.result, self._numbers = result, numbers
        self._order = self._sorted(*self._sort)
        self.layoutChanged.emit()
        if result.size:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(result.size - 1, len(headers) - 1))

    def point(self, row: int) -> int:
        """The point (0-based, grid order) row `row` shows."""
        return int(self._order[row])

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:  # noqa: A003
        """Sort the rows by `column` (an empty cell last, ties in grid order)."""
        if self.result is None:
            return
        self.layoutAboutToBeChanged.emit()
        self._sort = (column, order)
        self._order = self._sorted(column, order)
        self.layoutChanged.emit()

    def _sorted(self, column: int, order: Qt.SortOrder) -> np.ndarray:
        down = order == Qt.SortOrder.DescendingOrder
        if column == len(self._headers) - 1:  # the status text
            keys = np.array([str(v) for v in self.result.status])
            idx = np.argsort(keys, kind="stable")
            return idx[::-1] if down else idx
        values = self._numbers[:, column]
        empty = np.isnan(values)
        keys = np.where(empty, 0.0, -values if down else values)
        return np.lexsort((np.arange(len(values)), keys, empty))

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() or self.result is None else self.result.size

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self._headers)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.result is None:
            return None
        i, j = int(self._order[index.row()]), index.column()
        status = j == len(self._headers) - 1
        if role == Qt.ItemDataRole.DisplayRole:
            if status:
                return str(self.result.status[i])
            return str(i + 1) if j == 0 else _number(float(self._numbers[i, j]))
        if role == Qt.ItemDataRole.UserRole:  # the number itself (or the status)
            return str(self.result.status[i]) if status else float(self._numbers[i, j])
        if role == Qt.ItemDataRole.ToolTipRole and status:
            return html(str(self.result.status[i]))
        if role == Qt.ItemDataRole.TextAlignmentRole and not status:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if (role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal
                and section < len(self._headers)):
            return self._headers[section]
        return None


class SweepResults(QWidget):
    """The results of one sweep (module docstring).

    Signals: ``point_requested(int)`` a point (0-based, grid order) to run in the window.
    Attributes for scripts and tests: ``envelope_plots`` (one `pg.PlotItem` per varied
    field, its ``curves`` per joint), ``heat_plot`` / ``heat_image`` / ``color_bar``,
    ``table`` (the view) and ``points`` (its `SweepTableModel`), ``tabs``.
    """

    point_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: SweepResult | None = None
        self._plan = None
        self._build()

    # ----- construction ---------------------------------------------------------------
    def _build(self) -> None:
        self._joint = QComboBox()
        self._joint.setMinimumContentsLength(12)
        self._joint.setToolTip("The joint of the heat map and of the worst point")
        self._joint.currentIndexChanged.connect(self._redraw)
        self._heat_x = QComboBox()
        self._heat_y = QComboBox()
        for box, tip in ((self._heat_x, "The heat map's horizontal field"),
                         (self._heat_y, "The heat map's vertical field")):
            box.setToolTip(tip)
            box.setMinimumContentsLength(8)
            box.currentIndexChanged.connect(self._redraw)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # the envelope: one plot per varied field
        envelope = QWidget()
        column = QVBoxLayout(envelope)
        column.setContentsMargins(0, 0, 0, 0)
        self._legend = QLabel()
        self._legend.setTextFormat(Qt.TextFormat.RichText)
        self._legend.setWordWrap(True)
        self._legend.setContentsMargins(6, 2, 6, 0)
        self._envelope_view = pg.GraphicsLayoutWidget()
        self._envelope_view.setBackground("w")
        column.addWidget(self._legend)
        column.addWidget(self._envelope_view, 1)
        self.envelope_plots: list[pg.PlotItem] = []
        self.tabs.addTab(envelope, "Envelope")
        # the heat map
        heat = QWidget()
        column = QVBoxLayout(heat)
        column.setContentsMargins(0, 0, 0, 0)
        choose = QHBoxLayout()
        choose.setContentsMargins(6, 2, 6, 0)
        choose.addWidget(QLabel("Across:"))
        choose.addWidget(self._heat_x)
        choose.addWidget(QLabel("Up:"))
        choose.addWidget(self._heat_y)
        choose.addStretch(1)
        self._heat_note = plain_label("")
        self._heat_note.setContentsMargins(6, 0, 6, 0)
        self._heat_view = pg.GraphicsLayoutWidget()
        self._heat_view.setBackground("w")
        self.heat_plot = pg.PlotItem(viewBox=pg.ViewBox(enableMenu=False))
        self._style(self.heat_plot)
        self.heat_plot.setMouseEnabled(x=False, y=False)
        self.heat_plot.showGrid(x=False, y=False)
        self.heat_image = pg.ImageItem(axisOrder="col-major")
        self.heat_plot.addItem(self.heat_image)
        self._heat_view.addItem(self.heat_plot, row=0, col=0)
        self.color_bar = pg.ColorBarItem(colorMap=HEAT_MAP, interactive=False, width=16)
        adopt_menus(self.color_bar, self)
        self.color_bar.setImageItem(self.heat_image)
        self._heat_view.addItem(self.color_bar, row=0, col=1)
        column.addLayout(choose)
        column.addWidget(self._heat_note)
        column.addWidget(self._heat_view, 1)
        self.tabs.addTab(heat, "Heat map")
        # the points
        self.points = SweepTableModel(self)
        self.table = QTableView()
        self.table.setModel(self.points)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        # rows as high as a line of text: more points in sight
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setResizeContentsPrecision(RESIZE_ROWS)
        self.table.doubleClicked.connect(self._on_double_click)
        self.table.setToolTip("Double-click a point to run it in the Run panel")
        self.tabs.addTab(self.table, "Points")

        self._worst = plain_label("")
        self._worst.setWordWrap(True)
        self.show_button = QPushButton("Show in Run panel")
        self.show_button.setToolTip("Run the worst point as a normal run: its torques in "
                                    "the Results, its motion in 3D")
        self.show_button.setEnabled(False)
        self.show_button.clicked.connect(self._on_show_worst)
        self._worst.setContentsMargins(6, 0, 6, 0)
        worst = QHBoxLayout()
        worst.setContentsMargins(6, 0, 6, 0)
        worst.addWidget(QLabel("Joint:"))
        worst.addWidget(self._joint)
        worst.addStretch(1)
        worst.addWidget(self.show_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self._worst)
        layout.addLayout(worst)

    def _style(self, item: pg.PlotItem) -> None:
        item.showGrid(x=True, y=True, alpha=0.25)
        adopt_menus(item, self)  # no context menu, no parentless widgets left behind
        item.hideButtons()
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.enableAutoSIPrefix(False)
            axis.setPen(pg.mkPen("#000", width=1))
            axis.setTextPen("#000")

    # ----- what is shown --------------------------------------------------------------
    def show_result(self, result: SweepResult | None) -> None:
        """Show `result` (None: nothing); a new grid rebuilds the plots."""
        self.result = result
        plan = None if result is None else result.plan
        new_grid = plan is not self._plan
        if new_grid:
            self._plan = plan
            self._rebuild()
        self.points.set_result(result)
        if new_grid and result is not None:  # widths from the first rows, once per grid
            self.table.resizeColumnsToContents()
        self._redraw()

    def joint(self) -> int:
        """The joint chosen (0-based) for the heat map and the worst point."""
        return max(0, self._joint.currentIndex())

    def set_joint(self, j: int) -> None:
        self._joint.setCurrentIndex(j)

    def set_heat_axes(self, x: int, y: int) -> None:
        """The heat map over varied fields x (across) and y (up), indices of the grid."""
        self._heat_x.setCurrentIndex(x)
        self._heat_y.setCurrentIndex(y)

    def show_heat_map(self, joint: int | None = None) -> None:
        """Bring the heat map to the front (of `joint`, 0-based, if given)."""
        if joint is not None:
            self.set_joint(joint)
        self.tabs.setCurrentIndex(HEAT_MAP_TAB)

    def worst(self) -> int | None:
        """The worst point of the chosen joint (0-based), or None."""
        return None if self.result is None else self.result.worst(self.joint())

    def worst_text(self) -> str:
        return self._worst.text()

    def envelope_data(self, axis: int, joint: int) -> tuple[np.ndarray, np.ndarray]:
        """What envelope plot `axis` shows for `joint`: (x, y) as drawn."""
        x, y = self.envelope_plots[axis].curves[joint].getData()
        return (np.zeros(0), np.zeros(0)) if x is None else (np.asarray(x), np.asarray(y))

    # ----- drawing --------------------------------------------------------------------
    def _rebuild(self) -> None:
        """New grid: the joint chooser, the envelope plots, the heat map's choosers."""
        view = self._envelope_view
        view.clear()
        self.envelope_plots = []
        for box in (self._joint, self._heat_x, self._heat_y):
            box.blockSignals(True)
            box.clear()
        if self.result is not None:
            model = self.result.model
            for j, name in enumerate(model.joint_names):
                self._joint.addItem(f"{j + 1} {shown_name(name)}")
            axes = self.result.plan.axes
            units = self._axis_units()
            for a, axis in enumerate(axes[:ENVELOPE_PLOTS_MAX]):
                item = pg.PlotItem(viewBox=pg.ViewBox(enableMenu=False))
                self._style(item)
                item.curves = [item.plot(pen=pg.mkPen(joint_color(j), width=2),
                                         symbol="o", symbolSize=6,
                                         symbolBrush=joint_color(j), symbolPen=None)
                               for j in range(model.n)]
                bottom = html(self._axis_title(a, units))
                if len(axes) > 1:  # the envelope: each value's largest over the others
                    others = ", ".join(b.name for k, b in enumerate(axes) if k != a)
                    bottom += (f'<br><span style="font-size:9pt">largest over '
                               f"{html(others)}</span>")
                item.setLabel("bottom", bottom, **LABEL_STYLE)
                item.setLabel("left", f"peak |\u03c4| ({_torque_unit(model)})", **LABEL_STYLE)
                view.addItem(item, row=0, col=a)
                self.envelope_plots.append(item)
            for a, axis in enumerate(axes):
                self._heat_x.addItem(axis.name)
                self._heat_y.addItem(axis.name)
            if len(axes) >= 2:
                self._heat_x.setCurrentIndex(0)
                self._heat_y.setCurrentIndex(1)
            self._legend.setText(" ".join(
                f'<span style="color:{joint_color(j)}">\u25a0</span> {j + 1} '
                f"{html(shown_name(name))}" for j, name in enumerate(model.joint_names)))
        else:
            self._legend.setText("")
        for box in (self._joint, self._heat_x, self._heat_y):
            box.blockSignals(False)

    def _axis_units(self) -> list[str]:
        units = typed_units(self.result.plan.axes, ANGLE_UNIT)
        out, col = [], 0
        for axis in self.result.plan.axes:
            out.append(units[col])
            col += len(axis.columns)
        return out

    def _axis_title(self, a: int, units: list[str]) -> str:
        axis = self.result.plan.axes[a]
        if axis.field.pose:
            return f"{axis.name} (pose number)"
        return f"{axis.name} ({units[a]})"

    def _axis_x(self, a: int) -> np.ndarray:
        axis = self.result.plan.axes[a]
        if axis.field.pose:
            return np.arange(1.0, len(axis) + 1)
        return np.asarray(axis.values, dtype=float)

    @Slot()
    def _redraw(self) -> None:
        result = self.result
        if result is None:
            self.heat_image.clear()
            self._worst.setText("")
            self.show_button.setEnabled(False)
            return
        model = result.model
        for a, item in enumerate(self.envelope_plots):
            x = self._axis_x(a)
            for j, curve in enumerate(item.curves):
                y = result.envelope(f"peak_tau_{j + 1}", [a])
                curve.setData(x, y, connect="finite")
        self._draw_heat_map()
        j = self.joint()
        i = result.worst(j)
        if i is None:
            self._worst.setText("No point has finished yet." if result.done == 0 else
                                "No point succeeded.")
            self.show_button.setEnabled(False)
            return
        values = ", ".join(f"{c} = {v:g}" for c, v in zip(result.columns, result.values[i]))
        peak = result.peak_torques()[i, j]
        self._worst.setText(f"Worst for joint {j + 1}: point {i + 1} of {result.size} "
                            f"({values}): peak |\u03c4{j + 1}| = {peak:.4g} "
                            f"{_joint_unit(model, j)}")
        self.show_button.setEnabled(True)

    def _draw_heat_map(self) -> None:
        result = self.result
        axes = result.plan.axes
        if len(axes) < 2:
            self.heat_image.clear()
            self._heat_note.setText("A heat map needs two varied fields.")
            return
        ax, ay = self._heat_x.currentIndex(), self._heat_y.currentIndex()
        if ax == ay:
            self.heat_image.clear()
            self._heat_note.setText("Choose two different fields.")
            return
        j = self.joint()
        grid = result.envelope(f"peak_tau_{j + 1}", [ax, ay])
        others = [b.name for k, b in enumerate(axes) if k not in (ax, ay)]
        note = f"peak |\u03c4{j + 1}| ({_joint_unit(result.model, j)}) of joint {j + 1}"
        if others:
            note += ", largest over " + ", ".join(others)
        self._heat_note.setText(note)
        finite = grid[np.isfinite(grid)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if hi <= lo:
            hi = lo + max(abs(lo) * 1e-6, 1e-12)
        self.heat_image.setImage(grid, autoLevels=False, levels=(lo, hi))
        self.color_bar.setLevels((lo, hi))
        kx, ky = grid.shape
        self.heat_image.setRect(-0.5, -0.5, kx, ky)
        self.heat_plot.setRange(xRange=(-0.5, kx - 0.5), yRange=(-0.5, ky - 0.5), padding=0)
        units = self._axis_units()
        for side, a, k in (("bottom", ax, kx), ("left", ay, ky)):
            self.heat_plot.getAxis(side).setTicks([self._ticks(a, k)])
            self.heat_plot.setLabel(side, html(self._axis_title(a, units)), **LABEL_STYLE)

    def _ticks(self, a: int, k: int) -> list[tuple[float, str]]:
        x = self._axis_x(a)
        step = max(1, math.ceil(k / TICK_LABELS_MAX))
        return [(float(i), f"{x[i]:g}") for i in range(0, k, step)]

    # ----- asking for a point -----------------------------------------------------------
    @Slot()
    def _on_show_worst(self) -> None:
        i = self.worst()
        if i is not None:
            self.point_requested.emit(i)

    @Slot(QModelIndex)
    def _on_double_click(self, index: QModelIndex) -> None:
        if self.result is not None and index.isValid():
            self.point_requested.emit(self.points.point(index.row()))
