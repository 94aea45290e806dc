"""The Laplace mechanism on a survey's weighted cell totals: the baseline of the survey-tables chapter.

An agency that publishes only the table can add Laplace noise to each cell's weighted total
``T_c = sum_{i in c} w_i y_i`` and weight total ``N_c = sum_{i in c} w_i``, and divide. With public bounds
``0 < w_i <= W`` and ``|y_i| <= Y`` (records outside them are clipped to them first), removing or adding one
record changes the one pair (T_c, N_c) of its cell by at most (W Y, W), an L1 change of W (Y + 1); the
cells are disjoint. Laplace noise of scale b = W (Y + 1) / epsilon on each of the 2C numbers is
therefore epsilon-differentially private for every database within the bounds, against add/remove
neighbours (replace-one: 2 epsilon). The means T~_c / N~_c, with N~_c floored at W and the mean
clipped to [-Y, Y], are post-processing. The bounds must be public (a design document's weight cap,
the outcome's code range); taking them from the data, as a chapter may for convenience, reads the
data once more and is outside the guarantee.

Intervals: the noise is known, so the confidential estimate mu_c = T_c / N_c is covered by
mu~_c +- z sqrt(2 b^2 (1 + mu~_c^2)) / N~_c (the delta method on the ratio of the two noisy sums).
"""
from __future__ import annotations

__all__ = ["laplace_sensitivity", "laplace_table"]

import numpy as np
import pandas as pd
from scipy import stats

from ppmlib import _checks
from ppmlib.evaluate.survey import weighted_table


def laplace_sensitivity(weight_bound: float, outcome_bound: float) -> float:
    """L1 sensitivity W (Y + 1) of the cells' (total, weight total) pairs under add/remove neighbours.

    Parameters
    ----------
    weight_bound : float
        W, the public bound on a weight.
    outcome_bound : float
        Y, the public bound on abs(y).

    Returns
    -------
    float

    Examples
    --------
    >>> laplace_sensitivity(30000.0, 18.0)
    570000.0
    """
    W = _checks.real(weight_bound, "weight_bound", low=0, low_open=True)
    Y = _checks.real(outcome_bound, "outcome_bound", low=0)
    return W * (Y + 1)


def laplace_table(y, weights, cells, epsilon: float, weight_bound: float, outcome_bound: float, *, seed=0,
                  level: float = 0.95) -> pd.DataFrame:
    """Noisy weighted totals, weight totals and means by cell, epsilon-DP by the Laplace mechanism.

    Parameters
    ----------
    y : array_like, shape (n,)
        The outcome (clipped to [-outcome_bound, outcome_bound]).
    weights : array_like, shape (n,)
        Sampling weights (clipped to weight_bound).
    cells : array_like, shape (n,), or pandas.DataFrame with n rows
        The public cells, as for :func:`ppmlib.evaluate.survey.weighted_table`; the set of cells is public.
    epsilon : float
        The whole table's budget.
    weight_bound, outcome_bound : float
        The public bounds W and Y.
    seed : int or numpy.random.Generator
    level : float
        Coverage of the mean's interval (noise only: it covers the confidential estimate).

    Returns
    -------
    pandas.DataFrame
        Indexed by cell: total, weight_total, mean, mean_lower, mean_upper, and scale (b).
    """
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    W, Y = float(weight_bound), float(outcome_bound)
    b = laplace_sensitivity(W, Y) / epsilon
    y = np.clip(_checks.finite_array(y, "y", ndim=1), -Y, Y)
    w = np.minimum(_checks.finite_array(weights, "weights", ndim=1), W)
    exact = weighted_table(y, w, cells)
    rng = np.random.default_rng(seed)
    total = exact["total"].to_numpy() + rng.laplace(0.0, b, len(exact))
    weight_total = np.maximum(exact["weight_total"].to_numpy() + rng.laplace(0.0, b, len(exact)), W)
    mean = np.clip(total / weight_total, -Y, Y)
    half = stats.norm.ppf(0.5 + level / 2) * np.sqrt(2 * b**2 * (1 + mean**2)) / weight_total
    return pd.DataFrame({"total": total, "weight_total": weight_total, "mean": mean, "mean_lower": mean - half,
                         "mean_upper": mean + half, "scale": b}, index=exact.index)
