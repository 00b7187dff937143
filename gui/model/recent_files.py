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

    # ----- URDF files opened with a floating base, remembered per file ------------------
    FLOATING_KEY = "floatingBaseFiles"

    def floating_base(self, path: Path) -> bool:
        """Whether the URDF at `path` was last opened "as floating base"."""
        return str(Path(path).resolve()) in self._floating()

    def set_floating_base(self, path: Path, floating: bool) -> None:
        """Remember whether the URDF at `path` opens with a floating base."""
        key = str(Path(path).resolve())
        files = [p for p in self._floating() if p != key] + ([key] if floating else [])
        self._settings.setValue(self.FLOATING_KEY, files)
        self._settings.sync()

    def _floating(self) -> list[str]:
        value = self._settings.value(self.FLOATING_KEY, [])
        return [value] if isinstance(value, str) else list(value or [])

    def _store(self, paths: list[Path]) -> None:
        self._settings.setValue(self.KEY, [str(p) for p in paths])
        self._settings.sync()
