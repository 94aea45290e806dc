"""A small shipped :class:`ppmlib.Fit` of stored Stan draws, for examples that must run without Stan.

``data/example_fit.json`` holds one real fit: :data:`SETTINGS` says which (the unweighted Poisson
model on ``ppmlib.datasets.simulate.poisson(100, 100, seed=1)``, 4 chains x 200 draws after 200 warmup,
seed 2020, on PyStan). It keeps the draws of ``lambda`` and NUTS's per-draw statistics
(divergences, tree depth, step size, energy, ...), so :func:`ppmlib.example_fit` gives everything a Stan
fit gives (diagnostics, the per-record log-likelihood, synthetic data, :meth:`ppmlib.Fit.to_arviz`)
in a few milliseconds. The docstring examples of ppmlib use it, and
:class:`ppmlib.inference.exact.ConjugateSampler` where they need new fits, so they run in ``make test``
without Stan.

``python -m ppmlib.datasets.example`` refits it with Stan and rewrites the file (the same numbers on
either backend with the same Stan release; a test checks the shipped file against a refit).
"""
from __future__ import annotations

__all__ = ["SETTINGS", "example_fit", "write_example_fit"]

import json
from pathlib import Path

import numpy as np

from ppmlib.datasets import simulate
from ppmlib._files import write_text_atomically
from ppmlib._shipped import shipped_file
from ppmlib.models.families import family
from ppmlib.inference.posterior import Fit, Sampler, fit

FILE_NAME = "example_fit.json"
REGENERATE = "regenerate it with: python -m ppmlib.datasets.example"

#: How the stored fit was made: ``fit(model, simulate.poisson(n, mu, seed=data_seed), sampler=..., seed=seed)``.
SETTINGS = {"model": "poisson", "n": 100, "mu": 100, "data_seed": 1, "chains": 4, "draws": 200, "warmup": 200,
            "seed": 2020}


def _data() -> np.ndarray:
    return simulate.poisson(SETTINGS["n"], SETTINGS["mu"], seed=SETTINGS["data_seed"])


def example_fit() -> Fit:
    """The shipped example fit: 800 stored Stan draws of the Poisson rate for 100 counts near 100.

    Returns
    -------
    Fit
        A new :class:`ppmlib.Fit` on every call (draws ``lambda`` of shape (800,), the sampler's
        statistics, ``y`` of shape (100,), weights all 1, 4 chains), as :data:`ppmlib.datasets.example.SETTINGS` made it.

    Raises
    ------
    FileNotFoundError
        When ``data/example_fit.json`` is missing (the message says how to regenerate it).

    Examples
    --------
    >>> posterior = example_fit()
    >>> posterior.draws["lambda"].shape, posterior.y.shape, posterior.chains, posterior.backend
    ((800,), (100,), 4, 'pystan')
    >>> round(float(posterior.draws["lambda"].mean()), 1)
    99.6
    >>> sorted(posterior.sampler)
    ['accept_stat__', 'divergent__', 'energy__', 'lp__', 'n_leapfrog__', 'stepsize__', 'treedepth__']
    """
    stored = json.loads(shipped_file("data", FILE_NAME, hint=REGENERATE).read_text())
    fam = family(stored["model"])
    y = fam.check_y(stored["y"])
    return Fit(fam, y, None, np.ones(y.size), {k: np.asarray(v) for k, v in stored["draws"].items()},
               {k: np.asarray(v) for k, v in stored["sampler"].items()}, stored["chains"], stored["backend"],
               stored["seed"])


def _to_json(posterior: Fit) -> str:
    """The fit as JSON: every float written with repr, so reading it back gives the same bits."""
    def listed(arrays: dict) -> dict:
        return {k: np.asarray(v).tolist() for k, v in arrays.items()}
    return json.dumps({"settings": SETTINGS, "model": posterior.model.name, "y": posterior.y.tolist(),
                       "chains": posterior.chains, "backend": posterior.backend, "seed": posterior.seed,
                       "draws": listed(posterior.draws), "sampler": listed(posterior.sampler)}) + "\n"


def write_example_fit(path=None) -> Path:
    """Refit the example with Stan (:data:`SETTINGS`) and write it as JSON, atomically.

    Parameters
    ----------
    path : str or Path, optional
        Where to write; None means the shipped ``data/example_fit.json``.

    Returns
    -------
    Path
        The file written.
    """
    sampler = Sampler(chains=SETTINGS["chains"], draws=SETTINGS["draws"], warmup=SETTINGS["warmup"])
    posterior = fit(SETTINGS["model"], _data(), sampler=sampler, seed=SETTINGS["seed"])
    path = shipped_file("data", FILE_NAME, must_exist=False) if path is None else Path(path)
    return write_text_atomically(path, _to_json(posterior))


if __name__ == "__main__":
    print(write_example_fit())
