"""``python -m ppmlib.synthesize``: the command ``ppm-synthesize``, which lives in :mod:`ppmlib.release.command`.

This small package keeps the documented ``python -m ppmlib.synthesize ...`` working (its
``__main__``) and gives :func:`synthesize` and :func:`main`. Every other name it had moved to
:mod:`ppmlib.release.command`; importing one from here still works, with a FutureWarning naming
the new path.
"""
from __future__ import annotations

import warnings

from ppmlib.release.command import main, synthesize

__all__ = ["main", "synthesize"]


def __getattr__(name: str):
    from ppmlib.release import command
    if name.startswith("__") or not hasattr(command, name):
        raise AttributeError(f"module 'ppmlib.synthesize' has no attribute {name!r}")
    warnings.warn(f"ppmlib.synthesize.{name} moved to ppmlib.release.command.{name}; the old name stops working in "
                  "the next release", FutureWarning, stacklevel=2)
    return getattr(command, name)
