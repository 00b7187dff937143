"""Robot and mechanism files, read and written by their kind. Qt-free.

A file whose ``format`` is ``"armdyn-mechanism/1"`` opens as a `core.Mechanism`
(chains and loops); every other file goes to the robot reader, so a serial robot
file opens as a `core.Robot` exactly as before, and a broken file gets the robot
reader's message.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from core import Mechanism, Robot
from core.mechanism_file import load_mechanism, save_mechanism
from core.robot_file import load_robot, save_robot

__all__ = ["MECHANISM_FORMAT", "file_format", "load_model", "save_model"]

MECHANISM_FORMAT = "armdyn-mechanism/1"


def file_format(path: str | Path) -> str | None:
    """The file's ``format`` string, or None if it cannot be read as TOML (the readers
    then report why)."""
    try:
        with Path(path).open("rb") as f:
            value = tomllib.load(f).get("format")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, str) else None


def load_model(path: str | Path) -> Robot | Mechanism:
    """A mechanism file as a Mechanism, anything else as a Robot (RobotFileError, or its
    subclass MechanismFileError, naming the file, chain, loop, link and field)."""
    if file_format(path) == MECHANISM_FORMAT:
        return load_mechanism(path)
    return load_robot(path)


def save_model(model: Robot | Mechanism, path: str | Path) -> None:
    """Write `model` atomically in its own format (RobotFileError on failure)."""
    if isinstance(model, Mechanism):
        save_mechanism(model, path)
    else:
        save_robot(model, path)
