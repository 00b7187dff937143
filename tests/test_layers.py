"""The architecture is a contract: each package imports only from the layers below it.

    core:  errors <- kernels <- model <- algorithms <- sim <- io <- lab, sweeps <- (core's
           entry points: __init__, cli_options, sweep_cli, cli, warmup)
    gui:   look <- jobs <- model <- scene, plots, editors <- panels <- (the window:
           app, main_window and the other top-level modules)
    and the gui sits on top of the core.

A module may import from its own package and from any lower layer; nothing imports
upward. Read from the source (every import statement, at module level or in a function),
as import-linter would, so that a lazy import cannot hide a circle.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (package, rank): a module's layer is the longest package prefix listed here.
LAYERS = {
    "armdyn.core.errors": 0,
    "armdyn.core.kernels": 1,
    "armdyn.core.model": 2,
    "armdyn.core.algorithms": 3,
    "armdyn.core.sim": 4,
    "armdyn.core.io": 5,
    "armdyn.core.lab": 6,
    "armdyn.core.sweeps": 6,
    "armdyn.core": 7,
    "armdyn.gui.look": 10,
    "armdyn.gui.jobs": 11,
    "armdyn.gui.model": 12,
    "armdyn.gui.scene": 13,
    "armdyn.gui.plots": 13,
    "armdyn.gui.editors": 13,
    "armdyn.gui.panels": 14,
    "armdyn.gui": 15,
}


def layer_of(module: str) -> tuple[str, int]:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return best, LAYERS[best]


def modules() -> dict[str, Path]:
    out = {}
    for top in ("core", "gui"):
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out["armdyn." + ".".join(parts)] = path
    return out


def imports_of(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, imported armdyn module or package) of every import in the file."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("armdyn")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("armdyn"):
                continue
            found.append((node.lineno, target))
            # `from .pkg import module`: the module is the target
            for a in node.names:
                if f"{target}.{a.name}" in ALL:
                    found.append((node.lineno, f"{target}.{a.name}"))
    return found


ALL = modules()


def upward_imports(module: str, path: Path) -> list[str]:
    """The imports of `module` (its source at `path`) that go to a higher layer, or to
    another package of its own layer."""
    own_package, own = layer_of(module)
    wrong = []
    for line, target in imports_of(module, path):
        package, rank = layer_of(target)
        if rank > own or (rank == own and package != own_package and
                          not own_package.startswith(package)):
            wrong.append(f"line {line}: {target} ({package}, above or beside {own_package})")
    return wrong


@pytest.mark.parametrize("module", sorted(ALL))
def test_nothing_imports_upward(module):
    wrong = upward_imports(module, ALL[module])
    assert not wrong, f"{module}:\n" + "\n".join(wrong)


def test_the_check_sees_an_upward_import_even_inside_a_function(tmp_path):
    source = tmp_path / "denoc.py"
    source.write_text("from . import buffers\n\ndef f():\n    from ..sim import simulation\n"
                      "    from ...gui.scene import view3d\n")
    wrong = upward_imports("armdyn.core.kernels.denoc", source)
    assert {w.split(":")[0] for w in wrong} == {"line 4", "line 5"}
    assert any("armdyn.core.sim" in w for w in wrong) and any("armdyn.gui" in w for w in wrong)


def test_every_package_has_a_layer():
    packages = {m for m, p in ALL.items() if p.name == "__init__.py"}
    assert packages <= set(LAYERS) | {"armdyn.core", "armdyn.gui"}, \
        sorted(packages - set(LAYERS))


def test_the_kernels_import_nothing_of_the_core_above_them():
    """The compiled layer knows no description, no algorithm: only its own modules."""
    for module, path in ALL.items():
        if module.startswith("armdyn.core.kernels"):
            for line, target in imports_of(module, path):
                assert target.startswith("armdyn.core.kernels") or target == "armdyn.core.errors", \
                    f"{module} line {line}: {target}"
