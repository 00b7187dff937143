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

import math
import os
import sys
from collections.abc import Sequence

import numpy as np

from .cli_options import (Parser, UsageError, as_options, inverse_options, positive,
                          simulate_options, stops_option, typed_pose)
from .errors import ArgumentError, ArmDynError, SimulationError, SingularConfigurationError
from .io.results_io import trajectory_csv_text, write_trajectory_csv
from .io.bundled import model_path
from .io.mechanism_file import load_mechanism
from .io.urdf import is_urdf, load_urdf
from .sim.simulation import simulate
from .sim.stops import dissipated_energy, simulation_warnings, stop_report
from .sim.motions import motion_warnings, run_inverse_dynamics
from .sim.trajectory import RUN_COPIES, Trajectory, check_sample_memory, sample_count
from .sweep_cli import add_sweep_parser, run_sweep

#: Bytes of CSV text per number (10 significant digits, sign, exponent and comma), held
#: twice while it is written (the text and its encoding).
_CSV_BYTES_PER_NUMBER = 2 * 18


class _OutputError(Exception):
    """The CSV could not be written (the message names the path as the user gave it)."""


def _parser() -> Parser:
    p = Parser(prog="armdyn", description="Robot-arm dynamics from DH and inertia tables.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    common = Parser(add_help=False)
    common.add_argument("robot", help="robot or mechanism file (TOML, see robots/) or URDF")
    common.add_argument("-o", "--output", default="-",
                        help="CSV file to write, replaced atomically ('-': stdout; a device, "
                        "pipe or /dev/stdout is written through)")
    common.add_argument("--dt", type=positive, default=0.01, help="output sample step, s (0.01)")
    common.add_argument("--units", choices=("deg", "rad"), default="deg",
                        help="unit of revolute joint values on the command line (deg)")
    common.add_argument("--floating-base", action="store_true",
                        help="a URDF's root link floats on a free joint (docs/floating-bases.md)")
    inv = sub.add_parser("inverse", parents=[common],
                         help="joint torques along a cycloidal motion (seed 001 eq. 22)")
    inverse_options(inv)
    sim = sub.add_parser("simulate", parents=[common], help="free-fall simulation")
    simulate_options(sim)
    add_sweep_parser(sub, common)  # armdyn sweep inverse|simulate
    return p


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
        raise UsageError(f"-o {output}: is a directory; give a file name")
    folder = os.path.dirname(output)
    if folder and not os.path.isdir(folder):
        what = "not a directory" if os.path.exists(folder) else "no such directory"
        raise UsageError(f"-o {output}: {what}: {folder}")


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
            return run_sweep(args, robot)
        loops = bool(robot.loops)
        if args.command == "inverse":
            driven = robot.actuated if loops else None
            start = typed_pose(args.start, robot, args.units, "--start", driven)
            target = typed_pose(args.target, robot, args.units, "--target", driven)
            start = robot.q_home if start is None else start
            _check_memory(robot, args.duration, args.dt)
            for warning in motion_warnings(robot, start, target, args.duration):
                print(f"armdyn: warning: {as_options(warning)}", file=sys.stderr)
            traj = run_inverse_dynamics(robot, start, target, args.duration, args.dt)
        else:
            free = robot.independent if loops else None
            q0 = typed_pose(args.q0, robot, args.units, "--q0", free)
            qd0 = typed_pose(args.qd0, robot, args.units, "--qd0", free, rest=np.zeros(robot.n))
            if not (math.isfinite(args.damping) and args.damping >= 0):
                raise UsageError(f"--damping must be >= 0, got {args.damping}")
            stops = stops_option(args)
            _check_memory(robot, args.duration, args.dt)
            for warning in simulation_warnings(robot, q0, stops):
                print(f"armdyn: warning: {as_options(warning)}", file=sys.stderr)
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
    except (UsageError, _OutputError) as err:
        print(f"armdyn: {err}", file=sys.stderr)
        return 2
    except SingularConfigurationError as err:
        print(f"armdyn: {err}", file=sys.stderr)
        return 1
    except ArgumentError as err:
        print(f"armdyn: {as_options(str(err))}", file=sys.stderr)
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
