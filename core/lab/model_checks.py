"""Suspicious but valid models, and the equivalent inertia shapes that show them in 3D.

Core refuses what is impossible (a mass <= 0, an inertia that breaks the triangle
inequality); this module flags what is allowed but probably a typing mistake:

- the mass centre far outside the link (a sign flipped, a paper's "centre to next
  joint" vector not negated, a value in the wrong frame);
- an inertia near the triangle-inequality limit I_1 + I_2 >= I_3 that is neither an
  ideal plate (I_1 + I_2 = I_3 to rounding, as some papers give a link) nor an ideal
  rod (I_2 = I_3, I_1 small): almost flat, which no real link is, and what a moment
  typed a digit off, or into the wrong cell, tends to give;
- masses differing by orders of magnitude (grams typed as kilograms);
- lengths of tens of metres, or a hundred times the others (millimetres typed as
  metres), and inertias far too large for the link's mass and size.

Each `ModelWarning` names the link, the field and the table cell to select (the
GUI's cell keys: "mass", "com_x", "ixx", "a", ...).

`large_shapes` explains, rather than flags, an equivalent box much larger than its link
(`ShapeNote`): a valid tensor of a link whose mass sits far from its mass centre. The
seed papers' arms give each link with its motor and gears, hollow castings: the PUMA's
boxes are 1.2-2.5 m long on links of 0.15-0.6 m. The same box comes from a moment typed
ten times too large, so the note names the link and its cell, and says both.

The equivalent shapes: a uniform solid box (or ellipsoid) of the link's mass with
the same principal moments about the mass centre (MuJoCo's viewer draws the same),
from the closed forms

    box with sides (x, y, z):         I_x = m (y^2 + z^2) / 12, ...  =>  x^2 = 6 (I_y + I_z - I_x) / m
    ellipsoid, semi-axes (a, b, c):   I_x = m (b^2 + c^2) / 5, ...   =>  a^2 = 5 (I_y + I_z - I_x) / (2 m)
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

__all__ = ["InertiaShape", "equivalent_box", "equivalent_ellipsoid", "principal_inertia",
           "CheckKind", "ModelWarning", "check_model", "link_extent_points", "Limits",
           "ShapeNote", "large_shapes", "LARGE_SHAPE_MEANING"]


# ----------------------------------------------------------------------------------
# Equivalent inertia shapes
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class InertiaShape:
    """A uniform solid of the link's mass with the link's principal moments.

    sizes : (3,) box side lengths or ellipsoid semi-axes, m, along `axes`' columns
    axes  : (3, 3) principal directions (columns, right-handed) in the frame the
            inertia was given in (the link's own frame)
    moments : (3,) principal moments about the mass centre, kg m^2, ascending
    """

    sizes: np.ndarray
    axes: np.ndarray
    moments: np.ndarray


def principal_inertia(inertia) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments (3,) ascending, kg m^2, and axes (3, 3) as right-handed columns,
    of a symmetric 3x3 inertia tensor."""
    J = np.asarray(inertia, dtype=float).reshape(3, 3)
    moments, axes = np.linalg.eigh(0.5 * (J + J.T))
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return moments, axes


def _shape(mass: float, inertia, factor: float) -> InertiaShape:
    if not mass > 0:
        raise ValueError(f"mass must be > 0 kg, got {mass}")
    moments, axes = principal_inertia(inertia)
    total = moments.sum()
    # x_k^2 = factor (I_total - 2 I_k) / m, zero at the triangle-inequality limit
    sq = np.maximum(factor * (total - 2.0 * moments) / mass, 0.0)
    return InertiaShape(np.sqrt(sq), axes, moments)


def equivalent_box(mass: float, inertia) -> InertiaShape:
    """The uniform solid box (side lengths, m) of `mass` (kg) whose inertia about its
    centre has the principal moments of `inertia` (3, 3), kg m^2."""
    return _shape(mass, inertia, 6.0)


def equivalent_ellipsoid(mass: float, inertia) -> InertiaShape:
    """The uniform solid ellipsoid (semi-axes, m) of `mass` with the principal moments
    of `inertia` (3, 3), kg m^2."""
    return _shape(mass, inertia, 2.5)


# ----------------------------------------------------------------------------------
# Suspicious models
# ----------------------------------------------------------------------------------

class CheckKind(str, Enum):
    COM_OUTSIDE = "mass centre outside the link"
    TRIANGLE = "inertia at the triangle-inequality limit"
    MASS_RATIO = "masses differ by orders of magnitude"
    UNITS = "units (millimetres as metres?)"


@dataclass(frozen=True)
class ModelWarning:
    """One suspicious value.

    link    : 0-based row of the tables
    field   : the `core.Link` field ("com", "inertia", "mass", "a", "b")
    cell    : the table cell key to select ("com_x", "izz", "mass", "a", ...)
    kind    : which check fired
    message : one line for people, naming the link and the numbers
    """

    link: int
    field: str
    cell: str
    kind: CheckKind
    message: str


@dataclass(frozen=True)
class Limits:
    """Thresholds of `check_model` (defaults: silent on every file in robots/).

    com_reach       : mass centre further from the link than this many times the
                      link's size (its own length, or the model's typical length)
    triangle_margin : (I_1 + I_2 - I_3) / I_3 below this (I_1 <= I_2 <= I_3), but above
                      `ideal` (an ideal plate) and with I_2 != I_3 (not an ideal rod)
    ideal           : relative tolerance of "ideal plate" and "ideal rod"
    mass_ratio      : a link's mass more than this factor from the median mass
    max_length      : a length or mass-centre coordinate beyond this, m
    length_ratio    : a length this many times the typical one (and over 1 m)
    gyration_ratio  : radius of gyration sqrt(I_3 / m) this many times the link's size
    box_ratio       : `large_shapes`: the equivalent box's longest side this many times
                      the link's size (its own, or the model's typical length)
    """

    com_reach: float = 2.0
    triangle_margin: float = 1e-3
    ideal: float = 1e-9
    mass_ratio: float = 100.0
    max_length: float = 10.0
    length_ratio: float = 50.0
    gyration_ratio: float = 5.0
    box_ratio: float = 2.5


def _b_range(link) -> tuple[float, float]:
    if link.is_revolute:
        return link.b, link.b
    if link.limits is not None:
        return min(link.limits[0], link.b, 0.0), max(link.limits[1], link.b, 0.0)
    return min(0.0, link.b), max(0.0, link.b)


def link_extent_points(link) -> np.ndarray:
    """(3, 3) the link's skeleton in its own frame, m: joint origin (at the far end of a
    prismatic joint's travel), elbow, frame origin. The DH row goes b along z_(i-1),
    then a along x_i: z_(i-1) in frame i is (0, sin α, cos α)."""
    z_prev = np.array([0.0, np.sin(link.alpha), np.cos(link.alpha)])
    elbow = np.array([-link.a, 0.0, 0.0])
    lo, hi = _b_range(link)
    far = hi if abs(hi) >= abs(lo) else lo
    return np.array([elbow - far * z_prev, elbow, np.zeros(3)])


def _nearest_on_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = b - a
    dd = float(d @ d)
    s = 0.0 if dd < 1e-24 else min(max(float((p - a) @ d) / dd, 0.0), 1.0)
    return a + s * d


def _link_size(link) -> float:
    lo, hi = _b_range(link)
    return abs(link.a) + max(abs(lo), abs(hi))


def _name(link, k: int) -> str:
    return f"link {k + 1}" + (f" ('{link.name}')" if link.name else "")


_AXIS_CELLS = ("x", "y", "z")


def check_model(model, limits: Limits = Limits()) -> list[ModelWarning]:
    """Warnings for the suspicious values of a Robot or Mechanism (see the module
    docstring), in link order."""
    links = list(model.links)
    sizes = [_link_size(link) for link in links]
    lengths = [v for link in links for v in (abs(link.a), *map(abs, _b_range(link)))
               if v > 1e-9]
    typical = float(np.median(lengths)) if lengths else 0.5
    masses = np.array([link.mass for link in links])
    median_mass = float(np.median(masses))
    out: list[ModelWarning] = []
    for k, link in enumerate(links):
        name = _name(link, k)
        scale = max(sizes[k], typical)
        com = np.asarray(link.com, dtype=float)
        # ---- units: lengths of tens of metres, or far beyond the others ----
        for key in ("a", "b"):
            value = abs(getattr(link, key))
            if value > limits.max_length or (value > 1.0 and len(lengths) > 2
                                             and value > limits.length_ratio * typical):
                out.append(ModelWarning(k, key, key, CheckKind.UNITS,
                                        f"{name}: {key} = {getattr(link, key):.6g} m, "
                                        f"typical length {typical:.3g} m: millimetres "
                                        "typed as metres?"))
        big = np.abs(com) > limits.max_length
        if big.any():
            axis = int(np.argmax(np.abs(com)))
            out.append(ModelWarning(k, "com", f"com_{_AXIS_CELLS[axis]}", CheckKind.UNITS,
                                    f"{name}: mass centre at {com[axis]:.6g} m: "
                                    "millimetres typed as metres?"))
        else:  # ---- mass centre far from the link's skeleton ----
            pts = link_extent_points(link)
            near = min((_nearest_on_segment(com, pts[j], pts[j + 1]) for j in range(2)),
                       key=lambda x: float(np.linalg.norm(com - x)))
            off = com - near
            dist = float(np.linalg.norm(off))
            if dist > limits.com_reach * scale:
                axis = int(np.argmax(np.abs(off)))
                out.append(ModelWarning(
                    k, "com", f"com_{_AXIS_CELLS[axis]}", CheckKind.COM_OUTSIDE,
                    f"{name}: mass centre {dist:.3g} m from the link (size {scale:.3g} m); "
                    f"sign of com {_AXIS_CELLS[axis]} flipped?"))
        # ---- masses ----
        if len(links) > 1 and median_mass > 0:
            ratio = link.mass / median_mass
            if ratio > limits.mass_ratio or ratio < 1.0 / limits.mass_ratio:
                out.append(ModelWarning(k, "mass", "mass", CheckKind.MASS_RATIO,
                                        f"{name}: mass {link.mass:.6g} kg, median "
                                        f"{median_mass:.3g} kg (factor {ratio:.3g}): grams "
                                        "typed as kilograms, or the other way?"))
        # ---- inertia: the triangle-inequality limit, and its size ----
        moments, axes = principal_inertia(link.inertia_matrix)
        cell = ("ixx", "iyy", "izz")[int(np.argmax(np.abs(axes[:, 2])))]
        if moments[2] > 0:
            margin = (moments[0] + moments[1] - moments[2]) / moments[2]
            plate = margin <= limits.ideal
            rod = moments[2] - moments[1] <= limits.ideal * moments[2]
            if margin < limits.triangle_margin and not plate and not rod:
                out.append(ModelWarning(k, "inertia", cell, CheckKind.TRIANGLE,
                                        f"{name}: principal moments {moments[0]:.3g}, "
                                        f"{moments[1]:.3g}, {moments[2]:.3g} kg m\u00b2 at the "
                                        f"triangle-inequality limit (margin {margin:.2g}) "
                                        "but not an ideal plate or rod: a moment "
                                        "typed wrong?"))
            gyration = float(np.sqrt(moments[2] / link.mass))
            if gyration > limits.gyration_ratio * max(scale, float(np.linalg.norm(com))):
                out.append(ModelWarning(k, "inertia", cell, CheckKind.UNITS,
                                        f"{name}: radius of gyration {gyration:.3g} m for a "
                                        f"link of {scale:.3g} m: inertia in g or mm units?"))
    return out


# ----------------------------------------------------------------------------------
# Boxes larger than their links
# ----------------------------------------------------------------------------------

#: What a `ShapeNote` means, said once for all of them.
LARGE_SHAPE_MEANING = (
    "A uniform solid needs that length to have the link's moments: valid when the "
    "link's mass sits far from its mass centre (a hollow link with motors at its ends, "
    "as the seed papers' tables give the PUMA's), else a moment typed too large.")


@dataclass(frozen=True)
class ShapeNote:
    """A link whose equivalent box is much longer than the link (valid, explained).

    link    : 0-based row of the tables
    cell    : the inertia cell to select (the largest principal moment's axis)
    longest : the box's longest side, m
    size    : the link's size it was compared with, m
    message : one line for people (`LARGE_SHAPE_MEANING` says what it means)
    """

    link: int
    cell: str
    longest: float
    size: float
    message: str


def large_shapes(model, limits: Limits = Limits()) -> list[ShapeNote]:
    """The links of a Robot or Mechanism whose equivalent inertia box (`equivalent_box`)
    has a side more than `limits.box_ratio` times the link's size (its own, a sliding
    link's at least its stroke; or the model's typical length for a short link), in
    link order."""
    links = list(model.links)
    lengths = [v for link in links for v in (abs(link.a), *map(abs, _b_range(link)))
               if v > 1e-9]
    typical = float(np.median(lengths)) if lengths else 0.5
    out: list[ShapeNote] = []
    for k, link in enumerate(links):
        shape = equivalent_box(link.mass, link.inertia_matrix)
        longest = float(shape.sizes.max())
        lo, hi = _b_range(link)  # a sliding link (a boom) is at least its stroke long
        own = _link_size(link) if link.is_revolute else abs(link.a) + (hi - lo)
        size = max(own, typical)
        if longest <= limits.box_ratio * size:
            continue
        axis = int(np.argmax(shape.sizes))
        # the moments about the two axes across the box's longest side are the large ones
        big = int(np.argmax(np.abs(shape.axes[:, (axis + 1) % 3])))
        cell = ("ixx", "iyy", "izz")[big]
        out.append(ShapeNote(
            k, cell, longest, size,
            f"{_name(link, k)}: box {longest:.3g} m long on a {size:.3g} m link"))
    return out
