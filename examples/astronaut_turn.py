"""The astronaut turns without pushing on anything: robots/astronaut.toml, arms out, circles
both arms in cones about its shoulder line; its angular momentum stays zero, yet after
every cycle (arms back where they started) its whole body has pitched forward.

Run from the repository root:

    .venv/bin/python examples/astronaut_turn.py            # 4 cycles of 2 s, 45 deg cones
    .venv/bin/python examples/astronaut_turn.py 5 1.5 30   # cycles, period (s), cone (deg)

The shoulders' abduction and flexion follow

    abduction = home + s A(t) cos(2 pi t / T),   flexion = A(t) sin(2 pi t / T)

(s = +1 left, -1 right: both arm tips go up, back, down, forward: the same sense about
the body's left-right axis), with A(t) rising smoothly from 0 over the first cycle and
falling back to 0 over the last, so the arms start and end at rest at home (the run
goes on for a second more, the arms held, so that the servos settle). Every other
revolute joint is held at home. Each joint gets a PD torque Kp (q_ref - q) - Kd q' with
gains from the mass matrix at home (a 4 Hz, critically damped servo per joint): joint
torques are internal forces, so the momentum about the mass centre stays what it was,
zero. The free joint (the pelvis) has no torque: nothing outside pushes the astronaut.

The same from Python:

    from armdyn.core import load_mechanism, simulate
    from examples.astronaut_turn import arm_circling_torque
    mech = load_mechanism("robots/astronaut.toml")
    run = simulate(mech, 9.0, tau=arm_circling_torque(mech, cycles=4, period=2.0))
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numba
import numpy as np

from armdyn.core import JointType, load_mechanism, mass_matrix, simulate

ROOT = Path(__file__).resolve().parents[1]
#: s the run goes on after the last cycle, the arms held at home
SETTLE = 1.0


def arm_circling_torque(mech, cycles: int = 4, period: float = 2.0,
                        cone_deg: float = 45.0, frequency: float = 4.0):
    """tau(t, q, qd) (compiled by numba) driving both shoulders around cones of half-angle
    `cone_deg` for `cycles` periods and holding every other revolute joint at home."""
    nv = mech.nv
    revolute = [link.name for link in mech.links if link.joint == JointType.REVOLUTE]
    iq = np.array([mech.q_slice(name).start for name in revolute], dtype=np.int64)
    iv = np.array([mech.v_slice(name).start for name in revolute], dtype=np.int64)
    home = np.array([mech.q_home[i] for i in iq])
    M = mass_matrix(mech, mech.q_home)
    w = 2.0 * math.pi * frequency
    kp = np.array([M[i, i] * w * w for i in iv])
    kd = np.array([2.0 * M[i, i] * w for i in iv])
    # which revolute joints the cone drives, and with which sign (left +1, right -1)
    abd = np.full(len(revolute), 0.0)
    flex = np.full(len(revolute), 0.0)
    for side, s in (("left", 1.0), ("right", -1.0)):
        abd[revolute.index(f"{side} shoulder abduction")] = s
        flex[revolute.index(f"{side} shoulder flexion")] = 1.0
    A = math.radians(cone_deg)
    T = float(period)
    total = cycles * T

    @numba.njit
    def tau(t, q, qd, out):
        # amplitude: a smooth rise over the first cycle, a smooth fall over the last
        if t <= 0.0 or t >= total:
            a = 0.0
        elif t < T:
            u = t / T
            a = A * u * u * (3.0 - 2.0 * u)
        elif t > total - T:
            u = (total - t) / T
            a = A * u * u * (3.0 - 2.0 * u)
        else:
            a = A
        phase = 2.0 * math.pi * t / T
        for k in range(nv):
            out[k] = 0.0
        for j in range(iq.shape[0]):
            ref = home[j] + abd[j] * a * math.cos(phase) + flex[j] * a * math.sin(phase)
            out[iv[j]] = kp[j] * (ref - q[iq[j]]) - kd[j] * qd[iv[j]]

    return tau


def pitch_angle(mech, q) -> float:
    """The pelvis's rotation about the world y axis from home, rad (its x axis in the
    x-z plane), for q (nq,)."""
    from scipy.spatial.transform import Rotation
    quat = q[mech.q_slice("pelvis")][3:]
    x = Rotation.from_quat(quat).apply([1.0, 0.0, 0.0])
    return math.atan2(-x[2], x[0])


def main(argv: list[str]) -> None:
    cycles = int(argv[0]) if argv else 4
    period = float(argv[1]) if len(argv) > 1 else 2.0
    cone = float(argv[2]) if len(argv) > 2 else 45.0
    mech = load_mechanism(ROOT / "robots" / "astronaut.toml")
    run = simulate(mech, cycles * period + SETTLE,
                   tau=arm_circling_torque(mech, cycles, period, cone), dt_out=period / 20)
    H = np.abs(run.angular_momentum).max()
    print(f"{cycles} cycles of {period:g} s, cones of {cone:g} deg")
    for k in range(0, len(run), 20):
        print(f"  t = {run.t[k]:5.2f} s   pitch {math.degrees(pitch_angle(mech, run.q[k])):7.2f} deg")
    print(f"  t = {run.t[-1]:5.2f} s   pitch {math.degrees(pitch_angle(mech, run.q[-1])):7.2f} deg"
          f"   (arms back at home: {np.degrees(np.abs(run.q[-1] - mech.q_home)[7:]).max():.2f}"
          " deg at most)")
    print(f"  largest |angular momentum about the mass centre|: {H:.2e} kg m^2/s")


if __name__ == "__main__":
    main(sys.argv[1:])
