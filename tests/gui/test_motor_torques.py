"""The motor torques plot of a geared model: each joint torque divided by its gear ratio,
offered only when a joint has a gear, shown beside the joint torques."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from armdyn.core import run_inverse_dynamics
from armdyn.core.io.robot_file import load_robot
from armdyn.gui.plots.plots_panel import PlotsPanel

from gui_helpers import PUMA

pytestmark = pytest.mark.gui


def test_motor_torques_are_the_joint_torques_over_the_gear_ratio(qtbot):
    rigid = load_robot(PUMA)
    ratios = np.array([62.6, 107.8, 53.7, 76.0, 71.9, 76.7])  # the PUMA 560's gears
    geared = rigid.with_links([replace(link, gear_ratio=r, rotor_inertia=2e-4)
                               for link, r in zip(rigid.links, ratios)])
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 900)
    panel.show()
    panel.set_robot(rigid)
    assert "motor_torques" not in panel.available_plots()  # no gear, no motor side
    panel.set_visible_plots(["joint_angles", "joint_torques"])
    panel.set_robot(geared)
    assert panel.visible_plots() == ["joint_angles", "joint_torques", "motor_torques"]
    traj = run_inverse_dynamics(geared, rigid.q_home, rigid.q_home + 0.5, 1.0)
    panel.set_trajectory(traj)
    plots = {p.spec.key: p for p in panel._plots}
    joint, motor = plots["joint_torques"].series, plots["motor_torques"].series
    qtbot.waitUntil(lambda: motor.size == len(traj), timeout=3000)
    np.testing.assert_allclose(joint.y[:, :joint.size].T, traj.tau, rtol=1e-12)
    np.testing.assert_allclose(motor.y[:, :motor.size].T, traj.tau / ratios, rtol=1e-12)
    panel.set_robot(rigid)
    assert "motor_torques" not in panel.visible_plots()
