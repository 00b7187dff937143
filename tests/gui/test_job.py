"""Job (gui/jobs/job.py) on real Qt: order, progress, the one cancel policy (prompt, no
thread destroyed while it runs, cleaned up after, nothing heard after a cancel), pause,
errors."""
from __future__ import annotations

import gc
import logging
import sys
import threading
import time

import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QtMsgType, qInstallMessageHandler

from armdyn.core import SimulationError
from armdyn.gui.jobs.job import Job, running_jobs, wait_for_jobs
from gui_helpers import flush_events


def counting(n: int, delay_s: float = 0.0, result: str = "done"):
    """Yield 0..n-1 (sleeping `delay_s` before each), return `result`."""
    for i in range(n):
        time.sleep(delay_s)
        yield i
    return result


def forever(delay_s: float = 0.005):
    i = 0
    while True:
        time.sleep(delay_s)
        yield i
        i += 1


def long_step(step_s: float, entered: threading.Event, steps: int = 3,
              release: threading.Event | None = None):
    """Yield 0, then `steps` more values, each after a step of `step_s` that no cancel
    interrupts (`entered` is set when the first long step begins; `release`, if given,
    ends a step early: the test decides when the thread may end)."""
    release = release or threading.Event()
    yield 0
    for i in range(1, steps + 1):
        entered.set()
        release.wait(step_s)
        yield i
    return "never seen"


def failing(exc: Exception):
    yield 1
    raise exc


class Heard:
    """Every public signal of a job, in order, as (name, args)."""

    def __init__(self, job: Job) -> None:
        self.events: list[tuple[str, tuple]] = []
        for name in ("started", "yielded", "progress", "finished", "failed", "cancelled",
                     "done"):
            getattr(job, name).connect(lambda *args, n=name: self.events.append((n, args)))

    def names(self) -> list[str]:
        return [n for n, _ in self.events]

    def of(self, name: str) -> list[tuple]:
        return [args for n, args in self.events if n == name]


def wait_ended(qtbot, job: Job, timeout_ms: int = 5000) -> None:
    """Until the job's thread has ended and been let go (its QThread.finished handled)."""
    qtbot.waitUntil(lambda: not job.thread_alive(), timeout=timeout_ms)


def test_values_arrive_in_order_with_rising_progress(qtbot):
    threads_before = threading.active_count()
    job = Job(counting, 20, progress_of=lambda i: (i + 1) / 20)
    heard = Heard(job)
    gui_threads = set()
    job.yielded.connect(lambda _v: gui_threads.add(threading.get_ident()))
    with qtbot.waitSignal(job.done, timeout=5000):
        job.start()
    assert [a[0] for a in heard.of("yielded")] == list(range(20))
    assert heard.of("finished") == [("done",)]
    progress = [a[0] for a in heard.of("progress")]
    assert progress == sorted(progress) and progress[-1] == 1.0 and len(progress) >= 20
    names = heard.names()
    assert names[0] == "started" and names[-2:] == ["finished", "done"]
    assert "cancelled" not in names and "failed" not in names
    assert gui_threads == {threading.get_ident()}  # queued into the GUI thread
    assert not job.is_running()
    wait_ended(qtbot, job)
    assert threading.active_count() == threads_before  # no (dummy) thread left


def test_cancel_returns_at_once_during_a_long_step_and_nothing_follows(qtbot):
    entered, release = threading.Event(), threading.Event()
    job = Job(long_step, 30.0, entered, release=release)
    heard = Heard(job)
    job.start()
    qtbot.waitUntil(lambda: bool(heard.of("yielded")) and entered.is_set(), timeout=5000)
    t0 = time.perf_counter()
    job.cancel()
    took = time.perf_counter() - t0
    assert took < 0.005  # never waits for the thread
    assert heard.names()[-2:] == ["cancelled", "done"]  # emitted by cancel() itself
    assert not job.is_running() and job.is_cancelled
    assert job.thread_alive() and job in running_jobs()  # still inside its step: held
    before = list(heard.events)
    release.set()  # the step ends and yields: dropped, and the thread ends
    wait_ended(qtbot, job)
    flush_events()
    assert heard.events == before  # nothing heard after cancel()
    job.cancel()  # a second cancel: no effect
    assert heard.events == before


def test_a_cancelled_running_thread_is_kept_then_deleted(qtbot):
    """Dropping every reference to a cancelled job inside a long step must not destroy
    its QThread ("QThread: Destroyed while thread is still running" aborts); once the
    thread ends it is deleted."""
    messages = []

    def handler(kind, _context, text):
        if kind in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            messages.append(text)

    previous = qInstallMessageHandler(handler)
    try:
        entered, release = threading.Event(), threading.Event()
        job = Job(long_step, 30.0, entered, release=release)
        job.start()
        qtbot.waitUntil(entered.is_set, timeout=5000)
        thread = job._thread  # (to watch it: the job does not hand it out)
        job.cancel()
        del job
        gc.collect()
        flush_events()
        assert shiboken6.isValid(thread) and thread.isRunning()
        assert len(running_jobs()) == 1
        release.set()  # the step ends: then the thread
        qtbot.waitUntil(lambda: not running_jobs(), timeout=5000)
        flush_events()  # the thread's deleteLater
        assert not shiboken6.isValid(thread)  # cleaned up after it ended
    finally:
        qInstallMessageHandler(previous)
    assert not [m for m in messages if "Destroyed while thread" in m]


def test_values_queued_before_a_cancel_are_dropped(qtbot):
    """A fast generator fills the GUI thread's queue; whatever was queued when cancel()
    ran never reaches a receiver."""
    job = Job(counting, 100_000)
    heard = Heard(job)
    job.start()
    qtbot.waitUntil(lambda: len(heard.of("yielded")) >= 3, timeout=5000)
    time.sleep(0.05)  # the thread queues many more meanwhile (the GUI thread sleeps)
    job.cancel()
    count = len(heard.of("yielded"))
    flush_events()
    qtbot.wait(50)
    assert len(heard.of("yielded")) == count < 100_000
    assert heard.names()[-2:] == ["cancelled", "done"] and not heard.of("finished")
    wait_ended(qtbot, job)


def test_pause_holds_and_resume_continues(qtbot):
    job = Job(forever, 0.002)
    got = []
    job.yielded.connect(got.append)
    job.start()
    qtbot.waitUntil(lambda: len(got) >= 3, timeout=5000)
    job.pause()
    assert job.is_paused
    qtbot.wait(50)  # let a value in flight arrive
    held = len(got)
    qtbot.wait(150)
    assert len(got) == held and job.is_running()
    job.resume()
    assert not job.is_paused
    qtbot.waitUntil(lambda: len(got) >= held + 5, timeout=2000)
    job.cancel()
    wait_ended(qtbot, job)


def test_cancel_while_paused_ends_the_thread(qtbot):
    job = Job(forever, 0.002)
    got = []
    job.yielded.connect(got.append)
    job.start()
    qtbot.waitUntil(lambda: len(got) >= 2, timeout=5000)
    job.pause()
    qtbot.wait(30)
    with qtbot.waitSignal(job.cancelled, timeout=100):
        job.cancel()
    assert not job.is_paused
    wait_ended(qtbot, job, timeout_ms=500)


def test_core_error_message_arrives_verbatim(qtbot):
    err = SimulationError("the state blew up", time=1.25, joint=3, result=np.arange(3))
    job = Job(failing, err)
    heard = Heard(job)
    with qtbot.waitSignal(job.done, timeout=5000):
        job.start()
    [(message, raised)] = heard.of("failed")
    assert message == str(err) and "t = 1.25 s, joint 3" in message
    assert raised is err and raised.result is not None
    assert heard.names()[-2:] == ["failed", "done"] and not heard.of("finished")
    wait_ended(qtbot, job)


def test_unexpected_exception_is_a_message_and_a_logged_traceback(qtbot, caplog):
    job = Job(failing, KeyError("oops"))
    heard = Heard(job)
    with caplog.at_level(logging.ERROR, logger="armdyn.gui.jobs.job"):
        with qtbot.waitSignal(job.done, timeout=5000):
            job.start()
    [(message, raised)] = heard.of("failed")
    assert message == "Unexpected error: KeyError: 'oops' (details in the log)"
    assert isinstance(raised, KeyError)
    assert "Traceback" in caplog.text and "KeyError" in caplog.text
    wait_ended(qtbot, job)


def test_an_error_after_a_cancel_is_not_reported(qtbot):
    entered = threading.Event()

    def step_then_fail():
        yield 0
        entered.set()
        time.sleep(0.2)
        raise SimulationError("too late to matter")

    job = Job(step_then_fail)
    heard = Heard(job)
    job.start()
    qtbot.waitUntil(entered.is_set, timeout=5000)
    job.cancel()
    wait_ended(qtbot, job)
    flush_events()
    assert not heard.of("failed") and heard.names()[-2:] == ["cancelled", "done"]


def test_a_job_runs_once(qtbot):
    job = Job(counting, 1)
    with qtbot.waitSignal(job.done, timeout=5000):
        job.start()
    with pytest.raises(RuntimeError):
        job.start()
    wait_ended(qtbot, job)


def test_waiting_at_exit_is_bounded(qtbot):
    entered = threading.Event()
    job = Job(long_step, 0.5, entered, steps=1)
    heard = Heard(job)
    job.start()
    qtbot.waitUntil(entered.is_set, timeout=5000)
    t0 = time.perf_counter()
    assert not wait_for_jobs(0.05)  # still inside its step: gives up on time
    assert time.perf_counter() - t0 < 0.3
    assert heard.names()[-2:] == ["cancelled", "done"]  # it cancelled the job
    assert wait_for_jobs(5.0)
    wait_ended(qtbot, job)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice: Linux")
def test_a_jobs_thread_runs_nicer_than_the_gui_thread(qtbot):
    """Issue #23: on a busy machine the simulation thread took the cores as much as the
    GUI thread, and the window froze for up to 0.9 s during the human's 600 s fall."""
    import os

    from armdyn.gui.jobs.job import WORKER_NICE

    def own_nice():
        yield os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    seen = []
    job = Job(own_nice)
    job.yielded.connect(seen.append)
    with qtbot.waitSignal(job.done, timeout=10000):
        job.start()
    gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert seen == [min(19, gui + WORKER_NICE)]
