"""The `armdyn` command: scripted screenshot runs, bad files, and the Qt-free CLI path."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from PySide6.QtGui import QImage

from gui_helpers import PUMA, ROOT

pytestmark = pytest.mark.gui


def armdyn(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run `python -m gui.app ARGS` under its own Xvfb (xvfb-run -a)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM")}
    env["QT_QPA_PLATFORM"] = "xcb"
    command = [sys.executable, "-m", "gui.app", *args]
    if shutil.which("xvfb-run") is None:
        pytest.skip("xvfb-run is not installed")
    command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", *command]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_free_fall_screenshot_run(tmp_path):
    png = tmp_path / "shot.png"
    result = armdyn(str(PUMA), "--free-fall", "0.3", "--screenshot", str(png),
                    "--size", "1280x800")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    image = QImage(str(png))
    assert (image.width(), image.height()) == (1280, 800)
    colours = {image.pixelColor(x, y).name() for x in range(0, 1280, 16)
               for y in range(0, 800, 16)}
    assert len(colours) > 50


def test_a_bad_robot_file_prints_one_line_and_exits_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(PUMA.read_text().replace("mass = 15.761", "mass = -1"))
    result = subprocess.run([sys.executable, "-m", "gui.app", str(bad), "--screenshot",
                             str(tmp_path / "x.png")], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "link 2 ('shoulder')" in lines[0] and "'mass'" in lines[0]
    assert not (tmp_path / "x.png").exists()


def test_command_line_modes_do_not_import_qt(tmp_path):
    out = tmp_path / "out.csv"
    code = ("import sys, gui.app\n"
            f"status = gui.app.main(['simulate', {str(PUMA)!r}, '-T', '0.05',"
            f" '-o', {str(out)!r}])\n"
            "assert not any(m.startswith('PySide6') for m in sys.modules), 'Qt was imported'\n"
            "sys.exit(status)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert out.read_text().count("\n") > 3


def test_usage_errors_are_one_line():
    result = subprocess.run([sys.executable, "-m", "gui.app", "--size", "huge"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("armdyn: argument --size")


def test_unexpected_errors_go_to_a_dialog_and_the_log(qapp, monkeypatch, caplog, capsys):
    import gui.error_report as er

    shown = []
    monkeypatch.setattr(er, "show_error", lambda parent, title, message, details="":
                        shown.append((message, details)))
    previous = er.install_excepthook(None, interactive=True)
    try:
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            sys.excepthook(*sys.exc_info())
    finally:
        sys.excepthook = previous
    assert shown and "RuntimeError: boom" in shown[0][0]
    assert "Traceback" in shown[0][1]  # behind the dialog's details button
    assert "boom" in caplog.text
    assert "Traceback" not in capsys.readouterr().err


def test_kernels_warm_up_off_the_gui_thread_while_events_run(qapp, monkeypatch):
    import threading
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    import core
    from gui import startup

    calls = []
    monkeypatch.setattr(core, "warm_up", lambda: (calls.append(threading.current_thread()),
                                                  time.sleep(0.5)))
    ticks = []
    splash_seen = []

    def tick():
        ticks.append(1)
        splash_seen.extend(w for w in QApplication.topLevelWidgets()
                           if w.objectName() == "warmUpSplash" and w.isVisible())

    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(tick)
    timer.start()
    try:
        assert startup.warm_up_kernels() is None
    finally:
        timer.stop()
    assert len(calls) == 1 and calls[0] is not threading.main_thread()
    assert len(ticks) >= 10  # the event loop ran during the 0.5 s warm-up
    assert splash_seen  # longer than SPLASH_DELAY_S: the splash says what is going on


def test_a_quick_warm_up_shows_no_splash_and_errors_are_reported(qapp, monkeypatch):
    import core
    from gui import startup

    shown = []
    monkeypatch.setattr(startup, "_splash_window", lambda: shown.append("splash"))
    monkeypatch.setattr(startup, "_show_error", shown.append)

    def broken():
        raise core.ArmDynError("numba cache is unwritable")

    monkeypatch.setattr(core, "warm_up", broken)
    assert startup.warm_up_kernels() == "numba cache is unwritable"
    assert shown == ["numba cache is unwritable"]  # a dialog, no splash; the app goes on


@pytest.mark.parametrize("run", [("--free-fall", "0.3"), ("--inverse", "0.5")],
                         ids=["free-fall", "inverse"])
def test_scripted_runs_of_a_mechanism_file(tmp_path, run):
    png = tmp_path / "mechanism.png"
    fivebar = ROOT / "robots" / "fivebar_saha.toml"
    result = armdyn(str(fivebar), *run, "--screenshot", str(png), "--size", "1280x800")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "failed" not in result.stderr
    image = QImage(str(png))
    assert (image.width(), image.height()) == (1280, 800)
