"""Coverage of the analyst's intervals: does the interval a user of the synthetic release computes
contain the estimate the confidential data give?

The analyst regresses the synthesized column (log y) on the categorical keys by least squares, on
each of the m synthetic datasets, and combines the m estimates and variances by the partially
synthetic combining rules (Reiter 2003, :func:`ppmlib.evaluate.utility.combine`): q = mean q_j,
T = v + b / m, a t interval with (m - 1)(1 + v / (b / m))^2 degrees of freedom. For every
coefficient this module asks whether that interval covers the same coefficient estimated on the
confidential data; the share of coefficients covered is the release's coverage. It is the
question an agency's users ask of any synthetic release: would my conclusion have been the same on
the real data? (It is not the coverage of a population parameter over repeated samples.)
"""
from __future__ import annotations

__all__ = ["coefficient_coverage", "coverage_rate"]

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.errors import BadArgument
from ppmlib.evaluate.utility import combine, ols_of


def coefficient_coverage(confidential: pd.DataFrame, synthetic, column: str, keys, *,
                         level: float = 0.95) -> pd.DataFrame:
    """For every coefficient of the regression of ``column`` on ``keys``: the combined interval and
    whether it covers the confidential estimate.

    Parameters
    ----------
    confidential : pandas.DataFrame
        The confidential records (``column`` and the keys).
    synthetic : list of pandas.DataFrame
        The m >= 2 synthetic datasets, with the same columns.
    column : str
        The response (the synthesized column, e.g. log wage).
    keys : sequence of str
        The categorical predictors (one-hot, the first level of each absorbed by the intercept;
        the confidential data's levels fix the columns of every dataset).
    level : float
        The intervals' level.

    Returns
    -------
    pandas.DataFrame
        One row per coefficient: term, confidential, estimate, lower, upper, covered (bool).
    """
    if not isinstance(synthetic, (list, tuple)) or len(synthetic) < 2:
        raise BadArgument("synthetic must be a list of m >= 2 synthetic datasets")
    level = _checks.real(level, "level", low=0, high=1, low_open=True, high_open=True)
    keys = list(keys)
    levels = {k: sorted(confidential[k].astype(str).unique()) for k in keys}
    estimand = ols_of(column, keys, levels=levels)
    as_str = (lambda frame: frame.assign(**{k: frame[k].astype(str) for k in keys}))
    terms, truth, _ = estimand.compute(as_str(confidential))
    fitted = [estimand.compute(as_str(frame)) for frame in synthetic]
    combined = combine(np.array([f[1] for f in fitted]), np.array([f[2] for f in fitted]), level=level)
    lower, upper = np.atleast_1d(combined["lower"]), np.atleast_1d(combined["upper"])
    return pd.DataFrame({"term": terms, "confidential": truth, "estimate": np.atleast_1d(combined["estimate"]),
                         "lower": lower, "upper": upper, "covered": (lower <= truth) & (truth <= upper)})


def coverage_rate(confidential: pd.DataFrame, synthetic, column: str, keys, *, level: float = 0.95) -> float:
    """The share of the regression's coefficients whose combined interval covers the confidential estimate.

    Parameters
    ----------
    confidential, synthetic, column, keys, level
        As for :func:`coefficient_coverage`.

    Returns
    -------
    float
        In [0, 1].
    """
    return float(coefficient_coverage(confidential, synthetic, column, keys, level=level)["covered"].mean())
