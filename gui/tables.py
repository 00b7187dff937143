"""The DH and inertia tables: a Qt model over `RobotDocument`, a joint-type delegate
and a table view with tab-separated copy and paste.

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

from core import JointType

from .colors import joint_color
from .document import RobotDocument
from .draft import COLUMNS, Column

__all__ = ["RobotTableModel", "JointTypeDelegate", "RobotTableView", "ERROR_BACKGROUND"]

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


class RobotTableModel(QAbstractTableModel):
    """One row per link, the given `columns` of the document's draft."""

    def __init__(self, document: RobotDocument, columns: tuple[Column, ...],
                 parent=None, *, names_in_header: bool = False,
                 mechanism_columns: tuple[Column, ...] | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self._serial_columns = columns
        self._mechanism_columns = mechanism_columns or columns
        self._names_in_header = names_in_header
        self._icons: dict[str, QIcon] = {}
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

    # ----- helpers ----------------------------------------------------------------
    @property
    def document(self) -> RobotDocument:
        return self._doc

    @property
    def columns(self) -> tuple[Column, ...]:
        """The columns shown: a mechanism's (with `actuated`) or a serial arm's."""
        return self._mechanism_columns if self._doc.is_mechanism else self._serial_columns

    @property
    def _columns(self) -> tuple[Column, ...]:
        return self.columns

    def key(self, column: int) -> str:
        """Cell key of a column ("a", "mass", ...)."""
        return self._columns[column].key

    def column_of(self, key: str) -> int:
        """Column number of a cell key; ValueError if this table has no such column."""
        return [c.key for c in self._columns].index(key)

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

    def _error_icon(self) -> QIcon:
        if "error" not in self._icons:
            style = QApplication.style()
            self._icons["error"] = style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        return self._icons["error"]

    # ----- QAbstractTableModel ------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else self._doc.draft.n

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self._columns)

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                | Qt.ItemFlag.ItemIsEditable)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        draft = self._doc.draft
        row, key = index.row(), self.key(index.column())
        error = draft.errors.get((row, key))
        kind = COLUMNS[key].kind
        if role == Qt.ItemDataRole.DisplayRole:
            if kind == "name" and not draft.value(row, key):
                return draft.link_name(row)  # placeholder, shown in grey
            return draft.display_text(row, key)
        if role == Qt.ItemDataRole.EditRole:
            return draft.edit_text(row, key)
        if role == Qt.ItemDataRole.ToolTipRole:
            if error:
                return error
            if kind in ("angle", "limit", "length", "number"):
                unit = draft.unit(row, key)
                return f"{draft.edit_text(row, key) or '(none)'} {unit}".strip()
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            return ERROR_BACKGROUND if error else None
        if role == Qt.ItemDataRole.DecorationRole:
            return self._error_icon() if error else None
        if role == Qt.ItemDataRole.ForegroundRole:
            if error:
                return ERROR_FOREGROUND
            if kind == "name" and not draft.value(row, key):
                return PLACEHOLDER_FOREGROUND
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if kind in ("name", "joint", "flag"):
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
            if not 0 <= section < len(self._columns):
                return None
            col = self._columns[section]
            if role == Qt.ItemDataRole.DisplayRole:
                unit = col.unit.replace("deg", "\u00b0")
                return f"{col.title}\n({unit})" if unit else f"{col.title}\n"
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"{col.title} ({col.unit}): {col.tip}" if col.unit else col.tip
            return None
        if not 0 <= section < self.rowCount():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if self._names_in_header:
                return f"{section + 1}  {self._doc.draft.link_name(section)}"
            chain = self._doc.draft.rows[section].chain
            if chain is not None and self._doc.draft.chain_rows(chain)[0] == section:
                short = chain if len(chain) <= 12 else chain[:11] + "\u2026"
                return f"{section + 1} \u25b8 {short}"  # a mechanism's chain starts here
            return str(section + 1)
        if role == Qt.ItemDataRole.DecorationRole:
            color = joint_color(section)
            if color not in self._icons:
                self._icons[color] = swatch(color)
            return self._icons[color]
        if role == Qt.ItemDataRole.ToolTipRole:
            chain = self._doc.draft.rows[section].chain
            where = f" (chain {chain!r})" if chain is not None else ""
            return f"Link {section + 1}: {self._doc.draft.link_name(section)}{where}"
        return None


class JointTypeDelegate(QStyledItemDelegate):
    """A combo box (revolute / prismatic) for the joint column; one click commits."""

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem,  # noqa: N802
                     index: _Index) -> QWidget:
        combo = QComboBox(parent)
        for joint in JointType:
            combo.addItem(joint.value, joint)
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


class RobotTableView(QTableView):
    """A robot table: typing starts editing, Ctrl+C / Ctrl+V copy and paste cells as
    tab-separated text (spreadsheets use the same), Delete clears names and limits."""

    def __init__(self, model: RobotTableModel, parent: QWidget | None = None) -> None:
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
        for col, column in enumerate(model.columns):
            if column.kind == "joint":
                self.setItemDelegateForColumn(col, JointTypeDelegate(self))
        self.fit_columns()

    def table_model(self) -> RobotTableModel:
        model = self.model()
        assert isinstance(model, RobotTableModel)
        return model

    def fit_columns(self) -> None:
        """Size columns to their contents, within readable bounds."""
        self.resizeColumnsToContents()
        header = self.horizontalHeader()
        for col, column in enumerate(self.table_model().columns):
            lo, hi = (88, 160) if column.kind == "name" else (50, 110)
            header.resizeSection(col, max(lo, min(hi, header.sectionSize(col))))

    # ----- copy and paste -----------------------------------------------------------
    def copy(self) -> str:
        """Copy the selected cells (their bounding block) as tab-separated text."""
        indexes = self.selectedIndexes() or ([self.currentIndex()]
                                             if self.currentIndex().isValid() else [])
        if not indexes:
            return ""
        rows = sorted({i.row() for i in indexes})
        cols = sorted({i.column() for i in indexes})
        chosen = {(i.row(), i.column()) for i in indexes}
        model = self.table_model()
        lines = []
        for r in range(rows[0], rows[-1] + 1):
            cells = [str(model.index(r, c).data(Qt.ItemDataRole.EditRole))
                     if (r, c) in chosen else "" for c in range(cols[0], cols[-1] + 1)]
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
        selected = self.selectedIndexes()
        start = (min(selected, key=lambda i: (i.row(), i.column())) if selected
                 else self.currentIndex())
        if not start.isValid():
            return False
        cells: list[tuple[int, str, object]] = []
        if len(block) == 1 and len(block[0]) == 1 and len(selected) > 1:
            cells = [(i.row(), model.key(i.column()), block[0][0]) for i in selected]
        else:
            for dr, values in enumerate(block):
                for dc, value in enumerate(values):
                    r, c = start.row() + dr, start.column() + dc
                    if r < model.rowCount() and c < model.columnCount():
                        cells.append((r, model.key(c), value))
        return model.document.set_many(cells, "Paste")

    def clear_cells(self) -> bool:
        """Empty the selected name and limit cells (the only cells that may be empty)."""
        model = self.table_model()
        cells = [(i.row(), model.key(i.column()), "") for i in self.selectedIndexes()
                 if COLUMNS[model.key(i.column())].kind in ("name", "limit")]
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
