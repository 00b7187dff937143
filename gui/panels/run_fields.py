"""The Run panel's small fields, one home for their look: spin boxes of a unit, and a
page's grey explanation (plain text: it may hold a file's name)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QLabel

__all__ = ["number_box", "seconds_box", "caption"]


def number_box(value: float, lo: float, hi: float, decimals: int, step: float, suffix: str
               ) -> QDoubleSpinBox:
    """A spin box of `value` in [lo, hi], `suffix` the unit (" s", " Hz", " m")."""
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setValue(value)
    box.setSuffix(suffix)
    return box


def seconds_box(value: float, lo: float, hi: float, decimals: int = 2, step: float = 0.5
                ) -> QDoubleSpinBox:
    """A spin box of seconds."""
    return number_box(value, lo, hi, decimals, step, " s")


def caption(text: str) -> QLabel:
    """A page's explanation, wrapped, in grey, as plain text."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet("color: #444;")
    return label
