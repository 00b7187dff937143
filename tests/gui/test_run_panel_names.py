"""Issue #21: the Run panel's joint names stay whole after a run at 1600x1000.

A finished run's status wraps to more lines; the taller status took the parameters'
height, their scroll area showed a vertical scroll bar, and the bar's width elided
every joint name ("2 shoulde") though the dock had room. Names are elided (with the
whole name in the tooltip) only in a dock really too narrow for them.
"""
from __future__ import annotations

import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gui_helpers import ROBOTS, flush_events

pytestmark = pytest.mark.gui

SHOTS = os.environ.get("ARMDYN_SHOTS")  # a folder: the windows are written there as PNGs


def _run_to_end(qtbot, window, kind: str) -> None:
    panel = window.run_panel
    with qtbot.waitSignal(panel.finished, timeout=60000):
        if kind == "inverse":
            panel.start_inverse(2.0)
        else:
            panel.start_free_fall(2.0)
    flush_events()
    qtbot.waitUntil(lambda: "finished" in panel.status_text(), timeout=10000)
    flush_events()


def _shown_names(window) -> list[tuple[str, str]]:
    """(text shown, tooltip) of each bound target row's joint label."""
    return [(row.label.text(), row.label.toolTip())
            for row in window.run_panel.targets.bound_rows()]


@pytest.mark.parametrize("kind", ["inverse", "fall"])
@pytest.mark.parametrize("model", ["puma560_saha", "ur5e"])
@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)])
def test_joint_names_are_whole_after_a_run(qtbot, make_window, model, size, kind):
    window = make_window(ROBOTS / f"{model}.toml", size=size)
    flush_events()
    _run_to_end(qtbot, window, kind)
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, f"run_{kind}_{model}_{size[0]}x{size[1]}.png"))
    names = _shown_names(window)
    assert names
    for text, _tip in names:
        assert "\u2026" not in text, (text, window.run_panel.width())
    for row in window.run_panel.targets.bound_rows():  # and not cut without an ellipsis
        assert row.label.width() >= row.label.sizeHint().width(), row.label.text()


def test_names_are_elided_with_a_tooltip_in_a_narrow_dock(qtbot, make_window):
    window = make_window(ROBOTS / "ur5e.toml", size=(1600, 1000))
    flush_events()
    dock = window.run_panel
    while dock.parentWidget() is not None and not hasattr(dock, "setFloating"):
        dock = dock.parentWidget()
    window.resizeDocks([dock], [200], Qt.Orientation.Horizontal)
    QApplication.processEvents()
    qtbot.waitUntil(lambda: any("\u2026" in t for t, _ in _shown_names(window)),
                    timeout=5000)
    for text, tip in _shown_names(window):
        if "\u2026" in text:
            assert tip and "\u2026" not in tip
