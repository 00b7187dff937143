"""The command line (`armdyn inverse|simulate`) on robot and mechanism files.

Each run is checked against the core called directly (the CSV holds what the API
computes), and every bad input exits with 2 and one line naming the problem.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core import cli, load_mechanism, loop_residual, run_inverse_dynamics
from core.closed_chains import closed_chain_inverse_dynamics

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
