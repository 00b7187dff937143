"""Read a motion log: `load_motion(path, model=None, columns=None, cutoff=None)`.

A log is a CSV file: lines starting with `#` are comments, the first other line is the
header, then one row per sample. A column's name is the first word of its header cell,
so the CSV that `armdyn inverse` and `armdyn simulate` write ("t [s]", "q2 shoulder
[rad]", "qd2 shoulder [rad/s]", "tau2 shoulder [N m]") reads as t, q2, qd2, tau2:

    t, q1..qn                  required: s; rad (revolute) or m (prismatic), joint order
    tau1..taun                 optional: N m or N, the drive's torque at the joint
    qd1..qdn, qdd1..qddn       optional: used as they are when all are there (ArmDyn's
                               own CSV), else rates and accelerations come from the
                               smoothing differentiator (`core.sim.measured`)

Other columns are ignored. `columns` maps these names to a file's own header names
({"t": "time", "q1": "j1_pos", ...}); a name it leaves out keeps its default.
"""
from __future__ import annotations

import os
import re

import numpy as np

from ..errors import ArgumentError, MotionFileError
from ..model.arguments import model_of
from ..sim.measured import Motion, sampling_problem

_JOINT_COLUMN = re.compile(r"^(q|qd|qdd|tau)(\d+)$")


def _column_name(cell: str) -> str:
    """The first word of a header cell, lower case: 't [s]' -> 't'."""
    words = cell.strip().split()
    return words[0].lower() if words else ""


def _read_lines(path: str) -> list[tuple[int, str]]:
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except OSError as err:
        raise MotionFileError(path, f"cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise MotionFileError(path, "not a text file (UTF-8 CSV expected)") from None
    return [(i + 1, line) for i, line in enumerate(text.splitlines())
            if line.strip() and not line.lstrip().startswith("#")]


def _header_map(path: str, header: list[str], line: int, columns: dict[str, str] | None
                ) -> dict[str, int]:
    """Our column names ('t', 'q1', 'tau2', ...) -> their index in the file."""
    own = [cell.strip() for cell in header]
    found: dict[str, int] = {}
    for i, cell in enumerate(own):
        name = _column_name(cell)
        if name and name not in found:
            found[name] = i
    for ours, theirs in (columns or {}).items():
        key = str(ours).strip().lower()
        if not (key == "t" or _JOINT_COLUMN.match(key)):
            raise MotionFileError(path, f"the column map names {ours!r}; it maps t, q1..qn, "
                                  "tau1..taun, qd1..qdn, qdd1..qddn")
        matches = [i for i, cell in enumerate(own) if cell == str(theirs).strip()]
        if not matches:
            raise MotionFileError(path, f"the column map gives {theirs!r} for {ours}, but the "
                                  f"header has no such column (it has: {', '.join(own)})",
                                  line=line)
        found[key] = matches[0]
    return found


def _joint_count(path: str, found: dict[str, int], line: int) -> int:
    n = 0
    while f"q{n + 1}" in found:
        n += 1
    extra = sorted(int(m.group(2)) for k in found if (m := _JOINT_COLUMN.match(k))
                   and m.group(1) == "q" and int(m.group(2)) > n)
    if n == 0:
        raise MotionFileError(path, "no joint columns: the header needs t, q1, ..., qn (or a "
                              "column map naming them)", line=line)
    if extra:
        raise MotionFileError(path, f"columns q1..q{n} and then q{extra[0]}: column "
                              f"'q{n + 1}' is missing", line=line)
    return n


def _group(path: str, found: dict[str, int], symbol: str, n: int, line: int
           ) -> list[int] | None:
    """The indices of symbol1..symboln, None if none is there; a partial set is refused."""
    have = [f"{symbol}{j + 1}" in found for j in range(n)]
    if not any(have):
        return None
    if not all(have):
        missing = f"{symbol}{have.index(False) + 1}"
        raise MotionFileError(path, f"column {missing!r} is missing: give {symbol}1..{symbol}{n} "
                              "for every joint or none", line=line, column=missing)
    return [found[f"{symbol}{j + 1}"] for j in range(n)]


def load_motion(path: str | os.PathLike, model=None, columns: dict[str, str] | None = None,
                cutoff: float | None = None) -> Motion:
    """Read a motion log (module docstring) into a `Motion`: .t (S,), .q (S, n), .tau
    (S, n) or None, .qd, .qdd, .cutoff (the differentiator's -3 dB frequency, Hz, or
    None when the log had rates), .warnings.

    model   : if given, its joint count must match the log's (joints of one degree of
              freedom only)
    columns : our column name -> the file's header name, for logs with other headers
    cutoff  : Hz, the differentiator's cut-off (default `core.sim.measured.DEFAULT_CUTOFF`)

    Raises MotionFileError naming the file, and the line and column where they apply:
    a missing or unreadable file, a header without t and q1..qn, a cell that is not a
    number or is NaN, a row of the wrong length, times that do not increase, a gap, too
    few samples, or a joint count that is not the model's.
    """
    path = os.fspath(path)
    rows = _read_lines(path)
    if not rows:
        raise MotionFileError(path, "no header: the file is empty or only comments")
    head_line, head = rows[0]
    header = head.split(",")
    found = _header_map(path, header, head_line, columns)
    if "t" not in found:
        raise MotionFileError(path, "no time column: the header needs 't' (or a column map "
                              "naming it)", line=head_line)
    n = _joint_count(path, found, head_line)
    if model is not None:
        m = model_of(model)
        several = [name for name, kind in zip(m.joint_names, m.joint_types) if not kind.is_dh]
        if several:
            raise MotionFileError(path, f"measured motions give one value per joint; joint "
                                  f"{several[0]!r} of {m.name!r} has several degrees of freedom")
        if n != m.n:
            raise MotionFileError(path, f"the log has {n} joints (q1..q{n}), the model "
                                  f"{m.name!r} has {m.n}", line=head_line)
    q_cols = [found[f"q{j + 1}"] for j in range(n)]
    groups = {s: _group(path, found, s, n, head_line) for s in ("tau", "qd", "qdd")}
    names = {found["t"]: "t"}
    for j, i in enumerate(q_cols):
        names[i] = f"q{j + 1}"
    for s, idx in groups.items():
        for j, i in enumerate(idx or ()):
            names[i] = f"{s}{j + 1}"
    used = sorted(names)
    data = np.empty((len(rows) - 1, len(used)))
    for r, (line, text) in enumerate(rows[1:]):
        cells = text.split(",")
        if len(cells) != len(header):
            raise MotionFileError(path, f"{len(cells)} cells, the header has {len(header)}",
                                  line=line)
        for c, i in enumerate(used):
            try:
                x = float(cells[i])
            except ValueError:
                raise MotionFileError(path, f"not a number ({cells[i].strip()!r})", line=line,
                                      column=header[i].strip()) from None
            if not np.isfinite(x):
                raise MotionFileError(path, f"{cells[i].strip()!r} (every value must be a finite "
                                      "number: cut or fill the missing samples)", line=line,
                                      column=header[i].strip())
            data[r, c] = x
    col = {names[i]: c for c, i in enumerate(used)}
    lines = [line for line, _ in rows[1:]]
    t = data[:, col["t"]]
    problem = sampling_problem(t) if t.size > 1 else None
    if problem is not None:
        i, reason = problem
        raise MotionFileError(path, reason, line=lines[i], column=header[found["t"]].strip())

    def block(symbol):
        if symbol != "q" and groups[symbol] is None:
            return None
        return data[:, [col[f"{symbol}{j + 1}"] for j in range(n)]]

    try:
        return Motion.from_samples(t, block("q"), block("tau"), qd=block("qd"),
                                   qdd=block("qdd"), cutoff=cutoff, source=path)
    except ArgumentError as err:
        raise MotionFileError(path, str(err)) from None
