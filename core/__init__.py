"""ArmDyn core: models (serial arms, trees, closed chains), kinematics and the recursive
(DeNOC) dynamics. No Qt here.

The public names below are imported on first use (PEP 562 module ``__getattr__``), not
with the package: ``import armdyn.core`` (which every ``armdyn.core.*`` import runs) then
costs only numba's cache set-up and the error classes, and a window or a command loads
just the modules it uses; identification, sweeps and measured motions, with the parts
of scipy they need (optimize, signal, stats), are loaded when first asked for."""
from __future__ import annotations

import importlib
from typing import Any

from .kernels.cache import configure_numba_cache

configure_numba_cache()  # before numba is imported  # noqa: E402
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    IdentificationError,
    MotionError,
    MotionFileError,
    ArmDynError,
    LoopClosureError,
    MechanismError,
    MechanismFileError,
    RobotError,
    RobotFileError,
    ResultOverflowError,
    Cancelled,
    SimulationCancelled,
    SimulationError,
    SingularConfigurationError,
    SingularMassMatrixError,
)

#: Where each public name lives: {module under armdyn.core: names}.
_HOMES: dict[str, tuple[str, ...]] = {
    "algorithms.dynamics": ("forward_dynamics", "inverse_dynamics"),
    "algorithms.tree_dynamics": ("ArticulatedBodyInertias", "articulated_body_inertias",
                                 "composite_body_inertias", "convective_torques", "energy",
                                 "gravity_torques", "mass_matrix", "tree_inverse_dynamics",
                                 "udu_factors"),
    "algorithms.kinematics": ("Kinematics", "forward_kinematics"),
    "algorithms.momentum": ("Momentum", "center_of_mass", "momentum"),
    "algorithms.hybrid_dynamics": ("HybridDynamics", "hybrid_dynamics",
                                   "ConstrainedHybridDynamics", "constrained_hybrid_dynamics"),
    "algorithms.inverse_kinematics": ("IKResult", "solve_position", "tool_jacobian"),
    "model.model": ("Model",),
    "model.parts": ("Assembly", "Chain", "JointType", "Link", "Loop", "LoopJointType",
                    "Placement", "Road", "SpringDamper", "Tyre"),
    "model.robot": ("Robot",),
    "model.mechanism": ("Mechanism",),
    "algorithms.loops": ("assemble", "constraint_row_labels", "loop_acceleration_term",
                         "loop_jacobian", "loop_residual", "mobility"),
    "algorithms.closed_chains": ("ClosedChainInverseDynamics",
                                 "closed_chain_inverse_dynamics", "closed_chain_motion",
                                 "constrained_forward_dynamics", "cut_joint_forces",
                                 "reduced_mass_matrix", "velocity_transformation"),
    "algorithms.matrix_dynamics": ("LinkMatrices", "joint_action_matrices",
                                   "lagrange_inverse_dynamics", "link_matrices",
                                   "link_motion_matrices", "loop_closure_matrices",
                                   "matrix_closed_chain_inverse_dynamics", "matrix_energy",
                                   "matrix_inverse_dynamics", "matrix_mass_matrix",
                                   "pseudo_inertia"),
    "io.robot_file": ("load_robot", "save_robot"),
    "io.mechanism_file": ("load_mechanism", "save_mechanism"),
    "io.urdf": ("load_urdf", "save_urdf"),
    "sim.simulation": ("simulate", "simulate_chunks"),
    "sim.stops": ("JointStops",),
    "sim.pull": ("PointPull",),
    "sim.motions": ("cycloidal_trajectory", "cycloidal_pose", "inverse_dynamics_chunks",
                    "run_inverse_dynamics"),
    "sim.joint_motions": ("Cycloid", "FourierSeries", "JointMotion", "Quintic", "Trapezoid",
                          "ViaPoints", "check_limits", "limit_violations"),
    "sim.measured": ("Motion",),
    "sim.tool_motions": ("ToolArc", "ToolLine"),
    "algorithms.drives": ("friction_torques", "gear_ratios", "motor_torques"),
    "algorithms.torque_parts": ("TorqueParts", "torque_parts"),
    "algorithms.regressor": ("joint_torque_regressor", "parameter_names", "parameter_vector"),
    "io.motion_file": ("load_motion",),
    "sim.identification": ("Identification", "identify"),
    "sim.excitation": ("Excitation", "optimise_excitation"),
    "sim.trajectory": ("RunKind", "Trajectory", "output_grid"),
    "sweeps.plan": ("FreeFallRun", "InverseRun"),
    "sweeps.engines": ("ClusterUnavailable",),
    "sweeps.sweep": ("SweepCancelled", "SweepError", "SweepProgress", "SweepResult",
                     "sweep", "sweep_chunks"),
    "warmup": ("warm_up", "warm_up_display"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use and keep the name here."""
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME_OF))


__all__ = [
    "ArgumentError", "ArgumentTypeError", "Model", "ResultOverflowError", "RunKind",
    "ArmDynError", "ArticulatedBodyInertias", "Assembly", "Chain", "ClosedChainInverseDynamics",
    "JointType", "Kinematics", "Link", "Loop", "LoopClosureError", "LoopJointType",
    "Mechanism", "MechanismError", "MechanismFileError", "Placement", "Robot", "RobotError",
    "RobotFileError", "Cancelled", "SimulationCancelled", "SimulationError", "SingularConfigurationError",
    "SingularMassMatrixError", "Trajectory", "articulated_body_inertias", "assemble",
    "closed_chain_inverse_dynamics", "closed_chain_motion", "composite_body_inertias",
    "constrained_forward_dynamics", "constraint_row_labels", "convective_torques",
    "cut_joint_forces", "cycloidal_trajectory", "cycloidal_pose", "energy", "forward_dynamics",
    "forward_kinematics", "gravity_torques", "inverse_dynamics", "inverse_dynamics_chunks",
    "load_mechanism", "load_robot", "load_urdf", "loop_acceleration_term", "loop_jacobian",
    "loop_residual", "mass_matrix", "mobility", "output_grid", "reduced_mass_matrix",
    "run_inverse_dynamics", "save_mechanism", "save_robot", "save_urdf", "simulate",
    "simulate_chunks", "tree_inverse_dynamics", "udu_factors", "velocity_transformation",
    "warm_up", "warm_up_display", "JointStops", "PointPull",
    # sweeps over a grid of changes (core.sweeps)
    "sweep", "sweep_chunks", "InverseRun", "FreeFallRun", "SweepResult", "SweepProgress",
    "SweepCancelled", "SweepError", "ClusterUnavailable",
    # the whole system's mass centre and momentum (core.algorithms.momentum)
    "Momentum", "center_of_mass", "momentum",
    # a floating base's motion when the joints' accelerations are given
    # (core.algorithms.hybrid_dynamics)
    "HybridDynamics", "hybrid_dynamics", "ConstrainedHybridDynamics",
    "constrained_hybrid_dynamics",
    # force elements (core.model.parts, core.kernels.elements)
    "Road", "SpringDamper", "Tyre",
    # inverse kinematics of the tool (core.algorithms.inverse_kinematics)
    "IKResult", "solve_position", "tool_jacobian",
    # the homogeneous 4x4 matrix formulation (seed 004, core.algorithms.matrix_dynamics)
    "LinkMatrices", "joint_action_matrices", "lagrange_inverse_dynamics", "link_matrices",
    "link_motion_matrices", "loop_closure_matrices", "matrix_closed_chain_inverse_dynamics",
    "matrix_energy", "matrix_inverse_dynamics", "matrix_mass_matrix", "pseudo_inertia",
    # motions: joint-space laws and measured logs (core.sim.joint_motions, core.sim.measured,
    # core.io.motion_file)
    "Cycloid", "FourierSeries", "JointMotion", "Motion", "MotionError", "MotionFileError",
    "Quintic", "ToolArc", "ToolLine", "Trapezoid", "ViaPoints", "check_limits",
    "limit_violations", "load_motion",
    # friction and drives (core.kernels.drives, core.algorithms.drives)
    "friction_torques", "gear_ratios", "motor_torques",
    # the torques split into inertial, gravity, friction and rotor parts
    # (core.algorithms.torque_parts)
    "TorqueParts", "torque_parts",
    # the joint-torque regressor, tau = Y pi (core.algorithms.regressor)
    "joint_torque_regressor", "parameter_names", "parameter_vector",
    # identification from a measured motion (core.sim.identification)
    "Identification", "IdentificationError", "identify",
    # an excitation motion for it (core.sim.excitation)
    "Excitation", "optimise_excitation",
]
