"""The result of a run: `Trajectory`, what it computed (`RunKind`), and its sample grid.

`Trajectory` is what every run produces (inverse dynamics along a planned motion,
`core.sim.motions`; a free fall or a simulation, `core.sim.simulation` and the other
steppers of `core.sim.driver`), so plots, playback and CSV export share one code path.
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..errors import ArgumentError
from ..kernels.pull import PULL_COLUMNS
from ..model.arguments import positive_number

#: The most sample steps a run may ask for (duration / dt_out); the memory a run's
#: samples need is checked too, before it starts (`check_sample_memory`).
MAX_SAMPLES = 10_000_000
#: The share of the machine's available memory (`available_memory`) that a run's
#: samples may take; `check_sample_memory` refuses a run that would need more.
MEMORY_SHARE = 0.5
#: Copies of each sample a run holds at its end: the integrator's output buffer (or the
#: motion's arrays), the chunks, and the joined Trajectory.
RUN_COPIES = 3


class RunKind(StrEnum):
    """What a run computed. A string enum: its value is the text the CSV files and the
    command line write ("inverse-dynamics", ...), and it compares equal to it."""

    #: joint forces along a prescribed motion
    INVERSE_DYNAMICS = "inverse-dynamics"
    #: a motion under gravity (and passive forces) alone
    FREE_FALL = "free-fall"
    #: a motion under given joint forces tau(t, q, qd)
    SIMULATION = "simulation"

    @property
    def label(self) -> str:
        """For display: "Inverse dynamics", "Free fall", "Simulation"."""
        return self.value.replace("-", " ").capitalize()


@dataclass(frozen=True, eq=False)
class Trajectory:
    """Samples of a motion. S samples, n joint values, nv joint rates (n = nv = the
    joints of a model with one-degree-of-freedom joints only; a spherical or free joint
    has a quaternion in q and three angular rates, `core.kernels.joints`).

    t      : (S,)    time, s
    q      : (S, n)  joint values, rad / m (unit quaternions [qx, qy, qz, qw])
    qd     : (S, nv) joint rates, rad/s / m/s
    qdd    : (S, nv) joint accelerations, rad/s^2 / m/s^2
    tau    : (S, nv) joint torques / forces, N m / N; a simulation's applied forces
             (driving forces - damping + end stops)
    energy : (S, 3) kinetic, potential, total energy, J; in a simulation with end stops
             the potential energy holds the stops' spring energy too
    kind   : what the run computed (`RunKind`; a string is taken as its value)
    cut_forces    : (S, m) a mechanism's cut-joint forces (Lagrange multipliers) along
                    its m closure rows, N / N m (`constraint_row_labels`); (S, 0) for
                    a tree or arm
    loop_residual : (S,) the largest closure error |Phi| of the sample, m or rad
                    (zeros without loops)
    stop_forces   : (S, nv) the joints' end stops' share of tau, N m / N (> 0 pushes
                    the joint value up; zeros where no stop touches, or without stops)
    warnings      : what the run found worth saying before it started (a prismatic
                    joint with nothing to stop it, a joint starting past its limit);
                    every chunk of a run carries them
    pull          : (S, 11) a run with a pull (`simulate(..., pull=...)`, `core.sim.pull`),
                    per sample: [link, p_x, p_y, p_z, x*_x, x*_y, x*_z, F_x, F_y, F_z, P]
                    = the pulled link (1-based; 0 while not pulling), the grabbed point
                    p and the target x* (base frame, m), the spring-damper's force F on
                    the link at p (N) and its power F . v_p (W); all zero while not
                    pulling. None for a run without a pull. (`core.sim.pull.PULL_LINK`,
                    `PULL_AT`, `PULL_TARGET`, `PULL_FORCE`, `PULL_POWER` index it.)
                    `energy` stays the arm's own: the pull's work is not in it.
    stop_contacts : (nv, 2, 3) a simulation with end stops: per joint and side (0 lower,
                    1 upper) [hits, peak force (N m / N), deepest penetration (rad / m)]
                    counted by the integrator at every accepted step from the start to
                    this chunk's end (`core.kernels.passive.record_stop_contacts`): a
                    bounce between two samples is in it. None for other runs.
    momentum      : (S, 9) a simulation's whole-system mass centre (m), linear momentum
                    (kg m/s) and angular momentum about the mass centre (kg m^2/s), base
                    frame (`core.algorithms.momentum`); read through `center_of_mass`,
                    `linear_momentum`, `angular_momentum`. None for other runs.
    element_forces: (S, ne) a simulation of a model with force elements: each element's
                    force, N (a spring-damper's tension, a tyre's push;
                    `core.kernels.elements`); its springs' energy is in `energy`.
                    None without force elements.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    energy: np.ndarray
    kind: RunKind = RunKind.INVERSE_DYNAMICS
    cut_forces: np.ndarray | None = None
    loop_residual: np.ndarray | None = None
    stop_forces: np.ndarray | None = None
    warnings: tuple[str, ...] = ()
    pull: np.ndarray | None = None
    stop_contacts: np.ndarray | None = None
    momentum: np.ndarray | None = None
    element_forces: np.ndarray | None = None

    def __post_init__(self) -> None:
        S = self.t.shape[0]
        object.__setattr__(self, "kind", RunKind(self.kind))
        if self.cut_forces is None:
            object.__setattr__(self, "cut_forces", np.zeros((S, 0)))
        if self.loop_residual is None:
            object.__setattr__(self, "loop_residual", np.zeros(S))
        if self.stop_forces is None:
            object.__setattr__(self, "stop_forces", np.zeros(self.qd.shape))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    @property
    def n(self) -> int:
        """Joint values per sample (the joints, for one-degree-of-freedom joints)."""
        return self.q.shape[1]

    @property
    def center_of_mass(self) -> np.ndarray | None:
        """(S, 3) the whole system's mass centre, m (None if not recorded)."""
        return None if self.momentum is None else self.momentum[:, 0:3]

    @property
    def linear_momentum(self) -> np.ndarray | None:
        """(S, 3) kg m/s, base frame (None if not recorded)."""
        return None if self.momentum is None else self.momentum[:, 3:6]

    @property
    def angular_momentum(self) -> np.ndarray | None:
        """(S, 3) about the mass centre, kg m^2/s, base frame (None if not recorded)."""
        return None if self.momentum is None else self.momentum[:, 6:9]

    def __len__(self) -> int:
        return self.t.shape[0]

    @classmethod
    def empty(cls, n: int, kind: RunKind | str, m: int = 0, warnings: tuple[str, ...] = (),
              pulled: bool = False, nv: int | None = None, recorded: bool = False,
              ne: int = 0) -> "Trajectory":
        """No samples; `pulled`: with an empty `pull` column (a run with a pull); nv
        rates (default n); `recorded`: with empty momentum columns; ne force elements."""
        z = np.zeros((0, n))
        r = z if nv is None else np.zeros((0, nv))
        return cls(np.zeros(0), z, r, r, r, np.zeros((0, 3)), kind, np.zeros((0, m)),
                   np.zeros(0), r, warnings, np.zeros((0, PULL_COLUMNS)) if pulled else None,
                   momentum=np.zeros((0, 9)) if recorded else None,
                   element_forces=np.zeros((0, ne)) if ne else None)

    @staticmethod
    def bytes_per_sample(n: int, m: int = 0, pulled: bool = False, nq: int | None = None,
                         ne: int = 0) -> int:
        """The memory of one sample of a Trajectory of n joint rates (nq joint values,
        default n), m closure rows and ne force elements (with a pull: its columns too),
        bytes: every field above is float64."""
        nq = n if nq is None else nq
        return 8 * (1 + nq + 4 * n + 3 + m + 1 + ne + 9 + (PULL_COLUMNS if pulled else 0))

    @classmethod
    def concatenate(cls, parts: Sequence["Trajectory"]) -> "Trajectory":
        """Join chunks in time order (the kind and n of the first; the warnings of all,
        each once; the stop contacts of the last that has them). Columns whose chunks
        are consecutive rows of one array (a stepper's whole-run columns,
        `core.sim.simulation`) are joined without a copy (`joined_rows`)."""
        parts = [p for p in parts if p is not None]
        if not parts:
            raise ValueError("nothing to concatenate")
        kind = parts[0].kind
        fields = ("t", "q", "qd", "qdd", "tau", "energy", "cut_forces", "loop_residual",
                  "stop_forces")
        joined = {f: joined_rows([getattr(p, f) for p in parts]) for f in fields}
        if any(p.pull is not None for p in parts):  # a part without one: not pulled
            width = next(p.pull.shape[1] for p in parts if p.pull is not None)
            joined["pull"] = joined_rows([p.pull if p.pull is not None
                                          else np.zeros((len(p), width)) for p in parts])
        for f in ("momentum", "element_forces"):  # recorded by every part, or not at all
            if all(getattr(p, f) is not None for p in parts):
                joined[f] = joined_rows([getattr(p, f) for p in parts])
        warnings = tuple(dict.fromkeys(w for p in parts for w in p.warnings))
        counted = [p.stop_contacts for p in parts if p.stop_contacts is not None]
        return cls(kind=kind, warnings=warnings, stop_contacts=counted[-1] if counted else None,
                   **joined)

    def at(self, time: float) -> np.ndarray:
        """Joint values at `time` (s), linearly interpolated, clamped to the ends; (n,).

        One search for the two samples around `time`, then one blend of their rows (as
        `np.interp` does column by column: that copied each column of q whole, 10 ms a
        playback frame for the human's 46 columns of a 600 s run, issue #23)."""
        if len(self) == 0:
            raise ValueError("empty trajectory")
        t, q = self.t, self.q
        if not time > t[0]:  # (and a NaN time: the first sample)
            return q[0].copy()
        if time >= t[-1]:
            return q[-1].copy()
        k = int(np.searchsorted(t, time, side="right"))  # t[k-1] <= time < t[k]
        s = (time - t[k - 1]) / (t[k] - t[k - 1])
        return q[k - 1] + s * (q[k] - q[k - 1])


def joined_rows(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """`np.concatenate(arrays)` along the first axis; but when the non-empty ones are
    C-ordered views of consecutive rows of one array, the view of all those rows: no
    copy, and the result shares their memory.

    A run's chunks are such views when its stepper fills whole-run columns
    (`core.sim.simulation.Dop853Stepper`): joining the human's 600 s fall (115 MB) was
    a copy of 0.6 s that held Python's lock, the window waiting for it (issue #23)."""
    rows = [a for a in arrays if a.shape[0]]
    if len(rows) < 2:
        return np.concatenate(arrays)
    first = rows[0]
    end = first.__array_interface__["data"][0]
    for a in rows:
        if (not a.flags.c_contiguous or a.base is None or a.base is not first.base
                or a.dtype != first.dtype or a.shape[1:] != first.shape[1:]
                or a.nbytes == 0 or a.__array_interface__["data"][0] != end):
            return np.concatenate(arrays)
        end += a.nbytes
    total = sum(a.shape[0] for a in rows)
    return np.lib.stride_tricks.as_strided(first, (total, *first.shape[1:]), first.strides)


def sample_count(duration: float, dt_out: float) -> int:
    """The number of samples of `output_grid(duration, dt_out)` (computed without it).
    Raises ArgumentError for a duration or dt_out that is not a finite number > 0, or
    that asks for more than MAX_SAMPLES steps."""
    duration = positive_number(duration, "duration")
    dt_out = positive_number(dt_out, "dt_out")
    ratio = duration / dt_out  # (inf when it overflows: refused below, never converted)
    if not ratio <= MAX_SAMPLES:
        raise ArgumentError(f"duration / dt_out = {duration:g} s / {dt_out:g} s asks for more "
                            f"than {MAX_SAMPLES:,} samples; use a larger dt_out or a shorter "
                            "duration")
    return max(1, math.ceil(ratio - 1e-9)) + 1


def output_grid(duration: float, dt_out: float) -> np.ndarray:
    """Regular sample times 0..duration (s), step <= dt_out, ending exactly at duration;
    `sample_count(duration, dt_out)` of them (its errors)."""
    count = sample_count(duration, dt_out)
    return np.linspace(0.0, float(duration), count)


def available_memory() -> int | None:
    """Bytes of memory a new allocation can have: on Linux `MemAvailable` of /proc/meminfo
    (free memory and the page cache the kernel can reclaim), else free memory,
    os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"); None where neither is
    known (then no run is refused for its memory)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def check_sample_memory(samples: int, bytes_per_sample: int, what: str = "the run") -> None:
    """Refuse, before any work, a run whose `samples` would need more than MEMORY_SHARE
    of the machine's available memory at `bytes_per_sample` each: an ArgumentError that
    names duration / dt_out, the memory needed and the memory available."""
    need = samples * bytes_per_sample
    have = available_memory()
    if have is not None and need > MEMORY_SHARE * have:
        raise ArgumentError(f"duration / dt_out asks for {samples:,} samples: {what} would "
                            f"need about {need / 1e9:.3g} GB, more than {MEMORY_SHARE:.0%} of "
                            f"the {have / 1e9:.3g} GB this machine has available; use a "
                            "larger dt_out or a shorter duration")
