"""Typed errors of the dynamics core.

Every error a user can cause carries enough context to be fixed without a
traceback: the file, the link (1-based number and name) and the field.
"""
from __future__ import annotations


class ArmDynError(Exception):
    """Base class of every error the core raises on purpose."""


class RobotError(ArmDynError, ValueError):
    """Invalid robot data: names the link (1-based) and the field.

    Attributes
    ----------
    link : int | None
        1-based link number, or None for a robot-level field.
    link_name : str
        The link's name ("" when unknown).
    field : str
        The field that is wrong ("mass", "inertia", "com", ...).
    reason : str
        What was expected, in words.
    """

    def __init__(self, reason: str, *, link: int | None = None,
                 link_name: str = "", field: str = "") -> None:
        self.link = link
        self.link_name = link_name
        self.field = field
        self.reason = reason
        super().__init__(self._compose())

    def where(self) -> str:
        parts = []
        if self.link is not None:
            parts.append(f"link {self.link}" + (f" ({self.link_name!r})" if self.link_name else ""))
        if self.field:
            parts.append(f"field '{self.field}'")
        return ", ".join(parts)

    def _compose(self) -> str:
        where = self.where()
        return f"{where}: {self.reason}" if where else self.reason


class RobotFileError(ArmDynError):
    """A robot file could not be read or written; the only error `load_robot` raises.

    ``str(err)`` reads ``"<path>: link 2 ('shoulder'), field 'mass': must be > 0, got -1"``.
    """

    def __init__(self, path: str, reason: str, *, link: int | None = None,
                 link_name: str = "", field: str = "") -> None:
        self.path = str(path)
        self.link = link
        self.link_name = link_name
        self.field = field
        self.reason = reason
        inner = RobotError(reason, link=link, link_name=link_name, field=field)
        super().__init__(f"{self.path}: {inner}")


class SingularMassMatrixError(ArmDynError, ArithmeticError):
    """The generalized inertia matrix is (numerically) singular.

    ``joint`` is the 1-based joint whose articulated inertia pivot ``m_hat``
    (the D of UDU^T) vanished.
    """

    def __init__(self, joint: int, pivot: float | None = None) -> None:
        self.joint = joint
        self.pivot = pivot
        value = "" if pivot is None or pivot != pivot else f" (pivot m_hat = {pivot:.3g})"
        super().__init__(
            f"mass matrix is singular at joint {joint}{value}: the links from this joint "
            "outward have no inertia about its axis")


class SimulationError(ArmDynError):
    """A simulation stopped early. ``result`` holds the samples computed so far.

    ``time`` is the simulated time (s) where it stopped, ``joint`` the 1-based
    joint that caused it (None if not attributable).
    """

    def __init__(self, reason: str, *, time: float, joint: int | None = None,
                 result=None) -> None:
        self.reason = reason
        self.time = time
        self.joint = joint
        self.result = result
        where = f"t = {time:.6g} s" + (f", joint {joint}" if joint is not None else "")
        super().__init__(f"simulation stopped at {where}: {reason}")


class SimulationCancelled(ArmDynError):
    """The simulation was cancelled by the caller; ``result`` holds the samples so far."""

    def __init__(self, *, time: float, result=None) -> None:
        self.time = time
        self.result = result
        super().__init__(f"simulation cancelled at t = {time:.6g} s")
