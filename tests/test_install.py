"""A non-editable install (`pip install .`, i.e. a wheel) is a working `armdyn`.

The checkout is copied, built into a wheel and installed with pip into a fresh virtual
environment in tmp_path; `armdyn` then runs from outside the source tree and must
find the bundled robots and the style sheet inside the installed package. The build
is offline (no build isolation: the test extra brings a setuptools that builds wheels)
and the dependencies (numpy, numba, PySide6...) come from this environment through a
.pth file, so the test needs no network and takes about 20 s.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
#: What is not part of a checkout's source (environments, caches, build output).
NOT_SOURCE = {".git", ".venv", "build", "dist", ".pytest_cache", ".hypothesis", "__pycache__"}

pytestmark = pytest.mark.slow


def _run(argv, **kw) -> subprocess.CompletedProcess:
    run = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300,
                         **kw)
    assert run.returncode == 0, f"{argv}:\n{run.stdout}\n{run.stderr}"
    return run


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A virtual environment with armdyn installed from a wheel of this checkout."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=lambda d, names: [
        n for n in names if n in NOT_SOURCE or n.endswith(".egg-info")])
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
          "--no-build-isolation", "--no-index", "-w", tmp / "dist", src])
    wheel, = (tmp / "dist").glob("armdyn-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q",
          "--disable-pip-version-check", "--no-deps", "--no-index", wheel])
    # the dependencies: this environment's site-packages, after the new one's own
    site = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    Path(site.stdout.strip(), "_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")  # the kernels compile for the new path
    return env


def _probe(venv: Path, cwd: Path) -> dict:
    """Where the installed packages are, and what they find (run outside the checkout)."""
    code = ("import json, importlib.util as u, armdyn.core as core, "
            "armdyn.core.io.bundled as b, armdyn.gui.look.style as s; print(json.dumps({"
            "'core': core.__file__, 'robots': str(b.ROBOTS_DIR), "
            "'top': [m for m in ('core', 'gui') if u.find_spec(m) is not None], "
            "'files': sorted(p.name for p in b.ROBOTS_DIR.glob('*.toml')), "
            "'menu': [t for t, _ in b.bundled_models()[0]], 'style': str(s.STYLE_SHEET)}))")
    return json.loads(_run([venv / "bin" / "python", "-c", code], cwd=cwd, env=_env(cwd)).stdout)


def test_the_installed_package_holds_the_robots_and_the_style_sheet(installed, tmp_path):
    found = _probe(installed, tmp_path)
    assert Path(found["core"]).is_relative_to(installed)  # not this checkout
    assert found["top"] == []  # armdyn.core and armdyn.gui only: no top-level core or gui
    robots, style = Path(found["robots"]), Path(found["style"])
    assert found["files"] == sorted(p.name for p in (REPO / "robots").glob("*.toml"))
    assert robots.is_relative_to(installed)
    assert "PUMA 560 (Saha, Table 3)" in found["menu"]
    assert style.is_relative_to(installed)
    assert style.read_text() == (REPO / "resources" / "style.qss").read_text()


def test_the_installed_command_runs_on_a_bundled_robot(installed, tmp_path):
    robots = Path(_probe(installed, tmp_path)["robots"])
    out = tmp_path / "puma.csv"
    run = _run([installed / "bin" / "armdyn", "inverse", robots / "puma560_saha.toml",
                "--target", "90,45,0,0,0,0", "-T", "0.5", "--dt", "0.1", "-o", out.name],
               cwd=tmp_path, env=_env(tmp_path))
    assert "PUMA 560" in run.stderr and f"wrote {out.name}" in run.stderr
    table = np.loadtxt(out, delimiter=",", skiprows=3, ndmin=2)
    assert table.shape == (6, 1 + 4 * 6 + 3)
    np.testing.assert_allclose(np.degrees(table[-1, 1:3]), [90.0, 45.0], atol=1e-9)


def test_pyproject_lists_every_package():
    """Every folder of core/ and gui/ that is a package is installed (a subpackage missing
    from pyproject.toml's list would be left out of the wheel)."""
    import tomllib
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {"armdyn." + ".".join(init.parent.relative_to(REPO).parts)
             for top in ("core", "gui") for init in (REPO / top).rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)
