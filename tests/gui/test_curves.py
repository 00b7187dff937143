"""gui.plots.curves: the plots' light curve and its peak downsampling (issue #8)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from armdyn.gui.plots.curves import SampleCurve, peak_downsample
from armdyn.gui.plots.plots_panel import PlotsPanel

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("size, ds", [(1000, 7), (1001, 10), (10, 3), (5, 9), (60001, 59)])
def test_peak_downsample_keeps_each_bins_extremes(size, ds):
    rng = np.random.default_rng(size + ds)
    t = np.sort(rng.uniform(0.0, 10.0, size))
    y = rng.normal(size=size)
    x_out, y_out = peak_downsample(t, y, ds)
    step = min(ds, size)
    starts = range(0, size, step)  # the bins, written out one by one
    assert len(x_out) == len(y_out) == 2 * len(starts)
    for b, k in enumerate(starts):
        chunk = slice(k, min(k + step, size))
        assert x_out[2 * b] == t[chunk][0] and x_out[2 * b + 1] == t[chunk][-1]
        assert y_out[2 * b] == y[chunk].max() and y_out[2 * b + 1] == y[chunk].min()
    # the drawn curve spans exactly the samples: an auto-ranging view stays put
    assert (x_out.min(), x_out.max(), y_out.min(), y_out.max()) == (t[0], t[-1], y.min(),
                                                                      y.max())


def written_out_bins(t, y, ds):
    """The bins of `ds` samples one by one: (first t, max y), (last t, min y) each."""
    step = min(ds, len(t))
    x_out, y_out = [], []
    for k in range(0, len(t), step):
        chunk = slice(k, min(k + step, len(t)))
        x_out += [t[chunk][0], t[chunk][-1]]
        y_out += [y[chunk].max(), y[chunk].min()]
    return np.array(x_out), np.array(y_out)


@pytest.mark.parametrize("before, size, ds", [(1000, 1500, 7), (994, 1001, 7), (3, 50, 9),
                                              (20, 20, 5), (59, 60001, 59)])
def test_peak_downsample_from_known_bins_is_the_whole_binning(before, size, ds):
    """A streamed run's curve keeps the whole bins of the samples it had and bins only
    what came after: the same points as binning every sample."""
    rng = np.random.default_rng(before + size)
    t = np.cumsum(rng.uniform(0.001, 0.01, size))
    y = rng.normal(size=size)
    known = peak_downsample(t[:before], y[:before], ds)
    x_out, y_out = peak_downsample(t, y, ds, known=known)
    x_ref, y_ref = written_out_bins(t, y, ds)
    assert np.array_equal(x_out, x_ref) and np.array_equal(y_out, y_ref)


def test_a_streamed_curve_draws_what_a_fresh_one_draws(qtbot, view):
    """Samples growing in one buffer (a run streaming in) are binned from where they
    ended; a new buffer (the buffer grown, or the next run from the same time) is
    binned anew: at every step the points are those of a fresh curve."""
    view.setXRange(0.0, 60.0, padding=0.0)
    streamed = SampleCurve(pg.mkPen("k"))
    view.addItem(streamed)
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 60.0, 6001)
    runs = [np.cumsum(rng.normal(size=6001)), np.cumsum(rng.normal(size=6001))]
    steps = [(0, 5), (0, 997), (0, 2500), (0, 2501), (0, 6001), (1, 1200), (1, 6001)]
    t_buf, y_buf = t.copy(), runs[0].copy()
    for run, size in steps:
        if run == 1 and y_buf[0] == runs[0][0]:  # the next run: new buffers, same times
            t_buf, y_buf = t.copy(), runs[1].copy()
        if size == 2501:  # the buffer grown (copied), as `_Series.reserve` does
            t_buf, y_buf = t_buf.copy(), y_buf.copy()
        streamed.set_samples(t_buf[:size], y_buf[:size])
        fresh = SampleCurve(pg.mkPen("k"))
        view.addItem(fresh)
        fresh.set_samples(t[:size].copy(), runs[run][:size].copy())
        assert streamed.bin_size() == fresh.bin_size()
        x_s, y_s = streamed.getData()
        x_f, y_f = fresh.getData()
        assert np.array_equal(x_s, x_f) and np.array_equal(y_s, y_f), (run, size)
        if streamed.bin_size() > 1:  # the points are the bins written out
            x_ref, y_ref = written_out_bins(t[:size], runs[run][:size], streamed.bin_size())
            assert np.array_equal(x_s, x_ref) and np.array_equal(y_s, y_ref)
        view.removeItem(fresh)


@pytest.mark.parametrize("case", ["smooth", "nan and inf", "far spike", "few samples"])
def test_a_curves_bounds_are_those_pyqtgraph_finds_in_its_points(view, case):
    """SampleCurve knows its drawn points' bounds from the binning; pyqtgraph scans the
    same points (a plain PlotCurveItem given them): the same bounds, clipped ones too."""
    t = np.linspace(0.0, 600.0, 6 if case == "few samples" else 60001)
    y = np.sin(t) + 0.01 * t
    if case == "nan and inf":
        y[[100, 5000]] = np.nan
        y[7000] = np.inf
    if case == "far spike":  # drawn at DYNAMIC_RANGE_LIMIT view heights
        y[30000] = 1e12
    view.setRange(xRange=(0.0, 600.0), yRange=(-2.0, 8.0), padding=0.0)
    curve = SampleCurve(pg.mkPen("k", width=2))
    view.addItem(curve)
    curve.set_samples(t, y)
    x_drawn, y_drawn = curve.getData()
    scanned = pg.PlotCurveItem(x=x_drawn.copy(), y=y_drawn.copy(), pen=pg.mkPen("k", width=2))
    for ax in (0, 1):
        assert curve.dataBounds(ax) == scanned.dataBounds(ax), ax
    assert np.array_equal(curve.dataBounds(1, frac=0.9), scanned.dataBounds(1, frac=0.9))
    if case == "far spike":
        assert curve.dataBounds(1)[1] < 1e12
    view.removeItem(curve)


def test_peak_downsample_of_one_is_the_samples():
    t, y = np.arange(5.0), np.arange(5.0) ** 2
    x_out, y_out = peak_downsample(t, y, 1)
    assert x_out is t and y_out is y


@pytest.fixture
def view(qtbot):
    """The view of a plots panel's first plot, with no robot (no curves of its own): a
    panel adopts pyqtgraph's menus, which a bare PlotWidget leaves as top-level widgets."""
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 300)
    panel.set_visible_plots(["joint_angles"])
    panel.show()
    qtbot.waitExposed(panel)
    yield panel._shown[0].vb  # (the panel stays alive while the test runs)


def test_a_curve_draws_about_two_points_per_pixel_column(qtbot, view):
    t = np.linspace(0.0, 600.0, 60001)
    y = np.sin(t) + 0.01 * t
    curve = SampleCurve(pg.mkPen("k"))
    view.addItem(curve)
    view.setXRange(0.0, 600.0, padding=0.0)
    curve.set_samples(t, y)
    x_drawn, y_drawn = curve.getData()
    width = view.width()
    # a bin holds int(samples per column) samples: up to width / ds more bins than
    # columns (the plot area's width follows its axes' labels, so any width comes up)
    assert 2 * width - 4 <= len(x_drawn) <= 2 * (width + width / curve.bin_size()) + 4
    assert (y_drawn.min(), y_drawn.max()) == (y.min(), y.max())
    assert curve.samples()[0] is t  # kept, not copied
    view.setXRange(100.0, 106.0, padding=0.0)  # zoomed in: 600 samples over the width
    assert curve.bin_size() == 1 and len(curve.getData()[0]) == len(t)
    view.setXRange(0.0, 600.0, padding=0.0)
    assert curve.bin_size() == int(600.0 / 0.01 / width)  # samples per pixel column
    view.setXRange(-1e307, 1e307, padding=0.0)  # as far out as pyqtgraph zooms: one bin
    assert len(curve.getData()[0]) == 2


def test_points_far_off_the_view_are_drawn_at_its_limit(qtbot, view):
    """A spike of 1e12 in a view 1 high is drawn at 1e6 view heights (Qt draws wrong
    lines through coordinates far off the screen), and in full once the view holds it."""
    from armdyn.gui.plots.curves import DYNAMIC_RANGE_LIMIT

    t = np.linspace(0.0, 1.0, 101)
    y = np.zeros(101)
    y[50] = 1e12
    curve = SampleCurve(pg.mkPen("k"))
    view.addItem(curve)
    view.setRange(xRange=(0.0, 1.0), yRange=(-0.5, 0.5), padding=0.0)
    curve.set_samples(t, y)
    assert curve.getData()[1].max() == pytest.approx(DYNAMIC_RANGE_LIMIT)
    view.setRange(yRange=(0.0, 2e12), padding=0.0)
    assert curve.getData()[1].max() == 1e12
    assert curve.samples()[1] is y


def test_a_log_curve_draws_decades(view):
    t = np.linspace(0.0, 1.0, 11)
    y = 10.0 ** -np.arange(11.0)
    curve = SampleCurve(pg.mkPen("k"), log_y=True)
    view.addItem(curve)
    curve.set_samples(t, y)
    np.testing.assert_allclose(curve.getData()[1], -np.arange(11.0))
    assert curve.samples()[1] is y


def test_a_cursor_moving_over_a_curve_repaints_only_the_points_under_it(qtbot, view):
    """Issue #23: the time cursor moving over the plots (playback) repaints a strip a few
    pixels wide; the curve strokes the points in that strip, not all of them (the human's
    39 angle curves each stroked ~460 points at every frame, ~30 ms)."""
    from PySide6.QtWidgets import QApplication

    t = np.linspace(0.0, 600.0, 60001)
    curve = SampleCurve(pg.mkPen("k", width=2))
    view.addItem(curve)
    view.setXRange(0.0, 600.0, padding=0.0)
    curve.set_samples(t, np.sin(t))
    drawn = len(curve.getData()[0])
    qtbot.waitUntil(lambda: curve.points_painted == drawn, timeout=5000)  # whole at first
    cursor = pg.InfiniteLine(pos=200.0, angle=90, pen=pg.mkPen("r", width=2))
    view.addItem(cursor, ignoreBounds=True)  # as the plots' time cursor
    QApplication.processEvents()
    painted = []
    for k in range(5):
        curve.points_painted = -1
        cursor.setValue(200.0 + 1.0 * (k + 1))  # a frame or so later
        qtbot.waitUntil(lambda: curve.points_painted >= 0, timeout=5000)
        painted.append(curve.points_painted)
    # two strips (where the cursor was and is) of a few pixel columns, 2 points each
    assert max(painted) <= 40, (painted, drawn)


@pytest.mark.parametrize("cached", [False, True])
def test_samples_streamed_into_a_fixed_view_repaint_only_their_strip(qtbot, view, cached):
    """Issue #20: while a run streams into views whose ranges stay put, a refresh that
    adds samples strokes only the points of the new strip (the humanoid's ~50 curves
    were stroked whole 30 times a second), and what the screen shows is what a curve
    given all the samples at once shows (as drawn directly, and as the pixmap a plot of
    at most CACHED_CURVES_MAX curves keeps)."""
    from PySide6.QtWidgets import QApplication, QGraphicsItem

    view.setXRange(0.0, 60.0, padding=0.0)  # as `PlotsPanel.set_run_duration` does
    view.setYRange(-15.0, 15.0, padding=0.0)
    screen_view = view.scene().views()[0]
    t = np.linspace(0.0, 60.0, 6001)
    y = 10.0 * np.sin(t) + np.random.default_rng(3).normal(scale=0.5, size=t.size)
    mode = (QGraphicsItem.CacheMode.DeviceCoordinateCache if cached
            else QGraphicsItem.CacheMode.NoCache)

    def shown(curve: SampleCurve, size: int):
        curve.points_painted = -1
        curve.set_samples(t_buf[:size], y_buf[:size])
        qtbot.waitUntil(lambda: curve.points_painted >= 0, timeout=5000)
        QApplication.processEvents()
        return curve.points_painted

    t_buf, y_buf = t.copy(), y.copy()  # one growing buffer, as `_Series` keeps
    streamed = SampleCurve(pg.mkPen("#0072B2", width=2))
    streamed.setCacheMode(mode)
    streamed.set_streaming(True)  # as `PlotsPanel.set_run_duration` says
    view.addItem(streamed)
    step = 400
    painted = [shown(streamed, size) for size in range(step, 4001, step)]
    ds = streamed.bin_size()
    assert ds > 1 and streamed.strip_updates == len(painted) - 1
    # each refresh after the first three (a strip of a third of the curve or more may be
    # drawn whole, and a cached curve's first pixmaps are): the
    # new samples' bins, two points each, and those of a few pixel columns before them
    # (the changed segments, the pen's width)
    whole = len(streamed.getData()[0])
    assert max(painted[3:]) <= 2 * (step // ds + 1) + 2 * 2 * 10, (painted, ds)
    assert max(painted[3:]) < whole / 4, (painted, whole)
    image = on_screen(screen_view)
    view.removeItem(streamed)
    fresh = SampleCurve(pg.mkPen("#0072B2", width=2))
    fresh.setCacheMode(mode)
    view.addItem(fresh)
    t_buf, y_buf = t.copy(), y.copy()
    shown(fresh, 4000)
    assert fresh.strip_updates == 0
    assert np.array_equal(fresh.getData()[0], streamed.getData()[0])
    assert_same_ink(on_screen(screen_view), image)
    fresh.set_streaming(True)
    # a new y range (a run's range grown) draws the curve whole again, then strips
    view.setYRange(-20.0, 20.0, padding=0.0)
    assert shown(fresh, 4400) == len(fresh.getData()[0])
    assert shown(fresh, 4800) < len(fresh.getData()[0]) // 4


def on_screen(widget) -> np.ndarray:
    """What the screen shows of `widget` (the X server's pixels, not a fresh render),
    grey levels (rows, columns)."""
    from PySide6.QtGui import QImage

    image = widget.screen().grabWindow(widget.winId()).toImage().convertToFormat(
        QImage.Format.Format_Grayscale8)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(
        image.height(), image.bytesPerLine())
    return rows[:, :image.width()].astype(float)


def assert_same_ink(a: np.ndarray, b: np.ndarray) -> None:
    """Two pictures of one curve agree column by column: each pixel column holds as much
    ink (darkness) in both, to anti-aliasing (a strip stroked apart shades a few edge
    pixels otherwise); a missing or stale piece of curve would take a column's whole."""
    ink_a, ink_b = (255.0 - a).sum(axis=0), (255.0 - b).sum(axis=0)
    assert a.shape == b.shape
    worst = float(np.max(np.abs(ink_a - ink_b)))
    assert worst <= 0.25 * float(np.median(ink_b[ink_b > 0])), (worst, np.median(ink_b))


def test_cursors_moving_in_plots_side_by_side_repaint_only_the_points_under_them(qtbot):
    """Issue #23: two plots side by side whose time cursors move at each playback frame
    make Qt repaint two strips, but give each item the rectangle that bounds both: from
    the left plot's cursor to the right one's. A curve in the panel's `StripView` strokes
    only its points in the strips (the human's 39 angle curves were stroked whole at
    every frame)."""
    from PySide6.QtWidgets import QApplication

    from armdyn.gui.plots.curves import StripView

    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(1200, 600)
    panel.set_visible_plots(["joint_angles", "joint_rates", "joint_torques", "energy"])
    panel.show()
    qtbot.waitExposed(panel)
    assert isinstance(panel._shown[0].vb.scene().views()[0], StripView)
    top = panel._shown[:2]  # the first row: side by side
    left_x = [p.vb.sceneBoundingRect().left() for p in top]
    assert left_x[1] > left_x[0] + 300 and all(
        p.vb.sceneBoundingRect().top() == top[0].vb.sceneBoundingRect().top() for p in top)
    t = np.linspace(0.0, 600.0, 60001)
    curves = []
    for k, plot in enumerate(top):
        plot.vb.setXRange(0.0, 600.0, padding=0.0)
        curve = SampleCurve(pg.mkPen("k", width=2))
        plot.vb.addItem(curve)
        curve.set_samples(t, np.sin(t + k))
        curves.append(curve)
    qtbot.waitUntil(lambda: min(c.points_painted for c in curves) > 0, timeout=5000)
    QApplication.processEvents()
    panel.set_cursor_time(100.0)
    QApplication.processEvents()
    drawn = len(curves[0].getData()[0])
    painted = []
    for k in range(5):
        for curve in curves:
            curve.points_painted = -1
        panel.set_cursor_time(100.0 + 1.0 * (k + 1))  # as a playback frame does
        qtbot.waitUntil(lambda: min(c.points_painted for c in curves) >= 0, timeout=5000)
        painted.append([c.points_painted for c in curves])
    # each curve: two strips of a few pixel columns (the cursor's old and new place)
    assert max(max(p) for p in painted) <= 40, (painted, drawn)
