"""Write results as CSV: one row per sample, a header naming every column's unit."""
from __future__ import annotations

import io
import os

import numpy as np

from .atomic import write_atomically
from ..algorithms.loops import constraint_row_labels, constraint_row_units
from ..model.arguments import model_of
from ..sim.trajectory import Trajectory


#: Names of the entries of a joint of several degrees of freedom, in q and in the rates.
_VALUE_NAMES = {"spherical": ("qx", "qy", "qz", "qw"), "universal": ("1", "2"),
                "free": ("x", "y", "z", "qx", "qy", "qz", "qw")}
_RATE_NAMES = {"spherical": ("wx", "wy", "wz"), "universal": ("1", "2"),
               "free": ("wx", "wy", "wz", "vx", "vy", "vz")}


def _joint_columns(robot, symbol: str, units: tuple[str, str], rates: bool) -> list[str]:
    """'q2 shoulder [rad]' per joint of one degree of freedom; 'q1 trunk qx [-]', ...
    per entry of a joint of several (`units`: angular, linear)."""
    m = model_of(robot)
    cols = []
    for j, (name, kind) in enumerate(zip(robot.link_names, m.joint_types)):
        if kind.is_dh:
            unit = units[0] if kind.value == "revolute" else units[1]
            cols.append(f"{symbol}{j + 1} {name} [{unit}]")
            continue
        entries = (_RATE_NAMES if rates else _VALUE_NAMES)[kind.value]
        for e in entries:
            if rates:
                unit = units[1] if e.startswith("v") else units[0]
            elif e.startswith("q"):
                unit = "-"
            else:
                unit = "rad" if kind.value == "universal" else "m"
            cols.append(f"{symbol}{j + 1} {name} {e} [{unit}]")
    return cols


def _is_floating(robot) -> bool:
    return any(kind.value == "free" for kind in model_of(robot).joint_types)


def trajectory_header(traj: Trajectory, robot) -> list[str]:
    """Column names with units, e.g. 'q2 shoulder [rad]', 'tau3 [N]'; for a joint of
    several degrees of freedom one column per entry ('q1 trunk qw [-]', 'qd1 trunk vx
    [m/s]'); for a mechanism with loops also 'lambda C x [N]' per closure row and "loop
    residual [m or rad]"; for a run with a pull (`Trajectory.pull`) 'pull link', 'pull
    point x [m]' .., 'pull target x [m]' .., 'pull force x [N]' .., 'pull power [W]';
    for a floating system's simulation its mass centre and momentum ('mass centre x
    [m]' .., 'linear momentum x [kg m/s]' .., 'angular momentum x [kg m^2/s]' ..); with
    force elements their forces ('force strut [N]')."""
    cols = ["t [s]"]
    cols += _joint_columns(robot, "q", ("rad", "m"), rates=False)
    for sym, units in (("qd", ("rad/s", "m/s")), ("qdd", ("rad/s^2", "m/s^2")),
                       ("tau", ("N m", "N"))):
        cols += _joint_columns(robot, sym, units, rates=True)
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
    if traj.momentum is not None and _is_floating(robot):
        for what, unit in (("mass centre", "m"), ("linear momentum", "kg m/s"),
                           ("angular momentum", "kg m^2/s")):
            cols += [f"{what} {axis} [{unit}]" for axis in "xyz"]
    if traj.element_forces is not None:
        cols += [f"force {e.name} [N]" for e in model_of(robot).forces]
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
    if traj.momentum is not None and _is_floating(robot):
        columns.append(traj.momentum)
    if traj.element_forces is not None:
        columns.append(traj.element_forces)
    table = np.column_stack(columns)
    np.savetxt(out, table, delimiter=",", fmt="%.10g")
    return out.getvalue()


def write_trajectory_csv(traj: Trajectory, robot, path: str | os.PathLike) -> None:
    """Save a trajectory as CSV: a file is replaced atomically, a device, pipe or
    /dev/stdout written through (`core.io.atomic`); an OSError names `path` as given.
    Read back with numpy.loadtxt(path, delimiter=',', skiprows=3)."""
    data = trajectory_csv_text(traj, robot).encode("utf-8")
    write_atomically(path, data)
