"""The excitation optimisation (core.sim.excitation): a better conditioned regressor
than its start, within the joint limits; the condition number checked against an SVD
written here of the regressor's independent columns; rate and torque limits checked on
a grid five times finer than the optimiser's own, the torques from inverse_dynamics."""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core import (Cancelled, MotionError, inverse_dynamics, joint_torque_regressor,
                         limit_violations, load_robot, optimise_excitation)
from armdyn.core.sim.identification import base_parameters

SCARA = load_robot("robots/scara.toml")  # limits on all four joints, one prismatic
#: The optimisation of the first test, run once (about 2 s).
QUICK = dict(base_frequency=0.2, harmonics=2, samples=40, max_iterations=20)


@pytest.fixture(scope="module")
def unconstrained():
    return optimise_excitation(SCARA, **QUICK)


def test_the_optimised_motion_is_better_conditioned_and_within_the_limits(unconstrained):
    robot, found = SCARA, unconstrained
    assert found.condition_number < 0.5 * found.initial_condition_number  # 45.7 -> 6.0
    assert limit_violations(robot, found.motion) == []
    # the reported condition number, recomputed from the motion
    t = np.linspace(0.0, found.motion.duration, 40, endpoint=False)
    W = joint_torque_regressor(robot, *found.motion.sample(t)).reshape(40 * robot.n, -1)
    Wb = W[:, base_parameters(robot).independent]
    sv = np.linalg.svd(Wb / np.linalg.norm(Wb, axis=0), compute_uv=False)
    assert abs(found.condition_number / (sv[0] / sv[-1]) - 1) < 1e-9


def _holding_torques(robot):
    """|tau| (n,) that holds the middle of the joint ranges at rest against gravity."""
    n = robot.n
    q0 = robot.joint_limits.mean(axis=1)
    return np.abs(inverse_dynamics(robot, q0, np.zeros(n), np.zeros(n)))


def test_rate_and_torque_limits_are_kept_and_named(unconstrained):
    """Limits at half the unconstrained optimum's peak rates and at 70 % of its peak
    torques (not below holding the middle pose): the new motion keeps them all, checked
    here at 10,001 times with this test's own inverse dynamics."""
    holding = _holding_torques(SCARA)
    rate_limit = 0.5 * unconstrained.peak_rate
    torque_limit = np.maximum(0.7 * unconstrained.peak_torque, 1.05 * holding + 1e-3)
    found = optimise_excitation(SCARA, **QUICK, rate_limit=rate_limit,
                                torque_limit=torque_limit)
    assert found.limits == ("joint limits", "rate limits", "torque limits")
    t = np.linspace(0.0, found.motion.duration, 10_001)
    q, qd, qdd = found.motion.sample(t)
    assert np.all(np.abs(qd) <= rate_limit * (1 + 1e-4))  # between the check times
    tau = np.abs(inverse_dynamics(SCARA, q, qd, qdd))
    assert np.all(tau <= torque_limit * (1 + 1e-4))
    assert limit_violations(SCARA, found.motion) == []
    # the report's peaks are the motion's
    assert np.allclose(found.peak_rate, np.abs(qd).max(axis=0), rtol=1e-3)
    assert np.allclose(found.peak_torque, tau.max(axis=0), rtol=1e-3)
    # it starts within the limits (the random start shrunk) and improves from there
    assert found.condition_number < 0.5 * found.initial_condition_number  # 2.8e5 -> 31


def test_a_torque_limit_below_holding_the_middle_pose_is_refused(unconstrained):
    """No motion about q0 keeps a joint force that holding q0 already exceeds: the error
    names the joint and the torque limit."""
    assert np.allclose(unconstrained.motion.q0, SCARA.joint_limits.mean(axis=1))
    holding = _holding_torques(SCARA)
    j = int(np.argmax(holding))  # the vertical prismatic joint: m g
    assert holding[j] > 1.0
    limit = np.full(SCARA.n, 1e6)
    limit[j] = 0.5 * holding[j]
    with pytest.raises(MotionError, match=rf"joint {j + 1} .* torque limit") as err:
        optimise_excitation(SCARA, **QUICK, torque_limit=limit)
    assert err.value.what == "torque limit" and err.value.joint == j + 1


def test_progress_follows_the_iterations_and_a_cancel_stops_the_optimiser():
    seen = []
    with pytest.raises(Cancelled, match="after iteration 3"):
        optimise_excitation(SCARA, **QUICK, progress=seen.append,
                            cancel=lambda: len(seen) >= 3)
    assert seen == [1 / 20, 2 / 20, 3 / 20]
