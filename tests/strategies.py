"""Hypothesis strategies shared by the dynamics tests: random valid robots and states.

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

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from armdyn.core import JointType, Link, Robot

#: Settings for the property tests: no deadline (the first call may load numba's
#: cache), big examples are fine.
def fast(max_examples: int) -> settings:
    return settings(max_examples=max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


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


JOINT_KINDS = {
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
    from armdyn.core import Placement
    if rng.random() < 0.2:
        return Placement()
    xyz = tuple(_maybe_zero(rng, x) for x in rng.uniform(-1.0, 1.0, 3))
    rpy = tuple(_maybe_zero(rng, a, special=float(rng.choice([0.0, math.pi / 2, -math.pi / 2])))
                for a in rng.uniform(-math.pi, math.pi, 3))
    return Placement(xyz, rpy)


@st.composite
def random_tree(draw, min_joints: int = 1, max_joints: int = 30, joints: str = "mixed",
                gravity: bool = True, max_chains: int = 8):
    """A random valid tree Mechanism (no loops) with min_joints..max_joints joints.

    Hypothesis draws the structure: the number of joints, how they split into chains,
    the joint types, the order in which chains are attached (a chain hangs on the base
    or on any link of a chain attached before it; since the joint order is the chains'
    given order, a chain often hangs on a link of a later chain) and where each one
    hangs. A seeded numpy generator draws the numbers: DH rows, inertias and random
    base placements with rpy."""
    from armdyn.core import Chain, Mechanism
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
        links = tuple(replace_name(random_link(rng, kinds[k + i]), names[ci][i])
                      for i in range(lengths[ci]))
        k += lengths[ci]
        chains.append(Chain(f"chain{ci}", links, parent=parents[ci],
                            base=random_placement(rng)))
    return Mechanism(name="random tree", chains=tuple(chains), gravity=g, angle_unit="rad")


def replace_name(link: Link, name: str) -> Link:
    from dataclasses import replace
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
