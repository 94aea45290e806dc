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
from ppmlib.release.publish import COVERS, DOES_NOT_COVER, NEIGHBOURS, load, manifest, release

__all__ = ["release", "load", "manifest", "NEIGHBOURS", "COVERS", "DOES_NOT_COVER"]
