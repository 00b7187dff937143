"""The Results plots read cleanly at 1280 x 800 and 1600 x 1000, on the real window after
real runs: tick labels clear of the axis titles and of each other, plot areas of one
column lined up, legends beside (not over) the curves and the time cursor, both ends of
the time axis labelled, spikes clipped with the reason said."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage, QPainter

from armdyn.gui.plots.plots_panel import GridAxis, TimeAxis
from armdyn.gui.plots.spikes import spike_range

from gui_helpers import PUMA, ROBOTS, flush_events, plots_final

pytestmark = pytest.mark.gui

SIZES = [(1280, 800), (1600, 1000)]


def run(window, qtbot, seconds: float = 3.0):
    with qtbot.waitSignal(window.session.run_ended, timeout=60000) as ended:
        window.run_panel.start_free_fall(seconds)
    plots_final(qtbot, window)  # (the panel aligns its axes itself: no align_axes() here)
    return ended.args[0].trajectory


def label_rects(axis) -> list:
    """The tick labels `axis` draws now: their rects in the axis's coordinates."""
    image = QImage(10, 10, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    try:
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [] if specs is None else [(rect, text) for rect, _flags, text in specs[2]]


def shown_plots(window):
    return list(window.plots._shown)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["stanford_saha2009", "carpet_scraper_saha", "fivebar_saha"])
def test_tick_labels_stay_clear_of_titles_and_each_other(make_window, qtbot, name, size):
    """'-10000' printed over 'force (N, N m)' and '-0.0004' over 'prismatic (N)': an axis
    is as wide as its labels and title need; no two labels overlap (the residual's log
    labels smeared)."""
    window = make_window(ROBOTS / f"{name}.toml", size=size)
    run(window, qtbot)
    for plot in shown_plots(window):
        for side in ("left", "right"):
            axis = plot.item.getAxis(side)
            if not axis.isVisible() or not axis.style["showValues"]:
                continue
            rects = label_rects(axis)
            assert rects, f"{plot.spec.key} {side}: no labels"
            band = axis.label.boundingRect().height() * 0.8 if axis.label.isVisible() else 0
            width = axis.geometry().width()
            for rect, text in rects:
                if side == "left":  # the title is rotated along the axis's left edge
                    assert rect.left() >= band - 1, f"{plot.spec.key}: {text!r} on the title"
                else:
                    assert rect.right() <= width - band + 1, f"{plot.spec.key}: {text!r}"
            for k, (a, _ta) in enumerate(rects):
                for b, _tb in rects[k + 1:]:
                    assert not a.intersects(b), f"{plot.spec.key} {side}: labels overlap"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["stanford_saha2009", "fivebar_saha"])
def test_a_time_is_one_vertical_line_down_a_column(make_window, qtbot, name, size):
    """Stacked plots had plot areas of different widths (their legends and labels
    differ): the same time sat at different x. Their areas start and end at the same x,
    and a legend never covers its plot area (the cut-force legend covered the curves and
    the time cursor at 1280 x 800)."""
    window = make_window(ROBOTS / f"{name}.toml", size=size)
    traj = run(window, qtbot)
    plots = shown_plots(window)
    columns = window.plots._columns
    for c in range(columns):
        column = plots[c::columns]
        lefts = {round(p.vb.sceneBoundingRect().left(), 1) for p in column}
        rights = {round(p.vb.sceneBoundingRect().right(), 1) for p in column}
        assert len(lefts) == 1 and len(rights) == 1, (lefts, rights)
        t = float(traj.t[len(traj) // 3])
        xs = {round(p.vb.mapViewToScene(QPointF(t, 0.0)).x(), 1) for p in column}
        assert len(xs) == 1
    for plot in plots:
        area = plot.vb.sceneBoundingRect()
        legend = plot.legend.sceneBoundingRect()
        box = legend.adjusted(0, 0, plot.legend.natural_width() - legend.width(), 0)
        assert box.left() >= area.right(), f"{plot.spec.key}: the legend covers the plot"


@pytest.mark.parametrize("size", SIZES)
def test_the_time_axis_labels_its_start_and_end(make_window, qtbot, size):
    window = make_window(PUMA, size=size)
    traj = run(window, qtbot, 2.5)
    bottom = [p for p in shown_plots(window)
              if p.item.getAxis("bottom").style["showValues"]]
    assert bottom
    for plot in bottom:
        axis = plot.item.getAxis("bottom")
        assert isinstance(axis, TimeAxis)
        texts = [text for _rect, text in label_rects(axis)]
        assert texts[0] == "0" or "0" in texts
        assert f"{traj.t[-1]:.4g}" in texts  # "2.5"
        rects = [rect for rect, _text in label_rects(axis)]
        for k, a in enumerate(rects):
            assert not any(a.intersects(b) for b in rects[k + 1:])


def test_an_empty_plot_labels_no_values(make_window, qtbot):
    """Before a run the residual's log axis read 6e0, 4e0, 2e0: the y axes of a plot
    without samples show no values; a log axis never writes 6 as 6e0."""
    window = make_window(ROBOTS / "fivebar_saha.toml", size=(1280, 800))
    flush_events()
    for plot in shown_plots(window):
        assert not plot.item.getAxis("left").style["showValues"]
        assert label_rects(plot.item.getAxis("left")) == []
    run(window, qtbot, 1.0)
    residual = next(p for p in shown_plots(window) if p.spec.key == "loop_residual")
    axis = residual.item.getAxis("left")
    texts = [text for _rect, text in label_rects(axis)]
    assert texts and all("e" in t for t in texts)  # 1e-16 ...: powers of ten
    assert axis.logTickStrings([np.log10(6.0), np.log10(2e-16)], 1.0, 1.0)[:2] == ["6",
                                                                                 "2e-16"]


def test_long_axis_titles_shorten_to_their_unit_in_a_low_plot(make_window, qtbot):
    window = make_window(ROBOTS / "carpet_scraper_saha.toml", size=(1280, 800))
    run(window, qtbot, 1.0)
    from PySide6.QtGui import QFont, QFontMetricsF

    shortened = 0
    for plot in shown_plots(window):
        axis = plot.item.getAxis("left")
        text = axis.labelText
        font = QFont()
        font.setPointSizeF(11.0)
        fits = QFontMetricsF(font).horizontalAdvance(plot.spec.left) <= plot.vb.rect().height() - 4
        if fits:
            assert text == plot.spec.left
        else:  # the unit alone, the whole title in the tooltip
            assert text == plot.spec.left[plot.spec.left.index("("):]
            assert axis.toolTip() == plot.spec.left
            shortened += 1
    assert shortened  # (at 1280 x 800 the Results plots are low)


def test_the_scrapers_cut_force_spikes_are_clipped_marked_and_explained(make_window, qtbot):
    """The carpet scraper's cut forces reach -18 kN near its toggle poses and flattened
    every other curve to zero: the plot shows the others' range, marks the samples
    beyond it and says why; Clip spikes off shows them all."""
    window = make_window(ROBOTS / "carpet_scraper_saha.toml", size=(1600, 1000))
    traj = run(window, qtbot)
    plots = window.plots
    assert plots.clip_button.isChecked()
    assert plots.clipped_plots() == ["cut_forces"]
    cut = next(p for p in plots._shown if p.spec.key == "cut_forces")
    lo, hi = cut.vb.viewRange()[1]
    forces = np.asarray(traj.cut_forces)
    assert forces.min() < lo and hi < forces.max() + 1  # the spikes are beyond the view
    assert hi - lo < 0.25 * np.ptp(forces)              # and the rest fills it
    marks = cut.spike_marks[cut.vb]
    assert marks.isVisible() and len(marks.data) >= 4
    note = plots.spike_note
    assert note.isVisible() and "Cut-joint forces" in note.text()
    assert "toggle poses" in note.text()
    plots.clip_button.setChecked(False)
    lo, hi = cut.vb.viewRange()[1]
    assert lo <= forces.min() and forces.max() <= hi
    assert not marks.isVisible() and not note.isVisible()
    plots.clip_button.setChecked(True)
    assert plots.clipped_plots() == ["cut_forces"]


def test_stop_impacts_are_said_and_smooth_runs_are_not_clipped(make_window, qtbot):
    window = make_window(ROBOTS / "stanford_saha2009.toml", size=(1600, 1000))
    run(window, qtbot)
    assert window.plots.clipped_plots() == ["joint_torques"]
    assert "end stop" in window.plots.spike_note.text()
    window = make_window(PUMA, size=(1600, 1000))
    run(window, qtbot)
    assert window.plots.clipped_plots() == [] and not window.plots.spike_note.isVisible()


def test_a_plot_hidden_when_a_run_ends_is_fitted_and_explained_when_shown(make_window,
                                                                           qtbot):
    """The spike statistics of a hidden plot wait until it is shown (the human's hidden
    plots held the window 130-240 ms at the end of its 600 s fall, issue #23): then it
    takes its robust range, marks its spikes and the note says why."""
    window = make_window(ROBOTS / "stanford_saha2009.toml", size=(1600, 1000))
    plots = window.plots
    plots.set_visible_plots(["joint_angles"])
    run(window, qtbot)
    assert plots.clipped_plots() == [] and not plots.spike_note.isVisible()
    plots.set_visible_plots(["joint_angles", "joint_torques"])
    assert plots.clipped_plots() == ["joint_torques"]
    assert plots.spike_note.isVisible() and "end stop" in plots.spike_note.text()
    torques = next(p for p in plots._shown if p.spec.key == "joint_torques")
    _t, values, _rows = torques.view_values(torques.vb)
    lo, hi = torques.vb.viewRange()[1]
    assert values.min() < lo or hi < values.max()  # the spikes are beyond the view
    assert torques.spike_marks[torques.vb].isVisible()


def test_a_finished_run_is_fitted_a_plot_a_turn_to_what_fitting_at_once_gives(make_window,
                                                                              qtbot):
    """At a run's end the shown plots are fitted and drawn over several turns of the
    event loop (all in the run's last turn held the window up to 60 ms, issue #23); once
    done their ranges, the clipped plots and the note are those of the same run fitted
    at once (`set_trajectory`)."""
    from PySide6.QtCore import QCoreApplication

    window = make_window(ROBOTS / "stanford_saha2009.toml", size=(1600, 1000))
    plots = window.plots
    plots.set_visible_plots(["joint_angles", "joint_rates", "joint_torques", "energy"])
    with qtbot.waitSignal(window.session.run_ended, timeout=60000) as ended:
        window.run_panel.start_free_fall(3.0)
    turns = 0
    while plots.fitting() and turns < 100:
        QCoreApplication.processEvents()
        turns += 1
    assert 2 <= turns < 100 and not plots.fitting()
    flush_events()

    def state():
        return ([(p.spec.key, p.vb.viewRange(), p.vb2.viewRange()) for p in plots._shown],
                plots.clipped_plots(), plots.spike_note.text())

    gradual = state()
    plots.set_trajectory(ended.args[0].trajectory)  # all at once
    flush_events()
    at_once = state()
    assert gradual[1:] == at_once[1:] == (["joint_torques"], at_once[2])
    assert "end stop" in gradual[2]
    for (key, x, y), (key1, x1, y1) in zip(gradual[0], at_once[0]):
        assert key == key1 and np.allclose(x, x1) and np.allclose(y, y1), key


def test_spike_range_keeps_humps_and_drops_spikes():
    t = np.linspace(0.0, 3.0, 301)
    wave = np.c_[np.sin(3 * t), 0.5 * np.cos(2 * t)]
    assert spike_range(wave) is None
    spiky = wave.copy()
    spiky[60:63, 0] = -40.0
    spiky[200, 1] = 25.0
    r = spike_range(spiky)
    assert r is not None and -40 < r.lo <= -1 and 1 <= r.hi < 25  # the wave, not the spikes
    marks = r.marks(t, spiky)
    assert [(round(m[0], 2), m[1], m[2]) for m in marks] == [(0.6, 0, False), (2.0, 1, True)]
    # a fall of a tenth of the run, then rest: not a spike
    hump = np.zeros((301, 1))
    hump[:40, 0] = np.linspace(0.0, 1.4, 40)
    assert spike_range(hump) is None


def test_spike_range_of_a_plots_transposed_buffer_follows_its_definition():
    """A plot's values are a transposed view of its (curves, samples) buffer, read
    without a copy: the robust range is still the 1st to 99th percentiles of every k-th
    value in time order (k: at most STATS_SAMPLES of them), widened to the median
    +- SPIKE_MADS scaled MADs, here computed from the values flattened."""
    from armdyn.gui.plots.spikes import SPIKE_MADS, STATS_SAMPLES
    rng = np.random.default_rng(23)
    buffer = rng.normal(size=(7, 50_000))
    buffer[3, 1000:1010] = 1e3
    values = buffer.T  # (S, m), not C-ordered
    r = spike_range(values)
    every = values.reshape(-1)[::values.size // STATS_SAMPLES]
    median = np.median(every)
    mad = 1.4826 * np.median(np.abs(every - median))
    p1, p99 = np.percentile(every, [1.0, 99.0])
    assert r is not None and r.full == (values.min(), values.max()) == (values.min(), 1e3)
    assert r.lo == max(values.min(), min(p1, median - SPIKE_MADS * mad))
    assert r.hi == min(values.max(), max(p99, median + SPIKE_MADS * mad))
    assert r.above[1000:1010, 3].all() and r.above.sum() == 10


def test_grid_axes_draw_no_overlapping_labels():
    """`_apart` keeps the first of two overlapping labels (pyqtgraph draws the major
    level first)."""
    from PySide6.QtCore import QRectF

    from armdyn.gui.plots.plots_panel import _apart

    specs = [(QRectF(0, 0, 20, 10), 0, "1e-15"), (QRectF(0, 5, 20, 10), 0, "8e-16"),
             (QRectF(0, 30, 20, 10), 0, "1e-16")]
    assert [s[2] for s in _apart(specs)] == ["1e-15", "1e-16"]
    assert issubclass(TimeAxis, GridAxis)
    # side by side on a narrow time axis, labels 1 px apart read as one ("0.40.6")
    row = [(QRectF(0, 0, 10, 10), 0, "0"), (QRectF(50, 0, 16, 10), 0, "0.4"),
           (QRectF(67, 0, 16, 10), 0, "0.6"), (QRectF(120, 0, 10, 10), 0, "1")]
    assert [s[2] for s in _apart(row)] == ["0", "0.4", "1"]


@pytest.mark.parametrize("size", SIZES)
def test_compare_keeps_a_right_margin_and_its_last_time_label(make_window, qtbot, size):
    """Compare's plots reached the dock's right edge and lost their last time label:
    both plots keep a right margin, share their axis widths, and their time axis labels
    0 and the run's end."""
    from armdyn.gui.jobs.comparison import Change, ChangeField, ChangeOp

    window = make_window(PUMA, size=size)
    window.compare_dock.show()
    window.compare_dock.raise_()
    flush_events()
    panel = window._compare.panel
    panel.add_change(Change(1, ChangeField.MASS, ChangeOp.SCALE, 2.0))
    with qtbot.waitSignal(panel.finished, timeout=60000):
        panel.compare()
    flush_events()
    plots = panel.plots
    upper, lower = plots.plot, plots.diff_plot
    view = plots._graphics
    for item in (upper, lower):
        area = item.vb.sceneBoundingRect()
        assert view.width() - area.right() >= 12, "no right margin"
    assert upper.vb.sceneBoundingRect().left() == lower.vb.sceneBoundingRect().left()
    assert upper.vb.sceneBoundingRect().right() == lower.vb.sceneBoundingRect().right()
    texts = [text for _rect, text in label_rects(lower.getAxis("bottom"))]
    end = f"{panel.result[0].t[-1]:.4g}"
    assert "0" in texts and end in texts
    rect = next(r for r, text in label_rects(lower.getAxis("bottom")) if text == end)
    corner = lower.getAxis("bottom").mapRectToScene(rect)
    assert corner.right() <= view.width(), "the last time label is cut off"


def test_the_plots_only_some_models_have_are_made_for_the_first_of_them(make_window):
    """A window on an arm makes no plot of loops, free joints or gears (made, they were
    35 ms of every start); the first model that has them makes them, in their place
    among the others and as those are now: fonts, legends, time range."""
    from armdyn.gui.plots.plots_panel import LOOP_PLOTS, OPTIONAL_PLOTS, SPECS

    window = make_window(PUMA)
    panel = window.plots
    assert not {p.spec.key for p in panel._all_plots} & set(OPTIONAL_PLOTS)
    panel.set_font_scale(1.5)
    panel.set_legends_below(True)
    panel.set_legends_shown(False)
    assert window.files.load(ROBOTS / "fourbar.toml")
    keys = [p.spec.key for p in panel._all_plots]
    assert set(LOOP_PLOTS) <= set(keys)
    assert keys == [s.key for s in SPECS if s.key in keys]  # in SPECS order
    assert set(panel.visible_plots()) >= set(LOOP_PLOTS)
    torques = next(p for p in panel._all_plots if p.spec.key == "joint_torques")
    for plot in (p for p in panel._all_plots if p.spec.key in LOOP_PLOTS):
        assert plot.font_scale == torques.font_scale == 1.5
        assert (plot.item.getAxis("left").style["tickFont"].pointSizeF()
                == torques.item.getAxis("left").style["tickFont"].pointSizeF())
        assert plot.legend.below and torques.legend.below
        assert not plot.legend.isVisible() and not torques.legend.isVisible()
        assert tuple(plot.vb.viewRange()[0]) == tuple(torques.vb.viewRange()[0])
    assert window.files.load(PUMA)  # the loop plots stay made, not offered
    assert not set(panel.available_plots()) & set(OPTIONAL_PLOTS)
