"""Experiment: over which total budgets does the synthetic (y, w) table beat the Laplace table?

The survey-tables chapter asserts "the table from synthetic microdata beats the Laplace table" at
total budgets of 5, 10 and 20 and reports it at 2.5 and 40, where it failed on a seed. This runs
both publishers of the chapter (``ppmlib.studies.survey_tables.run``: the joint synthesizer with
LW weights, m datasets at epsilon / m each, and Laplace noise on the cells' totals) over a finer
grid of totals and eight seeds, and beside them the same synthesizer without privacy (alpha = 1):
the error floor of a table computed from redrawn data, which no budget removes. Laplace's error
falls like 1 / epsilon, so it must cross that floor; at small totals each of the m datasets gets
too little budget and the weights shrink the posterior towards the prior.

Run: ``python benchmarks/bench_survey_crossover.py [--totals ...] [--seeds ...] [--m 5]``
(about 10 s a (total, seed) here; writes ``benchmarks/results/survey_crossover.json``).
``--add --random K [--entropy E]`` keeps the file's rows and adds K seeds drawn at random (the
generator and its entropy recorded in the file's ``drawn``), as the seed ledgers do.
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd

from _chapter_seeds import draw_seeds
from _results import RESULTS, record
from ppmlib.errors import DataRefused
from ppmlib.evaluate.survey import combined_table, weighted_table
from ppmlib.mechanism.survey import survey_synthesizer
from ppmlib.studies import survey_tables

TOTALS = [1.25, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0]
SEEDS = [1, 2, 3, 4, 5, 6, 7, 8]


def rmse(cells: pd.DataFrame, method: str) -> float:
    """RMSE over the table's cells of one method's weighted means against the confidential ones."""
    errors = cells.loc[cells["method"] == method, "error"].to_numpy()
    return float(np.sqrt(np.mean(errors ** 2)))


def floor(data: pd.DataFrame, m: int, seed: int, draws: int) -> float:
    """RMSE of the table from m datasets of the same joint synthesizer without privacy (alpha = 1)."""
    cells = list(survey_tables.CELLS)
    s = survey_synthesizer(data, "yedu", "perweight", cells, scheme="unweighted", m=m, draws=draws, seed=seed,
                           centre=12.0, weight_centre=8.0)
    table = combined_table([weighted_table(s.synthetic_outcome[l], s.synthetic_weights[l], s.public[cells])
                            for l in range(m)])
    truth = survey_tables.confidential_table(data)["mean"]
    return float(np.sqrt(((table["mean"].reindex(truth.index) - truth) ** 2).mean()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--totals", type=float, nargs="*", default=TOTALS)
    parser.add_argument("--seeds", type=int, nargs="*", default=SEEDS)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--add", action="store_true", help="keep the result file's rows and seeds")
    parser.add_argument("--random", type=int, default=0, help="seeds drawn at random, beside --seeds")
    parser.add_argument("--entropy", type=int, default=None, help="the random seeds' generator")
    args = parser.parse_args()
    data = survey_tables.nhis()
    joint, laplace = survey_tables.METHODS[0], survey_tables.METHODS[2]
    earlier = json.loads((RESULTS / "survey_crossover.json").read_text()) if args.add else {}
    rows, drawn = list(earlier.get("rows", [])), list(earlier.get("drawn", []))
    done = {row["seed"] for row in rows}
    seeds = [seed for seed in args.seeds if seed not in done]
    if args.random:
        drawn.append(draw_seeds(args.random, args.entropy, avoid=done | set(args.seeds)))
        print(f"drawn at random: seeds {drawn[-1]['seeds']} ({drawn[-1]['generator']})", flush=True)
        seeds += drawn[-1]["seeds"]
    for seed in seeds:
        no_privacy = floor(data, args.m, seed, args.draws)
        for total in args.totals:
            start = time.perf_counter()
            try:
                cells, _ = survey_tables.run(data, [total], m=args.m, seeds=[seed], draws=args.draws,
                                             methods=(joint, laplace))
                ppm, lap, failure = rmse(cells, joint), rmse(cells, laplace), ""
            except DataRefused as err:   # a synthetic weight overflowed: the table cannot be computed
                cells, _ = survey_tables.run(data, [total], m=args.m, seeds=[seed], methods=(laplace,))
                ppm, lap, failure = None, rmse(cells, laplace), str(err)
            rows.append({"total epsilon": total, "seed": seed, "PPM (y, w) RMSE": ppm, "Laplace RMSE": lap,
                         "PPM / Laplace": None if ppm is None else ppm / lap, "no-privacy RMSE": no_privacy,
                         "failure": failure, "seconds": round(time.perf_counter() - start, 1)})
            print(f"seed {seed} total {total:g}: PPM {ppm} Laplace {lap:.4f} floor {no_privacy:.4f} {failure} "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    record("survey_crossover", rows=rows,
           title="Survey tables: RMSE of the synthetic (y, w) table and of the Laplace table over total epsilon",
           notes=f"NHIS extract (18,790 persons), 8 cells, m = {args.m} datasets at epsilon / m each, "
                 f"{args.draws} exact draws; the no-privacy RMSE is the same synthesizer with alpha = 1."
                 + "".join(f" Seeds {d['seeds']} drawn at random by {d['generator']}." for d in drawn)
                 + (f" Rows of seeds {sorted(done)} kept from the run of {earlier['date']} ({earlier['command']})."
                    if done else ""),
           extra={"drawn": drawn} if drawn else None)


if __name__ == "__main__":
    main()
