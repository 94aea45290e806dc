"""Re-measure the CE income chapter's claims on many seeds, at its defaults (or with overrides).

    PPMLIB_BACKEND=cmdstanpy python benchmarks/ce_income_seeds.py 2017 1 2 3 4 5 6 7 [-p draws=500 ...] [--times]

Each seed executes the chapter's own code cells (``book/ce_income.md``, read with jupytext) in a
fresh namespace, with ``seed`` set, ``check_claims=False`` and ``progress=False``, so what is
measured is what the chapter runs. For every seed it prints each synthesizer's Delta with its
diagnostics gate, the map's Deltas with their refit ranges, and every claim (held? asserted?); at
the end, for every claim, on how many seeds it held and on how many it was asserted (computed from
fits that passed the gate). ``--times`` adds every cell's time and the number and time of Stan fits.
Both Stan backends give identical draws for the same seed (the parity tests), so
``PPMLIB_BACKEND=cmdstanpy`` gives the same numbers faster when CmdStan is installed.

The same quantities go to ``benchmarks/results/ce_income_seeds.json`` (rewritten after every seed,
so an interrupted run keeps the seeds it finished; ``--add`` keeps the file's other seeds;
``--name`` writes another file, e.g. for a run
with overrides), which the chapter's "Where our numbers differ" section shows as a table.
"""
from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np

from _chapter_seeds import FitClock, SeedLedger, add_seed_options, run_chapter, seeds_to_run
from ppmlib.book.rerun import parse_assignment


def report(seed: int, ns: dict, seconds: float, clock: FitClock) -> None:
    results, cg = ns["results"], ns["cg"]
    print(f"--- seed {seed}: {seconds:.0f} s, {clock.count} Stan fits ({clock.seconds:.0f} s)", flush=True)
    for name, r in results.items():
        d = r.diagnostics
        print(f"  {name:11s} Delta {r.delta:6.2f}  R-hat {d['max_rhat']:.3f}  ESS {d['min_ess_bulk']:.0f}/"
              f"{d['min_ess_tail']:.0f}  divergences {d['divergences']}")
    lw = [c for c in cg.columns if c.startswith("Delta ")][0]
    for _, row in cg.iterrows():
        print(f"  map ({row['c']:g}, {row['g']:g}): {lw} {row[lw]:.2f}  refits {cg.attrs['estimator']}: "
              f"{row['truncated Delta over refits'] if cg.attrs['estimator'] == 'L*' else row['max Delta over refits']}")
    for row in ns["claims"].rows:
        verdict = ("held" if row["holds"] else "FAILED") + (", asserted" if row["checked"] else ", reported")
        print(f"  [{verdict}] {row['claim']}: {row['ours']}")


def measure(ledger: SeedLedger, seed: int, ns: dict, clock: FitClock) -> None:
    """The seed's rows: every synthesizer's Delta and gate, the normal baseline's Deltas, the
    truncated Deltas, the map's Delta (mean of each row's fits and their range), then the claims."""
    results, baseline, trunc, cg = ns["results"], ns["baseline"], ns["trunc"], ns["cg"]
    for name, r in results.items():
        ledger.add(seed, f"Delta {name}", r.delta)
    for name, r in results.items():
        d = r.diagnostics
        ledger.add(seed, f"divergences {name}", int(d["divergences"]))
    calibration = results["LW_final"].calibration
    ledger.add(seed, "LW_final: k", float(calibration["value"]))
    ledger.add(seed, "LW_final: refits", len(calibration["history"]))
    for name in ("Unweighted", "LW", "CW"):
        ledger.add(seed, f"normal model: Delta {name}", baseline[name].delta)
    full = float(trunc.loc[1.0, "Delta"])
    for q, row in trunc[trunc.index < 1.0].iterrows():
        ledger.add(seed, f"truncation at q = {q:g}: Delta lower by (%)", 100 * (1 - row["Delta"] / full))
    for (_, row), fits in zip(cg.iterrows(), cg.attrs["refits"]):
        fits = np.asarray(fits, float)
        where = f"({row['c']:g}, {row['g']:g})"
        ledger.add(seed, f"map {where}: mean {cg.attrs['estimator']} over {fits.size} fits", float(fits.mean()))
        ledger.add(seed, f"map {where}: L* over the fits (range)", row["truncated Delta over refits"])
        ledger.add(seed, f"map {where}: max over every draw, over the fits (range)", row["max Delta over refits"])
    ledger.add(seed, "Stan fits", clock.count)
    ledger.add_claims(seed, ns["claims"])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", nargs="*", type=int)
    parser.add_argument("-p", "--param", action="append", default=[], help="NAME=VALUE, as for ppmlib.book.rerun")
    parser.add_argument("--times", action="store_true", help="print every cell's time")
    parser.add_argument("--name", default="ce_income_seeds", help="the results file's stem")
    add_seed_options(parser)
    args = parser.parse_args(argv)
    overrides = dict(parse_assignment(p) for p in args.param)
    ledger = SeedLedger(args.name, title="CE income chapter at its defaults"
                        + (f" with {', '.join(args.param)}" if args.param else "") + ": what each seed measured",
                        notes="Each seed runs the chapter's own cells (seed set, claims not asserted). A claim's "
                              "'asserted' is the chapter's verdict: asserted only when the fits it uses pass the "
                              "diagnostics gate (R-hat < 1.01, ESS >= 400, no divergences).")
    held, asserted, runs = defaultdict(int), defaultdict(int), 0
    for seed in seeds_to_run(parser, args, ledger):
        start = time.perf_counter()
        try:
            with FitClock() as clock:
                ns = run_chapter("ce_income", {**overrides, "seed": seed, "check_claims": False, "progress": False},
                                 times=args.times, clock=clock)
        except Exception as err:   # a seed whose chapter fails (e.g. a calibration that does not converge) is counted
            print(f"--- seed {seed}: the chapter FAILED after {time.perf_counter() - start:.0f} s: "
                  f"{type(err).__name__}: {err}", flush=True)
            ledger.failed[seed] = type(err).__name__
            ledger.write()
            continue
        ledger.seconds[seed] = time.perf_counter() - start
        report(seed, ns, ledger.seconds[seed], clock)
        measure(ledger, seed, ns, clock)
        ledger.write()
        runs += 1
        for row in ns["claims"].rows:
            held[row["claim"]] += bool(row["holds"])
            asserted[row["claim"]] += bool(row["checked"])
    print(f"=== over {runs} seeds; the chapter failed on {sorted(ledger.failed) or 'none'}")
    for claim in held:
        print(f"  held on {held[claim]}, asserted on {asserted[claim]}: {claim}")
    for line in ledger.short_of_margin():
        print(f"INSIDE ITS MARGIN (or failed): {line}")


if __name__ == "__main__":
    main()
