"""One driver for every simulation: chunks in simulated time, a wall-clock budget per
chunk, partial results when a run stops.

A run in time is a *stepper* (`Stepper`): an integrator bound to a model and its inputs
that advances to a time, records its samples, and turns them into a `Trajectory` on
request. Three implement it: the compiled DOP853 with the DeNOC forward dynamics
(`core.sim.simulation`), the penalty formulation with the trapezoidal rule
(`core.sim.penalty`), and parallel robots in minimal coordinates
(`core.sim.parallel`). `drive` runs any of them chunk by chunk: it owns the chunk ends,
the wall-clock budget, the order of advance, samples and errors, and it is the one
place that builds a `SimulationError` carrying the samples computed so far.

A chunk ends when the stepper has passed `chunk_duration` more simulated seconds, or
when `max_wall_per_chunk` wall seconds have gone (a GUI then stays responsive and can
cancel between chunks); a chunk may be empty. Steppers never shorten a step to meet a
chunk's end, so how a run is chunked never changes its numbers.

No run without a budget: every run has `max_wall_time`, the wall time (s) its stepping
may take (DEFAULT_MAX_WALL_TIME unless given; the time its caller spends between chunks,
pacing or drawing, is not counted, nor is the first chunk, which may compile the
kernels). Over every PACE_WINDOW seconds of stepping the driver measures the run's pace
(wall seconds per simulated second) and projects the whole run at that pace: a run
projected past its budget (a step size that collapsed, a stiff joint, a rate far too
high), or that has used it up, stops at once with a SimulationError that says the time,
the pace, the step size and the fastest joint, and keeps the samples computed so far.

`run_chunks` drives a generator of chunks to its end with progress and cooperative
cancel; `real_time` paces one to the wall clock.
"""
from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import ArgumentError, SimulationCancelled, SimulationError
from ..model.arguments import positive_number
from .trajectory import Trajectory

#: Default wall-time budget of a run, s (`drive`'s max_wall_time). The bundled models'
#: longest runs take far less: 600 s of the Bricard linkage (the slowest) about 21 s,
#: of the PUMA 0.4 s.
DEFAULT_MAX_WALL_TIME = 120.0
#: The pace of a run is measured over windows of at least this much of its stepping's
#: wall time, s: a run that cannot finish within its budget stops after about this long.
PACE_WINDOW = 0.5


@dataclass(frozen=True)
class Failure:
    """Why a run stopped: what a stepper reports, and the driver turns into a
    `SimulationError`.

    reason     : in words
    time       : s, the simulated time where it stopped
    joint      : the 1-based joint that caused it, or None
    cause      : the exception behind it (the error's __cause__), or None
    keep_chunk : whether the samples of the chunk in progress are kept in the error's
                 result (False when they cannot be computed, e.g. a torque function that
                 failed)
    """

    reason: str
    time: float
    joint: int | None = None
    cause: BaseException | None = None
    keep_chunk: bool = True


class SampleFailure(Exception):
    """Raised by `Stepper.take` when the samples' derived quantities cannot be computed."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


class Stepper(Protocol):
    """An integration in progress (module docstring).

    t_end  : the last output time, s
    t      : the time of the last accepted state, s
    """

    t_end: float

    @property
    def t(self) -> float: ...

    def begin_chunk(self) -> None:
        """Take the inputs that may change between chunks (a pull)."""

    def advance(self, t_stop: float, deadline: float) -> bool | Failure:
        """Step until t >= t_stop, the end, a failure, or time.perf_counter() >= deadline
        (after at least one step), recording the samples passed. Returns True once the
        run is finished, False if it goes on, or the Failure that stopped it."""

    def take(self) -> Trajectory:
        """The samples recorded since the last take, with their derived quantities (may
        be empty); raises SampleFailure if they cannot be computed."""

    def empty(self) -> Trajectory:
        """A Trajectory of no samples with the run's columns."""


@runtime_checkable
class ReportsMotion(Protocol):
    """A stepper that can say where its integration is (the DOP853 stepper): what a run
    stopped by its budget reports; for any other the driver names the fastest joint of
    the last sample."""

    def motion_now(self) -> tuple[str, int | None]:
        """(the step size and the fastest joint at the last accepted state, in words;
        that joint, 1-based)."""


def _motion_now(stepper: Stepper, parts: list[Trajectory]) -> tuple[str, int | None]:
    if isinstance(stepper, ReportsMotion):
        return stepper.motion_now()
    last = next((p for p in reversed(parts) if len(p)), None)
    if last is None:
        return "", None
    qd = np.abs(last.qd[-1])
    j = int(np.argmax(qd))
    return f"the fastest joint is {j + 1} at {qd[j]:.3g} rad/s or m/s", j + 1


class WallBudget:
    """A run's wall-time budget (module docstring): `spend` after every chunk."""

    def __init__(self, max_wall_time: float, t: float, t_end: float) -> None:
        self.max_wall_time = max_wall_time
        self.t_end = t_end
        self.used = 0.0         # wall s of stepping counted so far
        self.window_wall = 0.0  # wall s of the current window
        self.window_t = t       # the simulated time where the window began, s
        self.chunks = 0

    def spend(self, wall: float, t: float) -> str | None:
        """Count `wall` s of stepping that took the run to simulated time t (s); None
        while the run keeps within its budget, else why it does not (in words)."""
        self.chunks += 1
        if self.chunks == 1:  # the first chunk may compile the kernels: not counted
            self.window_t = t
            return None
        self.used += wall
        self.window_wall += wall
        if self.used > self.max_wall_time:
            return f"it has used up its wall-time budget of {self.max_wall_time:g} s"
        if self.window_wall < PACE_WINDOW:
            return None
        advanced = t - self.window_t
        pace = self.window_wall / advanced if advanced > 0 else math.inf  # wall s per s
        projected = self.used + pace * (self.t_end - t)
        self.window_wall, self.window_t = 0.0, t
        if projected <= self.max_wall_time:
            return None
        return (f"at its pace ({pace:.3g} s of wall time per simulated second) the run would "
                f"take about {projected:.3g} s, more than its wall-time budget of "
                f"{self.max_wall_time:g} s")


def check_chunking(chunk_duration: float, max_wall_per_chunk: float) -> None:
    """Refuse chunk sizes that would make a run yield empty chunks for ever."""
    for name, value in (("chunk_duration", chunk_duration),
                        ("max_wall_per_chunk", max_wall_per_chunk)):
        if not (isinstance(value, (int, float)) and value > 0 and not math.isnan(value)):
            raise ArgumentError(f"{name} must be a positive number of seconds, got {value!r}")


def drive(stepper: Stepper, chunk_duration: float, max_wall_per_chunk: float,
          max_wall_time: float = DEFAULT_MAX_WALL_TIME
          ) -> Generator[Trajectory, None, Trajectory]:
    """Run `stepper` to its end, chunk by chunk, within `max_wall_time` seconds of
    stepping (module docstring).

    Yields each chunk's Trajectory (the first holds t = 0; a chunk may be empty) and
    returns the whole run. Raises SimulationError, with `.result` the samples so far,
    `.time` and `.joint`, when the stepper reports a Failure or the run is over its
    budget.
    """
    check_chunking(chunk_duration, max_wall_per_chunk)
    budget = WallBudget(positive_number(max_wall_time, "max_wall_time"), stepper.t,
                        stepper.t_end)
    parts: list[Trajectory] = []

    def error(failure: Failure) -> SimulationError:
        partial = Trajectory.concatenate(parts) if parts else stepper.empty()
        err = SimulationError(failure.reason, time=failure.time, joint=failure.joint,
                              result=partial)
        err.__cause__ = failure.cause
        err.__suppress_context__ = True
        return err

    while True:
        stepper.begin_chunk()
        t_stop = min(stepper.t + chunk_duration, stepper.t_end)
        start = _time.perf_counter()
        outcome = stepper.advance(t_stop, start + max_wall_per_chunk)
        if isinstance(outcome, Failure) and not outcome.keep_chunk:
            raise error(outcome)
        try:
            chunk = stepper.take()
        except SampleFailure as failed:
            raise error(failed.failure) from None
        if len(chunk):
            parts.append(chunk)
        if isinstance(outcome, Failure):
            raise error(outcome)
        over = budget.spend(_time.perf_counter() - start, stepper.t)
        if over is not None and outcome is not True:
            where, joint = _motion_now(stepper, parts)
            raise error(Failure(over + (f"; {where}" if where else ""), stepper.t, joint))
        yield chunk
        if outcome is True:
            return Trajectory.concatenate(parts) if parts else stepper.empty()


def run_chunks(gen: Iterator[Trajectory], duration: float,
               progress: Callable[[float], None] | None = None,
               cancel: Callable[[], bool] | None = None) -> Trajectory:
    """Drive a generator of Trajectory chunks (`drive`, `inverse_dynamics_chunks`) to its
    end and return the whole Trajectory it returns.

    progress(fraction) is called after each chunk with the simulated fraction of
    `duration` (s); when cancel() returns True the generator is closed and
    SimulationCancelled is raised with `.result`, the samples so far.
    """
    parts: list[Trajectory] = []
    while True:
        try:
            part = next(gen)
        except StopIteration as stop:
            if progress is not None:
                progress(1.0)
            return stop.value
        parts.append(part)
        if progress is not None and len(part):
            progress(min(1.0, float(part.t[-1]) / duration))
        if cancel is not None and cancel():
            gen.close()
            done = Trajectory.concatenate(parts)
            raise SimulationCancelled(time=float(done.t[-1]) if len(done) else 0.0, result=done)


def real_time(chunks: Iterator[Trajectory], clock: Callable[[], float] = _time.perf_counter,
              sleep: Callable[[float], None] = _time.sleep) -> Iterator[Trajectory]:
    """The chunks of `chunks` (e.g. `simulate_chunks` with a short chunk_duration), paced
    to wall-clock time: before yielding a chunk whose last sample is at simulated time t
    (s), sleep until t wall seconds have passed since the first chunk. A run can then be
    watched (and pushed, `core.sim.pull`) as it goes; it never runs ahead by more than a
    chunk. Returns what `chunks` returns."""
    start = None
    while True:
        try:
            part = next(chunks)
        except StopIteration as stop:
            return stop.value
        if start is None:
            start = clock()
        if len(part):
            wait = float(part.t[-1]) - (clock() - start)
            if wait > 0:
                sleep(wait)
        yield part
