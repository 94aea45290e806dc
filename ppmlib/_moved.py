"""Old import paths, kept for one release: each warns once (FutureWarning) and names the new path.

``import ppmlib.lipschitz`` and ``from ppmlib.lipschitz import record_bounds`` still work, but the
module they give forwards to :mod:`ppmlib.mechanism.bounds` and warns. The project's own tests turn
the warning into an error (pyproject.toml), so the project itself uses only the new paths.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types
import warnings
from importlib import import_module

# old module under ppmlib -> where it lives now
MODULES = {
    "models": None,  # still a package of that name: ppmlib.models
    "backends": "inference.backends", "posterior": "inference.posterior", "diagnostics": "inference.diagnostics",
    "exact": "inference.exact", "parallel": "inference.parallel",
    "weights": "mechanism.weights", "lipschitz": "mechanism.bounds", "reweighting": "mechanism.reweighting",
    "lineup": "mechanism.lineup", "joint": "mechanism.joint", "guarantee": "mechanism.guarantee",
    "utility": "evaluate.utility", "disclosure": "evaluate.disclosure", "estimands": "evaluate.estimands",
    "audit": "evaluate.audit", "peers": "baselines.peers",
    "simulate": "datasets.simulate", "ce_like": "datasets.ce_like", "salary_like": "datasets.salary_like",
    "example": "datasets.example", "design": "datasets.design", "report": "release.report",
    "montecarlo": "studies.asymptotic_dp", "ce_income": "studies.ce_income",
}
MODULES = {old: new for old, new in MODULES.items() if new}
# names that left the top of ppmlib (book tooling and chapter helpers) -> module.name they live in now
NAMES = {
    "Claims": "book.claims.Claims",
    "matched_comparison": "studies.vector_weighted.matched_comparison",
    "reweighting_comparison": "studies.reweighting.reweighting_comparison",
    "BackendUnavailableError": "errors.BackendUnavailable",
    "CalibrationError": "errors.CalibrationFailed",
}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new}; the old name stops working in the next release", FutureWarning,
                  stacklevel=3)


class _Forward(types.ModuleType):
    """A stand-in for a moved module: every attribute comes from the module's new home."""

    def __init__(self, old: str, new: str):
        super().__init__(old, f"moved to {new}")
        self.__dict__["_target"] = new

    def __getattr__(self, name: str):
        return getattr(import_module(self.__dict__["_target"]), name)

    def __dir__(self):
        return dir(import_module(self.__dict__["_target"]))


class _Loader(importlib.abc.Loader):
    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):
        _warn(spec.name, self.new)
        import_module(self.new)
        return _Forward(spec.name, self.new)

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        prefix, _, old = fullname.partition(".")
        if prefix != "ppmlib" or old not in MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, _Loader(f"ppmlib.{MODULES[old]}"))


def install() -> None:
    """Put the finder of old module paths in front of the import system (once)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def moved_name(name: str):
    """The object a name that left the top of ppmlib now refers to (warning once), or AttributeError."""
    if name in MODULES:
        return import_module(f"ppmlib.{name}")  # through the finder: warns, gives the forwarding module
    if name in NAMES:
        module, _, attr = NAMES[name].rpartition(".")
        _warn(f"ppmlib.{name}", f"ppmlib.{NAMES[name]}")
        return getattr(import_module(f"ppmlib.{module}"), attr)
    raise AttributeError(f"module 'ppmlib' has no attribute {name!r}")
