"""The one compiled model type and the field tables its kernels read (issue: the house).

- every description (a Robot, a Mechanism, a URDF) compiles into a `Model` whose
  attributes are always present, and every algorithm takes the Model or the description
  alike;
- the buffers are declared once (`core.kernels.fields`): the compiled views and the
  numpy views of a table lay every field at the same place, a buffer shorter than its
  fields is an error, not a view past its end;
- arguments are checked in one place, with the project's own errors.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import njit

from armdyn.core import (ArgumentError, ArgumentTypeError, ArmDynError, Chain, Link, Model,
                         Robot, energy, forward_dynamics, inverse_dynamics, load_mechanism,
                         load_robot, mass_matrix)
from armdyn.core.kernels.buffers import KERNEL_OPTIONS
from armdyn.core.kernels.data import DATA_FIELDS, data_views, new_workspace
from armdyn.core.kernels.layout import MODEL_FIELDS, model_views
from armdyn.core.model.arguments import joint_vector, model_of
from armdyn.core.model.compile import compile_model

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
ALWAYS = ("n", "nq", "nv", "dof", "joint_names", "parent", "actuated", "independent",
          "loops", "chains", "gravity", "kernel", "q_home", "joint_limits", "is_revolute")


@pytest.mark.parametrize("path", sorted(ROBOTS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_bundled_model_compiles_to_a_model_with_every_attribute(path):
    description = load_mechanism(path)  # robot files load too (one chain)
    model = description.model
    assert isinstance(model, Model) and model.model is model
    for name in ALWAYS:
        assert getattr(model, name) is not None, name
    assert model.n == len(model.joint_names)
    assert model.dof <= model.nv and set(model.independent) <= set(range(model.n))
    # the description shows the same joint table (one home: the model)
    assert description.joint_names == model.joint_names
    np.testing.assert_array_equal(description.q_home, model.q_home)
    # each joint's values and rates, in joint order, as docs/floating-bases.md lays them
    # out (a quaternion has 4 values and 3 rates; DH rows one of each)
    sizes = {"revolute": (1, 1), "prismatic": (1, 1), "spherical": (4, 3),
             "universal": (2, 2), "free": (7, 6)}
    iq = iv = 0
    for link, name in zip(description.links, model.joint_names):
        nq, nv = sizes[link.joint.value]
        assert model.q_slice(name) == slice(iq, iq + nq)
        assert model.v_slice(name) == slice(iv, iv + nv)
        iq, iv = iq + nq, iv + nv
    assert (model.nq, model.nv) == (iq, iv)


def test_a_serial_arm_is_a_one_chain_model_without_loops():
    robot = load_robot(ROBOTS / "puma560_saha.toml")
    m = robot.model
    assert (len(m.chains), m.loops, m.dof) == (1, (), 6)
    assert m.is_serial_arm and robot.is_serial_arm
    assert m.actuated == m.independent == tuple(range(6))
    assert not load_mechanism(ROBOTS / "fourbar.toml").model.is_serial_arm
    # a single chain placed away from the base frame is drawn as a mechanism
    assert not load_mechanism(ROBOTS / "five_link_pendulum.toml").is_serial_arm
    with pytest.raises(KeyError, match="no joint named"):
        m.q_slice("elbow of another robot")


def test_algorithms_take_the_model_and_its_description_alike():
    robot = load_robot(ROBOTS / "stanford_saha2009.toml")
    rng = np.random.default_rng(4)
    q, qd, x = rng.normal(size=(3, robot.n))
    for f, args in ((inverse_dynamics, (q, qd, x)), (forward_dynamics, (q, qd, x)),
                    (mass_matrix, (q,)), (energy, (q, qd))):
        np.testing.assert_array_equal(f(robot, *args), f(robot.model, *args))


def test_a_model_compiled_from_chains_alone_equals_the_robots():
    """compile_model is what a Robot runs when it is built: the same rows give the same
    dynamics, without the Robot (no validation)."""
    robot = load_robot(ROBOTS / "ur5e.toml")
    model = compile_model(name="bare", chains=(Chain("arm", robot.links),),
                          gravity=robot.gravity, actuated_flags=[True] * robot.n)
    q, qd, qdd = np.full((3, robot.n), 0.3)
    np.testing.assert_array_equal(inverse_dynamics(model, q, qd, qdd),
                                  inverse_dynamics(robot, q, qd, qdd))


def test_something_that_is_no_model_is_refused_by_type():
    with pytest.raises(ArgumentTypeError, match="expected a Model, Robot or Mechanism"):
        inverse_dynamics("puma", np.zeros(6), np.zeros(6), np.zeros(6))
    with pytest.raises(TypeError):
        model_of(5)


# ----------------------------------------------------------------------------------
# Field tables
# ----------------------------------------------------------------------------------

@njit(**{k: v for k, v in KERNEL_OPTIONS.items() if k != "cache"})
def _mark_four_fields(F, I, ws):
    """Write 1, 2, 3, 4 into an element of the first, two middle and the last field of
    Data, through the compiled views (a test-only kernel)."""
    mv = model_views(F, I)
    D = data_views(mv, ws)
    D.Rj[0, 0, 0] = 1.0
    D.J[0, 0] = 2.0
    D.delassus[mv.m - 1, mv.m - 1] = 3.0
    D.chol[0] = 4.0
    return mv.n + mv.m


def test_compiled_and_numpy_views_lay_the_fields_at_the_same_places():
    mech = load_mechanism(ROBOTS / "carpet_scraper_saha.toml")
    k = mech.kernel
    ws = new_workspace(k)
    assert _mark_four_fields(k.F, k.I, ws) == k.n + k.m
    D = DATA_FIELDS.numpy_views((ws,), n=k.n, nv=k.nv, m=k.m, ne=k.ne)
    assert (D.Rj[0, 0, 0], D.J[0, 0], D.delassus[-1, -1], D.chol[0]) == (1.0, 2.0, 3.0, 4.0)
    assert np.count_nonzero(ws) == 4
    # the model's numpy views read the counts and the joint table where the kernels do
    v = k.views
    assert (v.n, v.nq, v.nv, v.nl, v.m) == (k.n, k.nq, k.nv, k.nl, k.m)
    assert list(v.counts) == [k.n, k.nq, k.nv, k.nl, k.m, k.ni, k.ne, k.nr]
    assert list(v.iq) == list(range(k.n)) and list(v.iv) == list(range(k.n))


def test_a_buffer_shorter_than_its_fields_is_an_error_not_a_view_past_its_end():
    mech = load_mechanism(ROBOTS / "fourbar.toml")
    k = mech.kernel
    short = new_workspace(k)[:-1].copy()
    with pytest.raises(IndexError, match="shorter than its fields"):
        _mark_four_fields(k.F, k.I, short)
    with pytest.raises(IndexError, match="past the end"):
        DATA_FIELDS.numpy_views((short,), n=k.n, nv=k.nv, m=k.m, ne=k.ne)


def test_the_documented_tables_are_the_declared_fields():
    import armdyn.core.kernels.data as data
    import armdyn.core.kernels.layout as layout
    for module, table in ((data, DATA_FIELDS), (layout, MODEL_FIELDS)):
        assert "{fields}" not in module.__doc__
        for field in table.fields:
            assert f"    {field.name} (" in module.__doc__, field.name


# ----------------------------------------------------------------------------------
# Arguments
# ----------------------------------------------------------------------------------

def test_joint_vectors_are_checked_in_one_place_with_the_projects_errors():
    assert joint_vector(None, 3, "q0", default=[1, 2, 3]).tolist() == [1.0, 2.0, 3.0]
    assert joint_vector(0.5, 3, "damping", scalar=True).tolist() == [0.5] * 3
    with pytest.raises(ArgumentError, match=r"q must have shape \(3,\), got \(2,\)"):
        joint_vector([1.0, 2.0], 3, "q")
    with pytest.raises(ArgumentError, match="qd must be finite, got nan at joint 2"):
        joint_vector([0.0, np.nan, 0.0], 3, "qd")
    with pytest.raises(ArgumentTypeError, match="tau must be 3 numbers"):
        joint_vector("abc", 3, "tau")
    for error in (ArgumentError("x"), ArgumentTypeError("x")):
        assert isinstance(error, ArmDynError)
    assert issubclass(ArgumentError, ValueError) and issubclass(ArgumentTypeError, TypeError)


def test_a_robot_keeps_its_description_and_compiles_once():
    robot = Robot("two", (Link(a=1.0, name="a"), Link(a=0.5, name="b")))
    assert robot.model is robot.model and robot.model.name == "two"
    assert robot.model.chains[0].links == robot.links
