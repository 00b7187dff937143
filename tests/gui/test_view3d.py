"""The 3D view: meshes built once and moved by user_matrix, rebuilt only when needed."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtTest import QTest

from armdyn.core import JointType, forward_kinematics
from armdyn.core.io.robot_file import load_robot
from armdyn.gui.scene.arm_scene import LAYERS, Sizes, build_parts, up_vector

from gui_helpers import (PLANAR, PUMA, ROBOT_FILES, ROBOTS, SCARA, chain, flush_events, rgb_array,
                         screen_pixels, wait_for_settled_view)

pytestmark = pytest.mark.gui


@pytest.fixture
def view(shared_view):
    """The shared view with its default layers and projection."""
    for layer in LAYERS:
        shared_view.set_layer_visible(layer, layer in ("arm", "effector", "ground"))
    shared_view.set_orthographic(False)
    return shared_view


def centre(actor) -> np.ndarray:
    b = np.array(actor.GetBounds())
    return (b[0::2] + b[1::2]) / 2


@pytest.mark.parametrize("path", ROBOT_FILES, ids=lambda p: p.stem)
def test_every_bundled_robot_has_its_parts(path):
    robot = load_robot(path)
    names = {p.name for p in build_parts(robot)}
    for i in range(1, robot.n + 1):
        assert {f"joint {i}", f"com {i}", f"frame {i}"} <= names
    assert {"frame 0", "effector", "base", "floor", "grid"} <= names


def test_the_floor_is_below_everything_the_arm_can_reach():
    for path in ROBOT_FILES:
        robot = load_robot(path)
        up = up_vector(robot)
        floor = next(p for p in build_parts(robot) if p.name == "floor").mesh
        height = float(floor.points.mean(axis=0) @ up)
        rng = np.random.default_rng(0)
        for _ in range(50):
            q = robot.q_home + rng.uniform(-np.pi, np.pi, robot.n) * robot.is_revolute
            assert np.all(forward_kinematics(robot, q).origins @ up > height), path.name


def test_sizes_scale_with_the_robot():
    scara, puma = Sizes.of(load_robot(SCARA)), Sizes.of(load_robot(PUMA))
    ratio = scara.joint_radius / puma.joint_radius
    assert ratio == pytest.approx(scara.reach / puma.reach)


def test_a_pose_moves_actors_by_their_frames(view):
    robot = load_robot(PUMA)
    view.set_robot(robot)
    actors_before = dict(view.actors)
    q = np.radians([10, -20, 30, 40, -50, 60])
    view.set_pose(q)
    frames = forward_kinematics(robot, q).frames
    np.testing.assert_allclose(view.actors["joint 3"].user_matrix, frames[2])
    np.testing.assert_allclose(view.actors["length 2"].user_matrix, frames[2])
    np.testing.assert_allclose(view.actors["effector"].user_matrix, frames[6])
    np.testing.assert_allclose(view.actors["base"].user_matrix, np.eye(4))
    assert view.actors == actors_before  # same actors: nothing was rebuilt
    # the wrist's joint body sits at the origin of frame 3 in the scene
    np.testing.assert_allclose(centre(view.actors["joint 4"]), frames[3][:3, 3], atol=1e-9)


def test_prismatic_rod_is_stretched_by_the_joint_value(view):
    robot = load_robot(SCARA)
    view.set_robot(robot)
    rod = view.actors["offset 3"]
    for b in (0.05, 0.2):
        q = robot.q_home.copy()
        q[2] = b
        view.set_pose(q)
        lo, hi = np.array(rod.GetBounds())[4:6]
        assert hi - lo == pytest.approx(b, rel=1e-6)


def test_geometry_edit_reshapes_meshes_in_place(view):
    robot = load_robot(PUMA)
    view.set_robot(robot)
    actor = view.actors["length 2"]
    length = np.ptp(np.array(actor.mapper.dataset.points)[:, 0])
    links = list(robot.links)
    links[1] = replace(links[1], a=0.8)
    view.set_robot(robot.with_links(links))
    assert view.actors["length 2"] is actor  # the same actor, a new mesh
    view.render_now()
    new_length = np.ptp(np.array(actor.mapper.dataset.points)[:, 0])
    assert new_length == pytest.approx(length + 0.8 - 0.432, abs=1e-9)


def test_theta_edit_only_moves(view):
    robot = load_robot(PUMA)
    view.set_robot(robot)
    meshes = {name: actor.mapper.dataset for name, actor in view.actors.items()}
    links = list(robot.links)
    links[1] = replace(links[1], theta=0.5)
    new = robot.with_links(links)
    view.set_robot(new, new.q_home)
    assert {n: a.mapper.dataset for n, a in view.actors.items()} == meshes
    np.testing.assert_allclose(view.actors["joint 3"].user_matrix,
                               forward_kinematics(new, new.q_home).frames[2])


def test_topology_edit_rebuilds_actors(view):
    robot = load_robot(PLANAR)
    view.set_robot(robot)
    count = len(view.actors)
    bigger = robot.with_links(robot.links + (robot.links[-1],))
    view.set_robot(bigger)
    assert "joint 3" in view.actors and len(view.actors) > count
    links = list(bigger.links)
    links[0] = replace(links[0], joint=JointType.PRISMATIC)
    view.set_robot(bigger.with_links(links))
    assert view.parts[[p.name for p in view.parts].index("offset 1")].stretch == 0
    assert len(view.plotter.renderer.actors) == len(view.actors)


def test_layers_toggle(view):
    view.set_robot(load_robot(PUMA))
    assert not view.actors["com 1"].GetVisibility()
    view.set_layer_visible("com", True)
    view.set_layer_visible("frames", True)
    assert view.actors["com 1"].GetVisibility() and view.actors["frame 0"].GetVisibility()
    view.set_layer_visible("ground", False)
    assert not view.actors["floor"].GetVisibility()


@pytest.mark.parametrize("name", ["front", "side", "top", "iso"])
def test_standard_views_keep_the_arm_in_the_picture(view, name):
    view.set_robot(load_robot(PUMA))
    view.view(name)
    renderer = view.plotter.renderer
    b = view.arm_bounds()
    corners = [(x, y, z) for x in b[:2] for y in b[2:4] for z in b[4:]]
    for c in corners:
        renderer.SetWorldPoint(*c, 1.0)
        renderer.WorldToDisplay()
        x, y, _ = renderer.GetDisplayPoint()
        w, h = renderer.GetSize()
        assert -1 <= x <= w + 1 and -1 <= y <= h + 1


def test_export_png_has_the_arm_in_it(view, tmp_path):
    view.set_robot(load_robot(PUMA))
    path = view.export_png(tmp_path / "view.png")
    from PySide6.QtGui import QImage
    image = QImage(str(path))
    assert image.width() > 100
    colours = {image.pixelColor(x, y).name() for x in range(0, image.width(), 7)
               for y in range(0, image.height(), 7)}
    assert len(colours) > 20  # shaded parts, not a blank background


def test_vtk_key_bindings_are_off(view, qtbot):
    view.set_robot(load_robot(PUMA))
    view.plotter.setFocus()
    for key in "wqe3":
        qtbot.keyClick(view.plotter, key)
    assert view.actors["joint 1"].prop.style == "Surface"
    assert not view._closed and view.plotter.ren_win is not None


def test_one_render_per_render_request(view):
    """With pyvistaqt's OpenGL widget, `plotter.render()` rendered and the finished
    frame asked the widget to repaint, whose paintGL rendered the scene again: every
    frame cost two renders. A native window must not either."""
    ends = []
    tag = view.plotter.ren_win.AddObserver("EndEvent", lambda *_: ends.append(1))
    try:
        flush_events()
        ends.clear()
        for k in range(5):
            view.render_now()
            flush_events()
        assert 5 <= len(ends) <= 6  # (+1: the anti-aliased still frame after moving)
    finally:
        view.plotter.ren_win.RemoveObserver(tag)


def test_paints_of_the_native_window_are_one_render(view):
    """pyvistaqt renders at every paint event of its window, and a window settling its
    layout sends several: each was a whole frame (40 ms for a 200-link robot). Paints
    are render requests, merged like the others."""
    from armdyn.gui.scene.view3d import JUMP_DELAY_MS, STILL_MS

    ends = []
    tag = view.plotter.ren_win.AddObserver("EndEvent", lambda *_: ends.append(1))
    try:
        QTest.qWait(STILL_MS + 100)  # no anti-aliased still frame pending
        ends.clear()
        for _ in range(5):
            view.plotter.repaint()
        QTest.qWait(JUMP_DELAY_MS + 50)
        assert len(ends) == 1
    finally:
        view.plotter.ren_win.RemoveObserver(tag)


def test_the_still_frame_is_the_frame_already_asked_for(view, qtbot):
    """When the anti-aliased still frame falls due while a frame is asked for (the end
    of a run: the last pose), one anti-aliased render draws both: two back to back held
    the window ~60 ms."""
    ends = []
    tag = view.plotter.ren_win.AddObserver("EndEvent", lambda *_: ends.append(1))
    try:
        view.render_now()
        # renders back to back: the arm moves (without FXAA, the still frame pending);
        # a busy machine may take longer than MOVING_WITHIN_S for one: render again
        qtbot.waitUntil(lambda: (view.render_now(), not view.plotter.renderer.GetUseFXAA())[1],
                        timeout=5000)
        assert view._still_timer.isActive()
        ends.clear()
        view.request_render()
        view._still_timer.stop()
        view._render_still()  # falls due now
        # the frame asked for comes at the next turn, or JUMP_DELAY_MS later if the
        # machine was too busy for the renders above to count as moving: wait for it
        qtbot.waitUntil(lambda: len(ends) >= 1, timeout=5000)
        flush_events()
        assert not view._render_timer.isActive() and not view._still_timer.isActive()
        assert len(ends) == 1 and view.plotter.renderer.GetUseFXAA()
    finally:
        view.plotter.ren_win.RemoveObserver(tag)


def test_the_floor_is_drawn_flat_in_its_colour(view):
    """The floor is drawn unlit (a software-GL frame ~2.5 ms cheaper): everywhere in its
    own colour, FLOOR_COLOR, whatever the lights and the camera."""
    from armdyn.gui.scene.arm_scene import FLOOR_COLOR

    view.set_robot(load_robot(PUMA))
    view.reset_camera()
    prop = view.actors["floor"].prop
    prop.color = "#FF0000"  # where the floor is: red, lit or not
    red = rgb_array(view.image()).astype(int)
    where = (red[..., 0] > 150) & (red[..., 1] < 90) & (red[..., 2] < 90)
    prop.color = FLOOR_COLOR
    shown = rgb_array(view.image())[where]
    assert len(shown) > 1000, "no floor in the picture"
    colours, counts = np.unique(shown, axis=0, return_counts=True)
    expected = tuple(int(FLOOR_COLOR[k:k + 2], 16) for k in (1, 3, 5))
    assert np.abs(colours[counts.argmax()].astype(int) - expected).max() <= 2
    assert counts.max() > 0.8 * len(shown)  # (the rest: the grid, edges)


def test_a_jump_of_the_arm_waits_for_the_repaints_asked_for_with_it(view):
    """At the end of a run the arm jumps to the run's first pose while the plots are
    repainted (Qt delivers a repaint ~5 ms after it is asked for): rendered at once,
    the frame and the repaint held the window in one event-loop turn (~60 ms). After a
    still picture a frame waits JUMP_DELAY_MS; while the arm moves it does not wait."""
    import time

    from armdyn.gui.scene.view3d import JUMP_DELAY_MS, STILL_MS

    ends = []
    tag = view.plotter.ren_win.AddObserver("EndEvent",
                                           lambda *_: ends.append(time.perf_counter()))
    try:
        QTest.qWait(STILL_MS + 100)  # a still picture
        ends.clear()
        asked = time.perf_counter()
        view.set_pose(view.q + 0.3)
        QTest.qWait(JUMP_DELAY_MS + 60)
        assert ends and ends[0] - asked >= JUMP_DELAY_MS / 1000
        assert not view._render_timer.isActive()
        view.set_pose(view.q + 0.3)  # moving now: the next turn
        assert view._render_timer.interval() == 0
    finally:
        view.plotter.ren_win.RemoveObserver(tag)


def test_the_window_holds_no_opengl_widget(make_window):
    """Under software GL every flush of a window holding a QOpenGLWidget composites the
    whole window through OpenGL (15-19 ms at 1600x1000, for a progress bar's repaint;
    issue #8). VTK draws into a native window of its own instead."""
    from PySide6.QtCore import Qt
    from PySide6.QtOpenGLWidgets import QOpenGLWidget

    window = make_window()
    assert window.findChildren(QOpenGLWidget) == []
    assert window.view3d.plotter.testAttribute(Qt.WidgetAttribute.WA_PaintOnScreen)


@pytest.mark.parametrize("path", [PUMA, None], ids=["puma", "40-link chain"])
def test_the_screen_shows_the_rendered_picture(make_window, path, qtbot):
    """The pixels on screen where the view is are VTK's picture. A native child window
    holding pyvistaqt 0.13's OpenGL widget kept the size it was created with: the screen
    showed a black strip over stale pixels of the plots."""
    window = make_window(path, size=(1400, 900))
    if path is None:
        window.view3d.set_robot(chain(40))
    wait_for_settled_view(qtbot, window.view3d)  # (a fixed wait read a 754 x 55 view)
    picture = rgb_array(window.view3d.image())
    flush_events()
    shown = screen_pixels(window.view3d.plotter)
    assert picture.shape == shown.shape
    assert np.ptp(picture.reshape(-1, 3), axis=0).max() > 100  # an arm on a background
    differ = np.abs(picture.astype(int) - shown.astype(int)).max(axis=2) > 24
    assert differ.mean() < 0.01, f"{differ.mean():.1%} of the view differs from the picture"


def test_the_window_image_is_what_the_screen_shows(make_window, tmp_path, qtbot):
    """`MainWindow.image` (--screenshot) puts the 3D picture where the screen shows it;
    `QWidget.grab` alone leaves the native 3D view's area empty."""
    from PySide6.QtGui import QImage

    from armdyn.gui.app import save_window_image

    window = make_window(PUMA, size=(1400, 900))
    wait_for_settled_view(qtbot, window.view3d)
    assert save_window_image(window, str(tmp_path / "shot.png")) is None
    image = rgb_array(QImage(str(tmp_path / "shot.png")))
    flush_events()
    shown = screen_pixels(window)
    assert image.shape == shown.shape
    differ = np.abs(image.astype(int) - shown.astype(int)).max(axis=2) > 24
    assert differ.mean() < 0.01, f"{differ.mean():.1%} of the window differs from the screen"
    view = window.view3d.plotter
    from PySide6.QtCore import QPoint
    corner = view.mapTo(window, QPoint(0, 0))
    area = differ[corner.y():corner.y() + view.height(), corner.x():corner.x() + view.width()]
    assert area.mean() < 0.01


def test_a_big_trees_branch_points_are_as_coarse_as_its_links(monkeypatch):
    """A model of more than COARSE_ABOVE links draws every cylinder and ball with a third
    of the facets, its branch points too: the human's 17 at full resolution were 25,000
    of its 27,000 triangles, and a software-GL frame costs in proportion (issue #23).
    The same model built fine (the threshold at its size) has ~3 times the facets."""
    from armdyn.core.io.model_files import load_model
    from armdyn.gui.scene import arm_scene

    human = load_model(ROBOTS / "human_body_jalon.toml")
    assert human.n > arm_scene.COARSE_ABOVE

    def cells(parts, prefix):
        return sum(p.mesh.n_cells for p in parts if p.name.startswith(prefix))

    coarse = build_parts(human)
    monkeypatch.setattr(arm_scene, "COARSE_ABOVE", human.n)  # the same model, drawn fine
    fine = build_parts(human)
    assert cells(fine, "root") > 2.5 * cells(coarse, "root")
    assert cells(fine, "joint") > 2.5 * cells(coarse, "joint")
    assert sum(p.mesh.n_cells for p in coarse if p.layer == "arm") < 10_000


def test_a_new_windows_3d_view_renders_once_its_window_is_painted(qtbot, settings):
    """Renders asked for while the window is built and shown wait for the 3D view's
    first paint (its native window exposed): a frame drawn before that was thrown away
    and cost a Run pressed at once 50-90 ms (software GL); the first paint renders."""
    from PySide6.QtCore import QEvent, QObject

    from armdyn.gui.main_window import MainWindow

    window = MainWindow(load_robot(PUMA), None, settings=settings, restore_layout=False)
    view = window.view3d
    events: list[str] = []

    class Paints(QObject):
        def eventFilter(self, watched, event):  # noqa: N802 - Qt override
            if event.type() == QEvent.Type.Paint:
                events.append("paint")
            return False

    paints = Paints()
    view.plotter.installEventFilter(paints)  # (runs before the view's own filter)
    tag = view.plotter.ren_win.AddObserver("EndEvent", lambda *_: events.append("render"))
    try:
        view.request_render()
        QTest.qWait(100)
        assert events == []  # not shown: nothing rendered
        window.resize(1100, 720)
        window.show()
        QTest.qWaitForWindowExposed(window)
        qtbot.waitUntil(lambda: "render" in events, timeout=5000)
        assert events.index("paint") < events.index("render")
    finally:
        view.plotter.ren_win.RemoveObserver(tag)
        view.plotter.removeEventFilter(paints)
        window.shutdown()
        window.close()
        window.deleteLater()
        flush_events()
