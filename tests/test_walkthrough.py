"""The recursion walkthrough (core.lab.walkthrough): the core's own intermediates, link by link.

Its last steps must equal `inverse_dynamics` / `forward_dynamics`; the twists, twist
rates and wrenches are checked against finite differences of `forward_kinematics`
(an independent computation: no DeNOC recursion in it).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import (Chain, JointType, Mechanism, articulated_body_inertias,
                         forward_dynamics, forward_kinematics, inverse_dynamics,
                         load_mechanism, mass_matrix, tree_inverse_dynamics)
from armdyn.core.lab.walkthrough import RIDIM, UDU, ArrowKind, walkthrough

from strategies import any_link, random_state_of_any

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
SERIAL = ["puma560_saha", "stanford_saha2009", "scara", "ur5e"]


def load(name: str):
    return load_mechanism(ROBOTS / f"{name}.toml")


def state(model, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = model.n
    return (model.q_home + rng.uniform(-0.4, 0.4, n), rng.uniform(-1.5, 1.5, n),
            rng.uniform(-2.0, 2.0, n))


@pytest.mark.parametrize("name", SERIAL + ["humanoid"])
def test_last_steps_equal_inverse_and_forward_dynamics(name):
    model = load(name)
    q, qd, qdd = state(model)
    tau_fd = np.random.default_rng(1).uniform(-5, 5, model.n)
    wt = walkthrough(model, q, qd, qdd, tau_fd=tau_fd)
    tau = inverse_dynamics(model, q, qd, qdd)
    last = wt.of(RIDIM)[-1]
    assert last.phase == "projection"
    np.testing.assert_allclose(last.quantity("\u03c4").value, tau, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(wt.tau, tau, rtol=1e-12, atol=1e-12)
    qdd_fd = forward_dynamics(model, q, qd, tau_fd)
    last = wt.of(UDU)[-1]
    assert last.phase == "accelerations (outward)"
    np.testing.assert_allclose(last.quantity("\u03b8''").value, qdd_fd, rtol=1e-10,
                               atol=1e-10)
    # default: the forward dynamics is driven by RIDIM's tau and gives qdd back
    np.testing.assert_allclose(walkthrough(model, q, qd, qdd).qdd, qdd, rtol=1e-9, atol=1e-9)


def test_a_mechanism_with_loops_walks_its_spanning_tree():
    model = load("fourbar")
    q, qd, qdd = state(model, 3)
    wt = walkthrough(model, q, qd, qdd)
    assert wt.tree_only
    np.testing.assert_allclose(wt.of(RIDIM)[-1].quantity("\u03c4").value,
                               tree_inverse_dynamics(model, q, qd, qdd), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["puma560_saha", "stanford_saha2009", "humanoid"])
def test_step_order_follows_the_tree(name):
    model = load(name)
    n = model.n
    wt = walkthrough(model, *state(model))
    order = list(model.kernel.views.order)
    phases = [(s.algorithm, s.phase) for s in wt.steps]
    assert len(wt.steps) == 5 * n
    assert [s.link for s in wt.steps if s.phase == "forward recursion"] == order
    assert [s.link for s in wt.steps if s.phase == "backward recursion"] == order[::-1]
    assert [s.link for s in wt.steps if s.phase == "projection"] == order[::-1]
    assert [s.link for s in wt.steps if s.phase.startswith("articulated")] == order[::-1]
    assert [s.link for s in wt.steps if s.phase.startswith("accelerations")] == order
    assert phases.index((UDU, "articulated inertias (inward)")) == 3 * n
    for step in wt.steps:
        assert step.equation and step.formula
        assert len({a.kind for a in step.arrows}) == len(step.arrows)  # one per kind


def _point_path(model, q0, qd, qdd, k: int, times) -> tuple[np.ndarray, np.ndarray]:
    """Rotation of link k and the position of its material point that sits at O_k at
    t = 0, along q(t) = q0 + qd t + qdd t^2 / 2 (forward kinematics only)."""
    kin0 = forward_kinematics(model, q0)
    R0, o0 = kin0.frames[k + 1, :3, :3], kin0.frames[k + 1, :3, 3]
    local = R0.T @ (kin0.joint_origins[k] - o0)
    Rs, ps = [], []
    for t in times:
        kin = forward_kinematics(model, q0 + qd * t + 0.5 * qdd * t * t)
        R, o = kin.frames[k + 1, :3, :3], kin.frames[k + 1, :3, 3]
        Rs.append(R)
        ps.append(R @ local + o)
    return np.array(Rs), np.array(ps)


def _omega(Rm, Rp, R0, h) -> np.ndarray:
    W = (Rp - Rm) / (2 * h) @ R0.T
    return 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])


@pytest.mark.parametrize("name", ["puma560_saha", "stanford_saha2009", "humanoid"])
def test_twists_and_twist_rates_match_finite_differences(name):
    model = load(name)
    q, qd, qdd = state(model, 7)
    g = np.asarray(model.gravity, dtype=float)
    wt = walkthrough(model, q, qd, qdd)
    h = 1e-4
    for step in wt.of(RIDIM):
        if step.phase != "forward recursion":
            continue
        k, i = step.link, step.link + 1
        R, p = _point_path(model, q, qd, qdd, k, (-2 * h, -h, 0.0, h, 2 * h))
        omega = _omega(R[1], R[3], R[2], h)
        v = (p[3] - p[1]) / (2 * h)
        t = step.quantity(f"t_{i}").value
        np.testing.assert_allclose(t[:3], omega, atol=1e-6)
        np.testing.assert_allclose(t[3:], v, atol=1e-6)
        # twist rate: angular acceleration and the point's acceleration, gravity in as -g
        domega = (_omega(R[2], R[4], R[3], h) - _omega(R[0], R[2], R[1], h)) / (2 * h)
        acc = (p[3] - 2 * p[2] + p[1]) / h**2
        tdot = step.quantity(f"\u1e6b_{i}").value
        np.testing.assert_allclose(tdot[:3], domega, atol=2e-4)
        np.testing.assert_allclose(tdot[3:] + g, acc, atol=2e-4)
        arrows = {a.kind: a for a in step.arrows}
        np.testing.assert_allclose(arrows[ArrowKind.ANGULAR_VELOCITY].vector, t[:3])
        np.testing.assert_allclose(arrows[ArrowKind.LINEAR_ACCELERATION].origin,
                                   forward_kinematics(model, q).joint_origins[k])


@pytest.mark.parametrize("name", ["puma560_saha", "stanford_saha2009"])
def test_wrench_force_is_newtons_law_on_the_outboard_links(name):
    """f_i of w*_i = sum over links j >= i of m_j (c''_j - g), c from forward kinematics."""
    model = load(name)
    q, qd, qdd = state(model, 11)
    g = np.asarray(model.gravity, dtype=float)
    h = 1e-4
    c = [forward_kinematics(model, q + qd * t + 0.5 * qdd * t * t).com for t in (-h, 0, h)]
    cdd = (c[2] - 2 * c[1] + c[0]) / h**2
    masses = np.array([link.mass for link in model.links])
    wt = walkthrough(model, q, qd, qdd)
    for step in wt.of(RIDIM):
        if step.phase == "backward recursion":
            k = step.link
            expected = (masses[k:, None] * (cdd[k:] - g)).sum(axis=0)
            np.testing.assert_allclose(step.quantity(f"w*_{k + 1}").value[3:], expected,
                                       rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("name", ["puma560_saha", "stanford_saha2009", "humanoid"])
def test_forward_dynamics_intermediates(name):
    model = load(name)
    q, qd, qdd = state(model, 5)
    wt = walkthrough(model, q, qd, qdd)
    abi = articulated_body_inertias(model, q)
    for step in wt.of(UDU):
        k, i = step.link, str(step.link + 1)
        if step.phase.startswith("articulated"):
            np.testing.assert_allclose(step.quantity("M\u0302_" + i).value, abi.M_hat[k],
                                       rtol=1e-12, atol=1e-12)
            m_hat = step.quantity("m\u0302_" + i).value
            np.testing.assert_allclose(m_hat, abi.m_hat[k], rtol=1e-12)
            # eq. 19a with the eta taken apart from the kernel's sums
            p = np.zeros(6)
            first = 0 if model.links[k].is_revolute else 3
            p[first:first + 3] = forward_kinematics(model, q).joint_axes[k]
            eta = step.quantity(f"\u03b7_{i},{k + 2}").value
            np.testing.assert_allclose(step.quantity("\u03c6\u0302_" + i).value,
                                       step.quantity("\u03c6_" + i).value - p @ eta,
                                       rtol=1e-9, atol=1e-9)
        else:
            np.testing.assert_allclose(step.quantity("\u03b8''_" + i).value, qdd[k],
                                       rtol=1e-9, atol=1e-9)


def _chain_of_several() -> Mechanism:
    """One chain: a free base, then spherical, universal, revolute, prismatic and
    spherical joints (random placements, masses and inertias)."""
    rng = np.random.default_rng(23)
    kinds = (JointType.FREE, JointType.SPHERICAL, JointType.UNIVERSAL, JointType.REVOLUTE,
             JointType.PRISMATIC, JointType.SPHERICAL)
    links = tuple(replace(any_link(rng, kind), name=f"L{k + 1}")
                  for k, kind in enumerate(kinds))
    return Mechanism(name="several", chains=(Chain("c", links),))


def test_joints_of_several_degrees_of_freedom_step_with_their_subspace_and_block_pivot():
    """A spherical, universal or free joint is one step: p_i is 6 x k and the UDU^T pivot
    the k x k block D_i. In a chain, D_i is the Schur complement of the mass matrix's
    block of joint i in the block of joint i and the joints after it (U D U^T with U
    unit upper triangular): a second method, the composite-body mass matrix, checks it,
    and the accelerations solve M θ'' = τ − C(q, θ')."""
    model = _chain_of_several()
    q, qd, qdd = random_state_of_any(np.random.default_rng(5), model)
    tau_fd = np.random.default_rng(6).uniform(-5, 5, model.nv)
    wt = walkthrough(model, q, qd, qdd, tau_fd=tau_fd)
    np.testing.assert_allclose(wt.tau, inverse_dynamics(model, q, qd, qdd), rtol=1e-12,
                               atol=1e-10)
    M = mass_matrix(model, q)
    bias = inverse_dynamics(model, q, qd, np.zeros(model.nv))
    np.testing.assert_allclose(wt.qdd, np.linalg.solve(M, tau_fd - bias), rtol=1e-8,
                               atol=1e-8)
    inward = [s for s in wt.of(UDU) if s.phase.startswith("articulated")]
    outward = [s for s in wt.of(UDU) if s.phase.startswith("accelerations")]
    assert [s.link for s in inward] == list(range(model.n))[::-1]
    for step in inward:
        k, i = step.link, str(step.link + 1)
        name = model.joint_names[k]
        own = np.arange(model.nv)[model.v_slice(name)]
        after = np.arange(own[-1] + 1, model.nv)
        schur = M[np.ix_(own, own)] - M[np.ix_(own, after)] @ np.linalg.solve(
            M[np.ix_(after, after)], M[np.ix_(after, own)])
        nk = len(own)
        if nk == 1:
            np.testing.assert_allclose(step.quantity("m\u0302_" + i).value, schur[0, 0],
                                       rtol=1e-9)
            continue
        P = step.quantity("P_" + i).value
        assert P.shape == (6, nk)
        np.testing.assert_allclose(np.diag(P.T @ P), np.ones(nk), atol=1e-12)  # unit axes
        assert step.quantity("\u03c8\u0302_" + i).value.shape == (6, nk)
        D = step.quantity("D_" + i).value
        assert D.shape == (nk, nk)
        np.testing.assert_allclose(D, schur, rtol=1e-9, atol=1e-9 * np.abs(schur).max())
        np.testing.assert_allclose(np.linalg.det(D), np.prod(step.quantity("d_" + i).value),
                                   rtol=1e-9)
        # eq. 19a with the block: phi^_i = phi_i - P_i^T eta_{i,i+1}
        eta = step.quantity(f"\u03b7_{i},{k + 2}").value
        np.testing.assert_allclose(step.quantity("\u03c6\u0302_" + i).value,
                                   step.quantity("\u03c6_" + i).value - P.T @ eta,
                                   rtol=1e-9, atol=1e-9)
    for step in outward:
        own = model.v_slice(model.joint_names[step.link])
        value = step.quantity(f"\u03b8''_{step.link + 1}").value
        np.testing.assert_allclose(np.atleast_1d(value), wt.qdd[own], rtol=1e-12)
    for step in wt.of(RIDIM):
        if step.phase == "forward recursion" and model.links[step.link].joint == JointType.FREE:
            assert step.quantity(f"p_{step.link + 1}").value.shape == (6, 6)
