"""Input validation shared by the public functions.

Every check raises ``TypeError`` (wrong kind of object), :class:`ppmlib.errors.BadArgument` (a
parameter's value) or :class:`ppmlib.errors.DataRefused` (the data's values), both subclasses of ``ValueError``,
with a message that names the argument, so a reader rerunning a chapter with new parameters sees
at once what to change.
"""
from __future__ import annotations

import numbers

import numpy as np

from ppmlib.errors import BadArgument, DataRefused


def real_array(value, name: str, ndim: int | None = None) -> np.ndarray:
    """``value`` as a float array; rejects strings, objects and the wrong number of dimensions."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be numeric array-like, got {type(value).__name__}") from err
    if ndim is not None and arr.ndim != ndim:
        raise BadArgument(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    return arr


def finite_array(value, name: str, ndim: int | None = None) -> np.ndarray:
    arr = real_array(value, name, ndim)
    if arr.size == 0:
        raise DataRefused(f"{name} is empty")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise DataRefused(f"{name} has {bad.sum()} non-finite value(s) (NaN or inf), "
                         f"first at index {np.argwhere(bad)[0].tolist()}")
    return arr


def _first(bad: np.ndarray) -> int:
    """Position of the first True: messages about confidential data name a record, never its value."""
    return int(np.argmax(bad))


def counts(value, name: str = "y", *, high: int = 2**63) -> np.ndarray:
    """Non-negative integer counts below ``high`` as an int64 array (floats such as 3.0 are accepted).

    ``high`` defaults to what an int64 holds; a Stan program's data must stay below 2**31 - 1
    (Stan's int is 32-bit). Messages name the first bad record's position, not its value.
    """
    arr = finite_array(value, name, ndim=1)
    if (arr < 0).any():
        raise DataRefused(f"{name} must be non-negative counts; record {_first(arr < 0)} is negative")
    if (arr != np.round(arr)).any():
        raise DataRefused(f"{name} must be integer counts; record {_first(arr != np.round(arr))} is not an integer")
    if (arr >= high).any():
        raise DataRefused(f"{name} must be counts below {high}; record {_first(arr >= high)} is larger "
                         "(rescale the counts, e.g. to thousands)")
    return arr.astype(np.int64)


def weights(value, n: int, name: str = "weights") -> np.ndarray:
    """Record weights: length ``n``, every value in [0, 1]. ``None`` means all ones."""
    if value is None:
        return np.ones(n)
    arr = finite_array(value, name, ndim=1)
    if arr.shape[0] != n:
        raise BadArgument(f"{name} has length {arr.shape[0]} but there are {n} records")
    if ((arr < 0) | (arr > 1)).any():
        bad = arr[(arr < 0) | (arr > 1)][0]
        raise BadArgument(f"{name} must lie in [0, 1]; found {bad:g} (weights are never clipped silently)")
    return arr


def real(value, name: str, *, low=None, high=None, low_open=False, high_open=False) -> float:
    """A finite real scalar, optionally inside an interval (bounds inclusive unless *_open)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise BadArgument(f"{name} must be finite, got {value}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise BadArgument(f"{name} must lie in {lo}{low if low is not None else '-inf'}, "
                         f"{high if high is not None else 'inf'}{hi}, got {value:g}")
    return value


def integer(value, name: str, *, low: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if low is not None and value < low:
        raise BadArgument(f"{name} must be >= {low}, got {value}")
    return int(value)


def seed(value, name: str = "seed") -> int | None:
    if value is None:
        return None
    return integer(value, name, low=0)


def quantile_level(q) -> float:
    return real(q, "q", low=0, high=1, low_open=True)


def log_lik_matrix(value, name: str = "log_lik") -> np.ndarray:
    """An S x n log-likelihood matrix; -inf is allowed (it is a legitimate log density), NaN is not."""
    arr = real_array(value, name, ndim=2)
    if arr.size == 0:
        raise BadArgument(f"{name} is empty (shape {arr.shape})")
    if np.isnan(arr).any():
        raise BadArgument(f"{name} contains NaN")
    return arr
