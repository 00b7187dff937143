"""Progress and cancel between the stages of a long computation that is not a generator
(`core.sim.excitation.optimise_excitation`, `core.sim.identification.identify`).

Such a function takes two optional callbacks, the same pair as `core.sim.simulation.simulate`:

    progress(fraction)  fraction done in [0, 1], called at each checkpoint
    cancel() -> bool    asked at each checkpoint: True stops the computation there by
                        raising `core.errors.Cancelled`, before anything is returned

A checkpoint costs two Python calls: the functions place them between their stages and
in their loops, as often as a prompt stop needs.
"""
from __future__ import annotations

from collections.abc import Callable

from ..errors import Cancelled

__all__ = ["Progress", "Cancel", "checkpoint"]

#: progress(fraction): the fraction done, in [0, 1].
Progress = Callable[[float], None]
#: cancel(): True to stop at the next checkpoint.
Cancel = Callable[[], bool]


def checkpoint(progress: Progress | None, cancel: Cancel | None, fraction: float,
               what: str, stage: str) -> None:
    """Report `fraction` (clipped to [0, 1]) to `progress`, then raise
    Cancelled(what, stage) when `cancel()` is True ("identification", "after the
    regressor"). Either callback may be None."""
    if progress is not None:
        progress(min(1.0, max(0.0, float(fraction))))
    if cancel is not None and cancel():
        raise Cancelled(what, stage)
