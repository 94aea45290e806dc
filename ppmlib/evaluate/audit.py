"""Membership attacks on the pseudo posterior mechanism and the lower bounds on epsilon they prove.

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
negative binomial, and both likelihood ratios are closed forms (:mod:`ppmlib.inference.exact`). Thousands of
mechanism runs therefore take milliseconds, and the attack on each output is the most powerful one
(Neyman-Pearson) for an attacker who knows everything but the target's membership.

The privacy audit chapter's study (its synthesizers with exact draws, the neighbours, the audit of
a database and its tables) is :mod:`ppmlib.studies.privacy_audit`.
"""
from __future__ import annotations

__all__ = ["OUTPUTS", "clopper_pearson", "epsilon_from_rates", "AttackBound", "auc", "roc_curve",
           "epsilon_lower_bound", "randomized_response", "mechanism_trials", "exact_loss"]

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ppmlib.inference import exact
from ppmlib import _checks
from ppmlib.errors import BadArgument

#: What the attacker sees: one parameter draw, one synthetic dataset, or m datasets.
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
        raise BadArgument("successes and trials must be whole numbers")
    if (n < 1).any():
        raise BadArgument(f"trials must be >= 1, got {n.min():g}")
    if (k < 0).any() or (k > n).any():
        raise BadArgument("successes must lie in [0, trials]")
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
            raise BadArgument(f"{name} must lie in [0, 1]; found {rate[(rate < 0) | (rate > 1)].ravel()[0]:g}")
    if (fpr == 0).any():
        raise BadArgument("fpr must be positive (use the upper end of its confidence interval, never a raw 0)")
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
        raise BadArgument("member must contain both True (from D) and False (from D') trials")
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
        raise BadArgument(f"member must be a boolean array of the scores' shape {scores.shape}, "
                         f"got dtype {member.dtype} and shape {member.shape}")
    if scores.size < minimum:
        raise BadArgument(f"need at least {minimum} trials, got {scores.size}")
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
            raise BadArgument(f"the {name} half of the trials holds outputs of only one database; "
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
        raise BadArgument(f"output must be one of {OUTPUTS}, got {output!r}")
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
    :func:`ppmlib.inference.exact.synthetic_sum_logpmf`), so the sum is drawn directly: Poisson(n_synthetic
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
