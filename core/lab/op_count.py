"""Operation counts of our own kernels, by running their Python source on counting numbers.

The compiled kernels (`core.kernels.denoc`, `core.algorithms.dynamics`) are numba dispatchers; each keeps
the Python function it was compiled from (`dispatcher.py_func`). This module runs
those very functions in plain Python, on arrays of `Counted` numbers: a float that
tallies every multiplication, division, addition, subtraction, negation and
comparison done on it. So the counts are those of the code the compiled kernels
execute, branch for branch and loop for loop, not numbers typed in.

How a kernel is run here (`Counter.call`):

- its Python function is rebuilt (`types.FunctionType`) on the same code with its own
  globals: every numba dispatcher it calls is replaced by that dispatcher's rebuilt
  Python function (recursively, memoised), `numpy` / `math` by shims whose cos, sin,
  sqrt count a "function" call (so do a joint's cos and sin from `core.kernels.trig`),
  a `core` module reached by attribute (`denoc.x`) by a
  proxy that rebuilds its kernels on access. The kernel modules are never edited or
  patched: only copies of their functions see the substitutions.
- the float literals of the code (`0.0`, `1.0`, `2.0`, `1e-13`) become `Counted`
  constants (in the copied code object's constants), so that an operation between two
  literals (1.0 * 0.0 in a root joint's frame) is counted as the compiled code does it.
- a plain Python function of a module named in `Counter(python_modules=...)` is rebuilt
  the same way when a counted function calls it (`core.lab.paper_formulation`, the
  papers' recursions in pure Python, is counted so); other Python functions run as they
  are.
- `model_views(F, I)` and `data_views(mv, ws)` (numba intrinsics that cut flat
  buffers, unusable from Python) are replaced by functions returning the model's
  fields (`KernelModel.views`) and a workspace's fields (`data_of`), with every float
  array turned into an object array of `Counted` values; integer arrays (parent,
  order, kind) stay integers, so index arithmetic is not counted.

What is counted: M = multiplications + divisions, A = additions + subtractions, as in
seed 000 Tables 1-2 and seed 001 Table 2 ("M: Multiplication/Division; A: Addition/
Subtraction"). Negations, comparisons (the pivot checks, max/abs) and elementary
functions (cos, sin, sqrt) are tallied apart. Every operation the code executes is
counted, including those with a literal 0.0 or 1.0 that a hand count would skip
(compiled code does them too: numba does not assume fast math).

Counting runs in the calling thread, holding a lock (the tally is global); it is
pure Python and slow: about a microsecond per operation (a 6-joint forward dynamics
is a few thousand operations; the O(n^3) composite method at n = 200 about 4 million).
"""
from __future__ import annotations

import math
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..kernels import data, dynamics, layout
from ..kernels.data import data_of, new_workspace
from ..kernels.trig import cos_sin, cos_sin_rows
from ..model.arguments import kernel_of

__all__ = ["Counted", "Tally", "OpCount", "Counter", "CountCancelled", "count_forward_dynamics",
           "count_inverse_dynamics", "counting", "METHODS", "STAGES"]

#: The algorithms counted: forward dynamics "denoc" (RFDSIM, UDU^T) and "composite"
#: (composite-body GIM + Cholesky), and inverse dynamics "ridim".
METHODS = ("denoc", "composite", "ridim")

#: The stages reported for each algorithm: kernels of `core.kernels.denoc` / `core.algorithms.dynamics`
#: that its entry kernel calls (the rest of the entry's lines is "(own)").
STAGES = {
    "denoc": ("link_quantities", "inverse_dynamics_kernel", "articulated_inertias",
              "udu_solve"),
    "composite": ("link_quantities", "inverse_dynamics_kernel", "composite_inertias",
                  "gim_from_composite", "cholesky_solve"),
    "ridim": ("link_quantities", "inverse_dynamics_kernel"),
}


class CountCancelled(Exception):
    """A count was stopped (its `Counter`'s stop event was set)."""


class Tally:
    """Operation counters (integers)."""

    __slots__ = ("mul", "div", "add", "sub", "neg", "cmp", "fn")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.mul = self.div = self.add = self.sub = self.neg = self.cmp = self.fn = 0

    def snapshot(self) -> tuple[int, ...]:
        return (self.mul, self.div, self.add, self.sub, self.neg, self.cmp, self.fn)


#: The one tally the counting numbers add to (guarded by _LOCK during a count).
_TALLY = Tally()
_LOCK = threading.RLock()


def _value(x) -> float:
    return x.v if type(x) is Counted else x


class Counted:
    """A float that counts the arithmetic done on it (into the module's tally).

    Counted op Counted, Counted op float and float op Counted each count one
    operation; the result is a new Counted. Comparisons return bools.
    """

    __slots__ = ("v",)

    def __init__(self, v: float) -> None:
        self.v = float(v)

    def __repr__(self) -> str:
        return f"Counted({self.v!r})"

    def __float__(self) -> float:
        return self.v

    # --- additions / subtractions ---
    def __add__(self, o):
        _TALLY.add += 1
        return Counted(self.v + _value(o))

    def __radd__(self, o):
        _TALLY.add += 1
        return Counted(_value(o) + self.v)

    def __sub__(self, o):
        _TALLY.sub += 1
        return Counted(self.v - _value(o))

    def __rsub__(self, o):
        _TALLY.sub += 1
        return Counted(_value(o) - self.v)

    # --- multiplications / divisions ---
    def __mul__(self, o):
        _TALLY.mul += 1
        return Counted(self.v * _value(o))

    def __rmul__(self, o):
        _TALLY.mul += 1
        return Counted(_value(o) * self.v)

    def __truediv__(self, o):
        _TALLY.div += 1
        return Counted(self.v / _value(o))

    def __rtruediv__(self, o):
        _TALLY.div += 1
        return Counted(_value(o) / self.v)

    # --- sign ---
    def __neg__(self):
        _TALLY.neg += 1
        return Counted(-self.v)

    def __pos__(self):
        return self

    def __abs__(self):
        return Counted(abs(self.v))  # a sign-bit clear: not arithmetic

    # --- comparisons ---
    def __lt__(self, o):
        _TALLY.cmp += 1
        return self.v < _value(o)

    def __le__(self, o):
        _TALLY.cmp += 1
        return self.v <= _value(o)

    def __gt__(self, o):
        _TALLY.cmp += 1
        return self.v > _value(o)

    def __ge__(self, o):
        _TALLY.cmp += 1
        return self.v >= _value(o)

    def __eq__(self, o):
        _TALLY.cmp += 1
        return self.v == _value(o)

    def __ne__(self, o):
        _TALLY.cmp += 1
        return self.v != _value(o)

    __hash__ = None  # type: ignore[assignment]


def _counted_function(f: Callable[[float], float], stop: threading.Event | None) -> Callable:
    def g(x):
        if stop is not None and stop.is_set():
            raise CountCancelled
        _TALLY.fn += 1
        return Counted(f(_value(x)))
    return g


class _Shim(types.SimpleNamespace):
    """numpy / math for the counted kernels: cos, sin, sqrt count one function call each;
    math.isfinite reads the value; anything else is the real module's."""

    def __init__(self, module, stop: threading.Event | None = None) -> None:
        super().__init__(cos=_counted_function(math.cos, stop),
                         sin=_counted_function(math.sin, stop),
                         sqrt=_counted_function(math.sqrt, stop),
                         isfinite=lambda x: math.isfinite(_value(x)))
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)


def counted_array(a) -> np.ndarray:
    """A float array as an object array of `Counted` values (same shape)."""
    a = np.asarray(a, dtype=float)
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    for i, x in enumerate(a.reshape(-1)):
        flat[i] = Counted(x)
    return out


def plain_array(a: np.ndarray) -> np.ndarray:
    """An object array of `Counted` (or float) values as a float array."""
    return np.vectorize(_value, otypes=[float])(a) if a.size else np.zeros(a.shape)


def _code_with_counted_constants(code: types.CodeType) -> types.CodeType:
    """`code` with its float literals (and those of nested code) as `Counted` constants."""
    consts = []
    for c in code.co_consts:
        if type(c) is float:
            c = Counted(c)
        elif isinstance(c, types.CodeType):
            c = _code_with_counted_constants(c)
        consts.append(c)
    return code.replace(co_consts=tuple(consts))


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def _is_kernel(x) -> bool:
    """A numba dispatcher (compiled function with its Python source function)."""
    return hasattr(x, "py_func") and type(x).__module__.startswith("numba")


@dataclass(frozen=True)
class OpCount:
    """Operations one call of an algorithm executes (a `Counter.call` of its entry kernel).

    method : "denoc", "composite" or "ridim" (our kernels); "paper-ridim",
             "paper-rfdsim" (the papers' recursions, `core.lab.paper_formulation`)
    n      : joints
    mul, div, add, sub, neg, cmp, fn : multiplications, divisions, additions,
             subtractions, negations, comparisons, elementary functions (cos, sin, sqrt)
    stages : {kernel name: (M, A)} for the stages of the algorithm (`STAGES`),
             inclusive of what they call, and "(own)" for the rest of the call
    result : the call's output as floats, (n,): qdd (forward) or tau (inverse)
    """

    method: str
    n: int
    mul: int
    div: int
    add: int
    sub: int
    neg: int
    cmp: int
    fn: int
    stages: dict[str, tuple[int, int]] = field(default_factory=dict)
    result: np.ndarray | None = None

    @property
    def M(self) -> int:
        """Multiplications and divisions."""
        return self.mul + self.div

    @property
    def A(self) -> int:
        """Additions and subtractions."""
        return self.add + self.sub

    @property
    def total(self) -> int:
        """M + A."""
        return self.M + self.A


class Counter:
    """Runs kernels' Python functions with counting substitutions (module docstring).

    overrides : {original object: replacement} applied in every rebuilt function's
                globals (e.g. `core.kernels.data.data_views` -> a function returning
                counted fields)
    stop      : an event; when set, the count raises CountCancelled at the next call
                of a kernel or of cos / sin / sqrt (a long count can be cancelled)
    python_modules : names of modules whose plain Python functions are rebuilt like
                kernels when a counted function calls them (pure-Python algorithms such
                as `core.lab.paper_formulation`); other Python functions run as they are
    """

    def __init__(self, overrides: dict | None = None,
                 stop: threading.Event | None = None,
                 python_modules: tuple[str, ...] = ()) -> None:
        self._stop = stop
        self._python_modules = frozenset(python_modules)
        self._overrides = {id(k): v for k, v in (overrides or {}).items()}
        self._memo: dict[int, Callable] = {}
        self._proxies: dict[str, types.SimpleNamespace] = {}
        self._np = _Shim(np, stop)
        self._math = _Shim(math, stop)
        # a joint's cos and sin (core.kernels.trig: inlined arithmetic in place of libm's
        # sincos) count as the two elementary functions they are, as the papers count
        # them: apart from M and A
        self._overrides.setdefault(id(cos_sin), self._cos_sin)
        self._overrides.setdefault(id(cos_sin_rows), self._cos_sin_rows)
        self._inclusive: dict[str, list[int]] = {}

    def _cos_sin(self, x):
        """`core.kernels.trig.cos_sin`, counted as a cos and a sin."""
        return self._math.cos(x), self._math.sin(x)

    def _cos_sin_rows(self, cs, n: int) -> None:
        """`core.kernels.trig.cos_sin_rows`, counted as a cos and a sin per angle."""
        for i in range(n):
            cs[0, i], cs[1, i] = self._cos_sin(cs[2, i])

    # ----- rebuilding ---------------------------------------------------------------
    def function(self, kernel) -> Callable:
        """The counted Python version of a dispatcher or Python function."""
        py = getattr(kernel, "py_func", kernel)
        try:
            return self._memo[id(py)]
        except KeyError:
            pass
        g: dict = {"__builtins__": __builtins__}
        inner = types.FunctionType(_code_with_counted_constants(py.__code__), g, py.__name__,
                                   py.__defaults__, py.__closure__)
        # an inlined twin (`core.kernels.buffers.inline_twin`) counts as its kernel's stage
        name = py.__name__.removesuffix("_inline")
        counter = self

        def staged(*args):
            # inclusive counts of each kernel's calls (an entry's stages)
            if counter._stop is not None and counter._stop.is_set():
                raise CountCancelled
            before = _TALLY.snapshot()
            try:
                return inner(*args)
            finally:
                after = _TALLY.snapshot()
                acc = counter._inclusive.setdefault(name, [0, 0])
                acc[0] += (after[0] - before[0]) + (after[1] - before[1])
                acc[1] += (after[2] - before[2]) + (after[3] - before[3])

        self._memo[id(py)] = staged
        source = py.__globals__
        for key in _names(py.__code__):
            if key not in source:
                continue
            g[key] = self._substitute(source[key])
        return staged

    def _substitute(self, x):
        if id(x) in self._overrides:
            return self._overrides[id(x)]
        if _is_kernel(x):
            return self.function(x)
        if isinstance(x, types.FunctionType) and x.__module__ in self._python_modules:
            return self.function(x)
        if x is np:
            return self._np
        if x is math:
            return self._math
        if isinstance(x, types.ModuleType) and x.__name__.startswith("armdyn.core."):
            return self._proxy(x)
        return x

    def _proxy(self, module: types.ModuleType):
        proxy = self._proxies.get(module.__name__)
        if proxy is None:
            counter = self

            class _ModuleProxy:
                def __getattr__(self, name):
                    value = counter._substitute(getattr(module, name))
                    setattr(self, name, value)
                    return value

            proxy = self._proxies[module.__name__] = _ModuleProxy()
        return proxy

    # ----- running --------------------------------------------------------------------
    def call(self, kernel, *args, stages: tuple[str, ...] = ()
             ) -> tuple[object, Tally, dict[str, tuple[int, int]]]:
        """Run the counted `kernel(*args)`; returns (its result, the tally of the call,
        {stage: (M, A)}) for the kernels named in `stages` (inclusive of what they
        call, summed over their calls; none may call another) and "(own)" for the
        rest of the call."""
        f = self.function(kernel)
        with counting() as tally:
            self._inclusive = {}
            result = f(*args)
            total = tally.snapshot()
        out_stages = {k: tuple(self._inclusive.get(k, (0, 0))) for k in stages}
        own_M = total[0] + total[1] - sum(v[0] for v in out_stages.values())
        own_A = total[2] + total[3] - sum(v[1] for v in out_stages.values())
        out_stages["(own)"] = (own_M, own_A)
        out = Tally()
        (out.mul, out.div, out.add, out.sub, out.neg, out.cmp, out.fn) = total
        return result, out, out_stages


class counting:
    """Context manager: a fresh tally for one counting session (holds the lock)."""

    def __enter__(self) -> Tally:
        _LOCK.acquire()
        _TALLY.reset()
        return _TALLY

    def __exit__(self, *exc) -> None:
        _LOCK.release()


# ----------------------------------------------------------------------------------
# The counted calls: the same entry kernels the public API runs
# ----------------------------------------------------------------------------------

def _counted_views(model):
    """(mv, D, F, I): the model's fields and a fresh workspace's, float arrays counted."""
    k = kernel_of(model)
    views = k.views
    fields = []
    for name, x in zip(views._fields, views):
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            x = counted_array(x)
        elif isinstance(x, np.ndarray):
            x = x.copy()
        else:
            x = int(x)
        fields.append(x)
    mv = layout.ModelViews(*fields)
    D = data.Data(*(counted_array(a) if isinstance(a, np.ndarray) else a
                    for a in data_of(k, new_workspace(k))))
    return k, mv, D


def _counter_for(mv, D, stop: threading.Event | None = None) -> Counter:
    return Counter({layout.model_views: lambda F, I: mv,
                    data.data_views: lambda mv_, ws: D}, stop)


def _state(model, q, qd, x, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = kernel_of(model).n
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, n) if q is None else np.asarray(q, dtype=float)
    qd = rng.uniform(-1, 1, n) if qd is None else np.asarray(qd, dtype=float)
    x = rng.uniform(-1, 1, n) if x is None else np.asarray(x, dtype=float)
    return q, qd, x


def count_forward_dynamics(model, q=None, qd=None, tau=None, method: str = "denoc",
                           seed: int = 0, stop: threading.Event | None = None) -> OpCount:
    """Operations of one `forward_dynamics(model, q, qd, tau, method)` call's kernel.

    model  : a Robot or a Mechanism without loops (a tree)
    q, qd, tau : (n,) state and joint forces (rad, rad/s, N m; m, m/s, N); random in
                 [-1, 1] (from `seed`) where None: the counts do not depend on them
                 unless a pivot vanishes
    method : "denoc" runs `core.kernels.dynamics.forward_dynamics_state_kernel` (the
             single-state entry: `forward_dynamics_tree`: link quantities, bias forces
             by RIDIM with qdd = 0, articulated inertias, UDU^T solve); "composite"
             runs `core.kernels.dynamics.forward_dynamics_composite_kernel`
             (link quantities, bias forces, composite inertias, GIM, Cholesky)
    stop   : an event that cancels the count when set (CountCancelled)
    Returns an OpCount whose `result` is qdd (n,), rad/s^2 / m/s^2.
    """
    if method not in ("denoc", "composite"):
        raise ValueError(f"method must be 'denoc' or 'composite', got {method!r}")
    k, mv, D = _counted_views(model)
    if k.nl:
        raise ValueError("operation counts are for trees (a mechanism without loops)")
    n = k.n
    q, qd, tau = _state(model, q, qd, tau, seed)
    Q, Qd, Tau = counted_array(q), counted_array(qd), counted_array(tau)
    qdd = counted_array(np.zeros(n))
    counter = _counter_for(mv, D, stop)
    if method == "denoc":
        bad, tally, stages = counter.call(dynamics.forward_dynamics_state_kernel, k.F, k.I, None,
                                          Q, Qd, Tau, qdd, stages=STAGES[method])
    else:
        f_ext = counted_array(np.zeros((1, n, 6)))
        GIM = counted_array(np.zeros((n, n)))
        bad, tally, stages = counter.call(dynamics.forward_dynamics_composite_kernel, k.F, k.I,
                                          None, Q, Qd, Tau, f_ext, GIM, qdd,
                                          stages=STAGES[method])
    if bad != -1:
        raise ValueError(f"the counted {method} forward dynamics failed (code {bad})")
    return OpCount(method, n, tally.mul, tally.div, tally.add, tally.sub, tally.neg,
                   tally.cmp, tally.fn, stages, plain_array(qdd))


def count_inverse_dynamics(model, q=None, qd=None, qdd=None, seed: int = 0) -> OpCount:
    """Operations of one `inverse_dynamics(model, q, qd, qdd)` call's kernel
    (`core.kernels.dynamics.inverse_dynamics_state_kernel`: argument check, link quantities, RIDIM).
    Arguments as `count_forward_dynamics`; `result` is tau (n,), N m / N."""
    k, mv, D = _counted_views(model)
    if k.nl:
        raise ValueError("operation counts are for trees (a mechanism without loops)")
    q, qd, qdd = _state(model, q, qd, qdd, seed)
    tau = counted_array(np.zeros(k.n))
    counter = _counter_for(mv, D)
    code, tally, stages = counter.call(dynamics.inverse_dynamics_state_kernel, k.F, k.I, None,
                                       counted_array(q), counted_array(qd),
                                       counted_array(qdd), tau, stages=STAGES["ridim"])
    if code != -1:
        raise ValueError(f"the counted inverse dynamics failed (code {code})")
    return OpCount("ridim", k.n, tally.mul, tally.div, tally.add, tally.sub, tally.neg,
                   tally.cmp, tally.fn, stages, plain_array(tau))
