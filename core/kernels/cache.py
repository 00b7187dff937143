"""Keep numba's on-disk cache per version of the core's source.

numba's cache checks only the timestamp of the file that holds a compiled
function, not of the files it calls into (core.kernels.denoc, core.kernels.linalg6); after an
edit there, a stale kernel could be loaded. Pointing NUMBA_CACHE_DIR at a folder
named after a hash of the core's compiled modules and of every core module they
import (directly or not) rules that out. Modules outside that closure (file
formats, the CLI) cannot change a kernel, so editing them keeps the cache.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import time
from pathlib import Path


def configure_numba_cache() -> None:
    """Point numba's cache at this version's folder, unless the user set NUMBA_CACHE_DIR.

    Before the kernels are defined: through the environment, or through numba's config
    when numba was imported first (its default, a cache beside each source file, would
    load kernels compiled against an older layout of the workspace)."""
    if "NUMBA_CACHE_DIR" in os.environ:
        return
    here = Path(__file__).resolve().parent
    digest = hashlib.sha1()
    for path in _compiled_closure(here):
        digest.update(path.relative_to(here.parent).as_posix().encode())
        digest.update(path.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "armdyn"
    folder = base / f"numba-{digest.hexdigest()[:16]}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in base.glob("numba-*"):  # caches of other versions, unused for a week
            if old != folder and time.time() - old.stat().st_mtime > 7 * 86400:
                shutil.rmtree(old, ignore_errors=True)
    except OSError:
        return  # read-only home: numba falls back to __pycache__
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    if "numba" in sys.modules:
        from numba.core import config
        config.CACHE_DIR = str(folder)


#: How long the first run of a version compiles the kernels it needs, as the command line
#: and the window's splash say it: every kernel took 303 to 409 s of CPU on this
#: project's 2-core machine while numba inlined the helpers at its IR level; with LLVM
#: inlining them (`core.kernels.buffers`) every kernel takes 133 s of CPU, and a
#: four-bar's first `armdyn simulate` 88 s of CPU (631 s of wall time at a load of 9);
#: 115 s since `core.kernels.inliner` and `core.kernels.constrained.loops_of`; 94 s since
#: `core.kernels.calls` and `core.kernels.flags`.
FIRST_COMPILE_TIME = "1 to 3 minutes"


def cache_folder() -> Path | None:
    """The folder numba's cache is in (NUMBA_CACHE_DIR), None before it is configured."""
    folder = os.environ.get("NUMBA_CACHE_DIR")
    return Path(folder) if folder else None


def cache_is_cold() -> bool:
    """True when numba's cache holds no compiled kernel for this version of the core:
    the first run after installing or updating compiles the kernels it needs."""
    folder = cache_folder()
    if folder is None:
        return False  # numba's own cache beside the sources: cannot tell, say nothing
    return next(folder.rglob("*.nbi"), None) is None


_RELATIVE_IMPORT = re.compile(r"^\s*from (\.+)([\w.]*) import (\([^)]*\)|[^\n]+)", re.MULTILINE)


def _compiled_closure(here: Path) -> list[Path]:
    """The core modules that compile (they import numba, or the `compiled_kernel`
    decorators of core/kernels/buffers.py), and every core module they import."""
    root = here.parent  # the core package
    sources = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        sources[parts] = path.read_text(encoding="utf-8")

    def imports(name: tuple[str, ...]) -> set[tuple[str, ...]]:
        package = name[:-1]
        found = set()
        for dots, module, names in _RELATIVE_IMPORT.findall(sources[name]):
            base = package[:len(package) - (len(dots) - 1)] if len(dots) > 1 else package
            target = base + tuple(p for p in module.split(".") if p)
            found.add(target)
            found.add(target + ("__init__",))
            for item in re.split(r"[\s,()]+", names):  # from . import a_module
                found.add(target + (item,))
        return found & sources.keys()

    todo = [name for name, text in sources.items()
            if re.search(r"^\s*(from numba|import numba|from \.+(kernels\.)?buffers import)",
                         text, re.MULTILINE)]
    closure = set(todo)
    while todo:
        for module in imports(todo.pop()) - closure:
            closure.add(module)
            todo.append(module)
    return [root.joinpath(*name).with_suffix(".py") for name in sorted(closure)]
