"""Force elements: springs and dampers between bodies, and tyres on a road.

A model may carry force elements (`core.model.parts.SpringDamper`, `Tyre`), packed in
its kernel buffers (`core.kernels.layout`: element_kind, element_link, element_point,
element_law, road). Every evaluation of a run's right-hand side adds their wrenches to
the links' external wrenches (`element_wrenches`), and their springs' energy is part of
the run's potential energy. The rigid-body functions (forward_dynamics, ...) leave them
out, as they leave out damping.

A spring-damper joins a point a of one link and a point b of another (or of the base):

    d = p_b - p_a,  L = |d|,  u = d / L      its line
    L' = u . (v_b - v_a)                     its rate of stretch
    F = k (L - L0) + c L'                    its tension (N; < 0 pushes the points apart)
    on a: F u at p_a;  on b: -F u at p_b     (equal and opposite: no net force)
    V = k (L - L0)^2 / 2                     its energy

A tyre is a unilateral vertical spring-damper between a link's point (a wheel centre)
and the road below it, h(x) (piecewise linear through the road's points, flat beyond;
h = 0 without points). With r the tyre's radius (its free length):

    delta = r - (p_z - h(p_x))               its compression (> 0 on the road)
    delta' = h'(p_x) v_x - v_z
    F = max(0, k delta + c delta')           it only pushes, up along the base z
    V = k delta^2 / 2 while delta > 0

Each evaluation leaves the elements' forces (F) and stretches (L - L0, delta) in the
data (`element_force`, `element_stretch`), which the runs record.
"""
from __future__ import annotations

import math

from .buffers import compiled_kernel, inlined_kernel
from .data import data_views
from .denoc import dh_frames
from .layout import model_views
from .points import add_point_force, point_position, point_velocity

ELEMENT_SPRING_DAMPER = 0
ELEMENT_TYRE = 1

#: Below this length (m) a spring-damper has no direction: it pulls nothing.
ZERO_LENGTH = 1e-12


@inlined_kernel
def road_height(road, x):
    """(h(x), h'(x)) of the road's points (nr, 2) (x increasing; flat beyond them)."""
    nr = road.shape[0]
    if nr == 0:
        return 0.0, 0.0
    if x <= road[0, 0]:
        return road[0, 1], 0.0
    if x >= road[nr - 1, 0]:
        return road[nr - 1, 1], 0.0
    lo, hi = 0, nr - 1  # road[lo, 0] < x < road[hi, 0]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if road[mid, 0] <= x:
            lo = mid
        else:
            hi = mid
    slope = (road[hi, 1] - road[lo, 1]) / (road[hi, 0] - road[lo, 0])
    return road[lo, 1] + slope * (x - road[lo, 0]), slope


@inlined_kernel
def element_wrenches(mv, D, q, qd, f_ext):
    """(W, V): the link wrenches f_ext (n, 6) plus every force element's at (q, qd), in
    the data's W, and the elements' energy V (J). Fills element_force, element_stretch;
    leaves the frames at q in Rj, oj, Rl, ol (the recursions compute them again)."""
    Rj, oj, Rl, ol, W = D.Rj, D.oj, D.Rl, D.ol, D.W
    dh_frames(mv, q, Rj, oj, Rl, ol, D.cs)
    for k in range(mv.n):
        for r in range(6):
            W[k, r] = f_ext[k, r]
    V = 0.0
    point, law = mv.element_point, mv.element_law
    for e in range(mv.ne):
        stiffness, damping, free = law[e, 0], law[e, 1], law[e, 2]
        a = mv.element_link[e, 0]
        ax, ay, az = point_position(Rl, ol, a, point[e, 0, 0], point[e, 0, 1], point[e, 0, 2])
        vax, vay, vaz = point_velocity(mv, Rj, oj, Rl, D.S, a, ax, ay, az, qd)
        if mv.element_kind[e] == ELEMENT_TYRE:
            h, slope = road_height(mv.road, ax)
            delta = free - (az - h)
            F = 0.0
            if delta > 0.0:
                F = max(0.0, stiffness * delta + damping * (slope * vax - vaz))
                V += 0.5 * stiffness * delta * delta
                add_point_force(W, ol, a, ax, ay, az, 0.0, 0.0, F)
            D.element_force[e] = F
            D.element_stretch[e] = delta
            continue
        b = mv.element_link[e, 1]
        bx, by, bz = point_position(Rl, ol, b, point[e, 1, 0], point[e, 1, 1], point[e, 1, 2])
        vbx, vby, vbz = point_velocity(mv, Rj, oj, Rl, D.S, b, bx, by, bz, qd)
        dx, dy, dz = bx - ax, by - ay, bz - az
        L = math.sqrt(dx * dx + dy * dy + dz * dz)
        stretch = L - free
        F = stiffness * stretch
        if L > ZERO_LENGTH:
            ux, uy, uz = dx / L, dy / L, dz / L
            F += damping * (ux * (vbx - vax) + uy * (vby - vay) + uz * (vbz - vaz))
            add_point_force(W, ol, a, ax, ay, az, F * ux, F * uy, F * uz)
            add_point_force(W, ol, b, bx, by, bz, -F * ux, -F * uy, -F * uz)
        V += 0.5 * stiffness * stretch * stretch
        D.element_force[e] = F
        D.element_stretch[e] = stretch
    return W, V


@compiled_kernel
def with_element_wrenches(F, I, ws, q, qd, f_ext, out):
    """out (n, 6) = the link wrenches f_ext (n, 6) plus every force element's at
    (q (nq,), qd (nv,)) (`element_wrenches`), from Python; returns their energy V (J)."""
    mv = model_views(F, I)
    W, V = element_wrenches(mv, data_views(mv, ws), q, qd, f_ext)
    for k in range(mv.n):
        for r in range(6):
            out[k, r] = W[k, r]
    return V
