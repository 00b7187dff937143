"""Arguments of the public functions: models and joint arrays, coerced and checked in one place.

Every public function of the core takes a model (a compiled `Model`, or a description
that compiled into one: a `Robot` or a `Mechanism`) and joint arrays in SI units. The
helpers here turn them into what the kernels take and refuse the rest with an
`ArgumentError` (a ValueError) or `ArgumentTypeError` (a TypeError) that names the
argument: one rule for shapes, finiteness and defaults, whichever function is called.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError
from ..kernels.layout import KernelModel


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


def whole_number(x, name: str, low: int) -> int:
    """x as an int >= low (not a bool), or an ArgumentError naming `name`."""
    try:
        ok = not isinstance(x, bool) and int(x) == x and int(x) >= low
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ArgumentError(f"{name} must be an integer >= {low}, got {x!r}")
    return int(x)
