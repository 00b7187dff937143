"""The Run panel's progress bar and status text, following a `RunControl`.

The status text is the home of a run's messages: its line, then the run's warnings
(`Trajectory.warnings`) and, when it ends, the stops it hit (`RunControl.messages`).
While a run goes, the time reached is shown inside the progress bar, from a timer
(every DISPLAY_MS), not per chunk: a chunk can come every few milliseconds, and a new
word-wrapped rich text in the status line re-lays out the dock (10-17 ms at every
tick, issue #8).
"""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QObject, Qt, QTimer, Slot
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QLabel, QProgressBar

from armdyn.core.sim.trajectory import Trajectory

from ..jobs.runs import RunOutcome, RunResult
from .run_control import RunControl

__all__ = ["RunStatus", "DISPLAY_MS", "MESSAGES_SHOWN", "PROGRESS_FORMAT"]

#: At most this many run messages (warnings, stop hits) in the status text; the others
#: are in its tooltip.
MESSAGES_SHOWN = 4
#: The progress bar's text between runs; during one it shows the time reached.
PROGRESS_FORMAT = "%p %"
#: The progress bar follows a run this often, ms (a chunk can come every few
#: milliseconds; QProgressBar repaints at once on every setValue).
DISPLAY_MS = 50


class RunStatus(QObject):
    """``bar`` (a QProgressBar) and ``label`` (the status text) for the panel to lay out,
    kept up to date from `control`'s signals."""

    def __init__(self, control: RunControl, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.control = control
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setFormat(PROGRESS_FORMAT)
        self.label = QLabel("Load a robot to start.")
        self.label.setObjectName("runStatus")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
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
        """Show `line` (plain text, or rich text if `rich`) with the run's messages below
        it: at most MESSAGES_SHOWN, all of them in the tooltip."""
        self._line, self._rich = line, rich
        parts = [line if rich else escape(line)]
        shown = self._messages[:MESSAGES_SHOWN]
        parts += [f"\u2022 {escape(m)}" for m in shown]
        if len(self._messages) > len(shown):
            parts.append(f"<i>\u2026 and {len(self._messages) - len(shown)} more (tooltip)</i>")
        self.label.setText("<br>".join(parts))
        self.label.setToolTip("\n".join(f"\u2022 {m}" for m in self._messages))

    def text(self) -> str:
        """The status line and every message of the run, one a line, as plain text."""
        return "\n".join([QTextDocumentFragment.fromHtml(self._line).toPlainText()
                          if self._rich else self._line, *self._messages])

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
