"""The cold start's two warm-up processes (core/warmup.py: `warm_up` with claims, and
`warm_up_claiming`, the process `warm_up_apart` starts) share its steps: each step is
compiled by one of them only, the application's process has run every step at its end
(loading what the other compiled once the other was done), and it does not wait for a
step of the other process that does not advance.

The steps here stand for the kernels: each burns CPU for a while as a compile does and
logs which process ran it, and whether the other had finished it before."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import armdyn.core.warmup as warmup

#: The steps, in warm_up's order (the first only in the application's process, as its
#: arm's runs are); each burns CPU for BURN_S and appends "pid name done-before" to the
#: log.
NAMES = ["arm run", "one", "two", "three", "four", "five", "six"]
BURN_S = 0.25

STEPS = r"""
import os, time
from pathlib import Path
import armdyn.core.warmup as w

def fake_steps(*, tree_runs=True):
    def step(name):
        def run():
            if name == "arm run":  # the application's own first runs: until the other
                end = time.monotonic() + 60  # has claimed a step (it has started)
                while time.monotonic() < end and not any(
                        p.name != name for p in Path(CLAIMS).iterdir()):
                    time.sleep(0.01)
            done = (Path(CLAIMS) / f"{{name}}.done").exists()
            end = time.process_time() + BURN_S
            while time.process_time() < end:
                pass
            with open(LOG, "a") as log:
                log.write(f"{{os.getpid()}}\t{{name}}\t{{done}}\n")
        return w.Step(name, run)
    return [step(n) for n in NAMES if tree_runs or n != "arm run"]

CLAIMS, LOG, NAMES, BURN_S = {claims!r}, {log!r}, {names!r}, {burn}
w.warm_up_steps = fake_steps
"""


def _log(path: Path) -> list[tuple[int, str, bool]]:
    return [(int(pid), name, done == "True") for pid, name, done in
            (line.split("\t") for line in path.read_text().splitlines())]


def test_two_processes_share_the_steps_and_none_is_run_twice(tmp_path, monkeypatch):
    claims, log = tmp_path / "claims", tmp_path / "log"
    claims.mkdir()
    code = STEPS.format(claims=str(claims), log=str(log), names=NAMES, burn=BURN_S)
    namespace: dict = {}
    exec(code, namespace)  # the same steps here
    monkeypatch.setattr(warmup, "warm_up_steps", namespace["fake_steps"])
    monkeypatch.setattr(warmup, "WAIT_SHARE", 0.0)  # (a loaded test machine)
    other = subprocess.Popen([sys.executable, "-c", code + "w.warm_up_claiming("
                              f"{str(claims)!r}, {os.getpid()})"])
    try:
        warmup.warm_up(claims=claims, other=other)
        assert other.wait(30) == 0
    finally:
        if other.poll() is None:
            other.kill()
    runs = _log(log)
    mine = [(name, done) for pid, name, done in runs if pid == os.getpid()]
    theirs = [name for pid, name, _ in runs if pid == other.pid]
    assert theirs, "the other process ran no step"
    assert sorted(name for name, _ in mine) == sorted(NAMES)  # every one here, once
    # the other's steps were loaded here once it had done them, the others compiled here
    assert sorted(name for name, done in mine if done) == sorted(theirs)
    assert len(runs) == len(NAMES) + len(theirs)
    # the other went on from where it was: a step it did not claim was not left to it
    assert "arm run" not in theirs


def _claimed_by_the_other(claims: Path, monkeypatch) -> list[str]:
    """Steps "mine" and "theirs" in warm_up, "theirs" claimed in `claims` by the other;
    returns the log of the steps run here."""
    ran: list[str] = []
    monkeypatch.setattr(warmup, "warm_up_steps", lambda **_: [
        warmup.Step(name, lambda name=name: ran.append(name)) for name in ("theirs", "mine")])
    (claims / "theirs").touch()
    return ran


def test_a_step_of_the_other_is_waited_for_while_it_advances(tmp_path, monkeypatch):
    monkeypatch.setattr(warmup, "WAIT_SHARE", 0.05)  # (a loaded test machine)
    ran = _claimed_by_the_other(tmp_path, monkeypatch)
    other = subprocess.Popen([sys.executable, "-c", "import time\nend = time.monotonic() "
                              "+ 30\nwhile time.monotonic() < end: pass"])  # compiling
    try:
        threading.Timer(1.5, (tmp_path / "theirs.done").touch).start()
        started = time.monotonic()
        warmup.warm_up(claims=tmp_path, other=other)
        assert 1.4 < time.monotonic() - started < 10  # until the other was done
        assert ran == ["mine", "theirs"]  # its own first, then the other's, loaded
    finally:
        other.kill()
        other.wait()


def test_a_step_of_the_other_is_not_waited_for_when_it_is_starved_or_ended(
        tmp_path, monkeypatch):
    ran = _claimed_by_the_other(tmp_path, monkeypatch)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        started = time.monotonic()
        warmup.warm_up(claims=tmp_path, other=other)  # no CPU, as on a busy machine
        assert 0.9 < time.monotonic() - started < 5
        assert ran == ["mine", "theirs"]  # compiled here after all
    finally:
        other.kill()
        other.wait()
    started = time.monotonic()
    warmup.warm_up(claims=tmp_path, other=other)  # ended
    assert time.monotonic() - started < 0.5
    assert ran[2:] == ["theirs", "mine"]  # (both claimed now)


def test_what_the_other_has_left_of_its_step_decides_the_wait(tmp_path, monkeypatch):
    """The other process at half a core: a step it has nearly done (its claim holds its
    CPU time long before) is waited for; one it has just claimed, which it would finish
    later than this process compiling it at a whole core, is not."""
    monkeypatch.setattr(warmup, "LEAST_LEFT", 0.1)  # (a loaded test machine)
    ran = _claimed_by_the_other(tmp_path, monkeypatch)
    other = subprocess.Popen([sys.executable, "-c", "import time\nwhile True:\n"
                              "    end = time.monotonic() + 0.02\n"
                              "    while time.monotonic() < end: pass\n"
                              "    time.sleep(0.02)"])  # busy half the time
    try:
        (tmp_path / "theirs").write_text("-1000.0")  # spent more than the step's cost
        threading.Timer(1.5, (tmp_path / "theirs.done").touch).start()
        started = time.monotonic()
        warmup.warm_up(claims=tmp_path, other=other)
        assert 1.4 < time.monotonic() - started < 10 and ran == ["mine", "theirs"]
        (tmp_path / "theirs.done").unlink()
        (tmp_path / "theirs").write_text(repr(float("inf")))  # (nothing spent yet)
        started = time.monotonic()
        warmup.warm_up(claims=tmp_path, other=other)
        assert 0.9 < time.monotonic() - started < 5
        assert ran[2:] == ["theirs", "mine"] and not (tmp_path / "theirs.done").exists()
    finally:
        other.kill()
        other.wait()


def test_a_step_the_other_has_long_held_without_advancing_is_compiled_here_at_once(
        tmp_path, monkeypatch):
    """A loaded machine: the other claimed its step 3 s ago and has spent no CPU on it
    since; it would end it after this process has done its own steps and that one."""
    ran = _claimed_by_the_other(tmp_path, monkeypatch)
    (tmp_path / "theirs").write_text("1e9")  # (its CPU time then: none spent since)
    os.utime(tmp_path / "theirs", (time.time() - 3, time.time() - 3))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        started = time.monotonic()
        warmup.warm_up(claims=tmp_path, other=other)
        assert time.monotonic() - started < 0.9  # no second spent measuring its pace
        assert ran == ["theirs", "mine"]  # in its order, not last
    finally:
        other.kill()
        other.wait()


def test_the_other_process_ends_with_the_thread_that_started_it(tmp_path):
    """warm_up_apart's process is killed when the thread that started it ends (Linux):
    an application that crashed does not leave it compiling."""
    if not sys.platform.startswith("linux"):
        return
    pid_file = tmp_path / "pid"
    child = ("import os, time; import armdyn.core.warmup as w; "
             f"w.warm_up_steps = lambda **_: [w.Step('x', lambda: (open({str(pid_file)!r}, "
             "'w').write(str(os.getpid())), time.sleep(60)))]; "
             f"w.warm_up_claiming({str(tmp_path)!r}, os.getppid())")
    starter = ("import pathlib, subprocess, sys, time\n"
               f"subprocess.Popen([sys.executable, '-c', {child!r}])\n"
               f"while not pathlib.Path({str(pid_file)!r}).exists(): time.sleep(0.01)\n"
               "time.sleep(0.1)\n")  # (the file written, the child is in its step)
    subprocess.run([sys.executable, "-c", starter], check=True, timeout=60)
    pid = int(pid_file.read_text())
    end = time.monotonic() + 10
    while time.monotonic() < end and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
