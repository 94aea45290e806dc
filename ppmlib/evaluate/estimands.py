"""The analyst's estimands on confidential and synthetic data, with intervals.

Two kinds of estimand, each with the interval an analyst would report:

* a summary of the sensitive variable (the mean, the 90th percentile): the data's interval comes
  from bootstrap resamples, a synthesizer's from its spread over the m synthetic datasets (the
  convention of :mod:`ppmlib.evaluate.utility`, whose statistics these are);
* the coefficients of a least-squares regression of the variable on the predictors: the data's
  interval is the classical t interval; a synthesizer's combines its m datasets by the rules for
  *partially* synthetic data (Reiter 2003), since only the sensitive variable is synthesized and
  the predictors are released as they are:

      q_bar = mean_j q_j,  b = var_j(q_j),  v_bar = mean_j v_j,  T = v_bar + b / m,
      t reference with (m - 1) (1 + v_bar / (b / m))^2 degrees of freedom.

The least squares and the combining rules are :func:`ppmlib.evaluate.utility.ols` and
:func:`ppmlib.evaluate.utility.combine`, which the agencies' measures (:func:`ppmlib.evaluate.utility.ci_overlap`) use too.
"""
from __future__ import annotations

__all__ = ["analyst_design", "coefficient_table", "summary_table"]

from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from ppmlib import _checks
from ppmlib.evaluate.utility import combine, ols
from ppmlib.errors import BadArgument

if TYPE_CHECKING:
    import pandas as pd


def analyst_design(table: "pd.DataFrame", columns, squared=()) -> tuple[np.ndarray, tuple]:
    """The analyst's design: an intercept, numeric ``columns`` in their own units, and the squares
    of the ``squared`` ones (the classic log-wage regression: education, experience, experience^2).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per record.
    columns : sequence of str
        Numeric columns, used in their own units.
    squared : sequence of str
        Columns whose squares follow ``columns``.

    Returns
    -------
    (X, terms)
        X of shape (n, 1 + len(columns) + len(squared)) and its column names.

    Raises
    ------
    ValueError
        A column that is not in ``table``.

    Examples
    --------
    >>> import pandas as pd
    >>> X, terms = analyst_design(pd.DataFrame({"exp": [1, 2, 3]}), ["exp"], squared=["exp"])
    >>> terms, X[:, 2].tolist()
    (('(Intercept)', 'exp', 'exp^2'), [1.0, 4.0, 9.0])
    """
    columns, squared = list(columns), list(squared)
    unknown = [c for c in columns + squared if c not in table.columns]
    if unknown:
        raise BadArgument(f"analyst columns {unknown} are not in the data; it has {list(table.columns)}")
    parts = [np.ones(len(table))] + [table[c].to_numpy(float) for c in columns]
    parts += [table[c].to_numpy(float) ** 2 for c in squared]
    return np.column_stack(parts), ("(Intercept)", *columns, *(f"{c}^2" for c in squared))


def coefficient_table(y, X, terms, synthetic: dict, level: float = 0.95) -> "pd.DataFrame":
    """The regression's coefficients on the data and on each synthesizer's datasets, with intervals.

    Parameters
    ----------
    y : array_like, shape (n,)
        The confidential response (on the scale the analyst models, e.g. log wage).
    X : array_like, shape (n, P)
        The analyst's design (kept as it is in a partially synthetic release).
    terms : sequence of str
        The P column names.
    synthetic : dict of str to ndarray, shape (m, n)
        Each synthesizer's m synthetic responses, m >= 2.
    level : float
        Coverage of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per (term, source): estimate, low, high; "Data" first.
    """
    import pandas as pd

    X = _checks.finite_array(X, "X", ndim=2)
    terms = list(terms)
    if len(terms) != X.shape[1]:
        raise BadArgument(f"terms names {len(terms)} columns but X has {X.shape[1]}")
    beta, var = ols(y, X)
    half = stats.t.ppf(0.5 + level / 2, X.shape[0] - X.shape[1]) * np.sqrt(var)
    frames = [pd.DataFrame({"term": terms, "source": "Data", "estimate": beta, "low": beta - half,
                            "high": beta + half})]
    for name, sets in synthetic.items():
        fits = [ols(row, X) for row in _checks.finite_array(sets, f"synthetic[{name!r}]", ndim=2)]
        r = combine([f[0] for f in fits], [f[1] for f in fits], level)
        frames.append(pd.DataFrame({"term": terms, "source": name, "estimate": r["estimate"], "low": r["lower"],
                                    "high": r["upper"]}))
    return pd.concat(frames, ignore_index=True)


def summary_table(values, synthetic: dict, statistics=("mean", "90th pct"), B: int = 500, seed=0,
                  level: float = 0.95) -> "pd.DataFrame":
    """Summaries of the sensitive variable (mean, 90th percentile) on the data and each synthesizer.

    The data's estimate is its value on the data and its interval the central ``level`` of B
    bootstrap resamples; a synthesizer's estimate is the median over its m datasets and its interval
    their central ``level`` (:func:`ppmlib.evaluate.utility.long_table`).

    Parameters
    ----------
    values : array_like, shape (n,)
        The confidential variable, in the units of the synthetic values.
    synthetic, B, seed
        Each synthesizer's (m, n) datasets, the data's bootstrap resamples and their seed, as for
        :func:`ppmlib.evaluate.utility.long_table`.
    statistics : sequence of str
        Keys of ``ppmlib.evaluate.utility.STATISTICS``: "15th pct", "90th pct", "mean", "median".
    level : float
        Coverage of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per (statistic, source): estimate, low, high.
    """
    import pandas as pd

    from ppmlib.evaluate.utility import STATISTICS, long_table

    values = _checks.finite_array(values, "values", ndim=1)
    long = long_table(values, synthetic, B=B, seed=seed)
    long = long[long["statistic"].isin(statistics)]
    tail = (1 - level) / 2
    grouped = long.groupby(["statistic", "source"], sort=False)["value"]
    table = pd.DataFrame({"estimate": grouped.median(), "low": grouped.quantile(tail),
                          "high": grouped.quantile(1 - tail)}).reset_index()
    on_data = {s: float(STATISTICS[s](values[None, :])[0]) for s in statistics}
    is_data = table["source"] == "Data"
    table.loc[is_data, "estimate"] = table.loc[is_data, "statistic"].map(on_data)
    return table
