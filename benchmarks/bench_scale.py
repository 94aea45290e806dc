"""Benchmark: time and peak memory of the whole LW pipeline as n grows (10^3 ... 10^6).

unweighted fit -> LW weights -> LW fit -> Delta (by-record bounds) -> 20 synthetic datasets, for
Poisson data (Poisson synthesizer) and NB-mixture data (NB synthesizer), 4 chains x 1000 draws.
Each (model, n) runs in a fresh subprocess, so its peak resident memory (``ru_maxrss`` of the
child) is honest and not inflated by an earlier, larger run. The compiled models must be cached
(run any fit once first); the first fit in each child still loads the model, which is timed.

Run: ``python benchmarks/bench_scale.py`` (about 2 minutes; ``--sizes 1000 10000`` for fewer).
Prints one line per run and a markdown table for the README.
"""
import argparse
import json
import resource
import subprocess
import sys
import time

SIZES = (1_000, 10_000, 100_000, 1_000_000)
MODELS = ("poisson", "negbin")


def child(model: str, n: int) -> dict:
    """One pipeline run in this process; returns seconds per phase."""
    import numpy as np

    import ppmlib
    from ppmlib.inference import backends
    from ppmlib.models.families import family

    times = {}
    clock = time.perf_counter()

    def lap(name):
        nonlocal clock
        now = time.perf_counter()
        times[name] = times.get(name, 0.0) + now - clock
        clock = now

    if model == "poisson":
        y = ppmlib.datasets.simulate.poisson(n, 100, seed=1)
    else:
        y = ppmlib.datasets.simulate.nb_mixture(n, [100, 100], [5, 20], [0.2, 0.8], seed=1)
    lap("simulate")
    fam = family(model)
    # what fit() sends to Stan, prepared once on its own to time it (fit repeats it, a few ms)
    for weights in (np.ones(n), np.random.default_rng(0).uniform(size=n)):
        backends._jsonable(fam.stan_data(y, None, weights, dict(fam.default_prior), False))
    times["data for Stan (x2)"] = time.perf_counter() - clock
    clock = time.perf_counter()
    unweighted = ppmlib.fit(model, y, seed=2)
    lap("sampling (x2)")
    alpha = ppmlib.lw_weights(unweighted)
    lap("LW weights")
    lw = ppmlib.fit(model, y, weights=alpha, seed=3)
    lap("sampling (x2)")
    delta = ppmlib.lipschitz_bound(lw, alpha)
    lap("bounds (Delta)")
    synthetic = lw.synthesize(20, seed=4)
    lap("synthesis (20 datasets)")
    assert synthetic.shape == (20, n) and np.isfinite(delta)
    return {"model": model, "n": n, "delta": delta, "seconds": times,
            "total": sum(times.values()) - times["data for Stan (x2)"],
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2}


def run_in_subprocess(model: str, n: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", model, str(n)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "N"))
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
        return
    results = []
    for model in args.models:
        for n in args.sizes:
            r = run_in_subprocess(model, n)
            results.append(r)
            phases = ", ".join(f"{k} {v:.2f}" for k, v in r["seconds"].items())
            print(f"{model:8s} n={n:>9,}: {r['total']:6.2f} s, peak {r['peak_gb']:.2f} GB, Delta {r['delta']:.2f}  [{phases}]",
                  flush=True)
    print("\n| model | n | total time (s) | peak memory (GB) | sampling | bounds + LW weights | synthesis |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        s = r["seconds"]
        print(f"| {r['model']} | {r['n']:,} | {r['total']:.1f} | {r['peak_gb']:.2f} | {s['sampling (x2)']:.1f} | "
              f"{s['bounds (Delta)'] + s['LW weights']:.2f} | {s['synthesis (20 datasets)']:.2f} |")
    for model in args.models:
        rows = [r for r in results if r["model"] == model]
        if len(rows) > 1:
            print(f"{model}: time growth n = {rows[0]['n']:,} -> {rows[-1]['n']:,}: "
                  f"{rows[-1]['total'] / rows[0]['total']:.1f}x")


if __name__ == "__main__":
    main()
