"""The package surface: every module's ``__all__`` (the docstrings' examples: tests/test_docstrings.py).

``__all__`` is the module's public API (what ``from ppmlib.x import *`` and Sphinx's automodule
show): every name in it must exist, and every public function or class the module defines must
be in it, so that a function added or moved without updating ``__all__`` fails here.
"""
import importlib
import inspect
from pathlib import Path

import pytest

# the modules with an explicit __all__
MODULES = ["mechanism.weights", "mechanism.bounds", "inference.diagnostics", "evaluate.disclosure", "mechanism.guarantee", "evaluate.utility", "seeding",
           "release", "release.publish", "datasets.ce_like", "datasets.salary_like", "datasets.simulate", "inference.exact", "evaluate.audit", "inference.parallel", "plots",
           "inference.backends", "mechanism.synthesis", "inference.posterior", "mechanism.reweighting", "mechanism.calibration", "models.families", "progress", "mechanism.lineup", "mechanism.schemes", "datasets.design", "datasets.example",
           "baselines.peers", "errors", "mechanism.censoring", "mechanism.ledger", "models.censoring", "mechanism.nss", "mechanism.pilot", "models.bins", "models.cells",
           # the book's tooling
           "book.rerun", "book.bookcheck", "book.provenance", "book.claims", "book.results",
           # one study per chapter
           "studies.vector_weighted", "studies.reweighting", "studies.dp_definitions", "studies.attribute_risk",
           "studies.privacy_audit", "studies.asymptotic_dp", "studies.ce_income", "studies.against_alternatives",
           "studies.strict_privacy", "studies.censoring_centre", "studies.pilot_window", "studies.public_wages",
           # the own-data command, its report and where it writes
           "release.command", "release.report", "release.staging", "release.tables", "mechanism.partitioned", "mechanism.partitioned_lw", "release.cluster", "synthesize", "evaluate.estimands",
           # several variables at once
           "mechanism.joint", "studies.multivariate",
           # survey weights: the joint synthesizer, its tables, the Laplace baseline, the command's path
           "mechanism.survey", "evaluate.survey", "evaluate.coverage", "baselines.laplace_tables", "studies.survey_tables",
           "release.survey", "release.data", "release.plan", "release.gate", "release.pipeline",
           # the authors' data and weights
           "datasets.ce_course", "mechanism.pairwise", "studies.risk_efficient", "datasets.model_choice"]


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


def test_every_module_is_checked_and_none_cites_a_file_outside_the_repository():
    # ALGORITHMS.md is the team's working notes, not part of the repository: a docstring must state
    # the formula or cite the paper's section or the book's chapter instead
    package = Path(importlib.import_module("ppmlib").__file__).parent
    public = {".".join(p.relative_to(package).with_suffix("").parts) for p in package.rglob("*.py")
              if not p.stem.startswith("_") and "_stan" not in p.parts and "_data" not in p.parts}
    tooling = {"book.sphinx_ext", "book.bookcache"}  # the book's build hooks: no public API of their own
    assert public - tooling <= set(MODULES), f"modules missing from MODULES: {sorted(public - tooling - set(MODULES))}"
    citing = [p.name for p in package.rglob("*.py") if "ALGORITHMS.md" in p.read_text()]
    assert not citing, f"these modules point to ALGORITHMS.md, which is not in the repository: {citing}"


def test_the_release_function_and_the_release_subpackages_both_import():
    # ppmlib.release is called (ppmlib.release(fits, path)) and is the package of the command: a
    # function bound to the package's name used to shadow it, so `import ppmlib.release.command as c` failed
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c",
                           "import ppmlib, ppmlib.release.command as c, ppmlib.release.report as r\n"
                           "from ppmlib.release.publish import release\n"
                           "assert callable(c.main) and callable(r.write)\n"
                           "assert callable(ppmlib.release) and ppmlib.release.release is release\n"
                           "import inspect; assert 'path' in str(inspect.signature(release))"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
