"""Run a chapter's own code cells once per seed and keep a ledger of what each seed measured.

The seed scripts (``ce_income_seeds.py``, ``reweighting_seeds.py``) share this: :func:`run_chapter`
executes a chapter (``book/<chapter>.md``, read with jupytext) in a fresh namespace with the
overrides applied after its parameters cell, :class:`FitClock` counts and times the Stan fits, and
:class:`SeedLedger` collects one row per seed per quantity and writes them with ``_results.record``
after every seed, so a run stopped half-way leaves the seeds it finished on disk. The chapters show
the file with ``ppmlib.book.results.seed_ledger``.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import jupytext
import numpy as np

from ppmlib.errors import BackendUnavailable
from ppmlib.inference import backends

try:   # run as a script from benchmarks/ or imported by a test with benchmarks/ on the path
    from _results import RESULTS, record
except ImportError:   # pragma: no cover
    from benchmarks._results import RESULTS, record

BOOK = Path(__file__).resolve().parent.parent / "book"


class FitClock:
    """Counts and times every Stan fit (wraps ppmlib.inference.backends.sample)."""

    def __init__(self):
        self.count, self.seconds, self._sample = 0, 0.0, backends.sample

    def __enter__(self):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return self._sample(*args, **kwargs)
            finally:
                self.count += 1
                self.seconds += time.perf_counter() - start
        backends.sample = timed
        return self

    def __exit__(self, *exc):
        backends.sample = self._sample


def run_chapter(chapter: str, overrides: dict, *, times: bool = False, clock: FitClock | None = None) -> dict:
    """Execute ``book/<chapter>.md``'s code cells with ``overrides`` applied after its parameters cell.

    Returns the namespace. With ``times``, prints every cell's time (and, given the ``clock``, its
    Stan fits and their time)."""
    from IPython.display import display   # a chapter may call display(), a notebook's builtin

    path = BOOK / f"{chapter}.md"
    namespace: dict = {"display": display}
    for cell in jupytext.read(path).cells:
        if cell.cell_type != "code":
            continue
        start, fits, fit_seconds = time.perf_counter(), clock.count if clock else 0, clock.seconds if clock else 0.0
        exec(compile(cell.source, str(path), "exec"), namespace)
        if "parameters" in cell.metadata.get("tags", []):
            namespace.update(overrides)
        elif times:
            stan = (f"{clock.count - fits:3d} fits {clock.seconds - fit_seconds:6.1f} s" if clock and clock.count > fits
                    else " " * 17)
            print(f"    {time.perf_counter() - start:6.1f} s {stan}  {cell.source.splitlines()[0][:80]}", flush=True)
    return namespace


def run_seed(ledger: "SeedLedger", chapter: str, overrides: dict, seed: int, label: str = "") -> dict | None:
    """One seed of ``chapter`` (claims not asserted), timed into ``ledger``: the chapter's namespace,
    or None when it failed (the failure is printed, recorded and written, and the run goes on)."""
    start = time.perf_counter()
    try:
        ns = run_chapter(chapter, {**overrides, "seed": seed, "check_claims": False})
    except Exception as err:   # e.g. a calibration that does not converge: counted, and the run goes on
        print(f"--- {label}seed {seed}: the chapter FAILED: {type(err).__name__}: {err}", flush=True)
        ledger.failed[seed] = type(err).__name__
        ledger.write()
        return None
    ledger.seconds[seed] = time.perf_counter() - start
    print(f"--- {label}seed {seed} ({ledger.seconds[seed]:.0f} s)", flush=True)
    return ns


NULL_SUFFIX = "without the effect (null)"
"""The ending of a claim's null row in a ledger."""

MARGIN_SUFFIX = "margin (share of the way to its null)"
"""The ending of a claim's margin row in a ledger (``ppmlib.book.claims.margin_of``)."""

SEED_RANGE = (1, 100_000)
"""Seeds drawn at random come from this range (low inclusive, high exclusive)."""


def draw_seeds(k: int, entropy: int | None = None, avoid=()) -> dict:
    """``k`` distinct seeds drawn at random, not in ``avoid``, and how they were drawn.

    ``entropy`` seeds the generator, ``numpy.random.default_rng(entropy)``; None draws a fresh one
    (from the operating system), so that nobody chooses the seeds, and records it, so that anyone
    can draw them again. Returns ``{"generator": ..., "entropy": ..., "seeds": [...]}``."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    entropy = int(np.random.SeedSequence().entropy) if entropy is None else int(entropy)
    rng = np.random.default_rng(entropy)
    seeds: list[int] = []
    while len(seeds) < k:
        seed = int(rng.integers(*SEED_RANGE))
        if seed not in seeds and seed not in set(avoid):
            seeds.append(seed)
    return {"generator": f"numpy.random.default_rng({entropy}).integers{SEED_RANGE}, repeats skipped",
            "entropy": entropy, "seeds": seeds}


def _null_value(null):
    """A claim's null for a ledger row: a number as a float (so the ledger shows its range over seeds),
    a tuple as its numbers to 3 significant digits."""
    if isinstance(null, (tuple, list)):
        return "(" + ", ".join(f"{float(v):.3g}" for v in null) + ")"
    try:
        return float(null)
    except (TypeError, ValueError):
        return str(null)


def _backend_note() -> str:
    """Which Stan backend fitted the seeds ("" where none is available, e.g. a test without Stan)."""
    try:
        return f"Stan backend: {backends.backend()}."
    except BackendUnavailable:
        return ""


def add_seed_options(parser) -> None:
    """A seed script's options for which seeds run: ``--add``, ``--random K``, ``--entropy E``."""
    parser.add_argument("--add", action="store_true", help="keep the file's rows of other seeds (add these seeds)")
    parser.add_argument("--random", type=int, default=0, metavar="K", help="add K seeds drawn at random (recorded)")
    parser.add_argument("--entropy", type=int, help="the seed of the generator that draws them (default: a fresh one)")


def seeds_to_run(parser, args, ledger: "SeedLedger") -> list[int]:
    """The seeds given, then ``args.random`` drawn at random (none of them a seed given or, with
    ``--add``, one the ledger keeps); the draw is recorded in ``ledger.drawn``."""
    if args.random < 0:
        parser.error(f"--random must be at least 0, got {args.random}")
    if not args.seeds and not args.random:
        parser.error("give seeds, or --random K")
    seeds = list(args.seeds)
    if args.add:
        ledger.keep_earlier(seeds)
    if args.random:
        drawn = draw_seeds(args.random, args.entropy, avoid={*seeds, *(row["seed"] for row in ledger.rows)})
        print(f"drawn at random: seeds {drawn['seeds']} ({drawn['generator']})", flush=True)
        ledger.drawn.append(drawn)
        seeds += drawn["seeds"]
    return seeds


def margin_verdicts(rows: list[dict]) -> dict[str, dict]:
    """For each claim asserted on some seed of a ledger's ``rows``: ``kept``, the seeds where it was
    asserted, held and kept its stated margin, and ``short``, what happened on the other seeds
    where it was asserted ("seed 3 failed", "seed 5 margin 0.04 < 0.1", ...)."""
    margins = {(row["seed"], row["quantity"].removesuffix(f": {MARGIN_SUFFIX}")): row for row in rows
               if "stated margin" in row}
    verdicts: dict[str, dict] = {}
    for row in rows:
        if not row["asserted"]:
            continue
        verdict = verdicts.setdefault(row["quantity"], {"kept": [], "short": []})
        margin = margins.get((row["seed"], row["quantity"]))
        if not row["held"]:
            verdict["short"].append(f"seed {row['seed']} failed")
        elif margin is None or margin["value"] is None:
            verdict["short"].append(f"seed {row['seed']} no margin")
        elif not margin["kept margin"]:
            verdict["short"].append(f"seed {row['seed']} margin {margin['value']:.3g} < {margin['stated margin']:g}")
        else:
            verdict["kept"].append(row["seed"])
    return verdicts


class SeedLedger:
    """One row per seed per quantity, written to ``benchmarks/results/<name>.json`` after every seed.

    A row is ``{"seed", "quantity", "value", "held", "asserted"}``: ``held`` and ``asserted`` are
    None for a measured quantity, booleans for a claim of the chapter (asserted: the chapter's
    check would fail the build if it did not hold). A claim's margin row adds ``stated margin``
    and ``kept margin`` (its margin at least the stated one). ``drawn`` lists the seeds drawn at
    random and the generator that drew them (:func:`draw_seeds`).
    """

    def __init__(self, name: str, *, title: str, notes: str = "", folder=None):
        self.name, self.title, self.notes, self.folder = name, title, notes, folder
        self.rows: list[dict] = []
        self.seconds: dict[int, float] = {}
        self.failed: dict[int, str] = {}
        self.earlier = ""
        self.drawn: list[dict] = []

    def keep_earlier(self, seeds) -> None:
        """Start from the file's rows of the seeds not in ``seeds`` (a run that adds seeds to a ledger).

        The earlier run's command, date and per-seed times go into the notes."""
        path = Path(self.folder or RESULTS) / f"{self.name}.json"
        if not path.exists():
            return
        earlier = json.loads(path.read_text())
        kept = [row for row in earlier["rows"] if row["seed"] not in set(seeds)]
        kept_seeds = {row["seed"] for row in kept}
        self.drawn = [{**d, "seeds": [s for s in d["seeds"] if s in kept_seeds]} for d in earlier.get("drawn", [])
                      if any(s in kept_seeds for s in d["seeds"])] + self.drawn
        if kept:
            done = ", ".join(str(s) for s in dict.fromkeys(row["seed"] for row in kept))
            self.rows = kept + self.rows
            self.earlier = (f"Seeds {done}: from `{earlier['command']}`, {earlier['date']} "
                            f"(load {earlier['load']['start'][0]:.1f} at its start); "
                            f"{earlier['notes'].removeprefix(self.notes).strip()}")

    def add(self, seed: int, quantity: str, value, *, held: bool | None = None, asserted: bool | None = None) -> None:
        """One measured quantity (or claim) of one seed; floats kept to 4 significant digits."""
        if isinstance(value, float):
            value = float(f"{value:.4g}")
        self.rows.append({"seed": int(seed), "quantity": quantity, "value": value, "held": held, "asserted": asserted})

    def add_claims(self, seed: int, claims) -> None:
        """Every row of a chapter's ``ppmlib.book.claims.Claims``: its value as the chapter states it and,
        for a claim given with its null (the quantity without the effect), that null in the next row
        and its margin (None where undefined) against the margin it states in the row after."""
        for row in claims.rows:
            self.add(seed, row["claim"], row["ours"], held=bool(row["holds"]), asserted=bool(row["checked"]))
            if row.get("null") is not None:
                self.add(seed, f"{row['claim']}: {NULL_SUFFIX}", _null_value(row["null"]))
            if row.get("power") is not None:
                self.add(seed, f"{row['claim']}: {MARGIN_SUFFIX}", row.get("margin"))
                stated = row.get("stated margin")
                self.rows[-1].update({"stated margin": stated, "kept margin": row.get("margin") is not None
                                      and stated is not None and row["margin"] >= stated})

    def short_of_margin(self) -> list[str]:
        """Each asserted claim that failed, or kept less than its stated margin, and on which seeds."""
        return [f"{claim}: {', '.join(verdict['short'])}" for claim, verdict in margin_verdicts(self.rows).items()
                if verdict["short"]]

    def write(self):
        """Write the rows so far (nothing when no seed finished); the file's path or None."""
        if not self.rows:
            return None
        done = sorted({row["seed"] for row in self.rows}, key=[row["seed"] for row in self.rows].index)
        timing = ", ".join(f"seed {s} {self.seconds[s]:.0f} s" for s in done if s in self.seconds)
        failed = "; ".join(f"seed {s} failed: {why}" for s, why in self.failed.items())
        drawn = " ".join(f"Seeds {', '.join(map(str, d['seeds']))} were drawn at random by {d['generator']}."
                         for d in self.drawn)
        notes = " ".join(part for part in (self.notes, _backend_note(), drawn,
                                           f"Wall time per seed: {timing}." if timing else "",
                                           f"The chapter {failed}." if failed else "", self.earlier) if part)
        return record(self.name, title=self.title, rows=self.rows, notes=notes, folder=self.folder,
                      extra={"drawn": self.drawn} if self.drawn else None)
