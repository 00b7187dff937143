"""The Compare dock's left column: run B's definition, the run's settings, the buttons,
the progress and the status line.

Run B is run A's model (the window's) with a list of changes, or another robot or
mechanism file. A change the core refuses (`Robot(...)`, `Mechanism(...)` validate) is
not added: its message is shown (``error``) and the list stays.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QDoubleSpinBox, QFormLayout,
                               QGridLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget,
                               QProgressBar, QPushButton, QRadioButton, QToolButton,
                               QVBoxLayout, QWidget)

from armdyn.core import ArmDynError, Mechanism, Robot

from ..jobs.comparison import Change, ChangeField, ChangeOp, apply_changes, describe_changes
from ..jobs.runs import RunKind
from ..look.scroll import scroll_area
from armdyn.core.io.model_files import load_model

__all__ = ["CompareForm"]

ERROR_STYLE = "color: #B00020;"


class CompareForm(QWidget):
    """B's changes or file, the run's kind, duration and damping; Compare (``run``),
    Stop (``stop``), CSV (``export``); ``progress`` and the status line.

    Signals: ``error(str)`` a message shown in red (for the window's status bar too);
    ``kind_changed()``.
    """

    error = Signal(str)
    kind_changed = Signal()

    def __init__(self, model: Robot | Mechanism, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model = model  # run A's: the window's
        self._changes: list[Change] = []
        self._file_model: Robot | Mechanism | None = None
        self._file_path: Path | None = None
        self._running = False
        self._has_result = False
        self._build()
        self._kind.currentIndexChanged.connect(self._on_kind)
        self._on_field()
        self._on_kind()

    def _build(self) -> None:
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
        self.browse = QToolButton()
        self.browse.setText("Browse\u2026")

        self._kind = QComboBox()
        for kind in RunKind:
            self._kind.addItem(kind.title, kind)
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

        self.run = QPushButton("Compare")
        self.run.setToolTip("Run A (this model) and B with the same settings")
        self.stop = QPushButton("Stop")
        self.export = QPushButton("CSV\u2026")
        self.export.setToolTip("Save both runs side by side as CSV")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p %")
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
        file_row.addWidget(self.browse)
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
        for b in (self.run, self.stop, self.export):
            buttons.addWidget(b)
        side_col = QVBoxLayout(self)
        side_col.setSpacing(3)
        side_col.addWidget(scroll, 1)
        buttons.setContentsMargins(6, 0, 6, 0)
        side_col.addLayout(buttons)
        for w in (self.progress, self._status):
            side_col.addWidget(w)
        side_col.setContentsMargins(0, 0, 0, 2)
        self._status.setContentsMargins(6, 0, 6, 0)

    # ----- run B's definition ---------------------------------------------------------
    def set_robot(self, model: Robot | Mechanism) -> None:
        """Run A's model changed: the links offered follow; changes that still name the
        same links stay."""
        self._model = model
        old = [self._link.itemText(k) for k in range(self._link.count())]
        self._link.clear()
        for i, name in enumerate(model.link_names):
            self._link.addItem(f"{i + 1} {name}", i)
        self._link.setCurrentIndex(min(max(self._link.count() - 1, 0), 2))
        kept = [c for c in self._changes if c.link < model.n]
        if old != [self._link.itemText(k) for k in range(self._link.count())]:
            kept = []
        self._changes = kept
        self._show_changes()

    def changes(self) -> list[Change]:
        return list(self._changes)

    def applied_changes(self) -> list[Change]:
        """The changes B runs with: none when B is another file."""
        return self.changes() if self._with_changes.isChecked() else []

    def set_changes(self, changes: Sequence[Change]) -> bool:
        """Make `changes` run B's list if the core accepts the model they give; else the
        list stays, the message is shown and False is returned."""
        try:
            apply_changes(self._model, changes)
        except (ArmDynError, ValueError) as err:
            self.show_error(f"B refused: {err}")
            return False
        self._changes = list(changes)
        self._show_changes()
        self._with_changes.setChecked(True)
        self.set_status("Run B: " + (describe_changes(self._changes, self._model.link_names)
                                     or "no change (the same model)") + ".")
        return True

    def add_change(self, change: Change) -> bool:
        """Append `change` (see `set_changes`)."""
        return self.set_changes(self._changes + [change])

    def set_file(self, path: str | Path) -> bool:
        """Run B from a robot or mechanism file (read by `core.io.model_files.load_model`)."""
        try:
            model = load_model(path)
        except (ArmDynError, OSError, ValueError) as err:
            self.show_error(f"Cannot read {path}: {err}")
            return False
        self._file_model, self._file_path = model, Path(path)
        self._path.setText(Path(path).name)
        self._path.setToolTip(str(path))
        self._with_file.setChecked(True)
        self.set_status(f"Run B: {model.name} ({model.n} joints).")
        return True

    def build_b(self) -> Robot | Mechanism:
        """Run B's model (raises the core's error for a refused change)."""
        if self._with_file.isChecked():
            if self._file_model is None:
                raise ValueError("choose run B's file first")
            return self._file_model
        return apply_changes(self._model, self._changes)

    # ----- the run's settings ---------------------------------------------------------
    def kind(self) -> RunKind:
        return self._kind.currentData()

    def set_kind(self, kind: RunKind) -> None:
        self._kind.setCurrentIndex(list(RunKind).index(kind))

    def duration(self) -> float:
        return float(self._duration.value())

    def set_duration(self, seconds: float) -> None:
        self._duration.setValue(float(seconds))

    def damping(self) -> float:
        """Joint damping c of both free falls, N m s/rad (N s/m)."""
        return float(self._damping.value())

    # ----- status and enabling --------------------------------------------------------
    def message(self) -> str:
        """The status line's text (plain)."""
        return self._status.text()

    def set_status(self, text: str) -> None:
        self._status.setStyleSheet("")
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self._status.setText(text)

    def show_error(self, text: str) -> None:
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self._status.setStyleSheet(ERROR_STYLE)
        self._status.setText(text)
        self.error.emit(text)

    def set_running(self, running: bool, has_result: bool) -> None:
        """What can be used while a comparison runs (or not), and whether there is a
        result to export."""
        self._running, self._has_result = running, has_result
        self._update_enabled()

    @Slot()
    def _update_enabled(self) -> None:
        running = self._running
        changes = self._with_changes.isChecked()
        for w in (self._link, self._field, self._value, self._add, self._list):
            w.setEnabled(changes and not running)
        self._op.setEnabled(changes and not running and self._field.currentData().settable)
        self._remove.setEnabled(changes and not running and bool(self._changes))
        self._clear.setEnabled(changes and not running and bool(self._changes))
        self._path.setEnabled(not changes)
        self.browse.setEnabled(not changes and not running)
        self._kind.setEnabled(not running)
        self._duration.setEnabled(not running)
        self.run.setEnabled(not running)
        self.stop.setEnabled(running)
        self.export.setEnabled(not running and self._has_result)

    # ----- internals ------------------------------------------------------------------
    def _show_changes(self) -> None:
        self._list.clear()
        names = self._model.link_names
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
    def _on_kind(self) -> None:
        fall = self.kind() is RunKind.FREE_FALL
        self._damping.setVisible(fall)
        self._damping_label.setVisible(fall)
        self.kind_changed.emit()
