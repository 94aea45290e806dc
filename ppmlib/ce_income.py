"""The CE income application (CE paper, sections 3.1-4.3 and Appendix 6.1; the book's CE income chapter).

Log family income is synthesized from categorical predictors by one model (the finite mixture of
regressions, or the normal regression as a baseline) under the synthesizers of the book's lineup
(``ppmlib.lineup``), each shown with the CE paper's name:

* **Unweighted**: alpha = 1;
* **LW (DPweighted)**: alpha_i = clip(c (1 - r_i) + g, 0, 1), r_i the min-max scaled
  max_s abs(f_s(y_i)) of the unweighted fit (:func:`ppmlib.lw_weights`);
* **LW_final**: LW re-weighted at equal Delta (the 2025 paper's Algorithm 1, :func:`ppmlib.reweight_to_tolerance`);
* **SW (EMweighted)**: one scalar weight a for every record (the exponential mechanism with the
  log-likelihood as utility), matched so that its Delta equals LW's;
* **CW (Countweighted)**: alpha_i = clip(c (1 - IR_i) + g, 0, 1), IR_i the share of records whose
  log income lies outside a radius of record i's (:func:`ppmlib.cw_weights`), with its own Delta
  (the CE paper does not match it). The radius follows a rule fixed before any result is seen:
  a multiple of the standard deviation of log income (:func:`cw_radius`).

Two estimators of Delta: the maximum over all draws (q = 1; a rare draw's value, which grows
with the number of draws), and the paper's L* (section 3.1): the q-quantile of the per-draw
maxima m_s = max_i alpha_i abs(f_s(y_i)), with the draws above it dropped from synthesis and from
the unweighted draws that set LW's risks (:func:`with_quantile_bound`).

:func:`run` runs the lineup, :func:`truncation_sweep` the draw truncation of section 3.1,
:func:`cg_sweep` the risk-utility map of section 4.3 (with replicate refits for each estimator's
refit noise), :func:`barycenter_table` the paper's utility (the Wasserstein barycenter of the m
datasets' resampling distributions) and :func:`claims` checks the paper's statements on the
results, asserting only those computed from fits that pass the diagnostics gate.
"""
from __future__ import annotations

__all__ = ["NAMES", "PAPER_CG_DELTAS", "cw_radius", "members", "run", "passes_gate", "with_quantile_bound",
           "barycenter", "barycenter_table", "resampled_statistic", "dollars", "truncation_sweep", "truncation_table",
           "cg_sweep", "cg_table", "cg_long", "model_table", "dominated_pairs", "claims"]

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from . import _checks
from . import lineup as _lineup
from .claims import Claims
from .diagnostics import is_ok
from .lipschitz import epsilon, kept_draws, quantile_bound, truncated_bounds
from .mechanism import Synthesis, match_delta, synthesizer
from .posterior import Sampler
from .progress import progress_bar
from .seeding import seeds
from .utility import STATISTICS, bootstrap, centre

if TYPE_CHECKING:
    import pandas as pd

#: The chapter's synthesizers, in the lineup's order (the paper's names are their aliases).
NAMES = ("Unweighted", "LW", "LW_final", "SW", "CW")
# the CE paper's Table 2: Delta of DPweighted on the real CE data for each (c, g)
PAPER_CG_DELTAS = {(0.7, 0.0): 10.10, (0.6, 0.0): 8.16, (0.6, -0.1): 7.30, (0.5, 0.0): 6.09, (0.5, -0.1): 5.71}


def cw_radius(y, sds: float = 1.0) -> float:
    """CW's radius on the log scale: ``sds`` standard deviations of log income.

    A rule fixed before any synthesizer is run (it looks at the spread of the data, not at any
    Delta or utility), so CW's place among the synthesizers is not tuned. Like every CW setting
    it depends on the confidential data and is outside the guarantee.
    """
    y = _checks.finite_array(y, "y", ndim=1)
    return float(_checks.real(sds, "sds", low=0, low_open=True) * y.std(ddof=1))


def members(*, c: float = 0.7, g: float = 0.0, radius: float, tau: float = 0.1, rtol: float = 0.05,
            max_iter: int = 12) -> tuple:
    """The chapter's lineup: Unweighted, LW (DPweighted) at (c, g), LW_final (LW re-weighted to within
    ``tau`` of its Delta), SW (EMweighted) matched to LW's Delta within ``rtol``, CW (Countweighted) at
    ``radius`` (scale 1, shift 0)."""
    return (_lineup.member("Unweighted"),
            _lineup.member("LW", c=c, g=g, alias="DPweighted"),
            _lineup.member("LW_final", tau=tau, max_iter=max_iter),
            _lineup.member("SW", rtol=rtol, max_iter=max_iter, alias="EMweighted"),
            _lineup.member("CW", radius=radius, alias="Countweighted"))


def run(model: str, y, *, X=None, prior: dict | None = None, c: float = 0.7, g: float = 0.0, radius: float,
        tau: float = 0.1, rtol: float = 0.05, max_iter: int = 12, m: int = 20, seed: int = 0, progress: bool = True,
        sampler: Sampler | None = None) -> "_lineup.Results":
    """The chapter's synthesizers (:func:`members`) on one data set (CE paper, section 4.2).

    Parameters
    ----------
    model : "mixture" or "normal"
    y : (n,) log income
    X : (n, P) design matrix (see :func:`ppmlib.design_matrix`)
    prior : the family's prior settings (for the mixture: K, dirichlet_concentration, ...)
    c, g : LW's scale and shift
    radius : CW's radius on the log scale (:func:`cw_radius`)
    tau : LW_final's tolerance on Delta; rtol, max_iter : how closely SW's Delta must match LW's, in how many refits
    m, seed : synthetic datasets per synthesizer; one seed for everything (member j gets ``ppmlib.seeds(seed, 5)[j]``)
    sampler : the NUTS settings (:class:`ppmlib.Sampler`) of every fit

    Returns
    -------
    ppmlib.lineup.Results
        name -> Synthesis in the order of ``NAMES``; ``.labels`` shows the paper's aliases.
    """
    return _lineup.run(members(c=c, g=g, radius=radius, tau=tau, rtol=rtol, max_iter=max_iter), model, y, X=X,
                       prior=prior, m=m, sampler=sampler, seed=seed, progress=progress)


def passes_gate(*results: Synthesis) -> bool:
    """True when every fit passes the diagnostics gate (:func:`ppmlib.diagnostics.is_ok`): claims
    computed from a fit that fails it are reported, not asserted."""
    return all(is_ok(r.diagnostics) for r in results)


def with_quantile_bound(result: Synthesis, q: float, *, seed=0) -> Synthesis:
    """The CE paper's estimator on a fit made with every draw kept (section 3.1).

    Delta is L*, the q-quantile of the per-draw maxima m_s (:func:`ppmlib.lipschitz.quantile_bound`);
    the draws with m_s > L* are dropped from the fit, the by-record bounds and the synthetic
    data (m datasets redrawn from the kept draws with ``seed``). The by-record bounds over the
    kept draws are at most L*. Returns a new Synthesis; ``settings`` record q and "estimator": "L*".
    """
    if result.settings.get("q", 1.0) != 1.0:
        raise ValueError("with_quantile_bound needs a result made with q = 1 (all draws kept); truncate once")
    q = _checks.quantile_level(q)
    keep, bounds = truncated_bounds(result.fit, result.weights, q)
    delta = quantile_bound(result.fit, result.weights, q)
    kept = result.fit.subset(keep)
    m = min(result.synthetic.shape[0], kept.n_draws)
    return replace(result, settings={**result.settings, "q": q, "estimator": "L*"}, fit=kept, bounds=bounds,
                   delta=delta, epsilon=epsilon(delta), synthetic=kept.synthesize(m, seed))


def resampled_statistic(datasets, statistic: str, B: int, seed) -> np.ndarray:
    """A statistic's resampling distribution for each dataset: (m, B), each row sorted.

    ``datasets`` is (m, n); row j holds the statistic on B bootstrap resamples of dataset j.
    """
    d = _checks.finite_array(datasets, "datasets")
    d = d[None, :] if d.ndim == 1 else d
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}; choose one of {sorted(STATISTICS)}")
    rng = np.random.default_rng(seed)  # one stream for all rows: bootstrap takes it as it is
    return np.stack([np.sort(STATISTICS[statistic](bootstrap(row, B, rng))) for row in d])


def barycenter(datasets, statistic: str, B: int, seed) -> np.ndarray:
    """The CE paper's utility distribution: the Wasserstein barycenter of the m datasets'
    resampling distributions of ``statistic``, shape (B,).

    In one dimension the barycenter's quantile function is the average of the quantile functions
    (Srivastava et al., 2015): sort each dataset's B resampled values, average them position by
    position over the m datasets.
    """
    return resampled_statistic(datasets, statistic, B, seed).mean(axis=0)


def barycenter_table(data, synthetic: dict, statistics=("mean", "90th pct"), B: int = 200, seed=0) -> "pd.DataFrame":
    """Long table (source, statistic, value) like :func:`ppmlib.utility.long_table`, for the barycenter.

    ``data`` is the confidential variable (n,) on the scale to judge (dollars); its rows are its
    own B bootstrap values ("Data"). ``synthetic`` maps a name to (m, n) synthetic datasets on the
    same scale; its rows are the B values of the barycenter.
    """
    import pandas as pd

    data = _checks.finite_array(data, "data", ndim=1)
    rows = []
    width = len(synthetic) + 1
    all_streams = seeds(seed, len(statistics) * width)  # one stream per (statistic, source)
    for i, stat in enumerate(statistics):
        streams = all_streams[i * width:(i + 1) * width]
        rows.append(pd.DataFrame({"source": "Data", "statistic": stat,
                                  "value": resampled_statistic(data, stat, B, streams[0])[0]}))
        for (name, sets), stream in zip(synthetic.items(), streams[1:]):
            rows.append(pd.DataFrame({"source": name, "statistic": stat, "value": barycenter(sets, stat, B, stream)}))
    return pd.concat(rows, ignore_index=True)


def dollars(results: dict) -> dict:
    """{name: (m, n) synthetic incomes in dollars}: exp of each synthesizer's synthetic log incomes."""
    return {name: np.exp(r.synthetic) for name, r in results.items()}


def truncation_sweep(result: Synthesis, q_values, *, m: int, seed: int = 0) -> dict:
    """Delta and synthetic data of one weighted fit with its draws truncated at each q (section 3.1).

    For each q: per draw m_s = max_i alpha_i abs(f_s(x_i)); the draws with m_s above the
    q-quantile L* are dropped from the bound and from synthesis; the weights stay those of
    ``result`` (made with q = 1), so only the truncation changes.

    Returns ``{q: {"delta": max over the kept draws, "L*": the quantile itself, "kept": number of
    draws, "synthetic": (m, n)}}``.
    """
    if result.settings.get("q", 1.0) != 1.0:
        raise ValueError("truncation_sweep needs a result made with q = 1 (all draws kept)")
    out = {}
    for q, stream in zip(q_values, seeds(seed, len(q_values))):
        q = _checks.quantile_level(q)
        truncated = with_quantile_bound(result, q, seed=stream)
        out[q] = {"delta": float(truncated.bounds.max()), "L*": truncated.delta, "kept": truncated.fit.n_draws,
                  "synthetic": truncated.synthetic[:m]}
    return out


def truncation_table(sweep: dict, data, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """One row per q: Delta (the maximum over the kept draws, and the paper's L*), epsilon = 2 L*, draws
    kept, and the barycenter's median mean and 90th percentile of income in dollars beside the data's."""
    import pandas as pd

    long = barycenter_table(data, {q: np.exp(v["synthetic"]) for q, v in sweep.items()}, B=B, seed=seed)
    medians = long.groupby(["statistic", "source"])["value"].median()
    rows = [{"q": q, "Delta (max over kept draws)": v["delta"], "L* (paper's Delta)": v["L*"],
             "epsilon = 2 L*": epsilon(v["L*"]), "draws kept": v["kept"], "mean income": medians[("mean", q)],
             "90th pct income": medians[("90th pct", q)]} for q, v in sweep.items()]
    table = pd.DataFrame(rows).set_index("q")
    table.attrs["data"] = {"mean income": medians[("mean", "Data")], "90th pct income": medians[("90th pct", "Data")]}
    return table


ESTIMATORS = ("L*", "max")


def cg_sweep(model: str, y, unweighted: Synthesis, cg_configs, *, estimator: str = "L*", q: float = 0.95,
             replicates: int = 3, X=None, prior: dict | None = None, rtol: float = 0.1, max_iter: int = 12,
             m: int = 20, seed: int = 0, progress: bool = True, sampler: Sampler | None = None) -> list:
    """The risk-utility map (CE paper, section 4.3): LW at each (c, g), SW matched to its Delta,
    and ``replicates`` more LW refits (other seeds, same weights) for the refit noise of Delta.

    ``estimator`` "L*" (the paper's, the default): LW's risks come from the unweighted draws
    truncated at q, and Delta is L*, the q-quantile of the per-draw maxima of the LW fit (its draws
    above L* dropped, :func:`with_quantile_bound`); SW is matched on its own L*. "max": every draw
    is kept and Delta is their maximum. Each replicate refit reports both estimators from the
    same draws. ``unweighted`` is the unweighted Synthesis, made with q = 1.

    Returns a list of ``{"c", "g", "LW": Synthesis, "SW": Synthesis, "replicates": [(max, L*), ...]}``
    in the given order. ``sampler`` (a :class:`ppmlib.Sampler`) is passed on to :func:`ppmlib.synthesizer`.
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    q = _checks.quantile_level(q)
    replicates = _checks.integer(replicates, "replicates", low=0)
    paper = estimator == "L*"
    run = dict(X=X, prior=prior, m=m, sampler=sampler)
    # the paper's R code truncates the unweighted draws that set LW's risks too (once)
    base = unweighted.fit.subset(kept_draws(unweighted.fit, None, q)) if paper else unweighted.fit

    def finish(result, stream):
        return with_quantile_bound(result, q, seed=stream) if paper else result

    out = []
    configs = [tuple(map(float, cg)) for cg in cg_configs]
    streams = np.reshape(seeds(seed, (3 + replicates) * len(configs)), (len(configs), -1))
    for (c, g), (s_lw, s_sw, s_final, *s_rep) in progress_bar(list(zip(configs, streams)), desc="(c, g) configurations",
                                                             enabled=progress):
        lw = finish(synthesizer(model, y, "lw", base=base, c=c, g=g, seed=int(s_lw), name="LW", **run), int(s_final))
        sw = match_delta(lambda a: finish(synthesizer(model, y, "sw", a=a, seed=int(s_sw), name="SW", **run),
                                          int(s_final)),
                         lw.delta, float(np.clip(lw.delta / unweighted.delta, 1e-3, 1.0)), 0.0, 1.0, parameter="a",
                         rtol=rtol, max_iter=max_iter, progress=False)
        refits = [synthesizer(model, y, "lw", base=base, c=c, g=g, seed=int(s), **{**run, "m": 1}) for s in s_rep]
        out.append({"c": c, "g": g, "LW": lw, "SW": sw,
                    "replicates": [(r.delta, quantile_bound(r.fit, r.weights, q)) for r in refits]})
    return out


def cg_table(sweep: list, data, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """One row per (c, g): LW's Delta and epsilon beside the paper's Table 2, the range of each
    estimator over the map's fit and its replicate refits, SW's matched a and Delta, both
    synthesizers' barycenter median of the 90th percentile (dollars), and whether every fit of the
    row passed the diagnostics gate."""
    import pandas as pd

    rows = []
    for row, stream in zip(sweep, seeds(seed, len(sweep))):
        lw, sw = row["LW"], row["SW"]
        long = barycenter_table(data, {"LW": np.exp(lw.synthetic), "SW": np.exp(sw.synthetic)},
                                statistics=("90th pct",), B=B, seed=stream)
        p90 = long.groupby("source")["value"].median()
        paper = PAPER_CG_DELTAS.get((row["c"], row["g"]), np.nan)
        refits = np.array(row["replicates"]).reshape(-1, 2)
        # the map's own fit is one more draw of the map's estimator
        own = lw.delta if lw.settings.get("estimator") == "L*" else None
        l_star = np.append(refits[:, 1], own) if own is not None else refits[:, 1]
        maxima = refits[:, 0] if own is not None else np.append(refits[:, 0], lw.delta)
        rows.append({"c": row["c"], "g": row["g"], "Delta LW": lw.delta, "epsilon = 2 Delta": lw.epsilon,
                     "paper's Delta (real CE)": paper, "L* over refits": _span(l_star),
                     "max over refits": _span(maxima), "SW a": sw.calibration["value"], "Delta SW": sw.delta,
                     "90th pct LW": p90["LW"], "90th pct SW": p90["SW"], "90th pct data": p90["Data"],
                     "gate": "ok" if passes_gate(lw, sw) else "CHECK"})
    return pd.DataFrame(rows)


def _span(values) -> str:
    values = np.asarray(values, float)
    return f"{values.min():.2f}-{values.max():.2f} ({values.size})" if values.size else ""


def cg_long(sweep: list, data, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """Long table of the 90th percentile's barycenter for every (c, g) and synthesizer (LW, SW), with
    a column ``config`` ("(c, g)"), for the overlapping violins of Fig. 5."""
    import pandas as pd

    frames = []
    for row, stream in zip(sweep, seeds(seed, len(sweep))):
        long = barycenter_table(data, {"LW": np.exp(row["LW"].synthetic), "SW": np.exp(row["SW"].synthetic)},
                                statistics=("90th pct",), B=B, seed=stream)
        frames.append(long[long["source"] != "Data"].assign(config=f"({row['c']:g}, {row['g']:g})"))
    return pd.concat(frames, ignore_index=True)


def dominated_pairs(configs) -> list:
    """Pairs (i, j) of (c, g) configurations whose LW weights are ordered for every record.

    alpha = clip(c (1 - r) + g, 0, 1) is linear in r on [0, 1] before clipping, so configuration i
    gives every record at least the weight of j exactly when g_i >= g_j (at r = 1) and
    c_i + g_i >= c_j + g_j (at r = 0); then Delta_i should exceed Delta_j.
    """
    cfg = [tuple(map(float, x)) for x in configs]
    return [(i, j) for i, (ci, gi) in enumerate(cfg) for j, (cj, gj) in enumerate(cfg)
            if i != j and (ci, gi) != (cj, gj) and gi >= gj and ci + gi >= cj + gj]


def claims(results: dict, long, trunc: "pd.DataFrame", cg: "pd.DataFrame", *, rtol: float, tau: float,
           truncation_tol: float = 0.15, into: Claims | None = None) -> Claims:
    """The CE paper's statements (sections 3.1, 4.2, 4.3) checked on this chapter's results.

    ``results`` from :func:`run`; ``long`` the barycenter table of their incomes in dollars (with
    "Data"); ``trunc`` from :func:`truncation_table`; ``cg`` from :func:`cg_table`. ``rtol`` is SW's
    matching tolerance, ``tau`` LW_final's; ``truncation_tol`` the largest relative change of Delta
    that counts as "little different", asserted at the mildest truncation (the largest q below 1).
    A claim is asserted only when every fit it is computed from passes the diagnostics gate
    (:func:`passes_gate`); otherwise it is reported.
    """
    c = into if into is not None else Claims()
    d = {k: r.delta for k, r in results.items()}
    gate = {k: passes_gate(r) for k, r in results.items()}

    def add(claim, paper, ours, holds, names, checked=True):
        c.add(claim, paper, ours, holds, checked=checked and all(gate[n] for n in names))

    weighted = ("LW", "SW", "CW")
    ratio = d["Unweighted"] / max(d[k] for k in weighted)
    add("Unweighted's Delta far above the weighted synthesizers'", "sec. 4.2, Fig. 2: Unweighted clearly highest",
        f"Unweighted / largest weighted = {ratio:.1f}", ratio > 2, ("Unweighted",) + weighted)
    add("Countweighted's Delta above DPweighted's", "sec. 4.2, Fig. 2: CW 'only slightly higher' than DPweighted",
        f"{d['CW']:.2f} vs {d['LW']:.2f}", d["CW"] > d["LW"], ("CW", "LW"))
    gap = abs(d["SW"] / d["LW"] - 1)
    add("EMweighted's Delta equals DPweighted's (matched)", "sec. 4.2: EM set to DPweighted's Delta",
        f"gap {100 * gap:.1f}% (tolerance {100 * rtol:.0f}%)", gap <= rtol, ("SW", "LW"))
    add("LW_final's Delta within tau of LW's (re-weighting at equal privacy)", "2025 paper, Algorithm 1",
        f"{d['LW_final']:.2f} vs {d['LW']:.2f} (tau {tau:g})", abs(d["LW_final"] - d["LW"]) < tau, ("LW_final", "LW"))
    p90 = centre(long).loc["90th pct"]
    err = {k: abs(float(p90[k]) - float(p90["Data"])) for k in NAMES}
    add("EMweighted further from the data's 90th percentile than DPweighted",
        "sec. 4.2, Fig. 4: DPweighted better than EMweighted",
        f"|gap| EM ${err['SW']:,.0f} vs DP ${err['LW']:,.0f}", err["SW"] > err["LW"], ("SW", "LW"))
    add("Countweighted further from the data's 90th percentile than DPweighted",
        "sec. 4.2, Fig. 4: CW's utility worse, 'especially … the 90th quantile'",
        f"|gap| CW ${err['CW']:,.0f} vs DP ${err['LW']:,.0f}", err["CW"] > err["LW"], ("CW", "LW"))
    deltas = cg["Delta LW"].to_numpy()
    configs = list(zip(cg["c"], cg["g"]))
    map_ok = bool((cg["gate"] == "ok").all())
    # one knob at a time: lowering c at a fixed g, or g at a fixed c, lowers every record's weight
    pairs = [(i, j) for i, j in dominated_pairs(configs) if configs[i][0] == configs[j][0] or configs[i][1] == configs[j][1]]
    ordered = [deltas[i] > deltas[j] for i, j in pairs]
    c.add("Delta falls when the scale c falls at a fixed shift g, or g falls at a fixed c",
          "sec. 4.3, Table 2: Delta falls with the scale c and the shift g",
          f"{sum(ordered)} of {len(pairs)} pairs: " + ", ".join(f"{v:.2f}" for v in deltas), all(ordered),
          checked=map_ok)
    c.add("Delta decreases along the paper's (c, g) sequence, in its order",
          "sec. 4.3, Table 2: 10.10, 8.16, 7.30, 6.09, 5.71", ", ".join(f"{v:.2f}" for v in deltas),
          bool(np.all(np.diff(deltas) < 0)), checked=False)
    if len(deltas) > 1:
        ours, paper = deltas[-1] / deltas[0], PAPER_CG_DELTAS[(0.5, -0.1)] / PAPER_CG_DELTAS[(0.7, 0.0)]
        c.add("epsilon falls by about half over the (c, g) range (ratio last / first)",
              f"sec. 4.3: 'a halving', {paper:.2f}", f"{ours:.2f}", 0.35 <= ours <= 0.75, checked=False)
    worse = (cg["90th pct SW"] - cg["90th pct data"]).abs() > (cg["90th pct LW"] - cg["90th pct data"]).abs()
    c.add("EMweighted further from the data's 90th percentile than DPweighted at every (c, g)",
          "sec. 4.3, Fig. 5: DPweighted deteriorates much less", f"{int(worse.sum())} of {len(worse)} configurations",
          bool(worse.all()), checked=False)
    base = trunc["Delta (max over kept draws)"].loc[1.0] if 1.0 in trunc.index else trunc["Delta (max over kept draws)"].iloc[0]
    change = (1 - trunc["L* (paper's Delta)"] / base).abs()
    mildest = max((q for q in trunc.index if q < 1), default=None)
    if mildest is not None:
        add(f"truncating draws at q = {mildest:g} changes Delta (L*) by less than {100 * truncation_tol:.0f}%",
            "sec. 3.1: the truncated bound is 'little different'",
            "change " + ", ".join(f"{100 * change[q]:.1f}% at q = {q:g}" for q in trunc.index if q < 1),
            change[mildest] < truncation_tol, ("LW",))
    return c


def model_table(by_model: dict, data, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """The mixture against the normal regression: for each model and synthesizer, Delta, epsilon
    and the barycenter medians of the mean and 90th percentile of income (dollars) beside the data's.

    ``by_model`` maps a model name to a :func:`run` result.
    """
    import pandas as pd

    rows = []
    for (model, results), stream in zip(by_model.items(), seeds(seed, len(by_model))):
        long = barycenter_table(data, dollars(results), B=B, seed=stream)
        medians = long.groupby(["statistic", "source"])["value"].median()
        for name, r in results.items():
            rows.append({"model": model, "synthesizer": name, "Delta": r.delta, "epsilon": r.epsilon,
                         "mean income": medians[("mean", name)], "90th pct income": medians[("90th pct", name)],
                         "data: mean": medians[("mean", "Data")], "data: 90th pct": medians[("90th pct", "Data")],
                         "gate": "ok" if passes_gate(r) else "CHECK"})
    return pd.DataFrame(rows).set_index(["model", "synthesizer"])
