"""k's effect: NSS over public bins with the m datasets from the posterior mean shape or from k
posterior draws, on 4 seeds, public wage files.

The mean shape (every dataset from each cell's posterior mean shape) leaves the noise's
uncertainty out of the between-dataset spread, so the analyst's combined intervals are too narrow
when the noise is large; k posterior draws (k = 1, 2 or m) put some of it back (Raghunathan,
Reiter and Rubin 2003: the partially synthetic rules need the datasets to differ by the
parameters' uncertainty). Here, for seeds 1-4 (each a new sample of n = 3,000 rows, new noise and
new synthetic draws), files cps1988, cpssw8 and psid7682 (``bench_against_peers.FILES``: their
public bins of width 0.25), totals 1, 2, 5 and 10 (Laplace counts, pure E-DP for every database,
m = 5): S_pMSE (logit with pairwise interactions), the synthetic SD of log y over the data's, the
coverage of the analyst's 95% intervals of the confidential estimate
(:func:`ppmlib.evaluate.coverage.coverage_rate`) and their mean width over the confidential
data's own 95% interval's (the price of the coverage).

Run: ``python benchmarks/nss_bins_k.py`` (about ten minutes on one core).
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402
from bench_against_peers import FILES, design_of, frame_measures  # noqa: E402


def width_ratio(data, frames, column, keys) -> float:
    """The combined intervals' mean width over the confidential data's own 95% intervals'."""
    import numpy as np

    from ppmlib.evaluate.coverage import coefficient_coverage
    from ppmlib.evaluate.utility import ols_of
    levels = {k: sorted(data[k].astype(str).unique()) for k in keys}
    _, _, variance = ols_of(column, keys, levels=levels).compute(data.assign(**{k: data[k].astype(str) for k in keys}))
    table = coefficient_coverage(data, frames, column, keys)
    return float(np.mean((table["upper"] - table["lower"]) / (2 * 1.959964 * np.sqrt(np.asarray(variance)))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4])
    parser.add_argument("--totals", nargs="+", type=float, default=[1.0, 2.0, 5.0, 10.0])
    parser.add_argument("--m", type=int, default=5)
    args = parser.parse_args()
    from ppmlib.baselines.peers import frames_of
    from ppmlib.evaluate.utility import pmse
    from ppmlib.mechanism import nss
    variants = {"mean shape": {"shape": "mean"}, **{f"k = {k}": {"shape": "draws", "k": k}
                                                    for k in sorted({1, 2, args.m})}}
    rows = []
    for seed in args.seeds:
        for name in sorted(FILES):
            design = design_of(name, 3000, seed)
            _, _, keys, bounds = FILES[name]
            column = design.table.column
            for E in args.totals:
                for label, settings in variants.items():
                    start = time.perf_counter()
                    done = nss.synthesize_bins(design.y, design.data[list(keys)], bounds=bounds, width=0.25,
                                               total_epsilon=E, m=args.m, mechanism="laplace", seed=seed, **settings)
                    seconds = time.perf_counter() - start
                    frames = frames_of(done.synthetic, design.data, column)
                    rows.append({"seed": seed, "file": name, "total epsilon": E, "datasets from": label,
                                 "S_pMSE logit": pmse(design.data, frames, interactions=True).summary()["S_pMSE"],
                                 **frame_measures(design, frames),
                                 "width ratio": width_ratio(design.data, frames, column, list(keys)),
                                 "seconds": seconds})
            print(f"seed {seed} {name} done", flush=True)
    _results.record("nss_bins_k", title="NSS over public bins: the m datasets from the posterior mean shape or "
                    f"from k = 1, 2, m posterior draws (Laplace counts), {len(args.seeds)} seeds, public wage files, n = 3,000, m = 5",
                    rows=rows, notes="Each seed draws a new sample of the file, new noise and new synthetic values; "
                    "every variant of a (seed, file, total) cell releases the same noisy counts (the same seed). "
                    "Pure E-DP for every database (add/remove one record), keys released as they are. 'width ratio': "
                    "the analyst's combined 95% intervals' mean width over the confidential data's own.")


if __name__ == "__main__":
    main()
