"""A job: a Python generator run in a QThread, with the GUI's one cancel policy.

The semantics are napari's / superqt's ``GeneratorWorker``: each ``yield`` of the
generator is a checkpoint where the job reports the value, then checks its cancel and
pause flags before it asks for the next one. A generator that yields small chunks can
be stopped within one chunk's time.

Signals, all delivered in the GUI thread, in this order:

    started()            the generator is about to run
    yielded(object)      a value the generator yielded
    progress(float)      fraction done in [0, 1] after a value (needs ``progress_of``);
                         1.0 when the generator returns
    finished(object)     the generator's return value (``StopIteration.value``)
    failed(str, object)  the message and the exception: an ``ArmDynError``'s message
                         verbatim, else "Unexpected error: ..." (traceback logged)
    cancelled()          `cancel()` was called (emitted by it)
    done()               the last signal of a job, whatever the outcome

The policy, the same for every panel:

- `cancel()` returns at once: it sets a flag the thread reads at its next checkpoint
  and never waits for the thread. It emits ``cancelled()`` and ``done()`` before it
  returns; from then on the job is stale and whatever its thread still sends (a value
  computed meanwhile, its end) is dropped here, so no receiver hears of it.
- A running thread is never destroyed: every started job is held by this module
  (`running_jobs`) until its thread has ended, whoever else lets go of it; then the
  thread is deleted (``deleteLater``) and the job let go.
- Waiting happens only at application exit (`wait_for_jobs`, bounded).
- A newer request cancels the stale one: the panels cancel their job before they
  start the next.

The values are not kept: a panel that needs what was computed before a cancel keeps
it itself. Between the thread and this object the values travel through private
signals (queued into the GUI thread); the public ones are emitted from there, after
the stale check. The thread never logs or calls ``threading.current_thread()`` (that
would leave a ``_DummyThread`` behind); tracebacks are logged in the GUI thread.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Generator
from enum import Enum
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from armdyn.core import ArmDynError

__all__ = ["Job", "running_jobs", "wait_for_jobs", "PAUSE_POLL_S"]

log = logging.getLogger(__name__)

#: While paused, the thread re-checks the cancel flag this often (s).
PAUSE_POLL_S = 0.01
#: A job's thread runs this much nicer than the GUI thread (Linux: the thread's own nice
#: value, up to 19): on a busy machine the scheduler shared the cores evenly between the
#: simulation and the GUI thread, and the human's 600 s fall froze the window for up to
#: 0.9 s while its thread computed (issue #23).
WORKER_NICE = 10

#: Every started job whose thread has not ended yet (what keeps the thread alive).
_alive: set["Job"] = set()


class _State(Enum):
    NEW = "new"
    RUNNING = "running"
    CANCELLED = "cancelled"  # cancel() was called: stale, its thread may still run
    ENDED = "ended"          # the generator returned or raised: finished / failed, done


class _Thread(QThread):
    """A QThread whose ``run`` is the job's loop."""

    def __init__(self, target: Callable[[], None]) -> None:
        super().__init__()  # no parent: the registry decides when it goes
        self._target = target

    def run(self) -> None:  # noqa: D102 - Qt override, runs in the new thread
        _yield_to_the_gui()
        self._target()


def _yield_to_the_gui() -> None:
    """Make the calling thread (a job's) nicer than the GUI thread by WORKER_NICE: on
    Linux a thread has a nice value of its own; elsewhere Qt's low priority."""
    if sys.platform.startswith("linux"):
        tid = threading.get_native_id()  # no _DummyThread: a plain system call
        try:
            os.setpriority(os.PRIO_PROCESS, tid,
                           min(19, os.getpriority(os.PRIO_PROCESS, tid) + WORKER_NICE))
        except OSError:  # not permitted here: the thread runs as it is
            pass
    else:
        QThread.currentThread().setPriority(QThread.Priority.LowPriority)


class Job(QObject):
    """Run ``func(*args, **kwargs)`` (a generator function) in its own QThread (once).

    progress_of : optional ``f(value) -> float``, the fraction done after a yielded
                  value; evaluated in the job's thread, clipped to [0, 1]
    name        : what the log calls the job

    Control, from the GUI thread: `start()`, `cancel()`, `pause()`, `resume()`. A job
    has no parent: the module holds it while its thread runs (see the module docstring).
    """

    started = Signal()
    yielded = Signal(object)
    progress = Signal(float)
    finished = Signal(object)
    failed = Signal(str, object)
    cancelled = Signal()
    done = Signal()

    # emitted in the job's thread, queued into the GUI thread (to `_on_*`)
    _t_started = Signal()
    _t_yielded = Signal(object)
    _t_progress = Signal(float)
    _t_returned = Signal(object)
    _t_raised = Signal(str, object, str)  # message, exception, traceback ("" if expected)

    def __init__(self, func: Callable[..., Generator[Any, None, Any]], *args: Any,
                 progress_of: Callable[[Any], float] | None = None, name: str = "",
                 **kwargs: Any) -> None:
        super().__init__()
        self.name = name or getattr(func, "__name__", "job")
        self._func, self._args, self._kwargs = func, args, kwargs
        self._progress_of = progress_of
        self._state = _State.NEW
        self._cancel = threading.Event()
        self._resume = threading.Event()
        self._resume.set()
        self._thread: _Thread | None = None
        self._thread_ended = False
        self._t_started.connect(self._on_started)
        self._t_yielded.connect(self._on_yielded)
        self._t_progress.connect(self._on_progress)
        self._t_returned.connect(self._on_returned)
        self._t_raised.connect(self._on_raised)

    def __repr__(self) -> str:
        return f"<Job {self.name!r} {self._state.value}>"

    # ----- control (GUI thread) -----------------------------------------------------
    def start(self) -> None:
        """Run the generator in a new QThread (a job runs once)."""
        if self._state is not _State.NEW:
            raise RuntimeError(f"a Job runs only once ({self!r})")
        self._state = _State.RUNNING
        self._thread = _Thread(self._work)
        self._thread.finished.connect(self._on_thread_finished)
        _alive.add(self)
        self._thread.start()

    def cancel(self) -> None:
        """Stop: returns at once, having emitted ``cancelled()`` and ``done()``; nothing
        of this job is emitted afterwards. Its thread ends at its next checkpoint (a
        paused one at once). No effect on a job that is over."""
        if self._state not in (_State.NEW, _State.RUNNING):
            return
        self._state = _State.CANCELLED
        self._cancel.set()
        self._resume.set()
        self.cancelled.emit()
        self.done.emit()

    def pause(self) -> None:
        """Hold the generator at its next checkpoint until `resume()` or `cancel()`."""
        if self._state is _State.RUNNING:
            self._resume.clear()

    def resume(self) -> None:
        """Let a paused generator go on."""
        self._resume.set()

    @property
    def is_paused(self) -> bool:
        return self._state is _State.RUNNING and not self._resume.is_set()

    @property
    def is_cancelled(self) -> bool:
        return self._state is _State.CANCELLED

    def is_running(self) -> bool:
        """True from `start()` until ``done()`` (its end, or `cancel()`); paused counts.
        The thread may take a moment longer to end (`thread_alive`)."""
        return self._state is _State.RUNNING

    def thread_alive(self) -> bool:
        """True from `start()` until the job's thread has ended (which may be a while
        after a cancel)."""
        return self._thread is not None and not self._thread_ended

    def wait(self, timeout_s: float) -> bool:
        """Wait at most `timeout_s` for the thread to end; True if it has. For the
        application's exit and for tests only: the GUI never waits for a job."""
        thread = self._thread
        return thread is None or thread.wait(max(0, round(1000 * timeout_s)))

    # ----- the loop (the job's thread) ----------------------------------------------
    def _work(self) -> None:
        self._t_started.emit()
        gen = None
        try:
            gen = self._func(*self._args, **self._kwargs)
            while not self._checkpoint():
                try:
                    value = next(gen)
                except StopIteration as stop:
                    self._t_progress.emit(1.0)
                    self._t_returned.emit(stop.value)
                    return
                if self._cancel.is_set():
                    return  # computed after the cancel: nobody listens
                self._t_yielded.emit(value)
                if self._progress_of is not None:
                    self._t_progress.emit(min(1.0, max(0.0, float(self._progress_of(value)))))
        except ArmDynError as err:
            self._t_raised.emit(str(err), err, "")
        except Exception as err:  # never let an exception escape a Qt thread
            self._t_raised.emit(f"Unexpected error: {type(err).__name__}: {err} "
                                "(details in the log)", err, traceback.format_exc())
        finally:
            if gen is not None:
                gen.close()  # the generator's own clean-up (finally blocks) runs here

    def _checkpoint(self) -> bool:
        """Wait while paused; True if cancelled."""
        while not self._resume.wait(PAUSE_POLL_S):
            if self._cancel.is_set():
                break
        return self._cancel.is_set()

    # ----- from the thread, in the GUI thread: the stale check ----------------------
    @Slot()
    def _on_started(self) -> None:
        if self._state is _State.RUNNING:
            self.started.emit()

    @Slot(object)
    def _on_yielded(self, value: Any) -> None:
        if self._state is _State.RUNNING:
            self.yielded.emit(value)

    @Slot(float)
    def _on_progress(self, fraction: float) -> None:
        if self._state is _State.RUNNING:
            self.progress.emit(fraction)

    @Slot(object)
    def _on_returned(self, value: Any) -> None:
        if self._state is _State.RUNNING:
            self._state = _State.ENDED
            self.finished.emit(value)
            self.done.emit()

    @Slot(str, object, str)
    def _on_raised(self, message: str, error: BaseException, trace: str) -> None:
        if trace:  # logged even for a stale job: an unexpected error is a bug to see
            log.error("background job %r failed:\n%s", self.name, trace)
        if self._state is _State.RUNNING:
            self._state = _State.ENDED
            self.failed.emit(message, error)
            self.done.emit()

    @Slot()
    def _on_thread_finished(self) -> None:
        """The thread has ended (QThread.finished, queued): the thread is deleted and
        the job let go at the next turn of the event loop (not inside its own slot)."""
        self._thread_ended = True
        QTimer.singleShot(0, partial(_release, self))


def _release(job: Job) -> None:
    """Delete an ended job's thread and drop the module's hold on the job."""
    thread, job._thread = job._thread, None
    if thread is not None:
        thread.deleteLater()  # safe: ~QThread waits out a thread inside its finish
    _alive.discard(job)


def running_jobs() -> list[Job]:
    """The jobs whose thread has not ended yet (cancelled ones included)."""
    return [job for job in _alive if job.thread_alive()]


def wait_for_jobs(timeout_s: float) -> bool:
    """At application exit: cancel every job and wait for their threads, at most
    `timeout_s` in all. True if every thread has ended (a thread still inside one long
    step is logged)."""
    deadline = time.perf_counter() + timeout_s
    for job in running_jobs():
        job.cancel()
    left = []
    for job in running_jobs():
        if not job.wait(max(0.0, deadline - time.perf_counter())):
            left.append(job)
    for job in left:
        log.warning("the background job %r did not stop within %.1f s", job.name, timeout_s)
    return not left
