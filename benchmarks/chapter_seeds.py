"""Run any chapter on many seeds and keep its claims per seed: the seed ledger of a chapter without a script of its own.

    python benchmarks/chapter_seeds.py multivariate 2017 1 2 3 [-p draws=500 ...] [--name multivariate_seeds]

Each seed executes the chapter's own code cells (``benchmarks/_chapter_seeds.py``) with ``seed``
set and ``check_claims=False``, and records every row of its claims table (the chapter's
``claims``: what it measured, whether it held, whether it was asserted) to
``benchmarks/results/<chapter>_seeds.json`` after every seed. ``ce_income_seeds.py`` and
``reweighting_seeds.py`` record more (Deltas, k, refits) for their chapters.
"""
from __future__ import annotations

import argparse
import sys
import time

import matplotlib

matplotlib.use("Agg")   # the chapters draw figures; nothing is shown

from _chapter_seeds import BOOK, SeedLedger, run_chapter  # noqa: E402
from ppmlib.book.rerun import parse_assignment  # noqa: E402


def main(argv=None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", help="a chapter's name, e.g. multivariate (book/multivariate.md)")
    parser.add_argument("seeds", nargs="+", type=int)
    parser.add_argument("-p", "--param", action="append", default=[], help="NAME=VALUE, as for ppmlib.book.rerun")
    parser.add_argument("--name", help="the results file's stem (default <chapter>_seeds)")
    args = parser.parse_args(argv)
    if not (BOOK / f"{args.chapter}.md").exists():
        parser.error(f"no chapter book/{args.chapter}.md")
    overrides = dict(parse_assignment(p) for p in args.param)
    ledger = SeedLedger(args.name or f"{args.chapter}_seeds",
                        title=f"{args.chapter} chapter at its defaults" + (f" with {', '.join(args.param)}"
                                                                          if args.param else "")
                        + ": its claims on each seed",
                        notes="Each seed runs the chapter's own cells (seed set, claims not asserted); a claim's "
                              "'asserted' is the chapter's own verdict.")
    ok = True
    for seed in args.seeds:
        start = time.perf_counter()
        try:
            ns = run_chapter(args.chapter, {**overrides, "seed": seed, "check_claims": False})
        except Exception as err:   # counted, and the run goes on
            print(f"--- seed {seed}: the chapter FAILED: {type(err).__name__}: {err}", flush=True)
            ledger.failed[seed] = type(err).__name__
            ledger.write()
            ok = False
            continue
        ledger.seconds[seed] = time.perf_counter() - start
        print(f"--- seed {seed} ({ledger.seconds[seed]:.0f} s)", flush=True)
        for row in ns["claims"].rows:
            verdict = ("held" if row["holds"] else "FAILED") + (", asserted" if row["checked"] else ", reported")
            print(f"  [{verdict}] {row['claim']}: {row['ours']}")
        ledger.add_claims(seed, ns["claims"])
        ledger.write()
        ok &= all(row["holds"] for row in ns["claims"].rows if row["checked"])
    print("ALL CHECKED CLAIMS HELD ON EVERY SEED" if ok else "SOME CHECKED CLAIM FAILED")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
