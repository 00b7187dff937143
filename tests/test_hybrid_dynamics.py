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
from armdyn.core import hybrid_dynamics
from armdyn.core.algorithms.hybrid_dynamics import free_rates
from strategies import assert_close, fast, random_state_of_any, random_tree, seeds

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


def test_a_ball_joint_cannot_follow_the_cycloid_and_says_which():
    trunk = Link(joint=JointType.FREE, name="trunk", mass=3.0, inertia=(0.1, 0.1, 0.1, 0, 0, 0))
    ball = Link(joint=JointType.SPHERICAL, name="shoulder", mass=1.0, com=(0, 0, -0.1))
    mech = Mechanism("m", [Chain("body", [trunk]), Chain("arm", [ball], parent="trunk")])
    with pytest.raises(ArgumentError, match="'shoulder' is spherical"):
        run_inverse_dynamics(mech, mech.q_home, mech.q_home, 1.0)
