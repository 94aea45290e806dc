"""Benchmark: a file of 10^6 rows with a count column through ``python -m ppmlib.synthesize``.

Writes a CSV of n rows (a count column from the book's NB mixture design, and a categorical
column the count models ignore), then runs the command on it in a fresh subprocess for each model
(poisson, negbin), with and without the HTML report, default sampler (4 chains x 1000 draws), LW,
m = 20. Reports wall time and the peak resident memory of the command's process and of its
children (the Stan chains and the report's kernel; ``ru_maxrss`` of the largest child).

Run: ``python benchmarks/bench_synthesize.py`` (``--n 100000`` for a smaller file). The compiled
models must be cached (run any fit once first). Target: peak memory under 2 GB at n = 10^6.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import record

MODELS = ("poisson", "negbin")


def child(argv: list) -> dict:
    """Run the command in this process; return its exit status and peak memory (self, children)."""
    import resource

    from ppmlib.release.command import main
    status = main(argv)
    return {"status": status,
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
            "children_peak_gb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6}


def write_file(path: Path, n: int) -> None:
    import numpy as np
    import pandas as pd

    import ppmlib
    counts = ppmlib.datasets.simulate.nb_mixture(n, [100, 100], [5, 20], [0.2, 0.8], seed=1)
    region = np.random.default_rng(2).choice(["north", "south", "east", "west"], n)
    pd.DataFrame({"visits": counts, "region": region}).to_csv(path, index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "counts.csv"
        write_file(data, args.n)
        for model in MODELS:
            for report in (False, True):
                out = Path(folder) / f"out-{model}-{report}"
                argv = [str(data), "--column", "visits", "--model", model, "--guarantee", "local", "--out", str(out)]
                argv += [] if report else ["--no-report"]
                start = time.perf_counter()
                done = subprocess.run([sys.executable, __file__, "--child", *argv], capture_output=True, text=True)
                seconds = time.perf_counter() - start
                if done.returncode != 0:
                    sys.exit(f"{model} failed:\n{done.stderr[-2000:]}")
                result = json.loads(done.stdout.strip().splitlines()[-1])
                rows.append({"model": model, "report": report, "seconds": seconds, **result})
                print(rows[-1], flush=True)
    record("synthesize", title="ppm-synthesize on a file of counts (LW, 4 chains x 1000 draws, m = 20)",
           rows=[{"model": r["model"], "n": args.n, "report": "yes" if r["report"] else "no",
                  "time (s)": round(r["seconds"]), "peak memory, command (GB)": round(r["peak_gb"], 2),
                  "peak memory, largest child (GB)": round(r["children_peak_gb"], 2)} for r in rows],
           notes="Warm model cache. Target: every process under 2 GB at n = 10^6.")


if __name__ == "__main__":
    main()
