"""The docstrings: every Example runs (doctest, without Stan) and every public function of the core
documents its Parameters and Returns (numpydoc)."""
import doctest
import importlib
import inspect
import pkgutil
import re

import matplotlib
import numpy as np
import pytest

import ppmlib
from ppmlib import backends

ALL_MODULES = sorted(m.name for m in pkgutil.iter_modules(ppmlib.__path__) if m.name != "__main__")
# modules whose Examples may still skip a line: each needs what a docstring cannot give (a built book,
# a chapter run, a study of many fits); their owners replace the skips as those modules move
MAY_SKIP = {"audit", "montecarlo", "rerun", "bookcheck"}


@pytest.mark.parametrize("name", ALL_MODULES)
def test_docstring_examples_run_without_stan(name, monkeypatch):
    matplotlib.use("Agg")

    def no_stan(*args, **kwargs):
        raise AssertionError("a docstring example fitted a Stan model: use ppmlib.example_fit() or "
                             "ppmlib.exact.ConjugateSampler instead")

    monkeypatch.setattr(backends, "sample", no_stan)
    module = importlib.import_module(f"ppmlib.{name}")
    result = doctest.testmod(module, extraglobs={"ppmlib": ppmlib, "np": np}, verbose=False,
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of ppmlib.{name} failed"


@pytest.mark.parametrize("name", sorted(set(ALL_MODULES) - MAY_SKIP))
def test_no_example_is_skipped(name):
    source = inspect.getsource(importlib.import_module(f"ppmlib.{name}"))
    skipped = [line.strip() for line in source.splitlines() if re.search(r"doctest:\s*\+SKIP", line)]
    assert not skipped, f"ppmlib.{name} skips docstring examples: {skipped}"
