"""The command's survey path: an outcome and its sampling weight synthesized together, released, reported.

    ppm-synthesize DATA.csv --column yedu --weights perweight --predictors sex,race --guarantee local --out release/

With ``--weights`` the command synthesizes the pair (outcome, weight) with
:func:`ppmlib.mechanism.survey.survey_synthesizer`: the ``--predictors`` are the public cells of the
table (categorical columns, at most ``--max-levels`` levels each, kept as they are), ``--strata``
and ``--psu`` the public design columns (kept for the standard errors). From Python:
``synthesize(read(data, column, weights, cells=...), privacy_plan("local", ...))``, or the same
data object and plan given to :func:`ppmlib.release.command.synthesize`. The path is a caller of
the pipeline's steps (:mod:`ppmlib.release.pipeline`: ``targets``, ``staged``, ``write``) and of
the plan (:func:`ppmlib.release.plan.privacy_plan`); it has its own reader (the weight's checks,
categorical cells), fit (exact draws, so the gate's verdict is :data:`EXACT_VERDICT`) and report
(weighted tables). Everything else is the main path's (``ppmlib.release.command``): the same checks of ``--out`` and ``--report`` before
any work, the lock, the staging folder and the one-rename publication, the signal handlers and
the sweep of what killed runs left; the same release (``synthetic_1.csv`` ... or one
``synthetic.parquet`` with a ``dataset`` column, each the user's table with the outcome and the
weight replaced, ``--keep`` columns kept, the others dropped; the manifest ``synthetic.json``
with the main path's keys), written by :func:`ppmlib.release.release`; the same default target
(epsilon = ``STRICT_EPSILON`` per dataset unless ``--epsilon`` or ``--total-epsilon`` says
otherwise) and ``--budget``. The confidential report goes beside it,
``<out>.report-confidential.html``: the weighted table of the data beside the synthetic one, with
standard errors, and what the weights' synthesis changed. Nothing is written when anything fails.
"""
from __future__ import annotations

__all__ = ["ALL", "EXACT_GATE", "EXACT_VERDICT", "BOUND_BLOCK", "SurveyTable", "SurveyRun", "read", "synthesize",
           "memory_needed", "report_path", "report_html", "add_arguments", "flag_problem", "summary"]

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ppmlib import _checks
from ppmlib.datasets.design import is_categorical
from ppmlib.errors import BadArgument, DataRefused
from ppmlib.evaluate.survey import release_tables
from ppmlib.mechanism.survey import SurveySynthesis, survey_synthesizer
from ppmlib.release.staging import REPORT_MARK

if TYPE_CHECKING:
    import pandas as pd

#: The cells' column when no --predictors are given (one cell; never released).
ALL = "(all)"
#: What the diagnostics gate says of the survey model's fits: its draws are exact, no chain to judge.
EXACT_GATE = "exact draws from the conjugate pseudo posterior (no Markov chain): nothing for the gate to judge"


@dataclass(frozen=True)
class SurveyRun:
    """What :func:`synthesize` did: the synthesis, what the release carries, and where it went.

    Attributes
    ----------
    synthesis : SurveySynthesis
    columns : ppmlib.release.tables.Columns
    verdict : dict
        The manifest's ``diagnostics`` entry.
    out, report : pathlib.Path or None
        The release folder and the report written (None: not written).
    n, dropped : int
        Records synthesized, and records dropped for a missing value (``drop_missing``).
    delta : float
        The release's delta (the ledger's).
    """
    synthesis: SurveySynthesis
    columns: object
    verdict: dict
    out: Path | None
    report: Path | None
    n: int
    dropped: int
    delta: float


def _names(value) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


def _check_roles(column: str, weights: str, cells: list, design: list, keep: list) -> None:
    """Each column has one role: the outcome, its weight, a cell, a design column, or kept."""
    if not isinstance(weights, str):
        raise TypeError(f"weights must be a column name (str), got {type(weights).__name__}")
    if weights == column:
        raise BadArgument(f"weights={weights!r} is the synthesized column itself; name the sampling-weight column")
    for name, role in ((column, "the synthesized column"), (weights, "the weight column")):
        if name in cells:
            raise BadArgument(f"{role} {name!r} is also among the predictors (the public cells); a column is either "
                              "synthesized or released as it is")
        if name in design:
            raise BadArgument(f"{role} {name!r} is also a design column (strata or psu); a column is either "
                              "synthesized or released as it is")


def _check_cells(table, cells: list, max_levels: int) -> None:
    """The cells are categories: a numeric predictor is refused (naming it), as is one over ``max_levels``."""
    from ppmlib.release.data import _check_levels
    for p in cells:
        if not is_categorical(table[p]):
            raise DataRefused(f"predictor {p!r} is numeric ({table[p].nunique()} distinct values); with weights= the "
                              "predictors are the table's public cells, which are categories. Give it as text "
                              "categories (group its values) or leave it out")
    _check_levels(table, tuple(cells), max_levels)


def _complete(table, used: list, drop_missing: bool):
    """The records without a missing value in ``used`` (or a refusal that counts them by column)."""
    incomplete = table[used].isna().any(axis=1)
    dropped = int(incomplete.sum())
    if dropped and not drop_missing:
        by_column = ", ".join(f"{c}: {int(k)}" for c, k in table[used].isna().sum().items() if k)
        raise DataRefused(f"{dropped} of {len(table)} records have a missing value ({by_column}); pass "
                          "drop_missing=True to drop them")
    return table.loc[~incomplete].reset_index(drop=True), dropped


def _check_size(table, cells: list) -> None:
    """At least :func:`ppmlib.release.data.minimum_records` for the model's coefficients: a mean per
    cell for the outcome, an intercept and a slope per cell for the log weight."""
    from ppmlib.release.data import minimum_records
    if len(table) == 0:
        raise DataRefused(f"the data has no complete records: {list(table.columns)}")
    n_cells = int(table[cells].drop_duplicates().shape[0]) if cells else 1
    need = minimum_records("normal", 3 * n_cells)
    if len(table) < need:
        raise DataRefused(f"{len(table)} records are too few for the survey model over {n_cells} cells (3 "
                          f"coefficients per cell): it needs at least {need}; use fewer or coarser predictors")


@dataclass(frozen=True)
class SurveyTable:
    """The data object of the survey path: the records read and checked, and what the release carries.

    Attributes
    ----------
    table : pandas.DataFrame
        The complete records the model uses (confidential), with the ``ALL`` column when no cells are given.
    column, weights : str
        The outcome and its sampling weight.
    cells : tuple of str
        The public cells (``(ALL,)``: one cell).
    strata, psu : str or None
        The public design columns.
    columns : ppmlib.release.tables.Columns
        The synthesized (outcome and weight), kept and dropped columns of the release.
    public : pandas.DataFrame
        The kept columns of those records, in their order.
    format : str
        "csv" or "parquet".
    inputs : tuple of pathlib.Path
        The files read, which a release may never replace.
    dropped : int
        Records dropped for a missing value (``drop_missing``).
    """
    table: "pd.DataFrame"
    column: str
    weights: str
    cells: tuple
    strata: str | None
    psu: str | None
    columns: object
    public: "pd.DataFrame"
    format: str
    inputs: tuple
    dropped: int = 0

    @property
    def n(self) -> int:
        return len(self.table)


def read(data, column: str, weights: str, *, cells=(), strata: str | None = None, psu: str | None = None, keep=(),
         drop_missing: bool = False, max_levels: int | None = None, encoding: str | None = None,
         format: str | None = None) -> SurveyTable:
    """Read and check a survey's records for a release of (outcome, weight): every refusal before any fit.

    Parameters
    ----------
    data : str, PathLike or pandas.DataFrame
        As for :func:`ppmlib.release.data.load_table`.
    column, weights : str
        The outcome column and the sampling-weight column (two different columns, neither a cell,
        a design column or kept).
    cells : sequence of str or str
        Public categorical columns whose crossing makes the table's cells (none: one cell); each at
        most ``max_levels`` levels; a numeric column is refused.
    strata, psu : str, optional
        Public design columns.
    keep : sequence of str or str
        Columns declared public, released as they are.
    drop_missing, max_levels, encoding, format
        As for :func:`ppmlib.release.data.read`.

    Returns
    -------
    SurveyTable
    """
    from ppmlib.release import data as _data
    format = _data._release_format(format or "csv")
    cells, keep, design = _names(cells), _names(keep), [c for c in (strata, psu) if c]
    _check_roles(column, weights, cells, design, keep)
    table, dropped, columns = _read(data, column, weights, cells, design, keep, encoding=encoding,
                                    drop_missing=drop_missing, max_levels=max_levels)
    public = table.loc[:, [c for c in columns.order if c not in columns.all_synthesized]]
    model_table = table if cells else table.assign(**{ALL: "all"})
    return SurveyTable(model_table, column, weights, tuple(cells) or (ALL,), strata, psu, columns, public, format,
                       _data.inputs_of(data), dropped)


#: The diagnostics gate's verdict on the survey model: its draws are exact, no chain to judge, and
#: allow_failed_fits nothing to allow.
EXACT_VERDICT = {"verdict": "passed", "gate": EXACT_GATE, "failing": [], "released_anyway": False}


def synthesize(table: SurveyTable, plan, *, sampler=None, seed: int = 0, out=None, report=True,
               overwrite: bool = False, allow_failed_fits: bool = False, progress: bool = True) -> SurveyRun:
    """Synthesize (outcome, weight) jointly by a privacy plan and, with ``out``, release and report them.

    The pipeline's steps (:mod:`ppmlib.release.pipeline`: the checked targets, the staging folder,
    the one writer and the publication); what differs is said here: the fit (exact draws of the
    survey model, :func:`ppmlib.mechanism.survey.survey_synthesizer`, so the gate's verdict is
    :data:`EXACT_VERDICT`), the default target (``STRICT_EPSILON`` per dataset when the plan has no
    epsilon) and the report (one HTML page of weighted tables, :func:`report_html`).

    Parameters
    ----------
    table : SurveyTable
        The data (:func:`read`).
    plan : ppmlib.release.plan.Plan
        Under guarantee "local", releasing LW (:func:`ppmlib.release.plan.privacy_plan`), m >= 2.
    sampler : Sampler, optional
        Its chains x draws is the number of exact draws per conditional (default 4 x 1000).
    seed, out, report, overwrite, progress
        As for :func:`ppmlib.release.pipeline.synthesize`.
    allow_failed_fits : bool
        Nothing to allow: the draws are exact.

    Returns
    -------
    SurveyRun
    """
    from ppmlib.inference.posterior import _sampler
    from ppmlib.release import pipeline
    from ppmlib.release.plan import check_delta
    epsilon, budget, draws = _numbers(plan, _sampler(sampler))
    out, page = pipeline.targets(out, report, overwrite, table.inputs)
    check_delta(plan.delta, table.n)
    _check_memory(table.n, plan.m)
    with pipeline.staged(out, page, overwrite, table.inputs) as staging:
        synthesis = survey_synthesizer(table.table, table.column, table.weights, list(table.cells),
                                       strata=table.strata, psu=table.psu, epsilon=epsilon, m=plan.m, draws=draws,
                                       seed=seed)
        _check_finite(synthesis)
        if staging is not None:
            design = {"strata": table.strata, "psu": table.psu}

            def write_report(staging):
                page_text = report_html(synthesis, table.table, list(table.cells), delta=plan.delta, **design)
                staging.report.write_text(page_text, encoding="utf-8")
            pipeline.write(staging, synthesis, table, EXACT_VERDICT, budget=budget, delta=plan.delta,
                           report=write_report)
    return SurveyRun(synthesis, table.columns, EXACT_VERDICT, out, page, table.n, table.dropped, plan.delta)


def _numbers(plan, sampler) -> tuple:
    """The checked numbers of a run: the per-dataset target (the command's default when the plan has
    none), the budget (refused before any fit when the target exceeds it) and the draws."""
    from ppmlib.release.plan import STRICT_EPSILON, check_budget
    if plan.bins is not None or plan.guarantee != "local" or plan.released != "LW":
        raise BadArgument("the survey pair is synthesized by the survey model with LW weights under "
                          "guarantee='local' (the survey model is not censored): each dataset is then epsilon-DP "
                          "for this file only; make the plan with guarantee='local' and weighting='lw'")
    m = _checks.integer(plan.m, "m", low=2)
    epsilon = STRICT_EPSILON if plan.epsilon is None else plan.epsilon
    budget = check_budget(plan.budget, epsilon, m)
    draws = _checks.integer(sampler.chains * sampler.draws, "draws", low=1)
    if m > draws:
        raise BadArgument(f"m = {m} synthetic datasets need at least m draws; draws = {draws}")
    return epsilon, budget, draws


def _read(data, column, weights, cells, design, keep, *, encoding, drop_missing, max_levels) -> tuple:
    """The data, read once (the columns the release and the model use), checked: (table, dropped, columns)."""
    from ppmlib.release import data as _data
    from ppmlib.release import tables
    max_levels = _checks.integer(_data.MAX_LEVELS if max_levels is None else max_levels, "max_levels", low=2)
    names = _data.source_columns(data, encoding)
    absent = [c for c in dict.fromkeys([column, weights, *cells, *design, *keep]) if c not in names]
    if absent:
        raise DataRefused(f"column(s) {absent} not in the data; it has {names}")
    columns = tables.public_columns(names, column, cells + design, keep, also=[weights])
    table = _data.load_table(data, None if hasattr(data, "columns") else list(columns.order), encoding=encoding)
    table, dropped = _complete(table, [column, weights, *cells, *design], drop_missing)
    _check_cells(table, cells, max_levels)
    _check_size(table, cells)
    return table, dropped, columns


#: Draws per block of the survey model's bounds (:func:`ppmlib.mechanism.survey._bounds`' default).
BOUND_BLOCK = 100


def memory_needed(n: int, m: int) -> int:
    """Bytes a survey run needs at its peak, roughly: a block of the two conditionals' log densities and their
    temporaries (6 x ``BOUND_BLOCK`` x n numbers), the m synthetic pairs and their draws' parameters
    (10 m n), and the table's columns (20 n).

    Parameters
    ----------
    n, m : int
        Records and synthetic datasets.

    Returns
    -------
    int
    """
    return 8 * (6 * BOUND_BLOCK * n + 10 * m * n + 20 * n)


def _check_memory(n: int, m: int) -> None:
    """Refuse before any fit a run that would not fit in memory, as the main path does."""
    from ppmlib.release import data as _data
    need, available = memory_needed(n, m), _data.available_memory()
    if available is not None and need > available:
        raise DataRefused(f"this run needs about {need / 1e6:.0f} MB of memory ({n} records, {m} datasets) and "
                          f"{available / 1e6:.0f} MB are available; use fewer datasets or records, or a larger machine")


def _check_finite(synthesis: SurveySynthesis) -> None:
    """Refuse synthetic values beyond a float's range (a synthetic log weight whose exp overflows), naming
    the cause: at a small epsilon the record weights leave the fit almost no data, and its draws are wide."""
    bad = int((~np.isfinite(synthesis.synthetic)).sum())
    if bad:
        raise DataRefused(f"{bad} of the {synthesis.synthetic.size} synthetic values overflow (a synthetic weight "
                          f"exp(log weight) beyond 1e308): at epsilon = {synthesis.epsilon:.3g} per dataset the record "
                          "weights leave the survey model too little of the data. Give a larger epsilon=, more "
                          "records or fewer cells; nothing was written")


def report_path(out) -> Path:
    """Where the confidential report of a release in ``out`` goes: beside it, never inside.

    Parameters
    ----------
    out : str or PathLike

    Returns
    -------
    pathlib.Path
        ``<out>.report-confidential.html``.
    """
    from ppmlib.release.staging import default_report
    return default_report(Path(out))


def _frame_html(frame, digits: int = 3) -> str:
    return frame.to_html(float_format=lambda x: f"{x:,.{digits}f}", escape=True, border=0)


def _privacy_html(synthesis: SurveySynthesis, delta: float) -> str:
    """The report's privacy section: what epsilon covers, then the ledger's statement, the lines the
    manifest carries and the command prints (:func:`ppmlib.mechanism.ledger.of_release`)."""
    from ppmlib.mechanism.ledger import of_release
    from ppmlib.release.report import statement_html
    covers = synthesis.model_entry()["epsilon_covers"]
    return f"<p>What epsilon covers: {html.escape(covers)}</p>\n" + statement_html(of_release(synthesis, delta).statement())


def report_html(synthesis: SurveySynthesis, data, cells, *, strata: str | None = None, psu: str | None = None,
                delta: float = 1e-6) -> str:
    """The confidential report of a survey release, as one HTML page (no scripts, every value escaped).

    Parameters
    ----------
    synthesis : SurveySynthesis
    data : pandas.DataFrame
        The confidential data.
    cells : sequence of str
    strata, psu : str, optional
    delta : float
        The release's delta: the page states the ledger's statement at it, the manifest's word for word.

    Returns
    -------
    str
        The page: the privacy statement, the weighted table (confidential and synthetic, with
        standard errors), and what the weights' synthesis changed.
    """
    out = release_tables(synthesis, data, cells, strata=strata, psu=psu)
    t = out["table"]
    eps = out["epsilon"]
    alone, joint = eps["outcome's term alone, same alpha"], eps["outcome and weight (released)"]
    shift = (t["synthetic weight total"] / t["weight total"] - 1).abs()
    changed = (
        f"Synthesizing the weights with the outcome put both under one bound: at these record weights, the "
        f"outcome's term alone would give epsilon = {alone:.3g} per dataset; the pair gives {joint:.3g}. "
        f"The synthetic weights replace the true ones in every dataset: their median is "
        f"{out['weights'].loc['50% quantile', 'synthetic']:,.0f} (data: "
        f"{out['weights'].loc['50% quantile', 'confidential']:,.0f}), and the cells' weight totals moved by "
        f"{100 * shift.median():.1f}% (median) and {100 * shift.max():.1f}% at most.")
    e = html.escape
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        REPORT_MARK,
        "<title>Survey synthesis report (confidential)</title></head><body>",
        "<h1>Survey synthesis report</h1>",
        "<p><strong>For the data holder, not for publication</strong>: the confidential table below is not "
        "covered by the guarantee.</p>",
        f"<p>Outcome <code>{e(synthesis.outcome)}</code>, weight <code>{e(synthesis.weight)}</code>, cells "
        f"<code>{e(' x '.join(map(str, cells)))}</code>; {synthesis.m} datasets of "
        f"{synthesis.synthetic_outcome.shape[1]} records.</p>",
        "<h2>Privacy</h2>", _privacy_html(synthesis, delta),
        "<h2>The weighted table: confidential and synthetic</h2>",
        "<p>Hajek means with Taylor-linearised standard errors (strata and PSUs when given); the synthetic "
        "columns combine the m datasets by the rules for partially synthetic data (mean of the estimates, "
        "variance ubar + b/m), with 95% intervals.</p>",
        _frame_html(t),
        "<h2>What the weights' synthesis changed</h2>", f"<p>{e(changed)}</p>",
        _frame_html(out["weights"], 0),
        "</body></html>"]
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# the command line: ppm-synthesize ... --weights COLUMN [--strata C] [--psu C]
# ---------------------------------------------------------------------------------------------

def add_arguments(parser) -> None:
    """Add ``--weights``, ``--strata`` and ``--psu`` to the command's parser.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser (:func:`ppmlib.release.command.main` builds it).
    """
    from ppmlib.release.plan import STRICT_EPSILON
    group = parser.add_argument_group(
        "survey weights", "with --weights, the column and its sampling weight are synthesized together (one bound "
                          "for the pair, epsilon covers the whole record) with --guarantee local; --predictors are "
                          "the table's public cells (text columns, at most --max-levels levels; numeric ones are "
                          "refused); --out, --report, --format, --keep, --drop-missing, --encoding, --epsilon, "
                          "--total-epsilon and --budget as for one column, each dataset the table with the column "
                          "and the weight replaced; without --epsilon or --total-epsilon each dataset is calibrated to "
                          f"epsilon = {STRICT_EPSILON:g}, the command's default; the confidential report shows the "
                          "weighted tables beside the release")
    group.add_argument("--weights", default=None, metavar="COLUMN", help="the sampling-weight column")
    group.add_argument("--strata", default=None, metavar="COLUMN", help="the design's strata (public, kept)")
    group.add_argument("--psu", default=None, metavar="COLUMN", help="the design's primary sampling units (public, kept)")


def flag_problem(args) -> str | None:
    """What is wrong with the flags for the survey path, in the command's words (None: nothing).

    Parameters
    ----------
    args : argparse.Namespace
        The command's arguments.

    Returns
    -------
    str or None
    """
    if args.weights is None:
        return "--strata and --psu describe a survey design; they need --weights COLUMN"
    if getattr(args, "client", None) is not None:
        return ("--dask runs the single-column normal model over a cluster's row groups; with --weights the survey "
                "pair is fitted in one process: leave out --dask")
    if getattr(args, "guarantee", "local") != "local":
        return ("with --weights only --guarantee local is available (the survey model is not censored): each "
                "dataset is then epsilon-DP for this file only; give --guarantee local to release it")
    unused = [flag for flag, used in (("--model", args.model not in ("auto", "normal")),
                                      ("--weighting", args.weighting != "lw"), ("--radius", args.radius is not None),
                                      ("--relative", bool(args.relative)))
              if used]
    if unused:
        return (f"with --weights the column and its weight get the survey model (a normal mean per cell, a normal "
                f"log weight given the column, LW weights); {', '.join(unused)} cannot be used")
    return None


def summary(done: SurveyRun) -> str:
    """The command's summary of a survey run, in the main path's lines.

    Parameters
    ----------
    done : SurveyRun

    Returns
    -------
    str
    """
    from ppmlib.release.data import summary_columns
    from ppmlib.release.plan import privacy_lines
    s = done.synthesis
    after = f", {done.dropped} dropped with missing values" if done.dropped else ""
    lines = [f"released {s.m} synthetic datasets of ({s.outcome!r}, {s.weight!r}) ({done.n} records{after}, survey "
             f"model, {s.scheme.upper()}) to {done.out}",
             summary_columns(done.columns),
             f"epsilon covers {s.model_entry()['epsilon_covers']}",
             privacy_lines(s, s.m, done.delta),
             f"diagnostics: {done.verdict['gate']}"]
    if done.report is not None:
        lines.append(f"report (confidential, not for publication): {done.report}")
    return "\n".join(lines)
