"""The command line (`armdyn inverse|simulate`) on robot and mechanism files.

Each run is checked against the core called directly (the CSV holds what the API
computes), and every bad input exits with 2 and one line naming the problem.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import cli, load_mechanism, loop_residual, run_inverse_dynamics
from armdyn.core import closed_chain_inverse_dynamics

ROBOTS = Path(__file__).resolve().parents[1] / "robots"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def read_csv(path) -> tuple[list[str], np.ndarray]:
    lines = Path(path).read_text().splitlines()
    header = [h for h in lines[2].split(",")]
    return header, np.loadtxt(path, delimiter=",", skiprows=3, ndmin=2)


def test_inverse_of_a_closed_chain_writes_cut_forces_and_residual(tmp_path, capsys):
    out = tmp_path / "fivebar.csv"
    code, _, err = run(capsys, "inverse", ROBOTS / "fivebar_saha.toml", "--target", "90,70.3",
                       "-T", "2", "--dt", "0.1", "-o", out)
    assert code == 0, err
    assert "largest loop residual" in err and str(out) in err
    header, table = read_csv(out)
    mech = load_mechanism(ROBOTS / "fivebar_saha.toml")
    m = mech.kernel.m
    assert [h for h in header if h.startswith("lambda")] and len(
        [h for h in header if h.startswith("lambda")]) == m
    assert header[-1] == "loop residual [m or rad]"
    assert table.shape == (21, 1 + 4 * mech.n + 3 + m + 1)
    # the same run through the API: the driven joints reach the target, the rest follow
    q_end = mech.q_home.copy()
    q_end[list(mech.actuated)] = np.radians([90.0, 70.3])
    ref = run_inverse_dynamics(mech, mech.q_home, q_end, 2.0, dt_out=0.1)
    n = mech.n
    np.testing.assert_allclose(table[:, 1:1 + n], ref.q, atol=1e-9)
    np.testing.assert_allclose(table[:, 1 + 3 * n:1 + 4 * n], ref.tau, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(table[:, -1 - m:-1], ref.cut_forces, rtol=1e-8, atol=1e-8)
    assert np.all(table[:, -1] < 1e-9)
    # a sample's forces are those of Saha's subsystem recursion at that state
    s = 7
    res = closed_chain_inverse_dynamics(mech, ref.q[s], ref.qd[s], ref.qdd[s])
    np.testing.assert_allclose(table[s, 1 + 3 * n:1 + 4 * n], res.tau, rtol=1e-8, atol=1e-8)


def test_simulate_a_mechanism_keeps_its_loops_closed(tmp_path, capsys):
    out = tmp_path / "scraper.csv"
    code, _, err = run(capsys, "simulate", ROBOTS / "carpet_scraper_saha.toml", "-T", "0.5",
                       "-o", out)
    assert code == 0, err
    header, table = read_csv(out)
    mech = load_mechanism(ROBOTS / "carpet_scraper_saha.toml")
    n = mech.n
    for q in table[::10, 1:1 + n]:
        assert np.max(np.abs(loop_residual(mech, q))) < 1e-8
    assert np.max(table[:, -1]) < 1e-9


def test_robot_files_run_as_before(tmp_path, capsys):
    out = tmp_path / "puma.csv"
    code, _, err = run(capsys, "inverse", ROBOTS / "puma560_saha.toml", "--target",
                       "90,45,0,0,0,0", "-T", "1", "--dt", "0.5", "-o", out)
    assert code == 0, err
    header, table = read_csv(out)
    assert not [h for h in header if h.startswith("lambda")]
    assert table.shape == (3, 1 + 4 * 6 + 3)


@pytest.mark.parametrize("argv, words", [
    (["inverse", ROBOTS / "fivebar_saha.toml", "--target", "90"], "expected 4 values"),
    (["inverse", ROBOTS / "fivebar_saha.toml", "--target", "90,nan"], "finite"),
    (["simulate", ROBOTS / "no_such_file.toml"], "no such file"),
    (["simulate", ROBOTS / "fourbar.toml", "--q0", "1,2"], "expected 3 values"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and words in err


# --- the output path (issue #8 and #9): messages name the path as the user typed it ---

def test_a_directory_as_output_is_refused_as_such(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    code, out, err = run(capsys, "inverse", ROBOTS / "two_link_planar.toml", "--target", "10,20",
                         "-T", "0.2", "-o", "results")
    assert code == 2 and err.count("\n") == 1
    assert "results" in err and "is a directory" in err and ".tmp" not in err
    assert os.listdir(tmp_path / "results") == []


def test_a_missing_output_folder_is_named_as_given(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = os.path.join("no_such_folder", "out.csv")
    code, out, err = run(capsys, "simulate", ROBOTS / "two_link_planar.toml", "-T", "0.2",
                         "-o", target)
    assert code == 2 and err.count("\n") == 1
    assert target in err and str(tmp_path) not in err and ".tmp" not in err


def test_a_failed_write_names_the_output_path(tmp_path, capsys):
    full = tmp_path / "full"  # the device of /dev/full (every write: no space left)
    try:
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        os.close(os.open(full, os.O_WRONLY))
    except OSError as e:
        pytest.skip(f"cannot make a device node here: {e}")
    code, out, err = run(capsys, "inverse", ROBOTS / "two_link_planar.toml", "--target", "10,20",
                         "-T", "0.2", "-o", full)
    assert code == 2 and err.count("\n") == 1
    assert f"cannot write {full}" in err and "No space left on device" in err
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["full"]


def test_dev_stdout_as_output_writes_to_stdout(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    argv = [sys.executable, "-m", "armdyn.core.cli", "inverse", str(ROBOTS / "two_link_planar.toml"),
            "--target", "10,20", "-T", "0.2", "--dt", "0.1"]
    ref = subprocess.run(argv + ["-o", "-"], cwd=ROBOTS.parent, env=env, capture_output=True,
                         timeout=120)
    assert ref.returncode == 0, ref.stderr.decode()
    run_ = subprocess.run(argv + ["-o", "/dev/stdout"], cwd=ROBOTS.parent, env=env,
                          capture_output=True, timeout=120)
    assert run_.returncode == 0, run_.stderr.decode()
    assert run_.stdout == ref.stdout and run_.stdout.startswith(b"# ArmDyn inverse-dynamics")
    assert b"wrote /dev/stdout" in run_.stderr


def test_a_symbolic_link_as_output_stays_a_link(tmp_path, capsys):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to("real.csv")
    code, _, err = run(capsys, "inverse", ROBOTS / "two_link_planar.toml", "--target", "10,20",
                       "-T", "0.2", "--dt", "0.1", "-o", link)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == "real.csv"
    header, table = read_csv(real)
    assert table.shape == (3, 1 + 4 * 2 + 3)


def test_a_damped_run_reports_dissipated_energy_not_drift(tmp_path, capsys):
    out = tmp_path / "damped.csv"
    code, _, err = run(capsys, "simulate", ROBOTS / "two_link_planar.toml", "-T", "2",
                       "--damping", "0.5", "-o", out)
    assert code == 0, err
    assert "drift" not in err
    header, table = read_csv(out)
    total = table[:, header.index("total energy [J]")]
    dissipated = total[0] - total[-1]
    assert dissipated > 0.1
    assert f"dissipated {dissipated:.4g} J" in err
    # an undamped run still reports the drift of its total energy
    code, _, err = run(capsys, "simulate", ROBOTS / "two_link_planar.toml", "-T", "2",
                       "-o", out)
    assert code == 0, err
    assert "total-energy drift" in err and "dissipated" not in err


def test_simulate_reads_a_urdf(tmp_path):
    """The CLI opens URDF files as the window does (core.io.urdf)."""
    from armdyn.core import load_robot, load_urdf, save_urdf, simulate
    urdf = tmp_path / "arm.urdf"
    save_urdf(load_robot(ROBOTS / "puma560_saha.toml"), urdf)
    out = tmp_path / "run.csv"
    assert cli.main(["simulate", str(urdf), "-T", "0.2", "-o", str(out)]) == 0
    assert "21 samples" in out.read_text().splitlines()[0]
    a = np.loadtxt(out, delimiter=",", skiprows=3)
    ref = simulate(load_urdf(urdf), 0.2)
    assert a.shape[0] == 21 and np.allclose(a[:, 1:7], ref.q, rtol=1e-9, atol=1e-9)  # CSV: 10 digits
