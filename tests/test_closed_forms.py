"""Closed forms from textbook physics, with random parameters.

Geometry used throughout (docs/robot-file.md, DH: Rz(theta) Tz(b) Tx(a) Rx(alpha)):
the base z_0 axis, and every revolute axis of the planar arms, is horizontal;
the arm moves in the x_0-y_0 plane; gravity (0, -g, 0) points along -y_0, in the
plane of motion. A revolute joint angle q is measured from x_0 (the link points
along x_0 at q = 0, straight up at q = pi/2, hangs down at q = -pi/2). With the
mass centre at height y = d sin q the potential is V = m g d sin q and the
gravity torque dV/dq = m g d cos q.

* simple pendulum: a small solid sphere (radius r) at the tip of a massless
  link of length l: tau = (m l^2 + 2/5 m r^2) qdd + m g l cos q;
* compound pendulum: a solid cylinder (rod) of length l, radius r, pivoted at
  one end: I_O = m l^2 / 3 + m r^2 / 4, tau = I_O qdd + m g (l/2) cos q;
* two-link planar arm: M(q), C(q, qd) qd and g(q) of Spong, Hutchinson and
  Vidyasagar, "Robot Modeling and Control", Sec. 7.3 (planar elbow arm);
* prismatic joint sliding vertically: f = m (qdd + g); a horizontal prismatic
  joint carried by it feels no gravity: f_2 = m_2 qdd_2;
* small oscillations of the compound pendulum about q = -pi/2, simulated:
  period 2 pi sqrt(I_O / (m g d)).
Gravity components along the joint axes (z_0) are added at random: they must
not change any joint torque of a planar arm.
"""
from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from armdyn.core import (JointType, Link, Robot, forward_dynamics, gravity_torques,
                         inverse_dynamics, mass_matrix, simulate)
from armdyn.core import load_robot
from strategies import assert_close, fast, reals, scale_of

RTOL = 1e-10
ROBOTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robots")


def sphere(m, r):
    i = 0.4 * m * r * r
    return (i, i, i, 0.0, 0.0, 0.0)


def rod_along_x(m, l, r):
    """Solid cylinder of length l, radius r, axis along x, about its centre."""
    axial = 0.5 * m * r * r
    transverse = m * (3 * r * r + l * l) / 12.0
    return (axial, transverse, transverse, 0.0, 0.0, 0.0)


# ----------------------------------------------------------------------------------
# Pendulums
# ----------------------------------------------------------------------------------

@fast(60)
@given(m=reals(0.1, 10), l=reals(0.1, 2), r=reals(1e-3, 0.05), g=reals(0.5, 20), gz=reals(-5, 5),
       b=reals(-1, 1), alpha=reals(-math.pi, math.pi),
       q=reals(-2 * math.pi, 2 * math.pi), qd=reals(-5, 5), qdd=reals(-10, 10))
def test_simple_pendulum(m, l, r, g, gz, b, alpha, q, qd, qdd):
    # mass centre at the origin of the link's own frame, the tip of the link;
    # alpha only turns the (isotropic) sphere, b shifts it along the axis
    robot = Robot("pendulum", (Link(JointType.REVOLUTE, a=l, b=b, alpha=alpha, mass=m,
                                    com=(0.0, 0.0, 0.0), inertia=sphere(m, r)),),
                  gravity=(0.0, -g, gz))
    I_O = m * l * l + 0.4 * m * r * r
    expected = I_O * qdd + m * g * l * math.cos(q)  # no velocity term for one joint
    scale = I_O * abs(qdd) + m * g * l
    assert_close(inverse_dynamics(robot, [q], [qd], [qdd]), [expected], RTOL, scale, "tau")
    assert_close(mass_matrix(robot, [q]), [[I_O]], RTOL, what="I")
    assert_close(forward_dynamics(robot, [q], [qd], [expected]), [qdd], 1e-9,
                 scale / I_O, "qdd")


@fast(60)
@given(m=reals(0.1, 10), l=reals(0.1, 2), r=reals(1e-3, 0.05), g=reals(0.5, 20),
       q=reals(-2 * math.pi, 2 * math.pi), qd=reals(-5, 5), qdd=reals(-10, 10))
def test_simple_pendulum_with_gravity_along_minus_x(m, l, r, g, q, qd, qdd):
    # gravity (-g, 0, 0): the mass centre at x = l cos q, V = m g l cos q,
    # dV/dq = -m g l sin q
    robot = Robot("pendulum", (Link(JointType.REVOLUTE, a=l, mass=m, inertia=sphere(m, r)),),
                  gravity=(-g, 0.0, 0.0))
    I_O = m * l * l + 0.4 * m * r * r
    expected = I_O * qdd - m * g * l * math.sin(q)
    assert_close(inverse_dynamics(robot, [q], [qd], [qdd]), [expected], RTOL,
                 I_O * abs(qdd) + m * g * l, "tau")


@fast(60)
@given(m=reals(0.1, 10), l=reals(0.1, 2), r=reals(1e-3, 0.05), g=reals(0.5, 20), gz=reals(-5, 5),
       q=reals(-2 * math.pi, 2 * math.pi), qd=reals(-5, 5), qdd=reals(-10, 10))
def test_compound_pendulum(m, l, r, g, gz, q, qd, qdd):
    # a rod from the joint axis to the origin of frame 1: mass centre at -l/2 along x_1
    robot = Robot("rod", (Link(JointType.REVOLUTE, a=l, mass=m, com=(-l / 2, 0.0, 0.0),
                               inertia=rod_along_x(m, l, r)),), gravity=(0.0, -g, gz))
    I_O = m * l * l / 3.0 + m * r * r / 4.0
    expected = I_O * qdd + m * g * (l / 2) * math.cos(q)
    scale = I_O * abs(qdd) + m * g * l
    assert_close(inverse_dynamics(robot, [q], [qd], [qdd]), [expected], RTOL, scale, "tau")
    assert_close(mass_matrix(robot, [q]), [[I_O]], RTOL, what="I")
    assert_close(gravity_torques(robot, [q]), [m * g * (l / 2) * math.cos(q)], RTOL,
                 m * g * l, "gravity torque")


# ----------------------------------------------------------------------------------
# Two-link planar arm (Spong, Hutchinson, Vidyasagar Sec. 7.3)
# ----------------------------------------------------------------------------------

def spong_two_link(m1, m2, l1, lc1, lc2, I1, I2, g, q, qd):
    """M(q), C(q, qd) qd and g(q) of the planar elbow arm; lc_i: joint i to mass
    centre i, I_i: moment of inertia about the mass centre, normal to the plane."""
    q1, q2 = q
    qd1, qd2 = qd
    c2 = math.cos(q2)
    d11 = m1 * lc1 ** 2 + m2 * (l1 ** 2 + lc2 ** 2 + 2 * l1 * lc2 * c2) + I1 + I2
    d12 = m2 * (lc2 ** 2 + l1 * lc2 * c2) + I2
    d22 = m2 * lc2 ** 2 + I2
    M = np.array([[d11, d12], [d12, d22]])
    h = -m2 * l1 * lc2 * math.sin(q2)  # Christoffel symbols c121 = c211 = c221 = h, c112 = -h
    Cqd = np.array([h * qd2 ** 2 + 2 * h * qd1 * qd2, -h * qd1 ** 2])
    phi1 = (m1 * lc1 + m2 * l1) * g * math.cos(q1) + m2 * lc2 * g * math.cos(q1 + q2)
    phi2 = m2 * lc2 * g * math.cos(q1 + q2)
    return M, Cqd, np.array([phi1, phi2])


def planar_rod(m, l, lc, I, b, com_z):
    """A planar link of length l (DH a = l), mass centre lc from its joint; I about
    the mass centre normal to the plane; b, com_z: offsets along the axis."""
    return Link(JointType.REVOLUTE, a=l, b=b, alpha=0.0, mass=m, com=(lc - l, 0.0, com_z),
                inertia=(0.01 * I, I, I, 0.0, 0.0, 0.0))


@fast(100)
@given(m=st.tuples(reals(0.1, 10), reals(0.1, 10)), l=st.tuples(reals(0.1, 2), reals(0.1, 2)),
       frac=st.tuples(reals(0, 1), reals(0, 1)), inertia=st.tuples(reals(1e-3, 1), reals(1e-3, 1)),
       offsets=st.tuples(reals(-0.5, 0.5), reals(-0.5, 0.5), reals(-0.5, 0.5), reals(-0.5, 0.5)),
       g=reals(0, 20), gz=reals(-5, 5),
       q=st.tuples(reals(-7, 7), reals(-7, 7)), qd=st.tuples(reals(-5, 5), reals(-5, 5)),
       qdd=st.tuples(reals(-10, 10), reals(-10, 10)))
def test_two_link_planar_arm(m, l, frac, inertia, offsets, g, gz, q, qd, qdd):
    (m1, m2), (l1, l2), (I1, I2) = m, l, inertia
    lc1, lc2 = frac[0] * l1, frac[1] * l2
    b1, b2, z1, z2 = offsets
    robot = Robot("elbow", (planar_rod(m1, l1, lc1, I1, b1, z1), planar_rod(m2, l2, lc2, I2, b2, z2)),
                  gravity=(0.0, -g, gz))
    M, Cqd, phi = spong_two_link(m1, m2, l1, lc1, lc2, I1, I2, g, q, qd)
    qdd = np.array(qdd)
    tau = M @ qdd + Cqd + phi
    scale = scale_of(np.abs(M) @ np.abs(qdd), Cqd, phi, np.abs(M) @ np.array(qd) ** 2)
    assert_close(mass_matrix(robot, q), M, RTOL, what="M(q)")
    assert_close(inverse_dynamics(robot, q, qd, qdd), tau, RTOL, scale, "tau")
    assert_close(gravity_torques(robot, q), phi, RTOL, scale, "g(q)")
    assert_close(forward_dynamics(robot, q, qd, tau), qdd, 1e-8,
                 scale / np.linalg.eigvalsh(M)[0], "qdd")


def test_bundled_two_link_planar_file_matches_the_textbook_arm():
    """robots/two_link_planar.toml read as the Spong arm: lengths a_i, mass centres
    l_i + com_x from each joint, I_i = inertia zz, gravity magnitude from the file."""
    path = os.path.join(ROBOTS_DIR, "two_link_planar.toml")
    robot = load_robot(path)
    assert robot.n == 2 and robot.is_revolute.all()
    assert robot.gravity[0] == 0.0 and robot.gravity[1] < 0  # in the plane, along -y_0
    for link in robot.links:
        assert link.alpha == 0.0 and link.com[1] == 0.0
    L1, L2 = robot.links
    rng = np.random.default_rng(7)
    for _ in range(20):
        q, qd, qdd = rng.uniform(-4, 4, 2), rng.uniform(-3, 3, 2), rng.uniform(-5, 5, 2)
        M, Cqd, phi = spong_two_link(L1.mass, L2.mass, L1.a, L1.a + L1.com[0], L2.a + L2.com[0],
                                     L1.inertia[2], L2.inertia[2], -robot.gravity[1], q, qd)
        assert_close(mass_matrix(robot, q), M, RTOL, what="M(q)")
        assert_close(inverse_dynamics(robot, q, qd, qdd), M @ qdd + Cqd + phi, RTOL,
                     scale_of(np.abs(M) @ np.abs(qdd), Cqd, phi), "tau")


# ----------------------------------------------------------------------------------
# Prismatic joints
# ----------------------------------------------------------------------------------

@fast(60)
@given(m=st.tuples(reals(0.1, 10), reals(0.1, 10)), g=reals(0, 20),
       gxy=st.tuples(reals(-5, 5), reals(-5, 5)), theta=reals(-math.pi, math.pi),
       a=reals(-1, 1), com=st.tuples(reals(-0.5, 0.5), reals(-0.5, 0.5), reals(-0.5, 0.5)),
       q=st.tuples(reals(-1, 1), reals(-1, 1)), qd=st.tuples(reals(-3, 3), reals(-3, 3)),
       qdd=st.tuples(reals(-10, 10), reals(-10, 10)))
def test_vertical_prismatic_joint_carrying_a_horizontal_one(m, g, gxy, theta, a, com, q, qd, qdd):
    """Joint 1 slides along z_0 (vertical, gravity (gx, gy, -g)); alpha_1 = 90 deg puts
    joint 2's axis z_1 horizontal. Both links only translate and the axes are
    orthogonal, so f_1 = (m_1 + m_2)(qdd_1 + g) and f_2 = m_2 (qdd_2 - gravity . z_1)."""
    m1, m2 = m
    gx, gy = gxy
    robot = Robot("lift", (Link(JointType.PRISMATIC, a=a, alpha=math.pi / 2, theta=theta, mass=m1,
                                com=com, inertia=sphere(m1, 0.1)),
                           Link(JointType.PRISMATIC, a=a, alpha=0.3, theta=theta, mass=m2, com=com,
                                inertia=sphere(m2, 0.1))),
                  gravity=(gx, gy, -g))
    # z_1 = Rz(theta) Rx(90 deg) z = (sin theta, -cos theta, 0): horizontal
    z1 = np.array([math.sin(theta), -math.cos(theta), 0.0])
    gravity = np.array([gx, gy, -g])
    expected = np.array([(m1 + m2) * (qdd[0] + g), m2 * (qdd[1] - gravity @ z1)])
    scale = (m1 + m2) * (scale_of(qdd) + 25)
    assert_close(inverse_dynamics(robot, q, qd, qdd), expected, RTOL, scale, "f")
    assert_close(mass_matrix(robot, q), np.diag([m1 + m2, m2]), RTOL, m1 + m2, "M")


@fast(60)
@given(m=reals(0.1, 10), g=reals(0, 20), theta=reals(-math.pi, math.pi), alpha=reals(-math.pi, math.pi),
       a=reals(-1, 1), q=reals(-1, 1), qd=reals(-3, 3), qdd=reals(-10, 10))
def test_single_vertical_prismatic_joint(m, g, theta, alpha, a, q, qd, qdd):
    """f = m (qdd + g), whatever the link's shape and orientation."""
    robot = Robot("lift", (Link(JointType.PRISMATIC, a=a, alpha=alpha, theta=theta, mass=m,
                                com=(0.1, -0.2, 0.3), inertia=rod_along_x(m, 0.5, 0.02)),),
                  gravity=(0.0, 0.0, -g))
    assert_close(inverse_dynamics(robot, [q], [qd], [qdd]), [m * (qdd + g)], RTOL,
                 m * (abs(qdd) + g), "f")
    assert_close(forward_dynamics(robot, [q], [qd], [m * (qdd + g)]), [qdd], 1e-9,
                 abs(qdd) + g, "qdd")


# ----------------------------------------------------------------------------------
# Small oscillations, simulated
# ----------------------------------------------------------------------------------

def upward_crossings(t, x):
    """Times where x crosses 0 upwards, by linear interpolation between samples."""
    idx = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    return t[idx] - x[idx] * (t[idx + 1] - t[idx]) / (x[idx + 1] - x[idx])


@fast(4)
@given(m=reals(0.5, 5), l=reals(0.3, 1.5), r=reals(0.005, 0.05), g=reals(5, 15))
def test_small_oscillation_period_of_the_compound_pendulum(m, l, r, g):
    robot = Robot("rod", (Link(JointType.REVOLUTE, a=l, mass=m, com=(-l / 2, 0.0, 0.0),
                               inertia=rod_along_x(m, l, r)),), gravity=(0.0, -g, 0.0))
    I_O = m * l * l / 3.0 + m * r * r / 4.0
    period = 2 * math.pi * math.sqrt(I_O / (m * g * (l / 2)))
    amplitude = 0.01  # rad; the finite-amplitude correction is amplitude^2 / 16 = 6e-6
    result = simulate(robot, 3.3 * period, q0=[-math.pi / 2 + amplitude], qd0=[0.0],
                      dt_out=period / 400)
    swing = result.q[:, 0] + math.pi / 2
    assert np.max(np.abs(swing)) <= amplitude * (1 + 1e-6)  # energy is not gained
    crossings = upward_crossings(result.t, swing)
    assert len(crossings) == 3
    measured = np.diff(crossings)
    assert_close(measured, np.full(2, period), 1e-4, what="period")
