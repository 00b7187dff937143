"""End stops at the joint limits (issue #9): a spring with a Hunt-Crossley damper past
each limit, inside the compiled right-hand side (`core.sim.simulation.JointStops`,
`core.algorithms.dynamics.stop_force`).

Physics checked against closed forms on a single prismatic joint dropped onto its lower
limit (potential m g q, kinetic m qd^2 / 2): an elastic stop gives the energy back (the
joint returns to its start height; total energy, the spring's included, is conserved;
the deepest penetration solves K delta^2 / 2 - m g delta = m g h); a damped stop takes
out exactly its damper's work and its restitution follows d v alone (the table in
`JointStops`); its force is continuous and never pulls. Then the shipped arms (the
SCARA's quill, a Stanford boom given limits) stay at their limits, trees and closed
chains too, stops=False is the free fall without them, bit for bit, the warnings and
the command line.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import JointType, Link, Robot, cli, load_mechanism, load_robot, loop_residual
from armdyn.core import JointStops, simulate, simulate_chunks
from armdyn.core.sim.stops import resolve_stops, simulation_warnings, stop_report

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
G = 9.81
MASS = 2.0
K = 2.0e4  # N/m: the slider rings on its stop at sqrt(K / m) = 100 rad/s


def slider(limits=(0.0, 1.0), gravity=(0.0, 0.0, -G), b: float = 0.5) -> Robot:
    """One prismatic joint along the vertical z_0: q is the height of the body, its
    potential energy m g q, its kinetic energy m qd^2 / 2."""
    return Robot("slider", (Link(JointType.PRISMATIC, b=b, mass=MASS,
                                 inertia=(0.01, 0.01, 0.01, 0.0, 0.0, 0.0), limits=limits),),
                 gravity=gravity)


def simpson(y: np.ndarray, h: float) -> float:
    assert len(y) % 2 == 1
    return h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())


def penetration(robot, q: np.ndarray) -> np.ndarray:
    """How far each sample is past a limit, (S, n), 0 inside."""
    lim = robot.joint_limits
    return np.maximum(0.0, np.maximum(lim[:, 0] - q, q - lim[:, 1]))


# ----------------------------------------------------------------------------------
# One joint on its stop: closed forms
# ----------------------------------------------------------------------------------

def test_an_elastic_stop_conserves_energy_and_the_joint_bounces_back_to_its_start():
    robot, h = slider(), 0.5
    run = simulate(robot, 1.0, stops=JointStops(stiffness=K, damping=0.0), dt_out=1e-4)
    q, qd = run.q[:, 0], run.qd[:, 0]
    delta = np.maximum(0.0, -q)
    assert delta.max() > 0.0, "the joint never reached its stop"
    # the energy columns: gravity plus the spring, in closed form
    np.testing.assert_allclose(run.energy[:, 0], 0.5 * MASS * qd ** 2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(run.energy[:, 1], MASS * G * q + 0.5 * K * delta ** 2,
                               rtol=1e-12, atol=1e-12)
    E, K_max = run.energy[:, 2], run.energy[:, 0].max()
    assert np.max(np.abs(E - E[0])) <= 1e-7 * K_max
    # the deepest penetration: K delta^2 / 2 - m g delta = m g h
    mg = MASS * G
    deepest = (mg + math.sqrt(mg ** 2 + 2 * K * mg * h)) / K
    assert deepest * (1 - 1e-3) <= delta.max() <= deepest
    # after the bounce it rises back to its start height, and no higher
    after = run.t > 0.5
    assert abs(q[after].max() - h) < 1e-7
    # the stop's force is the spring's: K delta, pushing up
    np.testing.assert_allclose(run.stop_forces[:, 0], K * delta, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(run.tau, run.stop_forces)  # a free fall: nothing else


def test_a_damped_stop_takes_out_exactly_its_dampers_work():
    robot, d = slider(), 0.5
    run = simulate(robot, 1.2, stops=JointStops(stiffness=K, damping=d), dt_out=1e-4)
    q, qd = run.q[:, 0], run.qd[:, 0]
    delta = np.maximum(0.0, -q)
    contact = delta > 0
    assert contact.sum() > 100
    E = run.energy[:, 2]
    # the damper's force (the stop's force minus the spring's) and its power
    damper = run.stop_forces[:, 0] - K * delta
    power = damper * qd
    assert np.all(power <= 1e-9), "the damper gave energy"
    dissipated = E[0] - E[-1]
    assert dissipated > 0.3 * E[0]  # a real loss (e about 0.5 at 3.1 m/s)
    assert dissipated == pytest.approx(-simpson(power, run.t[1] - run.t[0]), rel=1e-5)
    # energy falls while in contact, holds still in flight
    dE = np.diff(E)
    scale = np.abs(run.energy).max()
    inside = contact[1:] & contact[:-1]
    assert np.all(dE[inside] <= 1e-10 * scale)
    assert np.any(dE[inside] < -1e-3 * scale)
    flight = ~contact[1:] & ~contact[:-1]
    assert np.max(np.abs(dE[flight])) <= 1e-9 * scale


def test_the_stop_force_is_continuous_and_never_pulls():
    # a drop; and a start 1 cm past the stop with no gravity, pushed out by the spring
    # fast enough (1 m/s) that the law K delta (1 + d delta_dot) would pull at 20 s/m
    starts = [dict(q0=None, gravity=(0.0, 0.0, -G)), dict(q0=[-0.01], gravity=(0.0, 0.0, 0.0))]
    for d, start in ((0.5, starts[0]), (20.0, starts[0]), (20.0, starts[1])):
        run = simulate(slider(gravity=start["gravity"]), 1.0, q0=start["q0"], dt_out=1e-4,
                       stops=JointStops(stiffness=K, damping=d))
        f, q, qd = run.stop_forces[:, 0], run.q[:, 0], run.qd[:, 0]
        assert np.all(f >= 0.0), "a lower stop pulled"
        np.testing.assert_array_equal(f[q >= 0.0], 0.0)  # no force inside the limits
        # continuous: from sample to sample (0.1 ms) it changes by a small part of its
        # peak (a linear spring-damper would jump by c v at first touch)
        assert np.max(np.abs(np.diff(f))) <= (0.05 if d < 1 else 0.2) * f.max(), "a jump"
        delta = np.maximum(0.0, -q)
        law = K * delta * (1.0 - d * qd)  # unclipped Hunt-Crossley
        if start["q0"] is not None:
            clipped = (delta > 0) & (law < 0)
            assert clipped.any() and np.all(f[clipped] == 0.0)
    # an upper stop pushes down
    up = simulate(slider(limits=(-1.0, 0.6)), 0.5, qd0=[3.0], dt_out=1e-4,
                  stops=JointStops(stiffness=K, damping=0.5))
    assert up.stop_forces.min() < 0.0 and up.stop_forces.max() == 0.0


@pytest.mark.parametrize("d, e", [(0.1, 0.9375), (1.0, 0.5936), (5.0, 0.1970)])
def test_the_restitution_depends_on_d_times_the_impact_speed_as_documented(d, e):
    """No gravity: the slider hits its stop at 1 m/s and leaves at e m/s, whatever K."""
    for stiffness in (K, 50 * K):
        run = simulate(slider(gravity=(0.0, 0.0, 0.0)), 1.0, qd0=[-1.0],
                       stops=JointStops(stiffness=stiffness, damping=d))
        assert run.qd[-1, 0] == pytest.approx(e, abs=2e-4)


def test_default_stiffness_rings_each_joint_at_the_stop_frequency():
    robot = load_robot(ROBOTS / "scara.toml")
    from armdyn.core import mass_matrix
    table = JointStops(frequency=30.0, damping=[1, 2, 3, 4]).table(robot)
    np.testing.assert_allclose(table[:, :2], robot.joint_limits)
    np.testing.assert_allclose(table[:, 2], np.diag(mass_matrix(robot, robot.q_home))
                               * (2 * math.pi * 30.0) ** 2)
    np.testing.assert_array_equal(table[:, 3], [1, 2, 3, 4])
    assert JointStops(stiffness=7.0).table(robot)[:, 2].tolist() == [7.0] * 4
    for bad in (dict(frequency=0.0), dict(damping=-1.0), dict(stiffness=[1.0, -1.0]),
                dict(frequency=float("nan"))):
        with pytest.raises(ValueError):
            JointStops(**bad)
    with pytest.raises(ValueError, match="stop damping"):
        JointStops(damping=[1.0, 2.0]).table(robot)


def test_stops_are_on_by_default_only_where_the_model_has_limits():
    assert resolve_stops(load_robot(ROBOTS / "scara.toml")) == JointStops()
    assert resolve_stops(load_robot(ROBOTS / "puma560_saha.toml")) is None
    assert resolve_stops(load_robot(ROBOTS / "puma560_saha.toml"), True) == JointStops()
    assert resolve_stops(load_robot(ROBOTS / "scara.toml"), False) is None
    with pytest.raises(TypeError):
        resolve_stops(load_robot(ROBOTS / "scara.toml"), "on")


# ----------------------------------------------------------------------------------
# The shipped arms, trees and closed chains
# ----------------------------------------------------------------------------------

def stanford_without_limits() -> Robot:
    """The shipped Stanford arm without its limits (the real arm's, in the file): the
    case of a prismatic joint that nothing stops."""
    robot = load_robot(ROBOTS / "stanford_saha2009.toml")
    return robot.with_links([replace(link, limits=None) for link in robot.links])


@pytest.mark.parametrize("make", [lambda: load_robot(ROBOTS / "scara.toml"),
                                  lambda: load_robot(ROBOTS / "stanford_saha2009.toml")],
                         ids=["scara", "stanford"])
def test_free_falls_stay_at_their_limits(make):
    robot = make()
    prismatic = ~robot.is_revolute
    free = simulate(robot, 3.0, stops=False)
    assert penetration(robot, free.q)[:, prismatic].max() > 1.0  # it slides off without
    run = simulate(robot, 3.0, dt_out=1e-3)  # the default: stops on
    assert run.warnings == ()
    past = penetration(robot, run.q)
    assert past.max() > 0.0, "no stop was touched"
    # the default stops ring at 50 Hz: about 3 mm past per m/s of impact
    assert past[:, prismatic].max() < 5e-3
    assert past[:, ~prismatic].max() < math.radians(1.0)
    # at the end the boom / quill rests on its stop
    j = int(np.flatnonzero(prismatic)[0])
    assert abs(run.qd[-1, j]) < 0.05 and past[-1, j] < 1e-3
    assert any(f"joint {j + 1}" in line for line in stop_report(robot, run))
    # the energy only falls (stop dampers), by what the samples' stop forces show
    E = run.energy[:, 2]
    assert np.all(np.diff(E) <= 1e-8 * np.abs(run.energy).max())


def test_stops_false_is_the_free_fall_without_stops_bit_for_bit():
    scara = load_robot(ROBOTS / "scara.toml")
    unlimited = scara.with_links([replace(link, limits=None) for link in scara.links])
    off = simulate(scara, 3.0, stops=False)
    for other in (simulate(unlimited, 3.0), simulate(unlimited, 3.0, stops=True),
                  # stops far away: the stop code runs on every evaluation, never acts
                  simulate(scara.with_links([replace(link, limits=(-1e3, 1e3))
                                             for link in scara.links]), 3.0)):
        for field in ("t", "q", "qd", "qdd", "tau", "energy"):
            np.testing.assert_array_equal(getattr(other, field), getattr(off, field), field)
        np.testing.assert_array_equal(other.stop_forces, 0.0)
    # ... which is the closed form: the quill falls freely, 0.1 m + g t^2 / 2
    np.testing.assert_allclose(off.q[:, 2], 0.1 + 0.5 * G * off.t ** 2, rtol=1e-10)
    # the damped PUMA (no limits) as before: applied = -c qd exactly
    puma = load_robot(ROBOTS / "puma560_saha.toml")
    damped = simulate(puma, 1.0, damping=0.3)
    np.testing.assert_array_equal(damped.tau, -0.3 * damped.qd)


def test_a_tree_stays_within_its_limits():
    humanoid = load_mechanism(ROBOTS / "humanoid.toml")
    free = simulate(humanoid, 2.0, stops=False)
    assert penetration(humanoid, free.q).max() > 0.1  # without stops some joint passes
    run = simulate(humanoid, 2.0)
    assert penetration(humanoid, run.q).max() < math.radians(2.0)


def test_a_closed_chain_with_a_limited_crank_stays_within_it_and_keeps_its_energy():
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    crank = mech.chains[0].links[0]
    home = crank.theta
    limited = replace(crank, limits=(home - 0.3, home + 0.3))
    chains = (replace(mech.chains[0], links=(limited,) + mech.chains[0].links[1:]),
              ) + mech.chains[1:]
    mech = replace(mech, chains=chains, warnings=())
    free = simulate(mech, 2.0, stops=False)
    assert penetration(mech, free.q)[:, 0].max() > 0.3
    run = simulate(mech, 2.0, stops=JointStops(damping=0.0), dt_out=1e-3)
    past = penetration(mech, run.q)[:, 0]
    assert 0.0 < past.max() < math.radians(1.0)
    assert np.all(run.stop_forces[:, 1:] == 0.0)
    E, K_max = run.energy[:, 2], run.energy[:, 0].max()
    assert np.max(np.abs(E - E[0])) <= 1e-6 * K_max  # elastic stops: conserved
    assert max(np.abs(loop_residual(mech, q)).max() for q in run.q[::50]) < 1e-8
    assert run.loop_residual.max() < 1e-9


# ----------------------------------------------------------------------------------
# Warnings
# ----------------------------------------------------------------------------------

def test_an_unlimited_prismatic_joint_is_warned_about_before_it_slides_off():
    stanford = stanford_without_limits()
    first = next(simulate_chunks(stanford, 3.0))  # the chunk holding t = 0
    assert first.t[0] == 0.0
    assert len(first.warnings) == 1
    assert "joint 3 ('boom')" in first.warnings[0] and "no limits" in first.warnings[0]
    assert simulate(stanford, 0.1).warnings == first.warnings
    # limits switched off: named too
    scara = load_robot(ROBOTS / "scara.toml")
    assert "quill" in simulation_warnings(scara, stops=False)[0]
    # nothing to say: limited, revolute, driven, or bound by a loop
    assert simulation_warnings(scara) == ()
    assert simulation_warnings(load_robot(ROBOTS / "puma560_saha.toml")) == ()
    assert simulation_warnings(stanford, free_fall=False) == ()
    assert simulation_warnings(load_mechanism(ROBOTS / "slider_crank.toml")) == ()
    assert simulate(stanford, 0.1, tau=np.zeros(6)).warnings == ()


def test_a_start_past_a_limit_is_warned_about():
    scara = load_robot(ROBOTS / "scara.toml")
    q0 = scara.q_home.copy()
    q0[2] = 0.25
    (warning,) = simulation_warnings(scara, q0)
    assert "joint 3 ('quill')" in warning and "upper limit" in warning and "0.04 m" in warning
    assert simulation_warnings(scara, q0, stops=False)[0].count("stops are off") == 1


# ----------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------

def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.err


def read_q(path, n: int) -> np.ndarray:
    return np.loadtxt(path, delimiter=",", skiprows=3, ndmin=2)[:, 1:1 + n]


def test_cli_stops_on_by_default_off_on_request_and_reported(tmp_path, capsys):
    scara, out = ROBOTS / "scara.toml", tmp_path / "fall.csv"
    code, err = run_cli(capsys, "simulate", scara, "-T", "2", "-o", out)
    assert code == 0, err
    assert err.count("\n") == 1 and "hit its upper stop (0.21 m)" in err
    assert "joint 3 ('quill')" in err and "energy dissipated" in err
    assert read_q(out, 4)[:, 2].max() < 0.21 + 5e-3
    code, err = run_cli(capsys, "simulate", scara, "-T", "2", "--stops", "off", "-o", out)
    assert code == 0
    assert err.startswith("armdyn: warning: joint 3 ('quill') is prismatic")
    assert "hit its" not in err
    assert read_q(out, 4)[:, 2].max() > 10.0
    # parameters: an elastic, softer stop goes deeper and gives the energy back
    code, err = run_cli(capsys, "simulate", scara, "-T", "2", "--stop-damping", "0",
                        "--stop-stiffness", "2000", "-o", out)
    assert code == 0 and "total-energy drift" not in err
    q = read_q(out, 4)[:, 2]
    assert 0.21 + 0.02 < q.max() < 0.21 + 0.1
    code, err = run_cli(capsys, "simulate", scara, "--stop-damping", "-1")
    assert code == 2 and "--stop-damping" in err and err.count("\n") == 1


def test_cli_warns_about_an_unlimited_prismatic_joint(tmp_path, capsys):
    from armdyn.core import save_robot

    path = tmp_path / "stanford_without_limits.toml"
    save_robot(stanford_without_limits(), path)
    code, err = run_cli(capsys, "simulate", path, "-T", "0.2", "-o", tmp_path / "s.csv")
    assert code == 0
    first, summary = err.splitlines()
    assert first.startswith("armdyn: warning: joint 3 ('boom') is prismatic and has no limits")
    assert "hit its" not in summary
