"""The privacy audit chapter's study (book/privacy_audit.md): the book's synthesizers on a database
and its neighbours, run with exact draws, attacked by :mod:`ppmlib.evaluate.audit`, and the chapter's tables.

The audited synthesizers are the lineup :data:`LINEUP` of :mod:`ppmlib.mechanism.lineup`'s standard members,
run by :func:`ppmlib.mechanism.lineup.execute` with kinds of step (:data:`EXACT_KINDS`) that sample the
conjugate Poisson-Gamma pseudo posterior exactly instead of fitting Stan. Every output of the
mechanism is attacked by the exact likelihood-ratio test and turned into a confidence lower bound
eps_lb (:func:`ppmlib.evaluate.audit.epsilon_lower_bound`), set beside the guarantee 2 Delta.
"""
from __future__ import annotations

__all__ = ["LINEUP", "SYNTHESIZERS", "TARGETS", "RELATIONS", "MODES", "Release", "draws_bounds", "draws_delta",
           "grid_delta", "match_scalar_weight", "match_reweighting", "EXACT_KINDS", "pipeline", "target_index",
           "neighbour", "Audit", "audit", "run", "releases_table", "targets_table", "bounds_table", "tightness",
           "modes_table", "calibration_by_trials", "sampler_check", "audit_epsilons", "audit_roc",
           "audit_modes", "audit_censored", "audit_noisy_counts"]

import time
from dataclasses import dataclass, field, replace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import optimize, stats

from ppmlib.inference import exact
from ppmlib.mechanism import lineup
from ppmlib.datasets import simulate
from ppmlib import _checks
from ppmlib.evaluate.audit import OUTPUTS, auc, epsilon_lower_bound, exact_loss, mechanism_trials, randomized_response, roc_curve
from ppmlib.models.families import family
from ppmlib.plots import PALETTE, _colour, _titled
from ppmlib.seeding import seeds
from ppmlib.mechanism.weights import lw_risks, lw_weights, reweight, scalar_weights
from ppmlib.errors import BadArgument


#: The audited synthesizers, run by :func:`pipeline` in this order (LW_final last, so that the others
#: keep the seeds they had before it joined).
LINEUP = lineup.lineup("Unweighted", "LW", "SW", "LW_final")
SYNTHESIZERS = tuple(m.name for m in LINEUP)
TARGETS = ("largest", "smallest", "typical")
RELATIONS = ("add/remove", "replace-one")
MODES = ("fixed", "recomputed")


# ---------------------------------------------------------------------------------------------
# the synthesizers' weights and bounds, computed from exact draws as ppmlib computes them from MCMC
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Release:
    """One synthesizer's weights on one database and its Lipschitz bound.

    Attributes
    ----------
    name : str
        the member's name in :data:`LINEUP` ("Unweighted", "LW", "SW", "LW_final")
    alpha : numpy.ndarray
        (n,) weights
    delta : float
        max_s max_i abs(alpha_i f_s(y_i)) over ``draws`` exact draws (what ppmlib reports from MCMC)
    delta_grid : float
        the same sup over a grid spanning the central 1 - 1e-6 interval of the exact pseudo posterior
    a : float or None
        SW's scalar weight (None otherwise)
    risk : numpy.ndarray or None
        LW's risks r_i, from which its weights were made (None for the other synthesizers)
    seed : int or None
        the seed of the exact draws behind ``delta`` (the members built on this one draw them again)
    k : float or None
        LW_final's re-weighting constant (None otherwise)
    """
    name: str
    alpha: np.ndarray
    delta: float
    delta_grid: float
    a: float | None = None
    risk: np.ndarray | None = None
    seed: int | None = None
    k: float | None = None


def _poisson_log_lik(lam, y) -> np.ndarray:
    """S x n log-likelihood matrix of draws ``lam`` (S,), the layout of ``Fit.log_lik``."""
    return exact.poisson_log_lik(lam, y).T


def draws_bounds(y, alpha, *, draws: int = 4000, seed=0, prior: dict | None = None) -> np.ndarray:
    """By-record bounds (n,) of the alpha-weighted pseudo posterior from ``draws`` exact draws:
    :func:`ppmlib.inference.exact.draw_record_bounds` (only the smallest and the largest draw enter, since
    -log p(y_i | lambda) is convex in lambda; the tests check it against all S rows)."""
    return exact.draw_record_bounds(y, alpha, draws, seed, **_prior(prior))


def draws_delta(y, alpha, *, draws: int = 4000, seed=0, prior: dict | None = None) -> float:
    """Delta of the alpha-weighted pseudo posterior from ``draws`` exact draws: the largest of
    :func:`draws_bounds` (what ppmlib.record_bounds gives on MCMC draws)."""
    return float(draws_bounds(y, alpha, draws=draws, seed=seed, prior=prior).max())


def grid_delta(y, alpha, *, prior: dict | None = None, mass: float = 1 - 1e-6, grid_points: int = 2001) -> float:
    """Delta as the sup over a grid of the exact pseudo posterior's central ``mass`` interval."""
    grid = np.linspace(*exact.central_interval(y, alpha, mass=mass, **_prior(prior)), grid_points)
    return float(exact.grid_record_bounds(grid, y, alpha).max())


def _prior(prior) -> dict:
    """The Gamma prior's settings, checked by the Poisson family's prior validator."""
    return family("poisson").check_prior(prior)


def match_scalar_weight(y, target_delta: float, *, draws: int = 4000, seed=0, prior: dict | None = None,
                        rtol: float = 1e-6) -> float:
    """SW: the scalar weight a whose Delta (from exact draws) equals ``target_delta``.

    With exact draws made from common random numbers (:func:`ppmlib.inference.exact.sample`), Delta(a) is a
    continuous increasing function, so a bracketing root finder (Brent) replaces the refit loop
    of :func:`ppmlib.match_delta`. Returns 1 when even a = 1 stays below the target.
    """
    n = np.asarray(y).shape[0]
    return _root_of_delta(lambda a: draws_delta(y, scalar_weights(a, n), draws=draws, seed=seed, prior=prior),
                          target_delta, 1.0, rtol)


def match_reweighting(y, alpha, bounds, target_delta: float, *, draws: int = 4000, seed=0,
                      prior: dict | None = None, rtol: float = 1e-6) -> float:
    """LW_final: the re-weighting constant k whose weights clip(k alpha_i Delta / Delta_i, 0, 1) have
    Delta (from exact draws) equal to ``target_delta`` (2025 paper, Algorithm 1, with exact draws).

    ``alpha`` and ``bounds`` (both (n,)) are the weights and by-record bounds of the synthesizer
    re-weighted. As for :func:`match_scalar_weight`, common random numbers make Delta(k) continuous
    and increasing, so Brent's method replaces the refit loop of :func:`ppmlib.reweight_to_tolerance`.
    k stays in (0, k_sat] (:func:`ppmlib.mechanism.reweighting.saturation_k`); returns k_sat when even there
    Delta stays below the target.
    """
    from ppmlib.mechanism.reweighting import saturation_k

    return _root_of_delta(lambda k: draws_delta(y, reweight(alpha, bounds, k), draws=draws, seed=seed, prior=prior),
                          target_delta, saturation_k(alpha, bounds), rtol)


def _root_of_delta(delta_at, target_delta: float, top: float, rtol: float) -> float:
    """The x in (0, top] where the increasing, continuous ``delta_at(x)`` equals ``target_delta``
    (Brent's method); ``top`` when even there it stays at or below the target."""
    target_delta = _checks.real(target_delta, "target_delta", low=0, low_open=True)
    if delta_at(top) <= target_delta:
        return top
    return float(optimize.brentq(lambda x: delta_at(x) - target_delta, 1e-9 * top, top, rtol=rtol))


# the kinds of step of the audit's lineup: ppmlib.mechanism.lineup's members, made with exact draws instead of Stan

def _release(member, ctx, alpha, **extra) -> Release:
    draws, prior = ctx.run["draws"], ctx.run["prior"]
    return Release(member.name, alpha, draws_delta(ctx.y, alpha, draws=draws, seed=ctx.seed, prior=prior),
                   grid_delta(ctx.y, alpha, prior=prior), seed=ctx.seed, **extra)


def _exact_unweighted(member, ctx) -> Release:
    return _release(member, ctx, np.ones(ctx.y.size))


def _exact_lw(member, ctx) -> Release:
    """LW's weights from the log-likelihood of the base's exact draws (ppmlib.lw_weights)."""
    base = ctx.done[member.base]
    lik = _poisson_log_lik(exact.sample(ctx.y, base.alpha, ctx.run["draws"], base.seed, **_prior(ctx.run["prior"])),
                           ctx.y)
    alpha = lw_weights(lik, c=member.settings.get("c", 1.0), g=member.settings.get("g", 0.0))
    return _release(member, ctx, alpha, risk=lw_risks(lik))


def _exact_sw(member, ctx) -> Release:
    """SW's scalar matched to an earlier member's Delta (or to half a target epsilon)."""
    target = lineup._target_delta(member, ctx)   # the runner's own rule, so a Stan lineup and this one match alike
    a = match_scalar_weight(ctx.y, target, draws=ctx.run["draws"], seed=ctx.seed, prior=ctx.run["prior"])
    return _release(member, ctx, scalar_weights(a, ctx.y.size), a=a)


def _exact_final(member, ctx) -> Release:
    """The base re-weighted to its own Delta; its bounds come from the base's own exact draws."""
    base = ctx.done[member.base]
    draws, prior = ctx.run["draws"], ctx.run["prior"]
    bounds = draws_bounds(ctx.y, base.alpha, draws=draws, seed=base.seed, prior=prior)
    k = match_reweighting(ctx.y, base.alpha, bounds, base.delta, draws=draws, seed=ctx.seed, prior=prior)
    return _release(member, ctx, reweight(base.alpha, bounds, k), k=k)


#: The kinds of member the audit can run with exact draws (the keys of :data:`ppmlib.mechanism.lineup.KINDS` it knows).
EXACT_KINDS = {"unweighted": lineup.Kind(_exact_unweighted),
               "lw": lineup.Kind(_exact_lw, needs_base=True, settings=("c", "g")),
               "sw": lineup.Kind(_exact_sw, needs_base=True, matchable=True),
               "final": lineup.Kind(_exact_final, needs_base=True)}


def pipeline(y, *, draws: int = 4000, seed=0, c: float = 1.0, g: float = 0.0,
             prior: dict | None = None) -> dict[str, Release]:
    """The audit's :data:`LINEUP` on one database, as the book's pipeline runs it, with exact draws.

    Unweighted; LW, its weights from the log-likelihood of ``draws`` unweighted draws
    (ppmlib.lw_weights) with scale ``c`` and shift ``g``; SW, its scalar matched to LW's Delta;
    LW_final, LW re-weighted to LW's Delta (:func:`match_reweighting`). Runs through
    :func:`ppmlib.mechanism.lineup.execute` with :data:`EXACT_KINDS`; member j's draws come from the j-th of
    ``ppmlib.seeds(seed, 4)``, so two databases audited with the same seed differ in their weights
    only through their data.

    Returns
    -------
    dict
        name -> :class:`Release`, in the lineup's order.
    """
    y = _checks.counts(y)
    members = [replace(m, settings={**m.settings, "c": c, "g": g}) if m.name == "LW" else m for m in LINEUP]
    return lineup.execute(members, EXACT_KINDS, "poisson", y, {"draws": draws, "prior": prior},
                          seed=_checks.seed(seed), progress=False)


# ---------------------------------------------------------------------------------------------
# neighbours and the audit of one database
# ---------------------------------------------------------------------------------------------

def target_index(y, target: str) -> int:
    """The record audited: "largest" / "smallest" value (the tails, LW's riskiest records) or
    "typical" (the record closest to the median)."""
    y = _checks.counts(y)
    if target == "largest":
        return int(np.argmax(y))
    if target == "smallest":
        return int(np.argmin(y))
    if target == "typical":
        return int(np.argmin(np.abs(y - np.median(y))))
    raise BadArgument(f"target must be one of {TARGETS}, got {target!r}")


def neighbour(y, index: int, relation: str, replacement: int | None = None) -> np.ndarray:
    """D' for record ``index``: removed ("add/remove") or its value set to ``replacement``."""
    y = _checks.counts(y)
    index = _checks.integer(index, "index", low=0)
    if index >= y.size:
        raise BadArgument(f"index {index} is out of range for {y.size} records")
    if relation == "add/remove":
        return np.delete(y, index)
    if relation == "replace-one":
        if replacement is None:
            raise BadArgument("relation 'replace-one' needs a replacement value")
        out = y.copy()
        out[index] = _checks.integer(replacement, "replacement", low=0)
        return out
    raise BadArgument(f"relation must be one of {RELATIONS}, got {relation!r}")


def _neighbour_weights(alpha, index, relation):
    """Weights held fixed (the setting of the theorem): the removed record's weight goes with it."""
    return np.delete(alpha, index) if relation == "add/remove" else alpha


def _fixed_weight_world(world_d, value, weight, relation, replacement):
    """D''s pseudo posterior with the weights held fixed: the target's term (weight * value, weight)
    leaves the two Gamma parameters, and with replace-one (weight * replacement, weight) enters.

    Written as a change of D's parameters rather than a new sum, so a target with weight 0 gives
    exactly D's parameters (a fresh sum in another order would differ in the last bits).
    """
    shape, rate = world_d[0] - weight * value, world_d[1] - weight
    if relation == "replace-one":
        shape, rate = shape + weight * replacement, rate + weight
    return shape, rate


def _worlds(y, i, y_prime, alpha, alpha_prime, mode, relation, replacement, prior):
    """(shape, rate) of the pseudo posterior on D and on its neighbour D' for one synthesizer."""
    world_d = exact.pseudo_posterior(y, alpha, **_prior(prior))
    if mode == "fixed":
        return world_d, _fixed_weight_world(world_d, int(y[i]), float(alpha[i]), relation, replacement)
    return world_d, exact.pseudo_posterior(y_prime, alpha_prime, **_prior(prior))


def _guarantee(delta, y_prime, alpha_prime, relation, *, draws, seed, prior) -> tuple[float, str]:
    """The epsilon the theorem gives one draw: 2 Delta ("add/remove": D' is D with the target removed,
    a removal neighbour of D, the direction the theorem covers), or 4 Delta with Delta the
    larger of D's and D''s bounds (replace-one: the weighted log-likelihood changes by two terms)."""
    if relation == "add/remove":
        return 2 * delta, "2Δ"
    return 4 * max(delta, draws_delta(y_prime, alpha_prime, draws=draws, seed=seed, prior=prior)), "4Δ"


@dataclass(eq=False)
class Audit:
    """The audit of one or more databases.

    Attributes
    ----------
    table : pandas.DataFrame
        one row per setting (n, synthesizer, weights, neighbours, target, output) with the
        target's value and weight, Delta (draws and grid), the bound the theorem gives, the exact
        loss on the central region, eps_lb, its rates, the AUC and the ratio eps_lb / bound
    scores : dict
        {(n, synthesizer, weights, neighbours, target, output): (scores, member)}
    releases : dict
        {n: {synthesizer: Release}} on each audited database D
    seconds : float
        wall time of the mechanism runs and attacks (weights and Deltas excluded)
    """
    table: pd.DataFrame
    scores: dict = field(repr=False)
    releases: dict = field(repr=False)
    seconds: float = 0.0


def _check_choice(values, allowed, name):
    values = tuple(values) if not isinstance(values, str) else (values,)
    bad = [v for v in values if v not in allowed]
    if bad or not values:
        raise BadArgument(f"{name} must be a non-empty selection of {allowed}, got {list(values)}")
    return values


def audit(y, *, trials: int = 2000, m: int = 100, targets=TARGETS, relations=RELATIONS, modes=MODES,
          synthesizers=SYNTHESIZERS, draws: int = 4000, c: float = 1.0, g: float = 0.0,
          confidence: float = 0.95, prior: dict | None = None, seed=0, progress: bool = False) -> Audit:
    """Audit the synthesizers of :data:`LINEUP` (Unweighted, LW, SW, LW_final) on the database ``y``:
    every target, neighbour relation, weight mode and output.

    Parameters
    ----------
    y : (n,) counts, the database D
    trials : mechanism runs per setting (half select the test's threshold, half evaluate it)
    m : synthetic datasets in the composition output
    targets : any of TARGETS; relations : any of RELATIONS (replace-one sets the target's value to
        the median of y and is skipped for the typical record, whose value that already is)
    modes : "fixed" (weights computed once on D and kept for D': what the theorem covers) and/or
        "recomputed" (the whole pipeline rerun on D': what an agency deploys)
    draws : exact pseudo posterior draws per fit (the chapters' 4 chains x 1000 draws)
    seed : one integer fixes the weights' draws and every trial

    Returns
    -------
    Audit
        The bound is 2 Delta (add/remove) or 4 max(Delta_D, Delta_D') (replace-one), times m for m
        datasets, with Delta from the draws of the synthesizer on D, as ppmlib reports it.

    See Also
    --------
    run : the same on simulated databases of several sizes.
    pipeline : the synthesizers' weights and Delta on one database.
    ppmlib.evaluate.audit.epsilon_lower_bound : the bound of each setting.
    tightness, bounds_table : summaries of the result.

    Examples
    --------
    >>> y = simulate.poisson(100, 100, seed=1)
    >>> result = audit(y, trials=2000, m=20, seed=1)                           # doctest: +SKIP
    >>> result.table.query("output == 'theta'")[["synthesizer", "eps_lb", "bound"]]  # doctest: +SKIP
    """
    from ppmlib.progress import progress_bar

    y = _checks.counts(y)
    targets = _check_choice(targets, TARGETS, "targets")
    relations = _check_choice(relations, RELATIONS, "relations")
    modes = _check_choice(modes, MODES, "modes")
    synthesizers = _check_choice(synthesizers, SYNTHESIZERS, "synthesizers")
    trials = _checks.integer(trials, "trials", low=4)
    m = _checks.integer(m, "m", low=1)
    draws = _checks.integer(draws, "draws", low=2)
    weights_seed, trials_seed = seeds(_checks.seed(seed), 2)
    on_d = pipeline(y, draws=draws, seed=weights_seed, c=c, g=g, prior=prior)
    risk = on_d["LW"].risk
    replacement = int(round(float(np.median(y))))
    settings = [(t, r) for t in targets for r in relations if not (r == "replace-one" and t == "typical")]
    trial_seeds = _trial_seeds(trials_seed, settings, modes, synthesizers)
    rows, scores, spent = [], {}, 0.0
    for target, relation in progress_bar(settings, desc=f"audit n = {y.size}", enabled=progress):
        i = target_index(y, target)
        y_prime = neighbour(y, i, relation, replacement)
        recomputed = pipeline(y_prime, draws=draws, seed=weights_seed, c=c, g=g, prior=prior) if "recomputed" in modes else {}
        for mode in modes:
            for name in synthesizers:
                release = on_d[name]
                alpha_prime = (_neighbour_weights(release.alpha, i, relation) if mode == "fixed"
                               else recomputed[name].alpha)
                world_d, world_prime = _worlds(y, i, y_prime, release.alpha, alpha_prime, mode, relation,
                                               replacement, prior)
                bound, formula = _guarantee(release.delta, y_prime, alpha_prime, relation, draws=draws,
                                            seed=weights_seed, prior=prior)
                for output in OUTPUTS:
                    start = time.perf_counter()
                    s, member = mechanism_trials(world_d, world_prime, output, trials=trials, m=m,
                                                 n_synthetic=y.size,
                                                 seed=trial_seeds[target, relation, mode, name, output])
                    result = epsilon_lower_bound(s, member, confidence)
                    spent += time.perf_counter() - start
                    k = m if output == "m datasets" else 1
                    key = (y.size, name, mode, relation, target, output)
                    scores[key] = (s, member)
                    rows.append({"n": y.size, "synthesizer": name, "weights": mode, "neighbours": relation,
                                 "target": target, "value": int(y[i]),
                                 "replaced by": replacement if relation == "replace-one" else None,
                                 "weight": float(release.alpha[i]), "LW risk": float(risk[i]), "output": output,
                                 "Delta": release.delta, "Delta (grid)": release.delta_grid,
                                 "bound": k * bound, "bound is": (f"{k}·" if k > 1 else "") + formula,
                                 "exact loss": exact_loss(world_d, world_prime, output, m=m, n_synthetic=y.size),
                                 "eps_lb": result.epsilon, "TPR_low": result.tpr_low, "FPR_high": result.fpr_high,
                                 "AUC": result.auc, "ratio": result.epsilon / (k * bound), "trials": trials})
    return Audit(pd.DataFrame(rows), scores, {y.size: on_d}, spent)


# the synthesizers audited before LW_final joined; their trials keep the seeds they had then
_FIRST_AUDITED = ("Unweighted", "LW", "SW")


def _trial_seeds(trials_seed: int, settings, modes, synthesizers) -> dict:
    """One seed per (target, relation, mode, synthesizer, output): the first audited synthesizers'
    in their original order, every later one's (LW_final) appended after them, so that adding a
    synthesizer to the audit leaves the others' trials unchanged."""
    def keys(names):
        return [(t, r, mode, name, o) for t, r in settings for mode in modes for name in names for o in OUTPUTS]

    ordered = keys([s for s in synthesizers if s in _FIRST_AUDITED]) + keys(
        [s for s in synthesizers if s not in _FIRST_AUDITED])
    return dict(zip(ordered, seeds(trials_seed, len(ordered))))


def run(n_values=(100, 1000), *, mu: float = 100.0, seed=0, progress: bool = False, **options) -> Audit:
    """:func:`audit` on one simulated Poisson(mu) database per n (the 2020 paper's less skewed design, its section 3.1).

    ``options`` are passed to :func:`audit` (trials, m, targets, relations, modes, ...). The
    databases and the audits' seeds all come from ``seed`` (split by ``ppmlib.seeds``).

    Examples
    --------
    >>> result = run([100, 1000], seed=2020, trials=10_000, m=100)        # doctest: +SKIP
    >>> tightness(result)                                                 # doctest: +SKIP
    """
    n_values = [_checks.integer(n, "n_values", low=2) for n in np.atleast_1d(n_values).tolist()]
    data_seeds = seeds(_checks.seed(seed), 2 * len(n_values))
    parts = [audit(simulate.poisson(n, mu, seed=data_seeds[2 * k]), seed=data_seeds[2 * k + 1],
                   progress=progress, **options)
             for k, n in enumerate(n_values)]
    return Audit(pd.concat([p.table for p in parts], ignore_index=True),
                 {k: v for p in parts for k, v in p.scores.items()},
                 {k: v for p in parts for k, v in p.releases.items()},
                 sum(p.seconds for p in parts))


# ---------------------------------------------------------------------------------------------
# tables for the chapter
# ---------------------------------------------------------------------------------------------

def releases_table(result: Audit) -> pd.DataFrame:
    """Per database size and synthesizer: Delta from the draws and over the grid, 2 Delta, the weights."""
    rows = [{"n": n, "synthesizer": name, "Delta (draws)": r.delta, "Delta (grid, central 1-1e-6)": r.delta_grid,
             "2 Delta (compared with)": 2 * r.delta, "SW scalar a": r.a, "LW_final k": r.k, "mean weight": float(r.alpha.mean()),
             "min weight": float(r.alpha.min())}
            for n, releases in result.releases.items() for name, r in releases.items()]
    return pd.DataFrame(rows).set_index(["n", "synthesizer"])


def targets_table(result: Audit) -> pd.DataFrame:
    """The audited records: value, LW risk, and each synthesizer's weight on D."""
    sub = result.table.drop_duplicates(["n", "target", "synthesizer"])
    out = sub.pivot_table(index=["n", "target"], columns="synthesizer", values="weight", sort=False)
    out.columns = [f"weight {c}" for c in out.columns]
    first = sub.drop_duplicates(["n", "target"]).set_index(["n", "target"])[["value", "LW risk"]]
    return first.join(out)


def bounds_table(result: Audit, weights: str = "fixed", neighbours: str = "add/remove") -> pd.DataFrame:
    """eps_lb, the exact loss and the guarantee side by side, one column block per output."""
    sub = result.table[(result.table["weights"] == weights) & (result.table["neighbours"] == neighbours)]
    out = sub.pivot_table(index=["n", "target", "synthesizer"], columns="output",
                          values=["eps_lb", "exact loss", "bound"], sort=False)
    return out.swaplevel(0, 1, axis=1).reindex(columns=[(o, v) for o in OUTPUTS
                                                        for v in ("eps_lb", "exact loss", "bound")])


def tightness(result: Audit, weights: str = "fixed", neighbours: str = "add/remove") -> pd.DataFrame:
    """Per synthesizer and output, over every n and target: the largest eps_lb / bound (what the
    audit proved) and the largest exact loss / bound (what a perfect test on the central region could)."""
    sub = result.table[(result.table["weights"] == weights) & (result.table["neighbours"] == neighbours)]
    sub = sub.assign(**{"exact loss / bound": sub["exact loss"] / sub["bound"]})
    out = sub.groupby(["synthesizer", "output"], sort=False).agg(
        **{"max eps_lb / bound": ("ratio", "max"), "max exact loss / bound": ("exact loss / bound", "max"),
           "max eps_lb": ("eps_lb", "max")})
    return out.reindex(pd.MultiIndex.from_product([list(dict.fromkeys(sub["synthesizer"])), OUTPUTS],
                                                  names=["synthesizer", "output"]))


def modes_table(result: Audit, neighbours: str = "add/remove") -> pd.DataFrame:
    """Weights fixed against recomputed: AUC, eps_lb and exact loss per setting, side by side."""
    sub = result.table[result.table["neighbours"] == neighbours]
    return sub.pivot_table(index=["n", "target", "synthesizer", "output"], columns="weights",
                           values=["AUC", "eps_lb", "exact loss"], sort=False)


# ---------------------------------------------------------------------------------------------
# how many trials the audit needs: randomized response, whose epsilon is known
# ---------------------------------------------------------------------------------------------

def calibration_by_trials(epsilon: float, trial_counts, seed=0, confidence: float = 0.95) -> pd.Series:
    """The lower bound the audit proves for randomized response with a known ``epsilon``, for each
    number of trials in ``trial_counts`` (one :func:`ppmlib.evaluate.audit.randomized_response` run per count, from
    ``seed``): a Series indexed by the trial count. The gap to ``epsilon`` is what the trials cost."""
    counts = [_checks.integer(k, "trial_counts[...]", low=2) for k in trial_counts]
    bounds = {k: epsilon_lower_bound(*randomized_response(epsilon, k, seed=seed), confidence=confidence).epsilon
              for k in counts}
    return pd.Series(bounds, name=f"eps_lb (true eps = {epsilon:g})").rename_axis("trials")


# ---------------------------------------------------------------------------------------------
# the chapter's figures
# ---------------------------------------------------------------------------------------------

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
    return _titled(fig, title)


def audit_epsilons(table, weights: str = "fixed", neighbours: str = "add/remove", floor: float = 1e-3):
    """eps_lb beside the exact loss and the guarantee, one panel per output, log scale.

    x: (n, target); one colour per synthesizer. Filled dot: eps_lb (an open triangle at ``floor``
    when the attack proved nothing); cross: the exact loss on the central region (the most any
    test can show); bar: the guarantee (2 Delta, times m for m datasets).
    """
    sub = table[(table["weights"] == weights) & (table["neighbours"] == neighbours)]
    cells = list(dict.fromkeys(zip(sub["n"], sub["target"])))
    names = list(dict.fromkeys(sub["synthesizer"]))
    fig, axes = plt.subplots(1, len(OUTPUTS), figsize=(15, 4.6), sharey=False)
    for ax, output in zip(axes, OUTPUTS):
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

    keys = [k for k in scores if k[0] == n and k[2] == weights and k[3] == neighbours and k[4] == target]
    names = list(dict.fromkeys(k[1] for k in keys))
    fig, axes = plt.subplots(1, len(OUTPUTS), figsize=(14, 4.2), sharey=True)
    for ax, output in zip(axes, OUTPUTS):
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


# ---------------------------------------------------------------------------------------------
# the censored mechanism (CM), audited the same way (book/strict_privacy.md)
# ---------------------------------------------------------------------------------------------

def _censored_world(y, epsilon: float, prior: dict | None) -> dict:
    """CM's censored posterior on ``y``, as the Poisson program's data with censor = 1."""
    from ppmlib.mechanism.censoring import censoring
    fam = family("poisson")
    y = _checks.counts(y)
    data = fam.stan_data(y, None, np.ones(y.size), fam.check_prior(prior), False,
                         censoring(fam, y, None, np.ones(y.size), epsilon))
    return data


def audit_censored(y, epsilon: float, *, trials: int = 2000, targets=TARGETS, confidence: float = 0.95,
                   prior: dict | None = None, seed=0, grid_points: int = 20001) -> pd.DataFrame:
    """Audit CM (alpha = 1, censored at ``epsilon``) on ``y`` against the removal of each target record.

    Each trial runs the mechanism on D or on D' (the target removed) at random and releases one
    draw theta, drawn exactly from the censored posterior (by inverse CDF on a grid); the attack
    scores it by the exact log density ratio of the two censored posteriors (on a common grid), and
    :func:`ppmlib.evaluate.audit.epsilon_lower_bound` turns the scores into a lower bound on
    epsilon, set beside the guarantee epsilon (every database, no Delta from draws).

    Parameters
    ----------
    y : array_like, shape (n,)
        The counts D.
    epsilon : float
        CM's per-draw epsilon.
    trials : int
        Mechanism runs per target.
    targets : sequence of str
        Any of :data:`TARGETS`.
    confidence : float
        Of the lower bound.
    prior : dict, optional
        The Poisson prior.
    seed : int
        Seeds the trials.
    grid_points : int
        Points of the common grid.

    Returns
    -------
    pandas.DataFrame
        One row per target: its value, the exact largest abs log ratio over the grid, eps_lb, the
        bound epsilon and their ratio.
    """
    y = _checks.counts(y)
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    targets = _check_choice(targets, TARGETS, "targets")
    trials = _checks.integer(trials, "trials", low=4)
    rows = []
    for target, trial_seed in zip(targets, seeds(_checks.seed(seed), len(targets))):
        i = target_index(y, target)
        worlds = [_censored_world(y, epsilon, prior), _censored_world(np.delete(y, i), epsilon, prior)]
        supports = [exact.censored_support(w) for w in worlds]
        on_d, on_neighbour, member_seed = seeds(trial_seed, 3)
        rng = np.random.default_rng(member_seed)
        member = rng.random(trials) < 0.5
        theta = np.where(member, exact.censored_draws(worlds[0], trials, on_d),
                         exact.censored_draws(worlds[1], trials, on_neighbour))
        grid = np.linspace(min(s[0] for s in supports), max(s[1] for s in supports), grid_points)
        log_d = [exact.censored_log_density(grid, w) for w in worlds]
        log_d = [v - exact._log_trapezoid(v, grid) for v in log_d]
        ratio = log_d[0] - log_d[1]
        scores = np.interp(theta, grid, ratio)
        result = epsilon_lower_bound(scores, member, confidence)
        rows.append({"target": target, "value": int(y[i]), "exact loss": float(np.abs(ratio).max()),
                     "eps_lb": result.epsilon, "bound": epsilon, "ratio": result.epsilon / epsilon,
                     "AUC": result.auc, "trials": trials})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# the noisy-counts release (the command's default strict scheme), attacked the same way
# ---------------------------------------------------------------------------------------------

def audit_noisy_counts(y, epsilon: float, *, trials: int = 20000, bounds=None, width: float = 0.05, seed=0,
                       confidence: float = 0.95):
    """The audit's lower bound on epsilon for the noisy counts of :func:`ppmlib.mechanism.nss.release_counts`
    (Laplace noise at ``epsilon``), D against D' without its largest record (add/remove).

    Each trial releases the counts of log y over public bins, on D or on D' at random, with its own seed;
    the attacker reads the count of the bin that holds the removed record. Everything the scheme
    releases (the m datasets) is post-processing of these counts, so this is the strongest attack
    on it; its lower bound must stay at or below ``epsilon``, and sits near it when the noise is the
    stated one.

    Parameters
    ----------
    y : array_like
        The database (positive values; the counts are of log y).
    epsilon : float
        The counts' epsilon.
    trials : int
        Releases, shared between D and D'.
    bounds : tuple of two floats, optional
        Public bounds of log y (default: the range of log y, widened to whole bins and one bin more).
    width : float
        The bins' width.
    seed, confidence
        As for :func:`ppmlib.evaluate.audit.epsilon_lower_bound`.

    Returns
    -------
    ppmlib.evaluate.audit.AttackBound
    """
    from ppmlib.mechanism.nss import release_counts
    y = _checks.finite_array(y, "y", ndim=1)
    if (y <= 0).any():
        raise BadArgument("y must be positive: the counts are of log y")
    log_y = np.log(y)
    trials = _checks.integer(trials, "trials", low=8)
    if bounds is None:
        bounds = (width * (np.floor(log_y.min() / width) - 1), width * (np.ceil(log_y.max() / width) + 1))
    target = int(np.argmax(log_y))
    worlds = (np.delete(log_y, target), log_y)
    exact = [release_counts(world, None, bounds=bounds, width=width, rho=np.inf).counts[0] for world in worlds]
    column = int(np.argmax(exact[1] - exact[0]))            # the bin the mechanism itself puts the record in
    member_seed, noise_seed = seeds(seed, 2)
    member = np.random.default_rng(member_seed).random(trials) < 0.5
    noise = seeds(noise_seed, trials)
    scores = np.array([release_counts(worlds[int(on)], None, bounds=bounds, width=width, epsilon=epsilon,
                                      seed=s).counts[0, column] for on, s in zip(member, noise)])
    return epsilon_lower_bound(scores, member, confidence=confidence)
