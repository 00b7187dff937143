"""The whole system's mass centre in the 3D view, for a floating system (a model with a
free joint): a marker, the path it takes in the last run, the angular momentum about it
as an arrow, and a camera that can follow it.

- The marker sits at `core.center_of_mass` of the pose shown (the current pose, or the
  played sample: the run's recorded mass centre).
- The path is the run's recorded mass centre, drawn once per run (a line through its
  samples), not per frame.
- The arrow is the angular momentum L about the mass centre at the played sample
  (`Trajectory.angular_momentum`), from the marker; its length is L over the largest
  |L| of the run, times ARROW_SHARE of the model's size. Hidden where |L| is below
  round-off (a free fall from rest keeps it zero) and away from a run.
- "Follow CoM" (a toggle on the 3D view's toolbar and in the View menu) moves the
  camera with the marker: position and focal point by the marker's displacement, so a
  falling or flying body stays in view from the same direction.

Meshes are added at the first floating model (a window that never shows one adds
none), built once and moved by ``user_matrix``; the view is reached only through its
public attributes (`ArmView.plotter`, `request_render`). Qt only for the action; the
numbers come from `core`.
"""
from __future__ import annotations

import numpy as np
import pyvista as pv
from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction

from armdyn.core import JointType, center_of_mass
from armdyn.core.sim.trajectory import Trajectory

from .arm_scene import Sizes

__all__ = ["MassCentreOverlay", "install_mass_centre", "MARKER_COLOR", "PATH_COLOR",
           "MOMENTUM_COLOR", "ARROW_SHARE"]

MARKER_COLOR = "#111111"
PATH_COLOR = "#6A3D9A"
MOMENTUM_COLOR = "#7B2D8E"
#: The largest |L| of a run is drawn this share of the model's size long.
ARROW_SHARE = 0.5
#: |L| below this share of the run's largest (or below 1e-9 kg m^2/s) is not drawn.
ARROW_FLOOR = 1e-6


def is_floating(model) -> bool:
    """True for a model with a free joint."""
    return model is not None and any(kind is JointType.FREE for kind in model.model.joint_types)


class MassCentreOverlay(QObject):
    """The mass centre, its path and the angular momentum in `window`'s 3D view (module
    docstring). ``action``: the "Follow CoM" toggle."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self._window = window
        self._view = window.view3d
        self._model = None
        self._trajectory: Trajectory | None = None
        self._largest = 0.0  # the run's largest |L|, kg m^2/s
        self._size = 1.0     # the model's drawing size, m
        self.centre: np.ndarray | None = None  # where the marker is, base frame, m
        self.momentum = np.zeros(3)            # the arrow's L, kg m^2/s (0: hidden)
        #: the marker, arrow and path actors, added at the first floating model
        #: (`_add_actors`: three meshes a start without one does not need)
        self._marker = self._arrow = self._path = None
        self._path_mesh: pv.PolyData | None = None
        self.action = QAction("Follow CoM", self)
        self.action.setCheckable(True)
        self.action.setToolTip("The camera moves with the whole system's mass centre, so a "
                               "falling or flying body stays in view")
        self.action.setVisible(False)

        session = window.session
        session.model_changed.connect(self._on_model)
        session.pose_changed.connect(self._on_pose)
        session.run_started.connect(self._on_run_started)
        session.run_ended.connect(self._on_run_ended)
        window.playback.frame.connect(self._on_frame)
        self._on_model(session.model)

    # ----- what is shown ----------------------------------------------------------------
    @property
    def shown(self) -> bool:
        """True while the marker is drawn (a floating model)."""
        return self._marker is not None and bool(self._marker.GetVisibility())

    def path_points(self) -> np.ndarray:
        """(S, 3) the path drawn (empty without a run)."""
        if self._path is None or not self._path.GetVisibility():
            return np.zeros((0, 3))
        return np.asarray(self._path_mesh.points)

    def _add_actors(self) -> None:
        """Add the marker, the arrow and the path to the view, hidden (once)."""
        if self._marker is not None:
            return
        plotter = self._view.plotter
        self._marker = plotter.add_mesh(pv.Sphere(radius=1.0, theta_resolution=24,
                                                  phi_resolution=16),
                                        color=MARKER_COLOR, smooth_shading=True,
                                        name="mass centre", reset_camera=False)
        self._arrow = plotter.add_mesh(pv.Arrow(start=(0, 0, 0), direction=(1, 0, 0),
                                                tip_length=0.22, tip_radius=0.09,
                                                shaft_radius=0.035, scale=1.0),
                                       color=MOMENTUM_COLOR, smooth_shading=True,
                                       name="angular momentum", reset_camera=False)
        self._path_mesh = pv.PolyData(np.zeros((2, 3)), lines=[2, 0, 1])
        self._path = plotter.add_mesh(self._path_mesh, color=PATH_COLOR, line_width=3,
                                      name="mass centre path", reset_camera=False)
        for actor in (self._marker, self._arrow, self._path):
            actor.SetVisibility(False)
            actor.SetPickable(False)

    def _hide_run(self) -> None:
        """Hide the path and the arrow (no run shown)."""
        if self._path is not None:
            self._path.SetVisibility(False)
            self._arrow.SetVisibility(False)

    @Slot(object)
    def _on_model(self, model) -> None:
        self._model = model if is_floating(model) else None
        self._trajectory = None
        self._hide_run()
        floating = self._model is not None
        if floating:
            self._add_actors()
        if self._marker is not None:
            self._marker.SetVisibility(floating)
        self.action.setVisible(floating)
        if not floating:
            self.centre = None
            self.action.setChecked(False)
            return
        self._size = Sizes.of(model).reach
        self._marker.user_matrix = np.diag([0.025 * self._size] * 3 + [1.0])
        self.centre = None
        self._on_pose(self._window.session.pose)

    @Slot(object)
    def _on_pose(self, q) -> None:
        if self._model is not None and np.shape(q) == (self._model.nq,):
            self._place(center_of_mass(self._model, q), np.zeros(3))

    @Slot(object)
    def _on_run_started(self, _spec) -> None:
        self._trajectory = None
        self._hide_run()

    @Slot(object)
    def _on_run_ended(self, result) -> None:
        traj = result.trajectory
        if self._model is None or traj.center_of_mass is None or len(traj) < 2:
            return
        self._trajectory = traj
        self._largest = float(np.linalg.norm(traj.angular_momentum, axis=1).max())
        points = np.ascontiguousarray(traj.center_of_mass)
        path = pv.PolyData(points, lines=np.concatenate([[len(points)],
                                                         np.arange(len(points))]))
        self._path_mesh.copy_from(path)  # once per run
        self._path.SetVisibility(True)
        self._view.request_render()

    @Slot(float, object)
    def _on_frame(self, t: float, q) -> None:
        if self._model is None:
            return
        traj = self._trajectory
        if traj is None or np.shape(q) != (self._model.nq,):
            self._on_pose(q)
            return
        k = min(int(np.searchsorted(traj.t, t)), len(traj) - 1)
        self._place(traj.center_of_mass[k], traj.angular_momentum[k])

    # ----- drawing ------------------------------------------------------------------
    def _place(self, centre: np.ndarray, L: np.ndarray) -> None:
        """Marker at `centre`, arrow of `L` from it; the camera follows if asked."""
        centre = np.asarray(centre, dtype=float)
        if self.action.isChecked() and self.centre is not None:
            camera = self._view.plotter.camera
            shift = centre - self.centre
            camera.position = tuple(np.asarray(camera.position) + shift)
            camera.focal_point = tuple(np.asarray(camera.focal_point) + shift)
        self.centre = centre.copy()
        marker = self._marker.user_matrix
        marker[:3, 3] = centre
        self._marker.user_matrix = marker
        size = float(np.linalg.norm(L))
        self.momentum = np.asarray(L, dtype=float).copy()
        if size <= max(ARROW_FLOOR * self._largest, 1e-9):
            self.momentum[:] = 0.0
            self._arrow.SetVisibility(False)
        else:
            self._arrow.user_matrix = _arrow_matrix(centre, L / self._largest
                                                    * ARROW_SHARE * self._size)
            self._arrow.SetVisibility(True)
        self._view.request_render()


def _arrow_matrix(start: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """The user matrix taking the unit arrow (origin to (1, 0, 0)) to `vector` from
    `start`, its width in proportion to its length (at least a tenth of it)."""
    length = float(np.linalg.norm(vector))
    d = vector / length
    ref = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    e1 = np.cross(d, ref)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(d, e1)
    width = 0.35 * length
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = vector, width * e1, width * e2, start
    return m


def install_mass_centre(window) -> MassCentreOverlay:
    """Add the mass-centre overlay to `window` (a `MainWindow`): its follow toggle on the
    3D view's toolbar and in the View menu. Returns the overlay."""
    overlay = MassCentreOverlay(window)
    window.view_bar.addAction(overlay.action)
    for action in window.menuBar().actions():
        menu = action.menu()
        if menu is not None and action.text().replace("&", "") == "View":
            menu.addAction(overlay.action)
            break
    return overlay
