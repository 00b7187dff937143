"""Keep numba's on-disk cache per version of the core's source.

numba's cache checks only the timestamp of the file that holds a compiled
function, not of the files it calls into (core.denoc, core.linalg6); after an
edit there, a stale kernel could be loaded. Pointing NUMBA_CACHE_DIR at a folder
named after a hash of every core source file rules that out.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path


def configure_numba_cache() -> None:
    """Set NUMBA_CACHE_DIR (unless the user did, or numba is already imported)."""
    if "NUMBA_CACHE_DIR" in os.environ or "numba" in sys.modules:
        return
    here = Path(__file__).resolve().parent
    digest = hashlib.sha1()
    for path in sorted(here.glob("*.py")):
        digest.update(path.name.encode())
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
