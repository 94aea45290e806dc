"""Progress bars for ppmlib's long loops: one place that imports tqdm.

``tqdm.auto`` picks a notebook widget when ipywidgets is installed and a text bar otherwise, but on
import in a kernel without ipywidgets it warns ("IProgress not found"), and that warning would land
in a chapter's cell. The import is therefore made once here, with that warning silenced.
"""
from __future__ import annotations

__all__ = ["progress_bar"]

import warnings


def progress_bar(iterable=None, *, total: int | None = None, desc: str = "", enabled: bool = True):
    """A tqdm bar over ``iterable`` (or a manual one with ``total``); ``enabled=False`` shows nothing.

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate over.
    total : int, optional
        The number of steps of a manual bar.
    desc : str
        The bar's label.
    enabled : bool
        False shows nothing.

    Returns
    -------
    tqdm.tqdm
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tqdm.auto's TqdmWarning about ipywidgets, see the module docstring
        from tqdm.auto import tqdm
    return tqdm(iterable, total=total, desc=desc, disable=not enabled, leave=False)
