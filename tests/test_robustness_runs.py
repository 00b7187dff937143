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


@pytest.mark.parametrize("damping", [1e5, 1e300])
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
