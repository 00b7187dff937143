"""The session: what the window shows, one object that the panels observe.

A `Session` holds the current model (the document's last valid robot or mechanism),
its pose, and the runs of it: the one going on (its spec, its chunks as they come) and
the last one's samples (`trajectory`). Whoever changes one of these calls the session;
every panel that shows one connects to its signals (the main window owns the session
and pushes nothing itself):

- the model: `set_model` (from `RobotDocument.robot_changed`). The pose carries over
  where it can (`gui.model.pose.carry_pose`; a mechanism's is closed again by
  `core.assemble`, else it goes home); the last run's samples are dropped.
- the pose: `set_pose(q)` (the pose sliders, the tool drag, scripts). With loops, q's
  independent joints are the input and the loops are closed by moving them there in
  small steps (`core.algorithms.mechanism_pose.follow_independent`, so the branch
  follows a drag); a pose whose loops cannot close is refused: ``pose_refused`` says
  why, the pose stays, and False is returned.
- the runs: the Run panel reports each of its runs: `start_run(spec)`,
  `add_chunk(part)`, `end_run(result)` (a `gui.jobs.runs.RunResult`).

Signals (GUI thread):
  model_changed(object)  a new valid model; ``pose_changed`` follows
  pose_changed(object)   the pose q (nq,), rad / m (quaternions of spherical and free
                         joints, docs/floating-bases.md)
  pose_refused(str)      `set_pose` refused a pose: why
  run_started(object)    the `RunSpec` of a run that began (``trajectory`` is None now)
  chunk(object)          a Trajectory chunk of new samples of the running run
  run_ended(object)      its `RunResult` (``trajectory`` holds its samples, if any)
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, Signal

from armdyn.core import LoopClosureError, Mechanism, Robot, assemble
from armdyn.core.algorithms.mechanism_pose import follow_independent
from armdyn.core.sim.trajectory import Trajectory

from ..jobs.runs import RunResult, RunSpec
from .pose import carry_pose

__all__ = ["Session"]


class Session(QObject):
    """The model, the pose and the runs the window shows (module docstring).

    ``model`` is None until the first `set_model`.
    """

    model_changed = Signal(object)
    pose_changed = Signal(object)
    pose_refused = Signal(str)
    run_started = Signal(object)
    chunk = Signal(object)
    run_ended = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._model: Robot | Mechanism | None = None
        self._pose = np.zeros(0)
        self._trajectory: Trajectory | None = None
        self._run: RunSpec | None = None

    # ----- state ----------------------------------------------------------------------
    @property
    def model(self) -> Robot | Mechanism | None:
        """The model every panel shows (the document's last valid one)."""
        return self._model

    @property
    def pose(self) -> np.ndarray:
        """The current pose q, shape (nq,), rad / m (the start of the runs)."""
        return self._pose

    @property
    def trajectory(self) -> Trajectory | None:
        """The last run's samples (whole, or up to where it stopped), for playback and
        export; None during a run, before the first, or after a model change."""
        return self._trajectory

    @property
    def run_spec(self) -> RunSpec | None:
        """The spec of the last run started (kept over model changes), or None."""
        return self._run

    # ----- changes --------------------------------------------------------------------
    def set_model(self, model: Robot | Mechanism) -> None:
        """A new valid model: the pose carries over where it can (with loops it is
        closed again, else home), the last run's samples go."""
        q = carry_pose(self._model, model, self._pose)
        if model.loops:
            try:
                q = assemble(model, q)
            except LoopClosureError:
                q = model.q_home.copy()
        self._model = model
        self._pose = q
        self._trajectory = None
        self.model_changed.emit(model)
        self.pose_changed.emit(q.copy())

    def set_pose(self, q) -> bool:
        """Make q (rad / m, shape (nq,)) the current pose; False (and ``pose_refused``)
        if the model's loops cannot close there. ValueError for a wrong shape."""
        q = np.array(q, dtype=float)
        model = self._model
        n = model.nq if model is not None else 0
        if q.shape != (n,):
            raise ValueError(f"pose must have shape ({n},), got {q.shape}")
        if model.loops:
            try:
                q = follow_independent(model, self._pose, q)
            except LoopClosureError as err:
                self.pose_refused.emit(str(err))
                return False
        self._pose = q
        self.pose_changed.emit(q.copy())
        return True

    def start_run(self, spec: RunSpec) -> None:
        """A run began (the Run panel's)."""
        self._run = spec
        self._trajectory = None
        self.run_started.emit(spec)

    def add_chunk(self, part: Trajectory) -> None:
        """New samples of the running run."""
        self.chunk.emit(part)

    def end_run(self, result: RunResult) -> None:
        """A run ended: its samples, if it has any, become ``trajectory``."""
        if len(result.trajectory):
            self._trajectory = result.trajectory
        self.run_ended.emit(result)
