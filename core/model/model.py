"""The compiled model: the one type every algorithm takes.

Users describe a robot as a serial arm (`core.model.robot.Robot`, the DH and inertia
tables of a robot file) or as chains and loops (`core.model.mechanism.Mechanism`: trees,
closed chains, parallel robots). Each description compiles, when it is built, into a
`Model` (as MuJoCo compiles a spec into its mjModel, and Pinocchio's algorithms take one
`Model`): a serial arm is one chain on the base with no loops. A Model always has
every attribute an algorithm reads: the sizes, the joint table, which joints are
actuated and independent, the loops (none for a tree), the mobility, the closed home
pose and the kernels' buffers. It is immutable; per-call state lives in the kernels'
workspaces (`core.kernels.data`).

`core.model.compile.compile_model` builds one: it packs the kernel layout (`pack`,
`core.kernels.layout`) and, when there are loops, closes them (`core.model.closure`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..kernels.joints import (JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL,
                              JOINT_UNIVERSAL)
from ..kernels.charts import retracted
from ..kernels.elements import ELEMENT_SPRING_DAMPER, ELEMENT_TYRE
from ..kernels.layout import (LOOP_GEAR, LOOP_PRISMATIC, LOOP_REVOLUTE, LOOP_SPHERICAL,
                              KernelModel, pack_model)
from .parts import Chain, ForceElement, JointType, Link, Loop, LoopJointType, Road, Tyre

#: The kernels' code of each joint type (`core.kernels.joints`).
JOINT_CODES = {JointType.REVOLUTE: JOINT_REVOLUTE, JointType.PRISMATIC: JOINT_PRISMATIC,
               JointType.SPHERICAL: JOINT_SPHERICAL, JointType.UNIVERSAL: JOINT_UNIVERSAL,
               JointType.FREE: JOINT_FREE}
#: The kernels' code of each loop-joint type (`core.kernels.layout`).
LOOP_CODES = {LoopJointType.REVOLUTE: LOOP_REVOLUTE, LoopJointType.SPHERICAL: LOOP_SPHERICAL,
              LoopJointType.PRISMATIC: LOOP_PRISMATIC, LoopJointType.GEAR: LOOP_GEAR}


@dataclass(frozen=True, eq=False)
class Model:
    """A compiled model (module docstring). Get it from a description (`robot.model`,
    `mechanism.model`) or build it with `core.model.compile.compile_model`.

    name        : display name
    chains      : the serial chains of DH rows, in joint order (a serial arm: one chain,
                  "arm"); their joint values are the closed home pose
    loops       : loop-closure joints (() for a tree or a serial arm)
    gravity     : (3,) m/s^2, base frame
    joint_names : one name per joint, in joint order
    parent      : (n,) parent joint of each joint, -1 for a chain on the base
    actuated    : joints a motor drives (inverse dynamics gives forces there)
    independent : joints held by assembly, the minimal coordinates (every joint of a tree)
    dof         : mobility: n minus the rank of the loop Jacobian at the home pose
    tolerance   : closure tolerance of assembly, m and rad
    kernel      : the kernels' buffers (core.kernels.layout.KernelModel)
    warnings    : what compiling found worth saying (loops moved to close, ...)
    forces      : force elements (springs, dampers, tyres; `core.model.parts`), which a
                  run's right-hand side adds (`core.kernels.elements`)
    road        : the road under the tyres (None: the plane z = 0)
    """

    name: str
    chains: tuple[Chain, ...]
    loops: tuple[Loop, ...]
    gravity: tuple[float, float, float]
    joint_names: tuple[str, ...]
    parent: tuple[int, ...]
    actuated: tuple[int, ...]
    independent: tuple[int, ...]
    dof: int
    tolerance: float
    kernel: KernelModel = field(repr=False)
    warnings: tuple[str, ...] = ()
    forces: tuple[ForceElement, ...] = ()
    road: Road | None = None

    @property
    def model(self) -> "Model":
        """The model itself (a description's `.model` is its compiled Model)."""
        return self

    # ----- sizes ----------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of joints (= moving links)."""
        return self.kernel.n

    @property
    def nq(self) -> int:
        """Length of a configuration q."""
        return self.kernel.nq

    @property
    def nv(self) -> int:
        """Length of a rate vector qd (and of qdd, tau)."""
        return self.kernel.nv

    # ----- the joint table ------------------------------------------------------------
    @property
    def links(self) -> tuple[Link, ...]:
        """Every link (DH row) in joint order."""
        return tuple(link for chain in self.chains for link in chain.links)

    @property
    def link_names(self) -> list[str]:
        return list(self.joint_names)

    @property
    def joint_types(self) -> tuple[JointType, ...]:
        return tuple(link.joint for link in self.links)

    @property
    def is_revolute(self) -> np.ndarray:
        """Boolean mask of revolute joints, shape (n,)."""
        return np.array([t is JointType.REVOLUTE for t in self.joint_types], dtype=bool)

    @property
    def rate_joint(self) -> np.ndarray:
        """The joint (0-based) of each rate, shape (nv,)."""
        return np.repeat(np.arange(self.n), [t.nv for t in self.joint_types])

    @property
    def value_is_angle(self) -> np.ndarray:
        """Whether each entry of q is an angle that may wrap by 2 pi (a revolute joint's,
        a universal joint's two), shape (nq,)."""
        out = []
        for t in self.joint_types:
            out += [t in (JointType.REVOLUTE, JointType.UNIVERSAL)] * t.nq
        return np.array(out, dtype=bool)

    @property
    def value_joint(self) -> np.ndarray:
        """The joint (0-based) of each entry of q, shape (nq,)."""
        return np.repeat(np.arange(self.n), [t.nq for t in self.joint_types])

    def moved_by(self, q, dx) -> np.ndarray:
        """q (+) dx: the joint values q (nq,) moved by the rates-sized step dx (nv,),
        quaternions turned by exp(dx) in the body frame (`core.kernels.charts.retract`);
        q + dx when nq == nv."""
        if self.nq == self.nv:
            return q + dx
        out = np.array(q, dtype=float)
        retracted(self.kernel.F, self.kernel.I, out, np.ascontiguousarray(dx, dtype=float),
                  1.0)
        return out

    def rates_of(self, joints) -> list[int]:
        """The rate indices (into qd, qdd, tau) of the given joints, in their order."""
        iv = self.kernel.views.iv
        return [int(iv[j]) + c for j in joints for c in range(self.joint_types[j].nv)]

    def values_of(self, joints) -> list[int]:
        """The indices into q of the given joints' values, in their order."""
        iq = self.kernel.views.iq
        return [int(iq[j]) + c for j in joints for c in range(self.joint_types[j].nq)]

    @property
    def rate_is_angular(self) -> np.ndarray:
        """Whether each rate turns (rad/s) rather than slides (m/s), shape (nv,): a
        revolute joint's, a spherical or universal joint's, a free joint's first three."""
        out = []
        for t in self.joint_types:
            out += {"revolute": [True], "prismatic": [False],
                    "free": [True] * 3 + [False] * 3}.get(t.value, [True] * t.nv)
        return np.array(out, dtype=bool)

    def q_slice(self, name: str) -> slice:
        """The entries of q that belong to the joint called `name` (KeyError if none)."""
        k = self.joint_index(name)
        start = int(self.kernel.views.iq[k])
        return slice(start, start + self.joint_types[k].nq)

    def v_slice(self, name: str) -> slice:
        """The entries of a rate vector (qd, qdd, tau) that belong to the joint `name`."""
        k = self.joint_index(name)
        start = int(self.kernel.views.iv[k])
        return slice(start, start + self.joint_types[k].nv)

    def joint_index(self, name: str) -> int:
        """0-based index of the joint called `name` (KeyError if none)."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"no joint named {name!r}") from None

    @property
    def q_home(self) -> np.ndarray:
        """The home configuration (closed, with loops), (nq,): rad / m, the unit
        quaternions of spherical and free joints."""
        return np.array([v for link in self.links for v in link.q_values], dtype=float)

    @property
    def joint_limits(self) -> np.ndarray:
        """Joint ranges, (n, 2), rad / m; -inf / +inf where a joint has none."""
        out = np.empty((self.n, 2))
        for i, link in enumerate(self.links):
            out[i] = link.limits if link.limits is not None else (-np.inf, np.inf)
        return out

    @property
    def total_mass(self) -> float:
        """kg."""
        return float(sum(link.mass for link in self.links))

    @property
    def is_serial_arm(self) -> bool:
        """One chain on the base, in the base frame, and no loops: a serial arm (what a
        robot file describes; a window draws it on a pedestal, with its tool)."""
        return (len(self.chains) == 1 and not self.loops and self.chains[0].parent is None
                and self.chains[0].base.is_identity)

    def __hash__(self) -> int:
        return id(self)


class Described:
    """What a description (`Robot`, `Mechanism`) shows of its compiled `model`: the sizes
    and the joint table, read from the Model (one home), so that a description can be
    used wherever a model is."""

    model: Model

    @property
    def kernel(self) -> KernelModel:
        return self.model.kernel

    @property
    def n(self) -> int:
        return self.model.n

    @property
    def link_names(self) -> list[str]:
        return self.model.link_names

    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def dof(self) -> int:
        return self.model.dof

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.model.joint_names

    @property
    def parent(self) -> tuple[int, ...]:
        return self.model.parent

    @property
    def actuated(self) -> tuple[int, ...]:
        return self.model.actuated

    @property
    def independent(self) -> tuple[int, ...]:
        return self.model.independent

    @property
    def q_home(self) -> np.ndarray:
        return self.model.q_home

    @property
    def is_revolute(self) -> np.ndarray:
        return self.model.is_revolute

    @property
    def joint_types(self) -> tuple[JointType, ...]:
        return self.model.joint_types

    @property
    def rate_joint(self) -> np.ndarray:
        return self.model.rate_joint

    @property
    def rate_is_angular(self) -> np.ndarray:
        return self.model.rate_is_angular

    @property
    def value_is_angle(self) -> np.ndarray:
        return self.model.value_is_angle

    @property
    def value_joint(self) -> np.ndarray:
        return self.model.value_joint

    def rates_of(self, joints) -> list[int]:
        return self.model.rates_of(joints)

    def values_of(self, joints) -> list[int]:
        return self.model.values_of(joints)

    def moved_by(self, q, dx) -> np.ndarray:
        return self.model.moved_by(q, dx)

    @property
    def joint_limits(self) -> np.ndarray:
        return self.model.joint_limits

    @property
    def total_mass(self) -> float:
        return self.model.total_mass

    @property
    def loops(self) -> tuple[Loop, ...]:
        return self.model.loops

    @property
    def is_serial_arm(self) -> bool:
        return self.model.is_serial_arm

    def joint_index(self, name: str) -> int:
        return self.model.joint_index(name)

    def q_slice(self, name: str) -> slice:
        return self.model.q_slice(name)

    def v_slice(self, name: str) -> slice:
        return self.model.v_slice(name)


def pack(chains, loops, gravity, joint_names, parent, independent, row_loop=None,
         row_kind=None, forces=(), road=None) -> KernelModel:
    """The kernel layout of chains, loops and force elements (optionally with chosen
    active loop rows)."""
    links = [link for chain in chains for link in chain.links]
    n = len(links)
    # the pose of each joint's frame in its parent link's own frame: a chain's base for
    # its first link, composed with the link's own placement (joints of several degrees
    # of freedom; the identity for a DH row)
    place = np.tile(np.eye(4), (n, 1, 1))
    k = 0
    for chain in chains:
        base = np.eye(4)
        base[:3, :3] = chain.base.rotation
        base[:3, 3] = chain.base.xyz
        for i, link in enumerate(chain.links):
            place[k + i] = (base @ link.placement) if i == 0 else link.placement
        k += len(chain.links)
    place_R, place_p = place[:, :3, :3], place[:, :3, 3]
    index = {name: i for i, name in enumerate(joint_names)}
    loop_body = [(index[l.links[0]], -1 if l.links[1] == "base" else index[l.links[1]])
                 for l in loops]
    gears = [l.joint == LoopJointType.GEAR for l in loops]
    loop_point = [((0.0, 0.0, 0.0),) * 2 if gear else l.at for l, gear in zip(loops, gears)]
    loop_gear = [(l.ratio, *gear_mesh(l, links, index)) if gear else (0.0, 0.0, 0.0)
                 for l, gear in zip(loops, gears)]
    return pack_model(
        dh=np.array([[l.a, l.b, l.alpha, l.theta] if l.joint.is_dh else [0.0] * 4
                     for l in links], dtype=float).reshape(-1, 4),
        kind=[JOINT_CODES[l.joint] for l in links],
        mass=np.array([l.mass for l in links], dtype=float),
        com=np.array([l.com for l in links], dtype=float).reshape(-1, 3),
        inertia=np.array([l.inertia_matrix for l in links], dtype=float).reshape(-1, 3, 3),
        parent=parent, place_R=place_R, place_p=place_p, gravity=gravity,
        loop_body=loop_body, loop_type=[LOOP_CODES[l.joint] for l in loops],
        loop_point=loop_point, loop_axis=[l.axis for l in loops], loop_gear=loop_gear,
        independent=independent, row_loop=row_loop, row_kind=row_kind,
        drive=[l.drive_row for l in links] if any(l.has_drive for l in links) else None,
        **_element_layout(forces, road, index))


def gear_mesh(loop: Loop, links, index) -> tuple[float, float]:
    """(q_a0, q_b0): where a gear loop meshes, the joint values (rad or m) of its two
    links as given (`links` in joint order, `index` their joint index by name)."""
    return (links[index[loop.links[0]]].q_home, links[index[loop.links[1]]].q_home)


def _element_layout(forces, road, index) -> dict:
    """The force elements' and the road's arrays of `pack_model`."""
    def link(name):
        return -1 if name == "base" else index[name]
    kinds, links, points, laws = [], [], [], []
    for e in forces:
        if isinstance(e, Tyre):
            kinds.append(ELEMENT_TYRE)
            links.append((link(e.link), -1))
            points.append((e.at, (0.0, 0.0, 0.0)))
            laws.append((e.stiffness, e.damping, e.radius))
        else:
            kinds.append(ELEMENT_SPRING_DAMPER)
            links.append((link(e.links[0]), link(e.links[1])))
            points.append(e.at)
            laws.append((e.stiffness, e.damping, e.free_length))
    return dict(element_kind=kinds, element_link=links, element_point=points,
                element_law=laws, road=() if road is None else road.points)


def with_chains(model: Model, chains, row_loop=None, row_kind=None, **changes) -> Model:
    """`model` with other chains (other joint values) and optionally chosen active loop
    rows, repacked (no closing: `core.model.closure` uses it while it closes)."""
    chains = tuple(chains)
    if row_loop is None:
        v = model.kernel.views
        row_loop, row_kind = list(v.row_loop), list(v.row_kind)
    kernel = pack(chains, model.loops, model.gravity, model.joint_names, model.parent,
                  model.independent, row_loop, row_kind, model.forces, model.road)
    return replace(model, chains=chains, kernel=kernel, **changes)
