"""Issue #9: the camera never loses the arm during playback (real widgets under Xvfb)."""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core import JointType, Link, Robot
from armdyn.core.sim.trajectory import Trajectory

from gui_helpers import flush_events

pytestmark = pytest.mark.gui


def slider() -> Robot:
    """A revolute joint, then a prismatic one (home 0.3 m, no limits) along a tilted axis."""
    inertia = (0.01, 0.01, 0.01, 0.0, 0.0, 0.0)
    return Robot("slider", (
        Link(a=0.4, alpha=np.pi / 2, mass=2.0, com=(-0.2, 0.0, 0.0), inertia=inertia,
             name="turn"),
        Link(joint=JointType.PRISMATIC, b=0.3, mass=1.0, com=(0.0, 0.0, -0.1),
             inertia=inertia, name="slide"),
    ), gravity=(0.0, 0.0, -9.81))


def sliding(robot: Robot, stroke: float, seconds: float = 1.0) -> Trajectory:
    """The prismatic joint moves `stroke` m in `seconds` s at a steady rate."""
    t = np.linspace(0.0, seconds, 101)
    q = np.column_stack([0.3 * t, 0.3 + stroke * t / seconds])
    qd = np.gradient(q, t, axis=0)
    zeros = np.zeros_like(q)
    return Trajectory(t=t, q=q, qd=qd, qdd=zeros, tau=zeros, energy=np.zeros((len(t), 3)))


def in_view(view, bounds) -> bool:
    """Every corner of the box `bounds` projects inside the 3D view's picture."""
    renderer = view.plotter.renderer
    w, h = renderer.GetSize()
    for corner in [(x, y, z) for x in bounds[:2] for y in bounds[2:4] for z in bounds[4:]]:
        renderer.SetWorldPoint(*corner, 1.0)
        renderer.WorldToDisplay()
        x, y, _ = renderer.GetDisplayPoint()
        if not (-1 <= x <= w + 1 and -1 <= y <= h + 1):
            return False
    return True


@pytest.fixture
def window(qtbot, settings):
    from armdyn.gui.main_window import MainWindow

    win = MainWindow(slider(), None, settings=settings, restore_layout=False)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.document.undo_stack.setClean()
    win.shutdown()
    win.close()


def test_playback_keeps_a_sliding_arm_in_view(window, qtbot):
    view = window.view3d
    view.render_now()
    start = np.array(view.arm_bounds())
    assert in_view(view, start)
    from armdyn.gui.jobs.runs import RunResult

    window.session.end_run(RunResult(sliding(window.document.robot, 10.0)))  # a run's end
    flush_events()
    refits = []
    original = view._fit_bounds
    view._fit_bounds = lambda *a, **k: (refits.append(1), original(*a, **k))[1]
    window.playback.play()
    qtbot.waitUntil(lambda: not window.playback.is_playing(), timeout=10000)
    flush_events()
    view.render_now()
    end = np.array(view.arm_bounds())
    span = lambda b: np.linalg.norm(b[1::2] - b[0::2])  # noqa: E731
    assert span(end) - span(start) > 8.0  # the arm did slide far
    assert in_view(view, end)
    frames = len(window.trajectory)
    assert 1 <= len(refits) < frames / 3  # a refit now and then, not one per frame


def test_a_pose_inside_the_view_leaves_the_camera_alone(window):
    view = window.view3d
    view.render_now()
    camera = view.plotter.camera.position
    assert not view.keep_arm_in_view()
    view.set_pose(window.document.robot.q_home + np.array([0.2, 0.05]), keep_in_view=True)
    assert view.plotter.camera.position == camera


def test_without_keep_in_view_the_arm_may_leave(window):
    """Sliders and scripts keep the user's camera (only playback follows)."""
    view = window.view3d
    view.render_now()
    camera = view.plotter.camera.position
    view.set_pose(np.array([0.0, 10.3]))
    view.render_now()
    assert view.plotter.camera.position == camera
    assert not in_view(view, np.array(view.arm_bounds()))
    assert view.keep_arm_in_view()
    view.render_now()
    assert in_view(view, np.array(view.arm_bounds()))
