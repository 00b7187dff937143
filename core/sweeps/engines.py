"""Where a sweep's points are computed: here (one process), on a pool of local worker
processes, or on a Dask cluster.

Each engine is a generator over batches of points, ``(start, stop, trajectories)``:
it yields lists of `BatchResult`s as they complete (an empty list at least every
`POLL_S` seconds, so a caller can cancel), and, closed early, stops its workers. Every
engine computes a batch with the same function, `core.sweeps.plan.evaluate`, so the
results are the same, bit for bit, whichever computes them.

**The local pool** (`pool_results`) is processes of our own, each with a pipe: one batch
out, its result back, the next batch (no thread in this process, so it runs as well from
a GUI's worker thread). The plan goes to each worker once, as the process's argument.
Workers are forked from this process when that is safe (called from the main thread, no
other Python thread: the CLI), and then inherit the numba kernels it has loaded; otherwise
(a GUI's worker thread, a process with threads) they fork from a forkserver that has
imported the core and loaded the sweep's kernels (`preload`), the first time about 1.5 s,
then nothing more. Workers ignore Ctrl+C: the process that started them keeps what they
finished and stops them.

**Dask** (`dask_results`): `dask.distributed` (optional: ``pip install armdyn[cluster]``).
The plan is scattered to every worker once (``broadcast=True``) and each task takes it
by reference; a worker builds its models once per process (the plan caches them).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from importlib.machinery import ModuleSpec
from multiprocessing.connection import wait as wait_for

import numpy as np

from ..errors import ArmDynError
from .plan import BatchResult, SweepPlan, evaluate, result_width

__all__ = ["Batch", "serial_results", "pool_results", "dask_results", "default_start_method",
           "ClusterUnavailable", "cpu_count", "POLL_S", "require_dask"]

#: (start, stop, keep the trajectories): grid points start..stop-1.
Batch = tuple[int, int, bool]
#: An engine yields at least this often (s), with or without new results.
POLL_S = 0.1
#: How often the Dask engine looks for finished tasks, s.
DASK_POLL_S = 0.005
#: How long a Dask client waits for a scheduler and its first worker, s.
DASK_CONNECT_S = 30.0
#: How long the pool waits for a worker to stop before it terminates it, s.
STOP_WAIT_S = 2.0

INSTALL_DASK = "pip install 'armdyn[cluster]'"


class ClusterUnavailable(ArmDynError):
    """A scheduler was asked for, but Dask is not installed or cannot be reached."""


def cpu_count() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def failed_batch(plan: SweepPlan, batch: Batch, reason: str) -> BatchResult:
    """Every point of `batch` failed for `reason` (a worker died, a task was lost)."""
    start, stop, keep = batch
    width = result_width(plan.kind, plan.base.n)
    return BatchResult(start, stop, np.full((stop - start, width), np.nan),
                       (reason,) * (stop - start), 0.0,
                       (None,) * (stop - start) if keep else None)


# ----- one process ------------------------------------------------------------------------

def serial_results(plan: SweepPlan, batches: Iterable[Batch]) -> Iterator[list[BatchResult]]:
    """Every batch here, in order."""
    for start, stop, keep in batches:
        yield [evaluate(plan, start, stop, keep)]


# ----- the local pool ---------------------------------------------------------------------

def default_start_method() -> str:
    """"fork" when this is the main thread and no other Python thread runs (the workers
    then inherit the loaded kernels at no cost); else "forkserver" (a fork from a
    process with threads may deadlock); "spawn" where neither exists."""
    methods = mp.get_all_start_methods()
    if ("fork" in methods and threading.get_ident() == threading.main_thread().ident
            and threading.active_count() == 1):
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _worker_main(conn, plan: SweepPlan, inherited=()) -> None:
    """A pool worker: batches in, results out, until None or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is for the parent
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for other in inherited:  # a forked worker's copies of the parent's pipe ends
        other.close()
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        conn.send(evaluate(plan, *batch))


class _Worker:
    def __init__(self, ctx, plan: SweepPlan, inherited: list) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        fork = ctx.get_start_method() == "fork"
        args = (child, plan, tuple(inherited) + (self.conn,) if fork else ())
        self.process = ctx.Process(target=_worker_main, args=args, daemon=True,
                                   name="armdyn-sweep-worker")
        self.process.start()
        child.close()
        self.batch: Batch | None = None
        self.ending = False

    def send(self, batch: Batch) -> None:
        self.batch = batch
        self.conn.send(batch)

    def finish(self) -> None:
        """Tell the worker there is no more work: it ends (its exit, tens of ms for a
        process as large as ours, then overlaps the other workers' last batches)."""
        if not self.ending:
            self.ending = True
            try:
                self.conn.send(None)
            except OSError:
                pass

    def stop(self, at_once: bool) -> None:
        """Ask the worker to end (at once: terminate it) and reap it."""
        process = self.process
        if not at_once:
            self.finish()
            process.join(STOP_WAIT_S)
        if process.is_alive():
            process.terminate()
            process.join(STOP_WAIT_S)
        if process.is_alive():
            process.kill()
            process.join()
        self.conn.close()
        process.close()


def _start_workers(ctx, plan: SweepPlan, count: int) -> list[_Worker]:
    """`count` workers, SIGINT blocked while they start (a Ctrl+C then is the parent's).
    A worker from the forkserver (or spawned) would first run the parent's main script
    again, as multiprocessing does to find the functions it defines: the window's
    launcher imports Qt and the 3D view, a benchmark script Pinocchio and Dask, seconds
    per worker and per sweep (bench.py item 10: 7.4 s instead of about 1 s for 2,500
    points). A worker needs only the plan (armdyn's own classes), so the main module is
    named "__main__" while they start, which multiprocessing leaves alone."""
    block = hasattr(signal, "pthread_sigmask")
    if block:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    main = sys.modules["__main__"]
    spec = getattr(main, "__spec__", None)
    if ctx.get_start_method() != "fork":
        main.__spec__ = ModuleSpec("__main__", None)
    try:
        workers: list[_Worker] = []
        for _ in range(count):
            workers.append(_Worker(ctx, plan, [w.conn for w in workers]))
        return workers
    finally:
        main.__spec__ = spec
        if block:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def pool_results(plan: SweepPlan, batches: Iterable[Batch], workers: int,
                 start_method: str | None = None) -> Iterator[list[BatchResult]]:
    """The batches on `workers` local processes (module docstring). A worker that dies
    fails its batch (the reason names its exit code) and is replaced."""
    method = start_method or default_start_method()
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["armdyn.core.sweeps.preload"])
    pending = deque(batches)
    pool = _start_workers(ctx, plan, max(1, min(workers, len(pending))))
    busy: dict[object, _Worker] = {}
    try:
        for worker in pool:
            if pending:
                worker.send(pending.popleft())
                busy[worker.conn] = worker
        while busy:
            out = []
            for conn in wait_for(list(busy), timeout=POLL_S):
                worker = busy.pop(conn)
                try:
                    out.append(conn.recv())
                except (EOFError, OSError):
                    worker.process.join(STOP_WAIT_S)
                    code = worker.process.exitcode
                    out.append(failed_batch(plan, worker.batch, f"the worker process ended "
                                                                f"(exit code {code})"))
                    pool.remove(worker)
                    worker.stop(at_once=True)
                    worker = _start_workers(ctx, plan, 1)[0]
                    pool.append(worker)
                if pending:
                    worker.send(pending.popleft())
                    busy[worker.conn] = worker
                else:
                    worker.finish()
            yield out
    finally:
        at_once = bool(busy)  # cancelled (or failed) with batches out: stop at once
        if not at_once:
            for worker in pool:  # all told first: they end together, not one by one
                worker.finish()
        for worker in pool:
            worker.stop(at_once)


# ----- Dask ----------------------------------------------------------------------------------

def require_dask():
    try:
        import distributed
    except ImportError:
        raise ClusterUnavailable("a scheduler needs Dask's distributed scheduler, which is "
                                 f"not installed: {INSTALL_DASK}") from None
    return distributed


def dask_results(plan: SweepPlan, batches: Iterable[Batch], scheduler
                 ) -> Iterator[list[BatchResult]]:
    """The batches as tasks on a Dask cluster: `scheduler` an address
    ("tcp://host:8786") or a `distributed.Client` (kept open). The plan is scattered to
    every worker once; each task takes it by reference."""
    distributed = require_dask()
    own = not isinstance(scheduler, distributed.Client)
    if own:
        try:
            client = distributed.Client(scheduler, timeout=DASK_CONNECT_S,
                                        set_as_default=False)
        except (OSError, TimeoutError, ValueError) as err:
            raise ClusterUnavailable(f"cannot reach the Dask scheduler at {scheduler}: "
                                     f"{err}") from None
    else:
        client = scheduler
    futures: dict = {}
    try:
        try:
            client.wait_for_workers(1, timeout=DASK_CONNECT_S)
        except (TimeoutError, OSError) as err:
            raise ClusterUnavailable(f"the Dask scheduler has no worker: {err}") from None
        shared = client.scatter(plan, broadcast=True, hash=False)
        for batch in batches:
            future = client.submit(evaluate, shared, *batch, pure=False)
            futures[future] = batch
        # our client's loop: distributed.wait and as_completed would otherwise look for a
        # default client, and ours is not one (set_as_default=False)
        finished = distributed.as_completed(list(futures), loop=client.loop)
        while not finished.is_empty():
            waited, done = 0.0, []
            while not done and waited < POLL_S:
                done = finished.next_batch(block=False)
                if not done:
                    time.sleep(DASK_POLL_S)
                    waited += DASK_POLL_S
            out = []
            for future in done:
                if future.status == "finished":
                    out.append(future.result())
                else:
                    err = future.exception()
                    out.append(failed_batch(plan, futures[future],
                                            f"the Dask task failed: {type(err).__name__}: {err}"))
            yield out
        futures = {}
    finally:
        if futures:
            client.cancel(list(futures))
        if own:
            client.close()
