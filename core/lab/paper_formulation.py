"""RIDIM and RFDSIM as the papers count them: link frames, plain Python, serial arms.

The operation counts the seeds print (seed 000 Table 1: RIDIM 120n - 44 M, 97n - 55 A;
Table 2: RFDSIM 201n - 335 M, 193n - 361 A) are of the recursions written in link
frames, where a link's mass matrix is a constant, and they leave the kinematics out
(sines and cosines of the joint angles). ArmDyn's compiled kernels
(`core.kernels.denoc`) work in the base frame instead: every call first turns each
link's inertia and mass centre into the base frame (`link_quantities`), and they
multiply full 6-vectors and 6x3 blocks, zeros and ones included. This module writes the papers'
recursions the way their counts read, so that `core.lab.op_count`'s counting numbers
can count them too and the Lab can show where the factor between the table and our
kernels comes from. It is teaching code: pure Python on tuples, slow, exact (its
results equal `inverse_dynamics` / `forward_dynamics` to rounding, tests/
test_paper_formulation.py).

Frames. Seed 000 App. A: frame i is fixed to link i-1, its z_i the axis of joint i;
link i's mass centre and inertia are given in frame i+1. Here link i's quantities are
taken in F_i = frame i turned by Rz(theta_i): its axes turn with link i (a prismatic
link slides along its z), its z is the axis of joint i, its origin O_i on that axis, the
point the twist is taken at (seed 001 Fig. 1b). Frame i+1's axes are F_i's turned by
Rx(alpha_i) (its origin is O_{i+1} = O_i + (a_i, 0, b_i) in F_i), so the
inputs (mass centre, inertia about it) are turned into F_i once, when the model is
built (`paper_model`), and in F_i

    p_i = [z; 0] (revolute) or [0; z] (prismatic)     z = (0, 0, 1)
    r_i = O_{i+1} - O_i = (a_i, 0, b_i)
    M_i = [[I_i, m_i d_i x 1], [-m_i d_i x 1, m_i 1]]   d_i = C_i - O_i, I_i about O_i:
          constants (a prismatic link's d_i and I_i change with b_i: 4 M 5 A per call)

A vector of F_i in F_{i-1} is Rx(alpha_{i-1}) Rz(theta_i) x ("up"), and back
Rz(theta_i)^T Rx(alpha_{i-1})^T x ("down"): two plane rotations, 8 M 4 A per 3-vector
(4 M 2 A each). The only trigonometry is cos and sin of each joint angle
(`joint_rotations`), tallied apart as functions, as the papers leave it out.

Counting rules: every operation the code executes is counted (`count_ridim`,
`count_rfdsim` run it on `Counted` numbers, model constants included), but the code
never multiplies by a structural zero or one: p_i picks a row or a column, r_i has a
zero, z x w and the DH rotations are written out, symmetric matrices are held by their
six distinct entries. What is not exploited (each a possible saving, not taken to keep
the code plain): the first link's zero twist past the recursion's first line (its
inertia wrench and the second link's propagation run the general lines on literal
zeros), the last link's M^ = M (its structural zeros), the zero row and column of
Mbar_i (Mbar_i p_i = 0), and v_i, which RIDIM at O_i computes (the paper's forward
recursion has t_i) but never uses.

RIDIM (seed 001 Sec 2.4.1; seed 000 Sec 5.1), all-revolute serial arm of n links, per
line, M and A:

    forward recursion, link 1:      w_1 = (0, 0, th'_1), w'_1 = (0, 0, th''_1), v_1 = 0,
                                    v'_1 = Rz(theta_1)^T (-g)                     4 M  2 A
    forward recursion, link i > 1:  c = w x r (r = (a, 0, b))                      4 M  1 A
                                    v + c                                               3 A
                                    v' + w' x r + w x c                           10 M 10 A
                                    down: w, w', v, v'                            32 M 16 A
                                    w += z th'                                          1 A
                                    w' += (w_y th', -w_x th', th'')                2 M  3 A
                                                                          total   48 M 34 A
    inertia wrench, every link (eq. 5: w*_i = M_i t'_i + W_i M_i E_i t_i):
        n* = I w' + m d x v' + w x (I w)     9 + 6 + (9 + 6) M, 6 + 3 + (6 + 3) + 6 A
        f* = m v' + w' x m d + w x (w x m d) 3 + 6 + 12 M, 3 + 6 + 6 A    total   51 M 39 A
    backward recursion: tau_i = p_i^T w_i = n_z (no operation); for link i > 1,
        up: n, f                                                                  16 M  8 A
        A^T w: n + r x f (r = (a, 0, b))                                           4 M  4 A
        w_{i-1} = w*_{i-1} + A^T w_i                                                    6 A
                                                                          total   20 M 18 A

    M = 4 + 48 (n-1) + 51 n + 20 (n-1) = 119 n - 64
    A = 2 + 34 (n-1) + 39 n + 18 (n-1) =  91 n - 50        (n = 6: 650 M, 496 A)

RFDSIM (seed 001 Sec 2.4.2, eqs. 18-21; seed 000 Sec 5.2 and App. B), all-revolute:

    bias forces phi = tau - RIDIM(q, q', 0) (seed 000's input item 4): RIDIM without the
        th'' terms (one A less for each link i > 1), and the n subtractions
                                                   119 n - 64 M,  90 n - 49 + n A
    articulated inertias (eqs. 19c-d), i = n .. 1:
        M^_i = M_i + (child's term), i < n: the 15 non-zero entries of M_i          15 A
        psi^_i = M^_i p_i, m^_i = p_i^T psi^_i: a column and an entry (no operation)
        i > 1: psi_i = psi^_i / m^_i                                               6 M
               Mbar_i = M^_i - psi^_i psi_i^T: 21 distinct entries                21 M 21 A
               up: Rz(theta_i), with c^2, s^2, cs, 2cs, c^2 - s^2                  3 M  2 A
                   two symmetric 3x3 blocks (12 M 8 A each), one general (24 M 12 A)
                                                                                  48 M 28 A
               Rx(alpha_{i-1}), constants from the model: the same                48 M 28 A
               A^T Mbar A with r = (a, 0, b): H' = H + (r x) S                    12 M 12 A
                   I' = I - (H (r x))^T - H' (r x), six entries                   12 M 16 A
                                                           per link i > 1:   150 M 107 A
        M = 150 (n-1),  A = 107 (n-1) + 15 (n-1) = 122 (n-1)
    solve U D U^T th'' = phi (eqs. 19a-b, 20, 21a-b):
        backward, i = n .. 2: eta_i = psi_i phi^_i + eta_{i,i+1}  6 M 6 A (i = n: 6 M)
            up: eta_i (two 3-vectors) 16 M 8 A; A^T eta: 4 M 4 A;
            phi^_{i-1} = phi_{i-1} - p^T eta_{i-1,i}: 1 A
            -> 26 (n-1) M,  (6 + 8 + 4 + 1) (n-1) - 6 = 19 n - 25 A
        forward: th''_1 = phi^_1 / m^_1 (1 M); i = 2 .. n: A mu_{i-1}: r x w (4 M 1 A),
            v + (.) (3 A), down (16 M 8 A); th''_i = (phi^_i - psi^_i . mu) / m^_i
            (7 M 6 A); mu_i = mu + p th''_i (1 A, not for i = n)
            -> 27 (n-1) + 1 M,  19 (n-1) - 1 A
        M = 53 n - 52,  A = 38 n - 45

    M = 119 n - 64 + 150 (n-1) + 53 n - 52 = 322 n - 266
    A =  91 n - 49 + 122 (n-1) + 38 n - 45 = 251 n - 216    (n = 6: 1666 M, 1290 A)
    without the bias forces (phi given): M = 203 n - 202, A = 160 n - 167
                                                            (n = 6: 1016 M, 793 A)

Seed 000 Table 2's RFDSIM, 201 n - 335 M and 193 n - 361 A, is close to the count
without the bias forces, which the paper lists among the algorithm's inputs ("each
component of phi ... to be computed from any recursive inverse dynamics scheme").
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass, fields, replace

import numpy as np

from ..model.parts import JointType
from ..model.robot import Robot
from .op_count import Counter, OpCount, counted_array, plain_array

__all__ = ["PaperLink", "PaperModel", "paper_model", "joint_rotations", "ridim", "rfdsim",
           "udu_factors", "udu_solve", "count_ridim", "count_rfdsim", "RFDSIM_STAGES"]

#: The stages of a counted RFDSIM (`count_rfdsim`): the bias forces (RIDIM with th'' = 0),
#: the articulated inertias (the factors of U D U^T) and the solve; "(own)" is phi.
RFDSIM_STAGES = ("ridim", "udu_factors", "udu_solve")


# ----------------------------------------------------------------------------------
# The model: every link's constants in its frame F_i (set up once, not counted)
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PaperLink:
    """Link i's constants in its frame F_i (module docstring).

    revolute : the joint's kind (else prismatic)
    a, b     : r_i = O_{i+1} - O_i = (a, 0, b), m (b is the joint's value if prismatic)
    ca, sa   : cos, sin alpha_i (x_F = Rx(alpha_i) x for a vector x in frame i+1's axes)
    cc, ss, cs, cs2, dcs : cos^2, sin^2, cos sin, 2 cos sin, cos^2 - sin^2 of alpha_i
    ct, st   : cos, sin theta_i of a prismatic joint (constant)
    m        : mass, kg
    md       : m d_i, d_i = C_i - O_i in F_i, kg m (prismatic: at b = 0)
    I        : inertia about O_i in F_i, (xx, xy, xz, yy, yz, zz), kg m^2 (prismatic:
               the parts that do not change with b, see `_prismatic_mass`)
    dz0      : prismatic: z of d_i at b = 0, m
    """

    revolute: bool
    a: float
    b: float
    ca: float
    sa: float
    cc: float
    ss: float
    cs: float
    cs2: float
    dcs: float
    ct: float
    st: float
    m: float
    md: tuple[float, float, float]
    I: tuple[float, float, float, float, float, float]
    dz0: float


@dataclass(frozen=True)
class PaperModel:
    """A serial arm's links in their frames and -g in the base frame (m/s^2)."""

    links: tuple[PaperLink, ...]
    minus_g: tuple[float, float, float]

    @property
    def n(self) -> int:
        return len(self.links)


def _rx(alpha: float) -> np.ndarray:
    c, s = math.cos(alpha), math.sin(alpha)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def paper_model(robot: Robot) -> PaperModel:
    """The robot's links in their frames F_i (module docstring): the constants the
    recursions read, computed once."""
    if not isinstance(robot, Robot):
        raise TypeError("the papers' formulation is written for a serial arm (a Robot)")
    links = []
    for link in robot.links:
        R = _rx(link.alpha)                      # x_F = Rx(alpha) x_(frame i+1)
        xx, yy, zz, xy, xz, yz = link.inertia
        Ic_own = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        Ic = R @ Ic_own @ R.T                    # about C_i, in F_i
        revolute = link.joint == JointType.REVOLUTE
        b = link.b if revolute else 0.0
        d = np.array([link.a, 0.0, b]) + R @ np.asarray(link.com, dtype=float)
        m = float(link.mass)
        if revolute:
            I = Ic + m * (d @ d * np.eye(3) - np.outer(d, d))   # parallel axes, about O_i
        else:
            # the parts of I about O_i that do not change with d_z (`_prismatic_mass`)
            I = Ic.copy()
            I[0, 0] += m * d[1] ** 2
            I[1, 1] += m * d[0] ** 2
            I[2, 2] += m * (d[0] ** 2 + d[1] ** 2)
            I[0, 1] -= m * d[0] * d[1]
            I[1, 0] = I[0, 1]
        ca, sa = math.cos(link.alpha), math.sin(link.alpha)
        links.append(PaperLink(
            revolute=revolute, a=float(link.a), b=float(b), ca=ca, sa=sa,
            cc=ca * ca, ss=sa * sa, cs=ca * sa, cs2=2 * ca * sa, dcs=ca * ca - sa * sa,
            ct=math.cos(link.theta), st=math.sin(link.theta), m=m,
            md=tuple(float(x) for x in m * d),
            I=(float(I[0, 0]), float(I[0, 1]), float(I[0, 2]), float(I[1, 1]),
               float(I[1, 2]), float(I[2, 2])),
            dz0=float(d[2])))
    return PaperModel(tuple(links), tuple(-float(g) for g in robot.gravity))


# ----------------------------------------------------------------------------------
# Small pieces: plane rotations, cross products, symmetric 3x3 blocks
# ----------------------------------------------------------------------------------

def joint_rotations(pm: PaperModel, q) -> list:
    """(cos theta_i, sin theta_i) of every joint: the call's only trigonometry (the
    kinematics the papers' counts leave out)."""
    out = []
    for k, L in enumerate(pm.links):
        if L.revolute:
            out.append((math.cos(q[k]), math.sin(q[k])))
        else:
            out.append((L.ct, L.st))
    return out


def _down(c, s, P, x):
    """Rz(theta_i)^T Rx(alpha_{i-1})^T x: a vector of F_{i-1} in F_i (8 M 4 A)."""
    x0, x1, x2 = x
    y1 = P.ca * x1 + P.sa * x2
    y2 = P.ca * x2 - P.sa * x1
    return (c * x0 + s * y1, c * y1 - s * x0, y2)


def _up(c, s, P, x):
    """Rx(alpha_{i-1}) Rz(theta_i) x: a vector of F_i in F_{i-1} (8 M 4 A)."""
    x0, x1, x2 = x
    y0 = c * x0 - s * x1
    y1 = s * x0 + c * x1
    return (y0, P.ca * y1 - P.sa * x2, P.sa * y1 + P.ca * x2)


def _cross(u, v):
    """u x v (6 M 3 A)."""
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def _sym_times(I, v):
    """I v for a symmetric I = (xx, xy, xz, yy, yz, zz) (9 M 6 A)."""
    xx, xy, xz, yy, yz, zz = I
    return (xx * v[0] + xy * v[1] + xz * v[2],
            xy * v[0] + yy * v[1] + yz * v[2],
            xz * v[0] + yz * v[1] + zz * v[2])


def _sym_rz(c, s, cc, ss, cs, cs2, dcs, X):
    """Rz X Rz^T for a symmetric X, Rz = [[c, -s, 0], [s, c, 0], [0, 0, 1]] (12 M 8 A)."""
    xx, xy, xz, yy, yz, zz = X
    return (cc * xx - cs2 * xy + ss * yy, cs * (xx - yy) + dcs * xy, c * xz - s * yz,
            ss * xx + cs2 * xy + cc * yy, s * xz + c * yz, zz)


def _sym_rx(P, X):
    """Rx X Rx^T for a symmetric X, Rx = Rx(alpha) of link P (12 M 8 A)."""
    xx, xy, xz, yy, yz, zz = X
    return (xx, P.ca * xy - P.sa * xz, P.sa * xy + P.ca * xz,
            P.cc * yy - P.cs2 * yz + P.ss * zz, P.cs * (yy - zz) + P.dcs * yz,
            P.ss * yy + P.cs2 * yz + P.cc * zz)


def _gen_rz(c, s, H):
    """Rz H Rz^T for a general 3x3 H (rows) (24 M 12 A)."""
    (h00, h01, h02), (h10, h11, h12), (h20, h21, h22) = H
    # Rz H: rows 0 and 1 mix
    z00, z01, z02 = c * h00 - s * h10, c * h01 - s * h11, c * h02 - s * h12
    z10, z11, z12 = s * h00 + c * h10, s * h01 + c * h11, s * h02 + c * h12
    # (Rz H) Rz^T: columns 0 and 1 mix
    return ((c * z00 - s * z01, s * z00 + c * z01, z02),
            (c * z10 - s * z11, s * z10 + c * z11, z12),
            (c * h20 - s * h21, s * h20 + c * h21, h22))


def _gen_rx(P, H):
    """Rx H Rx^T for a general 3x3 H (rows), Rx = Rx(alpha) of link P (24 M 12 A)."""
    c, s = P.ca, P.sa
    (h00, h01, h02), (h10, h11, h12), (h20, h21, h22) = H
    # Rx H: rows 1 and 2 mix
    z10, z11, z12 = c * h10 - s * h20, c * h11 - s * h21, c * h12 - s * h22
    z20, z21, z22 = s * h10 + c * h20, s * h11 + c * h21, s * h12 + c * h22
    # (Rx H) Rx^T: columns 1 and 2 mix
    return ((h00, c * h01 - s * h02, s * h01 + c * h02),
            (z10, c * z11 - s * z12, s * z11 + c * z12),
            (z20, c * z21 - s * z22, s * z21 + c * z22))


def _shift(a, b, X):
    """A^T X A for a symmetric 6x6 X = [[I, H], [H^T, S]] and the twist propagation
    A = [[1, 0], [-(r x), 1]], r = (a, 0, b) (24 M 28 A):

        S' = S,  H' = H + R S,  I' = I - (H R)^T - H' R,  R = r x 1
    """
    I, H, S = X
    (h00, h01, h02), (h10, h11, h12), (h20, h21, h22) = H
    s00, s01, s02, s11, s12, s22 = S
    # H' = H + R S, R = [[0, -b, 0], [b, 0, -a], [0, a, 0]]               12 M 12 A
    g00, g01, g02 = h00 - b * s01, h01 - b * s11, h02 - b * s12
    g10 = h10 + b * s00 - a * s02
    g11 = h11 + b * s01 - a * s12
    g12 = h12 + b * s02 - a * s22
    g20, g21, g22 = h20 + a * s01, h21 + a * s11, h22 + a * s12
    # I' = I - (H R)^T - H' R; (H R)_i0 = b H_i1, (H R)_i1 = a H_i2 - b H_i0,
    # (H R)_i2 = -a H_i1                                                    12 M 16 A
    i00, i01, i02, i11, i12, i22 = I
    I2 = (i00 - b * (h01 + g01),
          i01 - b * h11 - a * g02 + b * g00,
          i02 - b * h21 + a * g01,
          i11 + b * (h10 + g10) - a * (h12 + g12),
          i12 - a * h22 + b * h20 + a * g11,
          i22 + a * (h21 + g21))
    return (I2, ((g00, g01, g02), (g10, g11, g12), (g20, g21, g22)), S)


def _prismatic_mass(L: PaperLink, b):
    """(m d_i, I_i about O_i) of a prismatic link at joint value b (4 M 5 A): d_z =
    dz0 + b; I_xx, I_yy gain m d_z^2, I_xz, I_yz lose m d_x d_z, m d_y d_z."""
    dz = L.dz0 + b
    mdz = L.m * dz
    t = mdz * dz
    xx, xy, xz, yy, yz, zz = L.I
    return ((L.md[0], L.md[1], mdz),
            (xx + t, xy, xz - L.md[0] * dz, yy + t, yz - L.md[1] * dz, zz))


def _mass(L: PaperLink, q, k):
    return (L.md, L.I) if L.revolute else _prismatic_mass(L, q[k])


def _r(L: PaperLink, q, k):
    """(a, b) of r_i = (a, 0, b): b is the joint's value for a prismatic joint."""
    return L.a, (L.b if L.revolute else q[k])


# ----------------------------------------------------------------------------------
# RIDIM: the two recursions (seed 001 Sec 2.4.1), in link frames
# ----------------------------------------------------------------------------------

def ridim(pm: PaperModel, q, qd, qdd=None, rot=None) -> list:
    """Joint forces tau (n,), N m / N, for q, qd, qdd (n,) (rad, rad/s, rad/s^2; m for
    a prismatic joint); qdd None stands for zero (RFDSIM's bias forces). rot: the
    `joint_rotations` of q, when the caller has them."""
    n = pm.n
    links = pm.links
    if rot is None:
        rot = joint_rotations(pm, q)
    w, wd, v, vd = [None] * n, [None] * n, [None] * n, [None] * n

    # ---- forward recursion: t_i = A_{i,i-1} t_{i-1} + p_i th'_i,
    #      t'_i = A t'_{i-1} + A' t_{i-1} + p_i th''_i + W p_i th'_i  (eqs. 11c, 17) ----
    for k in range(n):
        L = links[k]
        c, s = rot[k]
        if k == 0:
            # the base at rest, gravity as its acceleration rho = [0; -g] (eq. 17), in F_1
            g0, g1, g2 = pm.minus_g
            wp, wdp, vp = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
            vdp = (c * g0 + s * g1, c * g1 - s * g0, g2)
        else:
            P = links[k - 1]
            a, b = _r(P, q, k - 1)
            w0, w1, w2 = w[k - 1]
            e0, e1, e2 = wd[k - 1]
            # A_{i,i-1}: the parent's twist and twist rate at O_i, r = (a, 0, b)
            c0, c1, c2 = w1 * b, w2 * a - w0 * b, -w1 * a          # w x r
            x0, x1, x2 = v[k - 1]
            u0, u1, u2 = vd[k - 1]
            wc = _cross(w[k - 1], (c0, c1, c2))                      # w x (w x r)
            vel = (x0 + c0, x1 + c1, x2 + c2)
            acc = (u0 + e1 * b + wc[0], u1 + e2 * a - e0 * b + wc[1],
                   u2 - e1 * a + wc[2])                              # + w' x r + w x (w x r)
            # into F_i
            wp, wdp, vp, vdp = (_down(c, s, P, w[k - 1]), _down(c, s, P, wd[k - 1]),
                                _down(c, s, P, vel), _down(c, s, P, acc))
        # the joint: p_i th'_i, p_i th''_i and W p_i th'_i, p_i = [z; 0] or [0; z]
        if L.revolute:
            if k == 0:
                w[k] = (0.0, 0.0, qd[k])
                wd[k] = (0.0, 0.0, qdd[k]) if qdd is not None else wdp
            else:
                w[k] = (wp[0], wp[1], wp[2] + qd[k])
                t = qd[k]
                wd[k] = (wdp[0] + wp[1] * t, wdp[1] - wp[0] * t,
                         wdp[2] + qdd[k] if qdd is not None else wdp[2])
            v[k], vd[k] = vp, vdp
        else:
            # a sliding joint: the link's point at O_i moves along z; Coriolis 2 w x z b'
            w[k], wd[k] = wp, wdp
            v[k] = (vp[0], vp[1], vp[2] + qd[k])
            if k == 0:
                vd[k] = (vdp[0], vdp[1], vdp[2] + qdd[k]) if qdd is not None else vdp
            else:
                t = 2.0 * qd[k]
                vd[k] = (vdp[0] + wp[1] * t, vdp[1] - wp[0] * t,
                         vdp[2] + qdd[k] if qdd is not None else vdp[2])

    # ---- backward recursion: w_i = w*_i + A_{i+1,i}^T w_{i+1}; tau_i = p_i^T w_i ----
    tau = [None] * n
    child = None
    for k in range(n - 1, -1, -1):
        L = links[k]
        md, I = _mass(L, q, k)
        wk, wdk, vdk = w[k], wd[k], vd[k]
        # eq. 5: w*_i = M_i t'_i + W_i M_i E_i t_i, at O_i
        Iwd = _sym_times(I, wdk)
        Iw = _sym_times(I, wk)
        wIw = _cross(wk, Iw)
        mdv = _cross(md, vdk)
        nstar = (Iwd[0] + mdv[0] + wIw[0], Iwd[1] + mdv[1] + wIw[1], Iwd[2] + mdv[2] + wIw[2])
        wdmd = _cross(wdk, md)
        wwmd = _cross(wk, _cross(wk, md))
        m = L.m
        fstar = (m * vdk[0] + wdmd[0] + wwmd[0], m * vdk[1] + wdmd[1] + wwmd[1],
                 m * vdk[2] + wdmd[2] + wwmd[2])
        if child is not None:
            (n0, n1, n2), (f0, f1, f2) = child
            nk = (nstar[0] + n0, nstar[1] + n1, nstar[2] + n2)
            fk = (fstar[0] + f0, fstar[1] + f1, fstar[2] + f2)
        else:
            nk, fk = nstar, fstar
        tau[k] = nk[2] if L.revolute else fk[2]                      # p_i^T w_i
        if k > 0:
            P = links[k - 1]
            c, s = rot[k]
            nu, fu = _up(c, s, P, nk), _up(c, s, P, fk)
            a, b = _r(P, q, k - 1)
            # A^T w = [n + r x f; f], r = (a, 0, b)
            child = ((nu[0] - b * fu[1], nu[1] + b * fu[0] - a * fu[2], nu[2] + a * fu[1]),
                     fu)
    return tau


# ----------------------------------------------------------------------------------
# RFDSIM: bias forces, U D U^T factors, solve (seed 001 eqs. 18-21; seed 000 App. B)
# ----------------------------------------------------------------------------------

def udu_factors(pm: PaperModel, q, rot) -> tuple[list, list, list]:
    """(psi_hat, psi, m_hat): the articulated-body inertias' columns psi^_i = M^_i p_i
    (6-tuples, F_i), psi_i = psi^_i / m^_i (None for link 1) and the pivots m^_i (the
    D of U D U^T), eqs. 19c-d, i = n .. 1:

        M^_i = M_i + A_{i+1,i}^T Mbar_{i+1} A_{i+1,i},  Mbar_i = M^_i - psi^_i psi_i^T
    A 6x6 symmetric matrix is held as (I, H, S) for [[I, H], [H^T, S]].
    Raises ZeroDivisionError where a pivot vanishes."""
    n = pm.n
    links = pm.links
    psi_hat, psi, m_hat = [None] * n, [None] * n, [None] * n
    child = None
    for k in range(n - 1, -1, -1):
        L = links[k]
        (mx, my, mz), I = _mass(L, q, k)
        m = L.m
        # M^_i = M_i + child's term; M_i = [[I, m d x], [-(m d x), m 1]]: 15 entries
        if child is not None:
            (ci, (ch0, ch1, ch2), cs_) = child
            Ih = (I[0] + ci[0], I[1] + ci[1], I[2] + ci[2], I[3] + ci[3], I[4] + ci[4],
                  I[5] + ci[5])
            H = ((ch0[0], ch0[1] - mz, ch0[2] + my),
                 (ch1[0] + mz, ch1[1], ch1[2] - mx),
                 (ch2[0] - my, ch2[1] + mx, ch2[2]))
            S = (cs_[0] + m, cs_[1], cs_[2], cs_[3] + m, cs_[4], cs_[5] + m)
        else:
            Ih = I
            H = ((0.0, -mz, my), (mz, 0.0, -mx), (-my, mx, 0.0))
            S = (m, 0.0, 0.0, m, 0.0, m)
        # psi^_i = M^_i p_i, m^_i = p_i^T psi^_i: the column of z (angular or linear)
        if L.revolute:
            col = (Ih[2], Ih[4], Ih[5], H[2][0], H[2][1], H[2][2])
            m_hat[k] = Ih[5]
        else:
            col = (H[0][2], H[1][2], H[2][2], S[2], S[4], S[5])
            m_hat[k] = S[5]
        psi_hat[k] = col
        if k == 0:
            break
        mh = m_hat[k]
        ps = (col[0] / mh, col[1] / mh, col[2] / mh, col[3] / mh, col[4] / mh, col[5] / mh)
        psi[k] = ps
        # Mbar_i = M^_i - psi^_i psi_i^T (21 distinct entries)
        Ib = (Ih[0] - col[0] * ps[0], Ih[1] - col[0] * ps[1], Ih[2] - col[0] * ps[2],
              Ih[3] - col[1] * ps[1], Ih[4] - col[1] * ps[2], Ih[5] - col[2] * ps[2])
        Hb = tuple((H[r][0] - col[r] * ps[3], H[r][1] - col[r] * ps[4],
                    H[r][2] - col[r] * ps[5]) for r in range(3))
        Sb = (S[0] - col[3] * ps[3], S[1] - col[3] * ps[4], S[2] - col[3] * ps[5],
              S[3] - col[4] * ps[4], S[4] - col[4] * ps[5], S[5] - col[5] * ps[5])
        # into F_{i-1}: up (Rz(theta_i), then Rx(alpha_{i-1})), then A^T Mbar A
        c, s = rot[k]
        cc, ss, cs = c * c, s * s, c * s
        cs2, dcs = cs + cs, cc - ss
        Ib = _sym_rz(c, s, cc, ss, cs, cs2, dcs, Ib)
        Hb = _gen_rz(c, s, Hb)
        Sb = _sym_rz(c, s, cc, ss, cs, cs2, dcs, Sb)
        P = links[k - 1]
        Ib, Hb, Sb = _sym_rx(P, Ib), _gen_rx(P, Hb), _sym_rx(P, Sb)
        a, b = _r(P, q, k - 1)
        child = _shift(a, b, (Ib, Hb, Sb))
    return psi_hat, psi, m_hat


def udu_solve(pm: PaperModel, q, rot, phi, psi_hat, psi, m_hat) -> list:
    """th'' (n,) from U D U^T th'' = phi (eqs. 19a-b, 20, 21a-b) with the factors of
    `udu_factors`:

        phi^_i = phi_i - p_i^T eta_{i,i+1},  eta_i = psi_i phi^_i + eta_{i,i+1},
        eta_{i-1,i} = A_{i,i-1}^T eta_i                                  (i = n .. 1)
        th''_i = (phi^_i - psi^_i^T mu_{i,i-1}) / m^_i,  mu_i = p_i th''_i + mu_{i,i-1},
        mu_{i+1,i} = A_{i+1,i} mu_i                                      (i = 1 .. n)
    """
    n = pm.n
    links = pm.links
    phi_hat = [None] * n
    eta = None                          # eta_{i,i+1}, in F_i
    for k in range(n - 1, -1, -1):
        L = links[k]
        if eta is None:
            phi_hat[k] = phi[k]
        else:
            phi_hat[k] = phi[k] - (eta[2] if L.revolute else eta[5])
        if k == 0:
            break
        ph, ps = phi_hat[k], psi[k]
        if eta is None:
            e = (ps[0] * ph, ps[1] * ph, ps[2] * ph, ps[3] * ph, ps[4] * ph, ps[5] * ph)
        else:
            e = (ps[0] * ph + eta[0], ps[1] * ph + eta[1], ps[2] * ph + eta[2],
                 ps[3] * ph + eta[3], ps[4] * ph + eta[4], ps[5] * ph + eta[5])
        c, s = rot[k]
        P = links[k - 1]
        nu, fu = _up(c, s, P, e[:3]), _up(c, s, P, e[3:])
        a, b = _r(P, q, k - 1)
        eta = (nu[0] - b * fu[1], nu[1] + b * fu[0] - a * fu[2], nu[2] + a * fu[1]) + fu

    qdd = [None] * n
    mu = None                           # mu_{i-1}, in F_{i-1}
    for k in range(n):
        L = links[k]
        if k == 0:
            qdd[k] = phi_hat[k] / m_hat[k]
        else:
            P = links[k - 1]
            a, b = _r(P, q, k - 1)
            w0, w1, w2 = mu[0], mu[1], mu[2]
            # mu_{i,i-1} = A mu_{i-1}: [w; v + w x r], r = (a, 0, b), into F_i
            vel = (mu[3] + w1 * b, mu[4] + w2 * a - w0 * b, mu[5] - w1 * a)
            c, s = rot[k]
            wm, vm = _down(c, s, P, (w0, w1, w2)), _down(c, s, P, vel)
            ph = psi_hat[k]
            qdd[k] = (phi_hat[k] - (ph[0] * wm[0] + ph[1] * wm[1] + ph[2] * wm[2]
                                    + ph[3] * vm[0] + ph[4] * vm[1] + ph[5] * vm[2])) \
                / m_hat[k]
        if k == n - 1:
            break
        # mu_i = p_i th''_i + mu_{i,i-1}
        if k == 0:
            mu = (0.0, 0.0, qdd[k], 0.0, 0.0, 0.0) if L.revolute \
                else (0.0, 0.0, 0.0, 0.0, 0.0, qdd[k])
        elif L.revolute:
            mu = (wm[0], wm[1], wm[2] + qdd[k], vm[0], vm[1], vm[2])
        else:
            mu = (wm[0], wm[1], wm[2], vm[0], vm[1], vm[2] + qdd[k])
    return qdd


def rfdsim(pm: PaperModel, q, qd, tau) -> list:
    """Joint accelerations th'' (n,) for q, qd and joint forces tau (n,) (SI): phi =
    tau - RIDIM(q, qd, 0), then U D U^T th'' = phi (seed 001 Sec 2.4.2)."""
    rot = joint_rotations(pm, q)
    h = ridim(pm, q, qd, None, rot)
    phi = [tau[k] - h[k] for k in range(pm.n)]
    psi_hat, psi, m_hat = udu_factors(pm, q, rot)
    return udu_solve(pm, q, rot, phi, psi_hat, psi, m_hat)


# ----------------------------------------------------------------------------------
# Counting (core.lab.op_count's counting numbers)
# ----------------------------------------------------------------------------------

def _counted_model(pm: PaperModel) -> PaperModel:
    """The model with every float a `Counted` value (operations on the model's
    constants count, as they do in the counted kernels)."""
    def conv(x):
        if isinstance(x, bool):
            return x
        if isinstance(x, float):
            return counted_array(np.array(x)).item()
        if isinstance(x, tuple):
            return tuple(conv(y) for y in x)
        return x
    links = tuple(replace(L, **{f.name: conv(getattr(L, f.name)) for f in fields(L)})
                  for L in pm.links)
    return PaperModel(links, conv(pm.minus_g))


def _counter(stop: threading.Event | None = None) -> Counter:
    return Counter(stop=stop, python_modules=(__name__,))


def _state(n: int, q, qd, x, seed: int):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, n) if q is None else np.asarray(q, dtype=float)
    qd = rng.uniform(-1, 1, n) if qd is None else np.asarray(qd, dtype=float)
    x = rng.uniform(-1, 1, n) if x is None else np.asarray(x, dtype=float)
    return (list(counted_array(q)), list(counted_array(qd)), list(counted_array(x)))


def _op_count(method: str, n: int, tally, stages, result) -> OpCount:
    return OpCount(method, n, tally.mul, tally.div, tally.add, tally.sub, tally.neg,
                   tally.cmp, tally.fn, stages, plain_array(np.array(result, dtype=object)))


def count_ridim(robot: Robot, q=None, qd=None, qdd=None, seed: int = 0) -> OpCount:
    """Operations of one `ridim` call (the papers' RIDIM in link frames) on the robot,
    the trigonometry of `joint_rotations` included (as functions, not M or A).
    q, qd, qdd (n,) random in [-1, 1] (from `seed`) where None: the count does not
    depend on them. Returns an OpCount of method "paper-ridim" whose result is tau."""
    pm = _counted_model(paper_model(robot))
    Q, Qd, Qdd = _state(pm.n, q, qd, qdd, seed)
    tau, tally, stages = _counter().call(ridim, pm, Q, Qd, Qdd)
    return _op_count("paper-ridim", pm.n, tally, stages, tau)


def count_rfdsim(robot: Robot, q=None, qd=None, tau=None, seed: int = 0,
                 stop: threading.Event | None = None) -> OpCount:
    """Operations of one `rfdsim` call (the papers' RFDSIM in link frames), by stage
    (`RFDSIM_STAGES`: bias forces, U D U^T factors, solve; "(own)": phi = tau - h).
    Arguments as `count_ridim`; stop cancels the count (CountCancelled). Returns an
    OpCount of method "paper-rfdsim" whose result is th''."""
    pm = _counted_model(paper_model(robot))
    Q, Qd, Tau = _state(pm.n, q, qd, tau, seed)
    qdd, tally, stages = _counter(stop).call(rfdsim, pm, Q, Qd, Tau, stages=RFDSIM_STAGES)
    return _op_count("paper-rfdsim", pm.n, tally, stages, qdd)
