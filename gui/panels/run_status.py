"""The Run panel's progress bar and status text, following a `RunControl`.

The status is the home of a run's messages: its line, then the run's warnings
(`Trajectory.warnings`) and, when it ends, the stops it hit (`RunControl.messages`).
The line shows below the progress bar in at most STATUS_LINES lines; the messages do
not take the panel's height (a stop report of a dozen lines squeezed the settings into
a scroll area two lines high, issue #21): a button beside the bar counts them
("3 messages") and opens them in a window of their own (`messages_window`, plain text,
selectable); the line's tooltip holds them too. A line too long for its STATUS_LINES (a
failure's message) shows the button too ("Details"), and the window has it whole. While a
run goes, the time reached is shown inside the progress bar, from a timer
(every DISPLAY_MS), not per chunk: a chunk can come every few milliseconds, and a new
word-wrapped rich text in the status line re-lays out the dock (10-17 ms at every
tick, issue #8).
"""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import (QDialog, QLabel, QPlainTextEdit, QProgressBar, QStyle,
                               QToolButton, QVBoxLayout)

from armdyn.core.sim.trajectory import Trajectory

from ..jobs.runs import RunOutcome, RunResult
from ..look.text import tooltip
from .run_control import RunControl

__all__ = ["RunStatus", "DISPLAY_MS", "STATUS_LINES", "PROGRESS_FORMAT", "STATUS_LABEL",
           "MESSAGES_BUTTON", "MESSAGES_WINDOW"]

#: The status line shows at most this many lines (the rest is in the messages window).
STATUS_LINES = 3
#: Object names of the status line, the messages button and window.
STATUS_LABEL = "runStatus"
MESSAGES_BUTTON = "runMessagesButton"
MESSAGES_WINDOW = "runMessages"
#: The progress bar's text between runs; during one it shows the time reached.
PROGRESS_FORMAT = "%p %"
#: The progress bar follows a run this often, ms (a chunk can come every few
#: milliseconds; QProgressBar repaints at once on every setValue).
DISPLAY_MS = 50


class RunStatus(QObject):
    """``bar`` (a QProgressBar), ``messages_button`` (beside it) and ``label`` (the status
    line) for the panel to lay out, kept up to date from `control`'s signals."""

    def __init__(self, control: RunControl, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.control = control
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setFormat(PROGRESS_FORMAT)
        self.label = QLabel("Load a robot to start.")
        self.label.setObjectName(STATUS_LABEL)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        # a long line (a failure's message) takes at most STATUS_LINES lines of the panel
        self.label.setMaximumHeight(STATUS_LINES * self.label.fontMetrics().lineSpacing() + 2)
        self.messages_button = QToolButton()
        self.messages_button.setObjectName(MESSAGES_BUTTON)
        self.messages_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.messages_button.setIcon(self.messages_button.style().standardIcon(
            QStyle.StandardPixmap.SP_MessageBoxInformation))
        self.messages_button.setToolTip("The run's messages: its warnings and the end stops "
                                        "it hit, in a window of their own")
        self.messages_button.clicked.connect(self.show_messages)
        self.messages_button.hide()
        self.label.installEventFilter(self)  # a resize may clip the line, or unclip it
        #: the window the messages open in (made on first use)
        self.messages_window: QDialog | None = None
        #: the status line (plain or rich text) and the run's messages shown below it
        self._line, self._rich = "", False
        self._messages: tuple[str, ...] = ()
        self._timer = QTimer(self)
        self._timer.setInterval(DISPLAY_MS)
        self._timer.timeout.connect(self._show_progress)
        control.started.connect(self._on_started)
        control.chunk.connect(self._on_chunk)
        control.ended.connect(self._on_ended)

    # ----- what the panel says --------------------------------------------------------
    def show_idle(self, line: str) -> None:
        """Between runs: `line`, no messages, the bar empty."""
        self.clear_progress()
        self._messages = ()
        self.set_line(line)

    def clear_progress(self) -> None:
        """The bar empty (a run was cancelled silently)."""
        self._timer.stop()
        self._set_progress(0)
        self.bar.setFormat(PROGRESS_FORMAT)

    def show_paused(self, paused: bool) -> None:
        spec = self.control.spec
        if spec is not None:
            self.set_line(f"{spec.label}: paused." if paused else f"{spec.label}: computing\u2026")

    def set_line(self, line: str, rich: bool = False) -> None:
        """Show `line` (plain text, or rich text if `rich`); the run's messages are counted
        on the button beside the bar and shown in their window (and the tooltip)."""
        self._line, self._rich = line, rich
        self.label.setText(line if rich else escape(line))
        self.label.setToolTip(tooltip("\n".join([self._plain_line()]
                                                 + [f"\u2022 {m}" for m in self._messages])))
        self._update_button()
        if self.messages_window is not None:
            self._fill_messages()

    def line_clipped(self) -> bool:
        """True if the status line needs more than its STATUS_LINES lines."""
        label = self.label
        return label.heightForWidth(max(label.width(), 1)) > label.maximumHeight()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt
        if watched is self.label and event.type() == QEvent.Type.Resize:
            self._update_button()
        return False

    def _update_button(self) -> None:
        """The button: the messages' count, or "Details" for a clipped line alone."""
        count = len(self._messages)
        self.messages_button.setText(f"{count} message{'s' * (count != 1)}\u2026" if count
                                     else "Details\u2026")
        self.messages_button.setVisible(bool(count) or self.line_clipped())

    def show_messages(self) -> QDialog:
        """Open (or raise) the window with the status line and every message of the run,
        plain text; returns it."""
        if self.messages_window is None:
            window = QDialog(self.label.window())
            window.setObjectName(MESSAGES_WINDOW)
            window.setWindowTitle("Run messages")
            window.setModal(False)
            text = QPlainTextEdit()
            text.setReadOnly(True)
            text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
            column = QVBoxLayout(window)
            column.addWidget(text)
            window.resize(560, 320)
            self.messages_window, self._messages_text = window, text
        self._fill_messages()
        self.messages_window.show()
        self.messages_window.raise_()
        return self.messages_window

    def _fill_messages(self) -> None:
        self._messages_text.setPlainText(self.text())

    def _plain_line(self) -> str:
        return (QTextDocumentFragment.fromHtml(self._line).toPlainText() if self._rich
                else self._line)

    def text(self) -> str:
        """The status line and every message of the run, one a line, as plain text."""
        return "\n".join([self._plain_line(), *self._messages])

    # ----- the run --------------------------------------------------------------------
    @Slot()
    def _on_started(self) -> None:
        self._set_progress(0)
        self.bar.setFormat(PROGRESS_FORMAT)
        self._messages = ()
        self.set_line(f"{self.control.spec.label}: computing\u2026")
        self._timer.start()

    @Slot(object)
    def _on_chunk(self, part: Trajectory) -> None:
        if part.warnings and not self._messages:  # known from the start: shown at once
            self._messages = tuple(part.warnings)
            self.set_line(self._line, rich=self._rich)

    @Slot(object)
    def _on_ended(self, result: RunResult) -> None:
        self._timer.stop()
        traj, label = result.trajectory, result.spec.label
        self._messages = self.control.messages
        if result.outcome is RunOutcome.FINISHED:
            self._set_progress(1000)
            self.bar.setFormat(PROGRESS_FORMAT)
            self.set_line(f"{label}: finished, {len(traj)} samples over "
                          f"{result.spec.duration:.2f} s.")
        elif result.outcome is RunOutcome.FAILED:
            self.set_line(f"<span style='color:#B00020'><b>Stopped:</b> "
                          f"{escape(result.message)}</span>", rich=True)
        else:
            end = f"t = {traj.t[-1]:.2f} s" if len(traj) else "the start"
            self.set_line(f"{label}: stopped at {end} ({len(traj)} samples).")

    @Slot()
    def _show_progress(self) -> None:
        """Timer, while a run goes: the bar at the newest sample."""
        control = self.control
        if not control.is_running() or control.is_paused():
            return
        t, duration = control.newest_time, control.spec.duration
        value = round(1000 * min(1.0, t / duration))
        if value != self.bar.value():
            # the time goes in the bar, not the status line: a new word-wrapped rich
            # text there re-lays out the dock (10-17 ms at every tick, issue #8)
            self.bar.setFormat(f"t = {t:.2f} / {duration:.2f} s")
            self._set_progress(value)

    def _set_progress(self, value: int) -> None:
        """The bar's value (0-1000), painted with the window's next paint.

        QProgressBar.setValue repaints at once, and a synchronous repaint paints every
        dirty region of the window (the streaming plots: 12-17 ms, issue #8); with updates
        off it only stores the value, and turning them on queues a paint.
        """
        self.bar.setUpdatesEnabled(False)
        self.bar.setValue(value)
        self.bar.setUpdatesEnabled(True)
