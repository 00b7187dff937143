"""Reading a measured motion (a CSV log) for the window, in a job's thread.

`MotionLoader.load(path, model, cutoff)` reads the log with core's `load_motion`
(`core/io/motion_file.py`: the file's columns, its rows, the differentiator) in a
`gui.jobs.job.Job`, so a long log never freezes the window; a newer load cancels the one
still going (the job's policy). It ends with ``loaded(Motion)`` or ``refused(str)``,
core's `MotionFileError` message, which names the file, the line and the column.
`describe(motion)` says in words what was loaded: samples, rate, duration, the
differentiator's windows and cut-off, whether torques were logged, the warnings.

The Run panel uses both (its "Open measured motion..."); a panel that runs its own job
(the measured-against-modelled view, Identify) runs `load_motion_steps` in it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Generator
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

if TYPE_CHECKING:  # a start does not import measured motions
    from armdyn.core.sim.measured import Motion

from .job import Job

__all__ = ["MotionLoader", "describe", "load_motion_steps", "LOG_FILTER"]

#: The file dialog's filter for logs.
LOG_FILTER = "Motion logs (*.csv *.txt);;All files (*)"


def load_motion_steps(path: str | Path, model=None, cutoff: float | None = None
                      ) -> Generator[None, None, Motion]:
    """A job's generator: one checkpoint (a cancel before the read skips it), then
    returns `load_motion(path, model, cutoff=cutoff)` (the joint count checked against
    `model` when given). Its errors (MotionFileError, naming the file, line and column)
    reach the job's ``failed``."""
    yield None
    from armdyn.core.io.motion_file import load_motion  # first use: not at start
    return load_motion(path, model, cutoff=cutoff)


def describe(motion: Motion) -> str:
    """What `motion` holds, in words (plain text, one sentence a line)."""
    name = Path(motion.source).name if motion.source else "the log"
    lines = [f"{name}: {len(motion)} samples of {motion.n} joints at {motion.rate:.4g} Hz, "
             f"t = {motion.t[0]:.4g} to {motion.t[-1]:.4g} s."]
    if motion.cutoff is None:
        lines.append("Rates and accelerations as logged (qd, qdd columns).")
    else:
        lines.append(f"Rates and accelerations by Savitzky-Golay differentiation: windows "
                     f"of {motion.window[0]} and {motion.window[1]} samples, cut-off "
                     f"{motion.cutoff:.3g} Hz.")
    lines.append("Measured torques: logged." if motion.tau is not None
                 else "Measured torques: none in the log.")
    lines.extend(motion.warnings)
    return "\n".join(lines)


class MotionLoader(QObject):
    """Reads logs in a job's thread (module docstring).

    Signals (GUI thread): ``loading(str)`` the path, as a read starts; then
    ``loaded(object)`` the `Motion`, or ``refused(str)`` core's message.
    """

    loading = Signal(str)
    loaded = Signal(object)
    refused = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._job: Job | None = None

    def load(self, path: str | Path, model=None, cutoff: float | None = None) -> None:
        """Read the log at `path` (checked against `model`'s joints when given; the
        differentiator's cut-off `cutoff` Hz, None for core's default). A read still
        going is cancelled first."""
        self.cancel()
        job = Job(load_motion_steps, str(path), model, cutoff,
                  name=f"reading {Path(path).name}")
        job.finished.connect(self._on_finished)
        job.failed.connect(self._on_failed)
        self._job = job
        job.start()
        self.loading.emit(str(path))

    def cancel(self) -> None:
        """Drop the read going on, if any (no signal)."""
        job, self._job = self._job, None
        if job is not None:
            job.cancel()

    def is_loading(self) -> bool:
        return self._job is not None

    @Slot(object)
    def _on_finished(self, motion: Motion) -> None:
        self._job = None
        self.loaded.emit(motion)

    @Slot(str, object)
    def _on_failed(self, message: str, _error: BaseException) -> None:
        self._job = None
        self.refused.emit(message)
