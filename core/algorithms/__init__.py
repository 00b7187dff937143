"""The algorithms of the papers on a compiled model: inverse and forward
dynamics, the mass matrix, kinematics, the mass centre and momentum, loops, closed
chains, parallel robots and the 4x4 matrix formulation. Built on `model` and `kernels`."""
