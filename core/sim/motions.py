"""Motions to run inverse dynamics along: the cycloidal rest-to-rest motion of seed 001
eqs. 22-23, and the runs along it (chunked for a window, or whole).
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
from .stops import limit_warnings
from .trajectory import RUN_COPIES, RunKind, Trajectory, check_sample_memory, output_grid


def cycloidal_trajectory(q_start, q_end, duration: float, times
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cycloidal rest-to-rest motion, seed 001 eqs. 22a-b and 23.

        q(t)   = q0 + (qT - q0)/T [t - T/(2 pi) sin(2 pi t / T)]
        qd(t)  = (qT - q0)/T [1 - cos(2 pi t / T)]
        qdd(t) = (qT - q0)/T (2 pi / T) sin(2 pi t / T)

    q_start, q_end: (n,); times: (S,) seconds, clamped to [0, T] (the arm rests
    outside). Returns q, qd, qdd, each (S, n).
    """
    q0 = joint_vector(q_start, np.size(q_start), "q_start")
    qT = joint_vector(q_end, q0.size, "q_end")
    T = positive_number(duration, "duration")
    t = np.clip(finite_array(times, (np.size(times),), "times"), 0.0, T)[:, None]
    slope = (qT - q0) / T
    w = 2.0 * np.pi / T
    q = q0 + slope * (t - np.sin(w * t) / w)  # eq. 22a
    qd = slope * (1.0 - np.cos(w * t))  # eq. 22b
    qdd = slope * w * np.sin(w * t)  # eq. 22b
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


def inverse_dynamics_chunks(model, q_start, q_end, duration: float, dt_out: float = 0.01,
                            chunk_samples: int = 200, f_ext=None
                            ) -> Iterator[Trajectory]:
    """Joint torques along the cycloidal motion q_start -> q_end over `duration` s.

    A serial arm or tree moves every joint along the cycloid. A mechanism with loops
    drives its actuated joints along it (from q_start's to q_end's values, both (n,)
    poses) and solves the other joints by position, velocity and acceleration analysis
    (`core.algorithms.closed_chains.closed_chain_motion`); its samples carry the cut-joint forces
    and the loop residual, and tau is zero at passive joints.
    A generator: yields Trajectory chunks of at most `chunk_samples` new samples (so a
    GUI can stream and cancel between them) and returns the whole Trajectory
    (StopIteration.value). Sample grid: `output_grid` (a run whose samples would not fit
    in memory is refused: `check_sample_memory`). The motion is checked first
    (`motion_warnings`: poses and rates beyond the physical bounds are refused, poses
    outside the joint limits warned about in every chunk's `warnings`).
    """
    model = model_of(model)
    for name, kind in zip(model.joint_names, model.joint_types):
        if kind.nq != kind.nv:  # a quaternion is not interpolated entry by entry
            raise ArgumentError(f"the cycloidal motion moves joint values one by one; joint "
                                f"{name!r} is {kind.value} (a quaternion): simulate a "
                                "floating system or a ball joint instead")
    times = output_grid(duration, dt_out)
    check_sample_memory(times.size, RUN_COPIES * Trajectory.bytes_per_sample(model.n,
                                                                            model.kernel.m))
    warnings = motion_warnings(model, q_start, q_end, duration)
    loops = bool(model.loops)
    if loops:
        driven = list(model.actuated)
        guess = np.asarray(q_start, dtype=float).copy()
    parts = []
    for s in range(0, times.size, max(1, int(chunk_samples))):
        t = times[s:s + chunk_samples]
        q, qd, qdd = cycloidal_trajectory(q_start, q_end, duration, t)
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


def run_inverse_dynamics(model, q_start, q_end, duration: float, dt_out: float = 0.01,
                         f_ext=None) -> Trajectory:
    """The whole inverse-dynamics run of `inverse_dynamics_chunks` at once."""
    return run_chunks(inverse_dynamics_chunks(model, q_start, q_end, duration, dt_out,
                                              chunk_samples=1_000_000, f_ext=f_ext), duration)
