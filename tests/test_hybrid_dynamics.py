"""Hybrid dynamics (joint accelerations given, a floating base free) and the inverse-
dynamics run of a floating system, checked against independent methods: the full forward
dynamics given the torques, the conservation of momentum, the mass centre's parabola."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

from armdyn.core import (ArgumentError, Chain, JointType, Link, Mechanism, center_of_mass,
                         cycloidal_trajectory, forward_dynamics, load_mechanism,
                         run_inverse_dynamics)
from armdyn.core import (Quintic, constrained_forward_dynamics, constrained_hybrid_dynamics,
                         hybrid_dynamics, loop_acceleration_term, loop_jacobian,
                         velocity_transformation)
from armdyn.core.algorithms.hybrid_dynamics import free_rates
from armdyn.core.sim.motions import cycloidal_pose
from scipy.spatial.transform import Rotation
from strategies import (assert_close, fast, floating_four_bar, random_state_of_any, random_tree,
                        seeds)

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
floating_trees = random_tree(min_joints=1, max_joints=14, joints="several", floating=True)


@fast(40)
@given(floating_trees, seeds)
def test_the_torques_of_hybrid_dynamics_give_its_accelerations_back_by_forward_dynamics(
        mech, seed):
    rng = np.random.default_rng(seed)
    q, qd, qdd = random_state_of_any(rng, mech)
    result = hybrid_dynamics(mech, q, qd, qdd)
    U = free_rates(mech)
    D = [i for i in range(mech.nv) if i not in U]
    assert U and np.all(result.tau[U] == 0.0)
    assert np.array_equal(result.qdd[D], qdd[D])  # the joints move as given
    # independent: the articulated-body forward dynamics with those torques, base free
    assert_close(forward_dynamics(mech, q, qd, result.tau), result.qdd, 1e-7,
                 what="forward dynamics of the hybrid torques")


def test_without_free_joints_it_is_inverse_dynamics():
    arm = Mechanism("arm", [Chain("arm", [Link(a=0.5, mass=2.0, com=(-0.25, 0, 0), name="1"),
                                          Link(a=0.4, mass=1.0, com=(-0.2, 0, 0), name="2")])])
    q, qd, qdd = np.array([0.3, -0.2]), np.array([1.0, 0.5]), np.array([0.2, -1.0])
    result = hybrid_dynamics(arm, q, qd, qdd)
    assert np.array_equal(result.qdd, qdd)
    assert_close(forward_dynamics(arm, q, qd, result.tau), qdd, 1e-9)


def test_the_space_robot_driven_along_the_cycloid_turns_its_base_and_keeps_zero_momentum():
    robot = load_mechanism(ROBOTS / "space_robot.toml")
    q0 = robot.q_home
    qT = q0.copy()
    D = robot.values_of(range(1, robot.n))
    qT[D] += 0.6
    run = run_inverse_dynamics(robot, q0, qT, 2.0, dt_out=0.02)
    assert run.q.shape == (101, robot.nq) and run.tau.shape == (101, robot.nv)
    # the joints follow the cycloid exactly; the base is pushed, not driven
    q, _, _ = cycloidal_trajectory(q0[D], qT[D], 2.0, run.t)
    assert np.allclose(run.q[:, D], q, atol=1e-12)
    assert np.all(run.tau[:, :6] == 0.0) and np.abs(run.tau[:, 6:]).max() > 0.1
    # independent: in zero gravity, from rest, momentum stays zero...
    assert np.abs(run.linear_momentum).max() < 1e-8
    assert np.abs(run.angular_momentum).max() < 1e-8
    # ...while the base turns (the reaction to the arm's swing) and the mass centre stays
    turn = 2 * np.degrees(np.arccos(min(1.0, abs(float(run.q[-1, 3:7] @ q0[3:7])))))
    assert turn > 1.0
    assert np.allclose(run.center_of_mass, center_of_mass(robot, q0), atol=1e-8)
    assert np.allclose(np.linalg.norm(run.q[:, 3:7], axis=1), 1.0, atol=1e-12)
    # each sample: forward dynamics with its torques gives its accelerations
    for i in (0, 37, 100):
        assert_close(forward_dynamics(robot, run.q[i], run.qd[i], run.tau[i]), run.qdd[i],
                     1e-7, what=f"sample {i}")


def test_the_human_moving_its_joints_in_flight_keeps_its_mass_centre_on_the_parabola():
    human = load_mechanism(ROBOTS / "human_body_jalon.toml")
    q0 = human.q_home
    qT = q0.copy()
    qT[human.values_of(range(1, human.n))] += 0.2
    run = run_inverse_dynamics(human, q0, qT, 0.5, dt_out=0.05)
    g = np.asarray(human.gravity)
    expected = center_of_mass(human, q0) + 0.5 * np.outer(run.t ** 2, g)
    assert np.allclose(run.center_of_mass, expected, atol=1e-8)
    assert np.abs(run.angular_momentum).max() < 1e-8


def _ball_pendulum(free: bool) -> Mechanism:
    """A trunk (floating, or none) carrying an arm on a ball joint and an elbow."""
    ball = Link(joint=JointType.SPHERICAL, name="shoulder", mass=1.0, com=(0.05, 0.02, -0.2),
                inertia=(0.02, 0.03, 0.01, 0, 0, 0), xyz=(0, 0, 0.1) if free else (0, 0, 0))
    elbow = Link(joint=JointType.REVOLUTE, name="elbow", a=0.3, mass=0.5, com=(-0.15, 0, 0),
                 inertia=(0.001, 0.01, 0.01, 0, 0, 0))
    if not free:
        return Mechanism("ball", [Chain("arm", [ball, elbow])])
    trunk = Link(joint=JointType.FREE, name="trunk", mass=3.0, inertia=(0.1, 0.2, 0.3, 0, 0, 0))
    return Mechanism("m", [Chain("body", [trunk]), Chain("arm", [ball, elbow], parent="trunk")],
                     gravity=(0.0, 0.0, 0.0))


def _quat(rotvec) -> np.ndarray:
    return Rotation.from_rotvec(rotvec).as_quat()  # scalar last


def test_a_ball_joint_follows_the_cycloid_about_a_fixed_axis():
    mech = _ball_pendulum(free=False)
    q0, qT = mech.q_home.copy(), mech.q_home.copy()
    q0[:4], qT[:4] = _quat([0.3, -0.2, 0.5]), _quat([-0.4, 1.1, 0.2])
    q0[4], qT[4] = 0.2, -0.5
    T = 1.5
    t = np.linspace(0.0, T, 61)
    q, qd, qdd = cycloidal_pose(mech, q0, qT, T, t)
    R0, RT = Rotation.from_quat(q0[:4]), Rotation.from_quat(qT[:4])
    # closed form: R(t) = R0 Rot(u, phi s(t)), u, phi those of R0^T RT, s the cycloid's law
    turn = (R0.inv() * RT).as_rotvec()
    s = (t / T) - np.sin(2 * np.pi * t / T) / (2 * np.pi)
    expected = (R0 * Rotation.from_rotvec(np.outer(s, turn))).as_matrix()
    assert np.abs(Rotation.from_quat(q[:, :4]).as_matrix() - expected).max() < 1e-12
    assert np.allclose(q[:, 4], q0[4] + (qT[4] - q0[4]) * s, atol=1e-12)
    # rates: the body-frame angular velocity, R^T R' by central differences of the pose
    h = 1e-6
    for i in (7, 25, 52):
        qa, _, _ = cycloidal_pose(mech, q0, qT, T, t[i] + np.array([-h, h]))
        Ra, Rb = Rotation.from_quat(qa[0, :4]), Rotation.from_quat(qa[1, :4])
        w = (Ra.inv() * Rb).as_rotvec() / (2 * h)
        assert_close(qd[i, :3], w, 1e-6, what="the ball joint's rates")
        _, qda, _ = cycloidal_pose(mech, q0, qT, T, t[i] + np.array([-h, h]))
        assert_close(qdd[i], (qda[1] - qda[0]) / (2 * h), 1e-6, what="the accelerations")
    # inverse then forward dynamics gives back the motion
    run = run_inverse_dynamics(mech, q0, qT, T, dt_out=0.05)
    assert_close(forward_dynamics(mech, run.q, run.qd, run.tau), run.qdd, 1e-8,
                 what="forward dynamics of the torques along the ball joint's cycloid")


def test_a_ball_joint_on_a_floating_trunk_turns_it_with_zero_momentum():
    mech = _ball_pendulum(free=True)
    q0, qT = mech.q_home.copy(), mech.q_home.copy()
    ball = mech.q_slice("shoulder")
    qT[ball] = _quat([0.5, 0.8, -0.3])
    run = run_inverse_dynamics(mech, q0, qT, 1.0, dt_out=0.05)
    assert np.abs(run.q[-1, ball] - qT[ball]).max() < 1e-12   # the ball ends at q_end
    assert np.abs(run.q[-1, 3:7] - q0[3:7]).max() > 1e-2      # the trunk has turned
    assert np.abs(run.linear_momentum).max() < 1e-9
    assert np.abs(run.angular_momentum).max() < 1e-8
    with pytest.raises(ArgumentError, match="'shoulder' is spherical"):
        run_inverse_dynamics(mech, Quintic(q0, qT, 1.0))


# ----- a floating mechanism with loops: driving constraints in the hybrid problem -----

def _closed_state(mech, seed):
    rng = np.random.default_rng(seed)
    q = mech.q_home
    vt = velocity_transformation(mech, q)
    return q, vt.R @ rng.normal(size=vt.R.shape[1]), rng.normal(size=mech.nv)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hybrid_dynamics_with_loops_gives_the_constrained_forward_dynamics_back(seed):
    mech = floating_four_bar()
    q, qd, qdd = _closed_state(mech, seed)
    crank = mech.rates_of([mech.joint_names.index("crank")])
    result = constrained_hybrid_dynamics(mech, q, qd, qdd, driven=mech.actuated)
    assert np.array_equal(result.qdd[crank], qdd[crank])       # driven as given
    others = [i for i in range(mech.nv) if i not in crank]
    assert np.all(result.tau[others] == 0.0)
    J, gamma = loop_jacobian(mech, q), loop_acceleration_term(mech, q, qd)
    assert np.abs(J @ result.qdd + gamma).max() < 1e-9          # the loop stays closed
    # second method: the UDU^T Lagrange-multiplier forward dynamics under those torques
    assert_close(constrained_forward_dynamics(mech, q, qd, result.tau), result.qdd, 1e-8,
                 what="constrained forward dynamics of the hybrid torques")
    # no driven joint: a free fall
    fall = constrained_hybrid_dynamics(mech, q, qd, qdd, driven=[])
    assert_close(fall.qdd, constrained_forward_dynamics(mech, q, qd, np.zeros(mech.nv)), 1e-8)
    assert np.all(fall.tau == 0.0)


def test_hybrid_dynamics_with_loops_of_a_tree_is_hybrid_dynamics():
    robot = load_mechanism(ROBOTS / "space_robot.toml")
    q, qd, qdd = random_state_of_any(np.random.default_rng(3), robot)
    D = [j for j in range(robot.n) if robot.joint_types[j] is not JointType.FREE]
    a, b = constrained_hybrid_dynamics(robot, q, qd, qdd, D), hybrid_dynamics(robot, q, qd, qdd)
    assert_close(a.qdd, b.qdd, 1e-9)
    assert_close(a.tau, b.tau, 1e-9)


def test_a_floating_four_bar_driven_at_its_crank_keeps_its_loop_and_zero_momentum():
    mech = floating_four_bar(gravity=(0.0, 0.0, 0.0))
    crank = mech.joint_names.index("crank")
    q0 = mech.q_home
    qT = q0.copy()
    qT[mech.values_of([crank])] += 0.8
    run = run_inverse_dynamics(mech, q0, qT, 1.0, dt_out=0.02)
    # the crank follows the cycloid; the chassis and the loop's other joints follow it
    c = mech.values_of([crank])
    q, _, _ = cycloidal_trajectory(q0[c], qT[c], 1.0, run.t)
    assert np.allclose(run.q[:, c], q, atol=1e-12)
    assert run.loop_residual.max() < 1e-11
    assert np.abs(run.q[-1, :7] - q0[:7]).max() > 1e-3         # the chassis has moved
    # nothing outside pushes: the momentum, zero at rest, stays zero
    assert np.abs(run.linear_momentum).max() < 1e-7
    assert np.abs(run.angular_momentum).max() < 1e-7
    assert np.abs(run.tau[:, mech.rates_of([crank])]).max() > 1e-3
    assert np.all(np.delete(run.tau, mech.rates_of([crank]), axis=1) == 0.0)


def test_the_trucks_dependent_loop_rows_keep_its_accelerations_well_posed_off_the_loops():
    """The truck's planar leaves make 4 of its 44 loop rows dependent on the loops only:
    a state off them (as a run's between two projections) must not turn those rows into
    constraints the driven motion contradicts (counted as independent, 1e-6 rad off they
    were refused as a singular configuration; the solve keeps the loops' rank, nv - dof):
    the accelerations move with the state, by ~2e-5 of themselves there."""
    truck = load_mechanism(ROBOTS / "truck_jalon.toml")
    q, qd, qdd = _closed_state(truck, 4)
    on = constrained_hybrid_dynamics(truck, q, qd, qdd, driven=truck.actuated)
    # second method: the constrained forward dynamics under those torques
    assert_close(constrained_forward_dynamics(truck, q, qd, on.tau), on.qdd, 1e-7,
                 what="constrained forward dynamics of the truck's hybrid torques")
    J, gamma = loop_jacobian(truck, q), loop_acceleration_term(truck, q, qd)
    assert np.abs(J @ on.qdd + gamma).max() < 1e-7 * max(1.0, np.abs(gamma).max())
    rng = np.random.default_rng(5)
    revolute = [j for j in range(truck.n) if truck.joint_types[j] is JointType.REVOLUTE
                and j not in truck.actuated]
    q_off = q.copy()
    q_off[truck.values_of(revolute)] += 1e-6 * rng.normal(size=len(revolute))
    off = constrained_hybrid_dynamics(truck, q_off, qd, qdd, driven=truck.actuated)
    scale = np.abs(on.qdd).max()
    assert np.abs(off.qdd - on.qdd).max() < 1e-4 * scale
    assert np.abs(off.tau - on.tau).max() < 1e-4 * np.abs(on.tau).max()



def test_the_trucks_steering_run_is_smooth_through_its_projections():
    """The run projects its state back onto the loops at every sample: over the loops'
    rank (`least_norm_solution`), not a pseudo-inverse at round-off's cutoff, which
    divided by the truck's dependent rows' small singular values off the loops and
    jolted the pitman arm's torque at projections (a 7 N m step at 0.39 s; its second
    differences up to 5.4 N m, median 0.51, against 1.1 and 0.14 now)."""
    from armdyn.core.sim.motions import target_joints

    truck = load_mechanism(ROBOTS / "truck_jalon.toml")
    q0 = truck.q_home.copy()
    qT = q0.copy()
    j = target_joints(truck)[0]
    qT[truck.q_slice(truck.joint_names[j])] += np.radians(-20.0)
    run = run_inverse_dynamics(truck, q0, qT, 1.0, dt_out=0.01)
    assert run.loop_residual.max() < 1e-11
    tau = run.tau[:, truck.rates_of([j])[0]]
    d2 = np.abs(np.diff(tau, 2))[19:]  # after the first tyre bounce (t >= 0.2 s)
    assert d2.max() < 2.5 and np.median(d2) < 0.3
