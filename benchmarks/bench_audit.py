"""Benchmark: the privacy audit (ppmlib.evaluate.audit) with the exact conjugate sampler.

Measures (1) trials per second of one audited setting (mechanism runs on D or D', the exact
likelihood-ratio attack, the held-out Clopper-Pearson bound) for each output, at n = 1000;
(2) the wall time of ``privacy_audit.run`` at the chapter's default parameters (3 sizes x 120 settings
x 10,000 trials, m = 100); (3) the same trials with one warm Stan fit per mechanism run, the route
the exact sampler replaces, extrapolated from a few timed fits.
Run: ``.venv/bin/python benchmarks/bench_audit.py``.
"""
import time

import numpy as np

import ppmlib
from ppmlib.inference import exact
from ppmlib.studies import privacy_audit

DEFAULTS = dict(n_values=[100, 300, 1000], trials=10_000, m=100)


def trials_per_second(output, trials=10_000, m=100, n=1000, repeat=3):
    y = ppmlib.datasets.simulate.poisson(n, 100, seed=1)
    d = exact.pseudo_posterior(y)
    d_prime = exact.pseudo_posterior(np.delete(y, int(np.argmax(y))))
    times = []
    for seed in range(repeat):
        start = time.perf_counter()
        scores, member = audit.mechanism_trials(d, d_prime, output, trials=trials, m=m, n_synthetic=n, seed=seed)
        audit.epsilon_lower_bound(scores, member)
        times.append(time.perf_counter() - start)
    return trials / min(times)


def stan_seconds_per_fit(n=1000, repeat=3):
    y = ppmlib.datasets.simulate.poisson(n, 100, seed=1)
    short = ppmlib.Sampler(chains=1, draws=100, warmup=100)
    ppmlib.fit("poisson", y, sampler=short, seed=0)   # warm-up: compile or load from cache
    times = []
    for seed in range(repeat):
        start = time.perf_counter()
        ppmlib.fit("poisson", y, sampler=short, seed=seed + 1)  # a fresh seed per timing, not a split
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    print("trials per second of one audited setting, n = 1000 (mechanism runs + exact LR attack + bound):")
    rates = {}
    for output in audit.OUTPUTS:
        rates[output] = trials_per_second(output)
        print(f"  {output:12s} {rates[output]:>12,.0f} trials/s" + ("  (m = 100 draws and datasets each)" if output == "m datasets" else ""))
    start = time.perf_counter()
    result = privacy_audit.run(DEFAULTS["n_values"], seed=2020, trials=DEFAULTS["trials"], m=DEFAULTS["m"])
    wall = time.perf_counter() - start
    runs = len(result.table) * DEFAULTS["trials"]
    print(f"privacy_audit.run at the chapter's defaults {DEFAULTS}: {len(result.table)} settings, {runs:,} mechanism runs")
    print(f"  wall time {wall:.1f} s (trials and attacks {result.seconds:.1f} s; weights, Deltas, exact losses the rest)")
    per_fit = stan_seconds_per_fit()
    draws_needed = sum(DEFAULTS["trials"] * (DEFAULTS["m"] if o == "m datasets" else 1)
                       for o in result.table["output"])
    print(f"  one warm Stan fit (1 chain, 100 draws, n = 1000): {per_fit:.2f} s; one fit per parameter draw of the")
    print(f"  audit ({draws_needed:,} draws) would take about {draws_needed * per_fit / 86400:,.0f} days on one core "
          f"(one fit per mechanism run, m draws from it: {runs * per_fit / 86400:,.1f} days)")


if __name__ == "__main__":
    main()
