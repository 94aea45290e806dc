"""The synthesizers of a log-scale column (wage, income) on categorical predictors, by name, and the
default that ``--model auto`` takes.

Each name is a family of :mod:`ppmlib.models.families` and a design matrix:

* ``normal``: the normal regression of log y on the predictors' main effects.
* ``interactions``: the same regression with every pairwise interaction of the predictors
  (:func:`ppmlib.datasets.design.interaction_design`): a mean for every pair of levels.
* ``hetero``: the heteroskedastic normal (``stan/hetnormal.stan``): the interactions' mean and a
  log-scale regression on the same columns, so every cell of levels has its own spread.
* ``mixture``: the mixture of normal regressions on the main effects (``stan/mixture.stan``).
* ``binned``: the binned model on the main effects (``stan/binned.stan``): a distribution over
  public bins of log y per cell, smooth across bins and shrunk across cells; it needs the bins
  (:func:`bins_prior`, public bounds of log y).
* ``cells``: the cell normal model (:class:`ppmlib.models.families.CellNormal`, exact Gibbs draws,
  no Stan): a mean and a spread for every cell of the keys, shrunk toward the main effects and a
  common spread, its synthetic values stratified within each cell; ``cells_iid`` the same fit with
  independent predictive draws. No censored (strict) fit.

:data:`AUTO_LOG_MODEL` was chosen by measuring every candidate on public files only (the wage
files of ``benchmarks/bench_models.py``), never on a user's file: the choice costs no privacy. It
is, among the candidates the command's default guarantee can release (those with a censored,
strict fit: :func:`has_censored_fit`), the one with the smallest mean S_pMSE over the measured
cells (tests/test_model_choice.py checks it against ``benchmarks/results/models.json``). The cell
normal model (``cells``) measures better without privacy but has no censored fit, so it is not the
default. A user who picks a model after looking at their own confidential file spends privacy
that no guarantee of the release counts.
"""
from __future__ import annotations

__all__ = ["AUTO_LOG_MODEL", "LOG_SYNTHESIZERS", "BIN_WIDTH", "model_design", "bins_prior", "has_censored_fit"]

import numpy as np

from ppmlib.errors import BadArgument

#: Name -> (family, design): the log-scale synthesizers the command and the benchmarks offer.
LOG_SYNTHESIZERS = {"normal": ("normal", "main"), "interactions": ("normal", "pairs"),
                    "hetero": ("hetnormal", "pairs"), "mixture": ("mixture", "main"), "binned": ("binned", "main"),
                    "cells": ("cellnormal", "main"), "cells_iid": ("cellnormal_iid", "main")}

#: The width of the binned model's bins on the log scale (the peers' histogram bins too): 0.25, a
#: factor of about 1.28 in dollars.
BIN_WIDTH = 0.25

#: What ``--model auto`` takes for a log-scale column: of the candidates with a censored (strict) fit,
#: the one that measured best on the public wage files (``benchmarks/results/models.json``), chosen
#: before any user's data is seen.
AUTO_LOG_MODEL = "normal"


def model_design(model: str, data, predictors, *, levels: dict | None = None) -> tuple[str, np.ndarray]:
    """The family name and the design matrix of a log-scale synthesizer on categorical predictors.

    Parameters
    ----------
    model : str
        A key of :data:`LOG_SYNTHESIZERS`, or "auto" (:data:`AUTO_LOG_MODEL`).
    data : pandas.DataFrame
        The records, with the ``predictors`` (categorical).
    predictors : list of str
        The predictors.
    levels : dict, optional
        Every level of each predictor (as for :func:`ppmlib.datasets.design.design_matrix`).

    Returns
    -------
    tuple
        The family's name (str) and X, shape (n, P).

    Raises
    ------
    ppmlib.errors.BadArgument
        An unknown model name.

    Examples
    --------
    >>> import pandas as pd
    >>> name, X = model_design("interactions", pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]}), ["a", "b"])
    >>> name, X.shape
    ('normal', (2, 2))
    """
    from ppmlib.datasets.design import design_matrix, independent_columns, interaction_design
    if model == "auto":
        model = AUTO_LOG_MODEL
    if model not in LOG_SYNTHESIZERS:
        raise BadArgument(f"unknown model {model!r}; choose auto or one of {sorted(LOG_SYNTHESIZERS)}")
    family, design = LOG_SYNTHESIZERS[model]
    if design == "pairs":
        X = interaction_design(data, list(predictors), levels=levels)
    else:
        X = independent_columns(design_matrix(data, list(predictors), levels=levels))
    return family, X.to_numpy()


def bins_prior(low: float, high: float, width: float = BIN_WIDTH) -> dict:
    """The binned model's prior settings for public bounds of log y: bins of ``width`` from
    ``low`` to ``high`` (:func:`ppmlib.models.bins.bin_edges` checks them).

    Parameters
    ----------
    low, high : float
        Public bounds of the log column, fixed before the data are seen.
    width : float
        The bins' width.

    Returns
    -------
    dict
        ``bin_low``, ``bin_high`` and ``bin_width``, for ``ppmlib.fit("binned", ..., prior=...)``.

    Examples
    --------
    >>> bins_prior(3.5, 10.0)
    {'bin_low': 3.5, 'bin_high': 10.0, 'bin_width': 0.25}
    """
    from ppmlib.models.bins import bin_edges
    bin_edges(low, high, width)
    return {"bin_low": float(low), "bin_high": float(high), "bin_width": float(width)}


def has_censored_fit(model: str) -> bool:
    """Whether a candidate can be fitted censored (the strict guarantee's CM, ``--strict-scheme cm``):
    its family has a Stan program, not only an exact sampler of the uncensored pseudo posterior.

    Parameters
    ----------
    model : str
        A key of :data:`LOG_SYNTHESIZERS`.

    Returns
    -------
    bool

    Examples
    --------
    >>> has_censored_fit("normal"), has_censored_fit("cells")
    (True, False)
    """
    from ppmlib.models.families import family
    if model not in LOG_SYNTHESIZERS:
        raise BadArgument(f"unknown model {model!r}; choose one of {sorted(LOG_SYNTHESIZERS)}")
    return not hasattr(family(LOG_SYNTHESIZERS[model][0]), "exact_draws")
