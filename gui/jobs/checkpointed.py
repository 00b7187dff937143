"""A core function with `progress` and `cancel` callbacks (`core.sim.checkpoints`) as a
generator for `gui.jobs.job.Job`: its progress becomes the job's, its cancel the job's.

The function runs in a helper thread started from the job's thread (a callback cannot
``yield``); the generator yields the fraction it reports, at least every POLL_S. When
the job stops asking for values (its cancel closes the generator) the helper's cancel()
answers True at the function's next checkpoint and the generator waits for it there:
the job's thread ends a checkpoint after the cancel, and the function's Cancelled is
dropped with the job. An error of the function is raised in the job's thread (the
job's ``failed``); its value is the generator's return value.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator
from typing import Any

__all__ = ["checkpointed", "POLL_S"]

#: The generator yields at least this often (s): how soon the job sees its cancel.
POLL_S = 0.02


def checkpointed(func: Callable[..., Any], *args: Any, span: tuple[float, float] = (0.0, 1.0),
                 **kwargs: Any) -> Generator[float, None, Any]:
    """Run ``func(*args, progress=..., cancel=..., **kwargs)`` (module docstring); yield its
    fractions mapped onto `span` (start, end), return its value."""
    start, end = span
    reports: queue.Queue[float] = queue.Queue()
    stop = threading.Event()
    outcome: dict[str, Any] = {}

    def run() -> None:  # the helper thread (nice like the job's: Linux inherits it)
        try:
            outcome["value"] = func(*args, progress=reports.put, cancel=stop.is_set,
                                    **kwargs)
        except BaseException as err:  # noqa: BLE001 - raised again in the job's thread
            outcome["error"] = err

    helper = threading.Thread(target=run, name="checkpointed", daemon=True)
    helper.start()
    fraction = 0.0
    try:
        while helper.is_alive():
            try:
                fraction = reports.get(timeout=POLL_S)
            except queue.Empty:
                pass
            yield start + (end - start) * fraction
    finally:
        stop.set()      # the job closed the generator (a cancel): stop at a checkpoint
        helper.join()   # in the job's thread, never the GUI's
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
