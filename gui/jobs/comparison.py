"""Comparing two runs, without Qt: run B's changes, the two runs' specs and generator,
and the CSV of both.

Run A is a model's run; run B is the same run of the model with a list of `Change`s
(a link's mass, a, b, mass centre, inertia, joint damping: times a factor or a new
value), or of another model. `apply_changes` builds B's model with core's constructors
(which validate); `comparison_specs` makes the two `RunSpec`s; `comparison_chunks` runs
A, then B, in one generator (one `gui.jobs.job.Job`); `comparison_csv_text` puts both
side by side. `Comparison` is how a comparison ended.
"""
from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from armdyn.core import Link, Mechanism, Robot
from armdyn.core.io.results_io import trajectory_header
from armdyn.core.sim.trajectory import Trajectory

from .runs import DEFAULT_DT, FallMethod, RunKind, RunOutcome, RunSpec

__all__ = ["ChangeField", "ChangeOp", "Change", "apply_changes", "describe_changes",
           "damping_of", "comparison_specs", "comparison_chunks", "comparison_csv_text",
           "Comparison"]


# ----- run B's definition --------------------------------------------------------------
class ChangeField(Enum):
    """What a change alters. Value: (label, unit, takes a new value as well as a factor)."""

    MASS = ("mass", "kg", True)
    MASS_INERTIA = ("mass and inertia", "kg", True)  # the same shape, denser: m and I scale
    A = ("a", "m", True)
    B = ("b", "m", True)
    COM = ("mass centre", "", False)  # the vector scaled
    INERTIA = ("inertia", "", False)  # all six components scaled
    DAMPING = ("joint damping c", "N m s/rad", True)  # a free fall's, at this joint

    @property
    def label(self) -> str:
        return self.value[0]

    @property
    def unit(self) -> str:
        return self.value[1]

    @property
    def settable(self) -> bool:
        return self.value[2]


class ChangeOp(Enum):
    SCALE = "\u00d7"
    SET = "="


@dataclass(frozen=True)
class Change:
    """One change of run B: joint / link `link` (0-based), `field`, times `value`
    (SCALE) or set to `value` (SET, in the field's SI unit)."""

    link: int
    field: ChangeField
    op: ChangeOp
    value: float

    def text(self, names: Sequence[str]) -> str:
        """"forearm: mass x 2" (names: the model's link names)."""
        name = names[self.link] if 0 <= self.link < len(names) else f"link {self.link + 1}"
        unit = f" {self.field.unit}" if self.op is ChangeOp.SET and self.field.unit else ""
        return f"{name}: {self.field.label} {self.op.value} {self.value:g}{unit}"


def _new_value(old: float, change: Change) -> float:
    return old * change.value if change.op is ChangeOp.SCALE else change.value


def _changed_link(link: Link, change: Change) -> Link:
    """`link` with `change` (DAMPING is a run setting: the link stays)."""
    f, k = change.field, change.value
    if not f.settable and change.op is not ChangeOp.SCALE:
        raise ValueError(f"the {f.label} takes a factor, not a value")
    if f is ChangeField.MASS:
        return replace(link, mass=_new_value(link.mass, change))
    if f is ChangeField.MASS_INERTIA:
        mass = _new_value(link.mass, change)
        ratio = mass / link.mass  # a valid link's mass is > 0
        return replace(link, mass=mass, inertia=tuple(ratio * v for v in link.inertia))
    if f is ChangeField.A:
        return replace(link, a=_new_value(link.a, change))
    if f is ChangeField.B:
        return replace(link, b=_new_value(link.b, change))
    if f is ChangeField.COM:
        return replace(link, com=tuple(k * c for c in link.com))
    if f is ChangeField.INERTIA:
        return replace(link, inertia=tuple(k * v for v in link.inertia))
    return link


def apply_changes(model: Robot | Mechanism, changes: Sequence[Change]) -> Robot | Mechanism:
    """The model with `changes` applied to its links, built by core's constructors (which
    validate: `RobotError` / `MechanismError` for a value they refuse, e.g. a mass <= 0).
    The name says what changed. A mechanism's loops are closed again."""
    if not changes:
        return model
    links = list(model.links)
    for change in changes:
        if not 0 <= change.link < len(links):
            raise ValueError(f"link {change.link + 1} does not exist (the model has "
                             f"{len(links)})")
        links[change.link] = _changed_link(links[change.link], change)
    name = f"{model.name}, {describe_changes(changes, model.link_names)}"
    return model.with_links(links, name=name, warnings=())


def describe_changes(changes: Sequence[Change], names: Sequence[str]) -> str:
    """"forearm: mass x 2; link 2: a = 0.4 m"."""
    return "; ".join(c.text(names) for c in changes)


def damping_of(changes: Sequence[Change], n: int, c: float) -> np.ndarray:
    """(n,) joint damping of run B: `c` (N m s/rad, N s/m) at every joint, then the
    DAMPING changes."""
    out = np.full(n, float(c))
    for change in changes:
        if change.field is ChangeField.DAMPING and 0 <= change.link < n:
            out[change.link] = _new_value(out[change.link], change)
    return out


# ----- the two runs --------------------------------------------------------------------
def comparison_specs(model_a: Robot | Mechanism, model_b: Robot | Mechanism, kind: RunKind,
                     q0: np.ndarray, target: np.ndarray, duration: float,
                     dt: float = DEFAULT_DT, damping: float = 0.0,
                     method: FallMethod = FallMethod.MULTIPLIERS,
                     changes: Sequence[Change] = ()) -> tuple[RunSpec, RunSpec]:
    """Runs A and B with the same settings: inverse dynamics q0 -> target (B needs A's
    joints: ValueError), or a free fall from q0 (a B of other joints starts at its home
    pose), over `duration` s sampled every `dt` s; damping c at every joint of both (B's
    changed per joint by its DAMPING `changes`; every rate of a joint of several degrees
    of freedom); `method` for loops. q0, target: (nq,) A's joint values."""
    same = model_b.nq == model_a.nq and model_b.nv == model_a.nv
    if kind is RunKind.INVERSE and not same:
        raise ValueError(f"run B's model has {model_b.n} joints ({model_b.nv} rates), A's "
                         f"{model_a.n} ({model_a.nv}): inverse dynamics to the same target "
                         "needs the same joints")
    q0 = np.array(q0, dtype=float)
    target = np.array(target, dtype=float) if kind is RunKind.INVERSE else q0
    q0_b = q0 if same else model_b.q_home.copy()
    target_b = target if same else q0_b
    c = float(damping)
    spec_a = RunSpec(model_a, kind, q0, duration, dt, target, c, method)
    spec_b = RunSpec(model_b, kind, q0_b, duration, dt, target_b,
                     damping_of(changes, model_b.n, c)[model_b.rate_joint], method)
    return spec_a, spec_b


def comparison_chunks(a: RunSpec, b: RunSpec
                      ) -> Iterator[tuple[str, Trajectory | None]]:
    """Run A, then B. Yields (side, chunk), side "A" or "B": first (side, None) when its
    run begins, then its chunks of new samples; returns (whole A, whole B)."""
    results = []
    for side, spec in (("A", a), ("B", b)):
        gen = spec.chunks()
        yield side, None
        try:
            while True:
                try:
                    part = next(gen)
                except StopIteration as stop:
                    results.append(stop.value)
                    break
                yield side, part
        finally:
            gen.close()
    return tuple(results)


@dataclass(frozen=True, eq=False)
class Comparison:
    """How a comparison ended.

    a, b    : the runs' samples (whole when finished; else what each computed, None
              for a run without a sample)
    outcome : finished, stopped (by the user, a new comparison, a new model) or failed
    message : a failure's message, naming the run ("Run B stopped: ...")
    """

    a: Trajectory | None
    b: Trajectory | None
    outcome: RunOutcome
    message: str = ""


# ----- export --------------------------------------------------------------------------
def comparison_csv_text(a: Trajectory, model_a, b: Trajectory, model_b) -> str:
    """Both runs side by side: '#' comments, a header row ("A: q1 waist [rad]", ...,
    "B: ..."), then one row per common sample time (the first min(len) samples; both
    runs sample the same grid). Columns of each run as `core.io.results_io` writes them."""
    rows = min(len(a), len(b))
    out = io.StringIO()
    out.write(f"# ArmDyn comparison ({a.kind}): A = {model_a.name!r}, B = {model_b.name!r}; "
              f"{rows} samples\n")
    out.write("# SI units (rad for revolute joints, m for prismatic); B - A is not stored\n")
    header = ["t [s]"]
    table = [a.t[:rows]]
    for side, traj, model in (("A", a, model_a), ("B", b, model_b)):
        header += [f"{side}: {h}" for h in trajectory_header(traj, model)[1:]]
        columns = [traj.q, traj.qd, traj.qdd, traj.tau, traj.energy]
        if model.loops:
            columns += [traj.cut_forces, traj.loop_residual[:, None]]
        table += [np.asarray(c)[:rows].reshape(rows, -1) for c in columns]
    data = np.column_stack(table)
    assert data.shape[1] == len(header), "columns and header agree"
    out.write(",".join(h.replace(",", ";") for h in header) + "\n")
    np.savetxt(out, data, delimiter=",", fmt="%.10g")
    return out.getvalue()
