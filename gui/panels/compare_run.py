"""Running a comparison: A then B in one `gui.jobs.job.Job`, the parts kept, the end told.

`ComparisonRun.start(a, b)` runs `gui.jobs.comparison.comparison_chunks` (a comparison
still going is stopped first: the newer request wins). It ends once, with
``ended(Comparison)``: finished (both whole runs), stopped (`stop`: by the user, a new
comparison, a new model; what each run computed, at once) or failed (the core's
message, naming the run; what was computed). `cancel` ends it silently (the window
closing). Whatever a stopped job still computes is dropped (the job's policy).
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from armdyn.core.sim.trajectory import Trajectory

from ..jobs.comparison import Comparison, comparison_chunks
from ..jobs.job import Job
from ..jobs.runs import RunOutcome, RunSpec

__all__ = ["ComparisonRun"]


class ComparisonRun(QObject):
    """One comparison at a time (module docstring).

    Signals: ``progress(float)`` the fraction done (A is the first half);
    ``ended(object)`` the `Comparison`.
    """

    progress = Signal(float)
    ended = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._job: Job | None = None
        self._parts: dict[str, list[Trajectory]] = {"A": [], "B": []}
        self._side = "A"

    def start(self, a: RunSpec, b: RunSpec) -> None:
        """Run A, then B (a comparison going on is stopped first)."""
        self.stop()
        duration = a.duration

        def progress_of(value) -> float:
            side, part = value
            done = float(part.t[-1]) / duration if part is not None and len(part) else 0.0
            return (0.0 if side == "A" else 0.5) + 0.5 * min(done, 1.0)

        job = Job(comparison_chunks, a, b, progress_of=progress_of, name="comparison")
        job.yielded.connect(self._on_chunk)
        job.progress.connect(self.progress)
        job.finished.connect(self._on_finished)
        job.failed.connect(self._on_failed)
        self._job = job
        self._parts = {"A": [], "B": []}
        self._side = "A"
        job.start()

    def stop(self) -> None:
        """End the comparison now, with what each run computed (``ended``)."""
        if self._job is not None:
            self.cancel()
            self._end(RunOutcome.STOPPED)

    def cancel(self) -> None:
        """End the comparison silently (the window closing)."""
        job, self._job = self._job, None
        if job is not None:
            job.cancel()

    def is_running(self) -> bool:
        return self._job is not None

    # ----- the job's signals (GUI thread) ---------------------------------------------
    @Slot(object)
    def _on_chunk(self, value: tuple[str, Trajectory | None]) -> None:
        side, part = value
        self._side = side
        if part is not None and len(part):
            self._parts[side].append(part)

    @Slot(object)
    def _on_finished(self, result: tuple[Trajectory, Trajectory]) -> None:
        self._job = None
        a, b = result
        self.ended.emit(Comparison(a, b, RunOutcome.FINISHED))

    @Slot(str, object)
    def _on_failed(self, message: str, _error: BaseException) -> None:
        self._job = None
        self._end(RunOutcome.FAILED, f"Run {self._side} stopped: {message}")

    def _end(self, outcome: RunOutcome, message: str = "") -> None:
        a, b = (Trajectory.concatenate(p) if p else None
                for p in (self._parts["A"], self._parts["B"]))
        self.ended.emit(Comparison(a, b, outcome, message))
