"""scripts/run.sh starts a set-up checkout without pip (offline, quickly); it sets up
only when .venv is missing or pyproject.toml changed (`setup.sh --check` says which)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _checkout(tmp_path: Path) -> Path:
    """A copy of the scripts and pyproject.toml with a stand-in .venv whose python and
    armdyn only record that they ran (no network, no real install)."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    for name in ("setup.sh", "run.sh"):
        shutil.copy(ROOT / "scripts" / name, root / "scripts" / name)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    bin_ = root / ".venv" / "bin"
    bin_.mkdir(parents=True)
    for tool in ("python", "armdyn"):
        script = bin_ / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{root}/ran.log"\n')
        script.chmod(0o755)
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "DISPLAY": ":99", "HOME": str(root)}
    return subprocess.run(["bash", *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def _stamp(root: Path, extras: str = "") -> None:
    digest = subprocess.run(["sha256sum", "pyproject.toml"], cwd=root, capture_output=True,
                            text=True, check=True).stdout.split()[0]
    (root / ".venv" / "armdyn-setup.stamp").write_text(f"{digest} {extras}\n")


def test_check_says_whether_the_venv_is_set_up_for_this_pyproject(tmp_path):
    root = _checkout(tmp_path)
    assert _run(root, "scripts/setup.sh", "--check").returncode == 1  # never set up
    _stamp(root, "[test]")
    assert _run(root, "scripts/setup.sh", "--check").returncode == 0
    with (root / "pyproject.toml").open("a") as f:
        f.write("\n# a changed dependency\n")
    assert _run(root, "scripts/setup.sh", "--check").returncode == 1


def test_run_starts_a_set_up_checkout_without_pip(tmp_path):
    root = _checkout(tmp_path)
    _stamp(root)
    run = _run(root, "scripts/run.sh", "robots/fourbar.toml")
    assert run.returncode == 0, run.stderr
    assert (root / "ran.log").read_text().splitlines() == ["armdyn robots/fourbar.toml"]
