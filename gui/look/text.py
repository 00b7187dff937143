"""Text from a model file (the names of the model, its chains, links and loops; file
paths; core's messages, which quote them) is shown as plain text, never as HTML.

A QLabel, a message box or a tooltip guesses rich text from the text itself
(`Qt.mightBeRichText`): a link named ``<h1>arm</h1>`` would become a heading, an
``<img src=...>`` would show a local image and an ``<a href=...>`` a clickable link.
So: labels and boxes that show such text are set to `Qt.PlainText` (`plain_label`,
`plain`), and rich text that quotes it escapes it first (`html`); a tooltip, whose
format cannot be set, is given as escaped rich text (`tooltip`).
"""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox

__all__ = ["html", "plain", "plain_label", "tooltip"]


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
