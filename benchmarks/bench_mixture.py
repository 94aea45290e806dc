"""Benchmark: the CE income mixture at the paper's size, today's program against the first one.

The paper's synthesizer (CE paper, Table 1 and Appendix 6.1): log income on the ten categorical
predictors, a finite mixture of K = 3 normal regressions, 2 chains x 1000 draws after 1000
warmup, on the shipped ``data/ce_like.csv`` (or ``--data``). Two programs on the same data, weights
and seed:

* ``first``: ``benchmarks/reference/mixture.stan``, the program the book shipped first
  (unordered labels, the raw one-hot design with all 34 columns, independent normal priors on the
  coefficients, Dirichlet(0.5) mixing);
* ``current``: ``stan/mixture.stan`` with ``Mixture``'s default prior (see its header), on the
  design without its one redundant column (``ppmlib.datasets.design.independent_columns``);
* ``separate`` (on request): the current program with each component's own coefficients, as in the paper.

Each program is fitted three ways (``--weightings``): ``unweighted``; ``LW``, the weights of
LW with c = 0.7, g = 0 (Table 2's first configuration) on the per-record bounds of the current
program's unweighted fit (the same weights for every program); ``SW``, one scalar weight
``--scalar`` (0.2 by default: down-weighting flattens the likelihood, so the prior's geometry
matters more). For each fit: wall time of the warm fit (the program compiled and loaded by an
untimed tiny fit first), the NUTS tree depth (mean, max), step size, leapfrog steps, divergences,
R-hat and bulk/tail ESS of the label-invariant quantities (``Mixture.diagnostic_draws``: the
log-likelihood's sum, the predictive mean and the pooled predictive 90th percentile, and here also
the sorted scales and sorted mixing weights), ESS per second (the smallest ESS over wall time)
and per 1000 leapfrog steps (gradient evaluations: a measure of sampling efficiency that does
not depend on how loaded the machine is). The current program runs at the CE chapter's settings
(``--adapt-delta`` 0.9, ``Mixture``'s default prior, Dirichlet(6) mixing; ``--dirichlet`` and
``--warmup`` change them), the first program at Stan's default adapt_delta 0.8, as it was shipped.
Run:

    .venv/bin/python benchmarks/bench_mixture.py [first|current|separate ...] [--seed S [S ...]]
        [--predictors two|ten] [--weightings unweighted,LW,SW] [--scalar A] [--data FILE] [--adapt-delta D]
        [--dirichlet A0] [--warmup W]

The backend is ppmlib's (PPMLIB_BACKEND picks one). The machine this runs on may be shared: the
load average is printed beside every wall time; compare programs by the load-independent columns.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import ppmlib
from ppmlib.inference import backends
from ppmlib.datasets.design import independent_columns
from ppmlib.inference.diagnostics import summarize
from ppmlib.models.families import family

TABLE_1 = ["Gender", "Age", "Education", "Region", "Urban", "MaritalStatus", "UrbanType", "CBSA", "FamilySize",
           "Earner"]
TWO = ["Earner", "Education"]
REFERENCE = Path(__file__).parent / "reference"
SAMPLER = dict(chains=2, draws=1000, warmup=1000)
WEIGHTINGS = ("unweighted", "LW", "SW")
LW_C, LW_G = 0.7, 0.0


def first_program_data(y, X, weights) -> dict:
    """The first program's data: the raw design, its priors (intercept N(11, 1), slopes N(0, 1), sigma N+(0, 1))."""
    return {"n": y.size, "P": X.shape[1], "K": 3, "y": y, "X": X, "weights": weights,
            "dirichlet_concentration": 0.5, "prior_intercept_mean": 11.0, "prior_beta_sd": 1.0,
            "prior_sigma_sd": 1.0, "emit_log_lik": 0}


DIRICHLET = {}   # --dirichlet: the current program's mixing concentration (else Mixture's default)


def current_program_data(y, X, weights) -> dict:
    mixture = family("mixture")
    return mixture.stan_data(y, mixture.check_X(X, y.size), weights, mixture.check_prior(DIRICHLET), False)


def separate_slopes_data(y, X, weights) -> dict:
    """The current program with the paper's component-specific coefficients (shared_slopes = 0)."""
    return {**current_program_data(y, X, weights), "shared_slopes": 0}


PROGRAMS = {
    "first": (REFERENCE, False, first_program_data),
    "current": (None, True, current_program_data),
    "separate": (None, True, separate_slopes_data),
}
DEFAULT = ("current", "first")


def label_invariant(draws: dict, y, X) -> dict:
    """Mixture.diagnostic_draws plus the sorted scales and mixing weights (invariant to relabelling)."""
    return {**family("mixture").diagnostic_draws(draws, y, X), "sorted sigma": np.sort(draws["sigma"], axis=1),
            "sorted mixing": np.sort(draws["mixing"], axis=1)}


def run(name: str, weighting: str, weights, y, X_full, X_independent, seed: int,
        adapt_delta: float = backends.STAN_ADAPT_DELTA) -> tuple[dict, dict]:
    """One warm fit: its row of the table and its draws."""
    folder, independent, make_data = PROGRAMS[name]
    if folder is None:
        os.environ.pop("PPMLIB_STAN_DIR", None)
    else:
        os.environ["PPMLIB_STAN_DIR"] = str(folder)
    X = X_independent if independent else X_full
    data = make_data(y, X, weights)
    backends.sample("mixture", data, chains=1, draws=10, warmup=10, seed=1)  # compile or load: not timed
    start = time.perf_counter()
    if name == "first":   # the reference as it was shipped: Stan's default adapt_delta, whatever --adapt-delta says
        adapt_delta = backends.STAN_ADAPT_DELTA
    out = backends.sample("mixture", data, seed=seed, adapt_delta=adapt_delta, **SAMPLER)
    seconds = time.perf_counter() - start
    load = os.getloadavg()[0]
    draws = {k: out.params[k] for k in family("mixture").params}
    diag = summarize(label_invariant(draws, y, X), out.sampler, SAMPLER["chains"])
    depth, leapfrog = out.sampler["treedepth__"], int(out.sampler["n_leapfrog__"].sum())
    ess = min(diag["min_ess_bulk"], diag["min_ess_tail"])
    row = {"program": name, "weighting": weighting, "backend": out.backend, "columns": X.shape[1],
           "seconds": seconds, "load": load, "mean tree depth": float(depth.mean()), "max tree depth": int(depth.max()),
           "step size": float(np.median(out.sampler["stepsize__"])), "leapfrog steps": leapfrog,
           "divergences": diag["divergences"], "max R-hat": diag["max_rhat"], "min bulk ESS": diag["min_ess_bulk"],
           "min tail ESS": diag["min_ess_tail"], "ESS/s": ess / seconds, "ESS per 1000 leapfrog steps": 1000 * ess / leapfrog}
    return row, draws


def lw_weights_of(draws: dict, y, X) -> np.ndarray:
    """LW's weights (c = 0.7, g = 0) on the per-record bounds of an unweighted fit's draws."""
    return ppmlib.mechanism.weights.lw_weights(family("mixture").log_lik(draws, y, X), LW_C, LW_G)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help=f"any of {list(PROGRAMS)} (default: {' '.join(DEFAULT)})")
    parser.add_argument("--seed", type=int, nargs="+", default=[2017],
                        help="Stan seeds (default 2017); with several, every fit is repeated per seed and the "
                             "ratios are summarised over them")
    parser.add_argument("--predictors", choices=("ten", "two"), default="ten")
    parser.add_argument("--weightings", default=",".join(WEIGHTINGS), help=f"comma-separated, of {WEIGHTINGS}")
    parser.add_argument("--scalar", type=float, default=0.2, help="SW's scalar weight (default 0.2)")
    parser.add_argument("--data", default=None, help="a CSV with ce_like's columns (default: data/ce_like.csv)")
    parser.add_argument("--adapt-delta", type=float, default=0.9,
                        help="NUTS's target acceptance rate of the current program (default 0.9, the CE chapter's; "
                             "the first program always runs at Stan's 0.8)")
    parser.add_argument("--warmup", type=int, default=SAMPLER["warmup"], help="warmup iterations per chain (default 1000)")
    parser.add_argument("--dirichlet", type=float, default=None,
                        help="the current program's Dirichlet concentration of the mixing weights (default: Mixture's)")
    args = parser.parse_args(argv)
    SAMPLER["warmup"] = args.warmup
    if args.dirichlet is not None:
        DIRICHLET["dirichlet_concentration"] = args.dirichlet
    programs = list(args.programs or DEFAULT)
    weightings = args.weightings.split(",")
    unknown = sorted(set(programs) - set(PROGRAMS)) + sorted(set(weightings) - set(WEIGHTINGS))
    if unknown:
        parser.error(f"unknown {unknown}; programs: {list(PROGRAMS)}, weightings: {list(WEIGHTINGS)}")
    if not 0 < args.scalar <= 1:
        parser.error(f"--scalar must lie in (0, 1], got {args.scalar}")
    df = ppmlib.datasets.ce_like.load(args.data)
    y = np.log(df["Income"].to_numpy(float))
    X = ppmlib.design_matrix(df, TABLE_1 if args.predictors == "ten" else TWO)
    X_independent = independent_columns(X)
    print(f"n = {y.size}, {args.predictors} predictors: {X.shape[1]} columns ({X_independent.shape[1]} independent), "
          f"K = 3, {SAMPLER['chains']} chains x {SAMPLER['draws']} draws after {SAMPLER['warmup']} warmup, "
          f"adapt_delta {args.adapt_delta}, Dirichlet {family('mixture').check_prior(DIRICHLET)['dirichlet_concentration']}, "
          f"seeds {args.seed}, data {args.data or 'data/ce_like.csv'}")
    ratios = {weighting: [] for weighting in weightings}
    for seed in args.seed:
        for weighting, ratio in compare(programs, weightings, y, X, X_independent, seed, args).items():
            ratios[weighting].append(ratio)
    if len(args.seed) > 1:
        for weighting, values in ratios.items():
            if values:
                print(f"{weighting}: ESS/s current / first over seeds {args.seed}: "
                      f"{', '.join(f'{v:.1f}x' for v in values)} (median {np.median(values):.1f}x, "
                      f"min {min(values):.1f}x)")


def compare(programs, weightings, y, X, X_independent, seed: int, args) -> dict:
    """Every program and weighting at one seed, each row printed as it is measured; ESS/s ratios current / first."""
    weights = {"unweighted": np.ones(y.size), "SW": np.full(y.size, args.scalar)}
    rows = {}

    def measured(program: str, weighting: str) -> dict | None:
        """Fit once, print the row as soon as it is measured; the draws of a new fit (None if it was measured)."""
        if (program, weighting) in rows:
            return None
        rows[program, weighting], draws = run(program, weighting, weights[weighting], y, X.to_numpy(),
                                              X_independent.to_numpy(), seed, args.adapt_delta)
        print(f"seed: {seed}  " + "  ".join(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}"
                                             for k, v in rows[program, weighting].items()), flush=True)
        return draws

    if "LW" in weightings:   # LW's weights come from the current program's unweighted fit, shared by every program
        weights["LW"] = lw_weights_of(measured("current", "unweighted"), y, X_independent.to_numpy())
    for weighting in weightings:
        for program in programs:
            measured(program, weighting)
    ratios = {}
    for weighting in weightings:
        if ("first", weighting) in rows and ("current", weighting) in rows:
            first, current = rows["first", weighting], rows["current", weighting]
            ratios[weighting] = current["ESS/s"] / first["ESS/s"]
            print(f"seed {seed}, {weighting}: time first / current {first['seconds'] / current['seconds']:.1f}x; ESS/s "
                  f"current / first {ratios[weighting]:.1f}x; ESS per leapfrog step current / first "
                  f"{current['ESS per 1000 leapfrog steps'] / first['ESS per 1000 leapfrog steps']:.1f}x")
    return ratios


if __name__ == "__main__":
    main()
