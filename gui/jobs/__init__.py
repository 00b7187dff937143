"""Background work that never blocks the GUI thread: the `Job` (job.py, one cancel
policy for every panel) and what runs in one, described without Qt: a run (`RunSpec`,
runs.py) and a comparison of two runs (comparison.py)."""
