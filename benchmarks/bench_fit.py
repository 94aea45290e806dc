"""Benchmark: warm Stan fits at n = 1000 on each backend.

* one ``ppmlib.fit("poisson")``, 4 chains x 1000 draws, incl. the S x n log-likelihood;
* the LW pipeline of the book: unweighted fit, LW weights, weighted fit, Delta (1 chain x
  1000 + 1000 warmup per fit).

"Warm" means the compiled model is already cached; the first call of each backend, which may
compile, is run once and not timed. Each time is the best of ``repeat`` runs. Backends without an
installation are reported as skipped (cmdstanpy needs CmdStan: CMDSTAN=<path>, see the README).
Run: ``.venv/bin/python benchmarks/bench_fit.py``.
"""
import os
import time

import ppmlib
from ppmlib.inference import backends


def one_fit(y, seed):
    fit = ppmlib.fit("poisson", y, seed=seed)
    _ = fit.log_lik


def lw_pipeline(y, seed):
    sampler = ppmlib.Sampler(chains=1, draws=1000, warmup=1000)
    base_seed, private_seed = ppmlib.seeds(seed, 2)
    base = ppmlib.fit("poisson", y, seed=base_seed, sampler=sampler)
    alpha = ppmlib.lw_weights(base.log_lik, c=1.0, g=0.0)
    private = ppmlib.fit("poisson", y, weights=alpha, seed=private_seed, sampler=sampler)
    return ppmlib.lipschitz_bound(private.log_lik, alpha)


def best_time(task, y, repeat=5):
    times = []
    for seed in range(repeat):
        start = time.perf_counter()
        task(y, seed)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    y = ppmlib.datasets.simulate.poisson(1000, 100, seed=1)
    available = {"cmdstanpy": backends.cmdstan_available(), "pystan": backends.pystan_available()}
    for name, ok in available.items():
        if not ok:
            print(f"{name:10s} skipped: not installed here")
            continue
        os.environ["PPMLIB_BACKEND"] = name
        one_fit(y, 0)  # warm-up: compile or load from cache
        print(f"{name:10s} warm fit('poisson', n=1000, 4 x 1000 draws) incl. log_lik: {best_time(one_fit, y):.2f} s; "
              f"LW pipeline (2 fits of 1 x 1000 draws, weights, Delta): {best_time(lw_pipeline, y):.2f} s")


if __name__ == "__main__":
    main()
