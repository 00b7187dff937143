"""Running one `RunSpec` at a time and saying how it ended: the Run panel's jobs and results.

`RunControl.run(spec)` runs ``spec.chunks()`` (core's generator) in a `gui.jobs.job.Job`
(a run still going is cancelled first: the newer request wins). The small Trajectory
chunks arrive in the GUI thread and are kept (the partial result of a stop); the run
ends in one of three ways, each announced once, by ``ended(RunResult)`` first:

- finished: the whole Trajectory (``finished``)
- stopped by the user (`stop`): the samples received so far, at once (``stopped``);
  whatever the job still computes is dropped (the job's policy)
- failed: the core's message (``failed``) and the samples so far, all that a
  `SimulationError` carries (``stopped``); a `SingularConfigurationError` along an
  inverse-dynamics motion names the time after the last sample

`cancel` ends a run silently (a new model, the window closing). ``messages`` are what
a run says when it ends: its warnings (`Trajectory.warnings`), then the end stops it hit
(`core.sim.simulation.stop_report`).
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from armdyn.core import SimulationError, SingularConfigurationError
from armdyn.core.sim.stops import stop_report
from armdyn.core.sim.trajectory import Trajectory

from ..jobs.job import Job
from ..jobs.runs import RunOutcome, RunResult, RunSpec

__all__ = ["RunControl"]


class RunControl(QObject):
    """The current run's job and results (module docstring).

    Signals (GUI thread): ``started()``; ``chunk(object)`` a Trajectory chunk of new
    samples (never empty); ``ended(object)`` the `RunResult`, then by outcome
    ``finished(object)`` the whole Trajectory, or ``failed(str)`` the message and
    ``stopped(object)`` the partial Trajectory, or (a user stop) ``stopped(object)``.
    """

    started = Signal()
    chunk = Signal(object)
    ended = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    stopped = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._job: Job | None = None
        #: the current (or last) run's spec
        self.spec: RunSpec | None = None
        self._chunks: list[Trajectory] = []
        #: time of the newest sample of the running job, s
        self.newest_time = 0.0
        #: what the last run said when it ended (warnings, then the stops it hit)
        self.messages: tuple[str, ...] = ()

    # ----- control --------------------------------------------------------------------
    def run(self, spec: RunSpec) -> None:
        """Start `spec` (a run still going is cancelled silently first)."""
        self.cancel()
        if spec.is_live and spec.pull is not None:
            spec.pull.release()  # a grab of the last run does not carry over
        job = Job(spec.chunks, name=spec.label)
        job.yielded.connect(self._on_chunk)
        job.finished.connect(self._on_finished)
        job.failed.connect(self._on_failed)
        self._job, self.spec = job, spec
        self._chunks, self.newest_time, self.messages = [], 0.0, ()
        job.start()
        self.started.emit()

    def stop(self) -> None:
        """Stop the run: ``stopped(partial)`` at once, with the chunks received so far."""
        if self._job is not None:
            partial = self._partial()
            self.cancel()
            self._end(RunResult(partial, RunOutcome.STOPPED, spec=self.spec))

    def cancel(self) -> None:
        """End the run silently (no signal), e.g. for a new model or a closing window."""
        job, self._job = self._job, None
        if job is not None:
            job.cancel()

    def pause(self, paused: bool) -> None:
        """Hold (or release) the run at its next chunk."""
        if self._job is not None:
            if paused:
                self._job.pause()
            else:
                self._job.resume()

    def is_running(self) -> bool:
        """True from `run` until the run ended (paused counts)."""
        return self._job is not None

    def is_paused(self) -> bool:
        return self._job is not None and self._job.is_paused

    def is_live(self) -> bool:
        """True while a live free fall runs."""
        return self._job is not None and self.spec.is_live

    # ----- the job's signals (GUI thread) ---------------------------------------------
    @Slot(object)
    def _on_chunk(self, part: Trajectory) -> None:
        if len(part) == 0:
            return
        self._chunks.append(part)
        self.newest_time = float(part.t[-1])
        self.chunk.emit(part)

    @Slot(object)
    def _on_finished(self, traj: Trajectory) -> None:
        self._job = None
        self._end(RunResult(traj, RunOutcome.FINISHED, spec=self.spec))

    @Slot(str, object)
    def _on_failed(self, message: str, error: BaseException) -> None:
        self._job = None
        # a SimulationError carries every sample computed so far, some perhaps not yet yielded
        partial = error.result if isinstance(error, SimulationError) else None
        partial = partial if isinstance(partial, Trajectory) else self._partial()
        if isinstance(error, SingularConfigurationError) and error.time is None:
            # inverse dynamics along a motion: the pose after the last computed sample
            after = f"t = {partial.t[-1]:.3f} s" if len(partial) else "the start"
            message = f"{message} (after {after}; {len(partial)} samples kept)"
        elif isinstance(error, SimulationError):
            message = f"{message} ({len(partial)} samples kept)"
        self._end(RunResult(partial, RunOutcome.FAILED, message, self.spec))

    # ----- results --------------------------------------------------------------------
    def _end(self, result: RunResult) -> None:
        traj = result.trajectory
        hits = stop_report(self.spec.model, traj) if len(traj) else ()
        self.messages = (*traj.warnings, *hits)
        self.ended.emit(result)
        if result.outcome is RunOutcome.FINISHED:
            self.finished.emit(traj)
        else:
            if result.outcome is RunOutcome.FAILED:
                self.failed.emit(result.message)
            self.stopped.emit(traj)

    def _partial(self) -> Trajectory:
        """The samples received so far (none: the run's empty result)."""
        if self._chunks:
            return Trajectory.concatenate(self._chunks)
        return self.spec.empty_result()
