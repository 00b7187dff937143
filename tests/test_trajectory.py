"""Planned motion: the cycloidal trajectory of seed 001 eq. 22 and the inverse-dynamics run.

The trajectory is checked by its defining properties (end values, rest at both
ends, qd and qdd the derivatives of q, monotone travel), not by re-typing the
formula; the run is checked against per-sample calls of the core functions.
"""
from __future__ import annotations

import glob
import math
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from armdyn.core import (Trajectory, cycloidal_trajectory, energy, inverse_dynamics,
                         inverse_dynamics_chunks, output_grid, run_inverse_dynamics)
from armdyn.core import load_robot
from strategies import assert_close, fast, reals, robots, scale_of, seeds

ROBOTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robots")
# the serial-arm files (robots/ also holds mechanism files, tested in test_loops.py)
ROBOT_FILES = sorted(p for p in glob.glob(os.path.join(ROBOTS_DIR, "*.toml"))
                     if 'format = "armdyn-robot/1"' in open(p, encoding="utf-8").read())


@st.composite
def motions(draw):
    """(q0, qT, T): n in 1..8 joints, values in [-4, 4], duration 0.1..20 s."""
    n = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(seeds))
    q0, qT = rng.uniform(-4, 4, n), rng.uniform(-4, 4, n)
    if draw(st.booleans()):
        qT[0] = q0[0]  # a joint that does not move
    return q0, qT, draw(reals(0.1, 20.0))


@fast(100)
@given(motions())
def test_cycloidal_trajectory_ends(motion):
    q0, qT, T = motion
    q, qd, qdd = cycloidal_trajectory(q0, qT, T, np.array([0.0, T]))
    n = q0.size
    assert q.shape == qd.shape == qdd.shape == (2, n)
    speed = np.abs(qT - q0) / T  # the mean rate
    assert_close(q[0], q0, 1e-15, scale_of(q0, qT), "q(0)")
    assert_close(q[1], qT, 1e-14, scale_of(q0, qT), "q(T)")
    assert_close(qd, np.zeros((2, n)), 1e-14, scale_of(speed), "qd at the ends")
    assert_close(qdd, np.zeros((2, n)), 1e-14, scale_of(speed) * 2 * math.pi / T, "qdd at the ends")


@fast(100)
@given(motions(), seeds)
def test_cycloidal_rates_are_the_derivatives_of_q(motion, seed):
    q0, qT, T = motion
    rng = np.random.default_rng(seed)
    h = 1e-5 * T
    t = np.sort(rng.uniform(h, T - h, 20))
    q, qd, qdd = cycloidal_trajectory(q0, qT, T, t)
    qp, qdp, _ = cycloidal_trajectory(q0, qT, T, t + h)
    qm, qdm, _ = cycloidal_trajectory(q0, qT, T, t - h)
    speed = scale_of(qT - q0) / T
    w = 2 * math.pi / T
    # central differences: truncation h^2 q''' / 6, round-off eps |q| / h
    assert_close(qd, (qp - qm) / (2 * h), 1e-6, speed + scale_of(q0, qT) / T, "qd = dq/dt")
    assert_close(qdd, (qdp - qdm) / (2 * h), 1e-6, speed * w + speed / T, "qdd = dqd/dt")
    # rest-to-rest, monotone: qd has the sign of qT - q0 and q stays between the ends
    assert np.all(qd * np.sign(qT - q0) >= 0)
    lo, hi = np.minimum(q0, qT), np.maximum(q0, qT)
    slack = 1e-12 * (1 + scale_of(q0, qT))
    assert np.all(q >= lo - slack) and np.all(q <= hi + slack)


def test_cycloidal_trajectory_rests_outside_the_motion():
    q0, qT, T = np.array([0.0, 1.0]), np.array([math.pi, -2.0]), 10.0
    q, qd, qdd = cycloidal_trajectory(q0, qT, T, np.array([-1.0, 0.0, T, T + 5.0]))
    np.testing.assert_array_equal(q[0], q[1])
    np.testing.assert_array_equal(q[2], q[3])
    np.testing.assert_array_equal(qd[0], qd[1])
    np.testing.assert_array_equal(qdd[3], qdd[2])


def test_seed_001_puma_motion_reaches_pi_at_half_speed_midway():
    """Seed 001 Sec 2.5.1: every joint 0 -> pi in T = 10 s. By symmetry of the cycloid,
    q(T/2) = pi/2 and qd(T/2) is the peak rate, twice the mean rate pi / T."""
    q, qd, qdd = cycloidal_trajectory(np.zeros(6), np.full(6, math.pi), 10.0, np.array([5.0]))
    assert_close(q[0], np.full(6, math.pi / 2), 1e-14)
    assert_close(qd[0], np.full(6, 2 * math.pi / 10.0), 1e-14)
    assert_close(qdd[0], np.zeros(6), 1e-14, 1.0)


# ----------------------------------------------------------------------------------
# The inverse-dynamics run
# ----------------------------------------------------------------------------------

def _drain(gen):
    chunks = []
    while True:
        try:
            chunks.append(next(gen))
        except StopIteration as stop:
            return chunks, stop.value


FIELDS = ("t", "q", "qd", "qdd", "tau", "energy")


@fast(25)
@given(robots(max_links=8), seeds, st.integers(1, 50), st.booleans())
def test_inverse_dynamics_chunks_concatenate_to_the_run(robot, seed, chunk_samples, with_wrench):
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-2, 2, robot.n)
    qT = rng.uniform(-2, 2, robot.n)
    T = float(rng.uniform(0.5, 3.0))
    f_ext = rng.uniform(-5, 5, 6) if with_wrench else None
    chunks, whole = _drain(inverse_dynamics_chunks(robot, q0, qT, T, dt_out=0.02,
                                                   chunk_samples=chunk_samples, f_ext=f_ext))
    run = run_inverse_dynamics(robot, q0, qT, T, dt_out=0.02, f_ext=f_ext)
    assert all(0 < len(c) <= chunk_samples for c in chunks)
    joined = Trajectory.concatenate(chunks)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(joined, name), getattr(run, name), err_msg=name)
        np.testing.assert_array_equal(getattr(whole, name), getattr(run, name), err_msg=name)
    assert run.kind == "inverse-dynamics"
    np.testing.assert_array_equal(run.t, output_grid(T, 0.02))
    # the samples are the cycloid, and tau and energy are the core's at each sample
    q, qd, qdd = cycloidal_trajectory(q0, qT, T, run.t)
    np.testing.assert_array_equal(run.q, q)
    np.testing.assert_array_equal(run.qd, qd)
    np.testing.assert_array_equal(run.qdd, qdd)
    for s in range(0, len(run), 7):
        single = inverse_dynamics(robot, run.q[s], run.qd[s], run.qdd[s], f_ext=f_ext)
        assert_close(run.tau[s], single, 1e-13, scale_of(single) + 1.0, f"tau at sample {s}")
        assert_close(run.energy[s], energy(robot, run.q[s], run.qd[s]), 1e-13,
                     scale_of(run.energy[s]) + 1.0, f"energy at sample {s}")
    assert_close(run.q[0], q0, 1e-15, scale_of(q0) + 1.0)
    assert_close(run.q[-1], qT, 1e-13, scale_of(qT) + 1.0)


@pytest.mark.parametrize("path", ROBOT_FILES, ids=[os.path.basename(p) for p in ROBOT_FILES])
def test_bundled_robot_seed_001_motion(path):
    """Seed 001 Sec 2.5.1 motion on every bundled robot: each joint from home to home + pi
    (prismatic: + 0.1 m) in 10 s; torques are those of per-sample inverse dynamics,
    rest-to-rest torques at both ends are the gravity torques."""
    robot = load_robot(path)
    q0 = robot.q_home
    qT = q0 + np.where(robot.is_revolute, math.pi, 0.1)
    run = run_inverse_dynamics(robot, q0, qT, 10.0, dt_out=0.05)
    assert len(run) == 201 and run.t[-1] == 10.0
    assert np.all(np.isfinite(run.tau)) and np.all(np.isfinite(run.energy))
    tau = inverse_dynamics(robot, run.q, run.qd, run.qdd)
    assert_close(run.tau, tau, 1e-13, scale_of(tau) + 1.0)
    z = np.zeros(robot.n)
    assert_close(run.tau[0], inverse_dynamics(robot, q0, z, z), 1e-12, scale_of(tau) + 1.0)
    assert_close(run.tau[-1], inverse_dynamics(robot, qT, z, z), 1e-9, scale_of(tau) + 1.0)


@fast(30)
@given(seeds, st.integers(2, 300), st.integers(1, 8))
def test_at_interpolates_every_column_as_numpy_does(seed, samples, n):
    """Trajectory.at blends the two rows around t (one search for all joints): the values
    np.interp gives column by column, at sample times, between them and beyond the ends."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(1e-3, 0.1, samples))
    q = rng.normal(size=(samples, n))
    zeros = np.zeros((samples, n))
    traj = Trajectory(t=t, q=q, qd=zeros, qdd=zeros, tau=zeros,
                      energy=np.zeros((samples, 3)))
    times = np.concatenate([t[rng.integers(0, samples, 5)], rng.uniform(t[0], t[-1], 5),
                            [t[0] - 1.0, t[0], t[-1], t[-1] + 1.0]])
    for time in times:
        expected = [np.interp(time, t, q[:, j]) for j in range(n)]
        np.testing.assert_allclose(traj.at(float(time)), expected, rtol=1e-12,
                                   atol=1e-12 * np.abs(q).max())


# ----------------------------------------------------------------------------------
# Joining chunks: consecutive rows of one array without a copy, anything else copied
# ----------------------------------------------------------------------------------

@given(seed=seeds, width=st.integers(0, 5), cuts=st.lists(st.integers(0, 40), max_size=6))
@fast(50)
def test_joined_rows_equal_numpy_concatenate(seed, width, cuts):
    """Views of consecutive rows (some empty) join into a view of those rows; rows out
    of order, a gap, or a copy among them give a new array. Always equal to NumPy's."""
    from armdyn.core.sim.trajectory import joined_rows
    rng = np.random.default_rng(seed)
    column = rng.normal(size=(40, width)) if width else rng.normal(size=40)
    edges = [0, *sorted(cuts), 40]
    parts = [column[a:b] for a, b in zip(edges, edges[1:])]
    joined = joined_rows(parts)
    np.testing.assert_array_equal(joined, np.concatenate(parts))
    if width and sum(len(p) > 0 for p in parts) > 1:
        assert np.shares_memory(joined, column)  # no copy
    swapped = parts[::-1]
    if sum(len(p) > 0 for p in parts) > 1:
        np.testing.assert_array_equal(joined_rows(swapped), np.concatenate(swapped))
        assert not np.shares_memory(joined_rows(swapped), column)
    gapped = [column[0:10], column[11:20]]
    np.testing.assert_array_equal(joined_rows(gapped), np.concatenate(gapped))
    assert not np.shares_memory(joined_rows(gapped), column)
    mixed = [column[0:10], column[10:20].copy()]
    assert not np.shares_memory(joined_rows(mixed), column)
