"""The open robot: its draft tables, undo stack, file path and saved state (thin Qt).

`RobotDocument` wraps a Qt-free `RobotDraft` (gui/draft.py). Every edit goes
through an undo command on `undo_stack`, and the document tells its views
what changed with signals, the way a Qt model would:

- ``rows_changed(first, last)``: cell values of those rows changed
- ``rows_about_to_be_inserted/removed(first, last)``, ``rows_inserted/removed()``,
  ``rows_about_to_be_moved(src, dst)``, ``rows_moved()``: structure edits
- ``about_to_reset()`` / ``reset()``: a new robot was loaded
- ``robot_changed(Robot)``: the last valid robot changed (only valid robots)
- ``errors_changed()``: the set of refused cells changed
- ``path_changed(object)``, ``modified_changed(bool)``: file state

Saving and loading files are done by the caller with ``core.robot_file``; the
document records the path and the clean state (`mark_saved`).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from core import JointType, Mechanism, Robot

from .draft import COLUMNS, RobotDraft, Row, Value
from .mechanism_draft import draft_for

__all__ = ["RobotDocument"]


class RobotDocument(QObject):
    """The robot being edited. See the module docstring for the signals."""

    rows_changed = Signal(int, int)
    rows_about_to_be_inserted = Signal(int, int)
    rows_inserted = Signal()
    rows_about_to_be_removed = Signal(int, int)
    rows_removed = Signal()
    rows_about_to_be_moved = Signal(int, int)
    rows_moved = Signal()
    about_to_reset = Signal()
    reset = Signal()
    robot_changed = Signal(object)
    errors_changed = Signal()
    path_changed = Signal(object)
    modified_changed = Signal(bool)

    def __init__(self, robot: Robot, path: Path | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.draft: RobotDraft = draft_for(robot)
        self.path: Path | None = Path(path) if path is not None else None
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)

    def _on_clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(not clean)

    # ----- state ------------------------------------------------------------------
    @property
    def robot(self) -> Robot | Mechanism:
        """The last valid model: a serial `Robot`, or a `Mechanism` for a mechanism file."""
        return self.draft.robot

    @property
    def is_mechanism(self) -> bool:
        """True when the document holds a mechanism (chains and loops), not a serial arm."""
        return isinstance(self.draft.robot, Mechanism)

    @property
    def is_valid(self) -> bool:
        return self.draft.is_valid

    @property
    def errors(self) -> dict[tuple[int, str], str]:
        """{(row, key): reason} of the refused cells."""
        return self.draft.errors

    @property
    def first_error(self) -> str | None:
        """The reason of the first refused cell in table order, or None."""
        if not self.draft.errors:
            return None
        return self.draft.errors[min(self.draft.errors)]

    @property
    def model_error(self) -> str:
        """Why the valid cells still make no valid model (a loop that cannot close, a
        parent cycle), naming the loop or chain; "" when there is no such error."""
        return getattr(self.draft, "model_error", "")

    @property
    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    # ----- whole-document operations (not undoable) --------------------------------
    def load(self, robot: Robot, path: Path | None) -> None:
        """Show another robot; clears the undo history and marks the document saved."""
        self.about_to_reset.emit()
        self.draft = draft_for(robot)
        self.undo_stack.clear()
        self.reset.emit()
        self.errors_changed.emit()
        self.robot_changed.emit(robot)
        self.mark_saved(path)

    def mark_saved(self, path: Path | None) -> None:
        """Record that the tables now equal the file at `path`."""
        new = Path(path) if path is not None else None
        if new != self.path:
            self.path = new
            self.path_changed.emit(new)
        self.undo_stack.setClean()

    # ----- edits (undoable) -------------------------------------------------------
    def set_text(self, row: int, key: str, value: object) -> bool:
        """Type `value` (text, number or JointType) into one cell. False if nothing changed."""
        return self.set_many([(row, key, value)], text=None)

    def set_many(self, cells: list[tuple[int, str, object]], text: str | None = "Paste") -> bool:
        """Type several cells as one undo step (a paste). False if nothing changed.

        Joint types are applied first, so limits pasted next to a new joint
        type are read in that type's unit.
        """
        cells = [c for c in cells if 0 <= c[0] < self.draft.n and c[1] in COLUMNS]
        cells.sort(key=lambda c: c[1] != "joint")  # stable: joint cells first
        joints = {row: self.draft.parse(row, key, value) for row, key, value in cells
                  if key == "joint"}
        changes: list[tuple[int, str, Value]] = []
        for row, key, value in cells:
            joint = joints.get(row)
            parsed = self.draft.parse(row, key, value,
                                      joint=joint if isinstance(joint, JointType) else None)
            changes += self.draft.changes_for(row, key, parsed)
        final = {(row, key): value for row, key, value in changes}  # the last write wins
        changes = [(row, key, value) for (row, key), value in final.items()
                   if not _same_value(self.draft.value(row, key), value)]
        if not changes:
            return False
        if text is None or len(changes) == 1:
            row, key, _ = changes[0]
            text = f"Edit {COLUMNS[key].title} of {self.draft.link_name(row)}"
        else:
            text = f"{text} ({len({(r, k) for r, k, _ in changes})} cells)"
        self.undo_stack.push(_SetCells(self, changes, text))
        return True

    def insert_link(self, row: int | None = None) -> None:
        """Insert a new link before `row` (None: append at the end)."""
        index = self.draft.n if row is None else max(0, min(row, self.draft.n))
        what = "Add" if index == self.draft.n else "Insert"
        self.undo_stack.push(_InsertRows(self, index, [self.draft.new_row(index)],
                                         f"{what} link {index + 1}"))

    def remove_links(self, first: int, count: int = 1) -> bool:
        """Delete `count` links from `first`; refused (False) if no link would remain."""
        count = min(count, self.draft.n - first)
        if first < 0 or count <= 0 or count >= self.draft.n:
            return False
        label = (f"Delete {self.draft.link_name(first)}" if count == 1
                 else f"Delete links {first + 1}-{first + count}")
        self.undo_stack.push(_RemoveRows(self, first, count, label))
        return True

    def move_link(self, row: int, delta: int) -> bool:
        """Move a link up (delta -1) or down (+1). False if it cannot move."""
        dst = row + delta
        if not self.draft.can_move(row, dst):
            return False
        name = self.draft.link_name(row)
        self.undo_stack.push(_MoveRow(self, row, dst,
                                      f"Move {name} {'up' if delta < 0 else 'down'}"))
        return True

    # ----- called by the undo commands --------------------------------------------
    def _apply_cells(self, changes: list[tuple[int, str, Value]]) -> None:
        before = dict(self.draft.errors)
        changed = self.draft.set_cells(changes)
        rows = [r for r, _, _ in changes]
        self._after(changed, before, min(rows), max(rows))

    def _insert(self, index: int, rows: list[Row]) -> None:
        before = dict(self.draft.errors)
        self.rows_about_to_be_inserted.emit(index, index + len(rows) - 1)
        changed = self.draft.insert_rows(index, rows)
        self.rows_inserted.emit()
        self._after(changed, before, index, self.draft.n - 1)

    def _remove(self, index: int, count: int) -> list[Row]:
        before = dict(self.draft.errors)
        self.rows_about_to_be_removed.emit(index, index + count - 1)
        removed, changed = self.draft.remove_rows(index, count)
        self.rows_removed.emit()
        self._after(changed, before, min(index, self.draft.n - 1), self.draft.n - 1)
        return removed

    def _move(self, src: int, dst: int) -> None:
        before = dict(self.draft.errors)
        self.rows_about_to_be_moved.emit(src, dst)
        changed = self.draft.move_row(src, dst)
        self.rows_moved.emit()
        self._after(changed, before, min(src, dst), max(src, dst))

    def _after(self, robot_changed: bool, errors_before: dict, first: int, last: int) -> None:
        """Tell the views: cells (link names and numbers move too), errors, robot."""
        if self.draft.n:
            self.rows_changed.emit(max(first, 0), max(last, first, 0))
        if errors_before != self.draft.errors:
            # Errors name rows, so any row may have gained or lost its mark.
            if self.draft.n:
                self.rows_changed.emit(0, self.draft.n - 1)
            self.errors_changed.emit()
        if robot_changed:
            self.robot_changed.emit(self.draft.robot)


def _same_value(a: Value, b: Value) -> bool:
    return type(a) is type(b) and a == b


class _SetCells(QUndoCommand):
    """Set cell values; undo puts the old values back."""

    def __init__(self, doc: RobotDocument, changes: list[tuple[int, str, Value]],
                 text: str) -> None:
        super().__init__(text)
        self._doc = doc
        self._new = changes
        # Old values in reverse order, so a cell changed twice ends at its first value.
        self._old = [(r, k, doc.draft.value(r, k)) for r, k, _ in reversed(changes)]

    def redo(self) -> None:
        self._doc._apply_cells(self._new)

    def undo(self) -> None:
        self._doc._apply_cells(self._old)


class _InsertRows(QUndoCommand):
    def __init__(self, doc: RobotDocument, index: int, rows: list[Row], text: str) -> None:
        super().__init__(text)
        self._doc, self._index, self._rows = doc, index, rows

    def redo(self) -> None:
        self._doc._insert(self._index, self._rows)

    def undo(self) -> None:
        self._doc._remove(self._index, len(self._rows))


class _RemoveRows(QUndoCommand):
    def __init__(self, doc: RobotDocument, index: int, count: int, text: str) -> None:
        super().__init__(text)
        self._doc, self._index, self._count = doc, index, count
        self._rows: list[Row] = []

    def redo(self) -> None:
        self._rows = [r.copy() for r in self._doc._remove(self._index, self._count)]

    def undo(self) -> None:
        self._doc._insert(self._index, self._rows)


class _MoveRow(QUndoCommand):
    def __init__(self, doc: RobotDocument, src: int, dst: int, text: str) -> None:
        super().__init__(text)
        self._doc, self._src, self._dst = doc, src, dst

    def redo(self) -> None:
        self._doc._move(self._src, self._dst)

    def undo(self) -> None:
        self._doc._move(self._dst, self._src)
