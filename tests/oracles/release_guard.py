"""The release bytes of a few fixed runs, to hold a refactor of the release code to its behaviour.

``python tests/oracles/release_guard.py`` runs each case below with fixed seeds on a small table
(exact Poisson draws stand in for NUTS, the survey path's draws are exact anyway, so no Stan) and
writes ``tests/oracles/release_guard.json``: every released file's SHA-256 and the manifest with
its timestamp and paths taken out. ``tests/test_release_guard.py`` runs the same cases and compares.
Regenerate the file only when a change of the release is meant (and say so in CHANGELOG.md).
"""
from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

FIXTURE = Path(__file__).with_name("release_guard.json")
# keys of a manifest that name a time, a path or the library's version: not part of the release's content
VOLATILE = {"created", "written_at", "path", "out", "version", "ppmlib_version", "python", "platform", "source"}


def table(folder: Path) -> Path:
    """A small CSV: a count, a continuous column, a weight, cells and a design."""
    rng = np.random.default_rng(5)
    n = 200
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "stratum": np.repeat([1, 2], n // 2),
                          "psu": np.tile(np.arange(4), n // 4), "visits": rng.poisson(4, n),
                          "yedu": rng.integers(8, 19, n), "region": rng.choice(["north", "south"], n),
                          "secret": rng.normal(size=n).round(3)})
    frame["w"] = np.round(np.exp(rng.normal(7.5, 0.4, n)))
    path = folder / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _scrub(value):
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def fingerprint(folder: Path) -> dict:
    """Each file's SHA-256 (the manifests read, scrubbed of times and paths, instead)."""
    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = str(path.relative_to(folder))
        if path.suffix == ".json":
            found[name] = _scrub(json.loads(path.read_text()))
        else:
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


COMMON = ["--m", "2", "--chains", "4", "--draws", "500", "--seed", "7", "--no-report"]
CASES = {
    # the main path at its default guarantee (strict: CM), then local (LW), LW_final and CW
    "strict": ["--column", "visits", "--model", "poisson", "--keep", "region", "--strict-scheme", "cm"],
    "local": ["--column", "visits", "--model", "poisson", "--guarantee", "local", "--epsilon", "6"],
    "local_final": ["--column", "visits", "--model", "poisson", "--guarantee", "local", "--weighting", "lw_final",
                    "--keep", "sex"],
    "local_cw": ["--column", "visits", "--model", "poisson", "--guarantee", "local", "--weighting", "cw",
                 "--radius", "1", "--format", "parquet"],
    # the survey path: the outcome and its weight together
    "survey": ["--column", "yedu", "--weights", "w", "--guarantee", "local", "--predictors", "sex",
               "--strata", "stratum", "--psu", "psu"],
}


def run_case(name: str, data: Path, folder: Path) -> dict:
    """Run one case of the command into ``folder / name`` and return its fingerprint."""
    from ppmlib.release import command
    out = folder / name
    status = command.main([str(data), *CASES[name], *COMMON, "--out", str(out)])
    if status != 0:
        raise RuntimeError(f"case {name!r} exited {status}")
    return fingerprint(out)


def library_case(folder: Path) -> dict:
    """A Synthesis released from Python (``<path>.csv`` and ``<path>.json``)."""
    from ppmlib.datasets.simulate import poisson
    from ppmlib.inference.exact import ConjugateSampler
    from ppmlib.mechanism.synthesis import synthesizer
    from ppmlib.release import release
    y = poisson(150, 4, seed=1)
    unweighted = synthesizer("poisson", y, sampler=ConjugateSampler(2, 100, 100), m=3, seed=2)
    lw = synthesizer("poisson", y, "lw", base=unweighted, c=0.8, sampler=ConjugateSampler(2, 100, 100), m=3, seed=3)
    out = folder / "library"
    out.mkdir()
    release(lw, out / "lw", max_epsilon=1e6)
    return fingerprint(out)


def all_cases(folder: Path) -> dict:
    """Every case's fingerprint, with exact Poisson draws in place of the command's NUTS."""
    from ppmlib.inference import exact
    from ppmlib.release import command
    data = table(folder)
    saved = command.Sampler
    command.Sampler = lambda chains, draws, warmup: exact.ConjugateSampler(chains, draws, warmup)
    try:
        found = {name: run_case(name, data, folder) for name in CASES}
    finally:
        command.Sampler = saved
    found["library"] = library_case(folder)
    return found


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        FIXTURE.write_text(json.dumps(all_cases(Path(tmp)), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}", file=sys.stderr)
