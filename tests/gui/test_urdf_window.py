"""URDF in the window: File > Open and Save As of .urdf files, warnings shown, a URDF
document saved as URDF, loops refused, and `armdyn FILE.urdf` from the command line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from armdyn.core import Mechanism, inverse_dynamics, mass_matrix
from armdyn.gui.error_report import WARNINGS_BOX_NAME
from armdyn.core.io.model_files import load_model

from gui_helpers import PUMA, ROBOTS, ROOT, armdyn, flush_events
from strategies import example_robot_data

pytestmark = pytest.mark.gui

#: A two-link arm: a revolute shoulder about z and a prismatic slide along x, a tool
#: link fixed to the slide, and damping (read as the shoulder's viscous friction).
SMALL_URDF = """<?xml version="1.0"?>
<robot name="small_arm">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0.2 0 0"/><mass value="2.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial>
  </link>
  <link name="slider">
    <inertial><origin xyz="0.1 0 0"/><mass value="1.0"/>
      <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <link name="tool">
    <inertial><mass value="0.5"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="1"/>
    <dynamics damping="0.1"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="upper"/><child link="slider"/><origin xyz="0.4 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.3" effort="10" velocity="1"/>
  </joint>
  <joint name="tool_mount" type="fixed">
    <parent link="slider"/><child link="tool"/><origin xyz="0.2 0 0"/>
  </joint>
</robot>
"""


@pytest.fixture
def small_urdf(tmp_path) -> Path:
    path = tmp_path / "small_arm.urdf"
    path.write_text(SMALL_URDF)
    return path


def warning_boxes() -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.objectName() == WARNINGS_BOX_NAME
            and w.isVisible()]


def close_warning_boxes() -> list[str]:
    """Close the open warning boxes; return their texts."""
    texts = []
    for box in warning_boxes():
        texts.append(box.text())
        box.close()
    flush_events()
    return texts


def answer_next_modal_dialog() -> list[str]:
    """Close the next modal dialog (an error box) with its default answer as soon as it
    shows; the list receives its text."""
    texts: list[str] = []

    def close() -> None:
        box = QApplication.activeModalWidget()
        if box is None:
            QTimer.singleShot(20, close)
            return
        texts.append(box.text())
        box.done(0)

    QTimer.singleShot(0, close)
    return texts


def assert_same_dynamics(a: Mechanism, b: Mechanism, same_table: bool = True) -> None:
    """Same joints and the same mass matrix and inverse dynamics at random states, the
    joint values mapped through the zero pose (docs/urdf.md: q = q_urdf + q_home); with
    `same_table` also the same home pose."""
    assert a.joint_names == b.joint_names
    if same_table:
        np.testing.assert_allclose(a.q_home, b.q_home, atol=1e-12)
    rng = np.random.default_rng(9)
    for _ in range(3):
        dq, qd, qdd = (rng.uniform(-1, 1, a.n) for _ in range(3))
        q_a, q_b = a.q_home + 0.3 * dq, b.q_home + 0.3 * dq
        np.testing.assert_allclose(mass_matrix(a, q_a), mass_matrix(b, q_b), rtol=1e-9,
                                   atol=1e-12)
        np.testing.assert_allclose(inverse_dynamics(a, q_a, qd, qdd),
                                   inverse_dynamics(b, q_b, qd, qdd), rtol=1e-9, atol=1e-10)


def run_free_fall(window, qtbot, seconds: float) -> None:
    with qtbot.waitSignal(window.run_panel.finished, timeout=60000):
        window.run_panel.start_free_fall(seconds)
    assert window.trajectory is not None and len(window.trajectory) > 5


def test_open_a_urdf_run_save_as_urdf_and_reopen(make_window, qtbot, small_urdf, tmp_path,
                                                 monkeypatch):
    window = make_window(PUMA)
    assert window.files.open(small_urdf)
    doc = window.document
    assert doc.is_mechanism and doc.robot.n == 2 and doc.path == small_urdf
    assert doc.robot.joint_names == ("upper", "slider")
    assert not any("damping" in text for text in close_warning_boxes())
    assert doc.robot.links[0].friction_viscous == 0.1  # <dynamics damping>, docs/urdf.md
    assert "small_arm.urdf" in window.windowTitle()

    run_free_fall(window, qtbot, 0.3)
    moved = window.trajectory.q[-1] - window.trajectory.q[0]
    assert abs(moved[0]) > 1e-3  # the shoulder falls

    copy = tmp_path / "copy.urdf"
    monkeypatch.setattr(window.files, "ask_save_path", lambda *a: copy)  # the file dialog
    assert window.files.save_as()
    assert copy.read_text().lstrip().startswith("<?xml") and "<robot" in copy.read_text()
    assert doc.path == copy and not doc.is_modified
    assert not warning_boxes()  # default gravity: nothing URDF cannot hold
    saved = doc.robot
    assert window.files.open(copy)
    assert_same_dynamics(window.document.robot, saved)
    assert_same_dynamics(load_model(copy), load_model(small_urdf))


def test_a_real_arm_from_example_robot_data(make_window, qtbot, tmp_path, monkeypatch):
    xarm = example_robot_data() / "xarm_description" / "urdf" / "xarm7.urdf"
    window = make_window(PUMA)
    monkeypatch.setattr(window.files, "ask_open_path", lambda: xarm)  # the file dialog
    window.open_action.trigger()
    doc = window.document
    assert doc.path == xarm and doc.is_mechanism and doc.robot.n == 7
    assert not any("damping" in text for text in close_warning_boxes())  # read now
    assert any(link.friction_viscous > 0 or link.friction_coulomb > 0
               for link in doc.robot.links)
    with qtbot.waitSignal(window.run_panel.finished, timeout=60000):
        window.run_panel.start_inverse(0.3)
    assert len(window.trajectory) > 5

    copy = tmp_path / "xarm7_copy.urdf"
    monkeypatch.setattr(window.files, "ask_save_path", lambda *a: copy)
    window.save_as_action.trigger()
    assert doc.path == copy and copy.exists()
    assert_same_dynamics(load_model(copy), load_model(xarm))
    assert window.files.open(copy)
    assert_same_dynamics(window.document.robot, load_model(xarm))


def test_save_of_a_urdf_document_writes_urdf(make_window, small_urdf):
    window = make_window(PUMA)
    window.files.open(small_urdf)
    close_warning_boxes()
    doc = window.document
    row = 0
    mass_before = doc.robot.links[row].mass
    assert doc.set_text(row, "mass", "3.5")
    assert doc.is_modified and doc.robot.links[row].mass == 3.5 != mass_before
    window.save_action.trigger()  # Save: the document's own file, as URDF
    assert not doc.is_modified
    reread = load_model(small_urdf)
    assert isinstance(reread, Mechanism) and "<robot" in small_urdf.read_text()
    assert reread.links[row].mass == pytest.approx(3.5, rel=1e-12)


def test_a_mechanism_with_loops_is_not_saved_as_urdf(make_window, tmp_path):
    window = make_window(ROBOTS / "fourbar.toml")
    target = tmp_path / "fourbar.urdf"
    shown = answer_next_modal_dialog()
    assert not window.files.save_to(target)
    assert len(shown) == 1 and "loop" in shown[0] and "fourbar.urdf" in shown[0]
    assert not target.exists()
    assert window.document.path == ROBOTS / "fourbar.toml"


def test_a_robot_file_saved_as_urdf_keeps_its_dynamics(make_window, tmp_path, monkeypatch):
    window = make_window(PUMA)
    target = tmp_path / "puma.urdf"
    monkeypatch.setattr(window.files, "ask_save_path", lambda *a: target)
    assert window.files.save_as()
    assert not window.document.is_modified and window.document.path == target
    # the same dynamics, though another DH table (docs/urdf.md, "Writing")
    assert_same_dynamics(load_model(target), Mechanism.from_robot(load_model(PUMA)), same_table=False)


def test_armdyn_opens_a_urdf_from_the_command_line(small_urdf, tmp_path):
    shot = tmp_path / "urdf.png"
    result = armdyn(str(small_urdf), "--free-fall", "0.3", "--screenshot", str(shot),
                    "--size", "1000x700")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert not any("damping" in line for line in warnings)  # read as friction now
    assert shot.stat().st_size > 10000


def test_armdyn_refuses_a_broken_urdf_in_one_line(tmp_path):
    broken = tmp_path / "broken.urdf"
    broken.write_text(SMALL_URDF.replace('xyz="0.4 0 0"', 'xyz="0.4 0 zero"'))
    result = subprocess.run([sys.executable, "-m", "armdyn.gui.app", str(broken), "--screenshot",
                             str(tmp_path / "x.png")], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "joint 'slide'" in lines[0] and "origin.xyz" in lines[0]


def test_a_name_typed_without_suffix_gets_that_of_the_filter_chosen():
    from armdyn.gui.robot_files import TOML_FILTER, URDF_FILTER, filter_suffix

    assert filter_suffix(URDF_FILTER) == ".urdf" and filter_suffix(TOML_FILTER) == ".toml"
    assert filter_suffix("All files (*)") is None and filter_suffix("no pattern") is None
