"""The Lab dock in the main window, its panel built the first time it is used.

The teaching lab (`gui.lab_panel.LabPanel`: walkthrough, DH lesson, inertia, power,
complexity sweep) stays closed until View > Teaching Lab opens it, and most users never
open it; its imports and widgets would cost about a quarter of a second of every start.
So `install_lab` puts an empty dock and its action into the window and builds the panel
when the dock is first shown (or `LabDock.panel` is first asked for). Until then the
dock only remembers what the panel will need: the window's last robot and pose, and the
chunks of the current run (references to the run's own arrays) for the power tab.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget

__all__ = ["LabDock", "install_lab"]


class LabDock:
    """The window's Lab dock (``dock``), its View-menu action (``action``) and, once
    built, its panel (``panel``, built on first access)."""

    def __init__(self, window) -> None:
        self.window = window
        self._panel = None
        self._robot = None
        self._q = None
        self._run: list = []  # chunks of the current run, for the power tab

        dock = QDockWidget("Lab", window)
        dock.setObjectName("labDock")
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        neighbour = getattr(window, "inspect_dock", None) or getattr(window, "plots_dock",
                                                                     None)
        if neighbour is not None:
            window.tabifyDockWidget(neighbour, dock)
            plots = getattr(window, "plots_dock", None)
            if plots is not None:
                plots.raise_()
        dock.hide()  # opened from View > Teaching Lab; until then it draws nothing in 3D
        dock.visibilityChanged.connect(self._on_visibility)
        self.dock = dock

        window.robot_changed.connect(self._on_robot)
        window.pose_changed.connect(self._on_pose)
        run_panel = getattr(window, "run_panel", None)
        if run_panel is not None:
            run_panel.started.connect(self._on_run_started)
            run_panel.chunk.connect(self._on_chunk)

        self.action = QAction("Teaching &Lab", window)
        self.action.setStatusTip("Recursion walkthrough, DH frames row by row, inertia in 3D")
        self.action.setShortcut("Ctrl+L")
        self.action.triggered.connect(self.show)

    @property
    def built(self) -> bool:
        """Whether the panel exists yet."""
        return self._panel is not None

    @property
    def panel(self):
        """The `LabPanel` (built now if it was not)."""
        if self._panel is None:
            self._build()
        return self._panel

    def show(self) -> None:
        """Show and raise the dock (building the panel)."""
        self.panel  # noqa: B018 - built before the dock paints
        self.dock.show()
        self.dock.raise_()

    def shutdown(self) -> None:
        """Stop the panel's timers (if it was built)."""
        if self._panel is not None:
            self._panel.shutdown()

    def _build(self) -> None:
        from .lab_panel import LabPanel

        window = self.window
        panel = LabPanel(window.view3d, window.editor)
        self.dock.setWidget(panel)
        if self._robot is not None:
            panel.set_robot(self._robot)
            panel.power.reset()
        if self._q is not None:
            panel.set_pose(self._q)
        for chunk in self._run:
            panel.power.append(chunk)
        self._run = []
        window.robot_changed.connect(panel.set_robot)
        window.pose_changed.connect(panel.set_pose)
        window.robot_changed.connect(panel.power.reset)
        run_panel = getattr(window, "run_panel", None)
        if run_panel is not None:
            run_panel.started.connect(panel.power.reset)
            run_panel.chunk.connect(panel.power.append)
        self._panel = panel

    def _on_visibility(self, visible: bool) -> None:
        if visible and self._panel is None:
            self._build()

    def _on_robot(self, robot) -> None:
        if self._panel is None:
            self._robot, self._run = robot, []

    def _on_pose(self, q) -> None:
        if self._panel is None:
            self._q = q

    def _on_run_started(self, *_args) -> None:
        if self._panel is None:
            self._run = []

    def _on_chunk(self, chunk) -> None:
        if self._panel is None:
            self._run.append(chunk)


def install_lab(window) -> LabDock:
    """Put a Lab dock into `window` (a `MainWindow`), tabbed with the Inspect or Results
    dock and wired to the window's robot, pose and runs; the panel is built on first use."""
    return LabDock(window)
