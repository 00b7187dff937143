"""Numbers as the tables show them and read them back. Qt-free.

The tables show SI units, except angles, which they show in degrees. Degrees
are converted by the core's one rule (`armdyn.core.model.units`: the double nearest
``deg * pi / 180``, computed from the decimal text with 60 digits), so typing "45" in
a cell and saving writes ``45.0`` to the file, never ``45.00000000000001``; what this
module adds is reading what people type.
"""
from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from armdyn.core.model import units

__all__ = ["parse_number", "deg_text_to_rad", "rad_to_deg_text", "float_text", "display_text"]

#: Characters people type or paste for a minus sign.
_MINUS_SIGNS = ("\u2212", "\u2013", "\u2012")


def _normalise(text: str) -> str:
    """Strip blanks and accept a unicode minus and a lone decimal comma ("1,5")."""
    s = text.strip()
    for m in _MINUS_SIGNS:
        s = s.replace(m, "-")
    if s.count(",") == 1 and "." not in s:
        s = s.replace(",", ".")
    if "_" in s:  # Python reads "1_000"; a table cell should not
        raise ValueError(f"not a number: {text!r}")
    return s


def parse_number(text: str) -> float:
    """The float written in `text` ("1.5", "-2e-3", "1,5", "inf"); ValueError if none."""
    return float(_normalise(text))


def deg_text_to_rad(text: str) -> float:
    """Degrees written in `text` as radians: the double nearest deg * pi / 180.

    Raises ValueError if `text` is not a number. Non-finite input gives a
    non-finite result (core's validation names it).
    """
    s = _normalise(text)
    try:
        d = Decimal(s)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not d.is_finite():
        return float(d)
    if abs(d) > Decimal("1e300"):  # far beyond any limit core accepts
        return math.copysign(math.inf, float(d))
    return units.deg_to_rad(d)


@lru_cache(maxsize=4096)
def rad_to_deg_text(x: float) -> str:
    """The shortest decimal text in degrees that `deg_text_to_rad` maps back to `x` exactly
    ("90", "-0.5"; "0" for zero)."""
    x = float(x)
    if not math.isfinite(x):
        return repr(x)
    if x == 0.0:
        return "0"
    return units.plain_text(units.shortest_degrees(x))


def float_text(x: float) -> str:
    """The shortest text that reads back as exactly `x` ("0.432", "1e-05"; "0" for zero)."""
    x = float(x)
    if x == 0.0:
        return "0"
    text = units.float_text(x)
    return text[:-2] if text.endswith(".0") else text


def display_text(x: float, digits: int = 6) -> str:
    """`x` rounded for display: at most `digits` significant digits, no "-0"."""
    if not math.isfinite(x):
        return repr(x)
    text = f"{x:.{digits}g}"
    return "0" if text in ("-0", "0") else text
