"""`armdyn --panel ...` (gui/app.py `show_panel`): the scripted mode shows the Inspect,
Lab (one of its tabs) or Compare dock, or presentation mode, before the screenshot, as
scripts/screenshots.py needs for the documentation's pictures."""
from __future__ import annotations

import pytest
from gui_helpers import PUMA, ROBOTS, armdyn

from armdyn.gui.app import LAB_TABS, show_panel

pytestmark = pytest.mark.gui


def _in_front(window, dock) -> bool:
    """The dock is shown and no other bottom dock covers it."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def test_every_lab_tab_key_names_one_tab(qtbot, make_window):
    window = make_window(PUMA)
    for key in LAB_TABS:
        assert show_panel(window, "lab", key) is None
        tabs = window.lab.tabs
        assert tabs.tabText(tabs.currentIndex()).lower().startswith(key)
        assert _in_front(window, window.lab_dock)
    titles = [window.lab.tabs.tabText(k).lower() for k in range(window.lab.tabs.count())]
    assert all(any(t.startswith(key) for key in LAB_TABS) for t in titles), titles


def test_inspect_comes_in_front_of_the_results(qtbot, make_window):
    window = make_window(PUMA)
    assert not _in_front(window, window.inspect_dock)  # the Results are in front at first
    assert show_panel(window, "inspect") is None
    assert _in_front(window, window.inspect_dock)


def test_compare_takes_run_b_from_the_file(qtbot, make_window):
    window = make_window(PUMA)
    assert show_panel(window, "compare", compare_with=ROBOTS / "scara.toml") is None
    assert _in_front(window, window.compare.dock)
    assert window.compare.build_b().name.startswith("SCARA")


def test_presentation_keeps_a_scripted_window_s_size(qtbot, make_window):
    window = make_window(PUMA, size=(1100, 720))
    assert show_panel(window, "presentation", wait=True) is None
    assert window.presentation.is_active()
    assert (window.width(), window.height()) == (1100, 720)
    window.presentation.set_active(False)


def test_scripted_screenshot_of_a_lab_tab(tmp_path):
    """The whole path: the option parsed, the window scripted, the picture written."""
    out = tmp_path / "inertia.png"
    done = armdyn(str(PUMA), "--panel", "lab:inertia", "--size", "1280x800",
                  "--screenshot", str(out), timeout=600)  # a cold cache compiles first
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 10_000


@pytest.mark.parametrize("argv, words", [
    (["--panel", "lab:nope"], "--panel"),
    (["--panel", "plots"], "--panel"),
    (["--compare-with", "fourbar"], "--compare-with goes with --panel compare"),
])
def test_bad_panel_options_are_refused_in_one_line(argv, words):
    done = armdyn(*argv, "--screenshot", "never.png")
    assert done.returncode == 2 and words in done.stderr
    assert done.stderr.strip().count("\n") == 0
