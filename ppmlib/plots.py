"""The book's recurring figures. Each function returns the matplotlib Figure it drew.

A chapter shows each figure with ONE call to a function here (under MyST's figure options, so it
has a caption and a label); a chapter's new figures are appended at the end of this file in a
block headed by a comment naming the chapter. Colours come from :data:`PALETTE`, one per
synthesizer, the same in every chapter.
"""
from __future__ import annotations

__all__ = ["PALETTE", "violins", "bounds_and_weights", "utility_violins", "location_densities", "synthetic_violins",
           "bounds_vs_weights", "rank_diagnosis", "risk_by_draws_and_m", "em_versus_sw", "loo_ratios",
           "worst_neighbours", "loo_tails", "delta_map", "risk_of_every_record", "risk_lw_against_unweighted",
           "sampler_check", "audit_epsilons", "audit_roc", "audit_modes", "reweighting_scatter", "weight_change",
           "k_path", "epsilon_utility", "local_deltas", "mc_estimands", "contraction_over_n",
           "ce_bounds", "ce_utility", "cg_violins"]

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

# one colour per source, the same in every chapter
PALETTE = {"Data": "#4d4d4d", "Unweighted": "#1b9e77", "LW": "#d95f02", "CW": "#7570b3", "SW": "#e7298a",
           "LW_final": "#a6761d", "CW_final": "#66a61e"}


def _colour(name: str, i: int) -> str:
    return PALETTE.get(name, plt.get_cmap("tab10")(i % 10))


def violins(ax, groups: dict, *, title: str, ylabel: str, mark_max: bool = False):
    """Violin plot of each named 1-D array; ``mark_max`` draws each group's maximum as a bar.

    The building block of the violin figures: draws on ``ax`` and returns it. A constant group
    (e.g. SW's weights) is drawn as a line, since a violin needs spread.

    See Also
    --------
    bounds_and_weights, utility_violins : whole figures built from it.

    Examples
    --------
    >>> fig, ax = plt.subplots()
    >>> ax = violins(ax, {"Unweighted": [1.0, 2.0, 5.0], "LW": [0.5, 1.0, 1.2]}, title="Bounds", ylabel="Delta_i",
    ...              mark_max=True)
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['Unweighted', 'LW']
    >>> plt.close(fig)
    """
    names = list(groups)
    data = [np.asarray(groups[k], float).ravel() for k in names]
    constant = [np.ptp(d) == 0 for d in data]
    # a violin needs spread: draw constant groups (e.g. SW's weights) as a single line instead
    shown = [d if not c else d + np.linspace(-1e-9, 1e-9, d.size) for d, c in zip(data, constant)]
    parts = ax.violinplot(shown, showmedians=True, showextrema=False)
    for i, body in enumerate(parts["bodies"]):
        body.set_facecolor(_colour(names[i], i))
        body.set_alpha(0.6)
    for i, d in enumerate(data):
        if constant[i]:
            ax.hlines(d[0], i + 0.7, i + 1.3, color=_colour(names[i], i), lw=3)
        if mark_max:
            ax.hlines(d.max(), i + 0.75, i + 1.25, color="black", lw=1.5)
    ax.set_xticks(range(1, len(names) + 1), names)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    return ax


def bounds_and_weights(results: dict, suptitle: str = ""):
    """By-record Lipschitz bounds (with each maximum Delta marked) and weights, per synthesizer.

    ``results`` maps a name to a :class:`~ppmlib.Synthesis` (or anything with ``bounds`` (n,) and
    ``weights`` (n,)).

    See Also
    --------
    bounds_vs_weights : the same two quantities as a scatter.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    violins(left, {k: r.bounds for k, r in results.items()}, mark_max=True,
            title="By-record Lipschitz bounds (bar: maximum = Δ)", ylabel=r"$\Delta_{\alpha, x_i}$")
    violins(right, {k: r.weights for k, r in results.items()}, title="Record weights",
            ylabel=r"$\alpha_i$")
    right.set_ylim(-0.05, 1.05)
    fig.suptitle(suptitle)
    fig.tight_layout()
    return fig


def utility_violins(long, statistics=("15th pct", "90th pct"), suptitle: str = ""):
    """Distributions of statistics: the data's bootstrap beside each synthesizer's m datasets.

    ``long`` is a :func:`ppmlib.utility.long_table` (columns source, statistic, value, with a
    "Data" source); one panel per entry of ``statistics``.
    """
    fig, axes = plt.subplots(1, len(statistics), figsize=(5.5 * len(statistics), 4), squeeze=False)
    for ax, stat in zip(axes[0], statistics):
        sub = long[long["statistic"] == stat]
        groups = {src: sub.loc[sub["source"] == src, "value"].to_numpy() for src in sub["source"].unique()}
        violins(ax, groups, title=stat, ylabel="value of the statistic")
        ax.axhline(np.median(groups["Data"]), color=PALETTE["Data"], ls="--", lw=1)
    fig.suptitle(suptitle)
    fig.tight_layout()
    return fig


def location_densities(results: dict, *, xlabel: str = r"$\mu$", title: str = "Pseudo posterior of the mean"):
    """Kernel density of each synthesizer's draws of the mean parameter."""
    fig, ax = plt.subplots(figsize=(7, 4))
    draws = {k: r.location_draws for k, r in results.items()}
    lo = min(np.percentile(d, 0.1) for d in draws.values())
    hi = max(np.percentile(d, 99.9) for d in draws.values())
    grid = np.linspace(lo, hi, 400)
    for i, (name, d) in enumerate(draws.items()):
        ax.plot(grid, stats.gaussian_kde(d)(grid), color=_colour(name, i), lw=2, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density")
    ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def synthetic_violins(y, results: dict, title: str = "The data and one synthetic dataset per synthesizer"):
    """The confidential data beside the first synthetic dataset of each synthesizer."""
    fig, ax = plt.subplots(figsize=(8, 4))
    violins(ax, {"Data": y, **{k: r.synthetic[0] for k, r in results.items()}}, title=title, ylabel="value")
    fig.tight_layout()
    return fig


def bounds_vs_weights(results: dict, title: str = "By-record bound against weight"):
    """Scatter of Delta_i against alpha_i, the maximum Delta dashed (the papers' efficiency picture)."""
    fig, axes = plt.subplots(1, len(results), figsize=(4.5 * len(results), 3.6), squeeze=False, sharey=True)
    for i, (ax, (name, r)) in enumerate(zip(axes[0], results.items())):
        ax.scatter(r.weights, r.bounds, s=8, alpha=0.5, color=_colour(name, i))
        ax.axhline(r.delta, color="red", ls="--", lw=1, label=f"Δ = {r.delta:.2f}")
        ax.set_xlabel(r"weight $\alpha_i$")
        ax.set_title(name)
        ax.legend(loc="lower right")
    axes[0][0].set_ylabel(r"bound $\Delta_{\alpha, x_i}$")
    return _titled(fig, title)


# --- attribute_risk chapter (issue 14): why the truth ranks where it does ----------------------------

def rank_diagnosis(by_dataset, sigma_draws, released: dict, G: int):
    """Left: the posterior draws of sigma, with the sigma of the draw that generated the released
    dataset and the effective sigma of the draws that explain it. Right: over many synthetic
    datasets, the percentile of that effective sigma against the mean rank of the true value.

    ``by_dataset`` is :func:`ppmlib.disclosure.risk_by_dataset`'s table; ``released`` is
    :func:`ppmlib.disclosure.risk_summary` of the released dataset plus its "generating sigma".
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


# --- book/dp_definitions.md ----------------------------------------------------------------------

def em_versus_sw(sw_draws, grid, sw_logpdf, em_logpdf, a: float):
    """Stan's SW draws, the exact SW Gamma and the grid-normalised EM density on one axis."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.hist(sw_draws, bins=60, density=True, color=PALETTE["SW"], alpha=0.35, label="Stan SW draws")
    ax.plot(grid, np.exp(sw_logpdf), color="black", lw=2, label="exact Gamma (SW, conjugate)")
    ax.plot(grid, np.exp(em_logpdf), color=PALETTE["SW"], lw=1.5, ls="--", label="EM, normalised on the grid")
    ax.set_xlabel(r"Poisson rate $\lambda$")
    ax.set_ylabel("density")
    ax.set_title(f"Exponential mechanism = scalar-weighted pseudo posterior (a = {a:.3f})")
    ax.legend()
    fig.tight_layout()
    return fig


def _titled(fig, title: str):
    """Give the figure its title and tighten the layout (the last step of most figures here)."""
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _check_colours(checks: dict):
    return [_colour(name, i) for i, name in enumerate(checks)]


def loo_ratios(checks: dict, y):
    """Per neighbour (by the removed record's value): the largest exact log ratio, its by-record
    bound 2 Delta_i and the mechanism's 2 Delta, on a log axis (one panel per LooCheck)."""
    fig, axes = plt.subplots(1, len(checks), figsize=(6 * len(checks), 4.2), sharey=True, squeeze=False)
    floor = 1e-3  # a zero-weight record has a ratio of exactly 0; it is drawn at this floor on the log axis
    for ax, (name, ch), colour in zip(axes[0], checks.items(), _check_colours(checks)):
        ax.scatter(y, np.maximum(ch.ratio, floor), s=9, color=colour, alpha=0.6,
                   label=r"max$_\lambda$ |log ratio| for neighbour $x_{-i}$")
        ax.scatter(y, np.maximum(2 * ch.record_bounds, floor), s=6, color="grey", alpha=0.35, marker="x",
                   label=r"$2\Delta_{\alpha, x_i}$ (by-record bound, draws)")
        ax.axhline(2 * ch.delta, color="red", ls="--", lw=1.5, label=rf"$2\Delta$ = {2 * ch.delta:.2f}")
        ax.set_yscale("log")
        ax.set_xlabel(r"value $y_i$ of the removed record")
        ax.set_title(f"{name}: largest log density ratio per neighbour")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)
    axes[0][0].set_ylabel("absolute log density ratio (log scale)")
    fig.tight_layout()
    return fig


def worst_neighbours(checks: dict, y, *, prior_shape: float, prior_rate: float):
    """For each mechanism, the exact pseudo posterior of the database and of its worst neighbour."""
    from . import exact
    prior = dict(prior_shape=prior_shape, prior_rate=prior_rate)
    fig, axes = plt.subplots(1, len(checks), figsize=(6 * len(checks), 4), squeeze=False)
    for ax, (name, ch), colour in zip(axes[0], checks.items(), _check_colours(checks)):
        grid, w, worst = ch.grid, ch.weights, ch.worst
        keep = np.arange(y.size) != worst
        ax.plot(grid, np.exp(exact.log_density(grid, y, w, **prior)), color=colour, lw=2, label=r"$x$ (all records)")
        ax.plot(grid, np.exp(exact.log_density(grid, y[keep], w[keep], **prior)), color="black", lw=1.5, ls="--",
                label=rf"$x_{{-i}}$ (record $y_i$ = {y[worst]}, weight {w[worst]:.2f}, removed)")
        ratio = exact.loo_log_ratio(grid, y, w, **prior)[worst]
        ax.set_title(f"{name}: max |log ratio| = {np.abs(ratio).max():.3f} (2Δ = {2 * ch.delta:.2f})")
        ax.set_xlabel(r"Poisson rate $\lambda$ (grid = the draws' range)")
        ax.set_ylabel("pseudo posterior density")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # headroom for the legend above the peak
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def loo_tails(wide, curves: dict, checks: dict, shaded: str = "Unweighted"):
    """The largest log ratio over all neighbours on a wide grid, each mechanism's 2 Delta dashed,
    and the range of the ``shaded`` mechanism's draws as a grey band (log axis)."""
    fig, ax = plt.subplots(figsize=(11, 4.2))
    for (name, curve), colour in zip(curves.items(), _check_colours(checks)):
        ax.plot(wide, curve, color=colour, lw=2, label=f"{name}: max over neighbours")
        ax.axhline(2 * checks[name].delta, color=colour, ls="--", lw=1, label=f"{name}: 2Δ = {2 * checks[name].delta:.2f}")
    ax.axvspan(checks[shaded].grid[0], checks[shaded].grid[-1], color="grey", alpha=0.3,
               label=f"range of the {shaded.lower()} draws")
    ax.set_yscale("log")
    ax.set_xlabel(r"Poisson rate $\lambda$")
    ax.set_ylabel("max |log density ratio| (log scale)")
    ax.set_title("The LOO log ratio far from the data: bounded only where the pseudo posterior lives")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def delta_map(surface, delta_unweighted: float):
    """Delta over a (c, g) grid (the DataFrame of ``lw_delta_grid``): a labelled map, and Delta
    against c for each g beside the unweighted Delta."""
    table = surface.pivot(index="g", columns="c", values="Delta")
    values = table.to_numpy()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    image = left.imshow(values, origin="lower", cmap="viridis", aspect="auto")
    left.set_xticks(range(len(table.columns)), [f"{v:g}" for v in table.columns])
    left.set_yticks(range(len(table.index)), [f"{v:g}" for v in table.index])
    for (row, col), value in np.ndenumerate(values):
        bright = value > values.mean()  # dark text on the bright end of the colour map
        left.text(col, row, f"{value:.2f}", ha="center", va="center", color="black" if bright else "white", fontsize=10)
    left.set_xlabel("scale c")
    left.set_ylabel("shift g")
    left.set_title("LW: Lipschitz bound Δ by (c, g)")
    fig.colorbar(image, ax=left, label="Δ")
    for shift, rows in surface.groupby("g"):
        right.plot(rows["c"], rows["Delta"], marker="o", label=f"g = {shift:g}")
    right.axhline(delta_unweighted, color=PALETTE["Unweighted"], ls=":", label=f"Unweighted Δ = {delta_unweighted:.2f}")
    right.set_xlabel("scale c")
    right.set_ylabel("Δ (ε = 2Δ)")
    right.set_title("Δ rises with c and with g")
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    fig.tight_layout()
    return fig


# --- book/attribute_risk.md: every record, and LW against Unweighted ------------------------------

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


# ---------------------------------------------------------------------------------------------
# book/privacy_audit.md: the empirical privacy audit
# ---------------------------------------------------------------------------------------------

AUDIT_OUTPUTS = ("theta", "one dataset", "m datasets")


def sampler_check(stan_draws, exact_draws, shape: float, rate: float, title: str = ""):
    """Stan's draws and the exact sampler's beside the Gamma pseudo posterior: density and QQ plot."""
    stan_draws, exact_draws = np.sort(np.ravel(stan_draws)), np.sort(np.ravel(exact_draws))
    dist = stats.gamma(shape, scale=1.0 / rate)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    grid = np.linspace(dist.ppf(1e-4), dist.isf(1e-4), 400)
    left.hist(stan_draws, bins=60, density=True, alpha=0.35, color=PALETTE["LW"], label="Stan (NUTS) draws")
    left.hist(exact_draws, bins=60, density=True, histtype="step", lw=1.5, color="black", label="exact sampler")
    left.plot(grid, dist.pdf(grid), color="#377eb8", lw=2, label=f"Gamma({shape:.1f}, {rate:.2f})")
    left.set_xlabel(r"Poisson rate $\lambda$")
    left.set_ylabel("density")
    left.legend(fontsize=8)
    for draws, colour, label in ((stan_draws, PALETTE["LW"], "Stan"), (exact_draws, "black", "exact")):
        probs = (np.arange(draws.size) + 0.5) / draws.size
        right.plot(dist.ppf(probs), draws, ".", ms=2, color=colour, label=label)
    right.axline((grid[0], grid[0]), slope=1, color="grey", ls="--", lw=1)
    right.set_xlabel("Gamma quantile")
    right.set_ylabel("sample quantile")
    right.legend(fontsize=8)
    return _titled(fig, title)


def audit_epsilons(table, weights: str = "fixed", neighbours: str = "add/remove", floor: float = 1e-3):
    """eps_lb beside the exact loss and the guarantee, one panel per output, log scale.

    x: (n, target); one colour per synthesizer. Filled dot: eps_lb (an open triangle at ``floor``
    when the attack proved nothing); cross: the exact loss on the central region (the most any
    test can show); bar: the guarantee (2 Delta, times m for m datasets).
    """
    sub = table[(table["weights"] == weights) & (table["neighbours"] == neighbours)]
    cells = list(dict.fromkeys(zip(sub["n"], sub["target"])))
    names = list(dict.fromkeys(sub["synthesizer"]))
    fig, axes = plt.subplots(1, len(AUDIT_OUTPUTS), figsize=(15, 4.6), sharey=False)
    for ax, output in zip(axes, AUDIT_OUTPUTS):
        rows = sub[sub["output"] == output]
        for j, name in enumerate(names):
            colour, offset = _colour(name, j), (j - (len(names) - 1) / 2) * 0.22
            for x, (n, target) in enumerate(cells):
                row = rows[(rows["n"] == n) & (rows["target"] == target) & (rows["synthesizer"] == name)]
                if row.empty:
                    continue
                row = row.iloc[0]
                ax.hlines(row["bound"], x + offset - 0.09, x + offset + 0.09, color=colour, lw=2.5)
                ax.plot(x + offset, max(row["exact loss"], floor), "x", color=colour, ms=6)
                if row["eps_lb"] > 0:
                    ax.plot(x + offset, row["eps_lb"], "o", color=colour, ms=6)
                else:
                    ax.plot(x + offset, floor, "v", mfc="none", color=colour, ms=6)
        ax.set_yscale("log")
        ax.set_xticks(range(len(cells)), [f"{t}, n={n}" for n, t in cells], fontsize=8, rotation=35, ha="right")
        ax.set_title(output)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("ε (log scale)")
    handles = [plt.Line2D([], [], color=_colour(nm, j), lw=3, label=nm) for j, nm in enumerate(names)]
    handles += [plt.Line2D([], [], color="grey", lw=2.5, label="guarantee (bar)"),
                plt.Line2D([], [], color="grey", marker="x", ls="", label="exact loss, central region"),
                plt.Line2D([], [], color="grey", marker="o", ls="", label="ε_lb (audit)"),
                plt.Line2D([], [], color="grey", marker="v", mfc="none", ls="", label="ε_lb = 0 (drawn at floor)")]
    axes[-1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"Audit against guarantee: weights {weights}, {neighbours} neighbours")
    fig.tight_layout()
    return fig


def audit_roc(scores: dict, n: int, target: str, weights: str = "fixed", neighbours: str = "add/remove"):
    """ROC curves of the likelihood-ratio attack on one target, one panel per output, log-log axes."""
    from .audit import auc, roc_curve

    keys = [k for k in scores if k[0] == n and k[2] == weights and k[3] == neighbours and k[4] == target]
    names = list(dict.fromkeys(k[1] for k in keys))
    fig, axes = plt.subplots(1, len(AUDIT_OUTPUTS), figsize=(14, 4.2), sharey=True)
    for ax, output in zip(axes, AUDIT_OUTPUTS):
        for j, name in enumerate(names):
            s, member = scores[(n, name, weights, neighbours, target, output)]
            fpr, tpr = roc_curve(s, member)
            ax.plot(fpr, tpr, color=_colour(name, j), lw=1.8, label=f"{name} (AUC {auc(s, member):.2f})")
        grid = np.logspace(-3, 0, 50)
        ax.plot(grid, grid, color="grey", ls="--", lw=1, label="no information")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(1e-3, 1)
        ax.set_ylim(1e-3, 1.05)
        ax.set_xlabel("false-positive rate")
        ax.set_title(output)
        ax.legend(fontsize=8, loc="lower right")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("true-positive rate")
    fig.suptitle(f"Likelihood-ratio attack on the {target} record (n = {n}, weights {weights}, {neighbours})")
    fig.tight_layout()
    return fig


def audit_modes(table, output: str = "m datasets", neighbours: str = "add/remove"):
    """AUC of the attack with the weights held fixed against recomputed on D', per synthesizer and target."""
    sub = table[(table["output"] == output) & (table["neighbours"] == neighbours)]
    cells = list(dict.fromkeys(zip(sub["n"], sub["target"])))
    names = list(dict.fromkeys(sub["synthesizer"]))
    fig, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 4.2), sharey=True, squeeze=False)
    for j, (ax, name) in enumerate(zip(axes[0], names)):
        for k, (mode, hatch) in enumerate((("fixed", ""), ("recomputed", "//"))):
            values = [sub[(sub["n"] == n) & (sub["target"] == t) & (sub["synthesizer"] == name)
                          & (sub["weights"] == mode)]["AUC"].iloc[0] for n, t in cells]
            ax.bar(np.arange(len(cells)) + (k - 0.5) * 0.38, values, width=0.38, color=_colour(name, j),
                   alpha=0.9 if k == 0 else 0.45, hatch=hatch, edgecolor="black", lw=0.5, label=f"weights {mode}")
        ax.axhline(0.5, color="grey", ls="--", lw=1)
        ax.set_xticks(range(len(cells)), [f"{t}, n={n}" for n, t in cells], fontsize=8, rotation=35, ha="right")
        ax.set_ylim(0.4, 1.0)
        ax.set_title(name)
        ax.legend(fontsize=8, loc="upper right")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("AUC of the attack (0.5: none)")
    fig.suptitle(f"Weights held fixed (the theorem) against recomputed on D' (the pipeline): {output}")
    fig.tight_layout()
    return fig


# --- re-weighting chapters (reweighting.md, salary.md) ---------------------------------------

def reweighting_scatter(pairs: dict, title: str = "By-record bound against weight, before and after re-weighting"):
    """One panel per scheme: (alpha_i, Delta_i) before (light) and after (dark) re-weighting, each
    maximum Delta dashed. ``pairs`` maps a scheme name to (before, after) Synthesis objects."""
    fig, axes = plt.subplots(1, len(pairs), figsize=(5.5 * len(pairs), 4), squeeze=False)
    for ax, (name, (before, after)) in zip(axes[0], pairs.items()):
        for r, label, alpha in ((before, name, 0.35), (after, f"{name}_final", 0.8)):
            colour = _colour(label, 0)
            ax.scatter(r.weights, r.bounds, s=7, alpha=alpha, color=colour, label=label)
            ax.axhline(r.delta, color=colour, ls="--", lw=1.2)
        ax.set_xlabel(r"weight $\alpha_i$")
        ax.set_ylabel(r"bound $\Delta_{\alpha, x_i}$ (dashed: maximum $\Delta$)")
        ax.set_title(name)
        ax.legend(loc="lower right")
        ax.grid(alpha=0.3)
    return _titled(fig, title)


def weight_change(pairs: dict, title: str = "Each record's weight before and after re-weighting"):
    """One panel per scheme: alpha_i (x) against alpha^w_i (y); above the diagonal = the record gained."""
    fig, axes = plt.subplots(1, len(pairs), figsize=(4.5 * len(pairs), 4), squeeze=False)
    for ax, (name, (before, after)) in zip(axes[0], pairs.items()):
        lost = after.weights < before.weights
        ax.scatter(before.weights[~lost], after.weights[~lost], s=7, alpha=0.6, color=_colour(f"{name}_final", 0),
                   label=f"gain or keep ({(~lost).sum()})")
        ax.scatter(before.weights[lost], after.weights[lost], s=12, color="red", label=f"lose ({lost.sum()})")
        ax.plot([0, 1], [0, 1], color="black", lw=1, ls=":")
        ax.set_xlabel(rf"$\alpha_i$ ({name})")
        ax.set_ylabel(rf"$\alpha^w_i$ ({name}_final)")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="lower right")
        ax.grid(alpha=0.3)
    return _titled(fig, title)


def k_path(finals: dict, title: str = "The search for k: each refit's Delta against its target"):
    """One panel per re-weighted Synthesis: the tried (k, Delta) in order, the target Delta and its
    band of +- tau."""
    fig, axes = plt.subplots(1, len(finals), figsize=(4.5 * len(finals), 3.6), squeeze=False)
    for ax, (name, r) in zip(axes[0], finals.items()):
        cal = r.calibration
        k, d = np.array(cal["history"]).T
        ax.axhspan(cal["target"] - cal["atol"], cal["target"] + cal["atol"], color="grey", alpha=0.25,
                   label=r"target $\Delta \pm \tau$")
        ax.plot(k, d, "-o", color=_colour(name, 0), label="refits, in order")
        for i, (ki, di) in enumerate(zip(k, d), start=1):
            ax.annotate(str(i), (ki, di), textcoords="offset points", xytext=(4, 4))
        ax.set_xlabel("k")
        ax.set_ylabel(r"$\Delta_{\alpha^w, x}$")
        ax.set_title(name)
        ax.legend(loc="best")
        ax.grid(alpha=0.3)
    return _titled(fig, title)


def epsilon_utility(table, title: str = "Utility bought by a larger epsilon (LW calibrated to each target)"):
    """The distance to the data (``gap`` column) against the achieved epsilon of each calibrated LW."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(table["epsilon"], table["gap"], "-o", color=PALETTE["LW"])
    for eps, gap, c in zip(table["epsilon"], table["gap"], table["c"]):
        ax.annotate(f"c = {c:.2f}", (eps, gap), textcoords="offset points", xytext=(5, 5))
    ax.set_xlabel(r"$\varepsilon = 2\Delta$ per synthetic dataset")
    ax.set_ylabel("distance to the data (sds, 4 statistics)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


# --- book/asymptotic_dp.md (issue 9): local bounds over many databases ---------------------------

def local_deltas(deltas, title: str = "Local Lipschitz bounds over the Monte Carlo databases"):
    """Violins of the local Delta of every database, per synthesizer, one panel per generating
    model (the 2025 paper's Figs 10 and 12); each violin's maximum is marked."""
    models = list(dict.fromkeys(deltas["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 4), squeeze=False)
    for ax, model in zip(axes[0], models):
        sub = deltas[deltas["model"] == model]
        groups = {name: g["delta"].to_numpy() for name, g in sub.groupby("synthesizer", sort=False)}
        sizes = sorted(sub["n"].unique())
        violins(ax, groups, title=f"{model} (n = {', '.join(map(str, sizes))}, {len(sub) // len(groups)} databases)",
                ylabel=r"local $\Delta_{\alpha, x_r}$", mark_max=True)
    return _titled(fig, title)


def mc_estimands(estimands, statistics=("mean", "median", "15th pct", "90th pct"),
                 title: str = "Estimands of the confidential and the synthetic data over the databases"):
    """One row per generating model, one panel per statistic: the statistic of each confidential
    database ("Data") beside that of its synthetic data, per synthesizer (the paper's Figs 11, 13)."""
    models = list(dict.fromkeys(estimands["model"]))
    fig, axes = plt.subplots(len(models), len(statistics), figsize=(3.6 * len(statistics), 3.4 * len(models)),
                             squeeze=False)
    for row, model in zip(axes, models):
        sub = estimands[estimands["model"] == model]
        for ax, stat in zip(row, statistics):
            part = sub[sub["statistic"] == stat]
            groups = {src: g["value"].to_numpy() for src, g in part.groupby("source", sort=False)}
            violins(ax, groups, title=f"{model}: {stat}", ylabel="value" if ax is row[0] else "")
            ax.tick_params(axis="x", labelsize=8)
    return _titled(fig, title)


def contraction_over_n(table, title: str = "Spread of the local bounds as n grows"):
    """From :func:`ppmlib.montecarlo.contraction`: per model, the range min..max of the local
    Delta at each n (bars), its median (dot) and 95th percentile (tick), per synthesizer; and
    beside it the range max - min against n."""
    models = list(dict.fromkeys(table.index.get_level_values("model")))
    fig, axes = plt.subplots(len(models), 2, figsize=(11, 3.6 * len(models)), squeeze=False)
    for (left, right), model in zip(axes, models):
        sub = table.xs(model, level="model")
        for i, name in enumerate(dict.fromkeys(sub.index.get_level_values("synthesizer"))):
            rows = sub.xs(name, level="synthesizer")
            sizes = rows.index.to_numpy(dtype=float)
            colour = _colour(name, i)
            shift = sizes * (1 + 0.04 * (i - 0.5))  # side by side on the log axis
            left.vlines(shift, rows["min"], rows["max"], color=colour, lw=2, alpha=0.7)
            left.plot(shift, rows["median"], "o", color=colour, label=f"{name}: median, min-max")
            left.plot(shift, rows["95th pct"], "_", color=colour, ms=14, mew=2)
            right.plot(sizes, rows["max - min"], "o-", color=colour, label=name)
        for ax in (left, right):
            ax.set_xscale("log")
            ax.set_xlabel("n (records per database)")
            ax.grid(alpha=0.3)
        left.set_ylabel(r"local $\Delta$ (tick: 95th percentile)")
        left.set_title(model)
        left.legend(fontsize=8)
        right.set_ylabel(r"max $-$ min of the local $\Delta$")
        right.set_title(f"{model}: range of the local bounds")
    return _titled(fig, title)


# CE income chapter (issue 10) ------------------------------------------------------------------

# the CE paper's names for LW, SW and CW take those schemes' colours
PALETTE.update({"DPweighted": PALETTE["LW"], "EMweighted": PALETTE["SW"], "Countweighted": PALETTE["CW"]})


def ce_bounds(results: dict, title: str = "By-record Lipschitz bounds (bar: the maximum, Δ)"):
    """The CE paper's Fig. 2: violins of each synthesizer's by-record bounds, its Delta in the legend.

    ``results`` maps a name to a Synthesis; a :class:`ppmlib.lineup.Results` labels them with the
    paper's aliases ("LW (DPweighted)").
    """
    labels = getattr(results, "labels", {})
    fig, ax = plt.subplots(figsize=(9, 4))
    parts = ax.violinplot([r.bounds for r in results.values()], showmedians=True, showextrema=False)
    for i, (name, body) in enumerate(zip(results, parts["bodies"])):
        colour = _colour(name, i)
        body.set_facecolor(colour)
        body.set_alpha(0.6)
        body.set_label(f"{labels.get(name, name)}: Δ = {results[name].delta:.2f}")
        ax.hlines(results[name].delta, i + 0.75, i + 1.25, color="black", lw=1.5)
    ax.set_xticks(range(1, len(results) + 1), [labels.get(n, n).replace(" (", "\n(") for n in results])
    ax.set_xlabel("synthesizer")
    ax.set_ylabel(r"$\Delta_{\alpha, x_i}$")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper right")
    fig.tight_layout()
    return fig


def ce_utility(long, statistics=("mean", "90th pct"), suptitle: str = "Income in dollars: data and synthesizers"):
    """The CE paper's Figs. 3-4: the data's bootstrap and each synthesizer's barycenter, in dollars."""
    fig, axes = plt.subplots(1, len(statistics), figsize=(6 * len(statistics), 4), squeeze=False)
    for ax, stat in zip(axes[0], statistics):
        sub = long[long["statistic"] == stat]
        groups = {src: sub.loc[sub["source"] == src, "value"].to_numpy() for src in sub["source"].unique()}
        violins(ax, groups, title=f"{stat} of income", ylabel="dollars")
        ax.axhline(np.median(groups["Data"]), color=PALETTE["Data"], ls="--", lw=1)
        ax.tick_params(axis="x", labelrotation=15)
    fig.suptitle(suptitle)
    fig.tight_layout()
    return fig


def cg_violins(long, cg_long, title: str = "90th percentile of income: LW (DPweighted) against SW (EMweighted) at equal Δ"):
    """The CE paper's Fig. 5: the data and Unweighted, then for each (c, g) the LW (DPweighted) and
    the SW (EMweighted) violins of the 90th percentile overlapping at one position."""
    fig, ax = plt.subplots(figsize=(10, 4.5))
    p90 = long[long["statistic"] == "90th pct"]
    fixed = [s for s in ("Data", "Unweighted") if s in set(p90["source"])]
    for i, source in enumerate(fixed):
        body = ax.violinplot([p90.loc[p90["source"] == source, "value"]], positions=[i + 1],
                             showmedians=True, showextrema=False)["bodies"][0]
        body.set_facecolor(_colour(source, i))
        body.set_alpha(0.6)
    configs = list(dict.fromkeys(cg_long["config"]))
    for j, config in enumerate(configs):
        for source, alias in (("LW", "DPweighted"), ("SW", "EMweighted")):
            values = cg_long.loc[(cg_long["config"] == config) & (cg_long["source"] == source), "value"]
            body = ax.violinplot([values], positions=[len(fixed) + j + 1], showmedians=True,
                                 showextrema=False)["bodies"][0]
            body.set_facecolor(PALETTE[source])
            body.set_alpha(0.45)
            if j == 0:
                body.set_label(f"{source} ({alias})")
    ax.axhline(p90.loc[p90["source"] == "Data", "value"].median(), color=PALETTE["Data"], ls="--", lw=1)
    ax.set_xticks(range(1, len(fixed) + len(configs) + 1), fixed + [f"(c, g) =\n{c}" for c in configs])
    ax.set_xlabel("source, and the (c, g) of LW's weights")
    ax.set_ylabel("dollars")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    return fig
