"""Passive joint forces of a run: viscous damping and end stops at the joint limits.

A run's passive joint forces are one (n, PASSIVE_COLUMNS) table, `passive`, a row per
joint (SI units; rad and N m for revolute joints, m and N for prismatic ones):

    passive[k, PASSIVE_DAMPING]    c_k   viscous damping, N m s/rad / N s/m
    passive[k, PASSIVE_LOWER]      q_lo  lower stop (joint limit), rad / m; -inf: none
    passive[k, PASSIVE_UPPER]      q_hi  upper stop, rad / m; +inf: none
    passive[k, PASSIVE_STIFFNESS]  K_k   stop stiffness, N m/rad / N/m
    passive[k, PASSIVE_STOP_DAMPING]  d_k  Hunt-Crossley damping of the stop, s/rad / s/m

Past a stop the joint meets a spring whose damper scales with the penetration
delta (Hunt and Crossley 1975, with a linear spring):

    delta = q_lo - q (lower stop) or q - q_hi (upper stop), > 0 in contact
    f     = max(0, K delta (1 + d delta_dot))      pushes the joint back, never pulls
    V     = K delta^2 / 2                          the spring's energy (potential energy)

f is continuous (zero at first touch) and the damper's power -(f - K delta) delta_dot
is never positive. `passive_table` builds the table.
"""
from __future__ import annotations

import numpy as np

from .buffers import inlined_kernel

PASSIVE_DAMPING, PASSIVE_LOWER, PASSIVE_UPPER, PASSIVE_STIFFNESS, PASSIVE_STOP_DAMPING = range(5)
PASSIVE_COLUMNS = 5


def passive_table(n: int, damping=None, stops=None) -> np.ndarray:
    """The (n, PASSIVE_COLUMNS) table of a run's passive joint forces (see above).

    damping : (n,) viscous damping, N m s/rad / N s/m (None: none)
    stops   : (n, 4) rows [q_lo, q_hi, K, d] of the end stops (None: none); a joint
              without limits has q_lo = -inf, q_hi = +inf
    """
    table = np.zeros((n, PASSIVE_COLUMNS))
    table[:, PASSIVE_LOWER] = -np.inf
    table[:, PASSIVE_UPPER] = np.inf
    if damping is not None:
        table[:, PASSIVE_DAMPING] = damping
    if stops is not None:
        table[:, PASSIVE_LOWER:] = np.asarray(stops, dtype=float).reshape(n, 4)
    return table


@inlined_kernel
def stop_force(row, q, qd):
    """(f, V): the force of joint row's end stops at (q, qd) along the joint (N m / N;
    > 0 pushes q up) and their spring energy (J); the Hunt-Crossley law above."""
    if q < row[PASSIVE_LOWER]:
        delta = row[PASSIVE_LOWER] - q
        push = row[PASSIVE_STIFFNESS] * delta * (1.0 - row[PASSIVE_STOP_DAMPING] * qd)
        return max(push, 0.0), 0.5 * row[PASSIVE_STIFFNESS] * delta * delta
    if q > row[PASSIVE_UPPER]:
        delta = q - row[PASSIVE_UPPER]
        push = row[PASSIVE_STIFFNESS] * delta * (1.0 + row[PASSIVE_STOP_DAMPING] * qd)
        return -max(push, 0.0), 0.5 * row[PASSIVE_STIFFNESS] * delta * delta
    return 0.0, 0.0


@inlined_kernel
def applied_joint_forces(passive, q, qd, tau, applied, stop):
    """applied = tau - c qd + the stops' forces (n,), the stops' forces alone in stop (n,);
    returns their spring energy (J). Between the stops applied is tau - c qd exactly."""
    V_stop = 0.0
    for k in range(q.shape[0]):
        applied[k] = tau[k] - passive[k, PASSIVE_DAMPING] * qd[k]
        stop[k] = 0.0
        if q[k] < passive[k, PASSIVE_LOWER] or q[k] > passive[k, PASSIVE_UPPER]:
            f, V = stop_force(passive[k], q[k], qd[k])
            applied[k] += f
            stop[k] = f
            V_stop += V
    return V_stop
