"""The DeNOC core against Pinocchio, an independent implementation (Featherstone's
spatial algebra), on random robots: revolute and prismatic joints mixed, 1..30
links, random DH rows, masses, mass centres, rotated inertia tensors, gravity and
states (tests/strategies.py).

Pinocchio's model of a core Robot comes from tests/pinocchio_reference.py; the
reference itself is checked here too: its frames against the DH product of
docs/robot-file.md written out in this file, its gravity against the robot's.

Tolerances are relative to the magnitudes involved (round-off grows with the
size of the terms, not of the result); forward dynamics is checked by its
residual in Pinocchio's equations of motion and, directly, within the
conditioning of the mass matrix.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

from armdyn.core import (JointType, Link, Robot, convective_torques, energy, forward_dynamics,
                         forward_kinematics, gravity_torques, inverse_dynamics, mass_matrix)
from pinocchio_reference import pinocchio_model
from strategies import assert_close, fast, robots_and_states, scale_of, wrenches

RTOL = 1e-9  # relative to the largest magnitude in play; observed errors are ~1e-15


def qdd_scale(M, *forces) -> float:
    """Round-off bound for accelerations solved from M qdd = b: |b| / lambda_min(M),
    |b| the largest force term in play."""
    return scale_of(*forces) / float(np.linalg.eigvalsh(M)[0])


class Reference:
    """Pinocchio model + data of a core robot, with the quantities the tests compare."""

    def __init__(self, robot):
        self.robot = robot
        self.model = pinocchio_model(robot)
        self.data = self.model.createData()

    def rnea(self, q, qd, qdd, f_ext=None):
        if f_ext is None:
            return pin.rnea(self.model, self.data, q, qd, qdd)
        return pin.rnea(self.model, self.data, q, qd, qdd, self.fext(q, f_ext))

    def aba(self, q, qd, tau, f_ext=None):
        if f_ext is None:
            return pin.aba(self.model, self.data, q, qd, tau)
        return pin.aba(self.model, self.data, q, qd, tau, self.fext(q, f_ext))

    def crba(self, q):
        M = pin.crba(self.model, self.data, q)
        return np.triu(M) + np.triu(M, 1).T  # Pinocchio fills the upper triangle

    def nle(self, q, qd):
        return pin.nonLinearEffects(self.model, self.data, q, qd)

    def fext(self, q, f_ext):
        """The core's wrench [n; f] (base frame, moment about the origin of the last
        DH frame, applied by the environment on the last link) as Pinocchio's list of
        per-joint forces in the joint's local frame, moment about the joint origin."""
        n = self.robot.n
        pin.forwardKinematics(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        joint = self.data.oMi[n]  # joint n: DH frame n-1, on the last joint's axis
        o_last = self.data.oMf[self.model.getFrameId(f"link{n}")].translation
        moment, force = np.asarray(f_ext[:3], float), np.asarray(f_ext[3:], float)
        moment_at_joint = moment + np.cross(o_last - joint.translation, force)
        R = joint.rotation
        forces = pin.StdVec_Force()
        for _ in range(self.model.njoints):
            forces.append(pin.Force.Zero())
        forces[n] = pin.Force(R.T @ force, R.T @ moment_at_joint)
        return forces


# ----------------------------------------------------------------------------------
# The reference itself
# ----------------------------------------------------------------------------------

def _dh_transform(a, b, alpha, theta):
    """Rz(theta) Tz(b) Tx(a) Rx(alpha), docs/robot-file.md, as one 4x4 matrix."""
    ct, st_, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    Rz = np.array([[ct, -st_, 0, 0], [st_, ct, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    Tz = np.eye(4); Tz[2, 3] = b
    Tx = np.eye(4); Tx[0, 3] = a
    Rx = np.array([[1, 0, 0, 0], [0, ca, -sa, 0], [0, sa, ca, 0], [0, 0, 0, 1]])
    return Rz @ Tz @ Tx @ Rx


@fast(60)
@given(robots_and_states())
def test_reference_and_core_frames_follow_the_documented_dh_product(case):
    robot, q, _, _ = case
    ref = Reference(robot)
    np.testing.assert_array_equal(ref.model.gravity.linear, np.array(robot.gravity))
    assert ref.model.nq == ref.model.nv == robot.n

    pin.forwardKinematics(ref.model, ref.data, q)
    pin.updateFramePlacements(ref.model, ref.data)
    kin = forward_kinematics(robot, q)
    assert kin.frames.shape == (robot.n + 1, 4, 4)
    reach = 1.0 + sum(abs(l.a) + abs(l.b) for l in robot.links) + scale_of(q)
    T = np.eye(4)
    assert_close(kin.frames[0], T, 1e-15, what="base frame")
    for k, link in enumerate(robot.links):
        a, b, alpha, theta = link.a, link.b, link.alpha, link.theta
        if link.is_revolute:
            theta = q[k]
        else:
            b = q[k]
        T = T @ _dh_transform(a, b, alpha, theta)
        pin_frame = ref.data.oMf[ref.model.getFrameId(f"link{k + 1}")].homogeneous
        assert_close(pin_frame, T, RTOL, scale=reach, what=f"Pinocchio frame {k + 1}")
        assert_close(kin.frames[k + 1], T, RTOL, scale=reach, what=f"core frame {k + 1}")
        # mass centre: com given in the link's own frame
        c = T[:3, :3] @ np.array(link.com) + T[:3, 3]
        assert_close(kin.com[k], c, RTOL, scale=reach, what=f"mass centre {k + 1}")
        pin_c = ref.data.oMi[k + 1].act(ref.model.inertias[k + 1].lever)
        assert_close(pin_c, c, RTOL, scale=reach, what=f"Pinocchio mass centre {k + 1}")


# ----------------------------------------------------------------------------------
# Dynamics
# ----------------------------------------------------------------------------------

@fast(120)
@given(robots_and_states())
def test_inverse_dynamics_equals_rnea(case):
    robot, q, qd, qdd = case
    ref = Reference(robot)
    expected = ref.rnea(q, qd, qdd)
    M = ref.crba(q)
    # at least 1e-6: a state with no gravity, rates or accelerations has torques that are
    # round-off (Pinocchio gave 2.2e-16 where ours is 0), 1e-15 absolute at RTOL
    scale = max(scale_of(expected, np.abs(M) @ np.abs(qdd), ref.nle(q, qd)), 1e-6)
    assert_close(inverse_dynamics(robot, q, qd, qdd), expected, RTOL, scale, "tau")


@fast(100)
@given(robots_and_states())
def test_mass_matrix_equals_crba(case):
    robot, q, _, _ = case
    expected = Reference(robot).crba(q)
    assert_close(mass_matrix(robot, q), expected, RTOL, what="GIM")


@fast(100)
@given(robots_and_states(), st.sampled_from(["denoc", "composite"]))
def test_forward_dynamics_equals_aba(case, method):
    robot, q, qd, qdd = case
    ref = Reference(robot)
    tau = ref.rnea(q, qd, qdd)  # a torque with a known, bounded answer
    expected = ref.aba(q, qd, tau)
    got = forward_dynamics(robot, q, qd, tau, method=method)
    M = ref.crba(q)
    nle = ref.nle(q, qd)
    # backward error: core's qdd satisfies Pinocchio's equations of motion
    scale = scale_of(tau, nle, np.abs(M) @ np.abs(got))
    assert_close(M @ got + nle, tau, RTOL, scale, f"residual of {method} in M qdd + h = tau")
    # forward error: within the conditioning of M
    scale = qdd_scale(M, tau, nle, np.abs(M) @ np.abs(qdd))
    assert_close(got, expected, RTOL, scale, f"qdd ({method})")
    assert_close(got, qdd, RTOL, scale, f"qdd ({method}) vs the qdd that made tau")


@fast(100)
@given(robots_and_states())
def test_energy_equals_pinocchio(case):
    robot, q, qd, _ = case
    ref = Reference(robot)
    T_pin = pin.computeKineticEnergy(ref.model, ref.data, q, qd)
    V_pin = pin.computePotentialEnergy(ref.model, ref.data, q)
    got = energy(robot, q, qd)
    assert got.shape == (3,)
    # potential: sum of m |g| |c|, kinetic: its own size
    reach = 1.0 + sum(abs(l.a) + abs(l.b) for l in robot.links) + scale_of(q)
    V_scale = robot.total_mass * float(np.linalg.norm(robot.gravity)) * reach
    assert_close(got[0], T_pin, RTOL, what="kinetic energy")
    assert_close(got[1], V_pin, RTOL, V_scale, what="potential energy")
    assert_close(got[2], T_pin + V_pin, RTOL, V_scale + abs(T_pin), what="total energy")


@fast(100)
@given(robots_and_states())
def test_gravity_and_convective_torques_equal_pinocchio(case):
    robot, q, qd, _ = case
    ref = Reference(robot)
    g = pin.computeGeneralizedGravity(ref.model, ref.data, q)
    h = ref.nle(q, qd) - g
    assert_close(gravity_torques(robot, q), g, RTOL, what="gravity torques")
    # round-off in h is relative to the velocity products that cancel in it (|M| |q'|^2),
    # not to h: an all-prismatic arm has h = 0 exactly, both sides give ~1e-15
    M = pin.crba(ref.model, ref.data, q)
    products = float(np.max(np.abs(M))) * float(np.max(np.abs(qd))) ** 2
    assert_close(convective_torques(robot, q, qd), h, RTOL, scale_of(g, h) + products,
                 "convective torques")


@fast(100)
@given(robots_and_states(), wrenches())
def test_external_wrench_on_last_link_equals_rnea_with_fext(case, f_ext):
    robot, q, qd, qdd = case
    ref = Reference(robot)
    expected = ref.rnea(q, qd, qdd, f_ext)
    reach = 1.0 + sum(abs(l.a) + abs(l.b) for l in robot.links) + scale_of(q)
    scale = scale_of(expected, ref.rnea(q, qd, qdd), np.abs(ref.crba(q)) @ np.abs(qdd)) \
        + reach * scale_of(f_ext)
    got = inverse_dynamics(robot, q, qd, qdd, f_ext=f_ext)
    assert_close(got, expected, RTOL, scale, "tau with f_ext")


@fast(60)
@given(robots_and_states(), wrenches(), st.sampled_from(["denoc", "composite"]))
def test_forward_dynamics_with_external_wrench_equals_aba_with_fext(case, f_ext, method):
    robot, q, qd, qdd = case
    ref = Reference(robot)
    tau = ref.rnea(q, qd, qdd, f_ext)
    got = forward_dynamics(robot, q, qd, tau, method=method, f_ext=f_ext)
    expected = ref.aba(q, qd, tau, f_ext)
    M = ref.crba(q)
    reach = 1.0 + sum(abs(l.a) + abs(l.b) for l in robot.links) + scale_of(q)
    scale = qdd_scale(M, tau, ref.nle(q, qd), np.abs(M) @ np.abs(qdd), reach * scale_of(f_ext))
    assert_close(got, expected, RTOL, scale, f"qdd with f_ext ({method})")
    assert_close(got, qdd, RTOL, scale, f"qdd with f_ext ({method}) round trip")


@pytest.mark.parametrize("method", ["denoc", "composite"])
def test_pinocchio_comparison_detects_a_wrong_answer(method):
    """The comparisons can fail: a 1e-6 relative change of one link's mass, or the
    external wrench with the opposite sign, is caught at RTOL."""
    links = (Link(JointType.REVOLUTE, a=0.4, alpha=0.3, mass=2.0, com=(0.1, 0.0, 0.0)),
             Link(JointType.PRISMATIC, a=0.1, alpha=-0.7, theta=0.2, mass=1.5, com=(0.0, 0.1, 0.0)),
             Link(JointType.REVOLUTE, a=0.3, b=0.1, mass=1.0, com=(0.05, 0.0, 0.02)))
    robot = Robot("three", links, gravity=(0.0, 0.0, -9.81))
    other = robot.with_links([links[0], replace(links[1], mass=1.5 * (1 + 1e-6)), links[2]])
    q, qd, qdd = np.array([0.3, 0.2, -0.4]), np.array([1.0, -0.5, 0.7]), np.array([0.2, 0.3, -0.1])
    ref = Reference(other)
    with pytest.raises(AssertionError):
        assert_close(inverse_dynamics(robot, q, qd, qdd), ref.rnea(q, qd, qdd), RTOL)
    tau = ref.rnea(q, qd, qdd)
    with pytest.raises(AssertionError):
        assert_close(forward_dynamics(robot, q, qd, tau, method=method), ref.aba(q, qd, tau), RTOL)
    # the wrench convention: the same wrench agrees, the opposite one does not
    f_ext = np.array([0.3, -0.2, 0.5, 2.0, -1.0, 3.0])
    ref = Reference(robot)
    assert_close(inverse_dynamics(robot, q, qd, qdd, f_ext=f_ext), ref.rnea(q, qd, qdd, f_ext), RTOL)
    with pytest.raises(AssertionError):
        assert_close(inverse_dynamics(robot, q, qd, qdd, f_ext=-f_ext), ref.rnea(q, qd, qdd, f_ext),
                     RTOL)
    tau = ref.rnea(q, qd, qdd, f_ext)
    with pytest.raises(AssertionError):
        assert_close(forward_dynamics(robot, q, qd, tau, method=method, f_ext=-f_ext),
                     ref.aba(q, qd, tau, f_ext), RTOL)
