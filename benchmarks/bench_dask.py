"""The command over the row groups of a Parquet file on a Dask LocalCluster of this machine.

Writes a seeded wage-like file (log wage a normal regression on five predictors: age, years of
education, experience, weekly hours, a 0/1 indicator), row groups of ``--row-group`` records,
then runs ``ppmlib.release.command.synthesize(cluster.read(...), plan, client=...)`` (the command's
``--dask`` path: the normal model, ``--guarantee local``, LW at c = 1 or calibrated to ``--epsilon``)
on a LocalCluster of ``--workers`` single-threaded worker processes, each with ``--memory-limit``. Records the wall
time, each stage's time, the fits, and the peak resident memory of every worker (psutil, sampled
every half second through the client) and of the client, to ``benchmarks/results/<--name>.json``
(benchmarks/_results.py).

Run: ``python benchmarks/bench_dask.py --n 10000000`` (``--n 1000000 --row-group 262144`` first, to
predict). A run stopped by SIGTERM or Ctrl-C records what it measured (time, memory, how far it got).
"""
from __future__ import annotations

import argparse
import resource
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402

PREDICTORS = ("age", "education", "experience", "hours", "indicator")


def write_file(path: Path, n: int, row_group: int, seed: int) -> None:
    """n records of the wage-like model, one row group at a time (never the whole file in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    writer = None
    try:
        for start in range(0, n, row_group):
            k = min(row_group, n - start)
            age = rng.uniform(18, 65, k)
            education = rng.integers(8, 21, k).astype(float)
            experience = np.maximum(age - education - 6, 0) + rng.uniform(0, 1, k)
            hours = rng.normal(40, 8, k).clip(5, 80)
            indicator = rng.integers(0, 2, k).astype(float)
            log_wage = (1.2 + 0.01 * age + 0.08 * education + 0.012 * experience + 0.005 * hours - 0.2 * indicator
                        + rng.normal(0, 0.5, k))
            chunk = pa.table({"wage": np.exp(log_wage), "age": age, "education": education, "experience": experience,
                              "hours": hours, "indicator": indicator})
            if writer is None:
                writer = pq.ParquetWriter(path, chunk.schema)
            writer.write_table(chunk, row_group_size=row_group)
    finally:
        if writer is not None:
            writer.close()


class MemoryWatch(threading.Thread):
    """The peak resident memory of every worker, sampled every ``every`` seconds through the client."""

    def __init__(self, client, every: float = 0.5):
        super().__init__(daemon=True)
        self.client, self.every, self.peak, self.stop = client, every, {}, threading.Event()

    @staticmethod
    def _rss() -> int:
        import psutil
        return psutil.Process().memory_info().rss

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                for worker, rss in self.client.run(self._rss, nanny=False).items():
                    self.peak[worker] = max(self.peak.get(worker, 0), rss)
            except Exception:  # noqa: BLE001 - a worker restarting or closing: sample again
                pass
            self.stop.wait(self.every)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--row-group", type=int, default=1_048_576)
    parser.add_argument("--m", type=int, default=1, help="synthetic datasets (default 1)")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--draws", type=int, default=250, help="draws per chain after as many warmup")
    parser.add_argument("--epsilon", type=float, default=None, help="target epsilon per dataset (default: LW at c = 1)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--folder", default="/tmp/ppm-bench-dask")
    parser.add_argument("--name", default="fast_dask")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    import shutil

    import ppmlib
    from distributed import Client, LocalCluster

    from ppmlib.release.cluster import read as read_parts
    from ppmlib.release.command import synthesize
    from ppmlib.release.plan import privacy_plan

    folder = Path(args.folder)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    path = folder / "wages.parquet"
    started = time.perf_counter()
    write_file(path, args.n, args.row_group, args.seed)
    written = time.perf_counter() - started
    row = {"n": args.n, "row group": args.row_group, "workers": args.workers, "memory limit": args.memory_limit,
           "draws S": args.chains * args.draws, "m": args.m,
           "target epsilon": args.epsilon if args.epsilon is not None else "none (LW at c = 1)",
           "writing the file (s)": round(written, 1), "status": "running"}

    def finish(status: str, watch=None, results=None, wall=None) -> None:
        row["status"] = status
        row["wall time of the run (s)"] = round(time.perf_counter() - run_start if wall is None else wall, 1)
        if watch is not None:
            peaks = sorted(watch.peak.values())
            row["peak memory per worker (MB)"] = [round(p / 1e6) for p in peaks]
        row["client peak memory (MB)"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3)
        if results is not None:
            lw = results["LW"]
            row.update({f"{stage} (s)": round(seconds, 1) for stage, seconds in results.seconds.items()})
            row.update({
                        "LW c": round(lw.c, 4), "Delta": round(lw.delta, 4), "epsilon per dataset": round(lw.epsilon, 4),
                        "calibration": (lw.calibration or {}).get("method", "none"),
                        "LW fits": (lw.calibration or {}).get("fits", 1), "diagnostics": results.verdict["verdict"],
                        "files": len(results.files)})
        _results.record(args.name, title="The command over the row groups of a Parquet file on a Dask LocalCluster "
                        "(ppm-synthesize --dask): normal model, --guarantee local", rows=[row],
                        notes=f"Seeded wage-like file (log wage normal on five predictors), {args.workers} worker "
                              f"processes with 1 thread and memory_limit={args.memory_limit} each; m = {args.m} "
                              f"dataset(s); {args.chains} chains x {args.draws} draws (fewer than the command's "
                              "default 4 x 1000, for time); peak memory is each worker's resident set, sampled every "
                              "0.5 s; the diagnostics gate is recorded, not enforced (allow_failed_fits).")

    run_start = time.perf_counter()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, memory_limit=args.memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        watch = MemoryWatch(client)
        watch.start()

        def stopped(signum, frame):
            watch.stop.set()
            finish(f"stopped by {signal.Signals(signum).name} before the end", watch)
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, stopped)
        signal.signal(signal.SIGINT, stopped)
        run_start = time.perf_counter()
        results = synthesize(read_parts(str(path), "wage", predictors=PREDICTORS, model="normal"),
                             privacy_plan("local", epsilon=args.epsilon, m=args.m), seed=args.seed,
                             out=folder / "release", sampler=ppmlib.Sampler(chains=args.chains, draws=args.draws,
                                                                            warmup=args.draws),
                             client=client, allow_failed_fits=True, progress=False)
        wall = time.perf_counter() - run_start
        watch.stop.set()
        watch.join(5)
        finish("done", watch, results, wall)
    print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
