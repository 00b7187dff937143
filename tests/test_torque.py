"""Joint forces given as tau(t, q, qd): plain Python and numba-compiled functions
(core.kernels.torque) drive the same compiled integration."""
from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import pytest

from armdyn.core import SimulationError, load_robot, simulate

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
KP, KD = 40.0, 6.0


def pd_python(t, q, qd):
    """A PD controller towards a moving target (uses t, q and qd)."""
    return -KP * (q - 0.3 * np.sin(t)) - KD * qd


@numba.njit
def pd_compiled(t, q, qd):
    return -KP * (q - 0.3 * np.sin(t)) - KD * qd


@numba.njit
def pd_compiled_into(t, q, qd, out):
    for k in range(q.shape[0]):
        out[k] = -KP * (q[k] - 0.3 * np.sin(t)) - KD * qd[k]


@pytest.fixture(scope="module")
def robot():
    return load_robot(ROBOTS / "two_link_planar.toml")


@pytest.fixture(scope="module")
def python_run(robot):
    return simulate(robot, 2.0, tau=pd_python)


@pytest.mark.parametrize("tau", [pd_compiled, pd_compiled_into])
def test_a_compiled_torque_function_gives_the_python_functions_run(robot, python_run, tau):
    run = simulate(robot, 2.0, tau=tau)
    assert np.allclose(run.q, python_run.q, rtol=0, atol=1e-12)
    # the recorded forces are tau(t, q, qd) at the samples
    expected = np.array([pd_python(t, q, qd) for t, q, qd in zip(run.t, run.q, run.qd)])
    assert np.allclose(run.tau, expected, rtol=0, atol=1e-10)


def test_the_controller_acts_the_run_follows_its_target(robot, python_run):
    """Closed form of the linear PD loop is out of reach with gravity, so check that
    the run differs from a free fall and that the error settles: the recorded torque
    is the controller's and the joint stays near the moving target."""
    free = simulate(robot, 2.0)
    assert np.abs(free.q - python_run.q).max() > 0.1
    late = python_run.t > 1.5
    gravity_offset = np.abs(python_run.tau[late]).max() / KP
    assert np.abs(python_run.q[late] - 0.3 * np.sin(python_run.t[late, None])).max() \
        < gravity_offset + 0.1


def test_a_python_function_that_raises_stops_the_run_with_its_error(robot):
    def broken(t, q, qd):
        if t > 0.5:
            raise RuntimeError("sensor lost")
        return pd_python(t, q, qd)

    with pytest.raises(SimulationError) as info:
        simulate(robot, 2.0, tau=broken)
    err = info.value
    assert "sensor lost" in err.reason and "RuntimeError" in err.reason
    assert isinstance(err.__cause__, RuntimeError)
    assert 0.4 < err.time <= 0.51
    assert len(err.result) > 0 and err.result.t[-1] <= 0.51


def test_a_wrong_shape_is_named(robot):
    with pytest.raises(SimulationError, match=r"shape \(2,\)"):
        simulate(robot, 1.0, tau=lambda t, q, qd: np.zeros(3))


@pytest.mark.parametrize("form", [list, lambda a: a.astype(">f8")],
                         ids=["a list", "big-endian float64"])
def test_a_result_of_another_type_gives_the_same_run(robot, python_run, form):
    """The callback takes numpy's float64 arrays as they are (its dtype test is by
    identity) and anything else through asarray: the same numbers, the same run."""
    run = simulate(robot, 2.0, tau=lambda t, q, qd: form(pd_python(t, q, qd)))
    assert np.array_equal(run.q, python_run.q) and np.array_equal(run.qd, python_run.qd)


def test_the_function_is_given_copies_it_may_keep(robot):
    """q and qd are copies: the integrator's buffers move on, what the function kept
    does not (the states it saw stay different)."""
    seen = []

    def keeping(t, q, qd):
        seen.append((t, q, qd))
        return pd_python(t, q, qd)

    simulate(robot, 0.2, tau=keeping)
    # (views of the integrator's few buffers would all hold the last states written)
    assert len(seen) > 100
    assert len({(q.tobytes(), qd.tobytes()) for _, q, qd in seen}) > len(seen) // 2
