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

A run counts its stops' hits as it integrates (`record_stop_contacts`, at every state
the integrator accepts), in a (n, 2, CONTACT_COLUMNS) table `contacts` (`stop_contacts`):
per joint k and side (0 lower, 1 upper),

    contacts[k, side, CONTACT_HITS]      the hits so far
    contacts[k, side, CONTACT_PEAK]      the peak stop force seen, N m / N (> 0)
    contacts[k, side, CONTACT_DEEPEST]   the deepest penetration seen, rad / m
    contacts[k, side, CONTACT_TOUCHING]  1 while a counted contact lasts

A contact is a hit once its penetration exceeds STOP_HIT_DEPTH, i.e. once the stop's
force exceeds K STOP_HIT_DEPTH (the documented threshold: 1e-9 rad or m of spring, a
nanonewton-metre per N m/rad of stiffness), and it lasts until the joint is back within
its limit: a joint that starts on its limit and stays there within round-off (the
humanoid's forearms, 5e-12 deg past) is never hit, and a bounce between two output
samples is counted all the same.
"""
from __future__ import annotations

import numpy as np

from .buffers import inlined_kernel

PASSIVE_DAMPING, PASSIVE_LOWER, PASSIVE_UPPER, PASSIVE_STIFFNESS, PASSIVE_STOP_DAMPING = range(5)
PASSIVE_COLUMNS = 5
CONTACT_HITS, CONTACT_PEAK, CONTACT_DEEPEST, CONTACT_TOUCHING = range(4)
CONTACT_COLUMNS = 4
#: How far past its limit a joint must go for the contact to count as a hit, rad / m:
#: a thousand times the round-off of a joint value near its limit, ten times the
#: default integration tolerance (atol 1e-10).
STOP_HIT_DEPTH = 1e-9


def stop_contacts(n: int) -> np.ndarray:
    """A new (n, 2, CONTACT_COLUMNS) table of stop contacts (module docstring): none."""
    return np.zeros((n, 2, CONTACT_COLUMNS))


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


@inlined_kernel
def record_stop_contacts(passive, y, contacts):
    """Count the stops' contacts at the accepted state y = [q; qd] (2n,) into `contacts`
    (module docstring): a hit when a joint goes more than STOP_HIT_DEPTH past a limit
    after being within it; the peak force and deepest penetration of every contact."""
    n = passive.shape[0]
    for k in range(n):
        q = y[k]
        for side in range(2):
            if side == 0:
                past = passive[k, PASSIVE_LOWER] - q
            else:
                past = q - passive[k, PASSIVE_UPPER]
            if past > 0.0:
                f, V = stop_force(passive[k], q, y[n + k])
                c = contacts[k, side]
                c[CONTACT_PEAK] = max(c[CONTACT_PEAK], abs(f))
                c[CONTACT_DEEPEST] = max(c[CONTACT_DEEPEST], past)
                if past > STOP_HIT_DEPTH and c[CONTACT_TOUCHING] == 0.0:
                    c[CONTACT_HITS] += 1.0
                    c[CONTACT_TOUCHING] = 1.0
            else:  # within the limit (or no limit): the contact, if any, is over
                contacts[k, side, CONTACT_TOUCHING] = 0.0
