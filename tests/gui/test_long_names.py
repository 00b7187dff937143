"""Issue #20: a link name of a megabyte does not freeze the window.

The PUMA with its waist named by 10^6 letters took 26 s to open: the plots laid their
legends out with the whole name (22 s), the run targets elided it at every rebind
(40 ms a row), the pose list and the tables measured it. Labels, legends, lists and
table cells show a name cut to NAME_SHOWN characters (`gui.look.text.shown_name`); the
table's editor keeps it whole, so saving gives the file's name back.
"""
from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsTextItem, QGraphicsView

from armdyn.core.io.model_files import load_model
from armdyn.gui.look.text import NAME_SHOWN, shown_name

from gui_helpers import PUMA, flush_events

pytestmark = pytest.mark.gui

LONG = "w" * 1_000_000


def test_a_name_is_cut_for_showing_only():
    assert shown_name("waist") == "waist"
    assert shown_name("x" * NAME_SHOWN) == "x" * NAME_SHOWN
    cut = shown_name(LONG)
    assert len(cut) == NAME_SHOWN and cut.endswith("\u2026") and LONG.startswith(cut[:-1])


def test_a_megabyte_name_opens_in_seconds_and_is_kept_whole(make_window, tmp_path):
    path = tmp_path / "long_name.toml"
    path.write_text(PUMA.read_text().replace('name = "waist', f'name = "{LONG}', 1))
    window = make_window(PUMA, size=(1280, 800))
    flush_events()
    start = time.perf_counter()
    assert window.files.load(path)
    flush_events()
    seconds = time.perf_counter() - start
    assert seconds < 8.0, seconds  # 26 s before; about 1.3 s here, most of it TOML
    texts = [item.toPlainText() for view in window.findChildren(QGraphicsView)
             for item in view.scene().items() if isinstance(item, QGraphicsTextItem)]
    assert texts and max(len(t) for t in texts) < 20 * NAME_SHOWN  # no legend holds it
    model = window.editor.dh_model
    name = model.index(0, model.column_of("name"))
    assert len(model.data(name, Qt.ItemDataRole.DisplayRole)) == NAME_SHOWN
    assert model.data(name, Qt.ItemDataRole.EditRole) == LONG
    saved = tmp_path / "saved.toml"
    assert window.files.save_to(saved)
    assert load_model(saved).link_names[0] == LONG
