"""The DOP853 stepper: buffers and set-up around the compiled kernels of `core.kernels.dop853`.

`Dop853State` holds one integration's state and advances it (`advance`); `integrate`
runs one to the end (tests, benchmarks).
"""
from __future__ import annotations

import numpy as np

from ..kernels.charts import chart_of, q_of_chart
from ..kernels.constrained import loops_of
from ..kernels.data import thread_workspace
from ..kernels.dop853 import (N_STAGES_EXTENDED, STATUS_RUNNING, STATUS_SINGULAR,
                              STATUS_TORQUE_FAILED, TORQUE_FAILED, dop853_advance,
                              initial_step, new_scratch, rhs,
                              rhs_address)
from ..kernels.passive import passive_table, record_stop_contacts, stop_contacts
from ..kernels.pull import pull_buffer
from ..kernels.torque import torque_function
from ..model.arguments import kernel_of, link_wrenches


class Dop853State:
    """Buffers and set-up for `dop853_advance` on one robot.

    `Dop853State(robot, y0, t0, t_bound, rtol, atol, tau, damping, f_ext=None,
    max_step=inf, first_step=None, stops=None)` evaluates f0 = f(y0) and the initial step
    (SciPy's rule; 2 RHS evaluations, counted in stats[0]). tau: None, a constant (n,)
    vector or a function tau(t, q, qd) (`core.kernels.torque.torque_function`; `torque_error`
    then holds what a Python function raised). damping: (n,) viscous damping; stops:
    None or the (n, 4) rows [q_lo, q_hi, K, d] of the joints' end stops; both go into
    the table `passive` (`core.algorithms.dynamics.passive_table`). It raises nothing for a singular
    start or a failed torque function: that is reported through `init_status` (-2, -4)
    and `init_info` (joint), and `advance` then returns (init_status, next_out, info)
    without stepping.

    pull: the run's pull buffer (`core.sim.pull.pull_buffer`; default: a new one, no pull):
    every right-hand side evaluation adds its spring-damper's wrench while it holds one.
    Whoever changes it between `advance` calls calls `pull_changed()`.

    y0 = [q0; qd0] (nq + nv). The integrator's state y = [x; qd] (2 nv) holds q itself
    (x = q) when nq == nv, and otherwise a chart x of q around the base chart[0]
    (`core.kernels.charts`; `q` gives the configuration).

    Attributes: t, h_abs (properties over `state`), q, y, f (2 nv,), chart (None or
    (2, nq): the base, a row for q), passive (nv, PASSIVE_COLUMNS), pull, K (16, 2 nv),
    scratch (SCRATCH_ROWS, 2 nv), stats int64 [nfev, accepted, rejected, dense builds],
    contacts (nv, 2, CONTACT_COLUMNS): the end stops' contacts at y0 and every accepted
    state (`core.kernels.passive`).
    """

    def __init__(self, robot, y0, t0: float, t_bound: float, rtol: float, atol: float,
                 tau=None, damping=None, f_ext=None, max_step: float = np.inf,
                 first_step: float | None = None, stops: np.ndarray | None = None,
                 pull: np.ndarray | None = None) -> None:
        k = kernel_of(robot)
        n, nq, nv = k.n, k.nq, k.nv
        self.MF, self.MI = k.F, k.I  # the model's kernel buffers
        self.ws = thread_workspace(k)
        self.n, self.nq, self.nv = n, nq, nv
        m = 2 * nv
        self.torque, self.tau = torque_function(tau, nv)
        self.passive = passive_table(nv, damping, stops)
        self.f_ext = np.ascontiguousarray(link_wrenches(f_ext, n, 1)[0])  # (n, 6) per link
        self.pull = pull_buffer(n, nv) if pull is None else pull
        if not t_bound > t0:
            raise ValueError("integration must run forward: t_bound > t0")
        y0 = np.array(y0, dtype=np.float64).reshape(nq + nv)
        if nq == nv:  # q is its own chart
            self.chart = None
            self.y = y0
        else:  # the integrator steps a chart of q around chart[0] (core.kernels.charts)
            self.chart = np.empty((2, nq))
            self.y = np.empty(m)
            self.y[nv:] = y0[nq:]
            chart_of(self.MF, self.MI, y0[:nq], self.y[:nv])
            q_of_chart(self.MF, self.MI, y0[:nq], self.y[:nv], self.chart[0])  # unit quaternions
        self.f = np.zeros(m)
        self.K = np.zeros((N_STAGES_EXTENDED, m))
        self.scratch = new_scratch(m)
        self.stats = np.zeros(4, dtype=np.int64)
        self.contacts = stop_contacts(nv)
        record_stop_contacts(self.passive, self.y, self.contacts)
        # the last entry: tolerance of the projection onto the loops (0 = none, trees)
        project_tol = max(1e-14, 1e-3 * atol) if k.m else 0.0
        self.loops = loops_of(k.m)  # None: the kernels compiled without the loops' code
        self.state = np.array([t0, 0.0, t_bound, rtol, atol, max_step, project_tol],
                              dtype=np.float64)
        self.init_status, self.init_info = 0, -1
        # rhs's compiled code for these buffers, which the integrator's kernels call
        self.rhs = rhs_address(self.MF, self.MI, self.ws, self.torque, self.y, self.tau,
                               self.passive, self.f_ext, self.pull, self.f, self.chart,
                               self.loops)
        bad = rhs(self.MF, self.MI, self.ws, self.torque, float(t0), self.y, self.tau,
                  self.passive, self.f_ext, self.pull, self.f, self.chart, self.loops)
        self.stats[0] += 1
        if bad == -1 and first_step is None:
            h, bad = initial_step(self.rhs, self.MF, self.MI, self.ws, self.torque, self.tau,
                                  self.passive, self.f_ext, float(t0), self.y, self.f,
                                  float(t_bound), float(rtol), float(atol), float(max_step),
                                  self.scratch[0], self.scratch[1], self.pull, self.chart,
                                  self.loops)
            self.stats[0] += 1
        elif bad == -1:
            h = float(first_step)
        if bad != -1:
            self.init_status = STATUS_TORQUE_FAILED if bad == TORQUE_FAILED else STATUS_SINGULAR
            self.init_info = int(bad) if bad >= 0 else -1
            return
        self.state[1] = h

    @property
    def t(self) -> float:
        return float(self.state[0])

    @property
    def torque_error(self) -> BaseException | None:
        """What a Python torque function raised (the run stopped with status -4)."""
        return getattr(self.torque, "error", None)

    @property
    def h_abs(self) -> float:
        return float(self.state[1])

    @property
    def q(self) -> np.ndarray:
        """The current joint values (nq,) (from the chart for joints of several degrees
        of freedom)."""
        if self.chart is None:
            return self.y[:self.nv].copy()
        q = np.empty(self.nq)
        q_of_chart(self.MF, self.MI, self.chart[0], self.y[:self.nv], q)
        return q

    def pull_changed(self) -> int:
        """After a change of `pull` between two `advance` calls: f = f(t, y) again under
        the new force (the steps reuse the last stage as the next step's first, which
        the change made stale). Returns -1 or the failure code of `rhs`."""
        bad = rhs(self.MF, self.MI, self.ws, self.torque, self.t, self.y, self.tau,
                  self.passive, self.f_ext, self.pull, self.f, self.chart, self.loops)
        self.stats[0] += 1
        return int(bad)

    def advance(self, t_out: np.ndarray, Y_out: np.ndarray, next_out: int, t_stop: float,
                max_steps: int = 2**62, huge: float = 1e10) -> tuple[int, int, int]:
        """One call of `dop853_advance`; returns (status, next_out, info)."""
        if self.init_status != 0:
            return self.init_status, next_out, self.init_info
        st, nxt, info = dop853_advance(self.rhs, self.MF, self.MI, self.ws, self.torque,
                                       self.tau, self.passive, self.f_ext, self.state, self.y,
                                       self.f, self.K, self.scratch, self.stats, t_out,
                                       int(next_out), Y_out, float(t_stop), int(max_steps),
                                       float(huge), self.pull, self.chart, self.contacts,
                                       self.loops)
        return int(st), int(nxt), int(info)


def integrate(robot, y0, t_out, rtol: float = 1e-9, atol: float = 1e-9, tau=None, damping=None,
              f_ext=None, huge: float = 1e10, chunk: float | None = None, max_step: float = np.inf,
              stops: np.ndarray | None = None):
    """Integrate from t_out[0] to t_out[-1]; returns (Y (S, nq + nv), status, info, stats,
    state).

    chunk: if given, advance in chunks of this length (t_stop = t + chunk) — same results.
    stops: None or the (n, 4) end-stop rows of `Dop853State`.
    Rows of Y past the failure point are left nan.
    """
    t_out = np.ascontiguousarray(t_out, dtype=np.float64)
    s = Dop853State(robot, y0, t_out[0], t_out[-1], rtol, atol, tau, damping, f_ext, max_step,
                    stops=stops)
    Y = np.full((t_out.shape[0], s.nq + s.nv), np.nan)
    nxt = 0
    while True:
        t_stop = t_out[-1] if chunk is None else s.t + chunk
        st, nxt, info = s.advance(t_out, Y, nxt, t_stop, huge=huge)
        if st != STATUS_RUNNING:
            return Y, st, info, s.stats.copy(), s
