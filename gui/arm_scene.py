"""The arm as meshes fixed in its DH frames. Qt-free (pyvista and core only).

Every mesh is built once, in the coordinates of the frame it rides on. A new
pose only moves frames: each part's actor gets ``user_matrix = frames[k]``
(times a z-scale for the rod of a prismatic joint, whose length is the joint
variable). Link i (1-based) follows the DH chain Rz(theta) Tz(b) Tx(a) Rx(alpha):

    origin_(i-1) --(b along z_(i-1))--> elbow_i --(a along x_i)--> origin_i

Parts (names as in `Part.name`):

- ``joint i``   cylinder (revolute) or box (prismatic) on z_(i-1), frame i-1
- ``offset i``  the b segment, frame i-1 (from 0 to b along z)
- ``length i``  the a segment, frame i (from (-a, 0, 0) to the origin)
- ``elbow i``   a ball where the two segments meet, (-a, 0, 0) in frame i
- ``com i``     a ball at the link's mass centre, frame i       (layer "com")
- ``frame k``   x/y/z arrows (red/green/blue) of frame k         (layer "frames")
- ``effector``  a marker on frame n                              (layer "effector")
- ``base``, ``pedestal``, ``floor``, ``grid``: fixed in the base frame (layer "ground")

Sizes scale with the robot's reach (sum of |a| + |b|), so a 0.3 m SCARA and a
1.5 m arm both look right. The floor is perpendicular to gravity, below
anything the arm can reach.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyvista as pv

from core import JointType, Link, Robot, forward_kinematics

from .colors import joint_color

__all__ = ["Part", "Sizes", "build_parts", "part_matrix", "topology_key", "geometry_key",
           "up_vector", "LAYERS"]

#: Layers the view can show or hide.
LAYERS = ("arm", "com", "frames", "effector", "ground")

LINK_COLOR = "#A9B2BC"
BASE_COLOR = "#6B7682"
PEDESTAL_COLOR = "#B4BDC7"
EFFECTOR_COLOR = "#2E3440"
FLOOR_COLOR = "#EDF0F4"
GRID_COLOR = "#C3CAD3"
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
    stretch : index of the joint whose value scales the mesh along local z
              (the rod of a prismatic joint), else None
    """

    name: str
    layer: str
    frame: int | None
    mesh: pv.PolyData
    color: str | None
    stretch: int | None = None


@dataclass(frozen=True)
class Sizes:
    """Drawing sizes in metres, proportional to the robot's reach."""

    reach: float

    @classmethod
    def of(cls, robot: Robot) -> "Sizes":
        reach = sum(abs(link.a) + _travel(link) for link in robot.links)
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


def up_vector(robot: Robot) -> np.ndarray:
    """Unit vector against gravity in the base frame (z_0 if there is no gravity)."""
    g = np.asarray(robot.gravity, dtype=float)
    norm = float(np.linalg.norm(g))
    return -g / norm if norm > 0 else np.array([0.0, 0.0, 1.0])


def topology_key(robot: Robot) -> tuple:
    """What decides which parts exist: rebuild the actors when it changes."""
    return tuple((link.joint, abs(link.a) > _EPS, abs(link.b) > _EPS) for link in robot.links)


def geometry_key(robot: Robot) -> tuple:
    """What the meshes depend on: rebuild the meshes (not the actors) when it changes.

    The joint variables (theta of a revolute joint, b of a prismatic one) are
    not in it: they only move frames.
    """
    rows = tuple((link.joint, link.a, link.b if link.is_revolute else _b_range(link),
                  link.alpha, link.com) for link in robot.links)
    return rows, tuple(robot.gravity)


def part_matrix(part: Part, frames: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The 4x4 user matrix of `part` for frames (n+1, 4, 4) at joint values q (n,)."""
    m = np.eye(4) if part.frame is None else frames[part.frame].copy()
    if part.stretch is not None:
        s = float(q[part.stretch])
        s = s if abs(s) > 1e-6 else math.copysign(1e-6, s)  # keep the matrix invertible
        m[:3, 2] *= s
    return m


# ----------------------------------------------------------------------------------
# Building the parts
# ----------------------------------------------------------------------------------

def build_parts(robot: Robot) -> list[Part]:
    """All meshes of `robot`, each in the frame it rides on (see module docstring)."""
    s = Sizes.of(robot)
    jr, lr = s.joint_radius, s.link_radius
    parts = _ground_parts(robot, s)
    for i, link in enumerate(robot.links):
        color = joint_color(i)
        h = s.joint_length
        if link.is_revolute:
            body = _rod((0, 0, -h / 2), (0, 0, h / 2), jr)
        else:
            w = 0.85 * jr
            body = _box((-w, w, -w, w, -h / 2, h / 2))
        parts.append(Part(f"joint {i + 1}", "arm", i, body, color))
        if link.joint == JointType.PRISMATIC:
            w = 0.55 * jr
            parts.append(Part(f"offset {i + 1}", "arm", i, _box((-w, w, -w, w, 0.0, 1.0)),
                              LINK_COLOR, stretch=i))
        elif abs(link.b) > _EPS:
            parts.append(Part(f"offset {i + 1}", "arm", i, _rod((0, 0, 0), (0, 0, link.b), lr),
                              LINK_COLOR))
        if abs(link.a) > _EPS:
            parts.append(Part(f"length {i + 1}", "arm", i + 1,
                              _rod((-link.a, 0, 0), (0, 0, 0), lr), LINK_COLOR))
            if abs(link.b) > _EPS or link.joint == JointType.PRISMATIC:
                parts.append(Part(f"elbow {i + 1}", "arm", i + 1,
                                  _ball((-link.a, 0, 0), lr), LINK_COLOR))
        parts.append(Part(f"com {i + 1}", "com", i + 1, _ball(link.com, s.com_radius), color))
    for k in range(robot.n + 1):
        parts.append(Part(f"frame {k}", "frames", k, _triad(s.triad_length), None))
    parts.append(Part("effector", "effector", robot.n, _effector(s), EFFECTOR_COLOR))
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
def _unit(kind: str) -> pv.PolyData:
    """Unit cylinder (z from 0 to 1, radius 1), cone (tip at z = 1, base radius 1 at z = 0),
    ball (radius 1), box (+-1) or triad (arrows of length 1), with point normals
    (split at sharp edges, so caps and box faces stay flat)."""
    if kind == "cylinder":
        mesh = pv.Cylinder(center=(0, 0, 0.5), direction=(0, 0, 1), radius=1.0, height=1.0,
                           resolution=32, capping=True)
    elif kind == "cone":
        mesh = pv.Cone(center=(0, 0, 0.5), direction=(0, 0, 1), height=1.0, radius=1.0,
                       resolution=24)
    elif kind == "ball":
        mesh = pv.Sphere(radius=1.0, theta_resolution=24, phi_resolution=16)
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
            offset=(0.0, 0.0, 0.0)) -> pv.PolyData:
    """A copy of a unit shape, scaled per axis (> 0), rotated, then moved by `offset`."""
    unit = _unit(kind)
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


def _rod(p0, p1, radius: float) -> pv.PolyData:
    """A capped cylinder from p0 to p1."""
    p0, p1 = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    axis = p1 - p0
    length = float(np.linalg.norm(axis))
    return _placed("cylinder", (radius, radius, length), _rotation_to(axis / length), p0)


def _ball(centre, radius: float) -> pv.PolyData:
    return _placed("ball", (radius, radius, radius), None, centre)


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
