"""The pseudo posterior mechanism end to end, and the loops that calibrate it.

:func:`synthesizer` runs one weighting scheme of the registry :data:`ppmlib.mechanism.schemes.REGISTRY`: weights -> alpha-weighted
fit -> (optional draw truncation) -> by-record bounds, Delta, epsilon -> m synthetic datasets, and
returns everything in one :class:`Synthesis`. :func:`match_delta` refits until a scheme's Delta
matches a target (the SW scalar weight, or CW's shift g, matched to LW); :func:`lw_delta_grid` maps
LW's Delta over a grid of its scale and shift. A study runs several synthesizers through
:mod:`ppmlib.mechanism.lineup`, which calls these.
"""
from __future__ import annotations

__all__ = ["Synthesis", "synthesizer", "match_delta", "match_sw", "sw_start",
           "summary_table", "lw_delta_grid"]

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ppmlib import _checks
from ppmlib.errors import BadArgument, CalibrationFailed
from ppmlib.progress import progress_bar
from ppmlib.mechanism.bounds import _streamed_truncated_bounds
from ppmlib.mechanism.bounds import epsilon as _epsilon
from ppmlib.models.families import family
from ppmlib.inference.posterior import Fit, Sampler, _fit, _sampler
from ppmlib.seeding import seeds
from ppmlib.mechanism.schemes import by_kind

if TYPE_CHECKING:
    import pandas as pd


@dataclass(eq=False)
class Synthesis:
    """One synthesizer's complete result.

    Attributes
    ----------
    name : str
        Label used in tables and figures ("Unweighted", "LW", "CW", "SW", ...).
    scheme : str
        The weighting scheme: the ``kind`` of its entry of :data:`ppmlib.mechanism.schemes.REGISTRY`.
    settings : dict
        What produced the weights: the scheme's scalar settings (c, g, radius, a, ...), q and seed.
    weights : ndarray, shape (n,)
        The record weights alpha.
    fit : Fit
        The alpha-weighted fit, restricted to the draws kept by the truncation q.
    bounds : ndarray, shape (n,)
        By-record Lipschitz bounds.
    delta : float
        Delta = max(bounds).
    epsilon : float
        2 Delta, per dataset, for the removal neighbours of the data.
    synthetic : ndarray, shape (m, n)
        Synthetic datasets, one per draw.
    calibration : dict
        Filled by :func:`match_delta` (parameter, value, target, history).
    guarantee : str
        Whom ``epsilon`` covers, a key of :data:`ppmlib.mechanism.ledger.SCOPES`: "local" (this
        database, 2 Delta from the draws), "strict" (every database: censored, weights from each
        record alone) or "strict, weights as given" (censored, weights computed from the data).
    share_censored : float or None
        The share of records whose term is censored, averaged over the kept draws (None: not censored).
    k_draws : int or None
        k: the m datasets come from k <= m draws (:func:`ppmlib.mechanism.censoring.with_k_draws`;
        the ledger prices k). None: one draw per dataset.
    pilot : ppmlib.mechanism.pilot.Pilot or None
        The censored window's pilot (its rho is added to the ledger's); None: a fixed centre.
    """
    name: str
    scheme: str
    settings: dict
    weights: np.ndarray
    fit: Fit
    bounds: np.ndarray
    delta: float
    epsilon: float
    synthetic: np.ndarray
    calibration: dict = field(default_factory=dict)
    guarantee: str = "local"
    share_censored: float | None = None
    k_draws: int | None = None
    pilot: object = None

    @property
    def diagnostics(self) -> dict:
        return self.fit.diagnostics

    @property
    def location_draws(self) -> np.ndarray:
        """Draws of the mean parameter (mu) of the pseudo posterior."""
        return self.fit.model.location(self.fit.draws)

    def summary(self) -> dict:
        """One row for a table: Delta, epsilon, weights and diagnostics.

        Returns
        -------
        dict
            synthesizer, Delta, epsilon, guarantee, share censored, mean and min weight, max R-hat, min bulk
            and tail ESS, divergences.
        """
        d = self.diagnostics
        return {"synthesizer": self.name, "Delta": self.delta, "epsilon": self.epsilon, "guarantee": self.guarantee,
                "share censored": self.share_censored,
                "mean weight": float(self.weights.mean()), "min weight": float(self.weights.min()),
                "max R-hat": d["max_rhat"], "min bulk ESS": d["min_ess_bulk"],
                "min tail ESS": d["min_ess_tail"], "divergences": d["divergences"]}


def synthesizer(model: str, y, scheme: str = "unweighted", *, X=None, q: float = 1.0, m: int = 20,
                sampler: Sampler | None = None, seed: int = 0, name: str | None = None, prior: dict | None = None,
                **settings) -> Synthesis:
    """Run one weighting scheme of the pseudo posterior mechanism end to end.

    The weights alpha come from the scheme; the alpha-weighted model is fitted; the optional
    truncation drops the draws whose largest abs(alpha_i f_s(x_i)) is above its q-quantile; the
    by-record bounds are Delta_i = max_s alpha_i abs(f_s(x_i)) over the kept draws, Delta their
    maximum, and epsilon = 2 Delta against the removal neighbours of y (y with one record removed;
    weights treated as fixed; replace-one costs 4 Delta); one synthetic dataset is drawn
    from each of m kept draws (m datasets cost m epsilon in total).

    The censored schemes ("cm", "wcm", "strict_weighted") fit the censored posterior instead
    (:mod:`ppmlib.mechanism.censoring`): epsilon is their ``epsilon`` setting, which holds for every
    database (WCM: for its weights as given); Delta_i is then the largest abs(u_i) over the draws
    (at most epsilon / 2), and the Synthesis records the share of records censored.

    Parameters
    ----------
    model : str
        "poisson", "negbin", "normal" or "mixture" (see :func:`ppmlib.fit`).
    y : array, shape (n,)
        The confidential data.
    scheme : str
        The ``kind`` of an entry of :data:`ppmlib.mechanism.schemes.REGISTRY`, with its settings as keywords:
        "unweighted" (none); "lw" (``base``, the unweighted Fit or Synthesis; ``c`` = 1, ``g`` = 0);
        "cw" (``radius``; ``c`` = 1, ``g`` = 0, ``relative`` = False); "sw" (the scalar ``a``);
        "custom" (``weights``, shape (n,)); censored: "cm" (``epsilon``), "wcm" (``epsilon``,
        ``base``; ``c``, ``g``), "strict_weighted" (``epsilon``, ``box``; ``c`` = epsilon), each
        with ``centring`` = "best" and ``reference_scale`` = 1. An unknown scheme, a setting the
        scheme does not take or a missing one is a ValueError that lists the choices.
    X : array, shape (n, K), optional
        The design matrix of the normal and mixture models.
    q : float
        Draw truncation level; 1 keeps every draw. Dropped draws are not used for synthesis either.
        Truncation is applied once: an LW ``base`` Synthesis made with the same q < 1 already
        holds only its kept draws, and its risks are computed from those as they are.
    m : int
        Number of synthetic datasets, one per draw; at most the number of draws kept.
    sampler : Sampler, optional
        NUTS settings (default ``Sampler()``: 4 chains x 1000 draws after 1000 warmup).
    seed : int
        One integer reproduces the draws and the synthetic datasets: ``ppmlib.seeds(seed, 2)``
        gives the fit's seed and the synthesis seed.
    name : str, optional
        Label in tables (default: the scheme's key in the registry).
    prior : dict, optional
        Overrides of the model's default prior settings.

    Returns
    -------
    Synthesis
        weights (n,), fit (kept draws only), bounds (n,), Delta, epsilon, synthetic (m, n), diagnostics.

    See Also
    --------
    match_delta : refit a scheme until its Delta matches a target.
    ppmlib.studies.vector_weighted.matched_comparison : Unweighted, LW, and CW and SW matched to LW's Delta.
    ppmlib.reweight_to_tolerance : re-weight a Synthesis at equal Delta.

    Examples
    --------
    With Stan's NUTS (the default ``sampler``) each call is a fit; here the Poisson model's exact
    Gamma draws stand in for it, so the example runs without Stan:

    >>> y = ppmlib.datasets.simulate.poisson(1000, 100, seed=1)
    >>> exact = ppmlib.inference.exact.ConjugateSampler()
    >>> unweighted = ppmlib.synthesizer("poisson", y, sampler=exact, seed=2)
    >>> lw = ppmlib.synthesizer("poisson", y, "lw", base=unweighted, c=0.8, sampler=exact, seed=3)
    >>> round(unweighted.delta, 2), round(lw.delta, 2), lw.synthetic.shape
    (14.03, 3.69, (20, 1000))
    """
    chosen = by_kind(scheme)
    fam = family(model)
    y = fam.check_y(y)
    X = fam.check_X(X, y.size)
    q = _checks.quantile_level(q)
    sampler = _sampler(sampler)
    m = _checks.integer(m, "m", low=1)
    if m > sampler.total_draws:
        raise BadArgument(f"m = {m} synthetic datasets need at least m draws; {sampler} makes {sampler.total_draws}")
    seed = _checks.seed(seed)
    resolved = {**chosen.resolve(settings), "q": q, "model": fam, "X": X}
    alpha = chosen.make(y, resolved)
    fit_seed, synthesis_seed = seeds(seed, 2)
    recorded = {**chosen.recorded(resolved), "q": q, "seed": seed}
    if chosen.censored:
        return _censored(fam, y, X, alpha, sampler, (fit_seed, synthesis_seed), prior, m, resolved, chosen,
                         name or chosen.key, recorded)
    posterior = _fit(fam, y, X, alpha, sampler, fit_seed, fam.check_prior(prior))
    keep, bounds = _streamed_truncated_bounds(posterior, alpha, q)  # abs(alpha f) built once for both
    kept = posterior.subset(keep)
    delta = float(bounds.max())
    return Synthesis(name or chosen.key, chosen.kind, recorded, alpha,
                     kept, bounds, delta, _epsilon(delta), kept.synthesize(m, synthesis_seed))


def _censored(fam, y, X, alpha, sampler, fit_and_synthesis_seeds, prior, m, resolved, chosen, name, recorded):
    """A censored scheme's fit, bounds (the largest abs(u_i) per record), share censored and datasets."""
    from ppmlib.mechanism.censoring import censored_share, censoring
    if resolved["q"] != 1.0:
        raise BadArgument(f"scheme {chosen.kind!r} is censored: its guarantee needs every draw, so q must be 1, "
                         f"got {resolved['q']:g}")
    pilot = resolved["pilot"]
    if pilot is not None and set(pilot.theta) != set(fam.params):
        raise BadArgument(f"pilot= estimates {sorted(pilot.theta)}; model {fam.name!r} has {fam.params}")
    cens = censoring(fam, y, X, alpha, resolved["epsilon"], centring="pilot" if pilot else resolved["centring"],
                     reference_scale=resolved["reference_scale"], at=pilot.theta if pilot else None)
    fit_seed, synthesis_seed = fit_and_synthesis_seeds
    start = resolved["start"].fit if isinstance(resolved["start"], Synthesis) else resolved["start"]
    start = pilot.start() if pilot else start
    posterior = _fit(fam, y, X, alpha, sampler, fit_seed, fam.check_prior(prior), censoring=cens, start=start)
    terms = posterior.censored_log_lik
    bounds = np.abs(terms).max(axis=0)
    share = censored_share(posterior.log_lik, alpha, cens)
    return Synthesis(name, chosen.kind, recorded, alpha, posterior, bounds, float(bounds.max()), cens.epsilon,
                     posterior.synthesize(m, synthesis_seed), guarantee=chosen.guarantee, share_censored=share,
                     pilot=pilot)


def match_delta(make: Callable[[float], Synthesis], target: float, start: float, low: float, high: float,
                *, parameter: str = "x", rtol: float = 0.03, max_iter: int = 12, progress: bool = True,
                atol: float | None = None) -> Synthesis:
    """Find x in [low, high] with make(x).delta within ``rtol`` of ``target``; Delta must rise with x.

    With ``atol`` given, the stopping rule is absolute instead: abs(Delta - target) < atol (the
    tolerance tau of the re-weighting algorithm); ``rtol`` is then ignored.

    Each evaluation is a refit. The first step x <- x * target / Delta(x) uses that Delta is
    roughly proportional to a weight scale; until the target is bracketed by two evaluations the
    loop bisects; once it is, regula falsi (Illinois variant) interpolates between the ends. A step that would leave the
    bracket is replaced by bisection, so the loop cannot wander.

    Parameters
    ----------
    make : callable
        x -> Synthesis; each call is one refit.
    target : float
        The Delta to reach (> 0).
    start, low, high : float
        The first x tried and the interval it stays in.
    parameter : str
        Name of x in the progress bar, the history and the error.
    rtol, atol : float
        Relative tolerance, or (when given) the absolute one.
    max_iter : int
        At most this many refits.

    Returns
    -------
    Synthesis
        The first result within tolerance; ``.calibration`` holds parameter, value (x), target,
        the tolerance, iterations and history (every (x, Delta) tried, in order).

    Raises
    ------
    ppmlib.errors.CalibrationFailed
        If ``max_iter`` refits do not get within tolerance; ``.history`` holds the path.

    See Also
    --------
    ppmlib.studies.vector_weighted.matched_comparison : matches CW's g and SW's a to LW's Delta with it.
    ppmlib.reweight_to_tolerance : finds the re-weighting k with it (absolute tolerance tau).

    Examples
    --------
    Find the SW weight a whose Delta is 3 (SW's Delta is roughly a times the unweighted one):

    >>> y = ppmlib.datasets.simulate.poisson(1000, 100, seed=1)
    >>> exact = ppmlib.inference.exact.ConjugateSampler()      # exact Gamma draws in place of Stan's
    >>> make = lambda a: ppmlib.synthesizer("poisson", y, "sw", a=a, sampler=exact, seed=4)
    >>> sw = ppmlib.match_delta(make, 3.0, 0.5, 0.0, 1.0, parameter="a", progress=False)
    >>> round(sw.calibration["value"], 3), round(sw.delta, 2), len(sw.calibration["history"])
    (0.211, 3.09, 2)
    """
    target = _checks.real(target, "target", low=0, low_open=True)
    rtol = _checks.real(rtol, "rtol", low=0, low_open=True)
    if atol is not None:
        atol = _checks.real(atol, "atol", low=0, low_open=True)
    max_iter = _checks.integer(max_iter, "max_iter", low=1)
    low, high = _checks.real(low, "low"), _checks.real(high, "high")
    if low >= high:
        raise BadArgument(f"low must be below high (the bracket [low, high] searched), got low = {low:g}, high = {high:g}")
    x = _checks.real(start, "start", low=low, high=high)
    # bracket ends as (x, Delta(x) - target), the second None until evaluated
    below, above = (low, None), (high, None)
    last_side = None
    history = []
    bar = progress_bar(total=max_iter, desc=f"matching Delta by {parameter}", enabled=progress)
    try:
        for _ in range(max_iter):
            result = make(x)
            history.append((x, result.delta))
            bar.update(1)
            bar.set_postfix({parameter: f"{x:.4g}", "Delta": f"{result.delta:.3f}", "target": f"{target:.3f}"})
            gap = abs(result.delta - target)
            if (gap < atol) if atol is not None else (gap <= rtol * target):
                result.calibration = {"parameter": parameter, "value": x, "target": target,
                                      **({"atol": atol} if atol is not None else {"rtol": rtol}),
                                      "iterations": len(history), "history": history}
                return result
            side = "above" if result.delta > target else "below"
            if side == "above":
                above = (x, result.delta - target)
                if last_side == "above" and below[1] is not None:  # Illinois: stop regula falsi stalling
                    below = (below[0], below[1] / 2)
            else:
                below = (x, result.delta - target)
                if last_side == "below" and above[1] is not None:
                    above = (above[0], above[1] / 2)
            last_side = side
            x = _next_point(x, result.delta, target, below, above, first=len(history) == 1)
    finally:
        bar.close()
    tolerance = f"atol {atol}" if atol is not None else f"rtol {rtol}"
    raise CalibrationFailed(f"Delta did not reach {target:.4g} ({tolerance}) in {max_iter} refits of {parameter}; "
                           f"tried ({parameter}, Delta): " + ", ".join(f"({p:.4g}, {d:.4g})" for p, d in history),
                           history)


def _next_point(x, delta, target, below, above, first: bool) -> float:
    (x_lo, f_lo), (x_hi, f_hi) = below, above
    if f_lo is not None and f_hi is not None and f_hi > f_lo:
        proposal = x_lo - f_lo * (x_hi - x_lo) / (f_hi - f_lo)  # regula falsi: zero of the chord
    else:
        # one proportional guess, then bisect until the target is bracketed
        proposal = x * target / delta if first and delta > 0 and x != 0 else 0.5 * (x_lo + x_hi)
    return proposal if x_lo < proposal < x_hi else 0.5 * (x_lo + x_hi)


def summary_table(results) -> "pd.DataFrame":
    """One row per Synthesis: Delta, epsilon, weights, diagnostics, and a flag for a bad fit.

    Parameters
    ----------
    results : iterable of Synthesis

    Returns
    -------
    pandas.DataFrame
        Indexed by synthesizer name; the columns of :meth:`Synthesis.summary` and ``diagnostics``
        ("ok", or "CHECK: ..." naming what failed :func:`ppmlib.inference.diagnostics.is_ok`).
    """
    import pandas as pd
    from ppmlib.inference.diagnostics import is_ok

    rows = []
    for r in results:
        row = r.summary()
        row["diagnostics"] = "ok" if is_ok(r.diagnostics) else "CHECK: R-hat, ESS or divergences"
        rows.append(row)
    return pd.DataFrame(rows).set_index("synthesizer")


def match_sw(model: str, y, target: float, delta_unweighted: float, *, seed: int, rtol: float = 0.03,
             max_iter: int = 12, known=(), progress: bool = True, **run) -> Synthesis:
    """SW (the exponential mechanism: one scalar weight a for every record) with Delta(a) within
    ``rtol`` of ``target``.

    Delta is nearly proportional to a, so without other knowledge the search starts at
    a0 = target / Delta_unweighted (kept in [0.001, 1]); with ``known`` points (a, Delta) of earlier
    SW fits of the same model and data it starts where the curve through them and
    (1, Delta_unweighted) reaches the target (:func:`sw_start`). :func:`ppmlib.match_delta` then
    refines a on [0, 1]; each step is a refit. ``run`` holds the other :func:`ppmlib.synthesizer`
    keywords (X, m, sampler, prior, name, ...).

    Parameters
    ----------
    model : str
        As for :func:`ppmlib.synthesizer`.
    y : array_like, shape (n,)
        The confidential data.
    target : float
        The Delta to match.
    delta_unweighted : float
        The unweighted synthesizer's Delta (sets the start a0).
    seed : int
        The seed of every refit.
    rtol : float
        Relative tolerance on Delta.
    max_iter : int
        At most this many refits.
    known : sequence of (a, Delta)
        SW fits already made of the same model, data and truncation (e.g. an earlier match's
        ``calibration["history"]``); they only choose the start.
    progress : bool
        Show a progress bar.
    **run
        Other :func:`ppmlib.synthesizer` keywords.

    Returns
    -------
    Synthesis
        SW at the matched a; ``.calibration`` as :func:`ppmlib.match_delta` fills it.

    See Also
    --------
    ppmlib.studies.vector_weighted.matched_comparison : matches SW to LW's Delta with it.
    """
    start = sw_start(target, delta_unweighted, known)
    return match_delta(lambda a: synthesizer(model, y, "sw", a=a, seed=seed, **run), target, start, 0.0, 1.0,
                       parameter="a", rtol=rtol, max_iter=max_iter, progress=progress)


def sw_start(target: float, delta_unweighted: float, known=()) -> float:
    """The scalar weight a at which SW's Delta should reach ``target``, from fits already made.

    Delta(a) rises with a, but more slowly than a: down-weighting widens the posterior, and wider
    draws reach further into the tails, so Delta(a) / a grows as a falls. Between two measured
    points the curve is close to a power law, so the start is the log-log interpolation of the
    points (a, Delta) in ``known`` and (1, ``delta_unweighted``) at the target (extrapolation from
    the nearest two beyond them); with no known point, the proportional guess target / Delta(1).
    Kept in [0.001, 1].

    Parameters
    ----------
    target : float
        The Delta to reach.
    delta_unweighted : float
        Delta at a = 1.
    known : sequence of (a, Delta)
        Other SW fits of the same model and data, a in (0, 1].

    Returns
    -------
    float
        The start a0.

    Examples
    --------
    >>> sw_start(2.0, 8.0)                                  # proportional: 2 / 8
    0.25
    >>> round(sw_start(2.0, 8.0, known=[(0.25, 3.0)]), 4)   # Delta(0.25) = 3 > 2: a power law through both points
    0.1409
    """
    points = {1.0: float(delta_unweighted)}
    for a, delta in known:
        if 0 < a <= 1 and delta > 0:
            points[float(a)] = float(delta)
    a_values = np.log(np.array(sorted(points)))
    deltas = np.log(np.array([points[a] for a in sorted(points)]))
    if a_values.size == 1:
        return float(np.clip(target / delta_unweighted, 1e-3, 1.0))
    # the two points around the target on the Delta axis (the nearest pair outside the range)
    nearest = np.argsort(np.abs(deltas - np.log(target)))[:2]
    (a0, a1), (d0, d1) = a_values[nearest], deltas[nearest]
    if (d1 - d0) * (a1 - a0) <= 0:  # refit noise made the two points disagree on the direction: proportional
        return float(np.clip(np.exp(a0) * target / np.exp(d0), 1e-3, 1.0))
    log_a = a0 + (np.log(target) - d0) * (a1 - a0) / (d1 - d0)
    return float(np.clip(np.exp(log_a), 1e-3, 1.0))


def lw_delta_grid(model: str, y, base, c_grid, g_grid, *, sampler: Sampler | None = None, seed: int = 0,
                  prior: dict | None = None, progress: bool = True) -> "pd.DataFrame":
    """LW's Delta at every (c, g) of a grid: one :func:`synthesizer` refit per cell.

    Parameters
    ----------
    model, y : as for :func:`synthesizer` (shape (n,))
    base : Fit or Synthesis
        The unweighted fit whose log-likelihood sets the LW risks r_i.
    c_grid, g_grid : array, shapes (C,) and (G,)
        LW scales and shifts: alpha_i = clip(c (1 - r_i) + g, 0, 1).
    sampler, prior : as for :func:`synthesizer`
    seed : int
        The same seed for every cell, so differences between cells are not fresh sampler noise.

    Returns
    -------
    pandas.DataFrame
        C * G rows (c outer, g inner): c, g, Delta, epsilon, mean weight, max_rhat, min_ess_bulk,
        min_ess_tail, divergences, diagnostics_ok.

    See Also
    --------
    synthesizer : one refit; ``ppmlib.plots.delta_map`` draws the table.
    """
    import pandas as pd

    from ppmlib.inference.diagnostics import is_ok

    c_grid = _checks.finite_array(c_grid, "c_grid", ndim=1)
    g_grid = _checks.finite_array(g_grid, "g_grid", ndim=1)
    rows = []
    cells = [(float(c), float(g)) for c in c_grid for g in g_grid]
    for c, g in progress_bar(cells, desc="LW Delta over (c, g)", enabled=progress):
        lw = synthesizer(model, y, "lw", base=base, c=c, g=g, m=1, sampler=sampler, seed=seed, prior=prior)
        d = lw.diagnostics
        rows.append({"c": c, "g": g, "Delta": lw.delta, "epsilon": lw.epsilon, "mean weight": float(lw.weights.mean()),
                     "max_rhat": d["max_rhat"], "min_ess_bulk": d["min_ess_bulk"], "min_ess_tail": d["min_ess_tail"],
                     "divergences": d["divergences"], "diagnostics_ok": is_ok(d)})
    return pd.DataFrame(rows)
