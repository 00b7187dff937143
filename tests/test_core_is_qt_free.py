"""core/ is the Qt-free part of ArmDyn (numpy + numba): importing `core` and every
module in it, in a fresh interpreter, loads no Qt binding, no pyvista / VTK, no
pyqtgraph and nothing of the GUI package."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Top-level packages that must not be loaded by the core.
FORBIDDEN = ("PySide6", "PySide2", "PyQt5", "PyQt6", "shiboken6", "shiboken2", "qtpy",
             "pyvista", "pyvistaqt", "vtk", "vtkmodules", "pyqtgraph", "gui")

SCRIPT = r"""
import importlib, json, pkgutil, sys
{pre}
import armdyn.core as core
modules = ["core"]
for info in pkgutil.walk_packages(core.__path__, "core."):
    importlib.import_module(info.name)
    modules.append(info.name)
forbidden = {forbidden!r}
loaded = sorted(m for m in sys.modules if m.split(".")[0] in forbidden)
print(json.dumps({{"modules": modules, "loaded": loaded}}))
"""


def _run(pre: str = "") -> dict:
    env = dict(os.environ)
    env.pop("QT_API", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(pre=pre, forbidden=FORBIDDEN)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"importing the core failed:\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_importing_every_core_module_loads_no_qt_or_gui_module():
    result = _run()
    modules = result["modules"]
    # every module file in core/ was imported (and subpackages' modules, if any)
    files = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "core"))
                   if f.endswith(".py") and f != "__init__.py")
    missing = set(f"core.{f}" for f in files) - set(modules)
    assert not missing, f"not imported: {sorted(missing)}"
    assert result["loaded"] == [], f"the core loaded GUI modules: {result['loaded']}"


def test_the_check_sees_a_gui_module_when_one_is_loaded():
    """The detection works: with a Qt binding (or pyqtgraph) imported first, it is seen."""
    name = next((m for m in ("PySide6", "pyqtgraph", "pyvista")
                 if importlib.util.find_spec(m) is not None), None)
    if name is None:
        pytest.skip("no GUI package installed to load")
    assert any(m.split(".")[0] == name for m in _run(pre=f"import {name}")["loaded"])
