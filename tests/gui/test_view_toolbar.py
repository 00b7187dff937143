"""The 3D view's toolbar at a laptop's size: Drag Tool in sight at 1280 x 800, and when
the bar is too narrow for its actions, a visible overflow arrow that lists the rest
(Drag Tool vanished at 1280 x 800 with no arrow)."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QToolButton

from gui_helpers import PUMA, flush_events

pytestmark = pytest.mark.gui


def extension(bar) -> QToolButton:
    return next(b for b in bar.findChildren(QToolButton)
                if b.objectName() == "qt_toolbar_ext_button")


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_drag_tool_is_on_the_bar(make_window, size):
    window = make_window(PUMA, size=size)
    flush_events()
    bar = window.view_bar
    button = bar.widgetForAction(window.tool_drag.action)
    assert button.isVisible()
    assert button.geometry().right() <= bar.width()


def test_a_narrow_bar_shows_an_arrow_to_the_actions_it_hides(make_window, qtbot):
    window = make_window(PUMA, size=(1000, 700))
    flush_events()
    bar = window.view_bar
    hidden = [a for a in bar.actions() if a.isVisible() and not a.isSeparator()
              and bar.widgetForAction(a) is not None
              and not bar.widgetForAction(a).isVisible()]
    assert window.tool_drag.action in hidden
    arrow = extension(bar)
    assert arrow.isVisible()
    # room for its icon: the buttons' 8 px padding left a 12 px button blank
    assert arrow.width() >= 16
    image = arrow.grab().toImage()
    dark = sum(1 for x in range(image.width()) for y in range(image.height())
               if image.pixelColor(x, y).lightness() < 120)
    assert dark > 10, "the overflow arrow draws nothing"


def test_every_action_is_on_the_bar_at_1600_by_1000(make_window):
    """'Use as Inverse-Dynamics Target' went to the overflow menu of a 1600 x 1000 window:
    the bar shows its short text, the View menu the whole."""
    window = make_window(PUMA, size=(1600, 1000))
    flush_events()
    bar = window.view_bar
    target = window.tool_drag.target_action
    assert bar.widgetForAction(target).isVisible()
    assert bar.widgetForAction(target).text() == "Use as Target"
    assert not extension(bar).isVisible()
    assert "Inverse-Dynamics" in target.text()
