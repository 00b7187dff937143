"""GeneratorWorker: order, progress, cancel latency, pause, errors, no thread left behind."""
from __future__ import annotations

import logging
import threading
import time

import numpy as np
import pytest

from armdyn.core import SimulationError
from armdyn.gui.jobs.worker import GeneratorWorker


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


@pytest.fixture
def make_worker(qtbot):
    """Build workers and make sure each one is cancelled and joined at teardown."""
    workers: list[GeneratorWorker] = []

    def make(*args, **kwargs) -> GeneratorWorker:
        w = GeneratorWorker(*args, **kwargs)
        workers.append(w)
        return w

    yield make
    for w in workers:
        assert w.quit(timeout_s=2.0)
        w.deleteLater()


def test_values_arrive_in_order_with_rising_progress(qtbot, make_worker):
    threads_before = threading.active_count()
    w = make_worker(counting, 20, progress_of=lambda i: (i + 1) / 20)
    got, progress, finished, gui_threads = [], [], [], set()

    def on_value(v):
        got.append(v)
        gui_threads.add(threading.get_ident())

    w.yielded.connect(on_value)
    w.progress.connect(progress.append)
    w.finished.connect(finished.append)
    with qtbot.waitSignal(w.done, timeout=5000):
        w.start()
    assert got == list(range(20))
    assert finished == ["done"]
    assert progress == sorted(progress) and progress[-1] == 1.0 and len(progress) >= 20
    assert gui_threads == {threading.get_ident()}  # queued into the GUI thread
    assert w.join(1.0) and not w.is_running()
    assert threading.active_count() == threads_before  # no (dummy) thread left


def test_cancel_stops_within_100_ms(qtbot, make_worker):
    w = make_worker(forever, 0.005)
    got, aborted, when = [], [], []
    w.yielded.connect(got.append)

    def on_aborted(values):
        when.append(time.perf_counter())
        aborted.append(values)

    w.aborted.connect(on_aborted)
    w.start()
    qtbot.waitUntil(lambda: len(got) >= 5, timeout=5000)
    t0 = time.perf_counter()
    w.cancel()
    qtbot.waitUntil(lambda: bool(aborted), timeout=1000)
    assert when[0] - t0 < 0.1
    assert w.join(0.1) and not w.is_running()
    assert aborted[0] == list(range(len(aborted[0])))  # everything yielded, in order
    assert got == aborted[0]


def test_pause_holds_and_resume_continues(qtbot, make_worker):
    w = make_worker(forever, 0.002)
    got = []
    w.yielded.connect(got.append)
    w.start()
    qtbot.waitUntil(lambda: len(got) >= 3, timeout=5000)
    w.pause()
    assert w.is_paused
    qtbot.wait(50)  # let a value in flight arrive
    held = len(got)
    qtbot.wait(150)
    assert len(got) == held and w.is_running()
    w.resume()
    qtbot.waitUntil(lambda: len(got) >= held + 5, timeout=2000)


def test_cancel_while_paused(qtbot, make_worker):
    w = make_worker(forever, 0.002)
    got = []
    w.yielded.connect(got.append)
    w.start()
    qtbot.waitUntil(lambda: len(got) >= 2, timeout=5000)
    w.pause()
    qtbot.wait(30)
    with qtbot.waitSignal(w.aborted, timeout=500):
        w.cancel()
    assert w.join(0.5)


def failing(exc: Exception):
    yield 1
    raise exc


def test_core_error_message_arrives_verbatim(qtbot, make_worker):
    err = SimulationError("the state blew up", time=1.25, joint=3, result=np.arange(3))
    w = make_worker(failing, err)
    messages, raised = [], []
    w.errored.connect(messages.append)
    w.raised.connect(raised.append)
    with qtbot.waitSignal(w.done, timeout=5000):
        w.start()
    assert messages == [str(err)]
    assert "t = 1.25 s, joint 3" in messages[0]
    assert raised[0] is err and raised[0].result is not None


def test_unexpected_exception_is_a_message_and_a_logged_traceback(qtbot, make_worker, caplog):
    w = make_worker(failing, KeyError("oops"))
    messages = []
    w.errored.connect(messages.append)
    with caplog.at_level(logging.ERROR, logger="armdyn.gui.jobs.worker"):
        with qtbot.waitSignal(w.done, timeout=5000):
            w.start()
        qtbot.waitUntil(lambda: "Traceback" in caplog.text, timeout=1000)
    assert messages == ["Unexpected error: KeyError: 'oops' (details in the log)"]
    assert "KeyError" in caplog.text


def test_a_worker_runs_once(qtbot, make_worker):
    w = make_worker(counting, 1)
    with qtbot.waitSignal(w.done, timeout=5000):
        w.start()
    with pytest.raises(RuntimeError):
        w.start()
