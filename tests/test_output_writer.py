"""Issue #20: one writer for every output (core.io.atomic). A read-only file is refused
and stays; a writer that needs a path of its own (the video encoder) writes a hidden
temporary file that `replace_with_file` puts at the target by the same rules as
`write_atomically`: a regular file replaced keeping its bits, a symbolic link kept, a
named pipe or a device written through, never replaced."""
from __future__ import annotations

import errno
import os
import stat
import threading

import pytest

from armdyn.core.io.atomic import (check_target, replace_with_file, temporary_path,
                                   write_atomically)


def test_a_read_only_file_is_refused_and_stays(tmp_path):
    target = tmp_path / "out.csv"
    target.write_bytes(b"old")
    target.chmod(0o444)
    with pytest.raises(PermissionError) as info:
        write_atomically(target, b"new")
    assert info.value.filename == str(target)
    with pytest.raises(PermissionError):
        check_target(target)
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["out.csv"]


def test_a_temporary_file_is_hidden_beside_the_real_file_and_never_a_users_name(tmp_path):
    folder = tmp_path / "real"
    folder.mkdir()
    (folder / "out.mp4").write_bytes(b"old")
    (folder / ".out.partial.mp4").write_bytes(b"the user's")
    link = tmp_path / "link.mp4"
    link.symlink_to(folder / "out.mp4")
    tmp = temporary_path(link)
    assert os.path.dirname(tmp) == str(folder)
    assert os.path.basename(tmp).startswith(".") and os.path.getsize(tmp) == 0
    replace_with_file(link, tmp)  # an empty video, for the test
    assert link.is_symlink() and (folder / "out.mp4").read_bytes() == b""
    assert (folder / ".out.partial.mp4").read_bytes() == b"the user's"
    assert not os.path.exists(tmp)


def test_a_finished_file_replaces_a_regular_file_keeping_its_bits(tmp_path):
    target = tmp_path / "out.gif"
    target.write_bytes(b"old")
    target.chmod(0o640)
    tmp = temporary_path(target)
    with open(tmp, "wb") as f:
        f.write(b"new")
    replace_with_file(target, tmp)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["out.gif"]


def test_a_finished_file_goes_through_a_named_pipe_which_stays_a_pipe(tmp_path):
    fifo = tmp_path / "out.mp4"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    tmp = temporary_path(fifo)
    assert os.path.dirname(tmp) != str(tmp_path)  # not beside a pipe
    with open(tmp, "wb") as f:
        f.write(b"x" * 300_000)
    replace_with_file(fifo, tmp)
    reader.join(10)
    assert got == [b"x" * 300_000]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert not os.path.exists(tmp)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_a_finished_file_goes_into_a_device_which_stays_a_device(tmp_path):
    device = tmp_path / "null.mp4"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    tmp = temporary_path(device)
    with open(tmp, "wb") as f:
        f.write(b"frames")
    replace_with_file(device, tmp)
    assert stat.S_ISCHR(device.lstat().st_mode)
    assert not os.path.exists(tmp)


def test_a_refused_target_removes_the_temporary_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "out.mp4"
    target.write_bytes(b"old")
    tmp = temporary_path(target)
    target.chmod(0o444)  # made read-only while the video was recorded
    with pytest.raises(PermissionError) as info:
        replace_with_file(target, tmp)
    assert info.value.filename == str(target) and info.value.errno == errno.EACCES
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.mp4"]
