"""Submodules loaded on first use (PEP 562), so that importing a package stays light.

``ppmlib.datasets.simulate`` works after ``import ppmlib`` alone, yet pandas and matplotlib are
loaded only by the submodules that need them, when they are first touched.
"""
from __future__ import annotations

from importlib import import_module


def submodules(package: str, names: tuple[str, ...]):
    """``__getattr__`` and ``__dir__`` for ``package`` that import ``package.<name>`` on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : tuple of str
        Its submodules.

    Returns
    -------
    (__getattr__, __dir__)
        The two module-level functions of PEP 562.
    """
    def __getattr__(name: str):
        if name in names:
            return import_module(f"{package}.{name}")  # the import also sets the attribute
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(import_module(package).__dict__) | set(names))

    return __getattr__, __dir__
