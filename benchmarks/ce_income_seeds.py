"""Re-measure the CE income chapter's claims on many seeds, at its defaults (or with overrides).

    .venv/bin/python benchmarks/ce_income_seeds.py 2017 1 2 3 4 5 6 7 [-p draws=500 ...] [--times]

Each seed executes the chapter's own code cells (``book/ce_income.md``, read with jupytext) in a
fresh namespace, with ``seed`` set, ``check_claims=False`` and ``progress=False``, so what is
measured is what the chapter runs. For every seed it prints each synthesizer's Delta with its
diagnostics gate, the map's Deltas with their refit ranges, and every claim (held? asserted?); at
the end, for every claim, on how many seeds it held and on how many it was asserted (computed from
fits that passed the gate). ``--times`` adds every cell's time and the number and time of Stan fits
(where the chapter's time goes). Both Stan backends give identical draws for the same seed (the
parity tests), so ``PPMLIB_BACKEND=cmdstanpy`` gives the same numbers faster when CmdStan is
installed. The chapter's "Where our numbers differ" section states what this printed.
"""
from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import jupytext

from ppmlib.inference import backends
from ppmlib.book.rerun import parse_assignment

CHAPTER = Path(__file__).resolve().parent.parent / "book" / "ce_income.md"


class FitClock:
    """Counts and times every Stan fit (wraps ppmlib.inference.backends.sample)."""

    def __init__(self):
        self.count, self.seconds, self._sample = 0, 0.0, backends.sample

    def __enter__(self):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return self._sample(*args, **kwargs)
            finally:
                self.count += 1
                self.seconds += time.perf_counter() - start
        backends.sample = timed
        return self

    def __exit__(self, *exc):
        backends.sample = self._sample


def run_chapter(overrides: dict, *, times: bool = False, clock: FitClock | None = None) -> dict:
    """Execute the chapter's code cells with ``overrides`` applied after its parameters cell; its namespace.
    With ``times``, every cell's time (and, given the ``clock``, its Stan fits and their time)."""
    namespace: dict = {}
    for cell in jupytext.read(CHAPTER).cells:
        if cell.cell_type != "code":
            continue
        start, fits, fit_seconds = time.perf_counter(), clock.count if clock else 0, clock.seconds if clock else 0.0
        exec(compile(cell.source, str(CHAPTER), "exec"), namespace)
        if "parameters" in cell.metadata.get("tags", []):
            namespace.update(overrides)
        elif times:
            stan = (f"{clock.count - fits:3d} fits {clock.seconds - fit_seconds:6.1f} s" if clock and clock.count > fits
                    else " " * 17)
            print(f"    {time.perf_counter() - start:6.1f} s {stan}  {cell.source.splitlines()[0][:80]}", flush=True)
    return namespace


def report(seed: int, ns: dict, seconds: float, clock: FitClock) -> None:
    results, cg = ns["results"], ns["cg"]
    print(f"--- seed {seed}: {seconds:.0f} s, {clock.count} Stan fits ({clock.seconds:.0f} s)", flush=True)
    if getattr(results, "seconds", None):
        print("  lineup seconds (calibration included): "
              + ", ".join(f"{name} {sec:.0f}" for name, sec in results.seconds.items()))
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", nargs="+", type=int)
    parser.add_argument("-p", "--param", action="append", default=[], help="NAME=VALUE, as for ppmlib.book.rerun")
    parser.add_argument("--times", action="store_true", help="print every cell's time")
    args = parser.parse_args(argv)
    overrides = dict(parse_assignment(p) for p in args.param)
    held, asserted, runs, failed = defaultdict(int), defaultdict(int), 0, []
    for seed in args.seeds:
        start = time.perf_counter()
        try:
            with FitClock() as clock:
                ns = run_chapter({**overrides, "seed": seed, "check_claims": False, "progress": False},
                                 times=args.times, clock=clock)
        except Exception as err:   # a seed whose chapter fails (e.g. a calibration that does not converge) is counted
            print(f"--- seed {seed}: the chapter FAILED after {time.perf_counter() - start:.0f} s: "
                  f"{type(err).__name__}: {err}", flush=True)
            failed.append(seed)
            continue
        report(seed, ns, time.perf_counter() - start, clock)
        runs += 1
        for row in ns["claims"].rows:
            held[row["claim"]] += bool(row["holds"])
            asserted[row["claim"]] += bool(row["checked"])
    print(f"=== over {runs} seeds ({', '.join(str(s) for s in args.seeds if s not in failed)}); "
          f"the chapter failed on {failed or 'none'}")
    for claim in held:
        print(f"  held on {held[claim]}, asserted on {asserted[claim]}: {claim}")


if __name__ == "__main__":
    main()
