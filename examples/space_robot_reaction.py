"""The space robot's satellite reacts to its arm: robots/space_robot.toml, in space and at
rest, turns its waist by 90 deg and raises its shoulder by 45 deg; nothing pushes the
satellite, yet it turns the other way and its centre moves, so that the momentum stays
zero and the mass centre of the whole stays put.

Run from the repository root:

    .venv/bin/python examples/space_robot_reaction.py          # 4 s move, 1 s to settle
    .venv/bin/python examples/space_robot_reaction.py 2        # a 2 s move

Each arm joint follows a cycloid (seed 001 eq. 22) from home to its target under a PD
torque Kp (q_ref - q) - Kd q' (gains from the mass matrix at home: a 4 Hz, critically
damped servo per joint); the free joint of the satellite gets no force.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numba
import numpy as np
from scipy.spatial.transform import Rotation

from armdyn.core import JointType, load_mechanism, mass_matrix, simulate

ROOT = Path(__file__).resolve().parents[1]
#: The move: joint name -> change from home, deg.
MOVE = {"waist": 90.0, "shoulder": -45.0}


def cycloid_torque(mech, move: dict, duration: float, frequency: float = 4.0):
    """tau(t, q, qd, out) (numba) taking the named joints from home by `move` (rad) along
    cycloids of `duration` s, holding the other revolute joints at home."""
    revolute = [link.name for link in mech.links if link.joint == JointType.REVOLUTE]
    iq = np.array([mech.q_slice(n).start for n in revolute], dtype=np.int64)
    iv = np.array([mech.v_slice(n).start for n in revolute], dtype=np.int64)
    home = np.array([mech.q_home[i] for i in iq])
    delta = np.array([move.get(n, 0.0) for n in revolute])
    M = mass_matrix(mech, mech.q_home)
    w = 2.0 * math.pi * frequency
    kp = np.array([M[i, i] * w * w for i in iv])
    kd = np.array([2.0 * M[i, i] * w for i in iv])
    nv = mech.nv
    T = float(duration)

    @numba.njit
    def tau(t, q, qd, out):
        s = min(max(t / T, 0.0), 1.0)
        c = s - math.sin(2.0 * math.pi * s) / (2.0 * math.pi)  # cycloid, 0 -> 1
        cd = (1.0 - math.cos(2.0 * math.pi * s)) / T if t < T else 0.0
        for k in range(nv):
            out[k] = 0.0
        for j in range(iq.shape[0]):
            ref = home[j] + delta[j] * c
            out[iv[j]] = kp[j] * (ref - q[iq[j]]) + kd[j] * (delta[j] * cd - qd[iv[j]])

    return tau


def main(argv: list[str]) -> None:
    duration = float(argv[0]) if argv else 4.0
    mech = load_mechanism(ROOT / "robots" / "space_robot.toml")
    move = {name: math.radians(deg) for name, deg in MOVE.items()}
    run = simulate(mech, duration + 1.0, tau=cycloid_torque(mech, move, duration), dt_out=0.05)
    sat = mech.q_slice("satellite")
    for k in range(0, len(run), 20):
        q = run.q[k]
        turn = Rotation.from_quat(q[sat][3:]).as_rotvec()
        arm = {n: math.degrees(q[mech.q_slice(n)][0] - mech.q_home[mech.q_slice(n)][0])
               for n in MOVE}
        print(f"t = {run.t[k]:4.1f} s  arm {arm['waist']:6.1f} {arm['shoulder']:6.1f} deg   "
              f"satellite turned {np.degrees(turn).round(2)} deg, centre at "
              f"{(q[sat][:3] * 100).round(2)} cm")
    print(f"largest |momentum|: linear {np.abs(run.linear_momentum).max():.1e} kg m/s, "
          f"angular {np.abs(run.angular_momentum).max():.1e} kg m^2/s; the mass centre "
          f"moved {np.abs(run.center_of_mass - run.center_of_mass[0]).max():.1e} m")


if __name__ == "__main__":
    main(sys.argv[1:])
