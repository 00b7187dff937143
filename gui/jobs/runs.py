"""What a run is, without Qt: the `RunSpec` the Run and Compare panels build, and the
core generator it stands for.

A spec is data (frozen): the kind of run (`RunKind`), the model, where it starts, for
how long, how finely it is sampled, and the options of a free fall. `RunSpec.chunks()`
returns core's generator with the chunk sizes of the GUI (defined here once), which a
`gui.jobs.job.Job` runs in a thread:

- inverse dynamics along the cycloid q0 -> target (`core.inverse_dynamics_chunks`), or
  along another law or a measured motion (`gui.jobs.motion_choice.MotionChoice`, built
  in the job's thread)
- a free fall from q0 at rest (`core.simulate_chunks`), optionally paced to wall-clock
  time for a live run (`core.sim.simulation.real_time`) with a `core.PointPull`
- with loops, by the penalty method (`core.sim.penalty.penalty_simulate_chunks`)

`RunSpec.label` is for display only; nothing maps it back to a kind. A run's end is a
`RunResult`: its samples (all, or those before a stop), how it ended, the spec.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

import numpy as np

from armdyn.core import (JointStops, Mechanism, PointPull, Robot, inverse_dynamics_chunks,
                         simulate_chunks)
from armdyn.core.sim.penalty import penalty_simulate_chunks, penalty_step
from armdyn.core.sim.driver import real_time
from armdyn.core.sim.trajectory import Trajectory

from .motion_choice import MotionChoice

__all__ = ["RunKind", "FallMethod", "RunSpec", "RunOutcome", "RunResult", "ID_CHUNK_SAMPLES", "SIM_CHUNK_S",
           "SIM_CHUNK_WALL_S", "LIVE_CHUNK_S", "DEFAULT_DT", "GUI_MAX_WALL_TIME",
           "DEFAULT_NEWTON_ITERATIONS"]

#: Inverse dynamics: samples per chunk (small enough to cancel fast and plot smoothly).
ID_CHUNK_SAMPLES = 50
#: Free fall: a chunk at least every SIM_CHUNK_WALL_S of computing (prompt cancel, live
#: plots) and at most every SIM_CHUNK_S simulated seconds, so a fast simulation sends a
#: few large chunks instead of flooding the GUI thread's queue with thousands of small ones.
SIM_CHUNK_S = 1.0
SIM_CHUNK_WALL_S = 0.03
#: A live free fall (paced to wall-clock time): one chunk per display frame, s.
LIVE_CHUNK_S = 1.0 / 60.0
#: Output sample step when nothing else is given, s.
DEFAULT_DT = 0.01
#: Wall-time budget of a window's run, s (core's default is 120 s, for runs nobody
#: watches). A window's run shows its progress and has Stop; and its pace, measured
#: while the GUI thread draws, overstated the run: a 600 s humanoid fall that takes
#: 60-70 s was stopped at t = 131 s as "about 122 s".
GUI_MAX_WALL_TIME = 3600.0
#: Newton iterations per solve of a penalty run when nothing else is given.
DEFAULT_NEWTON_ITERATIONS = 2


class RunKind(Enum):
    """The computation. Value: the `Trajectory.kind` of its result."""

    INVERSE = "inverse-dynamics"
    FREE_FALL = "free-fall"

    @property
    def title(self) -> str:
        """"Inverse dynamics", "Free fall"."""
        return "Inverse dynamics" if self is RunKind.INVERSE else "Free fall"


class FallMethod(Enum):
    """How a free fall is integrated."""

    #: adaptive DOP853; with loops, Lagrange multipliers and projection onto the loops
    MULTIPLIERS = "Lagrange multipliers (DOP853, projected)"
    #: with loops only: Jalon & Bayo's penalty / augmented Lagrangian, trapezoidal rule
    PENALTY = "Penalty, augmented Lagrangian (trapezoidal)"


@dataclass(frozen=True, eq=False)
class RunSpec:
    """One run.

    model    : the robot or mechanism
    kind     : inverse dynamics along the cycloid q0 -> target, or a free fall from q0
    q0       : (nq,) start pose, rad / m (a free fall starts at rest)
    duration : s;  dt: output sample step, s
    target   : (nq,) inverse dynamics' target pose, rad / m (None: q0; unused by a fall)
    damping  : free fall: viscous joint damping, scalar or (nv,), N m s/rad / N s/m
    method   : free fall of a model with loops: multipliers or penalty (without loops
               always multipliers)
    stops    : free fall by multipliers: end stops at the joint limits, a `JointStops`,
               True / False, or None for core's default (stops when the model has limits)
    live     : free fall by multipliers: paced to wall-clock time, in LIVE_CHUNK_S chunks
    pull     : a live run's `PointPull` (grabbed and moved from the GUI thread)
    step     : penalty method: the step h, s (None: `core.sim.penalty.penalty_step`, from
               the mechanism's frequencies)
    newton_iterations : penalty method: Newton iterations per solve
    motion   : inverse dynamics along another law than the cycloid, or a measured
               motion (None: the cycloid q0 -> target; a measured motion's duration is
               its own)
    """

    model: Robot | Mechanism
    kind: RunKind
    q0: np.ndarray
    duration: float
    dt: float = DEFAULT_DT
    target: np.ndarray | None = None
    damping: float | np.ndarray = 0.0
    method: FallMethod = FallMethod.MULTIPLIERS
    stops: JointStops | bool | None = None
    live: bool = False
    pull: PointPull | None = None
    step: float | None = None
    newton_iterations: int = DEFAULT_NEWTON_ITERATIONS
    motion: MotionChoice | None = None

    @property
    def n(self) -> int:
        return self.model.n

    @property
    def penalty(self) -> bool:
        """A free fall by the penalty method (asked for, and the model has loops)."""
        return (self.kind is RunKind.FREE_FALL and self.method is FallMethod.PENALTY
                and bool(self.model.loops))

    @property
    def is_live(self) -> bool:
        """A free fall paced to wall-clock time (the penalty method never is)."""
        return self.kind is RunKind.FREE_FALL and self.live and not self.penalty

    @property
    def label(self) -> str:
        """For display: "Inverse dynamics", "Inverse dynamics (quintic)", "Free fall",
        "Free fall (penalty)", "Free fall (live)"."""
        if self.kind is RunKind.INVERSE and self.motion is not None \
                and not self.motion.is_cycloid:
            return f"{self.kind.title} ({self.motion.kind.word})"
        if self.penalty:
            return "Free fall (penalty)"
        if self.is_live:
            return "Free fall (live)"
        return self.kind.title

    def chunks(self) -> Iterator[Trajectory]:
        """Core's generator of this run: Trajectory chunks of new samples; returns the
        whole Trajectory."""
        q0 = np.array(self.q0, dtype=float)
        if self.kind is RunKind.INVERSE:
            target = q0 if self.target is None else np.array(self.target, dtype=float)
            if self.motion is not None and not self.motion.is_cycloid:
                motion = self.motion.build(self.model, q0, target, self.duration)
                return inverse_dynamics_chunks(self.model, motion, dt_out=self.dt,
                                               chunk_samples=ID_CHUNK_SAMPLES)
            return inverse_dynamics_chunks(self.model, q0, target, self.duration,
                                           dt_out=self.dt, chunk_samples=ID_CHUNK_SAMPLES)
        common = dict(q0=q0, qd0=np.zeros(self.model.nv), damping=self.damping, dt_out=self.dt,
                      max_wall_per_chunk=SIM_CHUNK_WALL_S, max_wall_time=GUI_MAX_WALL_TIME)
        if self.penalty:  # no end stops, never live
            h = self.step if self.step is not None else penalty_step(self.model, q0)
            return penalty_simulate_chunks(self.model, self.duration, h=h,
                                           newton_iterations=self.newton_iterations,
                                           chunk_duration=SIM_CHUNK_S, **common)
        if self.stops is not None:
            common["stops"] = self.stops
        if self.is_live:
            return real_time(simulate_chunks(self.model, self.duration,
                                             chunk_duration=LIVE_CHUNK_S, pull=self.pull,
                                             **common))
        return simulate_chunks(self.model, self.duration, chunk_duration=SIM_CHUNK_S,
                               **common)

    def empty_result(self) -> Trajectory:
        """The result of a run stopped before its first sample: no samples, this run's
        kind, the model's values, rates, constraint rows (its cut forces' width) and force
        elements, with the momentum columns a free fall records."""
        model = self.model.model
        return Trajectory.empty(model.nq, self.kind.value, model.kernel.m, nv=model.nv,
                                recorded=self.kind is RunKind.FREE_FALL and not self.penalty,
                                ne=len(model.forces))


class RunOutcome(Enum):
    """How a run ended."""

    FINISHED = "finished"
    STOPPED = "stopped"  # by the user
    FAILED = "failed"    # by the core's error (its samples so far are kept)


@dataclass(frozen=True, eq=False)
class RunResult:
    """The end of a run.

    trajectory : the whole run, or what it computed before it stopped (maybe no sample)
    outcome    : finished, stopped or failed
    message    : a failure's message ("" otherwise)
    spec       : the run's `RunSpec` (None for a result that did not come from one)
    """

    trajectory: Trajectory
    outcome: RunOutcome = RunOutcome.FINISHED
    message: str = ""
    spec: RunSpec | None = None
