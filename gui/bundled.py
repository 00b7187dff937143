"""The robots shipped in robots/ (File > Bundled robots). Qt-free."""
from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["ROBOTS_DIR", "bundled_robots", "bundled_mechanisms", "is_bundled"]

_HERE = Path(__file__).resolve().parent
#: gui/robots/ once installed (pyproject.toml maps robots/ there), else robots/ next to
#: the gui package (the source tree and the editable install).
ROBOTS_DIR = _HERE / "robots" if (_HERE / "robots").is_dir() else _HERE.parent / "robots"


def bundled_robots(directory: Path = ROBOTS_DIR) -> list[tuple[str, Path]]:
    """(title, path) of every serial robot file in robots/, sorted by title.

    The title is the file's ``name`` (read without validating the file, so a
    broken file still gets a menu entry and its error shows when opened).
    """
    return _bundled(directory, mechanisms=False)


def bundled_mechanisms(directory: Path = ROBOTS_DIR) -> list[tuple[str, Path]]:
    """(title, path) of every mechanism file (trees, closed chains, parallel robots) in
    robots/, sorted by title."""
    return _bundled(directory, mechanisms=True)


def _bundled(directory: Path, mechanisms: bool) -> list[tuple[str, Path]]:
    out = []
    for path in sorted(directory.glob("*.toml")):
        try:
            with path.open("rb") as f:
                doc = tomllib.load(f)
            name = doc.get("name")
            is_mechanism = doc.get("format") == "armdyn-mechanism/1"
        except (OSError, tomllib.TOMLDecodeError):
            name, is_mechanism = None, False
        if is_mechanism != mechanisms:
            continue
        title = name.strip() if isinstance(name, str) and name.strip() else path.stem
        out.append((title, path))
    return sorted(out, key=lambda item: item[0].lower())


def is_bundled(path: Path | None, directory: Path = ROBOTS_DIR) -> bool:
    """True if `path` is one of the bundled robot files (Save then asks for a new name)."""
    if path is None:
        return False
    try:
        return Path(path).resolve().parent == directory.resolve()
    except OSError:
        return False
