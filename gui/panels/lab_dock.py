"""The Lab dock in the main window, its panel built the first time it is used.

The teaching lab (`gui.panels.lab_panel.LabPanel`: walkthrough, DH lesson, inertia, power,
complexity sweep) stays closed until View > Teaching Lab opens it (`gui.panels.lazy_dock`).
Until its panel exists the dock only remembers what the panel will need: the session's
last model and pose, and the chunks of the current run (references to the run's own
arrays) for the power tab. Both follow the window's session (gui/model/session.py).
"""
from __future__ import annotations

from .lazy_dock import LazyDock

__all__ = ["LabDock", "install_lab"]


class LabDock(LazyDock):
    """The window's Lab dock (``dock``), its View-menu action (``action``) and, once
    built, its panel (``panel``, built on first access)."""

    def __init__(self, window) -> None:
        self.window = window
        self._robot = None
        self._q = None
        self._run: list = []  # chunks of the current run, for the power tab
        self._spec = None  # the current run's RunSpec, for the power tab
        super().__init__(window, "Lab", "labDock", self._make_panel,
                         action_text="Teaching &Lab", shortcut="Ctrl+L",
                         status_tip="Recursion walkthrough, DH frames row by row, "
                                    "inertia in 3D")
        session = window.session
        session.model_changed.connect(self._on_robot)
        session.pose_changed.connect(self._on_pose)
        session.run_started.connect(self._on_run_started)
        session.chunk.connect(self._on_chunk)

    @property
    def panel(self):
        """The `LabPanel` (built now if it was not)."""
        return self.widget

    def _make_panel(self):
        from .lab_panel import LabPanel

        window = self.window
        panel = LabPanel(window.view3d, window.editor)
        if self._robot is not None:
            panel.set_robot(self._robot)
            panel.power.reset()
        if self._q is not None:
            panel.set_pose(self._q)
        if self._spec is not None:
            panel.power.start_run(self._spec)
        for chunk in self._run:
            panel.power.append(chunk)
        self._run = []
        session = window.session
        session.model_changed.connect(panel.set_robot)
        session.pose_changed.connect(panel.set_pose)
        session.model_changed.connect(panel.power.reset)
        session.run_started.connect(panel.power.start_run)
        session.chunk.connect(panel.power.append)
        return panel

    def _on_robot(self, robot) -> None:
        if not self.built:
            self._robot, self._run = robot, []

    def _on_pose(self, q) -> None:
        if not self.built:
            self._q = q

    def _on_run_started(self, spec) -> None:
        if not self.built:
            self._run, self._spec = [], spec

    def _on_chunk(self, chunk) -> None:
        if not self.built:
            self._run.append(chunk)


def install_lab(window) -> LabDock:
    """Put a Lab dock into `window` (a `MainWindow`), tabbed with the Inspect or Results
    dock and wired to the session's model, pose and runs; the panel is built on first use."""
    return LabDock(window)
