"""The Lab's power tab (issue #10): during a run, the rate of change of the total energy
against the power of the joint forces, the damping and the joints' friction, live; their
difference, the residual, is the integration error. The energy includes the motor
rotors' kinetic energy; what friction dissipated is summed in the line below (issue #24).

Fed by the run's chunks (`RunPanel.chunk`, connected by `gui.panels.lab_dock.install_lab`) into
a `core.sim.power.PowerBalanceStream`; a new run (`start_run(spec)`: its model, for the
friction, and its damping) or a new robot starts over. Two plots with linked time axes:
dE/dt, P = P_joint + P_damping + P_pull + P_friction, and each of them (W); the
residual dE/dt - P (W), with the largest residual and the accumulated energy
drift (J) in a line below. Curves are created once and refreshed with setData from a
timer while chunks arrive. No physics here: the numbers come from `core.sim.power`.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from armdyn.core.sim.power import PowerBalance, PowerBalanceStream
from armdyn.core.sim.trajectory import Trajectory

from ..jobs.runs import RunKind
from ..plots.plots_panel import (LABEL_STYLE, CompactGraphics, adopt_menus,
                                 align_axis_widths, grid_axes, legend_beside,
                                 style_like_results)

__all__ = ["PowerPanel", "REFRESH_MS"]

#: Redraw period while chunks arrive, ms.
REFRESH_MS = 100
CURVES = (  # key, legend, colour, style, width
    ("energy_rate", "dE/dt (recorded energy)", "#000000", Qt.PenStyle.SolidLine, 2),
    ("power", "P = P_joint + P_damping (+ P_pull + P_friction)", "#D55E00",
     Qt.PenStyle.DashLine, 2),
    ("damping_power", "P_damping = \u2212\u03a3 c q\u0307\u00b2", "#0072B2",
     Qt.PenStyle.DotLine, 1),
    ("joint_power", "P_joint = q\u0307 \u00b7 \u03c4", "#009E73", Qt.PenStyle.DotLine, 1),
    # a pull (push the arm, core.sim.pull); zero in runs without one
    ("pull_power", "P_pull = F \u00b7 v_p", "#CC79A7", Qt.PenStyle.DotLine, 1),
    # the joints' friction (core.kernels.drives); zero in a model without
    ("friction_power", "P_friction = \u2212q\u0307 \u00b7 f(q\u0307)", "#E69F00",
     Qt.PenStyle.DotLine, 1),
)


class PowerPanel(QWidget):
    """Live power balance of the window's runs.

    Methods: `start_run(spec)` (a new run), `reset()` (forget it), `append(chunk)` (a
    Trajectory chunk), `balance()` (the PowerBalance so far), `set_damping(c)`,
    `shutdown()`.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("powerPanel")
        self.stream = PowerBalanceStream()
        self.stream_n = 0
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setObjectName("powerRefresh")
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._refresh)

        self._span: tuple[float, float] | None = None
        self.graphics = CompactGraphics(180)
        self.graphics.setBackground("w")
        # room on the right for the time axis's last label (t = T)
        self.graphics.ci.layout.setContentsMargins(0, 0, 16, 0)
        self.graphics.setMinimumHeight(180)
        self.rate_plot = self.graphics.addPlot(row=0, col=0, axisItems=grid_axes(time=True))
        self.residual_plot = self.graphics.addPlot(row=1, col=0,
                                                   axisItems=grid_axes(time=True))
        # one time range for both, linked by value (pyqtgraph's setXLink maps pixels, so
        # each width change while the axes aligned moved the other's range)
        for a, b in ((self.rate_plot, self.residual_plot), (self.residual_plot, self.rate_plot)):
            a.sigXRangeChanged.connect(lambda _vb, r, other=b: self._follow(other, r))
        # under the plot, not over the curves (pyqtgraph's floating legend drew light
        # grey text under them); below, it leaves the two plot areas the same width
        self.legend = legend_beside(self.rate_plot, below=True, columns=3)
        for plot, title, unit in ((self.rate_plot, "energy rate and power", "power (W)"),
                                  (self.residual_plot, "residual dE/dt \u2212 P", "W")):
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.hideAxis("right")
            style_like_results(plot, title, left=unit)
            plot.setDownsampling(auto=True, mode="peak")
            plot.setClipToView(True)
            adopt_menus(plot, self)
        self.residual_plot.getAxis("bottom").setLabel("time (s)", **LABEL_STYLE)
        self.rate_plot.getAxis("bottom").setStyle(showValues=False)
        for plot in (self.rate_plot, self.residual_plot):
            plot.vb.sigResized.connect(self._align)
        self.curves: dict[str, pg.PlotDataItem] = {}
        for key, name, color, style, width in CURVES:
            self.curves[key] = self.rate_plot.plot(
                [], [], pen=pg.mkPen(color, width=width, style=style), name=name)
        self.curves["residual"] = self.residual_plot.plot([], [], pen=pg.mkPen("#CC79A7",
                                                                               width=2))
        self.summary = QLabel("Run a free fall or an inverse-dynamics motion: the power "
                              "balance follows it here.")
        self.summary.setObjectName("powerSummary")
        self.summary.setWordWrap(True)
        # no height-for-width: a scroll area then lays the page out at its preferred
        # height for the width, which scrolled the plots of a low Lab dock
        policy = self.summary.sizePolicy()
        policy.setHeightForWidth(False)
        self.summary.setSizePolicy(policy)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.summary)

    @staticmethod
    def _follow(plot, x_range) -> None:
        """`plot` takes the time range `x_range` (s) of the other plot."""
        if list(plot.viewRange()[0]) != list(x_range):
            plot.setXRange(*x_range, padding=0.0)

    def _align(self, *_args) -> None:
        """Both plots' axes one width: a time is one vertical line through both."""
        align_axis_widths((self.rate_plot, self.residual_plot))

    def set_damping(self, damping) -> None:
        """Viscous joint damping (n,) or scalar (N m s/rad, N s/m) of the next run, to
        split a run's applied forces into drive and damping; None: a free fall's are all
        damping, other runs' all drive (`core.sim.power.split_power`)."""
        self.stream.damping = damping

    def start_run(self, spec) -> None:
        """A new run (`gui.jobs.runs.RunSpec`): its model's friction is counted, its
        damping (a free fall's) split from the drives' power; the samples start over."""
        self.stream.model = spec.model
        self.stream.damping = spec.damping if spec.kind is RunKind.FREE_FALL else None
        self.reset()

    def reset(self, *_args) -> None:
        """Forget the samples (a new run or a new robot)."""
        self.stream.reset()
        self._span = None
        self._dirty = True
        self._refresh()

    def append(self, chunk: Trajectory) -> None:
        """Add a run's chunk (queued signal, GUI thread); drawn at the next refresh."""
        if len(chunk) == 0:
            return
        if len(self.stream) and chunk.n != self.stream_n:
            self.stream.reset()
            self._span = None
        self.stream_n = chunk.n
        t0 = float(chunk.t[0]) if self._span is None else self._span[0]
        self._span = (t0, float(chunk.t[-1]))  # the run's time span so far, s
        self.stream.append(chunk)
        self._dirty = True
        if not self._timer.isActive():
            self._timer.start()

    def balance(self) -> PowerBalance:
        """The power balance of the samples so far."""
        return self.stream.result()

    def _refresh(self) -> None:
        if not self._dirty:
            self._timer.stop()
            return
        if not self.isVisible() and len(self.stream):
            self._timer.stop()          # drawn when shown (showEvent)
            return
        self._dirty = False
        pb = self.stream.result()
        values = {"energy_rate": pb.energy_rate,
                  "power": (pb.joint_power + pb.damping_power + pb.pull_power
                            + pb.friction_power),
                  "damping_power": pb.damping_power, "joint_power": pb.joint_power,
                  "pull_power": pb.pull_power, "friction_power": pb.friction_power,
                  "residual": pb.residual}
        for key, y in values.items():
            ok = np.isfinite(y)
            self.curves[key].setData(pb.t[ok], y[ok])
        if self._span is not None:  # the run's own span, both ends labelled (t = 0, T):
            t0, t1 = self._span   # auto-ranging padded it to 2.06 s for a 2 s run
            # on the plot whose axis shows the times (the other follows, pixel by pixel)
            self.residual_plot.setXRange(t0, max(t1, t0 + 1e-6), padding=0.0)
        self._align()
        if len(pb):
            r = np.abs(pb.residual[np.isfinite(pb.residual)])
            big = np.abs(pb.energy_rate[np.isfinite(pb.energy_rate)])
            friction = (f"; friction dissipated {pb.friction_dissipated:.4g} J"
                        if np.any(pb.friction_power) else "")
            self.summary.setText(
                f"{len(pb)} samples to t = {pb.t[-1]:.3g} s: largest |dE/dt \u2212 P| = "
                f"{(r.max() if r.size else 0.0):.3g} W (largest |dE/dt| "
                f"{(big.max() if big.size else 0.0):.3g} W); energy drift E \u2212 E\u2080 "
                f"\u2212 \u222bP dt = {pb.drift[-1]:.3g} J{friction}. The residual is the "
                f"integration error (plus the O(dt\u2076) error of the finite differences for "
                f"dE/dt).")

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._dirty:
            self._timer.start()

    def shutdown(self) -> None:
        self._timer.stop()
