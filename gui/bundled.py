"""The robots shipped in robots/ (File > Bundled robots). Qt-free."""
from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["ROBOTS_DIR", "bundled_robots", "is_bundled"]

#: robots/ next to the gui package (the source tree layout).
ROBOTS_DIR = Path(__file__).resolve().parent.parent / "robots"


def bundled_robots(directory: Path = ROBOTS_DIR) -> list[tuple[str, Path]]:
    """(title, path) of every robots/*.toml, sorted by title.

    The title is the file's ``name`` (read without validating the file, so a
    broken file still gets a menu entry and its error shows when opened).
    """
    out = []
    for path in sorted(directory.glob("*.toml")):
        try:
            with path.open("rb") as f:
                doc = tomllib.load(f)
            name = doc.get("name")
            if doc.get("format") == "armdyn-mechanism/1":
                continue  # mechanisms open in the window once it edits them
        except (OSError, tomllib.TOMLDecodeError):
            name = None
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
