"""What the tests share: Hypothesis settings and strategies, reference geometry, cases.

Test modules import from here (or, for the GUI tests, from tests/gui/gui_helpers.py),
never from one another (tests/test_test_suite.py holds that).

* `fast(n)`: the settings of every property test, n examples in the full run;
* random valid robots, states, trees and wrenches;
* closed chains: reference loop geometry independent of ArmDyn's closure code, and
  random closed mechanisms (used by test_loops.py and test_closed_chain_dynamics.py);
* robot-file cases: a valid robot file and the rule violations of docs/robot-file.md
  (used by test_robot_file.py and test_mechanism_file.py).

Every robot drawn here passes `core.model.robot.validate_robot` by construction:

* masses are positive (0.1..10 kg);
* an inertia tensor about the mass centre is built from the second moments
  S_x, S_y, S_z > 0 of a mass distribution (principal moments
  S_y + S_z, S_x + S_z, S_x + S_y), so it is positive definite and meets the
  triangle inequality in every frame; it is then turned by a random rotation,
  so products of inertia are present (usually);
* DH parameters, mass centres and gravity are bounded, random, and joints are
  revolute, prismatic or mixed.

The helpers `assert_close` and `scale_of` give tolerances relative to the
magnitudes involved, never absolute numbers typed for one case.
"""
from __future__ import annotations

import math
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import numpy as np
import scipy.linalg
import scipy.optimize
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

from armdyn.core import Chain, JointType, Link, Loop, Mechanism, Placement, Robot
from armdyn.core.kernels.layout import perpendicular_pair

# ----------------------------------------------------------------------------------
# Settings: one helper for every property test, scaled by the Hypothesis profile
# ----------------------------------------------------------------------------------

#: The health checks `fast` turns off unless told otherwise: the first call may load
#: numba's cache, big examples are fine, fixtures are not reset between examples.
SLOW_AND_BIG = (HealthCheck.too_slow, HealthCheck.data_too_large,
                HealthCheck.function_scoped_fixture)


def examples(n: int) -> int:
    """How many examples a test written for n runs under the loaded Hypothesis profile.

    n under "ci" (the full run, tests/conftest.py); under another profile, n times its
    max_examples over ci's: about n/10, at least 2 (never more than n), under "dev"."""
    full = settings.get_profile("ci").max_examples
    loaded = settings.default.max_examples
    scaled = round(n * loaded / full)
    return scaled if loaded >= full else min(n, max(2, scaled))


def fast(max_examples: int, *, suppress_health_check=SLOW_AND_BIG) -> settings:
    """Settings for a property test: `examples(max_examples)` examples, no deadline.

    Called when the test module is imported (at collection, after pytest has loaded
    the profile), so the other settings are the loaded profile's."""
    return settings(max_examples=examples(max_examples), deadline=None,
                    suppress_health_check=list(suppress_health_check))


def reals(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def vectors(n: int, lo: float, hi: float) -> st.SearchStrategy[np.ndarray]:
    return st.lists(reals(lo, hi), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=float))


# Drawing every float of a 30-link robot through Hypothesis costs ~0.1 s per example,
# so Hypothesis draws the structure (number of links, joint types, a seed) and a numpy
# generator seeded from it draws the numbers. A failing example is still reproduced
# exactly from what Hypothesis prints, and it shrinks in n. Like hand-written DH
# tables, about a third of the DH entries and mass-centre components are exact
# zeros (alpha: exactly +/- pi/2), the special cases where sign slips hide.

def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random rotation matrix (normalised Gaussian quaternion)."""
    w, x, y, z = rng.normal(size=4)
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / norm, x / norm, y / norm, z / norm
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def random_inertia(rng: np.random.Generator, lo: float = 1e-3, hi: float = 1.0) -> tuple[float, ...]:
    """(xx, yy, zz, xy, xz, yz) about the mass centre: PD, triangle inequality, rotated.

    Built from the second moments S_x, S_y, S_z in [lo, hi] of a mass distribution:
    principal moments S_y + S_z, S_x + S_z, S_x + S_y, then a random rotation."""
    sx, sy, sz = rng.uniform(lo, hi, 3)
    R = random_rotation(rng) if rng.random() < 0.7 else np.eye(3)
    I = R @ np.diag([sy + sz, sx + sz, sx + sy]) @ R.T
    I = 0.5 * (I + I.T)
    return (float(I[0, 0]), float(I[1, 1]), float(I[2, 2]),
            float(I[0, 1]), float(I[0, 2]), float(I[1, 2]))


def _maybe_zero(rng: np.random.Generator, x: float, special: float = 0.0) -> float:
    return special if rng.random() < 0.3 else float(x)


def random_link(rng: np.random.Generator, joint: JointType) -> Link:
    alpha = _maybe_zero(rng, rng.uniform(-math.pi, math.pi),
                        special=float(rng.choice([0.0, math.pi / 2, -math.pi / 2])))
    return Link(joint=joint,
                a=_maybe_zero(rng, rng.uniform(-1.0, 1.0)),
                b=_maybe_zero(rng, rng.uniform(-1.0, 1.0)),
                alpha=alpha,
                theta=_maybe_zero(rng, rng.uniform(-math.pi, math.pi)),
                mass=float(rng.uniform(0.1, 10.0)),
                com=tuple(_maybe_zero(rng, c) for c in rng.uniform(-0.5, 0.5, 3)),
                inertia=random_inertia(rng))


def random_unit_quaternion(rng: np.random.Generator) -> tuple[float, ...]:
    """[qx, qy, qz, qw], uniformly random."""
    x = rng.normal(size=4)
    return tuple(float(v) for v in x / np.linalg.norm(x))


def random_joint_of_several(rng: np.random.Generator, joint: JointType) -> Link:
    """A spherical, universal or free joint's link: random placement, home values,
    mass and inertia."""
    if joint == JointType.UNIVERSAL:
        home = tuple(float(v) for v in rng.uniform(-math.pi, math.pi, 2))
    elif joint == JointType.SPHERICAL:
        home = random_unit_quaternion(rng)
    else:
        home = tuple(float(v) for v in rng.uniform(-1.0, 1.0, 3)) + random_unit_quaternion(rng)
    return Link(joint=joint, xyz=tuple(float(v) for v in rng.uniform(-0.5, 0.5, 3)),
                rpy=tuple(float(v) for v in rng.uniform(-math.pi, math.pi, 3)), home=home,
                mass=float(rng.uniform(0.1, 10.0)),
                com=tuple(_maybe_zero(rng, c) for c in rng.uniform(-0.5, 0.5, 3)),
                inertia=random_inertia(rng))


def any_link(rng: np.random.Generator, joint: JointType) -> Link:
    """A random link on a joint of any kind."""
    return random_link(rng, joint) if joint.is_dh else random_joint_of_several(rng, joint)


JOINT_KINDS = {
    "several": st.sampled_from([JointType.REVOLUTE, JointType.PRISMATIC, JointType.SPHERICAL,
                                JointType.UNIVERSAL, JointType.SPHERICAL]),
    "mixed": st.sampled_from([JointType.REVOLUTE, JointType.PRISMATIC]),
    "revolute": st.just(JointType.REVOLUTE),
    "prismatic": st.just(JointType.PRISMATIC),
}

seeds = st.integers(0, 2**32 - 1)


@st.composite
def gravities(draw, g_max: float = 15.0) -> tuple[float, float, float]:
    """Random gravity, sometimes along a base axis, sometimes zero."""
    kind = draw(st.sampled_from(["random", "axis", "zero"]))
    if kind == "zero":
        return (0.0, 0.0, 0.0)
    if kind == "axis":
        g = [0.0, 0.0, 0.0]
        g[draw(st.integers(0, 2))] = draw(reals(-g_max, g_max))
        return tuple(g)
    return tuple(float(g) for g in draw(vectors(3, -g_max, g_max)))


@st.composite
def robots(draw, min_links: int = 1, max_links: int = 30, joints: str = "mixed",
           gravity: bool = True) -> Robot:
    """A random valid serial robot with min_links..max_links links and random gravity."""
    n = draw(st.integers(min_links, max_links))
    kinds = draw(st.lists(JOINT_KINDS[joints], min_size=n, max_size=n))
    g = draw(gravities()) if gravity else (0.0, 0.0, 0.0)
    rng = np.random.default_rng(draw(seeds))
    return Robot(name="random", links=tuple(random_link(rng, k) for k in kinds), gravity=g)


def random_state(rng: np.random.Generator, robot: Robot, scale: float = 1.0):
    """q (revolute in [-2 pi, 2 pi] rad, prismatic in [-1.5, 1.5] m), qd in [-3, 3],
    qdd in [-5, 5], times `scale` for the rates."""
    n = robot.n
    q = np.where(robot.is_revolute, rng.uniform(-2 * math.pi, 2 * math.pi, n),
                 rng.uniform(-1.5, 1.5, n))
    return q, scale * rng.uniform(-3.0, 3.0, n), scale * rng.uniform(-5.0, 5.0, n)


def random_state_of_any(rng: np.random.Generator, mech, scale: float = 1.0):
    """(q (nq,), qd (nv,), qdd (nv,)) for a model with joints of any kind: DH rows as
    `random_state`, random unit quaternions, universal angles in [-pi, pi], free
    positions in [-1, 1] m; rates times `scale`."""
    q = []
    for link in mech.links:
        if link.joint == JointType.REVOLUTE:
            q.append(rng.uniform(-2 * math.pi, 2 * math.pi))
        elif link.joint == JointType.PRISMATIC:
            q.append(rng.uniform(-1.5, 1.5))
        elif link.joint == JointType.UNIVERSAL:
            q += list(rng.uniform(-math.pi, math.pi, 2))
        elif link.joint == JointType.SPHERICAL:
            q += list(random_unit_quaternion(rng))
        else:
            q += list(rng.uniform(-1.0, 1.0, 3)) + list(random_unit_quaternion(rng))
    nv = mech.nv
    return (np.array(q), scale * rng.uniform(-3.0, 3.0, nv), scale * rng.uniform(-5.0, 5.0, nv))


@st.composite
def robots_and_states(draw, min_links: int = 1, max_links: int = 30, joints: str = "mixed",
                      gravity: bool = True):
    """(robot, q, qd, qdd); the rates are sometimes zero, sometimes tiny or large."""
    robot = draw(robots(min_links, max_links, joints, gravity))
    rng = np.random.default_rng(draw(seeds))
    q, qd, qdd = random_state(rng, robot)
    rate = draw(st.sampled_from([1.0, 1.0, 0.0, 1e-3, 10.0]))
    return robot, q, rate * qd, rate * qdd


@st.composite
def wrenches(draw) -> np.ndarray:
    """[n; f]: moment (N m) and force (N), components in [-20, 20]; sometimes a pure
    force or a pure moment."""
    w = np.random.default_rng(draw(seeds)).uniform(-20.0, 20.0, 6)
    kind = draw(st.sampled_from(["both", "force", "moment"]))
    if kind == "force":
        w[:3] = 0.0
    elif kind == "moment":
        w[3:] = 0.0
    return w


# ----------------------------------------------------------------------------------
# Tolerances relative to magnitudes
# ----------------------------------------------------------------------------------

def scale_of(*arrays) -> float:
    """The largest magnitude among the arrays (what round-off is relative to)."""
    return max([float(np.max(np.abs(a))) if np.size(a) else 0.0 for a in arrays] + [0.0])


def assert_close(actual, expected, rtol: float, scale: float | None = None, what: str = "") -> None:
    """max |actual - expected| <= rtol * max(scale, max |expected|, 1e-300)."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite values {actual}"
    ref = max(scale_of(expected), scale or 0.0, 1e-300)
    err = float(np.max(np.abs(actual - expected))) if actual.size else 0.0
    assert err <= rtol * ref, (f"{what}: max error {err:.3e} > {rtol:.1e} * {ref:.3e}\n"
                               f"actual   = {actual!r}\nexpected = {expected!r}")


# ----------------------------------------------------------------------------------
# Trees: Mechanisms of serial chains hung on the base or on links of other chains
# ----------------------------------------------------------------------------------

def random_placement(rng: np.random.Generator):
    """A chain's base placement: identity sometimes, else random xyz (m) and rpy (rad),
    with exact zeros and right angles among the entries."""
    if rng.random() < 0.2:
        return Placement()
    xyz = tuple(_maybe_zero(rng, x) for x in rng.uniform(-1.0, 1.0, 3))
    rpy = tuple(_maybe_zero(rng, a, special=float(rng.choice([0.0, math.pi / 2, -math.pi / 2])))
                for a in rng.uniform(-math.pi, math.pi, 3))
    return Placement(xyz, rpy)


@st.composite
def random_tree(draw, min_joints: int = 1, max_joints: int = 30, joints: str = "mixed",
                gravity: bool = True, max_chains: int = 8, floating: bool = False):
    """A random valid tree Mechanism (no loops) with min_joints..max_joints joints.

    Hypothesis draws the structure: the number of joints, how they split into chains,
    the joint types, the order in which chains are attached (a chain hangs on the base
    or on any link of a chain attached before it; since the joint order is the chains'
    given order, a chain often hangs on a link of a later chain) and where each one
    hangs. A seeded numpy generator draws the numbers: DH rows, inertias and random
    base placements with rpy. joints="several" mixes in spherical and universal joints;
    floating=True puts the root of the first chain hung on the base on a free joint
    (every other chain on the base stays fixed to it)."""
    n = draw(st.integers(min_joints, max_joints))
    c = draw(st.integers(1, min(n, max_chains)))
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), min_size=c - 1, max_size=c - 1))) \
        if c > 1 else []
    bounds = [0] + cuts + [n]
    lengths = [bounds[i + 1] - bounds[i] for i in range(c)]
    kinds = draw(st.lists(JOINT_KINDS[joints], min_size=n, max_size=n))
    attach = draw(st.permutations(range(c)))  # attach[i]: the i-th chain to be attached
    g = draw(gravities()) if gravity else (0.0, 0.0, 0.0)
    rng = np.random.default_rng(draw(seeds))
    names = [[f"c{ci}l{i}" for i in range(lengths[ci])] for ci in range(c)]
    parents: list[str | None] = [None] * c
    available: list[str] = []  # links of the chains attached so far
    for ci in attach:
        pick = draw(st.integers(0, len(available)))  # 0: the base
        parents[ci] = None if pick == 0 else available[pick - 1]
        available += names[ci]
    chains, k = [], 0
    for ci in range(c):
        links = tuple(replace_name(any_link(rng, kinds[k + i]), names[ci][i])
                      for i in range(lengths[ci]))
        k += lengths[ci]
        chains.append(Chain(f"chain{ci}", links, parent=parents[ci],
                            base=random_placement(rng)))
    if floating:  # the first chain attached hangs on the base: its root goes free
        first = attach[0]
        root = replace_name(random_joint_of_several(rng, JointType.FREE), names[first][0])
        chains[first] = replace(chains[first], links=(root,) + chains[first].links[1:])
    return Mechanism(name="random tree", chains=tuple(chains), gravity=g, angle_unit="rad")


def replace_name(link: Link, name: str) -> Link:
    return replace(link, name=name)


@st.composite
def trees_and_states(draw, min_joints: int = 1, max_joints: int = 30, joints: str = "mixed",
                     gravity: bool = True):
    """(mechanism, q, qd, qdd) on a random tree; the rates are sometimes zero, tiny or
    large (as robots_and_states)."""
    mech = draw(random_tree(min_joints, max_joints, joints, gravity))
    rng = np.random.default_rng(draw(seeds))
    q, qd, qdd = random_state(rng, mech)
    rate = draw(st.sampled_from([1.0, 1.0, 0.0, 1e-3, 10.0]))
    return mech, q, rate * qd, rate * qdd


@st.composite
def link_wrenches(draw, n: int) -> np.ndarray:
    """(n, 6) per-link wrenches [moment; force], components in [-20, 20]; each link's is
    sometimes zero, a pure force or a pure moment."""
    rng = np.random.default_rng(draw(seeds))
    w = rng.uniform(-20.0, 20.0, (n, 6))
    kind = rng.integers(0, 4, n)  # 0 both, 1 force only, 2 moment only, 3 none
    w[kind == 1, :3] = 0.0
    w[kind == 2, 3:] = 0.0
    w[kind == 3] = 0.0
    return w


def tree_reach(mech, q) -> float:
    """A length scale of a tree: DH offsets, base placements and prismatic travel, m."""
    return (1.0 + sum(abs(l.a) + abs(l.b) for l in mech.links)
            + sum(float(np.abs(ch.base.xyz).sum()) for ch in mech.chains) + scale_of(q))


# ----------------------------------------------------------------------------------
# Closed chains, reference geometry: DH frames and the constrained directions of each
# loop joint
# ----------------------------------------------------------------------------------
#
# Independent of ArmDyn's closure code: the link frames are the DH products of
# docs/robot-file.md written out here, and the motions that keep a loop closed come
# from the relative twist of its two links at the joint point (revolute: no relative
# velocity of the point, relative rotation only about the axis; spherical: no relative
# velocity of the point; prismatic: relative velocity only along the axis, no relative
# rotation), assembled from each joint's axis.


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
# Closed chains: random closed mechanisms, and a spatial four-bar
# ----------------------------------------------------------------------------------
#
# `closed_mechanisms`: a random tree of revolute and prismatic joints (`random_tree`:
# 2..12 joints in branching chains with random base placements) plus 1..3 loop joints
# (revolute, spherical, prismatic) between random link pairs or a link and the base,
# placed so that each loop is closed at the drawn pose: a base-frame point P and
# direction w, `at` = each link frame's inverse applied to P, `axis` = R^T w. A
# prismatic loop's roll row compares frame directions the model derives from each axis
# (`core.kernels.layout.perpendicular_pair`), so w is chosen (a root on a great
# circle) where that row vanishes too.


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


def rusr_mechanism(theta=0.3):
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


# ----------------------------------------------------------------------------------
# Robot-file cases: a valid file in the documented layout and the rules it can break
# ----------------------------------------------------------------------------------

# A hand-written file in the documented layout: three links, the middle one named.
VALID_TEXT = """\
format = "armdyn-robot/1"
name = "Test arm"
description = "Three links; numbers made up for the tests."
angle_unit = "deg"
gravity = [0.0, 0.0, -9.81]

[[link]]
name = "waist"
joint = "revolute"
a = 0.0
b = 0.67
alpha = -90.0
theta = 0.0
mass = 10.5
com = [0.0, 0.0, 0.054]
inertia = { xx = 1.6, yy = 1.6, zz = 0.5 }
limits = [-160.0, 160.0]

[[link]]
name = "shoulder"
joint = "revolute"
a = 0.4318
b = 0.0
alpha = 0.0
theta = 30.0
mass = 17.4
com = [-0.3638, 0.006, 0.2275]
inertia = { xx = 0.13, yy = 0.524, zz = 0.539, xy = 0.01 }
limits = [-225.0, 45.0]

[[link]]
name = "slide"
joint = "prismatic"
a = 0.02
b = 0.15
alpha = 90.0
theta = 0.0
mass = 4.8
com = [0.0, -0.015, 0.07]
inertia = { xx = 0.066, yy = 0.076, zz = 0.0125 }
limits = [0.0, 0.5]
"""


def mutate_link(i, key, value):
    def f(doc):
        if value is DELETE:
            del doc["link"][i][key]
        else:
            doc["link"][i][key] = value
    return f


def mutate_inertia(i, key, value):
    def f(doc):
        if value is DELETE:
            del doc["link"][i]["inertia"][key]
        else:
            doc["link"][i]["inertia"][key] = value
    return f


DELETE = object()

# (mutation, field, words the reason must contain) -- all on link 2, "shoulder"
LINK_CASES = [
    # missing fields: everything but name and limits is required (joint too)
    *[(mutate_link(1, k, DELETE), k, ["missing"]) for k in
      ("joint", "a", "b", "alpha", "theta", "mass", "com", "inertia")],
    (mutate_inertia(1, "zz", DELETE), "inertia.zz", ["missing"]),
    # unknown fields, with the closest known name suggested
    (mutate_link(1, "mas", 3.0), "mas", ["unknown", "mass"]),
    (mutate_link(1, "lenght", 3.0), "lenght", ["unknown"]),
    (mutate_inertia(1, "Ixx", 1.0), "inertia.Ixx", ["unknown", "'xx'"]),
    # wrong types
    (mutate_link(1, "mass", "heavy"), "mass", ["expected", "number", "heavy"]),
    (mutate_link(1, "a", True), "a", ["expected", "boolean"]),
    (mutate_link(1, "mass", False), "mass", ["expected", "boolean"]),
    (mutate_link(1, "com", [0.0, 0.1]), "com", ["expected", "3", "2"]),
    (mutate_link(1, "com", [0.0, "x", 0.1]), "com", ["expected", "number"]),
    (mutate_link(1, "com", "0 0 0"), "com", ["expected", "array"]),
    (mutate_link(1, "inertia", [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]), "inertia", ["expected", "table"]),
    (mutate_link(1, "inertia", 1.0), "inertia", ["expected", "table"]),
    (mutate_inertia(1, "xy", "0"), "inertia.xy", ["expected", "number"]),
    (mutate_inertia(1, "xx", True), "inertia.xx", ["expected", "boolean"]),
    (mutate_link(1, "joint", "revolut"), "joint", ["revolute", "prismatic"]),
    (mutate_link(1, "joint", 1), "joint", ["revolute", "prismatic"]),
    (mutate_link(1, "limits", [1.0]), "limits", ["expected"]),
    (mutate_link(1, "limits", [0, True]), "limits", ["boolean"]),
    # non-finite and absurd numbers
    (mutate_link(1, "mass", math.nan), "mass", ["finite"]),
    (mutate_link(1, "a", math.inf), "a", ["finite"]),
    (mutate_link(1, "theta", -math.inf), "theta", ["finite"]),
    (mutate_link(1, "com", [0.0, math.nan, 0.0]), "com", ["finite"]),
    (mutate_inertia(1, "zz", math.nan), "inertia.zz", ["finite"]),
    (mutate_link(1, "limits", [-math.inf, 1.0]), "limits", ["finite"]),
    (mutate_link(1, "b", 1e308), "b", ["range"]),
    (mutate_link(1, "alpha", 1e300), "alpha", ["range"]),
    (mutate_link(1, "mass", 10 ** 18), "mass", ["range"]),
    # mass <= 0
    (mutate_link(1, "mass", 0.0), "mass", ["> 0"]),
    (mutate_link(1, "mass", -1.0), "mass", ["> 0"]),
    # inertia not positive definite, or breaking the triangle inequality
    (mutate_link(1, "inertia", {"xx": 1.0, "yy": 1.0, "zz": 1.0, "xy": 1.0}), "inertia",
     ["positive definite"]),
    (mutate_link(1, "inertia", {"xx": 1.0, "yy": 1.0, "zz": 3.0}), "inertia",
     ["triangle", "xx + yy >= zz"]),
    (mutate_link(1, "inertia", {"xx": 3.0, "yy": 1.0, "zz": 1.0}), "inertia", ["triangle"]),
    (mutate_link(1, "inertia", {"xx": 0.0, "yy": 0.0, "zz": 0.0}), "inertia", ["inertia"]),
    (mutate_link(1, "inertia", {"xx": -1.0, "yy": -1.0, "zz": -1.0}), "inertia", ["inertia"]),
    # limits not increasing
    (mutate_link(1, "limits", [10.0, -10.0]), "limits", ["increasing"]),
    (mutate_link(1, "limits", [5.0, 5.0]), "limits", ["increasing"]),
]


def mutate_top(key, value):
    def f(doc):
        if value is DELETE:
            doc.pop(key, None)
        else:
            doc[key] = value
    return f


TOP_CASES = [
    (mutate_top("format", DELETE), "format", ["missing", "armdyn-robot/1"]),
    (mutate_top("format", "armdyn-robot/2"), "format", ["unknown", "armdyn-robot/2"]),
    (mutate_top("format", 1), "format", ["expected"]),
    (mutate_top("name", DELETE), "name", ["missing"]),
    (mutate_top("name", "   "), "name", ["non-empty"]),
    (mutate_top("name", ["x"]), "name", ["expected"]),
    (mutate_top("description", 3), "description", ["expected", "string"]),
    (mutate_top("angle_unit", "degrees"), "angle_unit", ['"deg"', '"rad"']),
    (mutate_top("angle_unit", "grad"), "angle_unit", ['"deg"', '"rad"']),
    (mutate_top("gravity", [0.0, -9.81]), "gravity", ["3"]),
    (mutate_top("gravity", [0.0, 0.0, math.nan]), "gravity", ["finite"]),
    (mutate_top("gravity", "down"), "gravity", ["expected"]),
    (mutate_top("gravty", [0.0, 0.0, -9.81]), "gravty", ["unknown", "gravity"]),
    (mutate_top("link", DELETE), "link", ["at least one"]),
    (mutate_top("link", []), "link", ["at least one"]),
    (mutate_top("link", 3), "link", ["[[link]]"]),
]


# ----------------------------------------------------------------------------------
# URDF text: random files and the numbers a reading gives (tests/test_urdf.py,
# tests/test_robustness_urdf.py)
# ----------------------------------------------------------------------------------

def dh_tables(mech) -> np.ndarray:
    """Every number of a mechanism's links and chain bases, one row per link."""
    rows = []
    for chain in mech.chains:
        for i, link in enumerate(chain.links):
            base = (*chain.base.xyz, *chain.base.rpy) if i == 0 else (0.0,) * 6
            rows.append([link.a, link.b, link.alpha, link.theta, link.mass, *link.com,
                         *link.inertia, *base])
    return np.array(rows)


_ANGLES = ("0", "0", repr(math.pi / 2), repr(-math.pi / 2), repr(math.pi))
_AXES = ("1 0 0", "0 1 0", "0 0 1", "-1 0 0", "0 -1 0", "0 0 -1")


def _text(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def random_urdf(seed: int, joints: int, tree: bool) -> str:
    """A random URDF: revolute, continuous, prismatic and fixed joints with origins on
    and off the axes, right angles and random angles, signed unit and random axes, links
    with and without inertials (every moving body has some), a chain or a tree."""
    rng = np.random.default_rng(seed)
    out = [f'<robot name="random {seed}">', '<link name="root"/>']
    links = ["root"]
    for k in range(joints):
        parent = links[-1] if not tree or rng.random() < 0.5 else links[rng.integers(len(links))]
        kind = rng.choice(["revolute", "continuous", "prismatic", "fixed"],
                          p=[0.4, 0.15, 0.25, 0.2])
        name = f"L{k}"
        xyz = (rng.uniform(-0.5, 0.5, 3) * (rng.random(3) < 0.6)) if rng.random() < 0.8 else \
            np.zeros(3)
        rpy = [rng.choice(_ANGLES) if rng.random() < 0.8 else repr(rng.uniform(-3, 3))
               for _ in range(3)]
        axis = rng.choice(_AXES) if rng.random() < 0.8 else _text(random_rotation(rng)[:, 0])
        has_mass = kind != "fixed" or rng.random() < 0.6
        inertial = ""
        if has_mass:
            ixx, iyy, izz, ixy, ixz, iyz = random_inertia(rng, 1e-3, 0.05)
            inertial = (f'<inertial><origin xyz="{_text(rng.uniform(-0.3, 0.3, 3))}" '
                        f'rpy="{_text(rng.uniform(-3, 3, 3))}"/>'
                        f'<mass value="{rng.uniform(0.2, 3.0)!r}"/>'
                        f'<inertia ixx="{ixx!r}" ixy="{ixy!r}" ixz="{ixz!r}" iyy="{iyy!r}" '
                        f'iyz="{iyz!r}" izz="{izz!r}"/></inertial>')
        out.append(f'<link name="{name}">{inertial}</link>')
        limit = ""
        if kind in ("revolute", "prismatic"):
            lo = rng.uniform(-3, 0)
            limit = f'<limit lower="{lo!r}" upper="{lo + rng.uniform(0.1, 4)!r}" ' \
                    'effort="10" velocity="1"/>'
        out.append(f'<joint name="J{k}" type="{kind}"><parent link="{parent}"/>'
                   f'<child link="{name}"/><origin xyz="{_text(xyz)}" rpy="{" ".join(rpy)}"/>'
                   f'<axis xyz="{axis}"/>{limit}</joint>')
        links.append(name)
    out.append("</robot>")
    return _give_every_moving_body_mass("\n".join(out))


def _give_every_moving_body_mass(text: str) -> str:
    """Where a moving joint's body (its child and the links fixed to it) has no inertial,
    give the child one (a small box)."""
    root = ET.fromstring(text)
    links = {l.get("name"): l for l in root.findall("link")}
    joints = root.findall("joint")
    by_child = {j.find("child").get("link"): j for j in joints}

    def body_of(link):
        while link in by_child and by_child[link].get("type") == "fixed":
            link = by_child[link].find("parent").get("link")
        return link

    massive = {body_of(name) for name, l in links.items() if l.find("inertial") is not None}
    for j in joints:
        child = j.find("child").get("link")
        if j.get("type") != "fixed" and child not in massive:
            ET.SubElement(ET.SubElement(links[child], "inertial"), "mass", value="0.5")
            links[child].find("inertial").append(ET.Element(
                "inertia", ixx="0.002", ixy="0", ixz="0", iyy="0.003", iyz="0", izz="0.004"))
    return ET.tostring(root, encoding="unicode")


def floating_four_bar(gravity=(0.0, 0.0, -9.81)) -> Mechanism:
    """A planar four-bar on a free chassis (5 kg): crank (actuated) and coupler on one
    base point, rocker on another 0.45 m away, closed by a revolute cut joint; 7 DOF."""
    from armdyn.core import Assembly, LoopJointType
    I = (0.01, 0.012, 0.014, 0.0, 0.0, 0.0)
    chassis = Link(joint=JointType.FREE, name="chassis", mass=5.0,
                   inertia=(0.2, 0.3, 0.4, 0, 0, 0), home=(0, 0, 1.0, 0, 0, 0, 1))
    crank = Link(joint=JointType.REVOLUTE, name="crank", a=0.2, theta=1.0, mass=1.0,
                 com=(-0.1, 0, 0), inertia=I, actuated=True)
    coupler = Link(joint=JointType.REVOLUTE, name="coupler", a=0.5, theta=-0.6, mass=1.0,
                   com=(-0.25, 0, 0), inertia=I)
    rocker = Link(joint=JointType.REVOLUTE, name="rocker", a=0.4, theta=1.3, mass=1.0,
                  com=(-0.2, 0, 0), inertia=I)
    return Mechanism("flapper", [Chain("body", [chassis]),
                                 Chain("a", [crank, coupler], parent="chassis"),
                                 Chain("b", [rocker], parent="chassis",
                                       base=Placement((0.45, 0.0, 0.0)))],
                     loops=[Loop("C", LoopJointType.REVOLUTE, ("coupler", "rocker"))],
                     gravity=gravity, assembly=Assembly(independent=("chassis", "crank")))


def example_robot_data() -> Path:
    """The robots/ folder of the example-robot-data package (a cmeel wheel, a test
    dependency that scripts/setup.sh --test installs): real URDFs to load."""
    for entry in sys.path:
        folder = Path(entry) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if folder.is_dir():
            return folder
    raise RuntimeError("example-robot-data is not installed (a test dependency: "
                       "pip install example-robot-data)")

