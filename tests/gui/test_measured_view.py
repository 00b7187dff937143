"""The Measured Motion and Identify docks (gui/panels/measured_panel.py,
gui/panels/identify_panel.py) on the real window, with logs written here from a known
truth: a PUMA whose masses differ from the file's and whose joints have friction and
rotors, its torques from the core's inverse
dynamics plus noise of a known sample.

- with the truth's masses typed into the table, the residual is the noise plus the
  truth's friction torques (the file has none);
- switching the gravity part off moves the prediction by exactly `gravity_torques`;
- Identify fits to the noise on the log and on a second one, "Use identified model"
  puts the identified parameters into the tables (undoable) and the measured view
  follows; "Save identified model..." writes a file that loads back the same;
- a log too short is refused by the core's own message.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import Qt

from armdyn.core import (FourierSeries, IdentificationError, friction_torques,
                         gravity_torques, identify, inverse_dynamics, load_motion,
                         load_robot, parameter_vector)
from armdyn.core.io.model_files import load_model
from gui_helpers import PUMA

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("no_modal_boxes")]

WINDOW_SIZE = (1400, 900)
NOISE = 0.05  # N m, the measured torques' noise
SCALE = np.array([1.2, 0.85, 1.15, 0.9, 1.1, 0.8])  # the truth's masses / the file's
WAIT = 20000  # ms


def write_log(path, t, q, qd, qdd, tau) -> None:
    """A log with logged rates and accelerations (used as they are: no differentiator)."""
    n = q.shape[1]
    header = (["t"] + [f"q{j + 1}" for j in range(n)] + [f"qd{j + 1}" for j in range(n)]
              + [f"qdd{j + 1}" for j in range(n)] + [f"tau{j + 1}" for j in range(n)])
    np.savetxt(path, np.column_stack([t, q, qd, qdd, tau]), delimiter=",", fmt="%.17g",
               header=",".join(header), comments="")


@pytest.fixture(scope="module")
def truth():
    robot = load_robot(PUMA)
    return robot.with_links([replace(link, mass=link.mass * s, friction_viscous=0.5,
                                     friction_coulomb=0.8, rotor_inertia=2e-4)
                             for link, s in zip(robot.links, SCALE)])


@pytest.fixture(scope="module")
def logs(truth, tmp_path_factory):
    """Two logs of the truth along two Fourier motions (5 s and 3 s at 200 Hz), and
    the first one's noise."""
    out = tmp_path_factory.mktemp("logs")
    rng = np.random.default_rng(1)
    paths, noises = [], []
    for name, duration in (("fit.csv", 5.0), ("check.csv", 3.0)):
        law = FourierSeries(truth.q_home, rng.uniform(-0.6, 0.6, (6, 4)),
                            rng.uniform(-0.6, 0.6, (6, 4)), 0.1)
        t = np.arange(0.0, duration, 0.005)
        q, qd, qdd = law.sample(t)
        noise = rng.normal(0.0, NOISE, q.shape)
        write_log(out / name, t, q, qd, qdd, inverse_dynamics(truth, q, qd, qdd) + noise)
        paths.append(out / name)
        noises.append(noise)
    short = out / "short.csv"
    t = np.arange(12) * 0.005
    law = FourierSeries(truth.q_home, np.full((6, 1), 0.3), np.zeros((6, 1)), 0.5)
    q, qd, qdd = law.sample(t)
    write_log(short, t, q, qd, qdd, inverse_dynamics(truth, q, qd, qdd))
    return paths[0], paths[1], short, noises[0]


def _open_log(qtbot, window, path):
    docks = window.measured
    assert not docks.measured.built and not docks.identify.built  # lazy: a fast start
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert docks.open_action in menus["File"].actions()
    assert {docks.measured.action, docks.identify.action} <= set(menus["View"].actions())
    docks.measured.action.trigger()
    panel = docks.measured_panel
    assert docks.measured.dock.isVisible()
    with qtbot.waitSignal(panel.predicted, timeout=WAIT):
        assert panel.open_motion(path)
    return panel


def test_the_truth_leaves_the_noise_and_gravity_switches_off_exactly(make_window, qtbot,
                                                                     truth, logs):
    fit, _check, _short, noise = logs
    window = make_window(PUMA, size=WINDOW_SIZE)
    panel = _open_log(qtbot, window, fit)
    nominal_rms = panel.residual_rms()
    assert nominal_rms.max() > 10 * NOISE  # the file's masses do not explain the log
    # type the truth's masses into the table (one undo step): the prediction follows
    doc = window.document
    with qtbot.waitSignal(panel.predicted, timeout=WAIT):
        doc.set_many([(row, "mass", link.mass) for row, link in enumerate(truth.links)],
                     text="Masses")
    residual = panel.residual()
    scale = np.abs(panel.motion.tau).max()
    rotor = truth.links[0].rotor_inertia * panel.motion.qdd  # gear ratio 1
    missing = friction_torques(truth, panel.motion.qd) + rotor
    assert np.abs(residual - noise - missing).max() < 1e-10 * scale
    assert "residual RMS" in panel.summary.text()

    with_gravity = panel.prediction()
    panel.part_boxes["gravity"].setChecked(False)  # no job: the kept parts re-added
    change = with_gravity - panel.prediction()
    g = np.array([gravity_torques(truth, q) for q in panel.motion.q])  # one state each
    assert np.abs(change - g).max() < 1e-10 * np.abs(g).max()
    assert "gravity" in panel.summary.text()
    panel.part_boxes["gravity"].setChecked(True)
    assert panel.model_curve.samples()[1].size == len(panel.motion)


def test_identify_uses_saves_and_undoes(make_window, qtbot, truth, logs, tmp_path):
    fit, check, short, _noise = logs
    window = make_window(PUMA, size=WINDOW_SIZE)
    measured = _open_log(qtbot, window, fit)
    window.measured.identify.action.trigger()
    panel = window.measured.identify_panel
    assert panel.open_validation(check)
    qtbot.waitUntil(lambda: panel.validate is not None, timeout=WAIT)
    nominal = window.document.robot
    assert panel.run()
    qtbot.waitUntil(lambda: panel.outcome is not None or not panel.progress.isVisible(),
                    timeout=4 * WAIT)
    assert panel.outcome is not None, panel.status.text()
    found = panel.outcome.found
    # the fit and the second log are at the noise (the truth is in the model's family)
    assert np.all(np.abs(found.rms / NOISE - 1) < 0.1)
    assert np.all(np.abs(found.validation_rms / NOISE - 1) < 0.15)
    residual = panel.outcome.residual
    assert residual.shape == (len(panel.validate), 6)
    np.testing.assert_allclose(np.sqrt(np.mean(residual**2, axis=0)), found.validation_rms,
                               rtol=1e-6)
    assert len(panel.residual_curves) == 6
    # the table: nominal and identified per link, as the models hold them
    links = panel.links
    assert links.rowCount() == 6 * 13
    for k in range(6):
        row = 13 * k  # the link's mass
        assert links.data(links.index(row, 1)) == "mass (kg)"
        assert float(links.data(links.index(row, 2))) == pytest.approx(nominal.links[k].mass,
                                                                       rel=1e-4)
        assert float(links.data(links.index(row, 3))) == pytest.approx(
            found.model.links[k].mass, rel=1e-4)
    base = panel.base  # numbered, each value with its relative standard deviation
    assert base.rowCount() == len(found.base_parameters) and base.columnCount() == 4
    assert base.headerData(0, Qt.Orientation.Vertical) == 1
    assert base.headerData(2, Qt.Orientation.Horizontal) == "std / |value|"
    i = int(np.argmax(np.abs(found.base_parameters)))
    assert base.data(base.index(i, 2)) == \
        f"{found.std[i] / abs(found.base_parameters[i]):.2%}"
    assert links.headerData(0, Qt.Orientation.Vertical) is None
    assert "condition number" in panel.status.text()

    # Save: a file that loads back with the identified parameters
    path = tmp_path / "identified.toml"
    assert panel.save(path)
    np.testing.assert_allclose(parameter_vector(load_model(path)),
                               parameter_vector(found.model), rtol=1e-9, atol=1e-12)

    # Use: the tables hold it, the measured view follows, undo puts the nominal back
    with qtbot.waitSignal(measured.predicted, timeout=WAIT):
        assert panel.use()
    np.testing.assert_allclose(parameter_vector(window.document.robot),
                               parameter_vector(found.model), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(measured.residual_rms(), found.rms, rtol=1e-6)
    with qtbot.waitSignal(measured.predicted, timeout=WAIT):
        window.document.undo_stack.undo()
    np.testing.assert_array_equal(parameter_vector(window.document.robot),
                                  parameter_vector(nominal))

    # a log too short: the core's refusal, word for word
    with qtbot.waitSignal(measured.predicted, timeout=WAIT):
        measured.open_motion(short)
    with pytest.raises(IdentificationError) as refused:
        identify(nominal, load_motion(short))
    assert panel.run()
    qtbot.waitUntil(lambda: panel.status.text() == str(refused.value), timeout=WAIT)
    assert panel.outcome.found is found  # what was identified before stays
