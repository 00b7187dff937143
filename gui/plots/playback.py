"""The playback bar: replay a Trajectory in real time (x speed), loop, step and scrub.

While playing, a ~60 Hz timer reads the wall clock and emits ``frame(t, q)``
for the matching trajectory time; scrubbing the slider, stepping and
``seek`` emit a frame too. Nothing is computed here beyond interpolating q.
"""
from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QSlider, QStyle, QToolButton, QWidget,
)

from armdyn.core.sim.trajectory import Trajectory

#: Frame period while playing, ms (~60 Hz).
FRAME_MS = 16
#: Playback speeds offered (x real time).
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: Slider resolution, s per step.
SLIDER_STEP_S = 0.001


class PlaybackBar(QWidget):
    """Play / pause, single steps, loop, speed and a time slider for one Trajectory.

    Signal ``frame(float, object)``: trajectory time t (s) and the joint values
    q(t), shape (n,), rad / m, linearly interpolated between samples.
    Keys (when the bar has focus): Space plays / pauses, Left / Right step.
    """

    frame = Signal(float, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._traj: Trajectory | None = None
        self._t = 0.0
        self._anchor_t = 0.0      # trajectory time at the wall-clock anchor
        self._anchor_wall = 0.0   # time.perf_counter() at the anchor
        self._setting_slider = False
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.PreciseTimer)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._tick)
        self._build()
        self._update_enabled()

    # ----- construction ---------------------------------------------------------------
    def _build(self) -> None:
        style = self.style()

        def button(icon: QStyle.StandardPixmap, tip: str) -> QToolButton:
            b = QToolButton()
            b.setIcon(style.standardIcon(icon))
            b.setToolTip(tip)
            b.setAutoRaise(False)
            return b

        self._back = button(QStyle.SP_MediaSeekBackward, "Step back one sample (Left)")
        self._play = button(QStyle.SP_MediaPlay, "Play / pause (Space)")
        self._forward = button(QStyle.SP_MediaSeekForward, "Step forward one sample (Right)")
        self._loop = QToolButton()
        self._loop.setText("Loop")
        self._loop.setCheckable(True)
        self._loop.setToolTip("Start again at the end")
        self._speed = QComboBox()
        for s in SPEEDS:
            self._speed.addItem(f"{s:g}\u00d7", s)
        self._speed.setCurrentIndex(SPEEDS.index(1.0))
        self._speed.setToolTip("Playback speed (\u00d7 real time)")
        self._slider = QSlider(Qt.Horizontal)
        self._slider.setToolTip("Drag to scrub through the motion")
        self._label = QLabel()
        self._label.setMinimumWidth(self.fontMetrics().horizontalAdvance("t = 000.000 / 000.000 s"))
        self._label.setAlignment(Qt.AlignRight | Qt.AlignVCenter)

        self._back.clicked.connect(self.step_back)
        self._play.clicked.connect(self.toggle)
        self._forward.clicked.connect(self.step_forward)
        self._speed.currentIndexChanged.connect(self._on_speed)
        self._slider.valueChanged.connect(self._on_slider)
        for key, slot in ((Qt.Key_Space, self.toggle), (Qt.Key_Left, self.step_back),
                          (Qt.Key_Right, self.step_forward)):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)

        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        for w in (self._back, self._play, self._forward, self._loop, self._speed):
            layout.addWidget(w)
        layout.addWidget(self._slider, 1)
        layout.addWidget(self._label)

    # ----- data -----------------------------------------------------------------------
    def observe(self, session) -> None:
        """Replay the last run of `session` (`gui.model.session.Session`): cleared when
        a run starts or the model changes, its samples when it ends."""
        session.model_changed.connect(lambda _model: self.clear())
        session.run_started.connect(lambda _spec: self.clear())
        session.run_ended.connect(self._on_run_ended)

    @Slot(object)
    def _on_run_ended(self, result) -> None:
        if len(result.trajectory):
            self.set_trajectory(result.trajectory)

    def set_trajectory(self, traj: Trajectory | None) -> None:
        """Replay `traj` (paused at its start; emits that frame)."""
        self.pause()
        self._traj = traj if traj is not None and len(traj) > 0 else None
        self._setting_slider = True
        try:
            span = self._span()
            self._slider.setRange(0, round(span / SLIDER_STEP_S))
        finally:
            self._setting_slider = False
        self._update_enabled()
        if self._traj is not None:
            self.seek(float(self._traj.t[0]))
        else:
            self._t = 0.0
            self._show_time()

    def clear(self) -> None:
        """Forget the trajectory and stop playing."""
        self.set_trajectory(None)

    def trajectory(self) -> Trajectory | None:
        return self._traj

    def time(self) -> float:
        """Current trajectory time, s."""
        return self._t

    # ----- transport ------------------------------------------------------------------
    def seek(self, t: float) -> None:
        """Go to time `t` (s, clamped to the trajectory) and emit its frame."""
        if self._traj is None:
            return
        self._t = float(np.clip(t, self._traj.t[0], self._traj.t[-1]))
        self._anchor_t, self._anchor_wall = self._t, time.perf_counter()
        self._emit_frame()

    @Slot()
    def play(self) -> None:
        """Play from the current time (from the start if at the end)."""
        if self._traj is None or self.is_playing():
            return
        if self._t >= self._traj.t[-1]:
            self._t = float(self._traj.t[0])
        self._anchor_t, self._anchor_wall = self._t, time.perf_counter()
        self._timer.start()
        self._play.setIcon(self.style().standardIcon(QStyle.SP_MediaPause))

    @Slot()
    def pause(self) -> None:
        """Stop playing; the time stays."""
        self._timer.stop()
        self._play.setIcon(self.style().standardIcon(QStyle.SP_MediaPlay))

    @Slot()
    def toggle(self) -> None:
        if self.is_playing():
            self.pause()
        else:
            self.play()

    def is_playing(self) -> bool:
        return self._timer.isActive()

    @Slot()
    def step_forward(self) -> None:
        """Pause and go to the next sample."""
        if self._traj is None:
            return
        self.pause()
        k = int(np.searchsorted(self._traj.t, self._t, side="right"))
        self.seek(float(self._traj.t[min(k, len(self._traj) - 1)]))

    @Slot()
    def step_back(self) -> None:
        """Pause and go to the previous sample."""
        if self._traj is None:
            return
        self.pause()
        k = int(np.searchsorted(self._traj.t, self._t, side="left")) - 1
        self.seek(float(self._traj.t[max(k, 0)]))

    def set_speed(self, speed: float) -> None:
        """Playback speed, one of SPEEDS (x real time)."""
        self._speed.setCurrentIndex(SPEEDS.index(speed))

    def speed(self) -> float:
        return float(self._speed.currentData())

    def set_loop(self, on: bool) -> None:
        self._loop.setChecked(on)

    def is_looping(self) -> bool:
        return self._loop.isChecked()

    # ----- internals ------------------------------------------------------------------
    def _span(self) -> float:
        return 0.0 if self._traj is None else float(self._traj.t[-1] - self._traj.t[0])

    @Slot()
    def _tick(self) -> None:
        traj = self._traj
        if traj is None:
            self.pause()
            return
        t0, t1 = float(traj.t[0]), float(traj.t[-1])
        t = self._anchor_t + (time.perf_counter() - self._anchor_wall) * self.speed()
        if t >= t1:
            if self.is_looping() and t1 > t0:
                t = t0 + (t - t0) % (t1 - t0)
                self._anchor_t, self._anchor_wall = t, time.perf_counter()
            else:
                t = t1
                self.pause()
        self._t = t
        self._emit_frame()

    @Slot(int)
    def _on_speed(self, _index: int) -> None:
        self._anchor_t, self._anchor_wall = self._t, time.perf_counter()

    @Slot(int)
    def _on_slider(self, value: int) -> None:
        if self._setting_slider or self._traj is None:
            return
        self.seek(float(self._traj.t[0]) + value * SLIDER_STEP_S)

    def _emit_frame(self) -> None:
        self._show_time()
        self.frame.emit(self._t, self._traj.at(self._t))

    def _show_time(self) -> None:
        self._setting_slider = True
        try:
            start = float(self._traj.t[0]) if self._traj is not None else 0.0
            self._slider.setValue(round((self._t - start) / SLIDER_STEP_S))
        finally:
            self._setting_slider = False
        end = float(self._traj.t[-1]) if self._traj is not None else 0.0
        self._label.setText(f"t = {self._t:.3f} / {end:.3f} s")

    def _update_enabled(self) -> None:
        on = self._traj is not None
        for w in (self._back, self._play, self._forward, self._slider):
            w.setEnabled(on)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self._timer.stop()
        super().closeEvent(event)
