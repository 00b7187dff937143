"""Force elements (spring-dampers between bodies, tyres on a road): the laws they obey
in a run, what a run records of them, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

from armdyn.core import (ArgumentError, Chain, JointType, Link, Mechanism, MechanismError,
                         Road, SpringDamper, Tyre, momentum, simulate)
from armdyn.core.sim.penalty import penalty_simulate

BOX = dict(mass=2.0, inertia=(0.05, 0.08, 0.1, 0.0, 0.0, 0.0))


def _free_body(name, position, quaternion=(0.0, 0.0, 0.0, 1.0), **kw):
    return Chain(name, [Link(joint=JointType.FREE, name=name,
                             home=tuple(position) + tuple(quaternion), **{**BOX, **kw})])


def test_an_undamped_spring_to_the_base_keeps_the_energy():
    mech = Mechanism("bob", [_free_body("bob", (0.3, 0.1, -0.5), com=(0.05, 0.0, 0.0))],
                     forces=[SpringDamper("cord", ("base", "bob"), ((0, 0, 0), (0.1, 0.0, 0.0)),
                                          stiffness=200.0, free_length=0.3)])
    run = simulate(mech, 3.0, qd0=[0.5, -1.0, 0.3, 0.2, 0.4, -0.1], stops=False)
    E = run.energy[:, 2]
    assert np.abs(E - E[0]).max() < 1e-7 * run.energy[:, 0].max()
    # the recorded force is k (L - L0) at every sample (no damping)
    p = run.q[:, :3]
    from scipy.spatial.transform import Rotation
    tip = p + Rotation.from_quat(run.q[:, 3:7]).apply([0.1, 0.0, 0.0])
    L = np.linalg.norm(tip, axis=1)
    np.testing.assert_allclose(run.element_forces[:, 0], 200.0 * (L - 0.3), atol=1e-9)


def test_a_spring_between_two_free_bodies_keeps_momentum_and_energy():
    spring = SpringDamper("link", ("a", "b"), ((0.1, 0, 0), (-0.1, 0.05, 0)), stiffness=500.0,
                          damping=3.0, free_length=0.4)
    mech = Mechanism("pair", [_free_body("a", (0, 0, 0)), _free_body("b", (0.7, 0.1, 0.0))],
                     gravity=(0.0, 0.0, 0.0), forces=[spring])
    v0 = np.array([0.3, 0.1, -0.2, 0.5, 0.0, 0.2, -0.4, 0.6, 0.1, -0.3, 0.2, 0.0])
    run = simulate(mech, 2.0, qd0=v0, stops=False)
    P = momentum(mech, run.q, run.qd)
    assert np.abs(P.linear - P.linear[0]).max() < 1e-9
    assert np.abs(P.angular - P.angular[0]).max() < 1e-8
    # the damper takes energy out and never puts any in
    E = run.energy[:, 2]
    assert E[-1] < E[0] and np.all(np.diff(E) < 1e-9)
    np.testing.assert_allclose(run.momentum[:, 3:6], P.linear, atol=1e-12)


def test_a_tyre_settles_at_its_static_deflection():
    """A box on one tyre at its mass centre, dropped on flat ground: it comes to rest
    with the tyre's force m g and its centre at r - m g / k above the ground."""
    k, r, m, g = 2.0e4, 0.3, 2.0, 9.81
    mech = Mechanism("drop", [_free_body("box", (0.0, 0.0, 0.5))],
                     forces=[Tyre("wheel", "box", stiffness=k, damping=400.0, radius=r)])
    run = simulate(mech, 3.0, stops=False)
    assert run.element_forces[-1, 0] == pytest.approx(m * g, rel=1e-4)
    assert run.q[-1, 2] == pytest.approx(r - m * g / k, abs=1e-6)
    assert run.element_forces.min() >= 0.0  # a tyre only pushes


@pytest.mark.parametrize("x, h", [(-2.0, 0.0), (0.5, 0.05), (1.25, 0.15), (3.0, 0.1)])
def test_a_tyre_rests_on_the_road_where_it_is(x, h):
    """The road's points (0, 0) (1, 0.1) (1.5, 0.2) (2, 0.1): piecewise linear, flat beyond.
    A box held in x, y by stiff springs to the base settles on the road's height at x."""
    road = Road(((0.0, 0.0), (1.0, 0.1), (1.5, 0.2), (2.0, 0.1)))
    k, r, m, g = 5.0e4, 0.3, 2.0, 9.81
    hold = [SpringDamper(f"hold {axis}", ("base", "box"), (anchor, (0, 0, 0)), stiffness=1e5,
                         damping=2e3, free_length=0.0)
            for axis, anchor in (("x", (x, 0.0, h + r)),)]
    mech = Mechanism("rest", [_free_body("box", (x, 0.0, h + r + 0.01))], road=road,
                     forces=[Tyre("wheel", "box", stiffness=k, damping=800.0, radius=r)] + hold)
    run = simulate(mech, 2.0, stops=False)
    # the hold spring is stretched along z only by the tyre's deflection: both balance m g
    assert run.q[-1, 0] == pytest.approx(x, abs=1e-6)
    z = run.q[-1, 2]
    deflection = r - (z - h)
    tyre, holder = k * deflection, 1e5 * (h + r - z)
    assert tyre + holder == pytest.approx(m * g, rel=1e-4)


# ----------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------

def _with_forces(forces=(), road=None):
    return Mechanism("m", [_free_body("box", (0, 0, 1))], forces=forces, road=road)


def test_an_element_on_a_missing_link_is_refused_naming_it():
    with pytest.raises(MechanismError) as e:
        _with_forces([SpringDamper("strut", ("box", "wheel"), stiffness=1.0)])
    assert e.value.element == "strut" and e.value.field == "links"
    assert "force element 'strut'" in str(e.value) and "'wheel'" in str(e.value)
    with pytest.raises(MechanismError) as e:
        _with_forces([Tyre("front", "axle", stiffness=1.0, radius=0.3)])
    assert e.value.element == "front" and e.value.field == "link"


def test_a_road_that_is_not_a_function_of_position_is_refused():
    with pytest.raises(MechanismError) as e:
        _with_forces(road=Road(((0.0, 0.0), (1.0, 0.1), (1.0, 0.3))))
    assert e.value.field == "road.points" and "road point 3" in str(e.value)


@pytest.mark.parametrize("field, value", [("stiffness", -1.0), ("damping", float("nan")),
                                          ("radius", 0.0)])
def test_laws_a_tyre_cannot_have_are_refused(field, value):
    laws = dict(stiffness=1e4, damping=10.0, radius=0.3)
    laws[field] = value
    with pytest.raises(MechanismError) as e:
        _with_forces([Tyre("front", "box", **laws)])
    assert e.value.field == field and e.value.element == "front"


def test_the_penalty_method_refuses_force_elements_by_name():
    mech = _with_forces([Tyre("front", "box", stiffness=1e4, radius=0.3)])
    with pytest.raises(ArgumentError, match="box"):
        penalty_simulate(mech, 0.1)


def test_the_csv_has_a_column_per_element_and_the_floating_bodys_momentum(tmp_path):
    from armdyn.core.io.results_io import trajectory_header, write_trajectory_csv
    mech = Mechanism("drop", [_free_body("box", (0.0, 0.0, 0.5))],
                     forces=[Tyre("wheel", "box", stiffness=2.0e4, damping=400.0, radius=0.3)])
    run = simulate(mech, 0.5, stops=False)
    header = trajectory_header(run, mech)
    assert header[1:8] == ["q1 box x [m]", "q1 box y [m]", "q1 box z [m]", "q1 box qx [-]",
                           "q1 box qy [-]", "q1 box qz [-]", "q1 box qw [-]"]
    assert "qd1 box vz [m/s]" in header and "tau1 box wx [N m]" in header
    assert header[-1] == "force wheel [N]" and "angular momentum z [kg m^2/s]" in header
    path = tmp_path / "drop.csv"
    write_trajectory_csv(run, mech, path)
    table = np.loadtxt(path, delimiter=",", skiprows=3)
    assert table.shape == (len(run.t), len(header))
    np.testing.assert_allclose(table[:, -1], run.element_forces[:, 0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(table[:, header.index("mass centre z [m]")],
                               run.center_of_mass[:, 2], rtol=1e-9, atol=1e-9)
