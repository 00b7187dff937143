"""Forward kinematics: the DH frames and the mass centres (what the 3D view draws)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.dynamics import frames_kernel
from ..model.arguments import joint_vector, model_of


@dataclass(frozen=True)
class Kinematics:
    """Frames and mass centres at one configuration (n joints), base frame, m.

    frames       : (n+1, 4, 4) the base (index 0) and every link's own frame
                   (index i = link i, 1-based as in the DH table).
    joint_frames : (n, 4, 4) each joint's frame: the DH frame its row starts from
                   (joint i turns about / slides along its z). In a serial chain
                   joint_frames[i] == frames[i].
    com          : (n, 3) mass-centre positions.
    """

    frames: np.ndarray
    joint_frames: np.ndarray
    com: np.ndarray

    @property
    def origins(self) -> np.ndarray:
        """(n+1, 3) origins of the base and the link frames."""
        return self.frames[:, :3, 3]

    @property
    def joint_origins(self) -> np.ndarray:
        """(n, 3) the points O_i on the joint axes."""
        return self.joint_frames[:, :3, 3]

    @property
    def joint_axes(self) -> np.ndarray:
        """(n, 3) unit vectors of the joint axes."""
        return self.joint_frames[:, :3, 2]

    @property
    def end_effector(self) -> np.ndarray:
        """(4, 4) transform of the last link's frame."""
        return self.frames[-1]


def forward_kinematics(model, q) -> Kinematics:
    """DH frames and mass centres of a Robot or Mechanism at joint values q, (n,) (rad / m)."""
    k = model_of(model).kernel
    n = k.n
    q = joint_vector(q, k.nq, "q")
    Rj, Rl = np.empty((n, 3, 3)), np.empty((n, 3, 3))
    oj, ol = np.empty((n, 3)), np.empty((n, 3))
    frames_kernel(k.F, k.I, q, Rj, oj, Rl, ol)
    frames = np.zeros((n + 1, 4, 4))
    frames[0] = np.eye(4)
    frames[1:, :3, :3] = Rl
    frames[1:, :3, 3] = ol
    frames[1:, 3, 3] = 1.0
    joint_frames = np.zeros((n, 4, 4))
    joint_frames[:, :3, :3] = Rj
    joint_frames[:, :3, 3] = oj
    joint_frames[:, 3, 3] = 1.0
    com = ol + np.einsum("kij,kj->ki", Rl, k.views.com)
    return Kinematics(frames=frames, joint_frames=joint_frames, com=com)
