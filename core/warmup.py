"""Compile (or load from numba's cache) the dynamics kernels before they are needed.

The first call of a numba kernel compiles it: a minute or two for the whole core on
a fresh machine, well under a second once numba's on-disk cache holds it. An
application calls `warm_up_display()` before its first window (the few kernels that
draw and pose an arm: seconds on a fresh machine), then `warm_up()` in a background
thread, in the order a user is likely to need the rest (a run first), so that later
actions wait for the compiler only if they come before it is done.
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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


class Step(NamedTuple):
    """One step of `warm_up`: `run()` compiles (or loads) a few kernels; `name` names it
    among the steps (a claim's file name, `warm_up_apart`); `cost`: the CPU time it takes
    on a fresh cache, s (as measured on this project's 2-core machine: an estimate)."""

    name: str
    run: Callable[[], object]
    cost: float = 1.0


def warm_up(*, tree_runs: bool = True, claims: str | os.PathLike | None = None,
            other: subprocess.Popen | None = None) -> None:
    """Run every public algorithm once on a tiny arm and a tiny four-bar (single states
    and batches), runs first (`warm_up_steps`). Without `tree_runs`, leave out the runs
    whose kernels a run of an arm (no loops, no floating base) compiles too: its
    integrator and its inverse run.

    `claims`: a folder shared with another process warming up the same kernels into the
    same numba cache (`warm_up_apart`'s `other`): each step is first claimed there, a
    step the other has claimed is left to it and run here last, once the other is done
    with it (its kernels are then loaded from the cache), so that no step is compiled
    twice. This process does not wait for a step of the other that would end later than
    if it compiled the step itself (`_wait_for`: the other has ended, or a loaded machine
    gives it too little CPU for what is left of the step): it then compiles it too, and
    compiles one at once when the other, at its pace since it claimed it, would end it
    after this process has done every step left unclaimed and that one."""
    steps = warm_up_steps(tree_runs=tree_runs)
    if claims is None:
        for step in steps:
            step.run()
        return
    claims, left = Path(claims), []
    for i, step in enumerate(steps):
        if _claimed_and_run(claims, step):
            continue
        # the other's: compiled here too if the other, at its pace since its claim, would
        # end it after this process has done every step not claimed and that one
        after = step.cost + sum(s.cost for s in steps[i + 1:]
                                if not (claims / s.name).exists())
        if _time_to_finish(claims, step, other) > after:
            step.run()
        else:
            left.append(step)
    for step in left:  # the other's: wait for it, then load its kernels
        _wait_for(claims, step, other)
        step.run()


def warm_up_claiming(claims: str | os.PathLike, parent: int) -> None:
    """The other process of `warm_up_apart`: run the steps of `warm_up(tree_runs=False)`
    that no one has claimed in the folder `claims`, claiming each, and return when none is
    left or when the process `parent` (the application's) has ended (on Linux at once,
    `_end_with`; elsewhere before the next step)."""
    _end_with(parent)
    for step in warm_up_steps(tree_runs=False):
        if os.getppid() != parent:
            return  # the application has gone: its warm-up with it
        _claimed_and_run(Path(claims), step)


def _end_with(parent: int) -> None:
    """On Linux, have the kernel kill this process when the thread that started it (in
    the process `parent`) ends: a crashed application does not leave it compiling."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # (ended before the call)
        os._exit(0)


def _claimed_and_run(claims: Path, step: Step) -> bool:
    """Claim `step` in `claims` (an exclusive create of the file named after it, holding
    this process's CPU time so far, s), and run it if that succeeded, then mark it done (a
    second file). False if it was claimed."""
    try:
        claim = os.open(claims / step.name, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    try:
        os.write(claim, repr(_cpu_time(os.getpid()) or 0.0).encode())
    finally:
        os.close(claim)
    step.run()
    (claims / f"{step.name}.done").touch()
    return True


#: The share of a core that the other process must be getting, times the part of its
#: step left (`_wait_for`), for `warm_up` to wait for that step rather than compile it.
WAIT_SHARE = 1.0
#: The least part of a step's cost that `_wait_for` counts as left (a slower machine's
#: step takes longer than its cost).
LEAST_LEFT = 0.25
#: How often `warm_up` looks whether the other process has done a step, s.
WAIT_POLL_S = 0.05


def _wait_for(claims: Path, step: Step, other: subprocess.Popen | None) -> None:
    """Return once the other process has done `step` (its file "<name>.done" in
    `claims`), or has ended, or would take longer to finish it than this process to
    compile it: over the last second (measured while this one waits) it had less than
    WAIT_SHARE times the part of the step it has left (its cost less the CPU time spent
    since its claim, at least LEAST_LEFT of it) of a core. At once without `other`, or
    where the system does not tell a process's CPU time (not Linux)."""
    if other is None:
        return
    try:
        claimed_at = float((claims / step.name).read_text() or "nan")
    except (OSError, ValueError):
        claimed_at = float("nan")
    done = claims / f"{step.name}.done"
    history: list[tuple[float, float]] = []  # (wall time, the other's CPU time), s
    while not done.exists() and other.poll() is None:
        cpu = _cpu_time(other.pid)
        if cpu is None:
            return
        now = time.monotonic()
        history.append((now, cpu))
        while now - history[0][0] > 1.0 + WAIT_POLL_S:
            history.pop(0)
        then, cpu_then = history[0]
        if now - then >= 1.0:
            share = (cpu - cpu_then) / (now - then)
            spent = cpu - claimed_at if claimed_at == claimed_at else 0.0
            if share < WAIT_SHARE * _part_left(step, spent):
                return
        time.sleep(WAIT_POLL_S)


def _time_to_finish(claims: Path, step: Step, other: subprocess.Popen | None) -> float:
    """How long the other process will take to finish `step` at the pace it has had since
    it claimed it (the CPU time it has spent on it against the wall time since its claim,
    at least 2 s ago), s: 0 if it is done, has ended, or has just claimed it (or where
    the system does not tell)."""
    claim = claims / step.name
    cpu = _cpu_time(other.pid) if other is not None and other.poll() is None else None
    try:
        since = time.time() - claim.stat().st_mtime
        claimed_at = float(claim.read_text())
    except (OSError, ValueError):
        return 0.0
    if cpu is None or since < 2.0 or (claims / f"{step.name}.done").exists():
        return 0.0
    spent = max(cpu - claimed_at, 0.0)
    left = step.cost * _part_left(step, spent)
    return float("inf") if spent == 0.0 else left * since / spent


def _part_left(step: Step, spent: float) -> float:
    """The part of `step` left after `spent` s of CPU on it: 1 - spent / cost, at least
    LEAST_LEFT (a slower machine's step takes longer than its cost) and at most 1."""
    return min(max(1.0 - spent / step.cost, LEAST_LEFT), 1.0)


def _cpu_time(pid: int) -> float | None:
    """The CPU time (user and system) of the process `pid` so far, s; None where the
    system does not tell (not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def warm_up_steps(*, tree_runs: bool = True) -> list[Step]:
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

    # built by the first step that needs it: assembling its loop compiles the closure
    # kernels (`closure_at`, 7 s of CPU), which a process that leaves the four-bar's
    # steps to the other should not compile too
    mech = functools.cache(_tiny_four_bar)
    tree = [Step("arm run", lambda: simulate(robot, 0.02, dt_out=0.01), 20.0)] if tree_runs else []
    # the largest first (its cost: CPU s on a fresh cache, each after those before): two
    # processes sharing the steps meet on a small one; the loops' last (on the four-bar's)
    steps = tree + [
        Step("four-bar run", lambda: simulate(mech(), 0.02, dt_out=0.01), 39.5),  # (`loops_of`)
        Step("forward", forward, 12.0),
        Step("floating run", lambda: simulate(_tiny_floating_body(), 0.02, dt_out=0.01),
             9.0),
        # (one step: the factors and the inertias share the articulated kernel)
        Step("mass matrix", lambda: (mass_matrix(robot, q), udu_factors(robot, q),
                                     articulated_body_inertias(robot, q),
                                     composite_body_inertias(robot, q)), 2.6),
        Step("inverse", lambda: inverse_dynamics(robot, q, qd, qd), 1.5)]
    if tree_runs:
        steps.append(Step("arm inverse run", inverse_run, 3.4))
    steps += [Step("regressor", lambda: joint_torque_regressor(robot, Q, QD, QD), 1.1),
              # what a floating inverse run adds at each step
              Step("force elements", lambda: with_force_elements(robot, q, qd), 1.1),
              Step("frames", lambda: forward_kinematics(robot, q), 0.1),
              Step("torques", lambda: (gravity_torques(robot, q),
                                       convective_torques(robot, q, qd),
                                       energy(robot, q, qd)), 0.1)]
    if tree_runs:
        steps.append(Step("arm torque run", lambda: simulate(
            robot, 0.02, dt_out=0.01, tau=lambda t, q, qd: np.zeros(2)), 0.1))
    steps.append(Step("loops", lambda: _warm_up_loops(mech()), 1.8))
    return steps


def _warm_up_loops(mech: Mechanism) -> None:
    q = mech.q_home
    qd = velocity_transformation(mech, q).R @ np.ones(mech.dof)
    loop_residual(mech, q)
    assemble(mech, q + 0.05)
    forward_dynamics(mech, q, qd, np.zeros(mech.n))
    inverse_dynamics(mech, q, qd, np.zeros(mech.n))
    run_inverse_dynamics(mech, q, q, 0.05, dt_out=0.05)


def warm_up_apart(claims: str | os.PathLike) -> subprocess.Popen | None:
    """Start `warm_up_claiming(claims, this process)` in a process of its own, at a lower
    priority, and return it (None if it could not start): on a fresh cache, it compiles
    into numba's cache on the other core the steps that this process, running
    `warm_up(claims=claims, other=the process)` (an arm's runs first, which the other
    leaves out), has not claimed; both take the next unclaimed step, so that no step is
    compiled twice and both cores stay busy until the last, a small one. A busy machine
    that leaves the other process no time only brings back one process's time
    (`warm_up` does not wait for it). The child has numba's cache folder of this one
    (`core.kernels.cache`, through the environment), and ends when this process has
    ended; on Linux when the thread that called this has ended (`warm_up_claiming`): call
    it from a thread that lives as long as the warm-up (the main thread)."""
    code = ("import os, sys; os.nice(10); import armdyn.core.warmup as w; "
            "w.warm_up_claiming(sys.argv[1], int(sys.argv[2]))")
    try:
        return subprocess.Popen([sys.executable, "-c", code, os.fspath(claims),
                                 str(os.getpid())], env=dict(os.environ),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None
