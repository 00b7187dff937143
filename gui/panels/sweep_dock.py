"""The Sweep dock of the main window: its View-menu action, and its `SweepPanel`
(gui/panels/sweep_panel.py) built the first time the dock is shown
(`gui.panels.lazy_dock`), then following the window's model and Run panel.
"""
from __future__ import annotations

from .lazy_dock import LazyDock

__all__ = ["SweepDock", "install_sweep"]


class SweepDock(LazyDock):
    """The window's Sweep dock (``dock``), its View-menu action (``action``) and, once
    built, its panel (``panel``: a `SweepPanel`, built on first use)."""

    def __init__(self, window) -> None:
        self.window = window
        super().__init__(window, "Sweep", "sweepDock", self._make_panel,
                         action_text="&Sweep\u2026", shortcut="Ctrl+G",
                         status_tip="Run the current run over a grid of payloads, "
                                    "durations, link values...: torque envelopes",
                         neighbours=("compare_dock", "lab_dock", "inspect_dock",
                                     "plots_dock"),
                         on_show=lambda: self.panel.follow_window_run())

    @property
    def panel(self):
        """The `SweepPanel` (built now if it was not)."""
        return self.widget

    def _make_panel(self):
        from .sweep_panel import SweepPanel  # pyqtgraph plots: only when asked for

        panel = SweepPanel(self.window)
        panel.dock, panel.action = self.dock, self.action
        self.window.session.model_changed.connect(lambda _model: panel.follow_window_run())
        motion = self.window.run_panel.targets.motion  # the law chosen, a log read
        motion.kind_changed.connect(lambda _kind: panel.follow_window_run())
        motion.measured_loaded.connect(lambda _motion: panel.follow_window_run())
        return panel


def install_sweep(window, after=None) -> SweepDock:
    """Put a Sweep dock into `window` (a `MainWindow`), tabbed with the bottom docks;
    "Sweep..." (Ctrl+G) goes into the View menu after the action `after` (at its end
    without one)."""
    sweep = SweepDock(window)
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if menu is not None and menu_action.text().replace("&", "") == "View":
            actions = menu.actions()
            at = actions.index(after) + 1 if after in actions else len(actions)
            if at < len(actions):
                menu.insertAction(actions[at], sweep.action)
            else:
                menu.addAction(sweep.action)
            break
    return sweep
