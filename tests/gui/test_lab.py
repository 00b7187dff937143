"""The teaching lab in the main window (gui/panels/lab_panel.py, gui/scene/lab_overlays.py), on real
widgets under Xvfb: recursion walkthrough, DH lesson, inertia shapes and warnings."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor

from armdyn.core import forward_kinematics, inverse_dynamics
from armdyn.core.lab.walkthrough import RIDIM, UDU, walkthrough
from armdyn.gui.panels import lab_panel
from armdyn.gui.scene.lab_overlays import HIGHLIGHT_COLOR
from gui_helpers import PUMA, ROBOTS, flush_events

pytestmark = pytest.mark.gui


def _open_lab(qtbot, make_window, path=PUMA):
    window = make_window(path, size=(1500, 950))
    window.lab_action.trigger()
    flush_events()
    lab = window.lab
    qtbot.waitUntil(lambda: lab.isVisible(), timeout=2000)
    q = window.pose + 0.2
    window.set_pose(q)
    lab.flush()
    return window, lab


def _color(actor) -> str:
    return QColor.fromRgbF(*actor.prop.color.float_rgb).name().upper()


def test_view_menu_has_the_lab(qtbot, make_window):
    window = make_window()
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert window.lab_action in view_menu.actions()
    window.lab_action.trigger()
    flush_events()
    assert window.lab_dock.isVisible() and window.lab.isVisible()


def test_walkthrough_steps_highlight_draw_and_list_core_numbers(qtbot, make_window):
    window, lab = _open_lab(qtbot, make_window)
    robot = window.document.robot
    steps = lab.steps()
    assert len(steps) == 3 * robot.n and lab.algorithm_key() == RIDIM
    lab.go_to(0)
    seen_links = []
    for i in range(len(steps)):
        step = lab.current_step()
        assert step is steps[i]
        k = step.link
        seen_links.append(k)
        # the link is highlighted, the others keep their colour
        assert lab.overlay.highlighted == k
        assert _color(window.view3d.actors[f"joint {k + 1}"]) == HIGHLIGHT_COLOR.upper()
        other = (k + 1) % robot.n
        assert _color(window.view3d.actors[f"joint {other + 1}"]) != HIGHLIGHT_COLOR.upper()
        # one arrow per non-zero vector of the step, at O_i
        drawn = lab.overlay.visible_arrows()
        assert drawn == {a.kind for a in step.arrows if np.linalg.norm(a.vector) > 1e-12}
        for kind in drawn:
            origin = lab.overlay.arrow_actors[kind].user_matrix[:3, 3]
            np.testing.assert_allclose(origin, forward_kinematics(robot, lab.q)
                                       .joint_origins[k], atol=1e-12)
        # the numbers table lists the step's quantities with their equations, each
        # with its meaning across the table on the row below
        assert lab.numbers.rowCount() == 2 * len(step.quantities)
        assert lab.numbers.item(0, 0).text() == step.quantities[0].symbol
        assert lab.numbers.item(0, 1).text() == step.quantities[0].equation
        assert lab.numbers.item(1, 0).text().startswith(step.quantities[0].meaning)
        assert step.quantities[0].unit in lab.numbers.item(1, 0).text()
        assert lab.numbers.columnSpan(1, 0) == lab.numbers.columnCount()
        lab.next_step()
    assert seen_links[:robot.n] == list(range(robot.n))            # forward: base outwards
    assert seen_links[robot.n:2 * robot.n] == list(range(robot.n))[::-1]   # and back
    # the last step's tau is inverse_dynamics at the lab's pose and rates
    last = lab.current_step()
    tau = inverse_dynamics(robot, lab.q, lab.qd, lab.qdd)
    np.testing.assert_allclose(last.quantity("\u03c4").value, tau, rtol=1e-12)
    row = lab_panel.quantity_row([q.symbol for q in last.quantities].index("\u03c4"))
    shown = [float(x) for x in lab.numbers.item(row, 2).text().strip("[]").split(",")]
    np.testing.assert_allclose(shown, tau, rtol=1e-3)
    # back one step: the previous link again
    lab.previous_step()
    assert lab.current_step() is steps[-2]


def test_forward_dynamics_walkthrough_gives_the_rates_back(qtbot, make_window):
    window, lab = _open_lab(qtbot, make_window)
    lab.set_algorithm(UDU)
    lab.go_to(10 ** 6)
    last = lab.current_step()
    assert last.phase == "accelerations (outward)"
    np.testing.assert_allclose(last.quantity("\u03b8''").value, lab.qdd, rtol=1e-9, atol=1e-9)
    # typed rates: the walkthrough follows (debounced)
    lab.rates.item(1, 2).setText("-3")
    qtbot.waitUntil(lambda: not lab.is_pending(), timeout=1000)
    assert lab.qdd[2] == -3.0
    expected = walkthrough(window.document.robot, lab.q, lab.qd, lab.qdd).qdd
    np.testing.assert_allclose(lab.current_step().quantity("\u03b8''").value, expected,
                               rtol=1e-9, atol=1e-9)
    # the arrow scale slider scales the arrows
    step = lab.current_step()
    kind = max(step.arrows, key=lambda a: np.linalg.norm(a.vector)).kind
    before = np.linalg.norm(lab.overlay.arrow_actors[kind].user_matrix[:3, 0])
    lab.scale_slider.setValue(4)      # x2
    after = np.linalg.norm(lab.overlay.arrow_actors[kind].user_matrix[:3, 0])
    assert after == pytest.approx(2 * before, rel=1e-9)


def test_dh_lesson_animates_a_row_into_cores_frame(qtbot, make_window, monkeypatch):
    monkeypatch.setattr(lab_panel, "STEP_MS", 99)
    window, lab = _open_lab(qtbot, make_window)
    lab.tabs.setCurrentIndex(1)
    lab.set_dh_link(1)
    editor = window.editor
    dh = editor.dh_view
    assert editor.tabs.currentWidget() is dh
    assert (dh.currentIndex().row(), dh.currentIndex().column()) == (
        1, editor.dh_model.column_of("theta"))
    assert lab.dh_title.text().startswith("Rz(\u03b8_2 = ")
    lab.play_dh(True)
    qtbot.waitUntil(lambda: not lab.is_animating(), timeout=5000)
    assert lab.dh_index == 3 and lab.dh_progress == 1.0
    kin = forward_kinematics(window.document.robot, lab.q)
    np.testing.assert_allclose(lab.dh_frame(), kin.frames[2], atol=1e-12)
    moving = lab.overlay.triads["moving"]
    assert moving.GetVisibility()
    np.testing.assert_allclose(moving.user_matrix[:3, 3], kin.frames[2][:3, 3], atol=1e-12)
    assert dh.currentIndex().column() == editor.dh_model.column_of("alpha")
    assert lab.overlay.highlighted == 1
    # stepping back shows the earlier transform and its cell
    lab.dh_step(-1)
    assert lab.transforms[lab.dh_index].parameter == "a"
    assert dh.currentIndex().column() == editor.dh_model.column_of("a")
    # the whole chain: 4 n steps, ending in the last link's frame
    lab.set_dh_link(0, chain=True)
    assert len(lab.transforms) == 4 * window.document.robot.n
    lab._on_dh_list(len(lab.transforms) - 1)
    np.testing.assert_allclose(lab.dh_frame(), kin.frames[-1], atol=1e-12)


def test_inertia_shapes_and_warnings_select_the_cell(qtbot, make_window):
    window, lab = _open_lab(qtbot, make_window, ROBOTS / "ur5e.toml")
    lab.tabs.setCurrentIndex(2)
    assert lab.warnings == [] and lab.warnings_list.count() == 0
    robot = window.document.robot
    kin = forward_kinematics(robot, lab.q)
    for k, actor in enumerate(lab.overlay.shape_actors):
        assert actor.GetVisibility()
        np.testing.assert_allclose(actor.user_matrix[:3, 3], kin.com[k], atol=1e-12)
    lab.set_shapes("ellipsoid")
    assert lab.overlay.shape_kind == "ellipsoid"
    # a mass centre typed with a wrong sign and far too long: warned, click selects it
    assert window.document.set_text(2, "com_z", "2.5")
    qtbot.waitUntil(lambda: lab.warnings_list.count() == 1, timeout=2000)
    w = lab.warnings[0]
    assert (w.link, w.cell) == (2, "com_z")
    item = lab.warnings_list.item(0)
    qtbot.mouseClick(lab.warnings_list.viewport(),
                     __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.MouseButton.LeftButton,
                     pos=lab.warnings_list.visualItemRect(item).center())
    editor = window.editor
    view = editor.inertia_view
    assert editor.tabs.currentWidget() is view
    assert (view.currentIndex().row(), view.currentIndex().column()) == (
        2, editor.inertia_model.column_of("com_z"))
    assert lab.overlay.highlighted == 2


def test_overlays_only_while_the_lab_is_shown(qtbot, make_window):
    window, lab = _open_lab(qtbot, make_window)
    assert lab.overlay.visible_arrows()
    window.lab_dock.close()
    flush_events()
    assert not lab.isVisible()
    assert not lab.overlay.visible_arrows()
    assert lab.overlay.highlighted is None
    assert not any(a.GetVisibility() for a in lab.overlay.shape_actors)


def test_the_walkthrough_steps_through_a_free_base_with_its_block_pivot(qtbot, make_window):
    """The space robot (a satellite on a free joint, then an arm): its rates table has a
    column per rate, and the UDU^T step of the free joint shows P_1 (6 x 6) and the 6 x 6
    block pivot D_1, which is the mass matrix's base block with the arm eliminated."""
    from armdyn.core import mass_matrix

    window = make_window(ROBOTS / "space_robot.toml", size=(1500, 950))
    window.lab_action.trigger()
    flush_events()
    lab = window.lab
    qtbot.waitUntil(lambda: lab.isVisible(), timeout=2000)
    lab.flush()
    robot = window.document.robot
    assert lab.rates.columnCount() == robot.nv
    assert lab.rates.horizontalHeaderItem(0).text() == "1 \u03c9x"
    lab.set_algorithm(UDU)
    inward = [k for k, s in enumerate(lab.steps()) if s.phase.startswith("articulated")]
    lab.go_to(inward[-1])  # the base is the last joint inward
    step = lab.current_step()
    assert step.link == 0 and lab.step_label.text().startswith(f"step {inward[-1] + 1} /")
    symbols = [q.symbol for q in step.quantities]
    assert "P_1" in symbols and "D_1" in symbols and "m\u0302_1" not in symbols
    D = step.quantity("D_1").value
    M = mass_matrix(robot, lab.q)
    base = np.arange(robot.nv)[robot.v_slice(robot.joint_names[0])]
    arm = np.arange(base[-1] + 1, robot.nv)
    schur = M[np.ix_(base, base)] - M[np.ix_(base, arm)] @ np.linalg.solve(
        M[np.ix_(arm, arm)], M[np.ix_(arm, base)])
    np.testing.assert_allclose(D, schur, rtol=1e-9, atol=1e-9 * np.abs(schur).max())
    row = lab_panel.quantity_row(symbols.index("D_1"))
    shown = lab.numbers.item(row, 2).text().splitlines()
    assert len(shown) == 6 and all(len(line.split()) == 6 for line in shown)
    lab.go_to(len(lab.steps()) - 1)
    np.testing.assert_allclose(lab.current_step().quantity("\u03b8''").value, lab.qdd,
                               rtol=1e-8, atol=1e-8)
