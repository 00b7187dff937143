"""DeNOC building blocks and the recursions of Saha's papers, over a tree of joints.

Notation follows Saha (1999, seed 000) and Saha (seed 001, Sec 2), with the
twist of link i taken at the point O_i on the axis of joint i (seed 001,
Fig. 1b). Everything is expressed in the base frame, so A_ij and p_i are
plain 6x6 matrices and 6-vectors:

    t_i   = [w_i; v_i]       twist of link i at O_i                    (eq. 7)
    w_i   = [n_i; f_i]       wrench at O_i                             (eq. 7)
    M_i   = [[I_i, m d x 1], [-m d x 1, m 1]]  extended mass at O_i  (eq. 6)
    A_i,λ = [[1, 0], [a_i,λ x 1, 1]]         twist propagation        (eq. 11d)
    p_i   = [e_i; 0] (revolute) or [0; e_i] (prismatic)              (eqs. 11d, 12b)

On a tree the papers' "i-1" is the parent λ(i) (`mv.parent[i]`, -1 for a link on
the base), as in spatial_v2: the forward recursions run parents before children
(`mv.order`), the backward ones children before parents, adding each child's
contribution into its parent. A serial chain is the tree with parent(i) = i-1.

Index k in the code is 0-based: link k = Saha's link k+1. Joint k moves about z of
its row's DH frame 0 (`D.Rj[k]`, origin O_k); link k's own frame is the frame its
DH row ends in (`D.Rl[k]`). The model arrives as `mv` (`core.kernels.layout.ModelViews`)
and the per-call state as `D` (`core.kernels.data.Data`); every kernel is compiled with
numba. A kernel takes the model views `mv` and, by name, the arrays of D it reads and
writes (Saha's symbols): D itself is only ever a local of the entry points that cut
it (`core.kernels.data.data_views`). Inside the recursions rows are addressed by index
(`t[k, r]`, `A_times(A, k, t, p, t, k)`), not by views (`t[k]`): numba counts the
references of every view, which tripled the cost of a recursion.
"""
from __future__ import annotations

import numpy as np

from .buffers import compiled_kernel, inline_twin, inlined_kernel
from .linalg6 import A_times, AT_times_add, ATMA_add, M_p, add_p_times, p_dot
from .data import data_views


# ----------------------------------------------------------------------------------
# Kinematics: DH frames on a tree
# ----------------------------------------------------------------------------------

@inlined_kernel
def dh_frames(mv, q, Rj, oj, Rl, ol):
    """Joint frames (Rj, oj) and link frames (Rl, ol), each (n, 3, 3) and (n, 3).

    Joint frame k = (parent link's own frame, or the base) x placement_k; link
    frame k = joint frame k x Rz(theta_k) Tz(b_k) Tx(a_k) Rx(alpha_k) (Saha 1999,
    App. A); the joint variable q_k replaces theta_k (revolute) or b_k (prismatic).
    """
    n = mv.n
    order, parent, placed, place_R, place_p = mv.order, mv.parent, mv.placed, mv.place_R, mv.place_p
    dh, revolute = mv.dh, mv.revolute
    for i in range(n):
        k = order[i]
        p = parent[k]
        # joint frame: the parent's own frame (or the base) ...
        if p >= 0:
            for r in range(3):
                oj[k, r] = ol[p, r]
                for s in range(3):
                    Rj[k, r, s] = Rl[p, r, s]
        else:
            for r in range(3):
                oj[k, r] = 0.0
                for s in range(3):
                    Rj[k, r, s] = 1.0 if r == s else 0.0
        # ... carried by the placement of a chain's first row
        if placed[k]:
            for r in range(3):
                P0, P1, P2 = Rj[k, r, 0], Rj[k, r, 1], Rj[k, r, 2]
                oj[k, r] += P0 * place_p[k, 0] + P1 * place_p[k, 1] + P2 * place_p[k, 2]
                for s in range(3):
                    Rl[k, r, s] = P0 * place_R[k, 0, s] + P1 * place_R[k, 1, s] \
                        + P2 * place_R[k, 2, s]
            for r in range(3):  # Rl[k] held the product for a moment
                for s in range(3):
                    Rj[k, r, s] = Rl[k, r, s]
        a = dh[k, 0]
        b = dh[k, 1]
        alpha = dh[k, 2]
        theta = dh[k, 3]
        if revolute[k]:
            theta = q[k]
        else:
            b = q[k]
        ct, st = np.cos(theta), np.sin(theta)
        ca, sa = np.cos(alpha), np.sin(alpha)
        # Q = Rz(theta) Rx(alpha), and the origin offset [a ct, a st, b] in the joint frame
        Q00, Q01, Q02 = ct, -st * ca, st * sa
        Q10, Q11, Q12 = st, ct * ca, -ct * sa
        Q20, Q21, Q22 = 0.0, sa, ca
        px, py, pz = a * ct, a * st, b
        for r in range(3):
            R0, R1, R2 = Rj[k, r, 0], Rj[k, r, 1], Rj[k, r, 2]
            Rl[k, r, 0] = R0 * Q00 + R1 * Q10 + R2 * Q20
            Rl[k, r, 1] = R0 * Q01 + R1 * Q11 + R2 * Q21
            Rl[k, r, 2] = R0 * Q02 + R1 * Q12 + R2 * Q22
            ol[k, r] = oj[k, r] + R0 * px + R1 * py + R2 * pz


# ----------------------------------------------------------------------------------
# Per-link DeNOC quantities at one configuration
# ----------------------------------------------------------------------------------

@compiled_kernel
def link_quantities(mv, q, Rj, oj, Rl, ol, e, d, c, M, A):
    """Frames, e, d, c, M and A of every link at configuration q (base frame)."""
    n = mv.n
    dh_frames(mv, q, Rj, oj, Rl, ol)
    com, inertia, mass, parent = mv.com, mv.inertia, mv.mass, mv.parent
    for k in range(n):
        # the link frame's rotation, held in scalars (writes into M cannot alias them)
        R00, R01, R02 = Rl[k, 0, 0], Rl[k, 0, 1], Rl[k, 0, 2]
        R10, R11, R12 = Rl[k, 1, 0], Rl[k, 1, 1], Rl[k, 1, 2]
        R20, R21, R22 = Rl[k, 2, 0], Rl[k, 2, 1], Rl[k, 2, 2]
        cx, cy, cz = com[k, 0], com[k, 1], com[k, 2]
        for r in range(3):
            e[k, r] = Rj[k, r, 2]  # joint k axis = z of its joint frame
        c[k, 0] = ol[k, 0] + R00 * cx + R01 * cy + R02 * cz
        c[k, 1] = ol[k, 1] + R10 * cx + R11 * cy + R12 * cz
        c[k, 2] = ol[k, 2] + R20 * cx + R21 * cy + R22 * cz
        dx, dy, dz = c[k, 0] - oj[k, 0], c[k, 1] - oj[k, 1], c[k, 2] - oj[k, 2]
        d[k, 0], d[k, 1], d[k, 2] = dx, dy, dz
        m = mass[k]
        # I_k about O_k: I^c in the base frame, R I^c R^T, then the parallel-axis theorem
        # I = I^c - m (d x 1)(d x 1) = I^c + m (d.d 1 - d d^T)  (seed 001 after eq. 4b)
        J00, J01, J02 = inertia[k, 0], inertia[k, 1], inertia[k, 2]
        J10, J11, J12 = inertia[k, 3], inertia[k, 4], inertia[k, 5]
        J20, J21, J22 = inertia[k, 6], inertia[k, 7], inertia[k, 8]
        # X = R I^c
        X00 = R00 * J00 + R01 * J10 + R02 * J20
        X01 = R00 * J01 + R01 * J11 + R02 * J21
        X02 = R00 * J02 + R01 * J12 + R02 * J22
        X10 = R10 * J00 + R11 * J10 + R12 * J20
        X11 = R10 * J01 + R11 * J11 + R12 * J21
        X12 = R10 * J02 + R11 * J12 + R12 * J22
        X20 = R20 * J00 + R21 * J10 + R22 * J20
        X21 = R20 * J01 + R21 * J11 + R22 * J21
        X22 = R20 * J02 + R21 * J12 + R22 * J22
        dd = dx * dx + dy * dy + dz * dz
        M[k, 0, 0] = X00 * R00 + X01 * R01 + X02 * R02 + m * (dd - dx * dx)
        M[k, 0, 1] = X00 * R10 + X01 * R11 + X02 * R12 - m * dx * dy
        M[k, 0, 2] = X00 * R20 + X01 * R21 + X02 * R22 - m * dx * dz
        M[k, 1, 1] = X10 * R10 + X11 * R11 + X12 * R12 + m * (dd - dy * dy)
        M[k, 1, 2] = X10 * R20 + X11 * R21 + X12 * R22 - m * dy * dz
        M[k, 2, 2] = X20 * R20 + X21 * R21 + X22 * R22 + m * (dd - dz * dz)
        M[k, 1, 0] = M[k, 0, 1]
        M[k, 2, 0] = M[k, 0, 2]
        M[k, 2, 1] = M[k, 1, 2]
        # eq. 6: off-diagonal blocks m (d x 1) and -m (d x 1) = its transpose; m 1
        M[k, 0, 3], M[k, 0, 4], M[k, 0, 5] = 0.0, -m * dz, m * dy
        M[k, 1, 3], M[k, 1, 4], M[k, 1, 5] = m * dz, 0.0, -m * dx
        M[k, 2, 3], M[k, 2, 4], M[k, 2, 5] = -m * dy, m * dx, 0.0
        for r in range(3):
            for s in range(3):
                M[k, 3 + r, s] = M[k, s, 3 + r]
                M[k, 3 + r, 3 + s] = m if r == s else 0.0
        # eq. 11d: A_{k,λ} = [[1, 0], [a_{k,λ} x 1, 1]], stored as a_{k,λ} = O_λ - O_k
        p = parent[k]
        for r in range(3):
            A[k, r] = oj[p, r] - oj[k, r] if p >= 0 else 0.0


# ----------------------------------------------------------------------------------
# RIDIM: recursive inverse dynamics (seed 001 Sec 2.4.1; seed 000 Sec 5.1)
# ----------------------------------------------------------------------------------

@inlined_kernel
def twists(mv, qd, e, A, t):
    """Forward recursion for the twists, eq. 11c: t_k = A_{k,λ} t_λ + p_k qd_k."""
    order, parent, revolute = mv.order, mv.parent, mv.revolute
    for i in range(mv.n):
        k = order[i]
        p = parent[k]
        if p < 0:
            for r in range(6):
                t[k, r] = 0.0
        else:
            A_times(A, k, t, p, t, k)
        add_p_times(revolute[k], e, k, qd[k], t, k)


@inlined_kernel
def twist_rates(mv, qd, qdd, gravity, oj, e, A, t, tdot):
    """Twists and twist rates, eqs. 11c and 17 (gravity enters as tdot_base = [0; -g]).

    tdot_k = [w'_k; acceleration of the material point of link k at O_k].
    """
    twists(mv, qd, e, A, t)
    order, parent, revolute = mv.order, mv.parent, mv.revolute
    for i in range(mv.n):
        k = order[i]
        p = parent[k]
        if p < 0:
            # eq. 17 / 32: gravity enters as the base acceleration rho = [0; -g]
            for r in range(3):
                tdot[k, r] = 0.0
                tdot[k, r + 3] = -gravity[r]
            wx = wy = wz = 0.0
        else:
            # A_{k,λ} tdot_λ + Adot_{k,λ} t_λ, where Adot t = [0; w x (w x a)] with
            # a = O_k - O_λ: the acceleration of the point of link λ at O_k
            A_times(A, k, tdot, p, tdot, k)
            wx, wy, wz = t[p, 0], t[p, 1], t[p, 2]
            ax, ay, az = oj[k, 0] - oj[p, 0], oj[k, 1] - oj[p, 1], oj[k, 2] - oj[p, 2]
            cx, cy, cz = wy * az - wz * ay, wz * ax - wx * az, wx * ay - wy * ax
            tdot[k, 3] += wy * cz - wz * cy
            tdot[k, 4] += wz * cx - wx * cz
            tdot[k, 5] += wx * cy - wy * cx
        # joint terms: p_k qdd_k + pdot_k qd_k, pdot_k = W_λ p_k (e fixed in link λ).
        # For a prismatic joint the material point of link k at O_k also feels the
        # sliding part of Adot, which doubles the Coriolis term: 2 w_λ x e qd.
        add_p_times(revolute[k], e, k, qdd[k], tdot, k)
        ex, ey, ez = e[k, 0], e[k, 1], e[k, 2]
        cx, cy, cz = wy * ez - wz * ey, wz * ex - wx * ez, wx * ey - wy * ex
        if revolute[k]:
            tdot[k, 0] += cx * qd[k]
            tdot[k, 1] += cy * qd[k]
            tdot[k, 2] += cz * qd[k]
        else:
            tdot[k, 3] += 2.0 * cx * qd[k]
            tdot[k, 4] += 2.0 * cy * qd[k]
            tdot[k, 5] += 2.0 * cz * qd[k]


@compiled_kernel
def inverse_dynamics_kernel(mv, qd, qdd, gravity, oj, ol, e, d, M, A, f_ext, t, tdot, wstar,
                            tau):
    """RIDIM: joint forces tau (n,) for rates qd, qdd at the configuration of the link
    quantities (`link_quantities` first). f_ext (n, 6) holds the wrench [n; f] the
    environment applies to each link, moment about the link's own frame origin, base
    frame; wstar receives the wrenches w_k at O_k.
    """
    n = mv.n
    order, parent, revolute = mv.order, mv.parent, mv.revolute

    # ---- forward recursion: twists and twist rates (eqs. 11c, 17) ----
    twist_rates(mv, qd, qdd, gravity, oj, e, A, t, tdot)

    # ---- inertia wrenches, eq. 5: w*_k = M_k tdot_k + W_k M_k E_k t_k ----
    for k in range(n):
        for r in range(6):
            s = 0.0
            for c in range(6):
                s += M[k, r, c] * tdot[k, c]
            wstar[k, r] = s
        wx, wy, wz = t[k, 0], t[k, 1], t[k, 2]
        Ix = M[k, 0, 0] * wx + M[k, 0, 1] * wy + M[k, 0, 2] * wz
        Iy = M[k, 1, 0] * wx + M[k, 1, 1] * wy + M[k, 1, 2] * wz
        Iz = M[k, 2, 0] * wx + M[k, 2, 1] * wy + M[k, 2, 2] * wz
        wstar[k, 0] += wy * Iz - wz * Iy  # w x (I w)
        wstar[k, 1] += wz * Ix - wx * Iz
        wstar[k, 2] += wx * Iy - wy * Ix
        dx, dy, dz = d[k, 0], d[k, 1], d[k, 2]  # m w x (w x d)
        cx, cy, cz = wy * dz - wz * dy, wz * dx - wx * dz, wx * dy - wy * dx
        m = M[k, 3, 3]
        wstar[k, 3] += m * (wy * cz - wz * cy)
        wstar[k, 4] += m * (wz * cx - wx * cz)
        wstar[k, 5] += m * (wx * cy - wy * cx)
        # the environment's wrench on link k, moved from its frame origin to O_k
        if f_ext[k, 3] != 0.0 or f_ext[k, 4] != 0.0 or f_ext[k, 5] != 0.0 \
                or f_ext[k, 0] != 0.0 or f_ext[k, 1] != 0.0 or f_ext[k, 2] != 0.0:
            fx, fy, fz = f_ext[k, 3], f_ext[k, 4], f_ext[k, 5]
            ax, ay, az = ol[k, 0] - oj[k, 0], ol[k, 1] - oj[k, 1], ol[k, 2] - oj[k, 2]
            wstar[k, 0] -= f_ext[k, 0] + ay * fz - az * fy
            wstar[k, 1] -= f_ext[k, 1] + az * fx - ax * fz
            wstar[k, 2] -= f_ext[k, 2] + ax * fy - ay * fx
            wstar[k, 3] -= fx
            wstar[k, 4] -= fy
            wstar[k, 5] -= fz

    # ---- backward recursion: w_λ += A_{k,λ}^T w_k; tau_k = p_k^T w_k ----
    for i in range(n - 1, -1, -1):
        k = order[i]
        tau[k] = p_dot(revolute[k], e, k, wstar, k)
        p = parent[k]
        if p >= 0:
            AT_times_add(A, k, wstar, k, wstar, p)


@compiled_kernel
def energy_kernel(mv, gravity, c, M, t):
    """Kinetic energy 1/2 sum t_k^T M_k t_k and potential energy -sum m_k g . c_k (J)."""
    mass = mv.mass
    T = 0.0
    V = 0.0
    for k in range(mv.n):
        for r in range(6):
            s = 0.0
            for col in range(6):
                s += M[k, r, col] * t[k, col]
            T += 0.5 * t[k, r] * s
        V -= mass[k] * (gravity[0] * c[k, 0] + gravity[1] * c[k, 1] + gravity[2] * c[k, 2])
    return T, V


# ----------------------------------------------------------------------------------
# Composite bodies and the GIM (seed 000 eqs. 23b-24)
# ----------------------------------------------------------------------------------

@compiled_kernel
def composite_inertias(mv, M, A, M_tilde, tmp66):
    """eq. 23b: M~_k = M_k + sum over children c of A_{c,k}^T M~_c A_{c,k}."""
    n = mv.n
    order, parent = mv.order, mv.parent
    scratch = tmp66[0]
    for k in range(n):
        for r in range(6):
            for c in range(6):
                M_tilde[k, r, c] = M[k, r, c]
    for i in range(n - 1, -1, -1):
        k = order[i]
        p = parent[k]
        if p >= 0:
            ATMA_add(A, k, M_tilde, k, M_tilde, p, scratch)


@compiled_kernel
def gim_from_composite(mv, e, A, M_tilde, s6, I):
    """eq. 24: i_kj = p_k^T A_{jk}^T M~_j p_j for every ancestor k of j (and symmetric);
    zero where neither joint is an ancestor of the other. s6 (>= 2, 6) is scratch."""
    n = mv.n
    parent, revolute = mv.parent, mv.revolute
    for r in range(n):
        for s in range(n):
            I[r, s] = 0.0
    for j in range(n):
        # f = M~_j p_j (s6[0]), the wrench at O_j that accelerates the composite body of
        # j at qdd_j = 1; shifted down the ancestors with A^T (s6[1] as scratch)
        M_p(revolute[j], e, j, M_tilde, j, s6, 0)
        I[j, j] = p_dot(revolute[j], e, j, s6, 0)
        c = j
        k = parent[j]
        while k >= 0:
            for r in range(6):
                s6[1, r] = 0.0
            AT_times_add(A, c, s6, 0, s6, 1)  # shift the wrench from O_c to O_k
            for r in range(6):
                s6[0, r] = s6[1, r]
            I[k, j] = p_dot(revolute[k], e, k, s6, 0)
            I[j, k] = I[k, j]
            c = k
            k = parent[k]


# ----------------------------------------------------------------------------------
# RFDSIM: recursive forward dynamics by UDU^T (seed 001 eqs. 18-21; seed 000 App. B)
# ----------------------------------------------------------------------------------

@compiled_kernel
def articulated_inertias(mv, e, M, A, M_hat, psi_hat, m_hat, tmp66):
    """Articulated-body inertias, eqs. 19c-d. Returns the 0-based index of a joint
    whose pivot m_hat is not positive (singular GIM), or -1.

      M^_k = M_k + sum over children c of A_{c,k}^T Mbar_c A_{c,k}
      psi^_k = M^_k p_k;  m^_k = p_k^T psi^_k  (the D of UDU^T)
      Mbar_k = M^_k - psi^_k psi^_k^T / m^_k            (in tmp66[0]; tmp66[1] scratch)
    """
    n = mv.n
    order, parent, revolute = mv.order, mv.parent, mv.revolute
    scratch = tmp66[1]
    for k in range(n):
        for r in range(6):
            for c in range(6):
                M_hat[k, r, c] = M[k, r, c]
    for i in range(n - 1, -1, -1):
        k = order[i]
        M_p(revolute[k], e, k, M_hat, k, psi_hat, k)
        m_hat[k] = p_dot(revolute[k], e, k, psi_hat, k)
        # singular if the pivot vanishes relative to the block it is taken from
        # (rotational for a revolute joint, translational for a prismatic one)
        b = 0 if revolute[k] else 3
        scale = max(abs(M_hat[k, b, b]), abs(M_hat[k, b + 1, b + 1]), abs(M_hat[k, b + 2, b + 2]))
        if not m_hat[k] > 1e-13 * scale:
            return k
        p = parent[k]
        if p >= 0:
            for r in range(6):
                for c in range(6):
                    tmp66[0, r, c] = M_hat[k, r, c] - psi_hat[k, r] * psi_hat[k, c] / m_hat[k]
            ATMA_add(A, k, tmp66, 0, M_hat, p, scratch)
    return -1


@compiled_kernel
def udu_solve(mv, e, A, psi_hat, m_hat, phi, eta, phi_hat, mu, qdd):
    """Solve U D U^T qdd = phi recursively (eqs. 19a-b, 20, 21a-b) with the factors
    psi_hat, m_hat of `articulated_inertias`; eta, phi_hat, mu are its work arrays."""
    n = mv.n
    order, parent, revolute = mv.order, mv.parent, mv.revolute
    # eqs. 19a-b, backward: phi^_k = phi_k - p_k^T eta_k,
    #   eta_λ += A_{k,λ}^T (eta_k + psi^_k phi^_k / m^_k),  eta = 0 at the leaves
    for k in range(n):
        for r in range(6):
            eta[k, r] = 0.0
    for i in range(n - 1, -1, -1):
        k = order[i]
        phi_hat[k] = phi[k] - p_dot(revolute[k], e, k, eta, k)
        p = parent[k]
        if p >= 0:
            s = phi_hat[k] / m_hat[k]
            for r in range(6):
                eta[k, r] += psi_hat[k, r] * s  # eta_k is final: reuse it for the sum
            AT_times_add(A, k, eta, k, eta, p)
    # eqs. 20-21, forward: qdd_k = phi^_k / m^_k - psi^_k^T mu_{k,λ} / m^_k,
    #   mu_{k,λ} = A_{k,λ} mu_λ,  mu_k = p_k qdd_k + mu_{k,λ},  mu = 0 at the base
    for i in range(n):
        k = order[i]
        p = parent[k]
        if p < 0:
            for r in range(6):
                mu[k, r] = 0.0
        else:
            A_times(A, k, mu, p, mu, k)
        s = 0.0
        for r in range(6):
            s += psi_hat[k, r] * mu[k, r]
        qdd[k] = (phi_hat[k] - s) / m_hat[k]
        add_p_times(revolute[k], e, k, qdd[k], mu, k)


# the recursions inlined into the hot paths (`core.kernels.buffers.inline_twin`): the forward
# dynamics below, the single-state and batch inverse dynamics, the closed-chain kernel
link_quantities_inline = inline_twin(link_quantities)
inverse_dynamics_inline = inline_twin(inverse_dynamics_kernel)
articulated_inertias_inline = inline_twin(articulated_inertias)
udu_solve_inline = inline_twin(udu_solve)


@compiled_kernel
def forward_dynamics_tree(mv, q, qd, tau, f_ext, gravity, Rj, oj, Rl, ol, e, d, c, M, A, t,
                          tdot, w, tmp66, zero, phi, M_hat, psi_hat, m_hat, eta, phi_hat, mu,
                          qdd):
    """RFDSIM: phi = tau - ID(q, qd, 0) (seed 001 Sec 2.4.2, input item 4), then
    U D U^T qdd = phi (eqs. 18-21). The arrays are the Data fields of the same names
    (`forward_dynamics_on` passes them from a workspace buffer); they are left filled
    at q (link quantities, twists, the bias pass's twist rates, articulated inertias).
    Returns -1, or the 0-based joint whose pivot vanished (qdd is then not written)."""
    link_quantities_inline(mv, q, Rj, oj, Rl, ol, e, d, c, M, A)
    inverse_dynamics_inline(mv, qd, zero, gravity, oj, ol, e, d, M, A, f_ext, t, tdot, w, phi)
    for k in range(mv.n):
        phi[k] = tau[k] - phi[k]
    bad = articulated_inertias_inline(mv, e, M, A, M_hat, psi_hat, m_hat, tmp66)
    if bad >= 0:
        return bad
    udu_solve_inline(mv, e, A, psi_hat, m_hat, phi, eta, phi_hat, mu, qdd)
    return -1


@compiled_kernel
def forward_dynamics_on(mv, ws, q, qd, tau, f_ext, gravity, qdd):
    """`forward_dynamics_tree` with the arrays of the workspace buffer ws."""
    D = data_views(ws, mv.n, mv.m)
    return forward_dynamics_tree(mv, q, qd, tau, f_ext, gravity, D.Rj, D.oj, D.Rl, D.ol, D.e,
                                 D.d, D.c, D.M, D.A, D.t, D.tdot, D.w, D.tmp66, D.zero,
                                 D.phi, D.M_hat, D.psi_hat, D.m_hat, D.eta, D.phi_hat, D.mu,
                                 qdd)
