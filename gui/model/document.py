"""The open robot: its draft tables, undo stack, file path and saved state (thin Qt).

`RobotDocument` wraps a Qt-free `RobotDraft` (gui/model/draft.py). Every edit goes
through an undo command on `undo_stack`, and the document tells its views
what changed with signals, the way a Qt model would:

- ``rows_changed(first, last)``: cell values of those rows changed
- ``rows_about_to_be_inserted/removed(first, last)``, ``rows_inserted/removed()``,
  ``rows_about_to_be_moved(src, dst)``, ``rows_moved()``: structure edits
- ``about_to_reset()`` / ``reset()``: a new robot was loaded, or one replaced the
  tables as an undoable step (`replace_robot`)
- ``sheet_changed(str)``: cells of a mechanism's "chains", "loops", "assembly",
  "forces" or "road" table may have changed (values, errors, the link names they
  choose from)
- ``sheet_about_to_reset(str)`` / ``sheet_reset(str)``: rows of that table were added
  or removed (a chain, loop, force element or road point added, removed, or put back
  by undo)
- ``robot_changed(Robot)``: the last valid robot changed (only valid robots)
- ``errors_changed()``: the set of refused cells changed
- ``path_changed(object)``, ``modified_changed(bool)``: file state

Saving and loading files are done by the caller with ``core.io.robot_file``; the
document records the path and the clean state (`mark_saved`).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from armdyn.core import JointType, Mechanism, Robot

from .draft import RobotDraft, Row, Value
from .mechanism_draft import MechanismDraft, Record, draft_for

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
    sheet_changed = Signal(str)
    sheet_about_to_reset = Signal(str)
    sheet_reset = Signal(str)
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
        return self.draft.edits_chains

    @property
    def mechanism_draft(self) -> MechanismDraft:
        """The draft of a mechanism (AssertionError for a serial robot's)."""
        assert self.draft.edits_chains
        return self.draft

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
    def replace_robot(self, robot: Robot | Mechanism, text: str) -> None:
        """Put another model of the same kind into the tables as one undo step named
        `text` (an identified model: other masses, inertias, friction); the file path
        stays, the document becomes modified."""
        self.undo_stack.push(_ReplaceDraft(self, draft_for(robot), text))

    def _swap_draft(self, draft: RobotDraft) -> RobotDraft:
        """Show `draft` in every table (a reset); returns the draft it replaced."""
        old = self.draft
        self.about_to_reset.emit()
        self.draft = draft
        self.reset.emit()
        if self.draft.edits_chains:
            for sheet in ("chains", "loops", "assembly", "forces", "road"):
                self.sheet_changed.emit(sheet)
        self.errors_changed.emit()
        self.robot_changed.emit(self.draft.robot)
        return old

    def set_text(self, row: int, key: str, value: object) -> bool:
        """Type `value` (text, number, JointType, ...) into one cell of any table (a
        link's, a chain's, a loop's or the assembly settings'). False if nothing changed."""
        return self.set_many([(row, key, value)], text=None)

    def set_many(self, cells: list[tuple[int, str, object]], text: str | None = "Paste") -> bool:
        """Type several cells as one undo step (a paste). False if nothing changed.

        Joint types are applied first, so limits pasted next to a new joint
        type are read in that type's unit.
        """
        cells = [c for c in cells if self.draft.has_cell(c[0], c[1])]
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
            text = f"Edit {self.draft.column(key).title} of {self._row_label(row, key)}"
        else:
            text = f"{text} ({len({(r, k) for r, k, _ in changes})} cells)"
        self.undo_stack.push(_SetCells(self, changes, text))
        return True

    def _row_label(self, row: int, key: str) -> str:
        """How an undo text names the row of a cell: the link, chain or loop name."""
        draft = self.draft
        if not draft.edits_chains or draft.sheet_of(key) == "links":
            return draft.link_name(row)
        sheet = draft.sheet_of(key)
        if sheet == "assembly":
            return "the assembly settings"
        if sheet == "road":
            return f"road point {row + 1}"
        if sheet == "forces":
            return f"force element {draft.value(row, 'force')}"
        name = draft.value(row, "chain" if sheet == "chains" else "loop")
        return f"{sheet[:-1]} {name}"

    def insert_link(self, row: int | None = None, chain: int | None = None) -> int:
        """Insert a new link before `row` (None: append at the end, or at the end of
        chain number `chain` of a mechanism). Returns the new link's row."""
        draft = self.draft
        if row is None and chain is not None and draft.edits_chains:
            index = draft.chain_rows(chain)[-1] + 1
            new = draft.new_row(index, chain=chain)
        else:
            index = draft.n if row is None else max(0, min(row, draft.n))
            new = draft.new_row(index)
        what = "Add" if row is None else "Insert"
        name = new.cells["name"] or f"link {index + 1}"
        self.undo_stack.push(_InsertRows(self, index, [new], f"{what} {name}"))
        return index

    def remove_links(self, first: int, count: int = 1) -> bool:
        """Delete `count` links from `first`; refused (False) if no link would remain (in
        a mechanism: in their chain; remove the chain instead)."""
        count = min(count, self.draft.n - first)
        if not self.draft.can_remove(first, count):
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

    def add_chain(self) -> int:
        """Append a new chain (on the base, one link) to a mechanism; returns its index."""
        draft = self.mechanism_draft
        record, row = draft.new_chain()
        self.undo_stack.push(_InsertChain(self, len(draft.chains), record, [row],
                                          f"Add chain {record.cells['chain']}"))
        return len(draft.chains) - 1

    def remove_chain(self, c: int) -> bool:
        """Remove chain number `c` with its links; refused (False) for the last chain."""
        draft = self.mechanism_draft
        if not 0 <= c < len(draft.chains) or len(draft.chains) < 2:
            return False
        self.undo_stack.push(_RemoveChain(self, c, f"Remove chain {draft.chain_name(c)}"))
        return True

    def add_loop(self, chain: int | None = None) -> int:
        """Append a new loop joint (see `MechanismDraft.new_loop`); returns its index."""
        record = self.mechanism_draft.new_loop(chain)
        return self._add_record("loops", record, f"Add loop {record.cells['loop']}")

    def remove_loop(self, index: int) -> bool:
        """Remove loop number `index`. False if there is none."""
        return self._remove_record("loops", index, "loop")

    def add_force(self, kind: str) -> int:
        """Append a new force element of `kind` ("spring-damper" or "tyre"; see
        `MechanismDraft.new_force`); returns its row."""
        record = self.mechanism_draft.new_force(kind)
        return self._add_record("forces", record, f"Add {kind} {record.cells['force']}")

    def remove_force(self, index: int) -> bool:
        """Remove force element number `index`. False if there is none."""
        return self._remove_record("forces", index, "force")

    def add_road_point(self) -> int:
        """Append a road point beyond the last (see `MechanismDraft.new_road_point`);
        returns its row."""
        record = self.mechanism_draft.new_road_point()
        return self._add_record("road", record, "Add road point")

    def remove_road_point(self, index: int) -> bool:
        """Remove road point number `index`. False if there is none."""
        return self._remove_record("road", index, None)

    def _add_record(self, sheet: str, record: Record, text: str) -> int:
        index = len(self.mechanism_draft.records(sheet))
        self.undo_stack.push(_InsertRecord(self, sheet, index, record, text))
        return index

    def _remove_record(self, sheet: str, index: int, name_key: str | None) -> bool:
        records = self.mechanism_draft.records(sheet)
        if not 0 <= index < len(records):
            return False
        what = (f"{sheet.rstrip('s')} {records[index].cells[name_key]}" if name_key
                else f"road point {index + 1}")
        self.undo_stack.push(_RemoveRecord(self, sheet, index, f"Remove {what}"))
        return True

    # ----- called by the undo commands --------------------------------------------
    def _apply_cells(self, changes: list[tuple[int, str, Value]]) -> None:
        before = dict(self.draft.errors)
        changed = self.draft.set_cells(changes)
        draft = self.draft
        rows = [r for r, k, _ in changes if not draft.edits_chains
                or draft.sheet_of(k) == "links"]
        self._after(changed, before, min(rows, default=0), max(rows, default=-1))

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

    def _insert_chain(self, c: int, record: Record, rows: list[Row]) -> None:
        draft = self.mechanism_draft
        before = dict(draft.errors)
        start = draft.chain_start(c) if c < len(draft.chains) else draft.n
        self.sheet_about_to_reset.emit("chains")
        self.rows_about_to_be_inserted.emit(start, start + len(rows) - 1)
        changed = draft.insert_chain(c, record, rows)
        self.rows_inserted.emit()
        self.sheet_reset.emit("chains")
        self._after(changed, before, start, draft.n - 1)

    def _remove_chain(self, c: int) -> tuple[Record, list[Row]]:
        draft = self.mechanism_draft
        before = dict(draft.errors)
        rows = draft.chain_rows(c)
        self.sheet_about_to_reset.emit("chains")
        self.rows_about_to_be_removed.emit(rows[0], rows[-1])
        record, removed, changed = draft.remove_chain(c)
        self.rows_removed.emit()
        self.sheet_reset.emit("chains")
        self._after(changed, before, min(rows[0], draft.n - 1), draft.n - 1)
        return record, removed

    def _insert_record(self, sheet: str, index: int, record: Record) -> None:
        draft = self.mechanism_draft
        before = dict(draft.errors)
        self.sheet_about_to_reset.emit(sheet)
        changed = draft.insert_record(sheet, index, record)
        self.sheet_reset.emit(sheet)
        self._after(changed, before, 0, -1)

    def _remove_record_now(self, sheet: str, index: int) -> Record:
        draft = self.mechanism_draft
        before = dict(draft.errors)
        self.sheet_about_to_reset.emit(sheet)
        record, changed = draft.remove_record(sheet, index)
        self.sheet_reset.emit(sheet)
        self._after(changed, before, 0, -1)
        return record

    def _after(self, robot_changed: bool, errors_before: dict, first: int, last: int) -> None:
        """Tell the views: cells (link names and numbers move too), errors, robot."""
        if self.draft.n and last >= first:
            self.rows_changed.emit(max(first, 0), max(last, first, 0))
        if self.draft.edits_chains:
            # Small tables, and they show link names and counts: refresh them all.
            for sheet in ("chains", "loops", "assembly", "forces", "road"):
                self.sheet_changed.emit(sheet)
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


class _ReplaceDraft(QUndoCommand):
    """Show another draft; undo shows the one it replaced (later edits act on whichever
    is shown, and the stack undoes them first)."""

    def __init__(self, doc: RobotDocument, draft: RobotDraft, text: str) -> None:
        super().__init__(text)
        self._doc, self._other = doc, draft

    def redo(self) -> None:
        self._other = self._doc._swap_draft(self._other)

    def undo(self) -> None:
        self._other = self._doc._swap_draft(self._other)


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


class _InsertChain(QUndoCommand):
    def __init__(self, doc: RobotDocument, c: int, record: Record, rows: list[Row],
                 text: str) -> None:
        super().__init__(text)
        self._doc, self._c, self._record, self._rows = doc, c, record, rows

    def redo(self) -> None:
        self._doc._insert_chain(self._c, self._record, self._rows)

    def undo(self) -> None:
        self._doc._remove_chain(self._c)


class _RemoveChain(QUndoCommand):
    def __init__(self, doc: RobotDocument, c: int, text: str) -> None:
        super().__init__(text)
        self._doc, self._c = doc, c
        self._record: Record | None = None
        self._rows: list[Row] = []

    def redo(self) -> None:
        record, rows = self._doc._remove_chain(self._c)
        self._record, self._rows = record.copy(), [r.copy() for r in rows]

    def undo(self) -> None:
        assert self._record is not None
        self._doc._insert_chain(self._c, self._record, self._rows)


class _InsertRecord(QUndoCommand):
    """Put a row into a mechanism's loops, forces or road table; undo takes it out."""

    def __init__(self, doc: RobotDocument, sheet: str, index: int, record: Record,
                 text: str) -> None:
        super().__init__(text)
        self._doc, self._sheet, self._index, self._record = doc, sheet, index, record

    def redo(self) -> None:
        self._doc._insert_record(self._sheet, self._index, self._record)

    def undo(self) -> None:
        self._doc._remove_record_now(self._sheet, self._index)


class _RemoveRecord(QUndoCommand):
    """Take a row out of a mechanism's loops, forces or road table; undo puts it back."""

    def __init__(self, doc: RobotDocument, sheet: str, index: int, text: str) -> None:
        super().__init__(text)
        self._doc, self._sheet, self._index = doc, sheet, index
        self._record: Record | None = None

    def redo(self) -> None:
        self._record = self._doc._remove_record_now(self._sheet, self._index).copy()

    def undo(self) -> None:
        assert self._record is not None
        self._doc._insert_record(self._sheet, self._index, self._record)
