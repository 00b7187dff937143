"""What Compare cannot take yet: a model with a joint of several degrees of freedom
(spherical, universal, free).

The window opens, poses, runs and plots such models (docs/gui.md, "Floating bases");
Compare's difference plots and its CSV are written per joint value, one value and one
rate per joint, so it says so, by name, instead of comparing half the state.
"""
from __future__ import annotations


def compare_refusal(model) -> str | None:
    """Why Compare cannot take `model` (a Robot, Mechanism or Model), or None."""
    core_model = model.model
    for name, kind in zip(core_model.joint_names, core_model.joint_types):
        if not kind.is_dh:
            return (f"joint {name!r} is a {kind.value} joint: Compare takes models of "
                    "revolute and prismatic joints only (run each model in the window, or "
                    "from Python: docs/floating-bases.md).")
    return None
