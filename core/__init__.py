"""ArmDyn core: models (serial arms, trees, closed chains), kinematics and the recursive
(DeNOC) dynamics. No Qt here."""
from .kernels.cache import configure_numba_cache

configure_numba_cache()  # before numba is imported  # noqa: E402
from .algorithms.dynamics import forward_dynamics, inverse_dynamics
from .algorithms.tree_dynamics import (
    ArticulatedBodyInertias,
    articulated_body_inertias,
    composite_body_inertias,
    convective_torques,
    energy,
    gravity_torques,
    mass_matrix,
    tree_inverse_dynamics,
    udu_factors,
)
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
    SimulationCancelled,
    SimulationError,
    SingularConfigurationError,
    SingularMassMatrixError,
)
from .algorithms.kinematics import Kinematics, forward_kinematics
from .algorithms.momentum import Momentum, center_of_mass, momentum
from .algorithms.hybrid_dynamics import HybridDynamics, hybrid_dynamics
from .algorithms.inverse_kinematics import IKResult, solve_position, tool_jacobian
from .model.model import Model
from .model.parts import (Assembly, Chain, JointType, Link, Loop, LoopJointType, Placement,
                          Road, SpringDamper, Tyre)
from .model.robot import Robot
from .model.mechanism import Mechanism
from .algorithms.loops import (
    assemble,
    constraint_row_labels,
    loop_acceleration_term,
    loop_jacobian,
    loop_residual,
    mobility,
)
from .algorithms.closed_chains import (
    ClosedChainInverseDynamics,
    closed_chain_inverse_dynamics,
    closed_chain_motion,
    constrained_forward_dynamics,
    cut_joint_forces,
    reduced_mass_matrix,
    velocity_transformation,
)
from .algorithms.matrix_dynamics import (
    LinkMatrices,
    joint_action_matrices,
    lagrange_inverse_dynamics,
    link_matrices,
    link_motion_matrices,
    loop_closure_matrices,
    matrix_closed_chain_inverse_dynamics,
    matrix_energy,
    matrix_inverse_dynamics,
    matrix_mass_matrix,
    pseudo_inertia,
)
from .io.robot_file import load_robot, save_robot
from .io.mechanism_file import load_mechanism, save_mechanism
from .io.urdf import load_urdf, save_urdf
from .sim.simulation import simulate, simulate_chunks
from .sim.stops import JointStops
from .sim.pull import PointPull
from .sim.motions import cycloidal_trajectory, inverse_dynamics_chunks, run_inverse_dynamics
from .sim.joint_motions import (Cycloid, FourierSeries, JointMotion, Quintic, Trapezoid,
                                ViaPoints, check_limits, limit_violations)
from .sim.measured import Motion
from .sim.tool_motions import ToolArc, ToolLine
from .algorithms.drives import friction_torques, gear_ratios, motor_torques
from .algorithms.torque_parts import TorqueParts, torque_parts
from .algorithms.regressor import joint_torque_regressor, parameter_names, parameter_vector
from .io.motion_file import load_motion
from .sim.identification import Identification, identify
from .sim.excitation import Excitation, optimise_excitation
from .sim.trajectory import RunKind, Trajectory, output_grid
from .sweeps.plan import FreeFallRun, InverseRun
from .sweeps.engines import ClusterUnavailable
from .sweeps.sweep import (SweepCancelled, SweepError, SweepProgress, SweepResult, sweep,
                           sweep_chunks)
from .warmup import warm_up, warm_up_display

__all__ = [
    "ArgumentError", "ArgumentTypeError", "Model", "ResultOverflowError", "RunKind",
    "ArmDynError", "ArticulatedBodyInertias", "Assembly", "Chain", "ClosedChainInverseDynamics",
    "JointType", "Kinematics", "Link", "Loop", "LoopClosureError", "LoopJointType",
    "Mechanism", "MechanismError", "MechanismFileError", "Placement", "Robot", "RobotError",
    "RobotFileError", "SimulationCancelled", "SimulationError", "SingularConfigurationError",
    "SingularMassMatrixError", "Trajectory", "articulated_body_inertias", "assemble",
    "closed_chain_inverse_dynamics", "closed_chain_motion", "composite_body_inertias",
    "constrained_forward_dynamics", "constraint_row_labels", "convective_torques",
    "cut_joint_forces", "cycloidal_trajectory", "energy", "forward_dynamics",
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
    "HybridDynamics", "hybrid_dynamics",
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
