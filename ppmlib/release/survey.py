"""The command's survey path: an outcome and its sampling weight synthesized together, released, reported.

    ppm-synthesize DATA.csv --column yedu --weights perweight --predictors sex,race --epsilon 2 --out release/

With ``--weights`` the command synthesizes the pair (outcome, weight) with
:func:`ppmlib.mechanism.survey.survey_synthesizer`: the ``--predictors`` are the public cells of the
table (categorical, kept as they are), ``--strata`` and ``--psu`` the public design columns (kept
for the standard errors). ``--out`` receives the release (the public columns and the m synthetic
pairs, with its manifest); the confidential report goes beside it, ``<out>.report-confidential.html``:
the weighted table of the data beside the synthetic one, with standard errors, and what the
weights' synthesis changed. Nothing is written when anything fails.
"""
from __future__ import annotations

__all__ = ["synthesize_survey", "report_path", "report_html", "add_arguments", "main"]

import html
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from ppmlib import _checks
from ppmlib.errors import BudgetExceeded, DataRefused
from ppmlib.evaluate.survey import release_tables
from ppmlib.mechanism.survey import SurveySynthesis, survey_synthesizer

RELEASE_NAME = "synthetic"


def _columns(names, table, role: str) -> list:
    names = [names] if isinstance(names, str) else list(names or ())
    absent = [n for n in names if n not in table.columns]
    if absent:
        raise DataRefused(f"{role} {absent} are not columns of the data (it has {list(table.columns)[:20]})")
    return names


def synthesize_survey(data, column: str, weights: str, *, cells=(), strata: str | None = None,
                      psu: str | None = None, epsilon: float | None = None, m: int = 20,
                      budget: float | None = None, seed: int = 0, draws: int = 1000, out=None,
                      overwrite: bool = False, report: bool = True) -> SurveySynthesis:
    """Load, synthesize (outcome, weight) jointly, and (with ``out``) release and report.

    Parameters
    ----------
    data : str, PathLike or pandas.DataFrame
        As for :func:`ppmlib.release.command.load_table`.
    column, weights : str
        The outcome column and the sampling-weight column.
    cells : sequence of str
        Public categorical columns whose crossing makes the table's cells (none: one cell).
    strata, psu : str, optional
        Public design columns.
    epsilon : float, optional
        Target epsilon per dataset (LW weights calibrated to it); None: LW with c = 1.
    m : int
        Synthetic datasets (they cost m * epsilon).
    budget : float, optional
        The most m * epsilon may cost; refused before fitting when the target already exceeds it.
    seed : int
    draws : int
        Exact draws per conditional.
    out : str or PathLike, optional
        The release folder (absent or empty unless ``overwrite``); the report goes beside it.
    overwrite : bool
        Replace a non-empty ``out`` (and an existing report).
    report : bool or str or PathLike
        True: write the confidential report at ``<out>.report-confidential.html``; a path: there
        (never inside ``out``); False: no report.

    Returns
    -------
    SurveySynthesis
    """
    from ppmlib.release.command import load_table

    m = _checks.integer(m, "m", low=2)
    if budget is not None:
        budget = _checks.real(budget, "budget", low=0, low_open=True)
        if epsilon is not None and m * epsilon > budget:
            raise BudgetExceeded(f"m = {m} datasets at epsilon = {epsilon:g} cost {m * epsilon:g} > budget = "
                                 f"{budget:g}; nothing was fitted or written")
    out_dir = _check_out(out, overwrite)
    page = None if out_dir is None or report is False else report_path(out_dir) if report is True else Path(report)
    if page is not None and out_dir.resolve() in page.resolve().parents:
        raise DataRefused(f"the report {str(page)!r} would sit inside the release folder {str(out_dir)!r}; "
                          "it summarizes the confidential data and must not")
    table = load_table(data)
    cells = _columns(cells, table, "the cells (--predictors)")
    design = _columns([c for c in (strata, psu) if c], table, "the design columns (--strata, --psu)")
    if not cells:
        table = table.assign(**{"(all)": "all"})
        cells = ["(all)"]
    if table[cells + design].isna().to_numpy().any():
        raise DataRefused(f"the public columns {cells + design} have missing values")
    synthesis = survey_synthesizer(table, column, weights, cells, strata=strata, psu=psu,
                                   epsilon=epsilon, m=m, draws=draws, seed=seed)
    if out_dir is not None:
        _publish(synthesis, table, out_dir, overwrite=overwrite, budget=budget, page=page,
                 design={"strata": strata, "psu": psu}, cells=cells)
    return synthesis


def _check_out(out, overwrite: bool) -> Path | None:
    if out is None:
        return None
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise DataRefused(f"out {str(out)!r} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise DataRefused(f"out {str(out)!r} exists and is not empty; choose another folder or overwrite")
    return out


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
    out = Path(out)
    return out.with_name(out.name + ".report-confidential.html")


def _publish(synthesis, table, out: Path, *, overwrite, budget, page, design, cells) -> None:
    """The release in a staging folder beside ``out``, the report in a temporary file beside ``page``; both
    renamed into place."""
    if page is not None and page.exists() and not overwrite:
        raise DataRefused(f"the report {str(page)!r} exists; choose another path or overwrite")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    temporary = None
    try:
        synthesis.release(staging / RELEASE_NAME, max_epsilon=budget)
        if page is not None:
            fd, temporary = tempfile.mkstemp(dir=page.parent, prefix=f".{page.name}.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(report_html(synthesis, table, cells, **design))
        if out.exists():
            shutil.rmtree(out)      # empty, or overwrite (checked before fitting)
        os.replace(staging, out)
        if temporary is not None:
            os.replace(temporary, page)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if temporary is not None and Path(temporary).exists():
            os.unlink(temporary)
        raise


def _frame_html(frame, digits: int = 3) -> str:
    return frame.to_html(float_format=lambda x: f"{x:,.{digits}f}", escape=True, border=0)


def report_html(synthesis: SurveySynthesis, data, cells, *, strata: str | None = None, psu: str | None = None) -> str:
    """The confidential report of a survey release, as one HTML page (no scripts, every value escaped).

    Parameters
    ----------
    synthesis : SurveySynthesis
    data : pandas.DataFrame
        The confidential data.
    cells : sequence of str
    strata, psu : str, optional

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
        '<meta name="generator" content="ppm-synthesize confidential report">',
        "<title>Survey synthesis report (confidential)</title></head><body>",
        "<h1>Survey synthesis report</h1>",
        "<p><strong>For the data holder, not for publication</strong>: the confidential table below is not "
        "covered by the guarantee.</p>",
        f"<p>Outcome <code>{e(synthesis.outcome)}</code>, weight <code>{e(synthesis.weight)}</code>, cells "
        f"<code>{e(' x '.join(map(str, cells)))}</code>; {synthesis.m} datasets of "
        f"{synthesis.synthetic_outcome.shape[1]} records.</p>",
        "<h2>Privacy</h2>", f"<p>{e(synthesis.privacy_statement())}</p>",
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
    group = parser.add_argument_group(
        "survey weights", "with --weights, the column and its sampling weight are synthesized together (one bound "
                          "for the pair); --predictors are the table's public cells (categorical, kept); the "
                          "confidential report shows the weighted tables beside the release")
    group.add_argument("--weights", default=None, metavar="COLUMN", help="the sampling-weight column")
    group.add_argument("--strata", default=None, metavar="COLUMN", help="the design's strata (public, kept)")
    group.add_argument("--psu", default=None, metavar="COLUMN", help="the design's primary sampling units (public, kept)")


def _flag_problem(args) -> str | None:
    """What is wrong with the flags for the survey path, in the command's words (None: nothing)."""
    if args.weights is None:
        return "--strata and --psu describe a survey design; they need --weights COLUMN"
    if getattr(args, "guarantee", "local") != "local":
        return ("with --weights only --guarantee local is available (the survey model is not censored): each "
                "dataset is then epsilon-DP for this file only; give --guarantee local to release it")
    unused = [flag for flag, used in (("--model", args.model not in ("auto", "normal")),
                                      ("--weighting", args.weighting != "lw"), ("--radius", args.radius is not None),
                                      ("--relative", bool(args.relative)), ("--drop-missing", bool(args.drop_missing)),
                                      ("--total-epsilon", getattr(args, "total_epsilon", None) is not None))
              if used]
    if unused:
        return (f"with --weights the column and its weight get the survey model (a normal mean per cell, a normal "
                f"log weight given the column, LW weights); {', '.join(unused)} cannot be used")
    return None


def main(args) -> int:
    """Run the survey path from the parsed arguments; 0 done, 2 refused with nothing written.

    Parameters
    ----------
    args : argparse.Namespace
        The command's arguments, ``--weights`` among them.

    Returns
    -------
    int
        The exit status.
    """
    from ppmlib.errors import PPMError

    problem = _flag_problem(args)
    if problem is not None:
        print(f"error: {problem}\nnothing was written to {args.out}", file=sys.stderr)
        return 2
    try:
        cells = [c.strip() for c in (args.predictors or "").split(",") if c.strip()]
        synthesis = synthesize_survey(args.data, args.column, args.weights, cells=cells, strata=args.strata,
                                      psu=args.psu, epsilon=args.epsilon, m=args.m, budget=args.budget,
                                      seed=args.seed, draws=args.chains * args.draws, out=args.out,
                                      overwrite=args.overwrite, report=_report_arg(args))
    except (PPMError, ValueError, TypeError, OSError) as err:
        print(f"error: {err}\nnothing was written to {args.out}", file=sys.stderr)
        return 2
    statement = synthesis.privacy_statement()
    report = _report_arg(args)
    where = "" if report is False else f"; report (confidential): {report_path(args.out) if report is True else report}"
    print(f"released {synthesis.m} synthetic datasets of ({args.column!r}, {args.weights!r}) to {args.out}"
          + where + "\n" + statement)
    return 0


def _report_arg(args):
    """False (--no-report), the --report path if the command has that flag and it was given, else True."""
    if args.no_report:
        return False
    return getattr(args, "report", None) or True
