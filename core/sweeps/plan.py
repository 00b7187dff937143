"""A sweep's plan and what one point computes: the run, the point's model, the reduction.

A `SweepPlan` is plain, picklable data: how to build the base model (the description's
own fields, `Recipe`; a built `Robot` or `Mechanism` holds compiled buffers and is not
sent), the run (`InverseRun` or `FreeFallRun`) and the axes. It is what an engine sends
to a worker, once; `evaluate(plan, start, stop)` computes points start..stop-1 there.
A point's index is its place in the grid, the last axis fastest (C order).

Each point's run is reduced to what sizing a motor needs (`columns`): per joint the
peak |tau|, the RMS torque over time, the peak |qd| and the peak power |tau qd|; a free
fall adds the final state and the drift of its total energy. A point that fails (a
model the core refuses, a singular pose, a simulation that stops) gets NaNs and its
reason; the others go on.
"""
from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache

import numpy as np

from ..errors import ArgumentError, ArmDynError
from ..kernels.envelope import run_envelope
from ..model.arguments import (joint_vector, physical_joint_values, positive_number,
                               tolerance)
from ..model.mechanism import Mechanism
from ..model.robot import Robot
from ..sim.driver import DEFAULT_MAX_WALL_TIME
from ..sim.motions import motion_warnings, run_inverse_dynamics
from ..sim.simulation import DEFAULT_ATOL, DEFAULT_RTOL, simulate
from ..sim.stops import JointStops, simulation_warnings
from ..sim.trajectory import RUN_COPIES, Trajectory, check_sample_memory, output_grid
from ..sim.joint_motions import REST_TO_REST, FourierSeries, JointMotion, ViaPoints
from ..sim.measured import Motion
from .fields import GEOMETRY_FIELDS, LINK_FIELDS, Axis, FieldRef, merge_payload

__all__ = ["InverseRun", "FreeFallRun", "Recipe", "SweepPlan", "BatchResult", "evaluate",
           "result_columns", "result_width", "result_units", "run_point", "reduce_run"]

#: Models built for points, kept per process (a grid whose model axes come first reuses
#: each model for the run axes after them).
MODEL_CACHE_SIZE = 16


#: Motions that travel to workers as they are (their own numbers, pickled once with the
#: plan); any other (a tool path, solved on a model) travels as its samples.
_DATA_MOTIONS = (Motion, ViaPoints, FourierSeries)


@dataclass(frozen=True)
class InverseRun:
    """Inverse dynamics along a motion (`core.sim.motions.run_inverse_dynamics`), sampled
    every `dt` s. Either a rest-to-rest law from `start` to `target` over `duration` s:

        InverseRun(target, start=None, duration=10.0, dt=0.01, law="cycloid", blend=None)

    `law` one of `core.sim.joint_motions.REST_TO_REST` (cycloid, quintic, trapezoid;
    `blend` the trapezoid's blend time, s, None: T/3), poses (n,) rad / m, `start` None:
    the model's home pose (the point's own, when its theta or b varies); a sweep varies
    T, target and start of these. Or any other motion, as it is:

        InverseRun(motion=load_motion("log.csv", robot), dt=0.01)

    a measured `Motion` (run at its own sample times), `ViaPoints`, `FourierSeries`, a
    tool path (`ToolLine`, `ToolArc`: solved on its model, it travels as its samples at
    every `dt`, and `on_geometry` is set); `label` names it in messages (default: its
    name and source). Such a motion has its own duration and poses:
    a sweep refuses T, target and start for it (`refusal`), and a tool path's a, b,
    alpha and theta too. A `Cycloid`, `Quintic` or `Trapezoid` given as `motion` is
    taken as its law, start, target and duration (so they can vary)."""

    target: tuple[float, ...] | None = None
    start: tuple[float, ...] | None = None
    duration: float | None = None
    dt: float = 0.01
    law: str = "cycloid"
    blend: float | None = None
    motion: JointMotion | None = None
    on_geometry: bool = False
    label: str = ""
    kind = "inverse"

    def __post_init__(self) -> None:
        motion = self.motion
        law = next((name for name, cls in REST_TO_REST.items() if type(motion) is cls), None)
        if law is not None:  # a rest-to-rest law's object: its fields
            for name, value in (("target", motion.q_end), ("start", motion.q_start),
                                ("law", law), ("blend", getattr(motion, "blend", None)),
                                ("duration", motion.duration), ("motion", None)):
                object.__setattr__(self, name, value)
            motion = None
        if motion is not None:
            if not isinstance(motion, JointMotion):
                raise ArgumentError(f"motion must be a joint motion (core.sim.joint_motions, "
                                    f"load_motion), got {type(motion).__name__}")
            if self.target is not None or self.start is not None:
                raise ArgumentError(f"a run along the {motion.name} motion takes no target or "
                                    "start: the motion has them")
            if self.duration is not None and self.duration != motion.duration:
                raise ArgumentError(f"a run along the {motion.name} motion takes its duration "
                                    f"({motion.duration:g} s) from the motion, got "
                                    f"duration={self.duration!r}")
            positive_number(self.dt, "dt_out")
            if not isinstance(motion, _DATA_MOTIONS):  # solved on a model: its samples
                t = motion.sample_times(self.dt)
                q, qd, qdd = motion.sample(t)
                if not self.label:
                    object.__setattr__(self, "label", f"the {motion.name} motion (sampled "
                                       f"every {self.dt:g} s)")
                motion = Motion(t, q, qd, qdd, source=self.label)
                object.__setattr__(self, "on_geometry", True)
            object.__setattr__(self, "motion", motion)
            object.__setattr__(self, "duration", motion.duration)
            return
        if self.law not in REST_TO_REST:
            raise ArgumentError(f"law must be one of {', '.join(REST_TO_REST)}, got "
                                f"{self.law!r}")
        if self.target is None:
            raise ArgumentError("give the target pose (or a motion)")
        if self.duration is None:
            object.__setattr__(self, "duration", 10.0)
        object.__setattr__(self, "target", tuple(float(v) for v in np.ravel(self.target)))
        if self.start is not None:
            object.__setattr__(self, "start", tuple(float(v) for v in np.ravel(self.start)))

    @property
    def what(self) -> str:
        """The motion in words, for messages: "the quintic law", "the measured motion
        (log.csv)"."""
        if self.label:
            return self.label
        if self.motion is None:
            return f"the {self.law} law"
        source = f" ({self.motion.source})" if getattr(self.motion, "source", "") else ""
        return f"the {self.motion.name} motion{source}"

    def path(self, start) -> JointMotion:
        """The motion of a rest-to-rest run from `start` (n,), rad / m (the model's home
        pose when `start` is None); the motion itself for the others."""
        if self.motion is not None:
            return self.motion
        extra = {"blend": self.blend} if self.law == "trapezoid" else {}
        return REST_TO_REST[self.law](np.array(start, dtype=float), np.array(self.target),
                                      self.duration, **extra)

    def refusal(self, field: FieldRef) -> str | None:
        """Why a sweep of this run cannot vary `field` (None: it can): T, target and
        start belong to the rest-to-rest laws; a tool path, solved on the model's
        geometry, keeps its links' a, b, alpha and theta."""
        if self.motion is None:
            return None
        if field.what == "run":
            return (f"{self.what} has its own duration and poses; T, target and start "
                    f"vary only a rest-to-rest law ({', '.join(REST_TO_REST)})")
        if self.on_geometry and field.what == "link" and field.key in GEOMETRY_FIELDS:
            return (f"{self.what} was solved for the model's own geometry; with another "
                    f"{field.key} the tool would leave its path")
        return None

    def samples(self, duration: float | None = None) -> int:
        """Samples of one run (of `duration` s for a law; a motion's own count)."""
        if self.motion is not None:
            return int(self.motion.sample_times(self.dt).size)
        return int(output_grid(self.duration if duration is None else duration,
                               self.dt).size)


@dataclass(frozen=True)
class FreeFallRun:
    """A free fall (`core.sim.simulation.simulate`, no driving torques) of `duration` s
    from q0 with rates qd0 (None: home, at rest), viscous `damping` (scalar or (n,)),
    end `stops` (as `simulate` takes them), tolerances, sample step `dt` and the wall-time
    budget of each point's run."""

    duration: float = 10.0
    q0: tuple[float, ...] | None = None
    qd0: tuple[float, ...] | None = None
    damping: float | tuple[float, ...] = 0.0
    stops: JointStops | bool | None = None
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    dt: float = 0.01
    max_wall_time: float = DEFAULT_MAX_WALL_TIME
    kind = "free-fall"

    def __post_init__(self) -> None:
        for name in ("q0", "qd0"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(float(v) for v in np.ravel(value)))
        if np.ndim(self.damping):
            object.__setattr__(self, "damping", tuple(float(v) for v in np.ravel(self.damping)))

    def refusal(self, field: FieldRef) -> str | None:
        """A free fall varies every field of its kind (None)."""
        return None

    def samples(self, duration: float | None = None) -> int:
        """Samples of one run of `duration` s (None: its own)."""
        return int(output_grid(self.duration if duration is None else duration,
                               self.dt).size)


Run = InverseRun | FreeFallRun


@dataclass(frozen=True)
class Recipe:
    """How to build a description again: its class and its constructor's fields (a built
    `Robot` or `Mechanism` cannot be pickled: its model holds per-thread workspaces)."""

    cls: type
    kwargs: tuple[tuple[str, object], ...]

    @classmethod
    def of(cls, description: Robot | Mechanism) -> "Recipe":
        if not isinstance(description, (Robot, Mechanism)):
            raise ArgumentError(f"model must be a Robot or a Mechanism, got "
                                f"{type(description).__name__}")
        return cls(type(description), tuple((f.name, getattr(description, f.name))
                                            for f in fields(description)
                                            if f.init and f.name != "warnings"))

    def build(self) -> Robot | Mechanism:
        return self.cls(**dict(self.kwargs))


@lru_cache(maxsize=64)
def _column_names(kind: str, n: int) -> tuple[str, ...]:
    cols = []
    for what in ("peak_tau", "rms_tau", "peak_qd", "peak_power"):
        cols += [f"{what}_{j + 1}" for j in range(n)]
    if kind == "free-fall":
        cols += [f"final_q_{j + 1}" for j in range(n)]
        cols += [f"final_qd_{j + 1}" for j in range(n)]
        cols.append("energy_drift")
    return tuple(cols)


def result_columns(kind: str, n: int) -> list[str]:
    """The result columns of a point, in order (joint order, 1-based)."""
    return list(_column_names(kind, n))


def result_width(kind: str, n: int) -> int:
    """How many `result_columns` there are (cheap: each point's row is this long)."""
    return len(_column_names(kind, n))


def result_units(kind: str, revolute) -> list[str]:
    """The SI unit of each result column (`result_columns`)."""
    rev = [bool(r) for r in revolute]
    units = []
    for r_unit, p_unit in (("N m", "N"), ("N m", "N"), ("rad/s", "m/s"), ("W", "W")):
        units += [r_unit if r else p_unit for r in rev]
    if kind == "free-fall":
        units += ["rad" if r else "m" for r in rev]
        units += ["rad/s" if r else "m/s" for r in rev]
        units.append("J")
    return units


def reduce_run(traj: Trajectory, kind: str) -> np.ndarray:
    """A run's row of results (`result_columns`): per joint peak |tau| (N m / N), RMS
    torque sqrt(1/T int tau^2 dt) by the trapezoidal rule over the samples, peak |qd|
    and peak |tau qd| (W) (`core.kernels.envelope.run_envelope`); a free fall adds q
    and qd at its end and the largest |E(t) - E(0)| of the total energy (J)."""
    n = traj.tau.shape[1]
    row = np.empty(result_width(kind, n))
    run_envelope(np.ascontiguousarray(traj.t, dtype=float),
                 np.ascontiguousarray(traj.tau, dtype=float),
                 np.ascontiguousarray(traj.qd, dtype=float), row[:4 * n])
    if kind == "free-fall":
        total = traj.energy[:, 2]
        row[4 * n:5 * n] = traj.q[-1]
        row[5 * n:6 * n] = traj.qd[-1]
        row[6 * n] = np.abs(total - total[0]).max()
    return row


def run_point(model: Robot | Mechanism, run: Run) -> Trajectory:
    """The whole run of one point."""
    if run.kind == "inverse":
        start = model.q_home if run.start is None else np.array(run.start)
        if run.motion is None and run.law == "cycloid":  # the floating systems' too
            return run_inverse_dynamics(model, start, np.array(run.target), run.duration,
                                        run.dt)
        return run_inverse_dynamics(model, run.path(start), dt_out=run.dt)
    damping = np.array(run.damping) if np.ndim(run.damping) else run.damping
    return simulate(model, run.duration,
                    q0=None if run.q0 is None else np.array(run.q0),
                    qd0=None if run.qd0 is None else np.array(run.qd0),
                    damping=damping, rtol=run.rtol, atol=run.atol, dt_out=run.dt,
                    stops=run.stops, max_wall_time=run.max_wall_time)


def check_run(model, run: Run) -> None:
    """Refuse, without running it, a run the core would refuse (ArgumentError): a
    duration or step that is not > 0, poses and rates beyond the physical bounds, a law's
    own refusals, a motion of another number of joints, a negative damping, tolerances
    out of range, samples beyond the memory."""
    n = model.n
    positive_number(run.duration, "duration")
    positive_number(run.dt, "dt_out")
    check_sample_memory(run.samples(), RUN_COPIES * Trajectory.bytes_per_sample(
        n, model.model.kernel.m))
    if run.kind == "inverse":
        if run.motion is not None:
            if run.motion.n != n:
                raise ArgumentError(f"{run.what} moves {run.motion.n} joints; the model "
                                    f"{model.name!r} has {n}")
            return
        start = model.q_home if run.start is None else run.start
        motion_warnings(model, start, run.target, run.duration)
        run.path(start)  # what the law itself refuses (a trapezoid's blend beyond T/2)
        return
    if run.q0 is not None:
        physical_joint_values(model, joint_vector(run.q0, n, "q0"), "q0")
    if run.qd0 is not None:
        physical_joint_values(model, joint_vector(run.qd0, n, "qd0"), "qd0", rates=True)
    c = joint_vector(run.damping, n, "damping", scalar=True)
    if not np.all(c >= 0):
        raise ArgumentError(f"damping must be >= 0, got {np.ravel(run.damping).min():g}")
    tolerance(run.rtol, "rtol")
    tolerance(run.atol, "atol")
    positive_number(run.max_wall_time, "max_wall_time")
    simulation_warnings(model, run.q0, run.stops)


@dataclass(frozen=True)
class BatchResult:
    """What a worker sends back for points start..stop-1.

    rows   : (k, c) the results (`result_columns`), NaN where a point failed
    status : k strings, "ok" or the reason a point failed
    seconds: the wall time the batch took in the worker
    trajectories : the points' runs (None where one failed), when asked for
    """

    start: int
    stop: int
    rows: np.ndarray
    status: tuple[str, ...]
    seconds: float
    trajectories: tuple[Trajectory | None, ...] | None = None


@dataclass(eq=False)
class SweepPlan:
    """Everything a worker needs, sent once (picklable: the built models are not sent).

    recipe : the base model's description (`Recipe`)
    run    : the base run
    axes   : the grid's axes (`core.sweeps.fields.Axis`), the last one fastest
    """

    recipe: Recipe
    run: InverseRun | FreeFallRun
    axes: tuple[Axis, ...]
    _base: Robot | Mechanism | None = field(default=None, repr=False)
    _models: OrderedDict | None = field(default=None, repr=False)

    def __getstate__(self) -> dict:  # what is sent: not the models built here
        state = dict(self.__dict__)
        state["_base"] = None
        state["_models"] = None
        return state

    @property
    def kind(self) -> str:
        return self.run.kind

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(a) for a in self.axes)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def base(self) -> Robot | Mechanism:
        """The base model, built once per process."""
        if self._base is None:
            self._base = self.recipe.build()
        return self._base

    def indices(self, point: int) -> tuple[int, ...]:
        """The value index on each axis of grid point `point`."""
        return tuple(int(k) for k in np.unravel_index(point, self.shape)) if self.axes else ()

    def point(self, point: int) -> tuple[Robot | Mechanism, Run]:
        """Grid point `point`'s model and run (RobotError / MechanismError for a model
        the core refuses)."""
        return self._point(self.indices(point))

    def _point(self, ks: tuple[int, ...]) -> tuple[Robot | Mechanism, Run]:
        model_values = tuple((a_i, k) for a_i, (axis, k) in enumerate(zip(self.axes, ks))
                             if axis.field.what != "run")
        model = self._model(model_values)
        return model, self._run(model, ks)

    def _model(self, key: tuple[tuple[int, int], ...]) -> Robot | Mechanism:
        if not key:
            return self.base
        if self._models is None:
            self._models = OrderedDict()
        cached = self._models.get(key)
        if cached is not None:
            self._models.move_to_end(key)
            return cached
        base = self.base
        links = list(base.links)
        payload_mass, payload_at = 0.0, [0.0, 0.0, 0.0]
        for a_i, k in key:
            axis = self.axes[a_i]
            f, v = axis.field, float(axis.si[k])
            if f.what == "link":
                links[f.joint] = LINK_FIELDS[f.key].apply(links[f.joint], v)
            elif f.key == "payload.mass":
                if v < 0:
                    raise ArgumentError(f"payload.mass must be >= 0 kg, got {v:g}")
                payload_mass = v
            else:  # payload.com.x|y|z
                payload_at["xyz".index(f.key[-1])] = v
        links[-1] = merge_payload(links[-1], payload_mass, payload_at)
        model = base.with_links(links, warnings=())
        self._models[key] = model
        if len(self._models) > MODEL_CACHE_SIZE:
            self._models.popitem(last=False)
        return model

    def _run(self, model, ks: tuple[int, ...]) -> Run:
        run = self.run
        changes: dict[str, object] = {}
        for axis, k in zip(self.axes, ks):
            f = axis.field
            if f.what != "run":
                continue
            value = axis.si[k]
            if f.key == "T":
                changes["duration"] = float(value)
            elif f.pose:
                changes[f.key] = tuple(float(v) for v in value)
            elif f.key == "damping" and f.joint is None:
                changes["damping"] = float(value)
            else:  # one joint of a pose, or of the damping
                old = changes.get(f.key, getattr(run, f.key))
                vector = self._vector(model, f.key, old)
                vector[f.joint] = float(value)
                changes[f.key] = tuple(vector)
        return replace(run, **changes) if changes else run

    @staticmethod
    def _vector(model, key: str, old) -> list[float]:
        """A run's pose or damping as n numbers (its default where it has none)."""
        n = model.n
        if old is None:
            return list(model.q_home) if key in ("q0", "start") else [0.0] * n
        if np.ndim(old) == 0:
            return [float(old)] * n
        return [float(v) for v in old]


def evaluate(plan: SweepPlan, start: int, stop: int, trajectories: bool = False
             ) -> BatchResult:
    """Compute grid points start..stop-1 of `plan` (in a worker, or here). A point that
    fails records its reason and NaNs; the batch goes on."""
    began = time.perf_counter()
    n = plan.base.n
    rows = np.full((stop - start, result_width(plan.kind, n)), np.nan)
    status = []
    runs = [] if trajectories else None
    for i, point in enumerate(range(start, stop)):
        traj = None
        try:
            model, run = plan.point(point)
            traj = run_point(model, run)
            rows[i] = reduce_run(traj, plan.kind)
            status.append("ok")
        except (ArmDynError, ValueError, ArithmeticError) as err:
            status.append(_reason(err))
            traj = None
        except Exception as err:  # a bug: said, not hidden, and the sweep goes on
            status.append(f"unexpected {type(err).__name__}: {err}")
            traj = None
        if runs is not None:
            runs.append(traj)
    return BatchResult(start, stop, rows, tuple(status), time.perf_counter() - began,
                       tuple(runs) if runs is not None else None)


def _reason(err: BaseException) -> str:
    """One line: the error's message (a CSV cell)."""
    return " ".join(str(err).split()) or type(err).__name__
