"""What the 3D view's drag interactions share (Drag Tool, `tool_drag`; Turn Body,
`turn_handle`): the window's session and 3D view, the VTK widget they show while on,
the session's signals wired to the interaction, and a pose change of their own that
their pose handler can tell from a slider's.

A subclass defines `set_robot(robot)` (a new model) and `_on_pose_changed(q)` (a new
pose, (nq,)), and tells `_moving_pose` (True while the pose is its own) and `_closed`
(after shutdown) apart in them.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject

__all__ = ["SceneInteraction"]


class SceneInteraction(QObject):
    """One drag interaction of one `MainWindow`: ``window``, its ``session`` and 3D
    ``view``; ``widget`` the VTK widget while the interaction is on (else None)."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.session = window.session
        self.view = window.view3d
        self.widget = None
        self._moving_pose = False  # the pose change is ours (not a slider's)
        self._closed = False
        self.session.model_changed.connect(self.set_robot)
        self.session.pose_changed.connect(self._on_pose_changed)

    @property
    def robot(self):
        """The session's model (`Robot` or `Mechanism`)."""
        return self.session.model

    def set_robot(self, robot) -> None:
        """A new model: the subclass offers or withdraws the interaction."""
        raise NotImplementedError

    def _on_pose_changed(self, q) -> None:
        raise NotImplementedError

    def _set_own_pose(self, q: np.ndarray) -> None:
        """The session's pose to `q` (nq,), rad / m, through `Session.set_pose` (every
        view follows), marked as this interaction's own while its signal is handled."""
        self._moving_pose = True
        try:
            self.session.set_pose(q)
        finally:
            self._moving_pose = False

    def _remove_widget(self, kind: str) -> None:
        """Switch the widget off and drop it from the plotter's list `kind`
        ("sphere_widgets", "box_widgets"), then render."""
        widget, self.widget = self.widget, None
        widget.Off()
        widgets = getattr(self.view.plotter.widgets, kind)
        if widget in widgets:
            widgets.remove(widget)
        self.view.request_render()
