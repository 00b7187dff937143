"""The compiled layer: everything numba compiles, over flat buffers.

The model's buffer layout (`layout`), the per-call state (`data`), joint kinds and
their motion subspaces (`joints`), the DeNOC recursions (`denoc`), loop closure and
constrained dynamics, the DOP853 integrator and the charts it steps rotations in
(`charts`), body points and force elements (`points`, `elements`), and the torque
callbacks. Nothing here knows a Robot or a Mechanism: kernels take
the model views and the data. Imports nothing else of the core but `errors`."""
