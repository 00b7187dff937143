"""Saha's DeNOC dynamics of parallel robots (core/algorithms/parallel.py, seed 001 Sec 3).

Mechanisms built here:
- the five-bar of Sec 3.5 (Saha's numbers: legs 0.6/1.1 m,
  3.0/1.6 kg and 0.7/1.2 m, 2.0/1.1 kg; reconstructed base a0 = 1.2 m; uniform rods;
  E above; vertical plane, g = 9.81), one chain per leg, the revolute loop E joining
  the distal links' far ends, both proximal joints actuated;
- a planar 3-leg robot (3-RRR, or 2-RRR + RRP with a prismatic loop joint): two
  passive joints in every leg, where Saha's printed rank-1 recursion is not exact;
- a spatial (non-planar) 2-leg mechanism RRR + RR-S: skew axes, a spherical loop.

Checked: J against finite differences of the platform's pose; I and h, forward and
inverse dynamics against the general closed-chain method (core.algorithms.closed_chains); the
explicit DeNOC matrices of eqs. 32-33; the type-II singularity against its analytic
condition (distal links collinear); the Fig. 14 free fall (stops at the singularity,
agrees with the KKT simulation before it); the Fig. 13 trajectory inverse then
forward.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from armdyn.core import (closed_chain_inverse_dynamics, reduced_mass_matrix,
                         velocity_transformation)
from armdyn.core.algorithms.closed_chains import minimal_coordinate_forward_dynamics
from armdyn.core import mass_matrix, tree_inverse_dynamics
from armdyn.core import MechanismError, SimulationError, SingularConfigurationError
from armdyn.core import forward_kinematics
from armdyn.core import loop_jacobian, loop_residual
from armdyn.core import Chain, Loop, Mechanism, Placement
from armdyn.core.algorithms.parallel import (is_parallel, parallel_accelerations,
                                             parallel_assemble, parallel_denoc_matrices,
                                             parallel_dynamics, parallel_forward_dynamics,
                                             parallel_inverse_dynamics, parallel_jacobian,
                                             parallel_kinematics, parallel_passive_rates,
                                             parallel_structure)
from armdyn.core.sim.parallel import parallel_run_inverse_dynamics, parallel_simulate
from armdyn.core import Link
from armdyn.core import Trajectory, cycloidal_trajectory

G = 9.81
L11, L21, L12, L22 = 0.6, 1.1, 0.7, 1.2  # proximal / distal, leg 1 and leg 2 (eq. 34a)


# ----------------------------------------------------------------------------------
# Mechanisms
# ----------------------------------------------------------------------------------

def rod(name, length, mass, theta, actuated=False, **kw):
    """A uniform slender rod as a DH row along x (mass centre halfway back)."""
    return Link(a=length, theta=theta, mass=mass, com=(-length / 2, 0.0, 0.0),
                inertia=(mass * 1e-4 / 2, mass * length ** 2 / 12, mass * length ** 2 / 12,
                         0.0, 0.0, 0.0), name=name, actuated=actuated, **kw)


def fivebar_pose(a0, t1, t2, above=True):
    """(q, E, A1, A2): the closed pose for crank angles t1, t2 from +x (circle
    intersection; E above the elbows)."""
    A1 = np.array([L11 * math.cos(t1), L11 * math.sin(t1)])
    A2 = np.array([a0 + L12 * math.cos(t2), L12 * math.sin(t2)])
    d = float(np.linalg.norm(A2 - A1))
    u = (A2 - A1) / d
    x = (d * d + L21 ** 2 - L22 ** 2) / (2 * d)
    y = math.sqrt(max(L21 ** 2 - x * x, 0.0))
    E = A1 + x * u + (y if above else -y) * np.array([-u[1], u[0]])
    p1 = math.atan2(E[1] - A1[1], E[0] - A1[0])
    p2 = math.atan2(E[1] - A2[1], E[0] - A2[0])
    return np.array([t1, p1 - t1, t2, p2 - t2]), E, A1, A2


def fivebar(a0=1.2, t1=math.radians(30.0), t2=math.radians(30.0)):
    """Saha's five-bar (Sec 3.5, reconstructed a0), vertical plane, y up."""
    q, _, _, _ = fivebar_pose(a0, t1, t2)
    leg1 = Chain("leg 1", (rod("leg 1 proximal", L11, 3.0, q[0], True),
                           rod("leg 1 distal", L21, 1.6, q[1])))
    leg2 = Chain("leg 2", (rod("leg 2 proximal", L12, 2.0, q[2], True),
                           rod("leg 2 distal", L22, 1.1, q[3])), base=Placement((a0, 0.0, 0.0)))
    return Mechanism("five-bar", (leg1, leg2),
                     (Loop("E", "revolute", ("leg 1 distal", "leg 2 distal")),),
                     gravity=(0.0, -G, 0.0))


def _frames_of(chains):
    """Link frames of the tree (no loops) with the chains' joint values."""
    tree = Mechanism("tree", chains, gravity=(0.0, -G, 0.0))
    return forward_kinematics(tree, tree.q_home).frames


def planar_three_leg(third="revolute"):
    """A planar 3-leg robot: leg 1 = R R R ending in the triangular platform, legs 2
    and 3 = R R joined to the platform by a revolute (3-RRR) or, for leg 3, a
    prismatic loop joint. The loop points are put where the legs' ends are, so the
    pose is closed by construction."""
    plat = Link(a=0.0, theta=math.radians(-35.0), mass=1.5, com=(0.12, 0.06, 0.0),
                inertia=(0.002, 0.004, 0.006, 0.0, 0.0, 0.0), name="platform")
    chains = (
        Chain("leg 1", (rod("leg 1 proximal", 0.45, 1.2, math.radians(60.0), True),
                        rod("leg 1 distal", 0.5, 0.8, math.radians(-70.0)), plat)),
        Chain("leg 2", (rod("leg 2 proximal", 0.5, 1.0, math.radians(110.0), True),
                        rod("leg 2 distal", 0.45, 0.7, math.radians(60.0))),
              base=Placement((1.0, 0.0, 0.0))),
        Chain("leg 3", (rod("leg 3 proximal", 0.4, 0.9, math.radians(-80.0), True),
                        rod("leg 3 distal", 0.55, 0.6, math.radians(-40.0))),
              base=Placement((0.5, 0.9, 0.0))),
    )
    F = _frames_of(chains)
    Tp = F[3]  # the platform's own frame (index = joint + 1)

    def on_platform(T):
        return tuple(np.linalg.solve(Tp[:3, :3], T[:3, 3] - Tp[:3, 3]))

    loops = [Loop("V2", "revolute", ("platform", "leg 2 distal"),
                  at=(on_platform(F[5]), (0.0, 0.0, 0.0)))]
    if third == "revolute":
        loops.append(Loop("V3", "revolute", ("platform", "leg 3 distal"),
                          at=(on_platform(F[7]), (0.0, 0.0, 0.0))))
    else:
        d = np.array([math.cos(0.4), math.sin(0.4), 0.0])  # the slide, in the plane
        loops.append(Loop("V3", "prismatic", ("platform", "leg 3 distal"),
                          at=(on_platform(F[7]), (0.0, 0.0, 0.0)),
                          axis=(tuple(Tp[:3, :3].T @ d), tuple(F[7][:3, :3].T @ d))))
    return Mechanism(f"planar 3-leg ({third})", chains, tuple(loops), gravity=(0.0, -G, 0.0))


def spatial_two_leg():
    """A non-planar 2-DOF mechanism: leg 1 = R R R (skew axes, link 3 = platform),
    leg 2 = R R with a spherical loop joint to the platform; gravity along -z."""
    def link(name, a, b, alpha, theta, mass, com, actuated=False):
        return Link(a=a, b=b, alpha=math.radians(alpha), theta=math.radians(theta),
                    mass=mass, com=com, inertia=(0.01, 0.02, 0.015, 0.001, -0.002, 0.0005),
                    name=name, actuated=actuated)
    chains = (
        Chain("leg 1", (link("l1 a", 0.5, 0.1, 60.0, 14.0, 2.0, (-0.25, 0.02, 0.0), True),
                        link("l1 b", 0.6, 0.1, -40.0, 35.0, 1.5, (-0.3, 0.0, 0.03)),
                        link("platform", 0.3, 0.0, 30.0, -50.0, 1.0, (-0.1, 0.05, 0.02)))),
        Chain("leg 2", (link("l2 a", 0.4, 0.0, 70.0, 100.0, 1.8, (-0.2, 0.0, 0.01), True),
                        link("l2 b", 0.7, 0.05, 20.0, -30.0, 1.2, (-0.35, 0.01, 0.0))),
              base=Placement((0.9, 0.2, 0.1), (0.3, -0.2, 0.5))),
    )
    F = _frames_of(chains)
    Tp = F[3]
    at = tuple(np.linalg.solve(Tp[:3, :3], F[5][:3, 3] - Tp[:3, 3]))
    return Mechanism("spatial RRR + RR-S", chains,
                     (Loop("S", "spherical", ("platform", "l2 b"), at=(at, (0.0, 0.0, 0.0))),),
                     gravity=(0.0, 0.0, -G))


@pytest.fixture(scope="module")
def five():
    return fivebar()


@pytest.fixture(scope="module")
def examples(five):
    return {"five-bar": five, "3-RRR": planar_three_leg("revolute"),
            "2-RRR + RRP": planar_three_leg("prismatic"), "spatial": spatial_two_leg()}


def poses(mech, count=4, seed=0):
    """Closed poses near home (actuators moved a little, passive joints re-closed)."""
    rng = np.random.default_rng(seed)
    S = parallel_structure(mech)
    out = [mech.q_home]
    for _ in range(count - 1):
        th = mech.q_home[list(S.actuated)] + rng.uniform(-0.05, 0.05, S.n_legs)
        out.append(parallel_assemble(mech, th))
    return out


def scale_of(*arrays) -> float:
    return max(1.0, *(float(np.max(np.abs(a))) for a in arrays))


# ----------------------------------------------------------------------------------
# Structure
# ----------------------------------------------------------------------------------

def test_structure_of_the_five_bar(five):
    S = parallel_structure(five)
    assert is_parallel(five)
    assert [leg.name for leg in S.legs] == ["leg 1", "leg 2"]
    assert S.actuated == (0, 2) == five.actuated
    assert S.platform == 1 and S.carrier == 0  # leg 1's distal link carries E
    assert S.legs[1].loop == 0 and S.legs[1].loop_type == "revolute"
    assert S.e_point == (0.0, 0.0, 0.0)  # the pin at the distal links' far ends
    kin = parallel_kinematics(five, five.q_home)
    _, E, _, _ = fivebar_pose(1.2, math.radians(30), math.radians(30))
    assert np.allclose(kin.E[:2], E, atol=1e-9) and kin.E[2] == 0.0


def test_structures_of_the_other_examples(examples):
    S = parallel_structure(examples["3-RRR"])
    assert S.n_legs == 3 and S.platform == 2 and [l.loop_rates for l in S.legs] == [0, 1, 1]
    S = parallel_structure(examples["2-RRR + RRP"])
    assert S.legs[2].loop_type == "prismatic"
    S = parallel_structure(examples["spatial"])
    assert S.legs[1].loop_type == "spherical" and S.legs[1].loop_rates == 3


def test_refuses_what_is_not_of_saha_form():
    leg = lambda name, act=(True, False), **kw: Chain(name, (  # noqa: E731
        rod(f"{name} p", 0.6, 1.0, 0.5, act[0]), rod(f"{name} d", 1.1, 1.0, 1.0, act[1])), **kw)
    tree = Mechanism("tree", (leg("a"), leg("b", base=Placement((1.2, 0, 0)))))
    with pytest.raises(MechanismError, match="no loop joint"):
        parallel_structure(tree)
    assert not is_parallel(tree)
    from armdyn.core import Robot
    # a serial arm is a one-chain model without loops
    with pytest.raises(MechanismError, match="no loop joint"):
        parallel_structure(Robot("arm", (rod("x", 1.0, 1.0, 0.0),)))
    # a four-bar: one chain closed on the base
    fourbar = Mechanism("four-bar", (Chain("c", (
        rod("crank", 0.3, 1.0, 1.2, True), rod("coupler", 1.0, 1.0, -0.8),
        rod("rocker", 0.8, 1.0, -1.7))),),
        (Loop("D", "revolute", ("rocker", "base"), at=((0, 0, 0), (0.9, 0, 0))),),
        gravity=(0, -G, 0))
    with pytest.raises(MechanismError, match="at least two legs"):
        parallel_structure(fourbar)
    # a passive joint actuated, or joint 1 not actuated
    q, _, _, _ = fivebar_pose(1.2, math.radians(30), math.radians(30))

    def five_with(act1, act2):
        c1 = Chain("leg 1", (rod("l1p", L11, 3.0, q[0], act1[0]),
                             rod("l1d", L21, 1.6, q[1], act1[1])))
        c2 = Chain("leg 2", (rod("l2p", L12, 2.0, q[2], act2[0]),
                             rod("l2d", L22, 1.1, q[3], act2[1])), base=Placement((1.2, 0, 0)))
        return Mechanism("5", (c1, c2), (Loop("E", "revolute", ("l1d", "l2d")),),
                         gravity=(0, -G, 0))
    with pytest.raises(MechanismError, match="only joint 1 of each leg") as err:
        parallel_structure(five_with((True, True), (False, False)))
    assert err.value.chain == "leg 1" and err.value.link == 2
    with pytest.raises(MechanismError, match="joint 1 of every leg"):
        parallel_structure(five_with((True, False), (False, True)))


# ----------------------------------------------------------------------------------
# Kinematics (eqs. 24-30)
# ----------------------------------------------------------------------------------

def platform_pose(mech, q):
    S = parallel_structure(mech)
    T = forward_kinematics(mech, q).frames[S.platform + 1]
    return T[:3, :3], T[:3, :3] @ np.array(S.e_point) + T[:3, 3]


@pytest.mark.parametrize("name", ["five-bar", "3-RRR", "2-RRR + RRP", "spatial"])
def test_jacobian_against_finite_differences_of_the_platform(examples, name):
    mech = examples[name]
    S = parallel_structure(mech)
    h = 1e-6
    for q in poses(mech, 3):
        J = parallel_jacobian(mech, q)
        th = q[list(S.actuated)]
        for k in range(S.n_legs):
            dth = np.zeros(S.n_legs)
            dth[k] = h
            Rp, Ep = platform_pose(mech, parallel_assemble(mech, th + dth, q))
            Rm, Em = platform_pose(mech, parallel_assemble(mech, th - dth, q))
            W = (Rp @ Rm.T - Rm @ Rp.T) / (4 * h)  # skew(w) to O(h^2)
            w = np.array([W[2, 1], W[0, 2], W[1, 0]])
            v = (Ep - Em) / (2 * h)
            assert np.allclose(J[:, k], np.concatenate([w, v]), atol=1e-7), (name, k)


@pytest.mark.parametrize("name", ["five-bar", "3-RRR", "2-RRR + RRP", "spatial"])
def test_passive_rates_close_the_loops_and_match_coordinate_partitioning(examples, name):
    mech = examples[name]
    S = parallel_structure(mech)
    rng = np.random.default_rng(1)
    for q in poses(mech, 3, seed=2):
        thd = rng.normal(size=S.n_legs)
        rates = parallel_passive_rates(mech, q, thd)
        # eq. 30 gives tree rates that keep every loop closed
        Jl = loop_jacobian(mech, q)
        assert np.max(np.abs(Jl @ rates.qd)) < 1e-12 * scale_of(rates.qd)
        assert np.allclose(rates.qd[list(S.actuated)], thd, rtol=0, atol=0)
        # and the same R as the general method's coordinate partitioning
        R = velocity_transformation(mech, q).R
        assert np.allclose(parallel_kinematics(mech, q).R, R, rtol=0, atol=1e-12)
        for leg, r in zip(S.legs, rates.legs):
            assert r.shape == (len(leg.passive) + leg.loop_rates,)
            assert np.allclose(r[:len(leg.passive)], rates.qd[list(leg.passive)],
                               rtol=0, atol=1e-14)


def test_five_bar_loop_rate_is_the_relative_angle_rate(five):
    q = poses(five, 2, seed=3)[1]
    thd = np.array([0.4, -1.3])
    r = parallel_passive_rates(five, q, thd)
    # the loop joint E turns leg 1's distal link (the platform) relative to leg 2's
    phi1 = r.qd[0] + r.qd[1]
    phi2 = r.qd[2] + r.qd[3]
    assert r.legs[1][1] == pytest.approx(phi1 - phi2, abs=1e-12)
    assert r.t_e[2] == pytest.approx(phi1, abs=1e-12)  # w_z of the platform


# ----------------------------------------------------------------------------------
# The type-II singularity (Phi = sum_l P^l singular) against its analytic condition
# ----------------------------------------------------------------------------------

def lambda_min_analytic(q):
    """Smallest eigenvalue of P^1 + P^2 for the five-bar: 1 - cos(theta), theta the
    principal angle between leg 1's passive twist [z; (A1 - E) x z] and leg 2's
    span{[z; 0], [0; (A2 - E) x z]}: cos^2 = (1 + l21^2 cos^2 psi) / (1 + l21^2), psi
    the angle between the distal links."""
    psi = (q[0] + q[1]) - (q[2] + q[3])
    return 1.0 - math.sqrt((1 + L21 ** 2 * math.cos(psi) ** 2) / (1 + L21 ** 2))


def test_singularity_measure_matches_the_analytic_value(five):
    for q in poses(five, 6, seed=4):
        kin = parallel_kinematics(five, q)
        assert kin.lambda_min == pytest.approx(lambda_min_analytic(q), rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("stretched, t1_deg", [(True, 160.0), (False, 30.0)])
def test_singular_exactly_where_the_distal_links_are_collinear(five, stretched, t1_deg):
    """Choose t1, then t2 with |A1 A2| = l21 + l22 (stretched) or l22 - l21 (folded):
    E lies on the line A1 A2 and J does not exist; a hair away it does."""
    a0 = 1.2
    t1 = math.radians(t1_deg)
    A1 = np.array([L11 * math.cos(t1), L11 * math.sin(t1)])
    target = L21 + L22 if stretched else L22 - L21

    def gap(t2):
        A2 = np.array([a0 + L12 * math.cos(t2), L12 * math.sin(t2)])
        return np.linalg.norm(A2 - A1) - target
    import scipy.optimize as so
    ts = np.linspace(-math.pi, math.pi, 721)
    g = [gap(t) for t in ts]
    i = next(i for i in range(len(ts) - 1) if g[i] * g[i + 1] < 0)
    t2 = so.brentq(gap, ts[i], ts[i + 1], xtol=1e-15)
    q, E, A1, A2 = fivebar_pose(a0, t1, t2)
    psi = (q[0] + q[1]) - (q[2] + q[3])
    assert abs(math.sin(psi)) < 1e-6  # collinear distal links (analytic pose)
    assert np.max(np.abs(loop_residual(five, q))) < 1e-6
    with pytest.raises(SingularConfigurationError, match="type-II") as err:
        parallel_jacobian(five, q)
    assert f"'leg 1 proximal' = {t1_deg:g} deg" in str(err.value)  # the pose is named
    assert err.value.q is not None
    with pytest.raises(SingularConfigurationError):
        parallel_dynamics(five, q, np.zeros(2))
    # one degree inside the workspace the Jacobian exists again
    inside = (lambda x: x < 0) if stretched else (lambda x: x > 0)  # noqa: E731
    t2_in = t2 + (math.radians(1.0) if inside(gap(t2 + 1e-3)) else -math.radians(1.0))
    q_in, _, _, _ = fivebar_pose(a0, t1, t2_in)
    kin = parallel_kinematics(five, q_in)
    assert kin.lambda_min == pytest.approx(lambda_min_analytic(q_in), rel=1e-10)
    assert np.all(np.isfinite(kin.J))


# ----------------------------------------------------------------------------------
# Dynamics (eq. 33) against the general closed-chain method
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["five-bar", "3-RRR", "2-RRR + RRP", "spatial"])
def test_I_and_h_against_the_general_method(examples, name):
    mech = examples[name]
    S = parallel_structure(mech)
    act = list(S.actuated)
    rng = np.random.default_rng(5)
    for q in poses(mech, 4, seed=6):
        thd = rng.normal(size=S.n_legs) * 2.0
        I, h = parallel_dynamics(mech, q, thd)
        # I = N^T M N against R^T M R of the coordinate partitioning (Jalon 8.120)
        Ig = reduced_mass_matrix(mech, q)
        assert np.max(np.abs(I - Ig)) < 1e-12 * scale_of(Ig)
        # h against R^T (h_tree + M S_c) of the general method
        qd = parallel_passive_rates(mech, q, thd).qd
        vt = velocity_transformation(mech, q, qd)
        hg = vt.R.T @ (tree_inverse_dynamics(mech, q, qd, np.zeros(mech.n))
                       + mass_matrix(mech, q) @ vt.S_c)
        assert np.max(np.abs(h - hg)) < 1e-10 * scale_of(hg)
        # forward dynamics against minimal_coordinate_forward_dynamics
        tau_a = rng.normal(size=S.n_legs) * 5.0
        thdd = parallel_forward_dynamics(mech, q, thd, tau_a)
        tau = np.zeros(mech.n)
        tau[act] = tau_a
        qdd_g = minimal_coordinate_forward_dynamics(mech, q, qd, tau)
        qdd = parallel_accelerations(mech, q, thd, thdd)
        assert np.max(np.abs(qdd - qdd_g)) < 1e-10 * scale_of(qdd_g)
        # inverse dynamics against Saha's Sec 4 subsystem recursion
        tau_back = parallel_inverse_dynamics(mech, q, thd, thdd)
        tau_cc = closed_chain_inverse_dynamics(mech, q, qd, qdd_g).tau[act]
        assert np.max(np.abs(tau_back - tau_a)) < 1e-10 * scale_of(tau_a, h)
        assert np.max(np.abs(tau_back - tau_cc)) < 1e-10 * scale_of(tau_a, h)
        # the accelerations keep the loops closed: J qdd + gamma = 0
        from armdyn.core import loop_acceleration_term
        res = loop_jacobian(mech, q) @ qdd + loop_acceleration_term(mech, q, qd)
        assert np.max(np.abs(res)) < 1e-10 * scale_of(qdd)


@pytest.mark.parametrize("name", ["five-bar", "spatial"])
def test_explicit_denoc_matrices_give_the_same_I_and_h(examples, name):
    """I = N^T M N and h = N^T (M t' + W M E t) with N, M, t' and W M E t stacked over
    every body (eqs. 32-33) equal the recursive evaluation."""
    mech = examples[name]
    q = poses(mech, 2, seed=7)[1]
    thd = np.array([0.7, -1.1])
    I, h = parallel_dynamics(mech, q, thd)
    D = parallel_denoc_matrices(mech, q, thd)
    assert np.max(np.abs(D.I - I)) < 1e-12 * scale_of(I)
    assert np.max(np.abs(D.h - h)) < 1e-10 * scale_of(h)
    assert np.allclose(D.N @ thd, D.t, atol=1e-13)  # t = N th'_a (eq. 32a)


def test_h_without_gravity_is_the_convective_term(five):
    q = poses(five, 2, seed=8)[1]
    _, h0 = parallel_dynamics(five, q, np.zeros(2), gravity=False)
    assert np.max(np.abs(h0)) < 1e-12
    _, hg = parallel_dynamics(five, q, np.zeros(2))
    R = parallel_kinematics(five, q).R
    assert np.allclose(hg, R.T @ tree_inverse_dynamics(five, q, np.zeros(4), np.zeros(4)),
                       atol=1e-12)


# ----------------------------------------------------------------------------------
# The paper's runs (Sec 3.5): Fig. 13 inverse then forward, Fig. 14 free fall
# ----------------------------------------------------------------------------------

def test_cycloidal_trajectory_inverse_then_forward(five):
    th0, thT = np.radians([30.0, 30.0]), np.radians([90.0, 70.3])
    traj = parallel_run_inverse_dynamics(five, th0, thT, 20.0, dt_out=0.25)
    assert isinstance(traj, Trajectory) and traj.kind == "inverse-dynamics"
    _, _, thdd = cycloidal_trajectory(th0, thT, 20.0, traj.t)
    act = list(five.actuated)
    for s in range(len(traj)):
        q, qd = traj.q[s], traj.qd[s]
        assert np.max(np.abs(loop_residual(five, q))) < 1e-9
        back = parallel_forward_dynamics(five, q, qd[act], traj.tau[s, act])
        assert np.max(np.abs(back - thdd[s])) < 1e-10
    # the torques agree with the subsystem recursion of Sec 4 along the way
    for s in range(0, len(traj), 10):
        cc = closed_chain_inverse_dynamics(five, traj.q[s], traj.qd[s], traj.qdd[s])
        assert np.max(np.abs(cc.tau - traj.tau[s])) < 1e-10 * scale_of(traj.tau[s])
    # at rest at both ends the torques hold the arm against gravity (nonzero)
    assert np.all(np.abs(traj.tau[0, act]) > 1.0)
    assert np.degrees(traj.q[-1, act]) == pytest.approx([90.0, 70.3], abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("a0, t_expected", [(1.2, 1.050), (1.25, 1.422)])
def test_free_fall_stops_at_the_type_II_singularity(a0, t_expected):
    """Fig. 14: free fall from (80 deg, 70 deg) at rest. Saha: 'after about 1.4 s the
    program stopped ... the manipulator comes to an extreme position when it is
    singular'. With the reconstructed a0 = 1.2 m it stops at 1.050 s, with a0 = 1.25 m
    at 1.422 s (robots/README.md, robots/fivebar_saha.toml)."""
    mech = fivebar(a0)
    with pytest.raises(SimulationError, match="type-II") as err:
        parallel_simulate(mech, 3.0, q0=np.radians([80.0, 70.0]))
    e = err.value
    assert e.time == pytest.approx(t_expected, abs=2e-3)
    assert f"t = {e.time:.6g} s" in e.reason
    res = e.result
    assert isinstance(res, Trajectory) and res.kind == "free-fall"
    assert res.t[-1] == pytest.approx(e.time) and res.t[0] == 0.0
    assert len(res) == int(e.time / 0.01) + 2  # the 0.01 s grid, then the stop
    assert np.degrees(res.q[0, [0, 2]]) == pytest.approx([80.0, 70.0], abs=1e-12)
    # at the stop the distal links are collinear (to the stopping threshold)
    q = res.q[-1]
    assert abs(math.sin((q[0] + q[1]) - (q[2] + q[3]))) < 1e-3
    # every sample is closed and the energy is conserved up to there
    assert max(np.max(np.abs(loop_residual(mech, qs))) for qs in res.q) < 1e-9
    drift = np.max(np.abs(res.energy[:, 2] - res.energy[0, 2]))
    assert drift < 1e-6 * np.max(np.abs(res.energy[:, 0]))


@pytest.mark.slow
def test_free_fall_matches_the_kkt_simulation_before_the_singularity(five):
    """Minimal coordinates (Saha) against the Lagrange-multiplier simulation of the
    tree (core.sim.simulation, projection onto the loops) over the first 0.5 s."""
    from armdyn.core import simulate
    q0 = parallel_assemble(five, np.radians([80.0, 70.0]))
    ours = parallel_simulate(five, 0.5, q0=q0, dt_out=0.05)
    ref = simulate(five, 0.5, q0=q0, dt_out=0.05)
    assert np.allclose(ours.t, ref.t)
    assert np.max(np.abs(ours.q - ref.q)) < 1e-8
    assert np.max(np.abs(ours.qd - ref.qd)) < 1e-7


def test_simulation_with_torques_and_a_three_leg_robot(examples):
    mech = examples["3-RRR"]
    tr = parallel_simulate(mech, 0.2, tau_a=[1.0, -0.5, 0.3], dt_out=0.05)
    assert len(tr) == 5 and np.allclose(tr.tau[:, [0, 3, 5]], [1.0, -0.5, 0.3])
    assert max(np.max(np.abs(loop_residual(mech, q))) for q in tr.q) < 1e-9
    # work done by the actuators = change of energy
    S = parallel_structure(mech)
    act = list(S.actuated)
    work = np.array([1.0, -0.5, 0.3]) @ (tr.q[-1, act] - tr.q[0, act])
    assert tr.energy[-1, 2] - tr.energy[0, 2] == pytest.approx(work, abs=1e-7)
