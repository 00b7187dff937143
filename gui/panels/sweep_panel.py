"""The Sweep panel: the window's run over a grid of changes, its torque envelope, its
worst point played in 3D (issue #25; the core: `core.sweeps`, docs/sweeps.md).

Set-up (`gui.panels.sweep_setup.SweepSetup`): the run is the Run panel's current one,
taken when the panel is shown, when the Run panel's motion or log changes, and again for
each sweep (`follow_window_run`): inverse dynamics along the Run panel's motion (a law
from the current pose to its target, a log, via points, a Fourier series, a tool path;
the panel says which fields such a motion keeps, and why a motion cannot be swept yet),
or a free fall from the current pose, with its duration, sample step and free-fall
options (`gui.jobs.sweeps.sweep_run`);
the grid's axes are typed and checked by the core as they are added.

Running: `core.sweeps.sweep.sweep_chunks` in a `gui.jobs.job.Job` (its progress after
each batch, at least every 0.1 s); the results are redrawn from a timer (REFRESH_MS)
from a snapshot of the points finished (`SweepResult.snapshot`), never per batch.
Cancel returns at once and keeps the points finished by then (the others "cancelled").

Results (`gui.panels.sweep_results.SweepResults`): the envelope, the heat map, the
table of points, the worst point. "Show in Run panel" runs a point (its own model and
run, `gui.jobs.sweeps.point_spec`) in the Run panel as a normal run: its torques in the
Results, its motion in the 3D view. Export writes the command line's CSV
(`core.sweeps.sweep.write_sweep_csv`, atomically).
"""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (QHBoxLayout, QProgressBar, QPushButton, QSplitter,
                               QVBoxLayout, QWidget)

from armdyn.core import ArmDynError
from armdyn.core.sweeps.fields import GEOMETRY_FIELDS, typed_units
from armdyn.core.sweeps.sweep import (SweepError, SweepProgress, SweepResult,
                                      write_sweep_csv)

from ..jobs.job import Job
from ..jobs.motion_choice import MotionKind
from ..jobs.runs import RunKind, RunSpec
from ..jobs.sweeps import ANGLE_UNIT, point_spec, sweep_run, sweep_spec_chunks
from ..look.scroll import scroll_area
from ..look.text import plain_label
from .sweep_results import SweepResults
from .sweep_setup import SweepSetup

__all__ = ["SweepPanel", "REFRESH_MS"]

#: The results are redrawn at most this often while a sweep runs, ms.
REFRESH_MS = 250


class SweepPanel(QWidget):
    """Set-up, Run / Cancel / Export, progress, and the results of one sweep.

    `window`: the `MainWindow` (its session, Run panel and file dialogs).
    Signals: ``finished()`` a sweep ended (done, cancelled or failed).
    Attributes: ``setup`` (`SweepSetup`), ``results`` (`SweepResults`), ``result`` (the
    last `SweepResult` shown, None before the first sweep).
    """

    finished = Signal()

    def __init__(self, window, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._window = window
        self.result: SweepResult | None = None
        self._spec: RunSpec | None = None
        self._swept: RunSpec | None = None  # the run of the last sweep started
        self._job: Job | None = None
        self._progress: SweepProgress | None = None
        self._refresh = QTimer(self)
        self._refresh.setInterval(REFRESH_MS)
        self._refresh.timeout.connect(self._show_progress)
        self._build()
        self.follow_window_run()

    def _build(self) -> None:
        self._run_text = plain_label("")
        self._run_text.setWordWrap(True)
        self._run_text.setToolTip("The sweep runs the Run panel's current run at every "
                                  "point of the grid")
        self.setup = SweepSetup()
        self.setup.changed.connect(self._update_buttons)
        self._start = QPushButton("Run Sweep")
        self._start.clicked.connect(self.start)
        self._cancel = QPushButton("Cancel")
        self._cancel.setToolTip("Stop now, keeping the points finished")
        self._cancel.clicked.connect(self.cancel)
        self._export = QPushButton("Export CSV\u2026")
        self._export.setToolTip("The table as `armdyn sweep` writes it")
        self._export.clicked.connect(self.ask_export_csv)
        buttons = QHBoxLayout()
        for b in (self._start, self._cancel, self._export):
            buttons.addWidget(b)
        self._bar = QProgressBar()
        self._bar.setRange(0, 1000)
        self._bar.setTextVisible(False)
        self._bar.setMaximumHeight(12)
        self._status = plain_label("")
        self._status.setWordWrap(True)

        setup = QWidget()
        column = QVBoxLayout(setup)
        column.setContentsMargins(6, 4, 6, 4)
        column.addWidget(self._run_text)
        column.addWidget(self.setup, 1)
        left = QWidget()
        left_column = QVBoxLayout(left)
        left_column.setContentsMargins(0, 0, 0, 4)
        left_column.addWidget(scroll_area(setup, name="sweepSetup", vertical_only=True), 1)
        self.setup.footer.layout().setContentsMargins(6, 0, 6, 0)
        left_column.addWidget(self.setup.footer)
        left_column.addLayout(buttons)
        left_column.addWidget(self._bar)
        left_column.addWidget(self._status)

        self.results = SweepResults()
        self.results.point_requested.connect(self.show_point)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.results)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([360, 1000])
        split.setChildrenCollapsible(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._update_buttons()

    # ----- the run it sweeps ------------------------------------------------------------
    def follow_window_run(self) -> None:
        """Take the Run panel's current run (and the window's model) as the sweep's."""
        if self.is_running():
            return
        try:
            spec = self._window.run_panel.spec()
        except ValueError:  # no model yet
            spec = None
        self._spec = spec
        if spec is None:
            self._run_text.setText("Load a model first.")
            self.setup.set_base(None, None)
            return
        try:
            run = sweep_run(spec, build=False)  # a tool path is solved in the sweep's thread
        except ArmDynError as err:  # no log read yet
            self._spec = None
            self._run_text.setText(f"The Run panel's motion cannot be swept yet: {err}")
            self.setup.set_base(spec.model, None)
            self._update_buttons()
            return
        self.setup.set_base(spec.model, run)
        self._run_text.setText(self._describe(spec, run))
        self._update_buttons()

    @staticmethod
    def _describe(spec: RunSpec, run) -> str:
        if spec.kind is RunKind.INVERSE and run.motion is None:
            text = (f"Each point: the Run panel's inverse dynamics along {run.what}, from "
                    f"the current pose to its target in {spec.duration:g} s")
        elif spec.kind is RunKind.INVERSE:
            step = ("its own samples" if spec.motion.kind is MotionKind.MEASURED
                    else f"dt {spec.dt:g} s")
            text = (f"Each point: the Run panel's inverse dynamics along {run.what} "
                    f"({run.duration:g} s, {step}). It has its own duration and poses: T, "
                    "target and start do not vary")
            if run.on_geometry:
                text += ", nor the links' a, b, alpha and theta (the tool keeps its path)"
            return text + "."
        else:
            text = (f"Each point: the Run panel's free fall, from the current pose at rest "
                    f"for {spec.duration:g} s")
            if spec.penalty or spec.live:
                text += " (by Lagrange multipliers, not live)"
        return text + f", dt {spec.dt:g} s."

    # ----- running ----------------------------------------------------------------------
    @Slot()
    def start(self) -> bool:
        """Sweep the Run panel's run over the grid; False (the core's message shown) if
        there is no grid or an axis no longer reads for the model and run. The core
        checks the whole grid first, in the sweep's thread, before any point runs (a
        refusal: its message under the axes, `message`)."""
        self.follow_window_run()
        if self.is_running() or self._spec is None:
            return False
        spec = self._spec
        try:
            axes = self.setup.axes()
            if not axes:
                raise ArmDynError("Add a field to vary first.")
            sweep_run(spec, build=False)
        except ArmDynError as err:
            self.setup.show_message(str(err))
            return False
        self.setup.show_message("")
        job = Job(sweep_spec_chunks, spec, axes, progress_of=lambda p: p.fraction,
                  name="sweep", **self.setup.engine())
        self._swept = spec
        job.yielded.connect(self._on_progress)
        job.progress.connect(lambda f: self._bar.setValue(round(1000 * f)))
        job.finished.connect(self._on_finished)
        job.failed.connect(self._on_failed)
        self._job, self._progress = job, None
        self._began = time.perf_counter()
        self._bar.setValue(0)
        self._status.setText(f"Starting {self.setup.point_count()} points\u2026")
        self.results.show_result(None)
        self.result = None
        job.start()
        self._refresh.start()
        self._update_buttons()
        return True

    @Slot()
    def cancel(self) -> None:
        """Stop the sweep now, keeping the points finished (the others "cancelled")."""
        job, self._job = self._job, None
        if job is None:
            return
        job.cancel()
        self._refresh.stop()
        if self._progress is not None:
            self.result = self._progress.result.snapshot()
            self.results.show_result(self.result)
            self._status.setText(f"Cancelled: {self.result.done} of {self.result.size} "
                                 f"points kept ({self.result.failed} failed).")
        else:
            self._status.setText("Cancelled before any point finished.")
        self._update_buttons()
        self.finished.emit()

    def is_running(self) -> bool:
        return self._job is not None

    def shutdown(self) -> None:
        """Cancel a running sweep (the window closing)."""
        job, self._job = self._job, None
        if job is not None:
            job.cancel()
        self._refresh.stop()

    def run_text(self) -> str:
        """What each point runs, or why the Run panel's run cannot be swept yet."""
        return self._run_text.text()

    def status_text(self) -> str:
        return self._status.text()

    def message(self) -> str:
        """The set-up's last refusal (the core's message), or ""."""
        return self.setup.message()

    @Slot(object)
    def _on_progress(self, progress: SweepProgress) -> None:
        self._progress = progress

    @Slot()
    def _show_progress(self) -> None:
        p = self._progress
        if p is None or self._job is None:
            return
        self.result = p.result.snapshot()
        self.results.show_result(self.result)
        self._status.setText(f"{self.result.done} of {p.total} points "
                             f"({self.result.failed} failed), {p.elapsed:.1f} s\u2026")

    @Slot(object)
    def _on_finished(self, result: SweepResult) -> None:
        self._job = None
        self._refresh.stop()
        self.result = result
        self.results.show_result(result)
        ok = result.done - result.failed
        self._status.setText(f"Done: {result.size} points on {result.engine} in "
                             f"{result.elapsed:.2f} s ({ok} ok, {result.failed} failed).")
        self._update_buttons()
        self.finished.emit()

    @Slot(str, object)
    def _on_failed(self, message: str, _error: BaseException) -> None:
        self._job = None
        self._refresh.stop()
        if self._progress is not None:
            self.result = self._progress.result.snapshot()
            self.results.show_result(self.result)
        if isinstance(_error, SweepError):  # refused by the core before any work
            self.setup.show_message(message)
            self._status.setText("The grid was refused (see above).")
        elif isinstance(_error, ArmDynError) and self._progress is None:  # building it
            self._status.setText(f"The Run panel's motion cannot be swept: {message}")
        else:
            self._status.setText(f"The sweep stopped: {message}")
        self._update_buttons()
        self.finished.emit()

    def _update_buttons(self) -> None:
        running = self.is_running()
        self._start.setEnabled(not running and self._spec is not None
                               and self.setup.point_count() > 0)
        self._cancel.setEnabled(running)
        self._export.setEnabled(not running and self.result is not None)
        self.setup.setEnabled(not running)
        self.setup.footer.setEnabled(not running)

    # ----- the results --------------------------------------------------------------------
    def export_csv(self, path: str | Path) -> bool:
        """Write the table to `path` as `armdyn sweep` does (atomically); False, with
        why in the status line, if it cannot be written."""
        result = self.result
        if result is None:
            return False
        try:
            write_sweep_csv(result, path, typed_units(result.plan.axes, ANGLE_UNIT))
        except (OSError, ArmDynError) as err:
            self._status.setText(f"Cannot write {path}: {err}")
            return False
        self._status.setText(f"Saved {path}")
        return True

    @Slot()
    def ask_export_csv(self) -> bool:
        if self.result is None:
            return False
        files = self._window.files
        stem = Path(files.suggested_name()).with_suffix("")
        path = files.ask_save_path("Export Sweep", "CSV files (*.csv)", ".csv",
                                   f"{stem}_sweep.csv")
        return path is not None and self.export_csv(path)

    @Slot(int)
    def show_point(self, i: int) -> bool:
        """Run point `i` (0-based, grid order) in the Run panel as a normal run (its own
        model and run); False, with why in the status line, if it cannot be."""
        result = self.result
        if result is None or not 0 <= i < result.size:
            return False
        try:
            spec = point_spec(result, i, self._swept)
        except ArmDynError as err:
            self._status.setText(str(err))
            return False
        self._window.run_panel.show_run(spec)
        text = f"Point {i + 1} runs in the Run panel."
        if any(a.field.what == "link" and a.field.key in GEOMETRY_FIELDS
               for a in result.plan.axes):
            text += (" The 3D view draws the window's model: this point's changed "
                     "lengths and angles are not drawn.")
        self._status.setText(text)
        return True
