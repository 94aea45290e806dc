"""The conjugate Poisson-Gamma pseudo posterior, computed exactly (no MCMC).

With a Gamma(a, b) prior (shape a, rate b) on the Poisson rate lambda, the alpha-weighted pseudo
posterior of counts y is again a Gamma:

    xi^alpha(lambda | y) = Gamma(a + sum_i alpha_i y_i,  b + sum_i alpha_i).

Removing record i (the removal neighbour y[-i], the other records keeping their weights) subtracts
(alpha_i y_i, alpha_i) from the two parameters, so the log density ratio between a database and
each of its neighbours is available in closed form:

    log xi(lambda | y) - log xi(lambda | y[-i]) = alpha_i f_lambda(y_i) - log E_{-i}[p(y_i | lambda)^alpha_i],

with f_lambda(y) = log p(y | lambda) and E_{-i} the expectation under the neighbour's pseudo
posterior. The second term does not depend on lambda. These exact values let the book check the
Lipschitz guarantee epsilon = 2 Delta against the Delta that ppmlib estimates from draws.

The module also holds the exponential mechanism (EM) density for the Poisson log-likelihood as
utility, normalised numerically on a grid (an independent route to the scalar-weighted posterior).
Everything here is closed form or a one-dimensional grid: no MCMC (the refits of LW over a grid
of (c, g) are :func:`ppmlib.lw_delta_grid`, next to the synthesizer).
"""
from __future__ import annotations

__all__ = ["pseudo_posterior", "gamma_logpdf", "log_density", "central_interval", "poisson_log_lik",
           "loo_log_evidence_ratio", "loo_log_ratio", "max_abs_loo_log_ratio", "max_abs_loo_log_ratio_by_point",
           "grid_record_bounds", "exceedance_bounds", "log10_tail_mass_bound", "em_scalar_weight", "em_log_density",
           "sample", "draw_record_bounds", "ConjugateSampler", "censored_log_density", "censored_support", "censored_draws",
           "synthetic_sum_logpmf"]

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from ppmlib import _checks
from ppmlib.inference.backends import Draws
from ppmlib.models.families import POISSON_PRIOR, family
from ppmlib.inference.posterior import Sampler
from ppmlib.errors import BadArgument

# defaults of every function below: the Poisson family's prior, Gamma(shape, rate)
_PRIOR_SHAPE, _PRIOR_RATE = POISSON_PRIOR["prior_shape"], POISSON_PRIOR["prior_rate"]


# ---------------------------------------------------------------------------------------------
# input checks
# ---------------------------------------------------------------------------------------------

def _prior(prior_shape, prior_rate) -> tuple[float, float]:
    """(shape, rate) checked by the Poisson family's prior validator, the one every route uses."""
    prior = family("poisson").check_prior({"prior_shape": prior_shape, "prior_rate": prior_rate})
    return prior["prior_shape"], prior["prior_rate"]


def _grid(grid, name: str = "grid") -> np.ndarray:
    """A 1-D grid of positive rates (lambda = 0 has log density -inf or +inf: not a useful point)."""
    grid = _checks.finite_array(grid, name, ndim=1)
    if (grid <= 0).any():
        raise BadArgument(f"{name} must hold positive Poisson rates; found {grid[grid <= 0][0]:g}")
    return grid


def _data(y, weights) -> tuple[np.ndarray, np.ndarray]:
    y = _checks.counts(y)
    return y, _checks.weights(weights, y.size)


def _shape_rate(shape, rate):
    shape = _checks.finite_array(shape, "shape")
    rate = _checks.finite_array(rate, "rate")
    if (shape <= 0).any() or (rate <= 0).any():
        raise BadArgument("shape and rate of a Gamma distribution must be positive")
    return shape, rate


# ---------------------------------------------------------------------------------------------
# the pseudo posterior of one database
# ---------------------------------------------------------------------------------------------

def pseudo_posterior(y, weights=None, prior_shape: float = _PRIOR_SHAPE, prior_rate: float = _PRIOR_RATE,
                     counts=None) -> tuple[float, float]:
    """(shape, rate) of the alpha-weighted pseudo posterior Gamma(a + sum alpha y, b + sum alpha).

    ``y`` (n,) counts; ``weights`` (n,) alpha in [0, 1] (None: all ones, the ordinary posterior).
    ``prior_shape`` and ``prior_rate`` are a and b of the Gamma(a, b) prior (rate parametrisation).
    ``counts`` (n,), optional: entry i of ``y`` stands for counts_i records of that value, all with
    weight alpha_i (a database given by its distinct values, so work does not grow with n).

    Parameters
    ----------
    y : array_like, shape (n,)
        Counts.
    weights : array_like, shape (n,), optional
        alpha in [0, 1]; None means all ones (the ordinary posterior).
    prior_shape, prior_rate : float
        a and b of the Gamma(a, b) prior (rate parametrisation); by default the Poisson family's.

    Returns
    -------
    (float, float)
        The Gamma's shape and rate.

    See Also
    --------
    log_density : its log density on a grid.
    sample : independent draws from it.
    central_interval : its equal-tailed interval.

    Examples
    --------
    >>> pseudo_posterior([98, 103, 120], [1.0, 1.0, 0.5])     # (1 + 98 + 103 + 60, 0.001 + 2.5)
    (262.0, 2.501)
    """
    a, b = _prior(prior_shape, prior_rate)
    y, alpha = _data(y, weights)
    if counts is not None:
        counts = _checks.counts(counts)
        if counts.shape != y.shape:
            raise BadArgument(f"counts must have one entry per value of y ({y.size}), got {counts.size}")
        alpha = alpha * counts
    return a + float(alpha @ y), b + float(alpha.sum())


def gamma_logpdf(grid, shape, rate) -> np.ndarray:
    """Log density of Gamma(shape, rate) at every rate in ``grid``.

    ``shape`` and ``rate`` are scalars, or arrays of one common shape P; the result has shape
    P + (G,) for a grid of G points (one row of log densities per (shape, rate) pair).

    Parameters
    ----------
    grid : array_like, shape (G,)
        Positive rates.
    shape, rate : float or array_like of shape P
        The Gamma's parameters.

    Returns
    -------
    ndarray, shape P + (G,)
    """
    grid = _grid(grid)
    shape, rate = _shape_rate(shape, rate)
    k, r = shape[..., None], rate[..., None]
    return k * np.log(r) - special.gammaln(k) + (k - 1.0) * np.log(grid) - r * grid


def log_density(grid, y, weights=None, prior_shape: float = _PRIOR_SHAPE, prior_rate: float = _PRIOR_RATE) -> np.ndarray:
    """log xi^alpha(lambda | y) at every lambda in ``grid``, shape (G,).

    Parameters
    ----------
    grid, y, weights, prior_shape, prior_rate
        Where to evaluate (G positive rates), and the pseudo posterior as for :func:`pseudo_posterior`.

    Returns
    -------
    ndarray, shape (G,)
    """
    shape, rate = pseudo_posterior(y, weights, prior_shape, prior_rate)
    return gamma_logpdf(grid, shape, rate)


def central_interval(y, weights=None, prior_shape: float = _PRIOR_SHAPE, prior_rate: float = _PRIOR_RATE,
                     mass: float = 1 - 1e-6) -> tuple[float, float]:
    """The equal-tailed interval holding ``mass`` of the exact pseudo posterior.

    Parameters
    ----------
    y, weights, prior_shape, prior_rate
        As for :func:`pseudo_posterior`.
    mass : float
        The probability inside the interval, in (0, 1).

    Returns
    -------
    (float, float)
        The lower and upper ends.
    """
    mass = _checks.real(mass, "mass", low=0, high=1, low_open=True, high_open=True)
    shape, rate = pseudo_posterior(y, weights, prior_shape, prior_rate)
    dist = stats.gamma(shape, scale=1.0 / rate)
    tail = (1.0 - mass) / 2.0
    return float(dist.ppf(tail)), float(dist.isf(tail))


# ---------------------------------------------------------------------------------------------
# a database against all of its leave-one-out neighbours
# ---------------------------------------------------------------------------------------------

def poisson_log_lik(grid, y) -> np.ndarray:
    """f_lambda(y_i) = log p(y_i | lambda) for every record and grid point, shape (n, G).

    Parameters
    ----------
    grid : array_like, shape (G,)
        Positive Poisson rates.
    y : array_like, shape (n,)
        Counts.

    Returns
    -------
    ndarray, shape (n, G)
    """
    grid = _grid(grid)
    y = _checks.counts(y).astype(float)[:, None]
    return y * np.log(grid) - grid - special.gammaln(y + 1.0)


def loo_log_evidence_ratio(y, weights=None, prior_shape: float = _PRIOR_SHAPE, prior_rate: float = _PRIOR_RATE) -> np.ndarray:
    """log E_{-i}[p(y_i | lambda)^alpha_i] for every record i, shape (n,).

    The expectation is under the pseudo posterior of the neighbour without record i; it is the
    log of the ratio of the two normalising constants, Z(y) / Z(y[-i]). Because a Poisson
    probability is at most 1, the value is never positive.

    Parameters
    ----------
    y, weights, prior_shape, prior_rate
        The database, its weights and the prior, as for :func:`pseudo_posterior`.

    Returns
    -------
    ndarray, shape (n,)
    """
    y, alpha = _data(y, weights)
    shape, rate = pseudo_posterior(y, alpha, prior_shape, prior_rate)
    k_minus = shape - alpha * y      # the neighbour's Gamma shape; its rate is rate - alpha (r' below)
    # Gamma-Poisson integral: int lambda^{ay} e^{-a lambda} Gamma(lambda; k', r') = G(k) r'^k' / (G(k') r^k).
    # k' log r' - k log r is written as k' log(r'/r) - alpha y log r to avoid cancelling two large terms.
    log_rate_ratio = np.log1p(-alpha / rate)                     # log(r'/r), accurate for small alpha / r
    log_integral = (special.gammaln(shape) - special.gammaln(k_minus)
                    + k_minus * log_rate_ratio - alpha * y * np.log(rate))
    return log_integral - alpha * special.gammaln(y + 1.0)


def loo_log_ratio(grid, y, weights=None, prior_shape: float = _PRIOR_SHAPE, prior_rate: float = _PRIOR_RATE) -> np.ndarray:
    """log xi^alpha(lambda | y) - log xi^alpha(lambda | y[-i]) for every neighbour i and grid point.

    ``grid`` (G,) positive rates; ``y`` (n,) counts; ``weights`` (n,) alpha. Returns (n, G).
    Computed as alpha_i f_lambda(y_i) minus the neighbour's log evidence ratio (module docstring),
    which is exact and avoids subtracting two log densities of size ~1e5. Memory: n * G floats
    (1000 records x 2000 points = 16 MB).

    Parameters
    ----------
    grid, y, weights, prior_shape, prior_rate
        G positive rates; the database, weights and prior as for :func:`pseudo_posterior`.

    Returns
    -------
    ndarray, shape (n, G)

    See Also
    --------
    max_abs_loo_log_ratio : its maximum over the grid per neighbour.
    max_abs_loo_log_ratio_by_point : its maximum over the neighbours per grid point.
    grid_record_bounds : the bound 2 sup abs(alpha_i f) that each row stays within.
    loo_log_evidence_ratio : the constant term of each row.

    Examples
    --------
    >>> ratio = loo_log_ratio([95.0, 100.0, 105.0], [98, 103, 120], [1.0, 1.0, 0.5])
    >>> ratio.shape                                   # 3 neighbours x 3 rates
    (3, 3)
    >>> bool((np.abs(ratio).max(axis=1) <= 2 * grid_record_bounds([95.0, 100.0, 105.0], [98, 103, 120], [1.0, 1.0, 0.5])).all())
    True
    """
    y, alpha = _data(y, weights)
    weighted = alpha[:, None] * poisson_log_lik(grid, y)
    weighted[alpha == 0] = 0.0  # a record with weight 0 changes nothing, even where f is -inf
    return weighted - loo_log_evidence_ratio(y, alpha, prior_shape, prior_rate)[:, None]


def max_abs_loo_log_ratio(grid, y, weights=None, prior_shape: float = _PRIOR_SHAPE, prior_rate: float = _PRIOR_RATE) -> np.ndarray:
    """max over the grid of abs(log xi(lambda | y) - log xi(lambda | y[-i])) per neighbour i, shape (n,).

    Parameters
    ----------
    grid, y, weights, prior_shape, prior_rate
        The G rates to maximise over, then y, weights and prior as for :func:`pseudo_posterior`.

    Returns
    -------
    ndarray, shape (n,)
    """
    return np.abs(loo_log_ratio(grid, y, weights, prior_shape, prior_rate)).max(axis=1)


def max_abs_loo_log_ratio_by_point(grid, y, weights=None, prior_shape: float = _PRIOR_SHAPE,
                                   prior_rate: float = _PRIOR_RATE) -> np.ndarray:
    """max over the neighbours of abs(log ratio) at every grid point, shape (G,).

    Parameters
    ----------
    grid, y, weights, prior_shape, prior_rate
        Rates (G, positive); y, weights, prior: as for :func:`pseudo_posterior`.

    Returns
    -------
    ndarray, shape (G,)
    """
    return np.abs(loo_log_ratio(grid, y, weights, prior_shape, prior_rate)).max(axis=0)


def grid_record_bounds(grid, y, weights=None) -> np.ndarray:
    """sup over the grid of abs(alpha_i f_lambda(y_i)) per record, shape (n,).

    The grid analogue of :func:`ppmlib.record_bounds`, which takes the sup over MCMC draws. The
    guarantee says abs(log ratio_i) <= 2 * this, wherever the sup is taken over the whole support.

    Parameters
    ----------
    grid, y, weights
        The sup runs over the G positive rates of grid; y and weights are as for :func:`pseudo_posterior`.

    Returns
    -------
    ndarray, shape (n,)

    See Also
    --------
    loo_log_ratio : the exact ratios this bounds.
    ppmlib.record_bounds : the same bound from MCMC draws.
    """
    y, alpha = _data(y, weights)
    weighted = np.abs(poisson_log_lik(grid, y)) * alpha[:, None]
    weighted[alpha == 0] = 0.0
    return weighted.max(axis=1)


def exceedance_bounds(grid, y, weights=None, bound: float = 1.0, prior_shape: float = _PRIOR_SHAPE,
                      prior_rate: float = _PRIOR_RATE) -> tuple[float, float]:
    """The grid points nearest the mode beyond which some neighbour has abs(log ratio) > ``bound``.

    Returns (lower, upper): below ``lower`` or above ``upper`` at least one neighbour breaks the
    bound; between them (on the grid) none does. NaN on a side where the grid never breaks it.
    ``grid`` must be sorted and contain the pseudo posterior's mode region.

    Parameters
    ----------
    grid : array_like, shape (G,)
        Strictly increasing positive rates.
    y : array_like, shape (n,)
        Counts.
    weights : array_like, shape (n,), optional
        alpha in [0, 1]; None means all ones (the ordinary posterior).
    bound : float
        The bound on abs(log ratio) (>= 0).
    prior_shape, prior_rate : float
        a and b of the Gamma(a, b) prior (rate parametrisation); by default the Poisson family's.

    Returns
    -------
    (float, float)
        lower and upper (NaN where the grid never breaks the bound).

    See Also
    --------
    log10_tail_mass_bound : how much pseudo posterior mass lies beyond these points.
    """
    bound = _checks.real(bound, "bound", low=0)
    grid = _grid(grid)
    if (np.diff(grid) <= 0).any():
        raise BadArgument("grid must be strictly increasing")
    worst = max_abs_loo_log_ratio_by_point(grid, y, weights, prior_shape, prior_rate)
    shape, rate = pseudo_posterior(y, weights, prior_shape, prior_rate)
    mode = max(shape - 1.0, 0.0) / rate
    broken = worst > bound
    below, above = broken & (grid < mode), broken & (grid > mode)
    lower = float(grid[below].max()) if below.any() else np.nan
    upper = float(grid[above].min()) if above.any() else np.nan
    return lower, upper


def log10_tail_mass_bound(lower: float, upper: float, y, weights=None, prior_shape: float = _PRIOR_SHAPE,
                          prior_rate: float = _PRIOR_RATE) -> float:
    """An upper bound on log10 of the pseudo posterior mass below ``lower`` plus above ``upper``.

    The masses are too small for a cdf in double precision (often below 1e-300), so the bound
    uses that a Gamma log density with shape > 1 is concave: beyond a point t on the tail side it
    lies under its tangent at t, whose exponential tail integrates to pdf(t) / abs(slope(t)).
    A NaN end contributes nothing. Both ends must lie on the tail side of the mode.

    Parameters
    ----------
    lower, upper : float
        The ends beyond which the mass is bounded (NaN: that side contributes nothing).
    y, weights, prior_shape, prior_rate
        y, weights, prior: see :func:`pseudo_posterior`.

    Returns
    -------
    float
        log10 of the bound; -inf when both ends are NaN.
    """
    shape, rate = pseudo_posterior(y, weights, prior_shape, prior_rate)
    if shape <= 1:
        raise BadArgument("the tangent bound needs a pseudo posterior shape > 1 (a log-concave Gamma)")
    mode = (shape - 1.0) / rate
    logs = []
    for end, side in ((lower, -1.0), (upper, 1.0)):
        if np.isnan(end):
            continue
        end = _checks.real(end, "lower" if side < 0 else "upper", low=0, low_open=True)
        if side * (end - mode) <= 0:
            raise BadArgument(f"{'lower' if side < 0 else 'upper'} = {end:g} is not beyond the mode {mode:g}")
        slope = (shape - 1.0) / end - rate                     # d/dlambda of the log density at the end
        logs.append(float(gamma_logpdf([end], shape, rate)[0]) - np.log(abs(slope)))
    if not logs:
        return -np.inf
    return float(special.logsumexp(logs) / np.log(10.0))


# ---------------------------------------------------------------------------------------------
# the exponential mechanism and its scalar weight
# ---------------------------------------------------------------------------------------------

def em_scalar_weight(epsilon: float, delta_u: float) -> float:
    """The utility scale a = epsilon / (2 Delta_u) that makes one EM draw epsilon-DP.

    Delta_u is the utility's global sensitivity: its largest change over every database and each of
    its removal neighbours, i.e. over every add/remove pair (CE paper, section 3.2).

    Parameters
    ----------
    epsilon : float
        The budget of one draw (> 0).
    delta_u : float
        The utility's sensitivity (> 0).

    Returns
    -------
    float

    See Also
    --------
    em_log_density : the EM density at this scale.
    ppmlib.scalar_weights : the same scale as record weights.

    Examples
    --------
    >>> em_scalar_weight(2.0, 4.0)
    0.25
    """
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    delta_u = _checks.real(delta_u, "delta_u", low=0, low_open=True)
    return epsilon / (2.0 * delta_u)


def em_log_density(grid, y, a: float, prior_shape: float = _PRIOR_SHAPE, prior_rate: float = _PRIOR_RATE) -> np.ndarray:
    """Log density of the exponential mechanism with utility u(y, lambda) = a * sum_i log p(y_i | lambda).

    The density is proportional to exp(u) times the Gamma prior density; it is normalised
    numerically on the grid (trapezoid rule in log space), with no use of conjugacy, so that
    comparing it with :func:`log_density` at weights all equal to ``a`` is a real check.
    ``grid`` (G,) must be increasing and cover the mass; returns (G,).

    Parameters
    ----------
    grid : array_like, shape (G,)
        Increasing positive rates covering the mass.
    y : array_like, shape (n,)
        Counts.
    a : float
        The utility scale (>= 0).
    prior_shape, prior_rate : float
        a and b of the Gamma(a, b) prior (rate parametrisation); by default the Poisson family's.

    Returns
    -------
    ndarray, shape (G,)

    See Also
    --------
    em_scalar_weight : the scale a for a chosen epsilon.
    log_density : the scalar-weighted pseudo posterior it equals.
    """
    a = _checks.real(a, "a", low=0)
    shape0, rate0 = _prior(prior_shape, prior_rate)
    grid = _grid(grid)
    if grid.size < 2 or (np.diff(grid) <= 0).any():
        raise BadArgument("grid must be strictly increasing with at least two points")
    utility = a * poisson_log_lik(grid, y).sum(axis=0)
    unnormalised = utility + gamma_logpdf(grid, shape0, rate0)
    return unnormalised - _log_trapezoid(unnormalised, grid)


def _log_trapezoid(log_values: np.ndarray, grid: np.ndarray) -> float:
    """log of the trapezoid integral of exp(log_values) over ``grid``, without overflow."""
    pair = np.logaddexp(log_values[1:], log_values[:-1]) - np.log(2.0)
    return float(special.logsumexp(pair, b=np.diff(grid)))


# ---------------------------------------------------------------------------------------------
# exact sampling, and the marginal of a synthetic dataset (the privacy audit, book/privacy_audit.md)
# ---------------------------------------------------------------------------------------------

def sample(y, weights=None, size: int = 4000, seed=0, prior_shape: float = _PRIOR_SHAPE,
           prior_rate: float = _PRIOR_RATE, counts=None) -> np.ndarray:
    """``size`` independent draws of the Poisson rate from the exact pseudo posterior, shape (size,).

    The conjugate stand-in for an MCMC fit: no chains, no autocorrelation, no warmup. Draws are made
    by the inverse cdf of uniforms from ``seed``, so one seed gives draws that move continuously
    with the data and the weights (common random numbers): a root finder on Delta(a), or the
    comparison of a database with its neighbour, then sees the change of the pseudo posterior and
    not a fresh sampling error.

    Parameters
    ----------
    y, weights
        The database and its weights, as for :func:`pseudo_posterior`.
    size : int
        The number of draws.
    seed : int
        The seed of the uniforms.
    prior_shape, prior_rate : float
        The prior, as for :func:`pseudo_posterior`.

    Returns
    -------
    ndarray, shape (size,)

    See Also
    --------
    pseudo_posterior : the Gamma these are drawn from.

    Examples
    --------
    >>> lam = sample([98, 103, 120], [1.0, 1.0, 0.5], size=4000, seed=1)
    >>> lam.shape, round(float(lam.mean()), 2)          # the Gamma's mean is 262 / 2.501 = 104.76
    ((4000,), 104.71)
    """
    shape, rate = pseudo_posterior(y, weights, prior_shape, prior_rate, counts)
    return _gamma_draws(shape, rate, size, seed)


def _uniforms(size, seed) -> np.ndarray:
    """The uniforms behind :func:`sample`, in the open interval (0, 1): ppf(0) = 0 and ppf(1) = inf are not rates."""
    size = _checks.integer(size, "size", low=1)
    return (np.random.default_rng(_checks.seed(seed)).integers(1, 2**53, size=size) - 0.5) / 2**53


def _gamma_draws(shape: float, rate: float, size: int, seed) -> np.ndarray:
    """``size`` Gamma(shape, rate) draws by the inverse cdf of :func:`_uniforms` from ``seed``."""
    return stats.gamma.ppf(_uniforms(size, seed), shape) / rate


def draw_record_bounds(y, weights=None, draws: int = 4000, seed=0, prior_shape: float = _PRIOR_SHAPE,
                       prior_rate: float = _PRIOR_RATE, counts=None) -> np.ndarray:
    """By-record bounds Delta_i = max_s abs(alpha_i f_s(y_i)) over ``draws`` exact draws, shape (n,).

    The conjugate stand-in for :func:`ppmlib.record_bounds` of a Stan fit, for databases of any size:
    -log p(y | lambda) = lambda - y log lambda + log y! is convex in lambda, so its largest value over
    a set of draws is at the smallest or the largest draw, and only those two enter; and it depends
    on a record only through its value, so it is evaluated once per distinct value. A record with
    weight 0 has bound 0. ``weights`` None: the unweighted pseudo posterior (the bounds are then
    f_i = max_s abs(f_s(y_i)), LW's risks before scaling).

    Parameters
    ----------
    y : array_like, shape (n,)
        Counts.
    weights : array_like, shape (n,), optional
        alpha in [0, 1] (None: all ones).
    draws, seed : int
        Exact draws from :func:`sample` (common random numbers: one seed, draws that move with the data).
    prior_shape, prior_rate : float
        The Gamma(a, b) prior.
    counts : array_like, shape (n,), optional
        Multiplicities, as in :func:`pseudo_posterior`: pass the distinct values with their counts
        and the cost no longer grows with the number of records.

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> bounds = draw_record_bounds([98, 103, 120], [1.0, 1.0, 0.5], draws=4000, seed=1)
    >>> bounds.shape, bool(bounds[2] < draw_record_bounds([98, 103, 120], draws=4000, seed=1)[2])
    ((3,), True)
    """
    y, alpha = _data(y, weights)
    shape, rate = pseudo_posterior(y, alpha, prior_shape, prior_rate, counts)
    u = _uniforms(draws, seed)
    # the ppf is increasing: the smallest and the largest of sample()'s draws are those of the extreme uniforms
    extremes = stats.gamma.ppf([u.min(), u.max()], shape) / rate
    values, index = np.unique(y, return_inverse=True)
    worst = np.abs(poisson_log_lik(extremes, values)).max(axis=1)[index]
    bounds = alpha * worst
    bounds[alpha == 0] = 0.0
    return bounds


@dataclass(frozen=True)
class ConjugateSampler(Sampler):
    """Exact draws of the Poisson model's Gamma pseudo posterior in place of NUTS: no Stan needed.

    Pass it wherever a :class:`ppmlib.Sampler` goes (:func:`ppmlib.fit`, :func:`ppmlib.synthesizer`,
    the calibration loops): the Poisson model is then fitted in milliseconds from the closed form
    Gamma(a + sum alpha_i y_i, b + sum alpha_i), with S = chains * draws independent draws (made as
    :func:`sample` makes them; ``warmup`` is unused). The draws are independent, so R-hat is near 1
    and the ESS near S; the fit has no sampler statistics and its backend is ``"exact"``. The
    docstring examples use it so that they run without Stan; the other models raise ValueError.

    Parameters
    ----------
    chains, draws, warmup : int
        As for :class:`ppmlib.Sampler`.

    Examples
    --------
    >>> y = [98, 103, 120]
    >>> exact_fit = ppmlib.fit("poisson", y, sampler=ConjugateSampler(chains=2, draws=2000), seed=1)
    >>> exact_fit.backend, exact_fit.draws["lambda"].shape, round(float(exact_fit.draws["lambda"].mean()), 1)
    ('exact', (4000,), 107.3)
    >>> shape, rate = pseudo_posterior(y)
    >>> round(shape / rate, 1)                 # the Gamma's mean, (1 + 321) / (0.001 + 3)
    107.3
    """

    def sample(self, fam, data: dict, seed: int, init: dict | None = None):
        """Draws of the Gamma pseudo posterior that ``data`` (the Poisson program's) describes.

        Parameters
        ----------
        fam : ppmlib.models.families.Family
            The Poisson family (any other is a ValueError).
        data : dict
            The Poisson program's data: its weighted sums and the prior settings.
        seed : int
            The seed of the uniforms.
        init : dict, optional
            Ignored: exact draws have no chains to start.

        Returns
        -------
        ppmlib.inference.backends.Draws
            ``lambda`` of shape (S,), no sampler statistics, backend ``"exact"``.
        """
        if fam.name != "poisson":
            raise BadArgument(f"ConjugateSampler draws the Poisson model's Gamma pseudo posterior only; got model "
                             f"{fam.name!r} (use ppmlib.Sampler to fit it with Stan)")
        if data.get("censor", 0):
            lam = censored_draws(data, self.total_draws, seed)
        else:
            lam = _gamma_draws(data["prior_shape"] + data["sum_wy"], data["prior_rate"] + data["sum_w"],
                               self.total_draws, seed)
        return Draws(params={"lambda": lam}, sampler={}, chains=self.chains, backend="exact")


def censored_log_density(grid, data: dict) -> np.ndarray:
    """The censored Poisson posterior's unnormalised log density at ``grid``, from the program's data.

    log Gamma(lambda; shape, rate) + sum over groups of size_k clip(w_k log p(v_k | lambda) - shift_k,
    -bound, bound): what ``stan/poisson.stan`` adds to its target with ``censor = 1``.

    Parameters
    ----------
    grid : array_like, shape (G,)
        Positive rates.
    data : dict
        The Poisson program's data with ``censor = 1`` (``ppmlib.models.families.Poisson.stan_data``).

    Returns
    -------
    ndarray, shape (G,)
    """
    grid = _grid(grid)
    values = np.asarray(data["group_values"], dtype=float)[:, None]
    raw = (np.asarray(data["group_weights"])[:, None] * (values * np.log(grid) - grid - special.gammaln(values + 1.0))
           - np.asarray(data["group_shifts"])[:, None])
    bound = data["censor_bound"]
    return (gamma_logpdf(grid, data["prior_shape"], data["prior_rate"])
            + np.asarray(data["group_sizes"]) @ np.clip(raw, -bound, bound))


def censored_support(data: dict, tail: float = 1e-12) -> tuple[float, float]:
    """The rates between which the censored Poisson posterior holds all but ``tail`` of its mass.

    Found on a log-spaced grid of 20,001 rates from 1e-6 to 1e7 (one grid step of margin each side).

    Parameters
    ----------
    data : dict
        The Poisson program's data with ``censor = 1``.
    tail : float
        The mass left out at each end.

    Returns
    -------
    (float, float)
    """
    coarse = np.geomspace(1e-6, 1e7, 20_001)
    log_d = censored_log_density(coarse, data)
    mass = np.exp(log_d - log_d.max()) * np.gradient(coarse)
    cdf = np.cumsum(mass) / mass.sum()
    return (float(coarse[max(0, np.searchsorted(cdf, tail) - 1)]),
            float(coarse[min(coarse.size - 1, np.searchsorted(cdf, 1 - tail) + 1)]))


def censored_draws(data: dict, size: int, seed, grid_points: int = 8001) -> np.ndarray:
    """Draws of the censored Poisson posterior by inverse CDF on a grid: no Stan needed.

    :func:`censored_support` finds where the density holds all but 1e-12 of its mass; a grid of
    ``grid_points`` equally spaced rates over that range gives the CDF (trapezoid rule), which the
    uniforms are mapped through (linear interpolation).

    Parameters
    ----------
    data : dict
        The Poisson program's data with ``censor = 1``.
    size : int
        Draws.
    seed : int
        The seed of the uniforms.
    grid_points : int
        Points of the fine grid.

    Returns
    -------
    ndarray, shape (size,)
    """
    fine = np.linspace(*censored_support(data), grid_points)
    log_d = censored_log_density(fine, data)
    dens = np.exp(log_d - log_d.max())
    cdf = np.r_[0.0, np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(fine))]
    return np.interp(_uniforms(size, seed) * cdf[-1], cdf, fine)


def synthetic_sum_logpmf(s, n_synthetic: int, shape, rate) -> np.ndarray:
    """log P(sum of a synthetic dataset = s) when lambda ~ Gamma(shape, rate), one dataset of
    ``n_synthetic`` Poisson(lambda) records; broadcasts over ``s``, ``shape`` and ``rate``.

    Given lambda the sum is Poisson(n_synthetic lambda), so over the Gamma it is negative binomial
    with size ``shape`` and success probability rate / (rate + n_synthetic). The sum is sufficient
    for lambda in a Poisson sample, so the likelihood ratio of a whole synthetic dataset between two
    Gamma pseudo posteriors equals the ratio of this pmf at its sum: the dataset's other features
    (the order and spread of its values) carry no information about which database was used.

    Parameters
    ----------
    s : array_like
        Non-negative integer sums.
    n_synthetic : int
        Records in the synthetic dataset.
    shape, rate : float or array_like
        The Gamma the rate is drawn from (positive).

    Returns
    -------
    ndarray
        The broadcast shape of ``s``, ``shape`` and ``rate``.
    """
    n_synthetic = _checks.integer(n_synthetic, "n_synthetic", low=1)
    s = _checks.real_array(s, "s")
    if (s < 0).any() or (s != np.round(s)).any():
        raise BadArgument("s must hold non-negative integer sums")
    shape, rate = _shape_rate(shape, rate)
    # shape log(rate / (rate + n)) and s log(n / (rate + n)), written with log1p for accuracy
    return (special.gammaln(s + shape) - special.gammaln(shape) - special.gammaln(s + 1.0)
            - shape * np.log1p(n_synthetic / rate) - s * np.log1p(rate / n_synthetic))
