"""The model as the compiled kernels read it: two flat buffers cut into named fields.

A `Robot` or a `Mechanism` is frozen Python data. Each owns, by construction, one
`KernelModel`: a float buffer `F` and an integer buffer `I` that the numba kernels
receive as two plain arguments (a namedtuple argument costs about 1 us per call at
numba's dispatcher; two arrays cost 0.1 us) and cut, inside the kernel, into the
named views of `ModelViews` (`model_views(F, I)`). This module is the one home of
that layout: Python fills the buffers through the same views.

Fields (n tree joints, nl loop joints, m active constraint rows, ni independent joints):

    I[0:4]       n, nl, m, ni                       counts
    parent (n,)  parent joint of each joint, -1 for a chain fixed to the base
    revolute (n,) 1 revolute, 0 prismatic
    order (n,)   a topological order of the joints (every parent before its children);
                 the recursions run `for i in range(n): k = order[i]`
    placed (n,)  1 if the joint's DH frame 0 is not the parent link's own frame
                 (a chain root: its base placement), else 0
    loop_body (nl, 2)  the two links of loop l (joint indices; -1 = the base)
    loop_type (nl,)    LOOP_REVOLUTE, LOOP_SPHERICAL, LOOP_PRISMATIC
    row_loop (m,)      loop of active constraint row r
    row_kind (m,)      which scalar of that loop's closure the row is (ROW_* below)
    independent (ni,)  joints held by assembly and used as minimal coordinates

    gravity (3,)       m/s^2, base frame
    dh (n, 4)          a, b, alpha, theta (m, m, rad, rad); joint variable = home value
    mass (n,)          kg
    com (n, 3)         mass centre in the link's own frame, m
    inertia (n, 9)     3x3 inertia about the mass centre, link frame, row-major, kg m^2
    place_R (n, 3, 3), place_p (n, 3)
                       pose of the joint's DH frame 0 in the parent link's own frame
                       (in the base frame for a chain on the base); identity inside a chain
    loop_point (nl, 2, 3)  the joint point in each link's own frame (base frame for -1), m
    loop_axis (nl, 2, 3)   the joint axis in each frame (unit)
    loop_u, loop_v (nl, 3) two unit vectors completing loop_axis[l, 0] to a right-handed
                           frame (u, v, axis) in the first link's frame
    loop_x (nl, 3)         the reference direction on the second link for a prismatic
                           loop's roll row (unit, perpendicular to loop_axis[l, 1])
"""
from __future__ import annotations

import threading
from collections import namedtuple

import numpy as np

from numba import njit

from .buffers import compiled_kernel, view

LOOP_REVOLUTE = 0
LOOP_SPHERICAL = 1
LOOP_PRISMATIC = 2

# The scalar closure rows of a loop joint between frames a and b (base-frame points
# P_a, P_b; directions u, v, z_a fixed on a; z_b, x_b fixed on b):
ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z = 0, 1, 2   # (P_b - P_a) . e_x, e_y, e_z
ROW_AXIS_U, ROW_AXIS_V = 3, 4                      # u . z_b, v . z_b  (axes parallel)
ROW_LINE_U, ROW_LINE_V = 5, 6                      # (P_b - P_a) . u, . v  (P_b on a's line)
ROW_ROLL = 7                                       # v . x_b  (no rotation about the axis)

#: The raw rows of each loop-joint type, in order.
LOOP_ROWS = {
    LOOP_REVOLUTE: (ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z, ROW_AXIS_U, ROW_AXIS_V),
    LOOP_SPHERICAL: (ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z),
    LOOP_PRISMATIC: (ROW_LINE_U, ROW_LINE_V, ROW_AXIS_U, ROW_AXIS_V, ROW_ROLL),
}

ModelViews = namedtuple("ModelViews", (
    "n", "nl", "m", "ni", "parent", "revolute", "order", "placed", "loop_body", "loop_type",
    "row_loop", "row_kind", "independent", "gravity", "dh", "mass", "com", "inertia",
    "place_R", "place_p", "loop_point", "loop_axis", "loop_u", "loop_v", "loop_x"))

_HEADER = 4


@compiled_kernel
def buffer_sizes(n, nl, m, ni):
    """(float buffer length, int buffer length) for the given counts."""
    n_float = 3 + n * (4 + 1 + 3 + 9 + 9 + 3) + nl * (6 + 6 + 3 + 3 + 3)
    n_int = _HEADER + 4 * n + 3 * nl + 2 * m + ni
    return n_float, n_int


@compiled_kernel
def model_views(F, I):
    """Cut the model buffers into the named fields listed in the module docstring
    (`core.kernels.buffers.view`: no copies, no reference counting)."""
    n, nl, m, ni = I[0], I[1], I[2], I[3]
    i = _HEADER
    parent = view(I, i, (n,)); i += n
    revolute = view(I, i, (n,)); i += n
    order = view(I, i, (n,)); i += n
    placed = view(I, i, (n,)); i += n
    loop_body = view(I, i, (nl, 2)); i += 2 * nl
    loop_type = view(I, i, (nl,)); i += nl
    row_loop = view(I, i, (m,)); i += m
    row_kind = view(I, i, (m,)); i += m
    independent = view(I, i, (ni,)); i += ni
    f = 0
    gravity = view(F, f, (3,)); f += 3
    dh = view(F, f, (n, 4)); f += 4 * n
    mass = view(F, f, (n,)); f += n
    com = view(F, f, (n, 3)); f += 3 * n
    place_p = view(F, f, (n, 3)); f += 3 * n
    inertia = view(F, f, (n, 9)); f += 9 * n
    place_R = view(F, f, (n, 3, 3)); f += 9 * n
    loop_point = view(F, f, (nl, 2, 3)); f += 6 * nl
    loop_axis = view(F, f, (nl, 2, 3)); f += 6 * nl
    loop_u = view(F, f, (nl, 3)); f += 3 * nl
    loop_v = view(F, f, (nl, 3)); f += 3 * nl
    loop_x = view(F, f, (nl, 3)); f += 3 * nl
    return ModelViews(n, nl, m, ni, parent, revolute, order, placed, loop_body, loop_type,
                      row_loop, row_kind, independent, gravity, dh, mass, com, inertia,
                      place_R, place_p, loop_point, loop_axis, loop_u, loop_v, loop_x)


@njit(cache=True)
def _model_views_from_python(F, I):
    """`model_views` for Python callers (compiled with reference counting, which numba
    needs to hand arrays to Python). The arrays point into F and I: keep them alive."""
    return model_views(F, I)


def perpendicular_pair(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors u, v with (u, v, axis) right-handed; u is the frame's x (or y) made
    perpendicular to the axis, so that the choice is the same for equal axes."""
    z = np.asarray(axis, dtype=float)
    z = z / np.linalg.norm(z)
    ref = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = ref - (ref @ z) * z
    u /= np.linalg.norm(u)
    v = np.cross(z, u)
    return u, v


class KernelModel:
    """The packed model (buffers `F`, `I`, read-only) and its counts.

    Built by `pack_model`; the kernels receive `F` and `I`.
    """

    __slots__ = ("F", "I", "n", "nl", "m", "ni", "no_wrench", "per_thread", "_views")

    def __init__(self, F: np.ndarray, I: np.ndarray) -> None:
        self.F, self.I = F, I
        self.n, self.nl, self.m, self.ni = (int(x) for x in I[:_HEADER])
        F.setflags(write=False)
        I.setflags(write=False)
        #: (n, 6) zeros: "no external wrench" for the kernels (never written; writable so
        #: that numba compiles one array type for wrenches)
        self.no_wrench = np.zeros((self.n, 6))
        #: per-thread slot for the calling thread's workspace buffer
        #: (`core.kernels.data.thread_workspace(n, m)`), found here without the pool's lookup
        #: by the single-state calls; per-call state, not model data
        self.per_thread = threading.local()
        self._views = None

    @property
    def views(self) -> ModelViews:
        """The named fields as read-only numpy arrays (copies: the kernels' views hold
        raw pointers into F and I, unsafe to keep in Python)."""
        if self._views is None:
            fields = []
            for x in _model_views_from_python(self.F, self.I):
                if isinstance(x, np.ndarray):
                    x = x.copy()
                    x.setflags(write=False)
                fields.append(x)
            self._views = ModelViews(*fields)
        return self._views


def topological_order(parent) -> np.ndarray:
    """Joint indices with every parent before its children (stable: file order where it can)."""
    parent = list(parent)
    n = len(parent)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for k, p in enumerate(parent):
        (roots if p < 0 else children[p]).append(k)
    order: list[int] = []
    # repeatedly take the smallest available index: file order whenever parents allow
    import heapq
    heap = list(roots)
    heapq.heapify(heap)
    while heap:
        k = heapq.heappop(heap)
        order.append(k)
        for c in children[k]:
            heapq.heappush(heap, c)
    if len(order) != n:
        raise ValueError("the parent array has a cycle")
    return np.array(order, dtype=np.int64)


def pack_model(*, dh, revolute, mass, com, inertia, parent, place_R=None, place_p=None,
               gravity, loop_body=(), loop_type=(), loop_point=(), loop_axis=(),
               independent=(), row_loop=None, row_kind=None) -> KernelModel:
    """Fill a KernelModel. Arrays as in the module docstring; `inertia` (n, 3, 3).

    Without `row_loop`/`row_kind` every raw row of every loop is active.
    """
    n = len(mass)
    nl = len(loop_type)
    if row_loop is None:
        rl, rk = [], []
        for l, typ in enumerate(loop_type):
            for kind in LOOP_ROWS[int(typ)]:
                rl.append(l)
                rk.append(kind)
        row_loop, row_kind = rl, rk
    m = len(row_loop)
    ni = len(independent)
    nf, nint = buffer_sizes(n, nl, m, ni)
    F = np.zeros(nf)
    I = np.zeros(nint, dtype=np.int64)
    I[:_HEADER] = (n, nl, m, ni)
    v = _model_views_from_python(F, I)
    v.parent[:] = parent
    v.revolute[:] = revolute
    v.order[:] = topological_order(parent)
    v.gravity[:] = gravity
    v.dh[:] = np.asarray(dh, dtype=float).reshape(n, 4)
    v.mass[:] = mass
    v.com[:] = np.asarray(com, dtype=float).reshape(n, 3)
    v.inertia[:] = np.asarray(inertia, dtype=float).reshape(n, 9)
    if place_R is None:
        v.place_R[:] = np.eye(3)
    else:
        v.place_R[:] = place_R
    if place_p is not None:
        v.place_p[:] = place_p
    for k in range(n):
        v.placed[k] = 0 if (np.array_equal(v.place_R[k], np.eye(3))
                            and not np.any(v.place_p[k])) else 1
    if nl:
        v.loop_body[:] = np.asarray(loop_body, dtype=np.int64).reshape(nl, 2)
        v.loop_type[:] = loop_type
        v.loop_point[:] = np.asarray(loop_point, dtype=float).reshape(nl, 2, 3)
        axes = np.asarray(loop_axis, dtype=float).reshape(nl, 2, 3)
        v.loop_axis[:] = axes / np.linalg.norm(axes, axis=2, keepdims=True)
        for l in range(nl):
            v.loop_u[l], v.loop_v[l] = perpendicular_pair(v.loop_axis[l, 0])
            v.loop_x[l] = perpendicular_pair(v.loop_axis[l, 1])[0]
    v.row_loop[:] = row_loop
    v.row_kind[:] = row_kind
    v.independent[:] = independent
    return KernelModel(F, I)
