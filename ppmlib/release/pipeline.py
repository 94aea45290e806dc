"""One pipeline from a checked data object and a privacy plan to a release and its report.

:func:`synthesize` takes a :class:`ppmlib.release.data.Table` (the user's data, read and checked,
with the release's columns) and a :class:`ppmlib.release.plan.Plan` (the lineup, the released
member, epsilon, m, delta, the budget): it checks the rest before any fit (the draws, ``out`` and
the report's path, delta against n, the memory), runs the lineup, passes the diagnostics gate
(:mod:`ppmlib.release.gate`), and with ``out`` writes the release (:func:`ppmlib.release.release`)
and the report in a private staging folder published in one step (:mod:`ppmlib.release.staging`).
It returns one :class:`Run`. The command (``ppmlib.release.command``) is a thin caller of it.
A plan of the "nss-bins" strict scheme runs no lineup: :func:`nss_bins` releases noisy counts
(:func:`ppmlib.mechanism.nss.synthesize_bins`) and the same writer publishes its m datasets.
"""
from __future__ import annotations

__all__ = ["Run", "targets", "staged", "write", "synthesize", "nss_bins", "NO_FITS"]

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ppmlib.errors import BadArgument
from ppmlib.inference.posterior import Sampler, _sampler
from ppmlib.mechanism import lineup as _lineup
from ppmlib.release import gate as _gate
from ppmlib.release import staging as _staging
from ppmlib.release.data import Table
from ppmlib.release.plan import Plan, check_delta


@dataclass(eq=False)
class Run(Mapping):
    """What :func:`synthesize` made: the synthesizers by name (a read-only mapping), and the data,
    the plan, the gate's verdict and the paths written.

    Attributes
    ----------
    results : ppmlib.mechanism.lineup.Results
        The synthesizers by name (Unweighted, LW, and LW_final or CW, or CM), each a :class:`ppmlib.Synthesis`.
    table : ppmlib.release.data.Table
        The data and the release's columns.
    plan : ppmlib.release.plan.Plan
        The guarantee, the released member, epsilon, m, delta and the budget.
    verdict : dict
        The diagnostics gate's verdict (:func:`ppmlib.release.gate.diagnostics_verdict`).
    out, report : pathlib.Path or None
        The release folder and the report written (None: not written).
    """
    results: _lineup.Results
    table: Table
    plan: Plan
    verdict: dict
    out: Path | None = None
    report: Path | None = None

    def __getitem__(self, name):
        return self.results[name]

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def prepared(self):
        return self.table.prepared

    @property
    def columns(self):
        return self.table.columns

    @property
    def format(self) -> str:
        return self.table.format

    @property
    def public_table(self):
        return self.table.public

    @property
    def released(self) -> str:
        return self.plan.released

    @property
    def budget(self):
        return self.plan.budget

    @property
    def guarantee(self) -> str:
        return self.plan.guarantee

    @property
    def delta(self) -> float:
        return self.plan.delta

    @property
    def lineup(self) -> tuple:
        return self.results.lineup

    @property
    def seconds(self) -> dict:
        return self.results.seconds

    def summary(self):
        """:meth:`ppmlib.mechanism.lineup.Results.summary` of the synthesizers.

        Returns
        -------
        pandas.DataFrame
        """
        return self.results.summary()


def targets(out, report, overwrite: bool, inputs) -> tuple[Path | None, Path | None]:
    """The checked release folder and report path (before any work), or None for each not written.

    Parameters
    ----------
    out : str, PathLike or None
        The release folder.
    report : bool, str, PathLike or None
        True: beside ``out``; a path: there; False or None: no report.
    overwrite : bool
        A previous release (and report) of the command may be replaced.
    inputs : tuple of pathlib.Path
        The files read, never replaced.

    Returns
    -------
    (out, report) : pathlib.Path or None each
    """
    if out is None:
        if report not in (None, False, True):
            raise TypeError("report needs out: the report is written beside the release")
        return None, None
    out = _staging.check_out(out, inputs=inputs, overwrite=overwrite)
    if report is None or report is False:
        return out, None
    target = _staging.default_report(out) if report is True else report
    return out, _staging.check_report(target, out=out, inputs=inputs, overwrite=overwrite)


def synthesize(table: Table, plan: Plan, *, sampler: Sampler | None = None, seed: int = 0, out=None, report=True,
               overwrite: bool = False, allow_failed_fits: bool = False, progress: bool = True) -> Run:
    """Run a plan on a data object and, with ``out``, release it and write its report.

    Parameters
    ----------
    table : ppmlib.release.data.Table
        The data (:func:`ppmlib.release.data.read`).
    plan : ppmlib.release.plan.Plan
        What runs and what is released (:func:`ppmlib.release.plan.privacy_plan`).
    sampler : Sampler, optional
        NUTS settings (default 4 chains x 1000 draws after 1000 warmup).
    seed : int
        Reproduces every fit and every synthetic value.
    out : str or PathLike, optional
        The release folder: absent, empty, or (with ``overwrite``) a previous release of the command.
    report : bool, str or PathLike
        True (default): the confidential report beside ``out``; a path: there; False or None: none.
    overwrite : bool
        Replace a previous release (and report) of the command.
    allow_failed_fits : bool
        Release even when a fit fails the diagnostics gate (the manifest says so).
    progress : bool
        Progress bars while fitting.

    Returns
    -------
    Run
    """
    sampler = _sampler(sampler)
    out, report = targets(out, report, overwrite, table.inputs)
    check_delta(plan.delta, table.n)
    if plan.bins is not None:
        log_y, keys = _bins_inputs(table.prepared, plan)
    else:
        _gate.check_draws(sampler, plan.m)
        _gate.check_memory(table.prepared, sampler, plan.m, len(plan.members))
    prepared = table.prepared
    with staged(out, report, overwrite, table.inputs) as staging:
        if plan.bins is not None:
            results, verdict = nss_bins(log_y, keys, plan, seed), NO_FITS
        else:
            results = _lineup.run(plan.members, prepared.family, prepared.y, X=prepared.X, prior=prepared.prior,
                                  m=plan.m, sampler=sampler, seed=seed, progress=progress)
            # the gate guards a release: without out nothing is released, and the verdict is only recorded
            verdict = _gate.check(results, allow_failed_fits) if out is not None else _gate.diagnostics_verdict(results)
        run = Run(results, table, plan, verdict, out, report)
        if staging is not None:
            _write(run, staging)
    return run


#: The gate's verdict on a release without model fits (the "nss-bins" scheme's posterior is drawn exactly).
NO_FITS = {"verdict": "no fits", "gate": "no model fits: each cell's shape is drawn from its posterior given the noisy "
           "counts by a seeded Gibbs sampler over the latent counts, with no convergence diagnostics",
           "failing": [], "released_anyway": False}


def _bins_inputs(prepared, plan: Plan):
    """log y and the categorical keys of the "nss-bins" scheme, every refusal before any noise."""
    from ppmlib.datasets.design import is_categorical
    from ppmlib.mechanism.nss import check_bins_settings, split_budget
    if not prepared.log_scale:
        raise BadArgument(f"strict_scheme='nss-bins' (the strict guarantee's default scheme) synthesizes the log of a "
                          f"positive column; model={prepared.model!r} is a count model: give strict_scheme='cm' for it "
                          "(or model='normal')")
    numeric = [p for p in prepared.predictors if not is_categorical(prepared.table[p])]
    if numeric:
        raise BadArgument(f"strict_scheme='nss-bins' (the strict guarantee's default scheme) needs categorical "
                          f"predictors (their cells are public); {numeric} are numeric: leave them out of predictors= "
                          "or give strict_scheme='cm'")
    keys = prepared.table[list(prepared.predictors)].reset_index(drop=True) if prepared.predictors else None
    bins = plan.bins
    _, bounds_epsilon = split_budget(bins.total_epsilon, plan.delta, "laplace", bins.bounds_share)
    check_bins_settings(prepared.y, keys, bounds=bins.bounds, width=bins.width, bounds_epsilon=bounds_epsilon)
    return prepared.y, keys


def nss_bins(log_y, keys, plan: Plan, seed: int) -> _lineup.Results:
    """The "nss-bins" release of a plan: m datasets of log y from noisy counts over public bins
    (:func:`ppmlib.mechanism.nss.synthesize_bins`, Laplace noise: the whole release pure
    ``plan.bins.total_epsilon``-DP for every database, ``plan.bins.bounds_share`` of it choosing the bins'
    range when no public bounds are given), as results holding it under its registry key.

    Parameters
    ----------
    log_y : ndarray, shape (n,)
        The confidential log values.
    keys : pandas.DataFrame or None
        The categorical predictors (the public cells).
    plan : Plan
        With ``bins`` (:class:`ppmlib.release.plan.Bins`).
    seed : int
        Seeds the noise, the posterior draws and the synthetic values.

    Returns
    -------
    ppmlib.mechanism.lineup.Results
        ``{plan.released: NSSRelease}``, its ``seconds`` filled.
    """
    from ppmlib.mechanism.nss import synthesize_bins
    bins, start = plan.bins, time.perf_counter()
    done = synthesize_bins(log_y, keys, bounds=bins.bounds, width=bins.width, total_epsilon=bins.total_epsilon,
                           delta=plan.delta, m=plan.m, k=bins.k, mechanism="laplace",
                           shape="mean" if bins.k is None else "draws", seed=seed, bounds_share=bins.bounds_share)
    results = _lineup.Results({plan.released: done})
    results.seconds[plan.released] = time.perf_counter() - start
    return results


def _write(run: Run, staging: "_staging.Staging") -> None:
    """The released member in the data's units, and the main path's report (the notebook)."""
    chosen = run[run.released]
    in_units = replace(chosen, synthetic=run.prepared.original_units(chosen.synthetic))

    def report(staging):
        from ppmlib.release import report as _report
        _report.write(run, staging.report, staging.private, resamples=_gate.resamples(run.prepared.n))
    write(staging, in_units, run.table, run.verdict, budget=run.budget, delta=run.delta,
          report=report if run.report is not None else None)


def staged(out, report, overwrite: bool, inputs):
    """Where a run writes: the private staging folder of ``out`` (:class:`ppmlib.release.staging.Staging`),
    or, without ``out``, nothing (a null context that gives None).

    Parameters
    ----------
    out, report : pathlib.Path or None
        As :func:`targets` returns them.
    overwrite : bool
        A previous release (and report) may be replaced.
    inputs : tuple of pathlib.Path
        The files read, never replaced.

    Returns
    -------
    context manager
        Gives the Staging, or None.
    """
    if out is None:
        return contextlib.nullcontext()
    return _staging.Staging(out, report, overwrite=overwrite, inputs=inputs)


def write(staging: "_staging.Staging", synthesis, table, verdict: dict, *, budget=None, delta: float = 1e-6,
          extra: dict | None = None, report=None) -> None:
    """Every path's last step: the release (:func:`ppmlib.release.release`, the one writer) with the
    data object's columns, the report, then the one-step publication.

    Parameters
    ----------
    staging : ppmlib.release.staging.Staging
        Where the release (``staging.release``) and the report are written before publication.
    synthesis : Synthesis, SurveySynthesis, NSSRelease or WrittenParts
        What is released, in the data's units.
    table : ppmlib.release.data.Table, ppmlib.release.survey.SurveyTable or ppmlib.release.cluster.Parts
        The data object: its ``columns``, ``public`` table (None for parts written by workers) and ``format``.
    verdict : dict
        The diagnostics gate's verdict, recorded in the manifest.
    budget : float, optional
        The most the release may cost (the manifest's ``budget_max_epsilon``).
    delta : float
        The ledger's delta.
    extra : dict, optional
        More manifest entries, after ``written_by`` and ``diagnostics``.
    report : callable, optional
        ``report(staging)`` writes the report to ``staging.report`` (None: no report).
    """
    from ppmlib.release.publish import release
    columns = table.columns
    release(synthesis, staging.release, max_epsilon=budget, delta=delta,
            extra={"written_by": _staging.WRITTEN_BY, "diagnostics": verdict, **(extra or {})},
            table=getattr(table, "public", None), column=columns.synthesized, public=columns.public_by_model,
            keep=columns.declared_public, format=table.format, names=columns.order + columns.dropped)
    if report is not None and staging.report_target is not None:
        report(staging)
    staging.publish()
