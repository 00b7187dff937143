"""File > New, Open, Save and Save As for one window: the document's life on disk.

Edits are never lost silently: anything that would drop unsaved edits asks
Save / Discard / Cancel first (`maybe_save`). Files are read and written by
``core.robot_file`` (writing is atomic); core's messages, which name the file,
the link and the field, are shown as they are.

The questions are asked by small methods (`ask_open_path`, `ask_save_path`,
`ask_directory`, `ask_unsaved`) so that tests can answer them.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (QAbstractItemDelegate, QAbstractItemView, QFileDialog,
                               QMainWindow, QMenu, QMessageBox)

from core import RobotFileError

from .bundled import ROBOTS_DIR, is_bundled
from .document import RobotDocument
from .draft import new_robot
from .error_report import show_error
from .model_files import load_model, save_model
from .recent_files import RecentFiles

__all__ = ["RobotFiles", "ROBOT_FILTER"]

ROBOT_FILTER = "Robot and mechanism files (*.toml);;All files (*)"
Button = QMessageBox.StandardButton


class RobotFiles(QObject):
    """Opens and saves `document` for `window`; ``loaded(path or None)`` after a load."""

    loaded = Signal(object)

    def __init__(self, window: QMainWindow, document: RobotDocument, recent: RecentFiles,
                 views: Sequence[QAbstractItemView]) -> None:
        super().__init__(window)
        self._window = window
        self._doc = document
        self.recent = recent
        self._views = tuple(views)

    # ----- commands ---------------------------------------------------------------
    def new(self) -> bool:
        """A new, unsaved two-link robot (asks about unsaved edits first)."""
        if not self.maybe_save():
            return False
        self._doc.load(new_robot(), None)
        self._status("New robot.")
        self.loaded.emit(None)
        return True

    def open(self, path: str | Path | None = None) -> bool:
        """Open a robot file (asks for one if `path` is None); asks about unsaved edits first."""
        if path is None:
            path = self.ask_open_path()
            if path is None:
                return False
        if not self.maybe_save():
            return False
        return self.load(path)

    def load(self, path: str | Path) -> bool:
        """Load a robot or mechanism file now, without questions; False (and a message) if it
        cannot be read.

        A file that cannot be read leaves the current robot as it was.
        """
        path = Path(path)
        try:
            robot = load_model(path)
        except RobotFileError as e:
            self.error("Cannot open robot file", str(e))
            if not path.exists():
                self.recent.remove(path)
            return False
        self._doc.load(robot, path)
        self.recent.add(path)
        self._status(f"Opened {path}")
        self.loaded.emit(path)
        return True

    def save(self) -> bool:
        """Save to the current file; a new or a bundled robot asks for a file name."""
        path = self._doc.path
        if path is None or is_bundled(path):
            return self.save_as()
        return self.save_to(path)

    def save_as(self) -> bool:
        path = self.ask_save_path("Save Robot As", ROBOT_FILTER, ".toml", self.suggested_name())
        return self.save_to(path) if path is not None else False

    def save_to(self, path: str | Path) -> bool:
        """Write the robot to `path` atomically. Refused while a table cell is invalid."""
        self.commit_open_editor()
        doc = self._doc
        if not doc.is_valid:
            self.error("Cannot save", f"{doc.first_error}\n\nFix the marked cells (or undo) "
                       "before saving: the file would not match the tables.",
                       icon=QMessageBox.Icon.Warning)
            return False
        path = Path(path)
        try:
            save_model(doc.robot, path)
        except RobotFileError as e:
            self.error("Cannot save robot file", str(e))
            return False
        doc.mark_saved(path)
        self.recent.add(path)
        self._status(f"Saved {path}")
        return True

    def maybe_save(self) -> bool:
        """Before edits would be lost: Save / Discard / Cancel. True if it is fine to go on."""
        self.commit_open_editor()
        if not self._doc.is_modified:
            return True
        answer = self.ask_unsaved()
        if answer == Button.Save:
            return self.save()
        return answer == Button.Discard

    def commit_open_editor(self) -> None:
        """Commit a table cell that is still being typed in (Ctrl+S without Return)."""
        for view in self._views:
            if view.state() != QAbstractItemView.State.EditingState:
                continue
            editor = view.indexWidget(view.currentIndex())
            if editor is not None:
                view.commitData(editor)
                view.closeEditor(editor, QAbstractItemDelegate.EndEditHint.NoHint)

    def suggested_name(self) -> str:
        """A file name to offer: the current one (bundled robots: in the home folder),
        else one made from the robot's name."""
        path = self._doc.path
        if path is not None:
            folder = Path.home() if is_bundled(path) else path.parent
            return str(folder / path.name)
        stem = "".join(c if c.isalnum() else "_" for c in self._doc.robot.name.lower())
        return str(Path.home() / f"{stem.strip('_') or 'robot'}.toml")

    def fill_recent_menu(self, menu: QMenu) -> None:
        """Fill File > Open Recent (called just before it shows)."""
        menu.clear()
        paths = self.recent.paths()
        for path in paths:
            menu.addAction(path.name, lambda p=path: self.open(p)).setStatusTip(str(path))
        if paths:
            menu.addSeparator()
            menu.addAction("Clear List", self.recent.clear)
        else:
            menu.addAction("No recent files").setEnabled(False)

    # ----- questions and messages -------------------------------------------------
    def ask_unsaved(self) -> QMessageBox.StandardButton:
        return QMessageBox.warning(
            self._window, "Unsaved changes",
            f"The robot \u201c{self._doc.robot.name}\u201d has unsaved changes.\n"
            "Save them first?", Button.Save | Button.Discard | Button.Cancel, Button.Save)

    def ask_open_path(self) -> Path | None:
        start = str(self._doc.path.parent if self._doc.path else ROBOTS_DIR)
        name, _ = QFileDialog.getOpenFileName(self._window, "Open Robot", start, ROBOT_FILTER)
        return Path(name) if name else None

    def ask_save_path(self, title: str, filters: str, suffix: str,
                      suggested: str) -> Path | None:
        name, _ = QFileDialog.getSaveFileName(self._window, title, suggested, filters)
        if not name:
            return None
        path = Path(name)
        return path if path.suffix else path.with_suffix(suffix)

    def ask_directory(self, title: str) -> Path | None:
        name = QFileDialog.getExistingDirectory(self._window, title, str(Path.home()))
        return Path(name) if name else None

    def error(self, title: str, message: str,
              icon: QMessageBox.Icon = QMessageBox.Icon.Critical) -> None:
        """Show a message (core's, as it is) in the status bar and in a dialog."""
        self._window.statusBar().showMessage(message.splitlines()[0], 10000)
        show_error(self._window, title, message, icon=icon)

    def _status(self, text: str) -> None:
        self._window.statusBar().showMessage(text, 5000)
