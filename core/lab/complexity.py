"""The complexity lab: cost of DeNOC forward dynamics against the composite-body method.

For chains of n = 1 .. several hundred links, two measures of the two forward-dynamics
methods of `core.algorithms.dynamics.forward_dynamics`:

- time per call, measured (`time_per_call`): the public call, as a user makes it;
- operations, counted (`core.lab.op_count`): the multiplications/divisions (M) and
  additions/subtractions (A) our own kernels execute, by running their Python source
  on counting numbers.

`measure_costs` is a generator (one `CostRow` per n, to run in a worker with progress
and cancel); `CostSweep` holds the rows, finds the crossover (`crossover`) and writes
CSV. `SEED_FORMULAS` are the operation counts the papers publish, to plot beside ours.

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
gives 475. Every linear row reproduces its table's n = 6 / n = 12 columns and seed 001's
n* / n+ columns (tests/test_complexity.py); n+ is the first n where both M and A are
below Walker and Orin's (M + A summed gives smaller n for some rows).
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
from .op_count import CountCancelled, OpCount, count_forward_dynamics

__all__ = ["SeedFormula", "SEED_FORMULAS", "seed_formula", "seed_crossover", "random_chain",
           "time_per_call", "kernel_calls", "CostRow", "CostSweep", "Crossover", "crossover", "measure_costs",
           "default_n_values", "costs_csv_text", "write_costs_csv", "CSV_HEADER_LINES"]


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
    multiplications and additions each (n+). None if it never does."""
    first = None
    for n in range(1, n_max + 1):
        Ml, Al = linear.exact(n)
        Mc, Ac = cubic.exact(n)
        wins = Ml < Mc and (Al < Ac or not both)
        if wins and first is None:
            first = n
        elif not wins:
            first = None
    return first


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
    """

    n: int
    time_denoc: float
    time_composite: float
    kernel_denoc: float
    kernel_composite: float
    count_denoc: OpCount | None = None
    count_composite: OpCount | None = None
    progress: float = 0.0


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
        """Counted operations of `method`, kind "M", "A" or "M+A"; NaN where not
        counted, (rows,)."""
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
    ops = (800 * n + 1000 * n + n ** 3 / 3 + 6 * n ** 2) if count else 0.0
    return 4 * budget + 0.5e-6 * ops


def measure_costs(n_values: Sequence[int], *, count: bool = True, count_max_n: int | None = None,
                  budget_s: float = 0.04, repeats: int = 5, seed: int = 0,
                  stop: threading.Event | None = None
                  ) -> Generator[CostRow, None, CostSweep]:
    """Time (and count) forward dynamics by both methods on random all-revolute chains.

    n_values    : chain lengths, ascending
    count       : also count the operations (`core.lab.op_count`, pure Python: the
                  composite method at n = 200 takes a few seconds)
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
        c_d = c_c = None
        counted = count and (count_max_n is None or n <= count_max_n)
        if counted:
            try:
                c_d = count_forward_dynamics(robot, q, qd, tau, "denoc", stop=stop)
                c_c = count_forward_dynamics(robot, q, qd, tau, "composite", stop=stop)
            except CountCancelled:
                break
        done += _work(n, counted, budget_s)
        row = CostRow(n, t_d, t_c, k_d, k_c, c_d, c_c, min(1.0, done / total))
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
              "(core.lab.op_count); seed formulas: seed 000 Table 2, seed 001 Table 2\n")
    parts = []
    for label, c in (("kernel time", sweep.time_crossover()),
                     ("call time", sweep.time_crossover(kernel=False)),
                     ("counted M", sweep.count_crossover("M")),
                     ("counted M+A", sweep.count_crossover("M+A"))):
        parts.append(f"{label}: " + (f"n = {c.n} (est. {c.n_est:.1f})" if c else "none"))
    out.write("# crossover (denoc cheaper from): " + "; ".join(parts) + "\n")
    header = ["n", "denoc call [us]", "composite call [us]", "denoc kernel [us]",
              "composite kernel [us]", "denoc M", "denoc A", "composite M", "composite A"]
    formulas = [seed_formula(k) for k in CSV_FORMULAS]
    for f in formulas:
        header += [f"{f.name} M (formula)", f"{f.name} A (formula)"]
    out.write(",".join(h.replace(",", ";") for h in header) + "\n")
    n = sweep.n
    columns = [n, sweep.times("denoc") * 1e6, sweep.times("composite") * 1e6,
               sweep.times("denoc", True) * 1e6, sweep.times("composite", True) * 1e6,
               sweep.counts("denoc", "M"), sweep.counts("denoc", "A"),
               sweep.counts("composite", "M"), sweep.counts("composite", "A")]
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
