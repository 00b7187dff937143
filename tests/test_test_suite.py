"""The test suite's own rules, read from the source with ast.

* A test module imports nothing from another test module: what tests share lives in
  tests/strategies.py, tests/pinocchio_reference.py, tests/gui/gui_helpers.py and the
  conftest.py files. (Importing a test module runs its module-level code and makes
  pytest's collection of that module depend on where it was imported from first.)
* Every property test takes its settings from `strategies.fast`, so that the Hypothesis
  profile (tests/conftest.py: "ci" by default, "dev" for a quick run) decides how many
  examples it runs: no test module builds hypothesis `settings` itself.
"""
from __future__ import annotations

import ast
from pathlib import Path

import hypothesis

from strategies import examples

TESTS = Path(__file__).resolve().parent
TEST_MODULES = sorted(TESTS.rglob("test_*.py"))


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imported_modules(tree: ast.Module):
    """(line, module name) of every import, at module level or inside a function."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                yield node.lineno, node.module or ""
            else:  # `from . import test_x`, `from .test_x import y`
                names = [node.module] if node.module else [a.name for a in node.names]
                for name in names:
                    yield node.lineno, name


def is_test_module(name: str) -> bool:
    """A test module (test_*) or anything under the tests folder as a package."""
    top = name.split(".")[0]
    return top == "tests" or top.startswith("test_")


def where(path: Path) -> str:
    return path.relative_to(TESTS).as_posix()


def test_there_are_test_modules_to_check():
    names = {where(p) for p in TEST_MODULES}
    assert {"test_loops.py", "test_robot_file.py", "gui/test_app.py"} <= names


def test_no_test_module_imports_another():
    bad = [f"{where(path)}:{line} imports {name}" for path in TEST_MODULES
           for line, name in imported_modules(parse(path)) if is_test_module(name)]
    assert not bad, ("test modules import from test modules; move what they share to "
                     "tests/strategies.py (tests/gui/gui_helpers.py for the GUI):\n"
                     + "\n".join(bad))


def test_the_import_check_catches_each_form():
    source = ("from test_loops import x\nimport test_app\nfrom tests.strategies import y\n"
              "def f():\n    from test_robot_file import Z\n"
              "from strategies import fast\nfrom gui_helpers import chain\nimport pytest\n")
    found = [name for _, name in imported_modules(ast.parse(source)) if is_test_module(name)]
    assert found == ["test_loops", "test_app", "tests.strategies", "test_robot_file"]


def fast_settings_names(tree: ast.Module) -> set[str]:
    """Module-level names bound to a `fast(...)` call (FAST = fast(40))."""
    return {target.id for node in tree.body if isinstance(node, ast.Assign)
            and is_fast_call(node.value) for target in node.targets
            if isinstance(target, ast.Name)}


def is_fast_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
        and node.func.id == "fast"


def decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return ast.unparse(target)


def settings_problems(path: Path, tree: ast.Module):
    """Where a test module builds hypothesis settings itself or has a property test
    that is not under @fast(n) (or a module-level name bound to fast(n))."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "hypothesis" \
                and any(a.name == "settings" for a in node.names):
            yield f"{where(path)}:{node.lineno} imports hypothesis.settings"
    named = fast_settings_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        decorators = node.decorator_list
        if any(decorator_name(d) in ("given", "hypothesis.given") for d in decorators) and \
                not any(is_fast_call(d) or (isinstance(d, ast.Name) and d.id in named)
                        for d in decorators):
            yield f"{where(path)}:{node.lineno} {node.name} is not under @fast(n)"


def test_property_tests_take_their_settings_from_fast():
    bad = [problem for path in TEST_MODULES for problem in settings_problems(path, parse(path))]
    assert not bad, ("the profile decides the examples only through strategies.fast:\n"
                     + "\n".join(bad))


def test_the_settings_check_catches_each_form():
    source = ("from hypothesis import given, settings\n"
              "FAST = fast(40)\n"
              "@FAST\n@given(x)\ndef test_a(x): pass\n"
              "@fast(10)\n@given(x)\ndef test_b(x): pass\n"
              "@settings(max_examples=5)\n@given(x)\ndef test_c(x): pass\n"
              "@given(x)\ndef test_d(x): pass\n")
    found = list(settings_problems(TESTS / "test_x.py", ast.parse(source)))
    assert found == ["test_x.py:1 imports hypothesis.settings",
                     "test_x.py:11 test_c is not under @fast(n)",
                     "test_x.py:13 test_d is not under @fast(n)"]


def test_the_full_run_keeps_every_count_and_dev_takes_a_tenth():
    profiles = hypothesis.settings
    loaded = profiles.get_current_profile_name()
    counts = (4, 15, 25, 40, 60, 100, 150, 200)
    try:
        profiles.load_profile("ci")
        assert [examples(n) for n in counts] == list(counts)
        profiles.load_profile("dev")
        assert [examples(n) for n in counts] == [2, 2, 2, 4, 6, 10, 15, 20]
    finally:
        profiles.load_profile(loaded)
