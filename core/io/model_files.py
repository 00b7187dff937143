"""Robot, mechanism and URDF files, read and written by their kind.

The kind follows the file:

- a ``.urdf`` file (any case) is a URDF (`core.load_urdf` / `core.save_urdf`,
  docs/urdf.md): it opens as a `core.Mechanism` (a serial arm is one chain, its
  base maybe placed) and saving writes URDF again;
- a TOML file whose ``format`` is ``"armdyn-mechanism/1"`` or ``"/2"`` opens as a
  Mechanism (chains and loops; version 2: joints of several degrees of freedom, force
  elements);
- every other file goes to the robot reader, so a serial robot file opens as a
  `core.Robot` exactly as before, and a broken file gets the robot reader's message.

Every error is a `core.RobotFileError` (URDF and mechanism errors are subclasses)
whose ``str()`` names the file, joint or link and field, ready for a dialog.
"""
from __future__ import annotations

import tomllib
from functools import singledispatch
from pathlib import Path

from ..model.mechanism import Mechanism
from ..model.robot import Robot
from .mechanism_file import FORMAT, FORMAT_2, load_mechanism, save_mechanism
from .robot_file import load_robot, save_robot
from .urdf import is_urdf, load_urdf, save_urdf

__all__ = ["MECHANISM_FORMAT", "MECHANISM_FORMATS", "URDF_SUFFIX", "file_format", "is_urdf",
           "load_model", "save_model"]

MECHANISM_FORMAT = FORMAT
#: Every mechanism-file format this version reads.
MECHANISM_FORMATS = (FORMAT, FORMAT_2)
URDF_SUFFIX = ".urdf"


def file_format(path: str | Path) -> str | None:
    """The file's ``format`` string, or None if it cannot be read as TOML (the readers
    then report why)."""
    try:
        with Path(path).open("rb") as f:
            value = tomllib.load(f).get("format")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, str) else None


def load_model(path: str | Path, floating_base: bool = False) -> Robot | Mechanism:
    """A URDF or a mechanism file as a Mechanism, anything else as a Robot (a URDF with
    floating_base=True: its root link on a free joint, `core.io.urdf.load_urdf`).

    What was not read, or read with a rule, is in the model's ``warnings``. Raises
    RobotFileError (or its subclasses MechanismFileError, UrdfFileError) naming the
    file, chain, loop, joint, link and field.
    """
    if is_urdf(path):
        return load_urdf(path, floating_base=floating_base)
    if file_format(path) in MECHANISM_FORMATS:
        return load_mechanism(path)
    return load_robot(path)


def save_model(model: Robot | Mechanism, path: str | Path) -> tuple[str, ...]:
    """Write `model` atomically: as URDF to a ``.urdf`` path, else in its own format.

    Returns the warnings of the write (what the format cannot hold, e.g. a URDF has
    no gravity); () for robot and mechanism files. Raises RobotFileError on failure
    (UrdfFileError for a mechanism with loops, which URDF cannot express).
    """
    if is_urdf(path):
        return tuple(save_urdf(model, path))
    _save_in_own_format(model, path)
    return ()


@singledispatch
def _save_in_own_format(model, path) -> None:
    """The writer of the description's own file format."""
    raise TypeError(f"expected a Robot or Mechanism, got {type(model).__name__}")


_save_in_own_format.register(Robot, save_robot)
_save_in_own_format.register(Mechanism, save_mechanism)
