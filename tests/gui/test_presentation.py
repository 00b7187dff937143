"""Presentation mode (gui/panels/presentation.py, issue #10): the 3D view and one plot side by
side in large fonts, driven from the keyboard whatever has the focus, and everything
as it was after leaving."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QDockWidget

from armdyn.gui.panels.presentation import PLOT_SHARE, WINDOWED_SETTING

from gui_helpers import PUMA, ROBOTS, flush_events, rgb_array, screen_pixels

HELP_BACKGROUND = (26, 29, 33)  # presentation.HELP_STYLE

pytestmark = pytest.mark.gui

FOURBAR = ROBOTS / "fourbar.toml"


def windowed(settings) -> None:
    settings.setValue(WINDOWED_SETTING, True)


def layout_of(window) -> dict:
    """What leaving must restore."""
    docks = {d.objectName(): (d.isVisible(), window.dockWidgetArea(d), d.isFloating())
             for d in window.findChildren(QDockWidget)}
    return {"docks": docks, "plots": window.plots.visible_plots(),
            "font": window.font().toString(), "state": window.windowState(),
            "menu": window.menuBar().isVisible(), "status": window.statusBar().isVisible(),
            "view bar": window.view_bar.isVisible(), "playback": window.playback.isVisible(),
            "plot buttons": window.plots.controls_visible(),
            "plot scale": window.plots.font_scale(), "size": window.size()}


def point_size(description: str) -> float:
    """Point size of a QFont.toString() description."""
    return float(description.split(",")[1])


def x_span(window, widget) -> tuple[int, int]:
    left = widget.mapTo(window, QPoint(0, 0)).x()
    return left, left + widget.width()


def tick_point_size(window, key: str) -> float:
    """The left axis's tick font of plot `key` (pyqtgraph keeps it in the axis style)."""
    plot = next(p for p in window.plots._all_plots if p.spec.key == key)
    return plot.item.getAxis("left").style["tickFont"].pointSizeF()


def key(qtbot, widget, k) -> None:
    qtbot.keyClick(widget, k)
    flush_events()


def assert_side_by_side(window) -> None:
    """Only the 3D view and the Results dock, the 3D view left, each a good share."""
    shown = [d for d in window.findChildren(QDockWidget) if d.isVisible()]
    assert shown == [window.plots_dock]
    assert window.view3d.isVisible() and window.plots.isVisible()
    assert not window.menuBar().isVisible() and not window.playback.isVisible()
    assert not window.plots.controls_visible()
    assert len(window.plots.visible_plots()) == 1
    (l3, r3), (lp, rp) = x_span(window, window.view3d), x_span(window, window.plots_dock)
    width = window.width()
    assert r3 <= lp, "the 3D view is left of the plot"
    assert r3 - l3 >= 0.45 * width and rp - lp >= 0.3 * width
    assert abs((rp - lp) / width - PLOT_SHARE) < 0.06
    assert rp <= width + 1
    # the plot fits its pane: its scene is no wider than the view that shows it
    graphics = window.plots._graphics
    assert graphics.ci.geometry().width() <= graphics.viewport().width() + 1
    # the two panes are about as tall as the window (only the slim bar above)
    bar = window.presentation.bar
    assert bar.isVisible() and bar.height() < 0.1 * window.height()
    assert window.view3d.height() > 0.8 * window.height()


def test_enter_keys_and_leave_on_a_robot(make_window, qtbot, settings):
    windowed(settings)
    window = make_window(PUMA, size=(1600, 1000))
    flush_events()
    before = layout_of(window)
    tick_before = tick_point_size(window, "joint_angles")
    presentation = window.presentation
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert presentation.action in view_menu.actions()

    presentation.action.trigger()
    qtbot.waitUntil(lambda: window.plots.font_scale() > 1.0, timeout=2000)
    flush_events()
    assert presentation.is_active()
    assert_side_by_side(window)
    # fonts grew: the window's, the plots' ticks, the bar's
    assert window.font().pointSizeF() >= 1.5 * point_size(before["font"])
    assert window.view3d.font().pointSizeF() == window.font().pointSizeF()
    key_plot = window.plots.visible_plots()[0]
    assert tick_point_size(window, key_plot) >= 1.5 * tick_before
    assert presentation.status_label.font().pointSizeF() >= 1.5 * point_size(before["font"])
    assert window.document.robot.name in presentation.status_label.text()

    # keys go where the focus is: the 3D view's interactor, the plots' scene
    interactor = window.view3d.plotter
    graphics = window.plots._graphics

    # R runs the Run panel's inverse dynamics (from the pose to its targets)
    assert window.trajectory is None
    key(qtbot, interactor, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: window.trajectory is not None, timeout=30000)
    traj = window.trajectory
    assert traj.kind == "inverse-dynamics" and len(traj) > 10
    np.testing.assert_allclose(traj.q[0], window.pose, atol=1e-9)  # starts at the pose
    np.testing.assert_allclose(traj.qd[-1], 0.0, atol=1e-6)  # rest to rest
    assert "done" in presentation.status_label.text()

    # Home / Right / End / Left walk the samples
    playback = window.playback
    key(qtbot, graphics, Qt.Key.Key_End)
    assert playback.time() == pytest.approx(traj.t[-1])
    key(qtbot, graphics, Qt.Key.Key_Home)
    assert playback.time() == pytest.approx(traj.t[0])
    key(qtbot, interactor, Qt.Key.Key_Right)
    assert playback.time() == pytest.approx(traj.t[1])
    key(qtbot, interactor, Qt.Key.Key_Left)
    assert playback.time() == pytest.approx(traj.t[0])

    # Space plays and pauses (the 3D view follows the frames)
    key(qtbot, interactor, Qt.Key.Key_Space)
    assert playback.is_playing()
    qtbot.waitUntil(lambda: playback.time() > traj.t[3], timeout=5000)
    key(qtbot, graphics, Qt.Key.Key_Space)
    assert not playback.is_playing()
    np.testing.assert_allclose(window.view3d.q, traj.at(playback.time()), atol=1e-9)

    # 2 shows the second plot alone; Tab the next; Shift+Tab back
    available = window.plots.available_plots()
    assert available == ["joint_angles", "joint_rates", "joint_torques", "energy"]
    key(qtbot, interactor, Qt.Key.Key_2)
    assert window.plots.visible_plots() == [available[1]]
    assert "Joint rates" in presentation.status_label.text()
    key(qtbot, graphics, Qt.Key.Key_Tab)
    assert window.plots.visible_plots() == [available[2]]
    key(qtbot, graphics, Qt.Key.Key_Backtab)
    assert window.plots.visible_plots() == [available[1]]
    key(qtbot, graphics, Qt.Key.Key_9)  # no ninth plot: nothing changes
    assert window.plots.visible_plots() == [available[1]]
    assert_side_by_side(window)

    # + and - change the fonts
    size = window.font().pointSizeF()
    key(qtbot, interactor, Qt.Key.Key_Plus)
    assert window.font().pointSizeF() > size
    key(qtbot, interactor, Qt.Key.Key_Minus)
    assert window.font().pointSizeF() == pytest.approx(size)

    # F fits the arm (after a zoom away)
    camera = window.view3d.plotter.camera
    camera.zoom(0.2)
    far = camera.position
    key(qtbot, interactor, Qt.Key.Key_F)
    assert np.linalg.norm(np.subtract(camera.position, camera.focal_point)) < np.linalg.norm(
        np.subtract(far, camera.focal_point))

    # ? shows the help, Esc hides it (and stays in the mode)
    key(qtbot, graphics, Qt.Key.Key_Question)
    assert presentation.help.isVisible()
    # on screen, over the 3D view's native window, and opaque: a translucent help
    # showed stale pixels of the window through it (Qt blends it with its own copy of
    # the window, which holds no 3D picture)
    qtbot.wait(100)
    shown = screen_pixels(presentation.help).reshape(-1, 3)
    colors, counts = np.unique(shown, axis=0, return_counts=True)
    assert tuple(colors[counts.argmax()]) == HELP_BACKGROUND
    assert counts.max() > 0.6 * len(shown)  # the rest is its text
    # and the window's image (--screenshot) shows it too, not the 3D picture over it
    image = rgb_array(window.image())
    corner = presentation.help.mapTo(window, QPoint(0, 0))
    size = presentation.help.size()
    area = image[corner.y():corner.y() + size.height(), corner.x():corner.x() + size.width()]
    assert (area.reshape(-1, 3) == HELP_BACKGROUND).all(axis=1).mean() > 0.6
    key(qtbot, graphics, Qt.Key.Key_Escape)
    assert not presentation.help.isVisible() and presentation.is_active()

    # Esc leaves: everything as before
    key(qtbot, interactor, Qt.Key.Key_Escape)
    assert not presentation.is_active() and not presentation.action.isChecked()
    flush_events()
    assert layout_of(window) == before
    assert tick_point_size(window, "joint_angles") == pytest.approx(tick_before)
    # the keys are the widgets' own again
    key(qtbot, graphics, Qt.Key.Key_2)
    key(qtbot, graphics, Qt.Key.Key_Space)
    assert window.plots.visible_plots() == before["plots"]
    assert not playback.is_playing()


def test_f5_toggles_and_full_screen_is_restored(make_window, qtbot):
    window = make_window(PUMA, size=(1280, 800))
    before = layout_of(window)
    window.presentation.set_active(True)
    flush_events()
    assert window.windowState() & Qt.WindowState.WindowFullScreen
    key(qtbot, window.view3d.plotter, Qt.Key.Key_F5)
    assert not window.presentation.is_active()
    qtbot.waitUntil(lambda: not window.windowState() & Qt.WindowState.WindowFullScreen,
                    timeout=2000)
    flush_events()
    after = layout_of(window)
    assert after == before


def test_a_mechanism_at_1280x800(make_window, qtbot, settings):
    windowed(settings)
    window = make_window(FOURBAR, size=(1280, 800))
    flush_events()
    before = layout_of(window)
    presentation = window.presentation
    presentation.set_active(True)
    qtbot.waitUntil(lambda: window.plots.font_scale() > 1.0, timeout=2000)
    flush_events()
    assert window.width() == 1280, "presentation mode must not widen the window"
    assert_side_by_side(window)
    available = window.plots.available_plots()
    assert "cut_forces" in available and "loop_residual" in available
    for number, plot in enumerate(available, start=1):
        key(qtbot, window.view3d.plotter, getattr(Qt.Key, f"Key_{number}"))
        assert window.plots.visible_plots() == [plot]
        flush_events()
        assert_side_by_side(window)
    # a run of the mechanism, then its cut forces
    key(qtbot, window.view3d.plotter, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: window.trajectory is not None, timeout=30000)
    assert window.trajectory.cut_forces.shape[0] == len(window.trajectory)
    key(qtbot, window.plots, Qt.Key.Key_S)  # nothing runs: stop does nothing
    key(qtbot, window.view3d.plotter, Qt.Key.Key_Escape)
    flush_events()
    assert layout_of(window) == before
