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
           "gamma_draws_check"]

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ppmlib.inference import exact
from ppmlib import _checks
from ppmlib.mechanism.bounds import lipschitz_bound, record_bounds
from ppmlib.models.families import POISSON_PRIOR
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

    The log ratio between ``x`` and ``x_-i`` differs by record i's term alone, so each neighbour stays
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
