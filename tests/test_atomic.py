"""Safe writes (core.io.atomic.write_atomically): only a regular file or a new path is
replaced by temp-and-rename; devices, pipes and open descriptors are written through,
a symbolic link stays a link, and an interrupted write leaves no temporary file.

Nothing here may replace a device of this machine if the writer is wrong: devices are
tested on nodes made in tmp_path (/dev/null only after a node of the same device kept
its type), and /dev/stdout only through names that cannot be replaced (/proc/self/fd).
"""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from armdyn.core.io.atomic import write_atomically

REPO = Path(__file__).resolve().parents[1]


def others(directory: Path, *keep: str) -> list[str]:
    """Files in `directory` other than `keep` (a leftover temporary file shows here)."""
    return sorted(set(os.listdir(directory)) - set(keep))


def device_node(path: Path, major: int, minor: int) -> Path:
    """A character-device node in tmp_path (root only); skip where it cannot be made."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        os.close(os.open(path, os.O_WRONLY))
    except OSError as e:
        pytest.skip(f"cannot make a device node here: {e}")
    return path


def test_a_new_file_and_a_regular_file_are_replaced_atomically(tmp_path):
    target = tmp_path / "out.csv"
    write_atomically(str(target), b"first\n")
    assert target.read_bytes() == b"first\n"
    target.chmod(0o640)
    inode = target.stat().st_ino
    write_atomically(str(target), b"second\n")
    assert target.read_bytes() == b"second\n"
    assert target.stat().st_ino != inode  # a new file renamed over the old one
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert others(tmp_path, "out.csv") == []


def test_a_symbolic_link_stays_a_link_and_its_file_is_replaced(tmp_path):
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "robot.toml"
    real.write_bytes(b"old\n")
    inode = real.stat().st_ino
    link = tmp_path / "link.toml"
    link.symlink_to(os.path.join("data", "robot.toml"))  # relative, as users make them
    write_atomically(str(link), b"new\n")
    assert link.is_symlink() and os.readlink(link) == os.path.join("data", "robot.toml")
    assert real.read_bytes() == b"new\n"
    assert real.stat().st_ino != inode  # the file behind the link got temp-and-rename
    assert others(tmp_path, "data", "link.toml") == []
    assert others(tmp_path / "data", "robot.toml") == []


def test_a_named_pipe_is_written_through_to_its_reader(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    spare = tmp_path / "spare-name"  # a second name of the pipe, to unblock a stuck reader
    os.link(fifo, spare)
    received: list[bytes] = []

    def reader():
        with open(fifo, "rb") as f:
            received.append(f.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    data = b"x" * 300_000  # more than a pipe's buffer: the reader must drain it
    try:
        write_atomically(str(fifo), data)
    finally:
        thread.join(10)
        if thread.is_alive():  # the writer never opened the pipe: end the reader
            os.close(os.open(spare, os.O_WRONLY))
            thread.join(10)
    assert received == [data]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_device_is_written_through_and_stays_a_device(tmp_path):
    node = device_node(tmp_path / "null", 1, 3)  # the same device as /dev/null
    rdev = node.stat().st_rdev
    write_atomically(str(node), b"data\n")
    assert stat.S_ISCHR(os.lstat(node).st_mode) and node.stat().st_rdev == rdev
    assert others(tmp_path, "null") == []
    # only now, with a writer shown to keep devices, the real /dev/null
    before = os.lstat("/dev/null")
    write_atomically("/dev/null", b"data\n")
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino


def test_a_write_error_on_a_device_names_the_path(tmp_path):
    node = device_node(tmp_path / "full", 1, 7)  # the same device as /dev/full: ENOSPC
    with pytest.raises(OSError) as err:
        write_atomically(str(node), b"data\n")
    assert err.value.filename == str(node) and err.value.filename2 is None
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_a_directory_is_refused_naming_it(tmp_path):
    target = tmp_path / "results"
    target.mkdir()
    with pytest.raises(IsADirectoryError) as err:
        write_atomically(str(target), b"data\n")
    assert err.value.filename == str(target) and err.value.filename2 is None
    assert target.is_dir() and others(tmp_path, "results") == []
    assert others(target) == []


def test_a_missing_folder_is_named_as_given_not_the_temporary_file(tmp_path):
    target = os.path.join(str(tmp_path), "missing", "out.csv")
    with pytest.raises(FileNotFoundError) as err:
        write_atomically(target, b"data\n")
    assert err.value.filename == target and err.value.filename2 is None
    assert ".tmp" not in str(err.value)


def _child(code: str, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, timeout=60, **kw)


@pytest.mark.parametrize("name", ["/proc/self/fd/1", "/dev/fd/1"])
def test_an_open_descriptor_is_written_through(tmp_path, name):
    # stdout a pipe: the data arrives on it
    run = _child(f"from armdyn.core.io.atomic import write_atomically; "
                 f"write_atomically({name!r}, b'row 1\\nrow 2\\n')", capture_output=True)
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout == b"row 1\nrow 2\n"
    # stdout a file opened for appending (`>> log`): appended to, not replaced
    log = tmp_path / "log"
    log.write_bytes(b"earlier\n")
    inode = log.stat().st_ino
    with open(log, "ab") as out:
        run = _child(f"from armdyn.core.io.atomic import write_atomically; "
                     f"write_atomically({name!r}, b'row 1\\n')", stdout=out,
                     stderr=subprocess.PIPE)
    assert run.returncode == 0, run.stderr.decode()
    assert log.read_bytes() == b"earlier\nrow 1\n" and log.stat().st_ino == inode
    assert others(tmp_path, "log") == []


_WRITER = """
import sys
import armdyn.core.io.atomic as atomic
atomic._UNNAMED_TEMPORARY = {unnamed}
from armdyn.core.io.atomic import write_atomically
data = b"0123456789abcdef" * (4 << 20)  # 64 MB
print("writing", flush=True)
write_atomically(sys.argv[1], data)
print("done", flush=True)
"""


def _open_in(pid: int, directory: Path) -> bool:
    """True once process `pid` holds a file of `directory` open (the write has begun)."""
    fds = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fds)
    except OSError:
        return False
    for fd in names:
        try:
            if os.readlink(f"{fds}/{fd}").startswith(f"{directory}/"):
                return True
        except OSError:
            pass
    return False


@pytest.mark.parametrize("unnamed", [True, False], ids=["unnamed-temporary", "named-temporary"])
def test_sigterm_during_a_write_leaves_no_temporary_file(tmp_path, unnamed):
    """The named case is the fallback for file systems without O_TMPFILE."""
    target = tmp_path / "out.csv"
    target.write_bytes(b"old\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    child = subprocess.Popen([sys.executable, "-c", _WRITER.format(unnamed=unnamed), str(target)],
                             cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"writing\n"
        deadline = time.monotonic() + 30
        while not _open_in(child.pid, tmp_path) and child.poll() is None:
            assert time.monotonic() < deadline, "the writer never opened a file"
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert out == b"", "the write finished before the signal came; nothing was tested"
    assert child.returncode == -signal.SIGTERM, err.decode()
    assert others(tmp_path, "out.csv") == []
    assert target.read_bytes() == b"old\n"
