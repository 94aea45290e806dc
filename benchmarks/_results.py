"""What every benchmark script writes: its rows, with the machine, date, load and command.

``record("lipschitz", title=..., rows=[...])`` writes ``benchmarks/results/lipschitz.json``
(replacing the previous measurement of that benchmark), which the book's performance page
(``book/guide/performance.md``, through :mod:`ppmlib.book.results`) shows as a table.
The load average is read when this module is imported (the script's start) and when ``record``
runs (its end): the machine is often shared, and a time means little without it.
"""
from __future__ import annotations

import json
import os
import platform
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
_LOAD_AT_START = os.getloadavg()


def machine() -> str:
    """The machine in a few words: host, CPUs, processor, OS."""
    return (f"{platform.node() or 'unknown host'} ({os.cpu_count()} CPUs, {platform.machine()}, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()})")


def _script() -> str:
    """The running script's path from the checkout's root (where the commands are run from)."""
    script = Path(sys.argv[0]).resolve()
    return str(script.relative_to(ROOT)) if script.is_relative_to(ROOT) else os.path.relpath(sys.argv[0])


def record(name: str, *, title: str, rows: list[dict], notes: str = "", folder=None, extra: dict | None = None) -> Path:
    """Write one benchmark's result file and return its path.

    Parameters
    ----------
    name : str
        The file's stem: ``results/<name>.json``.
    title : str
        What was measured, in one line (the performance page's caption).
    rows : list of dict
        The measured rows, every dict with the same keys (the table's columns).
    notes : str
        What a reader needs to read the numbers (targets, settings not in the rows).
    folder : PathLike, optional
        Default ``benchmarks/results``.
    extra : dict, optional
        More keys of the file (a seed ledger's ``drawn``: the seeds it drew at random and how).
    """
    if not rows:
        raise ValueError(f"{name}: nothing measured (no rows)")
    folder = Path(RESULTS if folder is None else folder)
    folder.mkdir(parents=True, exist_ok=True)
    result = {
        "title": title,
        "command": "python " + " ".join(shlex.quote(a) for a in [_script(), *sys.argv[1:]]),
        "machine": machine(),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load": {"start": list(_LOAD_AT_START), "end": list(os.getloadavg())},
        "recorded_by": "the benchmark script",
        "notes": notes,
        **(extra or {}),
        "rows": rows,
    }
    target = folder / f"{name}.json"
    partial = target.with_suffix(".json.partial")
    partial.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    partial.replace(target)   # a killed run leaves the previous result whole
    print(f"result: {target}")
    return target
