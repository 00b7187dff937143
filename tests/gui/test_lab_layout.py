"""The Lab at a laptop's size, on real widgets: the recursion table shows every column
of a 6x6 M̂_i and every quantity's meaning; the Inertia tab explains boxes much longer
than their links instead of saying "No suspicious values" beside them."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt

from armdyn.core.io.model_files import load_model
from armdyn.core.lab.model_checks import (LARGE_SHAPE_MEANING, check_model, equivalent_box,
                                          large_shapes)
from armdyn.core.lab.walkthrough import UDU
from armdyn.gui.panels.lab_panel import quantity_row

from gui_helpers import PUMA, ROBOTS, flush_events

pytestmark = pytest.mark.gui


def open_lab(qtbot, make_window, path=PUMA, size=(1280, 800)):
    window = make_window(path, size=size)
    window.lab_action.trigger()
    flush_events()
    lab = window.lab
    qtbot.waitUntil(lambda: lab.isVisible(), timeout=2000)
    lab.flush()
    return window, lab


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_the_recursion_table_shows_all_of_a_6x6_matrix_and_every_meaning(qtbot, make_window,
                                                                         size):
    """At 1280 x 800 the 'meaning' column was a few pixels wide and M̂_2 showed 3 of its 6
    columns: each quantity's meaning now takes the row below it, across the table, and
    the value column is as wide as the widest matrix row, with no horizontal scroll."""
    window, lab = open_lab(qtbot, make_window, size=size)
    lab.set_algorithm(UDU)
    steps = lab.steps()
    k = next(i for i, s in enumerate(steps) if s.link == 1 and s.phase.startswith("articulated"))
    lab.go_to(k)
    flush_events()
    table = lab.numbers
    step = lab.current_step()
    symbols = [q.symbol for q in step.quantities]
    matrix = next(i for i, q in enumerate(step.quantities) if np.ndim(q.value) == 2)
    row = quantity_row(matrix)
    text = table.item(row, 2).text()
    lines = text.splitlines()
    assert len(lines) == 6 and all(len(line.split()) == 6 for line in lines)
    needed = max(table.fontMetrics().horizontalAdvance(line) for line in lines)
    assert table.columnWidth(2) >= needed  # (an approximation of the mono font's advance)
    assert table.horizontalScrollBar().maximum() == 0, "the table scrolls sideways"
    assert table.horizontalHeader().length() <= table.viewport().width()
    for i, quantity in enumerate(step.quantities):
        meaning = table.item(quantity_row(i) + 1, 0)
        assert meaning.text().startswith(quantity.meaning)
        assert table.columnSpan(quantity_row(i) + 1, 0) == table.columnCount()
    assert symbols[matrix].startswith("M")


def test_large_boxes_are_listed_with_their_meaning():
    puma = load_model(PUMA)
    notes = large_shapes(puma)
    assert [n.link for n in notes] == list(range(6))  # every link of Saha's PUMA
    for note in notes:
        link = puma.links[note.link]
        assert note.longest == pytest.approx(equivalent_box(link.mass, link.inertia_matrix)
                                             .sizes.max())
        assert note.longest > 2.5 * note.size
    # links of plausible solids: none (UR's tensors, uniform rods, the humanoid's boxes,
    # the Stanford boom, which slides: as long as its stroke)
    for name in ("ur5e", "ur10e", "fourbar", "humanoid", "stanford_saha2009", "scara"):
        assert large_shapes(load_model(ROBOTS / f"{name}.toml")) == [], name
    # a moment typed a hundred times too large on a plausible arm: noted, on its cell
    ur5e = load_model(ROBOTS / "ur5e.toml")
    links = list(ur5e.links)
    inertia = np.asarray(links[2].inertia, dtype=float)
    links[2] = replace(links[2], inertia=tuple(100.0 * inertia))
    typo = ur5e.with_links(links)
    assert [n.link for n in large_shapes(typo)] == [2]
    assert large_shapes(typo)[0].cell in ("ixx", "iyy", "izz")


def test_the_inertia_tab_explains_the_pumas_large_boxes(qtbot, make_window):
    """The PUMA's boxes are 1.2-2.5 m long on 0.15-0.6 m links: beside them the panel
    said only "No suspicious values". It says why they are so large, lists the links,
    and a click selects the link's inertia cell and highlights it."""
    window, lab = open_lab(qtbot, make_window)
    lab.tabs.setCurrentIndex(2)
    assert check_model(window.document.robot) == [] and lab.warnings == []
    text = lab.warnings_label.text()
    assert text.startswith("No suspicious values") and LARGE_SHAPE_MEANING in text
    assert "6 boxes" in text
    assert lab.warnings_list.count() == 6
    assert "box 2.46 m long" in lab.warnings_list.item(1).text()
    item = lab.warnings_list.item(1)
    qtbot.mouseClick(lab.warnings_list.viewport(), Qt.MouseButton.LeftButton,
                     pos=lab.warnings_list.visualItemRect(item).center())
    editor = window.editor
    view = editor.inertia_view
    assert editor.tabs.currentWidget() is view
    assert view.currentIndex().row() == 1
    assert editor.inertia_model.column_of(lab.shape_notes[1].cell) == view.currentIndex().column()
    assert lab.overlay.highlighted == 1
    # the hint under the shape buttons no longer says a large box is a wrong tensor
    assert "can also be right" in lab.shape_hint.text()


def test_the_inertia_tab_of_a_plausible_arm_says_nothing_more(qtbot, make_window):
    window, lab = open_lab(qtbot, make_window, ROBOTS / "ur5e.toml")
    lab.tabs.setCurrentIndex(2)
    assert lab.warnings_label.text() == "No suspicious values in this model."
    assert lab.warnings_list.count() == 0


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_the_power_and_complexity_legends_are_beside_the_curves(qtbot, make_window, size):
    """The Lab's Power and Complexity plots drew pyqtgraph's floating legends, light grey
    text inside the plot area under the curves: each legend now sits in its plot's layout
    below the plot area, in black on white, and the axes are the Results plots' black."""
    from armdyn.gui.plots.plots_panel import SideLegend

    window, lab = open_lab(qtbot, make_window, size=size)
    with qtbot.waitSignal(window.session.run_ended, timeout=60000):
        window.run_panel.start_free_fall(1.0)
    lab.tabs.setCurrentIndex(4)
    flush_events()
    power = lab.power
    items = [(power.rate_plot, power.legend)]
    for plot in (lab.complexity.time_plot, lab.complexity.ops_plot):
        items.append((plot, plot.legend))
    for plot, legend in items:
        assert isinstance(legend, SideLegend)
        assert pg.mkColor(legend.opts["labelTextColor"]).name() == "#000000"
        area = plot.vb.sceneBoundingRect()
        box = legend.sceneBoundingRect().adjusted(1, 1, -1, -1)  # (its frame may touch)
        assert not box.intersects(area), "the legend lies over the plot area"
        assert len(legend.items) >= 2
        assert plot.getAxis("left").textPen().color().name() == "#000000"
    # the two power plots' areas line up under each other
    assert power.rate_plot.vb.sceneBoundingRect().left() == \
        power.residual_plot.vb.sceneBoundingRect().left()


def test_the_humanoids_bodies_give_way_to_the_labs_inertia_shapes(qtbot, make_window):
    """The humanoid's bodies are its links' inertia boxes: shown with the Lab's boxes, the
    coinciding faces flickered. The bodies hide while the shapes are shown."""
    window, lab = open_lab(qtbot, make_window, ROBOTS / "humanoid.toml")
    lab.tabs.setCurrentIndex(2)
    flush_events()
    bodies = [a for name, a in window.view3d.actors.items() if name.startswith("body ")]
    assert bodies and lab.shape_kind() == "box"
    assert not any(a.GetVisibility() for a in bodies)
    lab.set_shapes(None)
    flush_events()
    assert all(a.GetVisibility() for a in bodies)


def test_the_power_plots_span_the_run_and_label_both_ends(qtbot):
    """The time axis is the run's [0, T] (auto-ranging padded a 2 s run to 2.06 s and
    left t = 0 unlabelled), its last label inside the widget."""
    from armdyn.core import load_robot, simulate
    from armdyn.gui.panels.power_panel import PowerPanel

    panel = PowerPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 400)
    panel.show()
    qtbot.waitExposed(panel)
    run = simulate(load_robot(PUMA), 0.5, dt_out=0.01)
    panel.append(run)
    panel._refresh()
    flush_events()  # the axes' widths aligned, the linked range with them
    x0, x1 = panel.residual_plot.viewRange()[0]  # the plot that labels the times
    assert (x0, x1) == pytest.approx((0.0, 0.5), abs=1e-12)
    assert panel.rate_plot.viewRange()[0] == pytest.approx([0.0, 0.5], abs=1e-12)
    panel.rate_plot.setXRange(0.1, 0.3, padding=0.0)  # a zoom in one zooms the other
    assert panel.residual_plot.viewRange()[0] == pytest.approx([0.1, 0.3], abs=1e-12)
    panel.rate_plot.setXRange(0.0, 0.5, padding=0.0)
    flush_events()
    axis = panel.residual_plot.getAxis("bottom")
    ticks = [v for _spacing, values in axis.tickValues(x0, x1, axis.width()) for v in values]
    assert axis.tickStrings(sorted(ticks), 1.0, 0.1)[0] == "0"
    assert axis.tickStrings(sorted(ticks), 1.0, 0.1)[-1] == "0.5"
    # the label of t = T is centred on the axis's end (its bounding rectangle reaches
    # END_LABEL_OVERHANG beyond, for that label): it lies inside the widget
    from PySide6.QtGui import QFontMetrics
    from armdyn.gui.plots.plots_panel import END_LABEL_OVERHANG

    end = axis.mapRectToScene(axis.boundingRect()).right() - END_LABEL_OVERHANG
    half = QFontMetrics(axis.style.get("tickFont") or panel.font()).horizontalAdvance("0.5") / 2
    assert end + half <= panel.graphics.width()
