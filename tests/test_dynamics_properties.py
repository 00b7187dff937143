"""Properties of the dynamics core on random robots: algorithms checked against each
other and against physics, never against numbers typed by hand.

* the GIM is symmetric positive definite, and its columns are what RIDIM gives
  for unit accelerations (composite bodies vs the two-recursion ID);
* U D U^T equals the GIM, U unit upper triangular, D > 0, and D_k is the
  articulated inertia of joint k (1 / (I[k:, k:]^-1)[0, 0]);
* forward dynamics "denoc" and "composite" agree; ID then FD returns qdd, FD then
  ID returns tau; batch ID equals per-sample ID;
* the power equation d/dt (T + V) = qd . tau (+ the power of an external wrench)
  along forward-dynamics motion, by central differences;
* T = qd^T I qd / 2, the gravity torques are dV/dq;
* composite and articulated inertias against the same 6x6 mass matrices
  built here from forward kinematics;
* every bundled robot (robots/*.toml) loads and runs ID and FD (smoke test).
"""
from __future__ import annotations

import glob
import os
import zlib
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

from armdyn.core import (articulated_body_inertias, composite_body_inertias, convective_torques,
                         energy, forward_dynamics, forward_kinematics, gravity_torques,
                         inverse_dynamics, mass_matrix, udu_factors)
from armdyn.core import load_robot
from pinocchio_reference import pinocchio_model
from strategies import (
    assert_close,
    fast,
    random_state,
    robots_and_states,
    scale_of,
    seeds,
    wrenches,
)

RTOL = 1e-9
ROBOTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robots")
# the serial-arm files (robots/ also holds mechanism files, tested in test_loops.py)
ROBOT_FILES = sorted(p for p in glob.glob(os.path.join(ROBOTS_DIR, "*.toml"))
                     if 'format = "armdyn-robot/1"' in open(p, encoding="utf-8").read())


def no_gravity(robot):
    return replace(robot, gravity=(0.0, 0.0, 0.0))


def reach(robot, q) -> float:
    """A length scale: the sum of the DH offsets and the prismatic travel, m."""
    return 1.0 + sum(abs(l.a) + abs(l.b) for l in robot.links) + scale_of(q)


def qdd_scale(I, *forces) -> float:
    return scale_of(*forces) / float(np.linalg.eigvalsh(I)[0])


def skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def extended_mass(mass, c, R, inertia_c, origin):
    """Seed 001 eq. 6: the 6x6 mass matrix of a body about the point `origin`, base
    frame: [[I_O, m d x 1], [-m d x 1, m 1]] with d = c - origin, I_O by the
    parallel-axis theorem. Built here from forward kinematics, independently."""
    d = c - origin
    I_O = R @ inertia_c @ R.T + mass * (d @ d * np.eye(3) - np.outer(d, d))
    out = np.zeros((6, 6))
    out[:3, :3] = I_O
    out[:3, 3:] = mass * skew(d)
    out[3:, :3] = -mass * skew(d)
    out[3:, 3:] = mass * np.eye(3)
    return out


# ----------------------------------------------------------------------------------
# The GIM
# ----------------------------------------------------------------------------------

@fast(100)
@given(robots_and_states())
def test_gim_is_symmetric_positive_definite_and_its_columns_are_id_of_unit_accelerations(case):
    robot, q, _, _ = case
    n = robot.n
    I = mass_matrix(robot, q)
    assert I.shape == (n, n)
    assert_close(I, I.T, 1e-14, what="GIM symmetry")
    np.linalg.cholesky(I)  # raises LinAlgError unless positive definite
    assert np.linalg.eigvalsh(I)[0] > 0
    # RIDIM with qd = 0 and no gravity gives I qdd: column j is ID(q, 0, e_j)
    free = no_gravity(robot)
    columns = inverse_dynamics(free, np.tile(q, (n, 1)), np.zeros((n, n)), np.eye(n)).T
    assert_close(columns, I, RTOL, what="GIM vs ID of unit accelerations")


@fast(100)
@given(robots_and_states())
def test_udu_factors_reproduce_the_gim_and_d_is_the_articulated_pivot(case):
    robot, q, _, _ = case
    n = robot.n
    I = mass_matrix(robot, q)
    U, D = udu_factors(robot, q)
    assert U.shape == (n, n) and D.shape == (n,)
    np.testing.assert_array_equal(np.diag(U), np.ones(n))
    np.testing.assert_array_equal(np.tril(U, -1), np.zeros((n, n)))
    assert np.all(D > 0)
    assert_close(U @ np.diag(D) @ U.T, I, RTOL, what="U D U^T")
    # D_k: the inertia felt at joint k with joints k+1..n free (Schur complement)
    for k in range(n):
        pivot = 1.0 / np.linalg.inv(I[k:, k:])[0, 0]
        assert_close(D[k], pivot, RTOL * np.linalg.cond(I[k:, k:]), what=f"D[{k}]")
    abi = articulated_body_inertias(robot, q)
    assert_close(abi.m_hat, D, 1e-14, what="m_hat == D")


@fast(100)
@given(robots_and_states())
def test_kinetic_energy_is_half_qd_gim_qd(case):
    robot, q, qd, _ = case
    I = mass_matrix(robot, q)
    T = energy(robot, q, qd)[0]
    assert T >= 0
    assert_close(T, 0.5 * qd @ I @ qd, RTOL, 0.5 * np.abs(qd) @ np.abs(I) @ np.abs(qd), "T")


# ----------------------------------------------------------------------------------
# Forward and inverse dynamics against each other
# ----------------------------------------------------------------------------------

@fast(100)
@given(robots_and_states(), seeds)
def test_denoc_and_composite_forward_dynamics_agree(case, seed):
    robot, q, qd, _ = case
    rng = np.random.default_rng(seed)
    g = gravity_torques(robot, q)
    h = convective_torques(robot, q, qd)
    tau = rng.uniform(-1, 1, robot.n) * (1.0 + scale_of(g, h))
    a = forward_dynamics(robot, q, qd, tau, method="denoc")
    b = forward_dynamics(robot, q, qd, tau, method="composite")
    I = mass_matrix(robot, q)
    scale = qdd_scale(I, tau, g, h)
    assert_close(a, b, RTOL, scale, "denoc vs composite")
    # and both solve I qdd = tau - h - g
    assert_close(I @ a + h + g, tau, RTOL, scale_of(tau, g, h, np.abs(I) @ np.abs(a)), "residual")


@fast(100)
@given(robots_and_states(), st.sampled_from(["denoc", "composite"]))
def test_inverse_then_forward_dynamics_round_trip(case, method):
    robot, q, qd, qdd = case
    tau = inverse_dynamics(robot, q, qd, qdd)
    I = mass_matrix(robot, q)
    forces = (tau, gravity_torques(robot, q), convective_torques(robot, q, qd),
              np.abs(I) @ np.abs(qdd))
    assert_close(forward_dynamics(robot, q, qd, tau, method=method), qdd, RTOL,
                 qdd_scale(I, *forces), "FD(ID(qdd))")
    # and the other way: ID(FD(tau)) == tau
    qdd2 = forward_dynamics(robot, q, qd, tau, method=method)
    assert_close(inverse_dynamics(robot, q, qd, qdd2), tau, RTOL,
                 scale_of(*forces, np.abs(I) @ np.abs(qdd2)), "ID(FD(tau))")


@fast(60)
@given(robots_and_states(max_links=12), st.integers(1, 6), seeds, st.booleans())
def test_batch_inverse_dynamics_equals_per_sample_calls(case, T, seed, with_wrench):
    robot, _, _, _ = case
    rng = np.random.default_rng(seed)
    states = [random_state(rng, robot) for _ in range(T)]
    Q, Qd, Qdd = (np.array([s[i] for s in states]) for i in range(3))
    W = rng.uniform(-10, 10, (T, 6)) if with_wrench else None
    batch = inverse_dynamics(robot, Q, Qd, Qdd, f_ext=W)
    assert batch.shape == (T, robot.n)
    for s in range(T):
        single = inverse_dynamics(robot, Q[s], Qd[s], Qdd[s], f_ext=None if W is None else W[s])
        assert single.shape == (robot.n,)
        np.testing.assert_array_equal(batch[s], single)
    # one wrench (6,) broadcast over the batch
    if W is not None:
        np.testing.assert_array_equal(inverse_dynamics(robot, Q, Qd, Qdd, f_ext=W[0]),
                                      inverse_dynamics(robot, Q, Qd, Qdd, f_ext=np.tile(W[0], (T, 1))))


@fast(40)
@given(robots_and_states(max_links=12), st.integers(1, 6), seeds, st.booleans())
def test_batch_forward_dynamics_equals_per_sample_calls(case, T, seed, with_wrench):
    robot, _, _, _ = case
    rng = np.random.default_rng(seed)
    states = [random_state(rng, robot) for _ in range(T)]
    Q, Qd = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    Tau = rng.uniform(-10, 10, (T, robot.n))
    W = rng.uniform(-10, 10, (T, 6)) if with_wrench else None
    batch = forward_dynamics(robot, Q, Qd, Tau, f_ext=W)
    assert batch.shape == (T, robot.n)
    for s in range(T):
        single = forward_dynamics(robot, Q[s], Qd[s], Tau[s], f_ext=None if W is None else W[s])
        np.testing.assert_array_equal(batch[s], single)


@fast(100)
@given(robots_and_states())
def test_gravity_torques_are_the_gradient_of_potential_energy(case):
    robot, q, _, _ = case
    n = robot.n
    g = gravity_torques(robot, q)
    assert_close(g, inverse_dynamics(robot, q, np.zeros(n), np.zeros(n)), 1e-15, what="g = ID(q,0,0)")
    h = 1e-6
    dV = np.empty(n)
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        dV[k] = (energy(robot, q + e, 0 * q)[1] - energy(robot, q - e, 0 * q)[1]) / (2 * h)
    V_scale = robot.total_mass * float(np.linalg.norm(robot.gravity)) * reach(robot, q)
    # central differences: truncation ~ h^2 V''' , round-off ~ eps V / h
    assert_close(g, dV, 1e-7, V_scale, "g vs dV/dq")


# ----------------------------------------------------------------------------------
# The power equation along forward-dynamics motion
# ----------------------------------------------------------------------------------

def _along_motion(q, qd, qdd, h):
    """The states at t = +h and -h of the motion through (q, qd) with acceleration qdd
    (second-order Taylor; the jerk term cancels in a central difference up to O(h^2))."""
    return ((q + h * qd + 0.5 * h * h * qdd, qd + h * qdd),
            (q - h * qd + 0.5 * h * h * qdd, qd - h * qdd))


@fast(100)
@given(robots_and_states(max_links=15), seeds)
def test_power_equation_d_dt_total_energy_equals_qd_dot_tau(case, seed):
    robot, q, qd, _ = case
    rng = np.random.default_rng(seed)
    g = gravity_torques(robot, q)
    tau = rng.uniform(-1, 1, robot.n) * (1.0 + scale_of(g))
    qdd = forward_dynamics(robot, q, qd, tau)
    h = 1e-5
    plus, minus = _along_motion(q, qd, qdd, h)
    E_plus, E_minus = energy(robot, *plus)[2], energy(robot, *minus)[2]
    dE = (E_plus - E_minus) / (2 * h)
    power = qd @ tau
    T = energy(robot, q, qd)[0]
    V_scale = robot.total_mass * float(np.linalg.norm(robot.gravity)) * reach(robot, q)
    # errors: round-off eps (T + |V|) / h and truncation h^2 (E''') / 6
    scale = np.abs(qd) @ np.abs(tau) + (1 + scale_of(qd, qdd)) ** 3 * (T + V_scale)
    assert_close(dE, power, 1e-6, scale, "d/dt (T + V) vs qd . tau")


@fast(80)
@given(robots_and_states(max_links=15), wrenches(), seeds)
def test_power_equation_with_an_external_wrench_on_the_last_link(case, f_ext, seed):
    """d/dt (T + V) = qd . tau + w . n + v . f, with w the angular velocity of the last
    link and v the velocity of the origin of its DH frame (the wrench's reference
    point), both from finite differences of forward kinematics. Checks the sign
    and the reference point of the f_ext convention without Pinocchio."""
    robot, q, qd, _ = case
    rng = np.random.default_rng(seed)
    tau = rng.uniform(-1, 1, robot.n) * (1.0 + scale_of(gravity_torques(robot, q)))
    qdd = forward_dynamics(robot, q, qd, tau, f_ext=f_ext)
    h = 1e-5
    plus, minus = _along_motion(q, qd, qdd, h)
    dE = (energy(robot, *plus)[2] - energy(robot, *minus)[2]) / (2 * h)
    F_plus, F_minus = forward_kinematics(robot, plus[0]).end_effector, \
        forward_kinematics(robot, minus[0]).end_effector
    R = forward_kinematics(robot, q).end_effector[:3, :3]
    W = (F_plus[:3, :3] - F_minus[:3, :3]) / (2 * h) @ R.T  # Rdot R^T = w x 1
    omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
    v = (F_plus[:3, 3] - F_minus[:3, 3]) / (2 * h)
    power = qd @ tau + omega @ f_ext[:3] + v @ f_ext[3:]
    T = energy(robot, q, qd)[0]
    L = reach(robot, q)
    V_scale = robot.total_mass * float(np.linalg.norm(robot.gravity)) * L
    scale = (np.abs(qd) @ np.abs(tau) + (1 + scale_of(qd, qdd)) ** 3 * (T + V_scale)
             + (1 + scale_of(qd, qdd)) ** 2 * L * scale_of(f_ext))
    assert_close(dE, power, 1e-6, scale, "d/dt (T + V) vs qd . tau + t . w_ext")


# ----------------------------------------------------------------------------------
# Composite and articulated bodies against 6x6 mass matrices built from kinematics
# ----------------------------------------------------------------------------------

def _link_mass_matrices(robot, q):
    """M_k about O_k (origin of DH frame k-1, on joint k's axis), base frame."""
    kin = forward_kinematics(robot, q)
    return [extended_mass(link.mass, kin.com[k], kin.frames[k + 1, :3, :3], link.inertia_matrix,
                          kin.origins[k]) for k, link in enumerate(robot.links)], kin


@fast(100)
@given(robots_and_states())
def test_composite_body_inertias_are_the_welded_outboard_links(case):
    robot, q, _, _ = case
    n = robot.n
    Mt = composite_body_inertias(robot, q)
    assert Mt.shape == (n, 6, 6)
    kin = forward_kinematics(robot, q)
    masses = np.array([l.mass for l in robot.links])
    L = reach(robot, q)
    scale = robot.total_mass * L * L + max(np.abs(l.inertia).max() for l in robot.links)
    # the whole arm welded: total mass, and the bottom-right block m 1
    assert_close(Mt[0][3:, 3:], robot.total_mass * np.eye(3), 1e-14, what="M~_1 mass block")
    for i in range(n):
        O = kin.origins[i]
        expected = sum(extended_mass(robot.links[j].mass, kin.com[j], kin.frames[j + 1, :3, :3],
                                     robot.links[j].inertia_matrix, O) for j in range(i, n))
        assert_close(Mt[i], expected, RTOL, scale, f"M~_{i + 1}")
        # the mass block and the mass centre of links i..n
        m = masses[i:].sum()
        c = (masses[i:, None] * kin.com[i:]).sum(axis=0) / m
        assert_close(Mt[i][3:, 3:], m * np.eye(3), 1e-14, m, f"M~_{i + 1} mass")
        assert_close(Mt[i][:3, 3:], m * skew(c - O), RTOL, scale, f"M~_{i + 1} first moment")


@fast(100)
@given(robots_and_states())
def test_articulated_inertia_of_the_last_link_is_its_own_mass_matrix(case):
    robot, q, _, _ = case
    n = robot.n
    abi = articulated_body_inertias(robot, q)
    assert abi.M_hat.shape == (n, 6, 6) and abi.psi_hat.shape == (n, 6) and abi.m_hat.shape == (n,)
    M, kin = _link_mass_matrices(robot, q)
    L = reach(robot, q)
    scale = robot.total_mass * L * L + max(np.abs(l.inertia).max() for l in robot.links)
    assert_close(abi.M_hat[-1], M[-1], RTOL, scale, "M^_n == M_n")
    # psi^_k = M^_k p_k and m^_k = p_k^T psi^_k for every k
    for k, link in enumerate(robot.links):
        p = np.zeros(6)
        axis = kin.joint_axes[k]
        if link.is_revolute:
            p[:3] = axis
        else:
            p[3:] = axis
        assert_close(abi.psi_hat[k], abi.M_hat[k] @ p, RTOL, scale, f"psi^_{k + 1}")
        assert_close(abi.m_hat[k], p @ abi.M_hat[k] @ p, RTOL, scale, f"m^_{k + 1}")
    # the last link alone is both its composite and its articulated body
    Mt = composite_body_inertias(robot, q)
    assert_close(abi.M_hat[-1], Mt[-1], RTOL, scale, "M^_n == M~_n")
    # with joints free outboard, an articulated body is 'softer' than the welded
    # composite one: M~_k - M^_k is positive semidefinite
    for k in range(n):
        diff = Mt[k] - abi.M_hat[k]
        assert np.linalg.eigvalsh(0.5 * (diff + diff.T))[0] >= -RTOL * scale, f"M~_{k+1} - M^_{k+1}"


# ----------------------------------------------------------------------------------
# Bundled robots: every file in robots/ loads and runs
# ----------------------------------------------------------------------------------

def test_the_robots_folder_has_files():
    assert ROBOT_FILES, f"no robots/*.toml in {ROBOTS_DIR}"


@pytest.mark.parametrize("path", ROBOT_FILES, ids=[os.path.basename(p) for p in ROBOT_FILES])
def test_bundled_robot_loads_and_runs_inverse_and_forward_dynamics(path):
    robot = load_robot(path)
    n = robot.n
    assert n >= 1
    model = pinocchio_model(robot)
    data = model.createData()
    rng = np.random.default_rng(zlib.crc32(os.path.basename(path).encode()))
    states = [(robot.q_home, np.zeros(n), np.zeros(n))] + [random_state(rng, robot) for _ in range(5)]
    for q, qd, qdd in states:
        tau = inverse_dynamics(robot, q, qd, qdd)
        assert np.all(np.isfinite(tau))
        tau_pin = pin.rnea(model, data, q, qd, qdd)
        I = mass_matrix(robot, q)
        scale = scale_of(tau_pin, np.abs(I) @ np.abs(qdd), pin.nonLinearEffects(model, data, q, qd))
        assert_close(tau, tau_pin, RTOL, scale, f"{path}: ID vs rnea")
        for method in ("denoc", "composite"):
            got = forward_dynamics(robot, q, qd, tau, method=method)
            assert_close(got, qdd, RTOL, qdd_scale(I, tau, np.abs(I) @ np.abs(qdd)),
                         f"{path}: FD ({method})")
        E = energy(robot, q, qd)
        assert np.all(np.isfinite(E))
        np.linalg.cholesky(I)
    # at home, at rest, the arm needs exactly its gravity torques
    assert_close(inverse_dynamics(robot, robot.q_home, np.zeros(n), np.zeros(n)),
                 gravity_torques(robot, robot.q_home), 1e-15)
