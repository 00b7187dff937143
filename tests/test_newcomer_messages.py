"""The messages a new user meets when a hand-written file or a run goes wrong (issue 21):
each says what is wrong in the file's own words and what to write instead.

- a table written [link] where the format repeats it as [[link]];
- a robot file without `format` is told it is a robot file, not "a mechanism file";
- a four-bar without an actuated joint is told to hold a joint on the ground;
- "1 sample", not "1 samples";
- the loops closed on loading are reported by the CLI as by the window, in each moved
  joint's unit, naming every joint that moved.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import MechanismFileError, RobotFileError, SimulationError, cli, simulate
from armdyn.core.io.mechanism_file import load_mechanism
from armdyn.core.io.model_files import load_model

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
TWO_LINK = (ROBOTS / "two_link_planar.toml").read_text()
FOURBAR = (ROBOTS / "fourbar.toml").read_text()


def written(tmp_path, text: str, name: str = "hand.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def cli_err(capsys, *argv) -> tuple[int, str]:
    code = cli.main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_single_brackets_for_a_repeated_table_say_to_write_double_brackets(tmp_path):
    # every [[link]] written [link]: TOML says "Cannot declare ('link',) twice"
    single = written(tmp_path, TWO_LINK.replace("[[link]]", "[link]"))
    # only the first: TOML says "Cannot overwrite a value" at the second [[link]]
    first = written(tmp_path, TWO_LINK.replace("[[link]]", "[link]", 1), "first.toml")
    for path in (single, first):
        for load in (load_model, load_mechanism):
            with pytest.raises(RobotFileError) as caught:
                load(path)
            reason = str(caught.value)
            assert "Cannot" not in reason and "[[link]]" in reason, reason
            assert "double brackets" in reason and re.search(r"line \d+", reason), reason


def test_a_repeated_chain_link_table_names_its_dotted_name(tmp_path):
    path = written(tmp_path, FOURBAR.replace("[[chain.link]]", "[chain.link]"))
    with pytest.raises(MechanismFileError) as caught:
        load_mechanism(path)
    assert "[[chain.link]]" in str(caught.value) and "Cannot" not in str(caught.value)


def test_a_key_given_twice_is_named(tmp_path):
    path = written(tmp_path, TWO_LINK.replace("mass = 1.0", "mass = 1.0\nmass = 2.0", 1))
    with pytest.raises(RobotFileError) as caught:
        load_model(path)
    assert "'mass' is given twice" in str(caught.value)


def test_a_robot_file_without_format_is_told_it_is_a_robot_file(tmp_path):
    path = written(tmp_path, re.sub(r"(?m)^format = .*\n", "", TWO_LINK))
    for load in (load_model, load_mechanism):  # the window's reader, the CLI's
        with pytest.raises(RobotFileError) as caught:
            load(path)
        reason = str(caught.value)
        assert 'format = "armdyn-robot/1"' in reason and "robot file" in reason, reason
        assert "mechanism" not in reason, reason


def test_a_mechanism_file_without_format_is_told_it_is_a_mechanism_file(tmp_path):
    path = written(tmp_path, re.sub(r"(?m)^format = .*\n", "", FOURBAR))
    for load in (load_model, load_mechanism):
        with pytest.raises(MechanismFileError) as caught:
            load(path)
        reason = str(caught.value)
        assert 'format = "armdyn-mechanism/1"' in reason and "robot file" not in reason


def test_a_fourbar_without_actuated_joint_is_told_to_hold_a_ground_joint(tmp_path):
    path = written(tmp_path, FOURBAR.replace("actuated = true", "actuated = false"))
    with pytest.raises(MechanismFileError) as caught:
        load_mechanism(path)
    reason = str(caught.value)
    hint = re.search(r"for example hold (.*)$", reason)
    assert hint, reason
    # the crank or the rocker (on the ground), never the coupler (between them)
    assert hint.group(1) in ("'crank'", "'rocker'"), reason


def test_the_hint_holds_joints_that_fix_the_pose(tmp_path):
    """Whatever the hint names, holding it closes the file: it is a valid choice."""
    path = written(tmp_path, FOURBAR.replace("actuated = true", "actuated = false"))
    with pytest.raises(MechanismFileError) as caught:
        load_mechanism(path)
    name = re.search(r"for example hold '([^']+)'", str(caught.value)).group(1)
    fixed = FOURBAR.replace("actuated = true\n", "").replace(
        f'name = "{name}"\n', f'name = "{name}"\nactuated = true\n', 1)
    mech = load_mechanism(written(tmp_path, fixed, "fixed.toml"))
    assert [mech.joint_names[j] for j in mech.actuated] == [name]


def test_one_sample_is_singular(tmp_path, capsys, monkeypatch):
    """A run stopped after its first sample says '1 sample written'."""
    mech = load_mechanism(ROBOTS / "two_link_planar.toml")
    run = simulate(mech, 0.05, dt_out=0.01)  # 6 samples, cut to the first
    one = dataclasses.replace(run, **{
        f.name: getattr(run, f.name)[:1] for f in dataclasses.fields(run)
        if isinstance(getattr(run, f.name), np.ndarray)
        and getattr(run, f.name).shape[:1] == (len(run),)})

    def stops(*_args, **_kwargs):
        raise SimulationError("the step size collapsed", time=0.0, result=one)

    monkeypatch.setattr(cli, "simulate", stops)
    assert len(one) == 1
    code, err = cli_err(capsys, "simulate", ROBOTS / "two_link_planar.toml", "-o",
                        tmp_path / "one.csv")
    assert code == 1 and "(1 sample written)" in err, err


def _opened_off_its_loop(tmp_path) -> Path:
    """The four-bar with its coupler and rocker 5 degrees off their closed values."""
    text = FOURBAR
    for name in ("coupler", "rocker"):
        block = re.search(rf'name = "{name}"\n(.*?)\n\n', text, re.S)
        assert block and "theta" in block.group(1)
        shifted = re.sub(r"theta = (-?[\d.]+)",
                         lambda m: f"theta = {float(m.group(1)) + 5.0}", block.group(0), 1)
        text = text.replace(block.group(0), shifted)
    return written(tmp_path, text, "open.toml")


def test_closing_the_loops_names_every_moved_joint_in_its_unit(tmp_path):
    mech = load_mechanism(_opened_off_its_loop(tmp_path))
    (warning,) = [w for w in mech.warnings if "closing the loops" in w]
    assert "(rad or m)" not in warning
    moved = dict(re.findall(r"'([^']+)' by ([+-][\d.e+-]+) deg", warning))
    assert set(moved) == {"coupler", "rocker"}, warning
    # the closed angles differ from the file's by what the warning says
    text = _opened_off_its_loop(tmp_path).read_text()
    for name, by in moved.items():
        file_deg = float(re.search(rf'name = "{name}"\n(?:.*\n)*?theta = (-?[\d.]+)',
                                   text).group(1))
        closed = np.degrees(mech.q_home[mech.joint_index(name)])
        assert float(by) == pytest.approx(closed - file_deg, rel=2e-3, abs=2e-3)


def test_the_cli_reports_the_loops_closed_on_loading(tmp_path, capsys):
    path = _opened_off_its_loop(tmp_path)
    code, err = cli_err(capsys, "simulate", path, "-T", "0.05", "-o", tmp_path / "f.csv")
    assert code == 0, err
    lines = [line for line in err.splitlines() if "closing the loops moved" in line]
    assert len(lines) == 1 and lines[0].startswith("armdyn: warning: open.toml: "), err
