"""Issue #21: a run's messages do not take the Run panel's room, and the joints' names
show whole in it.

The stop report of a UR5e free fall (five hits, a dozen wrapped lines) squeezed the
settings into a scroll area two lines high at 1280x800: now the status line keeps to
STATUS_LINES lines and the messages open in a window of their own from a button beside
the progress bar. The humanoid's names were clipped ("4 left up") at 1600x1000: the
window's default layout gives the Run dock the width they need.
"""
from __future__ import annotations

import pytest
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import (QLabel, QPlainTextEdit, QScrollArea, QToolButton, QVBoxLayout,
                               QWidget)

from armdyn.gui.panels import run_status
from armdyn.gui.panels.run_control import RunControl

from gui_helpers import ROBOTS, flush_events

pytestmark = pytest.mark.gui


def settings_height(window) -> int:
    area = window.run_panel.findChild(QScrollArea, "runParameters")
    return area.viewport().height()


def test_a_stop_report_leaves_the_settings_their_room(make_window, qtbot):
    window = make_window(ROBOTS / "ur5e.toml", size=(1280, 800))
    qtbot.wait(100)
    flush_events()
    before = settings_height(window)
    panel = window.run_panel
    with qtbot.waitSignal(panel.finished, timeout=60000):
        panel.start_free_fall(10.0)
    qtbot.wait(100)
    flush_events()
    report = panel.status_text().splitlines()[1:]
    assert len(report) >= 4, report  # the stops it hit
    assert settings_height(window) >= before - 2, (before, settings_height(window))
    assert settings_height(window) >= 150
    label = panel.findChild(QLabel, run_status.STATUS_LABEL)
    assert label.height() <= run_status.STATUS_LINES * label.fontMetrics().lineSpacing() + 2
    assert panel.controls_in_sight()
    button = panel.findChild(QToolButton, run_status.MESSAGES_BUTTON)
    assert button.isVisible() and button.text().startswith(f"{len(report)} messages")
    button.click()
    messages = window.findChild(QWidget, run_status.MESSAGES_WINDOW)
    assert messages.isVisible()
    shown = messages.findChild(QPlainTextEdit).toPlainText()
    assert all(line in shown for line in report)
    messages.close()


def test_a_line_too_long_for_its_lines_is_whole_behind_details(qtbot):
    holder = QWidget()
    qtbot.addWidget(holder)
    status = run_status.RunStatus(RunControl(holder), holder)
    column = QVBoxLayout(holder)
    column.addWidget(status.messages_button)
    column.addWidget(status.label)
    holder.resize(300, 400)
    holder.show()
    qtbot.waitExposed(holder)
    status.set_line("Short.")
    flush_events()
    assert not status.messages_button.isVisible()
    long = "The integrator's step fell below 1e-12 s near joint 'wrist'. " * 8 + "END"
    status.set_line(long)
    flush_events()
    assert status.label.height() <= status.label.maximumHeight()
    assert status.messages_button.isVisible()
    assert status.messages_button.text().startswith("Details")
    window = status.show_messages()
    assert window.findChild(QPlainTextEdit).toPlainText() == long
    window.close()
    holder.resize(3000, 400)  # the whole line fits: no button
    flush_events()
    assert not status.messages_button.isVisible()


def test_the_joints_names_show_whole_in_the_run_panel(make_window, qtbot):
    window = make_window(ROBOTS / "humanoid.toml", size=(1600, 1000))
    qtbot.wait(100)
    flush_events()
    panel = window.run_panel
    with qtbot.waitSignal(panel.finished, timeout=60000):
        panel.start_inverse(0.2)
    flush_events()
    names = window.session.model.link_names
    rows = [row for row in panel.targets.bound_rows() if row.index >= 0]
    assert len(rows) >= 8
    for row in rows:
        text = QTextDocumentFragment.fromHtml(row.label.text()).toPlainText()
        assert text.endswith(f"{row.index + 1} {names[row.index]}"), text
        whole = row.fontMetrics().horizontalAdvance(f"\u25a0 {row.index + 1} "
                                                    f"{names[row.index]}")
        assert whole <= row.label.width(), (text, whole, row.label.width())


def test_round_off_at_a_limit_the_humanoid_starts_on_is_not_reported(make_window, qtbot):
    """Issue #20: the window reported 'hits' of 1e-6 N m at the forearms' limits, which
    the humanoid's home pose sits on; the shanks, pressed onto their stops, are hit."""
    window = make_window(ROBOTS / "humanoid.toml", size=(1280, 800))
    panel = window.run_panel
    with qtbot.waitSignal(panel.finished, timeout=120000):
        panel.start_free_fall(1.0)
    report = panel.status_text().splitlines()[1:]
    assert any("shank" in line for line in report), report
    assert not any("forearm" in line for line in report), report
