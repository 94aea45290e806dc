"""The package surface: every module's ``__all__``, and the examples in the docstrings.

``__all__`` is the module's public API (what ``from ppmlib.x import *`` and Sphinx's automodule
show): every name in it must exist, and every public function or class the module defines must
be in it, so that a function added or moved without updating ``__all__`` fails here.
"""
import doctest
import importlib
import inspect
from pathlib import Path

import matplotlib
import pytest

# the modules with an explicit __all__ (mechanism, posterior, reweighting, models keep theirs elsewhere)
MODULES = ["weights", "lipschitz", "diagnostics", "disclosure", "guarantee", "utility", "claims", "seeding",
           "release", "ce_like", "salary_like", "simulate", "exact", "audit", "montecarlo", "parallel", "plots",
           "rerun", "bookcheck", "backends", "mechanism", "posterior", "reweighting", "models", "progress", "lineup",
           "provenance", "design", "ce_income", "peers", "alternatives"]


def defined_public_names(module) -> set:
    """Functions and classes defined in ``module`` itself whose names do not start with an underscore."""
    return {name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == module.__name__}


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist_and_cover_the_public_functions(name):
    module = importlib.import_module(f"ppmlib.{name}")
    assert len(module.__all__) == len(set(module.__all__)), f"ppmlib.{name}.__all__ repeats a name"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"ppmlib.{name}.__all__ names {missing}, which the module does not define"
    unlisted = defined_public_names(module) - set(module.__all__)
    assert not unlisted, f"ppmlib.{name} defines public {sorted(unlisted)} but leaves them out of __all__"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    matplotlib.use("Agg")
    module = importlib.import_module(f"ppmlib.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of ppmlib.{name} failed"


def test_every_module_is_checked_and_none_cites_a_file_outside_the_repository():
    # ALGORITHMS.md is the team's working notes, not part of the repository: a docstring must state
    # the formula or cite the paper's section or the book's chapter instead
    package = Path(importlib.import_module("ppmlib").__file__).parent
    public = {p.stem for p in package.glob("*.py") if not p.stem.startswith("_")}
    tooling = {"sphinx_ext", "bookcache"}  # the book's build hooks: no public API of their own
    assert public - tooling <= set(MODULES), f"modules missing from MODULES: {sorted(public - tooling - set(MODULES))}"
    citing = [p.name for p in package.glob("*.py") if "ALGORITHMS.md" in p.read_text()]
    assert not citing, f"these modules point to ALGORITHMS.md, which is not in the repository: {citing}"
