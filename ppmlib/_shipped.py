"""Where the files that ship with ppmlib are: the Stan programs and the data sets.

The repository keeps them in its top-level ``stan/`` and ``data/`` folders, which readers see and
edit. A wheel (``pip install .``) carries copies of both inside the package, as ``ppmlib/_stan``
and ``ppmlib/_data`` (``pyproject.toml`` maps the folders there at build time), because an
installed package has no checkout beside it: there ``ppmlib/../stan`` is site-packages' ``stan``,
which is PyStan's own package.

:func:`shipped_file` looks, in this order, in

1. ``$PPMLIB_STAN_DIR`` (Stan programs only), when set; then nowhere else, so that an override
   never silently mixes with another copy;
2. the checkout's folder, when ppmlib runs from a clone (a plain checkout or ``pip install -e``),
   recognised by the ``pyproject.toml`` beside the package: edits to ``stan/`` take effect at once;
3. the copy inside the installed package.
"""
from __future__ import annotations

__all__ = ["shipped_file", "search_path"]

import os
from pathlib import Path
from ppmlib.errors import BadArgument

PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parent
FOLDERS = {"stan": "_stan", "data": "_data"}  # top-level folder -> its name inside the wheel
STAN_DIR_VARIABLE = "PPMLIB_STAN_DIR"


def search_path(folder: str) -> list[tuple[Path, str]]:
    """The folders searched for ``folder`` ("stan" or "data"), in order, each with what it is."""
    if folder not in FOLDERS:
        raise BadArgument(f"folder must be one of {sorted(FOLDERS)}, got {folder!r}")
    override = os.environ.get(STAN_DIR_VARIABLE, "").strip()
    if folder == "stan" and override:
        return [(Path(override), f"${STAN_DIR_VARIABLE}")]
    places = []
    if (CHECKOUT / "pyproject.toml").is_file():
        places.append((CHECKOUT / folder, "the checkout"))
    places.append((PACKAGE / FOLDERS[folder], "the installed package"))
    return places


def shipped_file(folder: str, name: str, *, must_exist: bool = True, hint: str = "") -> Path:
    """The path of a shipped file, ``stan/<name>`` or ``data/<name>``, found as the module says.

    Parameters
    ----------
    folder : {"stan", "data"}
        The top-level folder of the repository that holds the file.
    name : str
        The file's name, e.g. ``"poisson.stan"`` or ``"ce_like.csv"``.
    must_exist : bool
        When False, a file found nowhere gives the first place searched (where a generator
        would write it) instead of an error.
    hint : str
        One more way to fix a missing file, added to the error (e.g. the command that makes it).

    Raises
    ------
    FileNotFoundError
        Naming the file and every folder searched, when no folder holds it.

    Examples
    --------
    >>> shipped_file("stan", "poisson.stan").name
    'poisson.stan'
    """
    places = search_path(folder)
    for place, _ in places:
        if (place / name).is_file():
            return place / name
    if not must_exist:
        return places[0][0] / name
    searched = "; ".join(f"{place} ({what})" for place, what in places)
    if places[0][1].startswith("$"):
        fixes = [f"point {STAN_DIR_VARIABLE} at a folder holding {name}, or unset it"]
    else:
        fixes = [f"reinstall ppmlib from a checkout whose {folder}/ folder holds {name}"]
        if folder == "stan":
            fixes.append(f"set {STAN_DIR_VARIABLE} to a folder holding it")
    fixes += [hint] if hint else []
    raise FileNotFoundError(f"{folder}/{name} not found; searched {searched}. To fix: " + "; or ".join(fixes))
