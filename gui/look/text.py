"""Text from a model file (the names of the model, its chains, links and loops; file
paths; core's messages, which quote them) is shown as plain text, never as HTML.

A QLabel, a message box or a tooltip guesses rich text from the text itself
(`Qt.mightBeRichText`): a link named ``<h1>arm</h1>`` would become a heading, an
``<img src=...>`` would show a local image and an ``<a href=...>`` a clickable link.
So: labels and boxes that show such text are set to `Qt.PlainText` (`plain_label`,
`plain`), and rich text that quotes it escapes it first (`html`); a tooltip, whose
format cannot be set, is given as escaped rich text (`tooltip`).

A name is shown in at most NAME_SHOWN characters (`shown_name`): a file may give a
link a name of a megabyte, and laying out the plots' legends with it froze the window
for 22 s (issue #20); the tables, where a name is edited, keep it whole.

A label that must not widen its panel (a row of the Pose list beside its slider) is an
`ElidedLabel`: it asks for little room and shows what does not fit as "\u2026"; the
caller puts the whole text in its tooltip (issue #21: the car's "(follows)" rows asked
261 px and made the window wider than a 1280 px screen).
"""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QSizePolicy, QWidget

__all__ = ["html", "plain", "plain_label", "tooltip", "shown_name", "NAME_SHOWN",
           "ElidedLabel"]

#: A name from a model file is shown in at most this many characters (`shown_name`).
NAME_SHOWN = 120


def shown_name(name: str) -> str:
    """`name` as labels, legends and lists show it: cut to NAME_SHOWN characters, the
    cut marked with an ellipsis."""
    return name if len(name) <= NAME_SHOWN else name[:NAME_SHOWN - 1] + "\u2026"


def html(text: str) -> str:
    """`text` for a place inside rich text: ``<``, ``>`` and ``&`` escaped, line breaks
    as ``<br>``."""
    return escape(str(text), quote=False).replace("\n", "<br>")


def tooltip(text: str) -> str:
    """A tooltip that shows `text` as it is (a tooltip's format cannot be set: this one
    is rich text that holds `text` escaped; "" stays "")."""
    return f"<qt>{html(text)}</qt>" if text else ""


def plain(widget: QLabel | QMessageBox) -> QLabel | QMessageBox:
    """Make `widget` show its text as plain text; returns it."""
    widget.setTextFormat(Qt.TextFormat.PlainText)
    return widget


def plain_label(text: str = "") -> QLabel:
    """A QLabel that shows `text` (and whatever it is given later) as plain text."""
    return plain(QLabel(text))


class ElidedLabel(QLabel):
    """A one-line plain-text label that shrinks to `min_width` px (or its text's width
    if less) and then shows its text cut with "\u2026" (`full_text` keeps it whole); it
    grows no wider than it asks.
    It asks for `preferred_width` px (`set_preferred_width`; default: its text's
    width), so rows of such labels given the same width line up."""

    def __init__(self, text: str = "", min_width: int = 60,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        plain(self)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        self._full = ""
        self._preferred = 0
        self._min_width = min_width
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._full = text
        self.updateGeometry()
        self._show()

    def full_text(self) -> str:
        """The whole text, however little of it is shown."""
        return self._full

    def set_preferred_width(self, width: int) -> None:
        """Ask for `width` px (0: the text's own width)."""
        self._preferred = width
        self.updateGeometry()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        width = self._preferred or self.fontMetrics().horizontalAdvance(self._full) + 4
        return QSize(width, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(min(self._min_width, self.sizeHint().width()),
                     super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._show()

    def _show(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight,
                                              max(self.width() - 2, 1))
        super().setText(shown if self.width() > 1 else self._full)
