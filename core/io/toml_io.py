"""Reading and writing helpers shared by the TOML file formats (robot and mechanism files).

Both formats are read the same strict way: a file of at most `MAX_FILE_BYTES`
bytes of UTF-8 (a byte-order mark is tolerated), TOML floats kept as their exact
decimal text, every value checked for its type, unknown keys refused with the
closest known name suggested, every error naming where it is (`Where`).

Numbers
    `number` accepts int, float (read as its shortest repr, the text a person
    would type), Decimal (the exact text of a TOML float, see `parse_float`);
    never a boolean. Values must be finite and at most `MAX_ABS` in magnitude
    in SI units and radians. Degrees are converted with 60-digit decimal
    arithmetic from the exact decimal text, so the radian value is the double
    nearest deg * pi / 180.
Angles written
    `deg_text(x)` is the shortest decimal, in degrees, that `deg_to_rad` maps
    back to the double x: load(save(x)) == x exactly in both units, and a value
    typed as 90 is written back as 90.0.
Errors
    The helpers raise what ``where.error(field, reason)`` builds: a
    `RobotError` (link and field) or, when the place is in a chain or a loop,
    a `MechanismError` (chain, loop, link and field). The loaders turn them
    into file errors that also name the file.
"""
from __future__ import annotations

import difflib
import math
import os
import re
import stat
import tomllib
from datetime import date, datetime, time
from decimal import Decimal

from ..errors import MechanismError, RobotError
from ..model.units import MAX_ABS, decimal_text, deg_text, deg_to_rad, float_text

__all__ = [
    "ANGLE_UNITS", "MAX_ABS", "MAX_FILE_BYTES", "BadFloat", "Where", "boolean", "check_keys",
    "decimal_text", "decode_utf8", "deg_text", "deg_to_rad", "describe", "display_path",
    "float_text", "key_on_line", "num_text", "number", "numbers", "parse_float", "parse_toml",
    "plain_syntax_message", "read_bytes", "short", "short_int", "string", "suggest",
    "syntax_error_line", "toml_str", "utf8",
]

#: Largest file read, bytes (a 1000-link robot file is about 0.4 MB).
MAX_FILE_BYTES = 1 << 20
#: The values of `angle_unit`.
ANGLE_UNITS = ("deg", "rad")



# ======================================================================================
# Where a value is: the place an error names
# ======================================================================================

class Where:
    """The place of a value in a file: chain, loop and force element names, link
    (1-based) and link name.

    ``error(field, reason)`` builds the exception to raise: a `MechanismError` when
    the place is in a chain or a loop, else a `RobotError` (link and field only).
    """

    def __init__(self, *, link: int | None = None, link_name: str = "",
                 chain: str | None = None, loop: str | None = None,
                 element: str | None = None) -> None:
        self.link = link
        self.link_name = link_name
        self.chain = chain
        self.loop = loop
        self.element = element

    def error(self, field: str, reason: str) -> RobotError | MechanismError:
        if self.chain is None and self.loop is None and self.element is None:
            return RobotError(reason, link=self.link, link_name=self.link_name, field=field)
        return MechanismError(reason, chain=self.chain, loop=self.loop, link=self.link,
                              link_name=self.link_name, field=field, element=self.element)


# ======================================================================================
# Reading files
# ======================================================================================

def display_path(path) -> str | None:
    """The path as shown in messages, or None if `path` is not a path (str, bytes,
    os.PathLike)."""
    try:
        if isinstance(path, bytes):
            return os.fsdecode(path)
        if isinstance(path, (str, os.PathLike)):
            p = os.fspath(path)
            return os.fsdecode(p) if isinstance(p, bytes) else p
    except Exception:
        return None
    return None


def read_bytes(path, kind: str = "robot file") -> bytes:
    """The bytes of the regular file at `path`, at most `MAX_FILE_BYTES`.

    `kind` names what was expected in messages ("robot file"). Raises RobotError
    (no place) for a missing, unreadable, special or oversized file; never blocks
    on a FIFO.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise RobotError(f"no such file; expected an ArmDyn {kind} (.toml)") from None
    except PermissionError:
        raise RobotError("permission denied; cannot read the file") from None
    except (OSError, ValueError) as e:  # ValueError: embedded NUL in the path
        raise RobotError(f"cannot open the file: {getattr(e, 'strerror', None) or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise RobotError(f"is a directory; expected a {kind} (.toml)")
    if not stat.S_ISREG(st.st_mode):
        raise RobotError(f"is not a regular file; expected a {kind} (.toml)")
    plural = kind + "s"
    if st.st_size > MAX_FILE_BYTES:
        raise RobotError(f"file is {st.st_size} bytes; {plural} are at most "
                         f"{MAX_FILE_BYTES} bytes")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except PermissionError:
        raise RobotError("permission denied; cannot read the file") from None
    except OSError as e:
        raise RobotError(f"cannot read the file: {e.strerror or e}") from None
    if len(data) > MAX_FILE_BYTES:
        raise RobotError(f"file is over {MAX_FILE_BYTES} bytes; {plural} are smaller")
    return data


def decode_utf8(data: bytes) -> str:
    """UTF-8 text of `data` (a leading byte-order mark dropped); RobotError naming the line
    and column of the first bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise RobotError(f"not UTF-8 text: byte 0x{data[e.start]:02x} at line {line}, "
                         f"column {col}; expected a UTF-8 TOML file") from None


class BadFloat:
    """A TOML float that Decimal cannot hold (exponent beyond any range)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def parse_float(text: str):
    """`tomllib`'s parse_float: the exact Decimal of the text, or a `BadFloat`."""
    try:
        return Decimal(text)
    except (ArithmeticError, ValueError):
        return BadFloat(text)


def parse_toml(text: str, syntax_error) -> dict:
    """The TOML document of `text`, floats as Decimal (`parse_float`).

    `syntax_error(text, message)` builds the exception for a TOML syntax error
    (it may name the table the error is in); other failures raise RobotError.
    """
    try:
        return tomllib.loads(text, parse_float=parse_float)
    except tomllib.TOMLDecodeError as e:
        raise syntax_error(text, plain_syntax_message(text, str(e))) from None
    except RecursionError:
        raise RobotError("TOML nested too deeply to be read") from None
    except ValueError as e:  # e.g. an integer with more than 4300 digits
        raise RobotError(f"TOML value cannot be read: {e}") from None


_ERR_POS = re.compile(r"at line (\d+), column (\d+)")
_DECLARED_TWICE = re.compile(r"^Cannot declare \(([^)]*)\) twice")
_TABLE_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]")


def plain_syntax_message(text: str, message: str) -> str:
    """`tomllib`'s message in the words of the file's author, its position kept.

    The two a hand-written file meets most: a table written [link] where the format
    repeats it as [[link]] ("Cannot declare ('link',) twice", or "Cannot overwrite a
    value" at the [[link]] that follows a [link]), and a key given twice in one table.
    Any other message is returned as it is."""
    position = _ERR_POS.search(message)
    at = f" ({position.group(0)})" if position else ""
    twice = _DECLARED_TWICE.match(message)
    if twice:
        name = ".".join(re.findall(r"'([^']*)'", twice.group(1))) or twice.group(1)
        return (f"the table [{name}] is declared twice{at}; a table that repeats (one per "
                f"link, chain or loop) is written [[{name}]], with double brackets")
    if message.startswith("Cannot overwrite a value") and position:
        lines = text.splitlines()
        line_no = int(position.group(1))
        line = lines[line_no - 1] if 0 < line_no <= len(lines) else ""
        header = _TABLE_HEADER.match(line)
        if header and header.group(1) == "[[":
            name = header.group(2).replace('"', "").replace("'", "")
            return (f"[[{name}]] follows a [{name}] table{at}; a table that repeats is "
                    f"written [[{name}]] every time, with double brackets")
        key = key_on_line(lines, line_no)
        if key:
            return f"{key!r} is given twice in the same table{at}"
    return message
_KEY_LINE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")


def syntax_error_line(message: str) -> int | None:
    """The 1-based line a `tomllib` error message points at, if it says."""
    m = _ERR_POS.search(message)
    return int(m.group(1)) if m else None


def key_on_line(lines: list[str], line_no: int) -> str:
    """The bare key assigned on line `line_no` (1-based) of `lines`, or ""."""
    if 0 < line_no <= len(lines):
        k = _KEY_LINE.match(lines[line_no - 1])
        return k.group(1) if k else ""
    return ""


# ======================================================================================
# Describing values in messages
# ======================================================================================

def describe(v) -> str:
    """What a TOML value is, for messages: 'a string "heavy"'."""
    if isinstance(v, bool):
        return f"a boolean ({'true' if v else 'false'})"
    if isinstance(v, str):
        return f"a string {short(v)}"
    if isinstance(v, int):
        return f"an integer ({short_int(v)})"
    if isinstance(v, (float, Decimal, BadFloat)):
        return f"a number ({num_text(v)})"
    if isinstance(v, list):
        return f"an array of {len(v)} item{'s' if len(v) != 1 else ''}"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, (datetime, date, time)):
        return f"a date/time ({v.isoformat()})"
    return f"a {type(v).__name__}"


def num_text(v) -> str:
    """A number as TOML would write it: 1e+308, nan, -inf, 17.4."""
    if isinstance(v, Decimal):
        if v.is_nan():
            return "nan"
        if v.is_infinite():
            return "-inf" if v < 0 else "inf"
        return short(format(v, "g"), quote=False)
    if isinstance(v, int) and not isinstance(v, bool):
        return short_int(v)
    return short(v, quote=False)


def short(v, quote: bool = True, limit: int = 40) -> str:
    """repr (or str) of `v`, cut to `limit` characters."""
    s = repr(v) if quote else str(v)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def short_int(v: int) -> str:
    """An integer's digits, or its rough length when it is huge."""
    return str(v) if abs(v) < 10 ** 30 else f"about {len(hex(v)) * 1.2:.0f} digits"


def suggest(key, known) -> str:
    """' (did you mean 'mass'?)' for the known name closest to `key`, or ''."""
    if not isinstance(key, str):
        return ""
    m = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.6)
    return f" (did you mean '{m[0]}'?)" if m else ""


def check_keys(table: dict, known, *, where: str, w: Where, prefix: str = "") -> None:
    """Refuse the first key of `table` not in `known` (field = prefix + key), naming the
    closest known one; `where` says which table ("a [[link]] table")."""
    for key in table:
        if key not in known:
            raise w.error(prefix + str(key), f"unknown field {short(key)} in {where}"
                                             f"{suggest(key, known)}; known fields: "
                                             f"{', '.join(known)}")


# ======================================================================================
# Typed values
# ======================================================================================

def number(v, w: Where, field: str, expected: str, *, deg: bool = False) -> float:
    """A finite number |x| <= MAX_ABS (SI / rad) from a TOML value; degrees converted
    to radians when `deg`. `expected` says what the field holds, in words."""
    if isinstance(v, bool) or not isinstance(v, (int, float, Decimal, BadFloat)):
        raise w.error(field, f"expected {expected}, got {describe(v)}")
    if isinstance(v, BadFloat):
        raise w.error(field, f"the number {num_text(v)} is out of range: |value| must be at "
                             f"most 1e12 (in m, kg, rad); expected {expected}")
    # A float means its shortest repr (what was typed), so 33.3 reads as the text 33.3.
    d = Decimal(repr(float(v))) if isinstance(v, float) else Decimal(v)
    if not d.is_finite():
        raise w.error(field, f"expected a finite number, got {num_text(v)}; expected {expected}")
    rough = float(d)
    if not abs(rough) <= MAX_ABS * 100:  # cheap guard before exact arithmetic
        x = math.inf
    else:
        x = deg_to_rad(d) if deg else rough
    if not abs(x) <= MAX_ABS:
        raise w.error(field, f"the number {num_text(v)} is out of range: |value| must be at "
                             f"most 1e12 (in m, kg, rad); expected {expected}")
    return x


def numbers(v, n: int, w: Where, field: str, expected: str, item: str, *,
            deg: bool = False) -> tuple[float, ...]:
    """An array of exactly `n` numbers (each as `number`; `item` describes one)."""
    if not isinstance(v, list):
        raise w.error(field, f"expected {expected}, got {describe(v)}")
    if len(v) != n:
        raise w.error(field, f"expected {expected}, got {len(v)} item{'s' if len(v) != 1 else ''}")
    return tuple(number(x, w, field, f"{item} (item {k + 1} of {n})", deg=deg)
                 for k, x in enumerate(v))


def string(v, w: Where, field: str, expected: str) -> str:
    """A TOML string."""
    if not isinstance(v, str):
        raise w.error(field, f"expected {expected}, got {describe(v)}")
    return v


def boolean(v, w: Where, field: str, expected: str) -> bool:
    """A TOML boolean (true / false); not a number or a string."""
    if not isinstance(v, bool):
        hint = ""
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            hint = f"; write {v.strip().lower()} without quotes"
        raise w.error(field, f"expected {expected}, got {describe(v)}{hint}")
    return v


def utf8(s: str, w: Where, field: str) -> str:
    """`s` unchanged if it can be written as UTF-8, else the error of `w` (a lone
    surrogate)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise w.error(field, f"character {s[e.start]!r} at position {e.start} cannot be "
                             "written as UTF-8 (unpaired surrogate)") from None
    return s


_BASIC_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n",
                  "\f": "\\f", "\r": "\\r"}


def toml_str(s: str, multiline: bool = False) -> str:
    """A TOML basic string; multi-line form (\"\"\"...\"\"\") if it has newlines and may."""
    use_ml = multiline and "\n" in s
    out = []
    for ch in s:
        if use_ml and ch == "\n":
            out.append("\n")
        elif ch in _BASIC_ESCAPES:
            out.append(_BASIC_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    body = "".join(out)
    # A newline right after the opening quotes is dropped by TOML readers.
    return f'"""\n{body}"""' if use_ml else f'"{body}"'
