"""The synthesizers an agency would pick instead, behind one interface (:mod:`~ppmlib.baselines.peers`):
a perturbed histogram, OpenDP's AIM and MST, and CART.
"""
from ppmlib._lazy import submodules

__getattr__, __dir__ = submodules(__name__, ("peers",))
