"""Asymptotic DP by Monte Carlo (2025 paper, Appendix D).

Draw many databases from a generating model, run the synthesizers on each, and record each
database's *local* Lipschitz bound Delta_{alpha, x_r}. If the local bounds contract onto one value
as n grows, that value is the global bound of the asymptotic (epsilon, pi) guarantee: epsilon = 2
Delta for all but a share pi of databases. The paper reports contraction near Delta = 3.5 for
Poisson data and near 6 for the NB mixture at n = 1000 (its Appendix D prints the mixture as
NB(100, 5) + NB(100, 5), a typo against the dispersions (5, 20) of its section 2.1, which are used here).

One job is one database (model, n, r): its synthesizers run in sequence, as one
``ppmlib.mechanism.lineup`` (LW's weights come from the unweighted fit, the re-weighted LW_final, the
paper's synthesizer, from LW). Jobs are independent and run through :func:`ppmlib.inference.parallel.map_jobs`
(serially, on local worker processes, or on a Dask cluster); each job carries its own seed, so the
tables do not depend on the number of workers.

For Poisson data the same study runs without Stan (:func:`run_exact_study`): with the Gamma prior
the alpha-weighted pseudo posterior is Gamma(a + sum alpha_i y_i, b + sum alpha_i), its draws are
exact (:func:`ppmlib.inference.exact.sample`) and the bounds need only the two extreme draws per distinct value
(:func:`ppmlib.inference.exact.draw_record_bounds`), so databases of 10^5 records cost milliseconds. There a
fourth synthesizer, "Capped", weights the unweighted fit's records by alpha_i = min(1, cap / f_i)
with a cap fixed before the data are seen (re-weighting of the unweighted synthesizer to a fixed
Delta, one step, no search): the data-independent counterpart of LW_final's cap k Delta_LW.
"""
from __future__ import annotations

__all__ = ["DESIGNS", "DEFAULT_DESIGN_SETTINGS", "SYNTHESIZERS", "EXACT_SYNTHESIZERS", "database", "run_database",
           "Study", "run_study", "contraction", "exceedance", "estimate_global_delta", "rank_correlation",
           "exact_database", "run_exact_study", "exact_twin", "twin_agreement", "formula_agreement", "share_above", "with_formula",
           "fit_summary", "passing", "separation", "against_values", "contraction_by_model"]

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppmlib.inference import exact
from ppmlib.mechanism import lineup
from ppmlib.datasets import simulate
from ppmlib.evaluate import utility
from ppmlib import _checks
from ppmlib.errors import CalibrationFailed
from ppmlib.mechanism.synthesis import match_delta
from ppmlib.inference.diagnostics import is_ok
from ppmlib.inference.posterior import Sampler, _sampler
from ppmlib.inference.parallel import map_jobs
from ppmlib.mechanism.reweighting import saturation_k
from ppmlib.seeding import seeds
from ppmlib.mechanism.weights import lw_delta_formula, lw_weights, reweight
from ppmlib.errors import BadArgument

# Generating models: how a database is drawn, and which synthesizer family fits it.
DESIGNS = {
    "poisson": {"label": "Poisson", "synthesizer": "poisson"},
    "nb_mixture": {"label": "NB mixture", "synthesizer": "negbin"},
}
DEFAULT_DESIGN_SETTINGS = {"mu": 100.0, "mix_mus": (100.0, 100.0), "mix_phis": (5.0, 20.0), "mix_probs": (0.2, 0.8)}

#: The synthesizers a Stan study can run (standard members of ``ppmlib.mechanism.lineup``), in run order. A
#: database's seed is split into a data seed and one seed per entry, in this order, so a synthesizer
#: keeps its seed whichever others are asked for (and the first j seeds do not depend on the length).
SYNTHESIZERS = ("Unweighted", "LW", "LW_final")
#: The exact (Poisson, no Stan) study's synthesizers: the same three, then the data-independent cap.
EXACT_SYNTHESIZERS = SYNTHESIZERS + ("Capped",)


def _members(names, s: dict) -> list:
    """The lineup of one database: LW at (c, g), LW_final re-weighted to within tau of LW's Delta."""
    settings = {"Unweighted": {}, "LW": {"c": s["c"], "g": s["g"]},
                "LW_final": {"tau": s["tau"], "k0": s["k0"], "max_iter": s["max_iter"]}}
    return [lineup.member(name, **settings[name]) for name in names]


def database(design: str, n: int, seed: int, settings: dict | None = None) -> np.ndarray:
    """One confidential database of size n from a generating model ("poisson" or "nb_mixture")."""
    s = {**DEFAULT_DESIGN_SETTINGS, **(settings or {})}
    if design == "poisson":
        return simulate.poisson(n, s["mu"], seed)
    if design == "nb_mixture":
        return simulate.nb_mixture(n, s["mix_mus"], s["mix_phis"], s["mix_probs"], seed)
    raise BadArgument(f"unknown generating model {design!r}; choose one of {sorted(DESIGNS)}")


def run_database(job: dict) -> dict:
    """One Monte Carlo job: draw database r, run the synthesizers, return small results only.

    ``job`` holds design, n, r, seed, synthesizers and settings (see :func:`run_study`). Returns
    the local Delta, the share of records whose weight is below 1, the database's extreme risks
    f_min and f_max (from the unweighted fit: LW's Delta follows them, :func:`ppmlib.mechanism.weights.lw_delta_formula`)
    and the fit's diagnostics per synthesizer, and the estimands (mean, median, 15th and 90th
    percentiles) of the confidential data and of each synthesizer's synthetic data (averaged over
    its m datasets), never the data themselves. A re-weighting that does not reach its tolerance
    is kept as a row with Delta NaN and ``converged`` False (the other synthesizers are kept).
    """
    s = job["settings"]
    data_seed, *step_seeds = seeds(job["seed"], 1 + len(SYNTHESIZERS))
    y = database(job["design"], job["n"], data_seed, s)
    model = DESIGNS[job["design"]]["synthesizer"]
    names = [name for name in SYNTHESIZERS if name in job["synthesizers"]]
    key = {"model": DESIGNS[job["design"]]["label"], "n": job["n"], "r": job["r"], "seed": job["seed"]}
    run = dict(m=s["m"], sampler=s["sampler"], progress=False)
    seed_of = dict(zip(SYNTHESIZERS, step_seeds))
    first = [n for n in names if n != "LW_final"]
    done = dict(lineup.run(_members(first, s), model, y, seed=[seed_of[n] for n in first], **run))
    if "LW_final" in names:
        try:   # a re-weighting that misses its tolerance loses its own row, not the fits made before it
            done.update(lineup.run(_members(["LW_final"], s), model, y, seed=[seed_of["LW_final"]], given=done, **run))
        except CalibrationFailed:
            pass
    f = done["Unweighted"].bounds                       # f_i = max_s abs(f_s(x_i)): the unweighted bounds
    key.update(f_min=float(f.min()), f_max=float(f.max()))
    deltas = []
    estimands = utility.statistics(y).iloc[0].rename("Data").to_frame().T
    for name in names:
        if name not in done:
            deltas.append({**key, "synthesizer": name, "delta": np.nan, "epsilon": np.nan, "converged": False})
            continue
        result, d = done[name], done[name].diagnostics
        deltas.append({**key, "synthesizer": name, "delta": result.delta, "epsilon": result.epsilon,
                       "share down-weighted": float(np.mean(result.weights < 1)), "converged": True,
                       "k": result.settings.get("k", np.nan),
                       "max_rhat": d["max_rhat"], "min_ess_bulk": d["min_ess_bulk"], "min_ess_tail": d["min_ess_tail"],
                       "divergences": d["divergences"], "ok": is_ok(d)})
        estimands.loc[name] = utility.statistics(result.synthetic).mean()
    long = estimands.rename_axis("source").reset_index().melt(id_vars="source", var_name="statistic")
    key.pop("seed"), key.pop("f_min"), key.pop("f_max")
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

    def passing(self) -> "Study":
        """The databases whose every fit passes the diagnostics gate (:func:`passing`)."""
        deltas = passing(self.deltas)
        keys = ["model", "n", "r"]
        kept = self.estimands.merge(deltas[keys].drop_duplicates(), on=keys)
        return Study(deltas, kept, self.settings)


def _synthesizer_names(names, argument: str, available=SYNTHESIZERS) -> list:
    names = [names] if isinstance(names, str) else list(names)
    for name in names:
        if name not in available:
            raise BadArgument(f"unknown synthesizer {name!r} in {argument}; available: {list(available)}")
        base = lineup.STANDARD[name].base if name in lineup.STANDARD else "Unweighted"
        if base is not None and base not in names:
            raise BadArgument(f"synthesizer {name!r} in {argument} needs {[base]} in {argument} as well")
    return names


def run_study(models=("poisson", "nb_mixture"), *, n: int = 1000, R: int = 100, n_values=(), R_sweep: int = 30,
              synthesizers=("Unweighted", "LW"), sweep_models=None, sweep_synthesizers=None, seed: int = 0,
              c: float = 1.0, g: float = 0.0, tau: float = 0.25, k0: float = 0.95, max_iter: int = 12, m: int = 5,
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
    synthesizers : names from ``SYNTHESIZERS`` (standard members of ``ppmlib.mechanism.lineup``), run in
        that order on each database; LW needs Unweighted, LW_final needs LW
    sweep_models, sweep_synthesizers : the models and synthesizers of the sweep's other sizes
        (default: ``models`` and ``synthesizers``); the main study always runs all of them
    seed : one number reproduces every database, fit and synthetic dataset; job k of the list
        (model, size, r) over *all* models and sizes, in that order, gets ``ppmlib.seeds(seed, K)[k]``,
        so leaving a model out of the sweep changes no other job's seed
    c, g : LW scale and shift
    tau, k0, max_iter : LW_final's re-weighting (:func:`ppmlib.reweight_to_tolerance`): the tolerance
        on Delta, the first k and the most refits
    m : synthetic datasets per synthesizer and database
    sampler : :class:`ppmlib.Sampler`, the NUTS settings of every fit (default 4 chains x 1000 draws)
    design_settings : mu, mix_mus, mix_phis, mix_probs (defaults: 100; (100, 100), (5, 20), (0.2, 0.8))
    n_jobs, client : parallel execution (see :func:`ppmlib.inference.parallel.map_jobs`)

    Returns
    -------
    Study
        deltas (one row per database and synthesizer) and estimands (long table)

    See Also
    --------
    contraction : the spread of the local bounds per n.
    estimate_global_delta, exceedance : a global Delta and the share pi of databases above it.
    run_exact_study : the Poisson study without Stan, to any n.
    ppmlib.inference.parallel.map_jobs : how the databases are run.

    Examples
    --------
    >>> study = run_study(["poisson"], n=200, R=4, sampler=ppmlib.Sampler(chains=2, draws=200, warmup=200),
    ...                   progress=False)  # doctest: +SKIP
    >>> study.deltas.groupby("synthesizer")["delta"].median()  # doctest: +SKIP
    """
    models = [models] if isinstance(models, str) else list(models)
    sweep_models = models if sweep_models is None else ([sweep_models] if isinstance(sweep_models, str)
                                                        else list(sweep_models))
    for design in [*models, *sweep_models]:
        if design not in DESIGNS:
            raise BadArgument(f"unknown generating model {design!r} in models; choose from {sorted(DESIGNS)}")
    synthesizers = _synthesizer_names(synthesizers, "synthesizers")
    sweep_synthesizers = synthesizers if sweep_synthesizers is None else \
        _synthesizer_names(sweep_synthesizers, "sweep_synthesizers")
    n = _checks.integer(n, "n", low=2)
    R = _checks.integer(R, "R", low=1)
    R_sweep = _checks.integer(R_sweep, "R_sweep", low=1)
    sizes = sorted({n, *(_checks.integer(v, "n_values entry", low=2) for v in n_values)})
    settings = {"c": _checks.real(c, "c", low=0), "g": _checks.real(g, "g"), "m": _checks.integer(m, "m", low=1),
                "tau": _checks.real(tau, "tau", low=0, low_open=True), "k0": _checks.real(k0, "k0", low=0, low_open=True),
                "max_iter": _checks.integer(max_iter, "max_iter", low=1), "sampler": _sampler(sampler),
                **DEFAULT_DESIGN_SETTINGS, **(design_settings or {})}
    keys = [(design, size, r) for design in models for size in sizes for r in range(R if size == n else R_sweep)]
    job_seeds = seeds(_checks.integer(seed, "seed", low=0), len(keys))
    jobs = [{"design": d, "n": size, "r": r, "seed": js, "settings": settings,
             "synthesizers": tuple(synthesizers if size == n else sweep_synthesizers)}
            for (d, size, r), js in zip(keys, job_seeds) if size == n or d in sweep_models]
    results = map_jobs(run_database, jobs, n_jobs=n_jobs, client=client, progress=progress,
                       desc=f"{len(jobs)} databases")
    deltas = pd.DataFrame([row for res in results for row in res["deltas"]])
    estimands = pd.DataFrame([row for res in results for row in res["estimands"]])
    args = {"models": models, "n": n, "R": R, "n_values": sizes, "R_sweep": R_sweep, "synthesizers": synthesizers,
            "sweep_models": sweep_models, "sweep_synthesizers": sweep_synthesizers, "seed": seed, **settings}
    return Study(deltas, estimands, args)


def contraction(deltas: pd.DataFrame, max_databases: int | None = None) -> pd.DataFrame:
    """Spread of the local bounds per (model, synthesizer, n): databases, min, median, 95th
    percentile, max, the range max - min (the paper's contraction measure), and the two measures of
    spread that do not grow with the number of databases: the sd and the interquartile range (IQR).
    With a ``share down-weighted`` column in ``deltas``, also its mean (the theorem's condition).

    ``max_databases`` keeps only databases r < max_databases at every n: the range of R values
    grows with R, so sizes are compared on the same number of databases.

    See Also
    --------
    run_study, run_exact_study : make ``deltas`` (``ppmlib.plots.contraction_over_n`` draws this table).
    """
    if max_databases is not None:
        deltas = deltas[deltas["r"] < _checks.integer(max_databases, "max_databases", low=1)]
    grouped = deltas.groupby(["model", "synthesizer", "n"], sort=False)["delta"]
    table = pd.DataFrame({"databases": grouped.count(), "min": grouped.min(), "median": grouped.median(),
                          "95th pct": grouped.quantile(0.95), "max": grouped.max()})
    table["max - min"] = table["max"] - table["min"]
    table["25th pct"], table["75th pct"] = grouped.quantile(0.25), grouped.quantile(0.75)
    table["sd"] = grouped.std()
    table["IQR"] = table["75th pct"] - table["25th pct"]
    if "share down-weighted" in deltas:
        table["share down-weighted"] = deltas.groupby(["model", "synthesizer", "n"], sort=False)["share down-weighted"].mean()
    return table


def exceedance(deltas: pd.DataFrame, global_delta: dict) -> pd.DataFrame:
    """Share of databases whose local Delta exceeds a global value: the pi of (epsilon, pi).

    ``global_delta`` maps (model, synthesizer) to a value; returns one row per (model,
    synthesizer, n) with the global Delta, epsilon = 2 Delta, the share above it and its two-sided
    95% Clopper-Pearson interval (:func:`ppmlib.evaluate.audit.clopper_pearson`).
    """
    rows = []
    for (model, name, size), group in deltas.groupby(["model", "synthesizer", "n"]):
        if (model, name) not in global_delta:
            continue
        value = float(global_delta[(model, name)])
        share, low, high, _ = _share_above(group["delta"], value)
        rows.append({"model": model, "synthesizer": name, "n": size, "global Delta": value,
                     "epsilon": 2 * value, "share above (pi)": share, "pi 95% low": low, "pi 95% high": high})
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
        raise BadArgument(f"no synthesizer {missing} in deltas; have {list(wide.columns)}")
    corr = wide.groupby(level=["model", "n"]).apply(lambda g: g[first].corr(g[second], method="spearman"))
    return corr.unstack("n")


def fit_summary(deltas: pd.DataFrame) -> pd.DataFrame:
    """The fits' diagnostics per (model, synthesizer): number of fits, worst R-hat, smallest bulk
    and tail ESS, the total of divergent transitions, and the number of fits that fail the
    diagnostics gate (:func:`ppmlib.inference.diagnostics.is_ok`), over every database and size in ``deltas``.

    Parameters
    ----------
    deltas : pandas.DataFrame
        A Stan study's deltas (max_rhat, min_ess_bulk, min_ess_tail, divergences, ok).

    Returns
    -------
    pandas.DataFrame
        One row per (model, synthesizer): fits, worst_rhat, smallest_bulk_ess, smallest_tail_ess,
        divergences, failing.
    """
    return deltas.assign(failing=~deltas["ok"].astype(bool)).groupby(["model", "synthesizer"]).agg(
        fits=("delta", "size"), worst_rhat=("max_rhat", "max"), smallest_bulk_ess=("min_ess_bulk", "min"),
        smallest_tail_ess=("min_ess_tail", "min"), divergences=("divergences", "sum"), failing=("failing", "sum"))


def passing(deltas: pd.DataFrame) -> pd.DataFrame:
    """The rows of the databases whose every fit passes the diagnostics gate
    (:func:`ppmlib.inference.diagnostics.is_ok`): the claims computed from Stan fits use only these.

    Parameters
    ----------
    deltas : pandas.DataFrame
        A Stan study's deltas (model, n, r, ok); a re-weighting that did not converge (no fit) does
        not exclude its database.

    Returns
    -------
    pandas.DataFrame
        The rows of the databases (model, n, r) none of whose fits fails the gate.
    """
    failed = deltas["converged"].astype(bool) & ~deltas["ok"].fillna(False).astype(bool)
    bad = failed.groupby([deltas["model"], deltas["n"], deltas["r"]]).transform("any")
    return deltas[~bad]


def _bounds_of(deltas: pd.DataFrame, model: str, name: str) -> pd.Series:
    chosen = deltas.loc[(deltas["model"] == model) & (deltas["synthesizer"] == name), "delta"]
    if chosen.empty:
        raise BadArgument(f"no local bounds of synthesizer {name!r} for model {model!r} in deltas")
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
                               "share above (pi)": _share_above(bounds, value)[0], "min": bounds.min(),
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


def _share_above(bounds: pd.Series, value: float) -> tuple[float, float, float, int]:
    """The share of databases whose bound exceeds ``value`` (NaN bounds left out), its 95%
    Clopper-Pearson interval (:func:`ppmlib.evaluate.audit.clopper_pearson`) and the number of databases."""
    from ppmlib.evaluate.audit import clopper_pearson
    bounds = bounds.dropna()
    above, total = int((bounds > value).sum()), int(bounds.size)
    low, high = clopper_pearson(above, total)
    return above / total, low, high, total


# ---------------------------------------------------------------------------------------------
# the exact Poisson study to n = 10^5: LW_final, the fixed cap, and LW's Delta in closed form
# ---------------------------------------------------------------------------------------------

@dataclass
class _ExactRefit:
    """What :func:`ppmlib.match_delta` needs of a refit: its Delta (it writes ``calibration``)."""
    delta: float
    weights: np.ndarray
    calibration: dict = field(default_factory=dict)


def exact_database(y, seed: int, *, c: float = 1.0, g: float = 0.0, tau: float = 0.25, k0: float = 0.95,
                   max_iter: int = 12, cap: float = 3.5, draws: int = 4000) -> list:
    """Unweighted, LW, LW_final and Capped on one Poisson database, with exact draws (no Stan).

    The pipeline is the Stan study's (:func:`run_database`): LW's weights from the unweighted
    draws' f_i = max_s abs(f_s(y_i)); LW_final re-weights LW by Algorithm 1 of the 2025 paper
    (:func:`ppmlib.reweight`, k searched by :func:`ppmlib.match_delta` from ``k0`` until Delta
    is within ``tau`` of LW's, as :func:`ppmlib.reweight_to_tolerance` does with Stan refits);
    Capped weights alpha_i = min(1, cap / f_i), ``cap`` fixed in advance. Every "fit" is ``draws``
    exact draws of the Gamma pseudo posterior (:func:`ppmlib.inference.exact.draw_record_bounds`), one seed per
    synthesizer split from ``seed`` as in :func:`run_database` (the data seed first), so the same
    job seed gives the same database as the Stan study.

    Parameters
    ----------
    y : array_like, shape (n,)
        The database (counts).
    seed : int
        The database's job seed.
    c, g, tau, k0, max_iter : float, float, float, float, int
        LW's scale and shift; LW_final's tolerance, first k and most refits.
    cap : float
        The Capped synthesizer's fixed Delta target.
    draws : int
        Exact draws per fit.

    Returns
    -------
    list of dict
        One row per synthesizer: delta, epsilon = 2 delta, share down-weighted (alpha_i < 1),
        converged (False when LW_final's search fails; its delta is then NaN), k (LW_final's final
        k), and the database's f_min and f_max.
    """
    from ppmlib.mechanism.weights import min_max_scale, risk_to_weight
    # a record's weight and bound depend on it only through its value: work on the distinct values
    values, counts = np.unique(_checks.counts(y), return_counts=True)
    cap = _checks.real(cap, "cap", low=0, low_open=True)
    unweighted_seed, lw_seed, final_seed, cap_seed = seeds(seed, 1 + len(EXACT_SYNTHESIZERS))[1:]

    def refit(weights, step_seed):
        return exact.draw_record_bounds(values, weights, draws, step_seed, counts=counts)

    f = refit(None, unweighted_seed)                      # f_i: the unweighted bounds, all finite for Poisson
    alpha_lw = risk_to_weight(min_max_scale(f), c, g)     # lw_weights on these f_i (lw_risks then the map)
    lw_bounds = refit(alpha_lw, lw_seed)

    def make(k):
        weights = reweight(alpha_lw, lw_bounds, k)
        return _ExactRefit(float(refit(weights, final_seed).max()), weights)

    try:
        final = match_delta(make, float(lw_bounds.max()), k0, 0.0, saturation_k(alpha_lw, lw_bounds), parameter="k",
                            atol=tau, max_iter=max_iter, progress=False)
    except CalibrationFailed:
        final = None
    # cap / f_i is one re-weighting step of the unweighted synthesizer: k Delta / Delta_i with k = cap / max f
    alpha_cap = reweight(np.ones(values.size), f, cap / f.max())
    results = {"Unweighted": (np.ones(values.size), f), "LW": (alpha_lw, lw_bounds),
               "Capped": (alpha_cap, refit(alpha_cap, cap_seed))}
    if final is not None:
        results["LW_final"] = (final.weights, refit(final.weights, final_seed))
    key = {"f_min": float(f.min()), "f_max": float(f.max())}
    rows = []
    for name in EXACT_SYNTHESIZERS:
        if name not in results:
            rows.append({"synthesizer": name, "delta": np.nan, "epsilon": np.nan, "converged": False, **key})
            continue
        weights, bounds = results[name]
        delta = float(bounds.max())
        rows.append({"synthesizer": name, "delta": delta, "epsilon": 2.0 * delta,
                     "share down-weighted": float(counts[weights < 1].sum() / counts.sum()), "converged": True,
                     "k": final.calibration["value"] if name == "LW_final" else np.nan, **key})
    return rows


def _exact_job(job: dict) -> list:
    data_seed = seeds(job["seed"], 1 + len(EXACT_SYNTHESIZERS))[0]
    y = database("poisson", job["n"], data_seed, {"mu": job["mu"]})
    key = {"model": "Poisson", "mu": job["mu"], "n": job["n"], "r": job["r"], "seed": job["seed"]}
    return [{**key, **row} for row in exact_database(y, job["seed"], **job["settings"])]


def run_exact_study(n_values=(1000,), *, R: int = 200, mus=(100.0,), seed: int = 0, c: float = 1.0, g: float = 0.0,
                    tau: float = 0.25, k0: float = 0.95, max_iter: int = 12, cap: float = 3.5, draws: int = 4000,
                    n_jobs: int = 1, client=None, progress: bool = True) -> pd.DataFrame:
    """The Poisson study with exact draws: R databases per (mu, n), Unweighted, LW, LW_final and Capped.

    Parameters
    ----------
    n_values : sizes of the databases (any n: 10^5 records cost milliseconds)
    R : databases per (mu, n)
    mus : Poisson means of the generating model (the papers do not state theirs)
    seed : job k of the list (mu, n, r), in that order, gets ``ppmlib.seeds(seed, K)[k]``
    c, g, tau, k0, max_iter, cap, draws : as for :func:`exact_database`
    n_jobs, client, progress : parallel execution (:func:`ppmlib.inference.parallel.map_jobs`)

    Returns
    -------
    pandas.DataFrame
        One row per (mu, n, r, synthesizer), the columns of :func:`exact_database` plus model, mu,
        n, r and the job seed; the same layout as :attr:`Study.deltas`, so :func:`contraction`,
        :func:`exceedance` and :func:`share_above` take it.

    See Also
    --------
    exact_twin : the same pipeline on the Stan study's Poisson databases, to check one against the other.
    """
    sizes = sorted({_checks.integer(v, "n_values entry", low=2) for v in n_values})
    mus = [_checks.real(v, "mus entry", low=0, low_open=True) for v in mus]
    R = _checks.integer(R, "R", low=1)
    settings = {"c": _checks.real(c, "c", low=0), "g": _checks.real(g, "g"),
                "tau": _checks.real(tau, "tau", low=0, low_open=True), "k0": _checks.real(k0, "k0", low=0, low_open=True),
                "max_iter": _checks.integer(max_iter, "max_iter", low=1), "cap": _checks.real(cap, "cap", low=0, low_open=True),
                "draws": _checks.integer(draws, "draws", low=2)}
    keys = [(mu, size, r) for mu in mus for size in sizes for r in range(R)]
    job_seeds = seeds(_checks.integer(seed, "seed", low=0), len(keys))
    jobs = [{"mu": mu, "n": size, "r": r, "seed": js, "settings": settings} for (mu, size, r), js in zip(keys, job_seeds)]
    results = map_jobs(_exact_job, jobs, n_jobs=n_jobs, client=client, progress=progress,
                       desc=f"{len(jobs)} exact databases")
    return pd.DataFrame([row for rows in results for row in rows])


def exact_twin(study: Study, draws: int = 4000) -> pd.DataFrame:
    """The exact pipeline on every Poisson database of a Stan study: the two routes side by side.

    Each database is rebuilt from its job seed (:func:`exact_database` splits it as
    :func:`run_database` does) and run with the study's c, g, tau, k0 and max_iter. Returns one row per
    (n, r, synthesizer) with the Stan and the exact Delta; they differ by Monte Carlo error only (the
    two routes use different random draws of the same pseudo posterior).
    """
    s = study.settings
    stan = study.deltas[study.deltas["model"] == "Poisson"]
    if stan.empty:
        raise BadArgument("the study has no Poisson databases to rebuild")
    rows = []
    for (size, r, job_seed), group in stan.groupby(["n", "r", "seed"]):
        y = database("poisson", int(size), seeds(int(job_seed), 1 + len(EXACT_SYNTHESIZERS))[0], s)
        exact_rows = {row["synthesizer"]: row["delta"] for row in exact_database(
            y, int(job_seed), c=s["c"], g=s["g"], tau=s["tau"], k0=s["k0"], max_iter=s["max_iter"], draws=draws)}
        rows += [{"n": size, "r": r, "synthesizer": name, "Stan": delta, "exact": exact_rows[name]}
                 for name, delta in zip(group["synthesizer"], group["delta"])]
    return pd.DataFrame(rows)


def twin_agreement(twin: pd.DataFrame, mismatched: bool = False) -> tuple[float, float]:
    """How far an :func:`exact_twin` table's Stan bounds sit from the exact ones.

    Parameters
    ----------
    twin : pandas.DataFrame
        :func:`exact_twin`'s table (synthesizer, Stan, exact).
    mismatched : bool
        Hold each Stan bound against the exact bound of the previous database of its synthesizer
        (the first against the last): the agreement a comparison would show if it did not pair the same
        databases.

    Returns
    -------
    tuple of float
        The largest abs(median - 1) of Stan / exact over the synthesizers, and the largest
        abs(Stan / exact - 1) over the rows.
    """
    exact = _rolled(twin["exact"], twin["synthesizer"]) if mismatched else twin["exact"]
    ratio = twin["Stan"] / exact
    return float((ratio.groupby(twin["synthesizer"]).median() - 1).abs().max()), float((ratio - 1).abs().max())


def _rolled(values: pd.Series, groups) -> pd.Series:
    """Each value replaced by the previous one of its group (the first by the last): a pairing that
    keeps every group's values but breaks the link between a row and its own database."""
    return values.groupby(groups).transform(lambda v: np.roll(v.to_numpy(), 1))


def formula_agreement(rows: pd.DataFrame, by=("n",), mismatched: bool = False) -> tuple[float, float]:
    """How closely LW's local Delta follows its closed form (:func:`with_formula` rows), per group.

    Parameters
    ----------
    rows : pandas.DataFrame
        :func:`with_formula`'s rows of one model (delta, formula and the columns ``by``).
    by : sequence of str
        The groups (databases of one size, one route): the rank correlation is taken within each,
        so that the drift of both quantities with n does not make it.
    mismatched : bool
        Hold each Delta against the closed form of the previous database of its group: the
        agreement if Delta were not tied to its own database's extremes.

    Returns
    -------
    tuple of float
        The largest abs(median - 1) of Delta / formula over the groups, and the smallest Spearman
        correlation of Delta with the formula within a group.
    """
    groups = [rows[b] for b in by]
    formula = _rolled(rows["formula"], groups) if mismatched else rows["formula"]
    off = (rows["delta"] / formula).groupby(groups).median().sub(1).abs().max()
    ranks = pd.DataFrame({"delta": rows["delta"], "formula": formula}).groupby(groups).apply(
        lambda d: d["delta"].corr(d["formula"], method="spearman"))
    return float(off), float(ranks.min())


def share_above(deltas: pd.DataFrame, value: float, by=("model", "synthesizer", "n")) -> pd.DataFrame:
    """Share of databases whose local Delta exceeds ``value``, per group ``by``, with its 95%
    Clopper-Pearson interval, and the median and sd of the bounds (NaN bounds are left out)."""
    value = _checks.real(value, "value")
    by = list(by)
    rows = {}
    for key, group in deltas.dropna(subset=["delta"]).groupby(by):
        share, low, high, total = _share_above(group["delta"], value)
        rows[key] = {"databases": total, f"share above {value:g}": share, "95% low": low, "95% high": high,
                     "median": group["delta"].median(), "sd": group["delta"].std()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(by)


def with_formula(deltas: pd.DataFrame, c: float = 1.0, g: float = 0.0) -> pd.DataFrame:
    """LW's rows of ``deltas`` with the closed form :func:`ppmlib.mechanism.weights.lw_delta_formula` of each
    database's (f_min, f_max) beside its Delta, and their ratio."""
    lw = deltas[deltas["synthesizer"] == "LW"].copy()
    lw["formula"] = [lw_delta_formula(lo, hi, c, g) for lo, hi in zip(lw["f_min"], lw["f_max"])]
    lw["Delta / formula"] = lw["delta"] / lw["formula"]
    return lw
