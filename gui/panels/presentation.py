"""Presentation mode (issue #10): the window for a projector, driven from the keyboard.

View > Presentation Mode (F5) turns the window into two panes that a room can read:
the 3D view on the left and one plot of the Results dock on the right (about
PLOT_SHARE of the width), with every font PRESENT_SCALE x larger (the window's font
and the plots' own pyqtgraph fonts, `PlotsPanel.set_font_scale`), a slim bar on top
(the model's name, the plot shown, the run state, the keys), and full screen unless
the setting WINDOWED_SETTING is true. Every other dock, the menu and status bars, the
3D view's toolbar, the playback bar and the plots' show / hide row are hidden.

While it is on, the keys of KEYS work whatever widget has the focus: an event filter
on the application takes them (their shortcut overrides too) before any widget, the
3D view's VTK interactor included, or a window shortcut sees them. Ctrl / Alt
combinations pass through.

Leaving (Esc, F5, the action, or closing the window) restores exactly what entering
saved: `QMainWindow.saveState` / `saveGeometry`, the window state (full screen or
not), the font, the visible plots, the plots' font scale and the hidden bars.

Nothing is computed here: the keys call the playback bar, the Run panel, the plots
and the 3D view through their public methods; the bar follows the window's session
(its model, its runs).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtGui import QAction, QFont, QKeyEvent, QKeySequence, QWindow
from PySide6.QtWidgets import (QApplication, QDockWidget, QFrame, QHBoxLayout, QLabel,
                               QSizePolicy, QToolBar, QVBoxLayout, QWidget)

from ..jobs.runs import RunOutcome, RunResult
from ..plots.plots_panel import SPECS

__all__ = ["Presentation", "install_presentation", "KEYS", "PRESENT_SCALE", "PLOT_SHARE",
           "WINDOWED_SETTING"]

#: Fonts in presentation mode, x the window's normal font (and the plots' fonts).
PRESENT_SCALE = 1.8
#: +/- change the font scale by this step, within FONT_SCALE_RANGE.
FONT_SCALE_STEP = 0.2
FONT_SCALE_RANGE = (1.0, 3.0)
#: The plot's share of the window's width (the 3D view has the rest).
PLOT_SHARE = 0.4
#: QSettings key: true keeps the window windowed in presentation mode (no full screen).
WINDOWED_SETTING = "presentation/windowed"
#: The keys, as the help overlay lists them (key, what it does).
KEYS = (
    ("Space", "play / pause the playback"),
    ("\u2190 / \u2192", "step one sample back / forward"),
    ("Home / End", "first / last sample"),
    ("R", "run (the Run panel's current run)"),
    ("S", "stop the run"),
    ("1 \u2026 9", "choose the plot"),
    ("Tab / Shift+Tab", "next / previous plot"),
    ("+ / \u2212", "larger / smaller fonts"),
    ("F", "fit the arm in the 3D view"),
    ("? or H", "show / hide this help"),
    ("Esc or F5", "leave presentation mode"),
)
#: The bar's key hints are this share of the bar's font size.
HINT_SHARE = 0.7
#: The bar's key hints, longest first: the first that fits is shown.
BAR_HINTS = (
    "Space play \u00b7 \u2190\u2192 step \u00b7 R run \u00b7 S stop \u00b7 1\u20139 plot"
    " \u00b7 +/\u2212 size \u00b7 ? help \u00b7 Esc leave",
    "Space play \u00b7 R run \u00b7 1\u20139 plot \u00b7 ? help \u00b7 Esc leave",
    "? help \u00b7 Esc leave",
    "? help",
)
BAR_STYLE = """
#presentationBar { background: #1A1D21; border: none; padding: 0; spacing: 0; }
#presentationBar QLabel { color: #FFFFFF; background: transparent; }
#presentationBar QLabel#presentationKeys { color: #C9D1DB; }
"""
HELP_STYLE = """
#presentationHelp { background: rgb(26, 29, 33); }
#presentationHelp QLabel { color: #FFFFFF; background: transparent; }
"""
_TITLES = {spec.key: spec.title for spec in SPECS}
_MODIFIERS = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
              | Qt.KeyboardModifier.MetaModifier)


@dataclass
class _Saved:
    """What entering changed, as it was before."""

    state: QByteArray
    geometry: QByteArray
    rect: QRect  # the window's geometry (restoreGeometry may move it onto the screen)
    window_state: Qt.WindowState
    font: QFont | None  # None: the window had no font of its own (it inherits the app's)
    plots: list[str]
    plot_scale: float
    legends_below: bool
    shown: dict[QWidget, bool]  # menu bar, status bar, view bar, playback, plot buttons
    title_bar: QWidget | None


class _HelpOverlay(QFrame):
    """The KEYS as a table over the middle of the window."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        # a native window of its own, so that it shows over the 3D view's (and opaque:
        # Qt would blend a translucent one with its copy of the window, which has no 3D)
        self.setAttribute(Qt.WidgetAttribute.WA_NativeWindow)
        self.setObjectName("presentationHelp")
        self.setStyleSheet(HELP_STYLE)
        rows = "".join(f"<tr><td><b>{key}</b></td><td>&nbsp;&nbsp;&nbsp;{what}</td></tr>"
                       for key, what in KEYS)
        label = QLabel(f"<h2>Presentation keys</h2><table cellspacing='4'>{rows}</table>")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(28, 16, 28, 20)
        layout.addWidget(label)
        self.hide()

    def place(self) -> None:
        """Centre it in the window at its natural size (at most the window's)."""
        parent = self.parentWidget()
        self.adjustSize()
        w = min(self.sizeHint().width(), parent.width())
        h = min(self.sizeHint().height(), parent.height())
        self.setGeometry((parent.width() - w) // 2, (parent.height() - h) // 2, w, h)


class Presentation(QObject):
    """Presentation mode of one `MainWindow` (see the module docstring).

    ``action``: View > Presentation Mode (checkable, F5). ``bar``: the slim top bar
    (a QToolBar, in the window only while the mode is on); ``status_label`` and
    ``keys_label`` are its two texts; ``help`` the help overlay.
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self._saved: _Saved | None = None
        self._scale = PRESENT_SCALE
        self._plot_key: str | None = None
        self._run_state = "no run yet"

        self.action = QAction("&Presentation Mode", window)
        self.action.setCheckable(True)
        self.action.setShortcut(QKeySequence(Qt.Key.Key_F5))
        tip = "Large fonts, the 3D view and one plot, keyboard control (Esc or F5 leaves)"
        self.action.setStatusTip(tip)
        self.action.setToolTip(tip)
        self.action.toggled.connect(self.set_active)
        window.addAction(self.action)  # F5 works with the menu bar hidden too

        self.bar = QToolBar("Presentation", window)
        self.bar.setObjectName("presentationBar")
        self.bar.setMovable(False)
        self.bar.setFloatable(False)
        self.bar.toggleViewAction().setVisible(False)
        self.bar.setStyleSheet(BAR_STYLE)
        content = QWidget()
        row = QHBoxLayout(content)
        row.setContentsMargins(14, 4, 14, 4)
        row.setSpacing(24)
        self.status_label = QLabel()
        self.status_label.setObjectName("presentationStatus")
        # a long model name is cut rather than widening the window
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                        QSizePolicy.Policy.Preferred)
        self.keys_label = QLabel()
        self.keys_label.setObjectName("presentationKeys")
        self.keys_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.status_label, 1)
        row.addWidget(self.keys_label)
        self.bar.addWidget(content)
        self.bar.hide()
        self.help = _HelpOverlay(window)

        window.installEventFilter(self)  # close (leave first) and resize
        session = window.session
        session.model_changed.connect(self._on_robot_changed)
        session.run_started.connect(lambda _spec: self._set_run_state("computing\u2026"))
        session.chunk.connect(lambda part: self._set_run_state(
            f"computing\u2026 {float(part.t[-1]):.2f} s"))
        session.run_ended.connect(self._on_run_ended)
        window.playback.frame.connect(lambda _t, _q: self._update_bar())

    # ----- state ----------------------------------------------------------------------
    def is_active(self) -> bool:
        return self._saved is not None

    def plot(self) -> str | None:
        """The key of the plot shown (PlotSpec.key), None when off."""
        return self._plot_key if self.is_active() else None

    def font_scale(self) -> float:
        """Fonts in presentation mode, x the normal ones."""
        return self._scale

    def toggle(self) -> None:
        self.set_active(not self.is_active())

    def shutdown(self) -> None:
        """The window is closing: leave the mode (restoring the window) and stop
        watching its events."""
        self.set_active(False)
        self.window.removeEventFilter(self)

    def set_active(self, on: bool) -> None:
        """Enter (True) or leave (False) presentation mode."""
        if on and not self.is_active():
            self._enter()
        elif not on and self.is_active():
            self._leave()
        if self.action.isChecked() != on:
            self.action.blockSignals(True)
            self.action.setChecked(on)
            self.action.blockSignals(False)

    # ----- entering and leaving -------------------------------------------------------
    def _enter(self) -> None:
        w = self.window
        bars = [w.menuBar(), w.statusBar(), w.view_bar]
        bars.append(w.playback)
        self._saved = _Saved(
            state=w.saveState(), geometry=w.saveGeometry(), rect=w.geometry(),
            window_state=w.windowState(),
            font=QFont(w.font()) if w.testAttribute(Qt.WidgetAttribute.WA_SetFont) else None,
            plots=w.plots.visible_plots(), plot_scale=w.plots.font_scale(),
            legends_below=w.plots.legends_below(),
            shown={bar: not bar.isHidden() for bar in bars}
            | {w.plots: w.plots.controls_visible()},
            title_bar=w.plots_dock.titleBarWidget())
        for bar in bars:
            bar.hide()
        w.plots.set_controls_visible(False)
        for dock in w.findChildren(QDockWidget):
            if dock is not w.plots_dock:
                dock.hide()
        dock = w.plots_dock
        dock.setFloating(False)
        w.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        dock.setTitleBarWidget(QWidget())  # no title bar
        dock.show()
        w.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.bar)
        self.bar.show()
        available = w.plots.available_plots()
        if self._plot_key not in available:
            self._plot_key = next((k for k in self._saved.plots if k in available),
                                  available[0])
        w.plots.set_visible_plots([self._plot_key])
        w.plots.set_legends_below(True)  # the plot's pane is narrow and tall
        self._apply_fonts(plots=False)  # the plots' once they have their new width
        if not w.settings.value(WINDOWED_SETTING, False, type=bool):
            w.setWindowState(w.windowState() | Qt.WindowState.WindowFullScreen)
        QApplication.instance().installEventFilter(self)
        self._share_width()
        QTimer.singleShot(0, self, self._settle)

    def _settle(self) -> None:
        """After the layout pass of entering: the plot's share and fonts, the arm fitted.

        (A plot's legend takes its layout from the plot's width when its font changes:
        at the old, wider one it could take more room than the new width has.)"""
        if self.is_active():
            self._share_width()
            self._apply_fonts()
            self.window.view3d.fit()

    def _leave(self) -> None:
        w, saved = self.window, self._saved
        self._saved = None
        QApplication.instance().removeEventFilter(self)
        self.help.hide()
        w.removeToolBar(self.bar)
        self.bar.setParent(w)  # kept for the next time (removeToolBar hid it)
        w.plots_dock.setTitleBarWidget(saved.title_bar)
        w.setFont(saved.font if saved.font is not None else QFont())
        w.plots.set_font_scale(saved.plot_scale)
        w.plots.set_legends_below(saved.legends_below)
        w.plots.set_visible_plots(saved.plots)
        for widget, shown in saved.shown.items():
            if widget is w.plots:
                w.plots.set_controls_visible(shown)
            else:
                widget.setVisible(shown)
        w.setWindowState(saved.window_state)
        w.restoreGeometry(saved.geometry)
        if saved.window_state == Qt.WindowState.WindowNoState and w.geometry() != saved.rect:
            w.setGeometry(saved.rect)
        w.restoreState(saved.state)

    def _apply_fonts(self, plots: bool = True) -> None:
        """The window's font (the bar's, the help's) and the plots' at the font scale."""
        w, saved = self.window, self._saved
        base = QFont(saved.font if saved.font is not None else QApplication.font())
        font = QFont(base)
        if base.pointSizeF() > 0:
            font.setPointSizeF(base.pointSizeF() * self._scale)
        else:  # a font given in pixels
            font.setPixelSize(round(base.pixelSize() * self._scale))
        w.setFont(font)
        for widget in (self.bar, self.help):  # (a style sheet stops font inheritance)
            for label in widget.findChildren(QLabel):
                label.setFont(font)
        hints = QFont(font)  # the keys are for the presenter: smaller than the rest
        if font.pointSizeF() > 0:
            hints.setPointSizeF(font.pointSizeF() * HINT_SHARE)
        else:
            hints.setPixelSize(round(font.pixelSize() * HINT_SHARE))
        self.keys_label.setFont(hints)
        if plots:
            w.plots.set_font_scale(saved.plot_scale * self._scale)
        self._update_bar()
        if self.help.isVisible():
            self.help.place()

    def _share_width(self) -> None:
        w = self.window
        w.resizeDocks([w.plots_dock], [round(PLOT_SHARE * w.width())],
                      Qt.Orientation.Horizontal)

    # ----- commands -------------------------------------------------------------------
    def show_plot(self, key: str) -> None:
        """Show the plot `key` (one of `PlotsPanel.available_plots()`) alone."""
        self.window.plots.set_visible_plots([key])
        self._plot_key = key
        self._update_bar()

    def show_plot_number(self, number: int) -> None:
        """Show the `number`-th (1-based) of the model's plots; beyond them, nothing."""
        available = self.window.plots.available_plots()
        if 1 <= number <= len(available):
            self.show_plot(available[number - 1])

    def next_plot(self, step: int = 1) -> None:
        available = self.window.plots.available_plots()
        k = available.index(self._plot_key) if self._plot_key in available else -step
        self.show_plot(available[(k + step) % len(available)])

    def change_font_scale(self, step: float) -> None:
        """Fonts `step` larger (or smaller), within FONT_SCALE_RANGE."""
        lo, hi = FONT_SCALE_RANGE
        self._scale = round(min(max(self._scale + step, lo), hi), 3)
        if self.is_active():
            self._apply_fonts()

    def toggle_help(self) -> None:
        if self.help.isVisible():
            self.help.hide()
        else:
            self.help.place()
            self.help.show()
            self.help.raise_()

    def _escape(self) -> None:
        """Esc closes the help first, then leaves."""
        if self.help.isVisible():
            self.help.hide()
        else:
            self.set_active(False)

    def _seek_end(self, last: bool) -> None:
        playback = self.window.playback
        traj = playback.trajectory()
        if traj is not None:
            playback.pause()
            playback.seek(float(traj.t[-1] if last else traj.t[0]))

    def command(self, event: QKeyEvent) -> Callable[[], None] | None:
        """What the key of `event` does in presentation mode (None: not one of KEYS)."""
        if event.modifiers() & _MODIFIERS:
            return None
        w, key, K = self.window, event.key(), Qt.Key
        playback, panel = w.playback, w.run_panel
        commands: dict[int, Callable[[], None]] = {
            K.Key_Escape: self._escape, K.Key_F5: lambda: self.set_active(False),
            K.Key_Tab: self.next_plot, K.Key_Backtab: lambda: self.next_plot(-1),
            K.Key_Plus: lambda: self.change_font_scale(FONT_SCALE_STEP),
            K.Key_Equal: lambda: self.change_font_scale(FONT_SCALE_STEP),
            K.Key_Minus: lambda: self.change_font_scale(-FONT_SCALE_STEP),
            K.Key_F: w.view3d.fit, K.Key_Question: self.toggle_help, K.Key_H: self.toggle_help,
        }
        commands.update({K.Key_1 + k: (lambda n=k + 1: self.show_plot_number(n))
                         for k in range(9)})
        commands.update({
            K.Key_Space: lambda: (playback.toggle(), self._update_bar()),
            K.Key_Left: playback.step_back, K.Key_Right: playback.step_forward,
            K.Key_Home: lambda: self._seek_end(False), K.Key_End: lambda: self._seek_end(True),
            K.Key_R: lambda: panel.run(), K.Key_S: panel.stop,
        })
        return commands.get(key)

    # ----- events ---------------------------------------------------------------------
    def _ours(self, obj: QObject) -> bool:
        """True if `obj` (a key event's receiver) is in this window."""
        if isinstance(obj, QWidget):
            return obj.window() is self.window
        if isinstance(obj, QWindow):
            while obj.parent() is not None:
                obj = obj.parent()
            return obj is self.window.windowHandle()
        return False

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if obj is self.window:
            if kind == QEvent.Type.Close and self.is_active():
                self.set_active(False)  # the window saves its normal layout
            elif kind == QEvent.Type.Resize and self.is_active():
                self._share_width()
                self._fit_hints()
                if self.help.isVisible():
                    self.help.place()
        if (kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and self.is_active()
                and self._ours(obj)):
            command = self.command(event)
            if command is not None:
                event.accept()  # an accepted override: no shortcut, the key press comes
                if kind == QEvent.Type.KeyPress:
                    command()
                return True
        return False

    # ----- the bar --------------------------------------------------------------------
    def _set_run_state(self, text: str) -> None:
        self._run_state = text
        self._update_bar()

    _OUTCOME_STATES = {RunOutcome.FINISHED: "run done", RunOutcome.STOPPED: "stopped",
                       RunOutcome.FAILED: "run failed"}

    def _on_run_ended(self, result: RunResult) -> None:
        self._set_run_state(self._OUTCOME_STATES[result.outcome])

    def _on_robot_changed(self, _robot) -> None:
        self._run_state = "no run yet"
        if self.is_active():  # the plots were rebuilt for the new model
            available = self.window.plots.available_plots()
            self.show_plot(self._plot_key if self._plot_key in available else available[0])

    def _update_bar(self) -> None:
        if not self.is_active():
            return
        w = self.window
        available = w.plots.available_plots()
        number = available.index(self._plot_key) + 1 if self._plot_key in available else 0
        parts = [f"<b>{w.session.model.name}</b>",
                 f"{number}/{len(available)} {_TITLES.get(self._plot_key, '')}",
                 self._run_state]
        traj = w.playback.trajectory()
        if traj is not None:
            mark = "\u25b6" if w.playback.is_playing() else "\u275a\u275a"
            parts.append(f"{mark} t = {w.playback.time():.2f} / {float(traj.t[-1]):.2f} s")
        self.status_label.setText(" &nbsp;\u00b7&nbsp; ".join(parts))
        self._fit_hints()

    def _fit_hints(self) -> None:
        """The longest key hint that fits beside the status."""
        room = self.window.width() - self.status_label.sizeHint().width() - 60
        metrics = self.keys_label.fontMetrics()
        hint = next((h for h in BAR_HINTS if metrics.horizontalAdvance(h) <= room), "")
        if hint != self.keys_label.text():
            self.keys_label.setText(hint)


def install_presentation(window) -> Presentation:
    """Add View > Presentation Mode (F5) to `window` (a `MainWindow` with a Results dock).
    Returns the `Presentation`."""
    presentation = Presentation(window)
    for action in window.menuBar().actions():
        menu = action.menu()
        if menu is not None and action.text().replace("&", "") == "View":
            menu.addSeparator()
            menu.addAction(presentation.action)
            break
    return presentation
