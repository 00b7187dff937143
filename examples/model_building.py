"""Helpers that turn a model laid out in world coordinates (joint centres, joint axes,
segment mass centres and inertias, all at one reference pose) into ArmDyn chains of DH
rows: what `build_floating_models.py` uses to write the bundled floating models.

A *joint group* is one to three revolute joints whose axes meet at one point (a hip, a
shoulder, a knee). It becomes one chain on its parent link, placed by `base` (xyz, rpy
in the parent's own frame), of DH rows with a = b = 0: row i turns about axis i, and
its alpha turns the frame onto axis i + 1. The thetas written are the reference pose.
Each row's link is a body: the last one is the segment (its mass centre and inertia
moved into the row's own frame), the others are small connector bodies (the joint's
"rings", which a model of revolute joints only needs between two axes of one joint).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from armdyn.core import Chain, JointType, Link, Placement


def unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def rpy_of(R) -> tuple[float, float, float]:
    """(r, p, y) with R = Rz(y) Ry(p) Rx(r), rad."""
    p = math.asin(max(-1.0, min(1.0, -R[2, 0])))
    if math.hypot(R[0, 0], R[1, 0]) < 1e-12:  # pitch +/-90 deg: yaw 0, all in roll
        p = math.copysign(math.pi / 2, -R[2, 0])
        r = math.atan2(R[0, 1], R[1, 1]) if p > 0 else math.atan2(-R[0, 1], R[1, 1])
        return r, p, 0.0
    r = math.atan2(R[2, 1], R[2, 2])
    y = math.atan2(R[1, 0], R[0, 0])
    return r, p, y


def rot(axis, angle) -> np.ndarray:
    """Rotation by `angle` (rad) about the unit vector `axis`."""
    x, y, z = unit(axis)
    c, s = math.cos(angle), math.sin(angle)
    C = 1 - c
    return np.array([[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
                     [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
                     [z * x * C - y * s, z * y * C + x * s, c + z * z * C]])


def signed_angle(a, b, about) -> float:
    """The angle turning unit vector a onto b about `about` (both perpendicular to it)."""
    return math.atan2(float(np.dot(np.cross(a, b), about)), float(np.dot(a, b)))


def clean_deg(angle_rad: float, digits: int = 9) -> float:
    """An angle (rad) whose value in degrees is rounded to `digits` decimals (so the file
    shows 90 rather than 89.99999999999999)."""
    return math.radians(round(math.degrees(angle_rad), digits) + 0.0)


def clean(x: float, digits: int = 9) -> float:
    return round(float(x), digits) + 0.0


@dataclass
class Body:
    """A segment at the reference pose: mass (kg), mass centre (m, world) and inertia
    about it (3x3, kg m^2, world axes)."""

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray


@dataclass
class Frame:
    """A link's own frame at the reference pose: origin and axes (columns), world."""

    origin: np.ndarray
    R: np.ndarray = field(default_factory=lambda: np.eye(3))

    def local_point(self, p) -> np.ndarray:
        return self.R.T @ (np.asarray(p, dtype=float) - self.origin)

    def local_tensor(self, I) -> np.ndarray:
        return self.R.T @ I @ self.R


def inertia_tuple(I) -> tuple[float, ...]:
    I = 0.5 * (I + I.T)
    return tuple(clean(v, 12) for v in (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]))


def diag_inertia(mass: float, radii, length: float, axes=np.eye(3)) -> np.ndarray:
    """m (r_i L)^2 about the columns of `axes` (world), radii as fractions of L."""
    D = np.diag([mass * (r * length) ** 2 for r in radii])
    return axes @ D @ axes.T


def link_for(body: Body, own: Frame, name: str, *, theta: float, alpha: float,
             actuated: bool = False) -> Link:
    com = own.local_point(body.com)
    return Link(JointType.REVOLUTE, a=0.0, b=0.0, alpha=clean_deg(alpha),
                theta=clean_deg(theta), mass=body.mass,
                com=tuple(clean(c) for c in com),
                inertia=inertia_tuple(own.local_tensor(body.inertia)), name=name,
                actuated=actuated)


def connector(name: str, at, mass: float = 0.01, radius: float = 0.01) -> Body:
    """A small ball at a joint centre: the body between two axes of one joint."""
    i = 0.4 * mass * radius ** 2
    return Body(name, mass, np.asarray(at, dtype=float), np.eye(3) * i)


def joint_group(chain_name: str, parent_frame: Frame, centre, axes, bodies: list[Body],
                names: list[str], parent: str | None, final_x=(1.0, 0.0, 0.0),
                final_z=(0.0, 0.0, 1.0), actuated: bool = False
                ) -> tuple[Chain, Frame]:
    """One chain of len(axes) revolute DH rows about `axes` (world, at the reference pose)
    meeting at `centre` (world), on the link whose own frame is `parent_frame` (None
    parent: the base). `bodies[i]` hangs on row i. The last row's own frame is the one
    nearest to the axes final_x, final_z (its x must be perpendicular to the last axis;
    the component along it is dropped). Returns the chain and the last link's own frame."""
    centre = np.asarray(centre, dtype=float)
    axes = [unit(a) for a in axes]
    k = len(axes)
    assert len(bodies) == k and len(names) == k
    # frame 0: z0 on the first axis, x0 along the common normal of the first two axes
    z0 = axes[0]
    if k > 1:
        x0 = unit(np.cross(axes[0], axes[1]))
    else:
        x0 = unit(np.asarray(final_x) - np.dot(final_x, z0) * z0)
    R0 = np.column_stack([x0, np.cross(z0, x0), z0])
    F0 = Frame(centre, R0)
    rel_R = parent_frame.R.T @ R0
    rel_p = parent_frame.local_point(centre)
    r, p, y = rpy_of(rel_R)
    base = Placement(tuple(clean(v) for v in rel_p), (clean_deg(r), clean_deg(p), clean_deg(y)))
    links = []
    x_prev, z_prev = x0, z0
    own = F0
    for i in range(k):
        if i < k - 1:
            z_next = axes[i + 1]
            x_i = unit(np.cross(z_prev, z_next))
        else:
            fx = np.asarray(final_x, dtype=float)
            x_i = fx - np.dot(fx, z_prev) * z_prev
            if np.linalg.norm(x_i) < 1e-9:  # final_x on the last axis: use final_z instead
                fz = np.asarray(final_z, dtype=float)
                x_i = fz - np.dot(fz, z_prev) * z_prev
            x_i = unit(x_i)
            fz = np.asarray(final_z, dtype=float)
            z_next = fz - np.dot(fz, x_i) * x_i
            if np.linalg.norm(z_next) < 1e-9:
                z_next = z_prev
            z_next = unit(z_next)
        theta = signed_angle(x_prev, x_i, z_prev)
        alpha = signed_angle(z_prev, z_next, x_i)
        theta, alpha = clean_deg(theta), clean_deg(alpha)
        # the own frame: Rz(theta) then Rx(alpha) of the previous frame (a = b = 0)
        Rz = np.array([[math.cos(theta), -math.sin(theta), 0], [math.sin(theta),
                                                                 math.cos(theta), 0], [0, 0, 1]])
        Rx = np.array([[1, 0, 0], [0, math.cos(alpha), -math.sin(alpha)],
                       [0, math.sin(alpha), math.cos(alpha)]])
        own = Frame(centre, own.R @ Rz @ Rx)
        links.append(link_for(bodies[i], own, names[i], theta=theta, alpha=alpha,
                              actuated=actuated))
        x_prev, z_prev = own.R[:, 0], own.R[:, 2]
    return Chain(chain_name, tuple(links), parent=parent, base=base), own
