"""The whole system's mass centre and momentum (any model: arms, trees, floating bases).

    c = sum m_k c_k / m                      the mass centre, m
    L = sum m_k c_k'                         the linear momentum, kg m/s
    H = sum I_k w_k + m_k (c_k - c) x c_k'   the angular momentum about c, kg m^2/s

all in the base (world) frame, from the link quantities and twists of the DeNOC
recursions (`core.kernels.denoc.momentum_kernel`). Under uniform gravity and no other
external force, H of a free-floating system is conserved and c follows a parabola
(c'' = g): the free-fall tests and the window's floating runs rely on both.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.data import thread_workspace
from ..kernels.dynamics import momentum_batch
from ..model.arguments import finite_result, joint_rows, model_of


@dataclass(frozen=True)
class Momentum:
    """The momentum of the whole system at one state, or at S states (arrays (S, 3)).

    linear  : (3,) kg m/s, base frame
    angular : (3,) kg m^2/s, about the mass centre, base frame
    center_of_mass : (3,) m, base frame
    """

    linear: np.ndarray
    angular: np.ndarray
    center_of_mass: np.ndarray


def _momentum_rows(model, q, v) -> tuple[np.ndarray, bool]:
    k = model_of(model).kernel
    (Q, V), single = joint_rows((k.nq, k.nv), q=q, v=v)
    out = np.empty((Q.shape[0], 9))
    momentum_batch(k.F, k.I, thread_workspace(k), Q, V, out)
    return finite_result(out, "the momentum"), single


def momentum(model, q, v) -> Momentum:
    """The linear momentum and the angular momentum about the mass centre at (q, v).

    q : (nq,) joint values, or (S, nq); v : (nv,) joint rates, or (S, nv).
    Returns a `Momentum` of (3,) vectors, or of (S, 3) arrays for S states.
    """
    out, single = _momentum_rows(model, q, v)
    if single:
        out = out[0]
    return Momentum(linear=out[..., 3:6], angular=out[..., 6:9],
                    center_of_mass=out[..., 0:3])


def center_of_mass(model, q) -> np.ndarray:
    """The whole system's mass centre at q (nq,), base frame, m: (3,); (S, 3) for q of
    shape (S, nq)."""
    k = model_of(model).kernel
    q = np.asarray(q, dtype=float) if not isinstance(q, np.ndarray) else q
    v = np.zeros(k.nv) if np.ndim(q) < 2 else np.zeros((np.shape(q)[0], k.nv))
    out, single = _momentum_rows(model, q, v)
    return out[0, 0:3] if single else out[:, 0:3]
