"""numba's compiler flags listed without their own cost; what they hold is unchanged.

numba keys its cache of typed overloads (`typing.templates._OverloadFunctionTemplate.
_get_impl`, every typing of a call of an `@overload`ed function: array indexing, math,
our helpers' calls) by the compiler flags, so each lookup hashes the flags and compares
them: `TargetConfig.values()` both times, which reads every one of the ~40 options
through its Python property, one at a time. That was ~100,000 calls of values() and
4 million property reads in the first free fall of a small arm: 0.9 s of its 25 s of
CPU (fresh cache). Here values() is the same dict, made in one step from the class's
defaults and the options set (numba 0.59 to 0.69: numba/core/targetconfig.py).
`install()` runs when `core.kernels.buffers` is imported, before any kernel compiles.
"""
from __future__ import annotations

from numba.core import targetconfig

_numba_values = targetconfig.TargetConfig.values
_defaults: dict[type, dict] = {}


def values(self) -> dict:
    """numba's `TargetConfig.values()`: {option: its value} (the default where unset), in
    the order of the class's options."""
    defaults = _defaults.get(type(self))
    if defaults is None:
        defaults = _defaults[type(self)] = {name: option.default
                                            for name, option in type(self).options.items()}
    if not self._values.keys() <= defaults.keys():  # (copied from another kind)
        return _numba_values(self)
    return {**defaults, **self._values}


def install() -> None:
    """Put `values` into numba's TargetConfig (once; later calls do nothing)."""
    targetconfig.TargetConfig.values = values
