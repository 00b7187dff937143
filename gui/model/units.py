"""Numbers as the tables show them and read them back. Qt-free.

The tables show SI units, except angles, which they show in degrees. Degrees
are converted exactly the way ``core.io.robot_file`` converts them (the double
nearest ``deg * pi / 180``, computed from the decimal text with 60 digits), so
typing "45" in a cell and saving writes ``45.0`` to the file, never
``45.00000000000001``.
"""
from __future__ import annotations

import math
from decimal import (MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal, InvalidOperation)
from functools import lru_cache

__all__ = ["parse_number", "deg_text_to_rad", "rad_to_deg_text", "float_text", "display_text"]

# Same arithmetic as core.io.robot_file: 60 significant digits, pi to 80 digits.
_CTX = Context(prec=60, rounding=ROUND_HALF_EVEN, Emax=MAX_EMAX, Emin=MIN_EMIN)
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")
_RAD_PER_DEG = Context(prec=80).divide(_PI, 180)
_DEG_PER_RAD = Context(prec=80).divide(180, _PI)
_ROUND = [Context(prec=p, rounding=ROUND_HALF_EVEN, Emax=MAX_EMAX, Emin=MIN_EMIN)
          for p in range(1, 26)]

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
    return float(_CTX.multiply(d, _RAD_PER_DEG))


@lru_cache(maxsize=4096)
def rad_to_deg_text(x: float) -> str:
    """The shortest decimal text in degrees that `deg_text_to_rad` maps back to `x` exactly."""
    x = float(x)
    if not math.isfinite(x):
        return repr(x)
    if x == 0.0:
        return "0"
    exact = _CTX.multiply(Decimal(x), _DEG_PER_RAD)
    for ctx in _ROUND:
        text = _plain(ctx.plus(exact))
        if deg_text_to_rad(text) == x:
            return text
    return _plain(exact)


def _plain(d: Decimal) -> str:
    """A Decimal as ordinary text: "90", "-0.5", "1.25e-07" (no trailing zeros)."""
    d = d.normalize()
    if -5 <= d.adjusted() < 16:
        return format(d, "f")
    mantissa, _, exponent = format(d, "e").partition("e")
    return f"{mantissa}e{int(exponent):+03d}"


def float_text(x: float) -> str:
    """The shortest text that reads back as exactly `x` ("0.432", "1e-05")."""
    x = float(x)
    if x == 0.0:
        return "0"
    text = repr(x)
    return text[:-2] if text.endswith(".0") else text


def display_text(x: float, digits: int = 6) -> str:
    """`x` rounded for display: at most `digits` significant digits, no "-0"."""
    if not math.isfinite(x):
        return repr(x)
    text = f"{x:.{digits}g}"
    return "0" if text in ("-0", "0") else text
