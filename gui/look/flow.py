"""A layout that wraps its widgets into as many rows as its width needs (Qt widgets,
no model).

A row of buttons in a `QHBoxLayout` asks for the sum of their widths as its minimum:
the Results dock's "Show:" row of plot toggles for a model with loops, a free base
and gears asked for 934 px and made the main window wider than a 1280 px screen
(issue #21). `FlowLayout` asks only for its widest item and wraps the rest onto
further rows (`heightForWidth`).
"""
from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QStyle, QWidget

__all__ = ["FlowLayout"]


class FlowLayout(QLayout):
    """Items left to right, wrapped onto a new row where the next would not fit;
    `spacing` px between items and rows (the style's spacing if negative); each item
    at its size hint, centred in its row's height."""

    def __init__(self, parent: QWidget | None = None, spacing: int = -1) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing

    # ----- QLayout -------------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt override
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt override
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt override
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def spacing(self) -> int:
        if self._spacing >= 0:
            return self._spacing
        parent = self.parentWidget()
        style = parent.style().pixelMetric(QStyle.PixelMetric.PM_LayoutHorizontalSpacing) \
            if parent is not None else -1
        return style if style >= 0 else 6

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt override
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        """The height (px) the rows need at `width` px."""
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt override
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        """All items in one row."""
        shown = [i.sizeHint() for i in self._items if not i.isEmpty()]
        width = sum(s.width() for s in shown) + self.spacing() * max(len(shown) - 1, 0)
        height = max((s.height() for s in shown), default=0)
        return self._grown(QSize(width, height))

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt override
        """The widest item (one item a row)."""
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        return self._grown(size)

    # ----- placing -------------------------------------------------------------------
    def _grown(self, size: QSize) -> QSize:
        m: QMargins = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _place(self, rect: QRect, move: bool) -> int:
        """Lay the items out in `rect` (moving them if `move`), each centred in its row's
        height; returns the height used (px)."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        gap = self.spacing()
        rows: list[list[tuple[QLayoutItem, QSize]]] = [[]]
        x = area.x()
        for item in self._items:
            if item.isEmpty():  # a hidden widget
                continue
            hint = item.sizeHint()
            if rows[-1] and x + hint.width() > area.right() + 1:
                rows.append([])
                x = area.x()
            rows[-1].append((item, hint))
            x += hint.width() + gap
        y = area.y()
        for row in rows:
            height = max((hint.height() for _, hint in row), default=0)
            x = area.x()
            for item, hint in row:
                if move:
                    item.setGeometry(QRect(QPoint(x, y + (height - hint.height()) // 2), hint))
                x += hint.width() + gap
            y += height + gap
        return max(y - gap, area.y()) - rect.y() + m.bottom()
