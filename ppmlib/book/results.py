"""The measured figures of ``benchmarks/results/``, read back for the book.

Every benchmark script in ``benchmarks/`` writes one JSON file there (``benchmarks/_results.py``):
a title, the command that measured it, the machine, the date, the load average while it ran, a
note, and the rows it measured. :func:`read` reads one such file; two views use it:

- the performance guide (``book/guide/performance.md``) shows every benchmark file
  (:func:`benchmark_results`) as a table with its provenance, so no measured time is typed by hand;
- a chapter shows its seed ledger (``<chapter>_seeds.json``, written by a seed script such as
  ``benchmarks/ce_income_seeds.py``: one row per seed per quantity) with :func:`seed_ledger`, so no
  range over seeds is typed into its prose.
"""
from __future__ import annotations

__all__ = ["FIELDS", "LEDGER_SUFFIX", "LedgerTable", "RESULTS", "benchmark_results", "provenance", "read",
           "seed_ledger", "table"]

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ppmlib.book import ROOT

if TYPE_CHECKING:  # pandas is imported when a table is made, not with ppmlib
    import pandas as pd

#: The folder the benchmark scripts write to.
RESULTS = ROOT / "benchmarks" / "results"

#: What every result file states besides its rows.
FIELDS = ("title", "command", "machine", "date", "load", "recorded_by", "rows")

#: The stem's ending of a seed ledger (``ce_income_seeds.json``): shown by its chapter, not by the performance page.
LEDGER_SUFFIX = "_seeds"


def read(path) -> dict:
    """One result file, checked.

    Parameters
    ----------
    path : str or PathLike
        A ``*.json`` file written by ``benchmarks/_results.py``.

    Returns
    -------
    dict
        The file's keys (those of :data:`FIELDS`, ``notes`` when given) and ``file``, its name.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        A file that is not JSON, lacks one of :data:`FIELDS` or has no rows (the message names the file).
    """
    path = Path(path)
    try:
        result = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path.name} is not JSON: {err}") from None
    missing = [field for field in FIELDS if field not in result]
    if missing:
        raise ValueError(f"{path.name} lacks {', '.join(missing)} (every result states {', '.join(FIELDS)})")
    if not result["rows"]:
        raise ValueError(f"{path.name} has no rows")
    return {**result, "file": path.name}


def benchmark_results(folder=None) -> list[dict]:
    """Every benchmark's result file of ``folder``, in the order of their file names (seed ledgers left out).

    Parameters
    ----------
    folder : str or PathLike, optional
        Default: the checkout's ``benchmarks/results``.

    Returns
    -------
    list of dict
        One :func:`read` per ``*.json`` file whose stem does not end in :data:`LEDGER_SUFFIX`.

    Raises
    ------
    ValueError
        As :func:`read`.
    """
    paths = sorted(Path(RESULTS if folder is None else folder).glob("*.json"))
    return [read(path) for path in paths if not path.stem.endswith(LEDGER_SUFFIX)]


def _load_text(load) -> str:
    if isinstance(load, dict):   # a script's own record: the 1-minute load average at its start and end
        return f"{load['start'][0]:.1f} at the start, {load['end'][0]:.1f} at the end (1-minute average)"
    return str(load)


def provenance(result: dict) -> str:
    """One paragraph: who measured it, with what command, where, when and under what load.

    Parameters
    ----------
    result : dict
        One :func:`read`.

    Returns
    -------
    str
        Markdown.
    """
    text = (f"Measured by `{result['command']}` on {result['machine']}, {result['date']}; "
            f"load average {_load_text(result['load'])}. Recorded by {result['recorded_by']} "
            f"(`benchmarks/results/{result['file']}`).")
    return f"{text} {result['notes']}" if result.get("notes") else text


def table(result: dict) -> "pd.DataFrame":
    """The result's rows as a table, columns in the order of the first row.

    Parameters
    ----------
    result : dict
        One :func:`read`.

    Returns
    -------
    pandas.DataFrame
        One row per measured row.
    """
    import pandas as pd
    return pd.DataFrame(result["rows"]).fillna("")


@dataclass
class LedgerTable:
    """A chapter's seed ledger ready to show: a title, a caption and the table, or a note when
    the file is missing. A notebook shows it as HTML.

    Attributes
    ----------
    title : str
        What the table is.
    caption : str
        "Recorded on <machine>, <date>, load ..." and the command that regenerates it (or the note).
    frame : pandas.DataFrame or None
        One row per quantity; a column per seed, then the range over seeds (numbers) or how
        often a claim held and was asserted. None when the file is missing.
    """
    title: str
    caption: str
    frame: "pd.DataFrame | None" = None

    def _repr_html_(self) -> str:
        caption = re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(self.caption))   # the command as code
        head = f"<p><strong>{html.escape(self.title)}</strong></p><p>{caption}</p>"
        return head + (self.frame.to_html() if self.frame is not None else "")

    def _repr_markdown_(self) -> str:
        body = self.frame.to_markdown() if self.frame is not None else ""
        return f"**{self.title}**\n\n{self.caption}\n\n{body}"


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _summary(rows: list[dict]) -> str:
    """Over seeds: a claim's "held on k of n, asserted on j"; its margin's "kept 0.1 on k of n,
    smallest 0.23"; a number's range; otherwise nothing."""
    if any("stated margin" in row for row in rows):
        kept = sum(bool(row.get("kept margin")) for row in rows)
        margins = [row["value"] for row in rows if row["value"] is not None]
        stated = sorted({row["stated margin"] for row in rows if row.get("stated margin") is not None})
        smallest = f", smallest {_shown(min(margins))}" if margins else ""
        return f"kept {'/'.join(f'{m:g}' for m in stated)} on {kept} of {len(rows)}{smallest}"
    if any(row["held"] is not None for row in rows):
        held = sum(bool(row["held"]) for row in rows)
        asserted = sum(bool(row["asserted"]) for row in rows)
        return f"held on {held} of {len(rows)}, asserted on {asserted}"
    values = [row["value"] for row in rows]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        low, high = min(values), max(values)
        return _shown(low) if low == high else f"{_shown(low)}–{_shown(high)}"
    return ""


def seed_ledger(name: str, folder=None) -> LedgerTable:
    """A seed ledger (``<name>.json``) as a table with its title and provenance caption.

    Parameters
    ----------
    name : str
        The file's stem, e.g. ``"ce_income_seeds"``.
    folder : str or PathLike, optional
        Default: the checkout's ``benchmarks/results``.

    Returns
    -------
    LedgerTable
        Its ``frame`` has one row per quantity (in the order first recorded), one column per seed
        (``"seed 2017"``, ...; ``"seed 48213 (random)"`` for a seed drawn at random) and ``"over seeds"``. A missing file gives a ``LedgerTable`` with
        no frame and a note saying which file and how it is written, so a chapter still builds.

    Raises
    ------
    ValueError
        A file that exists but is not a result (as :func:`read`), or rows without seed, quantity and value.
    """
    import pandas as pd

    path = Path(RESULTS if folder is None else folder) / f"{name}.json"
    if not path.exists():
        return LedgerTable(title=f"No seed ledger {name}.json",
                           caption=f"Note: benchmarks/results/{name}.json is not in this checkout, so the table "
                                   f"of measurements over seeds cannot be shown. Its seed script in benchmarks/ "
                                   f"writes it.")
    result = read(path)
    if any({"seed", "quantity", "value"} - set(row) for row in result["rows"]):
        raise ValueError(f"{path.name} is not a seed ledger: every row needs seed, quantity and value")
    seeds = list(dict.fromkeys(row["seed"] for row in result["rows"]))
    drawn = {seed for d in result.get("drawn", []) for seed in d["seeds"]}
    quantities = list(dict.fromkeys(row["quantity"] for row in result["rows"]))
    cells = {(row["quantity"], row["seed"]): row for row in result["rows"]}
    frame = pd.DataFrame(
        [[_shown(cells[(q, s)]["value"]) if (q, s) in cells else "" for s in seeds]
         + [_summary([cells[(q, s)] for s in seeds if (q, s) in cells])] for q in quantities],
        index=pd.Index(quantities, name="quantity"), columns=[f"seed {s}" + (" (random)" if s in drawn else "") for s in seeds] + ["over seeds"])
    caption = (f"Recorded on {result['machine']}, {result['date']}, load average {_load_text(result['load'])}; "
               f"regenerate with `{result['command']}`. {result.get('notes', '')}").strip()
    return LedgerTable(title=result["title"], caption=caption, frame=frame)
