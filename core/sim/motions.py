"""Inverse-dynamics runs along a motion (chunked for a window, or whole): any joint motion
of `core.sim.joint_motions` or a measured one (`core.sim.measured`), and the cycloidal
rest-to-rest motion of seed 001 eqs. 22-23 from two poses.

A floating system (free joints) cannot be driven at its base: no motor holds a floating
base. Its run drives the other joints along the cycloid and reports the base motion
that follows (`_floating_chunks`, by hybrid dynamics).
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..algorithms.closed_chains import closed_chain_inverse_dynamics, closed_chain_motion
from ..algorithms.dynamics import inverse_dynamics
from ..algorithms.hybrid_dynamics import free_rates, hybrid_dynamics
from ..algorithms.momentum import momentum
from ..algorithms.loops import loop_residual
from ..algorithms.tree_dynamics import energy
from ..errors import ArgumentError, SimulationError
from ..kernels.joints import quaternion_matrix
from ..model.parts import JointType
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
    q0 = physical_joint_values(m, joint_vector(q_start, m.nq, "q_start"), "q_start")
    qT = physical_joint_values(m, joint_vector(q_end, m.nq, "q_end"), "q_end")
    T = positive_number(duration, "duration")
    D = _driven(m)
    peak = np.zeros(m.nv)  # a free body's rates are not the cycloid's
    peak[m.rates_of(D)] = 2.0 * (qT - q0)[m.values_of(D)] / T  # eq. 22b at T/2
    physical_joint_values(m, peak, "q_end (the motion's peak rate "
                          "2 |q_end - q_start| / duration)", rates=True)
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
    its own sample times), or, as before, a pose q_start (nq,) (in place of `motion`, or
    by keyword) with q_end (nq,) and `duration` s for the cycloidal motion q_start -> q_end.

    A serial arm or tree moves every joint along the motion. A mechanism with loops
    drives its actuated joints along it (the motion's values at those joints) and solves
    the other joints by position, velocity and acceleration analysis
    (`core.algorithms.closed_chains.closed_chain_motion`); its samples carry the cut-joint
    forces and the loop residual, and tau is zero at passive joints. A floating system
    (free joints) drives its other joints along the cycloid and reports the free bodies'
    motion that follows (`_floating_chunks`, docs/floating-bases.md); other motions of a
    floating system are refused by name.
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
        if kind is JointType.SPHERICAL:  # a quaternion is not interpolated entry by entry
            raise ArgumentError(f"joint motions move joint values one by one; joint "
                                f"{name!r} is spherical (a quaternion): simulate a "
                                "ball joint instead")
    start = motion if q_start is None else q_start
    if free_rates(model):
        if isinstance(start, JointMotion):
            raise ArgumentError(f"a floating system ({model.name!r}) is driven along the "
                                "cycloid between two poses (q_start, q_end, duration); the "
                                f"{start.name} motion moves every joint, its free body too")
        return (yield from _floating_chunks(model, start, q_end, duration, dt_out,
                                            chunk_samples, f_ext))
    motion, warnings = _motion_of(model, start, q_end, duration)
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


def _driven(model) -> list[int]:
    """The joints the cycloid moves: every joint but the free ones."""
    return [j for j, kind in enumerate(model.joint_types) if kind is not JointType.FREE]


def _floating_chunks(model, q_start, q_end, duration, dt_out, chunk_samples, f_ext
                     ) -> Iterator[Trajectory]:
    """`inverse_dynamics_chunks` of a floating system (module `core.algorithms.hybrid_dynamics`):
    the joints follow the cycloid from q_start's to q_end's values, each free body starts
    at rest at q_start's pose (q_end's is not used) and moves as the joints push it, with
    no force on it (`hybrid_dynamics`). Its state (pose and rates) is integrated with
    DOP853 (rtol 1e-10, atol 1e-12): the position moves with R v, the quaternion with
    q (x) [w/2, 0] and is normalised at each sample. The samples carry tau (zero at the
    free joints), the energy and the momentum (as a simulation records them).
    """
    times = output_grid(duration, dt_out)
    check_sample_memory(times.size, RUN_COPIES * Trajectory.bytes_per_sample(
        model.nv, model.kernel.m, nq=model.nq))
    warnings = motion_warnings(model, q_start, q_end, duration)
    q0 = np.asarray(q_start, dtype=float)
    qT = np.asarray(q_end, dtype=float)
    T = float(duration)
    D = _driven(model)
    qD, vD = model.values_of(D), model.rates_of(D)
    U = [j for j, kind in enumerate(model.joint_types) if kind is JointType.FREE]
    qU, vU = model.values_of(U), model.rates_of(U)
    nqU = len(qU)

    def state(t, y):
        """q, qd and the joints' qdd at time t with the free bodies' state y."""
        a, b, c = cycloidal_trajectory(q0[qD], qT[qD], T, np.array([t]))
        q, qd, qdd = q0.copy(), np.zeros(model.nv), np.zeros(model.nv)
        q[qD], qd[vD], qdd[vD] = a[0], b[0], c[0]
        q[qU], qd[vU] = y[:nqU], y[nqU:]
        return q, qd, qdd

    def rhs(t, y):
        q, qd, qdd = state(t, y)
        acc = hybrid_dynamics(model, q, qd, qdd, f_ext=f_ext).qdd
        dq = np.empty(nqU)
        for b in range(len(U)):
            x, w, v = y[7 * b:7 * b + 7], y[nqU + 6 * b:nqU + 6 * b + 3], \
                y[nqU + 6 * b + 3:nqU + 6 * b + 6]
            quat = x[3:7] / np.linalg.norm(x[3:7])
            R = np.array(quaternion_matrix(*quat)).reshape(3, 3)
            dq[7 * b:7 * b + 3] = R @ v  # the origin moves with R v
            # q' = q (x) [w/2, 0], scalar last
            dq[7 * b + 3:7 * b + 6] = 0.5 * (quat[3] * w + np.cross(quat[:3], w))
            dq[7 * b + 6] = -0.5 * float(quat[:3] @ w)
        return np.concatenate([dq, acc[vU]])

    y = np.concatenate([q0[qU], np.zeros(len(vU))])
    t_done = 0.0
    parts = []
    for s in range(0, times.size, max(1, int(chunk_samples))):
        t = times[s:s + chunk_samples]
        rows = np.empty((t.size, y.size))
        start = 0
        if t[0] == t_done:
            rows[0], start = y, 1
        if start < t.size:
            from scipy.integrate import solve_ivp  # a floating run only (0.3 s to import)

            sol = solve_ivp(rhs, (t_done, t[-1]), y, method="DOP853", t_eval=t[start:],
                            rtol=1e-10, atol=1e-12)
            if not sol.success:
                raise SimulationError(f"the floating base's motion failed at t = "
                                      f"{sol.t[-1] if sol.t.size else t_done:.6g} s: "
                                      f"{sol.message}")
            rows[start:] = sol.y.T
            y, t_done = sol.y[:, -1].copy(), float(t[-1])
        q = np.empty((t.size, model.nq))
        qd = np.empty((t.size, model.nv))
        qdd = np.empty((t.size, model.nv))
        tau = np.empty((t.size, model.nv))
        for i in range(t.size):
            for b in range(len(U)):
                quat = rows[i, 7 * b + 3:7 * b + 7]
                rows[i, 7 * b + 3:7 * b + 7] = quat / np.linalg.norm(quat)
            q[i], qd[i], joint_acc = state(t[i], rows[i])
            result = hybrid_dynamics(model, q[i], qd[i], joint_acc, f_ext=f_ext)
            qdd[i], tau[i] = result.qdd, result.tau
        p = momentum(model, q, qd)
        part = Trajectory(t, q, qd, qdd, tau, energy(model, q, qd),
                          kind=RunKind.INVERSE_DYNAMICS, warnings=warnings,
                          momentum=np.hstack([p.center_of_mass, p.linear, p.angular]))
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
