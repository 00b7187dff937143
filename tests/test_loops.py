"""Closed chains, kinematics: construction, closure, the loop Jacobian and gamma, the
redundant rows and the errors.

Random closed mechanisms (`closed_mechanisms` below): a random tree of revolute and
prismatic joints (tests/strategies.py `random_tree`: 2..12 joints in branching chains
with random base placements) plus 1..3 loop joints (revolute, spherical, prismatic)
between random link pairs or a link and the base, placed so that each loop is closed
at the drawn pose: a base-frame point P and direction w, `at` = each link frame's
inverse applied to P, `axis` = R^T w. A prismatic loop's roll row compares frame
directions the model derives from each axis (`core.kernels.layout.perpendicular_pair`),
so w is chosen (a root on a great circle) where that row vanishes too.

The references here are independent of ArmDyn's closure code: the link frames are
the DH products of docs/robot-file.md written out in this file, and the motions that
keep a loop closed come from the relative twist of its two links at the joint point
(revolute: no relative velocity of the point, relative rotation only about the axis;
spherical: no relative velocity of the point; prismatic: relative velocity only along
the axis, no relative rotation), assembled from each joint's axis. Tolerances are
relative to the magnitudes involved (tests/strategies.py `assert_close`, `scale_of`).
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
from hypothesis import assume, given
from hypothesis import strategies as st

from armdyn.core import (Assembly, Chain, Link, Loop, LoopClosureError, Mechanism,
                         MechanismError, Placement, assemble, constraint_row_labels,
                         forward_dynamics, load_mechanism, loop_acceleration_term,
                         loop_jacobian, loop_residual, mobility, velocity_transformation)
from armdyn.core.kernels.layout import perpendicular_pair
from armdyn.core.model.closure import numerical_rank
from strategies import assert_close, fast, random_tree, scale_of, seeds, tree_reach

ROBOTS = Path(__file__).resolve().parent.parent / "robots"

# ----------------------------------------------------------------------------------
# Independent geometry: DH frames and the constrained directions of each loop joint
# ----------------------------------------------------------------------------------


def dh_transform(a, b, alpha, theta):
    """Rz(theta) Tz(b) Tx(a) Rx(alpha) (docs/robot-file.md)."""
    ct, st_, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array([[ct, -st_ * ca, st_ * sa, a * ct],
                     [st_, ct * ca, -ct * sa, a * st_],
                     [0.0, sa, ca, b],
                     [0.0, 0.0, 0.0, 1.0]])


def rpy_matrix(rpy):
    """Rz(y) Ry(p) Rx(r), written out here."""
    r, p, y = rpy
    Rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    Ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    Rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def frames(mech, q):
    """(joint frames, link frames), (n, 4, 4) each in joint order, base frame."""
    names = list(mech.joint_names)
    q_of = dict(zip(names, np.asarray(q, float)))
    start, own = {}, {}
    pending = list(mech.chains)
    while pending:
        for chain in list(pending):
            if chain.parent is not None and chain.parent not in own:
                continue
            P = np.eye(4)
            P[:3, :3] = rpy_matrix(chain.base.rpy)
            P[:3, 3] = chain.base.xyz
            T = (own[chain.parent] if chain.parent is not None else np.eye(4)) @ P
            for link in chain.links:
                theta, b = link.theta, link.b
                if link.is_revolute:
                    theta = q_of[link.name]
                else:
                    b = q_of[link.name]
                start[link.name] = T
                T = T @ dh_transform(link.a, b, link.alpha, theta)
                own[link.name] = T
            pending.remove(chain)
    return (np.array([start[k] for k in names]), np.array([own[k] for k in names]))


def path_to_base(parent, k):
    """Joint k and its ancestors (the joints that move link k)."""
    out = []
    while k >= 0:
        out.append(k)
        k = parent[k]
    return out


def loop_path(mech, loop):
    """The joints whose motion changes the loop's relative pose (either side, not both)."""
    index = {name: k for k, name in enumerate(mech.joint_names)}
    a = set(path_to_base(mech.parent, index[loop.links[0]]))
    b = set() if loop.links[1] == "base" else set(path_to_base(mech.parent,
                                                                index[loop.links[1]]))
    return sorted(a ^ b)


def _point_jacobian(mech, start, k, P):
    """(6, n): [angular; linear velocity of the material point at P] of link k (or the
    base for k < 0) per unit joint rate."""
    n = mech.n
    G = np.zeros((6, n))
    if k < 0:
        return G
    for j in path_to_base(mech.parent, k):
        e, o = start[j, :3, 2], start[j, :3, 3]
        if mech.links[j].is_revolute:
            G[:3, j] = e
            G[3:, j] = np.cross(e, P - o)
        else:
            G[3:, j] = e
    return G


def twist_constraints(mech, q, loops=None):
    """Rows whose null space is the set of joint rates that keep every loop closed (at
    a closed q), from the relative twist of link b with respect to link a at the joint
    point: independent of ArmDyn's closure rows."""
    start, own = frames(mech, q)
    index = {name: k for k, name in enumerate(mech.joint_names)}
    rows = []
    for loop in (mech.loops if loops is None else loops):
        ka = index[loop.links[0]]
        kb = -1 if loop.links[1] == "base" else index[loop.links[1]]
        Pa = own[ka, :3, :3] @ np.array(loop.at[0]) + own[ka, :3, 3]
        z = own[ka, :3, :3] @ np.array(loop.axis[0])
        z = z / np.linalg.norm(z)
        rel = _point_jacobian(mech, start, kb, Pa) - _point_jacobian(mech, start, ka, Pa)
        W, V = rel[:3], rel[3:]
        across = np.eye(3) - np.outer(z, z)  # directions perpendicular to the axis
        kind = loop.joint.value
        if kind == "revolute":
            rows += [V, across @ W]
        elif kind == "spherical":
            rows += [V]
        else:
            rows += [across @ V, W]
    return np.vstack(rows)


def closure_residual(mech, q, loops, q_ref):
    """A closure residual of the loops written out here, zero where they are closed
    (prismatic: the relative rotation compared with that at q_ref)."""
    _, own = frames(mech, q)
    _, own_ref = frames(mech, q_ref)
    index = {name: k for k, name in enumerate(mech.joint_names)}

    def pose(frames_, name):
        return (np.eye(3), np.zeros(3)) if name == "base" else \
            (frames_[index[name], :3, :3], frames_[index[name], :3, 3])
    out = []
    for loop in loops:
        (Ra, oa), (Rb, ob) = pose(own, loop.links[0]), pose(own, loop.links[1])
        Pa, Pb = Ra @ np.array(loop.at[0]) + oa, Rb @ np.array(loop.at[1]) + ob
        za, zb = Ra @ np.array(loop.axis[0]), Rb @ np.array(loop.axis[1])
        kind = loop.joint.value
        if kind in ("revolute", "spherical"):
            out.append(Pb - Pa)
        if kind == "revolute":
            out.append(np.cross(za, zb))
        if kind == "prismatic":
            (Ra0, _), (Rb0, _) = pose(own_ref, loop.links[0]), pose(own_ref, loop.links[1])
            out.append(np.cross(za, Pb - Pa))
            out.append((Ra.T @ Rb - Ra0.T @ Rb0).ravel())
    return np.concatenate(out)


def second_order_consistent(mech, q, loops, N, rng, tries=3):
    """Whether closed rates qd (columns of N) admit accelerations keeping the loops
    closed: d^2/dt^2 Phi(q + t qd) must lie in the range of dPhi/dq. Automatic when the
    rows are independent; checked by finite differences of `closure_residual` when
    they are not."""
    def phi(x):
        return closure_residual(mech, x, loops, q)
    h = 1e-6
    Jphi = np.column_stack([(phi(q + h * e) - phi(q - h * e)) / (2 * h) for e in np.eye(len(q))])
    U, s, _ = np.linalg.svd(Jphi)
    rank = int(np.sum(s > 1e-6 * s[0]))
    left = U[:, rank:]  # directions no acceleration can change
    if left.shape[1] == 0:
        return True
    L = tree_reach(mech, q)
    for _ in range(tries):
        qd = N @ rng.uniform(-1, 1, N.shape[1])

        def second(h):
            return (phi(q + h * qd) - 2 * phi(q) + phi(q - h * qd)) / (h * h)
        c = (4 * second(5e-4) - second(1e-3)) / 3
        if scale_of(left.T @ c) > 1e-7 * L * (1 + scale_of(qd)) ** 2:
            return False
    return True


def null_space(A, tol=1e-9):
    """(orthonormal basis of the null space as columns, singular values of A)."""
    _, s, Vt = np.linalg.svd(A)
    rank = int(np.sum(s > tol * max(1.0, s[0] if s.size else 1.0)))
    return Vt[rank:].T, s


def residual_scale(mech, q):
    """A length scale of a mechanism at q (m): DH offsets, placements, loop points."""
    L = tree_reach(mech, q)
    for loop in mech.loops:
        L += float(np.abs(np.array(loop.at)).sum())
    return L


# ----------------------------------------------------------------------------------
# Random closed mechanisms
# ----------------------------------------------------------------------------------


def _roll_row(Ra, Rb, w):
    """The prismatic loop's roll row at axis direction w (base frame), as the kernel
    layout documents it: v_a . x_b with (u_a, v_a) = perpendicular_pair(axis in a's
    frame), x_b = perpendicular_pair(axis in b's frame)[0]; and which reference each
    side used (perpendicular_pair switches from x to y near the x axis)."""
    za, zb = Ra.T @ w, Rb.T @ w
    _, va = perpendicular_pair(za)
    xb = perpendicular_pair(zb)[0]
    branch = (abs(za[0] / np.linalg.norm(za)) < 0.9, abs(zb[0] / np.linalg.norm(zb)) < 0.9)
    return float((Ra @ va) @ (Rb @ xb)), branch


def prismatic_direction(Ra, Rb, rng):
    """A unit w (base frame) where the roll row vanishes: the row is odd in w, so on a
    great circle from w0 to -w0 it changes sign; bracket and refine (same references
    on both ends of the bracket)."""
    for _ in range(20):
        w0 = rng.normal(size=3)
        w0 /= np.linalg.norm(w0)
        w1 = rng.normal(size=3)
        w1 -= (w1 @ w0) * w0
        w1 /= np.linalg.norm(w1)
        t = np.linspace(0.0, math.pi, 181)

        def on(s):
            return math.cos(s) * w0 + math.sin(s) * w1

        vals = [_roll_row(Ra, Rb, on(s)) for s in t]
        for i in range(len(t) - 1):
            (f0, b0), (f1, b1) = vals[i], vals[i + 1]
            if b0 == b1 and f0 * f1 < 0:
                s = scipy.optimize.brentq(lambda s: _roll_row(Ra, Rb, on(s))[0], t[i], t[i + 1],
                                          xtol=1e-15, rtol=1e-15)
                w = on(s)
                f, b = _roll_row(Ra, Rb, w)
                if b == b0 and abs(f) < 1e-14:
                    return w
    return None


def _loop_at(mech, own, name, P, w):
    """(at, axis) of a loop side: P and w (base frame) in the link's own frame."""
    if name == "base":
        return tuple(P), tuple(w)
    T = own[list(mech.joint_names).index(name)]
    R, o = T[:3, :3], T[:3, 3]
    return tuple(R.T @ (P - o)), tuple(R.T @ w)


def _rotation_of(mech, own, name):
    return np.eye(3) if name == "base" else own[list(mech.joint_names).index(name), :3, :3]


def with_loops(tree, loops, independent, name="random closed"):
    """The tree's chains with the independent joints marked actuated, plus the loops."""
    chains = tuple(replace(ch, links=tuple(replace(l, actuated=l.name in independent)
                                           for l in ch.links)) for ch in tree.chains)
    return Mechanism(name=name, chains=chains, loops=tuple(loops), gravity=tree.gravity,
                     angle_unit="rad")


@st.composite
def closed_mechanisms(draw, min_joints=2, max_joints=12, max_loops=3,
                      types=("revolute", "spherical", "prismatic")):
    """(mechanism, independent joint indices, twist-constraint null space N at q_home).

    The tree and the loops' count, types and seeds are Hypothesis's; a numpy generator
    draws the link pairs, the points and directions. Pairs whose loop would leave no
    mobility are redrawn; the independent joints (actuated too) are the pivots of a
    column-pivoted QR of the closed motions, so they fix the pose."""
    tree = draw(random_tree(min_joints, max_joints, joints="mixed"))
    count = draw(st.integers(1, max_loops))
    kinds = draw(st.lists(st.sampled_from(types), min_size=count, max_size=count))
    rng = np.random.default_rng(draw(seeds))
    q = tree.q_home
    _, own = frames(tree, q)
    names = list(tree.joint_names)
    L = tree_reach(tree, q)
    loops = []
    for i, kind in enumerate(kinds):
        for _attempt in range(12):
            a = names[rng.integers(len(names))]
            others = [x for x in names if x != a] + ["base"]
            b = others[rng.integers(len(others))]
            P = rng.uniform(-0.5, 0.5, 3) * L / 2
            if kind == "prismatic":
                w = prismatic_direction(_rotation_of(tree, own, a), _rotation_of(tree, own, b),
                                        rng)
                if w is None:
                    continue
            else:
                w = rng.normal(size=3)
                w /= np.linalg.norm(w)
            (pa, za), (pb, zb) = _loop_at(tree, own, a, P, w), _loop_at(tree, own, b, P, w)
            loop = Loop(f"L{i} {kind}", kind, (a, b), at=(pa, pb), axis=(za, zb))
            trial = loops + [loop]
            N, _ = null_space(twist_constraints(tree, q, trial))
            moving = {j for l in trial for j in loop_path(tree, l)
                      if np.any(np.abs(N[j]) > 1e-6)}
            if N.shape[1] >= 1 and moving:
                loops.append(loop)
                break
    assume(loops)
    A = twist_constraints(tree, q, loops)
    N, s = null_space(A)
    # away from special poses: the non-zero singular values well clear of zero
    big = s[0] if s.size else 1.0
    assume(not np.any((s > 1e-12 * big) & (s < 1e-5 * big)))
    dof = N.shape[1]
    _, _, piv = scipy.linalg.qr(N.T, pivoting=True)
    independent = sorted(int(p) for p in piv[:dof])
    assume(np.linalg.cond(N[independent]) < 1e4)
    # redundant rows: only where the closed poses form a smooth manifold here (a pose
    # where the rows lose rank only at that pose lets no acceleration keep them closed)
    assume(second_order_consistent(tree, q, loops, N, rng))
    mech = with_loops(tree, loops, {names[j] for j in independent})
    return mech, independent, N


def closed_rates(N, rng, rate=2.0):
    """A random joint-rate vector that keeps the loops closed."""
    return rate * N @ rng.uniform(-1.0, 1.0, N.shape[1])


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


def _rusr(theta=0.3):
    """A spatial four-bar: crank on the base, a universal joint (two revolutes), the
    coupler, a spherical loop to a rocker on a tilted axis elsewhere (RUSR, 1 dof)."""
    def rod(name, length, mass, **kw):
        inertia = (mass * length ** 2 / 100, mass * length ** 2 / 12, mass * length ** 2 / 12,
                   0.0, 0.0, 0.0)
        return Link(name=name, a=length, mass=mass, inertia=inertia,
                    com=(-length / 2, 0.0, 0.0), **kw)
    crank = (rod("crank", 0.3, 1.0, alpha=math.pi / 2, theta=theta, actuated=True),
             Link(name="u", alpha=-math.pi / 2, mass=0.2, theta=0.2,
                  inertia=(1e-3, 1e-3, 1e-3, 0, 0, 0)),
             rod("coupler", 1.0, 1.5, theta=0.3))
    rocker = (rod("rocker", 0.6, 1.0, theta=0.5),)
    chains = (Chain("input", crank),
              Chain("output", rocker, base=Placement((0.8, 0.4, 0.2), (0.4, -0.3, 0.2))))
    return Mechanism("RUSR", chains=chains,
                     loops=(Loop("ball", "spherical", ("coupler", "rocker")),),
                     gravity=(0.0, 0.0, -9.81), angle_unit="rad")


def test_spatial_rusr_four_bar_closes_with_one_degree_of_freedom():
    mech = _rusr()
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
