"""Re-weighting to equal privacy (2025 paper, Algorithm 1) and calibration to a chosen epsilon.

:func:`ppmlib.reweight_to_tolerance` runs Algorithm 1 to convergence: from a weighted Synthesis (weights
alpha, by-record bounds Delta_i, maximum Delta) it refits with

    alpha^w_i = clip(k alpha_i Delta / Delta_i, 0, 1)

and moves k until the refit's maximum bound is back within tau of Delta. Step 1 always uses the
*original* alpha and its bounds; only k changes (the search is :func:`ppmlib.match_delta`).

:func:`ppmlib.calibrate_lw_epsilon` finds LW's scale c whose epsilon = 2 Delta is a reader's target,
or says which epsilons this data and model can reach. :func:`saturation_k`, :func:`weight_change`,
:func:`bound_slope` and :func:`efficiency` measure what a re-weighting did. The 2025 paper's study
(LW, LW_final, CW, CW_final for one database) and its claims are :mod:`ppmlib.studies.reweighting`.
"""
from __future__ import annotations

__all__ = ["reweight_to_tolerance", "calibrate_lw_epsilon", "epsilon_curve", "saturation_k", "weight_change", "bound_slope",
           "efficiency"]

from functools import lru_cache

import numpy as np

from ppmlib import _checks
from ppmlib.errors import CalibrationFailed
from ppmlib.mechanism.synthesis import Synthesis, match_delta, synthesizer
from ppmlib.inference.posterior import Sampler, _sampler
from ppmlib.mechanism.weights import reweight
from ppmlib.errors import BadArgument


def saturation_k(weights, bounds) -> float:
    """The smallest k at which re-weighting gives every record with alpha_i > 0 weight 1.

    alpha^w_i = k Delta / F_i with F_i = Delta_i / alpha_i = max_s abs(f_s(x_i)), so every such
    weight reaches 1 once k >= max_i F_i / Delta. Larger k changes nothing.

    Parameters
    ----------
    weights : array_like, shape (n,)
        The weights alpha before re-weighting.
    bounds : array_like, shape (n,)
        Their by-record bounds Delta_i.

    Returns
    -------
    float
    """
    bounds = _checks.finite_array(bounds, "bounds", ndim=1)
    alpha = _checks.weights(weights, bounds.size)
    moving = (alpha > 0) & (bounds > 0)
    if not moving.any():
        raise BadArgument("no record has both a positive weight and a positive bound: nothing to re-weight")
    return float((bounds[moving] / alpha[moving]).max() / bounds.max())


def weight_change(before, after) -> dict:
    """How many records gain, lose or keep their weight (exact comparison), and the share that gain.

    Parameters
    ----------
    before, after : array_like, shape (n,)
        The weights before and after re-weighting.

    Returns
    -------
    dict
        ``gain``, ``lose``, ``same`` (counts) and ``share_gain``.
    """
    before = _checks.finite_array(before, "before", ndim=1)
    after = _checks.weights(after, before.size, "after")
    gain, lose = int((after > before).sum()), int((after < before).sum())
    return {"gain": gain, "lose": lose, "same": before.size - gain - lose, "share_gain": gain / before.size}


def _same_data(y, X, start: Synthesis) -> None:
    """Re-weighting reuses ``start``'s weights and bounds record by record: refuse another database
    of the same size (the message says which, never a value)."""
    fit = start.fit
    y = fit.model.check_y(y)
    X = fit.model.check_X(X, y.size)
    if y.shape != fit.y.shape or not np.array_equal(y, fit.y):
        raise BadArgument(f"y is not the data {start.name} was fitted to ({fit.y.size} records): re-weighting reuses "
                         "its weights and bounds record by record, so it needs the same records in the same order")
    if (X is None) != (fit.X is None) or (X is not None and not np.array_equal(X, fit.X)):
        raise BadArgument(f"X is not the design matrix {start.name} was fitted with")


def reweight_to_tolerance(model: str, y, start: Synthesis, *, tau: float, k0: float = 0.95, max_iter: int = 12,
                          X=None, m: int | None = None, sampler: Sampler | None = None, seed: int = 0,
                          name: str | None = None, prior: dict | None = None, progress: bool = True) -> Synthesis:
    """Algorithm 1 of the 2025 paper to convergence: re-weight ``start`` at equal Delta.

    Each try of k refits the synthesizer with alpha^w_i = clip(k alpha_i Delta / Delta_i, 0, 1),
    where alpha, Delta_i and Delta = max_i Delta_i are always those of ``start`` (the paper's
    step 1 reuses them; only k changes). The loop stops when abs(Delta - Delta_{alpha^w}) < tau;
    otherwise k goes down if the refit's Delta is too high and up if too low, by the bracketing
    root finder :func:`ppmlib.match_delta` (one proportional step, bisection until the target is
    bracketed, then regula falsi), never more than ``max_iter`` refits.

    What the formula does that the paper's prose does not say: since Delta_i = alpha_i F_i with
    F_i = max_s abs(f_s(x_i)) over the draws of ``start``,

        alpha^w_i = k Delta / F_i    (clipped to [0, 1]),

    which does not depend on alpha_i. A record with Delta_i > k Delta (at least the one at the
    maximum, when k < 1) *loses* weight; every record with Delta_i < k Delta gains (or stays at 1).
    A record with alpha_i = 0 (the formula's 0/0) keeps weight 0. ``.calibration["weight_change"]`` counts them.

    Parameters
    ----------
    model, y, X, prior : as for :func:`ppmlib.synthesizer` (the data, shape (n,), and model ``start`` was fitted to)
    start : Synthesis
        The alpha-weighted synthesizer to improve (LW, CW, ...); its truncation q is kept.
    tau : float
        Absolute tolerance on Delta (epsilon = 2 Delta is then within 2 tau of the start's).
    k0 : float
        The first k tried (the paper uses 0.95); must lie in (0, k_sat], k_sat = :func:`ppmlib.mechanism.reweighting.saturation_k`.
    max_iter : int
        At most this many refits.
    m, sampler, seed : settings of every refit (m defaults to the start's m; sampler, a
        :class:`ppmlib.Sampler`, to 4 chains x 1000 draws). One seed for all refits, so Delta
        changes with k only, not with Monte Carlo noise.
    name : label of the result (default: the start's name + "_final").

    Returns
    -------
    Synthesis
        The alpha^w-weighted synthesizer. ``.calibration`` holds ``history`` (the whole path of
        (k, Delta) pairs), ``value`` (the final k), ``target`` (the start's Delta), ``atol`` (tau),
        ``k_saturation`` and ``weight_change`` (records that gain, lose, keep their weight).

    Raises
    ------
    ppmlib.errors.CalibrationFailed
        If ``max_iter`` refits do not get within tau; its ``.history`` holds the path.

    See Also
    --------
    ppmlib.match_delta : the root finder over k.
    ppmlib.mechanism.reweighting.saturation_k : the largest useful k.
    ppmlib.studies.reweighting.reweighting_comparison : LW, CW and both re-weighted, for one database.

    Examples
    --------
    >>> y = ppmlib.datasets.simulate.poisson(1000, 100, seed=1)
    >>> exact = ppmlib.inference.exact.ConjugateSampler()      # exact Gamma draws in place of Stan's
    >>> unweighted = ppmlib.synthesizer("poisson", y, sampler=exact, seed=2)
    >>> lw = ppmlib.synthesizer("poisson", y, "lw", base=unweighted, c=0.8, sampler=exact, seed=3)
    >>> lw_final = ppmlib.reweight_to_tolerance("poisson", y, lw, tau=0.05, sampler=exact, progress=False)
    >>> [(round(k, 4), round(delta, 3)) for k, delta in lw_final.calibration["history"]], round(lw.delta, 3)
    ([(0.95, 3.518), (0.9959, 3.685)], 3.688)
    """
    if not isinstance(start, Synthesis):
        raise TypeError(f"start must be a Synthesis (the weighted synthesizer to re-weight), got {type(start).__name__}")
    k0 = _checks.real(k0, "k0", low=0, low_open=True)
    tau = _checks.real(tau, "tau", low=0, low_open=True)
    max_iter = _checks.integer(max_iter, "max_iter", low=1)
    m = start.synthetic.shape[0] if m is None else m
    sampler = _sampler(sampler)
    _same_data(y, X, start)
    alpha, bounds, target = start.weights, start.bounds, start.delta
    k_sat = saturation_k(alpha, bounds)
    if k0 > k_sat:
        raise BadArgument(f"k0 = {k0:g} is above k_sat = {k_sat:.4g}, where every weight is already 1; "
                         "choose k0 in (0, k_sat] (the paper uses 0.95)")
    q = start.settings.get("q", 1.0)
    label = name or f"{start.name}_final"

    def make(k: float) -> Synthesis:
        return synthesizer(model, y, "custom", weights=reweight(alpha, bounds, k), X=X, q=q, m=m, sampler=sampler,
                           seed=seed, name=label, prior=prior)

    try:
        result = match_delta(make, target, k0, 0.0, k_sat, parameter="k", atol=tau, max_iter=max_iter,
                             progress=progress)
    except CalibrationFailed as err:
        raise CalibrationFailed(f"re-weighting {start.name} to Delta = {target:.4g} within tau = {tau:g} failed: {err}",
                               err.history) from None
    result.settings = {"k": result.calibration["value"], "tau": tau, "k0": k0, "q": q, "seed": seed, "from": start.name}
    result.calibration.update(k_saturation=k_sat, weight_change=weight_change(alpha, result.weights))
    return result


# ---------------------------------------------------------------------------------------------
# calibration to a reader's epsilon
# ---------------------------------------------------------------------------------------------

def calibrate_lw_epsilon(model: str, y, base, target_epsilon: float, *, tau: float, g: float = 0.0,
                         c_range: tuple = (0.05, 5.0), max_iter: int = 12, X=None, prior: dict | None = None,
                         q: float = 1.0, m: int = 20, sampler: Sampler | None = None, seed: int = 0,
                         progress: bool = True) -> Synthesis:
    """LW with its scale c set so that epsilon = 2 Delta is ``target_epsilon`` (within 2 tau).

    The shift g stays fixed; c moves in ``c_range``, over which Delta rises with c (the weights
    alpha_i = clip(c (1 - r_i) + g, 0, 1) rise with c). The two ends are fitted first: they give the
    epsilons this data and model can reach with LW, and a target outside them is a ValueError
    that states that range. Inside it, :func:`ppmlib.match_delta` finds c. One seed for all fits.

    Parameters
    ----------
    model, y, X, prior : as for :func:`ppmlib.synthesizer` (y of shape (n,); X, shape (n, K), and
        prior for the normal and mixture regressions)
    base : Synthesis or Fit
        The unweighted synthesizer whose log-likelihood sets the LW risks.
    target_epsilon : float
        The epsilon the reader wants for each synthetic dataset (m of them cost m times that).
    tau : float
        Absolute tolerance on Delta.
    g, c_range : the fixed LW shift and the range of scales searched
    max_iter, q, m, sampler, seed : as for :func:`ppmlib.synthesizer` and :func:`ppmlib.match_delta`

    Returns
    -------
    Synthesis
        ``.calibration`` holds ``value`` (c), ``history`` (c, Delta), ``target`` (target_epsilon / 2)
        and ``reachable_epsilon`` (the range at the ends of ``c_range``).

    See Also
    --------
    epsilon_curve : several targets, the ends of ``c_range`` fitted once.

    Examples
    --------
    >>> y = ppmlib.datasets.simulate.poisson(1000, 100, seed=1)
    >>> exact = ppmlib.inference.exact.ConjugateSampler()      # exact Gamma draws in place of Stan's
    >>> unweighted = ppmlib.synthesizer("poisson", y, sampler=exact, seed=2)
    >>> lw8 = ppmlib.calibrate_lw_epsilon("poisson", y, unweighted, 8.0, tau=0.05, sampler=exact, progress=False)
    >>> round(lw8.epsilon, 2), round(lw8.calibration["value"], 3)
    (8.0, 0.868)
    """
    return epsilon_curve(model, y, base, [target_epsilon], tau=tau, g=g, c_range=c_range, max_iter=max_iter,
                         X=X, prior=prior, q=q, m=m, sampler=sampler, seed=seed, progress=progress)[0]


def epsilon_curve(model: str, y, base, epsilons, *, tau: float, g: float = 0.0, c_range: tuple = (0.05, 5.0),
                  max_iter: int = 12, X=None, prior: dict | None = None, q: float = 1.0, m: int = 20,
                  sampler: Sampler | None = None, seed: int = 0, progress: bool = True) -> list[Synthesis]:
    """:func:`ppmlib.calibrate_lw_epsilon` for several targets, fitting the ends of ``c_range`` only once.

    ``epsilons`` is a list of E targets; returns E Synthesis objects in the same order. ``X`` and
    ``prior`` go to every fit (the regressions' design matrix and priors).

    Parameters
    ----------
    model, y
        The model and the confidential data, as for :func:`ppmlib.synthesizer`.
    base : Fit or Synthesis
        The unweighted synthesizer whose risks set LW's weights.
    epsilons : sequence of float
        The E target epsilons per dataset.
    tau, g, c_range, max_iter, q, m, sampler, seed, progress
        As for :func:`calibrate_lw_epsilon`.

    Returns
    -------
    list of Synthesis
        One per target, in order.

    See Also
    --------
    calibrate_lw_epsilon : one target; its parameters are these.
    ppmlib.studies.reweighting.epsilon_table : one row per result.
    """
    tau = _checks.real(tau, "tau", low=0, low_open=True)
    max_iter = _checks.integer(max_iter, "max_iter", low=1)
    if not isinstance(c_range, (tuple, list)) or len(c_range) != 2:
        raise BadArgument(f"c_range must be a pair (low, high), got {c_range!r}")
    c_low = _checks.real(c_range[0], "c_range[0]", low=0, low_open=True)
    c_high = _checks.real(c_range[1], "c_range[1]", low=c_low, low_open=True)
    targets = [_checks.real(e, "target_epsilon", low=0, low_open=True) for e in np.atleast_1d(epsilons).tolist()]
    sampler = _sampler(sampler)

    @lru_cache(maxsize=None)
    def make(c: float) -> Synthesis:
        return synthesizer(model, y, "lw", base=base, c=c, g=g, X=X, prior=prior, q=q, m=m, sampler=sampler,
                           seed=seed, name="LW")

    low_end, high_end = make(c_low), make(c_high)
    reachable = (low_end.epsilon, high_end.epsilon)
    results = []
    for eps in targets:
        target = eps / 2
        if not reachable[0] - 2 * tau < eps < reachable[1] + 2 * tau:
            raise BadArgument(f"target_epsilon = {eps:g} is out of reach for this data and model: LW with g = {g:g} "
                             f"and c in [{c_low:g}, {c_high:g}] reaches epsilon from {reachable[0]:.4g} to "
                             f"{reachable[1]:.4g}; choose a target in that range (or widen c_range / change g)")
        if abs(low_end.delta - target) < tau or abs(high_end.delta - target) < tau:
            end = low_end if abs(low_end.delta - target) < tau else high_end
            found = end
            c = c_low if end is low_end else c_high
            calibration = {"parameter": "c", "value": c, "target": target, "atol": tau, "iterations": 0,
                           "history": [(c, end.delta)]}
        else:
            # Delta is close to proportional to c at small c: start from the interpolation between the ends
            start = c_low + (target - low_end.delta) * (c_high - c_low) / (high_end.delta - low_end.delta)
            found = match_delta(make, target, start, c_low, c_high, parameter="c", atol=tau, max_iter=max_iter,
                                progress=progress)
            calibration = dict(found.calibration)
        # a cached Synthesis can serve two targets: give each its own copy of the record
        results.append(_with_calibration(found, {**calibration, "target_epsilon": eps, "reachable_epsilon": reachable}))
    return results


def _with_calibration(result: Synthesis, calibration: dict) -> Synthesis:
    from dataclasses import replace
    return replace(result, calibration=calibration, name=f"LW (eps {calibration['target_epsilon']:g})")


# ---------------------------------------------------------------------------------------------
# what a re-weighting did
# ---------------------------------------------------------------------------------------------

def bound_slope(result: Synthesis) -> float:
    """Least-squares slope of Delta_i / Delta against alpha_i over the records with 0 < alpha_i < 1.

    0 is the paper's flat, efficient picture (every record's bound at the maximum). Records at
    weight 0 (bound 0 whatever happens) and at weight 1 (where the clipping, not the weighting,
    sets the bound: they cannot spend more) are left out.

    Parameters
    ----------
    result : Synthesis

    Returns
    -------
    float
        0 when fewer than two such records, or all at one weight.
    """
    keep = (result.weights > 0) & (result.weights < 1)
    w, b = result.weights[keep], result.bounds[keep] / result.delta
    if w.size < 2 or np.ptp(w) == 0:
        return 0.0
    return float(np.polyfit(w, b, 1)[0])


def efficiency(result: Synthesis) -> float:
    """Mean of Delta_i / Delta over the records: 1 when every record spends the whole budget.

    Parameters
    ----------
    result : Synthesis
        A weighted synthesizer.

    Returns
    -------
    float
        At most 1.
    """
    return float(np.mean(result.bounds) / result.delta)
