"""Gear loops: a loop of kind "gear" couples the values of two one-degree-of-freedom
joints, q_b - q_b0 = ratio (q_a - q_a0) (docs/mechanism-file.md).

The references are independent of ArmDyn's closure code: the closed form of a rack
hanging on a pinion (x'' = -m g / (m + I / r^2), Lagrange with the one coordinate
theta), the kinetic energy and angular momentum of a gear pair written from its
inertias, the conservation of energy in a free fall, the residual's formula and its
central differences, and the counting of freedoms.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from armdyn.core import (Chain, Link, Loop, Mechanism, MechanismError, MechanismFileError,
                         Placement, closed_chain_inverse_dynamics, cut_joint_forces,
                         constraint_row_labels, energy, forward_dynamics, loop_acceleration_term,
                         loop_jacobian, loop_residual, mobility, momentum, simulate)
from armdyn.core.io.mechanism_file import (FORMAT, FORMAT_2, mechanism_from_toml,
                                           mechanism_to_toml)
from armdyn.core.algorithms.loops import constraint_row_units

G = 9.81


def rack_and_pinion(r=0.05, I=0.05, m=2.0, sign=1.0, theta=0.3, x=0.2) -> Mechanism:
    """A pinion (inertia I about its axis, base z) turning on the base and a rack of mass
    m sliding along the base z, under gravity -z; the rack moves sign * r per radian."""
    pinion = Link("revolute", theta=theta, mass=1.0, inertia=(0.6 * I, 0.6 * I, I, 0, 0, 0),
                  name="pinion", actuated=True)
    rack = Link("prismatic", b=x, mass=m, inertia=(0.1, 0.1, 0.01, 0, 0, 0), name="rack")
    return Mechanism(name="rack and pinion",
                     chains=(Chain("column", (pinion,)),
                             Chain("rack", (rack,), base=Placement((r, 0.0, 0.0)))),
                     loops=(Loop("mesh", "gear", ("pinion", "rack"), ratio=sign * r),),
                     gravity=(0.0, 0.0, -G))


def gear_pair(z_a=12, z_b=30, I_a=0.002, I_b=0.03) -> Mechanism:
    """Two spur gears on parallel vertical axes, z_a and z_b teeth: ratio -z_a / z_b."""
    wheel = dict(mass=1.0, com=(0.0, 0.0, 0.0))
    a = Link("revolute", name="gear a", actuated=True, inertia=(0.6 * I_a, 0.6 * I_a, I_a,
                                                                  0, 0, 0), **wheel)
    b = Link("revolute", name="gear b", inertia=(0.6 * I_b, 0.6 * I_b, I_b, 0, 0, 0), **wheel)
    return Mechanism(name="gear pair",
                     chains=(Chain("a", (a,)), Chain("b", (b,), base=Placement((0.2, 0, 0)))),
                     loops=(Loop("teeth", "gear", ("gear a", "gear b"), ratio=-z_a / z_b),),
                     gravity=(0.0, 0.0, -G))


def geared_pendulum() -> Mechanism:
    """A pendulum about a horizontal axis (a two-link arm, so that it is not a closed
    form) whose first joint drives a rack hanging along gravity through a pinion of
    radius 0.1 m; free of friction."""
    arm = (Link("revolute", a=0.5, theta=0.4, mass=2.0, com=(-0.25, 0.0, 0.0),
                inertia=(0.002, 0.05, 0.05, 0, 0, 0), name="upper", actuated=True),
           Link("revolute", a=0.4, theta=-0.7, mass=1.0, com=(-0.2, 0.0, 0.0),
                inertia=(0.001, 0.02, 0.02, 0, 0, 0), name="lower", actuated=True))
    rack = Link("prismatic", b=0.05, mass=3.0, inertia=(0.05, 0.05, 0.001, 0, 0, 0),
                name="rack")
    return Mechanism(name="geared pendulum",
                     chains=(Chain("arm", arm, base=Placement(rpy=(math.pi / 2, 0, 0))),
                             Chain("rack", (rack,), base=Placement((0.1, 0.3, 0.0)))),
                     loops=(Loop("pinion", "gear", ("upper", "rack"), ratio=0.1),),
                     gravity=(0.0, 0.0, -G))


# ----------------------------------------------------------------------------------
# kinematics: the row, its derivative, the freedoms
# ----------------------------------------------------------------------------------

def test_the_gear_row_is_the_coupling_of_the_two_joint_values():
    mech = rack_and_pinion(r=0.04, sign=-1.0, theta=0.3, x=0.2)
    # meshing at the given values: (x - 0.2) = -0.04 (theta - 0.3)
    for theta, x in ((0.3, 0.2), (1.3, 0.2), (-2.0, 0.5)):
        expected = (x - 0.2) - (-0.04) * (theta - 0.3)
        assert loop_residual(mech, [theta, x])[0] == pytest.approx(expected, abs=1e-15)
    np.testing.assert_array_equal(loop_jacobian(mech, [1.0, 0.7]), [[0.04, 1.0]])
    assert loop_acceleration_term(mech, [1.0, 0.7], [3.0, -2.0])[0] == 0.0
    assert constraint_row_labels(mech) == ["mesh gear"]
    assert constraint_row_units(mech) == ["N"]           # the force on the rack
    assert constraint_row_units(gear_pair()) == ["N m"]  # the moment on gear b


def test_the_jacobian_is_the_derivative_of_the_residual_next_to_other_loops():
    """The pendulum's gear row with central differences, at poses off closure."""
    mech = geared_pendulum()
    rng = np.random.default_rng(7)
    h = 1e-6
    for _ in range(3):
        q = mech.q_home + rng.uniform(-1, 1, mech.n)
        J = loop_jacobian(mech, q)
        numeric = np.column_stack([(loop_residual(mech, q + h * e) - loop_residual(mech, q - h * e))
                                   / (2 * h) for e in np.eye(mech.n)])
        np.testing.assert_allclose(J, numeric, atol=1e-9)


def test_one_gear_loop_removes_one_degree_of_freedom():
    mech = geared_pendulum()
    assert (mech.n, mech.dof, mobility(mech)) == (3, 2, 2)
    assert (rack_and_pinion().dof, gear_pair().dof) == (1, 1)
    # the home pose is closed exactly: the gear meshes at the given values
    assert loop_residual(mech, mech.q_home)[0] == 0.0


# ----------------------------------------------------------------------------------
# dynamics against closed forms
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_rack_hanging_on_a_pinion_falls_as_the_closed_form_says(sign):
    """Lagrange in theta: (I + m r^2) theta'' = -sign m g r, so the rack's
    x'' = sign r theta'' = -m g / (m + I / r^2), and the mesh pushes the rack up with
    m (x'' + g) = m g (I / r^2) / (m + I / r^2)."""
    r, I, m = 0.05, 0.05, 2.0
    mech = rack_and_pinion(r, I, m, sign)
    qdd = forward_dynamics(mech, mech.q_home, [0.0, 0.0], [0.0, 0.0])
    x_dd = -m * G / (m + I / r ** 2)
    assert qdd[1] == pytest.approx(x_dd, rel=1e-12)
    assert qdd[0] == pytest.approx(x_dd / (sign * r), rel=1e-12)
    lam = cut_joint_forces(mech, mech.q_home, [0.0, 0.0], [0.0, 0.0])
    assert lam[0] == pytest.approx(m * G * (I / r ** 2) / (m + I / r ** 2), rel=1e-12)
    # a torque on the pinion that holds the rack: tau = sign r m g (the lever of the mesh)
    held = forward_dynamics(mech, mech.q_home, [0.0, 0.0], [sign * r * m * G, 0.0])
    np.testing.assert_allclose(held, [0.0, 0.0], atol=1e-12)


def test_a_gear_pair_has_the_energy_and_momentum_of_its_two_wheels():
    """Gear a turning at w, b at ratio w: T = (I_a + ratio^2 I_b) w^2 / 2, the angular
    momentum about z is I_a w + I_b ratio w, and a torque tau on a turns it at
    tau / (I_a + ratio^2 I_b), b at ratio times that, the teeth giving b I_b ratio
    tau / (I_a + ratio^2 I_b)."""
    I_a, I_b, ratio = 0.002, 0.03, -12 / 30
    mech = gear_pair(12, 30, I_a, I_b)
    q, w = np.array([0.4, 1.1]), 3.0
    qd = np.array([w, ratio * w])
    assert energy(mech, q, qd)[0] == pytest.approx(0.5 * (I_a + ratio ** 2 * I_b) * w ** 2,
                                                    rel=1e-12)
    assert momentum(mech, q, qd).angular[2] == pytest.approx((I_a + ratio * I_b) * w,
                                                             rel=1e-12)
    tau = 0.7
    qdd = forward_dynamics(mech, q, qd, [tau, 0.0])
    a = tau / (I_a + ratio ** 2 * I_b)
    np.testing.assert_allclose(qdd, [a, ratio * a], rtol=1e-12)
    lam = cut_joint_forces(mech, q, qd, [tau, 0.0])
    assert lam[0] == pytest.approx(I_b * ratio * a, rel=1e-12)


def test_inverse_then_forward_dynamics_gives_back_the_motion():
    mech = geared_pendulum()
    q = mech.q_home
    # a consistent motion: J qd = 0, J qdd = 0 (gamma = 0)
    qd = np.array([1.3, -0.4, 0.13])
    qdd = np.array([-2.0, 5.0, -0.2])
    assert np.max(np.abs(loop_jacobian(mech, q) @ qd)) < 1e-15
    for method in ("subsystem", "system"):
        tau = closed_chain_inverse_dynamics(mech, q, qd, qdd, method=method).tau
        assert tau[2] == 0.0  # the rack is passive
        np.testing.assert_allclose(forward_dynamics(mech, q, qd, tau), qdd, rtol=1e-10,
                                   atol=1e-10)


def test_a_free_fall_with_a_gear_keeps_its_energy_and_its_mesh():
    mech = geared_pendulum()
    run = simulate(mech, 2.0, qd0=[0.5, 0.0, 0.05], rtol=1e-10, atol=1e-10, dt_out=0.01)
    E = run.energy[:, 2]
    T = run.energy[:, 0]
    assert float(np.ptp(T)) > 1.0  # it swings (joules)
    assert float(np.max(np.abs(E - E[0]))) <= 1e-7 * float(np.max(T))
    assert float(np.max(run.loop_residual)) <= 1e-10
    # the rack moved with the pendulum, by 0.1 m per radian
    np.testing.assert_allclose(run.q[:, 2] - run.q[0, 2], 0.1 * (run.q[:, 0] - run.q[0, 0]),
                               atol=1e-10)


# ----------------------------------------------------------------------------------
# files and bad input
# ----------------------------------------------------------------------------------

def test_a_gear_loop_goes_through_a_file_and_comes_back_equal():
    mech = geared_pendulum()
    text = mechanism_to_toml(mech)
    assert f'format = "{FORMAT_2}"' in text and "ratio = 0.1" in text
    back = mechanism_from_toml(text)
    assert back == mech and back.loops[0].ratio == 0.1
    np.testing.assert_array_equal(back.q_home, mech.q_home)
    # without the gear, the same chains fit version 1 (the version is not raised for
    # nothing)
    assert f'format = "{FORMAT}"' in mechanism_to_toml(
        Mechanism(name="m", chains=mech.chains))


GEAR_FILE = """\
format = "{fmt}"
name = "rack"
[[chain]]
name = "column"
[[chain.link]]
name = "pinion"
{pinion}
mass = 1.0
com = [0, 0, 0]
inertia = {{ xx = 0.01, yy = 0.01, zz = 0.01 }}
actuated = true
[[chain]]
name = "rack"
[[chain.link]]
name = "rack"
joint = "prismatic"
a = 0
alpha = 0
theta = 0
b = 0.1
mass = 1.0
com = [0, 0, 0]
inertia = {{ xx = 0.01, yy = 0.01, zz = 0.01 }}
[[loop]]
name = "mesh"
joint = "{kind}"
links = [{links}]
{extra}
"""
_REVOLUTE = "joint = \"revolute\"\na = 0\nalpha = 0\nb = 0\ntheta = 0"


def _gear_file(fmt=FORMAT_2, pinion=_REVOLUTE, kind="gear", links='"pinion", "rack"',
               extra="ratio = 0.05"):
    return GEAR_FILE.format(fmt=fmt, pinion=pinion, kind=kind, links=links, extra=extra)


def test_the_gear_file_reads():
    mech = mechanism_from_toml(_gear_file(), "rack.toml")
    assert mech.loops[0].ratio == 0.05 and mech.dof == 1


@pytest.mark.parametrize("change, field, words", [
    (dict(fmt=FORMAT), "joint", "needs format"),
    (dict(extra=""), "ratio", "needs a ratio"),
    (dict(extra="ratio = 0"), "ratio", "other than 0"),
    (dict(extra="ratio = nan"), "ratio", "finite"),
    (dict(extra="ratio = \"big\""), "ratio", "a number"),
    (dict(links='"pinion", "pinion"'), "links", "two different links"),
    (dict(links='"pinion", "base"'), "links", "the fixed base has no joint"),
    (dict(pinion="joint = \"spherical\""), "links", "spherical, of 3 degrees of freedom"),
    (dict(extra="ratio = 0.05\nat = [[0, 0, 0], [0, 0, 1]]"), "at", "no point or axis"),
    (dict(kind="revolute"), "ratio", "has no ratio"),
])
def test_bad_gear_loops_are_refused_naming_the_file_loop_and_field(change, field, words):
    with pytest.raises(MechanismFileError) as e:
        mechanism_from_toml(_gear_file(**change), "rack.toml")
    err = e.value
    assert (err.path, err.loop, err.field) == ("rack.toml", "mesh", field), str(err)
    assert words in str(err) and "rack.toml" in str(err) and "'mesh'" in str(err)


def test_a_gear_built_in_python_is_refused_the_same_way():
    with pytest.raises(MechanismError) as e:
        Mechanism(name="m", chains=gear_pair().chains,
                  loops=(Loop("teeth", "gear", ("gear a", "gear b"), ratio=math.inf),))
    assert (e.value.loop, e.value.field) == ("teeth", "ratio")
    with pytest.raises(MechanismError, match="must be a number, got '0.5'"):
        Mechanism(name="m", chains=gear_pair().chains,
                  loops=(Loop("teeth", "gear", ("gear a", "gear b"), ratio="0.5"),))


def test_the_cut_joint_formulations_refuse_a_gear_by_name():
    """The 4x4 matrix formulation and Saha's parallel robots write loops as cut joints."""
    from armdyn.core import loop_closure_matrices
    from armdyn.core.algorithms.parallel import is_parallel, parallel_structure
    mech = gear_pair()
    with pytest.raises(MechanismError) as e:
        loop_closure_matrices(mech, mech.q_home)
    assert (e.value.loop, e.value.field) == ("teeth", "joint")
    with pytest.raises(MechanismError, match="gear"):
        parallel_structure(mech)
    assert not is_parallel(mech)
