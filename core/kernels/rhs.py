"""The right-hand side of a run and what it records per sample (compiled).

`accelerations` is the qdd half of f(t, y), the equations of motion for the state
y = [q; qd] (seed 001 eq. 16a), which the integrator's right-hand side
(`core.kernels.dop853.rhs`) calls; `sample_quantities` computes what a run records at
its output samples in one pass; `project_samples` keeps samples of a mechanism with
loops on its loops.
"""
from __future__ import annotations

from . import denoc
from .buffers import compiled_kernel, ir_inlined_kernel
from .charts import chart_origin
from .constrained import closed_forward_dynamics, project_onto_loops
from .data import data_views
from .elements import element_wrenches
from .layout import model_views
from .loops import closure_residual
from .passive import applied_joint_forces
from .pull import LINK as PULL_ACTIVE
from .pull import pulled_wrenches, record_pull


@ir_inlined_kernel
def accelerations(mv, ws, q, x, qd, tau, passive, f_ext, qdd, loops):
    """qdd (nv,) at (q (nq,), qd (nv,)) under tau - c qd + the end stops' forces, the
    stops reading the joints' values per rate in x (nv,) (q itself when nq == nv; the
    chart of `core.kernels.charts` otherwise), with the force elements' wrenches
    (`core.kernels.elements`); loops: `core.kernels.constrained.loops_of` the model.
    Returns -1 or the failure code."""
    D = data_views(mv, ws)
    applied = D.tau
    applied_joint_forces(passive, x, qd, tau, applied, D.stop)
    if mv.ne > 0:  # the force elements' wrenches join f_ext
        f_ext, _ = element_wrenches(mv, D, q, qd, f_ext)
    if mv.m > 0:  # loops: the accelerations that keep them closed (inlined, as the
        # tree's: a compiled call passed the model's views member by member, a quarter of
        # a four-bar's evaluation: 1.3 us, 0.95 inlined)
        return closed_forward_dynamics(loops, mv, ws, q, qd, applied, f_ext, qdd)
    return denoc.forward_dynamics_tree_inline(mv, ws, q, qd, applied, f_ext, mv.gravity, qdd)


@compiled_kernel
def sample_quantities(F, I, ws, Y, passive, f_ext, pull, applied, stop, qdd, E, lam, pulled,
                      elements, momenta, loops=None):
    """What a run records at each output sample, in one pass per sample, for the states
    Y (S, nq + nv) = [q; qd] under the passive joint forces `passive` (`core.kernels.passive`), the
    link wrenches f_ext (n, 6) and the pull of the buffer `pull` (`core.sim.pull`):

    applied (S, nv) in: the driving forces tau(t, q, qd); out: the applied joint forces
            tau - c qd + the end stops' forces, N m / N
    stop    (S, nv) out: the end stops' forces alone
    qdd     (S, nv) out: the accelerations (keeping the loops closed, with their
            multipliers in lam (S, m))
    E       (S, 3) out: kinetic, potential (gravity, the stops' and the force elements'
            springs), total energy (J), from the same pass's link quantities and twists.
    elements (S, ne) out: each force element's force (`core.kernels.elements`), N
    momenta (S, 9) out: the mass centre, linear momentum and angular momentum about the
            mass centre (`core.kernels.denoc.energy_momentum_kernel`)
    pulled  (S, PULL_COLUMNS) out: the pull at the sample [link, p, x*, F, P]
            (`core.sim.pull`; zeros while the buffer holds none).
    loops   `core.kernels.constrained.loops_of` the model.
    Returns -1, or s * (n + m) + the failure code of sample s (a joint < n, or n + a
    loop row)."""
    mv = model_views(F, I)
    n, m, nq = mv.n, mv.m, mv.nq
    D = data_views(mv, ws)
    for s in range(Y.shape[0]):
        q, qd = Y[s, :nq], Y[s, nq:]
        x = q  # the joints' values per rate, for the stops
        if nq != mv.nv:
            x = D.x
            chart_origin(mv, q, x)
        V_stop = applied_joint_forces(passive, x, qd, applied[s], applied[s], stop[s])
        wrenches = f_ext
        if pull[PULL_ACTIVE] > 0.0:  # f_ext + the pull's wrench at this state
            wrenches = pulled_wrenches(mv, pull, q, qd, f_ext)
        record_pull(pull, pulled[s])
        V_elements = 0.0
        if mv.ne > 0:
            wrenches, V_elements = element_wrenches(mv, D, q, qd, wrenches)
            for e in range(mv.ne):
                elements[s, e] = D.element_force[e]
        if m > 0:
            bad = closed_forward_dynamics(loops, mv, ws, q, qd, applied[s], wrenches, qdd[s])
            for r in range(m):
                lam[s, r] = D.lam[r]
        else:
            bad = denoc.forward_dynamics_tree_inline(mv, ws, q, qd, applied[s], wrenches,
                                                     mv.gravity, qdd[s])
        if bad >= 0:
            return s * (n + m) + bad
        # the pass left the link quantities and the twists t at (q, qd)
        T, V = denoc.energy_momentum_kernel(mv, D, mv.gravity, qd, momenta[s])
        E[s, 0] = T
        E[s, 1] = V + V_stop + V_elements
        E[s, 2] = T + V + V_stop + V_elements
    return -1


@compiled_kernel
def project_samples(F, I, ws, Y, tol, residual):
    """Project every state row of Y (S, nq + nv) onto the loops (in place) and write the
    largest closure error |Phi| left in each into residual (S,)."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    Phi = D.Phi
    nq = mv.nq
    for s in range(Y.shape[0]):
        project_onto_loops(mv, ws, Y[s, :nq], Y[s, nq:], tol)
        denoc.link_quantities(mv, D, Y[s, :nq])
        closure_residual(mv, D, Y[s, :nq], Phi)
        err = 0.0
        for r in range(mv.m):
            err = max(err, abs(Phi[r]))
        residual[s] = err
