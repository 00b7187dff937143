"""File > New, Open, Save and Save As for one window: the document's life on disk.

Edits are never lost silently: anything that would drop unsaved edits asks
Save / Discard / Cancel first (`maybe_save`). Files are read and written by
`core.io.model_files` (robot and mechanism files, and URDF by the ``.urdf`` suffix;
writing is atomic); core's messages, which name the file, the joint or link and
the field, are shown as they are. What a file could not hold or give (the
model's ``warnings`` on opening, a save's warnings) is shown in a warning box
that does not stop the work.

The questions are asked by small methods (`ask_open_path`, `ask_save_path`,
`ask_directory`, `ask_unsaved`) so that tests can answer them.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (QAbstractItemDelegate, QAbstractItemView, QFileDialog,
                               QMainWindow, QMenu, QMessageBox)

from armdyn.core import RobotFileError

from armdyn.core.io.bundled import ROBOTS_DIR, is_bundled
from .model.document import RobotDocument
from .model.draft import new_robot
from .model.support import unsupported_reason
from .error_report import show_error, show_warnings
from armdyn.core.io.model_files import is_urdf, load_model, save_model
from .model.recent_files import RecentFiles

__all__ = ["RobotFiles", "ROBOT_FILTER", "SAVE_FILTER", "TOML_FILTER", "URDF_FILTER", "filter_suffix"]

ROBOT_FILTER = ("Robot, mechanism and URDF files (*.toml *.urdf);;"
                "ArmDyn robot and mechanism files (*.toml);;URDF files (*.urdf);;All files (*)")
#: Save As: the first filter is ArmDyn's own format; a name typed without a suffix gets
#: the suffix of the filter chosen.
TOML_FILTER = "ArmDyn robot or mechanism file (*.toml)"
URDF_FILTER = "URDF file (*.urdf)"
SAVE_FILTER = f"{TOML_FILTER};;{URDF_FILTER}"
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
        """Open a robot, mechanism or URDF file (asks for one if `path` is None); asks about
        unsaved edits first."""
        if path is None:
            path = self.ask_open_path()
            if path is None:
                return False
        if not self.maybe_save():
            return False
        return self.load(path)

    def load(self, path: str | Path) -> bool:
        """Load a robot, mechanism or URDF file now, without questions; False (and a
        message) if it cannot be read.

        A file that cannot be read leaves the current robot as it was. What the file
        gave with a warning (a URDF's damping, say) is shown in a warning box.
        """
        path = Path(path)
        try:
            robot = load_model(path)
        except RobotFileError as e:
            self.error("Cannot open robot file", str(e))
            if not path.exists():
                self.recent.remove(path)
            return False
        reason = unsupported_reason(robot)
        if reason is not None:
            self.error("Cannot show this model in the window", f"{path}: {reason}")
            return False
        self._doc.load(robot, path)
        self.recent.add(path)
        self._status(f"Opened {path}")
        self.loaded.emit(path)
        self.report_warnings(f"Opened {path.name} with warnings", robot.warnings)
        return True

    def save(self) -> bool:
        """Save to the current file; a new or a bundled robot asks for a file name."""
        path = self._doc.path
        if path is None or is_bundled(path):
            return self.save_as()
        return self.save_to(path)

    def save_as(self) -> bool:
        """Ask for a file name and save there: a ``.urdf`` name writes URDF."""
        suggested = self.suggested_name()
        filters = (f"{URDF_FILTER};;{TOML_FILTER}" if is_urdf(suggested) else SAVE_FILTER)
        path = self.ask_save_path("Save Robot As", filters, Path(suggested).suffix, suggested)
        return self.save_to(path) if path is not None else False

    def save_to(self, path: str | Path) -> bool:
        """Write the robot to `path` atomically, as URDF if the name ends in ``.urdf``.
        Refused while a table cell is invalid (and, for URDF, for a mechanism with loops);
        the save's warnings (gravity, which URDF cannot hold) are shown."""
        self.commit_open_editor()
        doc = self._doc
        if not doc.is_valid:
            self.error("Cannot save", f"{doc.first_error}\n\nFix the marked cells (or undo) "
                       "before saving: the file would not match the tables.",
                       icon=QMessageBox.Icon.Warning)
            return False
        path = Path(path)
        try:
            warnings = save_model(doc.robot, path)
        except RobotFileError as e:
            self.error("Cannot save robot file", str(e))
            return False
        doc.mark_saved(path)
        self.recent.add(path)
        self._status(f"Saved {path}")
        self.report_warnings(f"Saved {path.name} with warnings", warnings)
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
        """A file name to offer: the current one (bundled robots: in the home folder; a
        URDF keeps its suffix), else one made from the robot's name."""
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
        """A file name from the save dialog; a name typed without a suffix gets that of
        the filter chosen (e.g. ``*.urdf``), else `suffix`."""
        name, chosen = QFileDialog.getSaveFileName(self._window, title, suggested, filters)
        if not name:
            return None
        path = Path(name)
        return path if path.suffix else path.with_suffix(filter_suffix(chosen) or suffix)

    def ask_directory(self, title: str) -> Path | None:
        name = QFileDialog.getExistingDirectory(self._window, title, str(Path.home()))
        return Path(name) if name else None

    def error(self, title: str, message: str,
              icon: QMessageBox.Icon = QMessageBox.Icon.Critical) -> None:
        """Show a message (core's, as it is) in the status bar and in a dialog."""
        self._window.statusBar().showMessage(message.splitlines()[0], 10000)
        show_error(self._window, title, message, icon=icon)

    def report_warnings(self, title: str, warnings: Sequence[str]) -> QMessageBox | None:
        """Show `warnings` (if any) in the status bar and in a warning box that does not
        block (returned, None without warnings)."""
        if not warnings:
            return None
        self._window.statusBar().showMessage(f"Warning: {warnings[0]}", 10000)
        return show_warnings(self._window, title, warnings)

    def _status(self, text: str) -> None:
        self._window.statusBar().showMessage(text, 5000)


def filter_suffix(name_filter: str) -> str | None:
    """The suffix of a file dialog filter's first pattern: ``"URDF file (*.urdf)"`` ->
    ``".urdf"``; None for ``*`` or no pattern."""
    start, end = name_filter.find("("), name_filter.find(")")
    if start < 0 or end < start:
        return None
    patterns = name_filter[start + 1:end].split()
    suffix = Path(patterns[0]).suffix if patterns else ""
    return suffix or None
