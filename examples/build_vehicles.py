"""Write the car and the heavy truck of Garcia de Jalon & Bayo Sec 8.4 (seed 002) as
robots/car_jalon.toml and robots/truck_jalon.toml (run from the repository root:
`.venv/bin/python examples/build_vehicles.py`; `--check` only compares).

The book gives the topology and the counts of both vehicles, not one dimension, so every
number here is ours: a plausible mid-size car and a two-axle truck, laid out in world
coordinates at a reference pose (x forward, y left, z up, the road at z = 0). Each body
is a `Part`: its own frame at the reference pose, its mass, mass centre and inertia
there. Joints are single-link chains (revolute and prismatic: a DH row with a = b = 0
on a placed base; spherical and universal: placed by xyz/rpy); every loop is a
spherical joint at a point both bodies share at the reference pose, so the loops are
closed by construction. The springs are set so that the reference pose is the static
pose computed by hand (`corner_loads`): the tyres carry the weight split by moment
balance, each spring the load of its corner less the corner's wheel and carriers.
tests/test_vehicles.py checks the files against this script and the physics against
hand computations.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_building import clean, clean_deg, inertia_tuple, rpy_of, unit  # noqa: E402

from armdyn.core import (Assembly, Chain, JointType, Link, Loop, Mechanism,  # noqa: E402
                         Placement, Road, SpringDamper, Tyre)

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
G = 9.81


# ----------------------------------------------------------------------------------
# Bodies and joints in world coordinates
# ----------------------------------------------------------------------------------

def frame_z(z, hint=(1.0, 0.0, 0.0)) -> np.ndarray:
    """A rotation whose z column is `z` and whose x column is nearest `hint`."""
    z = unit(z)
    x = np.asarray(hint, float) - np.dot(hint, z) * z
    if np.linalg.norm(x) < 1e-9:
        x = np.array([0.0, 0.0, 1.0]) - z[2] * z
    x = unit(x)
    return np.column_stack([x, np.cross(z, x), z])


def rod_inertia(mass, a, b, radius=0.015) -> np.ndarray:
    """A uniform rod from a to b (world): m L^2/12 across, m r^2/2 along."""
    d = unit(np.subtract(b, a))
    L = float(np.linalg.norm(np.subtract(b, a)))
    P = np.outer(d, d)
    return mass * L * L / 12.0 * (np.eye(3) - P) + 0.5 * mass * radius ** 2 * P


def box_inertia(mass, lx, ly, lz) -> np.ndarray:
    return mass / 12.0 * np.diag([ly ** 2 + lz ** 2, lx ** 2 + lz ** 2, lx ** 2 + ly ** 2])


def wheel_inertia(mass, radius, width) -> np.ndarray:
    """A wheel spinning about y: a disc, m r^2/2 about its axle."""
    across = mass * (3 * radius ** 2 + width ** 2) / 12.0
    return np.diag([across, mass * radius ** 2 / 2.0, across])


@dataclass
class Part:
    """A body at the reference pose: its own frame (origin, axes as columns, world), its
    mass (kg), mass centre (world, m) and inertia about it (world axes, kg m^2)."""

    name: str
    origin: np.ndarray
    R: np.ndarray
    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def local(self, p) -> tuple[float, float, float]:
        return tuple(clean(v) for v in self.R.T @ (np.asarray(p, float) - self.origin))

    def fields(self) -> dict:
        return dict(mass=clean(self.mass), com=self.local(self.com),
                    inertia=inertia_tuple(self.R.T @ self.inertia @ self.R), name=self.name)


def part(name, origin, R, mass, com=None, inertia=None) -> Part:
    origin = np.asarray(origin, float)
    return Part(name, origin, R, mass, origin if com is None else np.asarray(com, float),
                np.eye(3) * 1e-3 if inertia is None else inertia)


def rod(name, a, b, mass, hint=(0.0, 0.0, 1.0)) -> Part:
    """A rod on a universal joint at a: its own frame at a, y along the rod, z nearest
    `hint` (the universal joint turns about z, then about the turned x)."""
    y = unit(np.subtract(b, a))
    z = np.asarray(hint, float) - np.dot(hint, y) * y
    z = unit(z)
    R = np.column_stack([np.cross(y, z), y, z])
    mid = 0.5 * (np.asarray(a, float) + np.asarray(b, float))
    return part(name, a, R, mass, mid, rod_inertia(mass, a, b))


@dataclass
class Builder:
    """Collects chains, loops and force elements; parts by name."""

    parts: dict = field(default_factory=dict)
    chains: list = field(default_factory=list)
    loops: list = field(default_factory=list)
    forces: list = field(default_factory=list)

    def _placement(self, parent: str, R, origin) -> tuple:
        P = self.parts[parent]
        rel = P.R.T @ R
        r, p, y = rpy_of(rel)
        return P.local(origin), tuple(clean_deg(v) for v in (r, p, y))

    def free(self, p: Part) -> None:
        from scipy.spatial.transform import Rotation
        quat = Rotation.from_matrix(p.R).as_quat()
        home = tuple(clean(v) for v in (*p.origin, *quat))
        self.parts[p.name] = p
        self.chains.append(Chain(p.name, (Link(JointType.FREE, home=home, **p.fields()),)))

    def revolute(self, parent: str, p: Part, actuated: bool = False) -> None:
        """p turns about its own z through its origin (`actuated`: the joint inverse
        dynamics drives, the steering)."""
        xyz, rpy = self._placement(parent, p.R, p.origin)
        self.parts[p.name] = p
        self.chains.append(Chain(p.name, (Link(JointType.REVOLUTE, actuated=actuated,
                                               **p.fields()),),
                                 parent=parent, base=Placement(xyz, rpy)))

    def prismatic(self, parent: str, p: Part) -> None:
        """p slides along its parent's z: its frame is the parent's moved along it."""
        P = self.parts[parent]
        b = float(P.R[:, 2] @ (p.origin - P.origin))
        assert np.allclose(P.origin + b * P.R[:, 2], p.origin) and np.allclose(P.R, p.R)
        self.parts[p.name] = p
        self.chains.append(Chain(p.name, (Link(JointType.PRISMATIC, b=clean(b), **p.fields()),),
                                 parent=parent))

    def ball(self, parent: str, p: Part, kind=JointType.SPHERICAL) -> None:
        xyz, rpy = self._placement(parent, p.R, p.origin)
        self.parts[p.name] = p
        self.chains.append(Chain(p.name, (Link(kind, xyz=xyz, rpy=rpy, **p.fields()),),
                                 parent=parent))

    def universal(self, parent: str, p: Part) -> None:
        self.ball(parent, p, JointType.UNIVERSAL)

    def hinge(self, name: str, a: str, b: str, point, axis) -> None:
        """A revolute loop joint: the point (world) of a and of b stay together, and
        the axis (world) of each stays on one line."""
        self.loops.append(Loop(name, "revolute", (a, b),
                               at=(self.parts[a].local(point), self.parts[b].local(point)),
                               axis=tuple(tuple(clean(v) for v in self.parts[n].R.T @ axis)
                                          for n in (a, b))))

    def loop(self, name: str, a: str, b: str, point) -> None:
        """A spherical loop joint: the point (world) of a and of b stay together."""
        self.loops.append(Loop(name, "spherical", (a, b),
                               at=(self.parts[a].local(point), self.parts[b].local(point))))

    def spring(self, name: str, a: str, pa, b: str, pb, k: float, c: float,
               force: float) -> None:
        """A spring-damper from point pa of a to pb of b (world), carrying `force` (N,
        compression) at the reference pose: its free length is L + force / k."""
        L = float(np.linalg.norm(np.subtract(pa, pb)))
        self.forces.append(SpringDamper(name, (a, b), (self.parts[a].local(pa),
                                                       self.parts[b].local(pb)),
                                        stiffness=k, damping=c,
                                        free_length=clean(L + force / k)))

    def tyre(self, name: str, wheel: str, k: float, c: float, radius: float) -> None:
        self.forces.append(Tyre(name, wheel, (0.0, 0.0, 0.0), stiffness=k, damping=c,
                                radius=radius))

    def mass(self) -> float:
        return sum(p.mass for p in self.parts.values())

    def com(self) -> np.ndarray:
        return sum(p.mass * p.com for p in self.parts.values()) / self.mass()


def axle_loads(total_mass: float, com_x: float, axles_x) -> list[float]:
    """The road's vertical force on each axle (N) of a vehicle at rest on two axles (or a
    rear tandem acting at its centre): force and moment balance."""
    (xf, xr) = axles_x
    W = total_mass * G
    front = W * (com_x - xr) / (xf - xr)
    return [front, W - front]



# ----------------------------------------------------------------------------------
# The car of Table 8.5 / Fig. 8.23
# ----------------------------------------------------------------------------------

#: Our car (reconstructed: the book gives no number). m, kg, N/m, N s/m.
CAR = dict(
    front_axle=1.10, rear_axle=-1.50,  # x of the axles from the chassis's mass centre
    track=1.50, wheel_radius=0.30, wheel_width=0.20, wheel_mass=15.0,
    chassis_mass=1100.0, chassis_size=(4.0, 1.7, 0.5), chassis_height=0.55,
    knuckle_mass=10.0, lower_arm_mass=5.0, damper_rod_mass=1.0, tie_rod_mass=1.0,
    upright_mass=10.0, a_arm_mass=6.0, link_mass=1.5, rack_mass=3.0, column_mass=2.0,
    pinion_radius=0.008, column_length=1.0,
    front_spring=30.0e3, front_damper=2.5e3, rear_spring=28.0e3, rear_damper=2.3e3,
    tyre_stiffness=2.0e5, tyre_damping=0.0, steering_stiffness=2.0e5, steering_damping=2.0e3,
)
#: The road: flat, then a bump 6 cm high over 0.4 m, 5 m ahead of the front wheels.
CAR_ROAD = ((-10.0, 0.0), (6.1, 0.0), (6.3, 0.06), (6.5, 0.0))
#: Of each corner's links, the share that a hand computation counts as unsprung (their
#: inner ends stay with the chassis, their outer ends move with the wheel).
LINK_SHARE = 0.5


def _car_layout(zw: dict[str, float], b: Builder) -> dict:
    """Lay the car out with the wheel centres at heights zw['front'], zw['rear'];
    returns, per corner (side, axle), the parts that move with its wheel: 'whole'
    (wheel and carrier) and 'links' (half-sprung)."""
    c = CAR
    xf, xr, zc = c["front_axle"], c["rear_axle"], c["chassis_height"]
    y_w = c["track"] / 2
    X, Y, Z = np.eye(3)
    b.free(part("chassis", (0.0, 0.0, zc), np.eye(3), c["chassis_mass"],
                inertia=box_inertia(c["chassis_mass"], *c["chassis_size"])))
    # steering: a rack sliding across the chassis, ahead of the front axle
    xs, zs = xf + 0.15, zw["front"]
    rack_R = frame_z(Y)
    rack = part("steering rack", (xs, 0.0, zs), rack_R, c["rack_mass"],
                inertia=rod_inertia(c["rack_mass"], (xs, -0.3, zs), (xs, 0.3, zs)))
    b.parts["steering rack"] = rack
    xyz, rpy = b._placement("chassis", rack_R, rack.origin)
    b.chains.append(Chain("steering rack", (Link(JointType.PRISMATIC, b=0.0, **rack.fields()),),
                          parent="chassis", base=Placement(xyz, rpy)))
    # the steering column, on the driver's (left) side, rising back to the steering
    # wheel; its pinion (pitch radius r) meshes with the rack: the pinion's centre is r
    # off the rack's line along n = y x d (d the column's axis), so that the pitch point
    # at centre - r n moves with the rack, at -r times the column's rate (d x n = y)
    d = unit([-0.9, 0.0, 0.65])
    r_p = c["pinion_radius"]
    centre = np.array([xs, 0.35, zs]) + r_p * unit(np.cross(Y, d))
    top = centre + c["column_length"] * d
    b.revolute("chassis", part("steering column", centre, frame_z(d), c["column_mass"],
                               0.5 * (centre + top),
                               rod_inertia(c["column_mass"], centre, top, 0.02)),
               actuated=True)
    b.loops.append(Loop("rack and pinion", "gear", ("steering column", "steering rack"),
                        ratio=-r_p))
    # the driver holds the steering wheel: the column's stiffness seen at the rack, a
    # spring-damper along the rack (without it the frictionless tyres let the front
    # wheels flop to full lock: steering lowers this car's front a little)
    b.spring("driver's hold", "chassis", (xs, -0.6, zs), "steering rack", (xs, 0.0, zs),
             c["steering_stiffness"], c["steering_damping"], 0.0)
    corners = {}
    for side, s in (("left", 1.0), ("right", -1.0)):
        # ---- front: McPherson strut ------------------------------------------------
        z = zw["front"]
        W = np.array([xf, s * y_w, z])
        top = np.array([xf - 0.03, s * 0.58, zc + 0.40])
        knuckle_o = np.array([xf, s * 0.65, z + 0.12])
        u = unit(knuckle_o - top)
        R_strut = frame_z(u)
        b.ball("chassis", part(f"{side} damper rod", top, R_strut, c["damper_rod_mass"],
                               top + 0.15 * u, rod_inertia(c["damper_rod_mass"], top,
                                                           top + 0.3 * u)))
        knuckle = part(f"{side} knuckle", knuckle_o, R_strut, c["knuckle_mass"],
                       [xf, s * 0.68, z + 0.02], box_inertia(c["knuckle_mass"], 0.15, 0.1, 0.3))
        b.prismatic(f"{side} damper rod", knuckle)
        ball = np.array([xf, s * 0.68, z - 0.12])
        pivot = np.array([xf, s * 0.30, z - 0.10])
        arm = part(f"{side} lower arm", pivot, frame_z(X, hint=(0, 0, 1)), c["lower_arm_mass"],
                   0.5 * (pivot + ball), rod_inertia(c["lower_arm_mass"], pivot, ball, 0.03))
        b.revolute("chassis", arm)
        b.loop(f"{side} lower ball joint", f"{side} lower arm", f"{side} knuckle", ball)
        steer_arm = np.array([xs, s * 0.66, z])
        inner = np.array([xs, s * 0.30, z])
        b.universal("steering rack", rod(f"{side} tie rod", inner, steer_arm, c["tie_rod_mass"]))
        b.loop(f"{side} tie rod end", f"{side} tie rod", f"{side} knuckle", steer_arm)
        wheel = part(f"{side} front wheel", W, frame_z(Y), c["wheel_mass"],
                     inertia=wheel_inertia(c["wheel_mass"], c["wheel_radius"], c["wheel_width"]))
        b.revolute(f"{side} knuckle", wheel)
        b.spring(f"{side} front strut", "chassis", W + [0, 0, 0.55], f"{side} knuckle",
                 W + [0, 0, 0.15], c["front_spring"], c["front_damper"], 0.0)
        b.tyre(f"{side} front tyre", f"{side} front wheel", c["tyre_stiffness"],
               c["tyre_damping"], c["wheel_radius"])
        corners[side, "front"] = dict(whole=[wheel.name, knuckle.name],
                                      links=[arm.name, f"{side} tie rod"])
        # ---- rear: five-point (a lower A-arm, two points; three links) -------------
        z = zw["rear"]
        W = np.array([xr, s * y_w, z])
        pivot = np.array([xr, s * 0.30, z - 0.10])
        ball = np.array([xr, s * 0.68, z - 0.13])
        a_arm = part(f"{side} rear A-arm", pivot, frame_z(X, hint=(0, 0, 1)), c["a_arm_mass"],
                     0.5 * (pivot + ball), rod_inertia(c["a_arm_mass"], pivot, ball, 0.05))
        b.revolute("chassis", a_arm)
        upright = part(f"{side} upright", ball, np.eye(3), c["upright_mass"],
                       [xr, s * 0.68, z + 0.05], box_inertia(c["upright_mass"], 0.2, 0.1, 0.3))
        b.ball(a_arm.name, upright)
        links = []
        for name, inner, outer in (
                ("upper link", [xr, s * 0.38, z + 0.20], [xr, s * 0.66, z + 0.20]),
                ("trailing link", [xr + 0.40, s * 0.64, z], [xr + 0.05, s * 0.66, z]),
                ("toe link", [xr - 0.25, s * 0.35, z - 0.05], [xr - 0.22, s * 0.66, z - 0.05])):
            b.universal("chassis", rod(f"{side} rear {name}", inner, outer, c["link_mass"]))
            b.loop(f"{side} rear {name} end", f"{side} rear {name}", upright.name, outer)
            links.append(f"{side} rear {name}")
        wheel = part(f"{side} rear wheel", W, frame_z(Y), c["wheel_mass"],
                     inertia=wheel_inertia(c["wheel_mass"], c["wheel_radius"], c["wheel_width"]))
        b.revolute(upright.name, wheel)
        b.spring(f"{side} rear spring", "chassis", W + [0, 0, 0.55], upright.name,
                 W + [0, 0, 0.15], c["rear_spring"], c["rear_damper"], 0.0)
        b.tyre(f"{side} rear tyre", wheel.name, c["tyre_stiffness"], c["tyre_damping"],
               c["wheel_radius"])
        corners[side, "rear"] = dict(whole=[wheel.name, upright.name], links=[a_arm.name, *links])
    return corners


def corner_loads(masses: dict[str, float], com_x: float, corners: dict, axles: dict,
                 share: float = LINK_SHARE) -> dict:
    """The hand computation of the static pose: per corner, the tyre's force (axle loads
    by moment balance about the mass centre, halved: left and right mirror each other)
    and the spring's (the tyre's less the weight of what moves with the wheel: wheel and
    carrier whole, the links' `share`; the spring sits vertically above the wheel centre,
    on the carrier, so it moves as the wheel does)."""
    total = sum(masses.values())
    front, rear = axle_loads(total, com_x, (axles["front"], axles["rear"]))
    out = {}
    for (side, axle), parts in corners.items():
        tyre = 0.5 * (front if axle == "front" else rear)
        unsprung = sum(masses[n] for n in parts["whole"]) + share * sum(
            masses[n] for n in parts["links"])
        out[side, axle] = dict(tyre=tyre, spring=tyre - unsprung * G)
    return out


def car(name: str = "Car (Jalon and Bayo Table 8.5, Fig. 8.23)",
        description: str = "") -> Mechanism:
    c = CAR
    r, kt = c["wheel_radius"], c["tyre_stiffness"]
    # the loads depend on the x of the masses only: lay out once, compute, lay out again
    first = Builder()
    corners = _car_layout({"front": r, "rear": r}, first)
    loads = corner_loads({n: p.mass for n, p in first.parts.items()}, first.com()[0], corners,
                         {"front": c["front_axle"], "rear": c["rear_axle"]})
    zw = {axle: clean(r - loads["left", axle]["tyre"] / kt) for axle in ("front", "rear")}
    b = Builder()
    corners = _car_layout(zw, b)
    # preload each spring with its corner's share, so that the reference pose is the
    # static one
    forces = []
    for f in b.forces:
        if isinstance(f, SpringDamper) and f.name != "driver's hold":
            side, axle = f.name.split()[0], f.name.split()[1]
            L = f.free_length
            f = SpringDamper(f.name, f.links, f.at, f.stiffness, f.damping,
                             clean(L + loads[side, axle]["spring"] / f.stiffness))
        forces.append(f)
    held = ["chassis", "steering column", "left lower arm", "right lower arm", "left rear A-arm",
            "right rear A-arm", "left front wheel", "right front wheel", "left rear wheel",
            "right rear wheel"]
    return Mechanism(name, chains=tuple(b.chains), loops=tuple(b.loops),
                     description=description, forces=tuple(forces), road=Road(CAR_ROAD),
                     assembly=Assembly(independent=tuple(held), tolerance=1e-10))


CAR_DESCRIPTION = """\
The car of Garcia de Jalon and Bayo, "Kinematic and Dynamic Simulation of Multibody \
Systems", Sec 8.4.3, Fig. 8.23 and Table 8.5 (seed 002): "the chassis, the steering and \
the suspension system", a McPherson front and a rear "based on the five-point system", \
"25 rigid bodies with general mass and inertia properties and 15 degrees of freedom". \
The book gives that and a figure, no number: everything here is ours (reconstructed), \
a mid-size car. Bodies (25, as in the book): the chassis on a free joint; \
a steering rack sliding across it and a steering column turning on it, whose pinion \
drives the rack (a gear loop: the rack moves by the pinion's pitch radius times the \
column's turn); per side a McPherson strut (the damper rod on a \
spherical top mount, the knuckle sliding along it, a lower arm turning about the \
chassis's x axis and closed to the knuckle by a spherical ball joint, a tie rod from the \
rack on a universal joint closed to the knuckle's steering arm by a spherical joint, \
the wheel turning on the knuckle) and a rear five-point suspension (a lower A-arm \
turning about x, two chassis points, carrying the upright on a spherical joint; three \
links, upper, trailing and toe, on universal joints at the chassis, closed to the \
upright by spherical joints; the wheel turning on the upright). Degrees of freedom: 6 \
(chassis) + 1 (steering) + 4 (suspensions) + 4 (wheel spins) = 15, as in the book; \
joints: 1 free, 9 revolute, 3 prismatic, 4 spherical and 8 universal in the tree, 10 \
spherical loop joints and 1 gear loop (the column and the rack: two joint rates, one \
steering freedom). Which body is the 25th is our reading: every body but the chassis \
and the steering is one of a left-right pair (a McPherson front and a five-point rear, \
both one per side, as the book says), so an odd 25 needs one more body on the car's \
middle; the book names the chassis, the steering and the suspensions, and the steering \
of a car with a rack is a column and the rack. The column's own numbers are ours too: a \
2 kg rod 1.0 m long rising back from the rack to the driver, on the left, its \
steering wheel left out; a pinion of 8 mm pitch radius. Numbers (m, kg, N/m, N s/m): front axle 1.10 m ahead of the chassis's \
mass centre, rear axle 1.50 m behind, track 1.50 m, wheel radius 0.30 m; chassis \
1100 kg, a uniform 4.0 x 1.7 x 0.5 m box, its mass centre 0.55 m above the road at the \
reference pose; wheels 15 kg (discs 0.30 m x 0.20 m), knuckles and uprights 10 kg, \
lower arms 5 kg, A-arms 6 kg, links 1.5 kg, tie and damper rods 1 kg, rack 3 kg, \
column 2 kg (1240 kg in all); each suspension's spring and damper is a vertical spring-damper from the \
chassis to the knuckle or upright, 0.15 m above the wheel centre (so it moves as the \
wheel does), front 30 kN/m and 2.5 kN s/m, rear 28 kN/m and 2.3 kN s/m; the driver \
holds the steering: a spring-damper of 200 kN/m and 2 kN s/m along the rack; tyres \
200 kN/m, undamped, radius 0.30 m, vertical only (no friction: the car coasts and \
slides freely sideways). The springs' free lengths make the reference pose the static \
one of a hand computation (the axle loads by moment balance, each spring its tyre's \
load less its wheel, carrier and half its links; tests/test_vehicles.py checks the \
settled car against it). Road: flat, with a bump 6 cm high over 0.4 m (x = 6.1 to \
6.5 m), 5 m ahead of the front wheels. The steering column is the actuated joint: inverse dynamics (armdyn car_jalon --inverse 2) turns it along the cycloid, gives its torque, and the car (chassis, suspensions, wheels) moves as it follows. examples/build_vehicles.py writes this file."""


# ----------------------------------------------------------------------------------
# The heavy truck of Sec 8.4.2 / Fig. 8.20
# ----------------------------------------------------------------------------------

#: Our truck (reconstructed: the book gives no number). m, kg, N/m, N s/m.
TRUCK = dict(
    front_axle=2.0, rear_axle=-2.5, track=2.0, wheel_radius=0.5, wheel_width=0.3,
    rail_half_width=0.45, chassis_mass=8000.0, chassis_size=(7.5, 1.0, 1.0),
    chassis_height=1.1, cab_mass=800.0, cab_size=(2.0, 2.2, 2.0),
    axle_masses={"front": 600.0, "rear": 900.0}, wheel_mass=80.0, knuckle_mass=40.0,
    half_leaf_mass=30.0, shackle_mass=3.0, bar_half_mass=10.0, droplink_mass=2.0,
    pitman_mass=3.0, drag_link_mass=5.0, track_rod_mass=8.0,
    leaf_stiffness=3.0e5, leaf_damping=1.2e4, bar_stiffness=2.0e5, bar_damping=2.0e3,
    cab_stiffness=1.5e5, cab_damping=6.0e3, tyre_stiffness=1.0e6, tyre_damping=0.0,
)
#: The road: flat, then a bump 8 cm high over 0.6 m, 5 m ahead of the front wheels.
TRUCK_ROAD = ((-10.0, 0.0), (7.0, 0.0), (7.3, 0.08), (7.6, 0.0))


def _leaf(b: Builder, c: dict, axle: str, side: str, y: float, xa: float, seat: float,
          ax: Part, joints: str) -> list[str]:
    """One leaf spring of an axle (three bodies, five joints; `truck_parts` says which
    kinds each `joints` reading gives them); returns the names of its bodies."""
    X, Y, Z = np.eye(3)
    front_hanger = np.array([xa + 0.7, y, seat + 0.10])
    seat_point = np.array([xa, y, seat])
    shackle_low = np.array([xa - 0.70, y, seat + 0.08])
    rear_hanger = np.array([xa - 0.75, y, seat + 0.23])
    Ry = frame_z(Y)
    fh = part(f"{side} {axle} front half-leaf", front_hanger, Ry, c["half_leaf_mass"],
              0.5 * (front_hanger + seat_point),
              rod_inertia(c["half_leaf_mass"], front_hanger, seat_point, 0.04))
    sh = part(f"{side} {axle} shackle", rear_hanger, Ry, c["shackle_mass"],
              0.5 * (rear_hanger + shackle_low),
              rod_inertia(c["shackle_mass"], rear_hanger, shackle_low))
    rh = part(f"{side} {axle} rear half-leaf", shackle_low, Ry, c["half_leaf_mass"],
              0.5 * (shackle_low + seat_point),
              rod_inertia(c["half_leaf_mass"], shackle_low, seat_point, 0.04))
    if joints == "ours":
        # universal joints (about y, then about the turned vertical) let the leaves
        # swing sideways a little: on the right at the hanger and the shackle, so that
        # the rolling axle's seats can come nearer (planar leaves would fix their
        # distance across and lock the roll at second order: a singular pose); on the
        # left at the shackle only (the left front half-leaf places the axle across; a
        # planar left leaf would make a loop row identically zero)
        sh.R = frame_z(Y, hint=Z)
        b.universal("chassis", sh)
        if side == "left":
            b.revolute("chassis", fh)
        else:
            fh.R = frame_z(Y, hint=Z)
            b.universal("chassis", fh)
        b.revolute(sh.name, rh)
        if side == "left":
            # the axle on the left front half-leaf on a universal joint: it turns about
            # x (the leaf twists as the axle rolls), then about the turned vertical (the
            # leaves of the two sides move apart along x): its frame at the seat, z
            # along x, x up
            ax.origin, ax.R = seat_point.copy(), frame_z(X, hint=(0.0, 0.0, 1.0))
            b.universal(fh.name, ax)
        else:
            b.loop(f"{side} {axle} front seat", fh.name, ax.name, seat_point)
        # the rear half-leaf meets the front one at the seat (on the right, the axle is
        # closed to the front half only: a second closure to the axle there would
        # repeat the lateral row of the first)
        b.loop(f"{side} {axle} rear seat", rh.name, ax.name if side == "left" else fh.name,
               seat_point)
    elif side == "left" or joints == "literal":
        # planar: its three joints on the frame turn about y, the axle held at the seat
        # by two ball joints at one point (the axle on the left one: its frame there,
        # turned as the leaf's)
        b.revolute("chassis", sh)
        b.revolute("chassis", fh)
        b.revolute(sh.name, rh)
        if side == "left":
            ax.origin, ax.R = seat_point.copy(), Ry
            b.ball(fh.name, ax)
        else:
            b.loop(f"{side} {axle} front seat", fh.name, ax.name, seat_point)
        b.loop(f"{side} {axle} rear seat", rh.name, ax.name, seat_point)
    else:
        # "book", the right leaf swings sideways: its front half-leaf on a ball joint at
        # the hanger, the axle hinged on it about y, the rear half-leaf hinged on the
        # axle about x (the leaf twists as the axle rolls) and on a ball joint at the
        # shackle, which turns about y (examples/truck_joint_kinds.py)
        b.revolute("chassis", sh)
        b.ball("chassis", fh)
        b.ball(sh.name, rh)
        b.hinge(f"{side} {axle} front seat", fh.name, ax.name, seat_point, Y)
        b.hinge(f"{side} {axle} rear seat", rh.name, ax.name, seat_point, X)
    # the leaf's stiffness: a vertical spring-damper from the frame to the seat
    b.spring(f"{side} {axle} leaf spring", "chassis", (xa, y, seat + 0.6), ax.name,
             (xa, y, seat), c["leaf_stiffness"], c["leaf_damping"], 0.0)
    return [fh.name, rh.name, sh.name]


def _truck_layout(za: dict[str, float], b: Builder, joints: str = "book") -> dict:
    """Lay the truck out with the axles' centres at heights za['front'], za['rear'];
    returns, per axle, the parts that move with it (for the hand loads). With
    `joints`: the leaves' joint kinds (`truck_parts`)."""
    c = TRUCK
    X, Y, Z = np.eye(3)
    zc, yr = c["chassis_height"], c["rail_half_width"]
    b.free(part("chassis", (0.0, 0.0, zc), np.eye(3), c["chassis_mass"],
                inertia=box_inertia(c["chassis_mass"], *c["chassis_size"])))
    # the cab on a spherical joint at its front mount, sprung at the rear
    cab_front = np.array([3.2, 0.0, zc + 0.5])
    cab_com = np.array([2.8, 0.0, zc + 1.2])
    b.ball("chassis", part("cab", cab_front, np.eye(3), c["cab_mass"], cab_com,
                           box_inertia(c["cab_mass"], *c["cab_size"])))
    for side, s in (("left", 1.0), ("right", -1.0)):
        mount = np.array([1.7, s * 0.8, zc + 0.5])
        b.spring(f"{side} cab mount", "chassis", mount, "cab", mount + [0, 0, 0.3],
                 c["cab_stiffness"], c["cab_damping"], 0.0)
    # and a lateral one (the spherical mount lets the cab yaw)
    b.spring("cab lateral mount", "chassis", (1.7, -0.8, zc + 0.8), "cab", (1.7, 0.0, zc + 0.8),
             c["cab_stiffness"], c["cab_damping"], 0.0)
    axles = {}
    for axle in ("front", "rear"):
        xa, z = c[f"{axle}_axle"], za[axle]
        seat = z + 0.12  # the leaves' seats on top of the axle
        ax = part(f"{axle} axle", (xa, 0.0, z), np.eye(3), c["axle_masses"][axle],
                  inertia=rod_inertia(c["axle_masses"][axle], (xa, -1.0, z), (xa, 1.0, z), 0.08))
        moving = [ax.name]
        # the leaf springs: per side a front half-leaf from the front hanger to the seat
        # on the axle, a rear half-leaf from the seat to a shackle, the shackle up to the
        # rear hanger (`_leaf`)
        for side, s in (("left", 1.0), ("right", -1.0)):
            moving += _leaf(b, c, axle, side, s * yr, xa, seat, ax, joints)
        # the stabiliser bar: a tube across the frame in two halves turning about y (the
        # right half on the left one: their relative turn is the tube's twist, held by a
        # spring between two levers), an arm from each half to a drop link, the drop
        # links on universal joints closed to the axle by spherical joints
        xb, zb = xa + 0.5, seat + 0.25
        left_bar = part(f"{axle} stabiliser left half", (xb, 0.0, zb), frame_z(Y),
                        c["bar_half_mass"], (xb - 0.15, 0.3, zb),
                        box_inertia(c["bar_half_mass"], 0.3, 0.8, 0.05))
        b.revolute("chassis", left_bar)
        right_bar = part(f"{axle} stabiliser right half", (xb, 0.0, zb), frame_z(Y),
                         c["bar_half_mass"], (xb - 0.15, -0.3, zb),
                         box_inertia(c["bar_half_mass"], 0.3, 0.8, 0.05))
        b.revolute(left_bar.name, right_bar)
        b.spring(f"{axle} stabiliser twist", left_bar.name, (xb, 0.0, zb + 0.1), right_bar.name,
                 (xb + 0.15, 0.0, zb + 0.1), c["bar_stiffness"], c["bar_damping"], 0.0)
        for side, s, bar in (("left", 1.0, left_bar), ("right", -1.0, right_bar)):
            top = np.array([xb - 0.4, s * 0.6, zb])
            low = np.array([xb - 0.4, s * 0.6, z + 0.05])
            b.universal(bar.name, rod(f"{side} {axle} drop link", top, low, c["droplink_mass"],
                                      hint=(1.0, 0.0, 0.0)))
            b.loop(f"{side} {axle} drop link end", f"{side} {axle} drop link", ax.name, low)
        moving += [left_bar.name, right_bar.name, f"left {axle} drop link",
                   f"right {axle} drop link"]
        axles[axle] = moving
    # the front axle's ends: knuckles on king pins (vertical), the wheels on them
    xf, zf = c["front_axle"], za["front"]
    xr, zr = c["rear_axle"], za["rear"]
    yk, yw = c["track"] / 2 - 0.15, c["track"] / 2
    for side, s in (("left", 1.0), ("right", -1.0)):
        kn = part(f"{side} knuckle", (xf, s * yk, zf), frame_z(Z), c["knuckle_mass"],
                  inertia=box_inertia(c["knuckle_mass"], 0.3, 0.3, 0.4))
        b.revolute("front axle", kn)
        wheel = part(f"{side} front wheel", (xf, s * yw, zf), frame_z(Y), c["wheel_mass"],
                     inertia=wheel_inertia(c["wheel_mass"], c["wheel_radius"], c["wheel_width"]))
        b.revolute(kn.name, wheel)
        b.tyre(f"{side} front tyre", wheel.name, c["tyre_stiffness"], c["tyre_damping"],
               c["wheel_radius"])
        wheel = part(f"{side} rear wheel", (xr, s * yw, zr), frame_z(Y), c["wheel_mass"],
                     inertia=wheel_inertia(c["wheel_mass"], c["wheel_radius"], c["wheel_width"]))
        b.revolute("rear axle", wheel)
        b.tyre(f"{side} rear tyre", wheel.name, c["tyre_stiffness"], c["tyre_damping"],
               c["wheel_radius"])
        axles["front"] += [f"{side} knuckle", f"{side} front wheel"]
        axles["rear"] += [f"{side} rear wheel"]
    # steering: the track rod joins the knuckles' rear arms (a universal joint on the
    # left, spherical on the right); a pitman arm turning about y on the frame pushes a
    # drag link (a universal joint on the arm), closed to the left knuckle's arm
    left_arm, right_arm = np.array([xf - 0.25, yk - 0.1, zf]), np.array([xf - 0.25, -yk + 0.1, zf])
    b.universal("left knuckle", rod("track rod", left_arm, right_arm, c["track_rod_mass"]))
    b.loop("track rod end", "track rod", "right knuckle", right_arm)
    pivot = np.array([xf + 0.4, yk - 0.2, zf + 0.45])
    arm_end = np.array([xf + 0.4, yk - 0.2, zf + 0.15])
    b.revolute("chassis", part("pitman arm", pivot, frame_z(Y), c["pitman_mass"],
                               0.5 * (pivot + arm_end),
                               rod_inertia(c["pitman_mass"], pivot, arm_end)),
               actuated=True)
    steer_arm = np.array([xf + 0.05, yk - 0.2, zf + 0.15])
    b.universal("pitman arm", rod("drag link", arm_end, steer_arm, c["drag_link_mass"]))
    b.loop("drag link end", "drag link", "left knuckle", steer_arm)
    axles["front"] += ["track rod", "drag link"]
    return axles


def truck(name: str = "Heavy truck (Jalon and Bayo Sec 8.4.2, Fig. 8.20)",
          description: str = "", joints: str = "book") -> Mechanism:
    """The truck, its leaves' joints as `joints` says (`truck_parts`; "literal" is
    refused by the core as singular)."""
    chains, loops, forces, held = truck_parts(joints)
    return Mechanism(name, chains=chains, loops=loops, description=description,
                     forces=forces, road=Road(TRUCK_ROAD),
                     assembly=Assembly(independent=held, tolerance=1e-10))


def truck_parts(joints: str = "book") -> tuple[tuple, tuple, tuple, tuple]:
    """The truck's chains, loops, force elements and the joints its assembly holds.

    `joints` sorts the leaves' joints (docs/floating-bases.md, "The truck's joint
    kinds"): "ours" (the file's: 17R + 13S + 14U + 1G, no constraint row depending on
    others); "book" (the book's 23R + 15S + 6U + 1G: each axle's left leaf planar, its
    seat on two ball joints at one point, its right leaf swinging on ball joints with
    the axle hinged on it: 18 degrees of freedom with four rows that depend on others on
    the loops; it rolls and steers, but a run over the bump stops at 0.5 s, its
    dependent rows taken as a singular configuration); "literal" (the book's kinds,
    every leaf planar, as leaf springs are drawn: the axles cannot roll but at second
    order, and the closed pose is singular: the core refuses it)."""
    c = TRUCK
    r, kt = c["wheel_radius"], c["tyre_stiffness"]
    first = Builder()
    axles = _truck_layout({"front": r, "rear": r}, first, joints)
    masses = {n: p.mass for n, p in first.parts.items()}
    sprung = {n: m for n, m in masses.items()}
    front, rear = axle_loads(sum(masses.values()), first.com()[0],
                             (c["front_axle"], c["rear_axle"]))
    load = {"front": front, "rear": rear}
    za = {axle: clean(r - load[axle] / 2 / kt) for axle in ("front", "rear")}
    b = Builder()
    axles = _truck_layout(za, b, joints)
    # preloads: each leaf spring carries half its axle's load less half the weight of
    # what moves with the axle (the leaves, bar and links counted whole: a hand value);
    # the cab's rear springs carry its weight's moment about the front mount
    cab = b.parts["cab"]
    for n in axles["front"] + axles["rear"]:
        sprung.pop(n, None)
    forces = []
    for f in b.forces:
        if isinstance(f, SpringDamper) and f.name.endswith("leaf spring"):
            axle = f.name.split()[1]
            unsprung = sum(masses[n] for n in axles[axle]) * G
            f = replace_force(f, (load[axle] - unsprung) / 2)
        elif isinstance(f, SpringDamper) and f.name.endswith("cab mount"):
            front_mount = b.chains[1].links[0].xyz[0]  # the cab's pivot, chassis frame
            f = replace_force(f, 0.5 * cab.mass * G * (front_mount - cab.com[0])
                              / (front_mount - 1.7))
        forces.append(f)
    del cab
    right = {"ours": "rear half-leaf", "book": "shackle",  # literal: its axles do not roll
             "literal": "stabiliser left half"}[joints]
    held = ["chassis", "cab", "left front front half-leaf", f"right front {right}",
            "left rear front half-leaf", f"right rear {right}", "pitman arm",
            "left front wheel", "right front wheel", "left rear wheel", "right rear wheel"]
    held = [n.replace("right front stabiliser", "front stabiliser")
            .replace("right rear stabiliser", "rear stabiliser") for n in held]
    return tuple(b.chains), tuple(b.loops), tuple(forces), tuple(held)


def replace_force(f: SpringDamper, force: float) -> SpringDamper:
    """The spring-damper f carrying `force` (N, compression) at its present free length's
    reference length: free length = reference length + force / k."""
    return SpringDamper(f.name, f.links, f.at, f.stiffness, f.damping,
                        clean(f.free_length + force / f.stiffness))


TRUCK_DESCRIPTION = """\
The heavy truck of Garcia de Jalon and Bayo, "Kinematic and Dynamic Simulation of \
Multibody Systems", Sec 8.4.2, Fig. 8.20 and Table 8.4 (seed 002): "the chassis, the \
front axle, the rear axle, the leaf-springs modeled by four articulated rigid bodies, \
the front and rear stabilization bars, the elements of the steering system, and the \
wheels"; "33 (21 + 12)" rigid bodies, joints "23R + 15S + 6U + 1G", 18 degrees of \
freedom (39 open-loop ones in the book's formulation A). The book gives that and a \
figure, no number: the layout and every number here are ours (reconstructed), a \
two-axle truck. Bodies (33, as in the book): the chassis on a free joint (the book's \
G, its generalized joint of a floating base); the cab on a spherical joint at its \
front mount, sprung at the rear; two rigid axles; per leaf spring (four: 12 bodies, \
the book's "+ 12") a front half-leaf from the front hanger to the seat on the axle, a \
rear half-leaf from the seat to a shackle and the shackle up to the rear hanger; per \
axle a stabiliser bar in two halves (a tube across the frame, the right half turning \
on the left one, its twist held by a spring) and two drop links down to the axle; the \
steering (a pitman arm on the frame, a drag link to the left knuckle, a track rod \
between the knuckles); two knuckles on king pins; four wheels. Joints (45, the book's \
23R + 15S + 6U + 1G): revolute: the 4 wheels, 2 king pins, the pitman arm, the 4 bar \
halves and 12 leaf joints; spherical: the cab's mount, 8 leaf joints and one end of \
each of the 6 rods (drop links, drag link, track rod: at the axle or a knuckle); \
universal: the rods' other ends; 12 of them loops. Each axle's left leaf is planar (its three joints on the \
frame turn about y) and holds the axle at its seat by two spherical joints at one \
point; its right leaf swings sideways so that the rolling axle's seats can come \
nearer: the front half-leaf on a spherical joint at its hanger, the axle hinged on it \
about y, the rear half-leaf hinged on the axle about x (the leaf twists as the axle \
rolls) and on a spherical joint at the shackle, which turns about y. Degrees of \
freedom 18, as in the book: 6 (chassis) + 3 (cab) + 2 + 2 (each axle's bounce and \
roll) + 1 (steering) + 4 (wheels). By Gruebler's count those joints give 14: four of \
the 44 loop constraint rows depend on others on the loops (rank 40), as the book's \
count implies; ArmDyn takes the freedoms from the rank. examples/truck_joint_kinds.py \
screens the leaf arrangements these joints allow and finds this one; read literally, \
every leaf planar, the same joints lock the axles' roll (a singular pose the core \
refuses). Numbers (m, kg, N/m, N s/m): axles 2.0 m ahead of and \
2.5 m behind the chassis's mass centre, track 2.0 m, wheels 0.5 m radius 80 kg; \
chassis with its load 8000 kg (a uniform 7.5 x 1.0 x 1.0 m box, mass centre 1.1 m up \
at the reference pose), cab 800 kg (2.0 x 2.2 x 2.0 m box), front axle 600 kg, rear 900 \
kg, knuckles 40 kg, half-leaves 30 kg, shackles 3 kg, bar halves 10 kg, drop links 2 \
kg, pitman arm 3 kg, drag link 5 kg, track rod 8 kg (11,016 kg in all); the leaves' \
stiffness is a vertical spring-damper from the frame to each seat, 300 kN/m and 12 \
kN s/m, preloaded so that the reference pose is near the static one (each carries half \
its axle's load, by moment balance, less half the weight of what moves with the \
axle); the bars' twist 200 kN/m at 0.1 m levers; the cab's rear mounts 150 kN/m and 6 \
kN s/m each (preloaded with the cab's weight moment about its front mount) and a \
lateral one; tyres 1 MN/m, undamped, radius 0.5 m, vertical only. Road: flat, with a \
bump 8 cm high over 0.6 m (x = 7.0 to 7.6 m), 5 m ahead of the front wheels. The \
pitman arm is the actuated joint: inverse dynamics (armdyn truck_jalon --inverse 2) \
turns it along the cycloid, gives its torque, and the truck moves as it follows. \
examples/build_vehicles.py writes this file."""


def write(mech: Mechanism, filename: str, check: bool = False) -> bool:
    """Save `mech` as robots/`filename` (the description wrapped), or with check=True
    say whether the file already holds it."""
    from build_floating_models import write as write_wrapped
    if check:
        from armdyn.core import load_mechanism
        from armdyn.core.io.mechanism_file import mechanism_to_toml
        return mechanism_to_toml(load_mechanism(ROBOTS / filename)) == mechanism_to_toml(mech)
    write_wrapped(mech, filename)
    return True


def main() -> int:
    check = "--check" in sys.argv
    ok = write(car(description=CAR_DESCRIPTION), "car_jalon.toml", check)
    ok = write(truck(description=TRUCK_DESCRIPTION), "truck_jalon.toml", check) and ok
    if check:
        print("robots/ matches" if ok else "robots/ differs from this script")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
