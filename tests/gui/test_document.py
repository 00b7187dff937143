"""RobotDocument: undo commands, signals, saved state (no widgets)."""
from __future__ import annotations

import pytest

from armdyn.core import JointType
from armdyn.core.io.robot_file import load_robot
from armdyn.gui.model.document import RobotDocument

from gui_helpers import PUMA, SCARA


@pytest.fixture
def doc(qapp) -> RobotDocument:
    document = RobotDocument(load_robot(PUMA), PUMA)
    yield document
    document.deleteLater()


def test_an_edit_is_one_undo_step_and_marks_the_document_modified(doc):
    robots = []
    doc.robot_changed.connect(robots.append)
    original = doc.robot
    assert doc.set_text(1, "a", "0.5")
    assert doc.robot.links[1].a == 0.5 and doc.is_modified
    assert doc.undo_stack.undoText() == "Edit a of shoulder"
    doc.undo_stack.undo()
    assert doc.robot == original and not doc.is_modified
    doc.undo_stack.redo()
    assert doc.robot.links[1].a == 0.5
    assert [r.links[1].a for r in robots] == [0.5, original.links[1].a, 0.5]


def test_the_same_value_is_not_an_edit(doc):
    assert not doc.set_text(1, "a", "0.432")
    assert doc.undo_stack.count() == 0


def test_invalid_values_are_undoable_and_never_announced_as_a_robot(doc):
    robots, errors = [], []
    doc.robot_changed.connect(robots.append)
    doc.errors_changed.connect(lambda: errors.append(dict(doc.errors)))
    doc.set_text(0, "mass", "-1")
    doc.set_text(0, "mass", "abc")
    assert robots == [] and not doc.is_valid
    assert "expected a number" in doc.first_error
    doc.undo_stack.undo()
    assert "> 0" in doc.first_error
    doc.undo_stack.undo()
    assert doc.is_valid and robots == []  # back to the robot it already had
    assert len(errors) == 4 and errors[-1] == {}


def test_paste_is_one_step_and_reads_limits_in_the_new_joint_unit(doc):
    assert doc.set_many([(2, "joint", "prismatic"), (2, "lower", "-0.1"),
                         (2, "upper", "0.2"), (3, "mass", "2")])
    link = doc.robot.links[2]
    assert link.joint == JointType.PRISMATIC and link.limits == (-0.1, 0.2)
    assert doc.robot.links[3].mass == 2.0
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Paste (4 cells)"
    doc.undo_stack.undo()
    assert doc.robot == load_robot(PUMA)


def test_link_insert_remove_move_undo(doc):
    original = doc.robot
    inserted = []
    doc.rows_about_to_be_inserted.connect(lambda a, b: inserted.append((a, b)))
    doc.insert_link(None)
    assert doc.robot.n == 7 and inserted == [(6, 6)]
    doc.insert_link(0)
    assert doc.robot.n == 8 and doc.robot.links[1:7] == original.links
    assert doc.remove_links(0, 2)
    assert doc.robot.links == original.links[1:] + (doc.robot.links[-1],)
    assert doc.move_link(0, +1)
    assert doc.robot.links[1] == original.links[1]
    assert not doc.move_link(0, -1)
    final = doc.robot
    while doc.undo_stack.canUndo():
        doc.undo_stack.undo()
    assert doc.robot == original
    while doc.undo_stack.canRedo():
        doc.undo_stack.redo()
    assert doc.robot == final


def test_the_last_link_cannot_be_deleted(doc):
    assert not doc.remove_links(0, 6)
    assert doc.remove_links(0, 5)
    assert not doc.remove_links(0, 1)
    assert doc.robot.n == 1


def test_load_resets_history_and_saved_state(doc, tmp_path):
    doc.set_text(0, "mass", "3")
    paths = []
    doc.path_changed.connect(paths.append)
    doc.load(load_robot(SCARA), SCARA)
    assert doc.undo_stack.count() == 0 and not doc.is_modified
    assert doc.robot.name.startswith("SCARA") and paths == [SCARA]
    doc.set_text(0, "mass", "3")
    doc.mark_saved(tmp_path / "x.toml")
    assert not doc.is_modified and doc.path == tmp_path / "x.toml"


def test_chain_and_loop_structure_edits_are_exact_undo_steps(qapp):
    from armdyn.core import load_mechanism
    from gui_helpers import ROBOTS
    mech = load_mechanism(ROBOTS / "fivebar_saha.toml")
    doc = RobotDocument(mech)
    events: list[str] = []
    doc.sheet_reset.connect(events.append)
    doc.add_chain()
    assert [c.name for c in doc.robot.chains] == ["leg 1", "leg 2", "chain 3"]
    assert doc.undo_stack.undoText() == "Add chain chain 3"
    assert doc.remove_chain(0)  # leg 1 gone: loop E names a link that is no more
    assert "loop 'E'" in doc.model_error and doc.errors[(0, "link_a")] == doc.model_error
    assert len(doc.robot.chains) == 3  # downstream keeps the last valid mechanism
    doc.add_loop(0)
    assert doc.remove_loop(0)
    while doc.undo_stack.canUndo():
        doc.undo_stack.undo()
    assert doc.robot == mech and doc.is_valid
    while doc.undo_stack.canRedo():
        doc.undo_stack.redo()
    while doc.undo_stack.canUndo():
        doc.undo_stack.undo()
    assert doc.robot == mech
    assert {"chains", "loops"} <= set(events)
    assert not doc.remove_loop(5)


def test_a_link_rename_follows_into_loops_parents_and_independent_joints(qapp):
    from armdyn.core import load_mechanism
    from gui_helpers import ROBOTS
    doc = RobotDocument(load_mechanism(ROBOTS / "carpet_scraper_saha.toml"))
    row = doc.draft.link_names().index("link #4")
    doc.set_text(0, "independent", "crank #1")
    assert doc.robot.assembly.independent == ("crank #1",)
    doc.set_text(row, "name", "main link")
    mech = doc.robot
    assert mech.chains[3].parent == "main link"
    doc.set_text(doc.draft.link_names().index("crank #1"), "name", "crank")
    assert doc.robot.assembly.independent == ("crank",)
    assert doc.robot.loops[0].links[0] == "crank"
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.robot.chains[3].parent == "link #4"
