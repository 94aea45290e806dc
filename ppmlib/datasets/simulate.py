"""The simulation designs of the papers.

* less skewed: n counts from Poisson(mu) (2020 paper, section 3.1; the papers do not state mu, the
  book uses 100);
* highly skewed: the mixture 0.2 NB(100, 5) + 0.8 NB(100, 20), NB with mean mu and variance
  mu + mu^2 / phi (2020 paper, section 3.2; 2025 paper, section 2.1).
"""
from __future__ import annotations

__all__ = ["poisson", "nb_mixture"]

import numpy as np

from ppmlib import _checks
from ppmlib.models.families import negbin_draw
from ppmlib.errors import BadArgument


def poisson(n: int, mu: float, seed) -> np.ndarray:
    """n counts from Poisson(mu), shape (n,). The papers do not state mu; the book uses mu = 100.

    Parameters
    ----------
    n : int
        The number of counts.
    mu : float
        The Poisson mean.
    seed : int or numpy.random.Generator
        The randomness.

    Returns
    -------
    ndarray of int, shape (n,)

    See Also
    --------
    nb_mixture : the highly skewed design.

    Examples
    --------
    >>> poisson(5, 100, seed=1)
    array([100,  94, 111, 101, 108])
    """
    n = _checks.integer(n, "n", low=1)
    mu = _checks.real(mu, "mu", low=0, low_open=True)
    return np.random.default_rng(seed).poisson(mu, size=n)


def nb_mixture(n: int, mus, phis, probs, seed) -> np.ndarray:
    """n counts from the mixture sum_k probs_k NB(mus_k, phis_k).

    The skewed design of the papers is ``mus=(100, 100), phis=(5, 20), probs=(0.2, 0.8)``.

    Parameters
    ----------
    n : int
        Number of records.
    mus, phis, probs : array_like, shape (K,)
        Each component's mean, dispersion and probability (the probabilities sum to 1).
    seed : int or None
        Seed of the generator.

    Returns
    -------
    ndarray of int, shape (n,)

    See Also
    --------
    poisson : the less skewed design.

    Examples
    --------
    >>> y = nb_mixture(1000, [100, 100], [5, 20], [0.2, 0.8], seed=1)
    >>> y.shape, round(float(y.mean()), 1)
    ((1000,), 99.5)
    """
    n = _checks.integer(n, "n", low=1)
    mus = _checks.finite_array(mus, "mus", ndim=1)
    phis = _checks.finite_array(phis, "phis", ndim=1)
    probs = _checks.finite_array(probs, "probs", ndim=1)
    if not (mus.size == phis.size == probs.size):
        raise BadArgument(f"mus, phis and probs must have the same length, got {mus.size}, {phis.size}, {probs.size}")
    if (mus <= 0).any() or (phis <= 0).any():
        raise BadArgument("mus and phis must be positive")
    if (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
        raise BadArgument(f"probs must be non-negative and sum to 1, got sum {probs.sum():g}")
    rng = np.random.default_rng(seed)
    component = rng.choice(probs.size, size=n, p=probs / probs.sum())
    return negbin_draw(rng, mus[component], phis[component])
