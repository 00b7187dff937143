"""Simulation: integrating I qdd + h = tau in time (core.simulate / simulate_chunks).

Physics checked: energy is conserved in free fall (every bundled robot and random
10-link arms, to 1e-6 of the peak kinetic energy, which SciPy's default
tolerances do not reach), damping only removes energy (and exactly the energy
its power integrates to), gravity compensation holds an arm at rest, a PD
controller with gravity compensation converges, a small pendulum swings with its
textbook period (tests/test_closed_forms.py). Mechanics checked: the output grid,
progress, cancel, chunks, the blow-up and singular-mass-matrix errors.

On singular mass matrices. A validated robot cannot have one: the GIM is
N^T M N with M block-diagonal positive definite (mass > 0, inertia positive
definite) and N = N_l N_d of full column rank (N_l is unit lower block-triangular,
each p_k non-zero), so the GIM is positive definite at every configuration.
The error path is therefore tested (a) with a robot built around validation on
purpose: an ideal slender rod spinning about its own axis as the last link (zero
inertia about joint n, which the robot format refuses), whose GIM is exactly
singular; and (b) with a valid robot whose GIM, once formed in floating point, is
exactly singular (a 1e-5 kg m^2 hub coaxial with a 1e12 kg m^2 flywheel), which
the Cholesky ("composite") solve must refuse.
"""
from __future__ import annotations

import glob
import math
import os

import numpy as np
import pytest
from hypothesis import given

from armdyn.core import (Chain, JointType, Link, Model, Robot, SimulationCancelled, SimulationError,
                         SingularMassMatrixError, Trajectory, articulated_body_inertias, energy,
                         forward_dynamics, gravity_torques, mass_matrix, output_grid, simulate,
                         simulate_chunks, udu_factors)
from armdyn.core import load_robot
from strategies import assert_close, fast, random_link, reals

ROBOTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robots")
# the serial-arm files (robots/ also holds mechanism files, tested in test_loops.py)
ROBOT_FILES = sorted(p for p in glob.glob(os.path.join(ROBOTS_DIR, "*.toml"))
                     if 'format = "armdyn-robot/1"' in open(p, encoding="utf-8").read())
ENERGY_RTOL = 1e-6  # of the peak kinetic energy


def bundled(name: str) -> Robot:
    return load_robot(os.path.join(ROBOTS_DIR, name))


def random_arm(seed: int, n: int = 10) -> Robot:
    """A random revolute arm with z_0 up (bounded motion: no prismatic joint to fall forever)."""
    rng = np.random.default_rng(seed)
    return Robot(f"random {n}R #{seed}", tuple(random_link(rng, JointType.REVOLUTE) for _ in range(n)),
                 gravity=(0.0, 0.0, -9.81))


def energy_drift(result: Trajectory) -> tuple[float, float]:
    """(max |E(t) - E(0)|, max kinetic energy)."""
    E = result.energy
    return float(np.max(np.abs(E[:, 2] - E[0, 2]))), float(np.max(E[:, 0]))


def assert_regular_samples(result: Trajectory, n: int) -> None:
    """Shapes agree, t starts at 0 and increases, every value is finite."""
    S = len(result)
    assert result.t.shape == (S,)
    for name in ("q", "qd", "qdd", "tau"):
        assert getattr(result, name).shape == (S, n), name
    assert result.energy.shape == (S, 3)
    if S:
        assert result.t[0] == 0.0
        assert np.all(np.diff(result.t) > 0)
    for name in ("t", "q", "qd", "qdd", "tau", "energy"):
        assert np.all(np.isfinite(getattr(result, name))), f"non-finite {name}"


# ----------------------------------------------------------------------------------
# Free fall: energy conservation
# ----------------------------------------------------------------------------------

FREE_FALL_CASES = [pytest.param(lambda p=p: load_robot(p), id=os.path.basename(p)) for p in ROBOT_FILES] + \
    [pytest.param(lambda s=s: random_arm(s), id=f"random-10R-{s}") for s in (0, 1)]


@pytest.mark.parametrize("make_robot", FREE_FALL_CASES)
def test_free_fall_conserves_energy_with_default_tolerances(make_robot):
    """Without end stops (their dampers take energy out: tests/test_joint_stops.py)."""
    robot = make_robot()
    result = simulate(robot, 10.0, stops=False)
    assert result.kind == "free-fall"
    assert_regular_samples(result, robot.n)
    assert result.t[-1] == 10.0
    np.testing.assert_array_equal(result.tau, 0.0)
    drift, K_max = energy_drift(result)
    assert K_max > 0, "the arm did not move"
    assert drift <= ENERGY_RTOL * K_max, f"{robot.name}: |E - E0| = {drift:.3g} J, K_max = {K_max:.3g} J"
    # the energy column is the energy of the samples
    assert_close(result.energy[::97], energy(robot, result.q[::97], result.qd[::97]), 1e-12)


@pytest.mark.parametrize("name", ["puma560_saha.toml", "two_link_planar.toml", "ur5e.toml"])
def test_default_tolerances_are_tighter_than_scipys(name):
    """SciPy's defaults (rtol 1e-3, atol 1e-6) let these arms gain or lose more than
    1e-6 of their kinetic energy in 10 s; the core's defaults do not."""
    robot = bundled(name)
    drift, K_max = energy_drift(simulate(robot, 10.0, stops=False))
    loose_drift, loose_K = energy_drift(simulate(robot, 10.0, rtol=1e-3, atol=1e-6, stops=False))
    assert drift <= ENERGY_RTOL * K_max
    assert loose_drift > ENERGY_RTOL * loose_K
    assert drift < loose_drift


def test_puma_free_fall_from_home_as_in_seed_001():
    """Seed 001 Sec 2.5.1, Fig. 7: the PUMA falls under gravity from its initial
    configuration (Table 3(a), all theta = 0), 10 s. Plausibility: it falls (the
    potential energy drops at first, the kinetic energy rises by as much), stays
    finite, conserves energy, and the qdd column is the forward dynamics of the
    samples."""
    robot = bundled("puma560_saha.toml")
    result = simulate(robot, 10.0, dt_out=0.01)
    assert_regular_samples(result, 6)
    np.testing.assert_array_equal(result.q[0], robot.q_home)
    np.testing.assert_array_equal(result.qd[0], np.zeros(6))
    T, V, E = result.energy.T
    early = result.t <= 0.3
    assert np.all(np.diff(V[early]) < 0), "the arm does not fall from home"
    assert np.all(np.diff(T[early]) > 0)
    drift, K_max = energy_drift(result)
    assert drift <= ENERGY_RTOL * K_max
    # joint angles stay bounded: an arm swinging under gravity, not spinning up
    assert np.max(np.abs(result.qd)) < 100.0
    for s in range(0, len(result), 111):
        assert_close(result.qdd[s], forward_dynamics(robot, result.q[s], result.qd[s], np.zeros(6)),
                     1e-12, 1.0)


# ----------------------------------------------------------------------------------
# The output grid
# ----------------------------------------------------------------------------------

def test_output_grid_is_regular_and_ends_exactly_at_the_duration():
    t = output_grid(1.234, 0.1)
    assert t[0] == 0.0 and t[-1] == 1.234
    assert len(t) == 14  # 13 steps of 1.234 / 13 < 0.1; 12 steps would be > 0.1
    assert_close(np.diff(t), np.full(13, 1.234 / 13), 1e-12)
    robot = bundled("two_link_planar.toml")
    result = simulate(robot, 1.234, dt_out=0.1)
    np.testing.assert_array_equal(result.t, t)


@fast(200)
@given(duration=reals(1e-3, 100.0), ratio=reals(1e-3, 2.0))
def test_output_grid_properties(duration, ratio):
    dt_out = duration * ratio
    t = output_grid(duration, dt_out)
    steps = len(t) - 1
    assert steps >= 1
    assert t[0] == 0.0 and t[-1] == duration
    dt = np.diff(t)
    assert np.all(dt > 0)
    assert_close(dt, np.full(steps, duration / steps), 1e-12)
    assert duration / steps <= dt_out * (1 + 1e-9)  # no step longer than dt_out
    if steps > 1:
        assert duration / (steps - 1) > dt_out * (1 - 1e-9)  # and no more steps than needed


# ----------------------------------------------------------------------------------
# Damping, gravity compensation, control
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["puma560_saha.toml", "planar3_saha1999.toml"])
def test_damping_makes_total_energy_non_increasing(name):
    robot = bundled(name)
    c = np.linspace(0.2, 1.0, robot.n)
    result = simulate(robot, 3.0, damping=c, dt_out=0.005)
    assert_regular_samples(result, robot.n)
    E = result.energy[:, 2]
    scale = float(np.max(np.abs(result.energy)))
    assert np.all(np.diff(E) <= 1e-9 * scale), "energy increased under damping"
    assert E[-1] < E[0]
    # the loss is the work of the damping forces: E(T) - E(0) = -int c qd^2 dt
    assert_close(result.tau, -c * result.qd, 1e-15, what="applied = -c qd")
    power = np.sum(c * result.qd ** 2, axis=1)
    h = result.t[1] - result.t[0]
    work = h / 3 * (power[0] + power[-1] + 4 * power[1:-1:2].sum() + 2 * power[2:-1:2].sum())
    assert len(result) % 2 == 1  # Simpson needs an even number of intervals
    assert_close(E[-1] - E[0], -work, 1e-5, what="energy lost vs damping work")


@pytest.mark.parametrize("name", ["puma560_saha.toml", "stanford_saha2009.toml", "ur5e.toml", "scara.toml"])
def test_constant_gravity_torques_hold_the_arm_at_rest(name):
    robot = bundled(name)
    rng = np.random.default_rng(len(name))
    q0 = robot.q_home + np.where(robot.is_revolute, rng.uniform(-1, 1, robot.n), 0.05)
    tau = gravity_torques(robot, q0)
    result = simulate(robot, 1.0, q0=q0, tau=tau)
    assert result.kind == "simulation"
    assert_regular_samples(result, robot.n)
    assert np.max(np.abs(result.q - q0)) < 1e-7
    assert np.max(np.abs(result.qd)) < 1e-6
    np.testing.assert_array_equal(result.tau, np.tile(tau, (len(result), 1)))
    # contrast: without the torques it falls
    fall = simulate(robot, 1.0, q0=q0)
    assert np.max(np.abs(fall.q - q0)) > 1e-3


@pytest.mark.parametrize("name", ["two_link_planar.toml", "puma560_saha.toml"])
def test_pd_controller_with_gravity_compensation_converges(name):
    robot = bundled(name)
    q_ref = robot.q_home + 0.5
    inertia = np.diag(mass_matrix(robot, q_ref))
    w = 4.0  # rad/s, critically damped per joint
    Kp, Kd = inertia * w * w, 2 * w * inertia
    calls = []

    def tau(t, q, qd):
        calls.append(t)
        return gravity_torques(robot, q) + Kp * (q_ref - q) - Kd * qd

    result = simulate(robot, 5.0, tau=tau, dt_out=0.05)
    assert calls and min(calls) >= 0.0 and max(calls) <= 5.0
    assert_regular_samples(result, robot.n)
    error = np.max(np.abs(result.q - q_ref), axis=1)
    assert error[-1] < 1e-3 and error[-1] < 1e-2 * error[0]
    assert np.max(np.abs(result.qd[-1])) < 1e-3
    # the tau column holds what the controller applied at each sample
    s = len(result) // 2
    assert_close(result.tau[s], gravity_torques(robot, result.q[s]) + Kp * (q_ref - result.q[s])
                 - Kd * result.qd[s], 1e-12)


# ----------------------------------------------------------------------------------
# Blow-up
# ----------------------------------------------------------------------------------

def drill() -> Robot:
    """No gravity; joint 1 turns about z_0, joint 2 slides along z_0 (the same axis);
    both links are symmetric about it with their mass centres on it. Spinning joint 1
    then exerts no force on joint 2: the GIM is diagonal and h_2 = 0."""
    return Robot("drill", (
        Link(JointType.REVOLUTE, mass=2.0, com=(0, 0, -0.1), inertia=(0.03, 0.03, 0.01, 0, 0, 0)),
        Link(JointType.PRISMATIC, b=0.2, mass=1.0, com=(0, 0, -0.1), inertia=(0.02, 0.02, 0.005, 0, 0, 0)),
    ), gravity=(0.0, 0.0, 0.0))


def test_a_runaway_joint_raises_simulation_error_naming_it_with_the_samples_so_far():
    """Negative damping on joint 1 (tau_1 = c qd_1): qd_1 = e^(c t / I_11) grows past the
    1e10 blow-up limit at t* = I_11 / c ln(1e10); joint 2 stays at rest."""
    robot = drill()
    I = mass_matrix(robot, robot.q_home)
    assert_close(I, np.diag(np.diag(I)), 1e-15)
    c = 10 * I[0, 0]
    t_star = I[0, 0] / c * math.log(1e10)  # 2.3 s
    with pytest.raises(SimulationError) as info:
        simulate(robot, 10.0, qd0=[1.0, 0.0], tau=lambda t, q, qd: np.array([c * qd[0], 0.0]))
    err = info.value
    assert err.joint == 1
    assert "singular" not in err.reason
    # the run stops at the last accepted step before the state passes 1e10; the steps
    # there are short (the rate grows 10-fold every 0.23 s): within 1 % of t*
    assert t_star * (1 - 1e-2) <= err.time <= t_star + 0.5
    assert abs(err.result.qd[-1, 0]) < 1e10 <= abs(err.result.qd[-1, 0]) * math.exp(
        10 * (t_star + 0.5 - err.result.t[-1]))
    result = err.result
    assert isinstance(result, Trajectory)
    assert_regular_samples(result, 2)
    assert len(result) > 100 and result.t[-1] <= err.time
    np.testing.assert_array_equal(result.t, output_grid(10.0, 0.01)[:len(result)])
    np.testing.assert_allclose(result.q[:, 1], robot.q_home[1], atol=1e-9)  # joint 2 did not move
    # the samples so far follow the exponential
    np.testing.assert_allclose(result.qd[:, 0], np.exp(c * result.t / I[0, 0]), rtol=1e-6)


@pytest.mark.parametrize("torque", ["constant", "function"])
def test_a_huge_torque_is_reported_as_a_blow_up_not_as_a_singular_mass_matrix(torque):
    """PUMA with tau = 1e30 N m on every joint. The motion blows up; the mass matrix
    stays regular (it depends on q only and is positive definite everywhere)."""
    robot = bundled("puma560_saha.toml")
    huge = np.full(6, 1e30)
    tau = huge if torque == "constant" else (lambda t, q, qd: huge)
    with pytest.raises(SimulationError) as info:
        simulate(robot, 1.0, tau=tau)
    err = info.value
    assert err.joint in range(1, 7)
    assert err.time >= 0.0
    assert_regular_samples(err.result, 6)
    assert len(err.result) >= 1
    assert "singular" not in err.reason, f"blow-up misreported: {err.reason!r}"


def gantry() -> Robot:
    """Joint 1 slides vertically along z_0, joint 2 horizontally along z_1 (alpha_1 = 90 deg):
    the GIM is diag(m_1 + m_2, m_2) at every configuration."""
    return Robot("gantry", (
        Link(JointType.PRISMATIC, alpha=math.pi / 2, mass=2.0, inertia=(0.1, 0.1, 0.1, 0, 0, 0)),
        Link(JointType.PRISMATIC, mass=1.0, inertia=(0.1, 0.1, 0.1, 0, 0, 0)),
    ), gravity=(0.0, 0.0, -9.81))


@pytest.mark.parametrize("travel", [1e3, 1e6, 1e8])
def test_forward_dynamics_of_a_far_travelled_prismatic_joint(travel):
    """The gantry's GIM does not depend on q, so neither do the accelerations."""
    robot = gantry()
    q = np.array([0.0, travel])
    tau = np.array([50.0, 3.0])
    expected = np.array([tau[0] / 3.0 - 9.81, tau[1] / 1.0])
    for method in ("denoc", "composite"):
        assert_close(forward_dynamics(robot, q, np.zeros(2), tau, method=method), expected, 1e-9,
                     what=f"{method} at q_2 = {travel:g} m")


def test_a_runaway_prismatic_joint_is_a_blow_up_not_a_singular_mass_matrix():
    """The gantry with a destabilising spring on joint 2 (f_2 = k q_2) and gravity
    compensation on joint 1: q_2 grows like e^(sqrt(k / m_2) t) until the blow-up limit."""
    robot = gantry()
    k = 100.0
    with pytest.raises(SimulationError) as info:
        simulate(robot, 10.0, q0=[0.0, 1e-3], tau=lambda t, q, qd: np.array([3.0 * 9.81, k * q[1]]))
    err = info.value
    assert err.joint == 2
    assert "singular" not in err.reason, f"blow-up misreported: {err.reason!r}"
    t_star = math.log(1e10 / 1e-3 * 2 / math.sqrt(k)) / math.sqrt(k)  # qd_2 reaches 1e10
    assert t_star - 0.1 <= err.time <= t_star + 0.5


# ----------------------------------------------------------------------------------
# Singular mass matrix
# ----------------------------------------------------------------------------------

def _unvalidated_robot(name, links, gravity) -> Model:
    """The Model of a serial arm compiled without a Robot's validation (which would
    refuse it): test-only."""
    from armdyn.core.model.compile import compile_model
    links = tuple(links)
    return compile_model(name=name, chains=(Chain("arm", links),), gravity=gravity,
                         actuated_flags=[True] * len(links))


def ideal_rod_arm() -> Model:
    """Link 3 is an ideal slender rod along joint 3's axis (zero axial inertia, mass
    centre on the axis): turning joint 3 moves no mass, so the GIM's row 3 is zero."""
    return _unvalidated_robot("ideal rod", (
        Link(JointType.REVOLUTE, a=0.5, alpha=math.pi / 2, mass=2.0, com=(-0.25, 0, 0),
             inertia=(0.01, 0.05, 0.05, 0, 0, 0)),
        Link(JointType.REVOLUTE, a=0.4, mass=1.5, com=(-0.2, 0, 0), inertia=(0.01, 0.03, 0.03, 0, 0, 0)),
        Link(JointType.REVOLUTE, b=0.3, mass=1.0, com=(0, 0, -0.15), inertia=(0.0075, 0.0075, 0.0, 0, 0, 0)),
    ), (0.0, 0.0, -9.81))


def test_the_ideal_rod_arm_is_refused_by_validation_and_really_singular():
    from armdyn.core import RobotError
    robot = ideal_rod_arm()
    with pytest.raises(RobotError):
        Robot(robot.name, robot.links, robot.gravity)
    I = mass_matrix(robot, np.array([0.3, -0.2, 0.1]))
    np.testing.assert_allclose(I[2], 0.0, atol=1e-15)
    np.testing.assert_allclose(I[:, 2], 0.0, atol=1e-15)


@pytest.mark.parametrize("method", ["denoc", "composite"])
def test_forward_dynamics_names_the_joint_of_a_singular_mass_matrix(method):
    robot = ideal_rod_arm()
    with pytest.raises(SingularMassMatrixError) as info:
        forward_dynamics(robot, np.array([0.3, -0.2, 0.1]), np.zeros(3), np.zeros(3), method=method)
    assert info.value.joint == 3
    assert "joint 3" in str(info.value)


def test_udu_and_articulated_inertias_name_the_joint_of_a_singular_mass_matrix():
    robot = ideal_rod_arm()
    for f in (udu_factors, articulated_body_inertias):
        with pytest.raises(SingularMassMatrixError) as info:
            f(robot, np.zeros(3))
        assert info.value.joint == 3


def test_simulation_of_a_singular_arm_raises_simulation_error_naming_the_joint():
    robot = ideal_rod_arm()
    with pytest.raises(SimulationError) as info:
        simulate(robot, 1.0)
    err = info.value
    assert err.joint == 3
    assert err.time == 0.0
    assert isinstance(err.result, Trajectory) and len(err.result) == 0
    assert err.result.q.shape == (0, 3)


def test_a_valid_robot_whose_formed_gim_is_singular_is_refused_by_the_cholesky_solve():
    """A 1e-5 kg m^2 hub on joint 1 carries a coaxial 1e12 kg m^2 flywheel on joint 2:
    GIM = [[I1 + I2, I2], [I2, I2]] with I1 + I2 == I2 in floating point."""
    robot = Robot("flywheel", (
        Link(JointType.REVOLUTE, mass=1.0, inertia=(1e-5, 1e-5, 1e-5, 0, 0, 0)),
        Link(JointType.REVOLUTE, mass=1e6, inertia=(1e12, 1e12, 1e12, 0, 0, 0)),
    ), gravity=(0.0, 0.0, -9.81))
    I = mass_matrix(robot, np.zeros(2))
    assert np.linalg.det(I) == 0.0 or np.linalg.matrix_rank(I) < 2
    with pytest.raises(SingularMassMatrixError) as info:
        forward_dynamics(robot, np.zeros(2), np.zeros(2), np.array([1.0, 0.0]), method="composite")
    assert info.value.joint in (1, 2)


# ----------------------------------------------------------------------------------
# Progress, cancel, chunks
# ----------------------------------------------------------------------------------

def test_progress_reaches_one_and_never_decreases():
    robot = bundled("puma560_saha.toml")
    seen: list[float] = []
    result = simulate(robot, 2.0, progress=seen.append)
    assert len(seen) > 2
    assert all(0.0 <= p <= 1.0 for p in seen)
    assert all(b >= a for a, b in zip(seen, seen[1:]))
    assert seen[-1] == 1.0
    assert result.t[-1] == 2.0


def test_cancel_raises_simulation_cancelled_with_the_samples_so_far():
    robot = bundled("puma560_saha.toml")
    full = simulate(robot, 3.0)
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) >= 3

    with pytest.raises(SimulationCancelled) as info:
        simulate(robot, 3.0, cancel=cancel)
    err = info.value
    partial = err.result
    assert len(calls) == 3
    assert isinstance(partial, Trajectory)
    assert_regular_samples(partial, 6)
    assert 0 < len(partial) < len(full)
    assert err.time == partial.t[-1] < 3.0
    # the samples so far are the beginning of the full run
    for name in ("t", "q", "qd", "qdd", "tau", "energy"):
        np.testing.assert_array_equal(getattr(partial, name), getattr(full, name)[:len(partial)])


def test_cancel_between_samples_of_a_sparse_output_grid():
    """With dt_out = 1 s most chunks carry no sample (they are yielded every
    chunk_duration of simulated time); a cancel after such a chunk must still raise
    SimulationCancelled with the samples so far."""
    robot = bundled("puma560_saha.toml")
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) >= 3

    with pytest.raises(SimulationCancelled) as info:
        simulate(robot, 10.0, dt_out=1.0, cancel=cancel)
    partial = info.value.result
    assert_regular_samples(partial, 6)
    assert len(partial) >= 1 and partial.t[0] == 0.0
    assert info.value.time >= partial.t[-1]


def test_simulate_chunks_concatenate_to_the_returned_trajectory():
    robot = bundled("stanford_saha2009.toml")
    gen = simulate_chunks(robot, 2.0, dt_out=0.01, chunk_duration=0.1)
    chunks = []
    while True:
        try:
            chunks.append(next(gen))
        except StopIteration as stop:
            whole = stop.value
            break
    assert len(chunks) > 2
    assert len(chunks[0]) and chunks[0].t[0] == 0.0
    joined = Trajectory.concatenate([c for c in chunks if len(c)])
    direct = simulate(robot, 2.0, dt_out=0.01)
    for name in ("t", "q", "qd", "qdd", "tau", "energy"):
        np.testing.assert_array_equal(getattr(joined, name), getattr(whole, name), err_msg=name)
        np.testing.assert_array_equal(getattr(direct, name), getattr(whole, name), err_msg=name)
    np.testing.assert_array_equal(whole.t, output_grid(2.0, 0.01))
    assert joined.kind == whole.kind == "free-fall"
    # the chunks are rows of the run's columns, and the run is joined without a copy
    for name in ("t", "q", "qd", "qdd", "tau", "energy", "stop_forces", "momentum"):
        assert np.shares_memory(getattr(whole, name), getattr(chunks[-1], name)), name


def test_a_run_has_the_same_samples_however_short_its_chunks_wall_time():
    """The compiled integrator is called for as many steps as fit before each chunk's
    wall-clock deadline (`Dop853Stepper.advance`): from MIN_CALL_STEPS a call (a
    deadline always past) to whole chunks, the samples are the same, bit for bit."""
    from armdyn.core.io.model_files import load_model
    robot = load_model(os.path.join(ROBOTS_DIR, "human_body_jalon.toml"))
    runs = []
    for wall in (1e-9, 0.03, 10.0):
        gen = simulate_chunks(robot, 1.0, chunk_duration=0.25, max_wall_per_chunk=wall)
        while True:
            try:
                next(gen)
            except StopIteration as stop:
                runs.append(stop.value)
                break
    for run in runs[1:]:
        for name in ("q", "qd", "qdd", "energy", "momentum"):
            np.testing.assert_array_equal(getattr(run, name), getattr(runs[0], name),
                                          err_msg=name)
