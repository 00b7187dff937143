"""The tree dynamics (chains on the base and on links of other chains) against
Pinocchio, and the serial properties on trees; then the closed-chain reference
(`pinocchio_constrained_fd`) checked on its own.

Random trees (tests/strategies.py `random_tree`): revolute and prismatic joints, up to
30 joints in up to 8 chains, each chain hung on the base or on a link of another
chain (often of a later one in the joint order), random base placements with rpy.
Pinocchio's model of a tree comes from tests/pinocchio_reference.py; its frames are
checked here against the documented transform products written out in this file.

Tolerances are relative to the magnitudes involved (tests/strategies.py
`assert_close`, `scale_of`), as in tests/test_dynamics_vs_pinocchio.py.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from armdyn.core import (energy, forward_dynamics, forward_kinematics, gravity_torques,
                         inverse_dynamics, mass_matrix, udu_factors)
from armdyn.core import convective_torques, tree_inverse_dynamics
from armdyn.core import Chain, Loop, Mechanism, Placement
from armdyn.core import Link
from pinocchio_reference import (
    core_to_pin,
    is_planar,
    pin_external_forces,
    pin_mass_matrix_to_core,
    pin_to_core,
    pinocchio_constrained_fd,
    pinocchio_tree_model,
)
from strategies import (
    assert_close,
    fast,
    link_wrenches,
    random_state,
    robots_and_states,
    scale_of,
    seeds,
    tree_reach,
    trees_and_states,
)

RTOL = 1e-9  # relative to the largest magnitude in play, as the serial comparisons
# the closed-chain reference's checks use finite differences (observed ~1e-11..1e-9)
CLOSURE_RTOL = 1e-7
DALEMBERT_RTOL = 1e-8


def qdd_scale(M, *forces) -> float:
    """Round-off bound for accelerations solved from M qdd = b: |b| / lambda_min(M)."""
    return scale_of(*forces) / float(np.linalg.eigvalsh(M)[0])


class TreeReference:
    """Pinocchio model + data of a core tree; inputs and outputs in core joint order."""

    def __init__(self, mech):
        self.mech = mech
        self.model, self.ids = pinocchio_tree_model(mech)
        self.data = self.model.createData()

    def p(self, x):
        return core_to_pin(self.model, self.ids, x)

    def c(self, x):
        return pin_to_core(self.model, self.ids, x)

    def fext(self, q, f_ext):
        pin.forwardKinematics(self.model, self.data, self.p(q))
        pin.updateFramePlacements(self.model, self.data)
        return pin_external_forces(self.model, self.data, self.ids, f_ext)

    def rnea(self, q, qd, qdd, f_ext=None):
        args = (self.model, self.data, self.p(q), self.p(qd), self.p(qdd))
        if f_ext is None:
            return self.c(pin.rnea(*args))
        forces = self.fext(q, f_ext)
        return self.c(pin.rnea(*args, forces))

    def aba(self, q, qd, tau, f_ext=None):
        args = (self.model, self.data, self.p(q), self.p(qd), self.p(tau))
        if f_ext is None:
            return self.c(pin.aba(*args))
        forces = self.fext(q, f_ext)
        return self.c(pin.aba(*args, forces))

    def crba(self, q):
        M = pin.crba(self.model, self.data, self.p(q))
        return pin_mass_matrix_to_core(self.model, self.ids, M)

    def nle(self, q, qd):
        return self.c(pin.nonLinearEffects(self.model, self.data, self.p(q), self.p(qd)))

    def gravity(self, q):
        return self.c(pin.computeGeneralizedGravity(self.model, self.data, self.p(q)))


# ----------------------------------------------------------------------------------
# The reference itself: frames from the documented products, written out here
# ----------------------------------------------------------------------------------

def _dh_transform(a, b, alpha, theta):
    """Rz(theta) Tz(b) Tx(a) Rx(alpha) (docs/robot-file.md) as one 4x4 matrix."""
    ct, st_, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st_ * ca, st_ * sa, a * ct],
                     [st_, ct * ca, -ct * sa, a * st_],
                     [0.0, sa, ca, b],
                     [0.0, 0.0, 0.0, 1.0]])


def _placement_transform(xyz, rpy):
    """Trans(xyz) Rot(Rz(y) Ry(p) Rx(r)) as one 4x4 matrix."""
    r, p, y = rpy
    T = np.eye(4)
    T[:3, :3] = (np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
                 @ np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
                 @ np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]]))
    T[:3, 3] = xyz
    return T


def expected_frames(mech, q):
    """(joint frames, link frames) by name: chains walked parents first."""
    start, own = {}, {}
    q_of = dict(zip(mech.joint_names, q))
    pending = list(mech.chains)
    while pending:
        for chain in list(pending):
            if chain.parent is not None and chain.parent not in own:
                continue
            T = (own[chain.parent] if chain.parent is not None else np.eye(4)) \
                @ _placement_transform(chain.base.xyz, chain.base.rpy)
            for link in chain.links:
                a, b, alpha, theta = link.a, link.b, link.alpha, link.theta
                if link.is_revolute:
                    theta = q_of[link.name]
                else:
                    b = q_of[link.name]
                start[link.name] = T
                T = T @ _dh_transform(a, b, alpha, theta)
                own[link.name] = T
            pending.remove(chain)
    return start, own


@fast(60)
@given(trees_and_states())
def test_reference_and_core_frames_follow_the_documented_products(case):
    mech, q, _, _ = case
    ref = TreeReference(mech)
    n = mech.n
    np.testing.assert_array_equal(ref.model.gravity.linear, np.array(mech.gravity))
    assert ref.model.nq == ref.model.nv == n
    # the parent array: Pinocchio's parent joint is the core's parent
    jid_to_core = {jid: k for k, jid in enumerate(ref.ids)}
    for k, jid in enumerate(ref.ids):
        pj = ref.model.parents[jid]
        assert (jid_to_core[pj] if pj else -1) == mech.parent[k]
    pin.forwardKinematics(ref.model, ref.data, ref.p(q))
    pin.updateFramePlacements(ref.model, ref.data)
    kin = forward_kinematics(mech, q)
    assert kin.frames.shape == (n + 1, 4, 4) and kin.joint_frames.shape == (n, 4, 4)
    assert_close(kin.frames[0], np.eye(4), 1e-15, what="base frame")
    start, own = expected_frames(mech, q)
    L = tree_reach(mech, q)
    for k, (link, name) in enumerate(zip(mech.links, mech.joint_names)):
        jid = ref.ids[k]
        pin_own = ref.data.oMf[ref.model.getFrameId(name)].homogeneous
        pin_start = (ref.data.oMi[ref.model.parents[jid]]
                     * ref.model.jointPlacements[jid]).homogeneous
        assert_close(pin_own, own[name], RTOL, L, f"Pinocchio frame of {name}")
        assert_close(pin_start, start[name], RTOL, L, f"Pinocchio joint frame of {name}")
        assert_close(kin.frames[k + 1], own[name], RTOL, L, f"core frame of {name}")
        assert_close(kin.joint_frames[k], start[name], RTOL, L, f"core joint frame of {name}")
        c = own[name][:3, :3] @ np.array(link.com) + own[name][:3, 3]
        assert_close(kin.com[k], c, RTOL, L, f"core mass centre of {name}")
        pin_c = ref.data.oMi[jid].act(ref.model.inertias[jid].lever)
        assert_close(pin_c, c, RTOL, L, f"Pinocchio mass centre of {name}")


# ----------------------------------------------------------------------------------
# Dynamics against Pinocchio
# ----------------------------------------------------------------------------------

@fast(100)
@given(trees_and_states(), st.data())
def test_inverse_dynamics_equals_rnea_with_per_link_wrenches(case, data):
    mech, q, qd, qdd = case
    ref = TreeReference(mech)
    f_ext = data.draw(st.one_of(st.none(), link_wrenches(mech.n)))
    expected = ref.rnea(q, qd, qdd, f_ext)
    M = ref.crba(q)
    # the convective terms are about |dM/dq| qd^2 ~ |M| qd^2 (per rad or m of reach)
    coriolis = scale_of(qd) * scale_of(np.abs(M) @ np.abs(qd)) * tree_reach(mech, q)
    scale = scale_of(expected, np.abs(M) @ np.abs(qdd), ref.nle(q, qd)) + coriolis
    if f_ext is not None:
        scale += tree_reach(mech, q) * scale_of(f_ext)
    assert_close(inverse_dynamics(mech, q, qd, qdd, f_ext=f_ext), expected, RTOL, scale, "tau")
    assert_close(tree_inverse_dynamics(mech, q, qd, qdd, f_ext=f_ext), expected, RTOL, scale,
                 "tree tau")
    g = ref.gravity(q)
    h = ref.nle(q, qd) - g
    # the weights' own scale: a vertical axis's gravity torque is round-off about 0
    weight = sum(link.mass for link in mech.links) * float(np.linalg.norm(mech.gravity))
    assert_close(gravity_torques(mech, q), g, RTOL, weight * tree_reach(mech, q),
                 "gravity torques")
    assert_close(convective_torques(mech, q, qd), h, RTOL, scale_of(g, h) + coriolis,
                 "convective torques")


@fast(100)
@given(trees_and_states(), st.sampled_from(["denoc", "composite"]), st.data())
def test_forward_dynamics_equals_aba(case, method, data):
    mech, q, qd, qdd = case
    ref = TreeReference(mech)
    f_ext = data.draw(st.one_of(st.none(), link_wrenches(mech.n)))
    tau = ref.rnea(q, qd, qdd, f_ext)  # a force with a known, bounded answer
    expected = ref.aba(q, qd, tau, f_ext)
    got = forward_dynamics(mech, q, qd, tau, method=method, f_ext=f_ext)
    M = ref.crba(q)
    nle = ref.nle(q, qd)
    wrench_scale = 0.0 if f_ext is None else tree_reach(mech, q) * scale_of(f_ext)
    if f_ext is None:  # backward error: core's qdd satisfies Pinocchio's equations
        scale = scale_of(tau, nle, np.abs(M) @ np.abs(got))
        assert_close(M @ got + nle, tau, RTOL, scale, f"residual of {method}")
    scale = qdd_scale(M, tau, nle, np.abs(M) @ np.abs(qdd), wrench_scale)
    assert_close(got, expected, RTOL, scale, f"qdd ({method})")
    assert_close(got, qdd, RTOL, scale, f"qdd ({method}) vs the qdd that made tau")


@fast(100)
@given(trees_and_states())
def test_mass_matrix_equals_crba(case):
    mech, q, _, _ = case
    assert_close(mass_matrix(mech, q), TreeReference(mech).crba(q), RTOL, what="GIM")


@fast(100)
@given(trees_and_states())
def test_energy_equals_pinocchio(case):
    mech, q, qd, _ = case
    ref = TreeReference(mech)
    T_pin = pin.computeKineticEnergy(ref.model, ref.data, ref.p(q), ref.p(qd))
    V_pin = pin.computePotentialEnergy(ref.model, ref.data, ref.p(q))
    got = energy(mech, q, qd)
    assert got.shape == (3,)
    V_scale = mech.total_mass * float(np.linalg.norm(mech.gravity)) * tree_reach(mech, q)
    assert_close(got[0], T_pin, RTOL, what="kinetic energy")
    assert_close(got[1], V_pin, RTOL, V_scale, what="potential energy")
    assert_close(got[2], T_pin + V_pin, RTOL, V_scale + abs(T_pin), what="total energy")


def test_tree_comparison_detects_a_wrong_answer():
    """The comparisons can fail: a 1e-6 rad change of one chain's placement, a chain
    hung on the wrong link, or a per-link wrench with the wrong sign or on the wrong
    link is caught at RTOL."""
    def link(name, **kw):
        return Link(name=name, mass=1.0, com=(0.1, 0.05, 0.0),
                    inertia=(0.02, 0.03, 0.04, 0.001, 0.0, 0.0), **kw)
    arm = Chain("arm", (link("a1", a=0.4, alpha=0.3),
                        link("a2", joint="prismatic", a=0.1, theta=0.2),
                        link("a3", a=0.3, b=0.1)))
    branch = Chain("branch", (link("b1", a=0.2, alpha=-0.5), link("b2", a=0.3)), parent="a2",
                   base=Placement((0.1, 0.0, 0.2), (0.3, -0.2, 0.5)))
    mech = Mechanism("tree", chains=(branch, arm), gravity=(0.0, 0.0, -9.81))
    q, qd, qdd = (np.array(v) for v in ([0.3, 0.2, -0.4, 0.1, 0.5], [1.0, -0.5, 0.7, 0.2, -0.3],
                                         [0.2, 0.3, -0.1, 0.4, -0.2]))
    ref = TreeReference(mech)
    assert_close(inverse_dynamics(mech, q, qd, qdd), ref.rnea(q, qd, qdd), RTOL)
    others = [replace(mech, chains=(replace(branch, base=Placement((0.1, 0.0, 0.2),
                                                                   (0.3, -0.2, 0.5 + 1e-6))), arm)),
              replace(mech, chains=(replace(branch, parent="a3"), arm))]
    for other in others:
        with pytest.raises(AssertionError):
            assert_close(inverse_dynamics(other, q, qd, qdd), ref.rnea(q, qd, qdd), RTOL)
        tau = ref.rnea(q, qd, qdd)
        with pytest.raises(AssertionError):
            assert_close(forward_dynamics(other, q, qd, tau), ref.aba(q, qd, tau), RTOL)
    f_ext = np.zeros((5, 6))
    f_ext[1] = [0.3, -0.2, 0.5, 2.0, -1.0, 3.0]  # on b2, the branch's last link
    assert_close(inverse_dynamics(mech, q, qd, qdd, f_ext=f_ext), ref.rnea(q, qd, qdd, f_ext), RTOL)
    with pytest.raises(AssertionError):
        assert_close(inverse_dynamics(mech, q, qd, qdd, f_ext=-f_ext), ref.rnea(q, qd, qdd, f_ext),
                     RTOL)
    with pytest.raises(AssertionError):
        assert_close(inverse_dynamics(mech, q, qd, qdd, f_ext=np.roll(f_ext, 1, axis=0)),
                     ref.rnea(q, qd, qdd, f_ext), RTOL)


# ----------------------------------------------------------------------------------
# The serial properties on trees
# ----------------------------------------------------------------------------------

def _ancestors(parent, j):
    out = set()
    a = parent[j]
    while a >= 0:
        out.add(a)
        a = parent[a]
    return out


@fast(60)
@given(trees_and_states())
def test_mass_matrix_is_spd_and_equals_u_d_ut(case):
    mech, q, _, _ = case
    n = mech.n
    M = mass_matrix(mech, q)
    assert M.shape == (n, n)
    assert_close(M, M.T, 1e-14, what="GIM symmetry")
    np.linalg.cholesky(M)  # raises LinAlgError unless positive definite
    assert np.linalg.eigvalsh(M)[0] > 0
    U, D = udu_factors(mech, q)
    assert U.shape == (n, n) and D.shape == (n,)
    assert np.all(D > 0)
    np.testing.assert_array_equal(np.diag(U), np.ones(n))
    # U_kj can be non-zero only where k is an ancestor of j (and so may M_kj)
    for j in range(n):
        others = [k for k in range(n) if k != j and k not in _ancestors(mech.parent, j)]
        np.testing.assert_array_equal(U[others, j], 0.0)
    related = np.zeros((n, n), bool)
    for j in range(n):
        related[j, j] = True
        for a in _ancestors(mech.parent, j):
            related[a, j] = related[j, a] = True
    np.testing.assert_array_equal(M[~related], 0.0)
    assert_close(U @ np.diag(D) @ U.T, M, RTOL, what="U D U^T")


@fast(60)
@given(trees_and_states(), st.sampled_from(["denoc", "composite"]), st.data())
def test_inverse_then_forward_dynamics_round_trip(case, method, data):
    mech, q, qd, qdd = case
    f_ext = data.draw(st.one_of(st.none(), link_wrenches(mech.n)))
    tau = inverse_dynamics(mech, q, qd, qdd, f_ext=f_ext)
    M = mass_matrix(mech, q)
    forces = (tau, gravity_torques(mech, q), convective_torques(mech, q, qd),
              np.abs(M) @ np.abs(qdd),
              0.0 if f_ext is None else tree_reach(mech, q) * scale_of(f_ext))
    qdd2 = forward_dynamics(mech, q, qd, tau, method=method, f_ext=f_ext)
    assert_close(qdd2, qdd, RTOL, qdd_scale(M, *forces), "FD(ID(qdd))")
    assert_close(inverse_dynamics(mech, q, qd, qdd2, f_ext=f_ext), tau, RTOL,
                 scale_of(*forces, np.abs(M) @ np.abs(qdd2)), "ID(FD(tau))")


@fast(30)
@given(trees_and_states(max_joints=12), st.integers(1, 5), seeds, st.booleans())
def test_batch_calls_equal_per_sample_calls(case, T, seed, with_wrench):
    mech, _, _, _ = case
    rng = np.random.default_rng(seed)
    states = [random_state(rng, mech) for _ in range(T)]
    Q, Qd, Qdd = (np.array([s[i] for s in states]) for i in range(3))
    Tau = rng.uniform(-10, 10, (T, mech.n))
    W = rng.uniform(-10, 10, (T, mech.n, 6)) if with_wrench else None
    tau = inverse_dynamics(mech, Q, Qd, Qdd, f_ext=W)
    qdd = forward_dynamics(mech, Q, Qd, Tau, f_ext=W)
    E = energy(mech, Q, Qd)
    assert tau.shape == qdd.shape == (T, mech.n) and E.shape == (T, 3)
    for s in range(T):
        w = None if W is None else W[s]
        np.testing.assert_array_equal(tau[s], inverse_dynamics(mech, Q[s], Qd[s], Qdd[s], f_ext=w))
        np.testing.assert_array_equal(qdd[s], forward_dynamics(mech, Q[s], Qd[s], Tau[s], f_ext=w))
        np.testing.assert_array_equal(E[s], energy(mech, Q[s], Qd[s]))
    if W is not None and T != mech.n:  # one (n, 6) set of wrenches broadcast over the batch
        np.testing.assert_array_equal(
            inverse_dynamics(mech, Q, Qd, Qdd, f_ext=W[0]),
            inverse_dynamics(mech, Q, Qd, Qdd, f_ext=np.tile(W[0], (T, 1, 1))))
    elif W is not None:  # T == n: documented, (T, 6) is one wrench per sample on the last link
        last = np.zeros((T, mech.n, 6))
        last[:, -1] = W[0]
        np.testing.assert_array_equal(inverse_dynamics(mech, Q, Qd, Qdd, f_ext=W[0]),
                                      inverse_dynamics(mech, Q, Qd, Qdd, f_ext=last))


@fast(50)
@given(trees_and_states())
def test_gravity_torques_are_the_gradient_of_potential_energy(case):
    mech, q, _, _ = case
    # central differences of V cannot resolve a gravity near the underflow range
    assume(float(np.linalg.norm(mech.gravity)) > 1e-6)
    n = mech.n
    g = gravity_torques(mech, q)
    h = 1e-6
    E = np.eye(n) * h
    V = energy(mech, np.vstack([q + E, q - E]), np.zeros((2 * n, n)))[:, 1]
    dV = (V[:n] - V[n:]) / (2 * h)
    V_scale = mech.total_mass * float(np.linalg.norm(mech.gravity)) * tree_reach(mech, q)
    # central differences: truncation ~ h^2 V''', round-off ~ eps V / h
    assert_close(g, dV, 1e-7, V_scale, "g vs dV/dq")


def _along_motion(q, qd, qdd, h):
    """The states at t = +h and -h of the motion through (q, qd) with acceleration qdd."""
    return ((q + h * qd + 0.5 * h * h * qdd, qd + h * qdd),
            (q - h * qd + 0.5 * h * h * qdd, qd - h * qdd))


@fast(60)
@given(trees_and_states(max_joints=15), seeds, st.data())
def test_power_balance_d_dt_energy_equals_joint_and_wrench_power(case, seed, data):
    """d/dt (T + V) = qd . tau + sum_k (w_k . n_k + v_k . f_k), w_k and v_k the angular
    velocity of link k and the velocity of its own frame's origin (the wrench's
    reference point), from central differences of forward kinematics."""
    mech, q, qd, _ = case
    rng = np.random.default_rng(seed)
    f_ext = data.draw(st.one_of(st.none(), link_wrenches(mech.n)))
    tau = rng.uniform(-1, 1, mech.n) * (1.0 + scale_of(gravity_torques(mech, q)))
    qdd = forward_dynamics(mech, q, qd, tau, f_ext=f_ext)
    h = 1e-5
    plus, minus = _along_motion(q, qd, qdd, h)
    dE = (energy(mech, *plus)[2] - energy(mech, *minus)[2]) / (2 * h)
    power = qd @ tau
    L = tree_reach(mech, q)
    if f_ext is not None:
        F_plus = forward_kinematics(mech, plus[0]).frames[1:]
        F_minus = forward_kinematics(mech, minus[0]).frames[1:]
        R = forward_kinematics(mech, q).frames[1:, :3, :3]
        W = np.einsum("kij,klj->kil", (F_plus[:, :3, :3] - F_minus[:, :3, :3]) / (2 * h), R)
        omega = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], axis=1)
        v = (F_plus[:, :3, 3] - F_minus[:, :3, 3]) / (2 * h)
        power += float(np.sum(omega * f_ext[:, :3]) + np.sum(v * f_ext[:, 3:]))
    T = energy(mech, q, qd)[0]
    V_scale = mech.total_mass * float(np.linalg.norm(mech.gravity)) * L
    rates = 1 + scale_of(qd, qdd)
    scale = np.abs(qd) @ np.abs(tau) + rates ** 3 * (T + V_scale)
    if f_ext is not None:
        scale += mech.n * rates ** 2 * L * scale_of(f_ext)
    assert_close(dE, power, 1e-6, scale, "d/dt (T + V) vs power")


@fast(40)
@given(robots_and_states(), st.data())
def test_mechanism_from_a_serial_robot_gives_identical_numbers(case, data):
    robot, q, qd, qdd = case
    mech = Mechanism.from_robot(robot)
    assert mech.n == robot.n and mech.parent == tuple(range(-1, robot.n - 1))
    f_ext = data.draw(st.one_of(st.none(), link_wrenches(robot.n)))
    eq = np.testing.assert_array_equal
    eq(inverse_dynamics(mech, q, qd, qdd, f_ext=f_ext),
       inverse_dynamics(robot, q, qd, qdd, f_ext=f_ext))
    tau = inverse_dynamics(robot, q, qd, qdd)
    for method in ("denoc", "composite"):
        eq(forward_dynamics(mech, q, qd, tau, method=method, f_ext=f_ext),
           forward_dynamics(robot, q, qd, tau, method=method, f_ext=f_ext))
    eq(mass_matrix(mech, q), mass_matrix(robot, q))
    eq(energy(mech, q, qd), energy(robot, q, qd))
    eq(gravity_torques(mech, q), gravity_torques(robot, q))
    eq(convective_torques(mech, q, qd), convective_torques(robot, q, qd))
    for a, b in zip(udu_factors(mech, q), udu_factors(robot, q)):
        eq(a, b)
    km, kr = forward_kinematics(mech, q), forward_kinematics(robot, q)
    eq(km.frames, kr.frames)
    eq(km.joint_frames, kr.joint_frames)
    eq(km.com, kr.com)


# ----------------------------------------------------------------------------------
# The closed-chain reference on its own: loops built on the Pinocchio side only
# ----------------------------------------------------------------------------------
#
# The Mechanisms below are trees (no loops); the loop exists only in the call to
# pinocchio_constrained_fd. Its answer qdd is checked without Pinocchio's contact
# code: along q(t) = q + t qd + t^2/2 qdd the closure residual Phi (from Pinocchio's
# frame placements) keeps a zero second derivative (central differences with
# Richardson extrapolation), and the motion obeys d'Alembert: R^T (M qdd + h - tau) = 0
# for R spanning the motions that keep the loop closed (the null space of dPhi/dq by
# finite differences), M and h from Pinocchio's tree algorithms (proved above).

def _rod(name, length, mass, joint="revolute", **kw):
    """A link of length `length` along x with its mass centre near the middle."""
    m_l2 = mass * length ** 2
    inertia = (m_l2 / 100, m_l2 / 12, m_l2 / 12, 0.0, 0.0, 0.0)
    kw.setdefault("com", (-length / 2, 0.02, 0.01))
    return Link(name=name, joint=joint, a=length, mass=mass, inertia=inertia, **kw)


class Closure:
    """Closure residuals of loops on a tree, from Pinocchio frame placements."""

    def __init__(self, mech, loops):
        self.mech, self.loops = mech, loops
        self.model, self.ids = pinocchio_tree_model(mech)
        self.data = self.model.createData()

    def _pose(self, name):
        if name == "base":
            return np.eye(3), np.zeros(3)
        M = self.data.oMf[self.model.getFrameId(name)]
        return M.rotation, M.translation

    def phi(self, q, q_ref=None):
        """Stacked residuals at q; prismatic loops compare the relative rotation with
        that at q_ref."""
        rot_ref = self._relative_rotations(q_ref) if q_ref is not None else None
        pin.framesForwardKinematics(self.model, self.data, core_to_pin(self.model, self.ids, q))
        out = []
        for i, loop in enumerate(self.loops):
            (Ra, oa), (Rb, ob) = self._pose(loop.links[0]), self._pose(loop.links[1])
            Pa, Pb = Ra @ np.array(loop.at[0]) + oa, Rb @ np.array(loop.at[1]) + ob
            ua, ub = Ra @ np.array(loop.axis[0]), Rb @ np.array(loop.axis[1])
            kind = loop.joint.value
            if kind in ("revolute", "spherical"):
                out.append(Pb - Pa)
            if kind == "revolute":
                out.append(np.cross(ua, ub))
            if kind == "prismatic":
                out.append(np.cross(ua, Pb - Pa))
                out.append((Ra.T @ Rb - (rot_ref[i] if rot_ref is not None else 0)).ravel())
        return np.concatenate(out)

    def _relative_rotations(self, q):
        pin.framesForwardKinematics(self.model, self.data, core_to_pin(self.model, self.ids, q))
        return [self._pose(l.links[0])[0].T @ self._pose(l.links[1])[0] for l in self.loops]

    def jacobian(self, q, h=1e-6):
        return np.column_stack([(self.phi(q + h * e, q) - self.phi(q - h * e, q)) / (2 * h)
                                for e in np.eye(len(q))])

    def null_space(self, q):
        """Orthonormal basis of the closed motions at q (columns)."""
        _, s, Vt = np.linalg.svd(self.jacobian(q))
        rank = int(np.sum(s > 1e-6 * s[0]))
        return Vt[rank:].T

    def acceleration(self, q, qd, qdd, h=1e-3):
        """d^2/dt^2 Phi(q + t qd + t^2/2 qdd) at t = 0, central differences with one
        Richardson step (error O(h^4))."""
        def second(h):
            return (self.phi(q + h * qd + 0.5 * h * h * qdd, q) - 2 * self.phi(q, q)
                    + self.phi(q - h * qd + 0.5 * h * h * qdd, q)) / (h * h)
        return (4 * second(h / 2) - second(h)) / 3

    def close(self, q, free, iterations=50):
        """Gauss-Newton on the `free` joints to a closed q (the others held; prismatic
        loops keep the relative rotation they have at the start)."""
        q0 = q = np.array(q, dtype=float)
        for _ in range(iterations):
            r = self.phi(q, q0)
            if np.max(np.abs(r)) < 1e-14:
                break
            J = self.jacobian(q)[:, free]
            q = q.copy()
            q[free] -= np.linalg.lstsq(J, r, rcond=None)[0]
        assert np.max(np.abs(self.phi(q, q0))) < 1e-12, "did not close"
        return q


def check_constrained_fd(mech, loops, q, seed, planar=None, rate=2.0, with_wrench=False):
    """Draw a closed qd, tau (and wrenches), get qdd from the reference and check it."""
    rng = np.random.default_rng(seed)
    closure = Closure(mech, loops)
    R = closure.null_space(q)
    qd = rate * R @ rng.uniform(-1, 1, R.shape[1])
    tau = rng.uniform(-5, 5, mech.n)
    f_ext = rng.uniform(-5, 5, (mech.n, 6)) if with_wrench else None
    qdd = pinocchio_constrained_fd(mech, q, qd, tau, loops=loops, planar=planar, f_ext=f_ext)
    assert qdd.shape == (mech.n,) and np.all(np.isfinite(qdd))
    L = tree_reach(mech, q)
    # the loops stay closed: Phi'' = J qdd + Jdot qd = 0
    acc = closure.acceleration(q, qd, qdd)
    assert_close(acc, np.zeros_like(acc), CLOSURE_RTOL, L * (scale_of(qd) ** 2 + scale_of(qdd)),
                 "closure acceleration")
    # d'Alembert: the constraint forces do no work on closed motions
    ref = TreeReference(mech)
    M, h = ref.crba(q), ref.nle(q, qd)
    tau_all = tau if f_ext is None else tau + ref.rnea(q, qd, 0 * q) - ref.rnea(q, qd, 0 * q, f_ext)
    residual = R.T @ (M @ qdd + h - tau_all)
    assert_close(residual, np.zeros_like(residual), DALEMBERT_RTOL,
                 scale_of(np.abs(M) @ np.abs(qdd), h, tau_all), "R^T (M qdd + h - tau)")
    return closure, qd, tau, qdd


# planar four-bar: crank (base) - coupler - rocker (base, at (d, 0, 0)); cut coupler-rocker
FOUR_BAR = dict(d=1.0, crank=0.4, coupler=1.1, rocker=0.8)


def four_bar(rpy=(0.0, 0.0, 0.0), origin=(0.0, 0.0, 0.0)):
    g = FOUR_BAR
    Rp = _placement_transform(origin, rpy)
    chains = (Chain("input", (_rod("crank", g["crank"], 1.0), _rod("coupler", g["coupler"], 2.0)),
                    base=Placement(origin, rpy)),
              Chain("output", (_rod("rocker", g["rocker"], 1.5),),
                    base=Placement(tuple(Rp[:3, :3] @ [g["d"], 0, 0] + Rp[:3, 3]), rpy)))
    mech = Mechanism("four-bar", chains=chains, gravity=(0.0, -9.81, 0.0), angle_unit="rad")
    loop = Loop("cut", "revolute", ("coupler", "rocker"))
    return mech, (loop,)


def four_bar_closed_q(crank_angle):
    """Joint values closing the four-bar (coupler elbow up), by circle intersection."""
    g = FOUR_BAR
    B = g["crank"] * np.array([np.cos(crank_angle), np.sin(crank_angle)])
    D = np.array([g["d"], 0.0])
    r = np.linalg.norm(D - B)
    a = (g["coupler"] ** 2 - g["rocker"] ** 2 + r * r) / (2 * r)
    e = (D - B) / r
    C = B + a * e + math.sqrt(g["coupler"] ** 2 - a * a) * np.array([-e[1], e[0]])
    coupler = math.atan2(C[1] - B[1], C[0] - B[0])
    return np.array([crank_angle, coupler - crank_angle, math.atan2(C[1], C[0] - g["d"])])


@pytest.mark.parametrize("planar", [None, True, False])
@pytest.mark.parametrize("seed", range(4))
def test_constrained_reference_keeps_a_four_bar_closed(planar, seed):
    rng = np.random.default_rng(seed)
    rpy = (0.0, 0.0, 0.0) if seed < 2 else tuple(rng.uniform(-1, 1, 3))  # tilted plane
    mech, loops = four_bar(rpy, origin=tuple(rng.uniform(-0.5, 0.5, 3)) if seed >= 2 else (0, 0, 0))
    assert is_planar(mech, loops=loops)
    q = four_bar_closed_q(rng.uniform(-math.pi, math.pi))
    closure = Closure(mech, loops)
    assert np.max(np.abs(closure.phi(q, q))) < 1e-14
    assert closure.null_space(q).shape[1] == 1  # one degree of freedom
    check_constrained_fd(mech, loops, q, seed, planar=planar, with_wrench=seed % 2 == 1)


def test_four_bar_checks_detect_a_wrong_answer():
    """The checks can fail: the unconstrained tree's qdd opens the loop; a closed but
    wrong qdd (plus a closed motion) breaks d'Alembert's equation."""
    mech, loops = four_bar()
    q = four_bar_closed_q(0.7)
    closure, qd, tau, qdd = check_constrained_fd(mech, loops, q, seed=1)
    free = TreeReference(mech).aba(q, qd, tau)
    acc = closure.acceleration(q, qd, free)
    with pytest.raises(AssertionError):
        assert_close(acc, np.zeros_like(acc), CLOSURE_RTOL,
                     tree_reach(mech, q) * (scale_of(qd) ** 2 + scale_of(free)))
    R = closure.null_space(q)
    wrong = qdd + 1e-3 * R[:, 0]
    acc = closure.acceleration(q, qd, wrong)
    assert_close(acc, np.zeros_like(acc), CLOSURE_RTOL,
                 tree_reach(mech, q) * (scale_of(qd) ** 2 + scale_of(wrong)))
    ref = TreeReference(mech)
    M, h = ref.crba(q), ref.nle(q, qd)
    residual = R.T @ (M @ wrong + h - tau)
    with pytest.raises(AssertionError):
        assert_close(residual, np.zeros_like(residual), DALEMBERT_RTOL,
                     scale_of(np.abs(M) @ np.abs(wrong), h, tau))


@pytest.mark.parametrize("rail", ["base", "link"])
@pytest.mark.parametrize("seed", range(3))
def test_constrained_reference_keeps_a_slider_crank_closed(seed, rail):
    """A prismatic loop: crank - rod - slider block (tree, all revolute), the block
    sliding without turning along the base x axis (rail "base": the virtual slider
    rides on the base), or along a rail link turning about its own pivot (rail "link":
    the slider rides on that link, which comes first in the joint order and carries
    a pendulum, so Pinocchio's depth-first order matters; three degrees of freedom)."""
    crank, rod = 0.1, 0.3
    block = Link(name="block", a=0.0, mass=0.5, com=(0.0, 0.0, 0.0),
                 inertia=(0.001, 0.001, 0.001, 0.0, 0.0, 0.0))
    arm = Chain("arm", (_rod("crank", crank, 1.0), _rod("rod", rod, 1.0), block))
    rng = np.random.default_rng(seed)
    a1 = rng.uniform(-math.pi, math.pi)
    # closed by hand: the pin on the x axis, the block's frame parallel to the base's
    a2 = -math.asin(crank * math.sin(a1) / rod) - a1
    if rail == "base":
        chains = (arm,)
        loops = (Loop("slide", "prismatic", ("block", "base"), axis=((1, 0, 0), (1, 0, 0))),)
        q = np.array([a1, a2, -a1 - a2])
    else:
        chains = (Chain("guide", (_rod("rail", 0.5, 2.0, com=(-0.1, 0.0, 0.0)),),
                        base=Placement((-0.6, 0.0, 0.0))),
                  arm,
                  Chain("bob", (_rod("pendulum", 0.2, 0.7),), parent="rail",
                        base=Placement((-0.2, 0.0, 0.05), (0.3, 0.0, 0.0))))
        loops = (Loop("slide", "prismatic", ("rail", "block"), at=((-0.5, 0.0, 0.0), (0, 0, 0)),
                      axis=((1, 0, 0), (1, 0, 0))),)
        tilt = rng.uniform(-0.05, 0.05)  # the rail tilted a little, the block along it
        q = np.array([tilt, a1, a2, tilt - a1 - a2, rng.uniform(-1, 1)])
    mech = Mechanism("slider-crank", chains=chains, gravity=(0.0, -9.81, 0.0), angle_unit="rad")
    closure = Closure(mech, loops)
    if rail == "link":
        q = closure.close(q, free=[2, 3])
        assert_close(closure.phi(q, 0 * q)[-9:], np.zeros(9), 1e-12, 1.0,
                     what="block turned on the rail")
        model, ids = pinocchio_tree_model(mech, loops, q)
        # depth first: rail, pendulum, the slider (on the rail), then the arm
        assert list(ids) == [1, 4, 5, 6, 2]
        assert model.names[3] == "slide:slider" and model.parents[3] == 1
    assert np.max(np.abs(closure.phi(q, q))) < 1e-14
    assert closure.null_space(q).shape[1] == (1 if rail == "base" else 3)
    check_constrained_fd(mech, loops, q, seed, with_wrench=seed == 2)


@pytest.mark.parametrize("seed", range(3))
def test_constrained_reference_keeps_a_spatial_loop_closed(seed):
    """A spatial RUSR-like loop (spherical cut): crank about z on the base, a universal
    joint (two revolutes), the coupler; a rocker about a tilted axis elsewhere."""
    links = (_rod("crank", 0.3, 1.0, alpha=math.pi / 2),
             Link(name="u1", a=0.0, alpha=-math.pi / 2, mass=0.2, com=(0.0, 0.0, 0.0),
                  inertia=(0.001, 0.001, 0.001, 0.0, 0.0, 0.0)),
             _rod("coupler", 1.0, 1.5))
    rocker = (_rod("rocker", 0.6, 1.0),)
    mech = Mechanism("RUSR", chains=(Chain("input", links),
                                     Chain("output", rocker, base=Placement((0.8, 0.4, 0.2),
                                                                            (0.4, -0.3, 0.2)))),
                     gravity=(0.0, 0.0, -9.81), angle_unit="rad")
    loops = (Loop("ball", "spherical", ("coupler", "rocker")),)
    rng = np.random.default_rng(seed)
    closure = Closure(mech, loops)
    q = closure.close(np.array([rng.uniform(-0.3, 0.3), 0.2, 0.3, 0.5]), free=[1, 2, 3])
    assert not is_planar(mech, q, loops=loops)
    assert closure.null_space(q).shape[1] == 1
    check_constrained_fd(mech, loops, q, seed, with_wrench=seed == 1)


def test_constrained_reference_keeps_a_bennett_linkage_closed():
    """A spatial revolute cut with a redundant row (Bennett 4R, one degree of freedom
    although Gruebler counts none): two point contacts on the cut's axis."""
    a1, a2, al1, al2 = 0.5, 0.8, math.pi / 6, None
    al2 = math.asin(a2 * math.sin(al1) / a1)  # Bennett: a1 / sin(al1) = a2 / sin(al2)
    links = (_rod("l1", a1, 1.0, alpha=al1), _rod("l2", a2, 1.2, alpha=al2),
             _rod("l3", a1, 0.8, alpha=al1))
    mech = Mechanism("Bennett", chains=(Chain("chain", links),), gravity=(0.0, 0.0, -9.81),
                     angle_unit="rad")
    # frame 3 closes onto the base by a fourth row Rz(th4) Tx(a2) Rx(al2): its inverse
    # puts the cut at (-a2, 0, 0) with axis Rx(-al2) z in the base frame
    loops = (Loop("cut", "revolute", ("l3", "base"), at=((0, 0, 0), (-a2, 0, 0)),
                  axis=((0, 0, 1), (0, math.sin(al2), math.cos(al2)))),)
    closure = Closure(mech, loops)
    # Bennett's closed form: tan(th1/2) tan(th2/2) = sin((al2 + al1)/2) / sin((al2 - al1)/2)
    th1 = 0.9
    th2 = 2 * math.atan(math.sin((al2 + al1) / 2) / math.sin((al2 - al1) / 2) / math.tan(th1 / 2))
    q = closure.close(np.array([th1, th2, -th1]), free=[1, 2])
    assert closure.null_space(q).shape[1] == 1
    assert not is_planar(mech, q, loops=loops)
    for seed in range(3):
        check_constrained_fd(mech, loops, q, seed, with_wrench=seed == 2)
