"""Issue #23: a merged layer's bounds come from its parts' boxes, not from VTK.

Playback of the 45-degree-of-freedom human asked VTK for the bounds of its merged
meshes at every frame (to keep the body in view): ~2 ms each, two per frame. The
merged parts' bounds are now their placed boxes' bounds: they enclose the mesh and
are close to it.
"""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core import forward_kinematics
from armdyn.gui.scene.arm_scene import MergedParts, build_parts, scene_frames

from gui_helpers import chain

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_merged_bounds_enclose_the_mesh_and_are_close(seed):
    robot = chain(30)
    parts = [p for p in build_parts(robot) if p.layer == "arm" and p.gap is None]
    merged = MergedParts(parts)
    q = np.random.default_rng(seed).uniform(-np.pi, np.pi, robot.n)
    merged.place(scene_frames(forward_kinematics(robot, q)), q)
    exact = np.array(merged.mesh.bounds)
    boxed = np.array(merged.bounds)
    size = np.max(exact[1::2] - exact[0::2])
    assert np.all(boxed[0::2] <= exact[0::2] + 1e-12)
    assert np.all(boxed[1::2] >= exact[1::2] - 1e-12)
    assert np.max(np.abs(boxed - exact)) <= 0.1 * size, (boxed, exact)
