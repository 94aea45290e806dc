"""Identification-risk weights: the marginal and the pairwise (risk-efficient) schemes.

Hu, Savitsky and Williams, "Risk-efficient Bayesian data synthesis for privacy protection"
(arXiv 1908.07639; JSSAM 2022), and their R code (``Rcode/source_functions.R`` of
github.com/monika76five/Risk_Efficient_Bayesian_Synthesis). The intruder knows a record's
un-synthesized key variables (its *pattern*) and looks for its value among the records of its
pattern: a value z matches record i when it lies in i's closed ball
``[y_i - r_i, y_i + r_i]`` (r_i = radius * abs(y_i), or radius), as the authors' code has it
(``<=`` and ``>=``). In dataset l, c_il counts the values of i's pattern inside i's ball and
T_il says whether record i's own value is among them.

- **Marginal risk** IR_i = mean_l (1 - c_il / M_i) T_il, with M_i the size of i's pattern: high
  when i's own value is found and few others lie near it. The authors' ``IdentificationRisk``.
- **Pairwise risk** of records i and j of one pattern in dataset l:
  IR_ijl = T_il T_jl (number of values of the pattern in neither ball) / M_i, and the record's
  pairwise score A_i = mean_l sum_{j != i} (1 - IR_ijl) / (M_i - 1). The authors'
  ``IdentificationRisk_pw``. A record alone in its pattern has no pairs: A_i = 1 (their code
  divides 0 by 0 there).
- **Weights**: marginal alpha_i = clip(c (1 - IR_i) + g, 0, 1); pairwise
  alpha_i = clip(c A_i + g, 0, 1) (their ``ComputeAlphas_constant`` with risk 1 - A_i).

The authors compute the weights with the confidential data in the place of the synthetic data
(``syndata = thedata``, the data themselves, m = 1): every T_i is then 1 and the marginal risk is
the share of the pattern outside the record's ball (CW's isolation risk, within patterns). That is
the default here (``synthetic=None``); passing synthetic datasets gives the risk an agency
evaluates after synthesis.

Their pairwise computation loops over i, j and l and over the n values inside: O(n^3 m). Here
it is O(n log n) per dataset: with c_ij the number of values in both balls,

    sum_{j != i} T_j (M - c_i - c_j + c_ij) = (M - c_i)(S_T - T_i) - (S_Tc - T_i c_i) + (sum_{k in B_i} D_k - T_i c_i),

where S_T = sum_j T_j, S_Tc = sum_j T_j c_j and D_k = the number of balls with T_j = 1 that hold
value k. D comes from the sorted ball ends, the sum over i's ball from a prefix sum over the
sorted values: candidates only within the pattern, sorted by value.
"""
from __future__ import annotations

__all__ = ["pattern_ids", "identification_counts", "marginal_risks", "pairwise_scores", "marginal_ir_weights",
           "pairwise_ir_weights"]

import numpy as np

from ppmlib import _checks
from ppmlib.errors import DataRefused
from ppmlib.mechanism.weights import risk_to_weight


def pattern_ids(keys, n: int) -> np.ndarray:
    """Integer pattern labels 0..P-1 from the intruder's known variables, shape (n,).

    Parameters
    ----------
    keys : None, array_like shape (n,) or (n, k), or pandas.DataFrame with n rows
        The known variables of each record (any hashable values); None: one pattern for all.
    n : int
        The number of records.

    Returns
    -------
    ndarray of int, shape (n,)
        Records with equal keys get equal labels.

    Examples
    --------
    >>> pattern_ids([["a", 1], ["b", 1], ["a", 1]], 3)
    array([0, 1, 0])
    """
    if keys is None:
        return np.zeros(n, dtype=int)
    table = np.asarray(keys.to_numpy() if hasattr(keys, "to_numpy") else keys, dtype=object)
    if table.ndim == 1:
        table = table[:, None]
    if table.ndim != 2 or table.shape[0] != n:
        raise DataRefused(f"keys must have one row per record ({n}), got shape {table.shape}")
    labels = {}
    return np.array([labels.setdefault(tuple(row), len(labels)) for row in table], dtype=int)


def _values(y, synthetic):
    y = _checks.finite_array(y, "y", ndim=1)
    if synthetic is None:
        return y, y[None, :]
    z = np.asarray(synthetic, dtype=float)
    z = z[None, :] if z.ndim == 1 else z
    if z.ndim != 2 or z.shape[1] != y.size:
        raise DataRefused(f"synthetic must have shape (m, n) with n = {y.size} (row i of a dataset is record i's), "
                         f"got {np.shape(synthetic)}")
    if not np.isfinite(z).all():
        raise DataRefused("synthetic holds values that are not finite")
    return y, z


def _balls(y: np.ndarray, radius: float, relative: bool) -> tuple[np.ndarray, np.ndarray]:
    radius = _checks.real(radius, "radius", low=0)
    if not isinstance(relative, (bool, np.bool_)):
        raise TypeError(f"relative must be True or False, got {type(relative).__name__}")
    r = radius * np.abs(y) if relative else np.full(y.size, radius)
    return y - r, y + r


def identification_counts(y, synthetic=None, radius: float = 0.1, keys=None, relative: bool = True):
    """Per record and dataset: c_il (values of i's pattern in i's closed ball) and T_il (own value in it).

    Parameters
    ----------
    y : array_like, shape (n,)
        The confidential values.
    synthetic : array_like, shape (m, n) or (n,), optional
        Released values, row i of each dataset being record i's; None: the data themselves.
    radius : float
        The ball's radius, >= 0: a share of abs(y_i) (``relative``) or absolute.
    keys : optional
        The known variables (see :func:`pattern_ids`); None: one pattern.
    relative : bool
        See ``radius``.

    Returns
    -------
    c : ndarray of int, shape (n, m)
    T : ndarray of int, shape (n, m)
    M : ndarray of int, shape (n,)
        The size of each record's pattern.
    """
    y, z = _values(y, synthetic)
    lo, hi = _balls(y, radius, relative)
    groups = pattern_ids(keys, y.size)
    c = np.zeros((y.size, z.shape[0]), dtype=np.int64)
    M = np.bincount(groups)[groups]
    for members in _groups(groups):
        for l in range(z.shape[0]):
            zs = np.sort(z[l, members])
            c[members, l] = np.searchsorted(zs, hi[members], side="right") - np.searchsorted(zs, lo[members], "left")
    T = ((z >= lo) & (z <= hi)).T.astype(np.int64)
    return c, T, M


def _groups(groups: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(groups, kind="stable")
    cuts = np.flatnonzero(np.diff(groups[order])) + 1
    return np.split(order, cuts)


def marginal_risks(y, synthetic=None, radius: float = 0.1, keys=None, relative: bool = True) -> np.ndarray:
    """The authors' record-level identification risk IR_i = mean_l (1 - c_il / M_i) T_il, shape (n,).

    Parameters
    ----------
    y, synthetic, radius, keys, relative
        As for :func:`identification_counts`.

    Returns
    -------
    ndarray, shape (n,)
        IR_i in [0, 1).

    Examples
    --------
    >>> marginal_risks([10.0, 10.5, 20.0, 40.0, 41.0], radius=0.1)
    array([0.6, 0.6, 0.8, 0.6, 0.6])
    """
    c, T, M = identification_counts(y, synthetic, radius, keys, relative)
    return ((1.0 - c / M[:, None]) * T).mean(axis=1)


def pairwise_scores(y, synthetic=None, radius: float = 0.1, keys=None, relative: bool = True) -> np.ndarray:
    """The authors' pairwise score A_i = mean_l sum_{j != i} (1 - IR_ijl) / (M_i - 1), shape (n,).

    IR_ijl = T_il T_jl (values of the pattern in neither ball) / M_i for j in i's pattern; a
    record alone in its pattern scores 1. O(n log n) per dataset (see the module's note).

    Parameters
    ----------
    y, synthetic, radius, keys, relative
        As for :func:`identification_counts`.

    Returns
    -------
    ndarray, shape (n,)
        A_i in (0, 1]; 1 minus it is the record's average pairwise risk.

    Examples
    --------
    >>> pairwise_scores([10.0, 10.5, 20.0, 40.0, 41.0], radius=0.1)
    array([0.65, 0.65, 0.6 , 0.65, 0.65])
    """
    y, z = _values(y, synthetic)
    lo, hi = _balls(y, radius, relative)
    groups = pattern_ids(keys, y.size)
    score = np.ones((y.size, z.shape[0]))
    for members in _groups(groups):
        if members.size < 2:
            continue
        for l in range(z.shape[0]):
            score[members, l] = _pairwise_one(z[l, members], lo[members], hi[members])
    return score.mean(axis=1)


def _pairwise_one(z: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A_i for one pattern and one dataset: z, lo, hi of shape (M,)."""
    M = z.size
    order = np.argsort(z, kind="stable")
    zs = z[order]
    left, right = np.searchsorted(zs, lo, "left"), np.searchsorted(zs, hi, "right")
    c = right - left
    T = ((z >= lo) & (z <= hi)).astype(np.int64)
    found = T == 1
    # D_k: how many balls of found records hold value k (in sorted order)
    lo_t, hi_t = np.sort(lo[found]), np.sort(hi[found])
    D = np.searchsorted(lo_t, zs, "right") - np.searchsorted(hi_t, zs, "left")
    prefix = np.concatenate([[0], np.cumsum(D)])
    in_ball = prefix[right] - prefix[left]                       # sum of D_k over k in i's ball
    s_t, s_tc = T.sum(), (T * c).sum()
    outside = (M - c) * (s_t - T) - (s_tc - T * c) + (in_ball - T * c)  # sum_{j != i} T_j |neither ball|
    return 1.0 - T * outside / (M * (M - 1.0))


def marginal_ir_weights(y, radius: float, c: float = 1.0, g: float = 0.0, keys=None, relative: bool = True,
                        synthetic=None) -> np.ndarray:
    """Marginal identification-risk weights alpha_i = clip(c (1 - IR_i) + g, 0, 1), shape (n,).

    Parameters
    ----------
    y : array_like, shape (n,)
        The confidential values.
    radius : float
        The matching radius (relative or absolute).
    c, g : float
        Scale and shift.
    keys : optional
        The intruder's known variables (:func:`pattern_ids`); None: one pattern.
    relative : bool
        Whether ``radius`` is a share of abs(y_i).
    synthetic : array_like, shape (m, n), optional
        Datasets to score; None: the data themselves (the authors' choice).

    Returns
    -------
    ndarray, shape (n,)
        Weights in [0, 1].

    Examples
    --------
    >>> marginal_ir_weights([10.0, 10.5, 20.0, 40.0, 41.0], radius=0.1)
    array([0.4, 0.4, 0.2, 0.4, 0.4])
    """
    return risk_to_weight(marginal_risks(y, synthetic, radius, keys, relative), c, g)


def pairwise_ir_weights(y, radius: float, c: float = 1.0, g: float = 0.0, keys=None, relative: bool = True,
                        synthetic=None) -> np.ndarray:
    """Pairwise (risk-efficient) weights alpha_i = clip(c A_i + g, 0, 1), shape (n,).

    Parameters
    ----------
    y, radius, c, g, keys, relative, synthetic
        As for :func:`marginal_ir_weights`.

    Returns
    -------
    ndarray, shape (n,)
        Weights in [0, 1].

    Examples
    --------
    >>> pairwise_ir_weights([10.0, 10.5, 20.0, 40.0, 41.0], radius=0.1)
    array([0.65, 0.65, 0.6 , 0.65, 0.65])
    """
    return risk_to_weight(1.0 - pairwise_scores(y, synthetic, radius, keys, relative), c, g)
