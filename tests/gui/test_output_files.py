"""Issue #20: every output of the window goes through the one writer (core.io.atomic):
videos, plot images, the 3D view. A device, a pipe or a symbolic link named like the
video keeps what it is; a user's file named like the encoder's old temporary file is
not touched; a read-only file is refused; a full disk is an error (for MP4 too, whose
failure ffmpeg reports only in its exit status) with no traceback, and the old file
stays; a plot image that cannot be written is an error, not a count of saved images."""
from __future__ import annotations

import os
import stat
import subprocess
import threading
import uuid

import imageio.v3 as iio
import pytest

from armdyn.gui.video import VideoRecorder, VideoSettings

from gui_helpers import PUMA, armdyn

pytestmark = pytest.mark.gui

SMALL = VideoSettings(fps=10, size=(160, 120))


@pytest.fixture
def fallen(make_window, qtbot):
    """A window with the PUMA after a 0.5 s free fall."""
    window = make_window(PUMA, size=(1100, 720))
    with qtbot.waitSignal(window.run_panel.finished, timeout=60000):
        window.run_panel.start_free_fall(0.5)
    return window


def record(window, path, qtbot, settings: VideoSettings = SMALL) -> list[tuple]:
    """Record the window's run to `path`; the recorder's outcome signals."""
    recorder = VideoRecorder(window.view3d, window.trajectory, path, settings)
    events: list[tuple] = []
    recorder.finished.connect(lambda p: events.append(("finished", p)))
    recorder.failed.connect(lambda message: events.append(("failed", message)))
    recorder.start()
    qtbot.waitUntil(lambda: recorder.state == "done", timeout=120000)
    recorder.deleteLater()
    return events


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_a_named_pipe_gets_the_video_and_stays_a_pipe(fallen, qtbot, tmp_path, suffix):
    fifo = tmp_path / f"out{suffix}"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert record(fallen, fifo, qtbot)[-1][0] == "finished"
    reader.join(30)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert len(iio.imread(got[0], index=None, extension=suffix)) == 6  # 0.5 s at 10 fps
    assert os.listdir(tmp_path) == [fifo.name]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_a_device_named_like_a_video_stays_a_device(fallen, qtbot, tmp_path):
    device = tmp_path / "null.mp4"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    assert record(fallen, device, qtbot)[-1][0] == "finished"
    assert stat.S_ISCHR(device.lstat().st_mode)
    assert os.listdir(tmp_path) == ["null.mp4"]


def test_a_link_stays_a_link_and_a_users_partial_file_is_left_alone(fallen, qtbot, tmp_path):
    real = tmp_path / "videos" / "fall.mp4"
    real.parent.mkdir()
    real.write_bytes(b"an older video")
    users = real.parent / ".fall.partial.mp4"  # the name the encoder used to take
    users.write_bytes(b"the user's own file")
    link = tmp_path / "fall.mp4"
    link.symlink_to(real)
    assert record(fallen, link, qtbot)[-1][0] == "finished"
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(iio.imread(real, index=None)) == 6
    assert users.read_bytes() == b"the user's own file"
    assert sorted(os.listdir(real.parent)) == [".fall.partial.mp4", "fall.mp4"]


def test_a_read_only_video_is_refused_and_stays(fallen, tmp_path):
    target = tmp_path / "fall.mp4"
    target.write_bytes(b"an older video")
    target.chmod(0o444)
    with pytest.raises(PermissionError):
        VideoRecorder(fallen.view3d, fallen.trajectory, target, SMALL)
    assert target.read_bytes() == b"an older video"


@pytest.fixture
def full_disk(tmp_path):
    """A 16 KiB file system (tmpfs), full after a few frames; skipped where it cannot be
    mounted (not root)."""
    folder = tmp_path / f"full-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(folder)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    yield folder
    subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_a_full_disk_is_an_error_and_the_old_video_stays(full_disk, suffix):
    target = full_disk / f"fall{suffix}"
    target.write_bytes(b"old")
    result = armdyn(str(PUMA), "--inverse", "2", "--video", str(target),
                    "--video-size", "320x240")
    assert result.returncode == 1, result.stderr
    assert "No space left on device" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert target.read_bytes() == b"old"
    assert os.listdir(full_disk) == [target.name]


def test_a_plot_image_that_cannot_be_written_is_an_error(fallen, tmp_path, monkeypatch):
    folder = tmp_path / "plots"
    (folder / "joint_angles.png").mkdir(parents=True)  # in the way of one image
    (folder / "energy.svg").write_bytes(b"old")
    errors = []
    monkeypatch.setattr(fallen.files, "ask_directory", lambda title: folder)
    monkeypatch.setattr(fallen.files, "error", lambda title, message, **_: errors.append(
        (title, message)))
    assert not fallen.export_plot_images()
    assert errors and "joint_angles.png" in errors[0][1]
    assert "Saved" not in fallen.statusBar().currentMessage()


def test_the_3d_view_png_is_written_by_the_one_writer(fallen, tmp_path, monkeypatch):
    target = tmp_path / "view.png"
    target.write_bytes(b"old")
    target.chmod(0o444)
    errors = []
    monkeypatch.setattr(fallen.files, "ask_save_path", lambda *a: target)
    monkeypatch.setattr(fallen.files, "error", lambda title, message, **_: errors.append(message))
    assert not fallen.export_view_png()
    assert errors and str(target) in errors[0]
    assert target.read_bytes() == b"old"
    target.chmod(0o644)
    assert fallen.export_view_png()
    assert iio.imread(target).shape[2] in (3, 4)
    assert os.listdir(tmp_path) == ["view.png"]
