"""The release: the only way synthetic data leave ppmlib, its confidential report, and the command.

* :mod:`ppmlib.release.publish`: :func:`release` writes the m synthetic datasets and their manifest
  (epsilon per dataset and in total, what the guarantee covers), atomically; :func:`load` reads
  them back after checking the pair; :mod:`ppmlib.release.tables`: the release as the user's own
  table (one file per dataset, or one Parquet file), the command's format.
* :mod:`ppmlib.release.report`: the report's tables, its summary, and how the command makes the page.
* The command, split by concern: :mod:`ppmlib.release.data` (the data object), :mod:`ppmlib.release.plan`
  (the privacy plan), :mod:`ppmlib.release.gate` (the checks before and after the fits),
  :mod:`ppmlib.release.pipeline` (a data object and a plan to a release), and
  :mod:`ppmlib.release.command`, ``ppm-synthesize`` itself, a thin caller of them; its ``--weights``
  and ``--dask`` paths in :mod:`ppmlib.release.survey` and :mod:`ppmlib.release.cluster`;
  :mod:`ppmlib.release.staging`: where it may write, the lock, the staging folder and the
  one-step publication.
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
