"""Compile and sample the Stan programs in ``stan/`` on one of two backends.

* ``cmdstanpy`` when a CmdStan installation is found (cmdstanpy's own lookup: the ``CMDSTAN``
  variable or ``~/.cmdstan``; the conda-forge ``cmdstan`` package sets it up). Executables are
  cached under ``~/.cache/ppmlib/cmdstan`` keyed by the program's hash.
* ``pystan`` (PyStan 3, whose ``httpstan`` wheel ships Stan and compiles with the system g++)
  otherwise. httpstan caches compiled models itself in ``~/.cache/httpstan``.

``PPMLIB_BACKEND=cmdstanpy|pystan`` forces one. Both return a :class:`Draws` with the draw axis
first and chains concatenated chain after chain, so nothing downstream knows which backend ran.
CmdStan is never downloaded from here.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import io
import logging
import os
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

STAN_DIR = Path(os.environ.get("PPMLIB_STAN_DIR", Path(__file__).resolve().parent.parent / "stan"))
BACKENDS = ("cmdstanpy", "pystan")
CACHE_DIR = Path(os.environ.get("PPMLIB_CACHE", Path.home() / ".cache" / "ppmlib"))


class BackendUnavailableError(RuntimeError):
    """Neither Stan backend can run; the message says what to install."""


@dataclass
class Draws:
    """Posterior draws in backend-neutral form.

    ``params[name]`` has shape ``(S, *dims)`` with S = chains * draws_per_chain, chain after chain;
    ``sampler[name]`` holds the sampler's per-draw values (``divergent__``, ``treedepth__``, ...).
    """
    params: dict
    sampler: dict
    chains: int
    backend: str
    messages: str = field(default="", repr=False)


def program_path(name: str) -> Path:
    path = STAN_DIR / f"{name}.stan"
    if not path.is_file():
        raise FileNotFoundError(f"Stan program {path} not found (set PPMLIB_STAN_DIR to the repository's stan/ folder)")
    return path


def cmdstan_available() -> bool:
    """True when cmdstanpy is importable and finds a CmdStan installation (never installs one)."""
    try:
        with warnings.catch_warnings():  # cmdstanpy imports tqdm.auto, which warns in kernels without ipywidgets
            warnings.simplefilter("ignore")
            import cmdstanpy
        cmdstanpy.cmdstan_path()
    except Exception:
        return False
    return True


def pystan_available() -> bool:
    try:
        import stan  # noqa: F401  (PyStan 3)
    except Exception:
        return False
    return True


def backend() -> str:
    """The backend that :func:`sample` will use, honouring ``PPMLIB_BACKEND``."""
    forced = os.environ.get("PPMLIB_BACKEND", "").strip().lower()
    if forced:
        if forced not in BACKENDS:
            raise ValueError(f"PPMLIB_BACKEND must be one of {BACKENDS}, got {forced!r}")
        if forced == "cmdstanpy" and not cmdstan_available():
            raise BackendUnavailableError(
                "PPMLIB_BACKEND=cmdstanpy but no CmdStan installation was found: install the conda-forge "
                "'cmdstan' package (environment.yml) or point CMDSTAN at an existing installation")
        if forced == "pystan" and not pystan_available():
            raise BackendUnavailableError("PPMLIB_BACKEND=pystan but PyStan 3 is not installed: pip install pystan")
        return forced
    if cmdstan_available():
        return "cmdstanpy"
    if pystan_available():
        return "pystan"
    raise BackendUnavailableError(
        "No Stan backend: install PyStan 3 (pip install pystan; needs g++), or cmdstanpy with a CmdStan "
        "installation (conda install -c conda-forge cmdstanpy cmdstan)")


def sample(program: str, data: dict, *, chains: int, draws: int, warmup: int, seed: int) -> Draws:
    """Run NUTS on ``stan/<program>.stan`` with ``data``; ``seed`` makes the result reproducible."""
    chosen = backend()
    runner = _sample_cmdstanpy if chosen == "cmdstanpy" else _sample_pystan
    return runner(program_path(program), data, chains=chains, draws=draws, warmup=warmup, seed=seed)


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


def _sample_cmdstanpy(path: Path, data: dict, *, chains, draws, warmup, seed) -> Draws:
    model = _cmdstan_model(path)
    fit = model.sample(data=data, chains=chains, iter_sampling=draws, iter_warmup=warmup, seed=seed,
                       show_progress=False, show_console=False, parallel_chains=min(chains, os.cpu_count() or 1))
    params = {name: np.asarray(fit.stan_variable(name)) for name in fit.metadata.stan_vars}
    # method variables come as (draws, chains); flatten chain after chain like stan_variable does
    sampler = {name: np.asarray(arr).T.reshape(-1) for name, arr in fit.method_variables().items()}
    return Draws(params=params, sampler=sampler, chains=chains, backend="cmdstanpy")


# --- PyStan 3 -------------------------------------------------------------------------------
# PyStan calls asyncio.run(), which fails inside a running event loop (a Jupyter kernel). Every
# PyStan call therefore runs on one long-lived worker thread that has no event loop; a fresh
# thread per call is not enough (the sampler crashes), so the executor is created once.

_PYSTAN_WORKER: concurrent.futures.ThreadPoolExecutor | None = None


def _on_pystan_worker(fn, *args, **kwargs):
    global _PYSTAN_WORKER
    if _PYSTAN_WORKER is None:
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


def _pystan_run(code: str, data: dict, chains, draws, warmup, seed) -> Draws:
    import stan
    with _captured_output() as chatter:
        try:
            posterior = stan.build(code, data=data, random_seed=seed)
            fit = posterior.sample(num_chains=chains, num_samples=draws, num_warmup=warmup)
        except Exception as err:
            chatter.write(f"\n{type(err).__name__}: {err}")
            failure = err
        else:
            failure = None
    if failure is not None:
        raise RuntimeError(f"PyStan failed; its last output was:\n{chatter.getvalue()[-3000:]}") from failure
    params = {}
    for name, dims in zip(fit.param_names, fit.dims):
        arr = np.asarray(fit[name])
        if arr.size == 0:  # e.g. log_lik when emit_log_lik = 0
            continue
        params[name] = np.moveaxis(arr.reshape(*dims, -1), -1, 0) if dims else arr.reshape(-1)
    sampler = {name: np.asarray(fit[name]).reshape(-1) for name in fit.sample_and_sampler_param_names}
    log.debug("PyStan output:\n%s", chatter.getvalue())
    return Draws(params=params, sampler=sampler, chains=chains, backend="pystan", messages=chatter.getvalue())


def _sample_pystan(path: Path, data: dict, *, chains, draws, warmup, seed) -> Draws:
    return _on_pystan_worker(_pystan_run, path.read_text(), _jsonable(data), chains, draws, warmup, seed)
