"""Finding Dask, and a client for an existing scheduler or a new local cluster."""

from __future__ import annotations

import contextlib

from ..errors import InputError

EXTRA = "pip install 'fastbleu[dask]'"


def require() -> None:
    """Import dask.dataframe and distributed, or fail with the install command.

    Raises
    ------
    ImportError
        When either is missing; the message names the ``fastbleu[dask]`` extra.
    """
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as error:
        raise ImportError(f"fastbleu's Dask support needs dask[dataframe] and distributed "
                          f"({error}); install them with {EXTRA}") from None


@contextlib.contextmanager
def connect(scheduler: str | None = None, workers: int | None = None,
            threads_per_worker: int = 1, numba_threads: int | None = 1):
    """A ``distributed.Client``: to ``scheduler``, or to a new ``LocalCluster`` of ``workers``.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``).
    workers : int, optional
        Start a ``LocalCluster`` of this many worker processes instead
        (each restarted by its nanny if it dies); closed on leaving.
    threads_per_worker : int
        Threads per local worker.
    numba_threads : int or None
        ``NUMBA_NUM_THREADS`` of the local workers: the kernels' threads per
        task.  1 (the default) lets Dask's workers share the cores; ``None``
        keeps numba's default (every core, in every worker).

    Yields
    ------
    distributed.Client

    Raises
    ------
    ValueError
        For both or neither of ``scheduler`` and ``workers``, or ``workers < 1``.
    fastbleu.errors.InputError
        When the scheduler cannot be reached.
    """
    if (scheduler is None) == (workers is None):
        raise ValueError("give either a scheduler address or a number of workers")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"the number of Dask workers must be a positive int, got {workers!r}")
    require()
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as error:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler} ({error})") from None
        with client:
            yield client
        return
    import logging

    import dask

    env = {} if numba_threads is None else {"NUMBA_NUM_THREADS": str(numba_threads)}
    # Nannies start workers with MALLOC_TRIM_THRESHOLD_=65536, which also fixes
    # glibc's mmap threshold: every large array is then a fresh mmap, and the
    # page faults cost the workers 0.3-0.6 s of system time per million rows
    # (benchmarks/README.md).  Batches bound the memory here, so keep glibc's default.
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                               processes=True, dashboard_address=":0",
                               scheduler_kwargs={"dashboard": False}, env=env,
                               # A data error on a worker reaches the client as fastbleu's
                               # one-line InputError; the workers' own log of it (a
                               # traceback per failed task) is only noise on the terminal.
                               silence_logs=logging.CRITICAL)
    with cluster, Client(cluster) as client:
        yield client
