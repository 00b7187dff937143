"""Arguments of the public functions: models and joint arrays, coerced and checked in one place.

Every public function of the core takes a model (a compiled `Model`, or a description
that compiled into one: a `Robot` or a `Mechanism`) and joint arrays in SI units. The
helpers here turn them into what the kernels take and refuse the rest with an
`ArgumentError` (a ValueError) or `ArgumentTypeError` (a TypeError) that names the
argument: one rule for shapes, finiteness and defaults, whichever function is called.
A result that is not finite although its arguments are (they were too large for
floating point) is a `ResultOverflowError` (`finite_result`), never a silent nan.

Runs in time (`core.sim`) also refuse what no physical arm does and what no
integrator can resolve, with the bounds below (`physical_joint_values`,
`tolerance`): a joint value or rate beyond them is refused by name, before any work.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, ResultOverflowError
from ..kernels.layout import KernelModel

#: Physical bounds of a run's joint values and rates (`physical_joint_values`): a
#: revolute joint's angle, rad (1e4 rad is 1,600 turns; angles stay resolved to 2e-12
#: rad), a prismatic joint's travel, m, and their rates, rad/s (95,000 rpm) and m/s
#: (three times the speed of sound). Beyond them an input is a typing error or a
#: unit slip (deg for rad), and a run of it only produces overflow or a stalled
#: integrator.
MAX_ANGLE = 1e4
MAX_TRAVEL = 1e3
MAX_ANGULAR_RATE = 1e4
MAX_LINEAR_RATE = 1e3
#: The range of the integrators' relative tolerance `rtol` (`tolerance`): below 1e-14
#: (about 50 ulp) no step can meet it, above 1e-2 the results are not the motion's.
RTOL_RANGE = (1e-14, 1e-2)
#: The range of the absolute tolerance `atol` (rad, m, rad/s, m/s): as rtol's, for
#: values of order one.
ATOL_RANGE = (1e-14, 1e-2)


def model_of(model):
    """The compiled Model of `model` (a Model, Robot or Mechanism)."""
    try:
        return model.model
    except AttributeError:
        raise ArgumentTypeError(f"expected a Model, Robot or Mechanism, got "
                                f"{type(model).__name__}") from None


def kernel_of(model) -> KernelModel:
    """The kernels' buffers of `model` (a Model, Robot or Mechanism)."""
    return model_of(model).kernel


def is_state(x, n: int) -> bool:
    """x is already a float64 vector of n joint values (cheap test; numba takes any
    memory layout)."""
    return type(x) is np.ndarray and x.shape == (n,) and x.dtype == np.float64


def joint_vector(x, n: int, name: str, *, default=None, scalar: bool = False) -> np.ndarray:
    """x as a finite, C-contiguous float64 vector of n joint values (rad, m, ...).

    default : returned (as a new array) when x is None; None: x is required
    scalar  : a single number stands for every joint
    Raises ArgumentError naming `name` for a wrong shape or a value that is not finite,
    ArgumentTypeError for something that is not numbers."""
    if x is None and default is not None:
        return np.array(default, dtype=float).reshape(n)
    if is_state(x, n) and x.flags.c_contiguous:
        a = x
    else:
        try:
            a = np.asarray(x, dtype=float)  # (ascontiguousarray makes a number 1-D)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"{name} must be {n} numbers, got {x!r}") from None
        if scalar and a.shape == ():
            a = np.full(n, float(a))
        a = np.ascontiguousarray(a)
        if a.shape != (n,):
            raise ArgumentError(f"{name} must have shape ({n},), got {a.shape}")
    if not np.isfinite(a).all():
        bad = int(np.flatnonzero(~np.isfinite(a))[0])
        raise ArgumentError(f"{name} must be finite, got {a[bad]} at joint {bad + 1}")
    return a


def finite_array(x, shape: tuple[int, ...], name: str) -> np.ndarray:
    """x as a finite float64 array of `shape` (a point (3,), a rotation (3, 3)), or an
    error naming `name` (ArgumentTypeError for something that is not numbers)."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name} must be numbers of shape {shape}, got {x!r}") from None
    if a.shape != shape:
        raise ArgumentError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ArgumentError(f"{name} must be finite")
    return a


def joint_rows(n, **arrays) -> tuple[list[np.ndarray], bool]:
    """The named joint arrays as finite (T, n) rows of one length T, and whether they
    were single states (n,). n: the entries of every array, or a pair (nq, nv): nq for
    the first array (joint values q), nv for the others (rates, accelerations, forces)."""
    rows, singles, shapes = [], [], []
    sizes = n if isinstance(n, tuple) else (n, n)
    for i, (name, value) in enumerate(arrays.items()):
        n = sizes[0] if i == 0 else sizes[1]
        try:
            a = np.ascontiguousarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"{name} must be numbers, got {value!r}") from None
        if a.ndim == 1 and a.shape == (n,):
            a, single = a[None, :], True
        elif a.ndim == 2 and a.shape[1] == n:
            single = False
        else:
            raise ArgumentError(f"{name} must have shape ({n},) or (T, {n}), got {a.shape}")
        if not np.isfinite(a).all():
            raise ArgumentError(f"{name} must be finite")
        rows.append(a)
        singles.append(single)
        shapes.append(a.shape)
    if len({shape[0] for shape in shapes}) != 1 or len(set(singles)) != 1:
        raise ArgumentError(f"{', '.join(arrays)} must have the same shape, got "
                            f"{', '.join(map(str, shapes))}")
    return rows, singles[0]


_NO_WRENCH: dict[int, np.ndarray] = {}


def link_wrenches(f_ext, n: int, T: int) -> np.ndarray:
    """External wrenches as a (1 or T, n, 6) array of per-link wrenches.

    f_ext: None (none); a wrench [n_x, n_y, n_z, f_x, f_y, f_z] (N m, N) on the last link
    (6,); one per link (n, 6); or batches of either with a leading T axis: (T, 6) or
    (T, n, 6). The moment is about the origin of the link's own frame, base frame."""
    if f_ext is None:
        z = _NO_WRENCH.get(n)
        if z is None:  # never written; writable so that numba compiles one array type
            z = _NO_WRENCH[n] = np.zeros((1, n, 6))
        return z
    try:
        w = np.asarray(f_ext, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"f_ext must be numbers, got {f_ext!r}") from None
    if not np.isfinite(w).all():
        raise ArgumentError("f_ext must be finite")
    if w.shape == (6,) or (w.ndim == 2 and w.shape == (T, 6) and (T > 1 or T != n)):
        # on the last link: one wrench, or one per sample (a (T, 6) batch wins over
        # per-link (n, 6) when T == n; write (T, n, 6) to be explicit)
        rows = w.reshape(-1, 6)
        out = np.zeros((rows.shape[0], n, 6))
        out[:, n - 1, :] = rows
        return out
    if w.shape == (n, 6):
        return np.ascontiguousarray(w[None])
    if w.ndim == 3 and w.shape[1:] == (n, 6) and w.shape[0] in (1, T):
        return np.ascontiguousarray(w)
    raise ArgumentError(f"f_ext must have shape (6,), ({n}, 6), ({T}, 6) or ({T}, {n}, 6), "
                        f"got {w.shape}")


def positive_number(x, name: str, *, allow_zero: bool = False) -> float:
    """x as a finite float > 0 (>= 0 with allow_zero), or an error naming `name`."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name} must be a number, got {x!r}") from None
    if not (math.isfinite(v) and (v >= 0 if allow_zero else v > 0)):
        raise ArgumentError(f"{name} must be a finite number {'>= 0' if allow_zero else '> 0'}, "
                            f"got {x!r}")
    return v


def number_in(x, name: str, low: float, high: float, unit: str = "") -> float:
    """x as a float in [low, high], or an error naming `name` and the range."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name} must be a number, got {x!r}") from None
    if not low <= v <= high:  # (nan fails too)
        unit = f" {unit}" if unit else ""
        raise ArgumentError(f"{name} must be between {low:g} and {high:g}{unit}, got {x!r}")
    return v


def tolerance(x, name: str) -> float:
    """An integrator tolerance: `rtol` in RTOL_RANGE, `atol` in ATOL_RANGE."""
    return number_in(x, name, *(RTOL_RANGE if name == "rtol" else ATOL_RANGE))


def one_of(x, name: str, choices: tuple[str, ...]) -> str:
    """x if it is one of `choices` (a method's name), else an ArgumentError naming them."""
    if isinstance(x, str) and x in choices:
        return x
    listed = ", ".join(repr(c) for c in choices[:-1]) + f" or {choices[-1]!r}"
    raise ArgumentError(f"{name} must be {listed}, got {x!r}")


def finite_result(x, what: str):
    """x (an array or a number) if every entry is finite, else a ResultOverflowError: the
    arguments were finite (checked on entry) but too large for floating point."""
    if not np.isfinite(x).all():
        raise ResultOverflowError(f"{what} is not finite although the arguments are: they "
                                  "are too large for floating point (overflow)")
    return x


def physical_joint_values(model, x: np.ndarray, name: str, *, rates: bool = False
                          ) -> np.ndarray:
    """x, the joint values (nq,) (rates: the joint rates (nv,)) of a run's input, if every
    one is within the physical bounds (MAX_ANGLE, MAX_TRAVEL; MAX_ANGULAR_RATE,
    MAX_LINEAR_RATE); else an ArgumentError naming `name`, the joint and the bound. A
    quaternion's entries are bounded by its unit length, a free joint's position by
    MAX_TRAVEL, its rates [w; v] by the angular and linear bounds."""
    m = model_of(model)
    angle, travel = ((MAX_ANGULAR_RATE, "rad/s"), (MAX_LINEAR_RATE, "m/s")) if rates \
        else ((MAX_ANGLE, "rad"), (MAX_TRAVEL, "m"))
    entries = []  # (bound, unit, joint) per entry of x
    for j, kind in enumerate(m.joint_types):
        if kind.value == "revolute":
            entries.append(angle + (j,))
        elif kind.value == "prismatic":
            entries.append(travel + (j,))
        elif kind.value == "free":
            entries += [(angle if rates else travel) + (j,)] * 3
            entries += [(travel if rates else (MAX_ANGLE, "")) + (j,)] * (3 if rates else 4)
        else:  # spherical, universal: angles or angular rates
            entries += [angle + (j,)] * (kind.nv if rates else kind.nq)
    bound = np.array([e[0] for e in entries])
    beyond = np.flatnonzero(~(np.abs(x) <= bound))
    if beyond.size:
        i = int(beyond[0])
        _, unit, j = entries[i]
        raise ArgumentError(f"{name}: joint {j + 1} ({m.joint_names[j]!r}) is {x[i]:.4g} "
                            f"{unit}, beyond the physical bound of {bound[i]:g} {unit}")
    return x


def whole_number(x, name: str, low: int) -> int:
    """x as an int >= low (not a bool), or an ArgumentError naming `name`."""
    try:
        ok = not isinstance(x, bool) and int(x) == x and int(x) >= low
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ArgumentError(f"{name} must be an integer >= {low}, got {x!r}")
    return int(x)


def one_degree_joints_only(model, what: str) -> None:
    """Refuse, naming the joint, a model with a spherical, universal or free joint or with
    force elements in a method (`what`) written for revolute and prismatic joints."""
    m = model_of(model)
    for name, kind in zip(m.joint_names, m.joint_types):
        if not kind.is_dh:
            raise ArgumentError(f"{what} takes revolute and prismatic joints; joint {name!r} "
                                f"is {kind.value}: use simulate (the DOP853 integrator "
                                "moves it on its manifold)")
    if m.kernel.ne:
        raise ArgumentError(f"{what} does not take force elements (springs, dampers, "
                            "tyres): use simulate")
