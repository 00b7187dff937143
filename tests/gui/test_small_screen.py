"""Issue #9 on a 1280 x 800 screen: the run controls in sight, legends beside the
curves, the whole arm with its base in the default view, labelled log axes."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage, QPainter

from armdyn.gui.plots.plots_panel import _LogAxis

from gui_helpers import PUMA, ROBOTS, chain, flush_events

pytestmark = pytest.mark.gui


def settled(qtbot, window) -> None:
    """The default dock sizes are applied after the first layout pass."""
    flush_events()
    qtbot.wait(100)
    flush_events()


@pytest.mark.parametrize("path", [PUMA, ROBOTS / "fivebar_saha.toml"], ids=["puma", "fivebar"])
def test_run_pause_stop_and_progress_are_in_sight_at_1280x800(make_window, qtbot, path):
    window = make_window(path, (1280, 800))
    settled(qtbot, window)
    assert window.run_panel.controls_in_sight()
    window.run_panel._tabs.setCurrentIndex(1)  # the free-fall page is taller
    flush_events()
    assert window.run_panel.controls_in_sight()


def test_legends_sit_beside_the_curves(make_window, qtbot):
    window = make_window(PUMA, (1280, 800))
    settled(qtbot, window)
    plots = window.plots
    for plot in plots._shown:
        legend = plot.legend.sceneBoundingRect()
        area = plot.vb.sceneBoundingRect()
        assert legend.width() > 10
        assert legend.left() >= area.right() - 1, plot.spec.key  # right of the plot area
    plots.set_legends_shown(False)
    assert all(p.legend.sceneBoundingRect().width() < 1 or not p.legend.isVisible()
               for p in plots._shown)
    plots.set_legends_shown(True)


def test_the_default_view_shows_the_whole_arm_with_its_base(make_window, qtbot):
    window = make_window(PUMA, (1280, 800))
    settled(qtbot, window)
    view = window.view3d
    view.reset_camera()
    view.render_now()
    renderer = view.plotter.renderer
    w, h = renderer.GetSize()
    for name in ("base", "pedestal", "joint 1", "joint 6", "effector"):
        b = np.array(view.actors[name].GetBounds())
        for corner in [(x, y, z) for x in b[:2] for y in b[2:4] for z in b[4:]]:
            renderer.SetWorldPoint(*corner, 1.0)
            renderer.WorldToDisplay()
            x, y, _ = renderer.GetDisplayPoint()
            assert -1 <= x <= w + 1 and -1 <= y <= h + 1, (name, corner, (x, y), (w, h))


@pytest.mark.parametrize("low, high", [(3.3e-16, 3.4e-16), (1.1e-16, 1.6e-16),
                                       (2e-16, 3e-15), (1e-18, 1e-12)])
def test_the_log_axis_always_has_labels(qtbot, low, high):
    widget = pg.PlotWidget(axisItems={"left": _LogAxis("left")})
    qtbot.addWidget(widget)
    widget.setLogMode(False, True)
    widget.resize(600, 300)
    widget.show()
    widget.plot(np.arange(100.0), np.linspace(low, high, 100))
    flush_events()
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    texts = [spec[2] for spec in widget.getAxis("left").generateDrawSpecs(painter)[2]]
    painter.end()
    assert len(texts) >= 2, texts
    assert len(set(texts)) == len(texts)


def _overflow_menu(bar):
    from PySide6.QtWidgets import QToolButton

    button = bar.findChild(QToolButton, "qt_toolbar_ext_button")
    return button if button is not None and button.isVisible() else None


def _unreachable(bar) -> list[str]:
    """The 3D view bar's actions that are neither shown on the bar nor listed (with their
    text) in its overflow menu."""
    from PySide6.QtWidgets import QWidgetAction

    ext = _overflow_menu(bar)
    listed = ext.menu().actions() if ext is not None and ext.menu() is not None else []
    missing = []
    for action in bar.actions():
        if action.isSeparator() or not action.isVisible():
            continue
        widget = bar.widgetForAction(action)
        on_bar = (widget is not None and widget.isVisible()
                  and bar.rect().contains(widget.geometry()))
        in_menu = (action in listed and bool(action.text())
                   and not isinstance(action, QWidgetAction))  # a widget: a blank entry
        if not (on_bar or in_menu):
            missing.append(action.text() or type(widget).__name__)
    return missing


@pytest.mark.parametrize("bar_width", [None, 260, 120])
def test_every_view_bar_action_is_on_the_bar_or_in_its_overflow_menu(make_window, qtbot,
                                                                      bar_width):
    """Issue #9: at 1280 x 800 (and narrower bars) the overflow menu lists what the bar
    cannot show, the Show menu included."""
    window = make_window(PUMA, (1280, 800))
    settled(qtbot, window)
    bar = window.view_bar
    if bar_width is not None:
        bar.setMaximumWidth(bar_width)
        settled(qtbot, window)
        assert _overflow_menu(bar) is not None
    assert _unreachable(bar) == []
    names = [a.text() for a in bar.actions() if not a.isSeparator()]
    assert {"&Fit", "Front", "Side", "Top", "Iso", "Ortho", "Show"} <= set(names)


@pytest.mark.parametrize("path, size", [
    (PUMA, (1280, 800)), (ROBOTS / "scara.toml", (1280, 800)),
    (ROBOTS / "fivebar_saha.toml", (1280, 800)),
    ("chain of 40", (1280, 800)), ("chain of 40", (1600, 1000))],
    ids=["puma", "scara", "fivebar", "40 joints", "40 joints at 1600x1000"])
def test_plots_and_run_panel_fit_their_docks(make_window, qtbot, path, size, tmp_path):
    """Nothing is cut off at the right edge: every plot with its legend lies inside the
    plots' view, each legend inside its plot's share, and the Run panel's pages are no
    wider than the dock shows (its scroll area has no horizontal bar). 40 joints: a
    legend that found no layout in its share took as much as it needed and pushed the
    plot beside it out of the view."""
    if path == "chain of 40":
        from armdyn.core.io.robot_file import save_robot
        path = tmp_path / "chain40.toml"
        save_robot(chain(40), path)
    window = make_window(path, size)
    settled(qtbot, window)
    plots = window.plots
    view = plots._graphics
    for plot in plots._shown:
        item = plot.item.sceneBoundingRect()
        legend = plot.legend.sceneBoundingRect()
        assert item.right() <= view.width() + 1, plot.spec.key
        assert legend.right() <= item.right() + 1, plot.spec.key
        assert legend.height() <= item.height() + 1, plot.spec.key
    panel = window.run_panel
    scroll = panel.parentWidget().parentWidget()  # viewport, then the dock's scroll area
    for page in (0, 1):
        panel._tabs.setCurrentIndex(page)
        flush_events()
        assert panel.width() <= scroll.viewport().width() + 1, page


def test_a_flat_curve_is_drawn_flat_not_as_its_rounding_noise(make_window, qtbot):
    """The SCARA's vertical shoulder and elbow never move in a free fall: their angles
    carry only ~1e-15 deg of rounding noise, which the axis must not blow up."""
    from armdyn.gui.plots.plots_panel import MIN_Y_SPAN
    window = make_window(ROBOTS / "scara.toml", (1280, 800))
    settled(qtbot, window)
    window.run_panel.start_free_fall(0.5)
    qtbot.waitUntil(lambda: not window.run_panel.is_running(), timeout=120_000)
    settled(qtbot, window)
    angles = next(p for p in window.plots._shown if p.spec.key == "joint_angles")
    q = window.trajectory.q[:, :2]
    assert np.ptp(q) < 1e-9  # (the premise: flat up to rounding)
    low, high = angles.vb.viewRange()[1]
    assert high - low >= MIN_Y_SPAN * 0.999
