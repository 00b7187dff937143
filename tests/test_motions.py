"""Joint-space motion laws against their closed forms, an independent differentiation,
and the limits they must name (core.sim.joint_motions)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from armdyn.core import (Cycloid, FourierSeries, MotionError, Quintic, Trapezoid, ViaPoints,
                         check_limits, cycloidal_trajectory, inverse_dynamics, limit_violations,
                         load_robot, run_inverse_dynamics)
from armdyn.core.errors import ArgumentError

PUMA = load_robot("robots/puma560_saha.toml")
SCARA = load_robot("robots/scara.toml")  # joint 3 slides in [0, 0.21] m

RNG = np.random.default_rng(7)
Q0 = RNG.uniform(-1.0, 1.0, 6)
QT = Q0 + RNG.uniform(-1.5, 1.5, 6)


def central_differences(motion, t, h=1e-5):
    """qd and qdd at t (S,) by central differences of q (an independent second method)."""
    qm, q0, qp = (motion.sample(t + d)[0] for d in (-h, 0.0, h))
    return (qp - qm) / (2 * h), (qp - 2 * q0 + qm) / h**2


def interior(T, count=57):
    return np.linspace(0.0, T, count)[1:-1] + 1e-3 * T  # off the knots and blends


@pytest.mark.parametrize("law", [Cycloid, Quintic, Trapezoid])
def test_rest_to_rest_laws_start_and_end_at_rest_on_their_poses(law):
    T = 1.7
    q, qd, qdd = law(Q0, QT, T).sample([0.0, T])
    assert np.allclose(q, [Q0, QT], atol=1e-14)
    assert np.allclose(qd, 0.0, atol=1e-14)
    if law is not Trapezoid:  # a trapezoid's acceleration jumps at rest
        assert np.allclose(qdd, 0.0, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: Cycloid(Q0, QT, 1.3), lambda: Quintic(Q0, QT, 1.3),
    lambda: Trapezoid(Q0, QT, 1.3, blend=0.4),
    lambda: ViaPoints([0.0, 0.5, 1.1, 2.0], [Q0, Q0 + 0.3, QT - 0.2, QT]),
    lambda: FourierSeries(Q0, RNG.uniform(-1, 1, (6, 3)), RNG.uniform(-1, 1, (6, 3)), 0.4)],
    ids=["cycloid", "quintic", "trapezoid", "via", "fourier"])
def test_rates_and_accelerations_are_the_derivatives_of_q(make):
    motion = make()
    t = interior(motion.duration)
    q, qd, qdd = motion.sample(t)
    qd_fd, qdd_fd = central_differences(motion, t)
    scale = np.abs(qd).max()
    assert np.abs(qd - qd_fd).max() < 1e-7 * scale
    assert np.abs(qdd - qdd_fd).max() < 1e-3 * np.abs(qdd).max()


def test_the_cycloid_is_seed_001_and_cycloidal_trajectory_uses_it():
    T = 2.0
    t = np.linspace(0, T, 11)
    D = QT - Q0
    w = 2 * np.pi / T
    expect = Q0 + D / T * (t[:, None] - np.sin(w * t[:, None]) / w)  # eq. 22a
    q, qd, qdd = cycloidal_trajectory(Q0, QT, T, t)
    assert np.allclose(q, expect, atol=1e-14)
    assert np.allclose(qd, D / T * (1 - np.cos(w * t[:, None])), atol=1e-14)


def test_quintic_peaks_where_the_closed_form_says():
    T = 3.0
    D = QT - Q0
    motion = Quintic(Q0, QT, T)
    _, qd, _ = motion.sample([T / 2])
    assert np.allclose(qd[0], 15 / 8 * D / T)
    r = math.sqrt(3) / 6
    _, _, qdd = motion.sample([T * (0.5 - r)])
    assert np.allclose(qdd[0], 10 * math.sqrt(3) / 3 * D / T**2)
    t = np.linspace(0, T, 20001)
    assert np.all(np.abs(motion.sample(t)[2]).max(axis=0) <= np.abs(qdd[0]) * (1 + 1e-9))


def test_trapezoid_rate_plateau_and_travel():
    T, tb = 2.0, 0.5
    motion = Trapezoid(Q0, QT, T, blend=tb)
    D = QT - Q0
    V = D / (T - tb)
    t = np.linspace(tb, T - tb, 7)
    assert np.allclose(motion.sample(t)[1], V)  # the plateau
    assert np.allclose(motion.sample([0.2])[2], V / tb)  # the blend's acceleration
    fine = np.linspace(0, T, 200001)
    travelled = np.trapezoid(motion.sample(fine)[1], fine, axis=0)  # the area under qd
    assert np.allclose(travelled, D, atol=1e-8)
    with pytest.raises(ArgumentError, match="blend"):
        Trapezoid(Q0, QT, T, blend=1.2)


def test_the_fastest_trapezoid_touches_a_limit_and_breaks_none():
    v = np.array([1.0, 0.8, 2.0, 3.0, 3.0, 3.0])
    a = np.array([2.0, 1.0, 5.0, 6.0, 6.0, 6.0])
    for q_end in (QT, Q0 + 0.05):  # a long move (trapezoid) and a short one (triangle)
        motion = Trapezoid.fastest(Q0, q_end, v, a)
        assert limit_violations(PUMA, motion, v, a) == []
        t = np.linspace(0, motion.duration, 40001)
        _, qd, qdd = motion.sample(t)
        used = np.maximum(np.abs(qd).max(axis=0) / v, np.abs(qdd).max(axis=0) / a)
        assert used.max() == pytest.approx(1.0, rel=1e-6)
        # 1 % faster, with the same shape, breaks a limit
        quicker = Trapezoid(Q0, q_end, 0.99 * motion.duration, blend=0.99 * motion.blend)
        assert limit_violations(PUMA, quicker, v, a)


def test_via_points_are_passed_at_rest_ends_with_continuous_acceleration():
    times = np.array([0.0, 0.4, 1.5, 2.0])
    points = np.array([Q0, Q0 + 0.4, QT + 0.1, QT])
    motion = ViaPoints(times, points)
    q, qd, _ = motion.sample(times)
    assert np.allclose(q, points, atol=1e-14)
    assert np.allclose(qd[[0, -1]], 0.0, atol=1e-14)
    eps = 1e-9
    left = motion.sample(times[1:-1] - eps)[2]
    right = motion.sample(times[1:-1] + eps)[2]
    assert np.allclose(left, right, atol=1e-5)
    # cubic pieces: the third derivative is constant inside each piece
    for a, b in zip(times[:-1], times[1:]):
        t = np.linspace(a, b, 5)[1:-1]
        jerk = np.diff(motion.sample(t)[2], axis=0) / np.diff(t)[:, None]
        assert np.allclose(jerk[0], jerk[1], rtol=1e-6, atol=1e-6)
    with pytest.raises(ArgumentError, match="increase"):
        ViaPoints([0.0, 1.0, 1.0], points[:3])


def test_fourier_series_closed_form_and_period():
    a = np.zeros((6, 2))
    b = np.zeros((6, 2))
    a[:, 1] = 0.7  # second harmonic only: q = q0 + a/(2 w) sin(2 w t)
    f = 0.25
    motion = FourierSeries(Q0, a, b, f)
    assert motion.duration == pytest.approx(4.0)
    t = np.linspace(0, 4.0, 9)
    w2 = 2 * 2 * np.pi * f
    q, qd, qdd = motion.sample(t)
    assert np.allclose(q, Q0 + 0.7 / w2 * np.sin(w2 * t)[:, None])
    assert np.allclose(qd, 0.7 * np.cos(w2 * t)[:, None])
    assert np.allclose(qdd, -0.7 * w2 * np.sin(w2 * t)[:, None])
    full = FourierSeries(Q0, RNG.uniform(-1, 1, (6, 4)), RNG.uniform(-1, 1, (6, 4)), 0.5)
    start, end = (np.stack(full.sample([s])) for s in (0.0, 2.0))  # q, qd, qdd
    assert np.allclose(start, end)
    assert not np.allclose(start, np.stack(full.sample([0.7])))


def test_limit_violations_name_the_joint_the_time_and_the_limit():
    q0 = SCARA.q_home.copy()
    q0[2] = 0.05
    qT = q0.copy()
    qT[2] = 0.2  # within [0, 0.21]: the rest-to-rest laws stay inside
    for law in (Cycloid, Quintic, Trapezoid):
        assert limit_violations(SCARA, law(q0, qT, 1.0)) == []
    # a spline through 0.2 m with a turn back overshoots 0.21 m between the points
    via = ViaPoints([0.0, 0.5, 0.6, 1.0], [q0, qT, qT - [0, 0, 0.1, 0], q0])
    found = limit_violations(SCARA, via)
    assert [e.joint for e in found] == [3] and found[0].what == "upper limit"
    fine = np.linspace(0.0, 1.0, 100001)
    highest = fine[np.argmax(via.sample(fine)[0][:, 2])]
    assert via.sample(fine)[0][:, 2].max() > 0.21
    assert abs(found[0].time - highest) < 1e-3  # the worst excess, to the check's grid
    with pytest.raises(MotionError, match=r"via-point motion: joint 3 \('.*'\) reaches .* "
                                          r"past its upper limit \(0\.21 m\)"):
        check_limits(SCARA, via)
    with pytest.raises(MotionError, match=r"joint 1 .* above its rate limit"):
        check_limits(SCARA, Quintic(SCARA.q_home, SCARA.q_home + [1.0, 0, 0, 0], 1.0),
                     rate_limit=1.0)


def test_inverse_dynamics_runs_along_every_law():
    motions = [Quintic(Q0, QT, 0.5), Trapezoid(Q0, QT, 0.5),
               ViaPoints([0.0, 0.2, 0.5], [Q0, QT + 0.1, QT]),
               FourierSeries(Q0, 0.3 * np.ones((6, 2)), np.zeros((6, 2)), 2.0)]
    for motion in motions:
        run = run_inverse_dynamics(PUMA, motion, dt_out=0.05)
        assert run.t[-1] == pytest.approx(motion.duration)
        q, qd, qdd = motion.sample(run.t)
        assert np.allclose(run.q, q) and np.allclose(run.qdd, qdd)
        one = inverse_dynamics(PUMA, q[3], qd[3], qdd[3])  # the single-state path
        assert np.allclose(run.tau[3], one, rtol=1e-12, atol=1e-9)
    with pytest.raises(ArgumentError, match="6 joints"):
        run_inverse_dynamics(SCARA, motions[0])


# ----------------------------------------------------------------------------------
# Tool space: a line and an arc by inverse kinematics (core.sim.tool_motions)
# ----------------------------------------------------------------------------------

def _tool(q):
    from armdyn.core import forward_kinematics
    return forward_kinematics(PUMA, q).end_effector


TOOL_Q0 = np.radians([10, 40, -30, 10, 30, 5])


def test_tool_line_puts_the_tool_on_the_line_with_its_orientation_kept():
    from armdyn.core import ToolLine
    start = _tool(TOOL_Q0)
    p0, p1 = start[:3, 3], start[:3, 3] + [0.1, -0.1, 0.05]
    line = ToolLine(PUMA, TOOL_Q0, p1, 1.0)
    t = np.linspace(0.0, 1.0, 9)
    q, qd, qdd = line.sample(t)
    s = Quintic(np.zeros(1), np.ones(1), 1.0).sample(t)[0][:, 0]  # the path's timing
    for i in range(t.size):
        T = _tool(q[i])  # forward kinematics: independent of the IK's own residual
        assert np.allclose(T[:3, 3], p0 + s[i] * (p1 - p0), atol=1e-8)
        assert np.allclose(T[:3, :3], start[:3, :3], atol=1e-8)
    assert np.allclose(qd[[0, -1]], 0.0, atol=1e-9)
    inner = np.linspace(0.1, 0.9, 5)
    # differences of the IK's q (solved to 1e-9 m: a step of 5 ms keeps that noise small)
    qd_fd, qdd_fd = central_differences(line, inner, h=5e-3)
    assert np.allclose(line.sample(inner)[1], qd_fd, atol=1e-4 * np.abs(qd).max())
    assert np.allclose(line.sample(inner)[2], qdd_fd, atol=1e-3 * np.abs(qdd).max())
    run = run_inverse_dynamics(PUMA, line, dt_out=0.25)
    assert run.tau.shape == (5, 6)


def test_tool_arc_passes_its_three_points_on_one_circle():
    from armdyn.core import ToolArc
    p0 = _tool(TOOL_Q0)[:3, 3]
    via, end = p0 + [0.05, 0.05, 0.0], p0 + [0.1, 0.0, 0.0]
    arc = ToolArc(PUMA, TOOL_Q0, via, end, 2.0)
    q, _, _ = arc.sample(np.linspace(0.0, 2.0, 41))
    points = np.array([_tool(qi)[:3, 3] for qi in q])
    centre = p0 + [0.05, 0.0, 0.0]  # the circle through the three points, by hand
    assert np.allclose(np.linalg.norm(points - centre, axis=1), 0.05, atol=1e-8)
    assert np.allclose(points[[0, -1]], [p0, end], atol=1e-8)
    assert np.min(np.linalg.norm(points - via, axis=1)) < 0.05 * np.pi / 40  # passed by
    with pytest.raises(ArgumentError, match="one line"):
        ToolArc(PUMA, TOOL_Q0, p0 + [0.05, 0, 0], p0 + [0.1, 0, 0], 1.0)


def test_an_unreachable_tool_path_names_where_it_fails():
    from armdyn.core import ToolLine
    p0 = _tool(TOOL_Q0)[:3, 3]
    with pytest.raises(MotionError, match=r"tool line motion at t = [\d.]+ s \(\d+% of the "
                                          r"path, tool at \[.*\] m\): (out of reach|near a "
                                          r"singularity)") as err:
        ToolLine(PUMA, TOOL_Q0, p0 + [3.0, 0.0, 0.0], 1.0)
    assert 0.0 < err.value.time < 1.0


def _two_link_ik(p):
    """Closed-form IK of the two-link planar arm (l1 = l2 = 1 m), elbow up (q2 > 0)."""
    x, y = p[..., 0], p[..., 1]
    q2 = np.arccos((x * x + y * y - 2.0) / 2.0)
    return np.stack([np.arctan2(y, x) - np.arctan2(np.sin(q2), 1.0 + np.cos(q2)), q2], -1)


def test_a_two_link_tool_line_follows_its_closed_form_to_the_acceleration():
    """q from the closed-form IK of the line's points; qd and qdd from its central
    differences: qdd = J^+ (a - Jdot qd) against an independent second derivative."""
    from armdyn.core import ToolLine, forward_kinematics
    arm = load_robot("robots/two_link_planar.toml")
    q0 = np.array([0.3, 1.2])
    p0 = forward_kinematics(arm, q0).end_effector[:3, 3]
    p1 = p0 + [-0.3, 0.25, 0.0]
    line = ToolLine(arm, q0, p1, 1.5)
    t = interior(1.5, 23)
    s_of = Quintic(np.zeros(1), np.ones(1), 1.5)

    def q_closed(ti):
        return _two_link_ik(p0 + s_of.sample(ti)[0][:, :1] * (p1 - p0))

    h = 1e-4
    qm, qc, qp = (q_closed(t + d) for d in (-h, 0.0, h))
    q, qd, qdd = line.sample(t)
    assert np.allclose(q, qc, atol=1e-8)
    assert np.allclose(qd, (qp - qm) / (2 * h), atol=1e-6)
    assert np.allclose(qdd, (qp - 2 * qc + qm) / h**2, atol=1e-4 * max(1.0, np.abs(qdd).max()))
    assert np.abs(qdd).max() > 0.1  # a real acceleration, not zeros


@pytest.mark.parametrize("case", ["puma arc", "puma line, large turn",
                                  "ur5e line, position only"])
def test_tool_path_qdd_is_the_rate_of_its_qd(case):
    """qdd against the central difference of the sampled qd: a curved path with a turning
    tool (PUMA), a large turn (where the guess from the solved points falls short and the
    IK takes steps), and a redundant task (UR5e, 6 joints on 3 rows: the null-space
    term)."""
    from armdyn.core import ToolArc, ToolLine, forward_kinematics
    if case == "puma line, large turn":
        start = _tool(TOOL_Q0)
        turn = start[:3, :3] @ np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
        motion = ToolLine(PUMA, TOOL_Q0, start[:3, 3] + [0.1, -0.1, 0.05], 2.0,
                          end_rotation=turn)
    elif case == "puma arc":
        p0 = _tool(TOOL_Q0)[:3, 3]
        turn = _tool(TOOL_Q0)[:3, :3] @ np.array([[1, 0, 0], [0, 0.8, -0.6], [0, 0.6, 0.8]])
        motion = ToolArc(PUMA, TOOL_Q0, p0 + [0.05, 0.05, 0.0], p0 + [0.1, 0.0, 0.0], 2.0,
                         end_rotation=turn)
    else:
        ur5e = load_robot("robots/ur5e.toml")
        q0 = np.array([0.2, -1.2, 1.4, -1.0, -1.4, 0.3])
        p0 = forward_kinematics(ur5e, q0).end_effector[:3, 3]
        motion = ToolLine(ur5e, q0, p0 + [0.08, -0.05, 0.06], 2.0, orientation=False)
    t = interior(2.0, 15)
    h = 1e-5
    q, qd, qdd = motion.sample(t)
    qd_fd = (motion.sample(t + h)[1] - motion.sample(t - h)[1]) / (2 * h)
    assert np.allclose(qdd, qd_fd, atol=1e-6 * max(1.0, np.abs(qdd).max()))
    assert np.abs(qdd).max() > 1e-3
    s = Quintic(np.zeros(1), np.ones(1), 2.0).sample(t)[0][:, 0]
    for qi, si in zip(q, s):  # on the path, whichever way q was found
        tool = forward_kinematics(motion.model, qi).end_effector
        assert np.allclose(tool[:3, 3], motion.point(si), atol=1e-8)
        if motion.orientation:
            assert np.allclose(tool[:3, :3], motion.rotation(si), atol=1e-8)
    assert all(x.shape == (0, motion.n) for x in motion.sample(np.zeros(0)))
