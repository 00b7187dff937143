"""Turn Body (gui/scene/turn_handle.py): a box around a free body in the 3D view turns
it; the Pose dock's roll, pitch and yaw follow, and a slider puts the box back."""
from __future__ import annotations

import math

import numpy as np
import pytest
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkCommonTransforms import vtkTransform

from armdyn.core import Chain, JointType, Link, Mechanism, forward_kinematics, save_mechanism
from armdyn.core.io.model_files import load_model
from armdyn.core.model.rotations import rotation_rpy
from armdyn.gui.scene.turn_handle import turnable_joints

from gui_helpers import PUMA, ROBOTS, flush_events

pytestmark = pytest.mark.gui

SPACE_ROBOT = ROBOTS / "space_robot.toml"


def _box_matrix(widget) -> np.ndarray:
    t = vtkTransform()
    widget.GetTransform(t)
    return np.array([[t.GetMatrix().GetElement(r, c) for c in range(4)] for r in range(4)])


def test_the_box_turns_the_free_body_and_the_angle_sliders_follow(make_window):
    window = make_window(SPACE_ROBOT)
    handle = window.turn_handle
    assert handle.action.isEnabled() and handle.joint == 0
    window.set_pose(window.session.model.q_home)
    before = forward_kinematics(window.session.model, window.session.pose).frames[1].copy()
    handle.action.trigger()
    widget = handle.widget
    assert widget is not None
    # a drag in the real widget: its transform turned 30 deg about the base z through
    # the body's origin, then the widget's own interaction events
    o = before[:3, 3]
    turn = vtkTransform()
    turn.PostMultiply()
    turn.Translate(*(-o))
    turn.RotateZ(30.0)
    turn.Translate(*o)
    widget.InvokeEvent("StartInteractionEvent")
    widget.SetTransform(turn)
    widget.InvokeEvent("InteractionEvent")
    widget.InvokeEvent("EndInteractionEvent")
    flush_events()
    after = forward_kinematics(window.session.model, window.session.pose).frames[1]
    Rz = rotation_rpy((0.0, 0.0, math.radians(30.0)))
    np.testing.assert_allclose(after[:3, :3], Rz @ before[:3, :3], atol=1e-9)
    np.testing.assert_allclose(after[:3, 3], o, atol=1e-12)  # turned, not moved
    # the Pose dock's yaw box of the free body shows the turn (rows: x, y, z, r, p, y)
    _slider, yaw = window.pose_panel.joint_widgets(5)
    assert yaw.value() == pytest.approx(30.0, abs=0.05)
    assert np.allclose(_box_matrix(widget), np.eye(4))  # placed again, axis-aligned
    # a slider moves the body: the box goes with it (centred on it, axis-aligned)
    _slider, x = window.pose_panel.joint_widgets(0)
    x.setValue(0.3)
    flush_events()
    box = vtkPolyData()
    widget.GetPolyData(box)
    moved = forward_kinematics(window.session.model, window.session.pose).frames[1][:3, 3]
    assert moved[0] == pytest.approx(o[0] + 0.3)
    np.testing.assert_allclose(box.GetCenter(), moved, atol=1e-9)
    assert np.allclose(_box_matrix(widget), np.eye(4))
    handle.action.trigger()
    assert handle.widget is None


def test_only_bodies_a_person_moves_are_offered():
    """The PUMA has no free or spherical joint (no Turn Body: its toolbar is as it was);
    the car's ball joints close its loops and follow: only its chassis is offered."""
    assert turnable_joints(load_model(PUMA)) == []
    car = load_model(ROBOTS / "car_jalon.toml")
    assert [car.joint_types[j].value for j in turnable_joints(car)] == ["free"]
    assert any(kind.value == "spherical" for kind in car.joint_types)


def test_a_ball_joint_is_turned_the_same_way_chosen_from_the_menu(make_window, tmp_path):
    rod = dict(mass=1.0, com=(0.2, 0.0, 0.0), inertia=(1e-3, 4e-3, 4e-3, 0.0, 0.0, 0.0))
    mech = Mechanism("ball", [Chain("body", [Link(joint=JointType.FREE, name="trunk", **rod)]),
                              Chain("limb", [Link(joint=JointType.SPHERICAL, xyz=(0.3, 0, 0),
                                                  name="arm", **rod)], parent="trunk")],
                     gravity=(0.0, 0.0, 0.0))
    path = tmp_path / "ball.toml"
    save_mechanism(mech, path)
    window = make_window(path)
    handle = window.turn_handle
    names = [a.text() for a in handle.menu.actions()]
    assert names == ["1 trunk (free)", "2 arm (spherical)"] and handle.joint == 0
    handle.menu.actions()[1].trigger()
    assert handle.joint == 1
    model = window.session.model
    before = forward_kinematics(model, window.session.pose).frames
    Ry = rotation_rpy((0.0, math.radians(-40.0), 0.0))
    handle.turn_by(Ry)
    after = forward_kinematics(model, window.session.pose).frames
    np.testing.assert_allclose(after[2][:3, :3], Ry @ before[2][:3, :3], atol=1e-9)
    np.testing.assert_allclose(after[1], before[1], atol=1e-12)  # the trunk stays
    _slider, pitch = window.pose_panel.joint_widgets(7)  # trunk x..yaw, then arm r, p, y
    assert pitch.value() == pytest.approx(-40.0, abs=0.05)
