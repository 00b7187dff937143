"""Typed errors of the dynamics core.

Every error a user can cause carries enough context to be fixed without a
traceback: the file, the link (1-based number and name) and the field.
"""
from __future__ import annotations


class ArmDynError(Exception):
    """Base class of every error the core raises on purpose."""


class ArgumentError(ArmDynError, ValueError):
    """A bad argument to a public function: a wrong shape, a value that is not finite or
    out of range. Names the argument; `except ValueError` catches it too."""


class ResultOverflowError(ArmDynError, OverflowError):
    """A computation's result is not finite although its inputs are: they are too large
    for floating point (a rate of 1e200 rad/s squared, a torque of 1e308 N m)."""


class ArgumentTypeError(ArmDynError, TypeError):
    """An argument of the wrong type (a model that is not one, text where numbers go).
    `except TypeError` catches it too."""


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


class MechanismError(ArmDynError, ValueError):
    """Invalid mechanism data: names the chain, the link (1-based in its chain), the loop,
    the force element and the field, whichever apply.

    ``str(err)`` reads ``"chain 'left leg', link 2 ('thigh'), field 'mass': must be > 0"``
    or ``"loop 'C', field 'links': 'rockr' is not a link of this mechanism"``.
    """

    def __init__(self, reason: str, *, chain: str | None = None, loop: str | None = None,
                 link: int | None = None, link_name: str = "", field: str = "",
                 element: str | None = None) -> None:
        self.chain = chain
        self.loop = loop
        self.element = element
        self.link = link
        self.link_name = link_name
        self.field = field
        self.reason = reason
        super().__init__(self._compose())

    def where(self) -> str:
        parts = []
        if self.chain is not None:
            parts.append(f"chain {self.chain!r}")
        if self.loop is not None:
            parts.append(f"loop {self.loop!r}")
        if self.element is not None:
            parts.append(f"force element {self.element!r}")
        if self.link is not None:
            parts.append(f"link {self.link}" + (f" ({self.link_name!r})" if self.link_name else ""))
        if self.field:
            parts.append(f"field '{self.field}'")
        return ", ".join(parts)

    def _compose(self) -> str:
        where = self.where()
        return f"{where}: {self.reason}" if where else self.reason


class LoopClosureError(MechanismError):
    """The loops cannot be closed (assembly failed) or the independent joints do not fix
    the pose. ``residual`` is the largest closure error left (m or rad), when known."""

    def __init__(self, reason: str, *, loop: str | None = None, residual: float | None = None,
                 field: str = "") -> None:
        self.residual = residual
        super().__init__(reason, loop=loop, field=field)


class SingularConfigurationError(ArmDynError, ArithmeticError):
    """A closed chain reached a pose where the independent joints no longer fix the
    motion (a type-II / parallel singularity) or the loop constraints lose rank.
    ``q`` is the pose (n,), ``time`` the simulated time if any."""

    def __init__(self, reason: str, *, q=None, time: float | None = None) -> None:
        self.reason = reason
        self.q = q
        self.time = time
        where = f" at t = {time:.6g} s" if time is not None else ""
        super().__init__(f"singular configuration{where}: {reason}")


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

    def __init__(self, joint: int, pivot: float | None = None, name: str = "") -> None:
        self.joint = joint
        self.pivot = pivot
        self.name = name
        value = "" if pivot is None or pivot != pivot else f" (pivot m_hat = {pivot:.3g})"
        label = f"joint {joint}" + (f" ({name!r})" if name else "")
        super().__init__(
            f"mass matrix is singular at {label}{value}: the links from this joint "
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


class Cancelled(ArmDynError):
    """A long computation stopped at a checkpoint because its ``cancel()`` callback
    returned True (`core.sim.checkpoints`): nothing of it is returned or changed.
    ``what`` names the computation, ``stage`` where it stopped."""

    def __init__(self, what: str, stage: str) -> None:
        self.what = what
        self.stage = stage
        super().__init__(f"{what} cancelled {stage}")


class MechanismFileError(RobotFileError):
    """A mechanism (or robot) file could not be read or written; the only error
    `load_mechanism` raises. Names the file, then the chain, loop, force element, link
    and field that apply: ``"<path>: loop 'C', field 'links': 'rockr' is not a link"``.
    """

    def __init__(self, path: str, reason: str, *, chain: str | None = None,
                 loop: str | None = None, link: int | None = None, link_name: str = "",
                 field: str = "", element: str | None = None) -> None:
        self.chain = chain
        self.loop = loop
        self.element = element
        inner = MechanismError(reason, chain=chain, loop=loop, link=link, link_name=link_name,
                               field=field, element=element)
        ArmDynError.__init__(self, f"{path}: {inner}")
        self.path = str(path)
        self.link = link
        self.link_name = link_name
        self.field = field
        self.reason = reason


class MotionError(ArgumentError):
    """A motion that breaks a limit: names the motion, the joint (1-based and its name),
    the time (s), the value reached and the limit, e.g. ``"quintic motion: joint 2
    ('shoulder') reaches 95.3 deg at t = 1.25 s, 5.3 deg past its upper limit (90 deg)"``.

    Attributes: ``joint`` (1-based, or None), ``time`` (s, or None), ``what`` (the limit
    broken: "lower limit", "upper limit", "rate limit", "acceleration limit", "torque
    limit")."""

    def __init__(self, reason: str, *, joint: int | None = None, time: float | None = None,
                 what: str = "") -> None:
        self.joint = joint
        self.time = time
        self.what = what
        self.reason = reason
        super().__init__(reason)


class IdentificationError(ArgumentError):
    """Identification refused (`core.sim.identification.identify`): a motion without
    measured torques, too few samples, a motion that does not excite some base parameters
    (``unexcited``: those combinations in words), a fit worse than zero torque (wrong sign
    convention or joint order). Nothing is written when it is raised."""

    def __init__(self, reason: str, unexcited: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.unexcited = unexcited
        super().__init__(reason)


class MotionFileError(ArmDynError, ValueError):
    """A motion log (CSV) that cannot be used; the only error `load_motion` raises. Names
    the file, then the line (1-based, as an editor shows it) and the column where they
    apply: ``"<path>: line 14, column 'q2': not a number ('abc')"``."""

    def __init__(self, path: str, reason: str, *, line: int | None = None,
                 column: str = "") -> None:
        self.path = str(path)
        self.line = line
        self.column = column
        self.reason = reason
        where = ", ".join(p for p in ((f"line {line}" if line is not None else ""),
                                      (f"column {column!r}" if column else "")) if p)
        super().__init__(f"{self.path}: {where}: {reason}" if where
                         else f"{self.path}: {reason}")
