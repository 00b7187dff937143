"""The Identify panel: a model's parameters from the measured motion open in the
measured-motion view (`gui.panels.measured_panel`), optionally checked on a second log.

`core.sim.identification.identify` runs in a job (`gui.jobs.measured.identify_steps`);
the panel shows, per link, the nominal against the identified values (mass, mass
centre, inertia about it, friction, rotor inertia) in a Qt table model, the base
parameters with their standard deviations and words, the condition number, the fit's
and the validation's RMS per joint and the validation residual. "Save identified
model..." writes it (atomically, `core.io.model_files.save_model`); "Use identified
model" puts it into the document as one undo step. The core's refusals (too few
samples, unexcited parameters, the wrong sign convention) are shown by their message.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QHeaderView, QMessageBox,
                               QPushButton, QTableView, QTabWidget,
                               QVBoxLayout, QWidget)

from armdyn.core import ArmDynError, Motion
from armdyn.core.io.model_files import save_model

from ..jobs.job import Job
from ..jobs.measured import IdentifyOutcome, identify_steps
from ..jobs.motion_loading import load_motion_steps
from ..look.colors import joint_color
from ..look.progress import progress_and_cancel
from ..look.text import plain, plain_label, shown_name
from ..model.rows import RowsModel
from ..plots.curves import SampleCurve
from ..plots.plots_panel import LABEL_STYLE, adopt_menus, grid_axes, legend_beside, style_like_results
from .measured_panel import LOG_FILTER

__all__ = ["IdentifyPanel", "LinkValuesModel", "BaseParametersModel", "link_values"]

#: (label, unit, the value from a Link) per row of a link in the nominal-identified table.
QUANTITIES = (
    ("mass", "kg", lambda k: k.mass),
    ("mass centre x", "m", lambda k: k.com[0]),
    ("mass centre y", "m", lambda k: k.com[1]),
    ("mass centre z", "m", lambda k: k.com[2]),
    ("Ixx", "kg m^2", lambda k: k.inertia[0]),
    ("Iyy", "kg m^2", lambda k: k.inertia[1]),
    ("Izz", "kg m^2", lambda k: k.inertia[2]),
    ("Ixy", "kg m^2", lambda k: k.inertia[3]),
    ("Ixz", "kg m^2", lambda k: k.inertia[4]),
    ("Iyz", "kg m^2", lambda k: k.inertia[5]),
    ("friction, viscous", "N m s/rad", lambda k: k.friction_viscous),
    ("friction, Coulomb", "N m", lambda k: k.friction_coulomb),
    ("rotor inertia", "kg m^2", lambda k: k.rotor_inertia),
)


def link_values(nominal, identified) -> list[tuple[str, str, str, float, float]]:
    """The rows of the nominal-identified table: (link name, quantity, unit, nominal,
    identified) per link and QUANTITIES entry, in joint order."""
    rows = []
    for a, b in zip(nominal.links, identified.links):
        for label, unit, value in QUANTITIES:
            rows.append((a.name, label, unit, float(value(a)), float(value(b))))
    return rows


def _number(x: float) -> str:
    return f"{x:.5g}"


def _change(nominal: float, identified: float) -> str:
    """identified - nominal, "0" when it is round-off of their size."""
    d = identified - nominal
    return "0" if abs(d) <= 1e-9 * max(abs(nominal), abs(identified)) else _number(d)


class LinkValuesModel(RowsModel):
    """Nominal against identified values, one row per link and quantity:
    link, quantity (unit), nominal, identified, change (identified - nominal). The mass
    centre is in the link's frame, the inertia about the mass centre (as in the tables).
    Rows: (link name, quantity, unit, nominal, identified), as `link_values` gives them."""

    HEADERS = ("link", "quantity", "nominal", "identified", "change")

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        name, label, unit, nominal, identified = self.rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (shown_name(name), f"{label} ({unit})", _number(nominal),
                    _number(identified), _change(nominal, identified))[column]
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class BaseParametersModel(RowsModel):
    """The base parameters: value, standard deviation, relative standard deviation and
    the combination in words, numbered. Rows: (value, std, words)."""

    HEADERS = ("value", "std", "std / |value|", "combination")
    NUMBERED = True

    def set_parameters(self, values, std, words) -> None:
        """Show the base parameters `values` (p,), their standard deviations `std` (p,)
        and each one's combination of link parameters in `words` (p strings)."""
        self.set_rows(zip(np.asarray(values, dtype=float), np.asarray(std, dtype=float),
                          words))

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            value, std, words = self.rows[index.row()]
            value, std = float(value), float(std)
            relative = f"{std / abs(value):.2%}" if value else "\u2013"
            return (_number(value), _number(std), relative, words)[index.column()]
        return None


class IdentifyPanel(QWidget):
    """The Identify panel. ``measured``: the `MeasuredPanel` whose log it identifies
    from; ``document``: the window's `RobotDocument` (its model, and where "Use
    identified model" puts the result); ``files``: the window's `RobotFiles` (the save
    dialog).

    Signal ``identified(object)``: an `IdentifyOutcome` is shown.
    """

    identified = Signal(object)

    def __init__(self, measured, document, files=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("identifyPanel")
        self.measured = measured
        self.document = document
        self.files = files
        self.validate: Motion | None = None
        self.outcome: IdentifyOutcome | None = None
        self._nominal = None  # the model the outcome was identified from
        self._job: Job | None = None
        self._load_job: Job | None = None

        self.log_label = plain_label()
        self.log_label.setObjectName("identifyLog")
        self.open_button = QPushButton("Open measured motion\u2026")
        self.open_button.clicked.connect(lambda: self.measured.open_motion())
        self.validation_button = QPushButton("Validation log\u2026")
        self.validation_button.setToolTip("A second log with torques, not used in the fit: "
                                          "the identified model's residual along it")
        self.validation_button.clicked.connect(lambda: self.open_validation())
        self.validation_label = plain_label("No validation log.")
        self.identify_button = QPushButton("Identify")
        self.identify_button.setObjectName("identifyRun")
        self.identify_button.clicked.connect(self.run)
        self.progress, self.cancel_button = progress_and_cancel(self.cancel)
        self.save_button = QPushButton("Save identified model\u2026")
        self.save_button.clicked.connect(lambda: self.save())
        self.use_button = QPushButton("Use identified model")
        self.use_button.setToolTip("Put the identified values into the tables (Edit > Undo "
                                   "puts the nominal ones back)")
        self.use_button.clicked.connect(self.use)
        self.status = plain_label("Open a log with measured torques, then Identify.")
        self.status.setObjectName("identifyStatus")
        self.status.setWordWrap(True)

        self.links = LinkValuesModel(self)
        self.link_view = QTableView()
        self.link_view.setObjectName("identifyLinks")
        self.link_view.setModel(self.links)
        self.base = BaseParametersModel(self)
        self.base_view = QTableView()
        self.base_view.setObjectName("identifyBase")
        self.base_view.setModel(self.base)
        for view in (self.link_view, self.base_view):
            view.setAlternatingRowColors(True)
            view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
            header = view.horizontalHeader()
            header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            header.setStretchLastSection(True)
        self.link_view.verticalHeader().hide()

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.ci.layout.setContentsMargins(0, 0, 24, 0)
        self.residual_plot = pg.PlotItem(viewBox=pg.ViewBox(enableMenu=False),
                                         axisItems=grid_axes(time=True))
        self.graphics.addItem(self.residual_plot)
        self.residual_plot.showGrid(x=True, y=True, alpha=0.25)
        self.residual_plot.hideAxis("right")
        style_like_results(self.residual_plot, "validation residual: measured \u2212 identified",
                           left="N m, N")
        self.residual_plot.getAxis("bottom").setLabel("time (s)", **LABEL_STYLE)
        adopt_menus(self.residual_plot, self)
        self.residual_plot.hideButtons()
        legend_beside(self.residual_plot)
        self.residual_curves: list[SampleCurve] = []

        top = QHBoxLayout()
        for w in (self.open_button, self.log_label):
            top.addWidget(w)
        top.addStretch(1)
        for w in (self.identify_button, self.progress, self.cancel_button):
            top.addWidget(w)
        second = QHBoxLayout()
        second.addWidget(self.validation_button)
        second.addWidget(self.validation_label, 1)
        actions = QHBoxLayout()
        actions.addWidget(self.status, 1)
        actions.addWidget(self.save_button)
        actions.addWidget(self.use_button)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("identifyTabs")
        self.tabs.addTab(self.link_view, "Nominal and identified, per link")
        self.tabs.addTab(self.base_view, "Base parameters")
        self.tabs.addTab(self.graphics, "Validation residual")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(second)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(actions)

        measured.motion_loaded.connect(self._on_motion)
        self._on_motion(measured.motion)
        self._show_buttons()

    # ----- inputs ---------------------------------------------------------------------
    def _on_motion(self, motion: Motion | None) -> None:
        if motion is None:
            self.log_label.setText("No log open.")
        else:
            torques = "" if motion.tau is not None else " (no torques)"
            self.log_label.setText(f"{shown_name(Path(motion.source).name or 'log')}, {len(motion)} "
                                   f"samples{torques}")
        self._show_buttons()

    def open_validation(self, path: str | Path | None = None) -> bool:
        """Load a validation log (ask for one when `path` is None) in a job."""
        if path is None:
            name, _ = QFileDialog.getOpenFileName(self, "Open Validation Log", "", LOG_FILTER)
            if not name:
                return False
            path = name
        if self._load_job is not None:
            self._load_job.cancel()
        job = Job(load_motion_steps, path, self.document.robot, name="load validation log")
        job.finished.connect(self.set_validation)
        job.failed.connect(lambda message, _err: self.status.setText(message))
        self._load_job = job
        self.status.setText(f"Reading {Path(path).name}\u2026")
        job.start()
        return True

    def set_validation(self, motion: Motion | None) -> None:
        """The validation log (None: none)."""
        self.validate = motion
        self.validation_label.setText("No validation log." if motion is None else
                                      f"validation: {shown_name(Path(motion.source).name or 'log')}")
        if motion is not None:
            self.status.setText("Validation log read: Identify uses it.")

    # ----- the job --------------------------------------------------------------------
    def run(self) -> bool:
        """Identify the document's model from the open log in a job; False when there
        is nothing to identify from (said in the status line)."""
        motion = self.measured.motion
        if motion is None:
            self.status.setText("Open a log with measured torques first.")
            return False
        if not self.document.is_valid:
            self.status.setText(f"The tables have an error: {self.document.first_error}")
            return False
        if self._job is not None:
            self._job.cancel()
        self._nominal = self.document.robot
        job = Job(identify_steps, self._nominal, motion, self.validate,
                  progress_of=lambda fraction: fraction, name="identify")
        job.progress.connect(lambda f: self.progress.setValue(round(100 * f)))
        job.finished.connect(self._on_identified)
        job.failed.connect(lambda message, _err: self.status.setText(message))
        job.done.connect(lambda: self._busy(False))
        self._job = job
        self._busy(True)
        self.status.setText("Identifying\u2026")
        job.start()
        return True

    def cancel(self) -> None:
        """Stop identifying (the values shown before stay)."""
        for job in (self._job, self._load_job):
            if job is not None:
                job.cancel()
        self._busy(False)
        self.status.setText("Cancelled.")

    def shutdown(self) -> None:
        for job in (self._job, self._load_job):
            if job is not None:
                job.cancel()

    def _on_identified(self, outcome: IdentifyOutcome) -> None:
        self.outcome = outcome
        found = outcome.found
        self.links.set_rows(link_values(self._nominal, found.model))
        self.base.set_parameters(found.base_parameters, found.std, found.combinations)
        text = (f"{len(found.base_parameters)} base parameters, condition number "
                f"{found.condition_number:.4g}. Fit RMS per joint: "
                + ", ".join(_number(x) for x in found.rms))
        if found.validation_rms is not None:
            text += "; validation RMS: " + ", ".join(_number(x) for x in found.validation_rms)
        if found.unidentifiable:
            text += f". Not identifiable from any motion: {', '.join(found.unidentifiable)}"
        self.status.setText(text + ".")
        self._draw_residual(outcome)
        self._show_buttons()
        self.identified.emit(outcome)

    def _draw_residual(self, outcome: IdentifyOutcome) -> None:
        for curve in self.residual_curves:
            self.residual_plot.removeItem(curve)
            self.residual_plot.legend.removeItem(curve)
        self.residual_curves = []
        if outcome.residual is None:
            self.residual_plot.setTitle("validation residual: open a validation log",
                                        color="#000")
            return
        names = self._nominal.model.joint_names
        for j in range(outcome.residual.shape[1]):
            curve = SampleCurve(pg.mkPen(joint_color(j), width=1))
            self.residual_plot.addItem(curve)  # in its view before it is given samples
            curve.set_samples(outcome.validate.t, np.ascontiguousarray(outcome.residual[:, j]))
            self.residual_plot.legend.addItem(curve, shown_name(names[j]))
            self.residual_curves.append(curve)
        self.residual_plot.setTitle("validation residual: measured \u2212 identified",
                                    color="#000")
        self.residual_plot.enableAutoRange(axis=pg.ViewBox.YAxis)
        t = outcome.validate.t
        self.residual_plot.setXRange(float(t[0]), float(t[-1]), padding=0.0)

    # ----- the result -------------------------------------------------------------------
    def save(self, path: str | Path | None = None) -> bool:
        """Write the identified model to `path` (a dialog when None), atomically."""
        if self.outcome is None:
            return False
        if path is None:
            path = self._ask_save_path()
            if path is None:
                return False
        try:
            warnings = save_model(self.outcome.found.model, Path(path))
        except (ArmDynError, OSError) as err:
            box = plain(QMessageBox(QMessageBox.Icon.Critical, "Cannot save the model",
                                    str(err), parent=self))
            box.exec()
            return False
        note = f" ({'; '.join(warnings)})" if warnings else ""
        self.status.setText(f"Saved the identified model to {path}{note}.")
        return True

    def _ask_save_path(self) -> Path | None:
        suffix = Path(self.document.path).suffix if self.document.path else ".toml"
        suggested = (Path(self.document.path).stem if self.document.path else "model") \
            + "_identified" + (suffix if suffix in (".toml", ".urdf") else ".toml")
        filters = "Model files (*.toml);;URDF (*.urdf)"
        if self.files is not None:
            return self.files.ask_save_path("Save Identified Model", filters, ".toml",
                                            suggested)
        name, _ = QFileDialog.getSaveFileName(self, "Save Identified Model", suggested,
                                              filters)
        return Path(name) if name else None

    def use(self) -> bool:
        """Put the identified model into the document (one undo step)."""
        if self.outcome is None:
            return False
        self.document.replace_robot(self.outcome.found.model, "Use Identified Model")
        self.status.setText("The tables now hold the identified model (Edit > Undo puts "
                            "the nominal one back).")
        return True

    def _busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.progress.setValue(0)
        self._show_buttons(busy)

    def _show_buttons(self, busy: bool = False) -> None:
        has = self.outcome is not None
        self.save_button.setEnabled(has and not busy)
        self.use_button.setEnabled(has and not busy)
        self.identify_button.setEnabled(not busy and self.measured.motion is not None)
