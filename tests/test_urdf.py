"""URDF files (core.io.urdf, docs/urdf.md) against Pinocchio's own URDF parser.

Pinocchio reads a URDF into its own model (urdfdom, Featherstone's spatial algebra,
fixed joints merged); ArmDyn reads it into DH chains. Both must give the same inverse
dynamics, mass matrix and mass-centre positions when the joint values are mapped as
docs/urdf.md says: ArmDyn q = URDF q + mech.q_home (Pinocchio's continuous joints
hold (cos q, sin q)). The files: real arms shipped by example-robot-data, random
URDFs (mixed joints, signs, fixed links, trees) written here, and the files ArmDyn
itself writes (from those arms and from robots/*.toml).
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from armdyn.core import (Mechanism, forward_kinematics, inverse_dynamics, load_mechanism,
                         load_robot, load_urdf, mass_matrix, save_urdf)
from armdyn.core import MechanismFileError
from armdyn.core.kernels.drives import FRICTION_BAND
from armdyn.core.io.urdf import (PARALLEL_TOLERANCE, UNLIMITED_PRISMATIC_RANGE, UrdfFileError,
                                 mechanism_from_urdf, mechanism_to_urdf)
from armdyn.core.model.rotations import rotation_rpy, rpy_from_rotation
from strategies import assert_close, dh_tables, example_robot_data, random_rotation, random_urdf

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
RTOL = 1e-9  # relative; observed errors are below 2e-12 (angles snapped within 1e-12 rad)


ERD = example_robot_data()

#: Serial industrial and research arms: (file, moving joints).
REAL_ARMS = {
    "ur3": ("ur_description/urdf/ur3_robot.urdf", 6),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", 6),
    "ur10": ("ur_description/urdf/ur10_robot.urdf", 6),
    "kinova-j2s6s200": ("kinova_description/robots/kinova.urdf", 6),   # continuous joints
    "xarm7": ("xarm_description/urdf/xarm7.urdf", 7),
    "unitree-z1": ("z1_description/urdf/z1.urdf", 7),
    "so100": ("so_arm_description/urdf/so100.urdf", 6),
    "so101": ("so_arm_description/urdf/so101.urdf", 6),
}
#: Trees: (file, moving joints, chains).
REAL_TREES = {
    "unitree-a1": ("a1_description/urdf/a1.urdf", 12, 4),
    "allegro-hand": ("allegro_hand_description/urdf/allegro_right_hand.urdf", 16, 4),
}


# ----------------------------------------------------------------------------------
# Pinocchio side
# ----------------------------------------------------------------------------------

class PinocchioUrdf:
    """Pinocchio's model of a URDF text, addressed by the ArmDyn mechanism's link names
    (ArmDyn link k = the URDF link its joint moves = a Pinocchio BODY frame)."""

    def __init__(self, text: str, mech, gravity=None):
        self.model = pin.buildModelFromXML(text)
        if gravity is not None:
            self.model.gravity.linear = np.array(gravity, dtype=float)
        self.data = self.model.createData()
        self.mech = mech
        self.joints = []
        for name in mech.joint_names:
            frame = self.model.frames[self.model.getFrameId(name, pin.BODY)]
            self.joints.append(frame.parentJoint)
        assert len(set(self.joints)) == mech.n == self.model.nv
        self.v_index = [self.model.joints[j].idx_v for j in self.joints]

    def configuration(self, q_urdf) -> np.ndarray:
        """Pinocchio's q of URDF joint values (ArmDyn order); (cos, sin) for continuous."""
        out = pin.neutral(self.model)
        for k, j in enumerate(self.joints):
            joint = self.model.joints[j]
            if joint.nq == 2:
                out[joint.idx_q:joint.idx_q + 2] = (math.cos(q_urdf[k]), math.sin(q_urdf[k]))
            else:
                out[joint.idx_q] = q_urdf[k]
        return out

    def tangent(self, x) -> np.ndarray:
        out = np.zeros(self.model.nv)
        out[self.v_index] = x
        return out

    def rnea(self, q_urdf, qd, qdd) -> np.ndarray:
        """Pinocchio's RNEA plus the joints' friction as Pinocchio read it from the URDF's
        <dynamics damping friction> (model.damping, model.friction), with ArmDyn's
        smoothed Coulomb law (docs/motions.md) written out here."""
        tau = pin.rnea(self.model, self.data, self.configuration(q_urdf), self.tangent(qd),
                       self.tangent(qdd))[self.v_index]
        damping = np.asarray(self.model.damping)[self.v_index]
        coulomb = np.asarray(self.model.friction)[self.v_index]
        return tau + damping * qd + coulomb * np.tanh(np.asarray(qd) / FRICTION_BAND)

    def crba(self, q_urdf) -> np.ndarray:
        M = pin.crba(self.model, self.data, self.configuration(q_urdf))
        M = np.triu(M) + np.triu(M, 1).T
        return M[np.ix_(self.v_index, self.v_index)]

    def mass_centres(self, q_urdf) -> np.ndarray:
        pin.forwardKinematics(self.model, self.data, self.configuration(q_urdf))
        return np.array([self.data.oMi[j].act(self.model.inertias[j].lever)
                         for j in self.joints])


def assert_same_dynamics(mech, ref: PinocchioUrdf, seed: int = 0, states: int = 4,
                         rtol: float = RTOL) -> float:
    """ArmDyn at q = q_urdf + q_home against Pinocchio at q_urdf; returns the largest
    relative error seen."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(states):
        q_urdf = rng.uniform(-math.pi, math.pi, mech.n)
        qd, qdd = rng.normal(size=mech.n), rng.normal(size=mech.n)
        q = q_urdf + mech.q_home
        tau_ref, M_ref = ref.rnea(q_urdf, qd, qdd), ref.crba(q_urdf)
        tau, M = inverse_dynamics(mech, q, qd, qdd), mass_matrix(mech, q)
        assert_close(tau, tau_ref, rtol, scale=1.0, what="inverse dynamics")
        assert_close(M, M_ref, rtol, what="mass matrix")
        com_ref = ref.mass_centres(q_urdf)
        assert_close(forward_kinematics(mech, q).com, com_ref, rtol, scale=1.0,
                     what="mass centres")
        worst = max(worst, np.max(np.abs(tau - tau_ref)) / max(1.0, np.max(np.abs(tau_ref))),
                    np.max(np.abs(M - M_ref)) / np.max(np.abs(M_ref)))
    return worst


# ----------------------------------------------------------------------------------
# Real robots
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(REAL_ARMS))
def test_real_arms_match_pinocchios_urdf_loader(name):
    path, n = REAL_ARMS[name]
    text = (ERD / path).read_text()
    mech = load_urdf(ERD / path)
    assert mech.n == n and len(mech.chains) == 1 and not mech.loops
    # the joint order is the URDF's from the root
    assert list(mech.joint_names) == depth_first_moving_links(text)
    assert_same_dynamics(mech, PinocchioUrdf(text, mech))


@pytest.mark.parametrize("name", sorted(REAL_TREES))
def test_real_trees_match_pinocchios_urdf_loader(name):
    path, n, chains = REAL_TREES[name]
    mech = load_urdf(ERD / path)
    assert (mech.n, len(mech.chains)) == (n, chains)
    assert_same_dynamics(mech, PinocchioUrdf((ERD / path).read_text(), mech))


def test_panda_without_its_mimic_is_a_tree_with_two_fingers():
    """The Panda's fingers: prismatic joints along +y and -y on the hand (a tree)."""
    text = (ERD / "panda_description/urdf/panda.urdf").read_text()
    root = ET.fromstring(text)
    for joint in root.findall("joint"):
        for mimic in joint.findall("mimic"):
            joint.remove(mimic)
    text = ET.tostring(root, encoding="unicode")
    mech = mechanism_from_urdf(text, "panda.urdf")
    assert mech.n == 9 and [c.name for c in mech.chains] == ["panda_joint1",
                                                             "panda_finger_joint2"]
    # the hand is fixed to link 7: the first finger continues the arm's chain, the second
    # starts a chain on link 7
    assert mech.chains[1].parent == "panda_link7"
    assert mech.joint_names[-2:] == ("panda_leftfinger", "panda_rightfinger")
    assert_same_dynamics(mech, PinocchioUrdf(text, mech))


def test_ur5_reads_as_its_published_dh_table():
    """Universal Robots' published UR5 parameters: d1 = 0.089159, a2 = -0.425,
    a3 = -0.39225, d4 = 0.10915, d5 = 0.09465, alpha = (90, 0, 0, 90, -90, 0) deg. The
    reader's x axes make a >= 0, and x = z_{i-1} x z_i where axes meet (alpha in
    (0, 180) deg), so the signs of a2, a3, alpha5 and the zero pose's theta differ;
    d6 = 0.0823 is the tool flange, a fixed link merged into the last one (whose frame
    is its joint frame)."""
    mech = load_urdf(ERD / "ur_description/urdf/ur5_robot.urdf")
    links = mech.links
    np.testing.assert_allclose([l.a for l in links], [0, 0.425, 0.39225, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose([l.b for l in links], [0.089159, 0, 0, 0.10915, 0.09465, 0],
                               atol=1e-12)
    np.testing.assert_allclose(np.degrees([l.alpha for l in links]), [90, 0, 0, 90, 90, 0],
                               atol=1e-10)
    assert mech.chains[0].base.is_identity
    assert mech.joint_names == ("shoulder_link", "upper_arm_link", "forearm_link",
                                "wrist_1_link", "wrist_2_link", "wrist_3_link")
    # limits are the URDF's plus q_home: shoulder_pan [-2 pi, 2 pi] from the zero pose
    np.testing.assert_allclose(links[0].limits, np.array([-2, 2]) * math.pi + links[0].theta,
                               atol=1e-9)


@pytest.mark.parametrize("path, joint, words", [
    ("panda_description/urdf/panda.urdf", "panda_finger_joint2", ("mimic",)),
    ("talos_data/robots/talos_left_arm.urdf", "gripper_left_inner_double_joint", ("mimic",)),
    ("human_description/robots/human.urdf", "left_hip_Z", ("no mass", "left_upperleg_virtual")),
    ("romeo_description/urdf/romeo_small.urdf", "RShoulderYaw", ("triangle inequality",)),
])
def test_real_files_arm_dyn_cannot_hold_are_refused_naming_the_joint(path, joint, words):
    with pytest.raises(UrdfFileError) as err:
        load_urdf(ERD / path)
    message = str(err.value)
    assert message.startswith(str(ERD / path)) and f"joint {joint!r}" in message
    assert all(w in message for w in words)
    assert err.value.joint == joint and isinstance(err.value, MechanismFileError)


# ----------------------------------------------------------------------------------
# Random URDFs: every joint type, signed and tilted axes, fixed links, trees
# ----------------------------------------------------------------------------------

def depth_first_moving_links(text: str) -> list[str]:
    """The child links of the moving joints, depth first from the root, children in the
    file's order (docs/urdf.md's joint order), computed here from the XML."""
    root = ET.fromstring(text)
    children = {}
    for j in root.findall("joint"):
        children.setdefault(j.find("parent").get("link"), []).append(j)
    parents = {j.find("child").get("link") for j in root.findall("joint")}
    (top,) = [l.get("name") for l in root.findall("link") if l.get("name") not in parents]
    order = []

    def visit(link):
        for j in children.get(link, []):
            if j.get("type") != "fixed":
                order.append(j.find("child").get("link"))
            visit(j.find("child").get("link"))

    visit(top)
    return order


@pytest.mark.parametrize("seed", range(24))
def test_random_urdfs_match_pinocchio(seed):
    tree = seed % 2 == 1
    text = random_urdf(seed, joints=4 + seed % 9, tree=tree)
    mech = mechanism_from_urdf(text, f"random{seed}.urdf")
    assert list(mech.joint_names) == depth_first_moving_links(text)
    assert_same_dynamics(mech, PinocchioUrdf(text, mech), seed=seed)
    # and the file ArmDyn writes from it
    written = mechanism_to_urdf(mech)
    assert_same_dynamics(mech, PinocchioUrdf(written, mech), seed=seed + 100)


def test_fixed_links_merge_into_one_body():
    """Two 1 kg point-like boxes fixed 0.2 m apart on x: one 2 kg body, mass centre in the
    middle, inertia gaining m d^2 about y and z (parallel axes)."""
    box = ('<inertial><mass value="1"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" '
           'iyz="0" izz="0.003"/></inertial>')
    text = f"""<robot name="merge"><link name="base"/>
      <link name="a">{box}</link><link name="b">{box}</link>
      <joint name="hinge" type="continuous"><parent link="base"/><child link="a"/>
        <axis xyz="0 0 1"/></joint>
      <joint name="weld" type="fixed"><parent link="a"/><child link="b"/>
        <origin xyz="0.2 0 0"/></joint></robot>"""
    (link,) = mechanism_from_urdf(text).links
    assert link.mass == 2.0 and link.limits is None
    np.testing.assert_allclose(link.com, [0.1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(link.inertia, [0.002, 0.004 + 2 * 0.01, 0.006 + 2 * 0.01, 0, 0, 0],
                               atol=1e-15)


def test_joint_values_keep_the_urdf_sense_of_motion():
    """A joint about -z carrying a mass at x = 1 m: turning it by +0.3 rad (URDF and
    ArmDyn alike) moves the mass to (cos 0.3, -sin 0.3); a slider along -x moves it by
    -0.2 m for +0.2 m."""
    body = ('<inertial><origin xyz="1 0 0"/><mass value="1"/><inertia ixx="0.01" ixy="0" '
            'ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')
    text = f"""<robot name="sense"><link name="base"/><link name="arm">{body}</link>
      <link name="slide"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0"
        iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
      <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/>
        <axis xyz="0 0 -1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="push" type="prismatic"><parent link="base"/><child link="slide"/>
        <origin xyz="0 2 0"/><axis xyz="-1 0 0"/>
        <limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint></robot>"""
    mech = mechanism_from_urdf(text)
    com = forward_kinematics(mech, mech.q_home + [0.3, 0.2]).com
    np.testing.assert_allclose(com, [[math.cos(0.3), -math.sin(0.3), 0], [-0.2, 2, 0]],
                               atol=1e-15)
    # two chains on the base (two moving children of the root), limits shifted by q_home
    assert len(mech.chains) == 2
    for link, urdf_limits in zip(mech.links, [(-1, 1), (-0.5, 0.5)]):
        np.testing.assert_allclose(link.limits, np.array(urdf_limits) + link.q_home,
                                   atol=1e-15)


# ----------------------------------------------------------------------------------
# Nearly parallel axes
# ----------------------------------------------------------------------------------

def planar_arm(tilt: str) -> str:
    """Three parallel revolute axes, each joint's frame turned by `tilt` about y (pi
    written as `tilt`: the axes flip and come back)."""
    link = ('<link name="{0}"><inertial><origin xyz="0.15 0 0"/><mass value="2"/><inertia '
            'ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>')
    limit = '<limit lower="-3" upper="3" effort="1" velocity="1"/>'
    return f"""<robot name="planar"><link name="base"/>{link.format("l1")}{link.format("l2")}
      {link.format("l3")}
      <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
        <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>{limit}</joint>
      <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
        <origin xyz="0.4 0 0" rpy="0 {tilt} 0"/><axis xyz="0 0 1"/>{limit}</joint>
      <joint name="j3" type="continuous"><parent link="l2"/><child link="l3"/>
        <origin xyz="0.3 0 0" rpy="0 {tilt} 0"/><axis xyz="0 0 1"/></joint></robot>"""


@pytest.mark.parametrize("tilt, off", [("3.141592653", 5.9e-10), ("3.14159", 2.7e-6)])
def test_axes_within_the_tolerance_of_parallel_are_parallel(tilt, off):
    """pi written short tilts each axis by `off` rad about y; taken as skew, the common
    normals would lie 0.4 m / off away (7e8 m for 3.141592653). Within the tolerance
    they are parallel: a = 0.4 and 0.3 m, b = 0, alpha = 180 deg, and the dynamics
    differ from the file's by about the angle dropped."""
    assert 2 * off < PARALLEL_TOLERANCE
    text = planar_arm(tilt)
    mech = mechanism_from_urdf(text)
    np.testing.assert_allclose([l.a for l in mech.links], [0.4, 0.3, 0], atol=1e-11)
    assert [l.b for l in mech.links] == [0.0, 0.0, 0.0]
    assert [l.alpha for l in mech.links[:2]] == [math.pi, math.pi]
    assert any("taken as parallel" in w and "'j2' and 'j3'" in w for w in mech.warnings)
    assert_same_dynamics(mech, PinocchioUrdf(text, mech), rtol=100 * off)


def test_axes_beyond_the_tolerance_stay_skew_and_exact():
    """3.1412 tilts the axes 3.9e-4 rad (> tolerance): the common normals lie about 1 km
    away, the mechanism says so, and its dynamics are still the file's."""
    text = planar_arm("3.1412")
    mech = mechanism_from_urdf(text)
    assert abs(mech.links[0].b) > 500
    assert any("common normal is far away" in w for w in mech.warnings)
    assert_same_dynamics(mech, PinocchioUrdf(text, mech), rtol=1e-8)


# ----------------------------------------------------------------------------------
# Refusals and errors
# ----------------------------------------------------------------------------------

_BODY = ('<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" '
         'iyz="0" izz="0.01"/></inertial>')


def one_joint(joint: str, extra: str = "", child_body: str = _BODY) -> str:
    return (f'<robot name="r"><link name="base"/><link name="arm">{child_body}</link>{extra}'
            f'{joint}</robot>')


_LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
REFUSED = {
    "floating below a moving link": (one_joint(
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
        f'{_LIMIT}</joint><joint name="free" type="floating"><parent link="arm"/>'
        '<child link="hand"/></joint>', extra=f'<link name="hand">{_BODY}</link>'),
        "free", "type", "a floating joint below a moving link"),
    "planar": (one_joint('<joint name="table" type="planar"><parent link="base"/>'
                         '<child link="arm"/></joint>'), "table", "type", "planar joint"),
    "mimic": (one_joint('<joint name="j" type="revolute"><parent link="base"/><child '
                        f'link="arm"/>{_LIMIT}<mimic joint="k"/></joint>'), "j", "mimic",
              "mimic joint"),
    "unknown type": (one_joint('<joint name="j" type="spherical"><parent link="base"/>'
                               '<child link="arm"/></joint>'), "j", "type",
                     "unknown joint type 'spherical'"),
    "missing link": (one_joint('<joint name="j" type="revolute"><parent link="bass"/>'
                               f'<child link="arm"/>{_LIMIT}</joint>'), "j", "parent.link",
                     "'bass' is not a <link>"),
    "zero axis": (one_joint('<joint name="j" type="revolute"><parent link="base"/>'
                            f'<child link="arm"/><axis xyz="0 0 0"/>{_LIMIT}</joint>'), "j",
                  "axis.xyz", "axis is zero"),
    "bad number": (one_joint('<joint name="j" type="revolute"><parent link="base"/>'
                             f'<child link="arm"/><origin xyz="0 0 zero"/>{_LIMIT}</joint>'),
                   "j", "origin.xyz", "'zero' is not a number"),
    "nan": (one_joint('<joint name="j" type="revolute"><parent link="base"/>'
                      f'<child link="arm"/><origin rpy="0 nan 0"/>{_LIMIT}</joint>'), "j",
            "origin.rpy", "finite"),
    "limits reversed": (one_joint('<joint name="j" type="prismatic"><parent link="base"/>'
                                  '<child link="arm"/><limit lower="1" upper="-1" effort="1" '
                                  'velocity="1"/></joint>'), "j", "limit", "above upper"),
    "massless": (one_joint('<joint name="j" type="revolute"><parent link="base"/>'
                           f'<child link="arm"/>{_LIMIT}</joint>', child_body=""), "j",
                 "inertial", "no mass"),
    "bad inertia": (one_joint('<joint name="j" type="revolute"><parent link="base"/>'
                              f'<child link="arm"/>{_LIMIT}</joint>', child_body=(
                                  '<inertial><mass value="1"/><inertia ixx="1" ixy="0" '
                                  'ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>')), "j",
                    "inertial", "triangle inequality"),
    "two parents": (one_joint('<joint name="j" type="revolute"><parent link="base"/>'
                              f'<child link="arm"/>{_LIMIT}</joint>'
                              '<joint name="k" type="fixed"><parent link="other"/>'
                              '<child link="arm"/></joint>', extra='<link name="other"/>'),
                    "k", "child.link", "already the child of joint 'j'"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_arm_dyn_cannot_read_is_refused_naming_the_joint_and_field(case, tmp_path):
    text, joint, field, words = REFUSED[case]
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    with pytest.raises(UrdfFileError) as err:
        load_urdf(path)
    e = err.value
    assert (e.joint, e.field) == (joint, field), str(e)
    assert str(e).startswith(f"{path}: joint {joint!r}") and words in str(e)


@pytest.mark.parametrize("text, words", [
    ("<robot name='r'><link name='a'></robot>", "not well-formed XML"),
    ("<model/>", "a URDF's is <robot>"),
    ("<robot name='r'><link name='a'/><link name='b'/></robot>", "2 root links"),
    ("<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='fixed'>"
     "<parent link='a'/><child link='b'/></joint></robot>", "nothing moves"),
])
def test_files_that_are_not_usable_urdfs_are_refused(text, words, tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    with pytest.raises(UrdfFileError, match=words):
        load_urdf(path)
    with pytest.raises(UrdfFileError, match="cannot read the file"):
        load_urdf(tmp_path / "missing.urdf")


def test_continuous_and_unlimited_joints_read_without_limits():
    text = one_joint('<joint name="j" type="continuous"><parent link="base"/><child '
                     'link="arm"/><limit effort="1" velocity="2"/></joint>')
    assert mechanism_from_urdf(text).links[0].limits is None
    text = one_joint('<joint name="j" type="revolute"><parent link="base"/><child '
                     'link="arm"/><limit effort="1" velocity="2"/></joint>')  # lower = upper
    assert mechanism_from_urdf(text).links[0].limits is None


# ----------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------

def _shipped(with_loops: bool):
    """The shipped files with loops, or without loops and fixed to the base (a floating model is
    written as URDF's root link, which Pinocchio reads back fixed unless told otherwise:
    tests/test_floating_urdf.py checks that round trip)."""
    out = []
    for path in sorted(ROBOTS.glob("*.toml")):
        mech = load_mechanism(path)
        if bool(mech.loops) == with_loops and (with_loops or mech.links[0].joint.value != "free"):
            out.append(path.name)
    return out


@pytest.mark.parametrize("name", _shipped(with_loops=False))
def test_shipped_robots_saved_as_urdf_load_in_pinocchio_with_the_same_dynamics(name, tmp_path):
    mech = load_mechanism(ROBOTS / name)
    path = tmp_path / "robot.urdf"
    warnings = save_urdf(mech, path)
    text = path.read_text()
    # URDF has no gravity: a gravity other than the default is warned about
    default = tuple(mech.gravity) == (0.0, 0.0, -9.81)
    assert (warnings == ()) == default and all("gravity" in w for w in warnings)
    ref = PinocchioUrdf(text, mech, gravity=mech.gravity)
    # the zero pose is q_home: Pinocchio's values are ArmDyn's minus q_home
    assert_same_dynamics(mech, ref)
    # every revolute joint with limits and every prismatic joint has <limit> (strict
    # parsers need it); Pinocchio reads the limits shifted by q_home
    model = pin.buildModelFromUrdf(str(path))
    for link, joint in zip(mech.links, ET.fromstring(text).findall("joint")):
        kind = joint.get("type")
        assert kind == ("prismatic" if not link.is_revolute else
                        "revolute" if link.limits is not None else "continuous")
        if kind == "continuous":
            continue
        limit = joint.find("limit")
        assert {"lower", "upper", "effort", "velocity"} <= set(limit.attrib)
        expected = (np.array(link.limits) - link.q_home if link.limits is not None
                    else UNLIMITED_PRISMATIC_RANGE)
        j = model.getJointId(joint.get("name"))
        got = (model.lowerPositionLimit[model.idx_qs[j]],
               model.upperPositionLimit[model.idx_qs[j]])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # read back by ArmDyn: the same dynamics, mapping each joint by name through the URDF
    back = load_urdf(path)
    assert sorted(back.joint_names) == sorted(mech.joint_names)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = mech.q_home + rng.uniform(-1, 1, mech.n)
        qd, qdd = rng.normal(size=mech.n), rng.normal(size=mech.n)
        order = [back.joint_index(name) for name in mech.joint_names]
        q_back = np.empty(mech.n)
        q_back[order] = q - mech.q_home + back.q_home[order]
        qd_back, qdd_back = np.empty(mech.n), np.empty(mech.n)
        qd_back[order], qdd_back[order] = qd, qdd
        back_g = back if default else _with_gravity(back, mech.gravity)
        assert_close(inverse_dynamics(back_g, q_back, qd_back, qdd_back)[order],
                     inverse_dynamics(mech, q, qd, qdd), RTOL, scale=1.0,
                     what="reloaded inverse dynamics")


def _with_gravity(mech, gravity):
    from dataclasses import replace
    return replace(mech, gravity=tuple(gravity), warnings=())


@pytest.mark.parametrize("name", _shipped(with_loops=True))
def test_mechanisms_with_loops_are_refused_naming_the_loop(name, tmp_path):
    mech = load_mechanism(ROBOTS / name)
    path = tmp_path / "robot.urdf"
    path.write_text("old")
    with pytest.raises(UrdfFileError) as err:
        save_urdf(mech, path)
    assert err.value.loop == mech.loops[0].name and "closed loops" in str(err.value)
    assert path.read_text() == "old"  # nothing written


@pytest.mark.parametrize("name", sorted(REAL_ARMS) + sorted(REAL_TREES))
def test_a_saved_urdf_reads_back_as_the_same_mechanism(name, tmp_path):
    """load(save(load(f))) == load(f) to round-off: the reader's frames are canonical, and
    the writer puts each link's URDF frame on its joint frame."""
    path = (REAL_ARMS | REAL_TREES)[name][0]
    first = load_urdf(ERD / path)
    saved = tmp_path / "again.urdf"
    assert save_urdf(first, saved) == ()
    again = load_urdf(saved)
    assert again.joint_names == first.joint_names
    assert [c.parent for c in again.chains] == [c.parent for c in first.chains]
    np.testing.assert_allclose(dh_tables(again), dh_tables(first), rtol=0, atol=1e-11)
    np.testing.assert_allclose(again.q_home, first.q_home, rtol=0, atol=1e-11)
    assert [l.limits is None for l in again.links] == [l.limits is None for l in first.links]
    np.testing.assert_allclose([l.limits for l in again.links if l.limits is not None],
                               [l.limits for l in first.links if l.limits is not None],
                               rtol=0, atol=1e-11)


def test_a_robot_saves_as_its_one_chain_mechanism(tmp_path):
    robot = load_robot(ROBOTS / "stanford_saha2009.toml")  # a prismatic joint 3
    path = tmp_path / "stanford.urdf"
    assert save_urdf(robot, path) == ()
    mech = Mechanism.from_robot(robot)
    assert_same_dynamics(mech, PinocchioUrdf(path.read_text(), mech))
    np.testing.assert_allclose(inverse_dynamics(robot, mech.q_home, np.ones(6), np.ones(6)),
                               inverse_dynamics(mech, mech.q_home, np.ones(6), np.ones(6)))


def test_save_failure_leaves_no_file_and_names_the_path(tmp_path):
    mech = load_mechanism(ROBOTS / "scara.toml")
    target = tmp_path / "no such folder" / "scara.urdf"
    with pytest.raises(UrdfFileError, match="cannot write the file") as err:
        save_urdf(mech, target)
    assert str(err.value).startswith(str(target))
    assert not target.parent.exists()
    with pytest.raises(TypeError):
        save_urdf("scara", tmp_path / "x.urdf")


def test_rpy_from_rotation_inverts_rotation_rpy():
    rng = np.random.default_rng(3)
    cases = [random_rotation(rng) for _ in range(50)]
    cases += [rotation_rpy((r, p, y)) for r in (0.3, -2.0) for p in (math.pi / 2, -math.pi / 2)
              for y in (0.0, 1.0)]  # gimbal lock
    for R in cases:
        np.testing.assert_allclose(rotation_rpy(rpy_from_rotation(R)), R, atol=1e-14)


def test_names_and_the_written_file_layout():
    mech = load_mechanism(ROBOTS / "humanoid.toml")
    text = mechanism_to_urdf(mech)
    root = ET.fromstring(text)
    assert root.get("name") == mech.name
    assert [l.get("name") for l in root.findall("link")] == ["base", *mech.joint_names]
    assert [j.get("name") for j in root.findall("joint")] == [f"{n}_joint"
                                                              for n in mech.joint_names]
    assert all(j.find("axis").get("xyz") == "0 0 1" for j in root.findall("joint"))
