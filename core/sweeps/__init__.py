"""Sweeps: one run (inverse dynamics along a motion, or a free fall) over a grid of
changes to a model and its run, each point reduced to what sizing a motor needs, on
every core of this machine or on a Dask cluster.

- `fields`: what can be varied (the field registry: link fields, the payload, the run),
  parsing ``FIELD=START:STOP:COUNT`` / ``FIELD=v1,v2``, the axes of a grid;
- `plan`: the picklable plan a worker gets once, the runs (`InverseRun`,
  `FreeFallRun`), one point's model, run and reduction (`evaluate`);
- `engines`: where points are computed: here, a pool of local processes, Dask;
- `sweep`: `sweep` and `sweep_chunks` (checks first, batches, the table), the CSV;
- `preload`: what the local pool's forkserver loads before it forks workers.
"""
