"""Identification (core.sim.identification) on synthetic logs with a known truth: torques
from Pinocchio's RNEA plus the friction and rotor terms written here, with noise."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from armdyn.core import FourierSeries, Motion, load_robot
from armdyn.core.sim.identification import IdentificationError, identify
from armdyn.core.algorithms.regressor import parameter_vector
from pinocchio_reference import pinocchio_model

BAND = 0.01
NOISE = 0.05  # N m
NOMINAL = load_robot("robots/puma560_saha.toml")
RNG = np.random.default_rng(21)


def truth_robot():
    """The nominal PUMA with other masses and mass centres, friction and rotors."""
    links = []
    for l in NOMINAL.links:
        links.append(replace(l, mass=l.mass * float(RNG.uniform(0.8, 1.2)),
                             com=tuple(np.array(l.com) + RNG.uniform(-0.02, 0.02, 3)),
                             friction_viscous=float(RNG.uniform(0.5, 3.0)),
                             friction_coulomb=float(RNG.uniform(0.5, 3.0)),
                             gear_ratio=50.0, rotor_inertia=float(RNG.uniform(1e-4, 4e-4))))
    return NOMINAL.with_links(links)


TRUTH = truth_robot()


def logged(seed, duration=10.0, rate=200.0):
    rng = np.random.default_rng(seed)
    law = FourierSeries(NOMINAL.q_home, rng.uniform(-0.6, 0.6, (6, 4)),
                        rng.uniform(-0.6, 0.6, (6, 4)), 0.1, duration=duration)
    t = np.arange(0.0, duration, 1.0 / rate)
    q, qd, qdd = law.sample(t)
    model = pinocchio_model(TRUTH)
    data = model.createData()
    rigid = np.array([pin.rnea(model, data, q[s], qd[s], qdd[s]) for s in range(t.size)])
    fv = np.array([l.friction_viscous for l in TRUTH.links])
    fc = np.array([l.friction_coulomb for l in TRUTH.links])
    armature = np.array([l.gear_ratio**2 * l.rotor_inertia for l in TRUTH.links])
    tau = rigid + fv * qd + fc * np.tanh(qd / BAND) + armature * qdd
    tau += rng.normal(0.0, NOISE, tau.shape)
    return Motion.from_samples(t, q, tau, qd=qd, qdd=qdd)


@pytest.fixture(scope="module")
def found():
    return identify(NOMINAL, logged(1), validate=logged(2))


def test_the_base_parameters_are_recovered_within_their_deviations(found):
    truth = found.base_matrix @ parameter_vector(TRUTH)
    z = (found.base_parameters - truth) / found.std
    assert np.all(np.abs(z) < 4.5), np.abs(z).max()
    assert len(found.combinations) == len(found.base_parameters) == found.base_matrix.shape[0]
    assert found.condition_number > 1


def test_the_identified_model_predicts_another_motion_to_the_noise(found):
    assert np.all(found.rms < 1.5 * NOISE)
    assert np.all(found.validation_rms < 1.5 * NOISE)
    # the identified model is a model: consistent (it was built, validated) with drives
    assert type(found.model) is type(NOMINAL)
    assert all(l.friction_viscous > 0 for l in found.model.links)


def test_wrong_sign_and_missing_torques_are_refused():
    motion = logged(3, duration=4.0)
    flipped = replace(motion, tau=-motion.tau)
    with pytest.raises(IdentificationError, match="worse than zero torque"):
        identify(NOMINAL, flipped)
    with pytest.raises(IdentificationError, match="no measured torques"):
        identify(NOMINAL, replace(motion, tau=None))
