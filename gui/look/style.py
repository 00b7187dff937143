"""The light theme: Fusion style, a high-contrast palette and resources/style.qss."""
from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

__all__ = ["apply_style", "STYLE_SHEET"]

log = logging.getLogger(__name__)

_GUI = Path(__file__).resolve().parents[1]
#: The application style sheet (optional: the palette alone is a usable theme), in
#: armdyn/gui/resources/ once installed (pyproject.toml maps resources/ there), else in
#: resources/ next to the gui package (the source tree and the editable install).
STYLE_SHEET = (_GUI / "resources" if (_GUI / "resources").is_dir()
               else _GUI.parent / "resources") / "style.qss"

_PALETTE = {
    QPalette.ColorRole.Window: "#F2F4F7",
    QPalette.ColorRole.WindowText: "#1A1D21",
    QPalette.ColorRole.Base: "#FFFFFF",
    QPalette.ColorRole.AlternateBase: "#F4F6F9",
    QPalette.ColorRole.Text: "#1A1D21",
    QPalette.ColorRole.Button: "#E8ECF1",
    QPalette.ColorRole.ButtonText: "#1A1D21",
    QPalette.ColorRole.Highlight: "#1F5FBF",
    QPalette.ColorRole.HighlightedText: "#FFFFFF",
    QPalette.ColorRole.ToolTipBase: "#FFFFF0",
    QPalette.ColorRole.ToolTipText: "#1A1D21",
    QPalette.ColorRole.PlaceholderText: "#6B7280",
    QPalette.ColorRole.Link: "#1F5FBF",
    QPalette.ColorRole.Mid: "#B8C0CA",
    QPalette.ColorRole.Dark: "#8A94A0",
}


def apply_style(app: QApplication, point_size: int = 10) -> None:
    """Fusion, the light palette, a font readable on a projector, and style.qss."""
    app.setStyle(QStyleFactory.create("Fusion"))
    palette = QPalette()
    for role, color in _PALETTE.items():
        palette.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text,
                 QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#8A929C"))
    app.setPalette(palette)
    font = QFont(app.font())
    font.setPointSize(point_size)
    app.setFont(font)
    try:
        app.setStyleSheet(STYLE_SHEET.read_text(encoding="utf-8"))
    except OSError as e:
        log.info("no style sheet (%s); using the palette only", e)
