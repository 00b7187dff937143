"""The ArmDyn main window: robot tables and pose sliders (left), 3D view (centre),
run and inspect panels (right), playback and plots (bottom), and the menus.

State the window owns:

- ``document``: the robot being edited (`RobotDocument`: tables, undo, file path);
  ``files`` (`RobotFiles`) opens and saves it
- ``session`` (`gui.model.session.Session`): what every panel shows, the document's
  last *valid* model, its pose and its runs (``pose`` and ``trajectory`` read it,
  `set_pose` goes through it)

The panels observe the session (their ``observe(session)``; the plug-ins, compare,
push, tool drag, presentation and the lab, connect to ``window.session``): the window
builds them, lays them out and forwards the document's valid models to the session.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QImage, QKeySequence, QPainter, QShowEvent
from PySide6.QtWidgets import (QDockWidget, QLabel, QMainWindow, QMenu, QMessageBox,
                               QScrollArea, QStyle, QToolBar, QToolButton, QVBoxLayout, QWidget)

from armdyn.core import Mechanism, Robot

from .editors.pose_panel import PosePanel
from .editors.robot_editor import RobotEditor
from .export import export_trajectory_csv
from .jobs.runs import RunOutcome, RunResult
from .look.scroll import scroll_area
from armdyn.core.io.bundled import bundled_models
from .model.document import RobotDocument
from .model.draft import new_robot
from .model.recent_files import RecentFiles
from .model.session import Session
from .panels.compare_dock import install_compare
from .panels.inspect_panel import InspectPanel
from .panels.lab_dock import install_lab
from .panels.measured_dock import install_measured
from .panels.presentation import install_presentation
from .panels.sweep_dock import install_sweep
from .panels.run_panel import RunPanel
from .plots.playback import PlaybackBar
from .plots.plots_panel import PlotsPanel
from .robot_files import RobotFiles
from .scene.push import install_push
from .scene.tool_drag import install_tool_drag
from .scene.turn_handle import install_turn_handle
from .scene.mass_centre import install_mass_centre
from .scene.force_elements import install_force_elements
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


class MainWindow(QMainWindow):
    """The main window. See the module docstring.

    robot, path    : the robot to show and its file (None: a new, unsaved robot)
    settings       : where recent files and the window layout live (default: QSettings())
    restore_layout : restore the saved window layout, and save it on close (scripted
                     runs and tests pass False and get the default layout)

    What changes is announced by ``session``'s signals (a new model, the pose, a run).
    """

    def __init__(self, robot: Robot | None = None, path: Path | None = None, *,
                 settings: QSettings | None = None, restore_layout: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ArmDynMainWindow")
        self.settings = settings if settings is not None else QSettings()
        self.document = RobotDocument(robot or new_robot(), path, self)
        self.session = Session(self)
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
        # turn a free or spherical joint's body in the 3D view (gui/scene/turn_handle.py)
        self.turn_handle = install_turn_handle(self)
        # push the arm with Ctrl+drag during a live free fall (gui/scene/push.py)
        self.push = install_push(self)
        # a floating system's mass centre, its path and angular momentum, a camera that
        # follows it (gui/scene/mass_centre.py): toolbar and View menu
        self.mass_centre = install_mass_centre(self)
        # springs, dampers, tyres and the road (gui/scene/force_elements.py)
        self.force_elements = install_force_elements(self)
        # compare two runs on one time axis (gui/panels/compare.py): a dock, View menu, Ctrl+K
        self._compare = install_compare(self)
        self.compare_dock = self._compare.dock
        # a measured motion against the model, and identification from it
        # (gui/panels/measured_dock.py): two docks, View menu, File > Open Measured Motion
        self.measured = install_measured(self, after=self._compare.action)
        # a run over a grid of changes, its torque envelope (gui/panels/sweep_panel.py):
        # a dock, View menu, Ctrl+G
        self._sweep = install_sweep(self, after=self._compare.action)
        self.sweep_dock = self._sweep.dock
        # presentation mode for a projector (gui/panels/presentation.py): View menu, F5
        self.presentation = install_presentation(self)
        self.session.set_model(self.document.robot)  # every panel shows it now
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

        self.run_panel = RunPanel()
        self.plots = PlotsPanel()
        self.playback = PlaybackBar()
        self.inspect = InspectPanel()

        centre = QWidget()
        centre.setObjectName("centre")
        layout = QVBoxLayout(centre)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.view_bar = QToolBar("3D view")
        self.view_bar.setObjectName("viewBar")
        self.view_bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        # Buttons a little narrower than elsewhere, so that Drag Tool fits at 1280 x 800;
        # and the overflow arrow (Qt's extension button, 12 px wide) without the buttons'
        # 8 px padding, which left no room for its icon: a bar too narrow hid its last
        # actions with no sign of them.
        self.view_bar.setStyleSheet(
            "QToolButton { padding: 3px 5px; }"
            " QToolButton#qt_toolbar_ext_button { padding: 0px; min-width: 16px;"
            " border: 1px solid #C3CCD7; border-radius: 3px; }")
        layout.addWidget(self.view_bar)
        layout.addWidget(self.view3d, 1)
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
        self.run_dock = self._dock("Run", "runDock", _scrolling(self.run_panel), right)
        # The playback bar sits on top of the plots: one time line for both the
        # animation and the curves (and the full width of the window for its slider).
        results = QWidget()
        column = QVBoxLayout(results)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.playback)
        column.addWidget(self.plots, 1)
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        self.plots_dock = self._dock("Results", "plotsDock", results, bottom)
        # The inspect tables (n x n mass matrix, 6x6 inertias) need width: they share
        # the wide bottom area with the results, behind a tab.
        self.inspect_dock = self._dock("Inspect", "inspectDock", self.inspect, bottom)
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
    def sweep(self):
        """The Sweep dock's panel (`gui.panels.sweep_panel.SweepPanel`), built on first use."""
        return self._sweep.panel

    @property
    def lab(self):
        """The teaching lab's panel (`gui.panels.lab_panel.LabPanel`), built on first use."""
        return self._lab.panel

    @property
    def pose(self) -> np.ndarray:
        """The current pose q (n,), rad / m (the session's)."""
        return self.session.pose

    @property
    def trajectory(self):
        """The last run's samples, or None (the session's)."""
        return self.session.trajectory

    def _tabify_inspect(self) -> None:
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
        doc.robot_changed.connect(self.session.set_model)  # only valid models go on
        doc.errors_changed.connect(self._on_errors_changed)
        doc.path_changed.connect(self._update_title)
        self.files.loaded.connect(self._on_file_loaded)
        doc.modified_changed.connect(self._update_title)

        # the panels follow the session (in this order: the 3D view first, the plots
        # before the playback bar, whose first frame moves the arm)
        session = self.session
        for view in (self.view3d, self.pose_panel, self.run_panel, self.plots, self.playback,
                     self.inspect):
            view.observe(session)
        session.model_changed.connect(self._on_model_changed)
        session.pose_refused.connect(self._on_pose_refused)
        session.run_started.connect(self._update_export_actions)
        session.run_ended.connect(self._on_run_ended)
        self.playback.frame.connect(self._on_playback_frame)
        self.plots.time_picked.connect(self.playback.seek)

    # ==================================================================================
    # Model, validity and pose
    # ==================================================================================
    def _on_model_changed(self, robot: Robot | Mechanism) -> None:
        """A new valid robot or mechanism (the panels show it): summary, warnings, title."""
        self.summary_label.setText(self._summary(robot))
        for warning in robot.warnings:
            self.statusBar().showMessage(f"Warning: {warning}", 10000)
        self._update_title()
        self._update_export_actions()

    @staticmethod
    def _summary(robot: Robot | Mechanism) -> str:
        """Status-bar summary: links and mass; a mechanism adds chains, loops and DOF."""
        text = f"{robot.n} links \u00b7 {robot.total_mass:.3g} kg"
        if not robot.is_serial_arm:
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
        self.run_panel.setEnabled(doc.is_valid)
        self.run_panel.setToolTip("" if doc.is_valid else "Fix the marked table cells to run")

    def set_pose(self, q) -> bool:
        """Make q (rad / m, shape (n,)) the current pose (`Session.set_pose`): 3D view,
        sliders, panels. A pose whose loops cannot close is refused: the sliders snap
        back, the status bar names the loop, and False is returned."""
        return self.session.set_pose(q)

    def _on_pose_refused(self, why: str) -> None:
        self.statusBar().showMessage(f"Pose not reachable, snapped back: {why}", 8000)

    # ==================================================================================
    # Runs, plots, playback
    # ==================================================================================
    def _on_run_ended(self, result: RunResult) -> None:
        if result.outcome is RunOutcome.FAILED:
            self.statusBar().showMessage(f"Run failed: {result.message}")
        self._update_export_actions()

    def _on_playback_frame(self, t: float, q) -> None:
        """Playback moves the 3D view (the camera keeps the arm in sight), the plots'
        cursor and Inspect (the sample at t: q, q', q''); the pose (sliders, run start)
        stays."""
        self.view3d.set_pose(np.asarray(q, dtype=float), keep_in_view=True)
        self.plots.set_cursor_time(t)
        traj = self.trajectory
        if traj is not None and len(traj):
            k = min(int(np.searchsorted(traj.t, t)), len(traj) - 1)
            if k > 0 and t - traj.t[k - 1] < traj.t[k] - t:
                k -= 1
            self.inspect.set_state(self.session.model, traj.q[k], traj.qd[k], traj.qdd[k])

    def show_last_frame(self) -> None:
        """Show the last sample of the last run in the 3D view and on the plots."""
        traj = self.trajectory
        if traj is None or len(traj) == 0:
            return
        self.playback.seek(float(traj.t[-1]))  # emits the frame
        self.view3d.render_now()

    def _update_export_actions(self, *_args) -> None:
        has_run = self.trajectory is not None and len(self.trajectory) > 0
        self.export_csv_action.setEnabled(has_run)
        self.export_video_action.setEnabled(has_run)
        self.export_plots_action.setEnabled(True)

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
            help_ = self.presentation.help
            if help_.isVisible():
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
        if self.trajectory is None:
            return False
        stem = Path(self.files.suggested_name()).with_suffix("")
        path = self.files.ask_save_path("Export Results", "CSV files (*.csv)", ".csv",
                                        f"{stem}_{self.trajectory.kind}.csv")
        if path is None:
            return False
        try:
            export_trajectory_csv(self.trajectory, self.session.model, path)
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
        return [self.robot_dock, self.pose_dock, self.run_dock, self.inspect_dock,
                self.plots_dock]

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
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.run_dock)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.plots_dock)
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
        # the Run dock: wide enough for the joints' names (issue #21), within 20-30 %
        run = min(max(0.2 * w, 300, self.run_panel.preferred_width()), max(0.3 * w, 300), 520)
        self.resizeDocks([self.run_dock], [int(run)], Qt.Orientation.Horizontal)
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
        """Cancel every panel's job (`gui.jobs.job`: nothing waits for its thread), stop
        the timers and interactions, and release the 3D view."""
        self.run_panel.shutdown()
        self._lab.shutdown()
        self._compare.shutdown()
        self.measured.shutdown()
        self._sweep.shutdown()
        self.tool_drag.shutdown()
        self.turn_handle.shutdown()
        self.push.shutdown()
        self.presentation.shutdown()
        self.playback.pause()
        self.view3d.shutdown()
