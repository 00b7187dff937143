"""The Compare dock (gui/panels/compare.py) on the real window: run B = the model with a change
(or another file), both runs in a worker, the plots, the ghost in the 3D view, CSV."""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from gui_helpers import PUMA, ROBOTS

from armdyn.core import (Mechanism, center_of_mass, cycloidal_trajectory, inverse_dynamics,
                         load_mechanism, load_robot, simulate)
from armdyn.core.io.model_files import load_model
from armdyn.gui.jobs.comparison import comparison_chunks, comparison_specs
from armdyn.gui.jobs.runs import FallMethod
from armdyn.gui.panels.compare import (Change, ChangeField, ChangeOp, RunKind, apply_changes, damping_of)

pytestmark = pytest.mark.gui

FOURBAR = ROBOTS / "fourbar.toml"
SPACE_ROBOT = ROBOTS / "space_robot.toml"
FOREARM = 2  # link 3 of the PUMA, 0-based


def _open_compare(window):
    panel = window.compare
    panel.action.trigger()
    assert panel.dock.isVisible()
    return panel


def _wait(qtbot, panel, timeout=240_000):  # a cold numba cache compiles first
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=timeout)


def _compare_mass_scaled(qtbot, window, kind, duration, link, factor):
    """Open Compare and run A against B with link `link`'s mass times `factor`; returns
    the panel once the runs are done."""
    panel = _open_compare(window)
    panel.set_kind(kind)
    panel.set_duration(duration)
    assert panel.add_change(Change(link, ChangeField.MASS, ChangeOp.SCALE, factor))
    assert panel.compare()
    _wait(qtbot, panel)
    return panel


# ----- Qt-free: the changed model ------------------------------------------------------
def test_apply_changes_builds_the_changed_model_with_core():
    puma = load_robot(PUMA)
    b = apply_changes(puma, [Change(FOREARM, ChangeField.MASS, ChangeOp.SCALE, 2.0),
                             Change(1, ChangeField.A, ChangeOp.SET, 0.5)])
    assert b.links[FOREARM].mass == pytest.approx(2 * puma.links[FOREARM].mass)
    assert b.links[1].a == 0.5
    for i in (0, 3, 4, 5):
        assert b.links[i] == puma.links[i]
    assert puma.links[FOREARM].mass != b.links[FOREARM].mass  # A is untouched (immutable)
    heavy = apply_changes(puma, [Change(FOREARM, ChangeField.MASS_INERTIA, ChangeOp.SCALE, 3.0)])
    assert np.allclose(heavy.links[FOREARM].inertia, 3 * np.array(puma.links[FOREARM].inertia))
    with pytest.raises(Exception, match="mass must be > 0"):
        apply_changes(puma, [Change(FOREARM, ChangeField.MASS, ChangeOp.SET, -1.0)])
    c = damping_of([Change(4, ChangeField.DAMPING, ChangeOp.SET, 0.7)], 6, 0.1)
    assert np.array_equal(c, [0.1, 0.1, 0.1, 0.1, 0.7, 0.1])


def test_apply_changes_to_a_mechanism_keeps_its_loops_closed():
    fourbar = load_mechanism(FOURBAR)
    b = apply_changes(fourbar, [Change(1, ChangeField.MASS, ChangeOp.SCALE, 2.0)])
    assert isinstance(b, Mechanism) and len(b.loops) == len(fourbar.loops)
    assert b.links[1].mass == pytest.approx(2 * fourbar.links[1].mass)
    assert np.allclose(b.q_home, fourbar.q_home, atol=1e-9)  # masses do not move the loop


def test_the_two_specs_share_the_run_and_b_takes_its_damping_changes():
    puma, planar = load_robot(PUMA), load_robot(ROBOTS / "two_link_planar.toml")
    q0, target = puma.q_home + 0.1, puma.q_home + 0.3
    changes = [Change(4, ChangeField.DAMPING, ChangeOp.SET, 0.7)]
    heavy = apply_changes(puma, [Change(FOREARM, ChangeField.MASS, ChangeOp.SCALE, 2.0)])
    a, b = comparison_specs(puma, heavy, RunKind.INVERSE, q0, target, 1.0, 0.02, 0.1,
                            FallMethod.MULTIPLIERS, changes)
    assert (a.model, b.model, a.kind, b.kind) == (puma, heavy, RunKind.INVERSE, RunKind.INVERSE)
    for spec in (a, b):
        np.testing.assert_array_equal(spec.q0, q0)
        np.testing.assert_array_equal(spec.target, target)
        assert (spec.duration, spec.dt) == (1.0, 0.02)
    assert a.damping == 0.1 and np.array_equal(b.damping, [0.1] * 4 + [0.7, 0.1])
    with pytest.raises(ValueError, match="joints"):  # inverse dynamics needs the same joints
        comparison_specs(puma, planar, RunKind.INVERSE, q0, target, 1.0)
    a, b = comparison_specs(puma, planar, RunKind.FREE_FALL, q0, target, 1.0)
    np.testing.assert_array_equal(b.q0, planar.q_home)  # another model starts at home
    np.testing.assert_array_equal(a.target, q0)  # a fall has no target of its own


def test_the_comparison_marks_where_each_run_begins_without_a_fake_trajectory():
    puma = load_robot(PUMA)
    heavy = apply_changes(puma, [Change(FOREARM, ChangeField.MASS, ChangeOp.SCALE, 2.0)])
    a, b = comparison_specs(puma, heavy, RunKind.INVERSE, puma.q_home, puma.q_home + 0.2, 0.3)
    gen, values = comparison_chunks(a, b), []
    while True:
        try:
            values.append(next(gen))
        except StopIteration as stop:
            whole_a, whole_b = stop.value
            break
    assert [side for side, part in values if part is None] == ["A", "B"]
    assert values[0] == ("A", None)
    parts = {side: [p for s, p in values if s == side and p is not None] for side in "AB"}
    assert all(p.kind == "inverse-dynamics" for ps in parts.values() for p in ps)
    np.testing.assert_array_equal(np.concatenate([p.t for p in parts["B"]]), whole_b.t)
    assert len(whole_a) == len(whole_b) == 31


# ----- the window ----------------------------------------------------------------------
def test_heavier_forearm_changes_the_torques_as_core_computes_them(make_window, qtbot):
    window = make_window(PUMA, size=(1400, 900))
    panel = _compare_mass_scaled(qtbot, window, RunKind.INVERSE, 1.0, FOREARM, 2.0)
    a, b = panel.result
    assert len(a) == len(b) == 101

    # independently: the changed robot built here, core's inverse dynamics along the
    # cycloid from the window's pose to the Run panel's target
    puma = load_robot(PUMA)
    links = list(puma.links)
    links[FOREARM] = replace(links[FOREARM], mass=2 * links[FOREARM].mass)
    heavy = replace(puma, links=tuple(links))
    q, qd, qdd = cycloidal_trajectory(window.pose, window.run_panel.target_pose(), 1.0, a.t)
    assert np.allclose(b.q, q, atol=1e-12) and np.allclose(a.q, q, atol=1e-12)
    assert np.allclose(b.tau, inverse_dynamics(heavy, q, qd, qdd), rtol=1e-9, atol=1e-9)
    assert np.allclose(a.tau, inverse_dynamics(puma, q, qd, qdd), rtol=1e-9, atol=1e-9)
    assert np.max(np.abs(b.tau[:, 1] - a.tau[:, 1])) > 1.0  # the shoulder carries more

    # the difference plot is B - A of the torques, N m
    panel.set_quantity("tau")
    panel.set_joint(None)
    t, diff = panel.difference()
    assert diff.shape == (101, 6)
    assert np.allclose(diff, b.tau - a.tau)
    panel.set_joint(1)
    t, diff = panel.difference()
    assert diff.shape == (101, 1) and np.allclose(diff[:, 0], b.tau[:, 1] - a.tau[:, 1])
    legend = panel.legend_text()
    assert "A: PUMA 560" in legend and "B: PUMA 560" in legend and "mass \u00d7 2" in legend

    # CSV of both, side by side
    path = window.settings.fileName() + ".csv"
    panel.export_csv(path)
    data = np.loadtxt(path, delimiter=",", skiprows=3)
    header = open(path, encoding="utf-8").read().splitlines()[2].split(",")
    k_a = header.index(next(h for h in header if h.startswith("A: tau2")))
    k_b = header.index(next(h for h in header if h.startswith("B: tau2")))
    assert np.allclose(data[:, k_a], a.tau[:, 1], rtol=1e-8, atol=1e-8)
    assert np.allclose(data[:, k_b], b.tau[:, 1], rtol=1e-8, atol=1e-8)


def test_identity_change_gives_a_zero_difference(make_window, qtbot):
    window = make_window(PUMA)
    panel = _compare_mass_scaled(qtbot, window, RunKind.INVERSE, 0.5, FOREARM, 1.0)
    for field in ("q", "qd", "tau", "energy"):
        panel.set_quantity(field)
        t, diff = panel.difference()
        assert diff.size > 0 and np.all(diff == 0.0), field


def test_refused_change_shows_the_message_and_keeps_the_state(make_window, qtbot):
    window = make_window(PUMA)
    panel = _open_compare(window)
    panel.set_duration(0.3)
    assert panel.add_change(Change(FOREARM, ChangeField.MASS, ChangeOp.SCALE, 2.0))
    assert panel.compare()
    _wait(qtbot, panel)
    before_changes, before_result = panel.changes(), panel.result
    assert not panel.add_change(Change(FOREARM, ChangeField.MASS, ChangeOp.SET, -1.0))
    assert "mass must be > 0" in panel.message()
    assert panel.changes() == before_changes
    assert panel.result is before_result
    assert len(panel.changes()) == 1


def test_the_comparison_can_be_cancelled_promptly(make_window, qtbot):
    simulate(load_robot(PUMA), 0.02)  # compiled before the clock runs (a cold cache)
    window = make_window(PUMA)
    panel = _open_compare(window)
    panel.set_kind(RunKind.FREE_FALL)
    panel.set_duration(600.0)
    assert panel.add_change(Change(FOREARM, ChangeField.MASS, ChangeOp.SCALE, 2.0))
    assert panel.compare()
    qtbot.wait(300)
    assert panel.is_running()
    finished = []
    panel.finished.connect(lambda: finished.append(True))
    start = time.perf_counter()
    panel.cancel()
    assert time.perf_counter() - start < 1.0
    assert not panel.is_running()
    assert finished == [True]  # a stopped comparison has ended too
    a, _b = panel.result  # what was computed is shown
    assert 0 < a.t[-1] < 600.0
    qtbot.wait(200)
    assert finished == [True] and panel.result[0] is a  # nothing more from the stopped job


def test_ghost_follows_playback_and_goes_when_the_dock_closes(make_window, qtbot):
    window = make_window(PUMA, size=(1400, 900))
    panel = _open_compare(window)
    panel.set_kind(RunKind.INVERSE)
    panel.set_duration(1.0)
    panel.add_change(Change(1, ChangeField.A, ChangeOp.SCALE, 1.5))  # B's upper arm longer
    assert panel.compare()
    _wait(qtbot, panel)
    actor = panel.ghost.actor
    assert actor is not None
    assert actor in window.view3d.plotter.renderer.actors.values()
    assert actor.prop.opacity < 1.0
    a, b = panel.result
    panel.seek(0.5)
    # A's arm in the view is at A's pose of t = 0.5 s; the ghost's bounds are B's arm's
    assert np.allclose(window.view3d.q, a.at(0.5))
    shown = np.array(actor.GetBounds())
    panel.ghost.place(b.at(0.0))
    assert not np.allclose(np.array(actor.GetBounds()), shown)  # it moves with the time
    panel.dock.close()
    qtbot.waitUntil(lambda: panel.ghost.actor is None, timeout=2000)
    assert actor not in window.view3d.plotter.renderer.actors.values()
    assert np.allclose(window.view3d.q, window.pose)  # the arm is back at the window's pose


def test_free_fall_comparison_of_a_mechanism(make_window, qtbot):
    window = make_window(FOURBAR)
    panel = _compare_mass_scaled(qtbot, window, RunKind.FREE_FALL, 0.5, 1, 3.0)
    a, b = panel.result
    assert len(a) == len(b) == 51
    assert np.allclose(a.q[0], b.q[0])  # the same start
    assert np.max(np.abs(b.q[-1] - a.q[-1])) > 1e-3  # a heavier coupler falls otherwise
    assert np.max(b.loop_residual) < 1e-6  # B's loop stays closed
    assert panel.ghost.actor is not None


def test_another_file_as_run_b(make_window, qtbot):
    window = make_window(PUMA)
    panel = _open_compare(window)
    assert panel.set_file(ROBOTS / "two_link_planar.toml")
    panel.set_kind(RunKind.INVERSE)
    assert not panel.compare()  # 2 joints against 6: refused with a message
    assert "joints" in panel.message()
    panel.set_kind(RunKind.FREE_FALL)
    panel.set_duration(0.3)
    assert panel.compare()
    _wait(qtbot, panel)
    a, b = panel.result
    assert a.n == 6 and b.n == 2 and len(a) == len(b)


def test_prismatic_joints_take_the_right_axis_beside_revolute_ones(make_window, qtbot):
    """All joints of the Stanford arm: the boom (prismatic, m) on its own right axis,
    the revolute joints (deg) on the left; the boom alone takes the left axis."""
    window = make_window(ROBOTS / "stanford_saha2009.toml", size=(1400, 900))
    panel = _compare_mass_scaled(qtbot, window, RunKind.INVERSE, 0.5, 2, 2.0)
    boom = 2  # 0-based
    panel.set_quantity("q")
    panel.set_joint(None)
    plots = panel.plots
    right = plots._right[plots.plot]
    on_right = [c for c in plots._curves_a + plots._curves_b if c.getViewBox() is right]
    assert len(on_right) == 2  # A and B of the boom
    a = panel.result[0]
    assert np.allclose(on_right[0].getOriginalDataset()[1], a.q[:, boom])  # in m
    assert plots.plot.getAxis("right").isVisible()
    assert "(m)" in plots.plot.getAxis("right").labelText
    assert "(\u00b0)" in plots.plot.getAxis("left").labelText
    assert plots._right[plots.diff_plot] is plots._curves_d[boom].getViewBox()
    panel.set_joint(boom)
    assert all(c.getViewBox() is plots.plot.vb for c in plots._curves_a + plots._curves_b)
    right_axis = plots.plot.getAxis("right")  # a margin only: no values, no title
    assert not right_axis.style["showValues"] and not right_axis.label.isVisible()
    assert "(m)" in plots.plot.getAxis("left").labelText
    # the Results plots' opaque grid, under the curves of both views
    from armdyn.gui.plots.plots_panel import GridAxis
    for item in (plots.plot, plots.diff_plot):
        for name in ("left", "bottom", "right"):
            axis = item.getAxis(name)
            assert isinstance(axis, GridAxis)
            assert axis.zValue() < min(item.vb.zValue(), plots._right[item].zValue())


def test_a_floating_model_s_damping_change_reaches_every_rate_of_its_joint():
    space = load_model(SPACE_ROBOT)
    waist = [Change(1, ChangeField.DAMPING, ChangeOp.SET, 0.7)]
    a, b = comparison_specs(space, space, RunKind.FREE_FALL, space.q_home, space.q_home,
                            0.2, damping=0.1, changes=waist)
    assert np.shape(b.damping) == (space.nv,) and np.array_equal(b.q0, space.q_home)
    expected = np.full(space.nv, 0.1)
    expected[space.rates_of([1])] = 0.7
    assert np.array_equal(b.damping, expected)


def test_a_floating_model_is_compared_on_its_joints_and_names_its_base(make_window, qtbot):
    """The space robot (a satellite on a free joint) with its first arm link twice as
    heavy: both runs move the arm along the same cycloid, the base reacts; Compare plots
    the arm's joints (the free joint named as not plotted here), and in each run the
    mass centre stays where it was (no gravity, no external force)."""
    window = make_window(SPACE_ROBOT, size=(1400, 900))
    panel = _compare_mass_scaled(qtbot, window, RunKind.INVERSE, 0.4, 1, 2.0)
    a, b = panel.result
    assert len(a) == len(b) > 10 and panel.model_b.links[1].mass == 2 * panel.model_a.links[1].mass
    for run, model in ((a, panel.model_a), (b, panel.model_b)):
        centre = np.array([center_of_mass(model, q) for q in run.q])
        assert np.abs(centre - centre[0]).max() < 1e-6
    assert np.abs(b.q[-1, :3] - a.q[-1, :3]).max() > 1e-5  # the base moved differently
    arm = panel.model_a.rates_of(range(1, 7))
    panel.set_quantity("tau")
    panel.set_joint(None)
    t, diff = panel.difference()
    assert diff.shape == (len(a), 6)
    assert np.allclose(diff, b.tau[:, arm] - a.tau[:, arm])
    assert np.abs(diff[:, 0]).max() > 1e-3  # the waist turns a heavier link
    panel.set_quantity("q")
    t, diff = panel.difference()
    assert diff.shape == (len(a), 6) and np.allclose(diff, 0.0, atol=1e-9)  # same cycloid
    assert "Not plotted here: 1 satellite (free)" in panel.legend_text()
