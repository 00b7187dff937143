"""The model as the compiled kernels read it: two flat buffers cut into named fields.

Every model compiles (`core.model`) to one `KernelModel`: a float buffer `F` and an
integer buffer `I` that the numba kernels receive as two plain arguments (a namedtuple
argument costs about 1 us per call at numba's dispatcher; two arrays cost 0.1 us) and
cut, inside the kernel, into the named views of `ModelViews` (`model_views(F, I)`).
The fields are declared once, in `MODEL_FIELDS` (`core.kernels.fields`): the buffer
lengths, the compiled views, the views Python fills the buffers through and the table
below all come from that declaration.

Sizes: n tree joints, nq joint values, nv joint rates, nl loop joints, m active
constraint rows, ni independent joints, ne force elements, nr points of the road, nd
joints with friction and drives (n when any joint has them, else 0: a model without
them computes exactly as before). The views list the sizes first (`mv.n, mv.nq, ...`),
then the fields:

{fields}

The joint table (`kind`, `iq`, `iv`) is what the recursions dispatch on, in one place
(`core.kernels.joints`).
"""
from __future__ import annotations

import heapq
import math
import threading

import numpy as np

from .buffers import inlined_kernel
from .fields import Field, FieldTable
from .joints import JOINT_NQ, JOINT_NV

LOOP_REVOLUTE = 0
LOOP_SPHERICAL = 1
LOOP_PRISMATIC = 2
LOOP_GEAR = 3

# The scalar closure rows of a loop joint between frames a and b (base-frame points
# P_a, P_b; directions u, v, z_a fixed on a; z_b, x_b fixed on b):
ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z = 0, 1, 2   # (P_b - P_a) . e_x, e_y, e_z
ROW_AXIS_U, ROW_AXIS_V = 3, 4                      # u . z_b, v . z_b  (axes parallel)
ROW_LINE_U, ROW_LINE_V = 5, 6                      # (P_b - P_a) . u, . v  (P_b on a's line)
ROW_ROLL = 7                                       # v . x_b  (no rotation about the axis)
ROW_GEAR = 8      # (q_b - q_b0) - ratio (q_a - q_a0): a gear loop couples two joint values

#: The raw rows of each loop-joint type, in order.
LOOP_ROWS = {
    LOOP_REVOLUTE: (ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z, ROW_AXIS_U, ROW_AXIS_V),
    LOOP_SPHERICAL: (ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z),
    LOOP_PRISMATIC: (ROW_LINE_U, ROW_LINE_V, ROW_AXIS_U, ROW_AXIS_V, ROW_ROLL),
    LOOP_GEAR: (ROW_GEAR,),
}

#: The model's fields: I (buffer 1) holds the counts, the joint table and the loops'
#: topology; F (buffer 0) the numbers.
MODEL_FIELDS = FieldTable("ModelViews", __name__,
                          ("n", "nq", "nv", "nl", "m", "ni", "ne", "nr", "nd"),
                          (np.float64, np.int64), (
    Field("counts", (9,), "n, nq, nv, nl, m, ni, ne, nr, nd (read by `model_views`)", 1),
    Field("parent", ("n",), "parent joint of each joint, -1 for a chain fixed to the base", 1),
    Field("kind", ("n",), "joint kind: JOINT_REVOLUTE, JOINT_PRISMATIC (core.kernels.joints)",
          1),
    Field("iq", ("n",), "where joint k's values start in q", 1),
    Field("iv", ("n",), "where joint k's rates start in qd, qdd and tau", 1),
    Field("order", ("n",), "a topological order of the joints (every parent before its\n"
          "children); the recursions run `for i in range(n): k = order[i]`", 1),
    Field("placed", ("n",), "1 if the joint's DH frame 0 is not the parent link's own frame\n"
          "(a chain root: its base placement), else 0", 1),
    Field("loop_body", ("nl", 2), "the two links of loop l (joint indices; -1 = the base)", 1),
    Field("loop_type", ("nl",), "LOOP_REVOLUTE, LOOP_SPHERICAL, LOOP_PRISMATIC, LOOP_GEAR", 1),
    Field("row_loop", ("m",), "loop of active constraint row r", 1),
    Field("row_kind", ("m",), "which scalar of that loop's closure the row is (ROW_*)", 1),
    Field("independent", ("ni",), "joints held by assembly, the minimal coordinates", 1),
    Field("element_kind", ("ne",), "force element e: ELEMENT_SPRING_DAMPER, ELEMENT_TYRE\n"
          "(core.kernels.elements)", 1),
    Field("element_link", ("ne", 2), "the links it joins (joint indices; -1 = the base; a\n"
          "tyre's second is -1, the road)", 1),
    Field("gravity", (3,), "m/s^2, base frame"),
    Field("dh", ("n", 6), "a, b, alpha, theta (m, m, rad, rad; joint variable = home value),\n"
          "then cos alpha, sin alpha (constant: the kinematics read them instead of calling\n"
          "cos and sin per joint and evaluation; in this field, not one of their own, since\n"
          "every view is a few more words in each call that passes the model)"),
    Field("mass", ("n",), "kg"),
    Field("com", ("n", 3), "mass centre in the link's own frame, m"),
    Field("place_p", ("n", 3), "origin of the joint's DH frame 0 in the parent link's own\n"
          "frame (in the base frame for a chain on the base), m; zero inside a chain"),
    Field("inertia", ("n", 9), "3x3 inertia about the mass centre, link frame, row-major,\n"
          "kg m^2"),
    Field("place_R", ("n", 3, 3), "orientation of that frame; identity inside a chain"),
    Field("loop_point", ("nl", 2, 3), "the joint point in each link's own frame (base frame\n"
          "for -1), m; zero for a gear loop (no point)"),
    Field("loop_axis", ("nl", 2, 3), "the joint axis in each frame (unit)"),
    Field("loop_u", ("nl", 3), "unit vector completing loop_axis[l, 0] to a right-handed\n"
          "frame (u, v, axis) in the first link's frame"),
    Field("loop_v", ("nl", 3), "the third vector of that frame"),
    Field("loop_x", ("nl", 3), "the reference direction on the second link for a prismatic\n"
          "loop's roll row (unit, perpendicular to loop_axis[l, 1])"),
    Field("loop_gear", ("nl", 3), "a gear loop's ratio and the values of its two joints where\n"
          "it meshes: (ratio, q_a0, q_b0) (ROW_GEAR); zero for the other loops"),
    Field("element_point", ("ne", 2, 3), "its point on each link, in the link's own frame\n"
          "(base frame for -1), m"),
    Field("element_law", ("ne", 3), "stiffness k (N/m), damping c (N s/m), free length\n"
          "(a tyre: its radius), m"),
    Field("road", ("nr", 2), "the road's points (x, h), m, x increasing (none: h = 0)"),
    Field("drive", ("nd", 4), "per joint (one degree of freedom, rate iv[k]): viscous\n"
          "friction (N m s/rad, N s/m), Coulomb friction (N m, N), reflected rotor\n"
          "inertia r^2 I_rotor (kg m^2, kg), gear ratio r (`core.kernels.drives`)"),
))
ModelViews = MODEL_FIELDS.views_type
__doc__ = __doc__.replace("{fields}", MODEL_FIELDS.describe())

_cut_model = MODEL_FIELDS.cutter()


@inlined_kernel
def model_views(F, I):
    """Cut the model buffers into the named fields of `MODEL_FIELDS` (no copies, no
    reference counting; F and I must outlive the views). Inlined into every kernel: a
    compiled call returning the thirty views cost a single-state call ~50 ns, a
    twentieth of an inverse dynamics of 6 joints, and LLVM drops the views it never reads."""
    return _cut_model((I[0], I[1], I[2], I[3], I[4], I[5], I[6], I[7], I[8]), (F, I))


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

    __slots__ = ("F", "I", "n", "nq", "nv", "nl", "m", "ni", "ne", "nr", "nd", "no_wrench",
                 "per_thread", "views")

    def __init__(self, F: np.ndarray, I: np.ndarray) -> None:
        self.F, self.I = F, I
        (self.n, self.nq, self.nv, self.nl, self.m, self.ni, self.ne,
         self.nr, self.nd) = (int(x) for x in I[:9])
        F.setflags(write=False)
        I.setflags(write=False)
        #: (n, 6) zeros: "no external wrench" for the kernels (never written; writable so
        #: that numba compiles one array type for wrenches)
        self.no_wrench = np.zeros((self.n, 6))
        #: per-thread slot for the calling thread's workspace buffer
        #: (`core.kernels.data.thread_workspace(n, m)`), found here without the pool's lookup
        #: by the single-state calls; per-call state, not model data
        self.per_thread = threading.local()
        #: the named fields as read-only numpy views (`MODEL_FIELDS.numpy_views`)
        self.views = MODEL_FIELDS.numpy_views((F, I), n=self.n, nq=self.nq, nv=self.nv,
                                              nl=self.nl, m=self.m, ni=self.ni, ne=self.ne,
                                              nr=self.nr, nd=self.nd)


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


def pack_model(*, dh, kind, mass, com, inertia, parent, place_R=None, place_p=None,
               gravity, loop_body=(), loop_type=(), loop_point=(), loop_axis=(), loop_gear=None,
               independent=(), row_loop=None, row_kind=None, element_kind=(),
               element_link=(), element_point=(), element_law=(), road=(),
               drive=None) -> KernelModel:
    """Fill a KernelModel. Arrays as in the module docstring; `kind` (n,) the joint kinds
    (core.kernels.joints), `inertia` (n, 3, 3); `drive` (n, 4) or None (no joint has
    friction or a drive: nd = 0).

    Without `row_loop`/`row_kind` every raw row of every loop is active.
    """
    n = len(mass)
    nl = len(loop_type)
    kind = np.asarray(kind, dtype=np.int64).reshape(n)
    nq_of = np.array([JOINT_NQ[int(k)] for k in kind], dtype=np.int64)
    nv_of = np.array([JOINT_NV[int(k)] for k in kind], dtype=np.int64)
    if row_loop is None:
        rl, rk = [], []
        for l, typ in enumerate(loop_type):
            for row in LOOP_ROWS[int(typ)]:
                rl.append(l)
                rk.append(row)
        row_loop, row_kind = rl, rk
    ne = len(element_kind)
    road = np.asarray(road, dtype=float).reshape(-1, 2)
    sizes = dict(n=n, nq=int(nq_of.sum()), nv=int(nv_of.sum()), nl=nl, m=len(row_loop),
                 ni=len(independent), ne=ne, nr=road.shape[0],
                 nd=0 if drive is None else n)
    F, I = MODEL_FIELDS.new_buffers(**sizes)
    v = MODEL_FIELDS.numpy_views((F, I), **sizes)
    v.counts[:] = [sizes[s] for s in MODEL_FIELDS.sizes]
    v.parent[:] = parent
    v.kind[:] = kind
    v.iq[:] = np.cumsum(nq_of) - nq_of
    v.iv[:] = np.cumsum(nv_of) - nv_of
    v.order[:] = topological_order(parent)
    v.gravity[:] = gravity
    v.dh[:, :4] = np.asarray(dh, dtype=float).reshape(n, 4)
    # math.cos / math.sin: the C library's, which the compiled kernels called before
    v.dh[:, 4:] = [(math.cos(alpha), math.sin(alpha)) for alpha in v.dh[:, 2]]
    v.mass[:] = mass
    v.com[:] = np.asarray(com, dtype=float).reshape(n, 3)
    v.inertia[:] = np.asarray(inertia, dtype=float).reshape(n, 9)
    v.place_R[:] = np.eye(3) if place_R is None else place_R
    if place_p is not None:
        v.place_p[:] = place_p
    for k in range(n):
        v.placed[k] = 0 if (np.array_equal(v.place_R[k], np.eye(3))
                            and not np.any(v.place_p[k])) else 1
    if nl:
        v.loop_body[:] = np.asarray(loop_body, dtype=np.int64).reshape(nl, 2)
        v.loop_type[:] = loop_type
        v.loop_point[:] = np.asarray(loop_point, dtype=float).reshape(nl, 2, 3)
        if loop_gear is not None:
            v.loop_gear[:] = np.asarray(loop_gear, dtype=float).reshape(nl, 3)
        axes = np.asarray(loop_axis, dtype=float).reshape(nl, 2, 3)
        v.loop_axis[:] = axes / np.linalg.norm(axes, axis=2, keepdims=True)
        for l in range(nl):
            v.loop_u[l], v.loop_v[l] = perpendicular_pair(v.loop_axis[l, 0])
            v.loop_x[l] = perpendicular_pair(v.loop_axis[l, 1])[0]
    v.row_loop[:] = row_loop
    v.row_kind[:] = row_kind
    v.independent[:] = independent
    if ne:
        v.element_kind[:] = element_kind
        v.element_link[:] = np.asarray(element_link, dtype=np.int64).reshape(ne, 2)
        v.element_point[:] = np.asarray(element_point, dtype=float).reshape(ne, 2, 3)
        v.element_law[:] = np.asarray(element_law, dtype=float).reshape(ne, 3)
    v.road[:] = road
    if drive is not None:
        v.drive[:] = np.asarray(drive, dtype=float).reshape(n, 4)
    return KernelModel(F, I)
