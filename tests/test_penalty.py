"""The penalty / augmented-Lagrangian / trapezoidal scheme (core.sim.penalty; Jalon & Bayo
Sec 8.5, eqs. 8.121-8.135, seed 002).

What the book publishes (Examples 8.6 and 8.7), and what is checked here:
- Example 8.7, the Bricard: 40 s, h = 0.03 s, alpha = 1e7, mu = h/60, two Newton
  iterations per step, tolerance 5e-7; maximum energy error 0.03 %. Checked on the
  whole 40 s run, with the energy error taken against the peak kinetic energy (a
  datum-free scale). Measured: 0.013 %.
- Example 8.6, the five-link pendulum: 20 s, h = 0.008 s, alpha = 1e7, mu = h/80;
  vertical tip acceleration peaks near 180 m/s^2, energy error at most 1.3 %.
  In joint coordinates the pendulum is a tree: nothing is penalised, and the scheme
  is the trapezoidal rule with Newton iterations. With the book's bodies (unit
  masses lumped at the joints) the peak is 160 m/s^2 in the first 2 s and 171 m/s^2
  over the exact 20 s motion (the fall is chaotic: the runs part after about 4 s).
  The rods of robots/five_link_pendulum.toml give 340-420 m/s^2. The energy error
  is 0.17 % of the peak kinetic energy (0.27 % of |E(0)|).
- Fig. 8.26, the pendulum's constraint errors: about 1e-5 at alpha = 1e7, 1e-4 at
  1e6, and 1e-5 again at 1e6 with one augmented-Lagrangian iteration. The book
  penalises the pendulum's joints (natural coordinates). The joint-coordinate
  analogue used here cuts the pendulum's joint P2: rods 3-5 hang from a 6-DOF
  virtual chain (3 prismatic + 2 revolute, massless in effect), and a revolute loop
  joins rod 2 and rod 3. The loop carries the pendulum's joint force (up to about
  100 N). Measured over the first 2 s: 9.2e-6, 9.2e-5 and 1.1e-5.
  On the Bricard with the same settings the loop force is only 25 N, and the levels
  are 2.5e-6, 2.5e-5 and 3.2e-6. In both models the closure error is max|lambda| /
  alpha, as for a spring.
- Convergence to the exact constrained solution (scipy DOP853 on the
  Lagrange-multiplier forward dynamics, rtol 1e-12) as h -> 0, on a planar four-bar:
  second order.
"""
from __future__ import annotations

import math
import os
from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

from armdyn.core import constrained_forward_dynamics, cut_joint_forces, velocity_transformation
from armdyn.core import SimulationCancelled, SimulationError
from armdyn.core import forward_kinematics
from armdyn.core import Assembly, Chain, Loop, Mechanism, Placement
from armdyn.core import load_mechanism
from armdyn.core.sim.penalty import penalty_simulate, penalty_simulate_chunks
from armdyn.core import JointType, Link
from armdyn.core import Trajectory

ROBOTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robots")


# ----------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------

def _rod(name, length, mass, theta, actuated=False):
    return Link(JointType.REVOLUTE, a=length, theta=theta, mass=mass, com=(-length / 2, 0, 0),
                inertia=(1e-4, mass * length ** 2 / 12, mass * length ** 2 / 12, 0, 0, 0),
                name=name, actuated=actuated)


def fourbar() -> Mechanism:
    """A planar crank-rocker (crank 0.2 m, coupler 0.5 m, rocker 0.4 m, ground 0.45 m),
    gravity in the plane; the loop joint C is cut between coupler and rocker."""
    return Mechanism("four-bar", chains=(
        Chain("crank side", (_rod("crank", 0.2, 1.0, math.radians(60), True),
                             _rod("coupler", 0.5, 2.0, math.radians(-34.7)))),
        Chain("rocker side", (_rod("rocker", 0.4, 1.5, math.radians(75.2)),),
              base=Placement((0.45, 0.0, 0.0)))),
        loops=(Loop("C", "revolute", ("coupler", "rocker")),), gravity=(0.0, -9.81, 0.0))


def jalon_bodies(mech: Mechanism) -> Mechanism:
    """Jalon & Bayo Ex. 8.6 bodies: each 1 m link has unit mass lumped equally at its two
    joints (0.5 kg at each end: com at mid-length, 0.25 kg m^2 across; a small axial
    moment because the format wants it positive)."""
    chains = tuple(replace(c, links=tuple(
        replace(link, mass=1.0, com=(-0.5, 0.0, 0.0), inertia=(1e-4, 0.25, 0.25, 0, 0, 0))
        for link in c.links)) for c in mech.chains)
    return replace(mech, chains=chains, warnings=())


def bricard() -> Mechanism:
    return load_mechanism(os.path.join(ROBOTS, "bricard.toml"))


def pendulum() -> Mechanism:
    return jalon_bodies(load_mechanism(os.path.join(ROBOTS, "five_link_pendulum.toml")))


def _virtual(name, joint, alpha, theta=0.0, b=0.0):
    return Link(joint, b=b, alpha=alpha, theta=theta, mass=1e-6,
                inertia=(1e-9, 1e-9, 1e-9, 0, 0, 0), name=name)


def cut_pendulum(tree: Mechanism) -> Mechanism:
    """The pendulum `tree` with its joint P2 cut: rods 1-2 from the base as before; rods
    3-5 on a virtual chain of 3 prismatic + 2 revolute joints (1e-6 kg) ending in rod
    3's own revolute; a revolute loop 'P2' joins rod 2 and rod 3. Same motion, 10 tree
    joints, 5 closure rows, 5 DOF. (The virtual wrist is singular where the P2 axis is
    parallel to the base y axis; the first seconds of the fall stay far from it.)"""
    links = tree.chains[0].links
    target = forward_kinematics(tree, tree.q_home).frames[3]  # rod 3's own frame
    R, P = JointType.REVOLUTE, JointType.PRISMATIC

    def float_links(v):
        return (_virtual("v1", P, -math.pi / 2, 0.0, v[0]),
                _virtual("v2", P, math.pi / 2, math.pi / 2, v[1]),
                _virtual("v3", P, math.pi / 2, math.pi / 2, v[2]),
                _virtual("v4", R, math.pi / 2, v[3]), _virtual("v5", R, -math.pi / 2, v[4]),
                replace(links[2], theta=v[5]))

    def misfit(v):
        chain = Mechanism("fit", chains=(Chain("float", float_links(v)),))
        F = forward_kinematics(chain, chain.q_home).frames[-1]
        return np.concatenate([(F[:3, :3] - target[:3, :3]).ravel(), F[:3, 3] - target[:3, 3]])

    fit = least_squares(misfit, np.full(6, 0.2), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    assert np.max(np.abs(fit.fun)) < 1e-10
    a3 = links[2].alpha
    loop = Loop("P2", "revolute", (links[1].name, links[2].name),
                at=((0, 0, 0), (-links[2].a, 0, 0)),
                axis=((0, 0, 1), (0, math.sin(a3), math.cos(a3))))
    return Mechanism("five-link pendulum, P2 cut",
                     chains=(Chain("upper", links[:2], base=tree.chains[0].base),
                             Chain("float", float_links(fit.x) + links[3:])),
                     loops=(loop,), gravity=tree.gravity,
                     assembly=Assembly(independent=tuple(link.name for link in links)))


# ----------------------------------------------------------------------------------
# References and measures
# ----------------------------------------------------------------------------------

def lagrange_reference(mech, duration, qd0_independent, times):
    """q (S, n) at `times` by scipy DOP853 (rtol = atol = 1e-12) on the exact
    Lagrange-multiplier forward dynamics, from the closed home pose."""
    n = mech.n
    q0 = mech.q_home
    qd0 = velocity_transformation(mech, q0).R @ np.asarray(qd0_independent, dtype=float)
    zero = np.zeros(n)

    def rhs(t, y):
        return np.concatenate([y[n:], constrained_forward_dynamics(mech, y[:n], y[n:], zero)])

    sol = solve_ivp(rhs, (0.0, duration), np.concatenate([q0, qd0]), method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=times)
    assert sol.success
    return sol.y[:n].T


def energy_error(tr: Trajectory) -> float:
    """max |E(t) - E(0)| over the peak kinetic energy (datum-free)."""
    E = tr.energy[:, 2]
    return float(np.max(np.abs(E - E[0])) / np.max(tr.energy[:, 0]))


# ----------------------------------------------------------------------------------
# Convergence to the exact constrained motion
# ----------------------------------------------------------------------------------

def test_fourbar_converges_to_the_lagrange_multiplier_solution_at_second_order():
    mech = fourbar()
    T, crank_rate = 1.0, 3.0  # the crank swings back and whips through ~18 rad/s
    grid = np.linspace(0.0, T, 101)
    ref = lagrange_reference(mech, T, [crank_rate], grid)
    errors = []
    for h in (0.01, 0.005, 0.0025):
        tr = penalty_simulate(mech, T, qd0=[crank_rate, 0, 0], h=h, al_iterations=2,
                              dt_out=0.01)
        assert np.allclose(tr.t, grid, atol=1e-12)
        errors.append(np.max(np.abs(tr.q - ref)))
        assert tr.loop_residual.max() < 2e-6
    # trapezoidal rule: error ~ h^2 (measured 1.06e-2, 2.60e-3, 6.55e-4 rad)
    assert 3.3 < errors[0] / errors[1] < 4.7, errors
    assert 3.3 < errors[1] / errors[2] < 4.7, errors
    assert errors[2] < 1e-3, errors


def test_pure_penalty_error_floor_is_set_by_alpha():
    """alpha = 1e7 leaves closure errors of max|lambda| / alpha ~ 1e-5 on the four-bar
    (cut force up to 100 N), which bounds the accuracy as h -> 0; one AL iteration
    lifts it."""
    mech = fourbar()
    grid = np.linspace(0.0, 1.0, 101)
    ref = lagrange_reference(mech, 1.0, [3.0], grid)
    pure = penalty_simulate(mech, 1.0, qd0=[3, 0, 0], h=0.0025, al_iterations=0, dt_out=0.01)
    lam_max = np.abs(pure.cut_forces).max()
    assert 80 < lam_max < 120
    assert pure.loop_residual.max() == pytest.approx(lam_max / 1e7, rel=0.1)
    assert np.max(np.abs(pure.q - ref)) < 2e-3
    al = penalty_simulate(mech, 1.0, qd0=[3, 0, 0], h=0.0025, al_iterations=1, dt_out=0.01)
    assert al.loop_residual.max() < pure.loop_residual.max() / 5


def test_cut_forces_are_the_lagrange_multipliers_with_their_sign():
    mech = fourbar()
    tr = penalty_simulate(mech, 1.0, qd0=[3, 0, 0], h=0.0025, al_iterations=1, dt_out=0.01)
    assert tr.cut_forces.shape == (len(tr), 2)
    exact = cut_joint_forces(mech, tr.q, tr.qd, tr.tau)
    assert np.allclose(tr.cut_forces[0], exact[0], rtol=1e-9, atol=1e-9)  # exact start
    d = tr.cut_forces - exact
    # measured 0.2 % rms, 0.4 % at worst; the opposite sign would be 200 %
    assert np.sqrt(np.mean(d ** 2) / np.mean(exact ** 2)) < 0.02
    assert np.abs(d).max() < 0.02 * np.abs(exact).max()


# ----------------------------------------------------------------------------------
# The book's levels (Examples 8.6 and 8.7, Figs. 8.24-8.28)
# ----------------------------------------------------------------------------------

def test_bricard_energy_error_at_the_book_settings():
    """Ex. 8.7: 40 s, h = 0.03 s, alpha = 1e7, mu = h/60, 2 Newton iterations, tol 5e-7:
    max energy error 0.03 % (book). Measured 0.013 % of the peak kinetic energy
    (0.0020 % of |E(0)| = 29.43 J with the potential zero at P0)."""
    stats: dict = {}
    h = 0.03
    tr = penalty_simulate(bricard(), 40.0, h=h, alpha=1e7, mu=h / 60, al_iterations=0,
                          newton_iterations=2, newton_tol=5e-7, stats=stats)
    assert tr.t[-1] == 40.0 and stats["steps"] == 1334
    assert energy_error(tr) < 2e-4
    assert np.max(tr.energy[:, 0]) > 4.0  # a real swing (4.55 J)
    # every step converged within the two iterations, as in the book
    assert stats["unconverged_steps"] == 0
    assert tr.loop_residual.max() < 5e-6


def test_five_link_pendulum_with_the_book_bodies():
    """Ex. 8.6: 20 s, h = 0.008 s; tip acceleration peaks near 180 m/s^2 (Fig. 8.24),
    energy error at most 1.3 % (Fig. 8.25). A tree in joint coordinates: the plain
    trapezoidal rule. Measured: 160 m/s^2 (vertical, at 0-2 s, as the exact motion),
    0.17 % of the peak kinetic energy (0.27 % of |E(0)|)."""
    mech = pendulum()
    assert mech.loops == () and mech.dof == 5
    h = 0.008
    tr = penalty_simulate(mech, 20.0, h=h, alpha=1e7, mu=h / 80)
    assert tr.cut_forces.shape == (len(tr), 0) and not tr.loop_residual.any()
    assert energy_error(tr) < 0.005
    tip = np.array([forward_kinematics(mech, q).origins[-1] for q in tr.q])
    a_vertical = (tip[2:, 1] - 2 * tip[1:-1, 1] + tip[:-2, 1]) / h ** 2
    assert 140 < np.abs(a_vertical).max() < 210


@pytest.mark.parametrize("model", ["cut pendulum", "bricard"])
def test_constraint_error_levels_against_alpha(model):
    """Fig. 8.26 (pendulum, h = 0.008 s, mu = h/80): about 1e-5 at alpha = 1e7, 1e-4 at
    1e6, and 1e-5 again at 1e6 with one augmented-Lagrangian iteration.
    Cut pendulum (2 s), measured: 9.2e-6, 9.2e-5, 1.1e-5. Bricard: 2.5e-6, 2.5e-5, 3.2e-6
    (smaller loop force, 25 N). Pure penalty: max|Phi| = max|lambda| / alpha."""
    mech = cut_pendulum(pendulum()) if model == "cut pendulum" else bricard()
    h = 0.008
    runs = {}
    for alpha, al in ((1e7, 0), (1e6, 0), (1e6, 1)):
        tr = penalty_simulate(mech, 2.0, h=h, alpha=alpha, mu=h / 80, al_iterations=al)
        runs[alpha, al] = tr.loop_residual.max()
        if al == 0:
            assert runs[alpha, al] == pytest.approx(np.abs(tr.cut_forces).max() / alpha,
                                                    rel=0.05)
    if model == "cut pendulum":
        assert 5e-6 < runs[1e7, 0] < 2e-5
        assert 5e-5 < runs[1e6, 0] < 2e-4
        assert runs[1e6, 1] < 2e-5
    assert 8 < runs[1e6, 0] / runs[1e7, 0] < 12
    assert runs[1e6, 0] / runs[1e6, 1] > 5  # "down an order of magnitude"


def test_cut_pendulum_moves_like_the_tree_pendulum():
    """The cut model used for Fig. 8.26 is the same mechanism: its tip follows the tree's
    (measured 4e-5 m apart after 1 s of a chaotic fall)."""
    tree = pendulum()
    cut = cut_pendulum(tree)
    assert cut.dof == 5 and cut.n == 10
    a = penalty_simulate(tree, 1.0, h=0.002, dt_out=0.1)
    b = penalty_simulate(cut, 1.0, h=0.002, al_iterations=2, dt_out=0.1)
    tip_a = np.array([forward_kinematics(tree, q).origins[-1] for q in a.q])
    tip_b = np.array([forward_kinematics(cut, q).origins[-1] for q in b.q])
    assert np.max(np.linalg.norm(tip_a - tip_b, axis=1)) < 5e-4


# ----------------------------------------------------------------------------------
# The run: chunks, sampling, forces, errors
# ----------------------------------------------------------------------------------

def test_chunks_stream_the_whole_run():
    mech = fourbar()
    gen = penalty_simulate_chunks(mech, 0.2, h=0.01, chunk_duration=0.05)
    chunks = []
    while True:
        try:
            chunks.append(next(gen))
        except StopIteration as stop:
            whole = stop.value
            break
    assert len(chunks) >= 4 and chunks[0].t[0] == 0.0
    joined = Trajectory.concatenate(chunks)
    once = penalty_simulate(mech, 0.2, h=0.01)
    for f in ("t", "q", "qd", "qdd", "tau", "energy", "cut_forces", "loop_residual"):
        assert np.array_equal(getattr(joined, f), getattr(whole, f))
        assert np.array_equal(getattr(once, f), getattr(whole, f))
    assert np.allclose(whole.t, np.arange(21) * 0.01, atol=1e-12)


def test_step_times_sampling_and_exact_end():
    mech = fourbar()
    tr = penalty_simulate(mech, 0.1, h=0.03)
    assert np.allclose(tr.t, [0, 0.03, 0.06, 0.09, 0.1]) and tr.t[-1] == 0.1
    tr = penalty_simulate(mech, 0.1, h=0.03, dt_out=0.06)
    assert np.allclose(tr.t, [0, 0.06, 0.1])
    assert tr.kind == "free-fall"
    assert penalty_simulate(mech, 0.1, h=0.03, tau=[1, 0, 0]).kind == "simulation"


def test_torque_function_equals_constant_torque_and_damping_dissipates():
    mech = fourbar()
    a = penalty_simulate(mech, 0.3, h=0.01, tau=[0.5, 0, 0])
    b = penalty_simulate(mech, 0.3, h=0.01, tau=lambda t, q, qd: np.array([0.5, 0, 0]))
    assert np.array_equal(a.q, b.q) and np.array_equal(a.tau, b.tau)
    assert np.all(a.tau[:, 0] == 0.5)
    c = 0.3
    d = penalty_simulate(mech, 2.0, qd0=[3, 0, 0], h=0.005, damping=c)
    E = d.energy[:, 2]
    assert np.allclose(d.tau, -c * d.qd)
    assert E[-1] < E[0] - 0.5
    assert np.all(np.diff(E) < 1e-3)  # no step gains energy beyond the rule's error


def test_a_tree_and_a_serial_arm_run_without_loops():
    """No loops: the trapezoidal rule with Newton on M q'' + h = tau, against DOP853."""
    from armdyn.core import forward_dynamics
    from armdyn.core import load_robot
    for model in (pendulum(), load_robot(os.path.join(ROBOTS, "two_link_planar.toml"))):
        tr = penalty_simulate(model, 0.5, h=0.002, dt_out=0.1)
        n = model.n
        assert tr.cut_forces.shape == (len(tr), 0) and not tr.loop_residual.any()
        zero = np.zeros(n)

        def rhs(t, y):
            return np.concatenate([y[n:], forward_dynamics(model, y[:n], y[n:], zero)])

        ref = solve_ivp(rhs, (0, 0.5), np.concatenate([model.q_home, zero]), method="DOP853",
                        rtol=1e-12, atol=1e-12, t_eval=tr.t)
        assert np.max(np.abs(tr.q - ref.y[:n].T)) < 1e-3


def test_progress_and_cancel():
    mech = fourbar()
    seen = []
    penalty_simulate(mech, 0.5, h=0.01, progress=seen.append)
    assert seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen) and seen == sorted(seen)
    with pytest.raises(SimulationCancelled) as info:
        penalty_simulate(mech, 5.0, h=0.01, cancel=lambda: True)
    done = info.value.result
    assert 0 < len(done) and done.t[-1] < 5.0 and info.value.time == done.t[-1]


def test_newton_divergence_raises_with_the_samples_so_far():
    mech = fourbar()

    def kick(t, q, qd):  # a torque no step of 0.01 s can follow
        return np.array([1e4 if t > 0.05 else 0.0, 0.0, 0.0])

    with pytest.raises(SimulationError) as info:
        penalty_simulate(mech, 1.0, h=0.01, tau=kick)
    err = info.value
    assert "diverged" in err.reason or "blew up" in err.reason
    assert 0.04 < err.time < 0.2
    assert len(err.result) >= 5 and err.result.t[0] == 0.0
    assert err.result.cut_forces.shape == (len(err.result), 2)


@pytest.mark.parametrize("kwargs", [dict(h=0.0), dict(h=-1.0), dict(alpha=-1.0),
                                    dict(alpha=[1e7]), dict(mu=-0.1),
                                    dict(al_iterations=-1), dict(al_iterations=1.5),
                                    dict(newton_iterations=0), dict(newton_tol=-1.0),
                                    dict(damping=-1.0), dict(q0=[0.0, 1.0]),
                                    dict(dt_out=0.0), dict(tau=[1.0, 2.0]),
                                    dict(qd0=[np.nan, 0, 0])])
def test_invalid_arguments(kwargs):
    with pytest.raises(ValueError):
        penalty_simulate(fourbar(), 0.1, **kwargs)


@pytest.mark.parametrize("duration", [0.0, -1.0, math.inf, math.nan])
def test_invalid_duration(duration):
    with pytest.raises(ValueError):
        penalty_simulate(fourbar(), duration)
    with pytest.raises(ValueError):
        next(penalty_simulate_chunks(fourbar(), duration))
