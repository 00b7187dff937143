"""The homogeneous 4x4 matrix dynamics (core.algorithms.matrix_dynamics, Legnani et al., seed 004)
against the DeNOC core and against what the paper writes in closed form.

- building blocks: the pseudo-inertia J is the second moment of a cloud of point masses;
  the pseudo-scalar product of an action and a joint matrix is the moment about the
  joint axis; the weight action carries m g and m c x g;
- Sec 4.1 (Stanford arm): the relative position matrices M_{i-1,i}, L_{1,2(0)},
  L_{2,3(0)}, H_{1,2(0)} written out as in the paper (re-derived where the OCR is
  garbled);
- W and H are the time derivatives of the pose: dM/dt = W M, d2M/dt2 = H M, by central
  differences, on random arms and trees;
- the Newton-Euler and Lagrange (trace) torques, the trace mass matrix and the energies
  of eqs. 8-9 against core's RIDIM, composite-body GIM and energy, on every serial and
  tree file in robots/ and on random arms and trees (relative 1e-9);
- the Lagrange C vector against the Euler-Lagrange equations differentiated
  numerically from the trace energies;
- Sec 5 (slider-crank): closure equations, eq. 7 (velocity) and eq. 6 (acceleration)
  with the closed-form motion; the crank torque from the 4x4 tree torques and eq. 7's
  null space against core's closed_chain_inverse_dynamics and the power balance; the
  other loop mechanisms in robots/ against core.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from armdyn.core import (closed_chain_inverse_dynamics, closed_chain_motion, energy,
                         forward_kinematics, gravity_torques, inverse_dynamics, load_mechanism,
                         loop_residual, mass_matrix)
from armdyn.core import tree_inverse_dynamics
from armdyn.core.algorithms.matrix_dynamics import (action_matrix, dh_position_matrix,
                                                    gravity_acceleration_matrix,
                                                    pseudo_scalar_product, screw_matrix, skew,
                                                    vec6)
from armdyn.core import (joint_action_matrices, lagrange_inverse_dynamics, link_matrices,
                         link_motion_matrices, loop_closure_matrices,
                         matrix_closed_chain_inverse_dynamics, matrix_energy,
                         matrix_inverse_dynamics, matrix_mass_matrix, pseudo_inertia)
from armdyn.core import JointType, Link, Robot
from strategies import (
    assert_close,
    fast,
    random_state,
    robots,
    robots_and_states,
    scale_of,
    seeds,
    tree_reach,
    trees_and_states,
)

ROBOTS = Path(__file__).resolve().parent.parent / "robots"
RTOL = 1e-9
def _files(with_loops: bool) -> list[str]:
    """The files of revolute and prismatic rows only (the 4x4 matrix method's joints;
    spherical, universal and free joints are not Legnani's), with or without loops, told
    apart by their TOML (nothing is compiled at import; a version-2 file's header
    comment names [[loop]] whether it has loops or not)."""
    import tomllib
    out = []
    for path in sorted(ROBOTS.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        rows = data.get("link", []) + [row for chain in data.get("chain", [])
                                       for row in chain.get("link", [])]
        if all(row.get("joint", "revolute") in ("revolute", "prismatic") for row in rows) \
                and bool(data.get("loop")) == with_loops:
            out.append(path.name)
    return out


OPEN_FILES = _files(with_loops=False)
LOOP_FILES = _files(with_loops=True)


def reach(model, q) -> float:
    """A length scale: DH offsets, placements and prismatic travel, m."""
    return tree_reach(model, q) if hasattr(model, "chains") else \
        1.0 + sum(abs(l.a) + abs(l.b) for l in model.links) + scale_of(q)


# ----------------------------------------------------------------------------------
# Building blocks
# ----------------------------------------------------------------------------------

@given(seed=seeds)
@fast(30)
def test_pseudo_inertia_is_the_second_moment_of_point_masses(seed):
    """J = sum m_k P_k P_k^T over a cloud of point masses, with the link's com and
    inertia tensor about the mass centre computed from the same cloud."""
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.1, 2.0, 8)
    P = rng.uniform(-0.5, 0.5, (8, 3)) + rng.uniform(-1.0, 1.0, 3)
    mass = m.sum()
    c = (m[:, None] * P).sum(axis=0) / mass
    r = P - c
    I_c = sum(mk * (rk @ rk * np.eye(3) - np.outer(rk, rk)) for mk, rk in zip(m, r))
    link = Link(mass=float(mass), com=tuple(c),
                inertia=(I_c[0, 0], I_c[1, 1], I_c[2, 2], I_c[0, 1], I_c[0, 2], I_c[1, 2]))
    Ph = np.hstack([P, np.ones((8, 1))])
    J_cloud = sum(mk * np.outer(p, p) for mk, p in zip(m, Ph))
    assert_close(pseudo_inertia(link), J_cloud, 1e-12, what="J")


@given(seed=seeds)
@fast(30)
def test_actions_and_joint_matrices_do_what_the_paper_says(seed):
    """Phi (x) L = moment about the joint axis (revolute) or force along it (prismatic);
    L P = velocity of the point P per unit rate; Skew(H_g J) = weight m g with moment
    m c x g about the origin."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    t, c, f, P = rng.normal(size=(4, 3))
    Phi = action_matrix(c, f)
    L_r, L_p = screw_matrix(u, t), screw_matrix(u, prismatic=True)
    assert pseudo_scalar_product(Phi, L_r) == pytest.approx(u @ (c - np.cross(t, f)), abs=1e-12)
    assert pseudo_scalar_product(Phi, L_p) == pytest.approx(u @ f, abs=1e-12)
    assert_close((L_r @ np.append(P, 1.0))[:3], np.cross(u, P - t), 1e-12)
    assert_close((L_p @ np.append(P, 1.0))[:3], u, 1e-12)
    assert_close(vec6(L_r), np.concatenate([u, np.cross(t, u)]), 1e-12, what="vec6")
    link = Link(mass=2.5, com=tuple(rng.normal(size=3)), inertia=(0.3, 0.2, 0.25, 0, 0, 0))
    g = rng.normal(size=3)
    weight = skew(gravity_acceleration_matrix(g) @ pseudo_inertia(link))
    c_w = np.array(link.com)
    assert_close(weight, action_matrix(2.5 * np.cross(c_w, g), 2.5 * g), 1e-12)


def C(x):
    return math.cos(x)


def S(x):
    return math.sin(x)


def test_stanford_arm_matrices_of_sec_4_1():
    """The paper's Stanford arm (Sec 4.1, Fig. 2): alpha = -90, 90, 0, -90, 90, 0 deg,
    offsets d2, d3 (prismatic), d4. The relative position matrices as printed; L_{1,2(0)},
    L_{2,3(0)} and H_{1,2(0)} as re-derived from the printed M_{0,1}, M_{1,2} (the OCR of
    L_{2,3(0)} reads 'C1 S1' for C1 S2)."""
    d2, d4 = 0.15, 0.3
    deg = math.pi / 180
    rows = [(-90, 0.0, JointType.REVOLUTE), (90, d2, JointType.REVOLUTE),
            (0, 0.0, JointType.PRISMATIC), (-90, d4, JointType.REVOLUTE),
            (90, 0.0, JointType.REVOLUTE), (0, 0.0, JointType.REVOLUTE)]
    robot = Robot(name="Stanford (Legnani)", links=tuple(
        Link(joint=j, alpha=a * deg, b=b) for a, b, j in rows))
    t1, t2, d3, t4, t5, t6 = 0.3, -1.1, 0.42, 0.7, 2.0, -0.4
    q = np.array([t1, t2, d3, t4, t5, t6])
    paper = [
        [[C(t1), 0, -S(t1), 0], [S(t1), 0, C(t1), 0], [0, -1, 0, 0], [0, 0, 0, 1]],
        [[C(t2), 0, S(t2), 0], [S(t2), 0, -C(t2), 0], [0, 1, 0, d2], [0, 0, 0, 1]],
        [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, d3], [0, 0, 0, 1]],
        [[C(t4), 0, -S(t4), 0], [S(t4), 0, C(t4), 0], [0, -1, 0, d4], [0, 0, 0, 1]],
        [[C(t5), 0, S(t5), 0], [S(t5), 0, -C(t5), 0], [0, 1, 0, 0], [0, 0, 0, 1]],
        [[C(t6), -S(t6), 0, 0], [S(t6), C(t6), 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
    ]
    for i, link in enumerate(robot.links):
        assert_close(dh_position_matrix(link, q[i]), np.array(paper[i], float), 1e-15,
                     what=f"M_{i},{i + 1}")
    qd = np.array([0.5, -1.2, 0.3, 0.8, -0.6, 1.5])
    qdd = np.array([1.0, 0.4, -2.0, 0.3, 0.9, -1.1])
    km = link_matrices(robot, q, qd, qdd)
    L12 = np.array([[0, 0, C(t1), 0], [0, 0, S(t1), 0], [-C(t1), -S(t1), 0, 0], [0, 0, 0, 0]])
    L23 = np.zeros((4, 4))
    L23[:3, 3] = [C(t1) * S(t2), S(t1) * S(t2), C(t2)]
    assert_close(km.L[1], L12, 1e-15, what="L_1,2(0)")
    assert_close(km.L[2], L23, 1e-15, what="L_2,3(0)")
    # W_{0,1} = L_{0,1} q1_dot; H_{0,1} = [[-q^2, -q_dd], [q_dd, -q^2]] (frames 0 and 1 agree)
    W01 = np.zeros((4, 4))
    W01[:2, :2] = [[0, -qd[0]], [qd[0], 0]]
    H01 = np.zeros((4, 4))
    H01[:2, :2] = [[-qd[0] ** 2, -qdd[0]], [qdd[0], -qd[0] ** 2]]
    assert_close(km.W[0], W01, 1e-15, what="W_0,1")
    assert_close(km.H[0], H01, 1e-15, what="H_0,1")
    # H_{1,2(0)} = L q2_dd + L^2 q2_dot^2, L^2 = [[-C1^2, -S1 C1, 0], [-S1 C1, -S1^2, 0], [0, 0, -1]]
    L12sq = np.zeros((4, 4))
    L12sq[:3, :3] = [[-C(t1) ** 2, -S(t1) * C(t1), 0], [-S(t1) * C(t1), -S(t1) ** 2, 0],
                     [0, 0, -1]]
    H12 = L12 * qdd[1] + L12sq * qd[1] ** 2
    W12 = L12 * qd[1]
    assert_close(km.W[1], W01 + W12, 1e-15, what="W_0,2")
    assert_close(km.H[1], H01 + H12 + 2 * W01 @ W12, 1e-14, what="H_0,2 (eq. 11)")
    # joint 3 is prismatic: L_{2,3(0)}^2 = 0, so H_{2,3(0)} = L_{2,3(0)} q3_dd
    assert_close(km.L[2] @ km.L[2], np.zeros((4, 4)), 1e-15)


# ----------------------------------------------------------------------------------
# W and H are derivatives of the pose
# ----------------------------------------------------------------------------------

def assert_W_H_are_pose_derivatives(model, q, qd, qdd):
    """Along q(t) = q + t qd + t^2/2 qdd: dM/dt = W M and d2M/dt2 = H M (central
    differences with a step scaled to the rates)."""
    km = link_matrices(model, q, qd, qdd)
    assert_close(km.M, forward_kinematics(model, q).frames[1:], 1e-12,
                 reach(model, q), "M_{0,i} vs core's frames")
    rate = 1.0 + scale_of(qd) + math.sqrt(scale_of(qdd))
    h = 1e-3 / rate

    def pose(t):
        return link_matrices(model, q + t * qd + 0.5 * t * t * qdd).M

    Mp, Mm, M0 = pose(h), pose(-h), km.M
    Md = (Mp - Mm) / (2 * h)
    Mdd = (Mp - 2 * M0 + Mm) / (h * h)
    length = reach(model, q)
    assert_close(km.W @ M0, Md, 1e-5, rate * length, "W M vs dM/dt")
    assert_close(km.H @ M0, Mdd, 1e-4, rate ** 2 * length, "H M vs d2M/dt2")
    # H = dW/dt + W^2 (paper part 1): dW/dt by central differences of W along the motion
    Wp = link_matrices(model, q + h * qd + 0.5 * h * h * qdd, qd + h * qdd).W
    Wm = link_matrices(model, q - h * qd + 0.5 * h * h * qdd, qd - h * qdd).W
    assert_close(km.H, (Wp - Wm) / (2 * h) + km.W @ km.W, 1e-5, rate ** 2 * length,
                 "H vs dW/dt + W^2")


@given(case=robots_and_states(max_links=10))
@fast(25)
def test_W_and_H_are_the_pose_derivatives_on_random_arms(case):
    robot, q, qd, qdd = case
    assert_W_H_are_pose_derivatives(robot, q, qd, qdd)


@given(case=trees_and_states(max_joints=10))
@fast(15)
def test_W_and_H_are_the_pose_derivatives_on_random_trees(case):
    mech, q, qd, qdd = case
    assert_W_H_are_pose_derivatives(mech, q, qd, qdd)


# ----------------------------------------------------------------------------------
# Newton-Euler and Lagrange against DeNOC
# ----------------------------------------------------------------------------------

def assert_matches_denoc(model, q, qd, qdd, f_ext=None):
    tau = inverse_dynamics(model, q, qd, qdd, f_ext=f_ext)
    scale = scale_of(tau, gravity_torques(model, q))
    assert_close(matrix_inverse_dynamics(model, q, qd, qdd, f_ext=f_ext), tau, RTOL, scale,
                 "4x4 Newton-Euler vs RIDIM")
    tau_free = inverse_dynamics(model, q, qd, qdd)
    assert_close(lagrange_inverse_dynamics(model, q, qd, qdd), tau_free, RTOL,
                 scale_of(tau_free, gravity_torques(model, q)), "Lagrange (trace) vs RIDIM")
    g0 = tau_free - gravity_torques(model, q)
    assert_close(matrix_inverse_dynamics(model, q, qd, qdd, gravity=(0.0, 0.0, 0.0)), g0, RTOL,
                 scale_of(tau_free), "4x4 Newton-Euler without gravity")
    GIM = mass_matrix(model, q)
    assert_close(matrix_mass_matrix(model, q), GIM, RTOL, what="trace mass matrix vs GIM")
    E = energy(model, q, qd)
    assert_close(matrix_energy(model, q, qd), E, RTOL,
                 scale_of(E) + model.total_mass * float(np.linalg.norm(model.gravity))
                 * reach(model, q), "eqs. 8-9 vs energy")


@pytest.mark.parametrize("name", OPEN_FILES)
def test_newton_euler_and_lagrange_match_denoc_on_the_robot_files(name):
    model = load_mechanism(ROBOTS / name)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd, qdd = random_state(rng, model)
        assert_matches_denoc(model, q, qd, qdd, f_ext=rng.uniform(-20, 20, (model.n, 6)))


@given(case=robots_and_states(max_links=12), seed=seeds, wrench=st.booleans())
@fast(40)
def test_newton_euler_and_lagrange_match_denoc_on_random_arms(case, seed, wrench):
    robot, q, qd, qdd = case
    f = np.random.default_rng(seed).uniform(-20, 20, 6) if wrench else None
    assert_matches_denoc(robot, q, qd, qdd, f_ext=f)


@given(case=trees_and_states(max_joints=12), seed=seeds)
@fast(25)
def test_newton_euler_and_lagrange_match_denoc_on_random_trees(case, seed):
    mech, q, qd, qdd = case
    f = np.random.default_rng(seed).uniform(-20, 20, (mech.n, 6))
    assert_matches_denoc(mech, q, qd, qdd, f_ext=f)


@given(robot=robots(max_links=6), seed=seeds)
@fast(15)
def test_lagrange_C_is_the_euler_lagrange_derivative_of_the_trace_energies(robot, seed):
    """C(q, qd) = d/dt(dT/dqd)|_{qdd=0} - dT/dq + dV/dq with T = 1/2 qd^T M(q) qd from the
    trace mass matrix and V from eq. 9, differentiated by central differences."""
    rng = np.random.default_rng(seed)
    q, qd, _ = random_state(rng, robot)
    n, h = robot.n, 1e-6
    dM = np.empty((n, n, n))  # dM[k] = dM/dq_k
    dV = np.empty(n)
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        dM[k] = (matrix_mass_matrix(robot, q + e) - matrix_mass_matrix(robot, q - e)) / (2 * h)
        dV[k] = (matrix_energy(robot, q + e, qd)[1] - matrix_energy(robot, q - e, qd)[1]) / (2 * h)
    C_el = np.einsum("kij,k,j->i", dM, qd, qd) - 0.5 * np.einsum("kij,i,j->k", dM, qd, qd) + dV
    C = lagrange_inverse_dynamics(robot, q, qd, np.zeros(n))
    # round-off of the differences is relative to the terms differenced, not to C
    scale = scale_of(C, dV) + scale_of(matrix_mass_matrix(robot, q)) * (1 + scale_of(qd)) ** 2
    assert_close(C, C_el, 1e-6, scale, "C vs Euler-Lagrange")


def test_joint_actions_carry_the_whole_load_at_the_base():
    """Psi of the first joint of a serial arm holds still: its force column is the total
    weight, m g summed, and its moment the total m c x g (static pose)."""
    robot = load_mechanism(ROBOTS / "puma560_saha.toml")
    q = robot.q_home + 0.3
    Psi = joint_action_matrices(robot, q, np.zeros(6), np.zeros(6))
    g = np.array(robot.gravity)
    com = forward_kinematics(robot, q).com
    m = np.array([l.mass for l in robot.links])
    expected = action_matrix(np.cross(m @ com, g), m.sum() * g)
    assert_close(Psi[0], expected, 1e-12, what="Psi_1")


# ----------------------------------------------------------------------------------
# The slider-crank of Sec 5
# ----------------------------------------------------------------------------------

def slider_crank_closed_form(l1, l2, a1, a1d, a1dd):
    """The paper's closure l1 s1 + l2 s12 = 0, l1 c1 + l2 c12 = a (Sec 5), solved with
    the slider on +x: phi = alpha1 + alpha2 and a, with their first and second time
    derivatives."""
    s1, c1 = math.sin(a1), math.cos(a1)
    phi = -math.asin(l1 * s1 / l2)
    sp, cp = math.sin(phi), math.cos(phi)
    a = l1 * c1 + l2 * cp
    phid = -l1 * c1 * a1d / (l2 * cp)
    ad = -l1 * s1 * a1d - l2 * sp * phid
    phidd = (-l1 * (c1 * a1dd - s1 * a1d ** 2) + l2 * sp * phid ** 2) / (l2 * cp)
    add = -l1 * (s1 * a1dd + c1 * a1d ** 2) - l2 * (sp * phidd + cp * phid ** 2)
    return (phi, a), (phid, ad), (phidd, add)


def slider_crank_states(mech, samples):
    """(q, qd, qdd, alpha3, alpha3_d, alpha3_dd) of slider_crank.toml for crank states
    (alpha1, rate, acceleration); q = (alpha1, alpha2, a)."""
    l1, l2 = mech.links[0].a, mech.links[1].a
    for a1, a1d, a1dd in samples:
        (phi, a), (phid, ad), (phidd, add) = slider_crank_closed_form(l1, l2, a1, a1d, a1dd)
        yield (np.array([a1, phi - a1, a]), np.array([a1d, phid - a1d, ad]),
               np.array([a1dd, phidd - a1dd, add]), -phi, -phid, -phidd)


SLIDER_SAMPLES = [(0.3, 2.0, -1.0), (1.2, -3.0, 4.0), (2.5, 6.0, 0.0), (-2.0, 1.0, 10.0),
                  (math.pi, 0.5, -0.5), (4.4, -7.0, 3.0)]


def test_slider_crank_closure_equations_of_sec_5():
    """The core's slider-crank at the paper's closed-form poses: the paper's loop product
    M01 M12 M23 M34 = [1] (eq. 4, with alpha3 = -(alpha1 + alpha2)), core's loop residual
    zero, the pin at the slider's origin in link_matrices; eq. 7 A qd = 0 and eq. 6
    A qdd = b with the closed-form rates (the cut joint's rate is alpha3_dot); A has rank
    3 (Sec 5: three independent equations in four unknowns, one degree of freedom)."""
    mech = load_mechanism(ROBOTS / "slider_crank.toml")
    l1, l2 = mech.links[0].a, mech.links[1].a

    def rz(x, l=0.0):
        return np.array([[C(x), -S(x), 0, l * C(x)], [S(x), C(x), 0, l * S(x)],
                         [0, 0, 1, 0], [0, 0, 0, 1]])

    for q, qd, qdd, a3, a3d, a3dd in slider_crank_states(mech, SLIDER_SAMPLES):
        a1, a2, a = q
        M34 = np.eye(4)
        M34[0, 3] = -a
        assert_close(rz(a1, l1) @ rz(a2, l2) @ rz(a3) @ M34, np.eye(4), 1e-14, what="eq. 4")
        assert_close(loop_residual(mech, q), np.zeros(2), 1e-12, l2, "core loop residual")
        km = link_matrices(mech, q, qd, qdd)
        assert_close(km.M[1, :3, 3], km.M[2, :3, 3], 1e-14, l2, "pin on the slider")
        lc = loop_closure_matrices(mech, q, qd)
        assert lc.A.shape == (6, 4)
        assert np.linalg.matrix_rank(lc.A, tol=1e-9) == 3
        speed = scale_of(qd) * (1 + l1 + l2)
        assert_close(lc.A @ np.append(qd, a3d), np.zeros(6), 1e-13, speed, "eq. 7")
        assert_close(lc.s_dot, [a3d], 1e-12, scale_of(qd), "cut-joint rate = alpha3_dot")
        accel = (scale_of(qdd) + scale_of(qd) ** 2) * (1 + l1 + l2)
        assert_close(lc.A @ np.append(qdd, a3dd), lc.b, 1e-12, accel, "eq. 6")


def test_slider_crank_crank_torque_matches_core_and_the_power_balance():
    """Crank torque from the 4x4 Newton-Euler tree torques projected on eq. 7's null space
    against core's closed-chain inverse dynamics (Saha's subsystem recursion) and against
    the power balance tau alpha1_dot = dE/dt with E from eqs. 8-9."""
    mech = load_mechanism(ROBOTS / "slider_crank.toml")
    for q, qd, qdd, *_ in slider_crank_states(mech, SLIDER_SAMPLES):
        tau = matrix_closed_chain_inverse_dynamics(mech, q, qd, qdd)
        core = closed_chain_inverse_dynamics(mech, q, qd, qdd).tau
        scale = scale_of(core, matrix_inverse_dynamics(mech, q, qd, qdd))
        assert_close(tau, core, RTOL, scale, "crank torque vs core")
        assert tau[1] == tau[2] == 0.0
        h = 1e-6
        dE = (matrix_energy(mech, q + h * qd, qd + h * qdd)[2]
              - matrix_energy(mech, q - h * qd, qd - h * qdd)[2]) / (2 * h)
        assert tau[0] * qd[0] == pytest.approx(dE, rel=1e-6, abs=1e-8 * scale * abs(qd[0]))


@pytest.mark.parametrize("name", LOOP_FILES)
def test_closed_chain_actuator_forces_match_core_on_the_mechanism_files(name):
    """Every loop mechanism in robots/: along a motion of the actuated joints (core's
    closed_chain_motion gives the consistent tree states), the 4x4 loop equations hold
    (eq. 7 with the cut rates, eq. 6 up to the cut accelerations) and the actuator forces
    R^T tau_tree agree with core's closed-chain inverse dynamics."""
    mech = load_mechanism(ROBOTS / name)
    act = list(mech.actuated)
    t = np.linspace(0.0, 0.4, 3)[:, None]
    z = mech.q_home[act] + 0.2 * np.sin(3 * t + np.arange(len(act)))
    zd = 0.6 * np.cos(3 * t + np.arange(len(act)))
    zdd = -1.8 * np.sin(3 * t + np.arange(len(act))) + 0.5
    Q, Qd, Qdd = closed_chain_motion(mech, mech.q_home, z, zd, zdd)
    for q, qd, qdd in zip(Q, Qd, Qdd):
        lc = loop_closure_matrices(mech, q, qd)
        n = mech.n
        length = reach(mech, q)
        assert_close(lc.A @ np.append(qd, lc.s_dot), np.zeros(lc.A.shape[0]), 1e-9,
                     scale_of(qd) * length, "eq. 7")
        A_cut = lc.A[:, n:]
        r = lc.b - lc.A[:, :n] @ qdd  # must be A_cut s_dd for some cut accelerations
        s_dd = np.linalg.lstsq(A_cut, r, rcond=None)[0]
        assert_close(A_cut @ s_dd, r, 1e-8, (scale_of(qdd) + scale_of(qd) ** 2) * length,
                     "eq. 6")
        tau = matrix_closed_chain_inverse_dynamics(mech, q, qd, qdd)
        core = closed_chain_inverse_dynamics(mech, q, qd, qdd).tau
        scale = scale_of(core, tree_inverse_dynamics(mech, q, qd, qdd))
        assert_close(tau, core, RTOL, scale, "actuator forces vs core")


# ----------------------------------------------------------------------------------
# Inspect: W and H of a chosen link
# ----------------------------------------------------------------------------------

def test_link_motion_matrices_for_inspect():
    """frame "base" gives W_{0,i}, H_{0,i}; frame "link" gives, in link i's axes, the
    angular velocity in the skew block and the velocity and acceleration of the link
    frame's origin in the last column (checked by differences of the origin)."""
    robot = load_mechanism(ROBOTS / "stanford_saha2009.toml")
    rng = np.random.default_rng(7)
    q, qd, qdd = random_state(rng, robot)
    km = link_matrices(robot, q, qd, qdd)
    for i in range(robot.n):
        W, H = link_motion_matrices(robot, q, qd, qdd, i)
        np.testing.assert_array_equal(W, km.W[i])
        np.testing.assert_array_equal(H, km.H[i])
        W_i, H_i = link_motion_matrices(robot, q, qd, qdd, i, frame="link")
        R = km.M[i, :3, :3]
        h = 1e-4

        def origin(t):
            return link_matrices(robot, q + t * qd + 0.5 * t * t * qdd).M[i, :3, 3]

        v = (origin(h) - origin(-h)) / (2 * h)
        acc = (origin(h) - 2 * origin(0.0) + origin(-h)) / (h * h)
        assert_close(W_i[:3, 3], R.T @ v, 1e-6, scale_of(v) + 1, "origin velocity, link axes")
        assert_close(H_i[:3, 3], R.T @ acc, 1e-4, scale_of(acc) + 1, "origin accel., link axes")
        assert_close(W_i[:3, :3], R.T @ km.W[i, :3, :3] @ R, 1e-12, scale_of(qd))
    with pytest.raises(IndexError):
        link_motion_matrices(robot, q, qd, qdd, robot.n)
    with pytest.raises(ValueError):
        link_motion_matrices(robot, q, qd, qdd, 0, frame="tool")


def test_joints_of_several_degrees_of_freedom_are_refused_by_name():
    """The 4x4 formulation of seed 003 is written for revolute and prismatic joints: a
    free or spherical joint is named, not met by a shape error deep inside."""
    from armdyn.core import ArgumentError, load_mechanism
    space_robot = load_mechanism(Path(__file__).resolve().parents[1] / "robots" /
                                 "space_robot.toml")
    free = space_robot.joint_names[0]
    with pytest.raises(ArgumentError, match=f"joint '{free}' is free"):
        link_matrices(space_robot, space_robot.q_home)
    with pytest.raises(ArgumentError, match="4x4 matrix formulation"):
        joint_action_matrices(space_robot, space_robot.q_home, np.zeros(space_robot.nv),
                              np.zeros(space_robot.nv))
