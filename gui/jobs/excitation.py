"""The Run panel's "Optimise for identification": core's `optimise_excitation`
(`core/sim/excitation.py`) in a job's thread, with its progress and a prompt cancel
(`gui.jobs.checkpointed`).

`ExcitationOptimiser.optimise(model, base_frequency, harmonics, fixed)` optimises the
Fourier coefficients of `harmonics` harmonics of `base_frequency` Hz for the best
conditioned base regressor within the model's joint limits, and measures the same
condition number for `fixed` (the panel's fixed phase pattern) for comparison. It ends
with ``found(ExcitationOutcome)`` or ``refused(str)``, core's message; a newer request
cancels the one still going (the job's policy).
"""
from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, Slot

from typing import TYPE_CHECKING

from armdyn.core.sim.joint_motions import FourierSeries

if TYPE_CHECKING:  # the optimiser (scipy.optimize, the regressor) loads when first used
    from armdyn.core import Excitation

from .checkpointed import checkpointed
from .job import Job

__all__ = ["ExcitationOutcome", "ExcitationOptimiser", "excitation_steps"]

#: The optimiser's iterations at most (the PUMA's: ~0.2 s each on one core).
ITERATIONS = 100
#: The share of the progress bar the fixed pattern's condition number takes.
FIXED_SHARE = 0.05


@dataclass(frozen=True)
class ExcitationOutcome:
    """`found`: core's Excitation (its motion, condition number, limits kept);
    `fixed_condition`: the fixed pattern's condition number, measured the same way
    (`excitation_condition`)."""

    found: Excitation
    fixed_condition: float


def excitation_steps(model, base_frequency: float, harmonics: int, fixed: FourierSeries,
                     torque_limit=None, iterations: int = ITERATIONS
                     ) -> Generator[float, None, ExcitationOutcome]:
    """A job's generator: the fixed pattern's condition number, then
    `optimise_excitation(model, base_frequency, harmonics, torque_limit=torque_limit,
    max_iterations=iterations)` (torque_limit: N m / N, scalar or (n,), None for none);
    yields the fraction done."""
    yield 0.0
    from armdyn.core import optimise_excitation
    from armdyn.core.sim.excitation import excitation_condition

    fixed_condition = excitation_condition(model, fixed)
    found = yield from checkpointed(optimise_excitation, model, base_frequency, harmonics,
                                    max_iterations=iterations, torque_limit=torque_limit,
                                    span=(FIXED_SHARE, 1.0))
    return ExcitationOutcome(found, fixed_condition)


class ExcitationOptimiser(QObject):
    """Optimises excitations in a job's thread (module docstring).

    Signals (GUI thread): ``progress(float)`` the fraction done; then ``found(object)``
    the `ExcitationOutcome`, or ``refused(str)`` core's message. `cancel()` emits none.
    """

    progress = Signal(float)
    found = Signal(object)
    refused = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._job: Job | None = None

    def optimise(self, model, base_frequency: float, harmonics: int, fixed: FourierSeries,
                 torque_limit=None, iterations: int = ITERATIONS) -> None:
        """Start (`excitation_steps`' arguments); a request still going is cancelled
        first."""
        self.cancel()
        job = Job(excitation_steps, model, base_frequency, harmonics, fixed, torque_limit,
                  iterations,
                  progress_of=lambda fraction: fraction, name="optimise excitation")
        job.progress.connect(self.progress)
        job.finished.connect(self._on_finished)
        job.failed.connect(self._on_failed)
        self._job = job
        job.start()

    def cancel(self) -> None:
        """Drop the optimisation going on, if any (no signal); its thread stops at the
        optimiser's next objective evaluation."""
        job, self._job = self._job, None
        if job is not None:
            job.cancel()

    def job(self) -> Job | None:
        """The running job (None when idle)."""
        return self._job

    def is_running(self) -> bool:
        return self._job is not None

    @Slot(object)
    def _on_finished(self, outcome: ExcitationOutcome) -> None:
        self._job = None
        self.found.emit(outcome)

    @Slot(str, object)
    def _on_failed(self, message: str, _error: BaseException) -> None:
        self._job = None
        self.refused.emit(message)
