"""The robot editor: the DH and inertia tables in tabs, with the link actions
(add, insert, delete, move up/down) that the window also puts in its Edit menu."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QTabWidget, QToolBar, QVBoxLayout, QWidget

from .document import RobotDocument
from .draft import DH_COLUMNS, INERTIA_COLUMNS, MECHANISM_DH_COLUMNS
from .tables import RobotTableModel, RobotTableView

__all__ = ["RobotEditor"]


class RobotEditor(QWidget):
    """Tabs "DH parameters" and "Mass and inertia" over one `RobotDocument`.

    Attributes: ``dh_view``, ``inertia_view`` (RobotTableView), ``dh_model``,
    ``inertia_model`` and the actions ``add_action``, ``insert_action``,
    ``delete_action``, ``up_action``, ``down_action``.
    """

    def __init__(self, document: RobotDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.dh_model = RobotTableModel(document, DH_COLUMNS, self,
                                        mechanism_columns=MECHANISM_DH_COLUMNS)
        self.inertia_model = RobotTableModel(document, INERTIA_COLUMNS, self,
                                             names_in_header=True)
        self.dh_view = RobotTableView(self.dh_model)
        self.inertia_view = RobotTableView(self.inertia_model)
        self.dh_view.setObjectName("dhTable")
        self.inertia_view.setObjectName("inertiaTable")

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.dh_view, "DH parameters")
        self.tabs.addTab(self.inertia_view, "Mass and inertia")
        self.tabs.currentChanged.connect(self._sync_current_row)

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

        bar = QToolBar("Links")
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        bar.setMovable(False)
        for a in self.link_actions:
            bar.addAction(a)

        # Errors that belong to no cell (a loop that cannot close, a parent cycle): shown
        # above the tables, where the person who just typed is looking.
        self.model_error_label = QLabel()
        self.model_error_label.setObjectName("modelError")
        self.model_error_label.setWordWrap(True)
        self.model_error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model_error_label.setStyleSheet("background: #F6C6C6; color: #7A1010; "
                                             "padding: 4px; border-radius: 3px;")
        self.model_error_label.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(bar)
        layout.addWidget(self.model_error_label)
        layout.addWidget(self.tabs, 1)

        for view in self.views:
            view.selectionModel().currentChanged.connect(self._update_actions)
        document.rows_inserted.connect(self._update_actions)
        document.rows_removed.connect(self._update_actions)
        document.rows_moved.connect(self._update_actions)
        document.reset.connect(self._on_reset)
        self.select_row(0)  # a current row from the start: the link actions are usable
        self._update_actions()

    def _action(self, text: str, tip: str, slot) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        return action

    # ----- state ------------------------------------------------------------------
    @property
    def views(self) -> tuple[RobotTableView, RobotTableView]:
        return (self.dh_view, self.inertia_view)

    @property
    def link_actions(self) -> tuple[QAction, ...]:
        return (self.add_action, self.insert_action, self.delete_action, self.up_action,
                self.down_action)

    def current_view(self) -> RobotTableView:
        view = self.tabs.currentWidget()
        assert isinstance(view, RobotTableView)
        return view

    def current_row(self) -> int | None:
        """Row of the current cell of the visible table, or None."""
        index = self.current_view().currentIndex()
        return index.row() if index.isValid() else None

    def select_row(self, row: int) -> None:
        """Make `row` current in both tables (keeping the current column)."""
        for view in self.views:
            col = max(view.currentIndex().column(), 0)
            index = view.model().index(row, col)
            view.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def show_model_error(self, message: str) -> None:
        """Show (or, for "", hide) an error that belongs to no cell, e.g. core's "loop 'E':
        cannot be closed ..."; the last valid model stays in use meanwhile."""
        self.model_error_label.setText(
            f"\u2716 {message}\n(The 3D view and runs keep the last valid mechanism; "
            "undo or change the value back.)" if message else "")
        self.model_error_label.setVisible(bool(message))

    # ----- actions ----------------------------------------------------------------
    def add_link(self) -> None:
        """Append a link and make it current."""
        self.document.insert_link(None)
        self.select_row(self.document.draft.n - 1)

    def insert_link(self) -> None:
        """Insert a link before the current one and make it current."""
        row = self.current_row()
        if row is not None:
            self.document.insert_link(row)
            self.select_row(row)

    def delete_selected(self) -> None:
        """Delete the selected rows if they are contiguous, else the current row."""
        view = self.current_view()
        rows = sorted({i.row() for i in view.selectedIndexes()})
        if not rows or rows[-1] - rows[0] + 1 != len(rows):
            row = self.current_row()
            rows = [row] if row is not None else []
        if rows and self.document.remove_links(rows[0], len(rows)):
            self.select_row(min(rows[0], self.document.draft.n - 1))

    def _move(self, delta: int) -> None:
        row = self.current_row()
        if row is not None and self.document.move_link(row, delta):
            self.select_row(row + delta)

    def _sync_current_row(self) -> None:
        row = self.views[1 - self.tabs.currentIndex()].currentIndex().row()
        if row >= 0:
            view = self.current_view()
            col = max(view.currentIndex().column(), 0)
            view.setCurrentIndex(view.model().index(row, col))
        self._update_actions()

    def _on_reset(self) -> None:
        for view in self.views:
            view.fit_columns()
        self.select_row(0)
        self._update_actions()

    def _update_actions(self, *_args) -> None:
        n = self.document.draft.n
        row = self.current_row()
        self.insert_action.setEnabled(row is not None)
        self.delete_action.setEnabled(row is not None and n > 1)
        self.up_action.setEnabled(row is not None and row > 0)
        self.down_action.setEnabled(row is not None and row < n - 1)
