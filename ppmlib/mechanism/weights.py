"""Record weights: LW (Lipschitz-weighted), CW (count-weighted), and re-weighting.

All three end in the same map from a risk r_i in [0, 1] to a weight: alpha_i = clip(c (1 - r_i) + g, 0, 1).
The clipping is part of the method (the papers' R code does it), not a silent repair.

LW follows the 2020 paper's Algorithm 1 (its section 2.1; the 2025 paper's Algorithm 2, Appendix
A.1), CW its Algorithm 2 (section 2.2; the 2025 paper's Algorithm 3, Appendix A.2), and the
re-weighting step the 2025 paper's Algorithm 1 (its section 2.1).
"""
from __future__ import annotations

__all__ = ["lw_from_bounds", "risk_to_weight", "scaled_weight", "min_max_scale", "lw_risks", "lw_weights", "isolation_risks", "cw_weights",
           "scalar_weights", "reweight", "lw_delta_formula"]

import numpy as np

from ppmlib import _checks
from ppmlib.mechanism.bounds import record_bounds
from ppmlib.errors import BadArgument


def risk_to_weight(risk, c: float = 1.0, g: float = 0.0) -> np.ndarray:
    """alpha = clip(c (1 - risk) + g, 0, 1): scale ``c`` compresses the weights, shift ``g`` moves them.

    Parameters
    ----------
    risk : array_like, shape (n,)
        Risks r_i in [0, 1] (finite).
    c : float
        Scale, >= 0.
    g : float
        Shift (may be negative).

    Returns
    -------
    ndarray, shape (n,)
        Weights alpha_i in [0, 1].

    See Also
    --------
    lw_weights, cw_weights : the two schemes that end in this map.

    Examples
    --------
    >>> risk_to_weight([0.0, 0.5, 1.0], c=0.6, g=0.1)
    array([0.7, 0.4, 0.1])
    """
    c = _checks.real(c, "c", low=0)
    g = _checks.real(g, "g")
    risk = _checks.finite_array(risk, "risk", ndim=1)
    outside = (risk < 0) | (risk > 1)
    if outside.any():  # a risk of 3 would turn into weight 0 silently, -1 into weight 1
        raise BadArgument(f"risk must lie in [0, 1]; {outside.sum()} of {risk.size} do not, the first at "
                         f"position {int(np.argmax(outside))}")
    return scaled_weight(risk, c, g)


def scaled_weight(risk: np.ndarray, c, g: float) -> np.ndarray:
    """The map of :func:`ppmlib.risk_to_weight` without its checks, broadcasting ``c`` against ``risk``.

    For callers that hold checked arrays already, e.g. the partitioned LW, which evaluates a column
    of candidate scales, shape (C, 1), against every record's risk, shape (n,), at once.

    Parameters
    ----------
    risk : ndarray
        Risks in [0, 1], any shape.
    c : float or ndarray
        Scale(s), >= 0, broadcast against ``risk``.
    g : float
        Shift.

    Returns
    -------
    ndarray
        Weights in [0, 1], the broadcast shape of ``c`` and ``risk``.
    """
    return np.clip(c * (1.0 - risk) + g, 0.0, 1.0)


def min_max_scale(values: np.ndarray) -> np.ndarray:
    """(v - min) / (max - min); all-equal values give 0 (no record is riskier than another).

    Parameters
    ----------
    values : array_like, shape (n,)

    Returns
    -------
    ndarray, shape (n,)
        Values in [0, 1].
    """
    span = values.max() - values.min()
    if span == 0:
        return np.zeros_like(values)
    return (values - values.min()) / span


def lw_risks(log_lik, q: float = 1.0) -> np.ndarray:
    """LW risk r_i: the min-max scaled max_s abs(f_s(x_i)) from the *unweighted* fit.

    Records with a non-finite log-likelihood are returned as NaN (they get weight 0 in
    :func:`lw_weights`); the scaling uses the finite records only.

    Parameters
    ----------
    log_lik : ndarray, shape (S, n), or Fit
        Per-record log-likelihood of the unweighted fit's draws, or that fit.
    q : float
        Truncation level of the draws (see :func:`ppmlib.kept_draws`); 1 keeps every draw.

    Returns
    -------
    ndarray, shape (n,)
        r_i in [0, 1], NaN where the log-likelihood is not finite.

    See Also
    --------
    lw_weights : the weights made from these risks.
    """
    f = record_bounds(log_lik, None, q)
    risk = np.full_like(f, np.nan)
    finite = np.isfinite(f)
    if finite.any():
        risk[finite] = min_max_scale(f[finite])
    return risk


def lw_weights(log_lik, c: float = 1.0, g: float = 0.0, q: float = 1.0) -> np.ndarray:
    """Lipschitz weights (LW) from the S x n log-likelihood of the unweighted fit.

    f_i = max_s abs(f_s(x_i)); r_i = (f_i - min f) / (max f - min f) (0 when all are equal);
    alpha_i = clip(c (1 - r_i) + g, 0, 1) (2020 paper, section 2.1, Algorithm 1). A record whose
    log-likelihood is not finite gets alpha_i = 0, which keeps Delta finite.

    Parameters
    ----------
    log_lik : ndarray, shape (S, n), or Fit
        Per-record log-likelihood of S draws of the *unweighted* fit, or that fit (then no S x n
        matrix is built).
    c, g : float
        Scale (>= 0) and shift in alpha_i = clip(c (1 - r_i) + g, 0, 1).
    q : float
        Truncation level of the draws (CE paper, section 3.1); 1 keeps every draw.

    Returns
    -------
    ndarray, shape (n,)
        Weights alpha in [0, 1]; 0 for a record whose log-likelihood is not finite.

    See Also
    --------
    lw_risks : the risks r_i.
    cw_weights : the count-weighted alternative.
    ppmlib.record_bounds : Delta_i of the alpha-weighted refit.
    ppmlib.synthesizer : weights, refit, bounds and synthetic data in one call.

    Examples
    --------
    >>> L = np.array([[-1.0, -0.5, -5.0, -2.0],
    ...               [-3.0, -1.0, -4.0, -1.5]])   # 2 draws x 4 records
    >>> lw_weights(L)                              # f = [3, 1, 5, 2]
    array([0.5 , 1.  , 0.  , 0.75])
    >>> lw_weights(L, c=0.6, g=0.1)
    array([0.4 , 0.7 , 0.1 , 0.55])
    """
    risk = lw_risks(log_lik, q)
    finite = np.isfinite(risk)
    alpha = np.zeros_like(risk)
    alpha[finite] = risk_to_weight(risk[finite], c, g)
    return alpha


def lw_from_bounds(f: np.ndarray, c, g: float, low: float, high: float) -> np.ndarray:
    """LW's weights from each record's f_i = max_s abs(f_s(x_i)) and the range its risks are scaled by.

    r_i = (f_i - low) / (high - low) (0 when high == low), alpha_i = clip(c (1 - r_i) + g, 0, 1),
    0 where f_i is not finite: :func:`lw_weights` with (low, high) the finite f's range, given here
    so that a file read in parts (:mod:`ppmlib.mechanism.partitioned`) scales every part by the
    file-wide range.

    Parameters
    ----------
    f : ndarray, shape (n,)
        The records' largest absolute log-likelihood under the unweighted draws.
    c : float or ndarray, shape (C, 1)
        The scale; a column of C candidate scales gives one row of weights each.
    g : float
        The shift.
    low, high : float
        The range of the finite f over the whole file.

    Returns
    -------
    ndarray, shape (n,) or (C, n)
        Weights alpha in [0, 1].

    Examples
    --------
    >>> lw_from_bounds(np.array([3.0, 1.0, 5.0, 2.0]), 1.0, 0.0, 1.0, 5.0)
    array([0.5 , 1.  , 0.  , 0.75])
    """
    risk = np.zeros_like(f) if high == low else (f - low) / (high - low)
    alpha = scaled_weight(risk, c, g)
    alpha[..., ~np.isfinite(f)] = 0.0
    return alpha


def isolation_risks(y, radius: float, relative: bool = False) -> np.ndarray:
    """CW risk IR_i = #{j : abs(y_j - y_i) > r_i} / n, the share of records outside a ball around y_i.

    The ball is closed: a record exactly r_i away counts as inside (abs(y_j - y_i) <= r_i), and
    record i itself is always inside. For integer counts with an integer radius this matters:
    radius 10 counts the records at distance 10 as inside, so radius 10 and 10.5 give the same
    risks while 9.99 does not.

    ``radius`` is absolute (r_i = radius) or, with ``relative=True``, a fraction of the value
    (r_i = radius abs(y_i)). Counting uses a sorted copy (O(n log n)), never an n x n matrix.

    Parameters
    ----------
    y : array_like, shape (n,)
        The confidential values (finite).
    radius : float
        Radius of the ball, > 0 (absolute, or relative to abs(y_i)).
    relative : bool
        Whether ``radius`` is a fraction of each value.

    Returns
    -------
    ndarray, shape (n,)
        IR_i in [0, 1).

    See Also
    --------
    cw_weights : the weights made from these risks.

    Examples
    --------
    >>> isolation_risks([0, 1, 2, 10, 11], radius=1.0)
    array([0.6, 0.4, 0.6, 0.6, 0.6])
    """
    y = _checks.finite_array(y, "y", ndim=1)
    radius = _checks.real(radius, "radius", low=0, low_open=True)
    if not isinstance(relative, (bool, np.bool_)):
        raise TypeError(f"relative must be True or False, got {type(relative).__name__}")
    r = radius * np.abs(y) if relative else np.full_like(y, radius)
    s = np.sort(y)
    inside = np.searchsorted(s, y + r, side="right") - np.searchsorted(s, y - r, side="left")
    return (y.size - inside) / y.size


def cw_weights(y, radius: float, c: float = 1.0, g: float = 0.0, relative: bool = False) -> np.ndarray:
    """Count weights (CW): alpha_i = clip(c (1 - IR_i) + g, 0, 1).

    IR_i is the share of records farther than the radius from record i (:func:`isolation_risks`);
    2020 paper, section 2.2, Algorithm 2.

    Parameters
    ----------
    y : array_like, shape (n,)
        The confidential values.
    radius : float
        Radius of the ball around each value, > 0 (a policy choice).
    c, g : float
        Scale (>= 0) and shift in alpha_i = clip(c (1 - IR_i) + g, 0, 1).
    relative : bool
        Whether ``radius`` is a fraction of each value (r_i = radius abs(y_i)).

    Returns
    -------
    ndarray, shape (n,)
        One weight in [0, 1] per record.

    See Also
    --------
    isolation_risks : the risks IR_i.
    lw_weights : the Lipschitz-weighted alternative.

    Examples
    --------
    >>> cw_weights([0, 1, 2, 10, 11], radius=1.0)
    array([0.4, 0.6, 0.4, 0.4, 0.4])
    """
    return risk_to_weight(isolation_risks(y, radius, relative), c, g)


def scalar_weights(a: float, n: int) -> np.ndarray:
    """SW / exponential mechanism: the same weight ``a`` for all ``n`` records, shape (n,).

    With the log-likelihood as utility, the exponential mechanism at epsilon is the posterior with
    every likelihood term raised to a = epsilon / (2 Delta_u) (CE paper, section 3.2).

    Parameters
    ----------
    a : float
        The scalar weight, in [0, 1].
    n : int
        The number of records.

    Returns
    -------
    ndarray, shape (n,)

    See Also
    --------
    ppmlib.match_delta : finds the ``a`` whose Delta matches a target.

    Examples
    --------
    >>> scalar_weights(0.375, 3)
    array([0.375, 0.375, 0.375])
    """
    a = _checks.real(a, "a", low=0, high=1)
    return np.full(_checks.integer(n, "n", low=1), a)


def reweight(weights, bounds, k: float) -> np.ndarray:
    """One re-weighting step: alpha^w_i = clip(k alpha_i Delta / Delta_i, 0, 1).

    ``bounds`` are the by-record bounds Delta_i of the alpha-weighted fit and Delta their maximum
    (2025 paper, section 2.1, Algorithm 1, step 1). Records with Delta_i = 0 keep their weight
    (nothing to scale against). Since Delta_i = alpha_i max_s abs(f_s(x_i)), the new weight does not
    depend on alpha_i, and a record with Delta_i >= k Delta loses weight.

    Parameters
    ----------
    weights : array_like, shape (n,)
        The weights alpha of the fit that gave ``bounds``.
    bounds : array_like, shape (n,)
        By-record bounds Delta_i >= 0 of that fit.
    k : float
        The constant, > 0 (the papers use 0.95).

    Returns
    -------
    ndarray, shape (n,)
        Weights alpha^w in [0, 1].

    See Also
    --------
    ppmlib.reweight_to_tolerance : repeats this step, adjusting k, until Delta is matched.

    Examples
    --------
    >>> reweight([0.5, 0.2, 0.9, 0.4], [2.0, 1.0, 4.0, 0.0], k=0.95)
    array([0.95 , 0.76 , 0.855, 0.4  ])
    """
    bounds = _checks.finite_array(bounds, "bounds", ndim=1)
    alpha = _checks.weights(weights, bounds.size)
    k = _checks.real(k, "k", low=0, low_open=True)
    if (bounds < 0).any():
        raise BadArgument("bounds must be non-negative (they are maxima of absolute values)")
    delta = bounds.max()
    out = alpha.copy()
    positive = bounds > 0
    out[positive] = np.clip(k * alpha[positive] * delta / bounds[positive], 0.0, 1.0)
    return out


def lw_delta_formula(f_min: float, f_max: float, c: float = 1.0, g: float = 0.0) -> float:
    """LW's Delta in closed form from the unweighted fit's extreme risks f_min and f_max.

    With f_i = max_s abs(f_s(x_i)) from the unweighted fit, LW gives record i the weight
    alpha(f_i) = clip(c (f_max - f_i) / (f_max - f_min) + g, 0, 1), so its weighted bound is about
    alpha(f_i) f_i (the LW refit's draws differ a little from the unweighted ones). This returns the
    largest value of f alpha(f) over f in [f_min, f_max], treating f as continuous. For (c, g) =
    (1, 0) that is f_max^2 / (4 (f_max - f_min)) when f_max >= 2 f_min (the parabola's vertex f_max / 2
    lies inside), else f_min. Because f_max is the most extreme record's risk, an extreme value,
    Delta follows it: it drifts up with n and keeps its spread.

    Parameters
    ----------
    f_min, f_max : float
        The smallest and the largest f_i of the database, 0 <= f_min <= f_max.
    c, g : float
        LW's scale (>= 0) and shift.

    Returns
    -------
    float
        max over f in [f_min, f_max] of f clip(c (f_max - f) / (f_max - f_min) + g, 0, 1); when
        f_min = f_max (every risk 0) it is f_max clip(c + g, 0, 1).

    Examples
    --------
    >>> round(lw_delta_formula(3.22, 8.4), 4)          # Poisson, mu = 100: 8.4^2 / (4 x 5.18)
    3.4054
    >>> lw_delta_formula(3.0, 5.0)                      # f_max < 2 f_min: the largest bound is f_min's
    3.0
    """
    f_min = _checks.real(f_min, "f_min", low=0)
    f_max = _checks.real(f_max, "f_max", low=f_min)
    c = _checks.real(c, "c", low=0)
    g = _checks.real(g, "g")
    span = f_max - f_min
    if span == 0:   # every record equally risky: r_i = 0 (min_max_scale), alpha = clip(c + g, 0, 1)
        return f_max * float(np.clip(c + g, 0.0, 1.0))

    def bound(f):
        return f * np.clip(c * (f_max - f) / span + g, 0.0, 1.0)

    # f alpha(f) is piecewise: f where alpha = 1, a concave parabola where 0 < alpha < 1, 0 where
    # alpha = 0; its maximum is at an end, at a kink (alpha reaching 1), or at the parabola's vertex
    candidates = [f_min, f_max]
    if c > 0:
        candidates += [f_max - (1.0 - g) * span / c, (f_max + g * span / c) / 2.0]
    return float(max(bound(min(max(f, f_min), f_max)) for f in candidates))
