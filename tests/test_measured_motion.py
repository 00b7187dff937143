"""Measured motions: the log format of docs/motions.md, the smoothing differentiator
against analytic derivatives, bad logs refused by file, line and column
(core.io.motion_file, core.sim.measured)."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from armdyn.core import (Motion, MotionFileError, Quintic, cli, load_motion, load_robot,
                         run_inverse_dynamics)
from armdyn.core.io.results_io import write_trajectory_csv
from armdyn.core.sim.measured import filter_cutoff, window_for_cutoff

PUMA = load_robot("robots/puma560_saha.toml")
TWO = load_robot("robots/two_link_planar.toml")


def write_log(path, t, q, tau=None, header=None, comment="# a test log"):
    n = q.shape[1]
    cols = ["t"] + [f"q{j + 1}" for j in range(n)]
    table = [t[:, None], q]
    if tau is not None:
        cols += [f"tau{j + 1}" for j in range(n)]
        table.append(tau)
    lines = [comment, ",".join(header or cols)]
    lines += [",".join(f"{x:.12g}" for x in row) for row in np.hstack(table)]
    path.write_text("\n".join(lines) + "\n")
    return path


def sines(t, f=(0.3, 0.7)):
    """Two joints of sines (f Hz): q, qd, qdd analytic."""
    w = 2 * np.pi * np.array(f)
    A = np.array([0.8, 0.5])
    tt = t[:, None]
    return A * np.sin(w * tt), A * w * np.cos(w * tt), -A * w**2 * np.sin(w * tt)


def test_a_plain_log_gives_rates_and_accelerations_near_the_analytic_ones(tmp_path):
    t = np.arange(0, 6.0, 1e-3)  # 1 kHz
    q, qd, qdd = sines(t)
    noise = np.random.default_rng(1).normal(0.0, 1e-5, q.shape)  # an encoder's noise
    tau = np.column_stack([np.cos(t), np.sin(t)])
    motion = load_motion(write_log(tmp_path / "log.csv", t, q + noise, tau), model=TWO)
    assert isinstance(motion, Motion) and motion.t.shape == t.shape
    assert motion.q.shape == (t.size, 2) and np.allclose(motion.tau, tau)
    assert motion.cutoff == pytest.approx(10.0, rel=0.02) and motion.window[0] % 2 == 1
    inside = slice(max(motion.window), -max(motion.window))  # the ends are fitted by one window
    assert np.abs(motion.qd - qd)[inside].max() < 2e-3 * np.abs(qd).max()
    assert np.abs(motion.qdd - qdd)[inside].max() < 2e-2 * np.abs(qdd).max()


def test_the_differentiator_passes_below_its_cutoff_and_stops_above():
    rate = 1000.0
    for cutoff in (5.0, 10.0, 40.0):
        for deriv in (1, 2):
            window = window_for_cutoff(cutoff, rate, deriv)
            assert filter_cutoff(window, rate, deriv) <= cutoff < filter_cutoff(window - 2, rate,
                                                                                deriv)
    # measured on signals, not on the filter's formula: rate of a sine at f
    t = np.arange(0, 20.0, 1 / rate)

    def gains(f):
        """|qd| / |qd exact| and |qdd| / |qdd exact| of a sine at f Hz."""
        q = np.sin(2 * np.pi * f * t)[:, None]
        m = Motion.from_samples(t, q, cutoff=10.0)
        mid = slice(max(m.window), -max(m.window))
        w = 2 * np.pi * f
        return np.abs(m.qd[mid, 0]).max() / w, np.abs(m.qdd[mid, 0]).max() / w**2

    assert gains(1.0) == pytest.approx((1.0, 1.0), abs=0.01)
    assert gains(10.0) == pytest.approx((1 / math.sqrt(2),) * 2, abs=0.03)
    assert max(gains(60.0)) < 0.1


def test_armdyn_csv_is_a_log_and_runs_back_to_the_same_torques(tmp_path):
    run = run_inverse_dynamics(PUMA, Quintic(PUMA.q_home, PUMA.q_home + 0.4, 1.0), dt_out=0.01)
    write_trajectory_csv(run, PUMA, tmp_path / "run.csv")
    motion = load_motion(tmp_path / "run.csv", model=PUMA)
    assert motion.cutoff is None  # its own rates, not differentiated
    assert np.allclose(motion.qd, run.qd, rtol=1e-9, atol=1e-12)
    assert np.allclose(motion.tau, run.tau, rtol=1e-9, atol=1e-9)
    again = run_inverse_dynamics(PUMA, motion)
    assert np.allclose(again.t, run.t) and np.allclose(again.tau, run.tau, rtol=1e-8,
                                                       atol=1e-7)


def test_a_column_map_reads_other_headers(tmp_path):
    t = np.arange(0, 1.0, 0.01)
    q, _, _ = sines(t)
    path = write_log(tmp_path / "log.csv", t, q, header=["time", "A pos", "B pos"])
    with pytest.raises(MotionFileError, match="no time column"):
        load_motion(path)
    motion = load_motion(path, columns={"t": "time", "q1": "A pos", "q2": "B pos"})
    assert np.allclose(motion.q, q, atol=1e-11)


def test_jittered_times_are_resampled_and_said_so(tmp_path):
    t = np.arange(0, 2.0, 0.01)
    t[1:-1] += np.random.default_rng(2).uniform(-1e-3, 1e-3, t.size - 2)
    q = np.column_stack([t**2, np.sin(t)])
    motion = load_motion(write_log(tmp_path / "log.csv", t, q))
    assert np.allclose(np.diff(motion.t), np.diff(motion.t)[0])
    assert any("resampled" in w for w in motion.warnings)
    assert np.abs(motion.q[:, 1] - np.sin(motion.t)).max() < 1e-6


@pytest.mark.parametrize("edit, match", [
    (lambda lines: lines.__setitem__(12, lines[12].replace(lines[12].split(",")[1], "nan")),
     r"line 13, column 'q1': 'nan'"),
    (lambda lines: lines.__setitem__(12, lines[12].replace(lines[12].split(",")[2], "abc")),
     r"line 13, column 'q2': not a number \('abc'\)"),
    (lambda lines: lines.__setitem__(20, lines[19]), r"line 21, column 't': .* does not increase"),
    (lambda lines: lines.__delitem__(slice(30, 40)), r"line 31, column 't': a gap of 0.11 s"),
    (lambda lines: lines.__setitem__(5, lines[5] + ",1"), r"line 6: 4 cells, the header has 3"),
    (lambda lines: lines.__setitem__(1, "t,q1,q3"), r"line 2: columns q1..q1 and then q3"),
    (lambda lines: lines.__delitem__(slice(6, None)), r"at least 9 samples, got 4"),
], ids=["nan", "text", "not increasing", "gap", "row length", "missing joint", "few"])
def test_bad_logs_are_refused_by_line_and_column(tmp_path, edit, match):
    t = np.arange(0, 1.0, 0.01)
    q, _, _ = sines(t)
    path = write_log(tmp_path / "log.csv", t, q)
    lines = path.read_text().splitlines()
    edit(lines)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(MotionFileError, match=match) as err:
        load_motion(path)
    assert str(err.value).startswith(str(path))


def test_joint_count_and_partial_torques_are_refused(tmp_path):
    t = np.arange(0, 1.0, 0.01)
    q, _, _ = sines(t)
    path = write_log(tmp_path / "log.csv", t, q)
    with pytest.raises(MotionFileError, match=r"the log has 2 joints .* has 6"):
        load_motion(path, model=PUMA)
    partial = write_log(tmp_path / "p.csv", t, q, tau=q,
                        header=["t", "q1", "q2", "tau1", "other"])
    with pytest.raises(MotionFileError, match=r"column 'tau2': column 'tau2' is missing"):
        load_motion(partial)
    with pytest.raises(MotionFileError, match="cannot read"):
        load_motion(tmp_path / "none.csv")


def test_cli_inverse_runs_along_a_log(tmp_path, capsys):
    t = np.arange(0, 1.0, 0.002)
    q, qd, qdd = sines(t)
    log = write_log(tmp_path / "log.csv", t, q)
    out = tmp_path / "tau.csv"
    status = cli.main(["inverse", "robots/two_link_planar.toml", "--motion", str(log),
                       "-o", str(out)])
    err = capsys.readouterr().err
    assert status == 0, err
    assert re.search(r"Savitzky-Golay .* at 500 Hz, windows of \d+ and \d+ samples, "
                     r"cut-off (9\.9\d|10) Hz", err)
    written = np.loadtxt(out, delimiter=",", skiprows=3)
    assert np.allclose(written[:, 0], t)
    motion = load_motion(log)
    expect = run_inverse_dynamics(TWO, motion).tau
    assert np.allclose(written[:, 1 + 3 * 2:1 + 4 * 2], expect, rtol=1e-8, atol=1e-8)
    assert cli.main(["inverse", "robots/two_link_planar.toml", "--motion", str(log),
                     "--target", "1,2"]) == 2
    assert "leave out --target" in capsys.readouterr().err
    assert cli.main(["inverse", "robots/puma560_saha.toml", "--motion", str(log)]) == 2
    assert "the log has 2 joints" in capsys.readouterr().err


def test_cli_inverse_takes_a_law(tmp_path, capsys):
    out = tmp_path / "q.csv"
    assert cli.main(["inverse", "robots/two_link_planar.toml", "--target", "30,20", "-T", "1",
                     "--dt", "0.1", "--law", "quintic", "-o", str(out)]) == 0
    written = np.loadtxt(out, delimiter=",", skiprows=3)
    q, qd, _ = Quintic(TWO.q_home, TWO.q_home + np.radians([30, 20]), 1.0).sample(written[:, 0])
    assert np.allclose(written[:, 1:3], q) and np.allclose(written[:, 3:5], qd)
