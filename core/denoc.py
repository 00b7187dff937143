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
DH row ends in (`D.Rl[k]`). The model arrives as `mv` (`core.kernel_model.ModelViews`)
and the per-call state as `D` (`core.workspace.Data`); every kernel is compiled with
numba and writes only into D. Each kernel binds the fields it uses to local names at
its top: inside numba every `D.x` is a reference-counted access, too dear in a loop.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linalg6 import A_times, AT_times_add, ATMA_add, cross, cross_add, dot, matvec, skew_into


# ----------------------------------------------------------------------------------
# Kinematics: DH frames on a tree
# ----------------------------------------------------------------------------------

@njit(cache=True)
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
        # joint frame: the parent's own frame (or the base) carried by the placement
        if placed[k] == 0:
            for r in range(3):
                if p >= 0:
                    oj[k, r] = ol[p, r]
                    for s in range(3):
                        Rj[k, r, s] = Rl[p, r, s]
                else:
                    oj[k, r] = 0.0
                    for s in range(3):
                        Rj[k, r, s] = 1.0 if r == s else 0.0
        else:
            PR = place_R[k]
            pp = place_p[k]
            for r in range(3):
                if p >= 0:
                    P0, P1, P2 = Rl[p, r, 0], Rl[p, r, 1], Rl[p, r, 2]
                    oj[k, r] = ol[p, r] + P0 * pp[0] + P1 * pp[1] + P2 * pp[2]
                    for s in range(3):
                        Rj[k, r, s] = P0 * PR[0, s] + P1 * PR[1, s] + P2 * PR[2, s]
                else:
                    oj[k, r] = pp[r]
                    for s in range(3):
                        Rj[k, r, s] = PR[r, s]
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

@njit(cache=True)
def link_quantities(mv, q, D):
    """Fill D's frames, e, d, c, M and A at configuration q (base frame)."""
    n = mv.n
    Rj, oj, Rl, ol = D.Rj, D.oj, D.Rl, D.ol
    dh_frames(mv, q, Rj, oj, Rl, ol)
    e, d, c, M, A = D.e, D.d, D.c, D.M, D.A
    coms, inertias, mass, parent = mv.com, mv.inertia, mv.mass, mv.parent
    for k in range(n):
        Rk = Rl[k]  # link k's own frame
        com = coms[k]
        inertia = inertias[k]
        for r in range(3):
            e[k, r] = Rj[k, r, 2]  # joint k axis = z of its joint frame
            c[k, r] = ol[k, r] + Rk[r, 0] * com[0] + Rk[r, 1] * com[1] + Rk[r, 2] * com[2]
            d[k, r] = c[k, r] - oj[k, r]
        m = mass[k]
        # I_k about O_k: I^c rotated into the base frame, then the parallel-axis
        # theorem I = I^c - m (d x 1)(d x 1)  (seed 001 after eq. 4b)
        Mk = M[k]
        dd = d[k, 0] ** 2 + d[k, 1] ** 2 + d[k, 2] ** 2
        RI = Mk[3:, 3:]  # scratch: R I^c, overwritten below
        for r in range(3):
            for v in range(3):
                RI[r, v] = (Rk[r, 0] * inertia[v] + Rk[r, 1] * inertia[3 + v]
                            + Rk[r, 2] * inertia[6 + v])
        for r in range(3):
            for s in range(3):
                acc = RI[r, 0] * Rk[s, 0] + RI[r, 1] * Rk[s, 1] + RI[r, 2] * Rk[s, 2]
                Mk[r, s] = acc + m * ((dd if r == s else 0.0) - d[k, r] * d[k, s])
        for r in range(3):
            for s in range(3):
                Mk[r + 3, s + 3] = m if r == s else 0.0
        # eq. 6: off-diagonal blocks m (d x 1) and -m (d x 1)
        skew_into(d[k], Mk, 0, 3, m)
        skew_into(d[k], Mk, 3, 0, -m)
        # eq. 11d: A_{k,λ} = [[1, 0], [a_{k,λ} x 1, 1]], stored as a_{k,λ} = O_λ - O_k
        p = parent[k]
        for r in range(3):
            A[k, r] = oj[p, r] - oj[k, r] if p >= 0 else 0.0


@njit(cache=True, inline="always")
def p_dot_w(revolute_k, e_k, w):
    """p_k^T w: the joint component of a wrench (n . e or f . e)."""
    if revolute_k:
        return e_k[0] * w[0] + e_k[1] * w[1] + e_k[2] * w[2]
    return e_k[0] * w[3] + e_k[1] * w[4] + e_k[2] * w[5]


@njit(cache=True, inline="always")
def add_p_times(revolute_k, e_k, s, out):
    """out += p_k s."""
    base = 0 if revolute_k else 3
    for r in range(3):
        out[base + r] += e_k[r] * s


# ----------------------------------------------------------------------------------
# RIDIM: recursive inverse dynamics (seed 001 Sec 2.4.1; seed 000 Sec 5.1)
# ----------------------------------------------------------------------------------

@njit(cache=True)
def twists(mv, qd, D):
    """Forward recursion for the twists, eq. 11c: t_k = A_{k,λ} t_λ + p_k qd_k."""
    t, A, e = D.t, D.A, D.e
    order, parent, revolute = mv.order, mv.parent, mv.revolute
    for i in range(mv.n):
        k = order[i]
        p = parent[k]
        if p < 0:
            for r in range(6):
                t[k, r] = 0.0
        else:
            A_times(A[k], t[p], t[k])
        add_p_times(revolute[k], e[k], qd[k], t[k])


@njit(cache=True)
def twist_rates(mv, qd, qdd, gravity, D):
    """Twists and twist rates, eqs. 11c and 17 (gravity enters as tdot_base = [0; -g]).

    tdot_k = [w'_k; acceleration of the material point of link k at O_k].
    """
    twists(mv, qd, D)
    t, tdot, e, A, oj = D.t, D.tdot, D.e, D.A, D.oj
    order, parent, revolute = mv.order, mv.parent, mv.revolute
    s3 = D.s3
    w_prev, tmp, a = s3[0], s3[1], s3[2]
    for i in range(mv.n):
        k = order[i]
        p = parent[k]
        td = tdot[k]
        if p < 0:
            # eq. 17 / 32: gravity enters as the base acceleration rho = [0; -g]
            for r in range(3):
                td[r] = 0.0
                td[r + 3] = -gravity[r]
                w_prev[r] = 0.0
        else:
            # A_{k,λ} tdot_λ + Adot_{k,λ} t_λ, where Adot t = [0; w x (w x a)]
            # with a = O_k - O_λ: the acceleration of the point of link λ at O_k.
            A_times(A[k], tdot[p], td)
            for r in range(3):
                w_prev[r] = t[p, r]
                a[r] = oj[k, r] - oj[p, r]
            cross(w_prev, a, tmp)
            cross_add(w_prev, tmp, td[3:])
        # joint terms: p_k qdd_k + pdot_k qd_k, pdot_k = W_λ p_k (e fixed in link λ).
        # For a prismatic joint the material point of link k at O_k also feels the
        # sliding part of Adot, which doubles the Coriolis term: 2 w_λ x e qd.
        add_p_times(revolute[k], e[k], qdd[k], td)
        cross(w_prev, e[k], tmp)
        if revolute[k]:
            for r in range(3):
                td[r] += tmp[r] * qd[k]
        else:
            for r in range(3):
                td[r + 3] += 2.0 * tmp[r] * qd[k]


@njit(cache=True)
def inverse_dynamics_kernel(mv, qd, qdd, gravity, D, tau):
    """RIDIM: joint forces tau (n,) for rates qd, qdd at the configuration in D.

    Link quantities must be filled by `link_quantities` first. D.f_ext (n, 6)
    holds the wrench [n; f] the environment applies to each link, moment about
    the link's own frame origin, base frame.
    """
    n = mv.n
    s3 = D.s3
    tmp, a, Iw = s3[1], s3[2], s3[3]
    t, tdot, M, d, wstar, f_ext = D.t, D.tdot, D.M, D.d, D.w, D.f_ext
    oj, ol, e, A = D.oj, D.ol, D.e, D.A
    order, parent, revolute = mv.order, mv.parent, mv.revolute

    # ---- forward recursion: twists and twist rates (eqs. 11c, 17) ----
    twist_rates(mv, qd, qdd, gravity, D)

    # ---- inertia wrenches, eq. 5: w*_k = M_k tdot_k + W_k M_k E_k t_k ----
    for k in range(n):
        w = wstar[k]
        matvec(M[k], tdot[k], w)
        omega = t[k, :3]
        Ik = M[k, :3, :3]
        matvec(Ik, omega, Iw)
        cross_add(omega, Iw, w[:3])  # w x (I w)
        cross(omega, d[k], tmp)  # m w x (w x d)
        m = M[k, 3, 3]
        cross(omega, tmp, Iw)
        for r in range(3):
            w[3 + r] += m * Iw[r]
        # the environment's wrench on link k, moved from its frame origin to O_k
        f = f_ext[k]
        if f[0] != 0.0 or f[1] != 0.0 or f[2] != 0.0 or f[3] != 0.0 or f[4] != 0.0 \
                or f[5] != 0.0:
            for r in range(3):
                a[r] = ol[k, r] - oj[k, r]
            cross(a, f[3:], tmp)
            for r in range(3):
                w[r] -= f[r] + tmp[r]
                w[3 + r] -= f[3 + r]

    # ---- backward recursion: w_λ += A_{k,λ}^T w_k; tau_k = p_k^T w_k ----
    for i in range(n - 1, -1, -1):
        k = order[i]
        tau[k] = p_dot_w(revolute[k], e[k], wstar[k])
        p = parent[k]
        if p >= 0:
            AT_times_add(A[k], wstar[k], wstar[p])


@njit(cache=True)
def energy_kernel(mv, gravity, D):
    """Kinetic energy 1/2 sum t_k^T M_k t_k and potential energy -sum m_k g . c_k (J)."""
    Mt = D.s6[0]
    M, t, c, mass = D.M, D.t, D.c, mv.mass
    T = 0.0
    V = 0.0
    for k in range(mv.n):
        matvec(M[k], t[k], Mt)
        T += 0.5 * dot(t[k], Mt)
        V -= mass[k] * (gravity[0] * c[k, 0] + gravity[1] * c[k, 1] + gravity[2] * c[k, 2])
    return T, V


# ----------------------------------------------------------------------------------
# Composite bodies and the GIM (seed 000 eqs. 23b-24)
# ----------------------------------------------------------------------------------

@njit(cache=True)
def composite_inertias(mv, D):
    """eq. 23b: M~_k = M_k + sum over children c of A_{c,k}^T M~_c A_{c,k}."""
    n = mv.n
    M, M_tilde, A, scratch = D.M, D.M_tilde, D.A, D.tmp66[0]
    order, parent = mv.order, mv.parent
    for k in range(n):
        M_tilde[k] = M[k]
    for i in range(n - 1, -1, -1):
        k = order[i]
        p = parent[k]
        if p >= 0:
            ATMA_add(A[k], M_tilde[k], M_tilde[p], scratch)


@njit(cache=True)
def gim_from_composite(mv, D, I):
    """eq. 24: i_kj = p_k^T A_{jk}^T M~_j p_j for every ancestor k of j (and symmetric);
    zero where neither joint is an ancestor of the other."""
    n = mv.n
    s6 = D.s6
    f = s6[0]
    g = s6[1]
    M_tilde, e, A = D.M_tilde, D.e, D.A
    parent, revolute = mv.parent, mv.revolute
    for r in range(n):
        for s in range(n):
            I[r, s] = 0.0
    for j in range(n):
        # f = M~_j p_j, the wrench at O_j that accelerates the composite body of j at qdd_j = 1
        base = 0 if revolute[j] else 3
        for r in range(6):
            s = 0.0
            for u in range(3):
                s += M_tilde[j, r, base + u] * e[j, u]
            f[r] = s
        I[j, j] = p_dot_w(revolute[j], e[j], f)
        c = j
        k = parent[j]
        while k >= 0:
            g[:] = 0.0
            AT_times_add(A[c], f, g)  # shift the wrench from O_c to O_k
            f[:] = g
            I[k, j] = p_dot_w(revolute[k], e[k], f)
            I[j, k] = I[k, j]
            c = k
            k = parent[k]


# ----------------------------------------------------------------------------------
# RFDSIM: recursive forward dynamics by UDU^T (seed 001 eqs. 18-21; seed 000 App. B)
# ----------------------------------------------------------------------------------

@njit(cache=True)
def articulated_inertias(mv, D):
    """Articulated-body inertias, eqs. 19c-d. Returns the 0-based index of a joint
    whose pivot m_hat is not positive (singular GIM), or -1.

      M^_k = M_k + sum over children c of A_{c,k}^T Mbar_c A_{c,k}
      psi^_k = M^_k p_k;  m^_k = p_k^T psi^_k  (the D of UDU^T)
      Mbar_k = M^_k - psi^_k psi^_k^T / m^_k
    """
    n = mv.n
    M_hat, psi_hat, m_hat, M, e, A = D.M_hat, D.psi_hat, D.m_hat, D.M, D.e, D.A
    tmp66 = D.tmp66
    M_bar, scratch = tmp66[0], tmp66[1]
    order, parent, revolute = mv.order, mv.parent, mv.revolute
    for k in range(n):
        M_hat[k] = M[k]
    for i in range(n - 1, -1, -1):
        k = order[i]
        base = 0 if revolute[k] else 3
        for r in range(6):
            s = 0.0
            for u in range(3):
                s += M_hat[k, r, base + u] * e[k, u]
            psi_hat[k, r] = s
        m_hat[k] = p_dot_w(revolute[k], e[k], psi_hat[k])
        # singular if the pivot vanishes relative to the block it is taken from
        # (rotational for a revolute joint, translational for a prismatic one)
        scale = 0.0
        for r in range(base, base + 3):
            scale = max(scale, abs(M_hat[k, r, r]))
        if not m_hat[k] > 1e-13 * scale:
            return k
        p = parent[k]
        if p >= 0:
            for r in range(6):
                for s in range(6):
                    M_bar[r, s] = M_hat[k, r, s] - psi_hat[k, r] * psi_hat[k, s] / m_hat[k]
            ATMA_add(A[k], M_bar, M_hat[p], scratch)
    return -1


@njit(cache=True)
def udu_solve(mv, D, phi, qdd):
    """Solve U D U^T qdd = phi recursively (eqs. 19a-b, 20, 21a-b) with the factors in D."""
    n = mv.n
    eta, phi_hat, mu, psi_hat, m_hat, e, A = D.eta, D.phi_hat, D.mu, D.psi_hat, D.m_hat, D.e, D.A
    order, parent, revolute = mv.order, mv.parent, mv.revolute
    shifted = D.s6[2]
    # eqs. 19a-b, backward: phi^_k = phi_k - p_k^T eta_k,
    #   eta_λ += A_{k,λ}^T (eta_k + psi^_k phi^_k / m^_k),  eta = 0 at the leaves
    for k in range(n):
        for r in range(6):
            eta[k, r] = 0.0
    for i in range(n - 1, -1, -1):
        k = order[i]
        phi_hat[k] = phi[k] - p_dot_w(revolute[k], e[k], eta[k])
        p = parent[k]
        if p >= 0:
            for r in range(6):
                shifted[r] = eta[k, r] + psi_hat[k, r] * phi_hat[k] / m_hat[k]
            AT_times_add(A[k], shifted, eta[p])
    # eqs. 20-21, forward: qdd_k = phi^_k / m^_k - psi^_k^T mu_{k,λ} / m^_k,
    #   mu_{k,λ} = A_{k,λ} mu_λ,  mu_k = p_k qdd_k + mu_{k,λ},  mu = 0 at the base
    for i in range(n):
        k = order[i]
        p = parent[k]
        if p < 0:
            for r in range(6):
                mu[k, r] = 0.0
        else:
            A_times(A[k], mu[p], mu[k])
        qdd[k] = (phi_hat[k] - dot(psi_hat[k], mu[k])) / m_hat[k]
        add_p_times(revolute[k], e[k], qdd[k], mu[k])


@njit(cache=True)
def bias_forces(mv, qd, tau, gravity, D, phi):
    """phi = tau - ID(q, qd, 0): seed 001 Sec 2.4.2, input item 4 (D's link quantities set)."""
    inverse_dynamics_kernel(mv, qd, D.zero, gravity, D, phi)
    n = mv.n
    for k in range(n):
        phi[k] = tau[k] - phi[k]


@njit(cache=True)
def forward_dynamics_tree(mv, q, qd, tau, gravity, D, qdd):
    """RFDSIM: phi = tau - ID(q, qd, 0), then U D U^T qdd = phi (eqs. 18-21).

    Fills D at q (link quantities, twists, articulated inertias). Returns -1, or the
    0-based joint whose pivot vanished (qdd is then not written)."""
    link_quantities(mv, q, D)
    bias_forces(mv, qd, tau, gravity, D, D.phi)
    bad = articulated_inertias(mv, D)
    if bad >= 0:
        return bad
    udu_solve(mv, D, D.phi, qdd)
    return -1
