"""Closed chains at the edges: tolerances floating point can meet, masses and inertias
it can carry, singular poses called singular, and assembly that keeps the guess's
branch.

The references are written out here: the four-bar's closed pose by circle intersection
on a chosen side of the line from the crank pin to the rocker pivot, the slider-crank's
by x = r cos(theta) + sqrt(l^2 - (r sin(theta) - e)^2), a parallelogram at its change
point and a five-bar with its distal links collinear built from the geometry.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from armdyn.core import (ArgumentError, Assembly, Link, LoopClosureError, Mechanism,
                         MechanismError, MechanismFileError, Robot, RobotError, assemble,
                         forward_dynamics, load_mechanism, loop_acceleration_term,
                         loop_jacobian, loop_residual)
from armdyn.core.io.mechanism_file import mechanism_from_toml
from armdyn.core.model.parts import mechanism_size, tolerance_floor
from armdyn.core.model.robot import MIN_INERTIA, MIN_MASS

ROBOTS = Path(__file__).resolve().parent.parent / "robots"
LOOPED = ("bricard.toml", "carpet_scraper_saha.toml", "fivebar_saha.toml", "fourbar.toml",
          "slider_crank.toml")


def wrapped(x):
    """Angles onto (-pi, pi]."""
    return (np.asarray(x) + math.pi) % (2 * math.pi) - math.pi


# ----------------------------------------------------------------------------------
# 1. The assembly tolerance: a bound floating point can meet
# ----------------------------------------------------------------------------------

def test_a_tolerance_below_what_floating_point_can_meet_is_refused_by_name():
    """1e-300 used to be accepted and then reported as a loop that 'cannot be closed'
    at a residual of 5.6e-17."""
    text = (ROBOTS / "fourbar.toml").read_text() + "\n[assembly]\ntolerance = 1e-300\n"
    with pytest.raises(MechanismFileError) as err:
        mechanism_from_toml(text, "fourbar.toml")
    e = err.value
    assert e.field == "assembly.tolerance" and e.loop is None
    floor = tolerance_floor(load_mechanism(ROBOTS / "fourbar.toml").chains)
    assert "floating point" in e.reason and f"{floor:.2g}" in e.reason
    assert "cannot be closed" not in str(e)


@pytest.mark.parametrize("name", LOOPED)
def test_every_shipped_mechanism_closes_to_its_tolerance_floor(name):
    mech = load_mechanism(ROBOTS / name)
    floor = tolerance_floor(mech.chains, mech.loops)
    # the floor: 64 units in the last place of the size, which bounds every loop point
    assert floor == 64 * np.finfo(float).eps * mechanism_size(mech.chains, mech.loops)
    tight = replace(mech, assembly=replace(mech.assembly, tolerance=floor))
    assert np.max(np.abs(loop_residual(tight, tight.q_home))) <= floor
    rng = np.random.default_rng(7)
    dependent = [j for j in range(mech.n) if j not in mech.independent]
    for _ in range(5):
        guess = mech.q_home.copy()
        guess[dependent] += rng.uniform(-0.05, 0.05, len(dependent))
        q = assemble(tight, guess)
        assert np.max(np.abs(loop_residual(tight, q))) <= floor
        q = assemble(mech, guess, tolerance=floor)
        assert np.max(np.abs(loop_residual(mech, q))) <= floor
    # half the floor: refused by validation and by assemble, naming the tolerance
    with pytest.raises(MechanismError) as err:
        replace(mech, assembly=replace(mech.assembly, tolerance=floor / 2))
    assert err.value.field == "assembly.tolerance"
    with pytest.raises(ArgumentError, match="tolerance"):
        assemble(mech, mech.q_home + 0.01, tolerance=floor / 2)


def test_a_tree_has_no_floor_to_meet():
    """Without loops the tolerance is never used: a tiny one is no error."""
    mech = load_mechanism(ROBOTS / "humanoid.toml")
    assert not mech.loops
    tiny = replace(mech, assembly=Assembly(tolerance=1e-300))
    assert tiny.assembly.tolerance == 1e-300


# ----------------------------------------------------------------------------------
# 2. Masses and inertias below the floor are refused by name
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("mass", [5e-324, 1e-300, 1e-15, MIN_MASS / 2])
def test_a_slider_lighter_than_the_floor_is_refused_naming_the_link(mass):
    """A slider of 5e-324 kg used to load and give nan (or an overflow, or a 'singular'
    loop) in the dynamics."""
    mech = load_mechanism(ROBOTS / "slider_crank.toml")
    links = list(mech.links)
    links[2] = replace(links[2], mass=mass)
    with pytest.raises(MechanismError) as err:
        mech.with_links(links)
    e = err.value
    assert (e.chain, e.link, e.link_name, e.field) == ("slider", 1, "slider", "mass")
    assert f"{MIN_MASS:g} kg" in e.reason


def test_the_mass_floor_is_named_in_files_and_robots():
    text = (ROBOTS / "slider_crank.toml").read_text().replace("mass = 0.5", "mass = 5e-324")
    with pytest.raises(MechanismFileError) as err:
        mechanism_from_toml(text, "slider.toml")
    assert (err.value.chain, err.value.link_name, err.value.field) == ("slider", "slider",
                                                                        "mass")
    with pytest.raises(RobotError) as err:
        Robot("arm", [Link(mass=1e-9, name="finger")])
    assert (err.value.link, err.value.link_name, err.value.field) == (1, "finger", "mass")


def test_an_inertia_below_the_floor_is_refused_naming_the_link():
    small = MIN_INERTIA / 10
    with pytest.raises(RobotError) as err:
        Robot("arm", [Link(mass=1.0, inertia=(small, small, small, 0, 0, 0), name="tip")])
    assert (err.value.link_name, err.value.field) == ("tip", "inertia")
    assert f"{MIN_INERTIA:g} kg m^2" in err.value.reason


def test_at_the_floor_the_dynamics_keep_their_digits():
    """A slider of MIN_MASS with inertia MIN_INERTIA beside 1 kg rods: forward dynamics
    is finite and keeps the loop closed to the accuracy of the 1 kg parts."""
    mech = load_mechanism(ROBOTS / "slider_crank.toml")
    links = list(mech.links)
    links[2] = replace(links[2], mass=MIN_MASS, inertia=(MIN_INERTIA,) * 3 + (0.0,) * 3)
    light = mech.with_links(links)
    q = light.q_home
    qd = np.array([2.0, -1.0, 0.0])
    qd[1:] = -np.linalg.solve(loop_jacobian(light, q)[:, 1:], loop_jacobian(light, q)[:, 0]
                              * qd[0])
    qdd = forward_dynamics(light, q, qd, np.zeros(3))
    assert np.all(np.isfinite(qdd)) and np.max(np.abs(qdd)) < 1e4
    closure = loop_jacobian(light, q) @ qdd + loop_acceleration_term(light, q, qd)
    assert np.max(np.abs(closure)) < 1e-9 * max(1.0, np.max(np.abs(qdd)))


# ----------------------------------------------------------------------------------
# 3. Singular poses are called singular
# ----------------------------------------------------------------------------------

def parallelogram(theta: float) -> Mechanism:
    """fourbar.toml made a parallelogram (crank = rocker = 0.2 m, coupler = ground =
    0.45 m), closed by construction at crank angle theta: coupler -theta, rocker theta."""
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    crank, coupler, rocker = mech.links
    return mech.with_links([replace(crank, theta=theta), replace(coupler, a=0.45, theta=-theta),
                            replace(rocker, a=0.2, theta=theta)])


def test_a_parallelogram_at_its_change_point_is_singular_not_under_actuated():
    """Every link on the x axis: the loop Jacobian has rank 1 there, 2 at the closed
    poses nearby; it used to be called a mechanism of '2 degrees of freedom'."""
    assert parallelogram(0.3).dof == 1
    with pytest.raises(LoopClosureError) as err:
        parallelogram(0.0)
    e = err.value
    assert e.loop == "C" and "singular configuration" in e.reason
    assert "crank = 0 deg" in e.reason and "rocker = 0 deg" in e.reason
    assert "degree(s) of freedom" not in e.reason


def fivebar_dead_centre() -> Mechanism:
    """fivebar_saha.toml with its distal links on one line (E between the elbows): a
    type-II singularity, built from the geometry. Direction of the line: 20 deg."""
    mech = load_mechanism(ROBOTS / "fivebar_saha.toml")
    p1, d1, p2, d2 = mech.links
    base2 = np.array(mech.chains[1].base.xyz[:2])
    u = np.array([math.cos(math.radians(20)), math.sin(math.radians(20))])
    # elbow A1 on the circle (0, p1.a) and A2 = A1 + (d1.a + d2.a) u on (base2, p2.a):
    # A1 on both circles (0, p1.a) and (base2 - (d1.a + d2.a) u, p2.a)
    c = base2 - (d1.a + d2.a) * u
    d = float(np.linalg.norm(c))
    x = (p1.a ** 2 - p2.a ** 2 + d * d) / (2 * d)
    h = math.sqrt(p1.a ** 2 - x * x)
    A1 = x * c / d + h * np.array([-c[1], c[0]]) / d
    A2 = A1 + (d1.a + d2.a) * u
    t1 = math.atan2(A1[1], A1[0])
    t2 = math.atan2(*(A2 - base2)[::-1])
    phi = math.radians(20)
    q = [t1, phi - t1, t2, phi + math.pi - t2]
    return mech.with_links([link.with_q(v) for link, v in zip(mech.links, q)])


def test_a_five_bar_at_a_dead_centre_is_singular_not_unfixed():
    """The cranks fix the pose at the closed poses nearby but not there; it used to be
    reported as 'the independent joints do not fix the pose'."""
    with pytest.raises(LoopClosureError) as err:
        fivebar_dead_centre()
    e = err.value
    assert e.loop == "E" and "singular configuration" in e.reason
    assert "type-II" in e.reason and "do not fix the pose" not in e.reason


def test_a_guess_on_a_singular_point_of_the_five_bar_is_called_singular():
    """Every link on the x axis and the residual along it: no Newton step leaves the
    guess. It used to be called unclosable ('check the link lengths')."""
    mech = load_mechanism(ROBOTS / "fivebar_saha.toml")
    with pytest.raises(LoopClosureError) as err:
        assemble(mech, np.radians([0.0, 0.0, 180.0, 0.0]))
    e = err.value
    assert e.loop == "E" and "singular pose" in e.reason
    assert "leg 2 proximal = 180 deg" in e.reason and "check the link lengths" not in e.reason


def test_a_loop_that_cannot_close_is_still_called_so():
    """Out of reach: the residual at the cranks' values, and where the branch ended."""
    mech = load_mechanism(ROBOTS / "fivebar_saha.toml")
    with pytest.raises(LoopClosureError) as err:
        assemble(mech, mech.q_home + np.radians([140.0, 0.0, -20.0, 0.0]))
    e = err.value
    assert e.loop == "E" and e.residual > 0.1 and f"residual {e.residual:.3g}" in e.reason
    assert "the guess is a singular pose" not in e.reason and "check the link" in e.reason


# ----------------------------------------------------------------------------------
# 4. Assembly keeps the guess's branch
# ----------------------------------------------------------------------------------

def fourbar_closed(theta: float, side: float) -> np.ndarray:
    """The four-bar of fourbar.toml closed at crank angle theta (rad) with the pin C on
    the given side (+1 / -1) of the line from the crank pin B to the rocker pivot O4:
    (crank, coupler relative to the crank, rocker), by circle intersection."""
    l1, l2, l3, l0 = 0.2, 0.5, 0.4, 0.45
    B = l1 * np.array([math.cos(theta), math.sin(theta)])
    O4 = np.array([l0, 0.0])
    w = O4 - B
    d = float(np.linalg.norm(w))
    x = (l2 ** 2 - l3 ** 2 + d * d) / (2 * d)
    h = math.sqrt(l2 ** 2 - x * x)
    C = B + x * w / d + side * h * np.array([-w[1], w[0]]) / d
    coupler = math.atan2(C[1] - B[1], C[0] - B[0])
    return np.array([theta, coupler - theta, math.atan2(C[1], C[0] - l0)])


def side_of_pin(q) -> float:
    """Which side of the line B -> O4 the pin C lies on (the sign of the transmission
    angle), from the crank and coupler alone."""
    B = 0.2 * np.array([math.cos(q[0]), math.sin(q[0])])
    C = B + 0.5 * np.array([math.cos(q[0] + q[1]), math.sin(q[0] + q[1])])
    w, v = np.array([0.45, 0.0]) - B, C - B
    return math.copysign(1.0, w[0] * v[1] - w[1] * v[0])


def test_the_four_bar_keeps_its_assembly_mode_from_the_home_guess():
    """The home guess with the crank turned anywhere on the circle comes back in the
    home's assembly mode; at 120 deg it used to land in the other one."""
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    home_side = side_of_pin(mech.q_home)
    assert np.allclose(wrapped(fourbar_closed(mech.q_home[0], home_side) - mech.q_home), 0,
                       atol=1e-9)
    for deg in range(0, 360, 15):
        guess = mech.q_home.copy()
        guess[0] = math.radians(deg)
        q = assemble(mech, guess)
        assert q[0] == guess[0]
        assert np.allclose(wrapped(q - fourbar_closed(guess[0], home_side)), 0, atol=1e-9), deg


def test_a_guess_in_the_other_mode_stays_in_it():
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    other = -side_of_pin(mech.q_home)
    for deg in (60, 120, 250):
        guess = fourbar_closed(math.radians(deg), other)
        guess[0] += math.radians(10)  # the crank moved, the rest where they were
        q = assemble(mech, guess)
        assert np.allclose(wrapped(q - fourbar_closed(guess[0], other)), 0, atol=1e-9), deg


def test_the_slider_crank_keeps_its_branch_all_the_way_round():
    """x = r cos(theta) + sqrt(l^2 - (r sin(theta) - e)^2) from the home guess at every
    crank angle; at 180 deg and beyond it used to flip to the other branch (the minus
    root, the slider behind the crank pivot)."""
    mech = load_mechanism(ROBOTS / "slider_crank.toml")
    r, l = mech.links[0].a, mech.links[1].a
    e = mech.chains[1].base.xyz[1]  # the line of stroke's offset from the crank pivot
    assert e == 0.0
    for deg in range(0, 360, 10):
        guess = mech.q_home.copy()
        guess[0] = math.radians(deg)
        q = assemble(mech, guess)
        theta = guess[0]
        x = r * math.cos(theta) + math.sqrt(l * l - (r * math.sin(theta) - e) ** 2)
        assert q[0] == theta and q[2] == pytest.approx(x, abs=1e-12), deg
        # the rod from the crank pin to the piston pin
        rod = math.atan2(e - r * math.sin(theta), x - r * math.cos(theta))
        assert abs(wrapped(q[0] + q[1] - rod)) < 1e-9, deg


def test_a_drag_round_the_circle_keeps_the_branch():
    """What the window does: the crank moved 5 deg at a time from the last closed pose."""
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    side = side_of_pin(mech.q_home)
    q = mech.q_home
    for _ in range(72):
        guess = q.copy()
        guess[0] += math.radians(5)
        q = assemble(mech, guess)
        assert side_of_pin(q) == side
        assert np.allclose(wrapped(q - fourbar_closed(q[0], side)), 0, atol=1e-9)


def test_a_target_off_the_branch_says_where_the_branch_ends():
    """fourbar.toml with a rocker of 0.05 m: at the file's crank angle no mode closes;
    the message gives the residual at that angle and where the branch the guess's
    dependent joints reach ends (a turning point of the crank)."""
    text = (ROBOTS / "fourbar.toml").read_text().replace("a = 0.4\n", "a = 0.05\n")
    with pytest.raises(MechanismFileError) as err:
        mechanism_from_toml(text, "short.toml")
    e = err.value
    assert e.loop == "C" and "cannot be closed" in e.reason
    assert "ends at a singular pose" in e.reason and "crank = " in e.reason


# ----------------------------------------------------------------------------------
# 5. The branch kept with joints of several degrees of freedom
# ----------------------------------------------------------------------------------

_I = (0.01, 0.012, 0.014, 0.0, 0.0, 0.0)


def flapper() -> Mechanism:
    """fourbar.toml's four-bar (0.2, 0.5, 0.4 m links, 0.45 m ground) on a free chassis;
    the chassis and the crank are independent."""
    from armdyn.core import Chain, JointType, Loop, LoopJointType, Placement
    chassis = Link(joint=JointType.FREE, name="chassis", mass=5.0,
                   inertia=(0.2, 0.3, 0.4, 0, 0, 0), home=(0, 0, 1.0, 0, 0, 0, 1))
    crank = Link(name="crank", a=0.2, theta=1.0, com=(-0.1, 0, 0), inertia=_I, actuated=True)
    coupler = Link(name="coupler", a=0.5, theta=-0.6, com=(-0.25, 0, 0), inertia=_I)
    rocker = Link(name="rocker", a=0.4, theta=1.3, com=(-0.2, 0, 0), inertia=_I)
    return Mechanism("flapper", [Chain("body", [chassis]),
                                 Chain("a", [crank, coupler], parent="chassis"),
                                 Chain("b", [rocker], parent="chassis",
                                       base=Placement((0.45, 0.0, 0.0)))],
                     loops=[Loop("C", LoopJointType.REVOLUTE, ("coupler", "rocker"))],
                     assembly=Assembly(independent=("chassis", "crank")))


def test_a_four_bar_on_a_turned_free_body_keeps_its_mode():
    """The free chassis held at a guess turned by 90 deg (a quaternion carried along by
    continuation) and the crank anywhere: the four-bar closes as the fixed one does, by
    circle intersection, in the home's mode, and the chassis keeps the guess's values."""
    mech = flapper()
    body, bar = mech.q_slice("chassis"), slice(7, 10)
    assert mech.q_slice("crank") == slice(7, 8)
    side = side_of_pin(mech.q_home[bar])
    turned = mech.q_home.copy()
    turned[body] = (0.3, -0.2, 1.5, math.sin(math.pi / 4), 0.0, 0.0, math.cos(math.pi / 4))
    for deg in range(0, 360, 30):
        guess = turned.copy()
        guess[7] = math.radians(deg)
        q = assemble(mech, guess)
        assert np.array_equal(q[body], guess[body]) and q[7] == guess[7]
        assert np.allclose(wrapped(q[bar] - fourbar_closed(guess[7], side)), 0, atol=1e-9), deg


def rusr() -> Mechanism:
    """A spatial four-bar: crank (revolute), coupler (universal), rocker (revolute on a
    second base point, its axis tilted), closed by a spherical joint; one DOF."""
    from armdyn.core import Chain, JointType, Loop, LoopJointType, Placement
    crank = Link(name="crank", a=0.2, com=(-0.1, 0, 0), inertia=_I, actuated=True)
    coupler = Link(joint=JointType.UNIVERSAL, name="coupler", com=(0.25, 0, 0), inertia=_I,
                   home=(0.5, 0.1))
    rocker = Link(name="rocker", a=0.4, alpha=0.3, theta=1.2, com=(-0.2, 0, 0), inertia=_I)
    return Mechanism("rusr", [Chain("a", [crank, coupler]),
                              Chain("b", [rocker], base=Placement((0.45, 0.1, 0.0)))],
                     loops=[Loop("C", LoopJointType.SPHERICAL, ("coupler", "rocker"),
                                 at=((0.5, 0.0, 0.1), (0.0, 0.0, 0.0)))],
                     assembly=Assembly(independent=("crank",)))


def test_a_spatial_four_bar_keeps_its_branch_as_an_independent_solver_follows_it():
    """The crank turned by up to 90 deg from home in one call: the pose scipy's fsolve
    reaches when it follows the loop from home in 1 deg steps (each from the last)."""
    from scipy.optimize import fsolve

    mech = rusr()
    assert (mech.nq, mech.nv, mech.dof) == (4, 4, 1)

    def closed_by_fsolve(theta, start):
        def phi(x):
            return loop_residual(mech, np.concatenate([[theta], x]))[:3]
        x = fsolve(phi, start[1:], xtol=1e-13)
        assert np.max(np.abs(phi(x))) < 1e-12
        return np.concatenate([[theta], x])

    assert loop_residual(mech, mech.q_home).size == 3  # a spherical joint: 3 rows
    home = mech.q_home
    for sense in (1.0, -1.0):
        followed = home
        for deg in range(1, 91):
            followed = closed_by_fsolve(home[0] + sense * math.radians(deg), followed)
            if deg % 30:
                continue
            guess = home.copy()
            guess[0] = followed[0]
            q = assemble(mech, guess)
            assert q[0] == guess[0]
            assert np.max(np.abs(loop_residual(mech, q))) <= mech.assembly.tolerance
            assert np.allclose(wrapped(q - followed), 0, atol=1e-8), (sense, deg)


def test_a_caller_that_knows_the_branch_passes_it():
    """branch= (as an integrator or a drag passes its last closed pose): the result is in
    the branch's assembly mode even from a guess in the other mode; a branch pose whose
    loops are open is refused by name."""
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    home_side = side_of_pin(mech.q_home)
    for deg in (40, 120, 200):
        theta = math.radians(deg)
        other = fourbar_closed(theta, -home_side)
        guess = fourbar_closed(theta + math.radians(3), home_side)
        guess[1:] += 0.01  # open: a closed guess comes back as it is
        q = assemble(mech, guess, branch=other)
        assert np.allclose(wrapped(q - fourbar_closed(guess[0], -home_side)), 0, atol=1e-9)
        q = assemble(mech, guess, branch=fourbar_closed(theta, home_side))
        assert np.allclose(wrapped(q - fourbar_closed(guess[0], home_side)), 0, atol=1e-9)
    with pytest.raises(ArgumentError, match="branch"):
        assemble(mech, mech.q_home, branch=mech.q_home + 0.1)
