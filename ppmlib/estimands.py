"""The analyst's estimands on confidential and synthetic data, with intervals.

Two kinds of estimand, each with the interval an analyst would report:

* a summary of the sensitive variable (the mean, the 90th percentile): the data's interval comes
  from bootstrap resamples, a synthesizer's from its spread over the m synthetic datasets (the
  convention of :mod:`ppmlib.utility`, whose statistics these are);
* the coefficients of a least-squares regression of the variable on the predictors: the data's
  interval is the classical t interval; a synthesizer's combines its m datasets by the rules for
  *partially* synthetic data (Reiter 2003), since only the sensitive variable is synthesized and
  the predictors are released as they are:

      q_bar = mean_j q_j,  b = var_j(q_j),  v_bar = mean_j v_j,  T = v_bar + b / m,
      t reference with (m - 1) (1 + v_bar / (b / m))^2 degrees of freedom.
"""
from __future__ import annotations

__all__ = ["ols", "combine", "analyst_design", "coefficient_table", "summary_table"]

from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from . import _checks

if TYPE_CHECKING:
    import pandas as pd


def ols(y, X) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares coefficients of y (n,) on X (n, P) and their classical variances, both (P,).

    Parameters
    ----------
    y : array_like, shape (n,)
        The response.
    X : array_like, shape (n, P)
        The design, with more rows than columns (an intercept is a column of ones; none is added).

    Returns
    -------
    beta : ndarray, shape (P,)
        The coefficients.
    variance : ndarray, shape (P,)
        Their variances, s^2 diag((X'X)^-1) with s^2 = RSS / (n - P).

    Raises
    ------
    ValueError
        X has not one row per value of y, or not more rows than columns.

    Examples
    --------
    >>> beta, var = ols([1.0, 2.0, 4.0], [[1, 0], [1, 1], [1, 2]])
    >>> beta.round(4).tolist(), var.round(4).tolist()
    ([0.8333, 1.5], [0.1389, 0.0833])
    """
    y = _checks.finite_array(y, "y", ndim=1)
    X = _checks.finite_array(X, "X", ndim=2)
    n, p = X.shape
    if n != y.size or n <= p:
        raise ValueError(f"X must have one row per value of y ({y.size}) and more rows than columns, got {X.shape}")
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ beta
    sigma2 = residual @ residual / (n - p)
    return beta, sigma2 * np.diag(np.linalg.inv(X.T @ X))


def combine(estimates, variances, level: float = 0.95) -> dict:
    """Reiter's (2003) combining rules for m partially synthetic datasets, per coefficient.

    Parameters
    ----------
    estimates, variances : array_like, shape (m, P)
        Each dataset's estimates q_j and their variances v_j.
    level : float
        Coverage of the interval.

    Returns
    -------
    dict
        ``estimate`` (q_bar), ``variance`` (T), ``df``, ``low`` and ``high``, each (P,).

    Examples
    --------
    >>> r = combine([[1.0], [3.0]], [[0.5], [0.5]])
    >>> float(r["estimate"][0]), float(r["variance"][0]), float(r["df"][0])
    (2.0, 1.5, 2.25)
    """
    q = _checks.finite_array(estimates, "estimates", ndim=2)
    v = _checks.finite_array(variances, "variances", ndim=2)
    if q.shape != v.shape or q.shape[0] < 2:
        raise ValueError(f"estimates and variances must both be (m, P) with m >= 2, got {q.shape} and {v.shape}")
    level = _checks.real(level, "level", low=0, high=1, low_open=True, high_open=True)
    m = q.shape[0]
    q_bar, b, v_bar = q.mean(axis=0), q.var(axis=0, ddof=1), v.mean(axis=0)
    T = v_bar + b / m
    with np.errstate(divide="ignore"):
        df = np.where(b > 0, (m - 1) * (1 + v_bar / (b / m)) ** 2, np.inf)
    half = stats.t.ppf(0.5 + level / 2, df) * np.sqrt(T)
    return {"estimate": q_bar, "variance": T, "df": df, "low": q_bar - half, "high": q_bar + half}


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
        raise ValueError(f"analyst columns {unknown} are not in the data; it has {list(table.columns)}")
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
        raise ValueError(f"terms names {len(terms)} columns but X has {X.shape[1]}")
    beta, var = ols(y, X)
    half = stats.t.ppf(0.5 + level / 2, X.shape[0] - X.shape[1]) * np.sqrt(var)
    frames = [pd.DataFrame({"term": terms, "source": "Data", "estimate": beta, "low": beta - half,
                            "high": beta + half})]
    for name, sets in synthetic.items():
        fits = [ols(row, X) for row in _checks.finite_array(sets, f"synthetic[{name!r}]", ndim=2)]
        r = combine([f[0] for f in fits], [f[1] for f in fits], level)
        frames.append(pd.DataFrame({"term": terms, "source": name, "estimate": r["estimate"], "low": r["low"],
                                    "high": r["high"]}))
    return pd.concat(frames, ignore_index=True)


def summary_table(values, synthetic: dict, statistics=("mean", "90th pct"), B: int = 500, seed=0,
                  level: float = 0.95) -> "pd.DataFrame":
    """Summaries of the sensitive variable (mean, 90th percentile) on the data and each synthesizer.

    The data's estimate is its value on the data and its interval the central ``level`` of B
    bootstrap resamples; a synthesizer's estimate is the median over its m datasets and its interval
    their central ``level`` (:func:`ppmlib.utility.long_table`).

    Parameters
    ----------
    values : array_like, shape (n,)
        The confidential variable, in the units of the synthetic values.
    synthetic, B, seed
        Each synthesizer's (m, n) datasets, the data's bootstrap resamples and their seed, as for
        :func:`ppmlib.utility.long_table`.
    statistics : sequence of str
        Keys of ``ppmlib.utility.STATISTICS``: "15th pct", "90th pct", "mean", "median".
    level : float
        Coverage of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per (statistic, source): estimate, low, high.
    """
    import pandas as pd

    from .utility import STATISTICS, long_table

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
