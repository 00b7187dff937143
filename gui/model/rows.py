"""A read-only table of rows for a Qt view: the headers, the rows, nothing editable.

Panels that show a result as a table (the identified values, the sweep's axes) keep
their rows here and say only how a row is shown (`data`); the editable tables of a
model are `gui.editors.tables`.
"""
from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt

__all__ = ["RowsModel"]


class RowsModel(QAbstractTableModel):
    """Rows of values under the column titles HEADERS; a subclass gives `data`.

    `rows`: one tuple per row, as the subclass's `data` reads them. The vertical header
    numbers the rows from 1 when NUMBERED is set."""

    HEADERS: tuple[str, ...] = ()
    NUMBERED = False

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple] = []

    def set_rows(self, rows: Iterable[tuple]) -> None:
        """Show `rows` instead of the rows shown (views are told: a model reset)."""
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt override
                   role: int = Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return section + 1 if self.NUMBERED else None
