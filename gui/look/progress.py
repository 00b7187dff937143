"""A job's progress bar and Cancel button, as every panel that runs a job shows them."""
from __future__ import annotations

from PySide6.QtWidgets import QProgressBar, QPushButton

__all__ = ["progress_and_cancel"]


def progress_and_cancel(cancel) -> tuple[QProgressBar, QPushButton]:
    """A job's progress bar (0-100 %) and its Cancel button (calls `cancel`), both
    hidden until a job runs."""
    progress = QProgressBar()
    progress.setRange(0, 100)
    progress.setMaximumWidth(160)
    progress.hide()
    button = QPushButton("Cancel")
    button.hide()
    button.clicked.connect(cancel)
    return progress, button
