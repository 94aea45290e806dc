"""The release: the only way synthetic data leave ppmlib, its confidential report, and the command.

* :mod:`ppmlib.release.publish`: :func:`release` writes the m synthetic datasets and their manifest
  (epsilon per dataset and in total, what the guarantee covers), atomically; :func:`load` reads
  them back after checking the pair; :mod:`ppmlib.release.tables`: the release as the user's own
  table (one file per dataset, or one Parquet file), the command's format.
* :mod:`ppmlib.release.report`: the report's tables, its summary, and how the command makes the page.
* :mod:`ppmlib.release.command`: ``ppm-synthesize`` (and :func:`ppmlib.release.command.synthesize`),
  a user's file to a release and its report; :mod:`ppmlib.release.staging`: where it may write,
  the lock, the staging folder and the one-step publication.
"""
import sys
import types

from ppmlib.release.publish import COVERS, DOES_NOT_COVER, NEIGHBOURS, load, manifest, release

__all__ = ["release", "load", "manifest", "NEIGHBOURS", "COVERS", "DOES_NOT_COVER"]


class _CallableRelease(types.ModuleType):
    """This package, callable as :func:`release`: ``ppmlib.release(fits, path)`` releases, while
    ``import ppmlib.release.command`` still finds the subpackage (a function bound to the package's
    name would shadow it)."""

    def __call__(self, *args, **kwargs):
        return release(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableRelease
