"""Floating-base URDFs of real robots (example-robot-data: humanoids, quadrupeds, flying
arms) read with `load_urdf(path, floating_base=True)`, against Pinocchio's
`buildModelFromUrdf(path, JointModelFreeFlyer())`: inverse and forward dynamics, the
mass matrix, the mass centre, the centroidal momentum, and 1 s free falls (joint values
and base pose). Also URDF's floating joints and the export of a floating base."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from armdyn.core import (center_of_mass, energy, forward_dynamics, inverse_dynamics,
                         load_urdf, mass_matrix, momentum, save_urdf, simulate)
from armdyn.core.io.urdf import FLOATING_BASE_NAME, UrdfFileError, mechanism_from_urdf
from armdyn.core.kernels.drives import FRICTION_BAND
from pinocchio_reference import pinocchio_free_fall
from strategies import assert_close, example_robot_data


ROBOTS = {  # (file, moving bodies (the free one included), ArmDyn's nv)
    "solo12 (quadruped)": ("solo_description/robots/solo12.urdf", 13, 18),
    "anymal (quadruped, base called 'base')": ("anymal_b_simple_description/robots/anymal.urdf",
                                               13, 18),
    "a1 (quadruped)": ("a1_description/urdf/a1.urdf", 13, 18),
    "g1 (humanoid, 29 joints)": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", 30, 35),
    "simple humanoid": ("simple_humanoid_description/urdf/simple_humanoid.urdf", 30, 35),
    "b1 with a z1 arm": ("b1_description/urdf/b1-z1.urdf", 20, 25),
    "borinot (flying arm)": ("borinot_description/urdf/borinot_flying_arm_2.urdf", 3, 8),
    "hextilt (flying arm)": ("hextilt_description/urdf/hextilt_flying_arm_5.urdf", 6, 11),
}


class FloatingPinocchio:
    """Pinocchio's free-flyer model of a URDF, addressed in ArmDyn's order: ArmDyn link
    k = the URDF link its joint moves = a Pinocchio BODY frame (the free root: Pinocchio's
    root_joint). ArmDyn's q of a revolute or prismatic joint is the URDF's plus q_home;
    its free joint's rates are [w; v], Pinocchio's [v; w] (both in the body frame)."""

    def __init__(self, path: Path, mech):
        self.model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        self.mech = mech
        qi, vi, self.offset = [], [], []
        for link, home in zip(mech.links, _homes(mech)):
            if link.joint.value == "free":
                joint = self.model.joints[1]
                qi += list(range(joint.idx_q, joint.idx_q + 7))
                vi += [joint.idx_v + 3, joint.idx_v + 4, joint.idx_v + 5,
                       joint.idx_v, joint.idx_v + 1, joint.idx_v + 2]
                self.offset += [0.0] * 7
                continue
            frame = self.model.frames[self.model.getFrameId(link.name, pin.BODY)]
            joint = self.model.joints[frame.parentJoint]
            assert joint.nq == 1, "continuous joints are not in these files"
            qi.append(joint.idx_q)
            vi.append(joint.idx_v)
            self.offset.append(home)
        self.qi, self.vi = np.array(qi), np.array(vi)
        self.offset = np.array(self.offset)
        assert sorted(self.vi) == list(range(self.model.nv))

    def q(self, q):
        out = pin.neutral(self.model)
        out[self.qi] = np.asarray(q) - self.offset
        return out

    def v(self, v):
        out = np.zeros(self.model.nv)
        out[self.vi] = v
        return out

    def q_back(self, qp):
        return np.asarray(qp)[self.qi] + self.offset

    def v_back(self, vp):
        return np.asarray(vp)[self.vi]


def _homes(mech):
    """Per joint, the home value that ArmDyn adds to the URDF's (0 for the free joint)."""
    return [0.0 if link.joint.value == "free" else link.q_home for link in mech.links]


def _state(mech, rng, scale=1.0):
    q = mech.q_home.copy()
    free = mech.q_slice(mech.joint_names[0])
    x = rng.normal(size=4)
    q[free] = np.concatenate([rng.uniform(-1, 1, 3), x / np.linalg.norm(x)])
    for link in mech.links[1:]:
        q[mech.q_slice(link.name)] += rng.uniform(-1.0, 1.0)
    return q, scale * rng.normal(size=mech.nv), rng.normal(size=mech.nv)


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def robot(request):
    rel, bodies, nv = ROBOTS[request.param]
    path = example_robot_data() / rel
    mech = load_urdf(path, floating_base=True)
    return path, mech, FloatingPinocchio(path, mech), bodies, nv


def test_the_root_floats_first_with_the_contracts_layout(robot):
    path, mech, ref, bodies, nv = robot
    assert (mech.n, mech.nv, mech.nq) == (bodies, nv, nv + 1)
    assert ref.model.nv == nv and ref.model.nq == nv + 1
    root = mech.joint_names[0]
    assert mech.links[0].joint.value == "free"
    assert (mech.q_slice(root), mech.v_slice(root)) == (slice(0, 7), slice(0, 6))
    np.testing.assert_array_equal(mech.q_home[:7], [0, 0, 0, 0, 0, 0, 1])
    assert mech.total_mass == pytest.approx(sum(i.mass for i in ref.model.inertias))


def test_dynamics_mass_centre_and_momentum_agree_with_pinocchio(robot):
    _, mech, ref, _, _ = robot
    rng = np.random.default_rng(3)
    model, data = ref.model, ref.data
    for _ in range(3):
        q, v, a = _state(mech, rng)
        qp, vp, ap = ref.q(q), ref.v(v), ref.v(a)
        tau = inverse_dynamics(mech, q, v, a)
        # the joints' <dynamics damping friction>, as Pinocchio read them, with ArmDyn's
        # smoothed Coulomb law (docs/motions.md) written out here
        friction = (np.asarray(model.damping) * vp
                    + np.asarray(model.friction) * np.tanh(vp / FRICTION_BAND))
        assert_close(tau, ref.v_back(pin.rnea(model, data, qp, vp, ap) + friction), 1e-9,
                     what="inverse dynamics")
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        assert_close(mass_matrix(mech, q), M[np.ix_(ref.vi, ref.vi)], 1e-9, what="mass matrix")
        assert_close(forward_dynamics(mech, q, v, tau), a, 1e-7, what="forward dynamics")
        assert_close(ref.v_back(pin.aba(model, data, qp, vp, ref.v(tau) - friction)), a, 1e-7,
                     what="Pinocchio's aba of our tau")
        pin.centerOfMass(model, data, qp)
        assert_close(center_of_mass(mech, q), data.com[0], 1e-10, what="mass centre")
        h = pin.computeCentroidalMomentum(model, data, qp, vp)
        p = momentum(mech, q, v)
        assert_close(p.linear, h.linear, 1e-9, what="linear momentum")
        assert_close(p.angular, h.angular, 1e-9, what="angular momentum")
        assert_close(energy(mech, q, v)[0], pin.computeKineticEnergy(model, data, qp, vp),
                     1e-9, what="kinetic energy")


def test_a_one_second_free_fall_follows_pinocchios(robot):
    """From a tumbling start, joints moving: joint values and the base's pose."""
    _, mech, ref, _, _ = robot
    rng = np.random.default_rng(11)
    q0, v0, _ = _state(mech, rng, scale=0.5)
    run = simulate(mech, 1.0, q0=q0, qd0=v0, dt_out=0.1, stops=False, rtol=1e-11, atol=1e-11)
    Y = pinocchio_free_fall(ref.model, ref.data, ref.q(q0), ref.v(v0), run.t,
                            friction_band=FRICTION_BAND)
    for s in range(len(run.t)):
        q_ref = ref.q_back(Y[s, :ref.model.nq])
        quat, quat_ref = run.q[s, 3:7], q_ref[3:7] / np.linalg.norm(q_ref[3:7])
        assert min(np.abs(quat - quat_ref).max(), np.abs(quat + quat_ref).max()) < 1e-6
        np.testing.assert_allclose(run.q[s, :3], q_ref[:3], atol=1e-6)  # the base's place
        np.testing.assert_allclose(run.q[s, 7:], q_ref[7:], atol=1e-6)
        np.testing.assert_allclose(run.qd[s], ref.v_back(Y[s, ref.model.nq:]), atol=1e-5)


# ----------------------------------------------------------------------------------
# URDF's floating joints, names, export
# ----------------------------------------------------------------------------------

_BODY = ('<inertial><mass value="1.5"/><origin xyz="0.1 0 0"/>'
         '<inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial>')


def _urdf(joints: str, links=("world", "body", "arm")) -> str:
    bodies = "".join(f'<link name="{n}">{_BODY if n != "world" else ""}</link>' for n in links)
    return f'<robot name="r">{bodies}{joints}</robot>'


def test_a_floating_joint_from_the_root_is_a_free_body_at_the_joints_pose():
    text = _urdf('<joint name="free" type="floating"><parent link="world"/><child link="body"/>'
                 '<origin xyz="0.1 0.2 0.3" rpy="0.4 0 0"/></joint>'
                 '<joint name="elbow" type="revolute"><parent link="body"/><child link="arm"/>'
                 '<origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>'
                 '<limit lower="-1" upper="1" effort="0" velocity="0"/></joint>')
    mech = mechanism_from_urdf(text)
    assert [l.joint.value for l in mech.links] == ["free", "revolute"]
    home = mech.q_home
    np.testing.assert_allclose(home[:3], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(home[3:7], [math.sin(0.2), 0, 0, math.cos(0.2)], atol=1e-15)
    assert mech.chains[1].parent == "body"  # the elbow starts a chain on the free body


def test_a_floating_joint_below_a_moving_link_is_refused_by_name():
    text = _urdf('<joint name="elbow" type="revolute"><parent link="world"/>'
                 '<child link="body"/><axis xyz="0 0 1"/>'
                 '<limit lower="-1" upper="1" effort="0" velocity="0"/></joint>'
                 '<joint name="loose" type="floating"><parent link="body"/><child link="arm"/>'
                 '</joint>')
    with pytest.raises(UrdfFileError) as err:
        mechanism_from_urdf(text)
    assert err.value.joint == "loose" and err.value.field == "type"


def test_a_planar_joint_is_refused_by_name():
    text = _urdf('<joint name="slide" type="planar"><parent link="world"/><child link="body"/>'
                 '</joint>', links=("world", "body"))
    with pytest.raises(UrdfFileError) as err:
        mechanism_from_urdf(text, floating_base=True)
    assert err.value.joint == "slide" and "planar" in str(err.value)


def test_a_root_called_base_floats_under_another_name():
    path = example_robot_data() / ROBOTS["anymal (quadruped, base called 'base')"][0]
    mech = load_urdf(path, floating_base=True)
    assert mech.joint_names[0] == FLOATING_BASE_NAME
    assert "base" not in mech.joint_names


def test_a_floating_base_saves_as_urdfs_root_and_reads_back(tmp_path):
    path = example_robot_data() / ROBOTS["solo12 (quadruped)"][0]
    mech = load_urdf(path, floating_base=True)
    out = tmp_path / "solo.urdf"
    save_urdf(mech, out)
    back = load_urdf(out, floating_base=True)
    assert back.joint_names == mech.joint_names and back.nv == mech.nv
    rng = np.random.default_rng(5)
    q, v, a = _state(mech, rng)
    np.testing.assert_allclose(inverse_dynamics(back, q, v, a), inverse_dynamics(mech, q, v, a),
                               rtol=1e-9, atol=1e-9)
    # and Pinocchio reads the written file as the same floating robot
    written = FloatingPinocchio(out, back)
    np.testing.assert_allclose(
        written.v_back(pin.rnea(written.model, written.data, written.q(q), written.v(v),
                                written.v(a))), inverse_dynamics(mech, q, v, a), rtol=1e-9,
        atol=1e-9)


def test_the_command_line_floats_a_urdfs_base_when_asked(tmp_path, capsys):
    from armdyn.core.cli import main
    path = example_robot_data() / ROBOTS["solo12 (quadruped)"][0]
    out = tmp_path / "fall.csv"
    assert main(["simulate", str(path), "--floating-base", "-T", "0.3", "-o", str(out),
                 "--stops", "off"]) == 0
    header = out.read_text().splitlines()[2].split(",")
    assert header[1:4] == ["q1 base_link x [m]", "q1 base_link y [m]", "q1 base_link z [m]"]
    table = np.loadtxt(out, delimiter=",", skiprows=3)
    z = table[:, 3]  # the base falls: z = -g t^2 / 2 at first (nothing under it)
    assert z[-1] < -0.3
    assert "angular momentum z [kg m^2/s]" in header
    # without the option the same file is a fixed-base tree
    assert main(["simulate", str(path), "-T", "0.1", "-o", str(tmp_path / "fixed.csv"),
                 "--stops", "off"]) == 0
    fixed = (tmp_path / "fixed.csv").read_text().splitlines()[2].split(",")
    assert not any("base_link" in c for c in fixed)
    # --q0 gives the revolute joints' values (the base starts at its home pose, at rest)
    assert main(["simulate", str(path), "--floating-base", "--q0", "1,2", "-T", "0.1",
                 "-o", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert "--q0: expected 12 values" in err and "the free joint 'base_link'" in err
