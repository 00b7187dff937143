"""Write the bundled floating models of robots/ from their numbers (run from the
repository root: `.venv/bin/python examples/build_floating_models.py`).

Each model is laid out in world coordinates at a reference pose and turned into chains
of DH rows by `model_building`. The descriptions of the files say where every number
comes from; this script is how they were put together, kept so that a changed number
can be carried through again.
"""
from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_building import (Body, Frame, clean, diag_inertia,  # noqa: E402
                            inertia_tuple, joint_group)
from model_building import connector as make_connector  # noqa: E402

from armdyn.core import Chain, JointType, Link, Mechanism  # noqa: E402
from armdyn.core.io.mechanism_file import mechanism_to_toml  # noqa: E402

ROBOTS = Path(__file__).resolve().parents[1] / "robots"

# ----------------------------------------------------------------------------------
# The human body of Garcia de Jalon & Bayo Sec 8.4.1 (Fig. 8.19): 40 bodies, 6 + 39 DOF
# ----------------------------------------------------------------------------------

#: de Leva (1996), Table 4, male: mass fraction, mass centre (fraction of the length from
#: the first endpoint), radii of gyration (fractions of the length) about the sagittal
#: (x, antero-posterior), transverse (y, medio-lateral) and longitudinal axes; and the
#: mean male segment lengths of his Table 1 (m). Body mass 73.0 kg (his male sample).
BODY_MASS = 73.0
DE_LEVA = {
    #  segment        endpoints     mass     cm      r_sag  r_trans r_long  length
    "head":          ("VERT-CERV", 0.0694, 0.5002, 0.303, 0.315, 0.261, 0.2429),
    "upper trunk":   ("CERV-XYPH", 0.1596, 0.5066, 0.505, 0.320, 0.465, 0.2421),
    "middle trunk":  ("XYPH-OMPH", 0.1633, 0.4502, 0.482, 0.383, 0.468, 0.2155),
    "lower trunk":   ("OMPH-MIDH", 0.1117, 0.6115, 0.615, 0.551, 0.587, 0.1457),
    "upper arm":     ("SJC-EJC", 0.0271, 0.5772, 0.285, 0.269, 0.158, 0.2817),
    "forearm":       ("EJC-WJC", 0.0162, 0.4574, 0.276, 0.265, 0.121, 0.2689),
    "hand":          ("WJC-MET3", 0.0061, 0.7900, 0.628, 0.513, 0.401, 0.0862),
    "thigh":         ("HJC-KJC", 0.1416, 0.4095, 0.329, 0.329, 0.149, 0.4222),
    "shank":         ("KJC-LMAL", 0.0433, 0.4459, 0.255, 0.249, 0.103, 0.4340),
    "foot":          ("HEEL-TTIP", 0.0137, 0.4415, 0.257, 0.245, 0.124, 0.2581),
}
#: Reconstructed (not in de Leva): half the distance between the hip joint centres,
#: the shoulder joint centre's offset from the trunk axis and its height below CERV,
#: the sternoclavicular joint, the ankle's height above the sole and the heel behind it.
HIP_HALF_WIDTH = 0.085
SHOULDER_HALF_WIDTH = 0.175
SHOULDER_BELOW_CERV = 0.05
STERNOCLAVICULAR_HALF_WIDTH = 0.03
ANKLE_HEIGHT = 0.07
HEEL_BEHIND_ANKLE = 0.045
FOOT_CM_HEIGHT = 0.05   # the foot's mass centre above the sole... below the ankle by 0.05 m
#: Each of the 24 connector bodies: a ball of 0.15 kg and 2 cm radius at its joint's
#: centre (the joint's share of the body), so that the masses stay within a factor 100
#: of their median (core.lab.model_checks); the segments share the rest of the 73.0 kg
#: in de Leva's proportions.
CONNECTOR_MASS = 0.15
CONNECTOR_RADIUS = 0.02
CONNECTORS = 24
SEGMENTS_MASS = BODY_MASS - CONNECTORS * CONNECTOR_MASS

X, Y, Z = np.eye(3)


def segment(key: str, name: str, proximal, distal, axes=np.eye(3)) -> Body:
    """A de Leva segment between two points (world, m): its mass centre on the line at
    the table's fraction from `proximal` (the table's first endpoint), its inertia from
    the radii about `axes` (columns: sagittal, transverse, longitudinal)."""
    _, frac, cm, rs, rt, rl, length = DE_LEVA[key]
    mass = round(frac * SEGMENTS_MASS, 9)
    proximal, distal = np.asarray(proximal, float), np.asarray(distal, float)
    com = proximal + cm * (distal - proximal)
    return Body(name, mass, com, diag_inertia(mass, (rs, rt, rl), length, axes))


def human_body(gravity=(0.0, 0.0, -9.81), name="Human body (Jalon and Bayo Sec 8.4.1)",
               description="", arms_out=False, layout: dict | None = None) -> Mechanism:
    """The 40-body human. `layout`, if given, receives every body (link name -> Body at
    the reference pose, world) for `check_layout`."""
    layout = {} if layout is None else layout

    def connector(name, at):
        return make_connector(name, at, CONNECTOR_MASS, CONNECTOR_RADIUS)

    def group(chain, parent_frame, centre, axes, bodies, names, parent, **kw):
        for b, n, a in zip(bodies, names, axes):
            layout[n] = b
            layout[n, "axis"] = (np.asarray(centre, float), np.asarray(a, float))
        return joint_group(chain, parent_frame, centre, axes, bodies, names, parent, **kw)

    L = {k: v[-1] for k, v in DE_LEVA.items()}
    midh = np.zeros(3)  # the pelvis frame at the origin (URDF's root sits there)
    omph = midh + L["lower trunk"] * Z
    xyph = omph + L["middle trunk"] * Z
    cerv = xyph + L["upper trunk"] * Z
    vert = cerv + L["head"] * Z
    chains: list[Chain] = []

    # the pelvis (de Leva's lower trunk) on the free joint: its own frame at MIDH,
    # axes along the world's (x forward, y left, z up)
    pelvis_body = segment("lower trunk", "pelvis", omph, midh)
    pelvis_frame = Frame(midh)
    pelvis = Link(JointType.FREE, mass=pelvis_body.mass,
                  com=tuple(clean(c) for c in pelvis_frame.local_point(pelvis_body.com)),
                  inertia=inertia_tuple(pelvis_body.inertia), name="pelvis",
                  home=None)  # the origin, the identity
    chains.append(Chain("pelvis", (pelvis,)))
    layout["pelvis"] = pelvis_body

    def three(chain, parent, parent_frame, centre, segment_body, prefix, axes, labels):
        bodies = [connector(f"{prefix} {labels[0]}", centre),
                  connector(f"{prefix} {labels[1]}", centre), segment_body]
        names = [f"{prefix} {labels[0]}", f"{prefix} {labels[1]}", segment_body.name]
        c, frame = group(chain, parent_frame, centre, axes, bodies, names, parent)
        chains.append(c)
        return frame

    # spine and neck: flexion (about y), lateral bending (about the moved x), axial
    # rotation (about the moved z)
    spine_axes = (Y, X, Z)
    spine_labels = ("flexion", "lateral bending")
    abdomen = segment("middle trunk", "abdomen", xyph, omph)
    abdomen_frame = three("lumbar", "pelvis", pelvis_frame, omph, abdomen, "lumbar",
                          spine_axes, spine_labels)
    thorax = segment("upper trunk", "thorax", cerv, xyph)
    thorax_frame = three("thoracic", "abdomen", abdomen_frame, xyph, thorax, "thoracic",
                         spine_axes, spine_labels)
    head = segment("head", "head", vert, cerv)
    three("neck", "thorax", thorax_frame, cerv, head, "neck", spine_axes, spine_labels)

    for side, s in (("left", 1.0), ("right", -1.0)):
        # shoulder girdle: the clavicle turns at the sternoclavicular joint about the
        # antero-posterior axis (elevation) and the vertical (protraction)
        sjc = cerv + np.array([0.0, s * SHOULDER_HALF_WIDTH, -SHOULDER_BELOW_CERV])
        scj = np.array([0.0, s * STERNOCLAVICULAR_HALF_WIDTH, sjc[2]])
        clav_names = [f"{side} clavicle elevation", f"{side} clavicle"]
        clav_bodies = [connector(clav_names[0], scj), connector(clav_names[1], sjc)]
        c, clav_frame = group(f"{side} clavicle", thorax_frame, scj, (X, Z), clav_bodies,
                                    clav_names, "thorax")
        chains.append(c)
        # shoulder: abduction (about x), flexion (about the moved y), rotation about the
        # upper arm
        ejc = sjc - L["upper arm"] * Z
        wjc = ejc - L["forearm"] * Z
        met3 = wjc - L["hand"] * Z
        upper_arm = segment("upper arm", f"{side} upper arm", sjc, ejc)
        arm_frame = three(f"{side} shoulder", f"{side} clavicle", clav_frame, sjc, upper_arm,
                          f"{side} shoulder", (X, Y, Z), ("abduction", "flexion"))
        # elbow flexion (about y), then pronation about the forearm
        forearm = segment("forearm", f"{side} forearm", ejc, wjc)
        el_names = [f"{side} elbow", f"{side} forearm"]
        c, forearm_frame = group(f"{side} elbow", arm_frame, ejc, (Y, Z),
                                       [connector(el_names[0], ejc), forearm], el_names,
                                       f"{side} upper arm")
        chains.append(c)
        # wrist: flexion (about y), then deviation (about the moved x)
        hand = segment("hand", f"{side} hand", wjc, met3)
        wr_names = [f"{side} wrist flexion", f"{side} hand"]
        c, _ = group(f"{side} wrist", forearm_frame, wjc, (Y, X),
                           [connector(wr_names[0], wjc), hand], wr_names, f"{side} forearm")
        chains.append(c)

        # hip: flexion (about y), adduction (about the moved x), rotation about the thigh
        hjc = midh + s * HIP_HALF_WIDTH * Y
        kjc = hjc - L["thigh"] * Z
        ajc = kjc - L["shank"] * Z
        thigh = segment("thigh", f"{side} thigh", hjc, kjc)
        thigh_frame = three(f"{side} hip", "pelvis", pelvis_frame, hjc, thigh, f"{side} hip",
                            (Y, X, Z), ("flexion", "adduction"))
        shank = segment("shank", f"{side} shank", kjc, ajc)
        c, shank_frame = group(f"{side} knee", thigh_frame, kjc, (Y,), [shank],
                                     [f"{side} shank"], f"{side} thigh")
        chains.append(c)
        # ankle: dorsiflexion (about y), then inversion (about the moved x); the foot's
        # long axis runs forward (x), so its longitudinal radius is about x
        heel = ajc + np.array([-HEEL_BEHIND_ANKLE, 0.0, -FOOT_CM_HEIGHT])
        toe = heel + L["foot"] * X
        foot = segment("foot", f"{side} foot", heel, toe, axes=np.column_stack([Z, Y, X]))
        an_names = [f"{side} ankle", f"{side} foot"]
        c, _ = group(f"{side} ankle", shank_frame, ajc, (Y, X),
                           [connector(an_names[0], ajc), foot], an_names, f"{side} shank")
        chains.append(c)

    mech = Mechanism(name, chains=tuple(chains), gravity=gravity, description=description)
    if arms_out:
        q = mech.q_home.copy()
        for side, s in (("left", 1.0), ("right", -1.0)):
            q[mech.q_slice(f"{side} shoulder abduction")] += s * math.pi / 2
        mech = mech.with_q(q)
    return mech


def check_layout(mech: Mechanism, layout: dict) -> float:
    """The DH rows reproduce the layout: every link's mass centre and inertia, carried
    to the world by forward kinematics at home, against where they were put, and every
    revolute joint turning its link about the axis through the centre it was given.
    Returns the largest differences (m or kg m^2; and of the axes, by finite
    differences of 1e-6 rad)."""
    from armdyn.core import forward_kinematics
    F = forward_kinematics(mech, mech.q_home).frames
    worst = axis_error = 0.0
    for k, link in enumerate(mech.links):
        T = F[k + 1]
        body = layout[link.name]
        c = T[:3, :3] @ np.array(link.com) + T[:3, 3]
        I = T[:3, :3] @ link.inertia_matrix @ T[:3, :3].T
        worst = max(worst, float(np.max(np.abs(c - body.com))),
                    float(np.max(np.abs(I - body.inertia))))
        assert link.mass == body.mass
        if link.joint == JointType.REVOLUTE:  # turns about its axis through its centre
            centre, axis = layout[link.name, "axis"]
            q = mech.q_home.copy()
            eps = 1e-6
            q[mech.q_slice(link.name)] += eps
            T2 = forward_kinematics(mech, q).frames[k + 1]
            W = (T2[:3, :3] @ T[:3, :3].T - np.eye(3)) / eps
            w = np.array([W[2, 1], W[0, 2], W[1, 0]])
            moved = (T2[:3, 3] - T[:3, 3]) / eps  # the origin moves as w x (o - centre)
            axis_error = max(axis_error, float(np.max(np.abs(w - axis))),
                             float(np.max(np.abs(moved - np.cross(axis, T[:3, 3] - centre)))))
    return worst, axis_error


HUMAN_LAYOUT = """\
The layout is ours (reconstructed), chosen to give the book's counts: a pelvis on a free \
joint; lumbar, thoracic and neck joints of three revolute axes each (flexion about the \
medio-lateral axis, lateral bending about the moved antero-posterior axis, axial rotation); \
per arm a sternoclavicular joint of two (elevation, protraction), a shoulder of three \
(abduction, flexion, rotation about the upper arm), elbow flexion, pronation about the \
forearm and a wrist of two (flexion, deviation); per leg a hip of three (flexion, adduction, \
rotation about the thigh), knee flexion and an ankle of two (dorsiflexion, inversion): \
9 + 2 x 9 + 2 x 6 = 39 revolute joints. The axes of one joint meet at its centre, so a \
joint of k axes has k - 1 connector bodies between its axes (the links named after the \
first axes, and the clavicle: balls of 0.15 kg and 2 cm radius at the joint centres, the \
joints' share of the body): 16 segments + 24 connectors = 40 bodies. Segment masses, mass \
centres and radii of gyration: P. de Leva (1996), "Adjustments to Zatsiorsky-Seluyanov's \
segment inertia parameters", J. Biomech. 29(9), 1223-1230, Table 4, male; his male \
sample's body mass of 73.0 kg, of which the connectors take 3.6 kg and the segments the \
rest, 69.4 kg, in his proportions; the rows head VERT-CERV, upper trunk CERV-XYPH, middle trunk XYPH-OMPH, \
lower trunk (the pelvis) OMPH-MIDH, upper arm SJC-EJC, forearm EJC-WJC, hand WJC-MET3, \
thigh HJC-KJC, shank KJC-LMAL, foot HEEL-TTIP; segment lengths: his Table 1 male means, \
0.2429, 0.2421, 0.2155, 0.1457, 0.2817, 0.2689, 0.0862, 0.4222, 0.4340, 0.2581 m in that \
order. Principal axes along the segment (x forward: de Leva's sagittal radius, y left: the \
transverse one, the segment line: the longitudinal one; the foot's line runs forward). \
Reconstructed (not in de Leva): the trunk landmarks on one vertical line, the hip joint \
centres 0.085 m either side of MIDH, the shoulder joint centres 0.175 m either side and \
0.05 m below CERV, the sternoclavicular joints 0.03 m either side at the shoulders' height, \
the ankle 0.07 m above the sole, the foot's line 0.05 m below the ankle from a heel 0.045 m \
behind it. Reference pose: standing, arms hanging, palms forward; world x forward, y left, \
z up; the pelvis frame at MIDH, at the origin at home (the soles 0.9262 m below). Each joint group is a chain of DH \
rows with a = b = 0 on its parent link, placed by base xyz/rpy; the thetas written are the \
reference pose (examples/build_floating_models.py writes this file from these numbers and \
checks that the rows put every segment where it belongs). No joint limits, no ground. The \
free joint's rates are [w; v] in the pelvis frame."""

HUMAN_DESCRIPTION = f"""\
The human body of Garcia de Jalon and Bayo, "Kinematic and Dynamic Simulation of \
Multibody Systems", Sec 8.4.1, Fig. 8.19 (seed 002): 40 rigid bodies and 6 + 39 degrees \
of freedom, free-floating, every other joint revolute ("All joints are of the revolute \
type"); the book gives these counts and the figure, no numbers. {HUMAN_LAYOUT} Gravity \
-z: a 10 s fall in the air keeps its angular momentum about the mass centre and its \
energy (tests/test_floating_models.py)."""

ASTRONAUT_DESCRIPTION = f"""\
An astronaut: the human body of human_body_jalon.toml (Garcia de Jalon and Bayo Sec 8.4.1, \
40 bodies, 6 + 39 DOF) with gravity off and the arms held out sideways at home (shoulder \
abduction 90 deg), for the classroom demonstration of conserved angular momentum: \
starting at rest, it turns about its mass centre by moving its arms alone. Run \
examples/astronaut_turn.py: both arms circle in cones about the shoulder line (both tips \
up, back, down, forward), every other joint held by PD torques (internal forces); the \
angular momentum about the mass centre stays zero, the mass centre stays put, and after \
every cycle, arms back at home, the whole body has pitched forward (4 cycles of 2 s, \
cones of 45 deg, the first and last at growing and shrinking amplitude: {{turn}} deg, \
nearly the same at any pace: a geometric phase). From Python: simulate(mech, 9.0, \
tau=arm_circling_torque(mech, 4, 2.0, 45.0)) with arm_circling_torque from that script; \
without joint torques the body is a floating ragdoll. {HUMAN_LAYOUT}"""


# ----------------------------------------------------------------------------------
# A free-flying space robot: a satellite with the UR5e arm of robots/ur5e.toml
# ----------------------------------------------------------------------------------

#: The satellite (ours): a uniform cube, side m and mass kg; the arm on its top face.
SATELLITE_SIDE = 0.8
SATELLITE_MASS = 100.0

SPACE_ROBOT_DESCRIPTION = """\
A free-flying space robot: a satellite on a free joint carrying a 6-joint arm, for the \
classroom demonstration of conserved momentum: in space (gravity off), starting at \
rest, every motion of the arm turns and moves the satellite the other way, so that the \
linear momentum and the angular momentum about the mass centre stay zero and the mass \
centre stays put. The arm is the UR5e of ur5e.toml, its numbers unchanged (Universal \
Robots' DH table, masses and mass centres; inertias from UR's ROS 2 description; \
limits +/-360 deg; its first link, UR's "base", is named "waist", as "base" names the \
fixed base in a mechanism). The satellite is ours (an illustrative base, reconstructed: no \
source for this combination): a uniform 0.8 m cube of 100 kg, inertia m a^2 / 6 = \
10.6667 kg m^2 about each axis, its frame at its centre (home: the origin, no \
rotation); the arm's frame 0 sits on the centre of the top face (base xyz = [0, 0, \
0.4] in the satellite frame, z_0 out of the face), the arm at UR's home (all theta = 0: \
stretched out along -x). The arm is 17.7 kg, a sixth of the base, so the base's \
reaction is large enough to see. Run examples/space_robot_reaction.py: in 4 s the \
waist turns +90 deg and the shoulder -45 deg along cycloids (PD torques at the joints, \
none on the satellite); the satellite turns the other way, {turn}, and its centre \
moves {shift} cm, while the momentum stays zero and the mass centre of the whole stays \
put. The free joint's rates are [w; v] in the satellite frame."""


def space_robot() -> Mechanism:
    from armdyn.core import Placement, load_robot
    ur5e = load_robot(ROBOTS / "ur5e.toml")
    a, m = SATELLITE_SIDE, SATELLITE_MASS
    i = m * a * a / 6.0
    satellite = Link(JointType.FREE, mass=m, com=(0.0, 0.0, 0.0),
                     inertia=(clean(i), clean(i), clean(i), 0.0, 0.0, 0.0), name="satellite")
    # "base" names the fixed base in a mechanism: UR's first link is the waist here
    arm = tuple(replace(link, name="waist") if link.name == "base" else link
                for link in ur5e.links)
    return Mechanism("Space robot: a satellite with a UR5e arm",
                     chains=(Chain("satellite", (satellite,)),
                             Chain("arm", arm, parent="satellite",
                                   base=Placement((0.0, 0.0, a / 2)))),
                     gravity=(0.0, 0.0, 0.0))


def write(mech: Mechanism, filename: str) -> None:
    """Save `mech` as robots/`filename`, its description wrapped over lines (a TOML
    multi-line string whose line-ending backslashes join the lines again)."""
    import textwrap
    from armdyn.core import load_mechanism
    text = mechanism_to_toml(mech)
    if mech.description:
        assert "\\" not in mech.description and '"""' not in mech.description
        one_line = next(line for line in text.splitlines() if line.startswith("description = "))
        lines = textwrap.wrap(mech.description, 86, break_long_words=False,
                              break_on_hyphens=False)
        wrapped = 'description = """\n' + " \\\n".join(lines) + '"""'
        text = text.replace(one_line, wrapped)
    path = ROBOTS / filename
    path.write_text(text)
    back = load_mechanism(path)
    assert back.description == mech.description, filename
    assert mechanism_to_toml(back) == mechanism_to_toml(mech), filename
    print("wrote", path)


def main() -> None:
    layout: dict = {}
    human = human_body(description=HUMAN_DESCRIPTION, layout=layout)
    print("human body: layout reproduced to", check_layout(human, layout))
    write(human, "human_body_jalon.toml")
    astronaut = human_body(gravity=(0.0, 0.0, 0.0), arms_out=True,
                           name="Astronaut (the human body of Jalon and Bayo, gravity off)")
    from armdyn.core import simulate
    from astronaut_turn import SETTLE, arm_circling_torque, pitch_angle
    run = simulate(astronaut, 8.0 + SETTLE, tau=arm_circling_torque(astronaut, 4, 2.0, 45.0),
                   dt_out=0.1)
    turn = math.degrees(pitch_angle(astronaut, run.q[-1]))
    print(f"astronaut: turns {turn:.2f} deg")
    astronaut = replace(astronaut, description=ASTRONAUT_DESCRIPTION.format(
        turn=f"about {turn:.0f}"))
    write(astronaut, "astronaut.toml")
    robot = space_robot()
    from scipy.spatial.transform import Rotation
    from space_robot_reaction import MOVE, cycloid_torque
    run = simulate(robot, 5.0, tau=cycloid_torque(robot, {n: math.radians(d) for n, d in
                                                          MOVE.items()}, 4.0), dt_out=0.1)
    sat = run.q[-1][robot.q_slice("satellite")]
    rv = np.degrees(Rotation.from_quat(sat[3:]).as_rotvec())
    turn = (f"by the rotation vector ({rv[0]:.1f}, {rv[1]:.1f}, {rv[2]:.1f}) deg (world "
            "axes): mostly about z, the waist's axis, and y, the shoulder's")
    print("space robot: satellite turned", rv, "moved", sat[:3])
    write(replace(robot, description=SPACE_ROBOT_DESCRIPTION.format(
        turn=turn, shift=f"{np.linalg.norm(sat[:3]) * 100:.0f}")), "space_robot.toml")


if __name__ == "__main__":
    main()
