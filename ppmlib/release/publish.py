"""Release synthetic data: the m datasets and their privacy budget, and nothing else.

:func:`ppmlib.release.release` writes two files side by side, ``<path>.csv`` (one column per synthetic dataset)
and ``<path>.json``, the manifest (epsilon per dataset, the total m * epsilon, the neighbour relation,
what the guarantee does not cover, and the SHA-256 of the CSV). Both are written to temporary files,
fsynced, and renamed into place, the manifest last: if any step fails, the previous release (or
none) is left exactly as it was and no temporary file remains; if the process dies between the two
renames, :func:`load` sees that the manifest's hash does not match the CSV and refuses the torn pair.
A release never carries the weights alpha, the by-record bounds, the parameter draws or any
confidential value: those are exactly what a release must not carry (a record's weight or bound
says how unusual it is).
"""
from __future__ import annotations

__all__ = ["NEIGHBOURS", "COVERS", "DOES_NOT_COVER", "manifest", "release", "load"]

import hashlib
import io
import json
import math
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ppmlib import _checks
from ppmlib.errors import BadArgument, BudgetExceeded, DataRefused
from ppmlib._files import write_texts_atomically

if TYPE_CHECKING:
    import pandas as pd

    from ppmlib.mechanism.synthesis import Synthesis

NEIGHBOURS = ("removal neighbours of this database: epsilon = 2 Delta covers the n databases with one of its "
              "records removed; adding an arbitrary record is not covered; under replace-one neighbours "
              "(one record changed) the same draws cost 4 Delta")
COVERS = ("Each synthetic dataset is made from one draw of the alpha-weighted pseudo posterior; each draw is "
          "epsilon = 2 Delta differentially private for this database against its removal neighbours (a local "
          "guarantee, Delta estimated from the draws). The m datasets compose: at most m * epsilon by basic "
          "composition; the ledger states the release's (epsilon, delta).")
DOES_NOT_COVER = ("The guarantee treats the record weights as fixed. The weights, and any scalar tuned on the "
                  "confidential data (c, g, radius, the re-weighting constant k, a matched Delta), depend on "
                  "the data, and the privacy cost of choosing them is not counted; nor is publishing epsilon itself. "
                  "The release reveals the number of records n exactly (every dataset has n rows): removal "
                  "neighbours have n - 1 records, so n itself is not protected.")


def _paths(path) -> tuple[Path, Path]:
    """``<path>.csv`` and ``<path>.json``: a ``.csv`` or ``.json`` suffix is dropped, any other kept
    (``lw.v1`` -> ``lw.v1.csv``); a folder is refused (it has no file name to extend)."""
    if not isinstance(path, (str, os.PathLike)) or not isinstance(os.fspath(path), str):
        raise TypeError(f"path must be a file path (str or PathLike), got {type(path).__name__}")
    text = os.fspath(path)
    stem = Path(text)
    if text.endswith(("/", os.sep)) or stem.is_dir() or stem.name in ("", ".", ".."):
        raise BadArgument(f"path {text!r} names a folder; give a file name in it, e.g. {str(stem / 'release')!r}")
    if stem.suffix in (".csv", ".json"):
        stem = stem.with_suffix("")
    return stem.with_name(stem.name + ".csv"), stem.with_name(stem.name + ".json")


def _model(synthesis) -> dict:
    """The model; for a joint synthesis (``ppmlib.mechanism.joint``), each variable's and what its epsilon covers
    (a synthesis that describes itself, as the survey pair does, by its ``model_entry()``)."""
    if hasattr(synthesis, "model_entry"):
        return synthesis.model_entry()
    if not hasattr(synthesis, "variables"):
        return {"model": synthesis.fit.model.name}
    return {"model": {v: p.fit.model.name for v, p in synthesis.parts.items()}, "variables": list(synthesis.variables),
            "epsilon_covers": "the whole record: one joint bound Delta on the sum of the record's conditional "
                              "log-likelihoods, epsilon = 2 Delta for all its variables together"}


def _epsilon(synthesis: "Synthesis") -> float:
    """The synthesis's epsilon per dataset, refused unless it is a finite number >= 0 (a NaN would
    pass every budget comparison, and an infinite one promises nothing)."""
    eps = synthesis.epsilon
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise TypeError(f"synthesis.epsilon must be a number, got {type(eps).__name__}")
    if not math.isfinite(eps) or eps < 0:
        raise BadArgument(f"release refused: epsilon per dataset is {eps}, not a finite number >= 0, so the release "
                         "has no privacy guarantee to state. Nothing was written.")
    return float(eps)


def _strict_text(synthesis: "Synthesis") -> dict:
    """The neighbours, guarantee and caveats of a censored (strict) synthesis, in the ledger's words."""
    from ppmlib.mechanism.ledger import SCOPES
    covers = SCOPES[synthesis.guarantee]
    return {"neighbours": covers,
            "guarantee": ("Each synthetic dataset is made from one draw of the censored posterior (every record's "
                          "term clipped into [-epsilon/2, epsilon/2]); each draw is epsilon-DP and "
                          f"epsilon-bounded-range for {covers}. The ledger states the release's total."),
            "not_covered": _ledger_not_covered(synthesis.guarantee)}


def _ledger_not_covered(guarantee: str) -> str:
    """What the ledger's guarantee word leaves out (:data:`ppmlib.mechanism.ledger` wording).

    Parameters
    ----------
    guarantee : str
        A key of :data:`ppmlib.mechanism.ledger.SCOPES`.

    Returns
    -------
    str
    """
    from ppmlib.mechanism.ledger import NOT_COVERED
    return NOT_COVERED[guarantee]


def manifest(synthesis: "Synthesis", csv_name: str, max_epsilon: float | None, csv_sha256: str = "",
             delta: float = 1e-6) -> dict:
    """The JSON half of a release: what was released and what it costs (no data, no weights).

    Parameters
    ----------
    synthesis : Synthesis
        The released synthesizer.
    csv_name : str
        The CSV's file name (beside the manifest).
    max_epsilon : float or None
        The budget the release was checked against.
    csv_sha256 : str
        Hex SHA-256 of the CSV's bytes: :func:`ppmlib.release.load` checks it, so a manifest beside another CSV is caught.
    delta : float
        The delta at which the ledger converts the release's zCDP to (epsilon, delta).

    Returns
    -------
    dict
        Synthesizer, model, file, m, n, epsilon per dataset and in total, the composition rule,
        the neighbours covered, the guarantee and what it does not cover, and the ledger
        (:mod:`ppmlib.mechanism.ledger`: rho, the zCDP total at delta, whom each number covers):
        only numbers and text (valid JSON: no NaN, no infinity), and the CSV's SHA-256.
    """
    from ppmlib.mechanism.ledger import of_release
    m, n = synthesis.shape if _written(synthesis) else synthesis.synthetic.shape[:2]
    if _noisy(synthesis):
        return _noisy_manifest(synthesis, csv_name, max_epsilon, csv_sha256)
    epsilon = _epsilon(synthesis)
    guarantee = getattr(synthesis, "guarantee", "local")
    text = {"neighbours": NEIGHBOURS, "guarantee": COVERS, "not_covered": DOES_NOT_COVER} if guarantee == "local" \
        else _strict_text(synthesis)
    book = of_release(synthesis, delta, m=int(m)).to_dict() if epsilon > 0 else None
    return {
        "synthesizer": synthesis.name,
        **_model(synthesis),
        "datasets_file": csv_name,
        "datasets_sha256": csv_sha256,
        "m_datasets": int(m),
        "n_records_per_dataset": int(n),
        "epsilon_per_dataset": epsilon,
        "total_epsilon": m * epsilon,
        "composition": "sequential: m datasets from m draws cost m * epsilon",
        "budget_max_epsilon": max_epsilon,
        **text,
        "ledger": book,
    }


def _written(synthesis) -> bool:
    """A synthesis whose datasets are files already written, one per row group of the input
    (:class:`ppmlib.mechanism.partitioned_lw.WrittenParts`): only its manifest is left to write."""
    return not hasattr(synthesis, "synthetic") and isinstance(getattr(synthesis, "files", None), list)


def _noisy(synthesis) -> bool:
    """A release of noisy sufficient statistics (:class:`ppmlib.mechanism.nss.NSSRelease`): its
    privacy is the noisy release's, whatever m is."""
    return getattr(synthesis, "statistics", None) is not None


def _noisy_manifest(synthesis, csv_name: str, max_epsilon, csv_sha256: str) -> dict:
    """The manifest of a noisy-statistics release: every privacy field from its ledger
    (:class:`ppmlib.mechanism.ledger.NoisyReleaseLedger`); no epsilon per dataset (there is none)."""
    from ppmlib.mechanism.ledger import of_release
    book = of_release(synthesis)
    m, n = synthesis.synthetic.shape[:2]
    return {
        "synthesizer": synthesis.name,
        "model": book.released,
        "datasets_file": csv_name,
        "datasets_sha256": csv_sha256,
        "m_datasets": int(m),
        "n_records_per_dataset": int(n),
        "epsilon_per_dataset": None,
        "total_epsilon": book.total[0],
        "composition": "post-processing: the m datasets are drawn from one noisy release, so m and k do not "
                       "change its cost",
        "budget_max_epsilon": max_epsilon,
        "neighbours": book.scope,
        "guarantee": "; ".join(book.statement()[1:3] + book.statement()[4:]),
        "not_covered": book.not_covered,
        "ledger": book.to_dict(),
    }


def _columns(values: np.ndarray, variables) -> dict:
    """CSV columns dataset_1 ... dataset_m, or dataset_1_<variable> ... for a joint (m, n, J) synthesis."""
    if values.ndim == 2:
        return {f"dataset_{l + 1}": values[l] for l in range(values.shape[0])}
    return {f"dataset_{l + 1}_{v}": values[l, :, j] for l in range(values.shape[0]) for j, v in enumerate(variables)}


#: Integers beyond this are not exact in a float, nor in most CSV readers' numbers.
EXACT_INTEGERS = 2 ** 53


def _as_written(data: np.ndarray) -> np.ndarray:
    """Whole numbers as integers (counts stay counts), refused beyond 2**53 where they would not be exact."""
    if not np.all(data == np.round(data)):
        return data
    beyond = int((np.abs(data) > EXACT_INTEGERS).sum())
    if beyond:
        raise DataRefused(f"release refused: {beyond} of the {data.size} synthetic values are integers beyond 2**53, "
                         "which cannot be written exactly (a broken fit?). Nothing was written.")
    return data.astype(np.int64)


def release(synthesis: "Synthesis", path, *, max_epsilon: float | None = None, overwrite: bool = False,
            extra: dict | None = None, delta: float = 1e-6, table: "pd.DataFrame | None" = None,
            column: str | None = None, public=(), keep=(), format: str = "csv", names=None):
    """Write a Synthesis's m synthetic datasets and their privacy budget, atomically.

    With ``table`` (the user's records), ``path`` is a folder and each dataset is the user's table
    with ``column`` replaced, rows in their order (:mod:`ppmlib.release.tables`): only the columns
    in ``public`` and ``keep`` go in with it, every other column is dropped and the manifest names
    it. Without ``table``, the synthetic values alone: ``<path>.csv`` (one column per dataset) and
    ``<path>.json``. This is the one writer of every kind of synthesis: a
    :class:`ppmlib.Synthesis`, a joint one (:class:`ppmlib.mechanism.joint.JointSynthesis`: one
    column per dataset and variable) and a survey pair
    (:class:`ppmlib.mechanism.survey.SurveySynthesis`: its public columns first), and a cluster's
    parts (:class:`ppmlib.mechanism.partitioned_lw.WrittenParts`: its datasets already written into
    the folder ``path`` by the workers, one Parquet file per row group; only the manifest is written,
    listing them); the manifest's privacy statement is the ledger's
    (:func:`ppmlib.mechanism.ledger.of_release`).

    Parameters
    ----------
    synthesis : Synthesis, JointSynthesis, SurveySynthesis or WrittenParts
        The synthesis whose ``synthetic`` (m, n), or (m, n, J), datasets are released (a
        WrittenParts: whose files in ``path`` are).
    path : str or PathLike
        ``<path>.csv`` gets the datasets (n rows, columns ``dataset_1`` ... ``dataset_m``) and
        ``<path>.json`` the manifest (a ``.csv`` or ``.json`` suffix on ``path`` is dropped, any other
        kept: ``lw.v1`` gives ``lw.v1.csv``). A folder is refused.
    max_epsilon : float, optional
        The total budget the agency allows. A release whose total m * epsilon exceeds it is
        refused with a ValueError and nothing is written.
    overwrite : bool
        Replace an existing release at ``path`` (default: refuse, so one is not lost by accident).
    extra : dict, optional
        More entries for the manifest (numbers and text only; e.g. the command's diagnostics
        verdict); they may not replace one of its own.
    delta : float
        The delta of the manifest's ledger (the release's (epsilon, delta) from zCDP).
    table : pandas.DataFrame, optional
        The user's n records, in the order of the synthetic values: the release is then a folder
        of tables (``format``), each the table with ``column`` replaced.
    column : str, optional
        The synthesized column of ``table`` (required with it).
    public : sequence of str
        Columns of ``table`` the model treats as public (its predictors), kept.
    keep : sequence of str
        Columns of ``table`` the caller declares public, kept too; every other column is dropped.
    format : str
        With ``table``: "csv" (``synthetic_1.csv`` ... ``synthetic_m.csv``) or "parquet" (one
        ``synthetic.parquet`` with a ``dataset`` column).
    names : sequence of str, optional
        Every column of the user's data, in order, when ``table`` holds only the released ones
        (the command reads no more): the manifest's dropped columns are the others. Default:
        ``table``'s columns.

    Returns
    -------
    (csv_path, json_path), or pathlib.Path
        The two files; with ``table``, the release folder.

    Raises
    ------
    TypeError
        ``synthesis`` has no ``synthetic`` datasets and ``epsilon`` (None, say).
    ValueError
        The total exceeds ``max_epsilon``; epsilon is not a finite number >= 0; ``path`` names a
        folder; synthetic integers beyond 2**53, which a CSV reader could not hold exactly.
    FileExistsError
        A release exists at ``path`` and ``overwrite`` is False.

    Examples
    --------
    >>> import tempfile
    >>> base = ppmlib.example_fit()
    >>> lw = ppmlib.synthesizer("poisson", base.y, "lw", base=base, c=0.5, m=5,
    ...                         sampler=ppmlib.inference.exact.ConjugateSampler(), seed=3)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     csv_path, json_path = release(lw, Path(folder) / "lw", max_epsilon=100.0)
    ...     budget = json.loads(json_path.read_text())
    >>> csv_path.name, budget["m_datasets"], round(budget["total_epsilon"], 2)
    ('lw.csv', 5, 19.68)
    >>> release(lw, "never_written", max_epsilon=10.0)
    Traceback (most recent call last):
    ...
    ppmlib.errors.BudgetExceeded: release refused: 5 datasets at epsilon = 3.935 each cost m * epsilon = 19.68 > max_epsilon = 10; ...
    """
    if _written(synthesis):
        return _release_written(synthesis, path, column, public, keep, names, format, overwrite=overwrite,
                                meta=_meta(synthesis, "", max_epsilon, "", delta, extra), max_epsilon=max_epsilon)
    if not (hasattr(synthesis, "synthetic") and (hasattr(synthesis, "epsilon") or _noisy(synthesis))):
        raise TypeError(f"synthesis must be a Synthesis (with synthetic datasets and an epsilon), got "
                        f"{type(synthesis).__name__}")
    if max_epsilon is not None:
        max_epsilon = _checks.real(max_epsilon, "max_epsilon", low=0, low_open=True)
    data = _checks.finite_array(synthesis.synthetic, "synthesis.synthetic")
    if data.ndim not in (2, 3):
        raise BadArgument(f"synthesis.synthetic must be (m, n), or (m, n, J) for a joint synthesis, got shape {data.shape}")
    if _noisy(synthesis):
        _check_noisy_budget(synthesis, max_epsilon)
    else:
        _check_budget(synthesis, data.shape[0], max_epsilon)
    if table is not None:
        return _release_table(synthesis, path, data, table, column, public, keep, format, names,
                              meta=_meta(synthesis, "", max_epsilon, "", delta, extra), overwrite=overwrite)
    csv_path, json_path = _paths(path)
    existing = [str(p) for p in (csv_path, json_path) if p.exists()]
    if existing and not overwrite:
        raise FileExistsError(f"release files already exist: {existing}; pass overwrite=True to replace them")
    if existing:
        warnings.warn(f"replacing the two-file release {str(csv_path)!r} and {str(json_path)!r} takes two renames, and "
                      "a crash between them leaves the new datasets beside the old manifest; replacing one is "
                      "deprecated: release into a folder instead, replaced in one step, with "
                      "ppmlib.release(synthesis, folder, table=records, column=name, overwrite=True) "
                      "(records: the n records in order, or pandas.DataFrame({name: y}))",
                      FutureWarning, stacklevel=2)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    values = _as_written(data)
    import pandas as pd  # here, not at the top: `import ppmlib` does not load pandas
    table = pd.DataFrame(_columns(values, getattr(synthesis, "variables", ())))
    public = getattr(synthesis, "public", None)      # a survey pair's public columns (cells, strata, PSUs) go first
    if isinstance(public, pd.DataFrame):
        table = pd.concat([public.reset_index(drop=True), table], axis=1)
    csv_text = table.to_csv(index=False, lineterminator="\n")
    digest = hashlib.sha256(csv_text.encode("utf-8")).hexdigest()
    text = json.dumps(_meta(synthesis, csv_path.name, max_epsilon, digest, delta, extra), indent=2,
                      allow_nan=False) + "\n"
    # the manifest last: until it is renamed into place, the previous release is the one a reader sees
    write_texts_atomically({csv_path: csv_text, json_path: text})
    return csv_path, json_path


def _check_budget(synthesis, m: int, max_epsilon) -> None:
    """Refuse m datasets at the synthesis's epsilon each beyond ``max_epsilon`` (nothing written)."""
    epsilon = _epsilon(synthesis)
    total = m * epsilon
    if max_epsilon is not None and total > max_epsilon:
        at_most = f"at most {int(max_epsilon // epsilon)} datasets or " if epsilon > 0 else ""
        raise BudgetExceeded(f"release refused: {m} datasets at epsilon = {epsilon:.4g} each cost "
                         f"m * epsilon = {total:.4g} > max_epsilon = {max_epsilon:g}; release "
                         f"{at_most}lower Delta. Nothing was written.")


def _check_noisy_budget(synthesis, max_epsilon) -> None:
    """Refuse a noisy release whose epsilon (its ledger's, whatever m is) exceeds ``max_epsilon``."""
    from ppmlib.mechanism.ledger import of_release
    total = of_release(synthesis).total[0]
    if max_epsilon is not None and total > max_epsilon:
        raise BudgetExceeded(f"release refused: the noisy release costs epsilon = {total:.4g} > max_epsilon = "
                             f"{max_epsilon:g}. Nothing was written.")


def _meta(synthesis, csv_name: str, max_epsilon, digest: str, delta: float, extra: dict | None) -> dict:
    """The manifest with the caller's ``extra`` entries, which may not replace one of its own."""
    meta = manifest(synthesis, csv_name, max_epsilon, digest, delta)
    clash = sorted(set(extra or {}) & set(meta))
    if clash:
        raise BadArgument(f"extra may not replace the manifest's own entries {clash}")
    return {**meta, **(extra or {})}


def _release_table(synthesis, path, data: np.ndarray, table, column, public, keep, fmt: str, names, *, meta: dict,
                   overwrite: bool) -> Path:
    """The release as the user's table (:mod:`ppmlib.release.tables`), in the folder ``path``."""
    from ppmlib.release import tables
    if not isinstance(column, str):
        raise TypeError(f"column must name the synthesized column of table (str), got {type(column).__name__}")
    variables = list(getattr(synthesis, "variables", ()))
    also = tuple(variables[1:]) if data.ndim == 3 else ()
    if data.ndim == 3 and (variables[:1] != [column] or data.shape[2] != len(variables)):
        raise BadArgument(f"a release as the user's table of a joint synthesis (shape {data.shape}) needs column= to "
                          f"be its first variable and one variable per synthesized column; got column={column!r}, "
                          f"variables {variables}")
    columns = tables.public_columns(list(table.columns) if names is None else list(names), column, public, keep, also)
    absent = [c for c in columns.order if c not in columns.all_synthesized and c not in table.columns]
    if absent:
        raise BadArgument(f"table lacks the released column(s) {absent}")
    for name in ("datasets_file", "datasets_sha256"):   # the folder's manifest lists every file instead
        meta.pop(name)
    return tables.release_folder(_as_written(data), table, columns, path, meta, fmt, overwrite=overwrite)


def _release_written(parts, path, column, public, keep, names, fmt: str, *, meta: dict, max_epsilon,
                     overwrite: bool) -> Path:
    """The manifest of datasets already written into the folder ``path``, one file per row group
    (:func:`ppmlib.release.tables.write_manifest`), after the budget and the files are checked."""
    from ppmlib.release import tables
    if fmt != "parquet":
        raise BadArgument(f"datasets written one file per row group are Parquet files; got format={fmt!r}")
    _check_budget(parts, parts.m, max_epsilon)
    folder = Path(os.fspath(path))
    absent = [entry["file"] for entry in parts.files if not (folder / entry["file"]).is_file()]
    if absent or not parts.files:
        raise BadArgument(f"the folder {str(folder)!r} lacks the written datasets {absent or 'of any row group'}")
    if (folder / tables.MANIFEST).exists() and not overwrite:
        raise FileExistsError(f"{str(folder / tables.MANIFEST)!r} exists; pass overwrite=True to replace it")
    for name in ("datasets_file", "datasets_sha256"):   # the folder's manifest lists every file instead
        meta.pop(name)
    columns = tables.public_columns(list(names) if names is not None else [column, *public, *keep], column, public, keep)
    tables.write_manifest(folder, meta, fmt, parts.files, columns, tables.PARTS_ROWS)
    return folder


def load(path) -> tuple["pd.DataFrame", dict]:
    """Read a release back, after checking that its files are the ones its manifest describes.

    Parameters
    ----------
    path : str or PathLike
        As given to :func:`ppmlib.release.release`: ``<path>.csv`` and ``<path>.json``, or a release
        folder (the command's ``--out``; ``ppmlib.release(..., table=...)``).

    Returns
    -------
    (pandas.DataFrame, dict)
        The synthetic datasets (one column each), or for a folder the m datasets stacked with a
        ``dataset`` column (1 ... m) (:func:`ppmlib.release.tables.load_folder`); and the manifest.

    Raises
    ------
    FileNotFoundError
        Either file is missing.
    ValueError
        The CSV's SHA-256 is not the manifest's (a torn or altered release: do not publish it).
    """
    import pandas as pd

    if isinstance(path, (str, os.PathLike)) and Path(path).is_dir():
        from ppmlib.release import tables
        return tables.load_folder(path)
    csv_path, json_path = _paths(path)
    meta = json.loads(json_path.read_text(encoding="utf-8"))
    raw = csv_path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != meta.get("datasets_sha256"):
        raise DataRefused(f"{csv_path} is not the CSV that {json_path} describes (SHA-256 differs): a torn or "
                         "altered release; write it again")
    return pd.read_csv(io.BytesIO(raw)), meta  # the bytes that were checked, not a second read of the file
