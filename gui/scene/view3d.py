"""The 3D view: the arm or mechanism drawn from its DH frames in a pyvistaqt `QtInteractor`.

Meshes come from `gui.scene.arm_scene` and are added once per robot structure. A
pose change only sets each actor's ``user_matrix`` from
`core.forward_kinematics` (a loop's gap rod is stretched between its two
attachment points, and shown only while they are apart) and asks for one render; several requests in the
same event-loop turn give one render. When the robot's geometry changes
(a, b, alpha, mass centre...) the meshes are rebuilt in place; when its
topology changes (links added, removed, joint type changed) the actors are
rebuilt.

A robot of more than MERGE_ABOVE links is drawn with one actor per layer ("merged
arm", "merged com", "merged frames": `arm_scene.MergedParts`, moved point by point
in numpy) instead of one per part: VTK's cost per actor (adding it, and every
render) would otherwise dominate. A hidden merged layer is neither built nor moved
until it is shown. Actors are added without pyvista names (a named add searches
every actor: quadratic in their number).

While the arm moves (renders asked for in quick succession: playback, a slider drag)
the view renders without anti-aliasing (FXAA doubles a software-GL frame); STILL_MS
after the last move it renders once more, anti-aliased. Exports always are.

VTK draws into a native child window of its own (pyvistaqt up to 0.12; pinned in
pyproject.toml): the rest of the main window holds no OpenGL widget, so Qt flushes its
repaints as plain pixels, only the changed region. With pyvistaqt 0.13's QOpenGLWidget
every repaint of a plot or a progress bar composited the whole window through OpenGL,
15-19 ms under software GL (issue #8). So `QWidget.grab` does not see the 3D picture:
`ArmView.image` reads it back from VTK.

Needs a real OpenGL surface on X11: a desktop's X server, XWayland or Xvfb (not Qt's
Wayland platform, see `gui.app.choose_qt_platform`, nor QT_QPA_PLATFORM=offscreen).
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pyvista as pv
from PySide6.QtCore import QEvent, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QVBoxLayout, QWidget
from pyvistaqt import QtInteractor

from armdyn.core import Mechanism, Robot, forward_kinematics
from armdyn.core.io.atomic import write_atomically

from ..look.images import encode_image

from .arm_scene import (GAP_VISIBLE, LAYERS, MergedParts, Part, Sizes, build_parts, gap_matrix,
                        geometry_key, loop_points, part_matrices, scene_frames, topology_key,
                        up_vector)

__all__ = ["ArmView", "VIEWS", "box_corners", "fit_camera"]

log = logging.getLogger(__name__)

#: Standard views: name -> (camera direction from the target, in (right, forward, up)).
VIEWS: dict[str, tuple[float, float, float]] = {
    "front": (0.0, -1.0, 0.0),
    "side": (1.0, 0.0, 0.0),
    "top": (0.0, 0.0, 1.0),
    "iso": (1.0, -1.2, 0.8),
}

#: Robots with more links than this draw each layer of their links as one merged mesh.
MERGE_ABOVE = 24
#: The layers whose parts are merged for a big robot.
MERGED_LAYERS = ("arm", "com", "frames")
#: A render this soon after the previous one means the arm moves: no anti-aliasing, s.
MOVING_WITHIN_S = 0.1
#: This long after the last moving render, the still picture is rendered anti-aliased, ms.
STILL_MS = 250
#: A render asked for after a still picture waits this long (see `ArmView.request_render`), ms.
JUMP_DELAY_MS = 10
#: Room around the arm's box when it is fitted (1: the box touches the picture's edges).
FIT_PADDING = 1.08
#: An arm that left the view during playback is fitted again with this much room, so
#: that a steady motion refits now and then, not every frame.
FOLLOW_PADDING = 1.4
BACKGROUND_BOTTOM = "#FFFFFF"
BACKGROUND_TOP = "#DCE3EC"


def box_corners(bounds) -> np.ndarray:
    """(8, 3) the corners of the box `bounds` (xmin, xmax, ymin, ymax, zmin, zmax)."""
    b = np.asarray(bounds, dtype=float)
    return np.array([[x, y, z] for x in b[0:2] for y in b[2:4] for z in b[4:6]])


def fit_camera(camera, points, width: int, height: int, padding: float = FIT_PADDING,
               fallback_up=(0.0, 1.0, 0.0)) -> None:
    """Aim `camera` (a VTK camera, perspective or parallel) at the middle of `points`
    ((N, 3), m: a box's `box_corners`, or the corners of many) and move it along its
    direction until they all fill a picture of `width` x `height` px, with `padding`
    (1: the outermost touch the picture's edges). Its direction and projection are kept;
    its up vector is made perpendicular to the direction (`fallback_up` when looking
    along it). The view's Fit (`ArmView.fit`) and a video's frames (`gui.video`) frame
    alike."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    back = np.array(camera.GetPosition()) - np.array(camera.GetFocalPoint())
    back /= max(float(np.linalg.norm(back)), 1e-12)
    up = np.array(camera.GetViewUp(), dtype=float)
    up = up - (up @ back) * back
    if np.linalg.norm(up) < 1e-9:  # looking along the up vector
        up = np.asarray(fallback_up, dtype=float)
        up = up - (up @ back) * back
    up /= np.linalg.norm(up)
    right = np.cross(up, back)
    axes = np.array([right, up, back])
    local = points @ axes.T  # (N, 3): along right, up, back
    middle = (local.min(axis=0) + local.max(axis=0)) / 2
    centre = middle @ axes
    local -= middle
    x, y, z = padding * np.abs(local[:, 0]), padding * np.abs(local[:, 1]), local[:, 2]
    w, h = max(int(width), 1), max(int(height), 1)
    if camera.GetParallelProjection():
        camera.SetParallelScale(max(float(y.max()), float(x.max()) * h / w, 1e-3))
        distance = 2.0 * float(np.max(np.abs(z))) + 1.0
    else:
        tan_v = np.tan(np.radians(camera.GetViewAngle()) / 2)
        tan_h = tan_v * w / h
        distance = float(np.max(np.maximum(z + x / tan_h, z + y / tan_v)))
        distance = max(distance, 1e-3)
    camera.SetViewUp(*up)
    camera.SetFocalPoint(*centre)
    camera.SetPosition(*(centre + back * distance))


class ArmView(QWidget):
    """The 3D view of one robot at one pose.

    Methods: `set_robot`, `set_pose`, `set_layer_visible`, camera (`fit`,
    `reset_camera`, `view`, `set_orthographic`), `export_png`, `shutdown`.
    `parts` and `actors` (by part name) are public for inspection and tests.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plotter = QtInteractor(self, auto_update=False, multi_samples=0)
        self.plotter.set_background(BACKGROUND_BOTTOM, top=BACKGROUND_TOP)
        self.plotter.enable_anti_aliasing("fxaa")
        # Terrain style: dragging orbits around the vertical without rolling the arm over;
        # the wheel zooms, Shift+drag pans.
        self.plotter.enable_terrain_style(mouse_wheel_zooms=True, shift_pans=True)
        # No VTK / pyvista key bindings ("q" closes the view, "w" wireframe, "3" stereo...):
        # the window's shortcuts (F, R, 1, 3, 5, 7) drive the camera.
        self.plotter.iren.clear_key_event_callbacks()
        self.plotter.iren.interactor.RemoveObservers("CharEvent")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plotter)

        self.robot: Robot | Mechanism | None = None
        self.q: np.ndarray = np.zeros(0)
        #: (L,) distance between the two attachment points of every loop at the shown
        #: pose, m (empty for a serial arm or a tree)
        self.loop_gaps: np.ndarray = np.zeros(0)
        self.parts: list[Part] = []  # the parts with an actor of their own
        self.actors: dict[str, pv.Actor] = {}
        #: big robots: the merged parts of each layer in MERGED_LAYERS (built when first shown)
        self._merged: dict[str, list[Part] | MergedParts] = {}
        self._topology: tuple | None = None
        self._geometry: tuple | None = None
        self._visible = {layer: layer in ("arm", "effector", "ground") for layer in LAYERS}
        self._fit_mode: str | None = None  # refit on resize until the user moves the camera
        self._sizes: Sizes | None = None
        self._closed = False
        self.plotter.installEventFilter(self)

        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(0)
        self._render_timer.timeout.connect(self.render_now)
        self._last_render = 0.0
        self._exposed = False  # its native window painted once (`eventFilter`)
        self._still_timer = QTimer(self)  # moving stopped: the anti-aliased picture
        self._still_timer.setSingleShot(True)
        self._still_timer.setInterval(STILL_MS)
        self._still_timer.timeout.connect(self._render_still)

    # ----- content ----------------------------------------------------------------
    def observe(self, session) -> None:
        """Show `session`'s model at its pose (`gui.model.session.Session`)."""
        session.model_changed.connect(lambda model: self.set_robot(model, session.pose))
        session.pose_changed.connect(self._on_session_pose)

    def _on_session_pose(self, q: np.ndarray) -> None:
        if not np.array_equal(q, self.q):  # (a new model is shown at its pose already)
            self.set_pose(q)

    def set_robot(self, robot: Robot | Mechanism, q: np.ndarray | None = None) -> None:
        """Show `robot` (a serial arm or a mechanism) at pose `q` (home if None).
        Rebuilds only what changed."""
        q = robot.q_home if q is None else np.asarray(q, dtype=float)
        topology, geometry = topology_key(robot), geometry_key(robot)
        first = self.robot is None
        self.robot = robot
        self._sizes = Sizes.of(robot)
        if topology != self._topology:
            self._rebuild_actors(robot)
        elif geometry != self._geometry:
            self._rebuild_meshes(robot)
        self._topology, self._geometry = topology, geometry
        self.set_pose(q)
        if first:
            self.reset_camera()

    def set_pose(self, q: np.ndarray, keep_in_view: bool = False) -> None:
        """Move the arm to joint values q, shape (n,), rad / m; one render follows.
        keep_in_view (playback): refit if the arm left the view (`keep_arm_in_view`)."""
        if self.robot is None or self._closed:
            return
        q = np.asarray(q, dtype=float)
        frames = scene_frames(forward_kinematics(self.robot, q))
        placed = [p for p in self.parts if p.gap is None]
        for part, matrix in zip(placed, part_matrices(placed, frames, q), strict=True):
            self.actors[part.name].user_matrix = matrix
        self.loop_gaps = np.array([self._place_gap(p, frames) for p in self.parts
                                   if p.gap is not None])
        for layer, merged in self._merged.items():
            if isinstance(merged, MergedParts) and self._visible[layer]:
                merged.place(frames, q)  # hidden layers are placed when shown
        self.q = q.copy()
        if keep_in_view:
            self.keep_arm_in_view()
        self.request_render()

    def keep_arm_in_view(self) -> bool:
        """If the arm's bounding box (`arm_bounds`) has left the picture, fit it again
        (keeping the direction, with room to move on: FOLLOW_PADDING); if it only left
        the depth range, reset the clipping planes. A projection of 8 corners: cheap
        enough for every frame. True if the camera moved."""
        if self.robot is None or self._closed:
            return False
        bounds = np.array(self.arm_bounds())
        corners = np.array([[x, y, z, 1.0] for x in bounds[0:2] for y in bounds[2:4]
                            for z in bounds[4:6]])
        w, h = max(self.plotter.width(), 1), max(self.plotter.height(), 1)
        m = self.plotter.camera.GetCompositeProjectionTransformMatrix(w / h, -1.0, 1.0)
        clip = corners @ np.array([[m.GetElement(i, j) for j in range(4)]
                                   for i in range(4)]).T
        if np.all(clip[:, 3] > 0):
            ndc = clip[:, :3] / clip[:, 3:]
            if np.all(np.abs(ndc[:, :2]) <= 1.0):
                if np.any(np.abs(ndc[:, 2]) > 1.0):
                    self.plotter.renderer.ResetCameraClippingRange()
                return False
        self._fit_bounds(bounds, padding=FOLLOW_PADDING)
        return True

    def _place_gap(self, part: Part, frames: np.ndarray) -> float:
        """Stretch a loop's gap rod between its attachment points; show it only when they
        are apart. Returns the gap, m."""
        p_a, p_b = loop_points(self.robot, frames)[part.gap]
        gap = float(np.linalg.norm(p_b - p_a))
        size = Sizes.of(self.robot) if self._sizes is None else self._sizes
        matrix = gap_matrix(p_a, p_b, 0.3 * size.joint_radius)
        actor = self.actors[part.name]
        if matrix is None or gap < GAP_VISIBLE * size.reach:
            actor.SetVisibility(False)
        else:
            actor.user_matrix = matrix
            actor.SetVisibility(self._visible[part.layer])
        return gap

    def _rebuild_actors(self, robot: Robot) -> None:
        for actor in self.actors.values():
            self.plotter.remove_actor(actor, render=False)
        parts = build_parts(robot)
        self.actors, self._merged = {}, {}
        if robot.n > MERGE_ABOVE:
            for layer in MERGED_LAYERS:
                self._merged[layer] = [p for p in parts if p.layer == layer and p.gap is None]
            parts = [p for p in parts if p.layer not in MERGED_LAYERS or p.gap is not None]
        self.parts = parts
        for part in self.parts:
            actor = self._add(part)
            actor.SetVisibility(self._visible[part.layer] and part.gap is None)
            self.actors[part.name] = actor
        for layer in self._merged:
            if self._visible[layer]:
                self._build_merged(layer)
        self._apply_up()

    def merged_actors(self) -> list:
        """The actors of the merged layers built so far (robots of more than
        MERGE_ABOVE links: one actor draws a layer's parts of every link)."""
        return [self.actors[f"merged {layer}"] for layer, merged in self._merged.items()
                if isinstance(merged, MergedParts)]

    def picked_part(self, actor, cell: int) -> Part | None:
        """The part a pick found: the one `actor` draws, or for a merged layer's actor
        the one its cell `cell` belongs to. None if the actor draws no part."""
        for part in self.parts:
            if self.actors.get(part.name) is actor:
                return part
        for layer, merged in self._merged.items():
            if isinstance(merged, MergedParts) and self.actors[f"merged {layer}"] is actor:
                return merged.part_of_cell(cell)
        return None

    def _build_merged(self, layer: str) -> None:
        """Build the merged mesh and actor of `layer` (big robots; done when first shown)."""
        parts = self._merged[layer]
        if isinstance(parts, MergedParts) or not parts:
            return
        merged = MergedParts(parts)
        self._merged[layer] = merged
        self.actors[f"merged {layer}"] = self.plotter.add_mesh(
            merged.mesh, scalars="rgb", rgb=True, specular=0.35, specular_power=20,
            ambient=0.15, render=False, reset_camera=False, pickable=False)

    def _add(self, part: Part) -> pv.Actor:
        common = dict(render=False, reset_camera=False, pickable=False)
        if part.name == "grid":
            return self.plotter.add_mesh(part.mesh, color=part.color, line_width=1,
                                         lighting=False, **common)
        if part.name == "floor":  # unlit: a software-GL frame ~2.5 ms cheaper (of ~10)
            return self.plotter.add_mesh(part.mesh, color=part.color, lighting=False,
                                         **common)
        # The arm's meshes carry their own normals (gui.scene.arm_scene): smooth shading with
        # flat caps, and no normals filter between the mesh and its mapper.
        if part.color is None:
            return self.plotter.add_mesh(part.mesh, scalars="rgb", rgb=True, **common)
        return self.plotter.add_mesh(part.mesh, color=part.color, specular=0.35,
                                     specular_power=20, ambient=0.15, **common)

    def _rebuild_meshes(self, robot: Robot) -> None:
        """Same parts, new shapes: copy the new meshes into the ones the actors draw
        (a big robot's merged layers are built again)."""
        if self._merged:
            self._rebuild_actors(robot)
            return
        for old, new in zip(self.parts, build_parts(robot), strict=True):
            assert old.name == new.name, "the same topology gives the same parts"
            old.mesh.copy_from(new.mesh)
            old.mesh.Modified()

    # ----- layers -----------------------------------------------------------------
    def set_layer_visible(self, layer: str, visible: bool) -> None:
        """Show or hide a layer: "com", "frames", "ground", "effector" or "arm"."""
        self._visible[layer] = bool(visible)
        for part in self.parts:
            if part.layer == layer and part.gap is None:
                self.actors[part.name].SetVisibility(bool(visible))
        if layer in self._merged:
            if visible:
                self._build_merged(layer)
            actor = self.actors.get(f"merged {layer}")
            if actor is not None:
                actor.SetVisibility(bool(visible))
        if self.robot is not None:
            self.set_pose(self.q)  # gap rods: visible only where a loop is open
        self.request_render()

    def layer_visible(self, layer: str) -> bool:
        return self._visible[layer]

    # ----- camera -----------------------------------------------------------------
    def _basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(right, forward, up) of the standard views: up against gravity, right along x_0."""
        up = up_vector(self.robot) if self.robot is not None else np.array([0.0, 0.0, 1.0])
        right = np.array([1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        right = right - (right @ up) * up
        right /= np.linalg.norm(right)
        return right, np.cross(up, right), up

    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(right, forward, up) of the standard views (`VIEWS`): up against gravity."""
        return self._basis()

    def _apply_up(self) -> None:
        self.plotter.camera.up = tuple(self._basis()[2])

    def arm_bounds(self) -> tuple[float, float, float, float, float, float]:
        """Bounds of the visible arm parts, the base plate and the pedestal (not the
        floor), m."""
        names = [p.name for p in self.parts
                 if p.layer in ("arm", "effector", "com", "frames")
                 or p.name in ("base", "pedestal") or p.name.startswith("root")] + [f"merged {layer}" for layer in self._merged]
        boxes = [np.array(self._bounds_of(name)) for name in names
                 if name in self.actors and self.actors[name].GetVisibility()]
        if not boxes:
            return (-1.0, 1.0, -1.0, 1.0, -1.0, 1.0)
        b = np.array(boxes)
        return (b[:, 0].min(), b[:, 1].max(), b[:, 2].min(), b[:, 3].max(),
                b[:, 4].min(), b[:, 5].max())

    def _bounds_of(self, name: str) -> tuple[float, ...]:
        """Bounds of actor `name`; a merged layer's from its parts' boxes (`MergedParts`)."""
        merged = self._merged.get(name.removeprefix("merged ")) if name.startswith(
            "merged ") else None
        if isinstance(merged, MergedParts) and merged.bounds is not None:
            return merged.bounds
        return self.actors[name].GetBounds()

    def fit(self) -> None:
        """Zoom so that the arm fills the view, keeping the direction."""
        self._fit_mode = "arm"
        self._fit_bounds(np.array(self.arm_bounds()))

    def _fit_bounds(self, bounds: np.ndarray, padding: float = FIT_PADDING) -> None:
        """Aim at the centre of `bounds` and move the camera (keeping its direction) until
        all 8 corners of the box are in the picture."""
        fit_camera(self.plotter.camera, box_corners(bounds), max(self.plotter.width(), 1),
                   max(self.plotter.height(), 1), padding, fallback_up=self._basis()[1])
        self.plotter.renderer.ResetCameraClippingRange()
        self.request_render()

    def view(self, name: str) -> None:
        """Look from a standard direction ("front", "side", "top", "iso") and fit the arm."""
        right, forward, up = self._basis()
        d = np.array(VIEWS[name]) @ np.array([right, forward, up])
        d /= np.linalg.norm(d)
        cam = self.plotter.camera
        focus = np.array(cam.focal_point)
        cam.position = tuple(focus + d * max(cam.distance, 1e-3))
        cam.up = tuple(forward if name == "top" else up)
        self.fit()

    def reset_camera(self) -> None:
        """The default view: iso, perspective, the arm fitted."""
        self.set_orthographic(False)
        self.view("iso")

    def set_orthographic(self, on: bool) -> None:
        if on:
            self.plotter.enable_parallel_projection()
        else:
            self.plotter.disable_parallel_projection()
        self.request_render()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        """The user took the camera: stop refitting on resize. A paint of the native
        window (shown, exposed, resized) is one more render request: pyvistaqt renders
        at every paint event, and a window settling its layout sends several, each a
        whole frame (40 ms for a 200-link robot)."""
        if watched is self.plotter:
            if event.type() == QEvent.Type.Paint:
                self._exposed = True
                self.request_render()
                return True
            if event.type() in (QEvent.Type.MouseButtonPress, QEvent.Type.Wheel):
                self._fit_mode = None
        return super().eventFilter(watched, event)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._fit_mode == "arm":
            self.fit()

    # ----- rendering and export ---------------------------------------------------
    def request_render(self) -> None:
        """Render once, soon (requests are merged): while the arm moves, at the next
        event-loop turn; a first move after a still picture JUMP_DELAY_MS later, so that a
        repaint of the window asked for at the same moment (Qt delivers those ~5 ms
        later) goes first, in a turn of its own: at the end of a run the arm's new frame
        and the plots' repaint held the window ~60 ms together (issue #8). Nothing until
        the view's native window has been painted once (its first paint asks for the
        first frame): a window's build and show asked for a frame that was drawn before
        the window appeared, and a Run pressed at once waited 50-90 ms for it."""
        if self._exposed and not self._closed and not self._render_timer.isActive():
            moving = time.perf_counter() - self._last_render < MOVING_WITHIN_S
            self._render_timer.start(0 if moving else JUMP_DELAY_MS)

    def render_now(self) -> None:
        """Render immediately (for screenshots and tests); while the arm moves, without
        anti-aliasing (see the module docstring)."""
        self._render_timer.stop()
        if self._closed:
            return
        now = time.perf_counter()
        moving = now - self._last_render < MOVING_WITHIN_S
        self._last_render = now
        if moving:
            self.plotter.renderer.SetUseFXAA(False)
            self._still_timer.start()
        self._render_once()

    def _render_still(self) -> None:
        """The anti-aliased picture, once the arm stopped moving. If a frame is already
        asked for, that frame is the anti-aliased one (two renders back to back held
        the window ~60 ms at the end of a run)."""
        if not self._closed:
            self.plotter.renderer.SetUseFXAA(True)
            self._last_render = 0.0
            if not self._render_timer.isActive():
                self._render_once()

    def _render_still_now(self) -> None:
        """The anti-aliased picture now (for a read-back): a frame asked for is this one."""
        self._render_timer.stop()
        self._render_still()

    def _render_once(self) -> None:
        """Render now, once, straight into the view's native window."""
        self.plotter.render()

    def image(self) -> QImage:
        """The 3D picture as shown (anti-aliased), read back from VTK: `QWidget.grab`
        sees only the background of the native window VTK draws into."""
        self._render_still_now()
        rgb = np.ascontiguousarray(self.plotter.screenshot(None, return_img=True)[:, :, :3])
        height, width = rgb.shape[:2]
        return QImage(rgb.data, width, height, 3 * width, QImage.Format.Format_RGB888).copy()

    def export_png(self, path: str | Path) -> Path:
        """Save the 3D view as a PNG at its on-screen size (`core.io.atomic`: OSError
        naming `path` if it cannot be written; an old file then stays)."""
        write_atomically(path, encode_image(self.image(), "png"))
        return Path(path)

    def shutdown(self) -> None:
        """Stop rendering and release the OpenGL resources (call before closing)."""
        if self._closed:
            return
        self._closed = True
        self._render_timer.stop()
        self._still_timer.stop()
        self.plotter.close()
