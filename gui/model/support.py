"""What the window can show: a model with joints of several degrees of freedom or with
force elements is refused, by name, until the window draws and poses them.

The core computes such models (docs/floating-bases.md); the window's tables, pose
sliders, plots and 3D view are written for revolute and prismatic joints, so it says so
instead of opening one half-shown.
"""
from __future__ import annotations


def unsupported_reason(model) -> str | None:
    """Why the window cannot open `model` (a Robot, Mechanism or Model), or None."""
    core_model = model.model
    for name, kind in zip(core_model.joint_names, core_model.joint_types):
        if not kind.is_dh:
            return (f"joint {name!r} is a {kind.value} joint: the window does not show joints "
                    "of several degrees of freedom (spherical, universal, free) yet. Run the "
                    "model with `armdyn simulate` or from Python (docs/floating-bases.md).")
    if core_model.forces:
        return (f"the model has force elements ({core_model.forces[0].name!r}, ...): the window "
                "does not show springs, dampers and tyres yet. Run the model with `armdyn "
                "simulate` or from Python (docs/floating-bases.md).")
    return None
