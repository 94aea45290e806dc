"""The synthesizers an agency would pick instead, behind one interface (:mod:`~ppmlib.baselines.peers`):
a perturbed histogram, OpenDP's AIM and MST, and CART; and, for survey tables, the Laplace mechanism on
weighted cell totals (:mod:`~ppmlib.baselines.laplace_tables`).
"""
from ppmlib._lazy import submodules

__getattr__, __dir__ = submodules(__name__, ("peers", "laplace_tables"))
