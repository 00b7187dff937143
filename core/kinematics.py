"""Forward kinematics: the DH frames and the mass centres (what the 3D view draws)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .denoc import dh_frames
from .robot import Robot


@dataclass(frozen=True)
class Kinematics:
    """Frames and mass centres at one configuration.

    frames : (n+1, 4, 4) homogeneous transforms of the base (index 0) and every
             link's own DH frame (index i = link i) in the base frame, m.
    com    : (n, 3) mass-centre positions in the base frame, m.
    """

    frames: np.ndarray
    com: np.ndarray

    @property
    def origins(self) -> np.ndarray:
        """(n+1, 3) frame origins; origins[i-1] lies on the axis of joint i."""
        return self.frames[:, :3, 3]

    @property
    def joint_axes(self) -> np.ndarray:
        """(n, 3) unit vectors of the joint axes (z of frames 0..n-1)."""
        return self.frames[:-1, :3, 2]

    @property
    def end_effector(self) -> np.ndarray:
        """(4, 4) transform of the last link's frame."""
        return self.frames[-1]


def forward_kinematics(robot: Robot, q) -> Kinematics:
    """DH frames and mass centres at joint values q, shape (n,) (rad / m)."""
    p = robot.params
    n = robot.n
    q = np.ascontiguousarray(q, dtype=float)
    if q.shape != (n,):
        raise ValueError(f"q must have shape ({n},), got {q.shape}")
    R = np.empty((n + 1, 3, 3))
    o = np.empty((n + 1, 3))
    dh_frames(p.dh, p.revolute, q, R, o)
    frames = np.zeros((n + 1, 4, 4))
    frames[:, :3, :3] = R
    frames[:, :3, 3] = o
    frames[:, 3, 3] = 1.0
    com = o[1:] + np.einsum("kij,kj->ki", R[1:], p.com)
    return Kinematics(frames=frames, com=com)
