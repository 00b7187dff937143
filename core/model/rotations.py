"""Rotations in the forms the files, the core and the window write them.

Three forms of one rotation, converted in one place:

- roll, pitch, yaw (rad): R = Rz(yaw) Ry(pitch) Rx(roll) (fixed axes x, then y, then z;
  URDF's `rpy`, the files' placements and home orientations), pitch in [-pi/2, pi/2];
- unit quaternions [qx, qy, qz, qw], scalar last (a free or spherical joint's entries
  of q, docs/floating-bases.md);
- rotation matrices (3, 3).

The compiled kernels have their own scalar versions (`core.kernels.joints`,
`core.kernels.charts`); these are the NumPy ones for descriptions, files and the window.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["rotation_rpy", "quaternion_rpy", "rpy_from_rotation", "quaternion_rotation",
           "quaternion_rpy_angles"]


def rotation_rpy(rpy) -> np.ndarray:
    """Rz(y) Ry(p) Rx(r) for rpy = (r, p, y) in rad (fixed axes x, then y, then z)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), \
        math.cos(y), math.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def quaternion_rpy(rpy) -> tuple[float, float, float, float]:
    """The unit quaternion [qx, qy, qz, qw] (scalar last) of Rz(y) Ry(p) Rx(r), rpy in
    rad: q(z, y) q(y, p) q(x, r)."""
    r, p, y = (0.5 * float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


def rpy_from_rotation(R) -> tuple[float, float, float]:
    """(roll, pitch, yaw) in rad with R = Rz(yaw) Ry(pitch) Rx(roll) (`rotation_rpy`'s
    inverse), pitch in [-pi/2, pi/2]; at pitch = +-pi/2 (gimbal lock) yaw is 0."""
    R = np.asarray(R, dtype=float)
    cos_pitch = math.hypot(R[0, 0], R[1, 0])
    pitch = math.atan2(-R[2, 0], cos_pitch)
    yaw = math.atan2(R[1, 0], R[0, 0]) if cos_pitch > 1e-12 else 0.0
    # roll from what is left: Rx(roll) = Ry(pitch)^T Rz(yaw)^T R
    rest = rotation_rpy((0.0, pitch, yaw)).T @ R
    roll = math.atan2(rest[2, 1], rest[1, 1])
    return roll, pitch, yaw


def quaternion_rotation(quat) -> np.ndarray:
    """The rotation matrix (3, 3) of a quaternion [qx, qy, qz, qw] (scalar last),
    normalised first."""
    x, y, z, w = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def quaternion_rpy_angles(quats) -> np.ndarray:
    """Roll, pitch, yaw (rad) of unit quaternions [qx, qy, qz, qw] (scalar last), shape
    (..., 4) -> (..., 3): R = Rz(yaw) Ry(pitch) Rx(roll), pitch in [-pi/2, pi/2], as the
    mechanism files write rpy; at pitch = +-pi/2 (gimbal lock) yaw is 0 and roll carries
    the turn. Vectorised for a run's samples."""
    quats = np.asarray(quats, dtype=float)
    x, y, z, w = np.moveaxis(quats / np.linalg.norm(quats, axis=-1, keepdims=True), -1, 0)
    r00, r10, r20 = 1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w)
    r21, r22 = 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    r01, r11 = 2 * (x * y - z * w), 1 - 2 * (x * x + z * z)
    cos_pitch = np.hypot(r00, r10)
    pitch = np.arctan2(-r20, cos_pitch)
    locked = cos_pitch <= 1e-12
    yaw = np.where(locked, 0.0, np.arctan2(r10, r00))
    # away from the lock, roll from the last row; at it (yaw = 0), from the middle column
    roll = np.where(locked, np.arctan2(r01 * np.sign(-r20), r11), np.arctan2(r21, r22))
    return np.stack([roll, pitch, yaw], axis=-1)
