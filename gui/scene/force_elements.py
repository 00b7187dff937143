"""A model's force elements and road in the 3D view: each spring-damper a coil between
its two points, each tyre a coil from its wheel centre down to the road, and the road
as a strip along the base x axis.

The coil is one unit helix (z from 0 to 1, radius 1), built once per element and
stretched between the two points each pose by a user matrix (`gap_matrix`: the coil's
turns spread as the spring stretches; a line, so its width does not). A tyre's lower
point is the road under its wheel centre, at the road's height there (core's
`road_height`). The road, built once per model, is a strip through the road's points
(flat beyond them, as core reads it), as wide as the model, a little past its ends;
without a road, nothing (the floor stands for z = 0 only where it is drawn at 0).

Points come from `core.forward_kinematics` at the pose shown (the current pose or the
played sample); the view is reached only through `ArmView.plotter` and
`request_render`.
"""
from __future__ import annotations

import numpy as np
import pyvista as pv
from PySide6.QtCore import QObject, Slot

from armdyn.core import SpringDamper, Tyre, forward_kinematics
from armdyn.core.kernels.elements import road_height

from .arm_scene import Sizes, gap_matrix

__all__ = ["ForceElementsOverlay", "install_force_elements", "SPRING_COLOR", "TYRE_COLOR",
           "ROAD_COLOR", "TURNS"]

SPRING_COLOR = "#B8860B"
TYRE_COLOR = "#333333"
ROAD_COLOR = "#8A8F96"
#: Turns of a drawn coil.
TURNS = 10


def _unit_coil() -> pv.PolyData:
    """A helix of TURNS turns, radius 1, from z = 0 to z = 1, with short straight ends."""
    s = np.linspace(0.0, 1.0, 40 * TURNS)
    z = 0.1 + 0.8 * s
    points = np.column_stack([np.cos(2 * np.pi * TURNS * s), np.sin(2 * np.pi * TURNS * s), z])
    points = np.vstack([[0, 0, 0], [1, 0, 0.1], points[1:], [0, 0, 1]])
    return pv.lines_from_points(points)


class ForceElementsOverlay(QObject):
    """The coils and the road of `window`'s model (module docstring)."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self._window = window
        self._view = window.view3d
        self._model = None
        self._actors: list = []   # one coil per element, in the model's order
        self._road = None         # the road's actor
        self._radius = 0.0
        #: (E, 2, 3) each element's two end points at the pose shown, base frame, m
        self.ends = np.zeros((0, 2, 3))
        session = window.session
        session.model_changed.connect(self._on_model)
        session.pose_changed.connect(self._on_pose)
        window.playback.frame.connect(lambda _t, q: self._on_pose(q))
        self._on_model(session.model)

    @property
    def road_actor(self):
        """The road's actor, None without a road."""
        return self._road

    @Slot(object)
    def _on_model(self, model) -> None:
        plotter = self._view.plotter
        for actor in self._actors + ([self._road] if self._road is not None else []):
            plotter.remove_actor(actor, render=False)
        self._actors, self._road = [], None
        self._model = model if model is not None and model.model.forces else None
        if self._model is None:
            self.ends = np.zeros((0, 2, 3))
            return
        core_model = self._model.model
        size = Sizes.of(self._model)
        self._radius = 1.2 * size.joint_radius
        for element in core_model.forces:
            self._actors.append(plotter.add_mesh(
                _unit_coil(), color=SPRING_COLOR if isinstance(element, SpringDamper)
                else TYRE_COLOR, line_width=3, lighting=False, render=False,
                reset_camera=False, pickable=False))
        if core_model.road is not None and core_model.road.points:
            self._road = plotter.add_mesh(_road_strip(core_model.road.points, size.reach),
                                          color=ROAD_COLOR, render=False,
                                          reset_camera=False, pickable=False)
        self._on_pose(self._window.session.pose)

    @Slot(object)
    def _on_pose(self, q) -> None:
        model = self._model
        if model is None or np.shape(q) != (model.nq,):
            return
        frames = forward_kinematics(model, np.asarray(q, dtype=float)).frames
        core_model = model.model
        road = np.array(core_model.road.points if core_model.road is not None else (),
                        dtype=float).reshape(-1, 2)

        def point(link: str, at) -> np.ndarray:
            T = np.eye(4) if link == "base" else frames[core_model.joint_index(link) + 1]
            return T[:3, :3] @ np.asarray(at, dtype=float) + T[:3, 3]

        ends = []
        for element, actor in zip(core_model.forces, self._actors, strict=True):
            if isinstance(element, Tyre):
                top = point(element.link, element.at)
                bottom = np.array([top[0], top[1], road_height(road, float(top[0]))[0]])
                a, b = bottom, top
            else:
                a, b = (point(link, at) for link, at in zip(element.links, element.at))
            ends.append((a, b))
            matrix = gap_matrix(a, b, self._radius)
            actor.SetVisibility(matrix is not None)
            if matrix is not None:
                actor.user_matrix = matrix
        self.ends = np.array(ends)
        self._view.request_render()


def _road_strip(points, size: float) -> pv.PolyData:
    """The road as a strip: its profile (x, h) swept along y over [-size, size] / 2,
    extended flat by `size` beyond its first and last point."""
    xh = np.asarray(points, dtype=float)
    xh = np.vstack([[xh[0, 0] - size, xh[0, 1]], xh, [xh[-1, 0] + size, xh[-1, 1]]])
    n = len(xh)
    half = 0.5 * size
    pts = np.vstack([np.column_stack([xh[:, 0], np.full(n, y), xh[:, 1]])
                     for y in (-half, half)])
    faces = np.concatenate([[4, i, i + 1, n + i + 1, n + i] for i in range(n - 1)])
    return pv.PolyData(pts, faces=faces)


def install_force_elements(window) -> ForceElementsOverlay:
    """Draw `window`'s model's force elements and road; returns the overlay."""
    return ForceElementsOverlay(window)
