"""The CE income application (CE paper, sections 3.1-4.3 and Appendix 6.1; the book's CE income chapter).

Log family income is synthesized from categorical predictors by four synthesizers of one model
(the finite mixture of regressions, or the normal regression as a baseline):

* **Unweighted**: alpha = 1;
* **DPweighted**: LW weights alpha_i = clip(c (1 - r_i) + g, 0, 1), r_i the min-max scaled
  max_s abs(f_s(y_i)) of the unweighted fit (:func:`ppmlib.lw_weights`);
* **EMweighted**: one scalar weight a for every record (the exponential mechanism with the
  log-likelihood as utility), a found by :func:`ppmlib.mechanism.match_sw` so that its Delta matches
  DPweighted's;
* **Countweighted**: CW weights alpha_i = clip(c (1 - IR_i) + g, 0, 1), IR_i the share of records whose
  log income lies outside a radius of record i's (:func:`ppmlib.cw_weights`), with its own Delta
  (the CE paper does not match it).

:func:`four_synthesizers` runs them, :func:`truncation_sweep` the draw truncation of section 3.1,
:func:`cg_sweep` the risk-utility map of section 4.3, :func:`barycenter_table` the paper's
utility (the Wasserstein barycenter of the m datasets' resampling distributions) and
:func:`claims` checks the paper's statements on the results.
"""
from __future__ import annotations

__all__ = ["NAMES", "PAPER_CG_DELTAS", "four_synthesizers", "barycenter", "barycenter_table",
           "resampled_statistic", "dollars", "truncation_sweep", "truncation_table", "cg_sweep", "cg_table",
           "cg_long", "model_table", "dominated_pairs", "claims"]

from typing import TYPE_CHECKING

import numpy as np

from .. import _checks
from ..book.claims import Claims
from ..lipschitz import epsilon, truncated_bounds
from ..mechanism import Synthesis, match_sw, synthesizer
from ..posterior import Sampler
from ..progress import progress_bar
from ..seeding import seeds
from ..utility import STATISTICS, bootstrap, centre

if TYPE_CHECKING:
    import pandas as pd

NAMES = ("Unweighted", "DPweighted", "EMweighted", "Countweighted")
# the CE paper's Table 2: Delta of DPweighted on the real CE data for each (c, g)
PAPER_CG_DELTAS = {(0.7, 0.0): 10.10, (0.6, 0.0): 8.16, (0.6, -0.1): 7.30, (0.5, 0.0): 6.09, (0.5, -0.1): 5.71}


def four_synthesizers(model: str, y, *, X=None, c: float = 0.7, g: float = 0.0, cw_radius: float = 1.5,
                      cw_c: float = 1.0, cw_g: float = 0.0, prior: dict | None = None, rtol: float = 0.05,
                      max_iter: int = 12, m: int = 20, seed: int = 0, progress: bool = True,
                      sampler: Sampler | None = None) -> dict:
    """Unweighted, DPweighted, EMweighted and Countweighted on one data set (CE paper, section 4.2).

    Parameters
    ----------
    model : "mixture" or "normal"
    y : (n,) log income
    X : (n, P) design matrix (see :func:`ppmlib.design_matrix`)
    prior : the family's prior settings (for the mixture: K, dirichlet_concentration, ...)
    c, g : DPweighted's LW scale and shift
    cw_radius, cw_c, cw_g : Countweighted's radius on the log scale (a ball of incomes within a
        factor exp(+-radius) of the record's), scale and shift
    rtol, max_iter : how closely EMweighted's Delta must match DPweighted's, in how many refits
    m, seed : synthetic datasets per synthesizer; one seed for everything
    sampler : the NUTS settings (:class:`ppmlib.Sampler`), passed on to every :func:`ppmlib.synthesizer`

    Returns
    -------
    dict
        ``{name: Synthesis}`` in the order Unweighted, DPweighted, EMweighted, Countweighted; each holds
        (m, n) synthetic log incomes.
    """
    run = dict(X=X, prior=prior, m=m, sampler=sampler)
    s = seeds(seed, 4)
    bar = progress_bar(total=4, desc="four synthesizers", enabled=progress)
    unweighted = synthesizer(model, y, "unweighted", seed=s[0], name="Unweighted", **run)
    bar.update(1)
    dp = synthesizer(model, y, "lw", base=unweighted, c=c, g=g, seed=s[1], name="DPweighted", **run)
    bar.update(1)
    em = match_sw(model, y, dp.delta, unweighted.delta, seed=s[2], rtol=rtol, max_iter=max_iter, progress=False,
                  name="EMweighted", **run)
    bar.update(1)
    cw = synthesizer(model, y, "cw", radius=cw_radius, c=cw_c, g=cw_g, seed=s[3], name="Countweighted", **run)
    bar.update(1)
    bar.close()
    return dict(zip(NAMES, (unweighted, dp, em, cw)))


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
    q-quantile are dropped from the bound and from synthesis; the weights stay those of
    ``result`` (made with q = 1), so only the truncation changes.

    Returns ``{q: {"delta": ..., "kept": number of draws, "synthetic": (m, n)}}``.
    """
    if result.settings.get("q", 1.0) != 1.0:
        raise ValueError("truncation_sweep needs a result made with q = 1 (all draws kept)")
    out = {}
    for q, stream in zip(q_values, seeds(seed, len(q_values))):
        q = _checks.quantile_level(q)
        keep, bounds = truncated_bounds(result.fit, result.weights, q)  # abs(alpha f) built once for both
        kept = result.fit.subset(keep)
        out[q] = {"delta": float(bounds.max()), "kept": kept.n_draws,
                  "synthetic": kept.synthesize(min(m, kept.n_draws), stream)}
    return out


def truncation_table(sweep: dict, data, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """One row per q: Delta, epsilon, draws kept, and the barycenter's median mean and 90th
    percentile of income in dollars beside the data's."""
    import pandas as pd

    long = barycenter_table(data, {q: np.exp(v["synthetic"]) for q, v in sweep.items()}, B=B, seed=seed)
    centre = long.groupby(["statistic", "source"])["value"].median()
    rows = [{"q": q, "Delta": v["delta"], "epsilon": epsilon(v["delta"]), "draws kept": v["kept"],
             "mean income": centre[("mean", q)], "90th pct income": centre[("90th pct", q)]} for q, v in sweep.items()]
    table = pd.DataFrame(rows).set_index("q")
    table.attrs["data"] = {"mean income": centre[("mean", "Data")], "90th pct income": centre[("90th pct", "Data")]}
    return table


def cg_sweep(model: str, y, unweighted: Synthesis, cg_configs, *, X=None, prior: dict | None = None,
             done: dict | None = None, rtol: float = 0.05, max_iter: int = 12, m: int = 20, seed: int = 0,
             progress: bool = True, sampler: Sampler | None = None) -> list:
    """The risk-utility map (CE paper, section 4.3): DPweighted at each (c, g), and EMweighted
    matched to its Delta.

    ``unweighted`` is the unweighted Synthesis whose log-likelihood sets the LW risks. ``done``
    (optional) is a :func:`four_synthesizers` result: its DPweighted and EMweighted are reused for
    the configuration equal to DPweighted's own (c, g) instead of being refitted. Returns a list
    of ``{"c", "g", "DPweighted": Synthesis, "EMweighted": Synthesis}``, in the given order.
    ``sampler`` (the NUTS settings, a :class:`ppmlib.Sampler`) is passed on to :func:`ppmlib.synthesizer`.
    """
    run = dict(X=X, prior=prior, m=m, sampler=sampler)
    reuse = {}
    if done is not None:
        reuse[(float(done["DPweighted"].settings["c"]), float(done["DPweighted"].settings["g"]))] = done
    out = []
    configs = [tuple(map(float, cg)) for cg in cg_configs]
    for (c, g), (s_dp, s_em) in progress_bar(list(zip(configs, np.reshape(seeds(seed, 2 * len(configs)), (-1, 2)))),
                                             desc="(c, g) configurations", enabled=progress):
        if (c, g) in reuse:
            out.append({"c": c, "g": g, "DPweighted": reuse[(c, g)]["DPweighted"],
                        "EMweighted": reuse[(c, g)]["EMweighted"]})
            continue
        dp = synthesizer(model, y, "lw", base=unweighted, c=c, g=g, seed=int(s_dp), name="DPweighted", **run)
        em = match_sw(model, y, dp.delta, unweighted.delta, seed=int(s_em), rtol=rtol, max_iter=max_iter,
                      progress=False, name="EMweighted", **run)
        out.append({"c": c, "g": g, "DPweighted": dp, "EMweighted": em})
    return out


def cg_table(sweep: list, data, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """One row per (c, g): DPweighted's Delta and epsilon beside the paper's Table 2, EMweighted's
    matched a and Delta, and both synthesizers' barycenter median of the 90th percentile (dollars)."""
    import pandas as pd

    rows = []
    for row, stream in zip(sweep, seeds(seed, len(sweep))):
        dp, em = row["DPweighted"], row["EMweighted"]
        long = barycenter_table(data, {"DP": np.exp(dp.synthetic), "EM": np.exp(em.synthetic)},
                                statistics=("90th pct",), B=B, seed=stream)
        p90 = long.groupby("source")["value"].median()
        paper = PAPER_CG_DELTAS.get((row["c"], row["g"]), np.nan)
        rows.append({"c": row["c"], "g": row["g"], "Delta DPweighted": dp.delta, "epsilon = 2 Delta": dp.epsilon,
                     "paper's Delta (real CE)": paper, "paper's epsilon": 2 * paper,
                     "EMweighted a": em.calibration["value"], "Delta EMweighted": em.delta,
                     "90th pct DPweighted": p90["DP"], "90th pct EMweighted": p90["EM"], "90th pct data": p90["Data"]})
    return pd.DataFrame(rows)


def cg_long(sweep: list, data, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """Long table of the 90th percentile's barycenter for every (c, g) and synthesizer, with a
    column ``config`` ("(c, g)"), for the overlapping violins of Fig. 5."""
    import pandas as pd

    frames = []
    for row, stream in zip(sweep, seeds(seed, len(sweep))):
        long = barycenter_table(data, {"DPweighted": np.exp(row["DPweighted"].synthetic),
                                       "EMweighted": np.exp(row["EMweighted"].synthetic)},
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


def claims(results: dict, long, trunc: "pd.DataFrame", cg: "pd.DataFrame", *, rtol: float,
           truncation_tol: float = 0.15, into: Claims | None = None) -> Claims:
    """The CE paper's statements (sections 3.1, 4.2, 4.3) checked on this chapter's results.

    ``results`` from :func:`four_synthesizers`; ``long`` the barycenter table of their incomes
    in dollars (with "Data"); ``trunc`` from :func:`truncation_table`; ``cg`` from :func:`cg_table`
    (columns c, g, Delta DPweighted, and the 90th percentiles). ``rtol`` is the EM matching
    tolerance; ``truncation_tol`` the largest relative change of Delta that counts as "little
    different", asserted at the mildest truncation (the largest q below 1).
    """
    c = into if into is not None else Claims()
    d = {k: r.delta for k, r in results.items()}
    ratio = d["Unweighted"] / max(d[k] for k in NAMES[1:])
    c.add("Unweighted's Delta far above the three weighted synthesizers'",
          "sec. 4.2, Fig. 2: Unweighted clearly highest", f"Unweighted / largest weighted = {ratio:.1f}", ratio > 2)
    c.add("Countweighted's Delta above DPweighted's", "sec. 4.2, Fig. 2: CW 'only slightly higher' than DPweighted",
          f"{d['Countweighted']:.2f} vs {d['DPweighted']:.2f}", d["Countweighted"] > d["DPweighted"])
    gap = abs(d["EMweighted"] / d["DPweighted"] - 1)
    c.add("EMweighted's Delta equals DPweighted's (matched)", "sec. 4.2: EM set to DPweighted's Delta",
          f"gap {100 * gap:.1f}% (tolerance {100 * rtol:.0f}%)", gap <= rtol)
    p90 = centre(long).loc["90th pct"]
    err = {k: abs(float(p90[k]) - float(p90["Data"])) for k in NAMES}
    c.add("EMweighted further from the data's 90th percentile than DPweighted",
          "sec. 4.2, Fig. 4: DPweighted better than EMweighted",
          f"|gap| EM ${err['EMweighted']:,.0f} vs DP ${err['DPweighted']:,.0f}", err["EMweighted"] > err["DPweighted"])
    c.add("Countweighted further from the data's 90th percentile than DPweighted",
          "sec. 4.2, Fig. 4: CW's utility worse, 'especially … the 90th quantile'",
          f"|gap| CW ${err['Countweighted']:,.0f} vs DP ${err['DPweighted']:,.0f}",
          err["Countweighted"] > err["DPweighted"])
    deltas = cg["Delta DPweighted"].to_numpy()
    configs = list(zip(cg["c"], cg["g"]))
    # one knob at a time: lowering c at a fixed g, or g at a fixed c, lowers every record's weight
    pairs = [(i, j) for i, j in dominated_pairs(configs) if configs[i][0] == configs[j][0] or configs[i][1] == configs[j][1]]
    ordered = [deltas[i] > deltas[j] for i, j in pairs]
    c.add("Delta falls when the scale c falls at a fixed shift g, or g falls at a fixed c",
          "sec. 4.3, Table 2: Delta falls with the scale c and the shift g",
          f"{sum(ordered)} of {len(pairs)} pairs: " + ", ".join(f"{v:.2f}" for v in deltas), all(ordered))
    c.add("Delta decreases along the paper's (c, g) sequence, in its order",
          "sec. 4.3, Table 2: 10.10, 8.16, 7.30, 6.09, 5.71", ", ".join(f"{v:.2f}" for v in deltas),
          bool(np.all(np.diff(deltas) < 0)), checked=False)
    if len(deltas) > 1:
        ours, paper = deltas[-1] / deltas[0], PAPER_CG_DELTAS[(0.5, -0.1)] / PAPER_CG_DELTAS[(0.7, 0.0)]
        c.add("epsilon falls by about half over the (c, g) range (ratio last / first)",
              f"sec. 4.3: 'a halving', {paper:.2f}", f"{ours:.2f}", 0.35 <= ours <= 0.75, checked=False)
    if "90th pct EMweighted" in cg:
        worse = (cg["90th pct EMweighted"] - cg["90th pct data"]).abs() > (cg["90th pct DPweighted"] - cg["90th pct data"]).abs()
        c.add("EMweighted further from the data's 90th percentile than DPweighted at every (c, g)",
              "sec. 4.3, Fig. 5: DPweighted deteriorates much less", f"{int(worse.sum())} of {len(worse)} configurations",
              bool(worse.all()), checked=False)
    base = trunc["Delta"].loc[1.0] if 1.0 in trunc.index else trunc["Delta"].iloc[0]
    change = (1 - trunc["Delta"] / base).abs()
    mildest = max((q for q in trunc.index if q < 1), default=None)
    if mildest is not None:
        c.add(f"truncating draws at q = {mildest:g} changes Delta by less than {100 * truncation_tol:.0f}%",
              "sec. 3.1: the truncated bound is 'little different'",
              "change " + ", ".join(f"{100 * change[q]:.1f}% at q = {q:g}" for q in trunc.index if q < 1),
              change[mildest] < truncation_tol)
    return c


def model_table(by_model: dict, data, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """The mixture against the normal regression: for each model and synthesizer, Delta, epsilon
    and the barycenter medians of the mean and 90th percentile of income (dollars) beside the data's.

    ``by_model`` maps a model name to a :func:`four_synthesizers` result.
    """
    import pandas as pd

    rows = []
    for (model, results), stream in zip(by_model.items(), seeds(seed, len(by_model))):
        long = barycenter_table(data, dollars(results), B=B, seed=stream)
        centre = long.groupby(["statistic", "source"])["value"].median()
        for name, r in results.items():
            rows.append({"model": model, "synthesizer": name, "Delta": r.delta, "epsilon": r.epsilon,
                         "mean income": centre[("mean", name)], "90th pct income": centre[("90th pct", name)],
                         "data: mean": centre[("mean", "Data")], "data: 90th pct": centre[("90th pct", "Data")]})
    return pd.DataFrame(rows).set_index(["model", "synthesizer"])
