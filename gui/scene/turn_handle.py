"""Turn a body in the 3D view: a box around a free or spherical joint's body that turns
it when dragged (issue #23's orientation control, beside the Pose dock's three angle
sliders).

View > Turn Body (also on the 3D view's toolbar) is shown for a model with a free or
spherical joint; it takes the first free joint (a floating base), else the first
spherical one, and its menu (the toolbar button's arrow) chooses any other: a shoulder's
ball joint is turned the same way. A VTK box widget is placed around the body's frame origin, axis-aligned:
dragging one of its faces turns the box about that origin (no moving, no scaling).
Each turn R_delta (base frame) of the box since the drag began turns the body from its
orientation R_0 then: R = R_delta R_0. The joint's quaternion follows from its frame
before its own motion, R_j = R_0 Rq_0^T (Rq_0: the joint's rotation at the start),
as q = quat(R_j^T R). The new pose goes through `Session.set_pose`, the path the pose
sliders take, so the three angle sliders (and every other view) follow the handle; a
pose change from the sliders puts the box back around the body, axis-aligned. Only
the orientation changes: a free body's x, y, z stay. No kinematics here beyond core's
`forward_kinematics`.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QToolButton
from vtkmodules.vtkCommonTransforms import vtkTransform

from armdyn.core import JointType, forward_kinematics
from armdyn.core.model.rotations import quaternion_rotation

from ..look.text import tooltip
from ..model.pose import driven_joints
from .arm_scene import Sizes
from .interaction import SceneInteraction

__all__ = ["TurnHandle", "install_turn_handle", "turnable_joints", "TURN_TIP", "NO_BODY_TIP",
           "HANDLE_COLOR"]

HANDLE_COLOR = "#CC79A7"
#: The box's half side, in joint radii of the model (`Sizes.joint_radius`).
HALF_SIDE = 2.5
TURN_TIP = ("Turn a free or spherical joint's body: drag a face of the box around it; "
            "its roll, pitch and yaw sliders follow")
NO_BODY_TIP = ("Turn Body turns a free or spherical joint's body: this model has none "
               "(pose its joints with the Pose sliders or Drag Tool)")


def turnable_joints(model) -> list[int]:
    """The joints (0-based) whose body Turn Body can turn: the free, then the spherical
    ones a person moves (`driven_joints`: a ball joint that closes a loop follows)."""
    kinds = list(model.joint_types)
    driven = set(driven_joints(model))
    return [j for kind in (JointType.FREE, JointType.SPHERICAL)
            for j, k in enumerate(kinds) if k == kind and j in driven]


class TurnHandle(SceneInteraction):
    """The turn-the-body interaction of one `MainWindow`.

    ``action`` (checkable, Turn Body); ``widget`` the VTK box widget while it is on (else
    None); ``joint`` the joint it turns (0-based, None for a model without one).
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.joint: int | None = None
        self._start: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # q, R_0, R_j
        self.action = QAction("Turn &Body", window)
        self.action.setCheckable(True)
        self.action.setToolTip(NO_BODY_TIP)
        self.action.setStatusTip(NO_BODY_TIP)
        self.action.setEnabled(False)
        self.action.setVisible(False)
        self.action.toggled.connect(self.set_enabled)
        self.menu = QMenu(window)  # which body: the toolbar button's arrow
        self._choices = QActionGroup(self.menu)
        self.action.setMenu(self.menu)

    # ----- the body -------------------------------------------------------------------
    def body_frame(self) -> np.ndarray:
        """(4, 4) the turned body's own frame at the session's pose, base frame."""
        return forward_kinematics(self.robot, self.session.pose).frames[self.joint + 1]

    def _quaternion_at(self) -> slice:
        """Where the joint's quaternion sits in q (the last four of its values)."""
        s = self.robot.q_slice(self.robot.joint_names[self.joint])
        return slice(s.stop - 4, s.stop)

    def set_robot(self, robot) -> None:
        """A new model: offered when it has a free or spherical joint."""
        if self._closed:
            return
        joints = turnable_joints(robot)
        self.menu.clear()
        for action in self._choices.actions():
            self._choices.removeAction(action)
        for j in joints:
            choice = self.menu.addAction(f"{j + 1} {robot.joint_names[j]} "
                                         f"({robot.joint_types[j].value})")
            choice.setCheckable(True)
            self._choices.addAction(choice)
            choice.triggered.connect(lambda _on=False, j=j: self.set_joint(j))
        # shown only where it applies (as Follow CoM): a DH arm's toolbar is as it was
        self.action.setEnabled(bool(joints))
        self.action.setVisible(bool(joints))
        if not joints:
            self.joint = None
            self.action.setChecked(False)
            self._tip()
            return
        self.set_joint(joints[0])

    def set_joint(self, joint: int) -> None:
        """Turn the body of `joint` (0-based, a free or spherical joint) from now on."""
        joints = turnable_joints(self.robot)
        self.joint = joint
        self._choices.actions()[joints.index(joint)].setChecked(True)
        self._tip()
        if self.widget is not None:
            self._place()

    def _tip(self) -> None:
        tip = NO_BODY_TIP if self.joint is None else (
            f"{TURN_TIP} (now: joint {self.joint + 1}, "
            f"{self.robot.joint_names[self.joint]}; the arrow chooses another)")
        self.action.setToolTip(tooltip(tip))  # a joint's name from the file, as typed
        self.action.setStatusTip(tip)

    # ----- on / off -------------------------------------------------------------------
    def set_enabled(self, on: bool) -> None:
        """Show (True) or remove the box."""
        if self._closed:
            return
        if on and self.widget is None and self.action.isEnabled():
            self.widget = self.view.plotter.add_box_widget(
                self._on_turned, bounds=self._bounds(), factor=1.0, rotation_enabled=True,
                color=HANDLE_COLOR, outline_translation=False, pass_widget=True,
                interaction_event="always")
            self.widget.SetScalingEnabled(False)
            self.widget.GetOutlineProperty().SetLineWidth(2.5)  # a hairline was lost
            self.widget.GetSelectedFaceProperty().SetOpacity(0.35)  # the face held
            self.widget.AddObserver("StartInteractionEvent", self._on_drag_started)
            self.widget.AddObserver("EndInteractionEvent", self._on_drag_ended)
            self._place()
        elif not on and self.widget is not None:
            self._remove_widget("box_widgets")

    def _bounds(self) -> tuple[float, ...]:
        o = self.body_frame()[:3, 3]
        h = HALF_SIDE * Sizes.of(self.robot).joint_radius
        return (o[0] - h, o[0] + h, o[1] - h, o[1] + h, o[2] - h, o[2] + h)

    def _place(self) -> None:
        """The box around the body, axis-aligned (no turn since)."""
        self.widget.PlaceWidget(self._bounds())
        self._start = None
        self.view.request_render()

    # ----- turning --------------------------------------------------------------------
    def _on_drag_started(self, *_args) -> None:
        q = self.session.pose.copy()
        R0 = self.body_frame()[:3, :3].copy()
        Rq0 = quaternion_rotation(q[self._quaternion_at()])
        self._start = (q, R0, R0 @ Rq0.T)

    def _on_drag_ended(self, *_args) -> None:
        self._place()

    def _on_turned(self, _box, widget) -> None:
        """The box's callback: its transform since it was placed turns the body."""
        if self._start is None or self._closed:
            return  # placing it calls back too
        t = vtkTransform()
        widget.GetTransform(t)
        M = np.array([[t.GetMatrix().GetElement(r, c) for c in range(4)] for r in range(4)])
        self.turn_by(M[:3, :3])

    def turn_by(self, R_delta: np.ndarray) -> np.ndarray:
        """Turn the body by R_delta (3, 3), base frame, from its orientation when the
        drag began (now, if none has); returns the new pose (nq,), also the session's."""
        if self._start is None:
            self._on_drag_started()
        from scipy.spatial.transform import Rotation  # (scipy.spatial: not at a window's start)

        q0, R0, Rj = self._start
        quat = Rotation.from_matrix(Rj.T @ np.asarray(R_delta, dtype=float) @ R0).as_quat()
        if np.dot(quat, q0[self._quaternion_at()]) < 0.0:
            quat = -quat  # the same turn; the sign nearest the start keeps plots smooth
        q = q0.copy()
        q[self._quaternion_at()] = quat
        self._set_own_pose(q)
        return q

    def _on_pose_changed(self, _q) -> None:
        """Sliders, Home, a run: the box goes back around the body."""
        if self._closed or self._moving_pose or self.widget is None:
            return
        self._place()

    def shutdown(self) -> None:
        """Remove the box (before the 3D view is shut down)."""
        if self._closed:
            return
        self.set_enabled(False)
        self._closed = True


def install_turn_handle(window) -> TurnHandle:
    """Add Turn Body to `window` (a `MainWindow`): on the 3D view's toolbar and in the
    View menu; it follows the window's session. Returns the `TurnHandle`."""
    handle = TurnHandle(window)
    window.view_bar.addAction(handle.action)
    button = window.view_bar.widgetForAction(handle.action)
    if isinstance(button, QToolButton):  # a click turns it on, the arrow chooses the body
        button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
    for menu in window.tool_drag.action.associatedObjects():  # the View menu, by Drag Tool
        if isinstance(menu, QMenu):
            menu.addAction(handle.action)
    if window.session.model is not None:
        handle.set_robot(window.session.model)
    return handle
