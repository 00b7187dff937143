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


# ----- floating systems: --target names the joints core's `target_joints` names ---------

def _blocks(header: list[str], table: np.ndarray) -> dict[str, np.ndarray]:
    """The CSV's columns by the docs' groups: q, qd, qdd, tau by their symbols; the
    cut-joint forces; the momentum columns."""
    def where(test):
        return table[:, [i for i, h in enumerate(header) if test(h)]]
    out = {s: where(lambda h, s=s: h.split(" ")[0].rstrip("0123456789") == s)
           for s in ("q", "qd", "qdd", "tau")}
    out["lambda"] = where(lambda h: h.startswith("lambda "))
    out["momentum"] = where(lambda h: h.split(" ")[0] in ("mass", "linear", "angular"))
    return out


def test_the_cars_inverse_run_is_the_api_run_of_the_same_motion(tmp_path, capsys):
    """`armdyn inverse car_jalon --target -20`: the steering column (its one actuated
    joint) turns to -20 deg, the chassis, suspensions and wheels follow, loops closed;
    the CSV holds the numbers of `run_inverse_dynamics` called with that target."""
    out = tmp_path / "car.csv"
    code, _, err = run(capsys, "inverse", "car_jalon", "--target", "-20", "-T", "1",
                       "--dt", "0.1", "-o", out)
    assert code == 0, err
    car = load_mechanism(ROBOTS / "car_jalon.toml")
    column = car.joint_names.index("steering column")
    q_end = car.q_home.copy()
    q_end[car.values_of([column])] = np.radians(-20.0)
    ref = run_inverse_dynamics(car, car.q_home, q_end, 1.0, dt_out=0.1)
    header, table = read_csv(out)
    # the base pose (position, quaternion), the column's value to torque, the residual
    assert header[1:8] == [f"q1 chassis {e} [{'m' if e in 'xyz' else '-'}]"
                           for e in ("x", "y", "z", "qx", "qy", "qz", "qw")]
    for name in ("q3 steering column [rad]", "qd3 steering column [rad/s]",
                 "qdd3 steering column [rad/s^2]", "tau3 steering column [N m]",
                 "loop residual [m or rad]", "angular momentum z [kg m^2/s]"):
        assert name in header
    got = _blocks(header, table)
    for key, want in (("q", ref.q), ("qd", ref.qd), ("qdd", ref.qdd), ("tau", ref.tau),
                      ("lambda", ref.cut_forces), ("momentum", ref.momentum)):
        assert got[key].shape == want.shape, key
        np.testing.assert_allclose(got[key], want, rtol=1e-9,
                                   atol=1e-9 * max(1.0, float(np.abs(want).max())), err_msg=key)
    np.testing.assert_allclose(table[:, 0], ref.t)
    assert table[-1, header.index("q3 steering column [rad]")] == pytest.approx(
        np.radians(-20.0), abs=1e-10)
    assert table[:, header.index("loop residual [m or rad]")].max() < 1e-10
    # nothing drives the chassis; the summary's peak torque is the column's
    assert np.all(got["tau"][:, :6] == 0.0)
    peak = np.abs(table[:, header.index("tau3 steering column [N m]")]).max()
    assert f"peak |tau| {peak:.4g} N m at joint 3;" in err


def _astronaut_target(astro, moves: dict[str, float]) -> tuple[list[int], np.ndarray]:
    """The astronaut's revolute joints and a target of theirs in degrees: home, with the
    joints named in `moves` moved by so many degrees."""
    joints = [j for j, kind in enumerate(astro.joint_types) if kind.value == "revolute"]
    degrees = np.degrees(astro.q_home[astro.values_of(joints)])
    for name, by in moves.items():
        degrees[joints.index(astro.joint_names.index(name))] += by
    return joints, degrees


def test_the_astronauts_arms_turn_its_body_and_its_momentum_stays_zero(tmp_path, capsys):
    """The astronaut (no gravity) at rest moves its arms: its pelvis is not driven, so the
    body turns the other way and the angular momentum about the mass centre stays zero,
    and the mass centre stays put (computed by Pinocchio from the CSV's base motion and
    joint rates: the run's hybrid dynamics does not impose it)."""
    pin = pytest.importorskip("pinocchio")
    from pinocchio_reference import pinocchio_tree_model, q_to_pin, v_to_pin

    astro = load_mechanism(ROBOTS / "astronaut.toml")
    moves = {"left shoulder abduction": 80.0, "right shoulder flexion": -70.0,
             "left elbow": 60.0}
    joints, degrees = _astronaut_target(astro, moves)
    out = tmp_path / "astronaut.csv"
    code, _, err = run(capsys, "inverse", "astronaut", "--target",
                       ",".join(f"{v:.12g}" for v in degrees), "-T", "1", "--dt", "0.05",
                       "-o", out)
    assert code == 0, err
    header, table = read_csv(out)
    got = _blocks(header, table)
    q, qd = got["q"], got["qd"]
    np.testing.assert_allclose(np.degrees(q[-1, astro.values_of(joints)]), degrees, atol=1e-7)
    model, ids = pinocchio_tree_model(astro)
    data = model.createData()

    def centroidal(v):
        h = [pin.computeCentroidalMomentum(model, data, q_to_pin(astro, model, ids, qi),
                                           v_to_pin(astro, model, ids, vi)).copy()
             for qi, vi in zip(q, v)]
        com = [pin.centerOfMass(model, data, q_to_pin(astro, model, ids, qi)) for qi in q]
        return np.array([f.angular for f in h]), np.array([f.linear for f in h]), np.array(com)

    L, p, c = centroidal(qd)
    held = qd.copy()
    held[:, astro.rates_of([0])] = 0.0  # the same arm motion with the pelvis held still
    L_held = np.abs(centroidal(held)[0]).max()
    assert L_held > 1.0  # kg m^2/s: the arms' swing alone has a momentum
    assert np.abs(L).max() < 1e-6 * L_held
    assert np.abs(p).max() < 1e-6 * L_held
    np.testing.assert_allclose(c, c[:1].repeat(len(c), axis=0), atol=1e-8)
    turn = 2 * np.degrees(np.arccos(min(1.0, abs(float(q[0, 3:7] @ q[-1, 3:7])))))
    assert turn > 1.0  # the body turned (degrees)


def test_a_floating_systems_target_of_the_wrong_count_names_the_joints(tmp_path, capsys):
    out = tmp_path / "never.csv"
    code, _, err = run(capsys, "inverse", "car_jalon", "--target=-20,5", "-T", "1", "-o", out)
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1
    assert "--target: expected 1 value," in err and "joints 3 'steering column'" in err
    assert "'chassis'" in err and "got 2" in err
    code, _, err = run(capsys, "inverse", "astronaut", "--start", "10,20", "--target",
                       ",".join(["0"] * 39), "-o", out)
    assert code == 2 and not out.exists()
    assert "--start: expected 39 values" in err and "13 'left shoulder abduction'" in err
    assert "the free joint 'pelvis'" in err
    # what core cannot run for a floating system is refused by name: a log, a sweep
    log = tmp_path / "log.csv"
    log.write_text("t,q1\n0,0\n0.01,0\n")
    for argv in (("inverse", "astronaut", "--motion", log, "-o", out),
                 ("identify", "astronaut", log, "-o", tmp_path / "id.toml"),
                 ("sweep", "inverse", "astronaut", "--target", "0", "--vary", "T=1,2",
                  "-o", out)):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "'pelvis'" in err and err.count("\n") == 1, (argv, err)
    assert not out.exists()


def test_simulate_a_floating_system_from_a_typed_pose_keeps_its_momentum(tmp_path, capsys):
    """--q0 and --qd0 of the astronaut: one per revolute joint, the pelvis at home, at
    rest; the written run keeps the angular momentum the typed state has."""
    from armdyn.core import momentum

    astro = load_mechanism(ROBOTS / "astronaut.toml")
    joints, degrees = _astronaut_target(astro, {"left shoulder abduction": 40.0})
    rates = np.zeros(len(joints))
    rates[joints.index(astro.joint_names.index("right elbow"))] = 90.0  # deg/s
    out = tmp_path / "fall.csv"
    code, _, err = run(capsys, "simulate", "astronaut", "--q0", ",".join(map(str, degrees)),
                       "--qd0", ",".join(map(str, rates)), "-T", "0.5", "--dt", "0.05",
                       "-o", out)
    assert code == 0, err
    header, table = read_csv(out)
    got = _blocks(header, table)
    q0 = astro.q_home.copy()
    q0[astro.values_of(joints)] = np.radians(degrees)
    qd0 = np.zeros(astro.nv)
    qd0[astro.rates_of(joints)] = np.radians(rates)
    np.testing.assert_allclose(got["q"][0], q0, atol=1e-9)
    np.testing.assert_allclose(got["qd"][0], qd0, atol=1e-9)
    L0 = momentum(astro, q0, qd0).angular
    assert np.linalg.norm(L0) > 1e-3
    L = momentum(astro, got["q"], got["qd"]).angular
    np.testing.assert_allclose(L, np.tile(L0, (len(L), 1)), atol=1e-6 * np.linalg.norm(L0))
