"""An independent reference: the same robot as a Pinocchio model (test-only).

Joint k of the DH chain sits at DH frame k and turns about / slides along its
z axis; the fixed rest of the DH row, X_k = Tz(b)Tx(a)Rx(alpha) (revolute) or
Rz(theta)Tx(a)Rx(alpha) (prismatic), carries joint frame k to link k's own
frame, where the robot file gives the mass centre and inertia.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from core.robot import Robot


def _rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def pinocchio_model(robot: Robot) -> pin.Model:
    model = pin.Model()
    model.gravity.linear = np.array(robot.gravity, dtype=float)
    parent = 0
    placement = pin.SE3.Identity()
    for k, link in enumerate(robot.links):
        if link.is_revolute:
            joint = pin.JointModelRZ()
            X = pin.SE3(_rot_x(link.alpha), np.array([link.a, 0.0, link.b]))
        else:
            joint = pin.JointModelPZ()
            Rz = _rot_z(link.theta)
            X = pin.SE3(Rz @ _rot_x(link.alpha), Rz @ np.array([link.a, 0.0, 0.0]))
        jid = model.addJoint(parent, joint, placement, f"j{k + 1}")
        com_j = X.rotation @ np.array(link.com) + X.translation
        I_j = X.rotation @ link.inertia_matrix @ X.rotation.T
        model.appendBodyToJoint(jid, pin.Inertia(link.mass, com_j, I_j), pin.SE3.Identity())
        model.addFrame(pin.Frame(f"link{k + 1}", jid, 0, X, pin.FrameType.OP_FRAME))
        parent, placement = jid, X
    return model
