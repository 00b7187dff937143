"""PlotsPanel: streaming into existing curves, units, cursor, scrubbing by click, export."""
from __future__ import annotations

import mmap
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from armdyn.core import load_mechanism
from armdyn.core.io.robot_file import load_robot
from armdyn.core.sim.simulation import simulate
from armdyn.core import Trajectory, inverse_dynamics_chunks
from armdyn.gui.plots.plots_panel import PlotsPanel, _LogAxis

ROBOTS = Path(__file__).resolve().parents[2] / "robots"


@pytest.fixture(scope="module")
def stanford():
    return load_robot(ROBOTS / "stanford_saha2009.toml")


@pytest.fixture(scope="module")
def chunks(stanford) -> list[Trajectory]:
    """A real 2 s inverse-dynamics run in chunks of 50 samples (201 samples in all)."""
    gen = inverse_dynamics_chunks(stanford, stanford.q_home, stanford.q_home + 0.4, 2.0,
                                  dt_out=0.01, chunk_samples=50)
    return list(gen)


@pytest.fixture
def panel(qtbot, stanford):
    p = PlotsPanel()
    qtbot.addWidget(p)
    p.set_robot(stanford)
    p.resize(900, 900)
    p.show()
    qtbot.waitExposed(p)
    return p


def curve_lengths(panel: PlotsPanel) -> set[int]:
    return {len(c.samples()[0])
            for plot in panel._plots for c in plot.curves}


def test_streamed_chunks_grow_the_same_curves(qtbot, panel, chunks):
    curves_before = [list(plot.curves) for plot in panel._plots]
    sizes = []
    for part in chunks:
        panel.append(part)
        qtbot.waitUntil(lambda: panel.sample_count() == sizes_expected(sizes, part), timeout=2000)
        sizes.append(panel.sample_count())
        assert curve_lengths(panel) == {panel.sample_count()}
    assert sizes == [50, 100, 150, 200, 201]
    assert [list(plot.curves) for plot in panel._plots] == curves_before  # created once
    qtbot.waitUntil(lambda: not panel._timer.isActive(), timeout=1000)  # idle timer stops


def sizes_expected(sizes: list[int], part: Trajectory) -> int:
    return (sizes[-1] if sizes else 0) + len(part)


def test_values_are_shown_in_display_units(panel, stanford, chunks):
    traj = Trajectory.concatenate(chunks)
    panel.set_trajectory(traj)
    angles, rates, torques, energy = panel._plots
    rev = stanford.is_revolute
    for j, curve in enumerate(angles.curves):
        x, y = curve.samples()
        np.testing.assert_allclose(x, traj.t)
        np.testing.assert_allclose(y, np.degrees(traj.q[:, j]) if rev[j] else traj.q[:, j])
        assert (curve.getViewBox() is angles.vb) == rev[j]  # prismatic: right axis
    np.testing.assert_allclose(torques.curves[2].samples()[1], traj.tau[:, 2])
    np.testing.assert_allclose(energy.curves[2].samples()[1], traj.energy[:, 2])
    assert angles.item.getAxis("right").labelText.startswith("prismatic")
    panel.clear()
    assert panel.sample_count() == 0 and curve_lengths(panel) == {0}


def test_cursor_moves_in_every_plot_without_signal(qtbot, panel, chunks):
    panel.set_trajectory(Trajectory.concatenate(chunks))
    with qtbot.assertNotEmitted(panel.time_picked):
        panel.set_cursor_time(0.75)
    assert panel.cursor_time() == 0.75
    assert all(p.cursor.isVisible() and p.cursor.value() == 0.75 for p in panel._plots)
    panel.set_cursor_time(None)
    assert panel.cursor_time() is None


def test_click_in_a_plot_picks_that_time(qtbot, panel, chunks):
    panel.set_trajectory(Trajectory.concatenate(chunks))
    plot = panel._plots[2]
    qtbot.waitUntil(lambda: plot.vb.viewRange()[0][1] >= 2.0, timeout=2000)  # auto-range done
    view = panel._graphics
    scene_pos = plot.vb.mapViewToScene(QPointF(1.25, 0.0))
    scene_pos.setY(plot.vb.sceneBoundingRect().center().y())
    pos = view.mapFromScene(scene_pos)
    with qtbot.waitSignal(panel.time_picked, timeout=1000) as blocker:
        qtbot.mousePress(view.viewport(), Qt.LeftButton, pos=pos)
        qtbot.mouseRelease(view.viewport(), Qt.LeftButton, pos=pos, delay=30)
    assert blocker.args[0] == pytest.approx(1.25, abs=0.02)
    assert panel.cursor_time() == pytest.approx(blocker.args[0])


def test_hover_readout_shows_values_at_the_mouse_time(panel, chunks, stanford):
    traj = Trajectory.concatenate(chunks)
    panel.set_trajectory(traj)
    panel.show_readout(1.0)
    angles = panel._plots[0]
    text = angles.legend._text.toPlainText()
    waist = np.degrees(np.interp(1.0, traj.t, traj.q[:, 0]))
    assert f"{waist:.4g}\u00b0" in text and "t = 1.000 s" in angles.item.titleLabel.text
    panel.show_readout(None)
    idle = angles.legend._text.toPlainText()
    assert f"{waist:.4g}" not in idle and "\u254d" in idle  # prismatic joint: dashed
    angles.legend.fit(2000, 2000)  # room for full names: the unit axis is named too
    assert "3 boom" in angles.legend._text.toPlainText()
    assert "right axis" in angles.legend._text.toPlainText()


def test_export_images_writes_png_and_svg(panel, chunks, tmp_path):
    panel.set_trajectory(Trajectory.concatenate(chunks))
    files = panel.export_images(tmp_path)
    assert len(files) == 8 and all(f.exists() and f.stat().st_size > 1000 for f in files)
    for svg in (f for f in files if f.suffix == ".svg"):
        assert ET.parse(svg).getroot().tag.endswith("svg")
    assert (tmp_path / "joint_angles.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_show_buttons_pick_the_stacked_plots(qtbot, panel, chunks, tmp_path):
    panel.set_trajectory(Trajectory.concatenate(chunks))
    panel._buttons["joint_rates"].click()
    panel._buttons["energy"].click()
    assert panel.visible_plots() == ["joint_angles", "joint_torques"]
    panel.set_visible_plots(["energy"])
    assert panel.visible_plots() == ["energy"]
    panel._buttons["energy"].click()  # the last plot cannot be hidden
    assert panel.visible_plots() == ["energy"] and panel._buttons["energy"].isChecked()
    with pytest.raises(ValueError):
        panel.set_visible_plots(["nonsense"])
    files = panel.export_images(tmp_path)  # hidden plots are exported too
    assert len(files) == 8 and panel.visible_plots() == ["energy"]


def test_plots_in_two_columns_share_one_time_range_and_settle(qtbot, panel, chunks):
    """The plots' time axes agree by value (pyqtgraph's setXLink mapped them by screen
    position, shifting the second column), and once drawn they stop changing (two
    views that both auto-ranged corrected each other in an endless repaint loop)."""
    panel.set_visible_plots(["joint_angles", "joint_rates", "joint_torques", "energy"])
    panel.set_trajectory(Trajectory.concatenate(chunks))
    shown = panel._shown
    qtbot.waitUntil(lambda: shown[0].vb.viewRange()[0][1] >= 2.0, timeout=3000)
    qtbot.wait(200)
    ranges = {tuple(np.round(p.vb.viewRange()[0], 12)) for p in shown}
    assert len(ranges) == 1, ranges
    changes = []
    for p in shown:
        p.vb.sigXRangeChanged.connect(lambda *a: changes.append(a))
    for p in shown:
        p.vb.update()
    qtbot.wait(300)
    assert changes == []


def test_a_new_run_as_long_as_the_last_resets_a_zoomed_plot(qtbot, panel, chunks):
    """Every plot takes the run's time range, also when the leading plot already has it
    (a plot zoomed by hand kept its zoom through the next run of the same length)."""
    traj = Trajectory.concatenate(chunks)
    span = (float(traj.t[0]), float(traj.t[-1]))
    panel.set_visible_plots(["joint_angles", "joint_rates", "joint_torques", "energy"])
    panel.set_trajectory(traj)
    zoomed = panel._shown[2]
    zoomed.vb.setXRange(0.5, 1.0, padding=0.0)  # the user zooms one plot
    panel.clear()
    panel.set_run_duration(span[1])  # the same run again
    for plot in panel._all_plots:
        assert plot.vb.viewRange()[0] == pytest.approx([0.0, span[1]])
    panel.set_run_duration(None)
    panel.set_trajectory(traj)
    for plot in panel._all_plots:
        assert plot.vb.viewRange()[0] == pytest.approx(list(span))


def tick_labels(axis, lo: float, hi: float) -> list[tuple[float, str]]:
    """(value, label) of every labelled tick the axis draws over [lo, hi] (its units)."""
    out = []
    for spacing, values in axis.tickValues(lo, hi, max(axis.height(), 200)):
        strings = axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing)
        out += [(v, s) for v, s in zip(values, strings) if s]
    return out


def test_log_axis_labels_are_powers_of_ten(qtbot):
    axis = _LogAxis("left")
    axis.setLogMode(False, True)
    labels = tick_labels(axis, -16.0, -6.0)  # the view of 1e-16 .. 1e-6, in log10 units
    powers = [(v, s) for v, s in labels if float(v).is_integer()]
    assert [v for v, _ in powers][:2] and {int(v) for v, _ in powers} == set(range(-16, -5))
    for v, s in powers:
        assert s == f"1e{int(v)}"  # "1e-12", not "1"
    for v, s in labels:  # every label, minor ones too, is the number at its place
        assert float(s) == pytest.approx(10.0 ** v, rel=1e-9)


def test_a_low_log_axis_does_not_overprint_its_labels(qtbot):
    """Minor ticks (2..9 x 10^k) of a residual inside one decade: in a 70 px axis at most
    one label per LOG_LABEL_PX, the labelled ones still the numbers at their places."""
    from PySide6.QtCore import QRectF

    from armdyn.gui.plots.plots_panel import LOG_LABEL_PX
    axis = _LogAxis("left")
    axis.setLogMode(False, True)
    axis.setGeometry(QRectF(0, 0, 60, 70))
    lo, hi = np.log10(2e-17), np.log10(1.2e-16)
    ticks = sum(len(values) for _, values in axis.tickValues(lo, hi, 200))
    shown = tick_labels(axis, lo, hi)  # the labelled ones
    assert ticks > 70 // LOG_LABEL_PX  # (the premise: more ticks than room)
    assert 2 <= len(shown) <= 70 // LOG_LABEL_PX
    for v, s in shown:
        assert float(s) == pytest.approx(10.0 ** v, rel=1e-9)


def test_loop_residual_is_drawn_on_its_log_axis(qtbot):
    """The residual of a four-bar's free fall (about 1e-16 m) fills the log axis and its
    labels are powers of ten around it (the curves once went to the view undrawn in log:
    the axis spanned 10^0 .. 10^1e-15 and every label read "1")."""
    fourbar = load_mechanism(ROBOTS / "fourbar.toml")
    traj = simulate(fourbar, 1.0)
    p = PlotsPanel()
    qtbot.addWidget(p)
    p.set_robot(fourbar)
    p.set_visible_plots(["loop_residual"])
    p.resize(700, 500)
    p.show()
    qtbot.waitExposed(p)
    p.set_trajectory(traj)
    plot = next(q for q in p._plots if q.spec.key == "loop_residual")
    shown = np.maximum(np.abs(traj.loop_residual), 1e-18)  # the plot's floor for 0
    low, high = np.log10(shown.min()), np.log10(shown.max())
    qtbot.waitUntil(lambda: plot.vb.viewRange()[1][0] <= low
                    and plot.vb.viewRange()[1][1] >= high, timeout=3000)
    lo, hi = plot.vb.viewRange()[1]
    assert hi - lo < 2 * (high - low) + 1  # the data fill the view
    labels = tick_labels(plot.item.getAxis("left"), lo, hi)
    assert labels
    for v, s in labels:
        assert float(s) == pytest.approx(10.0 ** v, rel=1e-9)
        assert 10.0 ** lo <= float(s) <= 10.0 ** hi


def test_during_a_run_the_y_ranges_only_grow_and_cover_the_samples(qtbot, panel, stanford):
    """Streaming (issue #8): the y axes change a few times per run, not at every chunk,
    and always cover what is drawn; the finished run is fitted tightly again."""
    changes = {plot.spec.key: 0 for plot in panel._shown}
    for plot in panel._shown:
        plot.vb.sigYRangeChanged.connect(
            lambda *_a, key=plot.spec.key: changes.__setitem__(key, changes[key] + 1))
    many = list(inverse_dynamics_chunks(stanford, stanford.q_home, stanford.q_home + 0.4, 2.0,
                                        dt_out=0.01, chunk_samples=5))  # 41 chunks
    panel.clear()
    panel.set_run_duration(2.0)
    for part in many:
        panel.append(part)
        panel._flush()
        for plot in panel._shown:
            lo, hi = plot.vb.viewRange()[1]
            y = plot.series.y[:, :plot.series.size]
            revolute = [k for k, c in enumerate(plot.curves) if c.getViewBox() is plot.vb]
            if revolute:
                assert lo <= y[revolute].min() and y[revolute].max() <= hi, plot.spec.key
    assert len(many) > 30
    assert max(changes.values()) <= 10, changes
    panel.set_trajectory(Trajectory.concatenate(many))
    for plot in panel._shown:  # fitted: the samples and a margin, no more
        for vb, rows in plot.view_rows:
            y = plot.series.y[rows, :plot.series.size]
            lo, hi = vb.viewRange()[1]
            assert lo <= y.min() and y.max() <= hi, plot.spec.key
            assert hi - lo <= 1.2 * max(np.ptp(y), 0.1), plot.spec.key


def test_grid_axis_draws_the_same_grid_with_opaque_pens(qtbot, panel, chunks):
    """GridAxis composites pyqtgraph's translucent grid pens onto the white background
    (Qt's raster engine draws translucent lines ~30x slower, issue #8): every pen is
    opaque, the lines are where pyqtgraph puts them, and each line's pixels are the
    ones pyqtgraph's translucent pen gives on white."""
    import pyqtgraph as pg
    from PySide6.QtCore import QLineF
    from PySide6.QtGui import QImage, QPainter

    from armdyn.gui.plots.plots_panel import GridAxis

    for chunk in chunks:
        panel.append(chunk)
    qtbot.waitUntil(lambda: panel.sample_count() == sum(len(c) for c in chunks), timeout=5000)
    qtbot.wait(100)  # (the axes take the data's range)
    axis = panel._plots[0].item.getAxis("left")
    assert isinstance(axis, GridAxis)

    def painted(pen, p1, p2) -> np.ndarray:
        """The line alone on a white image."""
        image = QImage(400, 400, QImage.Format.Format_RGB32)
        image.fill(pg.mkColor("w"))
        painter = QPainter(image)
        painter.setPen(pen)
        painter.drawLine(QLineF(p1, p2))
        painter.end()
        # (a copy: the array would view the image's memory, freed on return)
        return np.frombuffer(image.constBits(), np.uint8).reshape(400, 400, 4)[..., :3].copy()

    scratch = QImage(10, 10, QImage.Format.Format_RGB32)
    painter = QPainter(scratch)
    ours = axis.generateDrawSpecs(painter)
    theirs = pg.AxisItem.generateDrawSpecs(axis, painter)
    painter.end()
    assert len(ours[1]) == len(theirs[1]) > 5
    assert any(pen.color().alpha() < 255 for pen, _, _ in theirs[1])  # a translucent grid
    drawn = 0
    for (pen, p1, p2), (reference, q1, q2) in zip(ours[1], theirs[1]):
        assert pen.color().alpha() == 255
        assert (p1, p2) == (q1, q2)
        a, b = painted(pen, p1, p2).astype(int), painted(reference, q1, q2).astype(int)
        assert np.abs(a - b).max() <= 1
        drawn += int((b < 255).any())
    assert drawn > 5  # (lines inside the image, to compare)


def test_the_grid_lies_under_the_curves(qtbot, panel, stanford):
    """A flat curve is drawn whole: the grid lines go under the curves (pyqtgraph paints
    its axes, grid included, above the views; with opaque grid pens every vertical grid
    line cut a gap in every curve)."""
    from PySide6.QtGui import QColor

    from armdyn.gui.look.colors import joint_color

    fall = simulate(stanford, 2.0, dt_out=0.01)  # no joint torques: flat at zero
    panel.set_visible_plots(["joint_torques"])
    panel.set_trajectory(fall)
    qtbot.wait(100)
    plot = panel._shown[0]
    image = panel.grab().toImage()
    top = QColor(joint_color(len(plot.curves) - 1))  # the last curve is drawn on top
    view = panel._graphics

    def pixel(t: float, dy: int) -> QColor:
        scene = plot.vb.mapViewToScene(QPointF(t, 0.0))
        at = view.viewport().mapTo(panel, view.mapFromScene(scene))
        return image.pixelColor(at.x(), at.y() + dy)

    def is_curve(colour: QColor) -> bool:
        return max(abs(colour.red() - top.red()), abs(colour.green() - top.green()),
                   abs(colour.blue() - top.blue())) <= 40

    times = np.linspace(0.05, 1.95, 300)  # across the plot, over many grid lines
    covered = [any(is_curve(pixel(t, dy)) for dy in (-1, 0, 1)) for t in times]
    assert all(covered), f"{covered.count(False)} of {len(times)} points not drawn"


def _legend(count: int):
    from armdyn.gui.plots.plots_panel import _Entry, _Legend

    legend = _Legend()
    legend.set_entries([_Entry(f"{k + 1} joint {k + 1}", "#0072B2", Qt.SolidLine, "°", "",
                               str(k + 1)) for k in range(count)])
    return legend


@pytest.mark.parametrize("count", [1, 2, 7, 13, 24, 40, 200])
@pytest.mark.parametrize("room", [(1000, 400), (500, 150), (300, 100), (200, 60),
                                  (120, 40)])
def test_a_legend_keeps_to_its_share_of_the_plot(qapp, count, room):
    """Whatever the number of joints and the room, a legend takes at most its share
    (LEGEND_MAX_SHARE) of the plot's width and its height, listing fewer joints (then
    "+ k more") rather than more room; and a "+ k more" never stands for joints that
    would fit in its own row."""
    from armdyn.gui.plots.plots_panel import LEGEND_MAX_ENTRIES, LEGEND_MAX_SHARE

    legend = _legend(count)
    legend.fit(*room)
    width, height = legend.preferredSize().width(), legend.preferredSize().height()
    # (the room it was fitted to: rounded, so that a pixel's resize does not relayout)
    max_w, max_h = (share * r for share, r in zip(LEGEND_MAX_SHARE, legend._room))
    listed, more = len(legend.entries), legend._more
    columns = legend._layout[0]
    if height > max_h + 1:  # only two rows may not fit: a row of joints, "+ k more"
        assert -(-listed // columns) + (more > 0) <= 2, (height, listed, columns, more)
    if width > max_w + 1:  # nor the narrowest column
        assert legend._layout == (1, True), (width, legend._layout)
    assert listed + more == count and listed >= 1
    assert ("more" in legend.text()) == (more > 0)
    if 0 < more <= legend._layout[0] and count <= LEGEND_MAX_ENTRIES:
        pytest.fail(f"'+ {more} more' in {legend._layout[0]} columns: they would fit")


def test_chunks_queued_in_one_tick_are_appended_to_each_plot_once(qtbot, panel, chunks,
                                                                   monkeypatch):
    """Issue #23: a fast run queues dozens of chunks between two refreshes; each plot
    takes them joined, in one append (the human's 600 s fall made 1,792 appends in 11
    ticks, 1.3 s of the GUI thread). The samples are the same."""
    plot = panel._plots[0]
    appends = []
    original = plot.append
    monkeypatch.setattr(plot, "append", lambda part: (appends.append(len(part)),
                                                      original(part)))
    for part in chunks:  # all before the timer's next tick
        panel.append(part)
    qtbot.waitUntil(lambda: panel.sample_count() == 201, timeout=5000)
    assert appends == [201]
    joined = Trajectory.concatenate(chunks)
    s = plot.series
    assert np.array_equal(s.t[:s.size], joined.t)
    assert np.allclose(s.y[:, :s.size].T, plot.values(joined))


def test_a_runs_buffers_are_made_whole_at_its_start(qtbot, panel, chunks):
    """Issue #23: the plots' buffers grew by doubling as the samples came; for the
    human's 600 s fall each doubling copied 8 plots' buffers (up to 39 x 32768 values)
    on the GUI thread: gaps of 0.5-0.9 s. The run's sample count is known at its start."""
    from types import SimpleNamespace

    panel._on_run_started(SimpleNamespace(duration=2.0, dt=0.01))
    buffers = [plot.series.y for plot in panel._plots]
    assert all(b.shape[1] >= 201 for b in buffers)
    for part in chunks:
        panel.append(part)
    qtbot.waitUntil(lambda: panel.sample_count() == 201, timeout=5000)
    assert all(plot.series.y is b for plot, b in zip(panel._plots, buffers, strict=True))


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="Linux's page counts")
def test_a_series_buffer_is_cleared_only_where_it_is_written():
    """A plot's (curves, samples) buffer takes memory only for the columns appended so
    far: the first append of a run wrote into every huge page of NumPy's buffer and
    cleared the whole of it in the GUI thread (issue #23). Resident pages, before and
    after writing the first 100 columns of a 96 MB buffer."""
    from armdyn.gui.plots.plots_panel import small_pages

    def resident_bytes() -> int:
        return int(Path("/proc/self/statm").read_text().split()[1]) * mmap.PAGESIZE

    buffer = small_pages((200, 60_001))
    before = resident_bytes()
    buffer[:, :100] = 1.0
    grown = resident_bytes() - before
    assert grown < 0.05 * buffer.nbytes  # 200 rows x one 4 KB page = 0.8 MB
    np.testing.assert_array_equal(buffer[:, :100], 1.0)
    assert buffer.shape == (200, 60_001) and buffer.flags.c_contiguous
