"""Where CM's window is centred, and the censoring paper's ranking (issue 45, item 2).

:func:`ppmlib.studies.censoring_centre.centre_ledger` on the strict chapter's Poisson design (n =
1000 counts of mean 100, a new database per seed; m = 5, delta = 1e-6, exact draws): PPM beside CM
and WCM with the window centred at the record's best fit (public), at r_i = 0 (the paper's literal
reading), on the pilot's noisy clipped mean (share 0.2 of rho, public bound 200) and at the data's
mean (not private: a reference). Run on the chapter's claim seeds (1, 2, 3, 4) and four seeds drawn
at random (the generator and its entropy recorded), at the chapter's totals. Every row of the
ledger, and each claim of :func:`ppmlib.studies.censoring_centre.centre_claims` over all the seeds
with its value and margin, go to ``benchmarks/results/censoring_centre.json``; the strict chapter
draws its figure from that file.

Run: ``python benchmarks/bench_censoring_centre.py [--entropy E]`` (about a minute a seed).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402
from _chapter_seeds import draw_seeds  # noqa: E402

CLAIM_SEEDS = [1, 2, 3, 4]
TOTALS = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entropy", type=int, default=None, help="the random seeds' generator (default: fresh)")
    parser.add_argument("--random", type=int, default=4, help="seeds drawn at random beside the claim seeds")
    args = parser.parse_args()

    from ppmlib.datasets import simulate
    from ppmlib.models.families import POISSON_PRIOR
    from ppmlib.studies import censoring_centre as cc
    drawn = draw_seeds(args.random, args.entropy, avoid=CLAIM_SEEDS)
    seeds = CLAIM_SEEDS + drawn["seeds"]
    start = time.perf_counter()
    table = cc.centre_ledger(seeds, TOTALS, data=lambda s: simulate.poisson(1000, 100, seed=s), bound=200.0)
    seconds = time.perf_counter() - start
    claims = cc.centre_claims(table, POISSON_PRIOR["prior_shape"] / POISSON_PRIOR["prior_rate"])
    _results.record(
        "censoring_centre", title="CM and WCM with four window centres beside PPM, Poisson counts, exact draws",
        rows=table.to_dict("records"),
        notes=(f"n = 1000 Poisson(100) per seed, m = 5, delta = 1e-6, 4000 exact draws a fit, pilot share 0.2, "
               f"bound 200; {len(seeds)} seeds in {seconds:.0f} s. 'information about the data': the unweighted "
               f"posterior's variance over the mean squared distance of the scheme's draws from its mean."),
        extra={"drawn": [drawn], "seeds": seeds, "claims": [
            {k: row[k] for k in ("claim", "ours", "holds", "checked", "margin", "stated margin")} for row in claims.rows]})


if __name__ == "__main__":
    main()
