"""Joint friction and drives (core.kernels.drives): against Pinocchio (its RNEA, and its
ABA and CRBA with `armature`), the friction law written out here, and the energy
balance of a free fall: E(0) - E(T) = what friction dissipated."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from armdyn.core import (Link, Mechanism, RobotError, forward_dynamics, friction_torques,
                         inverse_dynamics, load_mechanism, load_robot, mass_matrix,
                         motor_torques, simulate)
from armdyn.core.errors import MechanismError, RobotFileError
from armdyn.core.io.robot_file import robot_from_toml, robot_to_toml
from armdyn.core.io.urdf import mechanism_from_urdf, mechanism_to_urdf
from armdyn.core.sim.power import power_balance
from pinocchio_reference import pinocchio_model

BAND = 0.01  # rad/s: the documented Coulomb band (docs/motions.md)
PUMA = load_robot("robots/puma560_saha.toml")
RNG = np.random.default_rng(3)
VISCOUS = RNG.uniform(0.1, 2.0, 6)
COULOMB = RNG.uniform(0.1, 3.0, 6)
RATIO = RNG.uniform(20.0, 120.0, 6)
ROTOR = RNG.uniform(1e-5, 3e-4, 6)


def with_drives(robot, viscous=VISCOUS, coulomb=COULOMB, ratio=RATIO, rotor=ROTOR):
    links = [replace(l, friction_viscous=float(v), friction_coulomb=float(c),
                     gear_ratio=float(r), rotor_inertia=float(i))
             for l, v, c, r, i in zip(robot.links, viscous, coulomb, ratio, rotor)]
    return robot.with_links(links)


DRIVEN = with_drives(PUMA)


def friction_law(qd):
    """c_v qd + c_c tanh(qd / band), written out independently of the kernels."""
    return VISCOUS * qd + COULOMB * np.tanh(qd / BAND)


@pytest.fixture(scope="module")
def pin_armature():
    model = pinocchio_model(PUMA)
    model.armature = RATIO**2 * ROTOR
    return model, model.createData()


def states(count=5):
    for _ in range(count):
        yield (RNG.uniform(-2, 2, 6), RNG.normal(size=6) * 1.5, RNG.normal(size=6) * 3)


def test_inverse_dynamics_is_pinocchio_plus_friction_and_reflected_rotor_inertia(pin_armature):
    model, data = pin_armature
    for q, qd, qdd in states():
        rigid = pin.rnea(pinocchio_model(PUMA), pinocchio_model(PUMA).createData(), q, qd, qdd)
        expect = rigid + RATIO**2 * ROTOR * qdd + friction_law(qd)
        tau = inverse_dynamics(DRIVEN, q, qd, qdd)
        assert np.allclose(tau, expect, rtol=1e-10, atol=1e-9 * np.abs(expect).max())
        batch = inverse_dynamics(DRIVEN, np.array([q, q]), np.array([qd, -qd]),
                                 np.array([qdd, qdd]))
        assert np.allclose(batch[0], tau, rtol=1e-12, atol=1e-12)


def test_mass_matrix_and_forward_dynamics_match_pinocchio_with_armature(pin_armature):
    model, data = pin_armature
    for q, qd, qdd in states():
        M_ref = pin.crba(model, data, q)
        M_ref = np.triu(M_ref) + np.triu(M_ref, 1).T
        assert np.allclose(mass_matrix(DRIVEN, q), M_ref, rtol=1e-10, atol=1e-12)
        tau = RNG.normal(size=6) * 20
        # Pinocchio's ABA takes the armature, not friction: hand it tau - friction
        expect = pin.aba(model, data, q, qd, tau - friction_law(qd))
        for method in ("denoc", "composite"):
            got = forward_dynamics(DRIVEN, q, qd, tau, method=method)
            assert np.allclose(got, expect, rtol=1e-8, atol=1e-9 * np.abs(expect).max())


def test_a_model_without_drives_computes_as_before():
    plain = with_drives(PUMA, viscous=np.zeros(6), coulomb=np.zeros(6), ratio=np.ones(6),
                        rotor=np.zeros(6))
    assert plain.kernel.nd == 0 and DRIVEN.kernel.nd == 6
    assert plain.kernel.F.size == PUMA.kernel.F.size
    for q, qd, qdd in states(2):
        assert np.array_equal(inverse_dynamics(plain, q, qd, qdd),
                              inverse_dynamics(PUMA, q, qd, qdd))


def test_friction_and_motor_torques_split_out():
    qd = RNG.normal(size=(4, 6))
    assert np.allclose(friction_torques(DRIVEN, qd), friction_law(qd), rtol=1e-13)
    assert np.array_equal(friction_torques(PUMA, qd), np.zeros((4, 6)))
    tau = RNG.normal(size=6)
    assert np.allclose(motor_torques(DRIVEN, tau) * RATIO, tau)
    # the Coulomb band: within 0.1 % of c_c beyond 4 bands
    f = friction_torques(DRIVEN, np.full(6, 4 * BAND)) - VISCOUS * 4 * BAND
    assert np.all(np.abs(f / COULOMB - 1) < 1e-3)


def test_free_fall_energy_balance_counts_what_friction_dissipated():
    start = np.radians([0, 30, -40, 20, 45, 10])
    fall = simulate(DRIVEN, 1.0, q0=start, stops=False, dt_out=0.002)
    E = fall.energy[:, 2]
    lost = E[0] - E[-1]
    # an independent integral of friction's power along the samples (trapezoid rule)
    P = np.einsum("sk,sk->s", fall.qd, friction_law(fall.qd))
    by_samples = float(np.sum(0.5 * (P[1:] + P[:-1]) * np.diff(fall.t)))
    assert lost > 0.1 * np.ptp(fall.energy[:, 1])  # friction took out a real share
    assert by_samples == pytest.approx(lost, rel=2e-2)
    balance = power_balance(fall, model=DRIVEN)
    assert balance.friction_dissipated == pytest.approx(lost, rel=1e-3)
    assert np.abs(balance.drift).max() < 1e-3 * lost
    # the rotors' kinetic energy is in the energy: without it, the balance would not close
    T_rotor = 0.5 * np.sum(RATIO**2 * ROTOR * fall.qd**2, axis=1)
    assert T_rotor.max() > 10 * np.abs(balance.drift).max()


def test_inverse_dynamics_run_balances_drive_work_with_energy_and_friction():
    from armdyn.core import Quintic, run_inverse_dynamics
    run = run_inverse_dynamics(DRIVEN, Quintic(PUMA.q_home, PUMA.q_home + 0.8, 1.0),
                               dt_out=0.001)
    balance = power_balance(run, model=DRIVEN)
    work = float(np.sum(0.5 * (balance.joint_power[1:] + balance.joint_power[:-1])
                        * np.diff(run.t)))
    change = run.energy[-1, 2] - run.energy[0, 2]
    assert work == pytest.approx(change + balance.friction_dissipated, rel=1e-4)


def test_files_carry_friction_and_drives():
    text = robot_to_toml(DRIVEN)
    assert "gear_ratio = " in text and "friction_coulomb = " in text
    back = robot_from_toml(text)
    assert [l.drive_row for l in back.links] == [l.drive_row for l in DRIVEN.links]
    assert "gear_ratio" not in robot_to_toml(PUMA)
    bad = text.replace(f"gear_ratio = {float(RATIO[0])!r}", "gear_ratio = 0", 1)
    assert bad != text
    with pytest.raises(RobotFileError, match=r"link 1 .*field 'gear_ratio': gear_ratio must "
                                             r"be > 0"):
        robot_from_toml(bad)
    with pytest.raises(RobotError, match="friction_viscous must be >= 0"):
        PUMA.with_links([replace(PUMA.links[0], friction_viscous=-1.0), *PUMA.links[1:]])


def test_urdf_dynamics_are_read_and_written_as_pinocchio_reads_them():
    text = mechanism_to_urdf(DRIVEN)
    ref = pin.buildModelFromXML(text)
    assert np.allclose(ref.damping, VISCOUS) and np.allclose(ref.friction, COULOMB)
    back = mechanism_from_urdf(text)
    assert np.allclose([l.friction_viscous for l in back.links], VISCOUS)
    assert np.allclose([l.friction_coulomb for l in back.links], COULOMB)
    assert all(l.gear_ratio == 1.0 for l in back.links)  # URDF has no drives
    from armdyn.core.io.urdf import _export_warnings
    assert any("gear_ratio" in w for w in _export_warnings(Mechanism.from_robot(DRIVEN)))


def test_joints_and_models_that_cannot_take_drives_are_refused_by_name():
    ball = Link(name="ball", joint="spherical", mass=1.0, friction_viscous=0.5)
    with pytest.raises(MechanismError, match=r"'ball'.*friction_viscous.*spherical"):
        Mechanism(name="ball", chains=[_chain(ball)])
    fourbar = load_mechanism("robots/fourbar.toml")
    chain = fourbar.chains[0]
    geared = replace(chain, links=(replace(chain.links[0], gear_ratio=10.0),
                                   *chain.links[1:]))
    with pytest.raises(MechanismError, match=r"gear_ratio.*loops"):
        replace(fourbar, chains=(geared, *fourbar.chains[1:]))


def _chain(link):
    from armdyn.core import Chain
    return Chain(name="c", links=(link,))


def test_band_constant_is_the_documented_one():
    from armdyn.core.kernels.drives import FRICTION_BAND
    assert FRICTION_BAND == BAND and 1 - math.tanh(4.0) < 1e-3


def test_coulomb_shape_is_libms_tanh_to_two_ulp_on_both_sides_of_its_switches():
    """The compiled tanh of the friction law (exp past TANH_BY_EXP, +-1 past TANH_ONE)
    against libm's, on a grid, at the neighbours of its switches, and at 0, -0, inf, NaN."""
    from armdyn.core.kernels.drives import TANH_BY_EXP, TANH_ONE, coulomb_shape
    near = [s * np.nextafter(t, d) for t in (TANH_BY_EXP, TANH_ONE) for d in (0.0, 30.0)
            for s in (-1.0, 1.0)]
    x = np.concatenate([np.linspace(-25.0, 25.0, 4001), RNG.uniform(-3.0, 3.0, 2000),
                        near, [TANH_BY_EXP, -TANH_ONE, 0.0, 1e-300, np.inf, -np.inf]])
    got = np.array([coulomb_shape(v) for v in x])
    want = np.array([math.tanh(v) for v in x])
    assert np.all(np.abs(got - want) <= 2 * np.spacing(np.abs(want)))
    assert math.copysign(1.0, coulomb_shape(-0.0)) == -1.0
    assert math.isnan(coulomb_shape(math.nan))
