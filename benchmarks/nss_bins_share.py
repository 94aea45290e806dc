"""The share of the budget that chooses the bins' range: NSS over bins with the range chosen from the
data (:func:`ppmlib.mechanism.nss.private_bounds`) at shares 0.1 and 0.2 of the total, beside
the same release on the benchmark's public bounds (no share), on 4 seeds, public wage files.

For seeds 1-4 (each a new sample of n = 3,000 rows, new noise and new synthetic draws), files
cps1988, cpssw8 and psid7682 (``bench_against_peers.FILES``), totals 1, 2, 5 and 10 (Laplace
counts, pure E-DP for every database as a whole, bounds included; m = 5; every dataset from the
posterior mean shape, the command's default): S_pMSE (logit with pairwise interactions), the
synthetic SD of log y over the data's, the coverage of the analyst's 95% intervals, and the range
chosen. Shares below 0.1 are refused at a total of 1 on 3,000 records
(:func:`ppmlib.mechanism.nss.check_private_bounds`).

Run: ``python benchmarks/nss_bins_share.py`` (a few minutes on an idle core; ``--seeds``, ``--shares``
for more).
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
    parser.add_argument("--shares", nargs="+", type=float, default=[0.1, 0.2])
    parser.add_argument("--m", type=int, default=5)
    args = parser.parse_args()
    from ppmlib.baselines.peers import frames_of
    from ppmlib.evaluate.utility import pmse
    from ppmlib.mechanism import nss
    rows = []
    for seed in args.seeds:
        for name in sorted(FILES):
            design = design_of(name, 3000, seed)
            _, _, keys, public = FILES[name]
            column = design.table.column
            for E in args.totals:
                for share in [None, *args.shares]:
                    done = nss.synthesize_bins(design.y, design.data[list(keys)], bounds=public if share is None else None,
                                               bounds_share=share, width=0.25, total_epsilon=E, m=args.m, seed=seed)
                    frames = frames_of(done.synthetic, design.data, column)
                    low, high = done.statistics.edges[[0, -1]]
                    rows.append({"seed": seed, "file": name, "total epsilon": E,
                                 "bounds": "public" if share is None else f"share {share:g}",
                                 "low": float(low), "high": float(high),
                                 "S_pMSE logit": pmse(design.data, frames, interactions=True).summary()["S_pMSE"],
                                 **frame_measures(design, frames)})
            print(f"seed {seed} {name} done", flush=True)
    _results.record("nss_bins_share", title="NSS over public bins: the bins' range chosen from the data at shares "
                    f"{', '.join(f'{x:g}' for x in args.shares)} of the total, or public bounds; {len(args.seeds)} seeds, "
                    "public wage files, n = 3,000, m = 5",
                    rows=rows, notes="Each seed draws a new sample of the file, new noise and new synthetic values. "
                    "Laplace counts, every dataset from the posterior mean shape; the whole release (bounds "
                    "included) pure E-DP for every database (add/remove one record), keys released as they are. "
                    "'public': the benchmark's fixed bounds of each file (no share spent).")


if __name__ == "__main__":
    main()
