"""Inverse-dynamics runs along a motion (chunked for a window, or whole): any joint motion
of `core.sim.joint_motions` or a measured one (`core.sim.measured`), and the cycloidal
rest-to-rest motion of seed 001 eqs. 22-23 from two poses.

A floating system (free joints) cannot be driven at its base: no motor holds a floating
base. Its run drives the other joints (with loops: the actuated ones) along the cycloid
and reports the base motion that follows (`_floating_chunks`, by hybrid dynamics, with
the loops' multipliers and driving constraints when it has loops).
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..algorithms.closed_chains import closed_chain_inverse_dynamics, closed_chain_motion
from ..algorithms.dynamics import inverse_dynamics
from ..algorithms.hybrid_dynamics import (constrained_hybrid_dynamics, free_rates,
                                          hybrid_dynamics, least_norm_solution,
                                          with_force_elements)
from ..algorithms.momentum import momentum
from ..algorithms.loops import assemble, loop_jacobian, loop_residual
from ..algorithms.tree_dynamics import energy
from ..errors import ArgumentError, SimulationError
from ..kernels.charts import quaternion_exp, quaternion_product, retracted
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


def _rotation_vector(q_from, q_to) -> np.ndarray:
    """The rotation vector (3,) rad, body frame, of the shortest turn from the unit
    quaternion q_from to q_to (scalar last): q_to = q_from (x) exp(result)."""
    x, y, z, w = quaternion_product(-q_from[0], -q_from[1], -q_from[2], q_from[3], *q_to)
    if w < 0.0:  # q and -q are one rotation: the shorter way round
        x, y, z, w = -x, -y, -z, -w
    v = np.array([x, y, z])
    s = float(np.linalg.norm(v))
    return v * (2.0 * np.arctan2(s, w) / s) if s > 0.0 else np.zeros(3)


def cycloidal_pose(model, q_start, q_end, duration: float, times
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cycloid of `cycloidal_trajectory` for every joint kind: q (S, nq), qd, qdd
    (S, nv) at `times` (S,) s.

    A joint whose values are its coordinates (revolute, prismatic, universal) follows eqs.
    22-23 value by value. A rotation (a spherical joint, a free joint's quaternion) turns
    about the fixed axis u that takes q_start's orientation q0 to q_end's, by the angle
    phi of that turn (the shorter way), the angle following the cycloid's law s(t) (0 to
    1): q(t) = q0 (x) exp(u phi s(t) / 2) as a quaternion, so the joint's rates (the body-
    frame angular velocity, docs/floating-bases.md) are w = u phi s'(t) and its
    accelerations u phi s''(t). A free joint's position follows the cycloid in the parent
    frame, p(t); its rates' linear half is the body-frame velocity v = R(t)^T p'(t), whose
    rate is R^T p'' - w x v.
    """
    return _PoseCycloid(model, q_start, q_end, duration).sample(
        finite_array(times, (np.size(times),), "times"))


class _PoseCycloid:
    """`cycloidal_pose` of one motion, its joints' slices and turns found once (a
    floating run samples it at every evaluation of its right-hand side)."""

    def __init__(self, model, q_start, q_end, duration: float) -> None:
        m = self.model = model_of(model)
        # within the physical bounds (a quaternion of unit length, among others)
        self.q0 = physical_joint_values(m, joint_vector(q_start, m.nq, "q_start"), "q_start")
        qT = physical_joint_values(m, joint_vector(q_end, m.nq, "q_end"), "q_end")
        self.values = Cycloid(self.q0, qT, duration)  # every value by eq. 22
        self.law = Cycloid(np.zeros(1), np.ones(1), duration)
        plain = [j for j, kind in enumerate(m.joint_types)
                 if kind not in (JointType.SPHERICAL, JointType.FREE)]
        self.plain_q, self.plain_v = m.values_of(plain), m.rates_of(plain)
        self.turns = []  # (free?, q slice, v slice, quaternion slice, q0's quaternion, turn)
        for j, kind in enumerate(m.joint_types):
            if kind in (JointType.SPHERICAL, JointType.FREE):
                a, b = m.q_slice(m.joint_names[j]), m.v_slice(m.joint_names[j])
                r = slice(a.start + 3, a.stop) if kind is JointType.FREE else a
                quat0 = self.q0[r] / np.linalg.norm(self.q0[r])
                self.turns.append((kind is JointType.FREE, a, b, r, quat0,
                                   _rotation_vector(quat0, qT[r] / np.linalg.norm(qT[r]))))

    def sample(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q (S, nq), qd, qdd (S, nv) at the times t (S,) s."""
        m = self.model
        q, qd, qdd = self.values.sample(t)
        s, sd, sdd = (a[:, 0] for a in self.law.sample(t))
        qd_out, qdd_out = np.zeros((t.size, m.nv)), np.zeros((t.size, m.nv))
        qd_out[:, self.plain_v], qdd_out[:, self.plain_v] = (qd[:, self.plain_q],
                                                             qdd[:, self.plain_q])
        for free, a, b, r, quat0, turn in self.turns:
            w = np.outer(sd, turn)
            for i in range(t.size):
                q[i, r] = quaternion_product(*quat0, *quaternion_exp(*(s[i] * turn)))
            if not free:
                qd_out[:, b], qdd_out[:, b] = w, np.outer(sdd, turn)
                continue
            Rt = [np.array(quaternion_matrix(*q[i, r])).reshape(3, 3).T for i in range(t.size)]
            v = np.array([Rt[i] @ qd[i, a][:3] for i in range(t.size)])
            vd = np.array([Rt[i] @ qdd[i, a][:3] for i in range(t.size)]) - np.cross(w, v)
            qd_out[:, b] = np.hstack([w, v])
            qdd_out[:, b] = np.hstack([np.outer(sdd, turn), vd])
        finite_result(q, "the motion q")
        return (q, finite_result(qd_out, "the rates qd"),
                finite_result(qdd_out, "the accelerations qdd"))


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
    D = m.rates_of(driven_joints(m))
    peak = np.zeros(m.nv)  # a free body's rates are not the cycloid's
    peak[D] = cycloidal_pose(m, q0, qT, T, np.array([T / 2]))[1][0, D]  # eq. 22b at T/2
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
    (free joints) drives along the cycloid its other joints (with loops: its actuated
    joints) and reports the motion of the free bodies (and of the joints the loops
    move) that follows (`_floating_chunks`, docs/floating-bases.md); other motions of a
    floating system are refused by name. A spherical joint's cycloid turns it about a
    fixed axis (`cycloidal_pose`); other motions of a model with one are refused.
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
    start = motion if q_start is None else q_start
    turning = [name for name, kind in zip(model.joint_names, model.joint_types)
               if kind is JointType.SPHERICAL]
    if turning and isinstance(start, JointMotion):
        # a quaternion is not interpolated entry by entry: only the cycloid turns it
        raise ArgumentError(f"the {start.name} motion moves joint values one by one; joint "
                            f"{turning[0]!r} is spherical (a quaternion): drive it along the "
                            "cycloid between two poses (q_start, q_end, duration)")
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
        q, qd, qdd = (cycloidal_pose(model, start, q_end, duration, t) if turning
                      else motion.sample(t))
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


def driven_joints(model) -> list[int]:
    """The joints (0-based, in joint order) an inverse-dynamics run moves along its
    motion: a mechanism's actuated joints when it has loops (the others follow them),
    else every joint but the free ones (a floating base moves as they push it)."""
    m = model_of(model)
    if m.loops:
        return sorted(m.actuated)
    return [j for j, kind in enumerate(m.joint_types) if kind is not JointType.FREE]


def target_joints(model) -> list[int]:
    """The joints (0-based, in joint order) a run's target pose gives a value to, one
    number each (rad or m): the driven joints (`driven_joints`) that are revolute or
    prismatic. The others keep the start pose's values in the target: a free body and
    the joints the loops move follow the motion, and a driven joint of several degrees
    of freedom (spherical, universal) does not turn. The Run panel's target rows and
    the command line's --target and --start values name these joints."""
    m = model_of(model)
    return [j for j in driven_joints(m) if m.joint_types[j].is_dh]


def _value_rates(model, joints, q, qd) -> np.ndarray:
    """d/dt of the values of `joints` (their entries of q, in order) under the rates qd:
    qd itself for joints whose values are their coordinates; for a quaternion
    q' = q (x) [w/2, 0] (w the body-frame angular velocity); a free body's origin moves
    with R v."""
    out = []
    for j in joints:
        kind, name = model.joint_types[j], model.joint_names[j]
        a, b = model.q_slice(name), model.v_slice(name)
        if kind not in (JointType.SPHERICAL, JointType.FREE):
            out.append(qd[b])
            continue
        quat = q[a][-4:] / np.linalg.norm(q[a][-4:])
        w = qd[b][:3]
        turn = [0.5 * (quat[3] * w + np.cross(quat[:3], w)), [-0.5 * float(quat[:3] @ w)]]
        if kind is JointType.FREE:
            turn.insert(0, np.array(quaternion_matrix(*quat)).reshape(3, 3) @ qd[b][3:])
        out.extend(turn)
    return np.concatenate(out) if out else np.zeros(0)


def _normalised(model, joints, q) -> None:
    """Scale the quaternions of `joints` in q (nq,) back to unit length, in place."""
    for j in joints:
        if model.joint_types[j] in (JointType.SPHERICAL, JointType.FREE):
            a = model.q_slice(model.joint_names[j])
            r = slice(a.stop - 4, a.stop)
            q[r] /= np.linalg.norm(q[r])


def _close_loops(model, q, qd, vN) -> None:
    """Project the state (q (nq,), qd (nv,), in place) back onto the loops by moving
    the rates vN only (the driven joints keep the motion's values): Newton steps
    q <- q (+) dx with dx_N = -J_N^+ Phi (`core.kernels.charts.retract`), then
    qd_N <- qd_N - J_N^+ J qd (least squares, minimum norm), J_N^+ over the loops' rank
    (nv - dof: `least_norm_solution`; the truck's dependent rows, off the loops, jolted
    its state by ~1e-4 at each projection)."""
    k = model.kernel
    rank = model.nv - model.dof
    for _ in range(10):
        Phi = loop_residual(model, q)
        if np.max(np.abs(Phi), initial=0.0) <= CLOSURE_TOL:
            break
        dx = np.zeros(model.nv)
        dx[vN] = -least_norm_solution(loop_jacobian(model, q)[:, vN], Phi, rank)
        retracted(k.F, k.I, q, dx, 1.0)
    J = loop_jacobian(model, q)
    qd[vN] -= least_norm_solution(J[:, vN], J @ qd, rank)


#: The loop residual (m, rad) a floating run's samples are projected to.
CLOSURE_TOL = 1e-12


def _floating_chunks(model, q_start, q_end, duration, dt_out, chunk_samples, f_ext
                     ) -> Iterator[Trajectory]:
    """`inverse_dynamics_chunks` of a floating system: the driven joints (`driven_joints`:
    the actuated ones of a mechanism with loops, else every joint but the free ones)
    follow the cycloid from q_start's to q_end's values (`cycloidal_pose`); every other
    joint and each free body starts at rest at q_start's values (q_end's are not used)
    and moves as the driven joints and the loops push it, with no force on it but
    gravity, f_ext and the force elements (`core.algorithms.hybrid_dynamics`:
    `hybrid_dynamics` for a tree, `constrained_hybrid_dynamics` with loops).

    The state of the joints that follow (their values and rates) is integrated with
    DOP853 (rtol 1e-10, atol 1e-12; with loops 1e-8 and 1e-10, the state projected back
    onto the loops at every sample, `_close_loops`, and the run restarted from it): a
    position moves with R v, a quaternion with q (x) [w/2, 0] and is normalised at each
    sample. The samples carry tau (the driven joints' forces, zero elsewhere), the
    energy and the momentum (as a simulation records them) and, with loops, the
    cut-joint forces and the loop residual.
    """
    times = output_grid(duration, dt_out)
    check_sample_memory(times.size, RUN_COPIES * Trajectory.bytes_per_sample(
        model.nv, model.kernel.m, nq=model.nq))
    warnings = motion_warnings(model, q_start, q_end, duration)
    T = float(duration)
    D = driven_joints(model)
    N = [j for j in range(model.n) if j not in set(D)]
    qN, vN = model.values_of(N), model.rates_of(N)
    loops = bool(model.loops)
    q0 = joint_vector(q_start, model.nq, "q_start").copy()
    if loops:  # the run starts on the loops
        q0 = assemble(model, q0, independent=D)

    law = _PoseCycloid(model, q0, q_end, T)

    def state(t, y):
        """q, qd and the driven joints' qdd at time t with the followers' state y."""
        a, b, c = law.sample(np.array([t]))
        q, qd, qdd = a[0], b[0], c[0]
        q[qN], qd[vN], qdd[vN] = y[:len(qN)], y[len(qN):], 0.0
        return q, qd, qdd

    def dynamics(q, qd, qdd):
        W = with_force_elements(model, q, qd, f_ext)
        if loops:
            return constrained_hybrid_dynamics(model, q, qd, qdd, D, f_ext=W)
        return hybrid_dynamics(model, q, qd, qdd, f_ext=W)

    def rhs(t, y):
        q, qd, qdd = state(t, y)
        return np.concatenate([_value_rates(model, N, q, qd), dynamics(q, qd, qdd).qdd[vN]])

    y = np.concatenate([q0[qN], np.zeros(len(vN))])
    t_done = 0.0
    rtol, atol = (1e-8, 1e-10) if loops else (1e-10, 1e-12)
    parts = []
    for s in range(0, times.size, max(1, int(chunk_samples))):
        t = times[s:s + chunk_samples]
        rows = np.empty((t.size, y.size))
        start = 0
        if t[0] == t_done:
            rows[0], start = y, 1
        # with loops, one integration per sample (projected at each); else one per chunk
        stops = [[i] for i in range(start, t.size)] if loops else [list(range(start, t.size))]
        for idx in stops:
            if not idx:
                continue
            from scipy.integrate import solve_ivp  # a floating run only (0.3 s to import)

            sol = solve_ivp(rhs, (t_done, t[idx[-1]]), y, method="DOP853", t_eval=t[idx],
                            rtol=rtol, atol=atol)
            if not sol.success or sol.y.shape[1] != len(idx):
                raise SimulationError(f"the floating base's motion failed at t = "
                                      f"{sol.t[-1] if sol.t.size else t_done:.6g} s: "
                                      f"{sol.message}")
            rows[idx] = sol.y.T
            if loops:
                q, qd, _ = state(t[idx[-1]], rows[idx[-1]])
                _normalised(model, N, q)
                _close_loops(model, q, qd, vN)
                rows[idx[-1]] = np.concatenate([q[qN], qd[vN]])
            y, t_done = rows[idx[-1]].copy(), float(t[idx[-1]])
        q = np.empty((t.size, model.nq))
        qd = np.empty((t.size, model.nv))
        qdd = np.empty((t.size, model.nv))
        tau = np.empty((t.size, model.nv))
        lam = np.empty((t.size, model.kernel.m))
        for i in range(t.size):
            q[i], qd[i], driven_acc = state(t[i], rows[i])
            _normalised(model, N, q[i])
            result = dynamics(q[i], qd[i], driven_acc)
            qdd[i], tau[i] = result.qdd, result.tau
            if loops:
                lam[i] = result.lam
        p = momentum(model, q, qd)
        extra = {}
        if loops:
            extra = dict(cut_forces=lam, loop_residual=np.array(
                [np.max(np.abs(loop_residual(model, qi)), initial=0.0) for qi in q]))
        part = Trajectory(t, q, qd, qdd, tau, energy(model, q, qd),
                          kind=RunKind.INVERSE_DYNAMICS, warnings=warnings,
                          momentum=np.hstack([p.center_of_mass, p.linear, p.angular]),
                          **extra)
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
