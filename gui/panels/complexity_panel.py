"""The Lab's complexity tab (issue #10): DeNOC forward dynamics against the composite-body
method, measured and counted for n = 1 .. several hundred links, beside the seeds'
formulas, on log-log axes.

The sweep is `core.lab.complexity.measure_costs`, run in a `gui.jobs.job.Job` (progress
bar; Stop ends it at once, also inside a count, through the sweep's stop event and the
job's cancel); the rows stream into two plots:

- time per call (us): each method's compiled kernel (solid, with markers) and the public
  `forward_dynamics` call (dotted), the kernels' crossover marked;
- operations: the multiplications (or additions, or both) our kernels execute, counted
  by `core.lab.op_count`, solid with markers; the papers' RFDSIM written in link frames
  (`core.lab.paper_formulation`), counted the same way, dash-dotted; the seeds' formulas
  dashed (seed 000 Table 2: RFDSIM (1999), Featherstone, Walker and Orin's O(n^3); seed
  001 Table 2: Mohan and Saha (2007)); the counted crossover and RFDSIM's against Walker
  and Orin marked.

Beside the plots, "the papers' numbers where ArmDyn differs" (`PapersNumbers`): RIDIM
and RFDSIM at n = 6 in three columns, the paper's table, the paper's formulation as
counted here and ArmDyn's kernels as counted (`core.lab.complexity.count_comparison`),
the notes on where they differ (`count_notes`), the n*/n+ entries of seed 001 Table 2
that contradict its formulas (`table2_note`) and the five-bar's reconstructed base
length (`core.lab.reconstructions.fivebar_note`).

No physics here: every number comes from `core.lab.complexity`. Curves are created once
and updated with setData from a timer. The sweep exports as CSV (`write_costs_csv`)
and the plots as PNG or SVG.
"""
from __future__ import annotations

import html
import math
import threading
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFileDialog,
                               QHBoxLayout, QHeaderView, QLabel, QProgressBar, QPushButton,
                               QSpinBox, QSplitter, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from armdyn.core.lab.complexity import (CostRow, CostSweep, Crossover, count_comparison,
                                        count_notes, crossover, default_n_values,
                                        measure_costs, seed_formula, table2_note,
                                        write_costs_csv)
from armdyn.core.lab.reconstructions import fivebar_note

from ..look.scroll import scroll_area
from ..plots.plots_panel import (CompactGraphics, adopt_menus, grid_axes, legend_beside,
                                 style_like_results, write_image)
from ..jobs.job import Job

__all__ = ["ComplexityPanel", "PapersNumbers", "REFRESH_MS", "FORMULA_CURVES", "PAPER_N"]

#: Redraw period while a sweep streams rows, ms.
REFRESH_MS = 100
DENOC_COLOR = "#0072B2"
COMPOSITE_COLOR = "#D55E00"
PAPER_COLOR = "#CC79A7"
#: The arm size of the papers' tables' n = 6 columns.
PAPER_N = 6
#: Seed formulas drawn on the operations plot: (key, colour, legend).
FORMULA_CURVES = (("saha1999_fd", DENOC_COLOR, "RFDSIM 1999 (seed 000)"),
                  ("mohan_saha2007", "#009E73", "Mohan-Saha 2007 (seed 001)"),
                  ("featherstone1983", "#7F7F7F", "Featherstone 1983"),
                  ("walker_orin1982", COMPOSITE_COLOR, "Walker-Orin, O(n\u00b3)"))
#: The formula pair whose crossover is marked (the paper's own comparison, seed 000).
SEED_PAIR = ("saha1999_fd", "walker_orin1982")
KINDS = (("M", "multiplications / divisions (M)"), ("A", "additions / subtractions (A)"),
         ("M+A", "both (M + A)"))


#: Tick values of the n axes (log scale).
N_TICKS = (1, 2, 5, 10, 20, 50, 100, 200, 500)


def _log_line(color: str, style=Qt.PenStyle.SolidLine, position: float = 0.92
              ) -> pg.InfiniteLine:
    line = pg.InfiniteLine(angle=90, movable=False,
                           pen=pg.mkPen(color, width=1.5, style=style),
                           label="", labelOpts={"position": position, "color": color,
                                                "fill": (255, 255, 255, 200)})
    line.hide()
    return line


class ComplexityPanel(QWidget):
    """Sweep controls, the two log-log plots and the crossover read-out.

    Methods: `start(n_values=None, budget_s=None)`, `stop()`, `is_running()`,
    `set_kind("M" | "A" | "M+A")`, `export_csv(path)`, `export_image(path)` (.png /
    .svg), `shutdown()`. Signal ``sweep_done(object)``: the CostSweep when a sweep ends
    (finished or stopped).
    """

    sweep_done = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("complexityPanel")
        self.sweep = CostSweep()
        self._job: Job | None = None
        self._stop = threading.Event()  # the running sweep's: stops it inside a count
        self._n_max_shown = 1
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setObjectName("complexityRefresh")
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._refresh)

        self.n_max = QSpinBox()
        self.n_max.setObjectName("complexityNMax")
        self.n_max.setRange(2, 600)
        self.n_max.setValue(200)
        self.n_max.setToolTip("Largest chain of the sweep (n = 1 .. 16, then steps of 25 %)")
        self.count_check = QCheckBox("count operations up to n =")
        self.count_check.setChecked(True)
        self.count_check.setToolTip("Run our kernels' Python source on counting numbers "
                                    "(core.lab.op_count): slow, a few seconds at n = 200")
        self.count_max = QSpinBox()
        self.count_max.setRange(1, 600)
        self.count_max.setValue(200)
        self.count_check.toggled.connect(self.count_max.setEnabled)
        self.kind = QComboBox()
        for key, title in KINDS:
            self.kind.addItem(title, key)
        self.kind.currentIndexChanged.connect(self._on_kind)
        self.run_button = QPushButton("\u25b6 Run sweep")
        self.run_button.setObjectName("complexityRun")
        self.run_button.clicked.connect(lambda: self.start())
        self.stop_button = QPushButton("\u25a0 Stop")
        self.stop_button.clicked.connect(self.stop)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.status = QLabel("Time and count forward dynamics on random revolute chains.")
        self.status.setObjectName("complexityStatus")
        self.summary = QLabel()
        self.summary.setObjectName("complexitySummary")
        self.summary.setWordWrap(True)
        # no height-for-width: a scroll area then lays the page out at its preferred
        # height for the width, which scrolled the plots of a low Lab dock
        policy = self.summary.sizePolicy()
        policy.setHeightForWidth(False)
        self.summary.setSizePolicy(policy)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.csv_button = QPushButton("CSV\u2026")
        self.png_button = QPushButton("PNG\u2026")
        self.svg_button = QPushButton("SVG\u2026")
        self.csv_button.clicked.connect(lambda: self._ask_export("csv"))
        self.png_button.clicked.connect(lambda: self._ask_export("png"))
        self.svg_button.clicked.connect(lambda: self._ask_export("svg"))

        self.graphics = CompactGraphics(200)
        self.graphics.setBackground("w")
        self.graphics.setMinimumHeight(190)
        self.time_plot = self.graphics.addPlot(row=0, col=0, axisItems=grid_axes())
        self.ops_plot = self.graphics.addPlot(row=0, col=1, axisItems=grid_axes())
        for plot, title, left, columns in (
                (self.time_plot, "time per call", "time (\u00b5s)", 2),
                (self.ops_plot, "operations per call", "operations", 2)):
            plot.setLogMode(x=True, y=True)
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.hideAxis("right")
            style_like_results(plot, title, bottom="n (links)", left=left)
            # under the plot in two columns, not over the curves (pyqtgraph's floating
            # legend drew light grey text under them)
            legend_beside(plot, below=True, columns=columns, size="8pt")
            plot.getAxis("bottom").setTicks([[(math.log10(v), str(v)) for v in N_TICKS], []])
            adopt_menus(plot, self)
        self.curves: dict[str, pg.PlotDataItem] = {}
        symbol = {"symbol": "o", "symbolSize": 5}
        for key, name, color, style, plot, extra in (
                ("kernel_denoc", "DeNOC (kernel)", DENOC_COLOR, Qt.PenStyle.SolidLine,
                 self.time_plot, symbol),
                ("kernel_composite", "composite (kernel)", COMPOSITE_COLOR,
                 Qt.PenStyle.SolidLine, self.time_plot, symbol),
                ("time_denoc", "DeNOC (call)", DENOC_COLOR, Qt.PenStyle.DotLine,
                 self.time_plot, {}),
                ("time_composite", "composite (call)", COMPOSITE_COLOR, Qt.PenStyle.DotLine,
                 self.time_plot, {}),
                ("count_denoc", "DeNOC, counted", DENOC_COLOR, Qt.PenStyle.SolidLine,
                 self.ops_plot, symbol),
                ("count_composite", "composite, counted", COMPOSITE_COLOR,
                 Qt.PenStyle.SolidLine, self.ops_plot, symbol),
                ("count_paper", "RFDSIM in link frames, counted", PAPER_COLOR,
                 Qt.PenStyle.DashDotLine, self.ops_plot, {"symbol": "o", "symbolSize": 4})):
            pen = pg.mkPen(color, width=1 if style == Qt.PenStyle.DotLine else 2, style=style)
            brush = {"symbolBrush": color, "symbolPen": color} if extra else {}
            self.curves[key] = plot.plot([], [], pen=pen, name=name, **extra, **brush)
        for key, color, name in FORMULA_CURVES:
            self.curves[key] = self.ops_plot.plot(
                [], [], pen=pg.mkPen(color, width=1.5, style=Qt.PenStyle.DashLine), name=name)
        self.time_line = _log_line("#000")
        self.time_plot.addItem(self.time_line, ignoreBounds=True)
        self.count_line = _log_line("#000")
        # (its label low in the plot: near the top it ran into the counted crossover's)
        self.seed_line = _log_line("#555", Qt.PenStyle.DashLine, position=0.15)
        for line in (self.count_line, self.seed_line):
            self.ops_plot.addItem(line, ignoreBounds=True)

        controls = QHBoxLayout()
        controls.addWidget(QLabel("n up to"))
        controls.addWidget(self.n_max)
        controls.addWidget(self.count_check)
        controls.addWidget(self.count_max)
        controls.addWidget(QLabel("show"))
        controls.addWidget(self.kind, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.progress, 1)
        buttons.addWidget(QLabel("Export"))
        for b in (self.csv_button, self.png_button, self.svg_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(controls)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        # the plots, and beside them the papers' numbers (scrolling on their own)
        self.papers = PapersNumbers()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.graphics)
        self.splitter.addWidget(scroll_area(self.papers, name="complexityPapersArea",
                                            vertical_only=True, fit_width=True))
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.summary)
        self._update_buttons()
        self._draw_formulas()

    # ----- the sweep --------------------------------------------------------------------
    def start(self, n_values=None, budget_s: float | None = None) -> None:
        """Start a sweep (a running one is stopped first): n_values (ascending) or
        `default_n_values(n_max)`; budget_s: timing per call kind and n (s)."""
        self._cancel()
        if n_values is None:
            n_values = default_n_values(self.n_max.value())
        n_values = [int(n) for n in n_values]
        kwargs = {"count": self.count_check.isChecked(), "count_max_n": self.count_max.value()}
        if budget_s is not None:
            kwargs["budget_s"] = float(budget_s)
        self._stop = threading.Event()
        kwargs["stop"] = self._stop
        self.sweep = CostSweep()
        self._n_max_shown = max(n_values)
        job = Job(measure_costs, n_values, progress_of=lambda row: row.progress,
                  name="complexity sweep", **kwargs)
        job.yielded.connect(self._on_row)
        job.progress.connect(lambda f: self.progress.setValue(round(1000 * f)))
        job.finished.connect(self._on_finished)
        job.failed.connect(self._on_failed)
        job.done.connect(self._on_done)
        self._job = job
        self.progress.setValue(0)
        self.status.setText(f"Sweep n = {n_values[0]} .. {n_values[-1]}: timing"
                            + (" and counting\u2026" if kwargs["count"] else "\u2026"))
        self._draw_formulas()
        self._dirty = True
        self._timer.start()
        job.start()
        self._update_buttons()

    def stop(self) -> None:
        """Stop the sweep now (its thread leaves a count at once, or ends at its next
        row): the rows so far stay, ``sweep_done`` follows at once."""
        if self._job is not None:
            self._stop.set()
            n = len(self.sweep.rows)
            self.status.setText(f"Sweep stopped: {n} size{'s' * (n != 1)}.")
            self._job.cancel()  # done() at once: _on_done ends the sweep

    def is_running(self) -> bool:
        return self._job is not None

    def _cancel(self) -> None:
        """End a running sweep silently (a new sweep, the window closing)."""
        job, self._job = self._job, None
        if job is not None:
            self._stop.set()
            job.cancel()

    def _current(self) -> bool:
        return self._job is not None and self.sender() is self._job

    def _on_row(self, row: CostRow) -> None:
        self.sweep.rows.append(row)
        self.status.setText(f"n = {row.n}: DeNOC {row.kernel_denoc * 1e6:.2f} \u00b5s, "
                            f"composite {row.kernel_composite * 1e6:.2f} \u00b5s per kernel call"
                            + (f"; {row.count_denoc.M} M vs {row.count_composite.M} M counted"
                               if row.count_denoc is not None else ""))
        self._dirty = True

    def _on_finished(self, _result) -> None:
        n = len(self.sweep.rows)
        self.status.setText(f"Sweep finished: {n} size{'s' * (n != 1)}.")
        self.progress.setValue(1000)

    def _on_failed(self, message: str, _error: BaseException) -> None:
        self.status.setText(f"Sweep failed: {message}")

    def _on_done(self) -> None:
        """The sweep ended (finished, failed or stopped): the plots' last refresh."""
        if not self._current():
            return  # a sweep cancelled silently
        self._job = None
        self._timer.stop()
        self._refresh(force=True)
        self._update_buttons()
        self.sweep_done.emit(self.sweep)

    def _update_buttons(self) -> None:
        running = self._job is not None
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        has = bool(self.sweep.rows)
        for b in (self.csv_button, self.png_button, self.svg_button):
            b.setEnabled(has and not running)

    # ----- drawing ------------------------------------------------------------------------
    def kind_key(self) -> str:
        return self.kind.currentData()

    def set_kind(self, kind: str) -> None:
        """Show operations of `kind`: "M", "A" or "M+A"."""
        self.kind.setCurrentIndex([k for k, _ in KINDS].index(kind))

    def _on_kind(self) -> None:
        self._draw_formulas()
        self._refresh(force=True)

    def _formula_values(self, key: str, n: np.ndarray) -> np.ndarray:
        f = seed_formula(key)
        kind = self.kind_key()
        y = {"M": f.M(n), "A": f.A(n), "M+A": f.M(n) + f.A(n)}[kind]
        return np.where(y > 0, y, np.nan)

    def _draw_formulas(self) -> None:
        n = np.arange(1, max(self._n_max_shown, self.n_max.value()) + 1, dtype=float)
        for key, _, _ in FORMULA_CURVES:
            y = self._formula_values(key, n)
            ok = np.isfinite(y)
            self.curves[key].setData(n[ok], y[ok])
        lin, cub = (self._formula_values(k, n) for k in SEED_PAIR)
        self._mark(self.seed_line, crossover(n, lin, cub),
                   f"{seed_formula(SEED_PAIR[0]).name.split(',')[0]} vs Walker-Orin")

    @staticmethod
    def _mark(line: pg.InfiniteLine, c: Crossover | None, what: str) -> None:
        if c is None:
            line.hide()
            return
        line.setPos(math.log10(c.n_est))      # the axes are logarithmic
        line.label.setFormat(f"{what}: n \u2248 {c.n_est:.1f}")
        line.show()

    def _refresh(self, force: bool = False) -> None:
        if not (self._dirty or force):
            return
        self._dirty = False
        sweep = self.sweep
        n = sweep.n
        kind = self.kind_key()
        for key in ("kernel_denoc", "kernel_composite", "time_denoc", "time_composite"):
            prefix, method = key.split("_")
            y = sweep.times(method, kernel=prefix == "kernel") * 1e6 if len(n) else n
            self.curves[key].setData(n, y)
        for method in ("denoc", "composite", "paper"):
            y = sweep.counts(method, kind) if len(n) else n
            ok = np.isfinite(y)
            self.curves[f"count_{method}"].setData(n[ok], y[ok])
        t_cross = sweep.time_crossover() if len(n) else None
        c_cross = sweep.count_crossover(kind) if len(n) else None
        self._mark(self.time_line, t_cross, "kernels")
        self._mark(self.count_line, c_cross, "counted")
        self.summary.setText(self._summary(t_cross, c_cross))

    def _summary(self, t_cross: Crossover | None, c_cross: Crossover | None) -> str:
        if not self.sweep.rows:
            return ""
        kind = self.kind_key()
        n_last = int(self.sweep.n[-1])

        def where(c: Crossover | None) -> str:
            if c is None:
                return f"not within n \u2264 {n_last}"
            return f"from n = {c.n} (\u2248 {c.n_est:.1f})"

        lines = [f"DeNOC faster than the composite method (time, median of 3 sizes): "
                 f"kernels {where(t_cross)}; "
                 f"public calls {where(self.sweep.time_crossover(kernel=False))}."]
        counts = self.sweep.counts("denoc", kind)
        ok = np.flatnonzero(np.isfinite(counts))
        if ok.size:
            lines.append(f"Counted {kind}: DeNOC cheaper {where(c_cross)}.")
            if ok.size >= 2:
                i, j = ok[-2], ok[-1]
                dn = self.sweep.n[j] - self.sweep.n[i]
                slope = (counts[j] - counts[i]) / dn
                own = self.sweep.counts("paper", kind)
                ref = seed_formula(SEED_PAIR[0])
                paper = {"M": ref.mul[1], "A": ref.add[1], "M+A": ref.mul[1] + ref.add[1]}[kind]
                lines.append(f"Ours: {slope:.0f} {kind} per link; the paper's RFDSIM in link "
                             f"frames: {(own[j] - own[i]) / dn:.0f}; its table (seed 000 "
                             f"Table 2): {float(paper):.0f}.")
        n = np.arange(1, 1001, dtype=float)
        seed = crossover(n, *(self._formula_values(k, n) for k in SEED_PAIR))
        if seed is not None:
            lines.append(f"Seed 000 Table 2, RFDSIM vs Walker and Orin ({kind}): from n = "
                         f"{seed.n}.")
        return " ".join(lines)

    # ----- export ---------------------------------------------------------------------------
    def export_csv(self, path: str | Path) -> Path:
        """Write the sweep as CSV (`core.lab.complexity.write_costs_csv`); returns the path."""
        path = Path(path)
        write_costs_csv(self.sweep, path)
        return path

    def export_image(self, path: str | Path, width: int = 1600) -> Path:
        """Write both plots as PNG (`width` px wide) or SVG, by the suffix of `path`."""
        self._refresh(force=True)
        return write_image(self.graphics.ci, path, "ArmDyn complexity lab", width)

    def _ask_export(self, kind: str) -> None:
        filters = {"csv": "CSV (*.csv)", "png": "PNG image (*.png)", "svg": "SVG image (*.svg)"}
        path, _ = QFileDialog.getSaveFileName(self, f"Export the sweep as {kind.upper()}",
                                              f"complexity.{kind}", filters[kind])
        if not path:
            return
        if not path.lower().endswith(f".{kind}"):
            path += f".{kind}"
        try:
            (self.export_csv if kind == "csv" else self.export_image)(path)
            self.status.setText(f"Wrote {path}")
        except (OSError, ValueError) as err:
            self.status.setText(f"Export failed: {err}")

    def shutdown(self) -> None:
        """Cancel the sweep (its thread ends on its own) and stop the refresh timer."""
        self._cancel()
        self._timer.stop()


class PapersNumbers(QWidget):
    """The papers' numbers where ArmDyn differs: RIDIM and RFDSIM at n = `PAPER_N` in three
    columns (the paper's table, the paper's formulation counted here, ArmDyn's kernels
    counted; each with its formula in n), and the notes on where they differ, on seed
    001 Table 2's crossover columns and on the five-bar's reconstructed base length.
    Every number comes from `core.lab` (counted when the panel is built, a few ms)."""

    COLUMNS = ("paper's\ntable", "paper's formu-\nlation, counted", "ArmDyn's ker-\nnels, counted")
    TOOLTIPS = ("The paper's printed count (seed 000 Tables 1 and 2)",
                "The paper's recursion written in link frames, kinematics excluded, run on "
                "counting numbers (core.lab.paper_formulation)",
                "ArmDyn's compiled kernels, base frame, per-call kinematics included, run "
                "on counting numbers (core.lab.op_count)")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("complexityPapers")
        self.comparison = count_comparison(PAPER_N)
        heading = QLabel(f"<b>The papers' numbers where ArmDyn differs</b><br>operations "
                         f"of one call on an all-revolute arm of n = {PAPER_N} links (M: "
                         f"multiplications, A: additions), and as functions of n")
        heading.setWordWrap(True)
        self.table = QTableWidget(len(self.comparison), len(self.COLUMNS))
        self.table.setObjectName("complexityPapersTable")
        for col, (title, tip) in enumerate(zip(self.COLUMNS, self.TOOLTIPS)):
            item = QTableWidgetItem(title)
            item.setToolTip(tip)
            self.table.setHorizontalHeaderItem(col, item)
        self.table.setVerticalHeaderLabels(
            [f"{'RIDIM' if c.problem == 'inverse' else 'RFDSIM'}\n{c.problem}"
             for c in self.comparison])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(True)
        for r, c in enumerate(self.comparison):
            for col, (count, source) in enumerate((
                    (c.table, c.source), (c.formulation, "core.lab.paper_formulation"),
                    (c.kernels, "core.lab.op_count"))):
                m_form, a_form = count.formulas().split(", ")
                item = QTableWidgetItem(f"{count.values()}\n{m_form}\n{a_form}")
                item.setToolTip(source)
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.table.setItem(r, col, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        frame = 2 * self.table.frameWidth()
        self.table.setFixedSize(
            self.table.verticalHeader().sizeHint().width() + frame
            + sum(self.table.columnWidth(c) for c in range(self.table.columnCount())),
            header.sizeHint().height() + frame
            + sum(self.table.rowHeight(r) for r in range(self.table.rowCount())))
        self.notes = QLabel(self.notes_html())
        self.notes.setObjectName("complexityPapersNotes")
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.RichText)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notes.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 4, 0)
        layout.addWidget(heading)
        layout.addWidget(self.table)
        layout.addWidget(self.notes, 1)

    def note_texts(self) -> list[str]:
        """The notes, plain: where the columns differ, Table 2's crossovers, the five-bar."""
        return [*count_notes(*self.comparison), table2_note(), fivebar_note()]

    def notes_html(self) -> str:
        """The notes as a list, each one's lead-in (up to its first colon) in bold."""
        items = []
        for text in self.note_texts():
            lead, sep, rest = text.partition(": ")
            if sep and len(lead) <= 60 and lead.count("(") == lead.count(")"):
                items.append(f"<li><b>{html.escape(lead)}</b>: {html.escape(rest)}</li>")
            else:
                items.append(f"<li>{html.escape(text)}</li>")
        return f"<ul style='margin-left: -24px'>{''.join(items)}</ul>"
