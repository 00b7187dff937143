"""Push the arm (gui/scene/push.py): Ctrl+drag on a link during a live free fall pulls it."""
from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtTest import QTest

from armdyn.core import forward_kinematics
from armdyn.core.sim.pull import PULL_FORCE, PULL_LINK

from gui_helpers import PLANAR, chain, wait_for_settled_view, widget_pixel


def forearm_middle(window, q) -> np.ndarray:
    """The middle of link 2's rod (frame 2 at its distal end, x along it, a = 1 m)."""
    frame = forward_kinematics(window.document.robot, q).frames[2]
    return frame[:3, 3] + frame[:3, :3] @ np.array([-0.5, 0.0, 0.0])


def test_pick_finds_the_link_under_a_projected_point(make_window):
    window = make_window(PLANAR, size=(1600, 1000))
    window.view3d.fit()
    window.view3d.render_now()
    point = forearm_middle(window, window.view3d.q)
    pixel = widget_pixel(window, point)
    hit = window.push.pick(pixel.x(), pixel.y())
    assert hit is not None
    link, where = hit
    assert link == 2
    assert np.linalg.norm(where - point) < 0.1  # on the rod's surface near the point
    # the empty corner picks nothing
    assert window.push.pick(2, 2) is None


def test_ctrl_drag_pulls_a_live_free_fall(make_window, qtbot):
    window = make_window(PLANAR, size=(1600, 1000))
    panel, push, view = window.run_panel, window.push, window.view3d
    view.fit()
    view.render_now()
    chunks = []
    panel.chunk.connect(chunks.append)
    ticks = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    try:
        panel.set_live(True)
        panel.start_free_fall(30.0)
        qtbot.waitUntil(lambda: len(chunks) >= 10, timeout=20000)
        assert panel.is_live()
        before = len(chunks)
        # the shown pose follows the run
        qtbot.waitUntil(lambda: np.allclose(view.q, chunks[-1].q[-1]), timeout=2000)
        view.render_now()
        start = widget_pixel(window, forearm_middle(window, view.q))
        QTest.mousePress(view.plotter, Qt.LeftButton, Qt.ControlModifier, start)
        assert push.grabbed == 2
        assert push.line_visible()
        QTest.mouseMove(view.plotter, start + QPoint(60, -80))
        qtbot.wait(400)
        during = len(chunks)
        QTest.mouseRelease(view.plotter, Qt.LeftButton, Qt.ControlModifier,
                           start + QPoint(60, -80))
        assert push.grabbed == 0
        assert not push.line_visible()
        qtbot.wait(100)
        panel.stop()
        qtbot.waitUntil(lambda: not panel.is_running(), timeout=5000)
    finally:
        timer.stop()
    # the record: zero before the grab, link 2 with a force while it lasted
    early = np.concatenate([c.pull for c in chunks[:before]])
    assert np.all(early == 0.0)
    # (chunks computed before the press may still have been queued: from the first
    # pulled sample on, every sample until the release is pulled)
    links = np.concatenate([c.pull for c in chunks[before:during]])[:, PULL_LINK]
    first = int(np.flatnonzero(links == 2)[0])
    assert np.all(links[:first] == 0) and np.all(links[first:] == 2)
    assert links.size - first >= 10
    pulled = np.concatenate([c.pull for c in chunks[before:during]])[first:]
    assert np.linalg.norm(pulled[:, PULL_FORCE], axis=1).max() > 1.0
    # the GUI thread kept turning
    assert np.diff(ticks).max() < 1.0  # software GL under Xvfb: renders are slow
    # playback: the line at a pulled sample, none at t = 0
    traj = window.trajectory
    assert traj is not None and traj.pull is not None
    k = int(np.flatnonzero(traj.pull[:, PULL_LINK] == 2)[0]) + 1
    window.playback.seek(float(traj.t[k]))
    qtbot.waitUntil(push.line_visible, timeout=2000)
    window.playback.seek(0.0)
    qtbot.waitUntil(lambda: not push.line_visible(), timeout=2000)




def test_pick_finds_a_link_of_a_big_arm_drawn_as_one_mesh(make_window, tmp_path, qtbot):
    """A robot of more than 24 links is drawn as merged meshes (one actor per layer);
    the pick names the link by the picked cell (it found nothing there before). Checked
    against the parts' own meshes, placed one by one: the picked point lies on the
    surface of a part of the link the pick names."""
    from armdyn.core import save_robot
    from armdyn.core.model.arguments import kernel_of

    from armdyn.gui.scene.arm_scene import build_parts, part_link, part_matrices, scene_frames
    from armdyn.gui.scene.view3d import MERGE_ABOVE

    path = tmp_path / "chain40.toml"
    save_robot(chain(40), path)
    window = make_window(path, size=(1600, 1000))
    # the view at its final size (VTK's too) before aiming: a pixel computed from the
    # widget's size while VTK still had the last one picked another link
    wait_for_settled_view(qtbot, window.view3d)
    robot = window.document.robot
    assert robot.n > MERGE_ABOVE and window.view3d.merged_actors()
    window.view3d.fit()
    window.view3d.render_now()
    q = window.view3d.q
    parents = np.asarray(kernel_of(robot).views.parent)
    parts = [p for p in build_parts(robot) if p.layer == "arm" and p.gap is None]
    placed = part_matrices(parts, scene_frames(forward_kinematics(robot, q)), q)
    frames = forward_kinematics(robot, q).frames

    def surface_distance(link: int, point: np.ndarray) -> float:
        """From `point` to the nearest surface of the link's parts, placed, m."""
        out = np.inf
        for part, m in zip(parts, placed, strict=True):
            if part_link(part, parents) == link:
                mesh = part.mesh.transform(m, inplace=False)
                _, closest = mesh.find_closest_cell(point, return_closest_point=True)
                out = min(out, float(np.linalg.norm(closest - point)))
        return out

    for k in (10, 20, 30):  # aim at the middle of link k's rod
        a = robot.links[k - 1].a
        aim = frames[k][:3, 3] + frames[k][:3, :3] @ np.array([-a / 2, 0.0, 0.0])
        pixel = widget_pixel(window, aim)
        hit = window.push.pick(pixel.x(), pixel.y())
        assert hit is not None, k
        link, where = hit
        assert surface_distance(link, where) < 1e-6, (k, link)
        assert abs(link - k) <= 3  # near where we aimed (the joints are wide)
