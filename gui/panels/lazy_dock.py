"""A dock whose widget is built the first time it is shown.

The Lab and Compare docks stay closed until the user opens them from the View menu,
and most sessions never do: their imports and widgets (pyqtgraph plots, the complexity
sweep, a playback bar) would otherwise cost every start of the window. A `LazyDock`
puts the dock (empty, hidden, tabbed with the bottom docks) and its View-menu action
into the window at once, and calls `build()` for its widget when the dock is first
shown or `widget` is first asked for.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QWidget

__all__ = ["LazyDock"]


class LazyDock:
    """A closable bottom dock of `window`, hidden until its ``action`` shows it.

    title, name : the dock's title and object name (saved layouts use the name)
    build       : makes the dock's widget (called once, on first show or first access)
    action_text, shortcut, status_tip : the View-menu action that shows and raises it
    neighbours  : attribute names of window docks to tab it with (the first that exists)
    on_show     : called each time the action shows the dock, after building

    Attributes: ``dock``, ``action``; ``widget`` (built on access), ``built``.
    `shutdown` calls the widget's ``shutdown()`` (the window closing), if it was built.
    """

    def __init__(self, window, title: str, name: str, build: Callable[[], QWidget], *,
                 action_text: str, shortcut: str, status_tip: str,
                 neighbours: Sequence[str] = ("inspect_dock", "plots_dock"),
                 on_show: Callable[[], None] | None = None) -> None:
        self._build = build
        self._widget: QWidget | None = None
        self._on_show = on_show

        dock = QDockWidget(title, window)
        dock.setObjectName(name)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        neighbour = next((d for d in (getattr(window, a, None) for a in neighbours) if d),
                         None)
        if neighbour is not None:
            window.tabifyDockWidget(neighbour, dock)
            plots = getattr(window, "plots_dock", None)
            if plots is not None:
                plots.raise_()  # the Results stay in front
        dock.hide()
        dock.visibilityChanged.connect(self._on_visibility)
        self.dock = dock

        self.action = QAction(action_text, window)
        self.action.setStatusTip(status_tip)
        self.action.setShortcut(shortcut)
        self.action.triggered.connect(self.show)

    @property
    def built(self) -> bool:
        """Whether the widget exists yet."""
        return self._widget is not None

    @property
    def widget(self) -> QWidget:
        """The dock's widget (built now if it was not)."""
        if self._widget is None:
            self._widget = self._build()
            self.dock.setWidget(self._widget)
        return self._widget

    def shutdown(self) -> None:
        """Stop the widget's work (its ``shutdown()``: a job, timers), if it was built."""
        if self.built:
            self._widget.shutdown()

    def show(self) -> None:
        """Show and raise the dock (building its widget first)."""
        self.widget  # noqa: B018 - built before the dock paints
        if self._on_show is not None:
            self._on_show()
        self.dock.show()
        self.dock.raise_()

    def _on_visibility(self, visible: bool) -> None:
        if visible:  # also shown by a restored layout or a tab click
            self.widget  # noqa: B018
