"""One call the GUI waits for without freezing: a read in a `Job`, a progress box, Cancel.

Opening a file reads and checks it in core (`load_model`): a mechanism of 300 loops that
cannot be closed took 16 s there, on the GUI thread, and the window froze (issue #20).
`run_in_worker` runs such a call in a job's thread while its caller waits in a local
event loop: the window repaints, its timers run, and after SHOW_AFTER_MS a window-modal
progress box says what is going on, for how long so far, and offers Cancel. Core
reports no fraction of a read, so the box is a busy bar with the seconds elapsed.

Cancel returns at once (the job's policy, `gui.jobs.job`): the caller goes on as if
nothing had been asked, and the call's thread, which cannot be interrupted inside core,
ends in the background and its result is dropped.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Generator
from enum import Enum
from typing import Any

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QProgressDialog, QWidget

from .job import Job

__all__ = ["Waited", "run_in_worker", "SHOW_AFTER_MS", "WAIT_BOX", "TICK_MS"]

#: The progress box shows when a call has taken this long, ms (a quick read shows none).
SHOW_AFTER_MS = 300
#: The box's seconds are updated this often, ms.
TICK_MS = 250
#: Object name of the progress box.
WAIT_BOX = "waitBox"


class Waited(Enum):
    """How a call waited for ended."""
    FINISHED = "finished"    # value: what the call returned
    FAILED = "failed"        # value: (message, exception), as `Job.failed` gives them
    CANCELLED = "cancelled"  # value: None


def _once(call: Callable[[], Any]) -> Generator[None, None, Any]:
    yield None  # a checkpoint: a cancel before the call starts skips it
    return call()


def run_in_worker(call: Callable[[], Any], text: str, parent: QWidget,
                  show_after_ms: int = SHOW_AFTER_MS) -> tuple[Waited, Any]:
    """Run `call()` in a job's thread and wait for it with the event loop running; a
    progress box (`text`, the seconds elapsed, Cancel) shows after `show_after_ms`.
    Returns how it ended and its value (see `Waited`)."""
    job = Job(_once, call, name=text)
    ended: list[tuple[Waited, Any]] = []
    job.finished.connect(lambda value: ended.append((Waited.FINISHED, value)))
    job.failed.connect(lambda message, error: ended.append((Waited.FAILED, (message, error))))
    job.cancelled.connect(lambda: ended.append((Waited.CANCELLED, None)))
    loop = QEventLoop()
    job.done.connect(loop.quit)

    box = QProgressDialog(text, "Cancel", 0, 0, parent)
    box.setObjectName(WAIT_BOX)
    box.setWindowTitle("Please wait")
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setMinimumDuration(show_after_ms)
    box.setAutoClose(False)
    box.setAutoReset(False)
    box.canceled.connect(job.cancel)
    start = time.perf_counter()
    ticks = QTimer()
    ticks.setInterval(TICK_MS)
    ticks.timeout.connect(lambda: box.setLabelText(
        f"{text}\n{time.perf_counter() - start:.0f} s so far"))
    shown = QTimer()
    shown.setSingleShot(True)
    shown.timeout.connect(box.show)
    try:
        job.start()
        ticks.start()
        shown.start(show_after_ms)
        loop.exec()
    finally:
        ticks.stop()
        shown.stop()
        if not ended:  # the loop was left otherwise (the application quits)
            job.cancel()
        box.canceled.disconnect(job.cancel)
        box.hide()
        box.deleteLater()
    return ended[0] if ended else (Waited.CANCELLED, None)
