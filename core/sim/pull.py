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

The pull is part of the compiled right-hand side (`core.kernels.dop853`): every evaluation
adds w_i to the run's constant wrenches, at that evaluation's state. A run without a
pull pays one branch (`pull[LINK] > 0`).

Threads: `PointPull` is the public piece. Any thread (a window's GUI thread) may call
`grab`, `move` and `release` at any time; `simulate_chunks(..., pull=...)` reads the
latest request at its chunk boundaries only (`PointPull.copy_into`, in the simulating
thread), so a change takes effect from the next chunk and the force is constant in
form within a chunk.

The compiled kernels work on one flat float64 buffer per run (`pull_buffer`), cut by
position (`core.kernels.buffers.view`):

    [LINK]            link i, 1-based; 0 = no pull
    [POINT:+3]        r, the grabbed point in link i's frame, m
    [TARGET:+3]       x*, the target, base frame, m
    [STIFFNESS]       k, N/m
    [DAMPING]         c, N s/m
    [AT:+3]           out: p at the last evaluation, m
    [VELOCITY:+3]     out: v_p, m/s
    [FORCE:+3]        out: F, N
    [POWER]           out: P = F . v_p, W
    [HEADER:]         scratch: the wrenches f_ext + w_i (n, 6), then the DH frames
                      Rj (n, 3, 3), oj (n, 3), Rl (n, 3, 3), ol (n, 3)

What a run records per sample (`Trajectory.pull`, (S, PULL_COLUMNS)): `PULL_LINK` the
link (0 while not pulling), `PULL_AT` p (3, m), `PULL_TARGET` x* (3, m), `PULL_FORCE` F
(3, N), `PULL_POWER` P (W); all zero while not pulling.
"""
from __future__ import annotations

import threading

import numpy as np

from ..kernels.buffers import inlined_kernel, view
from ..kernels.denoc import dh_frames

__all__ = ["PointPull", "PULL_COLUMNS", "PULL_LINK", "PULL_AT", "PULL_TARGET", "PULL_FORCE",
           "PULL_POWER", "pull_buffer", "point_in_link", "arm_pull_gains"]

# ---- the kernel buffer (module docstring) ----
LINK, POINT, TARGET, STIFFNESS, DAMPING = 0, 1, 4, 7, 8
AT, VELOCITY, FORCE, POWER = 9, 12, 15, 18
HEADER = 19

# ---- the recorded columns, Trajectory.pull (S, PULL_COLUMNS) ----
PULL_LINK = 0
PULL_AT = slice(1, 4)
PULL_TARGET = slice(4, 7)
PULL_FORCE = slice(7, 10)
PULL_POWER = 10
PULL_COLUMNS = 11


def pull_buffer(n: int) -> np.ndarray:
    """The zeroed kernel buffer of a run on n joints (no pull): (HEADER + 30 n,)."""
    return np.zeros(HEADER + 30 * n)


@inlined_kernel
def pull_force(mv, pull, q, qd):
    """Evaluate the pull of buffer `pull` at (q, qd) (n,): writes p, v_p, F, P into the
    buffer's out fields and leaves the DH frames at q in its scratch. Link i must be set
    (pull[LINK] >= 1)."""
    n = mv.n
    i = int(pull[LINK]) - 1
    f = HEADER + 6 * n
    Rj = view(pull, f, (n, 3, 3))
    oj = view(pull, f + 9 * n, (n, 3))
    Rl = view(pull, f + 12 * n, (n, 3, 3))
    ol = view(pull, f + 21 * n, (n, 3))
    dh_frames(mv, q, Rj, oj, Rl, ol)
    # p = o_i + Q_i r
    rx, ry, rz = pull[POINT], pull[POINT + 1], pull[POINT + 2]
    px = ol[i, 0] + Rl[i, 0, 0] * rx + Rl[i, 0, 1] * ry + Rl[i, 0, 2] * rz
    py = ol[i, 1] + Rl[i, 1, 0] * rx + Rl[i, 1, 1] * ry + Rl[i, 1, 2] * rz
    pz = ol[i, 2] + Rl[i, 2, 0] * rx + Rl[i, 2, 1] * ry + Rl[i, 2, 2] * rz
    # v_p = sum over the joints j from link i down to the base of J_j qd_j
    vx = vy = vz = 0.0
    j = i
    while j >= 0:
        ex, ey, ez = Rj[j, 0, 2], Rj[j, 1, 2], Rj[j, 2, 2]  # e_j: z of joint j's frame
        if mv.revolute[j]:
            # J_j = e_j x (p - O_j)
            ax, ay, az = px - oj[j, 0], py - oj[j, 1], pz - oj[j, 2]
            vx += (ey * az - ez * ay) * qd[j]
            vy += (ez * ax - ex * az) * qd[j]
            vz += (ex * ay - ey * ax) * qd[j]
        else:
            # J_j = e_j
            vx += ex * qd[j]
            vy += ey * qd[j]
            vz += ez * qd[j]
        j = mv.parent[j]
    # F = k (x* - p) - c v_p
    k, c = pull[STIFFNESS], pull[DAMPING]
    Fx = k * (pull[TARGET] - px) - c * vx
    Fy = k * (pull[TARGET + 1] - py) - c * vy
    Fz = k * (pull[TARGET + 2] - pz) - c * vz
    pull[AT], pull[AT + 1], pull[AT + 2] = px, py, pz
    pull[VELOCITY], pull[VELOCITY + 1], pull[VELOCITY + 2] = vx, vy, vz
    pull[FORCE], pull[FORCE + 1], pull[FORCE + 2] = Fx, Fy, Fz
    # P = F . v_p
    pull[POWER] = Fx * vx + Fy * vy + Fz * vz


@inlined_kernel
def pulled_wrenches(mv, pull, q, qd, f_ext):
    """f_ext (n, 6) plus the pull's wrench w_i = [(p - o_i) x F; F] on link i at (q, qd):
    a view of the buffer's scratch (valid until the next call)."""
    n = mv.n
    pull_force(mv, pull, q, qd)
    W = view(pull, HEADER, (n, 6))
    for k in range(n):
        for r in range(6):
            W[k, r] = f_ext[k, r]
    i = int(pull[LINK]) - 1
    ol = view(pull, HEADER + 27 * n, (n, 3))
    ax, ay, az = pull[AT] - ol[i, 0], pull[AT + 1] - ol[i, 1], pull[AT + 2] - ol[i, 2]
    Fx, Fy, Fz = pull[FORCE], pull[FORCE + 1], pull[FORCE + 2]
    W[i, 0] += ay * Fz - az * Fy
    W[i, 1] += az * Fx - ax * Fz
    W[i, 2] += ax * Fy - ay * Fx
    W[i, 3] += Fx
    W[i, 4] += Fy
    W[i, 5] += Fz
    return W


@inlined_kernel
def record_pull(pull, out):
    """out (PULL_COLUMNS,) = [link, p, x*, F, P] of the last `pull_force` (zeros if no pull)."""
    if pull[LINK] > 0.0:
        out[0] = pull[LINK]
        for r in range(3):
            out[1 + r] = pull[AT + r]
            out[4 + r] = pull[TARGET + r]
            out[7 + r] = pull[FORCE + r]
        out[10] = pull[POWER]
    else:
        for r in range(PULL_COLUMNS):
            out[r] = 0.0


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
    from ..algorithms.kinematics import forward_kinematics
    frame = forward_kinematics(model, q).frames[int(link)]
    return frame[:3, :3].T @ (np.asarray(point, dtype=float) - frame[:3, 3])


def arm_pull_gains(model, stretch: float = 0.1) -> tuple[float, float]:
    """(k, c) of a pull that holds the whole arm's weight m g at `stretch` m (k = m g /
    stretch, N/m) with damping c = 2 sqrt(k m) (critical for the whole mass on the
    spring, N s/m): a pull that feels the same on a small and a big arm."""
    from ..algorithms.dynamics import kernel_of
    views = kernel_of(model).views
    mass = max(float(np.sum(views.mass)), 1e-6)
    g = max(float(np.linalg.norm(views.gravity)), 1.0)  # a weightless model: as on Earth
    k = mass * g / stretch
    return k, 2.0 * np.sqrt(k * mass)
