"""`armdyn sweep inverse|simulate MODEL ... --vary FIELD=START:STOP:COUNT ...` (no Qt).

The run takes the options of `armdyn inverse` / `armdyn simulate` (`core.cli`: the law,
or a measured motion `--motion LOG.csv` read once and sent to every worker); each
`--vary` adds an axis of the grid (`core.sweeps.fields`: link fields, the payload, the
run's duration, poses, rates and damping). The CSV has one row per grid point: the
varied fields under the names given to --vary (values as typed: angles in --units),
the results per joint (SI), then `status`. The points run on every core
(`--workers`), or on a Dask cluster (`--scheduler ADDRESS`). On a terminal a progress
line shows how far the sweep is; Ctrl+C stops it, writes the points finished (the
others have status "cancelled") and exits with 130.

Exit status: 0 when every point was computed (some may have failed: their status says
why), 1 when every point failed, 2 for bad input (refused before any work, naming the
field and the value), 130 when interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from .cli_options import (Parser, UsageError, as_options, fall_joints, inverse_options,
                          measured_motion, simulate_options, stops_option, typed_pose)
from .io.results_io import write_trajectory_csv
from .sim.motions import motion_warnings, target_joints
from .sim.stops import simulation_warnings
from .sweeps.fields import parse_vary, typed_units
from .sweeps.plan import FreeFallRun, InverseRun
from .sweeps.sweep import (SweepCancelled, SweepResult, check_joints, finish_sweep,
                           sweep_chunks, sweep_csv_text, write_sweep_csv)

__all__ = ["add_sweep_parser", "run_sweep"]

#: The progress line is redrawn at most this often, s.
PROGRESS_S = 0.2


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return n


def _sweep_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vary", action="append", required=True, metavar="FIELD=VALUES",
                   help="an axis of the grid: FIELD=START:STOP:COUNT or FIELD=v1,v2,... "
                   "(fields: payload.mass, payload.com.x|y|z, LINK.mass, LINK.com.x, "
                   "LINK.inertia.xx, LINK.a, LINK.b, LINK.alpha, LINK.theta, "
                   "LINK.limits.lower|upper, T, and the run's poses: target.J, start.J "
                   "(a law's, not a --motion's) or q0.J, qd0.J, damping, damping.J; a "
                   "whole pose: target=v1,..,vn/"
                   "v1,..,vn). LINK and J: a number (1-based) or a name. Repeat for more "
                   "axes; the last varies fastest")
    p.add_argument("--workers", type=_workers, default=None,
                   help="local worker processes (default: every core; 1: this process)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the points on a Dask cluster (tcp://host:8786); needs "
                   "pip install 'armdyn[cluster]'")
    p.add_argument("--trajectories", metavar="DIR", default=None,
                   help="also write every point's whole run, DIR/point_<k>.csv")


def add_sweep_parser(sub, common: argparse.ArgumentParser) -> None:
    """`armdyn sweep inverse|simulate` into the command line's subcommands."""
    sweep = sub.add_parser("sweep", help="a run over a grid of changes: torque envelopes "
                           "for sizing motors (armdyn sweep inverse|simulate -h)")
    kinds = sweep.add_subparsers(dest="sweep_kind", required=True, parser_class=Parser)
    inv = kinds.add_parser("inverse", parents=[common],
                           help="inverse dynamics along a motion (--law, or a log: --motion), "
                           "per grid point")
    inverse_options(inv)
    _sweep_options(inv)
    sim = kinds.add_parser("simulate", parents=[common], help="a free fall per grid point")
    simulate_options(sim)
    _sweep_options(sim)


def _base_run(args, robot, axes):
    """The run of the options (the base every point changes)."""
    if args.sweep_kind == "inverse":
        motion = measured_motion(args, robot)
        if motion is not None:
            return InverseRun(motion=motion, dt=args.dt)
        driven = target_joints(robot)  # the joints `armdyn inverse` reads too
        start = typed_pose(args.start, robot, args.units, "--start", driven)
        target = typed_pose(args.target, robot, args.units, "--target", driven,
                            rest=robot.q_home if start is None else start)
        if target is None:
            whole = next((a for a in axes if a.field.pose and a.field.key == "target"), None)
            if whole is None:
                raise UsageError("--target is required (or --vary target=POSE/POSE..., or "
                                 "--motion LOG.csv)")
            target = whole.si[0]
        for warning in motion_warnings(robot, robot.q_home if start is None else start,
                                       target, args.duration):
            print(f"armdyn: warning: {as_options(warning)}", file=sys.stderr)
        return InverseRun(target=target, start=start, duration=args.duration, dt=args.dt,
                          law=args.law)
    free, role = fall_joints(robot)  # as `armdyn simulate`
    q0 = typed_pose(args.q0, robot, args.units, "--q0", free, role=role)
    qd0 = typed_pose(args.qd0, robot, args.units, "--qd0", free, rates=True, role=role)
    if not (np.isfinite(args.damping) and args.damping >= 0):
        raise UsageError(f"--damping must be >= 0, got {args.damping}")
    stops = stops_option(args)
    for warning in simulation_warnings(robot, q0, stops):
        print(f"armdyn: warning: {as_options(warning)}", file=sys.stderr)
    return FreeFallRun(duration=args.duration, q0=q0, qd0=qd0, damping=args.damping,
                       stops=stops, rtol=args.rtol, atol=args.atol, dt=args.dt,
                       max_wall_time=args.max_wall_time)


class _ProgressLine:
    """"sweep: 4520/10000 points (45%), 2 failed, 3.2 s, about 4 s left" on a terminal."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.on = hasattr(stream, "isatty") and stream.isatty()
        self.last = 0.0
        self.shown = False

    def update(self, p, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.on or (not force and now - self.last < PROGRESS_S):
            return
        self.last = now
        left = ""
        if 0 < p.done < p.total:
            left = f", about {p.elapsed * (p.total - p.done) / p.done:.0f} s left"
        failed = f", {p.failed} failed" if p.failed else ""
        self.stream.write(f"\rsweep: {p.done}/{p.total} points ({100 * p.fraction:.0f}%)"
                          f"{failed}, {p.elapsed:.1f} s{left}\x1b[K")
        self.stream.flush()
        self.shown = True

    def end(self) -> None:
        """Clear the line (once)."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def _write(result: SweepResult, output: str, units: list[str]) -> str:
    if output == "-":
        sys.stdout.write(sweep_csv_text(result, units))
        sys.stdout.flush()
        return "stdout"
    try:
        write_sweep_csv(result, output, units)
    except OSError as err:
        raise UsageError(f"cannot write {output}: {err.strerror or err}") from None
    return output


def _write_trajectories(result: SweepResult, folder: str) -> int:
    digits = len(str(result.size))
    written = 0
    for k, traj in enumerate(result.trajectories or ()):
        if traj is not None:
            write_trajectory_csv(traj, result.model,
                                 os.path.join(folder, f"point_{k + 1:0{digits}d}.csv"))
            written += 1
    return written


def _summary(result: SweepResult, where: str) -> str:
    model = result.model
    ok = result.done - result.failed
    run = result.plan.run
    what = f"inverse dynamics along {run.what}" if run.kind == "inverse" else "free falls"
    head = (f"{model.name}: sweep of {what}, {result.size} points on {result.engine} in "
            f"{result.elapsed:.3g} s ({ok} ok, {result.failed} failed)")
    peaks = np.where((result.status == "ok")[:, None], result.peak_torques(), -np.inf)
    if ok:
        point, j = np.unravel_index(int(np.argmax(peaks)), peaks.shape)
        unit = "N m" if model.is_revolute[j] else "N"
        at = ", ".join(f"{c}={v:g}" for c, v in zip(result.columns, result.values[point]))
        head += (f"; largest peak |tau| {peaks[point, j]:.4g} {unit} at joint {j + 1}, "
                 f"point {point + 1} ({at})")
    return head + f"; wrote {where}"


def run_sweep(args, robot) -> int:
    """`armdyn sweep ...` once the model is loaded (`core.cli.main` handles the errors)."""
    kind = "inverse" if args.sweep_kind == "inverse" else "free-fall"
    check_joints(robot)  # before the poses typed for it are read
    axes = [parse_vary(spec, robot, kind, args.units) for spec in args.vary]
    run = _base_run(args, robot, axes)
    folder = args.trajectories
    if folder is not None:
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise UsageError(f"--trajectories {folder}: not a directory")
        parent = os.path.dirname(os.path.abspath(folder))
        if not os.path.isdir(parent):
            raise UsageError(f"--trajectories {folder}: no such directory: {parent}")
    units = typed_units(axes, args.units)
    bar = _ProgressLine(sys.stderr)
    chunks = sweep_chunks(robot, run, axes, workers=args.workers,
                          scheduler=args.scheduler, trajectories=folder is not None)
    try:
        result = finish_sweep(chunks, bar.update)
    except SweepCancelled as stop:  # Ctrl+C: what is done is written
        bar.end()
        result = stop.result
        where = _write(result, args.output, units)
        print(f"armdyn: interrupted: {result.done} of {result.size} points done "
              f"({result.failed} failed), written to {where}", file=sys.stderr)
        return 130
    finally:
        bar.end()
    where = _write(result, args.output, units)
    if folder is not None:
        os.makedirs(folder, exist_ok=True)
        written = _write_trajectories(result, folder)
        where += f" and {written} runs to {folder}"
    print(_summary(result, where), file=sys.stderr)
    return 1 if result.failed == result.size else 0
