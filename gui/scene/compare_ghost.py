"""Run B's arm in the 3D view while two runs are compared: a translucent ghost.

The arm layer's parts of `gui.scene.arm_scene.build_parts`, merged into one mesh
(`MergedParts`) built once per model and moved point by point (gui/panels/compare.py).
"""
from __future__ import annotations

import numpy as np

from armdyn.core import Mechanism, Robot, forward_kinematics

from .arm_scene import MergedParts, build_parts, scene_frames

__all__ = ["CompareGhost", "GHOST_COLOR", "GHOST_OPACITY"]

GHOST_COLOR = "#7B3FBF"
GHOST_OPACITY = 0.35


class CompareGhost:
    """Run B's arm as one translucent mesh in an `ArmView` (`view.plotter`,
    `view.request_render`). ``actor`` is None while removed."""

    def __init__(self, view) -> None:
        self.view = view
        self.actor = None
        self._model = None
        self._merged: MergedParts | None = None

    def show(self, model: Robot | Mechanism, q: np.ndarray) -> None:
        """Draw `model` at q (n,), rad / m (built once per model)."""
        if model is not self._model or self.actor is None:
            self.remove()
            parts = [p for p in build_parts(model) if p.layer == "arm" and p.gap is None]
            self._merged = MergedParts(parts)
            self._model = model
            self.actor = self.view.plotter.add_mesh(
                self._merged.mesh, color=GHOST_COLOR, opacity=GHOST_OPACITY, scalars=None,
                rgb=False, specular=0.2, ambient=0.25, render=False, reset_camera=False,
                pickable=False)
        self.place(q)

    def place(self, q: np.ndarray) -> None:
        """Move the ghost to q (n,), rad / m."""
        if self.actor is None:
            return
        q = np.asarray(q, dtype=float)
        self._merged.place(scene_frames(forward_kinematics(self._model, q)), q)
        self.view.request_render()

    def remove(self) -> None:
        if self.actor is not None:
            self.view.plotter.remove_actor(self.actor, render=False)
            self.actor = None
            self.view.request_render()
        self._merged = None
        self._model = None
