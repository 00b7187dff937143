"""Closed chains, kinematics: construction, closure, the loop Jacobian and gamma, the
redundant rows and the errors.

The random closed mechanisms are tests/strategies.py's `closed_mechanisms`: random
trees with 1..3 revolute, spherical or prismatic loops closed at the drawn pose. The
references there ("closed chains") are independent of ArmDyn's closure code: the DH
frames written out in that file, and the motions that keep a loop closed from the
relative twist of its two links at the joint point (`twist_constraints`). Tolerances are
relative to the magnitudes involved (tests/strategies.py `assert_close`, `scale_of`).
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from armdyn.core import (Assembly, Chain, Link, Loop, LoopClosureError, Mechanism,
                         MechanismError, Placement, assemble, constraint_row_labels,
                         forward_dynamics, load_mechanism, loop_acceleration_term,
                         loop_jacobian, loop_residual, mobility, velocity_transformation)
from armdyn.core.model.closure import numerical_rank
from strategies import (assert_close, closed_mechanisms, closed_rates, fast, null_space,
                        residual_scale, rpy_matrix, rusr_mechanism, scale_of, seeds,
                        twist_constraints)

ROBOTS = Path(__file__).resolve().parent.parent / "robots"

# ----------------------------------------------------------------------------------
# 1. Random closed mechanisms: construction, closure, Jacobian, gamma
# ----------------------------------------------------------------------------------


@fast(80)
@given(closed_mechanisms())
def test_construction_keeps_a_closed_pose_and_finds_the_mobility(case):
    mech, independent, N = case
    drawn = np.array([l.theta if l.is_revolute else l.b
                      for ch in mech.chains for l in ch.links])
    L = residual_scale(mech, drawn)
    assert mech.warnings == ()
    assert_close(mech.q_home, drawn, 1e-12, L, "q_home vs the drawn pose")
    Phi = loop_residual(mech, mech.q_home)
    assert Phi.shape == (mech.kernel.m,)
    assert scale_of(Phi) <= 1e-12 * L, f"closure residual {Phi}"
    assert mech.dof == N.shape[1] == mobility(mech)
    assert tuple(independent) == mech.independent == mech.actuated
    labels = constraint_row_labels(mech)
    assert len(labels) == mech.kernel.m
    rows = {"revolute": {"x", "y", "z", "axis u", "axis v"}, "spherical": {"x", "y", "z"},
            "prismatic": {"line u", "line v", "axis u", "axis v", "roll"}}
    for lab in labels:
        owner = [l for l in mech.loops if lab.startswith(l.name + " ")]
        assert len(owner) == 1 and lab[len(owner[0].name) + 1:] in rows[owner[0].joint.value]
    # the loop Jacobian spans the same closed motions as the twist constraints
    J = loop_jacobian(mech, mech.q_home)
    assert J.shape == (mech.kernel.m, mech.n)
    assert numerical_rank(J) == mech.n - mech.dof
    assert_close(J @ N, np.zeros((J.shape[0], N.shape[1])), 1e-10, scale_of(J), "J N")
    # assembling from the home pose changes nothing; a guess with the dependent joints
    # nudged comes back closed (nudging held joints may leave no closed pose when rows
    # are redundant), the held joints bit for bit
    assert_close(assemble(mech, mech.q_home), mech.q_home, 1e-12, L)
    rng = np.random.default_rng(len(labels))
    guess = mech.q_home + 1e-3 * rng.uniform(-1, 1, mech.n)
    guess[list(independent)] = mech.q_home[list(independent)]
    q = assemble(mech, guess)
    assert scale_of(loop_residual(mech, q)) <= mech.assembly.tolerance
    np.testing.assert_array_equal(q[list(independent)], guess[list(independent)])


@fast(80)
@given(closed_mechanisms(), seeds)
def test_loop_jacobian_is_the_derivative_of_the_residual(case, seed):
    """At unclosed poses near home: J against central differences of Phi."""
    mech, _, _ = case
    rng = np.random.default_rng(seed)
    rev = mech.is_revolute
    q = mech.q_home + np.where(rev, rng.uniform(-0.3, 0.3, mech.n), rng.uniform(-0.1, 0.1, mech.n))
    L = residual_scale(mech, q)
    h = 1e-6
    E = np.eye(mech.n) * h
    fd = np.column_stack([(loop_residual(mech, q + E[j]) - loop_residual(mech, q - E[j])) / (2 * h)
                          for j in range(mech.n)])
    J = loop_jacobian(mech, q)
    # truncation h^2 |Phi'''| ~ h^2 L, round-off eps L / h
    assert_close(J, fd, 1e-7, L, "J vs dPhi/dq")
    assert np.max(np.abs(loop_residual(mech, q))) > 0  # the check ran off the closed pose


@fast(80)
@given(closed_mechanisms(), seeds, st.booleans())
def test_gamma_is_the_rate_of_the_jacobian_along_qd(case, seed, closed):
    """gamma = (dJ/dt) qd = d^2/dt^2 Phi(q + t qd), at closed and unclosed poses, closed
    and arbitrary rates."""
    mech, _, N = case
    rng = np.random.default_rng(seed)
    q = mech.q_home
    if closed:
        qd = closed_rates(N, rng)
    else:
        q = q + np.where(mech.is_revolute, rng.uniform(-0.3, 0.3, mech.n),
                         rng.uniform(-0.1, 0.1, mech.n))
        qd = rng.uniform(-2, 2, mech.n)
    L = residual_scale(mech, q)
    h = 1e-6
    dJ = (loop_jacobian(mech, q + h * qd) - loop_jacobian(mech, q - h * qd)) / (2 * h)
    gamma = loop_acceleration_term(mech, q, qd)
    assert gamma.shape == (mech.kernel.m,)
    assert_close(gamma, dJ @ qd, 1e-7, L * (1 + scale_of(qd)) ** 2, "gamma vs J' qd")
    # and the second difference of Phi itself (h larger: Phi is not differentiated twice
    # by a formula but by samples)
    h = 1e-3

    def second(h):
        return (loop_residual(mech, q + h * qd) - 2 * loop_residual(mech, q)
                + loop_residual(mech, q - h * qd)) / (h * h)
    d2 = (4 * second(h / 2) - second(h)) / 3
    assert_close(gamma, d2, 1e-5, L * (1 + scale_of(qd)) ** 2, "gamma vs Phi''")


def test_the_random_checks_can_fail():
    """A Jacobian with one wrong sign and gamma without its velocity term are caught."""
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    q = mech.q_home + np.array([0.2, -0.1, 0.3])
    h = 1e-6
    fd = np.column_stack([(loop_residual(mech, q + h * e) - loop_residual(mech, q - h * e))
                          / (2 * h) for e in np.eye(3)])
    J = loop_jacobian(mech, q)
    assert_close(J, fd, 1e-7, residual_scale(mech, q))
    wrong = J.copy()
    wrong[:, 1] *= -1
    with pytest.raises(AssertionError):
        assert_close(wrong, fd, 1e-7, residual_scale(mech, q))
    qd = np.array([1.0, -2.0, 0.5])
    dJ = (loop_jacobian(mech, q + h * qd) - loop_jacobian(mech, q - h * qd)) / (2 * h)
    with pytest.raises(AssertionError):
        assert_close(np.zeros(2), dJ @ qd, 1e-7, residual_scale(mech, q) * 9)


# ----------------------------------------------------------------------------------
# 2. Redundant rows
# ----------------------------------------------------------------------------------


def test_planar_four_bar_keeps_the_two_in_plane_rows():
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    assert mech.n == 3 and mech.dof == 1
    assert mech.kernel.m == 2
    assert constraint_row_labels(mech) == ["C x", "C y"]
    # the dropped rows are those that vanish identically: the full revolute closure
    # (twist constraints) has rank 2 at any closed pose
    N, _ = null_space(twist_constraints(mech, mech.q_home))
    assert N.shape[1] == 1
    assert_close(loop_jacobian(mech, mech.q_home) @ N, np.zeros((2, 1)), 1e-12, 1.0)


def _tilted_four_bar(rpy, origin):
    """fourbar.toml's links in a plane turned by rpy: the in-plane rows are no longer
    base axes, so all three point rows stay (rank 2)."""
    base = load_mechanism(ROBOTS / "fourbar.toml")
    R = rpy_matrix(rpy)
    chains = []
    for ch in base.chains:
        xyz = tuple(R @ np.array(ch.base.xyz) + np.array(origin))
        chains.append(replace(ch, base=Placement(xyz, rpy)))
    return Mechanism("tilted four-bar", chains=tuple(chains), loops=base.loops,
                     gravity=base.gravity, angle_unit="rad")


def test_tilted_planar_four_bar_has_a_redundant_row():
    mech = _tilted_four_bar((0.4, -0.7, 0.3), (0.1, 0.2, -0.3))
    base = load_mechanism(ROBOTS / "fourbar.toml")
    assert mech.warnings == () and mech.dof == 1
    assert_close(mech.q_home, base.q_home, 1e-12, 1.0)
    J = loop_jacobian(mech, mech.q_home)
    assert mech.kernel.m == 3 and numerical_rank(J) == 2
    assert constraint_row_labels(mech) == ["C x", "C y", "C z"]
    vt = velocity_transformation(mech, mech.q_home)
    qd = vt.R @ np.array([1.5])
    gamma = loop_acceleration_term(mech, mech.q_home, qd)
    for method in ("denoc", "composite", "minimal"):
        qdd = forward_dynamics(mech, mech.q_home, qd, np.zeros(3), method=method)
        assert_close(J @ qdd + gamma, np.zeros(3), 1e-10,
                     scale_of(np.abs(J) @ np.abs(qdd), gamma), f"closure ({method})")


def test_tilted_four_bar_moves_as_the_flat_one_with_gravity_turned_too():
    rpy = (0.4, -0.7, 0.3)
    mech = _tilted_four_bar(rpy, (0.1, 0.2, -0.3))
    mech = replace(mech, gravity=tuple(rpy_matrix(rpy) @ np.array(mech.gravity)))
    base = load_mechanism(ROBOTS / "fourbar.toml")
    qd = velocity_transformation(base, base.q_home).R @ np.array([2.0])
    tau = np.array([0.7, 0.0, 0.0])
    expected = forward_dynamics(base, base.q_home, qd, tau)
    for method in ("denoc", "composite", "minimal"):
        assert_close(forward_dynamics(mech, mech.q_home, qd, tau, method=method), expected,
                     1e-9, what=method)


def test_bricard_has_rank_four_of_five_and_one_degree_of_freedom():
    mech = load_mechanism(ROBOTS / "bricard.toml")
    q = mech.q_home
    assert mech.n == 5 and mech.kernel.m == 5 and mech.dof == 1
    J = loop_jacobian(mech, q)
    assert numerical_rank(J) == 4
    # the one closed motion agrees with the twist constraints (rank 5 of 6 there)
    N, s = null_space(twist_constraints(mech, q))
    assert N.shape[1] == 1
    assert_close(J @ N, np.zeros((5, 1)), 1e-12, scale_of(J))
    # Gruebler would count 5 joints - 5 rows = 0: the rank, not the count, gives 1
    rng = np.random.default_rng(3)
    for _ in range(3):
        qd = N[:, 0] * rng.uniform(-2, 2)
        tau = rng.uniform(-3, 3, 5)
        results = []
        for method in ("denoc", "composite", "minimal"):
            qdd = forward_dynamics(mech, q, qd, tau, method=method)
            gamma = loop_acceleration_term(mech, q, qd)
            assert np.all(np.isfinite(qdd)), method
            assert_close(J @ qdd + gamma, np.zeros(5), 1e-10,
                         scale_of(np.abs(J) @ np.abs(qdd), gamma), f"closure ({method})")
            results.append(qdd)
        assert_close(results[1], results[0], 1e-9, what="composite vs denoc")
        assert_close(results[2], results[0], 1e-9, what="minimal vs denoc")
    vt = velocity_transformation(mech, q)
    assert vt.R.shape == (5, 1)
    assert_close(J @ vt.R, np.zeros((5, 1)), 1e-12, scale_of(J))


def test_spatial_rusr_four_bar_closes_with_one_degree_of_freedom():
    mech = rusr_mechanism()
    q = mech.q_home
    assert mech.dof == 1 and mech.kernel.m == 3
    assert mech.q_home[0] == 0.3  # the crank (independent) is held exactly
    assert scale_of(loop_residual(mech, q)) <= mech.assembly.tolerance
    N, _ = null_space(twist_constraints(mech, q))
    assert N.shape[1] == 1
    J = loop_jacobian(mech, q)
    assert_close(J @ N, np.zeros((3, 1)), 1e-12, scale_of(J))
    qd = 1.7 * N[:, 0] / N[0, 0]
    qdd = forward_dynamics(mech, q, qd, np.zeros(4))
    gamma = loop_acceleration_term(mech, q, qd)
    assert_close(J @ qdd + gamma, np.zeros(3), 1e-10, scale_of(np.abs(J) @ np.abs(qdd), gamma))


# ----------------------------------------------------------------------------------
# 3. Errors
# ----------------------------------------------------------------------------------


def _four_bar_with(**changes):
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    chains = list(mech.chains)
    out = []
    for ch in chains:
        links = []
        for l in ch.links:
            links.append(replace(l, **changes.get(l.name, {})))
        out.append(replace(ch, links=tuple(links)))
    return mech, tuple(out)


def test_a_loop_that_cannot_close_names_the_loop_and_the_residual():
    # coupler and rocker 0.1 m: the crank pin (crank held at 60 deg) is 0.39 m from the
    # rocker pivot, the two reach 0.2 m: the points stay at least 0.19 m apart
    mech, chains = _four_bar_with(coupler={"a": 0.1}, rocker={"a": 0.1})
    with pytest.raises(LoopClosureError) as err:
        Mechanism("short coupler", chains=chains, loops=mech.loops, gravity=mech.gravity)
    e = err.value
    assert e.loop == "C"
    assert e.residual is not None and e.residual > 0.19 / math.sqrt(2)
    assert "'C'" in str(e) and "residual" in str(e)
    assert isinstance(e, MechanismError)


def test_a_loop_offset_out_of_its_plane_cannot_close():
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    loop = replace(mech.loops[0], at=((0.0, 0.0, 0.01), (0.0, 0.0, 0.0)))
    with pytest.raises(LoopClosureError) as err:
        replace(mech, loops=(loop,))
    assert err.value.loop == "C" and abs(err.value.residual - 0.01) < 1e-6


def test_independent_joints_too_few_name_what_is_missing():
    five = load_mechanism(ROBOTS / "fivebar_saha.toml")
    chains = tuple(replace(ch, links=tuple(replace(l, actuated=(l.name == "leg 1 proximal"))
                                           for l in ch.links)) for ch in five.chains)
    with pytest.raises(LoopClosureError) as err:
        replace(five, chains=chains)
    text = str(err.value)
    assert "2 degree(s) of freedom" in text and "'leg 1 proximal'" in text
    assert "hold" in text  # the suggestion names joints to hold
    assert err.value.field == "actuated"


def test_independent_joints_that_do_not_fix_the_pose_name_the_joints():
    """A four-bar with a pendulum on its rocker: 2 dof; holding crank and coupler fixes
    the loop twice and leaves the pendulum free."""
    base = load_mechanism(ROBOTS / "fourbar.toml")
    pendulum = Chain("pendulum", (Link(name="bob", a=0.3, theta=-1.0, mass=0.5,
                                       com=(-0.15, 0, 0)),), parent="rocker")
    mech = Mechanism("four-bar + pendulum", chains=base.chains + (pendulum,), loops=base.loops,
                     gravity=base.gravity, assembly=Assembly(independent=("crank", "bob")))
    assert mech.dof == 2 and mech.independent == (0, 3)
    with pytest.raises(LoopClosureError) as err:
        replace(mech, assembly=Assembly(independent=("crank", "coupler")))
    text = str(err.value)
    assert err.value.field == "assembly.independent"
    assert "'crank'" in text and "'coupler'" in text and "'bob'" in text
    with pytest.raises(LoopClosureError) as err:
        replace(mech, assembly=Assembly(independent=("crank",)))
    assert "2 degree(s) of freedom" in str(err.value) and "'bob'" in str(err.value)


def test_a_mechanism_without_mobility_is_refused():
    """A triangle: two links on the base pinned together (planar: 2 rows, 2 joints)."""
    chains = (Chain("left", (Link(name="l", a=1.0, theta=math.pi / 3, actuated=True),)),
              Chain("right", (Link(name="r", a=1.0, theta=2 * math.pi / 3),),
                    base=Placement((1.0, 0.0, 0.0))))
    with pytest.raises(MechanismError) as err:
        Mechanism("triangle", chains=chains, loops=(Loop("pin", "revolute", ("l", "r")),))
    assert "no mobility" in str(err.value)
    assert not isinstance(err.value, LoopClosureError) or err.value.field == "loop"


def test_a_parent_cycle_names_the_chain():
    chains = (Chain("A", (Link(name="a1", a=0.5),), parent="b1"),
              Chain("B", (Link(name="b1", a=0.5),), parent="a1"))
    with pytest.raises(MechanismError) as err:
        Mechanism("cycle", chains=chains)
    assert "cycle" in str(err.value)
    assert err.value.chain in ("A", "B") and f"chain {err.value.chain!r}" in str(err.value)
