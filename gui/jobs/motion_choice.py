"""The motion an inverse-dynamics run of the window follows, without Qt: which law, and
the parameters the Run panel's fields give it (docs/motions.md has the laws).

A `MotionChoice` is data (frozen); `MotionChoice.build(model, q0, target, duration)`
makes core's `JointMotion` from it. It runs in the run's job thread
(`gui.jobs.runs.RunSpec.chunks`): a tool path solves its inverse kinematics at 101
points when it is built, and every law checks its arguments there, so a refusal is
core's message, shown by the Run panel like any run's failure.

The laws and what they take from the panel:

- cycloid, quintic: from the current pose q0 to the target over `duration` s
- trapezoid: the same, with a blend time (None: T/3, core's default)
- via points: q0 at t = 0, then `via` (time, pose) pairs, then the target at `duration`
- Fourier excitation: about q0, `harmonics` harmonics of `base_frequency` Hz, each
  joint swinging by at most `swing` (rad, or m for a prismatic joint); the phases
  differ by joint and harmonic (`fourier_coefficients`); or, when `excitation` is given
  (the panel's "Optimise for identification", `gui.jobs.excitation`), that optimised
  series: its own middle pose and coefficients, run for the duration
- tool line, tool arc: the tool (last link's frame) from where q0 puts it to
  `end_point` (m, base frame), through `via_point` for the arc; a point not given is
  where the target pose (the arc's via: the pose halfway to it) puts the tool
- measured: a `core.sim.measured.Motion` read from a log (`gui.jobs.motion_loading`),
  run at its own sample times; q0, target and duration are not used
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass
from enum import Enum

import numpy as np

from armdyn.core import forward_kinematics
from armdyn.core.errors import ArgumentError
from armdyn.core.sim.joint_motions import (Cycloid, FourierSeries, JointMotion, Quintic,
                                           Trapezoid, ViaPoints)
if TYPE_CHECKING:  # a start does not import measured motions
    from armdyn.core.sim.measured import Motion
from armdyn.core.sim.tool_motions import ToolArc, ToolLine

__all__ = ["MotionKind", "MotionChoice", "fourier_coefficients", "DEFAULT_SWING_RAD",
           "DEFAULT_SWING_M", "DEFAULT_BASE_FREQUENCY", "DEFAULT_HARMONICS"]

#: The default Fourier excitation: a joint swings by up to 20 deg (or 5 cm) about the
#: current pose, three harmonics of 0.5 Hz (one period: the panel's default 2 s).
DEFAULT_SWING_RAD = np.radians(20.0)
DEFAULT_SWING_M = 0.05
DEFAULT_BASE_FREQUENCY = 0.5
DEFAULT_HARMONICS = 3


class MotionKind(Enum):
    """A motion law of the Run panel. Value: the name the panel shows."""

    CYCLOID = "Cycloid (rest to rest)"
    QUINTIC = "Quintic (rest to rest)"
    TRAPEZOID = "Trapezoid (rest to rest)"
    VIA_POINTS = "Via points (spline)"
    FOURIER = "Fourier excitation"
    TOOL_LINE = "Tool along a line"
    TOOL_ARC = "Tool along an arc"
    MEASURED = "Measured motion (log)"

    @property
    def uses_target(self) -> bool:
        """The law ends at (or gets a default from) the target pose."""
        return self not in (MotionKind.FOURIER, MotionKind.MEASURED)

    @property
    def word(self) -> str:
        """Short, for a run's label: "quintic", "tool line", ..."""
        return {MotionKind.VIA_POINTS: "via points", MotionKind.TOOL_LINE: "tool line",
                MotionKind.TOOL_ARC: "tool arc", MotionKind.FOURIER: "Fourier",
                }.get(self, self.name.lower())


def fourier_coefficients(swing: np.ndarray, base_frequency: float, harmonics: int
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients a, b (n, L) of a `FourierSeries` whose joint j swings by at most
    swing[j] about its q0: each harmonic l moves it by swing_j / L (its amplitude
    sqrt(a^2 + b^2) / (w_f l), w_f = 2 pi f), at a phase that differs by joint and
    harmonic (multiples of 2 pi / 5), so the joints do not move in step."""
    swing = np.asarray(swing, dtype=float)
    L = int(harmonics)
    if L < 1:
        raise ArgumentError(f"harmonics must be at least 1, got {harmonics}")
    l = np.arange(1, L + 1)
    w = 2.0 * np.pi * float(base_frequency) * l                       # (L,)
    phase = 2.0 * np.pi / 5.0 * (np.arange(swing.size)[:, None] + 2 * l[None, :])  # (n, L)
    amplitude = swing[:, None] / L * w[None, :]                        # rad/s per harmonic
    return amplitude * np.cos(phase), amplitude * np.sin(phase)


@dataclass(frozen=True, eq=False)
class MotionChoice:
    """A law and its parameters (module docstring). Units: s, Hz, rad / m, m."""

    kind: MotionKind = MotionKind.CYCLOID
    blend: float | None = None
    via: tuple[tuple[float, np.ndarray], ...] = ()
    base_frequency: float = DEFAULT_BASE_FREQUENCY
    harmonics: int = DEFAULT_HARMONICS
    swing: np.ndarray | None = None
    end_point: np.ndarray | None = None
    via_point: np.ndarray | None = None
    measured: Motion | None = None
    excitation: FourierSeries | None = None

    @property
    def is_cycloid(self) -> bool:
        return self.kind is MotionKind.CYCLOID

    def duration(self, duration: float) -> float:
        """The run's duration, s: a measured motion's own, else `duration`."""
        if self.kind is MotionKind.MEASURED and self.measured is not None:
            return self.measured.duration
        return duration

    def build(self, model, q0: np.ndarray, target: np.ndarray, duration: float
              ) -> JointMotion:
        """Core's motion for `model` from pose q0 (n,) toward `target` (n,) over
        `duration` s. Raises core's ArgumentError (or MotionError) when it refuses."""
        kind = self.kind
        if kind is MotionKind.CYCLOID:
            return Cycloid(q0, target, duration)
        if kind is MotionKind.QUINTIC:
            return Quintic(q0, target, duration)
        if kind is MotionKind.TRAPEZOID:
            return Trapezoid(q0, target, duration, blend=self.blend)
        if kind is MotionKind.VIA_POINTS:
            times = [0.0, *(t for t, _ in self.via), duration]
            points = [q0, *(q for _, q in self.via), target]
            return ViaPoints(np.array(times), np.array(points))
        if kind is MotionKind.FOURIER and self.excitation is not None:
            e = self.excitation
            return FourierSeries(e.q0, e.a, e.b, e.base_frequency, duration)
        if kind is MotionKind.FOURIER:
            swing = self.swing
            if swing is None:
                swing = np.where(model.is_revolute, DEFAULT_SWING_RAD, DEFAULT_SWING_M)
            a, b = fourier_coefficients(swing, self.base_frequency, self.harmonics)
            return FourierSeries(q0, a, b, self.base_frequency, duration)
        if kind is MotionKind.MEASURED:
            if self.measured is None:
                raise ArgumentError("no measured motion: open a log first (Open measured "
                                    "motion...)")
            return self.measured
        end = self.end_point
        if end is None:
            end = forward_kinematics(model, target).end_effector[:3, 3]
        if kind is MotionKind.TOOL_LINE:
            return ToolLine(model, q0, end, duration)
        via = self.via_point
        if via is None:
            via = forward_kinematics(model, 0.5 * (q0 + target)).end_effector[:3, 3]
        return ToolArc(model, q0, via, end, duration)
