"""The File > Open Recent list, kept in QSettings."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

__all__ = ["RecentFiles"]


class RecentFiles:
    """Most recently opened or saved robot files, newest first."""

    KEY = "recentFiles"

    def __init__(self, settings: QSettings, limit: int = 8) -> None:
        self._settings = settings
        self._limit = limit

    def paths(self) -> list[Path]:
        value = self._settings.value(self.KEY, [])
        if isinstance(value, str):  # QSettings returns a lone entry as a string
            value = [value]
        return [Path(p) for p in (value or []) if p]

    def add(self, path: Path) -> None:
        path = Path(path).resolve()
        paths = [path] + [p for p in self.paths() if p != path]
        self._store(paths[: self._limit])

    def remove(self, path: Path) -> None:
        self._store([p for p in self.paths() if p != Path(path)])

    def clear(self) -> None:
        self._store([])

    def _store(self, paths: list[Path]) -> None:
        self._settings.setValue(self.KEY, [str(p) for p in paths])
        self._settings.sync()
