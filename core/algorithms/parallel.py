"""Saha's DeNOC dynamics of parallel robots (seed 001 Sec 3, eqs. 24-36), general form.

A *parallel* mechanism here is what Saha's Sec 3.2 assumes (Fig. 10): n legs, each a
serial chain fixed to the base whose first joint (joint 1) is the only actuated one,
meeting one moving platform; as many legs as degrees of freedom. In ArmDyn's terms
(`core.model.mechanism`): every chain starts on the base; the platform is the last link of
one leg (the *carrier* leg: "the leg's last body m is rigidly the platform as seen
from that leg", eq. 24); every other leg's last link is joined to the platform by one
loop joint (revolute, spherical or prismatic), which counts as that leg's last passive
joint. The five-bar of Sec 3.5 is the case n = 2 with one revolute loop at the pin E
joining the two distal links. E, the platform point whose twist t_e = [w_e; v_e] the
legs share, is the loops' common point on the platform when they have one (the
five-bar's pin), else the origin of the platform link's own frame.

Notation (`core.kernels.denoc`, all in the base frame): p_i = [e_i; 0] (revolute) or [0; e_i]
(prismatic); A_{ei} = [[1, 0], [a_{ei} x 1, 1]] with a_{ei} = O_i - E; the twist the
motion of joint i alone gives the platform at E is

    p~_i = A_{ei} p_i = [e_i; (O_i - E) x e_i]   (revolute),   [0; e_i]  (prismatic).

Kinematics (eqs. 24-29, in the form exact for any number of passive joints per leg,
the printed recursion being exact only with one passive joint per leg). For leg l
with actuated joint 1 and passive joints 2..m (the loop joint last):

    t_e = p~_1 th'_1 + P~ th'_u,          P~ = [p~_2 ... p~_m]               (eq. 26)
    Delta = P~^T P~,   P^l = 1 - P~ Delta^-1 P~^T                      (eqs. 25, 27b)
    P^l t_e = P^l A_{e1} p_1 th'_1                                           (eq. 28)
    Phi t_e = sum_l P^l A_{e1}^l p_1^l th'^l_1,   Phi = sum_l P^l              (eq. 29a)
    t_e = J th'_a,   J = Phi^-1 [(P A_{e1} p_1)^1 ... (P A_{e1} p_1)^n]       (eq. 29b)
    th'_u^l = Delta^-1 P~^T (t_e - A_{e1} p_1 th'_1)                          (eq. 30)

The printed rank-1 recursion (eqs. 27, 30b-c, 31) is the case m = 2 of these. J
fails to exist exactly when Phi is singular: some platform twist is possible with
every actuator locked (a type-II singularity; the five-bar's distal links collinear).

Dynamics (eq. 33), in the implementable form of the notes: the tree joint rates are
q' = R th'_a and q'' = R th''_a + S_c (R from eq. 30, S_c from the same solve one
derivative up, see `_bias_accelerations`), the body twists t = N th'_a with
N = (dt/dq') R, and

    I = N^T M N = R^T M_tree R,
    h = N^T (M N' th'_a + W M E t) = R^T tau_tree(q, q', S_c)     (RIDIM, gravity as
                                                                   eq. 17's base
                                                                   acceleration)
    I th''_a + h = tau_a.

`parallel_denoc_matrices` builds N, M, t' and W M E t explicitly (eqs. 32-33) to show
they give the same I and h.

Public: `ParallelStructure`, `Leg`, `parallel_structure`, `is_parallel`,
`ParallelKinematics`, `parallel_kinematics`, `parallel_jacobian`, `PassiveRates`,
`parallel_passive_rates`, `parallel_assemble`, `parallel_dynamics`,
`parallel_forward_dynamics`, `parallel_inverse_dynamics`, `parallel_accelerations`,
`DeNOCMatrices`, `parallel_denoc_matrices`, `parallel_simulate`,
`parallel_run_inverse_dynamics`.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, MechanismError, SingularConfigurationError
from ..kernels.data import data_of, new_workspace
from ..kernels.dynamics import state_quantities_kernel
from ..kernels.layout import LOOP_PRISMATIC, LOOP_REVOLUTE, LOOP_SPHERICAL
from ..model.arguments import joint_vector, model_of
from .loops import assemble
from .tree_dynamics import mass_matrix, tree_inverse_dynamics

#: Phi = sum_l P^l is taken as singular (type II) when its smallest eigenvalue is below
#: this. Its eigenvalues lie in [0, n]; near a singularity the smallest one falls as
#: the square of the angle by which the pose misses it.
SINGULAR_TOL = 1e-12
#: A leg's passive columns P~ count as dependent when the smallest eigenvalue of
#: Delta = P~^T P~ is below this times its largest.
LEG_RANK_TOL = 1e-12
#: `parallel_simulate` stops when sqrt(lambda_min(Phi)), which falls linearly in time
#: as a motion runs into a type-II singularity, drops below this.
SIMULATION_SINGULAR_TOL = 1e-4
#: Largest change of an actuated joint per assembly step when `parallel_assemble`
#: walks from a guess to far-away actuator values (rad, or m for prismatic joints).
ASSEMBLY_STEP = math.radians(2.0)

_LOOP_NAMES = {LOOP_REVOLUTE: "revolute", LOOP_SPHERICAL: "spherical",
               LOOP_PRISMATIC: "prismatic"}


# ----------------------------------------------------------------------------------
# Structure: legs, platform, the point E (Sec 3.2's assumptions, checked)
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Leg:
    """One leg l of a parallel mechanism (Saha Fig. 10b).

    name    : the chain's name
    joints  : its tree joints (indices into q), joint 1 (the actuated one) first
    loop    : index of the loop joint joining its last link to the platform, or None
              for the carrier leg (whose last link is the platform)
    loop_type : "revolute", "spherical", "prismatic" or "" (carrier leg)
    """

    name: str
    joints: tuple[int, ...]
    loop: int | None
    loop_type: str

    @property
    def actuated(self) -> int:
        """The tree index of the leg's joint 1."""
        return self.joints[0]

    @property
    def passive(self) -> tuple[int, ...]:
        """The leg's passive tree joints 2..m (the loop joint is not a tree joint)."""
        return self.joints[1:]

    @property
    def loop_rates(self) -> int:
        """How many relative rates the loop joint adds (0 for the carrier leg)."""
        return {"": 0, "revolute": 1, "prismatic": 1, "spherical": 3}[self.loop_type]

    @property
    def last(self) -> int:
        """The tree index of the leg's last link."""
        return self.joints[-1]


@dataclass(frozen=True)
class ParallelStructure:
    """What Saha's Sec 3 needs to know about a mechanism.

    legs     : the legs, in the mechanism's chain order (= the order of theta_a)
    carrier  : index into legs of the leg whose last link is the platform
    platform : tree index of the platform link
    e_point  : E in the platform link's own frame, m
    actuated : the tree indices of the actuated joints, leg by leg
    """

    legs: tuple[Leg, ...]
    carrier: int
    platform: int
    e_point: tuple[float, float, float]
    actuated: tuple[int, ...]

    @property
    def n_legs(self) -> int:
        return len(self.legs)


def parallel_structure(mech) -> ParallelStructure:
    """The legs, the platform and E of a parallel mechanism (Saha Sec 3.2's form).

    Raises MechanismError naming why when `mech` is not of that form: no loops; a
    chain not on the base; a joint other than a leg's first one actuated, or a first
    one not actuated; a loop to the base or not at a leg's last link; loops that do
    not meet one platform link; a leg with no or several loops; fewer or more legs
    than degrees of freedom (Saha assumes a non-redundant system).
    """
    return _structure_of(model_of(mech))


@functools.lru_cache(maxsize=64)
def _structure_of(mech) -> ParallelStructure:
    chains = mech.chains
    if not mech.loops:
        raise MechanismError("not a parallel mechanism: it has no loop joint, so its "
                             "chains do not meet a platform", field="loop")
    if len(chains) < 2:
        raise MechanismError("not a parallel mechanism: it needs at least two legs "
                             f"(chains on the base), it has {len(chains)}", field="chain")
    index = {name: k for k, name in enumerate(mech.joint_names)}
    leg_joints, owner, k = [], {}, 0
    for c, chain in enumerate(chains):
        if chain.parent is not None:
            raise MechanismError(f"not a parallel mechanism: every leg must start on the "
                                 f"base (Saha Sec 3.2), this chain starts on link "
                                 f"{chain.parent!r}", chain=chain.name, field="parent")
        joints = tuple(range(k, k + len(chain.links)))
        k += len(chain.links)
        leg_joints.append(joints)
        for j in joints:
            owner[j] = c
        for i, link in enumerate(chain.links):
            if i == 0 and not link.actuated:
                raise MechanismError("not a parallel mechanism of Saha's form: joint 1 of "
                                     "every leg (the one at the base) must be the actuated "
                                     "one", chain=chain.name, link=1, link_name=link.name,
                                     field="actuated")
            if i > 0 and link.actuated:
                raise MechanismError("not a parallel mechanism of Saha's form: only joint 1 "
                                     "of each leg may be actuated (Sec 3.2)",
                                     chain=chain.name, link=i + 1, link_name=link.name,
                                     field="actuated")
    last = {joints[-1]: c for c, joints in enumerate(leg_joints)}
    loop_bodies = []
    for loop in mech.loops:
        if loop.joint == "gear":
            raise MechanismError("not a parallel mechanism of Saha's form: its legs meet the "
                                 "platform at cut joints, and a gear couples two joint "
                                 "values", loop=loop.name, field="joint")
        if "base" in loop.links:
            raise MechanismError("not a parallel mechanism: a loop joint to the base is not "
                                 "a leg meeting the platform", loop=loop.name, field="links")
        bodies = tuple(index[name] for name in loop.links)
        for b, name in zip(bodies, loop.links):
            if b not in last:
                raise MechanismError(f"not a parallel mechanism: the loop joins link {name!r}, "
                                     "which is not the last link of its leg", loop=loop.name,
                                     field="links")
        if owner[bodies[0]] == owner[bodies[1]]:
            raise MechanismError("not a parallel mechanism: the loop closes a leg on itself",
                                 loop=loop.name, field="links")
        loop_bodies.append(bodies)
    if len(mech.loops) != len(chains) - 1:
        raise MechanismError(f"not a parallel mechanism: {len(chains)} legs meeting one "
                             f"platform need {len(chains) - 1} loop joint(s), there are "
                             f"{len(mech.loops)}", field="loop")
    # the platform: the link every loop joint holds (the first loop's first link if both
    # of its links qualify, as in the five-bar)
    common = set(loop_bodies[0])
    for bodies in loop_bodies[1:]:
        common &= set(bodies)
    if not common:
        raise MechanismError("not a parallel mechanism: the loop joints do not all hold one "
                             "platform link (each leg other than the platform's own must "
                             "join the platform link)", field="loop")
    platform = loop_bodies[0][0] if loop_bodies[0][0] in common else min(common)
    carrier = owner[platform]
    leg_loop: dict[int, int] = {}
    for l, bodies in enumerate(loop_bodies):
        other = bodies[1] if bodies[0] == platform else bodies[0]
        leg_loop[owner[other]] = l
    kv = model_of(mech).kernel.views
    legs = []
    for c, chain in enumerate(chains):
        l = leg_loop.get(c)
        if c != carrier and l is None:
            raise MechanismError("not a parallel mechanism: this leg does not reach the "
                                 "platform through a loop joint", chain=chain.name,
                                 field="loop")
        kind = "" if l is None else _LOOP_NAMES[int(kv.loop_type[l])]
        legs.append(Leg(chain.name, leg_joints[c], l, kind))
    if mech.dof != len(legs):
        raise MechanismError(f"not a parallel mechanism of Saha's form: Sec 3.2 assumes as "
                             f"many legs (actuators) as degrees of freedom; {len(legs)} "
                             f"legs, {mech.dof} degree(s) of freedom", field="actuated")
    # E: the loops' common point on the platform, else the platform frame's origin
    points = []
    for l, bodies in enumerate(loop_bodies):
        side = 0 if int(kv.loop_body[l, 0]) == platform else 1
        points.append(np.array(kv.loop_point[l, side]))
    e_point = points[0] if all(np.allclose(p, points[0], atol=1e-12, rtol=0)
                               for p in points) else np.zeros(3)
    return ParallelStructure(tuple(legs), carrier, platform,
                             tuple(float(x) for x in e_point),
                             tuple(leg.actuated for leg in legs))


def is_parallel(mech) -> bool:
    """Whether `mech` has the form of Saha's Sec 3 (see `parallel_structure`)."""
    try:
        parallel_structure(mech)
    except MechanismError:
        return False
    return True


# ----------------------------------------------------------------------------------
# The DeNOC quantities at one state (compiled recursions of core.kernels.denoc)
# ----------------------------------------------------------------------------------

def _data(mech, q, qd=None, qdd=None, gravity=False):
    """core.kernels.data.Data of a fresh buffer filled at (q, qd, qdd)."""
    k = model_of(mech).kernel
    ws = new_workspace(k)
    z = np.zeros(k.nv)
    state_quantities_kernel(k.F, k.I, ws, q, z if qd is None else qd,
                            z if qdd is None else qdd, bool(gravity))
    return data_of(k, ws)


def _p_tilde(revolute: bool, axis, point, E) -> np.ndarray:
    """p~ = A_{e,i} p_i: the platform twist at E of a unit rate of a joint with this
    axis through `point` (eq. 26)."""
    if revolute:
        return np.concatenate([axis, np.cross(point - E, axis)])
    return np.concatenate([np.zeros(3), axis])


def _loop_frame(mech, S: ParallelStructure, leg: Leg, D):
    """(axes (3, k), point C) of a leg's loop joint in the base frame, from its last
    link's side (for a prismatic loop: the line's direction, fixed in both links)."""
    kv = model_of(mech).kernel.views
    l = leg.loop
    side = 0 if int(kv.loop_body[l, 0]) == leg.last else 1
    Rk = D.Rl[leg.last]
    C = D.ol[leg.last] + Rk @ kv.loop_point[l, side]
    if leg.loop_type == "spherical":
        return np.eye(3), C
    if leg.loop_type == "prismatic":
        a = int(kv.loop_body[l, 0])
        return (D.Rl[a] @ kv.loop_axis[l, 0])[:, None], C
    return (Rk @ kv.loop_axis[l, side])[:, None], C


def _platform_point(mech, S: ParallelStructure, D, e_point=None) -> np.ndarray:
    """E in the base frame."""
    e = np.asarray(S.e_point if e_point is None else e_point, dtype=float)
    return D.ol[S.platform] + D.Rl[S.platform] @ e


# ----------------------------------------------------------------------------------
# Kinematics: eqs. 24-30 with the per-leg projectors
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParallelKinematics:
    """Saha's Sec 3.2 quantities at one closed pose (base frame, twists at E).

    q        : (n,) the pose
    E        : (3,) the platform point E, m
    J        : (6, na) t_e = J th'_a                                  (eq. 29b)
    Phi      : (6, 6) sum_l P^l                                        (eq. 29a)
    P        : per leg, the (6, 6) projector P^l = 1 - P~ Delta^-1 P~^T   (eq. 27b)
    P_tilde  : per leg, (6, k_l) the passive columns p~_2 .. p~_m (loop joint last)
    p1_tilde : (6, na) the actuated columns A_{e1} p_1 of each leg
    R        : (n, na) tree joint rates per unit actuator rate (eq. 30), q' = R th'_a
    loop_R   : per leg, (k_loop, na) the loop joint's rates per unit actuator rate
    lambda_min : smallest eigenvalue of Phi (0 at a type-II singularity)
    """

    q: np.ndarray
    E: np.ndarray
    J: np.ndarray
    Phi: np.ndarray
    P: tuple[np.ndarray, ...]
    P_tilde: tuple[np.ndarray, ...]
    p1_tilde: np.ndarray
    R: np.ndarray
    loop_R: tuple[np.ndarray, ...]
    lambda_min: float


def _pose_text(mech, S: ParallelStructure, q) -> str:
    names = mech.joint_names
    rev = mech.is_revolute
    parts = [f"{names[j]!r} = " + (f"{math.degrees(q[j]):.6g} deg" if rev[j] else
                                   f"{q[j]:.6g} m") for j in range(len(q))]
    return ", ".join(parts)


def _leg_columns(mech, S: ParallelStructure, D, E):
    """Per leg: p~_1 and P~ = [p~_2 .. p~_m] (the loop joint's columns last)."""
    rev = mech.is_revolute
    p1, Pt = [], []
    for leg in S.legs:
        # eq. 26: p~_i = A_{ei} p_i, the platform twist at E per unit rate of joint i
        cols = [_p_tilde(bool(rev[j]), D.e[j], D.oj[j], E) for j in leg.joints]
        if leg.loop is not None:
            axes, C = _loop_frame(mech, S, leg, D)
            revolute = leg.loop_type != "prismatic"
            cols += [_p_tilde(revolute, axes[:, r], C, E) for r in range(axes.shape[1])]
        p1.append(cols[0])
        Pt.append(np.column_stack(cols[1:]) if len(cols) > 1 else np.zeros((6, 0)))
    return np.column_stack(p1), Pt


def parallel_kinematics(mech, q, e_point=None) -> ParallelKinematics:
    """Eqs. 24-30 at the closed pose q (n,): J, Phi, the leg projectors and R.

    e_point: E in the platform's own frame (default: the structure's). Raises
    SingularConfigurationError naming the pose at a type-II singularity (Phi singular)
    or where a leg's passive joints are dependent (Delta singular).
    """
    S = parallel_structure(mech)
    n = mech.n
    q = joint_vector(q, n, "q")
    D = _data(mech, q)
    E = _platform_point(mech, S, D, e_point)
    p1, Pt = _leg_columns(mech, S, D, E)
    # eqs. 25, 27b generalised: Delta = P~^T P~ (Saha's delta), P^l = 1 - P~ Delta^-1 P~^T
    P, Dinv = [], []
    for l, (leg, Ptl) in enumerate(zip(S.legs, Pt)):
        if Ptl.shape[1] == 0:
            P.append(np.eye(6))
            Dinv.append(np.zeros((0, 0)))
            continue
        Delta = Ptl.T @ Ptl
        ev = np.linalg.eigvalsh(Delta)
        if not ev[0] > LEG_RANK_TOL * ev[-1]:
            raise SingularConfigurationError(
                f"the passive joints of leg {leg.name!r} are dependent (Delta = P~^T P~ "
                f"has eigenvalue {ev[0]:.3g}): the leg can move with its actuator and the "
                f"platform held, so eq. 30 does not fix its rates; pose: "
                f"{_pose_text(mech, S, q)}", q=q.copy())
        Di = np.linalg.inv(Delta)
        Dinv.append(Di)
        P.append(np.eye(6) - Ptl @ Di @ Ptl.T)
    # eq. 29a: Phi t_e = sum_l P^l A_e1 p_1 th'_1, Phi = sum_l P^l
    Phi = sum(P)
    Phi = 0.5 * (Phi + Phi.T)
    w, V = np.linalg.eigh(Phi)
    if not w[0] > SINGULAR_TOL:
        free = V[:, 0] / np.max(np.abs(V[:, 0]))
        raise SingularConfigurationError(
            f"type-II (parallel) singularity: Phi = sum_l P^l is singular (smallest "
            f"eigenvalue {w[0]:.3g}); the platform can move with twist "
            f"[w; v_E] ~ {np.array2string(free, precision=3, suppress_small=True)} while "
            f"every actuator is locked; pose: {_pose_text(mech, S, q)}", q=q.copy())
    na = S.n_legs
    B = np.column_stack([P[l] @ p1[:, l] for l in range(na)])
    # eq. 29b: J = Phi^-1 [(P A_e1 p_1)^1 ... (P A_e1 p_1)^n]
    J = np.linalg.solve(Phi, B)
    # eq. 30 (exact least squares): th'_u^l = Delta^-1 P~^T (t_e - A_e1 p_1 th'_1)
    R = np.zeros((n, na))
    loop_R = []
    for l, leg in enumerate(S.legs):
        R[leg.actuated, l] = 1.0
        rhs = J - np.outer(p1[:, l], np.eye(na)[l])
        rates = Dinv[l] @ Pt[l].T @ rhs if Pt[l].shape[1] else np.zeros((0, na))
        R[list(leg.passive), :] = rates[:len(leg.passive)]
        loop_R.append(rates[len(leg.passive):])
    return ParallelKinematics(q.copy(), E, J, Phi, tuple(P), tuple(Pt), p1, R,
                              tuple(loop_R), float(w[0]))


def parallel_jacobian(mech, q, e_point=None) -> np.ndarray:
    """J (6, na) with t_e = [w_e; v_E] = J th'_a (eqs. 24-29 with the per-leg
    projectors). Raises SingularConfigurationError at a type-II singularity."""
    return parallel_kinematics(mech, q, e_point).J


@dataclass(frozen=True)
class PassiveRates:
    """The rates of one state (eq. 30).

    t_e  : (6,) platform twist [w; v_E]
    qd   : (n,) all tree joint rates (the actuated ones as given)
    legs : per leg, the passive rates th'_2 .. th'_m, the loop joint's last
           (revolute/prismatic: 1, spherical: 3 rates, about / along base axes)
    """

    t_e: np.ndarray
    qd: np.ndarray
    legs: tuple[np.ndarray, ...]


def actuated_values(S: ParallelStructure, n: int, x, name: str) -> np.ndarray:
    """The actuated entries of x: x itself if (na,), x[actuated] if (n,) (an
    ArgumentError naming `name` otherwise)."""
    a = np.asarray(x, dtype=float)
    na = S.n_legs
    if a.shape == (na,) and na != n:
        return joint_vector(a, na, name)
    if a.shape == (n,):
        return joint_vector(a, n, name)[list(S.actuated)]
    raise ArgumentError(f"{name} must have shape ({na},) (actuated joints) or ({n},), "
                        f"got {a.shape}")


def parallel_passive_rates(mech, q, qd_a, e_point=None) -> PassiveRates:
    """Passive joint rates of each leg for the actuator rates qd_a (na,) (or the
    actuated entries of an (n,) vector) at the closed pose q: eq. 30 in its exact
    least-squares form th'_u^l = Delta^-1 P~^T (t_e - A_e1 p_1 th'_1)."""
    S = parallel_structure(mech)
    kin = parallel_kinematics(mech, q, e_point)
    thd = actuated_values(S, mech.n, qd_a, "qd_a")
    return PassiveRates(kin.J @ thd, kin.R @ thd,
                        tuple(np.concatenate([kin.R[list(leg.passive)] @ thd, lr @ thd])
                              for leg, lr in zip(S.legs, kin.loop_R)))


# ----------------------------------------------------------------------------------
# One derivative up: S_c, the passive accelerations at th''_a = 0 (Saha's N' th'_a)
# ----------------------------------------------------------------------------------

def _bias_accelerations(mech, S: ParallelStructure, kin: ParallelKinematics, qd
                        ) -> np.ndarray:
    """S_c (n,): q'' = R th''_a + S_c. Differentiating eq. 26 for leg l,

        t'_e = b^l + p~_1 th''_1 + P~ th''_u,    b^l = sum_i p~'_i th'_i,

    where b^l is the platform's [w'; a_E] through leg l when every joint acceleration
    of the leg is zero (RIDIM's forward recursion at q'' = 0, eq. 11c differentiated,
    then across the loop joint). With th''_a = 0 the same projectors as eqs. 28-30
    give t'_e = Phi^-1 sum_l P^l b^l and th''_u^l = Delta^-1 P~^T (t'_e - b^l).
    """
    n = mech.n
    D = _data(mech, kin.q, qd)  # twist rates at q'' = 0, no gravity
    E = kin.E
    thd = qd[list(S.actuated)]
    b = []
    for l, leg in enumerate(S.legs):
        k = leg.last
        w, wd = D.t[k, :3], D.tdot[k, :3]

        def accel(P):  # acceleration of link k's material point at P
            r = P - D.oj[k]
            return D.tdot[k, 3:] + np.cross(wd, r) + np.cross(w, np.cross(w, r))

        if leg.loop is None:
            b.append(np.concatenate([wd, accel(E)]))
            continue
        axes, C = _loop_frame(mech, S, leg, D)
        rates = kin.loop_R[l] @ thd
        if leg.loop_type == "prismatic":
            # the platform slides along u (fixed in both links): Coriolis 2 w x u s'
            u = axes[:, 0]
            b.append(np.concatenate([wd, accel(E) + 2.0 * np.cross(w, u) * rates[0]]))
        else:
            # the platform turns about C relative to link k at w_r = sum e_c th'_c:
            # w'_P = w'_k + w_k x w_r, a_E = a_C + w'_P x (E - C) + w_P x (w_P x (E - C))
            w_r = axes @ rates
            wP = w + w_r
            wdP = wd + np.cross(w, w_r)
            r = E - C
            b.append(np.concatenate([wdP, accel(C) + np.cross(wdP, r)
                                     + np.cross(wP, np.cross(wP, r))]))
    # eqs. 28-29 one derivative up: Phi t'_e = sum_l P^l b^l
    ted = np.linalg.solve(kin.Phi, sum(P @ bl for P, bl in zip(kin.P, b)))
    S_c = np.zeros(n)
    for l, leg in enumerate(S.legs):
        Pt = kin.P_tilde[l]
        if not leg.passive:
            continue
        acc = np.linalg.solve(Pt.T @ Pt, Pt.T @ (ted - b[l]))
        S_c[list(leg.passive)] = acc[:len(leg.passive)]
    return S_c


def parallel_state(mech, q, qd):
    """(structure, kinematics, full tree rates (n,), S_c (n,)) at the closed pose q for
    the actuator rates qd ((na,), or (n,) of which the actuated entries are used)."""
    S = parallel_structure(mech)
    kin = parallel_kinematics(mech, q)
    thd = actuated_values(S, mech.n, qd, "qd")
    qd_full = kin.R @ thd
    return S, kin, qd_full, _bias_accelerations(mech, S, kin, qd_full)


# ----------------------------------------------------------------------------------
# Dynamics: eq. 33
# ----------------------------------------------------------------------------------

def parallel_dynamics(mech, q, qd, gravity: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(I (na, na), h (na,)) of I th''_a + h = tau_a at the closed pose q (eq. 33).

    qd: the actuator rates (na,), or an (n,) vector whose actuated entries are used
    (the passive rates are recomputed from eq. 30). I = N^T M N = R^T M_tree R (the
    tree's composite-body GIM); h = N^T (M N' th'_a + W M E t) = R^T tau_tree(q, q',
    S_c) by RIDIM, with gravity as the base acceleration of eq. 17 unless
    gravity=False (then h is the convective term of eq. 33 alone).
    """
    S, kin, qd_full, S_c = parallel_state(mech, q, qd)
    R = kin.R
    I = R.T @ mass_matrix(mech, kin.q) @ R
    h = R.T @ tree_inverse_dynamics(mech, kin.q, qd_full, S_c, gravity=gravity)
    return 0.5 * (I + I.T), h


def parallel_forward_dynamics(mech, q, qd, tau_a) -> np.ndarray:
    """th''_a (na,) = I^-1 (tau_a - h) at the closed pose q (eq. 33; Cholesky of I)."""
    S = parallel_structure(mech)
    tau_a = actuated_values(S, mech.n, tau_a, "tau_a")
    I, h = parallel_dynamics(mech, q, qd)
    L = np.linalg.cholesky(I)
    return np.linalg.solve(L.T, np.linalg.solve(L, tau_a - h))


def parallel_accelerations(mech, q, qd, qdd_a) -> np.ndarray:
    """All tree joint accelerations q'' = R th''_a + S_c (n,)."""
    S, kin, qd_full, S_c = parallel_state(mech, q, qd)
    return kin.R @ actuated_values(S, mech.n, qdd_a, "qdd_a") + S_c


def parallel_inverse_dynamics(mech, q, qd, qdd_a) -> np.ndarray:
    """tau_a (na,) = N^T w* = R^T tau_tree(q, q', R th''_a + S_c): one RIDIM pass over
    the legs with every passive rate and acceleration from eqs. 30 (eq. 33)."""
    S, kin, qd_full, S_c = parallel_state(mech, q, qd)
    qdd = kin.R @ actuated_values(S, mech.n, qdd_a, "qdd_a") + S_c
    return kin.R.T @ tree_inverse_dynamics(mech, kin.q, qd_full, qdd)


@dataclass(frozen=True)
class DeNOCMatrices:
    """The stacked quantities of eqs. 32-33 over the n_b bodies of the legs (the
    platform is the carrier leg's last body), base frame, at O_i.

    N      : (6 n_b, na) t = N th'_a (Saha's N_l N_c N_d, eq. 32a)
    M      : (6 n_b, 6 n_b) block diagonal extended masses M_i (eqs. 6, 33a)
    t      : (6 n_b,) twists
    t_dot0 : (6 n_b,) twist rates at th''_a = 0, gravity in (N' th'_a + rho, eq. 17)
    WMEt   : (6 n_b,) W M E t
    I = N^T M N and h = N^T (M t_dot0 + W M E t).
    """

    N: np.ndarray
    M: np.ndarray
    t: np.ndarray
    t_dot0: np.ndarray
    WMEt: np.ndarray

    @property
    def I(self) -> np.ndarray:
        return self.N.T @ self.M @ self.N

    @property
    def h(self) -> np.ndarray:
        return self.N.T @ (self.M @ self.t_dot0 + self.WMEt)


def parallel_denoc_matrices(mech, q, qd) -> DeNOCMatrices:
    """N, M, t, t' and W M E t of eqs. 32-33 built explicitly (for checking; the
    dynamics functions use the O(n) recursions instead)."""
    S, kin, qd_full, S_c = parallel_state(mech, q, qd)
    n, na = mech.n, S.n_legs
    N = np.zeros((6 * n, na))
    for c in range(na):
        # column c of N: every body's twist for a unit rate of actuator c (eq. 32a)
        N[:, c] = _data(mech, kin.q, kin.R[:, c]).t.reshape(-1)
    D = _data(mech, kin.q, qd_full, S_c, gravity=True)
    M = np.zeros((6 * n, 6 * n))
    WMEt = np.zeros(6 * n)
    for i in range(n):
        M[6 * i:6 * i + 6, 6 * i:6 * i + 6] = D.M[i]
        # W_i M_i E_i t_i with W_i = diag(w x, w x), E_i = diag(1, 0) (eq. 8)
        w = D.t[i, :3]
        MEt = D.M[i][:, :3] @ w
        WMEt[6 * i:6 * i + 6] = np.concatenate([np.cross(w, MEt[:3]), np.cross(w, MEt[3:])])
    return DeNOCMatrices(N, M, D.t.reshape(-1).copy(), D.tdot.reshape(-1).copy(), WMEt)


# ----------------------------------------------------------------------------------
# Positions: the passive joints from the loops with the actuators held
# ----------------------------------------------------------------------------------

def parallel_assemble(mech, theta_a, q_guess=None, step: float = ASSEMBLY_STEP
                      ) -> np.ndarray:
    """The closed pose (n,) with the actuated joints at theta_a (na,), on the assembly
    branch of q_guess (default: the mechanism's home pose).

    Walks the actuators from the guess to theta_a in steps of at most `step`, closing
    the loops at each (`core.algorithms.loops.assemble` with the actuators held), so
    the passive joints follow their branch. Raises LoopClosureError if theta_a cannot
    be reached (outside the workspace, or through a type-II singularity).
    """
    S = parallel_structure(mech)
    n = mech.n
    act = list(S.actuated)
    q = np.array(mech.q_home if q_guess is None else joint_vector(q_guess, n, "q_guess"),
                 dtype=float)
    target = joint_vector(np.asarray(theta_a, dtype=float), S.n_legs, "theta_a")
    start = q[act].copy()
    steps = max(1, int(math.ceil(np.max(np.abs(target - start)) / step - 1e-12)))
    for s in range(1, steps + 1):
        q[act] = start + (target - start) * (s / steps)
        q = assemble(mech, q, independent=act)
    return q
