"""The robots shipped in robots/ (File > Bundled robots). Qt-free."""
from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["ROBOTS_DIR", "bundled_models", "is_bundled"]

_GUI = Path(__file__).resolve().parents[1]
#: armdyn/gui/robots/ once installed (pyproject.toml maps robots/ there), else robots/
#: next to the gui package (the source tree and the editable install).
ROBOTS_DIR = _GUI / "robots" if (_GUI / "robots").is_dir() else _GUI.parent / "robots"


def bundled_models(directory: Path = ROBOTS_DIR
                   ) -> tuple[list[tuple[str, Path]], list[tuple[str, Path]]]:
    """(robots, mechanisms): (title, path) of every serial robot file and of every
    mechanism file (trees, closed chains, parallel robots) in robots/, each list
    sorted by title; the files are read once (the window's two menus, at every start).

    The title is the file's ``name`` (read without validating the file, so a broken
    file still gets a menu entry and its error shows when opened).
    """
    robots, mechanisms = [], []
    for path in sorted(directory.glob("*.toml")):
        try:
            with path.open("rb") as f:
                doc = tomllib.load(f)
            name = doc.get("name")
            is_mechanism = doc.get("format") == "armdyn-mechanism/1"
        except (OSError, tomllib.TOMLDecodeError):
            name, is_mechanism = None, False
        title = name.strip() if isinstance(name, str) and name.strip() else path.stem
        (mechanisms if is_mechanism else robots).append((title, path))
    return _by_title(robots), _by_title(mechanisms)


def _by_title(entries: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    return sorted(entries, key=lambda item: item[0].lower())


def is_bundled(path: Path | None, directory: Path = ROBOTS_DIR) -> bool:
    """True if `path` is one of the bundled robot files (Save then asks for a new name)."""
    if path is None:
        return False
    try:
        return Path(path).resolve().parent == directory.resolve()
    except OSError:
        return False
