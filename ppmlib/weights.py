"""Record weights: LW (Lipschitz-weighted), CW (count-weighted), and re-weighting.

All three end in the same map from a risk r_i in [0, 1] to a weight: alpha_i = clip(c (1 - r_i) + g, 0, 1).
The clipping is part of the method (the papers' R code does it), not a silent repair.
"""
from __future__ import annotations

import numpy as np

from . import _checks
from .lipschitz import record_bounds


def risk_to_weight(risk, c: float = 1.0, g: float = 0.0) -> np.ndarray:
    """alpha = clip(c (1 - risk) + g, 0, 1): scale ``c`` compresses the weights, shift ``g`` moves them."""
    c = _checks.real(c, "c", low=0)
    g = _checks.real(g, "g")
    risk = _checks.finite_array(risk, "risk", ndim=1)
    return np.clip(c * (1.0 - risk) + g, 0.0, 1.0)


def min_max_scale(values: np.ndarray) -> np.ndarray:
    """(v - min) / (max - min); all-equal values give 0 (no record is riskier than another)."""
    span = values.max() - values.min()
    if span == 0:
        return np.zeros_like(values)
    return (values - values.min()) / span


def lw_risks(log_lik, q: float = 1.0) -> np.ndarray:
    """LW risk r_i: the min-max scaled max_s abs(f_s(x_i)) from the *unweighted* fit.

    Records with a non-finite log-likelihood are returned as NaN (they get weight 0 in
    :func:`lw_weights`); the scaling uses the finite records only.
    """
    f = record_bounds(log_lik, None, q)
    risk = np.full_like(f, np.nan)
    finite = np.isfinite(f)
    if finite.any():
        risk[finite] = min_max_scale(f[finite])
    return risk


def lw_weights(log_lik, c: float = 1.0, g: float = 0.0, q: float = 1.0) -> np.ndarray:
    """Lipschitz weights (ALGORITHMS.md section 3) from the S x n log-likelihood of the unweighted fit."""
    risk = lw_risks(log_lik, q)
    finite = np.isfinite(risk)
    alpha = np.zeros_like(risk)
    alpha[finite] = risk_to_weight(risk[finite], c, g)
    return alpha


def isolation_risks(y, radius: float, relative: bool = False) -> np.ndarray:
    """CW risk IR_i = #{j : abs(y_j - y_i) > r_i} / n, the share of records outside a ball around y_i.

    The ball is closed: a record exactly r_i away counts as inside (abs(y_j - y_i) <= r_i), and
    record i itself is always inside. For integer counts with an integer radius this matters:
    radius 10 counts the records at distance 10 as inside, so radius 10 and 10.5 give the same
    risks while 9.99 does not.

    ``radius`` is absolute (r_i = radius) or, with ``relative=True``, a fraction of the value
    (r_i = radius abs(y_i)). Counting uses a sorted copy (O(n log n)), never an n x n matrix.
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
    """Count weights (ALGORITHMS.md section 4): alpha_i = clip(c (1 - IR_i) + g, 0, 1)."""
    return risk_to_weight(isolation_risks(y, radius, relative), c, g)


def scalar_weights(a: float, n: int) -> np.ndarray:
    """SW / exponential mechanism: the same weight ``a`` for all ``n`` records."""
    a = _checks.real(a, "a", low=0, high=1)
    return np.full(_checks.integer(n, "n", low=1), a)


def reweight(weights, bounds, k: float) -> np.ndarray:
    """One re-weighting step (ALGORITHMS.md section 6): alpha_i k Delta / Delta_i, clipped to [0, 1].

    ``bounds`` are the by-record bounds Delta_i of the alpha-weighted fit and Delta their maximum.
    Records with Delta_i = 0 keep their weight (nothing to scale against).
    """
    bounds = _checks.finite_array(bounds, "bounds", ndim=1)
    alpha = _checks.weights(weights, bounds.size)
    k = _checks.real(k, "k", low=0, low_open=True)
    if (bounds < 0).any():
        raise ValueError("bounds must be non-negative (they are maxima of absolute values)")
    delta = bounds.max()
    out = alpha.copy()
    positive = bounds > 0
    out[positive] = np.clip(k * alpha[positive] * delta / bounds[positive], 0.0, 1.0)
    return out
