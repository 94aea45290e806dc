"""The attribute-risk chapter's study (book/attribute_risk.md): its tables of the most exposed records
and of two releases' agreement, and its figures. The risk itself is :mod:`ppmlib.evaluate.disclosure`'s.
"""
from __future__ import annotations

__all__ = ["most_exposed", "release_agreement", "rank_diagnosis", "risk_by_draws_and_m",
           "risk_of_every_record", "risk_lw_against_unweighted"]

import matplotlib.pyplot as plt
import numpy as np

from ppmlib import _checks
from ppmlib.evaluate.disclosure import AttributeRisk
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
