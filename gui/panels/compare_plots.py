"""The Compare dock's plots: one quantity of runs A and B, and B - A below.

A quantity (joint angles, rates, torques / forces, energy) for all joints or one, A
solid and B dashed in the joints' colours (`gui.look.colors`), and below it the
difference B - A on the same (linked) time axis. All joints of an arm with both kinds:
the prismatic ones on a right axis (m, N), as in the Results plots.

A model with joints of several degrees of freedom (a floating base, a spherical or
universal joint) is compared on its joints of one value, as the Plots dock draws them
(their value is one column of q, their rate one of qd and tau), and on its energy; the
legend names the joints left out (their motion: the Plots dock's base plots).
"""
from __future__ import annotations

import math
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from armdyn.core import Mechanism, Robot
from armdyn.core.sim.trajectory import Trajectory

from ..look.colors import joint_color
from ..look.next_turn import NextTurn
from ..plots.plots_panel import (CURSOR_COLOR, DASHED_WIDTH, ENERGY_STYLE, GLYPH,
                                 LABEL_STYLE, LINE_WIDTH, SPECS, PlotSpec, add_right_view,
                                 adopt_menus, align_axis_widths, fit_axis_title, lay_axes_under,
                                 time_plot_pair)

__all__ = ["ComparePlots", "QUANTITIES"]

#: The quantities offered (`gui.plots.plots_panel.SPECS` by field).
QUANTITIES = ("q", "qd", "tau", "energy")
#: The right margin of the plots when no prismatic joint takes a right axis: room for
#: the time axis's last label, px.
RIGHT_MARGIN = 18
#: B's dashed curves are LINE_WIDTH wide up to this many samples, then DASHED_WIDTH.
DASHED_WIDE_MAX = 20_000


def _spec(field: str) -> PlotSpec:
    return next(s for s in SPECS if s.field == field)


def _unit_of(label: str) -> str:
    """The "(unit)" of an axis label such as "angle (°)"; "" for a label of two kinds
    ("angle (°); displacement (m)") or none."""
    return label[label.find("("):] if "(" in label and ";" not in label else ""


def _display_scale(spec: PlotSpec, model) -> np.ndarray:
    """(n,) factor from SI to the shown units: degrees for revolute joints where the
    plot shows angles."""
    return np.where(model.is_revolute, 180.0 / math.pi if spec.to_deg else 1.0, 1.0)


def one_value_joints(model) -> list[int]:
    """The joints (0-based) a comparison plots: those of one value (revolute, prismatic)."""
    return [j for j, kind in enumerate(model.joint_types) if kind.is_dh]


def joint_columns(model, field: str) -> np.ndarray:
    """(n,) the column of each joint in a run's `field` ("q": its value in q; "qd",
    "tau": its rate), -1 for a joint of several degrees of freedom (not plotted)."""
    out = np.full(model.n, -1, dtype=int)
    for j in one_value_joints(model):
        out[j] = (model.values_of([j]) if field == "q" else model.rates_of([j]))[0]
    return out


def left_out(model) -> str:
    """The joints a comparison does not plot, named ("1 satellite (free)"), or ""."""
    kinds = model.joint_types
    return ", ".join(f"{j + 1} {name} ({kinds[j].value})"
                     for j, name in enumerate(model.link_names) if not kinds[j].is_dh)


class ComparePlots(QWidget):
    """The choosers, the legend, the plot (``plot``) and the difference plot
    (``diff_plot``) of a comparison. `show_result` gives it the runs; `set_model` the
    window's model (the joints' names before a comparison)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model: Robot | Mechanism | None = None  # the window's
        self.model_a: Robot | Mechanism | None = None
        self.model_b: Robot | Mechanism | None = None
        self.result: tuple[Trajectory, Trajectory] | None = None
        self._build()

    def _build(self) -> None:
        self._quantity = QComboBox()
        for field in QUANTITIES:
            spec = _spec(field)
            self._quantity.addItem(spec.title, field)
        self._quantity.setCurrentIndex(QUANTITIES.index("tau"))
        self._quantity.currentIndexChanged.connect(self._on_quantity)
        self._joint = QComboBox()
        self._joint.setMinimumContentsLength(14)
        self._joint.currentIndexChanged.connect(self.redraw)
        self._legend = QLabel()
        self._legend.setTextFormat(Qt.TextFormat.RichText)
        self._legend.setWordWrap(True)
        choose = QHBoxLayout()
        choose.setContentsMargins(6, 2, 6, 0)
        choose.addWidget(QLabel("Show:"))
        choose.addWidget(self._quantity)
        choose.addWidget(self._joint)
        choose.addStretch(1)
        self._legend.setContentsMargins(6, 0, 6, 0)

        self._graphics = pg.GraphicsLayoutWidget()
        self.plot, self.diff_plot = time_plot_pair(self._graphics)
        self._right: dict[pg.PlotItem, pg.ViewBox] = {}  # each plot's prismatic view
        self._align_timer = NextTurn(self, self.align_axes)  # widths as the labels need
        for item in (self.plot, self.diff_plot):
            item.showGrid(x=True, y=True, alpha=0.25)
            item.setMenuEnabled(False)
            adopt_menus(item, self)
            item.hideButtons()
            item.getAxis("left").setWidth(66)
            # all joints of an arm with both kinds: prismatic ones (m, N) on the right
            self._right[item] = add_right_view(item)
            for name in ("left", "bottom", "right"):
                axis = item.getAxis(name)
                axis.enableAutoSIPrefix(False)
                axis.setPen(pg.mkPen("#000", width=1))
                axis.setTextPen("#000")
            # the right axis is always there: a prismatic joint's values, or a margin
            item.getAxis("right").setStyle(showValues=False)
            item.getAxis("right").showLabel(False)
            lay_axes_under(item, (item.vb, self._right[item]))
            item.vb.disableAutoRange(axis=pg.ViewBox.XAxis)
            for view in (item.vb, self._right[item]):
                view.sigYRangeChanged.connect(self._align_timer.request)
            item.vb.sigResized.connect(self._align_timer.request)
        self._labels = {"left": ("", ""), "right": ("", "")}  # full titles: upper, lower
        # one time axis: the difference plot follows the upper plot's time range (one way;
        # neither auto-ranges in time, see gui.plots.plots_panel on views that correct each other)
        self.diff_plot.setXLink(self.plot)
        self.plot.getAxis("bottom").setStyle(showValues=False)
        self.diff_plot.setLabel("bottom", "time (s)", **LABEL_STYLE)
        self._zero = pg.InfiniteLine(pos=0.0, angle=0, movable=False,
                                     pen=pg.mkPen("#888", width=1))
        self.diff_plot.addItem(self._zero, ignoreBounds=True)
        self._cursors = []
        for item in (self.plot, self.diff_plot):
            line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(CURSOR_COLOR, width=2))
            line.setVisible(False)
            item.addItem(line, ignoreBounds=True)
            self._cursors.append(line)
        self._curves_a: list[pg.PlotDataItem] = []
        self._curves_b: list[pg.PlotDataItem] = []
        self._curves_d: list[pg.PlotDataItem] = []

        rcol = QVBoxLayout(self)
        rcol.setContentsMargins(0, 0, 0, 0)
        rcol.setSpacing(2)
        rcol.addLayout(choose)
        rcol.addWidget(self._legend)
        rcol.addWidget(self._graphics, 1)

    # ----- what is shown --------------------------------------------------------------
    def set_model(self, model: Robot | Mechanism) -> None:
        """The window's model (names and joint kinds until a comparison has run)."""
        self._model = model

    def show_result(self, result: tuple[Trajectory, Trajectory] | None,
                    model_a: Robot | Mechanism | None = None,
                    model_b: Robot | Mechanism | None = None,
                    duration: float = 0.0) -> None:
        """Show runs (A, B) of models A and B (None: nothing), the time axis over A's
        samples (or `duration` s without any)."""
        self.result = result
        if result is None:
            self.redraw()
            return
        self.model_a, self.model_b = model_a, model_b
        self._fill_joint_chooser()
        a = result[0]
        span = float(a.t[-1]) if len(a) else duration
        self.plot.setXRange(0.0, max(span, 1e-6), padding=0.0)
        self.redraw()

    def set_cursor(self, t: float) -> None:
        """The time cursor of both plots at t, s."""
        for line in self._cursors:
            line.setValue(float(t))
            line.setVisible(True)

    def quantity(self) -> str:
        """The field shown: "q", "qd", "tau" or "energy"."""
        return self._quantity.currentData()

    def set_quantity(self, field: str) -> None:
        self._quantity.setCurrentIndex(QUANTITIES.index(field))

    def set_joint(self, index: int | None) -> None:
        """Show one joint (0-based; one energy for "energy") or all (None)."""
        k = self._joint.findData(index)
        self._joint.setCurrentIndex(max(k, 0))

    def series(self) -> tuple[np.ndarray, list[tuple[int, np.ndarray, np.ndarray]]]:
        """What the plots show, in display units: (t (S,), [(colour index, A (S,), B (S,))])
        over the samples both runs have. Energy: the colour index is the energy's."""
        if self.result is None:
            return np.zeros(0), []
        a, b = self.result
        rows = min(len(a), len(b)) if len(b) else len(a)
        field = self.quantity()
        spec = _spec(field)
        ya = np.asarray(getattr(a, field), dtype=float)[:rows]
        yb = np.asarray(getattr(b, field), dtype=float)[:rows] if len(b) else None
        if field == "energy":
            columns = list(range(ya.shape[1]))
            at_a = at_b = np.arange(ya.shape[1])
        else:  # a joint's column (its value or its rate), in display units
            at_a = joint_columns(self.model_a, field)
            at_b = joint_columns(self.model_b, field) if self.model_b is not None else at_a
            scale_a = _display_scale(spec, self.model_a)
            scale_b = _display_scale(spec, self.model_b) if self.model_b is not None \
                else scale_a
            columns = one_value_joints(self.model_a)
        chosen = self._joint.currentData()
        if chosen is not None:
            columns = [chosen]
        out = []
        for k in columns:
            col_a = ya[:, at_a[k]]
            has_b = yb is not None and k < len(at_b) and at_b[k] >= 0
            col_b = yb[:, at_b[k]] if has_b else np.full(rows, np.nan)
            if field != "energy":
                col_a = col_a * scale_a[k]
                col_b = col_b * scale_b[k] if has_b else col_b
            out.append((k, col_a, col_b))
        return a.t[:rows], out

    def difference(self) -> tuple[np.ndarray, np.ndarray]:
        """The difference plot's data: t (S,), B - A (S, curves), display units."""
        t, series = self.series()
        if not series:
            return t, np.zeros((t.size, 0))
        return t, np.column_stack([b - a for _k, a, b in series])

    def legend_text(self) -> str:
        """The legend as plain text ("A: ...  B: ...", then the curves' names)."""
        return QTextDocumentFragment.fromHtml(self._legend.text()).toPlainText()

    # ----- drawing --------------------------------------------------------------------
    def _fill_joint_chooser(self) -> None:
        keep = self._joint.currentIndex()
        self._joint.blockSignals(True)
        self._joint.clear()
        if self.quantity() == "energy":
            self._joint.addItem("All energies", None)
            for k, (name, _colour, _dash) in enumerate(ENERGY_STYLE):
                self._joint.addItem(name, k)
        else:
            model = self.model_a or self._model
            self._joint.addItem("All joints", None)
            for i in one_value_joints(model):
                self._joint.addItem(f"{i + 1} {model.link_names[i]}", i)
        self._joint.setCurrentIndex(keep if 0 <= keep < self._joint.count() else 0)
        self._joint.blockSignals(False)

    @Slot()
    def _on_quantity(self) -> None:
        self._joint.blockSignals(True)
        self._joint.setCurrentIndex(0)
        self._joint.blockSignals(False)
        self._fill_joint_chooser()
        self.redraw()

    @Slot()
    def redraw(self) -> None:
        for curve in self._curves_a + self._curves_b + self._curves_d:
            curve.getViewBox().removeItem(curve)
        self._curves_a, self._curves_b, self._curves_d = [], [], []
        field = self.quantity()
        spec = _spec(field)
        t, series = self.series()
        energy = field == "energy"
        right = self._right_joints(series, energy)
        for k, ya, yb in series:
            colour = ENERGY_STYLE[k][1] if energy else joint_color(k)
            upper, lower = ((self._right[self.plot], self._right[self.diff_plot]) if k in right
                            else (self.plot, self.diff_plot))
            self._curves_a.append(self._curve(upper, t, ya, colour))
            self._curves_b.append(self._curve(upper, t, yb, colour, Qt.PenStyle.DashLine))
            self._curves_d.append(self._curve(lower, t, yb - ya, colour))
        for item in (self.plot, self.diff_plot):
            item.vb.enableAutoRange(axis=pg.ViewBox.YAxis)
            self._right[item].enableAutoRange(axis=pg.ViewBox.YAxis)
            axis = item.getAxis("right")
            axis.setStyle(showValues=bool(right))
            axis.showLabel(bool(right))
        label = spec.left if right else self._axis_label(spec)
        self._labels["left"] = (label, f"B \u2212 A {_unit_of(label)}".strip())
        self._labels["right"] = ((spec.right, f"B \u2212 A {_unit_of(spec.right)}".strip())
                                 if right else ("", ""))
        for item, k in ((self.plot, 0), (self.diff_plot, 1)):
            for side in ("left", "right"):
                if self._labels[side][k]:
                    item.setLabel(side, self._labels[side][k], **LABEL_STYLE)
        self._legend.setText(self._legend_html(series, energy))
        self.align_axes()

    @Slot()
    def align_axes(self) -> None:
        """One left and one right axis width for both plots (as their labels need), a
        right margin for the time axis's last label when no prismatic joint takes the
        right axis, and axis titles that fit the plots' heights (`fit_axis_title`): the
        two plots share a time axis."""
        self._align_timer.stop()
        items = (self.plot, self.diff_plot)
        align_axis_widths(items, right_minimum=RIGHT_MARGIN)
        for item, k in ((self.plot, 0), (self.diff_plot, 1)):
            item.layout.activate()
            for side in ("left", "right"):  # the difference's title keeps "B - A"
                fit_axis_title(item, side, self._labels[side][k], LABEL_STYLE,
                               "B \u2212 A" if k == 1 else None)

    def _right_joints(self, series, energy: bool) -> set[int]:
        """The joints drawn on the right axis: the prismatic ones, when the curves show
        revolute and prismatic joints together (one kind alone takes the left axis)."""
        if energy:
            return set()
        revolute = (self.model_a or self._model).is_revolute
        shown = [k for k, _a, _b in series]
        prismatic = {k for k in shown if not revolute[k]}
        return prismatic if len(prismatic) < len(shown) else set()

    @staticmethod
    def _curve(item: pg.PlotItem | pg.ViewBox, t: np.ndarray, y: np.ndarray, colour: str,
               style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> pg.PlotDataItem:
        """A curve downsampled to the screen (a min and a max per pixel column), so that
        B's dashes can be LINE_WIDTH wide on a long run (see gui.plots.plots_panel on
        dashed speed)."""
        many = t.size > DASHED_WIDE_MAX
        width = DASHED_WIDTH if style != Qt.PenStyle.SolidLine and many else LINE_WIDTH
        curve = pg.PlotDataItem(t, y, pen=pg.mkPen(colour, width=width, style=style))
        curve.setDownsampling(auto=True, method="peak")
        curve.setSkipFiniteCheck(True)
        item.addItem(curve)
        return curve

    def _axis_label(self, spec: PlotSpec) -> str:
        if spec.field == "energy":
            return spec.left
        model = self.model_a or self._model
        chosen = self._joint.currentData()
        revolute = model.is_revolute[one_value_joints(model) if chosen is None else [chosen]]
        if np.all(revolute):
            return spec.left
        if not np.any(revolute):
            return spec.right
        return f"{spec.left}; {spec.right}"

    def _legend_html(self, series, energy: bool) -> str:
        a_name = (self.model_a or self._model).name
        b_name = self.model_b.name if self.model_b is not None else "(not run yet)"
        parts = [f"<span style='color:#333'>{GLYPH[Qt.PenStyle.SolidLine]}</span> "
                 f"<b>A:</b> {escape(a_name)}",
                 f"<span style='color:#333'>{GLYPH[Qt.PenStyle.DashLine]}</span> "
                 f"<b>B:</b> {escape(b_name)}"]
        names = [n for n, _c, _d in ENERGY_STYLE] if energy else \
            [f"{i + 1} {n}" for i, n in enumerate((self.model_a or self._model).link_names)]
        keys = [f"<span style='color:{ENERGY_STYLE[k][1] if energy else joint_color(k)}'>"
                f"\u25a0</span>&nbsp;{escape(names[k])}" for k, _a, _b in series]
        missing = "" if energy else left_out(self.model_a or self._model)
        note = (f"<br><span style='color:#555'>Not plotted here: {escape(missing)}; see "
                "the Plots dock's base plots</span>") if missing else ""
        return ("&nbsp;&nbsp;&nbsp;".join(parts) + "<br>" + "&nbsp;&nbsp; ".join(keys)
                + note)
