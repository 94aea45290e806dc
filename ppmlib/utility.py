"""Utility of synthetic data: summary statistics with 95% intervals.

The statistics are those of the 2025 paper (section 2.2 and its Appendix B table): the 15th and
90th percentiles, the mean and the median.

A synthesizer's distribution of a statistic is its spread over the m synthetic datasets (one per
draw); the confidential data's is its spread over bootstrap resamples. Intervals are the 2.5th and
97.5th percentiles of those distributions.
"""
from __future__ import annotations

__all__ = ["STATISTICS", "statistics", "bootstrap", "long_table", "intervals", "centre", "tail_distortion",
           "standardized_gap"]

import numpy as np
import pandas as pd

from . import _checks

STATISTICS = {
    "15th pct": lambda d: np.percentile(d, 15, axis=1),
    "90th pct": lambda d: np.percentile(d, 90, axis=1),
    "mean": lambda d: d.mean(axis=1),
    "median": lambda d: np.median(d, axis=1),
}


def statistics(datasets) -> pd.DataFrame:
    """One row per dataset of an (m, n) array: 15th and 90th percentiles, mean, median.

    Parameters
    ----------
    datasets : array_like, shape (m, n) or (n,)
        m datasets of n values (one dataset may be given as a 1-D array).

    Returns
    -------
    pandas.DataFrame
        m rows, one column per entry of ``STATISTICS``.

    See Also
    --------
    long_table : the same statistics for the data's bootstrap and several synthesizers.

    Examples
    --------
    >>> statistics([[1, 2, 3, 4], [2, 4, 6, 8]])
       15th pct  90th pct  mean  median
    0      1.45       3.7   2.5     2.5
    1      2.90       7.4   5.0     5.0
    """
    d = _checks.finite_array(datasets, "datasets")
    if d.ndim == 1:
        d = d[None, :]
    if d.ndim != 2:
        raise ValueError(f"datasets must be (m, n), got shape {d.shape}")
    return pd.DataFrame({name: stat(d) for name, stat in STATISTICS.items()})


def bootstrap(y, B: int, seed) -> np.ndarray:
    """B bootstrap resamples of y (n,), shape (B, n); ``seed`` makes them reproducible.

    Parameters
    ----------
    y : array_like, shape (n,)
        The data.
    B : int
        The number of resamples.
    seed : int or numpy.random.Generator
        The randomness of the resampling.

    Returns
    -------
    ndarray, shape (B, n)
    """
    y = _checks.finite_array(y, "y", ndim=1)
    B = _checks.integer(B, "B", low=1)
    rng = np.random.default_rng(seed)
    return y[rng.integers(0, y.size, size=(B, y.size))]


def long_table(y, synthetic: dict, B: int = 500, seed=0) -> pd.DataFrame:
    """Statistics of the data's bootstrap ("Data") and of each synthesizer's datasets, long format:
    columns source, statistic, value. ``synthetic`` maps a name to an (m, n) array.

    Parameters
    ----------
    y : array_like, shape (n,)
        The confidential data.
    synthetic : dict of str to ndarray, shape (m, n)
        Each synthesizer's m synthetic datasets.
    B : int
        Number of bootstrap resamples of ``y``.
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    pandas.DataFrame
        (B + sum of the m's) x 4 rows; columns source, statistic, value.

    See Also
    --------
    intervals, centre : summaries of this table (``ppmlib.plots.utility_violins`` draws it).

    Examples
    --------
    >>> y = np.random.default_rng(1).poisson(100, 1000)
    >>> lw = np.random.default_rng(2).poisson(100, (20, 1000))     # stand-in for 20 synthetic datasets
    >>> long = long_table(y, {"LW": lw}, B=50, seed=0)
    >>> long.shape
    (280, 3)
    >>> intervals(long).loc["mean"].tolist()
    ['99.5–100.5', '99.6–100.6']
    """
    frames = [statistics(bootstrap(y, B, seed)).assign(source="Data")]
    frames += [statistics(d).assign(source=name) for name, d in synthetic.items()]
    wide = pd.concat(frames, ignore_index=True)
    return wide.melt(id_vars="source", var_name="statistic", value_name="value")


def intervals(long: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Table of 'low-high' intervals per statistic (rows) and source (columns).

    ``long`` is a :func:`long_table`; the interval holds the central ``level`` of each distribution
    (2.5th to 97.5th percentile at 0.95).

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`long_table` (columns source, statistic, value).
    level : float
        The central probability of each interval, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Strings 'low-high', rows statistic, columns source.

    See Also
    --------
    centre : the medians of the same distributions.
    """
    level = _checks.real(level, "level", low=0, high=1, low_open=True, high_open=True)
    tail = 50 * (1 - level)
    grouped = long.groupby(["statistic", "source"], sort=False)["value"]
    lo, hi = grouped.quantile(tail / 100), grouped.quantile(1 - tail / 100)
    text = lo.map("{:.1f}".format) + "–" + hi.map("{:.1f}".format)
    return text.unstack("source")


def centre(long: pd.DataFrame) -> pd.DataFrame:
    """Median of each statistic's distribution per source (rows statistic, columns source).

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`long_table` (columns source, statistic, value).

    Returns
    -------
    pandas.DataFrame

    See Also
    --------
    intervals, tail_distortion
    """
    return long.groupby(["statistic", "source"], sort=False)["value"].median().unstack("source")


def tail_distortion(long: pd.DataFrame, source: str) -> float:
    """How far a synthesizer moves the tails: abs(15th pct gap) + abs(90th pct gap) to the data, using the
    medians of the distributions. 0 means the tails are reproduced.

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`long_table` (columns source, statistic, value).
    source : str
        The synthesizer's name in ``long``.

    Returns
    -------
    float
    """
    c = centre(long)
    if source not in c.columns:
        raise ValueError(f"no source {source!r}; have {list(c.columns)}")
    return float(sum(abs(c.loc[s, source] - c.loc[s, "Data"]) for s in ("15th pct", "90th pct")))


# --- re-weighting chapters (reweighting.md, salary.md) ---------------------------------------

def standardized_gap(long: pd.DataFrame, source: str, statistics=tuple(STATISTICS)) -> float:
    """How far a synthesizer's datasets are from the data, over several statistics.

    For each statistic: the root mean squared distance between its value in the synthesizer's m
    datasets and its value in the data (the median of the bootstrap distribution), divided by the
    sd of the data's bootstrap distribution; then summed over ``statistics``. Bias and spread both
    count: a synthesizer centred on the data but much more variable is also far. Smaller is better;
    a synthesizer that drew fresh samples from the data's own distribution would score about
    sqrt(2) per statistic.

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`long_table` (columns source, statistic, value).
    source : str
        The synthesizer's name in ``long``; "data" is the reference.
    statistics : sequence of str
        The statistics summed over.

    Returns
    -------
    float
    """
    data = long[long["source"] == "Data"].groupby("statistic")["value"]
    centre_, spread = data.median(), data.std()
    mine = long[long["source"] == source]
    if mine.empty:
        raise ValueError(f"no source {source!r}; have {sorted(long['source'].unique())}")
    total = 0.0
    for stat in statistics:
        values = mine.loc[mine["statistic"] == stat, "value"].to_numpy(float)
        total += float(np.sqrt(np.mean((values - centre_[stat]) ** 2)) / spread[stat])
    return total
