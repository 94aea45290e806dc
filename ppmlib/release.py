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


def manifest(synthesis: "Synthesis", csv_name: str, max_epsilon: float | None) -> dict:
    """The JSON half of a release: what was released and what it costs (no data, no weights).

    Parameters
    ----------
    synthesis : Synthesis
        The released synthesizer.
    csv_name : str
        The name of the datasets' file.
    max_epsilon : float or None
        The budget the release was checked against.

    Returns
    -------
    dict
        Synthesizer, model, file, m, n, epsilon per dataset and in total, the composition rule,
        the neighbours covered, the guarantee and what it does not cover.
    """
    m, n = synthesis.synthetic.shape
    return {
        "synthesizer": synthesis.name,
        "model": synthesis.fit.model.name,
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
    >>> import tempfile
    >>> base = ppmlib.example_fit()
    >>> lw = ppmlib.synthesizer("poisson", base.y, "lw", base=base, c=0.5, m=5,
    ...                         sampler=ppmlib.exact.ConjugateSampler(), seed=3)
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
    csv_path, json_path = _paths(path)
    if max_epsilon is not None:
        max_epsilon = _checks.real(max_epsilon, "max_epsilon", low=0, low_open=True)
    data = _checks.finite_array(synthesis.synthetic, "synthesis.synthetic", ndim=2)
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
    table = pd.DataFrame(values.T, columns=[f"dataset_{j + 1}" for j in range(m)])
    text = json.dumps(manifest(synthesis, csv_path.name, max_epsilon), indent=2) + "\n"
    write_texts_atomically({csv_path: table.to_csv(index=False, lineterminator="\n"), json_path: text})
    return csv_path, json_path
