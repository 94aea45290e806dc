"""Public bins of a continuous column (log wage, log income): the one definition of the bins that
the binned model (:class:`ppmlib.models.families.Binned`) and any scheme built on counts per
(cell, bin) share.

The bins are fixed before any data is seen, from three public constants: the lowest edge, the
highest edge and the width. Bin j (0-based) is [low + j width, low + (j + 1) width); the last bin
also holds ``high`` itself. A value outside [low, high] lies in no bin: :func:`bin_index` refuses
it (the count and the side, never the value), so the caller top- or bottom-codes first, with
public bounds.
"""
from __future__ import annotations

__all__ = ["bin_edges", "bin_index", "cell_index", "cell_bin_totals"]

import numpy as np

from ppmlib import _checks
from ppmlib.errors import BadArgument


def bin_edges(low: float, high: float, width: float) -> np.ndarray:
    """The J + 1 edges of J equal bins from ``low`` to ``high``.

    Parameters
    ----------
    low, high : float
        The public range, low < high.
    width : float
        The bins' width, > 0; (high - low) / width must be a whole number (to 1e-9).

    Returns
    -------
    ndarray, shape (J + 1,)

    Raises
    ------
    ppmlib.errors.BadArgument
        low >= high, width <= 0, or a width that does not divide the range.

    Examples
    --------
    >>> bin_edges(3.5, 4.5, 0.25).tolist()
    [3.5, 3.75, 4.0, 4.25, 4.5]
    """
    low = _checks.real(low, "the bins' low edge")
    high = _checks.real(high, "the bins' high edge")
    width = _checks.real(width, "the bins' width", low=0, low_open=True)
    if not low < high:
        raise BadArgument(f"the bins' low edge must lie below the high edge, got {low:g} and {high:g}")
    count = (high - low) / width
    J = int(round(count))
    if J < 1 or abs(count - J) > 1e-9 * max(1.0, count):
        raise BadArgument(f"the bins' width {width:g} must divide the range [{low:g}, {high:g}] into whole bins "
                          f"({count:.4g} bins)")
    return low + width * np.arange(J + 1)


def bin_index(y, edges: np.ndarray) -> np.ndarray:
    """The 0-based bin of every value of ``y`` (the last bin holds the high edge).

    Parameters
    ----------
    y : array_like, shape (n,)
        The values (already on the bins' scale, e.g. log wage).
    edges : ndarray, shape (J + 1,)
        From :func:`bin_edges`.

    Returns
    -------
    ndarray of int, shape (n,)

    Raises
    ------
    ppmlib.errors.BadArgument
        Values outside [edges[0], edges[-1]]: the message gives how many and on which side (never a
        value), and says to code them into the public range first.

    Examples
    --------
    >>> bin_index([3.5, 3.8, 4.5], bin_edges(3.5, 4.5, 0.25)).tolist()
    [0, 1, 3]
    """
    y = np.asarray(y, dtype=float)
    below, above = int((y < edges[0]).sum()), int((y > edges[-1]).sum())
    if below or above:
        raise BadArgument(f"{below} value(s) of y lie below the bins' low edge {edges[0]:g} and {above} above the "
                          f"high edge {edges[-1]:g}: the public bins cover no data there; bottom- and top-code y "
                          "into the bins' range (with public bounds) or widen the range")
    return np.minimum(np.searchsorted(edges, y, side="right") - 1, edges.size - 2)


def cell_index(X) -> tuple[np.ndarray, np.ndarray]:
    """The cells of a design: its distinct rows and each record's row among them.

    Parameters
    ----------
    X : ndarray, shape (n, P)
        The design matrix (one-hot keys: equal rows are the same cell of levels).

    Returns
    -------
    tuple
        rows (U, P), the distinct rows in sorted order, and index (n,) of each record's row.
    """
    rows, index = np.unique(np.asarray(X, dtype=float), axis=0, return_inverse=True)
    return rows, np.asarray(index).reshape(-1)


def cell_bin_totals(cells: np.ndarray, bins: np.ndarray, weights, U: int, J: int) -> np.ndarray:
    """The total weight of the records in every (cell, bin), shape (U, J).

    With unit weights these are the counts a noisy-counts scheme would perturb.

    Parameters
    ----------
    cells : ndarray of int, shape (n,)
        Each record's cell (:func:`cell_index`).
    bins : ndarray of int, shape (n,)
        Each record's bin (:func:`bin_index`).
    weights : ndarray, shape (n,)
        The records' weights (alpha).
    U, J : int
        The numbers of cells and bins.

    Returns
    -------
    ndarray, shape (U, J)

    Examples
    --------
    >>> cell_bin_totals(np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([1.0, 0.5, 1.0]), 2, 2).tolist()
    [[0.0, 1.5], [1.0, 0.0]]
    """
    flat = np.bincount(cells * J + bins, weights=weights, minlength=U * J)
    return flat.reshape(U, J)
