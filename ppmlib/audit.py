"""An empirical privacy audit of the pseudo posterior mechanism (book/privacy_audit.md).

Run the mechanism many times on two neighbouring databases, D (with a target record) and D' (without
it, or with its value replaced), attack every output with the exact likelihood-ratio test, and turn
the attack's true- and false-positive rates into a confidence lower bound on epsilon, as the
DP-auditing literature does for other mechanisms (Jagielski et al. 2020; Nasr et al. 2021):

    eps_lb = log(TPR_low / FPR_high),

with TPR_low and FPR_high the ends of two-sided 95% Clopper-Pearson intervals. Each end is a
one-sided 97.5% bound, so the pair, and hence eps_lb <= epsilon, holds with probability at least 95%
(Bonferroni). The threshold of the test is chosen on the first half of the trials and the rates are
counted on the second half, so picking the best threshold adds no optimism.

For the conjugate Poisson-Gamma synthesizer everything is exact and vectorised: every released
parameter draw is a Gamma draw, the sum of a synthetic Poisson dataset (sufficient for the rate) is
negative binomial, and both likelihood ratios are closed forms (:mod:`ppmlib.exact`). Thousands of
mechanism runs therefore take milliseconds, and the attack on each output is the most powerful one
(Neyman-Pearson) for an attacker who knows everything but the target's membership.
"""
from __future__ import annotations

__all__ = ["SYNTHESIZERS", "TARGETS", "RELATIONS", "MODES", "OUTPUTS", "clopper_pearson", "epsilon_from_rates",
           "AttackBound", "auc", "roc_curve", "epsilon_lower_bound", "randomized_response", "mechanism_trials",
           "exact_loss", "Release", "draws_delta", "grid_delta", "match_scalar_weight", "pipeline", "target_index",
           "neighbour", "Audit", "audit", "run", "releases_table", "targets_table", "bounds_table", "tightness",
           "modes_table"]

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, stats

from . import _checks, exact, simulate
from .models import POISSON_PRIOR
from .seeding import seeds
from .weights import lw_risks, lw_weights, scalar_weights

SYNTHESIZERS = ("Unweighted", "LW", "SW")
# Re-weighted LW ("LW_final", the 2025 paper's Algorithm 1; ppmlib.reweight_to_tolerance) is not audited
# here. To audit it, add its weight rule to `pipeline` under that name and append the name to
# SYNTHESIZERS; nothing else in this module needs to change.
TARGETS = ("largest", "smallest", "typical")
RELATIONS = ("add/remove", "replace-one")
MODES = ("fixed", "recomputed")
OUTPUTS = ("theta", "one dataset", "m datasets")


# ---------------------------------------------------------------------------------------------
# from an attack's scores to a lower bound on epsilon
# ---------------------------------------------------------------------------------------------

def clopper_pearson(successes, trials, confidence: float = 0.95):
    """Two-sided Clopper-Pearson (exact binomial) interval (low, high) for a rate.

    ``successes`` and ``trials`` are integers or integer arrays of one shape; the ends are the
    beta quantiles Beta(a/2; k, N - k + 1) and Beta(1 - a/2; k + 1, N - k), a = 1 - confidence,
    with low = 0 at k = 0 and high = 1 at k = N. Each end alone is a one-sided (1 + confidence)/2 bound.

    See Also
    --------
    epsilon_lower_bound : uses these ends for the true- and false-positive rates.

    Examples
    --------
    >>> low, high = clopper_pearson(50, 100)
    >>> round(low, 3), round(high, 3)
    (0.398, 0.602)
    """
    confidence = _checks.real(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    k = _checks.finite_array(successes, "successes")
    n = _checks.finite_array(trials, "trials")
    if (k != np.round(k)).any() or (n != np.round(n)).any():
        raise ValueError("successes and trials must be whole numbers")
    if (n < 1).any():
        raise ValueError(f"trials must be >= 1, got {n.min():g}")
    if (k < 0).any() or (k > n).any():
        raise ValueError("successes must lie in [0, trials]")
    tail = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        low = np.where(k == 0, 0.0, stats.beta.ppf(tail, k, n - k + 1))
        high = np.where(k == n, 1.0, stats.beta.ppf(1.0 - tail, k + 1, n - k))
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def epsilon_from_rates(tpr, fpr):
    """log(tpr / fpr): the epsilon a test with these rates proves (the DP inequality tpr <= e^eps fpr).

    Rates must lie in [0, 1]; fpr must be positive (a Clopper-Pearson upper end always is).
    tpr = 0 gives -inf: no evidence at all.

    Examples
    --------
    >>> round(epsilon_from_rates(0.6, 0.2), 4)          # log 3
    1.0986
    """
    tpr = _checks.finite_array(tpr, "tpr")
    fpr = _checks.finite_array(fpr, "fpr")
    for name, rate in (("tpr", tpr), ("fpr", fpr)):
        if ((rate < 0) | (rate > 1)).any():
            raise ValueError(f"{name} must lie in [0, 1]; found {rate[(rate < 0) | (rate > 1)].ravel()[0]:g}")
    if (fpr == 0).any():
        raise ValueError("fpr must be positive (use the upper end of its confidence interval, never a raw 0)")
    with np.errstate(divide="ignore"):
        out = np.log(tpr) - np.log(fpr)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class AttackBound:
    """The lower bound one attack proves, and how it was obtained.

    Attributes
    ----------
    epsilon : float
        max(0, log_ratio), the reported eps_lb (epsilon is never negative)
    log_ratio : float
        log(tpr_low / fpr_high) on the evaluation half (-inf when no true positive)
    tpr_low, fpr_high : float
        Clopper-Pearson ends on the evaluation half
    threshold, direction : float, int
        the rule chosen on the selection half: claim "from D" when score > threshold
        (direction +1), or claim "from D'" when score < threshold (direction -1)
    positives, negatives : int
        evaluation-half trials whose claim is true / false
    auc : float
        area under the ROC curve of the score over all trials (0.5: no information)
    """
    epsilon: float
    log_ratio: float
    tpr_low: float
    fpr_high: float
    threshold: float
    direction: int
    positives: int
    negatives: int
    auc: float


def auc(scores, member) -> float:
    """Area under the ROC curve of ``scores`` for telling ``member`` (from D) from the rest.

    The Mann-Whitney statistic with ties counted one half; 0.5 means the score carries no information.
    """
    scores, member = _scores_and_labels(scores, member, minimum=2)
    ranks = stats.rankdata(scores)
    p, q = member.sum(), (~member).sum()
    if p == 0 or q == 0:
        raise ValueError("member must contain both True (from D) and False (from D') trials")
    return float((ranks[member].sum() - p * (p + 1) / 2) / (p * q))


def roc_curve(scores, member) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) of the rule "claim D when score > t" for every threshold t, from (0, 0) to (1, 1)."""
    scores, member = _scores_and_labels(scores, member, minimum=2)
    thresholds = np.r_[np.inf, np.unique(scores)[::-1], -np.inf]
    pos, neg = np.sort(scores[member]), np.sort(scores[~member])
    tp, fp = _rule_counts(pos, neg, thresholds, 1)
    return fp / max(neg.size, 1), tp / max(pos.size, 1)


def _scores_and_labels(scores, member, minimum: int):
    scores = _checks.finite_array(scores, "scores", ndim=1)
    member = np.asarray(member)
    if member.dtype != bool or member.shape != scores.shape:
        raise ValueError(f"member must be a boolean array of the scores' shape {scores.shape}, "
                         f"got dtype {member.dtype} and shape {member.shape}")
    if scores.size < minimum:
        raise ValueError(f"need at least {minimum} trials, got {scores.size}")
    return scores, member


def _rule_counts(pos, neg, thresholds, direction):
    """(true claims, claims among the other world) for each threshold: pos/neg sorted."""
    if direction > 0:   # claim D when score > t
        return (pos.size - np.searchsorted(pos, thresholds, side="right"),
                neg.size - np.searchsorted(neg, thresholds, side="right"))
    # claim D' when score < t: the "positives" are now the D' trials
    return np.searchsorted(neg, thresholds, side="left"), np.searchsorted(pos, thresholds, side="left")


def _log_ratio(tp, n_true, fp, n_false, confidence):
    tpr_low, _ = clopper_pearson(tp, n_true, confidence)
    _, fpr_high = clopper_pearson(fp, n_false, confidence)
    return epsilon_from_rates(tpr_low, fpr_high), tpr_low, fpr_high


def epsilon_lower_bound(scores, member, confidence: float = 0.95, max_thresholds: int = 200) -> AttackBound:
    """A confidence lower bound on epsilon from an attack's scores, threshold chosen on held-out trials.

    Parameters
    ----------
    scores : (T,) the attack's score per trial; large means "the output came from D"
    member : (T,) bool, True where the mechanism was run on D (with the target), False for D'
    confidence : level of the bound (two-sided Clopper-Pearson intervals, Bonferroni over the pair)
    max_thresholds : candidate thresholds, quantiles of the selection half's scores

    The first half of the trials (in the given order, which must be random, e.g. iid trials)
    selects the rule, threshold and direction with the largest bound *on that half*; the second
    half gives the reported bound. Both directions are legitimate tests because the DP inequality
    holds with D and D' swapped.

    See Also
    --------
    clopper_pearson : the interval ends.
    randomized_response : a mechanism with a known epsilon, to check this bound against.
    mechanism_trials : scores of the exact attack on the pseudo posterior mechanism.

    Examples
    --------
    >>> bits, member = randomized_response(1.0, 20000, seed=0)   # a 1.0-DP mechanism
    >>> round(epsilon_lower_bound(bits, member).epsilon, 3)      # a lower bound close to it
    0.939
    """
    scores, member = _scores_and_labels(scores, member, minimum=4)
    max_thresholds = _checks.integer(max_thresholds, "max_thresholds", low=1)
    half = scores.size // 2
    selection, evaluation = slice(0, half), slice(half, scores.size)
    for name, part in (("selection", selection), ("evaluation", evaluation)):
        if member[part].all() or not member[part].any():
            raise ValueError(f"the {name} half of the trials holds outputs of only one database; "
                             "run more trials (each half needs both D and D')")
    candidates = np.unique(np.quantile(scores[selection], np.linspace(0, 1, max_thresholds)))
    best = (-np.inf, candidates[0], 1)
    pos, neg = np.sort(scores[selection][member[selection]]), np.sort(scores[selection][~member[selection]])
    for direction in (1, -1):
        tp, fp = _rule_counts(pos, neg, candidates, direction)
        n_true, n_false = (pos.size, neg.size) if direction > 0 else (neg.size, pos.size)
        value, _, _ = _log_ratio(tp, n_true, fp, n_false, confidence)
        i = int(np.argmax(value))
        if value[i] > best[0]:
            best = (float(value[i]), float(candidates[i]), direction)
    _, threshold, direction = best
    pos, neg = np.sort(scores[evaluation][member[evaluation]]), np.sort(scores[evaluation][~member[evaluation]])
    tp, fp = _rule_counts(pos, neg, np.array([threshold]), direction)
    n_true, n_false = (pos.size, neg.size) if direction > 0 else (neg.size, pos.size)
    log_ratio, tpr_low, fpr_high = _log_ratio(tp, n_true, fp, n_false, confidence)
    log_ratio, tpr_low, fpr_high = float(log_ratio[0]), float(tpr_low[0]), float(fpr_high[0])
    return AttackBound(max(0.0, log_ratio), log_ratio, tpr_low, fpr_high, threshold, direction,
                       n_true, n_false, auc(scores, member))


def randomized_response(epsilon: float, trials: int, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """A mechanism with a known epsilon, to calibrate the audit: (reported bits, member), each (trials,).

    The database holds one bit (1 in D, 0 in D'); the mechanism reports it truthfully with
    probability e^eps / (1 + e^eps). The best test ("claim D when the bit is 1") has
    TPR / FPR = e^eps exactly, so an audit of it should prove a bound just below ``epsilon``.
    """
    epsilon = _checks.real(epsilon, "epsilon", low=0)
    trials = _checks.integer(trials, "trials", low=2)
    rng = np.random.default_rng(_checks.seed(seed))
    member = rng.random(trials) < 0.5
    truthful = rng.random(trials) < np.exp(epsilon) / (1.0 + np.exp(epsilon))
    return np.where(truthful, member, ~member).astype(float), member


# ---------------------------------------------------------------------------------------------
# the mechanism, run many times on one of two databases, and the exact attack on its outputs
# ---------------------------------------------------------------------------------------------

def _world(world, name):
    if not (isinstance(world, tuple) and len(world) == 2):
        raise TypeError(f"{name} must be a (shape, rate) pair of a Gamma pseudo posterior")
    shape = _checks.real(world[0], f"{name} shape", low=0, low_open=True)
    rate = _checks.real(world[1], f"{name} rate", low=0, low_open=True)
    return shape, rate


def _output(output):
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")
    return output


def mechanism_trials(world_d, world_d_prime, output: str = "theta", *, trials: int = 2000, m: int = 100,
                     n_synthetic: int = 1000, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Run the mechanism ``trials`` times, each on D or D' at random, and score every output.

    Parameters
    ----------
    world_d, world_d_prime : (shape, rate) of the Gamma pseudo posterior on D and on D'
    output : "theta" (one parameter draw, the eps-DP release), "one dataset" (one synthetic
        dataset of ``n_synthetic`` Poisson records made from one draw) or "m datasets" (``m``
        datasets, one per independent draw)
    seed : int or Generator

    Returns
    -------
    scores : (trials,) the exact log likelihood ratio log p(output | D) - log p(output | D')
    member : (trials,) bool, True where the mechanism ran on D

    A synthetic dataset enters only through its sum, which is sufficient (see
    :func:`ppmlib.exact.synthetic_sum_logpmf`), so the sum is drawn directly: Poisson(n_synthetic
    lambda), exactly the distribution of the sum of n_synthetic Poisson(lambda) records.
    """
    (a1, b1), (a0, b0) = _world(world_d, "world_d"), _world(world_d_prime, "world_d_prime")
    output = _output(output)
    trials = _checks.integer(trials, "trials", low=2)
    m = _checks.integer(m, "m", low=1)
    n_synthetic = _checks.integer(n_synthetic, "n_synthetic", low=1)
    rng = np.random.default_rng(seed)
    member = rng.random(trials) < 0.5
    shape, rate = np.where(member, a1, a0)[:, None], np.where(member, b1, b0)[:, None]
    k = m if output == "m datasets" else 1
    theta = rng.gamma(shape, 1.0 / rate, size=(trials, k))
    if output == "theta":
        scores = (stats.gamma.logpdf(theta[:, 0], a1, scale=1 / b1)
                  - stats.gamma.logpdf(theta[:, 0], a0, scale=1 / b0))
    else:
        sums = rng.poisson(n_synthetic * theta)
        scores = (exact.synthetic_sum_logpmf(sums, n_synthetic, a1, b1)
                  - exact.synthetic_sum_logpmf(sums, n_synthetic, a0, b0)).sum(axis=1)
    return scores, member


def exact_loss(world_d, world_d_prime, output: str = "theta", *, m: int = 100, n_synthetic: int = 1000,
               mass: float = 1 - 1e-6, grid_points: int = 4001) -> float:
    """The largest absolute log likelihood ratio of one output where both worlds hold ``mass``.

    For "theta" the sup over a grid spanning both Gamma pseudo posteriors' central intervals;
    for a synthetic dataset over every sum in both negative binomials' central intervals; for m
    datasets m times that (the m log ratios add, and each can sit at its largest value). No test
    on a finite number of trials can prove more than this except by luck in the far tails, where
    the log ratio of a Poisson model grows without bound but the probability is negligible
    (book/dp_definitions.md).
    """
    (a1, b1), (a0, b0) = _world(world_d, "world_d"), _world(world_d_prime, "world_d_prime")
    output = _output(output)
    mass = _checks.real(mass, "mass", low=0, high=1, low_open=True, high_open=True)
    tail = (1.0 - mass) / 2.0
    if output == "theta":
        lo = min(stats.gamma.ppf(tail, a1, scale=1 / b1), stats.gamma.ppf(tail, a0, scale=1 / b0))
        hi = max(stats.gamma.isf(tail, a1, scale=1 / b1), stats.gamma.isf(tail, a0, scale=1 / b0))
        grid = np.linspace(lo, hi, _checks.integer(grid_points, "grid_points", low=2))
        return float(np.abs(exact.gamma_logpdf(grid, a1, b1) - exact.gamma_logpdf(grid, a0, b0)).max())
    n_synthetic = _checks.integer(n_synthetic, "n_synthetic", low=1)
    ends = [stats.nbinom(a, b / (b + n_synthetic)) for a, b in ((a1, b1), (a0, b0))]
    lo, hi = min(d.ppf(tail) for d in ends), max(d.isf(tail) for d in ends)
    s = np.arange(lo, hi + 1)
    one = float(np.abs(exact.synthetic_sum_logpmf(s, n_synthetic, a1, b1)
                       - exact.synthetic_sum_logpmf(s, n_synthetic, a0, b0)).max())
    return one * (_checks.integer(m, "m", low=1) if output == "m datasets" else 1)


# ---------------------------------------------------------------------------------------------
# the synthesizers' weights and bounds, computed from exact draws as ppmlib computes them from MCMC
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Release:
    """One synthesizer's weights on one database and its Lipschitz bound.

    Attributes
    ----------
    name : str
        "Unweighted", "LW" or "SW"
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
    """
    name: str
    alpha: np.ndarray
    delta: float
    delta_grid: float
    a: float | None = None
    risk: np.ndarray | None = None


def _poisson_log_lik(lam, y) -> np.ndarray:
    """S x n log-likelihood matrix of draws ``lam`` (S,), the layout of ``Fit.log_lik``."""
    return exact.poisson_log_lik(lam, y).T


def draws_delta(y, alpha, *, draws: int = 4000, seed=0, prior: dict | None = None) -> float:
    """Delta of the alpha-weighted pseudo posterior from ``draws`` exact draws: the maximum of
    :func:`ppmlib.exact.draw_record_bounds` (which needs only the smallest and the largest draw)."""
    return float(exact.draw_record_bounds(y, alpha, draws, seed, **_prior(prior)).max())


def grid_delta(y, alpha, *, prior: dict | None = None, mass: float = 1 - 1e-6, grid_points: int = 2001) -> float:
    """Delta as the sup over a grid of the exact pseudo posterior's central ``mass`` interval."""
    grid = np.linspace(*exact.central_interval(y, alpha, mass=mass, **_prior(prior)), grid_points)
    return float(exact.grid_record_bounds(grid, y, alpha).max())


def _prior(prior) -> dict:
    prior = dict(POISSON_PRIOR if prior is None else prior)
    unknown = set(prior) - set(POISSON_PRIOR)
    if unknown:
        raise ValueError(f"unknown prior setting(s) {sorted(unknown)}; known: {sorted(POISSON_PRIOR)}")
    return prior


def match_scalar_weight(y, target_delta: float, *, draws: int = 4000, seed=0, prior: dict | None = None,
                        rtol: float = 1e-6) -> float:
    """SW: the scalar weight a whose Delta (from exact draws) equals ``target_delta``.

    With exact draws made from common random numbers (:func:`ppmlib.exact.sample`), Delta(a) is a
    continuous increasing function, so a bracketing root finder (Brent) replaces the refit loop
    of :func:`ppmlib.match_delta`. Returns 1 when even a = 1 stays below the target.
    """
    target_delta = _checks.real(target_delta, "target_delta", low=0, low_open=True)
    n = np.asarray(y).shape[0]

    def gap(a):
        return draws_delta(y, scalar_weights(a, n), draws=draws, seed=seed, prior=prior) - target_delta

    if gap(1.0) <= 0:
        return 1.0
    return float(optimize.brentq(gap, 1e-9, 1.0, rtol=rtol))


def pipeline(y, *, draws: int = 4000, seed=0, c: float = 1.0, g: float = 0.0,
             prior: dict | None = None) -> dict[str, Release]:
    """Unweighted, LW and SW on one database, as the book's pipeline runs them, with exact draws.

    LW's weights come from the log-likelihood of ``draws`` unweighted draws (ppmlib.lw_weights);
    SW's scalar is matched to LW's Delta. One ``seed`` fixes every draw, so two databases audited
    with the same seed differ in their weights only through their data.
    """
    y = _checks.counts(y)
    seed_unweighted, seed_lw, seed_sw = seeds(_checks.seed(seed), 3)
    base = _poisson_log_lik(exact.sample(y, None, draws, seed_unweighted, **_prior(prior)), y)
    alpha_lw = lw_weights(base, c=c, g=g)
    ones = np.ones(y.size)
    out = {"Unweighted": Release("Unweighted", ones, draws_delta(y, ones, draws=draws, seed=seed_unweighted, prior=prior),
                                 grid_delta(y, ones, prior=prior)),
           "LW": Release("LW", alpha_lw, draws_delta(y, alpha_lw, draws=draws, seed=seed_lw, prior=prior),
                         grid_delta(y, alpha_lw, prior=prior), risk=lw_risks(base))}
    a = match_scalar_weight(y, out["LW"].delta, draws=draws, seed=seed_sw, prior=prior)
    alpha_sw = scalar_weights(a, y.size)
    out["SW"] = Release("SW", alpha_sw, draws_delta(y, alpha_sw, draws=draws, seed=seed_sw, prior=prior),
                        grid_delta(y, alpha_sw, prior=prior), a)
    return out


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
    raise ValueError(f"target must be one of {TARGETS}, got {target!r}")


def neighbour(y, index: int, relation: str, replacement: int | None = None) -> np.ndarray:
    """D' for record ``index``: removed ("add/remove") or its value set to ``replacement``."""
    y = _checks.counts(y)
    index = _checks.integer(index, "index", low=0)
    if index >= y.size:
        raise ValueError(f"index {index} is out of range for {y.size} records")
    if relation == "add/remove":
        return np.delete(y, index)
    if relation == "replace-one":
        if replacement is None:
            raise ValueError("relation 'replace-one' needs a replacement value")
        out = y.copy()
        out[index] = _checks.integer(replacement, "replacement", low=0)
        return out
    raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")


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
    """The epsilon the theorem gives one draw: 2 Delta (add/remove), or 4 Delta with Delta the
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
        raise ValueError(f"{name} must be a non-empty selection of {allowed}, got {list(values)}")
    return values


def audit(y, *, trials: int = 2000, m: int = 100, targets=TARGETS, relations=RELATIONS, modes=MODES,
          synthesizers=SYNTHESIZERS, draws: int = 4000, c: float = 1.0, g: float = 0.0,
          confidence: float = 0.95, prior: dict | None = None, seed=0, progress: bool = False) -> Audit:
    """Audit Unweighted, LW and SW on the database ``y``: every target, neighbour relation,
    weight mode and output.

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
    epsilon_lower_bound : the bound of each setting.
    tightness, bounds_table : summaries of the result.

    Examples
    --------
    >>> y = simulate.poisson(100, 100, seed=1)
    >>> result = audit(y, trials=2000, m=20, seed=1)                           # doctest: +SKIP
    >>> result.table.query("output == 'theta'")[["synthesizer", "eps_lb", "bound"]]  # doctest: +SKIP
    """
    from .progress import progress_bar

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
    trial_seeds = iter(seeds(trials_seed, len(settings) * len(modes) * len(synthesizers) * len(OUTPUTS)))
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
                                                 n_synthetic=y.size, seed=next(trial_seeds))
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
             "2 Delta (compared with)": 2 * r.delta, "SW scalar a": r.a, "mean weight": float(r.alpha.mean()),
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


# --- issue 8: the audit chapter's calibration over trial counts (book/privacy_audit.md) ----------

__all__ += ["calibration_by_trials"]


def calibration_by_trials(epsilon: float, trial_counts, seed=0, confidence: float = 0.95) -> pd.Series:
    """The lower bound the audit proves for randomized response with a known ``epsilon``, for each
    number of trials in ``trial_counts`` (one :func:`randomized_response` run per count, from
    ``seed``): a Series indexed by the trial count. The gap to ``epsilon`` is what the trials cost."""
    counts = [_checks.integer(k, "trial_counts[...]", low=2) for k in trial_counts]
    bounds = {k: epsilon_lower_bound(*randomized_response(epsilon, k, seed=seed), confidence=confidence).epsilon
              for k in counts}
    return pd.Series(bounds, name=f"eps_lb (true eps = {epsilon:g})").rename_axis("trials")
