"""Check the re-weighting chapters' claims on many seeds at the chapters' defaults (or with overrides).

    python benchmarks/reweighting_seeds.py mixture 2020 1 2 3 ...   # book/reweighting.md
    python benchmarks/reweighting_seeds.py salary 2025 1 2 3 ...    # book/salary.md
    python benchmarks/reweighting_seeds.py mixture 2020 1 -p cw_match=False --name reweighting_unmatched_seeds

Each seed executes the chapter's own code cells (``benchmarks/_chapter_seeds.py``) with ``seed`` set
and ``check_claims=False``, so what is measured is what the chapter runs. It prints one line per
claim and, at the end, whether every checked claim held on every seed. The same quantities (each
synthesizer's Delta, each re-weighting's k and refits, the records that lost weight, every claim)
go to ``benchmarks/results/<chapter>_seeds.json`` after every seed, which the chapter shows as a table.
"""
from __future__ import annotations

import argparse
import sys

import matplotlib

matplotlib.use("Agg")   # the chapters draw figures; nothing is shown

import numpy as np  # noqa: E402

from _chapter_seeds import SeedLedger, add_seed_options, run_seed, seeds_to_run  # noqa: E402
from ppmlib.book.rerun import parse_assignment  # noqa: E402

CHAPTERS = {"mixture": "reweighting", "salary": "salary"}


def measure(ledger: SeedLedger, seed: int, ns: dict) -> None:
    """The seed's rows: every synthesizer's Delta, each re-weighting's k, refits and the records
    that lost weight, then the chapter's claims."""
    res = ns["res"]
    for name, r in res.items():
        ledger.add(seed, f"Delta {name}", float(r.delta))
    for final, before in (("LW_final", "LW"), ("CW_final", "CW")):
        calibration = res[final].calibration
        ledger.add(seed, f"{final}: k", float(calibration["value"]))
        ledger.add(seed, f"{final}: refits", len(calibration["history"]))
        lost = int(np.sum(res[final].weights < res[before].weights))
        ledger.add(seed, f"{final}: records losing weight", lost)
    ledger.add_claims(seed, ns["claims"])


def main(argv=None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("design", choices=sorted(CHAPTERS))
    parser.add_argument("seeds", nargs="*", type=int)
    parser.add_argument("-p", "--param", action="append", default=[], help="NAME=VALUE, as for ppmlib.book.rerun")
    parser.add_argument("--name", help="the results file's stem (default <chapter>_seeds)")
    add_seed_options(parser)
    args = parser.parse_args(argv)
    chapter = CHAPTERS[args.design]
    overrides = dict(parse_assignment(p) for p in args.param)
    ledger = SeedLedger(args.name or f"{chapter}_seeds",
                        title=f"{chapter} chapter at its defaults" + (f" with {', '.join(args.param)}" if args.param
                                                                     else "") + ": what each seed measured",
                        notes="Each seed runs the chapter's own cells (seed set, claims not asserted); a claim's "
                              "'asserted' is the chapter's own verdict.")
    ok = True
    for seed in seeds_to_run(parser, args, ledger):
        ns = run_seed(ledger, chapter, overrides, seed, label=f"{args.design}, ")
        if ns is None:
            ok = False
            continue
        for _, row in ns["claims"].table().iterrows():
            print(f"  [{row['reproduced?']}] {row['claim']}: {row['ours']} | without the effect: {row['without the effect']}")
        measure(ledger, seed, ns)
        ledger.write()
        ok &= all(row["holds"] for row in ns["claims"].rows if row["checked"])  # reported-only rows do not count
    print("ALL CHECKED CLAIMS HELD ON EVERY SEED" if ok else "SOME CHECKED CLAIM FAILED")
    for line in ledger.short_of_margin():
        print(f"INSIDE ITS MARGIN (or failed): {line}")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
