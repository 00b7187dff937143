"""Paths and small helpers shared by the GUI tests (import as `gui_helpers`)."""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QPoint

from armdyn.core import Link, Robot

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


def plots_final(qtbot, window) -> None:
    """Wait until the window's plots have fitted a finished run (one plot per turn of
    the event loop after its end: `PlotsPanel.fitting`), then run what they posted."""
    qtbot.waitUntil(lambda: not window.plots.fitting(), timeout=5000)
    flush_events()


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


def chain(n: int) -> Robot:
    """A generated serial arm of n revolute links, 2 m and 10 kg in all."""
    length, mass = 2.0 / n, 10.0 / n
    inertia = mass * length ** 2 / 12
    return Robot(f"chain of {n}", tuple(
        Link(a=length, alpha=(np.pi / 2, -np.pi / 2, 0.0)[i % 3], theta=0.3 * math.sin(i),
             mass=mass, com=(-length / 2, 0.0, 0.0),
             inertia=(inertia / 10, inertia, inertia, 0.0, 0.0, 0.0), name=f"j{i + 1}")
        for i in range(n)), gravity=(0.0, 0.0, -9.81))


def armdyn(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run `python -m armdyn.gui.app ARGS` under its own Xvfb (xvfb-run -a)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM")}
    env["QT_QPA_PLATFORM"] = "xcb"
    command = [sys.executable, "-m", "armdyn.gui.app", *args]
    if shutil.which("xvfb-run") is None:
        pytest.skip("xvfb-run is not installed")
    command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", *command]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def wait_for_settled_view(qtbot, view, timeout: int = 10000) -> None:
    """Wait until the window holding `view` (an `ArmView`) has laid out its docks and
    the view's native window has its size: the same size after two rounds of the
    window's events, and VTK's render window that size too (pyvistaqt resizes it in the
    view's resize event). Waits for the events, not for a time: on a busy machine a
    fixed wait read a picture of the view at a size it had before the layout ended."""
    plotter = view.plotter
    sizes: list[tuple[int, int]] = []

    def settled() -> bool:
        flush_events()
        ratio = plotter.devicePixelRatioF()
        size = (plotter.width(), plotter.height())
        sizes.append(size)
        physical = (round(ratio * size[0]), round(ratio * size[1]))
        return (len(sizes) >= 2 and sizes[-1] == sizes[-2] and plotter.isVisible()
                and tuple(plotter.ren_win.GetSize()) == physical)

    qtbot.waitUntil(settled, timeout=timeout)


def widget_pixel(window, point) -> QPoint:
    """Project a base-frame point to the 3D view's widget pixels (VTK display -> Qt)."""
    view = window.view3d
    renderer = view.plotter.renderer
    renderer.SetWorldPoint(*point, 1.0)
    renderer.WorldToDisplay()
    dx, dy, _ = renderer.GetDisplayPoint()
    ratio = view.plotter.devicePixelRatioF()
    return QPoint(round(dx / ratio), round(view.plotter.height() - dy / ratio))


def open_robot_editor(qtbot, path: Path, size: tuple[int, int] = (700, 400)):
    """A shown `RobotEditor` over a new document of the model file at `path`."""
    from armdyn.core.io.model_files import load_model
    from armdyn.gui.editors.robot_editor import RobotEditor
    from armdyn.gui.model.document import RobotDocument

    doc = RobotDocument(load_model(path), path)
    widget = RobotEditor(doc)
    doc.setParent(widget)
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    return widget
