"""The vehicles of Jalon & Bayo Sec 8.4 (seed 002) shipped in robots/ (issue 22): the car
of Table 8.5 / Fig. 8.23 and the heavy truck of Sec 8.4.2.

What the book gives (counts and topology) is checked against the book; the rest is
checked against mechanics computed here, not by the code under test: the static pose by
hand (moment balance and each corner's free body), the springs' and tyres' energy from
their points (forward kinematics) and their stiffness, the dampers' dissipation from
the rates of their lengths, the laws of conservation in a free fall.

Runs use rtol = atol = 1e-7 (the tyres' 18 Hz wheel hop makes DOP853 at the default
1e-10 take minutes); the energy checks are relative to the energies involved.
"""
from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import (LoopClosureError, SpringDamper, Tyre, assemble, constraint_row_labels,
                         energy, forward_kinematics, load_mechanism, loop_jacobian,
                         loop_residual, simulate)
from armdyn.core.io.mechanism_file import mechanism_to_toml

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = ROOT / "robots"
G = 9.81
TOL = dict(rtol=1e-7, atol=1e-7)


def load(name: str):
    return load_mechanism(ROBOTS / f"{name}.toml")


def generator():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import build_vehicles
    finally:
        sys.path.pop(0)
    return build_vehicles


def element_geometry(mech, q):
    """Per force element: a spring-damper's length (m); a tyre's compression r - z (m),
    from the points' world positions (forward kinematics)."""
    F = forward_kinematics(mech, q).frames

    def world(link, p):
        if link == "base":
            return np.asarray(p, float)
        T = F[mech.joint_names.index(link) + 1]
        return T[:3, :3] @ np.asarray(p, float) + T[:3, 3]

    out = []
    for e in mech.forces:
        if isinstance(e, SpringDamper):
            a, b = (world(n, p) for n, p in zip(e.links, e.at))
            out.append(float(np.linalg.norm(a - b)))
        else:
            z = world(e.link, e.at)
            out.append(e.radius - (z[2] - road_height(mech, z[0])))
    return np.array(out)


def road_height(mech, x: float) -> float:
    pts = np.array(mech.road.points) if mech.road is not None else np.zeros((0, 2))
    return float(np.interp(x, pts[:, 0], pts[:, 1])) if len(pts) else 0.0


def road_work(mech, run, geometry) -> np.ndarray:
    """(S,) the work the road has done on the tyres since t = 0, J. A tyre pushes
    vertically, F = k delta, delta = r - (z - h(x)): its spring energy changes at
    k delta (h'(x) x' - z') while its force does work at F z' on the wheel, so on a
    slope the road feeds in F h'(x) x' (and takes it back on the way down)."""
    work = np.zeros(len(run.t) - 1)
    for k, e in enumerate(mech.forces):
        if not isinstance(e, Tyre):
            continue
        i = mech.joint_names.index(e.link) + 1
        x = np.array([forward_kinematics(mech, q).frames[i][0, 3] for q in run.q])
        h = np.array([road_height(mech, v) for v in x])
        force = e.stiffness * np.maximum(geometry[:, k], 0.0)
        # the integral of F dh(x(t)), step by step (h(x(t)) is continuous where its
        # slope jumps, so the trapezoid on dh keeps its order across the bump's corners)
        work += 0.5 * (force[1:] + force[:-1]) * np.diff(h)
    return np.concatenate([[0.0], np.cumsum(work)])


def spring_energy(mech, geometry) -> np.ndarray:
    """(S,) the elastic energy of every spring and tyre, J."""
    total = np.zeros(len(geometry))
    for k, e in enumerate(mech.forces):
        g = geometry[:, k]
        if isinstance(e, SpringDamper):
            total += 0.5 * e.stiffness * (g - e.free_length) ** 2
        else:
            total += 0.5 * e.stiffness * np.maximum(g, 0.0) ** 2
    return total


def undamped(mech):
    return replace(mech, forces=tuple(replace(e, damping=0.0) for e in mech.forces))


# ----------------------------------------------------------------------------------
# The car
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["car", "truck"])
def test_the_vehicle_files_are_what_their_generator_writes(name):
    bv = generator()
    build = getattr(bv, name)
    description = getattr(bv, f"{name.upper()}_DESCRIPTION")
    assert mechanism_to_toml(load(f"{name}_jalon")) == mechanism_to_toml(
        build(description=description))


# What the book gives. Sec 8.4.2, the table beside Fig. 8.20 (the truck): "No. of rigid
# bodies: 33 (21 + 12)", "Joints: 23R + 15S + 6U + 1G", "No. d.o.f.: 18", and in the text
# "With formulation B, some joints have been cut to obtain an open-chain system with 48
# degrees of freedom". Sec 8.4.3 (the car of Fig. 8.23 and Table 8.5): "The complete model
# has 25 rigid bodies with general mass and inertia properties and 15 degrees of freedom".
TRUCK_BOOK = dict(bodies=33, joints={"revolute": 23, "spherical": 15, "universal": 6,
                                     "free": 1}, dof=18, open_chain=48)
CAR_BOOK = dict(bodies=25, dof=15)
#: Scalar constraints of each joint kind on the relative motion of its two bodies (6 less
#: its freedoms): Gruebler's count of a spatial mechanism's mobility is 6 per body less
#: these; the rank of the loops' Jacobian gives more only where rows depend on others.
CONSTRAINTS = {"revolute": 5, "prismatic": 5, "spherical": 3, "universal": 4, "free": 0}
FREEDOMS = {kind: 6 - c for kind, c in CONSTRAINTS.items()}
#: A gear loop (the car's rack and pinion) couples two joints' values: one constraint.
CONSTRAINTS["gear"] = 1


def joint_kinds(chains, loops) -> Counter:
    """Every joint by kind, a body's (tree) joints and the loops' joints together."""
    return Counter(link.joint.value for chain in chains for link in chain.links) + Counter(
        loop.joint.value for loop in loops)


def gruebler(bodies: int, joints: Counter) -> int:
    return 6 * bodies - sum(CONSTRAINTS[kind] * n for kind, n in joints.items())


def test_the_truck_has_the_books_bodies_joints_and_degrees_of_freedom():
    """Ours has the book's 33 bodies (21 + 12 leaf parts), its joints 23R + 15S + 6U +
    1G (45: 12 loops), 18 degrees of freedom from the rank of the loop Jacobian, its
    loops closed to round-off at home. By Gruebler's count those joints give 14, so four
    constraint rows depend on others: the loop Jacobian has 44 rows and rank 40 (each
    axle's planar left leaf holds its seat by two ball joints at one point). No spanning
    tree of those joints has the 48 open-chain freedoms of the book's formulation B
    (with the free joint, 33 tree joints have at least 50)."""
    book = TRUCK_BOOK
    mech = load("truck_jalon")
    ours = joint_kinds(mech.chains, mech.loops)
    assert len(mech.links) == book["bodies"] and mech.dof == book["dof"]
    assert ours == book["joints"] and sum(ours.values()) == 45
    assert len(mech.loops) == 45 - 33 == 12
    leaves = [n for n in mech.joint_names if "leaf" in n or "shackle" in n]
    assert len(leaves) == 12 and len(mech.links) - len(leaves) == 21
    assert gruebler(33, ours) == 14 == book["dof"] - 4
    J = loop_jacobian(mech, mech.q_home)
    s = np.linalg.svd(J, compute_uv=False)
    assert J.shape == (44, mech.nv) and mech.nv - 40 == mech.dof
    assert s[39] > 1e-2 * s[0] and s[40] < 1e-9 * s[0]  # rank 40, clearly (a gap of 1e9)
    assert np.abs(loop_residual(mech, mech.q_home)).max() < 1e-9
    assert sum(isinstance(e, Tyre) for e in mech.forces) == 4
    assert np.array(mech.road.points)[:, 1].max() >= 0.05 and mech.warnings == ()
    tree_freedoms = {FREEDOMS["free"] + r * FREEDOMS["revolute"] + s * FREEDOMS["spherical"]
                     + (32 - r - s) * FREEDOMS["universal"]
                     for r in range(24) for s in range(16) if 0 <= 32 - r - s <= 6}
    assert min(tree_freedoms) == 50 and book["open_chain"] not in tree_freedoms


def test_the_trucks_axles_roll_and_its_wheels_steer():
    """The freedoms are a truck's: the loops closed (assembly) holding the model's
    independent joints (the chassis, the cab, the wheels, the pitman arm, each axle's
    left front half-leaf and right shackle), the left front half-leaf turned by 2
    degrees rolls its axle (its wheel centres' heights change by amounts more than 2
    cm apart: a tilt of more than half a degree over the 2 m track; measured 3.9 cm up
    on the left, 1.5 cm down on the right at the front), and the pitman arm turned by 5
    degrees steers both knuckles the same way by angles near each other. Read
    literally, every leaf planar, the same joints are refused: each axle, a bar between
    two seats that stay in their leaves' planes, cannot roll but at second order, and
    the reference pose is singular (rank 30 there, 32 nearby)."""
    mech = load("truck_jalon")
    q0 = mech.q_home

    def ends(q, axle):  # the world positions of the axle's two wheel centres
        F = forward_kinematics(mech, q).frames
        wheel = "front wheel" if axle == "front" else "rear wheel"
        return [F[mech.joint_names.index(f"{side} {wheel}") + 1][:3, 3]
                for side in ("left", "right")]

    for axle in ("front", "rear"):
        left = mech.values_of([mech.joint_index(f"left {axle} front half-leaf")])[0]
        q = q0.copy()
        q[left] += np.radians(2.0)
        rolled = assemble(mech, q)
        assert np.abs(loop_residual(mech, rolled)).max() < 1e-9
        (l0, r0), (l1, r1) = ends(q0, axle), ends(rolled, axle)
        dz_left, dz_right = l1[2] - l0[2], r1[2] - r0[2]
        assert abs(dz_left - dz_right) > 0.02  # a roll
    steer = mech.values_of([mech.joint_index("pitman arm")])[0]
    q = q0.copy()
    q[steer] += np.radians(5.0)
    steered = assemble(mech, q)
    turn = []
    for side in ("left", "right"):
        k = mech.joint_index(f"{side} knuckle")
        turn.append(steered[mech.values_of([k])[0]] - q0[mech.values_of([k])[0]])
    assert abs(turn[0]) > np.radians(1.0) and turn[0] * turn[1] > 0
    assert abs(turn[1] - turn[0]) < 0.2 * abs(turn[0])
    chains, loops, forces, held = generator().truck_parts(joints="literal")
    assert joint_kinds(chains, loops) == TRUCK_BOOK["joints"]
    with pytest.raises(LoopClosureError, match="singular configuration.*rank 30 there and 32"):
        generator().truck(joints="literal")


def test_the_car_has_the_books_bodies_and_degrees_of_freedom():
    """Table 8.5's car: the book's 25 bodies and 15 degrees of freedom (6 chassis +
    steering + 4 suspensions + 4 wheels), a McPherson front and a five-point rear closed
    by spherical joints, springs, dampers, four tyres on a road with a bump, its loops
    closed to round-off at home. Every body but the chassis and the steering is one of
    a left-right pair; the steering is a rack and a column whose pinion drives it (a
    gear loop: the column's revolute joint and the gear leave one steering freedom)."""
    mech = load("car_jalon")
    assert mech.dof == CAR_BOOK["dof"] and mech.nv == 46 and mech.nq == 51
    assert len(mech.links) == CAR_BOOK["bodies"]
    names = set(mech.joint_names)
    paired = {n for n in names if n.split()[0] in ("left", "right")}
    assert all(n.replace("left", "right", 1) in names for n in paired if n.startswith("left"))
    assert names - paired == {"chassis", "steering rack", "steering column"}
    assert joint_kinds(mech.chains, mech.loops) == {
        "free": 1, "revolute": 9, "prismatic": 3, "spherical": 14, "universal": 8, "gear": 1}
    assert gruebler(len(mech.links), joint_kinds(mech.chains, mech.loops)) == mech.dof
    assert len(mech.loops) == 11
    assert Counter(lp.joint.value for lp in mech.loops) == {"spherical": 10, "gear": 1}
    gear = next(lp for lp in mech.loops if lp.joint.value == "gear")
    assert gear.links == ("steering column", "steering rack")
    tyres = [e for e in mech.forces if isinstance(e, Tyre)]
    springs = [e for e in mech.forces if isinstance(e, SpringDamper)]
    assert len(tyres) == 4 and len(springs) == 5
    assert all(s.stiffness > 0 and s.damping > 0 for s in springs)
    h = np.array(mech.road.points)[:, 1]
    assert h.max() >= 0.05  # the bump
    assert np.abs(loop_residual(mech, mech.q_home)).max() < 1e-15
    assert mech.links[0].joint.value == "free" and mech.warnings == ()


def test_the_cars_pinion_meshes_with_its_rack():
    """The pitch point of the pinion (the point of the column's axis nearest the rack's
    line, one pitch radius from the axis towards it) moves with the rack when the
    column turns and the rack follows by the gear: the reconstruction's geometry and the
    gear's ratio (and sign) agree. Central differences of forward kinematics along the
    closed motion that turns the column."""
    mech = load("car_jalon")
    column, rack = mech.joint_index("steering column"), mech.joint_index("steering rack")
    gear = next(lp for lp in mech.loops if lp.joint.value == "gear")
    r = abs(gear.ratio)

    def frames(q):  # each link's own frame (a DH row with a = b = alpha = 0: on its axis)
        return forward_kinematics(mech, q).frames[1:]

    q0 = mech.q_home
    T_col, T_rack = frames(q0)[column], frames(q0)[rack]
    d, centre = T_col[:3, 2], T_col[:3, 3]  # the column turns about its frame's z
    e, o = T_rack[:3, 2], T_rack[:3, 3]     # the rack slides along its frame's z
    foot = o + ((centre - o) @ e) * e       # the rack's line's point nearest the centre
    towards = (foot - centre) / np.linalg.norm(foot - centre)
    # it meshes, the axes square (to the rounding of the file's placements: 5e-11 m, and
    # 6e-8 rad seen over the 8 mm radius)
    assert np.linalg.norm(foot - centre) == pytest.approx(r, abs=1e-9)
    assert abs(d @ e) < 1e-9 and abs(towards @ d) < 1e-6
    pitch_point = np.linalg.inv(T_col) @ np.append(centre + r * towards, 1.0)
    iq_col, iq_rack = mech.values_of([column])[0], mech.values_of([rack])[0]
    gear_row = constraint_row_labels(mech).index(f"{gear.name} gear")
    h = 1e-6
    moved = []
    for s in (1.0, -1.0):
        q = q0.copy()
        q[iq_col] += s * h
        q[iq_rack] += s * h * gear.ratio
        # the gear row holds along it (the tie rods' loops do not: they are not moved)
        assert abs(loop_residual(mech, q)[gear_row]) < 1e-15
        moved.append((frames(q)[column] @ pitch_point)[:3])
    pitch_velocity = (moved[0] - moved[1]) / (2 * h)  # per unit column rate
    np.testing.assert_allclose(pitch_velocity, gear.ratio * e, atol=1e-7 * r)


def _hand_static(mech):
    """The static pose by hand: each tyre's force (the weight split between the axles by
    moment balance about the mass centre, halved by symmetry) and each suspension
    spring's (its tyre's less the weight of its wheel and carrier and of half its
    links: the spring sits vertically over the wheel centre on the carrier, so it moves
    as the wheel does). Positions from forward kinematics at home."""
    q = mech.q_home
    F = forward_kinematics(mech, q).frames
    mass = np.array([link.mass for link in mech.links])
    com = np.array([F[k + 1][:3, :3] @ np.array(link.com) + F[k + 1][:3, 3]
                    for k, link in enumerate(mech.links)])
    W = mass.sum() * G
    cx = mass @ com[:, 0] / mass.sum()
    x = {axle: F[mech.joint_names.index(f"left {axle} wheel") + 1][0, 3]
         for axle in ("front", "rear")}
    front = W * (cx - x["rear"]) / (x["front"] - x["rear"])
    axle_load = {"front": front, "rear": W - front}
    m = dict(zip(mech.joint_names, mass))
    tyre, spring = {}, {}
    for side in ("left", "right"):
        for axle, carrier, links in (
                ("front", "knuckle", ("lower arm", "tie rod")),
                ("rear", "upright", ("rear A-arm", "rear upper link", "rear trailing link",
                                     "rear toe link"))):
            unsprung = m[f"{side} {axle} wheel"] + m[f"{side} {carrier}"] + 0.5 * sum(
                m[f"{side} {n}"] for n in links)
            tyre[side, axle] = axle_load[axle] / 2
            spring[side, axle] = axle_load[axle] / 2 - unsprung * G
    return tyre, spring


def test_the_car_settles_to_the_static_deflection_of_a_hand_computation():
    """Dropped from 3 cm higher, the car settles in 3 s: the four tyres carry the weight
    (exactly, at rest), split by moment balance; each spring is compressed by its hand
    load / k below its free length, each tyre by its load / k_t. The hand computation
    counts half of each link as unsprung; the links are 1-6 kg against loads of 2.3-3.4
    kN, hence 1 %. Measured: front spring 3181.4 N (hand 3176.9), rear 2338.8 (2333.9),
    tyres 3454.1 and 2633.0 N (3451.6 and 2630.6)."""
    mech = load("car_jalon")
    q0 = mech.q_home.copy()
    q0[2] += 0.03
    run = simulate(mech, 3.0, q0=q0, dt_out=0.05, **TOL)
    assert np.abs(run.qd[-1]).max() < 0.01  # at rest
    geometry = element_geometry(mech, run.q[-1])
    tyre, spring = _hand_static(mech)
    W = sum(link.mass for link in mech.links) * G
    forces = dict(zip((e.name for e in mech.forces), range(len(mech.forces))))
    total = sum(geometry[forces[f"{s} {a} tyre"]] * mech.forces[forces[f"{s} {a} tyre"]].stiffness
                for s in ("left", "right") for a in ("front", "rear"))
    assert total == pytest.approx(W, rel=1e-4)
    for (side, axle), load_ in tyre.items():
        k = forces[f"{side} {axle} tyre"]
        assert geometry[k] == pytest.approx(load_ / mech.forces[k].stiffness, rel=0.01)
        name = f"{side} {axle} strut" if axle == "front" else f"{side} rear spring"
        e = mech.forces[forces[name]]
        compression = e.free_length - geometry[forces[name]]
        assert compression == pytest.approx(spring[side, axle] / e.stiffness, rel=0.01)
        # and the run's own record of the forces says the same
        assert -run.element_forces[-1, forces[name]] == pytest.approx(spring[side, axle],
                                                                        rel=0.01)
    assert np.abs(run.loop_residual).max() < 1e-7


def _over_the_bump(mech, duration=1.4, speed=10.0, dt_out=0.002):
    """Coasting at `speed` m/s over the road's bump, the wheels rolling."""
    qd0 = np.zeros(mech.nv)
    qd0[3] = speed  # the chassis's forward velocity, its own frame
    for e in mech.forces:
        if isinstance(e, Tyre):
            qd0[mech.v_slice(e.link)] = speed / e.radius
    return simulate(mech, duration, qd0=qd0, dt_out=dt_out, **TOL)


@pytest.mark.parametrize("name", ["car_jalon", "truck_jalon"])
def test_the_vehicles_run_over_the_bump_and_their_dampers_take_the_energy_they_lose(name):
    """10 m/s over the 6 cm bump: the run finishes, the loops stay closed, the front tyres
    feel the bump (their force rises well above the static load) and then the rear. The
    energy (kinetic + gravity from the core's `energy`, springs and tyres computed here
    from their points) changes by what the road does on the tyres (`road_work`: vertical
    tyres on a slope) less what the dampers dissipate, the integral of c L'^2 with L' the
    rate of each damper's length from its points (the tyres are undamped). Measured:
    car: front tyres peak at 3.5x, rear at 4.2x their static load; the road puts in
    1502 J and takes back 361, the dampers take 1138 J; the balance holds to 5.9 J (the
    quadrature at 2 ms samples); the loops stay closed to 1e-14. Truck: 2.9x and 3.8x;
    road 14.8 kJ in, 4.5 kJ back; dampers 10.1 kJ; balance to 7 J; loops to 5e-15."""
    mech = load(name)
    run = _over_the_bump(mech)
    assert run.t[-1] == pytest.approx(1.4)
    assert np.abs(run.loop_residual).max() < 1e-6
    names = [e.name for e in mech.forces]
    front = run.element_forces[:, names.index("left front tyre")]
    rear = run.element_forces[:, names.index("left rear tyre")]
    assert front.max() > 1.5 * front[0] and rear.max() > 1.3 * rear[0]
    assert run.t[np.argmax(front)] < run.t[np.argmax(rear)]
    geometry = np.array([element_geometry(mech, q) for q in run.q])
    E = energy(mech, run.q, run.qd)[:, 2] + spring_energy(mech, geometry)
    np.testing.assert_allclose(E, run.energy[:, 2], rtol=0, atol=1e-6 * abs(E[0]))
    rate = np.gradient(geometry, run.t, axis=0)
    power = sum(e.damping * rate[:, k] ** 2 for k, e in enumerate(mech.forces)
                if isinstance(e, SpringDamper))
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(run.t))])
    work = road_work(mech, run, geometry)
    assert dissipated[-1] > 50.0  # J: the bump did shake the car
    np.testing.assert_allclose(E - E[0], work - dissipated, atol=0.01 * dissipated[-1])


@pytest.mark.parametrize("name", ["car_jalon", "truck_jalon"])
def test_without_damping_the_vehicles_keep_their_energy_over_the_bump(name):
    """Dampers off: the energy changes by the road's work alone. Measured: 11 J off over
    a road work of up to 1578 J (car), 40 J over 15.5 kJ (truck): the quadrature at 2 ms
    samples."""
    mech = undamped(load(name))
    run = _over_the_bump(mech)
    geometry = np.array([element_geometry(mech, q) for q in run.q])
    E = energy(mech, run.q, run.qd)[:, 2] + spring_energy(mech, geometry)
    work = road_work(mech, run, geometry)
    swing = spring_energy(mech, geometry).max() - spring_energy(mech, geometry).min()
    assert swing > 50.0
    assert np.abs(E - E[0] - work).max() < 0.02 * np.abs(work).max()


@pytest.mark.parametrize("name, duration", [("car_jalon", 10.0), ("truck_jalon", 1.0)])
def test_without_their_tyres_the_vehicles_tumble_keeping_momentum_and_energy(name, duration):
    """A free fall of each vehicle in the air (tyres taken off, dampers off, its springs
    kept: internal forces), 10 s for the car, 1 s for the truck (a second costs it 11 s):
    the angular momentum about the mass centre stays, the mass centre follows g, the
    energy (with the springs' from their points) stays, the chassis's quaternion stays
    unit and the loops closed. Measured: car, |H| = 2023 kg m^2/s kept to 6e-11; the
    energy to 1.2e-12 of the peak kinetic energy; loops to 1.1e-13. Truck: |H| kept to
    4e-13 of itself, the energy to 5e-13; loops to 6e-15."""
    mech = undamped(load(name))
    mech = replace(mech, forces=tuple(e for e in mech.forces if isinstance(e, SpringDamper)))
    qd0 = np.zeros(mech.nv)
    qd0[:6] = [0.3, 1.0, 0.5, 0.5, -0.2, 4.0]  # tumbling and drifting
    run = simulate(mech, duration, qd0=qd0, dt_out=0.05, rtol=1e-9, atol=1e-9)
    H = run.angular_momentum
    assert np.abs(H - H[0]).max() < 1e-6 * np.linalg.norm(H[0])
    geometry = np.array([element_geometry(mech, q) for q in run.q])
    E = energy(mech, run.q, run.qd)[:, 2] + spring_energy(mech, geometry)
    kinetic = energy(mech, run.q, run.qd)[:, 0]
    assert np.abs(E - E[0]).max() < 1e-6 * kinetic.max()
    mass = sum(link.mass for link in mech.links)
    c = run.center_of_mass
    parabola = c[0] + np.outer(run.t, run.linear_momentum[0] / mass) + 0.5 * np.outer(
        run.t ** 2, mech.gravity)
    assert np.abs(c - parabola).max() < 1e-6
    assert np.abs(np.linalg.norm(run.q[:, 3:7], axis=1) - 1).max() < 1e-12
    assert np.abs(run.loop_residual).max() < 1e-8
