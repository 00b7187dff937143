"""The robot editor: the DH and inertia tables in tabs, with the link actions
(add, insert, delete, move up/down) that the window also puts in its Edit menu.

A mechanism adds, without changing how a serial arm looks:

- a chain selector above the tables: the DH and inertia tables show one chain at a
  time, numbered as core's messages count links ("chain 'leg 1', link 2"), or every
  chain in joint order;
- a "Chains" tab (gui/editors/structure_editors.py): name, the link each chain starts on,
  its base placement; chains added and removed;
- a "Loops" tab (same file): the loop joints and the assembly settings.

Errors that belong to no cell (a loop that cannot close, a parent cycle) are shown
in a banner above the tables, naming the loop or chain, with a link to the cells
core names.
"""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QSizePolicy, QStackedWidget,
                               QTabWidget, QToolBar, QVBoxLayout, QWidget)

from ..model.document import RobotDocument
from ..model.draft import (DH_COLUMNS, DRIVE_COLUMNS, INERTIA_COLUMNS,
                           MECHANISM_DH_COLUMNS, PLACEMENT_COLUMNS)
from ..model.mechanism_draft import TYRE
from .structure_editors import ChainsEditor, ForcesEditor, LoopsEditor, RoadEditor
from .tables import RobotTableModel, RobotTableView

__all__ = ["RobotEditor", "ALL_CHAINS"]

#: The chain selector's entry that shows every chain at once (joint order).
ALL_CHAINS = "All chains (joint order)"


class RobotEditor(QWidget):
    """Tabs "DH" (parameters), "Inertia" (mass and inertia) and "Drives" (friction and
    drives) over one `RobotDocument`; for a mechanism also "Chains", "Loops", "Forces"
    (and "Road" with a road or a tyre) and a chain selector; "Placement" for joints of
    several degrees of freedom.

    Attributes: ``dh_view``, ``inertia_view``, ``drive_view`` (RobotTableView),
    ``dh_model``, ``inertia_model``, ``drive_model``, ``chains`` (ChainsEditor),
    ``loops`` (LoopsEditor), ``forces`` (ForcesEditor), ``road`` (RoadEditor),
    ``chain_combo`` and the actions ``add_action``, ``insert_action``,
    ``delete_action``, ``up_action``, ``down_action``.
    """

    def __init__(self, document: RobotDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._chain: int | None = None  # the chain shown (None: all); mechanisms only
        self.dh_model = RobotTableModel(document, DH_COLUMNS, self,
                                        mechanism_columns=MECHANISM_DH_COLUMNS)
        self.inertia_model = RobotTableModel(document, INERTIA_COLUMNS, self,
                                             names_in_header=True)
        # Spherical, universal and free joints: where each sits and where it starts (a
        # tab of its own, shown only for models that have such joints).
        self.placement_model = RobotTableModel(document, PLACEMENT_COLUMNS, self,
                                               names_in_header=True)
        # Each joint's friction and drive (gear ratio, rotor inertia): zero friction and a
        # ratio of 1 unless the file gives them.
        self.drive_model = RobotTableModel(document, DRIVE_COLUMNS, self,
                                           names_in_header=True)
        self.dh_view = RobotTableView(self.dh_model)
        self.inertia_view = RobotTableView(self.inertia_model)
        self.placement_view = RobotTableView(self.placement_model)
        self.drive_view = RobotTableView(self.drive_model)
        self.dh_view.setObjectName("dhTable")
        self.inertia_view.setObjectName("inertiaTable")
        self.placement_view.setObjectName("placementTable")
        self.drive_view.setObjectName("driveTable")
        self._last_link_view = self.dh_view  # its current row follows to another tab
        self.chains = ChainsEditor(document)
        self.loops = LoopsEditor(document)
        self.loops.chain_for_new = lambda: self.shown_chain
        # A mechanism's springs, dampers and tyres, and its road: tabs of their own (the
        # road's shown while the model has a road or a tyre), rows added and removed.
        self.forces = ForcesEditor(document)
        self.road = RoadEditor(document)
        self.forces_model, self.forces_view = self.forces.model, self.forces.view
        self.road_model, self.road_view = self.road.model, self.road.view

        # Short tab names, full ones in the tooltips: a mechanism with joints of several
        # degrees of freedom has seven tabs, and at 1280x800 the long names pushed Forces
        # and Road behind the scroll arrows of a 550 px dock.
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setUsesScrollButtons(True)  # a narrower dock still reaches every tab
        self.tabs.setElideMode(Qt.TextElideMode.ElideNone)
        self.tabs.addTab(self.dh_view, "DH")
        self.tabs.setTabToolTip(0, "DH parameters: joint type, a, b, \u03b1, \u03b8 and limits "
                                "of each link")
        self.tabs.addTab(self.placement_view, "Placement")
        self.tabs.setTabToolTip(self.tabs.indexOf(self.placement_view),
                                "Where each spherical, universal and free joint sits (x, y, "
                                "z; roll, pitch, yaw in its parent's frame) and its home")
        self.tabs.addTab(self.inertia_view, "Inertia")
        self.tabs.setTabToolTip(self.tabs.indexOf(self.inertia_view),
                                "Mass and inertia: mass, mass centre and inertia of each link")
        self.tabs.addTab(self.drive_view, "Drives")
        self.tabs.setTabToolTip(self.tabs.indexOf(self.drive_view),
                                "Friction and drives: each joint's viscous and Coulomb "
                                "friction, gear ratio and motor rotor inertia (revolute "
                                "and prismatic joints)")
        self.tabs.addTab(self.chains, "Chains")
        self.tabs.addTab(self.loops, "Loops")
        self.tabs.addTab(self.forces, "Forces")
        self.tabs.setTabToolTip(self.tabs.indexOf(self.forces),
                                "Springs, dampers and tyres: links, points, stiffness, "
                                "damping, free length or radius")
        self.tabs.addTab(self.road, "Road")
        self.tabs.setTabToolTip(self.tabs.indexOf(self.road),
                                "The road's height h along the base x axis (the tyres "
                                "roll on it)")
        self.tabs.currentChanged.connect(self._on_tab_changed)

        self.add_action = self._action("+ Add", "Append a link at the end of the arm "
                                       "(after the last row)", self.add_link)
        self.insert_action = self._action("Insert", "Insert a link before the current row",
                                          self.insert_link)
        self.delete_action = self._action("\u2212 Delete", "Delete the selected links",
                                          self.delete_selected)
        self.up_action = self._action("\u25b2 Up", "Move the current link towards the base",
                                      lambda: self._move(-1))
        self.down_action = self._action("\u25bc Down", "Move the current link towards the "
                                        "end effector", lambda: self._move(+1))
        self.insert_action.setShortcut(QKeySequence(Qt.Modifier.CTRL | Qt.Key.Key_I))
        self.delete_action.setShortcut(QKeySequence(Qt.Modifier.CTRL | Qt.Key.Key_Delete))
        self.up_action.setShortcut(QKeySequence(Qt.Modifier.CTRL | Qt.Key.Key_Up))
        self.down_action.setShortcut(QKeySequence(Qt.Modifier.CTRL | Qt.Key.Key_Down))
        for a in self.link_actions:
            a.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(a)

        self.link_bar = QToolBar("Links")
        self.link_bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.link_bar.setMovable(False)
        for a in self.link_actions:
            self.link_bar.addAction(a)

        # A mechanism's chain selector: the link tables show the chain chosen here.
        self.chain_combo = QComboBox()
        self.chain_combo.setObjectName("chainSelector")
        self.chain_combo.setToolTip("The chain whose links the DH and inertia tables show")
        self.chain_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.chain_combo.setMinimumContentsLength(16)
        self.chain_combo.activated.connect(self._on_chain_chosen)
        self.chain_info = QLabel()
        self.chain_info.setObjectName("chainInfo")
        self.chain_bar = QWidget()
        self.chain_bar.setObjectName("chainBar")
        row = QHBoxLayout(self.chain_bar)
        row.setContentsMargins(4, 0, 4, 0)
        row.addWidget(QLabel("Chain"))
        row.addWidget(self.chain_combo, 1)
        row.addWidget(self.chain_info)

        # Errors that belong to no cell (a loop that cannot close, a parent cycle): shown
        # above the tables, where the person who just typed is looking.
        self.model_error_label = QLabel()
        self.model_error_label.setObjectName("modelError")
        self.model_error_label.setWordWrap(True)
        self.model_error_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.model_error_label.setStyleSheet("background: #F6C6C6; color: #7A1010; "
                                             "padding: 4px; border-radius: 3px;")
        self.model_error_label.linkActivated.connect(lambda _link: self.reveal_error())
        self.model_error_label.hide()

        # Above the tabs, the tools of the tab shown: the link actions and the chain
        # selector, or adding and removing chains, or loops (one height: no jumping).
        self.tools = QStackedWidget()
        self.tools.addWidget(_column(self.link_bar, self.chain_bar))
        self.tools.addWidget(_column(self.chains.bar, _hint(
            "Base pose: in the base frame, or in the start link's frame",
            "A chain starts on the base or on a link of another chain; its base x, y, z "
            "and roll, pitch, yaw place its frame 0 in the base frame or in that link's "
            "own frame.")))
        self.tools.addWidget(_column(self.loops.bar, _hint(
            "Points and axes in each link's own frame; 0, 0, 0 is its far end",
            "A loop joint joins two links (or a link and the base) at a point given in "
            "each link's own frame; 0, 0, 0 is the link's far end, the axis of a revolute "
            "or prismatic loop joint z by default.")))
        self.tools.addWidget(_column(self.forces.bar, _hint(
            "Points in each link's own frame; 0, 0, 0 is its far end",
            "A spring-damper acts along the line through its two points; a tyre pushes "
            "its wheel centre up while the road is nearer than its radius.")))
        self.tools.addWidget(_column(self.road.bar, _hint(
            "Height h along the base x axis; x increases row by row",
            "The road is linear between its points and flat beyond the ends; the tyres "
            "roll on it.")))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.tools)
        layout.addWidget(self.model_error_label)
        layout.addWidget(self.tabs, 1)

        for view in self.link_views:
            view.selectionModel().currentChanged.connect(self._update_actions)
        self.chains.view.selectionModel().currentChanged.connect(self._on_chain_row_changed)
        document.rows_inserted.connect(self._after_rows_changed)
        document.rows_removed.connect(self._after_rows_changed)
        document.rows_moved.connect(self._after_rows_changed)
        document.sheet_changed.connect(self._on_sheet_changed)
        document.sheet_reset.connect(self._on_sheet_changed)
        document.reset.connect(self._on_reset)
        document.rows_changed.connect(self._show_placement)  # a joint type typed
        self._on_reset()

    def _action(self, text: str, tip: str, slot) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        return action

    # ----- state ------------------------------------------------------------------
    @property
    def views(self) -> tuple[RobotTableView, ...]:
        """Every table view (the window commits their open cell editors before saving)."""
        return self.link_views + (self.chains.view, self.loops.view, self.forces_view,
                                  self.road_view)

    @property
    def link_views(self) -> tuple[RobotTableView, ...]:
        return (self.dh_view, self.placement_view, self.inertia_view, self.drive_view)

    @property
    def link_actions(self) -> tuple[QAction, ...]:
        return (self.add_action, self.insert_action, self.delete_action, self.up_action,
                self.down_action)

    @property
    def shown_chain(self) -> int | None:
        """The chain the link tables show (index in the mechanism), None: all or a robot."""
        return self._chain if self.document.is_mechanism else None

    def current_view(self) -> RobotTableView:
        """The table of the current tab (copy and paste go there)."""
        page = self.tabs.currentWidget()
        if page is self.chains:
            return self.chains.view
        if page in (self.loops, self.forces, self.road):
            return page.view
        assert isinstance(page, RobotTableView)
        return page

    def _link_view(self) -> RobotTableView:
        """The link table last shown (the link actions act on its current row)."""
        view = self.tabs.currentWidget()
        return view if view in self.link_views else self.dh_view

    def current_row(self) -> int | None:
        """Row of the current cell of the link table, or None."""
        index = self._link_view().currentIndex()
        return index.row() if index.isValid() else None

    def select_row(self, row: int) -> None:
        """Make link `row` current in both tables (keeping the current column); for a
        mechanism whose selector shows another chain, show the row's chain."""
        draft = self.document.draft
        if draft.edits_chains and 0 <= row < draft.n and self._chain is not None:
            chain = draft.chain_index_of_row(row)
            if chain != self._chain:
                self.show_chain(chain)
        for view in self.link_views:
            col = max(view.currentIndex().column(), 0)
            index = view.model().index(row, col)
            view.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def show_chain(self, chain: int | None) -> None:
        """Show chain number `chain` in the link tables (None: every chain)."""
        draft = self.document.draft
        if not draft.edits_chains:
            return
        if chain is not None and not 0 <= chain < len(draft.chains):
            chain = 0
        changed = chain != self._chain
        self._chain = chain
        self._apply_chain_filter()
        if changed and chain is not None:
            rows = draft.chain_rows(chain)
            current = self.current_row()
            if rows and current not in rows:
                self.select_row(rows[0])
        self._update_actions()

    def show_model_error(self, message: str) -> None:
        """Show (or, for "", hide) an error that belongs to no cell, e.g. core's "loop 'E':
        cannot be closed ..."; the last valid model stays in use meanwhile."""
        if message:
            link = (" <a href='show'>Show</a>" if self._error_cell(message) is not None
                    else "")
            self.model_error_label.setText(
                f"\u2716 {_html(message)}{link}<br>(The 3D view and runs keep the last valid "
                "mechanism; undo or change the value back.)")
        self.model_error_label.setVisible(bool(message))

    def reveal_error(self) -> bool:
        """Show the first cell marked with the model error (its tab, its chain)."""
        where = self._error_cell(self.document.model_error)
        if where is None:
            return False
        page, row, key = where
        self.tabs.setCurrentWidget(page)
        if page in self.link_views:
            self.select_row(row)
        view = page if isinstance(page, RobotTableView) else page.view
        model = view.table_model()
        view.setCurrentIndex(model.index(row, model.column_of(key)))
        view.setFocus()
        return True

    def _error_cell(self, message: str) -> tuple[QWidget, int, str] | None:
        """(page, row, key) of the first cell marked with `message`, or None."""
        draft = self.document.draft
        if not message or not draft.edits_chains:
            return None
        for row, key in sorted(k for k, v in draft.errors.items() if v == message and k[0] >= 0):
            sheet = draft.sheet_of(key)
            if sheet == "links":
                view = next(v for v in self.link_views
                            if key in {c.key for c in v.table_model().columns})
                return (view, row, key)
            if sheet == "chains":
                return (self.chains, row, key)
            if sheet == "loops":
                return (self.loops, row, key)
            if sheet in ("forces", "road"):
                return (self.forces if sheet == "forces" else self.road, row, key)
        return None

    # ----- actions ----------------------------------------------------------------
    def add_link(self) -> None:
        """Append a link (for a mechanism: to the chain shown, or the current row's
        chain) and make it current."""
        draft = self.document.draft
        chain = None
        if draft.edits_chains:
            row = self.current_row()
            chain = (self._chain if self._chain is not None
                     else draft.chain_index_of_row(row) if row is not None
                     else len(draft.chains) - 1)
        index = self.document.insert_link(None, chain)
        self.select_row(index)

    def insert_link(self) -> None:
        """Insert a link before the current one and make it current."""
        row = self.current_row()
        if row is not None:
            self.document.insert_link(row)
            self.select_row(row)

    def delete_selected(self) -> None:
        """Delete the selected rows if they are contiguous, else the current row."""
        view = self._link_view()
        rows = sorted({i.row() for i in view.selectedIndexes()})
        if not rows or rows[-1] - rows[0] + 1 != len(rows):
            row = self.current_row()
            rows = [row] if row is not None else []
        if rows and self.document.remove_links(rows[0], len(rows)):
            self.select_row(self._nearest_row(rows[0]))

    def _nearest_row(self, row: int) -> int:
        """`row` or, if it is not shown, the closest row shown before it."""
        draft = self.document.draft
        row = min(row, draft.n - 1)
        if draft.edits_chains and self._chain is not None:
            rows = draft.chain_rows(self._chain)
            if row not in rows:
                row = rows[-1]
        return row

    def _move(self, delta: int) -> None:
        row = self.current_row()
        if row is not None and self.document.move_link(row, delta):
            self.select_row(row + delta)

    # ----- keeping views in step ------------------------------------------------------
    def _on_tab_changed(self) -> None:
        page = self.tabs.currentWidget()
        self._show_tools(2 if page is self.loops else 1 if page is self.chains
                         else 3 if page is self.forces else 4 if page is self.road else 0)
        if page in self.link_views:
            # the row current in the link table last shown stays current
            other = self._last_link_view if self._last_link_view is not page else page
            self._last_link_view = page
            row = other.currentIndex().row()
            if row >= 0:
                col = max(page.currentIndex().column(), 0)
                page.setCurrentIndex(page.model().index(row, col))
        self._update_actions()

    def _show_tools(self, index: int) -> None:
        """Show the tools of one tab; the stack takes that page's height only (a serial
        arm's link bar is as high as it always was)."""
        Policy = QSizePolicy.Policy
        for i in range(self.tools.count()):
            page = self.tools.widget(i)
            page.setSizePolicy(Policy.Preferred if i == index else Policy.Ignored,
                               Policy.Maximum if i == index else Policy.Ignored)
        self.tools.setCurrentIndex(index)
        self.tools.setMaximumHeight(self.tools.widget(index).sizeHint().height())

    def _on_chain_chosen(self, item: int) -> None:
        draft = self.document.draft
        if draft.edits_chains:
            self.show_chain(item if item < len(draft.chains) else None)

    def _on_chain_row_changed(self, current, _previous=None) -> None:
        """Choosing a chain in the Chains tab shows its links in the link tables."""
        if current.isValid() and self._chain is not None:
            self.show_chain(current.row())
            self._fill_chain_combo()

    def _apply_chain_filter(self) -> None:
        draft = self.document.draft
        if draft.edits_chains and self._chain is not None:
            self._chain = min(self._chain, len(draft.chains) - 1)  # a chain was removed
        shown = (set(draft.chain_rows(self._chain))
                 if draft.edits_chains and self._chain is not None else None)
        for view in (self.dh_view, self.inertia_view, self.drive_view):
            for row in range(draft.n):
                view.setRowHidden(row, shown is not None and row not in shown)
        self._show_placement()
        self.dh_model.set_chain_starts(draft.edits_chains and shown is None)
        self._fill_chain_combo()

    def _fill_chain_combo(self) -> None:
        draft = self.document.draft
        if not draft.edits_chains:
            return
        names = [draft.chain_name(c) or f"chain {c + 1}" for c in range(len(draft.chains))]
        combo = self.chain_combo
        combo.blockSignals(True)
        if [combo.itemText(i) for i in range(combo.count())] != names + [ALL_CHAINS]:
            combo.clear()
            combo.addItems(names + [ALL_CHAINS])
        combo.setCurrentIndex(len(names) if self._chain is None else self._chain)
        combo.blockSignals(False)
        if self._chain is None:
            self.chain_info.setText(f"{draft.n} links")
        else:
            rows = draft.chain_rows(self._chain)
            parent = draft.value(self._chain, "parent")
            self.chain_info.setText(f"on {parent} \u00b7 {len(rows)} link{'s' * (len(rows) != 1)}"
                                    + (f" \u00b7 joints {rows[0] + 1}\u2013{rows[-1] + 1}"
                                       if len(rows) > 1 else f" \u00b7 joint {rows[0] + 1}"
                                       if rows else ""))

    def _show_placement(self, *_args) -> None:
        """The Joint placement tab is there while a link hangs on a spherical, universal
        or free joint (a DH arm's tabs are as they always were); its rows are those links,
        of every chain whichever chain the selector shows."""
        draft = self.document.draft
        placed = any(not draft.joint(row).is_dh for row in range(draft.n))
        index = self.tabs.indexOf(self.placement_view)
        if self.tabs.isTabVisible(index) != placed:
            self.tabs.setTabVisible(index, placed)
            if not self.tabs.isTabVisible(self.tabs.currentIndex()):
                self.tabs.setCurrentIndex(0)
        for row in range(draft.n):  # every chain's: a car has one such joint per chain
            self.placement_view.setRowHidden(row, draft.joint(row).is_dh)

    def _show_road(self) -> None:
        """The Road tab is there while the mechanism has road points or a tyre (a tyre
        added shows it: its road is the plane z = 0 until points are added)."""
        draft = self.document.draft
        shown = draft.edits_chains and (
            bool(draft.road) or any(rec.cells["force_kind"] == TYRE for rec in draft.forces))
        index = self.tabs.indexOf(self.road)
        if self.tabs.isTabVisible(index) != shown:
            self.tabs.setTabVisible(index, shown)
            if not self.tabs.isTabVisible(self.tabs.currentIndex()):
                self.tabs.setCurrentIndex(0)

    def _after_rows_changed(self, *_args) -> None:
        self._apply_chain_filter()
        self._update_actions()

    def _on_sheet_changed(self, sheet: str) -> None:
        draft = self.document.draft
        if sheet == "chains" and draft.edits_chains:
            self._apply_chain_filter()
        if sheet in ("chains", "loops", "forces", "road"):
            self.show_model_error(self.document.model_error)
        if sheet in ("forces", "road"):
            self._show_road()

    def _on_reset(self) -> None:
        mechanism = self.document.is_mechanism
        self.chain_bar.setVisible(mechanism)
        for page in (self.chains, self.loops):
            self.tabs.setTabVisible(self.tabs.indexOf(page), mechanism)
        self.tabs.setTabVisible(self.tabs.indexOf(self.forces), mechanism)
        self._show_road()
        if not self.tabs.isTabVisible(self.tabs.currentIndex()):
            self.tabs.setCurrentIndex(0)
        self._show_placement()
        self._chain = 0 if mechanism else None
        self._on_tab_changed()
        for view in self.views:
            view.fit_columns()
        self._apply_chain_filter()
        self.select_row(0)
        self._update_actions()

    def _update_actions(self, *_args) -> None:
        draft = self.document.draft
        on_links = self.tabs.currentWidget() in self.link_views
        row = self.current_row() if on_links else None
        mechanism = draft.edits_chains
        self.add_action.setEnabled(on_links)
        self.add_action.setToolTip("Append a link at the end of the chain shown" if mechanism
                                   else "Append a link at the end of the arm (after the last row)")
        self.insert_action.setEnabled(row is not None)
        self.delete_action.setEnabled(row is not None and draft.can_remove(row, 1))
        self.up_action.setEnabled(row is not None and draft.can_move(row, row - 1))
        self.down_action.setEnabled(row is not None and draft.can_move(row, row + 1))


def _column(*widgets: QWidget) -> QWidget:
    """`widgets` stacked without margins."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for w in widgets:
        layout.addWidget(w)
    layout.addStretch(1)
    return box


def _hint(text: str, tip: str) -> QLabel:
    """A one-line grey hint (clipped if the dock is narrow; `tip` says it all)."""
    label = QLabel(text)
    label.setToolTip(tip)
    label.setStyleSheet("color: #5A606B; padding: 0 4px;")
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    return label


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
