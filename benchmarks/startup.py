"""Time from `armdyn robots/puma560_saha.toml` to a usable window, cold and warm.

Cold: a fresh numba cache (a new XDG_CACHE_HOME), as on a fresh machine; warm: the
same command again. Each run starts the real application in a subprocess under
Xvfb (xvfb-run) and reports, from the process's start:

    window   the main window shown and its first events processed (usable)
    fall     Run pressed at that moment (a 10 s free fall from the Run panel, as an
             impatient user would): the time until its first samples are drawn on the
             plots, s after Run (the background warm-up may still be loading kernels)
    ready    the background warm-up of every other kernel finished (from a warm cache
             all of it loads while the window is built; on a fresh cache the window's
             process compiles its share from a second after the window has shown:
             gui/startup.py REST_AFTER_WINDOW_MS, and shares the steps with a second
             process, started before the window, which --compiles follows too)

    cpu      the process's CPU time up to the window (all threads, s): what a loaded
             machine distorts less than the wall time

Targets of the speed issue: cold window <= 15 s, warm window <= 3 s, first frame of a
free fall < 0.5 s after Run.

The tree's modules are compiled to bytecode first: with PYTHONDONTWRITEBYTECODE set (or
a tree that cannot be written), every module changed since its last compile was compiled
again at every start, which an installed copy never does (0.1 s for a few changed
modules).

Run:  python benchmarks/startup.py [--runs N] [--warm] [--compiles]
      --warm: warm starts only, N of them, on the user's own cache (XDG_CACHE_HOME or
      ~/.cache: a first start, not counted, fills it if this version's kernels are not
      in it)
      --compiles: for each cold start, the kernels each of its processes compiled (the
      application's, its warm-up process's), their CPU, and those compiled twice
"""
from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The driver: the real `armdyn` entry point, with MainWindow.show wrapped to report
# when the window is up, and a timer that waits for the background warm-up, then quits.
# The wrapping waits until the app itself imports the window (its _run_window), so that
# modules are imported in the app's own order (that order costs or saves 0.3 s).
DRIVER = r"""
import sys, time
t0 = time.monotonic()
sys.path.insert(0, {root!r})
from armdyn.gui import app

run_window = app._run_window

def run_window_reporting(robot, args):
    app._import_before_qt()
    from armdyn.gui import main_window, startup
    shown = main_window.MainWindow.show

    def show(self):
        shown(self)
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication

        def first_events():
            print(f"window {{time.monotonic() - t0:.2f}}", flush=True)
            print(f"cpu {{time.process_time():.2f}}", flush=True)
            poll = QTimer(self)
            run = {{"t": time.monotonic(), "cpu": time.process_time(), "drawn": False}}
            self.run_panel.start_free_fall(10.0)

            def wait_ready():
                if not run["drawn"] and self.plots.sample_count() > 0:
                    self.plots.repaint()  # the first samples on screen
                    run["drawn"] = True
                    print(f"fall {{time.monotonic() - run['t']:.3f}}", flush=True)
                    print(f"fall_cpu {{time.process_time() - run['cpu']:.1f}}", flush=True)
                thread = startup.background_warm_up()
                if run["drawn"] and (thread is None or not thread.is_alive()):
                    poll.stop()
                    self.run_panel.stop()
                    print(f"ready {{time.monotonic() - t0:.2f}}", flush=True)
                    import resource
                    print(f"ready_cpu {{time.process_time():.1f}}", flush=True)
                    print(f"apart_cpu {{resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime:.1f}}",
                          flush=True)
                    QApplication.quit()
            poll.timeout.connect(wait_ready)
            poll.start(5)
        QTimer.singleShot(0, first_events)

    main_window.MainWindow.show = show
    return run_window(robot, args)

app._run_window = run_window_reporting
sys.exit(app.main([{robot!r}, "--size", "1600x1000"]))
"""


# With --compiles: a sitecustomize module in every process of a start (the application
# and its warm-up process) that logs each kernel numba compiles (not those it loads from
# its cache): the process, whether nested in another's compile, the kernel, its argument
# types, CPU s. It registers its listener once numba's dispatcher is imported, so that
# the application's imports keep their order.
COMPILE_LOG = r"""
import importlib.abc, importlib.util, os, sys, time

class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "numba.core.dispatcher":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _listen()
        spec.loader.exec_module = exec_module
        return spec

def _listen():
    from numba.core import event
    log = os.open(os.path.join(os.environ["ARMDYN_COMPILE_LOG"], f"{os.getpid()}.tsv"),
                  os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    stack = []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append(time.process_time())

        def on_end(self, ev):
            cpu = time.process_time() - stack.pop()
            f = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', '?')}"
            os.write(log, f"{len(stack)}\t{name}\t{ev.data.get('args')}\t{cpu:.3f}\t"
                          f"{time.time():.2f}\n".encode())
    event.register("numba:compile", Listener())

if os.environ.get("ARMDYN_COMPILE_LOG"):
    sys.meta_path.insert(0, _Hook())
"""


def compile_counts(folder: Path) -> str:
    """What the processes of a start compiled (COMPILE_LOG's files in `folder`): per
    process, its kernels and their CPU, and the kernels compiled in more than one."""
    seen: dict[tuple[str, str], list[float]] = {}
    parts = []
    logs = {log: [line.split("\t") for line in log.read_text().splitlines()]
            for log in sorted(folder.glob("*.tsv"))}
    first = min((float(r[4]) - float(r[3]) for rows in logs.values() for r in rows),
                default=0.0)
    for rows in logs.values():
        top = [r for r in rows if r[0] == "0"]
        for _, name, types, cpu, _ in rows:
            seen.setdefault((name, types), []).append(float(cpu))
        parts.append(f"{len(rows)} kernels ({len(top)} outermost, "
                     f"{sum(float(r[3]) for r in top):.1f} s, the last done "
                     f"{max(float(r[4]) for r in rows) - first:.1f} s after the first began)")
    twice = {k: v for k, v in seen.items() if len(v) > 1}
    return (f"{' + '.join(parts)}; compiled twice: {len(twice)} kernels "
            f"({sum(min(v) for v in twice.values()):.1f} s)"
            + "".join(f"\n      {k[0]} {min(v):.1f} s" for k, v in
                      sorted(twice.items(), key=lambda kv: -min(kv[1]))[:8]))


def run_once(cache_home: Path, compiles: Path | None = None) -> dict[str, float]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
    env.pop("NUMBA_CACHE_DIR", None)
    if compiles is not None:
        (compiles / "sitecustomize.py").write_text(COMPILE_LOG)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(compiles),
                                                          env.get("PYTHONPATH")]))
        env["ARMDYN_COMPILE_LOG"] = str(compiles)
    code = DRIVER.format(root=str(ROOT), robot=str(ROOT / "robots" / "puma560_saha.toml"))
    out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", sys.executable,
                          "-c", code], env=env, capture_output=True, text=True, timeout=900,
                         cwd=tempfile.gettempdir())
    times = {"load": os.getloadavg()[0]}
    for line in out.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key in ("window", "cpu", "fall", "ready", "fall_cpu", "ready_cpu", "apart_cpu"):
            times[key] = float(value)
    if "window" not in times:
        raise RuntimeError(f"the window never showed:\n{out.stdout}\n{out.stderr[-3000:]}")
    return times


def compile_tree() -> None:
    """Compile the tree's modules to bytecode (see the module docstring)."""
    for package in ("core", "gui"):
        compileall.compile_dir(ROOT / package, quiet=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2,
                    help="cold starts (each with a fresh cache, then a warm one), or warm "
                    "starts with --warm")
    ap.add_argument("--warm", action="store_true",
                    help="warm starts only, on the user's own numba cache")
    ap.add_argument("--compiles", action="store_true",
                    help="count the kernels each process of a cold start compiles, and "
                    "those compiled twice")
    args = ap.parse_args()
    compile_tree()
    cold, warm = [], []
    if args.warm:
        home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        run_once(home)  # fills the cache if needed; not counted
        warm = [run_once(home) for _ in range(args.runs)]
    for _ in range(0 if args.warm else args.runs):
        with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as logs:
            load = os.getloadavg()[0]
            cold.append(run_once(Path(home), Path(logs) if args.compiles else None))
            print(f"cold start: load average {load:.1f} -> {cold[-1]['load']:.1f}; window "
                  f"{cold[-1]['window']:.1f} s, all kernels ready {cold[-1].get('ready', 0):.1f} s"
                  + (f"; compiled: {compile_counts(Path(logs))}" if args.compiles else ""),
                  flush=True)
            warm.append(run_once(Path(home)))
    for name, runs, target in (("cold", cold, 15.0), ("warm", warm, 3.0)):
        if not runs:
            continue
        windows = [r["window"] for r in runs]
        falls = [r.get("fall", float("nan")) for r in runs]
        readies = [r.get("ready", float("nan")) for r in runs]
        ok = min(windows) <= target
        print(f"{name} start: window {min(windows):5.1f} s (spread {min(windows):.1f}-"
              f"{max(windows):.1f}), all kernels ready {min(readies):5.1f} s   "
              f"(target window <= {target:g} s)  {'ok' if ok else 'MISSED'}")
        cpus = [r.get("cpu", float("nan")) for r in runs]
        print(f"{name} start: CPU time to the window {min(cpus):.2f} s (spread "
              f"{min(cpus):.2f}-{max(cpus):.2f})")
        cpu = [(r.get("fall_cpu", float("nan")), r.get("ready_cpu", float("nan")),
                r.get("apart_cpu", float("nan"))) for r in runs]
        print(f"{name} start: CPU of the application (s) from Run to the first samples, from "
              f"its start to all kernels ready, of a warm-up process of its own: "
              f"{'; '.join(f'{f:.1f}, {r:.1f}, {a:.1f}' for f, r, a in cpu)}")
        print(f"{name} start: first free-fall samples drawn {min(falls):.2f} s after Run "
              f"(spread {min(falls):.2f}-{max(falls):.2f}; target < 0.5 s)  "
              f"{'ok' if min(falls) < 0.5 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
