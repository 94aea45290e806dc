"""Keep the book's execution cache honest.

``make book`` executes chapters through jupyter-cache (``execute_notebooks: cache`` in
``_config.yml``), which re-runs a chapter only when its code cells change. The chapters' results
also depend on the library, the Stan programs and the shipped data, which jupyter-cache does not
see. Before each build, ``python -m ppmlib.book.bookcache`` hashes those files; when the hash differs
from the one stored beside the cache, the cache is cleared, and so is Sphinx's saved environment
(otherwise Sphinx would not even re-read an unchanged chapter, and the API page would keep old
docstrings): every chapter runs again. Every chapter imports ppmlib, so a change there rightly
invalidates them all.

A chapter may also read measured figures from ``benchmarks/results/`` (a seed ledger, a benchmark's
table), which its code cells name but do not contain. :func:`results_read` finds them; a second
stamp keeps, per chapter, a hash of those files, and when it changes only that chapter's cached
run is dropped (and Sphinx's environment, so the chapter is read again; the others come back from
the cache).

``python -m ppmlib.book.bookcache --fresh`` clears the cache unconditionally (``make book-fresh``).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

from ppmlib._files import write_text_atomically
from . import ROOT

DEPENDENCIES = ("ppmlib", "stan", "data", "pyproject.toml")
CACHE = Path("_build") / ".jupyter_cache"
DOCTREES = Path("_build") / ".doctrees"
STAMP = "ppmlib-inputs.sha256"
RESULTS = Path("benchmarks") / "results"
RESULTS_STAMP = "chapter-results.json"


def _files(root: Path, dependencies) -> list[Path]:
    found = []
    for name in dependencies:
        path = root / name
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted(found)


def digest(root: Path = ROOT, dependencies=DEPENDENCIES) -> str:
    """SHA-256 over the relative paths and contents of every file the chapters depend on."""
    h = hashlib.sha256()
    for path in _files(root, dependencies):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def results_read(chapter: Path, root: Path = ROOT) -> list[Path]:
    """The files of ``benchmarks/results/`` a chapter reads.

    A file is read when the chapter names it (``strict_mixing.json``) or its stem as a string
    (``seed_ledger("attribute_risk_seeds")``); a chapter calling ``benchmark_results(`` (the
    performance page) reads them all.

    Parameters
    ----------
    chapter : Path
        A chapter's source (``.md``).
    root : Path
        The book's folder (holding ``benchmarks/results``).

    Returns
    -------
    list of Path
        The files, sorted.
    """
    text = chapter.read_text()
    files = sorted((root / RESULTS).glob("*.json")) if (root / RESULTS).is_dir() else []
    if "benchmark_results(" in text:
        return files
    return [f for f in files if f.name in text or f'"{f.stem}"' in text]


def _results_digests(root: Path) -> dict:
    """Per chapter under ``root/book`` that reads files of ``benchmarks/results``: a hash of those files."""
    digests = {}
    for chapter in sorted((root / "book").rglob("*.md")):
        if "_build" in chapter.parts:
            continue
        read = results_read(chapter, root)
        if read:
            h = hashlib.sha256()
            for path in read:
                h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
            digests[chapter.relative_to(root).as_posix()] = h.hexdigest()
    return digests


def _drop_cached(cache: Path, chapters: list[Path]) -> None:
    """Remove the execution cache's records of ``chapters`` (jupyter-cache keys them by the source's path)."""
    if not cache.exists():
        return
    from jupyter_cache import get_cache   # the book's build dependency, not ppmlib's

    store = get_cache(str(cache))
    wanted = {chapter.resolve() for chapter in chapters}
    for record in store.list_cache_records():
        if Path(record.uri).resolve() in wanted:
            store.remove_cache(record.pk)


def refresh(root: Path = ROOT, dependencies=DEPENDENCIES, fresh: bool = False) -> bool:
    """Clear the execution cache and Sphinx's environment when the inputs changed (or ``fresh``);
    drop the cached run of each chapter whose ``benchmarks/results`` files changed.

    Returns True when everything was cleared. ``root`` is the book's folder (holding ``_build``).
    """
    cache = root / CACHE
    stamp = cache.parent / STAMP
    results_stamp = cache.parent / RESULTS_STAMP
    current = digest(root, dependencies)
    stale = fresh or not stamp.exists() or stamp.read_text().strip() != current
    chapters = _results_digests(root)
    if stale:
        for folder in (cache, root / DOCTREES):
            if folder.exists():
                shutil.rmtree(folder)
    else:
        before = json.loads(results_stamp.read_text()) if results_stamp.exists() else {}
        changed = [root / name for name in sorted(set(chapters) | set(before)) if before.get(name) != chapters.get(name)]
        if changed:
            _drop_cached(cache, changed)
            if (root / DOCTREES).exists():
                shutil.rmtree(root / DOCTREES)
    write_text_atomically(stamp, current + "\n")
    write_text_atomically(results_stamp, json.dumps(chapters, indent=1) + "\n")
    return stale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fresh", action="store_true", help="clear the execution cache whatever changed")
    args = parser.parse_args(argv)
    cleared = refresh(fresh=args.fresh)
    print("execution cache cleared: every chapter runs again" if cleared
          else "execution cache kept: ppmlib, stan/ and data/ unchanged (a chapter whose "
               "benchmarks/results files changed runs again)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
