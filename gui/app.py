"""The `armdyn` command.

    armdyn [MODEL_FILE] [--floating-base] [--free-fall SECONDS | --inverse SECONDS]
           [--screenshot IMAGE] [--size WxH]
           [--video MP4_OR_GIF [--fps N] [--video-size WxH] [--video-plots]]
           [--panel inspect|lab[:TAB]|compare|presentation [--compare-with MODEL]]
    armdyn inverse ... / simulate ... / sweep ... / identify ...   (no window: core.cli)

MODEL_FILE is a robot or mechanism file (.toml) or a URDF (.urdf); --floating-base opens
a URDF with its root link on a free joint.

Without --screenshot or --video the window opens and stays (a run given with
--free-fall or --inverse starts at once). With them the run is scripted: the
window opens, the run (if any) goes to the end, --video records the run's
animation (gui.video), --screenshot saves the whole window showing the last
frame (PNG, JPEG or any other image type Qt writes, by the file's suffix), and
the program exits 0. --panel shows the Inspect, Lab or Compare dock, or presentation
mode, once the window is open (after the run of a scripted one, before its screenshot).

Refused before any work, with a one-line message on stderr and exit status 2:
usage errors, an output path that cannot be a file (named as typed: a directory,
a missing folder, an image or video type by its suffix that cannot be written) and a
model file that cannot be read (core's message names the file, the link and the
field). Started without a terminal (from a desktop launcher, stderr not a tty), the
window mode shows the model file's error in a dialog too. Qt is imported only when a
window is needed.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from armdyn.core.io.bundled import ROBOTS_DIR, bundled_models, model_path

__all__ = ["main", "image_format", "output_problem", "save_window_image", "show_panel",
           "LAB_TABS", "PANELS"]

CLI_COMMANDS = ("inverse", "simulate", "sweep", "identify")
#: Opened when no robot file is given (a bundled robot: Save asks for a new name). From
#: the bundled robots, so that an installed wheel finds it too.
DEFAULT_ROBOT = ROBOTS_DIR / "puma560_saha.toml"
#: A scripted run (--screenshot, --video) gives up after this long, s.
SCRIPT_TIMEOUT_S = 600.0
#: At exit, how long the background jobs' threads may take to end, s (one still
#: running then is logged).
EXIT_WAIT_S = 5.0
#: JPEG quality of --screenshot (Qt's scale 0-100).
JPEG_QUALITY = 92
#: What --panel shows: a bottom dock raised, or presentation mode.
PANELS = ("inspect", "lab", "compare", "sweep", "presentation")
#: The Lab's tabs for --panel lab:TAB, each the start of a tab's title in lower case
#: (gui/panels/lab_panel.py).
LAB_TABS = ("recursion", "dh", "inertia", "complexity", "power")


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise _UsageError(message)


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d{2,5})\s*[xX]\s*(\d{2,5})\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1600x1000, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0.0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text!r}")
    return value


def _frame_rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected frames per second, got {text!r}") from None
    if not 0.0 < value <= 120.0:
        raise argparse.ArgumentTypeError(f"expected 0 < fps <= 120, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="armdyn", description="ArmDyn: dynamics of robot arms and mechanisms. "
                "`armdyn inverse ...`, `armdyn simulate ...` and `armdyn identify ...` run without "
                "a window.")
    p.add_argument("robot", nargs="?", type=model_path,
                   help="robot or mechanism file (.toml), URDF (.urdf), or the short name of "
                   "a bundled model (fourbar, puma560_saha, ...) to open (default: the "
                   "bundled PUMA 560)")
    p.add_argument("--floating-base", action="store_true",
                   help="open a URDF with its root link on a free joint (a humanoid, a "
                   "quadruped: docs/floating-bases.md)")
    p.add_argument("--list-models", action="store_true",
                   help="list the bundled models' short names and exit")
    run = p.add_mutually_exclusive_group()
    run.add_argument("--free-fall", type=_seconds, metavar="SECONDS",
                     help="start a free-fall run of this length from the home pose")
    run.add_argument("--inverse", type=_seconds, metavar="SECONDS",
                     help="start an inverse-dynamics run of this length")
    p.add_argument("--screenshot", metavar="IMAGE",
                   help="save the window as an image (.png, .jpg, ...; after the run, if "
                   "any) and exit")
    p.add_argument("--size", type=_size, metavar="WxH", help="window size, e.g. 1280x800")
    p.add_argument("--video", metavar="MP4_OR_GIF",
                   help="record the run's animation as MP4 or GIF (needs --free-fall or "
                   "--inverse) and exit")
    p.add_argument("--fps", type=_frame_rate, default=None, metavar="N",
                   help="frame rate of --video (default 30; a GIF at most 50)")
    p.add_argument("--video-size", type=_size, default=None, metavar="WxH",
                   help="frame size of --video (default 1280x720)")
    p.add_argument("--video-plots", action="store_true",
                   help="put the plots beside the 3D view in --video")
    p.add_argument("--panel", type=_panel, metavar="PANEL",
                   help="show a panel once the window is open (after the run, if any): "
                   "inspect, lab (or lab:TAB, TAB one of " + ", ".join(LAB_TABS) + "), "
                   "compare, sweep or presentation")
    p.add_argument("--compare-with", type=model_path, metavar="MODEL",
                   help="with --panel compare: run B is this model file (or bundled model); "
                   "after a run, the same run of B is compared with it")
    p.add_argument("--vary", action="append", metavar="FIELD=VALUES",
                   help="with --panel sweep: a field of the grid and its values, as "
                   "`armdyn sweep --vary` takes them (angles in degrees; repeat for more "
                   "fields); after a run, the sweep runs in one process")
    return p


def _panel(text: str) -> tuple[str, str | None]:
    """(panel, Lab tab or None) of --panel: 'inspect', 'lab', 'lab:inertia', ..."""
    name, _, tab = text.strip().lower().partition(":")
    if name not in PANELS or (tab and (name != "lab" or tab not in LAB_TABS)):
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(PANELS)} (or lab:TAB, TAB one of "
            f"{', '.join(LAB_TABS)}), got {text!r}")
    return name, tab or None


# ======================================================================================
# Output paths: checked before any work, named as typed
# ======================================================================================

def image_format(path: str) -> str | None:
    """Qt's image format for `path`'s suffix (``"png"``, ``"jpg"``...), None if Qt cannot
    write that type."""
    from PySide6.QtGui import QImageWriter  # no QApplication needed

    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    writable = {bytes(f).decode().lower() for f in QImageWriter.supportedImageFormats()}
    return suffix if suffix in writable else None


def _image_suffixes() -> str:
    from PySide6.QtGui import QImageWriter

    return ", ".join(f".{bytes(f).decode()}" for f in QImageWriter.supportedImageFormats())


def output_problem(option: str, path: str) -> str | None:
    """Why `path` (as typed after `option`) cannot be written as a file, or None: a
    directory, a folder that does not exist or is not a directory."""
    if os.path.isdir(path):
        return f"{option} {path}: is a directory; give a file name"
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        what = "not a directory" if os.path.exists(folder) else "no such directory"
        return f"{option} {path}: {what}: {folder}"
    return None


def _check_outputs(args: argparse.Namespace) -> str | None:
    """The first problem of the output options, or None (before any work is done)."""
    if args.compare_with is not None and (args.panel is None or args.panel[0] != "compare"):
        return "--compare-with goes with --panel compare"
    if args.vary and (args.panel is None or args.panel[0] != "sweep"):
        return "--vary goes with --panel sweep"
    if args.screenshot is not None:
        problem = output_problem("--screenshot", args.screenshot)
        if problem is None and image_format(args.screenshot) is None:
            problem = (f"--screenshot {args.screenshot}: cannot write this image type; "
                       f"give a file name ending in one of {_image_suffixes()}")
        if problem:
            return problem
    if args.video is None:
        if args.fps is not None or args.video_size is not None or args.video_plots:
            return "--fps, --video-size and --video-plots go with --video"
        return None
    from .video import VideoSettings, video_format

    if not (args.free_fall or args.inverse):
        return "--video records a run: give --free-fall SECONDS or --inverse SECONDS"
    problem = output_problem("--video", args.video)
    if problem:
        return problem
    try:
        VideoSettings(**_video_options(args)).checked_for(video_format(args.video))
    except ValueError as e:
        return f"--video {args.video}: {e}"
    return None


def _video_options(args: argparse.Namespace) -> dict:
    """VideoSettings keywords given on the command line (defaults for the rest)."""
    options: dict = {"with_plots": bool(args.video_plots)}
    if args.fps is not None:
        options["fps"] = args.fps
    if args.video_size is not None:
        options["size"] = args.video_size
    return options


# ======================================================================================
# Entry point
# ======================================================================================

def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `armdyn`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in CLI_COMMANDS:
        from armdyn.core import cli  # no Qt on this path
        return cli.main(argv)
    try:
        args = _parser().parse_args(argv)
    except _UsageError as e:
        print(f"armdyn: {e}", file=sys.stderr)
        return 2
    if args.list_models:
        print(bundled_model_list())
        return 0
    problem = _check_outputs(args)
    if problem is not None:
        print(f"armdyn: {problem}", file=sys.stderr)
        return 2

    from armdyn.core import RobotFileError

    from armdyn.core.io.model_files import is_urdf, load_model

    if args.robot is None and DEFAULT_ROBOT.exists():
        args.robot = DEFAULT_ROBOT  # something to look at on the first start
    robot = None
    if args.floating_base and (args.robot is None or not is_urdf(args.robot)):
        print("armdyn: --floating-base goes with a URDF file (FILE.urdf)", file=sys.stderr)
        return 2
    if args.robot is not None:
        try:
            robot = load_model(args.robot, floating_base=args.floating_base)
        except RobotFileError as e:
            report_startup_error(str(e), dialog=not _scripted(args))
            return 2
    if args.compare_with is not None:  # run B's model: refused now if unreadable
        try:
            load_model(args.compare_with)
        except RobotFileError as e:
            report_startup_error(f"--compare-with: {e}", dialog=not _scripted(args))
            return 2
    if _scripted(args):
        for warning in getattr(robot, "warnings", ()):
            print(f"armdyn: warning: {warning}", file=sys.stderr)
    return _run_window(robot, args)


def bundled_model_list() -> str:
    """The bundled models, a line each: short name and title, robots then mechanisms."""
    robots, mechanisms = bundled_models()
    lines = []
    for heading, entries in (("robots", robots), ("mechanisms", mechanisms)):
        lines.append(f"{heading}:")
        lines += [f"  {path.stem:<22} {title}" for title, path in
                  sorted(entries, key=lambda e: e[1].stem)]
    return "\n".join(lines)


def _scripted(args: argparse.Namespace) -> bool:
    return args.screenshot is not None or args.video is not None


def has_terminal() -> bool:
    """True if stderr goes to a terminal (False from a desktop launcher, a pipe, a file)."""
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def _has_display() -> bool:
    """True if a window can be shown (on Linux: an X11 or Wayland display, or a Qt
    platform named by QT_QPA_PLATFORM)."""
    if not sys.platform.startswith("linux"):
        return True
    return any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY",
                                                 "QT_QPA_PLATFORM"))


def report_startup_error(message: str, *, dialog: bool) -> None:
    """An error that stops the start: one line on stderr, and, if `dialog` and nobody
    would read stderr (no terminal) but a window can be shown, a dialog."""
    print(f"armdyn: {message}", file=sys.stderr)
    if not dialog or has_terminal() or not _has_display():
        return
    from PySide6.QtWidgets import QApplication

    from .error_report import show_error

    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0]])
        app.setApplicationName("ArmDyn")
    show_error(None, "ArmDyn: cannot open the file", message)


def choose_qt_platform(environ: dict[str, str] | None = None) -> str | None:
    """Make Qt use X11 where it would pick Wayland; returns None, or why no window can
    be shown.

    The 3D view is a native X window that VTK draws into (pyvistaqt < 0.13, see
    `gui.scene.view3d`), which Qt's Wayland platform cannot host. In a Wayland session Qt is
    told to use X11 through XWayland (QT_QPA_PLATFORM=xcb). A platform set by the user
    is kept. `environ` is os.environ unless given (and changed in place).
    """
    environ = os.environ if environ is None else environ
    if not sys.platform.startswith("linux") or environ.get("QT_QPA_PLATFORM"):
        return None
    if not environ.get("WAYLAND_DISPLAY"):
        return None
    if environ.get("DISPLAY"):
        environ["QT_QPA_PLATFORM"] = "xcb"
        return None
    return ("the 3D view needs X11, and this Wayland session has no XWayland (DISPLAY "
            "is not set): enable XWayland, or start ArmDyn under X11")


def _import_before_qt() -> None:
    """Import the large libraries of the window that do not use Qt before PySide6.

    Once PySide6.QtCore is imported, its import hook reads the source of every module
    imported after it (looking for ``from __feature__ import``): about half a
    millisecond a module, 0.2-0.3 s for pyvista with VTK's and matplotlib's Python
    modules, as much for numba's compiler, which the first kernel loaded from the cache
    (or compiled) would load with scipy.linalg. Modules imported before PySide6 are not read.
    """
    import importlib

    importlib.import_module("pyvista.plotting")  # with VTK and matplotlib
    from armdyn.core import warmup

    warmup.load_compiler()  # with the core's algorithms and numba


def _run_window(robot, args: argparse.Namespace) -> int:
    _import_before_qt()
    from PySide6.QtCore import QCoreApplication, QTimer
    from PySide6.QtWidgets import QApplication

    from armdyn.core.io.model_files import is_urdf

    from .error_report import install_excepthook, setup_logging
    from .jobs.job import wait_for_jobs
    from .main_window import MainWindow
    from .startup import REST_AFTER_WINDOW_MS, warm_up_kernels, window_shown
    from .look.style import apply_style

    QCoreApplication.setOrganizationName("ArmDyn")
    QCoreApplication.setApplicationName("ArmDyn")
    if QApplication.instance() is None:
        problem = choose_qt_platform()
        if problem is not None:
            report_startup_error(problem, dialog=False)
            return 2
    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_style(app)
    log_path = setup_logging()
    scripted = _scripted(args)
    previous_hook = install_excepthook(log_path, interactive=not scripted)
    try:
        # numba compiles the dynamics core on first use: what the window needs now, off
        # the GUI thread (a splash says so when it takes long), the rest in the
        # background while the window is in use (all of it first for a scripted run).
        error = warm_up_kernels(splash=not scripted, report_errors=not scripted,
                                everything_first=scripted, model=robot,
                                rest_after_window=True)
        if error is not None and scripted:
            print(f"armdyn: warning: the dynamics kernels could not be prepared: {error}",
                  file=sys.stderr)
        window = MainWindow(robot, args.robot, restore_layout=not scripted and not args.size)
        if args.size:
            window.resize(*args.size)
        if args.robot is not None and not scripted:
            window.files.recent.add(args.robot)
            if is_urdf(args.robot):
                window.files.recent.set_floating_base(args.robot, args.floating_base)
        window.show()
        QTimer.singleShot(REST_AFTER_WINDOW_MS, window_shown)  # then the other kernels
        if scripted:
            QTimer.singleShot(0, lambda: _scripted_run(window, args))
        else:
            if robot is not None and robot.warnings:
                window.files.report_warnings(f"Opened {args.robot.name} with warnings",
                                             robot.warnings)
            if args.free_fall or args.inverse:
                QTimer.singleShot(0, lambda: _start_run(window, args))
            if args.panel is not None:
                QTimer.singleShot(0, lambda: show_panel(window, *args.panel,
                                                        compare_with=args.compare_with,
                                                        vary=args.vary))
        status = app.exec()
        window.shutdown()
        window.deleteLater()
        # the one wait for background jobs: bounded, at exit (gui/jobs/job.py)
        wait_for_jobs(EXIT_WAIT_S)
        return status
    finally:
        sys.excepthook = previous_hook


def _start_run(window, args: argparse.Namespace) -> None:
    """Start the run asked for on the command line (the Run panel's)."""
    if args.free_fall:
        window.run_panel.start_free_fall(args.free_fall)
    else:
        window.run_panel.start_inverse(args.inverse)


def _scripted_run(window, args: argparse.Namespace) -> None:
    """--screenshot / --video: run (if asked), record, show the last frame, save the
    window, quit."""
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    from .jobs.runs import RunOutcome

    status = 0
    if args.free_fall or args.inverse:
        loop = QEventLoop()
        outcome: dict[str, str] = {}

        def ended(result) -> None:
            if result.outcome is RunOutcome.FAILED:
                outcome.setdefault("error", result.message)
            loop.quit()

        window.session.run_ended.connect(ended)
        timer = QTimer()
        timer.setSingleShot(True)
        timer.timeout.connect(lambda: (outcome.setdefault("error", "timed out"), loop.quit()))
        timer.start(int(SCRIPT_TIMEOUT_S * 1000))
        _start_run(window, args)
        loop.exec()
        timer.stop()
        window.session.run_ended.disconnect(ended)
        window.plots.finish_fitting()  # the run's plots are fitted one per turn: all now
        if "error" in outcome:
            print(f"armdyn: the run failed: {outcome['error']}", file=sys.stderr)
            status = 1
        if args.video is not None:
            status = max(status, _record_video(window, args))
        window.show_last_frame()
        window.view3d.fit()  # the picture shows where the run ended
    if args.panel is not None:
        problem = show_panel(window, *args.panel, compare_with=args.compare_with,
                             vary=args.vary, run=bool(args.free_fall or args.inverse),
                             wait=True)
        if problem is not None:
            print(f"armdyn: --panel {args.panel[0]}: {problem}", file=sys.stderr)
            status = max(status, 1)

    if args.screenshot is not None:
        problem = save_window_image(window, args.screenshot)
        if problem is not None:
            print(f"armdyn: {problem}", file=sys.stderr)
            status = 1
    window.document.undo_stack.setClean()  # nothing to ask on the way out
    window.close()
    QCoreApplication.exit(status)


def show_panel(window, name: str, tab: str | None = None, *, compare_with=None,
               vary=None, run: bool = False, wait: bool = False) -> str | None:
    """--panel: show the Inspect, Lab (its tab `tab`, a LAB_TABS key), Compare or Sweep
    dock in front of the bottom docks, or enter presentation mode. Compare with
    `compare_with` (a model file) sets it as run B; Sweep with `vary` (FIELD=VALUES
    texts) adds those axes. After a window run (`run`) the comparison or the sweep
    (one process) runs, and with `wait` this returns when it has ended (the event loop
    turning meanwhile); a sweep of two fields or more then shows its heat map of the
    joint with the largest peak torque. Returns None, or what went wrong."""
    from PySide6.QtWidgets import QApplication

    if name == "inspect":
        window.inspect_dock.show()
        window.inspect_dock.raise_()
    elif name == "lab":
        window.lab_action.trigger()
        window.lab_dock.raise_()
        if tab is not None:
            tabs = window.lab.tabs
            index = next((k for k in range(tabs.count())
                          if tabs.tabText(k).lower().startswith(tab)), None)
            if index is None:
                return f"the Lab has no tab {tab!r}"
            tabs.setCurrentIndex(index)
    elif name == "compare":
        panel = window.compare
        panel.action.trigger()
        panel.dock.raise_()
        if compare_with is not None and not panel.set_file(compare_with):
            return f"cannot compare with {compare_with}: {panel.message()}"
        if compare_with is not None and run:
            if not panel.compare():
                return panel.message()
            if wait:
                problem = _wait_for(panel, "the comparison")
                if problem is not None:
                    return problem
    elif name == "sweep":
        panel = window.sweep
        panel.action.trigger()
        panel.dock.raise_()
        for text in vary or ():
            field, _, values = text.partition("=")
            if not panel.setup.add_axis(field, values):
                return panel.message()
        if vary and run:
            panel.setup.set_where("one")
            if not panel.start():
                return panel.message()
            if wait:
                problem = _wait_for(panel, "the sweep")
                if problem is not None:
                    return problem
                result = panel.result
                if result is None or result.failed == result.size:
                    return panel.message() or panel.status_text()
                if len(result.plan.axes) >= 2:
                    panel.results.show_heat_map(result.worst_joint())
    elif name == "presentation":
        size = window.size()
        window.presentation.set_active(True)
        if wait:  # scripted: the window's size, not the screen's
            window.showNormal()
            window.resize(size)
    for _ in range(3):  # the docks' layout, then a 0 ms timer's settling
        QApplication.processEvents()
    return None


def _wait_for(panel, what: str) -> str | None:
    """Turn the event loop until `panel` (Compare's, Sweep's: ``finished``,
    ``is_running``, ``cancel``) has ended, at most SCRIPT_TIMEOUT_S; None, or that
    `what` timed out (then cancelled)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    panel.finished.connect(loop.quit)
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    timer.start(int(SCRIPT_TIMEOUT_S * 1000))
    if panel.is_running():
        loop.exec()
    timer.stop()
    panel.finished.disconnect(loop.quit)
    if panel.is_running():
        panel.cancel()
        return f"{what} timed out"
    return None


def _record_video(window, args: argparse.Namespace) -> int:
    """--video: record the window's last run; the exit status (0, or 1 with a message)."""
    from .video import VideoSettings, record_window_video

    if window.trajectory is None or len(window.trajectory) == 0:
        print(f"armdyn: --video {args.video}: the run gave no samples to record",
              file=sys.stderr)
        return 1
    problem = record_window_video(window, Path(args.video), VideoSettings(**_video_options(args)),
                                  timeout_s=SCRIPT_TIMEOUT_S)
    if problem is not None:
        print(f"armdyn: --video {args.video}: {problem}", file=sys.stderr)
        return 1
    return 0


def save_window_image(window, path: str) -> str | None:
    """Grab the whole window (3D view included) and write it to `path` atomically, in the
    image type of its suffix (PNG, JPEG...). Returns None, or why it could not be
    written (naming `path` as given)."""
    from PySide6.QtCore import QBuffer, QIODevice
    from PySide6.QtWidgets import QApplication

    from armdyn.core.io.atomic import write_atomically

    fmt = image_format(path)
    if fmt is None:
        return f"{path}: cannot write this image type"
    window.plots.finish_fitting()  # a run's plots that wait for their ranges
    for _ in range(3):  # layout, dock sizes (a 0 ms timer), then paint
        QApplication.processEvents()
    window.view3d.render_now()
    QApplication.processEvents()
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    quality = JPEG_QUALITY if fmt in ("jpg", "jpeg", "jfif") else -1
    if not window.image().save(buffer, fmt, quality):
        return f"cannot write {path}: Qt could not encode the image as {fmt}"
    try:
        write_atomically(path, bytes(buffer.data()))
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    return None


if __name__ == "__main__":
    sys.exit(main())
