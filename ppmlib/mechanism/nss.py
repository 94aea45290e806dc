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

NSS over public bins (:func:`release_counts`, :func:`bin_posterior`, :func:`synthesize_bins`). The
sums above fit a normal distribution per cell; the bins scheme releases the shape itself. log y is
top- and bottom-coded to the public bounds and cut into the public bins of
:mod:`ppmlib.models.bins`; per (cell, bin) the release holds the count plus noise. Adding or
removing one record changes one count by 1: L1 and L2 sensitivity 1 over the whole table, so
Laplace noise of scale 1 / epsilon makes the table pure epsilon-DP (the default), and Gaussian
noise of sd 1 / sqrt(2 rho) makes it rho-zCDP. Each cell's bin probabilities p_c have the prior
Dirichlet(a pi), pi the pooled bin shape (the cells' noisy counts summed, clipped at 0,
normalised) and a = s J max(noise sd, 1) pseudo-records (J bins, ``prior_strength`` s); the true
counts are latent (a seeded numpy Gibbs sampler, :func:`bin_posterior`). The shapes and the m
datasets (a value uniform within its drawn bin) are post-processing of the one noisy table, and
the release states its guarantee through :func:`ppmlib.mechanism.ledger.of_release`. What it does
not cover is as above (keys, cell counts, n, the input checks, numpy noise not hardened).

Without public bounds (:func:`private_bounds`), a declared share of the budget chooses the bins'
range from the data: the quartiles of log y by the exponential mechanism on a public grid
(:data:`BOUNDS_GRID` in steps of the bins' width), each at half the share, the range reaching
:data:`BOUNDS_REACH` times their distance beyond each. The counts get the rest
(:func:`split_budget`); the ledger adds the two (pure epsilons add; for Gaussian counts the bounds'
epsilon^2 / 2 adds to rho). Too few records for the share are refused from public numbers before
any noise (:func:`check_private_bounds`).
"""
from __future__ import annotations

__all__ = ["SENSITIVITY_S", "SENSITIVITY_Q", "SENSITIVITY_COUNTS", "NOISES", "MAX_CELL_BINS", "Cells", "check_bins_settings",
           "NoisyStatistics", "NoisyCounts", "NSSRelease", "cells_of", "noise_scales", "counts_scale",
           "opendp_gaussian", "opendp_laplace", "COUNT_MECHANISMS", "release_statistics", "release_counts", "stan_data", "posterior", "bin_prior",
           "bin_posterior", "BIN_POSTERIORS", "SHAPES", "MEAN_DRAWS",
           "synthesize", "synthesize_bins", "check_bounds", "BOUNDS_GRID", "BOUNDS_QUANTILES", "BOUNDS_REACH", "BOUNDS_SHARE",
           "PrivateBounds", "private_quantile", "private_bounds", "spent_on_bounds", "split_budget",
           "check_private_bounds", "grid_of"]

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.errors import BadArgument, DataRefused
from ppmlib.mechanism.ledger import of_release, rho_for_total
from ppmlib.seeding import seeds as make_seeds

#: L2 sensitivity of the vector of the cells' sums of z (one record, z in [-1, 1]).
SENSITIVITY_S = 1.0
#: L2 sensitivity of the vector of the cells' sums of z^2 - 1/2 (one record, z^2 - 1/2 in [-1/2, 1/2]).
SENSITIVITY_Q = 0.5
#: L2 sensitivity of the table of (cell, bin) counts (one record moves one count by 1).
SENSITIVITY_COUNTS = 1.0
#: How the Gaussian noise is drawn.
NOISES = ("numpy", "opendp")
#: Refuse bounds that clip more than this share of the records.
MAX_CLIPPED = 0.5
#: Refuse a table of more (cell, bin) counts than this (its noise would drown the data, and it is held k times).
MAX_CELL_BINS = 200_000
#: The public grid of candidate bounds of log y when none are given (:func:`private_bounds`): from -25
#: to 25 (values from about 1.4e-11 to 7.2e10, any positive column's range), in steps of the bins' width.
BOUNDS_GRID = (-25.0, 25.0)
#: The quantiles of log y the private bounds start from: the quartiles (an extreme quantile is out of
#: reach at a small epsilon: the exponential mechanism's many far candidates outweigh it).
BOUNDS_QUANTILES = (0.25, 0.75)
#: The bins' range reaches this many times the quartiles' distance beyond each quartile (for a normal
#: log y, 3.4 SDs each side of the median).
BOUNDS_REACH = 2
#: The share of the release's budget the bins scheme spends on private bounds when none are given
#: (measured on the public wage files: ``benchmarks/nss_bins_share.py``).
BOUNDS_SHARE = 0.1


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


def check_bounds(log_y: np.ndarray, bounds, name: str = "bounds") -> tuple[float, float]:
    """The public bounds, refused when they are not ordered or clip more than half the records.

    The refusal is an input check outside the guarantee. It says only that the bounds were wrong, never
    what share of the records they exclude (a statistic of the confidential data).

    Parameters
    ----------
    log_y : ndarray, shape (n,)
        The confidential log values.
    bounds : sequence of two floats
        The public (low, high) on the log scale.
    name : str
        The caller's name for the bounds, in the refusal.

    Returns
    -------
    tuple of float
        (low, high), checked.
    """
    if len(bounds) != 2:
        raise BadArgument(f"{name}= must be (low, high) on the log scale, got {len(bounds)} values")
    low, high = (_checks.real(b, name) for b in bounds)
    if not low < high:
        raise BadArgument(f"{name}= must satisfy low < high, got ({low:g}, {high:g})")
    outside = float(np.mean((log_y < low) | (log_y > high)))
    if outside > MAX_CLIPPED:
        raise DataRefused(f"the public bounds ({low:g}, {high:g}) exclude more than {MAX_CLIPPED:.0%} of the records' "
                          f"log values: choose {name}= that cover the data's range")
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

    def describe(self) -> str:
        """What was released, in one line (public values only).

        Returns
        -------
        str
        """
        return (f"noisy sufficient statistics: per cell the sum of z and of z^2 (log y scaled into [-1, 1] by the "
                f"public bounds ({self.bounds[0]:g}, {self.bounds[1]:g})), Gaussian noise of sd {self.sigma_S:.4g} "
                f"and {self.sigma_Q:.4g} (sensitivity {SENSITIVITY_S:g} and {SENSITIVITY_Q:g}); share {self.share:g} "
                f"of rho on the sums")


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
        The posterior fit's diagnostics (:func:`ppmlib.inference.diagnostics.summarize`; empty for
        the bins scheme's exact draws).
    k_draws : int, optional
        k, the posterior draws the m datasets come from (dataset j uses draw ceil(j k / m)); None: m.
        Free under the guarantee (every draw is post-processing), it decides the between-dataset spread.
    shape : str
        "draws" (dataset j from posterior draw ceil(j k / m)) or "mean" (the bins scheme: every
        dataset from the posterior mean of each cell's shape; k is then not used).
    bounds : PrivateBounds, optional
        The bins' range when it was chosen from the data (its epsilon adds to the release's).
    """
    synthetic: np.ndarray
    statistics: "NoisyStatistics | NoisyCounts"
    rho: float
    delta: float
    diagnostics: dict
    k_draws: int | None = None
    shape: str = "draws"
    bounds: "PrivateBounds | None" = None

    #: Its key in the registry (:mod:`ppmlib.mechanism.schemes`) and the release's synthesizer.
    name = "NSS"

    @property
    def pure(self) -> bool:
        """The noise is Laplace: the release is pure epsilon-DP."""
        return getattr(self.statistics, "mechanism", "gaussian") == "laplace"

    @property
    def total(self) -> tuple[float, float]:
        """The whole release's (epsilon, delta) (:class:`ppmlib.mechanism.ledger.NoisyReleaseLedger`)."""
        return of_release(self).total

    def statement(self) -> list[str]:
        """The release's privacy in words (:func:`ppmlib.mechanism.ledger.of_release`).

        Returns
        -------
        list of str
        """
        return of_release(self).statement()


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


# ---------------------------------------------------------------------------------------------------------------
# NSS over public bins: noisy counts per (cell, bin), Dirichlet draws of each cell's shape


def counts_scale(rho: float) -> float:
    """sigma of the noisy (cell, bin) counts: sensitivity / sqrt(2 rho), the Gaussian mechanism's rho-zCDP scale.

    Parameters
    ----------
    rho : float
        The release's zCDP parameter, > 0.

    Returns
    -------
    float
    """
    rho = _checks.real(rho, "rho", low=0, low_open=True)
    return SENSITIVITY_COUNTS / math.sqrt(2 * rho)


#: The noise of the bins scheme's counts: Gaussian (rho-zCDP) or Laplace (pure epsilon-DP).
COUNT_MECHANISMS = ("gaussian", "laplace")


def opendp_laplace(scale: float):
    """OpenDP's Laplace mechanism on a vector of floats under the L1 distance, at ``scale``.

    Its privacy map gives epsilon: ``opendp_laplace(b).map(sensitivity)`` = sensitivity / b.

    Parameters
    ----------
    scale : float
        b, >= 0.

    Returns
    -------
    opendp.mod.Measurement
    """
    import opendp.prelude as dp
    dp.enable_features("contrib")
    return dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float),
                             scale=scale)


@dataclass(frozen=True)
class NoisyCounts:
    """The bins release: per (cell, bin) a noisy count, and how it was made.

    Holds no confidential value: public counts n_c, public bins and noisy counts.

    Attributes
    ----------
    cells : Cells
        The public cells and their counts n_c.
    counts : ndarray, shape (C, J)
        The noisy count of every (cell, bin).
    edges : ndarray, shape (J + 1,)
        The public bins of log y (:func:`ppmlib.models.bins.bin_edges`).
    mechanism : str
        "gaussian" (N(0, scale^2), rho-zCDP) or "laplace" (Laplace(scale), epsilon-DP).
    scale : float
        The noise's scale: sigma, or the Laplace b (0: no noise).
    rho : float
        The release's zCDP parameter (Laplace: epsilon^2 / 2, Bun and Steinke 2016).
    epsilon : float or None
        Laplace: the release's pure epsilon (sensitivity / b); Gaussian: None.
    noise : str
        How the noise was drawn.
    """
    cells: Cells
    counts: np.ndarray
    edges: np.ndarray
    mechanism: str
    scale: float
    rho: float
    epsilon: float | None
    noise: str

    @property
    def sd(self) -> float:
        """The noise's standard deviation (Laplace: sqrt(2) b)."""
        return self.scale * (math.sqrt(2.0) if self.mechanism == "laplace" else 1.0)

    def log_likelihood(self, residual: np.ndarray) -> np.ndarray:
        """log density of the noise at noisy - true, up to a constant.

        Parameters
        ----------
        residual : ndarray
            Noisy minus true counts.

        Returns
        -------
        ndarray
            Of ``residual``'s shape.
        """
        if self.mechanism == "laplace":
            return -np.abs(residual) / self.scale
        return -residual ** 2 / (2.0 * self.scale ** 2)

    @property
    def bounds(self) -> tuple:
        return float(self.edges[0]), float(self.edges[-1])

    def describe(self) -> str:
        """What was released, in one line (public values only).

        Returns
        -------
        str
        """
        return (f"noisy sufficient statistics over public bins: per cell the count of log y in each of "
                f"{len(self.edges) - 1} bins of width {self.edges[1] - self.edges[0]:g} from {self.edges[0]:g} to "
                f"{self.edges[-1]:g} (log y top- and bottom-coded to that range), "
                + (f"Laplace noise of scale {self.scale:.4g} (L1 sensitivity {SENSITIVITY_COUNTS:g})"
                   if self.mechanism == "laplace" else
                   f"Gaussian noise of sd {self.scale:.4g} (L2 sensitivity {SENSITIVITY_COUNTS:g})"))


def _public_bins(log_y: np.ndarray, keys, bounds, width: float, names=("bounds", "width")):
    """The checked bins and cells, every refusal before any noise: (cells, edges, each record's bin).

    ``names``: the caller's names of the bounds and the width, in the refusals."""
    from ppmlib.models.bins import bin_edges, bin_index
    low, high = check_bounds(log_y, bounds, names[0])
    edges = bin_edges(low, high, width)
    cells = cells_of(keys, len(log_y))
    size = len(cells.counts) * (len(edges) - 1)
    if size > MAX_CELL_BINS:
        raise BadArgument(f"{len(cells.counts)} cells x {len(edges) - 1} bins = {size:,} noisy counts, more than "
                          f"{MAX_CELL_BINS:,}: use fewer keys or levels, or wider bins ({names[1]}=)")
    return cells, edges, bin_index(np.clip(log_y, low, high), edges)


def release_counts(log_y, keys, *, bounds, width: float, rho: float | None = None, epsilon: float | None = None,
                   seed=None, noise: str = "numpy") -> NoisyCounts:
    """The noisy count of every (cell, bin), for every database (add or remove one record).

    Give ``rho`` for Gaussian noise (rho-zCDP) or ``epsilon`` for Laplace noise of scale 1 / epsilon
    (pure epsilon-DP): one record moves one count by 1, L1 and L2 sensitivity 1.

    Parameters
    ----------
    log_y : array, shape (n,)
        The confidential outcome on the log scale (top- and bottom-coded to ``bounds``).
    keys : pandas.DataFrame or None
        The categorical keys (public, released as they are).
    bounds : (float, float)
        Public (low, high) on the log scale, the bins' range, fixed before seeing the data.
    width : float
        The bins' width; it must divide the range into whole bins.
    rho : float, optional
        Gaussian: the release's zCDP parameter, > 0; ``inf`` adds no noise (for tests only: no privacy).
    epsilon : float, optional
        Laplace: the release's epsilon, > 0 (give rho or epsilon, not both).
    seed : int, optional
        Seeds the numpy noise.
    noise : str
        "numpy" (seeded) or "opendp" (OpenDP's sampler, unseeded).

    Returns
    -------
    NoisyCounts
    """
    log_y = _checks.finite_array(log_y, "log_y", ndim=1)
    if noise not in NOISES:
        raise BadArgument(f"noise must be one of {', '.join(NOISES)}, got {noise!r}")
    if (rho is None) == (epsilon is None):
        raise BadArgument("give rho (Gaussian noise) or epsilon (Laplace noise), exactly one")
    budget = rho if epsilon is None else epsilon
    if not (isinstance(budget, (int, float)) and budget > 0):
        raise BadArgument(f"{'rho' if epsilon is None else 'epsilon'} must be > 0, got {budget!r}")
    cells, edges, bins = _public_bins(log_y, keys, bounds, width)
    C, J = len(cells.counts), len(edges) - 1
    exact = np.bincount(cells.index * J + bins, minlength=C * J).astype(float)
    rng = np.random.default_rng(_checks.seed(seed))
    if epsilon is None:
        scale = 0.0 if math.isinf(rho) else counts_scale(rho)
        noisy = _gaussian(exact, scale, noise, rng)
        return NoisyCounts(cells, noisy.reshape(C, J), edges, "gaussian", scale, float(rho), None, noise)
    scale = 0.0 if math.isinf(epsilon) else SENSITIVITY_COUNTS / epsilon
    noisy = _laplace(exact, scale, noise, rng)
    return NoisyCounts(cells, noisy.reshape(C, J), edges, "laplace", scale, epsilon ** 2 / 2, float(epsilon), noise)


def _laplace(values: np.ndarray, scale: float, noise: str, rng) -> np.ndarray:
    if scale == 0:
        return values.copy()
    if noise == "numpy":
        return values + rng.laplace(0.0, scale, size=values.shape)
    return np.asarray(opendp_laplace(scale)(values.tolist()), float)


def bin_prior(counts: NoisyCounts, prior_strength: float = 1.0) -> np.ndarray:
    """The Dirichlet prior of every cell: a pi, shape (J,), from the noisy release only.

    pi is the pooled bin shape, the cells' noisy counts summed and clipped at 0 (plus 1e-3 of a
    record per bin, so that no parameter is 0), normalised; a = s J max(the noise's sd, 1).

    Parameters
    ----------
    counts : NoisyCounts
    prior_strength : float
        s, > 0.

    Returns
    -------
    ndarray, shape (J,)
    """
    s = _checks.real(prior_strength, "prior_strength", low=0, low_open=True)
    J = counts.counts.shape[1]
    pooled = np.clip(counts.counts.sum(axis=0), 0.0, None) + 1e-3
    return s * J * max(counts.sd, 1.0) * pooled / pooled.sum()


#: How the bins scheme's m datasets use the posterior of each cell's shape (see :func:`synthesize_bins`).
SHAPES = ("draws", "mean")
#: How each cell's records take their bins (see :func:`synthesize_bins`): "stratified" or "iid".
ALLOCATIONS = ("stratified", "iid")
#: Posterior draws averaged for ``shape="mean"``.
MEAN_DRAWS = 40
#: How the bins scheme's posterior treats the noise: "latent" (Gibbs over the true counts) or "clipped".
BIN_POSTERIORS = ("latent", "clipped")


def bin_posterior(counts: NoisyCounts, k: int, *, prior_strength: float = 1.0, method: str = "latent", seed=None,
                  sweeps: int = 100) -> np.ndarray:
    """k draws of every cell's bin probabilities p_c given the noisy counts.

    The model: p_c ~ Dirichlet(a pi) (:func:`bin_prior`), the cell's true counts ~ Multinomial(n_c,
    p_c) (n_c public), each noisy count = true count + the release's noise. ``method="latent"`` (noise-aware)
    runs a seeded Gibbs sampler over the true counts with p_c integrated out: each step takes a
    random pair of bins per cell and redraws how their joint count splits, exactly from its
    conditional; ``sweeps`` x J steps, the first half discarded, then k states evenly spaced and
    p_c ~ Dirichlet(a pi + counts) at each. Without noise the counts are known and the draws are the
    exact Dirichlet posterior. ``method="clipped"`` ignores the noise: k exact draws of
    Dirichlet(a pi + max(noisy counts, 0)) (it puts the clipped noise of empty bins back as mass).

    Parameters
    ----------
    counts : NoisyCounts
        The noisy release.
    k : int
        Draws, >= 1.
    prior_strength : float
        s of :func:`bin_prior`.
    method : str
        One of :data:`BIN_POSTERIORS`.
    seed : int or numpy.random.Generator, optional
    sweeps : int
        The Gibbs sampler's length in sweeps of J pair updates.

    Returns
    -------
    ndarray, shape (k, C, J)
        Each row sums to 1.
    """
    k = _checks.integer(k, "k (draws)", low=1)
    if method not in BIN_POSTERIORS:
        raise BadArgument(f"the bins posterior must be one of {', '.join(BIN_POSTERIORS)}, got {method!r}")
    alpha = bin_prior(counts, prior_strength)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(_checks.seed(seed))
    if method == "clipped" or counts.scale == 0:
        known = np.clip(counts.counts, 0.0, None)
        latent = np.broadcast_to(known if counts.scale > 0 else np.rint(known), (k, *known.shape))
    else:
        latent = _latent_counts(counts, alpha, k, _checks.integer(sweeps, "sweeps", low=2), rng)
    g = rng.standard_gamma(alpha[None, None, :] + latent)
    return g / g.sum(axis=2, keepdims=True)


def _start(noisy: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Integer counts near max(noisy, 0) whose rows sum to the public n_c (largest remainders)."""
    share = np.clip(noisy, 0.0, None) + 1e-9
    target = share / share.sum(axis=1, keepdims=True) * sizes[:, None]
    start = np.floor(target).astype(np.int64)
    short = sizes - start.sum(axis=1)
    order = np.argsort(-(target - start), axis=1, kind="stable")
    rank = np.argsort(order, axis=1, kind="stable")
    return start + (rank < short[:, None])


def _latent_counts(counts: NoisyCounts, alpha: np.ndarray, k: int, sweeps: int, rng) -> np.ndarray:
    """k states, shape (k, C, J), of the pair-Gibbs sampler over the true counts (see :func:`bin_posterior`)."""
    from scipy.special import gammaln
    noisy, sizes = counts.counts, counts.cells.counts.astype(np.int64)
    C, J = noisy.shape
    n = _start(noisy, sizes)
    rows = np.arange(C)
    steps = sweeps * J
    keep = set(np.linspace(steps // 2, steps - 1, k).round().astype(int).tolist()) if k > 1 else {steps - 1}
    states = []
    for step in range(steps):
        a = rng.integers(0, J, C)
        b = (a + rng.integers(1, J, C)) % J                                           # another bin
        total = (n[rows, a] + n[rows, b])[:, None]
        grid = np.arange(int(total.max()) + 1)[None, :]
        x = np.minimum(grid, total)                                                   # the count in a: 0..total
        logp = (gammaln(alpha[a][:, None] + x) - gammaln(x + 1) + gammaln(alpha[b][:, None] + total - x)
                - gammaln(total - x + 1) + counts.log_likelihood(noisy[rows, a][:, None] - x)
                + counts.log_likelihood(noisy[rows, b][:, None] - total + x))
        logp = np.where(grid <= total, logp, -np.inf)
        u = rng.uniform(size=(C, 1))
        cum = np.cumsum(np.exp(logp - logp.max(axis=1, keepdims=True)), axis=1)
        x = (cum < u * cum[:, -1:]).sum(axis=1)
        n[rows, b] = total[:, 0] - x
        n[rows, a] = x
        if step in keep:
            states.append(n.copy())
    return np.stack(states[:k] if len(states) >= k else states + [n.copy()] * (k - len(states))).astype(float)


def _values_in_bins(probs: np.ndarray, index: np.ndarray, edges: np.ndarray, rng) -> np.ndarray:
    """One synthetic log y per record: a bin from its cell's probabilities, a uniform value within it."""
    cumulative = np.cumsum(probs, axis=1)[index]                                     # (n, J)
    u = rng.uniform(size=(len(index), 1)) * cumulative[:, -1:]
    b = np.minimum((cumulative < u).sum(axis=1), len(edges) - 2)
    return rng.uniform(edges[b], edges[b + 1])


def _values_stratified(probs: np.ndarray, index: np.ndarray, edges: np.ndarray, rng) -> np.ndarray:
    """One synthetic log y per record, each cell's bins taken by systematic sampling: the n_c records of
    cell c take the bins at the points (u + i) / n_c, i = 0..n_c - 1, of the cell's distribution function
    (one uniform u per cell), so that bin b holds n_c p_cb records up to one; a uniform value within
    the bin; the values shuffled over the cell's records."""
    cumulative = np.cumsum(probs, axis=1)
    cumulative /= cumulative[:, -1:]
    out = np.empty(len(index))
    order = np.argsort(index, kind="stable")
    cells, starts, sizes = np.unique(index[order], return_index=True, return_counts=True)
    for c, start, size in zip(cells, starts, sizes):
        points = (rng.uniform() + np.arange(size)) / size
        b = np.minimum(np.searchsorted(cumulative[c], points, side="right"), len(edges) - 2)
        out[order[start:start + size][rng.permutation(size)]] = rng.uniform(edges[b], edges[b + 1])
    return out


@dataclass(frozen=True)
class PrivateBounds:
    """The bins' range of log y chosen from the data by the exponential mechanism (pure epsilon-DP).

    Attributes
    ----------
    bounds : (float, float)
        The chosen (low, high), two points of the public grid, low < high.
    epsilon : float
        What choosing them cost, pure epsilon-DP for every database (epsilon / 2 per quantile).
    share : float
        The share of the release's budget this is.
    quantiles : (float, float)
        The quantiles chosen (the range reaches ``reach`` times their distance beyond each).
    grid : (float, float)
        The public grid's range (its step is the bins' width).
    reach : int
        See :data:`BOUNDS_REACH`.
    """
    bounds: tuple
    epsilon: float
    share: float
    quantiles: tuple
    grid: tuple
    reach: int = BOUNDS_REACH

    def describe(self) -> str:
        """One line, public values only.

        Returns
        -------
        str
        """
        (low, high), (q0, q1), (g0, g1) = self.bounds, self.quantiles, self.grid
        return (f"the bins' range ({low:g}, {high:g}) of log y chosen from the data: its {q0:g} and {q1:g} quantiles "
                f"by the exponential mechanism over the public grid from {g0:g} to {g1:g} in steps of the bins' "
                f"width, epsilon {self.epsilon / 2:.4g} each ({self.share:g} of the release's budget), the range "
                f"reaching {self.reach:g} times their distance beyond each")


def private_quantile(log_y: np.ndarray, q: float, epsilon: float, candidates: np.ndarray, rng) -> float:
    """One candidate near the q quantile of log y, by the exponential mechanism: pure epsilon-DP.

    The utility of candidate c is ``-|#{log y < c} - q n|``; adding or removing one record changes it
    by at most max(q, 1 - q) <= 1 (sensitivity 1), so choosing c with probability proportional to
    exp(epsilon u(c) / 2) is epsilon-DP (McSherry and Talwar 2007). Drawn exactly by the Gumbel-max
    trick from the seeded generator (a floating-point draw, not hardened, like the numpy noise).

    Parameters
    ----------
    log_y : ndarray, shape (n,)
    q : float
        In (0, 1).
    epsilon : float
        > 0.
    candidates : ndarray
        The public grid.
    rng : numpy.random.Generator

    Returns
    -------
    float
    """
    below = np.searchsorted(np.sort(log_y), candidates, side="left")
    utility = -np.abs(below - q * len(log_y))
    return float(candidates[np.argmax(epsilon * utility / 2 + rng.gumbel(size=len(candidates)))])


def grid_of(width: float, grid=BOUNDS_GRID) -> np.ndarray:
    """The public candidates of :func:`private_bounds`: ``grid`` in steps of the bins' width (checked to divide it).

    Parameters
    ----------
    width : float
        The bins' width.
    grid : (float, float)
        The public grid's range.

    Returns
    -------
    ndarray
    """
    from ppmlib.models.bins import bin_edges
    return bin_edges(grid[0], grid[1], width)


def private_bounds(log_y, *, epsilon: float, width: float, share: float = BOUNDS_SHARE, seed=None,
                   quantiles=BOUNDS_QUANTILES, grid=BOUNDS_GRID) -> PrivateBounds:
    """The bins' range from the data: the ``quantiles`` of log y on the public grid, epsilon-DP,
    widened by :data:`BOUNDS_REACH` times their distance on each side.

    Each quantile costs epsilon / 2 (:func:`private_quantile`; basic composition). If the two land
    in the wrong order they are swapped, equal ones count as one bin apart, and the range reaches
    ``BOUNDS_REACH`` times their distance beyond each, within the grid (post-processing; the edges
    stay on the grid's steps). With few records and a small epsilon the quartiles can land far off (the grid is wide):
    give public bounds there.

    Parameters
    ----------
    log_y : array_like, shape (n,)
        The confidential log values.
    epsilon : float
        What the pair costs, > 0.
    width : float
        The bins' width, the grid's step.
    share : float
        The share of the release's budget ``epsilon`` is (recorded for the statement).
    seed : int or numpy.random.Generator, optional
    quantiles, grid : (float, float)
        The quantiles aimed at, and the public grid's range.

    Returns
    -------
    PrivateBounds
    """
    log_y = _checks.finite_array(log_y, "log_y", ndim=1)
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    candidates = grid_of(width, grid)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(_checks.seed(seed))
    low, high = sorted(private_quantile(log_y, q, epsilon / 2, candidates, rng) for q in quantiles)
    spread = max(high - low, width)
    low, high = max(low - BOUNDS_REACH * spread, candidates[0]), min(high + BOUNDS_REACH * spread, candidates[-1])
    return PrivateBounds((float(low), float(high)), epsilon, share, tuple(quantiles), tuple(grid))


def check_private_bounds(n: int, epsilon: float, width: float) -> None:
    """Refuse private bounds whose budget is too small for n records, from public numbers only.

    The exponential mechanism finds a quartile when its margin over the far candidates, (epsilon / 2)
    / 2 x n / 4 nats, is well above the log of the grid's size G: here three times, n epsilon >=
    48 ln G (about 255 for bins of width 0.25; on a normal sample of 3,000 the range then came out
    wild in none of 400 seeds, against 6% at 32 ln G). Below it the range chosen can be anywhere on
    the grid, so the release is refused before any noise.

    Parameters
    ----------
    n : int
        Records (public: the release reveals n).
    epsilon : float
        The bounds' epsilon.
    width : float
        The bins' width (the grid's step).
    """
    needed = 48 * math.log(len(grid_of(width)))
    if n * epsilon < needed:
        raise BadArgument(f"n = {n} records at bounds_share= x total_epsilon= = {epsilon:.3g} are too few to choose "
                          f"the bins' range from the data (n x epsilon = {n * epsilon:.3g} < {needed:.0f}): give "
                          "log_bounds=LOW,HIGH (public bounds of the log column, no budget spent on them), or a "
                          "larger bounds_share= or total_epsilon=")


def spent_on_bounds(bounds, share) -> float | None:
    """The share of the budget spent on private bounds: None when public ``bounds`` are given (then
    ``share`` must not be), else ``share`` (default :data:`BOUNDS_SHARE`), checked to lie in (0, 1).

    Parameters
    ----------
    bounds : sequence of two floats or None
        Public bounds of log y.
    share : float or None
        The share asked for.

    Returns
    -------
    float or None
    """
    if bounds is not None:
        if share is not None:
            raise BadArgument("give public bounds or a bounds share, not both: with public bounds no share of the "
                              "budget is spent on them")
        return None
    return _checks.real(BOUNDS_SHARE if share is None else share, "bounds_share", low=0, high=1, low_open=True,
                        high_open=True)


def split_budget(total_epsilon: float, delta: float, mechanism: str, share: float | None) -> tuple[dict, float]:
    """The counts' budget (``{"epsilon": ...}`` for Laplace, ``{"rho": ...}`` for Gaussian) and the
    private bounds' pure epsilon (0 without a share).

    Laplace: the bounds get share x total_epsilon, the counts the rest (pure epsilons add up).
    Gaussian: rho = :func:`ppmlib.mechanism.ledger.rho_for_total` (total_epsilon, delta); the bounds
    get share x rho, i.e. a pure epsilon of sqrt(2 share rho) (epsilon-DP is epsilon^2/2-zCDP), the
    counts the rest (rho adds up).

    Parameters
    ----------
    total_epsilon, delta : float
        The release's budget.
    mechanism : str
        "laplace" or "gaussian".
    share : float or None
        The share spent on the bounds (None: none).

    Returns
    -------
    (dict, float)
    """
    share = share or 0.0
    if mechanism == "gaussian":
        rho = rho_for_total(total_epsilon, delta)
        return {"rho": (1 - share) * rho}, math.sqrt(2 * share * rho)
    total = _checks.real(total_epsilon, "total_epsilon", low=0, low_open=True)
    return {"epsilon": (1 - share) * total}, share * total


def synthesize_bins(log_y, keys, *, bounds=None, width: float = 0.25, total_epsilon: float, delta: float = 1e-6,
                    m: int = 5, k: int | None = None, mechanism: str = "laplace", prior_strength: float = 0.003,
                    method: str = "latent", shape: str = "mean", allocation: str = "stratified", seed: int = 0,
                    noise: str = "numpy", bounds_share: float | None = None) -> NSSRelease:
    """m synthetic datasets of log y from noisy (cell, bin) counts: (total_epsilon, delta)-DP for every database.

    Every check (bounds, bins, cells x bins, k, the prior's strength, the share) runs before any
    noise is drawn. Without public ``bounds``, ``bounds_share`` of the budget buys the bins' range
    from the data (:func:`private_bounds`) and the counts get the rest (:func:`split_budget`); the
    release's total is still ``total_epsilon``.

    Parameters
    ----------
    log_y : array_like, shape (n,)
        The confidential log values.
    keys : pandas.DataFrame or None
        The categorical keys (released as they are).
    bounds : sequence of two floats, optional
        Public (low, high) of log y, the bins' range, fixed before seeing the data; None: chosen
        from the data at ``bounds_share`` of the budget.
    width : float
        The public bins' width.
    total_epsilon, delta : float
        The release's (epsilon, delta), every database: Gaussian noise at rho =
        :func:`ppmlib.mechanism.ledger.rho_for_total`, or Laplace noise at epsilon (then delta is 0).
        ``math.inf`` adds no noise (no privacy: the model's own ceiling, for measurement).
    m : int
        Synthetic datasets.
    k : int, optional
        Posterior draws behind them, 1 <= k <= m (default m); dataset j uses draw ceil(j k / m).
    mechanism : str
        The counts' noise: "laplace" (pure epsilon-DP; the default, measured best on the public wage
        files: at equal total epsilon its noise is several times smaller than the Gaussian's at
        delta = 1e-6) or "gaussian" (rho-zCDP).
    prior_strength : float
        s of :func:`bin_prior`.
    method : str
        The posterior (:func:`bin_posterior`): "latent" (noise-aware Gibbs) or "clipped".
    shape : str
        "mean" (default, measured best): every dataset from the posterior mean of each cell's
        shape (over :data:`MEAN_DRAWS` draws; k is then not used): closer to the data, but the
        between-dataset spread no longer carries the noise. "draws": dataset j's bins from
        posterior draw ceil(j k / m) (proper multiple imputation: the datasets differ by the
        shape's uncertainty).
    allocation : str
        How a dataset gives each cell's records their bins, from that dataset's shape:
        "stratified" (default, measured best: bin b of cell c holds n_c p_cb records up to one, by
        systematic sampling with one uniform offset per cell) or "iid" (a bin drawn for each record
        independently, which adds multinomial noise to the shape). Both are post-processing of
        the noisy counts: the guarantee is the same.
    seed : int
        Seeds the noise, the draws and the synthetic values.
    noise : str
        ``"numpy"`` (seeded) or ``"opendp"``.
    bounds_share : float, optional
        Without ``bounds``: the share of the budget spent on them, in (0, 1) (default
        :data:`BOUNDS_SHARE`); refused with ``bounds``.

    Returns
    -------
    NSSRelease
        ``statistics`` is the :class:`NoisyCounts`; ``diagnostics`` is empty (exact draws);
        ``bounds`` the :class:`PrivateBounds` (None with public bounds).
    """
    from ppmlib.mechanism.censoring import draw_of_dataset
    log_y = _checks.finite_array(log_y, "log_y", ndim=1)
    m = _checks.integer(m, "m", low=1)
    which = draw_of_dataset(m, m if k is None else k)
    _checks.real(prior_strength, "prior_strength", low=0, low_open=True)
    if method not in BIN_POSTERIORS:
        raise BadArgument(f"the bins posterior must be one of {', '.join(BIN_POSTERIORS)}, got {method!r}")
    if shape not in SHAPES:
        raise BadArgument(f"shape must be one of {', '.join(SHAPES)}, got {shape!r}")
    if mechanism not in COUNT_MECHANISMS:
        raise BadArgument(f"mechanism must be one of {', '.join(COUNT_MECHANISMS)}, got {mechanism!r}")
    if allocation not in ALLOCATIONS:
        raise BadArgument(f"allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
    share = spent_on_bounds(bounds, bounds_share)
    if total_epsilon == math.inf:                                                      # the model's ceiling
        if share is not None:
            raise BadArgument("total_epsilon=inf (no noise, for measurement) needs public bounds=")
        budget, bounds_epsilon = {"rho": math.inf}, 0.0
    else:
        budget, bounds_epsilon = split_budget(total_epsilon, delta, mechanism, share)
    noise_seed, draw_seed, bounds_seed = make_seeds(_checks.seed(seed) or 0, 3)
    chosen = None
    if share is not None:
        check_private_bounds(len(log_y), bounds_epsilon, width)
        _public_bins(log_y, keys, BOUNDS_GRID, width)       # the widest range the bounds can take, before any noise
        chosen = private_bounds(log_y, epsilon=bounds_epsilon, width=width, share=share, seed=bounds_seed)
        bounds = chosen.bounds
    counts = release_counts(log_y, keys, bounds=bounds, width=width, seed=noise_seed, noise=noise, **budget)
    rng = np.random.default_rng(draw_seed)
    if shape == "mean":
        mean = bin_posterior(counts, MEAN_DRAWS, prior_strength=prior_strength, method=method, seed=rng).mean(axis=0)
        probs, which = mean[None], np.zeros(m, int)
    else:
        probs = bin_posterior(counts, int(which.max()) + 1, prior_strength=prior_strength, method=method, seed=rng)
    values = _values_stratified if allocation == "stratified" else _values_in_bins
    synthetic = np.stack([values(probs[d], counts.cells.index, counts.edges, rng) for d in which])
    return NSSRelease(synthetic, counts, counts.rho, delta if mechanism == "gaussian" else 0.0, {},
                      k_draws=None if shape == "mean" else k, shape=shape, bounds=chosen)


def check_bins_settings(log_y, keys, *, bounds, width: float, bounds_epsilon: float | None = None) -> None:
    """The command's bins settings against the data, before any noise (the refusals name the command's
    arguments ``log_bounds=`` and ``bin_width=``): bounds that exclude most of the records, too many
    cells x bins.

    Parameters
    ----------
    log_y : ndarray, shape (n,)
        The confidential log values.
    keys : pandas.DataFrame or None
        The categorical keys.
    bounds, width
        As for :func:`synthesize_bins` (bounds None: to be chosen from the data, so the public grid
        :data:`BOUNDS_GRID`, the widest range they can take, is checked).
    bounds_epsilon : float, optional
        With bounds None: the epsilon that chooses them (:func:`check_private_bounds`).
    """
    if bounds is None:      # chosen from the data later: the widest range they can take
        check_private_bounds(len(log_y), bounds_epsilon, width)
        bounds = BOUNDS_GRID
    _public_bins(_checks.finite_array(log_y, "log_y", ndim=1), keys, bounds, width, names=("log_bounds", "bin_width"))
