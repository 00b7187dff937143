"""Compare two runs on one time axis: "what changes if the forearm is twice as heavy"
(issue #10).

Run A is the window's model; run B is the same model with a list of changes (a link's
mass, a, b, mass centre, inertia, joint damping: times a factor or a new value) or
another model file. Both take the same run: inverse dynamics along the cycloid from
the session's pose to the Run panel's target pose (`RunPanel.target_pose`), or a free
fall from the session's pose (`RunPanel.fall_method`), over the same duration.

The Compare dock (View > Compare Runs, Ctrl+K; tabbed with Results, Inspect, Lab;
gui/panels/compare_dock.py) holds a `ComparePanel`, built from:

- `CompareForm` (compare_form.py): B's changes or file, the run's kind, duration and
  damping, Compare / Stop / CSV, progress, status; a change the core refuses is not
  added and its message is shown
- `ComparisonRun` (compare_run.py): A then B in one `gui.jobs.job.Job` over core's own
  generators (`gui.jobs.comparison.comparison_chunks`); Stop ends it at once with what
  was computed
- `ComparePlots` (compare_plots.py): one quantity for all joints or one, A solid and B
  dashed, the difference B - A below
- a playback bar (`gui.plots.playback.PlaybackBar` over run A): the 3D view shows A's arm,
  and B's arm as a translucent ghost at the same time (`gui.scene.compare_ghost`); the
  ghost also follows the window's own playback; it is removed when the dock is hidden
- CSV export of both runs side by side (`core.io.atomic.write_atomically`)

The Qt-free part (changes, the two specs, the generator, the CSV text) is
`gui.jobs.comparison`. Nothing here computes dynamics.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from armdyn.core import ArmDynError, Mechanism, Robot
from armdyn.core.io.atomic import write_atomically
from armdyn.core.sim.trajectory import Trajectory

from ..jobs.comparison import (Change, ChangeField, ChangeOp, Comparison, apply_changes,
                               comparison_chunks, comparison_csv_text, comparison_specs,
                               damping_of, describe_changes)
from ..jobs.runs import DEFAULT_DT, RunKind, RunOutcome, RunSpec
from ..plots.playback import PlaybackBar
from ..scene.compare_ghost import GHOST_COLOR, GHOST_OPACITY, CompareGhost
from .compare_form import CompareForm
from .compare_plots import ComparePlots
from .compare_run import ComparisonRun

__all__ = ["ChangeField", "ChangeOp", "Change", "RunKind", "RunSpec", "apply_changes",
           "describe_changes", "damping_of", "comparison_chunks", "comparison_csv_text",
           "CompareGhost", "ComparePanel", "GHOST_COLOR", "GHOST_OPACITY"]

#: Default width of the definition column (the plots take the rest), px.
SIDE_WIDTH = 300


class ComparePanel(QWidget):
    """Run B's definition, the comparison's run, its plots, playback and ghost.

    window: the `MainWindow`: its ``session`` (model, pose, last run), its Run panel's
    `target_pose` and `fall_method`, its 3D view, ``files`` and status bar.
    ``form``, ``plots`` and ``playback`` are the panel's parts; ``result`` the (A, B)
    of the last comparison (partial if stopped or failed), or None.

    Signals: ``finished()`` after a comparison ends (complete or not).
    """

    finished = Signal()

    def __init__(self, window, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("comparePanel")
        self.main_window = window
        self.session = window.session
        self.ghost = CompareGhost(window.view3d)
        self.model_a: Robot | Mechanism | None = None
        self.model_b: Robot | Mechanism | None = None
        self._spec_b: RunSpec | None = None
        self.result: tuple[Trajectory, Trajectory] | None = None
        self._active = False
        self._playing_compare = False
        self._run = ComparisonRun(self)
        self._build()
        self.set_robot(self.session.model)

    def _build(self) -> None:
        model = self.session.model
        self.form = CompareForm(model)
        self.plots = ComparePlots()
        self.plots.set_model(model)
        self.playback = PlaybackBar()
        self.playback.setToolTip("Replay the comparison: A in the 3D view, B as a ghost")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(self.form)
        split.addWidget(self.plots)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        self._split = split
        split.setSizes([SIDE_WIDTH, 10 * SIDE_WIDTH])
        layout = QVBoxLayout(self)  # the playback bar spans the panel: a long slider
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.playback)
        layout.addWidget(split, 1)

        form = self.form
        form.run.clicked.connect(self.compare)
        form.stop.clicked.connect(self.cancel)
        form.export.clicked.connect(self.ask_export_csv)
        form.browse.clicked.connect(self._on_browse)
        form.kind_changed.connect(self._on_kind)
        form.error.connect(lambda text: self.main_window.statusBar().showMessage(text, 8000))
        self.playback.frame.connect(self._on_frame)
        self._run.progress.connect(lambda f: form.progress.setValue(round(1000 * f)))
        self._run.ended.connect(self._on_ended)
        self._update_enabled()

    # ----- model and definition -------------------------------------------------------
    @property
    def model(self) -> Robot | Mechanism:
        """Run A's model: the session's (the window's last valid robot or mechanism)."""
        return self.session.model

    def set_robot(self, robot: Robot | Mechanism) -> None:
        """A new model in the window: the comparison is dropped (its runs were of the
        old one); changes that still name existing links stay."""
        self._run.stop()
        self.form.set_robot(robot)
        self.plots.set_model(robot)
        self.clear_result()

    def changes(self) -> list[Change]:
        return self.form.changes()

    def set_changes(self, changes: Sequence[Change]) -> bool:
        """Make `changes` run B's list if the core accepts them (`CompareForm.set_changes`)."""
        return self.form.set_changes(changes)

    def add_change(self, change: Change) -> bool:
        return self.form.add_change(change)

    def set_file(self, path: str | Path) -> bool:
        """Run B from a robot or mechanism file."""
        return self.form.set_file(path)

    def build_b(self) -> Robot | Mechanism:
        """Run B's model (raises the core's error for a refused change)."""
        return self.form.build_b()

    @Slot()
    def _on_browse(self) -> None:
        path = self.main_window.files.ask_open_path()
        if path is not None:
            self.set_file(path)

    # ----- the run's settings ---------------------------------------------------------
    @Slot()
    def _on_kind(self) -> None:
        # what tells most: the torques of an inverse-dynamics run, a free fall's motion
        self.set_quantity("q" if self.kind() is RunKind.FREE_FALL else "tau")

    def kind(self) -> RunKind:
        return self.form.kind()

    def set_kind(self, kind: RunKind) -> None:
        self.form.set_kind(kind)

    def duration(self) -> float:
        return self.form.duration()

    def set_duration(self, seconds: float) -> None:
        self.form.set_duration(seconds)

    def follow_window_run(self) -> None:
        """Take the settings of the window's last run (the session's): its kind and
        duration, or the span of its samples."""
        traj, spec = self.session.trajectory, self.session.run_spec
        if traj is not None and len(traj) > 1:
            self.set_kind(RunKind.INVERSE if traj.kind == RunKind.INVERSE.value
                          else RunKind.FREE_FALL)
            self.set_duration(float(traj.t[-1] - traj.t[0]))
        if spec is not None:
            self.set_duration(spec.duration)

    def _dt(self) -> float:
        """The window's last run's sample step (or DEFAULT_DT)."""
        traj = self.session.trajectory
        if traj is not None and len(traj) > 1:
            return float(traj.t[1] - traj.t[0])
        return DEFAULT_DT

    def run_specs(self, model_b: Robot | Mechanism) -> tuple[RunSpec, RunSpec]:
        """Runs A and B with this panel's settings, the session's pose and the Run
        panel's target and fall method (`gui.jobs.comparison.comparison_specs`)."""
        run_panel = self.main_window.run_panel
        kind, q0 = self.kind(), np.array(self.session.pose, dtype=float)
        return comparison_specs(
            self.model, model_b, kind, q0,
            run_panel.target_pose() if kind is RunKind.INVERSE else q0,
            self.duration(), self._dt(), self.form.damping(), run_panel.fall_method(),
            self.form.applied_changes())

    # ----- running --------------------------------------------------------------------
    @Slot()
    def compare(self) -> bool:
        """Start the comparison (a running one is stopped first). False, with the
        message shown, if run B's model or the runs cannot be set up."""
        self._run.stop()
        try:
            model_b = self.build_b()
            spec_a, spec_b = self.run_specs(model_b)
        except (ArmDynError, ValueError) as err:
            self.form.show_error(f"Cannot compare: {err}")
            return False
        self.model_a, self.model_b, self._spec_b = spec_a.model, model_b, spec_b
        self.form.progress.setValue(0)
        self.form.set_status(f"{spec_a.kind.title}: computing A, then B\u2026")
        self._run.start(spec_a, spec_b)
        self._update_enabled()
        return True

    @Slot()
    def cancel(self) -> None:
        """Stop a running comparison at once; what was computed is shown."""
        self._run.stop()

    def is_running(self) -> bool:
        return self._run.is_running()

    @Slot(object)
    def _on_ended(self, comparison: Comparison) -> None:
        a, b = comparison.a, comparison.b
        if comparison.outcome is RunOutcome.FINISHED:
            self.form.progress.setValue(1000)
            self._set_result(a, b)
            self.form.set_status(f"A and B: {len(a)} samples over {self.duration():.2f} s.")
        elif comparison.outcome is RunOutcome.STOPPED:
            self._show_parts(a, b, "stopped")
        else:
            self._show_parts(a, b, "failed")
            self.form.show_error(comparison.message)
        self._update_enabled()
        self.finished.emit()

    def _show_parts(self, a: Trajectory | None, b: Trajectory | None, how: str) -> None:
        """Show what a stopped or failed comparison computed."""
        if a is None:
            self.form.set_status(f"Comparison {how} before any sample.")
            return
        if b is None:
            b = self._spec_b.empty_result()
        self._set_result(a, b)
        self.form.set_status(f"Comparison {how}: A {len(a)}, B {len(b)} samples.")

    # ----- results: plots, playback, ghost --------------------------------------------
    def clear_result(self) -> None:
        self.result = None
        self.playback.clear()
        self.ghost.remove()
        self.plots.show_result(None)
        self._update_enabled()

    def _set_result(self, a: Trajectory, b: Trajectory) -> None:
        self.result = (a, b)
        self.plots.show_result(self.result, self.model_a, self.model_b, self.duration())
        self.playback.set_trajectory(a)  # emits the first frame: the ghost appears
        self._update_enabled()

    def quantity(self) -> str:
        """The field shown: "q", "qd", "tau" or "energy"."""
        return self.plots.quantity()

    def set_quantity(self, field: str) -> None:
        self.plots.set_quantity(field)

    def set_joint(self, index: int | None) -> None:
        """Show one joint (0-based; one energy for "energy") or all (None)."""
        self.plots.set_joint(index)

    def series(self):
        """What the plots show (`ComparePlots.series`)."""
        return self.plots.series()

    def difference(self) -> tuple[np.ndarray, np.ndarray]:
        """The difference plot's data: t (S,), B - A (S, curves), display units."""
        return self.plots.difference()

    def legend_text(self) -> str:
        """The legend as plain text ("A: ...  B: ...", then the curves' names)."""
        return self.plots.legend_text()

    @Slot(float, object)
    def _on_frame(self, t: float, q) -> None:
        """Comparison playback: A in the 3D view, B as the ghost, cursors at t."""
        self.plots.set_cursor(t)
        if not self._active:
            return
        self.main_window.view3d.set_pose(np.asarray(q, dtype=float), keep_in_view=True)
        self._playing_compare = True
        self.show_ghost_at(t)

    @Slot(float, object)
    def follow_window_playback(self, t: float, _q=None) -> None:
        """The window's playback moved to t: the ghost goes to B's pose at t."""
        if self._active:
            self.show_ghost_at(t)

    def show_ghost_at(self, t: float) -> None:
        """B's arm as the ghost at time t (s) of run B (clamped to its samples)."""
        if self.result is None or self.model_b is None or not self._active:
            return
        b = self.result[1]
        if len(b) == 0:
            return
        self.ghost.show(self.model_b, b.at(float(t)))

    def seek(self, t: float) -> None:
        """Comparison playback to t (s)."""
        self.playback.seek(t)

    # ----- export ---------------------------------------------------------------------
    def export_csv(self, path: str | Path) -> Path:
        """Write both runs side by side to `path` (atomically); OSError on failure."""
        if self.result is None:
            raise ValueError("nothing to export: run a comparison first")
        a, b = self.result
        text = comparison_csv_text(a, self.model_a, b, self.model_b)
        write_atomically(path, text.encode("utf-8"))
        return Path(path)

    @Slot()
    def ask_export_csv(self) -> bool:
        if self.result is None:
            return False
        files = self.main_window.files
        stem = Path(files.suggested_name()).with_suffix("")
        path = files.ask_save_path("Export Comparison", "CSV files (*.csv)", ".csv",
                                   f"{stem}_comparison.csv")
        if path is None:
            return False
        try:
            self.export_csv(path)
        except (OSError, ValueError) as err:
            files.error("Cannot export the comparison", f"{path}: {err}")
            return False
        self.main_window.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    # ----- state, visibility, teardown ------------------------------------------------
    def message(self) -> str:
        """The status line's text (plain)."""
        return self.form.message()

    def _update_enabled(self) -> None:
        self.form.set_running(self.is_running(), self.result is not None)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._active = True
        if self.result is not None:
            self.show_ghost_at(self.playback.time())

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().hideEvent(event)
        self.deactivate()

    def deactivate(self) -> None:
        """The dock is hidden: no ghost, playback paused, the 3D arm back at the session's
        pose if the comparison's playback moved it."""
        self._active = False
        self.playback.pause()
        self.ghost.remove()
        if self._playing_compare:
            self._playing_compare = False
            self.main_window.view3d.set_pose(self.session.pose)

    def shutdown(self) -> None:
        """Cancel a running comparison (its thread ends on its own), stop playback,
        remove the ghost (before the 3D view is shut down)."""
        self._run.cancel()
        self.playback.pause()
        self._active = False
        self.ghost.remove()
