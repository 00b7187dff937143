"""Command line: `armdyn inverse FILE ...`, `armdyn simulate FILE ...` and
`armdyn identify FILE LOG.csv -o FILE_ID.toml` (no Qt).

FILE is a robot file or a mechanism file. Both commands write CSV (a header names
every unit; mechanisms with loops add the cut-joint forces and the loop residual),
print a one-line summary and exit non-zero with a one-line message, never a
traceback, on bad input: 2 for bad arguments or files, 1 when a simulation blew up
or reached a singular pose (the samples computed so far are still written).

The output (-o) is a file, replaced atomically, or '-' (stdout), a device, a named pipe or
/dev/stdout, written through; a directory or a missing folder is refused before any work.

`inverse` runs along the cycloid (or `--law quintic|trapezoid`) from --start to
--target over -T, or along a measured motion, `--motion LOG.csv` (`core.io.motion_file`:
a column map with `--columns`, the differentiator's cut-off with `--cutoff`), at the
log's own sample times; it prints the differentiator's window and cut-off and warns
about every joint the motion takes past its limits.

`simulate` puts end stops at the joint limits the file gives (`--stops off` ignores
them; `--stop-frequency`, `--stop-stiffness`, `--stop-damping` set them, see
`core.sim.simulation.JointStops`), warns before it starts about a prismatic joint that
nothing stops, and names in its summary every stop the integrator saw hit (also between
two samples) and the energy their dampers dissipated (0 within the integrator's error).

`identify` fits the model's inertial, friction and rotor parameters to a log with
torques (`core.sim.identification`; `--validate OTHER.csv` a second log), prints the base
parameters with their standard deviations (stdout) and the fit's RMS per joint (stderr),
and writes the identified model in the input's own format, atomically; a refused
identification writes nothing (status 2).

Joint values on the command line: one per joint, or, for a mechanism with loops,
one per actuated joint (`inverse`) or independent joint (`simulate`); the other
joints follow by assembly. A model with a joint of several degrees of freedom (a
floating system) takes them for its revolute and prismatic joints only: those a
target names (`core.sim.motions.target_joints`, the window's rule) for `inverse`, the
free body following the motion; for `simulate` those of `cli_options.fall_joints`,
the free body starting at its home pose, at rest.

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
from typing import TYPE_CHECKING

import numpy as np

from .cli_options import (Parser, UsageError, as_options, columns_option, fall_joints,
                          inverse_options, log_options, measured_motion, positive,
                          simulate_options, stops_option, typed_pose)
from .errors import ArgumentError, ArmDynError, SimulationError, SingularConfigurationError
from .io.results_io import trajectory_csv_text, write_trajectory_csv
from .io.bundled import model_path
from .io.mechanism_file import load_mechanism
from .io.urdf import is_urdf, load_urdf
from .kernels.cache import FIRST_COMPILE_TIME, cache_folder, cache_is_cold
from .sim.simulation import simulate
from .sim.stops import dissipated_energy, simulation_warnings, stop_report
from .io.model_files import load_model, save_model
from .io.motion_file import load_motion
from .sim.joint_motions import REST_TO_REST
from .sim.motions import motion_warnings, run_inverse_dynamics, target_joints
from .sim.trajectory import RUN_COPIES, Trajectory, check_sample_memory, sample_count
from .sweep_cli import add_sweep_parser, run_sweep

if TYPE_CHECKING:
    from .sim.identification import Identification

#: Said on stderr before the first run of a version compiles its kernels (the times
#: measured on this project's 2-core machine, docs/cli.md).
COMPILE_NOTE = ("armdyn: first run of this version: compiling the dynamics kernels it needs "
                "(once, about {minutes}; later runs load them from {folder})")
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
                         help="joint torques along a motion: start -> target, or a log")
    inverse_options(inv)
    ide = sub.add_parser("identify", help="fit the model's parameters to a log with torques")
    ide.add_argument("robot", help="robot or mechanism file (TOML, see robots/) or URDF")
    ide.add_argument("log", metavar="LOG.csv", help="a measured motion with torques "
                     "(t,q1..qn,tau1..taun)")
    ide.add_argument("--validate", metavar="OTHER.csv",
                     help="a second log: the identified model's RMS on it")
    ide.add_argument("-o", "--output", required=True, metavar="MODEL_ID.toml",
                     help="the identified model, written atomically in the input's format")
    log_options(ide, "logs'")
    sim = sub.add_parser("simulate", parents=[common], help="free-fall simulation")
    simulate_options(sim)
    add_sweep_parser(sub, common)  # armdyn sweep inverse|simulate
    return p


def _check_memory(robot, samples: int) -> None:
    """Refuse, before any work, a run of `samples` whose samples and CSV text would not
    fit in the share of memory `core.sim.trajectory.check_sample_memory` allows."""
    columns = Trajectory.bytes_per_sample(robot.nv, robot.kernel.m, nq=robot.nq,
                                          ne=len(robot.model.forces)) // 8
    check_sample_memory(samples,
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
    head = (f"{robot.name}: {traj.kind}, {len(traj)} sample{'s' * (len(traj) != 1)} over "
            f"{traj.t[-1]:g} s; ")
    if traj.kind == "inverse-dynamics":
        peak = np.abs(traj.tau).max(axis=0)
        r = int(np.argmax(peak))
        j = int(robot.model.rate_joint[r])  # the joint of that rate (a free joint has 6)
        unit = "N m" if robot.is_revolute[j] else "N"
        loops = (f"largest loop residual {traj.loop_residual.max():.2g}; "
                 if traj.cut_forces.shape[1] else "")
        return head + (f"peak |tau| {peak[r]:.4g} {unit} at joint {j + 1}; {loops}"
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


def _inverse(args, robot) -> Trajectory:
    """The run of `armdyn inverse`: along the log of --motion, or along --law from --start
    to --target over -T. --start and --target give the values of the joints a target
    names (`core.sim.motions.target_joints`, as the window's Run panel): every joint of
    a serial arm or tree; the actuated joints of a mechanism with loops; the revolute and
    prismatic joints of a floating system (its free body follows the motion)."""
    motion = measured_motion(args, robot)
    if motion is not None:
        _check_memory(robot, len(motion))
        traj = run_inverse_dynamics(robot, motion)
        for warning in traj.warnings:
            print(f"armdyn: warning: {warning}", file=sys.stderr)
        return traj
    if args.target is None:
        raise UsageError("give --target (a pose) or --motion (a log)")
    driven = target_joints(robot)
    start = typed_pose(args.start, robot, args.units, "--start", driven)
    start = robot.q_home if start is None else start
    target = typed_pose(args.target, robot, args.units, "--target", driven, rest=start)
    _check_memory(robot, sample_count(args.duration, args.dt))
    for warning in motion_warnings(robot, start, target, args.duration):
        print(f"armdyn: warning: {as_options(warning)}", file=sys.stderr)
    if args.law == "cycloid":
        return run_inverse_dynamics(robot, start, target, args.duration, args.dt)
    motion = REST_TO_REST[args.law](start, target, args.duration)
    return run_inverse_dynamics(robot, motion, dt_out=args.dt)


def _identify(args) -> int:
    """`armdyn identify`: the identification of --output's model from LOG.csv."""
    from .sim.identification import identify  # scipy.optimize: imported by identify only

    if args.output == "-":
        raise UsageError("-o: identify writes a model file; give its name")
    path = model_path(args.robot)
    model = load_model(path)
    columns = columns_option(args.columns)
    logs = [load_motion(args.log, model, columns, args.cutoff)]
    if args.validate is not None:
        logs.append(load_motion(args.validate, model, columns, args.cutoff))
    for log, motion in zip((args.log, args.validate), logs):
        for warning in motion.warnings:
            print(f"armdyn: warning: {log}: {warning}", file=sys.stderr)
    found = identify(model, logs[0], validate=logs[1] if len(logs) > 1 else None)
    sys.stdout.write(identification_text(found))
    sys.stdout.flush()
    try:
        lost = save_model(found.model, args.output)  # what a URDF cannot hold
    except ArmDynError as err:
        raise _OutputError(str(err)) from None
    for warning in lost:
        print(f"armdyn: warning: {args.output}: {warning}", file=sys.stderr)
    rms = ", ".join(f"{v:.4g}" for v in found.rms)
    line = (f"armdyn: {len(found.base_parameters)} base parameters from {len(logs[0])} "
            f"samples, condition number {found.condition_number:.4g}; fit RMS per joint "
            f"[{rms}]")
    if found.validation_rms is not None:
        line += f", on {args.validate} [{', '.join(f'{v:.4g}' for v in found.validation_rms)}]"
    shift = float(np.abs(found.base_shift).max())
    line += (f"; consistency moved the base parameters by at most {shift:.3g} standard "
             f"deviations; wrote {args.output}")
    print(line, file=sys.stderr)
    return 0


def identification_text(found: Identification) -> str:
    """The base parameters as text: one line each, estimate, standard deviation, words."""
    lines = ["# base parameter estimate, standard deviation, combination (SI units)"]
    for value, std, words in zip(found.base_parameters, found.std, found.combinations):
        lines.append(f"{value:14.6g} {std:11.3g}  {words}")
    if found.unidentifiable:
        lines.append("# in no combination (no motion identifies them): "
                     + ", ".join(found.unidentifiable))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
        _check_output(args.output)
        if cache_is_cold():  # else silent for a minute or more on the first run
            print(COMPILE_NOTE.format(minutes=FIRST_COMPILE_TIME, folder=cache_folder()),
                  file=sys.stderr, flush=True)
        if args.command == "identify":
            return _identify(args)
        path = model_path(args.robot)  # a file, or a bundled model's short name
        robot = load_urdf(path, floating_base=args.floating_base) if is_urdf(path) \
            else load_mechanism(path)
        for warning in robot.warnings:  # the loops closed on loading, a URDF's unread tags
            print(f"armdyn: warning: {path.name}: {warning}", file=sys.stderr)
        if args.command == "sweep":
            return run_sweep(args, robot)
        if args.command == "inverse":
            traj = _inverse(args, robot)
        else:
            free, role = fall_joints(robot)
            q0 = typed_pose(args.q0, robot, args.units, "--q0", free, role=role)
            qd0 = typed_pose(args.qd0, robot, args.units, "--qd0", free, rates=True, role=role)
            if not (math.isfinite(args.damping) and args.damping >= 0):
                raise UsageError(f"--damping must be >= 0, got {args.damping}")
            stops = stops_option(args)
            _check_memory(robot, sample_count(args.duration, args.dt))
            for warning in simulation_warnings(robot, q0, stops):
                print(f"armdyn: warning: {as_options(warning)}", file=sys.stderr)
            try:
                traj = simulate(robot, args.duration, q0=q0, qd0=qd0, damping=args.damping,
                                rtol=args.rtol, atol=args.atol, dt_out=args.dt, stops=stops,
                                max_wall_time=args.max_wall_time)
            except SimulationError as err:
                samples = len(err.result) if err.result is not None else 0
                count = f"{samples} sample{'s' * (samples != 1)}"
                written = f"{count} written"
                if samples:
                    try:
                        _emit(err.result, robot, args.output)
                    except _OutputError as bad:
                        written = f"{count} not written: {bad}"
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
