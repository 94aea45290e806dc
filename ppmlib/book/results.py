"""The measured figures of ``benchmarks/results/``, read back for the book's performance page.

Every benchmark script in ``benchmarks/`` writes one JSON file there (``benchmarks/_results.py``):
a title, the command that measured it, the machine, the date, the load average while it ran, a
note, and the rows it measured. The performance guide (``book/guide/performance.md``) shows each
file as a table with that provenance beside it, so no measured time is ever typed by hand.
"""
from __future__ import annotations

__all__ = ["FIELDS", "RESULTS", "benchmark_results", "provenance", "table"]

import json
from pathlib import Path

from ppmlib.book import ROOT

#: The folder the benchmark scripts write to.
RESULTS = ROOT / "benchmarks" / "results"

#: What every result file states besides its rows.
FIELDS = ("title", "command", "machine", "date", "load", "recorded_by", "rows")


def benchmark_results(folder=None) -> list[dict]:
    """Every result file of ``folder``, in the order of their file names.

    Parameters
    ----------
    folder : str or PathLike, optional
        Default: the checkout's ``benchmarks/results``.

    Returns
    -------
    list of dict
        One dict per ``*.json`` file, with the keys of :data:`FIELDS` (``notes`` when given) and
        ``file``, the file's name.

    Raises
    ------
    ValueError
        A file that is not JSON, lacks one of :data:`FIELDS` or has no rows (the message names the file).
    """
    found = []
    for path in sorted(Path(RESULTS if folder is None else folder).glob("*.json")):
        try:
            result = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise ValueError(f"{path.name} is not JSON: {err}") from None
        missing = [field for field in FIELDS if field not in result]
        if missing:
            raise ValueError(f"{path.name} lacks {', '.join(missing)} (every result states {', '.join(FIELDS)})")
        if not result["rows"]:
            raise ValueError(f"{path.name} has no rows")
        found.append({**result, "file": path.name})
    return found


def _load_text(load) -> str:
    if isinstance(load, dict):   # a script's own record: the 1-minute load average at its start and end
        return f"{load['start'][0]:.1f} at the start, {load['end'][0]:.1f} at the end (1-minute average)"
    return str(load)


def provenance(result: dict) -> str:
    """One paragraph: who measured it, with what command, where, when and under what load.

    Parameters
    ----------
    result : dict
        One entry of :func:`benchmark_results`.

    Returns
    -------
    str
        Markdown.
    """
    text = (f"Measured by `{result['command']}` on {result['machine']}, {result['date']}; "
            f"load average {_load_text(result['load'])}. Recorded by {result['recorded_by']} "
            f"(`benchmarks/results/{result['file']}`).")
    return f"{text} {result['notes']}" if result.get("notes") else text


def table(result: dict):
    """The result's rows as a table, columns in the order of the first row.

    Parameters
    ----------
    result : dict
        One entry of :func:`benchmark_results`.

    Returns
    -------
    pandas.DataFrame
        One row per measured row.
    """
    import pandas as pd
    return pd.DataFrame(result["rows"]).fillna("")
