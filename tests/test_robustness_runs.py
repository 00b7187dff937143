"""Robustness, round 2: no run without a budget, and end stops counted by the integrator.

A run's wall time is budgeted (`core.sim.driver`): one that its pace projects past the
budget stops within about a second with a SimulationError that names the time, the
step size and the fastest joint and keeps the samples so far; ordinary runs are not
touched by it.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import (ArgumentError, SimulationError, load_mechanism, load_robot, simulate,
                         simulate_chunks)
from armdyn.core.sim.driver import DEFAULT_MAX_WALL_TIME, real_time

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
PUMA = load_robot(ROBOTS / "puma560_saha.toml")


@pytest.mark.parametrize("damping", [1e6, 1e300])  # (1e5: ~90 s, within the budget)
def test_a_stiff_run_stops_at_once_with_its_samples(damping):
    start = time.perf_counter()
    with pytest.raises(SimulationError) as stopped:
        simulate(PUMA, 10.0, damping=damping)
    took = time.perf_counter() - start
    err = stopped.value
    assert took < 5.0
    assert f"more than its wall-time budget of {DEFAULT_MAX_WALL_TIME:g} s" in str(err)
    assert "the step size is " in str(err) and "the fastest joint is " in str(err)
    assert err.joint is not None and 1 <= err.joint <= 6
    assert 0 < err.time < 10.0
    assert len(err.result) >= 1 and err.result.t[0] == 0.0  # the samples so far
    assert np.all(err.result.t <= err.time)


def test_the_budget_is_the_callers():
    with pytest.raises(SimulationError, match=r"wall-time budget of 0\.3 s"):
        simulate(PUMA, 10.0, damping=1e4, max_wall_time=0.3)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ArgumentError, match="max_wall_time"):
            simulate(PUMA, 0.1, max_wall_time=bad)


def test_ordinary_runs_are_untouched_by_the_budget():
    """The bundled models' runs finish well within it, also with a tight budget: a 10 s
    PUMA fall takes milliseconds; a slow mechanism (the Bricard) a fraction of a second."""
    a = simulate(PUMA, 10.0)
    b = simulate(PUMA, 10.0, max_wall_time=1.0)
    assert np.array_equal(a.q, b.q)
    bricard = load_mechanism(ROBOTS / "bricard.toml")
    assert len(simulate(bricard, 2.0, max_wall_time=DEFAULT_MAX_WALL_TIME)) == 201


def test_time_spent_between_chunks_is_not_the_runs():
    """A paced run (`real_time`) sleeps between chunks for as long as it simulates: 1 s
    of wall time for 1 s of motion, far beyond a budget of 0.2 s of stepping."""
    chunks = simulate_chunks(PUMA, 1.0, chunk_duration=1 / 30, max_wall_time=0.2)
    start = time.perf_counter()
    parts = list(real_time(chunks))
    assert time.perf_counter() - start >= 0.9
    assert parts[-1].t[-1] == 1.0


# ----------------------------------------------------------------------------------
# End stops: hits counted by the integrator, round-off is not a hit
# ----------------------------------------------------------------------------------

def stanford_with_boom_limits(lower: float = -0.05, upper: float = 0.05):
    """The Stanford arm (Saha 2009, Table 4) whose boom (the prismatic joint 3, the
    quill) slides in [lower, upper] m, its only limits (the file's others removed: the
    wrist would meet its stop too)."""
    import dataclasses
    from armdyn.core import Robot
    arm = load_robot(ROBOTS / "stanford_saha2009.toml")
    links = [dataclasses.replace(link, limits=None) for link in arm.links]
    links[2] = dataclasses.replace(links[2], limits=(lower, upper))
    return Robot(name="Stanford arm, boom limited", links=tuple(links), gravity=arm.gravity)


def elastic_boom_run(dt_out: float):
    from armdyn.core import JointStops
    arm = stanford_with_boom_limits()
    qd0 = np.zeros(6)
    qd0[2] = 0.5  # m/s: the boom slides out onto its upper stop
    stops = JointStops(frequency=5000.0, damping=0.0)  # stiff and elastic
    return arm, simulate(arm, 0.5, qd0=qd0, dt_out=dt_out, stops=stops)


def test_a_bounce_between_two_samples_is_reported():
    """The issue: with 5,000 Hz stops the quill's bounce (a tenth of a millisecond)
    happens between samples and the summary named no stop."""
    from armdyn.core.sim.stops import _contacts_of_samples, stop_report
    arm, run = elastic_boom_run(0.01)
    assert not run.stop_forces.any()  # no sample shows the contact ...
    (hit,) = stop_report(arm, run)    # ... the integrator's count does
    assert hit.startswith("joint 3 ('boom') hit its upper stop (0.05 m) ")
    # the oracle: samples fine enough to resolve every contact (10 per contact) show
    # the same hits, the same peak force and depth (to the samples' resolution)
    _, fine = elastic_boom_run(1e-5)
    seen = _contacts_of_samples(arm, fine)
    counted = run.stop_contacts
    assert counted[2, 1, 0] == seen[2, 1, 0] >= 1
    assert counted[2, 0, 0] == seen[2, 0, 0]
    np.testing.assert_allclose(counted[2, :, 1:], seen[2, :, 1:], rtol=0.02)
    assert np.array_equal(fine.stop_contacts, counted)  # the count never depends on dt_out


def test_an_elastic_stop_dissipates_nothing():
    """The issue: an elastic stop reported a negative dissipation (-2.2e-8 J)."""
    from armdyn.core.sim.stops import ENERGY_RESOLUTION, dissipated_energy
    arm, run = elastic_boom_run(0.01)
    E = run.energy
    assert E[0, 2] - E[-1, 2] != 0.0            # the integrator's error ...
    scale = np.abs(E[:, 0]).max() + np.ptp(E[:, 1])
    assert abs(E[0, 2] - E[-1, 2]) < ENERGY_RESOLUTION * scale
    assert dissipated_energy(run) == 0.0        # ... is not dissipation
    damped = simulate(arm, 0.5, qd0=np.array([0, 0, 0.5, 0, 0, 0.0]))  # default stops: d = 5
    assert dissipated_energy(damped) == pytest.approx(damped.energy[0, 2] - damped.energy[-1, 2])
    assert dissipated_energy(damped) > 1e-3


def test_round_off_at_a_limit_the_joint_starts_on_is_not_a_hit():
    """The issue: the humanoid reported 'hits' of micro-newton metres at the forearms'
    limits, which its home pose sits on; its shanks and feet, which gravity presses onto
    their stops, are hit."""
    from armdyn.core.kernels.passive import STOP_HIT_DEPTH
    from armdyn.core.sim.stops import stop_report
    humanoid = load_mechanism(ROBOTS / "humanoid.toml")
    run = simulate(humanoid, 1.0)
    report = stop_report(humanoid, run)
    assert not any("forearm" in line for line in report)
    assert any("shank" in line for line in report)
    forearm = humanoid.joint_names.index("left forearm")
    lo = humanoid.joint_limits[forearm, 0]
    assert humanoid.q_home[forearm] == lo                    # it starts on its limit
    assert run.stop_contacts[forearm, 0, 0] == 0              # not a hit
    assert 0 < run.stop_contacts[forearm, 0, 2] < STOP_HIT_DEPTH  # round-off past it


def test_a_start_past_a_limit_is_a_hit_and_the_partial_result_keeps_the_count():
    scara = load_robot(ROBOTS / "scara.toml")
    q0 = scara.q_home.copy()
    q0[2] = 0.25  # 0.04 m past the quill's upper limit
    run = simulate(scara, 0.2, q0=q0)
    assert run.stop_contacts[2, 1, 0] >= 1
    assert run.stop_contacts[2, 1, 2] == pytest.approx(0.04)
    chunks = list(simulate_chunks(scara, 0.2, q0=q0, chunk_duration=0.05))
    assert all(c.stop_contacts is not None for c in chunks)
    assert np.array_equal(chunks[-1].stop_contacts, run.stop_contacts)
    assert simulate(scara, 0.1, stops=False).stop_contacts is None
