"""Every shipped model opens in a 1280x800 window: no panel asks for more room."""
from __future__ import annotations

from pathlib import Path

import pytest

from armdyn.core.io.model_files import load_model
from armdyn.gui.model.support import unsupported_reason

ROBOTS = Path(__file__).resolve().parents[2] / "robots"


@pytest.mark.parametrize("path", sorted(ROBOTS.glob("*.toml")), ids=lambda p: p.stem)
def test_the_window_fits_a_small_screen(make_window, path):
    reason = unsupported_reason(load_model(path))
    if reason:  # refused by name (tests/gui/test_floating_refused.py) until it draws them
        pytest.skip(reason)
    window = make_window(path, size=(1280, 800))
    hint = window.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 800, (path.name, hint)
    assert window.width() <= 1280
