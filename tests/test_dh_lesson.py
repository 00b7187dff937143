"""DH lesson (core.lab.dh_lesson): the four elementary transforms of a row end in the
link's own frame of `forward_kinematics`."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import forward_kinematics, load_mechanism, load_robot
from armdyn.core.lab.dh_lesson import chain_transforms, row_transforms

ROBOTS = Path(__file__).resolve().parents[1] / "robots"


@pytest.mark.parametrize("name", ["puma560_saha", "stanford_saha2009", "scara", "humanoid",
                                  "fourbar"])
def test_each_rows_last_frame_is_cores_frame_i(name):
    model = load_mechanism(ROBOTS / f"{name}.toml")
    q = model.q_home + np.random.default_rng(2).uniform(-0.3, 0.3, model.n)
    kin = forward_kinematics(model, q)
    for k in range(model.n):
        steps = row_transforms(model, q, k)
        assert [s.name for s in steps] == ["Rz", "Tz", "Tx", "Rx"]
        assert [s.parameter for s in steps] == ["theta", "b", "a", "alpha"]
        np.testing.assert_allclose(steps[0].start, kin.joint_frames[k], atol=1e-12)
        np.testing.assert_allclose(steps[-1].end, kin.frames[k + 1], atol=1e-12)
        for a, b in zip(steps, steps[1:]):
            np.testing.assert_array_equal(a.end, b.start)
        for s in steps:
            np.testing.assert_allclose(s.at(0.0), s.start, atol=1e-15)
            np.testing.assert_allclose(s.at(1.0), s.end, atol=1e-12)
        variable = "theta" if model.links[k].is_revolute else "b"
        assert [s.parameter for s in steps if s.variable] == [variable]
        assert next(s for s in steps if s.variable).value == pytest.approx(q[k])
    assert len(chain_transforms(model, q)) == 4 * model.n


def test_partial_steps_move_along_the_right_axis():
    model = load_mechanism(ROBOTS / "puma560_saha.toml")
    rz, tz, tx, rx = row_transforms(model, model.q_home, 1)
    half = tz.at(0.5)
    np.testing.assert_allclose(half[:3, :3], tz.start[:3, :3])
    np.testing.assert_allclose(half[:3, 3], tz.start[:3, 3] + 0.5 * tz.value * tz.start[:3, 2])
    half = rz.at(0.5)
    np.testing.assert_allclose(half[:3, 2], rz.start[:3, 2])       # z stays put
    c = np.cos(0.5 * rz.value)
    assert half[:3, 0] @ rz.start[:3, 0] == pytest.approx(c)


def test_a_swapped_a_and_b_shows_in_the_frames():
    model = load_robot(ROBOTS / "puma560_saha.toml")
    k = next(i for i, link in enumerate(model.links) if abs(link.a - link.b) > 0.05)
    links = list(model.links)
    links[k] = replace(links[k], a=links[k].b, b=links[k].a)
    swapped = model.with_links(links)
    right = row_transforms(model, model.q_home, k)[-1].end
    wrong = row_transforms(swapped, swapped.q_home, k)[-1].end
    assert np.linalg.norm(right[:3, 3] - wrong[:3, 3]) > 0.05
