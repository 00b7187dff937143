"""A generator worker: runs a Python generator in a QThread (superqt / napari style).

Each ``yield`` of the generator is a checkpoint: the worker emits the value,
then checks the cancel and pause flags before asking for the next one. So a
generator that yields small chunks can be stopped within one chunk's time.

Signals are declared on the worker, which lives in the GUI thread, and
emitted from the worker thread, so every connection to a GUI-thread receiver
is queued: slots run in the GUI thread, in emission order.

    started()         the generator is about to run
    yielded(object)   one value the generator yielded
    progress(float)   fraction done in [0, 1] (needs ``progress_of``)
    finished(object)  the generator's return value (``StopIteration.value``)
    errored(str)      an ``ArmDynError``'s message verbatim, or a short message
                      for an unexpected exception (traceback logged)
    raised(object)    the exception itself (e.g. to read ``SimulationError.result``)
    aborted(object)   cancelled: the list of values yielded so far
    done()            last signal of a run, whatever the outcome

The worker thread never logs or calls ``threading.current_thread()`` (that
would leave a ``_DummyThread`` behind); tracebacks are logged in the GUI thread.
"""
from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable, Generator
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from armdyn.core import ArmDynError

log = logging.getLogger(__name__)

#: While paused, the worker thread re-checks the cancel flag this often (s).
PAUSE_POLL_S = 0.01


class _Thread(QThread):
    """A QThread whose ``run`` is the worker's loop."""

    def __init__(self, target: Callable[[], None]) -> None:
        super().__init__()
        self._target = target

    def run(self) -> None:  # noqa: D102 - Qt override, runs in the new thread
        self._target()


class GeneratorWorker(QObject):
    """Run ``func(*args, **kwargs)`` (a generator function) in its own QThread.

    Parameters
    ----------
    func : generator function; its ``yield`` points are the cancel/pause checkpoints.
    progress_of : optional ``f(value) -> float`` giving the fraction done after a
        yielded value; evaluated in the worker thread, clipped to [0, 1].

    A worker runs once: ``start()``, then ``cancel()`` / ``pause()`` / ``resume()``,
    and ``join()`` to wait for the thread. ``join`` (or ``quit``) must be called
    before the worker is dropped if it may still be running.
    """

    started = Signal()
    yielded = Signal(object)
    progress = Signal(float)
    finished = Signal(object)
    errored = Signal(str)
    raised = Signal(object)
    aborted = Signal(object)
    done = Signal()
    _traceback = Signal(str)

    def __init__(self, func: Callable[..., Generator[Any, None, Any]], *args: Any,
                 progress_of: Callable[[Any], float] | None = None,
                 parent: QObject | None = None, **kwargs: Any) -> None:
        super().__init__(parent)
        self._func = func
        self._args = args
        self._kwargs = kwargs
        self._progress_of = progress_of
        self._cancel = threading.Event()
        self._resume = threading.Event()
        self._resume.set()
        self._thread: _Thread | None = None
        self._traceback.connect(self._log_traceback)

    # ----- control (GUI thread) -------------------------------------------------------
    def start(self) -> None:
        """Start the generator in a new QThread (once)."""
        if self._thread is not None:
            raise RuntimeError("a GeneratorWorker runs only once")
        self._thread = _Thread(self._work)
        self._thread.start()

    def cancel(self) -> None:
        """Ask the generator to stop at its next yield (also wakes a paused worker)."""
        self._cancel.set()
        self._resume.set()

    def pause(self) -> None:
        """Hold the generator at its next yield until ``resume()`` or ``cancel()``."""
        if not self._cancel.is_set():
            self._resume.clear()

    def resume(self) -> None:
        """Let a paused generator continue."""
        self._resume.set()

    @property
    def is_paused(self) -> bool:
        return not self._resume.is_set()

    @property
    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def is_running(self) -> bool:
        """True from ``start()`` until the thread has ended (paused counts as running)."""
        return self._thread is not None and not self._thread.isFinished()

    def join(self, timeout_s: float | None = None) -> bool:
        """Wait for the thread to end; True if it has (or never started)."""
        if self._thread is None:
            return True
        if timeout_s is None:
            return self._thread.wait()
        return self._thread.wait(max(0, int(timeout_s * 1000)))

    def quit(self, timeout_s: float | None = None) -> bool:
        """Cancel and join: what a widget calls when it closes."""
        self.cancel()
        return self.join(timeout_s)

    # ----- the loop (worker thread) ---------------------------------------------------
    def _work(self) -> None:
        self.started.emit()
        values: list[Any] = []
        gen = None
        try:
            gen = self._func(*self._args, **self._kwargs)
            while True:
                if self._checkpoint():
                    gen.close()
                    self.aborted.emit(values)
                    return
                try:
                    value = next(gen)
                except StopIteration as stop:
                    self.progress.emit(1.0)
                    self.finished.emit(stop.value)
                    return
                values.append(value)
                self.yielded.emit(value)
                if self._progress_of is not None:
                    self.progress.emit(min(1.0, max(0.0, float(self._progress_of(value)))))
        except ArmDynError as err:
            self.raised.emit(err)
            self.errored.emit(str(err))
        except Exception as err:  # never let an exception escape a Qt thread
            self._traceback.emit(traceback.format_exc())
            self.raised.emit(err)
            self.errored.emit(f"Unexpected error: {type(err).__name__}: {err} (details in the log)")
        finally:
            if gen is not None:
                gen.close()
            self.done.emit()

    def _checkpoint(self) -> bool:
        """Wait while paused; True if cancelled."""
        while not self._resume.wait(PAUSE_POLL_S):
            if self._cancel.is_set():
                break
        return self._cancel.is_set()

    @Slot(str)
    def _log_traceback(self, text: str) -> None:
        log.error("background computation failed:\n%s", text)
