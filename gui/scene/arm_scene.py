"""The arm or mechanism as meshes fixed in its DH frames. Qt-free (pyvista and core only).

Every mesh is built once, in the coordinates of the frame it rides on. A new
pose only moves frames: each part's actor gets ``user_matrix = frames[k]``
(times a z-scale for the rod of a prismatic joint, whose length is the joint
variable). Link i (1-based) follows the DH chain Rz(theta) Tz(b) Tx(a) Rx(alpha):

    joint frame i --(b along its z)--> elbow_i --(a along x_i)--> origin_i

The frames a part can ride on are `scene_frames`: the base and the n link frames
(`Kinematics.frames`, indices 0..n), then the n joint frames (indices n+1..2n). In a
serial arm joint frame i is link frame i-1; in a tree or a closed chain it is the
parent link's frame times the chain's base placement.

Parts (names as in `Part.name`):

- ``joint i``   cylinder (revolute) or box (prismatic) on the joint axis, a ball (spherical,
                universal), nothing (free: the body floats), joint frame i
- ``offset i``  the b segment, joint frame i (from 0 to b along z)
- ``length i``  the a segment, frame i (from (-a, 0, 0) to the origin)
- ``elbow i``   a ball where the two segments meet, (-a, 0, 0) in frame i
- ``body i``    a free body: the box of its mass and inertia (`inertia_box`), frame i
- ``com i``     a ball at the link's mass centre, frame i       (layer "com")
- ``frame k``   x/y/z arrows (red/green/blue) of frame k         (layer "frames")
- ``effector``  a marker on frame n (serial arms)                (layer "effector")
- ``base``, ``pedestal``, ``floor``, ``grid``: fixed in the base frame (layer "ground")

A mechanism (`core.Mechanism`) adds, from the same data:

- ``root c``    chain c's root: a plate under its first joint when it starts on the
                base (not under a free body) (layer "ground"), a strut from the parent link's origin to the
                chain's base point when it starts on a link
- ``cut l a``   loop l's cut joint on its first link: a sleeve along the joint axis
                at the attachment point (layer "arm")
- ``cut l b``   the same joint on its second link (or the base): a pin
- ``gap l``     a red rod from one attachment point to the other, stretched by
                `gap_matrix` each pose, hidden while the loop is closed
- ``ground l``  a plate at the outer end of loop l's pin when that joint is on the
                base (layer "ground")
- (a gear loop couples two joint values: no part of its own)

A branched tree without loops (a humanoid: `draws_bodies`) draws each link as a
``body i``, the uniform box of its mass and principal moments at its mass centre
(frame i), instead of the ``offset`` / ``length`` / ``elbow`` rods.

Sizes scale with the robot's reach (sum of |a| + |b|), so a 0.3 m SCARA and a
1.5 m arm both look right. The floor is perpendicular to gravity, below
anything the arm can reach: a serial arm's reach from its lengths and axes (`_depth`),
a mechanism's from its link lengths about every point fixed in the base, loops
included (`_mechanism_lowest`), not from its home pose.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyvista as pv

from armdyn.core import (JointType, Kinematics, Link, LoopJointType, Mechanism, Model, Robot,
                         forward_kinematics)
from armdyn.core.lab.model_checks import equivalent_box
from armdyn.core.model.arguments import model_of

from ..look.colors import joint_color

__all__ = ["Part", "Sizes", "build_parts", "draws_bodies", "part_matrix", "part_matrices", "topology_key",
           "geometry_key", "up_vector", "scene_frames", "gap_matrix", "loop_points", "LAYERS",
           "MergedParts", "inertia_box"]

#: Layers the view can show or hide.
LAYERS = ("arm", "com", "frames", "effector", "ground")

LINK_COLOR = "#A9B2BC"
BASE_COLOR = "#6B7682"
PEDESTAL_COLOR = "#B4BDC7"
EFFECTOR_COLOR = "#2E3440"
#: The floor is drawn unlit (`view3d`: a flat plane under the view's directional lights
#: is one colour anyway), in the colour it had lit from the default view.
FLOOR_COLOR = "#DEE0E4"
GRID_COLOR = "#C3CAD3"
CUT_COLOR_A = "#E69F00"   # loop joints: the sleeve on the first link
CUT_COLOR_B = "#8C4A00"   # and the pin on the second
GAP_COLOR = "#D00000"
#: The bodies of a branched tree (`draws_bodies`): lighter than the rods, so that the
#: joints' colours stand out on them.
BODY_COLOR = "#C9CED6"
#: Robots of more links than this draw their links with coarse cylinders and balls (a
#: third of the facets): each link is a few pixels on screen, and a 200-link arm's frame
#: is rendered and moved in a fraction of the time (issue #8).
COARSE_ABOVE = 24
#: A loop whose attachment points are further apart than this share of the drawing
#: size shows its gap rod.
GAP_VISIBLE = 1e-4
AXIS_RGB = np.array([[214, 39, 40], [44, 160, 44], [31, 119, 180]], dtype=np.uint8)

_EPS = 1e-9


@dataclass
class Part:
    """One mesh of the scene.

    name    : unique name ("joint 2", "com 1", "frame 0", ...)
    layer   : one of `LAYERS`
    frame   : index into ``Kinematics.frames`` the mesh rides on; None = fixed (base frame)
    mesh    : the mesh, in that frame's coordinates
    color   : a colour, or None if the mesh carries its own "rgb" cell colours
    stretch : the entry of q (a prismatic joint's value) that scales the mesh along local z
              (the rod of a prismatic joint), else None
    gap     : index of the loop whose closure gap the mesh (a unit rod) shows, else None
    """

    name: str
    layer: str
    frame: int | None
    mesh: pv.PolyData
    color: str | None
    stretch: int | None = None
    gap: int | None = None


@dataclass(frozen=True)
class Sizes:
    """Drawing sizes in metres, proportional to the robot's reach."""

    reach: float

    @classmethod
    def of(cls, robot: Robot | Mechanism | Model) -> "Sizes":
        if robot.is_serial_arm:
            reach = sum(abs(link.a) + _travel(link) for link in robot.links)
        else:
            reach = _mechanism_span(robot)
        return cls(reach if reach > 1e-6 else 0.5)

    @property
    def joint_radius(self) -> float:
        return 0.035 * self.reach

    @property
    def joint_length(self) -> float:
        return 2.6 * self.joint_radius

    @property
    def link_radius(self) -> float:
        return 0.55 * self.joint_radius

    @property
    def com_radius(self) -> float:
        return 0.7 * self.joint_radius

    @property
    def triad_length(self) -> float:
        return 4.0 * self.joint_radius


def _travel(link: Link) -> float:
    """Largest |b| a link can have: its b, or the ends of a prismatic joint's range."""
    lo, hi = _b_range(link)
    return max(abs(lo), abs(hi))


def _b_range(link: Link) -> tuple[float, float]:
    """Range of b: fixed for a revolute joint; limits (or 0..b) for a prismatic one."""
    if link.is_revolute:
        return (link.b, link.b)
    if link.limits is not None:
        return (min(link.limits[0], link.b), max(link.limits[1], link.b))
    return (min(0.0, link.b), max(0.0, link.b))


def _mechanism_span(mech: Mechanism) -> float:
    """A mechanism's drawing size, m: its extent at home (every frame origin), but at
    least its longest link (a serial arm's reach sums its links; a mechanism's loops
    keep it much smaller than that sum)."""
    kin = forward_kinematics(mech, mech.q_home)
    points = np.vstack([kin.origins, kin.joint_origins])
    extent = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
    longest = max((abs(link.a) + _travel(link) for link in mech.links), default=0.0)
    return max(extent, longest)


def scene_frames(kin: Kinematics) -> np.ndarray:
    """(2n+1, 4, 4): the base and link frames (0..n), then the joint frames (n+1..2n)."""
    return np.concatenate([kin.frames, kin.joint_frames])


def part_link(part: Part, parents: np.ndarray) -> int:
    """The link (1-based) whose motion part rides on, 0 for the base (fixed parts, the
    base frame). parents (n,): each joint's parent link, 0-based, -1 for the base
    (`core` kernel model `parent`). A joint frame (n+1..2n) is fixed in its joint's
    parent link (the housing of joint i moves with link i-1 in a serial arm)."""
    n = parents.shape[0]
    k = part.frame
    if k is None or k == 0:
        return 0
    if k <= n:
        return int(k)
    return int(parents[k - n - 1]) + 1


def _joint_frame(n: int, i: int) -> int:
    """Scene-frame index of joint i's frame (0-based i)."""
    return n + 1 + i


def _body_frame(mech: Mechanism, name: str) -> int | None:
    """Scene-frame index of a link's own frame by name; None for "base"."""
    return None if name == "base" else mech.joint_index(name) + 1


def loop_points(mech: Mechanism, frames: np.ndarray) -> np.ndarray:
    """(L, 2, 3): each loop's attachment point on its first and on its second link
    (the base for "base"), in the base frame, m, for scene frames `frames`."""
    out = np.zeros((len(mech.loops), 2, 3))
    for l, loop in enumerate(mech.loops):
        for side in range(2):
            k = _body_frame(mech, loop.links[side])
            T = np.eye(4) if k is None else frames[k]
            out[l, side] = T[:3, :3] @ np.asarray(loop.at[side], dtype=float) + T[:3, 3]
    return out


def gap_matrix(p_a: np.ndarray, p_b: np.ndarray, radius: float) -> np.ndarray | None:
    """The user matrix that stretches a unit rod (z from 0 to 1, radius 1) from p_a to
    p_b with the given radius; None when the points coincide (nothing to draw)."""
    d = np.asarray(p_b, dtype=float) - np.asarray(p_a, dtype=float)
    length = float(np.linalg.norm(d))
    if length < 1e-12:
        return None
    e1 = _perpendicular(d / length)
    e2 = np.cross(d / length, e1)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = radius * e1, radius * e2, d, p_a
    return m


def up_vector(robot: Robot) -> np.ndarray:
    """Unit vector against gravity in the base frame (z_0 if there is no gravity)."""
    g = np.asarray(robot.gravity, dtype=float)
    norm = float(np.linalg.norm(g))
    return -g / norm if norm > 0 else np.array([0.0, 0.0, 1.0])


def _structure_key(model: Robot | Mechanism | Model) -> tuple:
    """The chains (parents, bases, lengths) and loops of a model."""
    m = model_of(model)
    return (tuple((c.parent, c.base, len(c.links)) for c in m.chains),
            tuple((loop.joint, loop.links, loop.at, loop.axis) for loop in m.loops))


def topology_key(robot: Robot | Mechanism | Model) -> tuple:
    """What decides which parts exist: rebuild the actors when it changes."""
    rows = tuple((link.joint, abs(link.a) > _EPS, abs(link.b) > _EPS) for link in robot.links)
    return rows, _structure_key(robot)


def geometry_key(robot: Robot) -> tuple:
    """What the meshes depend on: rebuild the meshes (not the actors) when it changes.

    The joint variables (theta of a revolute joint, b of a prismatic one) are
    not in it: they only move frames.
    """
    rows = tuple((link.joint, link.a, link.b if link.is_revolute else _b_range(link),
                  link.alpha, link.com,
                  (link.mass, link.inertia) if link.joint is JointType.FREE else ())
                 for link in robot.links)
    return rows, tuple(robot.gravity), _structure_key(robot)


def part_matrix(part: Part, frames: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The 4x4 user matrix of `part` for scene frames (2n+1, 4, 4) (`scene_frames`) at
    joint values q (nq,). (Gap rods are placed by `gap_matrix`.)"""
    return part_matrices([part], frames, q)[0]


def part_matrices(parts: list[Part], frames: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(P, 4, 4): `part_matrix` of every part, in one numpy pass."""
    index = np.array([-1 if p.frame is None else p.frame for p in parts], dtype=int)
    m = np.where((index >= 0)[:, None, None], frames[np.maximum(index, 0)], np.eye(4))
    stretched = [k for k, p in enumerate(parts) if p.stretch is not None]
    if stretched:
        s = np.asarray(q, dtype=float)[[parts[k].stretch for k in stretched]]
        s = np.where(np.abs(s) > 1e-6, s, np.copysign(1e-6, s))  # keep it invertible
        m[stretched, :3, 2] *= s[:, None]
    return m


class MergedParts:
    """Many parts drawn as one mesh (a robot of hundreds of links: one actor per layer
    instead of one per part, so that adding, moving and rendering stay fast).

    The parts' meshes are concatenated once, each point remembering its part; a
    pose moves every point by its part's matrix (`part_matrices`) in one numpy
    pass, normals too. Colours become "rgb" cell data.

    parts  : the parts (each with a colour or its own "rgb" cell data)
    mesh   : the merged mesh, in the base frame after `place`
    bounds : (xmin, xmax, ymin, ymax, zmin, zmax), m, of the parts' own bounding boxes
             as placed (a box around the mesh; VTK's bounds of the moved mesh cost ~2 ms
             a frame for the human, issue #23), None before the first `place`
    """

    def __init__(self, parts: list[Part]) -> None:
        self.parts = parts
        meshes = [p.mesh for p in parts]
        counts = np.array([m.n_points for m in meshes])
        self._owner = np.repeat(np.arange(len(parts)), counts)  # part of each point
        self._cell_owner = np.repeat(np.arange(len(parts)),  # part of each cell
                                     [m.n_cells for m in meshes])
        self._points = np.vstack([np.asarray(m.points, dtype=float) for m in meshes])
        self._normals = np.vstack([np.asarray(m.point_data["Normals"], dtype=float)
                                   for m in meshes])
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        faces, rgb = [], []
        for start, part, m in zip(starts, parts, meshes, strict=True):
            tri = np.asarray(m.faces).reshape(-1, 4)  # the unit shapes are triangulated
            tri = tri.copy()
            tri[:, 1:] += start
            faces.append(tri.ravel())
            if part.color is None:
                rgb.append(np.asarray(m.cell_data["rgb"], dtype=np.uint8))
            else:
                rgb.append(np.tile(np.array(pv.Color(part.color).int_rgb, dtype=np.uint8),
                                   (m.n_cells, 1)))
        self.mesh = pv.PolyData(self._points.copy(), faces=np.concatenate(faces))
        self.mesh.cell_data["rgb"] = np.vstack(rgb)
        self.mesh.point_data.active_normals = self._normals.copy()
        # each part's 8 box corners in its own frame, (P, 8, 3)
        self._corners = np.array([[[x, y, z] for x in b[0:2] for y in b[2:4] for z in b[4:6]]
                                  for b in (m.bounds for m in meshes)], dtype=float)
        self.bounds: tuple[float, ...] | None = None

    def part_of_cell(self, cell: int) -> Part | None:
        """The part that cell `cell` of the merged mesh belongs to (None: no such cell)."""
        if 0 <= cell < len(self._cell_owner):
            return self.parts[int(self._cell_owner[cell])]
        return None

    def place(self, frames: np.ndarray, q: np.ndarray) -> None:
        """Move every part to its place for scene frames `frames` at joint values q."""
        m = part_matrices(self.parts, frames, q)
        rot = m[:, :3, :3][self._owner]  # (N, 3, 3): each point's part
        points = np.einsum("nij,nj->ni", rot, self._points) + m[:, :3, 3][self._owner]
        normals = np.einsum("nij,nj->ni", rot, self._normals)
        normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
        self.mesh.points[:] = points
        self.mesh.point_data["Normals"][:] = normals
        corners = (np.einsum("pij,pkj->pki", m[:, :3, :3], self._corners)
                   + m[:, None, :3, 3]).reshape(-1, 3)
        lo, hi = corners.min(axis=0), corners.max(axis=0)
        self.bounds = (lo[0], hi[0], lo[1], hi[1], lo[2], hi[2])
        self.mesh.GetPoints().Modified()
        self.mesh.GetPointData().GetNormals().Modified()
        self.mesh.Modified()


# ----------------------------------------------------------------------------------
# Building the parts
# ----------------------------------------------------------------------------------

def build_parts(robot: Robot | Mechanism | Model) -> list[Part]:
    """All meshes of `robot` (a serial arm or a mechanism), each in the frame it rides on
    (see module docstring). A serial arm (one chain on the base, in the base frame, no
    loops: `Model.is_serial_arm`) stands on a pedestal and carries its tool; anything
    else gets a plate under every chain on the base, struts to its branches and its
    loops' cut joints."""
    robot = model_of(robot)
    s = Sizes.of(robot)
    jr, lr = s.joint_radius, s.link_radius
    n = robot.n
    coarse = n > COARSE_ABOVE
    mechanism = not robot.is_serial_arm  # chains placed on the base, branches, loops
    bodies = draws_bodies(robot)
    parts = _mechanism_ground_parts(robot, s) if mechanism else _ground_parts(robot, s)
    iq = robot.kernel.views.iq
    for i, link in enumerate(robot.links):
        color = joint_color(i)
        h = s.joint_length
        joint_frame = _joint_frame(n, i)
        if link.joint in (JointType.SPHERICAL, JointType.UNIVERSAL):
            # a ball joint (and a U joint, two axes through one point) at its placement
            parts.append(Part(f"joint {i + 1}", "arm", joint_frame,
                              _ball((0, 0, 0), 1.1 * jr, coarse), color))
        elif link.joint is JointType.FREE:  # no housing: the body floats, drawn as its box
            if not bodies:  # (a tree's bodies are all drawn below)
                parts.append(Part(f"body {i + 1}", "arm", i + 1, inertia_box(link, jr),
                                  color))
        else:
            if link.is_revolute:
                body = _rod((0, 0, -h / 2), (0, 0, h / 2), jr, coarse)
            else:
                w = 0.85 * jr
                body = _box((-w, w, -w, w, -h / 2, h / 2))
            parts.append(Part(f"joint {i + 1}", "arm", joint_frame, body, color))
        if bodies:
            pass  # the body covers the skeleton's segments
        elif link.joint == JointType.PRISMATIC:
            w = 0.55 * jr
            parts.append(Part(f"offset {i + 1}", "arm", joint_frame,
                              _box((-w, w, -w, w, 0.0, 1.0)), LINK_COLOR,
                              stretch=int(iq[i])))
        elif abs(link.b) > _EPS:
            parts.append(Part(f"offset {i + 1}", "arm", joint_frame,
                              _rod((0, 0, 0), (0, 0, link.b), lr, coarse), LINK_COLOR))
        if abs(link.a) > _EPS and not bodies:
            parts.append(Part(f"length {i + 1}", "arm", i + 1,
                              _rod((-link.a, 0, 0), (0, 0, 0), lr, coarse), LINK_COLOR))
            if abs(link.b) > _EPS or link.joint == JointType.PRISMATIC:
                parts.append(Part(f"elbow {i + 1}", "arm", i + 1,
                                  _ball((-link.a, 0, 0), lr, coarse), LINK_COLOR))
        parts.append(Part(f"com {i + 1}", "com", i + 1, _ball(link.com, s.com_radius, coarse),
                          color))
        if bodies:
            parts.append(Part(f"body {i + 1}", "arm", i + 1, inertia_box(link, 2.0 * s.link_radius), BODY_COLOR))
    for k in range(robot.n + 1):
        parts.append(Part(f"frame {k}", "frames", k, _triad(s.triad_length), None))
    if mechanism:
        parts += _branch_parts(robot, s, coarse) + _loop_parts(robot, s)
    else:
        parts.append(Part("effector", "effector", robot.n, _effector(s), EFFECTOR_COLOR))
    return parts


def draws_bodies(model: Robot | Mechanism | Model) -> bool:
    """True for a branched tree without loops (a humanoid, a hand, a legged robot): its
    links are drawn as bodies, the uniform boxes of their mass and inertia (`_body`), on
    the skeleton. A skeleton of equal rods reads as a linkage, which a serial arm or a
    closed chain is, but not as a body; and the seed papers' arms give inertias of
    hollow links with motors, whose boxes would be metres long on 0.4 m links."""
    m = model_of(model)
    return not m.loops and any(chain.parent is not None for chain in m.chains)


def _mechanism_ground_parts(mech: Mechanism, s: Sizes) -> list[Part]:
    """A plate under the first joint of every chain that starts on the base ("root c",
    fixed: such a chain's frame 0 does not move), a plate behind every loop joint on the
    base ("ground l"), then the floor and its grid below anything the mechanism can
    reach (`_mechanism_lowest`)."""
    jr = s.joint_radius
    kin = forward_kinematics(mech, mech.q_home)
    parts, k = [], 0
    for c, chain in enumerate(mech.chains):
        if chain.parent is None and chain.links[0].joint is not JointType.FREE:
            top = -s.joint_length / 2
            plate = _rod((0, 0, top - 0.6 * jr), (0, 0, top), 2.0 * jr)
            parts.append(Part(f"root {c + 1}", "ground", _joint_frame(mech.n, k), plate,
                              BASE_COLOR))
        k += len(chain.links)
    points = np.concatenate([kin.origins, kin.joint_origins])
    middle = points.mean(axis=0)
    parts += _loop_ground_parts(mech, s, middle)
    up = up_vector(mech)
    frames = scene_frames(kin)
    plates = [np.asarray(p.mesh.points, dtype=float) for p in parts]
    fixed = [pts if p.frame is None else pts @ frames[p.frame][:3, :3].T + frames[p.frame][:3, 3]
             for p, pts in zip(parts, plates, strict=True)]
    floor = min([_mechanism_lowest(mech, up) - 1.5 * jr]
                + [float((pts @ up).min()) - 0.2 * jr for pts in fixed])
    size = 1.9 * s.reach
    e1 = _perpendicular(up)
    e2 = np.cross(up, e1)
    # the floor's centre under the mechanism's middle, not under the base origin
    centre = middle - (middle @ up) * up + up * floor
    parts.append(Part("floor", "ground", None,
                      pv.Plane(center=centre - up * 1e-3 * s.reach, direction=up,
                               i_size=size, j_size=size), FLOOR_COLOR))
    parts.append(Part("grid", "ground", None, _grid(centre, e1, e2, size), GRID_COLOR))
    return parts


def _loop_ground_parts(mech: Mechanism, s: Sizes, middle: np.ndarray) -> list[Part]:
    """A plate, like a chain's root plate, at the end of every loop joint on the base
    (its pin, "cut l b") away from the mechanism's middle: without it the joint floats
    (the Bricard's P5)."""
    jr, h = s.joint_radius, s.joint_length
    parts = []
    for l, loop in enumerate(mech.loops):
        if loop.links[1] != "base":
            continue
        p = np.asarray(loop.at[1], dtype=float)
        axis = np.asarray(loop.axis[1], dtype=float)
        axis = axis / np.linalg.norm(axis)
        if (middle - p) @ axis > 0:
            axis = -axis  # the plate on the pin's outer end
        if loop.joint == LoopJointType.SPHERICAL:
            end = p + 0.7 * jr * axis  # under the ball
        else:
            end = p + 0.6 * h * axis
        plate = _rod(end, end + 0.6 * jr * axis, 2.0 * jr)
        parts.append(Part(f"ground {l + 1}", "ground", None, plate, BASE_COLOR))
    return parts


def _mechanism_lowest(mech: Mechanism, up: np.ndarray) -> float:
    """A height (along `up`, m) that no frame origin, elbow, mass centre or loop point of
    `mech` can go below, in any pose its joints and loops allow: a serial arm's reach,
    made for trees and loops. Cheap (a shortest-path search over the link lengths).

    Each point is a node; a link bounds the distance between its nodes (joint origin to
    elbow |b| over the joint's travel, elbow to origin |a|, origin to its mass centre and
    to its loop points); a closed revolute or spherical loop joint makes its two points
    one; a chain on a link is its strut's length from the parent's origin. Points fixed
    in the base (a chain's first joint on the base, a loop point on the base, a point
    sliding along a level loop axis on the base) keep their height. A point at most d
    from a fixed point of height h is no lower than h - d: each point's bound is the
    highest of these, found by Dijkstra from every fixed point at once. (A five-bar's
    pin E hangs at most 1.7 m below its base joints, although the longer leg alone
    would reach 1.9 m.)
    """
    import heapq

    n = mech.n
    kin = forward_kinematics(mech, mech.q_home)
    # nodes: joint origin i, elbow i, origin i, mass centre i (4 per joint), loop points
    J, E, O, C = (lambda i: 4 * i), (lambda i: 4 * i + 1), (lambda i: 4 * i + 2), \
        (lambda i: 4 * i + 3)
    P = lambda l, side: 4 * n + 2 * l + side  # noqa: E731
    count = 4 * n + 2 * len(mech.loops)
    edges: list[list[tuple[int, float]]] = [[] for _ in range(count)]

    def link(u: int, v: int, length: float) -> None:
        edges[u].append((v, length))
        edges[v].append((u, length))

    fixed: list[tuple[int, float]] = []  # (node, height)
    links = mech.links
    for i, lk in enumerate(links):
        travel = _travel(lk)
        link(J(i), E(i), travel)
        link(E(i), O(i), abs(lk.a))
        link(J(i), O(i), math.hypot(lk.a, travel))
        com = np.asarray(lk.com, dtype=float)
        link(O(i), C(i), float(np.linalg.norm(com)))
        link(E(i), C(i), float(np.linalg.norm(com - (-lk.a, 0.0, 0.0))))
    k = 0
    for chain in mech.chains:
        first = k
        if chain.parent is None:
            fixed.append((J(first), float(kin.joint_origins[first] @ up)))
        else:
            parent = mech.joint_index(chain.parent)
            link(O(parent), J(first), float(np.linalg.norm(chain.base.xyz)))
        for j in range(first + 1, first + len(chain.links)):
            link(O(j - 1), J(j), 0.0)  # joint frame j is link frame j - 1
        k += len(chain.links)
    for l, loop in enumerate(mech.loops):
        if loop.joint == LoopJointType.GEAR:
            continue  # it couples joint values: it holds no two points together
        for side in range(2):
            at = np.asarray(loop.at[side], dtype=float)
            if loop.links[side] == "base":
                fixed.append((P(l, side), float(at @ up)))
            else:
                i = mech.joint_index(loop.links[side])
                link(O(i), P(l, side), float(np.linalg.norm(at)))
                link(E(i), P(l, side), float(np.linalg.norm(at - (-links[i].a, 0.0, 0.0))))
        if loop.joint != LoopJointType.PRISMATIC:
            link(P(l, 0), P(l, 1), 0.0)
        elif loop.links[1] == "base":
            axis = np.asarray(loop.axis[1], dtype=float)
            if abs(axis @ up) < 1e-9 * np.linalg.norm(axis):  # slides on a level line
                fixed.append((P(l, 0), float(np.asarray(loop.at[1], dtype=float) @ up)))
    # Dijkstra from every fixed point at once: cost = distance - height of the source
    cost = np.full(count, np.inf)
    heap = []
    for node, height in fixed:
        if -height < cost[node]:
            cost[node] = -height
            heapq.heappush(heap, (-height, node))
    while heap:
        c, u = heapq.heappop(heap)
        if c > cost[u]:
            continue
        for v, length in edges[u]:
            if c + length < cost[v]:
                cost[v] = c + length
                heapq.heappush(heap, (cost[v], v))
    home = np.concatenate([kin.origins, kin.joint_origins]) @ up
    reached = cost[np.isfinite(cost)]
    return float(min(home.min(), (-reached).min() if reached.size else home.min()))


def _branch_parts(mech: Mechanism, s: Sizes, coarse: bool = False) -> list[Part]:
    """A strut from the parent link's origin to the base point of every chain that
    starts on a link, and a ball where it starts ("root c", in the parent's frame);
    `coarse` (COARSE_ABOVE): with a third of the facets, like the links' (the human's 17
    branch points at full resolution were 25,000 of its 27,000 triangles)."""
    parts = []
    for c, chain in enumerate(mech.chains):
        if chain.parent is None:
            continue
        frame = _body_frame(mech, chain.parent)
        tip = np.asarray(chain.base.xyz, dtype=float)
        meshes = [_ball((0, 0, 0), 1.1 * s.link_radius, coarse)]
        if np.linalg.norm(tip) > _EPS:
            meshes += [_rod((0, 0, 0), tip, 0.8 * s.link_radius, coarse),
                       _ball(tip, s.link_radius, coarse)]
        parts.append(Part(f"root {c + 1}", "arm", frame, pv.merge(meshes), BASE_COLOR))
    return parts


def _loop_parts(mech: Mechanism, s: Sizes) -> list[Part]:
    """Each loop's cut joint at both attachment points (a sleeve on the first link, a pin
    on the second) and its gap rod. A gear loop has no point and draws nothing: its two
    joints are drawn with their links, and it cannot open."""
    jr, h = s.joint_radius, s.joint_length
    parts = []
    for l, loop in enumerate(mech.loops):
        if loop.joint == LoopJointType.GEAR:
            continue
        for side, name in enumerate("ab"):
            p = np.asarray(loop.at[side], dtype=float)
            axis = np.asarray(loop.axis[side], dtype=float)
            axis = axis / np.linalg.norm(axis)
            if loop.joint == LoopJointType.SPHERICAL:
                mesh = _ball(p, (1.05 if side == 0 else 0.7) * jr)
            elif side == 0:
                mesh = _rod(p - 0.35 * h * axis, p + 0.35 * h * axis, 1.15 * jr)
            else:
                mesh = _rod(p - 0.6 * h * axis, p + 0.6 * h * axis, 0.45 * jr)
            parts.append(Part(f"cut {l + 1} {name}", "arm",
                              _body_frame(mech, loop.links[side]), mesh,
                              CUT_COLOR_A if side == 0 else CUT_COLOR_B))
        parts.append(Part(f"gap {l + 1}", "arm", None, _unit("cylinder").copy(deep=True),
                          GAP_COLOR, gap=l))
    return parts


def _ground_parts(robot: Robot, s: Sizes) -> list[Part]:
    """Base plate under joint 1, a pedestal down to the floor, floor and grid."""
    up = up_vector(robot)
    jr = s.joint_radius
    thickness = 0.6 * jr
    plate_top = -s.joint_length / 2  # along z_0, just under the first joint
    z0 = np.array([0.0, 0.0, 1.0])
    plate = _rod(z0 * (plate_top - thickness), z0 * plate_top, 2.4 * jr)
    parts = [Part("base", "ground", None, plate, BASE_COLOR)]

    plate_low = min(up @ (z0 * (plate_top - thickness)), up @ (z0 * plate_top))
    floor = min(-_depth(robot, up), plate_low) - 1.2 * jr  # height along up, base origin = 0
    if up @ z0 > 0.9 and plate_low - floor > 1e-6:
        parts.append(Part("pedestal", "ground", None,
                          _rod(up * floor, z0 * (plate_top - thickness), 1.2 * jr),
                          PEDESTAL_COLOR))

    size = 1.9 * s.reach
    e1 = _perpendicular(up)
    e2 = np.cross(up, e1)
    centre = up * floor
    parts.append(Part("floor", "ground", None,
                      pv.Plane(center=centre - up * 1e-3 * s.reach, direction=up,
                               i_size=size, j_size=size), FLOOR_COLOR))
    parts.append(Part("grid", "ground", None, _grid(centre, e1, e2, size), GRID_COLOR))
    return parts


def _depth(robot: Robot, up: np.ndarray) -> float:
    """How far below the base origin (against `up`) the arm can reach, m (>= 0).

    While every joint axis so far is vertical, rotations keep the a segments
    horizontal and only the b segments change the height (prismatic ones over
    their range); after the first tilted axis every length counts in full.
    """
    axes = forward_kinematics(robot, robot.q_home).joint_axes
    height, lowest, vertical = 0.0, 0.0, True
    for axis, link in zip(axes, robot.links, strict=True):
        along = float(axis @ up)
        if vertical and abs(along) > 1.0 - 1e-6:
            lo, hi = _b_range(link)
            height += min(math.copysign(1.0, along) * lo, math.copysign(1.0, along) * hi)
        else:
            vertical = False
            height -= abs(link.a) + _travel(link)
        lowest = min(lowest, height)
    return -lowest


def _perpendicular(v: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to v: the base axis x (or y) with v's part removed."""
    for axis in (np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])):
        w = axis - (axis @ v) * v
        if np.linalg.norm(w) > 0.1:
            return w / np.linalg.norm(w)
    raise AssertionError("unreachable: x and y cannot both be parallel to v")


def _nice_step(span: float) -> float:
    """A round grid spacing (1, 2 or 5 times a power of ten) giving about 10 cells."""
    raw = span / 10.0
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if raw <= m * power:
            return m * power
    return 10.0 * power


def _grid(centre: np.ndarray, e1: np.ndarray, e2: np.ndarray, size: float) -> pv.PolyData:
    step = _nice_step(size)
    k = int(size / 2 / step)
    ticks = np.arange(-k, k + 1) * step
    half = k * step
    points, lines = [], []
    for t in ticks:
        for a, b in ((e1, e2), (e2, e1)):
            lines.append([2, len(points), len(points) + 1])
            points += [centre + a * t - b * half, centre + a * t + b * half]
    return pv.PolyData(np.array(points), lines=np.array(lines).ravel())


# Unit shapes, built once with pyvista (with their normals) and placed with numpy:
# building a shape with pyvista's sources and filters costs milliseconds, placing a
# copy microseconds, and meshes that carry normals need no filter in the view.

@cache
def _unit(kind: str, coarse: bool = False) -> pv.PolyData:
    """Unit cylinder (z from 0 to 1, radius 1), cone (tip at z = 1, base radius 1 at z = 0),
    ball (radius 1), box (+-1) or triad (arrows of length 1), with point normals
    (split at sharp edges, so caps and box faces stay flat). `coarse`: cylinders and
    balls with about a third of the facets (see COARSE_ABOVE)."""
    if kind == "cylinder":
        mesh = pv.Cylinder(center=(0, 0, 0.5), direction=(0, 0, 1), radius=1.0, height=1.0,
                           resolution=12 if coarse else 32, capping=True)
    elif kind == "cone":
        mesh = pv.Cone(center=(0, 0, 0.5), direction=(0, 0, 1), height=1.0, radius=1.0,
                       resolution=24)
    elif kind == "ball":
        mesh = (pv.Sphere(radius=1.0, theta_resolution=12, phi_resolution=8) if coarse
                else pv.Sphere(radius=1.0, theta_resolution=24, phi_resolution=16))
    elif kind == "box":
        mesh = pv.Box((-1, 1, -1, 1, -1, 1))
    elif kind == "triad":
        arrows = []
        for axis, rgb in zip(np.eye(3), AXIS_RGB, strict=True):
            arrow = pv.Arrow(start=(0, 0, 0), direction=axis, tip_length=0.25,
                             tip_radius=0.08, shaft_radius=0.03, scale=1.0,
                             tip_resolution=16, shaft_resolution=16)
            arrow.cell_data["rgb"] = np.tile(rgb, (arrow.n_cells, 1))
            arrows.append(arrow)
        mesh = pv.merge(arrows)
    else:
        raise ValueError(kind)
    mesh = mesh.triangulate().compute_normals(cell_normals=False, split_vertices=True,
                                              feature_angle=40.0, auto_orient_normals=True)
    for name in list(mesh.point_data):
        if name != "Normals":
            del mesh.point_data[name]
    return mesh


def _placed(kind: str, scale, rotation: np.ndarray | None = None,
            offset=(0.0, 0.0, 0.0), coarse: bool = False) -> pv.PolyData:
    """A copy of a unit shape, scaled per axis (> 0), rotated, then moved by `offset`."""
    unit = _unit(kind, coarse)
    scale = np.asarray(scale, dtype=float)
    points = np.asarray(unit.points, dtype=float) * scale
    normals = np.asarray(unit.point_data["Normals"], dtype=float) / scale  # inverse transpose
    if rotation is not None:
        points = points @ rotation.T
        normals = normals @ rotation.T
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    mesh = unit.copy(deep=True)
    mesh.points = points + np.asarray(offset, dtype=float)
    mesh.point_data.active_normals = normals
    return mesh


def _rotation_to(axis: np.ndarray) -> np.ndarray:
    """A rotation matrix taking z to the unit vector `axis`."""
    z = np.array([0.0, 0.0, 1.0])
    v = np.cross(z, axis)
    c = float(z @ axis)
    if np.linalg.norm(v) < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + k + k @ k / (1.0 + c)


def _rod(p0, p1, radius: float, coarse: bool = False) -> pv.PolyData:
    """A capped cylinder from p0 to p1."""
    p0, p1 = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    axis = p1 - p0
    length = float(np.linalg.norm(axis))
    return _placed("cylinder", (radius, radius, length), _rotation_to(axis / length), p0,
                   coarse)


def _ball(centre, radius: float, coarse: bool = False) -> pv.PolyData:
    return _placed("ball", (radius, radius, radius), None, centre, coarse)


def inertia_box(link: Link, least: float) -> pv.PolyData:
    """The uniform solid box of the link's mass with its principal moments, at its mass
    centre along its principal axes (`core.lab.model_checks.equivalent_box`), in the
    link's own frame; no side shorter than `least`, m. Drawn for a free body (it has no
    DH segments) and for every body of a branched tree (`draws_bodies`)."""
    shape = equivalent_box(link.mass, link.inertia_matrix)
    return _placed("box", np.maximum(shape.sizes, least) / 2, shape.axes, link.com)


def _box(bounds) -> pv.PolyData:
    """An axis-aligned box (xmin, xmax, ymin, ymax, zmin, zmax)."""
    b = np.asarray(bounds, dtype=float)
    return _placed("box", (b[1::2] - b[0::2]) / 2, None, (b[1::2] + b[0::2]) / 2)


def _triad(length: float) -> pv.PolyData:
    """x, y, z arrows of the given length, coloured red, green, blue ("rgb" cell data)."""
    return _placed("triad", (length, length, length))


def _effector(s: Sizes) -> pv.PolyData:
    """A flange disc with a short cone along z_n: the tool's approach direction."""
    r = 0.9 * s.joint_radius
    disc = _rod((0, 0, 0), (0, 0, 0.25 * r), r)
    cone = _placed("cone", (0.45 * r, 0.45 * r, 1.2 * r), None, (0, 0, 0.25 * r))
    return pv.merge([disc, cone])
