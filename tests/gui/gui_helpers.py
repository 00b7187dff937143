"""Paths and small helpers shared by the GUI tests (import as `gui_helpers`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent

ROOT = Path(__file__).resolve().parents[2]
ROBOTS = ROOT / "robots"
#: the serial-arm files of robots/ (the window opens these; robots/ also holds mechanisms)
ROBOT_FILES = sorted(p for p in ROBOTS.glob("*.toml")
                     if 'format = "armdyn-robot/1"' in p.read_text(encoding="utf-8"))
PUMA = ROBOTS / "puma560_saha.toml"
SCARA = ROBOTS / "scara.toml"
PLANAR = ROBOTS / "two_link_planar.toml"


def flush_events() -> None:
    """Run posted events, including deleteLater()."""
    app = QCoreApplication.instance()
    for _ in range(3):
        app.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def type_into(qtbot, view, index, text: str) -> None:
    """Select a table cell and type `text` + Return, as a user does."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QAbstractItemView, QLineEdit

    view.setFocus()
    view.setCurrentIndex(index)
    qtbot.keyClick(view, text[0])  # any key starts editing; the editor then has the focus
    line = view.focusWidget()
    assert isinstance(line, QLineEdit), f"no cell editor opened, focus on {line!r}"
    qtbot.keyClicks(line, text[1:])
    assert line.text() == text
    qtbot.keyClick(line, Qt.Key.Key_Return)  # the delegate commits in a queued call
    qtbot.waitUntil(lambda: view.state() != QAbstractItemView.State.EditingState,
                    timeout=2000)


def rgb_array(image) -> np.ndarray:
    """A QImage as (height, width, 3) uint8 RGB."""
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(
        image.height(), image.bytesPerLine())
    return rows[:, :3 * image.width()].reshape(image.height(), image.width(), 3).copy()


def screen_pixels(widget) -> np.ndarray:
    """What the X server shows where `widget` is, the 3D view's native window included
    (`QWidget.grab` leaves it out): (height, width, 3) uint8 RGB."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QGuiApplication

    corner = widget.mapToGlobal(QPoint(0, 0))
    return rgb_array(QGuiApplication.primaryScreen().grabWindow(
        0, corner.x(), corner.y(), widget.width(), widget.height()).toImage())
