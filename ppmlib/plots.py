"""The book's recurring figures. Each function returns the matplotlib Figure it drew."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

# one colour per source, the same in every chapter
PALETTE = {"Data": "#4d4d4d", "Unweighted": "#1b9e77", "LW": "#d95f02", "CW": "#7570b3", "SW": "#e7298a",
           "LW_final": "#a6761d", "CW_final": "#66a61e"}


def _colour(name: str, i: int) -> str:
    return PALETTE.get(name, plt.get_cmap("tab10")(i % 10))


def violins(ax, groups: dict, *, title: str, ylabel: str, mark_max: bool = False):
    """Violin plot of each named 1-D array; ``mark_max`` draws each group's maximum as a bar."""
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
    """By-record Lipschitz bounds (with each maximum Delta marked) and weights, per synthesizer."""
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
    """Distributions of statistics: the data's bootstrap beside each synthesizer's m datasets."""
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
    fig.suptitle(title)
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
    fig.suptitle(title)
    fig.tight_layout()
    return fig


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
