"""A mechanism's structure in the Robot dock: the Chains tab, the Loops tab and the
assembly settings. Every edit goes to `RobotDocument` as an undo command.

- `ChainsEditor`: one row per chain (name, the link it starts on, base xyz in m and
  rpy in the file's angle unit), chains added (on the base, with one link) and removed.
- `LoopsEditor`: one row per loop joint (name, revolute / spherical / prismatic, the
  two links, the joint's point and axis in each link's own frame, m), loops added
  (pinning a chain's end where it is) and removed; below, `AssemblyForm`.
- `AssemblyForm`: the independent joints (the actuated ones by default, or chosen
  links) and the closure tolerance (m and rad).
- `ForcesEditor`: one row per spring-damper or tyre; either kind added (one that
  changes no motion until its numbers are typed), rows removed.
- `RoadEditor`: one row per road point (x, h); points added beyond the last, removed.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QFormLayout, QGroupBox, QLineEdit, QMenu, QSizePolicy, QToolBar,
                               QToolButton, QVBoxLayout, QWidget)

from ..look.text import tooltip
from ..model.document import RobotDocument
from ..model.mechanism_draft import (CHAIN_COLUMNS, FORCE_COLUMNS, LOOP_COLUMNS, ROAD_COLUMNS,
                                     SPRING_DAMPER, TYRE, MechanismDraft)
from .tables import ERROR_BACKGROUND, ERROR_FOREGROUND, RobotTableView, StructureTableModel

__all__ = ["StructureEditor", "ChainsEditor", "LoopsEditor", "AssemblyForm", "ForcesEditor",
           "RoadEditor"]


class StructureEditor(QWidget):
    """A toolbar (add, remove) over the table of one of a mechanism's structure sheets.

    Attributes: ``model`` (StructureTableModel), ``view`` (RobotTableView),
    ``add_action``, ``remove_action``.
    """

    def __init__(self, document: RobotDocument, sheet: str, columns, what: str,
                 add: Callable[[], int], remove: Callable[[int], bool],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._add, self._remove = add, remove
        self.model = StructureTableModel(document, sheet, columns, self)
        self.view = RobotTableView(self.model)
        self.view.setObjectName(f"{sheet}Table")
        self.view.horizontalHeader().setStretchLastSection(True)
        self.add_action = QAction(f"+ Add {what}", self)
        self.add_action.triggered.connect(self.add)
        self.remove_action = QAction(f"\u2212 Remove {what}", self)
        self.remove_action.triggered.connect(self.remove_current)
        self.bar = QToolBar(f"{what.capitalize()}s")
        self.bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.bar.setMovable(False)
        self.bar.addAction(self.add_action)
        self.bar.addAction(self.remove_action)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 2, 0, 0)
        self._layout.setSpacing(2)
        self._layout.addWidget(self.view, 1)  # the RobotEditor shows `bar` above its tabs
        self.view.selectionModel().currentChanged.connect(self._update_actions)
        self.model.modelReset.connect(self._after_reset)
        self._after_reset()

    def _after_reset(self) -> None:
        """A row current from the start (remove is usable), columns fitted."""
        if not self.view.currentIndex().isValid() and self.model.rowCount():
            self.select(0)
        self._update_actions()

    def current(self) -> int | None:
        index = self.view.currentIndex()
        return index.row() if index.isValid() else None

    def select(self, row: int) -> None:
        col = max(self.view.currentIndex().column(), 0)
        self.view.selectionModel().setCurrentIndex(
            self.model.index(row, col), QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def add(self) -> None:
        """Add a row (an undo step) and make it current."""
        self.select(self._add())

    def remove_current(self) -> bool:
        """Remove the current row (an undo step)."""
        row = self.current()
        if row is None or not self._remove(row):
            return False
        if self.model.rowCount():
            self.select(min(row, self.model.rowCount() - 1))
        return True

    def _update_actions(self, *_args) -> None:
        self.remove_action.setEnabled(self.current() is not None and self._can_remove())

    def _can_remove(self) -> bool:
        return True


class ChainsEditor(StructureEditor):
    """The Chains tab: name, the link a chain starts on, base placement."""

    def __init__(self, document: RobotDocument, parent: QWidget | None = None) -> None:
        super().__init__(document, "chains", CHAIN_COLUMNS, "chain", document.add_chain,
                         document.remove_chain, parent)
        self.add_action.setToolTip("Add a chain on the base, with one link (edit its links "
                                   "in the DH and inertia tabs)")
        self.remove_action.setToolTip("Remove the current chain and its links")

    def _can_remove(self) -> bool:
        return self.model.rowCount() > 1


class LoopsEditor(StructureEditor):
    """The Loops tab: the loop joints, then the assembly settings."""

    def __init__(self, document: RobotDocument, parent: QWidget | None = None) -> None:
        super().__init__(document, "loops", LOOP_COLUMNS, "loop", self._add_loop,
                         document.remove_loop, parent)
        self.chain_for_new: Callable[[], int | None] = lambda: None
        self.add_action.setToolTip("Add a revolute loop joint pinning the end of the chain "
                                   "shown to the base where it is now")
        self.remove_action.setToolTip("Remove the current loop joint")
        self.assembly = AssemblyForm(document)
        self._layout.addWidget(self.assembly)

    def _add_loop(self) -> int:
        return self.document.add_loop(self.chain_for_new())


class ForcesEditor(StructureEditor):
    """The Forces tab: a mechanism's spring-dampers and tyres (``add_action`` adds a
    spring-damper, ``add_tyre_action`` a tyre)."""

    def __init__(self, document: RobotDocument, parent: QWidget | None = None) -> None:
        super().__init__(document, "forces", FORCE_COLUMNS, "spring",
                         lambda: document.add_force(SPRING_DAMPER), document.remove_force,
                         parent)
        self.add_action.setToolTip("Add a spring-damper from the base to the far end of the "
                                   "last link (k = c = 0: type its numbers)")
        self.add_tyre_action = QAction("+ Add tyre", self)
        self.add_tyre_action.setToolTip("Add a tyre on the far end of the last link (like the "
                                        "last tyre; choose its link in the links cell)")
        self.add_tyre_action.triggered.connect(
            lambda: self.select(document.add_force(TYRE)))
        self.bar.insertAction(self.remove_action, self.add_tyre_action)
        self.remove_action.setText("\u2212 Remove")
        self.remove_action.setToolTip("Remove the current spring-damper or tyre")


class RoadEditor(StructureEditor):
    """The Road tab: the road's points (x, h), added beyond the last and removed."""

    def __init__(self, document: RobotDocument, parent: QWidget | None = None) -> None:
        super().__init__(document, "road", ROAD_COLUMNS, "point", document.add_road_point,
                         document.remove_road_point, parent)
        self.add_action.setToolTip("Add a road point 1 m beyond the last, at its height")
        self.remove_action.setToolTip("Remove the current road point")


class AssemblyForm(QGroupBox):
    """The [assembly] settings: which joints are held while the loops close, and the
    tolerance. A refused value stays, red with core's reason as tooltip."""

    def __init__(self, document: RobotDocument, parent: QWidget | None = None) -> None:
        super().__init__("Assembly: closing the loops", parent)
        self.document = document
        self.independent_button = QToolButton()
        self.independent_button.setObjectName("independentJoints")
        self.independent_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.independent_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.independent_button.setSizePolicy(QSizePolicy.Policy.Ignored,
                                              QSizePolicy.Policy.Fixed)
        self.independent_button.setMinimumWidth(120)
        self._independent_text: str | None = None
        self.independent_menu = QMenu(self.independent_button)
        self.independent_menu.aboutToShow.connect(self._fill_menu)
        self.independent_button.setMenu(self.independent_menu)
        self.tolerance_edit = QLineEdit()
        self.tolerance_edit.setObjectName("tolerance")
        self.tolerance_edit.setMaximumWidth(140)
        self.tolerance_edit.editingFinished.connect(self._on_tolerance_edited)
        form = QFormLayout(self)
        form.setContentsMargins(6, 4, 6, 4)
        form.addRow("Held while closing", self.independent_button)
        form.addRow("Tolerance (m, rad)", self.tolerance_edit)
        document.sheet_changed.connect(self._on_sheet_changed)
        document.reset.connect(self.refresh)
        self.refresh()

    def _draft(self) -> MechanismDraft | None:
        draft = self.document.draft
        return draft if draft.edits_chains else None

    def _on_sheet_changed(self, sheet: str) -> None:
        if sheet == "assembly":
            self.refresh()

    def refresh(self) -> None:
        """Show the draft's settings and their errors."""
        draft = self._draft()
        if draft is None:
            return
        names = draft.value(0, "independent")
        if names is None:
            actuated = self._actuated(draft)
            text = "the actuated joints" + (f": {', '.join(actuated)}" if actuated else "")
        else:
            text = ", ".join(names)
        # elided to the button's width (a humanoid's fifteen names would otherwise widen
        # the whole window); the full list is in the tooltip
        self._independent_text = text
        self._show_independent_text()
        if not self.tolerance_edit.hasFocus() or not self.tolerance_edit.isModified():
            self.tolerance_edit.setText(draft.edit_text(0, "tolerance"))
        for widget, key in ((self.independent_button, "independent"),
                            (self.tolerance_edit, "tolerance")):
            error = draft.errors.get((0, key))
            tip = error or draft.column(key).tip
            if widget is self.independent_button:
                tip = f"{text}\n\n{tip}"
            widget.setToolTip(tooltip(tip))  # names from the file, as plain text
            widget.setStyleSheet(f"background: {ERROR_BACKGROUND.name()}; "
                                 f"color: {ERROR_FOREGROUND.name()};" if error else "")

    def _show_independent_text(self) -> None:
        button = self.independent_button
        width = max(80, button.width() - 24)  # room for the menu arrow
        button.setText(button.fontMetrics().elidedText(self._independent_text,
                                                       Qt.TextElideMode.ElideRight, width))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if getattr(self, "_independent_text", None) is not None:
            self._show_independent_text()

    @staticmethod
    def _actuated(draft: MechanismDraft) -> list[str]:
        """The actuated joints of the last valid mechanism (the default independent ones)."""
        return [draft.robot.joint_names[j] for j in draft.robot.actuated]

    def _on_tolerance_edited(self) -> None:
        self.document.set_text(0, "tolerance", self.tolerance_edit.text())
        self.tolerance_edit.setModified(False)
        self.refresh()

    def _fill_menu(self) -> None:
        """The default (the actuated joints) or any set of links, one click each."""
        draft = self._draft()
        menu = self.independent_menu
        menu.clear()
        if draft is None:
            return
        names = draft.value(0, "independent")
        default = menu.addAction("The actuated joints (default)")
        default.setCheckable(True)
        default.setChecked(names is None)
        default.triggered.connect(lambda: self.set_independent(None))
        menu.addSeparator()
        held = set(names) if names is not None else set(self._actuated(draft))
        for name in draft.link_names():
            action = menu.addAction(name)
            action.setCheckable(True)
            action.setChecked(name in held)
            action.triggered.connect(lambda on, n=name: self.toggle_independent(n, on))

    def toggle_independent(self, name: str, held: bool) -> None:
        """Hold (or release) one joint; starts from the actuated joints if none were named."""
        draft = self._draft()
        assert draft is not None
        current = draft.value(0, "independent")
        names = list(current) if current is not None else self._actuated(draft)
        if held and name not in names:
            names.append(name)
        elif not held and name in names:
            names.remove(name)
        order = draft.link_names()
        self.set_independent(tuple(sorted(names, key=lambda n: order.index(n)
                                          if n in order else len(order))))

    def set_independent(self, names: tuple[str, ...] | None) -> None:
        """Name the independent joints (None: the actuated joints), as one undo step."""
        self.document.set_text(0, "independent", names if names else None)
