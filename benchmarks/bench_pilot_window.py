"""CM's censoring window: the fixed public centre against the pilot's data-following window (issue 42, items 1-2).

On the public wage files of ``bench_against_peers.py`` (cps1988, cpssw8, psid7682; n = 3,000 drawn
with the seed, m = 5, delta = 1e-6, the normal model of log y on the keys' main effects), at every
total epsilon of the release:

* "CM fixed centre": the command's CM before the pilot: the window's top at log Normal(y | y, 1)
  (reference scale 1), the chains started at the unweighted fit's posterior mean, the whole budget on
  the m censored draws.
* "CM pilot": a share of the release's rho buys the pilot (:mod:`ppmlib.mechanism.pilot`; the files'
  public log bounds of the against-peers benchmark), the window is centred on its estimate and the
  chains start there; the rest buys the m draws.

Each row: share censored, the gate (max R-hat, min bulk/tail ESS, divergences), S_pMSE (logit),
the synthetic SD of log y over the data's, the coverage of the analyst's 95% intervals
(:func:`ppmlib.evaluate.coverage.coverage_rate`), seconds. The pilot's share is varied at each
total of ``--share-totals`` with ``--shares``. Results: ``benchmarks/results/<--name>.json``:
``pilot_window`` (4 chains x 500 draws, both variants), ``strict_gate_1000`` (the fixed centre at
the command's sampler, 1,000 draws) and ``pilot_gate_1000`` (the pilot there, shares 0.1, 0.2, 0.4).

Run (niced, cmdstanpy faster): ``CMDSTAN=... PPMLIB_BACKEND=cmdstanpy nice -n 5 python
benchmarks/bench_pilot_window.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402
from bench_against_peers import FILES, design_of  # noqa: E402


def one_fit(design, variant: str, total: float, share: float, base, seed: int, m: int, delta: float, sampler) -> dict:
    """One CM release of ``variant`` at ``total`` and its measures."""
    import numpy as np

    import ppmlib
    from ppmlib.baselines.peers import frames_of
    from ppmlib.evaluate.coverage import coverage_rate
    from ppmlib.inference.diagnostics import is_ok
    from ppmlib.mechanism.ledger import of_release, solve_per_dataset_epsilon
    from ppmlib.mechanism.pilot import pilot, split_budget
    from ppmlib.evaluate.utility import pmse
    start = time.perf_counter()
    base = None if variant == "CM pilot" else base
    if variant == "CM fixed centre":
        eps = solve_per_dataset_epsilon(total, delta, m)
        done = ppmlib.synthesizer(design.model, design.y, "cm", X=design.X, epsilon=eps, start=base, m=m, seed=seed,
                                  sampler=sampler)
    else:
        eps, rho0 = split_budget(total, delta, m, share)
        found = pilot(design.y, design.X, bounds=FILES[design.name][3], rho=rho0, seed=seed + 1, share=share)
        done = ppmlib.synthesizer(design.model, design.y, "cm", X=design.X, epsilon=eps, pilot=found, m=m, seed=seed,
                                  sampler=sampler)
    seconds = time.perf_counter() - start
    frames = frames_of(done.synthetic, design.data, design.table.column)
    column, keys = design.table.column, list(design.table.keys)
    d = done.diagnostics
    book = of_release(done, delta)
    return {"file": design.name, "seed": seed, "total epsilon": total, "variant": variant,
            "pilot share": share if variant == "CM pilot" else 0.0, "per-draw epsilon": eps,
            "release epsilon": book.total[0], "share censored": done.share_censored,
            "max R-hat": d["max_rhat"], "min bulk ESS": d["min_ess_bulk"], "min tail ESS": d["min_ess_tail"],
            "divergences": d["divergences"], "gate": bool(is_ok(d)),
            "S_pMSE logit": pmse(design.data, frames, interactions=True).summary()["S_pMSE"],
            "SD log y ratio": float(np.mean([f[column].std() for f in frames]) / design.data[column].std()),
            "coverage 95%": coverage_rate(design.data, frames, column, keys), "seconds": round(seconds, 1),
            "load": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="+", default=list(FILES))
    parser.add_argument("--totals", nargs="+", type=float, default=[0.5, 1.0, 2.0, 5.0])
    parser.add_argument("--share", type=float, default=0.2)
    parser.add_argument("--shares", nargs="*", type=float, default=[], help="more pilot shares, at each --share-totals")
    parser.add_argument("--share-totals", nargs="+", type=float, default=[1.0])
    parser.add_argument("--variants", nargs="+", default=["CM fixed centre", "CM pilot"])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--draws", type=int, default=500, help="NUTS draws (and warm-up) per chain, 4 chains")
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--scratch", default="/tmp/pilot_window_rows.jsonl")
    parser.add_argument("--name", default="pilot_window")
    parser.add_argument("--record-only", action="store_true", help="record the rows already in --scratch, fit nothing")
    parser.add_argument("--note", default="", help="appended to the file's notes (e.g. the commands that made the rows)")
    args = parser.parse_args()
    import ppmlib
    scratch = Path(args.scratch)
    rows = [json.loads(line) for line in scratch.read_text().splitlines()] if scratch.exists() else []
    seen = {(r["file"], r["seed"], r["total epsilon"], r["variant"], r["pilot share"]) for r in rows}
    sampler = ppmlib.Sampler(chains=4, draws=args.draws, warmup=args.draws)
    designs = {name: design_of(name, args.n, args.seed) for name in args.files}
    bases = {}
    jobs = [(name, v, E, args.share) for E in args.totals for name in args.files for v in args.variants]
    jobs += [(name, "CM pilot", E, s) for E in args.share_totals for s in args.shares for name in args.files]
    for name, variant, E, share in [] if args.record_only else jobs:     # totals first: every file gets the small totals before the large
        if (name, args.seed, E, variant, share if variant == "CM pilot" else 0.0) in seen:
            continue
        design = designs[name]
        if variant == "CM fixed centre" and name not in bases:
            bases[name] = ppmlib.synthesizer(design.model, design.y, X=design.X, m=args.m, seed=args.seed,
                                             sampler=sampler)
        row = one_fit(design, variant, E, share, bases.get(name), args.seed, args.m, args.delta, sampler)
        print(json.dumps(row), flush=True)
        rows.append(row)
        with scratch.open("a") as out:
            out.write(json.dumps(row) + "\n")
    _results.record(args.name, title="CM's censoring window: fixed public centre vs the pilot's window, public wage "
                    "files (n 3,000, m 5, delta 1e-6)", rows=rows,
                    notes="gate: R-hat < 1.01, bulk and tail ESS >= 400, no divergences; the pilot's share of the "
                          "release's rho in 'pilot share'; coverage of the analyst's 95% intervals of the regression "
                          "of log y on the keys (partially synthetic rules); 'load' is the 1-minute load at the row's end"
                          + (f". {args.note}" if args.note else ""))


if __name__ == "__main__":
    main()
