"""The pull's kernels: a point spring-damper on one link, inside the compiled right-hand side.

The model of the pull (what it does, the threads) is `core.sim.pull`:

    p   = o_i + Q_i r                        the grabbed point        (o_i, Q_i: link i's frame)
    v_p = sum_{j in path(i)} J_j qd_j        its velocity (core.kernels.points)
    F   = k (x* - p) - c v_p                 the force on the link at p (N)
    w_i = [(p - o_i) x F; F]                 as an external wrench on link i, moment about
                                             o_i, base frame
    P   = F . v_p                            the power it puts into the arm (W)

Every evaluation of the right-hand side adds w_i to the run's constant wrenches, at
that evaluation's state; a run without a pull pays one branch (`pull[LINK] > 0`). The
kernels work on one flat float64 buffer per run (`pull_buffer`), declared in
`PULL_FIELDS`; its header is addressed by position:

    [LINK]            link i, 1-based; 0 = no pull
    [POINT:+3]        r, the grabbed point in link i's frame, m
    [TARGET:+3]       x*, the target, base frame, m
    [STIFFNESS]       k, N/m
    [DAMPING]         c, N s/m
    [AT:+3]           out: p at the last evaluation, m
    [VELOCITY:+3]     out: v_p, m/s
    [FORCE:+3]        out: F, N
    [POWER]           out: P = F . v_p, W

and then the scratch fields:

{fields}

What a run records per sample (`Trajectory.pull`, (S, PULL_COLUMNS)): `PULL_LINK` the
link (0 while not pulling), `PULL_AT` p (3, m), `PULL_TARGET` x* (3, m), `PULL_FORCE` F
(3, N), `PULL_POWER` P (W); all zero while not pulling.
"""
from __future__ import annotations

import numpy as np

from .buffers import inlined_kernel, ir_inlined_kernel
from .denoc import dh_frames
from .fields import Field, FieldTable
from .points import add_point_force, point_position, point_velocity

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


PULL_FIELDS = FieldTable("PullViews", __name__, ("n", "nv"), (np.float64,), (
    Field("header", (HEADER,), "the request and the last evaluation (above)"),
    Field("W", ("n", 6), "the wrenches f_ext + w_i on the links"),
    Field("Rj", ("n", 3, 3), "the DH frames at the last evaluation (core.kernels.denoc)"),
    Field("oj", ("n", 3), ""),
    Field("Rl", ("n", 3, 3), ""),
    Field("ol", ("n", 3), ""),
    Field("S", ("nv", 6), "the motion subspaces of joints of several degrees of freedom"),
))
PullViews = PULL_FIELDS.views_type
__doc__ = __doc__.replace("{fields}", PULL_FIELDS.describe())
_cut_pull = PULL_FIELDS.cutter()


def pull_buffer(n: int, nv: int | None = None) -> np.ndarray:
    """The zeroed kernel buffer of a run on n joints of nv rates (default n; no pull)."""
    return PULL_FIELDS.new_buffers(n=n, nv=n if nv is None else nv)[0]


@inlined_kernel
def pull_force(mv, pull, q, qd):
    """Evaluate the pull of buffer `pull` at (q, qd) (n,): writes p, v_p, F, P into the
    buffer's out fields and leaves the DH frames at q in its scratch. Link i must be set
    (pull[LINK] >= 1)."""
    i = int(pull[LINK]) - 1
    P = _cut_pull((mv.n, mv.nv), (pull,))
    Rj, oj, Rl, ol = P.Rj, P.oj, P.Rl, P.ol
    dh_frames(mv, q, Rj, oj, Rl, ol)
    px, py, pz = point_position(Rl, ol, i, pull[POINT], pull[POINT + 1], pull[POINT + 2])
    vx, vy, vz = point_velocity(mv, Rj, oj, Rl, P.S, i, px, py, pz, qd)
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


@ir_inlined_kernel
def pulled_wrenches(mv, pull, q, qd, f_ext):
    """f_ext (n, 6) plus the pull's wrench w_i = [(p - o_i) x F; F] on link i at (q, qd):
    a view of the buffer's scratch (valid until the next call)."""
    n = mv.n
    pull_force(mv, pull, q, qd)
    P = _cut_pull((n, mv.nv), (pull,))
    W, ol = P.W, P.ol
    for k in range(n):
        for r in range(6):
            W[k, r] = f_ext[k, r]
    add_point_force(W, ol, int(pull[LINK]) - 1, pull[AT], pull[AT + 1], pull[AT + 2],
                    pull[FORCE], pull[FORCE + 1], pull[FORCE + 2])
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
