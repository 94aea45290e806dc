"""``python -m ppmlib.synthesize``: the command ``ppm-synthesize``, which lives in :mod:`ppmlib.release.command`.

This small package keeps the documented ``python -m ppmlib.synthesize ...`` working (its
``__main__``) and gives :func:`synthesize` and :func:`main`. Every other name it had moved to
:mod:`ppmlib.release.command` and then to :mod:`ppmlib.release.data`, :mod:`ppmlib.release.plan`
or :mod:`ppmlib.release.gate`; importing one from here still works, with a FutureWarning naming
the new path.
"""
from __future__ import annotations

import warnings

from ppmlib.release.command import main, synthesize

__all__ = ["main", "synthesize"]


def __getattr__(name: str):
    import importlib
    for where in ("command", "data", "plan", "gate"):      # the command's names, now split by concern
        module = importlib.import_module(f"ppmlib.release.{where}")
        if not name.startswith("__") and hasattr(module, name):
            warnings.warn(f"ppmlib.synthesize.{name} moved to ppmlib.release.{where}.{name}; the old name stops "
                          "working in the next release", FutureWarning, stacklevel=2)
            return getattr(module, name)
    raise AttributeError(f"module 'ppmlib.synthesize' has no attribute {name!r}")
