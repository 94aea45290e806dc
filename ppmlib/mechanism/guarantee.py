"""Checking the guarantee epsilon = 2 Delta exactly, on the conjugate Poisson-Gamma pseudo posterior.

For a Poisson synthesizer with a Gamma prior the alpha-weighted pseudo posterior of a database and
of each of its leave-one-out neighbours are Gammas in closed form (:mod:`ppmlib.inference.exact`), so the log
density ratio between the two is known exactly at every rate. :func:`loo_guarantee_check` sets that
ratio, for every neighbour, beside the Delta that ppmlib estimates from MCMC draws;
:func:`tail_exceedance` looks beyond the draws, where the bound must eventually fail, and bounds
the pseudo posterior mass there. The DP chapter reports both.
"""
from __future__ import annotations

__all__ = ["LooCheck", "loo_guarantee_check", "by_record_margins", "loo_check_table", "tail_exceedance",
           "gamma_draws_check", "STRICT_GRID", "StrictCheck", "grid_log_ratios", "strict_check"]

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from ppmlib.inference import exact
from ppmlib import _checks
from ppmlib.mechanism.bounds import lipschitz_bound, record_bounds
from ppmlib.models.families import POISSON_PRIOR, family
from ppmlib.errors import BadArgument

if TYPE_CHECKING:
    import pandas as pd

    from ppmlib.inference.posterior import Fit


@dataclass(frozen=True, eq=False)
class LooCheck:
    """One mechanism's exact leave-one-out check.

    Attributes
    ----------
    name : str
        Label ("Unweighted", "LW", ...).
    weights : ndarray, shape (n,)
        alpha.
    delta : float
        Delta estimated from the draws.
    record_bounds : ndarray, shape (n,)
        Delta_i.
    grid : ndarray, shape (G,)
        Rates spanning the draws.
    ratio : ndarray, shape (n,)
        Max over ``grid`` of abs(log ratio) per neighbour.
    central : (float, float)
        The central 1 - 1e-6 interval of the exact pseudo posterior.
    ratio_central : ndarray, shape (n,)
        The same maximum over a grid on that interval.
    """
    name: str
    weights: np.ndarray
    delta: float
    record_bounds: np.ndarray
    grid: np.ndarray
    ratio: np.ndarray
    central: tuple
    ratio_central: np.ndarray

    @property
    def worst(self) -> int:
        """Index of the neighbour (removed record) with the largest ratio."""
        return int(self.ratio.argmax())

    def holds(self) -> bool:
        """Every neighbour's ratio is within 2 Delta.

        Returns
        -------
        bool
        """
        return bool(self.ratio.max() <= 2 * self.delta)

    def holds_by_record(self) -> bool:
        """Every neighbour's ratio is within its own 2 Delta_i (up to rounding).

        Returns
        -------
        bool
        """
        return bool((self.ratio <= 2 * self.record_bounds + 1e-12).all())


def loo_guarantee_check(name: str, fitted: "Fit", weights=None, *, grid_points: int = 2000,
                        prior_shape: float = POISSON_PRIOR["prior_shape"],
                        prior_rate: float = POISSON_PRIOR["prior_rate"]) -> LooCheck:
    """Exact LOO log density ratios of a Poisson pseudo posterior against its draw-based Delta.

    ``fitted`` is the alpha-weighted Poisson :class:`~ppmlib.Fit` (its draws set Delta and the
    grid's range); ``weights`` its alpha (None: all ones). The ratio for neighbour i is maximised
    over ``grid_points`` rates spanning the draws, and over as many spanning the central 1 - 1e-6
    of the exact pseudo posterior.

    Returns
    -------
    LooCheck

    Parameters
    ----------
    name : str
        The mechanism's label.
    fitted : Fit
        The alpha-weighted Poisson fit.
    weights : array_like, shape (n,), optional
        Its alpha (None: all ones).
    grid_points : int
        Points of each grid.
    prior_shape, prior_rate : float
        The Gamma prior (by default the Poisson family's).

    See Also
    --------
    loo_check_table : one row per mechanism's check.
    tail_exceedance : where beyond the draws the bound fails, and the mass there.
    ppmlib.inference.exact.loo_log_ratio : the exact ratios, neighbour by neighbour.

    Examples
    --------
    >>> base = ppmlib.example_fit()
    >>> alpha = ppmlib.lw_weights(base, c=0.5)
    >>> lw_fit = ppmlib.fit("poisson", base.y, weights=alpha, sampler=ppmlib.inference.exact.ConjugateSampler(), seed=2)
    >>> check = loo_guarantee_check("LW", lw_fit, alpha)
    >>> check.holds(), round(float(check.ratio.max()), 3), round(2 * check.delta, 3)
    (True, 0.367, 3.85)
    """
    if fitted.model.name != "poisson":
        raise BadArgument(f"the exact check needs the conjugate Poisson model, got {fitted.model.name!r}")
    grid_points = _checks.integer(grid_points, "grid_points", low=2)
    y = fitted.y
    weights = _checks.weights(weights, y.size)
    prior = dict(prior_shape=prior_shape, prior_rate=prior_rate)
    lam = fitted.draws["lambda"]
    grid = np.linspace(lam.min(), lam.max(), grid_points)
    central = np.linspace(*exact.central_interval(y, weights, **prior), grid_points)
    return LooCheck(name, weights, lipschitz_bound(fitted.log_lik, weights), record_bounds(fitted.log_lik, weights),
                    grid, exact.max_abs_loo_log_ratio(grid, y, weights, **prior), (central[0], central[-1]),
                    exact.max_abs_loo_log_ratio(central, y, weights, **prior))


def by_record_margins(check: LooCheck) -> tuple[float, float]:
    """How close the neighbours come to their own by-record bound, and to the smallest one.

    The log ratio between ``x`` and ``x`` without record i differs by record i's term alone, so each neighbour stays
    within its own 2 Delta_i. Without that (if the ratio did not depend on which record was
    removed) every neighbour would have to stay within the smallest 2 Delta_j. Records with
    Delta_i = 0 (weight 0, ratio exactly 0) are left out.

    Parameters
    ----------
    check : LooCheck
        One mechanism's check (:func:`loo_guarantee_check`).

    Returns
    -------
    (float, float)
        max_i ratio_i / (2 Delta_i) and max_i ratio_i / (2 min_j Delta_j), over records with
        Delta_i > 0: the first is at most 1 when the by-record bound holds, the second exceeds 1
        when the by-record bounds differ enough to matter.
    """
    positive = check.record_bounds > 0
    if not positive.any():
        raise BadArgument(f"{check.name}: no record has a positive bound Delta_i")
    ratio, bounds = check.ratio[positive], check.record_bounds[positive]
    return float((ratio / (2 * bounds)).max()), float(ratio.max() / (2 * bounds.min()))


def loo_check_table(checks: dict, y) -> "pd.DataFrame":
    """One row per mechanism: Delta, 2 Delta, the grid, the largest ratios, the worst neighbour.

    Parameters
    ----------
    checks : dict of str to LooCheck
    y : array_like, shape (n,)
        The counts (to name the worst neighbour's value).

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd
    y = _checks.counts(y)
    return pd.DataFrame({name: {
        "Delta (draws)": ch.delta, "2 Delta": 2 * ch.delta,
        "grid: draws' range": f"{ch.grid[0]:.3f} .. {ch.grid[-1]:.3f}",
        "max |log ratio|, draws' range": ch.ratio.max(),
        "max |log ratio|, central 1-1e-6": ch.ratio_central.max(),
        "worst neighbour: record value": int(y[ch.worst]),
        "every neighbour within its own 2 Delta_i": ch.holds_by_record(),
    } for name, ch in checks.items()}).T


def tail_exceedance(checks: dict, y, wide, *, prior_shape: float = POISSON_PRIOR["prior_shape"],
                    prior_rate: float = POISSON_PRIOR["prior_rate"]) -> tuple["pd.DataFrame", dict]:
    """Where, beyond the draws, some neighbour's ratio first exceeds 2 Delta, and the mass there.

    ``wide`` (G,) is an increasing grid of rates reaching far beyond the draws. Returns a table
    (one row per mechanism: 2 Delta, the rates below/above which the bound is exceeded, the draws'
    range, and an upper bound on log10 of the pseudo posterior mass beyond them) and, per mechanism,
    the (G,) largest ratio over all neighbours at every rate of ``wide`` (for the figure).

    Parameters
    ----------
    checks : dict of str to LooCheck
    y : array_like, shape (n,)
        The counts.
    wide : array_like, shape (G,)
        Increasing rates reaching far beyond the draws.
    prior_shape, prior_rate : float
        The Gamma prior (by default the Poisson family's).

    Returns
    -------
    (pandas.DataFrame, dict of str to ndarray)

    See Also
    --------
    loo_guarantee_check : makes the checks this takes (a dict name -> LooCheck).
    ppmlib.inference.exact.exceedance_bounds, ppmlib.inference.exact.log10_tail_mass_bound : the two computations per row.
    """
    import pandas as pd
    prior = dict(prior_shape=prior_shape, prior_rate=prior_rate)
    rows, curves = {}, {}
    for name, ch in checks.items():
        curves[name] = exact.max_abs_loo_log_ratio_by_point(wide, y, ch.weights, **prior)
        lower, upper = exact.exceedance_bounds(wide, y, ch.weights, bound=2 * ch.delta, **prior)
        rows[name] = {"2 Delta": 2 * ch.delta, "exceeded below lambda": lower, "exceeded above lambda": upper,
                      "draws' range": f"{ch.grid[0]:.2f} .. {ch.grid[-1]:.2f}",
                      "log10 P(lambda in exceedance region) <=": exact.log10_tail_mass_bound(lower, upper, y, ch.weights, **prior)}
    return pd.DataFrame(rows).T, curves


# ---------------------------------------------------------------------------------------------
# Stan's draws against the exact pseudo posterior (the DP and audit chapters check their sampler so)
# ---------------------------------------------------------------------------------------------


def gamma_draws_check(draws, shape: float, rate: float, ess: float,
                      levels=(0.05, 0.25, 0.5, 0.75, 0.95)) -> dict:
    """MCMC draws of a Poisson rate against the exact Gamma(shape, rate) they should follow.

    ``draws`` (S,); ``ess`` the draws' effective sample size (the bulk ESS). Returns ``mean z``,
    the draws' mean minus the exact mean in units of its Monte Carlo error, exact sd / sqrt(ess);
    ``sd ratio``, the draws' sd over the exact sd; ``sd z``, that ratio's distance from 1 in units
    of its Monte Carlo error, about 1 / sqrt(2 ess) for a posterior close to normal (so a tolerance
    on it does not depend on the run's length, as one on the ratio would); and ``quantile gap``, the
    largest distance between the draws' and the exact quantiles at ``levels``, in exact sds.

    Parameters
    ----------
    draws : array_like, shape (S,)
        MCMC draws of the rate.
    shape, rate : float
        The exact Gamma.
    ess : float
        The draws' bulk ESS.
    levels : sequence of float
        The quantile levels compared.

    Returns
    -------
    dict
    """
    from scipy import stats
    draws = _checks.finite_array(draws, "draws", ndim=1)
    shape = _checks.real(shape, "shape", low=0, low_open=True)
    rate = _checks.real(rate, "rate", low=0, low_open=True)
    ess = _checks.real(ess, "ess", low=0, low_open=True)
    levels = _checks.finite_array(levels, "levels", ndim=1)
    mean, sd = shape / rate, np.sqrt(shape) / rate
    exact_quantiles = stats.gamma.ppf(levels, shape, scale=1.0 / rate)
    return {"mean z": float((draws.mean() - mean) / (sd / np.sqrt(ess))),
            "sd ratio": float(draws.std() / sd),
            "sd z": float((draws.std() / sd - 1.0) * np.sqrt(2.0 * ess)),
            "quantile gap": float(np.abs(np.quantile(draws, levels) - exact_quantiles).max() / sd)}


# ---------------------------------------------------------------------------------------------
# the strict (censored) mechanism, checked by quadrature over the whole parameter space
# ---------------------------------------------------------------------------------------------

#: The rates of the strict check: 24,001 log-spaced points from 1e-3 to 1e6 (the prior's support as
#: far as a count model can use it; the ratio of an uncensored posterior grows without bound at both ends).
STRICT_GRID = np.geomspace(1e-3, 1e6, 24_001)


@dataclass(frozen=True, eq=False)
class StrictCheck:
    """The largest log density ratio between a database and each of its neighbours, over a grid.

    Attributes
    ----------
    name : str
        The mechanism's label ("CM", "WCM", "strict weighted", "LW (uncensored)").
    epsilon : float
        The nominal per-draw epsilon.
    removal : ndarray, shape (n,)
        max over the grid of abs(log xi(theta | x) - log xi(theta | x without record j)), for every record j.
    addition : float
        The same for x with the record ``added`` appended (nan when none was added).
    share_censored : float
        The share of records censored, averaged over the grid's points weighted by the posterior
        (0 for an uncensored mechanism).
    """
    name: str
    epsilon: float
    removal: np.ndarray
    addition: float
    share_censored: float

    @property
    def worst(self) -> float:
        """The largest ratio over every neighbour checked."""
        return float(np.nanmax(np.r_[self.removal, self.addition]))

    def holds(self, rtol: float = 1e-9) -> bool:
        """Every neighbour's ratio is within epsilon (up to ``rtol`` for rounding).

        Parameters
        ----------
        rtol : float
            Relative allowance for floating-point rounding.

        Returns
        -------
        bool
        """
        return bool(self.worst <= self.epsilon * (1 + rtol))


def _log_trapezoid_rows(log_values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """log of the trapezoid integral of exp(row) over ``grid`` for every row of (k, G) values: positive
    quadrature weights, so a ratio of two such integrals is an average of the integrands' ratio."""
    pair = np.logaddexp(log_values[..., 1:], log_values[..., :-1]) - np.log(2.0)
    return special.logsumexp(pair + np.log(np.diff(grid)), axis=-1)


def grid_log_ratios(terms: np.ndarray, log_prior: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """max over the grid of abs(log xi(theta | x) - log xi(theta | x without record j)) for every record j, shape (n,).

    xi(theta | x) is proportional to the prior times exp(sum_i terms_i(theta)); each density is
    normalised by the trapezoid rule on ``grid``, so the log ratio is terms_j(theta) minus the log of
    a weighted average of exp(terms_j): it spans no more than terms_j does over the grid.

    Parameters
    ----------
    terms : ndarray, shape (n, G)
        Every record's term in the log posterior at every grid point (alpha_i f, or its censored u_i).
    log_prior : ndarray, shape (G,)
        The log prior density on the grid.
    grid : ndarray, shape (G,)
        Increasing parameter values.

    Returns
    -------
    ndarray, shape (n,)
    """
    total = terms.sum(axis=0) + log_prior
    log_z = _log_trapezoid_rows(total, grid)
    out = np.empty(terms.shape[0])
    for start in range(0, terms.shape[0], 256):       # (block, G) at a time: memory stays flat in n
        block = terms[start:start + 256]
        log_z_minus = _log_trapezoid_rows(total[None, :] - block, grid)
        out[start:start + 256] = np.abs(block - (log_z - log_z_minus)[:, None]).max(axis=1)
    return out


def strict_check(name: str, y, weights, epsilon: float, *, censored: bool = True, centring: str = "best",
                 added: int | None = None, added_weight: float = 1.0, grid=None,
                 prior_shape: float = POISSON_PRIOR["prior_shape"],
                 prior_rate: float = POISSON_PRIOR["prior_rate"]) -> StrictCheck:
    """The censored Poisson-Gamma mechanism checked against every neighbour by quadrature.

    For every removal neighbour x without record j of ``y`` (and, with ``added``, for ``y`` with one record of
    that value appended, weight ``added_weight``) the largest abs log density ratio over ``grid``
    (default :data:`STRICT_GRID`). The weights are held as given (the neighbour keeps the others');
    with ``censored=False`` the terms are alpha_i f, the uncensored pseudo posterior at the same weights.

    Parameters
    ----------
    name : str
        The mechanism's label.
    y : array_like, shape (n,)
        The counts.
    weights : array_like, shape (n,)
        alpha.
    epsilon : float
        The per-draw epsilon (the censoring window's width; the nominal epsilon when uncensored).
    censored : bool
        Censor the terms (the strict mechanism) or not (the local one).
    centring : str
        As for :func:`ppmlib.models.censoring.censoring`.
    added : int, optional
        The value of a record added to ``y`` (the neighbour in the other direction).
    added_weight : float
        Its weight.
    grid : array_like, shape (G,), optional
        Increasing positive rates.
    prior_shape, prior_rate : float
        The Gamma prior.

    Returns
    -------
    StrictCheck
    """
    from ppmlib.mechanism.censoring import censored_terms, censoring
    fam = family("poisson")
    y = _checks.counts(y)
    alpha = _checks.weights(weights, y.size)
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    grid = STRICT_GRID if grid is None else exact._grid(grid)
    log_prior = exact.gamma_logpdf(grid, prior_shape, prior_rate)
    if added is not None:
        y_plus = np.r_[y, _checks.integer(added, "added", low=0)]
        alpha_plus = np.r_[alpha, _checks.real(added_weight, "added_weight", low=0, high=1)]
    else:
        y_plus, alpha_plus = y, alpha

    def terms(values, a):
        log_lik = exact.poisson_log_lik(grid, values).T          # (G, n): draws x records
        if not censored:
            return (a * log_lik).T, 0.0
        cens = censoring(fam, values, None, a, epsilon, centring=centring)
        raw = a * log_lik - cens.shifts
        return censored_terms(log_lik, a, cens).T, np.abs(raw) > cens.bound

    u, clipped = terms(y, alpha)
    removal = grid_log_ratios(u, log_prior, grid)
    share = 0.0
    if censored:
        log_post = u.sum(axis=0) + log_prior
        mass = np.exp(log_post - log_post.max()) * np.gradient(grid)
        share = float((clipped.mean(axis=1) * mass).sum() / mass.sum())
    addition = np.nan
    if added is not None:
        u_plus, _ = terms(y_plus, alpha_plus)
        addition = float(grid_log_ratios(u_plus, log_prior, grid)[-1])
    return StrictCheck(name, epsilon, removal, addition, share)
