"""The command on a Dask cluster: a Parquet file synthesized over its row groups (``--dask ADDRESS``).

:func:`read` checks the file (a :class:`Parts`, the data object of a cluster run) and
:func:`synthesize` runs it, with ``client=`` a scheduler address or a ``distributed.Client``
(:func:`ppmlib.release.command.synthesize` comes here with a :class:`Parts`). Only the normal
model of log(column) under the local guarantee (LW, at a scale c or calibrated to a target
epsilon) goes this way: its fits need only sums (:mod:`ppmlib.mechanism.partitioned_lw`), so no
record leaves the workers. What runs where:

* workers, one job per row group of the input: the checks of every value and the predictors'
  standardization, the sufficient statistics, LW's risk range, weights and Delta, the PSIS sums of
  the calibration, and the synthesis, which writes that row group's part of the release;
* the client: the Stan fits from the reduced sums, the choice of c, the manifest (written by
  :func:`ppmlib.release.release`, the one writer, for a :class:`ppmlib.mechanism.partitioned_lw.WrittenParts`), the publication.

The release is ``synthetic.part-00000.parquet`` ... (one file per input row group, each holding the
m datasets of its records with a ``dataset`` column, one Parquet row group per dataset) and the
manifest ``synthetic.json`` listing every file's SHA-256. Synthetic values are seeded per (dataset,
row group), so they do not depend on the number of workers. Everything is written in the staging
folder beside ``--out`` (on storage every worker can write) and published by one rename.

The confidential report is not written: it needs every record in one process, and the client
holds none.
"""
from __future__ import annotations

__all__ = ["NO_REPORT", "ClusterRun", "Parts", "read", "refuse", "design", "synthesize_parts", "run", "synthesize"]

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ppmlib.errors import BadArgument, BudgetExceeded, DataRefused
from ppmlib.mechanism import partitioned
from ppmlib.release import tables

#: The line the command prints and the manifest records instead of the report.
NO_REPORT = ("report: not written with a Dask client (it needs every record in one process; the client holds "
             "only sums)")


@dataclass(frozen=True)
class ClusterRun(Mapping):
    """What :func:`run` made: the synthesizers by name (a read-only mapping), and what was released.

    Attributes
    ----------
    results : ppmlib.mechanism.lineup.Results
        "Unweighted" and "LW" (:class:`ppmlib.mechanism.partitioned_lw.PartitionedFit`).
    columns : ppmlib.release.tables.Columns
        What the release carries.
    n, m : int
        The records and the synthetic datasets.
    verdict : dict
        The diagnostics gate's verdict (:func:`ppmlib.release.gate.diagnostics_verdict`).
    files : list of dict
        The manifest's list of files (empty: nothing written).
    seconds : dict
        Each stage's wall time.
    delta : float
        The release's delta for the zCDP ledger.
    released, guarantee : str
        The member released ("LW") and the guarantee ("local"): the only ones a cluster run makes.
    out, report : pathlib.Path or None
        The release folder (None: not written) and the report (always None: see :data:`NO_REPORT`).
    """
    results: Mapping
    columns: object
    n: int
    m: int
    verdict: dict
    files: list
    seconds: dict
    delta: float
    released: str = "LW"
    guarantee: str = "local"
    out: Path | None = None
    report: None = None

    def __getitem__(self, name):
        return self.results[name]

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


@dataclass(frozen=True)
class Parts:
    """A Parquet file to synthesize over its row groups: the data object of a cluster run (nothing is read
    into memory but the file's schema and metadata).

    Attributes
    ----------
    path : pathlib.Path
        The Parquet file, at a path every worker can read.
    column : str
        The synthesized column (log scale, the normal model).
    predictors : tuple of str
        Numeric predictors.
    columns : ppmlib.release.tables.Columns
        The synthesized, kept and dropped columns of the release.
    n : int
        Records (the file's metadata).
    inputs : tuple of pathlib.Path
        The files read, which a release may never replace.
    format : str
        "parquet": one file per row group.
    """
    path: Path
    column: str
    predictors: tuple
    columns: object
    n: int
    inputs: tuple
    format: str = "parquet"


def read(data, column: str, *, predictors=(), keep=(), model: str = "auto", drop_missing: bool = False,
         format: str | None = None) -> Parts:
    """A Parquet file checked for a run over its row groups (:func:`synthesize`): its columns, not its records.

    Parameters
    ----------
    data : str or PathLike
        The Parquet file, at a path every worker can read.
    column : str
        The synthesized column.
    predictors, keep : sequence of str or str
        Numeric predictors, and columns declared public ("A,B" or a list).
    model : str
        "normal" or "auto" (the only model whose fits need only sums).
    drop_missing : bool
        Must be False: records are not dropped over partitions.
    format : str, optional
        None or "parquet".

    Returns
    -------
    Parts

    Raises
    ------
    BadArgument
        A model other than normal, drop_missing, a CSV release, data that is not a Parquet file, or
        the column among its predictors.
    """
    import pyarrow.parquet as pq

    from ppmlib.release import data as _data
    if model not in ("auto", "normal"):
        raise BadArgument(f"client= fits the normal model only (its fits need only sums); got model={model!r}, "
                          "pass model='normal'")
    if drop_missing:
        raise BadArgument("client= does not drop records (drop_missing=True): write the file without missing values")
    if format == "csv":
        raise BadArgument("client= writes Parquet, one file per row group of the input; drop format='csv'")
    if hasattr(data, "columns") or not isinstance(data, (str, os.PathLike)) or \
            Path(data).suffix.lower() != ".parquet" or not Path(data).is_file():
        shown = type(data).__name__ if hasattr(data, "columns") else repr(str(data))
        raise BadArgument(f"client= needs a Parquet file (.parquet) at a path every worker can read; got {shown}")
    if isinstance(predictors, str):
        predictors = [p for p in predictors.split(",") if p]
    predictors = tuple(predictors)
    columns = _data._release_columns(data, None, column, predictors, keep, None)
    _data._check_dataset_column(columns, "parquet")
    if column in predictors:
        raise BadArgument(f"column {column!r} is also among the predictors; a variable cannot predict itself")
    return Parts(Path(data), column, predictors, columns, pq.read_metadata(data).num_rows, _data.inputs_of(data))


def refuse(plan, report) -> None:
    """A clear error for a plan or a report that cannot go over partitions.

    Parameters
    ----------
    plan : ppmlib.release.plan.Plan
        The privacy plan.
    report : bool, str, PathLike or None
        As given to :func:`synthesize` (a path is refused: no report is written).

    Raises
    ------
    BadArgument
        The "nss-bins" scheme, the strict guarantee, a member other than LW, or a report path.
    """
    if plan.bins is not None:
        raise BadArgument("the strict guarantee's default scheme, strict_scheme='nss-bins', needs every record in one "
                          "process: it cannot run with client= (give guarantee='local')")
    if plan.guarantee != "local":
        raise BadArgument("client= runs the local guarantee only: the strict guarantee's censored fit clips each "
                          "record's own log-likelihood term, so Stan needs every record in one process and cannot "
                          "fit from sums; pass guarantee='local' (each dataset epsilon = 2 Delta for this file)")
    if plan.released != "LW":
        raise BadArgument(f"client= releases LW (at a scale c, or calibrated with epsilon=); the plan releases "
                          f"{plan.released}, which does not run over partitions (weighting='lw')")
    if report not in (None, False, True):
        raise BadArgument(f"client= writes no report ({NO_REPORT.split(': ', 1)[1]}); drop report=")


def _numeric_predictors(path: Path, column: str, predictors: tuple) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    for name in (column, *predictors):
        kind = schema.field(name).type
        if pa.types.is_boolean(kind) or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            role = "column" if name == column else "predictor"
            raise DataRefused(f"{role} {name!r} is {kind}, not a number; over partitions the design takes numeric "
                              "columns only (encode a categorical predictor as 0/1 columns before writing the file)")


def design(path: Path, column: str, predictors: tuple, *, client=None, n_jobs: int = 1) -> tuple:
    """The partitions of the file and the design every job builds (log(column); an intercept and
    each numeric predictor standardized by its mean and standard deviation over the whole file).

    Parameters
    ----------
    path : pathlib.Path
        The Parquet file.
    column : str
        The synthesized column.
    predictors : tuple of str
        Numeric predictors.
    client, n_jobs : where the jobs run.

    Returns
    -------
    (list of ppmlib.mechanism.partitioned.Part, ppmlib.mechanism.partitioned.Design)

    Raises
    ------
    DataRefused
        A non-numeric column, missing or non-positive values, a constant predictor, too few records.
    """
    from ppmlib.release.data import _too_few, minimum_records
    _numeric_predictors(path, column, predictors)
    parts = partitioned.row_groups(path)
    found = partitioned.summary(parts, column, predictors, positive=True, client=client, n_jobs=n_jobs)
    need = minimum_records("normal", 1 + len(predictors))
    if found["n"] < need:
        raise _too_few(found["n"], 0, "normal", 1 + len(predictors), need)
    return parts, partitioned.Design(column, predictors, log=True, intercept=True, centre=found["centre"],
                                     scale=found["scale"])


def _write_part(item) -> dict:
    """One row group's m synthetic datasets as one Parquet file in the staging folder (a job)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    part, layout, order, beta, sigma, seed, folder = item
    table = pq.ParquetFile(part.path).read_row_group(part.index, columns=sorted(set(order) | set(layout.columns)))
    _, X = layout.build(table)
    path = Path(folder) / tables.part_file(part.index)
    writer = None
    try:
        for l in range(beta.shape[0]):
            rng = np.random.default_rng(np.random.SeedSequence([seed, l, part.index]))
            values = np.exp(rng.normal(X @ beta[l], sigma[l]))
            columns = {tables.DATASET: pa.array(np.full(values.size, l + 1, dtype=np.int64))}
            columns.update({c: pa.array(values) if c == layout.column else table.column(c) for c in order})
            chunk = pa.table(columns)
            if writer is None:
                writer = pq.ParquetWriter(path, chunk.schema)
            writer.write_table(chunk)
    finally:
        if writer is not None:
            writer.close()
    return {"file": path.name, "datasets": f"1-{beta.shape[0]}", "records": f"{part.start}-{part.stop - 1}",
            "sha256": tables.file_sha256(path, sync=True)}


def synthesize_parts(parts, layout, released, m: int, seed: int, order: tuple, folder, *, client=None,
                     n_jobs: int = 1) -> list:
    """Every row group's m synthetic datasets, written by the jobs into ``folder``.

    Dataset l uses the l-th of m draws evenly spaced over the fit (``ppmlib.inference.posterior.spaced_draws``);
    the values of row group r in dataset l come from ``SeedSequence([seed, l, r])``, so they do not
    depend on which worker ran the job.

    Parameters
    ----------
    parts : list of ppmlib.mechanism.partitioned.Part
    layout : ppmlib.mechanism.partitioned.Design
    released : ppmlib.mechanism.partitioned_lw.PartitionedFit
        The synthesizer released.
    m : int
        Synthetic datasets.
    seed : int
        The synthesis seed.
    order : tuple of str
        The release's columns in order (the synthesized one among them).
    folder : str or PathLike
        The staging folder's release folder (every worker writes there).
    client, n_jobs : where the jobs run.

    Returns
    -------
    list of dict
        The manifest's ``files``, in row-group order.
    """
    from ppmlib.inference.posterior import spaced_draws
    chosen = spaced_draws(released.fit.n_draws, m)
    beta, sigma = released.fit.draws["beta"][chosen], released.fit.draws["sigma"][chosen]
    items = [(p, layout, tuple(order), beta, sigma, int(seed), str(folder)) for p in parts]
    return partitioned.jobs(_write_part, items, client, n_jobs)


def run(table: Parts, *, epsilon, m: int, seed: int, sampler, budget, delta: float, staging, client,
        allow_failed_fits: bool, progress: bool):
    """The whole cluster run: design, fits, synthesis into ``staging``, then the pipeline's last step
    (:func:`ppmlib.release.pipeline.write`: the manifest by the one writer, the publication).

    Parameters
    ----------
    table : Parts
        The Parquet file, its column, numeric predictors and what the release carries (:func:`read`).
    epsilon : float or None
        The target epsilon per dataset; None: LW at c = 1.
    m, seed, sampler, budget, delta, allow_failed_fits, progress
        As for :func:`ppmlib.release.command.synthesize`.
    staging : ppmlib.release.staging.Staging or None
        Where the release is written (None: nothing is written).
    client : str or distributed.Client or None
        The cluster (an address must answer within ``ppmlib.inference.parallel.CONNECT_TIMEOUT``
        seconds); None runs the same jobs one after another in this process (the same numbers).

    Returns
    -------
    ClusterRun
        "Unweighted" and "LW" by name, the verdict, the columns, n, m, each stage's wall time and the
        manifest's list of files (``out`` is None: :func:`synthesize` sets it).
    """
    import contextlib

    from ppmlib.inference import parallel
    from ppmlib.mechanism import lineup as _lineup
    from ppmlib.mechanism.partitioned_lw import WrittenParts, lw
    from ppmlib.release import gate, pipeline

    with (parallel.connected(client, parallel.CONNECT_TIMEOUT) if client is not None
          else contextlib.nullcontext()) as dask_client:
        start = time.perf_counter()
        parts, layout = design(table.path, table.column, table.predictors, client=dask_client)
        checked = time.perf_counter() - start
        found = lw(parts, layout, epsilon=epsilon, sampler=sampler, seed=seed, client=dask_client, progress=progress)
        results = _lineup.Results([("Unweighted", found["Unweighted"]), ("LW", found["LW"])])
        seconds = {"checks and standardization": checked, **found["seconds"]}
        released = found["LW"]
        if budget is not None and m * released.epsilon > budget:
            raise BudgetExceeded(f"release refused: {m} datasets at epsilon = {released.epsilon:.4g} each cost "
                                 f"m * epsilon = {m * released.epsilon:.4g} > budget = {budget:g}. Nothing was written.")
        verdict = gate.check(results, allow_failed_fits) if staging is not None else \
            gate.diagnostics_verdict(results)
        files = []
        if staging is not None:
            start = time.perf_counter()
            files = synthesize_parts(parts, layout, released, m, found["synthesis_seed"], table.columns.order,
                                     staging.release, client=dask_client)
            seconds["synthesis and writing"] = time.perf_counter() - start
            # no report: it needs every record in one process (NO_REPORT says so in the manifest)
            pipeline.write(staging, WrittenParts(released, m, found["n"], files), table, verdict, budget=budget,
                           delta=delta, extra={"report": NO_REPORT,
                                               "run": "over the row groups of a Parquet file (Dask), from sums"})
    return ClusterRun(results, table.columns, found["n"], m, verdict, files, seconds, delta)


def synthesize(parts: Parts, plan, *, sampler, seed: int = 0, out=None, report=None, overwrite: bool = False,
               allow_failed_fits: bool = False, progress: bool = True, client=None) -> ClusterRun:
    """A run over the row groups of a Parquet file (:func:`read`), on a Dask cluster or serially: checks, then :func:`run`.

    Parameters
    ----------
    parts : Parts
        The Parquet file (:func:`read`).
    plan : ppmlib.release.plan.Plan
        The local guarantee's plan, releasing LW (calibrated to its epsilon when one is given).
    sampler, seed, out, report, overwrite, allow_failed_fits, progress
        As for :func:`ppmlib.release.pipeline.synthesize` (``report`` True or None: no report is written).
    client : str or distributed.Client, optional
        The cluster; None runs the same jobs one after another in this process.

    Returns
    -------
    ClusterRun
        As :func:`run` returns it, with ``out`` the release folder.
    """
    from ppmlib.release import pipeline
    from ppmlib.release.gate import check_draws
    from ppmlib.release.plan import check_delta
    refuse(plan, report)
    check_draws(sampler, plan.m)
    check_delta(plan.delta, max(parts.n, 1))
    out, _ = pipeline.targets(out, False, overwrite, parts.inputs)
    with pipeline.staged(out, None, overwrite, parts.inputs) as staging:
        results = run(parts, epsilon=plan.epsilon, m=plan.m, seed=seed, sampler=sampler, budget=plan.budget,
                      delta=plan.delta, staging=staging, client=client, allow_failed_fits=allow_failed_fits,
                      progress=progress)
    return replace(results, out=out)
