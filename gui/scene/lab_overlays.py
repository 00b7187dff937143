"""3D overlays of the teaching lab, drawn into the `ArmView`'s plotter.

Everything here is built once (per robot structure for the inertia shapes) and then
only moved: arrows, triads and shapes are unit meshes placed by ``user_matrix``; the
on-screen text is one actor whose string changes. The overlay reaches the view only
through its public attributes (`ArmView.plotter`, `ArmView.actors`, `request_render`):
a highlighted link recolours the view's actors of that link and puts their colours
back when the highlight moves on.

Qt-free apart from the view it is given; the numbers come from `core`.
"""
from __future__ import annotations

import numpy as np
import pyvista as pv

from armdyn.core import forward_kinematics
from armdyn.core.lab.model_checks import equivalent_box, equivalent_ellipsoid
from armdyn.core.lab.walkthrough import Arrow, ArrowKind

__all__ = ["LabOverlay", "ARROW_COLORS", "HIGHLIGHT_COLOR", "SHAPE_COLOR"]

#: One colour per quantity kind (velocities blue, accelerations orange, wrenches red).
ARROW_COLORS: dict[ArrowKind, str] = {
    ArrowKind.ANGULAR_VELOCITY: "#1F4E9C",
    ArrowKind.LINEAR_VELOCITY: "#4FA3E0",
    ArrowKind.ANGULAR_ACCELERATION: "#A35200",
    ArrowKind.LINEAR_ACCELERATION: "#F0A020",
    ArrowKind.MOMENT: "#7B2D8E",
    ArrowKind.FORCE: "#D0203A",
}
HIGHLIGHT_COLOR = "#FFC20A"
SHAPE_COLOR = "#3C8D5A"
#: Colours of the DH lesson's triads: frame i-1 (start), the moving frame, frame i (goal).
GHOST_OPACITY = 0.35

_LINK_PARTS = ("joint", "offset", "length", "elbow")


def _unit_arrow() -> pv.PolyData:
    """An arrow from the origin to (1, 0, 0), shaft and tip radius for a width of 1."""
    return pv.Arrow(start=(0, 0, 0), direction=(1, 0, 0), tip_length=0.22, tip_radius=0.09,
                    shaft_radius=0.035, scale=1.0, tip_resolution=20, shaft_resolution=16)


def _triad() -> pv.PolyData:
    """x, y, z unit arrows coloured red, green, blue (cell data "rgb")."""
    rgb = np.array([[214, 39, 40], [44, 160, 44], [31, 119, 180]], dtype=np.uint8)
    arrows = []
    for axis, colour in zip(np.eye(3), rgb):
        arrow = pv.Arrow(start=(0, 0, 0), direction=axis, tip_length=0.22, tip_radius=0.07,
                         shaft_radius=0.025, scale=1.0)
        arrow.cell_data["rgb"] = np.tile(colour, (arrow.n_cells, 1))
        arrows.append(arrow)
    return pv.merge(arrows)


def _perpendicular(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ref = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(d, ref)
    u /= np.linalg.norm(u)
    return u, np.cross(d, u)


def arrow_matrix(origin: np.ndarray, vector: np.ndarray, length: float,
                 width: float) -> np.ndarray:
    """The user matrix that takes the unit arrow to `origin`, pointing along `vector`,
    `length` long and `width` wide (m)."""
    d = np.asarray(vector, dtype=float) / np.linalg.norm(vector)
    u, v = _perpendicular(d)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = d * length, u * width, v * width, origin
    return m


class LabOverlay:
    """Arrows at O_i, a highlighted link, the DH lesson's frames, inertia shapes and a
    line of text, in `view` (an `ArmView`)."""

    def __init__(self, view) -> None:
        self.view = view
        self.plotter = view.plotter
        self.robot = None
        self.reach = 1.0
        self._highlight: dict[str, object] = {}    # actor name -> its own colour
        self.highlighted: int | None = None
        common = dict(render=False, reset_camera=False, pickable=False)
        arrow = _unit_arrow()
        self.arrow_actors: dict[ArrowKind, pv.Actor] = {}
        for kind, colour in ARROW_COLORS.items():
            actor = self.plotter.add_mesh(arrow.copy(), color=colour, specular=0.3,
                                          ambient=0.2, name=f"lab arrow {kind.name}", **common)
            actor.SetVisibility(False)
            self.arrow_actors[kind] = actor
        triad = _triad()
        self.triads: dict[str, pv.Actor] = {}
        for name, opacity in (("start", GHOST_OPACITY), ("moving", 1.0), ("goal", GHOST_OPACITY)):
            actor = self.plotter.add_mesh(triad.copy(), scalars="rgb", rgb=True,
                                          opacity=opacity, name=f"lab triad {name}", **common)
            actor.SetVisibility(False)
            self.triads[name] = actor
        self.text = pv.Text("", position=(12, 12))
        self.text.prop.font_size = 18
        self.text.prop.color = "#1B1F24"
        self.text.prop.bold = True
        self.plotter.add_actor(self.text, reset_camera=False, name="lab text", render=False)
        self.shape_kind: str | None = None   # None, "box" or "ellipsoid"
        self.shape_actors: list[pv.Actor] = []
        self._shape_local: list[np.ndarray] = []  # (4, 4) per link, in its own frame

    # ----- robot and pose ---------------------------------------------------------
    def set_robot(self, robot, reach: float) -> None:
        """A new valid robot: the recoloured actors are gone with the old robot's; the
        inertia shapes are rebuilt when the number of links changed."""
        self._highlight.clear()
        self.highlighted = None
        self.robot = robot
        self.reach = reach
        if len(self.shape_actors) != robot.n:
            for actor in self.shape_actors:
                self.plotter.remove_actor(actor, render=False)
            box, ball = pv.Box((-1, 1, -1, 1, -1, 1)), pv.Sphere(radius=1.0)
            self.shape_actors = []
            for k in range(robot.n):
                mesh = box.copy() if self.shape_kind != "ellipsoid" else ball.copy()
                actor = self.plotter.add_mesh(mesh, color=SHAPE_COLOR, opacity=0.35,
                                              show_edges=True, edge_color="#1E5231",
                                              name=f"lab shape {k + 1}", render=False,
                                              reset_camera=False, pickable=False)
                actor.SetVisibility(False)
                self.shape_actors.append(actor)
        self._shape_local = [self._local_shape(link) for link in robot.links]

    def _local_shape(self, link) -> np.ndarray:
        """Unit box (+-1) or unit sphere -> the equivalent shape in the link's own frame."""
        fit = equivalent_ellipsoid if self.shape_kind == "ellipsoid" else equivalent_box
        shape = fit(link.mass, link.inertia_matrix)
        half = shape.sizes if self.shape_kind == "ellipsoid" else shape.sizes / 2
        m = np.eye(4)
        # a degenerate side (an ideal plate or rod) is drawn as a sliver, not as nothing
        m[:3, :3] = shape.axes * np.maximum(half, 0.004 * self.reach)
        m[:3, 3] = link.com
        return m

    def set_shapes(self, kind: str | None) -> None:
        """Show the equivalent inertia "box", "ellipsoid", or None."""
        if kind != self.shape_kind and self.robot is not None:
            changed = (kind == "ellipsoid") != (self.shape_kind == "ellipsoid")
            self.shape_kind = kind
            if changed and kind is not None:
                mesh = pv.Sphere(radius=1.0) if kind == "ellipsoid" else pv.Box()
                for actor in self.shape_actors:
                    actor.mapper.dataset.copy_from(mesh)
            self._shape_local = [self._local_shape(link) for link in self.robot.links]
        self.shape_kind = kind
        for actor in self.shape_actors:
            actor.SetVisibility(kind is not None)
        # a branched tree's bodies are these very boxes (`arm_scene.draws_bodies`): hidden
        # while the shapes are shown, or the coinciding faces flicker (z-fighting)
        for name, actor in self.view.actors.items():
            if name.startswith("body "):
                actor.SetVisibility(kind is None and self.view.layer_visible("arm"))
        self.view.request_render()

    def set_pose(self, q: np.ndarray) -> None:
        """Move the inertia shapes with the links (joint values q, (n,), rad / m)."""
        if self.robot is None or self.shape_kind is None:
            return
        frames = forward_kinematics(self.robot, q).frames
        for k, actor in enumerate(self.shape_actors):
            actor.user_matrix = frames[k + 1] @ self._shape_local[k]
        self.view.request_render()

    # ----- arrows ------------------------------------------------------------------
    def show_arrows(self, arrows: tuple[Arrow, ...], scales: dict[ArrowKind, float]) -> None:
        """Draw each arrow at its origin, |vector| * scales[kind] metres long (m per
        unit of the kind); kinds without an arrow (or a zero vector) are hidden."""
        shown = set()
        for arrow in arrows:
            length = float(np.linalg.norm(arrow.vector)) * scales.get(arrow.kind, 0.0)
            if length < 1e-9:
                continue
            width = min(max(length, 0.08 * self.reach), 0.25 * self.reach)
            actor = self.arrow_actors[arrow.kind]
            actor.user_matrix = arrow_matrix(arrow.origin, arrow.vector, length, width)
            actor.SetVisibility(True)
            shown.add(arrow.kind)
        for kind, actor in self.arrow_actors.items():
            if kind not in shown:
                actor.SetVisibility(False)
        self.view.request_render()

    def visible_arrows(self) -> set[ArrowKind]:
        return {k for k, a in self.arrow_actors.items() if a.GetVisibility()}

    # ----- the highlighted link -------------------------------------------------------
    def highlight(self, link: int | None) -> None:
        """Colour link `link` (0-based; None: no link) in the highlight colour."""
        if link == self.highlighted:
            return
        for name, colour in self._highlight.items():
            actor = self.view.actors.get(name)
            if actor is not None:
                actor.prop.color = colour
        self._highlight.clear()
        self.highlighted = link
        if link is not None:
            for part in _LINK_PARTS:
                name = f"{part} {link + 1}"
                actor = self.view.actors.get(name)
                if actor is not None:
                    self._highlight[name] = actor.prop.color
                    actor.prop.color = HIGHLIGHT_COLOR
        self.view.request_render()

    # ----- the DH lesson's frames -----------------------------------------------------
    def show_frames(self, start: np.ndarray | None, moving: np.ndarray | None,
                    goal: np.ndarray | None) -> None:
        """Triads at frame i-1 (start), the moving frame and frame i (goal), (4, 4) each,
        or None to hide one."""
        size = 0.16 * self.reach
        scale = np.diag([size, size, size, 1.0])
        for name, frame in (("start", start), ("moving", moving), ("goal", goal)):
            actor = self.triads[name]
            if frame is None:
                actor.SetVisibility(False)
            else:
                grow = 1.25 if name == "moving" else 1.0
                actor.user_matrix = np.asarray(frame) @ (scale * [grow, grow, grow, 1.0])
                actor.SetVisibility(True)
        self.view.request_render()

    def set_text(self, text: str) -> None:
        """The line of text in the view's lower left corner ("" hides it)."""
        self.text.SetInput(text)
        self.view.request_render()

    def clear(self) -> None:
        """Hide arrows, triads, text and the highlight (not the inertia shapes)."""
        self.show_arrows((), {})
        self.show_frames(None, None, None)
        self.highlight(None)
        self.set_text("")
