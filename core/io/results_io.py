"""Write results as CSV: one row per sample, a header naming every column's unit."""
from __future__ import annotations

import io
import os

import numpy as np

from .atomic import write_atomically
from ..algorithms.loops import constraint_row_labels, constraint_row_units
from ..model.arguments import model_of
from ..sim.trajectory import Trajectory


def trajectory_header(traj: Trajectory, robot) -> list[str]:
    """Column names with units, e.g. 'q2 shoulder [rad]', 'tau3 [N]'; for a mechanism
    with loops also 'lambda C x [N]' per closure row and "loop residual [m or rad]"; for
    a run with a pull (`Trajectory.pull`) 'pull link', 'pull point x [m]' .., 'pull
    target x [m]' .., 'pull force x [N]' .., 'pull power [W]'."""
    names = robot.link_names
    rev = robot.is_revolute
    cols = ["t [s]"]
    for sym, (ur, up) in (("q", ("rad", "m")), ("qd", ("rad/s", "m/s")),
                          ("qdd", ("rad/s^2", "m/s^2")), ("tau", ("N m", "N"))):
        cols += [f"{sym}{j + 1} {names[j]} [{ur if rev[j] else up}]" for j in range(traj.n)]
    cols += ["kinetic energy [J]", "potential energy [J]", "total energy [J]"]
    if model_of(robot).loops:
        cols += [f"lambda {label} [{unit}]" for label, unit in
                 zip(constraint_row_labels(robot), constraint_row_units(robot))]
        cols.append("loop residual [m or rad]")
    if traj.pull is not None:
        cols.append("pull link")
        for what, unit in (("point", "m"), ("target", "m"), ("force", "N")):
            cols += [f"pull {what} {axis} [{unit}]" for axis in "xyz"]
        cols.append("pull power [W]")
    return cols


def trajectory_csv_text(traj: Trajectory, robot) -> str:
    """The CSV text: '#' comment lines, a header row, then one row per sample."""
    out = io.StringIO()
    out.write(f"# ArmDyn {traj.kind} of {robot.name!r}: {len(traj)} samples, {robot.n} joints\n")
    out.write("# SI units (rad for revolute joints, m for prismatic)\n")
    out.write(",".join(h.replace(",", ";") for h in trajectory_header(traj, robot)) + "\n")
    columns = [traj.t, traj.q, traj.qd, traj.qdd, traj.tau, traj.energy]
    if model_of(robot).loops:
        columns += [traj.cut_forces, traj.loop_residual]
    if traj.pull is not None:
        columns.append(traj.pull)
    table = np.column_stack(columns)
    np.savetxt(out, table, delimiter=",", fmt="%.10g")
    return out.getvalue()


def write_trajectory_csv(traj: Trajectory, robot, path: str | os.PathLike) -> None:
    """Save a trajectory as CSV: a file is replaced atomically, a device, pipe or
    /dev/stdout written through (`core.io.atomic`); an OSError names `path` as given.
    Read back with numpy.loadtxt(path, delimiter=',', skiprows=3)."""
    data = trajectory_csv_text(traj, robot).encode("utf-8")
    write_atomically(path, data)
