"""One kind of scroll area for the panels: frameless, resizing what it holds.

A dock or pane that may be low (or narrow) scrolls its content instead of growing the
window. Used by the window's docks, the Run, Inspect, Lab, Compare and plots panels.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

__all__ = ["scroll_area"]


def scroll_area(widget: QWidget, *, name: str = "", vertical_only: bool = False,
                fit_width: bool = False) -> QScrollArea:
    """`widget` in a frameless scroll area that resizes it.

    name          : the area's object name (none if empty)
    vertical_only : no horizontal scroll bar: the widget is laid out to the area's width
    fit_width     : the area is at least the widget's minimum width plus the vertical
                    scroll bar, so the content is never cut at the right
    """
    area = QScrollArea()
    if name:
        area.setObjectName(name)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    if vertical_only:
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setWidget(widget)
    if fit_width:
        area.setMinimumWidth(widget.minimumSizeHint().width()
                             + area.verticalScrollBar().sizeHint().width())
    return area
