"""The book's own tooling, not part of the mechanism: ``rerun`` (a chapter with your parameters:
``python -m ppmlib.book.rerun``), ``bookcache`` (the execution cache), ``bookcheck`` (the built HTML),
``sphinx_ext`` and ``provenance`` (the versions on the landing page) and ``claims`` (the claims table
every chapter ends with; :class:`ppmlib.book.claims.Claims`) and ``results`` (the benchmarks'
measured figures, for the performance page, and the chapters' seed ledgers).
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout the tooling works on: ppmlib/book/ -> .

from ppmlib._lazy import submodules  # noqa: E402

__getattr__, __dir__ = submodules(__name__, ("claims", "rerun", "bookcache", "bookcheck", "provenance", "sphinx_ext", "results"))
