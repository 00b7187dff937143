"""Runs in time: trajectories, the simulation driver and its steppers (DOP853,
penalty-trapezoid, parallel robots), end stops, pulls, the power balance.
Built on `algorithms`."""
