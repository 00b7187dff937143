"""The Measured Motion and Identify docks of the main window, each built the first
time it is shown (`gui.panels.lazy_dock`): View > Measured vs Model (Ctrl+J) and
View > Identify Parameters, and File > Open Measured Motion... (which opens the first
and asks for a log).

The measured view (`gui.panels.measured_panel.MeasuredPanel`) follows the session's
model (the document's last valid one); the Identify panel
(`gui.panels.identify_panel.IdentifyPanel`) identifies from the log open in it and
builds it when it is built itself.
"""
from __future__ import annotations

from PySide6.QtGui import QAction

from .lazy_dock import LazyDock

__all__ = ["MeasuredDocks", "install_measured"]


class MeasuredDocks:
    """The two docks (``measured``, ``identify``: `LazyDock`s) and File > Open Measured
    Motion... (``open_action``) of `window`."""

    def __init__(self, window) -> None:
        self.window = window
        self.measured = LazyDock(
            window, "Measured Motion", "measuredDock", self._make_measured,
            action_text="&Measured vs Model", shortcut="Ctrl+J",
            status_tip="A log's measured torques against the model's, the residual and "
                       "the model torque's parts",
            neighbours=("compare_dock", "lab_dock", "inspect_dock", "plots_dock"))
        self.identify = LazyDock(
            window, "Identify", "identifyDock", self._make_identify,
            action_text="&Identify Parameters", shortcut="Ctrl+Shift+J",
            status_tip="Masses, inertias and friction from a measured motion, nominal "
                       "against identified",
            neighbours=("compare_dock", "lab_dock", "inspect_dock", "plots_dock"))
        self.open_action = QAction("Open &Measured Motion\u2026", window)
        self.open_action.setStatusTip("Open a log of joint values and torques against "
                                      "the model")
        self.open_action.triggered.connect(self.open_motion)

    @property
    def measured_panel(self):
        """The `MeasuredPanel` (built now if it was not)."""
        return self.measured.widget

    @property
    def identify_panel(self):
        """The `IdentifyPanel` (built now if it was not)."""
        return self.identify.widget

    def open_motion(self) -> bool:
        """Show the measured view and ask for a log."""
        self.measured.show()
        return self.measured_panel.open_motion()

    def shutdown(self) -> None:
        """Cancel the panels' jobs (those built)."""
        for dock in (self.identify, self.measured):
            if dock.built:
                dock.widget.shutdown()

    def _make_measured(self):
        from .measured_panel import MeasuredPanel

        panel = MeasuredPanel()
        if self.window.session.model is not None:
            panel.set_robot(self.window.session.model)
        self.window.session.model_changed.connect(panel.set_robot)
        return panel

    def _make_identify(self):
        from .identify_panel import IdentifyPanel

        window = self.window
        return IdentifyPanel(self.measured_panel, window.document, window.files)


def _menu(window, title: str):
    for menu_action in window.menuBar().actions():
        if menu_action.menu() is not None and menu_action.text().replace("&", "") == title:
            return menu_action.menu()
    return None


def install_measured(window, after: QAction | None = None) -> MeasuredDocks:
    """Put the Measured Motion and Identify docks into `window` (a `MainWindow`),
    their actions into the View menu (after `after`, else at the end of its dock
    entries) and "Open Measured Motion..." into the File menu after Open Recent."""
    docks = MeasuredDocks(window)
    view = _menu(window, "View")
    if view is not None:
        actions = view.actions()
        at = actions.index(after) + 1 if after in actions else len(actions)
        for action in (docks.measured.action, docks.identify.action):
            if at < len(actions):
                view.insertAction(actions[at], action)
            else:
                view.addAction(action)
    file = _menu(window, "File")
    if file is not None:
        recent = window.recent_menu.menuAction()
        actions = file.actions()
        at = actions.index(recent) + 1 if recent in actions else len(actions)
        if at < len(actions):
            file.insertAction(actions[at], docks.open_action)
        else:
            file.addAction(docks.open_action)
    return docks
