"""The robot tables: Qt models over `RobotDocument` (the DH and inertia tables of the
links; a mechanism's chains and loops), a combo delegate for joint types and link
names, and a table view with tab-separated copy and paste.

The model holds no data of its own: it shows `document.draft` and sends every
edit to the document, which makes it an undo command. A refused value stays in
its cell with a red background and core's reason as the tooltip.
"""
from __future__ import annotations

from PySide6.QtCore import (QAbstractItemModel, QAbstractTableModel, QModelIndex,
                            QPersistentModelIndex, Qt)
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QKeySequence, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QComboBox, QHeaderView, QStyle,
                               QStyledItemDelegate, QStyleOptionViewItem, QTableView, QWidget)

from armdyn.core import JointType, LoopJointType

from ..look.colors import joint_color
from ..look.text import shown_name
from ..model.document import RobotDocument
from ..model.draft import Column
from ..model.mechanism_draft import BASE

__all__ = ["DraftTableModel", "RobotTableModel", "StructureTableModel", "ChoiceDelegate",
           "JointTypeDelegate", "RobotTableView", "ERROR_BACKGROUND"]

#: Background and text colour of a refused cell (text contrast above 7:1); a warning
#: icon marks it too, for readers who do not see the red.
ERROR_BACKGROUND = QColor("#F6C6C6")
ERROR_FOREGROUND = QColor("#7A1010")
PLACEHOLDER_FOREGROUND = QColor("#8A8F98")

_Index = QModelIndex | QPersistentModelIndex


def swatch(color: str, size: int = 12) -> QIcon:
    """A small square icon filled with `color` (joint colours in headers and panels)."""
    pix = QPixmap(size, size)
    pix.fill(QColor(color))
    return QIcon(pix)


class DraftTableModel(QAbstractTableModel):
    """The cells of one of the draft's tables (the shared part of every table model):
    values, refused cells (red, warning icon, core's reason as tooltip), column headers
    with units; every edit goes to the document as an undo command."""

    def __init__(self, document: RobotDocument, columns: tuple[Column, ...],
                 parent=None) -> None:
        super().__init__(parent)
        self._doc = document
        self._serial_columns = columns
        self._icons: dict[str, QIcon] = {}

    # ----- helpers ----------------------------------------------------------------
    @property
    def document(self) -> RobotDocument:
        return self._doc

    @property
    def columns(self) -> tuple[Column, ...]:
        return self._serial_columns

    def key(self, column: int) -> str:
        """Cell key of a column ("a", "mass", ...)."""
        return self.columns[column].key

    def column_of(self, key: str) -> int:
        """Column number of a cell key; ValueError if this table has no such column."""
        return [c.key for c in self.columns].index(key)

    def choices(self, index: _Index) -> list[str]:
        """The names a "choice" cell may take (links to start on or to join)."""
        return []

    def _placeholder(self, row: int, key: str) -> str | None:
        """Grey text shown in an empty cell (None: show it empty)."""
        return None

    def _error_icon(self) -> QIcon:
        if "error" not in self._icons:
            style = QApplication.style()
            self._icons["error"] = style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        return self._icons["error"]

    def _refresh(self, *_args) -> None:
        """Every cell and header may have changed (values, errors, names)."""
        if self.rowCount() and self.columnCount():
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(self.rowCount() - 1, self.columnCount() - 1))
            self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, self.rowCount() - 1)

    # ----- QAbstractTableModel ------------------------------------------------------
    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.columns)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        shown = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if not self._doc.draft.has_cell(index.row(), self.key(index.column())):
            return shown  # a field the row's joint does not have (a DH row's placement)
        return shown | Qt.ItemFlag.ItemIsEditable

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        draft = self._doc.draft
        row, key = index.row(), self.key(index.column())
        error = draft.errors.get((row, key))
        kind = draft.column(key).kind
        placeholder = self._placeholder(row, key)
        if role == Qt.ItemDataRole.DisplayRole:  # a name cut (`shown_name`), edited whole
            if kind == "flag" and placeholder is None and not error:
                return _flag_mark(draft.edit_text(row, key))
            return placeholder if placeholder is not None else shown_name(
                draft.display_text(row, key))
        if role == Qt.ItemDataRole.EditRole:
            return draft.edit_text(row, key)
        if role == Qt.ItemDataRole.ToolTipRole:
            if error:
                return error
            if kind in ("angle", "limit", "length", "number", "vector"):
                unit = draft.unit(row, key)
                return f"{draft.edit_text(row, key) or '(none)'} {unit}".strip()
            if kind == "flag":  # the column shows a tick or a dash only
                return f"{draft.column(key).title}: {draft.edit_text(row, key)}"
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            return ERROR_BACKGROUND if error else None
        if role == Qt.ItemDataRole.DecorationRole:
            return self._error_icon() if error else None
        if role == Qt.ItemDataRole.ForegroundRole:
            if error:
                return ERROR_FOREGROUND
            return PLACEHOLDER_FOREGROUND if placeholder is not None else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if kind == "flag":
                return int(Qt.AlignmentFlag.AlignCenter)
            if kind in ("name", "joint", "choice", "loopjoint", "names"):
                return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index: _Index, value, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        """Send the typed value to the document (refused values are kept and marked)."""
        if not index.isValid() or role != Qt.ItemDataRole.EditRole:
            return False
        self._doc.set_text(index.row(), self.key(index.column()), value)
        return True

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal:
            return self._column_header(section, role)
        if not 0 <= section < self.rowCount():
            return None
        return self._row_header(section, role)

    def _row_header(self, section: int, role: int):
        """Row `section`'s header for `role` (a row of the table); None: nothing."""
        return None

    def _column_header(self, section: int, role: int):
        if not 0 <= section < len(self.columns):
            return None
        col = self.columns[section]
        unit = self._doc.draft.column_unit(col)  # angles in the file's unit
        if role == Qt.ItemDataRole.DisplayRole:
            if col.kind == "flag":  # a narrow column: "act." over a mark (tooltip in full)
                return f"{FLAG_HEADERS.get(col.key, col.title)}\n"
            unit = unit.replace("deg", "\u00b0")
            return f"{col.title}\n({unit})" if unit else f"{col.title}\n"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{col.title} ({unit}): {col.tip}" if unit else col.tip
        return None


#: The short headers of the yes / no columns. The DH table of a mechanism ends with
#: `actuated`: its header and "✔ yes" made it the widest of its numbers, and it was cut
#: off at the right of the Robot dock for every mechanism.
FLAG_HEADERS = {"actuated": "act."}
#: Narrowest and widest yes / no column, px.
FLAG_WIDTH = (30, 48)


def _flag_mark(text: str) -> str:
    """A yes / no cell as shown: a tick for yes, a dash for no (typed as yes / no)."""
    return "\u2714" if text.strip().lower() in ("yes", "true", "1", "\u2714 yes") else "\u2013"


class RobotTableModel(DraftTableModel):
    """One row per link, the given `columns` of the document's draft.

    For a mechanism, rows are numbered within their chain (as core's messages count
    links); with `chain_starts` (the editor shows every chain at once) as
    "chain.link" (chains numbered as in the Chains tab).
    """

    def __init__(self, document: RobotDocument, columns: tuple[Column, ...],
                 parent=None, *, names_in_header: bool = False,
                 mechanism_columns: tuple[Column, ...] | None = None) -> None:
        super().__init__(document, columns, parent)
        self._mechanism_columns = mechanism_columns or columns
        self._names_in_header = names_in_header
        self.chain_starts = False
        d = document
        d.rows_changed.connect(self._on_rows_changed)
        d.rows_about_to_be_inserted.connect(self._begin_insert)
        d.rows_inserted.connect(self.endInsertRows)
        d.rows_about_to_be_removed.connect(self._begin_remove)
        d.rows_removed.connect(self.endRemoveRows)
        d.rows_about_to_be_moved.connect(self._begin_move)
        d.rows_moved.connect(self.endMoveRows)
        d.about_to_reset.connect(self.beginResetModel)
        d.reset.connect(self.endResetModel)

    @property
    def columns(self) -> tuple[Column, ...]:
        """The columns shown: a mechanism's (with `actuated`) or a serial arm's."""
        return self._mechanism_columns if self._doc.is_mechanism else self._serial_columns

    def set_chain_starts(self, on: bool) -> None:
        """Name each chain in the header of its first row (all chains shown at once)."""
        self.chain_starts = on
        if self.rowCount():
            self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, self.rowCount() - 1)

    def _placeholder(self, row: int, key: str) -> str | None:
        draft = self._doc.draft
        if draft.column(key).kind == "name" and not draft.value(row, key):
            return draft.link_name(row)
        return None

    def _begin_insert(self, first: int, last: int) -> None:
        self.beginInsertRows(QModelIndex(), first, last)

    def _begin_remove(self, first: int, last: int) -> None:
        self.beginRemoveRows(QModelIndex(), first, last)

    def _begin_move(self, src: int, dst: int) -> None:
        # Qt counts the destination before the move: moving down needs dst + 1.
        self.beginMoveRows(QModelIndex(), src, src, QModelIndex(), dst + 1 if dst > src else dst)

    def _on_rows_changed(self, first: int, last: int) -> None:
        last = min(last, self.rowCount() - 1)
        if first > last:
            return
        self.dataChanged.emit(self.index(first, 0), self.index(last, self.columnCount() - 1))
        self.headerDataChanged.emit(Qt.Orientation.Vertical, first, last)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._doc.draft.n

    def _row_header(self, section: int, role: int):
        draft = self._doc.draft
        mechanism = draft.edits_chains
        number = draft.link_number(section)
        if role == Qt.ItemDataRole.DisplayRole:
            if self._names_in_header:
                return f"{number}  {draft.link_name(section)}"
            if mechanism and self.chain_starts:  # "chain.link", as in the Chains tab
                return f"{draft.chain_index_of_row(section) + 1}.{number}"
            return str(number)
        if role == Qt.ItemDataRole.DecorationRole:
            color = joint_color(section)
            if color not in self._icons:
                self._icons[color] = swatch(color)
            return self._icons[color]
        if role == Qt.ItemDataRole.ToolTipRole:
            if mechanism:
                return (f"Link {number} of chain {draft.chain_of_row(section)!r}: "
                        f"{draft.link_name(section)} (joint {section + 1})")
            return f"Link {section + 1}: {draft.link_name(section)}"
        return None


class StructureTableModel(DraftTableModel):
    """A mechanism's chains or loops table (`sheet` "chains" or "loops"): one row per
    chain or loop; empty for a serial robot."""

    def __init__(self, document: RobotDocument, sheet: str, columns: tuple[Column, ...],
                 parent=None) -> None:
        super().__init__(document, columns, parent)
        self.sheet = sheet
        document.sheet_changed.connect(self._on_sheet_changed)
        document.sheet_about_to_reset.connect(self._on_about_to_reset)
        document.sheet_reset.connect(self._on_reset)
        document.about_to_reset.connect(self.beginResetModel)
        document.reset.connect(self.endResetModel)
        document.rows_changed.connect(self._refresh)  # link names and counts shown here

    def _on_sheet_changed(self, sheet: str) -> None:
        if sheet == self.sheet:
            self._refresh()

    def _on_about_to_reset(self, sheet: str) -> None:
        if sheet == self.sheet:
            self.beginResetModel()

    def _on_reset(self, sheet: str) -> None:
        if sheet == self.sheet:
            self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        draft = self._doc.draft
        if parent.isValid() or not draft.edits_chains:
            return 0
        return draft.row_count(self.sheet)

    def choices(self, index: _Index) -> list[str]:
        draft = self._doc.draft
        assert draft.edits_chains
        key = self.key(index.column())
        names = draft.link_names()
        if key == "parent":  # a link of another chain, or the base
            own = set(draft.chain_rows(index.row()))
            return [BASE] + [n for i, n in enumerate(names) if i not in own]
        if key == "link_b":
            return names + [BASE]
        return names

    def _row_header(self, section: int, role: int):
        draft = self._doc.draft
        assert draft.edits_chains
        if self.sheet != "chains":
            if role == Qt.ItemDataRole.DisplayRole:
                return str(section + 1)
            return None
        rows = draft.chain_rows(section)
        joints = (f"joint {rows[0] + 1}" if len(rows) == 1
                  else f"joints {rows[0] + 1}\u2013{rows[-1] + 1}") if rows else "no joints"
        if role == Qt.ItemDataRole.DisplayRole:
            return str(section + 1)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Chain {draft.chain_name(section)!r}: {len(rows)} links, {joints} of q"
        return None


class ChoiceDelegate(QStyledItemDelegate):
    """A combo box for cells that take one of a few values; one click commits.

    The values are the joint types for "joint" and "loopjoint" columns and the model's
    `choices(index)` (link names, base) for "choice" columns.
    """

    def _options(self, index: _Index) -> list[tuple[str, object]]:
        model = index.model()
        kind = model.document.draft.column(model.key(index.column())).kind
        if kind == "joint":
            return [(j.value, j) for j in JointType if j.is_dh]  # DH rows (tables)
        if kind == "loopjoint":
            return [(j.value, j) for j in LoopJointType]
        return [(name, name) for name in model.choices(index)]

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem,  # noqa: N802
                     index: _Index) -> QWidget:
        combo = QComboBox(parent)
        for text, value in self._options(index):
            combo.addItem(text, value)
        combo.activated.connect(lambda _i, c=combo: self._commit(c))
        return combo

    def _commit(self, combo: QComboBox) -> None:
        self.commitData.emit(combo)
        self.closeEditor.emit(combo)

    def setEditorData(self, editor: QWidget, index: _Index) -> None:  # noqa: N802
        assert isinstance(editor, QComboBox)
        found = editor.findText(str(index.data(Qt.ItemDataRole.EditRole)))
        editor.setCurrentIndex(max(found, 0))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel,  # noqa: N802
                     index: _Index) -> None:
        assert isinstance(editor, QComboBox)
        model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)


#: The joint-type combo of the DH table (a `ChoiceDelegate` on a "joint" column).
JointTypeDelegate = ChoiceDelegate


class RobotTableView(QTableView):
    """A robot table: typing starts editing, Ctrl+C / Ctrl+V copy and paste cells as
    tab-separated text (spreadsheets use the same), Delete clears names and limits."""

    def __init__(self, model: DraftTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed
                             | QAbstractItemView.EditTrigger.SelectedClicked)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setCornerButtonEnabled(True)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        header.setHighlightSections(True)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignLeft
                                                  | Qt.AlignmentFlag.AlignVCenter)
        self._choices = ChoiceDelegate(self)
        for col, column in enumerate(model.columns):
            if column.kind in ("joint", "loopjoint", "choice"):
                self.setItemDelegateForColumn(col, self._choices)
        for signal in (model.modelReset, model.columnsInserted, model.layoutChanged):
            signal.connect(self.place_flag_columns)
        self.place_flag_columns()
        self.fit_columns()

    def place_flag_columns(self, *_args) -> None:
        """Show a mechanism's `actuated` column right after `joint`: last, it was cut off
        at the right of the Robot dock for every mechanism (the limits, which are
        often empty, go out of sight instead). Only the view's order changes; copy and
        paste follow it."""
        model, header = self.table_model(), self.horizontalHeader()
        keys = [column.key for column in model.columns]
        if "actuated" not in keys or "joint" not in keys:
            return
        flag, joint = keys.index("actuated"), keys.index("joint")
        target = header.visualIndex(joint) + 1
        if header.visualIndex(flag) != target:
            header.moveSection(header.visualIndex(flag), target)

    def _visual_columns(self, first: int, last: int) -> list[int]:
        """The model columns shown from visual position `first` to `last`."""
        header = self.horizontalHeader()
        return [header.logicalIndex(v) for v in range(first, last + 1)]

    def table_model(self) -> DraftTableModel:
        model = self.model()
        assert isinstance(model, DraftTableModel)
        return model

    def fit_columns(self) -> None:
        """Size columns to their contents (the rows in sight and 30 more: a 200-link
        robot's table is not measured cell by cell), within readable bounds."""
        self.horizontalHeader().setResizeContentsPrecision(30)
        self.resizeColumnsToContents()
        header = self.horizontalHeader()
        for col, column in enumerate(self.table_model().columns):
            lo, hi = ((88, 160) if column.kind in ("name", "choice")
                      else (96, 150) if column.kind == "vector"
                      else FLAG_WIDTH if column.kind == "flag" else (50, 110))
            header.resizeSection(col, max(lo, min(hi, header.sectionSize(col))))

    # ----- copy and paste -----------------------------------------------------------
    def copy(self) -> str:
        """Copy the selected cells (their bounding block) as tab-separated text."""
        indexes = self.selectedIndexes() or ([self.currentIndex()]
                                             if self.currentIndex().isValid() else [])
        if not indexes:
            return ""
        rows = sorted({i.row() for i in indexes})
        header = self.horizontalHeader()
        shown = sorted({header.visualIndex(i.column()) for i in indexes})  # as seen
        columns = self._visual_columns(shown[0], shown[-1])
        chosen = {(i.row(), i.column()) for i in indexes}
        model = self.table_model()
        lines = []
        for r in range(rows[0], rows[-1] + 1):
            cells = [str(model.index(r, c).data(Qt.ItemDataRole.EditRole))
                     if (r, c) in chosen else "" for c in columns]
            lines.append("\t".join(cells))
        text = "\n".join(lines)
        QGuiApplication.clipboard().setText(text)
        return text

    def paste(self, text: str | None = None) -> bool:
        """Paste tab-separated text at the selection's top-left cell, as one undo step.

        A single value pasted onto several selected cells fills all of them.
        Cells that would fall outside the table are dropped.
        """
        if text is None:
            text = QGuiApplication.clipboard().text()
        block = [line.split("\t") for line in text.replace("\r\n", "\n").rstrip("\n").split("\n")]
        if not text or not block:
            return False
        model = self.table_model()
        header = self.horizontalHeader()
        selected = self.selectedIndexes()
        start = (min(selected, key=lambda i: (i.row(), header.visualIndex(i.column())))
                 if selected else self.currentIndex())
        if not start.isValid():
            return False
        cells: list[tuple[int, str, object]] = []
        if len(block) == 1 and len(block[0]) == 1 and len(selected) > 1:
            cells = [(i.row(), model.key(i.column()), block[0][0]) for i in selected]
        else:
            # Down the rows shown (a mechanism's table shows one chain at a time).
            rows = [r for r in range(start.row(), model.rowCount()) if not self.isRowHidden(r)]
            first = header.visualIndex(start.column())  # across the columns as shown
            for dr, values in enumerate(block[:len(rows)]):
                for dc, value in enumerate(values):
                    v = first + dc
                    if v < model.columnCount():
                        cells.append((rows[dr], model.key(header.logicalIndex(v)), value))
        return model.document.set_many(cells, "Paste")

    def clear_cells(self) -> bool:
        """Empty the selected name and limit cells (the only cells that may be empty)."""
        model = self.table_model()
        draft = model.document.draft
        cells = [(i.row(), model.key(i.column()), "") for i in self.selectedIndexes()
                 if draft.column(model.key(i.column())).kind in ("name", "limit")]
        return model.document.set_many(cells, "Clear") if cells else False

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self.state() != QAbstractItemView.State.EditingState:
            if event.matches(QKeySequence.StandardKey.Copy):
                self.copy()
                return
            if event.matches(QKeySequence.StandardKey.Paste):
                self.paste()
                return
            if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and self.clear_cells():
                return
        super().keyPressEvent(event)
