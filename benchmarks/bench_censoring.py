"""Benchmark: a censored (strict) fit against the uncensored fit of the same data and model.

The target: a censored fit costs at most 2x the uncensored one. For each model (Poisson on
1,000 counts; the normal regression on 1,000 records with one predictor) both fits run warm (the
program compiled and cached; the first call of each is run once and not timed), on the default
backend, with the same seed and sampler; each time is the best of ``--repeat`` runs. CM (alpha = 1)
at epsilon = 1 with the "best" centring is the censored fit.

Writes ``benchmarks/results/bench_censoring.json`` (machine, date, load, command, times, ratios).
Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_censoring.py [--repeat 3]``.
"""
import argparse
import time

import numpy as np

import ppmlib
from _results import record
from ppmlib.datasets import simulate
from ppmlib.inference import backends



def data(model):
    rng = np.random.default_rng(1)
    if model == "poisson":
        return simulate.poisson(1000, 100, seed=1), None
    x = rng.normal(size=1000)
    return 1.0 + 0.5 * x + rng.normal(scale=0.7, size=1000), np.column_stack([np.ones(1000), x])


def timed(model, y, X, censor, sampler, repeat):
    times = []
    for seed in range(repeat):
        start = time.perf_counter()
        ppmlib.fit(model, y, X=X, sampler=sampler, seed=seed, censoring=censor)
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args(argv)
    sampler = ppmlib.Sampler(chains=4, draws=1000, warmup=1000)
    rows = {}
    for model in ("poisson", "normal"):
        y, X = data(model)
        for censor in (None, args.epsilon):    # warm-up: compile or load from cache
            ppmlib.fit(model, y, X=X, sampler=ppmlib.Sampler(chains=1, draws=10, warmup=10), seed=0, censoring=censor)
        plain = timed(model, y, X, None, sampler, args.repeat)
        censored = timed(model, y, X, args.epsilon, sampler, args.repeat)
        rows[model] = {"uncensored seconds": plain, "censored seconds": censored, "ratio": censored / plain}
        print(f"{model:8s} uncensored {plain:.2f} s, censored (CM, epsilon {args.epsilon:g}) {censored:.2f} s, "
              f"ratio {censored / plain:.2f}")
    written = record("bench_censoring", title="A censored fit (CM) against the uncensored fit of the same data: "
                     f"4 chains x 1000 draws after 1000 warmup, n = 1000, best of {args.repeat}, {backends.backend()}",
                     rows=[{"model": m, **r} for m, r in rows.items()], notes="target: ratio at most 2")
    print(f"written: {written}")


if __name__ == "__main__":
    main()
