"""Asymptotic DP by Monte Carlo (2025 paper, Appendix D).

Draw many databases from a generating model, run the synthesizers on each, and record each
database's *local* Lipschitz bound Delta_{alpha, x_r}. If the local bounds contract onto one value
as n grows, that value is the global bound of the asymptotic (epsilon, pi) guarantee: epsilon = 2
Delta for all but a share pi of databases. The paper reports contraction near Delta = 3.5 for
Poisson data and near 6 for the NB mixture at n = 1000 (its Appendix D prints the mixture as
NB(100, 5) + NB(100, 5), a typo against the dispersions (5, 20) of its section 2.1, which are used here).

One job is one database (model, n, r): its synthesizers run in sequence because LW's weights come
from the unweighted fit (and the re-weighted LW_final from LW). Jobs are independent and run
through :func:`ppmlib.parallel.map_jobs` (serially, on local worker processes, or on a Dask
cluster); each job carries its own seed, so the tables do not depend on the number of workers.
"""
from __future__ import annotations

__all__ = ["DESIGNS", "DEFAULT_DESIGN_SETTINGS", "database", "run_database", "Study", "run_study", "contraction",
           "exceedance", "estimate_global_delta", "rank_correlation", "fit_summary", "separation", "against_values",
           "contraction_by_model"]

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import _checks, simulate, utility
from ..mechanism import synthesizer
from ..posterior import Sampler, _sampler
from ..parallel import map_jobs
from ..seeding import seeds

# Generating models: how a database is drawn, and which synthesizer family fits it.
DESIGNS = {
    "poisson": {"label": "Poisson", "synthesizer": "poisson"},
    "nb_mixture": {"label": "NB mixture", "synthesizer": "negbin"},
}
DEFAULT_DESIGN_SETTINGS = {"mu": 100.0, "mix_mus": (100.0, 100.0), "mix_phis": (5.0, 20.0), "mix_probs": (0.2, 0.8)}


def _unweighted(model, y, done, seed, s):
    return synthesizer(model, y, "unweighted", seed=seed, m=s["m"], sampler=s["sampler"])


def _lw(model, y, done, seed, s):
    return synthesizer(model, y, "lw", base=done["Unweighted"], c=s["c"], g=s["g"], seed=seed, m=s["m"],
                       sampler=s["sampler"])


# The synthesizers a job can run, in the order they run; each step may use the earlier results
# (``done``). The re-weighted LW_final (issue 15, re-weighting) slots in here as one more entry,
# e.g. "LW_final": a step that re-weights done["LW"] and returns its Synthesis; the chapter's
# ``synthesizers`` parameter then names it. Steps keep their seeds when entries are appended.
STEPS = {"Unweighted": _unweighted, "LW": _lw}
NEEDS = {"Unweighted": (), "LW": ("Unweighted",)}


def database(design: str, n: int, seed: int, settings: dict | None = None) -> np.ndarray:
    """One confidential database of size n from a generating model ("poisson" or "nb_mixture")."""
    s = {**DEFAULT_DESIGN_SETTINGS, **(settings or {})}
    if design == "poisson":
        return simulate.poisson(n, s["mu"], seed)
    if design == "nb_mixture":
        return simulate.nb_mixture(n, s["mix_mus"], s["mix_phis"], s["mix_probs"], seed)
    raise ValueError(f"unknown generating model {design!r}; choose one of {sorted(DESIGNS)}")


def run_database(job: dict) -> dict:
    """One Monte Carlo job: draw database r, run the synthesizers, return small results only.

    ``job`` holds design, n, r, seed, synthesizers and settings (see :func:`run_study`). Returns
    the local Delta and the fit's diagnostics per synthesizer, and the estimands (mean, median,
    15th and 90th percentiles) of the confidential data and of each synthesizer's synthetic data
    (averaged over its m datasets), never the data themselves.
    """
    s = job["settings"]
    data_seed, *step_seeds = seeds(job["seed"], 1 + len(STEPS))
    y = database(job["design"], job["n"], data_seed, s)
    model = DESIGNS[job["design"]]["synthesizer"]
    key = {"model": DESIGNS[job["design"]]["label"], "n": job["n"], "r": job["r"]}
    done, deltas = {}, []
    estimands = utility.statistics(y).iloc[0].rename("Data").to_frame().T
    for step_seed, (name, step) in zip(step_seeds, STEPS.items()):
        if name not in job["synthesizers"]:
            continue
        done[name] = result = step(model, y, done, step_seed, s)
        d = result.diagnostics
        deltas.append({**key, "synthesizer": name, "delta": result.delta, "epsilon": result.epsilon,
                       "max_rhat": d["max_rhat"], "min_ess_bulk": d["min_ess_bulk"], "divergences": d["divergences"]})
        estimands.loc[name] = utility.statistics(result.synthetic).mean()
    long = estimands.rename_axis("source").reset_index().melt(id_vars="source", var_name="statistic")
    return {"deltas": deltas, "estimands": [{**key, **row} for row in long.to_dict("records")]}


@dataclass
class Study:
    """Results of :func:`run_study`.

    Attributes
    ----------
    deltas : pandas.DataFrame
        One row per (model, n, r, synthesizer): local Delta, epsilon = 2 Delta, diagnostics.
    estimands : pandas.DataFrame
        Long table (model, n, r, source, statistic, value); source "Data" is the confidential
        database, the others the synthetic data.
    settings : dict
        The arguments that produced it.
    """
    deltas: pd.DataFrame
    estimands: pd.DataFrame
    settings: dict

    def at(self, n: int) -> "Study":
        """The rows for databases of size n."""
        return Study(self.deltas[self.deltas["n"] == n], self.estimands[self.estimands["n"] == n], self.settings)


def run_study(models=("poisson", "nb_mixture"), *, n: int = 1000, R: int = 100, n_values=(), R_sweep: int = 30,
              synthesizers=("Unweighted", "LW"), seed: int = 0, c: float = 1.0, g: float = 0.0, m: int = 5,
              sampler: Sampler | None = None, design_settings: dict | None = None,
              n_jobs: int = 1, client=None, progress: bool = True) -> Study:
    """The Appendix D Monte Carlo: R databases of size n per generating model, plus a sweep over n.

    Parameters
    ----------
    models : generating models, from ``DESIGNS`` ("poisson": Poisson(mu), Poisson synthesizer;
        "nb_mixture": the NB mixture, NB synthesizer)
    n, R : the main study: R databases of n records each
    n_values, R_sweep : the sweep: R_sweep databases at every other size in n_values (at n itself
        the main study's R databases serve)
    synthesizers : names from ``STEPS``, run in that order on each database
    seed : one number reproduces every database, fit and synthetic dataset; job k of the list
        (model, size, r), in that order, gets ``ppmlib.seeds(seed, K)[k]``
    c, g : LW scale and shift;  m : synthetic datasets per synthesizer and database
    sampler : :class:`ppmlib.Sampler`, the NUTS settings of every fit (default 4 chains x 1000 draws)
    design_settings : mu, mix_mus, mix_phis, mix_probs (defaults: 100; (100, 100), (5, 20), (0.2, 0.8))
    n_jobs, client : parallel execution (see :func:`ppmlib.parallel.map_jobs`)

    Returns
    -------
    Study
        deltas (one row per database and synthesizer) and estimands (long table)

    See Also
    --------
    contraction : the spread of the local bounds per n.
    estimate_global_delta, exceedance : a global Delta and the share pi of databases above it.
    ppmlib.parallel.map_jobs : how the databases are run.

    Examples
    --------
    >>> study = run_study(["poisson"], n=200, R=4, sampler=ppmlib.Sampler(chains=2, draws=200, warmup=200),
    ...                   progress=False)  # doctest: +SKIP
    >>> study.deltas.groupby("synthesizer")["delta"].median()  # doctest: +SKIP
    """
    models = [models] if isinstance(models, str) else list(models)
    for design in models:
        if design not in DESIGNS:
            raise ValueError(f"unknown generating model {design!r} in models; choose from {sorted(DESIGNS)}")
    synthesizers = [synthesizers] if isinstance(synthesizers, str) else list(synthesizers)
    for name in synthesizers:
        if name not in STEPS:
            raise ValueError(f"unknown synthesizer {name!r}; available: {list(STEPS)} (LW_final comes with re-weighting)")
        missing = [need for need in NEEDS.get(name, ()) if need not in synthesizers]
        if missing:
            raise ValueError(f"synthesizer {name!r} needs {missing} in synthesizers as well")
    n = _checks.integer(n, "n", low=2)
    R = _checks.integer(R, "R", low=1)
    R_sweep = _checks.integer(R_sweep, "R_sweep", low=1)
    sizes = sorted({n, *(_checks.integer(v, "n_values entry", low=2) for v in n_values)})
    settings = {"c": _checks.real(c, "c", low=0), "g": _checks.real(g, "g"), "m": _checks.integer(m, "m", low=1),
                "sampler": _sampler(sampler),
                **DEFAULT_DESIGN_SETTINGS, **(design_settings or {})}
    keys = [(design, size, r) for design in models for size in sizes for r in range(R if size == n else R_sweep)]
    job_seeds = seeds(_checks.integer(seed, "seed", low=0), len(keys))
    jobs = [{"design": d, "n": size, "r": r, "seed": js, "synthesizers": tuple(synthesizers), "settings": settings}
            for (d, size, r), js in zip(keys, job_seeds)]
    results = map_jobs(run_database, jobs, n_jobs=n_jobs, client=client, progress=progress,
                       desc=f"{len(jobs)} databases")
    deltas = pd.DataFrame([row for res in results for row in res["deltas"]])
    estimands = pd.DataFrame([row for res in results for row in res["estimands"]])
    args = {"models": models, "n": n, "R": R, "n_values": sizes, "R_sweep": R_sweep, "synthesizers": synthesizers,
            "seed": seed, **settings}
    return Study(deltas, estimands, args)


def contraction(deltas: pd.DataFrame, max_databases: int | None = None) -> pd.DataFrame:
    """Spread of the local bounds per (model, synthesizer, n): databases, min, median, 95th
    percentile, max, and the range max - min (the paper's contraction measure).

    ``max_databases`` keeps only databases r < max_databases at every n: the range of R values
    grows with R, so sizes are compared on the same number of databases.

    See Also
    --------
    run_study : makes ``deltas`` (``ppmlib.plots.contraction_over_n`` draws this table).
    """
    if max_databases is not None:
        deltas = deltas[deltas["r"] < _checks.integer(max_databases, "max_databases", low=1)]
    grouped = deltas.groupby(["model", "synthesizer", "n"], sort=False)["delta"]
    table = pd.DataFrame({"databases": grouped.size(), "min": grouped.min(), "median": grouped.median(),
                          "95th pct": grouped.quantile(0.95), "max": grouped.max()})
    table["max - min"] = table["max"] - table["min"]
    return table


def exceedance(deltas: pd.DataFrame, global_delta: dict) -> pd.DataFrame:
    """Share of databases whose local Delta exceeds a global value: the pi of (epsilon, pi).

    ``global_delta`` maps (model, synthesizer) to a value; returns one row per (model,
    synthesizer, n) with the global Delta, epsilon = 2 Delta and the share above it.
    """
    rows = []
    for (model, name, size), group in deltas.groupby(["model", "synthesizer", "n"]):
        if (model, name) not in global_delta:
            continue
        value = float(global_delta[(model, name)])
        rows.append({"model": model, "synthesizer": name, "n": size, "global Delta": value,
                     "epsilon": 2 * value, "share above (pi)": float(np.mean(group["delta"] > value))})
    return pd.DataFrame(rows).set_index(["model", "synthesizer", "n"])


def estimate_global_delta(deltas: pd.DataFrame, level: float = 0.95) -> dict:
    """Estimated global Delta per (model, synthesizer): the ``level`` quantile of the local bounds
    at the largest n studied, where the bounds are most contracted."""
    level = _checks.real(level, "level", low=0, high=1)
    largest = deltas[deltas["n"] == deltas["n"].max()]
    return {key: float(g["delta"].quantile(level)) for key, g in largest.groupby(["model", "synthesizer"])}


def rank_correlation(deltas: pd.DataFrame, first: str = "LW", second: str = "Unweighted") -> pd.DataFrame:
    """Spearman correlation, over databases, between two synthesizers' local bounds, per (model, n):
    near 1 means the same databases are hard for both."""
    wide = deltas.pivot_table(index=["model", "n", "r"], columns="synthesizer", values="delta")
    missing = [s for s in (first, second) if s not in wide.columns]
    if missing:
        raise ValueError(f"no synthesizer {missing} in deltas; have {list(wide.columns)}")
    corr = wide.groupby(level=["model", "n"]).apply(lambda g: g[first].corr(g[second], method="spearman"))
    return corr.unstack("n")


def fit_summary(deltas: pd.DataFrame) -> pd.DataFrame:
    """The fits' diagnostics per (model, synthesizer): number of fits, worst R-hat, smallest bulk
    ESS and the total of divergent transitions, over every database and size in ``deltas``."""
    return deltas.groupby(["model", "synthesizer"]).agg(
        fits=("delta", "size"), worst_rhat=("max_rhat", "max"), smallest_bulk_ess=("min_ess_bulk", "min"),
        divergences=("divergences", "sum"))


def _bounds_of(deltas: pd.DataFrame, model: str, name: str) -> pd.Series:
    chosen = deltas.loc[(deltas["model"] == model) & (deltas["synthesizer"] == name), "delta"]
    if chosen.empty:
        raise ValueError(f"no local bounds of synthesizer {name!r} for model {model!r} in deltas")
    return chosen


def separation(deltas: pd.DataFrame, first: str = "LW", second: str = "Unweighted") -> pd.DataFrame:
    """How far apart two synthesizers' local bounds lie, one row per model: the 95th percentile
    of ``first`` against the 5th percentile of ``second``, both medians, ``first``'s maximum and
    ``second``'s minimum (the upper tail of one, the lower tail of the other)."""
    rows = {}
    for model in deltas["model"].unique():
        one, two = _bounds_of(deltas, model, first), _bounds_of(deltas, model, second)
        rows[model] = {f"{first} 95th pct": one.quantile(0.95), f"{second} 5th pct": two.quantile(0.05),
                       f"{first} median": one.median(), f"{second} median": two.median(),
                       f"{first} max": one.max(), f"{second} min": two.min()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("model")


def against_values(deltas: pd.DataFrame, values: dict) -> pd.DataFrame:
    """Local bounds against published global values, one row per (model, synthesizer) of ``values``
    present in ``deltas`` (pairs of absent models are skipped): the value, epsilon = 2 value, the
    share of databases above it (pi), and the bounds' min, median, 95th percentile and max."""
    rows = {}
    for (model, name), value in values.items():
        if model not in set(deltas["model"]):
            continue
        bounds = _bounds_of(deltas, model, name)
        rows[(model, name)] = {"value": float(value), "epsilon": 2.0 * float(value),
                               "share above (pi)": float(np.mean(bounds > value)), "min": bounds.min(),
                               "median": bounds.median(), "95th pct": bounds.quantile(0.95), "max": bounds.max()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["model", "synthesizer"])


def contraction_by_model(sweep: pd.DataFrame, first: str = "LW", second: str = "Unweighted") -> pd.DataFrame:
    """From a :func:`contraction` table over several n, one row per model: the largest ratio (over
    n) of the ranges max - min of ``first`` and ``second``, and ``first``'s range and median at the
    smallest and the largest n."""
    sizes = sorted(sweep.index.get_level_values("n").unique())
    rows = {}
    for model in sweep.index.get_level_values("model").unique():
        one = sweep.xs((model, first), level=["model", "synthesizer"])
        two = sweep.xs((model, second), level=["model", "synthesizer"])
        small, large = one.loc[sizes[0]], one.loc[sizes[-1]]
        rows[model] = {"largest ratio of ranges": float((one["max - min"] / two["max - min"]).max()),
                       "smallest n": sizes[0], "largest n": sizes[-1],
                       "range at smallest n": small["max - min"], "range at largest n": large["max - min"],
                       "median at smallest n": small["median"], "median at largest n": large["median"]}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("model")
