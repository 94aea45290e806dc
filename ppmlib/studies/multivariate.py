"""The book's multivariate chapter: log expenditure and log income of the CE-like sample synthesized
together (:mod:`ppmlib.mechanism.joint`), compared at equal joint Delta.

Four joint synthesizers of the same two conditionals (log expenditure | predictors, then log
income | log expenditure, predictors):

* **Unweighted**: alpha = 1;
* **LW joint**: one weight per record, LW on the record's *joint* bound (scheme "joint");
* **LW per variable**: one LW weight per record and variable (scheme "per_variable"), its scale c
  matched so that its *joint* Delta equals LW joint's: the same protection of the whole record; a
  user who accounts the two variables separately states the composed epsilon = 2 (Delta_1 + Delta_2);
* **LW per variable, equal stated epsilon**: the same scheme with c matched so that its *composed*
  Delta equals LW joint's Delta: what that user must do to *state* LW joint's epsilon.

:func:`comparison` runs them, :func:`privacy_table`, :func:`utility_table`, :func:`pair_pmse` and :func:`risk_table`
summarise them, and :func:`claims` checks the chapter's statements.
"""
from __future__ import annotations

__all__ = ["NAMES", "VARIABLES", "ce_pair", "ce_conditionals", "comparison", "privacy_table", "univariate_long",
           "pair_long", "utility_table", "interval_widths", "pair_pmse", "risk_table", "claims",
           "joint_bounds", "joint_epsilons", "joint_utility"]

from typing import TYPE_CHECKING

import numpy as np

import matplotlib.pyplot as plt

from ppmlib import _checks
from ppmlib.book.claims import Claims
from ppmlib.evaluate.disclosure import joint_attribute_risk
from ppmlib.mechanism.joint import Conditional, joint_synthesizer, match_joint, pair_long_table
from ppmlib.plots import PALETTE, _colour, violins
from ppmlib.inference.posterior import Sampler
from ppmlib.progress import progress_bar
from ppmlib.seeding import seeds
from ppmlib.evaluate.utility import interval_widths  # re-exported: the chapter reads the spread of pair_long with it

if TYPE_CHECKING:
    import pandas as pd

NAMES = ("Unweighted", "LW joint", "LW per variable", "LW per variable, equal stated epsilon")
VARIABLES = ("log_expenditure", "log_income")


def ce_pair(df: "pd.DataFrame") -> "pd.DataFrame":
    """The CE-like sample with the two synthesized variables added: log expenditure and log income."""
    return df.assign(log_expenditure=np.log(df["Expenditure"].to_numpy(float)),
                     log_income=np.log(df["Income"].to_numpy(float)))


def ce_conditionals(expenditure_predictors, income_predictors, *, model: str = "normal", prior: dict | None = None,
                    centre: float = 9.5) -> tuple:
    """The two conditionals: log expenditure | predictors, then log income | log expenditure, predictors.

    ``centre`` is subtracted from log expenditure as a regressor of income: a public round number
    near its typical value (not computed from the data), so that the intercept and slope do not fight.
    """
    return (Conditional("log_expenditure", tuple(expenditure_predictors), model=model, prior=prior),
            Conditional("log_income", tuple(income_predictors), given=("log_expenditure",), model=model, prior=prior,
                        centres={"log_expenditure": float(centre)}))


def comparison(conditionals, data: "pd.DataFrame", *, c: float = 0.7, g: float = 0.0, rtol: float = 0.05,
               max_iter: int = 12, m: int = 20, sampler: Sampler | None = None, seed: int = 0,
               progress: bool = True) -> dict:
    """The four synthesizers of ``NAMES`` (see the module docstring), in that order.

    Parameters
    ----------
    conditionals : sequence of ppmlib.mechanism.joint.Conditional
    data : pandas.DataFrame
        The records (see :func:`ce_pair`).
    c, g : float
        LW joint's scale and shift.
    rtol, max_iter : float, int
        The per-variable synthesizers' Delta matches its target within ``rtol``, in at most ``max_iter`` refits.
    m, sampler, seed, progress
        Synthetic datasets per synthesizer, NUTS settings, one seed (``ppmlib.seeds(seed, 4)``), progress bars.

    Returns
    -------
    dict
        name -> :class:`ppmlib.mechanism.joint.JointSynthesis`; the matched ones carry ``.calibration``.
    """
    run = dict(m=m, sampler=sampler)
    s = seeds(seed, 4)
    bar = progress_bar(total=4, desc="joint synthesizers", enabled=progress)
    unweighted = joint_synthesizer(conditionals, data, seed=s[0], name=NAMES[0], **run)
    bar.update(1)
    lw = joint_synthesizer(conditionals, data, "joint", base=unweighted, c=c, g=g, seed=s[1], name=NAMES[1], **run)
    bar.update(1)
    out = [unweighted, lw]
    for name, on, stream in ((NAMES[2], "joint", s[2]), (NAMES[3], "composed", s[3])):
        out.append(match_joint(lambda scale, name=name, stream=stream: joint_synthesizer(
            conditionals, data, "per_variable", base=unweighted, c=scale, g=g, seed=stream, name=name, **run),
            lw.delta, on=on, start=c, low=0.0, high=3.0, rtol=rtol, max_iter=max_iter, progress=False))
        bar.update(1)
    bar.close()
    return dict(zip(NAMES, out))


def privacy_table(results: dict) -> "pd.DataFrame":
    """One row per synthesizer: joint Delta and epsilon, each variable's Delta, the composed epsilon,
    what the joint account saves (composed / joint), the matched scale c, weights and diagnostics."""
    import pandas as pd

    rows = []
    for r in results.values():
        row = r.summary()
        row["composed / joint"] = r.composed_epsilon / r.epsilon
        row["LW scale c"] = r.calibration.get("value", r.settings.get("c", np.nan))
        rows.append(row)
    return pd.DataFrame(rows).set_index("synthesizer")


def univariate_long(data: "pd.DataFrame", results: dict, *, statistics=("mean", "90th pct"), B: int = 200,
                    seed=0) -> "pd.DataFrame":
    """:func:`ppmlib.evaluate.utility.long_table` of each variable (column ``variable``), the data's bootstrap
    beside each synthesizer's m datasets, for the chosen ``statistics``."""
    import pandas as pd

    from ppmlib.evaluate.utility import long_table

    frames = []
    for variable, stream in zip(VARIABLES, seeds(seed, len(VARIABLES))):
        long = long_table(data[variable].to_numpy(float), {k: r.synthetic_of(variable) for k, r in results.items()},
                          B=B, seed=stream)
        frames.append(long[long["statistic"].isin(statistics)].assign(variable=variable))
    return pd.concat(frames, ignore_index=True)


def pair_long(data: "pd.DataFrame", results: dict, *, B: int = 200, seed=0) -> "pd.DataFrame":
    """Correlation and regression of log income on log expenditure (:func:`ppmlib.mechanism.joint.pair_long_table`)."""
    return pair_long_table(data[VARIABLES[0]], data[VARIABLES[1]],
                           {k: (r.synthetic_of(VARIABLES[0]), r.synthetic_of(VARIABLES[1])) for k, r in results.items()},
                           B=B, seed=seed)


def utility_table(univariate: "pd.DataFrame", pair: "pd.DataFrame") -> "pd.DataFrame":
    """Medians of every estimand's distribution (rows: variable and statistic; columns: Data and the
    synthesizers), the univariate ones first, then the pair's correlation and slope."""
    import pandas as pd

    from ppmlib.evaluate.utility import centre

    blocks = [centre(univariate[univariate["variable"] == v]).assign(variable=v) for v in VARIABLES]
    blocks.append(centre(pair[pair["statistic"].isin(["correlation", "slope"])]).assign(variable="pair"))
    table = pd.concat(blocks).reset_index().set_index(["variable", "statistic"])
    return table


def pair_pmse(data: "pd.DataFrame", results: dict) -> "pd.DataFrame":
    """pMSE and S_pMSE of the pair (log expenditure, log income), per synthesizer.

    :func:`ppmlib.evaluate.utility.pmse` with a logit on both columns and their product (so that it sees the
    dependence, not only the two margins), each of the m synthetic datasets scored alone and averaged.

    Parameters
    ----------
    data : pandas.DataFrame
        The confidential records with both ``VARIABLES`` (:func:`ce_pair`).
    results : dict
        Name -> :class:`ppmlib.mechanism.joint.JointSynthesis` (:func:`comparison`).

    Returns
    -------
    pandas.DataFrame
        Indexed by synthesizer: pMSE and S_pMSE.
    """
    import pandas as pd

    from ppmlib.evaluate.utility import pmse
    pair = data[list(VARIABLES)].reset_index(drop=True)
    rows = {}
    for name, r in results.items():
        releases = [pd.DataFrame({v: r.synthetic_of(v)[l] for v in VARIABLES}) for l in range(r.synthetic.shape[0])]
        rows[name] = pmse(pair, releases, interactions=True).summary()
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("synthesizer")


def risk_table(results: dict, *, H: int = 100, datasets: int = 1) -> "pd.DataFrame":
    """Attribute-disclosure risk of log income given the released synthetic expenditure and income, per
    synthesizer: median and largest probability of the true value, share ranked first, mean weight
    of the income conditional (:func:`ppmlib.evaluate.disclosure.joint_attribute_risk`, an intruder who knows the weights)."""
    import pandas as pd

    rows = {}
    for name, r in results.items():
        risk = joint_attribute_risk(r, VARIABLES[1], H, datasets=datasets)
        rows[name] = {"median P(true)": float(np.median(risk.prob_true)), "max P(true)": float(risk.prob_true.max()),
                      "share ranked 1st": float(np.mean(risk.rank_true == 1)),
                      "mean income weight": float(r.weights[:, 1].mean())}
    return pd.DataFrame(rows).T.rename_axis("synthesizer")


def claims(results: dict, utility: "pd.DataFrame", widths: "pd.DataFrame", risk: "pd.DataFrame", *, rtol: float,
           saving_min: float = 1.1, correlation_tol: float = 0.05, into: Claims | None = None) -> Claims:
    """The chapter's statements checked on its results.

    ``results`` from :func:`comparison`, ``utility`` from :func:`utility_table`, ``widths`` the
    :func:`ppmlib.evaluate.utility.interval_widths` of :func:`pair_long`, ``risk`` from :func:`risk_table`.
    ``rtol`` is the matching tolerance; ``saving_min`` the smallest ratio of the composed to the joint epsilon (at
    equal joint Delta) that counts as a saving; ``correlation_tol`` how far LW joint's synthetic
    correlation may sit from the data's. The wider spread of the slope under the synthesizer that
    states LW joint's epsilon by composition is reported, not asserted (its size depends on how far
    its weights must fall, which varies with the seed and the predictors).

    The claims that estimate something from the fits (Delta ratios, the saving, weights, the
    correlation) are asserted only when every fit passes the diagnostics gate
    (:func:`ppmlib.inference.diagnostics.is_ok`); otherwise they are reported. The inequality of the bounds is
    always asserted (its null: a violation just above the rounding tolerance); the matching
    tolerances hold by construction (a search stops only within ``rtol``) and are reported. Every
    asserted row declares the quantity it tests and that quantity without the effect
    (:meth:`ppmlib.book.claims.Claims.add`).
    """
    from ppmlib.inference.diagnostics import is_ok

    c = into if into is not None else Claims()
    u, lw, pv, pv_eps = (results[k] for k in NAMES)
    gate = all(is_ok(r.diagnostics) for r in results.values())
    excess = max(float(np.max(r.bounds.paired - r.bounds.summed)) for r in results.values())
    # an exact inequality: the null is a violation just above its rounding tolerance
    c.add("every record's joint bound is at most the sum of its conditional bounds",
          "max_s |a(f1 + f2)| <= max_s |a f1| + max_s |a f2|", f"largest joint - sum {excess:.3g}",
          lambda v: v <= 1e-9, value=excess, null=2e-9)
    ratio = u.delta / lw.delta
    # without the weights LW joint would be the unweighted synthesizer: a ratio of 1
    c.add("LW joint's Delta far below Unweighted's", "weights cap the bound (as for one variable)",
          f"Unweighted / LW joint = {ratio:.1f}", lambda v: v > 2, value=ratio, null=1.0, checked=gate)
    gap = abs(pv.delta / lw.delta - 1)
    # by construction: the matching stops only within rtol (reported)
    c.add("LW per variable matched to LW joint's joint Delta", f"within {100 * rtol:.0f}%",
          f"gap {100 * gap:.1f}%", gap <= rtol, checked=False)
    saving = pv.composed_epsilon / pv.epsilon
    # without the effect composition would state the joint epsilon: a ratio of 1
    c.add("at equal protection of the record, composing per-variable epsilons overstates the cost",
          f"composed / joint epsilon of LW per variable >= {saving_min:g}",
          f"{pv.composed_epsilon:.1f} vs {pv.epsilon:.1f} (x {saving:.2f})", lambda v: v >= saving_min,
          value=saving, null=1.0, checked=gate)
    gap_eps = abs(pv_eps.composed_delta / lw.delta - 1)
    # by construction, as above
    c.add("LW per variable, equal stated epsilon: composed Delta matched to LW joint's Delta", f"within {100 * rtol:.0f}%",
          f"gap {100 * gap_eps:.1f}%", gap_eps <= rtol, checked=False)
    lost = lw.weights.mean() - pv_eps.weights.mean()
    # without the cost the two mean weights would be equal: a difference of 0
    c.add("stating LW joint's epsilon by composition costs weight", "mean weight below LW joint's",
          f"{pv_eps.weights.mean():.3f} vs {lw.weights.mean():.3f}", lambda v: v > 0, value=lost, null=0.0,
          checked=gate)
    wider = float(widths.loc["slope", NAMES[3]]) / float(widths.loc["slope", NAMES[1]])
    c.add("... and utility: the slope of income on expenditure spreads wider over the datasets",
          "95% interval wider than LW joint's",
          f"{float(widths.loc['slope', NAMES[3]]):.3f} vs {float(widths.loc['slope', NAMES[1]]):.3f} (x {wider:.2f})",
          wider > 1, checked=False)
    corr = utility.loc[("pair", "correlation")]
    data_corr = float(corr["Data"])
    off = abs(float(corr[NAMES[1]]) - data_corr)
    # without the effect (income synthesized without expenditure) the synthetic correlation is 0. A closeness
    # claim against a distant null: its margin cannot exceed correlation_tol / |data's correlation| (0.05 / 0.6);
    # it states 0.02, a gap at most 0.038 at the defaults
    c.add("LW joint keeps the income-expenditure correlation", f"within {correlation_tol:g} of the data's",
          f"{float(corr[NAMES[1]]):.3f} vs {data_corr:.3f}", lambda v: v <= correlation_tol, value=off,
          null=abs(data_corr), checked=gate, margin=0.02)
    c.add("every conditional fit passes the diagnostics gate", "R-hat < 1.01, ESS >= 400, no divergences",
          "yes: the claims above are asserted" if gate else "no: the claims that estimate are reported, not asserted",
          gate, checked=False)
    less = float(risk.loc[NAMES[1], "median P(true)"]) <= float(risk.loc[NAMES[0], "median P(true)"])
    c.add("LW joint's attribute risk of income no higher than Unweighted's (median P(true))", "weights lower risk",
          f"{float(risk.loc[NAMES[1], 'median P(true)']):.4f} vs {float(risk.loc[NAMES[0], 'median P(true)']):.4f}",
          less, checked=False)
    return c


# ---------------------------------------------------------------------------------------------
# the chapter's figures
# ---------------------------------------------------------------------------------------------

def _wrapped(name: str) -> str:
    """A synthesizer's name on lines of at most 14 characters, for crowded tick labels."""
    import textwrap
    return "\n".join(textwrap.wrap(name, 14))


def joint_bounds(unweighted, lw, title: str = "Which records the joint bound sees"):
    """Left: each record's conditional bounds under the unweighted synthesizer (first variable against
    second), coloured by its LW joint weight. Right: each record's joint bound against the sum of its
    conditional bounds, for both synthesizers (on the diagonal: no cancellation).

    ``unweighted`` and ``lw`` are :class:`ppmlib.mechanism.joint.JointSynthesis` of two variables.
    """
    first, second = unweighted.variables[:2]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.3))
    b = unweighted.bounds.conditional
    points = left.scatter(b[:, 0], b[:, 1], c=lw.weights[:, 0], cmap="viridis", vmin=0, vmax=1, s=12)
    fig.colorbar(points, ax=left, label=r"LW joint weight $\alpha_i$")
    left.set_xlabel(f"bound of {first}, " + r"$\max_s |f_{1,s}(x_i)|$")
    left.set_ylabel(f"bound of {second}, " + r"$\max_s |f_{2,s}(x_i)|$")
    left.set_title("Unweighted: the two conditional bounds of every record")
    for i, r in enumerate((unweighted, lw)):
        right.scatter(r.bounds.summed, r.bounds.paired, s=10, alpha=0.6, color=_colour(r.name, i), label=r.name)
    top = max(unweighted.bounds.summed.max(), unweighted.bounds.paired.max())
    right.plot([0, top], [0, top], color="black", lw=1, ls="--", label="joint = sum")
    right.set_xlabel(r"sum of conditional bounds $\sum_j \max_s |\alpha_{ij} f_{j,s}(x_i)|$")
    right.set_ylabel(r"joint bound $\max_s |\sum_j \alpha_{ij} f_{j,s}(x_i)|$")
    right.set_title("Joint bound against the sum")
    right.legend(loc="upper left")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def joint_epsilons(results: dict, title: str = "The privacy of the whole record, stated two ways"):
    """Bars per synthesizer: epsilon = 2 Delta of the joint bound, beside the composed epsilon
    sum_j 2 Delta_j of accounting each variable separately (``results``: name -> JointSynthesis)."""
    fig, ax = plt.subplots(figsize=(9, 4))
    x = np.arange(len(results))
    joint = [r.epsilon for r in results.values()]
    composed = [r.composed_epsilon for r in results.values()]
    for shift, values, label, colour in ((-0.2, joint, r"joint: $2\Delta$", "#1b9e77"),
                                         (0.2, composed, r"composed: $2(\Delta_1 + \Delta_2)$", "#d95f02")):
        bars = ax.bar(x + shift, values, 0.4, label=label, color=colour)
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
    ax.set_xticks(x, [_wrapped(name) for name in results])
    ax.set_ylabel(r"$\varepsilon$ per synthetic dataset")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def joint_utility(univariate, pair, suptitle: str = "Univariate and joint estimands: data and synthesizers"):
    """Violins of the 90th percentile of log income (``univariate``, a
    :func:`ppmlib.studies.multivariate.univariate_long`) and of the correlation and slope of log income on
    log expenditure (``pair``, a :func:`ppmlib.mechanism.joint.pair_long_table`); dashed: the data's median."""
    panels = [(univariate[(univariate["variable"] == "log_income") & (univariate["statistic"] == "90th pct")],
               "90th percentile of log income", "log dollars"),
              (pair[pair["statistic"] == "correlation"], "correlation of the pair", "correlation"),
              (pair[pair["statistic"] == "slope"], "slope of log income on log expenditure", "slope")]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.3))
    for ax, (sub, title, ylabel) in zip(axes, panels):
        groups = {src: sub.loc[sub["source"] == src, "value"].to_numpy() for src in sub["source"].unique()}
        violins(ax, groups, title=title, ylabel=ylabel)
        ax.set_xticks(range(1, len(groups) + 1), [_wrapped(name) for name in groups], fontsize=8)
        ax.axhline(np.median(groups["Data"]), color=PALETTE["Data"], ls="--", lw=1)
    fig.suptitle(suptitle)
    fig.tight_layout()
    return fig
