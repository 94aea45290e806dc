"""Utility of synthetic data: summary statistics with 95% intervals.

The statistics are those of the 2025 paper (section 2.2 and its Appendix B table): the 15th and
90th percentiles, the mean and the median.

A synthesizer's distribution of a statistic is its spread over the m synthetic datasets (one per
draw); the confidential data's is its spread over bootstrap resamples. Intervals are the 2.5th and
97.5th percentiles of those distributions.
"""
from __future__ import annotations

__all__ = ["STATISTICS", "statistics", "bootstrap", "long_table", "intervals", "interval_widths", "centre", "tail_distortion",
           "standardized_gap",
           "PMSE", "pmse", "ks_distance", "cell_ks", "cell_fit", "ols", "combine", "interval_overlap", "Estimand", "mean_of", "quantile_of", "ols_of",
           "ci_overlap"]

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.datasets.design import is_categorical
from ppmlib.errors import BadArgument

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
        raise BadArgument(f"datasets must be (m, n), got shape {d.shape}")
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
    lo, hi = _interval_ends(long, level)
    text = lo.map("{:.1f}".format) + "–" + hi.map("{:.1f}".format)
    return text.unstack("source")


def interval_widths(long: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Width of the central ``level`` interval of each statistic's distribution (rows) per source
    (columns): how far the m datasets spread, as numbers (:func:`intervals` gives the ends as text).

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`long_table` (columns source, statistic, value), or any table with those columns.
    level : float
        The central probability of each interval, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Rows statistic, columns source.
    """
    lo, hi = _interval_ends(long, level)
    return (hi - lo).unstack("source")


def _interval_ends(long: pd.DataFrame, level: float):
    """The central ``level`` interval's ends per (statistic, source), as two Series."""
    level = _checks.real(level, "level", low=0, high=1, low_open=True, high_open=True)
    tail = (1 - level) / 2
    grouped = long.groupby(["statistic", "source"], sort=False)["value"]
    return grouped.quantile(tail), grouped.quantile(1 - tail)


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
        raise BadArgument(f"no source {source!r}; have {list(c.columns)}")
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
        raise BadArgument(f"no source {source!r}; have {sorted(long['source'].unique())}")
    total = 0.0
    for stat in statistics:
        values = mine.loc[mine["statistic"] == stat, "value"].to_numpy(float)
        total += float(np.sqrt(np.mean((values - centre_[stat]) ** 2)) / spread[stat])
    return total


# --- the measures agencies compare by (pMSE, interval overlap, combining rules) -------------------



@dataclass(frozen=True)
class PMSE:
    """Propensity-score utility of m synthetic datasets against the confidential one.

    Attributes
    ----------
    pmse : ndarray, shape (m,)
        pMSE of each synthetic dataset.
    null : ndarray, shape (m,)
        Its expectation when the synthetic data come from the confidential data's own distribution:
        the closed form for the logit model, the mean over label permutations for CART.
    method : str
        "logit" or "cart".
    parameters : int
        k, the logit model's number of parameters (intercept included); 0 for CART.
    """
    pmse: np.ndarray
    null: np.ndarray
    method: str
    parameters: int

    @property
    def s_pmse(self) -> np.ndarray:
        """S_pMSE = pMSE / its null expectation, per dataset (about 1: as good as a fresh sample)."""
        return self.pmse / self.null

    def summary(self) -> dict:
        """The averages over the m datasets, as synthpop reports them: pMSE and S_pMSE.

        Returns
        -------
        dict
            {"pMSE": float, "S_pMSE": float}.
        """
        return {"pMSE": float(self.pmse.mean()), "S_pMSE": float(self.s_pmse.mean())}


def _as_frames(synthetic, name: str = "synthetic") -> list:
    frames = [synthetic] if isinstance(synthetic, pd.DataFrame) else list(synthetic)
    if not frames or not all(isinstance(f, pd.DataFrame) for f in frames):
        raise TypeError(f"{name} must be a DataFrame or a non-empty list of DataFrames")
    return frames


def _propensity_features(stacked: pd.DataFrame, interactions: bool) -> np.ndarray:
    """Main effects (one-hot categoricals with a reference level, standardized numerics), and with
    ``interactions`` every product of two columns from different variables (synthpop's maxorder = 1)."""
    blocks = []
    for col in stacked.columns:
        values = stacked[col]
        if is_categorical(values):
            dummies = pd.get_dummies(values.astype(str), drop_first=True).to_numpy(float)
            blocks.append(dummies[:, dummies.std(axis=0) > 0])   # a level only one side has still counts
        else:
            x = values.to_numpy(float)
            blocks.append(((x - x.mean()) / (x.std() or 1.0))[:, None])
    columns = [b for b in blocks if b.shape[1]]
    if interactions:
        columns += [(a[:, :, None] * b[:, None, :]).reshape(len(stacked), -1)
                    for i, a in enumerate(columns) for b in columns[i + 1:]]
    return np.hstack(columns) if columns else np.zeros((len(stacked), 0))


def _logit_scores(features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits
    # one BLAS thread: the problem is tiny, and on a shared machine a pool of threads waiting for
    # each other made each fit 100 times slower
    with warnings.catch_warnings(), threadpool_limits(1):
        # a separable stack (a very poor synthetic set) drives the coefficients off: p-hat is still right
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-10, max_iter=200).fit(features, labels)
    return model.predict_proba(features)[:, 1]


def _cart_scores(features: np.ndarray, labels: np.ndarray, min_leaf: int, seed: int) -> np.ndarray:
    from sklearn.tree import DecisionTreeClassifier
    tree = DecisionTreeClassifier(min_samples_leaf=min_leaf, random_state=seed).fit(features, labels)
    return tree.predict_proba(features)[:, 1]


def pmse(confidential: pd.DataFrame, synthetic, *, method: str = "logit", interactions: bool = False,
         columns=None, permutations: int = 20, min_leaf: int = 100, seed=0) -> PMSE:
    """pMSE and S_pMSE of synthetic data (Snoke, Raab, Nowok, Dibben and Slavkovic 2018; synthpop's utility.gen).

    Stack the confidential data (n1 rows, label 0) on a synthetic dataset (n2 rows, label 1),
    N = n1 + n2, c = n2 / N; fit a propensity model for the label and average the squared distance
    of its fitted probabilities to c: pMSE = (1/N) sum_i (p_i - c)^2. 0 means the model cannot tell
    the two apart. S_pMSE = pMSE / null, where the null is:

    * logit (k parameters, intercept included): (k - 1)(1 - c)^2 c / N, the closed form synthpop
      uses. It is the expectation for synthetic rows drawn from the confidential data's own
      distribution (a resample of them scores about 1); an independent sample from the model that
      generated the confidential data carries sampling noise on both sides and scores about
      1 / (1 - c), 2 at c = 1/2 (``tests/test_utility.py`` checks both).
    * CART: the mean pMSE over ``permutations`` random relabellings of the stack, i.e. the level
      of two independent samples from one distribution (a fresh sample scores about 1).

    With m synthetic datasets each is scored alone and :meth:`PMSE.summary` averages them, as
    synthpop does.

    Parameters
    ----------
    confidential : pandas.DataFrame
        The confidential data; non-numeric (and bool) columns are categorical.
    synthetic : DataFrame or list of DataFrame
        One or m synthetic datasets with the same columns.
    method : {"logit", "cart"}
        Logistic regression on the main effects (one-hot categoricals with a reference level,
        standardized numeric columns), or a classification tree (scikit-learn; leaves of at least
        ``min_leaf`` rows).
    interactions : bool
        Logit only: add every product of two columns from different variables.
    columns : list of str, optional
        The variables to compare (default: all of the confidential data's).
    permutations : int
        CART only: relabellings behind the null expectation.
    min_leaf : int
        CART only: the smallest leaf. synthpop grows rpart trees with leaves of 5 and prunes them
        (cp = 0.001); scikit-learn's pruning is not the same, and an unpruned tree with leaves of 5
        fits the noise of the stack so well that its permutation null hides a real shift (S_pMSE
        about 1.1 for a shift of half an sd at N = 2000, against about 3.7 with leaves of 100).
    seed : int
        Seeds the trees and the permutations.

    Returns
    -------
    PMSE
        Per-dataset pMSE and null expectation; ``.s_pmse`` and ``.summary()``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> data = pd.DataFrame({"x": rng.normal(size=500)})
    >>> fresh = pd.DataFrame({"x": rng.normal(size=500)})          # another sample of the same distribution
    >>> shifted = pd.DataFrame({"x": rng.normal(0.5, 1, size=500)})
    >>> round(float(pmse(data, fresh).s_pmse[0]), 2), round(float(pmse(data, shifted).s_pmse[0]), 1)
    (0.94, 151.3)
    """
    if not isinstance(confidential, pd.DataFrame):
        raise TypeError(f"confidential must be a DataFrame, got {type(confidential).__name__}")
    frames = _as_frames(synthetic)
    if method not in ("logit", "cart"):
        raise BadArgument(f"method must be 'logit' or 'cart', got {method!r}")
    columns = list(confidential.columns if columns is None else columns)
    for j, frame in enumerate(frames):
        missing = [c for c in columns if c not in frame.columns or c not in confidential.columns]
        if missing:
            raise BadArgument(f"synthetic dataset {j} or the confidential data lacks columns {missing}")
    permutations = _checks.integer(permutations, "permutations", low=1)
    min_leaf = _checks.integer(min_leaf, "min_leaf", low=1)
    rng = np.random.default_rng(_checks.seed(seed))
    scores, nulls, k = [], [], 0
    for frame in frames:
        stacked = pd.concat([confidential[columns], frame[columns]], ignore_index=True)
        labels = np.r_[np.zeros(len(confidential)), np.ones(len(frame))]
        N, c = labels.size, len(frame) / labels.size
        features = _propensity_features(stacked, interactions)
        if method == "logit":
            k = features.shape[1] + 1
            scores.append(np.mean((_logit_scores(features, labels) - c) ** 2))
            nulls.append((k - 1) * (1 - c) ** 2 * c / N)
        else:
            tree_seed = int(rng.integers(2**31))
            scores.append(np.mean((_cart_scores(features, labels, min_leaf, tree_seed) - c) ** 2))
            nulls.append(np.mean([np.mean((_cart_scores(features, rng.permutation(labels), min_leaf, tree_seed) - c) ** 2)
                                  for _ in range(permutations)]))
    return PMSE(np.array(scores), np.array(nulls), method, k)


def ks_distance(a, b) -> float:
    """The two-sample Kolmogorov-Smirnov distance ``sup_t |F_a(t) - F_b(t)|`` of two samples' empirical
    distribution functions (scipy's ``ks_2samp`` statistic).

    Parameters
    ----------
    a, b : array_like, 1-d, not empty
        The two samples.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> ks_distance([1.0, 2.0], [3.0, 4.0])
    1.0
    """
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    if a.size == 0 or b.size == 0:
        raise BadArgument("ks_distance needs two non-empty samples")
    points = np.concatenate([a, b])
    # both empirical CDFs at every observed value (right-continuous: ties counted in full)
    gap = np.searchsorted(a, points, side="right") / a.size - np.searchsorted(b, points, side="right") / b.size
    return float(np.max(np.abs(gap)))


def cell_ks(confidential: pd.DataFrame, synthetic, keys, column: str, *, min_records: int = 20) -> dict:
    """A measure that sees shape: the mean Kolmogorov-Smirnov distance between the confidential and
    the synthetic distribution of ``column`` within each cell of the ``keys``.

    A cell is a combination of the keys' levels with at least ``min_records`` confidential
    records (smaller cells are left out: their empirical distribution is mostly noise). Within
    each such cell and each synthetic dataset, the distance is :func:`ks_distance` of the two
    samples of ``column`` (1 when the synthetic dataset has no record in the cell); the measure is
    the mean over the cells (each cell counts once) of the mean over the datasets. 0 is the same
    distribution in every cell; a second mode or a heavy tail the synthesizer misses raises it,
    where a logistic propensity score (S_pMSE) hardly moves.

    Parameters
    ----------
    confidential : pandas.DataFrame
        The confidential records, with the keys and ``column``.
    synthetic : pandas.DataFrame or list of DataFrame
        The m synthetic datasets, with the same columns.
    keys : list of str
        The cell's defining columns (categorical); an empty list is the whole file as one cell.
    column : str
        The column whose distribution is compared.
    min_records : int
        Confidential records a cell needs to count.

    Returns
    -------
    dict
        ``KS per cell`` (float, NaN when no cell has enough records) and ``cells`` (how many counted).

    Raises
    ------
    ppmlib.errors.BadArgument
        A key or the column missing from a frame, or min_records < 1.
    """
    frames = _as_frames(synthetic)
    keys = list(keys)
    min_records = _checks.integer(min_records, "min_records", low=1)
    for name, frame in [("confidential", confidential), *((f"synthetic dataset {i}", f) for i, f in enumerate(frames))]:
        missing = [c for c in [*keys, column] if c not in frame.columns]
        if missing:
            raise BadArgument(f"the {name} data lack columns {missing}")

    def by_cell(frame):
        if not keys:
            return {(): frame[column].to_numpy(float)}
        return {k if isinstance(k, tuple) else (k,): g[column].to_numpy(float)
                for k, g in frame.groupby([frame[c].astype(str) for c in keys], sort=True)}

    data = {k: v for k, v in by_cell(confidential).items() if v.size >= min_records}
    if not data:
        return {"KS per cell": float("nan"), "cells": 0}
    per_frame = [by_cell(f) for f in frames]
    distances = [np.mean([ks_distance(values, cells[k]) if k in cells else 1.0 for cells in per_frame])
                 for k, values in data.items()]
    return {"KS per cell": float(np.mean(distances)), "cells": len(data)}


def cell_fit(confidential: pd.DataFrame, synthetic, keys, column: str, *, largest: int = 4,
             quantiles=(0.1, 0.5, 0.9)) -> pd.DataFrame:
    """Where the model misses: the data's and the synthetic distribution of ``column`` in the
    ``largest`` cells of the keys, side by side (for the data holder's report, not the release).

    One row per cell, largest first: the cell's levels, its number of confidential records, the
    data's and the synthetic quantiles of ``column`` (the m synthetic datasets pooled) and the
    cell's Kolmogorov-Smirnov distance (:func:`ks_distance`, the mean over the datasets).

    Parameters
    ----------
    confidential : pandas.DataFrame
        The confidential records, with the keys and ``column``.
    synthetic : pandas.DataFrame or list of DataFrame
        The m synthetic datasets.
    keys : list of str
        The cells' defining columns (categorical), at least one.
    column : str
        The compared column.
    largest : int
        How many cells, by their number of confidential records.
    quantiles : sequence of float
        The quantile levels in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Columns ``cell``, ``records``, ``data q<level>`` and ``synthetic q<level>`` per level, ``KS``.
    """
    frames = _as_frames(synthetic)
    keys = list(keys)
    if not keys:
        raise BadArgument("cell_fit needs at least one key")
    largest = _checks.integer(largest, "largest", low=1)
    levels = [_checks.real(q, "a quantile level", low=0, high=1, low_open=True, high_open=True) for q in quantiles]

    def groups(frame):
        return {k if isinstance(k, tuple) else (k,): g[column].to_numpy(float)
                for k, g in frame.groupby([frame[c].astype(str) for c in keys], sort=True)}

    data = groups(confidential)
    per_frame = [groups(f) for f in frames]
    rows = []
    for cell, values in sorted(data.items(), key=lambda kv: (-kv[1].size, kv[0]))[:largest]:
        pooled = np.concatenate([g[cell] for g in per_frame if cell in g] or [np.zeros(0)])
        row = {"cell": ", ".join(f"{k}={v}" for k, v in zip(keys, cell)), "records": int(values.size)}
        for q in levels:
            row[f"data q{q:g}"] = float(np.quantile(values, q))
            row[f"synthetic q{q:g}"] = float(np.quantile(pooled, q)) if pooled.size else float("nan")
        row["KS"] = float(np.mean([ks_distance(values, g[cell]) if cell in g else 1.0 for g in per_frame]))
        rows.append(row)
    return pd.DataFrame(rows)


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
        raise BadArgument(f"X must have one row per value of y ({y.size}) and more rows than columns, got {X.shape}")
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ beta
    sigma2 = residual @ residual / (n - p)
    # pinv: a synthetic dataset can leave a level of a categorical predictor empty (a zero column)
    return beta, sigma2 * np.diag(np.linalg.pinv(X.T @ X))


def combine(estimates, variances, level: float = 0.95) -> dict:
    """Reiter's (2003) combining rules for m partially synthetic datasets.

    From the m estimates q_j and their variances v_j (each computed on one synthetic dataset as if
    it were the real data): q = mean q_j; b = sample variance of the q_j (m - 1 denominator);
    v = mean v_j; the variance of q is T = v + b / m, and intervals use a t distribution with
    (m - 1)(1 + v / (b / m))^2 degrees of freedom (with b = 0, the normal).

    Parameters
    ----------
    estimates, variances : array_like, shape (m,) or (m, p)
        One row per synthetic dataset (m >= 2), one column per estimand.
    level : float
        Coverage of the interval.

    Returns
    -------
    dict
        estimate, b, v, T, df, lower, upper (each a float, or an array of p).

    Examples
    --------
    >>> out = combine([1.0, 2.0, 3.0], [0.5, 0.5, 0.5])
    >>> out["estimate"], out["b"], out["T"], out["df"]
    (2.0, 1.0, 0.8333333333333333, 12.5)
    """
    from scipy import stats
    q = _checks.finite_array(estimates, "estimates")
    v = _checks.finite_array(variances, "variances")
    if q.shape != v.shape:
        raise BadArgument(f"estimates {q.shape} and variances {v.shape} must have the same shape")
    if q.shape[0] < 2:
        raise BadArgument(f"the combining rules need m >= 2 synthetic datasets, got {q.shape[0]}")
    if (v < 0).any():
        raise BadArgument(f"variances must be non-negative; found {v[v < 0][0]:g}")
    level = _checks.real(level, "level", low=0, high=1, low_open=True, high_open=True)
    m = q.shape[0]
    q_bar, b, v_bar = q.mean(axis=0), q.var(axis=0, ddof=1), v.mean(axis=0)
    T = v_bar + b / m
    with np.errstate(divide="ignore"):
        df = np.where(b > 0, (m - 1) * (1 + v_bar / np.where(b > 0, b / m, 1.0)) ** 2, np.inf)
    half = stats.t.ppf(0.5 + level / 2, df) * np.sqrt(T)
    out = {"estimate": q_bar, "b": b, "v": v_bar, "T": T, "df": df, "lower": q_bar - half, "upper": q_bar + half}
    return {key: (float(val) if np.ndim(val) == 0 else val) for key, val in out.items()}


def interval_overlap(confidential, synthetic) -> float:
    """Karr et al.'s (2006) overlap of two intervals, 1 when they coincide, 0 when they are disjoint.

    With I the length of the intersection of (L_o, U_o) and (L_s, U_s):
    overlap = (I / (U_o - L_o) + I / (U_s - L_s)) / 2.

    Parameters
    ----------
    confidential, synthetic : pair of float
        (lower, upper) of the confidential and of the synthetic interval.

    Returns
    -------
    float
        The overlap, in [0, 1].

    Examples
    --------
    >>> interval_overlap((0, 2), (1, 3))
    0.5
    >>> interval_overlap((0, 2), (0, 4))
    0.75
    """
    (lo_o, hi_o), (lo_s, hi_s) = (tuple(_checks.finite_array(i, name, ndim=1)) for i, name in
                                  ((confidential, "confidential"), (synthetic, "synthetic")))
    if hi_o <= lo_o or hi_s <= lo_s:
        raise BadArgument(f"intervals must have lower < upper; got {(lo_o, hi_o)} and {(lo_s, hi_s)}")
    inter = max(0.0, min(hi_o, hi_s) - max(lo_o, lo_s))
    return float(0.5 * (inter / (hi_o - lo_o) + inter / (hi_s - lo_s)))


@dataclass(frozen=True)
class Estimand:
    """An analyst's estimand: a function of a DataFrame that returns (names, estimates, variances).

    Build one with :func:`mean_of`, :func:`quantile_of` or :func:`ols_of`.

    Attributes
    ----------
    label : str
        The estimand's name in tables.
    compute : callable
        DataFrame -> (list of names, (p,) estimates, (p,) variances).
    """
    label: str
    compute: object

    def __call__(self, frame: pd.DataFrame):
        return self.compute(frame)


def _column(frame: pd.DataFrame, column: str, transform) -> np.ndarray:
    if column not in frame.columns:
        raise BadArgument(f"no column {column!r}; the data has {list(frame.columns)}")
    values = frame[column].to_numpy(float)
    return transform(values) if transform is not None else values


def mean_of(column: str, transform=None, label: str | None = None) -> Estimand:
    """The mean of a column (after ``transform``, e.g. ``np.exp`` for dollars), variance s^2 / n.

    Parameters
    ----------
    column : str
        The column.
    transform : callable, optional
        Applied to the column's values first.
    label : str, optional
        The name in tables (default "mean <column>").

    Returns
    -------
    Estimand
    """
    def compute(frame):
        x = _column(frame, column, transform)
        return [label or f"mean {column}"], np.array([x.mean()]), np.array([x.var(ddof=1) / x.size])
    return Estimand(label or f"mean {column}", compute)


def quantile_of(column: str, p: float, transform=None, B: int = 200, seed=0, label: str | None = None) -> Estimand:
    """The p-quantile of a column (after ``transform``), its variance from B bootstrap resamples.

    Parameters
    ----------
    column, transform, label
        As for :func:`mean_of`.
    p : float
        The quantile level, in (0, 1).
    B, seed : int
        Bootstrap resamples (:func:`bootstrap`) and their seed.

    Returns
    -------
    Estimand
    """
    p = _checks.real(p, "p", low=0, high=1, low_open=True, high_open=True)
    name = label or f"{100 * p:g}th pct {column}"

    def compute(frame):
        x = _column(frame, column, transform)
        return [name], np.array([np.quantile(x, p)]), np.array([np.quantile(bootstrap(x, B, seed), p, axis=1).var(ddof=1)])
    return Estimand(name, compute)


def ols_of(column: str, predictors, levels: dict | None = None) -> Estimand:
    """The least-squares coefficients of a column on categorical ``predictors`` (one-hot with
    :func:`ppmlib.design_matrix`; ``levels`` fixes the columns across datasets), classical variances
    sigma^2 (X'X)^-1 with sigma^2 = RSS / (n - P) (:func:`ols`).

    Parameters
    ----------
    column : str
        The response column.
    predictors : list of str
        Categorical predictors.
    levels : dict, optional
        Each predictor's levels, so every dataset has the same design columns.

    Returns
    -------
    Estimand
    """
    from ppmlib.datasets.design import design_matrix
    predictors = list(predictors)

    def compute(frame):
        X = design_matrix(frame, predictors, levels=levels)
        beta, variance = ols(_column(frame, column, None), X.to_numpy())
        return [f"beta {c}" for c in X.columns], beta, variance
    return Estimand(f"OLS {column} ~ {' + '.join(predictors)}", compute)


def ci_overlap(confidential: pd.DataFrame, synthetic, estimands, level: float = 0.95) -> pd.DataFrame:
    """Interval overlap of each estimand between the confidential data and m synthetic datasets.

    The confidential interval is estimate +- z sqrt(variance) (the normal quantile z of ``level``);
    the synthetic one combines the m datasets by Reiter's (2003) rules for partially synthetic data
    (:func:`combine`: q = mean of the m estimates, T = v + b / m, a t interval); the overlap is
    :func:`interval_overlap`.

    Parameters
    ----------
    confidential : pandas.DataFrame
    synthetic : list of DataFrame
        m >= 2 synthetic datasets.
    estimands : Estimand or list of Estimand
        :func:`mean_of`, :func:`quantile_of`, :func:`ols_of`.
    level : float
        Coverage of both intervals.

    Returns
    -------
    pandas.DataFrame
        One row per estimate: estimand, confidential estimate, lower, upper, synthetic estimate,
        lower, upper, df, overlap.
    """
    from scipy import stats
    frames = _as_frames(synthetic)
    estimands = [estimands] if isinstance(estimands, Estimand) else list(estimands)
    z = stats.norm.ppf(0.5 + _checks.real(level, "level", low=0, high=1, low_open=True, high_open=True) / 2)
    rows = []
    for estimand in estimands:
        names, q_o, v_o = estimand(confidential)
        per_set = [estimand(frame) for frame in frames]
        combined = combine(np.array([p[1] for p in per_set]), np.array([p[2] for p in per_set]), level)
        for j, name in enumerate(names):
            pick = (lambda key: combined[key][j] if np.ndim(combined[key]) else combined[key])
            lo_o, hi_o = q_o[j] - z * np.sqrt(v_o[j]), q_o[j] + z * np.sqrt(v_o[j])
            rows.append({"estimand": name, "confidential": q_o[j], "conf. lower": lo_o, "conf. upper": hi_o,
                         "synthetic": pick("estimate"), "syn. lower": pick("lower"), "syn. upper": pick("upper"),
                         "df": pick("df"),
                         "overlap": interval_overlap((lo_o, hi_o), (pick("lower"), pick("upper")))})
    return pd.DataFrame(rows)
