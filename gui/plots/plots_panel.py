"""Result plots: joint values, rates, torques and energy against time (pyqtgraph).

A floating system (a free joint) adds three: its first free body's position and its
orientation as roll, pitch, yaw, and the whole system's momentum (angular about the mass
centre on the left axis, linear on the right), which a floating run records; its joint
plots show the joints of one value (revolute, prismatic).

Four plots with linked time axes, in a 2 x 2 grid when the panel is wide
(GRID_MIN_WIDTH) and three or four are shown, else in one column. A mechanism
with loops adds two: the cut-joint forces (one curve per closure row, coloured
by loop) and the loop residual on a log axis; its torque plot shows the
actuated joints only (the passive joints carry no actuator). Curves are
built once per robot and given their samples from a ~30 Hz timer while
chunks stream in. Revolute joints use the left axis (deg, deg/s, N m);
prismatic joints, drawn dashed, use a right axis (m, m/s, N). Each plot's
legend sits to the right of its plot area (never over the curves; the "Legend"
button hides them all) and doubles as the read-out of the values at the mouse
time; it takes more columns and then only the joint numbers when the plot is
low. A left click or drag in a plot scrubs (``time_picked``); the wheel zooms,
right-drag scales, middle-drag pans.

Each column of plots shares one left-axis width, one right-axis width and one legend
width, each as wide as the column's widest labels need (`PlotsPanel.align_axes`): a time
is one vertical line through the column. The time axis labels both ends of its range
(`TimeAxis`). With "Clip spikes" a finished run's plot whose samples spike far beyond
the rest shows the others' range, marks the clipped samples and says why
(`gui.plots.spikes`, `spike_reason`).

Speed (issue #8): during a run the time axes stay at [0, duration]
(`set_run_duration`), so a refresh does not move the axes, and a finished run's
axes are set at once, not auto-ranged while painting; curves are light
`gui.plots.curves.SampleCurve` items downsampled to the screen (a min and a max per pixel
column); streamed chunks are appended to growing buffers and only the shown plots
are redrawn, at most every REFRESH_MS (hidden plots are marked stale and redrawn
when shown); while a run streams in, a refresh repaints only the strip of each plot
its new samples fall in (`SampleCurve.set_streaming`); a finished run that is already
on the plots is not drawn again; moving the time cursor moves one line per plot, and
the curves stroke only their points under the strips repainted (`StripView`). Dashed curves
are drawn 1 px wide: Qt strokes a wider dashed polyline about 50 times slower.
"""
from __future__ import annotations

import math
import mmap
from dataclasses import dataclass
from html import escape
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters as pg_exporters
from PySide6.QtCore import (QBuffer, QByteArray, QIODevice, QPointF, QRectF, QSize, Qt, QTimer,
                            Signal, Slot)
from PySide6.QtGui import (QCloseEvent, QColor, QFont, QFontMetricsF, QPainter, QPen,
                           QPixmapCache)
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QGraphicsItem, QGraphicsTextItem, QLabel, QToolButton, QVBoxLayout,
    QWidget, QWidgetAction,
)

from armdyn.core import JointType, Mechanism, Robot, gear_ratios
from armdyn.core.algorithms.loops import constraint_row_labels, constraint_row_units
from armdyn.core.io.atomic import write_atomically
from armdyn.core.sim.trajectory import Trajectory, sample_count
from ..look.colors import joint_color
from ..look.flow import FlowLayout
from ..look.text import shown_name
from ..look.images import encode_image
from armdyn.core.model.rotations import quaternion_rpy_angles
from .curves import SampleCurve, StripView
from .spikes import spike_range
from ..look.next_turn import NextTurn
from ..look.scroll import scroll_area

#: Refresh period of streamed curves and of the hover read-out, ms (~30 Hz).
REFRESH_MS = 33
#: A run's last chunk is drawn by `set_trajectory`, which follows it at once; if none
#: comes within this long, the chunk is drawn anyway, ms.
LAST_CHUNK_WAIT_MS = 250
LINE_WIDTH = 2
#: A run of at most this many samples has its plots' buffers made whole at its start
#: (`_Series.reserve`); a longer one grows them as its samples come.
RESERVED_SAMPLES_MAX = 1_000_000
DASHED_WIDTH = 1  # px; see the module docstring
#: Bins per pixel column of the curves' "peak" downsampling (gui.plots.curves): 1, each
#: column draws its samples' min and max (pyqtgraph's auto-downsampling keeps 5).
DOWNSAMPLE_FACTOR = 1.0
#: Plots with at most this many curves keep each curve (and every axis with its grid)
#: as a pixmap on the screen, so moving the time cursor repaints a strip from pixmaps.
#: 16 takes in the humanoid's 15 joints: at 12 its playback drew every curve at every
#: frame, 7 frames/s against 23 at 16 (issue #20); its pixmaps at 1600x1000 fit
#: in PIXMAP_CACHE_KB (tests/gui/test_curve_cache.py).
CACHED_CURVES_MAX = 16
#: Qt's pixmap cache holds those pixmaps (its default is 10 MB), KiB.
PIXMAP_CACHE_KB = 64 * 1024
FONT_PT = 11
LEGEND_PT = 10
LABEL_STYLE = {"font-size": "11pt", "color": "#000"}
TITLE_SIZE = "12pt"
TITLE_HEIGHT = 22  # px (pyqtgraph reserves 30)
#: Left and right axes are as wide as their tick labels and title need (`align_axes`,
#: the same for every plot of a column), at least this, px (times the font scale).
AXIS_WIDTH = 44
NO_RIGHT_AXIS_WIDTH = 10  # px, right margin when the robot has no prismatic joint
#: Axis widths move in steps of this many px: a label a digit longer does not move the
#: plot area at every zoom.
AXIS_WIDTH_STEP = 6
MIN_PLOT_HEIGHT = 130  # px; below this the panel scrolls instead of squeezing
GRID_MIN_WIDTH = 760  # px; a panel at least this wide shows 3 or 4 plots in 2 columns
#: The legend (right of the plot area) may take at most this share of its plot's width
#: and the plot area's height; beyond it, it takes more columns, then shows only the
#: joint numbers.
LEGEND_MAX_SHARE = (0.4, 1.0)
#: The same for a legend below its plot (`PlotsPanel.set_legends_below`): the plot's
#: width, this share of its height.
LEGEND_BELOW_MAX_SHARE = (1.0, 0.3)
#: A legend lists at most this many curves (then "+ k more"): 200 joints would
#: need a column of their own.
LEGEND_MAX_ENTRIES = 24
EXPORT_PLOT_HEIGHT = 380  # px, height of each plot laid out for export (then scaled)
CURSOR_COLOR = "#B00020"
GLYPH = {Qt.SolidLine: "\u2501\u2501\u2501", Qt.DashLine: "\u254d\u254d\u254d",
         Qt.DashDotLine: "\u2501\u00b7\u2501"}
ENERGY_STYLE = (  # name, colour, dash
    ("kinetic", "#D55E00", Qt.DashLine),
    ("potential", "#0072B2", Qt.DashDotLine),
    ("total", "#000000", Qt.SolidLine),
)


@dataclass(frozen=True)
class PlotSpec:
    """What one plot shows: a Trajectory field and its display units."""

    key: str          # file name stem of exports, and the name in set_visible_plots
    title: str
    button: str       # its show / hide button
    field: str        # Trajectory attribute: q, qd, tau, energy
    left: str         # left axis label (revolute joints)
    right: str        # right axis label (prismatic joints)
    unit_r: str       # read-out unit, revolute
    unit_p: str       # read-out unit, prismatic
    to_deg: bool      # revolute values shown in degrees


SPECS = (
    PlotSpec("joint_angles", "Joint angles", "Angles", "q", "angle (\u00b0)",
             "prismatic (m)", "\u00b0", " m", True),
    PlotSpec("joint_rates", "Joint rates", "Rates", "qd", "rate (\u00b0/s)",
             "prismatic (m/s)", " \u00b0/s", " m/s", True),
    PlotSpec("joint_torques", "Joint torques / forces", "Torques / forces", "tau", "torque (N m)",
             "prismatic (N)", " N m", " N", False),
    # a geared model's (GEARED_PLOTS): each joint torque divided by its gear ratio
    PlotSpec("motor_torques", "Motor torques / forces (joint \u00f7 gear ratio)", "Motor",
             "tau", "motor torque (N m)", "prismatic (N)", " N m", " N", False),
    PlotSpec("energy", "Energy", "Energy", "energy", "energy (J)", "", " J", " J", False),
    PlotSpec("cut_forces", "Cut-joint forces", "Cut forces", "cut_forces",
             "force (N, N m)", "", " N", " N m", False),
    PlotSpec("loop_residual", "Loop residual", "Residual", "loop_residual",
             "|\u03a6| (m, rad)", "", "", "", False),
)
#: A floating system's plots (`FLOATING_PLOTS`): its first free body's position and
#: orientation, and the whole system's momentum.
FLOATING_SPECS = (
    PlotSpec("base_position", "Base position", "Base x, y, z", "q", "position (m)", "",
             " m", " m", False),
    PlotSpec("base_orientation", "Base orientation", "Base angles", "q",
             "angle (\u00b0)", "", "\u00b0", "\u00b0", True),
    PlotSpec("momentum", "Momentum", "Momentum",
             "momentum", "L (kg m\u00b2/s)", "p (kg m/s)", " kg m\u00b2/s", " kg m/s",
             False),
)
SPECS = SPECS + FLOATING_SPECS
#: The plots that only a mechanism with loops has.
LOOP_PLOTS = ("cut_forces", "loop_residual")
#: The plots that only a model with a gear (a ratio other than 1) has: the motor side of
#: the joint torques, tau / r (`core.motor_torques`).
GEARED_PLOTS = ("motor_torques",)
#: The plots that only a floating system (a free joint) has.
FLOATING_PLOTS = tuple(spec.key for spec in FLOATING_SPECS)
#: The plots only some models offer (`_offered`): made for the first such model.
OPTIONAL_PLOTS = LOOP_PLOTS + FLOATING_PLOTS + GEARED_PLOTS
#: What a floating system shows first (the others are a click away).
FLOATING_DEFAULT_PLOTS = ("joint_angles", "base_position", "base_orientation", "momentum")
_XYZ = ("x", "y", "z")
_RPY = ("roll", "pitch", "yaw")
#: What a mechanism with loops shows first (the others are a click away).
MECHANISM_DEFAULT_PLOTS = ("joint_angles", "joint_torques", "cut_forces", "loop_residual")
#: What a floating mechanism with loops (a vehicle) shows first: the actuated joints'
#: torques, the base's motion that follows, and the loops' closure.
FLOATING_MECHANISM_DEFAULT_PLOTS = ("joint_torques", "base_position", "base_orientation",
                                    "loop_residual")
#: The smallest y span of a linear plot's left axis (deg, deg/s, N m, J, N) and of its
#: right axis for prismatic joints (m, m/s, N): a flat curve stays flat, with short ticks.
MIN_Y_SPAN = 0.1
MIN_Y_SPAN_PRISMATIC = 1e-3
#: A finished run's y axes: the samples' span and this share of it above and below.
FIT_MARGIN = 0.05
#: Shortest time axis, s (a run of one sample).
MIN_TIME_SPAN = 1e-3
#: The triangles marking samples beyond a clipped plot's range, px.
SPIKE_MARK_PX = 9
#: Values below this are drawn at it on the residual's log axis (a closed loop gives 0).
LOG_FLOOR = 1e-18
_DASHES = (Qt.SolidLine, Qt.DashLine, Qt.DashDotLine)
#: x, y, z (and roll, pitch, yaw) in the 3D view's axis colours, darker for white paper.
_AXIS_COLORS = ("#C62828", "#2E7D32", "#1565C0")


class _ScrubViewBox(pg.ViewBox):
    """A ViewBox where a left click or left drag reports the time under the mouse.

    An item added with ``ignoreBounds`` (the time cursor, the hover line, spike marks)
    that moves does not repaint the whole view: pyqtgraph's ViewBox repaints itself,
    hence every curve, at any child's move while an axis auto-ranges, and the cursor
    moving at each playback frame redrew the human's 39 angle curves (issue #23)."""

    sigScrub = Signal(float)

    def itemBoundsChanged(self, item) -> None:  # noqa: N802 - pyqtgraph's name
        if item in self.addedItems:
            super().itemBoundsChanged(item)

    def mouseClickEvent(self, ev) -> None:  # noqa: N802 - pyqtgraph override
        if ev.button() == Qt.LeftButton:
            ev.accept()
            self.sigScrub.emit(float(self.mapSceneToView(ev.scenePos()).x()))
        else:
            super().mouseClickEvent(ev)

    def mouseDragEvent(self, ev, axis=None) -> None:  # noqa: N802 - pyqtgraph override
        if ev.button() == Qt.LeftButton and axis is None:
            ev.accept()
            self.sigScrub.emit(float(self.mapSceneToView(ev.scenePos()).x()))
        else:
            super().mouseDragEvent(ev, axis)


def small_pages(shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float64 array of `shape` in ordinary (4 KB) pages: an anonymous
    memory map, advised against huge pages.

    NumPy asks Linux for huge (2 MB) pages for every array of 4 MB or more, and a page
    is cleared when first written. A series' buffer (m, cap) is written a few columns
    at a time, along all its m rows at once: its first append wrote into every huge
    page of it, clearing the whole buffer (the human's plots: about 100 MB, 100 ms of
    the GUI thread at a run's start, issue #23); in small pages each append clears only
    what it writes."""
    count = math.prod(shape)
    memory = mmap.mmap(-1, max(8 * count, mmap.PAGESIZE))
    if hasattr(mmap, "MADV_NOHUGEPAGE"):  # (a system that gives huge pages to all)
        memory.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(memory, dtype=np.float64, count=count).reshape(shape)


class _Series:
    """Growing buffer of displayed values: t (cap,), y (m, cap); amortised O(1) append."""

    def __init__(self, m: int) -> None:
        self.size = 0
        self.t = np.empty(256)
        self.y = np.empty((m, 256))

    def reserve(self, samples: int) -> None:
        """Room for `samples` samples in all, so that appends up to there copy nothing
        (a run's length is known at its start: growing the human's 600 s buffers by
        doubling stalled the GUI thread for 0.5-0.9 s, issue #23)."""
        if samples > self.t.shape[0]:
            grown_t = np.empty(samples)
            grown_t[:self.size] = self.t[:self.size]
            grown_y = small_pages((self.y.shape[0], samples))
            grown_y[:, :self.size] = self.y[:, :self.size]
            self.t, self.y = grown_t, grown_y

    def append(self, t: np.ndarray, y: np.ndarray) -> None:
        """t (k,) s, y (k, m) in display units."""
        need = self.size + t.shape[0]
        if need > self.t.shape[0]:
            self.reserve(max(need, 2 * self.t.shape[0]))
        self.t[self.size:need] = t
        self.y[:, self.size:need] = y.T
        self.size = need

    def value_at(self, time: float) -> np.ndarray:
        """Values linearly interpolated at `time` (s), (m,)."""
        t = self.t[:self.size]
        return np.array([np.interp(time, t, row[:self.size]) for row in self.y])


@dataclass(frozen=True)
class _Entry:
    name: str
    color: str
    style: Qt.PenStyle
    unit: str
    idle: str  # shown in the value column when there is no read-out
    short: str  # the name when the plot is small (the joint number)


class _Legend(pg.GraphicsWidget):
    """A boxed HTML table beside the plot area: line sample, name, value.

    It sits in its PlotItem's layout to the right of the axes (so it never covers
    a curve, and exports carry it). `fit(width, height)` (the PlotItem's width, the
    plot area's height) picks the first layout that takes at most LEGEND_MAX_SHARE
    of it: one column of full names, more columns, then joint numbers only. Its
    width leaves room for read-out values, so hovering never moves the plot.
    """

    #: its natural width changed (the panel aligns its column again)
    width_changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._reserved = 0.0  # layout width asked for by `reserve` (the column's widest)
        self._text = QGraphicsTextItem(self)
        font = QFont()
        font.setPointSize(LEGEND_PT)
        self._text.setFont(font)
        self._text.setPos(3, 1)
        self._given: list[_Entry] = []  # all the plot's curves
        self.entries: list[_Entry] = []  # those listed (as many as fit, at most LEGEND_MAX_ENTRIES)
        self._more = 0  # entries left out ("+ k more")
        self._room = (1e6, 1e6)
        self._layout = (1, False)  # columns, short names
        self._width = 0.0
        self._shown = True
        self.below = False  # under the plot (a narrow, tall panel) instead of beside it
        #: natural (width, height) by (layout, with read-out room, entries listed), for
        #: this font: each fit to a new room tries the layouts again, and laying out the
        #: HTML costs ~3 ms (a 200-link robot's window fitted its legends ~350 times)
        self._sizes: dict[tuple[tuple[int, bool], bool, int], tuple[float, float]] = {}

    def set_entries(self, entries: list[_Entry]) -> None:
        self._given = list(entries)
        self._sizes.clear()
        self._relayout()

    def _list(self, count: int) -> None:
        """List the first `count` entries (the rest as "+ k more")."""
        self.entries = self._given[:count]
        self._more = len(self._given) - len(self.entries)

    def set_point_size(self, points: float) -> None:
        """The legend's font size, pt (LEGEND_PT normally)."""
        font = QFont(self._text.font())
        font.setPointSizeF(points)
        self._text.setFont(font)
        self._sizes.clear()
        self._relayout()

    def set_shown(self, shown: bool) -> None:
        """Show or hide the legend; hidden, it takes no room."""
        self._shown = shown
        self.setVisible(shown)
        self._relayout()

    def fit(self, width: float, height: float) -> None:
        """The PlotItem is `width` px wide, its plot area `height` px high: pick the
        legend's layout for them."""
        room = (40.0 * round(width / 40.0), 20.0 * round(height / 20.0))  # no relayout per px
        if room != self._room:
            self._room = room
            self._relayout()

    def _relayout(self) -> None:
        self._list(LEGEND_MAX_ENTRIES)
        n = len(self.entries)
        candidates = [(c, False) for c in (1, 2, 3) if c <= n]
        candidates += [(c, True) for c in (2, 3, 4, 6) if 1 < c <= n] or [(1, True)]
        shares = LEGEND_BELOW_MAX_SHARE if self.below else LEGEND_MAX_SHARE
        max_w, max_h = (share * room for share, room in zip(shares, self._room))
        long_values = np.full(n, -8888.88)
        # the first layout that fits with room for read-out values; in a small panel the
        # first that fits without it (a read-out then widens the legend while hovering);
        # else fewer entries (a legend beyond its share pushes the next plot out of the
        # view, one taller than its plot runs into the plot below)
        for values in (long_values, None):
            for layout in candidates:
                self._layout = layout
                w, h = self._natural_size(values)
                if w <= max_w and h <= max_h:
                    break
            else:
                continue
            break
        else:
            self._fewer_entries(max_w, max_h)
            values = None
        width = self._natural_size(values)[0] if self.entries else 0.0
        changed = width != self._width
        self._width = width
        self.show_values(None)
        if changed:
            self.width_changed.emit()

    def natural_width(self) -> float:
        """The width the legend's box takes when shown beside its plot, px (0: hidden)."""
        return self._width if self.entries and self._shown else 0.0

    def reserve(self, width: float) -> None:
        """Take at least `width` px in the plot's layout (the box keeps its own width):
        every plot of a column then has the same plot area (`PlotsPanel.align_axes`)."""
        if width != self._reserved:
            self._reserved = width
            self.show_values(None)

    def _fewer_entries(self, max_w: float, max_h: float) -> None:
        """No layout of all the entries fits in `max_w` x `max_h` px: list joint numbers
        in the most columns that fit in the width, and as many rows of them as fit in
        the height, then "+ k more". (Taking the room a layout needs pushed the plot
        beside it out of the view.)"""
        given = len(self._given)
        # the widths with a "+ k more" row: often wider than a column of joint numbers
        self._list(min(LEGEND_MAX_ENTRIES, max(1, given - 1)))
        n = len(self.entries)
        for columns in (6, 4, 3, 2, 1):
            self._layout = (max(1, min(columns, n)), True)
            if self._natural_size(None)[0] <= max_w:
                break
        if n == 0:
            return
        columns = self._layout[0]
        row_height = self._natural_size(None)[1] / (-(-n // columns) + bool(self._more))
        rows = int(max_h // row_height)  # about as many as fit
        count = max(1, min(n, (rows - 1) * columns))  # and a row for "+ k more"
        if given <= LEGEND_MAX_ENTRIES and -(-given // columns) <= -(-count // columns) + 1:
            count = given  # all of them in no more rows: no "+ k more"
        self._list(count)
        # (the row height was a mean: check, down to two rows, which take no less room
        # than one row of joints and "+ k more")
        while (-(-len(self.entries) // columns) + bool(self._more) > 2
               and self._natural_size(None)[1] > max_h):
            self._list(max(1, len(self.entries) - columns))  # one row fewer

    def _natural_size(self, values: np.ndarray | None) -> tuple[float, float]:
        """(width, height) of the legend in the current layout, with room for read-out
        `values` (placeholders) or without (None)."""
        key = (self._layout, values is not None, len(self.entries))
        if key not in self._sizes:
            self._text.setTextWidth(-1)
            self._text.setHtml(self._html(values))
            self._sizes[key] = (self._text.document().idealWidth() + 8,
                                self._text.boundingRect().height() + 2)
        return self._sizes[key]

    def show_values(self, values: np.ndarray | None) -> None:
        """The legend with read-out `values` (one per entry), or the plain one (None)."""
        self._text.setTextWidth(-1)
        self._text.setHtml(self._html(values))
        if self.entries and self._shown:
            width, height = self._width, self._text.boundingRect().height() + 2
            if not self.below:
                width = max(width, self._reserved)
        else:
            width = height = 0.0
        self.setMinimumSize(width, 0.0)
        self.setMaximumSize(width, height if self.below else max(height, 1e6 * bool(width)))
        self.setPreferredSize(width, height)
        self.update()

    def _html(self, values: np.ndarray | None) -> str:
        columns, short = self._layout
        cells = []
        for k, e in enumerate(self.entries):
            idle = "" if short else e.idle  # short: the dash tells prismatic joints
            value = idle if values is None else f"{values[k]:.4g}{e.unit}"
            gap = "&nbsp;&nbsp;&nbsp;" if k % columns else ""
            cells.append(f"<td style='color:{e.color}'>{gap}{GLYPH[e.style]}</td>"
                         f"<td>&nbsp;{escape(e.short if short else e.name)}</td>"
                         f"<td align='right'>{'&nbsp;' if value else ''}{escape(value)}</td>")
        rows = ["".join(cells[i:i + columns]) for i in range(0, len(cells), columns)]
        more = (f"<tr><td colspan='{3 * columns}'>+ {self._more} more</td></tr>"
                if self._more else "")
        return ("<table cellspacing='0' cellpadding='0'>"
                + "".join(f"<tr>{row}</tr>" for row in rows) + more + "</table>")

    def text(self) -> str:
        """The legend as plain text (what it shows)."""
        return self._text.toPlainText()

    def paint(self, p: QPainter, *args) -> None:
        if self.entries and self._shown:
            p.setPen(pg.mkPen("#aaa"))
            p.setBrush(pg.mkBrush("w"))
            p.drawRect(QRectF(0, 0, self._width, self._text.boundingRect().height() + 2)
                       .adjusted(0, 0, -1, -1))


#: A log axis labels at most one tick per this many pixels of its height.
LOG_LABEL_PX = 16
#: The plots' background, onto which `GridAxis` flattens its translucent grid lines.
BACKGROUND = "w"
#: The axes (with their grid lines) sit this far below the plot's views in z.
AXES_BELOW_VIEWS = 10


class GridAxis(pg.AxisItem):
    """An axis whose ticks and grid lines are drawn in opaque colours.

    pyqtgraph fades each tick level's lines with an alpha; Qt's raster engine (the
    software rendering of a remote or virtual display) draws translucent lines about
    30 times slower than opaque ones: an axis's 51 grid lines took 3.3 ms instead of
    0.1, and the four plots' grids 35 ms of every full repaint (issue #8). Each colour
    is composited onto the plots' background here, so the picture is the same.
    """

    def generateDrawSpecs(self, p: QPainter):  # noqa: N802 - pyqtgraph's name
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis_spec, tick_specs, text_specs = specs
        return (axis_spec, [(_opaque(pen), p1, p2) for pen, p1, p2 in tick_specs],
                _apart(text_specs))

    def needed_width(self) -> float:
        """The width (px) a left or right axis needs for its tick labels at its present
        range and height, its tick marks and its title: pyqtgraph's own sum
        (`AxisItem._updateWidth`), with the labels measured now rather than after a
        paint. A fixed width too small let "-10000" print over "force (N, N m)"."""
        text = 0.0
        lo, hi = sorted(float(v) for v in self.range)
        length = self.geometry().height()
        if self.style["showValues"] and length > 1 and np.isfinite([lo, hi]).all() and hi > lo:
            metrics = QFontMetricsF(self.style["tickFont"] or self.font())
            for spacing, values in self.tickValues(lo, hi, length):
                strings = self.tickStrings(list(values), self.autoSIPrefixScale * self.scale,
                                           spacing)
                text = max([text] + [metrics.horizontalAdvance(t) for t in strings if t])
        width = text + (self.style["tickTextOffset"][0] if self.style["showValues"] else 0)
        width += max(0, self.style["tickLength"])
        if self.label.isVisible():
            width += self.label.boundingRect().height() * 0.8
        return width


#: The least room between two tick labels side by side, px: labels that merely did not
#: overlap read as one number on a narrow time axis ("0.40.6").
LABEL_GAP = 4.0


def _apart(text_specs: list) -> list:
    """The tick labels that do not overlap one drawn before them, nor come within
    LABEL_GAP of it side by side (pyqtgraph draws the major level first): on a log axis
    the 2..9 x 10^k labels crowd near each decade, and a low plot printed them over each
    other."""
    kept: list = []
    for spec in text_specs:
        rect = spec[0].adjusted(-LABEL_GAP / 2, -1.0, LABEL_GAP / 2, 1.0)
        if not any(rect.intersects(other[0]) for other in kept):
            kept.append(spec)
    return kept


#: The time axis labels its two ends (t = 0 and t = T of a run); a label of another tick
#: closer than this to an end is left out, px.
END_LABEL_GAP = 36
#: How far a label at an end may stick out beside the time axis, px.
END_LABEL_OVERHANG = 30


class TimeAxis(GridAxis):
    """A time axis that labels both ends of its range (a run's t = 0 and t = T), with
    four significant digits; pyqtgraph leaves out the labels at the edges, so the
    start and end of a run were never read."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._ends: dict[float, float] = {}  # tick value -> the end it labels

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 - pyqtgraph's names
        levels = super().tickValues(minVal, maxVal, size)
        self._ends = {}
        if not levels or size <= 1 or not maxVal > minVal:
            return levels
        per_px = (maxVal - minVal) / size
        inset = 1e-9 * (maxVal - minVal)  # (exactly at an edge, rounding can drop a tick)
        self._ends = {minVal + inset: minVal, maxVal - inset: maxVal}

        def apart(v: float) -> bool:
            return all(abs(v - e) >= END_LABEL_GAP * per_px for e in (minVal, maxVal))

        spacing, values = levels[0]
        out = [(spacing, sorted([*self._ends, *(v for v in values if apart(v))]))]
        return out + [(s, [v for v in vals if apart(v)]) for s, vals in levels[1:]]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's name
        strings = super().tickStrings(values, scale, spacing)
        return [f"{self._ends[v] * scale:.4g}" if v in self._ends else text
                for v, text in zip(values, strings)]

    def boundingRect(self):  # noqa: N802 - Qt's name
        # room for the end labels beside the axis (with a grid pyqtgraph allows none)
        return super().boundingRect().adjusted(-END_LABEL_OVERHANG, 0, END_LABEL_OVERHANG, 0)


#: The opaque pens `_opaque` made, by colour, width, style and cosmetic flag (the axes
#: use a few, over and over).
_OPAQUE_PENS: dict[tuple, QPen] = {}


def _opaque(pen: QPen) -> QPen:
    """`pen` with its colour composited onto BACKGROUND (alpha 255)."""
    color = pen.color()
    if color.alpha() == 255:
        return pen
    key = (color.rgba(), pen.widthF(), pen.style(), pen.isCosmetic())
    if key not in _OPAQUE_PENS:
        alpha, ground = color.alphaF(), pg.mkColor(BACKGROUND)
        mixed = QColor.fromRgbF(*(alpha * c + (1.0 - alpha) * g for c, g in (
            (color.redF(), ground.redF()), (color.greenF(), ground.greenF()),
            (color.blueF(), ground.blueF()))))
        opaque = QPen(pen)
        opaque.setColor(mixed)
        _OPAQUE_PENS[key] = opaque
    return _OPAQUE_PENS[key]


class _LogAxis(GridAxis):
    """A log axis that always has labelled ticks.

    pyqtgraph labels powers of ten and 2..9 times them; a range inside one such
    step (a residual that stays near 3.3e-16) would get none. Then the axis takes
    the ordinary ticks of the exponent and labels them with enough digits. Labels are
    plain ASCII ("1e-16", "3e-16").
    """

    def logTickValues(self, minVal, maxVal, size, stdTicks):  # noqa: N802, N803
        ticks = super().logTickValues(minVal, maxVal, size, stdTicks)
        if sum(len(values) for _, values in ticks) >= 2:
            return ticks
        return [(spacing, values) for spacing, values in stdTicks if spacing < 1.0][:2]

    def logTickStrings(self, values, scale, spacing):  # noqa: N802
        numbers = 10.0 ** np.asarray(values, dtype=float) * scale
        if spacing is None or spacing >= 1.0:
            # plain "1e-16" (pyqtgraph writes superscript digits, which many fonts lack:
            # every label then read "1"); "6", not "6e0", between 0.001 and 10^4
            strings = [f"{v:.0e}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")
                       if not 1e-3 <= v < 1e4 else f"{v:.3g}" for v in numbers]
        else:
            for digits in range(2, 8):  # the fewest significant digits that tell them apart
                strings = [f"{v:.{digits}g}" for v in numbers]
                if len(set(strings)) == len(strings):
                    break
        # pyqtgraph labels every minor tick of a log axis (2..9 times a power of ten):
        # in a low plot they overprint; keep every k-th label, about one per LABEL_PX
        # (and `_apart` drops any that still overlap: they crowd near each decade)
        height = self.geometry().height()  # (0 before the axis is laid out: all labels)
        room = max(2, int(height // LOG_LABEL_PX))
        if height > 0 and len(strings) > room:
            step = -(-len(strings) // room)
            strings = [text if k % step == 0 else "" for k, text in enumerate(strings)]
        return strings


class _Plot:
    """One PlotItem: curves, legend (in the PlotItem's layout, for export), right axis,
    cursors. `stale` is True while the curves do not show the series yet; `fit_pending`
    while its y ranges wait to be fitted to a finished run (hidden: `fit_y_ranges`
    when shown)."""

    def __init__(self, spec: PlotSpec, on_scrub, owner: QWidget) -> None:
        self.spec = spec
        self.stale = False
        self.fit_pending = False
        self.font_scale = 1.0  # x the normal font sizes (`set_font_scale`)
        self.panel_columns = 1  # of the panel's layout: the plot's share of the view's width
        self._title = spec.title
        self.vb = _ScrubViewBox(enableMenu=False)
        self.vb.sigScrub.connect(on_scrub)
        axes = grid_axes(time=True)
        if spec.field == "loop_residual":
            axes["left"] = _LogAxis("left")
        self.item = pg.PlotItem(viewBox=self.vb, axisItems=axes)
        self.set_title(spec.title)
        self.item.showGrid(x=True, y=True, alpha=0.25)
        adopt_menus(self.item, owner)
        self.vb2 = add_right_view(self.item)  # prismatic joints
        if spec.field != "loop_residual":
            # a flat curve (a joint gravity cannot turn) shows as flat, not as its
            # rounding noise blown up to the whole height with ticks at 1e-15
            for vb in (self.vb, self.vb2):
                vb.setLimits(minYRange=self._least_span(vb))
        self.vb.sigResized.connect(self._fit_legend)
        self.item.geometryChanged.connect(self._fit_legend)
        font = QFont()
        font.setPointSize(FONT_PT)
        for name in ("left", "bottom", "right"):
            axis = self.item.getAxis(name)
            axis.enableAutoSIPrefix(False)
            axis.setPen(pg.mkPen("#000", width=1))
            axis.setTextPen("#000")
            axis.setTickFont(font)
            if name != "bottom":
                axis.setWidth(AXIS_WIDTH)  # until `align_axes` measures the labels
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        lay_axes_under(self.item, (self.vb, self.vb2))
        self.item.setLabel("bottom", "time (s)", **LABEL_STYLE)
        self.item.setLabel("left", spec.left, **LABEL_STYLE)
        self.legend = _Legend()
        self.item.layout.addItem(self.legend, 2, 3)  # right of the right axis
        self.item.layout.setAlignment(self.legend, Qt.AlignTop | Qt.AlignLeft)
        self._y_values = True  # the y axes show tick labels (`_show_y_values`)
        self._prismatic = False  # some curve is on the right view
        #: the views whose spikes `fit_y_ranges` clipped, and the marks it drew there
        self.spikes: dict[pg.ViewBox, object] = {}
        self.spike_marks: dict[pg.ViewBox, pg.ScatterPlotItem] = {}
        for view in (self.vb, self.vb2):
            marks = pg.ScatterPlotItem(pxMode=True)
            marks.setZValue(5)
            marks.setVisible(False)
            view.addItem(marks, ignoreBounds=True)
            self.spike_marks[view] = marks
        self.cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(CURSOR_COLOR, width=2))
        self.hover = pg.InfiniteLine(angle=90, movable=False,
                                     pen=pg.mkPen("#666", width=1, style=Qt.DashLine))
        for line in (self.cursor, self.hover):
            line.setVisible(False)
            self.item.addItem(line, ignoreBounds=True)
        self.curves: list[SampleCurve] = []
        self.series = _Series(0)
        self.scale = np.ones(0)
        self.columns: np.ndarray | None = None  # columns of the field shown (None: all)
        if spec.field == "loop_residual":
            self.item.setLogMode(x=False, y=True)

    @Slot()
    def _fit_legend(self) -> None:
        # below the plot: the PlotItem's height (the plot area's shrinks as the legend grows)
        height = self.item.geometry().height() if self.legend.below else self.vb.rect().height()
        width = self.item.geometry().width()
        view = self.item.getViewWidget()
        if view is not None:
            # its share of the view, not what a legend laid out for a larger room took;
            # if the layout outgrew the view, lay the scene out at the view's size again
            # once the legends have shrunk
            width = min(width, view.width() / self.panel_columns)
            layout = self.item.parentItem()
            if layout is not None and layout.geometry().width() > view.width() + 0.5:
                QTimer.singleShot(0, self.legend, lambda: view.setRange(
                    view.range, padding=0, disableAutoPixel=False))
        self.legend.fit(width, height)

    def set_legend_below(self, below: bool) -> None:
        """The legend under the time axis (True) or right of the plot (False)."""
        layout = self.item.layout
        layout.removeItem(self.legend)
        self.legend.below = below
        row, column = (4, 1) if below else (2, 3)
        layout.addItem(self.legend, row, column)
        layout.setAlignment(self.legend, Qt.AlignTop | (Qt.AlignHCenter if below else Qt.AlignLeft))
        self.legend.fit(1e6, 1e6)  # a new room: lay out again
        self._fit_legend()

    def set_time_axis_label(self, shown: bool) -> None:
        """Time axis values and label only under the plots of the bottom row (linked axes)."""
        axis = self.item.getAxis("bottom")
        axis.setStyle(showValues=shown)
        axis.showLabel(shown)

    def set_title(self, text: str) -> None:
        self._title = text
        size = float(TITLE_SIZE.removesuffix("pt")) * self.font_scale
        height = round(TITLE_HEIGHT * self.font_scale)
        self.item.setTitle(text, size=f"{size:.3g}pt", color="#000")
        self.item.layout.setRowFixedHeight(0, height)
        self.item.titleLabel.setMaximumHeight(height)

    def label_style(self) -> dict[str, str]:
        """LABEL_STYLE at this plot's font scale."""
        size = float(LABEL_STYLE["font-size"].removesuffix("pt")) * self.font_scale
        return {**LABEL_STYLE, "font-size": f"{size:.3g}pt"}

    def set_font_scale(self, scale: float) -> None:
        """Tick labels, axis labels, title and legend at `scale` x their normal size;
        the left axis and the title row grow with them."""
        self.font_scale = scale
        font = QFont()
        font.setPointSizeF(FONT_PT * scale)
        for name in ("left", "bottom", "right"):
            axis = self.item.getAxis(name)
            axis.setTickFont(font)
            shown = axis.label.isVisibleTo(axis)
            axis.setLabel(axis.labelText, **self.label_style())  # (setLabel shows it)
            axis.showLabel(shown)
        self.legend.set_point_size(LEGEND_PT * scale)
        self.set_title(self._title)

    def build(self, robot: Robot | None) -> None:
        """Create the curves once for `robot` (energy: 3 curves, joints: n curves)."""
        for curve in self.curves:
            curve.getViewBox().removeItem(curve)
        self.curves = []
        entries: list[_Entry] = []
        self.columns = None
        if robot is None or (self.spec.key in LOOP_PLOTS and not robot.loops) or (
                self.spec.key in FLOATING_PLOTS and not _free_joints(robot)) or (
                self.spec.key in GEARED_PLOTS and not _geared(robot)):
            self.scale = np.ones(0)
        elif self.spec.key in FLOATING_PLOTS:
            self._build_floating(robot, entries)
        elif self.spec.field == "cut_forces":
            loop_names = [loop.name for loop in robot.loops]
            labels = constraint_row_labels(robot)
            units = constraint_row_units(robot)
            seen: dict[str, int] = {}
            for r, (label, unit) in enumerate(zip(labels, units)):
                loop = next(k for k, name in enumerate(loop_names) if label.startswith(name))
                dash = _DASHES[seen.setdefault(loop_names[loop], 0) % len(_DASHES)]
                seen[loop_names[loop]] += 1
                colour = joint_color(loop)
                self._add_curve(self.vb, colour, dash)
                entries.append(_Entry(label, colour, dash, f" {unit}", "", str(r + 1)))
            self.scale = np.ones(len(labels))
        elif self.spec.field == "loop_residual":
            self._add_curve(self.vb, "#000")
            entries.append(_Entry("largest |\u03a6|", "#000", Qt.SolidLine, "", "", "|\u03a6|"))
            self.scale = np.ones(1)
        elif self.spec.field == "energy":
            for name, colour, dash in ENERGY_STYLE:
                width = LINE_WIDTH + 1 if name == "total" else LINE_WIDTH
                self._add_curve(self.vb, colour, dash, width)
                entries.append(_Entry(name, colour, dash, " J", "", name[:3]))
            self.scale = np.ones(3)
        else:
            revolute = robot.is_revolute
            # joints of one value: a floating base and joints of several degrees of
            # freedom have plots of their own
            shown = [j for j, kind in enumerate(robot.model.joint_types) if kind.is_dh]
            if self.spec.field == "tau" and robot.loops:
                # a mechanism's actuators; passive joints carry none
                shown = [j for j in shown if j in robot.actuated]
            if len(shown) < robot.n or robot.nq != robot.n:
                self.columns = np.array(robot.values_of(shown) if self.spec.field == "q"
                                        else robot.rates_of(shown), dtype=int)
            for i, name in enumerate(robot.link_names):
                if i not in shown:
                    continue
                style = Qt.SolidLine if revolute[i] else Qt.DashLine
                self._add_curve(self.vb if revolute[i] else self.vb2, joint_color(i), style)
                unit = self.spec.unit_r if revolute[i] else self.spec.unit_p
                idle = "" if revolute[i] else "(right axis)"
                entries.append(_Entry(f"{i + 1} {shown_name(name)}", joint_color(i), style,
                                      unit, idle, str(i + 1)))
            deg = 180.0 / np.pi if self.spec.to_deg else 1.0
            self.scale = np.where(revolute[shown], deg, 1.0)
            if self.spec.key in GEARED_PLOTS:  # the motor's side: tau / r
                self.scale = self.scale / gear_ratios(robot)[robot.rates_of(shown)]
        self.legend.set_entries(entries)
        cache = (QGraphicsItem.CacheMode.DeviceCoordinateCache
                 if len(self.curves) <= CACHED_CURVES_MAX else QGraphicsItem.CacheMode.NoCache)
        for curve in self.curves:
            curve.setCacheMode(cache)
        prismatic = any(c.getViewBox() is self.vb2 for c in self.curves)
        self._prismatic = prismatic
        right = self.item.getAxis("right")
        right.setStyle(showValues=prismatic and self._y_values)
        right.setLabel(self.spec.right if prismatic else "", **self.label_style())
        right.showLabel(prismatic)
        self.series = _Series(len(self.curves))
        self._show_y_values(False)
        # (view, the curves drawn in it) for the main and the prismatic view
        self.view_rows = [(vb, rows) for vb in (self.vb, self.vb2)
                          if (rows := [k for k, c in enumerate(self.curves)
                                       if c.getViewBox() is vb])]
        self.y_bounds: dict[pg.ViewBox, tuple[float, float]] = {}  # of the samples so far
        self.y_grown: set[pg.ViewBox] = set()  # views `grow_y_ranges` set in this run

    def _build_floating(self, robot: Robot | Mechanism, entries: list) -> None:
        """The curves of a floating system's plot: the first free body's x, y, z or roll,
        pitch, yaw (`core.model.rotations.quaternion_rpy_angles`), or
        the momentum: L (left axis) and p (right axis, dashed), base frame. The angles are
        unwrapped (continuous past +-180 deg) in `values`."""
        base = robot.values_of(_free_joints(robot)[:1])
        if self.spec.key == "momentum":
            self.columns = np.arange(3, 9)  # Trajectory.momentum: c, p, L
            rows = [(f"p{a}", self.vb2, Qt.DashLine, self.spec.unit_p) for a in _XYZ] + \
                   [(f"L{a}", self.vb, Qt.SolidLine, self.spec.unit_r) for a in _XYZ]
            order = [3, 4, 5, 0, 1, 2]  # L first in the legend
            rows = [rows[k] for k in order]
            self.columns = self.columns[order]
        elif self.spec.key == "base_position":
            self.columns = np.array(base[:3])
            rows = [(a, self.vb, Qt.SolidLine, self.spec.unit_r) for a in _XYZ]
        else:
            self.columns = np.array(base[3:7])  # the quaternion, turned into angles
            rows = [(a, self.vb, Qt.SolidLine, self.spec.unit_r) for a in _RPY]
        for k, (name, vb, dash, unit) in enumerate(rows):
            colour = _AXIS_COLORS[k % 3]
            self._add_curve(vb, colour, dash)
            entries.append(_Entry(name, colour, dash, unit,
                                  "(right axis)" if vb is self.vb2 else "", name))
        self.scale = np.full(len(rows), 180.0 / np.pi if self.spec.to_deg else 1.0)

    def _add_curve(self, vb: pg.ViewBox, color: str, style: Qt.PenStyle = Qt.SolidLine,
                   width: int = LINE_WIDTH) -> None:
        """A curve drawn downsampled to the screen."""
        width = width if style == Qt.SolidLine else DASHED_WIDTH
        # the residual's curve draws log10 of the data, as its log axis reads the view
        # (drawn linear, 1e-16 .. 1e-12 sat near 0 and every tick read 10^0 = "1")
        curve = SampleCurve(pg.mkPen(color, width=width, style=style),
                            log_y=self.spec.field == "loop_residual",
                            pixel_factor=DOWNSAMPLE_FACTOR)
        vb.addItem(curve)
        self.curves.append(curve)

    def values(self, part: Trajectory) -> np.ndarray:
        """The samples this plot draws from `part`, (S, curves), in display units."""
        data = np.asarray(getattr(part, self.spec.field), dtype=float)
        if data.ndim == 1:
            data = data[:, None]
        if self.columns is not None:
            data = data[:, self.columns]
        if self.spec.key == "base_orientation":
            # continuous across +-180 deg (a tumbling body), from the last sample shown
            data = quaternion_rpy_angles(data)
            if self.series.size:
                last = self.series.y[:, self.series.size - 1] / self.scale
                data = np.unwrap(np.vstack([last, data]), axis=0)[1:]
            else:
                data = np.unwrap(data, axis=0)
        if self.spec.field == "loop_residual":
            data = np.maximum(np.abs(data), LOG_FLOOR)  # log axis: a closed loop is 0
        return data * self.scale

    def append(self, part: Trajectory) -> None:
        if self.curves:
            values = self.values(part)
            self.series.append(part.t, values)
            for vb, rows in self.view_rows:
                v = values[:, rows]
                v = v[np.isfinite(v)]
                if v.size:
                    lo, hi = self.y_bounds.get(vb, (np.inf, -np.inf))
                    self.y_bounds[vb] = min(lo, float(v.min())), max(hi, float(v.max()))

    def grow_y_ranges(self) -> None:
        """While a run streams in: each view's y range only grows, by half the data's span
        at a time, to cover the samples so far, so that the axes repaint a few times per
        run rather than at every chunk (issue #8). The log residual auto-ranges."""
        if self.spec.field == "loop_residual":
            return
        for vb, (lo, hi) in self.y_bounds.items():
            a, b = vb.viewRange()[1]
            if vb in self.y_grown and a <= lo and hi <= b:
                continue
            pad = 0.5 * max(hi - lo, self._least_span(vb))
            if vb in self.y_grown:
                lo, hi = min(a, lo - pad), max(b, hi + pad)
            else:  # the run's first samples: forget the last run's range
                lo, hi = lo - pad, hi + pad
                self.y_grown.add(vb)
            vb.setYRange(lo, hi, padding=0.0)

    def _least_span(self, vb: pg.ViewBox) -> float:
        """The smallest y span of view `vb`: MIN_Y_SPAN, or MIN_Y_SPAN_PRISMATIC on the
        prismatic joints' view (the momentum's right axis, kg m/s, takes MIN_Y_SPAN: a
        momentum that stays zero shows flat with short tick labels)."""
        return MIN_Y_SPAN if vb is self.vb or self.spec.key == "momentum" \
            else MIN_Y_SPAN_PRISMATIC

    def fit_axis_titles(self) -> None:
        """Each y axis's title in full if it fits along the plot area's height, else its
        unit alone ("(N, N m)" for "force (N, N m)"), the full title in the tooltip: a
        title longer than a low plot ran into the next plot's and the time labels."""
        for name, full in (("left", self.spec.left), ("right", self.spec.right)):
            fit_axis_title(self.item, name, full, self.label_style())

    def clear_spikes(self) -> None:
        """No clipped view, no marks."""
        self.spikes = {}
        for marks in self.spike_marks.values():
            marks.setData([], [])
            marks.setVisible(False)

    def fit_y_ranges(self, clip: bool = False) -> None:
        """Each view's y range: its samples (`y_bounds`) with a margin of FIT_MARGIN of
        their span, at least the view's minimum span; with `clip`, a view whose samples
        hold spikes takes their robust range instead (`gui.plots.spikes`) and marks
        where samples leave it (`spikes`). The log residual auto-ranges."""
        self.clear_spikes()
        self.fit_pending = False
        if self.spec.field == "loop_residual":
            self.vb.enableAutoRange(axis=pg.ViewBox.YAxis)
            return
        for vb, (lo, hi) in self.y_bounds.items():
            spikes = self._spike_range(vb) if clip else None
            if spikes is not None:
                lo, hi = spikes.lo, spikes.hi
                self.spikes[vb] = spikes
            pad = max(FIT_MARGIN * (hi - lo), 0.5 * (self._least_span(vb) - (hi - lo)))
            vb.setYRange(lo - pad, hi + pad, padding=0.0)
            if spikes is not None:
                self._mark_spikes(vb, spikes, lo - 0.5 * pad, hi + 0.5 * pad)

    def view_values(self, vb: pg.ViewBox) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """(t (S,), values (S, m), curve rows) of the curves drawn in view `vb`: views
        of the series' buffers when the rows are consecutive (the usual case: a copy of
        a 600 s run's curves took a third of the spike statistics at its end), to be
        read, not written."""
        rows = next((r for v, r in self.view_rows if v is vb), [])
        s = self.series
        if rows and rows[-1] - rows[0] == len(rows) - 1:  # (rows are increasing)
            return s.t[:s.size], s.y[rows[0]:rows[-1] + 1, :s.size].T, rows
        return s.t[:s.size], s.y[rows, :s.size].T, rows

    def _spike_range(self, vb: pg.ViewBox):
        _t, values, rows = self.view_values(vb)
        return spike_range(values) if rows else None

    def _mark_spikes(self, vb: pg.ViewBox, spikes, low: float, high: float) -> None:
        """A triangle in the curve's colour, at the view's edge, at every stretch of
        samples beyond the robust range (pointing the way the curve went)."""
        t, values, rows = self.view_values(vb)
        marks = spikes.marks(t, values)
        item = self.spike_marks[vb]
        item.setData(
            [m[0] for m in marks], [high if m[2] else low for m in marks],
            symbol=["t1" if m[2] else "t" for m in marks], size=SPIKE_MARK_PX,
            pen=None, brush=[pg.mkBrush(self.curves[rows[m[1]]].opts["pen"].color())
                                        for m in marks])
        item.setVisible(bool(marks))

    def refresh(self) -> bool:
        """Show the series on the curves (views into its buffers, no copy). True if the
        y axes' tick labels appeared or went (the axes need other widths)."""
        s = self.series
        for k, curve in enumerate(self.curves):
            curve.set_samples(s.t[:s.size], s.y[k, :s.size])
        self.stale = False
        return self._show_y_values(s.size > 0)

    def _show_y_values(self, shown: bool) -> bool:
        """Tick labels on the y axes only once there are samples: an empty plot labelled
        a range of nothing (the empty log residual read 6e0, 4e0, 2e0). True if they
        changed."""
        if shown == self._y_values:
            return False
        self._y_values = shown
        self.item.getAxis("left").setStyle(showValues=shown)
        self.item.getAxis("right").setStyle(showValues=shown and self._prismatic)
        return True

    def show_values(self, time: float | None) -> None:
        """Legend read-out at `time` (s), or the plain legend for None."""
        if time is None or self.series.size == 0:
            self.set_title(self.spec.title)
            self.legend.show_values(None)
        else:
            self.set_title(f"{self.spec.title} \u2014 t = {time:.3f} s")
            self.legend.show_values(self.series.value_at(time))


class PlotsPanel(QWidget):
    """Joint angles, rates, torques and energy of a Trajectory against time.

    ``append(chunk)`` buffers streamed samples (curves refresh at ~30 Hz);
    ``set_trajectory`` shows a whole run; ``set_cursor_time`` moves the red
    time cursor; ``time_picked(t)`` (s) is emitted when the user clicks or
    drags in a plot. A row of toggle buttons picks which plots are shown (in
    a 2 x 2 grid when the panel is wide); when they do not fit, the panel scrolls.
    """

    time_picked = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._robot: Robot | None = None
        self._traj: Trajectory | None = None  # the run last shown whole
        self._pending: list[Trajectory] = []
        self._run_duration: float | None = None  # s; set: the time axes stay at [0, it]
        self._font_scale = 1.0
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), PIXMAP_CACHE_KB))
        self._graphics = StripView()
        self._graphics.setBackground(BACKGROUND)
        self._graphics.ci.setSpacing(6)
        self._graphics.ci.layout.setHorizontalSpacing(24)  # between the grid's columns
        # one time range for all plots, shared by value (`_share_time_range`), not by
        # pyqtgraph's setXLink: that maps ranges by screen position, which shifts plots in
        # other grid columns, and two views that both auto-range then correct each other
        # for ever (a repaint loop that froze the window)
        self._sharing_range = False
        # the axes' widths follow their tick labels (a zoom, a run's ranges, a resize)
        self._align_timer = NextTurn(self, self.align_axes)
        #: the plots made so far, in SPECS order: those of a model with loops, a free
        #: joint or a gear are made for the first such model (`_add_plots_for`): six
        #: plots a window on an arm never shows were 35 ms of CPU of every start
        self._all_plots = [self._new_plot(spec) for spec in SPECS
                           if spec.key not in OPTIONAL_PLOTS]
        self._shown: list[_Plot] = []
        self._fit_time_range()
        self._columns = 1
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._flush)
        self._last_chunk_timer = QTimer(self)
        self._last_chunk_timer.setSingleShot(True)
        self._last_chunk_timer.setInterval(LAST_CHUNK_WAIT_MS)
        self._last_chunk_timer.timeout.connect(self._refresh_shown)
        #: a finished run's shown plots still to fit, one per turn of the event loop
        #: (`_fit_next`, the first shown first): fitting and painting them all in the
        #: run's last turn held the GUI thread 60-180 ms (the humanoid's 600 s fall)
        self._unfitted: list[_Plot] = []
        self._fit_timer = QTimer(self)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self._fit_next)
        self._hover_pos: QPointF | None = None
        self._hover_timer = QTimer(self)  # the read-out follows the mouse at <= ~30 Hz
        self._hover_timer.setSingleShot(True)
        self._hover_timer.setInterval(REFRESH_MS)
        self._hover_timer.timeout.connect(self._update_hover)
        self._graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._buttons: dict[str, QToolButton] = {}
        self._controls = QWidget()  # the show / hide buttons, wrapped where narrow
        row = FlowLayout(self._controls)
        row.setContentsMargins(6, 2, 6, 0)
        row.addWidget(QLabel("Show:"))
        for spec in SPECS:
            button = QToolButton()
            button.setText(spec.button)
            button.setCheckable(True)
            button.setChecked(True)
            button.setToolTip(f"Show or hide the plot of {spec.title.lower()}")
            button.toggled.connect(self._on_toggled)
            self._buttons[spec.key] = button
            row.addWidget(button)
        self.clip_button = QToolButton()
        self.clip_button.setText("Clip spikes")
        self.clip_button.setCheckable(True)
        self.clip_button.setChecked(True)
        self.clip_button.setToolTip(
            "A plot whose samples hold spikes shows the range of the others (their 1st to "
            "99th percentile), with \u25b2\u25bc where samples leave it; off: every plot "
            "shows all its samples")
        self.clip_button.toggled.connect(self._on_clip_toggled)
        row.addWidget(self.clip_button)
        self.legend_button = QToolButton()
        self.legend_button.setText("Legend")
        self.legend_button.setCheckable(True)
        self.legend_button.setChecked(True)
        self.legend_button.setToolTip("Show or hide the legends (right of each plot) and "
                                      "their read-out")
        self.legend_button.toggled.connect(self.set_legends_shown)
        row.addWidget(self.legend_button)
        self._scroll = scroll_area(self._graphics)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self._controls)
        #: why a plot is clipped: its spikes, when, and what causes them (`_explain_spikes`)
        self.spike_note = QLabel()
        self.spike_note.setObjectName("spikeNote")
        self.spike_note.setWordWrap(True)
        self.spike_note.setContentsMargins(8, 0, 8, 0)
        self.spike_note.setStyleSheet("color: #5A3A00;")
        self.spike_note.setToolTip(
            "A plot with a few samples far beyond the others shows the others' range (their "
            "1st to 99th percentile, widened to 8 median deviations), so that its other "
            "curves are not flattened to zero; \u25b2\u25bc mark where samples leave it. "
            "A toggle pose: the loop Jacobian's dependent columns near rank loss "
            "(\u03c3_min/\u03c3_max small), where the cut joints need large forces to hold "
            "the loop. Clip spikes off shows every sample.")
        self.spike_note.hide()
        layout.addWidget(self.spike_note)
        layout.addWidget(self._scroll)
        for key in OPTIONAL_PLOTS:
            self._buttons[key].setVisible(False)
        self._arrange(list(self._all_plots))

    def _new_plot(self, spec: PlotSpec) -> _Plot:
        """A plot of `spec`, its time range shared and its axes aligned with the others'."""
        plot = _Plot(spec, self._on_scrub, self)
        plot.vb.sigXRangeChanged.connect(self._share_time_range)
        for view in (plot.vb, plot.vb2):
            view.sigYRangeChanged.connect(self._align_timer.request)
        plot.vb.sigResized.connect(self._align_timer.request)
        plot.legend.width_changed.connect(self._align_timer.request)
        return plot

    def _add_plots_for(self, robot: Robot | Mechanism | None) -> None:
        """Make the plots `robot` offers that were not made yet (its loops', a free
        joint's, a gear's), as the others are now: fonts, legends, time range."""
        needed = _offered(robot) - {plot.spec.key for plot in self._all_plots}
        if not needed:
            return
        leader = self._all_plots[0]
        for spec in SPECS:
            if spec.key not in needed:
                continue
            plot = self._new_plot(spec)
            if self._font_scale != 1.0:
                plot.set_font_scale(self._font_scale)
            if self.legends_below():
                plot.set_legend_below(True)
            plot.legend.set_shown(self.legend_button.isChecked())
            plot.vb.enableAutoRange(axis=pg.ViewBox.XAxis, enable=False)
            plot.vb2.enableAutoRange(axis=pg.ViewBox.XAxis, enable=False)
            plot.vb.setXRange(*leader.vb.viewRange()[0], padding=0.0)
            if self._run_duration is not None and spec.field != "loop_residual":
                plot.vb.disableAutoRange(axis=pg.ViewBox.YAxis)
                plot.vb2.disableAutoRange(axis=pg.ViewBox.YAxis)
            plot.item.setParentItem(self._graphics.ci)
            plot.item.setVisible(False)
            order = [s.key for s in SPECS]
            at = next((k for k, p in enumerate(self._all_plots)
                       if order.index(p.spec.key) > order.index(spec.key)),
                      len(self._all_plots))
            self._all_plots.insert(at, plot)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(900, 900)

    # ----- which plots -----------------------------------------------------------------
    def set_visible_plots(self, keys) -> None:
        """Stack only the plots named in `keys` (PlotSpec.key, e.g. "joint_angles")."""
        keys = set(keys)
        unknown = keys - set(self.available_plots())
        if unknown or not keys:
            raise ValueError(f"expected some of {sorted(self._buttons)}, got {sorted(keys)}")
        for key, button in self._buttons.items():
            button.blockSignals(True)
            button.setChecked(key in keys)
            button.blockSignals(False)
        self._arrange([p for p in self._all_plots if p.spec.key in keys])

    def visible_plots(self) -> list[str]:
        return [p.spec.key for p in self._shown]

    @Slot()
    def _on_toggled(self) -> None:
        keys = [key for key, b in self._buttons.items() if b.isChecked()]
        if not keys:  # keep at least one plot: re-check the button just unchecked
            self.sender().setChecked(True)
            return
        self.set_visible_plots(keys)

    def _columns_for(self, count: int) -> int:
        """2 columns for 3-4 plots in a wide panel (and 2 plots in a wide, low one), else 1."""
        width, height = self.width(), self.height()
        if width < GRID_MIN_WIDTH:
            return 1
        return 2 if count >= 3 or (count == 2 and width > 2.5 * height) else 1

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._columns_for(len(self._shown)) != self._columns:
            self._arrange(self._shown)
        for plot in self._shown:  # a narrower panel: legends held the plots wide
            plot._fit_legend()

    def _arrange(self, plots: list[_Plot], columns: int | None = None) -> None:
        """Lay out `plots` in order (row by row, `columns` or as the panel's width
        allows), each at least MIN_PLOT_HEIGHT tall; hide the others.

        Hidden plots stay in the scene (only out of its layout), so they are
        deleted with the panel like the shown ones.
        """
        self.finish_fitting()
        ci = self._graphics.ci
        for plot in self._all_plots:
            if plot.item.parentItem() is not ci:
                plot.item.setParentItem(ci)
        for plot in self._shown:
            ci.layout.removeItem(plot.item)
        for plot in self._all_plots:
            plot.item.setVisible(plot in plots)
        columns = self._columns_for(len(plots)) if columns is None else columns
        rows = -(-len(plots) // columns)
        for k, plot in enumerate(plots):
            plot.panel_columns = columns
            ci.layout.addItem(plot.item, k // columns, k % columns)
            plot.set_time_axis_label(k + columns >= len(plots))
        for i in range(2):
            ci.layout.setColumnStretchFactor(i, 1 if i < columns else 0)
        for i in range(len(self._all_plots)):
            ci.layout.setRowStretchFactor(i, 1 if i < rows else 0)
        self._shown = list(plots)
        self._columns = columns
        if self._run_duration is None and any(p.vb.autoRangeEnabled()[0]
                                              for p in self._all_plots):
            self._fit_time_range()  # the leader must be a plot that is painted
        else:
            self._leader = (self._shown or self._all_plots)[0]
        self._graphics.setMinimumHeight(MIN_PLOT_HEIGHT * rows)
        ci.layout.activate()
        fitted = [plot for plot in plots if plot.fit_pending]  # hidden when a run ended
        for plot in fitted:
            plot.fit_y_ranges(self.clip_button.isChecked())
        if fitted:
            self._explain_spikes()
        self.align_axes()
        labels = False
        for plot in plots:  # hidden while samples came: draw them now
            if plot.stale:
                labels = bool(plot.refresh()) or labels
        if labels:
            self.align_axes()

    @Slot()
    def align_axes(self) -> None:
        """Line up the plot areas of each column of shown plots: left axes of one width,
        right axes of one width (each as their widest tick labels need,
        `align_axis_widths`), and legends beside them of one width. Legends of different
        widths put the same time at different x in a column."""
        self._align_timer.stop()
        plots, columns = self._shown, max(self._columns, 1)
        for _ in range(3):  # a new layout may refit a legend (`_Legend.fit`): again
            widths = [p.legend.natural_width() for p in plots]
            for c in range(columns):
                column = plots[c::columns]
                if not column:
                    continue
                align_axis_widths([p.item for p in column],
                                  minimum=round(AXIS_WIDTH * self._font_scale),
                                  grow_only=self._run_duration is not None)
                widest = max(p.legend.natural_width() for p in column)
                for p in column:
                    p.legend.reserve(widest)
            # laid out now, not at the next turn: a plot area resized after the plots
            # were painted moves the prismatic view's range and paints them again
            self._graphics.ci.layout.activate()
            for plot in plots:
                plot.item.layout.activate()
                plot.fit_axis_titles()
            if [p.legend.natural_width() for p in plots] == widths:
                break
        for _ in range(3):  # whatever the last pass invalidated (a legend, a title)
            layouts = [self._graphics.ci.layout] + [p.item.layout for p in plots]
            if all(layout.isActivated() for layout in layouts):
                break
            for layout in layouts:
                layout.activate()
        self._align_timer.stop()

    def set_controls_visible(self, visible: bool) -> None:
        """Show or hide the row of show / hide buttons above the plots (and the note on
        clipped spikes under it)."""
        self._controls.setVisible(visible)
        self.spike_note.setVisible(visible and bool(self.spike_note.text()))

    def controls_visible(self) -> bool:
        return not self._controls.isHidden()

    def set_font_scale(self, scale: float) -> None:
        """Every plot's fonts (ticks, axis labels, titles, legends) at `scale` x their
        normal size (1: normal), e.g. for a projector (gui/panels/presentation.py)."""
        self._font_scale = float(scale)
        for plot in self._all_plots:
            plot.set_font_scale(self._font_scale)
        self.align_axes()

    def font_scale(self) -> float:
        """The plots' font scale (1: normal)."""
        return self._font_scale

    def set_legends_below(self, below: bool) -> None:
        """Every legend under its plot (True: for a narrow, tall panel) or beside it."""
        for plot in self._all_plots:
            plot.set_legend_below(below)
        self.align_axes()

    def legends_below(self) -> bool:
        return self._all_plots[0].legend.below

    def set_legends_shown(self, shown: bool) -> None:
        """Show or hide every plot's legend (hidden, the plots take its room)."""
        self.legend_button.setChecked(shown)
        for plot in self._all_plots:
            plot.legend.set_shown(shown)
        self.align_axes()

    # ----- data -----------------------------------------------------------------------
    def observe(self, session) -> None:
        """Follow `session` (`gui.model.session.Session`): its model; a run's chunks as
        they stream in, on time axes fixed to its duration (issue #8); its samples when
        it ends (the axes fit them)."""
        session.model_changed.connect(self.set_robot)
        session.run_started.connect(self._on_run_started)
        session.chunk.connect(self.append)
        session.run_ended.connect(self._on_run_ended)

    @Slot(object)
    def _on_run_started(self, spec) -> None:
        self.clear()
        self.set_run_duration(spec.duration)  # fixed time axes while the chunks stream in
        if math.isfinite(spec.duration) and spec.dt > 0.0:
            samples = sample_count(spec.duration, spec.dt)
            if samples <= RESERVED_SAMPLES_MAX:
                for plot in self._plots:
                    plot.series.reserve(samples)

    @Slot(object)
    def _on_run_ended(self, result) -> None:
        if len(result.trajectory):
            self.set_trajectory(result.trajectory, gradual=True)
        else:
            self.set_run_duration(None)

    def set_robot(self, robot: Robot | Mechanism | None) -> None:
        """Build one curve per joint (legend: robot.link_names); clears the data. The
        loop plots are offered (and shown) only for a mechanism with loops; the motor
        torques only for a model with a gear (shown beside the joint torques when the
        model gets its first gear, if fewer than four plots are shown)."""
        self._robot = robot
        self._pending = []
        self._timer.stop()
        self._stop_fitting()
        self._add_plots_for(robot)
        for plot in self._all_plots:
            plot.build(robot)
        loops = robot is not None and bool(robot.loops)
        floating = robot is not None and bool(_free_joints(robot))
        had_loops = not self._buttons[LOOP_PLOTS[0]].isHidden()
        was_floating = not self._buttons[FLOATING_PLOTS[0]].isHidden()
        for key in LOOP_PLOTS:
            self._buttons[key].setVisible(loops)
        for key in FLOATING_PLOTS:
            self._buttons[key].setVisible(floating)
        geared = robot is not None and _geared(robot)
        was_geared = not self._buttons[GEARED_PLOTS[0]].isHidden()
        for key in GEARED_PLOTS:
            self._buttons[key].setVisible(geared)
        shown = [k for k in self.visible_plots() if k in self.available_plots()]
        if geared and not was_geared and "joint_torques" in shown and len(shown) < 4:
            # beside the joint torques where there is room (four plots fill the panel;
            # then the Motor button, now shown, adds it)
            shown.insert(shown.index("joint_torques") + 1, "motor_torques")
        if loops and not had_loops:  # four plots in a 2 x 2 grid; rates, energy on a click
            shown = list(FLOATING_MECHANISM_DEFAULT_PLOTS if floating
                         else MECHANISM_DEFAULT_PLOTS)
        elif floating and not was_floating:  # (joint angles if it has joints of one value)
            joints = any(kind.is_dh for kind in robot.model.joint_types)
            shown = [k for k in FLOATING_DEFAULT_PLOTS if k != "joint_angles" or joints]
        elif (had_loops and not loops) or (was_floating and not floating):
            shown = [p.spec.key for p in self._plots]
        self.set_visible_plots(shown or ["joint_angles"])
        self.set_cursor_time(None)

    @property
    def _plots(self) -> list[_Plot]:
        """The plots of the current model (the loop plots only with loops)."""
        offered = _offered(self._robot)
        return [p for p in self._all_plots
                if p.spec.key not in OPTIONAL_PLOTS or p.spec.key in offered]

    def available_plots(self) -> list[str]:
        """The keys of the plots this model has (the loop plots need loops)."""
        return [p.spec.key for p in self._plots]

    def clear(self) -> None:
        """Remove all samples (the curves stay)."""
        self._stop_fitting()
        self._pending = []
        self._timer.stop()
        self._last_chunk_timer.stop()
        self._traj = None
        for plot in self._plots:
            plot.series = _Series(len(plot.curves))
            plot.y_bounds, plot.y_grown = {}, set()
            plot.stale = True
            plot.fit_pending = False
            plot.show_values(None)
            plot.clear_spikes()
        self.spike_note.setText("")
        self.spike_note.hide()
        if self._run_duration is None:  # the axes follow the samples that come
            self._fit_time_range()
            for plot in self._all_plots:
                plot.vb.enableAutoRange(axis=pg.ViewBox.YAxis)
                plot.vb2.enableAutoRange(axis=pg.ViewBox.YAxis)
        self._refresh_shown()
        self.set_cursor_time(None)

    def append(self, chunk: Trajectory) -> None:
        """Queue a chunk of new samples; the curves refresh at the next timer tick."""
        if self._robot is None or len(chunk) == 0:
            return
        self._pending.append(chunk)
        if not self._timer.isActive():
            self._timer.start()

    def set_trajectory(self, traj: Trajectory | None, gradual: bool = False) -> None:
        """Show a whole Trajectory (replaces what is shown) and fit the view. A run whose
        samples were all streamed in already (`append`) is not drawn again.

        `gradual` (a run's end): the shown plots are fitted and drawn one per turn of the
        event loop, the first shown first (`fitting`, `finish_fitting`), so that the
        window keeps answering while they are."""
        self._stop_fitting()
        if traj is None or self._robot is None or len(traj) == 0:
            self.clear()
            return
        self._take_pending()
        self._last_chunk_timer.stop()
        self._traj = traj
        if not self._holds(traj):
            self.clear()
            for plot in self._plots:
                plot.append(traj)
                plot.stale = True
        self._run_duration = None
        self._set_streaming(False)
        if gradual and self._shown and self._sample_span() is not None:
            self._leader = self._shown[0]
            for plot in self._all_plots:
                plot.vb.disableAutoRange(axis=pg.ViewBox.XAxis)
                plot.vb2.disableAutoRange(axis=pg.ViewBox.XAxis)
            self._unfitted = list(self._shown)
            self._fit_timer.start()
            return
        self._fit_to_samples()  # before the curves get their samples: they bin them once
        self._refresh_shown()

    def fitting(self) -> bool:
        """True while a finished run's plots are still being fitted (`set_trajectory`
        with `gradual`)."""
        return bool(self._unfitted)

    def finish_fitting(self) -> None:
        """Fit and draw at once the plots a finished run still waits for (a picture of
        the window, an export, a change of the shown plots or of Clip spikes)."""
        while self._unfitted:
            self._fit_next()

    def _stop_fitting(self) -> None:
        self._unfitted = []
        self._fit_timer.stop()

    @Slot()
    def _fit_next(self) -> None:
        """Timer (a finished run, `set_trajectory` with `gradual`): the next shown plot
        takes the samples' time range and its y ranges (`_Plot.fit_y_ranges`) and gets
        its curves; after the last, the hidden plots take the time range and wait for
        their y ranges until shown (as `_fit_to_samples`), the note explains the spikes
        and the axes are lined up."""
        span = self._sample_span()
        if not self._unfitted or span is None:
            self._stop_fitting()
            return
        t0, t1 = span[0], max(span[1], span[0] + MIN_TIME_SPAN)
        plot = self._unfitted.pop(0)
        self._sharing_range = True  # this plot only: the others take theirs in turn
        try:
            if tuple(plot.vb.viewRange()[0]) != (t0, t1):
                plot.vb.setXRange(t0, t1, padding=0.0)
        finally:
            self._sharing_range = False
        plot.fit_y_ranges(self.clip_button.isChecked())
        if plot.stale:
            plot.refresh()
        if self._unfitted:  # the axes are lined up once, after the last: lining them up
            self._align_timer.stop()  # after each relaid and repainted every plot
            return
        self._fit_timer.stop()
        self._set_time_range(t0, t1)  # the hidden plots (the shown ones have it)
        for hidden in self._plots:
            if hidden not in self._shown:
                hidden.clear_spikes()
                hidden.fit_pending = True
        self._explain_spikes()
        self.align_axes()
        self._refresh_shown()

    def _sample_span(self) -> tuple[float, float] | None:
        """(first, last) sample time of the buffers, s; None without samples."""
        drawn = [p for p in self._plots if p.curves]  # (a joint plot may have none)
        series = drawn[0].series if drawn else None
        if series is None or series.size == 0:
            return None
        return float(series.t[0]), float(series.t[series.size - 1])

    def _fit_to_samples(self) -> None:
        """Fit every plot's axes to its samples at once: time from the first sample to
        the last, each y view to its data with a margin (the log residual auto-ranges).

        A finished run's samples stay as they are, so the ranges are set rather than left
        to pyqtgraph's auto-range: that fits them while painting, and the axes it changes
        there, with the curves' downsampling that follows the new range, paint the plots
        two or three times over (issue #8: 150 ms at the end of a 60 s fall).
        """
        span = self._sample_span()
        if span is None:
            return
        t0, t1 = span
        self._leader = (self._shown or self._all_plots)[0]
        for plot in self._all_plots:
            plot.vb.disableAutoRange(axis=pg.ViewBox.XAxis)
            plot.vb2.disableAutoRange(axis=pg.ViewBox.XAxis)
        self._set_time_range(t0, max(t1, t0 + MIN_TIME_SPAN))
        self._fit_y_ranges()
        self.align_axes()  # the new ranges' labels, before the plots are painted

    def _fit_y_ranges(self) -> None:
        """Fit the shown plots' y ranges to their samples (clipping spikes if Clip spikes
        is on) and explain their spikes; the hidden plots' wait until they are shown
        (`_arrange`): the spike statistics of the human's hidden plots held the GUI
        thread 130-240 ms at the end of its 600 s run (issue #23)."""
        clip = self.clip_button.isChecked()
        for plot in self._plots:
            if plot in self._shown:
                plot.fit_y_ranges(clip)
            else:
                plot.clear_spikes()
                plot.fit_pending = True
        self._explain_spikes()

    @Slot(bool)
    def _on_clip_toggled(self, _on: bool) -> None:
        self.finish_fitting()
        if self._plots[0].series.size and self._run_duration is None:
            self._fit_y_ranges()
            self.align_axes()

    def clipped_plots(self) -> list[str]:
        """The keys of the plots whose spikes are clipped now."""
        return [p.spec.key for p in self._plots if p.spikes]

    def _explain_spikes(self) -> None:
        """The note over the plots: which plots are clipped, their largest spikes and
        what core says causes them (`spike_reason`)."""
        lines = []
        for plot in self._plots:
            for vb, spikes in plot.spikes.items():
                t, values, _rows = plot.view_values(vb)
                peaks = spikes.peaks(values)
                times = ", ".join(f"{t[k]:.3g}" for k in peaks)
                lo, hi = spikes.full
                reason = spike_reason(self._robot, self._traj, plot.spec.field, peaks)
                unit = plot.spec.unit_r if vb is plot.vb else plot.spec.unit_p
                lines.append(
                    f"<b>{escape(plot.spec.title)}</b>: spikes up to "
                    f"{max(abs(lo), abs(hi)):.3g}{escape(unit)} at t = {times} s"
                    f"{escape(reason)}; clipped (\u25b2\u25bc).")
        self.spike_note.setText("<br>".join(lines))
        self.spike_note.setVisible(bool(lines) and self.controls_visible())

    @Slot(object, object)
    def _share_time_range(self, view, x_range) -> None:
        """Give every plot the time range the leader (the first shown plot) just took (an
        auto-range, a zoom there, `set_run_duration`)."""
        if self._sharing_range or view is not self._leader.vb:
            return  # one way only, from the leader: a follower can never feed back
        self._sharing_range = True
        try:
            lo, hi = x_range
            for plot in self._all_plots:
                if plot.vb is not view and tuple(plot.vb.viewRange()[0]) != (lo, hi):
                    plot.vb.setXRange(lo, hi, padding=0.0)
        finally:
            self._sharing_range = False

    def _fit_time_range(self) -> None:
        """The time axes follow the data: the first shown plot auto-ranges in time (a
        hidden one is not painted, so it would not) and shares its range
        (`_share_time_range`); the others never auto-range in time, so no two views can
        correct each other."""
        leader = self._leader = (self._shown or self._all_plots)[0]
        for plot in self._all_plots:
            plot.vb.enableAutoRange(axis=pg.ViewBox.XAxis, enable=plot is leader)
            plot.vb2.enableAutoRange(axis=pg.ViewBox.XAxis, enable=False)

    def set_run_duration(self, seconds: float | None) -> None:
        """During a run of `seconds` s: the time axes stay at [0, seconds], so the chunks
        that stream in redraw the curves only, not the axes and grids (issue #8). None (and
        `set_trajectory`): the time axes fit the data again."""
        self._run_duration = None if seconds is None or seconds <= 0 else float(seconds)
        self._set_streaming(self._run_duration is not None)
        if self._run_duration is None:
            self._fit_time_range()
        else:
            for plot in self._all_plots:
                plot.vb.disableAutoRange(axis=pg.ViewBox.XAxis)
                plot.vb2.disableAutoRange(axis=pg.ViewBox.XAxis)
                if plot.spec.field != "loop_residual":  # y: only grows (`grow_y_ranges`)
                    plot.vb.disableAutoRange(axis=pg.ViewBox.YAxis)
                    plot.vb2.disableAutoRange(axis=pg.ViewBox.YAxis)
            self._set_time_range(0.0, self._run_duration)

    def _set_streaming(self, on: bool) -> None:
        """Tell every curve whether a run streams in with the axes fixed (`SampleCurve.
        set_streaming`: a refresh then repaints only the new samples' strip)."""
        for plot in self._all_plots:
            for curve in plot.curves:
                curve.set_streaming(on)

    def _set_time_range(self, t0: float, t1: float) -> None:
        """Every plot's time axis to [t0, t1] s, the leader first. Each is set, not left
        to `_share_time_range`: that follows the leader's changes, and a leader already
        at [t0, t1] (a run as long as the last) would leave a zoomed plot as it was."""
        self._leader.vb.setXRange(t0, t1, padding=0.0)
        for plot in self._all_plots:
            if tuple(plot.vb.viewRange()[0]) != (t0, t1):
                plot.vb.setXRange(t0, t1, padding=0.0)

    def run_duration(self) -> float | None:
        """The duration the time axes are fixed to (s), None when they fit the data."""
        return self._run_duration

    def _holds(self, traj: Trajectory) -> bool:
        """True if the buffers hold exactly the samples of `traj` (times compared)."""
        series = self._plots[0].series
        return (series.size == len(traj) and series.t[0] == traj.t[0]
                and series.t[series.size - 1] == traj.t[-1])

    def sample_count(self) -> int:
        """Samples drawn after the last refresh."""
        return self._plots[0].series.size

    @Slot()
    def _flush(self) -> None:
        """Timer: append the chunks that came since the last tick; redraw the shown plots.

        The run's last chunk is only appended: `set_trajectory` follows at once and fits
        the axes, and drawing the curves first painted the plots twice at the end of
        every run (~25 ms each, issue #8). Without `set_trajectory` within
        LAST_CHUNK_WAIT_MS they are drawn then."""
        if not self._pending:
            self._timer.stop()
            return
        last = (self._run_duration is not None
                and self._pending[-1].t[-1] >= self._run_duration * (1.0 - 1e-9))
        self._take_pending()
        if last:
            self._last_chunk_timer.start()
        else:
            self._refresh_shown()

    def _take_pending(self) -> None:
        """Append the queued chunks to every plot's buffers (the curves go stale), joined
        into one first: a fast run queues dozens of chunks a tick, and each plot took
        each chunk on its own (the human's 600 s fall: ~20 chunks x 8 plots a tick,
        1,792 appends, 1.3 s of the GUI thread in 11 ticks, issue #23)."""
        parts, self._pending = self._pending, []
        if not parts:
            return
        joined = parts[0] if len(parts) == 1 else Trajectory.concatenate(parts)
        for plot in self._plots:
            plot.append(joined)
            plot.stale = True

    def _refresh_shown(self) -> None:
        """Redraw the shown plots whose curves are stale; hidden ones wait (`_arrange`).
        Tick labels that appeared or went make the axes take other widths, at once
        (before the plots are painted)."""
        labels = False
        for plot in self._shown:
            if plot.stale:
                labels = bool(plot.refresh()) or labels
                if self._run_duration is not None:
                    plot.grow_y_ranges()
        if labels:
            self.align_axes()

    # ----- cursor, hover and scrubbing ------------------------------------------------
    def set_cursor_time(self, t: float | None) -> None:
        """Put the time cursor at `t` s in every plot (None hides it); emits nothing."""
        for plot in self._plots:
            if t is None:
                plot.cursor.setVisible(False)
            else:
                plot.cursor.setValue(float(t))
                plot.cursor.setVisible(True)

    def cursor_time(self) -> float | None:
        """Time of the cursor (s), None when hidden."""
        line = self._plots[0].cursor
        return float(line.value()) if line.isVisible() else None

    @Slot(float)
    def _on_scrub(self, t: float) -> None:
        series = self._plots[0].series
        if series.size:
            t = float(np.clip(t, series.t[0], series.t[series.size - 1]))
        self.set_cursor_time(t)
        self.time_picked.emit(t)

    @Slot(object)
    def _on_mouse_moved(self, pos: QPointF) -> None:
        self._hover_pos = QPointF(pos)
        if not self._hover_timer.isActive():
            self._hover_timer.start()

    @Slot()
    def _update_hover(self) -> None:
        pos = self._hover_pos
        over = None if pos is None else next(
            (p for p in self._plots if p.vb.sceneBoundingRect().contains(pos)), None)
        self.show_readout(None if over is None else float(over.vb.mapSceneToView(pos).x()))

    def show_readout(self, t: float | None) -> None:
        """Dashed hover line and legend values at `t` s in every plot (None: off)."""
        for plot in self._plots:
            plot.hover.setVisible(t is not None)
            if t is not None:
                plot.hover.setValue(t)
            plot.show_values(t)

    def leaveEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._hover_pos = None
        self._hover_timer.stop()
        self.show_readout(None)
        super().leaveEvent(event)

    # ----- export and teardown --------------------------------------------------------
    def export_images(self, directory: str | Path, width: int = 1600) -> list[Path]:
        """Write every plot of the model (shown or not) as PNG (`width` px wide) and SVG into `directory`.

        Each plot is laid out EXPORT_PLOT_HEIGHT px tall at the panel's width for
        the export, whatever the panel's size. Returns the paths written.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self._flush()
        self.finish_fitting()
        self.show_readout(None)
        cursor = self.cursor_time()
        self.set_cursor_time(None)  # a figure shows the whole run, without the scrub line
        shown = list(self._shown)
        ci = self._graphics.ci
        available = list(self._plots)
        self._arrange(available, columns=1)
        panel_width = max(self._graphics.width(), 600)
        ci.setGeometry(QRectF(0, 0, panel_width, EXPORT_PLOT_HEIGHT * len(available)))
        ci.layout.activate()
        written = []
        try:
            for plot in available:
                written += [write_png(plot.item, directory / f"{plot.spec.key}.png", width),
                            write_svg(plot.item, directory / f"{plot.spec.key}.svg",
                                      plot.spec.title)]
        finally:
            self.set_cursor_time(cursor)
            self._arrange(shown)
            ci.setGeometry(QRectF(0, 0, self._graphics.width(), self._graphics.height()))
        return written

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self._timer.stop()
        self._hover_timer.stop()
        self._align_timer.stop()
        super().closeEvent(event)


#: A spike of the cut forces within this many samples of a pose whose loop Jacobian is
#: at most TOGGLE_SHARE as well conditioned as the run's median is put down to a toggle.
TOGGLE_WINDOW = 5
TOGGLE_SHARE = 0.6
#: Poses of a run whose loop conditioning makes its median.
TOGGLE_SAMPLES = 200


def spike_reason(robot, traj: Trajectory | None, field: str, peaks: list[int]) -> str:
    """Why a plot of `field` of `traj` spikes at sample indices `peaks`, as ", ..." to
    follow the spike's times ("" when nothing is known): an end stop pushing at that
    time (torques and forces), or, for the cut forces, a pose near a toggle of the loops
    (the conditioning of the loop Jacobian's dependent columns,
    `core.algorithms.mechanism_pose.dependent_jacobian_conditioning`, well under its
    median over the run)."""
    if traj is None or robot is None or not peaks:
        return ""
    if field == "tau" and traj.stop_forces is not None:
        hit = [int(np.argmax(np.abs(traj.stop_forces[k]))) for k in peaks
               if np.any(traj.stop_forces[k])]
        if hit:
            names = sorted(set(hit))
            joints = ", ".join(f"{j + 1} ({robot.link_names[j]})" for j in names)
            return (f", where joint{'s' * (len(names) > 1)} {joints} "
                    f"hit{'s' * (len(names) == 1)} {'an end stop' if len(names) == 1 else 'end stops'}")
    if field == "cut_forces" and robot.loops:
        from armdyn.core.algorithms.mechanism_pose import dependent_jacobian_conditioning

        every = max(1, len(traj) // TOGGLE_SAMPLES)
        typical = float(np.median([dependent_jacobian_conditioning(robot, q)[0]
                                   for q in traj.q[::every]]))
        near = [min(dependent_jacobian_conditioning(robot, traj.q[j])[0]
                    for j in range(max(0, k - TOGGLE_WINDOW),
                                   min(len(traj), k + TOGGLE_WINDOW + 1)))
                for k in peaks]
        worst = min(near)
        if typical > 0 and max(near) <= TOGGLE_SHARE * typical:
            return (f", near toggle poses of the loops (the loop Jacobian's "
                    f"\u03c3_min/\u03c3_max {worst:.2g} there, {typical:.2g} typically)")
    return ""


# ----- export helpers (every pyqtgraph panel's: plots, Compare, the Lab's tabs) -------------
def _offered(robot: Robot | Mechanism | None) -> set[str]:
    """The OPTIONAL_PLOTS `robot` has: the loop plots with loops, the floating ones
    with a free joint, the motor torques with a gear."""
    if robot is None:
        return set()
    return ((set(LOOP_PLOTS) if robot.loops else set())
            | (set(FLOATING_PLOTS) if _free_joints(robot) else set())
            | (set(GEARED_PLOTS) if _geared(robot) else set()))


def _geared(robot: Robot | Mechanism) -> bool:
    """Whether a joint of the model has a gear ratio other than 1."""
    return bool(np.any(gear_ratios(robot) != 1.0))


def _free_joints(robot: Robot | Mechanism) -> list[int]:
    """The model's free joints (floating bodies), in joint order."""
    return [j for j, kind in enumerate(robot.model.joint_types) if kind is JointType.FREE]


def grid_axes(time: bool = False) -> dict[str, GridAxis]:
    """Left, bottom and right axes for a new pg.PlotItem (``axisItems``), drawing
    their grid opaque (`GridAxis`); with `time`, the bottom one labels both ends of its
    range (`TimeAxis`)."""
    axes = {name: GridAxis(name) for name in ("left", "bottom", "right")}
    if time:
        axes["bottom"] = TimeAxis("bottom")
    return axes


def time_plot_pair(graphics: pg.GraphicsLayoutWidget) -> tuple[pg.PlotItem, pg.PlotItem]:
    """Two PlotItems, one over the other, on white in `graphics` (which should hold
    nothing yet): the upper one (the values) 3/5 of its height, the lower one (their
    difference, a residual) 2/5; both with `grid_axes(time=True)` and views without
    pyqtgraph's menu. Returns (upper, lower)."""
    graphics.setBackground("w")
    upper, lower = (pg.PlotItem(viewBox=pg.ViewBox(enableMenu=False),
                                axisItems=grid_axes(time=True)) for _ in range(2))
    graphics.addItem(upper, row=0, col=0)
    graphics.addItem(lower, row=1, col=0)
    graphics.ci.layout.setRowStretchFactor(0, 3)
    graphics.ci.layout.setRowStretchFactor(1, 2)
    return upper, lower


class SideLegend(pg.LegendItem):
    """pyqtgraph's legend in its PlotItem's layout, beside or below the plot area (never
    over the curves), black text on white in a grey box: `legend_beside`. Floating over
    the view it drew light grey text under the curves."""

    def __init__(self, **opts) -> None:
        super().__init__(offset=None, labelTextColor="#000", pen=pg.mkPen("#aaa"),
                         brush=pg.mkBrush("w"), **opts)

    def updateSize(self) -> None:  # noqa: N802 - pyqtgraph's name
        self.setMinimumSize(0.0, 0.0)  # (the last size must not clamp the new one)
        self.setMaximumSize(1e6, 1e6)
        super().updateSize()
        # its size for the PlotItem's layout (pyqtgraph only sets its geometry), with
        # room for the frame under its last row
        width, height = self.width() + 4, self.height() + 4
        self.setMinimumSize(width, height)
        self.setMaximumSize(width, height)

    def mouseDragEvent(self, ev) -> None:  # noqa: N802 - laid out, not dragged
        ev.ignore()


class CompactGraphics(pg.GraphicsLayoutWidget):
    """A GraphicsLayoutWidget that asks for `hint_height` px: in a scroll area over a
    word-wrapped label (the Lab's pages), Qt lays the page out at its preferred
    height for the width, and pyqtgraph's 480 px made a low dock scroll its plots."""

    def __init__(self, hint_height: int = 220, **kwargs) -> None:
        super().__init__(**kwargs)
        self._hint_height = hint_height

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(super().sizeHint().width(), self._hint_height)


def style_like_results(item: pg.PlotItem, title: str = "", **labels: str) -> None:
    """The Results plots' look for another panel's PlotItem (made with `grid_axes`):
    black axes, ticks and title, LABEL_STYLE axis titles (`labels`: side -> text), no SI
    prefix ("W (x1e-09)"), the opaque grid under the curves. pyqtgraph's default grey
    made the Lab's plots faint."""
    font = QFont()
    font.setPointSize(FONT_PT)
    for name in ("left", "bottom", "right"):
        axis = item.getAxis(name)
        axis.enableAutoSIPrefix(False)
        axis.setPen(pg.mkPen("#000", width=1))
        axis.setTextPen("#000")
        axis.setTickFont(font)
    for side, text in labels.items():
        item.setLabel(side, text, **LABEL_STYLE)
    if title:
        item.setTitle(title, size=TITLE_SIZE, color="#000")
        item.layout.setRowFixedHeight(0, TITLE_HEIGHT)
        item.titleLabel.setMaximumHeight(TITLE_HEIGHT)
    lay_axes_under(item, (item.vb,))


def legend_beside(item: pg.PlotItem, below: bool = False, columns: int = 1,
                  size: str = "9pt") -> SideLegend:
    """A `SideLegend` for `item`, right of its plot area (or `below` its time axis, in
    `columns` columns); the curves plotted with a ``name`` afterwards join it."""
    legend = SideLegend(labelTextSize=size, colCount=columns)
    row, column = (4, 1) if below else (2, 3)
    item.layout.addItem(legend, row, column)
    item.layout.setAlignment(legend, Qt.AlignTop | (Qt.AlignHCenter if below else Qt.AlignLeft))
    item.legend = legend  # PlotItem.addItem puts named curves into it
    return legend


def fit_axis_title(item: pg.PlotItem, side: str, full: str, style: dict,
                   short: str | None = None) -> None:
    """The title of `item`'s `side` axis: `full` if it fits along the plot area's height,
    else `short` (default: its unit alone, "(N, N m)" for "force (N, N m)"), `full` in
    the tooltip; in LABEL_STYLE-like `style`. Nothing for an axis whose title is
    hidden."""
    axis = item.getAxis(side)
    if not full or not axis.label.isVisibleTo(axis):
        return
    font = QFont()
    font.setPointSizeF(float(style["font-size"].removesuffix("pt")))
    fits = QFontMetricsF(font).horizontalAdvance(full) <= item.vb.rect().height() - 4
    if short is None:
        short = full[full.index("("):] if "(" in full else full
    text = full if fits else short
    if axis.labelText != text:
        axis.setLabel(text, **style)
    axis.setToolTip(full)


def align_axis_widths(items, minimum: float = AXIS_WIDTH,
                      right_minimum: float = NO_RIGHT_AXIS_WIDTH,
                      grow_only: bool = False) -> bool:
    """Give the PlotItems `items` (a column of plots over one time axis) left axes of one
    width and right axes of one width, each what the widest tick labels and title of
    the column need (`GridAxis.needed_width`, in steps of AXIS_WIDTH_STEP), at least
    `minimum` (left, and a right axis with values) or `right_minimum`: their plot areas
    then start and end at the same x, so a time is one vertical line through the
    column. With `grow_only` (while a run streams in) no axis gets narrower: fewer
    relayouts, each a repaint of every plot. True if a width changed."""
    changed = False
    for side, least in (("left", minimum), ("right", right_minimum)):
        axes = [item.getAxis(side) for item in items]
        shown = [a for a in axes if a.isVisible() and a.style["showValues"]]
        need = max([a.needed_width() for a in shown], default=0.0)
        if shown:
            least = max(least, minimum)
        width = max(least, AXIS_WIDTH_STEP * math.ceil(need / AXIS_WIDTH_STEP))
        if grow_only:
            width = max([width] + [a.fixedWidth or 0 for a in axes])
        for axis in axes:
            if axis.fixedWidth != width:
                axis.setWidth(width)
                changed = True
    return changed


def lay_axes_under(item: pg.PlotItem, views) -> None:
    """Put `item`'s axes, with the grid lines they draw, under its `views`: pyqtgraph
    paints them above, where an opaque grid (`GridAxis`) cuts a gap in every curve at
    every grid line (a faint translucent one hid little)."""
    z = min(view.zValue() for view in views) - AXES_BELOW_VIEWS
    for name in ("left", "bottom", "right", "top"):
        item.getAxis(name).setZValue(z)


def add_right_view(item: pg.PlotItem) -> pg.ViewBox:
    """A second view in `item` with its own y range on the right axis (prismatic
    joints, m or N, beside revolute ones in deg or N m): the same time axis, drawn under
    the main view (which takes the mouse), kept on the main view's place."""
    view = pg.ViewBox(enableMenu=False)
    view.setParentItem(item)
    view.setZValue(item.vb.zValue() - 1)
    view.setXLink(item.vb)
    item.showAxis("right")
    item.getAxis("right").linkToView(view)

    def follow() -> None:
        view.setGeometry(item.vb.geometry())
        view.linkedViewChanged(item.vb, view.XAxis)

    item.vb.sigResized.connect(follow)
    return view


def adopt_menus(item: pg.PlotItem, owner: QWidget) -> None:
    """Disable the PlotItem's context menus and make `owner` the Qt parent of their widgets.

    pyqtgraph creates them without a parent, so they would outlive the panel as
    hidden top-level windows until Python's garbage collector runs.
    """
    item.setMenuEnabled(False)
    menu = item.ctrlMenu
    menu.setParent(owner, menu.windowFlags())
    for action in item.findChildren(QWidgetAction):
        widget = action.defaultWidget()
        if widget is not None and widget.parent() is None:
            widget.setParent(owner, widget.windowFlags())
            widget.hide()


def write_png(item: pg.GraphicsWidget, path: str | Path, width: int = 1600) -> Path:
    """Render `item` (and what it holds) to a PNG file `width` px wide; returns the path."""
    exporter = pg_exporters.ImageExporter(item)
    exporter.parameters()["width"] = int(width)
    # in memory, then the one writer: a file that cannot be written is an error
    write_atomically(path, encode_image(exporter.export(toBytes=True), "png"))
    return Path(path)


def write_image(item: pg.GraphicsWidget, path: str | Path, title: str, width: int = 1600
                ) -> Path:
    """`write_png` or `write_svg` by the suffix of `path` (.png / .svg; else ValueError)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".svg":
        return write_svg(item, path, title)
    if suffix == ".png":
        return write_png(item, path, width)
    raise ValueError(f"export as .png or .svg, not {path.suffix!r}")


def write_svg(item: pg.GraphicsWidget, path: str | Path, title: str) -> Path:
    """Render the scene under `item` to an SVG file with Qt's SVG generator (the text
    as on screen; `title` is the file's title); returns the path.

    (pyqtgraph 0.14's SVGExporter fails on the closed paths Qt 6 writes,
    pyqtgraph issue #3495.)
    """
    source = item.sceneBoundingRect()
    target = QRectF(0, 0, source.width(), source.height())
    generator = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)  # keeps the plot's clip paths
    data = QByteArray()
    buffer = QBuffer(data)  # in memory, then the one writer (core.io.atomic)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator.setOutputDevice(buffer)
    generator.setSize(target.size().toSize())
    generator.setViewBox(target)
    generator.setTitle(title)
    generator.setResolution(item.scene().views()[0].logicalDpiX())  # fonts as on screen
    painter = QPainter(generator)
    try:
        painter.fillRect(target, QColor("white"))
        item.scene().render(painter, target, source)
    finally:
        painter.end()
    buffer.close()
    write_atomically(path, bytes(data))
    return Path(path)
