"""InspectPanel: the tables show core's quantities at the pose, debounced."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from armdyn.core import (
    articulated_body_inertias, composite_body_inertias, gravity_torques, link_motion_matrices,
    mass_matrix, udu_factors,
)
from armdyn.core.io.robot_file import load_robot
from armdyn.gui.panels.inspect_panel import DEBOUNCE_MS, InspectPanel

ROBOTS = Path(__file__).resolve().parents[2] / "robots"


@pytest.fixture(scope="module")
def stanford():
    return load_robot(ROBOTS / "stanford_saha2009.toml")


@pytest.fixture
def panel(qtbot):
    p = InspectPanel()
    qtbot.addWidget(p)
    p.show()
    return p


def shown(table) -> np.ndarray:
    """The numbers a table displays (a QTableWidget or a `_MatrixTable`)."""
    text = table.text if hasattr(table, "text") else lambda i, j: table.item(i, j).text()
    return np.array([[float(text(i, j)) for j in range(table.columnCount())]
                     for i in range(table.rowCount())])


def test_gim_is_symmetric_positive_definite_and_matches_core(qtbot, panel, stanford):
    q = stanford.q_home + np.array([0.3, -0.4, 0.2, 0.5, -0.6, 0.7])
    panel.set_state(stanford, q)
    qtbot.waitUntil(lambda: not panel.is_pending(), timeout=1000)
    M = shown(panel._gim)
    assert M.shape == (6, 6)
    np.testing.assert_allclose(M, M.T)
    assert np.linalg.eigvalsh(M)[0] > 0
    expected = mass_matrix(stanford, q)
    np.testing.assert_allclose(M, expected, rtol=1e-3, atol=1e-12 * np.abs(expected).max())
    assert f"{np.linalg.cond(expected):.4g}" in panel._cond.text()
    assert "kg m" in panel._gim.tool_tip(0, 2)  # revolute-prismatic entry


def test_per_joint_table_shows_d_and_gravity(qtbot, panel, stanford):
    q = stanford.q_home + 0.2
    panel.set_state(stanford, q)
    panel.flush()
    values = shown(panel._per_joint)
    _, D = udu_factors(stanford, q)
    np.testing.assert_allclose(values[:, 0], D, rtol=1e-3)
    np.testing.assert_allclose(values[:, 1], gravity_torques(stanford, q), rtol=1e-3, atol=1e-9)
    assert panel._per_joint.tool_tip(2, 1).endswith(" N")  # prismatic boom: a force


def test_column_headings_are_not_clipped(qtbot, panel, stanford):
    """The per-joint table's unit headings fit their columns, in the window's bold
    header font too (they were cut to ") (kg m² | kg" there)."""
    panel.flush()  # (no robot yet: the tables are made, with no headings)
    table = panel._per_joint
    header = table.horizontalHeader()
    font = header.font()
    font.setBold(True)
    font.setPointSize(font.pointSize() + 3)
    header.setFont(font)
    panel.set_state(stanford, stanford.q_home)
    panel.flush()
    for j in range(table.columnCount()):
        heading = table.model().headerData(j, Qt.Horizontal, Qt.DisplayRole)
        assert header.sectionSize(j) > header.fontMetrics().horizontalAdvance(heading)


def test_link_combo_picks_the_6x6_inertias(qtbot, panel, stanford):
    q = stanford.q_home - 0.3
    panel.set_state(stanford, q)
    panel.flush()
    for i in (0, 3):
        panel.set_selected_link(i)
        composite = shown(panel._composite)
        np.testing.assert_allclose(composite, composite_body_inertias(stanford, q)[i],
                                   rtol=1e-3, atol=1e-9)
        mass = sum(link.mass for link in stanford.links[i:])
        np.testing.assert_allclose(np.diag(composite)[3:], mass, rtol=1e-3)  # m 1 block
        articulated = shown(panel._articulated)
        np.testing.assert_allclose(articulated, articulated_body_inertias(stanford, q).M_hat[i],
                                   rtol=1e-3, atol=1e-9)
    assert panel.selected_link() == 3


def test_rapid_pose_changes_are_debounced(qtbot, panel, stanford):
    calls = []
    panel._timer.timeout.connect(lambda: calls.append(1))
    for k in range(20):
        panel.set_state(stanford, stanford.q_home + 0.01 * k)
    assert panel.is_pending()
    qtbot.wait(3 * DEBOUNCE_MS)
    assert calls == [1]  # one update for the whole burst, of the last pose
    expected = mass_matrix(stanford, stanford.q_home + 0.19)
    np.testing.assert_allclose(shown(panel._gim), expected, rtol=1e-3,
                               atol=1e-12 * np.abs(expected).max())


def test_clearing_the_robot_keeps_the_panel_alive(qtbot, panel, stanford):
    panel.set_state(stanford, stanford.q_home)
    panel.flush()
    panel.set_state(None, None)
    panel.flush()
    assert panel._link.count() == 0 and panel._gim.rowCount() == 0
    assert panel._cond.text() == ""


def test_velocity_and_acceleration_matrices_match_core(qtbot, panel, stanford):
    """Seed 004's W and H of the chosen link, in the base and the link frame (issue #10)."""
    rng = np.random.default_rng(4)
    q = stanford.q_home + rng.uniform(-0.5, 0.5, 6)
    qd, qdd = rng.uniform(-1, 1, 6), rng.uniform(-2, 2, 6)
    panel.set_state(stanford, q, qd, qdd)
    panel.flush()
    for link in (1, 4):
        panel.set_selected_link(link)
        for frame in ("base", "link"):
            panel.set_motion_frame(frame)
            W, H = link_motion_matrices(stanford, q, qd, qdd, link, frame=frame)
            atol = 1e-3 * max(np.abs(W).max(), np.abs(H).max())
            np.testing.assert_allclose(shown(panel._velocity), W, rtol=1e-3, atol=atol)
            np.testing.assert_allclose(shown(panel._acceleration), H, rtol=1e-3, atol=atol)
    assert panel.motion_frame() == "link"
    assert panel._velocity.item(0, 3).toolTip().endswith("m/s")
    assert panel._acceleration.item(0, 1).toolTip().endswith("1/s\u00b2")


def test_a_pose_alone_gives_zero_rates(qtbot, panel, stanford):
    q = stanford.q_home + 0.3
    panel.set_state(stanford, q)
    panel.flush()
    panel.set_selected_link(5)
    np.testing.assert_array_equal(shown(panel._velocity), np.zeros((4, 4)))
    zero = np.zeros(6)
    _, H = link_motion_matrices(stanford, q, zero, zero, 5)
    np.testing.assert_allclose(shown(panel._acceleration), H, atol=1e-12)


@pytest.mark.gui
def test_inspect_shows_w_and_h_of_the_sample_at_the_playback_time(make_window, qtbot):
    from armdyn.core.sim.trajectory import Trajectory
    from gui_helpers import PLANAR

    window = make_window(PLANAR, (1280, 800))
    robot = window.document.robot
    t = np.linspace(0.0, 1.0, 11)
    q = robot.q_home + np.column_stack([np.sin(t), t ** 2])
    qd, qdd = np.column_stack([np.cos(t), 2 * t]), np.column_stack([-np.sin(t), 2 + 0 * t])
    zero = np.zeros_like(q)
    traj = Trajectory(t=t, q=q, qd=qd, qdd=qdd, tau=zero, energy=np.zeros((len(t), 3)))
    from armdyn.gui.jobs.runs import RunResult

    window.session.end_run(RunResult(traj))  # as a run's end
    window.inspect_dock.raise_()
    panel = window.inspect
    window.playback.seek(0.61)  # the sample at 0.6 s
    qtbot.waitUntil(lambda: not panel.is_pending(), timeout=2000)
    panel.set_selected_link(1)
    W, H = link_motion_matrices(robot, q[6], qd[6], qdd[6], 1)
    atol = 1e-3 * np.abs(H).max()
    np.testing.assert_allclose(shown(panel._velocity), W, rtol=1e-3, atol=atol)
    np.testing.assert_allclose(shown(panel._acceleration), H, rtol=1e-3, atol=atol)
