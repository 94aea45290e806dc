"""The normal model's per-record stages over partitions of a Parquet file, reduced exactly.

A file too large for one machine is a Parquet file whose row groups are the partitions (on
storage every worker reads). What needs the records runs where they are, one job per row group
(:func:`ppmlib.inference.parallel.map_jobs`, serially or on a Dask cluster); the client gets back
only sums and maxima, and fits from them:

* :func:`sufficient_statistics`: sum_i alpha_i, sum_i alpha_i x_i x_i', sum_i alpha_i x_i y_i,
  sum_i alpha_i y_i^2 with alpha = 1 or LW's weights, summed block by block in the order of
  ``ppmlib.models.families.normal_sufficient_statistics`` (row groups hold whole blocks), so
  the numbers are the in-memory ones, bit for bit;
* :func:`risk_range`: the smallest and largest max_s abs(f_s(x_i)) under the unweighted fit's draws,
  the min-max scale of LW's risks;
* :func:`lw_delta`: Delta = max_i alpha_i max_s abs(f_s(x_i)) under the weighted fit's draws.

LW's weight of a record is recomputed in each job from the unweighted draws and the global
range (alpha_i = clip(c (1 - r_i) + g, 0, 1), as :func:`ppmlib.lw_weights`), so no n-vector
crosses the network. Maxima do not depend on the order of the partitions; sums are added in block
order. The columns are read as they are: ``y`` the modelled values (log income, say) and ``x``
the design matrix's columns.
"""
from __future__ import annotations

__all__ = ["Part", "row_groups", "sufficient_statistics", "risk_range", "lw_delta"]

from dataclasses import dataclass

import numpy as np

from ppmlib.errors import BadArgument
from ppmlib.models.families import Normal, normal_sufficient_statistics

#: Records per block of the sufficient statistics (as ``normal_sufficient_statistics``).
BLOCK = 65536


@dataclass(frozen=True)
class Part:
    """One row group of a Parquet file: records ``start`` to ``stop - 1`` of the whole file.

    Attributes
    ----------
    path : str
        The file, at a path every worker can read.
    index : int
        The row group's number.
    start, stop : int
        Its records' positions in the file.
    """
    path: str
    index: int
    start: int
    stop: int


def row_groups(path, block: int = BLOCK) -> list:
    """The partitions of a Parquet file: its row groups, each a whole number of blocks but the last.

    Parameters
    ----------
    path : str or PathLike
        A Parquet file (write it with ``row_group_size`` a multiple of ``block``).
    block : int
        Records per block of the sums.

    Returns
    -------
    list of Part

    Raises
    ------
    BadArgument
        A row group other than the last does not hold a multiple of ``block`` records (its sums
        would not be the in-memory ones).
    """
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    parts, start = [], 0
    for i in range(meta.num_row_groups):
        rows = meta.row_group(i).num_rows
        if i < meta.num_row_groups - 1 and rows % block:
            raise BadArgument(f"row group {i} of {str(path)!r} holds {rows} records, not a multiple of {block}; "
                              f"write the file with row_group_size a multiple of {block}")
        parts.append(Part(str(path), i, start, start + rows))
        start += rows
    return parts


def _read(part: Part, y: str, x) -> tuple:
    import pyarrow.parquet as pq

    table = pq.ParquetFile(part.path).read_row_group(part.index, columns=[y, *x])
    values = table.column(y).to_numpy().astype(float)
    design = np.column_stack([table.column(c).to_numpy().astype(float) for c in x])
    return values, design


def _f(draws: dict, values, design) -> np.ndarray:
    """max_s abs(f_s(x_i)) of this partition's records, shape (rows,)."""
    return np.abs(Normal().log_lik(draws, values, design)).max(axis=0)


def _weights(spec, values, design) -> np.ndarray:
    """alpha of this partition's records: 1, or LW's from the unweighted draws and the global range."""
    if spec is None:
        return np.ones(values.size)
    draws, c, g, low, high = spec
    f = _f(draws, values, design)
    risk = np.zeros_like(f) if high == low else (f - low) / (high - low)
    alpha = np.clip(c * (1.0 - risk) + g, 0.0, 1.0)
    alpha[~np.isfinite(f)] = 0.0
    return alpha


def _sums_job(item) -> list:
    part, y, x, spec, block = item
    values, design = _read(part, y, x)
    alpha = _weights(spec, values, design)
    return [normal_sufficient_statistics(values[s:s + block], design[s:s + block], alpha[s:s + block], block)
            for s in range(0, values.size, block)]


def _range_job(item) -> tuple:
    part, y, x, draws = item
    f = _f(draws, *_read(part, y, x))
    f = f[np.isfinite(f)]
    return (float(f.min()), float(f.max())) if f.size else (np.inf, -np.inf)


def _delta_job(item) -> float:
    part, y, x, spec, draws = item
    values, design = _read(part, y, x)
    alpha = _weights(spec, values, design)
    bounds = alpha * _f(draws, values, design)
    return float(np.max(bounds, initial=0.0, where=alpha > 0))


def _jobs(fn, items, client, n_jobs: int) -> list:
    from ppmlib.inference.parallel import map_jobs
    return map_jobs(fn, items, client=client, n_jobs=n_jobs, progress=False)


def _lw_spec(unweighted: dict | None, c: float, g: float, risk: tuple | None):
    if unweighted is None:
        return None
    if risk is None:
        raise BadArgument("LW weights need the risk range of the unweighted draws (risk_range)")
    return (unweighted, float(c), float(g), *risk)


def sufficient_statistics(parts, y: str, x, *, unweighted: dict | None = None, c: float = 1.0, g: float = 0.0,
                          risk: tuple | None = None, block: int = BLOCK, client=None, n_jobs: int = 1) -> dict:
    """The alpha-weighted sufficient statistics of the normal regression over every partition.

    Parameters
    ----------
    parts : list of Part
        The partitions (:func:`row_groups`).
    y : str
        The column of modelled values.
    x : sequence of str
        The design matrix's columns.
    unweighted : dict, optional
        Draws of the unweighted fit (``beta`` (S, K), ``sigma`` (S,)): the weights are then LW's
        at scale ``c`` and shift ``g``; default alpha = 1.
    c, g : float
        LW's scale and shift.
    risk : (float, float), optional
        :func:`risk_range` of ``unweighted`` (required with it).
    block : int
        Records per block.
    client : str or distributed.Client, optional
        Where the jobs run (default: this process, or ``n_jobs`` local workers).
    n_jobs : int
        Local worker processes when no client is given.

    Returns
    -------
    dict
        ``sum_w``, ``XWX`` (K, K), ``XWy`` (K,), ``yWy``: those of
        ``ppmlib.models.families.normal_sufficient_statistics`` on the whole file, bit for bit.
    """
    spec = _lw_spec(unweighted, c, g, risk)
    per_part = _jobs(_sums_job, [(p, y, tuple(x), spec, block) for p in parts], client, n_jobs)
    K = len(tuple(x))
    out = {"sum_w": 0.0, "XWX": np.zeros((K, K)), "XWy": np.zeros(K), "yWy": 0.0}
    for sums in (s for blocks in per_part for s in blocks):   # block order, as in memory
        out["XWX"] += sums["XWX"]
        out["XWy"] += sums["XWy"]
        out["yWy"] += sums["yWy"]
        out["sum_w"] += sums["sum_w"]
    return out


def risk_range(parts, y: str, x, draws: dict, *, client=None, n_jobs: int = 1) -> tuple:
    """The smallest and largest finite max_s abs(f_s(x_i)) over every record: LW's min-max scale.

    Parameters
    ----------
    parts, y, x, client, n_jobs : as for :func:`sufficient_statistics`.
    draws : dict
        Draws of the unweighted fit (``beta`` (S, K), ``sigma`` (S,)).

    Returns
    -------
    (float, float)
    """
    found = _jobs(_range_job, [(p, y, tuple(x), draws) for p in parts], client, n_jobs)
    return min(lo for lo, _ in found), max(hi for _, hi in found)


def lw_delta(parts, y: str, x, draws: dict, *, unweighted: dict | None = None, c: float = 1.0, g: float = 0.0,
             risk: tuple | None = None, client=None, n_jobs: int = 1) -> float:
    """Delta = max_i alpha_i max_s abs(f_s(x_i)) under the weighted fit's ``draws``, over every record.

    Parameters
    ----------
    parts, y, x, unweighted, c, g, risk, client, n_jobs : as for :func:`sufficient_statistics`.
    draws : dict
        Draws of the alpha-weighted fit (``beta`` (S, K), ``sigma`` (S,)).

    Returns
    -------
    float
        The largest record bound (records of weight 0 contribute nothing).
    """
    spec = _lw_spec(unweighted, c, g, risk)
    return max(_jobs(_delta_job, [(p, y, tuple(x), spec, draws) for p in parts], client, n_jobs))
