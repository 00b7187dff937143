"""The floor of a mechanism lies below everything it can reach, not only below its home
pose; loop joints on the base stand on a plate (the real `ArmView`, its actors' meshes)."""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core import assemble, forward_kinematics, load_mechanism, simulate
from armdyn.gui.scene.arm_scene import Sizes, build_parts, up_vector
from armdyn.gui.scene.view3d import ArmView

from gui_helpers import ROBOTS

pytestmark = pytest.mark.gui

MECHANISM_FILES = sorted(p for p in ROBOTS.glob("*.toml")
                         if 'format = "armdyn-mechanism/1"' in p.read_text(encoding="utf-8"))


def floor_height(view: ArmView) -> float:
    up = up_vector(view.robot)
    return float(np.asarray(view.actors["floor"].GetMapper().GetInput().points).mean(axis=0)
                 @ up)


def lowest_drawn(view: ArmView) -> float:
    """The lowest point of every moving part's mesh as the view places it (its user
    matrix applied to its points), along the model's up."""
    up = up_vector(view.robot)
    low = np.inf
    for part in view.parts:
        actor = view.actors[part.name]
        if part.layer != "arm" or not actor.GetVisibility():
            continue
        m = np.asarray(actor.user_matrix)
        points = np.asarray(part.mesh.points, dtype=float) @ m[:3, :3].T + m[:3, 3]
        low = min(low, float((points @ up).min()))
    return low


def test_the_five_bar_falls_onto_its_floor_not_through_it(shared_view):
    """The issue's case: a 3 s free fall of the five-bar hung both legs 0.5 m under a
    floor placed below the home pose only (floor -0.45 m, joints -0.95 m)."""
    mech = load_mechanism(ROBOTS / "fivebar_saha.toml")
    shared_view.set_robot(mech)
    floor = floor_height(shared_view)
    traj = simulate(mech, 3.0, dt_out=0.02)
    lowest = np.inf
    for q in traj.q:
        shared_view.set_pose(q)
        lowest = min(lowest, lowest_drawn(shared_view))
    assert lowest > floor, f"a part at {lowest:.3f} m under the floor at {floor:.3f} m"
    # and not needlessly far below: the lowest the pin E can go is with both legs
    # straight (1.7 m from the joint at x = 0, 1.9 m from the one at x = 1.2 m), at
    # x = 0.3 m, y = -sqrt(1.7^2 - 0.3^2)
    deepest = -np.sqrt(1.7 ** 2 - 0.3 ** 2)
    assert deepest - 0.1 * 1.7 < floor < deepest


@pytest.mark.parametrize("path", MECHANISM_FILES, ids=lambda p: p.stem)
def test_no_closed_pose_reaches_under_the_floor(shared_view, path):
    """Random closed poses (the independent joints anywhere, the loops closed by core's
    assembly) put no part of the mechanism under its floor."""
    mech = load_mechanism(path)
    shared_view.set_robot(mech)
    floor = floor_height(shared_view)
    rng = np.random.default_rng(1)
    held = list(mech.independent)
    tried = 0
    for _ in range(60):
        guess = mech.q_home.copy()
        guess[held] += rng.uniform(-np.pi, np.pi, len(held)) * mech.is_revolute[held]
        try:
            q = assemble(mech, guess)
        except Exception:  # noqa: BLE001 - a guess the loops cannot close: another
            continue
        tried += 1
        shared_view.set_pose(q)
        assert lowest_drawn(shared_view) > floor, f"pose {np.round(q, 3)}"
    assert tried >= 10


@pytest.mark.parametrize("path", MECHANISM_FILES, ids=lambda p: p.stem)
def test_every_loop_joint_on_the_base_stands_on_a_plate(path):
    """The Bricard's ground joint P5 floated with no plate: each loop joint on the base
    has a fixed plate at its pin's outer end, perpendicular to the pin."""
    mech = load_mechanism(path)
    parts = {p.name: p for p in build_parts(mech)}
    kin = forward_kinematics(mech, mech.q_home)
    middle = np.concatenate([kin.origins, kin.joint_origins]).mean(axis=0)
    for l, loop in enumerate(mech.loops):
        name = f"ground {l + 1}"
        if loop.links[1] != "base":
            assert name not in parts
            continue
        plate = parts[name]
        assert plate.layer == "ground" and plate.frame is None
        pin = np.asarray(loop.at[1], dtype=float)
        axis = np.asarray(loop.axis[1], dtype=float) / np.linalg.norm(loop.axis[1])
        centre = np.asarray(plate.mesh.points, dtype=float).mean(axis=0)
        offset = centre - pin
        assert np.linalg.norm(np.cross(offset, axis)) < 1e-6  # on the pin's axis
        assert (offset @ axis) * ((middle - pin) @ axis) <= 0  # the outer end


@pytest.mark.parametrize("name", ["humanoid", "puma560_saha", "fivebar_saha", "bricard"])
def test_a_branched_tree_is_drawn_as_bodies_of_its_inertia(shared_view, name):
    """The humanoid's skeleton of equal rods did not read as a body: a branched tree
    without loops draws each link as the uniform box of its mass and principal moments
    (core.lab.model_checks.equivalent_box) at its mass centre; arms and linkages keep
    their rods (the PUMA's boxes of hollow links would be metres long)."""
    from armdyn.core.io.model_files import load_model
    from armdyn.core.lab.model_checks import equivalent_box

    model = load_model(ROBOTS / f"{name}.toml")
    shared_view.set_robot(model)
    bodies = [p for p in shared_view.parts if p.name.startswith("body ")]
    if name != "humanoid":
        assert bodies == []
        return
    assert len(bodies) == model.n
    assert not any(p.name.startswith(("length ", "offset ")) for p in shared_view.parts)
    for part in bodies:
        i = int(part.name.split()[1]) - 1
        link = model.links[i]
        assert part.frame == i + 1 and part.layer == "arm"
        assert shared_view.actors[part.name].GetVisibility()
        shape = equivalent_box(link.mass, link.inertia_matrix)
        points = np.asarray(part.mesh.points, dtype=float) - np.asarray(link.com)
        along = points @ shape.axes  # the box's sides along the principal axes
        thinnest = 2.0 * Sizes.of(model).link_radius  # (no side thinner than a rod)
        assert np.ptp(along, axis=0) == pytest.approx(np.maximum(shape.sizes, thinnest),
                                                      rel=1e-6)
        assert points.mean(axis=0) == pytest.approx(np.zeros(3), abs=1e-9)
