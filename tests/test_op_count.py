"""Operation counts of our kernels (core/lab/op_count.py) against a count by hand.

The instrumented count runs the kernels' own Python source on counting numbers. The
reference here is independent of it: a count made by reading the kernels' code line by
line (`core/kernels/denoc.py`, `core/kernels/linalg6.py`, `cholesky_solve` in `core/algorithms/dynamics.py`),
written down below as the multiplications (M, divisions included) and additions (A,
subtractions included) of each line, summed with the loop structure: per joint, per
joint with a parent, per revolute / prismatic joint, per placed chain root, per
(ancestor, descendant) pair, and Cholesky's triangular sums. It uses neither the
counting numbers nor the kernels, so it catches what the harness could get wrong
(a helper left compiled or counted twice, operations between two literals missed, an
integer array counted, an augmented assignment miscounted) for every structure
hypothesis draws. It also pins the kernels' costs: a kernel edit that changes an
operation fails here, and the lines below say which count to update.

Two more checks that the counted run is the same computation: its result equals the
compiled kernel's, and a small kernel of known cost counts exactly.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given
from numba import njit

from armdyn.core import forward_dynamics, inverse_dynamics, load_mechanism, load_robot
from armdyn.core.lab.complexity import random_chain
from armdyn.core.kernels.joints import JOINT_PRISMATIC, JOINT_REVOLUTE
from armdyn.core.model.arguments import kernel_of
from armdyn.core.lab.op_count import (Counted, Counter, CountCancelled, count_forward_dynamics,
                                      count_inverse_dynamics, counted_array, counting)
from strategies import fast, random_tree

ROBOTS = "robots"


# ----------------------------------------------------------------------------------
# The count by hand. Per line: (M, A). "nr": a joint with a parent (not a root).
# ----------------------------------------------------------------------------------

def structure(model) -> dict[str, int]:
    """n, nr (joints with a parent), P (prismatic joints), placed (chain roots with a
    placement), pairs (ancestor-descendant pairs: the sum of the joints' depths), at
    (joints with a parent whose point O_k is the parent's O_λ: not moved by a placement
    and after a revolute row with a = b = 0, so that A_{k,λ} = 1)."""
    v = kernel_of(model).views
    n = int(v.n)
    parent = [int(p) for p in v.parent]
    pairs = 0
    for j in range(n):
        p = parent[j]
        while p >= 0:
            pairs += 1
            p = parent[p]
    at = sum(1 for k, p in enumerate(parent)
             if p >= 0 and v.kind[p] == JOINT_REVOLUTE and v.dh[p, 0] == 0.0
             and v.dh[p, 1] == 0.0 and not np.any(v.place_p[k]))
    return {"n": n, "nr": sum(p >= 0 for p in parent),
            "P": int(np.sum(v.kind == JOINT_PRISMATIC)),
            "placed": int(np.sum(v.placed)), "pairs": pairs, "at": at}


def link_quantities_count(s) -> tuple[int, int]:
    # dh_frames, per joint:
    #   placed root: oj += 3 products (3M 3A) x3 rows; Rl = P @ place_R: 9 x (3M 2A)  -> 36M 27A
    #   Q01, Q02, Q11, Q12 (4M); px, py (2M); Rl = Rj Q: 9 x (3M 2A); ol: 3 x (3M 3A) -> 42M 27A
    # link_quantities, per joint:
    #   c: 3 x (3M 3A); d = c - oj: 3A; X = R Ic: 9 x (3M 2A); dd: 3M 2A
    #   M00, M11, M22: 5M 4A each; M01, M02, M12: 5M 3A each; m (d x 1): 6M
    #   -> 9+27+3+30+6 = 75M, 9+3+18+2+21 = 53A;  A_k = O_λ - O_k (nr): 3A
    M = (42 + 75) * s["n"] + 36 * s["placed"]
    A = (27 + 53) * s["n"] + 3 * s["nr"] + 27 * s["placed"]
    return M, A


def inverse_dynamics_count(s) -> tuple[int, int]:
    # twists: p qd (3M 3A); nr: A_times (6M 6A)
    # twist_rates: p qdd (3M 3A); W p qd cross (6M 3A); revolute += c qd (3M 3A),
    #   prismatic += 2 c qd (6M 3A); nr: A_times (6M 6A), a (3A), w x a (6M 3A),
    #   w x (w x a) (6M 6A)
    # inertia wrench: I w (9M 6A); w x d (6M 3A); n* = I alpha (3M 2A) + m d x a (3M 1A)
    #   + w x Iw (2M 2A), 3 rows; f* = m (a - d x alpha (2M 2A) + w x (w x d) (2M 2A))
    #   (1M), 3 rows                                             -> 54M 39A
    # backward: tau = p . w (3M 2A); nr: A^T w (6M 12A)
    M = (3 + 3 + 6 + 3 + 54 + 3) * s["n"] + 3 * s["P"] + (6 + 18 + 6) * s["nr"]
    A = (3 + 3 + 3 + 3 + 39 + 2) * s["n"] + (6 + 18 + 12) * s["nr"]
    return M, A


def articulated_inertias_count(s) -> tuple[int, int]:
    # psi = M p (18M 12A); m = p . psi (3M 2A); pivot test 1e-13 * scale (1M)
    # nr: 1 / m (1M); psi_r / m (6M); Mbar's lower triangle, 21 x (1M 1A); ATMA_add
    #   (below)                                                  -> 28M 21A + ATMA_add
    return (22 * s["n"] + 28 * s["nr"] + ATMA_add_count(s)[0],
            14 * s["n"] + 21 * s["nr"] + ATMA_add_count(s)[1])


def ATMA_add_count(s) -> tuple[int, int]:
    # per joint with a parent: Y = M21 + M22 S 9 x (2M 2A); m_r x a, y_c x a 6 x (6M 3A);
    #   the lower triangle added: 6 x 3A, 9 x 1A, 6 x 1A         -> 54M 69A
    # A_{k,λ} = 1 (at): the lower triangle added, 21A
    return 54 * (s["nr"] - s["at"]), 69 * (s["nr"] - s["at"]) + 21 * s["at"]


def udu_solve_count(s) -> tuple[int, int]:
    # backward: phi^ = phi - p . eta (3M 3A); nr: phi^/m (1M), eta += psi s (6M 6A),
    #   A^T eta (6M 12A)
    # forward: psi . mu (6M 6A); qdd = (phi^ - s) / m (1M 1A); mu += p qdd (3M 3A);
    #   nr: A mu (6M 6A)
    return 13 * s["n"] + 19 * s["nr"], 13 * s["n"] + 24 * s["nr"]


def composite_count(s) -> tuple[int, int]:
    n, pairs = s["n"], s["pairs"]
    # composite_inertias: nr: ATMA_add (ATMA_add_count)
    # gim_from_composite: per joint M p (18M 12A), p . f (3M 2A);
    #   per ancestor pair A^T f (6M 12A), p . f (3M 2A)
    # cholesky_solve: column j: j products and subtractions, pivot test (1M), and each of
    #   the n-1-j rows below: j products and subtractions and a division; then the two
    #   triangular solves, row i: i (resp. n-1-i) products and subtractions, a division
    chol_M = sum(j + 1 + (n - 1 - j) * (j + 1) for j in range(n)) + n * (n + 1)
    chol_A = sum(j + (n - 1 - j) * j for j in range(n)) + n * (n - 1)
    return (ATMA_add_count(s)[0] + 21 * n + 9 * pairs + chol_M,
            ATMA_add_count(s)[1] + 14 * n + 14 * pairs + chol_A)


def reference(model, method: str) -> tuple[int, int]:
    """(M, A) of one call of `method` on `model`, by hand (see above)."""
    s = structure(model)
    parts = [link_quantities_count(s), inverse_dynamics_count(s)]
    if method == "denoc":
        parts += [articulated_inertias_count(s), udu_solve_count(s), (0, s["n"])]  # phi
    elif method == "composite":
        parts += [composite_count(s), (0, s["n"])]                                  # phi
    # (ridim: the finiteness check of q, qd, qdd tests each entry, no arithmetic)
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


# ----------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------

MODELS = ["puma560_saha.toml", "stanford_saha2009.toml", "scara.toml", "humanoid.toml",
          "ur5e.toml"]


def _load(name):
    path = f"{ROBOTS}/{name}"
    return load_mechanism(path) if name == "humanoid.toml" else load_robot(path)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("method", ["denoc", "composite"])
def test_forward_dynamics_counts_match_the_count_by_hand(name, method):
    model = _load(name)
    c = count_forward_dynamics(model, method=method)
    assert (c.M, c.A) == reference(model, method)
    # the stages add up to the whole
    assert sum(v[0] for v in c.stages.values()) == c.M
    assert sum(v[1] for v in c.stages.values()) == c.A


@pytest.mark.parametrize("name", MODELS)
def test_inverse_dynamics_counts_match_the_count_by_hand(name):
    model = _load(name)
    c = count_inverse_dynamics(model)
    assert (c.M, c.A) == reference(model, "ridim")


@pytest.mark.parametrize("n", [1, 2, 7, 20])
def test_chain_counts_are_the_closed_forms(n):
    """All-revolute chains: denoc 355n - 131 M, 314n - 153 A; composite
    n^3/6 + 6n^2 + 1745n/6 - 84 M (the forms quoted in docs/gui.md)."""
    robot = random_chain(n, seed=n)
    d = count_forward_dynamics(robot, method="denoc")
    c = count_forward_dynamics(robot, method="composite")
    assert (d.M, d.A) == (355 * n - 131, 314 * n - 153)
    assert 6 * c.M == n ** 3 + 36 * n ** 2 + 1745 * n - 504
    assert (c.M, c.A) == reference(robot, "composite")


@fast(25)
@given(random_tree(min_joints=1, max_joints=9))
def test_random_trees_count_as_by_hand(mech):
    for method in ("denoc", "composite"):
        c = count_forward_dynamics(mech, method=method, seed=1)
        assert (c.M, c.A) == reference(mech, method), method


@pytest.mark.parametrize("method", ["denoc", "composite"])
def test_the_counted_run_computes_what_the_kernel_computes(method):
    robot = load_robot(f"{ROBOTS}/stanford_saha2009.toml")
    rng = np.random.default_rng(3)
    q, qd, tau = rng.normal(size=(3, robot.n))
    c = count_forward_dynamics(robot, q, qd, tau, method=method)
    np.testing.assert_allclose(c.result, forward_dynamics(robot, q, qd, tau, method=method),
                               rtol=0, atol=1e-12)
    r = count_inverse_dynamics(robot, q, qd, tau)
    np.testing.assert_allclose(r.result, inverse_dynamics(robot, q, qd, tau), rtol=0,
                               atol=1e-12)


@njit(cache=False)
def _helper(a, k):
    return a[k] * a[k] + 1.0


@njit(cache=False)
def _kernel(a, out):
    s = 0.0
    for k in range(a.shape[0]):
        out[k] = _helper(a, k) - 2.0 * a[k]
        s += out[k] / 3.0
    return -s if s > 0.0 else s


def test_a_small_kernel_counts_exactly():
    a = np.array([0.5, -1.0, 2.0, 3.0])
    out = np.zeros(4)
    expected = _kernel(a, out)
    result, tally, _ = Counter().call(_kernel, counted_array(a), counted_array(np.zeros(4)))
    assert float(result) == expected
    # per element: a*a, 2*a, out/3 (2 mul, 1 div); +1, -, s += (3 add/sub); one compare, one neg
    assert (tally.mul, tally.div, tally.add + tally.sub) == (8, 4, 12)
    assert (tally.cmp, tally.neg) == (1, 1)


def _py_helper(a, k):
    return a[k] * a[k] + 1.0


def _py_entry(a):
    s = 0.0
    for k in range(len(a)):
        s = s + _py_helper(a, k) / 2.0
    return s


def test_plain_python_functions_of_a_named_module_count_like_kernels():
    a = [0.5, -1.0, 2.0]
    expected = _py_entry(a)
    counted = [Counted(x) for x in a]
    result, tally, stages = Counter(python_modules=(__name__,)).call(
        _py_entry, counted, stages=("_py_helper",))
    assert float(result) == expected
    # per element: a*a, /2 (2 M); +1, s + (2 A); the helper's share is 1 M 1 A
    assert (tally.mul + tally.div, tally.add + tally.sub) == (6, 6)
    assert stages == {"_py_helper": (3, 3), "(own)": (3, 3)}
    # without the option the helper runs as it is: its literal 1.0 is a float, and
    # its arithmetic on Counted values still counts, but it is not a stage
    result, tally, stages = Counter().call(_py_entry, counted, stages=("_py_helper",))
    assert float(result) == expected and stages["_py_helper"] == (0, 0)


def test_counted_numbers():
    with counting() as t:
        x, y = Counted(2.0), Counted(3.0)
        z = (x * y + 1.0) / 2.0 - x
        assert float(z) == 1.5 and not (z < 1.0) and abs(-x).v == 2.0
        assert (t.mul, t.div, t.add, t.sub, t.cmp, t.neg) == (1, 1, 1, 1, 1, 1)
        1.0 * 2.0  # plain floats are not counted
        assert t.mul == 1


def test_a_count_can_be_stopped():
    stop = threading.Event()
    stop.set()
    with pytest.raises(CountCancelled):
        count_forward_dynamics(random_chain(5), method="composite", stop=stop)
    # and the lock is free again
    assert count_forward_dynamics(random_chain(2)).M == 355 * 2 - 131


def test_loops_are_refused():
    with pytest.raises(ValueError, match="trees"):
        count_forward_dynamics(load_mechanism(f"{ROBOTS}/fourbar.toml"))
