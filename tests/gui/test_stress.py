"""A randomized stress test: a few hundred mixed user actions on one real window.

Run once on serial robots and once on mechanism files (closed chains: cell edits
that may open a loop, poses that may not close, both free-fall methods).

Garbage and valid cell values, links added / removed / moved, undo / redo, pose
changes, runs started and stopped, saves and reopens, playback; on mechanism files
also the structure: loop cells (points, axes, links, joint types) and chain cells
(names, parents, base placements) typed and pasted, chains and loops added and
removed, the assembly settings, the chain shown in the link tables. The run must end
with no uncaught exception (sys.excepthook and Qt's message handler are watched),
a consistent window (the 3D view, the pose and the tables agree with the
document's robot) and, through the autouse leak fixture, no thread left behind.
"""
from __future__ import annotations

import random
import sys
import traceback

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from armdyn.core import Mechanism, Robot, loop_residual
from armdyn.core.io.model_files import load_model
from armdyn.gui.panels.run_panel import FallMethod

from gui_helpers import PLANAR, PUMA, ROBOTS, SCARA, flush_events

FIVEBAR = ROBOTS / "fivebar_saha.toml"
SCRAPER = ROBOTS / "carpet_scraper_saha.toml"
FOURBAR = ROBOTS / "fourbar.toml"

pytestmark = pytest.mark.gui

ACTIONS = 300
GARBAGE = ["abc", "", "-1", "0", "1e400", "nan", "inf", "-0", "1e-30", "  7 ", "3,5", "1e12",
           "revolute", "prismatic", "90", "-720", "0.25", "2"]
VECTORS = ["0, 0, 0", "0 0 1", "-0.1, 0, 0", "0, 0.05, 0", "1, abc, 0", "0, 0", "0, 0, 0, 0",
           "nan, 0, 0", "0, 0, 1e13", "[0.2; 0; 0]", "0, 0, -1", "5, 0, 0", "1, 1, 0"]
NAMES = ["", "base", "E", "leg 1", "x", "loop 1", "chain 2", "crank #1", "link #4"]


@pytest.mark.parametrize("files", [(PUMA, PLANAR, SCARA), (FIVEBAR, SCRAPER, FOURBAR)],
                         ids=["robots", "mechanisms"])
def test_a_few_hundred_random_actions_leave_a_consistent_window(make_window, monkeypatch,
                                                                 tmp_path, qtbot, files):
    rng = random.Random(20261125)
    uncaught: list[str] = []
    monkeypatch.setattr(sys, "excepthook",
                        lambda *exc: uncaught.append("".join(traceback.format_exception(*exc))))
    shown: list[str] = []
    # never a modal dialog; "Unsaved changes?" -> discard
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or (
        QMessageBox.StandardButton.Discard if box.windowTitle() == "Unsaved changes" else 0))
    window = make_window(files[0])
    saved = tmp_path / "stress.toml"
    runs: list[str] = []
    window.run_panel.started.connect(lambda: runs.append("started"))
    window.run_panel.finished.connect(lambda _t: runs.append("finished"))
    window.run_panel.stopped.connect(lambda _t: runs.append("stopped"))
    sizes: set[int] = set()
    shapes: set[tuple[int, int]] = set()  # (chains, loops) of the mechanisms shown

    def edit_cell() -> None:
        n = window.document.draft.n
        model = rng.choice([window.editor.dh_model, window.editor.inertia_model])
        index = model.index(rng.randrange(n), rng.randrange(model.columnCount()))
        model.setData(index, rng.choice(GARBAGE) if rng.random() < 0.4 else str(rng.uniform(-2, 2)))

    def links() -> None:
        editor = window.editor
        if window.document.draft.n > 1:
            editor.select_row(rng.randrange(window.document.draft.n))
        action = rng.choice([editor.add_action, editor.insert_action, editor.delete_action])
        action.trigger()

    def undo_redo() -> None:
        rng.choice([window.undo_action, window.redo_action]).trigger()

    def pose() -> None:
        robot = window.document.robot
        q = robot.q_home + np.array([rng.uniform(-1, 1) for _ in range(robot.n)])
        window.set_pose(q)

    def run_stop() -> None:
        panel = window.run_panel
        if panel.is_running():
            panel.stop()
            return
        # invalid cells disable runs: take edits back until the tables are valid
        for _ in range(20):
            if panel.isEnabled():
                break
            window.undo_action.trigger()
        if panel.isEnabled():
            # 3000 s: long enough to be still running when a later action stops it
            seconds = rng.choice([0.1, 0.3, 60.0, 3000.0])
            if rng.random() < 0.5:
                panel.start_inverse(seconds)
            else:
                panel.start_free_fall(seconds, rng.choice(list(FallMethod)))

    def save_open() -> None:
        choice = rng.random()
        if choice < 0.4:
            window.files.save_to(saved)
        elif choice < 0.7 and saved.exists():
            window.files.load(saved)
        else:
            window.files.load(rng.choice(files))

    def structure() -> None:
        """A mechanism's chains, loops and assembly settings, as a person edits them."""
        editor, doc = window.editor, window.document
        if not doc.is_mechanism:
            return
        chains, loops = editor.chains, editor.loops
        choice = rng.random()
        if choice < 0.45:
            sheet = rng.choice([chains, loops, loops])
            model = sheet.model
            if not model.rowCount():
                return
            row, col = rng.randrange(model.rowCount()), rng.randrange(model.columnCount())
            index = model.index(row, col)
            kind = doc.draft.column(model.key(col)).kind
            if kind == "vector":
                value = rng.choice(VECTORS)
            elif kind == "choice":
                value = rng.choice(model.choices(index) + ["nowhere"])
            elif kind == "loopjoint":
                value = rng.choice(["revolute", "spherical", "prismatic", "hinge"])
            else:
                value = rng.choice(NAMES)
            if rng.random() < 0.2:  # pasted, maybe over several cells
                sheet.view.setCurrentIndex(index)
                sheet.view.paste("\t".join(rng.choice(VECTORS) for _ in range(2)))
            else:
                model.setData(index, value)
        elif choice < 0.6:
            sheet = rng.choice([chains, loops])
            if sheet.model.rowCount():
                sheet.select(rng.randrange(sheet.model.rowCount()))
            rng.choice([sheet.add_action, sheet.remove_action]).trigger()
        elif choice < 0.75:
            form = loops.assembly
            if rng.random() < 0.5:
                form.tolerance_edit.setText(rng.choice(["1e-10", "1e-8", "0.5", "abc", "0"]))
                form.tolerance_edit.editingFinished.emit()
            else:
                names = doc.draft.link_names()
                form.set_independent(None if rng.random() < 0.4 else
                                     tuple(rng.sample(names, min(len(names), rng.randint(1, 3)))))
        elif choice < 0.9:
            draft = doc.draft
            editor.show_chain(rng.choice([None] + list(range(len(draft.chains)))))
        else:
            editor.reveal_error()

    def playback() -> None:
        bar = window.playback
        rng.choice([bar.toggle, bar.step_forward, bar.step_back,
                    lambda: bar.seek(rng.uniform(0, 5))])()

    actions = [edit_cell] * 5 + [links] * 2 + [undo_redo] * 2 + [pose] * 2 + [run_stop] * 4 \
        + [save_open, playback] + [structure] * 4
    for step in range(ACTIONS):
        rng.choice(actions)()
        sizes.add(window.document.robot.n)
        if isinstance(window.document.robot, Mechanism):
            shapes.add((len(window.document.robot.chains), len(window.document.robot.loops)))
        if step % 10 == 0:
            qtbot.wait(5)  # let queued chunks, timers and renders run
        flush_events()

    if window.run_panel.is_running():
        with qtbot.waitSignal(window.run_panel.stopped, timeout=5000):
            window.run_panel.stop()
    qtbot.waitUntil(lambda: not window.run_panel.is_running(), timeout=10000)
    window.playback.pause()
    flush_events()

    assert not uncaught, uncaught
    # the sequence really exercised the window: runs ended both ways, the arm changed size
    assert runs.count("started") >= 10 and "finished" in runs and "stopped" in runs, runs
    # (a link added to a closed chain usually leaves it underactuated: refused in place)
    assert len(sizes) >= (3 if files[0] != FIVEBAR else 2), sizes
    if files[0] == FIVEBAR:  # chains or loops were added or removed along the way
        assert len(shapes) >= 3, shapes
    robot = window.document.robot
    kind = Mechanism if files[0] == FIVEBAR else Robot
    assert isinstance(robot, kind)
    assert window.pose.shape == (robot.n,)
    assert all(f"joint {k + 1}" in window.view3d.actors for k in range(robot.n))
    assert f"joint {robot.n + 1}" not in window.view3d.actors
    if kind is Mechanism:  # the pose shown is closed, and every loop is drawn
        assert max(abs(loop_residual(robot, window.pose)), default=0.0) < 1e-8
        assert all(f"cut {k + 1} b" in window.view3d.actors for k in range(len(robot.loops)))
    if saved.exists():  # whatever was saved along the way loads again, as its kind
        assert isinstance(load_model(saved), kind)
    # the tables agree with the model downstream; a valid state saves and reopens exactly
    while not window.document.is_valid and window.document.undo_stack.canUndo():
        window.undo_action.trigger()
    assert window.document.is_valid, window.document.errors
    robot = window.document.robot
    assert window.files.save_to(saved)
    assert load_model(saved) == robot
    window.files.load(saved)
    assert window.document.robot == robot
