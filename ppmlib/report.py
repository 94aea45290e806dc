"""The tables of a synthesis report: what was released, what it costs, what drives the cost, how
well the fits converged, the analyst's estimands, the disclosure risk and the agencies' measures (pMSE, identification risk).

One place for them, called by the report notebook that ``python -m ppmlib.synthesize`` executes
(``ppmlib/synthesis_report.md``) and by the book's chapter on real wages, so the command's report
and the chapter show the same things. Every function takes the :class:`ppmlib.mechanism.lineup.Results`
of :func:`ppmlib.synthesize.synthesize` (or a Results and a :class:`ppmlib.synthesize.Prepared`).

Records appear by rank only (rank 1 = largest bound), never with their values.
"""
from __future__ import annotations

__all__ = ["privacy_statement", "overview", "drivers", "diagnostics", "diagnostics_warning", "utility",
           "coefficients", "attribute_risk", "measures"]

from typing import TYPE_CHECKING

import numpy as np

from ppmlib import _checks
from ppmlib.datasets.design import is_categorical
from ppmlib.inference.diagnostics import GATE, failing, is_ok

if TYPE_CHECKING:
    import pandas as pd

    from ppmlib.mechanism.lineup import Results
    from ppmlib.synthesize import Prepared

def privacy_statement(synthesis, n: int) -> str:
    """What the released synthesizer's epsilon promises, exactly, as one Markdown paragraph.

    Parameters
    ----------
    synthesis : Synthesis
        The released synthesizer (its ``delta``, ``epsilon`` and m datasets).
    n : int
        The number of records (the release reveals it).

    Returns
    -------
    str
        Delta, epsilon per dataset, m * epsilon, the replace-one cost, what the guarantee does not
        count (the weights and the settings tuned on the data) and n, in Markdown.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> s = SimpleNamespace(name="LW", delta=2.0, epsilon=4.0, synthetic=np.zeros((5, 3)))
    >>> "m * epsilon = 20" in privacy_statement(s, 3)
    True
    """
    m = synthesis.synthetic.shape[0]
    return (f"**{synthesis.name}**: Δ = {synthesis.delta:.3g}, so each of the m = {m} synthetic datasets is "
            f"**ε = 2Δ = {synthesis.epsilon:.3g}** differentially private for this file against its *removal "
            f"neighbours* (the file with one of its records removed; adding an arbitrary record is not covered); "
            f"the m datasets together cost "
            f"**m * epsilon = {m * synthesis.epsilon:.3g}**. Against replace-one neighbours (one record changed) each "
            f"dataset costs 4Δ = {2 * synthesis.epsilon:.3g}. The guarantee treats the record weights as fixed: "
            "they are computed from the confidential data, and the privacy cost of that, and of every setting "
            f"tuned on the data (a calibrated scale, a prior centred on the data), is not counted. The release "
            f"reveals the number of records, n = {n}.")


def overview(results: "Results") -> "pd.DataFrame":
    """One row per synthesizer: how it was made, Delta, epsilon per dataset and m * epsilon, and
    which one is released.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results
        The synthesizers of :func:`ppmlib.synthesize.synthesize`, each with its m synthetic datasets;
        ``results.released`` (when set) names the released one.

    Returns
    -------
    pandas.DataFrame
        Indexed by synthesizer: made as, Delta, epsilon, m, m * epsilon, mean weight, min weight and
        released ("yes" on the released synthesizer's row, else "").
    """
    table = results.summary()[["made as", "Delta", "epsilon", "mean weight", "min weight"]].copy()
    m = {name: r.synthetic.shape[0] for name, r in results.items()}
    table.insert(3, "m", [m[name] for name in table.index])
    table.insert(4, "m * epsilon", table["epsilon"] * table["m"])
    released = getattr(results, "released", None)
    table["released"] = ["yes" if name == released else "" for name in table.index]
    return table


def drivers(results: "Results", prepared: "Prepared", k: int = 10, by: str = "Unweighted") -> "pd.DataFrame":
    """The k records with the largest bounds under ``by``, by rank, and what makes them risky.

    Each row is a record (rank 1 = largest bound under ``by``), never its value: its bound under
    every synthesizer, its weight under the others, the percentile of its value in the column
    (high earners sit at the top), and for the regressions the number of records sharing its
    categorical predictors (rare cells are small).

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results
        The synthesizers, each with its by-record ``bounds`` and ``weights``, both (n,).
    prepared : ppmlib.synthesize.Prepared
        The data they were fitted to (``results.prepared``): its column's values, predictors and table.
    k : int
        How many records (at least 1; all n when there are fewer).
    by : str
        The synthesizer whose bounds rank the records (a key of ``results``).

    Returns
    -------
    pandas.DataFrame
        Indexed by rank (1 to k): ``bound <name>`` for every synthesizer, ``weight <name>`` for
        every other one, ``value percentile`` (in (0, 100]) and, when some predictors are
        categorical, ``cell size (<predictors>)``.

    Raises
    ------
    ValueError
        ``by`` is not among the synthesizers.
    """
    import pandas as pd

    k = _checks.integer(k, "k", low=1)
    if by not in results:
        raise ValueError(f"by = {by!r} is not among the synthesizers {list(results)}")
    order = np.argsort(-results[by].bounds, kind="stable")[:k]
    table = {"rank": np.arange(1, order.size + 1)}
    for name, r in results.items():
        table[f"bound {name}"] = r.bounds[order]
        if name != by:
            table[f"weight {name}"] = r.weights[order]
    # the value's percentile among the records (its rank in the column), not the value
    table["value percentile"] = 100 * pd.Series(prepared.values).rank(pct=True).to_numpy()[order]
    categorical = [p for p in prepared.predictors if is_categorical(prepared.table[p])]
    if categorical:
        cell_size = prepared.table.groupby(categorical)[categorical[0]].transform("size").to_numpy()
        table[f"cell size ({', '.join(categorical)})"] = cell_size[order]
    return pd.DataFrame(table).set_index("rank")


def diagnostics(results: "Results") -> "pd.DataFrame":
    """R-hat, bulk and tail ESS and divergences of every fit, and whether it passes :func:`ppmlib.inference.diagnostics.is_ok`.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results
        The synthesizers, each with the ``diagnostics`` dict of its fit.

    Returns
    -------
    pandas.DataFrame
        Indexed by synthesizer: max_rhat, min_ess_bulk, min_ess_tail, divergences, chains, draws, and
        passes ("yes" or "NO").
    """
    import pandas as pd
    rows = {name: {**{key: r.diagnostics[key] for key in ("max_rhat", "min_ess_bulk", "min_ess_tail", "divergences",
                                                         "chains", "draws")},
                   "passes": "yes" if is_ok(r.diagnostics) else "NO"} for name, r in results.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


def diagnostics_warning(results: "Results") -> str | None:
    """A warning naming every fit that fails the diagnostics gate, or None when all pass.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results
        The synthesizers whose fits are checked with :func:`ppmlib.inference.diagnostics.is_ok`.

    Returns
    -------
    str or None
        One paragraph naming the failing fits and what to rerun; None when every fit passes.
    """
    names = failing(results)
    if not names:
        return None
    return (f"WARNING: the fits of {', '.join(names)} fail the diagnostics gate ({GATE}): their Delta, epsilon "
            "and synthetic data come from draws that may not represent the pseudo posterior. Rerun with more draws "
            "(--draws) or chains before releasing.")


def utility(results: "Results", prepared: "Prepared", statistics=("mean", "90th pct"), B: int = 500,
            seed=0) -> "pd.DataFrame":
    """The mean and 90th percentile of the column in its own units: the data's (bootstrap interval)
    and each synthesizer's (spread over its m datasets); see :func:`ppmlib.evaluate.estimands.summary_table`.

    Parameters
    ----------
    results, prepared
        The synthesizers and their data, as for :func:`drivers`; the synthetic values are taken back
        to the column's units (:meth:`ppmlib.synthesize.Prepared.original_units`).
    statistics, B, seed
        As for :func:`ppmlib.evaluate.estimands.summary_table`.

    Returns
    -------
    pandas.DataFrame
        One row per (statistic, source), "Data" and each synthesizer: estimate, low, high.
    """
    from ppmlib.evaluate.estimands import summary_table
    synthetic = {name: prepared.original_units(r.synthetic) for name, r in results.items()}
    return summary_table(prepared.values, synthetic, statistics, B=B, seed=seed)


def coefficients(results: "Results", prepared: "Prepared", terms=None, design=None) -> "pd.DataFrame | None":
    """The analyst's regression of y (log of the column) on a design, on the data and on each
    synthesizer's m datasets (Reiter's combining rules); None for the count models.

    ``design`` (n, P) and ``terms`` default to the model's own design matrix and column names.

    Parameters
    ----------
    results, prepared
        The synthesizers (each with m >= 2 datasets of y) and their data, as for :func:`drivers`.
    terms : sequence of str, optional
        The names of the design's P columns (default ``prepared.terms``).
    design : array_like, shape (n, P), optional
        The analyst's design, e.g. from :func:`ppmlib.evaluate.estimands.analyst_design` (default
        ``prepared.X``).

    Returns
    -------
    pandas.DataFrame or None
        :func:`ppmlib.evaluate.estimands.coefficient_table`: one row per (term, source) with estimate, low
        and high; None when the model has no design (``prepared.X`` is None), even if one is given.
    """
    from ppmlib.evaluate.estimands import coefficient_table
    if prepared.X is None:
        return None
    design = prepared.X if design is None else design
    terms = prepared.terms if terms is None else terms
    return coefficient_table(prepared.y, design, terms, {name: r.synthetic for name, r in results.items()})


def attribute_risk(results: "Results", prepared: "Prepared", H: int = 50) -> "pd.DataFrame | None":
    """The attribute-disclosure risk of one synthetic dataset of each synthesizer (the book's
    importance-sampling estimator, :func:`ppmlib.attribute_risk`), for the normal model; None for
    the others (the estimator is written for a normal synthesizer).

    The intruder guesses a record's log value among y_i + offsets; the table holds
    :func:`ppmlib.evaluate.disclosure.risk_summary` per synthesizer (median and largest probability of the
    true value, share ranked first, ...).

    Parameters
    ----------
    results, prepared
        The synthesizers and their data, as for :func:`drivers`; each fit must be of the normal model.
    H : int
        Evenly spaced draws of each fit used by the importance sampler (capped at its number of draws).

    Returns
    -------
    pandas.DataFrame or None
        Indexed by synthesizer, the entries of :func:`ppmlib.evaluate.disclosure.risk_summary`; None unless
        ``prepared.model`` is "normal".
    """
    import pandas as pd

    from ppmlib.evaluate.disclosure import attribute_risk as estimate, risk_inputs, risk_summary
    if prepared.model != "normal":
        return None
    rows = {}
    for name, r in results.items():
        mu, sigma = risk_inputs(r.fit, min(H, r.fit.n_draws))
        risk = estimate(prepared.y, r.synthetic[0], mu, sigma, weights=r.weights)
        rows[name] = risk_summary(risk, sigma, r.fit.draws["sigma"])
    return pd.DataFrame.from_dict(rows, orient="index")


def measures(results: "Results", prepared: "Prepared", radius: float = 0.05) -> "pd.DataFrame":
    """The agencies' measures of every synthesizer: S_pMSE (logit) and, when the model has
    categorical predictors, the identification risk.

    Each synthetic dataset is the data's table with the column replaced by its synthetic values in
    the column's units (:func:`ppmlib.baselines.peers.frames_of`). S_pMSE comes from
    :func:`ppmlib.evaluate.utility.pmse` (a logistic propensity model on the predictors and the column,
    averaged over the m datasets); EMR, TMR and FMR from
    :func:`ppmlib.evaluate.disclosure.identification_risk` (an intruder who knows a record's predictors,
    matched exactly, and its value, matched within ``radius`` of it). Only these summaries are
    shown, never a value.

    Parameters
    ----------
    results, prepared
        The synthesizers (each with m synthetic datasets) and their data, as for :func:`drivers`.
    radius : float
        The identification risk's matching radius, relative: a share of the record's own value.

    Returns
    -------
    pandas.DataFrame
        Indexed by synthesizer: ``S_pMSE logit`` and, with categorical predictors, ``EMR``, ``TMR``
        and ``FMR``.
    """
    import pandas as pd

    from ppmlib.evaluate.disclosure import identification_risk
    from ppmlib.baselines.peers import frames_of
    from ppmlib.evaluate.utility import pmse
    column, predictors = prepared.column, list(prepared.predictors)
    data = prepared.table[[*predictors, column]].reset_index(drop=True)
    categorical = [p for p in predictors if is_categorical(data[p])]
    rows = {}
    for name, r in results.items():
        releases = frames_of(prepared.original_units(r.synthetic), data, column)
        rows[name] = {"S_pMSE logit": pmse(data, releases).summary()["S_pMSE"]}
        if categorical:
            risk = identification_risk(data, releases, predictors, column, radius=radius).summary()
            rows[name].update({key: risk[key] for key in ("EMR", "TMR", "FMR")})
    return pd.DataFrame.from_dict(rows, orient="index")
