"""Trajectory export to CSV, for the window's File > Export action.

The format belongs to the core (`core.io.results_io.write_trajectory_csv`): '#'
comment lines, a header row naming every column with its unit, then one row
per sample in SI units; the file is written atomically (temporary file, then
``os.replace``). Read it back with ``numpy.loadtxt(path, delimiter=",",
skiprows=3)``.
"""
from __future__ import annotations

import os
from pathlib import Path

from armdyn.core import Robot
from armdyn.core.io.results_io import write_trajectory_csv
from armdyn.core.sim.trajectory import Trajectory

#: Lines before the first data row (two comments and the header row).
CSV_HEADER_LINES = 3


def export_trajectory_csv(traj: Trajectory, robot: Robot, path: str | os.PathLike) -> Path:
    """Write `traj` (S samples of `robot`'s n joints) to `path` as CSV; returns the path.

    Raises ValueError if the trajectory and the robot disagree on n, OSError if
    the file cannot be written (an existing file is then left untouched).
    """
    if traj.n != robot.n:
        raise ValueError(f"the trajectory has {traj.n} joints but robot {robot.name!r} "
                         f"has {robot.n}")
    path = Path(path)
    write_trajectory_csv(traj, robot, path)
    return path
