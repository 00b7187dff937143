"""Between the window's runs and the core's sweeps, without Qt.

The Sweep panel sweeps the run the Run panel describes (`gui.jobs.runs.RunSpec`): the
same kind, from the same pose, for as long, sampled as finely, with the same options
of a free fall (`sweep_run`). A point of the finished sweep goes back the other way: its
model and run (`core.sweeps.sweep.SweepResult.point`) become a `RunSpec` the Run panel
runs like any other (`point_spec`), so it plays in 3D and its torques are plotted.

A grid's axes are typed as the window's tables type numbers: SI, angles in degrees
(`ANGLE_UNIT`, the tables' rule, gui/model/units.py); `axis_of_text` reads one with the
core's parser, which refuses a bad one with the command line's message.
"""
from __future__ import annotations

import numpy as np

from armdyn.core import FreeFallRun, InverseRun, Mechanism, Robot
from armdyn.core.errors import ArgumentError
from armdyn.core.sweeps.fields import Axis, parse_vary
from armdyn.core.sweeps.sweep import SweepResult

from .runs import RunKind, RunSpec

__all__ = ["ANGLE_UNIT", "sweep_run", "point_spec", "axis_of_text"]

#: The window types angles in degrees (its tables' unit), as `armdyn sweep` does.
ANGLE_UNIT = "deg"


def sweep_run(spec: RunSpec) -> InverseRun | FreeFallRun:
    """The core's run of a window's run: inverse dynamics from `spec.q0` to its target
    over its duration, or a free fall from `spec.q0` at rest with its damping and end
    stops (the sweep integrates every free fall by Lagrange multipliers, not live)."""
    q0 = np.asarray(spec.q0, dtype=float)
    if spec.kind is RunKind.INVERSE:
        target = q0 if spec.target is None else np.asarray(spec.target, dtype=float)
        return InverseRun(target=target, start=q0, duration=spec.duration, dt=spec.dt)
    return FreeFallRun(duration=spec.duration, q0=q0, qd0=None, damping=spec.damping,
                       stops=spec.stops, dt=spec.dt)


def point_spec(result: SweepResult, i: int) -> RunSpec:
    """Point `i` (0-based, grid order) of `result` as a window run: its own model and run
    (`SweepResult.point`). A free fall whose point starts moving (a varied ``qd0``) is
    refused (ArgumentError): the window's free fall starts at rest."""
    model, run = result.point(i)
    if run.kind == "inverse":
        start = model.q_home if run.start is None else np.array(run.start)
        return RunSpec(model, RunKind.INVERSE, start, run.duration, run.dt,
                       target=np.array(run.target))
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
