"""Benchmark: a censored (strict) fit against the uncensored fit of the same data and model.

The target: a censored fit costs at most 2x the uncensored one. For each model (Poisson on
1,000 counts; the normal regression on 1,000 records with one predictor) the fits run warm (the
program compiled and cached; the first call of each is run once and not timed), on the default
backend, with the same seed and sampler; each time is the best of ``--repeat`` runs. CM (alpha = 1)
at epsilon = 1 with the "best" centring is the censored fit; its chains start at the uncensored
fit's posterior mean, as ``ppmlib.fit(..., start=)`` starts every censored fit.

The comparator is the same program on the same records with censoring off ("per record"). For the
normal model ``ppmlib.fit`` sends an uncensored fit the sufficient statistics instead, whose
gradient does not grow with n; that fit is timed too ("sufficient statistics"), and the ratio to it
is reported beside the target's. Each row also gives the mean leapfrog steps per draw (gradient
evaluations) and the seconds per 1,000 of them, which split a ratio into longer trajectories and
dearer gradients. The Poisson program sends a censored fit the records grouped by value, an
uncensored one three sums: its comparator is that program (no per-record variant exists).

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
from ppmlib.models.censoring import censoring
from ppmlib.models.families import family


def data(model):
    rng = np.random.default_rng(1)
    if model == "poisson":
        return simulate.poisson(1000, 100, seed=1), None
    x = rng.normal(size=1000)
    return 1.0 + 0.5 * x + rng.normal(scale=0.7, size=1000), np.column_stack([np.ones(1000), x])


def stan_data(model, y, X, variant, epsilon):
    """The program's data: "censored" (CM), "per record" (censoring off, records sent) or "sufficient"."""
    fam = family(model)
    y, X = fam.check_y(y), fam.check_X(X, y.size) if X is not None else None
    w, prior = np.ones(y.size), fam.check_prior(None)
    if variant == "censored":
        return fam, fam.stan_data(y, X, w, prior, False, censoring(fam, y, X, w, epsilon))
    if model == "normal":
        return fam, fam.stan_data(y, X, w, prior, False, None, sufficient=variant == "sufficient")
    return fam, fam.stan_data(y, X, w, prior, False, None)


def timed(fam, payload, sampler, repeat, init=None):
    best, steps, kept = np.inf, None, None
    for seed in range(repeat):
        start = time.perf_counter()
        draws = sampler.sample(fam, payload, seed, init=init)
        took = time.perf_counter() - start
        if took < best:
            best, steps, kept = took, draws.sampler, draws
    return best, float(np.mean(steps["n_leapfrog__"])), float(np.mean(steps["treedepth__"])), kept


def mean_point(draws) -> dict:
    """The uncensored fit's posterior mean: where ppmlib starts a censored fit's chains."""
    return {name: value.mean(axis=0).tolist() for name, value in draws.params.items() if name != "log_lik"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args(argv)
    sampler = ppmlib.Sampler(chains=4, draws=1000, warmup=1000)
    warm = ppmlib.Sampler(chains=1, draws=10, warmup=10)
    rows = []
    for model in ("poisson", "normal"):
        y, X = data(model)
        variants = ("per record", "censored") + (("sufficient",) if model == "normal" else ())
        out = {}
        for variant in variants:
            fam, payload = stan_data(model, y, X, variant, args.epsilon)
            warm.sample(fam, payload, 0)            # compile or load from cache
            # as ppmlib runs it, the censored fit starts at the uncensored fit's posterior mean
            init = mean_point(out["per record"][3]) if variant == "censored" else None
            out[variant] = timed(fam, payload, sampler, args.repeat, init)
        base, cens = out["per record"], out["censored"]
        row = {"model": model, "uncensored seconds": base[0], "censored seconds": cens[0], "ratio": cens[0] / base[0],
               "uncensored leapfrog per draw": base[1], "censored leapfrog per draw": cens[1],
               "uncensored tree depth": base[2], "censored tree depth": cens[2],
               "uncensored ms per 1000 leapfrog": 1e3 * base[0] / (base[1] * sampler.chains * 2000) * 1e3,
               "censored ms per 1000 leapfrog": 1e3 * cens[0] / (cens[1] * sampler.chains * 2000) * 1e3,
               "sufficient-statistics seconds": out["sufficient"][0] if "sufficient" in out else np.nan,
               "ratio to sufficient statistics": cens[0] / out["sufficient"][0] if "sufficient" in out else np.nan}
        rows.append(row)
        print(f"{model:8s} uncensored {base[0]:.2f} s ({base[1]:.1f} leapfrog/draw), censored (CM, epsilon "
              f"{args.epsilon:g}) {cens[0]:.2f} s ({cens[1]:.1f} leapfrog/draw), ratio {cens[0] / base[0]:.2f}"
              + (f"; sufficient statistics {out['sufficient'][0]:.2f} s" if "sufficient" in out else ""))
    written = record("bench_censoring", title="A censored fit (CM) against the uncensored fit of the same program on the "
                     f"same records: 4 chains x 1000 draws after 1000 warmup, n = 1000, best of {args.repeat}, "
                     f"{backends.backend()}", rows=rows,
                     notes="target: ratio at most 2 (the same program, records sent, censoring off); the censored fit "
                           "starts at the uncensored fit's posterior mean, as ppmlib starts it; the normal "
                           "model's sufficient-statistics fit (ppmlib.fit's default uncensored route) timed beside it; "
                           "leapfrog steps are the mean per draw over warmup-excluded draws, ms per 1000 leapfrog "
                           "counts warmup iterations as if they took as many steps")
    print(f"written: {written}")


if __name__ == "__main__":
    main()
