"""Lipschitz bounds of the weighted log-likelihood, estimated from posterior draws.

Between leave-one-out neighbours the weighted log-likelihood differs by one term, alpha_i f_theta(x_i),
so the authors' leave-one-out double loop |sum_j f_j - sum_{j != i} f_j| is just |f_i|: one
vectorised pass over the S x n matrix does it. The by-record bound of a fit with weights alpha is
Delta_i = max_s abs(alpha_i f_s(x_i)), the overall bound Delta = max_i Delta_i, and each draw is
epsilon = 2 Delta differentially private for this database under add/remove-one neighbours (CE paper,
section 2.2; 2025 paper, Appendix A; 4 Delta under replace-one neighbours).

Every function takes either that S x n matrix or a :class:`~ppmlib.Fit`. Given a Fit, nothing of
size S x n is built: the log-likelihood is evaluated per distinct key (a count record's value) in
blocks of draws, keeping running maxima. The answers are the same to the last bit, because
alpha max_s abs(f_s) = max_s alpha abs(f_s) for alpha >= 0 in floating point too (rounding is monotone).
"""
from __future__ import annotations

__all__ = ["weighted_abs_log_lik", "kept_draws", "record_bounds", "lipschitz_bound", "epsilon", "near_max_share"]

import numpy as np

from . import _checks
from .posterior import Fit


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
    ``log_lik`` is the S x n matrix or the Fit itself (then no S x n matrix is built).

    Parameters
    ----------
    log_lik : ndarray, shape (S, n), or Fit
        Unweighted per-record log-likelihood of the draws of the alpha-weighted fit, or that fit.
    weights : array_like, shape (n,), optional
        The fit's alpha (None: all ones).
    q : float
        Quantile level in (0, 1].

    Returns
    -------
    ndarray of bool, shape (S,)

    See Also
    --------
    record_bounds : the bounds over the kept draws.

    Examples
    --------
    >>> L = np.array([[-1.0, -0.5, -5.0, -2.0],
    ...               [-3.0, -1.0, -4.0, -1.5],
    ...               [-2.0, -0.2, -4.5, -0.1]])   # per-draw maxima 5, 4, 4.5
    >>> kept_draws(L, q=0.5)
    array([False,  True,  True])
    """
    q = _checks.quantile_level(q)
    if isinstance(log_lik, Fit):
        if q == 1.0:
            return np.ones(log_lik.n_draws, dtype=bool)
        per_draw = _streamed_per_draw_max(log_lik, _checks.weights(weights, log_lik.y.size))
        return per_draw <= np.quantile(per_draw, q)
    A = weighted_abs_log_lik(log_lik, weights)
    return np.ones(A.shape[0], dtype=bool) if q == 1.0 else _kept(A, q)


def record_bounds(log_lik, weights=None, q: float = 1.0) -> np.ndarray:
    """By-record Lipschitz bounds Delta_i = max_s abs(alpha_i f_s(x_i)) over the kept draws, shape (n,).

    ``log_lik`` is the S x n *unweighted* log-likelihood of the draws of the alpha-weighted fit, or
    that Fit itself (the same answer, without building the S x n matrix);
    ``weights`` are that fit's alpha (None: all ones). ``q`` < 1 truncates draws first.

    Parameters
    ----------
    log_lik : ndarray, shape (S, n), or Fit
        Unweighted per-record log-likelihood f_s(x_i) of the draws of the alpha-weighted fit.
    weights : array_like, shape (n,), optional
        alpha in [0, 1]. A record with weight 0 has bound 0, even where f is -inf.
    q : float
        Truncation level in (0, 1] (see :func:`kept_draws`); 1 keeps every draw.

    Returns
    -------
    ndarray, shape (n,)
        Delta_i for every record.

    See Also
    --------
    lipschitz_bound : their maximum, Delta.
    epsilon : 2 Delta.
    near_max_share : how evenly the bounds spend Delta.

    Examples
    --------
    >>> L = np.array([[-1.0, -0.5, -5.0, -2.0],
    ...               [-3.0, -1.0, -4.0, -1.5]])   # 2 draws x 4 records
    >>> record_bounds(L)
    array([3., 1., 5., 2.])
    >>> record_bounds(L, weights=[0.5, 1.0, 0.2, 0.0])
    array([1.5, 1. , 1. , 0. ])
    """
    q = _checks.quantile_level(q)
    if isinstance(log_lik, Fit):
        return _streamed_record_bounds(log_lik, weights, q)
    A = weighted_abs_log_lik(log_lik, weights)
    return A.max(axis=0) if q == 1.0 else A[_kept(A, q)].max(axis=0)


def _key_weights(fit: Fit, w: np.ndarray) -> np.ndarray:
    """Largest weight among the records of each key: max_i abs(alpha_i f(x_i)) over a key's records
    is that weight times abs(f) (a key whose records all have weight 0 contributes 0)."""
    out = np.zeros(fit._distinct[0].size)
    np.maximum.at(out, fit.record_keys, w)
    return out


def _streamed_per_draw_max(fit: Fit, w: np.ndarray) -> np.ndarray:
    """m_s = max_i abs(alpha_i f_s(x_i)), shape (S,), one block of draws at a time."""
    key_w = _key_weights(fit, w)
    used = key_w > 0
    per_draw = np.zeros(fit.n_draws)
    for part, block in fit.log_lik_blocks():
        if used.any():
            per_draw[part] = (np.abs(block[:, used]) * key_w[used]).max(axis=1)
    return per_draw


def _streamed_record_bounds(fit: Fit, weights, q: float) -> np.ndarray:
    w = None if weights is None else _checks.weights(weights, fit.y.size)
    keep = np.ones(fit.n_draws, dtype=bool) if q == 1.0 else kept_draws(fit, w, q)
    key_max = np.full(fit._distinct[0].size, -np.inf)  # running max_s abs(f_s(key)) over kept draws
    for part, block in fit.log_lik_blocks():
        kept = keep[part]
        if kept.any():
            np.maximum(key_max, np.abs(block[kept]).max(axis=0), out=key_max)
    bounds = key_max[fit.record_keys]
    if w is None:
        return bounds
    with np.errstate(invalid="ignore"):
        bounds = bounds * w
    bounds[w == 0] = 0.0  # a zero weight keeps the bound finite even where f = -inf
    return bounds


def lipschitz_bound(log_lik, weights=None, q: float = 1.0) -> float:
    """Overall bound Delta = max_i Delta_i; each draw is then epsilon = 2 Delta DP (locally).

    Takes the same arguments as :func:`record_bounds` and returns a float.

    See Also
    --------
    record_bounds : the by-record bounds Delta_i.
    epsilon : the budget of one draw.

    Examples
    --------
    >>> L = np.array([[-1.0, -0.5, -5.0, -2.0],
    ...               [-3.0, -1.0, -4.0, -1.5]])
    >>> lipschitz_bound(L), lipschitz_bound(L, [0.5, 1.0, 0.2, 0.0])
    (5.0, 1.5)
    """
    return float(record_bounds(log_lik, weights, q).max())


def epsilon(delta: float) -> float:
    """Privacy budget of one draw (and of one synthetic dataset made from it): 2 Delta.

    That is for add/remove-one neighbours; under replace-one neighbours the same draws are
    4 Delta DP. Releasing m synthetic datasets costs m times this.

    Examples
    --------
    >>> epsilon(1.5)
    3.0
    """
    return 2.0 * float(delta)


def near_max_share(bounds, fraction: float = 0.9) -> float:
    """Share of records whose bound is at least ``fraction`` of the maximum: high means the
    privacy budget Delta is spent evenly (an efficient weighting), low means many records are
    down-weighted more than the guarantee needs.

    Examples
    --------
    >>> near_max_share([1.0, 0.95, 0.5, 0.2], fraction=0.9)
    0.5
    """
    bounds = _checks.finite_array(bounds, "bounds", ndim=1)
    fraction = _checks.real(fraction, "fraction", low=0, high=1)
    return float(np.mean(bounds >= fraction * bounds.max()))
