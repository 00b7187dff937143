"""Loading a measured motion (a log file) in a job: reading and differentiating a 60 s
log at 1 kHz takes longer than the GUI may wait (`gui.jobs.job.Job`)."""
from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

from armdyn.core import Motion, load_motion

__all__ = ["load_motion_steps"]


def load_motion_steps(path: str | Path, model=None) -> Generator[float, None, Motion]:
    """A job's generator: yields 0.0 (started), then returns `load_motion(path, model)`
    (the joint count checked against `model` when given). Its errors (MotionFileError,
    naming the file, line and column) reach the job's ``failed``."""
    yield 0.0
    return load_motion(path, model)
