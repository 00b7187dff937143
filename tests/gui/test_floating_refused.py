"""A model the window cannot show yet (joints of several degrees of freedom, force
elements) is refused by name at opening; the open model stays."""
from __future__ import annotations

import subprocess
import sys

import pytest

from armdyn.core import Chain, JointType, Link, Mechanism, Tyre, save_mechanism

pytestmark = pytest.mark.usefixtures("no_modal_boxes")


def _floating_file(tmp_path, forces=False):
    body = Link(joint=JointType.FREE, name="satellite", mass=10.0,
                inertia=(1.0, 1.2, 1.4, 0, 0, 0), home=(0, 0, 1, 0, 0, 0, 1))
    mech = Mechanism("satellite", [Chain("body", [body])],
                     forces=[Tyre("wheel", "satellite", stiffness=1e4, radius=0.3)] if forces
                     else [])
    path = tmp_path / "satellite.toml"
    save_mechanism(mech, path)
    return path


@pytest.mark.parametrize("forces", [False, True])
def test_opening_a_floating_model_is_refused_by_name_and_keeps_the_open_one(
        make_window, tmp_path, monkeypatch, forces):
    window = make_window()
    shown = []
    monkeypatch.setattr(window.files, "error", lambda title, message, **kw:
                        shown.append(message))
    before = window.document.robot
    assert window.files.load(_floating_file(tmp_path, forces)) is False
    assert window.document.robot is before
    assert len(shown) == 1 and "satellite" in shown[0]
    assert ("free joint" in shown[0]) and "docs/floating-bases.md" in shown[0]


def test_the_scripted_window_refuses_it_in_one_line(tmp_path):
    path = _floating_file(tmp_path)
    done = subprocess.run([sys.executable, "-m", "armdyn.gui.app", str(path), "--free-fall",
                           "0.1", "--screenshot", str(tmp_path / "x.png")],
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 2
    assert "joint 'satellite' is a free joint" in done.stderr
    assert not (tmp_path / "x.png").exists()
