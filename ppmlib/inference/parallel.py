"""Run independent jobs in parallel: serially, on this machine's cores, or on a Dask cluster.

One function, :func:`map_jobs`, for every chapter with a loop over databases, seeds or settings.
The engine is Dask distributed: ``n_jobs > 1`` starts a temporary ``LocalCluster`` of worker
processes on this machine; ``client=`` (a ``distributed.Client`` or a scheduler address such as
``"tcp://10.0.0.5:8786"``) sends the same jobs to an existing cluster, on one machine or many.
Results come back in input order, and each job carries its own seed, so the numbers do not depend
on how many workers ran them or in which order they finished.

What a worker needs (README, "Running on a cluster"): the same ppmlib and the ``stan/`` programs
(``pip install`` the repository, or set ``PPMLIB_STAN_DIR``), a Stan backend, and either a C++
compiler or a warm compiled-model cache (``~/.cache/httpstan`` for PyStan). Models are compiled
once per machine and then loaded from that cache by every worker process; nothing recompiles
per job.
"""
from __future__ import annotations

__all__ = ["CONNECT_TIMEOUT", "map_jobs", "local_cluster", "connected"]

import contextlib
import logging
from typing import Callable, Iterable

from ppmlib import _checks
from ppmlib.progress import progress_bar


#: Seconds a scheduler address has to answer Dask's handshake before map_jobs gives up.
CONNECT_TIMEOUT = 30.0


def map_jobs(fn: Callable, items: Iterable, *, n_jobs: int = 1, client=None, progress: bool = True,
             desc: str = "", connect_timeout: float = CONNECT_TIMEOUT) -> list:
    """``[fn(item) for item in items]``, run in parallel when asked; results in input order.

    Parameters
    ----------
    fn : callable
        A module-level function (workers import it by name), taking one item. Each item must carry
        everything the job needs, including its seed.
    items : iterable
        The jobs' inputs (small, picklable).
    n_jobs : int
        Worker processes on this machine when no client is given: 1 runs serially in this process;
        more start a temporary Dask ``LocalCluster`` with that many single-threaded workers.
    client : distributed.Client or str or None
        An existing Dask client, or the address of a running scheduler; overrides ``n_jobs``.
    progress : bool
        Show a progress bar (tqdm) while jobs finish.
    desc : str
        Label of the progress bar.
    connect_timeout : float
        Seconds a scheduler address (``client`` given as a string) has to answer; then a
        ConnectionError names the address. Dask's own connect waits forever for a server that
        accepts the connection but never answers.

    Returns
    -------
    list
        ``fn(item)`` for each item, in the order of ``items``. The first failed job's exception is
        raised (after the other jobs are cancelled).

    See Also
    --------
    local_cluster : the temporary cluster behind ``n_jobs > 1``.
    ppmlib.studies.asymptotic_dp.run_study : the chapters' main user.

    Examples
    --------
    >>> from ppmlib.inference.parallel import map_jobs
    >>> map_jobs(abs, [-1, 2, -3], progress=False)
    [1, 2, 3]
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    items = list(items)
    n_jobs = _checks.integer(n_jobs, "n_jobs", low=1)
    connect_timeout = _checks.real(connect_timeout, "connect_timeout", low=0, low_open=True)
    if client is None and (n_jobs == 1 or len(items) <= 1):
        return [fn(item) for item in progress_bar(items, desc=desc, enabled=progress)]
    with _connected(client, n_jobs, connect_timeout) as dask_client:
        return _on_dask(dask_client, fn, items, progress, desc)


def _on_dask(client, fn, items, progress, desc) -> list:
    from distributed import as_completed

    futures = client.map(fn, items, pure=False)  # pure=False: never merge two jobs into one
    try:
        with progress_bar(total=len(futures), desc=desc, enabled=progress) as bar:
            for future in as_completed(futures):
                if future.status == "error":
                    future.result()  # raises the job's own exception
                bar.update(1)
        return client.gather(futures)
    finally:
        client.cancel(futures)


def _answers(address: str, timeout: float) -> None:
    """Raise ConnectionError unless a Dask scheduler at ``address`` completes the handshake in time.

    Dask's connect retries within its timeout, but then waits without limit for the handshake
    (a server that accepts TCP and never answers hangs it forever), and a server that is not Dask
    may answer bytes that it reads as a length of exabytes (MemoryError). The handshake is tried
    here, on its own event loop in a helper thread, under one deadline. TLS settings come from
    Dask's configuration (``distributed.comm.tls.*``), as for ``Client(address)``.
    """
    import asyncio
    import concurrent.futures

    from distributed.comm import connect
    from distributed.security import Security

    async def handshake():
        args = Security().get_connection_args("client")
        comm = await asyncio.wait_for(connect(address, timeout=timeout, **args), timeout)
        await comm.close()

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ppmlib-dask-probe")
    try:
        pool.submit(asyncio.run, handshake()).result(timeout=timeout + 5)
    except Exception as err:  # noqa: BLE001 - every way of not answering ends the same way
        reason = "no answer" if isinstance(err, (TimeoutError, concurrent.futures.TimeoutError)) else \
            f"{type(err).__name__}: {err}"
        raise ConnectionError(f"no Dask scheduler answered at {address!r} within {timeout:g} s ({reason}). Check the "
                              "address and port, that `dask scheduler` runs there, and that nothing else listens on "
                              "that port.") from None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


@contextlib.contextmanager
def connected(client, timeout: float = CONNECT_TIMEOUT):
    """A Dask client for ``client`` (an address or a ``distributed.Client``), or a clear error in time.

    Parameters
    ----------
    client : str or distributed.Client
        A scheduler address (``"tcp://HOST:8786"``, ``"tls://..."``) or a client you built.
    timeout : float
        Seconds the scheduler has to answer Dask's handshake.

    Yields
    ------
    distributed.Client
        A client given is yielded as it is (and left open); one made from an address is closed
        when the block ends.

    Raises
    ------
    BackendUnavailable
        No Dask scheduler answered at the address within ``timeout`` (the message names it); a
        server that accepts the connection and never answers fails the same way, never hangs.
    TypeError
        ``client`` is neither an address nor a ``distributed.Client``.

    Examples
    --------
    >>> with connected("tcp://127.0.0.1:1", timeout=2):   # nothing listens on port 1
    ...     pass
    Traceback (most recent call last):
    ...
    ppmlib.errors.BackendUnavailable: no Dask scheduler answered at 'tcp://127.0.0.1:1' within 2 s ...
    """
    from distributed import Client

    from ppmlib.errors import BackendUnavailable
    timeout = _checks.real(timeout, "timeout", low=0, low_open=True)
    if isinstance(client, Client):
        yield client
        return
    if not isinstance(client, str):
        raise TypeError(f"client must be a scheduler address or a distributed.Client, got {type(client).__name__}")
    try:
        _answers(client, timeout)
    except ConnectionError as err:
        raise BackendUnavailable(str(err)) from None
    with Client(client, timeout=timeout) as made:
        yield made


@contextlib.contextmanager
def _connected(client, n_jobs: int, connect_timeout: float = CONNECT_TIMEOUT):
    """The given client; a new client for an address string; or a temporary local cluster."""
    from distributed import Client

    if isinstance(client, Client):
        yield client
    elif isinstance(client, str):
        _answers(client, connect_timeout)
        with Client(client, timeout=connect_timeout) as connected:
            yield connected
    elif client is None:
        with local_cluster(n_jobs) as local:
            yield local
    else:
        raise TypeError(f"client must be a distributed.Client, a scheduler address string or None, "
                        f"got {type(client).__name__}")


@contextlib.contextmanager
def local_cluster(n_workers: int = 2):
    """A Dask client on a temporary cluster of ``n_workers`` single-threaded worker processes.

    The workers are not daemon processes, because PyStan (httpstan) forks one process per chain
    and a daemon process may not have children.

    Parameters
    ----------
    n_workers : int
        Worker processes.

    Yields
    ------
    distributed.Client
        Closed, with its cluster, when the block ends.
    """
    import dask
    from distributed import Client, LocalCluster

    n_workers = _checks.integer(n_workers, "n_workers", low=1)
    with dask.config.set({"distributed.worker.daemon": False}):
        with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                          silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            try:
                yield client
            finally:
                client.run(_stop_stan_processes)


def _stop_stan_processes() -> None:
    """Shut down httpstan's per-chain process pool on a worker before the worker is stopped;
    otherwise those forked processes outlive the worker that started them."""
    import sys
    stub = sys.modules.get("httpstan.services_stub")
    if stub is not None:
        stub.executor.shutdown(wait=True, cancel_futures=True)
