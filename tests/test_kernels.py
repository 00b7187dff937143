"""The compiled kernels keep the properties their speed rests on (core.buffers)."""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import core
from core import forward_dynamics, inverse_dynamics, load_mechanism, load_robot

ROBOTS = Path(__file__).resolve().parents[1] / "robots"


def _compiled_kernels():
    """Every dispatcher of the core compiled with core.buffers.compiled_kernel."""
    found = {}
    for name in ("denoc", "dynamics", "constrained_dynamics", "loop_kinematics", "closed_chains",
                 "integrator", "kinematics", "parallel", "workspace", "kernel_model"):
        module = getattr(core, name, None) or __import__(f"core.{name}", fromlist=["x"])
        for attr, value in inspect.getmembers(module):
            if isinstance(value, CPUDispatcher) and value.targetoptions.get("_nrt") is False:
                found[f"{name}.{attr}"] = value
    return found


def test_single_calls_run_kernels_without_reference_counting():
    robot = load_robot(ROBOTS / "puma560_saha.toml")
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    for model in (robot, mech):
        q = model.q_home if hasattr(model, "q_home") else np.zeros(model.n)
        forward_dynamics(model, q, np.zeros(model.n), np.zeros(model.n))
    inverse_dynamics(robot, np.zeros(6), np.zeros(6), np.zeros(6))
    kernels = _compiled_kernels()
    assert len(kernels) > 30
    compiled = {name: k for name, k in kernels.items() if k.signatures}
    assert any("constrained" in name for name in compiled)
    for name, kernel in compiled.items():
        for signature in kernel.signatures:
            ir = kernel.inspect_llvm(signature)
            body = ir.split("cpython.")[0]  # the kernel, not numba's Python wrapper
            assert "define" in body and "fmul" in body or "load" in body, name
            assert "NRT_incref" not in body and "NRT_decref" not in body, name


@pytest.mark.parametrize("bad", [np.zeros(5), np.zeros(7), np.array([0.0, 1, 2, 3, 4, np.nan])])
def test_the_fast_path_checks_what_the_kernel_receives(bad):
    robot = load_robot(ROBOTS / "puma560_saha.toml")
    z = np.zeros(6)
    with pytest.raises(ValueError, match="q"):
        inverse_dynamics(robot, bad, z, z)
    if len(bad) != 6:
        with pytest.raises(ValueError, match="tau"):
            forward_dynamics(robot, z, z, bad)
