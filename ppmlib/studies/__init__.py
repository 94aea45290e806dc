"""One module per chapter: the chapter's lineup of synthesizers, its tables, claims and figures.

``vector_weighted``, ``reweighting`` (the reweighting and salary chapters), ``dp_definitions``,
``attribute_risk``, ``privacy_audit``, ``asymptotic_dp`` and ``ce_income``; ``public_wages``, the public
wage files the strict chapter and the benchmarks share. A study builds its
synthesizers only through :mod:`ppmlib.mechanism.lineup` (tests/test_one_lineup.py checks it); the algorithms
live in the core modules of :mod:`ppmlib`, which never import a study.
"""
from ppmlib._lazy import submodules

__getattr__, __dir__ = submodules(__name__, ("vector_weighted", "reweighting", "dp_definitions", "attribute_risk",
                                             "privacy_audit", "asymptotic_dp", "ce_income", "against_alternatives",
                                             "multivariate", "survey_tables", "public_wages"))
