"""The joint-torque regressor Y (tau = Y pi) of a tree of revolute and prismatic joints,
one compiled pass per sample: `regressor_batch`. The symbols and the parameter vector pi
are `core.algorithms.regressor`'s (which checks the arguments and raises the errors).

Per sample: the DeNOC kinematics (`core.kernels.denoc`: link frames R_k, O_k, P_k, axes
e_k, twists t_k = [w; v_O] and twist rates tdot_k = [w'; a_O - g]), then per link k its
wrench matrix Phi_k (6, 10), [n at P_k; f] = Phi_k pi_k, with r = P_k - O_k,
a_P = a_O - g + w' x r + w x (w x r) and, for pi_k = [m, h_l, I_vec] (h_l = m c, I_vec =
(xx, yy, zz, xy, xz, yz) in the link's frame, R_k's columns r_c):

    m:      f = a_P,                        n = 0
    h_l,c:  f = w' x r_c + w x (w x r_c),   n = r_c x a_P
    I_vec:  f = 0,                          n = R_k (L(w'_l) + w_l x L(w_l)) (columns)

where w_l = R_k^T w, w'_l = R_k^T w' and L(u) I_vec = I u. Joint j carries the wrench of
every link k it supports: its row's columns of link k are e_j . n + (e_j x (P_k - O_j)) . f
(revolute: e_j . (n + (P_k - O_j) x f)) or e_j . f (prismatic). The friction and rotor
columns of joint j are qd_j, tanh(qd_j / band) and qdd_j in row j; the rest are zeros.
"""
from __future__ import annotations

from numba import njit

from . import denoc
from .buffers import KERNEL_OPTIONS, inlined_kernel
from .data import data_views
from .drives import coulomb_shape
from .joints import JOINT_REVOLUTE
from .layout import model_views

#: Parameters per link (m, h_l, I_vec) and per joint (c_v, c_c, r^2 I_r).
LINK_PARAMETERS = 10
JOINT_PARAMETERS = 3
#: While every joint value, rate and acceleration and every length of the model (DH a
#: and b, placements) and gravity are within this bound, no entry can overflow: with n
#: up to 10^4, origins stay below 3e34 m, w below 1e34, w' and the columns of W and
#: I_vec below 1e68, a_P below 1e107 and an entry below 1e143, far from 1.8e308.
NO_OVERFLOW = 1e30


@njit(**KERNEL_OPTIONS, fastmath={"contract"})  # multiply-adds fused: 5 % faster
def regressor_batch(F, I, ws, q, qd, qdd, band, Y):
    """Y[s] (n, 13 n) = the regressor at (q[s], qd[s], qdd[s]) for every sample s of the
    (S, n) arrays, with the model's gravity; `band` the friction band (rad/s, m/s).
    Y must hold zeros on entry (`core.kernels.buffers.zeroed_result`): only the
    entries that can be nonzero are written (a joint's columns of the links it does not
    support, and of the other joints' friction and rotor, stay zero). Returns True
    when no entry can have overflowed, all arguments and the model's lengths being
    within NO_OVERFLOW (finite arguments beyond it: False, and the caller looks)."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    n = mv.n
    g = D.g
    for a in range(3):
        g[a] = mv.gravity[a]
    Rl, ol, oj, e, t, tdot = D.Rl, D.ol, D.oj, D.e, D.t, D.tdot
    parent, kind = mv.parent, mv.kind
    p = LINK_PARAMETERS * n
    bounded = abs(g[0]) + abs(g[1]) + abs(g[2]) <= NO_OVERFLOW
    for k in range(n):
        if not (abs(mv.dh[k, 0]) + abs(mv.dh[k, 1]) + abs(mv.place_p[k, 0])
                + abs(mv.place_p[k, 1]) + abs(mv.place_p[k, 2]) <= NO_OVERFLOW):
            bounded = False
    for s in range(q.shape[0]):
        size = 0.0  # one test of a sum: a test per number cost 2 % of the pass
        for j in range(n):
            size += abs(q[s, j]) + abs(qd[s, j]) + abs(qdd[s, j])
        if not size <= NO_OVERFLOW:
            bounded = False
        # the frames, axes e_k (eq. 11a) and a_{k,parent} (eq. 11d) of
        # denoc.link_quantities, without the mass matrices the regressor does not use
        denoc.dh_frames(mv, q[s], D.Rj, oj, Rl, ol, D.cs)
        for k in range(n):
            up = parent[k]
            for a in range(3):
                e[k, a] = D.Rj[k, a, 2]
                D.A[k, a] = oj[up, a] - oj[k, a] if up >= 0 else 0.0
        denoc.twist_rates(mv, D, qd[s], qdd[s], g)
        Ys = Y[s]
        for k in range(n):
            # link k's wrench matrix Phi_k (module docstring) in its own frame, in scalars
            wx, wy, wz = t[k, 0], t[k, 1], t[k, 2]
            dx, dy, dz = tdot[k, 0], tdot[k, 1], tdot[k, 2]  # w'
            rx, ry, rz = ol[k, 0] - oj[k, 0], ol[k, 1] - oj[k, 1], ol[k, 2] - oj[k, 2]
            # a_P = a_O - g + w' x r + w x (w x r)
            cx, cy, cz = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx
            aPx = tdot[k, 3] + dy * rz - dz * ry + wy * cz - wz * cy
            aPy = tdot[k, 4] + dz * rx - dx * rz + wz * cx - wx * cz
            aPz = tdot[k, 5] + dx * ry - dy * rx + wx * cy - wy * cx
            ax, ay, az = transposed_times(Rl, k, aPx, aPy, aPz)  # a_P in the link's frame
            lx, ly, lz = transposed_times(Rl, k, wx, wy, wz)  # w_l
            mx, my, mz = transposed_times(Rl, k, dx, dy, dz)  # w'_l
            # h_l's entry c: f = W e_c with W = [w'_l x] + [w_l x]^2 = [w'_l x] + w_l w_l^T
            # - |w_l|^2 1, n = e_c x a_P; joint j takes (W^T u_l + a_P x e_l)_c
            ww = lx * lx + ly * ly + lz * lz
            W00, W11, W22 = lx * lx - ww, ly * ly - ww, lz * lz - ww
            W01, W02, W12 = lx * ly - mz, lx * lz + my, ly * lz - mx  # W_ab = W's (a, b)
            W10, W20, W21 = lx * ly + mz, lx * lz - my, ly * lz + mx
            # I_vec's entry c: n = R_k v_c, v_c = L(w'_l) col c + w_l x L(w_l) col c, with
            # L's columns (u_x,0,0), (0,u_y,0), (0,0,u_z), (u_y,u_x,0), (u_z,0,u_x),
            # (0,u_z,u_y) for xx, yy, zz, xy, xz, yz; joint j takes e_l . v_c
            v0x, v0y, v0z = mx, lz * lx, -ly * lx
            v1x, v1y, v1z = -lz * ly, my, lx * ly
            v2x, v2y, v2z = ly * lz, -lx * lz, mz
            v3x, v3y, v3z = my - lz * lx, mx + lz * ly, lx * lx - ly * ly
            v4x, v4y, v4z = mz + ly * lx, lz * lz - lx * lx, mx - ly * lz
            v5x, v5y, v5z = ly * ly - lz * lz, mz - lx * ly, my + lx * lz
            col = LINK_PARAMETERS * k
            j = k
            while j >= 0:  # joint j supports link k
                revolute = kind[j] == JOINT_REVOLUTE
                if j == k:
                    # joint k in its own link's frame: with Q = Rz(theta) Rx(alpha) and
                    # R_k = (joint frame) Q, e_l = Q^T z = (0, sin alpha, cos alpha) and
                    # u_l = e_l x Q^T (a cos theta, a sin theta, b) = (0, a cos alpha,
                    # -a sin alpha): constants of the DH row (the zeros spare a third)
                    ca, sa = mv.dh[k, 4], mv.dh[k, 5]
                    if revolute:
                        uy, uz = mv.dh[k, 0] * ca, -mv.dh[k, 0] * sa
                        y0 = uy * ay + uz * az
                        y1 = W10 * uy + W20 * uz + ay * ca - az * sa
                        y2 = W11 * uy + W21 * uz - ax * ca
                        y3 = W12 * uy + W22 * uz + ax * sa
                        y4 = sa * v0y + ca * v0z
                        y5 = sa * v1y + ca * v1z
                        y6 = sa * v2y + ca * v2z
                        y7 = sa * v3y + ca * v3z
                        y8 = sa * v4y + ca * v4z
                        y9 = sa * v5y + ca * v5z
                    else:
                        y0 = sa * ay + ca * az
                        y1 = W10 * sa + W20 * ca
                        y2 = W11 * sa + W21 * ca
                        y3 = W12 * sa + W22 * ca
                        y4 = y5 = y6 = y7 = y8 = y9 = 0.0
                else:
                    ex, ey, ez = transposed_times(Rl, k, e[j, 0], e[j, 1], e[j, 2])  # e_l
                    if revolute:
                        # e_j . (n + (P_k - O_j) x f) = e_l . n_l + u_l . f_l,
                        # u_l = e_l x (P_k - O_j)_l
                        px, py, pz = transposed_times(Rl, k, ol[k, 0] - oj[j, 0],
                                                      ol[k, 1] - oj[j, 1], ol[k, 2] - oj[j, 2])
                        ux, uy, uz = ey * pz - ez * py, ez * px - ex * pz, ex * py - ey * px
                        y0 = ux * ax + uy * ay + uz * az
                        y1 = W00 * ux + W10 * uy + W20 * uz + ay * ez - az * ey
                        y2 = W01 * ux + W11 * uy + W21 * uz + az * ex - ax * ez
                        y3 = W02 * ux + W12 * uy + W22 * uz + ax * ey - ay * ex
                        y4 = ex * v0x + ey * v0y + ez * v0z
                        y5 = ex * v1x + ey * v1y + ez * v1z
                        y6 = ex * v2x + ey * v2y + ez * v2z
                        y7 = ex * v3x + ey * v3y + ez * v3z
                        y8 = ex * v4x + ey * v4y + ez * v4z
                        y9 = ex * v5x + ey * v5y + ez * v5z
                    else:  # e_j . f = e_l . f_l (I_vec's columns stay zero)
                        y0 = ex * ax + ey * ay + ez * az
                        y1 = W00 * ex + W10 * ey + W20 * ez
                        y2 = W01 * ex + W11 * ey + W21 * ez
                        y3 = W02 * ex + W12 * ey + W22 * ez
                        y4 = y5 = y6 = y7 = y8 = y9 = 0.0
                # in memory order; a prismatic joint's I_vec columns stay zero
                Ys[j, col] = y0
                Ys[j, col + 1] = y1
                Ys[j, col + 2] = y2
                Ys[j, col + 3] = y3
                if revolute:
                    Ys[j, col + 4] = y4
                    Ys[j, col + 5] = y5
                    Ys[j, col + 6] = y6
                    Ys[j, col + 7] = y7
                    Ys[j, col + 8] = y8
                    Ys[j, col + 9] = y9
                j = parent[j]
        for j in range(n):
            c = p + JOINT_PARAMETERS * j
            Ys[j, c] = qd[s, j]
            Ys[j, c + 1] = coulomb_shape(qd[s, j] / band)
            Ys[j, c + 2] = qdd[s, j]
    return bounded


@inlined_kernel
def transposed_times(Rl, k, x, y, z):
    """R_k^T (x, y, z) for R_k = Rl[k] (3, 3): three numbers."""
    return (Rl[k, 0, 0] * x + Rl[k, 1, 0] * y + Rl[k, 2, 0] * z,
            Rl[k, 0, 1] * x + Rl[k, 1, 1] * y + Rl[k, 2, 1] * z,
            Rl[k, 0, 2] * x + Rl[k, 1, 2] * y + Rl[k, 2, 2] * z)
