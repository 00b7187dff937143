"""Numbers and angles as text: one home for the conversions every file and table uses.

- `MAX_ABS`: the largest magnitude of any number of a model, in SI units and radians
  (a link longer than a million kilometres is a typing error); the descriptions'
  validation and the file readers both use it.
- Degrees <-> radians, exactly: `deg_to_rad(d)` is the double nearest d * pi / 180,
  computed from the exact decimal d with 60-digit arithmetic, so "45" typed in a file
  or a table cell gives the same radians; `shortest_degrees(x)` is the shortest decimal
  (in degrees) that `deg_to_rad` maps back to the double x. Written as a TOML float
  (`deg_text`, "90.0") or as a table shows it (`plain_text`, "90"), load(save(x)) == x.
- `float_text(x)`: the shortest text that reads back as exactly x (Python's repr, a
  valid TOML float).
"""
from __future__ import annotations

import math
from decimal import (MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Context, Decimal, DivisionByZero,
                     InvalidOperation, Overflow)

#: Largest magnitude of any number of a model, in SI units and radians.
MAX_ABS = 1e12

# Decimal arithmetic for degree <-> radian conversion: 60 digits, any exponent.
_CTX = Context(prec=60, rounding=ROUND_HALF_EVEN, Emax=MAX_EMAX, Emin=MIN_EMIN,
               traps=[InvalidOperation, DivisionByZero, Overflow])
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")
_RAD_PER_DEG = Context(prec=80).divide(_PI, 180)
_DEG_PER_RAD = Context(prec=80).divide(180, _PI)


def deg_to_rad(d: Decimal) -> float:
    """The double nearest d * pi / 180 (d exact, in degrees)."""
    return float(_CTX.multiply(d, _RAD_PER_DEG))


def float_text(x) -> str:
    """A finite float as TOML: Python's repr is the shortest exact text and valid TOML."""
    return repr(float(x))


def deg_text(x) -> str:
    """x (rad) in degrees as a TOML float: the shortest decimal that `deg_to_rad` maps back
    to the double x ("90.0", "-0.0")."""
    x = float(x)
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return decimal_text(shortest_degrees(x))


def plain_text(d: Decimal) -> str:
    """A Decimal as a table shows it: "90", "-0.5", "1.25e-07" (no trailing zeros)."""
    if d == 0:
        return "0"
    d = d.normalize()
    if -5 <= d.adjusted() < 16:
        return format(d, "f")
    mantissa, _, exponent = format(d, "e").partition("e")
    return f"{mantissa}e{int(exponent):+03d}"


def shortest_degrees(x: float) -> Decimal:
    """The shortest decimal, in degrees, that `deg_to_rad` maps back to the finite,
    nonzero double x (rad)."""
    exact = _CTX.multiply(Decimal(x), _DEG_PER_RAD)
    # 1. Up to 15 significant digits: such a decimal is also the repr of its double,
    #    so a float form (robot_to_dict) is exact too. The nearest 15-digit decimal
    #    is the best candidate; if it fits, bisect for the fewest digits that fit.
    if deg_to_rad(_round_digits(exact, 15)) == x:
        lo, hi = 0, 15  # hi digits fit; lo digits are not known to
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if deg_to_rad(_round_digits(exact, mid)) == x:
                hi = mid
            else:
                lo = mid
        return _round_digits(exact, hi)
    # 2. The repr of a double next to the exact value, again exact as text and as float.
    best = None
    f = float(exact)
    for k in (0, 1, -1, 2, -2, 3, -3):
        g = _ulp_step(f, k)
        text = repr(g)
        if deg_to_rad(Decimal(text)) == x and (best is None or len(text) < len(best)):
            best = text
    if best is not None:
        return Decimal(best)
    # 3. Rarely no double fits: 17 digits always identify x as text.
    for digits in range(16, 25):
        d = _round_digits(exact, digits)
        if deg_to_rad(d) == x:
            return d
    return exact  # not reached


_ROUND_CTX = [Context(prec=max(p, 1), rounding=ROUND_HALF_EVEN, Emax=MAX_EMAX, Emin=MIN_EMIN)
              for p in range(26)]


def _round_digits(d: Decimal, digits: int) -> Decimal:
    """`d` rounded to `digits` significant digits."""
    return _ROUND_CTX[digits].plus(d)


def _ulp_step(f: float, k: int) -> float:
    for _ in range(abs(k)):
        f = math.nextafter(f, math.inf if k > 0 else -math.inf)
    return f


def decimal_text(d: Decimal) -> str:
    """A finite nonzero Decimal as a TOML float, positional for ordinary magnitudes."""
    sign, digit_tuple, exp = d.as_tuple()
    ds = "".join(map(str, digit_tuple))
    stripped = ds.rstrip("0")
    exp += len(ds) - len(stripped)
    ds = stripped or "0"
    adjusted = exp + len(ds) - 1  # power of ten of the leading digit
    if -5 <= adjusted < 16:
        point = adjusted + 1  # digits before the decimal point
        if point <= 0:
            body = "0." + "0" * -point + ds
        elif point >= len(ds):
            body = ds + "0" * (point - len(ds)) + ".0"
        else:
            body = ds[:point] + "." + ds[point:]
    else:
        body = f"{ds[0]}.{ds[1:] or '0'}e{adjusted}"
    return ("-" if sign else "") + body


