"""The Compare dock of the main window: its View-menu action, and its `ComparePanel`
(gui/panels/compare.py) built the first time the dock is shown (`gui.panels.lazy_dock`),
then wired to the window's session (a new model, a finished run) and playback.
"""
from __future__ import annotations

from ..jobs.runs import RunOutcome, RunResult
from .compare import ComparePanel
from .lazy_dock import LazyDock

__all__ = ["CompareDock", "install_compare"]


class CompareDock(LazyDock):
    """The window's Compare dock (``dock``), its View-menu action (``action``) and, once
    built, its panel (``panel``: a `ComparePanel`, built on first use, `gui.panels.lazy_dock`)."""

    def __init__(self, window) -> None:
        self.window = window
        super().__init__(window, "Compare", "compareDock", self._make_panel,
                         action_text="&Compare Runs\u2026", shortcut="Ctrl+K",
                         status_tip="Run this model and a changed one (or another file) "
                                    "side by side",
                         neighbours=("lab_dock", "inspect_dock", "plots_dock"),
                         on_show=lambda: self.panel.follow_window_run())

    @property
    def panel(self) -> ComparePanel:
        """The `ComparePanel` (built now if it was not)."""
        return self.widget

    def _make_panel(self) -> ComparePanel:
        window = self.window
        panel = ComparePanel(window)  # takes the session's model itself
        panel.dock, panel.action = self.dock, self.action
        session = window.session
        session.model_changed.connect(panel.set_robot)
        session.run_ended.connect(lambda result: _follow_finished_run(panel, result))
        window.playback.frame.connect(panel.follow_window_playback)
        return panel


def _follow_finished_run(panel: ComparePanel, result: RunResult) -> None:
    """A window run finished: the panel takes its settings."""
    if result.outcome is RunOutcome.FINISHED:
        panel.follow_window_run()


def install_compare(window) -> CompareDock:
    """Put a Compare dock into `window` (a `MainWindow`), tabbed with the bottom docks,
    wired to the window's session and playback once its panel is built (on first use);
    "Compare Runs..." (Ctrl+K) goes into the View menu, after Teaching Lab."""
    compare = CompareDock(window)
    action = compare.action
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if menu is not None and menu_action.text().replace("&", "") == "View":
            lab = window.lab_action
            actions = menu.actions()
            after = actions.index(lab) + 1 if lab in actions else len(actions)
            if after < len(actions):
                menu.insertAction(actions[after], action)
            else:
                menu.addAction(action)
            break
    return compare
