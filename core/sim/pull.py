"""A point spring-damper that pulls one link toward a target: "push the arm with the mouse".

A pull grabs a point of link i (1-based) that is fixed in the link's own frame, r (m),
and draws it toward a target x* in the base frame (m) with a linear spring k (N/m) and
a damper c (N s/m) on the point's velocity (MuJoCo's viewer does the same):

    p   = o_i + Q_i r                        the grabbed point        (o_i, Q_i: link i's frame)
    v_p = sum_{j in path(i)} J_j qd_j        its velocity, j = the joints from the base to i:
          J_j = e_j x (p - O_j)  revolute       (e_j the axis of joint j, O_j on it)
          J_j = e_j              prismatic
    F   = k (x* - p) - c v_p                 the force on the link at p (N)
    w_i = [(p - o_i) x F; F]                 as an external wrench on link i, moment about
                                             o_i, base frame (`core.algorithms.dynamics` f_ext)
    P   = F . v_p                            the power it puts into the arm (W)

The pull is part of the compiled right-hand side (`core.kernels.pull`): every evaluation
adds w_i to the run's constant wrenches, at that evaluation's state.

Threads: `PointPull` is the public piece. Any thread (a window's GUI thread) may call
`grab`, `move` and `release` at any time; `simulate_chunks(..., pull=...)` reads the
latest request at its chunk boundaries only (`PointPull.copy_into`, in the simulating
thread), so a change takes effect from the next chunk and the force is constant in
form within a chunk.

What a run records per sample (`Trajectory.pull`, (S, PULL_COLUMNS)): `PULL_LINK` the
link (0 while not pulling), `PULL_AT` p (3, m), `PULL_TARGET` x* (3, m), `PULL_FORCE` F
(3, N), `PULL_POWER` P (W); all zero while not pulling.
"""
from __future__ import annotations

import threading

import numpy as np

from ..algorithms.kinematics import forward_kinematics
from ..kernels.pull import (AT, DAMPING, HEADER, LINK, POINT, PULL_AT, PULL_COLUMNS,
                            PULL_FORCE, PULL_LINK, PULL_POWER, PULL_TARGET, STIFFNESS, TARGET,
                            pull_buffer)
from ..model.arguments import model_of

__all__ = ["PointPull", "PULL_COLUMNS", "PULL_LINK", "PULL_AT", "PULL_TARGET", "PULL_FORCE",
           "PULL_POWER", "pull_buffer", "point_in_link", "arm_pull_gains"]


class PointPull:
    """The pull a user applies during a run (module docstring): link, point, target,
    stiffness, damping, changed from any thread, read by `simulate_chunks` at its chunk
    boundaries. Created released.

    grab(link, point, target, stiffness, damping)
        link     : 1-based link index (>= 1)
        point    : (3,) the grabbed point in link `link`'s own frame, m
                   (`point_in_link` turns a point of the world into it)
        target   : (3,) where the spring pulls it, base frame, m
        stiffness: k > 0, N/m; damping: c >= 0, N s/m
    move(target)   a new target (3,), m; ignored while released
    release()      no more pull (from the next chunk)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._params = np.zeros(HEADER)  # LINK .. DAMPING; link 0: released
        self._version = 0

    def grab(self, link: int, point, target, stiffness: float, damping: float = 0.0) -> None:
        link = int(link)
        point = np.asarray(point, dtype=float).reshape(3)
        target = np.asarray(target, dtype=float).reshape(3)
        if link < 1:
            raise ValueError(f"link must be >= 1 (1-based), got {link}")
        if not (np.isfinite(point).all() and np.isfinite(target).all()):
            raise ValueError("point and target must be finite")
        if not (np.isfinite(stiffness) and stiffness > 0):
            raise ValueError(f"stiffness must be > 0 N/m, got {stiffness!r}")
        if not (np.isfinite(damping) and damping >= 0):
            raise ValueError(f"damping must be >= 0 N s/m, got {damping!r}")
        with self._lock:
            p = self._params
            p[LINK] = link
            p[POINT:POINT + 3] = point
            p[TARGET:TARGET + 3] = target
            p[STIFFNESS] = stiffness
            p[DAMPING] = damping
            self._version += 1

    def move(self, target) -> None:
        target = np.asarray(target, dtype=float).reshape(3)
        if not np.isfinite(target).all():
            raise ValueError("target must be finite")
        with self._lock:
            if self._params[LINK] > 0:
                self._params[TARGET:TARGET + 3] = target
                self._version += 1

    def release(self) -> None:
        with self._lock:
            if self._params[LINK] > 0:
                self._params[:] = 0.0
                self._version += 1

    @property
    def link(self) -> int:
        """The pulled link (1-based), 0 while released."""
        with self._lock:
            return int(self._params[LINK])

    @property
    def active(self) -> bool:
        return self.link > 0

    @property
    def target(self) -> np.ndarray:
        """(3,) the current target, m (zeros while released)."""
        with self._lock:
            return self._params[TARGET:TARGET + 3].copy()

    @property
    def version(self) -> int:
        """Counts the changes (grab, move, release)."""
        with self._lock:
            return self._version

    def copy_into(self, buffer: np.ndarray, n: int, seen: int) -> int:
        """For the simulating thread: copy the request into a run's kernel buffer
        (`pull_buffer(n)`) if it changed since version `seen`; returns the version copied
        (== seen: nothing changed). Raises ValueError for a link beyond n."""
        with self._lock:
            if self._version == seen:
                return seen
            params = self._params.copy()
            version = self._version
        if params[LINK] > n:
            raise ValueError(f"the pull's link {int(params[LINK])} is beyond the model's {n}")
        buffer[:DAMPING + 1] = params[:DAMPING + 1]
        buffer[AT:HEADER] = 0.0
        return version


def point_in_link(model, q, link: int, point) -> np.ndarray:
    """r = Q_i^T (x - o_i): a base-frame point x (3,) in the own frame of link i (1-based)
    at joint values q (n,), m; what `PointPull.grab` takes."""
    frame = forward_kinematics(model, q).frames[int(link)]
    return frame[:3, :3].T @ (np.asarray(point, dtype=float) - frame[:3, 3])


def arm_pull_gains(model, stretch: float = 0.1) -> tuple[float, float]:
    """(k, c) of a pull that holds the whole arm's weight m g at `stretch` m (k = m g /
    stretch, N/m) with damping c = 2 sqrt(k m) (critical for the whole mass on the
    spring, N s/m): a pull that feels the same on a small and a big arm."""
    views = model_of(model).kernel.views
    mass = max(float(np.sum(views.mass)), 1e-6)
    g = max(float(np.linalg.norm(views.gravity)), 1.0)  # a weightless model: as on Earth
    k = mass * g / stretch
    return k, 2.0 * np.sqrt(k * mass)
