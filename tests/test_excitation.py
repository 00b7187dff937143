"""The excitation optimisation (core.sim.excitation): a better conditioned regressor
than its start, within the joint limits; the condition number checked against an SVD
written here of the regressor's independent columns."""
from __future__ import annotations

import numpy as np

from armdyn.core import joint_torque_regressor, limit_violations, load_robot
from armdyn.core import optimise_excitation
from armdyn.core.sim.identification import base_parameters


def test_the_optimised_motion_is_better_conditioned_and_within_the_limits():
    robot = load_robot("robots/scara.toml")  # limits on all four joints, one prismatic
    found = optimise_excitation(robot, base_frequency=0.2, harmonics=2, samples=40,
                                max_iterations=20)
    assert found.condition_number < 0.5 * found.initial_condition_number  # 45.7 -> 6.0
    assert limit_violations(robot, found.motion) == []
    # the reported condition number, recomputed from the motion
    t = np.linspace(0.0, found.motion.duration, 40, endpoint=False)
    W = joint_torque_regressor(robot, *found.motion.sample(t)).reshape(40 * robot.n, -1)
    Wb = W[:, base_parameters(robot).independent]
    sv = np.linalg.svd(Wb / np.linalg.norm(Wb, axis=0), compute_uv=False)
    assert abs(found.condition_number / (sv[0] / sv[-1]) - 1) < 1e-9
