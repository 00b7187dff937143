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
