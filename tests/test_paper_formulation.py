"""The papers' RIDIM and RFDSIM in link frames (core/lab/paper_formulation.py).

Two things are checked, each against something independent of the code under test:

- the results: the link-frame recursions compute what ArmDyn's base-frame kernels
  compute (`inverse_dynamics`, and I qdd + h + g = tau with ArmDyn's mass matrix and
  bias torques), on random serial arms of revolute and prismatic joints and on the
  bundled serial robots;
- the operation counts: what the counting numbers count equals a count by hand of the
  code's lines, written out below per line and summed in n (the derivation is also
  in the module's docstring), for chains of several lengths and with prismatic joints.
  Seed 000's printed tables are checked in tests/test_complexity.py.
"""
from __future__ import annotations

import glob
import os
import threading

import numpy as np
import pytest
from hypothesis import given

from armdyn.core import (convective_torques, forward_dynamics, gravity_torques, inverse_dynamics,
                         load_mechanism, load_robot, mass_matrix)
from armdyn.core.lab.complexity import random_chain
from armdyn.core.lab.op_count import CountCancelled
from armdyn.core.lab.paper_formulation import (RFDSIM_STAGES, count_rfdsim, count_ridim,
                                               paper_model, rfdsim, ridim)
from strategies import assert_close, fast, robots_and_states, scale_of

RTOL = 1e-9
ROBOTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robots")
ROBOT_FILES = sorted(p for p in glob.glob(os.path.join(ROBOTS_DIR, "*.toml"))
                     if 'format = "armdyn-robot/1"' in open(p, encoding="utf-8").read())


# ----------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------

def check_against_armdyn(robot, q, qd, qdd):
    pm = paper_model(robot)
    tau = inverse_dynamics(robot, q, qd, qdd)
    I = mass_matrix(robot, q)
    g, h = gravity_torques(robot, q), convective_torques(robot, q, qd)
    forces = (tau, g, h, np.abs(I) @ np.abs(qdd))
    assert_close(ridim(pm, q, qd, qdd), tau, RTOL, scale_of(*forces), "RIDIM")
    # RFDSIM solves I qdd = tau - h - g
    a = np.array(rfdsim(pm, q, qd, tau))
    assert_close(I @ a + h + g, tau, RTOL, scale_of(*forces, np.abs(I) @ np.abs(a)),
                 "RFDSIM residual")


@fast(40)
@given(robots_and_states(max_links=9))
def test_link_frame_recursions_compute_what_the_kernels_compute(case):
    check_against_armdyn(*case)


@pytest.mark.parametrize("path", ROBOT_FILES, ids=os.path.basename)
def test_bundled_robots(path):
    robot = load_robot(path)
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1, 1, (3, robot.n))
    check_against_armdyn(robot, q, qd, qdd)


def test_forward_dynamics_gives_back_the_accelerations():
    robot = random_chain(7, seed=2, prismatic_every=3)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, robot.n))
    pm = paper_model(robot)
    back = rfdsim(pm, q, qd, ridim(pm, q, qd, qdd))
    np.testing.assert_allclose(back, qdd, rtol=0, atol=1e-10)
    np.testing.assert_allclose(back, forward_dynamics(robot, q, qd, inverse_dynamics(
        robot, q, qd, qdd)), rtol=0, atol=1e-10)


def test_serial_arms_only():
    with pytest.raises(TypeError, match="serial arm"):
        paper_model(load_mechanism(os.path.join(ROBOTS_DIR, "humanoid.toml")))


# ----------------------------------------------------------------------------------
# The count by hand, per line of core/lab/paper_formulation.py: (M, A)
# ----------------------------------------------------------------------------------

# ridim, forward recursion
FIRST_LINK = (4, 2)            # v'_1 = Rz(theta_1)^T (-g): one plane rotation
PROPAGATE = (4 + 10 + 32, 1 + 3 + 10 + 16)   # w x r; v + c; v' + w' x r + w x c; 4 x down
REVOLUTE_TERMS = (2, 1 + 3)    # w += z th'; w' += (w_y th', -w_x th', th'')
PRISMATIC_TERMS = (3, 1 + 3)   # v += z b'; t = 2 b'; v' += (w_y t, -w_x t, b'')
PRISMATIC_FIRST = (0, 2)       # link 1 sliding: v_1 = (0, 0, b'), v'_1 += (0, 0, b'')
# ridim, inertia wrench: I w', I w (9 M 6 A each), w x Iw, m d x v' (6 M 3 A each), sums
# (6 A); m v' (3 M), w' x m d, w x m d, w x (w x m d) (6 M 3 A each), sums (6 A)
INERTIA_WRENCH = (9 + 9 + 6 + 6 + 3 + 6 + 6 + 6, 6 + 6 + 3 + 3 + 6 + 3 + 3 + 3 + 6)
PRISMATIC_MASS = (4, 5)        # d_z, m d_z, m d_z^2, I_xx, I_yy, I_xz, I_yz
# ridim, backward recursion, link i > 1: up n and f (16 M 8 A); n + r x f (4 M 4 A);
# w*_{i-1} + A^T w_i (6 A)
TRANSFER_WRENCH = (16 + 4, 8 + 4 + 6)
# udu_factors, links i > 1: psi (6 M); Mbar (21 M 21 A); c^2, s^2, cs, 2cs, c^2 - s^2
# (3 M 2 A); Rz: two symmetric (12 M 8 A), one general (24 M 12 A); Rx: the same;
# shift: H' (12 M 12 A), I' (12 M 16 A)
ARTICULATED = (6 + 21 + 3 + 48 + 48 + 24, 21 + 2 + 28 + 28 + 28)
ADD_CHILD = (0, 15)            # M^_i = M_i + child's term, the 15 non-zero entries of M_i
# udu_solve, backward, links i > 1: eta_i = psi phi^ (+ eta: 6 A if a child); up (16 M
# 8 A); n + r x f (4 M 4 A); phi^_{i-1} = phi - eta_z (1 A)
ETA = (6 + 16 + 4, 8 + 4 + 1)
ETA_ADD = (0, 6)
# udu_solve, forward: th''_1 = phi^_1 / m^_1 (1 M); links i > 1: v + w x r (4 M 4 A),
# down (16 M 8 A), th'' = (phi^ - psi^ . mu) / m^ (7 M 6 A); mu += p th'' (1 A, i < n)
MU = (4 + 16 + 7, 4 + 8 + 6)
MU_ADD = (0, 1)


def add(*parts):
    return (sum(p[0] for p in parts), sum(p[1] for p in parts))


def times(k, part):
    return (k * part[0], k * part[1])


def ridim_by_hand(kinds: list[bool], with_qdd: bool = True):
    """(M, A) of `ridim` on a chain whose joints are revolute (True) or prismatic."""
    n = len(kinds)
    parts = [FIRST_LINK, times(n, INERTIA_WRENCH), times(n - 1, TRANSFER_WRENCH),
             times(n - 1, PROPAGATE)]
    for k, revolute in enumerate(kinds):
        if not revolute:
            parts.append(PRISMATIC_MASS)
        if k == 0:
            parts.append((0, 0) if revolute else
                         (PRISMATIC_FIRST if with_qdd else (0, PRISMATIC_FIRST[1] - 1)))
        else:
            terms = REVOLUTE_TERMS if revolute else PRISMATIC_TERMS
            parts.append(terms if with_qdd else (terms[0], terms[1] - 1))
    return add(*parts)


def rfdsim_by_hand(kinds: list[bool]):
    """(M, A) of `rfdsim` (n >= 2), by stage."""
    n = len(kinds)
    prismatic = sum(not r for r in kinds)
    bias = ridim_by_hand(kinds, with_qdd=False)
    factors = add(times(n - 1, ARTICULATED), times(n - 1, ADD_CHILD),
                  times(prismatic, PRISMATIC_MASS))
    solve = add(times(n - 1, ETA), times(n - 2, ETA_ADD), (1, 0), times(n - 1, MU),
                times(n - 2, MU_ADD))           # (1, 0): th''_1 = phi^_1 / m^_1
    return {"ridim": bias, "udu_factors": factors, "udu_solve": solve, "(own)": (0, n)}


def test_the_per_line_counts_sum_to_the_closed_forms_of_the_docstring():
    for n in range(2, 30):
        assert ridim_by_hand([True] * n) == (119 * n - 64, 91 * n - 50)
        fd = add(*rfdsim_by_hand([True] * n).values())
        assert fd == (322 * n - 266, 251 * n - 216)
        no_bias = add(*(v for k, v in rfdsim_by_hand([True] * n).items()
                        if k not in ("ridim", "(own)")))
        assert no_bias == (203 * n - 202, 160 * n - 167)


@pytest.mark.parametrize("n", [2, 3, 6, 7, 20])
def test_revolute_chains_count_as_by_hand(n):
    robot = random_chain(n, seed=n)
    c = count_ridim(robot)
    assert (c.M, c.A) == ridim_by_hand([True] * n)
    assert c.fn == 2 * n and c.cmp == 0        # cos and sin of each joint, no pivot test
    f = count_rfdsim(robot)
    assert f.stages == rfdsim_by_hand([True] * n)
    assert (f.M, f.A) == add(*f.stages.values())


@pytest.mark.parametrize("n, every", [(3, 3), (6, 3), (5, 2), (4, 1)])
def test_prismatic_joints_count_as_by_hand(n, every):
    robot = random_chain(n, seed=n, prismatic_every=every)
    kinds = list(robot.is_revolute)
    assert not all(kinds)
    c = count_ridim(robot)
    assert (c.M, c.A) == ridim_by_hand(kinds)
    assert count_rfdsim(robot).stages == rfdsim_by_hand(kinds)


def test_counts_do_not_depend_on_the_numbers():
    a, b = random_chain(6, seed=1), random_chain(6, seed=2)
    assert (count_rfdsim(a, seed=3).M, count_ridim(a, seed=3).A) == \
        (count_rfdsim(b, seed=4).M, count_ridim(b, seed=4).A)


def test_the_counted_run_computes_the_same_numbers():
    robot = random_chain(5, seed=1, prismatic_every=3)
    rng = np.random.default_rng(7)
    q, qd, x = rng.uniform(-1, 1, (3, robot.n))
    pm = paper_model(robot)
    np.testing.assert_allclose(count_ridim(robot, q, qd, x).result, ridim(pm, q, qd, x),
                               rtol=0, atol=1e-13)
    np.testing.assert_allclose(count_rfdsim(robot, q, qd, x).result, rfdsim(pm, q, qd, x),
                               rtol=0, atol=1e-13)
    assert set(count_rfdsim(robot).stages) == set(RFDSIM_STAGES) | {"(own)"}


def test_a_count_can_be_stopped():
    stop = threading.Event()
    stop.set()
    with pytest.raises(CountCancelled):
        count_rfdsim(random_chain(4), stop=stop)
    assert count_ridim(random_chain(2)).M == ridim_by_hand([True, True])[0]
