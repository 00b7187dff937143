"""Per-call state of the kernels: one flat float buffer cut into the named fields of `Data`.

As Pinocchio's Data and MuJoCo's mjData: the model is never written; everything an
algorithm computes at one state lives here, one field per quantity with one meaning,
declared once in `DATA_FIELDS` (`core.kernels.fields`) with its shape and the equation
that fills it. Each thread owns its buffers (`thread_workspace`), so calls may run in
parallel threads. Kernels take the model views and the data: `(mv, D)`.

Sizes: n joints, nv joint rates, m active constraint rows, ne force elements; base
frame throughout.

{fields}
"""
from __future__ import annotations

import threading

import numpy as np

from .buffers import inlined_kernel
from .fields import Field, FieldTable

DATA_FIELDS = FieldTable("Data", __name__, ("n", "nv", "m", "ne"), (np.float64,), (
    Field("Rj", ("n", 3, 3), "DH frame 0 of each joint's row (joint k turns about / slides\n"
          "along its z)                                          (App. A)"),
    Field("Rl", ("n", 3, 3), "each link's own frame (the frame its DH row ends in)"),
    Field("oj", ("n", 3), "origin of Rj: O_k, on joint axis k"),
    Field("ol", ("n", 3), "origin of Rl"),
    Field("e", ("n", 3), "unit vector of joint axis k                          (eq. 11a)"),
    Field("d", ("n", 3), "O_k -> mass centre C_k                               (eq. 2a)"),
    Field("c", ("n", 3), "mass centre C_k"),
    Field("A", ("n", 3), "a_{k,λ} = O_λ - O_k (λ = parent(k)), the vector of the twist\n"
          "propagation A_{k,λ} = [[1, 0], [a x 1, 1]]           (eq. 11d)"),
    Field("M", ("n", 6, 6), "extended mass matrix of link k about O_k             (eq. 6)"),
    Field("M_tilde", ("n", 6, 6), "composite-body mass matrices            (seed 000 eq. 23b)"),
    Field("M_hat", ("n", 6, 6), "articulated-body inertias                        (eq. 19c)"),
    Field("t", ("n", 6), "twists at O_k                                        (eq. 11c)"),
    Field("tdot", ("n", 6), "twist rates at O_k                                   (eq. 17)"),
    Field("w", ("n", 6), "wrenches at O_k: inertia + children             (Sec 2.4.1)"),
    Field("psi_hat", ("nv", 6), "psi^_k = M^_k p_k, a row per rate (a block pivot's columns\n"
          "Psi^_k = M^_k P_k)                                 (eq. 19d)"),
    Field("eta", ("n", 6), "UDU^T solve, backward pass                        (eq. 19a)"),
    Field("mu", ("n", 6), "UDU^T solve, forward pass                          (eq. 21b)"),
    Field("no_wrench", ("n", 6), "zeros: no external wrench on any link; never written"),
    Field("S", ("nv", 6), "the columns of P_k of a joint of several degrees of freedom,\n"
          "a row per rate (core.kernels.joints)"),
    Field("L_hat", ("n", 6, 6), "a block pivot D_k = P_k^T Psi^_k = L diag(m^) L^T: its unit\n"
          "lower factor L (joints of several degrees of freedom)"),
    Field("m_hat", ("nv",), "m^_k = p_k^T psi^_k, the D of UDU^T (a block pivot's d)\n"
          "                                                    (eq. 19d)"),
    Field("phi_hat", ("nv",), "UDU^T solve                                       (eq. 19b)"),
    Field("phi", ("nv",), "right-hand side of the UDU^T solve: tau - ID(q, qd, 0)"),
    Field("zero", ("nv",), "zeros (qdd = 0 for the bias forces); never written"),
    Field("tau", ("nv",), "applied joint forces (simulation right-hand side):\n"
          "tau - c qd + stops"),
    Field("stop", ("nv",), "the end stops' share of tau       (core.kernels.passive)"),
    Field("qdd_free", ("nv",), "tree accelerations without the loops"),
    Field("dq", ("nv",), "a projection's correction of q or qd (project_onto_loops)"),
    Field("x", ("nv",), "the joints' values per rate: a chart's point of q\n"
          "(core.kernels.charts; the end stops read it)"),
    Field("g", (3,), "the gravity a call uses (the model's, or zeros)"),
    Field("cs", (3, "n"), "cos and sin of each DH row's theta, and theta (rad): the\n"
          "frames' trigonometry in one loop   (core.kernels.trig)"),
    Field("tmp66", (3, 6, 6), "scratch of the 6x6 recursions"),
    Field("s6", (4, 6), "scratch 6-vectors"),
    Field("G", (20, 3), "scratch of the loop kernels (core.kernels.loops names its rows)"),
    Field("Phi", ("m",), "loop-closure residual (m, rad)                      (Jalon 8.3)"),
    Field("gamma", ("m",), "J' qd: the rows' second derivative at qdd = 0, so\n"
          "J qdd + gamma = 0"),
    Field("Jqd", ("m",), "J qd: the rows' drift rate (project_onto_loops)"),
    Field("lam", ("m",), "Lagrange multipliers of the active rows (cut-joint forces)"),
    Field("rhs", ("m",), "right-hand side of the Delassus system"),
    Field("keep", ("m",), "1 where the Delassus pivot of a row is kept, 0 for a redundant\n"
          "row"),
    Field("chol", ("m",), "scratch of the pivoted Cholesky solve"),
    Field("J", ("m", "nv"), "loop Jacobian: J qd = time derivative of Phi"),
    Field("Y", ("m", "nv"), "rows of M^-1 J^T (m UDU^T solves)"),
    Field("delassus", ("m", "m"), "J M^-1 J^T"),
    Field("W", ("n", 6), "the link wrenches with the force elements' added\n"
          "(core.kernels.elements)"),
    Field("element_force", ("ne",), "each force element's force: a spring-damper's tension,\n"
          "a tyre's upward push, N"),
    Field("element_stretch", ("ne",), "a spring's length minus its free length; a tyre's\n"
          "compression (<= 0: off the road), m"),
))
Data = DATA_FIELDS.views_type
__doc__ = __doc__.replace("{fields}", DATA_FIELDS.describe())

_cut_data = DATA_FIELDS.cutter()


@inlined_kernel
def data_views(mv, ws):
    """Cut the workspace buffer ws of the model mv (`core.kernels.layout.model_views`)
    into the fields of Data (no copies, no reference counting; ws must outlive them;
    IndexError if it is too short for the model). Inlined, as `model_views`."""
    return _cut_data((mv.n, mv.nv, mv.m, mv.ne), (ws,))


def workspace_size(kernel) -> int:
    """Floats in a workspace buffer of the KernelModel `kernel`."""
    return DATA_FIELDS.lengths(n=kernel.n, nv=kernel.nv, m=kernel.m, ne=kernel.ne)[0]


def new_workspace(kernel) -> np.ndarray:
    """A fresh workspace buffer for the KernelModel `kernel`."""
    return np.zeros(workspace_size(kernel))


_local = threading.local()


def thread_workspace(kernel) -> np.ndarray:
    """This thread's reusable workspace buffer for models of `kernel`'s sizes."""
    key = (kernel.n, kernel.nv, kernel.m, kernel.ne)
    try:
        return _local.pool[key]
    except (AttributeError, KeyError):
        pool = _local.__dict__.setdefault("pool", {})
        ws = pool[key] = new_workspace(kernel)
        return ws


def data_of(kernel, ws: np.ndarray) -> Data:
    """The fields of a workspace buffer as numpy copies, from Python (for inspection)."""
    views = DATA_FIELDS.numpy_views((ws,), n=kernel.n, nv=kernel.nv, m=kernel.m,
                                    ne=kernel.ne)
    return Data(*(x.copy() if isinstance(x, np.ndarray) else x for x in views))
