"""Joint trajectories: the cycloidal motion of seed 001 eqs. 22-23 and the result type.

`Trajectory` is what both runs produce (inverse dynamics along a planned
motion, free-fall simulation), so plots, playback and CSV export share one
code path.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..algorithms.closed_chains import closed_chain_inverse_dynamics, closed_chain_motion
from ..algorithms.dynamics import inverse_dynamics
from ..algorithms.loops import loop_residual
from ..algorithms.tree_dynamics import energy
from ..kernels.pull import PULL_COLUMNS
from ..model.arguments import model_of


@dataclass(frozen=True, eq=False)
class Trajectory:
    """Samples of a motion. S samples, n joints.

    t      : (S,)   time, s
    q      : (S, n) joint values, rad / m
    qd     : (S, n) joint rates, rad/s / m/s
    qdd    : (S, n) joint accelerations, rad/s^2 / m/s^2
    tau    : (S, n) joint torques / forces, N m / N; a simulation's applied forces
             (driving forces - damping + end stops)
    energy : (S, 3) kinetic, potential, total energy, J; in a simulation with end stops
             the potential energy holds the stops' spring energy too
    kind   : "inverse-dynamics", "free-fall" or "simulation"
    cut_forces    : (S, m) a mechanism's cut-joint forces (Lagrange multipliers) along
                    its m closure rows, N / N m (`constraint_row_labels`); (S, 0) for
                    a tree or arm
    loop_residual : (S,) the largest closure error |Phi| of the sample, m or rad
                    (zeros without loops)
    stop_forces   : (S, n) the joints' end stops' share of tau, N m / N (> 0 pushes
                    the joint value up; zeros where no stop touches, or without stops)
    warnings      : what the run found worth saying before it started (a prismatic
                    joint with nothing to stop it, a joint starting past its limit);
                    every chunk of a run carries them
    pull          : (S, 11) a run with a pull (`simulate(..., pull=...)`, `core.sim.pull`),
                    per sample: [link, p_x, p_y, p_z, x*_x, x*_y, x*_z, F_x, F_y, F_z, P]
                    = the pulled link (1-based; 0 while not pulling), the grabbed point
                    p and the target x* (base frame, m), the spring-damper's force F on
                    the link at p (N) and its power F . v_p (W); all zero while not
                    pulling. None for a run without a pull. (`core.sim.pull.PULL_LINK`,
                    `PULL_AT`, `PULL_TARGET`, `PULL_FORCE`, `PULL_POWER` index it.)
                    `energy` stays the arm's own: the pull's work is not in it.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    energy: np.ndarray
    kind: str = "inverse-dynamics"
    cut_forces: np.ndarray | None = None
    loop_residual: np.ndarray | None = None
    stop_forces: np.ndarray | None = None
    warnings: tuple[str, ...] = ()
    pull: np.ndarray | None = None

    def __post_init__(self) -> None:
        S = self.t.shape[0]
        if self.cut_forces is None:
            object.__setattr__(self, "cut_forces", np.zeros((S, 0)))
        if self.loop_residual is None:
            object.__setattr__(self, "loop_residual", np.zeros(S))
        if self.stop_forces is None:
            object.__setattr__(self, "stop_forces", np.zeros(self.q.shape))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    @property
    def n(self) -> int:
        return self.q.shape[1]

    def __len__(self) -> int:
        return self.t.shape[0]

    @classmethod
    def empty(cls, n: int, kind: str, m: int = 0, warnings: tuple[str, ...] = (),
              pulled: bool = False) -> "Trajectory":
        """No samples; `pulled`: with an empty `pull` column (a run with a pull)."""
        z = np.zeros((0, n))
        return cls(np.zeros(0), z, z, z, z, np.zeros((0, 3)), kind, np.zeros((0, m)),
                   np.zeros(0), z, warnings, np.zeros((0, PULL_COLUMNS)) if pulled else None)

    @classmethod
    def concatenate(cls, parts: Sequence["Trajectory"]) -> "Trajectory":
        """Join chunks in time order (the kind and n of the first; the warnings of all,
        each once)."""
        parts = [p for p in parts if p is not None]
        if not parts:
            raise ValueError("nothing to concatenate")
        kind = parts[0].kind
        fields = ("t", "q", "qd", "qdd", "tau", "energy", "cut_forces", "loop_residual",
                  "stop_forces")
        joined = {f: np.concatenate([getattr(p, f) for p in parts]) for f in fields}
        if any(p.pull is not None for p in parts):  # a part without one: not pulled
            width = next(p.pull.shape[1] for p in parts if p.pull is not None)
            joined["pull"] = np.concatenate([p.pull if p.pull is not None
                                             else np.zeros((len(p), width)) for p in parts])
        warnings = tuple(dict.fromkeys(w for p in parts for w in p.warnings))
        return cls(kind=kind, warnings=warnings, **joined)

    def at(self, time: float) -> np.ndarray:
        """Joint values at `time` (s), linearly interpolated, clamped to the ends; (n,)."""
        if len(self) == 0:
            raise ValueError("empty trajectory")
        return np.array([np.interp(time, self.t, self.q[:, j]) for j in range(self.n)])


def output_grid(duration: float, dt_out: float) -> np.ndarray:
    """Regular sample times 0..duration (s), step <= dt_out, ending exactly at duration."""
    if not (math.isfinite(duration) and duration > 0):
        raise ValueError(f"duration must be a positive number of seconds, got {duration!r}")
    if not (math.isfinite(dt_out) and dt_out > 0):
        raise ValueError(f"dt_out must be a positive number of seconds, got {dt_out!r}")
    steps = max(1, math.ceil(duration / dt_out - 1e-9))
    if steps > 10_000_000:
        raise ValueError(f"{steps} samples requested (duration / dt_out); use a larger dt_out")
    return np.linspace(0.0, duration, steps + 1)


def cycloidal_trajectory(q_start, q_end, duration: float, times
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cycloidal rest-to-rest motion, seed 001 eqs. 22a-b and 23.

        q(t)   = q0 + (qT - q0)/T [t - T/(2 pi) sin(2 pi t / T)]
        qd(t)  = (qT - q0)/T [1 - cos(2 pi t / T)]
        qdd(t) = (qT - q0)/T (2 pi / T) sin(2 pi t / T)

    q_start, q_end: (n,); times: (S,) seconds, clamped to [0, T] (the arm rests
    outside). Returns q, qd, qdd, each (S, n).
    """
    q0 = np.asarray(q_start, dtype=float)
    qT = np.asarray(q_end, dtype=float)
    if q0.shape != qT.shape or q0.ndim != 1:
        raise ValueError(f"q_start and q_end must be vectors of one length, got {q0.shape}, {qT.shape}")
    T = float(duration)
    if not (math.isfinite(T) and T > 0):
        raise ValueError(f"duration must be positive, got {duration!r}")
    t = np.clip(np.asarray(times, dtype=float), 0.0, T)[:, None]
    slope = (qT - q0) / T
    w = 2.0 * np.pi / T
    q = q0 + slope * (t - np.sin(w * t) / w)  # eq. 22a
    qd = slope * (1.0 - np.cos(w * t))  # eq. 22b
    qdd = slope * w * np.sin(w * t)  # eq. 22b
    return q, qd, qdd


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
    (StopIteration.value). Sample grid: `output_grid`.
    """
    model = model_of(model)
    times = output_grid(duration, dt_out)
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
            part = Trajectory(t, q, qd, qdd, tau, energy(model, q, qd), kind="inverse-dynamics")
        else:
            q, qd, qdd = closed_chain_motion(model, guess, q[:, driven], qd[:, driven],
                                             qdd[:, driven], driven)
            guess = q[-1]
            results = [closed_chain_inverse_dynamics(model, q[i], qd[i], qdd[i], f_ext=f_ext)
                       for i in range(t.size)]
            part = Trajectory(t, q, qd, qdd, np.array([r.tau for r in results]),
                              energy(model, q, qd), kind="inverse-dynamics",
                              cut_forces=np.array([r.lam for r in results]),
                              loop_residual=np.array([np.max(np.abs(loop_residual(model, qi)),
                                                             initial=0.0) for qi in q]))
        parts.append(part)
        yield part
    return Trajectory.concatenate(parts)


def run_inverse_dynamics(model, q_start, q_end, duration: float, dt_out: float = 0.01,
                         f_ext=None) -> Trajectory:
    """The whole inverse-dynamics run of `inverse_dynamics_chunks` at once."""
    gen = inverse_dynamics_chunks(model, q_start, q_end, duration, dt_out,
                                  chunk_samples=1_000_000, f_ext=f_ext)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
