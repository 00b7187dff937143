"""Free-floating systems and joints of several degrees of freedom (spherical, universal,
free) against Pinocchio, against the laws of mechanics, and against bad input.

Pinocchio is the independent reference (`pinocchio_reference`: the same tree with
JointModelFreeFlyer, JointModelSpherical, and RZ then RX for a universal joint); its
free-flyer rates are [v; w] where ArmDyn's are [w; v], both in the body frame.
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given

from armdyn.core import (ArgumentError, Chain, JointType, Link, Mechanism, MechanismError,
                         Robot, RobotError, center_of_mass, energy, forward_dynamics,
                         inverse_dynamics, mass_matrix, momentum, simulate)
from pinocchio_reference import (mass_matrix_from_pin, pinocchio_free_fall,
                                 pinocchio_tree_model, q_from_pin, q_to_pin, v_from_pin,
                                 v_to_pin)
from strategies import (assert_close, floating_four_bar, scale_of, fast, random_inertia,
                        random_state_of_any, random_tree, random_unit_quaternion, seeds)

floating_trees = random_tree(min_joints=1, max_joints=14, joints="several", floating=True)
fixed_trees = random_tree(min_joints=1, max_joints=14, joints="several")


def _pin(mech):
    model, ids = pinocchio_tree_model(mech)
    return model, model.createData(), ids


def _compare_with_pinocchio(mech, seed):
    rng = np.random.default_rng(seed)
    q, qd, qdd = random_state_of_any(rng, mech)
    model, data, ids = _pin(mech)
    qp, vp, ap = (q_to_pin(mech, model, ids, q), v_to_pin(mech, model, ids, qd),
                  v_to_pin(mech, model, ids, qdd))
    tau = inverse_dynamics(mech, q, qd, qdd)
    tau_pin = v_from_pin(mech, model, ids, pin.rnea(model, data, qp, vp, ap))
    assert_close(tau, tau_pin, 1e-9, what="inverse dynamics")
    M = mass_matrix(mech, q)
    M_pin = mass_matrix_from_pin(mech, model, ids, pin.crba(model, data, qp))
    assert_close(M, M_pin, 1e-9, what="mass matrix")
    qdd_pin = v_from_pin(mech, model, ids, pin.aba(model, data, qp, vp,
                                                   v_to_pin(mech, model, ids, tau)))
    assert_close(forward_dynamics(mech, q, qd, tau), qdd_pin, 1e-7, what="forward dynamics")
    assert_close(forward_dynamics(mech, q, qd, tau, method="composite"), qdd_pin, 1e-7,
                 what="forward dynamics (composite)")
    T, V, _ = energy(mech, q, qd)
    assert_close(T, pin.computeKineticEnergy(model, data, qp, vp), 1e-9, what="kinetic")
    assert_close(V, pin.computePotentialEnergy(model, data, qp), 1e-9, what="potential")
    pin.centerOfMass(model, data, qp)
    assert_close(center_of_mass(mech, q), data.com[0], 1e-10, what="mass centre")
    h = pin.computeCentroidalMomentum(model, data, qp, vp)
    p = momentum(mech, q, qd)
    assert_close(p.linear, h.linear, 1e-9, what="linear momentum")
    # the momenta's own scale: a translating body's angular momentum is round-off about 0
    assert_close(p.angular, h.angular, 1e-9, scale=scale_of(np.r_[h.linear, h.angular]),
                 what="angular momentum about the mass centre")


@fast(40)
@given(floating_trees, seeds)
def test_floating_trees_agree_with_pinocchio(mech, seed):
    _compare_with_pinocchio(mech, seed)


@fast(40)
@given(fixed_trees, seeds)
def test_trees_with_spherical_and_universal_joints_agree_with_pinocchio(mech, seed):
    _compare_with_pinocchio(mech, seed)


@fast(10)
@given(floating_trees, seeds)
def test_layouts_sizes_and_batches(mech, seed):
    """nq, nv and the slices follow the joint kinds; a batch gives its rows' results."""
    nq = sum(link.joint.nq for link in mech.links)
    nv = sum(link.joint.nv for link in mech.links)
    assert (mech.nq, mech.nv, mech.dof) == (nq, nv, nv)
    for link in mech.links:
        assert mech.q_slice(link.name).stop - mech.q_slice(link.name).start == link.joint.nq
        assert mech.v_slice(link.name).stop - mech.v_slice(link.name).start == link.joint.nv
    rng = np.random.default_rng(seed)
    rows = [random_state_of_any(rng, mech) for _ in range(3)]
    Q, Qd, Qdd = (np.array([r[i] for r in rows]) for i in range(3))
    tau = inverse_dynamics(mech, Q, Qd, Qdd)
    assert tau.shape == (3, nv)
    for s in range(3):
        np.testing.assert_allclose(tau[s], inverse_dynamics(mech, Q[s], Qd[s], Qdd[s]),
                                   rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(forward_dynamics(mech, Q, Qd, tau), Qdd, rtol=1e-6, atol=1e-6)
    assert energy(mech, Q, Qd).shape == (3, 3)
    assert momentum(mech, Q, Qd).angular.shape == (3, 3)
    assert center_of_mass(mech, Q).shape == (3, 3)
    home = mech.q_home
    for link in mech.links:
        if link.joint in (JointType.SPHERICAL, JointType.FREE):
            assert np.linalg.norm(home[mech.q_slice(link.name)][-4:]) == pytest.approx(1.0)


# ----------------------------------------------------------------------------------
# Free fall: the trajectory against Pinocchio's, and the laws of mechanics
# ----------------------------------------------------------------------------------

def _pinocchio_free_fall(mech, q0, v0, t_out):
    """Pinocchio's aba stepped by SciPy's DOP853 on [q; v], quaternion components moving
    by their kinematic equation (not a chart): an integration independent of ArmDyn's."""
    model, data, ids = _pin(mech)
    Y = pinocchio_free_fall(model, data, q_to_pin(mech, model, ids, q0),
                            v_to_pin(mech, model, ids, v0), t_out)
    return model, ids, Y


def _floating_example():
    """A free trunk with a spherical shoulder, a revolute elbow and a universal wrist,
    spinning and tumbling."""
    rng = np.random.default_rng(7)

    def body(joint, name, **kw):
        return Link(joint=joint, name=name, mass=float(rng.uniform(1, 3)),
                    com=tuple(rng.uniform(-0.1, 0.1, 3)), inertia=random_inertia(rng, 0.02, 0.2),
                    **kw)

    links = (body(JointType.FREE, "trunk", home=(0.1, -0.2, 1.0) + random_unit_quaternion(rng)),
             body(JointType.SPHERICAL, "shoulder", xyz=(0.2, 0.0, 0.3), rpy=(0.3, 0.0, 0.2),
                  home=random_unit_quaternion(rng)),
             Link(joint=JointType.REVOLUTE, name="elbow", a=0.3, alpha=0.5, theta=0.4, mass=1.0,
                  com=(-0.15, 0.0, 0.0), inertia=(0.01, 0.02, 0.02, 0, 0, 0)),
             body(JointType.UNIVERSAL, "wrist", xyz=(0.05, 0.0, 0.0), home=(0.2, -0.3)))
    mech = Mechanism("tumbler", [Chain("arm", links)], gravity=(0.0, 0.0, -9.81))
    v0 = np.array([0.5, -1.0, 2.0, 0.3, 0.2, 1.0, 1.5, -0.5, 0.7, 2.0, -1.0, 0.5])
    return mech, v0


def test_free_fall_follows_pinocchio_for_one_second():
    mech, v0 = _floating_example()
    run = simulate(mech, 1.0, qd0=v0, rtol=1e-11, atol=1e-11, dt_out=0.05, stops=False)
    model, ids, Y = _pinocchio_free_fall(mech, mech.q_home, v0, run.t)
    for s in range(len(run.t)):
        q_ref_core = q_from_pin(mech, model, ids, Y[s, :model.nq])
        for link in mech.links:
            a, b = q_ref_core[mech.q_slice(link.name)], run.q[s, mech.q_slice(link.name)]
            if link.joint in (JointType.SPHERICAL, JointType.FREE):
                ra, rb = a[-4:] / np.linalg.norm(a[-4:]), b[-4:]
                assert min(np.abs(ra - rb).max(), np.abs(ra + rb).max()) < 1e-7, link.name
                a, b = a[:-4], b[:-4]
            np.testing.assert_allclose(b, a, atol=1e-7, err_msg=link.name)
        v_ref = v_from_pin(mech, model, ids, Y[s, model.nq:])
        np.testing.assert_allclose(run.qd[s], v_ref, atol=1e-6)


def test_a_floating_free_fall_keeps_momentum_energy_and_unit_quaternions():
    """10 s of free fall: the angular momentum about the mass centre stays, the mass
    centre follows c0 + c0' t + g t^2 / 2, energy stays, quaternions stay unit."""
    mech, v0 = _floating_example()
    run = simulate(mech, 10.0, qd0=v0, stops=False)
    p = momentum(mech, run.q, run.qd)
    H = p.angular
    assert np.abs(H - H[0]).max() < 1e-6 * max(1.0, np.abs(H[0]).max())
    t = run.t[:, None]
    c = p.center_of_mass
    predicted = c[0] + p.linear[0] / mech.total_mass * t + 0.5 * np.array(mech.gravity) * t**2
    assert np.abs(c - predicted).max() < 1e-6
    E = run.energy[:, 2]
    assert np.abs(E - E[0]).max() < 1e-6 * max(1.0, run.energy[:, 0].max())
    for link in mech.links:
        if link.joint in (JointType.SPHERICAL, JointType.FREE):
            quats = run.q[:, mech.q_slice(link.name)][:, -4:]
            assert np.abs(np.linalg.norm(quats, axis=1) - 1.0).max() < 1e-12


def test_a_steady_external_force_accelerates_the_mass_centre_by_f_over_m():
    """A constant force F on the trunk, applied at its mass centre... anywhere: the mass
    centre moves as c'' = g + F / m (Newton's second law of the whole system)."""
    mech, v0 = _floating_example()
    F = np.array([3.0, -2.0, 5.0])
    f_ext = np.zeros((mech.n, 6))
    f_ext[0, 3:] = F   # a pure force at the trunk's origin
    run = simulate(mech, 2.0, qd0=v0, f_ext=f_ext, stops=False)
    p = momentum(mech, run.q, run.qd)
    t = run.t[:, None]
    acc = np.array(mech.gravity) + F / mech.total_mass
    predicted = p.center_of_mass[0] + p.linear[0] / mech.total_mass * t + 0.5 * acc * t**2
    assert np.abs(p.center_of_mass - predicted).max() < 1e-6


def test_a_torque_function_sees_q_and_the_rates_of_their_own_sizes():
    mech, v0 = _floating_example()
    seen = []

    def damp_the_joints(t, q, qd):
        seen.append((q.shape, qd.shape))
        tau = -0.5 * qd
        tau[:6] = 0.0  # nothing drives the free joint
        return tau

    run = simulate(mech, 0.5, qd0=v0, tau=damp_the_joints, stops=False)
    assert seen[0] == ((mech.nq,), (mech.nv,))
    assert run.tau.shape == (len(run.t), mech.nv)
    # internal damping takes energy out but leaves the angular momentum
    H = momentum(mech, run.q, run.qd).angular
    assert np.abs(H - H[0]).max() < 1e-6 * np.abs(H[0]).max()
    assert run.energy[-1, 2] < run.energy[0, 2]


# ----------------------------------------------------------------------------------
# Bad input: one typed error naming the joint and the field
# ----------------------------------------------------------------------------------

def _with_trunk(**changes):
    trunk = dict(joint=JointType.FREE, name="trunk", mass=2.0, inertia=(0.1, 0.1, 0.1, 0, 0, 0))
    trunk.update(changes)
    return Mechanism("m", [Chain("c", [Link(**trunk)])])


def test_a_quaternion_far_from_unit_is_refused_naming_the_joint():
    with pytest.raises(MechanismError) as e:
        _with_trunk(home=(0, 0, 0, 0, 0, 0, 2.0))
    assert "trunk" in str(e.value) and e.value.field == "home"
    m = _with_trunk(home=(0, 0, 0, 0, 0, 0, 1.0005))  # within the tolerance: normalised
    assert m.q_home[6] == pytest.approx(1.0, abs=1e-15)


def test_a_free_joint_must_be_the_root_of_a_chain_on_the_base():
    base = Link(name="root", mass=1.0, inertia=(0.1, 0.1, 0.1, 0, 0, 0))
    free = Link(joint=JointType.FREE, name="loose", mass=1.0, inertia=(0.1, 0.1, 0.1, 0, 0, 0))
    with pytest.raises(MechanismError) as e:
        Mechanism("m", [Chain("c", [base, free])])
    assert "loose" in str(e.value) and e.value.field == "joint"


def test_home_values_of_the_wrong_length_and_limits_on_a_ball_are_refused():
    with pytest.raises(MechanismError) as e:
        _with_trunk(home=(0, 0, 0, 1.0))
    assert e.value.field == "home"
    with pytest.raises(MechanismError) as e:
        Mechanism("m", [Chain("c", [Link(joint=JointType.SPHERICAL, name="ball", mass=1.0,
                                         inertia=(0.1, 0.1, 0.1, 0, 0, 0),
                                         limits=(-1.0, 1.0))])])
    assert e.value.field == "limits"


def test_a_serial_robot_keeps_to_dh_rows():
    with pytest.raises(RobotError) as e:
        Robot("r", [Link(joint=JointType.SPHERICAL, name="ball", mass=1.0,
                         inertia=(0.1, 0.1, 0.1, 0, 0, 0))])
    assert e.value.field == "joint"


def test_states_of_the_wrong_size_or_not_finite_are_refused_by_name():
    mech, v0 = _floating_example()
    q = mech.q_home
    with pytest.raises(ArgumentError, match="qd"):
        forward_dynamics(mech, q, np.zeros(mech.nq), np.zeros(mech.nv))
    bad = q.copy()
    bad[4] = math.nan
    with pytest.raises(ArgumentError, match="q"):
        momentum(mech, bad, v0)
    with pytest.raises(ArgumentError, match="q0"):
        simulate(mech, 0.1, q0=np.zeros(mech.nv))


# ----------------------------------------------------------------------------------
# Closed loops with joints of several degrees of freedom
# ----------------------------------------------------------------------------------

_I = (0.01, 0.012, 0.014, 0.0, 0.0, 0.0)


def _rusr():
    """A spatial four-bar: crank (revolute) - coupler (universal) - rocker (revolute on a
    second base point), closed by a spherical cut joint: 1 + 2 + 1 - 3 = 1 DOF."""
    from armdyn.core import Assembly, Loop, LoopJointType, Placement
    crank = Link(joint=JointType.REVOLUTE, name="crank", a=0.2, mass=1.0, com=(-0.1, 0, 0),
                 inertia=_I, actuated=True)
    coupler = Link(joint=JointType.UNIVERSAL, name="coupler", mass=1.0, com=(0.25, 0, 0),
                   inertia=_I, home=(0.5, 0.1))
    rocker = Link(joint=JointType.REVOLUTE, name="rocker", a=0.4, alpha=0.3, theta=1.2, mass=1.0,
                  com=(-0.2, 0, 0), inertia=_I)
    loop = Loop("C", LoopJointType.SPHERICAL, ("coupler", "rocker"),
                at=((0.5, 0.0, 0.1), (0.0, 0.0, 0.0)))
    return Mechanism("rusr", [Chain("a", [crank, coupler]),
                              Chain("b", [rocker], base=Placement((0.45, 0.1, 0.0)))],
                     loops=[loop], gravity=(0.0, -9.81, -3.0),
                     assembly=Assembly(independent=("crank",)))


def test_a_loop_through_a_universal_joint_stays_closed_and_keeps_its_energy():
    from armdyn.core import closed_chain_inverse_dynamics, loop_residual
    mech = _rusr()
    assert (mech.n, mech.nq, mech.nv, mech.dof) == (3, 4, 4, 1)
    assert np.abs(loop_residual(mech, mech.q_home)).max() < 1e-12
    run = simulate(mech, 2.0, stops=False)
    assert run.loop_residual.max() < 1e-10
    E = run.energy[:, 2]
    assert np.abs(E - E[0]).max() < 1e-7 * max(1.0, run.energy[:, 0].max())
    assert run.energy[:, 0].max() > 0.5  # it moved
    # a free fall needs no actuator force: inverse dynamics along it gives ~0
    s = len(run.t) // 2
    tau = closed_chain_inverse_dynamics(mech, run.q[s], run.qd[s], run.qdd[s]).tau
    assert np.abs(tau).max() < 1e-6


def test_a_closed_loop_riding_a_free_body_keeps_momentum_and_closure():
    """A planar four-bar on a free chassis: the chassis tumbles while the loop flaps;
    angular momentum about the mass centre and the closure hold."""
    mech = floating_four_bar()
    assert mech.dof == 7
    v0 = np.zeros(mech.nv)
    v0[:6] = [0.5, -0.3, 1.0, 0.2, 0.0, 0.1]
    v0[mech.v_slice("crank")] = 3.0
    from armdyn.core import velocity_transformation
    vt = velocity_transformation(mech, mech.q_home)
    v0 = vt.R @ v0[list(vt.rates)]
    run = simulate(mech, 2.0, qd0=v0, stops=False)
    assert run.loop_residual.max() < 1e-10
    H = run.angular_momentum
    assert np.abs(H - H[0]).max() < 1e-7 * max(1.0, np.abs(H[0]).max())
    E = run.energy[:, 2]
    assert np.abs(E - E[0]).max() < 1e-7 * max(1.0, run.energy[:, 0].max())
