"""The complexity lab's core (core/lab/complexity.py): the seeds' formulas as printed, the
crossover, a small timed and counted sweep, CSV, and the papers' numbers beside ours (the
three columns of the Lab and the notes on where they differ)."""
from __future__ import annotations

import threading
from fractions import Fraction

import numpy as np
import pytest

from armdyn.core.lab.complexity import (CSV_HEADER_LINES, PRINTED_CROSSOVERS, SEED_FORMULAS,
                                        Crossover, LinearCount, count_comparison, count_notes,
                                        crossover, default_n_values, measure_costs,
                                        random_chain, seed_crossover, seed_formula,
                                        table2_crossovers, table2_note, write_costs_csv)
from armdyn.core.lab.op_count import count_forward_dynamics, count_inverse_dynamics
from armdyn.core.lab.paper_formulation import count_rfdsim, count_ridim


def run(gen):
    rows = []
    while True:
        try:
            rows.append(next(gen))
        except StopIteration as stop:
            return rows, stop.value


# the tables' own columns: (key, n, M, A) as printed
PRINTED = [
    ("saha1999_id", 6, 676, 527), ("hollerbach1980", 6, 2195, 1719), ("luh1980", 6, 852, 834),
    ("walker_orin1982_id", 6, 800, 595), ("khalil1986", 6, 538, 478),
    ("angeles1989", 6, 521, 435), ("balafoutis1988", 6, 489, 421),
    ("saha1999_fd", 6, 871, 797), ("saha1999_fd", 12, 2077, 1955),
    ("featherstone1983", 6, 996, 871), ("featherstone1983", 12, 2190, 1915),
    ("walker_orin1982", 12, 2357, 1716),   # seed 000's n = 6 column: 633 M and 480 A (475)
    ("mohan_saha2007", 12, 1948, 1667), ("saha2003", 14, 2390, 2293),
    ("featherstone1983", 14, 2588, 2263), ("valasek", 15, 3047, 2745),
    ("brandl", 16, 3778, 3322),
]


@pytest.mark.parametrize("key, n, M, A", PRINTED)
def test_formulas_give_the_tables_columns(key, n, M, A):
    assert seed_formula(key).exact(n) == (M, A)


def test_walker_orin_multiplications_at_n_6_and_10():
    wo = seed_formula("walker_orin1982")
    assert wo.exact(6)[0] == 633 and wo.exact(10)[0] == 1653
    assert wo.exact(6)[1] == 475          # seed 000 prints 480 (see the module docstring)
    assert wo.M(np.array([6.0, 12.0])).tolist() == pytest.approx([633, 2357])


# seed 001 Table 2's n* (M only) and n+ (M and A each) columns, as printed; three
# entries do not follow from the table's own formulas (xfail, strict: they must fail)
CROSSOVERS = [
    ("mohan_saha2007", False, 10), ("mohan_saha2007", True, 12),
    ("saha2003", False, 10), ("saha2003", True, 14),
    ("featherstone1983", False, 12), ("featherstone1983", True, 14),
    ("valasek", False, 13),
    pytest.param("valasek", True, 15, marks=pytest.mark.xfail(strict=True, reason="its formulas give 16")),
    pytest.param("brandl", False, 14, marks=pytest.mark.xfail(strict=True, reason="its formulas give 15")),
    pytest.param("brandl", True, 16, marks=pytest.mark.xfail(strict=True, reason="its formulas give 18")),
]


@pytest.mark.parametrize("key, both, printed", CROSSOVERS)
def test_seed_crossovers(key, both, printed):
    assert seed_crossover(seed_formula(key), seed_formula("walker_orin1982"), both) == printed


def test_the_printed_crossover_columns_and_the_note_on_them():
    # the columns as seed 001 prints them (the parameters of CROSSOVERS above)
    printed = {}
    for case in CROSSOVERS:
        key, both, n = case.values if hasattr(case, "values") else case
        printed.setdefault(key, {})[both] = n
    assert PRINTED_CROSSOVERS == {k: (v[False], v[True]) for k, v in printed.items()}
    rows = {r.key: r for r in table2_crossovers()}
    assert [k for k, r in rows.items() if not r.agrees] == ["valasek", "brandl"]
    # the three that contradict the formulas: what the formulas give (see CROSSOVERS)
    assert (rows["valasek"].formula_star, rows["valasek"].formula_plus) == (13, 16)
    assert (rows["brandl"].formula_star, rows["brandl"].formula_plus) == (15, 18)
    note = table2_note()
    for text in ("3 entries of n*", "Valasek n+ 15 (its formulas: 16)",
                 "Brandl et al. n* 14 (its formulas: 15)", "Brandl et al. n+ 16 (its formulas: 18)"):
        assert text in note


def test_the_paper_crossover_of_seed_000():
    # RFDSIM (1999) against Walker and Orin: seed 000 says "efficient when n ~ 12"
    rfdsim, wo = seed_formula("saha1999_fd"), seed_formula("walker_orin1982")
    assert seed_crossover(rfdsim, wo) == 11
    assert seed_crossover(rfdsim, wo, both=True) == 15


def test_every_formula_is_exact_rationals():
    for f in SEED_FORMULAS:
        assert all(isinstance(c, Fraction) for c in f.mul + f.add)
        assert f.order == ("O(n^3)" if f.mul[3] else "O(n)")


def test_crossover():
    n = [1, 2, 4, 8, 16]
    assert crossover(n, [5, 5, 5, 5, 5], [1, 2, 4, 8, 16]) == Crossover(8, pytest.approx(5.0))
    assert crossover(n, [1, 1, 1, 1, 1], [2, 2, 2, 2, 2]) == Crossover(1, 1.0)
    assert crossover(n, [3, 3, 3, 3, 3], [2, 2, 2, 2, 2]) is None
    # a late return above keeps the crossover after it; NaN (not measured) is skipped
    assert crossover(n, [1, 3, 1, 1, 1], [2, 2, 2, 2, 2]).n == 4
    assert crossover(n, [3, 1, np.nan, 1, 1], [2, 2, 2, 2, 2]).n == 2


def test_default_n_values():
    v = default_n_values(300)
    assert v[:16] == list(range(1, 17)) and v[-1] == 300
    assert all(b > a for a, b in zip(v, v[1:]))
    assert default_n_values(5) == [1, 2, 3, 4, 5]


def test_random_chain():
    r = random_chain(12)
    assert r.n == 12 and all(r.is_revolute)
    assert sum(not x for x in random_chain(12, prismatic_every=5).is_revolute) == 2


def test_a_small_sweep_times_counts_and_writes_csv(tmp_path):
    rows, sweep = run(measure_costs([1, 4, 24], budget_s=0.004, repeats=2))
    assert [r.n for r in rows] == [1, 4, 24] and sweep.rows == rows
    assert rows[-1].progress == 1.0
    assert all(0 < r.progress <= 1 for r in rows)
    for r in rows:
        assert r.time_denoc > 0 and r.kernel_composite > 0
        assert r.count_denoc.M == 355 * r.n - 131
        assert r.count_paper.method == "paper-rfdsim"
    # counted: the O(n^3) method costs more at 24 joints, less at 1
    assert sweep.counts("composite")[-1] > sweep.counts("denoc")[-1]
    assert sweep.counts("composite")[0] < sweep.counts("denoc")[0]
    assert sweep.count_crossover("M").n == 24
    path = tmp_path / "costs.csv"
    write_costs_csv(sweep, path)
    table = np.loadtxt(path, delimiter=",", skiprows=CSV_HEADER_LINES)
    assert table.shape == (3, 11 + 8)
    np.testing.assert_array_equal(table[:, 0], [1, 4, 24])
    np.testing.assert_array_equal(table[:, 5], sweep.counts("denoc", "M"))
    np.testing.assert_array_equal(table[:, 9], sweep.counts("paper", "M"))
    np.testing.assert_allclose(table[:, 11], [201 * n - 335 for n in (1, 4, 24)])
    header = path.read_text().splitlines()[CSV_HEADER_LINES - 1].split(",")
    assert header[1] == "denoc call [us]" and len(header) == 19
    assert header[9:11] == ["paper formulation M", "paper formulation A"]


def test_counting_can_be_limited_and_the_sweep_stopped():
    rows, sweep = run(measure_costs([2, 3], count_max_n=2, budget_s=0.002, repeats=1))
    assert rows[0].count_denoc is not None and rows[1].count_denoc is None
    assert np.isnan(sweep.counts("denoc")[1])
    stop = threading.Event()
    gen = measure_costs([1, 2, 3], budget_s=0.002, repeats=1, stop=stop)
    next(gen)
    stop.set()
    rows, sweep = run(gen)
    assert rows == [] and len(sweep.rows) == 1


def test_bad_n_values():
    with pytest.raises(ValueError):
        next(measure_costs([3, 2]))
    with pytest.raises(ValueError):
        next(measure_costs([0, 2]))


def test_time_crossover_ignores_one_disturbed_sample():
    from armdyn.core.lab.complexity import CostRow, CostSweep
    n = [1, 2, 4, 8, 16, 32, 64]
    denoc = [1.0, 1.5, 2.5, 4.5, 8.5, 30.0, 33.0]       # n = 32 disturbed by the machine
    composite = [0.5, 1.0, 2.0, 5.0, 12.0, 25.0, 60.0]
    sweep = CostSweep([CostRow(k, d, c, d, c) for k, d, c in zip(n, denoc, composite)])
    assert sweep.time_crossover().n == 8
    assert sweep.time_crossover(smooth=False).n == 64


# ----------------------------------------------------------------------------------
# The papers' numbers beside ours
# ----------------------------------------------------------------------------------

def test_linear_count():
    c = LinearCount.of(6, (676, 527), (796, 624))
    assert (c.M1, c.M0, c.A1, c.A0) == (120, -44, 97, -55)
    assert c.formulas() == "120n - 44 M, 97n - 55 A" and c.values() == "676 M, 527 A"
    assert LinearCount(6, 117, 0, 83, 3).formulas() == "117n M, 83n + 3 A"


def test_the_three_columns():
    inverse, forward = count_comparison(6)
    # the paper's tables, as printed (seed 000 Tables 1 and 2, n = 6)
    assert (inverse.table.M, inverse.table.A) == (676, 527)
    assert (forward.table.M, forward.table.A) == (871, 797)
    assert inverse.source == "seed 000 Table 1" and forward.source == "seed 000 Table 2"
    # the other two columns are the counts at n = 6 and their slopes from n = 7: every
    # count is linear in n (test_paper_formulation.py, test_op_count.py hold the forms)
    for n, chain in ((6, random_chain(6, 6)), (7, random_chain(7, 7))):
        ki, kf = count_inverse_dynamics(chain), count_forward_dynamics(chain)
        pi, pf = count_ridim(chain), count_rfdsim(chain)
        for column, count in ((inverse.kernels, ki), (forward.kernels, kf),
                              (inverse.formulation, pi), (forward.formulation, pf)):
            assert (column.M1 * n + column.M0, column.A1 * n + column.A0) == (count.M, count.A)
        kin = ki.stages["link_quantities"]
        assert (inverse.kinematics.M1 * n + inverse.kinematics.M0,
                inverse.kinematics.A1 * n + inverse.kinematics.A0) == kin
        bias = forward.bias
        assert bias.M1 * n + bias.M0 == pf.stages["ridim"][0]
        assert bias.A1 * n + bias.A0 == pf.stages["ridim"][1] + n      # and phi = tau - h
    with pytest.raises(ValueError):
        count_comparison(1)


def test_the_notes_say_where_the_columns_differ():
    inverse, forward = count_comparison(6)
    notes = count_notes(inverse, forward)
    assert len(notes) == 4
    kin, bias = inverse.kinematics, forward.bias
    assert notes[0].startswith("Per-call kinematics") and kin.values() in notes[0]
    assert inverse.kernels.minus(kin).values() in notes[1]
    assert inverse.formulation.values() in notes[1] and forward.formulation.values() in notes[1]
    assert inverse.table.formulas() in notes[2]
    assert forward.formulation.minus(bias).formulas() in notes[3]
    assert "phi" in notes[3] and forward.table.formulas() in notes[3]
