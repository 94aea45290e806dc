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
    fig.suptitle(title)
    fig.tight_layout()
    return fig


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
    fig.suptitle(title)
    fig.tight_layout()
    return fig


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
    fig.suptitle(title)
    fig.tight_layout()
    return fig


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
