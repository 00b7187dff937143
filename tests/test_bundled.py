"""The bundled models are named by their short names wherever ArmDyn is installed:
`armdyn fourbar`, `armdyn simulate puma560_saha`, `armdyn --list-models`."""
from __future__ import annotations

from pathlib import Path

from armdyn.core.io.bundled import ROBOTS_DIR, bundled_models, bundled_names, model_path

ROOT = Path(__file__).resolve().parents[1]


def test_the_short_names_are_the_files_of_robots():
    names = bundled_names()
    assert names == sorted(p.stem for p in (ROOT / "robots").glob("*.toml"))
    assert {"fourbar", "puma560_saha", "fivebar_saha"} <= set(names)


def test_a_short_name_finds_the_bundled_file_and_a_path_stays_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no robots/ folder here: only the short names resolve
    assert model_path("fourbar") == ROBOTS_DIR / "fourbar.toml"
    assert model_path("puma560_saha.toml") == ROBOTS_DIR / "puma560_saha.toml"
    mine = tmp_path / "fourbar"
    mine.write_text("a file of the user's")
    assert model_path("fourbar") == Path("fourbar")  # a file by that name wins
    assert model_path("no_such_model") == Path("no_such_model")
    assert model_path("sub/fourbar") == Path("sub/fourbar")  # a path is never a short name


def test_list_models_prints_every_short_name_with_its_title(capsys):
    from armdyn.gui import app
    assert app.main(["--list-models"]) == 0
    out = capsys.readouterr().out
    robots, mechanisms = bundled_models()
    for title, path in robots + mechanisms:
        line = next(line for line in out.splitlines() if line.split()[:1] == [path.stem])
        assert line.endswith(title)
    assert out.index("robots:") < out.index("puma560_saha") < out.index("mechanisms:") \
        < out.index("fourbar")


def test_the_command_line_runs_a_bundled_model_by_its_short_name(tmp_path, monkeypatch,
                                                                  capsys):
    from armdyn.core import cli
    monkeypatch.chdir(tmp_path)
    assert cli.main(["simulate", "two_link_planar", "-T", "0.1", "-o", "fall.csv"]) == 0
    assert "Two-link planar arm" in capsys.readouterr().err
    assert (tmp_path / "fall.csv").read_text().startswith("# ArmDyn free-fall")


def _titles_by_full_parse(directory: Path) -> tuple[list, list]:
    """bundled_models' lists, from tomllib reading each whole file (the reference)."""
    import tomllib
    robots, mechanisms = [], []
    for path in directory.glob("*.toml"):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            doc = {}
        name = doc.get("name")
        title = name.strip() if isinstance(name, str) and name.strip() else path.stem
        kind = mechanisms if doc.get("format") == "armdyn-mechanism/1" else robots
        kind.append((title, path))
    return (sorted(robots, key=lambda e: e[0].lower()),
            sorted(mechanisms, key=lambda e: e[0].lower()))


def test_the_menus_titles_are_the_files_names_read_whole(tmp_path):
    """The menus read only each file's keys before its first table: the same titles and
    kinds as reading the whole file, for the bundled models and for files whose
    top-level keys follow lines that start with "[" but are no table."""
    assert bundled_models() == _titles_by_full_parse(ROBOTS_DIR)
    (tmp_path / "array_first.toml").write_text(
        'points = [\n  [0.0, 1.0],\n  [2.0, 3.0],\n]\nname = "Late name"\n'
        'format = "armdyn-mechanism/1"\n\n[[chains]]\nname = "not the title"\n')
    (tmp_path / "string_first.toml").write_text(
        'notes = """\n[not a table]\n"""\nname = "After a string"\n[links]\nname = "no"\n')
    (tmp_path / "plain.toml").write_text('name = " Plain "\n[[links]]\nname = "l1"\n')
    (tmp_path / "untitled.toml").write_text('[[links]]\nname = "only a table"\n')
    (tmp_path / "broken.toml").write_text('name = "Broken\n')
    robots, mechanisms = bundled_models(tmp_path)
    assert (robots, mechanisms) == _titles_by_full_parse(tmp_path)
    assert [t for t, _ in mechanisms] == ["Late name"]
    assert [t for t, _ in robots] == ["After a string", "broken", "Plain", "untitled"]
