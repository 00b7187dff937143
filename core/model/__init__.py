"""Models: the descriptions users write (`Robot`, `Mechanism`) and the one
compiled `Model` every algorithm takes. Built on `kernels`."""
