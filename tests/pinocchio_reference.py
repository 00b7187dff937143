"""An independent reference: the same robot as a Pinocchio model (test-only).

Joint k of the DH chain sits at DH frame k and turns about / slides along its
z axis; the fixed rest of the DH row, X_k = Tz(b)Tx(a)Rx(alpha) (revolute) or
Rz(theta)Tx(a)Rx(alpha) (prismatic), carries joint frame k to link k's own
frame, where the robot file gives the mass centre and inertia.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from armdyn.core import Robot


def _rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def pinocchio_model(robot: Robot) -> pin.Model:
    model = pin.Model()
    model.gravity.linear = np.array(robot.gravity, dtype=float)
    parent = 0
    placement = pin.SE3.Identity()
    for k, link in enumerate(robot.links):
        if link.is_revolute:
            joint = pin.JointModelRZ()
            X = pin.SE3(_rot_x(link.alpha), np.array([link.a, 0.0, link.b]))
        else:
            joint = pin.JointModelPZ()
            Rz = _rot_z(link.theta)
            X = pin.SE3(Rz @ _rot_x(link.alpha), Rz @ np.array([link.a, 0.0, 0.0]))
        jid = model.addJoint(parent, joint, placement, f"j{k + 1}")
        com_j = X.rotation @ np.array(link.com) + X.translation
        I_j = X.rotation @ link.inertia_matrix @ X.rotation.T
        model.appendBodyToJoint(jid, pin.Inertia(link.mass, com_j, I_j), pin.SE3.Identity())
        model.addFrame(pin.Frame(f"link{k + 1}", jid, 0, X, pin.FrameType.OP_FRAME))
        parent, placement = jid, X
    return model


# ----------------------------------------------------------------------------------
# Trees: a core Mechanism (chains of DH rows on the base or on links) as a pin.Model
# ----------------------------------------------------------------------------------
#
# Pinocchio's joint of core joint k sits at the frame the DH row k starts from (its
# "joint frame": the parent link's own frame, or the base, times the chain's base
# placement for a chain's first row) and turns about / slides along its z. The fixed
# rest of the row, X_k (as for the serial model above), carries the moved joint frame
# to link k's own frame; it is the placement of the frame "<link name>" and of the
# children's joints. Pinocchio needs every parent added before its children, so its
# joint order is a topological order of the tree, which need not be the core's
# (a chain may hang on a link of a later chain): `joint_ids[k]` is Pinocchio's joint
# of core joint k, and `core_to_pin` / `pin_to_core` permute joint vectors. Pinocchio
# also needs each subtree's joints contiguous (depth-first order): its crba silently
# misplaces entries otherwise.

def _rpy_rotation(rpy):
    """Rz(y) Ry(p) Rx(r), written out here (not core's rotation_rpy)."""
    r, p, y = (float(v) for v in rpy)
    cp, sp = np.cos(p), np.sin(p)
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    return _rot_z(y) @ Ry @ _rot_x(r)


def _row_rest(link) -> pin.SE3:
    """X_k: moved joint frame -> link k's own frame (the DH row without the joint; the
    identity for a joint of several degrees of freedom, whose moved frame is the link's)."""
    if link.joint.value in ("spherical", "universal", "free"):
        return pin.SE3.Identity()
    if link.is_revolute:
        return pin.SE3(_rot_x(link.alpha), np.array([link.a, 0.0, link.b]))
    Rz = _rot_z(link.theta)
    return pin.SE3(Rz @ _rot_x(link.alpha), Rz @ np.array([link.a, 0.0, 0.0]))


def _tree_structure(mech):
    """Per core joint, in core order: (link, parent joint or -1, chain placement or None)."""
    names = [link.name for chain in mech.chains for link in chain.links]
    index = {name: k for k, name in enumerate(names)}
    rows = []
    for chain in mech.chains:
        for i, link in enumerate(chain.links):
            if i == 0:
                parent = index[chain.parent] if chain.parent is not None else -1
                place = pin.SE3(_rpy_rotation(chain.base.rpy), np.array(chain.base.xyz, float))
            else:
                parent, place = len(rows) - 1, None
            if link.joint.value in ("spherical", "universal", "free"):
                own = pin.SE3(_rpy_rotation(link.rpy), np.array(link.xyz, float))
                place = own if place is None else place * own
            rows.append((link, parent, place))
    return rows


def pinocchio_tree_model(mech, loops=(), q=None) -> tuple[pin.Model, list[int]]:
    """The Pinocchio model of a core Mechanism's tree and joint_ids: joint_ids[k] =
    Pinocchio joint index of core joint k. Joints and link frames are named by the
    core's link names. Loops are ignored, except that the prismatic ones among `loops`
    (Loop objects, e.g. mech.loops) get their virtual slider joint "<loop name>:slider"
    (see `pinocchio_constraint_models`), assembled at q (core order, default q_home)."""
    sliders = _slider_specs(mech, loops, q)
    rows = _tree_structure(mech)
    n = len(rows)
    model = pin.Model()
    model.gravity.linear = np.array(mech.gravity, dtype=float)
    inertias = []
    for link in (row[0] for row in rows):
        X = _row_rest(link)
        inertias.append(pin.Inertia(link.mass, X.rotation @ np.array(link.com) + X.translation,
                                    X.rotation @ link.inertia_matrix @ X.rotation.T))
    slider_inertias = []
    for spec in sliders:  # half the welded link's inertia rides on the slider
        half = pin.Inertia(0.5 * inertias[spec["other"]].mass, inertias[spec["other"]].lever,
                           0.5 * inertias[spec["other"]].inertia)
        inertias[spec["other"]] = half
        slider_inertias.append(half.se3Action(spec["slider_M_other"]))
    # Pinocchio's algorithms (crba, ...) take every subtree to be a contiguous block of
    # joints: add them depth first (a chain may hang on a link of a later chain)
    children = [[] for _ in range(n + 1)]  # children[parent + 1]; sliders as ("s", i)
    for k, (_, parent, _) in enumerate(rows):
        children[parent + 1].append(k)
    for i, spec in enumerate(sliders):
        children[spec["host"] + 1].append(("s", i))
    order, stack = [], list(reversed(children[0]))
    while stack:
        k = stack.pop()
        order.append(k)
        if not isinstance(k, tuple):
            stack.extend(reversed(children[k + 1]))
    assert len(order) == n + len(sliders), "the chains' parents form a cycle"
    joint_ids = [0] * n
    for k in order:
        if isinstance(k, tuple):
            spec = sliders[k[1]]
            host = joint_ids[spec["host"]] if spec["host"] >= 0 else 0
            jid = model.addJoint(host, pin.JointModelPZ(), spec["placement"], spec["name"])
            model.appendBodyToJoint(jid, slider_inertias[k[1]], pin.SE3.Identity())
            continue
        link, parent, place = rows[k]
        if parent >= 0:
            parent_jid = joint_ids[parent]
            placement = _row_rest(rows[parent][0])
        else:
            parent_jid, placement = 0, pin.SE3.Identity()
        if place is not None:
            placement = placement * place
        if link.joint.value == "universal":
            # Rz(q1) then Rx(q2) about the moved x: two revolute joints through one
            # point, the first carrying no mass
            jid = model.addJoint(parent_jid, pin.JointModelRZ(), placement, link.name + ":z")
            parent_jid, placement = jid, pin.SE3.Identity()
        joint = _PIN_JOINTS[link.joint.value]()
        jid = model.addJoint(parent_jid, joint, placement, link.name)
        model.appendBodyToJoint(jid, inertias[k], pin.SE3.Identity())
        model.addFrame(pin.Frame(link.name, jid, 0, _row_rest(link), pin.FrameType.OP_FRAME))
        joint_ids[k] = jid
    return model, joint_ids


_PIN_JOINTS = {"revolute": pin.JointModelRZ, "prismatic": pin.JointModelPZ,
               "spherical": pin.JointModelSpherical, "universal": pin.JointModelRX,
               "free": pin.JointModelFreeFlyer}


def joint_permutation(model: pin.Model, joint_ids) -> np.ndarray:
    """perm[k] = index in Pinocchio's v of core joint k's first rate (1-DOF joints)."""
    return np.array([model.idx_vs[jid] for jid in joint_ids], dtype=int)


# ----------------------------------------------------------------------------------
# Joints of several degrees of freedom: the core's q and rate layouts against
# Pinocchio's. q is the same for every joint kind ([x, y, z, qx, qy, qz, qw] free,
# [qx, qy, qz, qw] spherical), a universal joint is Pinocchio's RZ then RX. The core's
# free-joint rates are [omega; v] in the body frame (v of the body origin), Pinocchio's
# [v; omega]: the two halves swap, for rates, accelerations and forces alike.
# ----------------------------------------------------------------------------------

def _index_maps(mech, model: pin.Model, joint_ids):
    """(core q index -> pin q index, core rate index -> pin v index), both arrays."""
    qi, vi = [], []
    links = [link for chain in mech.chains for link in chain.links]
    for link, jid in zip(links, joint_ids):
        iq, iv = model.idx_qs[jid], model.idx_vs[jid]
        kind = link.joint.value
        if kind == "free":
            qi += list(range(iq, iq + 7))
            vi += [iv + 3, iv + 4, iv + 5, iv, iv + 1, iv + 2]
        elif kind == "spherical":
            qi += list(range(iq, iq + 4))
            vi += [iv, iv + 1, iv + 2]
        elif kind == "universal":
            first = jid - 1  # the RZ joint added just before
            qi += [model.idx_qs[first], iq]
            vi += [model.idx_vs[first], iv]
        else:
            qi.append(iq)
            vi.append(iv)
    return np.array(qi, dtype=int), np.array(vi, dtype=int)


def q_to_pin(mech, model, joint_ids, q) -> np.ndarray:
    qi, _ = _index_maps(mech, model, joint_ids)
    out = pin.neutral(model)
    out[qi] = np.asarray(q, dtype=float)
    return out


def q_from_pin(mech, model, joint_ids, qp) -> np.ndarray:
    qi, _ = _index_maps(mech, model, joint_ids)
    return np.asarray(qp, dtype=float)[qi]


def v_to_pin(mech, model, joint_ids, v) -> np.ndarray:
    _, vi = _index_maps(mech, model, joint_ids)
    out = np.zeros(model.nv)
    out[vi] = np.asarray(v, dtype=float)
    return out


def v_from_pin(mech, model, joint_ids, v) -> np.ndarray:
    _, vi = _index_maps(mech, model, joint_ids)
    return np.asarray(v, dtype=float)[vi]


def mass_matrix_from_pin(mech, model, joint_ids, M) -> np.ndarray:
    M = np.triu(M) + np.triu(M, 1).T
    _, vi = _index_maps(mech, model, joint_ids)
    return M[np.ix_(vi, vi)]


def core_to_pin(model: pin.Model, joint_ids, x) -> np.ndarray:
    """A core-ordered joint vector as Pinocchio's (model.nv entries; zeros elsewhere)."""
    out = np.zeros(model.nv)
    out[joint_permutation(model, joint_ids)] = np.asarray(x, dtype=float)
    return out


def pin_to_core(model: pin.Model, joint_ids, x) -> np.ndarray:
    """A Pinocchio joint vector in core order (extra Pinocchio joints dropped)."""
    return np.asarray(x, dtype=float)[joint_permutation(model, joint_ids)]


def pin_mass_matrix_to_core(model: pin.Model, joint_ids, M) -> np.ndarray:
    """Pinocchio's crba result (upper triangle filled) as the full core-ordered matrix."""
    M = np.triu(M) + np.triu(M, 1).T
    perm = joint_permutation(model, joint_ids)
    return M[np.ix_(perm, perm)]


def pin_external_forces(model: pin.Model, data: pin.Data, joint_ids, f_ext) -> pin.StdVec_Force:
    """Core per-link wrenches f_ext (n, 6), [moment; force] in the base frame, moment
    about the origin of link k's own frame, as Pinocchio's per-joint forces: in each
    joint's local frame, moment about the joint origin. Needs data.oMi and data.oMf
    up to date (forwardKinematics + updateFramePlacements) at the same q."""
    forces = pin.StdVec_Force()
    for _ in range(model.njoints):
        forces.append(pin.Force.Zero())
    for k, jid in enumerate(joint_ids):
        moment, force = np.asarray(f_ext[k][:3], float), np.asarray(f_ext[k][3:], float)
        joint = data.oMi[jid]
        o_link = data.oMf[model.getFrameId(model.names[jid])].translation
        moment_at_joint = moment + np.cross(o_link - joint.translation, force)
        R = joint.rotation
        forces[jid] = pin.Force(R.T @ force, R.T @ moment_at_joint)
    return forces


# ----------------------------------------------------------------------------------
# Closed chains: the loops of a Mechanism as Pinocchio constraints
# ----------------------------------------------------------------------------------
#
# Pinocchio's constraintDynamics takes point (CONTACT_3D) and weld (CONTACT_6D)
# constraints only:
#   spherical loop : one 3D point contact at the joint point;
#   revolute loop  : two 3D point contacts on the axis, at the joint point and one axis
#                    length further (a 6D weld would also lock the turn), or, in a
#                    planar mechanism, the first one alone;
#   prismatic loop : a virtual slider: a prismatic joint on the first link (on the base
#                    for a loop with the base) along its axis, welded (6D) to the
#                    other link. To leave the dynamics unchanged the welded link's
#                    inertia is split: half stays, half rides on the slider, which the
#                    weld makes one rigid body with it. pinocchio_tree_model(mech,
#                    loops) adds the sliders (depth first, as Pinocchio needs); the
#                    slider's q and v are computed from the state, its acceleration
#                    is dropped.
# The points on the second link are those coinciding with the first link's points at
# the configuration given (default mech.q_home, which the Mechanism closes), so the
# constraints are consistent even where the loop is closed only to its tolerance.
# Planar redundancy (the out-of-plane rows) is left to the proximal solver (mu > 0,
# tens of iterations), which otherwise returns NaN.

#: Settings for constraintDynamics (absolute, relative accuracy, mu, iterations).
PROXIMAL = (1e-14, 1e-14, 1e-8, 100)


def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _frame_with_z(z) -> np.ndarray:
    """A rotation whose third column is the unit vector z."""
    z = _unit(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = _unit(np.cross(helper, z))
    return np.column_stack([x, np.cross(z, x), z])


def _loop_side(mech, model, joint_ids, name):
    """(Pinocchio joint, placement of the link's own frame in that joint's frame)."""
    if name == "base":
        return 0, pin.SE3.Identity()
    k = list(mech.joint_names).index(name)
    jid = joint_ids[k]
    return jid, model.frames[model.getFrameId(name)].placement


def is_planar(mech, q=None, tol: float = 1e-12, loops=None) -> bool:
    """Every revolute axis parallel to one direction, every prismatic axis and loop
    perpendicular to it (evaluated at q, default q_home), every revolute
    loop axis parallel to it: the motion is planar and out-of-plane rows redundant."""
    model, joint_ids = pinocchio_tree_model(mech)
    data = model.createData()
    q = mech.q_home if q is None else np.asarray(q, float)
    pin.forwardKinematics(model, data, core_to_pin(model, joint_ids, q))
    axes = [(link.is_revolute, data.oMi[jid].rotation[:, 2])
            for link, jid in zip(mech.links, joint_ids)]
    normal = next((a for rev, a in axes if rev), None)
    if normal is None:
        return False
    for rev, a in axes:
        if rev and np.linalg.norm(np.cross(a, normal)) > tol:
            return False
        if not rev and abs(a @ normal) > tol:
            return False
    for loop in (mech.loops if loops is None else loops):
        if getattr(loop.joint, "value", loop.joint) == "revolute":
            jid, X = _loop_side(mech, model, joint_ids, loop.links[0])
            axis = data.oMi[jid].rotation @ X.rotation @ _unit(loop.axis[0])
            if np.linalg.norm(np.cross(axis, normal)) > tol:
                return False
    return True


def _slider_specs(mech, loops, q) -> list[dict]:
    """The virtual sliders of the prismatic loops among `loops`: host (core joint, -1 for
    the base), other (the welded core joint), placement (slider frame at s = 0 in the
    host's Pinocchio joint frame), slider_M_other (the welded link's Pinocchio joint
    frame seen from the slider, constant while the loop is closed; taken at q)."""
    prismatic = [l for l in loops if getattr(l.joint, "value", l.joint) == "prismatic"]
    if not prismatic:
        return []
    model, joint_ids = pinocchio_tree_model(mech)
    data = model.createData()
    q = mech.q_home if q is None else np.asarray(q, float)
    pin.forwardKinematics(model, data, core_to_pin(model, joint_ids, q))
    index = {name: k for k, name in enumerate(mech.joint_names)}
    specs = []
    for loop in prismatic:
        a, b = loop.links
        # the slider rides on the base for a loop with the base, else on the first link
        host_side, other_side = (1, 0) if b == "base" else (0, 1)
        host_name, other_name = loop.links[host_side], loop.links[other_side]
        hj, hX = _loop_side(mech, model, joint_ids, host_name)
        oj, oX = _loop_side(mech, model, joint_ids, other_name)
        placement = pin.SE3(_frame_with_z(hX.rotation @ _unit(loop.axis[host_side])),
                            hX.act(np.asarray(loop.at[host_side], float)))
        oM0 = data.oMi[hj] * placement  # the slider frame at s = 0
        P = data.oMi[oj].act(oX.act(np.asarray(loop.at[other_side], float)))
        s = float(oM0.rotation[:, 2] @ (P - oM0.translation))
        oM_slider = oM0 * pin.SE3(np.eye(3), np.array([0.0, 0.0, s]))
        specs.append(dict(name=f"{loop.name}:slider", host=index.get(host_name, -1),
                          other=index[other_name], placement=placement,
                          slider_M_other=oM_slider.actInv(data.oMi[oj])))
    return specs


def pinocchio_constraint_models(mech, model: pin.Model, joint_ids=None, q=None,
                                planar: bool | None = None,
                                loops=None) -> pin.StdVec_RigidConstraintModel:
    """The loops of `mech` (or `loops`, Loop objects naming mech's links) as Pinocchio
    constraints on `model`, built at q (core order, default mech.q_home). `model` comes
    from pinocchio_tree_model(mech, loops, q), which adds the virtual sliders of the
    prismatic loops. planar=None: decided by `is_planar` (used by revolute loops)."""
    if joint_ids is None:
        joint_ids = [model.getJointId(name) for name in mech.joint_names]
    loops = tuple(mech.loops if loops is None else loops)
    q = mech.q_home if q is None else np.asarray(q, float)
    if planar is None:
        planar = is_planar(mech, q, loops=loops)
    data = model.createData()
    pin.forwardKinematics(model, data, core_to_pin(model, joint_ids, q))
    constraints = pin.StdVec_RigidConstraintModel()
    LOCAL = pin.ReferenceFrame.LOCAL
    for loop in loops:
        kind = getattr(loop.joint, "value", loop.joint)
        if kind in ("revolute", "spherical"):
            ja, Xa = _loop_side(mech, model, joint_ids, loop.links[0])
            jb, _ = _loop_side(mech, model, joint_ids, loop.links[1])
            # the joint point (and one axis length further) in a's Pinocchio joint frame
            pa = Xa.act(np.asarray(loop.at[0], float))
            ua = Xa.rotation @ _unit(loop.axis[0])
            points = [pa] if (kind == "spherical" or planar) else [pa, pa + ua]
            for p in points:
                pb = data.oMi[jb].actInv(data.oMi[ja].act(p))  # the coinciding point on b
                constraints.append(pin.RigidConstraintModel(
                    pin.ContactType.CONTACT_3D, model, ja, pin.SE3(np.eye(3), p),
                    jb, pin.SE3(np.eye(3), pb), LOCAL))
        elif kind == "prismatic":
            name = f"{loop.name}:slider"
            if not model.existJointName(name):
                raise ValueError(f"prismatic loop {loop.name!r}: build the model with "
                                 "pinocchio_tree_model(mech, loops) (it adds the slider)")
            spec = next(sp for sp in _slider_specs(mech, (loop,), q))
            constraints.append(pin.RigidConstraintModel(
                pin.ContactType.CONTACT_6D, model, model.getJointId(name), pin.SE3.Identity(),
                joint_ids[spec["other"]], spec["slider_M_other"].inverse(), LOCAL))
        else:
            raise ValueError(f"unknown loop joint {loop.joint!r}")
    return constraints


def _point_velocity(data, jid, p_world):
    """Velocity of the material point of joint jid's body at the world point p."""
    if jid == 0:
        return np.zeros(3)
    v = data.oMi[jid].act(data.v[jid])  # spatial velocity, world frame, at the world origin
    return v.linear + np.cross(v.angular, p_world)


def pinocchio_constrained_fd(mech, q, qd, tau, loops=None, planar: bool | None = None,
                             f_ext=None, prox=PROXIMAL) -> np.ndarray:
    """qdd (core order) of the closed-chain mechanism by pin.constraintDynamics: the
    tree of `mech` with the loops `loops` (default mech.loops) as constraints, at the
    closed state (q, qd) (core order), joint forces tau at every tree joint and
    optional per-link wrenches f_ext (n, 6), core convention (module text above)."""
    q, qd, tau = (np.asarray(x, dtype=float) for x in (q, qd, tau))
    loops = tuple(mech.loops if loops is None else loops)
    model, joint_ids = pinocchio_tree_model(mech, loops, q)
    constraints = pinocchio_constraint_models(mech, model, joint_ids, q, planar, loops)
    data = model.createData()
    q_pin = core_to_pin(model, joint_ids, q)
    v_pin = core_to_pin(model, joint_ids, qd)
    # the virtual sliders' position and rate from the state of the tree
    pin.forwardKinematics(model, data, q_pin, v_pin)
    for j in range(1, model.njoints):
        if not model.names[j].endswith(":slider"):
            continue
        c = next(c for c in constraints if c.joint1_id == j)
        host, other = model.parents[j], c.joint2_id
        oM0 = data.oMi[host] * model.jointPlacements[j]  # the slider at s = 0
        z, o = oM0.rotation[:, 2], oM0.translation
        P = data.oMi[other].act(c.joint2_placement.translation)  # the point welded to it
        s = float(z @ (P - o))
        w_host = data.oMi[host].act(data.v[host]).angular if host else np.zeros(3)
        s_dot = float(np.cross(w_host, z) @ (P - o)
                      + z @ (_point_velocity(data, other, P) - _point_velocity(data, host, o)))
        q_pin[model.idx_qs[j]] = s
        v_pin[model.idx_vs[j]] = s_dot
    tau_pin = core_to_pin(model, joint_ids, tau)
    if f_ext is not None:
        # the joint forces equivalent to the wrenches: rnea without minus rnea with them
        pin.forwardKinematics(model, data, q_pin)
        pin.updateFramePlacements(model, data)
        forces = pin_external_forces(model, data, joint_ids, np.asarray(f_ext, float))
        zero = np.zeros(model.nv)
        tau_pin += (pin.rnea(model, data, q_pin, v_pin, zero)
                    - pin.rnea(model, data, q_pin, v_pin, zero, forces))
    datas = pin.StdVec_RigidConstraintData()
    for c in constraints:
        datas.append(c.createData())
    pin.initConstraintDynamics(model, data, constraints, datas)
    settings = pin.ProximalSettings(*prox)
    a = pin.constraintDynamics(model, data, q_pin, v_pin, tau_pin, constraints, datas, settings)
    return pin_to_core(model, joint_ids, a)


# ----------------------------------------------------------------------------------
# Free falls with Pinocchio's dynamics
# ----------------------------------------------------------------------------------

def quaternion_rate(quat, w):
    """d/dt of [x, y, z, w] under the body-frame angular velocity w: q (x) [w/2; 0]."""
    x, y, z, s = quat
    wx, wy, wz = 0.5 * np.asarray(w)
    return np.array([s * wx + y * wz - z * wy, s * wy + z * wx - x * wz,
                     s * wz + x * wy - y * wx, -x * wx - y * wy - z * wz])


def pin_configuration_rate(model, qp, vp):
    """dq/dt of Pinocchio's q: quaternion components under the body-frame angular
    velocity, the free flyer's position under R v; the other joints' rates."""
    qdot = np.zeros(model.nq)
    for j in range(1, model.njoints):
        joint = model.joints[j]
        iq, iv = joint.idx_q, joint.idx_v
        name = joint.shortname()
        if name == "JointModelFreeFlyer":
            quat = qp[iq + 3:iq + 7]
            qdot[iq:iq + 3] = pin.Quaternion(quat).matrix() @ vp[iv:iv + 3]
            qdot[iq + 3:iq + 7] = quaternion_rate(quat, vp[iv + 3:iv + 6])
        elif name == "JointModelSpherical":
            qdot[iq:iq + 4] = quaternion_rate(qp[iq:iq + 4], vp[iv:iv + 3])
        elif joint.nq == 2 and joint.nv == 1:  # a continuous joint's (cos, sin)
            qdot[iq], qdot[iq + 1] = -qp[iq + 1] * vp[iv], qp[iq] * vp[iv]
        else:
            qdot[iq] = vp[iv]
    return qdot


def pinocchio_free_fall(model, data, qp0, vp0, t_out, rtol: float = 1e-11,
                        atol: float = 1e-11) -> np.ndarray:
    """(S, nq + nv) Pinocchio states [q; v] of a free fall from (qp0, vp0) at t_out:
    its aba stepped by SciPy's DOP853 on [q; v], quaternion components moving by their
    kinematic equation (not a chart): an integration independent of ArmDyn's."""
    from scipy.integrate import solve_ivp

    def f(t, y):
        qp, vp = y[:model.nq], y[model.nq:]
        a = pin.aba(model, data, qp, vp, np.zeros(model.nv))
        return np.concatenate([pin_configuration_rate(model, qp, vp), a])

    sol = solve_ivp(f, (t_out[0], t_out[-1]), np.concatenate([qp0, vp0]), method="DOP853",
                    t_eval=t_out, rtol=rtol, atol=atol)
    assert sol.success, sol.message
    return sol.y.T
