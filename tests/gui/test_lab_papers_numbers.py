"""The papers' numbers in the Lab's Complexity tab (gui/panels/complexity_panel.py): the
three columns (the paper's table, the paper's formulation counted here, ArmDyn's kernels
counted), the notes on where they differ, Table 2's crossover entries and the
five-bar's reconstructed base length; the link-frame RFDSIM on the operations plot."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QTextDocument

from armdyn.core.lab.complexity import count_comparison, count_notes, table2_note
from armdyn.core.lab.reconstructions import fivebar_note
from armdyn.gui.panels.complexity_panel import PAPER_N
from gui_helpers import flush_events

pytestmark = pytest.mark.gui


def _complexity(qtbot, make_window, size):
    window = make_window(size=size)
    window.lab_action.trigger()
    flush_events()
    lab = window.lab
    qtbot.waitUntil(lambda: lab.isVisible(), timeout=2000)
    titles = [lab.tabs.tabText(i) for i in range(lab.tabs.count())]
    lab.tabs.setCurrentIndex(titles.index("Complexity"))
    flush_events()
    return lab.complexity


@pytest.mark.parametrize("size", [(1500, 950), (1280, 800)])
def test_three_columns_and_the_notes(qtbot, make_window, size):
    panel = _complexity(qtbot, make_window, size)
    papers = panel.papers
    assert papers.isVisible()
    table = papers.table
    assert (table.rowCount(), table.columnCount()) == (2, 3)
    # the paper's tables as printed (seed 000 Tables 1 and 2, n = 6)
    assert PAPER_N == 6
    assert table.item(0, 0).text().splitlines() == ["676 M, 527 A", "120n - 44 M", "97n - 55 A"]
    assert table.item(1, 0).text().splitlines()[0] == "871 M, 797 A"
    # the two counted columns are core's counts
    for r, c in enumerate(count_comparison(PAPER_N)):
        for col, count in enumerate((c.table, c.formulation, c.kernels)):
            assert table.item(r, col).text().splitlines()[0] == count.values()
    # the whole table is in sight across the pane: nothing cut at the right
    area = panel.splitter.widget(1)
    assert table.width() <= area.viewport().width()
    doc = QTextDocument()
    doc.setHtml(papers.notes.text())
    text = " ".join(doc.toPlainText().split())
    for note in (*count_notes(*papers.comparison), table2_note(), fivebar_note()):
        assert note in text
    for fact in ("1.05 s", "1.42 s", "about 1.4 s", "Valasek n+ 15 (its formulas: 16)",
                 "Per-call kinematics"):
        assert fact in text


def test_the_link_frame_rfdsim_is_counted_in_the_sweep(qtbot, make_window):
    panel = _complexity(qtbot, make_window, (1500, 950))
    with qtbot.waitSignal(panel.sweep_done, timeout=60000) as done:
        panel.start([2, 5, 9], budget_s=0.004)
    sweep = done.args[0]
    curve = panel.curves["count_paper"]
    np.testing.assert_array_equal(curve.xData, [2, 5, 9])
    np.testing.assert_array_equal(curve.yData, sweep.counts("paper", "M"))
    assert "the paper's RFDSIM in link frames" in panel.summary.text()
