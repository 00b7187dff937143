"""The session (gui/model/session.py): one model, pose and run history that the panels
observe. Built alone, wrapped in views, changed, and the views asserted on (napari style)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from gui_helpers import PUMA, ROBOTS

from armdyn.core import load_mechanism, load_robot, loop_residual, simulate
from armdyn.gui.editors.pose_panel import PosePanel
from armdyn.gui.jobs.runs import RunKind, RunOutcome, RunResult, RunSpec
from armdyn.gui.model.session import Session
from armdyn.gui.panels.run_panel import RunPanel
from armdyn.gui.plots.playback import PlaybackBar
from armdyn.gui.plots.plots_panel import PlotsPanel

pytestmark = pytest.mark.gui

FIVEBAR = ROBOTS / "fivebar_saha.toml"


def closure(mech, q) -> float:
    """The largest loop-closure error at q."""
    return float(np.max(np.abs(loop_residual(mech, q))))


class Heard:
    def __init__(self, session: Session) -> None:
        self.events: list[tuple[str, object]] = []
        for name in ("model_changed", "pose_changed", "pose_refused", "run_started", "chunk",
                     "run_ended"):
            getattr(session, name).connect(lambda arg, n=name: self.events.append((n, arg)))

    def names(self) -> list[str]:
        return [n for n, _ in self.events]


def test_a_new_model_carries_the_pose_and_drops_the_last_run():
    puma = load_robot(PUMA)
    session = Session()
    heard = Heard(session)
    session.set_model(puma)
    assert heard.names() == ["model_changed", "pose_changed"]
    np.testing.assert_array_equal(session.pose, puma.q_home)
    assert session.set_pose(puma.q_home + 0.1)
    traj = simulate(puma, 0.05)
    session.end_run(RunResult(traj))
    assert session.trajectory is traj
    heavier = puma.with_links([replace(puma.links[0], mass=20.0), *puma.links[1:]])
    session.set_model(heavier)  # the same joints: the pose stays
    np.testing.assert_allclose(session.pose, puma.q_home + 0.1)
    assert session.trajectory is None
    with pytest.raises(ValueError):
        session.set_pose(np.zeros(3))


def test_a_mechanisms_pose_is_closed_or_refused():
    mech = load_mechanism(FIVEBAR)
    session = Session()
    session.set_model(mech)
    assert closure(mech, session.pose) < 1e-8
    heard = Heard(session)
    q = session.pose.copy()
    q[0] += np.radians(10.0)
    assert session.set_pose(q)
    assert closure(mech, session.pose) < 1e-9 and session.pose[0] == pytest.approx(q[0])
    before = session.pose.copy()
    q = before.copy()
    q[0] = np.pi  # the legs cannot reach
    assert not session.set_pose(q)
    np.testing.assert_array_equal(session.pose, before)
    assert heard.names() == ["pose_changed", "pose_refused"]
    assert "loop" in heard.events[-1][1]


def test_a_run_goes_through_the_session():
    puma = load_robot(PUMA)
    session = Session()
    session.set_model(puma)
    heard = Heard(session)
    spec = RunSpec(puma, RunKind.FREE_FALL, puma.q_home, 0.05)
    session.start_run(spec)
    assert session.trajectory is None and session.run_spec is spec
    traj = simulate(puma, 0.05)
    session.add_chunk(traj)
    session.end_run(RunResult(spec.empty_result(), RunOutcome.STOPPED, spec=spec))
    assert session.trajectory is None  # no samples: nothing to show
    session.end_run(RunResult(traj, spec=spec))
    assert session.trajectory is traj and session.run_spec is spec
    assert heard.names() == ["run_started", "chunk", "run_ended", "run_ended"]


def test_views_follow_the_session(qtbot):
    """A pose panel, a run panel, plots and a playback bar observing one session: a new
    model, a slider edit and a run reach all of them, nothing is pushed by hand."""
    puma = load_robot(PUMA)
    session = Session()
    pose, run, plots, playback = PosePanel(), RunPanel(), PlotsPanel(), PlaybackBar()
    for view in (pose, run, plots, playback):
        qtbot.addWidget(view)
        view.observe(session)
    session.set_model(puma)
    assert run.is_running() is False and run.target_pose().shape == (6,)
    assert plots.available_plots() and pose.pose().shape == (6,)
    _slider, spin = pose.joint_widgets(1)
    spin.setValue(30.0)  # a user edit goes to the session, and from it to the others
    assert session.pose[1] == pytest.approx(np.radians(30.0))
    with qtbot.waitSignal(session.run_ended, timeout=30000) as ended:
        run.start_inverse(0.3)
    result = ended.args[0]
    assert result.outcome is RunOutcome.FINISHED and result.spec.kind is RunKind.INVERSE
    np.testing.assert_allclose(result.trajectory.q[0], session.pose)
    assert session.trajectory is result.trajectory
    assert playback.trajectory() is result.trajectory
    assert plots.sample_count() == len(result.trajectory)
    session.set_model(load_robot(ROBOTS / "scara.toml"))
    assert playback.trajectory() is None and session.trajectory is None
    assert run.target_pose().shape == (4,)
    run.shutdown()
