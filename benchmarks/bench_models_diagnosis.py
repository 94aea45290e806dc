"""Benchmark: where a model's S_pMSE comes from, on the public wage files of ``bench_models.py``.

The logit propensity of S_pMSE (main effects and pairwise interactions) sees log y linearly, one
key at a time: in effect it compares the synthetic and the data's mean of log y in each level of
each key. A synthetic dataset of the normal main-effects regression misses those means twice: by
the posterior draw's error and by the independent predictive draws' own noise. This script splits
the two, without Stan, with the regression's exact posterior under a flat prior (beta | sigma
normal, sigma^2 scaled inverse chi-square): for each file and seed, m = 5 datasets

* ``posterior, iid``: a posterior draw each, then independent normal draws (what ``normal`` does);
* ``posterior, stratified``: the same draws, the residuals stratified within each cell of the keys
  (:func:`ppmlib.models.cells.stratified_normal`, as ``cells`` does);
* ``plug-in, iid``: the least-squares fit itself (no posterior error), independent draws.

Written to ``benchmarks/results/models_diagnosis.json``. Run: ``python benchmarks/bench_models_diagnosis.py``.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402
from bench_against_peers import FILES, design_of  # noqa: E402


def datasets(design, rng, m: int) -> dict:
    """The three kinds of m synthetic columns of log y, (m, n) each."""
    from ppmlib.models.bins import cell_index
    from ppmlib.models.cells import stratified_normal
    y, X = design.y, design.X
    n, P = X.shape
    XtX_inv = np.linalg.inv(X.T @ X)
    beta_hat = XtX_inv @ X.T @ y
    s2 = float(np.sum((y - X @ beta_hat) ** 2) / (n - P))
    sigma2 = (n - P) * s2 / rng.chisquare(n - P, size=m)
    L = np.linalg.cholesky(XtX_inv)
    beta = beta_hat + np.sqrt(sigma2)[:, None] * (rng.normal(size=(m, P)) @ L.T)
    mean, sd = beta @ X.T, np.sqrt(sigma2)[:, None]
    cells = cell_index(X)[1]
    return {"posterior, iid": mean + sd * rng.normal(size=(m, n)),
            "posterior, stratified": mean + sd * stratified_normal(rng, cells, m),
            "plug-in, iid": X @ beta_hat + np.sqrt(s2) * rng.normal(size=(m, n))}


def main() -> None:
    import os

    from ppmlib.evaluate.utility import cell_ks, pmse
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--m", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for name in sorted(FILES):
        for seed in args.seeds:
            design = design_of(name, args.n, seed, "normal")
            column, keys = design.table.column, list(design.table.keys)
            for kind, values in datasets(design, np.random.default_rng(seed), args.m).items():
                frames = [design.data.assign(**{column: v}) for v in values]
                rows.append({"file": name, "seed": seed, "synthesis": kind,
                             "S_pMSE logit": round(float(pmse(design.data, frames, interactions=True).summary()["S_pMSE"]), 3),
                             "KS per cell": round(float(cell_ks(design.data, frames, keys, column)["KS per cell"]), 3),
                             "load": round(os.getloadavg()[0], 2)})
            print(name, seed, flush=True)
    _results.record("models_diagnosis", title="Where the normal model's S_pMSE comes from: the posterior draw's "
                    "error and the predictive draws' noise (public wage files, n = 3,000, m = 5)", rows=rows,
                    notes="Exact flat-prior posterior of the normal main-effects regression (no Stan); one seed "
                    "per row seeds the file's sample and the draws.")


if __name__ == "__main__":
    main()
