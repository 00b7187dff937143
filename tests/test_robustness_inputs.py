"""Robustness, round 2: every public function refuses what it cannot compute, with the
project's own errors.

- a non-finite argument (nan, inf) raises ArgumentError naming it, on every call: also
  after a first valid call (when the compiled fast path has been compiled), on trees,
  mechanisms and batches;
- finite arguments too large for floating point give a result that is finite or a
  ResultOverflowError, never nan or inf;
- every refusal of an argument is an ArmDynError that is also a ValueError (a wrong
  value) or a TypeError (a wrong type).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import armdyn.core as core
from armdyn.core import (ArgumentError, ArgumentTypeError, ArmDynError, JointStops,
                         ResultOverflowError, forward_dynamics, inverse_dynamics, load_mechanism,
                         load_robot)
from armdyn.core.io.urdf import mechanism_from_urdf

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
PUMA = load_robot(ROBOTS / "puma560_saha.toml")
FOURBAR = load_mechanism(ROBOTS / "fourbar.toml")
# a tree of three chains (no loops) and the Stanford arm (a prismatic joint)
STANFORD = load_robot(ROBOTS / "stanford_saha2009.toml")
# a floating base (a free joint: nq = 13, nv = 12) carrying a 6R arm
SPACE_ROBOT = load_mechanism(ROBOTS / "space_robot.toml")


def _state(model, scale=0.3):
    rng = np.random.default_rng(7)
    n = model.n
    return model.q_home + scale * rng.standard_normal(n), rng.standard_normal(n), \
        rng.standard_normal(n)


def _cases():
    """(label, function, keyword arguments, the array arguments to poison): one row per
    public function of `core.__all__` that takes numbers."""
    q, qd, qdd = _state(PUMA)
    fq = FOURBAR.q_home
    fqd = core.velocity_transformation(FOURBAR, fq).R @ np.array([0.4])
    z3 = np.zeros(3)
    z6 = np.zeros(6)
    rows = [
        ("inverse_dynamics", core.inverse_dynamics, dict(model=PUMA, q=q, qd=qd, qdd=qdd),
         ("q", "qd", "qdd")),
        ("inverse_dynamics f_ext", core.inverse_dynamics,
         dict(model=PUMA, q=q, qd=qd, qdd=qdd, f_ext=np.ones(6)), ("q", "qd", "qdd", "f_ext")),
        ("forward_dynamics", core.forward_dynamics, dict(model=PUMA, q=q, qd=qd, tau=qdd),
         ("q", "qd", "tau")),
        ("forward_dynamics composite", core.forward_dynamics,
         dict(model=PUMA, q=q, qd=qd, tau=qdd, method="composite"), ("q", "qd", "tau")),
        ("forward_dynamics batch", core.forward_dynamics,
         dict(model=PUMA, q=np.tile(q, (3, 1)), qd=np.tile(qd, (3, 1)),
              tau=np.tile(qdd, (3, 1))), ("q", "qd", "tau")),
        ("inverse_dynamics batch", core.inverse_dynamics,
         dict(model=PUMA, q=np.tile(q, (3, 1)), qd=np.tile(qd, (3, 1)),
              qdd=np.tile(qdd, (3, 1))), ("q", "qd", "qdd")),
        ("forward_dynamics loops", core.forward_dynamics,
         dict(model=FOURBAR, q=fq, qd=fqd, tau=z3), ("q", "qd", "tau")),
        ("inverse_dynamics loops", core.inverse_dynamics,
         dict(model=FOURBAR, q=fq, qd=fqd, qdd=z3), ("q", "qd", "qdd")),
        ("tree_inverse_dynamics", core.tree_inverse_dynamics,
         dict(model=PUMA, q=q, qd=qd, qdd=qdd), ("q", "qd", "qdd")),
        ("mass_matrix", core.mass_matrix, dict(model=PUMA, q=q), ("q",)),
        ("composite_body_inertias", core.composite_body_inertias, dict(model=PUMA, q=q),
         ("q",)),
        ("articulated_body_inertias", core.articulated_body_inertias, dict(model=PUMA, q=q),
         ("q",)),
        ("udu_factors", core.udu_factors, dict(model=PUMA, q=q), ("q",)),
        ("convective_torques", core.convective_torques, dict(model=PUMA, q=q, qd=qd),
         ("q", "qd")),
        ("gravity_torques", core.gravity_torques, dict(model=PUMA, q=q), ("q",)),
        ("energy", core.energy, dict(model=PUMA, q=q, qd=qd), ("q", "qd")),
        ("center_of_mass", core.center_of_mass, dict(model=PUMA, q=q), ("q",)),
        ("momentum", core.momentum, dict(model=PUMA, q=q, v=qd), ("q", "v")),
        ("forward_kinematics", core.forward_kinematics, dict(model=PUMA, q=q), ("q",)),
        ("tool_jacobian", core.tool_jacobian, dict(model=PUMA, q=q), ("q",)),
        ("solve_position", core.solve_position,
         dict(model=PUMA, q0=q, target_point=np.array([0.3, 0.2, 0.4]),
              target_rotation=np.eye(3)), ("q0", "target_point", "target_rotation")),
        ("assemble", core.assemble, dict(model=FOURBAR, q=fq), ("q",)),
        ("loop_residual", core.loop_residual, dict(model=FOURBAR, q=fq), ("q",)),
        ("loop_jacobian", core.loop_jacobian, dict(model=FOURBAR, q=fq), ("q",)),
        ("loop_acceleration_term", core.loop_acceleration_term,
         dict(model=FOURBAR, q=fq, qd=fqd), ("q", "qd")),
        ("mobility", core.mobility, dict(model=FOURBAR, q=fq), ("q",)),
        ("velocity_transformation", core.velocity_transformation,
         dict(model=FOURBAR, q=fq, qd=fqd), ("q", "qd")),
        ("reduced_mass_matrix", core.reduced_mass_matrix, dict(model=FOURBAR, q=fq), ("q",)),
        ("constrained_forward_dynamics", core.constrained_forward_dynamics,
         dict(model=FOURBAR, q=fq, qd=fqd, tau=z3), ("q", "qd", "tau")),
        ("constrained_forward_dynamics minimal", core.constrained_forward_dynamics,
         dict(model=FOURBAR, q=fq, qd=fqd, tau=z3, method="minimal"), ("q", "qd", "tau")),
        ("cut_joint_forces", core.cut_joint_forces, dict(model=FOURBAR, q=fq, qd=fqd, tau=z3),
         ("q", "qd", "tau")),
        ("closed_chain_inverse_dynamics", core.closed_chain_inverse_dynamics,
         dict(model=FOURBAR, q=fq, qd=fqd, qdd=z3), ("q", "qd", "qdd")),
        ("closed_chain_motion", core.closed_chain_motion,
         dict(model=FOURBAR, q_guess=fq, z=fq[:1][None], zd=np.array([[0.4]]),
              zdd=np.array([[0.0]])), ("q_guess", "z", "zd", "zdd")),
        ("cycloidal_trajectory", core.cycloidal_trajectory,
         dict(q_start=q, q_end=q + 0.1, duration=1.0, times=np.linspace(0, 1, 5)),
         ("q_start", "q_end", "duration", "times")),
        ("check_limits", core.check_limits,
         dict(model=PUMA, motion=core.Quintic(q, q + 0.1, 1.0), rate_limit=1.0,
              accel_limit=1.0), ("rate_limit", "accel_limit")),
        ("limit_violations", core.limit_violations,
         dict(model=PUMA, motion=core.Trapezoid(q, q + 0.1, 1.0), rate_limit=1.0,
              accel_limit=1.0, torque_limit=1e3), ("rate_limit", "accel_limit",
                                                    "torque_limit")),
        ("friction_torques", core.friction_torques, dict(model=PUMA, qd=qd), ("qd",)),
        ("motor_torques", core.motor_torques, dict(model=PUMA, tau=z6), ("tau",)),
        ("joint_torque_regressor", core.joint_torque_regressor,
         dict(model=PUMA, q=q, qd=qd, qdd=qdd), ("q", "qd", "qdd")),
        ("torque_parts", core.torque_parts,
         dict(model=PUMA, q=q[None], qd=qd[None], qdd=qdd[None]), ("q", "qd", "qdd")),
        ("output_grid", core.output_grid, dict(duration=1.0, dt_out=0.1),
         ("duration", "dt_out")),
        ("run_inverse_dynamics", core.run_inverse_dynamics,
         dict(model=PUMA, q_start=q, q_end=q + 0.1, duration=0.1, dt_out=0.05),
         ("q_start", "q_end", "duration", "dt_out", "f_ext")),
        ("simulate", core.simulate,
         dict(robot=PUMA, duration=0.02, q0=q, qd0=qd, tau=z6, damping=0.1, f_ext=z6,
              dt_out=0.01), ("duration", "q0", "qd0", "tau", "damping", "f_ext", "dt_out",
                             "rtol", "atol")),
        ("matrix_inverse_dynamics", core.matrix_inverse_dynamics,
         dict(model=PUMA, q=q, qd=qd, qdd=qdd, f_ext=z6), ("q", "qd", "qdd", "f_ext")),
        ("matrix_mass_matrix", core.matrix_mass_matrix, dict(model=PUMA, q=q), ("q",)),
        ("matrix_energy", core.matrix_energy, dict(model=PUMA, q=q, qd=qd), ("q", "qd")),
        ("lagrange_inverse_dynamics", core.lagrange_inverse_dynamics,
         dict(model=PUMA, q=q, qd=qd, qdd=qdd), ("q", "qd", "qdd")),
        ("link_matrices", core.link_matrices, dict(model=PUMA, q=q, qd=qd, qdd=qdd),
         ("q", "qd", "qdd")),
        ("link_motion_matrices", core.link_motion_matrices,
         dict(model=PUMA, q=q, qd=qd, qdd=qdd, link=2), ("q", "qd", "qdd")),
        ("joint_action_matrices", core.joint_action_matrices,
         dict(model=PUMA, q=q, qd=qd, qdd=qdd), ("q", "qd", "qdd")),
        ("loop_closure_matrices", core.loop_closure_matrices, dict(mech=FOURBAR, q=fq, qd=fqd),
         ("q", "qd")),
        ("matrix_closed_chain_inverse_dynamics", core.matrix_closed_chain_inverse_dynamics,
         dict(mech=FOURBAR, q=fq, qd=fqd, qdd=z3), ("q", "qd", "qdd")),
        ("hybrid_dynamics", core.hybrid_dynamics, dict(model=PUMA, q=q, qd=qd, qdd=qdd),
         ("q", "qd", "qdd")),
        ("hybrid_dynamics floating", core.hybrid_dynamics,
         dict(model=SPACE_ROBOT, q=SPACE_ROBOT.q_home, qd=np.full(SPACE_ROBOT.nv, 0.1),
              qdd=np.full(SPACE_ROBOT.nv, 0.2)), ("q", "qd", "qdd")),
        ("constrained_hybrid_dynamics", core.constrained_hybrid_dynamics,
         dict(model=SPACE_ROBOT, q=SPACE_ROBOT.q_home, qd=np.full(SPACE_ROBOT.nv, 0.1),
              qdd=np.full(SPACE_ROBOT.nv, 0.2), driven=[1, 2]), ("q", "qd", "qdd")),
        ("cycloidal_pose", core.cycloidal_pose,
         dict(model=SPACE_ROBOT, q_start=SPACE_ROBOT.q_home, q_end=SPACE_ROBOT.q_home,
              duration=1.0, times=np.array([0.0, 0.5])),
         ("q_start", "q_end", "duration", "times")),
        ("optimise_excitation", core.optimise_excitation,
         dict(model=PUMA, base_frequency=0.1, harmonics=1, samples=10, max_iterations=1,
              torque_limit=1e3), ("base_frequency", "torque_limit")),
        # a sweep's other numbers are in its run and grid (tests/test_sweep.py)
        ("sweep", core.sweep, dict(model=PUMA, run=core.InverseRun(q, duration=0.1),
                                   vary={"payload.mass": [1.0]}, workers=1, frame=False),
         ("workers",)),
    ]
    return rows


CASES = _cases()
POISONED = [(label, fn, kwargs, name) for label, fn, kwargs, names in CASES for name in names]


def _with(kwargs, name, value):
    """kwargs with argument `name` replaced by an array of its shape full of `value` (a
    number stays a number; an absent one becomes a (6,) wrench or a scalar)."""
    out = dict(kwargs)
    old = kwargs.get(name)
    if old is None:
        old = np.zeros(6) if name == "f_ext" else 1.0
    out[name] = value if np.ndim(old) == 0 else np.full(np.shape(old), value)
    return out


def test_every_numeric_public_function_is_audited():
    """A public function that takes numbers and is not in the table fails here."""
    audited = {fn.__name__ for _, fn, _, _ in CASES}
    not_numeric = {"constraint_row_labels", "load_mechanism", "load_robot", "load_urdf",
                   "save_mechanism", "save_robot", "save_urdf", "warm_up", "warm_up_display",
                   "pseudo_inertia", "inverse_dynamics_chunks", "simulate_chunks",
                   "load_motion", "gear_ratios", "parameter_names", "parameter_vector",
                   "sweep_chunks",
                   "identify"}  # its numbers come in Motions, checked as they are made
    public = {name for name in core.__all__ if callable(getattr(core, name))
              and not isinstance(getattr(core, name), type)}
    assert public - not_numeric - audited == set()


@pytest.mark.parametrize("label, fn, kwargs, name", POISONED,
                         ids=[f"{p[0]}-{p[3]}" for p in POISONED])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_arguments_are_refused_by_name(label, fn, kwargs, name, bad):
    fn(**kwargs)  # a valid call first: the compiled fast paths are then compiled
    with pytest.raises(ArgumentError, match=rf"\b{name}\b") as err:
        fn(**_with(kwargs, name, bad))
    assert isinstance(err.value, ValueError) and isinstance(err.value, ArmDynError)


def _finite_everywhere(result) -> bool:
    if dataclasses.is_dataclass(result):
        return all(_finite_everywhere(getattr(result, f.name))
                   for f in dataclasses.fields(result))
    if isinstance(result, tuple):
        return all(_finite_everywhere(r) for r in result)
    if isinstance(result, (np.ndarray, float, int)):
        a = np.asarray(result)
        return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())
    return True


@pytest.mark.parametrize("label, fn, kwargs, name", POISONED,
                         ids=[f"{p[0]}-{p[3]}" for p in POISONED])
@pytest.mark.parametrize("huge", [1e200, 1e308])
def test_huge_finite_arguments_never_give_nan(label, fn, kwargs, name, huge):
    """Too large for floating point: refused (ArgumentError: out of range), an
    ArmDynError of the model (a singular pose, loops that do not close) or a
    ResultOverflowError, but never a silent nan or inf, and never a bare error."""
    try:
        result = fn(**_with(kwargs, name, huge))
    except ArmDynError:
        return
    assert _finite_everywhere(result), f"{label}({name}={huge:g}) returned nan or inf"


@pytest.mark.parametrize("model", [PUMA, STANFORD, FOURBAR], ids=["puma", "stanford", "fourbar"])
def test_the_fast_paths_refuse_non_finite_input_after_a_valid_call(model):
    """The issue: once a process had made one valid call, nan and inf went through."""
    n = model.n
    q = model.q_home
    z = np.zeros(n)
    forward_dynamics(model, q, z, z)
    inverse_dynamics(model, q, z, z)
    for _ in range(2):  # and again, on every call
        bad = z.copy()
        bad[0] = np.nan
        with pytest.raises(ArgumentError, match=r"\bqd\b"):
            forward_dynamics(model, q, bad, z)
        bad[0] = np.inf
        with pytest.raises(ArgumentError, match=r"\btau\b"):
            forward_dynamics(model, q, z, bad)
        with pytest.raises(ArgumentError, match=r"\bqdd\b"):
            inverse_dynamics(model, q, z, bad)
        with pytest.raises(ArgumentError, match=r"\bq\b"):
            inverse_dynamics(model, np.full(n, np.nan), z, z)


@pytest.mark.parametrize("model", [PUMA, FOURBAR], ids=["puma", "fourbar"])
def test_results_that_overflow_are_errors(model):
    n = model.n
    q = model.q_home
    z = np.zeros(n)
    forward_dynamics(model, q, z, z)
    with pytest.raises(ResultOverflowError):
        forward_dynamics(model, q, np.full(n, 1e200), z)
    with pytest.raises(ResultOverflowError):
        forward_dynamics(model, q, z, np.full(n, 1e308))
    with pytest.raises(ResultOverflowError):
        inverse_dynamics(model, q, np.full(n, 1e200), z)
    with pytest.raises(ResultOverflowError):
        inverse_dynamics(model, q, z, np.full(n, 1e308))
    with pytest.raises(ResultOverflowError):
        core.energy(model, q, np.full(n, 1e200))
    if not model.loops:  # batches
        Q, Z = np.tile(q, (4, 1)), np.zeros((4, n))
        H = Z.copy()
        H[2] = 1e200
        with pytest.raises(ResultOverflowError):
            forward_dynamics(model, Q, H, Z)
        with pytest.raises(ResultOverflowError):
            inverse_dynamics(model, Q, H, Z)


@pytest.mark.parametrize("call, kind", [
    (lambda: core.output_grid(1e308, 0.01), ArgumentError),
    (lambda: core.output_grid(10.0, 1e-300), ArgumentError),
    (lambda: core.simulate(PUMA, 1e308), ArgumentError),
    (lambda: core.run_inverse_dynamics(PUMA, PUMA.q_home, PUMA.q_home, 1e308), ArgumentError),
    (lambda: core.forward_dynamics(PUMA, PUMA.q_home, np.zeros(6), np.zeros(6), method="x"),
     ArgumentError),
    (lambda: core.constrained_forward_dynamics(FOURBAR, FOURBAR.q_home, np.zeros(3),
                                               np.zeros(3), method="x"), ArgumentError),
    (lambda: core.closed_chain_inverse_dynamics(FOURBAR, FOURBAR.q_home, np.zeros(3),
                                                np.zeros(3), method="x"), ArgumentError),
    (lambda: core.link_motion_matrices(PUMA, PUMA.q_home, np.zeros(6), np.zeros(6), 1,
                                       frame="x"), ArgumentError),
    (lambda: JointStops(frequency=float("nan")), ArgumentError),
    (lambda: JointStops(damping=-1.0), ArgumentError),
    (lambda: JointStops(stiffness=0.0), ArgumentError),
    (lambda: core.simulate(PUMA, 0.1, stops=5), ArgumentTypeError),
    (lambda: mechanism_from_urdf(5), ArgumentTypeError),
    (lambda: core.forward_dynamics(PUMA, "abc", np.zeros(6), np.zeros(6)), ArgumentTypeError),
])
def test_refusals_are_the_projects_own_errors(call, kind):
    """`except ArmDynError` catches everything ArmDyn refuses; `except ValueError` (or
    TypeError, for a wrong type) keeps working."""
    with pytest.raises(kind) as err:
        call()
    assert isinstance(err.value, ArmDynError)
    assert isinstance(err.value, ValueError if kind is ArgumentError else TypeError)


# ----------------------------------------------------------------------------------
# Runs in time: tolerances in range, joint values and rates within physical bounds,
# joint limits warned about
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, value", [("rtol", 1e-30), ("rtol", 1e300), ("rtol", 0.0),
                                         ("atol", 1e300), ("atol", 1e-300), ("rtol", -1e-9)])
def test_tolerances_outside_their_range_are_refused_by_name(name, value):
    from armdyn.core.model.arguments import ATOL_RANGE, RTOL_RANGE
    low, high = RTOL_RANGE if name == "rtol" else ATOL_RANGE
    with pytest.raises(ArgumentError, match=rf"^{name} must be between {low:g} and {high:g}"):
        core.simulate(PUMA, 0.1, **{name: value})
    core.simulate(PUMA, 0.05, **{name: low})  # the ends are in range
    core.simulate(PUMA, 0.05, **{name: high})


def test_joint_values_and_rates_beyond_physical_bounds_are_refused_by_name():
    from armdyn.core.model.arguments import MAX_ANGLE, MAX_ANGULAR_RATE, MAX_LINEAR_RATE
    qd0 = np.zeros(6)
    qd0[0] = np.radians(1e6)  # the issue's --qd0 1e6 (deg/s): 17,453 rad/s
    with pytest.raises(ArgumentError, match=r"^qd0: joint 1 \('waist'\) is 1\.745e\+04 rad/s"):
        core.simulate(PUMA, 1.0, qd0=qd0)
    qd0[0] = MAX_ANGULAR_RATE  # the bound itself is allowed (and blows up or not: no hang)
    q0 = PUMA.q_home.copy()
    q0[1] = 2 * MAX_ANGLE
    with pytest.raises(ArgumentError, match=r"^q0: joint 2 \('shoulder'\)"):
        core.simulate(PUMA, 1.0, q0=q0)
    sqd0 = np.zeros(6)
    sqd0[2] = 2 * MAX_LINEAR_RATE  # the Stanford arm's boom, m/s
    with pytest.raises(ArgumentError, match=r"^qd0: joint 3 \('boom'\) is 2000 m/s"):
        core.simulate(STANFORD, 1.0, qd0=sqd0)


@pytest.mark.parametrize("target_deg, T, words", [
    (1e300, 10.0, r"^q_end: joint 1 \('waist'\) is 1\.745e\+298 rad, beyond the physical "
     r"bound of 10000 rad$"),
    (1e12, 10.0, r"^q_end: joint 1 \('waist'\) is 1\.745e\+10 rad"),
    (1e5, 0.1, r"^q_end \(the motion's peak rate .*\): joint 1 \('waist'\) is 3\.491e\+04 "
     r"rad/s, beyond the physical bound of 10000 rad/s$"),
])
def test_an_inverse_run_to_an_absurd_target_is_refused(target_deg, T, words):
    """The issue: --target 1e300 gave a CSV of nan, --target 1e12 gave 1.45e19 N m."""
    target = PUMA.q_home.copy()
    target[0] = np.radians(target_deg)
    with pytest.raises(ArgumentError, match=words):
        core.run_inverse_dynamics(PUMA, PUMA.q_home, target, T)


def test_poses_outside_the_joint_limits_are_warned_about_by_name():
    scara = load_robot(ROBOTS / "scara.toml")  # the quill (joint 3) slides in [0, 0.21] m
    target = scara.q_home.copy()
    target[2] = 0.25
    traj = core.run_inverse_dynamics(scara, scara.q_home, target, 1.0, dt_out=0.1)
    assert traj.warnings == ("q_end: joint 3 ('quill') is 0.04 m past its upper limit "
                             "(0.21 m)",)
    chunks = list(core.inverse_dynamics_chunks(scara, target, scara.q_home, 1.0, dt_out=0.1,
                                               chunk_samples=4))
    assert all(c.warnings == ("q_start: joint 3 ('quill') is 0.04 m past its upper limit "
                              "(0.21 m)",) for c in chunks)
    assert core.run_inverse_dynamics(scara, scara.q_home, scara.q_home, 1.0).warnings == ()
    # a start past a limit, stops or not
    on = core.simulate(scara, 0.05, q0=target).warnings
    off = core.simulate(scara, 0.05, q0=target, stops=False).warnings
    assert any("joint 3 ('quill') starts 0.04 m past its upper limit" in w for w in on)
    assert "q0: joint 3 ('quill') is 0.04 m past its upper limit (0.21 m); its stops are off" \
        in off


# ----------------------------------------------------------------------------------
# The memory of a run is bounded before it starts
# ----------------------------------------------------------------------------------

def long_chain(n: int):
    """A serial arm of n revolute links (each 0.1 m, 1 kg): many joints, many columns."""
    from armdyn.core import Link, Robot
    links = tuple(Link(name=f"link {k + 1}", a=0.1, mass=1.0, com=(-0.05, 0.0, 0.0))
                  for k in range(n))
    return Robot(name=f"{n}-link chain", links=links)


def test_a_run_whose_samples_exceed_the_memory_is_refused_before_it_starts():
    """The issue: -T 1e5 was accepted and grew to 6.4 GB. 10 million samples of a 100-joint
    arm would need about 120 GB: refused at once, naming the sizes, not after minutes."""
    import time
    from armdyn.core.sim.trajectory import Trajectory, available_memory
    arm = long_chain(100)
    need = 10_000_001 * 3 * Trajectory.bytes_per_sample(100)
    have = available_memory()
    assert have is not None and need > 0.5 * have  # (true on any machine of today)
    start = time.perf_counter()
    with pytest.raises(ArgumentError, match=r"^duration / dt_out asks for 10,000,001 samples"
                                            r": the run would need about 1\d\d GB"):
        core.simulate(arm, 1e5, dt_out=0.01)
    with pytest.raises(ArgumentError, match=r"GB this machine has available"):
        core.run_inverse_dynamics(arm, arm.q_home, arm.q_home, 1e5, dt_out=0.01)
    assert time.perf_counter() - start < 5.0
    core.simulate(arm, 0.02, dt_out=0.01)  # a small run of it goes
