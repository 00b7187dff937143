"""Inverse and forward dynamics of any model: a serial arm, a tree, or chains with loops.

`inverse_dynamics` and `forward_dynamics` take a model (`core.model`) and joint arrays
in SI units (rad, m, rad/s, N m, N), in the model's joint order: (n,) for one state or
(T, n) for a batch. A tree (no loops) runs the DeNOC recursions of
`core.algorithms.tree_dynamics`; with loops, the motion keeps them closed
(`core.algorithms.closed_chains`). The common call, one state of a tree without
external wrenches, goes straight to a compiled kernel that checks lengths and
finiteness itself (`core.kernels.dynamics`); anything else takes the checked path,
which names the argument that is wrong.

External wrenches (`f_ext`): a wrench [n_x, n_y, n_z, f_x, f_y, f_z] (N m, N) that the
environment applies to a link, moment about the origin of that link's own frame, in
the base frame. Shape (6,) puts it on the last link (the serial arm's tool); (n, 6)
gives one per link; batches add a leading T axis: (T, 6) or (T, n, 6).
"""
from __future__ import annotations

import numpy as np

from ..kernels.buffers import compile_and_call
from ..kernels.data import thread_workspace
from ..kernels.dynamics import (RESULT_NOT_FINITE, constrained_state_kernel,
                                forward_dynamics_state_kernel, inverse_dynamics_state_kernel)
from ..model.arguments import finite_result, joint_rows, joint_vector, link_wrenches, model_of
from .closed_chains import (closed_chain_inverse_dynamics, constrained_failure,
                            constrained_forward_dynamics)
from .tree_dynamics import singular_error, tree_forward_dynamics, tree_inverse_dynamics


def _workspace(k):
    """The calling thread's workspace for the kernel model k, kept on k for the fast path
    (which reads `k.per_thread.workspace` itself: a function call costs it 5 %)."""
    ws = k.per_thread.workspace = thread_workspace(k)
    return ws


def inverse_dynamics(model, q, qd, qdd, f_ext=None) -> np.ndarray:
    """Joint torques / forces by the DeNOC two-recursion algorithm (RIDIM).

    q, qd, qdd : shape (n,) for one state or (T, n) for a trajectory;
                 rad, rad/s, rad/s^2 (m, m/s, m/s^2 for prismatic joints).
    f_ext      : optional external wrenches (module docstring).
    Returns tau with the shape of q: N m for revolute, N for prismatic joints.
    Gravity enters as the base acceleration -g (seed 001 eq. 17).

    With loops (a closed-chain mechanism) the motion must keep the loops closed;
    the result is the force at each actuated joint, zero at passive joints (Saha's
    Sec 4 subsystem recursion, `core.algorithms.closed_chains.closed_chain_inverse_dynamics`).
    Raises ArgumentError naming an argument of the wrong shape or not finite, and
    ResultOverflowError when finite inputs overflow.
    """
    try:  # model_of(model), inline on the common call (a function call is 2 % of it)
        m = model.model
    except AttributeError:
        m = model_of(model)  # the error naming what came instead of a model
    k = m.kernel
    if f_ext is None and not k.nl:
        # the common call, one state: straight to the kernel (closed to argument types
        # other than float vectors, refused in ~1 us: a batch (T, n) or a list; it checks
        # lengths and finiteness), else checked below. No test of q in Python: each
        # costs the call a few percent.
        tau = np.empty(k.nv)
        try:
            ws = k.per_thread.workspace
        except AttributeError:
            ws = _workspace(k)
        try:
            code = inverse_dynamics_state_kernel(k.F, k.I, ws, q, qd, qdd, tau)
        except TypeError:
            code = None
            if np.ndim(q) == 1:
                q, qd, qdd = (joint_vector(q, k.nq, "q"), joint_vector(qd, k.nv, "qd"),
                              joint_vector(qdd, k.nv, "qdd"))
                code = compile_and_call(inverse_dynamics_state_kernel, k.F, k.I, ws, q, qd,
                                        qdd, tau)
        if code == -1:
            return tau
        if code == RESULT_NOT_FINITE:
            finite_result(tau, "the joint forces tau")
    if k.nl:
        (Q, Qd, Qdd), single = joint_rows(k.n, q=q, qd=qd, qdd=qdd)
        W = link_wrenches(f_ext, k.n, Q.shape[0])
        rows = np.array([closed_chain_inverse_dynamics(
            m, Q[s], Qd[s], Qdd[s], f_ext=W[s if W.shape[0] > 1 else 0]).tau
            for s in range(Q.shape[0])])
        tau = rows[0] if single else rows
    else:
        tau = tree_inverse_dynamics(m, q, qd, qdd, f_ext)
    return finite_result(tau, "the joint forces tau")


def forward_dynamics(model, q, qd, tau, method: str = "denoc", f_ext=None) -> np.ndarray:
    """Joint accelerations qdd from q, qd and joint forces tau.

    q, qd, tau : shape (n,) for one state, or (T, n) for T states (method "denoc");
                 rad, rad/s, N m (m, m/s, N for prismatic joints). tau is the force
                 applied at every tree joint (zero where nothing drives a joint).
    method="denoc"     : the O(n) recursive UDU^T algorithm (seed 001 eqs. 18-21,
                         seed 000 App. B); no n x n matrix is formed.
    method="composite" : GIM from composite-body inertias (seed 000 eqs. 23b-24)
                         and a Cholesky solve, O(n^3).
    f_ext              : optional external wrenches (module docstring).
    With loops, the accelerations keep them closed: "denoc" solves the constrained
    system with the UDU^T factors (Lagrange multipliers), "minimal" uses the minimal
    coordinates R^T M R (see `core.algorithms.closed_chains`).
    Returns qdd with the shape of q. Raises SingularMassMatrixError if the GIM is
    singular (naming the joint whose articulated-inertia pivot vanished),
    ArgumentError naming an argument of the wrong shape or not finite, and
    ResultOverflowError when finite inputs overflow.
    """
    try:  # model_of(model), inline as in inverse_dynamics
        m = model.model
    except AttributeError:
        m = model_of(model)
    k = m.kernel
    if f_ext is None and method == "denoc":
        # the common call, one state: straight to the kernel (as in inverse_dynamics;
        # it checks lengths and finiteness), else checked first
        qdd = np.empty(k.nv)
        one = constrained_state_kernel if k.nl else forward_dynamics_state_kernel
        try:
            ws = k.per_thread.workspace
        except AttributeError:
            ws = _workspace(k)
        try:
            code = one(k.F, k.I, ws, q, qd, tau, qdd)
        except TypeError:
            code = None
            if np.ndim(q) == 1:
                q, qd, tau = (joint_vector(q, k.nq, "q"), joint_vector(qd, k.nv, "qd"),
                              joint_vector(tau, k.nv, "tau"))
                code = compile_and_call(one, k.F, k.I, ws, q, qd, tau, qdd)
        if code == -1:
            return qdd
        if code == RESULT_NOT_FINITE:
            finite_result(qdd, "the accelerations qdd")
        if code is not None and code >= 0:
            raise constrained_failure(m, q, code) if k.nl else singular_error(m, q, code)
    if k.nl:
        qdd = constrained_forward_dynamics(m, q, qd, tau, method=method, f_ext=f_ext)
    else:
        qdd = tree_forward_dynamics(m, q, qd, tau, method=method, f_ext=f_ext)
    return finite_result(qdd, "the accelerations qdd")
