"""The release as the user's own table: each synthetic dataset is the table with the column replaced.

synthpop's convention: dataset l is the user's table, rows in their original order, with the
synthesized column's values replaced by the l-th synthetic draw. A release never carries
confidential values, so only public columns go in with it (:func:`public_columns`): the columns
the model treats as public (its predictors; a survey design's strata and psu) and those the user
declares public (``keep``). Every other column is dropped, and the manifest names the dropped
columns (names only, never a value).

Two formats (``FORMATS``), in one folder:

* ``csv``: ``synthetic_1.csv`` ... ``synthetic_m.csv``, one file per dataset;
* ``parquet``: one ``synthetic.parquet`` holding the m datasets stacked, with a ``dataset``
  column (1 ... m) first; one row group per dataset. A release made over the row groups of a
  Parquet file on a cluster (``ppm-synthesize --dask``) has one such file per input row group
  instead, ``synthetic.part-00000.parquet`` ... (:func:`part_file`), each holding the m datasets
  of that row group's records; :func:`load_folder` stacks them back in the input's order.

The manifest ``synthetic.json`` lists every file with its SHA-256, says which column is
synthesized, which are kept (public by the model, declared public) and which dropped.
:func:`write_folder` writes into an empty folder (the command's staging folder, published by one
rename); :func:`release_folder` does the same for the Python API, in a temporary folder beside the
target renamed into place; :func:`load_folder` returns the stacked table after checking every hash.
"""
from __future__ import annotations

__all__ = ["FORMATS", "MANIFEST", "PARTS_ROWS", "DATASET", "Columns", "public_columns", "dataset_files", "part_file",
           "file_sha256", "is_release_file", "write_manifest", "write_folder", "release_folder", "load_folder"]

import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ppmlib.errors import BadArgument, DataRefused

if TYPE_CHECKING:
    import pandas as pd

#: The release formats: one CSV per dataset, or one Parquet file with a dataset column.
FORMATS = ("csv", "parquet")
#: The manifest's file name in a release folder.
MANIFEST = "synthetic.json"
#: How the rows of a release written one file per row group of the input are laid out (the manifest's "rows").
PARTS_ROWS = ("the input's records in their original order: one file per input row group, each holding the m "
              "datasets (the dataset column, one Parquet row group each)")
#: The column of a stacked table (Parquet release, :func:`load_folder`) that numbers the datasets 1 ... m.
DATASET = "dataset"
_STEM = "synthetic"
_CSV_FILE = re.compile(r"synthetic_[1-9][0-9]*\.csv")
_PART_FILE = re.compile(r"synthetic\.part-[0-9]{5,}\.parquet")


@dataclass(frozen=True)
class Columns:
    """Which of the user's columns a release carries, in the table's order.

    Attributes
    ----------
    order : tuple of str
        The released columns in the user's order: the synthesized one and the kept ones.
    synthesized : str
        The column whose values are synthetic.
    public_by_model : tuple of str
        Kept because the model treats them as public (predictors, strata, psu).
    declared_public : tuple of str
        Kept because the user declared them public (``keep``).
    dropped : tuple of str
        Every other column of the table: not released.
    also_synthesized : tuple of str
        Columns synthesized together with ``synthesized`` (a survey's sampling weight): their values
        are synthetic too, dataset by dataset.
    """
    order: tuple
    synthesized: str
    public_by_model: tuple
    declared_public: tuple
    dropped: tuple
    also_synthesized: tuple = ()

    @property
    def all_synthesized(self) -> tuple:
        """Every column whose values are synthetic: ``synthesized``, then ``also_synthesized``."""
        return (self.synthesized, *self.also_synthesized)

    def to_dict(self) -> dict:
        """The manifest's ``columns`` entry (names only).

        Returns
        -------
        dict
            ``synthesized``, ``kept_public_by_model``, ``kept_declared_public``, ``dropped`` and ``order``;
            ``also_synthesized`` when a column is synthesized with ``synthesized``.
        """
        also = {"also_synthesized": list(self.also_synthesized)} if self.also_synthesized else {}
        return {"synthesized": self.synthesized, **also, "kept_public_by_model": list(self.public_by_model),
                "kept_declared_public": list(self.declared_public), "dropped": list(self.dropped),
                "order": list(self.order)}


def _names(value, what: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    names = tuple(value)
    if not all(isinstance(v, str) for v in names):
        raise TypeError(f"{what} must be column names (str), got {names!r}")
    return names


def public_columns(names, column: str, public=(), keep=(), also=()) -> Columns:
    """Decide which columns of a table go into the release, before anything is fitted.

    Parameters
    ----------
    names : sequence of str
        Every column of the user's table, in its order.
    column : str
        The synthesized column.
    public : sequence of str or str
        The columns the model treats as public (its predictors; strata and psu).
    keep : sequence of str or str
        Columns the user declares public ("A,B" or a list).
    also : sequence of str or str
        Columns synthesized together with ``column`` (a survey's sampling weight).

    Returns
    -------
    Columns

    Raises
    ------
    DataRefused
        A ``keep``, ``public`` or ``also`` name the table lacks.
    BadArgument
        ``keep`` or ``public`` names a synthesized column (its values are the confidential ones), or
        ``also`` repeats ``column``.
    """
    names = tuple(names)
    public, keep, also = _names(public, "public"), _names(keep, "keep"), _names(also, "also")
    if column not in names:
        raise DataRefused(f"column {column!r} not in the data; it has {list(names)}")
    missing = [c for c in (*public, *keep, *also) if c not in names]
    if missing:
        raise DataRefused(f"keep: column(s) {missing} not in the data; it has {list(names)}")
    if column in also or len(set(also)) < len(also):
        raise BadArgument(f"the synthesized columns {[column, *also]} name one column twice; each is synthesized once")
    for c in (column, *also):
        if c in keep:
            raise BadArgument(f"keep names the synthesized column {c!r}: its values are the confidential ones, "
                              "and the release carries its synthetic values instead")
        if also and c in public:
            raise BadArgument(f"the synthesized column {c!r} is also a public column of the model (a predictor, "
                              "stratum or psu); a column is either synthesized or released as it is")
    by_model = tuple(c for c in names if c in public and c != column)
    declared = tuple(c for c in names if c in keep and c not in by_model)
    order = tuple(c for c in names if c == column or c in also or c in by_model or c in declared)
    dropped = tuple(c for c in names if c not in order)
    return Columns(order, column, by_model, declared, dropped, tuple(c for c in names if c in also))


def dataset_files(m: int, fmt: str) -> list:
    """The data files of a release of m datasets.

    Parameters
    ----------
    m : int
    fmt : str
        "csv" or "parquet".

    Returns
    -------
    list of str
        ``synthetic_1.csv`` ... ``synthetic_m.csv``, or ``["synthetic.parquet"]``.
    """
    _check_format(fmt)
    return [f"{_STEM}_{l}.csv" for l in range(1, m + 1)] if fmt == "csv" else [f"{_STEM}.parquet"]


def part_file(index: int) -> str:
    """The file of one input row group in a release made over partitions: ``synthetic.part-00000.parquet``.

    Parameters
    ----------
    index : int
        The row group's number.

    Returns
    -------
    str
    """
    return f"{_STEM}.part-{int(index):05d}.parquet"


def is_release_file(name: str) -> bool:
    """True for a file name a release folder may hold (a dataset file or the manifest).

    Parameters
    ----------
    name : str

    Returns
    -------
    bool
    """
    return name in (MANIFEST, f"{_STEM}.parquet") or bool(_CSV_FILE.fullmatch(name) or _PART_FILE.fullmatch(name))


def _check_format(fmt) -> str:
    if fmt not in FORMATS:
        raise BadArgument(f"unknown release format {fmt!r}; choose {' or '.join(FORMATS)}")
    return fmt


def _dataset(table: "pd.DataFrame", columns: Columns, values: np.ndarray) -> "pd.DataFrame":
    """One synthetic dataset: the table's kept columns and, in their places, the synthesized ones' ``values``
    ((n,), or (n, J) for ``columns.all_synthesized``; ``table`` need not hold the confidential columns)."""
    synthesized = columns.all_synthesized
    frame = table.loc[:, [c for c in columns.order if c not in synthesized]].reset_index(drop=True)
    values = np.asarray(values).reshape(len(frame), -1)
    for name in sorted(synthesized, key=columns.order.index):
        frame.insert(columns.order.index(name), name, values[:, synthesized.index(name)])
    return frame


def file_sha256(path, sync: bool = False) -> str:
    """The SHA-256 of a written file, read in blocks of 1 MiB.

    Parameters
    ----------
    path : str or PathLike
        The file.
    sync : bool
        Also flush it to storage (``os.fsync``): a file another process wrote, on shared storage.

    Returns
    -------
    str
        The hex digest.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        if sync:
            os.fsync(handle.fileno())
    return digest.hexdigest()


def _write_bytes(path: Path, data: bytes) -> str:
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return hashlib.sha256(data).hexdigest()


def _rows_text(table, names: list) -> list | None:
    """The columns ``names`` of every row as CSV text (quoted as pandas quotes), one string per row;
    None when a field holds a line break (then rows cannot be told apart by splitting)."""
    if not names:
        return [""] * len(table)
    rows = table.loc[:, names].to_csv(index=False, header=False, lineterminator="\n").split("\n")[:-1]
    return rows if len(rows) == len(table) else None


def _csv_texts(values: np.ndarray, table, columns: Columns):
    """Each dataset's CSV text. The kept columns are rendered once and only the synthesized one per
    dataset (numbers as Python writes them: the shortest text that reads back the same number)."""
    i = columns.order.index(columns.synthesized)
    before, after = list(columns.order[:i]), list(columns.order[i + 1:])
    left, right = (None, None) if columns.also_synthesized else (_rows_text(table, before), _rows_text(table, after))
    if left is None or right is None:   # (several synthesized columns: each dataset rendered whole too)    # a line break inside a kept field: render each dataset whole
        for l in range(values.shape[0]):
            yield _dataset(table, columns, values[l]).to_csv(index=False, lineterminator="\n")
        return
    import pandas as pd
    header = pd.DataFrame(columns=list(columns.order)).to_csv(index=False, lineterminator="\n")
    left = [text + "," for text in left] if before else left
    right = [("," + text if after else text) + "\n" for text in right]
    for l in range(values.shape[0]):
        yield header + "".join(map("".join, zip(left, map(repr, values[l].tolist()), right)))


def _write_csvs(values: np.ndarray, table, columns: Columns, folder: Path) -> list:
    files = []
    names = dataset_files(values.shape[0], "csv")
    for l, (name, text) in enumerate(zip(names, _csv_texts(values, table, columns))):
        files.append({"file": name, "dataset": l + 1, "sha256": _write_bytes(folder / name, text.encode("utf-8"))})
    return files


def _write_parquet(values: np.ndarray, table, columns: Columns, folder: Path) -> list:
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = dataset_files(values.shape[0], "parquet")[0]
    writer = None
    try:
        for l in range(values.shape[0]):
            frame = _dataset(table, columns, values[l])
            frame.insert(0, DATASET, np.full(len(frame), l + 1, dtype=np.int64))
            chunk = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(folder / name, chunk.schema)
            writer.write_table(chunk)
    finally:
        if writer is not None:
            writer.close()
    with open(folder / name, "rb+") as handle:
        os.fsync(handle.fileno())
    return [{"file": name, "datasets": f"1-{values.shape[0]}", "sha256": file_sha256(folder / name)}]


def write_folder(values: np.ndarray, table: "pd.DataFrame", columns: Columns, folder, meta: dict,
                 fmt: str = "csv") -> list:
    """Write a release into an empty folder: the dataset files, then the manifest.

    Parameters
    ----------
    values : ndarray, shape (m, n), or (m, n, J)
        The synthetic values of the column, in its units (integers stay integers); with
        ``columns.also_synthesized``, J = 1 + its length, the columns of ``columns.all_synthesized``.
    table : pandas.DataFrame, shape (n, ...)
        The user's records in their order, holding at least the kept columns (the synthesized
        one need not be there).
    columns : Columns
        What is released (:func:`public_columns`).
    folder : str or PathLike
        An existing empty folder (a staging folder: publish it by one rename).
    meta : dict
        The manifest's entries about the privacy budget (:func:`ppmlib.release.release` builds them);
        ``files``, ``format`` and ``columns`` are added here.
    fmt : str
        "csv" (one file per dataset) or "parquet" (one file, a ``dataset`` column).

    Returns
    -------
    list of dict
        The manifest's ``files``: each file's name, its dataset(s) and SHA-256.

    Raises
    ------
    BadArgument
        ``values`` is not (m, n) with n the table's rows; an unknown format.
    """
    _check_format(fmt)
    values = np.asarray(values)
    J = len(columns.all_synthesized)
    expected = 2 if J == 1 else 3
    if values.ndim != expected or values.shape[1] != len(table) or (J > 1 and values.shape[2] != J):
        shape = "(m, n)" if J == 1 else f"(m, n, {J})"
        raise BadArgument(f"synthetic values must be {shape} with n = {len(table)} (the table's rows), "
                          f"got shape {values.shape}")
    folder = Path(folder)
    writer = _write_csvs if fmt == "csv" else _write_parquet
    files = writer(values, table, columns, folder)
    write_manifest(folder, meta, fmt, files, columns,
                   "the input's records in their original order, one synthetic dataset per file (csv) or "
                   "per value of the dataset column (parquet)")
    return files


def write_manifest(folder, meta: dict, fmt: str, files: list, columns: Columns, rows: str) -> None:
    """The manifest of a release folder, written last (a folder without it is no release).

    Parameters
    ----------
    folder : str or PathLike
        The release folder, holding ``files``.
    meta : dict
        The privacy budget's entries (``ppmlib.release.publish.manifest``) and any extra.
    fmt : str
        "csv" or "parquet".
    files : list of dict
        Each file's name, its dataset(s) (and rows) and SHA-256.
    columns : Columns
        What is released.
    rows : str
        How the rows are laid out, in words.
    """
    document = {**meta, "format": fmt, "files": files, "columns": columns.to_dict(), "rows": rows}
    text = json.dumps(document, indent=2, allow_nan=False) + "\n"
    _write_bytes(Path(folder) / MANIFEST, text.encode("utf-8"))


def release_folder(values: np.ndarray, table: "pd.DataFrame", columns: Columns, path, meta: dict,
                   fmt: str = "csv", overwrite: bool = False) -> Path:
    """:func:`write_folder` into a temporary folder beside ``path``, renamed into place in one step.

    Parameters
    ----------
    values, table, columns, meta, fmt : as for :func:`write_folder`.
    path : str or PathLike
        The release folder: absent or empty, or (with ``overwrite``) a previous release.
    overwrite : bool
        Replace a previous release in ``path`` (a folder holding only release files).

    Returns
    -------
    pathlib.Path
        The release folder.

    Raises
    ------
    FileExistsError
        ``path`` holds files and ``overwrite`` is False, or holds files that are not a release.
    """
    target = Path(os.fspath(path))
    previous = target.exists() and (not target.is_dir() or any(target.iterdir()))
    if previous:
        if not overwrite:
            raise FileExistsError(f"{str(target)!r} exists and is not empty; pass overwrite=True to replace a "
                                  "previous release")
        if not target.is_dir() or not all(is_release_file(p.name) for p in target.iterdir()):
            raise FileExistsError(f"{str(target)!r} holds files that are not a release; nothing is replaced")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.staging-"))
    try:
        (staging / "release").mkdir()
        write_folder(values, table, columns, staging / "release", meta, fmt)
        if previous:
            from ppmlib._files import exchange_paths
            if not exchange_paths(staging / "release", target):    # one step where the system can; else two renames
                os.rename(target, staging / "previous")
                os.rename(staging / "release", target)
        else:
            if target.exists():
                target.rmdir()
            os.rename(staging / "release", target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _checked_bytes(folder: Path, entry: dict) -> bytes:
    name = entry.get("file", "")
    if not is_release_file(name) or name == MANIFEST:
        raise DataRefused(f"the manifest in {str(folder)!r} names {name!r}, which is not a release file")
    raw = (folder / name).read_bytes()
    if hashlib.sha256(raw).hexdigest() != entry.get("sha256"):
        raise DataRefused(f"{str(folder / name)!r} is not the file that the manifest describes (SHA-256 differs): "
                          "a torn or altered release; write it again")
    return raw


def load_folder(folder) -> tuple["pd.DataFrame", dict]:
    """Read a release folder back as one stacked table, after checking every file's SHA-256.

    Parameters
    ----------
    folder : str or PathLike
        A release folder (:func:`write_folder`).

    Returns
    -------
    (pandas.DataFrame, dict)
        The m datasets stacked, with a ``dataset`` column (1 ... m) first, rows of each dataset in
        the original order; and the manifest.

    Raises
    ------
    FileNotFoundError
        The manifest or a file it lists is missing.
    DataRefused
        A file's SHA-256 is not the manifest's, or the manifest lists no files.
    """
    import pandas as pd

    folder = Path(folder)
    meta = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    files = meta.get("files")
    if not isinstance(files, list) or not files:
        raise DataRefused(f"the manifest in {str(folder)!r} lists no dataset files")
    if meta.get("format") == "parquet":
        import pyarrow.parquet as pq
        parts = [pq.read_table(io.BytesIO(_checked_bytes(folder, entry))).to_pandas() for entry in files]
        if len(parts) == 1:
            return parts[0], meta
        # one file per input row group: dataset by dataset, each in the input's order (a stable sort)
        stacked = pd.concat(parts, ignore_index=True)
        return stacked.sort_values(DATASET, kind="stable").reset_index(drop=True), meta
    frames = []
    for entry in files:
        frame = pd.read_csv(io.BytesIO(_checked_bytes(folder, entry)))
        frame.insert(0, DATASET, int(entry["dataset"]))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True), meta
