"""Compile (or load from numba's cache) every dynamics kernel before it is needed.

The first call of a numba kernel compiles it: about a minute for the whole core
on a fresh machine, well under a second once numba's on-disk cache holds it. An
application calls `warm_up()` once at start, off its GUI thread, so that no user
action ever waits for the compiler.
"""
from __future__ import annotations

import numpy as np

from .dynamics import (articulated_body_inertias, composite_body_inertias, convective_torques,
                       energy, forward_dynamics, gravity_torques, inverse_dynamics, mass_matrix,
                       udu_factors)
from .kinematics import forward_kinematics
from .robot import JointType, Link, Robot
from .simulation import simulate
from .trajectory import run_inverse_dynamics


def _tiny_robot() -> Robot:
    """A revolute-prismatic arm: both joint types, so every branch is compiled."""
    links = (Link(JointType.REVOLUTE, a=0.3, alpha=np.pi / 2, mass=1.0, com=(-0.15, 0, 0),
                  inertia=(0.01, 0.02, 0.02, 0, 0, 0)),
             Link(JointType.PRISMATIC, b=0.2, mass=0.5, com=(0, 0, -0.1),
                  inertia=(0.01, 0.01, 0.005, 0, 0, 0)))
    return Robot("warm-up", links)


def warm_up() -> None:
    """Run every public algorithm once on a tiny arm (single states and batches)."""
    robot = _tiny_robot()
    q, qd = robot.q_home, np.array([0.1, -0.2])
    forward_kinematics(robot, q)
    tau = inverse_dynamics(robot, q, qd, qd)
    for method in ("denoc", "composite"):
        forward_dynamics(robot, q, qd, tau, method=method)
    forward_dynamics(robot, np.tile(q, (2, 1)), np.tile(qd, (2, 1)), np.tile(tau, (2, 1)))
    mass_matrix(robot, q)
    udu_factors(robot, q)
    articulated_body_inertias(robot, q)
    composite_body_inertias(robot, q)
    gravity_torques(robot, q)
    convective_torques(robot, q, qd)
    energy(robot, q, qd)
    run_inverse_dynamics(robot, q, q + 0.1, 0.1, dt_out=0.05)
    simulate(robot, 0.02, dt_out=0.01)
    simulate(robot, 0.02, dt_out=0.01, tau=lambda t, q, qd: np.zeros(2))
