"""Compile (or load from numba's cache) the dynamics kernels before they are needed.

The first call of a numba kernel compiles it: a minute or two for the whole core on
a fresh machine, well under a second once numba's on-disk cache holds it. An
application calls `warm_up_display()` before its first window (the few kernels that
draw and pose an arm: seconds on a fresh machine), then `warm_up()` in a background
thread, in the order a user is likely to need the rest (a run first), so that later
actions wait for the compiler only if they come before it is done.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import numpy as np

from .algorithms.dynamics import forward_dynamics, inverse_dynamics
from .algorithms.tree_dynamics import (articulated_body_inertias, composite_body_inertias,
                                       convective_torques, energy, gravity_torques,
                                       mass_matrix, udu_factors)
from .algorithms.closed_chains import velocity_transformation
from .algorithms.hybrid_dynamics import with_force_elements
from .algorithms.kinematics import forward_kinematics
from .algorithms.loops import assemble, loop_residual
from .algorithms.regressor import joint_torque_regressor
from .model.mechanism import Mechanism
from .model.parts import Chain, JointType, Link, Loop, Placement
from .model.robot import Robot
from .sim.simulation import simulate
from .sim.motions import run_inverse_dynamics


def _tiny_robot() -> Robot:
    """A revolute-prismatic arm: both joint types, so every branch is compiled."""
    links = (Link(JointType.REVOLUTE, a=0.3, alpha=np.pi / 2, mass=1.0, com=(-0.15, 0, 0),
                  inertia=(0.01, 0.02, 0.02, 0, 0, 0)),
             Link(JointType.PRISMATIC, b=0.2, mass=0.5, com=(0, 0, -0.1),
                  inertia=(0.01, 0.01, 0.005, 0, 0, 0)))
    return Robot("warm-up", links)


def _tiny_four_bar() -> Mechanism:
    """A parallelogram four-bar in the vertical plane (crank and rocker 0.2 m up, the
    coupler 0.45 m across, a revolute cut joint): the kernels of closed chains."""
    def rod(name: str, length: float, theta: float, actuated: bool = False) -> Link:
        return Link(JointType.REVOLUTE, a=length, theta=theta, name=name, actuated=actuated,
                    mass=1.0, com=(-length / 2, 0.0, 0.0),
                    inertia=(1e-4, length ** 2 / 12, length ** 2 / 12, 0.0, 0.0, 0.0))
    return Mechanism(
        "warm-up four-bar",
        (Chain("crank side", (rod("crank", 0.2, np.pi / 2, True),
                              rod("coupler", 0.45, -np.pi / 2))),
         Chain("rocker side", (rod("rocker", 0.2, np.pi / 2),), base=Placement((0.45, 0, 0)))),
        loops=(Loop("C", "revolute", ("coupler", "rocker")),), gravity=(0.0, -9.81, 0.0))


def _tiny_floating_body() -> Mechanism:
    """A free body (a floating base): the integrator's kernels stepping a chart of q
    (`core.kernels.charts`), which the first run of the human loaded inside the run,
    holding Python's lock in the run's thread for a large part of 0.4 s."""
    return Mechanism("warm-up body", (Chain("body", (
        Link(JointType.FREE, name="body", mass=1.0, inertia=(0.01, 0.02, 0.03, 0, 0, 0)),)),))


def load_compiler() -> None:
    """Load numba's compiler registries (its typing and lowering of Python and numpy,
    and scipy.linalg for its BLAS), which the first kernel compiled or loaded from the
    cache would otherwise load: some 500 modules, 0.3 s of CPU. A window calls this
    before it imports Qt, whose import hook reads the source of every module imported
    after it (`armdyn.gui.app`); later kernels only load their own code."""
    from numba.core.registry import cpu_target

    cpu_target.target_context.refresh()  # what numba runs before a kernel's first load


def warm_up_display() -> None:
    """The kernels a window needs to draw an arm and follow its pose sliders: the
    frames (tests/gui/test_app.py checks that the window needs no other). Its energy,
    shown after a run, compiled 5 s of CPU more before the first window."""
    robot = _tiny_robot()
    forward_kinematics(robot, robot.q_home)


def warm_up(*, tree_runs: bool = True, last_first: bool = False) -> None:
    """Run every public algorithm once on a tiny arm and a tiny four-bar (single states
    and batches), runs first (`warm_up_steps`; with `last_first`, in the opposite order).
    Without `tree_runs`, leave out the runs whose kernels a run of an arm (no loops, no
    floating base) compiles too: its integrator and its inverse run (`warm_up_apart`)."""
    steps = warm_up_steps(tree_runs=tree_runs)
    for step in reversed(steps) if last_first else steps:
        step()


def warm_up_steps(*, tree_runs: bool = True) -> list[Callable[[], object]]:
    """The steps of `warm_up`, in its order: each compiles (or loads) a few kernels."""
    robot = _tiny_robot()
    q, qd = robot.q_home, np.array([0.1, -0.2])
    tau = np.array([0.5, -1.0])
    Q, QD = np.tile(q, (2, 1)), np.tile(qd, (2, 1))

    def inverse_run():
        from .sweeps.plan import reduce_run  # (with core.sim.measured: not at a start)
        reduce_run(run_inverse_dynamics(robot, q, q + 0.1, 0.1, dt_out=0.05), "inverse")

    def forward():
        for method in ("denoc", "composite"):
            forward_dynamics(robot, q, qd, tau, method=method)
        forward_dynamics(robot, Q, QD, np.tile(tau, (2, 1)))

    mech = _tiny_four_bar()
    tree = [lambda: simulate(robot, 0.02, dt_out=0.01)] if tree_runs else []
    steps = tree + [
        lambda: simulate(_tiny_floating_body(), 0.02, dt_out=0.01),
        lambda: simulate(mech, 0.02, dt_out=0.01),  # (its own kernels: `loops_of`)
        lambda: forward_kinematics(robot, q),
        lambda: inverse_dynamics(robot, q, qd, qd)]
    if tree_runs:
        steps.append(inverse_run)
    steps += [forward,
              lambda: (mass_matrix(robot, q), udu_factors(robot, q)),
              lambda: (articulated_body_inertias(robot, q), composite_body_inertias(robot, q)),
              lambda: (gravity_torques(robot, q), convective_torques(robot, q, qd),
                       energy(robot, q, qd)),
              # what a floating inverse run adds at each step
              lambda: with_force_elements(robot, q, qd),
              lambda: joint_torque_regressor(robot, Q, QD, QD)]
    if tree_runs:
        steps.append(lambda: simulate(robot, 0.02, dt_out=0.01,
                                      tau=lambda t, q, qd: np.zeros(2)))
    steps.append(lambda: _warm_up_loops(mech))
    return steps


def _warm_up_loops(mech: Mechanism) -> None:
    q = mech.q_home
    qd = velocity_transformation(mech, q).R @ np.ones(mech.dof)
    loop_residual(mech, q)
    assemble(mech, q + 0.05)
    forward_dynamics(mech, q, qd, np.zeros(mech.n))
    inverse_dynamics(mech, q, qd, np.zeros(mech.n))
    run_inverse_dynamics(mech, q, q, 0.05, dt_out=0.05)


def warm_up_apart() -> subprocess.Popen | None:
    """Start `warm_up(tree_runs=False)` in a process of its own, at a lower priority, and
    return it (None if it could not start). On a fresh cache it compiles into numba's
    cache on the other core while this process compiles an arm's runs (numba compiles
    one kernel at a time per process, under its lock); this process then runs
    `warm_up(last_first=True)`, which loads what the other has compiled (each kernel
    from the cache in a fraction of a second) and compiles the rest, from the other end:
    a busy machine that leaves the other process no time only brings back one process's
    time. The child has numba's cache folder of this one (`core.kernels.cache`, through
    the environment)."""
    code = ("import os; os.nice(10); import armdyn.core.warmup as w; "
            "w.warm_up(tree_runs=False)")
    try:
        return subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None
