"""Keep the book's execution cache honest.

``make book`` executes chapters through jupyter-cache (``execute_notebooks: cache`` in
``_config.yml``), which re-runs a chapter only when its code cells change. The chapters' results
also depend on the library, the Stan programs and the shipped data, which jupyter-cache does not
see. Before each build, ``python -m ppmlib.book.bookcache`` hashes those files; when the hash differs
from the one stored beside the cache, the cache is cleared, and so is Sphinx's saved environment
(otherwise Sphinx would not even re-read an unchanged chapter, and the API page would keep old
docstrings): every chapter runs again. Every chapter imports ppmlib, so a change there rightly
invalidates them all.

``python -m ppmlib.book.bookcache --fresh`` clears the cache unconditionally (``make book-fresh``).
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

from ppmlib._files import write_text_atomically
from . import ROOT

DEPENDENCIES = ("ppmlib", "stan", "data", "pyproject.toml")
CACHE = Path("_build") / ".jupyter_cache"
DOCTREES = Path("_build") / ".doctrees"
STAMP = "ppmlib-inputs.sha256"


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


def refresh(root: Path = ROOT, dependencies=DEPENDENCIES, fresh: bool = False) -> bool:
    """Clear the execution cache and Sphinx's environment when the inputs changed (or ``fresh``).

    Returns True when they were cleared. ``root`` is the book's folder (holding ``_build``).
    """
    cache = root / CACHE
    stamp = cache.parent / STAMP
    current = digest(root, dependencies)
    stale = fresh or not stamp.exists() or stamp.read_text().strip() != current
    if stale:
        for folder in (cache, root / DOCTREES):
            if folder.exists():
                shutil.rmtree(folder)
    write_text_atomically(stamp, current + "\n")
    return stale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fresh", action="store_true", help="clear the execution cache whatever changed")
    args = parser.parse_args(argv)
    cleared = refresh(fresh=args.fresh)
    print("execution cache cleared: every chapter runs again" if cleared
          else "execution cache kept: ppmlib, stan/ and data/ unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
