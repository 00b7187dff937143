"""Loop closure in joint coordinates: residual, Jacobian, acceleration term, assembly.

A loop joint is the cut joint of a closed chain (Jalon & Bayo Sec 8.3; Saha seed 001
Sec 4); its closure is a few scalar rows Phi(q) = 0, with J(q) qd their rate and
J qdd + gamma their second derivative (the rows and the formulas: `core.kernels.loops`,
which computes them from the twists of the DeNOC recursions). Everything is in the base
frame. Redundant rows (a planar loop seen in 3D, the Bricard) are allowed: rows that
vanish identically are dropped when the model is compiled, and the solvers tolerate rows
that depend on others (the mobility comes from the rank, not from counting rows).
Assembly and the rank are `core.model.closure`, which compiling a model with loops uses
too; this module is their public face.
"""
from __future__ import annotations

import numpy as np

from ..kernels.layout import (ROW_AXIS_U, ROW_AXIS_V, ROW_GEAR, ROW_LINE_U, ROW_LINE_V,
                              ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z, ROW_ROLL)
from ..model.arguments import finite_result, model_of
from ..model.closure import (MAX_ASSEMBLY_ITERATIONS, RANK_TOL, assemble_pose, closure_values,
                             numerical_rank)

__all__ = ["loop_residual", "loop_jacobian", "loop_acceleration_term", "assemble", "mobility",
           "constraint_row_labels", "constraint_row_units", "numerical_rank", "RANK_TOL"]


def loop_residual(model, q) -> np.ndarray:
    """Closure residual Phi(q) of every active constraint row, (m,), m and rad.

    Empty for a tree or serial arm. Rows: see `constraint_row_labels`."""
    return closure_values(model_of(model), q, want=1)[0]


def loop_jacobian(model, q) -> np.ndarray:
    """The loop Jacobian J (m, nv): J qd is the rate of the closure residual."""
    return closure_values(model_of(model), q, want=2)[1]


def loop_acceleration_term(model, q, qd) -> np.ndarray:
    """gamma = J' qd, (m,): accelerations qdd keep the loops closed iff J qdd + gamma = 0."""
    return finite_result(closure_values(model_of(model), q, qd, want=4)[2],
                         "the acceleration term gamma")


_ROW_NAMES = {ROW_POINT_X: "x", ROW_POINT_Y: "y", ROW_POINT_Z: "z", ROW_AXIS_U: "axis u",
              ROW_AXIS_V: "axis v", ROW_LINE_U: "line u", ROW_LINE_V: "line v",
              ROW_ROLL: "roll", ROW_GEAR: "gear"}


def constraint_row_labels(model) -> list[str]:
    """A label per active row: "<loop name> <row>", e.g. "C x", "C axis u"."""
    m = model_of(model)
    v = m.kernel.views
    return [f"{m.loops[int(l)].name} {_ROW_NAMES[int(r)]}" for l, r in zip(v.row_loop, v.row_kind)]


def constraint_row_units(model) -> list[str]:
    """The unit of each active row's cut-joint force: "N" for point and line rows,
    "N m" for the axis and roll rows (and "m" / "rad" for their residuals); a gear row's
    is its second link's joint's: "N" on a prismatic joint (a rack), "N m" on a revolute."""
    m = model_of(model)
    v = m.kernel.views
    return ["N" if int(r) in (ROW_POINT_X, ROW_POINT_Y, ROW_POINT_Z, ROW_LINE_U, ROW_LINE_V)
            or (int(r) == ROW_GEAR and not m.is_revolute[int(v.loop_body[int(l), 1])])
            else "N m" for l, r in zip(v.row_loop, v.row_kind)]


def mobility(model, q=None) -> int:
    """Degrees of freedom at q (default q_home): nv - rank J(q)."""
    m = model_of(model)
    q = m.q_home if q is None else q
    return m.nv - numerical_rank(loop_jacobian(m, q))


def assemble(model, q, *, independent=None, tolerance: float | None = None,
             max_iterations: int = MAX_ASSEMBLY_ITERATIONS, branch=None) -> np.ndarray:
    """The closed pose (nq,) on the branch of the guess q (nq,), holding the independent
    joints exactly at the guess's values.

    The branch is that of the closed pose the guess's dependent joints reach when only
    the independent joints move (else of the closed pose nearest the guess); damped
    Newton over the dependent joints from the guess is kept if it stays on that branch
    (full steps, the dependent joints' Jacobian keeping its orientation), else the
    independent joints are carried from the branch's pose to the guess's values by
    continuation (docs/python-api.md, "Closing the loops"). Revolute joints stay on the
    guess's angle sheet. `independent` (joint indices) defaults to the model's
    (an empty list: the closed pose nearest the guess, every joint moving), `tolerance`
    (m, rad) to its assembly tolerance and must be at least what floating point can
    meet on the model (ArgumentError). Raises LoopClosureError naming the loop when the
    loops cannot be closed on the guess's branch, saying whether the guess is a singular
    pose or where the branch ends. A tree comes back unchanged.

    branch: a closed pose (nq,) whose branch to keep instead of the guess's own (a
    caller stepping from a closed pose, as an integrator or a drag, passes it: the
    guess's branch need not be searched for, which halves the cost of a small step);
    ArgumentError if its loops are not closed to the tolerance. A guess whose loops are
    closed already comes back as it is.
    """
    return assemble_pose(model_of(model), q, independent, tolerance, max_iterations, branch)
