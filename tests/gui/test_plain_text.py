"""Issue #20: text from a model file (names of the model, chains, links, loops; file
paths) is shown as plain text everywhere, never rendered as HTML.

A mechanism whose every name is HTML (a heading, an image of a local file, an external
link) is opened in the window with every dock shown, run, and made to fail; then every
label, tooltip, message box and plot text item is read as the user sees it. A name is
shown as plain text when each of its marker words ("qqA") appears with its tags around
it ("<h1>qqA</h1>"), and a rich-text widget holds no tag of the file at all.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (QAbstractButton, QApplication, QGraphicsTextItem,
                               QGraphicsView, QLabel, QMessageBox, QWidget)

from gui_helpers import ROBOTS, flush_events

pytestmark = pytest.mark.gui

#: each marker word of a name, wrapped in a heading; a link and an image added too
IMAGE = '<img src="/tmp/armdyn-no-such-image.png">'
LINK = '<a href="http://example.com/">click</a>'
NAMES = {"model": f"<h1>qqM</h1>{IMAGE}", "crank side": "<h1>qqS</h1>",
         "rocker side": "<h1>qqR</h1>", "crank": "<h1>qqA</h1>",
         "coupler": "<h1>qqB</h1>", "rocker": "<h1>qqC</h1>",
         "C": f"<h1>qqL</h1>{LINK}"}
MARKER = re.compile(r"qq[A-Z]")


def html_fourbar(tmp_path: Path, *, broken: bool = False) -> Path:
    """The bundled four-bar with every name replaced by HTML (`NAMES`); `broken`: the
    coupler's mass is negative (the file is refused, naming the link)."""
    text = (ROBOTS / "fourbar.toml").read_text(encoding="utf-8")
    text = text.replace('name = "Four-bar crank-rocker (uniform rods)"',
                        f"name = '{NAMES['model']}'")
    for old in ("crank side", "rocker side", "crank", "coupler", "rocker", "C"):
        text = text.replace(f'name = "{old}"', f"name = '{NAMES[old]}'")
    text = text.replace('links = ["coupler", "rocker"]',
                        f"links = ['{NAMES['coupler']}', '{NAMES['rocker']}']")
    if broken:
        text = text.replace("mass = 2.0", "mass = -2.0")
    folder = tmp_path / "<h1>qqF</h1>"  # the path shows in titles and messages too
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ("broken.toml" if broken else "html.toml")
    path.write_text(text, encoding="utf-8")
    return path


def _rendered(text: str, rich: bool) -> str:
    if not rich:
        return text
    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def _label_is_rich(label: QLabel) -> bool:
    fmt = label.textFormat()
    return fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText
                                             and Qt.mightBeRichText(label.text()))


def problems_in(text: str, rich: bool, where: str) -> list[str]:
    """What shows a name of the file as HTML in `text` (shown as rich text or not)."""
    if not MARKER.search(text):
        return []
    shown = _rendered(text, rich)
    bad = [m.group(0) for m in MARKER.finditer(shown)
           if not shown[:m.start()].endswith("<h1>")]
    return [f"{where}: {shown[:120]!r} shows {sorted(set(bad))} without their tags"] if bad \
        else []


def html_problems(widgets) -> list[str]:
    """Every label, button, tooltip and plot text under `widgets` that renders a name."""
    found = []
    for top in widgets:
        for w in [top, *top.findChildren(QWidget)]:
            name = f"{type(w).__name__}({w.objectName()!r})"
            if isinstance(w, QLabel):
                found += problems_in(w.text(), _label_is_rich(w), name)
            elif isinstance(w, QAbstractButton):
                found += problems_in(w.text(), False, name)
            tip = w.toolTip()
            found += problems_in(tip, Qt.mightBeRichText(tip), f"tooltip of {name}")
            if isinstance(w, QGraphicsView) and w.scene() is not None:
                for item in w.scene().items():
                    if isinstance(item, QGraphicsTextItem):
                        found += problems_in(item.toPlainText(), False, f"plot text in {name}")
    return found


@pytest.fixture
def boxes(monkeypatch):
    """Message boxes shown (modal or not): their texts as rendered, and no wait."""
    shown: list[QMessageBox] = []
    texts: list[str] = []

    def record(box: QMessageBox) -> None:
        label_rich = box.textFormat() == Qt.TextFormat.RichText or (
            box.textFormat() == Qt.TextFormat.AutoText and Qt.mightBeRichText(box.text()))
        texts.extend(problems_in(box.text(), label_rich, f"message box {box.windowTitle()!r}"))
        texts.extend(problems_in(box.informativeText(), Qt.mightBeRichText(
            box.informativeText()), f"message box {box.windowTitle()!r}"))
        shown.append(box)

    monkeypatch.setattr(QMessageBox, "exec", lambda box: (record(box), 0)[1])
    original_show = QMessageBox.show
    monkeypatch.setattr(QMessageBox, "show", lambda box: (record(box), original_show(box)))
    return shown, texts


def test_every_name_in_the_window_is_plain_text(make_window, qtbot, tmp_path, boxes):
    window = make_window(html_fourbar(tmp_path), size=(1600, 1000))
    window.lab_action.trigger()          # the Lab dock, built on first show
    window.compare_dock.show()
    window._compare.show()
    flush_events()
    window.run_panel.start_free_fall(0.2)
    qtbot.waitUntil(lambda: not window.run_panel.is_running(), timeout=60000)
    window.run_panel.start_inverse(0.2)
    qtbot.waitUntil(lambda: not window.run_panel.is_running(), timeout=60000)
    flush_events()
    found = html_problems([window])
    # core's messages name the loop and the link: a URDF cannot hold a loop, and a bad
    # file is refused
    window.files.save_to(tmp_path / "out.urdf")
    window.files.load(html_fourbar(tmp_path, broken=True))
    window.document.undo_stack.setClean()
    shown, texts = boxes
    assert len(shown) >= 2
    found += texts
    found += html_problems([w for w in QApplication.topLevelWidgets() if w.isVisible()
                            and w is not window])
    assert not found, "\n".join(found)


def test_the_unsaved_question_names_the_model_as_plain_text(make_window, tmp_path):
    window = make_window(html_fourbar(tmp_path))
    seen = []

    def answer() -> None:  # the modal box, however it was opened
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, answer)
            return
        rich = box.textFormat() == Qt.TextFormat.RichText or (
            box.textFormat() == Qt.TextFormat.AutoText and Qt.mightBeRichText(box.text()))
        seen.append((box.text(), problems_in(box.text(), rich, "unsaved question")))
        box.button(QMessageBox.StandardButton.Cancel).click()

    QTimer.singleShot(20, answer)
    assert window.files.ask_unsaved() == QMessageBox.StandardButton.Cancel
    assert seen and "qqM" in seen[0][0]
    assert seen[0][1] == []
