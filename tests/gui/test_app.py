"""The `armdyn` command: scripted screenshot runs, bad files, and the Qt-free CLI path."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from PySide6.QtGui import QImage

from gui_helpers import PUMA, ROOT, armdyn

pytestmark = pytest.mark.gui


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
    result = subprocess.run([sys.executable, "-m", "armdyn.gui.app", str(bad), "--screenshot",
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


#: What opening the window must not import (identification, sweeps, measured motions and
#: the parts of scipy only they use): a start that loads them is seconds slower.
NOT_AT_START = ("armdyn.core.sim.identification", "armdyn.core.sim.excitation",
                "armdyn.core.sim.measured", "armdyn.core.sweeps.sweep", "scipy.optimize",
                "scipy.signal", "scipy.stats", "scipy.integrate", "scipy.spatial")

WINDOW_START = r"""
import dataclasses, gc, json, sys
from armdyn.gui import app as armdyn_app
armdyn_app._import_before_qt()  # as the window's start does
from PySide6.QtWidgets import QApplication
from armdyn.core.io.model_files import load_model
from armdyn.gui.main_window import MainWindow
from armdyn.gui.jobs.runs import RunKind
from armdyn.gui.startup import warm_up_runs
from armdyn.core import warm_up_display

def signatures():
    from numba.core.registry import CPUDispatcher
    return {{(d.py_func.__module__, d.py_func.__qualname__, str(s))
             for d in gc.get_objects() if isinstance(d, CPUDispatcher) for s in d.signatures}}

app = QApplication([])
robot = load_model({puma!r})
warm_up_display()
display = signatures()
window = MainWindow(robot, None, restore_layout=False)
window.show()
app.processEvents()
loaded = [m for m in {watch!r} if m in sys.modules]
window.session.set_pose(robot.q_home + 0.3)  # a pose slider moved
app.processEvents()
beyond_display = sorted(map(str, signatures() - display))

warm_up_runs(robot)
prepared = signatures()
panel, fall = window.run_panel, window.run_panel.free_fall
inverse = dataclasses.replace(panel.spec(), duration=0.05)  # the Run button's runs
falling = dataclasses.replace(inverse, kind=RunKind.FREE_FALL, damping=fall.damping(),
                              method=fall.fall_method(), stops=fall.stops())
assert panel.spec().kind is RunKind.INVERSE  # the tab a window opens on
for run in (inverse, falling):
    for _ in run.chunks():
        pass
print(json.dumps({{"loaded": loaded, "new": sorted(map(str, signatures() - prepared)),
                  "prepared": len(prepared), "beyond_display": beyond_display}}))
window.close()
"""


def test_the_window_starts_without_identification_and_warms_up_its_runs_first():
    """The window opens on the PUMA without the modules it does not use and, built and
    posed, without kernels other than warm_up_display's (all a first start compiles
    before it shows), and the runs the background warm-up makes first are the Run
    button's: the Run panel's own inverse run and free fall afterwards need no kernel
    (no argument types) that it did not prepare."""
    result = subprocess.run([sys.executable, "-c",
                             WINDOW_START.format(puma=str(PUMA), watch=NOT_AT_START)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["loaded"] == []
    assert out["beyond_display"] == []  # the window waits for warm_up_display's alone
    assert out["prepared"] > 5 and out["new"] == []


def test_usage_errors_are_one_line():
    result = subprocess.run([sys.executable, "-m", "armdyn.gui.app", "--size", "huge"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("armdyn: argument --size")


def test_unexpected_errors_go_to_a_dialog_and_the_log(qapp, monkeypatch, caplog, capsys):
    import armdyn.gui.error_report as er
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

    import armdyn.core as core
    from armdyn.gui import startup

    calls = []
    monkeypatch.setattr(core, "warm_up_display",
                        lambda: (calls.append(threading.current_thread()), time.sleep(0.5)))
    rest = threading.Event()
    monkeypatch.setattr(core, "warm_up", lambda: (calls.append(threading.current_thread()),
                                                  rest.wait(5)))
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
    assert len(ticks) >= 10  # the event loop ran during the 0.5 s warm-up
    assert splash_seen  # longer than SPLASH_DELAY_S: the splash says what is going on
    # the rest goes on in the background after warm_up_kernels returned
    background = startup.background_warm_up()
    assert background is not None and background.is_alive()
    rest.set()
    background.join(5)
    assert len(calls) == 2 and threading.main_thread() not in calls
    assert calls[1] is background


def test_on_a_cold_cache_the_other_kernels_wait_until_the_window_has_shown(qapp, monkeypatch):
    import threading

    import armdyn.core as core
    from armdyn.gui import startup

    rest = threading.Event()
    import armdyn.core.warmup as warmup
    monkeypatch.setattr(startup, "cache_is_cold", lambda: True)
    monkeypatch.setattr(warmup, "warm_up_apart", lambda claims: None)  # (no second compile)
    monkeypatch.setattr(core, "warm_up_display", lambda: None)
    monkeypatch.setattr(core, "warm_up", rest.set)
    assert startup.warm_up_kernels(splash=False, rest_after_window=True) is None
    background = startup.background_warm_up()
    assert not rest.wait(0.3) and background.is_alive()  # held back
    startup.window_shown()
    assert rest.wait(5)
    background.join(5)
    assert not background.is_alive()


def test_from_a_warm_cache_the_other_kernels_load_at_once(qapp, monkeypatch):
    """Loading every kernel takes ~0.1 s from a warm cache: no wait for the window."""
    import threading

    import armdyn.core as core
    from armdyn.gui import startup

    rest = threading.Event()
    monkeypatch.setattr(startup, "cache_is_cold", lambda: False)
    monkeypatch.setattr(core, "warm_up_display", lambda: None)
    monkeypatch.setattr(core, "warm_up", rest.set)
    assert startup.warm_up_kernels(splash=False, rest_after_window=True) is None
    assert rest.wait(5)  # window_shown() not called
    startup.background_warm_up().join(5)


def test_a_cold_start_shares_the_rest_with_a_second_process(qapp, monkeypatch):
    """On a fresh cache, the other kernels compile in a process of their own from before
    the window is built (core.warmup.warm_up_apart); once the window has shown, this one
    takes the steps that process has not claimed in a folder of their own (warm_up's
    claims); when it is done, the other process is ended and the folder removed."""
    import os
    import subprocess
    import sys
    import threading

    import armdyn.core as core
    import armdyn.core.warmup as warmup
    from armdyn.gui import startup

    processes, calls, done = [], [], threading.Event()

    def apart(claims):
        processes.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        return processes[-1]

    def warm_up(**options):
        calls.append((options, os.path.isdir(options["claims"]), processes[0].poll()))
        done.set()

    monkeypatch.setattr(startup, "cache_is_cold", lambda: True)
    monkeypatch.setattr(core, "warm_up_display", lambda: None)
    monkeypatch.setattr(core, "warm_up", warm_up)
    monkeypatch.setattr(warmup, "warm_up_apart", apart)
    assert startup.warm_up_kernels(splash=False, rest_after_window=True) is None
    background = startup.background_warm_up()
    assert len(processes) == 1 and processes[0].poll() is None  # started at once
    assert not done.wait(0.3)  # this process's share waits until the window has shown
    startup.window_shown()
    assert done.wait(10)
    background.join(10)
    (options, folder_was_there, running), = calls
    assert options["other"] is processes[0] and folder_was_there
    assert running is None  # the other process ran meanwhile
    assert processes[0].poll() is not None  # and was ended
    assert not os.path.exists(options["claims"])


def test_a_scripted_run_warms_up_everything_first(qapp, monkeypatch):
    import armdyn.core as core
    from armdyn.gui import startup

    calls = []
    monkeypatch.setattr(core, "warm_up_display", lambda: calls.append("display"))
    monkeypatch.setattr(core, "warm_up", lambda: calls.append("all"))
    assert startup.warm_up_kernels(splash=False, everything_first=True) is None
    assert calls == ["all"]


def test_a_quick_warm_up_shows_no_splash_and_errors_are_reported(qapp, monkeypatch):
    import armdyn.core as core
    from armdyn.gui import startup

    shown = []
    monkeypatch.setattr(startup, "_splash_window", lambda: shown.append("splash"))
    monkeypatch.setattr(startup, "_show_error", shown.append)

    def broken():
        raise core.ArmDynError("numba cache is unwritable")

    monkeypatch.setattr(core, "warm_up_display", broken)
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


def test_a_scripted_inverse_run_of_the_car_steers_it(tmp_path):
    """A floating mechanism with loops: its actuated steering column turns, the car
    follows (core's hybrid dynamics with loops); the run finishes and is shown."""
    png = tmp_path / "car.png"
    result = armdyn("car_jalon", "--inverse", "0.3", "--screenshot", str(png),
                    "--size", "1280x800")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "failed" not in result.stderr
    assert QImage(str(png)).size().width() == 1280


# ----- the default robot, image types, output paths, errors without a terminal ---------

def test_the_default_robot_is_a_bundled_one():
    from armdyn.gui import app
    from armdyn.core.io.bundled import ROBOTS_DIR, is_bundled

    assert app.DEFAULT_ROBOT.parent == ROBOTS_DIR  # an installed wheel has it in gui/robots
    assert app.DEFAULT_ROBOT.exists() and is_bundled(app.DEFAULT_ROBOT)


def test_a_jpeg_screenshot(tmp_path):
    jpg = tmp_path / "shot.jpg"
    result = armdyn(str(PUMA), "--screenshot", str(jpg), "--size", "1000x700")
    assert result.returncode == 0, result.stderr
    assert jpg.read_bytes()[:3] == b"\xff\xd8\xff"  # a JPEG, not a PNG named .jpg
    image = QImage(str(jpg))
    assert (image.width(), image.height()) == (1000, 700)


@pytest.mark.parametrize("given, expected", [
    ("shot.xyz", "--screenshot shot.xyz: cannot write this image type; give a file name "
                 "ending in one of"),
    ("shot", "--screenshot shot: cannot write this image type"),
    ("no_such_folder/shot.png", "--screenshot no_such_folder/shot.png: no such directory: "
                                "no_such_folder"),
    (".", "--screenshot .: is a directory; give a file name"),
    ("out.avi", "--video out.avi: cannot record a video of type '.avi'"),
], ids=["unknown-type", "no-suffix", "missing-folder", "directory", "video-type"])
def test_output_paths_are_refused_before_any_work_as_typed(given, expected, tmp_path):
    option = "--video" if given.endswith(".avi") else "--screenshot"
    extra = ["--free-fall", "1"] if option == "--video" else []
    # no display and a file that does not exist: only the output check runs
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = subprocess.run([sys.executable, "-m", "armdyn.gui.app", "missing.toml", *extra, option,
                             given], cwd=tmp_path, env=env | {"PYTHONPATH": str(ROOT)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"armdyn: {expected}"), lines
    assert not (tmp_path / given).is_file()


def test_a_bad_file_without_a_terminal_is_shown_in_a_dialog(qapp, tmp_path, capsys):
    """From a desktop launcher nobody reads stderr: the message also goes to a dialog.
    (pytest's captured stderr is not a terminal, as a launcher's is not.)"""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from armdyn.gui import app

    bad = tmp_path / "bad.toml"
    bad.write_text(PUMA.read_text().replace("mass = 15.761", "mass = -1"))
    shown: list[str] = []

    def read_and_close() -> None:
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(20, read_and_close)
            return
        shown.append(box.text())
        box.done(0)

    QTimer.singleShot(0, read_and_close)
    assert not app.has_terminal()
    assert app.main([str(bad)]) == 2
    assert len(shown) == 1 and "link 2 ('shoulder')" in shown[0] and "'mass'" in shown[0]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0] == f"armdyn: {shown[0]}"


@pytest.mark.parametrize("environ, platform, problem", [
    ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "xcb", None),
    ({"WAYLAND_DISPLAY": "wayland-0"}, None, "no XWayland"),
    ({"WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "offscreen"}, "offscreen", None),
    ({"DISPLAY": ":0"}, None, None),
], ids=["xwayland", "wayland-only", "platform-given", "x11"])
def test_a_wayland_session_shows_the_window_through_xwayland(environ, platform, problem,
                                                             monkeypatch):
    """VTK draws the 3D view into a native X window, which Qt's Wayland platform cannot
    host (pyvistaqt < 0.13 died there with an X error)."""
    from armdyn.gui.app import choose_qt_platform

    monkeypatch.setattr(sys, "platform", "linux")
    said = choose_qt_platform(environ)
    assert environ.get("QT_QPA_PLATFORM") == platform
    if problem is None:
        assert said is None
    else:
        assert problem in said


@pytest.mark.parametrize("cold", [True, False])
def test_the_splash_says_whether_it_compiles(qapp, monkeypatch, cold):
    """A first start (numba's cache empty) says it compiles, once, and for about how
    long; a later one that still takes a moment only loads."""
    import threading
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QLabel

    import armdyn.core as core
    from armdyn.gui import startup

    monkeypatch.setattr(startup, "cache_is_cold", lambda: cold)
    monkeypatch.setattr(core, "warm_up_display", lambda: time.sleep(0.6))
    rest = threading.Event()
    monkeypatch.setattr(core, "warm_up", lambda: rest.wait(5))
    texts: list[str] = []

    def look():
        texts.extend(label.text() for w in QApplication.topLevelWidgets()
                     if w.objectName() == "warmUpSplash" and w.isVisible()
                     for label in w.findChildren(QLabel))

    timer = QTimer()
    timer.setInterval(50)
    timer.timeout.connect(look)
    timer.start()
    try:
        assert startup.warm_up_kernels() is None
    finally:
        timer.stop()
        rest.set()
    assert texts
    said = " ".join(texts)
    if cold:
        assert "Compiling" in said and "first start" in said
        assert startup.FIRST_COMPILE_TIME in said
    else:
        assert "Loading" in said and "Compiling" not in said
