"""Start-up work around the main window: the dynamics kernels are warmed up.

numba compiles the dynamics core on its first use: a minute or two on a fresh
machine, a second or two once numba's disk cache holds the kernels. The window
should neither wait for all of it nor freeze later on a compile, so
`warm_up_kernels` runs ``core.warm_up_display()`` (the few kernels that draw and
pose an arm) in a worker thread before the window is built, the GUI thread
processing events meanwhile, with a small splash window if that takes longer than
SPLASH_DELAY_S; then it leaves the rest to a background thread while the window is in
use: first a short free fall and inverse-dynamics run of the model the window opens,
started as the Run panel starts them (the very kernels, for the very argument types,
that a Run pressed at once needs: numba compiles one kernel at a time, so these must
not queue behind the others),
then ``core.warm_up()`` (every other kernel, runs first). On a fresh cache an application
may hold that back until its window has shown (`window_shown`): compiling holds Python's
lock for much of its time, which the window's build, and a run started at once, would
wait for; from a warm cache every kernel loads in about 0.1 s (`core.kernels.cache_load`),
so it goes on at once. A run started before that is done waits only for the kernels it
needs (numba compiles each once, under its lock). On a fresh cache, a process of its own
compiles the other kernels on the other core from before the window is built
(`core.warmup.warm_up_apart`):
both take the next step of ``core.warm_up`` that neither has claimed, and this one then
loads what that process has compiled.
"""
from __future__ import annotations

import atexit
import logging
import shutil
import subprocess
import tempfile
import threading
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QFrame, QLabel, QMessageBox, QProgressBar, QVBoxLayout, QWidget

from armdyn.core.kernels.cache import FIRST_COMPILE_TIME, cache_is_cold

if TYPE_CHECKING:
    from armdyn.core import Mechanism, Robot

__all__ = ["warm_up_kernels", "background_warm_up", "warm_up_runs", "window_shown",
           "SPLASH_MESSAGE", "COLD_SPLASH_MESSAGE", "REST_AFTER_WINDOW_MS"]

log = logging.getLogger(__name__)

SPLASH_MESSAGE = "Loading the dynamics kernels\u2026"
#: The splash of a first start of this version (numba's cache empty): what takes so long.
COLD_SPLASH_MESSAGE = ("Compiling the dynamics kernels: the first start of this version of "
                       "ArmDyn does it once (the window's own in seconds to a minute, the "
                       f"rest in the background, {FIRST_COMPILE_TIME} in all); later starts "
                       "load them in a second\u2026")
#: No splash when the warm-up is done within this time, s.
SPLASH_DELAY_S = 0.3
#: How often the GUI thread looks whether the worker is done, ms.
POLL_MS = 20
#: The open model's runs that the background warm-up makes first, s of model time.
FIRST_RUN_S = 0.05
#: How long after its window has shown an application lets the background warm-up of a
#: cold cache go on (`window_shown`), ms: a Run pressed as the window appears then has its
#: kernels to itself.
REST_AFTER_WINDOW_MS = 1000


_background: threading.Thread | None = None
#: Set when the rest of the background warm-up may start (`window_shown`).
_rest_may_start = threading.Event()


def background_warm_up() -> threading.Thread | None:
    """The thread running ``core.warm_up()`` after the window opened (None before)."""
    return _background


def warm_up_kernels(*, splash: bool = True, report_errors: bool = True,
                    everything_first: bool = False,
                    model: Robot | Mechanism | None = None,
                    rest_after_window: bool = False) -> str | None:
    """Prepare the kernels the window needs off the GUI thread (the event loop runs
    meanwhile), then start the rest in a background thread.

    A QApplication must exist. Shows a splash window (if `splash`) once the first
    part has taken SPLASH_DELAY_S. `everything_first`: prepare every kernel before
    returning (a scripted run). `model`: the model the window opens, whose runs the
    background warm-up prepares first (`warm_up_runs`). `rest_after_window`: on a
    cold cache, the background warm-up starts those runs and the other kernels only once
    `window_shown()` has been called (they compile for a minute: the window's build should
    not share Python's lock with that), and it starts at once the process that shares the
    other kernels with the background warm-up (`core.warmup.warm_up_apart`); from a warm
    cache they load in a fraction of a second and go on at once. A failed
    warm-up is logged and, if `report_errors`, its message is shown in a dialog; the
    application goes on either way (kernels then compile on their first use). Returns
    the error message, or None.
    """
    global _background
    import armdyn.core as core  # looked up now, so that tests can replace core.warm_up

    outcome: dict[str, str] = {}

    def work() -> None:
        try:
            (core.warm_up if everything_first else core.warm_up_display)()
        except Exception as e:  # noqa: BLE001 - reported below, the GUI goes on
            log.exception("warm-up of the dynamics kernels failed")
            outcome["error"] = str(e) or type(e).__name__

    cold = cache_is_cold()  # (before work)
    apart = claims = None
    if cold and rest_after_window and not everything_first:
        # the other kernels compile on the other core from now on, in a process of its
        # own: it shares no lock with the window's build, and runs at a lower priority
        claims, apart = _start_apart()
    message = COLD_SPLASH_MESSAGE if cold else SPLASH_MESSAGE
    thread = threading.Thread(target=work, name="armdyn-warm-up", daemon=True)
    started = time.monotonic()
    thread.start()
    window: QWidget | None = None
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(POLL_MS)

    def poll() -> None:
        nonlocal window
        if not thread.is_alive():
            loop.quit()
        elif splash and window is None and time.monotonic() - started >= SPLASH_DELAY_S:
            window = _splash_window(message)
            window.show()

    timer.timeout.connect(poll)
    timer.start()
    try:
        loop.exec()
    finally:
        timer.stop()
        thread.join()
        if window is not None:
            window.close()
            window.deleteLater()
    error = outcome.get("error")
    if error is not None and report_errors:
        _show_error(error)
    if claims is not None and error is not None:
        _end_apart(apart, claims)
    if not everything_first and error is None:
        if rest_after_window and cold:
            _rest_may_start.clear()
        else:
            _rest_may_start.set()
        # compiled, the runs take a minute: after the window's build, not beside it
        _background = threading.Thread(target=_warm_up_the_rest,
                                       args=(model, cold and rest_after_window, apart, claims),
                                       name="armdyn-warm-up-rest", daemon=True)
        _background.start()
    return error


def warm_up_runs(model: Robot | Mechanism) -> None:
    """Run a FIRST_RUN_S free fall of `model` from its home pose, then an inverse-dynamics
    run as long, each as the Run panel runs it with its default settings (a `RunSpec`'s
    chunks: end stops where the model has limits, the method for its loops), to the end:
    the kernels of the Run button's two runs compiled or loaded."""
    import numpy as np

    from .jobs.runs import RunKind, RunSpec

    q0 = np.array(model.q_home, dtype=float)
    for kind in (RunKind.FREE_FALL, RunKind.INVERSE):
        for _ in RunSpec(model, kind, q0, FIRST_RUN_S, target=q0).chunks():
            pass


def window_shown() -> None:
    """Let the background warm-up go on to every other kernel (see `warm_up_kernels`)."""
    _rest_may_start.set()


def _start_apart() -> tuple[str | None, subprocess.Popen | None]:
    """A folder for the claims of the warm-up's steps and the process that shares them
    with this one (`core.warmup.warm_up_apart`); None for either that could not be made
    (no folder: no process, this one compiles every kernel)."""
    from armdyn.core.warmup import warm_up_apart

    try:
        claims = tempfile.mkdtemp(prefix="armdyn-warm-up-")
    except OSError as e:
        log.info("no folder for the warm-up's claims (%s): one process compiles", e)
        return None, None
    apart = warm_up_apart(claims)
    if apart is not None:
        atexit.register(_end_process, apart)
    return claims, apart


def _end_apart(apart: subprocess.Popen | None, claims: str) -> None:
    if apart is not None:
        _end_process(apart)  # (done, or busy with a step this one has done)
    shutil.rmtree(claims, ignore_errors=True)


def _warm_up_the_rest(model: Robot | Mechanism | None, runs_after_window: bool,
                      apart: subprocess.Popen | None, claims: str | None) -> None:
    import armdyn.core as core
    if runs_after_window:  # a fresh cache: the runs compile after the window's build
        _rest_may_start.wait()
    started = time.monotonic()
    if model is not None:
        try:
            warm_up_runs(model)
        except Exception as e:  # noqa: BLE001 - a model whose run fails: Run will say why
            log.info("the warm-up runs of the open model stopped (%s); the other kernels "
                     "go on", e)
        else:
            log.info("the runs of %s are ready (%.1f s in the background)",
                     getattr(model, "name", "the model"), time.monotonic() - started)
    _rest_may_start.wait()
    try:
        if apart is None:
            core.warm_up()
        else:  # the steps the other process has not claimed; then loads what it compiled
            core.warm_up(claims=claims, other=apart)
    except Exception:  # noqa: BLE001 - the kernels then compile on first use
        log.exception("background warm-up of the dynamics kernels failed")
    else:
        log.info("dynamics kernels ready (%.1f s in the background)", time.monotonic() - started)
    finally:
        if claims is not None:
            _end_apart(apart, claims)


def _end_process(process: subprocess.Popen) -> None:
    """Stop the warm-up process `process` if it still runs (the application quits)."""
    if process.poll() is None:
        process.kill()
        process.wait()


def _splash_window(text: str) -> QWidget:
    """A small frameless window: the message `text` and a busy bar."""
    window = QFrame(None, Qt.WindowType.SplashScreen | Qt.WindowType.FramelessWindowHint)
    window.setObjectName("warmUpSplash")
    window.setFrameShape(QFrame.Shape.Box)
    window.setWindowTitle("ArmDyn")
    layout = QVBoxLayout(window)
    layout.setContentsMargins(24, 20, 24, 20)
    layout.setSpacing(12)
    title = QLabel("<b>ArmDyn</b>")
    message = QLabel(text)
    message.setWordWrap(True)
    bar = QProgressBar()
    bar.setRange(0, 0)  # busy: the compiler does not tell how far it is
    bar.setTextVisible(False)
    for widget in (title, message, bar):
        layout.addWidget(widget)
    window.setFixedWidth(440)
    window.adjustSize()
    screen = window.screen().availableGeometry() if window.screen() else None
    if screen is not None:
        window.move(screen.center() - window.rect().center())
    return window


def _show_error(message: str) -> None:
    QMessageBox.warning(None, "ArmDyn",
                        "The dynamics kernels could not be prepared:\n\n"
                        f"{message}\n\nArmDyn goes on; the first run may take longer.")
