"""The complexity lab: cost of DeNOC forward dynamics against the composite-body method.

For chains of n = 1 .. several hundred links, two measures of the two forward-dynamics
methods of `core.algorithms.dynamics.forward_dynamics`:

- time per call, measured (`time_per_call`): the public call, as a user makes it;
- operations, counted (`core.lab.op_count`): the multiplications/divisions (M) and
  additions/subtractions (A) our own kernels execute, by running their Python source
  on counting numbers; and those of the papers' own formulation of RFDSIM, in link
  frames (`core.lab.paper_formulation`), counted the same way.

`measure_costs` is a generator (one `CostRow` per n, to run in a worker with progress
and cancel); `CostSweep` holds the rows, finds the crossover (`crossover`) and writes
CSV. `SEED_FORMULAS` are the operation counts the papers publish, to plot beside ours.

The papers' numbers against ours (`count_comparison`, `count_notes`): three columns for
RIDIM and RFDSIM on an all-revolute arm, the paper's table, the paper's formulation as
counted here and ArmDyn's compiled kernels as counted, and where they differ: the
kernels' per-call kinematics (every link's inertia turned into the base frame at every
call), the base frame against link frames, operations on literal zeros and ones, and
Table 2's RFDSIM leaving the bias forces phi out.

The seeds' formulas (M, A as functions of n, for all-revolute serial arms):

    seed 000 Table 1 / seed 001 Table 1 (inverse dynamics):
        RIDIM, Saha (1999)           120n - 44          97n - 55      (n = 6: 676 M, 527 A)
        Hollerbach (1980)            412n - 277         320n - 201
        Luh et al. (1980)            150n - 48          131n + 48
        Walker and Orin (1982)       137n - 22          101n - 11
        Khalil et al. (1986)         105n - 92          94n - 86
        Angeles et al. (1989)        105n - 109         90n - 105
        Balafoutis et al. (1988)     93n - 69           81n - 65
    seed 000 Table 2 (forward dynamics):
        RFDSIM, Saha (1999)          201n - 335         193n - 361    (n = 6: 871 M, 797 A)
        Featherstone (1983)          199n - 198         174n - 173
        Walker and Orin (1982)       n^3/6 + 23n^2/2 + 115n/3 - 47
                                     n^3/6 + 7n^2 + 233n/6 - 46
    seed 001 Table 2 (forward dynamics), with n* (M only) and n+ (M and A) crossovers:
        Mohan and Saha (2007)        173n - 128         150n - 133    n* = 10, n+ = 12
        Saha (2003)                  191n - 284         187n - 325    n* = 10, n+ = 14
        Featherstone (1983)          199n - 198         174n - 173    n* = 12, n+ = 14
        Valasek                      226n - 343         206n - 345    n* = 13, n+ = 15
        Brandl et al.                250n - 222         220n - 198    n* = 14, n+ = 16
        Walker and Orin (as implemented by Featherstone): as above

Reading notes: seed 000's OCR of the Walker-Orin row is garbled ("~nt 3 + 11 ~n2 + 38½n
- 47"); seed 001 prints it cleanly, and it gives seed 000's n = 6 and n = 12 columns
(633 M; 2357 M, 1716 A) except seed 000's n = 6 additions, printed 480 where the formula
gives 475. Every linear row reproduces its table's n = 6 / n = 12 columns
(tests/test_complexity.py). Seed 001's n* / n+ columns (`PRINTED_CROSSOVERS`; n+ is the
first n where both M and A are below Walker and Orin's, M + A summed gives smaller n for
some rows) do not all reproduce: three entries contradict the table's own formulas
(`table2_crossovers`, `table2_note`): Valasek's n+ is printed 15, its formulas give 16
(at n = 15 its 2745 A are still above Walker and Orin's 2674); Brandl et al.'s n* is
printed 14, the formulas give 15 (3278 M against 3201), and n+ 16, the formulas give 18
(3322 A against 3050). The printed M and A beside each n are the formulas' values at
that n; only the comparison with Walker and Orin fails. tests/test_complexity.py expects
those three entries not to reproduce.
"""
from __future__ import annotations

import io
import math
import os
import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction as F

import numpy as np

from ..algorithms.dynamics import forward_dynamics
from ..io.atomic import write_atomically
from ..kernels import dynamics
from ..kernels.buffers import compile_and_call
from ..kernels.data import new_workspace
from ..model.arguments import kernel_of
from ..model.parts import JointType, Link
from ..model.robot import Robot
from .op_count import CountCancelled, OpCount, count_forward_dynamics, count_inverse_dynamics
from .paper_formulation import count_rfdsim, count_ridim

__all__ = ["SeedFormula", "SEED_FORMULAS", "seed_formula", "seed_crossover", "random_chain",
           "time_per_call", "kernel_calls", "CostRow", "CostSweep", "Crossover", "crossover", "measure_costs",
           "default_n_values", "costs_csv_text", "write_costs_csv", "CSV_HEADER_LINES",
           "PRINTED_CROSSOVERS", "PrintedCrossover", "table2_crossovers", "table2_note",
           "LinearCount", "CountComparison", "count_comparison", "count_notes"]


# ----------------------------------------------------------------------------------
# The papers' operation counts
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SeedFormula:
    """A published operation count: M(n) and A(n) as polynomials in n.

    key     : short identifier ("saha1999_fd")
    name    : the algorithm as the table names it
    source  : where it is printed ("seed 000 Table 2")
    problem : "forward" or "inverse" dynamics
    order   : "O(n)" or "O(n^3)"
    mul, add: coefficients (c0, c1, c2, c3) of c0 + c1 n + c2 n^2 + c3 n^3
    """

    key: str
    name: str
    source: str
    problem: str
    order: str
    mul: tuple[F, F, F, F]
    add: tuple[F, F, F, F]

    @staticmethod
    def _eval(c: tuple[F, ...], n) -> np.ndarray | float:
        n = np.asarray(n, dtype=float)
        value = float(c[0]) + n * (float(c[1]) + n * (float(c[2]) + n * float(c[3])))
        return value if value.ndim else float(value)

    def M(self, n):
        """Multiplications/divisions for n links (array or float)."""
        return self._eval(self.mul, n)

    def A(self, n):
        """Additions/subtractions for n links (array or float)."""
        return self._eval(self.add, n)

    def exact(self, n: int) -> tuple[F, F]:
        """(M, A) at integer n, exactly."""
        return tuple(sum(c * n ** i for i, c in enumerate(p)) for p in (self.mul, self.add))


def _lin(a: int, b: int) -> tuple[F, F, F, F]:
    return (F(b), F(a), F(0), F(0))


_WO_M = (F(-47), F(115, 3), F(23, 2), F(1, 6))
_WO_A = (F(-46), F(233, 6), F(7), F(1, 6))

#: Every row of the seeds' complexity tables (module docstring).
SEED_FORMULAS: tuple[SeedFormula, ...] = (
    # inverse dynamics, seed 000 Table 1 (= seed 001 Table 1)
    SeedFormula("saha1999_id", "RIDIM, Saha (1999)", "seed 000 Table 1", "inverse", "O(n)",
                _lin(120, -44), _lin(97, -55)),
    SeedFormula("hollerbach1980", "Hollerbach (1980)", "seed 000 Table 1", "inverse", "O(n)",
                _lin(412, -277), _lin(320, -201)),
    SeedFormula("luh1980", "Luh et al. (1980)", "seed 000 Table 1", "inverse", "O(n)",
                _lin(150, -48), _lin(131, 48)),
    SeedFormula("walker_orin1982_id", "Walker and Orin (1982)", "seed 000 Table 1", "inverse",
                "O(n)", _lin(137, -22), _lin(101, -11)),
    SeedFormula("khalil1986", "Khalil et al. (1986)", "seed 000 Table 1", "inverse", "O(n)",
                _lin(105, -92), _lin(94, -86)),
    SeedFormula("angeles1989", "Angeles et al. (1989)", "seed 000 Table 1", "inverse", "O(n)",
                _lin(105, -109), _lin(90, -105)),
    SeedFormula("balafoutis1988", "Balafoutis et al. (1988)", "seed 000 Table 1", "inverse",
                "O(n)", _lin(93, -69), _lin(81, -65)),
    # forward dynamics, seed 000 Table 2
    SeedFormula("saha1999_fd", "RFDSIM, Saha (1999)", "seed 000 Table 2", "forward", "O(n)",
                _lin(201, -335), _lin(193, -361)),
    SeedFormula("featherstone1983", "Featherstone (1983)", "seed 000 Table 2, seed 001 Table 2",
                "forward", "O(n)", _lin(199, -198), _lin(174, -173)),
    SeedFormula("walker_orin1982", "Walker and Orin (1982)", "seed 000 Table 2, seed 001 Table 2",
                "forward", "O(n^3)", _WO_M, _WO_A),
    # forward dynamics, seed 001 Table 2
    SeedFormula("mohan_saha2007", "Mohan and Saha (2007)", "seed 001 Table 2", "forward",
                "O(n)", _lin(173, -128), _lin(150, -133)),
    SeedFormula("saha2003", "Saha (2003)", "seed 001 Table 2", "forward", "O(n)",
                _lin(191, -284), _lin(187, -325)),
    SeedFormula("valasek", "Valasek", "seed 001 Table 2", "forward", "O(n)",
                _lin(226, -343), _lin(206, -345)),
    SeedFormula("brandl", "Brandl et al.", "seed 001 Table 2", "forward", "O(n)",
                _lin(250, -222), _lin(220, -198)),
)


def seed_formula(key: str) -> SeedFormula:
    """The formula of `SEED_FORMULAS` with this key."""
    for f in SEED_FORMULAS:
        if f.key == key:
            return f
    raise KeyError(key)


def seed_crossover(linear: SeedFormula, cubic: SeedFormula, both: bool = False,
                   n_max: int = 10_000) -> int | None:
    """The smallest n from which `linear` needs fewer operations than `cubic` at every
    larger n (up to n_max): multiplications only (seed 001's n*), or with `both`
    multiplications and additions each (n+). None if it never does. Exact: both
    formulas times the common denominator of their coefficients, in integers."""
    n = np.arange(1, n_max + 1, dtype=np.int64)

    def scaled(p: tuple[F, ...], q: tuple[F, ...]) -> list[np.ndarray]:
        d = math.lcm(*(c.denominator for c in p + q))
        return [sum(int(c * d) * n ** i for i, c in enumerate(poly)) for poly in (p, q)]

    Ml, Mc = scaled(linear.mul, cubic.mul)
    wins = Ml < Mc
    if both:
        Al, Ac = scaled(linear.add, cubic.add)
        wins &= Al < Ac
    if not wins[-1]:
        return None
    losing = np.flatnonzero(~wins)
    return int(n[losing[-1]]) + 1 if losing.size else 1


#: Seed 001 Table 2's n* (multiplications only) and n+ (multiplications and additions
#: each) columns as printed: from which n each O(n) algorithm needs fewer operations
#: than Walker and Orin's O(n^3) one.
PRINTED_CROSSOVERS: dict[str, tuple[int, int]] = {
    "mohan_saha2007": (10, 12), "saha2003": (10, 14), "featherstone1983": (12, 14),
    "valasek": (13, 15), "brandl": (14, 16)}


@dataclass(frozen=True)
class PrintedCrossover:
    """One row of seed 001 Table 2's crossover columns, printed and from its formulas.

    key, name : the row (`SEED_FORMULAS`)
    printed_star, formula_star : n* as printed and from the formulas (`seed_crossover`)
    printed_plus, formula_plus : n+ likewise
    """

    key: str
    name: str
    printed_star: int
    formula_star: int | None
    printed_plus: int
    formula_plus: int | None

    @property
    def agrees(self) -> bool:
        return (self.printed_star, self.printed_plus) == (self.formula_star, self.formula_plus)


def table2_crossovers() -> list[PrintedCrossover]:
    """Seed 001 Table 2's n* and n+ columns beside what the table's own formulas give
    (against Walker and Orin, `seed_crossover`)."""
    wo = seed_formula("walker_orin1982")
    out = []
    for key, (star, plus) in PRINTED_CROSSOVERS.items():
        f = seed_formula(key)
        out.append(PrintedCrossover(key, f.name, star, seed_crossover(f, wo), plus,
                                    seed_crossover(f, wo, both=True)))
    return out


def table2_note() -> str:
    """One sentence for the Lab: which of seed 001 Table 2's n* / n+ entries contradict
    the table's own formulas."""
    wrong, entries = [], 0
    for row in table2_crossovers():
        entries += 2
        for label, printed, formula in (("n*", row.printed_star, row.formula_star),
                                        ("n+", row.printed_plus, row.formula_plus)):
            if printed != formula:
                wrong.append(f"{row.name.split(' (')[0]} {label} {printed} "
                             f"(its formulas: {formula})")
    if not wrong:
        return "Seed 001 Table 2's n* and n+ columns follow from its formulas."
    return (f"Seed 001 Table 2's crossover columns: {len(wrong)} entries of n* (from which "
            f"n the M, and n+ the M and the A each, are below Walker and Orin's) do not "
            f"follow from the table's own formulas: "
            + "; ".join(wrong) + f". The other {entries - len(wrong)} entries reproduce.")


# ----------------------------------------------------------------------------------
# Test arms and timing
# ----------------------------------------------------------------------------------

def random_chain(n: int, seed: int = 0, prismatic_every: int = 0) -> Robot:
    """A random serial arm of n links: DH a, b in [0, 0.2] m, alpha in [-pi, pi], masses in
    [0.5, 2] kg, mass centres within 0.1 m, principal moments in [0.05, 0.1] kg m^2.
    All joints revolute (as the seeds' tables assume), or every `prismatic_every`-th
    joint prismatic (from the third)."""
    rng = np.random.default_rng(seed)
    links = []
    for k in range(n):
        prismatic = prismatic_every > 0 and k % prismatic_every == 2 % prismatic_every
        principal = rng.uniform(0.05, 0.1, 3)  # any three in [0.05, 0.1] are a valid tensor
        links.append(Link(JointType.PRISMATIC if prismatic else JointType.REVOLUTE,
                          a=float(rng.uniform(0, 0.2)), b=float(rng.uniform(0, 0.2)),
                          alpha=float(rng.uniform(-np.pi, np.pi)), theta=0.0,
                          mass=float(rng.uniform(0.5, 2)),
                          com=tuple(float(x) for x in rng.uniform(-0.1, 0.1, 3)),
                          inertia=(*(float(x) for x in principal), 0.0, 0.0, 0.0)))
    return Robot(f"random chain {n}", tuple(links))


def time_per_call(*fns: Callable[[], object], budget_s: float = 0.05, repeats: int = 5
                  ) -> list[float]:
    """Best mean wall time of one call of each fn, s: each is called once (warm-up, and
    to size its batches), then `repeats` rounds run one batch of each fn in turn (about
    budget_s / repeats per batch), so that all see the same load of a shared machine;
    the best round of each is kept."""
    calls = []
    for fn in fns:
        t0 = time.perf_counter()
        fn()
        single = max(time.perf_counter() - t0, 1e-7)
        calls.append(max(1, int(budget_s / repeats / single)))
    best = [math.inf] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(calls[i]):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / calls[i])
    return best


def kernel_calls(robot, q: np.ndarray, qd: np.ndarray, tau: np.ndarray
                 ) -> tuple[Callable[[], object], Callable[[], object]]:
    """(denoc, composite): calls of the two methods' compiled entry kernels alone, on
    arguments prepared once (no argument checks, no allocation): the kernels that
    `forward_dynamics` runs, `core.kernels.dynamics.forward_dynamics_state_kernel` and
    `forward_dynamics_composite_kernel` (the ones `core.lab.op_count` counts)."""
    k = kernel_of(robot)
    q, qd, tau = (np.ascontiguousarray(x, dtype=float) for x in (q, qd, tau))
    ws_d, ws_c = new_workspace(k), new_workspace(k)
    qdd_d, qdd_c = np.empty(k.n), np.empty(k.n)
    f_ext = np.zeros((1, k.n, 6))
    GIM = np.empty((k.n, k.n))
    one, composite = dynamics.forward_dynamics_state_kernel, dynamics.forward_dynamics_composite_kernel
    compile_and_call(one, k.F, k.I, ws_d, q, qd, tau, qdd_d)
    F_, I_ = k.F, k.I
    return (lambda: one(F_, I_, ws_d, q, qd, tau, qdd_d),
            lambda: composite(F_, I_, ws_c, q, qd, tau, f_ext, GIM, qdd_c))


# ----------------------------------------------------------------------------------
# The sweep
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class CostRow:
    """One n of a sweep.

    n               : links of the random chain
    time_denoc      : s per forward_dynamics(method="denoc") call (the public call)
    time_composite  : s per forward_dynamics(method="composite") call
    kernel_denoc, kernel_composite : s per call of the method's compiled entry kernel
                      alone (`kernel_calls`): the algorithms without the Python-side
                      argument handling, which differs between the two calls
    count_denoc, count_composite : the counted operations (`core.lab.op_count.OpCount`), or
                      None where not counted
    progress        : fraction of the sweep's estimated work done after this row
    count_paper     : the counted operations of the papers' RFDSIM in link frames
                      (`core.lab.paper_formulation.count_rfdsim`), or None
    """

    n: int
    time_denoc: float
    time_composite: float
    kernel_denoc: float
    kernel_composite: float
    count_denoc: OpCount | None = None
    count_composite: OpCount | None = None
    progress: float = 0.0
    count_paper: OpCount | None = None


@dataclass(frozen=True)
class Crossover:
    """Where the O(n) method becomes the cheaper one.

    n     : the first n of the sweep from which it is cheaper at every larger n
    n_est : the crossing estimated between that n and the one before (log-log
            interpolation of the cost ratio); = n when it is cheaper from the start
    """

    n: int
    n_est: float


def crossover(n: Sequence[float], linear: Sequence[float], cubic: Sequence[float]
              ) -> Crossover | None:
    """The crossover of two cost curves over n (ascending): the first n from which
    `linear` < `cubic` at every later n; NaN entries (not measured) are skipped. None if
    the last measured n still has linear >= cubic (or nothing is measured)."""
    n = np.asarray(n, dtype=float)
    lin = np.asarray(linear, dtype=float)
    cub = np.asarray(cubic, dtype=float)
    ok = np.isfinite(lin) & np.isfinite(cub) & (lin > 0) & (cub > 0)
    n, lin, cub = n[ok], lin[ok], cub[ok]
    if n.size == 0 or not lin[-1] < cub[-1]:
        return None
    i = n.size - 1
    while i > 0 and lin[i - 1] < cub[i - 1]:
        i -= 1
    if i == 0:
        return Crossover(int(n[0]), float(n[0]))
    # log(lin / cub) changes sign between n[i-1] and n[i]
    r0, r1 = math.log(lin[i - 1] / cub[i - 1]), math.log(lin[i] / cub[i])
    x0, x1 = math.log(n[i - 1]), math.log(n[i])
    x = x0 + (x1 - x0) * r0 / (r0 - r1) if r0 != r1 else x1
    return Crossover(int(n[i]), float(math.exp(x)))


@dataclass
class CostSweep:
    """The rows of a sweep, in ascending n, and what is read from them."""

    rows: list[CostRow] = field(default_factory=list)

    @property
    def n(self) -> np.ndarray:
        return np.array([r.n for r in self.rows], dtype=float)

    def times(self, method: str, kernel: bool = False) -> np.ndarray:
        """Seconds per call of `method` ("denoc" / "composite"), (rows,): the public
        call, or with `kernel` its compiled entry kernel alone."""
        prefix = "kernel" if kernel else "time"
        return np.array([getattr(r, f"{prefix}_{method}") for r in self.rows], dtype=float)

    def counts(self, method: str, kind: str = "M") -> np.ndarray:
        """Counted operations of `method` ("denoc", "composite" or "paper", the papers'
        RFDSIM in link frames), kind "M", "A" or "M+A"; NaN where not counted, (rows,)."""
        out = np.full(len(self.rows), np.nan)
        for i, r in enumerate(self.rows):
            c = getattr(r, f"count_{method}")
            if c is not None:
                out[i] = {"M": c.M, "A": c.A, "M+A": c.total}[kind]
        return out

    def time_crossover(self, kernel: bool = True, smooth: bool = True) -> Crossover | None:
        """Where denoc's measured time per call drops below composite's for good: of the
        compiled kernels (default) or of the public calls. With `smooth`, the ratio of
        the two times is first replaced by the median of it and its two neighbours in n,
        so that one sample disturbed by the machine's load does not move the crossover."""
        d, c = self.times("denoc", kernel), self.times("composite", kernel)
        if smooth and len(d) >= 3:
            ratio = d / c
            padded = np.concatenate([ratio[:1], ratio, ratio[-1:]])
            ratio = np.median(np.stack([padded[:-2], padded[1:-1], padded[2:]]), axis=0)
            return crossover(self.n, ratio, np.ones_like(ratio))
        return crossover(self.n, d, c)

    def count_crossover(self, kind: str = "M") -> Crossover | None:
        """Where denoc's counted operations (`kind`) drop below composite's for good."""
        return crossover(self.n, self.counts("denoc", kind), self.counts("composite", kind))


def default_n_values(n_max: int = 200) -> list[int]:
    """n = 1 .. 16 one by one (the crossovers lie there), then steps of about 25 % to
    n_max (included)."""
    values = list(range(1, min(16, n_max) + 1))
    x = 16.0
    while True:
        x *= 1.25
        n = int(round(x))
        if n >= n_max:
            break
        if n > values[-1]:
            values.append(n)
    if values[-1] != n_max and n_max > 0:
        values.append(n_max)
    return values


def _work(n: int, count: bool, budget: float) -> float:
    """A rough cost of one sweep row, s (timing budget + counting at ~0.5 us/op)."""
    ops = (800 * n + 1000 * n + 600 * n + n ** 3 / 3 + 6 * n ** 2) if count else 0.0
    return 4 * budget + 0.5e-6 * ops


def measure_costs(n_values: Sequence[int], *, count: bool = True, count_max_n: int | None = None,
                  budget_s: float = 0.04, repeats: int = 5, seed: int = 0,
                  stop: threading.Event | None = None
                  ) -> Generator[CostRow, None, CostSweep]:
    """Time (and count) forward dynamics by both methods on random all-revolute chains.

    n_values    : chain lengths, ascending
    count       : also count the operations (`core.lab.op_count`, pure Python: the
                  composite method at n = 200 takes a few seconds), and those of the
                  papers' RFDSIM in link frames (`core.lab.paper_formulation`)
    count_max_n : count only up to this n (None: all)
    budget_s, repeats : timing of each of the four calls per n (`time_per_call`)
    seed        : of the random chains (chain n uses seed + n) and states
    stop        : an event that, when set, ends the sweep at the next row (or inside
                  a count, which is then dropped); the rows so far are returned
    Yields one CostRow per n; returns the CostSweep.
    """
    n_values = [int(n) for n in n_values]
    if any(n < 1 for n in n_values) or sorted(n_values) != n_values:
        raise ValueError("n_values must be ascending positive integers")
    total = sum(_work(n, count and (count_max_n is None or n <= count_max_n), budget_s)
                for n in n_values) or 1.0
    done = 0.0
    sweep = CostSweep()
    for n in n_values:
        if stop is not None and stop.is_set():
            break
        robot = random_chain(n, seed + n)
        rng = np.random.default_rng(seed + n)
        q, qd, tau = rng.uniform(-1, 1, (3, n))
        kd, kc = kernel_calls(robot, q, qd, tau)
        t_d, t_c, k_d, k_c = time_per_call(
            lambda: forward_dynamics(robot, q, qd, tau, method="denoc"),
            lambda: forward_dynamics(robot, q, qd, tau, method="composite"), kd, kc,
            budget_s=budget_s, repeats=repeats)
        c_d = c_c = c_p = None
        counted = count and (count_max_n is None or n <= count_max_n)
        if counted:
            try:
                c_d = count_forward_dynamics(robot, q, qd, tau, "denoc", stop=stop)
                c_c = count_forward_dynamics(robot, q, qd, tau, "composite", stop=stop)
                c_p = count_rfdsim(robot, q, qd, tau, stop=stop)
            except CountCancelled:
                break
        done += _work(n, counted, budget_s)
        row = CostRow(n, t_d, t_c, k_d, k_c, c_d, c_c, min(1.0, done / total), c_p)
        sweep.rows.append(row)
        yield row
    return sweep


# ----------------------------------------------------------------------------------
# CSV
# ----------------------------------------------------------------------------------

#: Seed formulas written beside the sweep in the CSV (and drawn by the GUI).
CSV_FORMULAS = ("saha1999_fd", "mohan_saha2007", "featherstone1983", "walker_orin1982")


def costs_csv_text(sweep: CostSweep) -> str:
    """The sweep as CSV: '#' comment lines (what was measured, the crossovers), a
    header row naming every column with its unit, one row per n."""
    out = io.StringIO()
    out.write("# ArmDyn complexity lab: forward dynamics of random all-revolute chains, "
              "denoc (RFDSIM, UDU^T) vs composite (composite-body GIM + Cholesky)\n")
    out.write("# time: best mean wall time of one forward_dynamics call (call) and of its "
              "compiled entry kernel alone (kernel); M, A: "
              "multiplications/divisions and additions/subtractions counted in our kernels "
              "(core.lab.op_count), and in the papers' RFDSIM in link frames (paper "
              "formulation, core.lab.paper_formulation); seed formulas: seed 000 Table 2, "
              "seed 001 Table 2\n")
    parts = []
    for label, c in (("kernel time", sweep.time_crossover()),
                     ("call time", sweep.time_crossover(kernel=False)),
                     ("counted M", sweep.count_crossover("M")),
                     ("counted M+A", sweep.count_crossover("M+A"))):
        parts.append(f"{label}: " + (f"n = {c.n} (est. {c.n_est:.1f})" if c else "none"))
    out.write("# crossover (denoc cheaper from): " + "; ".join(parts) + "\n")
    header = ["n", "denoc call [us]", "composite call [us]", "denoc kernel [us]",
              "composite kernel [us]", "denoc M", "denoc A", "composite M", "composite A",
              "paper formulation M", "paper formulation A"]
    formulas = [seed_formula(k) for k in CSV_FORMULAS]
    for f in formulas:
        header += [f"{f.name} M (formula)", f"{f.name} A (formula)"]
    out.write(",".join(h.replace(",", ";") for h in header) + "\n")
    n = sweep.n
    columns = [n, sweep.times("denoc") * 1e6, sweep.times("composite") * 1e6,
               sweep.times("denoc", True) * 1e6, sweep.times("composite", True) * 1e6,
               sweep.counts("denoc", "M"), sweep.counts("denoc", "A"),
               sweep.counts("composite", "M"), sweep.counts("composite", "A"),
               sweep.counts("paper", "M"), sweep.counts("paper", "A")]
    for f in formulas:
        columns += [np.asarray(f.M(n)), np.asarray(f.A(n))]
    if len(n):
        np.savetxt(out, np.column_stack(columns), delimiter=",", fmt="%.10g")
    return out.getvalue()


#: Lines before the first data row of `costs_csv_text` (three comments and the header).
CSV_HEADER_LINES = 4


def write_costs_csv(sweep: CostSweep, path: str | os.PathLike) -> None:
    """Save the sweep as CSV (atomically, `core.io.atomic`); read back with
    numpy.loadtxt(path, delimiter=',', skiprows=CSV_HEADER_LINES) (NaN where not counted)."""
    write_atomically(path, costs_csv_text(sweep).encode("utf-8"))


# ----------------------------------------------------------------------------------
# The papers' numbers against ours: three columns
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class LinearCount:
    """An operation count linear in n: M = M1 n + M0, A = A1 n + A0, and its values at n."""

    n: int
    M1: int
    M0: int
    A1: int
    A0: int

    @property
    def M(self) -> int:
        return self.M1 * self.n + self.M0

    @property
    def A(self) -> int:
        return self.A1 * self.n + self.A0

    @staticmethod
    def _form(c1: int, c0: int) -> str:
        return f"{c1}n {'-' if c0 < 0 else '+'} {abs(c0)}" if c0 else f"{c1}n"

    def formulas(self) -> str:
        """"120n - 44 M, 97n - 55 A"."""
        return f"{self._form(self.M1, self.M0)} M, {self._form(self.A1, self.A0)} A"

    def values(self) -> str:
        """"676 M, 527 A"."""
        return f"{self.M} M, {self.A} A"

    def minus(self, other: "LinearCount") -> "LinearCount":
        return LinearCount(self.n, self.M1 - other.M1, self.M0 - other.M0,
                           self.A1 - other.A1, self.A0 - other.A0)

    @staticmethod
    def of(n: int, at_n: tuple[int, int], at_n1: tuple[int, int]) -> "LinearCount":
        """The line through the counts (M, A) at n and n + 1."""
        M1, A1 = at_n1[0] - at_n[0], at_n1[1] - at_n[1]
        return LinearCount(n, M1, at_n[0] - M1 * n, A1, at_n[1] - A1 * n)


@dataclass(frozen=True)
class CountComparison:
    """One algorithm's operations on an all-revolute serial arm, three ways.

    problem     : "inverse" (RIDIM) or "forward" (RFDSIM)
    source      : where the paper prints its count ("seed 000 Table 1")
    table       : the paper's printed formula
    formulation : the paper's formulation in link frames as counted here
                  (`core.lab.paper_formulation`)
    kernels     : ArmDyn's compiled kernels as counted (`core.lab.op_count`)
    kinematics  : of `kernels`, the per-call kinematics (`link_quantities`: frames,
                  inertias turned into the base frame)
    bias        : forward only: of `formulation`, the bias forces phi = tau - RIDIM(q,
                  q', 0) (else None)
    """

    problem: str
    source: str
    table: LinearCount
    formulation: LinearCount
    kernels: LinearCount
    kinematics: LinearCount
    bias: LinearCount | None = None


def _counts(n: int, seed: int) -> dict[str, tuple[int, int]]:
    robot = random_chain(n, seed + n)
    ki = count_inverse_dynamics(robot, seed=seed)
    kf = count_forward_dynamics(robot, seed=seed)
    pi = count_ridim(robot, seed=seed)
    pf = count_rfdsim(robot, seed=seed)
    bias = tuple(x + y for x, y in zip(pf.stages["ridim"], pf.stages["(own)"]))
    return {"ki": (ki.M, ki.A), "kf": (kf.M, kf.A), "pi": (pi.M, pi.A), "pf": (pf.M, pf.A),
            "kin": ki.stages["link_quantities"], "bias": bias}


def count_comparison(n: int = 6, seed: int = 0) -> tuple[CountComparison, CountComparison]:
    """(inverse, forward): RIDIM and RFDSIM counted on random all-revolute chains of n and
    n + 1 links (the counts are linear in n for n >= 2; they do not depend on the arm's
    numbers), beside seed 000's Tables 1 and 2. A few milliseconds."""
    if n < 2:
        raise ValueError("n must be at least 2 (the counts are linear from there)")
    a, b = _counts(n, seed), _counts(n + 1, seed)
    line = {k: LinearCount.of(n, a[k], b[k]) for k in a}

    def table(key: str) -> LinearCount:
        f = seed_formula(key)
        return LinearCount(n, int(f.mul[1]), int(f.mul[0]), int(f.add[1]), int(f.add[0]))

    return (CountComparison("inverse", "seed 000 Table 1", table("saha1999_id"), line["pi"],
                            line["ki"], line["kin"]),
            CountComparison("forward", "seed 000 Table 2", table("saha1999_fd"), line["pf"],
                            line["kf"], line["kin"], line["bias"]))


def count_notes(inverse: CountComparison, forward: CountComparison) -> list[str]:
    """Where the three columns differ, in sentences with the numbers (for the Lab)."""
    n = inverse.table.n
    kin = inverse.kinematics
    ki_bare, kf_bare = inverse.kernels.minus(kin), forward.kernels.minus(kin)
    fd_bare = forward.formulation.minus(forward.bias)
    return [
        f"Per-call kinematics: ArmDyn's kernels turn every link's inertia and mass centre "
        f"into the base frame at every call (link_quantities: {kin.values()} at n = {n}, "
        f"{kin.formulas()}). The papers' recursions read each link's mass matrix as a "
        f"constant of its own frame and leave the sines and cosines out.",
        f"Base frame against link frames: without the kinematics our kernels count "
        f"{ki_bare.values()} for RIDIM and {kf_bare.values()} for RFDSIM, the papers' "
        f"link-frame formulation {inverse.formulation.values()} and "
        f"{forward.formulation.values()}. The base frame needs no rotation between "
        f"frames (8 M 4 A per 3-vector in link frames), the inertia wrenches use the "
        f"blocks of the extended mass matrix (eq. 6) and the articulated-body inertias "
        f"their symmetry (lower triangles, no shift where two joints share their point); "
        f"the rest multiplies full 6-vectors and 6x3 blocks, zeros and ones included, as "
        f"compiled code does with literal 0.0 and 1.0 (no fast math), where the "
        f"link-frame code is written around the zeros of p_i, r_i and M_i.",
        f"RIDIM: the paper's {inverse.table.formulas()} ({inverse.table.values()}) "
        f"against {inverse.formulation.formulas()} counted here: the table's algorithm "
        f"takes the twists at the mass centres C_i (seed 000), this one at O_i (seed 001), "
        f"and the paper does not show its count line by line, so the "
        f"{inverse.table.M - inverse.formulation.M} M and "
        f"{inverse.table.A - inverse.formulation.A} A between them at n = {n} are not "
        f"traced.",
        f"RFDSIM: the paper's {forward.table.formulas()} ({forward.table.values()}) "
        f"costs per link about what the formulation costs without the bias forces phi, "
        f"{fd_bare.formulas()} ({fd_bare.values()}), not with them "
        f"({forward.formulation.formulas()}): the paper lists phi among the inputs "
        f"(“to be computed from any recursive inverse dynamics scheme”), so its "
        f"table most likely leaves that RIDIM call ({forward.bias.formulas()}) out.",
    ]
