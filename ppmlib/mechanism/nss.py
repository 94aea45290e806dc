"""Noisy sufficient statistics (NSS): a strict release built for small epsilon (ALGORITHMS section 18).

The outcome log y is scaled into [-1, 1] by public bounds (low, high): z = (log y - centre) / half,
centre = (low + high) / 2, half = (high - low) / 2, and clipped. The keys are released as they are,
so the cells c (their cross-classification) and the counts n_c are public. Per cell the release
holds two noisy sums, each by the Gaussian mechanism (Bun and Steinke 2016):

* S_c = sum_{i in c} z_i + N(0, sigma_S^2). Adding or removing one record changes one cell's sum by
  z in [-1, 1]: L2 sensitivity 1 over the vector of all cells' sums.
* Q_c = sum_{i in c} z_i^2 + N(0, sigma_Q^2). The mechanism adds noise to sum (z_i^2 - 1/2), which one
  record changes by at most 1/2 (z^2 lies in [0, 1]): L2 sensitivity 1/2; n_c / 2 (public) is added
  back afterwards (post-processing).

A block with sensitivity D and noise sigma is rho-zCDP with rho = D^2 / (2 sigma^2), so sigma =
D / sqrt(2 rho). ``share`` of the total rho goes to the sums S (their noise decides the cell means),
the rest to Q (whose information is pooled over cells through one sigma); rho adds up over the two
blocks. The posterior (:func:`posterior`, ``stan/nss.stan``) and the m datasets drawn from m of its
draws are post-processing of this one noisy release, so the whole release is rho-zCDP, i.e.
(epsilon, delta)-DP with epsilon = :func:`ppmlib.mechanism.ledger.cdp_epsilon` (rho, delta), for every
database against adding or removing one record (replacing one record is two steps: 4 rho).

What the guarantee does not cover: the keys and the cell counts n_c (released as they are, like
the censored release's keys), the release's size n, the public bounds (chosen before the data), and
the input checks (a refusal says only that the bounds exclude most of the data). The noise is a
seeded numpy draw (``noise="numpy"``, PCG64 from the seed) at OpenDP's scale: reproducible, but a
floating-point Gaussian is not hardened against the attacks on floating-point noise (Mironov 2012);
``noise="opendp"`` draws it with OpenDP's Gaussian mechanism instead, hardened but not seedable.
"""
from __future__ import annotations

__all__ = ["SENSITIVITY_S", "SENSITIVITY_Q", "NOISES", "Cells", "NoisyStatistics", "NSSRelease", "cells_of",
           "noise_scales", "opendp_gaussian", "release_statistics", "stan_data", "posterior", "synthesize",
           "check_bounds"]

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.errors import BadArgument, DataRefused
from ppmlib.mechanism.ledger import cdp_epsilon, rho_for_total
from ppmlib.seeding import seeds as make_seeds

#: L2 sensitivity of the vector of the cells' sums of z (one record, z in [-1, 1]).
SENSITIVITY_S = 1.0
#: L2 sensitivity of the vector of the cells' sums of z^2 - 1/2 (one record, z^2 - 1/2 in [-1/2, 1/2]).
SENSITIVITY_Q = 0.5
#: How the Gaussian noise is drawn.
NOISES = ("numpy", "opendp")
#: Refuse bounds that clip more than this share of the records.
MAX_CLIPPED = 0.5


@dataclass(frozen=True)
class Cells:
    """The public cells: each record's cell and each cell's level of each key.

    Attributes
    ----------
    index : ndarray of int, shape (n,)
        Record i's cell, 0..C-1.
    levels : ndarray of int, shape (C, K)
        Cell c's level (0-based) of key k.
    sizes : ndarray of int, shape (K,)
        The number of levels of each key.
    counts : ndarray of int, shape (C,)
        n_c.
    """
    index: np.ndarray
    levels: np.ndarray
    sizes: np.ndarray
    counts: np.ndarray


def cells_of(keys: pd.DataFrame | None, n: int) -> Cells:
    """The cross-classification of the keys' values (one cell when there are none).

    Parameters
    ----------
    keys : pandas.DataFrame or None
        The categorical keys, one column each (values compared as strings).
    n : int
        Records.

    Returns
    -------
    Cells
    """
    if keys is None or keys.shape[1] == 0:
        return Cells(np.zeros(n, int), np.zeros((1, 0), int), np.zeros(0, int), np.array([n]))
    codes = [pd.factorize(keys[c].astype(str), sort=True) for c in keys.columns]
    table = np.column_stack([code for code, _ in codes])
    levels, index = np.unique(table, axis=0, return_inverse=True)
    return Cells(index.ravel(), levels, np.array([len(u) for _, u in codes]), np.bincount(index.ravel()))


def noise_scales(rho: float, share: float) -> tuple[float, float]:
    """(sigma_S, sigma_Q): each block's Gaussian scale, sensitivity / sqrt(2 rho_block).

    Parameters
    ----------
    rho : float
        The release's zCDP parameter, > 0.
    share : float
        The share of rho given to the sums S, in (0, 1); Q gets the rest.

    Returns
    -------
    (float, float)
    """
    rho = _checks.real(rho, "rho", low=0, low_open=True)
    share = _checks.real(share, "share", low=0, high=1, low_open=True, high_open=True)
    return (SENSITIVITY_S / math.sqrt(2 * share * rho), SENSITIVITY_Q / math.sqrt(2 * (1 - share) * rho))


def check_bounds(log_y: np.ndarray, bounds) -> tuple[float, float]:
    """The public bounds, refused when they are not ordered or clip more than half the records.

    The refusal is an input check outside the guarantee (it says only that the bounds were wrong).

    Parameters
    ----------
    log_y : ndarray, shape (n,)
        The confidential log values.
    bounds : sequence of two floats
        The public (low, high) on the log scale.

    Returns
    -------
    tuple of float
        (low, high), checked.
    """
    if len(bounds) != 2:
        raise BadArgument(f"bounds must be (low, high) on the log scale, got {len(bounds)} values")
    low, high = (_checks.real(b, "bounds") for b in bounds)
    if not low < high:
        raise BadArgument(f"bounds must satisfy low < high, got ({low:g}, {high:g})")
    outside = float(np.mean((log_y < low) | (log_y > high)))
    if outside > MAX_CLIPPED:
        raise DataRefused(f"the public bounds ({low:g}, {high:g}) exclude {outside:.0%} of the records' log values "
                          f"(more than {MAX_CLIPPED:.0%}): choose bounds that cover the data's range")
    return low, high


@dataclass(frozen=True)
class NoisyStatistics:
    """The release: per cell n_c, S_c (noisy sum of z) and Q_c (noisy sum of z^2), and how they were made.

    Holds no confidential value: only public counts, bounds and noisy sums.

    Attributes
    ----------
    cells : Cells
        The public cells and their counts n_c.
    S, Q : ndarray, shape (C,)
        The noisy sums of z and of z^2 per cell.
    sigma_S, sigma_Q : float
        The Gaussian scales of the two blocks.
    rho : float
        The release's zCDP parameter.
    share : float
        The share of rho spent on S.
    bounds : tuple of float
        The public (low, high) of log y.
    noise : str
        How the noise was drawn (``"numpy"`` seeded, or ``"opendp"``).
    """
    cells: Cells
    S: np.ndarray
    Q: np.ndarray
    sigma_S: float
    sigma_Q: float
    rho: float
    share: float
    bounds: tuple
    noise: str

    @property
    def centre(self) -> float:
        return (self.bounds[0] + self.bounds[1]) / 2

    @property
    def half(self) -> float:
        return (self.bounds[1] - self.bounds[0]) / 2


def _gaussian(values: np.ndarray, sigma: float, noise: str, rng) -> np.ndarray:
    if sigma == 0:
        return values.copy()
    if noise == "numpy":
        return values + rng.normal(0.0, sigma, size=values.shape)
    return np.asarray(opendp_gaussian(sigma)(values.tolist()), float)


def opendp_gaussian(sigma: float):
    """OpenDP's Gaussian mechanism on a vector of floats under the L2 distance, at scale ``sigma``.

    Its privacy map gives rho of a block: ``opendp_gaussian(sigma).map(sensitivity)``.

    Parameters
    ----------
    sigma : float
        The noise scale, >= 0.

    Returns
    -------
    opendp.mod.Measurement
        The measurement (call it on a list of floats for the noisy values).
    """
    import opendp.prelude as dp
    dp.enable_features("contrib")
    return dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                              scale=sigma)


def release_statistics(log_y, keys, *, bounds, rho: float, share: float = 0.5, seed=None,
                       noise: str = "numpy") -> NoisyStatistics:
    """The noisy sums per public cell: rho-zCDP for every database (add or remove one record).

    Parameters
    ----------
    log_y : array, shape (n,)
        The confidential outcome on the log scale.
    keys : pandas.DataFrame or None
        The categorical keys (public, released as they are).
    bounds : (float, float)
        Public (low, high) on the log scale, fixed before seeing the data.
    rho : float
        The release's zCDP parameter, > 0; ``inf`` adds no noise (for tests only: no privacy).
    share : float
        The share of rho spent on the sums S, in (0, 1).
    seed : int, optional
        Seeds the numpy noise.
    noise : str
        "numpy" (seeded, not floating-point hardened) or "opendp" (OpenDP's sampler, unseeded).

    Returns
    -------
    NoisyStatistics
    """
    log_y = _checks.finite_array(log_y, "log_y", ndim=1)
    if noise not in NOISES:
        raise BadArgument(f"noise must be one of {', '.join(NOISES)}, got {noise!r}")
    share = _checks.real(share, "share", low=0, high=1, low_open=True, high_open=True)
    if not (isinstance(rho, (int, float)) and rho > 0):
        raise BadArgument(f"rho must be > 0, got {rho!r}")
    low, high = check_bounds(log_y, bounds)
    cells = cells_of(keys, len(log_y))
    z = np.clip((log_y - (low + high) / 2) / ((high - low) / 2), -1.0, 1.0)
    C = len(cells.counts)
    S = np.bincount(cells.index, weights=z, minlength=C)
    Qc = np.bincount(cells.index, weights=z * z - 0.5, minlength=C)
    sigma_S, sigma_Q = (0.0, 0.0) if math.isinf(rho) else noise_scales(rho, share)
    rng = np.random.default_rng(_checks.seed(seed))
    S = _gaussian(S, sigma_S, noise, rng)
    Q = _gaussian(Qc, sigma_Q, noise, rng) + cells.counts / 2
    return NoisyStatistics(cells, S, Q, sigma_S, sigma_Q, float(rho), share, (low, high), noise)


def stan_data(stats: NoisyStatistics, *, cell_effects: bool = False) -> dict:
    """The data block of ``stan/nss.stan`` (public and noisy values only).

    Parameters
    ----------
    stats : NoisyStatistics
    cell_effects : bool

    Returns
    -------
    dict
    """
    cells = stats.cells
    return {"C": len(cells.counts), "K": len(cells.sizes), "L": cells.sizes.tolist(),
            "level": (cells.levels + 1).tolist(), "n": cells.counts.astype(float).tolist(),
            "S": stats.S.tolist(), "Q": stats.Q.tolist(), "noise_S": stats.sigma_S, "noise_Q": stats.sigma_Q,
            "cell_effects": int(cell_effects and len(cells.sizes) > 0)}


def posterior(stats: NoisyStatistics, *, sampler=None, seed: int = 0, cell_effects: bool = False):
    """NUTS draws of the cell means mu (z scale) and sigma given the noisy release (``stan/nss.stan``).

    The cell means are the keys' main effects (sum-to-zero, a fixed Normal(0, 0.5) prior on the z
    scale); ``cell_effects`` adds a non-centred deviation per cell with a hierarchical scale. Off by
    default: on the public wage files the deviations made NUTS diverge at totals of 1 to 5 (the
    benchmark's ``--cell-effects`` measures both), and so did a hierarchical scale per key.

    Parameters
    ----------
    stats : NoisyStatistics
        The noisy release.
    sampler : Sampler, optional
        NUTS settings (default: ``Sampler()``).
    seed : int
        The fit's seed.
    cell_effects : bool
        Add a hierarchical deviation per cell.

    Returns
    -------
    ppmlib.inference.backends.Draws
    """
    from ppmlib.inference import backends
    from ppmlib.inference.posterior import Sampler
    sampler = sampler or Sampler()
    return backends.sample("nss", stan_data(stats, cell_effects=cell_effects), chains=sampler.chains,
                           draws=sampler.draws, warmup=sampler.warmup, seed=seed,
                           adapt_delta=sampler.adapt_delta or backends.STAN_ADAPT_DELTA)


@dataclass(frozen=True)
class NSSRelease:
    """m synthetic datasets from one noisy release, and what it costs.

    Attributes
    ----------
    synthetic : ndarray, shape (m, n)
        Synthetic log y, record i of every dataset in record i's cell (keys released as they are).
    statistics : NoisyStatistics
        The noisy release the datasets are post-processing of.
    rho, delta : float
        The release's zCDP parameter and the delta of its conversion.
    diagnostics : dict
        The posterior fit's diagnostics (:func:`ppmlib.inference.diagnostics.summarize`).
    """
    synthetic: np.ndarray
    statistics: NoisyStatistics
    rho: float
    delta: float
    diagnostics: dict

    @property
    def total(self) -> tuple[float, float]:
        """The whole release's (epsilon, delta), from rho by OpenDP's conversion."""
        return cdp_epsilon(self.rho, self.delta), self.delta

    def statement(self) -> list[str]:
        """The release's privacy in words.

        Returns
        -------
        list of str
        """
        eps, dlt = self.total
        s = self.statistics
        return [
            "guarantee: strict; every number below holds for every database (removal and addition of one record)",
            f"noisy sufficient statistics: per cell the sum of z and of z^2 (log y scaled into [-1, 1] by the public "
            f"bounds ({s.bounds[0]:g}, {s.bounds[1]:g})), Gaussian noise of sd {s.sigma_S:.4g} and {s.sigma_Q:.4g} "
            f"(sensitivity {SENSITIVITY_S:g} and {SENSITIVITY_Q:g}); share {s.share:g} of rho on the sums",
            f"the release as a whole: rho = {self.rho:.4g}-zCDP, i.e. ({eps:.4g}, {dlt:.3g})-DP; the posterior and "
            f"all m datasets are post-processing of the one noisy release",
            "not covered: the keys and the cell counts (released as they are), the release's size n; the noise is "
            + ("a seeded numpy draw at OpenDP's scale, not floating-point hardened" if s.noise == "numpy"
               else "OpenDP's Gaussian sampler (not seeded)"),
        ]


def synthesize(log_y, keys, *, bounds, total_epsilon: float, delta: float = 1e-6, m: int = 5, share: float = 0.5,
               sampler=None, seed: int = 0, noise: str = "numpy", cell_effects: bool = False) -> NSSRelease:
    """m synthetic datasets of log y given the keys, (total_epsilon, delta)-DP for every database as a whole.

    Every check runs before any noise is drawn or any fit is made. rho is the largest whose
    conversion at ``delta`` is total_epsilon (:func:`ppmlib.mechanism.ledger.rho_for_total`).

    Parameters
    ----------
    log_y : array_like, shape (n,)
        The confidential log values.
    keys : pandas.DataFrame or None
        The categorical keys (released as they are; their cells and counts are public).
    bounds : sequence of two floats
        Public (low, high) of log y, fixed before seeing the data.
    total_epsilon, delta : float
        The release's (epsilon, delta), every database.
    m : int
        Synthetic datasets, all post-processing of one noisy release.
    share : float
        The share of rho spent on the sums of z, in (0, 1).
    sampler : Sampler, optional
        NUTS settings.
    seed : int
        Seeds the noise, the fit and the synthetic draws.
    noise : str
        ``"numpy"`` (seeded) or ``"opendp"`` (OpenDP's sampler, not seedable).
    cell_effects : bool
        Add a hierarchical deviation per cell.

    Returns
    -------
    NSSRelease
    """
    from ppmlib.inference.diagnostics import summarize
    from ppmlib.inference.posterior import spaced_draws
    m = _checks.integer(m, "m", low=1)
    rho = rho_for_total(total_epsilon, delta)
    noise_seed, fit_seed, draw_seed = make_seeds(_checks.seed(seed) or 0, 3)
    stats = release_statistics(log_y, keys, bounds=bounds, rho=rho, share=share, seed=noise_seed, noise=noise)
    draws = posterior(stats, sampler=sampler, seed=fit_seed, cell_effects=cell_effects)
    mu, sigma = draws.params["mu"], draws.params["sigma"]
    pick = spaced_draws(len(sigma), m)
    rng = np.random.default_rng(draw_seed)
    index = stats.cells.index
    z = mu[pick][:, index] + sigma[pick][:, None] * rng.standard_normal((m, len(index)))
    diag = summarize({k: draws.params[k] for k in ("mu", "sigma")}, draws.sampler, draws.chains)
    return NSSRelease(stats.centre + stats.half * z, stats, rho, delta, diag)
