"""What the book was built with: Python, the scientific stack, and the Stan backend with its version.

The book's landing page shows :func:`versions` (through the ``build_versions`` substitution that
:mod:`ppmlib.book.sphinx_ext` sets at build time), so a reader can tell which software produced every
number in it.
"""
from __future__ import annotations

__all__ = ["PACKAGES", "stan_backend", "versions", "markdown_table"]

import platform
import re
from importlib import metadata
from pathlib import Path

PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "jupyter-book")


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _httpstan_stan_version() -> str:
    """The Stan version compiled into PyStan's httpstan (read from its shipped stan/version.hpp)."""
    import httpstan
    header = Path(httpstan.__file__).parent / "include" / "stan" / "version.hpp"
    parts = dict(re.findall(r"#define STAN_(MAJOR|MINOR|PATCH) (\d+)", header.read_text()))
    return ".".join(parts[k] for k in ("MAJOR", "MINOR", "PATCH"))


def stan_backend() -> str:
    """The backend ppmlib will use, with its own version and the Stan version it runs."""
    from ppmlib.inference import backends
    try:
        chosen = backends.backend()
    except Exception as err:  # noqa: BLE001 - reported, not raised: the page must still build
        return f"none ({err})"
    if chosen == "cmdstanpy":
        import cmdstanpy
        major, minor, *patch = cmdstanpy.cmdstan_version() or ("?", "?")
        return f"cmdstanpy {_version('cmdstanpy')} (CmdStan {major}.{minor}{'.' + str(patch[0]) if patch else ''})"
    return f"PyStan {_version('pystan')} (httpstan {_version('httpstan')}, Stan {_httpstan_stan_version()})"


def versions() -> dict[str, str]:
    """Name -> version of everything that shapes the book's numbers."""
    from ppmlib import __version__
    return {"Python": platform.python_version(), "ppmlib": __version__,
            **{name: _version(name) for name in PACKAGES}, "Stan backend": stan_backend()}


def markdown_table() -> str:
    rows = "\n".join(f"| {name} | {version} |" for name, version in versions().items())
    return "| software | version |\n|---|---|\n" + rows
