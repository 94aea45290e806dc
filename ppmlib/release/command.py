"""Your own microdata in one command: a file in, a private synthetic release and its report out.

    ppm-synthesize DATA.csv --column income --predictors age,region --epsilon 5 --out release/

(or ``python -m ppmlib.synthesize ...``, or :func:`synthesize` from Python). The sensitive column is synthesized
by the pseudo posterior mechanism: a count column by the Poisson or negative binomial model, a
positive continuous one as log(value) by a normal or mixture regression on the predictors
(categorical ones one-hot with a reference level, numeric ones standardized). This is *partially*
synthetic data, one synthetic value per record.

``--out`` receives the m synthetic datasets, each the user's table with the column replaced, rows
in their order (:mod:`ppmlib.release.tables`), and ``synthetic.json``, the manifest (each file's
SHA-256, the synthesized, kept and dropped columns, the ledger's privacy statement, the
diagnostics gate's verdict). Only public columns go in: the predictors and the ``--keep`` columns.
The report, for the data holder and not for publication, goes beside ``--out`` as
``<out>.report-confidential.html`` (or to ``--report``), never inside it. ``--out`` is checked
before any work, a lock keeps a second run out, and everything is written in a private staging
folder published by one rename once every fit passes the diagnostics gate
(:mod:`ppmlib.release.staging`); SIGINT, SIGTERM and SIGHUP remove it.

The privacy statement, exactly, is the ledger's (:func:`ppmlib.mechanism.ledger.of_release`): the
manifest carries it, the command prints it and the report renders it, word for word. Under
``--guarantee strict`` (the default) the release is epsilon-DP for every database (removal and
addition of one record): as a whole under its default scheme ``--strict-scheme nss-bins`` (one
noisy release, of which the m datasets are post-processing), each dataset under ``cm``; under ``--guarantee local`` each is epsilon = 2 Delta DP for
this file against its removal neighbours only (replace-one neighbours cost 4 Delta; the weights are
computed from the data and are outside the guarantee). Either way the m datasets are priced by basic
and zCDP composition at ``--delta``, and the release reveals n.

The command is a thin caller of the library: the data (:mod:`ppmlib.release.data`), the privacy
plan (:mod:`ppmlib.release.plan`), the gate (:mod:`ppmlib.release.gate`) and one pipeline
(:mod:`ppmlib.release.pipeline`); ``--weights`` takes the survey path (:mod:`ppmlib.release.survey`)
and ``--dask`` the cluster path (:mod:`ppmlib.release.cluster`).
"""
from __future__ import annotations

__all__ = ["RELEASE_NAME", "synthesize", "main"]

import argparse
import os
import re
import signal
import sys

from ppmlib.errors import BadArgument
from ppmlib.inference.posterior import Sampler, _sampler
from ppmlib.release import data as _data
from ppmlib.release import pipeline
from ppmlib.release import staging as _staging
from ppmlib.release.data import MAX_LEVELS
from ppmlib.release.gate import FitsFailed, check_draws, gate_line
from ppmlib.release.plan import GUARANTEES, Plan, privacy_lines, privacy_plan, strict_arguments, weightings
from ppmlib.release.report import ReportFailed

#: The stem of the release's file names in ``--out`` (:mod:`ppmlib.release.tables`).
RELEASE_NAME = "synthetic"


def synthesize(table, plan: Plan, *, sampler: Sampler | None = None, seed: int = 0, out=None, report=True,
               overwrite: bool = False, allow_failed_fits: bool = False, progress: bool = True, client=None):
    """Synthesize a data object by a privacy plan and, with ``out``, release it: the library's entry point.

    Read the data with :func:`ppmlib.release.data.read` (a :class:`~ppmlib.release.data.Table`),
    with :func:`ppmlib.release.survey.read` for an outcome and its sampling weight together, or
    with :func:`ppmlib.release.cluster.read` to run over the row groups of a Parquet file; plan
    with :func:`ppmlib.release.plan.privacy_plan`. Each goes through its path, a caller of the
    pipeline's steps (:mod:`ppmlib.release.pipeline`): a Table through
    :func:`ppmlib.release.pipeline.synthesize`, a :class:`~ppmlib.release.survey.SurveyTable`
    through :func:`ppmlib.release.survey.synthesize`, a :class:`~ppmlib.release.cluster.Parts`
    through :func:`ppmlib.release.cluster.synthesize`.

    Parameters
    ----------
    table : ppmlib.release.data.Table, ppmlib.release.survey.SurveyTable or ppmlib.release.cluster.Parts
        The data object.
    plan : ppmlib.release.plan.Plan
        What runs and what is released.
    sampler, seed, out, report, overwrite, allow_failed_fits, progress
        The run: see :func:`ppmlib.release.pipeline.synthesize`.
    client : str or distributed.Client, optional
        With a Parts: the Dask cluster to run on (None: its jobs one after another here).

    Returns
    -------
    ppmlib.release.pipeline.Run, ppmlib.release.survey.SurveyRun or ppmlib.release.cluster.ClusterRun
        The synthesizers by name, the data, the plan, the gate's verdict and the paths written.

    Examples
    --------
    A count column under the local guarantee (exact Poisson draws stand in for NUTS here):

    >>> import pandas as pd
    >>> from ppmlib.inference.exact import ConjugateSampler
    >>> from ppmlib.release.data import read
    >>> from ppmlib.release.plan import privacy_plan
    >>> table = read(pd.DataFrame({"visits": [0, 1, 2, 3, 4, 5, 6, 7] * 10}), "visits", model="poisson")
    >>> run = synthesize(table, privacy_plan("local", m=2), sampler=ConjugateSampler(4, 500), progress=False)
    >>> run.released, run["LW"].synthetic.shape
    ('LW', (2, 80))
    """
    from ppmlib.release import cluster, survey
    sampler = _sampler(sampler)
    run = dict(sampler=sampler, seed=seed, out=out, report=report, overwrite=overwrite,
               allow_failed_fits=allow_failed_fits, progress=progress)
    if isinstance(table, cluster.Parts):
        return cluster.synthesize(table, plan, client=client, **run)
    if client is not None:
        raise BadArgument("client= runs over the row groups of a Parquet file: read it with "
                          "ppmlib.release.cluster.read")
    if isinstance(table, survey.SurveyTable):
        return survey.synthesize(table, plan, **run)
    return pipeline.synthesize(table, plan, **run)


# ---------------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ppm-synthesize", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Differentially private synthetic values of one sensitive column of your file, by the "
                    "pseudo posterior mechanism: a release (your table with the column replaced, as CSV or Parquet, "
                    "and a JSON manifest of its privacy budget) and a confidential HTML report.",
        epilog="Privacy, --guarantee strict (default): the whole release is epsilon-DP for every database "
               "against removal and addition of one record. Its default scheme (--strict-scheme nss-bins) "
               "releases noisy counts of the log column over bins per cell of the predictors (pure "
               "--total-epsilon-DP, a share of it choosing the bins' range unless --log-bounds are given), and the "
               "m datasets are post-processing of them; --strict-scheme cm censors every record's "
               "log-likelihood term, so each dataset is epsilon-DP, "
               "the m datasets priced by the zCDP ledger (rho = m epsilon^2 / 8, converted to (epsilon, "
               "delta)) beside basic composition m * epsilon. --guarantee local: each dataset is epsilon = 2 Delta "
               "DP for this file only, against its removal neighbours (one record removed; adding an arbitrary "
               "record is not covered; replace-one neighbours cost 4 Delta), Delta estimated from the draws; the "
               "record weights are computed from the data and are outside the guarantee; m datasets cost "
               "m * epsilon. Either way "
               "the release reveals n, and the other columns are not synthesized (partially synthetic data).\n\n"
               + RELEASE_HELP)
    _data_arguments(parser)
    _mechanism_arguments(parser)
    strict_arguments(parser)
    _output_arguments(parser)
    _release_arguments(parser)
    _sampler_arguments(parser)
    from ppmlib.release import survey
    survey.add_arguments(parser)
    return parser


def _data_arguments(parser) -> None:
    parser.add_argument("data", help="a .csv or .parquet file, or 'cps1988' (the public CPS 1988 wage file)")
    parser.add_argument("--column", required=True, help="the sensitive column to synthesize")
    parser.add_argument("--model", default="auto", choices=("auto",) + _data.COUNT_MODELS + _data.LOG_MODELS,
                        help="poisson / negbin for counts; for log(column) on the predictors: normal (main "
                             "effects), interactions (every pairwise interaction of the categorical predictors), "
                             "hetero (interactions for the mean and for the log scale: each cell its own spread) "
                             "or mixture; auto (default): negbin for counts without predictors, else "
                             f"{_data._auto_log_model()}, the log model that measured best on public wage files "
                             "(benchmarks/bench_models.py), chosen without looking at your file, so the choice "
                             "costs no privacy; choosing a model after looking at your confidential file spends "
                             "privacy that no guarantee of the release counts")
    parser.add_argument("--predictors", default="", metavar="A,B,C",
                        help="comma-separated predictors of the regression models: text columns become one-hot "
                             "columns (first level as reference), numeric ones are standardized")
    parser.add_argument("--drop-missing", action="store_true", help="drop records with missing values (counted "
                        "in the report) instead of refusing them")
    parser.add_argument("--max-levels", type=int, default=MAX_LEVELS,
                        help=f"most levels of a categorical predictor (default {MAX_LEVELS})")
    parser.add_argument("--encoding", default=None, help="the CSV file's encoding (default: detected, else UTF-8)")


def _mechanism_arguments(parser) -> None:
    parser.add_argument("--weighting", default="lw", choices=weightings(),
                        help="record weights: lw (Lipschitz weights, default), lw_final (LW re-weighted to use "
                             "the same Delta better), cw (count weights; needs --radius)")
    parser.add_argument("--epsilon", type=float, default=None, metavar="E",
                        help="calibrate LW so that each dataset is E-DP (fails with the reachable range)")
    parser.add_argument("--guarantee", default="strict", choices=GUARANTEES,
                        help="strict (default): epsilon-DP for every database (--strict-scheme); local: the "
                             "pseudo posterior mechanism, epsilon = 2 Delta for this file only")
    parser.add_argument("--total-epsilon", type=float, default=None, metavar="E",
                        help="the release's total epsilon at --delta: the per-dataset epsilon is solved from it")
    parser.add_argument("--delta", type=float, default=1e-6, metavar="D",
                        help="the release's delta for the zCDP ledger (default 1e-6)")
    parser.add_argument("--radius", type=float, default=None, help="CW's policy radius, on the model's scale")
    parser.add_argument("--relative", action="store_true", help="CW's radius is a fraction of each value")
    parser.add_argument("--m", type=int, default=20, help="synthetic datasets to release (cost m * epsilon; default 20)")
    parser.add_argument("--budget", type=float, default=None, help="refuse a release whose m * epsilon exceeds this")
    parser.add_argument("--seed", type=int, default=0, help="seed of every fit and synthetic value (default 0)")


def _output_arguments(parser) -> None:
    parser.add_argument("--out", required=True,
                        help="new (or empty) folder for the release: the datasets (--format) and their manifest "
                             "synthetic.json")
    parser.add_argument("--report", default=None, metavar="FILE",
                        help="where the confidential report goes (default: OUT.report-confidential.html, beside "
                             "--out, never inside it: it summarizes the confidential data)")
    parser.add_argument("--no-report", action="store_true", help="write the release only")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a previous release (and report) of ppm-synthesize; nothing else is replaced")
    parser.add_argument("--allow-failed-fits", action="store_true",
                        help="release even when a fit fails the diagnostics gate (the manifest says so)")


def _release_arguments(parser) -> None:
    parser.add_argument("--keep", default="", metavar="A,B",
                        help="columns you declare public, released as they are beside the predictors; every other "
                             "column is dropped from the release (the manifest names them)")
    parser.add_argument("--format", default=None, choices=("csv", "parquet"),
                        help="csv (default): synthetic_1.csv ... synthetic_M.csv, one per dataset; parquet: one "
                             "synthetic.parquet with a dataset column (1..M)")
    parser.add_argument("--dask", dest="client", default=None, metavar="ADDRESS",
                        help="run on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:8786), over the row "
                             "groups of DATA, which must be a .parquet file at a path every worker can read (row "
                             "groups of a multiple of 65536 records); --out must be on storage every worker can "
                             "write. Only --model normal (or auto) with --guarantee local: the strict guarantee's "
                             "censored fit needs every record in one process, so it is refused. Numeric predictors "
                             "only (encode categories as 0/1 columns). LW at c = 1, or calibrated to --epsilon. The "
                             "release is one Parquet file per row group, synthetic.part-00000.parquet ..., each with "
                             "a dataset column (1..M). No report "
                             "is written: it needs every record in one process, and the client holds only sums. A "
                             "scheduler that does not answer within 30 s is an error naming the address")


RELEASE_HELP = (
    "What the release contains (--out): each synthetic dataset is your table with the --column's values "
    "replaced by synthetic ones, rows in your file's order (records dropped by --drop-missing are not in it). "
    "Only public columns go in with it: the --predictors (the model treats them as public) and the columns "
    "named by --keep; every other column is dropped, and the manifest and the summary name the dropped "
    "columns. --format csv: synthetic_1.csv ... synthetic_M.csv; --format parquet: one synthetic.parquet "
    "with a 'dataset' column (1..M). synthetic.json, the manifest, lists every file with its SHA-256, the "
    "synthesized, kept and dropped columns, and the privacy budget; ppmlib.release.load(OUT) checks every "
    "hash and returns the datasets stacked.")




def _sampler_arguments(parser) -> None:
    parser.add_argument("--chains", type=int, default=4, help="Markov chains per fit (default 4)")
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain after as many warmup (default 1000)")


def _sampler_of(args) -> Sampler:
    return Sampler(chains=args.chains, draws=args.draws, warmup=args.draws)


def _call(args):
    """:func:`synthesize` with the command's arguments: the plan and the draws first, ``--out`` and
    ``--report`` before the data are read."""
    from ppmlib.release import survey
    report = False if args.no_report else (args.report if args.report is not None else True)
    if _survey(args):
        problem = survey.flag_problem(args)
        if problem is not None:
            raise BadArgument(problem)
    plan = privacy_plan(args.guarantee, args.weighting, args.epsilon, args.total_epsilon, args.delta, args.m,
                        args.radius, args.relative, args.budget, args.strict_scheme, args.log_bounds, args.bin_width,
                        args.posterior_draws, args.bounds_share)
    sampler = _sampler_of(args)
    if _survey(args):               # exact draws: no chain for the gate to judge, so no check_draws
        pipeline.targets(args.out, report, args.overwrite, _data.inputs_of(args.data))   # before the data are read
        table = survey.read(args.data, args.column, args.weights, cells=args.predictors, strata=args.strata,
                            psu=args.psu, keep=args.keep, drop_missing=args.drop_missing, max_levels=args.max_levels,
                            encoding=args.encoding, format=args.format)
        return synthesize(table, plan, sampler=sampler, seed=args.seed, out=args.out, report=report,
                          overwrite=args.overwrite, allow_failed_fits=args.allow_failed_fits)
    check_draws(sampler, plan.m)
    if args.client is not None:
        from ppmlib.release import cluster
        cluster.refuse(plan, report)
        table = cluster.read(args.data, args.column, predictors=args.predictors, keep=args.keep, model=args.model,
                             drop_missing=args.drop_missing, format=args.format)
    else:
        pipeline.targets(args.out, report, args.overwrite, _data.inputs_of(args.data))   # before the data are read
        table = _data.read(args.data, args.column, model=args.model, predictors=args.predictors, keep=args.keep,
                           drop_missing=args.drop_missing, max_levels=args.max_levels, encoding=args.encoding,
                           format=args.format or "csv")
    return synthesize(table, plan, sampler=sampler, seed=args.seed, out=args.out, report=report,
                      overwrite=args.overwrite, allow_failed_fits=args.allow_failed_fits, client=args.client)


def _survey(args) -> bool:
    """The survey path: --weights (or --strata or --psu, which need it)."""
    return args.weights is not None or bool(args.strata) or bool(args.psu)


# Python's words in an error that are not written name=value, and the flag a user of the command sets instead
_FLAGS = {"(max_levels)": "(--max-levels)"}


def _in_flags(message: str, parser: argparse.ArgumentParser | None = None) -> str:
    """An error of :func:`synthesize` in the command's words: every argument the message names as
    ``name=value`` becomes the flag (``weighting='cw'`` -> ``--weighting cw``, ``drop_missing=True``
    -> ``--drop-missing``, ``radius=R`` -> ``--radius R``, ``epsilon=`` alone -> ``--epsilon``)."""
    for words, flag in _FLAGS.items():
        message = message.replace(words, flag)
    for action in (parser or _parser())._actions:
        if not action.option_strings or action.dest == "help":
            continue
        flag, name = max(action.option_strings, key=len), re.escape(action.dest)
        message = re.sub(rf"\b{name}=True\b", flag, message)
        message = re.sub(rf"\b{name}='([\w.-]+)'", rf"{flag} \1", message)
        message = re.sub(rf"\b{name}=(?=[^\s:;,)])", f"{flag} ", message)
        message = re.sub(rf"\b{name}=", flag, message)
    return message




def _cluster_summary(args, results) -> str:
    """The summary of a run over partitions (:mod:`ppmlib.release.cluster`): no records at the client."""
    from ppmlib.release.cluster import NO_REPORT
    chosen = results[results.released]
    stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in results.seconds.items())
    return "\n".join([f"released {results.m} synthetic datasets of {args.column!r} ({results.n} records, model normal, "
                      f"{chosen.name}) to {results.out}: {len(results.files)} Parquet files, one per row group",
                      _data.summary_columns(results.columns),
                      privacy_lines(chosen, results.m, results.delta),
                      gate_line(results.verdict),
                      f"stages: {stages}", NO_REPORT])


def _summary(args, results) -> str:
    from ppmlib.release import survey
    if getattr(args, "client", None) is not None:
        return _cluster_summary(args, results)
    if isinstance(results, survey.SurveyRun):
        return survey.summary(results)
    chosen, prepared = results[results.released], results.prepared
    m = chosen.synthetic.shape[0]
    gate = gate_line(results.verdict)
    model = "no model fit" if results.plan.bins is not None else f"model {prepared.model}"
    lines = [f"released {m} synthetic datasets of {args.column!r} ({prepared.n} records, {model}, "
             f"{chosen.name}) to {results.out}",
             _data.summary_columns(results.columns),
             privacy_lines(chosen, m, results.delta),
             gate]
    if results.report is not None:
        lines.append(f"report (confidential, not for publication): {results.report}")
    return "\n".join(lines)




def main(argv=None) -> int:
    """The command line (see ``--help``); returns the exit status: 0 done, 2 refused (nothing written).

    SIGINT, SIGTERM and SIGHUP stop a run at once: its temporary files and child processes are
    removed and the process exits with 128 + the signal's number.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program's name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when the release (and report) are written; 2 when :func:`synthesize`
        refuses or fails, with the reason on stderr. ``--help`` and malformed arguments exit through
        argparse instead (SystemExit 0 and 2).
    """
    args = _parser().parse_args(argv)
    from ppmlib.errors import BackendUnavailable, CalibrationFailed
    previous = _staging.on_signals()
    try:
        _staging.sweep()
        said = _summary(args, _call(args))
    except (ValueError, TypeError, OSError, ArithmeticError, CalibrationFailed, FitsFailed, ReportFailed,
            BackendUnavailable) as err:
        print(f"error: {_in_flags(str(err))}\nnothing was written to {args.out}", file=sys.stderr)
        return 2
    except Exception as err:   # a bug: one line, without its message (which could quote a value of the data)
        if os.environ.get("PPMLIB_DEBUG"):
            raise
        print(f"error: ppm-synthesize stopped on an unexpected {type(err).__name__}, a bug: rerun with PPMLIB_DEBUG=1 "
              f"to see where, and report it with the command line\nnothing was written to {args.out}", file=sys.stderr)
        return 2
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)
    print(said)
    return 0


if __name__ == "__main__":
    sys.exit(main())
