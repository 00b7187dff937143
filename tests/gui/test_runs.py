"""RunSpec (gui/jobs/runs.py) without Qt: which core generator a spec stands for, with
which chunk sizes and options; its label; the empty result of a run stopped at once."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from gui_helpers import PUMA, ROBOTS, SCARA

from armdyn.core import (JointStops, PointPull, Trajectory, inverse_dynamics, load_mechanism,
                         load_robot)
from armdyn.gui.jobs import runs
from armdyn.gui.jobs.runs import (ID_CHUNK_SAMPLES, LIVE_CHUNK_S, SIM_CHUNK_S, SIM_CHUNK_WALL_S,
                                  FallMethod, RunKind, RunSpec)

FOURBAR = ROBOTS / "fourbar.toml"


@pytest.fixture(scope="module")
def puma():
    return load_robot(PUMA)


@pytest.fixture(scope="module")
def fourbar():
    return load_mechanism(FOURBAR)


class Calls:
    """Stands in for core's generators in `gui.jobs.runs`: records each call."""

    def __init__(self, monkeypatch) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []
        for name in ("inverse_dynamics_chunks", "simulate_chunks", "penalty_simulate_chunks",
                     "real_time"):
            monkeypatch.setattr(runs, name, self._recorder(name))

    def _recorder(self, name):
        def record(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return name
        return record

    def names(self) -> list[str]:
        return [name for name, _a, _k in self.calls]

    def kwargs(self, name: str) -> dict:
        return next(k for n, _a, k in self.calls if n == name)


def test_the_module_does_not_import_qt():
    code = ("import sys, armdyn.gui.jobs.runs; "
            "sys.exit(any(m.split('.')[0] in ('PySide6', 'shiboken6') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_inverse_dynamics_spec(monkeypatch, puma):
    calls = Calls(monkeypatch)
    q0, target = puma.q_home, puma.q_home + 0.3
    spec = RunSpec(puma, RunKind.INVERSE, q0, 1.5, dt=0.02, target=target)
    assert spec.chunks() == "inverse_dynamics_chunks"
    [(_name, args, kwargs)] = calls.calls
    assert args[0] is puma and args[3] == 1.5
    np.testing.assert_array_equal(args[1], q0)
    np.testing.assert_array_equal(args[2], target)
    assert kwargs == {"dt_out": 0.02, "chunk_samples": ID_CHUNK_SAMPLES}
    assert spec.label == "Inverse dynamics" and not spec.is_live and not spec.penalty


def test_free_fall_spec_passes_damping_stops_and_the_chunk_sizes(monkeypatch, puma):
    calls = Calls(monkeypatch)
    stops = JointStops(frequency=20.0, damping=0.5)
    damping = np.arange(6.0)
    spec = RunSpec(puma, RunKind.FREE_FALL, puma.q_home, 3.0, damping=damping, stops=stops)
    assert spec.chunks() == "simulate_chunks"
    kwargs = calls.kwargs("simulate_chunks")
    assert kwargs["chunk_duration"] == SIM_CHUNK_S
    assert kwargs["max_wall_per_chunk"] == SIM_CHUNK_WALL_S
    assert kwargs["stops"] is stops and kwargs["damping"] is damping
    assert kwargs["dt_out"] == 0.01 and "pull" not in kwargs
    np.testing.assert_array_equal(kwargs["qd0"], np.zeros(6))  # released at rest
    assert spec.label == "Free fall"
    # no stops given: core's default (end stops when the model has limits) is left alone
    RunSpec(puma, RunKind.FREE_FALL, puma.q_home, 3.0).chunks()
    assert "stops" not in calls.calls[-1][2]


def test_a_live_free_fall_is_paced_and_pulled(monkeypatch, puma):
    calls = Calls(monkeypatch)
    pull = PointPull()
    spec = RunSpec(puma, RunKind.FREE_FALL, puma.q_home, 30.0, live=True, pull=pull,
                   stops=False)
    assert spec.chunks() == "real_time"
    assert calls.names() == ["simulate_chunks", "real_time"]
    kwargs = calls.kwargs("simulate_chunks")
    assert kwargs["chunk_duration"] == LIVE_CHUNK_S and kwargs["pull"] is pull
    assert kwargs["stops"] is False
    assert spec.is_live and spec.label == "Free fall (live)"
    assert not replace(spec, kind=RunKind.INVERSE).is_live


def test_the_penalty_method_needs_loops(monkeypatch, puma, fourbar):
    calls = Calls(monkeypatch)
    spec = RunSpec(fourbar, RunKind.FREE_FALL, fourbar.q_home, 1.0,
                   method=FallMethod.PENALTY, live=True, stops=True)
    assert spec.penalty and not spec.is_live  # the penalty method is never live
    assert spec.chunks() == "penalty_simulate_chunks"
    kwargs = calls.kwargs("penalty_simulate_chunks")
    assert "stops" not in kwargs and "pull" not in kwargs  # it has neither
    assert kwargs["chunk_duration"] == SIM_CHUNK_S
    assert spec.label == "Free fall (penalty)"
    serial = RunSpec(puma, RunKind.FREE_FALL, puma.q_home, 1.0, method=FallMethod.PENALTY)
    assert not serial.penalty and serial.chunks() == "simulate_chunks"
    assert serial.label == "Free fall"


def _run(spec: RunSpec) -> tuple[list[Trajectory], Trajectory]:
    gen, parts = spec.chunks(), []
    while True:
        try:
            parts.append(next(gen))
        except StopIteration as stop:
            return parts, stop.value


def test_an_inverse_dynamics_run_is_cores(puma):
    q0 = puma.q_home
    spec = RunSpec(puma, RunKind.INVERSE, q0, 1.0, target=q0 + 0.2)
    parts, whole = _run(spec)
    assert whole.kind == RunKind.INVERSE.value
    assert len(parts) > 1 and all(len(p) <= ID_CHUNK_SAMPLES for p in parts)
    np.testing.assert_array_equal(Trajectory.concatenate(parts).t, whole.t)
    np.testing.assert_allclose(whole.q[-1], q0 + 0.2, atol=1e-12)
    np.testing.assert_allclose(whole.tau, inverse_dynamics(puma, whole.q, whole.qd, whole.qdd))


def test_a_free_fall_gives_the_free_fall_kind(puma):
    parts, whole = _run(RunSpec(load_robot(SCARA), RunKind.FREE_FALL,
                                load_robot(SCARA).q_home, 0.1, stops=False))
    assert whole.kind == RunKind.FREE_FALL.value and whole.t[-1] == pytest.approx(0.1)


def test_the_empty_result_has_the_runs_kind_and_the_models_rows(puma, fourbar):
    empty = RunSpec(fourbar, RunKind.FREE_FALL, fourbar.q_home, 1.0).empty_result()
    assert len(empty) == 0 and empty.kind == "free-fall"
    assert empty.q.shape == (0, fourbar.n)
    assert fourbar.kernel.m > 0 and empty.cut_forces.shape == (0, fourbar.kernel.m)
    serial = RunSpec(puma, RunKind.INVERSE, puma.q_home, 1.0).empty_result()
    assert serial.kind == "inverse-dynamics" and serial.cut_forces.shape == (0, 0)


def test_kinds_and_titles():
    assert [k.title for k in RunKind] == ["Inverse dynamics", "Free fall"]
    assert {k.value for k in RunKind} == {"inverse-dynamics", "free-fall"}
