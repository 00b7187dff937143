"""Drag the tool (gui/scene/tool_drag.py): the handle at the last link's frame, the arm
following it by inverse kinematics through the window's pose, the status when it cannot
follow, and the Run panel's target."""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core import forward_kinematics

from gui_helpers import PUMA, ROBOTS, SCARA, flush_events

pytestmark = pytest.mark.gui


def tool_of(window) -> np.ndarray:
    return forward_kinematics(window.document.robot, window.pose).end_effector[:3, 3]


def move_handle(window, point) -> None:
    """As a drag does: the widget moves, fires its interaction event (the callback), and
    the move is solved at the next event-loop turn."""
    widget = window.tool_drag.widget
    widget.SetCenter(*point)
    widget.InvokeEvent("InteractionEvent")
    flush_events()


def test_drag_the_tool_of_a_serial_arm(make_window, qtbot):
    window = make_window(PUMA)
    drag = window.tool_drag
    assert drag.action.isEnabled() and not drag.action.isChecked()
    assert drag.action in window.view_bar.actions()
    assert drag.handle_position() is None
    assert not drag.target_action.isEnabled()

    # on: the handle sits on the tool
    start = window.pose.copy()
    drag.action.setChecked(True)
    np.testing.assert_allclose(drag.handle_position(), tool_of(window), atol=1e-12)
    assert drag.widget in window.view3d.plotter.widgets.sphere_widgets
    assert drag.target_action.isEnabled()

    # a move of the handle: the window's pose puts the tool there (sliders follow)
    goal = tool_of(window) + np.array([0.05, -0.04, 0.03])
    move_handle(window, goal)
    assert not np.allclose(window.pose, start)
    np.testing.assert_allclose(tool_of(window), goal, atol=1e-9)
    np.testing.assert_allclose(window.pose_panel.pose(), window.pose, atol=1e-3)
    np.testing.assert_allclose(window.view3d.q, window.pose)
    assert drag.last_result.reached

    # the drag ends: the handle snaps to the tool
    drag.widget.InvokeEvent("EndInteractionEvent")
    np.testing.assert_allclose(drag.handle_position(), tool_of(window), atol=1e-12)

    # far away: not reached, the status bar says so
    far = np.array([10.0, 0.0, 0.5])
    move_handle(window, far)
    assert not drag.last_result.reached
    message = window.statusBar().currentMessage()
    assert "out of reach" in message.lower(), message
    assert np.linalg.norm(tool_of(window) - far) > 8.0

    # back within reach: solved again, the message goes
    move_handle(window, goal)
    np.testing.assert_allclose(tool_of(window), goal, atol=1e-9)
    assert "reach" not in window.statusBar().currentMessage().lower()

    # the run's target: the dragged pose; the arm goes back to where the drag began
    dragged = window.pose.copy()
    drag.target_action.trigger()
    # (the panel rounds its targets as its boxes show them: 0.01 deg, 0.1 mm)
    np.testing.assert_allclose(window.run_panel.target_pose(), dragged, atol=1e-4)
    assert np.all(np.abs(dragged) <= np.pi)  # unlimited joints kept within +-180 deg
    np.testing.assert_allclose(window.pose, start)
    np.testing.assert_allclose(drag.handle_position(), tool_of(window), atol=1e-12)

    # off: no handle
    drag.action.setChecked(False)
    assert drag.handle_position() is None
    assert drag.widget not in window.view3d.plotter.widgets.sphere_widgets
    assert not drag.target_action.isEnabled()


def test_sliders_move_the_handle_and_limits_hold(make_window):
    """A slider's pose change carries the handle along; a target past the SCARA's
    limits leaves the joints on them and the status bar names them."""
    window = make_window(SCARA)
    drag = window.tool_drag
    drag.action.setChecked(True)
    q = window.pose.copy()
    q[0] += 0.3
    window.pose_panel.pose_edited.emit(q)  # as a slider does
    flush_events()
    np.testing.assert_allclose(drag.handle_position(), tool_of(window), atol=1e-12)

    p = tool_of(window)
    move_handle(window, np.array([-abs(p[0]) - 0.1, -0.01, p[2]]))  # behind the base
    lo, hi = window.document.robot.joint_limits.T
    assert np.all(window.pose >= lo) and np.all(window.pose <= hi)
    assert drag.last_result.at_limits
    assert "limits of joint" in window.statusBar().currentMessage()


def test_a_mechanism_with_loops_cannot_drag(make_window):
    window = make_window(ROBOTS / "fourbar.toml")
    drag = window.tool_drag
    assert not drag.action.isEnabled()
    assert "loops" in drag.action.toolTip()
    drag.set_enabled(True)
    assert drag.handle_position() is None
