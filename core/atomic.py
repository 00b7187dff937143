"""Atomic file writes: a temporary file in the same folder, fsync, then os.replace.

A reader sees the old file or the new one, never half of either, and a failed
write leaves the old file untouched and no temporary file behind.
"""
from __future__ import annotations

import os
import secrets
import stat


def write_atomically(target: str, data: bytes) -> None:
    """Write `data` to `target` via a temporary file and os.replace; OSError on failure."""
    directory = os.path.dirname(target) or "."
    base = os.path.basename(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"cannot create a temporary file in {directory}")
    try:
        with open(fd, "wb", closefd=True) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:  # keep the permission bits of the file being replaced
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        except OSError:
            pass
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename durable; not possible everywhere (e.g. Windows)
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
