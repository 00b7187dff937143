"""Issue #20: opening a file reads it in a worker; the window goes on, Cancel is prompt.

A mechanism of 300 loops that cannot be closed takes core 16 s to refuse (its message
names loop 'C 0'); read on the GUI thread, the window froze that long. These tests slow
core's read down on purpose (`load_model` wrapped in a sleep) and check that the GUI's
timers keep firing during a read, that a read shows a progress box whose Cancel returns
at once with the model kept, and that core's refusal is reported as before.
"""
from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QProgressDialog, QPushButton

import armdyn.gui.robot_files as robot_files
from armdyn.core.io.model_files import load_model
from armdyn.gui.jobs.waiting import SHOW_AFTER_MS, WAIT_BOX

from gui_helpers import PLANAR, PUMA, SCARA, flush_events

pytestmark = pytest.mark.gui


def slow_reads(monkeypatch, seconds: float) -> None:
    """core's read of a model file takes `seconds` longer."""
    def slow(path, *args, **kwargs):
        time.sleep(seconds)
        return load_model(path, *args, **kwargs)
    monkeypatch.setattr(robot_files, "load_model", slow)


class Heartbeat:
    """A 10 ms GUI timer: the longest gap between its ticks, s."""

    def __init__(self) -> None:
        self.last, self.longest, self.ticks = time.perf_counter(), 0.0, 0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self.last)
        self.last, self.ticks = now, self.ticks + 1


def test_the_window_goes_on_while_a_file_is_read(make_window, monkeypatch):
    window = make_window(PUMA)
    flush_events()
    slow_reads(monkeypatch, 1.5)
    beat = Heartbeat()
    assert window.files.load(SCARA)
    beat.timer.stop()
    assert window.document.robot == load_model(SCARA)
    assert beat.ticks >= 30, beat.ticks  # none while the GUI thread read the file
    assert beat.longest < 0.5, beat.longest
    assert window.findChild(QProgressDialog, WAIT_BOX) is None or not window.findChild(
        QProgressDialog, WAIT_BOX).isVisible()


def test_cancel_returns_at_once_and_keeps_the_model(make_window, monkeypatch):
    window = make_window(PUMA)
    flush_events()
    robot = window.document.robot
    slow_reads(monkeypatch, 3.0)
    seen: list[str] = []

    def cancel() -> None:
        box = window.findChild(QProgressDialog, WAIT_BOX)
        seen.append(box.labelText() if box is not None and box.isVisible() else "")
        next(b for b in box.findChildren(QPushButton) if b.text() == "Cancel").click()

    QTimer.singleShot(SHOW_AFTER_MS + 400, cancel)
    start = time.perf_counter()
    assert not window.files.load(PLANAR)
    assert time.perf_counter() - start < 1.5  # the read alone takes 3 s
    assert seen and seen[0].startswith(f"Opening {PLANAR.name}"), seen
    assert window.document.robot is robot
    assert "cancelled" in window.statusBar().currentMessage()
    QApplication.processEvents()


def test_a_refused_file_is_reported_by_name_from_the_worker(make_window, tmp_path,
                                                            monkeypatch):
    window = make_window(PUMA)
    errors: list[str] = []
    monkeypatch.setattr(window.files, "error", lambda title, message, **_: errors.append(
        message))
    bad = tmp_path / "bad.toml"
    bad.write_text(PUMA.read_text().replace("mass = 15.761", "mass = -1"))
    robot = window.document.robot
    assert not window.files.load(bad)
    assert window.document.robot is robot
    assert errors and "link 2 ('shoulder'), field 'mass'" in errors[0]
    assert "Unexpected" not in errors[0]
