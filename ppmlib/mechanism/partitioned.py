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
* :func:`lw_delta`: Delta = max_i alpha_i max_s abs(f_s(x_i)) under the weighted fit's draws;
* :func:`summary`: the record count and each predictor's mean and standard deviation (the
  standardization of the design), after checking every value;
* :func:`calibration_sums`: for each candidate scale c and draw s of a fit, the PSIS log ratio
  sum_i (alpha_i(c) - alpha0_i) f_s(x_i) and the maximum max_i alpha_i(c) abs(f_s(x_i)), which
  :func:`ppmlib.mechanism.calibration.predictions` turns into predicted Deltas.

LW's weight of a record is recomputed in each job from the unweighted draws and the global
range (alpha_i = clip(c (1 - r_i) + g, 0, 1), as :func:`ppmlib.lw_weights`), so no n-vector
crosses the network. Maxima do not depend on the order of the partitions; sums are added in block
order. The columns are read as they are: ``y`` the modelled values (log income, say) and ``x``
the design matrix's columns, or as a :class:`ppmlib.mechanism.partitioned.Design` says (log of the column, standardized
predictors, an intercept). A job holds one row group and about 2**21 log-likelihood values at a
time (rows in chunks of 2**16 / S), whatever S and the row group's size.
"""
from __future__ import annotations

__all__ = ["Part", "Design", "jobs", "row_groups", "summary", "sufficient_statistics", "risk_range", "lw_delta",
           "calibration_sums"]

from dataclasses import dataclass

import numpy as np

from ppmlib.errors import BadArgument, DataRefused
from ppmlib.mechanism.weights import lw_from_bounds
from ppmlib.models.families import Normal, normal_sufficient_statistics

#: Records per block of the sufficient statistics (as ``normal_sufficient_statistics``).
BLOCK = 65536
#: About how many log-likelihood values (draws x rows) a job holds at once: 512 kB, which stay in cache
#: (larger chunks measured several times slower).
MAX_ELEMENTS = 2**16


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


@dataclass(frozen=True)
class Design:
    """How a row group's columns become the modelled values y and the design matrix X.

    Attributes
    ----------
    column : str
        The modelled column: y is its values, or their logarithm with ``log``.
    predictors : tuple of str
        Numeric columns of X, in order.
    log : bool
        y = log(column); every value must then be finite and positive.
    intercept : bool
        X starts with a column of ones.
    centre, scale : tuple of float, optional
        Each predictor enters as (value - centre) / scale (:func:`summary` gives them); default as it is.
    """
    column: str
    predictors: tuple = ()
    log: bool = False
    intercept: bool = False
    centre: tuple | None = None
    scale: tuple | None = None

    @property
    def columns(self) -> list:
        """The columns a job reads.

        Returns
        -------
        list of str
        """
        return [self.column, *self.predictors]

    def build(self, table) -> tuple:
        """y (rows,) and X (rows, K) of a row group read as a pyarrow Table.

        Parameters
        ----------
        table : pyarrow.Table
            The row group's :attr:`columns`.

        Returns
        -------
        (ndarray, ndarray)
        """
        values = table.column(self.column).to_numpy(zero_copy_only=False).astype(float)
        if self.log:
            values = np.log(values)
        columns = [np.ones(values.size)] if self.intercept else []
        for j, name in enumerate(self.predictors):
            x = table.column(name).to_numpy(zero_copy_only=False).astype(float)
            if self.centre is not None:
                x = (x - self.centre[j]) / self.scale[j]
            columns.append(x)
        return values, np.column_stack(columns) if columns else np.zeros((values.size, 0))


def _design(y, x) -> Design:
    """A :class:`Design` as given, or the plain one of columns ``y`` and ``x`` read as they are."""
    return y if isinstance(y, Design) else Design(y, tuple(x))


def _read(part: Part, design: Design) -> tuple:
    import pyarrow.parquet as pq

    return design.build(pq.ParquetFile(part.path).read_row_group(part.index, columns=design.columns))


def _chunks(rows: int, draws: int):
    """Slices of about MAX_ELEMENTS / draws rows covering ``rows``; never a last chunk of one row (a
    one-row product takes another BLAS path, whose last bits can differ from the in-memory ones)."""
    step = max(2, MAX_ELEMENTS // max(1, draws))
    starts = list(range(0, rows, step))
    if len(starts) > 1 and rows - starts[-1] == 1:
        starts.pop()
    return [slice(a, b) for a, b in zip(starts, starts[1:] + [rows])]


def _f(draws: dict, values, design) -> np.ndarray:
    """max_s abs(f_s(x_i)) of this partition's records, shape (rows,), in chunks of rows."""
    S = draws["sigma"].shape[0]
    out = np.empty(values.size)
    for rows in _chunks(values.size, S):
        out[rows] = np.abs(Normal().log_lik(draws, values[rows], design[rows])).max(axis=0)
    return out


def _weights(spec, values, design) -> np.ndarray:
    """alpha of this partition's records: 1, or LW's from the unweighted draws and the global range."""
    if spec is None:
        return np.ones(values.size)
    draws, c, g, low, high = spec
    return lw_from_bounds(_f(draws, values, design), c, g, low, high)


def _sums_job(item) -> list:
    part, layout, spec, block = item
    values, design = _read(part, layout)
    alpha = _weights(spec, values, design)
    return [normal_sufficient_statistics(values[s:s + block], design[s:s + block], alpha[s:s + block], block)
            for s in range(0, values.size, block)]


def _range_job(item) -> tuple:
    part, layout, draws = item
    f = _f(draws, *_read(part, layout))
    f = f[np.isfinite(f)]
    return (float(f.min()), float(f.max())) if f.size else (np.inf, -np.inf)


def _delta_job(item) -> float:
    part, layout, spec, draws = item
    values, design = _read(part, layout)
    alpha = _weights(spec, values, design)
    bounds = alpha * _f(draws, values, design)
    return float(np.max(bounds, initial=0.0, where=alpha > 0))


def _one_thread(fn, item):
    """``fn(item)`` with BLAS on one thread: a job's products are small (chunks of 2**16 values),
    and a BLAS thread pool per job on a busy machine made them several times slower."""
    from ppmlib.inference.posterior import one_blas_thread
    with one_blas_thread():
        return fn(item)


def jobs(fn, items, client=None, n_jobs: int = 1) -> list:
    """One job per item, each with BLAS on one thread (:func:`ppmlib.inference.parallel.map_jobs`).

    Parameters
    ----------
    fn : callable
        A module-level function of one item.
    items : sequence
        The jobs' inputs, one per partition.
    client : str or distributed.Client, optional
        Where the jobs run.
    n_jobs : int
        Local worker processes when no client is given.

    Returns
    -------
    list
        ``fn(item)`` for each item, in order.
    """
    from functools import partial

    from ppmlib.inference.parallel import map_jobs
    return map_jobs(partial(_one_thread, fn), items, client=client, n_jobs=n_jobs, progress=False)


def _lw_spec(unweighted: dict | None, c: float, g: float, risk: tuple | None):
    if unweighted is None:
        return None
    if risk is None:
        raise BadArgument("LW weights need the risk range of the unweighted draws (risk_range)")
    return (unweighted, float(c), float(g), *risk)


def sufficient_statistics(parts, y, x=(), *, unweighted: dict | None = None, c: float = 1.0, g: float = 0.0,
                          risk: tuple | None = None, block: int = BLOCK, client=None, n_jobs: int = 1) -> dict:
    """The alpha-weighted sufficient statistics of the normal regression over every partition.

    Parameters
    ----------
    parts : list of Part
        The partitions (:func:`row_groups`).
    y : str or ppmlib.mechanism.partitioned.Design
        The column of modelled values, or the :class:`ppmlib.mechanism.partitioned.Design` that builds y and X (``x`` unused).
    x : sequence of str
        The design matrix's columns, read as they are.
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
    layout = _design(y, x)
    per_part = jobs(_sums_job, [(p, layout, spec, block) for p in parts], client, n_jobs)
    K = int(layout.intercept) + len(layout.predictors)
    out = {"sum_w": 0.0, "XWX": np.zeros((K, K)), "XWy": np.zeros(K), "yWy": 0.0}
    for sums in (s for blocks in per_part for s in blocks):   # block order, as in memory
        out["XWX"] += sums["XWX"]
        out["XWy"] += sums["XWy"]
        out["yWy"] += sums["yWy"]
        out["sum_w"] += sums["sum_w"]
    return out


def risk_range(parts, y, x, draws: dict, *, client=None, n_jobs: int = 1) -> tuple:
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
    found = jobs(_range_job, [(p, _design(y, x), draws) for p in parts], client, n_jobs)
    return min(lo for lo, _ in found), max(hi for _, hi in found)


def lw_delta(parts, y, x, draws: dict, *, unweighted: dict | None = None, c: float = 1.0, g: float = 0.0,
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
    return max(jobs(_delta_job, [(p, _design(y, x), spec, draws) for p in parts], client, n_jobs))


# ---------------------------------------------------------------------------------------------
# the design's standardization, and the checks of every value
# ---------------------------------------------------------------------------------------------

def _numbers(table, name: str) -> np.ndarray:
    import pyarrow as pa
    return table.column(name).cast(pa.float64()).fill_null(np.nan).to_numpy()


def _summary_job(item) -> tuple:
    part, column, predictors, positive = item
    import pyarrow.parquet as pq
    table = pq.ParquetFile(part.path).read_row_group(part.index, columns=[column, *predictors])
    values = _numbers(table, column)
    refused = int((~np.isfinite(values) | (values <= 0 if positive else False)).sum())
    moments = []
    for name in predictors:
        x = _numbers(table, name)
        finite = np.isfinite(x)
        mean = float(x.mean()) if x.size else 0.0
        moments.append((int((~finite).sum()), x.size, mean, float(((x - mean) ** 2).sum())))
    return refused, moments


def summary(parts, column: str, predictors=(), *, positive: bool = False, client=None, n_jobs: int = 1) -> dict:
    """Every value checked, and the predictors' means and standard deviations, over every partition.

    Parameters
    ----------
    parts : list of Part
        The partitions (:func:`row_groups`).
    column : str
        The modelled column.
    predictors : sequence of str
        Numeric predictors.
    positive : bool
        The column's values must be positive (a log model).
    client, n_jobs : as for :func:`sufficient_statistics`.

    Returns
    -------
    dict
        ``n`` (records), ``centre`` and ``scale`` (tuples: each predictor's mean and standard
        deviation, ddof 0, merged partition by partition in order).

    Raises
    ------
    DataRefused
        Missing or non-finite values (or values <= 0 with ``positive``), counted, never shown; a
        constant predictor.
    """
    predictors = tuple(predictors)
    found = jobs(_summary_job, [(p, column, predictors, positive) for p in parts], client, n_jobs)
    n = sum(p.stop - p.start for p in parts)
    refused = sum(r for r, _ in found)
    if refused:
        need = "finite positive values (the model synthesizes its logarithm)" if positive else "finite values"
        raise DataRefused(f"{refused} of {n} records of column {column!r} are missing, infinite or out of range; the "
                          f"model needs {need}")
    centre, scale = [], []
    for j, name in enumerate(predictors):
        missing = sum(moments[j][0] for _, moments in found)
        if missing:
            raise DataRefused(f"{missing} of {n} records have no finite value of predictor {name!r}; drop or impute "
                              "them before writing the file")
        count, mean, m2 = 0, 0.0, 0.0
        for _, moments in found:   # Chan et al.'s pairwise update, partition by partition in order
            _, k, part_mean, part_m2 = moments[j]
            if k == 0:
                continue
            gap, total = part_mean - mean, count + k
            mean, m2, count = mean + gap * k / total, m2 + part_m2 + gap * gap * count * k / total, total
        sd = float(np.sqrt(m2 / count)) if count else 0.0
        if not sd > 0:
            raise DataRefused(f"numeric predictor {name!r} is constant; it cannot be standardized or explain anything")
        centre.append(mean), scale.append(sd)
    return {"n": n, "centre": tuple(centre), "scale": tuple(scale)}


# ---------------------------------------------------------------------------------------------
# the sums of the PSIS calibration
# ---------------------------------------------------------------------------------------------

def _calibration_job(item) -> tuple:
    from ppmlib.mechanism.calibration import _weighted_block_max
    part, layout, (unweighted, g, low, high), c_grid, c0, proposal = item
    values, design = _read(part, layout)
    scales = np.asarray(c_grid, dtype=float)[:, None]
    S = (unweighted if proposal is None else proposal)["sigma"].shape[0]
    log_ratio, top = np.zeros((scales.size, S)), np.zeros((scales.size, S))
    for rows in _chunks(values.size, S):
        plain = Normal().log_lik(unweighted, values[rows], design[rows])
        f = np.abs(plain).max(axis=0)
        alphas = lw_from_bounds(f, scales, g, low, high)
        alpha0 = np.ones(f.size) if c0 is None else lw_from_bounds(f, float(c0), g, low, high)
        lp = plain if proposal is None else Normal().log_lik(proposal, values[rows], design[rows])
        with np.errstate(invalid="ignore"):
            log_ratio += (alphas - alpha0) @ lp.T
        np.maximum(top, _weighted_block_max(np.abs(lp), alphas), out=top)
    return log_ratio, top


def calibration_sums(parts, y, x, unweighted: dict, c_grid, *, risk: tuple, g: float = 0.0, c0: float | None = None,
                     proposal: dict | None = None, client=None, n_jobs: int = 1) -> tuple:
    """The per-draw sums that predict Delta at each scale of ``c_grid`` from a fit's draws, over every partition.

    For a proposal fit with weights alpha0 (1, or LW's at ``c0``) and draws theta_s, and each
    candidate c: log_ratio[c, s] = sum_i (alpha_i(c) - alpha0_i) f_s(x_i) (summed over partitions in
    order) and top[c, s] = max_i alpha_i(c) abs(f_s(x_i)) (the maximum over partitions), as
    :func:`ppmlib.mechanism.calibration.predict_delta` computes them in memory.

    Parameters
    ----------
    parts, y, x, client, n_jobs : as for :func:`sufficient_statistics`.
    unweighted : dict
        Draws of the unweighted fit (LW's risks come from them).
    c_grid : array_like, shape (C,)
        The candidate scales.
    risk : (float, float)
        :func:`risk_range` of ``unweighted``.
    g : float
        LW's shift.
    c0 : float, optional
        The proposal's own scale; None: the proposal is the unweighted fit (alpha0 = 1).
    proposal : dict, optional
        The proposal's draws (``beta`` (S, K), ``sigma`` (S,)); None: ``unweighted``.

    Returns
    -------
    (ndarray, ndarray)
        log_ratio and top, each of shape (C, S): the input of
        :func:`ppmlib.mechanism.calibration.predictions`.
    """
    spec = (unweighted, float(g), *risk)
    found = jobs(_calibration_job, [(p, _design(y, x), spec, tuple(np.asarray(c_grid, float)), c0, proposal)
                                     for p in parts], client, n_jobs)
    log_ratio = found[0][0].copy()
    top = found[0][1].copy()
    for part_ratio, part_top in found[1:]:
        log_ratio += part_ratio
        np.maximum(top, part_top, out=top)
    return log_ratio, top
