"""Seed ledger: NSS over public bins beside the perturbed histogram on 4 seeds, public wage files.

The single-run comparison of ``bench_against_peers.py`` rests on one draw of each release; S_pMSE
itself varies by a factor of two or more between two releases of the same synthesizer. Here both
cheap releases are repeated: for seeds 1-4 (each a new sample of n = 3,000 rows, new noise and new
synthetic draws), at totals 1, 2, 5 and 10 (m = 5), NSS over bins (Laplace counts, the posterior
mean shape, the benchmark's public bins) and the histogram at the same pure E. Rows: seed, file,
total, synthesizer, S_pMSE (logit with pairwise interactions), the coverage of the analyst's 95%
intervals and the SD ratio of log y. The strict chapter checks its claims on these rows.

Run: ``python benchmarks/nss_bins_seeds.py`` (a few minutes).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402
from bench_against_peers import FILES, design_of, frame_measures  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4])
    parser.add_argument("--totals", nargs="+", type=float, default=[1.0, 2.0, 5.0, 10.0])
    parser.add_argument("--m", type=int, default=5)
    args = parser.parse_args()
    from ppmlib.baselines.peers import frames_of, histogram
    from ppmlib.evaluate.utility import pmse
    from ppmlib.mechanism import nss
    rows = []
    for seed in args.seeds:
        for name in sorted(FILES):
            design = design_of(name, 3000, seed)
            _, _, keys, bounds = FILES[name]
            column = design.table.column
            for E in args.totals:
                done = nss.synthesize_bins(design.y, design.data[list(keys)], bounds=bounds, width=0.25,
                                           total_epsilon=E, m=args.m, mechanism="laplace", shape="mean", seed=seed)
                releases = {"ppm NSS bins (laplace, mean shape)": frames_of(done.synthetic, design.data, column),
                            "Histogram": histogram(design.data, design.table, E, m=args.m, seed=seed)}
                for label, frames in releases.items():
                    rows.append({"seed": seed, "file": name, "total epsilon": E, "synthesizer": label,
                                 "S_pMSE logit": pmse(design.data, frames, interactions=True).summary()["S_pMSE"],
                                 **frame_measures(design, frames)})
            print(f"seed {seed} {name} done", flush=True)
    _results.record("nss_bins_seeds", title="NSS over public bins (Laplace, posterior mean shape) beside the "
                    f"perturbed histogram at equal pure epsilon, {len(args.seeds)} seeds, public wage files, n = 3,000, m = 5",
                    rows=rows, notes="Each seed draws a new sample of the file, new noise and new synthetic values. "
                    "Both releases are pure E-DP for every database (add/remove one record), keys released as they are.")


if __name__ == "__main__":
    main()
