"""Issue #20: the window's penalty free fall works for every bundled closed chain: the
step comes from the mechanism's frequencies (`core.sim.penalty.penalty_step`), a step
whose Newton iteration diverges is taken again in halves, and the step and the Newton
iterations are set in the Run panel."""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core.io.model_files import load_model
from armdyn.core.sim.penalty import penalty_step
from armdyn.gui.jobs.runs import FallMethod, RunOutcome

from gui_helpers import ROBOTS

pytestmark = pytest.mark.gui

CLOSED_CHAINS = ["fourbar", "slider_crank", "fivebar_saha", "carpet_scraper_saha", "bricard"]


@pytest.mark.parametrize("name", CLOSED_CHAINS)
def test_the_penalty_fall_of_every_bundled_closed_chain_finishes(make_window, qtbot, name):
    """3.5 s: the falls failed within 0.6-3.2 s at the fixed h = 0.01 s."""
    window = make_window(ROBOTS / f"{name}.toml")
    panel = window.run_panel
    panel.set_fall_method(FallMethod.PENALTY)
    ended = []
    window.session.run_ended.connect(ended.append)
    panel.start_free_fall(3.5)
    qtbot.waitUntil(lambda: bool(ended), timeout=120000)
    result = ended[0]
    assert result.outcome is RunOutcome.FINISHED, result.message
    assert result.trajectory.t[-1] == pytest.approx(3.5)
    spec = result.spec
    assert spec.penalty and spec.step == pytest.approx(penalty_step(load_model(
        ROBOTS / f"{name}.toml")))


def test_the_step_and_the_iterations_are_set_in_the_run_panel(make_window, qtbot):
    window = make_window(ROBOTS / "fourbar.toml")
    panel, page = window.run_panel, window.run_panel.free_fall
    panel.set_fall_method(FallMethod.PENALTY)
    default = page.penalty_step()
    assert 0 < default < 0.01  # the four-bar's frequency asks for less than 0.01 s
    page.set_penalty_step(0.002)
    page.set_newton_iterations(4)
    panel._tabs.setCurrentIndex(1)
    spec = panel.spec()
    assert spec.step == pytest.approx(0.002) and spec.newton_iterations == 4
    # the user's step stays over an edit of the tables; a new file gets its own
    window.session.set_model(window.session.model)
    assert page.penalty_step() == pytest.approx(0.002)
    window.files.load(ROBOTS / "bricard.toml")
    assert page.penalty_step() == pytest.approx(penalty_step(load_model(
        ROBOTS / "bricard.toml")))
    # the multipliers method has no step: the fields are greyed out
    panel.set_fall_method(FallMethod.MULTIPLIERS)
    assert not page._step.isEnabled() and not page._iterations.isEnabled()
    assert np.isfinite(page.penalty_step())
