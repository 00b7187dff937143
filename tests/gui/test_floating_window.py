"""Floating bases in the window (issue #23): the bundled floating models and a URDF opened
"as floating base" open, pose (a free body's x, y, z, roll, pitch, yaw) and fall; the
tables keep what they do not show (Compare: tests/gui/test_compare.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from armdyn.core import (Chain, JointType, Link, Mechanism, Road, SpringDamper,
                         center_of_mass, save_mechanism)
from armdyn.core.model.rotations import (quaternion_rotation, quaternion_rpy, quaternion_rpy_angles,
                                          rotation_rpy, rpy_from_rotation)
from armdyn.gui.model.mechanism_draft import draft_for
from armdyn.gui.model.pose import coordinate_values, pose_coordinates, with_coordinate

from gui_helpers import ROBOTS, armdyn, plots_final

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("no_modal_boxes")]

#: A floating trunk with a swinging arm: the pelvis of a URDF opened floating.
URDF = """<?xml version="1.0"?>
<robot name="trunk_and_arm">
  <link name="trunk">
    <inertial><mass value="10.0"/>
      <inertia ixx="0.4" ixy="0" ixz="0" iyy="0.3" iyz="0" izz="0.2"/></inertial>
  </link>
  <link name="arm">
    <inertial><origin xyz="0.2 0 0"/><mass value="1.0"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="trunk"/><child link="arm"/><origin xyz="0 0.2 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="1"/>
  </joint>
</robot>
"""


def _satellite() -> Mechanism:
    """A free body placed and turned at home, an arm on a ball joint, a spring to the
    base, a road: what the tables do not show must survive an edit."""
    body = Link(joint=JointType.FREE, name="satellite", mass=10.0,
                inertia=(1.0, 1.2, 1.4, 0, 0, 0),
                home=(0.5, -0.2, 1.0, *quaternion_rpy((0.1, 0.2, 0.3))))
    arm = Link(joint=JointType.SPHERICAL, name="arm", xyz=(0, 0.2, 0.4), rpy=(0.3, 0, 0),
               mass=1.0, com=(0, 0, -0.15), inertia=(0.02, 0.02, 0.004, 0, 0, 0))
    return Mechanism("satellite", [Chain("body", [body]), Chain("limb", [arm],
                                                                parent="satellite")],
                     forces=[SpringDamper("tether", links=("base", "satellite"),
                                          at=((0, 0, 0), (0, 0, 0)), stiffness=5.0)],
                     road=Road(((0.0, 0.0), (1.0, 0.1))), gravity=(0, 0, 0))


# ----- Qt-free: the pose's coordinates, the draft -------------------------------------

def test_a_free_body_is_posed_by_position_and_roll_pitch_yaw():
    mech = _satellite()
    coords = pose_coordinates(mech)
    labels = [c.label for c in coords]
    assert labels == ["1  satellite x", "1  satellite y", "1  satellite z",
                      "1  satellite roll", "1  satellite pitch", "1  satellite yaw",
                      "2  arm roll", "2  arm pitch", "2  arm yaw"]
    q = mech.q_home
    values = coordinate_values(coords, q)
    assert np.allclose(values[:6], [0.5, -0.2, 1.0, 0.1, 0.2, 0.3], atol=1e-12)
    # yaw to 40 deg: the quaternion is that of (0.1, 0.2, 40 deg), checked as a matrix
    q2 = with_coordinate(coords, q, 5, math.radians(40.0))
    assert np.allclose(quaternion_rotation(q2[3:7]),
                       rotation_rpy((0.1, 0.2, math.radians(40.0))), atol=1e-12)
    assert np.isclose(np.linalg.norm(q2[3:7]), 1.0)
    assert np.array_equal(q2[:3], q[:3]) and np.array_equal(q2[7:], q[7:])
    # x is a plain value
    assert with_coordinate(coords, q, 0, 2.5)[0] == 2.5


def test_editing_a_floating_mechanism_keeps_placements_homes_forces_and_road():
    mech = _satellite()
    draft = draft_for(mech)
    assert draft.set_cells([(1, "mass", 2.5)])
    edited = draft.robot
    assert edited.links[1].mass == 2.5
    assert edited.links[0].home == mech.links[0].home
    assert (edited.links[1].xyz, edited.links[1].rpy) == (mech.links[1].xyz, mech.links[1].rpy)
    assert edited.forces == mech.forces and edited.road == mech.road
    assert np.allclose(edited.q_home, mech.q_home)


# ----- the window -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["astronaut", "space_robot", "human_body_jalon"])
def test_the_bundled_floating_models_open_with_a_pose_row_per_coordinate(make_window, name):
    window = make_window(ROBOTS / f"{name}.toml")
    model = window.session.model
    assert window.session.pose.shape == (model.nq,)
    assert len(window.pose_panel._rows) == len(pose_coordinates(model))
    slider, spin = window.pose_panel.joint_widgets(3)  # the free base's roll
    assert spin.suffix().strip() == "\u00b0"
    spin.setValue(25.0)
    k = model.values_of([0])[3]
    R = quaternion_rotation(window.session.pose[k:k + 4])
    assert np.allclose(R, rotation_rpy((math.radians(25.0), 0, 0)), atol=1e-9)
    assert slider.value() == 250  # 0.1 deg per tick: slider and box in sync


@pytest.mark.parametrize("name", ["car_jalon", "truck_jalon"])
def test_the_vehicles_open_with_their_loops_closed_and_run_with_multipliers(
        make_window, qtbot, name):
    """A floating model with loops: the default target moves its steering and
    suspensions on their branch (core.follow_independent over nq values), and the free
    fall's method is the multipliers' (the penalty method takes revolute and prismatic
    joints only, so it is not offered)."""
    from armdyn.core import loop_residual
    from armdyn.gui.jobs.runs import FallMethod
    window = make_window(ROBOTS / f"{name}.toml")
    model = window.session.model
    from armdyn.core.algorithms.mechanism_pose import follow_independent
    target = window.run_panel.targets.target_pose()
    assert target.shape == (model.nq,)
    # the actuated steering's target is one where the loops close (the others follow)
    closed = follow_independent(model, model.q_home, target)
    assert np.abs(loop_residual(model, closed)).max() < 1e-9
    assert np.abs(target - model.q_home).max() > 0.1
    page = window.run_panel.free_fall
    assert page.fall_method() is FallMethod.MULTIPLIERS
    assert not page._method.isVisibleTo(page)
    with qtbot.waitSignal(window.session.run_ended, timeout=240_000) as ended:
        window.run_panel.start_free_fall(0.05)
    traj = ended.args[0].trajectory
    assert traj.q.shape[1] == model.nq and len(traj) == 6
    assert traj.loop_residual.max() < 1e-8
    # inverse dynamics: the actuated steering turns towards the target, the rest follows
    (steering,) = model.actuated
    with qtbot.waitSignal(window.session.run_ended, timeout=240_000) as ended:
        window.run_panel.start_inverse(0.1)
    traj = ended.args[0].trajectory
    v = model.rates_of([steering])
    assert np.abs(traj.tau[:, v]).max() > 0.0
    assert np.all(np.delete(traj.tau, v, axis=1) == 0.0)
    k = model.values_of([steering])
    assert np.isclose(traj.q[-1, k], target[k]).all()
    assert traj.loop_residual.max() < 1e-10


def test_the_human_falls_in_the_window_as_a_body_thrown_in_uniform_gravity(
        make_window, qtbot):
    window = make_window(ROBOTS / "human_body_jalon.toml")
    model = window.session.model
    with qtbot.waitSignal(window.session.run_ended, timeout=120_000) as ended:
        window.run_panel.start_free_fall(0.5)
    traj = ended.args[0].trajectory
    assert traj.q.shape == (51, model.nq) and traj.qd.shape == (51, model.nv)
    # independent of the run: c(t) = c0 + g t^2 / 2 from rest; L about the centre stays 0
    c0 = center_of_mass(model, model.q_home)
    g = np.asarray(model.gravity)
    expected = c0 + 0.5 * np.outer(traj.t ** 2, g)
    assert np.allclose(traj.center_of_mass, expected, atol=1e-6)
    assert np.abs(traj.angular_momentum).max() < 1e-6
    # the base went down with it, the plots have samples
    z = traj.q[:, model.values_of([0])[2]]
    assert np.isclose(z[-1] - z[0], 0.5 * g[2] * 0.25, rtol=1e-3)
    assert window.plots.sample_count() == 51


def test_a_urdf_opened_as_floating_base_moves_its_base_in_the_run(make_window, qtbot,
                                                                  tmp_path):
    path = tmp_path / "trunk.urdf"
    path.write_text(URDF)
    window = make_window()
    assert window.files.load(path, floating_base=True)
    model = window.session.model
    assert model.joint_types[0] is JointType.FREE and model.nq == 8
    assert window.files.recent.floating_base(path)  # remembered for this file
    with qtbot.waitSignal(window.session.run_ended, timeout=120_000) as ended:
        window.run_panel.start_free_fall(0.4)
    z = ended.args[0].trajectory.q[:, 2]
    assert z[-1] < z[0] - 0.5  # about g t^2 / 2 = 0.78 m down
    # opened again without saying: floating, as last time; said otherwise: fixed
    assert window.files.load(path) and window.session.model.nq == 8
    assert window.files.load(path, floating_base=False) and window.session.model.nq == 1
    assert not window.files.recent.floating_base(path)


def test_the_open_dialog_offers_floating_base_for_a_urdf_only(make_window, tmp_path):
    from armdyn.gui.robot_files import open_dialog
    path = tmp_path / "trunk.urdf"
    path.write_text(URDF)
    window = make_window()
    window.files.recent.set_floating_base(path, True)
    dialog = open_dialog(window, str(tmp_path), window.files.recent)
    try:
        dialog.currentChanged.emit(str(path))
        assert dialog.floating.isEnabled() and dialog.floating.isChecked()
        dialog.currentChanged.emit(str(ROBOTS / "astronaut.toml"))
        assert not dialog.floating.isEnabled() and not dialog.floating.isChecked()
    finally:
        dialog.deleteLater()


def test_scripted_free_fall_of_a_urdf_with_floating_base(tmp_path):
    path = tmp_path / "trunk.urdf"
    path.write_text(URDF)
    shot = tmp_path / "shot.png"
    done = armdyn(str(path), "--floating-base", "--free-fall", "0.2", "--screenshot",
                  str(shot), "--size", "1280x800", timeout=300)
    assert done.returncode == 0, done.stderr
    assert shot.stat().st_size > 10_000
    refused = armdyn(str(ROBOTS / "astronaut.toml"), "--floating-base", "--screenshot",
                     str(tmp_path / "x.png"))
    assert refused.returncode == 2 and "--floating-base goes with a URDF" in refused.stderr


def test_a_free_body_is_drawn_as_the_box_of_its_inertia_and_has_no_root_plate():
    from armdyn.gui.scene.arm_scene import build_parts, inertia_box
    mech = _satellite()
    names = [p.name for p in build_parts(mech)]
    assert "body 1" in names and "joint 1" not in names and "root 1" not in names
    assert "joint 2" in names  # the ball joint
    # a box of sides (a, b, c) = (1, 2, 3) m and 12 kg: I = m (b^2 + c^2) / 12, ...
    box = Link(joint=JointType.FREE, name="box", mass=12.0, inertia=(13.0, 10.0, 5.0, 0, 0, 0),
               com=(0.1, 0, 0))
    mesh = inertia_box(box, 0.01)
    lo, hi = np.asarray(mesh.bounds).reshape(3, 2).T
    assert np.allclose(hi - lo, [1.0, 2.0, 3.0]) and np.allclose((hi + lo) / 2, [0.1, 0, 0])


def test_roll_pitch_yaw_of_many_quaternions_match_core_and_rebuild_the_rotation():
    rng = np.random.default_rng(7)
    quats = rng.normal(size=(200, 4))
    angles = quaternion_rpy_angles(quats)
    for quat, rpy in zip(quats[:20], angles[:20]):
        R = quaternion_rotation(quat)
        assert np.allclose(rpy, rpy_from_rotation(R), atol=1e-12)
        assert np.allclose(rotation_rpy(rpy), R, atol=1e-12)
    # at gimbal lock (pitch +-90 deg) the turn is still the same
    for pitch in (math.pi / 2, -math.pi / 2):
        rpy = quaternion_rpy_angles(quaternion_rpy((0.4, pitch, -1.1)))
        assert np.allclose(rotation_rpy(rpy), rotation_rpy((0.4, pitch, -1.1)), atol=1e-12)


def test_inverse_dynamics_of_the_space_robot_turns_its_base_and_plots_it(make_window, qtbot):
    window = make_window(ROBOTS / "space_robot.toml")
    plots = window.plots
    assert {"base_position", "base_orientation", "momentum"} <= set(plots.available_plots())
    with qtbot.waitSignal(window.session.run_ended, timeout=120_000) as ended:
        window.run_panel.start_inverse(2.0)
    plots_final(qtbot, window)
    traj = ended.args[0].trajectory
    assert np.all(traj.tau[:, :6] == 0.0)  # nothing drives the satellite
    shown = {p.spec.key: p for p in plots._plots}
    angles = np.array([c.samples()[1] for c in shown["base_orientation"].curves]).T
    assert angles.shape == (len(traj), 3)
    expected = np.degrees([quaternion_rpy_angles_of(q[3:7]) for q in traj.q])
    assert np.allclose(angles, expected, atol=1e-9)
    assert np.abs(angles[-1]).max() > 1.0  # the base turned (degrees)
    momentum = np.array([c.samples()[1] for c in shown["momentum"].curves])
    assert momentum.shape == (6, len(traj)) and np.abs(momentum).max() < 1e-8
    assert np.allclose(shown["base_position"].curves[2].samples()[1], traj.q[:, 2])
    # a robot without a free joint has none of these plots
    assert window.files.load(ROBOTS / "puma560_saha.toml")
    assert "momentum" not in plots.available_plots()


def quaternion_rpy_angles_of(quat):
    """Core's roll, pitch, yaw of a quaternion (the plots' independent check)."""
    return rpy_from_rotation(quaternion_rotation(quat))


def test_a_live_free_fall_of_the_space_robot_is_pushed_by_ctrl_drag_on_its_body(
        make_window, qtbot):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from gui_helpers import widget_pixel
    window = make_window(ROBOTS / "space_robot.toml", size=(1600, 1000))
    panel, push, view = window.run_panel, window.push, window.view3d
    view.fit()
    view.render_now()
    chunks = []
    panel.chunk.connect(chunks.append)
    panel.set_live(True)
    panel.start_free_fall(30.0)
    try:
        qtbot.waitUntil(lambda: len(chunks) >= 5, timeout=30000)
        assert panel.is_live()
        model = window.session.model
        start = widget_pixel(window, center_of_mass(model, view.q))
        QTest.mousePress(view.plotter, Qt.LeftButton, Qt.ControlModifier, start)
        assert push.grabbed == 1  # the satellite's box
        QTest.mouseMove(view.plotter, start + QPoint(120, 0))
        qtbot.wait(600)
        QTest.mouseRelease(view.plotter, Qt.LeftButton, Qt.ControlModifier,
                           start + QPoint(120, 0))
        qtbot.wait(200)
    finally:
        panel.stop()
        qtbot.waitUntil(lambda: not panel.is_running(), timeout=5000)
    # at rest in zero gravity until the pull: then the system gains linear momentum
    # (zero gravity: the pull is the only force) and the satellite moves
    p = np.concatenate([c.linear_momentum for c in chunks])
    assert np.abs(p[0]).max() < 1e-9 and np.linalg.norm(p[-1]) > 1e-3
    q = np.concatenate([c.q for c in chunks])
    assert np.linalg.norm(q[-1, :3] - q[0, :3]) > 1e-5


def _tethered(tmp_path):
    """The satellite tied to the base by a spring at a point off its mass centre: from
    rest, the spring turns it (angular momentum about the mass centre grows)."""
    mech = _satellite()
    tether = SpringDamper("tether", links=("base", "satellite"),
                          at=((0, 0, 0), (0.3, 0.0, 0.0)), stiffness=20.0)
    mech = Mechanism(mech.name, mech.chains, forces=[tether], gravity=(0, 0, 0))
    path = tmp_path / "tethered.toml"
    save_mechanism(mech, path)
    return path


def test_the_mass_centre_its_path_and_the_angular_momentum_are_drawn_and_followed(
        make_window, qtbot, tmp_path):
    window = make_window(_tethered(tmp_path), size=(1280, 800))
    overlay = window.mass_centre
    model = window.session.model
    assert overlay.shown and overlay.action.isVisible()
    assert np.allclose(overlay.centre, center_of_mass(model, model.q_home))
    with qtbot.waitSignal(window.session.run_ended, timeout=120_000) as ended:
        window.run_panel.start_free_fall(1.0)
    traj = ended.args[0].trajectory
    plots_final(qtbot, window)
    assert np.array_equal(overlay.path_points(), traj.center_of_mass)
    # the base angles are continuous (unwrapped) and the same turn as core's; the plots
    # have no joint-angle curve (no joint of one value) and are fitted all the same
    plots = {p.spec.key: p for p in window.plots._plots}
    angles = np.array([c.samples()[1] for c in plots["base_orientation"].curves]).T
    assert np.abs(np.diff(angles, axis=0)).max() < 90.0
    wrapped = np.degrees([quaternion_rpy_angles_of(q[3:7]) for q in traj.q])
    assert np.allclose(np.mod(angles - wrapped + 180.0, 360.0) - 180.0, 0.0, atol=1e-7)
    assert "joint_angles" not in window.plots.visible_plots()
    lo, hi = plots["base_orientation"].vb.viewRange()[1]
    assert lo <= angles.min() and angles.max() <= hi
    assert np.linalg.norm(traj.angular_momentum[-1]) > 1e-3  # the spring turned it
    window.playback.seek(0.5)
    k = int(np.searchsorted(traj.t, 0.5))
    assert np.allclose(overlay.centre, traj.center_of_mass[k])
    assert np.allclose(overlay.momentum, traj.angular_momentum[k])
    assert overlay._arrow.GetVisibility()
    # the camera follows the mass centre: it moves by the centre's displacement
    overlay.action.setChecked(True)
    camera = window.view3d.plotter.camera
    before = np.array(camera.focal_point)
    window.playback.seek(1.0)
    assert np.allclose(np.array(camera.focal_point) - before,
                       traj.center_of_mass[-1] - traj.center_of_mass[k], atol=1e-9)
    # a model without a free joint: nothing drawn, no toggle
    assert window.files.load(ROBOTS / "puma560_saha.toml")
    assert not overlay.shown and not overlay.action.isVisible()


def test_springs_tyres_and_the_road_are_drawn_where_core_puts_their_points(
        make_window, tmp_path):
    from armdyn.core import Tyre
    chassis = Link(joint=JointType.FREE, name="chassis", mass=500.0,
                   inertia=(100.0, 300.0, 350.0, 0, 0, 0), home=(4.9, 0, 0.6, 0, 0, 0, 1))
    tyre = Tyre("front", link="chassis", at=(1.2, 0.7, 0.0), stiffness=8e4, damping=3e3,
                radius=0.3)
    tether = SpringDamper("tether", links=("base", "chassis"), at=((0, 0, 1.5), (0.5, 0, 0)),
                          stiffness=10.0)
    road = Road(((0.0, 0.0), (5.0, 0.0), (7.0, 0.2)))
    car = Mechanism("car", [Chain("body", [chassis])], forces=[tyre, tether], road=road)
    path = tmp_path / "car.toml"
    save_mechanism(car, path)
    window = make_window(path)
    overlay = window.force_elements
    assert overlay.road_actor is not None
    # the wheel centre at x = 4.9 + 1.2 = 6.1 m: the road is 0.2 (6.1 - 5) / 2 = 0.11 m high
    assert np.allclose(overlay.ends[0], [[6.1, 0.7, 0.11], [6.1, 0.7, 0.6]])
    assert np.allclose(overlay.ends[1], [[0, 0, 1.5], [5.4, 0, 0.6]])
    q = window.session.pose.copy()
    q[2] = 1.0  # the chassis up by 0.4 m: the tyre's coil and the tether follow
    window.set_pose(q)
    assert np.allclose(overlay.ends[0][1], [6.1, 0.7, 1.0])
    assert np.allclose(overlay.ends[1][1], [5.4, 0, 1.0])
    assert window.files.load(ROBOTS / "space_robot.toml")  # none: nothing drawn
    assert overlay.ends.shape == (0, 2, 3) and overlay.road_actor is None


def test_inspect_shows_a_floating_mass_matrix_with_the_base_block_shaded(make_window):
    from armdyn.core import mass_matrix
    window = make_window(ROBOTS / "space_robot.toml")
    window.inspect.flush()
    gim = window.inspect._gim
    model = window.session.model
    assert (gim.rowCount(), gim.columnCount()) == (model.nv, model.nv)
    M = mass_matrix(model, window.session.pose)
    assert float(gim.tool_tip(0, 0).split()[0]) == pytest.approx(M[0, 0], rel=1e-9)
    assert gim.tool_tip(0, 0).endswith("kg m\u00b2") and gim.tool_tip(5, 5).endswith(" kg")
    assert gim.is_shaded(5, 0) and gim.is_shaded(0, 5) and not gim.is_shaded(6, 0)
    assert not gim.is_shaded(6, 6)
    # the whole system's mass in the base block's translational part
    assert M[3, 3] == pytest.approx(model.total_mass)
    assert window.files.load(ROBOTS / "puma560_saha.toml")
    window.inspect.flush()
    assert not window.inspect._gim.is_shaded(0, 0)


def test_drag_tool_is_off_for_a_floating_model_and_says_why(make_window):
    window = make_window(ROBOTS / "space_robot.toml")
    action = window.tool_drag.action
    assert not action.isEnabled() and "several degrees of freedom" in action.toolTip()
    window.tool_drag.set_enabled(True)
    assert window.tool_drag.widget is None
    assert window.files.load(ROBOTS / "puma560_saha.toml") and action.isEnabled()


def test_a_table_edit_keeps_a_floating_pose_and_a_new_home_moves_it():
    from dataclasses import replace

    from armdyn.gui.model.pose import carry_pose
    mech = _satellite()
    q = mech.q_home.copy()
    q[:3] = (9.0, 8.0, 7.0)  # beyond the sliders' +-5 m: a free body is not clipped
    q[7:11] = quaternion_rpy((0.0, 0.4, 0.0))
    heavier = draft_for(mech)
    assert heavier.set_cells([(1, "mass", 2.5)])
    assert np.array_equal(carry_pose(mech, heavier.robot, q), q)
    body = replace(mech.links[0], home=(0, 0, 2.0, 0, 0, 0, 1))
    moved = Mechanism(mech.name, [Chain("body", [body]), mech.chains[1]], forces=mech.forces,
                      road=mech.road, gravity=(0, 0, 0))
    out = carry_pose(mech, moved, q)
    assert np.array_equal(out[:7], [0, 0, 2.0, 0, 0, 0, 1]) and np.array_equal(out[7:], q[7:])


def test_a_universal_joint_has_its_two_angles_as_rows():
    trunk = Link(joint=JointType.FREE, name="trunk", mass=3.0, inertia=(0.1, 0.1, 0.1, 0, 0, 0))
    steer = Link(joint=JointType.UNIVERSAL, name="steer", mass=1.0, com=(0, 0, -0.1),
                 home=(0.2, -0.3))
    mech = Mechanism("m", [Chain("body", [trunk]), Chain("u", [steer], parent="trunk")])
    coords = pose_coordinates(mech)
    assert [c.label for c in coords[6:]] == ["2  steer angle 1", "2  steer angle 2"]
    assert np.allclose(coordinate_values(coords, mech.q_home)[6:], [0.2, -0.3])
    q = with_coordinate(coords, mech.q_home, 7, 0.5)
    assert np.allclose(q[7:], [0.2, 0.5]) and np.array_equal(q[:7], mech.q_home[:7])


def test_the_mass_centre_meshes_wait_for_the_first_floating_model(make_window, tmp_path):
    """A window that opens a fixed-base arm adds none of the overlay's meshes (three
    meshes a start does not need); the first floating model adds them, shown, and a
    fixed-base model again hides them."""
    window = make_window(ROBOTS / "puma560_saha.toml")
    overlay, renderer = window.mass_centre, window.view3d.plotter.renderer
    overlay_names = {"mass centre", "angular momentum", "mass centre path"}
    assert not overlay.shown and not overlay_names & set(renderer.actors)
    assert not overlay.action.isVisible() and len(overlay.path_points()) == 0
    assert window.files.load(_tethered(tmp_path))
    assert overlay.shown and overlay_names <= set(renderer.actors)
    assert overlay.action.isVisible()
    assert window.files.load(ROBOTS / "puma560_saha.toml")
    assert not overlay.shown and not overlay.action.isVisible()
