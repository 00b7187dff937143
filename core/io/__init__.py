"""Files: robot, mechanism and URDF files, results as CSV, atomic writes.
Built on `model` and `sim`."""
