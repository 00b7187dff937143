"""The pull (core.sim.pull): a point spring-damper from a link to a target inside the
simulation's right-hand side, checked against statics, forward kinematics, energy and
the external-wrench path of the forward dynamics."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from armdyn.core import (PointPull, forward_dynamics, forward_kinematics, gravity_torques,
                         load_robot, simulate, simulate_chunks)
from armdyn.core.sim.power import power_balance
from armdyn.core.kernels.pull import PULL_AT, PULL_FORCE, PULL_LINK, PULL_POWER, PULL_TARGET
from armdyn.core.sim.pull import point_in_link
from armdyn.core.io.results_io import trajectory_csv_text, trajectory_header
from armdyn.core import Trajectory

ROBOTS = Path(__file__).resolve().parents[1] / "robots"


@pytest.fixture(scope="module")
def two_link():
    return load_robot(ROBOTS / "two_link_planar.toml")


@pytest.fixture(scope="module")
def puma():
    return load_robot(ROBOTS / "puma560_saha.toml")


def point_of(model, q, link, r):
    """p = o_i + Q_i r from the public forward kinematics."""
    frame = forward_kinematics(model, q).frames[link]
    return frame[:3, 3] + frame[:3, :3] @ r


def point_jacobian(model, q, link, r, h=1e-6):
    """dp/dq (3, n) by central differences of `point_of`."""
    J = np.empty((3, q.size))
    for j in range(q.size):
        dq = np.zeros(q.size)
        dq[j] = h
        J[:, j] = (point_of(model, q + dq, link, r) - point_of(model, q - dq, link, r)) / (2 * h)
    return J


def test_settles_where_spring_and_gravity_balance(two_link):
    """Damped, the arm comes to rest where tau_gravity(q) = J(q)^T F, F = k (x* - p)."""
    r = np.array([-0.3, 0.05, 0.0])  # a point of the forearm off its frame origin
    target = np.array([0.8, 0.9, 0.0])
    k = 400.0
    pull = PointPull()
    pull.grab(2, r, target, k, 5.0)
    traj = simulate(two_link, 12.0, q0=[-0.5, 0.3], damping=2.0, pull=pull)
    q = traj.q[-1]
    assert np.abs(traj.qd[-1]).max() < 1e-6  # at rest
    p = point_of(two_link, q, 2, r)
    F = k * (target - p)
    J = point_jacobian(two_link, q, 2, r)
    g = gravity_torques(two_link, q)
    np.testing.assert_allclose(g, J.T @ F, atol=1e-6 * np.abs(g).max())
    assert np.linalg.norm(target - p) > 0.01  # gravity really stretches the spring
    # the record agrees
    np.testing.assert_allclose(traj.pull[-1, PULL_AT], p, atol=1e-9)
    np.testing.assert_allclose(traj.pull[-1, PULL_FORCE], F, atol=1e-6 * np.abs(F).max())


def test_recorded_force_is_spring_and_damper_at_the_point(puma):
    """F = k (x* - p) - c v_p with p from the forward kinematics of the recorded q and v_p
    by finite differences: along the recorded qd, and in time between samples."""
    r = np.array([0.1, -0.05, 0.02])
    target = np.array([0.4, 0.3, 0.5])
    k, c = 800.0, 40.0
    pull = PointPull()
    pull.grab(3, r, target, k, c)
    traj = simulate(puma, 0.4, pull=pull, dt_out=1e-3, stops=False)
    assert np.all(traj.pull[:, PULL_LINK] == 3)
    h = 1e-7
    for s in range(5, len(traj) - 5, 37):
        q, qd = traj.q[s], traj.qd[s]
        p = point_of(puma, q, 3, r)
        v = (point_of(puma, q + h * qd, 3, r) - point_of(puma, q - h * qd, 3, r)) / (2 * h)
        expected = k * (target - p) - c * v
        np.testing.assert_allclose(traj.pull[s, PULL_AT], p, atol=1e-12)
        np.testing.assert_allclose(traj.pull[s, PULL_TARGET], target)
        np.testing.assert_allclose(traj.pull[s, PULL_FORCE], expected,
                                   atol=1e-6 * np.abs(expected).max())
        assert traj.pull[s, PULL_POWER] == pytest.approx(expected @ v, rel=1e-6, abs=1e-9)
        # the velocity in time, from the neighbouring samples' points
        v_t = (point_of(puma, traj.q[s + 1], 3, r) - point_of(puma, traj.q[s - 1], 3, r)) \
            / (traj.t[s + 1] - traj.t[s - 1])
        np.testing.assert_allclose(v_t, v, atol=1e-3 * max(1.0, np.abs(v).max()))
    assert np.abs(traj.q[-1] - traj.q[0]).max() > 0.05  # it moved


def test_spring_energy_is_conserved_with_the_arm(two_link):
    """c = 0, fixed target, no joint damping or stops: E_arm + k |x* - p|^2 / 2 is constant."""
    r = np.array([-0.2, 0.0, 0.0])
    target = np.array([1.2, -0.6, 0.0])
    k = 150.0
    pull = PointPull()
    pull.grab(2, r, target, k, 0.0)
    traj = simulate(two_link, 3.0, q0=[0.4, 0.2], pull=pull, stops=False, dt_out=1e-3)
    stretch = traj.pull[:, PULL_TARGET] - traj.pull[:, PULL_AT]
    spring = 0.5 * k * np.einsum("si,si->s", stretch, stretch)
    arm = traj.energy[:, 2]
    total = arm + spring
    scale = np.ptp(arm)
    assert scale > 1.0  # the arm's own energy swings: the pull works on it
    assert np.ptp(total) < 1e-6 * scale
    # the power balance counts the pull's power (the residual: finite differences only)
    pb = power_balance(traj, damping=0.0)
    assert np.abs(pb.pull_power).max() > 100.0
    assert np.abs(pb.residual[5:-5]).max() < 1e-5 * np.abs(pb.pull_power).max()
    assert np.abs(pb.drift).max() < 1e-6 * scale


def test_pull_is_the_external_wrench_at_every_sample(puma):
    """The recorded qdd equals the forward dynamics with the pull's wrench passed as a
    constant f_ext = [(p - o_i) x F; F] on link i (the core's f_ext convention)."""
    r = np.array([0.05, 0.1, 0.0])
    pull = PointPull()
    pull.grab(2, r, [0.2, 0.5, 0.6], 600.0, 30.0)
    traj = simulate(puma, 0.3, pull=pull, stops=False, dt_out=0.02)
    for s in range(0, len(traj), 3):
        q = traj.q[s]
        o = forward_kinematics(puma, q).frames[2][:3, 3]
        p, F = traj.pull[s, PULL_AT], traj.pull[s, PULL_FORCE]
        w = np.zeros((puma.n, 6))
        w[1, :3] = np.cross(p - o, F)
        w[1, 3:] = F
        qdd = forward_dynamics(puma, q, traj.qd[s], traj.tau[s], f_ext=w)
        np.testing.assert_allclose(traj.qdd[s], qdd, rtol=1e-9, atol=1e-9)
        free = forward_dynamics(puma, q, traj.qd[s], traj.tau[s])
        assert np.abs(free - qdd).max() > 1e-3  # the wrench matters


def test_pull_held_still_matches_a_constant_wrench(two_link):
    """A point on link 1 at joint 1's axis stays put: the pull's force k (x* - p) is then
    constant, and so is its wrench (r = 0 is link 1's frame origin only if that is on the
    axis, so use the axis point O_1 = base origin with r in link 1's frame). The whole run
    equals one with that constant f_ext."""
    q0 = np.array([0.3, -0.2])
    axis_point = np.zeros(3)  # O_1: joint 1's axis passes through the base origin
    r = point_in_link(two_link, q0, 1, axis_point)
    target = np.array([0.0, 0.5, 0.0])
    k = 100.0
    F = k * (target - axis_point)  # p never moves, v_p = 0: no damping force either
    pull = PointPull()
    pull.grab(1, r, target, k, 10.0)
    a = simulate(two_link, 1.0, q0=q0, pull=pull, stops=False)
    np.testing.assert_allclose(a.pull[:, PULL_AT], np.zeros((len(a), 3)), atol=1e-12)
    np.testing.assert_allclose(a.pull[:, PULL_FORCE], np.tile(F, (len(a), 1)), atol=1e-9)
    # as f_ext: the force through the base origin, moment about link 1's frame origin o_1
    # -- which moves: so compare accelerations sample by sample through f_ext, and the
    # run against the pull-free one (a force through the axis does nothing to joint 1
    # but is not nothing: it is carried by the joint)
    b = simulate(two_link, 1.0, q0=q0, stops=False)
    np.testing.assert_allclose(a.q, b.q, atol=1e-9)
    o = np.array([forward_kinematics(two_link, q).frames[1][:3, 3] for q in a.q])
    w = np.zeros((len(a), two_link.n, 6))
    w[:, 0, :3] = np.cross(-o, F)
    w[:, 0, 3:] = F
    qdd = np.array([forward_dynamics(two_link, a.q[s], a.qd[s], a.tau[s], f_ext=w[s])
                    for s in range(len(a))])
    np.testing.assert_allclose(a.qdd, qdd, atol=1e-9)


def test_target_change_takes_effect_from_the_next_chunk(two_link):
    pull = PointPull()
    gen = simulate_chunks(two_link, 1.0, pull=pull, chunk_duration=0.1,
                          max_wall_per_chunk=10.0, stops=False)
    first = next(gen)
    assert np.all(first.pull == 0.0)  # not pulling yet
    first_target = np.array([1.0, 1.0, 0.0])
    pull.grab(2, [0.0, 0.0, 0.0], first_target, 200.0, 10.0)
    second = next(gen)
    assert np.all(second.pull[:, PULL_LINK] == 2)
    np.testing.assert_allclose(second.pull[:, PULL_TARGET],
                               np.tile(first_target, (len(second), 1)))
    pull.move([-1.0, 1.0, 0.0])
    third = next(gen)
    np.testing.assert_allclose(third.pull[:, PULL_TARGET],
                               np.tile([-1.0, 1.0, 0.0], (len(third), 1)))
    pull.release()
    fourth = next(gen)
    assert np.all(fourth.pull == 0.0)
    pull.move([5.0, 5.0, 5.0])  # released: ignored
    rest = list(gen)
    assert all(np.all(part.pull == 0.0) for part in rest)
    whole = Trajectory.concatenate([first, second, third, fourth, *rest])
    assert whole.pull.shape == (len(whole), 11)
    # the spring really pulled: the second chunk's force points toward the target
    F = second.pull[-1, PULL_FORCE]
    assert F @ (first_target - second.pull[-1, PULL_AT]) > 0


def test_no_pull_no_column_and_csv(two_link):
    traj = simulate(two_link, 0.2, stops=False)
    assert traj.pull is None
    assert not any(h.startswith("pull") for h in trajectory_header(traj, two_link))
    pull = PointPull()
    pull.grab(1, [0.0, 0.1, 0.0], [0.5, 0.5, 0.0], 50.0)
    pulled = simulate(two_link, 0.2, pull=pull, stops=False)
    header = trajectory_header(pulled, two_link)
    assert header[-11:] == ["pull link", "pull point x [m]", "pull point y [m]",
                            "pull point z [m]", "pull target x [m]", "pull target y [m]",
                            "pull target z [m]", "pull force x [N]", "pull force y [N]",
                            "pull force z [N]", "pull power [W]"]
    text = trajectory_csv_text(pulled, two_link)
    table = np.loadtxt(text.splitlines()[3:], delimiter=",")
    np.testing.assert_allclose(table[:, -11:], pulled.pull, rtol=1e-9, atol=1e-12)
    # concatenating a pulled part with one that has none fills zeros
    joined = Trajectory.concatenate([traj, pulled])
    assert np.all(joined.pull[:len(traj)] == 0.0)
    np.testing.assert_array_equal(joined.pull[len(traj):], pulled.pull)


def test_grab_checks_its_arguments():
    pull = PointPull()
    with pytest.raises(ValueError):
        pull.grab(0, [0, 0, 0], [0, 0, 0], 10.0)
    with pytest.raises(ValueError):
        pull.grab(1, [0, 0, 0], [0, 0, np.nan], 10.0)
    with pytest.raises(ValueError):
        pull.grab(1, [0, 0, 0], [0, 0, 0], -1.0)
    assert not pull.active


def test_a_body_at_rest_is_pulled_from_the_next_chunk_not_a_long_step_later():
    """A floating body at rest in zero gravity: the integrator's steps would grow to
    seconds; with a pull no step is longer than a chunk, so a grab acts at once."""
    from armdyn.core import load_mechanism
    robot = load_mechanism(ROBOTS / "space_robot.toml")
    pull = PointPull()
    gen = simulate_chunks(robot, 2.0, pull=pull, chunk_duration=0.05, max_wall_per_chunk=10.0)
    first, second = next(gen), next(gen)  # a chunk ends within a step (<= a chunk) late
    assert first.t[-1] <= 0.1 + 1e-12 and second.t[-1] <= 0.2 + 1e-12
    pull.grab(1, [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 100.0, 1.0)
    third = next(gen)
    assert third.t[-1] <= 0.3 + 1e-12 and np.all(third.pull[:, PULL_LINK] == 1)
    assert third.linear_momentum[-1, 0] > 0.0  # pulled along +x
    gen.close()
