"""DH frames one row at a time: the four elementary transforms of a DH row.

The transform from frame i-1 to frame i is (docs/robot-file.md, Saha 1999 App. A)

    T_i = Rz(θ_i) Tz(b_i) Tx(a_i) Rx(α_i)

applied in that order to the joint frame of row i (frame i-1 in a serial arm; in a
tree or a closed chain, the parent link's frame carried by the chain's placement).
The joint variable q_i replaces θ_i (revolute) or b_i (prismatic).

`row_transforms` gives the four steps of one row, each with its parameter's value and
the frames before and after it (base frame); `ElementaryTransform.at(s)` is the frame
part-way through the step, for animation. The last step's `end` is the link's own
frame, `forward_kinematics(model, q).frames[i]`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.kinematics import forward_kinematics
from ..model.arguments import joint_vector, kernel_of

__all__ = ["ElementaryTransform", "row_transforms", "chain_transforms", "elementary_matrix"]

#: (name, DH table cell key, axis index, rotation?) of the four steps, in order.
_STEPS = (("Rz", "theta", 2, True), ("Tz", "b", 2, False), ("Tx", "a", 0, False),
          ("Rx", "alpha", 0, True))
_GREEK = {"theta": "\u03b8", "b": "b", "a": "a", "alpha": "\u03b1"}


def elementary_matrix(axis: int, rotation: bool, value: float) -> np.ndarray:
    """4x4 rotation about (rotation=True, value in rad) or translation along (value in
    m) the coordinate axis `axis` (0 x, 1 y, 2 z)."""
    T = np.eye(4)
    if rotation:
        c, s = np.cos(value), np.sin(value)
        j, k = [(1, 2), (2, 0), (0, 1)][axis]
        T[j, j], T[j, k], T[k, j], T[k, k] = c, -s, s, c
    else:
        T[axis, 3] = value
    return T


@dataclass(frozen=True)
class ElementaryTransform:
    """One of the four elementary transforms of DH row `link` (0-based).

    name      : "Rz", "Tz", "Tx" or "Rx"
    parameter : the DH table's cell key ("theta", "b", "a", "alpha")
    symbol    : "θ_3", "b_3", ... (1-based link number)
    value     : rad (θ, α) or m (b, a); the joint variable where it is one
    variable  : True for the joint variable (θ revolute, b prismatic)
    axis      : 0 (x) or 2 (z) of the moving frame
    rotation  : True for Rz and Rx
    start, end: (4, 4) frame before and after this step, base frame, m
    """

    link: int
    name: str
    parameter: str
    symbol: str
    value: float
    variable: bool
    axis: int
    rotation: bool
    start: np.ndarray
    end: np.ndarray

    @property
    def unit(self) -> str:
        return "rad" if self.rotation else "m"

    def at(self, s: float) -> np.ndarray:
        """The frame (4, 4) a fraction s in [0, 1] of the way through this step."""
        s = min(max(float(s), 0.0), 1.0)
        return self.start @ elementary_matrix(self.axis, self.rotation, s * self.value)


def row_transforms(model, q, link: int) -> tuple[ElementaryTransform, ...]:
    """The four elementary transforms carrying joint frame `link` (0-based) into the
    link's own frame, at joint values q (n,) (rad / m). Model: Robot or Mechanism."""
    n = kernel_of(model).n
    q = joint_vector(q, n, "q")
    if not 0 <= link < n:
        raise IndexError(f"link must be in 0..{n - 1}, got {link}")
    row = model.links[link]
    values = {"theta": row.theta, "b": row.b, "a": row.a, "alpha": row.alpha}
    variable = "theta" if row.is_revolute else "b"
    values[variable] = float(q[link])
    T = forward_kinematics(model, q).joint_frames[link]
    steps = []
    for name, key, axis, rotation in _STEPS:
        end = T @ elementary_matrix(axis, rotation, values[key])
        steps.append(ElementaryTransform(link, name, key, f"{_GREEK[key]}_{link + 1}",
                                         float(values[key]), key == variable, axis, rotation,
                                         T.copy(), end))
        T = end
    return tuple(steps)


def chain_transforms(model, q) -> tuple[ElementaryTransform, ...]:
    """The elementary transforms of every row, row after row (4 n steps)."""
    n = kernel_of(model).n
    return tuple(s for k in range(n) for s in row_transforms(model, q, k))
