"""The Sweep dock (gui/panels/sweep_panel.py) on the real window: a small grid of the
PUMA (payload mass x duration) swept on one process; what it plots against the table of
points and against the core's own sweep; the worst point run in the Run panel against
its row; a bad field refused with the core's message; Cancel keeping the points
finished; the CSV the same bytes as `armdyn sweep` writes."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from armdyn.core import InverseRun, cli, load_robot, run_inverse_dynamics
from armdyn.core.errors import ArgumentError
from armdyn.core.sweeps.fields import parse_vary
from armdyn.core.sweeps.plan import evaluate
from armdyn.core.sweeps.sweep import SweepError, make_plan, sweep_chunks
from armdyn.gui.jobs.motion_choice import MotionKind
from armdyn.gui.jobs.runs import RunKind, RunOutcome, RunSpec
from armdyn.gui.jobs.sweeps import axis_of_text, point_spec, sweep_run
from gui_helpers import PUMA

pytestmark = pytest.mark.gui

#: payload.mass x T: 3 x 2 points, the Run panel's 2 s motion at 10 ms
GRID = (("payload.mass", "0:5:3"), ("T", "1:2:2"))
SHOULDER = 1  # joint 2, 0-based


def _panel(make_window):
    """A new window's Sweep panel, opened from the View menu (built then), one process.
    (A module-shared window is not used: closing it after a pyqtgraph dock was built
    crashed in QGraphicsScene's destructor, as it does with the Compare dock.)"""
    window = make_window()
    assert not window.sweep_dock.isVisible() and window.sweep_dock.widget() is None
    window._sweep.action.trigger()  # noqa: SLF001 - the View-menu action, as a user
    panel = window.sweep
    assert window.sweep_dock.isVisible() and window.sweep_dock.widget() is panel
    panel.setup.clear_axes()
    panel.setup.set_where("one")
    return window, panel


def _sweep(qtbot, panel, grid=GRID):
    for field, values in grid:
        assert panel.setup.add_axis(field, values), panel.message()
    assert panel.start()
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=120_000)
    return panel.result


def _core_result(window, grid=GRID):
    """The same sweep by the core alone, from the Run panel's settings."""
    run = InverseRun(target=window.run_panel.target_pose(), start=window.pose,
                     duration=window.run_panel.targets.seconds(), dt=0.01)
    axes = [parse_vary(f"{f}={v}", window.session.model, "inverse") for f, v in grid]
    return _returned(sweep_chunks(window.session.model, run, axes, workers=1))


def _returned(gen):
    """What a generator returns, once it has run to its end."""
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def _table(panel) -> tuple[list[str], np.ndarray]:
    """The points table as the view holds it: headers, and the numbers (UserRole)."""
    model = panel.results.points
    cols = model.columnCount()
    headers = [model.headerData(j, Qt.Orientation.Horizontal) for j in range(cols)]
    numbers = np.array([[model.data(model.index(i, j), Qt.ItemDataRole.UserRole)
                         for j in range(cols - 1)] for i in range(model.rowCount())])
    return headers, numbers


def test_a_free_fall_point_is_the_window_run_of_its_model():
    """Qt-free: a window free fall swept over the damping (`sweep_run`), its points back
    as window runs (`point_spec`), run by the window's own generator (`RunSpec.chunks`,
    chunked as the Run panel runs it): each ends where the sweep's row says, and a
    point that starts moving (a varied qd0) is refused by name."""
    puma = load_robot(PUMA)
    q0 = np.array([0.3, -0.6, 0.9, 0.2, -0.4, 0.5])
    spec = RunSpec(puma, RunKind.FREE_FALL, q0, 0.3, 0.01, damping=0.5, stops=False)
    run = sweep_run(spec)
    assert (run.duration, run.q0, run.damping, run.dt) == (0.3, tuple(q0), 0.5, 0.01)
    axes = [axis_of_text("damping", "0,2", puma, "free-fall")]
    result = _returned(sweep_chunks(puma, run, axes, workers=1))
    n = puma.n
    final_q = result.rows[:, result.result_columns.index("final_q_1"):][:, :n]
    for i, c in enumerate((0.0, 2.0)):
        point = point_spec(result, i)
        assert point.damping == c and point.duration == 0.3 and point.stops is False
        traj = _returned(point.chunks())
        np.testing.assert_allclose(traj.q[-1], final_q[i], rtol=1e-6, atol=1e-8)
    assert not np.allclose(final_q[0], final_q[1])  # the damping reached the points
    moving = [axis_of_text("qd0.2", "0,10", puma, "free-fall")]
    result = _returned(sweep_chunks(puma, run, moving, workers=1))
    assert point_spec(result, 0).kind is RunKind.FREE_FALL
    with pytest.raises(ArgumentError, match="point 2 starts with joint rates qd0"):
        point_spec(result, 1)


def test_the_envelope_heat_map_and_worst_point_are_the_tables(make_window, qtbot):
    window, panel = _panel(make_window)
    result = _sweep(qtbot, panel)
    assert result.done == result.size == 6 and result.failed == 0
    # the same bits as the core's sweep of the same run and grid
    core = _core_result(window)
    assert result.rows.tobytes() == core.rows.tobytes()

    headers, numbers = _table(panel)
    assert headers[:3] == ["#", "payload.mass (kg)", "T (s)"] and headers[-1] == "status"
    mass, T = numbers[:, 1], numbers[:, 2]
    peaks = numbers[:, [headers.index(f"peak_tau_{j + 1} (N m)") for j in range(6)]]
    results = panel.results
    for j in range(6):  # each mass's largest peak over T, and each T's over the masses
        x, y = results.envelope_data(0, j)
        assert list(x) == [0.0, 2.5, 5.0]
        assert list(y) == [peaks[mass == m, j].max() for m in x]
        x, y = results.envelope_data(1, j)
        assert list(x) == [1.0, 2.0]
        assert list(y) == [peaks[T == t, j].max() for t in x]
    assert "largest over T" in results.envelope_plots[0].getAxis("bottom").labelText
    # the heat map of joint 2 over mass (across) and T (up): every point's own peak
    results.set_joint(SHOULDER)
    results.set_heat_axes(0, 1)
    image = results.heat_image.image
    assert image.shape == (3, 2)
    for i in range(6):
        assert image[[0.0, 2.5, 5.0].index(mass[i]), [1.0, 2.0].index(T[i])] == peaks[i, SHOULDER]
    assert results.color_bar.levels() == (peaks[:, SHOULDER].min(), peaks[:, SHOULDER].max())
    worst = int(np.argmax(peaks[:, SHOULDER]))
    assert results.worst() == worst
    assert f"point {worst + 1} of 6" in results.worst_text()
    # sorted by joint 2's peak, largest first (a click on its header): the worst on top
    column = headers.index("peak_tau_2 (N m)")
    results.table.sortByColumn(column, Qt.SortOrder.DescendingOrder)
    shown = [results.points.data(results.points.index(r, column), Qt.ItemDataRole.UserRole)
             for r in range(6)]
    assert shown == sorted(peaks[:, SHOULDER], reverse=True)
    assert results.points.point(0) == worst


def test_the_worst_point_runs_in_the_run_panel_with_the_sweeps_peak(make_window, qtbot):
    window, panel = _panel(make_window)
    result = _sweep(qtbot, panel)
    panel.results.set_joint(SHOULDER)
    worst = panel.results.worst()
    row = dict(zip(result.columns, result.values[worst]))
    with qtbot.waitSignal(window.session.run_ended, timeout=120_000) as ended:
        qtbot.mouseClick(panel.results.show_button, Qt.MouseButton.LeftButton)
    run = ended.args[0]
    assert run.outcome is RunOutcome.FINISHED
    # the point's own model and run: the payload on the last link, the point's duration
    assert run.spec.model.total_mass == pytest.approx(window.session.model.total_mass
                                                      + row["payload.mass"], rel=1e-14)
    assert window.run_panel.targets.seconds() == row["T"] == run.trajectory.t[-1]
    peak = np.abs(run.trajectory.tau).max(axis=0)
    np.testing.assert_allclose(peak, result.peak_torques()[worst], rtol=1e-12)
    assert window.trajectory is run.trajectory  # the window plays it (3D, Results)


def test_a_bad_field_is_refused_at_once_with_the_cores_message(make_window, qtbot):
    window, panel = _panel(make_window)
    model = window.session.model
    run = InverseRun(target=window.run_panel.target_pose(), start=window.pose, duration=2.0)
    with pytest.raises(SweepError) as refused:
        make_plan(model, run, [parse_vary("3.mass=5,-1", model, "inverse", "deg")])
    assert not panel.setup.add_axis("3.mass", "5,-1")
    assert panel.message() == str(refused.value)
    assert "3.mass=-1" in panel.message() and "mass" in panel.message()
    assert not panel.setup.add_axis("payload.weight", "1,2")
    assert "unknown field" in panel.message()
    assert panel.setup.typed() == [] and panel.setup.point_count() == 0
    assert not panel.start()  # nothing to sweep: refused before any work
    assert panel.setup.add_axis("payload.mass", "0:1:2") and panel.message() == ""
    # a long axis is checked at once on some of its values; a bad one among the others
    # is refused by the sweep's own check, with the core's message, before any point
    masses = ["5", "-1"] + ["5"] * 38
    assert panel.setup.add_axis("3.mass", ",".join(masses))
    with pytest.raises(SweepError) as refused:
        make_plan(model, run, [parse_vary("payload.mass=0:1:2", model, "inverse"),
                               parse_vary("3.mass=" + ",".join(masses), model, "inverse")])
    with qtbot.waitSignal(panel.finished, timeout=60_000):
        assert panel.start()
    assert panel.message() == str(refused.value) and panel.result is None


def test_cancel_keeps_the_points_finished(make_window, qtbot):
    window, panel = _panel(make_window)
    # a grid a quiet machine cannot finish between the first batch and the cancel (300
    # points of 1-2 s runs could: the test then saw every point done)
    for field, values in (("payload.mass", "0:5:200"), ("T", "2:10:5")):
        assert panel.setup.add_axis(field, values)
    assert panel.start()
    qtbot.waitUntil(lambda: panel.result is not None and panel.result.done > 0,
                    timeout=120_000)
    panel.cancel()
    assert not panel.is_running()
    kept = panel.result
    assert 0 < kept.done < kept.size
    assert set(kept.status[~kept.finished]) == {"cancelled"}
    assert panel.results.points.rowCount() == kept.size
    for i in np.flatnonzero(kept.finished):  # each point kept is its own run's
        assert kept.rows[i].tobytes() == evaluate(kept.plan, i, i + 1).rows[0].tobytes()
    assert "Cancelled" in panel.status_text()


def test_the_csv_is_the_command_lines(make_window, qtbot, tmp_path, capsys):
    window, panel = _panel(make_window)
    _sweep(qtbot, panel)
    ours = tmp_path / "panel.csv"
    assert panel.export_csv(ours)
    theirs = tmp_path / "cli.csv"
    target = ",".join(repr(float(v)) for v in window.run_panel.target_pose())
    start = ",".join(repr(float(v)) for v in window.pose)
    code = cli.main(["sweep", "inverse", str(PUMA), "--units", "rad", "--start", start,
                     "--target", target, "-T", "2", "--workers", "1", "-o", str(theirs)]
                    + [f"--vary={f}={v}" for f, v in GRID])
    capsys.readouterr()
    assert code == 0
    assert ours.read_bytes() == theirs.read_bytes()


def test_the_sweep_follows_the_run_panels_motion(make_window, qtbot):
    """The Run panel's Fourier excitation: swept as it is (T refused by name, and not
    offered), each point the window's run of its model; a measured motion with no log
    read yet cannot be swept, said in words."""
    window, panel = _panel(make_window)
    motion_page = window.run_panel.targets.motion
    motion_page.set_kind(MotionKind.MEASURED)  # the panel follows the choice
    assert "cannot be swept yet" in panel.run_text()
    assert "open a log first" in panel.run_text()
    assert not panel.start()
    motion_page.set_kind(MotionKind.FOURIER)
    assert "along the Fourier motion" in panel.run_text()
    assert panel.setup._field.findText("T") == -1  # noqa: SLF001 - not offered
    assert not panel.setup.add_axis("T", "1,2")
    assert panel.message().startswith("--vary T: the Fourier motion has its own duration")
    result = _sweep(qtbot, panel, (("payload.mass", "0,5"),))
    assert list(result.status) == ["ok", "ok"]
    spec = window.run_panel.spec()
    fourier = spec.motion.build(spec.model, spec.q0, spec.target, spec.duration)
    for i in range(2):
        model, _ = result.point(i)
        alone = run_inverse_dynamics(model, fourier, dt_out=spec.dt)
        np.testing.assert_array_equal(result.peak_torques()[i], np.abs(alone.tau).max(axis=0))
    assert result.peak_torques()[1, SHOULDER] > result.peak_torques()[0, SHOULDER]
    with qtbot.waitSignal(window.session.run_ended, timeout=120_000) as ended:
        assert panel.show_point(1)
    run = ended.args[0]
    assert run.outcome is RunOutcome.FINISHED and run.spec.motion.kind is MotionKind.FOURIER
    np.testing.assert_array_equal(np.abs(run.trajectory.tau).max(axis=0),
                                  result.peak_torques()[1])
