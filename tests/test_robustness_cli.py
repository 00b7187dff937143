"""Robustness, round 2, on the command line: every case the issue quotes exits non-zero
with one line naming the option, never a traceback, and stops within seconds.

    armdyn inverse ... --target 1e300   exited 0 with a CSV of nan
    armdyn inverse ... --target 1e12    gave 1.45e19 N m
    -T 1e308                            printed an OverflowError traceback
    -T 1e5                              was accepted and grew to 6.4 GB
    --rtol 1e-30, --damping 1e5, 1e300  ran past 120 s
    --rtol 1e300 --atol 1e300           exited 0 with garbage
    --qd0 1e6                           ran 82 s and exited 0
"""
from __future__ import annotations

import re

import subprocess
import sys
import time
from pathlib import Path

import pytest

from armdyn.core import Link, Robot, cli, save_robot

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
PUMA = str(ROBOTS / "puma560_saha.toml")
SCARA = str(ROBOTS / "scara.toml")


def run(capsys, *argv) -> tuple[int, str, float]:
    start = time.perf_counter()
    code = cli.main([str(a) for a in argv])
    took = time.perf_counter() - start
    return code, capsys.readouterr().err, took


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("armdyn: ") and "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("argv, words", [
    (["inverse", PUMA, "--target", "1e300,0,0,0,0,0"],
     "--target: joint 1 ('waist') is 1.745e+298 rad, beyond the physical bound of 10000 rad"),
    (["inverse", PUMA, "--target", "1e12,0,0,0,0,0"],
     "--target: joint 1 ('waist') is 1.745e+10 rad, beyond the physical bound of 10000 rad"),
    (["inverse", PUMA, "--target", "1e5,0,0,0,0,0", "-T", "0.1"],
     "--target (the motion's peak rate 2 |q_end - q_start| / duration): joint 1 ('waist') "
     "is 3.491e+04 rad/s, beyond the physical bound of 10000 rad/s"),
    (["simulate", PUMA, "-T", "1e308"],
     "-T / --dt = 1e+308 s / 0.01 s asks for more than 10,000,000 samples; use a larger "
     "--dt or a shorter -T"),
    (["inverse", PUMA, "--target", "90,0,0,0,0,0", "-T", "1e308"],
     "-T / --dt = 1e+308 s / 0.01 s asks for more than 10,000,000 samples"),
    (["simulate", PUMA, "--rtol", "1e-30"], "--rtol must be between 1e-14 and 0.01, got 1e-30"),
    (["simulate", PUMA, "--rtol", "1e300", "--atol", "1e300"],
     "--rtol must be between 1e-14 and 0.01, got 1e+300"),
    (["simulate", PUMA, "--atol", "1e-300"], "--atol must be between 1e-14 and 0.01"),
    (["simulate", PUMA, "--qd0", "1e6,0,0,0,0,0"],
     "--qd0: joint 1 ('waist') is 1.745e+04 rad/s, beyond the physical bound of 10000 rad/s"),
    (["simulate", PUMA, "--q0", "0,1e9,0,0,0,0"],
     "--q0: joint 2 ('shoulder') is 1.745e+07 rad, beyond the physical bound of 10000 rad"),
])
def test_absurd_input_is_refused_in_one_line_with_status_2(tmp_path, capsys, argv, words):
    out = tmp_path / "out.csv"
    code, err, took = run(capsys, *argv, "-o", out)
    assert code == 2
    assert words in one_line(err)
    assert not out.exists() and took < 5.0


@pytest.mark.parametrize("damping", ["1e6", "1e300"])
def test_a_stiff_run_stops_within_seconds_naming_time_step_and_joint(tmp_path, capsys,
                                                                     damping):
    """Damping of 1e6 N m s/rad makes the wrist's time constant a tenth of a microsecond:
    the integrator's steps shrink to match and the 10 s run would take many minutes (the
    issue's 1e5 now finishes within the budget, in ~90 s; 1e300: the
    step collapses to 1e-300 s). The run stops once its pace projects it past the
    budget, with status 1 and the samples so far."""
    out = tmp_path / "stiff.csv"
    code, err, took = run(capsys, "simulate", PUMA, "--damping", damping, "-o", out)
    assert code == 1
    line = one_line(err)
    assert line.startswith("armdyn: simulation stopped at t = ")
    assert "more than its wall-time budget of 120 s" in line
    assert "the step size is " in line and "the fastest joint is " in line
    assert re.search(r"\(\d+ samples? written\)", line) and out.exists()
    assert took < 10.0  # (a half-second window, after the first chunk)


def test_max_wall_time_sets_the_budget(tmp_path, capsys):
    code, err, took = run(capsys, "simulate", PUMA, "--damping", "1e4", "-T", "10",
                          "--max-wall-time", "0.5", "-o", tmp_path / "a.csv")
    assert code == 1 and "wall-time budget of 0.5 s" in one_line(err)
    code, err, _ = run(capsys, "simulate", PUMA, "--max-wall-time", "0", "-o",
                       tmp_path / "b.csv")
    assert code == 2 and "--max-wall-time" in one_line(err)


def test_a_run_whose_samples_and_csv_exceed_the_memory_is_refused(tmp_path, capsys):
    """The issue's -T 1e5 (10 million samples), on a 60-joint arm so that the estimate
    (about 160 GB) exceeds half of any machine's available memory."""
    arm = Robot(name="long arm", links=tuple(
        Link(name=f"l{k}", a=0.1, mass=1.0, com=(-0.05, 0.0, 0.0)) for k in range(60)))
    path = tmp_path / "long.toml"
    save_robot(arm, path)
    for command in (["simulate", path], ["inverse", path, "--target", ",".join(["1"] * 60)]):
        code, err, took = run(capsys, *command, "-T", "1e5", "-o", tmp_path / "x.csv")
        assert code == 2 and took < 5.0
        line = one_line(err)
        assert line.startswith("armdyn: -T / --dt asks for 10,000,001 samples: the run and its "
                               "CSV would need about")
        assert "GB this machine has available; use a larger --dt or a shorter -T" in line


def test_targets_and_starts_outside_the_limits_are_warned_about(tmp_path, capsys):
    code, err, _ = run(capsys, "inverse", SCARA, "--target", "0,0,0.3,0", "-T", "1",
                       "-o", tmp_path / "i.csv")
    assert code == 0
    assert ("armdyn: warning: --target: joint 3 ('quill') is 0.09 m past its upper limit "
            "(0.21 m)") in err.splitlines()
    code, err, _ = run(capsys, "simulate", SCARA, "--q0", "0,0,0.3,0", "--stops", "off",
                       "-T", "0.1", "-o", tmp_path / "s.csv")
    assert code == 0
    assert ("armdyn: warning: --q0: joint 3 ('quill') is 0.09 m past its upper limit (0.21 m); "
            "its stops are off") in err.splitlines()


def test_the_installed_command_prints_no_traceback():
    """-T 1e308 printed an OverflowError traceback from output_grid."""
    done = subprocess.run([sys.executable, "-m", "armdyn.core.cli", "simulate", PUMA,
                           "-T", "1e308"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("armdyn: -T / --dt = 1e+308 s") and "Traceback" not in \
        done.stderr
    assert done.stdout == ""
