"""Inverse kinematics of the tool (core.algorithms.inverse_kinematics) against forward kinematics.

The Jacobian is checked column by column against central differences of
`forward_kinematics` (origin and orientation of the last link's frame) on the bundled
arms and on random serial arms and trees; the solver against targets made by forward
kinematics of random poses, against targets out of reach, joint limits, and a
singular pose.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

from armdyn.core import Robot, forward_kinematics, load_robot
from armdyn.core.algorithms.inverse_kinematics import (damped_least_squares_step,
                                                       rotation_error, wrap_revolute)
from armdyn.core import solve_position, tool_jacobian
from armdyn.core.algorithms.inverse_kinematics import tool_jacobian_derivative
from strategies import fast, random_tree, robots, seeds

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
BUNDLED = ["puma560_saha", "stanford_saha2009", "stanford_saha1999", "scara", "ur5e",
           "two_link_planar", "planar3_saha1999"]


def _vee(W: np.ndarray) -> np.ndarray:
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def finite_difference_jacobian(model, q, h: float = 1e-6) -> np.ndarray:
    """(6, n): angular rows from vee(skew(R(q+h) R(q-h)^T)) / 2h, linear rows from the
    origin's central difference."""
    J = np.zeros((6, model.n))
    for j in range(model.n):
        dq = np.zeros(model.n)
        dq[j] = h
        Tp = forward_kinematics(model, q + dq).end_effector
        Tm = forward_kinematics(model, q - dq).end_effector
        D = Tp[:3, :3] @ Tm[:3, :3].T
        J[:3, j] = _vee(0.5 * (D - D.T)) / (2 * h)
        J[3:, j] = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
    return J


def _random_q(rng, model) -> np.ndarray:
    lo, hi = model.joint_limits.T
    lo = np.where(np.isfinite(lo), lo, np.where(model.is_revolute, -math.pi, -0.5))
    hi = np.where(np.isfinite(hi), hi, np.where(model.is_revolute, math.pi, 0.5))
    return rng.uniform(lo, hi)


@pytest.mark.parametrize("name", BUNDLED)
def test_jacobian_is_the_derivative_of_forward_kinematics(name):
    robot = load_robot(ROBOTS / f"{name}.toml")
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = _random_q(rng, robot)
        J = tool_jacobian(robot, q)
        assert J.shape == (6, robot.n)
        np.testing.assert_allclose(J, finite_difference_jacobian(robot, q), atol=1e-7)


@given(robots(min_links=1, max_links=12), seeds)
@fast(25)
def test_jacobian_of_random_arms(robot, seed):
    q = _random_q(np.random.default_rng(seed), robot)
    scale = 1.0 + float(np.abs(forward_kinematics(robot, q).origins).max())
    np.testing.assert_allclose(tool_jacobian(robot, q), finite_difference_jacobian(robot, q),
                               atol=1e-7 * scale)


@given(random_tree(min_joints=2, max_joints=12), seeds)
@fast(15)
def test_jacobian_of_random_trees(tree, seed):
    """A joint on another branch does not move the last link: its column is zero."""
    q = _random_q(np.random.default_rng(seed), tree)
    scale = 1.0 + float(np.abs(forward_kinematics(tree, q).origins).max())
    np.testing.assert_allclose(tool_jacobian(tree, q), finite_difference_jacobian(tree, q),
                               atol=1e-7 * scale)


def _check_jacobian_derivative(model, q, h: float = 1e-6) -> None:
    """H[:, :, k] against the central difference of `tool_jacobian` along q_k, and
    Jdot = H qd against the difference along qd (a second method: J itself is checked
    against forward kinematics above)."""
    J, H = tool_jacobian_derivative(model, q)
    np.testing.assert_allclose(J, tool_jacobian(model, q), atol=1e-14)
    scale = 1.0 + float(np.abs(forward_kinematics(model, q).origins).max())
    for k, dq in enumerate(np.eye(model.n) * h):
        dJ = (tool_jacobian(model, q + dq) - tool_jacobian(model, q - dq)) / (2 * h)
        np.testing.assert_allclose(H[:, :, k], dJ, atol=1e-7 * scale)
    qd = np.random.default_rng(1).uniform(-1.0, 1.0, model.n)
    Jdot = (tool_jacobian(model, q + h * qd) - tool_jacobian(model, q - h * qd)) / (2 * h)
    np.testing.assert_allclose(H @ qd, Jdot, atol=1e-7 * scale * model.n)


@pytest.mark.parametrize("name", BUNDLED)
def test_jacobian_derivative_is_the_jacobians_rate(name):
    robot = load_robot(ROBOTS / f"{name}.toml")
    _check_jacobian_derivative(robot, _random_q(np.random.default_rng(11), robot))


@given(random_tree(min_joints=2, max_joints=8), seeds)
@fast(10)
def test_jacobian_derivative_of_random_trees(tree, seed):
    """Joints on another branch neither move the tool nor turn its Jacobian."""
    _check_jacobian_derivative(tree, _random_q(np.random.default_rng(seed), tree))


def test_dls_step_is_the_damped_normal_equations():
    rng = np.random.default_rng(3)
    J, r = rng.normal(size=(3, 5)), rng.normal(size=3)
    dq, s = damped_least_squares_step(J, r, 0.1)
    np.testing.assert_allclose(dq, J.T @ np.linalg.solve(J @ J.T + 0.01 * np.eye(3), r))
    np.testing.assert_allclose(s, np.linalg.svd(J, compute_uv=False))


def test_rotation_error_turns_R_into_R_target():
    rng = np.random.default_rng(5)
    for angle in (0.0, 1e-9, 0.3, 2.0, math.pi - 1e-9, math.pi):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        turn = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        w = rotation_error(turn @ R, R)
        assert abs(np.linalg.norm(w) - angle) < 1e-9
        if angle > 1e-6:
            assert abs(abs(w @ axis) - angle) < 1e-9


@pytest.mark.parametrize("name", ["puma560_saha", "stanford_saha2009", "scara", "ur5e"])
@pytest.mark.parametrize("orientation", [False, True])
def test_a_reachable_target_is_reached(name, orientation):
    robot = load_robot(ROBOTS / f"{name}.toml")
    rng = np.random.default_rng(11)
    lo, hi = robot.joint_limits.T
    for _ in range(5):
        q_goal = _random_q(rng, robot)
        T = forward_kinematics(robot, q_goal).end_effector
        q0 = np.clip(q_goal + rng.uniform(-0.4, 0.4, robot.n), lo, hi)
        res = solve_position(robot, q0, T[:3, 3], T[:3, :3] if orientation else None)
        T_end = forward_kinematics(robot, res.q).end_effector
        assert res.reached, res
        assert np.linalg.norm(T_end[:3, 3] - T[:3, 3]) < 1e-9
        assert res.residual < 1e-9
        if orientation:
            assert np.linalg.norm(rotation_error(T[:3, :3], T_end[:3, :3])) < 1e-9
        assert np.all(res.q >= lo) and np.all(res.q <= hi)


def test_an_out_of_reach_target_stretches_the_arm_towards_it():
    """A planar two-link arm (1 m + 1 m) and a target 5 m away in its plane: not reached,
    the arm ends straight, its tool at 2 m along the target's direction."""
    robot = load_robot(ROBOTS / "two_link_planar.toml")
    direction = np.array([math.cos(0.7), math.sin(0.7), 0.0])
    res = solve_position(robot, np.array([0.2, 0.9]), 5.0 * direction, max_iterations=500)
    assert not res.reached
    tool = forward_kinematics(robot, res.q).end_effector[:3, 3]
    np.testing.assert_allclose(tool, 2.0 * direction, atol=1e-5)
    assert res.residual == pytest.approx(3.0, abs=1e-5)
    # stretched: the edge of the workspace is a singularity
    assert res.smallest_singular_value < 1e-2
    assert res.near_singular()


def test_a_reachable_target_is_not_reported_out_of_reach():
    robot = load_robot(ROBOTS / "two_link_planar.toml")
    res = solve_position(robot, np.array([0.2, 0.9]), [1.2, 0.5, 0.0])
    assert res.reached and not res.near_singular()


def test_limits_are_kept():
    """The SCARA's shoulder and elbow have limits; a target that needs them beyond stays
    within them, and the joints on their limits are reported."""
    robot = load_robot(ROBOTS / "scara.toml")
    lo, hi = robot.joint_limits.T
    p = forward_kinematics(robot, robot.q_home).end_effector[:3, 3]
    behind = np.array([-abs(p[0]) - 0.1, -0.01, p[2]])   # behind the base: past the limits
    res = solve_position(robot, robot.q_home, behind)
    assert np.all(res.q >= lo) and np.all(res.q <= hi)
    assert not res.reached
    assert res.at_limits
    free = solve_position(robot, robot.q_home, behind, limits=False)
    assert free.residual < res.residual  # the limits are what held it


def test_limits_hold_on_a_tight_revolute_joint():
    """A two-link arm whose shoulder may only turn +-0.3 rad: targets beyond stay out."""
    robot = load_robot(ROBOTS / "two_link_planar.toml")
    links = list(robot.links)
    links[0] = replace(links[0], limits=(-0.3, 0.3))
    tight = Robot(robot.name, links, gravity=robot.gravity)
    res = solve_position(tight, np.zeros(2), [0.0, 1.9, 0.0])
    assert -0.3 <= res.q[0] <= 0.3
    assert res.q[0] == pytest.approx(0.3)
    assert 0 in res.at_limits and not res.reached


def test_a_singular_pose_reports_a_small_singular_value():
    """PUMA with theta_5 = 0: the axes of joints 4 and 6 are aligned (wrist singularity)."""
    robot = load_robot(ROBOTS / "puma560_saha.toml")
    q = np.radians([10.0, 30.0, -40.0, 20.0, 0.0, 15.0])
    T = forward_kinematics(robot, q).end_effector
    res = solve_position(robot, q, T[:3, 3], T[:3, :3])
    assert res.reached
    assert res.smallest_singular_value < 1e-9
    assert res.manipulability < 1e-9
    # away from it, the wrist is fine
    q[4] = 0.5
    T = forward_kinematics(robot, q).end_effector
    away = solve_position(robot, q, T[:3, 3], T[:3, :3])
    assert away.smallest_singular_value > 1e-2


def test_ik_module_is_exported_and_qt_free():
    import armdyn.core as core
    assert core.solve_position is solve_position and core.tool_jacobian is tool_jacobian


def test_wrap_revolute_keeps_the_frames_and_the_limited_joints():
    robot = load_robot(ROBOTS / "scara.toml")   # joints 1, 2 limited, 3 prismatic, 4 +-2 pi
    q = np.array([1.5, -2.0, 0.1, 5.0])
    wrapped = wrap_revolute(robot, q)
    np.testing.assert_array_equal(wrapped, q)   # limits are finite: nothing to wrap
    puma = load_robot(ROBOTS / "puma560_saha.toml")
    q = np.array([4.0, -3.5, 0.2, 7.0, -9.0, 3.0])
    wrapped = wrap_revolute(puma, q)
    assert np.all(np.abs(wrapped) <= np.pi)
    np.testing.assert_allclose(forward_kinematics(puma, wrapped).end_effector,
                               forward_kinematics(puma, q).end_effector, atol=1e-12)
