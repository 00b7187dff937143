"""A compiled kernel called through its address (core.kernels.calls): it computes as the
direct call, its errors reach the caller, and the integrator's kernels that call the
right-hand side so load from numba's cache in a new process without compiling."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from armdyn.core import load_robot, simulate
from armdyn.core.kernels.buffers import KERNEL_OPTIONS
from armdyn.core.kernels.calls import address_of_kernel, call_at

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}


def _scale(a, x, out):
    """out = a x; raises for a < 0; returns the length."""
    if a < 0.0:
        raise ValueError("negative scale")
    for i in range(x.shape[0]):
        out[i] = a * x[i]
    return x.shape[0]


def _twice_through(address, a, x, out):
    """Two calls through the address (the second on the first's result) and one more."""
    n = call_at(address, (a, x, out))
    return n + call_at(address, (a, out, out))


def _once_through(address, a, x, out):
    return call_at(address, (a, x, out))


def test_a_call_through_the_address_computes_as_the_call():
    scale = njit(**OPTIONS)(_scale)
    caller = njit(**OPTIONS)(_twice_through)
    x, out = np.arange(1.0, 6.0), np.zeros(5)
    address = address_of_kernel(scale, 3.0, x, out)
    assert address == address_of_kernel(scale, 3.0, x, out)  # compiled once
    assert caller(address, 3.0, x, out) == 10
    np.testing.assert_array_equal(out, 9.0 * x)  # a (a x), as two direct calls give
    assert len(caller.signatures) == 1 and len(scale.signatures) == 1
    # other argument types: their own compiled code (the address is looked up by type)
    x32 = x.astype(np.float32)
    other = address_of_kernel(scale, 3.0, x32, out)
    assert other != address and len(scale.signatures) == 2
    once = njit(**OPTIONS)(_once_through)
    assert once(other, 2.0, x32, out) == 5
    np.testing.assert_array_equal(out, 2.0 * x)


def test_the_callees_error_reaches_the_caller():
    scale = njit(**OPTIONS)(_scale)
    caller = njit(**OPTIONS)(_twice_through)
    x, out = np.ones(3), np.zeros(3)
    address = address_of_kernel(scale, 1.0, x, out)
    with pytest.raises(ValueError, match="negative scale"):
        caller(address, -1.0, x, out)


def test_the_integrators_kernels_load_from_the_cache_in_a_new_process():
    """The integrator's kernels hold no address (numba caches no code that does): a new
    process runs an arm loading the right-hand side and its callers, compiling none."""
    robot = ROOT / "robots" / "puma560_saha.toml"
    simulate(load_robot(robot), 0.01, dt_out=0.01)  # in the cache now, if it was not
    code = ("import armdyn.core as core\n"
            "from armdyn.core.kernels import dop853\n"
            f"core.simulate(core.load_robot({str(robot)!r}), 0.01, dt_out=0.01)\n"
            "for k in (dop853.rhs, dop853.initial_step, dop853.dop853_advance):\n"
            "    print(k.__name__, sum(k._cache_hits.values()), "
            "sum(k._cache_misses.values()))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    counts = {name: (int(hits), int(misses)) for name, hits, misses in
              (line.split() for line in out if line)}
    assert counts == {"rhs": (1, 0), "initial_step": (1, 0), "dop853_advance": (1, 0)}
