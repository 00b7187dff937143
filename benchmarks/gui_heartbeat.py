"""How responsive the real window is: the longest gap of a 5 ms heartbeat timer.

A `QTimer` ticking every 5 ms on the GUI thread measures how long the thread is
away from its event loop: the longest gap between two ticks is the longest
freeze a user would feel. The real `MainWindow` is opened (under Xvfb when there
is no display: the script re-runs itself in ``xvfb-run``) and these scenarios run:

- ``fall60``, ``fall600``: a 60 s and a 600 s PUMA free fall from the Run panel
  (worker thread, plots streaming); the longest gap while it runs;
- ``playback``: playback of that 600 s run at 1x: frames per second (frames the
  3D view really rendered) and the longest gap;
- ``drag200``: a pose slider of a generated 200-link robot dragged for 3 s (a
  value change every 10 ms, as mouse moves give); the longest gap;
- ``first200``, ``first1000``: time from the window's construction to the first
  rendered 3D frame of a generated 200- and 1,000-link robot;
- ``human60``, ``human600``, ``humanplay``: the same falls and playback with the bundled
  human (a floating base, 40 bodies, 45 degrees of freedom; issue #23).

    .venv/bin/python benchmarks/gui_heartbeat.py                 # all scenarios
    .venv/bin/python benchmarks/gui_heartbeat.py fall600 playback
    .venv/bin/python benchmarks/gui_heartbeat.py humanplay --profile 25
    .venv/bin/python benchmarks/gui_heartbeat.py human600 --busy 2 --worker-nice 0

``--busy N`` runs N CPU-bound processes of the same session during each fall (other
programs of the user's), ``--worker-nice N`` sets the simulation thread's nice value
above the GUI thread's (`gui.jobs.job.WORKER_NICE`): together they show what a
starved simulation thread holding Python's lock does to the window.

``--watch N`` records, after each gap over 50 ms, how long every thread of the process
was on a CPU, waiting for one (the run queue: the machine's load) or neither (blocked:
Python's lock, the OpenGL rasteriser, the X server) within it, and where the simulation
thread's Python was; it prints the N longest gaps of each measurement and
``gui_blocked_s``, the GUI thread's blocked time in all (``--stacks``: with the GUI
thread's own Python stacks during each gap).

``--profile N`` profiles the GUI thread (cProfile: only the thread it is enabled on)
during each measurement and prints its N costliest functions (cumulative time): what
keeps the thread away from its event loop.

Targets (issue #8): no gap over 50 ms, playback at 60 frames per second, first
frame under 2 s (200 links) and 10 s (1,000 links). Timings depend on the machine
and its load; run it on a quiet one. On a loaded one, the CPU times reported beside
them (``gui_thread_cpu_s``: the GUI thread's during a fall, ``gui_cpu_ms_per_s`` the same
per second of the run; ``cpu_ms_per_frame``: the whole process's, OpenGL rasteriser
threads included, per frame of playback, ``gui_cpu_ms_per_frame`` the GUI thread's)
say what the work costs whatever share of the CPUs the window gets. Beside each fall,
``start_gap_ms`` / ``start_turn_cpu_ms`` (the run's first second) and ``end_gap_ms`` /
``end_turn_cpu_ms`` (from its end until the plots are fitted, `PlotsPanel.fitting`): the
longest gap there and the most CPU time the GUI thread spent in one gap (one turn of the
event loop, whatever the load).
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import io
import math
import pstats
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCENARIOS = ("fall60", "fall600", "playback", "drag200", "first200", "first1000",
             "human60", "human600", "humanplay")
WINDOW_SIZE = (1600, 1000)
HEARTBEAT_MS = 5
#: Functions printed per profiled measurement (`--profile N`); 0: no profile.
PROFILE_TOP = {"n": 0}
#: `--busy N`: N CPU-bound processes of the same session run during each fall (other
#: programs of the user's: Linux's scheduler shares a session's CPU among its threads)
BUSY = {"n": 0}
#: `--watch N`: after each gap over 50 ms, what every thread of the process did in it
#: (`GapWatch`); the N longest gaps of a measurement are printed; `--stacks`: with the
#: GUI thread's Python stacks during each (sampled from a thread of its own, which
#: takes Python's lock every ~2 ms: it slows the GUI thread a little)
WATCH = {"n": 0, "stacks": False}
#: ... whose loop ends with this process (if it is killed, its parent changes)
BUSY_LOOP = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass"


def chain_robot(n: int):
    """A generated serial arm of `n` revolute links (a coiling snake of total length
    2 m, 10 kg): twists alternate so that it spreads in 3D."""
    import numpy as np

    from armdyn.core import Link, Robot

    length, mass = 2.0 / n, 10.0 / n
    inertia = mass * length ** 2 / 12
    links = tuple(Link(a=length, alpha=(np.pi / 2, -np.pi / 2, 0.0)[i % 3],
                       theta=0.3 * math.sin(i), mass=mass, com=(-length / 2, 0.0, 0.0),
                       inertia=(inertia / 10, inertia, inertia, 0.0, 0.0, 0.0),
                       name=f"j{i + 1}")
                  for i in range(n))
    return Robot(f"chain of {n}", links, gravity=(0.0, 0.0, -9.81))


#: names of the process's threads by native id (read once: they do not change)
THREAD_NAMES: dict[int, str] = {}


def thread_clocks() -> dict[int, tuple[str, int, int]]:
    """Every thread of this process (Linux): {native id: (name, ns on a CPU, ns waiting
    for one on the run queue)}, from /proc/self/task/*/schedstat; {} elsewhere."""
    clocks = {}
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return clocks
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/schedstat", "rb") as f:
                run_ns, wait_ns = f.read().split()[:2]
            tid = int(task)
            if tid not in THREAD_NAMES:
                with open(f"/proc/self/task/{task}/comm") as f:
                    THREAD_NAMES[tid] = f.read().strip()
            clocks[tid] = (THREAD_NAMES[tid], int(run_ns), int(wait_ns))
        except (OSError, ValueError):  # the thread ended meanwhile
            pass
    return clocks


class GapWatch:
    """What the process's threads did during each long gap of the heartbeat: for the GUI
    thread and every other thread, its time on a CPU and waiting for one (the run
    queue) within the gap; the rest of the GUI thread's gap it was blocked (Python's
    lock, a mutex, the X server) or idle. Also the Python stack of the other threads
    when the GUI thread got back (where a thread that held Python's lock let it go)."""

    def __init__(self) -> None:
        self.gaps: list[tuple[float, str]] = []
        #: (time, the GUI thread's innermost Python frames) every ~2 ms, from a thread of
        #: its own (it takes Python's lock: at least every switch interval, 5 ms)
        self._stacks: collections.deque = collections.deque(maxlen=2000)
        self._sampling = WATCH["stacks"]
        if self._sampling:
            threading.Thread(target=self._sample, daemon=True).start()
        #: s the GUI thread spent neither on a CPU nor waiting for one, beyond the
        #: heartbeat's own period, over the measurement: how long it was blocked
        self.blocked = 0.0
        self._before = thread_clocks()

    def _sample(self) -> None:
        main = threading.main_thread().ident
        while self._sampling:
            frame = sys._current_frames().get(main)
            if frame is not None:
                stack = traceback.extract_stack(frame)[-4:]
                self._stacks.append((time.perf_counter(), " < ".join(
                    f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(stack))))
            time.sleep(0.002)

    def stop(self) -> None:
        self._sampling = False

    def _gui_stacks(self, gap: float) -> list[str]:
        """The GUI thread's most frequent stacks during the last `gap` s."""
        since = time.perf_counter() - gap
        seen = collections.Counter(s for t, s in list(self._stacks) if t >= since
                                   and "_beat" not in s and "exec" not in s.split(" < ")[0])
        return [f"    GUI x{k} at {s}" for s, k in seen.most_common(4)]

    def beat(self, gap: float, limit_s: float = 0.05) -> None:
        now = thread_clocks()
        gui = os.getpid()
        if gui in now and gui in self._before:
            busy_ns = sum(now[gui][1:]) - sum(self._before[gui][1:])
            self.blocked += max(0.0, gap - HEARTBEAT_MS / 1000 - busy_ns / 1e9)
        if gap > limit_s:
            self.gaps.append((gap, "\n".join([self._describe(gap, self._before, now),
                                               *self._gui_stacks(gap)])))
        self._before = now

    @staticmethod
    def _describe(gap: float, before, now) -> str:
        gui = os.getpid()
        lines = []
        for tid, (name, run_ns, wait_ns) in sorted(now.items(), key=lambda kv: kv[0] != gui):
            run0, wait0 = before.get(tid, (name, 0, 0))[1:]
            run_ms, wait_ms = (run_ns - run0) / 1e6, (wait_ns - wait0) / 1e6
            if tid == gui or run_ms + wait_ms > 1.0:
                who = "GUI" if tid == gui else f"{name}[{tid}]"
                lines.append(f"    {who:22s} on CPU {run_ms:6.1f} ms, run queue {wait_ms:6.1f} ms"
                             + (f", blocked/idle {1000 * gap - run_ms - wait_ms:6.1f} ms"
                                if tid == gui else ""))
        ids = {t.ident: t.native_id for t in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            if ident == threading.main_thread().ident:
                continue
            stack = traceback.extract_stack(frame)[-3:]
            lines.append(f"    thread {ids.get(ident, ident)} at " + " < ".join(
                f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(stack)))
        return "\n".join(lines)

    def report(self) -> None:
        print(f"  GUI thread blocked (not on a CPU nor waiting for one, beyond the "
              f"{HEARTBEAT_MS} ms period) {self.blocked:.2f} s in all", flush=True)
        for gap, text in sorted(self.gaps, reverse=True)[:WATCH["n"]]:
            print(f"  gap {1000 * gap:.0f} ms\n{text}", flush=True)


class Heartbeat:
    """A 5 ms timer on the GUI thread; records the longest gap between its ticks."""

    def __init__(self, period_ms: int = HEARTBEAT_MS) -> None:
        from PySide6.QtCore import Qt, QTimer

        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(period_ms)
        self._timer.timeout.connect(self._beat)
        self._last = 0.0
        self.gaps: list[float] = []
        #: per tick: (its time, s; the GUI thread's CPU time since the last tick, s)
        self.ticks: list[tuple[float, float]] = []
        #: when the run ended (its samples reached the window), perf_counter s
        self.end_time: float | None = None

    def start(self) -> None:
        self.gaps, self.ticks, self.end_time = [], [], None
        self._watch = GapWatch() if WATCH["n"] else None
        self._profile = cProfile.Profile() if PROFILE_TOP["n"] else None
        if self._profile is not None:
            self._profile.enable()
        self._last = time.perf_counter()
        self._cpu = (time.thread_time(), time.process_time())
        self._tick_cpu = self._cpu[0]
        self._timer.start()

    def stop(self) -> None:
        self._beat()
        self._timer.stop()
        #: CPU time while it ran, s: of the GUI thread, and of the whole process (with
        #: the simulation's thread and the OpenGL rasteriser's): what the work costs
        #: whatever the machine's load (a loaded machine stretches the wall-clock gaps)
        self.gui_cpu = time.thread_time() - self._cpu[0]
        self.process_cpu = time.process_time() - self._cpu[1]
        if self._profile is not None:
            self._profile.disable()
            out = io.StringIO()
            stats = pstats.Stats(self._profile, stream=out)
            stats.sort_stats("cumulative").print_stats(PROFILE_TOP["n"])
            print(out.getvalue(), flush=True)
        if self._watch is not None:
            self._watch.stop()
            self._watch.report()

    def _beat(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.gaps.append(now - self._last)
        self.ticks.append((now, cpu - self._tick_cpu))
        self._last, self._tick_cpu = now, cpu
        if self._watch is not None:
            self._watch.beat(self.gaps[-1])

    @property
    def blocked(self) -> float | None:
        """With --watch: s the GUI thread was blocked (`GapWatch.blocked`), else None."""
        return None if self._watch is None else self._watch.blocked

    @property
    def longest(self) -> float:
        """Longest gap, s."""
        return max(self.gaps, default=0.0)

    def turns(self, first: float = 0.0, last: float = math.inf) -> tuple[float, float]:
        """(longest gap, most GUI-thread CPU in one gap), s, among the gaps that end
        between `first` and `last` s after the measurement's start: the CPU time is what
        a turn of the event loop costs whatever the machine's load."""
        t0 = self.ticks[0][0] - self.gaps[0] if self.ticks else 0.0
        chosen = [(g, c) for g, (t, c) in zip(self.gaps, self.ticks)
                  if first <= t - t0 <= last]
        return (max((g for g, _ in chosen), default=0.0),
                max((c for _, c in chosen), default=0.0))

    def end_turns(self) -> tuple[float, float]:
        """`turns` from the run's end (its samples reached the window) on."""
        if self.end_time is None or not self.ticks:
            return 0.0, 0.0
        t0 = self.ticks[0][0] - self.gaps[0]
        return self.turns(self.end_time - t0)

    def over(self, limit_s: float = 0.05) -> int:
        """How many gaps were longer than `limit_s`."""
        return sum(g > limit_s for g in self.gaps)


def wait(ms: int) -> None:
    """Run the event loop for `ms` milliseconds."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


class RenderCounter:
    """Counts the frames the 3D view's render window really draws."""

    def __init__(self, view) -> None:
        self.times: list[float] = []
        view.plotter.ren_win.AddObserver("EndEvent", lambda *_: self.times.append(
            time.perf_counter()))


def open_window(robot, path=None):
    from PySide6.QtTest import QTest

    from armdyn.gui.main_window import MainWindow

    window = MainWindow(robot, path, restore_layout=False)
    window.resize(*WINDOW_SIZE)
    window.show()
    QTest.qWaitForWindowExposed(window)
    return window


def close_window(window) -> None:
    window.document.undo_stack.setClean()
    window.shutdown()
    window.close()
    window.deleteLater()
    wait(50)


def run_fall(window, seconds: float, beat: Heartbeat) -> float:
    """Free fall of `seconds` s from the Run panel; returns its wall time, s."""
    from PySide6.QtCore import QEventLoop

    loop = QEventLoop()
    panel = window.run_panel
    panel.finished.connect(loop.quit)
    panel.stopped.connect(loop.quit)
    wait(300)  # the window settles
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(BUSY["n"])]

    def ended(_result) -> None:  # (after the plots' slot: its gap ends after this)
        beat.end_time = time.perf_counter()

    window.session.run_ended.connect(ended)
    beat.start()
    t0 = time.perf_counter()
    panel.start_free_fall(seconds)
    loop.exec()
    wall = time.perf_counter() - t0
    for hog in hogs:
        hog.kill()
        hog.wait()
    wait(200)  # the last chunk on the plots
    while window.plots.fitting():  # the plots fitted one per turn after the run
        wait(20)
    wait(100)  # their last paint
    beat.stop()
    window.session.run_ended.disconnect(ended)
    panel.finished.disconnect(loop.quit)
    panel.stopped.disconnect(loop.quit)
    return wall


def report(name: str, **figures) -> None:
    text = ", ".join(f"{k} {v}" for k, v in figures.items())
    print(f"{name:10s} {text}", flush=True)


def scenario_fall(seconds: float, then_playback: bool, model: str = "puma560_saha",
                  name: str = "fall") -> None:
    from armdyn.core.io.model_files import load_model

    path = ROOT / "robots" / f"{model}.toml"
    window = open_window(load_model(path), path)
    beat = Heartbeat()
    wall = run_fall(window, seconds, beat)
    start_gap, start_cpu = beat.turns(0.0, 1.0)
    end_gap, end_cpu = beat.end_turns()
    report(f"{name}{seconds:g}", longest_gap_ms=f"{1000 * beat.longest:.0f}",
           gaps_over_50ms=beat.over(), run_wall_s=f"{wall:.2f}",
           start_gap_ms=f"{1000 * start_gap:.0f}", start_turn_cpu_ms=f"{1000 * start_cpu:.0f}",
           end_gap_ms=f"{1000 * end_gap:.0f}", end_turn_cpu_ms=f"{1000 * end_cpu:.0f}",
           gui_thread_cpu_s=f"{beat.gui_cpu:.2f}",
           gui_cpu_ms_per_s=f"{1000 * beat.gui_cpu / max(wall, 1e-9):.0f}",
           **({} if beat.blocked is None else {"gui_blocked_s": f"{beat.blocked:.2f}"}),
           samples=len(window.trajectory) if window.trajectory is not None else 0)
    if then_playback:
        scenario_playback(window)
    close_window(window)


def scenario_playback(window, seconds: float = 4.0) -> None:
    renders = RenderCounter(window.view3d)
    frames: list[float] = []
    window.playback.frame.connect(lambda *_: frames.append(time.perf_counter()))
    beat = Heartbeat()
    window.playback.seek(100.0)
    wait(200)
    beat.start()
    t0 = time.perf_counter()
    window.playback.play()
    wait(int(seconds * 1000))
    window.playback.pause()
    wall = time.perf_counter() - t0
    beat.stop()
    drawn = [t for t in renders.times if t >= t0]
    report("playback", frames_per_s=f"{len(drawn) / wall:.1f}",
           frame_signals_per_s=f"{len(frames) / wall:.1f}",
           longest_gap_ms=f"{1000 * beat.longest:.0f}",
           cpu_ms_per_frame=f"{1000 * beat.process_cpu / max(len(drawn), 1):.1f}",
           gui_cpu_ms_per_frame=f"{1000 * beat.gui_cpu / max(len(drawn), 1):.1f}")


def scenario_drag(n: int = 200, seconds: float = 3.0) -> None:
    from PySide6.QtCore import QTimer

    window = open_window(chain_robot(n))
    wait(500)
    slider = window.pose_panel.joint_widgets(n // 2)[0]
    steps = {"k": 0}
    span = slider.maximum() - slider.minimum()

    def move() -> None:  # a mouse drag: one value change per mouse move
        steps["k"] += 1
        phase = math.sin(steps["k"] / 40.0)
        slider.setValue(int(slider.minimum() + span * (0.5 + 0.3 * phase)))

    mover = QTimer()
    mover.setInterval(10)
    mover.timeout.connect(move)
    renders = RenderCounter(window.view3d)
    beat = Heartbeat()
    beat.start()
    t0 = time.perf_counter()
    mover.start()
    wait(int(seconds * 1000))
    mover.stop()
    wait(300)
    wall = time.perf_counter() - t0
    beat.stop()
    report(f"drag{n}", longest_gap_ms=f"{1000 * beat.longest:.0f}",
           gaps_over_50ms=beat.over(), value_changes=steps["k"],
           frames_per_s=f"{len(renders.times) / wall:.1f}")
    close_window(window)


def scenario_first_frame(n: int) -> None:
    from PySide6.QtWidgets import QApplication

    from armdyn.gui.main_window import MainWindow

    robot = chain_robot(n)
    t0 = time.perf_counter()
    window = MainWindow(robot, None, restore_layout=False)
    built = time.perf_counter() - t0
    renders = RenderCounter(window.view3d)
    window.resize(*WINDOW_SIZE)
    window.show()
    deadline = t0 + 300.0
    while not renders.times and time.perf_counter() < deadline:
        QApplication.processEvents()
        time.sleep(0.001)
    first = renders.times[0] - t0 if renders.times else float("nan")
    beat = Heartbeat()  # then: how long until the window answers every 5 ms again
    beat.start()
    wait(1500)
    beat.stop()
    report(f"first{n}", first_frame_s=f"{first:.2f}", constructor_s=f"{built:.2f}",
           longest_gap_after_ms=f"{1000 * beat.longest:.0f}")
    close_window(window)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                        help=f"which to run: {', '.join(SCENARIOS)} (default: all)")
    parser.add_argument("--model", default="puma560_saha",
                        help="bundled model of fall60, fall600 and playback (default: "
                        "puma560_saha; humanoid is the tree of issue #20)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="profile the GUI thread during each measurement and print "
                        "its N costliest functions")
    parser.add_argument("--worker-nice", type=int, default=None, metavar="N",
                        help="run the simulation's thread N nicer than the GUI thread "
                        "(default: gui.jobs.job.WORKER_NICE)")
    parser.add_argument("--busy", type=int, nargs="?", const=1, default=0, metavar="N",
                        help="N (default 1) CPU-bound processes of the same session run "
                        "during each fall")
    parser.add_argument("--watch", type=int, default=0, metavar="N",
                        help="after each gap over 50 ms, record what every thread did in "
                        "it; print the N longest gaps of each measurement")
    parser.add_argument("--stacks", action="store_true",
                        help="with --watch: the GUI thread's Python stacks during each gap")
    args = parser.parse_args(argv)
    PROFILE_TOP["n"] = args.profile
    WATCH["n"] = args.watch
    WATCH["stacks"] = args.stacks
    BUSY["n"] = args.busy
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s) {sorted(unknown)}; choose from {SCENARIOS}")
    chosen = args.scenarios or list(SCENARIOS)
    if not os.environ.get("DISPLAY") and os.environ.get("QT_QPA_PLATFORM") != "xcb":
        xvfb = shutil.which("xvfb-run")
        if xvfb is None:
            print("no display and no xvfb-run: install xvfb", file=sys.stderr)
            return 1
        size = f"{WINDOW_SIZE[0]}x{WINDOW_SIZE[1]}x24"
        extra = ["--busy", str(args.busy), "--watch", str(args.watch)] + (
            ["--stacks"] if args.stacks else []) + (
            [] if args.worker_nice is None else ["--worker-nice", str(args.worker_nice)])
        return subprocess.call([xvfb, "-a", "-s", f"-screen 0 {size}", sys.executable,
                                __file__, *chosen, "--model", args.model,
                                "--profile", str(args.profile), *extra])

    from PySide6.QtWidgets import QApplication

    import armdyn.core as core
    from armdyn.gui.jobs import job
    from armdyn.gui.look.style import apply_style

    if args.worker_nice is not None:
        job.WORKER_NICE = args.worker_nice

    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_style(app)
    try:
        core.warm_up()  # the numba kernels are compiled (or loaded) before any timing
    except Exception as e:  # noqa: BLE001 - the window compiles what it needs itself
        print(f"warning: core.warm_up() failed ({type(e).__name__}); kernels compile on "
              "first use, inside the first measurement", file=sys.stderr)
    print(f"model {args.model}; GUI heartbeat ({HEARTBEAT_MS} ms timer), "
          f"window {WINDOW_SIZE[0]}x{WINDOW_SIZE[1]}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, simulation thread nice "
          f"+{job.WORKER_NICE}, {BUSY['n']} busy processes", flush=True)
    if "fall60" in chosen:
        scenario_fall(60.0, then_playback=False, model=args.model)
    if "human60" in chosen:
        scenario_fall(60.0, then_playback=False, model="human_body_jalon", name="human")
    if "human600" in chosen or "humanplay" in chosen:
        scenario_fall(600.0, then_playback="humanplay" in chosen, model="human_body_jalon",
                      name="human")
    if "fall600" in chosen or "playback" in chosen:
        scenario_fall(600.0, then_playback="playback" in chosen, model=args.model)
    if "drag200" in chosen:
        scenario_drag(200)
    if "first200" in chosen:
        scenario_first_frame(200)
    if "first1000" in chosen:
        scenario_first_frame(1000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
