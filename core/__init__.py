"""ArmDyn core: robot model, kinematics and the recursive (DeNOC) dynamics. No Qt here."""
from ._numba_cache import configure_numba_cache

configure_numba_cache()  # before numba is imported  # noqa: E402
from .dynamics import (
    ArticulatedBodyInertias,
    articulated_body_inertias,
    composite_body_inertias,
    convective_torques,
    energy,
    forward_dynamics,
    gravity_torques,
    inverse_dynamics,
    mass_matrix,
    udu_factors,
)
from .errors import (
    ArmDynError,
    RobotError,
    RobotFileError,
    SimulationCancelled,
    SimulationError,
    SingularMassMatrixError,
)
from .kinematics import Kinematics, forward_kinematics
from .robot import JointType, Link, Robot

__all__ = [
    "ArmDynError", "ArticulatedBodyInertias", "JointType", "Kinematics", "Link", "Robot",
    "RobotError", "RobotFileError", "SimulationCancelled", "SimulationError",
    "SingularMassMatrixError", "articulated_body_inertias", "composite_body_inertias",
    "convective_torques", "energy", "forward_dynamics", "forward_kinematics",
    "gravity_torques", "inverse_dynamics", "mass_matrix", "udu_factors",
]
from .simulation import simulate, simulate_chunks
from .trajectory import (
    Trajectory,
    cycloidal_trajectory,
    inverse_dynamics_chunks,
    output_grid,
    run_inverse_dynamics,
)

__all__ += ["Trajectory", "cycloidal_trajectory", "inverse_dynamics_chunks", "output_grid",
            "run_inverse_dynamics", "simulate", "simulate_chunks"]
from .warmup import warm_up
__all__ += ["warm_up"]
