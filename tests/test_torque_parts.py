"""The drive torques split into inertial, gravity, friction and rotor parts
(core/algorithms/torque_parts.py): each part against the textbook two-link arm's closed
form, and the parts' sum against the whole inverse dynamics."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import (ArgumentError, inverse_dynamics, load_mechanism, load_robot,
                         torque_parts)
from armdyn.core.algorithms.torque_parts import TorqueParts, torque_parts_chunks

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
BAND = 0.01  # rad/s, the Coulomb law's band (docs/motions.md)


def states(rng, S, n, scale=1.0):
    return (rng.uniform(-math.pi, math.pi, (S, n)), scale * rng.normal(size=(S, n)),
            scale * rng.normal(size=(S, n)))


def test_parts_of_the_two_link_arm_are_its_closed_form():
    """robots/two_link_planar.toml (two uniform rods, m = 1 kg, l = 1 m, in a vertical
    plane; the file's docstring gives M and g) with friction and a geared rotor on each
    joint: each part equals the textbook term."""
    robot = load_robot(ROBOTS / "two_link_planar.toml")
    cv, cc, r, Ir = (0.7, 0.3), (1.1, 0.4), (50.0, 30.0), (2e-4, 1e-4)
    robot = robot.with_links([replace(link, friction_viscous=cv[i], friction_coulomb=cc[i],
                                      gear_ratio=r[i], rotor_inertia=Ir[i])
                              for i, link in enumerate(robot.links)])
    q, qd, qdd = states(np.random.default_rng(3), 40, 2)
    parts = torque_parts(robot, q, qd, qdd)

    m, l, lc, I, g = 1.0, 1.0, 0.5, 1.0 / 12.0, 9.81
    c1, c2, s2 = np.cos(q[:, 0]), np.cos(q[:, 1]), np.sin(q[:, 1])
    c12 = np.cos(q[:, 0] + q[:, 1])
    M11 = 2 * I + m * lc**2 + m * (l**2 + lc**2 + 2 * l * lc * c2)
    M12 = I + m * (lc**2 + l * lc * c2)
    M22 = I + m * lc**2
    hh = m * l * lc * s2  # Coriolis and centrifugal (Spong's h = -m l lc sin q2)
    inertial = np.column_stack([
        M11 * qdd[:, 0] + M12 * qdd[:, 1] - hh * (2 * qd[:, 0] * qd[:, 1] + qd[:, 1]**2),
        M12 * qdd[:, 0] + M22 * qdd[:, 1] + hh * qd[:, 0]**2])
    gravity = np.column_stack([(m * lc + m * l) * g * c1 + m * lc * g * c12, m * lc * g * c12])
    friction = np.array(cv) * qd + np.array(cc) * np.tanh(qd / BAND)
    rotor = np.array(r)**2 * np.array(Ir) * qdd

    np.testing.assert_allclose(parts.gravity, gravity, rtol=0, atol=1e-12 * 30)
    np.testing.assert_allclose(parts.inertial, inertial, rtol=0, atol=1e-12 * 30)
    np.testing.assert_allclose(parts.friction, friction, rtol=0, atol=1e-13)
    np.testing.assert_allclose(parts.rotor, rotor, rtol=0, atol=1e-13)
    assert np.abs(parts.friction).min() > 0 and np.abs(parts.rotor).max() > 0.5  # present


def test_parts_sum_to_the_inverse_dynamics_and_chunks_to_the_whole():
    """The PUMA with friction and drives on every joint: the four parts sum to
    `inverse_dynamics` to round-off; the chunked parts put together are the same."""
    robot = load_robot(ROBOTS / "puma560_saha.toml")
    robot = robot.with_links([replace(link, friction_viscous=0.8, friction_coulomb=1.5,
                                      gear_ratio=60.0, rotor_inertia=2e-4)
                              for link in robot.links])
    q, qd, qdd = states(np.random.default_rng(7), 300, 6, scale=2.0)
    parts = torque_parts(robot, q, qd, qdd)
    tau = inverse_dynamics(robot, q, qd, qdd)
    scale = np.abs(tau).max()
    assert np.abs(parts.total - tau).max() <= 1e-12 * scale
    assert np.abs(parts.sum_of(("gravity",)) - parts.gravity).max() == 0.0
    assert np.abs(parts.sum_of(()) ).max() == 0.0
    pieces = list(torque_parts_chunks(robot, q, qd, qdd, chunk=128))
    assert [done for done, _ in pieces] == [128, 256, 300]
    joined = TorqueParts.concatenate(p for _, p in pieces)
    for name in ("inertial", "gravity", "friction", "rotor"):
        np.testing.assert_array_equal(getattr(joined, name), getattr(parts, name))


def test_refused_for_loops_and_unknown_parts():
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    z = np.zeros((2, mech.nv))
    with pytest.raises(ArgumentError, match="loops"):
        torque_parts(mech, np.zeros((2, mech.nq)), z, z)
    robot = load_robot(ROBOTS / "two_link_planar.toml")
    parts = torque_parts(robot, np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)))
    with pytest.raises(ArgumentError, match="inertial, gravity, friction, rotor"):
        parts.sum_of(("drag",))
