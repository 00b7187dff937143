"""The ArmDyn main window: robot tables and pose sliders (left), 3D view (centre),
run and inspect panels (right), playback and plots (bottom), and the menus.

State the window owns:

- ``document``: the robot being edited (`RobotDocument`: tables, undo, file path);
  ``files`` (`RobotFiles`) opens and saves it
- ``pose``: the current joint values q (rad / m), announced by ``pose_changed``
- ``trajectory``: the last run's result (for playback and CSV export)

Everything downstream (3D view, pose sliders, run panel, plots, inspect)
receives only the document's last *valid* robot.

The run, plots, playback, inspect and export modules are optional: the window
works without them (their docks and menu entries are then left out).
"""
from __future__ import annotations

import importlib
import logging
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QImage, QKeySequence, QPainter, QShowEvent
from PySide6.QtWidgets import (QDockWidget, QLabel, QMainWindow, QMenu, QMessageBox,
                               QScrollArea, QStyle, QToolBar, QToolButton, QVBoxLayout, QWidget)

from armdyn.core import LoopClosureError, Mechanism, Robot, assemble
from armdyn.core.algorithms.mechanism_pose import follow_independent

from .model.bundled import bundled_models
from .panels.compare import install_compare
from .model.document import RobotDocument
from .model.draft import new_robot
from .panels.lab_dock import install_lab
from .editors.pose_panel import PosePanel, carry_pose
from .panels.presentation import install_presentation
from .scene.push import install_push
from .model.recent_files import RecentFiles
from .editors.robot_editor import RobotEditor
from .robot_files import RobotFiles
from .look.scroll import scroll_area
from .scene.tool_drag import install_tool_drag
from .scene.view3d import ArmView

__all__ = ["MainWindow"]

log = logging.getLogger(__name__)

#: Default height of the Results dock (playback bar and plots), share of the window's.
RESULTS_SHARE = 0.45
RESULTS_MIN_HEIGHT = 400  # px


def _scrolling(widget: QWidget) -> QScrollArea:
    """`widget` in a frameless scroll area that resizes it (for a dock that may be low)."""
    return scroll_area(widget, name=f"{widget.objectName() or type(widget).__name__}Scroll",
                       vertical_only=True, fit_width=True)


def _optional(module: str, name: str):
    """`name` from gui.`module`, or None (logged) if that module is not there or broken."""
    try:
        return getattr(importlib.import_module(f"{__package__}.{module}"), name)
    except Exception as e:  # an optional panel must never keep the window from opening
        log.warning("gui.%s.%s is not available: %s", module, name, e)
        return None


class MainWindow(QMainWindow):
    """The main window. See the module docstring.

    robot, path    : the robot to show and its file (None: a new, unsaved robot)
    settings       : where recent files and the window layout live (default: QSettings())
    restore_layout : restore the saved window layout, and save it on close (scripted
                     runs and tests pass False and get the default layout)

    Signals: ``pose_changed(np.ndarray)`` (q in rad / m), ``robot_changed(Robot)``
    (a new valid robot).
    """

    pose_changed = Signal(object)
    robot_changed = Signal(object)

    def __init__(self, robot: Robot | None = None, path: Path | None = None, *,
                 settings: QSettings | None = None, restore_layout: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ArmDynMainWindow")
        self.settings = settings if settings is not None else QSettings()
        self.document = RobotDocument(robot or new_robot(), path, self)
        self.pose = self.document.robot.q_home.copy()
        self.trajectory = None
        self._shown_robot: Robot | None = None
        self._sized = False
        self._error_message = ""
        self._remember_layout = restore_layout  # scripted runs and tests leave it alone

        self._build_widgets()
        self._build_actions()
        self._build_menus()
        self._build_status_bar()
        self._connect()
        # drag the tool in the 3D view (gui/scene/tool_drag.py): toolbar and View menu
        self.tool_drag = install_tool_drag(self)
        # push the arm with Ctrl+drag during a live free fall (gui/scene/push.py)
        self.push = install_push(self)
        # compare two runs on one time axis (gui/panels/compare.py): a dock, View menu, Ctrl+K
        self._compare = install_compare(self)
        self.compare_dock = self._compare.dock
        # presentation mode for a projector (gui/panels/presentation.py): View menu, F5
        self.presentation = (install_presentation(self) if self.plots_dock is not None
                             else None)
        self._on_robot_changed(self.document.robot)
        self._on_errors_changed()
        self._update_title()
        self.resize(1600, 1000)
        if restore_layout:
            self._restore_layout()

    # ==================================================================================
    # Construction
    # ==================================================================================
    def _build_widgets(self) -> None:
        self.editor = RobotEditor(self.document)
        self.files = RobotFiles(self, self.document, RecentFiles(self.settings),
                                self.editor.views)
        self.view3d = ArmView()
        self.pose_panel = PosePanel()

        RunPanel = _optional("panels.run_panel", "RunPanel")
        PlotsPanel = _optional("plots.plots_panel", "PlotsPanel")
        PlaybackBar = _optional("plots.playback", "PlaybackBar")
        InspectPanel = _optional("panels.inspect_panel", "InspectPanel")
        self.run_panel = RunPanel() if RunPanel else None
        self.plots = PlotsPanel() if PlotsPanel else None
        self.playback = PlaybackBar() if PlaybackBar else None
        self.inspect = InspectPanel() if InspectPanel else None
        self._export_csv = _optional("export", "export_trajectory_csv")

        centre = QWidget()
        centre.setObjectName("centre")
        layout = QVBoxLayout(centre)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.view_bar = QToolBar("3D view")
        self.view_bar.setObjectName("viewBar")
        self.view_bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        layout.addWidget(self.view_bar)
        layout.addWidget(self.view3d, 1)
        if self.playback is not None and self.plots is None:
            layout.addWidget(self.playback)
        self.setCentralWidget(centre)

        self.setDockNestingEnabled(True)
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.TopLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.TopRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.BottomDockWidgetArea)
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        self.robot_dock = self._dock("Robot", "robotDock", self.editor, left)
        self.pose_dock = self._dock("Pose", "poseDock", self.pose_panel, left)
        self.splitDockWidget(self.robot_dock, self.pose_dock, Qt.Orientation.Vertical)
        right = Qt.DockWidgetArea.RightDockWidgetArea
        # The run panel scrolls when it is lower than its content, so that the window's
        # default layout can give the results (below it) a good share of the height.
        self.run_dock = (self._dock("Run", "runDock", _scrolling(self.run_panel), right)
                         if self.run_panel else None)
        self.plots_dock = None
        if self.plots is not None:
            # The playback bar sits on top of the plots: one time line for both the
            # animation and the curves (and the full width of the window for its slider).
            results = QWidget()
            column = QVBoxLayout(results)
            column.setContentsMargins(0, 0, 0, 0)
            column.setSpacing(0)
            if self.playback is not None:
                column.addWidget(self.playback)
            column.addWidget(self.plots, 1)
            self.plots_dock = self._dock("Results", "plotsDock", results,
                                         Qt.DockWidgetArea.BottomDockWidgetArea)
        # The inspect tables (n x n mass matrix, 6x6 inertias) need width: they share
        # the wide bottom area with the results, behind a tab.
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        self.inspect_dock = (self._dock("Inspect", "inspectDock", self.inspect, bottom)
                             if self.inspect else None)
        self._tabify_inspect()
        # the teaching lab (gui/panels/lab_dock.py, gui/panels/lab_panel.py): a dock tabbed with Inspect,
        # wired to the robot and the pose, its panel built on first use; its action goes
        # into the View menu
        self._lab = install_lab(self)
        self.lab_dock, self.lab_action = self._lab.dock, self._lab.action

    @property
    def compare(self):
        """The Compare dock's panel (`gui.panels.compare.ComparePanel`), built on first use."""
        return self._compare.panel

    @property
    def lab(self):
        """The teaching lab's panel (`gui.panels.lab_panel.LabPanel`), built on first use."""
        return self._lab.panel

    def _tabify_inspect(self) -> None:
        if self.plots_dock and self.inspect_dock:
            self.tabifyDockWidget(self.plots_dock, self.inspect_dock)
            self.plots_dock.raise_()

    def _dock(self, title: str, name: str, widget: QWidget,
              area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, text: str, slot, shortcut=None, tip: str = "", icon=None,
                checkable: bool = False) -> QAction:
        action = QAction(text, self)
        if icon is not None:
            action.setIcon(self.style().standardIcon(icon))
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.setCheckable(checkable)
        (action.toggled if checkable else action.triggered).connect(slot)
        return action

    def _build_actions(self) -> None:
        SP = QStyle.StandardPixmap
        KS = QKeySequence.StandardKey
        a = self._action
        f = self.files
        self.new_action = a("&New", f.new, KS.New, "Start a new robot", SP.SP_FileIcon)
        self.open_action = a("&Open\u2026", lambda: f.open(), KS.Open, "Open a robot file",
                             SP.SP_DialogOpenButton)
        self.save_action = a("&Save", f.save, KS.Save, "Save the robot",
                             SP.SP_DialogSaveButton)
        self.save_as_action = a("Save &As\u2026", f.save_as, KS.SaveAs,
                                "Save the robot under a new name")
        self.export_png_action = a("3D View as &PNG\u2026", self.export_view_png,
                                   tip="Save the 3D view as an image")
        self.export_csv_action = a("Results as &CSV\u2026", self.export_results_csv,
                                   tip="Save the last run's samples as CSV")
        self.export_plots_action = a("Plot &Images\u2026", self.export_plot_images,
                                     tip="Save the plots as PNG images in a folder")
        self.export_video_action = a("Animation as &Video\u2026", self.export_video,
                                     tip="Record the last run's animation as MP4 or GIF")
        self.quit_action = a("&Quit", self.close, KS.Quit, "Quit ArmDyn")

        stack = self.document.undo_stack
        self.undo_action = stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence(KS.Undo))
        self.undo_action.setIcon(self.style().standardIcon(SP.SP_ArrowBack))
        self.redo_action = stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcut(QKeySequence(KS.Redo))
        self.redo_action.setIcon(self.style().standardIcon(SP.SP_ArrowForward))
        self.copy_action = a("&Copy Cells", lambda: self._table().copy(), KS.Copy,
                             "Copy the selected cells as tab-separated text")
        self.paste_action = a("&Paste Cells", lambda: self._table().paste(), KS.Paste,
                              "Paste tab-separated text into the table")
        # The table views handle Ctrl+C / Ctrl+V themselves when they have focus.
        for action in (self.copy_action, self.paste_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)

        v = self.view3d
        self.fit_action = a("&Fit", v.fit, "F", "Zoom to fit the arm")
        self.reset_view_action = a("&Reset View", v.reset_camera, "R",
                                   "Iso view, perspective, arm fitted")
        self.view_actions = {name: a(name.capitalize(), lambda _=False, n=name: v.view(n), key,
                                     f"Look from the {name}")
                             for name, key in (("front", "1"), ("side", "3"), ("top", "7"),
                                               ("iso", "5"))}
        self.frames_action = a("Frames", lambda on: v.set_layer_visible("frames", on),
                               tip="Show the DH frame of every link (x red, y green, z blue)",
                               checkable=True)
        self.com_action = a("Mass Centres", lambda on: v.set_layer_visible("com", on),
                            tip="Show each link's mass centre", checkable=True)
        self.floor_action = a("Floor", lambda on: v.set_layer_visible("ground", on),
                              tip="Show the base, the floor and its grid", checkable=True)
        self.ortho_action = a("Ortho", v.set_orthographic,
                              tip="Parallel projection (no perspective)", checkable=True)
        self.floor_action.setChecked(True)
        for action in self.view_actions.values():
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.view3d.addAction(action)
        for action in (self.fit_action, self.reset_view_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.view3d.addAction(action)
        self.reset_layout_action = a("Reset &Layout", self.reset_layout,
                                     tip="Put every panel back in its place")
        self.about_action = a("&About ArmDyn", self.about)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        file.addAction(self.new_action)
        file.addAction(self.open_action)
        robots, mechanisms = bundled_models()
        self.bundled_menu = file.addMenu("Open &Bundled Robot")
        for title, path in robots:
            action = self.bundled_menu.addAction(title, lambda p=path: self.files.open(p))
            action.setStatusTip(str(path))
        self.bundled_menu.setEnabled(not self.bundled_menu.isEmpty())
        self.bundled_mechanism_menu = file.addMenu("Open Bundled &Mechanism")
        for title, path in mechanisms:
            action = self.bundled_mechanism_menu.addAction(title,
                                                           lambda p=path: self.files.open(p))
            action.setStatusTip(str(path))
        self.bundled_mechanism_menu.setEnabled(not self.bundled_mechanism_menu.isEmpty())
        self.recent_menu = file.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file.addSeparator()
        file.addAction(self.save_action)
        file.addAction(self.save_as_action)
        file.addSeparator()
        export = file.addMenu("&Export")
        export.addAction(self.export_png_action)
        export.addAction(self.export_csv_action)
        export.addAction(self.export_plots_action)
        export.addAction(self.export_video_action)
        file.addSeparator()
        file.addAction(self.quit_action)

        edit = bar.addMenu("&Edit")
        edit.addAction(self.undo_action)
        edit.addAction(self.redo_action)
        edit.addSeparator()
        edit.addAction(self.copy_action)
        edit.addAction(self.paste_action)
        edit.addSeparator()
        for action in self.editor.link_actions:
            edit.addAction(action)

        view = bar.addMenu("&View")
        view.addAction(self.fit_action)
        view.addAction(self.reset_view_action)
        for action in self.view_actions.values():
            view.addAction(action)
        view.addSeparator()
        for action in (self.frames_action, self.com_action, self.floor_action,
                       self.ortho_action):
            view.addAction(action)
        view.addSeparator()
        view.addAction(self.lab_action)
        panels = view.addMenu("&Panels")
        for dock in self._docks():
            panels.addAction(dock.toggleViewAction())
        view.addAction(self.reset_layout_action)

        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.about_action)

        vb = self.view_bar
        vb.addAction(self.fit_action)
        for action in self.view_actions.values():
            vb.addAction(action)
        vb.addSeparator()
        vb.addAction(self.ortho_action)
        show = QMenu("Show", self)
        for action in (self.frames_action, self.com_action, self.floor_action):
            show.addAction(action)
        # An action (its menu's), not a widget: a narrow bar's overflow menu lists it as
        # the "Show" submenu (a widget there is a blank entry, issue #9).
        self.show_action = show.menuAction()
        self.show_action.setToolTip("Frames, mass centres, floor")
        vb.addAction(self.show_action)
        self.show_button = vb.widgetForAction(self.show_action)
        self.show_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)

    def _build_status_bar(self) -> None:
        self.validity_label = QLabel()
        self.validity_label.setObjectName("validity")
        self.summary_label = QLabel()
        self.summary_label.setObjectName("summary")
        self.statusBar().addPermanentWidget(self.summary_label)
        self.statusBar().addPermanentWidget(self.validity_label)

    def _connect(self) -> None:
        doc = self.document
        doc.robot_changed.connect(self._on_robot_changed)
        doc.errors_changed.connect(self._on_errors_changed)
        doc.path_changed.connect(self._update_title)
        self.files.loaded.connect(self._on_file_loaded)
        doc.modified_changed.connect(self._update_title)
        self.pose_panel.pose_edited.connect(self.set_pose)

        if self.run_panel is not None:
            self.pose_changed.connect(self.run_panel.set_pose)
            self.run_panel.started.connect(self._on_run_started)
            self.run_panel.finished.connect(self._on_run_finished)
            self.run_panel.stopped.connect(self._on_run_stopped)
            self.run_panel.failed.connect(self._on_run_failed)
            if self.plots is not None:
                self.run_panel.chunk.connect(self.plots.append)
        if self.inspect is not None:
            self.pose_changed.connect(self._inspect_pose)
        if self.playback is not None:
            self.playback.frame.connect(self._on_playback_frame)
        if self.plots is not None and self.playback is not None:
            seek = getattr(self.playback, "seek", None)
            if seek is not None:
                self.plots.time_picked.connect(seek)

    # ==================================================================================
    # Robot, validity and pose
    # ==================================================================================
    def _on_robot_changed(self, robot: Robot | Mechanism) -> None:
        """A new valid robot or mechanism: every panel gets it; the pose carries over where
        it can (a mechanism's carried pose is closed again, else it goes home)."""
        q = carry_pose(self._shown_robot, robot, self.pose)
        if robot.loops:
            try:
                q = assemble(robot, q)
            except LoopClosureError:
                q = robot.q_home.copy()
        self._shown_robot = robot
        self.pose = q
        self.trajectory = None
        self.view3d.set_robot(robot, q)
        self.pose_panel.set_robot(robot, q)
        if self.run_panel is not None:
            self.run_panel.set_robot(robot)
        if self.plots is not None:
            self.plots.set_robot(robot)
        if self.playback is not None:
            self.playback.clear()
        self.summary_label.setText(self._summary(robot))
        for warning in robot.warnings:
            self.statusBar().showMessage(f"Warning: {warning}", 10000)
        self._update_title()
        self._update_export_actions()
        self.robot_changed.emit(robot)
        self.pose_changed.emit(q.copy())

    @staticmethod
    def _summary(robot: Robot | Mechanism) -> str:
        """Status-bar summary: links and mass; a mechanism adds chains, loops and DOF."""
        text = f"{robot.n} links \u00b7 {robot.total_mass:.3g} kg"
        if isinstance(robot, Mechanism):
            chains, loops = len(robot.chains), len(robot.loops)
            text = (f"{chains} chain{'s' * (chains != 1)} \u00b7 {loops} "
                    f"loop{'s' * (loops != 1)} \u00b7 {robot.dof} DOF \u00b7 " + text)
        return text

    def _on_errors_changed(self) -> None:
        doc = self.document
        bad = len(doc.errors)
        self.editor.show_model_error(doc.model_error)
        if bad:
            what = "last valid mechanism" if doc.is_mechanism else "last valid robot"
            if doc.model_error:
                self.validity_label.setText("\u2716 the mechanism cannot be built")
            else:
                self.validity_label.setText(f"\u2716 {bad} invalid cell{'s' * (bad != 1)}")
            self.validity_label.setProperty("state", "invalid")
            self._error_message = (f"{doc.model_error or doc.first_error} \u2014 the 3D view "
                                   f"and runs use the {what}.")
            self.statusBar().showMessage(self._error_message)
        else:
            self.validity_label.setText("\u2714 valid")
            self.validity_label.setProperty("state", "valid")
            if self.statusBar().currentMessage() == self._error_message:
                self.statusBar().clearMessage()
            self._error_message = ""
        self.validity_label.style().unpolish(self.validity_label)
        self.validity_label.style().polish(self.validity_label)
        if self.run_panel is not None:
            self.run_panel.setEnabled(doc.is_valid)
            self.run_panel.setToolTip("" if doc.is_valid else
                                      "Fix the marked table cells to run")

    def set_pose(self, q) -> bool:
        """Make q (rad / m, shape (n,)) the current pose: 3D view, sliders, panels.

        For a mechanism with loops, q's independent joints are the input: the
        loops are closed by moving them there from the current pose in small steps
        (`core.algorithms.mechanism_pose.follow_independent`, so the branch follows a drag).
        A pose whose loops cannot close is refused: the sliders snap back, the status
        bar names the loop, and False is returned.
        """
        q = np.array(q, dtype=float)
        robot = self.document.robot
        if q.shape != (robot.n,):
            raise ValueError(f"pose must have shape ({robot.n},), got {q.shape}")
        if robot.loops:
            try:
                q = follow_independent(robot, self.pose, q)
            except LoopClosureError as err:
                self.pose_panel.set_pose(self.pose)
                self.statusBar().showMessage(f"Pose not reachable, snapped back: {err}", 8000)
                return False
        self.pose = q
        self.view3d.set_pose(q)
        self.pose_panel.set_pose(q)
        self.pose_changed.emit(q.copy())
        return True

    # ==================================================================================
    # Runs, plots, playback
    # ==================================================================================
    def _on_run_started(self) -> None:
        self.trajectory = None
        if self.plots is not None:
            self.plots.clear()
            # fixed time axes while the chunks stream in (issue #8)
            self.plots.set_run_duration(self.run_panel.duration)
        if self.playback is not None:
            self.playback.clear()
        self._update_export_actions()

    def _on_run_failed(self, message: str) -> None:
        if self.plots is not None:
            self.plots.set_run_duration(None)
        self.statusBar().showMessage(f"Run failed: {message}")

    def _inspect_pose(self, q: np.ndarray) -> None:
        self.inspect.set_state(self.document.robot, q)

    def _on_run_finished(self, traj) -> None:
        self._show_trajectory(traj)

    def _on_run_stopped(self, partial) -> None:
        if partial is not None and len(partial):
            self._show_trajectory(partial)
        elif self.plots is not None:
            self.plots.set_run_duration(None)

    def _show_trajectory(self, traj) -> None:
        self.trajectory = traj
        if self.plots is not None:
            self.plots.set_trajectory(traj)
        if self.playback is not None:
            self.playback.set_trajectory(traj)
        self._update_export_actions()

    def _on_playback_frame(self, t: float, q) -> None:
        """Playback moves the 3D view (the camera keeps the arm in sight) and Inspect
        (the sample at t: q, q', q''); the pose (sliders, run start) stays."""
        self.view3d.set_pose(np.asarray(q, dtype=float), keep_in_view=True)
        if self.plots is not None:
            self.plots.set_cursor_time(t)
        traj = self.trajectory
        if self.inspect is not None and traj is not None and len(traj):
            k = min(int(np.searchsorted(traj.t, t)), len(traj) - 1)
            if k > 0 and t - traj.t[k - 1] < traj.t[k] - t:
                k -= 1
            self.inspect.set_state(self.document.robot, traj.q[k], traj.qd[k], traj.qdd[k])

    def show_last_frame(self) -> None:
        """Show the last sample of the last run in the 3D view and on the plots."""
        traj = self.trajectory
        if traj is None or len(traj) == 0:
            return
        if self.playback is not None:
            self.playback.seek(float(traj.t[-1]))  # emits the frame
        else:
            self._on_playback_frame(float(traj.t[-1]), traj.q[-1])
        self.view3d.render_now()

    def _update_export_actions(self) -> None:
        has_run = self.trajectory is not None and len(self.trajectory) > 0
        self.export_csv_action.setEnabled(has_run and self._export_csv is not None)
        self.export_video_action.setEnabled(has_run)
        self.export_plots_action.setEnabled(
            self.plots is not None and hasattr(self.plots, "export_images"))

    # ==================================================================================
    # Export
    # ==================================================================================
    def image(self) -> QImage:
        """The window as it is shown, the 3D picture included (`QWidget.grab` leaves out
        the native window VTK draws into)."""
        image = self.grab().toImage()
        plotter = self.view3d.plotter
        if plotter.isVisible():
            painter = QPainter(image)
            painter.drawImage(QRect(plotter.mapTo(self, QPoint(0, 0)), plotter.size()),
                              self.view3d.image())
            # the one widget shown over the 3D view
            help_ = self.presentation.help if self.presentation is not None else None
            if help_ is not None and help_.isVisible():
                help_.render(painter, help_.mapTo(self, QPoint(0, 0)))
            painter.end()
        return image

    def export_view_png(self) -> bool:
        stem = Path(self.files.suggested_name()).with_suffix("")
        path = self.files.ask_save_path("Export 3D View", "PNG images (*.png)", ".png",
                                        f"{stem}_3d.png")
        if path is None:
            return False
        try:
            self.view3d.export_png(path)
        except (OSError, ValueError, RuntimeError) as e:
            self.files.error("Cannot export the 3D view", f"{path}: {e}")
            return False
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def export_results_csv(self) -> bool:
        if self.trajectory is None or self._export_csv is None:
            return False
        stem = Path(self.files.suggested_name()).with_suffix("")
        path = self.files.ask_save_path("Export Results", "CSV files (*.csv)", ".csv",
                                        f"{stem}_{self.trajectory.kind}.csv")
        if path is None:
            return False
        try:
            self._export_csv(self.trajectory, self.document.robot, path)
        except (OSError, ValueError) as e:
            self.files.error("Cannot export the results", f"{path}: {e}")
            return False
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def export_video(self):
        """File > Export > Animation as Video (gui.video): the recorder, or None."""
        from . import video  # imageio and its encoder load only when recording
        return video.export_video(self)

    def export_plot_images(self) -> bool:
        if self.plots is None:
            return False
        folder = self.files.ask_directory("Export Plot Images to Folder")
        if folder is None:
            return False
        try:
            written = self.plots.export_images(folder)
        except (OSError, ValueError) as e:
            self.files.error("Cannot export the plots", f"{folder}: {e}")
            return False
        count = len(written) if written is not None else 0
        self.statusBar().showMessage(f"Saved {count} plot images in {folder}", 5000)
        return True

    # ==================================================================================
    # Window
    # ==================================================================================
    def _fill_recent_menu(self) -> None:
        self.files.fill_recent_menu(self.recent_menu)

    def _on_file_loaded(self, _path) -> None:
        self.view3d.reset_camera()

    def _table(self):
        return self.editor.current_view()

    def _docks(self) -> list[QDockWidget]:
        return [d for d in (self.robot_dock, self.pose_dock, self.run_dock, self.inspect_dock,
                            self.plots_dock) if d is not None]

    def _update_title(self, *_args) -> None:
        doc = self.document
        where = doc.path.name if doc.path is not None else "not saved"
        self.setWindowTitle(f"{doc.robot.name} \u2014 {where}[*] \u2014 ArmDyn")
        self.setWindowModified(doc.is_modified)

    def about(self) -> None:
        QMessageBox.about(self, "About ArmDyn",
                          "<b>ArmDyn</b><br>Dynamics of robot arms and mechanisms (trees, "
                          "closed chains, parallel robots): DH and inertia tables, 3D view, "
                          "inverse dynamics and free-fall simulation with the recursive "
                          "DeNOC algorithms.")

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(1600, 1000)

    def reset_layout(self) -> None:
        """Every dock visible, docked, at its default place and size."""
        for dock in self._docks():
            dock.setFloating(False)
            dock.show()
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.robot_dock)
        self.splitDockWidget(self.robot_dock, self.pose_dock, Qt.Orientation.Vertical)
        if self.run_dock:
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.run_dock)
        if self.plots_dock:
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.plots_dock)
        if self.inspect_dock:
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.inspect_dock)
        self._tabify_inspect()
        self._size_docks()

    def _size_docks(self) -> None:
        """Default proportions: tables ~1/3 of the width, results ~45 % of the height."""
        w, h = self.width(), self.height()
        left = int(min(max(0.345 * w, 420), 620))
        self.resizeDocks([self.robot_dock], [left], Qt.Orientation.Horizontal)
        self.resizeDocks([self.robot_dock, self.pose_dock],
                         [int(0.58 * h), int(0.42 * h)], Qt.Orientation.Vertical)
        if self.run_dock:
            self.resizeDocks([self.run_dock], [int(min(max(0.2 * w, 300), 420))],
                             Qt.Orientation.Horizontal)
        if self.plots_dock:
            # ~45 %; at least RESULTS_MIN_HEIGHT on a small screen (then up to ~half).
            results = min(max(RESULTS_SHARE * h, RESULTS_MIN_HEIGHT), 0.52 * h)
            self.resizeDocks([self.plots_dock], [int(results)], Qt.Orientation.Vertical)

    def _restore_layout(self) -> None:
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self._sized = self.restoreState(state)

    def _save_layout(self) -> None:
        if not self._remember_layout:
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            # After the first layout pass, so that the sizes refer to the real window.
            QTimer.singleShot(0, self._size_docks)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if not self.files.maybe_save():
            event.ignore()
            return
        self._save_layout()
        self.shutdown()
        event.accept()

    def shutdown(self) -> None:
        """Stop every worker thread and timer and release the 3D view."""
        if self.run_panel is not None:
            self.run_panel.shutdown()
        self._lab.shutdown()
        self.tool_drag.shutdown()
        self._compare.shutdown()
        self.view3d.shutdown()
