"""The names the issues promise users, imported exactly as written there."""
from __future__ import annotations

from pathlib import Path

FOURBAR = Path(__file__).resolve().parents[1] / "robots" / "fourbar.toml"


def test_the_promised_names_import_from_core():
    from armdyn.core import (assemble, energy, forward_dynamics, inverse_dynamics,
                             load_mechanism, load_robot, loop_residual, mass_matrix,
                             save_mechanism, save_robot, simulate)
    from armdyn.core import Mechanism

    mech = load_mechanism(FOURBAR)
    # the attributes the mechanism contract promises
    assert (mech.n, mech.dof) == (3, 1)
    assert mech.joint_names == ("crank", "coupler", "rocker")
    assert mech.actuated == (0,)
    assert abs(loop_residual(mech, mech.q_home)).max() < 1e-10
    assert (assemble(mech, mech.q_home) == mech.q_home).all()
