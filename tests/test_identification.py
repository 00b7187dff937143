"""Identification (core.sim.identification) on synthetic logs with a known truth: torques
from Pinocchio's RNEA plus the friction and rotor terms written here, with noise. The
truth's base parameters come from its own parameter vector; no expected value is taken
from the code under test."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from armdyn.core import (Cancelled, FourierSeries, IdentificationError, Motion, identify,
                         inverse_dynamics, load_robot, parameter_vector, pseudo_inertia)
from armdyn.core.sim.identification import is_consistent, one_blas_thread, pseudo_inertia_of
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


def logged(seed, duration=10.0, rate=200.0, still=(), extra_viscous=None):
    """A log of TRUTH along a random Fourier motion; joints in `still` (0-based) do not
    move; `extra_viscous` (n,) N m s/rad is added to the torques (a friction of any
    sign, which a model file could not hold)."""
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-0.6, 0.6, (6, 4)), rng.uniform(-0.6, 0.6, (6, 4))
    a[list(still)] = b[list(still)] = 0.0
    law = FourierSeries(NOMINAL.q_home, a, b, 0.1, duration=duration)
    t = np.arange(0.0, duration, 1.0 / rate)
    q, qd, qdd = law.sample(t)
    model = pinocchio_model(TRUTH)
    data = model.createData()
    rigid = np.array([pin.rnea(model, data, q[s], qd[s], qdd[s]) for s in range(t.size)])
    fv = np.array([l.friction_viscous for l in TRUTH.links])
    fc = np.array([l.friction_coulomb for l in TRUTH.links])
    armature = np.array([l.gear_ratio**2 * l.rotor_inertia for l in TRUTH.links])
    tau = rigid + fv * qd + fc * np.tanh(qd / BAND) + armature * qdd
    if extra_viscous is not None:
        tau += np.asarray(extra_viscous) * qd
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
    # the truth is consistent: the consistency step leaves the estimate where it was
    assert np.all(np.abs(found.base_shift) < 1e-3)


def test_the_identified_model_is_consistent_and_reproduces_the_base_estimate(found):
    pi = parameter_vector(found.model)
    assert is_consistent(pi, NOMINAL.n)
    for link in found.model.links:
        assert np.linalg.eigvalsh(pseudo_inertia(link))[0] > 0
    z = (found.base_matrix @ pi - found.base_parameters) / found.std
    assert np.all(np.abs(z) < 1e-3)
    # the parameters no motion sees stay near the nominal ones (the waist's mass; the
    # pull to them is weak, PRIOR, and the fit stops within 1e-5 of them)
    assert "m waist" in found.unidentifiable
    assert found.model.links[0].mass == pytest.approx(NOMINAL.links[0].mass, rel=1e-3)


def test_the_pseudo_inertia_of_a_parameter_vector_is_the_links():
    pi = parameter_vector(TRUTH)
    for k, link in enumerate(TRUTH.links):
        assert np.allclose(pseudo_inertia_of(pi[10 * k:10 * k + 10]), pseudo_inertia(link),
                           atol=1e-12)


def test_an_inconsistent_estimate_is_moved_to_the_nearest_consistent_model():
    """The wrist's viscous friction measured as -0.5 N m s/rad: no consistent model has
    it; the fit sets it to zero and reports the move in standard deviations."""
    extra = np.zeros(6)
    extra[5] = -0.5 - TRUTH.links[5].friction_viscous
    found = identify(NOMINAL, logged(4, extra_viscous=extra))
    assert found.model.links[5].friction_viscous == pytest.approx(0.0, abs=1e-6)
    assert is_consistent(parameter_vector(found.model), NOMINAL.n)
    i = found.combinations.index("fv flange roll")
    assert found.base_parameters[i] == pytest.approx(-0.5, abs=5 * found.std[i])
    assert found.base_shift[i] > 10  # moved up by many standard deviations
    assert found.rms[5] > 2 * NOISE  # and the fit of that joint is worse for it

def test_the_identified_model_predicts_another_motion_to_the_noise(found):
    assert np.all(found.rms < 1.5 * NOISE)
    assert np.all(found.validation_rms < 1.5 * NOISE)
    # the identified model is a model: consistent (it was built, validated) with drives
    assert type(found.model) is type(NOMINAL)
    assert all(l.friction_viscous > 0 for l in found.model.links)


def test_a_motion_that_leaves_a_joint_still_is_refused_naming_what_it_misses():
    with pytest.raises(IdentificationError, match="does not excite") as caught:
        identify(NOMINAL, logged(5, duration=4.0, still=(5,)))
    assert caught.value.unexcited
    assert all("flange roll" in words for words in caught.value.unexcited)


def test_too_few_samples_are_refused():
    with pytest.raises(IdentificationError, match="samples"):
        identify(NOMINAL, logged(6, duration=12 / 200.0))


def test_wrong_sign_and_missing_torques_are_refused():
    motion = logged(3, duration=4.0)
    flipped = replace(motion, tau=-motion.tau)
    with pytest.raises(IdentificationError, match="worse than zero torque"):
        identify(NOMINAL, flipped)
    with pytest.raises(IdentificationError, match="no measured torques"):
        identify(NOMINAL, replace(motion, tau=None))


def write_log(path, motion, sign=1.0):
    """The motion as a log file: t, q, qd, qdd, tau columns (ArmDyn's own CSV names)."""
    n = motion.q.shape[1]
    header = (["t"] + [f"q{j}" for j in range(1, n + 1)] + [f"qd{j}" for j in range(1, n + 1)]
              + [f"qdd{j}" for j in range(1, n + 1)] + [f"tau{j}" for j in range(1, n + 1)])
    data = np.column_stack([motion.t, motion.q, motion.qd, motion.qdd, sign * motion.tau])
    np.savetxt(path, data, delimiter=",", header=",".join(header), comments="", fmt="%.17g")


def test_the_command_line_writes_the_identified_model(tmp_path, capsys):
    from armdyn.core.cli import main
    log, other, out = tmp_path / "log.csv", tmp_path / "other.csv", tmp_path / "id.toml"
    write_log(log, logged(1))
    write_log(other, logged(2, duration=4.0))
    assert main(["identify", "robots/puma560_saha.toml", str(log), "--validate", str(other),
                 "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "fv flange roll" in captured.out and "condition number" in captured.err
    identified = load_robot(out)
    assert is_consistent(parameter_vector(identified), 6)
    # its torques along the other log are the truth's to the noise
    motion = logged(2, duration=4.0)
    tau = inverse_dynamics(identified, motion.q, motion.qd, motion.qdd)
    assert np.all(np.sqrt(np.mean((tau - motion.tau) ** 2, axis=0)) < 1.5 * NOISE)


def test_the_command_line_writes_nothing_when_identification_is_refused(tmp_path, capsys):
    from armdyn.core.cli import main
    log, out = tmp_path / "log.csv", tmp_path / "id.toml"
    write_log(log, logged(3, duration=4.0), sign=-1.0)
    out.write_text("# the old file\n")
    assert main(["identify", "robots/puma560_saha.toml", str(log), "-o", str(out)]) == 2
    assert "worse than zero torque" in capsys.readouterr().err
    assert out.read_text() == "# the old file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["id.toml", "log.csv"]


def test_a_mechanism_comes_back_a_mechanism_with_the_truths_torques():
    """The SCARA read as a Mechanism (a tree, one prismatic joint): torques of a heavier
    truth with friction from inverse_dynamics, no noise."""
    from armdyn.core import Mechanism, load_mechanism
    nominal = load_mechanism("robots/scara.toml")
    truth = nominal.with_links([replace(l, mass=1.3 * l.mass, friction_viscous=0.7,
                                        friction_coulomb=0.4) for l in nominal.links])
    rng = np.random.default_rng(8)
    lower, upper = nominal.joint_limits.T
    law = FourierSeries(0.5 * (lower + upper), rng.uniform(-0.1, 0.1, (4, 3)),
                        rng.uniform(-0.1, 0.1, (4, 3)), 0.2)
    t = np.arange(0.0, 5.0, 0.01)
    q, qd, qdd = law.sample(t)
    found = identify(nominal, Motion.from_samples(
        t, q, inverse_dynamics(truth, q, qd, qdd), qd=qd, qdd=qdd))
    assert isinstance(found.model, Mechanism)
    scale = np.abs(inverse_dynamics(truth, q, qd, qdd)).max()
    assert np.all(found.rms < 1e-6 * scale)
    assert found.model.links[1].friction_viscous == pytest.approx(0.7, rel=1e-4)


def test_the_fit_runs_on_one_blas_thread():
    """OpenBLAS's threads oversubscribe a busy machine (20 s instead of 1 s for the PUMA's
    60 s log): identify() runs inside one_blas_thread, which must hold every BLAS
    library numpy and SciPy loaded to one thread, and give the threads back after."""
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    assert before  # numpy's OpenBLAS at least
    with one_blas_thread():
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before


def test_identify_reports_its_stages_and_a_cancel_stops_it_between_them(found):
    motion, validate = logged(1), logged(2)
    seen = []
    again = identify(NOMINAL, motion, validate, progress=seen.append)
    assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0
    np.testing.assert_array_equal(again.base_parameters, found.base_parameters)
    stages = []
    with pytest.raises(Cancelled, match="after the motion's regressor"):
        identify(NOMINAL, motion, validate, progress=stages.append,
                 cancel=lambda: stages[-1] >= 0.6)
    assert stages == [f for f in seen if f <= 0.6]
