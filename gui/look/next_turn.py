"""One call at the next event-loop turn for any number of requests in this one: the
debounce of the plots' axis alignment (a zoom changes the y ranges of several views, a
resize every plot's size) and of Drag Tool's moves (the newest wins).
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Slot

__all__ = ["NextTurn"]


class NextTurn(QTimer):
    """A single-shot timer of 0 ms that calls `slot` once at the next event-loop turn
    however often `request` is called before it; `stop()` drops a pending call (the
    slot ran by hand)."""

    def __init__(self, parent: QObject, slot: Callable[[], object]) -> None:
        super().__init__(parent)
        self.setSingleShot(True)
        self.setInterval(0)
        self.timeout.connect(slot)

    @Slot()
    def request(self, *_args) -> None:
        """Call the slot at the next turn (once, with the other requests of this turn);
        takes and ignores a signal's arguments."""
        if not self.isActive():
            self.start()
