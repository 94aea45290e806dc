"""The simulation designs of the papers (ALGORITHMS.md section 8)."""
from __future__ import annotations

import numpy as np

from . import _checks


def poisson(n: int, mu: float, seed) -> np.ndarray:
    """n counts from Poisson(mu). The papers do not state mu; the book uses mu = 100."""
    n = _checks.integer(n, "n", low=1)
    mu = _checks.real(mu, "mu", low=0, low_open=True)
    return np.random.default_rng(seed).poisson(mu, size=n)


def negbin(rng: np.random.Generator, mu, phi, size=None) -> np.ndarray:
    """Negative binomial with mean ``mu`` and variance mu + mu^2 / phi (Stan's neg_binomial_2)."""
    return rng.negative_binomial(phi, np.asarray(phi) / (np.asarray(phi) + np.asarray(mu)), size=size)


def nb_mixture(n: int, mus, phis, probs, seed) -> np.ndarray:
    """n counts from the mixture sum_k probs_k NB(mus_k, phis_k).

    The skewed design of the papers is ``mus=(100, 100), phis=(5, 20), probs=(0.2, 0.8)``.
    """
    n = _checks.integer(n, "n", low=1)
    mus = _checks.finite_array(mus, "mus", ndim=1)
    phis = _checks.finite_array(phis, "phis", ndim=1)
    probs = _checks.finite_array(probs, "probs", ndim=1)
    if not (mus.size == phis.size == probs.size):
        raise ValueError(f"mus, phis and probs must have the same length, got {mus.size}, {phis.size}, {probs.size}")
    if (mus <= 0).any() or (phis <= 0).any():
        raise ValueError("mus and phis must be positive")
    if (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
        raise ValueError(f"probs must be non-negative and sum to 1, got sum {probs.sum():g}")
    rng = np.random.default_rng(seed)
    component = rng.choice(probs.size, size=n, p=probs / probs.sum())
    return negbin(rng, mus[component], phis[component])
