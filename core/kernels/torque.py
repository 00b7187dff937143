"""Joint forces given as a function tau(t, q, qd): the forms the compiled integrator calls.

The integrator (`core.kernels.dop853`) runs a whole chunk of a simulation inside numba. It
takes the joint forces as a function pointer of one signature, `TORQUE_SIGNATURE`:

    status = torque(t, q*, qd*, out*, nq, nv)

which writes tau(t, q, qd) (nv,) into `out` (q has nq entries, qd nv: they differ for
joints of several degrees of freedom, `core.kernels.joints`) and returns 0, or 1 when the function failed
(the run then stops with `core.errors.SimulationError` carrying the reason). Three kinds
of joint forces become such a pointer (`torque_function`):

- None or a constant vector: `constant_torque()`, which leaves `out` (holding the
  constant) alone;
- a function numba compiles (`@numba.njit`), in either form

      def tau(t, q, qd):                 def tau(t, q, qd, out):
          return -Kp * q - Kd * qd           out[:] = -Kp * q - Kd * qd

  wrapped in a compiled C callback (`compiled_torque`), so the whole run stays compiled;
- any other Python callable tau(t, q, qd) -> (n,): a ctypes callback
  (`PythonTorque`) that takes the GIL, calls it with copies of q and qd, and checks
  what it returned; the run pays for the calls and little more.
"""
from __future__ import annotations

import ctypes
import functools
import weakref
from collections.abc import Callable

import numpy as np
from numba import carray, cfunc, types
from numba.core.registry import CPUDispatcher

#: The C signature of a torque callback: (t, q*, qd*, out*, nq, nv) -> status (0 = done).
TORQUE_SIGNATURE = types.int64(types.float64, types.CPointer(types.float64),
                               types.CPointer(types.float64), types.CPointer(types.float64),
                               types.int64, types.int64)


def _constant(t, q, qd, out, nq, nv):
    """Constant joint forces: `out` already holds them."""
    return 0


@functools.cache
def constant_torque():
    """The callback of constant joint forces (made on first use: a C callback costs a
    tenth of a second to load, which an import should not)."""
    return cfunc(TORQUE_SIGNATURE, cache=True)(_constant)


_COMPILED: "weakref.WeakKeyDictionary[CPUDispatcher, object]" = weakref.WeakKeyDictionary()


def compiled_torque(function: CPUDispatcher):
    """A C callback calling the numba-compiled `function` (either form in the module
    docstring); compiled once per function (a fraction of a second), then reused."""
    callback = _COMPILED.get(function)
    if callback is None:
        callback = _COMPILED[function] = _compile_callback(function)
    return callback


def _compile_callback(function: CPUDispatcher):
    arity = function.py_func.__code__.co_argcount
    if arity == 4:
        def call(t, q, qd, out, nq, nv):
            function(t, carray(q, (nq,)), carray(qd, (nv,)), carray(out, (nv,)))
            return 0
    elif arity == 3:
        def call(t, q, qd, out, nq, nv):
            tau = function(t, carray(q, (nq,)), carray(qd, (nv,)))
            if tau.shape[0] != nv:
                return 1
            o = carray(out, (nv,))
            for k in range(nv):
                o[k] = tau[k]
            return 0
    else:
        raise TypeError("a compiled torque function takes (t, q, qd) or (t, q, qd, out), "
                        f"got {arity} arguments")
    return cfunc(TORQUE_SIGNATURE)(call)


_FLOAT64 = np.dtype(np.float64)


class PythonTorque(types.WrapperAddressProtocol):
    """A Python tau(t, q, qd) -> (n,) as a torque callback (numba's wrapper-address
    protocol, so compiled code can call it through a pointer). After a failure,
    `error` holds the exception and later calls fail at once."""

    # pointers arrive as plain addresses (ints): cheaper than ctypes pointer objects
    _CTYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_double, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                              ctypes.c_int64)

    def __init__(self, function: Callable, n: int) -> None:
        self.function = function
        self.n = n
        self.error: BaseException | None = None
        # the integrator's buffers, by address, one table per role: q (nq,), qd and out
        # (nv,) (made once each; a role's length is fixed for a run)
        self._q: dict[int, np.ndarray] = {}
        self._qd: dict[int, np.ndarray] = {}
        self._out: dict[int, np.ndarray] = {}
        self._callback = self._CTYPE(self._call)

    @staticmethod
    def _array(table: dict[int, np.ndarray], address: int, size: int) -> np.ndarray:
        """The (size,) array at the address (one of a few integrator buffers), kept in
        `table` for the next call."""
        pointer = ctypes.cast(address, ctypes.POINTER(ctypes.c_double))
        array = table[address] = np.ctypeslib.as_array(pointer, (size,))
        return array

    def _call(self, t, q, qd, out, nq, nv) -> int:
        # once per right-hand side: the lookups inline, the dtype compared by identity
        # (a float64 array's dtype is numpy's one float64 dtype; any other goes through
        # asarray), the result stored by `[...] =` (half the cost of `[:] =`, a third of
        # np.copyto's)
        if self.error is not None:
            return 1
        try:
            q_array = self._q.get(q)
            if q_array is None:
                q_array = self._array(self._q, q, nq)
            qd_array = self._qd.get(qd)
            if qd_array is None:
                qd_array = self._array(self._qd, qd, nv)
            tau = self.function(t, q_array.copy(), qd_array.copy())
            if type(tau) is not np.ndarray or tau.dtype is not _FLOAT64 or tau.shape != (nv,):
                tau = np.asarray(tau, dtype=float)
                if tau.shape != (nv,):
                    raise ValueError(f"tau(t, q, qd) must return shape ({nv},), got "
                                     f"{tau.shape}")
            out_array = self._out.get(out)
            if out_array is None:
                out_array = self._array(self._out, out, nv)
            out_array[...] = tau
            return 0
        except BaseException as error:  # noqa: BLE001 - handed back to the caller
            self.error = error
            return 1

    # numba's wrapper address protocol
    def __wrapper_address__(self) -> int:  # noqa: N807
        return ctypes.cast(self._callback, ctypes.c_void_p).value

    def signature(self):
        return TORQUE_SIGNATURE


def torque_function(tau, n: int) -> tuple[object, np.ndarray]:
    """(callback, buffer): the torque callback for `tau` (None, a constant (n,) vector,
    a numba-compiled function or a Python callable) and the (n,) buffer it writes into
    (holding the constant for a constant); n: the model's joint rates nv."""
    if tau is None or not callable(tau):
        buffer = np.zeros(n) if tau is None else np.array(tau, dtype=float).reshape(n)
        return constant_torque(), buffer
    if isinstance(tau, CPUDispatcher):
        return compiled_torque(tau), np.zeros(n)
    return PythonTorque(tau, n), np.zeros(n)
