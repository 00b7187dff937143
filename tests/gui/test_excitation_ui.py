"""The Run panel's "Optimise for identification" (gui/panels/run_motion.py,
gui/jobs/excitation.py) and the Identify job's cancel (gui/jobs/measured.py), through
`gui.jobs.checkpointed`: the condition numbers are recomputed here from core's
`excitation_condition` of the motions, the refusal is core's own message, and a cancel
ends the job's thread at the computation's next checkpoint."""
from __future__ import annotations

import time

import numpy as np
import pytest

from armdyn.core import FourierSeries, Motion, inverse_dynamics, optimise_excitation
from armdyn.core.errors import ArmDynError
from armdyn.core.io.robot_file import load_robot
from armdyn.core.sim.excitation import excitation_condition
from armdyn.core.sim.identification import normal_equations
from armdyn.gui.jobs.excitation import FIXED_SHARE
from armdyn.gui.jobs.job import Job
from armdyn.gui.jobs.measured import identify_steps
from armdyn.gui.jobs.motion_choice import MotionKind, fourier_coefficients
from armdyn.gui.panels.run_panel import RunPanel

from gui_helpers import PUMA

pytestmark = pytest.mark.gui

#: A cancelled job's thread ends this soon after the checkpoint that follows (s).
PROMPT_S = 0.2


@pytest.fixture
def page(qtbot):
    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.resize(520, 900)
    panel.show()
    panel.set_robot(load_robot(PUMA))
    panel.targets.motion.set_kind(MotionKind.FOURIER)
    yield panel.targets.motion
    panel.shutdown()


def test_the_optimised_motion_is_better_conditioned_than_the_fixed_pattern(qtbot, page):
    puma = load_robot(PUMA)
    with qtbot.waitSignal(page.optimiser.found, timeout=60000) as found:
        assert page.optimise(iterations=2)
    motion = page.excitation()
    # the fixed pattern, written here from its definition: about the current pose
    f, L = page.base_frequency.value(), page.harmonics.value()
    a, b = fourier_coefficients(np.full(6, np.radians(page.swing_deg.value())), f, L)
    fixed = excitation_condition(puma, FourierSeries(puma.q_home, a, b, f))
    optimised = excitation_condition(puma, motion)
    assert optimised < 0.1 * fixed  # 12.6 against 360
    outcome = found.args[0]
    assert outcome.fixed_condition == pytest.approx(fixed, rel=1e-9)
    text = page.excitation_info.text()
    assert f"{optimised:.3g}" in text and f"{fixed:.3g}" in text
    # the Run panel's Fourier motion is now the optimised one, for the run's duration
    built = page.choice().build(puma, puma.q_home, puma.q_home, 4.0)
    assert built.duration == 4.0
    for name in ("q0", "a", "b", "base_frequency"):
        np.testing.assert_array_equal(getattr(built, name), getattr(motion, name))
    page.harmonics.setValue(L + 1)  # a field changed: the fixed pattern again
    assert page.excitation() is None and page.choice().excitation is None


def test_a_cancel_ends_the_optimisers_thread_at_once(qtbot, page):
    assert page.optimise()
    job = page.optimiser.job()
    qtbot.waitUntil(lambda: page.optimise_progress.value() > 100 * FIXED_SHARE,
                    timeout=60000)  # inside the optimiser's iterations
    cancelled = time.perf_counter()
    page.cancel_optimise()
    assert job.wait(5.0)
    assert time.perf_counter() - cancelled < PROMPT_S  # one objective evaluation: ~5 ms
    assert "cancelled" in page.excitation_info.text()
    assert page.excitation() is None and page.optimise_button.isEnabled()


def test_a_torque_limit_below_the_gravity_hold_shows_cores_refusal(qtbot, page):
    page.torque_limit.setValue(1.0)
    with pytest.raises(ArmDynError) as refusal:
        optimise_excitation(load_robot(PUMA), torque_limit=1.0)
    with qtbot.waitSignal(page.optimiser.refused, timeout=60000):
        assert page.optimise(iterations=2)
    assert page.excitation_info.text() == str(refusal.value)
    assert page.excitation() is None


def test_a_cancelled_identify_ends_its_thread_at_the_next_stage(qtbot):
    puma = load_robot(PUMA)
    rng = np.random.default_rng(3)
    law = FourierSeries(puma.q_home, rng.uniform(-0.6, 0.6, (6, 4)),
                        rng.uniform(-0.6, 0.6, (6, 4)), 0.1, duration=3.0)
    t = np.arange(0.0, 3.0, 1e-3)
    q, qd, qdd = law.sample(t)
    motion = Motion.from_samples(t, q, inverse_dynamics(puma, q, qd, qdd), qd=qd, qdd=qdd)
    began = time.perf_counter()
    normal_equations(puma, motion)  # the stage the cancel lands in, timed alone
    regressor_s = time.perf_counter() - began
    job = Job(identify_steps, puma, motion, progress_of=lambda f: f, name="identify")
    seen = []
    job.progress.connect(seen.append)
    job.finished.connect(lambda _: pytest.fail("a cancelled identify finished"))
    job.start()
    qtbot.waitUntil(lambda: bool(seen) and seen[-1] >= 0.08, timeout=60000)  # base parameters done
    cancelled = time.perf_counter()
    job.cancel()
    assert job.wait(10.0)
    assert time.perf_counter() - cancelled < regressor_s + PROMPT_S, regressor_s
    qtbot.wait(50)  # nothing of the stale job arrives
