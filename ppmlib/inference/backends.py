"""Compile and sample the Stan programs in ``stan/`` on one of two backends.

* ``cmdstanpy`` when a CmdStan installation is found (cmdstanpy's own lookup: the ``CMDSTAN``
  variable or ``~/.cmdstan``; the conda-forge ``cmdstan`` package sets it up). Executables are
  cached under ``~/.cache/ppmlib/cmdstan`` keyed by the program's hash.
* ``pystan`` (PyStan 3, whose ``httpstan`` wheel ships Stan and compiles with the system g++)
  otherwise. httpstan caches compiled models itself in ``~/.cache/httpstan``.

``PPMLIB_BACKEND=cmdstanpy|pystan`` forces one. Both return a :class:`Draws` with the draw axis
first and chains concatenated chain after chain, so nothing downstream knows which backend ran.
CmdStan is never downloaded from here.

Same program, data and seed give the same numbers on either backend, bit for bit, when both run
the same Stan release (PyStan 3.10's httpstan and CmdStan 2.35 both run Stan 2.35): both number
the chains 1..N and seed chain k's generator with (seed, k), both draw random inits in (-2, 2),
and CmdStan is asked for 18 significant digits in its CSV files (its default of 6 would round
every draw). A different CmdStan release, or a different compiler, may change the draws; they
then agree only within Monte Carlo error.

Neither backend writes into the caller's output: compiler and sampler messages (PyStan's
"Building...", cmdstanpy's INFO lines, Stan's "Non-fatal error during sampling" warnings) are
kept on ``Draws.messages`` and logged at DEBUG level on this module's logger.
"""
from __future__ import annotations

__all__ = ["BACKENDS", "Draws", "program_path", "cmdstan_available", "pystan_available",
           "backend", "sample", "clean_caches", "STAN_ADAPT_DELTA"]

import concurrent.futures
import contextlib
import hashlib
import io
import logging
import os
import re
import secrets
import select
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ppmlib import _checks, _children, _leftovers
from ppmlib.errors import BackendUnavailable
from ppmlib._shipped import shipped_file
from ppmlib.seeding import STAN_SEED_LIMIT
from ppmlib.errors import BadArgument

log = logging.getLogger(__name__)

BACKENDS = ("cmdstanpy", "pystan")
CACHE_DIR = Path(os.environ.get("PPMLIB_CACHE", Path.home() / ".cache" / "ppmlib"))


@dataclass
class Draws:
    """Posterior draws in backend-neutral form.

    ``params[name]`` has shape ``(S, *dims)`` with S = chains * draws_per_chain, chain after chain;
    ``sampler[name]`` holds the sampler's per-draw values (``divergent__``, ``treedepth__``, ...).
    ``messages`` is what the backend printed or logged (compiler, sampler warnings), kept out of
    the caller's output.

    Attributes
    ----------
    params : dict
        Name -> draws, shape ``(S, *dims)``, chains concatenated.
    sampler : dict
        Name -> the sampler's per-draw values, shape (S,).
    chains : int
        The number of chains.
    backend : str
        "cmdstanpy" or "pystan".
    messages : str
        The backend's captured output.

    See Also
    --------
    sample : returns it.
    ppmlib.inference.diagnostics.summarize : R-hat, ESS and divergences of ``params`` and ``sampler``.
    """
    params: dict
    sampler: dict
    chains: int
    backend: str
    messages: str = field(default="", repr=False)


def program_path(name: str) -> Path:
    """``stan/<name>.stan``: the checkout's, the installed package's copy, or ``$PPMLIB_STAN_DIR``'s.

    Parameters
    ----------
    name : str
        The program's name (a family's ``name``), without ``.stan``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        No folder searched holds the program (the message lists them).

    Examples
    --------
    >>> program_path("poisson").name
    'poisson.stan'
    """
    return shipped_file("stan", f"{name}.stan")


def cmdstan_available() -> bool:
    """True when cmdstanpy is importable and finds a CmdStan installation (never installs one).

    Returns
    -------
    bool
    """
    try:
        with warnings.catch_warnings():  # cmdstanpy imports tqdm.auto, which warns in kernels without ipywidgets
            warnings.simplefilter("ignore")
            import cmdstanpy
        cmdstanpy.cmdstan_path()
    except Exception:
        return False
    return True


def pystan_available() -> bool:
    """True when PyStan 3 is importable (it compiles with the system g++ on first use).

    Returns
    -------
    bool
    """
    try:
        import stan  # noqa: F401  (PyStan 3)
    except Exception:
        return False
    return True


def backend() -> str:
    """The backend that :func:`sample` will use, honouring ``PPMLIB_BACKEND``.

    Returns ``"cmdstanpy"`` when CmdStan is installed, else ``"pystan"``; raises
    :class:`BackendUnavailable` when neither can run, or when the forced one cannot.

    Returns
    -------
    str
        "cmdstanpy" or "pystan".

    See Also
    --------
    cmdstan_available, pystan_available : the two checks it makes.

    Examples
    --------
    >>> BACKENDS
    ('cmdstanpy', 'pystan')
    >>> backend() in BACKENDS      # or BackendUnavailable, saying what to install
    True
    """
    forced = os.environ.get("PPMLIB_BACKEND", "").strip().lower()
    if forced:
        if forced not in BACKENDS:
            raise BadArgument(f"PPMLIB_BACKEND must be one of {BACKENDS}, got {forced!r}")
        if forced == "cmdstanpy" and not cmdstan_available():
            raise BackendUnavailable(
                "PPMLIB_BACKEND=cmdstanpy but no CmdStan installation was found: install the conda-forge "
                "'cmdstan' package (environment.yml) or point CMDSTAN at an existing installation")
        if forced == "pystan" and not pystan_available():
            raise BackendUnavailable("PPMLIB_BACKEND=pystan but PyStan 3 is not installed: pip install pystan")
        return forced
    if cmdstan_available():
        return "cmdstanpy"
    if pystan_available():
        return "pystan"
    raise BackendUnavailable(
        "No Stan backend: install PyStan 3 (pip install pystan; needs g++), or cmdstanpy with a CmdStan "
        "installation (conda install -c conda-forge cmdstanpy cmdstan)")


#: Stan's own target acceptance rate for NUTS's step-size adaptation (both interfaces default to it)
STAN_ADAPT_DELTA = 0.8
#: Stan's own largest NUTS tree depth (a draw takes at most 2**depth leapfrog steps)
STAN_MAX_TREEDEPTH = 10


def sample(program: str, data: dict, *, chains: int, draws: int, warmup: int, seed: int,
           adapt_delta: float = STAN_ADAPT_DELTA, max_treedepth: int = STAN_MAX_TREEDEPTH,
           init: dict | None = None) -> Draws:
    """Run NUTS on ``stan/<program>.stan`` with ``data``; ``seed`` makes the result reproducible.

    Parameters
    ----------
    program : str
        The program's name: ``stan/<program>.stan``.
    data : dict
        The program's data block (a family's ``stan_data``).
    chains, draws, warmup : int
        Chains, draws kept per chain, warmup iterations per chain.
    seed : int
        The sampler's seed (chain k is seeded with (seed, k) on both backends), in [0, 2**31 - 1):
        the range both backends accept, checked here before the backend sees it.
    adapt_delta : float
        The acceptance rate NUTS adapts its step size to (Stan's default 0.8; higher means
        smaller steps, fewer divergences and longer trajectories).
    max_treedepth : int
        NUTS's largest tree depth, >= 1 (Stan's default 10): a draw costs at most 2**max_treedepth
        gradient evaluations. A lower cap bounds a fit's cost where trajectories run long; the draws
        still target the same posterior, but mix worse (the diagnostics show it).
    init : dict, optional
        Where every chain starts: parameter name -> value (a number or a list, in the parameter's
        constrained space and shape). None: Stan's random start in (-2, 2) on the unconstrained scale.

    Returns
    -------
    Draws
        Draws and sampler values, draw axis first, chain after chain.

    Raises
    ------
    BackendUnavailable
        Neither backend can run.
    ValueError
        The seed is outside Stan's range.
    RuntimeError
        The backend failed. The message holds the tail of its output but no value of ``data``:
        every number in it that equals a data value is replaced by ``<data>``, and the backend's
        exception is not chained (its text repeats the whole data dict).
    """
    seed = _checks.integer(seed, "seed", low=0)
    if seed >= STAN_SEED_LIMIT:
        raise BadArgument(f"seed must be below {STAN_SEED_LIMIT} (2**31 - 1, the largest seed both Stan backends "
                         f"accept), got {seed}")
    chosen = backend()
    runner = _sample_cmdstanpy if chosen == "cmdstanpy" else _sample_pystan
    adapt_delta = _checks.real(adapt_delta, "adapt_delta", low=0, high=1, low_open=True, high_open=True)
    max_treedepth = _checks.integer(max_treedepth, "max_treedepth", low=1)
    return runner(program_path(program), data, chains=chains, draws=draws, warmup=warmup, seed=seed,
                  adapt_delta=adapt_delta, max_treedepth=max_treedepth, init=_start(init))


def _start(init: dict | None) -> dict | None:
    """``init`` as plain floats and nested lists (what both backends' JSON takes), or None."""
    if init is None:
        return None
    if not isinstance(init, dict) or not init:
        raise BadArgument(f"init must be a non-empty dict of parameter values, got {type(init).__name__}")
    start = {}
    for name, value in init.items():
        arr = np.asarray(value, dtype=float)
        if not np.all(np.isfinite(arr)):
            raise BadArgument(f"init[{name!r}] holds a value that is not finite")
        start[str(name)] = arr.tolist()
    return start


# --- cmdstanpy ------------------------------------------------------------------------------

_CMDSTAN_MODELS: dict = {}


def _cmdstan_model(path: Path):
    import cmdstanpy
    code = path.read_text()
    key = hashlib.sha256((code + cmdstanpy.cmdstan_path()).encode()).hexdigest()[:16]
    if key not in _CMDSTAN_MODELS:
        folder = CACHE_DIR / "cmdstan" / f"{path.stem}-{key}"
        folder.mkdir(parents=True, exist_ok=True)
        stan_file = folder / path.name
        if not stan_file.exists():
            stan_file.write_text(code)
        # cmdstanpy recompiles only when the executable is missing or older than the program
        _CMDSTAN_MODELS[key] = cmdstanpy.CmdStanModel(stan_file=str(stan_file))
    return _CMDSTAN_MODELS[key]


@contextlib.contextmanager
def _captured_log(logger: logging.Logger, buffer: io.StringIO, level: int = logging.INFO):
    """Route ``logger`` to ``buffer`` only, restoring its handlers afterwards.

    Redirecting sys.stderr is not enough: cmdstanpy's own handler keeps the stream that was
    sys.stderr when cmdstanpy was imported (in a Jupyter kernel, the cell's output), and with
    propagation on, records would also reach whatever handlers the root logger has (httpstan logs a
    failed call with its whole data dict at CRITICAL level: that must reach no log file).
    """
    saved = logger.handlers[:], logger.propagate, logger.level
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(levelname)s - %(message)s"))
    logger.handlers, logger.propagate = [handler], False
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.handlers, logger.propagate = saved[0], saved[1]
        logger.setLevel(saved[2])


# CmdStan writes draws as decimal text; 18 significant digits (cmdstanpy's maximum) round-trip
# every double exactly, so the draws are the sampler's own numbers, as on the PyStan route.
CMDSTAN_SIG_FIGS = 18


@contextlib.contextmanager
def _recorded(path):
    """Record ``path`` while the block runs, so that the next run removes it if this one is killed."""
    _leftovers.register(path)
    try:
        yield
    finally:
        _leftovers.unregister(path)


class _SubprocessDyingWithParent:
    """The ``subprocess`` module, except that ``Popen`` starts processes that die with this one
    (CmdStan's chains: cmdstanpy starts each from a thread that waits for it)."""

    @staticmethod
    def Popen(*args, **kwargs):
        import subprocess
        from functools import partial
        kwargs.setdefault("preexec_fn", partial(_children.die_with_parent, os.getpid()))
        return subprocess.Popen(*args, **kwargs)

    def __getattr__(self, name):
        import subprocess
        return getattr(subprocess, name)


def _sample_cmdstanpy(path: Path, data: dict, *, chains, draws, warmup, seed, adapt_delta, max_treedepth,
                      init=None) -> Draws:
    def work(chatter):
        import cmdstanpy
        import cmdstanpy.model
        from cmdstanpy.utils import get_logger  # its first call installs cmdstanpy's handler: kept for afterwards
        cmdstanpy.model.subprocess = _SubprocessDyingWithParent()
        with _captured_log(get_logger(), chatter), tempfile.TemporaryDirectory(prefix="ppmlib-cmdstan-") as csv_dir, \
                _recorded(csv_dir):
            model = _cmdstan_model(path)
            # the data file in this folder, not in cmdstanpy's own temporary one: a killed run leaves
            # it where make clean-cache looks (ppmlib-cmdstan-*), and the folder is private (0700)
            data_file = os.path.join(csv_dir, "data.json")
            cmdstanpy.write_stan_json(data_file, data)
            # chain ids 1..N with one seed is PyStan's convention too: same seed, same draws
            fit = model.sample(data=data_file, chains=chains, chain_ids=list(range(1, chains + 1)), seed=seed,
                               iter_sampling=draws, iter_warmup=warmup, adapt_delta=adapt_delta,
                               max_treedepth=max_treedepth, inits=init,
                               sig_figs=CMDSTAN_SIG_FIGS,
                               output_dir=csv_dir, show_progress=False, show_console=False,
                               parallel_chains=min(chains, os.cpu_count() or 1))
            # read everything now: the CSV files go with csv_dir
            params = {name: np.asarray(fit.stan_variable(name)) for name in fit.metadata.stan_vars}
            # method variables come as (draws, chains); flatten chain after chain like stan_variable does
            sampler = {name: np.asarray(arr).T.reshape(-1) for name, arr in fit.method_variables().items()}
        return params, sampler

    (params, sampler), messages = _run_captured("cmdstanpy", work, data)
    return Draws(params=params, sampler=sampler, chains=chains, backend="cmdstanpy", messages=messages)


# --- PyStan 3 -------------------------------------------------------------------------------
# PyStan calls asyncio.run(), which fails inside a running event loop (a Jupyter kernel). Every
# PyStan call therefore runs on one long-lived worker thread that has no event loop; a fresh
# thread per call is not enough (the sampler crashes), so the executor is created once.

_PYSTAN_WORKER: concurrent.futures.ThreadPoolExecutor | None = None


def _patient_aiohttp():
    """aiohttp as PyStan's client sees it, except that its sessions have no time limit."""
    import functools
    import types

    import aiohttp
    import aiohttp.web  # noqa: F401 (PyStan's client uses aiohttp.web through the module)
    patient = types.ModuleType("aiohttp")
    patient.__dict__.update(aiohttp.__dict__)
    patient.ClientSession = functools.partial(aiohttp.ClientSession, timeout=aiohttp.ClientTimeout(total=None))
    return patient


def _on_pystan_worker(fn, *args, **kwargs):
    global _PYSTAN_WORKER
    if _PYSTAN_WORKER is None:
        # PyStan's client sessions keep aiohttp's default 5-minute limit per request, and a compile
        # (one request) can take longer on a loaded machine: ours wait for as long as it takes
        import stan.common
        stan.common.aiohttp = _patient_aiohttp()
        _PYSTAN_WORKER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ppmlib-pystan")
    return _PYSTAN_WORKER.submit(fn, *args, **kwargs).result()


def _jsonable(data: dict) -> dict:
    out = {}
    for key, value in data.items():
        arr = np.asarray(value)
        out[key] = arr.tolist() if arr.ndim else arr.item()
    return out


@contextlib.contextmanager
def _captured_output():
    """Send Python-level and file-descriptor-level stdout/stderr to a buffer.

    PyStan prints "Building..." and sampler messages from Python, and the C++ compiler writes its
    warnings straight to file descriptors 1 and 2 (which ipykernel forwards into notebook cells).
    The caller's thread is blocked meanwhile, so swapping the process-wide descriptors is safe.
    """
    buffer = io.StringIO()
    with tempfile.TemporaryFile() as raw:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(raw.fileno(), 1)
        os.dup2(raw.fileno(), 2)
        try:
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                yield buffer
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            raw.seek(0)
            buffer.write(raw.read().decode(errors="replace"))


# a number as Python, Stan or a compiler writes it, not part of a word or of a longer number
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _without_data(text: str, data: dict) -> str:
    """``text`` with every number equal to a value of ``data`` (exactly, or to the 6 significant
    digits Stan prints) replaced by ``<data>``: backends repeat their data in error messages.

    Small numbers that are also data (a count of 3, n) are removed wherever they occur; a message
    that loses a line number is better than one that carries a confidential value.
    """
    def rounded(value: float) -> float:
        return float(f"{value:.6g}")

    secret = set()
    for value in data.values():
        arr = np.asarray(value)
        if arr.dtype.kind in "biuf":
            flat = np.abs(arr.astype(float).ravel())
            secret.update(flat.tolist())
            secret.update(rounded(v) for v in flat.tolist())

    def swap(match: re.Match) -> str:
        value = abs(float(match.group()))
        return "<data>" if value in secret or rounded(value) in secret else match.group()

    return _NUMBER.sub(swap, text)


def _run_captured(backend: str, work, data: dict):
    """Run ``work(chatter)`` with all output captured into ``chatter`` (see :func:`_captured_output`).

    Returns ``(work's result, the captured text)``; the text is also logged at DEBUG level. A failure
    is raised as RuntimeError with the tail of the output, and only after the capture has ended, so
    that the message includes what the compiler wrote straight to the file descriptors. The message
    holds no value of ``data`` (:func:`_without_data`), and the backend's exception is not chained
    to it: its text (PyStan's repeats the whole data dict) would be printed with the traceback.
    """
    with _captured_output() as chatter:
        try:
            result = work(chatter)
        except Exception as err:
            failure = f"{type(err).__name__}: {err}"
        else:
            failure = None
    if failure is not None:
        # the error last and whole: what the compiler wrote to the descriptors joins the buffer only
        # when the capture ends, and a long compile log would otherwise push the error out of the tail
        output, error = _without_data(chatter.getvalue(), data)[-2500:], _without_data(failure, data)[-1500:]
        raise RuntimeError(f"{backend} failed; its last output was:\n{output}\n{error}") from None
    log.debug("%s output:\n%s", backend, chatter.getvalue())
    return result, chatter.getvalue()


def _chain_after_chain(arr: np.ndarray, chains: int) -> np.ndarray:
    """PyStan 3 flattens (draw, chain) with the chain index fastest (draw 1 of every chain, then
    draw 2, ...); reorder the leading axis so that each chain's draws are contiguous."""
    per_chain = arr.shape[0] // chains
    return arr.reshape(per_chain, chains, *arr.shape[1:]).swapaxes(0, 1).reshape(arr.shape)


# What httpstan leaves on disk, and ppmlib's policy. httpstan stores every seeded fit in its cache
# (one file per chain, readable by anyone, draws of the unweighted posterior of confidential data
# included) to serve a repeated (program, data, seed) from it. ppmlib keeps no fit: each chain's
# file is written 0600 and deleted once the draws are read, and each process salts the fit's name,
# since processes that share a hash seed (Dask's workers all get PYTHONHASHSEED=6640) compute the
# same name for the same request, and one would delete the fit another is reading. Each chain's
# Unix socket goes into a private folder of this process (emptied after every fit, removed at exit;
# folders of processes that died are removed by the next one); a compile runs in a temporary working
# folder, since setuptools writes build/ into the current one. Compiled models stay cached in
# ~/.cache/httpstan/<version>/models: `make clean-cache` (clean_caches) removes what a killed run left.
#
# And one speed fix. httpstan reads each chain's output in a coroutine (services_stub.call) that
# loops on a *blocking* select with a 10 ms timeout and yields to the event loop only when nothing
# arrived within it. A chain that emits a draw more often than every 10 ms (the CE mixture: every
# 5-8 ms) keeps its coroutine in that loop, so the other chains' sockets go unread, fill, and those
# chains stop in send() until the first one finishes: measured on the paper-size CE fit, one chain
# of two sat blocked ~3 s and the 2-chain fit took 13.8 s instead of 10.9 s. A select that never
# waits (_SelectWithoutWaiting) lets every coroutine yield once it has read what was there; the
# draws are the same (they come from the chain processes, whatever order the sockets are read in).

SOCKET_PREFIX = "ppmlib-httpstan-"


class _HttpstanHousekeeping:
    """Installed once per process, on the PyStan worker thread (where httpstan's server runs)."""

    def __init__(self):
        import httpstan.cache
        import httpstan.fits
        import httpstan.services_stub

        self.fit_names: list[str] = []
        self.socket_folder = _private_socket_folder()
        name_fit = httpstan.fits.calculate_fit_name
        salt = secrets.token_hex(4)  # this process's own names (see the comment above)

        def recorded(function, model_name, kwargs):
            name = name_fit(function, model_name, kwargs) + salt
            self.fit_names.append(name)
            return name

        httpstan.fits.calculate_fit_name = recorded
        httpstan.cache.dump_fit = _dump_fit_privately
        # the chains run in httpstan's pool of forked worker processes: ours die with this process
        # (httpstan's own pool outlives a killed parent, blocked on its queue, for as long as the machine runs)
        httpstan.services_stub.executor = _worker_pool()
        httpstan.services_stub.tempfile = _TempfileIn(self.socket_folder)
        httpstan.services_stub.select = _SelectWithoutWaiting()

    def after_fit(self) -> None:
        """Delete this fit's files from httpstan's cache and its chains' sockets."""
        import httpstan.cache
        for name in self.fit_names:
            with contextlib.suppress(KeyError):
                httpstan.cache.delete_fit(name)
            _leftovers.unregister(httpstan.cache.fit_path(name))
        self.fit_names.clear()
        for socket_file in Path(self.socket_folder).glob("*.sock"):
            socket_file.unlink(missing_ok=True)


class _TempfileIn:
    """The ``tempfile`` module, except that ``mkstemp`` defaults to one folder (httpstan's sockets)."""

    def __init__(self, folder: str):
        self.folder = folder

    def mkstemp(self, *args, **kwargs):
        kwargs.setdefault("dir", self.folder)
        return tempfile.mkstemp(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(tempfile, name)


class _SelectWithoutWaiting:
    """The ``select`` module, except that ``select.select`` never waits (its timeout is ignored):
    httpstan's read loop then yields to the event loop whenever its chain has nothing new."""

    @staticmethod
    def select(rlist, wlist, xlist, timeout=None):
        return select.select(rlist, wlist, xlist, 0)

    def __getattr__(self, name):
        return getattr(select, name)


def _pool_worker_start(parent: int) -> None:
    """A chain worker's first act: die with ``parent``, and leave Ctrl-C to it (as httpstan's own)."""
    import signal
    _children.die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_pool() -> concurrent.futures.ProcessPoolExecutor:
    """httpstan's pool of chain workers (forked, as httpstan makes it), each dying with this process."""
    import multiprocessing
    return concurrent.futures.ProcessPoolExecutor(mp_context=multiprocessing.get_context("fork"),
                                                  initializer=_pool_worker_start, initargs=(os.getpid(),))


def _dump_fit_privately(fit_bytes: bytes, name: str) -> None:
    """httpstan.cache.dump_fit, but readable by the owner only (it holds posterior draws), and recorded
    so that the next run removes it if this one is killed before deleting it."""
    import httpstan.cache
    path = httpstan.cache.fit_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    _leftovers.register(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # also when the file existed with other permissions
    with os.fdopen(fd, "wb") as handle:
        handle.write(fit_bytes)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


#: A Unix socket's path may not exceed 107 bytes; httpstan adds about 30 to the folder's
SOCKET_FOLDER_MAX = 60


def _socket_base() -> Path:
    """The temporary folder, or /tmp when its path is too long to hold a chain's socket."""
    base = Path(tempfile.gettempdir())
    if len(str(base)) + len(SOCKET_PREFIX) + 20 > SOCKET_FOLDER_MAX and Path("/tmp").is_dir():
        return Path("/tmp")
    return base


def _private_socket_folder() -> str:
    """A 0700 folder for this process's sockets, removed at exit; removes those of dead processes."""
    import atexit
    import shutil
    base = _socket_base()
    for folder in base.glob(f"{SOCKET_PREFIX}*-*"):
        pid = folder.name[len(SOCKET_PREFIX):].split("-")[0]
        if pid.isdigit() and not _process_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
    folder = tempfile.mkdtemp(prefix=f"{SOCKET_PREFIX}{os.getpid()}-", dir=base)
    _leftovers.register(folder)
    atexit.register(_remove_socket_folder, folder)
    return folder


def _remove_socket_folder(folder: str) -> None:
    import shutil
    shutil.rmtree(folder, ignore_errors=True)
    _leftovers.unregister(folder)


@contextlib.contextmanager
def _in_temporary_folder():
    """Run in a temporary working folder (httpstan's compile writes build/ into the current one).
    The process-wide chdir is safe for the same reason as the descriptor swap above: the caller's
    thread is blocked while the PyStan worker runs."""
    previous = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="ppmlib-build-") as folder:
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(previous)


_HOUSEKEEPING: _HttpstanHousekeeping | None = None


def _pystan_run(code: str, data: dict, chains, draws, warmup, seed, adapt_delta, max_treedepth,
                init=None) -> Draws:
    import stan

    global _HOUSEKEEPING
    if _HOUSEKEEPING is None:
        _HOUSEKEEPING = _HttpstanHousekeeping()

    def work(chatter):
        with _captured_log(logging.getLogger("httpstan"), chatter, logging.WARNING):
            with _in_temporary_folder():
                posterior = stan.build(code, data=data, random_seed=seed)
            start = {} if init is None else {"init": [init] * chains}  # the same start for every chain
            return posterior.sample(num_chains=chains, num_samples=draws, num_warmup=warmup, delta=adapt_delta,
                                    max_depth=max_treedepth, **start)

    try:
        fit, messages = _run_captured("PyStan", work, data)
    finally:
        _HOUSEKEEPING.after_fit()
    params = {}
    for name, dims in zip(fit.param_names, fit.dims):
        arr = np.asarray(fit[name])
        if arr.size == 0:  # e.g. log_lik when emit_log_lik = 0
            continue
        flat = np.moveaxis(arr.reshape(*dims, -1), -1, 0) if dims else arr.reshape(-1)
        # cmdstanpy's memory layout (the draw axis fastest): arithmetic whose rounding or speed depends
        # on the layout (numpy's einsum does) then gives the same bits on both backends, and the
        # mixture's log-likelihood is 3-4x faster in it than in the C order PyStan returns
        params[name] = np.asfortranarray(_chain_after_chain(flat, chains))
    sampler = {name: _chain_after_chain(np.asarray(fit[name]).reshape(-1), chains)
               for name in fit.sample_and_sampler_param_names}
    return Draws(params=params, sampler=sampler, chains=chains, backend="pystan", messages=messages)


def _sample_pystan(path: Path, data: dict, *, chains, draws, warmup, seed, adapt_delta, max_treedepth,
                   init=None) -> Draws:
    return _on_pystan_worker(_pystan_run, path.read_text(), _jsonable(data), chains, draws, warmup, seed, adapt_delta,
                             max_treedepth, init)


def clean_caches(*, httpstan_cache: Path | None = None, temp: Path | None = None) -> dict:
    """Remove what Stan runs leave behind when a process is killed: ``make clean-cache``.

    Removes httpstan's stored fits (``<cache>/models/*/fits/*``; ppmlib deletes its own after
    each fit, so only a killed run leaves any), httpstan's chain sockets (``httpstan_*.sock``) and
    ppmlib's temporary folders (``ppmlib-httpstan-*``, ``ppmlib-build-*``, ``ppmlib-cmdstan-*``)
    in the temporary folder. Compiled models are kept. Run it when no fit is running: a running
    fit's sockets and files would go too.

    Parameters
    ----------
    httpstan_cache : pathlib.Path, optional
        httpstan's cache folder; default ``httpstan.cache.cache_directory()`` when PyStan is installed.
    temp : pathlib.Path, optional
        The temporary folder; default ``tempfile.gettempdir()``.

    Returns
    -------
    dict
        ``{"files": count, "bytes": size}`` of what was removed.
    """
    import shutil

    if httpstan_cache is None and pystan_available():
        import httpstan.cache
        httpstan_cache = httpstan.cache.cache_directory()
    temp = Path(temp or tempfile.gettempdir())
    doomed = list(Path(httpstan_cache).glob("models/*/fits/*")) if httpstan_cache else []
    doomed += list(temp.glob("httpstan_*.sock"))
    doomed += [p for prefix in (SOCKET_PREFIX, "ppmlib-build-", "ppmlib-cmdstan-") for p in temp.glob(f"{prefix}*")]
    removed = {"files": 0, "bytes": 0}
    for path in doomed:
        items = [f for f in path.rglob("*") if not f.is_dir()] if path.is_dir() else [path]
        size = sum(f.lstat().st_size for f in items)
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed["files"] += len(items)
        removed["bytes"] += size
    return removed


def _main(argv=None) -> int:
    """``python -m ppmlib.inference.backends --clean-cache`` (``make clean-cache``): what killed runs
    recorded (:mod:`ppmlib._leftovers`), then :func:`clean_caches`."""
    import argparse
    parser = argparse.ArgumentParser(prog="python -m ppmlib.inference.backends", description=clean_caches.__doc__.splitlines()[0])
    parser.add_argument("--clean-cache", action="store_true", help="remove stored fits, sockets and temporary folders")
    args = parser.parse_args(argv)
    if not args.clean_cache:
        parser.error("nothing to do: pass --clean-cache")
    # first what killed runs recorded, wherever it is (a command's staging folder beside its --out, say)
    for path in _leftovers.sweep():
        print(f"removed {path}, left by a killed run")
    removed = clean_caches()
    print(f"removed {removed['files']} files ({removed['bytes'] / 1e6:.1f} MB); compiled models kept")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
