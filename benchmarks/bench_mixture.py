"""Benchmark: the CE income mixture at the paper's size, today's program against the first one.

The paper's synthesizer (CE paper, Table 1 and Appendix 6.1): log income on the ten categorical
predictors, a finite mixture of K = 3 normal regressions, here 2 chains x 1000 draws after 1000
warmup, unweighted, on the shipped ``data/ce_like.csv``. Two programs on the same data and seed:

* ``first``: ``benchmarks/reference/mixture.stan``, the program the book shipped first
  (unordered labels, the raw one-hot design with all 34 columns, independent normal priors on the
  coefficients);
* ``current``: ``stan/mixture.stan`` (components ordered by scale, a centred QR design, shared
  slopes, priors stated in its header), on the design without its one redundant column (see
  ``ppmlib.design.independent_columns``);
* ``separate`` (on request): the same program with each component's own coefficients, as in the paper.

For each: wall time of the warm fit (the program compiled and loaded by an untimed tiny fit first),
the NUTS tree depth (mean, max, share of iterations at the limit 10), step size, divergences,
R-hat and bulk/tail ESS of the label-invariant quantities (``Mixture.diagnostic_draws``: the
log-likelihood's sum, the predictive mean and the pooled predictive 90th percentile) and ESS per
second (the smallest ESS over wall time) and per 1000 leapfrog steps (gradient evaluations: a measure
of sampling efficiency that does not depend on how loaded the machine is). Run:

    .venv/bin/python benchmarks/bench_mixture.py [first|current ...] [--seed S] [--predictors two|ten]

The backend is ppmlib's (PPMLIB_BACKEND picks one). The machine this runs on may be shared: compare
the two programs from one run, as a ratio.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import ppmlib
from ppmlib import backends
from ppmlib.design import independent_columns
from ppmlib.diagnostics import summarize
from ppmlib.models import family

TABLE_1 = ["Gender", "Age", "Education", "Region", "Urban", "MaritalStatus", "UrbanType", "CBSA", "FamilySize",
           "Earner"]
TWO = ["Earner", "Education"]
REFERENCE = Path(__file__).parent / "reference"
SAMPLER = dict(chains=2, draws=1000, warmup=1000)


def first_program_data(y, X) -> dict:
    """The first program's data: the raw design, its priors (intercept N(11, 1), slopes N(0, 1), sigma N+(0, 1))."""
    return {"n": y.size, "P": X.shape[1], "K": 3, "y": y, "X": X, "weights": np.ones(y.size),
            "dirichlet_concentration": 0.5, "prior_intercept_mean": 11.0, "prior_beta_sd": 1.0,
            "prior_sigma_sd": 1.0, "emit_log_lik": 0}


def current_program_data(y, X) -> dict:
    mixture = family("mixture")
    return mixture.stan_data(y, mixture.check_X(X, y.size), np.ones(y.size), dict(mixture.default_prior), False)


def separate_slopes_data(y, X) -> dict:
    """The current program with the paper's component-specific coefficients (shared_slopes = 0)."""
    return {**current_program_data(y, X), "shared_slopes": 0}


PROGRAMS = {
    "first": (REFERENCE, False, first_program_data),
    "current": (None, True, current_program_data),
    "separate": (None, True, separate_slopes_data),
}
DEFAULT = ("first", "current")


def run(name: str, y, X_full, X_independent, seed: int) -> dict:
    folder, independent, make_data = PROGRAMS[name]
    if folder is None:
        os.environ.pop("PPMLIB_STAN_DIR", None)
    else:
        os.environ["PPMLIB_STAN_DIR"] = str(folder)
    X = X_independent if independent else X_full
    data = make_data(y, X)
    backends.sample("mixture", data, chains=1, draws=10, warmup=10, seed=1)  # compile or load: not timed
    start = time.perf_counter()
    out = backends.sample("mixture", data, seed=seed, **SAMPLER)
    seconds = time.perf_counter() - start
    draws = {k: out.params[k] for k in family("mixture").params}
    diag = summarize(family("mixture").diagnostic_draws(draws, y, X), out.sampler, SAMPLER["chains"])
    depth = out.sampler["treedepth__"]
    ess = min(diag["min_ess_bulk"], diag["min_ess_tail"])
    return {"program": name, "backend": out.backend, "columns": X.shape[1], "seconds": seconds,
            "mean tree depth": float(depth.mean()), "max tree depth": int(depth.max()),
            "share at depth 10": float(np.mean(depth >= 10)), "step size": float(np.median(out.sampler["stepsize__"])),
            "leapfrog steps": int(out.sampler["n_leapfrog__"].sum()), "divergences": diag["divergences"],
            "max R-hat": diag["max_rhat"], "min bulk ESS": diag["min_ess_bulk"], "min tail ESS": diag["min_ess_tail"],
            "ESS/s": ess / seconds, "ESS per 1000 leapfrog steps": 1000 * ess / int(out.sampler["n_leapfrog__"].sum())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help=f"any of {list(PROGRAMS)} (default: {' '.join(DEFAULT)})")
    parser.add_argument("--seed", type=int, default=2017)
    parser.add_argument("--predictors", choices=("ten", "two"), default="ten")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.programs) - set(PROGRAMS))
    if unknown:
        parser.error(f"unknown programs {unknown}; choose from {list(PROGRAMS)}")
    df = ppmlib.ce_like.load()
    y = np.log(df["Income"].to_numpy(float))
    X = ppmlib.design_matrix(df, TABLE_1 if args.predictors == "ten" else TWO)
    X_independent = independent_columns(X)
    print(f"n = {y.size}, {args.predictors} predictors: {X.shape[1]} columns ({X_independent.shape[1]} independent), "
          f"K = 3, {SAMPLER['chains']} chains x {SAMPLER['draws']} draws after {SAMPLER['warmup']} warmup, "
          f"seed {args.seed}; load average {os.getloadavg()[0]:.1f}")
    rows = {}
    for program in args.programs or DEFAULT:
        rows[program] = row = run(program, y, X.to_numpy(), X_independent.to_numpy(), args.seed)
        print("  ".join(f"{k}: {v:.3g}" if isinstance(v, float) else f"{k}: {v}" for k, v in row.items()), flush=True)
    if set(DEFAULT) <= set(rows):
        first, current = rows["first"], rows["current"]
        print(f"time first / current: {first['seconds'] / current['seconds']:.1f}x; ESS/s current / first: "
              f"{current['ESS/s'] / first['ESS/s']:.1f}x; ESS per leapfrog step current / first: "
              f"{current['ESS per 1000 leapfrog steps'] / first['ESS per 1000 leapfrog steps']:.1f}x")


if __name__ == "__main__":
    main()
