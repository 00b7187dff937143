"""Issue #20: the penalty method's step from the mechanism's frequencies
(`penalty_step`), and its step control (a step whose Newton iteration diverges is
taken again in halves), on every bundled closed chain."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from armdyn.core.io.model_files import load_model
from armdyn.core.sim.penalty import (DEFAULT_H, MAX_HALVINGS, natural_frequencies,
                                     penalty_simulate, penalty_step)

ROOT = Path(__file__).resolve().parents[1]

CLOSED_CHAINS = ["fourbar", "slider_crank", "fivebar_saha", "carpet_scraper_saha", "bricard"]


def model(name):
    return load_model(ROOT / "robots" / f"{name}.toml")


def test_the_frequency_of_a_pendulum_is_sqrt_g_over_l():
    """A two-link planar arm hanging down, the second link pinned straight: its lowest
    frequency is near a compound pendulum's, the highest above it."""
    omega = natural_frequencies(model("two_link_planar"), [-np.pi / 2, 0.0])
    assert omega.shape == (2,) and np.all(omega > 0) and np.all(np.diff(omega) >= 0)


@pytest.mark.parametrize("name", CLOSED_CHAINS)
def test_the_step_from_the_frequencies_runs_every_bundled_closed_chain(name):
    mech = model(name)
    h = penalty_step(mech)
    assert 0 < h <= DEFAULT_H
    assert h * natural_frequencies(mech).max() <= 0.0125 * (1 + 1e-9)
    stats: dict = {}
    run = penalty_simulate(mech, 3.5, h=h, dt_out=0.01, stats=stats)
    assert run.t[-1] == pytest.approx(3.5)
    energy = run.energy.sum(axis=1)
    drift = np.ptp(energy) / np.abs(energy).max()
    # the scraper's three cut joints keep 17 % whatever h (the method's, not the step's)
    assert drift < (0.2 if name == "carpet_scraper_saha" else 0.01), drift


def test_step_control_halves_the_steps_newton_cannot_take():
    """The four-bar at h = 0.01 s failed at t = 2.95 s; now those steps are halved."""
    stats: dict = {}
    run = penalty_simulate(model("fourbar"), 3.5, h=0.01, dt_out=0.01, stats=stats)
    assert run.t[-1] == pytest.approx(3.5) and len(run) == 351
    assert 0 < stats["halved_steps"] and MAX_HALVINGS >= 1
    np.testing.assert_allclose(np.diff(run.t), 0.01, rtol=1e-9)  # samples on the grid
