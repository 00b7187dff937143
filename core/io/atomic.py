"""Safe file writes: a regular file is replaced atomically, anything else is written through.

- A regular file, or a path that does not exist yet: the data goes to a temporary
  file in the same folder, is fsynced, and is renamed over the target
  (``os.replace``). A reader sees the old file or the new one, never half of
  either; the target keeps its permission bits. A symbolic link is followed: the
  file it points to is replaced and the link stays a link.
- A device, a named pipe or a socket (``/dev/null``, a FIFO a reader waits on):
  opened and written, never replaced.
- A name of one of this process's open descriptors (``/dev/stdout``,
  ``/dev/fd/N``, ``/proc/self/fd/N``): written to that descriptor, as a shell
  does, so ``-o /dev/stdout`` works whether stdout is a terminal, a pipe or a
  file opened with ``>>``.
- A directory: refused (IsADirectoryError).
- A read-only regular file (no write permission bit, or no write access): refused
  (PermissionError), as a shell's ``>`` would, even for root; it stays as it was.

Writers that need a file of their own (an encoder process that seeks in its output)
write to `temporary_path(target)` and hand the finished file to
`replace_with_file(target, temporary)`, which puts it at `target` by the same rules
(renamed over a regular file, copied into a device or a pipe) and removes the
temporary file whatever happens; `discard_temporary` removes one that is not wanted.

No temporary file survives an interrupted write. Where the file system allows it
(Linux, O_TMPFILE) the temporary file has no name until its data is complete and
synced, so even SIGKILL or a crash leaves nothing; it is then linked under a
hidden name and renamed at once. While a temporary file has a name (those two
steps, or the whole write on a file system without O_TMPFILE), SIGTERM and SIGHUP
first remove it and then take their default course (when they have their default
disposition and the write runs in the main thread), and any exception removes it.

Every OSError raised names the path exactly as the caller gave it, never the
temporary file.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import signal
import stat
import sys
import tempfile
import threading

__all__ = ["write_atomically", "temporary_path", "replace_with_file", "discard_temporary",
           "check_target"]

#: Write regular files through an unnamed temporary file (O_TMPFILE) where possible.
#: Set False to use a named temporary file throughout (the fallback; tests use it).
_UNNAMED_TEMPORARY = hasattr(os, "O_TMPFILE")

#: Signals whose default action ends the process without Python's cleanup.
_TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))

_DESCRIPTOR_NAME = re.compile(r"/dev/(?:(stdin|stdout|stderr)|fd/(\d+))|/proc/(self|\d+)/fd/(\d+)")


def write_atomically(target: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `target` (see the module docstring for what each kind of
    target gets); OSError naming `target` on failure."""
    shown = os.fspath(target)
    try:
        fd = _descriptor_named(shown)
        if fd is not None:
            _write_all(fd, data)
            return
        try:
            st = os.stat(shown)  # follows symbolic links
        except FileNotFoundError:
            st = None  # a new file (or a link to one still to be made)
        _refuse(shown, st)
        if st is not None and not stat.S_ISREG(st.st_mode):
            _write_through(shown, data)
        else:
            _replace(os.path.realpath(shown), data, st)
    except OSError as e:
        _rename_error(e, shown)


def check_target(target: str | os.PathLike) -> None:
    """Refuse, before any work, a target that `write_atomically` would refuse (a
    directory, a read-only file): OSError naming `target`."""
    shown = os.fspath(target)
    try:
        if _descriptor_named(shown) is not None:
            return
        try:
            st = os.stat(shown)
        except FileNotFoundError:
            return
        _refuse(shown, st)
    except OSError as e:
        _rename_error(e, shown)


def temporary_path(target: str | os.PathLike) -> str:
    """A new, empty file with a hidden random name for a writer that needs a path of its
    own, to be handed to `replace_with_file` (or `discard_temporary`): beside the file
    `target` names (symbolic links resolved, so that the rename stays on one file
    system), or in the system's temporary folder for a device, a pipe or a descriptor.
    Never a name of the user's (".name.partial.mp4" would overwrite one). OSError naming
    `target` if the target is refused (`check_target`) or the file cannot be made."""
    shown = os.fspath(target)
    check_target(shown)
    try:
        try:
            regular = _descriptor_named(shown) is None and stat.S_ISREG(os.stat(shown).st_mode)
        except FileNotFoundError:
            regular = True
        real = os.path.realpath(shown)
        directory = (os.path.dirname(real) or ".") if regular else tempfile.gettempdir()
        tmp, fd = _named_temporary(directory, os.path.basename(real), [])
        os.close(fd)
        return tmp
    except OSError as e:
        _rename_error(e, shown)


def replace_with_file(target: str | os.PathLike, temporary: str) -> None:
    """Put the finished file `temporary` (from `temporary_path`) at `target` by the rules
    of `write_atomically`: renamed over a regular or new file (synced first, keeping the
    old file's permission bits; a symbolic link stays a link), copied into a device, a
    pipe or an open descriptor. `temporary` is gone afterwards, whatever happened.
    OSError naming `target` on failure (the old file is then untouched)."""
    shown = os.fspath(target)
    try:
        fd = _descriptor_named(shown)
        if fd is not None:
            _copy_into(temporary, lambda: fd, close=False)
            return
        try:
            st = os.stat(shown)
        except FileNotFoundError:
            st = None
        _refuse(shown, st)
        if st is not None and not stat.S_ISREG(st.st_mode):
            _copy_into(temporary, lambda: os.open(shown, os.O_WRONLY | getattr(os, "O_BINARY", 0)))
            return
        path = os.path.realpath(shown)
        with open(temporary, "rb+") as f:
            if st is not None and os.chmod in os.supports_fd:
                with contextlib.suppress(OSError):
                    os.chmod(f.fileno(), stat.S_IMODE(st.st_mode))
            os.fsync(f.fileno())
        os.replace(temporary, path)
        _sync_directory(os.path.dirname(path) or ".")
    except OSError as e:
        _rename_error(e, shown)
    finally:
        discard_temporary(temporary)


def discard_temporary(temporary: str) -> None:
    """Remove a temporary file of `temporary_path` (if it is still there)."""
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def _refuse(shown: str, st: os.stat_result | None) -> None:
    """A directory or a read-only regular file is not written (OSError naming it)."""
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", shown)
    if stat.S_ISREG(st.st_mode) and (not st.st_mode & 0o222 or not os.access(shown, os.W_OK)):
        raise PermissionError(errno.EACCES, "is read-only", shown)


def _rename_error(e: OSError, shown: str):
    """Raise `e` naming the path as the caller gave it, never a temporary file."""
    if e.filename == shown and e.filename2 is None:
        raise e
    raise OSError(e.errno or errno.EIO, e.strerror or str(e), shown) from e


def _copy_into(source: str, opener, close: bool = True) -> None:
    """Copy the file `source` into the descriptor `opener()` returns."""
    fd = opener()
    try:
        with open(source, "rb") as f:
            while block := f.read(1 << 20):
                _write_all(fd, block)
    finally:
        if close:
            os.close(fd)


def _descriptor_named(path: str) -> int | None:
    """The descriptor number if `path` names one of this process's open descriptors."""
    m = _DESCRIPTOR_NAME.fullmatch(os.path.normpath(path))
    if m is None:
        return None
    std, dev_fd, proc, proc_fd = m.groups()
    if proc is not None and proc != "self" and int(proc) != os.getpid():
        return None  # another process's descriptor: an ordinary path to us
    fd = ("stdin", "stdout", "stderr").index(std) if std else int(dev_fd or proc_fd)
    for stream in (sys.stdout, sys.stderr):  # keep text already printed ahead of ours
        try:
            if stream is not None and stream.fileno() == fd:
                stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_through(path: str, data: bytes) -> None:
    """A device, pipe or socket: open it (a FIFO waits for its reader) and write."""
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_BINARY", 0))
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _replace(path: str, data: bytes, old: os.stat_result | None) -> None:
    """Temp-and-rename onto `path`, a regular file or a new one (symbolic links resolved)."""
    directory = os.path.dirname(path) or "."
    mode = stat.S_IMODE(old.st_mode) if old is not None else None
    if not (_UNNAMED_TEMPORARY and _replace_via_unnamed(path, directory, data, mode)):
        _replace_via_named(path, directory, data, mode)
    _sync_directory(directory)


def _replace_via_unnamed(path: str, directory: str, data: bytes, mode: int | None) -> bool:
    """O_TMPFILE: the data gets a (hidden) name only once complete and synced, then is
    renamed at once. False, with nothing written, where this is not possible."""
    try:
        fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o666)
    except OSError:
        return False  # unsupported here, or a real error that the named way reports
    try:
        _fill(fd, data, mode)
        with _removed_on_termination() as names:
            tmp = _link_unnamed(fd, directory, os.path.basename(path), names)
            if tmp is None:
                return False
            os.replace(tmp, path)
            return True
    finally:
        os.close(fd)


def _replace_via_named(path: str, directory: str, data: bytes, mode: int | None) -> None:
    with _removed_on_termination() as names:
        tmp, fd = _named_temporary(directory, os.path.basename(path), names)
        try:
            _fill(fd, data, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)


def _fill(fd: int, data: bytes, mode: int | None) -> None:
    _write_all(fd, data)
    if mode is not None and os.chmod in os.supports_fd:  # keep the replaced file's bits
        with contextlib.suppress(OSError):
            os.chmod(fd, mode)
    os.fsync(fd)


def _hidden_names(directory: str, base: str):
    for _ in range(100):
        yield os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
    raise FileExistsError(errno.EEXIST, "cannot find a free temporary-file name", directory)


def _link_unnamed(fd: int, directory: str, base: str, names: list[str]) -> str | None:
    """Give the unnamed file `fd` a hidden name (recorded in `names`); None if impossible."""
    for tmp in _hidden_names(directory, base):
        names.append(tmp)
        try:
            os.link(f"/proc/self/fd/{fd}", tmp, follow_symlinks=True)
            return tmp
        except FileExistsError:
            names.pop()
        except OSError:
            names.pop()
            return None


def _named_temporary(directory: str, base: str, names: list[str]) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for tmp in _hidden_names(directory, base):
        names.append(tmp)  # before it exists: a signal right after the open still finds it
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            names.pop()  # someone else's


class _Terminated(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _removed_on_termination():
    """Yield a list; on leaving with an exception (or SIGTERM/SIGHUP, which then take
    their default course) every path in it that still exists is removed."""
    names: list[str] = []
    installed = {}
    if threading.current_thread() is threading.main_thread():
        def terminate(signum, frame):
            raise _Terminated(signum)
        for signum in _TERMINATING:
            with contextlib.suppress(OSError, ValueError):
                if signal.getsignal(signum) == signal.SIG_DFL:
                    installed[signum] = signal.signal(signum, terminate)
    try:
        yield names
    except BaseException as exc:
        for tmp in names:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for signum, previous in installed.items():
            signal.signal(signum, previous)
        installed.clear()
        if isinstance(exc, _Terminated):
            signal.raise_signal(exc.signum)  # the default action: the process ends here
            raise SystemExit(128 + exc.signum) from None
        raise
    finally:
        for signum, previous in installed.items():
            signal.signal(signum, previous)


def _sync_directory(directory: str) -> None:
    """Make the rename durable; not possible everywhere (e.g. Windows)."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
