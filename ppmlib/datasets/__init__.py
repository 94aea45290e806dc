"""Data the book and the tests run on.

- :mod:`~ppmlib.datasets.simulate`: the papers' simulation designs
- :mod:`~ppmlib.datasets.ce_like` and :mod:`~ppmlib.datasets.salary_like`: the shipped stand-ins
- :mod:`~ppmlib.datasets.example`: a small fit of stored Stan draws
- :mod:`~ppmlib.datasets.design`: design matrices from a table's predictors
"""
from ppmlib._lazy import submodules

__getattr__, __dir__ = submodules(__name__, ("simulate", "ce_like", "salary_like", "example", "design", "ce_course"))
