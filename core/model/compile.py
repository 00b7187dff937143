"""Compiling a description into a Model: the joint order, the kernel layout, the loops closed.

`Robot` and `Mechanism` (the descriptions) call `compile_model` when they are built;
their validation comes first, so this module assumes valid chains and loops.
"""
from __future__ import annotations

from .closure import close_loops
from .model import Model, pack


def structure(chains, loops, actuated_flags, independent_names) -> dict:
    """Joint names, parent array and the actuated / independent sets of valid chains."""
    names = tuple(link.name for chain in chains for link in chain.links)
    index = {name: k for k, name in enumerate(names)}
    parent = []
    k = 0
    for chain in chains:
        for i in range(len(chain.links)):
            parent.append((index[chain.parent] if chain.parent is not None else -1)
                          if i == 0 else k - 1)
            k += 1
    n = len(names)
    if loops:
        actuated = tuple(k for k, flag in enumerate(actuated_flags) if flag)
    else:
        actuated = tuple(range(n))
    if not loops:  # a tree: every joint is a coordinate of its own
        independent = tuple(range(n))
    elif independent_names is not None:
        independent = tuple(sorted(index[name] for name in independent_names))
    else:
        independent = actuated
    return dict(joint_names=names, parent=tuple(parent), actuated=actuated,
                independent=independent)


def compile_model(*, name: str, chains, loops=(), gravity, joint_names=None,
                  actuated_flags=None, independent_names=None, tolerance: float = 1e-10,
                  warnings=(), forces=(), road=None) -> Model:
    """The Model of valid chains and loops (a description's validation comes first).

    joint_names       : one per joint (default: the links' names)
    actuated_flags    : per joint, whether a motor drives it (used with loops; a tree's
                        joints are all actuated)
    independent_names : the joints assembly holds (None: the actuated ones)
    tolerance         : closure tolerance of assembly, m and rad
    forces, road      : force elements and the road under the tyres (core.model.parts)
    With loops, the links' joint values are a guess: the loops are closed holding the
    independent joints (`core.model.closure.close_loops`), and the Model's chains carry
    the closed values. Raises LoopClosureError / MechanismError when they cannot be.
    """
    chains = tuple(chains)
    loops = tuple(loops)
    links = [link for chain in chains for link in chain.links]
    if actuated_flags is None:
        actuated_flags = [link.actuated for link in links]
    s = structure(chains, loops, actuated_flags, independent_names)
    if joint_names is not None:
        s["joint_names"] = tuple(joint_names)
    gravity = tuple(float(g) for g in gravity)
    forces = tuple(forces)
    kernel = pack(chains, loops, gravity, s["joint_names"], s["parent"], s["independent"],
                  forces=forces, road=road)
    model = Model(name=name, chains=chains, loops=loops, gravity=gravity,
                  dof=sum(link.joint.nv for link in links),
                  tolerance=float(tolerance), kernel=kernel, warnings=tuple(warnings),
                  forces=forces, road=road, **s)
    if not loops:
        return model
    return close_loops(model, "assembly.independent" if independent_names is not None
                       else "actuated")
