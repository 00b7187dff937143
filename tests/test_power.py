"""Power balance of a run (core/sim/power.py): dE/dt of the recorded energy against the power
of the joint forces and the damping."""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core import load_robot, run_inverse_dynamics, simulate
from armdyn.core.sim.power import (PowerBalanceStream, cumulative_work, energy_rate,
                                   power_balance, split_power)
from armdyn.core import simulate_chunks

PUMA = "robots/puma560_saha.toml"


@pytest.fixture(scope="module")
def puma():
    return load_robot(PUMA)


def test_energy_rate_and_work_of_known_signals():
    t = np.sort(np.random.default_rng(0).uniform(0.0, 2.0, 80))   # an uneven grid
    np.testing.assert_allclose(energy_rate(t, np.sin(3 * t)), 3 * np.cos(3 * t), atol=2e-5)
    np.testing.assert_allclose(energy_rate(t, t ** 3), 3 * t ** 2, atol=1e-9)  # exact: cubic
    W = cumulative_work(t, t ** 2)
    np.testing.assert_allclose(W, (t ** 3 - t[0] ** 3) / 3, atol=1e-12)
    assert np.isnan(energy_rate(t[:1], t[:1])).all()
    np.testing.assert_allclose(energy_rate(t[:2], 2 * t[:2]), [2, 2])


def test_undamped_free_fall_keeps_its_energy(puma):
    fall = simulate(puma, 2.0)
    pb = power_balance(fall)
    scale = np.abs(fall.energy[:, 0]).max() / 2.0       # kinetic energy over the run, J/s
    assert scale > 10
    assert np.all(pb.joint_power == 0) and np.all(pb.damping_power == 0)
    assert np.abs(pb.energy_rate).max() < 1e-7 * scale * 100
    assert np.abs(pb.drift).max() < 1e-6


def test_damped_free_fall_balances_with_the_damping_power(puma):
    c = np.array([2.0, 1.0, 3.0, 0.5, 0.5, 0.2])
    fall = simulate(puma, 2.0, damping=c)
    pb = power_balance(fall, damping=c)
    # the damping power is -sum c qd^2 and the joints do no work of their own
    np.testing.assert_allclose(pb.damping_power, -(c * fall.qd ** 2).sum(axis=1), rtol=1e-13)
    np.testing.assert_allclose(pb.joint_power, 0, atol=1e-12)
    big = np.abs(pb.damping_power).max()
    assert big > 10                                           # W: the energy really goes
    assert np.abs(pb.residual).max() < 1e-5 * big
    np.testing.assert_allclose(pb.energy_rate, pb.damping_power, atol=1e-5 * big)
    # the accumulated balance: E(t) - E(0) = work of the damping, to the integration error
    assert np.abs(pb.drift).max() < 1e-6 * abs(fall.energy[-1, 2] - fall.energy[0, 2]) * 100
    # without the coefficients, a free fall's applied force is all damping
    np.testing.assert_allclose(power_balance(fall).residual, pb.residual)


def test_the_residual_is_the_integration_error(puma):
    tight = power_balance(simulate(puma, 2.0, rtol=1e-10, atol=1e-10))
    loose = power_balance(simulate(puma, 2.0, rtol=1e-5, atol=1e-5))
    assert np.median(np.abs(loose.residual)) > 100 * np.median(np.abs(tight.residual))
    assert np.abs(loose.drift).max() > 100 * np.abs(tight.drift).max()


def test_driven_run_balances_with_the_joint_power(puma):
    run = run_inverse_dynamics(puma, puma.q_home, puma.q_home + 0.5, 1.0, dt_out=0.005)
    pb = power_balance(run)
    np.testing.assert_allclose(pb.joint_power, (run.qd * run.tau).sum(axis=1))
    assert np.all(pb.damping_power == 0)
    big = np.abs(pb.joint_power).max()
    assert np.abs(pb.residual).max() < 1e-3 * big    # finite differences only


def test_split_power_with_drive_and_damping(puma):
    # (the wrist's small inertia and the damping make a time constant of milliseconds:
    # the samples must resolve it for the finite differences)
    fall = simulate(puma, 0.3, tau=np.full(6, 1.0), damping=0.5, dt_out=0.0005)
    joint, damp = split_power(fall, 0.5)
    np.testing.assert_allclose(joint, fall.qd.sum(axis=1), atol=1e-12)   # tau_drive = 1
    np.testing.assert_allclose(damp, -0.5 * (fall.qd ** 2).sum(axis=1))
    pb = power_balance(fall, 0.5)
    assert np.abs(pb.residual).max() < 1e-4 * np.abs(joint).max()


def test_stream_matches_the_whole_run(puma):
    c = 1.5
    whole = power_balance(simulate(puma, 1.0, damping=c), damping=c)
    stream = PowerBalanceStream(damping=c)
    starts = []
    for chunk in simulate_chunks(puma, 1.0, damping=c, chunk_duration=0.03):
        starts.append(stream.append(chunk))
        stream.append(chunk)                           # a repeated chunk adds nothing
    got = stream.result()
    assert len(got) == len(whole) == 101
    np.testing.assert_allclose(got.t, whole.t)
    np.testing.assert_allclose(got.residual, whole.residual, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.drift, whole.drift, rtol=0, atol=1e-12)
    assert starts[0] == 0 and all(s >= 0 for s in starts)
    stream.reset()
    assert len(stream) == 0 and len(stream.result()) == 0


def test_times_must_increase(puma):
    fall = simulate(puma, 0.1)
    from armdyn.core import Trajectory
    twice = Trajectory.concatenate([fall, fall])
    with pytest.raises(ValueError, match="increasing"):
        power_balance(twice)


def test_stream_counts_friction_and_closes_the_balance(puma):
    from dataclasses import replace
    geared = puma.with_links([replace(link, friction_viscous=0.8, friction_coulomb=1.5,
                                      gear_ratio=60.0, rotor_inertia=2e-4)
                              for link in puma.links])
    q0 = puma.q_home + np.radians([0, 40, -30, 0, 20, 0])
    chunks = list(simulate_chunks(geared, 0.5, q0=q0, stops=False, chunk_duration=0.05))
    blind, stream = PowerBalanceStream(), PowerBalanceStream(model=geared)
    for chunk in chunks:
        blind.append(chunk)
        stream.append(chunk)
    got, without = stream.result(), blind.result()
    whole = power_balance(simulate(geared, 0.5, q0=q0, stops=False), model=geared)
    np.testing.assert_allclose(got.residual, whole.residual, rtol=0, atol=1e-12)
    # friction takes energy out; counted, the balance closes; ignored, it does not
    assert got.friction_dissipated > 0.0
    assert np.all(got.friction_power <= 0.0)
    assert abs(got.drift[-1]) < 1e-3 * got.friction_dissipated
    assert abs(without.drift[-1]) == pytest.approx(got.friction_dissipated, rel=1e-2)
