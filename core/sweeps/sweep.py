"""`sweep`: one run over a grid of changes, each point reduced to what sizing needs.

    sweep(model, InverseRun(target, duration=2.0), {"payload.mass": "0:5:11", "T": [1, 2]})

checks everything first (an unknown field, an empty range, a value the model or the run
refuses: `SweepError`, naming the field and the value, before any point runs), then
computes the points on one of `core.sweeps.engines`' engines and returns the table: one
row per grid point, the varied fields first, then the results (`result_columns`), then
``status``. `sweep_chunks` is the same as a generator (a GUI's worker thread drives it:
it yields a `SweepProgress` at least every `core.sweeps.engines.POLL_S` s and returns the `SweepResult`).

Batches: the first points are computed here, one by one, to time a point; then the
points go out in batches of about `TASK_S` of work each (at least `DASK_TASK_S` on Dask,
whose every task costs the scheduler about a millisecond), so that a batch's overhead is
small beside its work.
"""
from __future__ import annotations

import io
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, ArmDynError
from ..io.atomic import write_atomically
from ..model.arguments import whole_number
from ..model.mechanism import Mechanism
from ..model.robot import Robot
from ..sim.trajectory import Trajectory, check_sample_memory
from .engines import (Batch, require_dask, cpu_count, dask_results, pool_results,
                      serial_results)
from .fields import Axis, axis_of, check_overlaps
from .plan import (FreeFallRun, InverseRun, Recipe, SweepPlan, check_run, evaluate,
                   result_columns, result_units)

__all__ = ["sweep", "sweep_chunks", "finish_sweep", "make_plan", "check_joints",
           "SweepResult", "SweepProgress", "SweepError", "SweepCancelled", "sweep_csv_text",
           "write_sweep_csv"]

#: Work per batch on the local pool, s (about 0.1 ms of overhead each).
TASK_S = 0.05
#: Work per task on Dask, s (at least; a task costs the scheduler ~1 ms).
DASK_TASK_S = 0.1
#: At least this many batches per worker, when there are points enough (balance).
BATCHES_PER_WORKER = 4
#: The first points are computed here to time one: until this much time has passed...
PROBE_S = 0.02
#: ... or this many points.
PROBE_POINTS = 20
#: The status of a point not computed (the sweep was cancelled before it).
NOT_RUN = "cancelled"


class SweepError(ArgumentError):
    """A sweep refused before any work: names the field and the value."""


class SweepCancelled(ArmDynError):
    """The sweep was stopped (Ctrl+C, `cancel`); ``result`` holds the points finished
    (the others have status "cancelled")."""

    def __init__(self, result: "SweepResult") -> None:
        self.result = result
        super().__init__(f"sweep cancelled after {result.done} of {result.size} points")


@dataclass(frozen=True)
class SweepProgress:
    """How far a sweep is: points done (of `total`), how many failed, the wall time
    so far (s), and the result being filled (`SweepResult`, written by the sweep's
    thread: read a copy)."""

    done: int
    total: int
    failed: int
    elapsed: float
    result: "SweepResult"

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


class SweepResult:
    """A sweep's points, filled as they finish.

    plan        : the `SweepPlan` (`point(i)` rebuilds point i's model and run)
    columns     : the varied fields' columns (an axis's name; a whole pose, NAME.1 ...)
    values      : (N, len(columns)) the varied values as given, grid order
    result_columns, units : the results' columns and their SI units
    rows        : (N, c) the results, NaN where a point failed or was not run
    status      : (N,) "ok", a failed point's reason, or "cancelled"
    trajectories: the points' whole runs (None where a point failed) when asked for
    engine      : where the points ran ("1 process", "2 local processes", "Dask at ...")
    """

    def __init__(self, plan: SweepPlan, trajectories: bool = False) -> None:
        self.plan = plan
        model = plan.base
        self.columns = [c for axis in plan.axes for c in axis.columns]
        self.result_columns = result_columns(plan.kind, model.n)
        self.units = result_units(plan.kind, model.is_revolute)
        N = plan.size
        self.values = np.empty((N, len(self.columns)))
        if plan.axes:
            grids = np.meshgrid(*[np.arange(len(a)) for a in plan.axes], indexing="ij")
            col = 0
            for axis, k in zip(plan.axes, grids):
                picked = axis.values[k.ravel()]
                width = len(axis.columns)
                self.values[:, col:col + width] = picked.reshape(N, width)
                col += width
        self.rows = np.full((N, len(self.result_columns)), np.nan)
        self.status = np.full(N, NOT_RUN, dtype=object)
        self.finished = np.zeros(N, dtype=bool)
        self.trajectories: list[Trajectory | None] | None = [None] * N if trajectories else None
        self.elapsed = 0.0
        self.engine = ""

    # ----- filling --------------------------------------------------------------------------
    def add(self, batch) -> None:
        s, e = batch.start, batch.stop
        self.rows[s:e] = batch.rows
        self.status[s:e] = batch.status
        self.finished[s:e] = True
        if self.trajectories is not None and batch.trajectories is not None:
            self.trajectories[s:e] = batch.trajectories

    def snapshot(self) -> "SweepResult":
        """A copy of the points finished so far, safe to read while another thread goes
        on filling this one (`add` writes a batch's rows and status before it marks them
        finished, and `finished` is copied first: every point the copy calls finished
        has its numbers). A point not finished in the copy has NaNs and status
        "cancelled". The plan is shared."""
        copy = object.__new__(SweepResult)
        copy.__dict__.update(self.__dict__)
        finished = self.finished.copy()
        copy.finished = finished
        copy.rows = np.where(finished[:, None], self.rows, np.nan)
        copy.status = np.where(finished, self.status, NOT_RUN).astype(object)
        if self.trajectories is not None:
            copy.trajectories = [t if f else None for t, f in zip(self.trajectories, finished)]
        return copy

    # ----- reading --------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.plan.size

    @property
    def done(self) -> int:
        return int(self.finished.sum())

    @property
    def failed(self) -> int:
        return int(np.count_nonzero(self.finished & (self.status != "ok")))

    @property
    def model(self) -> Robot | Mechanism:
        """The base model."""
        return self.plan.base

    def column(self, name: str) -> np.ndarray:
        """A column by name (a varied field's or a result's), (N,)."""
        if name in self.columns:
            return self.values[:, self.columns.index(name)]
        if name in self.result_columns:
            return self.rows[:, self.result_columns.index(name)]
        if name == "status":
            return self.status
        raise KeyError(name)

    def peak_torques(self) -> np.ndarray:
        """(N, n) peak |tau| per point and joint."""
        n = self.model.n
        return self.rows[:, :n]

    def envelope(self, name: str, axes: Sequence[int]) -> np.ndarray:
        """Result column `name` (e.g. "peak_tau_2") over the grid, reduced to the axes
        `axes` (indices into ``plan.axes``, in the order given): the largest value over
        every other axis, among the points that succeeded (NaN where none did). Shape:
        the lengths of `axes`; `envelope(name, [a])` is the column against axis a's
        values, `envelope(name, [a, b])` a (len a, len b) map."""
        values = np.where(self.finished & (self.status == "ok"), self.column(name), np.nan)
        grid = values.reshape(self.plan.shape) if self.plan.axes else values
        keep = [int(a) for a in axes]
        others = tuple(k for k in range(grid.ndim) if k not in keep)
        if others:
            finite = np.isfinite(grid).any(axis=others)
            grid = np.where(np.isfinite(grid), grid, -np.inf).max(axis=others)
            grid = np.where(finite, grid, np.nan)
        remaining = [k for k in range(len(self.plan.axes)) if k in keep]
        return np.transpose(grid, [remaining.index(a) for a in keep])

    def worst(self, joint: int | None = None) -> int | None:
        """The point with the largest peak |tau| at `joint` (0-based; None: at any joint,
        each joint's peak taken relative to the largest peak of that joint over the
        grid), among the points that succeeded; None if none did."""
        peaks = self.peak_torques()
        ok = self.finished & (self.status == "ok")
        if not ok.any():
            return None
        if joint is None:
            scale = np.nanmax(np.where(ok[:, None], peaks, np.nan), axis=0)
            scale[~(scale > 0)] = 1.0
            score = np.nanmax(peaks / scale, axis=1)
        else:
            score = peaks[:, joint]
        score = np.where(ok, score, -np.inf)
        return int(np.argmax(score))

    def worst_joint(self) -> int | None:
        """The joint (0-based) with the largest peak |tau| over the points that
        succeeded; None if none did."""
        ok = self.finished & (self.status == "ok")
        if not ok.any():
            return None
        return int(np.argmax(self.peak_torques()[ok].max(axis=0)))

    def point(self, i: int):
        """Point i's model and run (`InverseRun` / `FreeFallRun`): run it as any run."""
        return self.plan.point(i)

    def table(self, frame: bool | None = None):
        """The table: a pandas DataFrame (frame True; None: when pandas is installed) or a
        NumPy structured array (frame False, or None without pandas), one row per point:
        the varied fields under their names, the results, then "status"."""
        if frame is None:
            try:
                import pandas  # noqa: F401
                frame = True
            except ImportError:
                frame = False
        names = self.columns + self.result_columns
        if frame:
            import pandas as pd
            data = {c: self.values[:, k] for k, c in enumerate(self.columns)}
            data.update({c: self.rows[:, k] for k, c in enumerate(self.result_columns)})
            data["status"] = [str(s) for s in self.status]
            return pd.DataFrame(data, columns=names + ["status"])
        width = max([len(str(s)) for s in self.status] + [1])
        dtype = [(c, "f8") for c in names] + [("status", f"U{width}")]
        out = np.empty(self.size, dtype=dtype)
        for k, c in enumerate(self.columns):
            out[c] = self.values[:, k]
        for k, c in enumerate(self.result_columns):
            out[c] = self.rows[:, k]
        out["status"] = [str(s) for s in self.status]
        return out


# ----- the plan ------------------------------------------------------------------------------

def check_joints(model: Robot | Mechanism) -> None:
    """SweepError naming a joint of several degrees of freedom (spherical, universal,
    free): a sweep's table has one result column per joint of one degree of freedom."""
    for name, kind in zip(model.joint_names, model.joint_types):
        if not kind.is_dh:
            raise SweepError(f"a sweep takes revolute and prismatic joints (one result "
                             f"column per joint); joint {name!r} is {kind.value}")


def make_plan(model: Robot | Mechanism, run: InverseRun | FreeFallRun,
              vary: Mapping[str, object] | Sequence[Axis]) -> SweepPlan:
    """Check and build a sweep's plan: `vary` maps field names to values (SI; a sequence,
    or "START:STOP:COUNT" / "v1,v2"), or is a sequence of `Axis` (the command line's).
    SweepError before any work for an unknown field, an empty range, a field given twice,
    a field the run cannot vary (T of a measured motion: `InverseRun.refusal`), or a
    value the model or the run refuses (each value is tried with the other fields
    at their first values). The plan builds its models from the description's fields
    (`Recipe`), here as in every worker, so that every engine computes the same."""
    if not isinstance(run, (InverseRun, FreeFallRun)):
        raise SweepError(f"run must be an InverseRun or a FreeFallRun, got {type(run).__name__}")
    if not isinstance(model, (Robot, Mechanism)):
        raise SweepError(f"model must be a Robot or a Mechanism, got {type(model).__name__}")
    check_joints(model)
    try:
        if isinstance(vary, Mapping):
            axes = tuple(axis_of(str(name), values, model, run.kind)
                         for name, values in vary.items())
        else:
            axes = tuple(vary)
        check_overlaps(axes)
        for axis in axes:
            why = run.refusal(axis.field)
            if why is not None:
                raise SweepError(f"--vary {axis.name}: {why}")
    except SweepError:
        raise
    except ArgumentError as err:
        raise SweepError(str(err)) from None
    plan = SweepPlan(Recipe.of(model), run, axes)
    try:
        check_run(plan.base, run)
    except ArgumentError as err:
        raise SweepError(f"the run: {err}") from None
    for a_i, axis in enumerate(axes):
        for k in range(len(axis)):
            ks = tuple(k if j == a_i else 0 for j in range(len(axes)))
            try:
                point_model, point_run = plan._point(ks)
                check_run(point_model, point_run)
            except (ArmDynError, ValueError) as err:
                raise SweepError(f"--vary {axis.name}={axis.text(k)}: {err}") from None
    return plan


# ----- running -------------------------------------------------------------------------------

def _batches(start: int, stop: int, size: int, keep: bool) -> list[Batch]:
    return [(s, min(s + size, stop), keep) for s in range(start, stop, size)]


def sweep_chunks(model: Robot | Mechanism, run: InverseRun | FreeFallRun,
                 vary: Mapping[str, object] | Sequence[Axis], *, workers: int | None = None,
                 scheduler=None, trajectories: bool = False,
                 start_method: str | None = None
                 ) -> Iterator[SweepProgress]:
    """The sweep as a generator: yields a `SweepProgress` after each finished batch (and
    at least every `core.sweeps.engines.POLL_S` s); returns the `SweepResult`. Closing it early stops the
    workers; the points finished are in the last progress's `result`. Arguments: `sweep`.
    """
    if workers is not None:
        whole_number(workers, "workers", 1)  # before any work
    plan = make_plan(model, run, vary)
    if scheduler is not None:
        require_dask()  # ClusterUnavailable, saying how to install Dask, before any work
    result = SweepResult(plan, trajectories)
    if trajectories:
        traj_bytes = Trajectory.bytes_per_sample(plan.base.n, plan.base.model.kernel.m)
        longest = max(plan.run.samples(T) for T in _durations(plan))
        check_sample_memory(plan.size * longest, traj_bytes, "the sweep's trajectories")
    began = time.perf_counter()
    N = plan.size

    def progress() -> SweepProgress:
        result.elapsed = time.perf_counter() - began
        return SweepProgress(result.done, N, result.failed, result.elapsed, result)

    # the first points here: they time a point (the first one may load kernels: untimed)
    result.add(evaluate(plan, 0, 1, trajectories))
    probe_began, probed = time.perf_counter(), 1
    while probed < min(N, PROBE_POINTS + 1) and time.perf_counter() - probe_began < PROBE_S:
        result.add(evaluate(plan, probed, probed + 1, trajectories))
        probed += 1
    per_point = (time.perf_counter() - probe_began) / max(1, probed - 1)
    yield progress()
    if probed >= N:
        result.engine = "1 process"
        return result

    rest = N - probed
    if scheduler is not None:
        size = max(1, math.ceil(DASK_TASK_S / max(per_point, 1e-6)))
        gen = dask_results(plan, _batches(probed, N, size, trajectories), scheduler)
        result.engine = f"Dask ({scheduler if isinstance(scheduler, str) else 'a client'})"
    else:
        count = cpu_count() if workers is None else whole_number(workers, "workers", 1)
        size = max(1, math.ceil(TASK_S / max(per_point, 1e-6)))
        size = min(size, max(1, math.ceil(rest / (count * BATCHES_PER_WORKER))))
        batches = _batches(probed, N, size, trajectories)
        if count == 1 or len(batches) == 1:
            gen = serial_results(plan, batches)
            result.engine = "1 process"
        else:
            count = min(count, len(batches))
            gen = pool_results(plan, batches, count, start_method)
            result.engine = f"{count} local processes"
    try:
        for done in gen:
            for batch in done:
                result.add(batch)
            yield progress()
    finally:
        gen.close()
    progress()
    return result


def _durations(plan: SweepPlan) -> list[float]:
    for axis in plan.axes:
        if axis.field.what == "run" and axis.field.key == "T":
            return [float(v) for v in axis.si]
    return [plan.run.duration]


def sweep(model: Robot | Mechanism, run: InverseRun | FreeFallRun,
          vary: Mapping[str, object] | Sequence[Axis], *, workers: int | None = None,
          scheduler=None, trajectories: bool = False, frame: bool | None = None,
          progress: Callable[[SweepProgress], None] | None = None,
          cancel: Callable[[], bool] | None = None, start_method: str | None = None):
    """Run `run` for every point of the grid `vary` spans over `model`; the table.

    model     : a `Robot` or `Mechanism` (the base)
    run       : `InverseRun(target, start=None, duration, dt, law="cycloid")`, or
                `InverseRun(motion=..., dt)` along any motion, or `FreeFallRun(duration,
                q0, qd0, damping, stops, rtol, atol, dt, max_wall_time)`, SI units
    vary      : {field: values}: a field as `core.sweeps.fields` names it ("payload.mass",
                "3.mass", "forearm.com.x", "T", "target.2", "target", "damping", ...);
                values SI (rad, m, kg, s): a sequence (of poses for a whole pose), or a
                string "START:STOP:COUNT" or "v1,v2,..."; the last field varies fastest
    workers   : local processes (default: every core); 1 computes here
    scheduler : a Dask scheduler's address or a `distributed.Client`: the points go to
                that cluster (`ClusterUnavailable` without Dask, with how to install it)
    trajectories : keep every point's whole run (returns (table, list of Trajectory))
    frame     : True: a pandas DataFrame; False: a NumPy structured array; None: the
                DataFrame when pandas is installed
    progress  : called with a `SweepProgress` after each batch (and every ~0.1 s)
    cancel    : asked as often; True stops the sweep with `SweepCancelled`, whose
                ``result`` (a `SweepResult`) has the points finished. Ctrl+C does the same.

    The table has one row per grid point (the last field fastest): the varied fields
    under their names (a whole pose: NAME.1 ... NAME.n), then per joint `peak_tau_j`
    (N m / N), `rms_tau_j`, `peak_qd_j` (rad/s / m/s), `peak_power_j` (W: |tau qd|); a
    free fall adds `final_q_j`, `final_qd_j` and `energy_drift` (J, the largest
    |E(t) - E(0)|); then `status`: "ok" or why the point failed. The results are the
    same, bit for bit, whatever computes them (here, the pool, Dask).
    """
    result = finish_sweep(sweep_chunks(model, run, vary, workers=workers,
                                       scheduler=scheduler, trajectories=trajectories,
                                       start_method=start_method), progress, cancel)
    table = result.table(frame)
    return (table, result.trajectories) if trajectories else table


def finish_sweep(chunks, progress: Callable[[SweepProgress], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> SweepResult:
    """Run the generator of `sweep_chunks` to its end; the whole `SweepResult`.

    `progress` is called with each `SweepProgress` it yields, `cancel` asked after each:
    True, or Ctrl+C once a batch is done, raises `SweepCancelled` with the points
    finished (Ctrl+C before any batch is done stays a KeyboardInterrupt). The
    generator is closed in every case, which stops the workers.
    """
    last = None
    try:
        while True:
            try:
                last = next(chunks)
            except StopIteration as stop:
                return stop.value
            if progress is not None:
                progress(last)
            if cancel is not None and cancel():
                raise SweepCancelled(last.result)
    except KeyboardInterrupt:
        chunks.close()
        if last is None:
            raise
        raise SweepCancelled(last.result) from None
    finally:
        chunks.close()


# ----- CSV ------------------------------------------------------------------------------------

def sweep_csv_text(result: SweepResult, value_units: Sequence[str] | None = None) -> str:
    """The table as CSV: two '#' lines (what was swept; the units), a header row (the
    varied fields under their names, the results, status), one row per point (numbers
    with 10 significant digits, empty where a point has none; a status with a comma or
    a quote is quoted). `value_units`: the varied columns' units as given (default SI)."""
    plan = result.plan
    model = plan.base
    out = io.StringIO()
    what = "inverse dynamics" if plan.kind == "inverse" else "free fall"
    out.write(f"# ArmDyn sweep of {what} of {model.name!r}: {result.size} points "
              f"({result.done - result.failed} ok, {result.failed} failed, "
              f"{result.size - result.done} not run), {model.n} joints\n")
    if value_units is None:
        value_units = [axis.field.unit for axis in plan.axes for _ in axis.columns]
    units = [f"{c} [{u}]" for c, u in zip(result.columns, value_units)]
    joint_units = ", ".join(f"{c} [{u}]" for c, u in zip(result.result_columns, result.units)
                            if c.endswith("_1") or c == "energy_drift")
    out.write("# units: " + "; ".join(units + [joint_units + " (each joint's unit: N m or N, "
                                                "rad/s or m/s, W)"]) + "\n")
    out.write(",".join(_cell(c) for c in result.columns + result.result_columns + ["status"])
              + "\n")
    numbers = np.column_stack([result.values, result.rows])
    for row, status in zip(numbers, result.status):
        cells = ["" if v != v else f"{v:.10g}" for v in row]
        out.write(",".join(cells + [_cell(str(status))]) + "\n")
    return out.getvalue()


def _cell(text: str) -> str:
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_sweep_csv(result: SweepResult, path, value_units: Sequence[str] | None = None
                    ) -> None:
    """`sweep_csv_text` to `path`: a file replaced atomically, a device or pipe written
    through (`core.io.atomic`)."""
    write_atomically(path, sweep_csv_text(result, value_units).encode("utf-8"))
