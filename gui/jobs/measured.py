"""The jobs behind the measured-motion view and the Identify panel: the model's torque
parts along a log, and an identification with its validation residual. Each is a
generator for `gui.jobs.job.Job` that yields the fraction done."""
from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

import numpy as np

from armdyn.core import Identification, Motion, TorqueParts, identify
from armdyn.core.algorithms.torque_parts import torque_parts_chunks

from .checkpointed import checkpointed

__all__ = ["IdentifyOutcome", "identify_steps", "torque_parts_steps"]


def torque_parts_steps(model, motion: Motion) -> Generator[float, None, TorqueParts]:
    """The parts of `model`'s torques along `motion` (`core.algorithms.torque_parts`),
    chunk by chunk: yields the fraction of samples done, returns the TorqueParts
    (S, n each, N m / N)."""
    S = len(motion)
    pieces = []
    for done, parts in torque_parts_chunks(model, motion.q, motion.qd, motion.qdd):
        pieces.append(parts)
        yield done / S
    return TorqueParts.concatenate(pieces)


@dataclass(frozen=True)
class IdentifyOutcome:
    """What `identify_steps` returns.

    found      the Identification (core.sim.identification)
    validate   the validation motion, or None
    residual   (S_v, n) its measured minus the identified model's torque (N m / N), or None
    """

    found: Identification
    validate: Motion | None
    residual: np.ndarray | None


def identify_steps(model, motion: Motion, validate: Motion | None = None
                   ) -> Generator[float, None, IdentifyOutcome]:
    """`identify(model, motion, validate)`, then the identified model's residual along
    `validate`: yields identify's progress between its stages up to 0.8, then the
    residual's. A cancel of the job stops identify at its next stage (`checkpointed`)."""
    found = yield from checkpointed(identify, model, motion, validate, span=(0.0, 0.8))
    residual = None
    if validate is not None and validate.tau is not None:
        pieces = []
        for done, parts in torque_parts_chunks(found.model, validate.q, validate.qd,
                                               validate.qdd):
            pieces.append(parts)
            yield 0.8 + 0.2 * done / len(validate)
        residual = validate.tau - TorqueParts.concatenate(pieces).total
    return IdentifyOutcome(found, validate, residual)
