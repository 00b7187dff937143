"""Issue #20: the humanoid's plots keep their curves as pixmaps, as the PUMA's do.

With 15 joints the humanoid was past CACHED_CURVES_MAX (12): every playback frame
moved the time cursor over plots that drew each of their curves again (about 48 ms a
frame), and playback ran at 7 frames per second where the PUMA's ran at 57
(benchmarks/gui_heartbeat.py playback --model humanoid, same machine and load). At 16
the curves are pixmaps and playback ran at 23; their pixmaps fit in the cache.
"""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView

from armdyn.gui.plots.curves import SampleCurve
from armdyn.gui.plots.plots_panel import PIXMAP_CACHE_KB

from gui_helpers import ROBOTS, flush_events

pytestmark = pytest.mark.gui


def test_the_humanoids_curves_are_cached_and_fit_the_cache(make_window):
    window = make_window(ROBOTS / "humanoid.toml", size=(1600, 1000))
    flush_events()
    curves = [item for view in window.plots.findChildren(QGraphicsView)
              for item in view.scene().items() if isinstance(item, SampleCurve)]
    n = window.document.robot.n
    assert n == 15 and len(curves) >= 3 * n
    assert all(c.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
               for c in curves)
    # a curve's pixmap is at most its plot area: all of them within the pixmap cache
    pixels = sum(c.getViewBox().sceneBoundingRect().width()
                 * c.getViewBox().sceneBoundingRect().height() for c in curves)
    assert 4 * pixels <= 1024 * PIXMAP_CACHE_KB, 4 * pixels / 1024 ** 2
