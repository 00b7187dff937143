"""Compare two runs on one time axis: "what changes if the forearm is twice as heavy"
(issue #10).

Run A is the window's model; run B is the same model with a list of changes (a link's
mass, a, b, mass centre, inertia, joint damping: times a factor or a new value) or
another model file. Both take the same run: inverse dynamics along the cycloid from
the window's pose to the Run panel's target pose (`RunPanel.target_pose`), or a free
fall from the window's pose (`RunPanel.fall_method`), over the same duration.

The Compare dock (View > Compare Runs, Ctrl+K; tabbed with Results, Inspect, Lab):

- the change list ("forearm: mass x 2") or a file; a change the core refuses
  (`Robot(...)`, `Mechanism(...)` validate) is not added and its message is shown
- Compare / Stop, progress: A then B run in one `GeneratorWorker` (cancel at every
  chunk); the runs are core's own generators (`core.sim.trajectory.inverse_dynamics_chunks`,
  `core.sim.simulation.simulate_chunks`, `core.sim.penalty.penalty_simulate_chunks`)
- one plot of a quantity (joint angles, rates, torques / forces, energy) for all joints
  or one, A solid and B dashed in the joints' colours (`gui.look.colors`), and below it the
  difference B - A on the same (linked) time axis
- a playback bar (`gui.plots.playback.PlaybackBar` over run A): the 3D view shows A's arm,
  and B's arm as a translucent ghost at the same time (`CompareGhost`); the ghost
  also follows the window's own playback; it is removed when the dock is hidden
- CSV export of both runs side by side (`core.io.atomic.write_atomically`)

Nothing here computes dynamics: the changed model is built by core's constructors
(`dataclasses.replace` on the frozen links), the runs are core's.
"""
from __future__ import annotations

import io
import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from html import escape
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import (
    QButtonGroup, QComboBox, QDoubleSpinBox, QFormLayout, QGridLayout,
    QHBoxLayout, QLabel, QLineEdit, QListWidget, QProgressBar, QPushButton, QRadioButton,
    QSplitter, QToolButton, QVBoxLayout, QWidget,
)

from armdyn.core import ArmDynError, Link, Mechanism, Robot, forward_kinematics
from armdyn.core.io.atomic import write_atomically
from armdyn.core.sim.penalty import penalty_simulate_chunks
from armdyn.core.io.results_io import trajectory_header
from armdyn.core.sim.simulation import simulate_chunks
from armdyn.core.sim.trajectory import Trajectory, inverse_dynamics_chunks

from ..scene.arm_scene import MergedParts, build_parts, scene_frames
from ..look.colors import joint_color
from .lazy_dock import LazyDock
from ..model.files import load_model
from ..plots.playback import PlaybackBar
from ..plots.plots_panel import (CURSOR_COLOR, DASHED_WIDTH, ENERGY_STYLE, GLYPH, LINE_WIDTH, SPECS, PlotSpec,
                    add_right_view, adopt_menus, grid_axes, lay_axes_under)
from .run_panel import FallMethod
from ..look.scroll import scroll_area
from ..jobs.worker import GeneratorWorker

__all__ = ["ChangeField", "ChangeOp", "Change", "RunKind", "RunSpec", "apply_changes",
           "describe_changes", "damping_of", "comparison_chunks", "comparison_csv_text",
           "CompareGhost", "ComparePanel", "install_compare", "GHOST_COLOR", "GHOST_OPACITY"]

log = logging.getLogger(__name__)

GHOST_COLOR = "#7B3FBF"
GHOST_OPACITY = 0.35
#: How long `ComparePanel.shutdown` waits for the worker thread, s.
JOIN_TIMEOUT_S = 5.0
#: Output sample step when the window has no run to copy it from, s.
DEFAULT_DT = 0.01
#: Inverse dynamics: samples per chunk; free fall: wall time per chunk (prompt cancel).
ID_CHUNK_SAMPLES = 50
SIM_CHUNK_S = 1.0
SIM_CHUNK_WALL_S = 0.03
#: The quantities offered (`gui.plots.plots_panel.SPECS` by field).
QUANTITIES = ("q", "qd", "tau", "energy")
ERROR_STYLE = "color: #B00020;"
#: Default width of the definition column (the plots take the rest), px.
SIDE_WIDTH = 300
#: B's dashed curves are LINE_WIDTH wide up to this many samples, then DASHED_WIDTH.
DASHED_WIDE_MAX = 20_000


# ======================================================================================
# Run B's definition (Qt-free)
# ======================================================================================
class ChangeField(Enum):
    """What a change alters. Value: (label, unit, takes a new value as well as a factor)."""

    MASS = ("mass", "kg", True)
    MASS_INERTIA = ("mass and inertia", "kg", True)  # the same shape, denser: m and I scale
    A = ("a", "m", True)
    B = ("b", "m", True)
    COM = ("mass centre", "", False)  # the vector scaled
    INERTIA = ("inertia", "", False)  # all six components scaled
    DAMPING = ("joint damping c", "N m s/rad", True)  # a free fall's, at this joint

    @property
    def label(self) -> str:
        return self.value[0]

    @property
    def unit(self) -> str:
        return self.value[1]

    @property
    def settable(self) -> bool:
        return self.value[2]


class ChangeOp(Enum):
    SCALE = "\u00d7"
    SET = "="


@dataclass(frozen=True)
class Change:
    """One change of run B: joint / link `link` (0-based), `field`, times `value`
    (SCALE) or set to `value` (SET, in the field's SI unit)."""

    link: int
    field: ChangeField
    op: ChangeOp
    value: float

    def text(self, names: Sequence[str]) -> str:
        """"forearm: mass x 2" (names: the model's link names)."""
        name = names[self.link] if 0 <= self.link < len(names) else f"link {self.link + 1}"
        unit = f" {self.field.unit}" if self.op is ChangeOp.SET and self.field.unit else ""
        return f"{name}: {self.field.label} {self.op.value} {self.value:g}{unit}"


def _new_value(old: float, change: Change) -> float:
    return old * change.value if change.op is ChangeOp.SCALE else change.value


def _changed_link(link: Link, change: Change) -> Link:
    """`link` with `change` (DAMPING is a run setting: the link stays)."""
    f, k = change.field, change.value
    if not f.settable and change.op is not ChangeOp.SCALE:
        raise ValueError(f"the {f.label} takes a factor, not a value")
    if f is ChangeField.MASS:
        return replace(link, mass=_new_value(link.mass, change))
    if f is ChangeField.MASS_INERTIA:
        mass = _new_value(link.mass, change)
        ratio = mass / link.mass  # a valid link's mass is > 0
        return replace(link, mass=mass, inertia=tuple(ratio * v for v in link.inertia))
    if f is ChangeField.A:
        return replace(link, a=_new_value(link.a, change))
    if f is ChangeField.B:
        return replace(link, b=_new_value(link.b, change))
    if f is ChangeField.COM:
        return replace(link, com=tuple(k * c for c in link.com))
    if f is ChangeField.INERTIA:
        return replace(link, inertia=tuple(k * v for v in link.inertia))
    return link


def apply_changes(model: Robot | Mechanism, changes: Sequence[Change]) -> Robot | Mechanism:
    """The model with `changes` applied to its links, built by core's constructors (which
    validate: `RobotError` / `MechanismError` for a value they refuse, e.g. a mass <= 0).
    The name says what changed. A mechanism's loops are closed again."""
    if not changes:
        return model
    links = list(model.links)
    for change in changes:
        if not 0 <= change.link < len(links):
            raise ValueError(f"link {change.link + 1} does not exist (the model has "
                             f"{len(links)})")
        links[change.link] = _changed_link(links[change.link], change)
    name = f"{model.name}, {describe_changes(changes, model.link_names)}"
    if isinstance(model, Mechanism):
        chains, k = [], 0
        for chain in model.chains:
            chains.append(replace(chain, links=tuple(links[k:k + len(chain.links)])))
            k += len(chain.links)
        return replace(model, name=name, chains=tuple(chains), warnings=())
    return replace(model, name=name, links=tuple(links), warnings=())


def describe_changes(changes: Sequence[Change], names: Sequence[str]) -> str:
    """"forearm: mass x 2; link 2: a = 0.4 m"."""
    return "; ".join(c.text(names) for c in changes)


def damping_of(changes: Sequence[Change], n: int, c: float) -> np.ndarray:
    """(n,) joint damping of run B: `c` (N m s/rad, N s/m) at every joint, then the
    DAMPING changes."""
    out = np.full(n, float(c))
    for change in changes:
        if change.field is ChangeField.DAMPING and 0 <= change.link < n:
            out[change.link] = _new_value(out[change.link], change)
    return out


class RunKind(Enum):
    INVERSE = "Inverse dynamics"
    FREE_FALL = "Free fall"


@dataclass(frozen=True)
class RunSpec:
    """One run of a comparison.

    model    : the robot or mechanism
    kind     : inverse dynamics along the cycloid q0 -> target, or a free fall from q0
    q0       : (n,) start pose, rad / m (a free fall starts at rest)
    target   : (n,) inverse dynamics' target pose, rad / m (unused by a free fall)
    duration : s;  dt: output sample step, s
    damping  : free fall: scalar or (n,) viscous joint damping, N m s/rad / N s/m
    method   : free fall of a mechanism with loops: multipliers or penalty
    """

    model: Robot | Mechanism
    kind: RunKind
    q0: np.ndarray
    target: np.ndarray
    duration: float
    dt: float = DEFAULT_DT
    damping: float | np.ndarray = 0.0
    method: FallMethod = FallMethod.MULTIPLIERS

    def chunks(self) -> Iterator[Trajectory]:
        """Core's generator of this run (returns the whole Trajectory)."""
        n = self.model.n
        if self.kind is RunKind.INVERSE:
            return inverse_dynamics_chunks(self.model, self.q0, self.target, self.duration,
                                           dt_out=self.dt, chunk_samples=ID_CHUNK_SAMPLES)
        common = dict(q0=np.array(self.q0, dtype=float), qd0=np.zeros(n), damping=self.damping,
                      dt_out=self.dt, chunk_duration=SIM_CHUNK_S,
                      max_wall_per_chunk=SIM_CHUNK_WALL_S)
        if self.method is FallMethod.PENALTY and self.model.loops:
            return penalty_simulate_chunks(self.model, self.duration, **common)
        return simulate_chunks(self.model, self.duration, **common)


def comparison_chunks(a: RunSpec, b: RunSpec) -> Iterator[tuple[str, Trajectory]]:
    """Run A, then B. Yields ("A" or "B", chunk): first an empty chunk when a run starts,
    then its chunks of new samples; returns (whole A, whole B)."""
    results = []
    for side, spec in (("A", a), ("B", b)):
        gen = spec.chunks()
        yield side, Trajectory.empty(spec.model.n, "start")
        try:
            while True:
                try:
                    part = next(gen)
                except StopIteration as stop:
                    results.append(stop.value)
                    break
                yield side, part
        finally:
            gen.close()
    return tuple(results)


def comparison_csv_text(a: Trajectory, model_a, b: Trajectory, model_b) -> str:
    """Both runs side by side: '#' comments, a header row ("A: q1 waist [rad]", ...,
    "B: ..."), then one row per common sample time (the first min(len) samples; both
    runs sample the same grid). Columns of each run as `core.io.results_io` writes them."""
    rows = min(len(a), len(b))
    out = io.StringIO()
    out.write(f"# ArmDyn comparison ({a.kind}): A = {model_a.name!r}, B = {model_b.name!r}; "
              f"{rows} samples\n")
    out.write("# SI units (rad for revolute joints, m for prismatic); B - A is not stored\n")
    header = ["t [s]"]
    table = [a.t[:rows]]
    for side, traj, model in (("A", a, model_a), ("B", b, model_b)):
        header += [f"{side}: {h}" for h in trajectory_header(traj, model)[1:]]
        columns = [traj.q, traj.qd, traj.qdd, traj.tau, traj.energy]
        if model.loops:
            columns += [traj.cut_forces, traj.loop_residual[:, None]]
        table += [np.asarray(c)[:rows].reshape(rows, -1) for c in columns]
    data = np.column_stack(table)
    assert data.shape[1] == len(header), "columns and header agree"
    out.write(",".join(h.replace(",", ";") for h in header) + "\n")
    np.savetxt(out, data, delimiter=",", fmt="%.10g")
    return out.getvalue()


# ======================================================================================
# The ghost in the 3D view
# ======================================================================================
class CompareGhost:
    """Run B's arm as one translucent mesh in an `ArmView` (`view.plotter`,
    `view.request_render`): the arm layer's parts of `gui.scene.arm_scene.build_parts`,
    merged (`MergedParts`) and moved point by point. ``actor`` is None while removed."""

    def __init__(self, view) -> None:
        self.view = view
        self.actor = None
        self._model = None
        self._merged: MergedParts | None = None

    def show(self, model: Robot | Mechanism, q: np.ndarray) -> None:
        """Draw `model` at q (n,), rad / m (built once per model)."""
        if model is not self._model or self.actor is None:
            self.remove()
            parts = [p for p in build_parts(model) if p.layer == "arm" and p.gap is None]
            self._merged = MergedParts(parts)
            self._model = model
            self.actor = self.view.plotter.add_mesh(
                self._merged.mesh, color=GHOST_COLOR, opacity=GHOST_OPACITY, scalars=None,
                rgb=False, specular=0.2, ambient=0.25, render=False, reset_camera=False,
                pickable=False)
        self.place(q)

    def place(self, q: np.ndarray) -> None:
        """Move the ghost to q (n,), rad / m."""
        if self.actor is None:
            return
        q = np.asarray(q, dtype=float)
        self._merged.place(scene_frames(forward_kinematics(self._model, q)), q)
        self.view.request_render()

    def remove(self) -> None:
        if self.actor is not None:
            self.view.plotter.remove_actor(self.actor, render=False)
            self.actor = None
            self.view.request_render()
        self._merged = None
        self._model = None


# ======================================================================================
# The panel
# ======================================================================================
def _spec(field: str) -> PlotSpec:
    return next(s for s in SPECS if s.field == field)


def _unit_of(label: str) -> str:
    """The "(unit)" of an axis label such as "angle (°)"; "" for a label of two kinds
    ("angle (°); displacement (m)") or none."""
    return label[label.find("("):] if "(" in label and ";" not in label else ""


def _display_scale(spec: PlotSpec, model) -> np.ndarray:
    """(n,) factor from SI to the shown units: degrees for revolute joints where the
    plot shows angles."""
    return np.where(model.is_revolute, 180.0 / math.pi if spec.to_deg else 1.0, 1.0)


class ComparePanel(QWidget):
    """Run B's definition, the comparison's run, its plots, playback and ghost.

    window: the `MainWindow` (its `document.robot`, `pose`, `run_panel`, `plots`,
    `playback`, `view3d`, `files`, `statusBar()`).

    Signals: ``finished()`` after a comparison ends (complete or not).
    """

    finished = Signal()

    def __init__(self, window, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("comparePanel")
        self.main_window = window
        self.ghost = CompareGhost(window.view3d)
        self._changes: list[Change] = []
        self._file_model: Robot | Mechanism | None = None
        self._file_path: Path | None = None
        self.model_a: Robot | Mechanism | None = None
        self.model_b: Robot | Mechanism | None = None
        #: (A, B) of the last comparison (partial if stopped or failed), or None
        self.result: tuple[Trajectory, Trajectory] | None = None
        self._worker: GeneratorWorker | None = None
        self._parts: dict[str, list[Trajectory]] = {"A": [], "B": []}
        self._side = "A"
        self._error: str | None = None
        self._active = False
        self._playing_compare = False
        self._build()
        self.set_robot(window.document.robot)

    # ----- construction ---------------------------------------------------------------
    def _build(self) -> None:
        # --- left: B's definition, the run's settings, Compare / Stop -----------------
        self._with_changes = QRadioButton("This model, changed:")
        self._with_file = QRadioButton("Another file:")
        self._with_changes.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self._with_changes)
        group.addButton(self._with_file)
        self._with_changes.toggled.connect(self._update_enabled)

        self._link = QComboBox()
        self._link.setToolTip("The link (and its joint) to change")
        self._field = QComboBox()
        for f in ChangeField:
            self._field.addItem(f.label, f)
        self._field.currentIndexChanged.connect(self._on_field)
        self._op = QComboBox()
        for op in ChangeOp:
            self._op.addItem(op.value, op)
        self._op.setToolTip("\u00d7: times a factor;  =: a new value (SI units)")
        self._value = QDoubleSpinBox()
        self._value.setRange(-1e6, 1e6)
        self._value.setDecimals(4)
        self._value.setValue(2.0)
        self._value.setSingleStep(0.5)
        self._add = QPushButton("Add")
        self._add.setToolTip("Add this change to run B (the core checks it)")
        self._add.clicked.connect(self._on_add)
        edit_row = QGridLayout()
        edit_row.setContentsMargins(0, 0, 0, 0)
        edit_row.addWidget(self._link, 0, 0, 1, 2)
        edit_row.addWidget(self._field, 0, 2, 1, 2)
        edit_row.addWidget(self._op, 1, 0)
        edit_row.addWidget(self._value, 1, 1, 1, 2)
        edit_row.addWidget(self._add, 1, 3)
        self._list = QListWidget()
        self._list.setMinimumHeight(44)
        self._list.setMaximumHeight(72)
        self._remove = QToolButton()
        self._remove.setText("Remove")
        self._remove.clicked.connect(self._on_remove)
        self._clear = QToolButton()
        self._clear.setText("Clear")
        self._clear.clicked.connect(lambda: self.set_changes([]))

        self._path = QLineEdit()
        self._path.setReadOnly(True)
        self._path.setPlaceholderText("a robot or mechanism file")
        self._browse = QToolButton()
        self._browse.setText("Browse\u2026")
        self._browse.clicked.connect(self._on_browse)

        self._kind = QComboBox()
        for kind in RunKind:
            self._kind.addItem(kind.value, kind)
        self._kind.setToolTip("Inverse dynamics: from the window's pose to the Run panel's "
                              "target pose. Free fall: released at rest from the window's "
                              "pose (the Run panel's method for loops).")
        self._duration = QDoubleSpinBox()
        self._duration.setRange(0.05, 600.0)
        self._duration.setValue(2.0)
        self._duration.setSuffix(" s")
        self._duration.setToolTip("Initialised from the window's last run")
        self._damping = QDoubleSpinBox()
        self._damping.setRange(0.0, 1e4)
        self._damping.setDecimals(3)
        self._damping.setToolTip("Free fall: joint damping c of both runs (N m s/rad, N s/m "
                                 "for prismatic joints); B's changes may alter it per joint")

        self._run = QPushButton("Compare")
        self._run.setToolTip("Run A (this model) and B with the same settings")
        self._run.clicked.connect(self.compare)
        self._stop = QPushButton("Stop")
        self._stop.clicked.connect(self.cancel)
        self._export = QPushButton("CSV\u2026")
        self._export.setToolTip("Save both runs side by side as CSV")
        self._export.clicked.connect(self.ask_export_csv)
        self._progress = QProgressBar()
        self._progress.setRange(0, 1000)
        self._progress.setFormat("%p %")
        self._status = QLabel("Define run B, then Compare.")
        self._status.setWordWrap(True)
        self._status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        narrow = QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        for box in (self._link, self._field, self._op, self._kind):
            # narrow column: the combo boxes do not ask for their longest item's width
            box.setSizeAdjustPolicy(narrow)
            box.setMinimumContentsLength(3 if box is self._op else 8)
        left = QWidget()
        left.setObjectName("compareDefinition")
        col = QVBoxLayout(left)
        col.setContentsMargins(6, 4, 6, 4)
        col.setSpacing(4)
        col.addWidget(QLabel("<b>Run B</b> = run A's model\u2026"))
        col.addWidget(self._with_changes)
        col.addLayout(edit_row)
        col.addWidget(self._list)
        list_buttons = QHBoxLayout()
        list_buttons.addStretch(1)
        list_buttons.addWidget(self._remove)
        list_buttons.addWidget(self._clear)
        col.addLayout(list_buttons)
        file_row = QHBoxLayout()
        file_row.addWidget(self._with_file)
        file_row.addWidget(self._path, 1)
        file_row.addWidget(self._browse)
        col.addLayout(file_row)
        form = QFormLayout()
        form.setContentsMargins(0, 4, 0, 0)
        form.addRow("Run:", self._kind)
        form.addRow("Duration:", self._duration)
        self._damping_label = QLabel("Damping c:")
        form.addRow(self._damping_label, self._damping)
        col.addLayout(form)
        col.addStretch(1)
        scroll = scroll_area(left, name="compareDefinitionScroll", vertical_only=True,
                             fit_width=True)
        buttons = QHBoxLayout()
        for b in (self._run, self._stop, self._export):
            buttons.addWidget(b)
        side = QWidget()
        side_col = QVBoxLayout(side)
        side_col.setContentsMargins(0, 0, 0, 4)
        side_col.setSpacing(3)
        side_col.addWidget(scroll, 1)
        for layout in (buttons,):
            layout.setContentsMargins(6, 0, 6, 0)
            side_col.addLayout(layout)
        for w in (self._progress, self._status):
            side_col.addWidget(w)
        side_col.setContentsMargins(0, 0, 0, 2)
        self._status.setContentsMargins(6, 0, 6, 0)

        # --- right: choosers, legend, the plots, playback ------------------------------
        self._quantity = QComboBox()
        for field in QUANTITIES:
            spec = _spec(field)
            self._quantity.addItem(spec.title, field)
        self._quantity.setCurrentIndex(QUANTITIES.index("tau"))
        self._quantity.currentIndexChanged.connect(self._on_quantity)
        self._joint = QComboBox()
        self._joint.setMinimumContentsLength(14)
        self._joint.currentIndexChanged.connect(self._redraw)
        self._legend = QLabel()
        self._legend.setTextFormat(Qt.TextFormat.RichText)
        self._legend.setWordWrap(True)
        choose = QHBoxLayout()
        choose.setContentsMargins(6, 2, 6, 0)
        choose.addWidget(QLabel("Show:"))
        choose.addWidget(self._quantity)
        choose.addWidget(self._joint)
        choose.addStretch(1)
        self._legend.setContentsMargins(6, 0, 6, 0)

        self._graphics = pg.GraphicsLayoutWidget()
        self._graphics.setBackground("w")
        self.plot = pg.PlotItem(viewBox=pg.ViewBox(enableMenu=False), axisItems=grid_axes())
        self.diff_plot = pg.PlotItem(viewBox=pg.ViewBox(enableMenu=False),
                                     axisItems=grid_axes())
        self._graphics.addItem(self.plot, row=0, col=0)
        self._graphics.addItem(self.diff_plot, row=1, col=0)
        self._graphics.ci.layout.setRowStretchFactor(0, 3)
        self._graphics.ci.layout.setRowStretchFactor(1, 2)
        self._right: dict[pg.PlotItem, pg.ViewBox] = {}  # each plot's prismatic view
        for item in (self.plot, self.diff_plot):
            item.showGrid(x=True, y=True, alpha=0.25)
            item.setMenuEnabled(False)
            adopt_menus(item, self)
            item.hideButtons()
            item.getAxis("left").setWidth(66)
            # all joints of an arm with both kinds: prismatic ones (m, N) on the right
            self._right[item] = add_right_view(item)
            for name in ("left", "bottom", "right"):
                axis = item.getAxis(name)
                axis.enableAutoSIPrefix(False)
                axis.setPen(pg.mkPen("#000", width=1))
                axis.setTextPen("#000")
            item.getAxis("right").setWidth(66)
            item.hideAxis("right")
            lay_axes_under(item, (item.vb, self._right[item]))
            item.vb.disableAutoRange(axis=pg.ViewBox.XAxis)
        # one time axis: the difference plot follows the upper plot's time range (one way;
        # neither auto-ranges in time, see gui.plots.plots_panel on views that correct each other)
        self.diff_plot.setXLink(self.plot)
        self.plot.getAxis("bottom").setStyle(showValues=False)
        self.diff_plot.setLabel("bottom", "time (s)")
        self._zero = pg.InfiniteLine(pos=0.0, angle=0, movable=False,
                                     pen=pg.mkPen("#888", width=1))
        self.diff_plot.addItem(self._zero, ignoreBounds=True)
        self._cursors = []
        for item in (self.plot, self.diff_plot):
            line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(CURSOR_COLOR, width=2))
            line.setVisible(False)
            item.addItem(line, ignoreBounds=True)
            self._cursors.append(line)
        self._curves_a: list[pg.PlotDataItem] = []
        self._curves_b: list[pg.PlotDataItem] = []
        self._curves_d: list[pg.PlotDataItem] = []

        self.playback = PlaybackBar()
        self.playback.setToolTip("Replay the comparison: A in the 3D view, B as a ghost")
        self.playback.frame.connect(self._on_frame)

        right = QWidget()
        rcol = QVBoxLayout(right)
        rcol.setContentsMargins(0, 0, 0, 0)
        rcol.setSpacing(2)
        rcol.addLayout(choose)
        rcol.addWidget(self._legend)
        rcol.addWidget(self._graphics, 1)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(side)
        split.addWidget(right)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        self._split = split
        split.setSizes([SIDE_WIDTH, 10 * SIDE_WIDTH])
        layout = QVBoxLayout(self)  # the playback bar spans the panel: a long slider
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.playback)
        layout.addWidget(split, 1)
        self._kind.currentIndexChanged.connect(self._on_kind)
        self._on_field()
        self._on_kind()
        self._update_enabled()

    # ----- model and definition -------------------------------------------------------
    @property
    def model(self) -> Robot | Mechanism:
        """Run A's model: the window's last valid robot or mechanism."""
        return self.main_window.document.robot

    def set_robot(self, robot: Robot | Mechanism) -> None:
        """A new model in the window: the comparison is dropped (its runs were of the
        old one); changes that still name existing links stay."""
        self.cancel()
        old = [self._link.itemText(k) for k in range(self._link.count())]
        self._link.clear()
        for i, name in enumerate(robot.link_names):
            self._link.addItem(f"{i + 1} {name}", i)
        self._link.setCurrentIndex(min(max(self._link.count() - 1, 0), 2))
        kept = [c for c in self._changes if c.link < robot.n]
        if old != [self._link.itemText(k) for k in range(self._link.count())]:
            kept = []
        self._changes = kept
        self._show_changes()
        self.clear_result()

    def changes(self) -> list[Change]:
        return list(self._changes)

    def set_changes(self, changes: Sequence[Change]) -> bool:
        """Make `changes` run B's list if the core accepts the model they give; else the
        list stays, the message is shown and False is returned."""
        try:
            apply_changes(self.model, changes)
        except (ArmDynError, ValueError) as err:
            self._show_error(f"B refused: {err}")
            return False
        self._changes = list(changes)
        self._show_changes()
        self._with_changes.setChecked(True)
        self._set_status("Run B: " + (describe_changes(self._changes, self.model.link_names)
                                      or "no change (the same model)") + ".")
        return True

    def add_change(self, change: Change) -> bool:
        """Append `change` (see `set_changes`)."""
        return self.set_changes(self._changes + [change])

    def set_file(self, path: str | Path) -> bool:
        """Run B from a robot or mechanism file (read by `gui.model.files.load_model`)."""
        try:
            model = load_model(path)
        except (ArmDynError, OSError, ValueError) as err:
            self._show_error(f"Cannot read {path}: {err}")
            return False
        self._file_model, self._file_path = model, Path(path)
        self._path.setText(Path(path).name)
        self._path.setToolTip(str(path))
        self._with_file.setChecked(True)
        self._set_status(f"Run B: {model.name} ({model.n} joints).")
        return True

    def build_b(self) -> Robot | Mechanism:
        """Run B's model (raises the core's error for a refused change)."""
        if self._with_file.isChecked():
            if self._file_model is None:
                raise ValueError("choose run B's file first")
            return self._file_model
        return apply_changes(self.model, self._changes)

    def _show_changes(self) -> None:
        self._list.clear()
        names = self.model.link_names
        for change in self._changes:
            self._list.addItem(change.text(names))
        self._update_enabled()

    @Slot()
    def _on_field(self) -> None:
        field = self._field.currentData()
        self._op.setEnabled(field.settable)
        if not field.settable:
            self._op.setCurrentIndex(list(ChangeOp).index(ChangeOp.SCALE))
        self._value.setToolTip(f"factor, or new value in {field.unit}" if field.unit
                               else "factor")

    @Slot()
    def _on_add(self) -> None:
        self.add_change(Change(int(self._link.currentData()), self._field.currentData(),
                               self._op.currentData(), float(self._value.value())))

    @Slot()
    def _on_remove(self) -> None:
        rows = sorted({i.row() for i in self._list.selectedIndexes()}) or \
            ([len(self._changes) - 1] if self._changes else [])
        self.set_changes([c for k, c in enumerate(self._changes) if k not in rows])

    @Slot()
    def _on_browse(self) -> None:
        path = self.main_window.files.ask_open_path()
        if path is not None:
            self.set_file(path)

    # ----- the run's settings ---------------------------------------------------------
    @Slot()
    def _on_kind(self) -> None:
        fall = self.kind() is RunKind.FREE_FALL
        self._damping.setVisible(fall)
        self._damping_label.setVisible(fall)
        # what tells most: the torques of an inverse-dynamics run, a free fall's motion
        self.set_quantity("q" if fall else "tau")

    def kind(self) -> RunKind:
        return self._kind.currentData()

    def set_kind(self, kind: RunKind) -> None:
        self._kind.setCurrentIndex(list(RunKind).index(kind))

    def duration(self) -> float:
        return float(self._duration.value())

    def set_duration(self, seconds: float) -> None:
        self._duration.setValue(float(seconds))

    def follow_window_run(self) -> None:
        """Take the settings of the window's run: its kind and duration (the Run panel's
        public `duration` if it has one, else the plots' run duration or the last run's
        end), and its sample step."""
        window = self.main_window
        traj = window.trajectory
        if traj is not None and len(traj) > 1:
            self.set_kind(RunKind.FREE_FALL if traj.kind != "inverse-dynamics"
                          else RunKind.INVERSE)
            self.set_duration(float(traj.t[-1] - traj.t[0]))
        run_panel = window.run_panel
        seconds = None
        if run_panel is not None and isinstance(getattr(type(run_panel), "duration", None),
                                                property):
            seconds = run_panel.duration
        elif window.plots is not None:
            seconds = window.plots.run_duration()
        if seconds:
            self.set_duration(float(seconds))

    def _dt(self) -> float:
        traj = self.main_window.trajectory
        if traj is not None and len(traj) > 1:
            return float(traj.t[1] - traj.t[0])
        return DEFAULT_DT

    def run_specs(self, model_b: Robot | Mechanism) -> tuple[RunSpec, RunSpec]:
        """Runs A and B with this panel's and the Run panel's settings."""
        window, a = self.main_window, self.model
        kind, duration, dt = self.kind(), self.duration(), self._dt()
        q0 = np.array(window.pose, dtype=float)
        run_panel = window.run_panel
        if kind is RunKind.INVERSE:
            if run_panel is None:
                raise ValueError("inverse dynamics needs the Run panel's target pose")
            if model_b.n != a.n:
                raise ValueError(f"run B's model has {model_b.n} joints, A's {a.n}: inverse "
                                 "dynamics to the same target needs the same number")
            target = run_panel.target_pose()
        else:
            target = q0
        method = run_panel.fall_method() if run_panel is not None else FallMethod.MULTIPLIERS
        c = float(self._damping.value())
        q0_b = q0 if model_b.n == a.n else model_b.q_home.copy()
        target_b = target if model_b.n == a.n else q0_b
        damping_b = damping_of(self._changes if self._with_changes.isChecked() else (),
                               model_b.n, c)
        spec_a = RunSpec(a, kind, q0, target, duration, dt, c, method)
        spec_b = RunSpec(model_b, kind, q0_b, target_b, duration, dt, damping_b, method)
        return spec_a, spec_b

    # ----- running --------------------------------------------------------------------
    @Slot()
    def compare(self) -> bool:
        """Start the comparison (a running one is cancelled first). False, with the
        message shown, if run B's model or the runs cannot be set up."""
        self.cancel()
        try:
            model_b = self.build_b()
            spec_a, spec_b = self.run_specs(model_b)
        except (ArmDynError, ValueError) as err:
            self._show_error(f"Cannot compare: {err}")
            return False
        self.model_a, self.model_b = spec_a.model, model_b
        duration = spec_a.duration

        def progress_of(value) -> float:
            side, part = value
            done = float(part.t[-1]) / duration if len(part) else 0.0
            return (0.0 if side == "A" else 0.5) + 0.5 * min(done, 1.0)

        worker = GeneratorWorker(comparison_chunks, spec_a, spec_b, progress_of=progress_of)
        worker.yielded.connect(self._on_chunk)
        worker.progress.connect(self._on_progress)
        worker.finished.connect(self._on_finished)
        worker.errored.connect(self._on_errored)
        worker.done.connect(self._on_done)
        self._worker = worker
        self._parts = {"A": [], "B": []}
        self._side = "A"
        self._error = None
        self._progress.setValue(0)
        self._set_status(f"{spec_a.kind.value}: computing A, then B\u2026")
        self._update_enabled()
        worker.start()
        return True

    @Slot()
    def cancel(self) -> None:
        """Stop a running comparison and wait for its thread (it ends at its next chunk);
        what was computed is shown."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        if not worker.quit(JOIN_TIMEOUT_S):
            log.warning("the comparison did not stop within %.0f s", JOIN_TIMEOUT_S)
        worker.deleteLater()
        self._show_parts("stopped")
        self._update_enabled()

    def is_running(self) -> bool:
        return self._worker is not None

    def _current(self) -> bool:
        return self._worker is not None and self.sender() is self._worker

    @Slot(object)
    def _on_chunk(self, value) -> None:
        if self._current():
            side, part = value
            self._side = side
            if len(part):
                self._parts[side].append(part)

    @Slot(float)
    def _on_progress(self, fraction: float) -> None:
        if self._current():
            self._progress.setValue(round(1000 * fraction))

    @Slot(object)
    def _on_finished(self, result) -> None:
        if self._current():
            self._progress.setValue(1000)
            self._set_result(*result)
            a, b = result
            self._set_status(f"A and B: {len(a)} samples over {self.duration():.2f} s.")

    @Slot(str)
    def _on_errored(self, message: str) -> None:
        if self._current():
            self._error = f"Run {self._side} stopped: {message}"

    @Slot()
    def _on_done(self) -> None:
        if not self._current():
            return
        worker, self._worker = self._worker, None
        worker.join(JOIN_TIMEOUT_S)
        worker.deleteLater()
        if self._error is not None:
            self._show_parts("failed")
            self._show_error(self._error)
        self._update_enabled()
        self.finished.emit()

    def _show_parts(self, how: str) -> None:
        """Show what a stopped or failed comparison computed."""
        parts = {side: Trajectory.concatenate(p) if p else None
                 for side, p in self._parts.items()}
        a, b = parts["A"], parts["B"]
        if a is None:
            self._set_status(f"Comparison {how} before any sample.")
            return
        if b is None:
            b = Trajectory.empty(self.model_b.n, a.kind)
        self._set_result(a, b)
        self._set_status(f"Comparison {how}: A {len(a)}, B {len(b)} samples.")

    # ----- results: plots, playback, ghost --------------------------------------------
    def clear_result(self) -> None:
        self.result = None
        self.playback.clear()
        self.ghost.remove()
        self._redraw()
        self._update_enabled()

    def _set_result(self, a: Trajectory, b: Trajectory) -> None:
        self.result = (a, b)
        self._fill_joint_chooser()
        duration = float(a.t[-1]) if len(a) else self.duration()
        self.plot.setXRange(0.0, max(duration, 1e-6), padding=0.0)
        self._redraw()
        self.playback.set_trajectory(a)  # emits the first frame: the ghost appears
        self._update_enabled()

    def _fill_joint_chooser(self) -> None:
        keep = self._joint.currentIndex()
        self._joint.blockSignals(True)
        self._joint.clear()
        if self.quantity() == "energy":
            self._joint.addItem("All energies", None)
            for k, (name, _colour, _dash) in enumerate(ENERGY_STYLE):
                self._joint.addItem(name, k)
        else:
            self._joint.addItem("All joints", None)
            for i, name in enumerate(self.model.link_names):
                self._joint.addItem(f"{i + 1} {name}", i)
        self._joint.setCurrentIndex(keep if 0 <= keep < self._joint.count() else 0)
        self._joint.blockSignals(False)

    def quantity(self) -> str:
        """The field shown: "q", "qd", "tau" or "energy"."""
        return self._quantity.currentData()

    def set_quantity(self, field: str) -> None:
        self._quantity.setCurrentIndex(QUANTITIES.index(field))

    def set_joint(self, index: int | None) -> None:
        """Show one joint (0-based; one energy for "energy") or all (None)."""
        k = self._joint.findData(index)
        self._joint.setCurrentIndex(max(k, 0))

    @Slot()
    def _on_quantity(self) -> None:
        self._joint.blockSignals(True)
        self._joint.setCurrentIndex(0)
        self._joint.blockSignals(False)
        self._fill_joint_chooser()
        self._redraw()

    def series(self) -> tuple[np.ndarray, list[tuple[int, np.ndarray, np.ndarray]]]:
        """What the plots show, in display units: (t (S,), [(colour index, A (S,), B (S,))])
        over the samples both runs have. Energy: the colour index is the energy's."""
        if self.result is None:
            return np.zeros(0), []
        a, b = self.result
        rows = min(len(a), len(b)) if len(b) else len(a)
        field = self.quantity()
        spec = _spec(field)
        ya = np.asarray(getattr(a, field), dtype=float)[:rows]
        yb = np.asarray(getattr(b, field), dtype=float)[:rows] if len(b) else None
        if field != "energy":
            ya = ya * _display_scale(spec, self.model_a)
            if yb is not None:
                yb = yb * _display_scale(spec, self.model_b)
        columns = range(ya.shape[1])
        chosen = self._joint.currentData()
        if chosen is not None:
            columns = [chosen]
        out = []
        for k in columns:
            col_b = yb[:, k] if yb is not None and k < yb.shape[1] else np.full(rows, np.nan)
            out.append((k, ya[:, k], col_b))
        return a.t[:rows], out

    def difference(self) -> tuple[np.ndarray, np.ndarray]:
        """The difference plot's data: t (S,), B - A (S, curves), display units."""
        t, series = self.series()
        if not series:
            return t, np.zeros((t.size, 0))
        return t, np.column_stack([b - a for _k, a, b in series])

    @Slot()
    def _redraw(self) -> None:
        for curve in self._curves_a + self._curves_b + self._curves_d:
            curve.getViewBox().removeItem(curve)
        self._curves_a, self._curves_b, self._curves_d = [], [], []
        field = self.quantity()
        spec = _spec(field)
        t, series = self.series()
        energy = field == "energy"
        right = self._right_joints(series, energy)
        for k, ya, yb in series:
            colour = ENERGY_STYLE[k][1] if energy else joint_color(k)
            upper, lower = ((self._right[self.plot], self._right[self.diff_plot]) if k in right
                            else (self.plot, self.diff_plot))
            self._curves_a.append(self._curve(upper, t, ya, colour))
            self._curves_b.append(self._curve(upper, t, yb, colour, Qt.PenStyle.DashLine))
            self._curves_d.append(self._curve(lower, t, yb - ya, colour))
        for item in (self.plot, self.diff_plot):
            item.vb.enableAutoRange(axis=pg.ViewBox.YAxis)
            self._right[item].enableAutoRange(axis=pg.ViewBox.YAxis)
            item.showAxis("right", bool(right))
        label = spec.left if right else self._axis_label(spec)
        self.plot.setLabel("left", label)
        self.diff_plot.setLabel("left", f"B \u2212 A {_unit_of(label)}".strip())
        if right:
            self.plot.setLabel("right", spec.right)
            self.diff_plot.setLabel("right", f"B \u2212 A {_unit_of(spec.right)}".strip())
        self._legend.setText(self._legend_html(series, energy))

    def _right_joints(self, series, energy: bool) -> set[int]:
        """The joints drawn on the right axis: the prismatic ones, when the curves show
        revolute and prismatic joints together (one kind alone takes the left axis)."""
        if energy:
            return set()
        revolute = (self.model_a or self.model).is_revolute
        shown = [k for k, _a, _b in series]
        prismatic = {k for k in shown if not revolute[k]}
        return prismatic if len(prismatic) < len(shown) else set()

    @staticmethod
    def _curve(item: pg.PlotItem | pg.ViewBox, t: np.ndarray, y: np.ndarray, colour: str,
               style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> pg.PlotDataItem:
        """A curve downsampled to the screen (a min and a max per pixel column), so that
        B's dashes can be LINE_WIDTH wide on a long run (see gui.plots.plots_panel on dashed speed)."""
        many = t.size > DASHED_WIDE_MAX
        width = DASHED_WIDTH if style != Qt.PenStyle.SolidLine and many else LINE_WIDTH
        curve = pg.PlotDataItem(t, y, pen=pg.mkPen(colour, width=width, style=style))
        curve.setDownsampling(auto=True, method="peak")
        curve.setSkipFiniteCheck(True)
        item.addItem(curve)
        return curve

    def _axis_label(self, spec: PlotSpec) -> str:
        if spec.field == "energy":
            return spec.left
        model = self.model_a or self.model
        chosen = self._joint.currentData()
        revolute = model.is_revolute if chosen is None else model.is_revolute[[chosen]]
        if np.all(revolute):
            return spec.left
        if not np.any(revolute):
            return spec.right
        return f"{spec.left}; {spec.right}"

    def _legend_html(self, series, energy: bool) -> str:
        a_name = (self.model_a or self.model).name
        b_name = self.model_b.name if self.model_b is not None else "(not run yet)"
        parts = [f"<span style='color:#333'>{GLYPH[Qt.PenStyle.SolidLine]}</span> "
                 f"<b>A:</b> {escape(a_name)}",
                 f"<span style='color:#333'>{GLYPH[Qt.PenStyle.DashLine]}</span> "
                 f"<b>B:</b> {escape(b_name)}"]
        names = [n for n, _c, _d in ENERGY_STYLE] if energy else \
            [f"{i + 1} {n}" for i, n in enumerate((self.model_a or self.model).link_names)]
        keys = [f"<span style='color:{ENERGY_STYLE[k][1] if energy else joint_color(k)}'>"
                f"\u25a0</span>&nbsp;{escape(names[k])}" for k, _a, _b in series]
        return ("&nbsp;&nbsp;&nbsp;".join(parts) + "<br>" + "&nbsp;&nbsp; ".join(keys))

    def legend_text(self) -> str:
        """The legend as plain text ("A: ...  B: ...", then the curves' names)."""
        return QTextDocumentFragment.fromHtml(self._legend.text()).toPlainText()

    @Slot(float, object)
    def _on_frame(self, t: float, q) -> None:
        """Comparison playback: A in the 3D view, B as the ghost, cursors at t."""
        for line in self._cursors:
            line.setValue(float(t))
            line.setVisible(True)
        if not self._active:
            return
        self.main_window.view3d.set_pose(np.asarray(q, dtype=float), keep_in_view=True)
        self._playing_compare = True
        self.show_ghost_at(t)

    @Slot(float, object)
    def follow_window_playback(self, t: float, _q=None) -> None:
        """The window's playback moved to t: the ghost goes to B's pose at t."""
        if self._active:
            self.show_ghost_at(t)

    def show_ghost_at(self, t: float) -> None:
        """B's arm as the ghost at time t (s) of run B (clamped to its samples)."""
        if self.result is None or self.model_b is None or not self._active:
            return
        b = self.result[1]
        if len(b) == 0:
            return
        self.ghost.show(self.model_b, b.at(float(t)))

    def seek(self, t: float) -> None:
        """Comparison playback to t (s)."""
        self.playback.seek(t)

    # ----- export ---------------------------------------------------------------------
    def export_csv(self, path: str | Path) -> Path:
        """Write both runs side by side to `path` (atomically); OSError on failure."""
        if self.result is None:
            raise ValueError("nothing to export: run a comparison first")
        a, b = self.result
        text = comparison_csv_text(a, self.model_a, b, self.model_b)
        write_atomically(path, text.encode("utf-8"))
        return Path(path)

    @Slot()
    def ask_export_csv(self) -> bool:
        if self.result is None:
            return False
        files = self.main_window.files
        stem = Path(files.suggested_name()).with_suffix("")
        path = files.ask_save_path("Export Comparison", "CSV files (*.csv)", ".csv",
                                   f"{stem}_comparison.csv")
        if path is None:
            return False
        try:
            self.export_csv(path)
        except (OSError, ValueError) as err:
            files.error("Cannot export the comparison", f"{path}: {err}")
            return False
        self.main_window.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    # ----- state, visibility, teardown ------------------------------------------------
    def message(self) -> str:
        """The status line's text (plain)."""
        return self._status.text()

    def _set_status(self, text: str) -> None:
        self._status.setStyleSheet("")
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self._status.setText(text)

    def _show_error(self, text: str) -> None:
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self._status.setStyleSheet(ERROR_STYLE)
        self._status.setText(text)
        self.main_window.statusBar().showMessage(text, 8000)

    @Slot()
    def _update_enabled(self) -> None:
        running = self._worker is not None
        changes = self._with_changes.isChecked()
        for w in (self._link, self._field, self._value, self._add, self._list):
            w.setEnabled(changes and not running)
        self._op.setEnabled(changes and not running and self._field.currentData().settable)
        self._remove.setEnabled(changes and not running and bool(self._changes))
        self._clear.setEnabled(changes and not running and bool(self._changes))
        self._path.setEnabled(not changes)
        self._browse.setEnabled(not changes and not running)
        self._kind.setEnabled(not running)
        self._duration.setEnabled(not running)
        self._run.setEnabled(not running)
        self._stop.setEnabled(running)
        self._export.setEnabled(not running and self.result is not None)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._active = True
        if self.result is not None:
            self.show_ghost_at(self.playback.time())

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().hideEvent(event)
        self.deactivate()

    def deactivate(self) -> None:
        """The dock is hidden: no ghost, playback paused, the 3D arm back at the window's
        pose if the comparison's playback moved it."""
        self._active = False
        self.playback.pause()
        self.ghost.remove()
        if self._playing_compare:
            self._playing_compare = False
            self.main_window.view3d.set_pose(self.main_window.pose)

    def shutdown(self) -> None:
        """Cancel a running comparison, stop playback, remove the ghost (before the 3D
        view is shut down)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.quit(JOIN_TIMEOUT_S)
            worker.deleteLater()
        self.playback.pause()
        self._active = False
        self.ghost.remove()


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

    def shutdown(self) -> None:
        """Stop the panel's comparison and remove its ghost (if it was built)."""
        if self.built:
            self.panel.shutdown()

    def _make_panel(self) -> ComparePanel:
        window = self.window
        panel = ComparePanel(window)  # takes the window's model itself
        panel.dock, panel.action = self.dock, self.action
        window.session.model_changed.connect(panel.set_robot)
        if window.playback is not None:
            window.playback.frame.connect(panel.follow_window_playback)
        if window.run_panel is not None:
            window.run_panel.finished.connect(lambda _t: panel.follow_window_run())
        return panel


def install_compare(window) -> CompareDock:
    """Put a Compare dock into `window` (a `MainWindow`), tabbed with the bottom docks,
    wired to the window's robot, runs and playback once its panel is built (on first
    use); "Compare Runs..." (Ctrl+K) goes into the View menu, after Teaching Lab."""
    compare = CompareDock(window)
    action = compare.action
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if menu is not None and menu_action.text().replace("&", "") == "View":
            lab = getattr(window, "lab_action", None)
            actions = menu.actions()
            after = actions.index(lab) + 1 if lab in actions else len(actions)
            if after < len(actions):
                menu.insertAction(actions[after], action)
            else:
                menu.addAction(action)
            break
    return compare
