"""The models shipped with ArmDyn (robots/): found by short name, listed, and in the
window's File > Bundled menus.

`armdyn fourbar`, `armdyn simulate puma560_saha` and `armdyn --list-models` use them:
a name that is not a file is looked up here (`model_path`).
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

__all__ = ["ROBOTS_DIR", "bundled_models", "bundled_names", "is_bundled", "model_path"]

_CORE = Path(__file__).resolve().parents[1]
#: armdyn/core/robots/ once installed (pyproject.toml maps robots/ there), else robots/
#: next to the core package (the source tree and the editable install).
ROBOTS_DIR = _CORE / "robots" if (_CORE / "robots").is_dir() else _CORE.parent / "robots"


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
            doc = _top_level_keys(path.read_text(encoding="utf-8"))
            name = doc.get("name")
            is_mechanism = doc.get("format") == "armdyn-mechanism/1"
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            name, is_mechanism = None, False
        title = name.strip() if isinstance(name, str) and name.strip() else path.stem
        (mechanisms if is_mechanism else robots).append((title, path))
    return _by_title(robots), _by_title(mechanisms)


def _top_level_keys(text: str) -> dict:
    """The keys of a TOML document before its first table (``name``, ``format``...).

    TOML puts every top-level key before the first ``[table]``, so only that part is
    parsed: the whole of the bundled files (21 models, the largest 22 kB) took 20 ms of
    every window's start. A line starting with ``[`` that is not a table header (inside
    a multi-line array or string) leaves the part unparsable: the whole text is parsed
    then."""
    head = re.split(r"^[ \t]*\[", text, maxsplit=1, flags=re.MULTILINE)[0]
    try:
        return tomllib.loads(head)
    except tomllib.TOMLDecodeError:
        return tomllib.loads(text)


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


def bundled_names(directory: Path = ROBOTS_DIR) -> list[str]:
    """The short names of the bundled models (their file names without .toml), sorted."""
    return sorted(path.stem for path in directory.glob("*.toml"))


def model_path(text: str | Path, directory: Path = ROBOTS_DIR) -> Path:
    """The model file `text` names: the file itself when it exists, else the bundled model
    of that short name ("fourbar", "puma560_saha", "fourbar.toml"); else `text` as a path
    (the reader then says it is missing)."""
    path = Path(text)
    if path.exists():
        return path
    name = path.name[:-5] if path.name.endswith(".toml") else path.name
    if path.parent == Path(".") and name in bundled_names(directory):
        return directory / f"{name}.toml"
    return path
