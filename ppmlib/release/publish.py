"""Release synthetic data: the m datasets and their privacy budget, and nothing else.

:func:`ppmlib.release` writes two files side by side, ``<path>.csv`` (one column per synthetic dataset)
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
          "guarantee, Delta estimated from the draws). The m datasets compose sequentially: the release as a "
          "whole costs m * epsilon.")
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
    """The model; for a joint synthesis (``ppmlib.mechanism.joint``), each variable's and what its epsilon covers."""
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


def manifest(synthesis: "Synthesis", csv_name: str, max_epsilon: float | None, csv_sha256: str = "") -> dict:
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

    Returns
    -------
    dict
        Synthesizer, model, file, m, n, epsilon per dataset and in total, the composition rule,
        the neighbours covered, the guarantee and what it does not cover: only numbers and text
        (valid JSON: no NaN, no infinity), and the CSV's SHA-256.
    """
    m, n = synthesis.synthetic.shape[:2]
    epsilon = _epsilon(synthesis)
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
        "neighbours": NEIGHBOURS,
        "guarantee": COVERS,
        "not_covered": DOES_NOT_COVER,
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
            extra: dict | None = None) -> tuple[Path, Path]:
    """Write a Synthesis's m synthetic datasets and their privacy budget, atomically.

    Parameters
    ----------
    synthesis : Synthesis
        The synthesizer whose ``synthetic`` (m, n) datasets are released.
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

    Returns
    -------
    (csv_path, json_path)

    Raises
    ------
    TypeError
        ``synthesis`` has no ``synthetic`` datasets and ``epsilon`` (None, say).
    ValueError
        The total exceeds ``max_epsilon``; epsilon is not a finite number >= 0; ``path`` names a
        folder; synthetic integers beyond 2**53, which a CSV reader could not hold exactly.
    FileExistsError
        A release exists at ``path`` and ``overwrite`` is False.

    See Also
    --------
    ppmlib.Synthesis.release : the same, as a method of the synthesizer's result.

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
    ValueError: release refused: 5 datasets at epsilon = 3.935 each cost m * epsilon = 19.68 > max_epsilon = 10; ...
    """
    if not (hasattr(synthesis, "synthetic") and hasattr(synthesis, "epsilon")):
        raise TypeError(f"synthesis must be a Synthesis (with synthetic datasets and an epsilon), got "
                        f"{type(synthesis).__name__}")
    csv_path, json_path = _paths(path)
    if max_epsilon is not None:
        max_epsilon = _checks.real(max_epsilon, "max_epsilon", low=0, low_open=True)
    data = _checks.finite_array(synthesis.synthetic, "synthesis.synthetic")
    if data.ndim not in (2, 3):
        raise BadArgument(f"synthesis.synthetic must be (m, n), or (m, n, J) for a joint synthesis, got shape {data.shape}")
    m = data.shape[0]
    epsilon = _epsilon(synthesis)
    total = m * epsilon
    if max_epsilon is not None and total > max_epsilon:
        at_most = f"at most {int(max_epsilon // epsilon)} datasets or " if epsilon > 0 else ""
        raise BudgetExceeded(f"release refused: {m} datasets at epsilon = {epsilon:.4g} each cost "
                         f"m * epsilon = {total:.4g} > max_epsilon = {max_epsilon:g}; release "
                         f"{at_most}lower Delta. Nothing was written.")
    if not overwrite:
        existing = [str(p) for p in (csv_path, json_path) if p.exists()]
        if existing:
            raise FileExistsError(f"release files already exist: {existing}; pass overwrite=True to replace them")
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    values = _as_written(data)
    import pandas as pd  # here, not at the top: `import ppmlib` does not load pandas
    table = pd.DataFrame(_columns(values, getattr(synthesis, "variables", ())))
    csv_text = table.to_csv(index=False, lineterminator="\n")
    digest = hashlib.sha256(csv_text.encode("utf-8")).hexdigest()
    meta = manifest(synthesis, csv_path.name, max_epsilon, digest)
    clash = sorted(set(extra or {}) & set(meta))
    if clash:
        raise BadArgument(f"extra may not replace the manifest's own entries {clash}")
    text = json.dumps({**meta, **(extra or {})}, indent=2, allow_nan=False) + "\n"
    # the manifest last: until it is renamed into place, the previous release is the one a reader sees
    write_texts_atomically({csv_path: csv_text, json_path: text})
    return csv_path, json_path


def load(path) -> tuple["pd.DataFrame", dict]:
    """Read a release back, after checking that its CSV is the one its manifest describes.

    Parameters
    ----------
    path : str or PathLike
        As given to :func:`ppmlib.release` (``<path>.csv`` and ``<path>.json``).

    Returns
    -------
    (pandas.DataFrame, dict)
        The synthetic datasets (one column each) and the manifest.

    Raises
    ------
    FileNotFoundError
        Either file is missing.
    ValueError
        The CSV's SHA-256 is not the manifest's (a torn or altered release: do not publish it).
    """
    import pandas as pd

    csv_path, json_path = _paths(path)
    meta = json.loads(json_path.read_text(encoding="utf-8"))
    raw = csv_path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != meta.get("datasets_sha256"):
        raise DataRefused(f"{csv_path} is not the CSV that {json_path} describes (SHA-256 differs): a torn or "
                         "altered release; write it again")
    return pd.read_csv(io.BytesIO(raw)), meta  # the bytes that were checked, not a second read of the file
