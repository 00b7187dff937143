"""Drag the tool: a handle at the last link's frame origin in the 3D view that the
arm follows by inverse kinematics (`core.algorithms.inverse_kinematics.solve_position`, damped
least squares within the joint limits).

View > Drag Tool (also on the 3D view's toolbar) shows the handle (a VTK sphere
widget on the view's plotter). Each move of the handle is solved at the next
event-loop turn (moves in one turn are merged: the newest wins) from the session's
pose, and the result goes through `Session.set_pose` (gui/model/session.py), the path
the pose sliders take, so the 3D view, the sliders, Inspect and the run's start follow. When the arm
cannot follow, the status bar says why: out of reach (how far short the tool stops),
held by joint limits, or near a singularity (the smallest singular value of the
position Jacobian). When the drag ends, the handle snaps back to the tool.

"Use as Inverse-Dynamics Target" copies the pose into the Run panel's targets
(`RunPanel.set_target_pose`) and puts the arm back at the pose it had before the
drag (the run's start), so that a run goes from there to the dragged pose.

Serial arms and trees only: for a mechanism with loops the action is disabled (its
joints are tied by the loops; the pose sliders drive its independent joints).
No kinematics here beyond calling core.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QAction

from armdyn.core import forward_kinematics, solve_position
from armdyn.core.algorithms.inverse_kinematics import wrap_revolute

from ..look.next_turn import NextTurn
from .arm_scene import Sizes
from .interaction import SceneInteraction

__all__ = ["ToolDrag", "install_tool_drag", "HANDLE_COLOR", "DRAG_ITERATIONS"]

HANDLE_COLOR = "#E69F00"
HANDLE_SELECTED = "#FFD166"
#: DLS iterations per move (each about 0.2 ms on a 6-joint arm).
DRAG_ITERATIONS = 40
#: The status shows "near a singularity" below this share of the robot's reach (m/rad).
NEAR_SINGULAR_SHARE = 0.02
#: How long a status message stays, ms.
MESSAGE_MS = 6000
LOOPS_TIP = ("Not for mechanisms with loops: their joints are tied by the loops "
             "(drive the independent joints with the pose sliders).")
DRAG_TIP = "Drag the last link's frame in the 3D view; the joints follow (inverse kinematics)"
SEVERAL_TIP = ("Drag Tool moves revolute and prismatic joints: this model has a joint of "
               "several degrees of freedom (a floating base, a ball joint); pose it with "
               "the Pose sliders")


class ToolDrag(SceneInteraction):
    """The drag-the-tool interaction of one `MainWindow`.

    Actions: ``action`` (checkable, Drag Tool) and ``target_action`` (Use as
    Inverse-Dynamics Target). ``widget`` is the VTK sphere widget while the drag is on
    (else None); ``last_result`` the last `IKResult`; ``start_pose`` the pose the arm
    had before the drag moved it (rad / m).
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.last_result = None
        self.start_pose: np.ndarray | None = None
        self._pending: np.ndarray | None = None
        self._dragging = False
        self._message = ""

        self.action = QAction("Drag &Tool", window)
        self.action.setCheckable(True)
        self.action.setStatusTip(DRAG_TIP)
        self.action.setToolTip(DRAG_TIP)
        self.action.toggled.connect(self.set_enabled)
        self.target_action = QAction("Use as Inverse-Dynamics &Target", window)
        # the toolbar shows the short text (the long one overflowed the bar even at
        # 1600 x 1000); the menu keeps the whole
        self.target_action.setIconText("Use as Target")
        tip = "Make the dragged pose the Run panel's target; the arm goes back to the start"
        self.target_action.setStatusTip(tip)
        self.target_action.setToolTip(tip)
        self.target_action.triggered.connect(self.use_as_target)
        self.target_action.setEnabled(False)

        self._timer = NextTurn(self, self._solve_pending)  # merges one turn's moves

    # ----- robot and pose ---------------------------------------------------------
    def tool_position(self) -> np.ndarray:
        """(3,) the last link's frame origin at the session's pose, m."""
        return forward_kinematics(self.robot, self.session.pose).end_effector[:3, 3].copy()

    def handle_position(self) -> np.ndarray | None:
        """(3,) the handle's centre, m, or None while the drag is off."""
        return None if self.widget is None else np.array(self.widget.GetCenter())

    def set_robot(self, robot) -> None:
        """A new robot: the drag is offered for serial arms and trees only."""
        if self._closed:
            return
        loops = bool(robot.loops)
        several = not all(kind.is_dh for kind in robot.model.joint_types)
        off = loops or several
        tip = LOOPS_TIP if loops else SEVERAL_TIP if several else DRAG_TIP
        self.action.setEnabled(not off)
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)
        self.start_pose = None
        self._update_target_action()
        if off:
            self.action.setChecked(False)
        elif self.widget is not None:  # new sizes, new place
            self._remove_widget("sphere_widgets")
            self._add_widget()

    def _on_pose_changed(self, q) -> None:
        """Sliders, Home, a new robot: the handle goes to the tool, and that pose is the
        start a dragged target is reached from."""
        if self._closed:
            return
        if not self._moving_pose:
            self.start_pose = np.array(q, dtype=float)
        if self.widget is not None and not self._dragging:
            self.widget.SetCenter(*self.tool_position())
            self.view.request_render()

    # ----- on / off ---------------------------------------------------------------
    def set_enabled(self, on: bool) -> None:
        """Show (True) or remove the handle."""
        if self._closed:
            return
        if on and self.widget is None and self.action.isEnabled():
            self.start_pose = self.session.pose.copy()
            self._add_widget()
        elif not on and self.widget is not None:
            self._remove_widget("sphere_widgets")
            self._timer.stop()
            self._pending = None
        self._update_target_action()

    def _add_widget(self) -> None:
        radius = 0.9 * Sizes.of(self.robot).joint_radius
        self.widget = self.view.plotter.add_sphere_widget(
            self._on_moved, center=self.tool_position(), radius=radius, color=HANDLE_COLOR,
            selected_color=HANDLE_SELECTED, test_callback=False, interaction_event="always")
        self.widget.AddObserver("StartInteractionEvent", self._on_drag_started)
        self.widget.AddObserver("EndInteractionEvent", self._on_drag_ended)
        self.view.request_render()

    def _update_target_action(self) -> None:
        self.target_action.setEnabled(self.widget is not None)

    # ----- dragging ---------------------------------------------------------------
    def _on_drag_started(self, *_args) -> None:
        self._dragging = True

    def _on_drag_ended(self, *_args) -> None:
        """The mouse let go: solve the last move now, then put the handle on the tool."""
        self._dragging = False
        if self._pending is not None:
            self._timer.stop()
            self._solve_pending()
        if self.widget is not None:
            self.widget.SetCenter(*self.tool_position())
            self.view.request_render()

    def _on_moved(self, point) -> None:
        """The widget's callback (a drag moved the handle to `point`): solved at the next
        event-loop turn, merged with later moves."""
        self._pending = np.array(point, dtype=float)
        self._timer.request()

    def _solve_pending(self) -> None:
        point, self._pending = self._pending, None
        if point is not None and not self._closed:
            self.drag_to(point)

    def drag_to(self, point) -> object:
        """Move the tool towards `point` (3,), m, base frame: a few DLS steps from the
        session's pose, joints within their limits, then the session's pose. Returns the
        `IKResult`; the status bar says when the arm cannot follow."""
        robot = self.robot
        result = solve_position(robot, self.session.pose, np.asarray(point, dtype=float),
                                max_iterations=DRAG_ITERATIONS)
        self.last_result = result
        # unlimited revolute joints within +-180 deg: the sliders' and targets' range
        self._set_own_pose(wrap_revolute(robot, result.q))
        self._report(result)
        return result

    def _report(self, result) -> None:
        reach = Sizes.of(self.robot).reach
        bar = self.window.statusBar()
        parts = []
        if not result.reached and result.residual > 1e-6 * reach:
            short = f"{1000 * result.residual:.1f} mm"
            if result.at_limits:
                joints = ", ".join(str(j + 1) for j in result.at_limits)
                parts.append(f"Cannot follow: held by the limits of joint(s) {joints}, "
                             f"the tool stops {short} short")
            else:
                parts.append(f"Out of reach: the tool stops {short} short")
        s_min = result.smallest_singular_value
        if s_min < NEAR_SINGULAR_SHARE * reach:
            parts.append(f"near a singularity: smallest singular value {s_min:.3g}")
        if parts:
            text = "; ".join(parts)
            self._message = text[0].upper() + text[1:]
            bar.showMessage(self._message, MESSAGE_MS)
        elif self._message and bar.currentMessage() == self._message:
            bar.clearMessage()
            self._message = ""

    # ----- target -----------------------------------------------------------------
    def use_as_target(self) -> bool:
        """Copy the pose into the Run panel's targets (`RunPanel.set_target_pose`); the
        arm goes back to the pose it had before the drag (the run's start)."""
        target = self.session.pose.copy()
        self.window.run_panel.set_target_pose(target)
        start = self.start_pose
        if start is not None and start.shape == target.shape and not np.array_equal(start,
                                                                                     target):
            self.session.set_pose(start)  # a pose change of its own: the start stays
        self.window.statusBar().showMessage(
            "Inverse-dynamics target set to the dragged pose; the arm is back at the start",
            MESSAGE_MS)
        return True

    def shutdown(self) -> None:
        """Stop and remove the handle (before the 3D view is shut down)."""
        if self._closed:
            return
        self._timer.stop()
        if self.widget is not None:
            self._remove_widget("sphere_widgets")
        self._closed = True


def install_tool_drag(window) -> ToolDrag:
    """Add the drag-the-tool actions to `window` (a `MainWindow`): on the 3D view's
    toolbar and in the View menu; it follows the window's session. Returns the
    `ToolDrag`."""
    drag = ToolDrag(window)
    bar = window.view_bar
    bar.addSeparator()
    bar.addAction(drag.action)
    bar.addAction(drag.target_action)
    for action in window.menuBar().actions():
        menu = action.menu()
        if menu is not None and action.text().replace("&", "") == "View":
            menu.addSeparator()
            menu.addAction(drag.action)
            menu.addAction(drag.target_action)
            break
    return drag
