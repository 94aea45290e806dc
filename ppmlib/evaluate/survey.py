"""Weighted cell estimates of a survey, with design-based standard errors, and their combination over
m synthetic datasets.

What an agency publishes from a weighted survey is a table: for each cell c (a public grouping,
such as sex x race x insurance) the weighted total and the Hajek mean of an outcome y,

    N_c = sum_{i in c} w_i,   T_c = sum_{i in c} w_i y_i,   mu_c = T_c / N_c,

each with a standard error that reflects the design (strata h, primary sampling units j within
them). The errors are Taylor-linearised, as R's ``survey`` package computes them by default: each
estimate is written as a sum of record scores z_i (w_i y_i 1[i in c] for the total,
w_i 1[i in c] (y_i - mu_c) / N_c for the mean: a domain estimate, records outside the cell score 0),
the scores are summed within each PSU, and the PSUs are treated as drawn with replacement within
their stratum:

    var = sum_h n_h / (n_h - 1) sum_j (z_hj - zbar_h)^2,

with n_h the PSUs of stratum h, z_hj the PSU's score total and zbar_h their mean. Without PSUs
each record is its own PSU; without strata the sample is one stratum. A stratum with a single PSU
has no variance estimate and is refused (``survey``'s ``lonely.psu = "fail"``). The test checks
every number against ``survey``'s ``svyby(svymean)`` and ``svytotal`` to 1e-8
(``tests/oracles/survey_oracle.R``).

On m synthetic datasets the same table is computed on each, as if it were the real sample, and
the m tables are combined by the rules for partially synthetic data (Reiter 2003,
:func:`ppmlib.evaluate.utility.combine`): the mean of the estimates, and variance ubar + b / m.

Why no survey package: ``samplics`` 0.6.1 needs a newer polars than the 1.36.1 that opendp (the
AIM/MST baselines) pins, and its successor ``svy`` needs polars >= 2. The one release that installs
beside the lock, ``samplics`` 0.5.1, declares itself deprecated and unmaintained on import (and
brings statsmodels, formulaic and patsy). The estimator above is short, and the oracle test pins
it to ``survey``'s numbers.
"""
from __future__ import annotations

__all__ = ["STATISTICS", "weighted_table", "combined_table", "release_tables"]

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.errors import DataRefused
from ppmlib.evaluate.utility import combine

#: The statistics of a weighted table, in its column order: each has an estimate and a ``<name>_se`` column.
STATISTICS = ("mean", "total", "weight_total")


def _labels(values, n: int, name: str) -> np.ndarray:
    """Integer codes (n,) of a design column (strata or PSUs), refused if missing or of the wrong length."""
    labels = pd.Series(np.asarray(values, dtype=object).ravel())
    if len(labels) != n:
        raise DataRefused(f"{name} has {len(labels)} entries for {n} records")
    if labels.isna().any():
        raise DataRefused(f"{name} has missing values, first at record {int(np.argmax(labels.isna().to_numpy()))}")
    return pd.factorize(labels, sort=True)[0]


def _cells(cells, n: int) -> tuple[np.ndarray, pd.Index]:
    """Codes (n,) and the sorted cell labels (one level per column for several cell columns)."""
    if isinstance(cells, pd.DataFrame):
        if cells.isna().to_numpy().any():
            raise DataRefused("cells has missing values")
        index = pd.MultiIndex.from_frame(cells)
        codes, uniques = pd.factorize(index, sort=True)
        return codes, pd.MultiIndex.from_tuples(list(uniques), names=list(cells.columns))
    series = pd.Series(cells)
    if series.isna().any():
        raise DataRefused(f"cells has missing values, first at record {int(np.argmax(series.isna()))}")
    codes, uniques = pd.factorize(series, sort=True)
    return codes, pd.Index(uniques, name=getattr(cells, "name", None) or "cell")


def _psu_totals(scores: np.ndarray, strata: np.ndarray, psu: np.ndarray) -> np.ndarray:
    """Variance sum_h n_h/(n_h-1) sum_j (z_hj - zbar_h)^2 of each column of scores (n, k): shape (k,)."""
    keys, unit = np.unique(strata * (psu.max() + 1) + psu, return_inverse=True)   # one code per (stratum, PSU)
    totals = np.zeros((len(keys), scores.shape[1]))
    np.add.at(totals, unit.ravel(), scores)
    stratum_of_unit = keys // (psu.max() + 1)
    sizes = np.bincount(stratum_of_unit)
    if (sizes[np.unique(stratum_of_unit)] < 2).any():
        lonely = int(np.unique(stratum_of_unit)[sizes[np.unique(stratum_of_unit)] < 2][0])
        raise DataRefused(f"stratum {lonely} (in order of the strata's sorted labels) has a single PSU: "
                          "its variance cannot be estimated")
    means = np.zeros((len(sizes), scores.shape[1]))
    np.add.at(means, stratum_of_unit, totals)
    means /= np.maximum(sizes, 1)[:, None]
    deviations = (totals - means[stratum_of_unit]) ** 2
    scale = sizes[stratum_of_unit] / (sizes[stratum_of_unit] - 1.0)
    return (scale[:, None] * deviations).sum(axis=0)


def weighted_table(y, weights, cells, *, strata=None, psu=None) -> pd.DataFrame:
    """Weighted totals and Hajek means of ``y`` by cell, with Taylor-linearised standard errors.

    Parameters
    ----------
    y : array_like, shape (n,)
        The outcome.
    weights : array_like, shape (n,)
        Sampling weights, positive and finite.
    cells : array_like, shape (n,), or pandas.DataFrame with n rows
        Each record's cell: one label, or one column per grouping variable (their crossing).
    strata, psu : array_like, shape (n,), optional
        Stratum and primary-sampling-unit labels (a PSU label may repeat across strata: units are
        the pairs). None: one stratum; each record its own PSU.

    Returns
    -------
    pandas.DataFrame
        One row per cell present in the data (sorted), indexed by the cell labels; columns
        records, mean, mean_se, total, total_se, weight_total, weight_total_se.

    Raises
    ------
    ppmlib.errors.DataRefused
        Missing or non-finite values, a non-positive weight, mismatched lengths, or a stratum with a
        single PSU.

    Examples
    --------
    >>> weighted_table([1.0, 3.0, 2.0, 4.0], [1.0, 1.0, 2.0, 2.0], ["a", "a", "b", "b"])["mean"].tolist()
    [2.0, 3.0]
    """
    y = _finite(y, "y")
    n = y.size
    w = _finite(weights, "weights")
    if w.size != n:
        raise DataRefused(f"weights has {w.size} entries for {n} records")
    if (w <= 0).any():
        raise DataRefused(f"weights must be positive; record {int(np.argmax(w <= 0))} is not")
    codes, labels = _cells(cells, n)
    if codes.size != n:
        raise DataRefused(f"cells has {codes.size} entries for {n} records")
    strata = np.zeros(n, int) if strata is None else _labels(strata, n, "strata")
    psu = np.arange(n) if psu is None else _labels(psu, n, "psu")
    member = np.zeros((n, len(labels)))
    member[np.arange(n), codes] = 1.0
    weight_total = w @ member
    total = (w * y) @ member
    mean = total / weight_total
    scores = np.hstack([member * (w * y)[:, None],
                        member * w[:, None],
                        member * w[:, None] * (y[:, None] - mean[None, :]) / weight_total[None, :]])
    var = _psu_totals(scores, strata, psu).reshape(3, len(labels))
    return pd.DataFrame({"records": np.bincount(codes, minlength=len(labels)),
                         "mean": mean, "mean_se": np.sqrt(var[2]),
                         "total": total, "total_se": np.sqrt(var[0]),
                         "weight_total": weight_total, "weight_total_se": np.sqrt(var[1])}, index=labels)


def _finite(values, name: str) -> np.ndarray:
    try:
        return _checks.finite_array(values, name, ndim=1)
    except (TypeError, ValueError) as err:
        raise DataRefused(str(err)) from err


def combined_table(tables, level: float = 0.95) -> pd.DataFrame:
    """m weighted tables of synthetic datasets combined by the partially-synthetic rules (Reiter 2003).

    Parameters
    ----------
    tables : sequence of pandas.DataFrame
        m >= 2 outputs of :func:`weighted_table`, one per synthetic dataset. A cell missing from
        some datasets is combined over the datasets that hold it (at least 2; otherwise dropped).
    level : float
        Coverage of the intervals.

    Returns
    -------
    pandas.DataFrame
        Indexed by cell; for each statistic s of :data:`STATISTICS`: s (the mean of the m
        estimates), ``s_se`` (sqrt(ubar + b / m)), ``s_lower`` and ``s_upper`` (t intervals with
        Reiter's degrees of freedom); and ``datasets``, how many datasets held the cell.
    """
    tables = list(tables)
    if len(tables) < 2 or not all(isinstance(t, pd.DataFrame) for t in tables):
        raise TypeError("tables must be a sequence of m >= 2 DataFrames from weighted_table")
    stacked = pd.concat(tables, keys=range(len(tables)), names=["dataset"])
    cell_levels = list(range(1, stacked.index.nlevels))
    keys, rows = [], []
    for cell, part in stacked.groupby(level=cell_levels, sort=True):
        if len(part) < 2:
            continue
        row = {"datasets": len(part)}
        for s in STATISTICS:
            out = combine(part[s].to_numpy(), part[f"{s}_se"].to_numpy() ** 2, level)
            row.update({s: out["estimate"], f"{s}_se": float(np.sqrt(out["T"])),
                        f"{s}_lower": out["lower"], f"{s}_upper": out["upper"]})
        keys.append(cell if len(cell_levels) > 1 else cell[0])
        rows.append(row)
    names = tables[0].index.names
    index = pd.MultiIndex.from_tuples(keys, names=names) if len(cell_levels) > 1 else pd.Index(keys, name=names[0])
    return pd.DataFrame(rows, index=index)


def release_tables(synthesis, data: pd.DataFrame, cells, *, strata: str | None = None, psu: str | None = None,
                   level: float = 0.95) -> dict:
    """What a survey release keeps: the weighted table of the confidential data beside the synthetic one,
    and what synthesizing the weights changed. For the data holder's report, not for publication.

    Parameters
    ----------
    synthesis : ppmlib.mechanism.survey.SurveySynthesis
        The release (its m synthetic datasets, its bounds).
    data : pandas.DataFrame
        The confidential data it was made from.
    cells : sequence of str
        The cell columns.
    strata, psu : str, optional
        The design columns.
    level : float
        Coverage of the synthetic intervals.

    Returns
    -------
    dict
        "table": per cell, the confidential mean and SE, the synthetic (combined) mean, SE and interval,
        and both weight totals; "weights": the weights' quantiles, confidential and synthetic;
        "epsilon": epsilon per dataset from the outcome's term alone (same record weights) and
        from the pair (the released, joint one).
    """
    cells = list(cells)
    design = {"strata": data[strata] if strata else None, "psu": data[psu] if psu else None}
    public = synthesis.public
    confidential = weighted_table(data[synthesis.outcome], data[synthesis.weight], data[cells], **design)
    tables = [weighted_table(synthesis.synthetic_outcome[l], synthesis.synthetic_weights[l], public[cells],
                             strata=public[strata] if strata else None, psu=public[psu] if psu else None)
              for l in range(synthesis.m)]
    combined = combined_table(tables, level) if synthesis.m >= 2 else tables[0].assign(
        mean_lower=np.nan, mean_upper=np.nan, weight_total_lower=np.nan, weight_total_upper=np.nan)
    combined = combined.reindex(confidential.index)
    table = pd.DataFrame({
        "records": confidential["records"], "mean": confidential["mean"], "mean SE": confidential["mean_se"],
        "synthetic mean": combined["mean"], "synthetic SE": combined["mean_se"],
        "synthetic lower": combined["mean_lower"], "synthetic upper": combined["mean_upper"],
        "weight total": confidential["weight_total"], "synthetic weight total": combined["weight_total"]})
    probs = [0.01, 0.25, 0.5, 0.75, 0.99]
    weights = pd.DataFrame({"confidential": np.quantile(data[synthesis.weight].to_numpy(float), probs),
                            "synthetic": np.quantile(synthesis.synthetic_weights, probs)},
                           index=[f"{p:.0%} quantile" for p in probs])
    outcome_alone = 2 * float(synthesis.bounds.conditional[:, 0].max())
    epsilon = {"outcome's term alone, same alpha": outcome_alone, "outcome and weight (released)": synthesis.epsilon}
    return {"table": table, "weights": weights, "epsilon": epsilon}
