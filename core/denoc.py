"""DeNOC building blocks and the recursive inverse dynamics (RIDIM).

Notation follows Saha (1999, seed 000) and Saha (seed 001, Sec 2), with the
twist of link i taken at the point O_i on the axis of joint i (seed 001,
Fig. 1b). Everything is expressed in the base frame, so A_ij and p_i are
plain 6x6 matrices and 6-vectors:

    t_i   = [w_i; v_i]       twist of link i at O_i                    (eq. 7)
    w_i   = [n_i; f_i]       wrench at O_i                             (eq. 7)
    M_i   = [[I_i, m d x 1], [-m d x 1, m 1]]  extended mass at O_i  (eq. 6)
    A_i,i-1 = [[1, 0], [a_i,i-1 x 1, 1]]     twist propagation        (eq. 11d)
    p_i   = [e_i; 0] (revolute) or [0; e_i] (prismatic)              (eqs. 11d, 12b)

Index k in the code is 0-based: link k = Saha's link k+1. Joint k moves
about z of DH frame k; link k's own frame is DH frame k+1, so O_k is the
origin of DH frame k and a_{k,k+1} = o_{k+1} - o_k.

Kernels are compiled with numba and write into preallocated `Workspace`
arrays; the public functions in `core.dynamics` wrap them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linalg6 import A_times, AT_times_add, ATMA_add, cross, cross_add, dot, matvec, skew_into


# ----------------------------------------------------------------------------------
# Kinematics: DH frames
# ----------------------------------------------------------------------------------

@njit(cache=True)
def dh_frames(dh, revolute, q, R, o):
    """Orientations R (n+1, 3, 3) and origins o (n+1, 3) of DH frames 0..n.

    Frame i follows from frame i-1 by Rz(theta_i) Tz(b_i) Tx(a_i) Rx(alpha_i)
    (Saha 1999, App. A); the joint variable q_i replaces theta_i (revolute)
    or b_i (prismatic).
    """
    n = dh.shape[0]
    for r in range(3):
        o[0, r] = 0.0
        for c in range(3):
            R[0, r, c] = 1.0 if r == c else 0.0
    for i in range(n):
        a = dh[i, 0]
        b = dh[i, 1]
        alpha = dh[i, 2]
        theta = dh[i, 3]
        if revolute[i]:
            theta = q[i]
        else:
            b = q[i]
        ct, st = np.cos(theta), np.sin(theta)
        ca, sa = np.cos(alpha), np.sin(alpha)
        # Q_i = Rz(theta) Rx(alpha), and the origin offset [a ct, a st, b] in frame i-1
        Q00, Q01, Q02 = ct, -st * ca, st * sa
        Q10, Q11, Q12 = st, ct * ca, -ct * sa
        Q20, Q21, Q22 = 0.0, sa, ca
        px, py, pz = a * ct, a * st, b
        for r in range(3):
            R0, R1, R2 = R[i, r, 0], R[i, r, 1], R[i, r, 2]
            R[i + 1, r, 0] = R0 * Q00 + R1 * Q10 + R2 * Q20
            R[i + 1, r, 1] = R0 * Q01 + R1 * Q11 + R2 * Q21
            R[i + 1, r, 2] = R0 * Q02 + R1 * Q12 + R2 * Q22
            o[i + 1, r] = o[i, r] + R0 * px + R1 * py + R2 * pz


# ----------------------------------------------------------------------------------
# Per-link DeNOC quantities at one configuration
# ----------------------------------------------------------------------------------

# Per-call state lives in one flat float buffer (like Pinocchio's Data), cut into
# named views by `workspace_views`; `workspace_size(n)` floats are needed.
#   R (n+1,3,3), o (n+1,3) : DH frames 0..n in the base frame
#   e (n,3)     : unit vector of joint axis k                         (eq. 11a)
#   d (n,3)     : O_k -> mass centre C_k                              (eq. 2a)
#   c (n,3)     : mass centre C_k in the base frame
#   M (n,6,6)   : extended mass matrix of link k about O_k            (eq. 6)
#   A (n,3)     : a_{k,k-1} = O_{k-1} - O_k, the vector that defines the twist
#                 propagation A_{k,k-1} = [[1, 0], [a x 1, 1]]       (eq. 11d)
#   t, tdot (n,6) : twists and twist rates                           (eqs. 11c, 17)
#   w (n,6)     : wrenches (inertia + outboard)                       (Sec 2.4.1)
#   M_hat (n,6,6), psi_hat (n,6), m_hat (n,), eta (n,6), phi_hat (n,), mu (n,6),
#   phi (n,)    : UDU^T recursions                                    (eqs. 18-21)
#   zero (n,)   : zeros (qdd = 0 for the bias forces)
#   tmp66 (2,6,6), s3 (8,3) : scratch
#   tau (n,)    : applied joint forces (simulation right-hand side)

def workspace_size(n: int) -> int:
    return (n + 1) * 12 + n * (3 * 4 + 36 * 2 + 6 * 6 + 5) + 72 + 24


@njit(cache=True)
def workspace_views(ws, n):
    """Cut the flat workspace buffer into the named arrays listed above."""
    i = 0
    R = ws[i:i + (n + 1) * 9].reshape((n + 1, 3, 3)); i += (n + 1) * 9
    o = ws[i:i + (n + 1) * 3].reshape((n + 1, 3)); i += (n + 1) * 3
    e = ws[i:i + n * 3].reshape((n, 3)); i += n * 3
    d = ws[i:i + n * 3].reshape((n, 3)); i += n * 3
    c = ws[i:i + n * 3].reshape((n, 3)); i += n * 3
    M = ws[i:i + n * 36].reshape((n, 6, 6)); i += n * 36
    A = ws[i:i + n * 3].reshape((n, 3)); i += n * 3
    M_hat = ws[i:i + n * 36].reshape((n, 6, 6)); i += n * 36
    t = ws[i:i + n * 6].reshape((n, 6)); i += n * 6
    tdot = ws[i:i + n * 6].reshape((n, 6)); i += n * 6
    w = ws[i:i + n * 6].reshape((n, 6)); i += n * 6
    psi_hat = ws[i:i + n * 6].reshape((n, 6)); i += n * 6
    eta = ws[i:i + n * 6].reshape((n, 6)); i += n * 6
    mu = ws[i:i + n * 6].reshape((n, 6)); i += n * 6
    m_hat = ws[i:i + n]; i += n
    phi_hat = ws[i:i + n]; i += n
    phi = ws[i:i + n]; i += n
    zero = ws[i:i + n]; i += n
    tmp66 = ws[i:i + 72].reshape((2, 6, 6)); i += 72
    s3 = ws[i:i + 24].reshape((8, 3)); i += 24
    tau = ws[i:i + n]; i += n
    zero[:] = 0.0
    return (R, o, e, d, c, M, A, M_hat, t, tdot, w, psi_hat, eta, mu, m_hat, phi_hat, phi, zero,
            tmp66, s3, tau)


@njit(cache=True)
def link_quantities(dh, revolute, mass, com, inertia, q, R, o, e, d, c, M, A):
    """Fill the DeNOC quantities of every link at configuration q (base frame).

    inertia: (n, 9) row-major 3x3 inertia about the mass centre in the link frame.
    """
    n = dh.shape[0]
    dh_frames(dh, revolute, q, R, o)
    for k in range(n):
        Rk = R[k + 1]  # link k's own frame
        for r in range(3):
            e[k, r] = R[k, r, 2]  # joint k axis = z of frame k
            c[k, r] = o[k + 1, r] + Rk[r, 0] * com[k, 0] + Rk[r, 1] * com[k, 1] + Rk[r, 2] * com[k, 2]
            d[k, r] = c[k, r] - o[k, r]
        m = mass[k]
        # I_k about O_k: I^c rotated into the base frame, then the parallel-axis
        # theorem I = I^c - m (d x 1)(d x 1)  (seed 001 after eq. 4b)
        Mk = M[k]
        dd = d[k, 0] ** 2 + d[k, 1] ** 2 + d[k, 2] ** 2
        RI = Mk[3:, 3:]  # scratch: R I^c, overwritten below
        for r in range(3):
            for v in range(3):
                RI[r, v] = (Rk[r, 0] * inertia[k, v] + Rk[r, 1] * inertia[k, 3 + v]
                            + Rk[r, 2] * inertia[k, 6 + v])
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
        # eq. 11d: A_{k,k-1} = [[1, 0], [a_{k,k-1} x 1, 1]], stored as a_{k,k-1} = O_{k-1} - O_k
        for r in range(3):
            A[k, r] = o[k - 1, r] - o[k, r] if k > 0 else 0.0


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
def twists(revolute, qd, o, e, A, t):
    """Forward recursion for the twists, eq. 11c: t_k = A_{k,k-1} t_{k-1} + p_k qd_k."""
    n = revolute.shape[0]
    for k in range(n):
        if k == 0:
            for r in range(6):
                t[0, r] = 0.0
        else:
            A_times(A[k], t[k - 1], t[k])
        add_p_times(revolute[k], e[k], qd[k], t[k])


@njit(cache=True)
def inverse_dynamics_kernel(revolute, gravity, qd, qdd, f_ext, o, e, d, M, A, t, tdot, wstar, tau, s3):
    """RIDIM: joint forces tau (n,) for rates qd, qdd at the configuration in (o, e, d, M, A).

    Link quantities must be filled by `link_quantities` first. `f_ext` (6,)
    is the wrench [n; f] the environment applies to the last link, moment
    about the origin of the last DH frame, base frame.
    """
    n = revolute.shape[0]
    w_prev, tmp, a, Iw = s3[0], s3[1], s3[2], s3[3]

    # ---- forward recursion: twists and twist rates (eqs. 11c, 17) ----
    twists(revolute, qd, o, e, A, t)
    for k in range(n):
        td = tdot[k]
        if k == 0:
            # eq. 17 / 32: gravity enters as the base acceleration rho = [0; -g]
            for r in range(3):
                td[r] = 0.0
                td[r + 3] = -gravity[r]
            for r in range(3):
                w_prev[r] = 0.0
        else:
            # A_{k,k-1} tdot_{k-1} + Adot_{k,k-1} t_{k-1}, where Adot t = [0; w x (w x a)]
            # with a = a_{k-1,k}: the acceleration of the point of link k-1 at O_k.
            A_times(A[k], tdot[k - 1], td)
            for r in range(3):
                w_prev[r] = t[k - 1, r]
                a[r] = o[k, r] - o[k - 1, r]
            cross(w_prev, a, tmp)
            cross_add(w_prev, tmp, td[3:])
        # joint terms: p_k qdd_k + pdot_k qd_k, pdot_k = W_k p_k (e fixed in link k-1).
        # For a prismatic joint the material point of link k at O_k also feels the
        # sliding part of Adot, which doubles the Coriolis term: 2 w_{k-1} x e qd.
        add_p_times(revolute[k], e[k], qdd[k], td)
        cross(w_prev, e[k], tmp)
        if revolute[k]:
            for r in range(3):
                td[r] += tmp[r] * qd[k]
        else:
            for r in range(3):
                td[r + 3] += 2.0 * tmp[r] * qd[k]

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

    # external wrench on the last link, shifted from o_n to O_n
    last = n - 1
    for r in range(3):
        a[r] = o[n, r] - o[last, r]
    cross(a, f_ext[3:], tmp)
    for r in range(3):
        wstar[last, r] -= f_ext[r] + tmp[r]
        wstar[last, 3 + r] -= f_ext[3 + r]

    # ---- backward recursion: w_k = w*_k + A_{k+1,k}^T w_{k+1}; tau_k = p_k^T w_k ----
    for k in range(n - 1, -1, -1):
        if k < n - 1:
            AT_times_add(A[k + 1], wstar[k + 1], wstar[k])
        tau[k] = p_dot_w(revolute[k], e[k], wstar[k])


@njit(cache=True)
def energy_kernel(mass, gravity, c, M, t):
    """Kinetic energy 1/2 sum t_k^T M_k t_k and potential energy -sum m_k g . c_k (J)."""
    n = mass.shape[0]
    Mt = np.empty(6)
    T = 0.0
    V = 0.0
    for k in range(n):
        matvec(M[k], t[k], Mt)
        T += 0.5 * dot(t[k], Mt)
        V -= mass[k] * (gravity[0] * c[k, 0] + gravity[1] * c[k, 1] + gravity[2] * c[k, 2])
    return T, V


# ----------------------------------------------------------------------------------
# Composite bodies and the GIM (seed 000 eqs. 23b-24)
# ----------------------------------------------------------------------------------

@njit(cache=True)
def composite_inertias(M, A, M_tilde, tmp66):
    """eq. 23b: M~_k = M_k + A_{k+1,k}^T M~_{k+1} A_{k+1,k}, M~_n = M_n."""
    n = M.shape[0]
    for k in range(n - 1, -1, -1):
        M_tilde[k] = M[k]
        if k < n - 1:
            ATMA_add(A[k + 1], M_tilde[k + 1], M_tilde[k], tmp66)


@njit(cache=True)
def gim_from_composite(revolute, e, A, M_tilde, I):
    """eq. 24: i_kj = p_k^T A_{jk}^T M~_j p_j for k <= j (and symmetric)."""
    n = revolute.shape[0]
    f = np.empty(6)
    g = np.empty(6)
    for j in range(n):
        # f = M~_j p_j, the wrench at O_j that accelerates the composite body j.. at qdd_j = 1
        for r in range(6):
            f[r] = 0.0
        base = 0 if revolute[j] else 3
        for r in range(6):
            s = 0.0
            for u in range(3):
                s += M_tilde[j, r, base + u] * e[j, u]
            f[r] = s
        I[j, j] = p_dot_w(revolute[j], e[j], f)
        for k in range(j - 1, -1, -1):
            g[:] = 0.0
            AT_times_add(A[k + 1], f, g)  # shift the wrench from O_{k+1} to O_k
            f[:] = g
            I[k, j] = p_dot_w(revolute[k], e[k], f)
            I[j, k] = I[k, j]


# ----------------------------------------------------------------------------------
# RFDSIM: recursive forward dynamics by UDU^T (seed 001 eqs. 18-21; seed 000 App. B)
# ----------------------------------------------------------------------------------

@njit(cache=True)
def articulated_inertias(revolute, e, M, A, M_hat, psi_hat, m_hat, tmp66):
    """Articulated-body inertias, eqs. 19c-d. Returns the 0-based index of the first
    joint (from the tip) whose pivot m_hat is not positive (singular GIM), or -1.

      M^_n = M_n;  M^_k = M_k + A_{k+1,k}^T Mbar_{k+1} A_{k+1,k}
      psi^_k = M^_k p_k;  m^_k = p_k^T psi^_k  (the D of UDU^T)
      Mbar_k = M^_k - psi^_k psi^_k^T / m^_k
    tmp66 (2, 6, 6) is scratch: tmp66[0] carries Mbar_{k+1} down the chain.
    """
    n = revolute.shape[0]
    M_bar = tmp66[0]
    for k in range(n - 1, -1, -1):
        M_hat[k] = M[k]
        if k < n - 1:
            ATMA_add(A[k + 1], M_bar, M_hat[k], tmp66[1])
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
        for r in range(6):
            for s in range(6):
                M_bar[r, s] = M_hat[k, r, s] - psi_hat[k, r] * psi_hat[k, s] / m_hat[k]
    return -1


@njit(cache=True)
def udu_solve(revolute, e, A, psi_hat, m_hat, phi, eta, phi_hat, mu, qdd):
    """Solve U D U^T qdd = phi recursively (eqs. 19a-b, 20, 21a-b)."""
    n = revolute.shape[0]
    shifted = mu[0]  # scratch until the forward pass overwrites mu
    # eqs. 19a-b, backward: phi^_k = phi_k - p_k^T eta_k,
    #   eta_k = A_{k+1,k}^T (eta_{k+1} + psi_{k+1} phi^_{k+1}),  eta_n = 0
    for k in range(n - 1, -1, -1):
        if k == n - 1:
            for r in range(6):
                eta[k, r] = 0.0
        else:
            for r in range(6):
                shifted[r] = eta[k + 1, r] + psi_hat[k + 1, r] * phi_hat[k + 1] / m_hat[k + 1]
            eta[k, :] = 0.0
            AT_times_add(A[k + 1], shifted, eta[k])
        phi_hat[k] = phi[k] - p_dot_w(revolute[k], e[k], eta[k])
    # eqs. 20-21, forward: qdd_k = phi^_k / m^_k - psi^_k^T mu_{k,k-1} / m^_k,
    #   mu_{k,k-1} = A_{k,k-1} mu_{k-1},  mu_k = p_k qdd_k + mu_{k,k-1},  mu_0 = 0
    for k in range(n):
        if k == 0:
            for r in range(6):
                mu[0, r] = 0.0
        else:
            A_times(A[k], mu[k - 1], mu[k])
        qdd[k] = (phi_hat[k] - dot(psi_hat[k], mu[k])) / m_hat[k]
        add_p_times(revolute[k], e[k], qdd[k], mu[k])
