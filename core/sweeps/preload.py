"""Imported by the local pool's forkserver (`core.sweeps.engines`) before it forks any
worker: the core, and the compiled kernels a sweep's runs call, loaded once there so that
each worker forked from it starts with them (a worker would otherwise spend about 1.5 s
importing numba and loading the kernels from the cache in ~/.cache/armdyn).
"""
from __future__ import annotations


def _load_kernels() -> None:
    """One tiny inverse-dynamics run and one tiny free fall: every kernel a sweep of a
    serial arm or tree calls (a model with loops loads its own on first use)."""
    import numpy as np

    from ..model.parts import Link
    from ..model.robot import Robot
    from ..sim.motions import run_inverse_dynamics
    from ..sim.simulation import simulate
    from .plan import reduce_run

    rod = Robot("preload", [Link(a=1.0, mass=1.0, limits=(-3.0, 3.0))])
    reduce_run(run_inverse_dynamics(rod, np.zeros(1), np.ones(1), 0.02, 0.01), "inverse")
    reduce_run(simulate(rod, 0.02), "free-fall")


try:
    _load_kernels()
except Exception:  # noqa: BLE001 - the forkserver must start whatever happens here
    pass
