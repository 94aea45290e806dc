"""Benchmark: wall time of the default Appendix D study with 1 and 2 workers.

R = 100 databases of n = 1000 records from each generating model (Poisson and NB mixture), the
Unweighted and LW synthesizers on each (4 chains x 1000 draws): 400 fits. The compiled models
must be cached (warm); the 2-worker run includes starting the local Dask cluster. Reports the
fits' worst diagnostics.

Each worker count runs with its own seed (seed + workers): httpstan keeps every seeded fit on disk
and serves a repeated (data, seed) request from that cache, so a second run with the same seed
would time the cache, not the sampler. (That the numbers do not depend on the worker count is
tested in tests/test_parallel.py.)

Run: ``python benchmarks/bench_montecarlo.py [--R 100] [--workers 1 2] [--save deltas.csv]``.
"""
import argparse
import os
import time

from ppmlib.studies import asymptotic_dp as montecarlo


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--R", type=int, default=100)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--save", default="")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    tables = {}
    for workers in args.workers:
        start = time.perf_counter()
        study = montecarlo.run_study(["poisson", "nb_mixture"], n=args.n, R=args.R, seed=args.seed + workers,
                                     n_jobs=workers, progress=False)
        seconds = time.perf_counter() - start
        tables[workers] = study.deltas
        d = study.deltas
        print(f"{workers} worker(s): {seconds:.0f} s for {len(d)} fits ({len(d) // 2} databases); "
              f"worst R-hat {d['max_rhat'].max():.4f}, smallest bulk ESS {d['min_ess_bulk'].min():.0f}, "
              f"divergences {int(d['divergences'].sum())}; load average {os.getloadavg()}", flush=True)
    first = next(iter(tables.values()))
    print(montecarlo.contraction(first).round(3).to_string())
    if args.save:
        first.to_csv(args.save, index=False)


if __name__ == "__main__":
    main()
