"""Survey weights: synthesize an outcome together with its sampling weight under one record-level bound.

A survey record carries an outcome y_i, a public cell c_i (the published table's row: sex x race x
insurance, say) and a sampling weight w_i; a design may add public strata and PSUs. The weight is
as sensitive as the outcome (it reveals how the record was sampled and adjusted), so both are
synthesized, from one joint model,

    y_i | c_i            ~ Normal(beta_{c_i}, sigma_{c_i}^2)
    log w_i | y_i, c_i   ~ Normal(gamma_{c_i} + delta_{c_i} (y_i - y0), tau_{c_i}^2),

(a mean and a spread per cell, and a line per cell for the log weight; y0 a public centre), and the record's joint log-likelihood, the sum of the two
conditional log densities, sets one weight alpha_i and one bound for the pair (the joint bound of
:mod:`ppmlib.mechanism.joint`):

    Delta = max_i max_s abs(alpha_i (f_y,s(x_i) + f_w,s(x_i))),   epsilon = 2 Delta per dataset,

for the whole record (outcome and weight together), against the removal neighbours of this
database (the n databases with one record removed; adding an arbitrary record is not covered;
replace-one costs 4 Delta). The m synthetic datasets cost m epsilon. The weights alpha, and the
scale c tuned to reach a target epsilon, are computed from the data and sit outside the guarantee,
as for every vector-weighted mechanism. f_w is the log density of log w (a constant shift per record
from the density of w, which leaves the pseudo posterior unchanged).

**Exact draws.** Each conditional, in each cell, is a linear regression with the normal-inverse-gamma prior
beta | s^2 ~ N(0, s^2 v^2 I), s^2 ~ InvGamma(a, b) (:data:`NIG_PRIOR`), conjugate to the
alpha-weighted likelihood, so the pseudo posterior is again normal-inverse-gamma and its draws are
exact (no MCMC). The conditionals and cells have disjoint parameters and independent priors, so
their joint pseudo posterior is the product, and draw s of each, taken together, is a joint draw.

**The schemes.** "unweighted" (alpha = 1); "lw", one Lipschitz weight per record from the joint
bound of the unweighted fit, alpha_i = clip(c (1 - r_i) + g, 0, 1) (r the min-max scaled bound); a
target epsilon sets c by bisection (each step a refit with the same seed). With
``synthesize_weights=False`` only y is synthesized and the true weights are released beside it,
unprotected: the comparison that prices the weights' synthesis.
"""
from __future__ import annotations

__all__ = ["NIG_PRIOR", "SCHEMES", "SurveySynthesis", "check_survey_weights", "conjugate_normal_draws",
           "cell_draws", "survey_synthesizer"]

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.errors import BadArgument, CalibrationFailed, DataRefused
from ppmlib.inference.posterior import spaced_draws
from ppmlib.mechanism.bounds import epsilon as _epsilon
from ppmlib.mechanism.joint import JointBounds, accumulate_bounds
from ppmlib.mechanism.weights import lw_weights

#: Normal-inverse-gamma prior of both conditionals: beta | s^2 ~ N(0, s^2 beta_scale^2 I), s^2 ~ InvGamma(shape, scale).
NIG_PRIOR = {"beta_scale": 10.0, "shape": 1.0, "scale": 1.0}

#: The synthesizers of :data:`ppmlib.mechanism.schemes.REGISTRY` that :func:`survey_synthesizer` makes, by
#: kind: Unweighted (alpha_i = 1) and LW, alpha_i = clip(c (1 - r_i) + g, 0, 1), r_i the min-max scaled
#: joint bound of the unweighted fit.
SCHEMES = ("unweighted", "lw")


def check_survey_weights(values, name: str = "weights") -> np.ndarray:
    """Sampling weights as floats, shape (n,), refused unless numeric, finite, positive and not all equal.

    Parameters
    ----------
    values : array_like, shape (n,)
        The weight column.
    name : str
        How messages name it.

    Returns
    -------
    ndarray, shape (n,)

    Raises
    ------
    ppmlib.errors.DataRefused
        Non-numeric, missing or infinite, non-positive, or constant weights (a constant weight
        carries no design: use the unweighted synthesizer). Messages name a record, never a value.

    Examples
    --------
    >>> check_survey_weights([1.5, 2.0, 0.0])
    Traceback (most recent call last):
    ...
    ppmlib.errors.DataRefused: weights must be positive sampling weights; record 2 is not
    """
    series = pd.Series(values) if not isinstance(values, pd.Series) else values
    numeric = pd.to_numeric(series, errors="coerce")
    bad = numeric.isna() & series.notna()
    if bad.any():
        raise DataRefused(f"{name} must be numeric; record {int(np.argmax(bad.to_numpy()))} is not a number")
    w = numeric.to_numpy(dtype=float, na_value=np.nan)
    if w.ndim != 1 or w.size == 0:
        raise DataRefused(f"{name} must be a non-empty column of sampling weights")
    missing = ~np.isfinite(w)
    if missing.any():
        raise DataRefused(f"{name} has {int(missing.sum())} missing or infinite value(s), first at record "
                          f"{int(np.argmax(missing))}")
    if (w <= 0).any():
        raise DataRefused(f"{name} must be positive sampling weights; record {int(np.argmax(w <= 0))} is not")
    if np.all(w == w[0]):
        raise DataRefused(f"{name} is constant: equal weights carry no survey design (synthesize without weights)")
    return w


def conjugate_normal_draws(z, X, alpha, S: int, seed, prior: dict | None = None) -> dict:
    """S exact draws of the alpha-weighted normal linear regression under the normal-inverse-gamma prior.

    With A = diag(alpha): V = (X'AX + I / v^2)^-1, m = V X'A z, shape a + sum(alpha) / 2,
    scale b + (z'Az - m'V^-1 m) / 2; s^2 ~ InvGamma(shape, scale), beta | s^2 ~ N(m, s^2 V).

    Parameters
    ----------
    z : array_like, shape (n,)
        The response.
    X : array_like, shape (n, K)
        The design.
    alpha : array_like, shape (n,)
        Record weights in [0, 1].
    S : int
        Draws.
    seed : int or numpy.random.Generator
    prior : dict, optional
        Overrides of :data:`NIG_PRIOR`.

    Returns
    -------
    dict
        "beta" (S, K) and "sigma" (S,): the normal family's parameters.

    Examples
    --------
    >>> d = conjugate_normal_draws([1.0, 2.0, 3.0], np.ones((3, 1)), np.ones(3), 4000, seed=0)
    >>> round(float(d["beta"].mean()), 1)
    2.0
    """
    p = {**NIG_PRIOR, **(prior or {})}
    z, X, alpha = np.asarray(z, float), np.asarray(X, float), np.asarray(alpha, float)
    S = _checks.integer(S, "S", low=1)
    rng = np.random.default_rng(seed)
    XtA = X.T * alpha
    precision = XtA @ X + np.eye(X.shape[1]) / p["beta_scale"] ** 2
    cov = np.linalg.inv(precision)
    mean = cov @ (XtA @ z)
    shape = p["shape"] + alpha.sum() / 2
    scale = p["scale"] + max(0.0, (alpha * z) @ z - mean @ precision @ mean) / 2
    sigma2 = scale / rng.gamma(shape, 1.0, size=S)
    chol = np.linalg.cholesky(cov)
    beta = mean + np.sqrt(sigma2)[:, None] * (rng.standard_normal((S, X.shape[1])) @ chol.T)
    return {"beta": beta, "sigma": np.sqrt(sigma2)}


def cell_draws(z, X, codes, alpha, S: int, seed, prior: dict | None = None) -> dict:
    """Exact draws of one regression per cell, each with its own coefficients and scale.

    The cells' regressions have disjoint parameters and independent priors, so the pseudo posterior
    is their product: each cell is drawn by :func:`conjugate_normal_draws` on its own records.

    Parameters
    ----------
    z : array_like, shape (n,)
        The response.
    X : array_like, shape (n, K)
        The design within a cell (a column of ones for a cell mean).
    codes : array_like of int, shape (n,)
        Each record's cell, 0 .. C - 1 (every cell holds a record).
    alpha : array_like, shape (n,)
        Record weights in [0, 1].
    S : int
        Draws.
    seed : int or numpy.random.Generator
    prior : dict, optional
        Overrides of :data:`NIG_PRIOR`.

    Returns
    -------
    dict
        "beta" (S, C, K) and "sigma" (S, C).
    """
    codes = np.asarray(codes)
    rng = np.random.default_rng(seed)
    parts = [conjugate_normal_draws(z[codes == c], X[codes == c], alpha[codes == c], S, rng, prior)
             for c in range(codes.max() + 1)]
    return {"beta": np.stack([p["beta"] for p in parts], axis=1), "sigma": np.stack([p["sigma"] for p in parts], axis=1)}


def _log_lik(draws: dict, part: slice, z, X, spans) -> np.ndarray:
    """Per-record normal log density under draws ``part``, shape (s, n), records sorted by cell: cell c
    holds the records ``spans[c]:spans[c + 1]``, each under its cell's parameters."""
    beta, sigma = draws["beta"][part], draws["sigma"][part]
    out = np.empty((beta.shape[0], z.size))
    for c in range(len(spans) - 1):
        rows = slice(spans[c], spans[c + 1])
        scale = sigma[:, c, None]
        out[:, rows] = -0.5 * ((z[rows] - beta[:, c, :] @ X[rows].T) / scale) ** 2 - np.log(scale)
    return out - 0.5 * np.log(2 * np.pi)


def _bounds(models, alpha, S: int, block: int = 100) -> JointBounds:
    """By-record bounds of the joint release, draw s of every conditional paired (as ppmlib.mechanism.joint).

    ``models`` holds (draws, z, X, codes) per conditional; the records are sorted by cell once, so each
    cell's log densities are one matrix product, and the bounds are put back in the records' order.
    """
    codes = models[0][3]
    order = np.argsort(codes, kind="stable")
    spans = np.searchsorted(codes[order], np.arange(codes.max() + 2))
    sorted_models = [(draws, np.asarray(z)[order], np.asarray(X)[order]) for draws, z, X, _ in models]
    a = np.asarray(alpha)[order]
    n, J = a.size, len(models)
    blocks = ([a * _log_lik(draws, slice(start, min(start + block, S)), z, X, spans) for draws, z, X in sorted_models]
              for start in range(0, S, block))
    bounds = accumulate_bounds(blocks, n, J)
    unsort = np.empty_like(order)
    unsort[order] = np.arange(n)
    return JointBounds(bounds.paired[unsort], bounds.all_pairs[unsort], bounds.conditional[unsort])


@dataclass(eq=False)
class SurveySynthesis:
    """One survey synthesizer's result: the joint fit, its bound, and m synthetic (y*, w*) datasets.

    Attributes
    ----------
    scheme : str
        One of ``SCHEMES``: the kind of the registry's Unweighted or LW.
    settings : dict
        c, g, the seed, the target epsilon if any.
    synthesize_weights : bool
        False: only y was synthesized; ``synthetic_weights`` are then the true weights (unprotected).
    weights : ndarray, shape (n,)
        alpha_i (never released).
    draws : dict
        "outcome" (and "weight" when synthesized): each conditional's :func:`cell_draws`.
    bounds : JointBounds
        By-record bounds of the pair (``conditional`` has one column per synthesized variable).
    delta, epsilon : float
        The joint Delta and epsilon = 2 Delta per dataset, for the whole record.
    public : pandas.DataFrame
        The released public columns (cells, strata, PSUs), n rows.
    outcome, weight : str
        The two columns' names.
    synthetic_outcome, synthetic_weights : ndarray, shape (m, n)
        The m datasets' y* and w*.
    calibration : dict
        The bisection's result when a target epsilon was given.
    """
    scheme: str
    settings: dict
    synthesize_weights: bool
    weights: np.ndarray
    draws: dict
    bounds: JointBounds
    delta: float
    epsilon: float
    public: pd.DataFrame
    outcome: str
    weight: str
    synthetic_outcome: np.ndarray
    synthetic_weights: np.ndarray
    calibration: dict = field(default_factory=dict)

    @property
    def m(self) -> int:
        """The number of synthetic datasets."""
        return int(self.synthetic_outcome.shape[0])

    #: The guarantee's word in :mod:`ppmlib.mechanism.ledger`: this database's removal neighbours.
    guarantee = "local"

    @property
    def name(self) -> str:
        """The synthesizer's name, as a release's manifest records it."""
        return f"survey joint synthesizer ({self.scheme})"

    @property
    def variables(self) -> tuple:
        """The synthesized columns: the outcome, then the weight when it is synthesized."""
        return (self.outcome, self.weight) if self.synthesize_weights else (self.outcome,)

    @property
    def synthetic(self) -> np.ndarray:
        """What a release writes: (m, n, 2) synthetic (outcome, weight) pairs, or (m, n) outcomes when
        only the outcome is synthesized (:func:`ppmlib.release.release`)."""
        if not self.synthesize_weights:
            return self.synthetic_outcome
        return np.stack([self.synthetic_outcome, self.synthetic_weights], axis=2)

    def model_entry(self) -> dict:
        """The manifest's model entries: each synthesized column's model and what epsilon covers.

        Returns
        -------
        dict
            ``model`` (column -> model in words), ``variables`` and ``epsilon_covers``.
        """
        model = {self.outcome: "normal, a mean and a spread per cell (normal-inverse-gamma prior, exact draws)"}
        if self.synthesize_weights:
            model[self.weight] = "log weight normal, a line in the outcome per cell"
        covers = ("the whole record: one joint bound Delta on the sum of the outcome's and the log weight's "
                  "log-likelihoods, epsilon = 2 Delta for both together" if self.synthesize_weights else
                  "the outcome only: the sampling weights are released as they are, without protection")
        return {"model": model, "variables": list(self.variables), "epsilon_covers": covers}

    def dataset(self, l: int) -> pd.DataFrame:
        """Synthetic dataset l: the public columns, the synthetic outcome and the (synthetic) weight.

        Parameters
        ----------
        l : int
            0 <= l < m.

        Returns
        -------
        pandas.DataFrame
            n rows.
        """
        return self.public.assign(**{self.outcome: self.synthetic_outcome[l], self.weight: self.synthetic_weights[l]})


def _cell_codes(cells: pd.DataFrame) -> np.ndarray:
    """Codes (n,) 0 .. C - 1 of the crossing of the cell columns (sorted labels)."""
    if cells.isna().to_numpy().any():
        raise DataRefused(f"the cell columns {list(cells.columns)} have missing values")
    codes, _ = pd.factorize(pd.MultiIndex.from_frame(cells.astype(str)), sort=True)
    return codes


class _JointModel:
    """The data of the two conditionals: y | cell (a mean per cell); log w | y, cell (a line per cell)."""

    def __init__(self, y, log_w, codes, centres, draws: int, seed, prior, synthesize_weights: bool):
        self.y, self.log_w, self.codes, self.centre = y, log_w, codes, centres[0]
        self.S, self.prior, self.synthesize_weights = draws, prior, synthesize_weights
        self.seeds = np.random.SeedSequence(seed).spawn(3)     # outcome draws, weight draws, synthesis
        # kept weights are a predictor of y (released as they are); synthesized ones are drawn given y
        self.X_y = (np.ones((y.size, 1)) if synthesize_weights else
                    np.column_stack([np.ones(y.size), log_w - centres[1]]))
        self.X_w = np.column_stack([np.ones(y.size), y - self.centre])

    def fit(self, alpha) -> tuple[dict, JointBounds]:
        """Draws of each conditional (the same seeds at every call) and the joint bounds."""
        draws = {"outcome": cell_draws(self.y, self.X_y, self.codes, alpha, self.S, self.seeds[0], self.prior)}
        models = [(draws["outcome"], self.y, self.X_y, self.codes)]
        if self.synthesize_weights:
            draws["weight"] = cell_draws(self.log_w, self.X_w, self.codes, alpha, self.S, self.seeds[1], self.prior)
            models.append((draws["weight"], self.log_w, self.X_w, self.codes))
        return draws, _bounds(models, alpha, self.S)

    def synthesize(self, draws: dict, m: int, limits, true_weights) -> tuple[np.ndarray, np.ndarray]:
        """(m, n) synthetic outcomes and weights from m evenly spaced joint draws."""
        rng = np.random.default_rng(self.seeds[2])
        chosen = spaced_draws(self.S, m)
        out = draws["outcome"]
        beta = out["beta"][chosen][:, self.codes, :]             # (m, n, K)
        y_star = rng.normal((beta * self.X_y).sum(axis=2), out["sigma"][chosen][:, self.codes])
        if limits is not None:
            y_star = np.clip(np.round(y_star), *limits)
        if not self.synthesize_weights:
            return y_star, np.repeat(true_weights[None, :], m, axis=0)
        wd = draws["weight"]
        beta = wd["beta"][chosen][:, self.codes, :]              # (m, n, 2)
        mean = beta[..., 0] + beta[..., 1] * (y_star - self.centre)
        return y_star, np.exp(rng.normal(mean, wd["sigma"][chosen][:, self.codes]))


def survey_synthesizer(data: pd.DataFrame, outcome: str, weight: str, cells, *, strata: str | None = None,
                       psu: str | None = None, scheme: str = "lw", epsilon: float | None = None, c: float = 1.0,
                       g: float = 0.0, m: int = 5, draws: int = 1000, centre: float = 0.0,
                       weight_centre: float = 0.0, limits=None,
                       synthesize_weights: bool = True, prior: dict | None = None, seed: int = 0,
                       rtol: float = 0.05) -> SurveySynthesis:
    """Fit the joint (y, log w) model under record weights, bound it, and synthesize m datasets.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per respondent.
    outcome, weight : str
        The outcome column and the sampling-weight column.
    cells : str or sequence of str
        Public categorical columns whose crossing is the table's cells (kept as they are).
    strata, psu : str, optional
        Public design columns, kept as they are for the design-based standard errors.
    scheme : str
        "unweighted" or "lw" (``SCHEMES``, kinds of :data:`ppmlib.mechanism.schemes.REGISTRY`).
    epsilon : float, optional
        Target epsilon per dataset for "lw": c is searched (each step a refit) so that 2 Delta lies in
        [(1 - rtol) epsilon, epsilon], never above (``c`` is then the starting point, unless 1).
        None: use ``c`` as given.
    c, g : float
        LW's scale and shift.
    m : int
        Synthetic datasets (the release costs m epsilon).
    draws : int
        Exact draws of each conditional; the bound is their maximum, and the m datasets use m of them.
    centre : float
        Public constant subtracted from y in the weight's regression.
    weight_centre : float
        Public constant subtracted from log w where it is a predictor of y (``synthesize_weights=False``).
    limits : (float, float), optional
        Round synthetic y to integers and clip to these public limits (post-processing, no cost).
    synthesize_weights : bool
        False: synthesize y alone, y | cell, log w (the weight a predictor, as a non-survey
        synthesizer would treat it), with its own bound, and release the true weights unprotected.
    prior : dict, optional
        Overrides of :data:`NIG_PRIOR`.
    seed : int
        Seed of the draws (the same for every refit of the bisection) and of the synthesis.
    rtol : float
        The calibrated epsilon lies in [(1 - rtol) epsilon, epsilon] (never above the target; when the
        search does not get there, the largest epsilon below it that was found, see ``calibration``).

    Returns
    -------
    SurveySynthesis

    Raises
    ------
    ppmlib.errors.DataRefused
        Bad weights (:func:`check_survey_weights`), a missing column, a non-numeric or incomplete outcome.
    ppmlib.errors.CalibrationFailed
        A target epsilon above what the unweighted synthesizer spends, or not reached.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    cells = [cells] if isinstance(cells, str) else list(cells)
    absent = [col for col in [outcome, weight, *cells, *(x for x in (strata, psu) if x)] if col not in data.columns]
    if absent:
        raise DataRefused(f"columns {absent} are not in the data")
    if scheme not in SCHEMES:
        raise BadArgument(f"unknown scheme {scheme!r}; choose one of {list(SCHEMES)}")
    w = check_survey_weights(data[weight], f"the weight column {weight!r}")
    y = _outcome(data[outcome], outcome)
    m, draws = _checks.integer(m, "m", low=1), _checks.integer(draws, "draws", low=1)
    if m > draws:
        raise BadArgument(f"m = {m} synthetic datasets need at least m draws; draws = {draws}")
    model = _JointModel(y, np.log(w), _cell_codes(data[cells]),
                        (float(centre), float(weight_centre)), draws, seed, prior, synthesize_weights)
    settings, calibration = {"seed": seed}, {}
    if scheme == "unweighted":
        alpha = np.ones(y.size)
    else:
        base = model.fit(np.ones(y.size))[1].paired      # max_s |f_y + f_w| of the unweighted fit
        weights_at = lambda cc: lw_weights(base[None, :], c=cc, g=g)   # noqa: E731
        if epsilon is not None:
            start = c if c != 1.0 else epsilon / 2 / base.max()   # Delta is roughly proportional to c
            c, calibration = _calibrate(lambda cc: model.fit(weights_at(cc))[1].paired.max(), epsilon / 2, start,
                                        rtol, unweighted=base.max())
        alpha = weights_at(c)
        settings.update({"c": float(c), "g": float(g)} | ({"target epsilon": epsilon} if epsilon is not None else {}))
    fitted, bounds = model.fit(alpha)
    y_star, w_star = model.synthesize(fitted, m, limits, w)
    delta = float(bounds.paired.max())
    public = data[cells + [col for col in (strata, psu) if col]].reset_index(drop=True)
    return SurveySynthesis(scheme, settings, synthesize_weights, alpha, fitted, bounds, delta, _epsilon(delta), public,
                           outcome, weight, y_star, w_star, calibration)


def _outcome(values, name: str) -> np.ndarray:
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(numeric)
    if bad.any():
        raise DataRefused(f"the outcome column {name!r} must be numeric and complete; record {int(np.argmax(bad))} is not")
    return numeric


def _calibrate(delta_of, target: float, start: float, rtol: float, unweighted: float, max_iter: int = 16):
    """Find c with (1 - rtol) target <= Delta(c) <= target: four proportional steps c * target / Delta(c),
    kept inside the bracket found so far, then bisection of the bracket on the log scale.

    Delta(c) is not smooth at small c (few effective records: a wide pseudo posterior, extreme draws), so
    after ``max_iter`` refits the largest c whose Delta stayed at or below the target is used (the
    release then spends less than asked; the record says so). Returns c and the search's record.
    """
    target = _checks.real(target, "epsilon / 2", low=0, low_open=True)
    if target > unweighted:
        raise CalibrationFailed(f"target epsilon {2 * target:.4g} per dataset is above what the unweighted "
                                f"synthesizer spends ({2 * unweighted:.4g}); ask for at most that")
    low, high, c, best = 0.0, np.inf, float(start), None
    for step in range(1, max_iter + 1):
        found = float(delta_of(c))
        if found <= target and (best is None or found > best[1]):
            best = (c, found)
        if (1 - rtol) * target <= found <= target:
            return c, {"target Delta": target, "Delta": found, "c": c, "refits": step, "within tolerance": True}
        low, high = (max(low, c), high) if found < target else (low, min(high, c))
        proposal = c * target / found if found > 0 and step <= 4 else -1.0   # then bisection
        c = proposal if low < proposal < high else (np.sqrt(low * high) if 0 < low and high < np.inf
                                                   else (2 * low if high == np.inf else high / 2))
    if best is None:
        raise CalibrationFailed(f"epsilon {2 * target:.4g} not reached in {max_iter} refits: every Delta found was "
                                "above the target (raise the target or the draws)")
    return best[0], {"target Delta": target, "Delta": best[1], "c": best[0], "refits": max_iter,
                     "within tolerance": False}
