"""The bundled Stanford arms carry the real arm's joint ranges: a free fall in the window
stops the boom on its stop instead of throwing it 30 m and telling the user to fix the
shipped file."""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core.io.robot_file import load_robot

from gui_helpers import ROBOTS

pytestmark = pytest.mark.gui

STANFORD = ["stanford_saha1999", "stanford_saha2009"]
#: Scheinman's "Specifications for the Stanford Arm": each joint's total range
#: (deg, m for the boom), centred on the papers' home pose in the files
RANGES = (300.0, 200.0, 0.75, 330.0, 220.0, 330.0)


@pytest.mark.parametrize("name", STANFORD)
def test_the_stanford_files_give_the_real_arms_ranges_about_home(name):
    robot = load_robot(ROBOTS / f"{name}.toml")
    limits = robot.joint_limits
    assert np.all(np.isfinite(limits))
    span = np.where(robot.is_revolute, np.degrees(limits[:, 1] - limits[:, 0]),
                    limits[:, 1] - limits[:, 0])
    np.testing.assert_allclose(span, RANGES, rtol=1e-12)
    np.testing.assert_allclose(limits.mean(axis=1), robot.q_home, atol=1e-12)
    assert "SPECS.S[1,VDS]" in robot.description  # the file says where they come from


@pytest.mark.parametrize("name", STANFORD)
def test_a_free_fall_of_the_bundled_stanford_arm_keeps_its_boom(make_window, qtbot, name):
    window = make_window(ROBOTS / f"{name}.toml")
    panel = window.run_panel
    assert window.run_panel.free_fall._stops.isChecked()  # on: the file gives limits
    with qtbot.waitSignal(window.session.run_ended, timeout=60000) as ended:
        panel.start_free_fall(3.0)
    traj = ended.args[0].trajectory
    robot = window.session.model
    boom = robot.joint_limits[2]
    assert boom[0] - 0.01 < traj.q[:, 2].min() and traj.q[:, 2].max() < boom[1] + 0.01
    text = panel.status_text()
    assert "no limits" not in text and "model file" not in text
    assert "boom" in text and "stop" in text  # the stop report names the boom's stop
