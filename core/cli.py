"""Command line: `armdyn inverse FILE ...` and `armdyn simulate FILE ...` (no Qt).

FILE is a robot file or a mechanism file. Both commands write CSV (a header names
every unit; mechanisms with loops add the cut-joint forces and the loop residual),
print a one-line summary and exit non-zero with a one-line message, never a
traceback, on bad input: 2 for bad arguments or files, 1 when a simulation blew up
or reached a singular pose (the samples computed so far are still written).

The output (-o) is a file, replaced atomically, or '-' (stdout), a device, a named pipe or
/dev/stdout, written through; a directory or a missing folder is refused before any work.

`simulate` puts end stops at the joint limits the file gives (`--stops off` ignores
them; `--stop-frequency`, `--stop-stiffness`, `--stop-damping` set them, see
`core.sim.simulation.JointStops`), warns before it starts about a prismatic joint that
nothing stops, and names in its summary every stop the integrator saw hit (also between
two samples) and the energy their dampers dissipated (0 within the integrator's error).

Joint values on the command line: one per joint, or, for a mechanism with loops,
one per actuated joint (`inverse`) or independent joint (`simulate`); the other
joints follow by assembly.

What the core refuses, the command line refuses in one line naming the option (the
core's argument names are mapped to the options: q_end is --target, rtol --rtol):
tolerances out of range, joint values and rates beyond the physical bounds, a run
whose samples and CSV would not fit in half the available memory; `simulate` stops a
run projected past its wall-time budget (`--max-wall-time`) with status 1.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

import numpy as np

from .errors import ArgumentError, ArmDynError, SimulationError, SingularConfigurationError
from .io.results_io import trajectory_csv_text, write_trajectory_csv
from .io.bundled import model_path
from .io.mechanism_file import load_mechanism
from .io.urdf import is_urdf, load_urdf
from .sim.driver import DEFAULT_MAX_WALL_TIME
from .sim.simulation import DEFAULT_ATOL, DEFAULT_RTOL, simulate
from .sim.stops import (DEFAULT_STOP_DAMPING, DEFAULT_STOP_FREQUENCY, JointStops,
                        dissipated_energy, simulation_warnings, stop_report)
from .sim.motions import motion_warnings, run_inverse_dynamics
from .sim.trajectory import RUN_COPIES, Trajectory, check_sample_memory, sample_count

#: The core's argument names and the options that give them (messages name the option).
_OPTIONS = {"duration / dt_out": "-T / --dt", "q_end": "--target", "q_start": "--start",
            "q0": "--q0", "qd0": "--qd0", "rtol": "--rtol", "atol": "--atol",
            "duration": "-T", "dt_out": "--dt", "damping": "--damping",
            "max_wall_time": "--max-wall-time"}
#: Bytes of CSV text per number (10 significant digits, sign, exponent and comma), held
#: twice while it is written (the text and its encoding).
_CSV_BYTES_PER_NUMBER = 2 * 18


class _UsageError(Exception):
    pass


class _OutputError(Exception):
    """The CSV could not be written (the message names the path as the user gave it)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise _UsageError(message)


def _pose(text: str | None, model, unit: str, what: str, driven=None, rest=None
          ) -> np.ndarray | None:
    """Joint values typed by the user: comma-separated, deg (or rad) for revolute, m for
    prismatic; all n joints, or only the `driven` ones (the others from `rest`, by
    default q_home)."""
    if text is None:
        return None
    n = model.n
    several = [name for name, kind in zip(model.joint_names, model.joint_types)
               if not kind.is_dh]
    if several:
        raise _UsageError(f"{what}: joint values on the command line are one per revolute or "
                          f"prismatic joint; joint {several[0]!r} is "
                          f"{model.joint_types[model.joint_index(several[0])].value}: set "
                          "this model's state from Python (docs/floating-bases.md)")
    try:
        values = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise _UsageError(f"{what}: expected {n} comma-separated numbers, got {text!r}") from None
    joints = list(range(n))
    if driven is not None and len(values) == len(driven) and len(driven) != n:
        joints = list(driven)
    elif len(values) != n:
        hint = ""
        if driven is not None and len(driven) != n:
            names = ", ".join(model.joint_names[j] for j in driven)
            hint = f" or {len(driven)} (the joints {names})"
        raise _UsageError(f"{what}: expected {n} values (one per joint){hint}, got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise _UsageError(f"{what}: values must be finite, got {text!r}")
    v = np.array(values)
    rev = model.is_revolute[joints]
    if unit == "deg":
        v[rev] = np.radians(v[rev])
    q = (model.q_home if rest is None else rest).copy()
    q[joints] = v
    return q


def _positive(text: str) -> float:
    x = float(text)
    if not (math.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return x


def inverse_options(inv: argparse.ArgumentParser, target_required: bool = True) -> None:
    """The options of `armdyn inverse` (also those of `armdyn sweep inverse`)."""
    inv.add_argument("--target", required=target_required,
                     help="target pose, one value per joint")
    inv.add_argument("--start", help="start pose (default: the robot's home pose)")
    inv.add_argument("-T", "--duration", type=_positive, default=10.0, help="motion time, s (10)")


def simulate_options(sim: argparse.ArgumentParser) -> None:
    """The options of `armdyn simulate` (also those of `armdyn sweep simulate`)."""
    sim.add_argument("-T", "--duration", type=_positive, default=10.0, help="simulated time, s (10)")
    sim.add_argument("--q0", help="initial pose (default: home)")
    sim.add_argument("--qd0", help="initial joint rates (deg/s or rad/s; m/s)")
    sim.add_argument("--damping", type=float, default=0.0,
                     help="viscous damping of every joint, N m s/rad or N s/m (0)")
    sim.add_argument("--stops", choices=("on", "off"), default="on",
                     help="end stops at the joint limits the file gives (on)")
    sim.add_argument("--stop-frequency", type=_positive, default=DEFAULT_STOP_FREQUENCY,
                     help="stiffness of the stops as the frequency, Hz, at which each joint "
                     f"rings on its stop ({DEFAULT_STOP_FREQUENCY:g})")
    sim.add_argument("--stop-stiffness", type=_positive, default=None,
                     help="stiffness of every stop, N m/rad or N/m (instead of "
                     "--stop-frequency)")
    sim.add_argument("--stop-damping", type=float, default=DEFAULT_STOP_DAMPING,
                     help="Hunt-Crossley damping of the stops, s/rad or s/m; 0: elastic "
                     f"({DEFAULT_STOP_DAMPING:g})")
    sim.add_argument("--rtol", type=_positive, default=DEFAULT_RTOL,
                     help=f"relative tolerance of the integrator ({DEFAULT_RTOL:g})")
    sim.add_argument("--atol", type=_positive, default=DEFAULT_ATOL,
                     help=f"absolute tolerance of the integrator ({DEFAULT_ATOL:g})")
    sim.add_argument("--max-wall-time", type=_positive, default=DEFAULT_MAX_WALL_TIME,
                     help="wall-time budget of the run, s: a run projected past it stops "
                     f"({DEFAULT_MAX_WALL_TIME:g})")


def _parser() -> _Parser:
    p = _Parser(prog="armdyn", description="Robot-arm dynamics from DH and inertia tables.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    common = _Parser(add_help=False)
    common.add_argument("robot", help="robot or mechanism file (TOML, see robots/) or URDF")
    common.add_argument("-o", "--output", default="-",
                        help="CSV file to write, replaced atomically ('-': stdout; a device, "
                        "pipe or /dev/stdout is written through)")
    common.add_argument("--dt", type=_positive, default=0.01, help="output sample step, s (0.01)")
    common.add_argument("--units", choices=("deg", "rad"), default="deg",
                        help="unit of revolute joint values on the command line (deg)")
    common.add_argument("--floating-base", action="store_true",
                        help="a URDF's root link floats on a free joint (docs/floating-bases.md)")
    inv = sub.add_parser("inverse", parents=[common],
                         help="joint torques along a cycloidal motion (seed 001 eq. 22)")
    inverse_options(inv)
    sim = sub.add_parser("simulate", parents=[common], help="free-fall simulation")
    simulate_options(sim)
    from .sweep_cli import add_sweep_parser  # armdyn sweep inverse|simulate
    add_sweep_parser(sub, common)
    return p


def _as_options(message: str) -> str:
    """A core message that starts with an argument's name, with the option's name (and
    its advice in options: "a larger --dt or a shorter -T")."""
    message = message.replace("a larger dt_out or a shorter duration",
                              "a larger --dt or a shorter -T")
    for name, option in _OPTIONS.items():
        if message.startswith(name) and message[len(name):len(name) + 1] in (" ", ":"):
            return option + message[len(name):]
    return message


def _check_memory(robot, duration: float, dt: float) -> None:
    """Refuse, before any work, a run whose samples and CSV text would not fit in the
    share of memory `core.sim.trajectory.check_sample_memory` allows."""
    columns = Trajectory.bytes_per_sample(robot.n, robot.kernel.m) // 8
    check_sample_memory(sample_count(duration, dt),
                        8 * RUN_COPIES * columns + _CSV_BYTES_PER_NUMBER * columns,
                        "the run and its CSV")


def _check_output(output: str) -> None:
    """Refuse, before any work, an output path that cannot be a file (named as given)."""
    if output == "-":
        return
    if os.path.isdir(output):
        raise _UsageError(f"-o {output}: is a directory; give a file name")
    folder = os.path.dirname(output)
    if folder and not os.path.isdir(folder):
        what = "not a directory" if os.path.exists(folder) else "no such directory"
        raise _UsageError(f"-o {output}: {what}: {folder}")


def _emit(traj: Trajectory, robot, output: str) -> None:
    """Write the CSV to `output` ('-': stdout); a device, pipe or /dev/stdout is written
    through, a file replaced atomically (core.io.atomic)."""
    if output == "-":
        sys.stdout.write(trajectory_csv_text(traj, robot))
        sys.stdout.flush()
        return
    try:
        write_trajectory_csv(traj, robot, output)
    except OSError as err:
        raise _OutputError(f"cannot write {output}: {err.strerror or err}") from None


def _stops(args) -> JointStops | bool:
    """The `stops` argument of `simulate` from the command line (stops act only where
    the file gives limits)."""
    if not (math.isfinite(args.stop_damping) and args.stop_damping >= 0):
        raise _UsageError(f"--stop-damping must be >= 0, got {args.stop_damping}")
    if args.stops == "off":
        return False
    return JointStops(stiffness=args.stop_stiffness, frequency=args.stop_frequency,
                      damping=args.stop_damping)


def _summary(traj: Trajectory, robot, output: str, damping: float = 0.0) -> str:
    if len(traj) == 0:
        return "no samples"
    where = "stdout" if output == "-" else output
    head = f"{robot.name}: {traj.kind}, {len(traj)} samples over {traj.t[-1]:g} s; "
    if traj.kind == "inverse-dynamics":
        peak = np.abs(traj.tau).max(axis=0)
        j = int(np.argmax(peak))
        unit = "N m" if robot.is_revolute[j] else "N"
        loops = (f"largest loop residual {traj.loop_residual.max():.2g}; "
                 if traj.cut_forces.shape[1] else "")
        return head + (f"peak |tau| {peak[j]:.4g} {unit} at joint {j + 1}; {loops}"
                       f"wrote {where}")
    E = traj.energy
    peak_T = float(E[:, 0].max())
    hits = stop_report(robot, traj)
    if damping > 0 or hits:  # the total energy falls by what the dampers took out
        energy = f"energy dissipated {dissipated_energy(traj):.4g} J"
    else:
        energy = f"total-energy drift {float(np.abs(E[:, 2] - E[0, 2]).max()):.2g} J"
    loops = (f"largest loop residual {traj.loop_residual.max():.2g}; "
             if traj.cut_forces.shape[1] else "")
    stops = "; ".join(hits) + "; " if hits else ""
    return head + (f"peak kinetic energy {peak_T:.4g} J, {energy}; {stops}{loops}"
                   f"wrote {where}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
        _check_output(args.output)
        path = model_path(args.robot)  # a file, or a bundled model's short name
        robot = load_urdf(path, floating_base=args.floating_base) if is_urdf(path) \
            else load_mechanism(path)
        if args.command == "sweep":
            from .sweep_cli import run_sweep
            return run_sweep(args, robot)
        loops = bool(robot.loops)
        if args.command == "inverse":
            driven = robot.actuated if loops else None
            start = _pose(args.start, robot, args.units, "--start", driven)
            target = _pose(args.target, robot, args.units, "--target", driven)
            start = robot.q_home if start is None else start
            _check_memory(robot, args.duration, args.dt)
            for warning in motion_warnings(robot, start, target, args.duration):
                print(f"armdyn: warning: {_as_options(warning)}", file=sys.stderr)
            traj = run_inverse_dynamics(robot, start, target, args.duration, args.dt)
        else:
            free = robot.independent if loops else None
            q0 = _pose(args.q0, robot, args.units, "--q0", free)
            qd0 = _pose(args.qd0, robot, args.units, "--qd0", free, rest=np.zeros(robot.n))
            if not (math.isfinite(args.damping) and args.damping >= 0):
                raise _UsageError(f"--damping must be >= 0, got {args.damping}")
            stops = _stops(args)
            _check_memory(robot, args.duration, args.dt)
            for warning in simulation_warnings(robot, q0, stops):
                print(f"armdyn: warning: {_as_options(warning)}", file=sys.stderr)
            try:
                traj = simulate(robot, args.duration, q0=q0, qd0=qd0, damping=args.damping,
                                rtol=args.rtol, atol=args.atol, dt_out=args.dt, stops=stops,
                                max_wall_time=args.max_wall_time)
            except SimulationError as err:
                samples = len(err.result) if err.result is not None else 0
                written = f"{samples} samples written"
                if samples:
                    try:
                        _emit(err.result, robot, args.output)
                    except _OutputError as bad:
                        written = f"{samples} samples not written: {bad}"
                print(f"armdyn: {err} ({written})", file=sys.stderr)
                return 1
        _emit(traj, robot, args.output)
        damping = args.damping if args.command == "simulate" else 0.0
        print(_summary(traj, robot, args.output, damping), file=sys.stderr)
        return 0
    except (_UsageError, _OutputError) as err:
        print(f"armdyn: {err}", file=sys.stderr)
        return 2
    except SingularConfigurationError as err:
        print(f"armdyn: {err}", file=sys.stderr)
        return 1
    except ArgumentError as err:
        print(f"armdyn: {_as_options(str(err))}", file=sys.stderr)
        return 2
    except (ArmDynError, ValueError, OSError) as err:
        print(f"armdyn: {err}", file=sys.stderr)
        return 2
    except MemoryError:
        print("armdyn: out of memory (use a larger --dt or a shorter -T)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("armdyn: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
