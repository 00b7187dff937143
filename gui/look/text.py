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
"""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox

__all__ = ["html", "plain", "plain_label", "tooltip", "shown_name", "NAME_SHOWN"]

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
