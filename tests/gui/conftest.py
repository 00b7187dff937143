"""Fixtures of the GUI tests (pytest-qt, real widgets under Xvfb via pytest-xvfb).

Every test in tests/gui is checked for leaks after it ran (napari style): it
fails if it leaves a QThread running, a window open, or any other new widget
alive (with an active QTimer or not) outside the windows that were already
open when it started (a module's shared window keeps its own new widgets).
A job that is over (cancelled, or done) may still have its thread finishing a step or
returning (the GUI never waits for it, `gui.jobs.job`): the check waits for those, at
most ENDING_JOB_S, as the application's exit does; a job still running is a leak.
Windows made with `make_window` are closed and deleted at teardown, so a test
only has to clean up what it makes by hand.

A module whose tests share one window (a window costs about a second to make) uses
`shared_window` and `window`; it names its file and size in WINDOW_FILE and WINDOW_SIZE
(defaults: the PUMA, 1100x720), and adds ``pytest.mark.usefixtures("no_modal_boxes")``
if a message box may open.

Mark GUI tests with ``pytestmark = pytest.mark.gui`` (select: ``-m gui``).
"""
from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QSettings, QThread, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

import armdyn.gui  # noqa: F401
from armdyn.gui.jobs.job import running_jobs
from gui_helpers import PUMA, flush_events

#: Windows Qt keeps for itself (tooltips) are not leaks.
_IGNORED = {"QTipLabel"}
#: How long the thread of a job that is over may take to end after its test, s.
ENDING_JOB_S = 5.0


def _key(w: QWidget) -> int:
    return shiboken6.getCppPointer(w)[0]


def _alive(w: QWidget) -> bool:
    return shiboken6.isValid(w)


def _owned_by(w: QWidget, windows: set[int]) -> bool:
    """True if top-level `w` is a popup of a widget inside one of `windows` (a combo
    box's list, a menu): it lives and dies with that window, which was open before."""
    parent = w.parentWidget()
    return parent is not None and _key(parent.window()) in windows


def _running_threads() -> list[QThread]:
    # type(o), not isinstance(o, ...): a dead weakref.proxy among the objects (pytest-xdist
    # keeps some) raises ReferenceError when asked for its class
    return [o for o in gc.get_objects()
            if issubclass(type(o), QThread) and shiboken6.isValid(o) and o.isRunning()
            and o is not QThread.currentThread()]


@pytest.fixture(autouse=True)
def no_leaks(qapp: QApplication) -> Iterator[None]:
    """Fail the test if it leaves threads, widgets or timers behind."""
    widgets_before = {_key(w) for w in QApplication.allWidgets()}
    top_before = {_key(w) for w in QApplication.topLevelWidgets()}
    threads_before = {id(t) for t in _running_threads()}
    yield
    flush_events()
    problems = []
    for job in running_jobs():
        if not job.is_running() and not job.wait(ENDING_JOB_S):
            problems.append(f"the thread of {job!r} did not end within {ENDING_JOB_S} s")
    flush_events()
    threads = [t for t in _running_threads() if id(t) not in threads_before]
    if threads:
        problems.append(f"{len(threads)} QThread(s) still running: {threads}")
    top = [w for w in QApplication.topLevelWidgets()
           if _alive(w) and _key(w) not in top_before and type(w).__name__ not in _IGNORED
           and not _owned_by(w, top_before)]
    if top:
        problems.append("top-level widgets left open: "
                        + ", ".join(f"{type(w).__name__}({w.objectName()!r})" for w in top))
    # New widgets inside a window that was already open (a module's shared window), or
    # inside a popup of it, belong to it; any other new widget still alive was left behind.
    new = [w for w in QApplication.allWidgets()
           if _alive(w) and _key(w) not in widgets_before and type(w).__name__ not in _IGNORED
           and _key(w.window()) not in top_before and not _owned_by(w.window(), top_before)]
    timers = [(type(w).__name__, t.objectName()) for w in new for t in w.findChildren(QTimer)
              if t.isActive()]
    if timers:
        problems.append(f"active QTimers on leftover widgets: {timers}")
    if new and not top:
        problems.append(f"{len(new)} widgets not deleted, e.g. "
                        + ", ".join(type(w).__name__ for w in new[:5]))
    for w in top:  # clean up, so that one leak does not fail the next tests too
        w.close()
        w.deleteLater()
    flush_events()
    if problems:
        pytest.fail("; ".join(problems), pytrace=False)


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """Settings in a temporary INI file (recent files, window layout)."""
    return QSettings(str(tmp_path / "armdyn.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def make_window(qtbot, settings) -> Iterator[Callable[..., "MainWindow"]]:  # noqa: F821
    """make_window(path=PUMA, size=(1100, 720)) -> a shown MainWindow with a robot or
    mechanism file; closed at teardown."""
    from armdyn.gui.main_window import MainWindow
    from armdyn.core.io.model_files import load_model

    windows: list[MainWindow] = []

    def make(path: Path | None = PUMA, size: tuple[int, int] = (1100, 720)) -> MainWindow:
        robot = load_model(path) if path is not None else None
        window = MainWindow(robot, path, settings=settings, restore_layout=False)
        window.resize(*size)
        window.show()
        qtbot.waitExposed(window)
        windows.append(window)
        return window

    yield make
    for window in windows:
        if shiboken6.isValid(window):
            window.document.undo_stack.setClean()  # nothing to ask
            window.close()
            window.deleteLater()
    flush_events()


def _window_file(request) -> Path:
    return getattr(request.module, "WINDOW_FILE", PUMA)


@pytest.fixture(scope="module")
def shared_window(request, qapp, tmp_path_factory):
    """One shown MainWindow for a module's tests, with the module's WINDOW_FILE (default
    the PUMA) at WINDOW_SIZE (default (1100, 720)), settings in a temporary INI file;
    closed after the module's last test (its own new widgets are not leaks)."""
    from armdyn.gui.main_window import MainWindow
    from armdyn.core.io.model_files import load_model

    path = _window_file(request)
    settings = QSettings(str(tmp_path_factory.mktemp("settings") / "armdyn.ini"),
                         QSettings.Format.IniFormat)
    window = MainWindow(load_model(path), path, settings=settings, restore_layout=False)
    window.resize(*getattr(request.module, "WINDOW_SIZE", (1100, 720)))
    window.show()
    QTest.qWaitForWindowExposed(window)
    yield window
    window.run_panel.shutdown()
    window.document.undo_stack.setClean()
    window.close()
    window.deleteLater()
    flush_events()


@pytest.fixture
def window(request, shared_window):
    """The shared window with the module's WINDOW_FILE freshly loaded (new tables,
    history, pose, view), no run going; afterwards the run is stopped and the history
    marked clean (nothing asks "save changes?" later)."""
    shared_window.run_panel.shutdown()
    shared_window.files.load(_window_file(request))
    yield shared_window
    shared_window.run_panel.shutdown()
    shared_window.document.undo_stack.setClean()


@pytest.fixture(scope="module")
def shared_view(qapp):
    """One 3D view (480x360) for a module. Creating 3D views over and over under
    Xvfb's software GL now and then crashed in VTK's context set-up (the program makes
    one)."""
    from armdyn.gui.scene.view3d import ArmView
    widget = ArmView()
    widget.resize(480, 360)
    widget.show()
    QTest.qWaitForWindowExposed(widget)
    yield widget
    widget.shutdown()
    widget.close()
    widget.deleteLater()
    flush_events()


@pytest.fixture
def no_modal_boxes(monkeypatch) -> None:
    """Message boxes return at once instead of waiting for a click."""
    monkeypatch.setattr(QMessageBox, "exec", lambda box: 0)
