"""core.kernels.dop853: the numba DOP853 against SciPy's DOP853 driven by the same right-hand side.

Reference values come from `scipy.integrate.solve_ivp(method="DOP853")` and from SciPy's
`DOP853` solver object (accepted-step count, select_initial_step), with the right-hand side
from the public `forward_dynamics` (tau - c qd applied) called from Python: the same
equations through the already-compiled single-state path (calling a kernel from Python
with a new argument list would compile it again, minutes on a fresh machine).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import DOP853, solve_ivp
from scipy.integrate._ivp.common import select_initial_step

from armdyn.core import JointType, Robot, energy, forward_dynamics
from armdyn.core.kernels.dop853 import (STATUS_BLOWUP, STATUS_FINISHED, STATUS_RUNNING,
                                        STATUS_STEP_TOO_SMALL)
from armdyn.core.sim.dop853 import Dop853State, integrate
from armdyn.core.model.robot import validate_robot
from armdyn.core import load_robot
from strategies import random_link

TOL = 1e-9


def scipy_rhs(robot, tau, damping):
    n = robot.n
    c = np.broadcast_to(np.asarray(damping, dtype=float), (n,))

    def rhs(t, y):
        q, qd = y[:n], y[n:]
        return np.concatenate([qd, forward_dynamics(robot, q, qd, tau - c * qd)])
    return rhs


def scipy_accepted_steps(rhs, y0, T, tol):
    s = DOP853(rhs, 0.0, y0, T, rtol=tol, atol=tol)
    steps = 0
    while s.status == "running":
        s.step()
        steps += 1
    assert s.status == "finished"
    return steps, s.nfev


@pytest.fixture(scope="module")
def puma():
    return load_robot("robots/puma560_saha.toml")


def random_arm():
    rng = np.random.default_rng(20240607)
    kinds = [JointType.REVOLUTE, JointType.PRISMATIC, JointType.REVOLUTE, JointType.REVOLUTE]
    robot = Robot(name="random", links=tuple(random_link(rng, k) for k in kinds),
                  gravity=(0.3, -2.0, -9.81))
    assert validate_robot(robot) == []
    n = robot.n
    y0 = np.concatenate([rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, n)])
    tau = rng.uniform(-2.0, 2.0, n)
    damping = rng.uniform(0.5, 2.0, n)
    return robot, y0, tau, damping


def cases():
    puma = load_robot("robots/puma560_saha.toml")
    yield pytest.param(puma, np.zeros(2 * puma.n), np.zeros(puma.n), np.zeros(puma.n),
                       id="puma-free-fall")
    yield pytest.param(*random_arm(), id="random-damped")


@pytest.mark.parametrize("robot,y0,tau,damping", list(cases()))
def test_matches_scipy_dop853(robot, y0, tau, damping):
    T = 2.0
    grid = np.linspace(0.0, T, 201)
    rhs = scipy_rhs(robot, tau, damping)
    ref = solve_ivp(rhs, (0.0, T), y0, method="DOP853", rtol=TOL, atol=TOL, t_eval=grid)
    assert ref.status == 0
    ref_steps, ref_nfev_nodense = scipy_accepted_steps(rhs, y0, T, TOL)

    Y, status, info, stats, _ = integrate(robot, y0, grid, TOL, TOL, tau=tau, damping=damping)
    assert status == STATUS_FINISHED and info == -1
    nfev, accepted, rejected, dense = stats
    # same algorithm: identical step sequence; nfev differs only by the dense-output stages
    # SciPy spends on steps whose samples all land on the step end (at most a few).
    assert accepted == ref_steps
    assert nfev == ref_nfev_nodense + 3 * dense
    assert abs(nfev - ref.nfev) <= 6
    scale = np.max(np.abs(ref.y), axis=1)
    err = np.max(np.abs(Y - ref.y.T) / scale)
    assert err < 1e-9, err
    # the last sample is y(t_bound) itself
    assert np.isfinite(Y).all()


def test_initial_step_matches_scipy():
    """The integrator's first step (`Dop853State.h_abs` before any advance, chosen by the
    compiled initial_step) is SciPy's select_initial_step."""
    robot, y0, tau, damping = random_arm()
    rhs = scipy_rhs(robot, tau, damping)
    f0 = rhs(0.0, y0)
    for tol, T, max_step in [(1e-9, 2.0, np.inf), (1e-4, 3.0, np.inf), (1e-6, 1e-4, np.inf),
                             (1e-6, 2.0, 1e-3)]:
        ref = select_initial_step(rhs, 0.0, y0, T, max_step, f0, 1, 7, tol, tol)
        s = Dop853State(robot, y0, 0.0, T, tol, tol, tau, damping, max_step=max_step)
        assert s.init_status == 0
        assert s.h_abs == pytest.approx(ref, rel=1e-12)


def test_chunks_and_step_limits_give_identical_results(puma):
    robot, y0, tau, damping = random_arm()
    grid = np.linspace(0.0, 3.0, 301)
    Y1, st1, _, stats1, s1 = integrate(robot, y0, grid, TOL, TOL, tau=tau, damping=damping)
    Y2, st2, _, stats2, s2 = integrate(robot, y0, grid, TOL, TOL, tau=tau, damping=damping,
                                       chunk=0.137)
    assert st1 == st2 == STATUS_FINISHED
    assert np.array_equal(Y1, Y2)
    assert np.array_equal(s1.y, s2.y) and np.array_equal(stats1, stats2)
    # at most 3 accepted steps per call
    s3 = Dop853State(robot, y0, 0.0, 3.0, TOL, TOL, tau, damping)
    Y3 = np.full_like(Y1, np.nan)
    nxt, calls = 0, 0
    while True:
        st, nxt, info = s3.advance(grid, Y3, nxt, 3.0, max_steps=3)
        calls += 1
        if st != STATUS_RUNNING:
            break
    assert st == STATUS_FINISHED and nxt == grid.size
    assert calls >= stats1[1] // 3
    assert np.array_equal(Y1, Y3) and np.array_equal(s1.y, s3.y)


def test_samples_on_step_ends_are_the_state_itself():
    robot, y0, tau, damping = random_arm()
    T = 1.5
    s = Dop853State(robot, y0, 0.0, T, TOL, TOL, tau, damping)
    no_out = np.empty(0)
    no_Y = np.empty((0, 2 * robot.n))
    times, states = [0.0], [y0.copy()]
    while True:
        st, _, _ = s.advance(no_out, no_Y, 0, T, max_steps=1)
        times.append(s.t)
        states.append(s.y.copy())
        if st != STATUS_RUNNING:
            break
    assert st == STATUS_FINISHED and times[-1] == T
    grid = np.array(times)
    Y, st, _, stats, _ = integrate(robot, y0, grid, TOL, TOL, tau=tau, damping=damping)
    assert st == STATUS_FINISHED
    assert np.array_equal(Y, np.array(states))   # bitwise: copies, not interpolation
    assert stats[3] == 0                         # no dense output was needed


def test_finish_fills_every_sample_and_last_is_y(puma):
    grid = np.linspace(0.0, 0.5, 51)
    grid = np.concatenate([grid, [0.5]])   # a repeated end sample is fine too
    s = Dop853State(puma, np.zeros(12), 0.0, 0.5, TOL, TOL)
    Y = np.full((grid.size, 12), np.nan)
    st, nxt, info = s.advance(grid, Y, 0, 0.5)
    assert (st, nxt, info) == (STATUS_FINISHED, grid.size, -1)
    assert s.t == 0.5
    assert np.isfinite(Y).all()
    assert np.array_equal(Y[-1], s.y) and np.array_equal(Y[-2], s.y)
    assert np.array_equal(Y[0], np.zeros(12))
    # calling again once finished is a no-op
    y = s.y.copy()
    assert s.advance(grid, Y, nxt, 1.0) == (STATUS_FINISHED, grid.size, -1)
    assert np.array_equal(s.y, y)


def blow_up_cases():
    # Two-link arm under 1e12 N m: the arm spins up to ~1e6 rad/s within microseconds;
    # many trial steps produce inf/nan stages (must be rejected, not reported as singular).
    yield load_robot("robots/two_link_planar.toml"), 1e12, 1e6
    # One prismatic link pushed by 1e12 N: qd = F t / m passes 1e8 after a few steps, at
    # q ~ 1e4 m (from q ~ 1e7 m on, the dynamics' relative pivot test calls the GIM singular).
    rng = np.random.default_rng(7)
    yield Robot(name="slider", links=(random_link(rng, JointType.PRISMATIC),)), 1e12, 1e8


@pytest.mark.parametrize("robot,force,huge", list(blow_up_cases()), ids=["two-link", "slider"])
def test_blow_up_stops_at_last_good_state(robot, force, huge):
    n = robot.n
    tau = np.full(n, force)
    T = 10.0
    grid = np.linspace(0.0, T, 10001)
    s = Dop853State(robot, np.zeros(2 * n), 0.0, T, TOL, TOL, tau, np.zeros(n))
    Y = np.full((grid.size, 2 * n), np.nan)
    st, nxt, info = s.advance(grid, Y, 0, T, huge=huge)
    assert st == STATUS_BLOWUP
    assert 0 <= info < 2 * n
    assert np.isfinite(s.y).all() and np.max(np.abs(s.y)) <= huge
    assert 0.0 < s.t < T
    # y, f, t are a consistent accepted state: f = f(y), samples up to t written, none after
    ydot = scipy_rhs(robot, tau, np.zeros(n))(s.t, s.y)
    assert np.allclose(ydot, s.f, rtol=1e-12, atol=1e-12 * np.abs(s.f).max())
    assert nxt == np.searchsorted(grid, s.t, side="right")
    assert np.isfinite(Y[:nxt]).all() and np.isnan(Y[nxt:]).all()
    # resuming reports it again and nothing moves
    t, y = s.t, s.y.copy()
    assert s.advance(grid, Y, nxt, T, huge=huge)[0] == STATUS_BLOWUP
    assert s.t == t and np.array_equal(s.y, y)
    # with a larger threshold the step is accepted and the run goes past huge
    st2, _, _ = s.advance(grid, Y, nxt, T, huge=1e300, max_steps=1)
    assert st2 == STATUS_RUNNING and s.t > t and np.max(np.abs(s.y)) > huge


def test_step_too_small():
    robot, y0, tau, damping = random_arm()
    s = Dop853State(robot, y0, 0.0, 1.0, 1e-300, 1e-300, tau, damping)
    st, _, info = s.advance(np.empty(0), np.empty((0, 8)), 0, 1.0)
    assert st == STATUS_STEP_TOO_SMALL and info == -1
    assert s.t < 1.0 and np.isfinite(s.y).all()


def test_energy_conserved_puma_free_fall(puma):
    grid = np.linspace(0.0, 10.0, 1001)
    Y, st, _, _, _ = integrate(puma, np.zeros(12), grid, 1e-10, 1e-10)
    assert st == STATUS_FINISHED
    E = energy(puma, Y[:, :6], Y[:, 6:])
    peak_T = E[:, 0].max()
    assert peak_T > 1.0
    drift = np.max(np.abs(E[:, 2] - E[0, 2]))
    assert drift < 1e-6 * peak_T, drift / peak_T
