"""Inverse-dynamics runs along a motion (chunked for a window, or whole): any joint motion
of `core.sim.joint_motions` or a measured one (`core.sim.measured`), and the cycloidal
rest-to-rest motion of seed 001 eqs. 22-23 from two poses.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..algorithms.closed_chains import closed_chain_inverse_dynamics, closed_chain_motion
from ..algorithms.dynamics import inverse_dynamics
from ..algorithms.loops import loop_residual
from ..algorithms.tree_dynamics import energy
from ..errors import ArgumentError
from ..model.arguments import (finite_array, finite_result, joint_vector, model_of,
                               physical_joint_values, positive_number)
from .driver import run_chunks
from .joint_motions import Cycloid, JointMotion, limit_violations
from .stops import limit_warnings
from .trajectory import RUN_COPIES, RunKind, Trajectory, check_sample_memory, output_grid


def cycloidal_trajectory(q_start, q_end, duration: float, times
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cycloidal rest-to-rest motion, seed 001 eqs. 22a-b and 23.

        q(t)   = q0 + (qT - q0)/T [t - T/(2 pi) sin(2 pi t / T)]
        qd(t)  = (qT - q0)/T [1 - cos(2 pi t / T)]
        qdd(t) = (qT - q0)/T (2 pi / T) sin(2 pi t / T)

    q_start, q_end: (n,); times: (S,) seconds, clamped to [0, T] (the arm rests
    outside). Returns q, qd, qdd, each (S, n) (`core.sim.joint_motions.Cycloid`).
    """
    q, qd, qdd = Cycloid(q_start, q_end, duration).sample(
        finite_array(times, (np.size(times),), "times"))
    finite_result(q, "the motion q")
    return q, finite_result(qd, "the rates qd"), finite_result(qdd, "the accelerations qdd")


def motion_warnings(model, q_start, q_end, duration: float) -> tuple[str, ...]:
    """Check a cycloidal motion q_start -> q_end (each (n,)) over `duration` s before a
    run: ArgumentError naming the argument when a pose is beyond the physical bounds
    (`core.model.arguments.physical_joint_values`) or when the motion's peak rate
    2 |qT - q0| / T is; returns the warnings of a pose outside the joint limits
    (`core.sim.stops.limit_warnings`), one sentence each."""
    m = model_of(model)
    q0 = physical_joint_values(m, joint_vector(q_start, m.n, "q_start"), "q_start")
    qT = physical_joint_values(m, joint_vector(q_end, m.n, "q_end"), "q_end")
    T = positive_number(duration, "duration")
    physical_joint_values(m, 2.0 * (qT - q0) / T, "q_end (the motion's peak rate "
                          "2 |q_end - q_start| / duration)", rates=True)  # eq. 22b at T/2
    return limit_warnings(m, q0, "q_start") + limit_warnings(m, qT, "q_end")


def _motion_of(model, motion_or_start, q_end, duration) -> tuple[JointMotion, tuple[str, ...]]:
    """The motion a run follows and its warnings: a JointMotion as given (its limit
    violations as warnings), or the cycloid q_start -> q_end over `duration` s
    (`motion_warnings`)."""
    if isinstance(motion_or_start, JointMotion):
        if q_end is not None or duration is not None:
            raise ArgumentError("a run along a motion takes no q_end or duration: the motion "
                                "has them")
        motion = motion_or_start
        if motion.n != model.n:
            raise ArgumentError(f"the {motion.name} motion moves {motion.n} joints; the model "
                                f"{model.name!r} has {model.n}")
        return motion, tuple(str(e) for e in limit_violations(model, motion))
    if q_end is None or duration is None:
        raise ArgumentError("give a motion (core.sim.joint_motions, load_motion), or q_start, "
                            "q_end and duration for the cycloid")
    return (Cycloid(motion_or_start, q_end, duration),
            motion_warnings(model, motion_or_start, q_end, duration))


def inverse_dynamics_chunks(model, motion=None, q_end=None, duration: float | None = None,
                            dt_out: float = 0.01, chunk_samples: int = 200, f_ext=None, *,
                            q_start=None) -> Iterator[Trajectory]:
    """Joint torques along a motion: `motion` is any JointMotion (a law of
    `core.sim.joint_motions`, or a measured `Motion` from `load_motion`, which is run at
    its own sample times), or, as before, a pose q_start (n,) (in place of `motion`, or
    by keyword) with q_end (n,) and `duration` s for the cycloidal motion q_start -> q_end.

    A serial arm or tree moves every joint along the motion. A mechanism with loops
    drives its actuated joints along it (the motion's values at those joints) and solves
    the other joints by position, velocity and acceleration analysis
    (`core.algorithms.closed_chains.closed_chain_motion`); its samples carry the cut-joint
    forces and the loop residual, and tau is zero at passive joints.
    A generator: yields Trajectory chunks of at most `chunk_samples` new samples (so a
    GUI can stream and cancel between them) and returns the whole Trajectory
    (StopIteration.value). Sample grid: `output_grid` (a run whose samples would not fit
    in memory is refused: `check_sample_memory`). The motion is checked first: the
    cycloid by `motion_warnings` (poses and rates beyond the physical bounds refused,
    poses outside the joint limits warned about), any other motion by
    `limit_violations` (every joint that leaves its limits, warned about); the warnings
    are in every chunk's `warnings`.
    """
    model = model_of(model)
    for name, kind in zip(model.joint_names, model.joint_types):
        if kind.nq != kind.nv:  # a quaternion is not interpolated entry by entry
            raise ArgumentError(f"joint motions move joint values one by one; joint "
                                f"{name!r} is {kind.value} (a quaternion): simulate a "
                                "floating system or a ball joint instead")
    motion, warnings = _motion_of(model, motion if q_start is None else q_start, q_end,
                                  duration)
    times = motion.sample_times(dt_out)
    check_sample_memory(times.size, RUN_COPIES * Trajectory.bytes_per_sample(model.n,
                                                                            model.kernel.m))
    loops = bool(model.loops)
    if loops:
        driven = list(model.actuated)
        guess = motion.sample(times[:1])[0][0].copy()
    parts = []
    for s in range(0, times.size, max(1, int(chunk_samples))):
        t = times[s:s + chunk_samples]
        q, qd, qdd = motion.sample(t)
        if not loops:
            tau = inverse_dynamics(model, q, qd, qdd, f_ext=f_ext)
            part = Trajectory(t, q, qd, qdd, tau, energy(model, q, qd),
                              kind=RunKind.INVERSE_DYNAMICS, warnings=warnings)
        else:
            q, qd, qdd = closed_chain_motion(model, guess, q[:, driven], qd[:, driven],
                                             qdd[:, driven], driven)
            guess = q[-1]
            results = [closed_chain_inverse_dynamics(model, q[i], qd[i], qdd[i], f_ext=f_ext)
                       for i in range(t.size)]
            part = Trajectory(t, q, qd, qdd, np.array([r.tau for r in results]),
                              energy(model, q, qd), kind=RunKind.INVERSE_DYNAMICS,
                              cut_forces=np.array([r.lam for r in results]),
                              loop_residual=np.array([np.max(np.abs(loop_residual(model, qi)),
                                                             initial=0.0) for qi in q]),
                              warnings=warnings)
        parts.append(part)
        yield part
    return Trajectory.concatenate(parts)


def run_inverse_dynamics(model, motion=None, q_end=None, duration: float | None = None,
                         dt_out: float = 0.01, f_ext=None, *, q_start=None) -> Trajectory:
    """The whole inverse-dynamics run of `inverse_dynamics_chunks` at once:
    `run_inverse_dynamics(model, motion)` along any motion, or
    `run_inverse_dynamics(model, q_start, q_end, duration)` along the cycloid."""
    chunks = inverse_dynamics_chunks(model, motion, q_end, duration, dt_out,
                                     chunk_samples=1_000_000, f_ext=f_ext, q_start=q_start)
    span = duration if duration is not None else getattr(motion, "duration", 1.0)
    return run_chunks(chunks, span)
