"""The pseudo posterior mechanism end to end, and the loops that calibrate it.

:func:`synthesizer` runs one weighting scheme: weights -> alpha-weighted fit -> (optional draw
truncation) -> by-record bounds, Delta, epsilon -> m synthetic datasets, and returns everything
in one :class:`Synthesis`. :func:`match_delta` refits until a scheme's Delta matches a target
(the SW scalar weight, or CW's scale c, matched to LW).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from . import _checks
from .progress import progress_bar
from .lipschitz import epsilon as _epsilon
from .lipschitz import kept_draws, record_bounds
from .posterior import Fit, fit
from .weights import cw_weights, lw_weights, scalar_weights

if TYPE_CHECKING:
    import pandas as pd

SCHEMES = ("unweighted", "lw", "cw", "sw", "custom")
LABELS = {"unweighted": "Unweighted", "lw": "LW", "cw": "CW", "sw": "SW", "custom": "Custom"}


class CalibrationError(RuntimeError):
    """A calibration loop did not reach its target within its iterations (the history says how close).

    ``history`` holds every (parameter value, Delta) pair the loop tried, in order.
    """

    def __init__(self, message: str, history=()):
        super().__init__(message)
        self.history = list(history)


@dataclass(eq=False)
class Synthesis:
    """One synthesizer's complete result.

    name : label used in tables and figures ("Unweighted", "LW", "CW", "SW", ...)
    scheme : the weighting scheme, one of SCHEMES
    settings : what produced the weights (c, g, radius, a, q, ...)
    weights : (n,) alpha
    fit : the alpha-weighted fit, restricted to the draws kept by the truncation q
    bounds : (n,) by-record Lipschitz bounds;  delta = max(bounds);  epsilon = 2 delta
    synthetic : (m, n) synthetic datasets, one per draw
    calibration : filled by :func:`match_delta` (parameter, value, target, history)
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

    @property
    def diagnostics(self) -> dict:
        return self.fit.diagnostics

    @property
    def location_draws(self) -> np.ndarray:
        """Draws of the mean parameter (mu) of the pseudo posterior."""
        return self.fit.model.location(self.fit.draws)

    def release(self, path, *, max_epsilon: float | None = None, overwrite: bool = False):
        """Write the m synthetic datasets (CSV) and their privacy budget (JSON), both or neither.

        Never writes the weights, bounds, draws or confidential data; refuses (ValueError,
        nothing written) when m * epsilon exceeds ``max_epsilon``. See :func:`ppmlib.release`.
        """
        from .release import release
        return release(self, path, max_epsilon=max_epsilon, overwrite=overwrite)

    def summary(self) -> dict:
        """One row for a table: Delta, epsilon, weights and diagnostics."""
        d = self.diagnostics
        return {"synthesizer": self.name, "Delta": self.delta, "epsilon": self.epsilon,
                "mean weight": float(self.weights.mean()), "min weight": float(self.weights.min()),
                "max R-hat": d["max_rhat"], "min bulk ESS": d["min_ess_bulk"],
                "min tail ESS": d["min_ess_tail"], "divergences": d["divergences"]}


def _seeds(seed) -> tuple[int, int]:
    """Two independent seeds (fit, synthesis) from one, so a single number reproduces a run."""
    fit_seed, syn_seed = np.random.SeedSequence(_checks.seed(seed)).generate_state(2)
    return int(fit_seed % (2**31 - 1)), int(syn_seed)


def scheme_weights(scheme: str, y, *, base: Fit | None = None, c: float = 1.0, g: float = 0.0,
                   radius: float | None = None, relative: bool = False, a: float | None = None,
                   weights=None, q: float = 1.0) -> np.ndarray:
    """The weights alpha of a scheme (no fitting except what ``base`` already holds)."""
    n = np.asarray(y).shape[0]
    if scheme == "unweighted":
        return np.ones(n)
    if scheme == "lw":
        if base is None:
            raise ValueError("scheme 'lw' needs base=, the unweighted fit whose log-likelihood sets the weights")
        return lw_weights(base, c=c, g=g, q=q)
    if scheme == "cw":
        if radius is None:
            raise ValueError("scheme 'cw' needs a radius (absolute, or a fraction of |y_i| with relative=True)")
        return cw_weights(y, radius, c=c, g=g, relative=relative)
    if scheme == "sw":
        if a is None:
            raise ValueError("scheme 'sw' needs the scalar weight a in [0, 1]")
        return scalar_weights(a, n)
    if scheme == "custom":
        if weights is None:
            raise ValueError("scheme 'custom' needs weights=")
        return _checks.weights(weights, n)
    raise ValueError(f"unknown scheme {scheme!r}; choose one of {SCHEMES}")


def synthesizer(model: str, y, scheme: str = "unweighted", *, X=None, base=None, c: float = 1.0,
                g: float = 0.0, radius: float | None = None, relative: bool = False, a: float | None = None,
                weights=None, q: float = 1.0, m: int = 20, chains: int = 4, draws: int = 1000,
                warmup: int = 1000, seed: int = 0, name: str | None = None, prior: dict | None = None) -> Synthesis:
    """Run one weighting scheme of the pseudo posterior mechanism end to end.

    Parameters
    ----------
    model : str
        "poisson", "negbin" or "normal" (see :func:`ppmlib.fit`).
    y, X : array
        The confidential data (and the normal model's design matrix).
    scheme : str
        "unweighted"; "lw" (needs ``base``, the unweighted Fit or Synthesis, and uses c, g, q);
        "cw" (needs ``radius``; uses c, g, relative); "sw" (needs the scalar ``a``);
        "custom" (needs ``weights``).
    q : float
        Draw truncation level; 1 keeps every draw. Dropped draws are not used for synthesis either.
        Truncation is applied once: an LW ``base`` Synthesis made with the same q < 1 already
        holds only its kept draws, and its risks are computed from those as they are.
    m : int
        Number of synthetic datasets, one per draw.
    seed : int
        One integer reproduces the draws and the synthetic datasets.

    Returns
    -------
    Synthesis
        weights, fit, by-record bounds, Delta, epsilon, synthetic datasets (m, n), diagnostics.
    """
    if not isinstance(scheme, str):
        raise TypeError(f"scheme must be a string, one of {SCHEMES}")
    base_fit = base.fit if isinstance(base, Synthesis) else base
    alpha = scheme_weights(scheme, y, base=base_fit, c=c, g=g, radius=radius, relative=relative,
                           a=a, weights=weights, q=_base_truncation(base, q))
    fit_seed, syn_seed = _seeds(seed)
    posterior = fit(model, y, weights=alpha, X=X, chains=chains, draws=draws, warmup=warmup,
                    seed=fit_seed, prior=prior)
    kept = posterior.subset(kept_draws(posterior, alpha, q))
    bounds = record_bounds(kept, alpha)
    delta = float(bounds.max())
    settings = {"c": c, "g": g, "radius": radius, "relative": relative, "a": a, "q": q, "seed": seed}
    used = {"unweighted": ("q", "seed"), "lw": ("c", "g", "q", "seed"), "cw": ("c", "g", "radius", "relative", "q", "seed"),
            "sw": ("a", "q", "seed"), "custom": ("q", "seed")}[scheme]
    return Synthesis(name or LABELS[scheme], scheme, {k: settings[k] for k in used}, alpha, kept, bounds,
                     delta, _epsilon(delta), kept.synthesize(m, syn_seed))


def _base_truncation(base, q) -> float:
    """The truncation still to apply to the base's draws when LW risks are computed from them.

    A Synthesis made with q < 1 holds only the draws its truncation kept; truncating those again
    at q would keep about q^2 of the draws. So such a base is used as it is (level 1), and a base
    truncated at a different level than the one asked for is an error, not a silent mix.
    """
    q = _checks.quantile_level(q)
    base_q = base.settings.get("q", 1.0) if isinstance(base, Synthesis) else 1.0
    if base_q == 1.0:
        return q
    if base_q != q:
        raise ValueError(f"base was truncated with q = {base_q:g} but q = {q:g} was asked for; "
                         "make the base with the same q (or with q = 1) so the draws are truncated once")
    return 1.0


def match_delta(make: Callable[[float], Synthesis], target: float, start: float, low: float, high: float,
                *, parameter: str = "x", rtol: float = 0.03, max_iter: int = 12, progress: bool = True,
                atol: float | None = None) -> Synthesis:
    """Find x in [low, high] with make(x).delta within ``rtol`` of ``target``; Delta must rise with x.

    With ``atol`` given, the stopping rule is absolute instead: abs(Delta - target) < atol (the
    tolerance tau of the re-weighting algorithm); ``rtol`` is then ignored.

    Each evaluation is a refit. The first step x <- x * target / Delta(x) uses that Delta is
    roughly proportional to a weight scale; until the target is bracketed by two evaluations the
    loop bisects; once it is, regula falsi (Illinois variant) interpolates between the ends. A step that would leave the
    bracket is replaced by bisection, so the loop cannot wander. Raises :class:`CalibrationError`
    with the history if ``max_iter`` refits do not get within ``rtol``.
    """
    target = _checks.real(target, "target", low=0, low_open=True)
    rtol = _checks.real(rtol, "rtol", low=0, low_open=True)
    if atol is not None:
        atol = _checks.real(atol, "atol", low=0, low_open=True)
    max_iter = _checks.integer(max_iter, "max_iter", low=1)
    low, high = _checks.real(low, "low"), _checks.real(high, "high")
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
    raise CalibrationError(f"Delta did not reach {target:.4g} ({tolerance}) in {max_iter} refits of {parameter}; "
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
    """One row per Synthesis: Delta, epsilon, weights, diagnostics, and a flag for a bad fit."""
    import pandas as pd
    from .diagnostics import is_ok

    rows = []
    for r in results:
        row = r.summary()
        row["diagnostics"] = "ok" if is_ok(r.diagnostics) else "CHECK: R-hat, ESS or divergences"
        rows.append(row)
    return pd.DataFrame(rows).set_index("synthesizer")


def matched_comparison(model: str, y, *, cw_radius: float, relative: bool = False, c: float = 1.0,
                       g: float = 0.0, cw_c: float = 1.0, rtol: float = 0.03, max_iter: int = 12, m: int = 20,
                       chains: int = 4, draws: int = 1000, warmup: int = 1000, seed: int = 0,
                       progress: bool = True) -> dict:
    """Unweighted, LW, and CW and SW matched to LW's Delta (ALGORITHMS.md sections 3-5).

    LW uses (c, g). CW keeps its policy radius ``cw_radius`` (absolute, or relative to abs(y_i)) and
    scale ``cw_c`` and is calibrated through its shift g (Delta rises with g). SW starts at
    a = Delta_LW / Delta_unweighted and is refined by root finding.
    Returns {"Unweighted": ..., "LW": ..., "CW": ..., "SW": ...}; the calibrated Synthesis objects
    carry ``.calibration`` (parameter, value, target, history).
    """
    run = dict(m=m, chains=chains, draws=draws, warmup=warmup)
    seeds = [int(s) for s in np.random.SeedSequence(_checks.seed(seed)).generate_state(4)]
    unweighted = synthesizer(model, y, "unweighted", seed=seeds[0], **run)
    lw = synthesizer(model, y, "lw", base=unweighted, c=c, g=g, seed=seeds[1], **run)
    target = lw.delta
    cw = match_delta(lambda shift: synthesizer(model, y, "cw", radius=cw_radius, relative=relative, c=cw_c,
                                               g=shift, seed=seeds[2], **run),
                     target, 0.1, -1.0, 1.0, parameter="g", rtol=rtol, max_iter=max_iter, progress=progress)
    sw = match_delta(lambda a: synthesizer(model, y, "sw", a=a, seed=seeds[3], **run),
                     target, min(target / unweighted.delta, 1.0), 0.0, 1.0, parameter="a", rtol=rtol,
                     max_iter=max_iter, progress=progress)
    return {"Unweighted": unweighted, "LW": lw, "CW": cw, "SW": sw}
