"""Unexpected errors: logged to a file and shown in a dialog, never as a traceback
on the terminal and never a crash.

`install_excepthook` replaces ``sys.excepthook`` (PySide6 reports exceptions
raised in slots and Qt virtual overrides through it too).
"""
from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable, Sequence
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QCoreApplication, QStandardPaths, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from .look.text import plain

__all__ = ["setup_logging", "install_excepthook", "show_error", "show_warnings",
           "WARNINGS_BOX_NAME"]

log = logging.getLogger("armdyn")

#: objectName of the boxes `show_warnings` opens.
WARNINGS_BOX_NAME = "warningsBox"

Hook = Callable[[type[BaseException], BaseException, TracebackType | None], None]


def setup_logging() -> Path | None:
    """Log to armdyn.log in the application's data directory; return its path."""
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppLocalDataLocation)
    try:
        path = Path(folder) / "armdyn.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


def show_error(parent, title: str, message: str, details: str = "",
               icon: QMessageBox.Icon = QMessageBox.Icon.Critical) -> None:
    """A modal message box with `message` (plain text: it quotes names and paths from
    files); `details` (e.g. a traceback) behind a button."""
    box = plain(QMessageBox(icon, title, message, QMessageBox.StandardButton.Ok, parent))
    if details:
        box.setDetailedText(details)
    box.exec()
    box.deleteLater()


def show_warnings(parent, title: str, warnings: Sequence[str]) -> QMessageBox:
    """A warning box listing `warnings` that does not block (the work goes on while it
    is open); deleted when closed. Returns the box."""
    box = plain(QMessageBox(QMessageBox.Icon.Warning, title,
                            "\n\n".join(f"\u2022 {w}" for w in warnings),
                            QMessageBox.StandardButton.Ok, parent))
    box.setObjectName(WARNINGS_BOX_NAME)
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.show()
    return box


def install_excepthook(log_path: Path | None = None, *, interactive: bool = True) -> Hook:
    """Route uncaught exceptions to the log and to the user; return the previous hook.

    interactive=True shows a dialog and the program goes on; False (scripted
    runs such as --screenshot) prints one line to stderr and ends the event
    loop with exit code 1.
    """
    previous = sys.excepthook
    showing = False

    def hook(etype: type[BaseException], value: BaseException,
             tb: TracebackType | None) -> None:
        nonlocal showing
        if issubclass(etype, KeyboardInterrupt):
            QCoreApplication.exit(130)
            return
        details = "".join(traceback.format_exception(etype, value, tb))
        log.error("Unexpected error\n%s", details)
        summary = f"{etype.__name__}: {value}"
        where = f"\n\nDetails were written to {log_path}." if log_path else ""
        if not interactive or QApplication.instance() is None:
            print(f"armdyn: unexpected error: {summary}", file=sys.stderr)
            QCoreApplication.exit(1)
            return
        if showing:  # an error while showing an error: the log has it
            return
        showing = True
        try:
            show_error(QApplication.activeWindow(), "ArmDyn: unexpected error",
                       "Something went wrong, but your work is still open. Please save "
                       f"it and report this error.\n\n{summary}{where}", details)
        finally:
            showing = False

    sys.excepthook = hook
    return previous
