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
DH row ends in (`D.Rl[k]`). Its values start at q[iq_k] and its rates at qd[iv_k]
(the joint table, `core.kernels.layout`); what depends on its kind (p_k and the
rest) is asked of `core.kernels.joints`. Every kernel is compiled with numba and takes
the model views `mv` (`core.kernels.layout.ModelViews`) and the per-call state `D`
(`core.kernels.data.Data`), whose fields carry Saha's symbols. Inside the recursions
rows are addressed by index (`t[k, r]`, `A_times(A, k, t, p, t, k)`), not by views
(`t[k]`): numba counts the references of every view, which tripled the cost of a
recursion.
"""
from __future__ import annotations

from .buffers import inline_twin, inlined_kernel, inner_kernel
from .joints import (JOINT_FREE, JOINT_NV, JOINT_PRISMATIC, M_P_col, M_p, P_col_dot,
                     add_joint_rate_terms_of, add_P_times, dh_variables,
                     factor_pivot_block, joint_forces, joint_motion, ldl_solve,
                     joint_rate_terms_add, motion_subspace, p_dot, p_times_add, pivot_scale)
from .data import data_views
from .drives import add_drive_forces, drive_kinetic_energy
from .linalg6 import A_times, A_times_of, AT_add, AT_times_add, ATMA_add
from .trig import cos_sin, cos_sin_rows


# ----------------------------------------------------------------------------------
# Kinematics: DH frames on a tree
# ----------------------------------------------------------------------------------

@inlined_kernel
def dh_frames(mv, q, Rj, oj, Rl, ol, cs=None):
    """Joint frames (Rj, oj) and link frames (Rl, ol), each (n, 3, 3) and (n, 3).

    Joint frame k = (parent link's own frame, or the base) x placement_k; link
    frame k = joint frame k x Rz(theta_k) Tz(b_k) Tx(a_k) Rx(alpha_k) (Saha 1999,
    App. A); the joint variable q_k replaces theta_k (revolute) or b_k (prismatic).
    cos and sin of the rows' theta come from `core.kernels.trig`: all of them first, in
    one vectorised loop, when a (3, n) buffer cs is given (the data's cs: link_quantities
    1.25 -> 0.98 us on the 45-DOF human), else one joint at a time (the same numbers).
    """
    n = mv.n
    order, parent, placed, place_R, place_p = mv.order, mv.parent, mv.placed, mv.place_R, mv.place_p
    dh, kind, iq = mv.dh, mv.kind, mv.iq
    if cs is not None:
        for k in range(n):
            cs[2, k] = dh_variables(kind[k], dh[k, 0], dh[k, 1], dh[k, 2], dh[k, 3], q,
                                    iq[k])[0]
        cos_sin_rows(cs, n)
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
        if kind[k] <= JOINT_PRISMATIC:
            a = dh[k, 0]
            theta, b = dh_variables(kind[k], a, dh[k, 1], dh[k, 2], dh[k, 3], q, iq[k])
            if cs is None:
                ct, st = cos_sin(theta)
            else:
                ct, st = cs[0, k], cs[1, k]
            ca, sa = dh[k, 4], dh[k, 5]  # cos, sin of the constant alpha
            # Q = Rz(theta) Rx(alpha), the origin offset [a ct, a st, b] in the joint frame
            Q00, Q01, Q02 = ct, -st * ca, st * sa
            Q10, Q11, Q12 = st, ct * ca, -ct * sa
            Q20, Q21, Q22 = 0.0, sa, ca
            px, py, pz = a * ct, a * st, b
        else:  # a joint of several degrees of freedom moves the frame it sits in
            (Q00, Q01, Q02, Q10, Q11, Q12, Q20, Q21, Q22,
             px, py, pz) = joint_motion(kind[k], q, iq[k])
        for r in range(3):
            R0, R1, R2 = Rj[k, r, 0], Rj[k, r, 1], Rj[k, r, 2]
            Rl[k, r, 0] = R0 * Q00 + R1 * Q10 + R2 * Q20
            Rl[k, r, 1] = R0 * Q01 + R1 * Q11 + R2 * Q21
            Rl[k, r, 2] = R0 * Q02 + R1 * Q12 + R2 * Q22
            ol[k, r] = oj[k, r] + R0 * px + R1 * py + R2 * pz
        if kind[k] == JOINT_FREE:  # its twist is taken at the body origin
            for r in range(3):
                oj[k, r] = ol[k, r]


# ----------------------------------------------------------------------------------
# Per-link DeNOC quantities at one configuration
# ----------------------------------------------------------------------------------

@inner_kernel
def link_quantities(mv, D, q):
    """Frames (D.Rj, D.oj, D.Rl, D.ol), e, d, c, M and A of every link at configuration
    q (base frame)."""
    n = mv.n
    Rj, oj, Rl, ol, e, d, c, M, A = D.Rj, D.oj, D.Rl, D.ol, D.e, D.d, D.c, D.M, D.A
    dh_frames(mv, q, Rj, oj, Rl, ol, D.cs)
    com, inertia, mass, parent = mv.com, mv.inertia, mv.mass, mv.parent
    for k in range(n):
        # the link frame's rotation, held in scalars (writes into M cannot alias them)
        R00, R01, R02 = Rl[k, 0, 0], Rl[k, 0, 1], Rl[k, 0, 2]
        R10, R11, R12 = Rl[k, 1, 0], Rl[k, 1, 1], Rl[k, 1, 2]
        R20, R21, R22 = Rl[k, 2, 0], Rl[k, 2, 1], Rl[k, 2, 2]
        cx, cy, cz = com[k, 0], com[k, 1], com[k, 2]
        for r in range(3):
            e[k, r] = Rj[k, r, 2]  # joint k axis = z of its joint frame
        if mv.kind[k] > JOINT_PRISMATIC:  # P_k's columns, base frame
            motion_subspace(mv.kind[k], Rj, Rl, k, mv.iv[k], D.S)
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
def twist_of(mv, D, qd, k):
    """Link k's twist D.t[k] from its parent's, eq. 11c: t_k = A_{k,λ} t_λ + p_k qd_k."""
    p = mv.parent[k]
    t = D.t
    if p < 0:
        for r in range(6):
            t[k, r] = 0.0
    else:
        A_times(D.A, k, t, p, t, k)
    add_P_times(mv.kind[k], D.e, D.S, k, mv.iv[k], qd, t, k)


@inlined_kernel
def twists(mv, D, qd):
    """Forward recursion for the twists D.t, eq. 11c: t_k = A_{k,λ} t_λ + p_k qd_k."""
    for i in range(mv.n):
        twist_of(mv, D, qd, mv.order[i])


@inlined_kernel
def twist_rates(mv, D, qd, qdd, gravity):
    """Twists D.t and twist rates D.tdot, eqs. 11c and 17 (gravity enters as
    tdot_base = [0; -g]), in one pass (link k's twist, then its rate).

    tdot_k = [w'_k; acceleration of the material point of link k at O_k]; a joint of one
    degree of freedom's is formed in registers and stored once.
    """
    order, parent, kind, iv = mv.order, mv.parent, mv.kind, mv.iv
    oj, e, S, A, t, tdot = D.oj, D.e, D.S, D.A, D.t, D.tdot
    for i in range(mv.n):
        k = order[i]
        twist_of(mv, D, qd, k)
        p = parent[k]
        if p < 0:
            # eq. 17 / 32: gravity enters as the base acceleration rho = [0; -g]
            d0 = d1 = d2 = 0.0
            d3, d4, d5 = -gravity[0], -gravity[1], -gravity[2]
            wx = wy = wz = 0.0
        else:
            # A_{k,λ} tdot_λ + Adot_{k,λ} t_λ, where Adot t = [0; w x (w x a)] with
            # a = O_k - O_λ: the acceleration of the point of link λ at O_k
            d0, d1, d2, d3, d4, d5 = A_times_of(A, k, tdot, p)
            wx, wy, wz = t[p, 0], t[p, 1], t[p, 2]
            ax, ay, az = oj[k, 0] - oj[p, 0], oj[k, 1] - oj[p, 1], oj[k, 2] - oj[p, 2]
            cx, cy, cz = wy * az - wz * ay, wz * ax - wx * az, wx * ay - wy * ax
            d3 += wy * cz - wz * cy
            d4 += wz * cx - wx * cz
            d5 += wx * cy - wy * cx
        # joint terms: P_k qdd_k + Pdot_k qd_k (core.kernels.joints)
        if kind[k] <= JOINT_PRISMATIC:
            b = iv[k]
            d0, d1, d2, d3, d4, d5 = p_times_add(kind[k], e, k, qdd[b], d0, d1, d2, d3, d4, d5)
            d0, d1, d2, d3, d4, d5 = joint_rate_terms_add(kind[k], e, k, wx, wy, wz, qd[b],
                                                          d0, d1, d2, d3, d4, d5)
            tdot[k, 0], tdot[k, 1], tdot[k, 2], tdot[k, 3], tdot[k, 4], tdot[k, 5] = \
                d0, d1, d2, d3, d4, d5
            continue
        tdot[k, 0], tdot[k, 1], tdot[k, 2], tdot[k, 3], tdot[k, 4], tdot[k, 5] = \
            d0, d1, d2, d3, d4, d5
        add_P_times(kind[k], e, S, k, iv[k], qdd, tdot, k)
        add_joint_rate_terms_of(kind[k], e, S, k, iv[k], wx, wy, wz, qd, t, tdot, k)


@inner_kernel
def inverse_dynamics_kernel(mv, D, qd, qdd, gravity, f_ext, tau):
    """RIDIM: joint forces tau (nv,) for rates qd, qdd at the configuration of the link
    quantities (`link_quantities` first). f_ext (n, 6) holds the wrench [n; f] the
    environment applies to each link, moment about the link's own frame origin, base
    frame; D.w receives the wrenches w_k at O_k.
    """
    n = mv.n
    order, parent, kind, iv = mv.order, mv.parent, mv.kind, mv.iv
    oj, ol, e, d, M, A, t, tdot, wstar = D.oj, D.ol, D.e, D.d, D.M, D.A, D.t, D.tdot, D.w
    S = D.S

    # ---- forward recursion: twists and twist rates (eqs. 11c, 17) ----
    twist_rates(mv, D, qd, qdd, gravity)

    # ---- inertia wrenches, eq. 5: w*_k = M_k tdot_k + W_k M_k E_k t_k, with M_k's blocks
    # (eq. 6: I_k about O_k, m d_k x 1, m 1) and tdot_k = [alpha; a]:
    #   n*_k = I_k alpha + m d_k x a + w x (I_k w)
    #   f*_k = m (a - d_k x alpha + w x (w x d_k))   (m times the mass centre's acceleration)
    for k in range(n):
        I00, I01, I02 = M[k, 0, 0], M[k, 0, 1], M[k, 0, 2]
        I11, I12, I22 = M[k, 1, 1], M[k, 1, 2], M[k, 2, 2]
        m = M[k, 3, 3]
        dx, dy, dz = d[k, 0], d[k, 1], d[k, 2]
        wx, wy, wz = t[k, 0], t[k, 1], t[k, 2]
        alx, aly, alz = tdot[k, 0], tdot[k, 1], tdot[k, 2]
        ax, ay, az = tdot[k, 3], tdot[k, 4], tdot[k, 5]
        Ix = I00 * wx + I01 * wy + I02 * wz  # I w
        Iy = I01 * wx + I11 * wy + I12 * wz
        Iz = I02 * wx + I12 * wy + I22 * wz
        cx, cy, cz = wy * dz - wz * dy, wz * dx - wx * dz, wx * dy - wy * dx  # w x d
        wstar[k, 0] = I00 * alx + I01 * aly + I02 * alz + m * (dy * az - dz * ay) \
            + wy * Iz - wz * Iy
        wstar[k, 1] = I01 * alx + I11 * aly + I12 * alz + m * (dz * ax - dx * az) \
            + wz * Ix - wx * Iz
        wstar[k, 2] = I02 * alx + I12 * aly + I22 * alz + m * (dx * ay - dy * ax) \
            + wx * Iy - wy * Ix
        wstar[k, 3] = m * (ax - (dy * alz - dz * aly) + wy * cz - wz * cy)
        wstar[k, 4] = m * (ay - (dz * alx - dx * alz) + wz * cx - wx * cz)
        wstar[k, 5] = m * (az - (dx * aly - dy * alx) + wx * cy - wy * cx)
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

    # ---- backward recursion: w_λ += A_{k,λ}^T w_k; tau_k = P_k^T w_k ----
    for i in range(n - 1, -1, -1):
        k = order[i]
        joint_forces(kind[k], e, S, k, iv[k], wstar, k, tau)
        p = parent[k]
        if p >= 0:
            AT_times_add(A, k, wstar, k, wstar, p)

    # ---- the drives: tau_k += r^2 I_r qdd_k + friction(qd_k) (core.kernels.drives) ----
    if mv.nd:
        add_drive_forces(mv, qd, qdd, tau)


@inner_kernel
def energy_kernel(mv, D, gravity, qd):
    """Kinetic energy 1/2 sum t_k^T M_k t_k (plus the rotors' 1/2 sum r^2 I_r qd_k^2) and
    potential energy -sum m_k g . c_k (J), at the link quantities and twists in D and the
    rates qd (nv,) (`energy_momentum_kernel` without the momenta)."""
    return energy_momentum_kernel(mv, D, gravity, qd, None)


@inner_kernel
def momentum_kernel(mv, D, out):
    """The whole system's mass centre, linear momentum and angular momentum about it
    (out (9,); `energy_momentum_kernel`)."""
    energy_momentum_kernel(mv, D, mv.gravity, D.zero, out)


@inner_kernel
def energy_momentum_kernel(mv, D, gravity, qd, out):
    """Energies and momenta in one pass over the links, at the link quantities and twists
    in D and the rates qd (nv,); returns (T, V), J:

    T = 1/2 sum t_k^T M_k t_k (plus the rotors' 1/2 sum r^2 I_r qd_k^2), V = -sum m_k g . c_k;

    and, unless out is None, out (9,): the whole system's mass centre c (out[0:3], m),
    linear momentum (out[3:6], kg m/s) and angular momentum about c (out[6:9],
    kg m^2/s), base frame: M_k t_k = [h_k; l_k] is link k's momentum about O_k (eq. 6),
    shared with T, and about c it is h_k + (O_k - c) x l_k."""
    mass, c, M, t, o = mv.mass, D.c, D.M, D.t, D.oj
    V = 0.0
    total = 0.0
    cx = cy = cz = 0.0
    for k in range(mv.n):
        m = mass[k]
        V -= m * (gravity[0] * c[k, 0] + gravity[1] * c[k, 1] + gravity[2] * c[k, 2])
        total += m
        cx += m * c[k, 0]
        cy += m * c[k, 1]
        cz += m * c[k, 2]
    cx /= total
    cy /= total
    cz /= total
    T = 0.0
    lx = ly = lz = hx = hy = hz = 0.0
    for k in range(mv.n):
        h0 = h1 = h2 = h3 = h4 = h5 = 0.0
        for col in range(6):
            tc = t[k, col]
            h0 += M[k, 0, col] * tc
            h1 += M[k, 1, col] * tc
            h2 += M[k, 2, col] * tc
            h3 += M[k, 3, col] * tc
            h4 += M[k, 4, col] * tc
            h5 += M[k, 5, col] * tc
        T += 0.5 * t[k, 0] * h0
        T += 0.5 * t[k, 1] * h1
        T += 0.5 * t[k, 2] * h2
        T += 0.5 * t[k, 3] * h3
        T += 0.5 * t[k, 4] * h4
        T += 0.5 * t[k, 5] * h5
        if out is not None:
            rx, ry, rz = o[k, 0] - cx, o[k, 1] - cy, o[k, 2] - cz
            lx += h3
            ly += h4
            lz += h5
            hx += h0 + ry * h5 - rz * h4
            hy += h1 + rz * h3 - rx * h5
            hz += h2 + rx * h4 - ry * h3
    if out is not None:
        out[0], out[1], out[2] = cx, cy, cz
        out[3], out[4], out[5] = lx, ly, lz
        out[6], out[7], out[8] = hx, hy, hz
    if mv.nd:
        T += drive_kinetic_energy(mv, qd)
    return T, V


# ----------------------------------------------------------------------------------
# Composite bodies and the GIM (seed 000 eqs. 23b-24)
# ----------------------------------------------------------------------------------

@inner_kernel
def composite_inertias(mv, D):
    """eq. 23b: M~_k = M_k + sum over children c of A_{c,k}^T M~_c A_{c,k} (D.M_tilde)."""
    n = mv.n
    order, parent = mv.order, mv.parent
    M, A, M_tilde = D.M, D.A, D.M_tilde
    for k in range(n):
        for r in range(6):
            for c in range(6):
                M_tilde[k, r, c] = M[k, r, c]
    for i in range(n - 1, -1, -1):
        k = order[i]
        p = parent[k]
        if p >= 0:
            ATMA_add(A, k, M_tilde, k, M_tilde, p)


@inner_kernel
def gim_from_composite(mv, D, I):
    """eq. 24: i_kj = P_k^T A_{jk}^T M~_j P_j for every ancestor k of j (and symmetric),
    a block of nv_k x nv_j entries; zero where neither joint is an ancestor of the other.
    I (nv, nv)."""
    n = mv.n
    parent, kind, iv = mv.parent, mv.kind, mv.iv
    e, S, A, M_tilde, s6 = D.e, D.S, D.A, D.M_tilde, D.s6
    for r in range(mv.nv):
        for s in range(mv.nv):
            I[r, s] = 0.0
    for j in range(n):
        for cj in range(JOINT_NV[kind[j]]):
            col = iv[j] + cj
            # f = M~_j P_j[:, cj] (s6[0]), the wrench at O_j that accelerates the
            # composite body of j at unit rate cj; shifted down the ancestors with A^T
            # (s6[1] as scratch)
            M_P_col(kind[j], e, S, j, iv[j], cj, M_tilde, j, s6, 0)
            for ck in range(JOINT_NV[kind[j]]):
                I[iv[j] + ck, col] = P_col_dot(kind[j], e, S, j, iv[j], ck, s6, 0)
            c = j
            k = parent[j]
            while k >= 0:
                for r in range(6):
                    s6[1, r] = 0.0
                AT_times_add(A, c, s6, 0, s6, 1)  # shift the wrench from O_c to O_k
                for r in range(6):
                    s6[0, r] = s6[1, r]
                for ck in range(JOINT_NV[kind[k]]):
                    row = iv[k] + ck
                    I[row, col] = P_col_dot(kind[k], e, S, k, iv[k], ck, s6, 0)
                    I[col, row] = I[row, col]
                c = k
                k = parent[k]
    for k in range(mv.nd):  # the rotors' reflected inertia r^2 I_r on the diagonal
        I[iv[k], iv[k]] += mv.drive[k, 2]


# ----------------------------------------------------------------------------------
# RFDSIM: recursive forward dynamics by UDU^T (seed 001 eqs. 18-21; seed 000 App. B)
# ----------------------------------------------------------------------------------

@inner_kernel
def articulated_inertias(mv, D):
    """Articulated-body inertias, eqs. 19c-d. Returns the 0-based index of a joint
    whose pivot is not positive (singular GIM), or -1.

      M^_k = M_k + sum over children c of A_{c,k}^T Mbar_c A_{c,k}
      psi^_k = M^_k p_k;  m^_k = p_k^T psi^_k  (the D of UDU^T)
      Mbar_k = M^_k - psi^_k psi^_k^T / m^_k            (its lower triangle in tmp66[0])

    A joint of several degrees of freedom has a block pivot: Psi^_k = M^_k P_k (6 x nv_k,
    its columns in psi_hat[iv_k:]), D_k = P_k^T Psi^_k factored as L_k diag(m^) L_k^T
    (L_hat[k], m_hat[iv_k:]), Mbar_k = M^_k - Psi^_k D_k^-1 Psi^_k^T.
    """
    n = mv.n
    order, parent, kind, iv = mv.order, mv.parent, mv.kind, mv.iv
    e, S, M, A, M_hat, psi_hat, m_hat, tmp66 = D.e, D.S, D.M, D.A, D.M_hat, D.psi_hat, \
        D.m_hat, D.tmp66
    L_hat = D.L_hat
    for k in range(n):
        for r in range(6):
            for c in range(6):
                M_hat[k, r, c] = M[k, r, c]
    for i in range(n - 1, -1, -1):
        k = order[i]
        b = iv[k]
        if kind[k] <= JOINT_PRISMATIC:
            M_p(kind[k], e, k, M_hat, k, psi_hat, b)
            m_hat[b] = p_dot(kind[k], e, k, psi_hat, b)
            if mv.nd:  # the rotor's reflected inertia r^2 I_r joins the pivot
                m_hat[b] += mv.drive[k, 2]
            # singular if the pivot vanishes relative to the block it is taken from
            if not m_hat[b] > 1e-13 * pivot_scale(kind[k], M_hat, k):
                return k
            p = parent[k]
            if p >= 0:  # Mbar_k's lower triangle (what ATMA_add reads)
                inv = 1.0 / m_hat[b]
                for r in range(6):
                    s = psi_hat[b, r] * inv
                    for c in range(r + 1):
                        tmp66[0, r, c] = M_hat[k, r, c] - s * psi_hat[b, c]
                ATMA_add(A, k, tmp66, 0, M_hat, p)
            continue
        nk = JOINT_NV[kind[k]]
        for c in range(nk):  # Psi^_k = M^_k P_k, D_k = P_k^T Psi^_k (lower triangle)
            M_P_col(kind[k], e, S, k, b, c, M_hat, k, psi_hat, b + c)
        for a in range(nk):
            for c in range(a + 1):
                s = 0.0
                for r in range(6):
                    s += S[b + a, r] * psi_hat[b + c, r]
                L_hat[k, a, c] = s
        if factor_pivot_block(L_hat, k, m_hat, b, nk) >= 0:
            return k
        p = parent[k]
        if p >= 0:
            # Mbar_k = M^_k - Y diag(1/m^) Y^T with Y = Psi^_k L^-T (rows in tmp66[2])
            Y = tmp66[2]
            for r in range(6):
                for c in range(nk):
                    s = psi_hat[b + c, r]
                    for l in range(c):
                        s -= L_hat[k, c, l] * Y[r, l]
                    Y[r, c] = s
            Yd = tmp66[1]  # Y diag(1/m^)
            for l in range(nk):
                s = 1.0 / m_hat[b + l]
                for r in range(6):
                    Yd[r, l] = Y[r, l] * s
            for r in range(6):
                for c in range(r + 1):
                    s = M_hat[k, r, c]
                    for l in range(nk):
                        s -= Yd[r, l] * Y[c, l]
                    tmp66[0, r, c] = s
            ATMA_add(A, k, tmp66, 0, M_hat, p)
    return -1


@inner_kernel
def udu_solve(mv, D, phi, qdd):
    """Solve U D U^T qdd = phi recursively (eqs. 19a-b, 20, 21a-b) with the factors
    D.psi_hat, D.m_hat (and the block pivots' L_hat) of `articulated_inertias`; D.eta,
    D.phi_hat, D.mu are its work arrays. phi, qdd (nv,)."""
    n = mv.n
    order, parent, kind, iv = mv.order, mv.parent, mv.kind, mv.iv
    e, S, A, psi_hat, m_hat, eta, phi_hat, mu = D.e, D.S, D.A, D.psi_hat, D.m_hat, D.eta, \
        D.phi_hat, D.mu
    L_hat, x = D.L_hat, D.s6
    # eqs. 19a-b, backward: phi^_k = phi_k - p_k^T eta_k,
    #   eta_λ += A_{k,λ}^T (eta_k + psi^_k phi^_k / m^_k),  eta = 0 at the leaves
    #   (a block pivot: phi^_k = phi_k - P_k^T eta_k, eta_k += Psi^_k D_k^-1 phi^_k)
    for k in range(n):
        for r in range(6):
            eta[k, r] = 0.0
    for i in range(n - 1, -1, -1):
        k = order[i]
        b = iv[k]
        p = parent[k]
        if kind[k] <= JOINT_PRISMATIC:
            phi_hat[b] = phi[b] - p_dot(kind[k], e, k, eta, k)
            if p >= 0:  # in registers: eta_k + psi^_k phi^_k / m^_k, shifted to the parent
                s = phi_hat[b] / m_hat[b]
                n0 = eta[k, 0] + psi_hat[b, 0] * s
                n1 = eta[k, 1] + psi_hat[b, 1] * s
                n2 = eta[k, 2] + psi_hat[b, 2] * s
                f0 = eta[k, 3] + psi_hat[b, 3] * s
                f1 = eta[k, 4] + psi_hat[b, 4] * s
                f2 = eta[k, 5] + psi_hat[b, 5] * s
                AT_add(A, k, n0, n1, n2, f0, f1, f2, eta, p)
                # eta_k keeps the sum it passed on (as a block pivot's does; the Lab reads it)
                eta[k, 0], eta[k, 1], eta[k, 2], eta[k, 3], eta[k, 4], eta[k, 5] = \
                    n0, n1, n2, f0, f1, f2
            continue
        nk = JOINT_NV[kind[k]]
        for c in range(nk):
            phi_hat[b + c] = phi[b + c] - P_col_dot(kind[k], e, S, k, b, c, eta, k)
        if p >= 0:
            for c in range(nk):
                x[2, c] = phi_hat[b + c]
            ldl_solve(L_hat, k, m_hat, b, nk, x, 2)
            for c in range(nk):
                for r in range(6):
                    eta[k, r] += psi_hat[b + c, r] * x[2, c]
            AT_times_add(A, k, eta, k, eta, p)
    # eqs. 20-21, forward: qdd_k = phi^_k / m^_k - psi^_k^T mu_{k,λ} / m^_k,
    #   mu_{k,λ} = A_{k,λ} mu_λ,  mu_k = p_k qdd_k + mu_{k,λ},  mu = 0 at the base
    #   (a block pivot: qdd_k = D_k^-1 (phi^_k - Psi^_k^T mu_{k,λ}))
    for i in range(n):
        k = order[i]
        b = iv[k]
        p = parent[k]
        if kind[k] <= JOINT_PRISMATIC:  # in registers, mu_k stored once
            if p < 0:
                m0 = m1 = m2 = m3 = m4 = m5 = 0.0
            else:
                m0, m1, m2, m3, m4, m5 = A_times_of(A, k, mu, p)
            s = 0.0
            s += psi_hat[b, 0] * m0
            s += psi_hat[b, 1] * m1
            s += psi_hat[b, 2] * m2
            s += psi_hat[b, 3] * m3
            s += psi_hat[b, 4] * m4
            s += psi_hat[b, 5] * m5
            x_b = (phi_hat[b] - s) / m_hat[b]
            qdd[b] = x_b
            m0, m1, m2, m3, m4, m5 = p_times_add(kind[k], e, k, x_b, m0, m1, m2, m3, m4, m5)
            mu[k, 0], mu[k, 1], mu[k, 2], mu[k, 3], mu[k, 4], mu[k, 5] = m0, m1, m2, m3, m4, m5
            continue
        if p < 0:
            for r in range(6):
                mu[k, r] = 0.0
        else:
            A_times(A, k, mu, p, mu, k)
        nk = JOINT_NV[kind[k]]
        for c in range(nk):
            s = 0.0
            for r in range(6):
                s += psi_hat[b + c, r] * mu[k, r]
            x[2, c] = phi_hat[b + c] - s
        ldl_solve(L_hat, k, m_hat, b, nk, x, 2)
        for c in range(nk):
            qdd[b + c] = x[2, c]
        add_P_times(kind[k], e, S, k, b, qdd, mu, k)


# the recursions inlined into the hot paths (`core.kernels.buffers.inline_twin`): the forward
# dynamics below, the single-state and batch inverse dynamics, the closed-chain kernel
link_quantities_inline = inline_twin(link_quantities)
inverse_dynamics_inline = inline_twin(inverse_dynamics_kernel)
articulated_inertias_inline = inline_twin(articulated_inertias)
udu_solve_inline = inline_twin(udu_solve)


@inner_kernel
def forward_dynamics_tree(mv, ws, q, qd, tau, f_ext, gravity, qdd):
    """RFDSIM: phi = tau - ID(q, qd, 0) (seed 001 Sec 2.4.2, input item 4), then
    U D U^T qdd = phi (eqs. 18-21), on the data of the workspace buffer ws, which is left
    filled at q (link quantities, twists, the bias pass's twist rates, articulated
    inertias). Returns -1, or the 0-based joint whose pivot vanished (qdd is then not
    written). It takes the buffer, not the data's fields: a call passes its arguments
    word by word, and the fields are hundreds of words; the hot paths call it."""
    D = data_views(mv, ws)
    link_quantities_inline(mv, D, q)
    phi = D.phi
    inverse_dynamics_inline(mv, D, qd, D.zero, gravity, f_ext, phi)
    for k in range(mv.nv):
        phi[k] = tau[k] - phi[k]
    bad = articulated_inertias_inline(mv, D)
    if bad >= 0:
        return bad
    udu_solve_inline(mv, D, phi, qdd)
    return -1


#: The tree's forward dynamics inlined into the single-state kernels, the right-hand side
#: and the closed-chain kernel: called, it is passed the model views word by word (every
#: field of `core.kernels.layout`, grown with the force elements and drives), 0.3 us of a
#: 1.3 us call on the PUMA.
forward_dynamics_tree_inline = inline_twin(forward_dynamics_tree)
