"""Which arrangement gives the truck of Jalon & Bayo Sec 8.4.2 the book's joint kinds
and a truck's motions? (docs/floating-bases.md, "The truck's joint kinds")

The book: 33 bodies (21 + 12 leaf parts), joints 23R + 15S + 6U + 1G, 18 degrees of
freedom. Run `.venv/bin/python examples/truck_joint_kinds.py` (about seven minutes;
`--with-u` also pairs a leaf with a universal joint with one without, the budget of a
rod with a revolute end: far longer, never run to its end):

1. The budget (by hand). Besides the leaves, 11 joints can only be revolute (4 wheels,
   2 king pins, the pitman arm, the 4 halves of the stabiliser bars); the chassis is
   free (the book's G, the "generalized joint" of its Fig. 8.9, whose base body has six
   freedoms); the cab hangs on one spherical joint (3 of the 18 freedoms); each of the
   six rods (4 drop links, drag link, track rod) has one spherical end (a rod on two
   spins idly about its axis) and, for the book's 6 U, a universal one. That leaves 12
   R and 8 S for the 20 leaf joints: two S and three R a leaf, one S on each of its two
   paths from the frame to the axle (a leaf body on two S spins idly).

2. The screen: one axle on its two leaves (7 bodies, the frame fixed), every
   arrangement of two S and three R a leaf (revolute axes along x, y or z), three
   layouts (the axle seated on both half-leaves, at one point or 0.1 m apart; or the
   half-leaves joined and the axle on one of them). Independent of ArmDyn: bodies in
   maximal coordinates, each joint's rows written here. Per pair of leaves: the freedoms
   at the reference pose (intersecting the axle twists each leaf allows) and at closed
   poses nearby (the rank), whether the two seats' heights move independently there
   (bounce and roll), whether a leaf moves while the axle does not (an idle freedom),
   and whether the axle rolls +-3 cm at the seats with every joint closed (Newton along
   a continuation). A pair works when all hold.

3. The whole truck, built by examples/build_vehicles.py with the shipped arrangement
   ("book"), the literal reading (every leaf planar) and the earlier sorting ("ours"):
   its counts, Gruebler's count, the rank of ArmDyn's loop Jacobian at home and at closed
   poses nearby, or the core's refusal.
"""
from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass

import numpy as np

RANK_TOL = 1e-9

# ----------------------------------------------------------------------------------
# One axle on two leaves, in maximal coordinates
# ----------------------------------------------------------------------------------

X, Y, Z = np.eye(3)
AXES = {"x": X, "y": Y, "z": Z}


@dataclass(frozen=True)
class Joint:
    """A joint between bodies i and j (0 is the frame) at world point p (reference pose):
    kind 'S', 'R' with axis a, or 'U' with axis a on i and b on j (a . b = 0)."""

    i: int
    j: int
    p: tuple
    kind: str
    a: str = ""
    b: str = ""

    @property
    def rows(self) -> int:
        return {"S": 3, "R": 5, "U": 4}[self.kind]


def skew(v) -> np.ndarray:
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def rotation(w) -> np.ndarray:
    t = np.linalg.norm(w)
    if t < 1e-15:
        return np.eye(3) + skew(w)
    K = skew(w / t)
    return np.eye(3) + np.sin(t) * K + (1 - np.cos(t)) * K @ K


def perpendiculars(a) -> tuple[np.ndarray, np.ndarray]:
    e1 = np.cross(a, X if abs(a[0]) < 0.9 else Y)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(a, e1)


def residual_and_jacobian(joints, nb, R, t):
    """Phi (m,) and J (m, 6 nb) of the joints at the poses (R[k], t[k]) of bodies 1..nb
    (world point = R p0 + t); rates per body: angular velocity w, then dt/dt."""
    Rb = [np.eye(3)] + list(R)
    tb = [np.zeros(3)] + list(t)
    Phi, J = [], []

    def block(k, rows):
        if k:
            out = np.zeros((rows.shape[0], 6 * nb))
            out[:, 6 * (k - 1):6 * k] = rows
            return out
        return np.zeros((rows.shape[0], 6 * nb))

    for jt in joints:
        p0 = np.asarray(jt.p, float)
        pi = Rb[jt.i] @ p0 + tb[jt.i]
        pj = Rb[jt.j] @ p0 + tb[jt.j]
        Phi.append(pi - pj)
        Ji = np.hstack([-skew(Rb[jt.i] @ p0), np.eye(3)])
        Jj = np.hstack([-skew(Rb[jt.j] @ p0), np.eye(3)])
        J.append(block(jt.i, Ji) - block(jt.j, Jj))
        if jt.kind == "R":
            a = Rb[jt.i] @ AXES[jt.a]
            for e0 in perpendiculars(AXES[jt.a]):
                e = Rb[jt.j] @ e0
                Phi.append(np.array([a @ e]))
                n = np.cross(a, e)[None, :]
                J.append(block(jt.i, np.hstack([n, 0 * n])) - block(jt.j, np.hstack([n, 0 * n])))
        elif jt.kind == "U":
            a, b = Rb[jt.i] @ AXES[jt.a], Rb[jt.j] @ AXES[jt.b]
            Phi.append(np.array([a @ b]))
            n = np.cross(a, b)[None, :]
            J.append(block(jt.i, np.hstack([n, 0 * n])) - block(jt.j, np.hstack([n, 0 * n])))
    return np.concatenate(Phi), np.vstack(J)


def rank(A) -> int:
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > RANK_TOL * max(1.0, s[0]))) if s.size else 0


def close(joints, nb, R, t, tol=1e-12, iterations=50):
    """Newton (least norm) from the poses given to closed ones; None if it fails."""
    R, t = [r.copy() for r in R], [v.copy() for v in t]
    for _ in range(iterations):
        Phi, J = residual_and_jacobian(joints, nb, R, t)
        if np.max(np.abs(Phi)) < tol:
            return R, t
        d = -np.linalg.lstsq(J, Phi, rcond=1e-10)[0]
        for k in range(nb):
            R[k] = rotation(d[6 * k:6 * k + 3]) @ R[k]
            t[k] = t[k] + d[6 * k + 3:6 * k + 6]
    return None


# ----------------------------------------------------------------------------------
# The leaves (the truck's numbers: examples/build_vehicles.py, TRUCK)
# ----------------------------------------------------------------------------------

XA, ZA, YR = 2.0, 0.49, 0.45          # axle x, axle centre z, leaf y (m)
SEAT = ZA + 0.12
AXLE = 1                               # body numbers: 0 frame, 1 axle, then F, B, K a side


def leaf_points(s: float, apart: float) -> dict:
    y = s * YR
    return dict(hF=(XA + 0.7, y, SEAT + 0.10), pF=(XA + apart, y, SEAT),
                pB=(XA - apart, y, SEAT), l=(XA - 0.70, y, SEAT + 0.08),
                hB=(XA - 0.75, y, SEAT + 0.23))


#: Topologies: the leaf's five joints (body names: C frame, A axle, F front half, B rear
#: half, K shackle) and their points.
TOPOLOGIES = {
    "seated on both halves": (("C", "F", "hF"), ("F", "A", "pF"), ("B", "A", "pB"),
                              ("B", "K", "l"), ("K", "C", "hB")),
    "halves joined, axle on the front half": (("C", "F", "hF"), ("F", "B", "pB"),
                                              ("F", "A", "pF"), ("B", "K", "l"),
                                              ("K", "C", "hB")),
    "halves joined, axle on the rear half": (("C", "F", "hF"), ("F", "B", "pF"),
                                             ("B", "A", "pB"), ("B", "K", "l"),
                                             ("K", "C", "hB")),
}

KINDS_R = [("R", a, "") for a in "xyz"]
KINDS_U = [("U", a, b) for a in "xyz" for b in "xyz" if a != b]


def leaf_kinds(with_u: bool):
    """Every assignment of kinds to a leaf's five joints: two S, the rest R (or R and
    exactly one U)."""
    for spots in itertools.combinations(range(5), 2):
        rest = [k for k in range(5) if k not in spots]
        choices = [KINDS_R] * 3
        if with_u:
            for u in range(3):
                cs = [KINDS_R] * 3
                cs[u] = KINDS_U
                for combo in itertools.product(*cs):
                    yield spots, rest, combo
        else:
            for combo in itertools.product(*choices):
                yield spots, rest, combo


def leaf_joints(topology: str, spots, rest, combo, side: float, apart: float, base: int):
    pts = leaf_points(side, apart)
    body = {"C": 0, "A": AXLE, "F": base, "B": base + 1, "K": base + 2}
    kinds = {k: ("S", "", "") for k in spots}
    kinds.update(dict(zip(rest, combo)))
    out = []
    for k, (a, b, p) in enumerate(TOPOLOGIES[topology]):
        kind, u, v = kinds[k]
        out.append(Joint(body[a], body[b], pts[p], kind, u, v))
    return out


def idle_free(joints) -> bool:
    """The leaf is rigid when the axle is held (no freedom that moves it alone)."""
    held = [Joint(0 if j.i in (0, AXLE) else j.i - 1, 0 if j.j in (0, AXLE) else j.j - 1,
                  j.p, j.kind, j.a, j.b) for j in joints]
    nb = 3
    _, J = residual_and_jacobian(held, nb, [np.eye(3)] * nb, [np.zeros(3)] * nb)
    return rank(J) == 6 * nb


def label(topology, joints) -> str:
    """The leaf's joints and kinds, e.g. "front hanger Ry, F-A S, ..." (F front
    half-leaf, B rear half-leaf, A axle; R with its axis, U with its two)."""
    t = TOPOLOGIES[topology]
    names = ["front hanger", f"{t[1][0]}-{t[1][1]}", f"{t[2][0]}-{t[2][1]}", "shackle-leaf",
             "shackle hanger"]
    return ", ".join(f"{n} {j.kind}{j.a}{j.b}" for n, j in zip(names, joints))


@dataclass
class Verdict:
    rows: int
    home_dof: int
    near_dof: int
    rolls: bool          # nearby, the seats' heights move independently
    reach: float         # m: the roll held closed by continuation, +-reach at the seats
    idle: int

    @property
    def works(self) -> bool:
        return (self.home_dof == self.near_dof == 2 and self.rolls and self.idle == 0
                and self.reach >= 0.03 - 1e-12)


def axle_motions(J, nb) -> tuple[bool, int]:
    """(the seats' heights move independently, freedoms that move no axle)."""
    _, s, vt = np.linalg.svd(J)
    r = int(np.sum(s > RANK_TOL * max(1.0, s[0])))
    N = vt[r:].T                            # null space (6 nb, dof)
    if N.shape[1] == 0:
        return False, 0
    return seat_heights_free(N[0:6]), N.shape[1] - rank(N[0:6])


def finite_roll(joints, nb, roll: float = 0.03, steps: int = 15) -> float:
    """How far (m) the seats can be moved apart in height, +h and -h, keeping every joint
    closed (continuation in steps up to `roll`): `roll` if the axle rolls that far."""
    R, t = [np.eye(3)] * nb, [np.zeros(3)] * nb
    seats = [np.array([XA, s * YR, SEAT]) for s in (1.0, -1.0)]
    reached = 0.0
    for k in range(1, steps + 1):
        h = roll * k / steps
        for _ in range(30):
            Phi, J = residual_and_jacobian(joints, nb, R, t)
            extra, rows = [], []
            for p, target in zip(seats, (h, -h)):
                w = R[0] @ p + t[0]
                extra.append(w[2] - p[2] - target)
                row = np.zeros(6 * nb)
                row[0:3], row[5] = np.cross(R[0] @ p, Z), 1.0
                rows.append(row)
            F = np.concatenate([Phi, extra])
            if np.max(np.abs(F)) < 1e-11:
                break
            d = -np.linalg.lstsq(np.vstack([J, rows]), F, rcond=1e-10)[0]
            R = [rotation(d[6 * i:6 * i + 3]) @ R[i] for i in range(nb)]
            t = [t[i] + d[6 * i + 3:6 * i + 6] for i in range(nb)]
        else:
            return reached
        reached = h
    return reached


def judge(joints, nb, rng, tries=2) -> Verdict:
    R0, t0 = [np.eye(3)] * nb, [np.zeros(3)] * nb
    Phi, J = residual_and_jacobian(joints, nb, R0, t0)
    rows = J.shape[0]
    home = 6 * nb - rank(J)
    near, rolls, idle = home, False, 0
    best = None
    for _ in range(tries):                 # closed poses nearby, moved by about 0.02
        _, sv, vt = np.linalg.svd(J)
        N = vt[int(np.sum(sv > RANK_TOL * max(1.0, sv[0]))):].T
        d = N @ rng.uniform(-0.03, 0.03, N.shape[1]) + rng.uniform(-1e-3, 1e-3, 6 * nb)
        got = close(joints, nb, [rotation(d[6 * k:6 * k + 3]) for k in range(nb)],
                    [d[6 * k + 3:6 * k + 6] for k in range(nb)])
        if got is None:
            continue
        Jn = residual_and_jacobian(joints, nb, *got)[1]
        dof_n = 6 * nb - rank(Jn)
        if best is None or dof_n < best[0]:
            best = (dof_n, Jn)
    if best is not None:
        near = best[0]
        rolls, idle = axle_motions(best[1], nb)
    reach = finite_roll(joints, nb) if near == 2 and rolls and idle == 0 else 0.0
    return Verdict(rows, home, near, rolls, reach, idle)


def allowed_twists(joints) -> np.ndarray:
    """The axle twists (6, d) a leaf allows at the reference pose (its null space seen at
    the axle; the leaf is rigid when the axle is held, so nothing else moves)."""
    nb = 4                                  # the axle and the leaf's three bodies
    _, J = residual_and_jacobian(joints, nb, [np.eye(3)] * nb, [np.zeros(3)] * nb)
    _, s, vt = np.linalg.svd(J)
    r = int(np.sum(s > RANK_TOL * max(1.0, s[0])))
    return vt[r:, 0:6].T


def shared(A, B) -> int:
    """dim of the intersection of the column spaces of A and B."""
    if A.shape[1] == 0 or B.shape[1] == 0:
        return 0
    return A.shape[1] + B.shape[1] - rank(np.hstack([A, B]))


def seat_heights_free(T) -> bool:
    """Whether the axle twists T (6, d) move its two seats' heights independently (the
    axle bounces and rolls), well conditioned: the smaller singular value of the map to
    the two heights at least a tenth of the larger."""
    if T.shape[1] < 2:
        return False
    rows = []
    for s in (1.0, -1.0):
        p = np.array([XA, s * YR, SEAT])
        rows.append(np.concatenate([np.cross(p, Z), Z]))    # v_z(p) = (p x z) . w + v_z
    sv = np.linalg.svd(np.array(rows) @ T, compute_uv=False)
    return bool(sv[1] > 0.1 * sv[0])


def common_twists(Tl, Tr) -> np.ndarray:
    """A basis (6, d) of the axle twists both leaves allow."""
    _, sv, vt = np.linalg.svd(np.hstack([Tl, -Tr]))
    r = int(np.sum(sv > RANK_TOL * max(1.0, sv[0])))
    return Tl @ vt[r:, :Tl.shape[1]].T


def rolls_and_bounces(Tl, Tr) -> bool:
    """Whether the axle twists both leaves allow include a roll and a bounce."""
    return seat_heights_free(common_twists(Tl, Tr))


def screen(verbose: bool = True, with_u: bool = False) -> list:
    """Every arrangement of one axle's two leaves (two S and three R a leaf; `with_u`:
    also one leaf of two S, two R and one U, the other of two S and three R); returns
    those that work."""
    rng = np.random.default_rng(1)
    works, tally = [], {}
    for topology in TOPOLOGIES:
        for apart in (0.0, 0.1):
            if apart and topology != "seated on both halves":
                continue
            leaves = {False: [], True: []}
            for u in (False, True):
                for kinds in leaf_kinds(u):
                    js = leaf_joints(topology, *kinds, 1.0, apart, 2)
                    if idle_free(js):
                        mirror = leaf_joints(topology, *kinds, -1.0, apart, 2)
                        leaves[u].append((kinds, js, allowed_twists(js),
                                          allowed_twists(mirror)))
            for with_u in ((False, True) if with_u else (False,)):
                key = (topology, apart, with_u)
                t = tally.setdefault(key, dict(leaves=len(leaves[with_u]), pairs=0, home2=0,
                                               near2=0, works=0))
                pairs = (itertools.product(leaves[False], repeat=2) if not with_u else
                         itertools.chain(itertools.product(leaves[True], leaves[False]),
                                         itertools.product(leaves[False], leaves[True])))
                for (kl, jl, Tl, _), (kr, _, _, Tr) in pairs:
                    t["pairs"] += 1
                    home = shared(Tl, Tr)
                    if home < 2:
                        continue
                    t["home2"] += home == 2
                    if home == 2 and not rolls_and_bounces(Tl, Tr):
                        continue                # at home, or singular there (fewer nearby)
                    jr = leaf_joints(topology, *kr, -1.0, apart, 5)
                    v = judge(jl + jr, 7, rng)
                    t["near2"] += v.near_dof == 2
                    if v.works:
                        t["works"] += 1
                        works.append((topology, apart, label(topology, jl),
                                      label(topology, jr), v))
                if verbose:
                    print(f"{topology}, seats {'apart' if apart else 'together'}, "
                          f"{'2S+2R+1U' if with_u else '2S+3R'} leaves: {t['leaves']} without "
                          f"idle freedoms, {t['pairs']} pairs, {t['home2']} with 2 freedoms "
                          f"at home, {t['near2']} with 2 nearby, {t['works']} rolling "
                          f"+-3 cm", flush=True)
    return works


# ----------------------------------------------------------------------------------
# The whole truck, built by the generator: ArmDyn's verdict
# ----------------------------------------------------------------------------------

def whole_truck(joints: str) -> str:
    """Counts, Gruebler's count, the loop Jacobian's rank at home and at three closed
    poses nearby (every joint moved by up to 0.01 rad or m, closed again with every
    joint free), of examples/build_vehicles.py's truck(joints=...); or the core's
    refusal."""
    from collections import Counter
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import build_vehicles
    from armdyn.core import LoopClosureError, assemble, loop_jacobian
    chains, loops, _, _ = build_vehicles.truck_parts(joints)
    kinds = Counter(link.joint.value for chain in chains for link in chain.links) + Counter(
        loop.joint.value for loop in loops)
    rows = {"revolute": 5, "spherical": 3, "universal": 4, "free": 0}
    gruebler = 6 * sum(len(chain.links) for chain in chains) - sum(
        rows[k] * n for k, n in kinds.items())
    text = (f"{joints}: {kinds['revolute']}R + {kinds['spherical']}S + "
            f"{kinds['universal']}U + {kinds['free']}G, Gruebler {gruebler}")
    try:
        mech = build_vehicles.truck(joints=joints)
    except LoopClosureError as e:
        return f"{text}; refused: {str(e)[-170:]}"
    J = loop_jacobian(mech, mech.q_home)
    s = np.linalg.svd(J, compute_uv=False)
    home = int(np.sum(s > 1e-9 * s[0]))
    rng = np.random.default_rng(3)
    near = []
    for _ in range(3):
        q = mech.model.moved_by(mech.q_home, rng.uniform(-0.01, 0.01, mech.nv))
        Jn = loop_jacobian(mech, assemble(mech, q, independent=[]))
        sn = np.linalg.svd(Jn, compute_uv=False)
        near.append(int(np.sum(sn > 1e-9 * sn[0])))
    return (f"{text}; {J.shape[0]} loop rows, {mech.nv} rates, rank {home} at home and "
            f"{near} nearby: {mech.nv - home} degrees of freedom (ArmDyn: {mech.dof})")


if __name__ == "__main__":
    found = screen(with_u="--with-u" in sys.argv)
    for topology, apart, left, right, verdict in found:
        print(f"works: {topology}, seats {'apart' if apart else 'together'}; left: {left}; "
              f"right: {right}")
    for joints in ("book", "literal", "ours"):
        print(whole_truck(joints))
