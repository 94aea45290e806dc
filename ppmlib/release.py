"""Release synthetic data: the m datasets and their privacy budget, and nothing else.

:func:`ppmlib.release` writes two files side by side, ``<path>.csv`` (one column per synthetic dataset)
and ``<path>.json`` (epsilon per dataset, the total m * epsilon, the neighbour relation and what
the guarantee does not cover). Both are written to temporary files first and renamed into place,
so a release is either complete or absent. It never writes the weights alpha, the by-record
bounds, the parameter draws or any confidential value: those are exactly what a release must
not carry (a record's weight or bound says how unusual it is).
"""
from __future__ import annotations

__all__ = ["NEIGHBOURS", "COVERS", "DOES_NOT_COVER", "manifest", "release"]

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import _checks
from ._files import write_texts_atomically

if TYPE_CHECKING:
    from .mechanism import Synthesis

NEIGHBOURS = "add/remove one record (leave-one-out neighbours); under replace-one neighbours the same draws are 2 * epsilon DP"
COVERS = ("Each synthetic dataset is made from one draw of the alpha-weighted pseudo posterior; each draw is "
          "epsilon = 2 Delta differentially private for this database (a local guarantee, Delta estimated "
          "from the draws). The m datasets compose sequentially: the release as a whole costs m * epsilon.")
DOES_NOT_COVER = ("The guarantee treats the record weights as fixed. The weights, and any scalar tuned on the "
                  "confidential data (c, g, radius, the re-weighting constant k, a matched Delta), depend on "
                  "the data, and the privacy cost of choosing them is not counted; nor is publishing epsilon itself.")


def _paths(path) -> tuple[Path, Path]:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or PathLike), got {type(path).__name__}")
    stem = Path(path)
    if stem.suffix in (".csv", ".json"):
        stem = stem.with_suffix("")
    return stem.with_suffix(".csv"), stem.with_suffix(".json")


def _model(synthesis) -> dict:
    """The model; for a joint synthesis (``ppmlib.joint``), each variable's and what its epsilon covers."""
    if not hasattr(synthesis, "variables"):
        return {"model": synthesis.fit.model.name}
    return {"model": {v: p.fit.model.name for v, p in synthesis.parts.items()}, "variables": list(synthesis.variables),
            "epsilon_covers": "the whole record: one joint bound Delta on the sum of the record's conditional "
                              "log-likelihoods, epsilon = 2 Delta for all its variables together"}


def manifest(synthesis: "Synthesis", csv_name: str, max_epsilon: float | None) -> dict:
    """The JSON half of a release: what was released and what it costs (no data, no weights)."""
    m, n = synthesis.synthetic.shape[:2]
    return {
        "synthesizer": synthesis.name,
        **_model(synthesis),
        "datasets_file": csv_name,
        "m_datasets": int(m),
        "n_records_per_dataset": int(n),
        "epsilon_per_dataset": synthesis.epsilon,
        "total_epsilon": m * synthesis.epsilon,
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


def release(synthesis: "Synthesis", path, *, max_epsilon: float | None = None, overwrite: bool = False) -> tuple[Path, Path]:
    """Write a Synthesis's m synthetic datasets and their privacy budget, atomically.

    Parameters
    ----------
    synthesis : Synthesis
        The synthesizer whose ``synthetic`` (m, n) datasets are released.
    path : str or PathLike
        ``<path>.csv`` gets the datasets (n rows, columns ``dataset_1`` ... ``dataset_m``) and
        ``<path>.json`` the budget (a ``.csv`` or ``.json`` suffix on ``path`` is dropped).
    max_epsilon : float, optional
        The total budget the agency allows. A release whose total m * epsilon exceeds it is
        refused with a ValueError and nothing is written.
    overwrite : bool
        Replace an existing release at ``path`` (default: refuse, so one is not lost by accident).

    Returns
    -------
    (csv_path, json_path)

    See Also
    --------
    ppmlib.Synthesis.release : the same, as a method of the synthesizer's result.

    Examples
    --------
    >>> lw.release("release/lw_mixture", max_epsilon=200.0)  # doctest: +SKIP
    """
    csv_path, json_path = _paths(path)
    if max_epsilon is not None:
        max_epsilon = _checks.real(max_epsilon, "max_epsilon", low=0, low_open=True)
    data = _checks.finite_array(synthesis.synthetic, "synthesis.synthetic")
    if data.ndim not in (2, 3):
        raise ValueError(f"synthesis.synthetic must be (m, n), or (m, n, J) for a joint synthesis, got shape {data.shape}")
    m = data.shape[0]
    total = m * synthesis.epsilon
    if max_epsilon is not None and total > max_epsilon:
        raise ValueError(f"release refused: {m} datasets at epsilon = {synthesis.epsilon:.4g} each cost "
                         f"m * epsilon = {total:.4g} > max_epsilon = {max_epsilon:g}; release at most "
                         f"{int(max_epsilon // synthesis.epsilon)} datasets or lower Delta. Nothing was written.")
    if not overwrite:
        existing = [str(p) for p in (csv_path, json_path) if p.exists()]
        if existing:
            raise FileExistsError(f"release files already exist: {existing}; pass overwrite=True to replace them")
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    values = data.astype(np.int64) if np.all(data == np.round(data)) else data
    import pandas as pd  # here, not at the top: `import ppmlib` does not load pandas
    table = pd.DataFrame(_columns(values, getattr(synthesis, "variables", ())))
    text = json.dumps(manifest(synthesis, csv_path.name, max_epsilon), indent=2) + "\n"
    write_texts_atomically({csv_path: table.to_csv(index=False, lineterminator="\n"), json_path: text})
    return csv_path, json_path
