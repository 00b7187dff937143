"""What the command lines share (`core.cli`: inverse, simulate; `core.sweep_cli`: sweep):
the parser that fails in one line, the options of a run, joint values as typed, and the
core's argument names mapped to the options that give them (no Qt).
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from .io.motion_file import load_motion
from .sim.joint_motions import REST_TO_REST
from .sim.measured import DEFAULT_CUTOFF, Motion
from .sim.driver import DEFAULT_MAX_WALL_TIME
from .sim.simulation import DEFAULT_ATOL, DEFAULT_RTOL
from .sim.stops import DEFAULT_STOP_DAMPING, DEFAULT_STOP_FREQUENCY, JointStops

__all__ = ["OPTIONS", "UsageError", "Parser", "typed_pose", "fall_joints", "positive",
           "inverse_options", "log_options", "columns_option", "measured_motion",
           "simulate_options", "as_options", "stops_option"]


#: The core's argument names and the options that give them (messages name the option).
OPTIONS = {"duration / dt_out": "-T / --dt", "q_end": "--target", "q_start": "--start",
           "q0": "--q0", "qd0": "--qd0", "rtol": "--rtol", "atol": "--atol",
           "duration": "-T", "dt_out": "--dt", "damping": "--damping",
           "max_wall_time": "--max-wall-time"}


class UsageError(Exception):
    """Bad input on the command line (one line, exit status 2)."""


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing its usage and exiting."""

    def error(self, message: str):  # one line, no usage dump
        raise UsageError(message)


def typed_pose(text: str | None, model, unit: str, what: str, driven=None, rest=None,
               rates: bool = False, role: str = "revolute or prismatic joint the run drives"
               ) -> np.ndarray | None:
    """Joint values typed by the user: comma-separated, deg (or rad) for revolute, m for
    prismatic; all n joints, or only the `driven` ones (revolute or prismatic joints, in
    joint order; the others from `rest`, by default q_home). A model with a joint of
    several degrees of freedom (spherical, universal, free) takes the `driven` joints'
    values only (`core.sim.motions.target_joints` for a target pose; `role` says what
    they are in the message refusing a wrong count) and is refused, naming that joint,
    without them. The result is a pose (nq,), or with `rates` a vector of rates (nv,)
    (`rest` then of length nv; by default zero)."""
    if text is None:
        return None
    n = model.n
    several = [j for j, kind in enumerate(model.joint_types) if not kind.is_dh]
    if several and driven is None:
        name = model.joint_names[several[0]]
        raise UsageError(f"{what}: joint values on the command line are one per revolute or "
                         f"prismatic joint; joint {name!r} is "
                         f"{model.joint_types[several[0]].value}: set this model's state "
                         "from Python (docs/floating-bases.md)")
    try:
        values = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        count = len(driven) if several else n
        raise UsageError(f"{what}: expected {count} comma-separated numbers, got "
                         f"{text!r}") from None
    joints = list(range(n))
    if driven is not None and len(values) == len(driven) and (len(driven) != n or several):
        joints = list(driven)
    elif several or len(values) != n:
        raise UsageError(_count_message(model, what, driven, several, len(values), role))
    if not all(math.isfinite(v) for v in values):
        raise UsageError(f"{what}: values must be finite, got {text!r}")
    v = np.array(values)
    rev = model.is_revolute[joints]
    if unit == "deg":
        v[rev] = np.radians(v[rev])
    out = ((np.zeros(model.nv) if rates else model.q_home) if rest is None else rest).copy()
    out[model.rates_of(joints) if rates else model.values_of(joints)] = v
    return out


def _count_message(model, what: str, driven, several: list[int], got: int, role: str
                   ) -> str:
    """The refusal of `got` values: how many are expected, for which joints (`role`:
    what they are), and why the others take none."""
    n = model.n
    if not several:
        hint = ""
        if driven is not None and len(driven) != n:
            names = ", ".join(model.joint_names[j] for j in driven)
            hint = f" or {len(driven)} (the joints {names})"
        return f"{what}: expected {n} values (one per joint){hint}, got {got}"
    names = ", ".join(f"{j + 1} {model.joint_names[j]!r}" for j in driven) or "none"
    why = []
    kinds = [model.joint_types[j].value for j in several]
    if "free" in kinds:
        name = model.joint_names[several[kinds.index("free")]]
        why.append(f"the free joint {name!r} starts at its home pose, at rest")
    if model.loops:
        why.append("the other joints follow the loops")
    else:
        turning = [j for j, kind in zip(several, kinds) if kind != "free"]
        if turning:
            j = turning[0]
            why.append(f"joint {model.joint_names[j]!r} is {model.joint_types[j].value}: "
                       "it keeps its home value")
    return (f"{what}: expected {len(driven)} value{'s' * (len(driven) != 1)}, one per "
            f"{role} (joints {names}); {'; '.join(why)}; got {got}")


def fall_joints(model) -> tuple[list[int], str]:
    """The joints --q0 and --qd0 give values to, and what they are (for a message): the
    revolute and prismatic joints among a mechanism's independent joints (with loops),
    else among all its joints; a free body and any joint of several degrees of freedom
    start at their home values, at rest."""
    joints = model.independent if model.loops else range(model.n)
    role = ("independent revolute or prismatic joint" if model.loops
            else "revolute or prismatic joint")
    return [j for j in joints if model.joint_types[j].is_dh], role


def positive(text: str) -> float:
    x = float(text)
    if not (math.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return x


def inverse_options(inv: argparse.ArgumentParser) -> None:
    """The options of `armdyn inverse` (also those of `armdyn sweep inverse`): the
    rest-to-rest motion (--target, --start, -T, --law) or a log's (--motion, read by
    `measured_motion`)."""
    inv.add_argument("--target", help="target pose, one value per joint (with loops: per "
                     "actuated joint; a floating system: per revolute or prismatic joint "
                     "it drives)")
    inv.add_argument("--start", help="start pose (default: the robot's home pose)")
    inv.add_argument("-T", "--duration", type=positive, default=10.0, help="motion time, s (10)")
    inv.add_argument("--law", choices=tuple(REST_TO_REST), default="cycloid",
                     help="the rest-to-rest law from --start to --target (cycloid)")
    inv.add_argument("--motion", metavar="LOG.csv",
                     help="a measured motion (t,q1..qn[,tau1..taun]) instead of --target; "
                     "run at its own sample times")
    log_options(inv, "log's")


def log_options(p: argparse.ArgumentParser, whose: str) -> None:
    """--columns and --cutoff: how a log is read (`whose`: "log's", "logs'")."""
    p.add_argument("--columns", metavar="t=NAME,q1=NAME,...",
                   help=f"the {whose} header names for t, q1..qn, tau1..taun")
    p.add_argument("--cutoff", type=positive, default=None, metavar="HZ",
                   help=f"cut-off of the {whose} smoothing differentiator, Hz "
                   f"({DEFAULT_CUTOFF:g}, at most a fifth of the Nyquist frequency)")


def columns_option(text: str | None) -> dict[str, str] | None:
    """--columns 't=time,q1=pos a' as {'t': 'time', 'q1': 'pos a'}."""
    if text is None:
        return None
    out = {}
    for item in text.split(","):
        ours, sep, theirs = item.partition("=")
        if not sep or not ours.strip() or not theirs.strip():
            raise UsageError(f"--columns: expected NAME=HEADER pairs separated by commas, "
                              f"got {item!r}")
        out[ours.strip()] = theirs.strip()
    return out


def measured_motion(args, model) -> Motion | None:
    """The measured motion of `--motion LOG.csv` for `model` (read with --columns and
    --cutoff; what was done to its samples and its differentiator's windows said on
    stderr), or None without --motion. UsageError for --target or --start beside
    --motion, or --columns or --cutoff without it."""
    if args.motion is None:
        if args.columns is not None or args.cutoff is not None:
            raise UsageError("--columns and --cutoff read a log: give --motion LOG.csv")
        return None
    if args.target is not None or args.start is not None:
        raise UsageError("--motion gives the whole motion: leave out --target and --start")
    motion = load_motion(args.motion, model, columns_option(args.columns), args.cutoff)
    for warning in motion.warnings:
        print(f"armdyn: warning: {args.motion}: {warning}", file=sys.stderr)
    if motion.cutoff is not None:
        print(f"armdyn: {args.motion}: rates and accelerations by Savitzky-Golay "
              f"differentiation at {motion.rate:.5g} Hz, windows of {motion.window[0]} and "
              f"{motion.window[1]} samples, cut-off {motion.cutoff:.3g} Hz", file=sys.stderr)
    return motion


def simulate_options(sim: argparse.ArgumentParser) -> None:
    """The options of `armdyn simulate` (also those of `armdyn sweep simulate`)."""
    sim.add_argument("-T", "--duration", type=positive, default=10.0, help="simulated time, s (10)")
    sim.add_argument("--q0", help="initial pose (default: home)")
    sim.add_argument("--qd0", help="initial joint rates (deg/s or rad/s; m/s)")
    sim.add_argument("--damping", type=float, default=0.0,
                     help="viscous damping of every joint, N m s/rad or N s/m (0)")
    sim.add_argument("--stops", choices=("on", "off"), default="on",
                     help="end stops at the joint limits the file gives (on)")
    sim.add_argument("--stop-frequency", type=positive, default=DEFAULT_STOP_FREQUENCY,
                     help="stiffness of the stops as the frequency, Hz, at which each joint "
                     f"rings on its stop ({DEFAULT_STOP_FREQUENCY:g})")
    sim.add_argument("--stop-stiffness", type=positive, default=None,
                     help="stiffness of every stop, N m/rad or N/m (instead of "
                     "--stop-frequency)")
    sim.add_argument("--stop-damping", type=float, default=DEFAULT_STOP_DAMPING,
                     help="Hunt-Crossley damping of the stops, s/rad or s/m; 0: elastic "
                     f"({DEFAULT_STOP_DAMPING:g})")
    sim.add_argument("--rtol", type=positive, default=DEFAULT_RTOL,
                     help=f"relative tolerance of the integrator ({DEFAULT_RTOL:g})")
    sim.add_argument("--atol", type=positive, default=DEFAULT_ATOL,
                     help=f"absolute tolerance of the integrator ({DEFAULT_ATOL:g})")
    sim.add_argument("--max-wall-time", type=positive, default=DEFAULT_MAX_WALL_TIME,
                     help="wall-time budget of the run, s: a run projected past it stops "
                     f"({DEFAULT_MAX_WALL_TIME:g})")


def as_options(message: str) -> str:
    """A core message that starts with an argument's name, with the option's name (and
    its advice in options: "a larger --dt or a shorter -T")."""
    message = message.replace("a larger dt_out or a shorter duration",
                              "a larger --dt or a shorter -T")
    for name, option in OPTIONS.items():
        if message.startswith(name) and message[len(name):len(name) + 1] in (" ", ":"):
            return option + message[len(name):]
    return message


def stops_option(args) -> JointStops | bool:
    """The `stops` argument of `simulate` from the command line (stops act only where
    the file gives limits)."""
    if not (math.isfinite(args.stop_damping) and args.stop_damping >= 0):
        raise UsageError(f"--stop-damping must be >= 0, got {args.stop_damping}")
    if args.stops == "off":
        return False
    return JointStops(stiffness=args.stop_stiffness, frequency=args.stop_frequency,
                      damping=args.stop_damping)
