"""Re-measure the CE income chapter's claims on many seeds, at its defaults (or with overrides).

    python benchmarks/ce_income_seeds.py 1 2 3 4 5 6 7 8 [-p draws=500 ...]

Each seed runs the chapter itself (``ppmlib.rerun``, claims not asserted, into ``runs/ce_seeds/``)
and prints its claims table and the Delta of every synthesizer with its diagnostics gate; at the
end, for every claim, on how many seeds it held and on how many it was asserted (computed from
fits that passed the gate). The chapter's README section states what this printed.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import html as html_text
import re

import nbformat

CHAPTER = Path(__file__).resolve().parent.parent / "book" / "ce_income.md"


def outputs(notebook: Path) -> list[str]:
    """The plain-text outputs of every code cell, in order."""
    nb = nbformat.read(notebook, 4)
    return [o["data"]["text/plain"] for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if "data" in o and "text/plain" in o["data"]]


def claims_rows(notebook: Path) -> list[tuple[str, str]]:
    """(claim, reproduced?) for every row of the claims table (the chapter's last table, read from its HTML)."""
    nb = nbformat.read(notebook, 4)
    table = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if "data" in o and "text/html" in o["data"]][-1]
    rows = [re.findall(r"<td>(.*?)</td>", row, flags=re.S) for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)]
    return [(html_text.unescape(r[0]), html_text.unescape(r[-1])) for r in rows if len(r) >= 4]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", nargs="+", type=int)
    parser.add_argument("-p", "--param", action="append", default=[], help="NAME=VALUE passed on to ppmlib.rerun")
    args = parser.parse_args(argv)
    held, asserted = defaultdict(int), defaultdict(int)
    for seed in args.seeds:
        out = Path("runs") / "ce_seeds" / f"seed{seed}"
        command = [sys.executable, "-m", "ppmlib.rerun", str(CHAPTER), "-p", f"seed={seed}", "-p", "check_claims=False",
                   "-p", "progress=False", *[x for p in args.param for x in ("-p", p)], "--out", str(out)]
        if subprocess.run(command, capture_output=True, text=True).returncode != 0:
            print(f"--- seed {seed}: the chapter failed; see {out}/ce_income.failed.ipynb")
            continue
        texts = outputs(out / "ce_income.ipynb")
        print(f"--- seed {seed}\n{texts[2]}\n{texts[-1]}", flush=True)   # the synthesizers' table, the claims
    for seed in args.seeds:
        notebook = Path("runs") / "ce_seeds" / f"seed{seed}" / "ce_income.ipynb"
        if notebook.exists():
            for row, (claim, verdict) in enumerate(claims_rows(notebook)):   # by row: shown claims are cut short
                held[row, claim] += verdict.startswith("yes")
                asserted[row, claim] += "reported" not in verdict
    for (row, claim), count in held.items():
        print(f"claim {row} ({claim}): held on {count}, asserted on {asserted[row, claim]} of {len(args.seeds)} seeds")


if __name__ == "__main__":
    main()
