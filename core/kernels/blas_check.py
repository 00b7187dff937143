"""numba's start-up check for a BLAS, without importing all of scipy.linalg at a start.

numba's array functions ask, when first imported (with its compiler's registries, before
the first kernel loads), whether scipy's BLAS can be imported, by importing
`scipy.linalg.cython_blas`: the whole of scipy.linalg, 0.26 s on the path to the window
of every start, for an answer that only decides whether numba will compile np.dot and
its kin. scipy is a dependency of the core, so the answer is yes: `install()` lets numba
record it without the import. Compiling a function that calls BLAS still runs numba's own
check (`numba.np.linalg.ensure_blas`, which imports scipy's BLAS then), and the compiled
code imports it at its first call (numba's helper library), so nothing else changes.
"""
from __future__ import annotations

import importlib
import sys

__all__ = ["install"]


def install() -> None:
    """Import numba's array functions with their BLAS check answered yes (scipy is a
    dependency); a no-op if numba imported them already."""
    if "numba.np.arraymath" in sys.modules:
        return
    from numba.np import linalg

    numba_check = linalg.ensure_blas
    linalg.ensure_blas = _scipy_is_a_dependency
    try:
        importlib.import_module("numba.np.arraymath")  # its check calls the name above
    finally:
        linalg.ensure_blas = numba_check


def _scipy_is_a_dependency() -> None:
    """numba's BLAS check at import, answered without importing scipy.linalg."""
