"""Lipschitz bounds of the weighted log-likelihood, estimated from posterior draws.

Between a database ``x`` and its removal neighbour ``x_-i`` (``x`` with record i removed) the weighted
log-likelihood differs by one term, alpha_i f_theta(x_i),
so the authors' leave-one-out double loop |sum_j f_j - sum_{j != i} f_j| is just |f_i|: one
vectorised pass over the S x n matrix does it. The by-record bound of a fit with weights alpha is
Delta_i = max_s abs(alpha_i f_s(x_i)), the overall bound Delta = max_i Delta_i, and each draw is
epsilon = 2 Delta differentially private for this database against its removal neighbours, the n
databases with one of its records removed (CE paper, section 2.2; 2025 paper, Appendix A). Adding an
arbitrary record is not covered (its abs(f) is unbounded); under replace-one neighbours the same bound
gives 4 Delta, provided it also bounds the replacing record's term (for instance on the neighbour's own
draws). The weights are treated as fixed: weights computed from the data are outside the guarantee.

Every function takes either that S x n matrix or a :class:`~ppmlib.Fit`. Given a Fit, nothing of
size S x n is built: the log-likelihood is evaluated per distinct key (a count record's value) in
blocks of draws, keeping running maxima. The answers are the same to the last bit, because
alpha max_s abs(f_s) = max_s alpha abs(f_s) for alpha >= 0 in floating point too (rounding is monotone).
"""
from __future__ import annotations

__all__ = ["weighted_abs_log_lik", "weight_records", "kept_draws", "record_bounds", "truncated_bounds",
           "lipschitz_bound", "epsilon", "near_max_share"]

import math
import numbers

import numpy as np

from ppmlib import _checks
from ppmlib.inference.posterior import Fit, one_blas_thread
from ppmlib.errors import BadArgument


def weighted_abs_log_lik(log_lik, weights=None) -> np.ndarray:
    """abs(alpha_i f_s(x_i)) as an S x n array; a record with weight 0 contributes 0 even where
    its log-likelihood is -inf (that is how a zero weight keeps the bound finite).

    Parameters
    ----------
    log_lik : array_like, shape (S, n)
        The per-record log-likelihood.
    weights : array_like, shape (n,), optional
        The record weights alpha; None means all ones.

    Returns
    -------
    ndarray, shape (S, n)
    """
    L = _checks.log_lik_matrix(log_lik)
    if weights is None:
        return np.abs(L)
    return weight_records(np.abs(L), _checks.weights(weights, L.shape[1]))


def kept_draws(log_lik, weights=None, q: float = 1.0) -> np.ndarray:
    """Boolean mask of the draws kept by the optional truncation (CE paper, section 3.1), shape (S,).

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
    ppmlib.mechanism.bounds.truncated_bounds : both from one pass.

    Examples
    --------
    >>> L = np.array([[-1.0, -0.5, -5.0, -2.0],
    ...               [-3.0, -1.0, -4.0, -1.5],
    ...               [-2.0, -0.2, -4.5, -0.1]])   # per-draw maxima 5, 4, 4.5
    >>> kept_draws(L, q=0.5)
    array([False,  True,  True])
    """
    if isinstance(log_lik, Fit) and _checks.quantile_level(q) == 1.0:
        return np.ones(log_lik.n_draws, dtype=bool)  # nothing to compute
    return truncated_bounds(log_lik, weights, q)[0]


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
    ppmlib.mechanism.bounds.truncated_bounds : the kept draws and the bounds from one pass.

    Examples
    --------
    >>> L = np.array([[-1.0, -0.5, -5.0, -2.0],
    ...               [-3.0, -1.0, -4.0, -1.5]])   # 2 draws x 4 records
    >>> record_bounds(L)
    array([3., 1., 5., 2.])
    >>> record_bounds(L, weights=[0.5, 1.0, 0.2, 0.0])
    array([1.5, 1. , 1. , 0. ])
    """
    return truncated_bounds(log_lik, weights, q)[1]


def truncated_bounds(log_lik, weights=None, q: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The kept draws, shape (S,), and the by-record bounds over them, shape (n,), from ONE pass.

    The same answers as :func:`ppmlib.kept_draws` and :func:`ppmlib.record_bounds`, but abs(alpha_i f_s(x_i)) is
    built once: :func:`ppmlib.synthesizer` needs both. ``log_lik`` is the S x n matrix or the Fit.

    Parameters
    ----------
    log_lik : array_like, shape (S, n), or Fit
        The per-record log-likelihood f_s(x_i), or the fit itself (streamed, no S x n matrix).
    weights : array_like, shape (n,), optional
        The record weights alpha in [0, 1]; None means all ones.
    q : float
        Draw truncation level in (0, 1]; 1 keeps every draw.

    Returns
    -------
    kept : ndarray of bool, shape (S,)
    bounds : ndarray, shape (n,)
    """
    q = _checks.quantile_level(q)
    if isinstance(log_lik, Fit):
        w = None if weights is None else _checks.weights(weights, log_lik.y.size)
        return _streamed_truncated_bounds(log_lik, w, q)
    A = weighted_abs_log_lik(log_lik, weights)
    if q == 1.0:
        return np.ones(A.shape[0], dtype=bool), A.max(axis=0)
    per_draw = A.max(axis=1)
    keep = per_draw <= np.quantile(per_draw, q)
    return keep, A[keep].max(axis=0)


def _key_weights(fit: Fit, w: np.ndarray) -> np.ndarray:
    """Largest weight among the records of each key: max_i abs(alpha_i f(x_i)) over a key's records
    is that weight times abs(f) (a key whose records all have weight 0 contributes 0)."""
    out = np.zeros(fit._distinct[0].size)
    np.maximum.at(out, fit.record_keys, w)
    return out


def _streamed_truncated_bounds(fit: Fit, w: np.ndarray | None, q: float) -> tuple[np.ndarray, np.ndarray]:
    """One pass over the log-likelihood (its matrix products on one BLAS thread); memory stays flat in S and n.

    Which draws are dropped is known only at the end (the q-quantile of every m_s), so the rows
    abs(f_s) of the draws with the largest m_s are held back: at most D of them, D = the most draws
    that can lie above that quantile. A draw pushed out of that pool is certainly kept and is
    folded into the running per-key maximum at once; at the end, the pool's kept draws are folded too.
    """
    with one_blas_thread():
        return _one_pass(fit, w, q)


def _one_pass(fit: Fit, w: np.ndarray | None, q: float) -> tuple[np.ndarray, np.ndarray]:
    """The pass of :func:`_streamed_truncated_bounds`."""
    S = fit.n_draws
    key_w = np.ones(fit._distinct[0].size) if w is None else _key_weights(fit, w)
    used = key_w > 0
    if q == 1.0:  # every draw kept: no per-draw maxima, no pool; tiles that stay in cache
        key_max = np.full(key_w.size, -np.inf)
        for _, keys, tile in fit.log_lik_tiles():
            np.abs(tile, out=tile)
            np.maximum(key_max[keys], tile.max(axis=0), out=key_max[keys])
        return np.ones(S, dtype=bool), weight_records(key_max[fit.record_keys], w)
    # np.quantile interpolates at position q (S - 1): fewer than (1 - q)(S - 1) + 1 draws lie above
    # it; one more in the pool covers rounding
    pool_size = int(np.ceil((1.0 - q) * (S - 1))) + 2
    per_draw = np.zeros(S)
    key_max = np.full(key_w.size, -np.inf)  # running max_s abs(f_s(key)) over draws known to be kept
    pool_rows, pool_m, pool_idx = np.empty((0, key_w.size)), np.empty(0), np.empty(0, dtype=int)
    for part, block in fit.log_lik_blocks():
        block = np.abs(block)
        if used.any():
            per_draw[part] = (block[:, used] * key_w[used]).max(axis=1)
        rows = np.vstack([pool_rows, block])
        m = np.concatenate([pool_m, per_draw[part]])
        idx = np.concatenate([pool_idx, np.arange(S)[part]])
        order = np.argsort(m, kind="stable")
        out, held = order[:-pool_size], order[-pool_size:]
        if out.size:
            np.maximum(key_max, rows[out].max(axis=0), out=key_max)
        pool_rows, pool_m, pool_idx = rows[held], m[held], idx[held]
    keep = per_draw <= np.quantile(per_draw, q)  # drop the draws above the q-quantile
    kept_pool = keep[pool_idx]
    if kept_pool.any():
        np.maximum(key_max, pool_rows[kept_pool].max(axis=0), out=key_max)
    return keep, weight_records(key_max[fit.record_keys], w)


def weight_records(values: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """alpha_i times record i's values (the last axis is the records): a record's bound, or its
    log-likelihood per draw. A zero weight gives 0 even where the value is -inf (0 * -inf is NaN):
    a record with weight 0 is out of the pseudo likelihood whatever its density.

    Parameters
    ----------
    values : ndarray, shape (..., n)
        Per-record values; a new array is returned when ``w`` is given (``values`` is not changed).
    w : ndarray, shape (n,), or None
        The record weights alpha; None returns ``values`` as they are.

    Returns
    -------
    ndarray, shape (..., n)
    """
    if w is None:
        return values
    with np.errstate(invalid="ignore"):
        values = values * w
    values[..., w == 0] = 0.0
    return values


def lipschitz_bound(log_lik, weights=None, q: float = 1.0) -> float:
    """Overall bound Delta = max_i Delta_i; each draw is then epsilon = 2 Delta DP (locally, against the
    removal neighbours of the database).

    Parameters
    ----------
    log_lik, weights, q
        As for :func:`record_bounds`.

    Returns
    -------
    float

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

    That is against the removal neighbours of the database (one of its records removed; adding an
    arbitrary record is not covered); under replace-one neighbours it is 4 Delta, provided Delta
    also bounds the replacing record's term. Releasing m synthetic datasets costs m times this.

    Parameters
    ----------
    delta : float
        The Lipschitz bound Delta (>= 0).

    Returns
    -------
    float

    Examples
    --------
    >>> epsilon(1.5)
    3.0
    """
    # a budget must never fail open: a NaN passes every comparison, a string would be "doubled"
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    if math.isnan(delta) or delta < 0:
        raise BadArgument(f"delta must be a Lipschitz bound >= 0, got {float(delta)}")
    return 2.0 * float(delta)


def near_max_share(bounds, fraction: float = 0.9) -> float:
    """Share of records whose bound is at least ``fraction`` of the maximum: high means the
    privacy budget Delta is spent evenly (an efficient weighting), low means many records are
    down-weighted more than the guarantee needs.

    Parameters
    ----------
    bounds : array_like, shape (n,)
        By-record bounds Delta_i.
    fraction : float
        The share of the maximum that counts as near it, in [0, 1].

    Returns
    -------
    float

    Examples
    --------
    >>> near_max_share([1.0, 0.95, 0.5, 0.2], fraction=0.9)
    0.5
    """
    bounds = _checks.finite_array(bounds, "bounds", ndim=1)
    fraction = _checks.real(fraction, "fraction", low=0, high=1)
    return float(np.mean(bounds >= fraction * bounds.max()))
