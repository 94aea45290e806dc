"""Run any chapter on many seeds and keep its claims per seed: the seed ledger of a chapter without a script of its own.

    python benchmarks/chapter_seeds.py multivariate 2017 1 2 3 [-p draws=500 ...] [--name multivariate_seeds] [--add]
    python benchmarks/chapter_seeds.py multivariate --add --random 4 [--entropy E]

Each seed executes the chapter's own code cells (``benchmarks/_chapter_seeds.py``) with ``seed``
set and ``check_claims=False``, and records every row of its claims table (the chapter's
``claims``: what it measured, whether it held, whether it was asserted) to
``benchmarks/results/<chapter>_seeds.json`` after every seed (``--add``: keeping the file's other
seeds), each claim's null (the quantity without its effect) in the row after it. Where a chapter's prose quotes
quantities that are not claims, :data:`EXTRAS` records them too (before the claims).
``ce_income_seeds.py`` and ``reweighting_seeds.py`` record more (Deltas, k, refits) for their chapters.

``--random K`` adds K seeds drawn at random (``_chapter_seeds.draw_seeds``: from
``numpy.random.default_rng(E)``, E given by ``--entropy`` or drawn fresh), recorded in the ledger
with the generator. Every claim given with its effect also gets its margin (how far inside its
threshold its value sits, ``ppmlib.book.claims.margin_of``); the run ends by naming each asserted
claim that failed or came closer to its threshold than the margin it states.
"""
from __future__ import annotations

import argparse
import sys

import matplotlib
import numpy as np

matplotlib.use("Agg")   # the chapters draw figures; nothing is shown

from _chapter_seeds import BOOK, SeedLedger, add_seed_options, run_seed, seeds_to_run  # noqa: E402
from ppmlib.book.rerun import parse_assignment  # noqa: E402


def _multivariate(ledger: SeedLedger, seed: int, ns: dict) -> None:
    """Each joint synthesizer's joint Delta, epsilon, scale c, mean weight and diagnostics."""
    for name, row in ns["privacy"].iterrows():
        ledger.add(seed, f"{name}: joint Delta", float(row["joint Delta"]))
        ledger.add(seed, f"{name}: epsilon (joint; composed)",
                   f"{row['epsilon (joint)']:.3g}; {row['epsilon (composed)']:.3g}")
        if name != "Unweighted":
            ledger.add(seed, f"{name}: scale c", float(row["LW scale c"]))
        ledger.add(seed, f"{name}: mean weight", float(row["mean weight"]))
        ledger.add(seed, f"{name}: max R-hat; min bulk ESS; divergences",
                   f"{row['max R-hat']:.3f}; {row['min bulk ESS']:.0f}; {row['divergences']:.0f}")


def _privacy_audit(ledger: SeedLedger, seed: int, ns: dict) -> None:
    """2 Delta per size, what the audit proved and a perfect test could (per output and weights mode),
    the tail weights, the record of LW weight 0, LW_final's k and weights, the checks of the audit."""
    T, result = ns["T"], ns["result"]
    releases = {(n, name): r for n, rs in result.releases.items() for name, r in rs.items()}
    for n in result.releases:
        for name in ("Unweighted", "LW"):
            ledger.add(seed, f"2 Delta {name}, n = {n}", 2 * releases[(n, name)].delta)
    for name in ("SW", "LW_final"):
        gap = max(abs(releases[(n, name)].delta / releases[(n, "LW")].delta - 1) for n in result.releases)
        ledger.add(seed, f"2 Delta {name}: largest relative gap to LW's", gap)
    tight = {mode: ns["privacy_audit"].tightness(result, mode, "add/remove") for mode in ("fixed", "recomputed")}
    for (name, output), row in tight["fixed"].iterrows():
        ledger.add(seed, f"fixed weights, {output}: {name} max eps_lb / bound", float(row["max eps_lb / bound"]))
    for mode, table in tight.items():
        for name, most in table.groupby(level="synthesizer", sort=False).max().iterrows():
            if mode == "recomputed":
                ledger.add(seed, f"recomputed weights: {name} max eps_lb / bound", float(most["max eps_lb / bound"]))
            ledger.add(seed, f"{mode} weights: {name} max exact loss / bound", float(most["max exact loss / bound"]))
    fixed = T[(T.weights == "fixed") & (T.neighbours == "add/remove")]
    for output in ("theta", "m datasets"):
        ledger.add(seed, f"largest eps_lb, {output} (fixed, add/remove)", float(fixed[fixed.output == output].eps_lb.max()))
    budgets = fixed[fixed.output == "m datasets"].bound
    ledger.add(seed, "m datasets: budgets m 2 Delta (range)", f"{budgets.min():.0f}–{budgets.max():.0f}")
    weights = ns["privacy_audit"].targets_table(result)
    tails = weights[weights.index.get_level_values("target") != "typical"]
    ledger.add(seed, "tail records where SW's weight is above LW's",
               f"{int((tails['weight SW'] > tails['weight LW']).sum())} of {len(tails)}")
    zero = ns["recomputed_zero"]
    if len(zero):
        theta = zero[zero.output == "theta"]["exact loss"]
        ledger.add(seed, "LW weight 0, recomputed: AUC on m datasets (range)",
                   f"{zero[zero.output == 'm datasets'].AUC.min():.2f}–{zero[zero.output == 'm datasets'].AUC.max():.2f}")
        ledger.add(seed, "LW weight 0, recomputed: largest eps_lb", float(zero.eps_lb.max()))
        ledger.add(seed, "LW weight 0, recomputed: exact loss of one draw (range)", f"{theta.min():.2f}–{theta.max():.2f}")
        unweighted = T[(T.synthesizer == "Unweighted") & (T.weights == "recomputed") & (T.neighbours == "add/remove")
                       & (T.output == "theta")].set_index(["n", "target"])["exact loss"]
        above = [float(row["exact loss"]) > float(unweighted.loc[(row["n"], row["target"])])
                 for _, row in zero[zero.output == "theta"].iterrows()]
        ledger.add(seed, "LW weight 0, recomputed: exact loss above Unweighted's", f"{sum(above)} of {len(above)}")
    for n in result.releases:
        ledger.add(seed, f"LW_final k, n = {n}", float(releases[(n, "LW_final")].k))
    for name in ("LW", "LW_final"):
        means = [float(releases[(n, name)].alpha.mean()) for n in result.releases]
        ledger.add(seed, f"{name}: mean weight (range over sizes)", f"{min(means):.2f}–{max(means):.2f}")
    ledger.add(seed, "Stan check: mean z-score", float(ns["mean_z"]))
    ledger.add(seed, "Stan check: sd ratio", float(ns["sd_ratio"]))
    ledger.add(seed, f"randomized response, epsilon {ns['rr_epsilon']:g}: eps_lb", float(ns["rr"].epsilon))


def _attribute_risk(ledger: SeedLedger, seed: int, ns: dict) -> None:
    """The expected risks over releases, the importance sampler's error against its effect, the m
    study, and the slides' own data (unit 8)."""
    G, effect = ns["G"], ns["effect"]
    lw = ns["expected"].loc[("mean P(true)", "LW")]
    ledger.add(seed, "LW - Unweighted, mean P(true) over releases", float(lw["minus Unweighted"]))
    ledger.add(seed, "... its 95% Welch interval", f"{lw['diff low']:+.4f} to {lw['diff high']:+.4f}")
    ledger.add(seed, "Unweighted: mean over releases of the median P(true) - 1/G", float(ns["typical"]["mean"] - 1 / G))
    ledger.add(seed, "one release's sd of the median P(true)",
               float(ns["by_release"]["Unweighted"]["median P(true)"].std()))
    ledger.add(seed, f"H = {ns['H']}: error / effect", ns["gap_H"] / effect)
    by_H, gap_column, H_values = ns["by_H"], ns["gap_column"], ns["H_values"]
    H_check = sorted(H_values)[-2] if len(H_values) > 1 else int(by_H.index.max())
    ledger.add(seed, f"H = {H_check}: error / effect", float(by_H.loc[H_check, gap_column]) / effect)
    ledger.add(seed, "effect: median over releases of |median P(true) - 1/G|", effect)
    for h, error in ns["mc_error"].items():
        ledger.add(seed, f"H = {h}: Monte Carlo standard error (RMS over records) / effect", error / effect)
    for k in sorted({min(ns["m_values"]), max(ns["m_values"])}):
        ledger.add(seed, f"max P(true), m = {k}", float(ns["by_m"][k].prob_true.max()))
    ledger.add(seed, "slides' data: unit 8's rank in this release", int(ns["course_risk"][1].rank_true[7]))
    ledger.add(seed, "slides' data: unit 8's P(true) in this release", float(ns["course_risk"][1].prob_true[7]))
    ledger.add(seed, "slides' data: releases where unit 8 ranks 4th (%)", float(100 * (ns["rank_8"] == 4).mean()))
    ledger.add(seed, f"slides' data: H = {ns['H']}: error / effect", ns["course_gap"] / ns["course_effect"])
    ledger.add(seed, "slides' data: mean over releases of the median P(true)", float(ns["course_typical"]["mean"]))
    many = ns["course_risk"][max(ns["course_risk"])]
    ledger.add(seed, f"slides' data, m = {max(ns['course_risk'])}: unit 8's P(true) (rank)",
               f"{many.prob_true[7]:.4f} ({many.rank_true[7]})")


def _attribute_risk_lower_tail(ledger: SeedLedger, seed: int, ns: dict) -> None:
    """With the lower tail: the income of the record where the sampler's error (H of the convergence
    claim against the reference H) is largest, and the largest error outside the tail's units."""
    H_values = sorted(ns["H_values"])
    H_check, H_ref = H_values[-2], H_values[-1]
    y, z, offsets = ns["y"], ns["z_all"][:ns["m"]], ns["offsets"]
    error = np.abs(ns["ppmlib"].attribute_risk(y, z, *ns["risk_inputs"](ns["base"].fit, H_check), offsets).prob_true
                   - ns["ppmlib"].attribute_risk(y, z, *ns["risk_inputs"](ns["base"].fit, H_ref), offsets).prob_true)
    income = ns["ce"]["Income"].to_numpy(float)
    tail = income != ns["ce_like"].load(lower_tail=False)["Income"].to_numpy(float)
    order = np.argsort(error)[::-1]
    ledger.add(seed, f"H = {H_check}: the two largest errors' incomes ($; in the tail)",
               "; ".join(f"{income[i]:,.0f} ({'yes' if tail[i] else 'no'})" for i in order[:2]))
    ledger.add(seed, f"H = {H_check}: largest error outside the tail's {int(tail.sum())} units", float(error[~tail].max()))


def _real_wages(ledger: SeedLedger, seed: int, ns: dict) -> None:
    """Every synthesizer's Delta, mean weight, gate and 90th percentile against the data's; LW over
    Unweighted; the analyst's experience coefficients (data and synthetic)."""
    results, p90 = ns["results"], ns["p90"]
    for name, r in results.items():
        ledger.add(seed, f"{name}: Delta", float(r.delta))
    ledger.add(seed, "LW's Delta over Unweighted's", float(results["LW"].delta / results["Unweighted"].delta))
    for name, r in results.items():
        ledger.add(seed, f"{name}: mean weight", float(r.weights.mean()))
    for name, row in ns["diag"].iterrows():
        ledger.add(seed, f"{name}: max R-hat (passes the gate)", f"{row['max_rhat']:.3f} ({row['passes']})")
    for name in results:
        ledger.add(seed, f"{name}: 90th percentile off the data's (%)", float(100 * (p90[name] / p90["Data"] - 1)))
    estimates = ns["coefficients"].pivot(index="source", columns="term", values="estimate")
    for term in [t for t in ns["terms"] if "experience" in t]:
        for source in ["Data", *results]:
            ledger.add(seed, f"analyst's {term}: {source}", float(estimates.loc[source, term]))


def _against_alternatives_lower_tail(ledger: SeedLedger, seed: int, ns: dict) -> None:
    """With the lower tail, on the CE-like design: the unweighted fit's residual sd; the dollar mean
    and 90th percentile of the data, of the unweighted synthesizer and (lowest) of every mechanism
    fit; the largest interval overlap of the mechanism's fits and of the peers."""
    ce = ns["ce"]
    ppm = ns["ppm"][ce.name]
    unweighted = ppm[("Unweighted", None)][0]
    ledger.add(seed, "CE-like: the unweighted fit's residual sd (log scale)", float(unweighted.fit.draws["sigma"].mean()))

    def dollars(values) -> tuple:
        values = np.exp(np.asarray(values, float))
        return float(values.mean()), float(np.mean(np.quantile(values, 0.9, axis=-1)))

    data_mean, data_p90 = dollars(ce.y)
    ledger.add(seed, "CE-like data: dollar mean; 90th percentile", f"{data_mean:,.0f}; {data_p90:,.0f}")
    mean, p90 = dollars(unweighted.synthetic)
    ledger.add(seed, "CE-like, Unweighted: dollar mean; 90th percentile", f"{mean:,.0f}; {p90:,.0f}")
    lowest = np.min([dollars(synthesis.synthetic) for synthesis, _ in ppm.values()], axis=0)
    ledger.add(seed, "CE-like, every mechanism fit: lowest dollar mean; lowest 90th percentile",
               f"{lowest[0]:,.0f}; {lowest[1]:,.0f}")
    scores = ns["scores"][ce.name]
    mechanism = scores["synthesizer"].isin({name for name, _ in ppm})
    for column in [c for c in scores.columns if c.startswith("overlap")]:
        for who, rows in (("the mechanism's fits", mechanism), ("the peers", ~mechanism)):
            ledger.add(seed, f"CE-like: largest {column}, {who} (any epsilon)", float(scores.loc[rows, column].max()))


def _asymptotic_dp(ledger: SeedLedger, seed: int, ns: dict) -> None:
    """The exact Poisson study's share of databases above the paper's bound, per mean and synthesizer."""
    value = ns["PAPER"]["Poisson"]
    for (mu, name), row in ns["by_mu"].iterrows():
        ledger.add(seed, f"Poisson, mu = {mu:g}: {name}'s share of databases above {value:g} (%)",
                   float(100 * row[f"share above {value:g}"]))


EXTRAS = {"asymptotic_dp": _asymptotic_dp, "attribute_risk": _attribute_risk, "multivariate": _multivariate,
          "privacy_audit": _privacy_audit, "real_wages": _real_wages}
"""Per chapter: a function ``(ledger, seed, namespace)`` adding the quantities its prose quotes beyond its claims."""

LOWER_TAIL_EXTRAS = {"against_alternatives": _against_alternatives_lower_tail, "attribute_risk": _attribute_risk_lower_tail}
"""Per chapter, with ``-p lower_tail=True``: what its lower-tail paragraph quotes (after :data:`EXTRAS`)."""


def main(argv=None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", help="a chapter's name, e.g. multivariate (book/multivariate.md)")
    parser.add_argument("seeds", nargs="*", type=int)
    parser.add_argument("-p", "--param", action="append", default=[], help="NAME=VALUE, as for ppmlib.book.rerun")
    parser.add_argument("--name", help="the results file's stem (default <chapter>_seeds)")
    add_seed_options(parser)
    args = parser.parse_args(argv)
    if not (BOOK / f"{args.chapter}.md").exists():
        parser.error(f"no chapter book/{args.chapter}.md")
    overrides = dict(parse_assignment(p) for p in args.param)
    ledger = SeedLedger(args.name or f"{args.chapter}_seeds",
                        title=f"{args.chapter} chapter at its defaults" + (f" with {', '.join(args.param)}"
                                                                          if args.param else "")
                        + ": its claims on each seed",
                        notes="Each seed runs the chapter's own cells (seed set, claims not asserted); a claim's "
                              "'asserted' is the chapter's own verdict.")
    ok = True
    for seed in seeds_to_run(parser, args, ledger):
        ns = run_seed(ledger, args.chapter, overrides, seed)
        if ns is None:
            ok = False
            continue
        for row in ns["claims"].rows:
            verdict = ("held" if row["holds"] else "FAILED") + (", asserted" if row["checked"] else ", reported")
            print(f"  [{verdict}] {row['claim']}: {row['ours']}")
        if args.chapter in EXTRAS:
            EXTRAS[args.chapter](ledger, seed, ns)
        if ns.get("lower_tail") and args.chapter in LOWER_TAIL_EXTRAS:
            LOWER_TAIL_EXTRAS[args.chapter](ledger, seed, ns)
        ledger.add_claims(seed, ns["claims"])
        ledger.write()
        ok &= all(row["holds"] for row in ns["claims"].rows if row["checked"])
    print("ALL CHECKED CLAIMS HELD ON EVERY SEED" if ok else "SOME CHECKED CLAIM FAILED")
    for line in ledger.short_of_margin():
        print(f"INSIDE ITS MARGIN (or failed): {line}")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
