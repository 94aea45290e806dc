"""LW's scale c calibrated to a target epsilon from draws already made, refitting only to confirm.

Today's search (:func:`ppmlib.calibrate_lw_epsilon`) refits the synthesizer at every step: the two
ends of the range of c, then a root finder, often ten fits or more. Here the fits already made
*predict* Delta at a candidate scale c, and a refit only confirms:

* A fit with weights alpha0 has draws theta_s from the pseudo posterior
  prior(theta) prod_i p(y_i | theta)^alpha0_i. The pseudo posterior with weights alpha(c) differs by
  the factor prod_i p(y_i | theta)^(alpha_i(c) - alpha0_i), so the draws get the importance ratios

      log r_s = sum_i (alpha_i(c) - alpha0_i) f_s(x_i),    f_s(x_i) = log p(y_i | theta_s).

  They are Pareto smoothed (PSIS: Vehtari, Simpson, Gelman, Yao and Gabry, JMLR 2024), and the fitted
  generalized Pareto shape k-hat says whether they can be trusted (k-hat <= 0.7 for S of a few
  thousand).
* Delta(c) = max_s max_i alpha_i(c) abs(f_s(x_i)) is a maximum over S draws of the pseudo posterior.
  The prediction is the (1 - 1/(2S)) quantile of m_s = max_i alpha_i(c) abs(f_s(x_i)) under the
  smoothed weights: with equal weights (c such that alpha(c) = alpha0) it is the fit's own Delta, exactly.

:func:`calibrate_lw` fits the unweighted model (or takes it), predicts c from it, fits there,
predicts again from that fit (now close to the target, so k-hat is small) and fits once more only
if the first weighted fit missed the tolerance: three Stan fits in the common case. When a
prediction it needs is not trusted (k-hat above ``khat_max``) or the fits do not land within the
tolerance, it falls back to the refit search of :func:`ppmlib.match_delta`, bracketed by the fits
already made, and says so (a warning, and ``calibration["method"]``).

What a prediction never does: set epsilon. Every epsilon reported is 2 Delta of the fit actually
released, computed from its own draws; the prediction only chooses where to fit.
"""
from __future__ import annotations

__all__ = ["pareto_smoothed_log_weights", "DeltaPrediction", "predict_delta", "calibrate_lw"]

import warnings
from dataclasses import dataclass, replace

import numpy as np

from ppmlib import _checks
from ppmlib.mechanism.bounds import _key_weights
from ppmlib.errors import BadArgument, CalibrationFailed
from ppmlib.inference.posterior import Fit, Sampler, _sampler, one_blas_thread
from ppmlib.mechanism.synthesis import Synthesis, match_delta, synthesizer
from ppmlib.mechanism.weights import lw_risks, min_max_scale, risk_to_weight

#: Above this Pareto k-hat the smoothed importance weights are not trusted (Vehtari et al. 2024:
#: 0.7 for sample sizes of a few thousand draws; their sample-size dependent threshold
#: min(1 - 1/log10(S), 0.7) is lower for fewer draws).
KHAT_MAX = 0.7


# ---------------------------------------------------------------------------------------------
# Pareto smoothed importance sampling
# ---------------------------------------------------------------------------------------------

def pareto_smoothed_log_weights(log_ratios, r_eff: float = 1.0) -> tuple[np.ndarray, float]:
    """Pareto smoothed importance weights (PSIS) and their diagnostic k-hat.

    The largest M = ceil(min(S / 5, 3 sqrt(S / r_eff))) ratios are replaced by the expected order
    statistics of a generalized Pareto distribution fitted to them (Zhang and Stephens' empirical
    Bayes estimate with a weak prior on k), truncated at the largest raw ratio, and the weights
    normalised (Vehtari et al. 2024, Algorithm 1; the arithmetic of ArviZ's ``psislw``, which the
    tests compare it with).

    Parameters
    ----------
    log_ratios : array_like, shape (S,)
        log of the importance ratios target / proposal, up to a constant; finite.
    r_eff : float
        Relative efficiency of the draws (ESS / S), in (0, 1]; 1 for independent draws.

    Returns
    -------
    log_weights : ndarray, shape (S,)
        The smoothed log weights, normalised so that their exponentials sum to 1.
    khat : float
        The estimated Pareto shape: the weights are trusted up to about 0.7; inf when the tail
        has too few draws to fit; -inf when every ratio is equal (equal weights, exact).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> log_w, khat = pareto_smoothed_log_weights(rng.normal(0, 0.3, size=4000))
    >>> round(float(np.exp(log_w).sum()), 12), khat < 0.5
    (1.0, True)
    """
    x = _checks.finite_array(log_ratios, "log_ratios", ndim=1).copy()
    r_eff = _checks.real(r_eff, "r_eff", low=0, high=1, low_open=True)
    S = x.size
    if S < 2:
        raise BadArgument(f"log_ratios needs at least 2 draws, got {S}")
    cutoff_index = -int(np.ceil(min(S / 5.0, 3 * (S / r_eff) ** 0.5))) - 1
    x -= x.max()
    if not np.any(x):  # every ratio equal: the proposal is the target, the weights are exact
        return np.full(S, -np.log(S)), -np.inf
    order = np.argsort(x)
    cutoff = max(x[order[cutoff_index]], np.log(np.finfo(float).tiny))
    tail = np.flatnonzero(x > cutoff)
    khat = np.inf
    if tail.size > 4:
        tail_order = np.argsort(x[tail])
        exceedances = np.exp(x[tail][tail_order]) - np.exp(cutoff)
        khat, sigma = _generalized_pareto_fit(exceedances)
        if np.isfinite(khat):
            levels = np.arange(0.5, tail.size) / tail.size
            x[tail[tail_order]] = np.log(_generalized_pareto_quantile(levels, khat, sigma) + np.exp(cutoff))
            x[x > 0] = 0.0  # no smoothed weight above the largest raw one
    top = x.max()
    x -= top + np.log(np.exp(x - top).sum())
    return x, float(khat)


def _generalized_pareto_fit(exceedances: np.ndarray) -> tuple[float, float]:
    """Shape k and scale sigma of a generalized Pareto fit to sorted positive exceedances
    (Zhang and Stephens 2009, with the weakly informative prior on k of Vehtari et al.)."""
    n = exceedances.size
    grid = 30 + int(n**0.5)
    b = 1 - np.sqrt(grid / (np.arange(1, grid + 1, dtype=float) - 0.5))
    b /= 3 * exceedances[int(n / 4 + 0.5) - 1]
    b += 1 / exceedances[-1]
    k = np.log1p(-b[:, None] * exceedances).mean(axis=1)
    profile = n * (np.log(-(b / k)) - k - 1)
    weights = 1 / np.exp(profile - profile[:, None]).sum(axis=1)
    kept = weights >= 10 * np.finfo(float).eps
    weights, b = weights[kept], b[kept]
    weights /= weights.sum()
    b_post = np.sum(b * weights)
    k_post = np.log1p(-b_post * exceedances).mean()
    sigma = -k_post / b_post
    return (n * k_post + 10 * 0.5) / (n + 10), sigma


def _generalized_pareto_quantile(levels: np.ndarray, k: float, sigma: float) -> np.ndarray:
    """Quantiles of the generalized Pareto distribution at ``levels`` in (0, 1)."""
    if sigma <= 0:
        return np.full_like(levels, np.nan)
    if abs(k) < np.finfo(float).eps:
        return -sigma * np.log1p(-levels)
    return sigma * np.expm1(-k * np.log1p(-levels)) / k


# ---------------------------------------------------------------------------------------------
# Delta at other weights, from the draws of one fit
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DeltaPrediction:
    """Delta predicted at C candidate weight vectors from the draws of one fit.

    Attributes
    ----------
    delta : ndarray, shape (C,)
        The predicted Delta at each candidate.
    khat : ndarray, shape (C,)
        PSIS's Pareto k-hat of each candidate's importance weights.
    ess : ndarray, shape (C,)
        The smoothed weights' effective sample size, 1 / sum w_s^2.
    """
    delta: np.ndarray
    khat: np.ndarray
    ess: np.ndarray

    def trusted(self, khat_max: float = KHAT_MAX) -> np.ndarray:
        """(C,) True where k-hat is at most ``khat_max``.

        Parameters
        ----------
        khat_max : float
            The largest k-hat trusted.

        Returns
        -------
        ndarray of bool, shape (C,)
        """
        return self.khat <= khat_max


def predict_delta(fit: Fit, candidates) -> DeltaPrediction:
    """Delta of the pseudo posterior with each candidate's weights, predicted from ``fit``'s draws.

    One pass over the fit's log-likelihood in tiles of draws and keys (no S x n matrix): per draw s, the
    log importance ratio sum_i (alpha_i - alpha0_i) f_s(x_i) and m_s = max_i alpha_i abs(f_s(x_i))
    for every candidate alpha; then PSIS and the weighted (1 - 1/(2S)) quantile of m_s. At a
    candidate equal to the fit's own weights the prediction is the fit's Delta, exactly
    (no truncation: q = 1).

    Parameters
    ----------
    fit : Fit
        The alpha0-weighted fit whose draws are reused (alpha0 = ``fit.weights``).
    candidates : array_like, shape (C, n) or (n,)
        The candidate weight vectors alpha in [0, 1].

    Returns
    -------
    DeltaPrediction
        delta, khat and ess, each of shape (C,).
    """
    alphas = np.atleast_2d(np.asarray(candidates, dtype=float))
    n = fit.y.size
    if alphas.ndim != 2 or alphas.shape[1] != n:
        raise BadArgument(f"candidates must have shape (C, {n}) (one weight per record), got {alphas.shape}")
    for row in alphas:
        _checks.weights(row, n, "candidates")
    keys = fit.record_keys
    n_keys = fit._distinct[0].size
    # per key: the summed weight change (for the ratio) and the largest new weight (for the bound)
    change = np.stack([np.bincount(keys, weights=a - fit.weights, minlength=n_keys) for a in alphas])
    key_max = np.stack([_key_weights(fit, a) for a in alphas])
    S = fit.n_draws
    log_ratio = np.zeros((alphas.shape[0], S))
    per_draw = np.zeros((alphas.shape[0], S))   # maxima of values >= 0
    # tiles over draws and keys that stay in cache: each adds its keys' share of the ratios and
    # raises the maxima of its draws
    with one_blas_thread(), np.errstate(invalid="ignore"):
        for part, keys, tile in fit.log_lik_tiles(max_elements=2**18, draws=64):
            log_ratio[:, part] += change[:, keys] @ tile.T
            np.maximum(per_draw[:, part], _weighted_block_max(np.abs(tile, out=tile), key_max[:, keys]),
                       out=per_draw[:, part])
    deltas, khats, ess = [], [], []
    for j in range(alphas.shape[0]):
        if not np.all(np.isfinite(log_ratio[j])):
            deltas.append(np.nan), khats.append(np.inf), ess.append(0.0)
            continue
        log_w, khat = pareto_smoothed_log_weights(log_ratio[j])
        w = np.exp(log_w)
        deltas.append(_weighted_top(per_draw[j], w))
        khats.append(khat)
        ess.append(1.0 / np.sum(w**2))
    return DeltaPrediction(np.array(deltas), np.array(khats), np.array(ess))


def _weighted_block_max(magnitude: np.ndarray, key_weights: np.ndarray) -> np.ndarray:
    """max over keys of key_weights[j, k] * magnitude[s, k] for every candidate j and draw s, (C, b).

    Only keys that can hold a draw's maximum for some candidate are visited: key k cannot for
    candidate j when its weight times its largest magnitude in the block is below the largest
    weight times smallest magnitude of any key (every draw's maximum is at least that). A key of
    weight 0 contributes 0, whatever its magnitude; the result is at least 0.
    """
    low, high = magnitude.min(axis=0), magnitude.max(axis=0)
    used = key_weights > 0
    with np.errstate(invalid="ignore"):   # 0 * inf where a weight-0 key's magnitude is inf: replaced by 0
        floor = np.where(used, key_weights * low, 0.0).max(axis=1, keepdims=True)
        needed = np.flatnonzero((used & (key_weights * high >= floor)).any(axis=0))
        if not needed.size:
            return np.zeros((key_weights.shape[0], magnitude.shape[0]))
        products = magnitude[None, :, needed] * key_weights[:, None, needed]
    products[np.broadcast_to(~used[:, None, needed], products.shape)] = 0.0
    return products.max(axis=2)


def _weighted_top(values: np.ndarray, weights: np.ndarray) -> float:
    """The weighted (1 - 1/(2S)) quantile of ``values``: the largest value whose weights above it
    leave less than 1/(2S); with equal weights, the maximum itself."""
    order = np.argsort(values)
    above = 1.0 - np.cumsum(weights[order])  # weight strictly above each sorted value
    level = 0.5 / values.size
    return float(values[order][np.argmax(above < level)])


# ---------------------------------------------------------------------------------------------
# the calibration
# ---------------------------------------------------------------------------------------------

def calibrate_lw(model: str, y, base, target_epsilon: float, *, tau: float, g: float = 0.0,
                 c_range: tuple = (0.05, 5.0), X=None, prior: dict | None = None, m: int = 20,
                 sampler: Sampler | None = None, seed: int = 0, khat_max: float = KHAT_MAX,
                 predicted_fits: int = 3, grid: int = 24, max_iter: int = 12, progress: bool = True) -> Synthesis:
    """LW with its scale c set so that epsilon = 2 Delta is ``target_epsilon`` (within 2 tau), in
    few fits: c is predicted from draws already made and a refit confirms.

    Step 1 predicts Delta(c) over a grid of c in ``c_range`` from ``base``'s draws (PSIS, see the
    module's docstring) and fits LW at the c whose prediction meets the target. Each later step
    predicts from the newest LW fit, whose pseudo posterior is close to the target's. The loop
    stops as soon as a fit's Delta is within ``tau`` of target_epsilon / 2. After
    ``predicted_fits`` LW fits without success, or when a step's prediction has k-hat above
    ``khat_max`` and cannot be used, the search of :func:`ppmlib.match_delta` takes over inside the
    bracket the fits have found (a warning says so). The first step's prediction is used even when
    its k-hat is high (from the unweighted fit the pseudo posterior of a small c is far away): it
    then only places the first fit, and the record says it was untrusted.

    Parameters
    ----------
    model, y, X, prior : as for :func:`ppmlib.synthesizer` (y of shape (n,), X of shape (n, K)).
    base : Synthesis or Fit
        The unweighted synthesizer (weights all 1, no truncation) whose risks set LW's weights.
    target_epsilon : float
        epsilon per synthetic dataset (m datasets cost m times this).
    tau : float
        Absolute tolerance on Delta.
    g, c_range : LW's fixed shift and the range of its scale c.
    m, sampler, seed : as for :func:`ppmlib.synthesizer`; one seed for every fit.
    khat_max : float
        The largest PSIS k-hat whose prediction is trusted after the first step (a value below any
        k-hat, e.g. -1, never trusts one: the search then runs after the first LW fit).
    predicted_fits : int
        LW fits placed by prediction before the search takes over (3: at most four Stan fits with the base before the search; three in the common case).
    grid : int
        Candidate values of c per prediction (one pass over the draws each): geometric over
        ``c_range`` from the unweighted fit, over [c / 1.5, 1.5 c] around a later proposal's c.
    max_iter : int
        At most this many fits in the fallback search.
    progress : bool
        Progress bars of the fallback search.

    Returns
    -------
    Synthesis
        The LW synthesizer released. ``.calibration`` holds ``method`` ("predicted", or
        "search" when the fallback ran, with ``fallback``, the reason), ``value`` (c), ``target``
        (Delta), ``atol``, ``history`` ((c, Delta) of every LW fit, in order), ``predictions``
        (per step: c, the predicted Delta, k-hat, ESS and whether it was trusted), ``fits`` (Stan
        fits made here, the base not counted) and ``target_epsilon``.

    Raises
    ------
    BadArgument
        The target is out of reach at the ends of ``c_range`` (stated with the reachable range,
        after the ends are fitted to confirm it), or a base that is not an unweighted fit.
    CalibrationFailed
        The fallback search did not get within tau in ``max_iter`` fits.
    """
    eps = _checks.real(target_epsilon, "target_epsilon", low=0, low_open=True)
    tau = _checks.real(tau, "tau", low=0, low_open=True)
    khat_max = _checks.real(khat_max, "khat_max")
    predicted_fits = _checks.integer(predicted_fits, "predicted_fits", low=1)
    grid = _checks.integer(grid, "grid", low=3)
    c_low = _checks.real(c_range[0], "c_range[0]", low=0, low_open=True)
    c_high = _checks.real(c_range[1], "c_range[1]", low=c_low, low_open=True)
    sampler = _sampler(sampler)
    base_fit = base.fit if isinstance(base, Synthesis) else base
    if not isinstance(base_fit, Fit):
        raise TypeError(f"base must be the unweighted Fit or Synthesis, got {type(base).__name__}")
    if not np.all(base_fit.weights == 1.0) or not base_fit.whole_chains:
        raise BadArgument("base must be the unweighted fit with all its draws (weights 1, no truncation): "
                         "its draws are the first proposal of the prediction")
    target = eps / 2
    risks = _risks(base, base_fit)
    finite = np.isfinite(risks)

    def weights_at(c: float) -> np.ndarray:
        alpha = np.zeros_like(risks)
        alpha[finite] = risk_to_weight(risks[finite], c, g)
        return alpha

    fits: dict[float, Synthesis] = {}

    def make(c: float) -> Synthesis:
        if c not in fits:
            # LW's weights at c, made once from the risks above: the same weights, fit and seeds as
            # synthesizer(..., "lw", base=base, c=c, g=g), without recomputing the risks at every fit
            made = synthesizer(model, y, "custom", weights=weights_at(c), X=X, prior=prior, m=m, sampler=sampler,
                               seed=seed, name="LW")
            fits[c] = replace(made, scheme="lw", settings={"c": c, "g": g, "q": 1.0, "seed": seed})
        return fits[c]

    predictions, proposal, fallback = [], base_fit, None
    for step in range(predicted_fits):
        if step == 0:   # from the unweighted fit: the whole range
            c_grid = np.geomspace(c_low, c_high, grid)
        else:           # from a fit near the target: around its c, the whole range if the target is outside
            c_grid = np.geomspace(max(c_low, proposal_c / 1.5), min(c_high, proposal_c * 1.5), grid)
        c, record = _predicted_scale(proposal, weights_at, c_grid, target)
        if c is None and step > 0:
            c, record = _predicted_scale(proposal, weights_at, np.geomspace(c_low, c_high, grid), target)
        record["trusted"] = bool(record["khat"] <= khat_max)
        predictions.append(record)
        if c is None:   # confirm at the ends of c_range before searching: an unreachable target stops here
            fallback = record["reason"]
            _out_of_reach(make, (c_low, c_high), target, eps, tau)
            break
        if step > 0 and not record["trusted"]:
            fallback = (f"the prediction from the fit at c = {proposal_c:.4g} has PSIS k-hat "
                        f"{record['khat']:.2f} > {khat_max:g}")
            break
        result = make(c)
        if abs(result.delta - target) < tau:
            return _finish(result, fits, predictions, target, tau, eps, "predicted", None)
        proposal, proposal_c = result.fit, c
    else:
        fallback = f"{predicted_fits} predicted fits missed Delta = {target:.4g} by more than tau = {tau:g}"
    return _fallback(make, fits, predictions, target, tau, eps, (c_low, c_high), fallback, max_iter, progress)


def _predicted_scale(proposal: Fit, weights_at, c_grid: np.ndarray, target: float) -> tuple:
    """The c whose predicted Delta meets ``target`` and the step's record, or (None, record).

    One pass over the proposal's draws predicts Delta at every c of ``c_grid`` (increasing); c is
    interpolated linearly between the two grid points around the target. The predicted Delta is
    made non-decreasing in c first (Delta rises with c).
    """
    found = predict_delta(proposal, np.stack([weights_at(c) for c in c_grid]))
    delta = np.maximum.accumulate(np.nan_to_num(found.delta, nan=np.inf))
    if not delta[0] <= target <= delta[-1]:
        return None, {"c": None, "delta": None, "khat": np.inf, "ess": 0.0,
                      "reason": f"the predicted Delta over c in [{c_grid[0]:.4g}, {c_grid[-1]:.4g}] "
                                f"({delta[0]:.4g} to {delta[-1]:.4g}) does not include the target {target:.4g}"}
    j = min(max(1, int(np.searchsorted(delta, target))), c_grid.size - 1)
    span = delta[j] - delta[j - 1]
    share = 0.5 if span == 0 else float(np.clip((target - delta[j - 1]) / span, 0.0, 1.0))
    c = float(c_grid[j - 1] + share * (c_grid[j] - c_grid[j - 1]))
    near = j if share >= 0.5 else j - 1
    return c, {"c": c, "delta": float(target), "khat": float(found.khat[near]), "ess": float(found.ess[near])}


def _risks(base, base_fit: Fit) -> np.ndarray:
    """LW's risks from the unweighted fit: from an unweighted Synthesis's own bounds when it has
    them (max_s abs(f_s(x_i)) over every draw, the same numbers :func:`lw_risks` computes), else one
    pass over the fit's draws."""
    if isinstance(base, Synthesis) and base.settings.get("q", 1.0) == 1.0 and base.fit.whole_chains:
        risks = np.full(base.bounds.shape, np.nan)
        finite = np.isfinite(base.bounds)
        if finite.any():
            risks[finite] = min_max_scale(base.bounds[finite])
        return risks
    return lw_risks(base_fit)


def _finish(result: Synthesis, fits: dict, predictions: list, target: float, tau: float, eps: float,
            method: str, fallback) -> Synthesis:
    history = [(c, s.delta) for c, s in fits.items()]
    calibration = {"parameter": "c", "value": next(c for c, s in fits.items() if s is result), "target": target,
                   "atol": tau, "method": method, "fallback": fallback, "history": history,
                   "predictions": predictions, "fits": len(fits), "iterations": len(fits), "target_epsilon": eps}
    return replace(result, calibration=calibration, name=f"LW (eps {eps:g})")


def _fallback(make, fits: dict, predictions: list, target: float, tau: float, eps: float, c_range: tuple,
              reason: str, max_iter: int, progress: bool) -> Synthesis:
    """Today's refit search inside the bracket the fits already made; a warning says why it runs.

    No end of ``c_range`` is fitted unless the search fails: then both are, to state the reachable range.
    """
    warnings.warn(f"LW calibration: {reason}; falling back to the refit search (more Stan fits)", RuntimeWarning,
                  stacklevel=3)
    below = {c: s.delta for c, s in fits.items() if s.delta < target}
    above = {c: s.delta for c, s in fits.items() if s.delta > target}
    low = max(below, default=c_range[0])
    high = min(above, default=c_range[1])
    if low in below and high in above:  # the chord between the closest fits on either side
        start = low + (target - below[low]) * (high - low) / (above[high] - below[low])
    else:
        start = 0.5 * (low + high)
    try:
        found = match_delta(make, target, start, low, high, parameter="c", atol=tau,
                            max_iter=max(1, max_iter - len(fits)), progress=progress)
    except CalibrationFailed as err:
        _out_of_reach(make, c_range, target, eps, tau)
        raise CalibrationFailed(f"LW calibration to epsilon = {eps:g}: {err}",
                               [(c, s.delta) for c, s in fits.items()]) from None
    return _finish(found, fits, predictions, target, tau, eps, "search", reason)


def _out_of_reach(make, c_range: tuple, target: float, eps: float, tau: float) -> None:
    """A BadArgument stating the reachable epsilons when the target lies outside what the ends of ``c_range`` give."""
    low, high = make(c_range[0]), make(c_range[1])
    if low.delta - tau < target < high.delta + tau:
        return
    raise BadArgument(f"target_epsilon = {eps:g} is out of reach for this data and model: LW with c in "
                     f"[{c_range[0]:g}, {c_range[1]:g}] reaches epsilon from {low.epsilon:.4g} to {high.epsilon:.4g}; "
                     "choose a target in that range (or widen c_range / change g)")
