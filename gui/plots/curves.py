"""A plot curve for long series of samples, drawn at about two points per pixel column.

`SampleCurve` is what the plots panel draws each joint's angle, rate or torque with.
A 600 s run holds 60,001 samples per curve and a plot is about 1,000 pixels wide, so
each curve draws, for every run of ``ds`` consecutive samples that fall in one pixel
column, only their largest and smallest value ("peak" downsampling: no spike is lost
and the curve looks the same). ``ds`` follows the view's time span and width.

pyqtgraph's ``PlotDataItem`` can do the same (``setDownsampling(auto=True,
method="peak")``), but it is a container of two items, a line and a scatter plot, with
many options: one costs about 1.5 ms to make and add to a view, and a 200-link robot's
plots hold 600 curves (issue #8). This is one ``PlotCurveItem`` and a few lines of
NumPy.

The points drawn start at the first sample and end at the last, and keep every bin's
extremes, so the curve's bounds are the (finite) samples' bounds whatever ``ds`` is: an
auto-ranging view cannot chase its own downsampling. Points farther than
DYNAMIC_RANGE_LIMIT view heights from the view are drawn at that distance, as
``PlotDataItem`` does: Qt draws wrong lines through coordinates far off the screen.

A repaint of part of the plot (the time cursor moving over it during playback) draws
only the points within the repainted strip: pyqtgraph's curve strokes all its points
whatever Qt asks to repaint, and the human's 39 angle curves took ~30 ms a frame for a
cursor 2 px wide (issue #23).

While a run streams in, its views' ranges stay put (the plots panel fixes them and says
so, `set_streaming`), so a refresh that only adds samples repaints only the strip of the
view they fall in: the curve's bounding rectangle is pinned to the view's range (`boundingRect`), the new
points replace the old without pyqtgraph's geometry change (which repainted the whole
curve), and the strip from the last unchanged point to the new end is repainted. The
humanoid's ~50 curves were stroked whole 30 times a second during its fall (Qt's
``drawLines``: about 12 of the GUI thread's 22 s in the 600 s fall, issue #20).
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

__all__ = ["SampleCurve", "StripView", "peak_downsample", "DYNAMIC_RANGE_LIMIT"]

#: Points are drawn at most this many view heights above or below the view's middle.
DYNAMIC_RANGE_LIMIT = 1e6


def peak_downsample(t: np.ndarray, y: np.ndarray, ds: int, *,
                    known: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The samples (t, y), shape (S,) each, in bins of `ds` consecutive samples, each bin
    drawn as two points: (its first time, its largest y) and (its last time, its
    smallest y). The last bin may be shorter; a `ds` over S makes one bin. Returns (x, y)
    of the points, shape (2 * bins,); for ds <= 1 or S <= 2, the samples as they are.

    known: the points of the same `ds` for the first samples of these (a run's samples
    so far, before more came): their whole bins are kept, only the bins after them are
    computed (a streamed 600 s run binned 60,000 samples a curve at every refresh)."""
    size = len(t)
    if ds <= 1 or size <= 2:
        return t, y
    ds = min(ds, size)
    full = size // ds  # whole bins; the rest, if any, makes one more
    bins = full + (size > full * ds)
    x_out = np.empty((bins, 2))
    y_out = np.empty((bins, 2))
    done = 0  # whole bins taken from `known`
    if known is not None and len(known[0]) >= 2:
        # every bin of `known` but its last is whole (its last may have been partial)
        done = min(len(known[0]) // 2 - 1, full)
        x_out[:done] = known[0][:2 * done].reshape(done, 2)
        y_out[:done] = known[1][:2 * done].reshape(done, 2)
    whole = y[done * ds:full * ds].reshape(full - done, ds)
    x_out[done:full, 0] = t[done * ds:full * ds:ds]
    x_out[done:full, 1] = t[done * ds + ds - 1:full * ds:ds]
    y_out[done:full, 0] = whole.max(axis=1)
    y_out[done:full, 1] = whole.min(axis=1)
    if bins > full:
        rest = y[full * ds:]
        x_out[full] = t[full * ds], t[-1]
        y_out[full] = rest.max(), rest.min()
    return x_out.reshape(-1), y_out.reshape(-1)


def _starts_at(a: np.ndarray, b: np.ndarray) -> bool:
    """True if 1-D view `a` starts at the same memory as `b`, with the same stride."""
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.strides == b.strides)


class SampleCurve(pg.PlotCurveItem):
    """Samples (t, y) drawn downsampled to the screen (`peak_downsample`), redrawn when
    the samples change or the view's time span or width changes the bin size.

    pen          : the line
    log_y        : draw log10(y) (a log axis reads its view in decades); y must be > 0
    pixel_factor : bins per pixel column (pyqtgraph's autoDownsampleFactor); 1: one bin,
                   two points, per column
    """

    def __init__(self, pen: QPen, *, log_y: bool = False, pixel_factor: float = 1.0) -> None:
        super().__init__(pen=pen, skipFiniteCheck=True)
        self._log_y = log_y
        self._pixel_factor = pixel_factor
        self._t = np.zeros(0)
        self._y = np.zeros(0)  # as drawn (log10 for a log axis)
        self._given_y = self._y
        self._ds = 0  # the bin size of the points drawn, 0: nothing drawn yet
        self._points = (np.zeros(0), np.zeros(0))  # the binned (x, y), before clipping
        self._y_span = (0.0, 0.0)  # their finite y extremes
        self._y_finite = False  # ... if they have any
        self._clip: tuple[float, float] | None = None  # the y limits drawn, None: none
        #: points stroked by the last paint (a part of the curve, or all of it)
        self.points_painted = 0
        #: the view's range when the points were last given whole, in view coordinates,
        #: while the view does not auto-range: the bounding rectangle holds it, so the
        #: points may grow within it by repainting a strip (`_extend_points`); None: not
        #: pinned (the bounding rectangle is the points')
        self._pin: QRectF | None = None
        #: how many updates of the points repainted only a strip (`_extend_points`)
        self.strip_updates = 0
        self._streaming = False  # `set_streaming`
        # Qt tells `paint` which part of the item is exposed (`_exposed_points`)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def set_samples(self, t: np.ndarray, y: np.ndarray) -> None:
        """Draw these samples: times t (s, increasing) and values y, shape (S,) each.
        The arrays are kept, not copied (views into a growing buffer are fine).

        Samples that extend the last ones in place (views from the start of the same
        buffers, longer, as a streamed run's are) are binned from where those ended:
        the buffers only ever grow, what they held stays."""
        extends = (not self._log_y and self._ds > 1 and len(t) >= len(self._t) > 2
                   and t.base is not None and t.base is self._t.base
                   and y.base is not None and y.base is self._given_y.base
                   and _starts_at(t, self._t) and _starts_at(y, self._given_y))
        self._t, self._given_y = t, y
        self._y = np.log10(y) if self._log_y else y
        self._draw(self._bin_size(), extends)

    def set_streaming(self, on: bool) -> None:
        """A run streams into this curve's view (True), whose ranges stay put while it
        does: refreshes that only add samples repaint only their strip (`_extend_points`).
        False (the run ended): the bounding rectangle is the points' again."""
        self._streaming = bool(on)
        if not on and self._pin is not None:
            self.prepareGeometryChange()
            self._pin = None
            self.invalidateBounds()

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """The samples last given to `set_samples` (t, y), as given."""
        return self._t, self._given_y

    def bin_size(self) -> int:
        """Samples per bin of the points drawn (1: every sample drawn; more than the
        number of samples: one bin)."""
        return max(self._ds, 1)

    def viewRangeChanged(self, *_args) -> None:  # noqa: N802 - pyqtgraph: a new range
        self._unpin()
        self._follow_view()

    def viewTransformChanged(self, *_args) -> None:  # noqa: N802 - pyqtgraph: resized too
        self._unpin()
        super().viewTransformChanged()
        self._follow_view()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        """pyqtgraph's rectangle of the points, and the pinned view range if any (it
        changes only with a geometry change, as Qt requires)."""
        rect = super().boundingRect()
        return rect if self._pin is None else rect.united(self._pin)

    def _unpin(self) -> None:
        """Let go of the pinned view range if the view's range is another now."""
        view = self.getViewBox()
        if self._pin is not None and (view is None or QRectF(view.viewRect()) != self._pin):
            self.prepareGeometryChange()
            self._pin = None
            self.invalidateBounds()

    def _follow_view(self) -> None:
        """Redraw if the view's span or width changed the bin size, or its y range the
        clipping."""
        if not len(self._t):
            return
        ds = self._bin_size()
        if ds != self._ds:
            self._draw(ds)
        elif self._clip_limits() != self._clip:
            self._show_points()

    def _bin_size(self) -> int:
        """Samples per pixel column at the view's time span and width (at least 1)."""
        t = self._t
        view = self.getViewBox()
        if view is None or len(t) < 2:
            return 1
        dt = (float(t[-1]) - float(t[0])) / (len(t) - 1)  # mean sample spacing, s
        lo, hi = view.viewRange()[0]
        columns = view.width() * self._pixel_factor
        if not dt > 0.0 or not columns > 0.0:
            return 1
        per_column = (hi - lo) / dt / columns
        if not math.isfinite(per_column):  # zoomed out to pyqtgraph's limits: one bin
            return len(t)
        return max(1, int(per_column))

    def _clip_limits(self) -> tuple[float, float] | None:
        """The y limits to draw the points within at the view's y range, None if every
        point lies within DYNAMIC_RANGE_LIMIT view heights of its middle."""
        view = self.getViewBox()
        if view is None:
            return None
        lo, hi = view.viewRange()[1]
        middle, reach = 0.5 * (lo + hi), DYNAMIC_RANGE_LIMIT * max(hi - lo, 1e-300)
        low, high = middle - reach, middle + reach
        if low <= self._y_span[0] and self._y_span[1] <= high:
            return None
        return low, high

    def _draw(self, ds: int, extends: bool = False) -> None:
        """Bin the samples by `ds` and show the points; `extends`: the samples extend
        those binned last (`set_samples`), whose whole bins are kept if `ds` is theirs."""
        known = self._points if extends and ds == self._ds else None
        self._ds = ds
        x, y = self._points = peak_downsample(self._t, self._y, ds, known=known)
        finite = y[np.isfinite(y)]
        self._y_span = ((float(finite.min()), float(finite.max())) if finite.size
                        else (0.0, 0.0))
        self._y_finite = bool(finite.size)
        # every whole bin of `known` but its last was kept: the points up to the
        # third-last known one are unchanged, the segments after it may not be
        if not (known is not None and len(known[0]) >= 4 and self._extend_points(
                float(known[0][-3]))):
            self._show_points()

    def _extend_points(self, since: float) -> bool:
        """Give the binned points to the line and repaint only the strip from time
        `since` (s) to their end, if nothing before `since` changed (the caller knows)
        and the points lie within the pinned view range unclipped. True if done."""
        x, y = self._points
        pin = self._pin
        if (pin is None or self._clip is not None or self.xData is None
                or self._clip_limits() is not None
                or not (pin.left() <= since and x[-1] <= pin.right()
                        and pin.top() <= self._y_span[0] and self._y_span[1] <= pin.bottom())):
            return False
        # pyqtgraph's setData without its geometry change and whole repaint
        self.xData, self.yData = x, y
        self.path = None
        self.fillPath = None
        self._fillPathList = None
        self._mouseShape = None
        self._lineSegmentsRendered = False
        self._boundsCache = [None, None]
        self.informViewBoundsChanged()  # (the view's cached bounds of its items)
        pixel = self.pixelWidth()
        margin = (self.opts["pen"].widthF() + 2.0) * pixel if pixel > 0 else 0.0
        self.update(QRectF(since - margin, pin.top(), float(x[-1]) - since + 2 * margin,
                           pin.height()))
        self.strip_updates += 1
        return True

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):  # noqa: N803
        """The drawn points' (min, max) along axis `ax` (0: time, 1: y), known from the
        binning (the first and last time; the y extremes, clipped as drawn) instead of
        pyqtgraph's scan of every point at each change (its min and max, ~40 us a curve
        per refresh, 5 s of the humanoid's 600 s fall; issue #20). Other requests (a
        share of the data, a range of the other axis) go to pyqtgraph."""
        x = self.xData
        pen = self.opts["pen"]
        if (frac < 1.0 or orthoRange is not None or x is None or not len(x)
                or not self._y_finite or self.opts["fillLevel"] is not None
                or (pen is not None and not pen.isCosmetic())):
            return super().dataBounds(ax, frac, orthoRange)
        if ax == 0:
            return float(x[0]), float(x[-1])
        lo, hi = self._y_span
        if self._clip is not None:
            lo, hi = (float(np.clip(v, *self._clip)) for v in (lo, hi))
        return lo, hi

    def paint(self, p: QPainter, opt, widget) -> None:
        """Stroke the points within the exposed strips only (all of them when they are
        most of the curve, or for an export)."""
        parts = self._exposed_points(opt, widget)
        if parts is None:
            self.points_painted = 0 if self.xData is None else len(self.xData)
            super().paint(p, opt, widget)
            return
        self.points_painted = sum(len(x) for x, _y in parts)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, bool(self.opts["antialias"]))
        p.setPen(self.opts["pen"])
        for x, y in parts:
            if len(x) >= 2:
                p.drawPath(pg.arrayToQPath(x, y))

    def _exposed_points(self, opt, widget=None
                        ) -> list[tuple[np.ndarray, np.ndarray]] | None:
        """The drawn points (x, y) whose segments may touch the exposed area (widened by
        the pen's width), one part per exposed strip, or None if that is most of the
        curve. The area is `opt`'s exposed rectangle, cut to the rectangles the view
        repaints when it is a `StripView` (`widget` is its viewport): Qt gives an item
        the bounding rectangle of everything to repaint, and two plots side by side whose
        time cursors move expose a rectangle from one cursor to the other (the human's 39
        angle curves were stroked whole at every playback frame, issue #23)."""
        x, y = self.xData, self.yData
        if (x is None or len(x) < 8 or self._exportOpts is not False
                or self.opts["fillLevel"] is not None):
            return None
        rect = opt.exposedRect
        pixel = self.pixelWidth()
        margin = (self.opts["pen"].widthF() + 2.0) * pixel if pixel > 0 else 0.0
        strips = [(rect.left(), rect.right())]
        view = widget.parent() if widget is not None else None
        region = getattr(view, "exposed_region", None)
        # (a cached curve paints its pixmap's stale area, which the view's region need
        # not cover)
        if region is not None and self.cacheMode() == QGraphicsItem.CacheMode.NoCache:
            cut = [self.mapRectFromScene(view.mapToScene(r).boundingRect()).intersected(rect)
                   for r in region]
            strips = sorted((r.left(), r.right()) for r in cut if r.width() > 0)
        spans: list[list[int]] = []
        for left, right in strips:
            i0 = max(int(np.searchsorted(x, left - margin)) - 1, 0)
            i1 = min(int(np.searchsorted(x, right + margin, side="right")) + 1, len(x))
            if spans and i0 <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], i1)
            elif i1 > i0:
                spans.append([i0, i1])
        if sum(i1 - i0 for i0, i1 in spans) > len(x) // 2:
            return None
        return [(x[i0:i1], y[i0:i1]) for i0, i1 in spans]

    def _show_points(self) -> None:
        """Give the binned points to the line, clipped to `_clip_limits`; pin the view's
        range while a run streams in and it does not auto-range (`_extend_points`)."""
        x, y = self._points
        self._clip = self._clip_limits()
        view = self.getViewBox()
        pin = (QRectF(view.viewRect()) if self._streaming and view is not None
               and not any(view.autoRangeEnabled()) else None)
        if pin != self._pin:
            self.prepareGeometryChange()
            self._pin = pin
        self.setData(x, y if self._clip is None else np.clip(y, *self._clip))


class StripView(pg.GraphicsLayoutWidget):
    """A GraphicsLayoutWidget that keeps the rectangles each paint repaints
    (`exposed_region`, viewport pixels; None outside a paint), so that its SampleCurves
    stroke only their points in those strips (`SampleCurve._exposed_points`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.exposed_region: list | None = None

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.exposed_region = list(event.region())
        try:
            super().paintEvent(event)
        finally:
            self.exposed_region = None
