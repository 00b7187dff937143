"""Take docs/screenshots/measured*.png and identify*.png: the Measured Motion and
Identify docks on a PUMA log written here (docs/gui.md, "Measured against modelled").

    .venv/bin/python scripts/measured_screenshots.py

The log: the bundled PUMA with its links' masses scaled by SCALE (the "truth"), along
a Fourier motion (10 s at 200 Hz, logged rates and accelerations), its torques from
the core's inverse dynamics plus 0.05 N m of noise. The window shows the bundled
(nominal) PUMA: the measured view shows the residual the wrong masses leave, the
Identify panel what it finds, validated on a second log. Without a display it runs
itself again under `xvfb-run`.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
SIZES = {"": (1600, 1000), "-1280x800": (1280, 800)}
SCALE = (1.2, 0.85, 1.15, 0.9, 1.1, 0.8)


def write_logs(folder: Path) -> tuple[Path, Path]:
    """The fit and validation logs of the truth (module docstring)."""
    from armdyn.core import FourierSeries, inverse_dynamics, load_robot

    robot = load_robot(ROOT / "robots" / "puma560_saha.toml")
    truth = robot.with_links([replace(k, mass=k.mass * s) for k, s in zip(robot.links, SCALE)])
    rng = np.random.default_rng(1)
    paths = []
    for name, duration in (("puma_log.csv", 10.0), ("puma_check.csv", 5.0)):
        law = FourierSeries(truth.q_home, rng.uniform(-0.6, 0.6, (6, 4)),
                            rng.uniform(-0.6, 0.6, (6, 4)), 0.1)
        t = np.arange(0.0, duration, 0.005)
        q, qd, qdd = law.sample(t)
        tau = inverse_dynamics(truth, q, qd, qdd) + rng.normal(0.0, 0.05, q.shape)
        header = ",".join(["t"] + [f"{c}{j}" for c in ("q", "qd", "qdd", "tau")
                                   for j in range(1, 7)])
        np.savetxt(folder / name, np.column_stack([t, q, qd, qdd, tau]), delimiter=",",
                   fmt="%.10g", header=header, comments="")
        paths.append(folder / name)
    return paths[0], paths[1]


def take(folder: Path) -> None:
    from PySide6.QtCore import QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from armdyn.core import load_robot
    from armdyn.gui.app import save_window_image
    from armdyn.gui.look.style import apply_style
    from armdyn.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    apply_style(app)
    fit, check = write_logs(folder)

    def wait(signal, timeout_ms=120000):
        loop = QEventLoop()
        signal.connect(loop.quit)
        QTimer.singleShot(timeout_ms, loop.quit)
        loop.exec()

    path = ROOT / "robots" / "puma560_saha.toml"
    settings = QSettings(str(folder / "armdyn.ini"), QSettings.Format.IniFormat)
    for suffix, size in SIZES.items():
        window = MainWindow(load_robot(path), path, settings=settings, restore_layout=False)
        window.resize(*size)
        window.show()
        docks = window.measured
        docks.measured.show()
        panel = docks.measured_panel
        panel.open_motion(fit)
        wait(panel.predicted)
        panel.joint_box.setCurrentIndex(1)  # the shoulder: gravity's joint
        for problem in filter(None, [save_window_image(window, str(OUT / f"measured{suffix}.png"))]):
            print(problem, file=sys.stderr)
        docks.identify.show()
        ident = docks.identify_panel
        ident.open_validation(check)
        while ident.validate is None:
            app.processEvents()
        ident.run()
        wait(ident.identified)
        if not suffix:  # the large picture shows the validation residual, the small the table
            ident.tabs.setCurrentWidget(ident.graphics)
        for problem in filter(None, [save_window_image(window, str(OUT / f"identify{suffix}.png"))]):
            print(problem, file=sys.stderr)
        window.document.undo_stack.setClean()
        window.shutdown()
        window.close()
        window.deleteLater()
        app.processEvents()


def main() -> int:
    if not os.environ.get("DISPLAY"):
        return subprocess.call(["xvfb-run", "-a", "-s", "-screen 0 1920x1200x24",
                                sys.executable, *sys.argv])
    with tempfile.TemporaryDirectory() as folder:
        take(Path(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
