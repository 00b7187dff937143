"""Power balance of a run: the rate of change of the total energy against the power of
the joint forces and the damping.

For a tree (or a mechanism whose loops do no work) under joint forces tau_applied,
gravity included in the potential energy V, the total energy E = T + V changes at

    dE/dt = qd . tau_applied = P_joint + P_damping,    P_damping = -sum_k c_k qd_k^2,

(T = 1/2 qd^T I qd; d/dt T = qd^T (I qdd + C qd) with qd^T (I' - 2C) qd = 0, and
dV/dt = qd . g(q), so dE/dt = qd . (I qdd + C qd + g) = qd . tau_applied.)

A pull (`core.sim.pull`, recorded in `Trajectory.pull`) is a force F on a link at a point
moving at v_p: it adds P_pull = F . v_p (recorded per sample); joint friction
(`core.kernels.drives`, given the model) adds P_friction = -qd . f(qd) <= 0, so then

    dE/dt = P_joint + P_damping + P_pull + P_friction,

with E including the rotors' kinetic energy. Friction's dissipation over a run is
-integral P_friction dt (`PowerBalance.friction_dissipated`).

Here dE/dt is taken from the recorded total energy E(t) of the samples (each sample's
energy is computed exactly from its state), by sixth-order finite differences over the
neighbouring samples (`energy_rate`), and the power from the recorded joint forces. The
residual dE/dt - P_joint - P_damping is what the integration gets wrong (the
states drift off the exact motion), plus the finite-difference error, O(dt^6): with
the default output step of 10 ms far below the integration error. For an inverse-
dynamics run (no integration) it is the finite-difference error alone.

`Trajectory.tau` is the applied joint force, tau_drive - c qd (`core.sim.simulation`); the
damping coefficients c are not recorded, so `power_balance` takes them; without them a
free fall's whole applied force is damping (it has no drive), any other run's is drive.

`PowerBalanceStream` does the same chunk by chunk (a run's chunks as they arrive),
recomputing only the samples whose finite-difference stencil changed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.drives import friction_torques
from ..kernels.pull import PULL_POWER
from .trajectory import Trajectory

__all__ = ["PowerBalance", "power_balance", "energy_rate", "cumulative_work", "split_power",
           "PowerBalanceStream", "STENCIL", "pull_power", "friction_power"]

#: Samples per finite-difference stencil (sixth order on a smooth signal).
STENCIL = 7


def energy_rate(t: np.ndarray, E: np.ndarray, start: int = 0) -> np.ndarray:
    """dE/dt at samples start.. of E(t) (W for J and s): the derivative at t_i of the
    polynomial through the STENCIL samples around i (centred where it can, one-sided at
    the ends; fewer where there are fewer samples). t (S,) strictly increasing, E (S,).
    Returns (S - start,); NaN if S < 2."""
    t = np.asarray(t, dtype=float)
    E = np.asarray(E, dtype=float)
    S = t.shape[0]
    rows = np.arange(start, S)
    if S < 2:
        return np.full(rows.shape, np.nan)
    m = min(STENCIL, S)
    first = np.clip(rows - m // 2, 0, S - m)
    idx = first[:, None] + np.arange(m)[None, :]           # (R, m) sample indices
    h = t[idx[:, -1]] - t[idx[:, 0]]                       # stencil span, for scaling
    x = (t[idx] - t[rows][:, None]) / h[:, None]           # (R, m) offsets in spans
    # weights w with sum_j w_j x_j^p = [p == 1] for p < m: V^T w = e_1
    V = x[:, :, None] ** np.arange(m)[None, None, :]       # (R, m, m): V[r, j, p] = x_j^p
    rhs = np.zeros((rows.size, m, 1))
    rhs[:, 1, 0] = 1.0
    w = np.linalg.solve(np.transpose(V, (0, 2, 1)), rhs)[:, :, 0]
    return np.einsum("rj,rj->r", w, E[idx]) / h


def cumulative_work(t: np.ndarray, P: np.ndarray) -> np.ndarray:
    """W(t_i) = integral of P from t_0 to t_i (J for W and s), (S,): each interval
    [t_i, t_i+1] integrates the cubic through the four samples around it (fourth
    order; the trapezoid with fewer than four samples)."""
    t = np.asarray(t, dtype=float)
    P = np.asarray(P, dtype=float)
    S = t.shape[0]
    W = np.zeros(S)
    if S < 2:
        return W
    m = min(4, S)
    i = np.arange(S - 1)
    first = np.clip(i - (m // 2 - 1), 0, S - m)         # samples i-1 .. i+2 where they exist
    idx = first[:, None] + np.arange(m)[None, :]
    h = t[i + 1] - t[i]
    x = (t[idx] - t[i][:, None]) / h[:, None]          # the interval is [0, 1]
    V = x[:, :, None] ** np.arange(m)[None, None, :]
    rhs = (1.0 / np.arange(1, m + 1))[None, :, None].repeat(i.size, axis=0)  # int_0^1 x^p
    w = np.linalg.solve(np.transpose(V, (0, 2, 1)), rhs)[:, :, 0]
    W[1:] = np.cumsum(np.einsum("rj,rj->r", w, P[idx]) * h)
    return W


@dataclass(frozen=True)
class PowerBalance:
    """Energy rate and power at the samples of a run, all (S,) in W (drift in J).

    t             : sample times, s
    energy_rate   : dE/dt from the recorded total energy (`energy_rate`)
    joint_power   : qd . tau_drive, the power of the joint forces (motors)
    damping_power : -sum_k c_k qd_k^2, the power of the joint damping (<= 0)
    residual      : energy_rate - joint_power - damping_power - pull_power (integration
                    error)
    drift         : E(t) - E(t_0) - the work of joint forces, damping and the pull since
                    t_0 (`cumulative_work`), J: the residual accumulated
    pull_power    : F . v_p, the power of a pull (`Trajectory.pull`); zeros without one
    friction_power: -qd . f(qd), the power of the joints' friction (<= 0); zeros
                    without a model or friction
    """

    t: np.ndarray
    energy_rate: np.ndarray
    joint_power: np.ndarray
    damping_power: np.ndarray
    residual: np.ndarray
    drift: np.ndarray
    pull_power: np.ndarray | None = None
    friction_power: np.ndarray | None = None

    def __post_init__(self) -> None:
        for f in ("pull_power", "friction_power"):
            if getattr(self, f) is None:
                object.__setattr__(self, f, np.zeros_like(self.t))

    @property
    def friction_dissipated(self) -> float:
        """J: the energy the joints' friction took out over the run, -integral of
        friction_power (`cumulative_work`)."""
        return float(-cumulative_work(self.t, self.friction_power)[-1]) if len(self) else 0.0

    def __len__(self) -> int:
        return self.t.shape[0]


def split_power(traj: Trajectory, damping=None) -> tuple[np.ndarray, np.ndarray]:
    """(joint_power, damping_power), (S,) each, W, from a run's applied joint forces.

    damping : viscous coefficients c, (n,) or scalar (N m s/rad, N s/m), as given to
              `simulate`; None: a free fall's applied force is all damping, any other
              run's all drive (module docstring).
    """
    applied = np.einsum("sk,sk->s", traj.qd, traj.tau)
    if damping is None:
        if traj.kind == "free-fall":
            return np.zeros_like(applied), applied
        return applied, np.zeros_like(applied)
    c = np.broadcast_to(np.asarray(damping, dtype=float), (traj.n,))
    damp = -np.einsum("sk,k,sk->s", traj.qd, c, traj.qd)
    return applied - damp, damp


def friction_power(traj: Trajectory, model=None) -> np.ndarray:
    """-qd . f(qd) (S,), W: the power of the joints' friction along the run
    (`core.algorithms.drives.friction_torques`); zeros without a model."""
    if model is None or len(traj) == 0:
        return np.zeros(len(traj))
    return -np.einsum("sk,sk->s", traj.qd, friction_torques(model, traj.qd))


def power_balance(traj: Trajectory, damping=None, model=None) -> PowerBalance:
    """The power balance of a run (module docstring); damping as `split_power`; `model`,
    the run's model, for its joints' friction. Samples must have strictly increasing
    times."""
    t = np.asarray(traj.t, dtype=float)
    if t.size > 1 and not np.all(np.diff(t) > 0):
        raise ValueError("the samples' times must be strictly increasing")
    E = traj.energy[:, 2]
    rate = energy_rate(t, E)
    joint, damp = split_power(traj, damping)
    pull = pull_power(traj)
    friction = friction_power(traj, model)
    drift = E - (E[0] if E.size else 0.0) - cumulative_work(t, joint + damp + pull + friction)
    return PowerBalance(t.copy(), rate, joint, damp, rate - joint - damp - pull - friction,
                        drift, pull, friction)


def pull_power(traj: Trajectory) -> np.ndarray:
    """F . v_p (S,), W: the power of the run's pull (`Trajectory.pull`), zeros without."""
    if traj.pull is None:
        return np.zeros(len(traj))
    return traj.pull[:, PULL_POWER].copy()


class PowerBalanceStream:
    """`power_balance` over a run's chunks as they arrive (Trajectory chunks in time order;
    a sample not later than the last one kept is dropped).

    damping : as `split_power`, for every chunk (set before the first)
    model   : the run's model, for its joints' friction (`friction_power`; set before
              the first chunk); None: no friction counted
    """

    def __init__(self, damping=None, model=None) -> None:
        self.damping = damping
        self.model = model
        self.reset()

    def reset(self) -> None:
        """Forget every sample (a new run)."""
        self._t = np.zeros(0)
        self._E = np.zeros(0)
        self._rate = np.zeros(0)
        self._joint = np.zeros(0)
        self._damp = np.zeros(0)
        self._pull = np.zeros(0)
        self._friction = np.zeros(0)
        self.kind = ""

    def __len__(self) -> int:
        return self._t.shape[0]

    def append(self, chunk: Trajectory) -> int:
        """Add a chunk's samples; returns the index of the first sample whose values
        changed (the stencils near the old end see the new samples)."""
        old = len(self)
        if not self.kind:
            self.kind = chunk.kind
        keep = np.ones(len(chunk), dtype=bool)
        last = self._t[-1] if old else -np.inf
        t = np.asarray(chunk.t, dtype=float)
        keep &= t > last
        if keep.any():
            # within the chunk too: strictly increasing
            tk = t[keep]
            ok = np.concatenate([[True], np.diff(tk) > 0])
            keep[np.flatnonzero(keep)[~ok]] = False
        if not keep.any():
            return old
        part = Trajectory(chunk.t[keep], chunk.q[keep], chunk.qd[keep], chunk.qdd[keep],
                          chunk.tau[keep], chunk.energy[keep], chunk.kind,
                          pull=None if chunk.pull is None else chunk.pull[keep])
        joint, damp = split_power(part, self.damping)
        self._pull = np.concatenate([self._pull, pull_power(part)])
        self._friction = np.concatenate([self._friction, friction_power(part, self.model)])
        self._t = np.concatenate([self._t, part.t])
        self._E = np.concatenate([self._E, part.energy[:, 2]])
        self._joint = np.concatenate([self._joint, joint])
        self._damp = np.concatenate([self._damp, damp])
        # rows whose stencil changed: the last STENCIL // 2 old ones (all while short)
        start = 0 if old < STENCIL else old - STENCIL // 2
        self._rate = np.concatenate([self._rate[:start],
                                     energy_rate(self._t, self._E, start)])
        return start

    def result(self) -> PowerBalance:
        """The balance of every sample so far (copies)."""
        rate = self._rate.copy()
        P = self._joint + self._damp + self._pull + self._friction
        E = self._E
        drift = E - (E[0] if E.size else 0.0) - cumulative_work(self._t, P)
        return PowerBalance(self._t.copy(), rate, self._joint.copy(), self._damp.copy(),
                            rate - P, drift, self._pull.copy(), self._friction.copy())
