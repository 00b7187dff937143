"""The Sweep panel's set-up: the grid's axes and where the points run.

An axis is a field (picked from every field `core.sweeps` accepts for the model and the
run's kind, `core.sweeps.fields.field_choices`, or typed) and its values,
"START:STOP:COUNT" or "v1,v2,..." (SI, angles in degrees as in the window's tables). An
axis is checked when it is added, by the core's own check of a grid (`make_plan`: a
value tried with the other axes at their first values), on at most CHECKED_NOW of its
values (both ends among them: each value costs a model and a run's checks, and a
thousand froze the window for 2 s), and refused at once with the core's message; the
sweep checks every value, in its thread, before any point runs. An axis is kept as
typed and read again for each sweep (the model may have changed meanwhile). The number of points is the product of the axes' lengths.

Where: one process, every core of this machine (the core's local pool), or a Dask
scheduler's address (offered only where Dask's ``distributed`` is installed).
"""
from __future__ import annotations

import importlib.util
import math
from dataclasses import replace

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QCompleter, QFormLayout,
                               QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton,
                               QTableView, QVBoxLayout, QWidget)

from armdyn.core import ArmDynError, FreeFallRun, InverseRun, Mechanism, Robot
from armdyn.core.sweeps.engines import cpu_count
from armdyn.core.sweeps.fields import Axis, field_choices, resolve_field, typed_units
from armdyn.core.sweeps.sweep import make_plan

from ..jobs.sweeps import ANGLE_UNIT, axis_of_text
from ..look.text import plain_label
from ..model.rows import RowsModel

__all__ = ["SweepSetup", "AxesModel", "WHERE_ONE", "WHERE_ALL", "WHERE_DASK", "has_dask"]

WHERE_ONE, WHERE_ALL, WHERE_DASK = "one", "all", "dask"
#: The colour of a refusal's text (contrast above 7:1 on the panel's background).
REFUSED_COLOR = "#7A1010"
#: An axis added is checked at once on this many of its values (both ends among them,
#: spread evenly): about 25 ms; the sweep checks all of them before any point runs.
CHECKED_NOW = 12
#: One value, for the unit of a field alone (`typed_units` reads it from an axis).
_ONE = np.zeros(1)


def has_dask() -> bool:
    """Whether Dask's distributed scheduler can be imported (without importing it)."""
    return importlib.util.find_spec("distributed") is not None


class AxesModel(RowsModel):
    """The grid's axes as typed: field, values, unit, count (read-only cells).
    Rows: (field, values, unit, count)."""

    HEADERS = ("Field", "Values", "Unit", "Count")

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if index.isValid() and role == Qt.ItemDataRole.DisplayRole:
            return str(self.rows[index.row()][index.column()])
        return None


class SweepSetup(QWidget):
    """The axes and the place of a sweep (module docstring). The panel gives it the
    model and the base run (`set_base`); `axes()` reads the axes for them. ``footer``
    (the point count, Remove, where the points run) is for the panel to place.

    Signals: ``changed()`` the axes or the base changed (the point count with them).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._model: Robot | Mechanism | None = None
        self._run: InverseRun | FreeFallRun | None = None
        self._choices: list[str] = []  # the fields offered: those the run can vary
        self._typed: list[tuple[str, str]] = []  # (field, values) as typed
        self._build()

    def _build(self) -> None:
        self._field = QComboBox()
        self._field.setEditable(True)
        self._field.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self._field.setMinimumContentsLength(14)
        self._field.setToolTip("A field of the model or of the run: T, target.J, "
                               "payload.mass, LINK.mass, ... (docs/sweeps.md)")
        self._field.completer().setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self._field.completer().setFilterMode(Qt.MatchFlag.MatchContains)
        self._field.currentTextChanged.connect(self._show_unit)
        self._values = QLineEdit()
        self._values.setPlaceholderText("start:stop:count or v1,v2,...")
        self._values.setToolTip("START:STOP:COUNT (both ends included) or v1,v2,...; "
                                "angles in degrees; a whole pose: v1,...,vn/v1,...,vn")
        self._values.returnPressed.connect(self.add_typed)
        self._unit = QLabel("")
        self._unit.setMinimumWidth(48)
        self._add = QPushButton("Add")
        self._add.setToolTip("Add this field to the grid (checked at once)")
        self._add.clicked.connect(self.add_typed)
        values = QHBoxLayout()
        values.addWidget(self._values, 1)
        values.addWidget(self._unit)
        values.addWidget(self._add)
        entry = QFormLayout()
        entry.setContentsMargins(0, 0, 0, 0)
        entry.addRow("Field:", self._field)
        entry.addRow("Values:", values)

        self.axes_model = AxesModel(self)
        self.axes_view = QTableView()
        self.axes_view.setModel(self.axes_model)
        self.axes_view.verticalHeader().setVisible(False)
        self.axes_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.axes_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.axes_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.axes_view.setMinimumHeight(70)
        self._remove = QPushButton("Remove")
        self._remove.setToolTip("Remove the selected field from the grid")
        self._remove.clicked.connect(self._remove_selected)
        self._count = QLabel("")
        under = QHBoxLayout()
        under.addWidget(self._count, 1)
        under.addWidget(self._remove)

        self._message = plain_label("")
        self._message.setWordWrap(True)
        self._message.setStyleSheet(f"color: {REFUSED_COLOR};")
        self._message.hide()

        self._where = QComboBox()
        self._where.addItem("One process", WHERE_ONE)
        self._where.addItem(f"All cores of this machine ({cpu_count()})", WHERE_ALL)
        if has_dask():
            self._where.addItem("A Dask scheduler", WHERE_DASK)
        self._where.setCurrentIndex(1)
        self._where.currentIndexChanged.connect(self._show_where)
        self._address = QLineEdit()
        self._address.setPlaceholderText("tcp://host:8786")
        self._address.setToolTip("The Dask scheduler's address")
        where = QFormLayout()
        where.setContentsMargins(0, 0, 0, 0)
        where.addRow("Run on:", self._where)
        where.addRow("Scheduler:", self._address)
        self._where_form = where

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Vary (the last field varies fastest):"))
        layout.addLayout(entry)
        layout.addWidget(self._message)
        layout.addWidget(self.axes_view, 1)
        # the point count and where they run: for the panel to keep in sight, below
        # whatever scrolls
        self.footer = QWidget()
        below = QVBoxLayout(self.footer)
        below.setContentsMargins(0, 0, 0, 0)
        below.addLayout(under)
        below.addLayout(where)
        self._show_where()
        self._update_count()

    # ----- the base -------------------------------------------------------------------
    def set_base(self, model: Robot | Mechanism | None,
                 run: InverseRun | FreeFallRun | None) -> None:
        """The model and the run the axes change (the field choices follow its kind, less
        the fields it cannot vary: `InverseRun.refusal`)."""
        choices = [] if model is None or run is None else [
            name for name in field_choices(model, run.kind)
            if run.refusal(resolve_field(name, model, run.kind)) is None]
        kind_changed = (run is None or self._run is None or run.kind != self._run.kind
                        or model is not self._model or choices != self._choices)
        self._model, self._run, self._choices = model, run, choices
        if kind_changed:
            text = self._field.currentText()
            self._field.blockSignals(True)
            self._field.clear()
            self._field.addItems(choices)
            self._field.setEditText(text or "payload.mass")
            self._field.blockSignals(False)
            self._show_unit()
        self._update_count()

    # ----- the axes -------------------------------------------------------------------
    def add_axis(self, field: str, values: str) -> bool:
        """Add the axis `field` = `values` (as typed); False, with the core's message
        shown (`message`), if the core refuses it."""
        if self._model is None or self._run is None:
            self.show_message("Load a model first." if self._model is None else
                              "The Run panel's motion cannot be swept yet (see above).")
            return False
        typed = self._typed + [(field.strip(), values.strip())]
        try:
            axes = self._parse(typed)
            # the core's check of a grid: values of the new axis with the others at
            # their first values (theirs were checked when they were added); at most
            # CHECKED_NOW of them here, both ends among them (each costs a model and a
            # run's checks, ~2 ms); the sweep checks every value before it starts
            firsts = [replace(a, values=a.values[:1], si=a.si[:1]) for a in axes[:-1]]
            new = axes[-1]
            picked = np.unique(np.linspace(0, len(new) - 1, min(len(new), CHECKED_NOW))
                               .round().astype(int))
            make_plan(self._model, self._run,
                      firsts + [replace(new, values=new.values[picked], si=new.si[picked])])
        except ArmDynError as err:
            self.show_message(str(err))
            return False
        self._typed = typed
        self.show_message("")
        self._refresh_rows(axes)
        return True

    @Slot()
    def add_typed(self) -> bool:
        """Add the field and values typed in the entry row."""
        ok = self.add_axis(self._field.currentText(), self._values.text())
        if ok:
            self._values.clear()
        return ok

    def clear_axes(self) -> None:
        self._typed = []
        self.show_message("")
        self._refresh_rows([])

    def axes(self) -> list[Axis]:
        """The axes for the current model and run (ArmDynError: the core's message)."""
        return self._parse(self._typed)

    def typed(self) -> list[tuple[str, str]]:
        """The axes as typed: (field, values)."""
        return list(self._typed)

    def message(self) -> str:
        """The last refusal (or "")."""
        return self._message.text()

    def show_message(self, text: str) -> None:
        """Show `text` under the entry (a refusal), or nothing ("")."""
        self._message.setText(text)
        self._message.setVisible(bool(text))

    def point_count(self) -> int:
        return math.prod(row[3] for row in self.axes_model.rows) if self._typed else 0

    def _parse(self, typed: list[tuple[str, str]]) -> list[Axis]:
        return [axis_of_text(f, v, self._model, self._run.kind) for f, v in typed]

    def _refresh_rows(self, axes: list[Axis]) -> None:
        units = typed_units(axes, ANGLE_UNIT)
        rows, col = [], 0
        for (field, values), axis in zip(self._typed, axes):
            unit = "pose" if axis.field.pose else units[col]
            rows.append((field, values, unit, len(axis)))
            col += len(axis.columns)
        self.axes_model.set_rows(rows)
        self._update_count()

    @Slot()
    def _remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.axes_view.selectionModel().selectedRows()},
                      reverse=True)
        if not rows and self._typed:
            rows = [len(self._typed) - 1]
        for r in rows:
            del self._typed[r]
        try:
            self._refresh_rows(self._parse(self._typed) if self._model is not None else [])
        except ArmDynError as err:
            self.show_message(str(err))

    def _update_count(self) -> None:
        counts = [row[3] for row in self.axes_model.rows]
        if not counts:
            self._count.setText("No field varied yet.")
        else:
            total = math.prod(counts)
            self._count.setText(" \u00d7 ".join(str(c) for c in counts)
                                + f" = {total} point{'s' * (total != 1)}")
        self._remove.setEnabled(bool(counts))
        self.changed.emit()

    @Slot()
    def _show_unit(self, *_args) -> None:
        text = ""
        if self._model is not None and self._run is not None:
            try:
                field = resolve_field(self._field.currentText(), self._model, self._run.kind)
                text = "pose" if field.pose else typed_units(
                    [Axis("", field, _ONE, _ONE)], ANGLE_UNIT)[0]
            except ArmDynError:
                text = ""
        self._unit.setText(text)

    # ----- where ----------------------------------------------------------------------
    def where(self) -> str:
        """WHERE_ONE, WHERE_ALL or WHERE_DASK."""
        return self._where.currentData()

    def set_where(self, where: str, address: str = "") -> None:
        self._where.setCurrentIndex(max(0, self._where.findData(where)))
        self._address.setText(address)

    def engine(self) -> dict:
        """The sweep's keyword arguments for where it runs (``workers``, ``scheduler``)."""
        where = self.where()
        if where == WHERE_ONE:
            return {"workers": 1}
        if where == WHERE_DASK:
            return {"scheduler": self._address.text().strip() or None}
        return {}

    @Slot()
    def _show_where(self, *_args) -> None:
        dask = self.where() == WHERE_DASK
        self._where_form.setRowVisible(1, dask)


