"""The joint-torque regressor (core.algorithms.regressor): tau = Y pi against the
recursions, against models with other parameters, and against Pinocchio's
computeJointTorqueRegressor after the change of reference point and frame written here."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given

from armdyn.core import inverse_dynamics, load_mechanism, load_robot
from armdyn.core.algorithms.regressor import (joint_torque_regressor, parameter_names,
                                              parameter_vector)
from armdyn.core.errors import ArgumentError
from pinocchio_reference import pinocchio_model
from strategies import fast, trees_and_states

RNG = np.random.default_rng(9)
FILES = ["robots/puma560_saha.toml", "robots/stanford_saha2009.toml", "robots/scara.toml"]


def geared(robot, rng):
    return robot.with_links([replace(l, friction_viscous=float(rng.uniform(0, 2)),
                                     friction_coulomb=float(rng.uniform(0, 2)),
                                     gear_ratio=float(rng.uniform(10, 100)),
                                     rotor_inertia=float(rng.uniform(0, 3e-4)))
                             for l in robot.links])


def other_masses(robot, rng):
    """The same kinematics with other (physically valid) masses, centres and inertias."""
    links = []
    for l in robot.links:
        d = rng.uniform(0.05, 0.3, 3)
        links.append(replace(l, mass=float(rng.uniform(0.5, 5)), com=tuple(rng.uniform(-.2, .2, 3)),
                             inertia=(d[1] + d[2], d[0] + d[2], d[0] + d[1], 0.01, -0.02, 0.0)))
    return robot.with_links(links)


@pytest.mark.parametrize("path", FILES)
def test_regressor_times_parameters_is_the_inverse_dynamics(path):
    robot = geared(load_robot(path), RNG)
    Q, Qd, Qdd = RNG.normal(size=(3, 4, robot.n))
    Y = joint_torque_regressor(robot, Q, Qd, Qdd)
    assert Y.shape == (4, robot.n, 13 * robot.n)
    assert len(parameter_names(robot)) == 13 * robot.n
    tau = inverse_dynamics(robot, Q, Qd, Qdd)
    assert np.allclose(Y @ parameter_vector(robot), tau, rtol=1e-12,
                       atol=1e-12 * np.abs(tau).max())
    # Y depends on the kinematics only: other parameters, the same Y
    other = geared(other_masses(load_robot(path), RNG), RNG)
    assert np.allclose(Y @ parameter_vector(other), inverse_dynamics(other, Q, Qd, Qdd),
                       rtol=1e-12, atol=1e-11)


@fast(15)
@given(trees_and_states(min_joints=1, max_joints=8, joints="mixed"))
def test_regressor_of_trees_times_parameters_is_the_inverse_dynamics(case):
    """Branches, placed chain bases, prismatic joints anywhere: the compiled pass walks
    each link's supporting joints through `parent` (core.kernels.regressor)."""
    mech, q, qd, qdd = case
    Y = joint_torque_regressor(mech, q, qd, qdd)
    tau = inverse_dynamics(mech, q, qd, qdd)
    assert np.allclose(Y @ parameter_vector(mech), tau, rtol=1e-10,
                       atol=1e-10 * max(1.0, np.abs(tau).max()))


def _to_pinocchio(link) -> np.ndarray:
    """(10, 10): our link parameters (link frame, about its origin) -> Pinocchio's
    (joint frame, about the joint's origin: m, m c, Ixx, Ixy, Iyy, Ixz, Iyz, Izz), the
    link frame being X = Tz(b) Tx(a) Rx(alpha) (revolute) or Rz(theta) Tx(a) Rx(alpha)
    (prismatic) from the moved joint frame."""
    ca, sa = np.cos(link.alpha), np.sin(link.alpha)
    Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    if link.is_revolute:
        R, p = Rx, np.array([link.a, 0.0, link.b])
    else:
        ct, st = np.cos(link.theta), np.sin(link.theta)
        Rz = np.array([[ct, -st, 0], [st, ct, 0], [0, 0, 1]])
        R, p = Rz @ Rx, Rz @ np.array([link.a, 0.0, 0.0])

    def cross(v):
        return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])

    T = np.zeros((10, 10))
    for col in range(10):
        x = np.zeros(10)
        x[col] = 1.0
        m, h = x[0], x[1:4]
        xx, yy, zz, xy, xz, yz = x[4:]
        I_P = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        hj = R @ h
        I_O = R @ I_P @ R.T - m * cross(p) @ cross(p) - cross(p) @ cross(hj) - cross(hj) @ cross(p)
        T[:, col] = [m, *(m * p + hj), I_O[0, 0], I_O[0, 1], I_O[1, 1], I_O[0, 2], I_O[1, 2],
                     I_O[2, 2]]
    return T


@pytest.mark.parametrize("path", FILES)
def test_regressor_matches_pinocchios_after_the_change_of_frame(path):
    robot = load_robot(path)
    model = pinocchio_model(robot)
    data = model.createData()
    n = robot.n
    T = np.zeros((10 * n, 10 * n))
    for k, link in enumerate(robot.links):
        T[10 * k:10 * k + 10, 10 * k:10 * k + 10] = _to_pinocchio(link)
    for _ in range(3):
        q, qd, qdd = RNG.normal(size=(3, n))
        Y_pin = pin.computeJointTorqueRegressor(model, data, q, qd, qdd)
        Y = joint_torque_regressor(robot, q, qd, qdd)[:, :10 * n]
        assert np.allclose(Y, Y_pin @ T, rtol=1e-10, atol=1e-10 * np.abs(Y_pin).max())


def test_regressor_refuses_what_it_does_not_take():
    with pytest.raises(ArgumentError, match="loops"):
        fourbar = load_mechanism("robots/fourbar.toml")
        joint_torque_regressor(fourbar, fourbar.q_home, np.zeros(3), np.zeros(3))
    human = load_mechanism("robots/humanoid.toml")
    if any(not k.is_dh for k in human.joint_types):
        with pytest.raises(ArgumentError, match="joint '.*' is (free|spherical|universal)"):
            joint_torque_regressor(human, human.q_home, np.zeros(human.nv), np.zeros(human.nv))


def test_regressor_overflow_is_an_error_and_none_happens_within_the_kernels_bound():
    """The kernel spares the look at every entry while the arguments and the model's
    lengths are within NO_OVERFLOW: at that bound (a prismatic joint pushed out to it
    too) every entry is finite, beyond it an overflow is still a ResultOverflowError."""
    from armdyn.core.errors import ResultOverflowError
    from armdyn.core.kernels.regressor import NO_OVERFLOW
    for path in FILES[:2]:  # the PUMA and the Stanford arm (a prismatic joint)
        robot = load_robot(path)
        n = robot.n
        signs = RNG.choice([-1.0, 1.0], size=(3, 8, n))
        Y = joint_torque_regressor(robot, *(NO_OVERFLOW * signs))
        assert np.isfinite(Y).all() and np.abs(Y).max() < 1e143
        with pytest.raises(ResultOverflowError):
            joint_torque_regressor(robot, np.zeros((2, n)), np.full((2, n), 1e200),
                                   np.zeros((2, n)))
