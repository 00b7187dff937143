"""Sweeps (`core.sweep`, `armdyn sweep`): each point against physics and against a run of
its own, the same bits on one process, the local pool and Dask, and bad grids refused
before any work.

Oracles: a point mass at the tool adds J_v^T (-m g) to the torques that hold a pose
(linear in m; J_v the Jacobian of the point the mass sits at, from `tool_jacobian` and
the tool's rotation, not from the sweep); a point's reduction is recomputed here from a
`run_inverse_dynamics` of a model built here with `dataclasses.replace`.
"""
from __future__ import annotations

import io
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import (FreeFallRun, InverseRun, SweepCancelled, SweepError, cli,
                         forward_kinematics, gravity_torques, load_motion, load_robot,
                         run_inverse_dynamics, sweep, tool_jacobian)
from armdyn.core.sweeps import engines
from armdyn.core.sweeps.fields import LINK_FIELDS, field_choices, resolve_field
from armdyn.core.sweeps.sweep import SweepResult, make_plan, sweep_chunks

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
PUMA = ROBOTS / "puma560_saha.toml"
POSE = np.array([0.3, -0.6, 0.9, 0.2, -0.4, 0.5])  # rad: no joint at a symmetric angle


@pytest.fixture(scope="module")
def puma():
    return load_robot(PUMA)


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# ----- physics: the payload ---------------------------------------------------------------

@pytest.mark.parametrize("at", [(0.0, 0.0, 0.0), (0.05, -0.02, 0.1)])
def test_a_payload_adds_torques_linear_in_its_mass_by_the_jacobian_of_its_point(puma, at):
    """Held still at POSE, the torques are gravity's: tau(m) = tau(0) + J_v(r)^T (-m g),
    r the payload's point; peak |tau| is their size."""
    masses = np.linspace(0.0, 5.0, 6)
    vary = {"payload.mass": masses}
    if any(at):
        vary.update({f"payload.com.{a}": [v] for a, v in zip("xyz", at)})
    table = sweep(puma, InverseRun(target=POSE, start=POSE, duration=0.2, dt=0.05), vary,
                  workers=1, frame=False)
    assert list(table["status"]) == ["ok"] * len(masses)
    kin = forward_kinematics(puma, POSE)
    R = kin.end_effector[:3, :3]
    J = tool_jacobian(puma, POSE)
    Jv = J[3:] + np.cross(J[:3].T, R @ np.array(at)).T  # v_r = v_o + w x (R r)
    per_kg = Jv.T @ (-np.array(puma.gravity))
    held = gravity_torques(puma, POSE)
    expected = np.abs(held[None, :] + masses[:, None] * per_kg[None, :])
    got = np.column_stack([table[f"peak_tau_{j + 1}"] for j in range(puma.n)])
    scale = np.abs(held).max() + masses.max() * np.abs(per_kg).max()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10 * scale)
    assert abs(per_kg[1]) > 1.0  # N m per kg: the test sees the payload at the shoulder
    for j in range(puma.n):  # held still: no speed, no power, RMS equal to the peak
        np.testing.assert_array_equal(table[f"peak_qd_{j + 1}"], 0.0)
        np.testing.assert_array_equal(table[f"peak_power_{j + 1}"], 0.0)
        np.testing.assert_allclose(table[f"rms_tau_{j + 1}"], got[:, j], rtol=1e-12,
                                   atol=1e-12 * scale)


def test_each_point_is_a_run_of_its_own_model(puma):
    """Every point's reduction against `run_inverse_dynamics` of a model and a motion
    built here, reduced here (trapezoidal RMS over the samples)."""
    target = np.array([0.4, -0.5, 0.7, 0.0, 0.3, 0.0])
    vary = {"2.mass": [10.0, 25.0], "T": [1.0, 1.5], "target.3": [0.2, 1.1]}
    table = sweep(puma, InverseRun(target=target, duration=3.0, dt=0.01), vary, workers=1,
                  frame=False)
    assert table.shape == (8,) and set(table["status"]) == {"ok"}
    i = 0
    for mass in vary["2.mass"]:
        links = list(puma.links)
        links[1] = replace(links[1], mass=mass)
        model = puma.with_links(links)
        for T in vary["T"]:
            for t3 in vary["target.3"]:
                q_end = target.copy()
                q_end[2] = t3
                traj = run_inverse_dynamics(model, puma.q_home, q_end, T, 0.01)
                row = table[i]
                assert (row["2.mass"], row["T"], row["target.3"]) == (mass, T, t3)
                rms = np.sqrt(np.trapezoid(traj.tau ** 2, traj.t, axis=0) / T)
                for j in range(puma.n):
                    scale = np.abs(traj.tau).max()
                    assert row[f"peak_tau_{j + 1}"] == pytest.approx(
                        np.abs(traj.tau[:, j]).max(), rel=1e-12, abs=1e-12 * scale)
                    assert row[f"rms_tau_{j + 1}"] == pytest.approx(rms[j], rel=1e-9,
                                                                    abs=1e-12 * scale)
                    assert row[f"peak_qd_{j + 1}"] == pytest.approx(
                        np.abs(traj.qd[:, j]).max(), rel=1e-12, abs=1e-15)
                    assert row[f"peak_power_{j + 1}"] == pytest.approx(
                        np.abs(traj.tau[:, j] * traj.qd[:, j]).max(), rel=1e-12,
                        abs=1e-12 * scale)
                # the cycloid's peak speed: 2 |q_end - q_start| / T (seed 001 eq. 22)
                np.testing.assert_allclose(
                    [row[f"peak_qd_{j + 1}"] for j in range(puma.n)],
                    2 * np.abs(q_end - puma.q_home) / T, rtol=1e-3)
                i += 1


def test_a_points_model_and_run_are_the_grid_values_and_give_its_row(puma):
    """`SweepResult.point(i)` (what the window's Sweep panel runs in the Run panel): the
    point's model carries the varied link mass and the payload (the last link's mass
    grows by it, the arm's total mass too), its run the varied duration and target
    joint; a run of it here, reduced with NumPy, gives the point's row."""
    target = np.array([0.4, -0.5, 0.7, 0.0, 0.3, 0.0])
    run = InverseRun(target=target, start=POSE, duration=2.0, dt=0.01)
    vary = {"payload.mass": [0.0, 4.0], "2.mass": [10.0, 25.0], "T": [1.0, 1.5],
            "target.3": [0.2, 1.1]}
    result = result_of(puma, run, vary, workers=1)
    for i in (0, 5, 10, 15):
        values = dict(zip(result.columns, result.values[i]))
        model, point_run = result.point(i)
        assert model.links[1].mass == values["2.mass"]
        assert model.links[-1].mass == pytest.approx(puma.links[-1].mass
                                                     + values["payload.mass"], rel=1e-15)
        assert model.total_mass == pytest.approx(puma.total_mass - puma.links[1].mass
                                                 + values["2.mass"] + values["payload.mass"])
        assert point_run.duration == values["T"] and point_run.start == tuple(POSE)
        assert point_run.target[2] == values["target.3"]
        assert np.delete(point_run.target, 2).tolist() == np.delete(target, 2).tolist()
        traj = run_inverse_dynamics(model, POSE, np.array(point_run.target), values["T"],
                                    0.01)
        np.testing.assert_allclose(result.peak_torques()[i], np.abs(traj.tau).max(axis=0),
                                   rtol=1e-12, atol=1e-12 * np.abs(traj.tau).max())


def test_the_field_choices_are_every_field_the_sweep_accepts(puma):
    """`field_choices`: each name resolves, no two set the same thing, and together they
    cover the registry: per link every LINK_FIELDS entry (limits where a link has them),
    the payload's four, and per run kind its fields, whole and per joint."""
    for kind, run_names in (("inverse", ["T", "target", "start"]),
                            ("free-fall", ["T", "q0", "qd0", "damping"])):
        names = field_choices(puma, kind)
        assert len(set(names)) == len(names)
        refs = [resolve_field(name, puma, kind) for name in names]
        with_limits = sum(link.limits is not None for link in puma.links)
        per_link = len(LINK_FIELDS) * puma.n - 2 * (puma.n - with_limits)
        per_run = len(run_names) * (1 + puma.n) - puma.n  # T has no joints
        assert len(names) == per_run + 4 + per_link
        assert sum(r.what == "link" for r in refs) == per_link
        assert {r.key for r in refs if r.what == "run"} == set(run_names)
        # a joint's value and its link's mass resolve to that joint
        assert resolve_field(f"{puma.n}.mass", puma, kind).joint == puma.n - 1


def test_the_envelope_is_the_largest_value_over_the_other_axes(puma):
    """`SweepResult.envelope` against a loop over the table's rows: per value of the kept
    axes, the largest of the rows with that value; a failed point is left out."""
    run, vary = grid_inverse()
    result = result_of(puma, run, vary, workers=1)
    result.status[3] = "failed here"  # as a point that failed: left out
    table = result.table(frame=False)
    ok = table["status"] == "ok"
    names = list(vary)
    for keep in ([0], [2], [0, 2], [2, 0], [1, 2]):
        env = result.envelope("peak_tau_2", keep)
        assert env.shape == tuple(len(result.plan.axes[a]) for a in keep)
        for index in np.ndindex(env.shape):
            rows = ok.copy()
            for a, k in zip(keep, index):
                rows &= table[names[a]] == result.plan.axes[a].values[k]
            assert env[index] == table["peak_tau_2"][rows].max()
    peaks = np.array([[row[f"peak_tau_{j + 1}"] for j in range(puma.n)] for row in table[ok]])
    assert result.worst_joint() == np.unravel_index(np.argmax(peaks), peaks.shape)[1]


def test_a_snapshot_keeps_the_points_finished_when_it_was_taken(puma):
    run, vary = grid_inverse()
    gen = sweep_chunks(puma, run, vary, workers=1)
    progress = next(gen)
    live = progress.result
    copy = live.snapshot()
    done = copy.done
    assert 0 < done < copy.size
    for _ in gen:  # the sweep goes on filling its own result
        pass
    assert live.done == live.size and copy.done == done
    kept = copy.finished
    assert copy.rows[kept].tobytes() == live.rows[kept].tobytes()
    assert np.isnan(copy.rows[~kept]).all() and set(copy.status[~kept]) == {"cancelled"}


@pytest.mark.parametrize("samples", [1, 2, 57])
def test_the_envelope_kernel_is_numpys_reduction(samples):
    """Peak, trapezoidal RMS, peak speed and power in one compiled pass, against NumPy on
    an uneven time grid (the last step of a run is shorter)."""
    from armdyn.core.kernels.envelope import run_envelope
    rng = np.random.default_rng(samples)
    t = np.cumsum(rng.uniform(0.001, 0.02, samples)) if samples > 1 else np.array([0.3])
    tau, qd = rng.normal(scale=50.0, size=(2, samples, 3))
    out = run_envelope(t, tau, qd, np.empty(12))
    rms = (np.sqrt(np.trapezoid(tau ** 2, t, axis=0) / (t[-1] - t[0])) if samples > 1
           else np.abs(tau[0]))
    expected = np.concatenate([np.abs(tau).max(axis=0), rms, np.abs(qd).max(axis=0),
                               np.abs(tau * qd).max(axis=0)])
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=0)


def test_a_free_fall_reports_its_final_state_and_energy(puma):
    """A free fall's row: the state at its end, the energy drift undamped (the
    integrator's error, small) and, damped, at least as large (what the dampers took)."""
    table = sweep(puma, FreeFallRun(duration=0.3, stops=False), {"damping": [0.0, 5.0]},
                  workers=1, frame=False)
    assert list(table["status"]) == ["ok", "ok"]
    undamped, damped = table
    from armdyn.core import simulate
    traj = simulate(puma, 0.3, stops=False)
    for j in range(puma.n):
        assert undamped[f"final_q_{j + 1}"] == traj.q[-1, j]
        assert undamped[f"final_qd_{j + 1}"] == traj.qd[-1, j]
    peak_kinetic = traj.energy[:, 0].max()
    assert undamped["energy_drift"] < 1e-6 * peak_kinetic
    assert damped["energy_drift"] > 1e3 * undamped["energy_drift"]


# ----- the same bits everywhere -------------------------------------------------------------

def grid_inverse():
    return (InverseRun(target=POSE, duration=1.0, dt=0.02),
            {"payload.mass": "0:5:6", "3.com.x": [0.0, 0.05], "T": "0.5:1.5:5"})


def assert_same_bits(a: SweepResult, b: SweepResult) -> None:
    assert a.done == b.done == a.size
    assert list(a.status) == list(b.status)
    assert a.rows.tobytes() == b.rows.tobytes()
    assert a.values.tobytes() == b.values.tobytes()


def result_of(model, run, vary, **how) -> SweepResult:
    gen = sweep_chunks(model, run, vary, **how)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def test_one_process_and_the_local_pool_compute_the_same_bits(puma):
    run, vary = grid_inverse()
    one = result_of(puma, run, vary, workers=1)
    pool = result_of(puma, run, vary, workers=2)
    assert one.engine == "1 process" and pool.engine == "2 local processes"
    assert_same_bits(one, pool)
    assert set(one.status) == {"ok"}
    free = (FreeFallRun(duration=0.2, stops=False), {"q0.2": "-1:1:30", "damping": [0, 2]})
    assert_same_bits(result_of(puma, *free, workers=1),
                     result_of(puma, *free, workers=2))


def test_the_pool_started_from_a_forkserver_computes_the_same_bits(puma):
    """The start a GUI's worker thread uses (a fork of a process with threads is unsafe)."""
    run, vary = grid_inverse()
    assert_same_bits(result_of(puma, run, vary, workers=1),
                     result_of(puma, run, vary, workers=2, start_method="forkserver"))


def test_forkserver_workers_do_not_run_the_main_script_again(tmp_path):
    """multiprocessing runs a spawned or forkserver worker's parent's main script again
    (as __mp_main__): the window's launcher or a benchmark would import Qt or Pinocchio
    in every worker of every sweep. A script that marks such a run, and sweeps on a
    forkserver pool, leaves no mark."""
    import subprocess
    import sys
    script = tmp_path / "main_script.py"
    script.write_text(
        "from pathlib import Path\n"
        "if __name__ != '__main__':\n"
        "    Path(__file__).with_suffix('.rerun').write_text(__name__)\n"
        "else:\n"
        "    import numpy as np\n"
        "    from armdyn.core import InverseRun, load_robot\n"
        "    from armdyn.core.sweeps.sweep import sweep_chunks\n"
        "    robot = load_robot('robots/puma560_saha.toml')\n"
        "    run = InverseRun(target=robot.q_home + 0.1, duration=0.2)\n"
        "    gen = sweep_chunks(robot, run, {'payload.mass': np.linspace(0, 5, 400)},\n"
        "                       workers=2, start_method='forkserver')\n"
        "    while True:\n"
        "        try:\n"
        "            next(gen)\n"
        "        except StopIteration as stop:\n"
        "            print(stop.value.engine, stop.value.failed)\n"
        "            break\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=Path(__file__).parents[1],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "local", "processes", "0"]
    assert not script.with_suffix(".rerun").exists()


def test_dask_on_a_local_cluster_computes_the_same_bits(puma):
    distributed = pytest.importorskip("distributed", reason="the test extra installs Dask")
    run, vary = grid_inverse()
    one = result_of(puma, run, vary, workers=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        on_dask = result_of(puma, run, vary, scheduler=cluster.scheduler_address)
        trapezoid = replace(run, law="trapezoid")  # another law, each point's own T
        with distributed.Client(cluster) as client:  # a client of the caller's, kept open
            again = result_of(puma, trapezoid, vary, scheduler=client)
            assert client.status == "running"
    assert on_dask.engine.startswith("Dask")
    assert_same_bits(one, on_dask)
    assert_same_bits(result_of(puma, trapezoid, vary, workers=1), again)


def test_asking_for_a_scheduler_without_dask_says_how_to_install_it(puma, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "distributed" or name.startswith(("distributed.", "dask")):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    run, vary = grid_inverse()
    with pytest.raises(engines.ClusterUnavailable, match=r"pip install 'armdyn\[cluster\]'"):
        sweep(puma, run, vary, scheduler="tcp://127.0.0.1:8786")


# ----- failures, cancelling ---------------------------------------------------------------

def test_a_point_that_fails_is_recorded_with_its_reason_and_the_sweep_goes_on():
    """Each value alone is fine (checked before any work); one combination is not."""
    scara = load_robot(ROBOTS / "scara.toml")
    lo, hi = scara.links[1].limits
    vary = {"2.limits.upper": [hi, lo + 0.1], "2.limits.lower": [lo, lo + 0.2]}
    table = sweep(scara, InverseRun(target=np.zeros(scara.n) + 0.05, duration=0.5), vary,
                  workers=1, frame=False)
    status = list(table["status"])
    assert status[:3] == ["ok"] * 3
    assert "limits must be increasing" in status[3] and "2" in status[3]
    assert np.isnan(table[3]["peak_tau_1"]) and np.isfinite(table[2]["peak_tau_1"])


def test_a_closed_chain_driven_out_of_its_workspace_fails_at_those_points_only():
    """The five-bar's crank swept past where its loop closes: those points fail with the
    loop's reason (only running them shows it), the others are computed."""
    from armdyn.core import load_mechanism
    five = load_mechanism(ROBOTS / "fivebar_saha.toml")
    crank = five.actuated[0]
    angles = five.q_home[crank] + np.radians([0.0, 60.0, 150.0])
    table = sweep(five, InverseRun(target=five.q_home, duration=1.0, dt=0.05),
                  {f"target.{crank + 1}": angles}, workers=1, frame=False)
    status = list(table["status"])
    assert status[:2] == ["ok", "ok"] and "loop 'E': cannot be closed" in status[2]
    assert np.isfinite(table[1]["peak_tau_1"]) and np.isnan(table[2]["peak_tau_1"])


def test_cancelling_keeps_the_finished_points(puma):
    run, vary = grid_inverse()
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) >= 2

    with pytest.raises(SweepCancelled) as caught:
        sweep(puma, run, vary, workers=2, cancel=cancel)
    part = caught.value.result
    assert 0 < part.done < part.size
    done = part.finished
    assert set(part.status[~done]) == {"cancelled"} and set(part.status[done]) == {"ok"}
    whole = result_of(puma, run, vary, workers=1)
    assert part.rows[done].tobytes() == whole.rows[done].tobytes()
    assert np.isnan(part.rows[~done]).all()


def test_the_table_is_a_structured_array_or_a_dataframe(puma):
    run = InverseRun(target=POSE, duration=0.5, dt=0.05)
    vary = {"payload.mass": [0.0, 1.0], "target": [POSE, -POSE]}
    array = sweep(puma, run, vary, workers=1, frame=False)
    pd = pytest.importorskip("pandas")
    frame = sweep(puma, run, vary, workers=1, frame=True)
    assert isinstance(frame, pd.DataFrame)
    names = ["payload.mass"] + [f"target.{j}" for j in range(1, 7)]
    for what in ("peak_tau", "rms_tau", "peak_qd", "peak_power"):
        names += [f"{what}_{j}" for j in range(1, 7)]
    assert list(array.dtype.names) == names + ["status"] == list(frame.columns)
    np.testing.assert_array_equal(frame["target.2"], [POSE[1], -POSE[1]] * 2)
    np.testing.assert_array_equal(frame["peak_tau_2"].to_numpy(), array["peak_tau_2"])


# ----- refused before any work ------------------------------------------------------------

@pytest.mark.parametrize("vary, words", [
    ({"9.mass": [1.0]}, ["'9' is not a link"]),
    ({"payload.weight": [1.0]}, ["unknown field", "payload.mass"]),
    ({"payload.mass": "0:5:0"}, ["payload.mass", "empty range"]),
    ({"payload.mass": [1.0, -2.0]}, ["payload.mass=-2", ">= 0"]),
    ({"3.mass": [5.0, -1.0]}, ["3.mass=-1", "mass"]),
    ({"T": [1.0, 0.0]}, ["T=0", "duration"]),
    ({"3.friction": [0.1]}, ["unknown field", "friction_viscous"]),
    ({"2.friction_viscous": [0.1, -1.0]}, ["2.friction_viscous=-1"]),
    ({"target": [[0.0, 1.0]]}, ["target", "(k, 6)"]),
    ({"target": [POSE], "target.2": [0.0]}, ["target.2", "give each field once"]),
])
def test_a_bad_grid_is_refused_naming_the_field_and_the_value(puma, vary, words):
    with pytest.raises(SweepError) as caught:
        make_plan(puma, InverseRun(target=POSE, duration=1.0), vary)
    for word in words:
        assert word in str(caught.value)


def test_a_model_with_a_joint_of_several_degrees_of_freedom_is_refused_by_name():
    from armdyn.core import load_mechanism
    space = load_mechanism(ROBOTS / "space_robot.toml")
    with pytest.raises(SweepError, match="one result column per joint.*is free"):
        make_plan(space, FreeFallRun(duration=0.1), {"damping": [0.0, 1.0]})


# ----- the command line -------------------------------------------------------------------

def read_sweep_csv(path) -> tuple[list[str], list[list[str]]]:
    lines = Path(path).read_text().splitlines()
    assert lines[0].startswith("# ArmDyn sweep") and lines[1].startswith("# units:")
    return lines[2].split(","), [line.split(",") for line in lines[3:]]


def test_the_command_line_writes_one_row_per_point_in_typed_units(tmp_path, capsys, puma):
    out = tmp_path / "sweep.csv"
    code, _, err = run_cli(capsys, "sweep", "inverse", PUMA, "--target", "20,-30,40,0,10,0",
                           "--vary", "payload.mass=0:5:3", "--vary", "target.2=-30,10",
                           "-T", "1", "--dt", "0.02", "--workers", "2", "-o", out)
    assert code == 0, err
    assert "6 points" in err and "largest peak |tau|" in err
    header, rows = read_sweep_csv(out)
    n = puma.n
    assert header[:2] == ["payload.mass", "target.2"]
    assert header[2:2 + n] == [f"peak_tau_{j}" for j in range(1, n + 1)]
    assert header[-1] == "status" and len(rows) == 6
    assert [r[:2] for r in rows] == [["0", "-30"], ["0", "10"], ["2.5", "-30"],
                                     ["2.5", "10"], ["5", "-30"], ["5", "10"]]
    assert {r[-1] for r in rows} == {"ok"}
    # the last row against the API with the same values in SI
    q_end = np.radians([20.0, 10.0, 40.0, 0.0, 10.0, 0.0])
    table = sweep(puma, InverseRun(target=q_end, duration=1.0, dt=0.02),
                  {"payload.mass": [5.0]}, workers=1, frame=False)
    got = [float(v) for v in rows[-1][2:-1]]
    want = [float(f"{table[0][c]:.10g}") for c in header[2:-1]]
    assert got == want
    assert not list(tmp_path.glob(".*"))  # written atomically: no temporary left


@pytest.mark.parametrize("vary, words", [
    ("payload.mass=0:5:0", ["--vary payload.mass", "empty range", "'0'"]),
    ("bogus=1,2", ["--vary bogus", "unknown field"]),
    ("3.mass=5,-1", ["--vary 3.mass=-1"]),
    ("2.friction=0.1", ["--vary 2.friction", "unknown field"]),
    ("target.2=abc", ["--vary target.2", "'abc' is not a number"]),
])
def test_the_command_line_refuses_a_bad_vary_before_any_work(tmp_path, capsys, vary, words):
    out = tmp_path / "sweep.csv"
    code, _, err = run_cli(capsys, "sweep", "inverse", PUMA, "--target", "0,0,0,0,0,0",
                           "--vary", vary, "-o", out)
    assert code == 2 and err.count("\n") == 1, err
    for word in words:
        assert word in err
    assert not out.exists()


def test_ctrl_c_writes_the_finished_points_and_exits_130(tmp_path, capsys, monkeypatch):
    """Ctrl+C raises KeyboardInterrupt in the loop that reads the results: here raised
    from the progress line's update after the first batches."""
    from armdyn.core import sweep_cli
    seen = []

    def interrupted(self, p, force=False):
        seen.append(p.done)
        if len(seen) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(sweep_cli._ProgressLine, "update", interrupted)
    out = tmp_path / "part.csv"
    code, _, err = run_cli(capsys, "sweep", "inverse", PUMA, "--target", "20,-30,40,0,10,0",
                           "--vary", "payload.mass=0:5:40", "--vary", "T=0.5:2:10",
                           "--dt", "0.02", "--workers", "2", "-o", out)
    assert code == 130 and "interrupted" in err, err
    _, rows = read_sweep_csv(out)
    status = [r[-1] for r in rows]
    assert len(rows) == 400 and "ok" in status and "cancelled" in status
    assert status.count("ok") >= seen[-1]
    assert all(r[2] == "" for r in rows if r[-1] == "cancelled")


def test_the_run_options_of_simulate_reach_every_point(tmp_path, capsys, puma):
    out = tmp_path / "fall.csv"
    code, _, err = run_cli(capsys, "sweep", "simulate", PUMA, "-T", "0.2", "--stops", "off",
                           "--vary", "qd0.1=0,90", "--vary", "damping=0,3", "-o", out)
    assert code == 0, err
    header, rows = read_sweep_csv(out)
    assert header[:2] == ["qd0.1", "damping"] and "energy_drift" in header
    final_qd1 = [float(r[header.index("final_qd_1")]) for r in rows]
    peak_qd1 = [float(r[header.index("peak_qd_1")]) for r in rows]
    assert peak_qd1[2] >= math.radians(90) > peak_qd1[0]  # typed in deg/s
    assert abs(final_qd1[3]) < abs(final_qd1[2])  # damping slows the waist


def test_the_progress_line_shows_on_a_terminal_only():
    from armdyn.core import sweep_cli
    from armdyn.core.sweeps.sweep import SweepProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown, piped = Terminal(), io.StringIO()
    p = SweepProgress(done=250, total=1000, failed=3, elapsed=2.0, result=None)
    for stream in (shown, piped):
        line = sweep_cli._ProgressLine(stream)
        line.update(p, force=True)
        line.end()
    assert "250/1000 points (25%), 3 failed, 2.0 s, about 6 s left" in shown.getvalue()
    assert piped.getvalue() == ""


def test_trajectories_on_request_are_the_points_whole_runs(tmp_path, capsys, puma):
    folder = tmp_path / "runs"
    code, _, err = run_cli(capsys, "sweep", "inverse", PUMA, "--target", "20,-30,40,0,10,0",
                           "-T", "0.5", "--dt", "0.05", "--vary", "payload.mass=0,4",
                           "--workers", "1", "--trajectories", folder,
                           "-o", tmp_path / "s.csv")
    assert code == 0 and "2 runs to" in err, err
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["point_1.csv", "point_2.csv"]
    header, rows = read_sweep_csv(tmp_path / "s.csv")
    data = np.loadtxt(folder / "point_2.csv", delimiter=",", skiprows=3)
    lines = (folder / "point_2.csv").read_text().splitlines()
    tau2 = data[:, lines[2].split(",").index("tau2 shoulder [N m]")]
    assert float(rows[1][header.index("peak_tau_2")]) == pytest.approx(np.abs(tau2).max(),
                                                                       rel=1e-9)


def test_a_scheduler_that_cannot_be_reached_is_named(puma, monkeypatch):
    pytest.importorskip("distributed", reason="the test extra installs Dask")
    monkeypatch.setattr(engines, "DASK_CONNECT_S", 0.5)
    run, vary = grid_inverse()
    with pytest.raises(engines.ClusterUnavailable, match="tcp://127.0.0.1:9"):
        sweep(puma, run, vary, scheduler="tcp://127.0.0.1:9")


def test_friction_and_the_drive_vary_as_their_laws_say(puma):
    """Viscous friction c_v adds c_v qd to its joint's torque at every sample, and a rotor
    I_r behind a gear r adds r^2 I_r qdd (docs/motions.md): the points' whole runs
    against the nominal one, joint 3; the other joints' torques do not change."""
    run = InverseRun(target=POSE, duration=1.0, dt=0.01)
    _, (nominal, viscous) = sweep(puma, run, {"3.friction_viscous": [0.0, 2.5]}, workers=1,
                                  trajectories=True, frame=False)
    assert np.abs(viscous.tau[:, 2] - nominal.tau[:, 2] - 2.5 * nominal.qd[:, 2]).max() < 1e-9
    others = [0, 1, 3, 4, 5]
    assert np.array_equal(viscous.tau[:, others], nominal.tau[:, others])
    _, (geared,) = sweep(puma, run, {"3.gear_ratio": [10.0], "3.rotor_inertia": [2e-4]},
                         workers=1, trajectories=True, frame=False)
    assert np.abs(geared.tau[:, 2] - nominal.tau[:, 2]
                  - 10.0**2 * 2e-4 * nominal.qdd[:, 2]).max() < 1e-9


# ----- runs along other motions -------------------------------------------------------------

def payload_model(robot, mass: float):
    """`robot` carrying a point mass `mass` at its last frame's origin, summed as spatial
    inertias about that origin (mass, first moment h = m c, I_O = I_c + m [c]x [c]x^T)
    and taken back to the mass centre: a second route to the sweep's payload model."""
    links = list(robot.links)
    last = links[-1]
    c = np.array(last.com, dtype=float)
    skew = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    I_O = last.inertia_matrix + last.mass * skew @ skew.T  # the point mass adds nothing
    m = last.mass + mass
    c_new = last.mass * c / m
    skew = np.array([[0, -c_new[2], c_new[1]], [c_new[2], 0, -c_new[0]],
                     [-c_new[1], c_new[0], 0]])
    I_c = I_O - m * skew @ skew.T
    links[-1] = replace(last, mass=m, com=tuple(c_new),
                        inertia=(I_c[0, 0], I_c[1, 1], I_c[2, 2], I_c[0, 1], I_c[0, 2],
                                 I_c[1, 2]))
    return robot.with_links(links, warnings=())


def test_a_quintic_sweep_is_a_quintic_run_of_each_points_model(puma):
    from armdyn.core.sim.joint_motions import Quintic

    masses = [0.0, 2.5, 5.0]
    run = InverseRun(target=POSE, duration=1.0, dt=0.02, law="quintic")
    table = sweep(puma, run, {"payload.mass": masses}, workers=1, frame=False)
    for row, mass in zip(table, masses):
        alone = run_inverse_dynamics(payload_model(puma, mass),
                                     Quintic(puma.q_home, POSE, 1.0), dt_out=0.02)
        peak = np.abs(alone.tau).max(axis=0)
        got = np.array([row[f"peak_tau_{j + 1}"] for j in range(puma.n)])
        np.testing.assert_allclose(got, peak, rtol=1e-10, atol=1e-9)
    cycloid = sweep(puma, replace(run, law="cycloid"), {"payload.mass": masses[:1]},
                    workers=1, frame=False)
    assert abs(cycloid["peak_tau_2"][0] - table["peak_tau_2"][0]) > 1.0  # the law reached it


def write_plain_log(path, model, duration=1.0, rate=200.0):
    """A log of t, q1..qn (no rates: the differentiator's), a smooth swing about home."""
    t = np.arange(0.0, duration + 0.5 / rate, 1.0 / rate)
    q = model.q_home + 0.4 * np.sin(np.outer(np.pi * t / duration, np.arange(1, model.n + 1)))
    header = "t," + ",".join(f"q{j + 1}" for j in range(model.n))
    np.savetxt(path, np.column_stack([t, q]), delimiter=",", header=header, comments="")


def test_a_measured_log_sweeps_its_payload_once_read_on_every_engine(tmp_path, puma):
    log = tmp_path / "log.csv"
    write_plain_log(log, puma)
    motion = load_motion(log, puma)
    log.unlink()  # the workers get the samples with the plan: no file to read again
    run = InverseRun(motion=motion)
    m2 = puma.links[1].mass
    vary = {"payload.mass": "0:4:15", "2.mass": [m2, m2 + 3.0]}  # more than a probe
    one = result_of(puma, run, vary, workers=1)
    assert set(one.status) == {"ok"}
    pool = result_of(puma, run, vary, workers=2)
    assert pool.engine == "2 local processes"
    assert_same_bits(one, pool)
    heavier = payload_model(puma.with_links([replace(lk, mass=m2 + 3.0) if j == 1 else lk
                                             for j, lk in enumerate(puma.links)],
                                            warnings=()), 4.0)
    alone = run_inverse_dynamics(heavier, motion)
    np.testing.assert_allclose(one.peak_torques()[-1], np.abs(alone.tau).max(axis=0),
                               rtol=1e-10, atol=1e-9)
    for field in ("T", "target.2", "start"):
        with pytest.raises(SweepError, match=f"--vary {field}: the measured motion "
                           r"\(.*log.csv\) has its own duration"):
            make_plan(puma, run, {field: [1.0, 2.0] if field != "start" else [puma.q_home]})


def test_the_command_line_sweeps_along_a_law_and_along_a_log(tmp_path, capsys, puma):
    out = tmp_path / "sweep.csv"
    code, _, err = run_cli(capsys, "sweep", "inverse", PUMA, "--target", "20,-30,40,0,10,0",
                           "--law", "quintic", "-T", "1", "--dt", "0.02", "--workers", "1",
                           "--vary", "payload.mass=0,5", "-o", out)
    assert code == 0, err
    assert "along the quintic law" in err
    header, rows = read_sweep_csv(out)
    table = sweep(puma, InverseRun(target=np.radians([20, -30, 40, 0, 10, 0]), duration=1.0,
                                   dt=0.02, law="quintic"),
                  {"payload.mass": [5.0]}, workers=1, frame=False)
    assert [float(v) for v in rows[-1][1:-1]] == [float(f"{table[0][c]:.10g}")
                                                  for c in header[1:-1]]
    log = tmp_path / "log.csv"
    write_plain_log(log, puma)
    code, _, err = run_cli(capsys, "sweep", "inverse", PUMA, "--motion", log, "--cutoff", "8",
                           "--workers", "1", "--vary", "payload.mass=0,5", "-o", out)
    assert code == 0, err
    assert "cut-off" in err and f"along the measured motion ({log})" in err
    header, rows = read_sweep_csv(out)
    motion = load_motion(log, puma, cutoff=8.0)
    alone = run_inverse_dynamics(payload_model(puma, 5.0), motion)
    assert float(rows[-1][1]) == pytest.approx(np.abs(alone.tau[:, 0]).max(), rel=1e-9)
    out.unlink()
    code, _, err = run_cli(capsys, "sweep", "inverse", PUMA, "--motion", log,
                           "--vary", "T=1,2", "-o", out)
    assert code == 2 and "--vary T: the measured motion" in err and not out.exists(), err
    code, _, err = run_cli(capsys, "sweep", "inverse", PUMA, "--motion", log, "--target",
                           "0,0,0,0,0,0", "--vary", "payload.mass=0,5", "-o", out)
    assert code == 2 and "leave out --target" in err, err


def test_a_tool_path_travels_as_its_samples_and_keeps_its_geometry(puma):
    from armdyn.core.sim.tool_motions import ToolLine

    q1 = POSE + np.array([0.3, 0.1, -0.1, 0.0, 0.0, 0.0])
    line = ToolLine(puma, POSE, forward_kinematics(puma, q1).end_effector[:3, 3], 0.5)
    run = InverseRun(motion=line, dt=0.02)
    assert run.on_geometry and run.duration == 0.5
    table = sweep(puma, run, {"payload.mass": [0.0, 3.0]}, workers=1, frame=False)
    for row, mass in zip(table, (0.0, 3.0)):
        alone = run_inverse_dynamics(payload_model(puma, mass), line, dt_out=0.02)
        assert [row[f"peak_tau_{j + 1}"] for j in range(puma.n)] == \
            list(np.abs(alone.tau).max(axis=0))
    with pytest.raises(SweepError, match="--vary 3.a: the tool line motion .* solved for "
                       "the model's own geometry"):
        make_plan(puma, run, {"3.a": [0.02, 0.03]})
    with pytest.raises(SweepError, match="--vary T: the tool line motion"):
        make_plan(puma, run, {"T": [1.0]})
