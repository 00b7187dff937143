"""Between the window's runs and the core's sweeps, without Qt.

The Sweep panel sweeps the run the Run panel describes (`gui.jobs.runs.RunSpec`): the
same kind, along the same motion (its law, log, via points, Fourier series or tool
path), from the same pose, for as long, sampled as finely, with the same options of a
free fall (`sweep_run`; built in the sweep's thread, `sweep_spec_chunks`). A point of
the finished sweep goes back the other way: its model and run
(`core.sweeps.sweep.SweepResult.point`) become a `RunSpec` the Run panel runs like any
other (`point_spec`), so it plays in 3D and its torques are plotted.

A grid's axes are typed as the window's tables type numbers: SI, angles in degrees
(`ANGLE_UNIT`, the tables' rule, gui/model/units.py); `axis_of_text` reads one with the
core's parser, which refuses a bad one with the command line's message.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from armdyn.core import FreeFallRun, InverseRun, Mechanism, Robot
from armdyn.core.errors import ArgumentError
from armdyn.core.sim.joint_motions import REST_TO_REST, FourierSeries
from armdyn.core.sweeps.fields import Axis, parse_vary
from armdyn.core.sweeps.sweep import SweepProgress, SweepResult, sweep_chunks

from .motion_choice import MotionChoice, MotionKind
from .runs import RunKind, RunSpec

__all__ = ["ANGLE_UNIT", "sweep_run", "sweep_spec_chunks", "point_spec", "axis_of_text"]

#: The window types angles in degrees (its tables' unit), as `armdyn sweep` does.
ANGLE_UNIT = "deg"


def sweep_run(spec: RunSpec, build: bool = True) -> InverseRun | FreeFallRun:
    """The core's run of a window's run: inverse dynamics along its motion, or a free
    fall from `spec.q0` at rest with its damping and end stops (the sweep integrates
    every free fall by Lagrange multipliers, not live).

    The motion: a rest-to-rest law (cycloid, quintic, trapezoid with its blend) from
    `spec.q0` to the target over the duration, whose T, target and start a sweep varies;
    a measured log as read; via points, a Fourier excitation or a tool path built by
    `MotionChoice.build` (a tool path solves its inverse kinematics: 0.4 s for the PUMA,
    so in a job's thread). `build` False (the GUI thread) does not build those: it gives
    a stand-in with the same joints, duration and refused fields (`InverseRun.refusal`),
    for the set-up's checks. ArgumentError when there is no motion yet (no log read)."""
    q0 = np.asarray(spec.q0, dtype=float)
    if spec.kind is RunKind.INVERSE:
        target = q0 if spec.target is None else np.asarray(spec.target, dtype=float)
        choice = spec.motion if spec.motion is not None else MotionChoice()
        law = choice.kind.name.lower()
        if law in REST_TO_REST:
            return InverseRun(target=target, start=q0, duration=spec.duration, dt=spec.dt,
                              law=law, blend=choice.blend if law == "trapezoid" else None)
        label = "" if choice.kind is MotionKind.MEASURED else f"the {choice.kind.word} motion"
        if choice.kind is MotionKind.MEASURED or build:
            return InverseRun(motion=choice.build(spec.model, q0, target, spec.duration),
                              dt=spec.dt, label=label)
        still = np.zeros((q0.size, 1))  # the stand-in: at rest at q0 for the duration
        return InverseRun(motion=FourierSeries(q0, still, still, 1.0 / spec.duration,
                                               spec.duration), dt=spec.dt,
                          on_geometry=choice.kind in (MotionKind.TOOL_LINE,
                                                      MotionKind.TOOL_ARC), label=label)
    return FreeFallRun(duration=spec.duration, q0=q0, qd0=None, damping=spec.damping,
                       stops=spec.stops, dt=spec.dt)


def sweep_spec_chunks(spec: RunSpec, axes: list[Axis], **engine) -> Iterator[SweepProgress]:
    """`core.sweeps.sweep.sweep_chunks` of the window's run `spec` over `axes` (`engine`:
    its workers / scheduler), its motion built first, here (a job's thread)."""
    return (yield from sweep_chunks(spec.model, sweep_run(spec), axes, **engine))


def point_spec(result: SweepResult, i: int, base: RunSpec | None = None) -> RunSpec:
    """Point `i` (0-based, grid order) of `result` as a window run: its own model and run
    (`SweepResult.point`); `base` the window run the sweep swept (a point along via
    points, a Fourier series, a tool path or a log is that run on the point's model). A
    free fall whose point starts moving (a varied ``qd0``) is refused (ArgumentError):
    the window's free fall starts at rest."""
    model, run = result.point(i)
    if run.kind == "inverse":
        if run.motion is not None:
            if base is None:
                raise ArgumentError(f"point {i + 1} runs along {run.what}: give the window "
                                    "run the sweep swept (base)")
            return replace(base, model=model)
        start = model.q_home if run.start is None else np.array(run.start)
        choice = None if run.law == "cycloid" else MotionChoice(
            MotionKind[run.law.upper()], blend=run.blend)
        return RunSpec(model, RunKind.INVERSE, start, run.duration, run.dt,
                       target=np.array(run.target), motion=choice)
    if run.qd0 is not None and np.any(np.array(run.qd0) != 0.0):
        raise ArgumentError(f"point {i + 1} starts with joint rates qd0 = "
                            f"{', '.join(f'{v:g}' for v in run.qd0)}; the Run panel's "
                            "free fall starts at rest")
    q0 = model.q_home if run.q0 is None else np.array(run.q0)
    damping = np.array(run.damping) if np.ndim(run.damping) else float(run.damping)
    return RunSpec(model, RunKind.FREE_FALL, q0, run.duration, run.dt, damping=damping,
                   stops=run.stops)


def axis_of_text(field: str, values: str, model: Robot | Mechanism, kind: str) -> Axis:
    """An axis as the Sweep panel's set-up types it: `field` (a name `core.sweeps`
    accepts) and `values` ("START:STOP:COUNT" or "v1,v2,...", a whole pose's values
    "v1,...,vn/v1,...,vn"), angles in degrees. ArgumentError with the command line's
    message (`--vary FIELD: ...`) for an unknown field or bad values."""
    return parse_vary(f"{field.strip()}={values}", model, kind, ANGLE_UNIT)
