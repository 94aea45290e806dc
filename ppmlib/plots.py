"""The book's recurring figures. Each function returns the matplotlib Figure it drew.

A chapter shows each figure with ONE call to a function here or in its study module (under MyST's
figure options, so it has a caption and a label): the figures several chapters share live here,
a figure only one chapter draws lives in ``ppmlib/studies/<chapter>.py`` (the asymptotic-DP and CE
income chapters' figures, below, are still to move there). Colours come from :data:`PALETTE`, one per
synthesizer of :data:`ppmlib.mechanism.schemes.REGISTRY`, the same in every chapter.
"""
from __future__ import annotations

__all__ = ["PALETTE", "cell_distributions", "violins", "bounds_and_weights", "utility_violins", "location_densities", "synthetic_violins",
           "bounds_vs_weights", "local_deltas", "mc_estimands", "contraction_over_n", "exceedance_by_mu",
           "delta_against_formula",
           "ce_bounds", "ce_utility", "cg_violins", "data_and_synthetic",
           "estimand_intervals"]

import matplotlib.pyplot as plt
from matplotlib.colors import to_hex
import numpy as np
from scipy import stats

from ppmlib.mechanism.schemes import REGISTRY, aliases

# one colour per source, the same in every chapter: each synthesizer of the registry its own,
# which its paper's alias ("DPweighted") and its label with the alias ("LW (DPweighted)") share
COLOURS = {"Unweighted": "#1b9e77", "LW": "#d95f02", "LW_final": "#a6761d", "CW": "#7570b3", "CW_final": "#66a61e",
           "SW": "#e7298a", "CM": "#e6ab02", "WCM": "#b15928", "Strict weighted": "#6a3d9a", "IR_marginal": "#66c2a5",
           "IR_pairwise": "#a50f15", "NSS": "#fb9a99"}
# a synthesizer of the registry without a colour of its own takes the next one of matplotlib's cycle
PALETTE = {"Data": "#4d4d4d", **{key: COLOURS.get(key) or to_hex(plt.get_cmap("Dark2")(i % 8))
                                 for i, key in enumerate(REGISTRY)}}
PALETTE.update({label: PALETTE[name] for name, alias in aliases().items() for label in (alias, f"{name} ({alias})")})
PALETTE["Capped"] = "#1f78b4"  # the fixed-cap weighting of the asymptotic-DP chapter
# the peers of ppmlib.baselines.peers (the "Against the alternatives" chapter)
PALETTE.update({"Histogram": "#666666", "AIM": "#1f78b4", "MST": "#a6cee3", "CART": "#17becf"})
# the strict privacy chapter's names for the censored schemes and the local mechanism
PALETTE.update({"strict weighted": PALETTE["Strict weighted"], "PPM (local)": PALETTE["LW"], "CM (r_i = 0)": "#999999"})
# the multivariate chapter: LW joint is LW; the per-variable synthesizers take CW's and SW's colours
# (no other chapter shows them together)
PALETTE.update({"LW joint": PALETTE["LW"], "LW per variable": PALETTE["CW"],
                "LW per variable, equal stated epsilon": PALETTE["SW"]})


def _colour(name: str, i: int) -> str:
    return PALETTE.get(name, plt.get_cmap("tab10")(i % 10))


def _finish(fig, ax, *, xlabel: str, ylabel: str, title: str):
    """Axis titles, title, legend and grid of a one-panel figure, laid out; returns the figure."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


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

    ``long`` is a :func:`ppmlib.evaluate.utility.long_table` (columns source, statistic, value, with a
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
    return _finish(fig, ax, xlabel=xlabel, ylabel="density", title=title)


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


def _titled(fig, title: str):
    """Give the figure its title and tighten the layout (the last step of most figures here)."""
    fig.suptitle(title)
    fig.tight_layout()
    return fig


# --- book/asymptotic_dp.md: local bounds over many databases ---------------------------

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
    """From :func:`ppmlib.studies.asymptotic_dp.contraction`, one row of panels per model: the local Delta's
    median (dot) and interquartile range (bar) at each n per synthesizer; its sd against n; and,
    when the table has it, the share of records whose weight is below 1 (the theorem's condition)."""
    models = list(dict.fromkeys(table.index.get_level_values("model")))
    shares = "share down-weighted" in table
    fig, axes = plt.subplots(len(models), 3 if shares else 2, figsize=(15 if shares else 11, 3.8 * len(models)),
                             squeeze=False)
    for row, model in zip(axes, models):
        sub = table.xs(model, level="model")
        names = list(dict.fromkeys(sub.index.get_level_values("synthesizer")))
        for i, name in enumerate(names):
            rows = sub.xs(name, level="synthesizer")
            sizes = rows.index.to_numpy(dtype=float)
            colour = _colour(name, i)
            shift = sizes * (1 + 0.05 * (i - (len(names) - 1) / 2))  # side by side on the log axis
            row[0].vlines(shift, rows["25th pct"], rows["75th pct"], color=colour, lw=3, alpha=0.7)
            row[0].plot(shift, rows["median"], "o-", color=colour, ms=4, label=name)
            row[1].plot(sizes, rows["sd"], "o-", color=colour, label=name)
            if shares:
                row[2].plot(sizes, rows["share down-weighted"], "o-", color=colour, label=name)
        row[0].set_ylabel(r"local $\Delta$: median and IQR")
        row[0].set_title(f"{model}: where the local bounds lie")
        row[1].set_ylabel(r"sd of the local $\Delta$ over databases")
        row[1].set_yscale("log")
        row[1].set_title(f"{model}: their spread")
        if shares:
            row[2].set_ylabel(r"share of records with $\alpha_i < 1$")
            row[2].set_ylim(-0.02, 1.02)
            row[2].set_title(f"{model}: records down-weighted")
        for ax in row:
            ax.set_xscale("log")
            ax.set_xlabel("n (records per database)")
            ax.grid(alpha=0.3)
        row[0].legend(fontsize=8)
    return _titled(fig, title)


def exceedance_by_mu(table, value: float, title: str = "The paper's global value against the unstated Poisson mean"):
    """From :func:`ppmlib.studies.asymptotic_dp.share_above` grouped by (mu, synthesizer): the share of
    databases above ``value`` with its 95% Clopper-Pearson interval (left) and the median local
    Delta (right), against the Poisson mean mu."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    share = f"share above {value:g}"
    for i, name in enumerate(dict.fromkeys(table.index.get_level_values("synthesizer"))):
        rows = table.xs(name, level="synthesizer")
        mus = rows.index.to_numpy(dtype=float)
        colour = _colour(name, i)
        errors = np.vstack([rows[share] - rows["95% low"], rows["95% high"] - rows[share]])
        left.errorbar(mus, rows[share], yerr=errors, fmt="o-", color=colour, capsize=3, label=name)
        right.plot(mus, rows["median"], "o-", color=colour, label=name)
    right.axhline(value, color="black", ls="--", lw=1, label=f"the paper's {value:g}")
    left.set_ylabel(f"share of databases with local $\\Delta$ > {value:g}")
    left.set_ylim(-0.02, 1.02)
    right.set_ylabel(r"median local $\Delta$")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel(r"Poisson mean $\mu$ of the generating model")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    left.set_title("Share above the paper's value (bars: 95% Clopper-Pearson)")
    right.set_title(r"Median local $\Delta$")
    return _titled(fig, title)


def delta_against_formula(rows, title: str = r"LW's local $\Delta$ against its closed form $f_{max}^2 / (4 (f_{max} - f_{min}))$"):
    """From :func:`ppmlib.studies.asymptotic_dp.with_formula`: every database's LW Delta against the closed
    form of its (f_min, f_max), one colour per (model, n), with the line of equality."""
    fig, ax = plt.subplots(figsize=(6.5, 5))
    cmap = plt.get_cmap("viridis")
    groups = list(rows.groupby(["model", "n"], sort=True))
    for i, ((model, size), group) in enumerate(groups):
        ax.plot(group["formula"], group["delta"], "o", ms=3, alpha=0.6, color=cmap(i / max(len(groups) - 1, 1)),
                label=f"{model}, n = {size:,}")
    low = min(rows["formula"].min(), rows["delta"].min())
    high = max(rows["formula"].max(), rows["delta"].max())
    ax.plot([low, high], [low, high], color="black", lw=1, label="equality")
    ax.set_xlabel(r"closed form from the unweighted fit's $f_{min}$, $f_{max}$")
    ax.set_ylabel(r"LW's local $\Delta$ (from the LW-weighted draws)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return _titled(fig, title)


# CE income chapter ------------------------------------------------------------------

def ce_bounds(results: dict, title: str = "By-record Lipschitz bounds (bar: the maximum, Δ)"):
    """The CE paper's Fig. 2: violins of each synthesizer's by-record bounds, its Delta in the legend.

    Each synthesizer is shown by its label (``results.labels`` of a :class:`ppmlib.mechanism.lineup.Results`,
    e.g. "LW (DPweighted)"), else by its name.
    """
    labels = getattr(results, "labels", {})
    fig, ax = plt.subplots(figsize=(8, 4))
    parts = ax.violinplot([r.bounds for r in results.values()], showmedians=True, showextrema=False)
    for i, (name, body) in enumerate(zip(results, parts["bodies"])):
        body.set_facecolor(_colour(name, i))
        body.set_alpha(0.6)
        body.set_label(f"{labels.get(name, name)}: Δ = {results[name].delta:.2f}")
        ax.hlines(results[name].delta, i + 0.75, i + 1.25, color="black", lw=1.5)
    ax.set_xticks(range(1, len(results) + 1), [labels.get(name, name) for name in results])
    ax.tick_params(axis="x", labelrotation=15)
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
    """The CE paper's Fig. 5: the data and Unweighted, then for each (c, g) the violins of the 90th
    percentile of the synthesizers in ``cg_long`` (LW and SW, by their labels) overlapping at one position."""
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
        for source in dict.fromkeys(cg_long["source"]):
            values = cg_long.loc[(cg_long["config"] == config) & (cg_long["source"] == source), "value"]
            body = ax.violinplot([values], positions=[len(fixed) + j + 1], showmedians=True,
                                 showextrema=False)["bodies"][0]
            body.set_facecolor(_colour(source, j))
            body.set_alpha(0.45)
            if j == 0:
                body.set_label(source)
    ax.axhline(p90.loc[p90["source"] == "Data", "value"].median(), color=PALETTE["Data"], ls="--", lw=1)
    ax.set_xticks(range(1, len(fixed) + len(configs) + 1), fixed + [f"(c, g) =\n{c}" for c in configs])
    ax.set_ylabel("dollars")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    return fig


# Your own data: the synthesis report and the real-wages chapter --------------------

def data_and_synthetic(values, synthetic: dict, *, log_scale: bool, xlabel: str,
                       title: str = "The data and one synthetic dataset per synthesizer"):
    """Histograms of the confidential column and of the first synthetic dataset of each synthesizer.

    ``values`` (n,) and each ``synthetic[name]`` (m, n) are in the column's units; ``log_scale``
    puts the x axis (and the bins) on a log scale, for a positive, long-tailed column.
    """
    values = np.asarray(values, float)
    first = {name: np.asarray(sets, float)[0] for name, sets in synthetic.items()}
    pooled = np.concatenate([values, *first.values()])
    if log_scale:
        bins = np.geomspace(pooled.min(), pooled.max(), 60)
    else:
        bins = np.histogram_bin_edges(pooled, bins=min(60, max(10, int(np.ptp(pooled)) + 1)))
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.hist(values, bins=bins, color=PALETTE["Data"], alpha=0.35, label="Data")
    for i, (name, d) in enumerate(first.items()):
        ax.hist(d, bins=bins, histtype="step", lw=1.6, color=_colour(name, i), label=name)
    if log_scale:
        ax.set_xscale("log")
    return _finish(fig, ax, xlabel=xlabel, ylabel="records", title=title)


def estimand_intervals(table, *, group: str = "statistic", title: str = "Estimands with 95% intervals"):
    """One panel per estimand: the data's interval and each synthesizer's, as points with bars.

    ``table`` has columns ``group`` (the estimand), source, estimate, low and high (e.g.
    :func:`ppmlib.evaluate.estimands.summary_table` or :func:`ppmlib.evaluate.estimands.coefficient_table` with
    ``group="term"``).
    """
    names = list(dict.fromkeys(table[group]))
    cols = min(3, len(names))
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for ax, name in zip(axes.ravel(), names):
        part = table[table[group] == name]
        for i, (_, row) in enumerate(part.iterrows()):
            ax.errorbar(i, row["estimate"], yerr=[[row["estimate"] - row["low"]], [row["high"] - row["estimate"]]],
                        fmt="o", color=_colour(row["source"], i), capsize=4)
        ax.axhspan(part["low"].iloc[0], part["high"].iloc[0], color=PALETTE["Data"], alpha=0.12)
        ax.set_xticks(range(len(part)), part["source"], rotation=20)
        ax.set_title(name)
        ax.set_ylabel("estimate")
        ax.grid(axis="y", alpha=0.3)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def cell_distributions(confidential, synthetic, keys, column: str, *, largest: int = 4,
                       title: str = "The data and the synthetic data in the largest cells"):
    """The model's fit cell by cell: the data's and the synthetic distribution function of ``column``
    in each of the ``largest`` cells of the ``keys`` (one panel each, largest first), with the
    cell's Kolmogorov-Smirnov distance (the mean over the m datasets, as
    :func:`ppmlib.evaluate.utility.cell_fit` gives it) in the panel's title.

    For the data holder's confidential report: it draws the data's values.

    Parameters
    ----------
    confidential : pandas.DataFrame
        The records, with the keys and ``column``.
    synthetic : list of pandas.DataFrame
        The m synthetic datasets (pooled in each panel).
    keys : list of str
        The categorical columns whose combinations are the cells.
    column : str
        The compared column.
    largest : int
        How many cells.
    title : str
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ppmlib.evaluate.utility import ks_distance

    def groups(frame):
        return {k if isinstance(k, tuple) else (k,): np.sort(g[column].to_numpy(float))
                for k, g in frame.groupby([frame[c].astype(str) for c in keys], sort=True)}

    data = groups(confidential)
    per_frame = [groups(f) for f in synthetic]
    cells = sorted(data, key=lambda k: (-data[k].size, k))[:largest]
    fig, axes = plt.subplots(1, len(cells), figsize=(3.2 * len(cells), 3.2), sharey=True, squeeze=False)
    for ax, cell in zip(axes[0], cells):
        values = data[cell]
        pooled = np.sort(np.concatenate([g[cell] for g in per_frame if cell in g] or [np.zeros(0)]))
        ks = np.mean([ks_distance(values, g[cell]) if cell in g else 1.0 for g in per_frame])
        ax.step(values, np.arange(1, values.size + 1) / values.size, where="post", color=PALETTE["Data"], lw=2,
                label="Data")
        if pooled.size:
            ax.step(pooled, np.arange(1, pooled.size + 1) / pooled.size, where="post", color=COLOURS["LW"], lw=1.4,
                    label="Synthetic")
        name = ", ".join(f"{k}={v}" for k, v in zip(keys, cell))
        ax.set_title(f"{name}\n{values.size} records, KS {ks:.2f}", fontsize=8)
        ax.set_xlabel(column)
    axes[0][0].set_ylabel("share of the cell's records")
    axes[0][0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig
