"""The joint torques split into what causes them: the links' inertia, gravity, friction
and the rotors' inertia, along a motion.

The drive torque of a tree (`core.algorithms.drives`, `core.kernels.drives`) is

    tau = [M(q) qdd + C(q, qd) qd] + g(q) + [c_v qd + c_c tanh(qd / FRICTION_BAND)]
          + r^2 I_r qdd
        = inertial + gravity + friction + rotor

each part from the existing recursions: gravity = RIDIM at zero rates and accelerations
(friction vanishes at zero rate, the rotors at zero acceleration); friction =
`friction_torques`; rotor = the reflected rotor inertia r^2 I_r times qdd; inertial =
RIDIM without gravity less friction and rotor (the rigid links' M qdd + C qd).
Their sum is `inverse_dynamics` to round-off (gravity enters RIDIM linearly, as the
base's acceleration). Mechanisms with loops are refused: their actuator forces are not
a sum over the tree's joints.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError
from ..kernels.drives import DRIVE_ARMATURE
from ..model.arguments import joint_rows, model_of
from .drives import friction_torques
from .tree_dynamics import tree_inverse_dynamics

__all__ = ["PARTS", "TorqueParts", "torque_parts", "torque_parts_chunks"]

#: The parts' names, in the order `TorqueParts` holds them.
PARTS = ("inertial", "gravity", "friction", "rotor")
#: Samples per chunk of `torque_parts_chunks` (a 60 s log at 1 kHz: 12 chunks).
CHUNK = 5000


@dataclass(frozen=True)
class TorqueParts:
    """The parts of the drive torques along S samples, each (S, nv), N m (N):

    inertial  M(q) qdd + C(q, qd) qd of the rigid links
    gravity   g(q), what holds the links still
    friction  c_v qd + c_c tanh(qd / FRICTION_BAND)
    rotor     r^2 I_r qdd, the rotors' inertia reflected through the gears
    """

    inertial: np.ndarray
    gravity: np.ndarray
    friction: np.ndarray
    rotor: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """(S, nv) the drive torques: the sum of the parts (`inverse_dynamics`)."""
        return self.inertial + self.gravity + self.friction + self.rotor

    def sum_of(self, parts) -> np.ndarray:
        """(S, nv) the sum of the named parts (names from PARTS); zeros for none."""
        out = np.zeros_like(self.inertial)
        for name in parts:
            if name not in PARTS:
                raise ArgumentError(f"a torque part is one of {', '.join(PARTS)}, got {name!r}")
            out += getattr(self, name)
        return out

    @classmethod
    def concatenate(cls, pieces) -> "TorqueParts":
        """The parts of consecutive chunks, one after the other."""
        pieces = list(pieces)
        return cls(*(np.concatenate([getattr(p, name) for p in pieces]) for name in PARTS))


def _armature(m) -> np.ndarray:
    """(nv,) each joint's reflected rotor inertia r^2 I_r (0 without a drive)."""
    k = m.kernel
    out = np.zeros(k.nv)
    if k.nd:
        out[k.views.iv] = k.views.drive[:, DRIVE_ARMATURE]
    return out


def torque_parts(model, q, qd, qdd) -> TorqueParts:
    """The parts of the drive torques (module docstring) at states q (S, nq), qd and
    qdd (S, nv) (rad, rad/s, rad/s^2; m for prismatic joints), each part (S, nv) N m (N).
    Raises ArgumentError for a mechanism with loops or arrays of the wrong shape."""
    m = model_of(model)
    k = m.kernel
    if k.nl:
        raise ArgumentError("the parts of the torques are computed for trees: this "
                            "mechanism has loops, whose actuator forces are not a sum over "
                            "its joints")
    (Q, Qd, Qdd), _ = joint_rows((k.nq, k.nv), q=q, qd=qd, qdd=qdd)
    zero = np.zeros_like(Qd)
    gravity = tree_inverse_dynamics(m, Q, zero, zero)
    friction = friction_torques(m, Qd)
    rotor = Qdd * _armature(m)
    inertial = tree_inverse_dynamics(m, Q, Qd, Qdd, gravity=False) - friction - rotor
    return TorqueParts(inertial, gravity, friction, rotor)


def torque_parts_chunks(model, q, qd, qdd, chunk: int = CHUNK
                        ) -> Iterator[tuple[int, TorqueParts]]:
    """`torque_parts` CHUNK samples at a time: yields (samples done, the chunk's parts),
    for a caller that reports progress or stops between chunks."""
    S = np.shape(q)[0]
    for start in range(0, S, chunk):
        stop = min(S, start + chunk)
        yield stop, torque_parts(model, q[start:stop], qd[start:stop], qdd[start:stop])
