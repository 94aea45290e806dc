"""The attribute-risk chapter's study (book/attribute_risk.md): its tables of the most exposed records
and of two releases' agreement, and its figures. The risk itself is :mod:`ppmlib.evaluate.disclosure`'s.
"""
from __future__ import annotations

__all__ = ["most_exposed", "release_agreement", "rank_diagnosis", "risk_by_draws_and_m",
           "risk_of_every_record", "risk_lw_against_unweighted", "SLIDES_TABLES", "records_over_releases",
           "slides_units", "slides_against_ours", "monte_carlo_error"]

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.evaluate.disclosure import AttributeRisk, attribute_risk, risk_inputs
from ppmlib.plots import PALETTE
from ppmlib.errors import BadArgument


def most_exposed(risk: AttributeRisk, k: int = 10, **columns):
    """The ``k`` records with the largest probability of the true value, most exposed first.

    A DataFrame with the 1-based ``row`` of each record, then one column per keyword in
    ``columns`` (each an (n,) array of the records' values, e.g. ``residual=...``), then
    ``P(true)`` and ``rank``. Ties keep the record order (a stable sort).
    """
    import pandas as pd
    n = risk.prob_true.size
    k = _checks.integer(k, "k", low=1)
    order = np.argsort(-risk.prob_true, kind="stable")[:k]
    table = {"row": order + 1}
    for name, values in columns.items():
        values = np.asarray(values)
        if values.shape != (n,):
            raise BadArgument(f"column {name!r} must hold one value per record, shape ({n},); got {values.shape}")
        table[name] = values[order]
    return pd.DataFrame({**table, "P(true)": risk.prob_true[order], "rank": risk.rank_true[order]})


def release_agreement(first: AttributeRisk, second: AttributeRisk, top: int = 10) -> tuple[float, int]:
    """How far two releases agree on which records are exposed: (Spearman correlation of the
    records' P(true) under the two, number of records shared by their ``top`` most exposed)."""
    from scipy import stats
    if first.prob_true.shape != second.prob_true.shape:
        raise BadArgument(f"the two risks are for different data: {first.prob_true.size} and {second.prob_true.size} records")
    top = _checks.integer(top, "top", low=1)
    rho = float(stats.spearmanr(first.prob_true, second.prob_true).statistic)
    shared = np.intersect1d(np.argsort(-first.prob_true, kind="stable")[:top],
                            np.argsort(-second.prob_true, kind="stable")[:top]).size
    return rho, int(shared)


def rank_diagnosis(by_dataset, sigma_draws, released: dict, G: int):
    """Left: the posterior draws of sigma, with the sigma of the draw that generated the released
    dataset and the effective sigma of the draws that explain it. Right: over many synthetic
    datasets, the percentile of that effective sigma against the mean rank of the true value.

    ``by_dataset`` is :func:`ppmlib.evaluate.disclosure.risk_by_dataset`'s table; ``released`` is
    :func:`ppmlib.evaluate.disclosure.risk_summary` of the released dataset plus its "generating sigma".
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.hist(sigma_draws, bins=50, color=PALETTE["Unweighted"], alpha=0.6)
    left.axvline(released["generating sigma"], color="black", lw=2, label="draw that generated the release")
    left.axvline(released["effective sigma"], color="red", ls="--", lw=2, label="effective sigma of the release")
    left.set_xlabel(r"posterior draws of $\sigma$")
    left.set_ylabel("draws")
    left.set_title(r"Where the released dataset sits among the $\sigma$ draws")
    left.legend(fontsize=8)
    points = right.scatter(by_dataset["its percentile among the sigma draws"], by_dataset["mean rank"],
                           c=by_dataset["share ranked 1st"], cmap="viridis", s=40, vmin=0)
    right.scatter([released["its percentile among the sigma draws"]], [released["mean rank"]], marker="*", s=250,
                  color="red", label="the released dataset")
    right.axhline((G + 1) / 2, color="grey", ls=":", lw=1, label="middle rank")
    fig.colorbar(points, ax=right, label="share of records whose truth ranks 1st")
    right.set_xlabel(r"percentile of the effective $\sigma$ among the $\sigma$ draws")
    right.set_ylabel(f"mean rank of the true value (of {G})")
    right.set_title(f"{len(by_dataset)} synthetic datasets, one draw each")
    right.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def risk_by_draws_and_m(by_H, risks_by_m: dict, G: int, H: int):
    """Left: median and largest P(true) against the number of draws H. Right: P(true) by m datasets."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(by_H.index, by_H["median P(true)"], "o-", label="median over records")
    left.plot(by_H.index, by_H["max P(true)"], "s-", label="largest over records")
    left.axhline(1 / G, color="red", ls="--", lw=1, label="1/G")
    left.set_xscale("log")
    left.set_xlabel("H, posterior draws used")
    left.set_ylabel("probability of the true value")
    left.set_title("Stability in H")
    left.legend(fontsize=8)
    ms = list(risks_by_m)
    right.boxplot([risks_by_m[k].prob_true for k in ms], showfliers=False)
    right.set_xticks(range(1, len(ms) + 1), [f"m = {k}" for k in ms])
    right.axhline(1 / G, color="red", ls="--", lw=1)
    right.set_ylabel("probability of the true value")
    right.set_title(f"Released datasets m (H = {H})")
    fig.tight_layout()
    return fig


def risk_of_every_record(risk, G: int):
    """The probability of the true value of every record (dashed: 1/G), and the rank of the truth."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    left.hist(risk.prob_true, bins=40, color=PALETTE["Data"], alpha=0.8)
    left.axvline(1 / G, color="red", ls="--", label=f"1/G = {1 / G:.4f} (no information)")
    left.set_xlabel("probability of the true value")
    left.set_ylabel("records")
    left.set_title(f"Probability of the truth, all {risk.prob_true.size} records")
    left.legend()
    counts = np.bincount(risk.rank_true, minlength=G + 1)[1:]
    right.bar(np.arange(1, G + 1), counts, color=PALETTE["LW"], alpha=0.8)
    right.set_xlabel("rank of the true value among the guesses (1 = best guess)")
    right.set_ylabel("records")
    right.set_title("Rank of the truth")
    right.set_xticks(np.arange(1, G + 1))
    fig.tight_layout()
    return fig


def risk_lw_against_unweighted(risk, risk_lw, risk_lw_blind, weights, G: int, delta: float, delta_lw: float):
    """Per record, P(true) under LW (weighted ratios) against Unweighted, coloured by the LW weight;
    and the three distributions (Unweighted, LW for the intruder who knows alpha, and who ignores it)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.scatter(risk.prob_true, risk_lw.prob_true, s=8, alpha=0.5, c=weights, cmap="plasma")
    lims = [min(risk.prob_true.min(), risk_lw.prob_true.min()), max(risk.prob_true.max(), risk_lw.prob_true.max())]
    left.plot(lims, lims, color="black", lw=1, label="equal risk")
    left.axhline(1 / G, color="red", ls="--", lw=1)
    left.axvline(1 / G, color="red", ls="--", lw=1, label="1/G")
    left.set_xlabel("P(true), unweighted synthesizer")
    left.set_ylabel("P(true), LW synthesizer (weighted ratios)")
    left.set_title("Per record (colour: LW weight)")
    left.legend()
    right.hist([risk.prob_true, risk_lw.prob_true, risk_lw_blind.prob_true], bins=40,
               label=["Unweighted", "LW, knows α", "LW, ignores α"], color=["#1b9e77", "#d95f02", "#7570b3"], alpha=0.7)
    right.axvline(1 / G, color="red", ls="--", lw=1)
    right.set_xlabel("probability of the true value")
    right.set_ylabel("records")
    right.set_title(f"Unweighted (Δ = {delta:.1f}) vs LW (Δ = {delta_lw:.1f})")
    right.legend()
    fig.tight_layout()
    return fig


#: The slides' tables for consumer units 8 and 10 (true value 11.6 for both), m = 1, H = 50
SLIDES_TABLES = {
    8: {9.1: 0.08780057, 9.6: 0.08916632, 10.1: 0.09020571, 10.6: 0.09099926, 11.1: 0.09160126, 11.6: 0.09203442,
        12.1: 0.09228750, 12.6: 0.09231563, 13.1: 0.09204320, 13.6: 0.09136939, 14.1: 0.09017674},
    10: {9.1: 0.08768719, 9.6: 0.08896616, 10.1: 0.08998757, 10.6: 0.09081751, 11.1: 0.09149332, 11.6: 0.09201971,
         12.1: 0.09236756, 12.6: 0.09247509, 13.1: 0.09225174, 13.6: 0.09158484, 14.1: 0.09034931},
}


def records_over_releases(fit, y, H, K, seed, records, offsets=None, decimals=1):
    """P(true) and rank of some records in each of K releases (m = 1), each from its own posterior draw.

    The draws are K evenly spaced draws of ``fit``; each dataset is rounded to ``decimals`` like
    the slides' data. The estimator uses H evenly spaced draws.

    Parameters
    ----------
    fit : Fit
        A normal-model fit.
    y : ndarray, shape (n,)
        The confidential values the fit saw.
    H : int
        Draws used by the estimator.
    K : int
        The number of releases.
    seed : int
        The randomness of the releases.
    records : sequence of int
        0-based rows to follow (the slides' units 8 and 10 are rows 7 and 9).
    offsets : array_like, shape (G,), optional
        The guesses' offsets.
    decimals : int
        Rounding of the synthetic values.

    Returns
    -------
    pandas.DataFrame
        One row per release: its draw, the mean rank and median P(true) over all records, and
        "P(true), row r" and "rank, row r" (1-based r) of each followed record.
    """
    K = _checks.integer(K, "K", low=1)
    mu, sigma = risk_inputs(fit, H)
    rng = np.random.default_rng(_checks.seed(seed))
    rows = []
    for index in np.linspace(0, fit.n_draws - 1, K).round().astype(int):
        one = fit.subset(np.arange(fit.n_draws) == index)
        z = np.round(one.model.predict(one.draws, one.X, fit.y.size, rng), decimals)
        risk = attribute_risk(y, z, mu, sigma, offsets)
        row = {"draw": int(index), "mean rank": float(risk.rank_true.mean()),
               "median P(true)": float(np.median(risk.prob_true))}
        for i in records:
            row[f"P(true), row {i + 1}"] = float(risk.prob_true[i])
            row[f"rank, row {i + 1}"] = int(risk.rank_true[i])
        rows.append(row)
    return pd.DataFrame(rows)


def monte_carlo_error(fit, y, z, H, batches=None, offsets=None) -> np.ndarray:
    """The Monte Carlo standard error of every record's P(true) at H draws, measured: the sd of the
    estimate over ``batches`` disjoint sets of H evenly spaced draws (the k-th set shifted k draws).

    The sets share no draw, so their estimates differ only by which draws the sampler used
    (and the little autocorrelation of draws a few apart).

    Parameters
    ----------
    fit : Fit
        A normal-model fit with at least ``H * batches`` draws.
    y : ndarray, shape (n,)
        The confidential values.
    z : ndarray, shape (m, n)
        The released datasets.
    H : int
        Draws per estimate.
    batches : int, optional
        Disjoint sets of draws (at least 2); default as many as the fit has draws for.
    offsets : array_like, shape (G,), optional
        The guesses' offsets.

    Returns
    -------
    ndarray, shape (n,)
        Each record's standard error (sd over the sets, ``ddof=1``).

    Raises
    ------
    BadArgument
        Fewer than ``H * batches`` draws.
    """
    H = _checks.integer(H, "H", low=1)
    batches = _checks.integer(fit.n_draws // H if batches is None else batches, "batches", low=2)
    if H * batches > fit.n_draws:
        raise BadArgument(f"{batches} disjoint sets of H = {H} draws need {H * batches} draws; the fit has {fit.n_draws}")
    first = np.linspace(0, fit.n_draws - batches, H).round().astype(int)
    estimates = []
    for k in range(batches):
        one = fit.subset(np.isin(np.arange(fit.n_draws), first + k))
        mu, sigma = one.model.mean(one.draws, one.X), one.draws["sigma"]
        estimates.append(attribute_risk(y, z, mu, sigma, offsets).prob_true)
    return np.std(estimates, axis=0, ddof=1)


def slides_units(risks: dict, y, x, units=(8, 10)):
    """The slides' consumer units beside ours: P(true) and rank of the true value, the slides' and ours for each m.

    Parameters
    ----------
    risks : dict
        m -> AttributeRisk on the course sample with the first m released datasets.
    y, x : ndarray, shape (n,)
        Log income and log expenditure, rounded to one decimal (unit u is row u - 1).
    units : sequence of int
        The slides' units (keys of :data:`SLIDES_TABLES`).

    Returns
    -------
    pandas.DataFrame
        One row per unit.
    """
    rows = {}
    for unit in units:
        table = SLIDES_TABLES[unit]
        truth = round(float(y[unit - 1]), 1)
        ordered = sorted(table.values(), reverse=True)
        row = {"log income": truth, "log expenditure": round(float(x[unit - 1]), 1),
               "slides P(true)": table[truth], "slides rank": 1 + ordered.index(table[truth])}
        for m, risk in risks.items():
            row[f"ours P(true), m = {m}"] = float(risk.prob_true[unit - 1])
            row[f"ours rank, m = {m}"] = int(risk.rank_true[unit - 1])
        rows[f"CU {unit}"] = row
    return pd.DataFrame(rows).T


def slides_against_ours(rank_unit_8, gap: float, effect: float, typical, stand_in: dict, G: int, H: int):
    """The three slides' results not reproduced on the stand-in, on the stand-in and on the slides' data.

    Parameters
    ----------
    rank_unit_8 : array_like of int, shape (K,)
        The rank of unit 8's true value in each of K releases.
    gap : float
        On the slides' data, the largest change of any P(true) at H draws against the reference H.
    effect : float
        On the slides' data, the median over releases of abs(median P(true) - 1/G).
    typical : mapping
        "mean" and "std" over releases of the median P(true), on the slides' data.
    stand_in : dict
        "gap", "effect" and "typical" (a float) on the stand-in.
    G : int
        The number of guesses.
    H : int
        The estimator's draws.

    Returns
    -------
    pandas.DataFrame
        One row per result: the slides', the stand-in's and the slides' data's values.
    """
    rank_unit_8 = np.asarray(rank_unit_8)
    rows = {
        "unit 8's true value ranks 4th of 11": {
            "slides": "rank 4 (P = 0.0920), one release",
            "stand-in": "not the same unit",
            "slides' data": f"rank 4 in {np.mean(rank_unit_8 == 4):.0%} of {rank_unit_8.size} releases "
                            f"(ranks {rank_unit_8.min()} to {rank_unit_8.max()}, most often {np.bincount(rank_unit_8).argmax()})"},
        f"H = {H} draws suffice (error below half the effect)": {
            "slides": f"H = {H} used",
            "stand-in": f"error / effect {stand_in['gap'] / stand_in['effect']:.2f}",
            "slides' data": f"error / effect {gap / effect:.2f} (error {gap:.4f}, effect {effect:.4f})"},
        "the typical probability of the truth is near 1/G": {
            "slides": f"0.0920 for unit 8 (1/G = {1 / G:.4f})",
            "stand-in": f"{stand_in['typical']:.4f} (mean over releases of the median)",
            "slides' data": f"{typical['mean']:.4f} (sd over releases {typical['std']:.4f})"},
    }
    return pd.DataFrame(rows).T
