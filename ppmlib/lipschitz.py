"""Lipschitz bounds of the weighted log-likelihood, estimated from posterior draws.

Between leave-one-out neighbours the weighted log-likelihood differs by one term, alpha_i f_theta(x_i),
so the authors' leave-one-out double loop |sum_j f_j - sum_{j != i} f_j| is just |f_i|: one
vectorised pass over the S x n matrix does it (ALGORITHMS.md section 2).
"""
from __future__ import annotations

import numpy as np

from . import _checks


def weighted_abs_log_lik(log_lik, weights=None) -> np.ndarray:
    """abs(alpha_i f_s(x_i)) as an S x n array; a record with weight 0 contributes 0 even where
    its log-likelihood is -inf (that is how a zero weight keeps the bound finite)."""
    L = _checks.log_lik_matrix(log_lik)
    if weights is None:
        return np.abs(L)
    w = _checks.weights(weights, L.shape[1])
    with np.errstate(invalid="ignore"):
        A = np.abs(L) * w
    A[:, w == 0] = 0.0
    return A


def _kept(A: np.ndarray, q: float) -> np.ndarray:
    per_draw = A.max(axis=1)
    return per_draw <= np.quantile(per_draw, q)


def kept_draws(log_lik, weights=None, q: float = 1.0) -> np.ndarray:
    """Boolean mask of the draws kept by the optional truncation (CE paper, section 3.1).

    Per draw s, m_s = max_i abs(alpha_i f_s(x_i)); draws with m_s above the q-quantile of m are
    dropped, both from the bound and from synthesis. q = 1 keeps every draw.
    """
    q = _checks.quantile_level(q)
    A = weighted_abs_log_lik(log_lik, weights)
    return np.ones(A.shape[0], dtype=bool) if q == 1.0 else _kept(A, q)


def record_bounds(log_lik, weights=None, q: float = 1.0) -> np.ndarray:
    """By-record Lipschitz bounds Delta_i = max_s abs(alpha_i f_s(x_i)) over the kept draws, shape (n,).

    ``log_lik`` is the S x n *unweighted* log-likelihood of the draws of the alpha-weighted fit;
    ``weights`` are that fit's alpha (None: all ones). ``q`` < 1 truncates draws first.
    """
    q = _checks.quantile_level(q)
    A = weighted_abs_log_lik(log_lik, weights)
    return A.max(axis=0) if q == 1.0 else A[_kept(A, q)].max(axis=0)


def lipschitz_bound(log_lik, weights=None, q: float = 1.0) -> float:
    """Overall bound Delta = max_i Delta_i; each draw is then epsilon = 2 Delta DP (locally)."""
    return float(record_bounds(log_lik, weights, q).max())


def epsilon(delta: float) -> float:
    """Privacy budget of one draw (and of one synthetic dataset made from it): 2 Delta."""
    return 2.0 * float(delta)


def near_max_share(bounds, fraction: float = 0.9) -> float:
    """Share of records whose bound is at least ``fraction`` of the maximum: high means the
    privacy budget Delta is spent evenly (an efficient weighting), low means many records are
    down-weighted more than the guarantee needs."""
    bounds = _checks.finite_array(bounds, "bounds", ndim=1)
    fraction = _checks.real(fraction, "fraction", low=0, high=1)
    return float(np.mean(bounds >= fraction * bounds.max()))
