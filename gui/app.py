"""The `armdyn` command.

    armdyn [ROBOT_FILE] [--free-fall SECONDS | --inverse SECONDS]
           [--screenshot PNG] [--size WxH]
    armdyn inverse ...  /  armdyn simulate ...     (command line, no window: core.cli)

Without --screenshot the window opens and stays (a run given with --free-fall
or --inverse starts at once). With --screenshot the window opens, the run (if
any) goes to the end, the last frame is shown, the whole window is saved as
a PNG and the program exits 0.

A robot file that cannot be read prints core's one-line message (it names the
file, the link and the field) to stderr and exits 2. Qt is imported only when
a window is needed.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

CLI_COMMANDS = ("inverse", "simulate")
#: Opened when no robot file is given (a bundled robot: Save asks for a new name).
DEFAULT_ROBOT = Path(__file__).resolve().parent.parent / "robots" / "puma560_saha.toml"
#: A scripted run (--screenshot) gives up after this long, s.
SCRIPT_TIMEOUT_S = 600.0


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


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="armdyn", description="ArmDyn: dynamics of serial robot arms. "
                "`armdyn inverse ...` and `armdyn simulate ...` run without a window.")
    p.add_argument("robot", nargs="?", type=Path,
                   help="robot or mechanism file (.toml) to open (default: the bundled "
                   "PUMA 560)")
    run = p.add_mutually_exclusive_group()
    run.add_argument("--free-fall", type=_seconds, metavar="SECONDS",
                     help="start a free-fall run of this length from the home pose")
    run.add_argument("--inverse", type=_seconds, metavar="SECONDS",
                     help="start an inverse-dynamics run of this length")
    p.add_argument("--screenshot", type=Path, metavar="PNG",
                   help="save the window as a PNG (after the run, if any) and exit")
    p.add_argument("--size", type=_size, metavar="WxH", help="window size, e.g. 1280x800")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `armdyn`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in CLI_COMMANDS:
        from core import cli  # no Qt on this path
        return cli.main(argv)
    try:
        args = _parser().parse_args(argv)
    except _UsageError as e:
        print(f"armdyn: {e}", file=sys.stderr)
        return 2

    from core import RobotFileError

    from .model_files import load_model

    if args.robot is None and DEFAULT_ROBOT.exists():
        args.robot = DEFAULT_ROBOT  # something to look at on the first start
    robot = None
    if args.robot is not None:
        try:
            robot = load_model(args.robot)
        except RobotFileError as e:
            print(f"armdyn: {e}", file=sys.stderr)
            return 2
    return _run_window(robot, args)


def _run_window(robot, args: argparse.Namespace) -> int:
    from PySide6.QtCore import QCoreApplication, QTimer
    from PySide6.QtWidgets import QApplication

    from .error_report import install_excepthook, setup_logging
    from .main_window import MainWindow
    from .startup import warm_up_kernels
    from .style import apply_style

    QCoreApplication.setOrganizationName("ArmDyn")
    QCoreApplication.setApplicationName("ArmDyn")
    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_style(app)
    log_path = setup_logging()
    scripted = args.screenshot is not None
    previous_hook = install_excepthook(log_path, interactive=not scripted)
    try:
        # numba compiles the dynamics core on first use: do it now, off the GUI thread
        # (a splash says so when it takes long), so that no later action waits for it.
        error = warm_up_kernels(splash=not scripted, report_errors=not scripted)
        if error is not None and scripted:
            print(f"armdyn: warning: the dynamics kernels could not be prepared: {error}",
                  file=sys.stderr)
        window = MainWindow(robot, args.robot, restore_layout=not scripted and not args.size)
        if args.size:
            window.resize(*args.size)
        if args.robot is not None and not scripted:
            window.files.recent.add(args.robot)
        window.show()
        if scripted:
            QTimer.singleShot(0, lambda: _scripted_run(window, args))
        elif args.free_fall or args.inverse:
            QTimer.singleShot(0, lambda: _start_run(window, args))
        status = app.exec()
        window.shutdown()
        window.deleteLater()
        return status
    finally:
        sys.excepthook = previous_hook


def _start_run(window, args: argparse.Namespace) -> bool:
    """Start the run asked for on the command line; False if there is no run panel."""
    panel = window.run_panel
    if panel is None:
        print("armdyn: the run panel is not available; no run started", file=sys.stderr)
        return False
    if args.free_fall:
        panel.start_free_fall(args.free_fall)
    else:
        panel.start_inverse(args.inverse)
    return True


def _scripted_run(window, args: argparse.Namespace) -> None:
    """--screenshot: run (if asked), show the last frame, save the window, quit."""
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    status = 0
    if (args.free_fall or args.inverse) and window.run_panel is not None:
        loop = QEventLoop()
        outcome: dict[str, str] = {}
        panel = window.run_panel
        panel.finished.connect(lambda _t: loop.quit())
        panel.failed.connect(lambda message: outcome.setdefault("error", message))
        panel.stopped.connect(lambda _t: loop.quit())
        timer = QTimer()
        timer.setSingleShot(True)
        timer.timeout.connect(lambda: (outcome.setdefault("error", "timed out"), loop.quit()))
        timer.start(int(SCRIPT_TIMEOUT_S * 1000))
        if _start_run(window, args):
            loop.exec()
        timer.stop()
        if "error" in outcome:
            print(f"armdyn: the run failed: {outcome['error']}", file=sys.stderr)
            status = 1
        window.show_last_frame()
        window.view3d.fit()  # the picture shows where the run ended
    elif args.free_fall or args.inverse:
        _start_run(window, args)  # prints why there is no run

    path = args.screenshot
    if not save_window_png(window, path):
        print(f"armdyn: cannot write {path}", file=sys.stderr)
        status = 1
    window.document.undo_stack.setClean()  # nothing to ask on the way out
    window.close()
    QCoreApplication.exit(status)


def save_window_png(window, path: Path) -> bool:
    """Grab the whole window (3D view included) and save it as PNG."""
    from PySide6.QtWidgets import QApplication

    for _ in range(3):  # layout, dock sizes (a 0 ms timer), then paint
        QApplication.processEvents()
    window.view3d.render_now()
    QApplication.processEvents()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return window.grab().save(str(path), "PNG")


if __name__ == "__main__":
    sys.exit(main())
