"""The course's CE sample: 994 real consumer units of the CE Interview Survey (public use).

``data/ce_course.csv`` is the ``CEdata.csv`` of the course slides on attribute-disclosure risk
(github.com/monika76five/Data-Confidentiality), copied byte for byte: UrbanRural, Income, Race,
Expenditure. Its data card is ``data/README.md``. Unlike ``ce_like.csv`` it is real data.
"""
from __future__ import annotations

__all__ = ["N_UNITS", "load", "log_scale"]

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.errors import DataRefused
from ppmlib._shipped import shipped_file

N_UNITS = 994  # the slides' n
COLUMNS = ("UrbanRural", "Income", "Race", "Expenditure")


def load() -> pd.DataFrame:
    """The shipped course CE sample, one row per consumer unit.

    Returns
    -------
    pandas.DataFrame, shape (994, 4)
        UrbanRural (1 urban, 2 rural), Income (dollars), Race (1..6), Expenditure (dollars).

    Raises
    ------
    DataRefused
        The file found is not the 994-unit sample with the four columns.

    Examples
    --------
    >>> ce = load()
    >>> ce.shape, list(ce.columns)
    ((994, 4), ['UrbanRural', 'Income', 'Race', 'Expenditure'])
    """
    path = shipped_file("data", "ce_course.csv")
    frame = pd.read_csv(path)
    if tuple(frame.columns) != COLUMNS or len(frame) != N_UNITS:
        raise DataRefused(f"{path} should hold the course's {N_UNITS} units with columns {list(COLUMNS)}; "
                         f"it has {len(frame)} rows and columns {list(frame.columns)}")
    return frame


def log_scale(frame: pd.DataFrame, decimals: int | None = 1) -> tuple[np.ndarray, np.ndarray]:
    """(log income, log expenditure), each shape (n,), rounded to ``decimals`` as in the slides.

    Parameters
    ----------
    frame : pandas.DataFrame
        The sample (:func:`load`).
    decimals : int or None
        Decimals to round to (the slides: 1); None keeps the logs as they are (the slides fit on these).

    Returns
    -------
    (ndarray, ndarray), each shape (n,)

    Examples
    --------
    >>> y, x = log_scale(load())
    >>> y[:3], x[:3]
    (array([11.5, 10.1, 11.3]), array([8.7, 8.7, 8.6]))
    """
    y, x = np.log(frame["Income"].to_numpy(float)), np.log(frame["Expenditure"].to_numpy(float))
    if decimals is None:
        return y, x
    decimals = _checks.integer(decimals, "decimals", low=0)
    return np.round(y, decimals), np.round(x, decimals)
