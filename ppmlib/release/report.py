"""The synthesis report: its tables (what was released, what it costs, what drives the cost, how
well the fits converged, the analyst's estimands, the disclosure risk and the agencies' measures),
its summary, and how it is made.

The tables are one place, called by the report notebook that ``ppm-synthesize`` executes
(``ppmlib/release/synthesis_report.md``) and by the book's chapter on real wages, so the command's report
and the chapter show the same things. Every table function takes the :class:`ppmlib.mechanism.lineup.Results`
of :func:`ppmlib.release.command.synthesize` (or a Results and a :class:`ppmlib.release.data.Prepared`),
or the same read back by :func:`load_state`.

:func:`write` makes the report: the results go to the notebook's kernel as plain data
(:func:`write_state`: JSON, a NumPy ``.npz`` read without pickle, a Parquet table; nothing that runs
code when it is read), the notebook runs in a kernel that dies with its parent, and the page is
exported without its code. Everything the report shows that it did not write itself (column
names, levels, file names) is HTML-escaped (:func:`text`, :func:`titled`).

Records appear by rank only (rank 1 = largest bound), never with their values.
"""
from __future__ import annotations

__all__ = ["ReportFailed", "has_fits", "privacy_statement", "statement_html", "privacy_html", "ledger_table", "overview", "drivers", "diagnostics", "diagnostics_warning",
           "utility", "coefficients", "attribute_risk", "measures", "cell_frames", "text", "titled", "summary", "write_state",
           "load_state", "write", "Synthesized", "StateResults", "REPORT_NOTEBOOK", "GLOSSARY"]

import html
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ppmlib import _checks
from ppmlib.errors import BadArgument
from ppmlib.datasets.design import is_categorical
from ppmlib.inference.diagnostics import GATE, failing, is_ok

if TYPE_CHECKING:
    import pandas as pd

    from ppmlib.mechanism.lineup import Results
    from ppmlib.release.data import Prepared

REPORT_NOTEBOOK = Path(__file__).with_name("synthesis_report.md")
#: Where the report sends a reader for its words (LW, Delta, epsilon, removal neighbours, ...)
GLOSSARY = "the Glossary page of the ppm-book (book/glossary.md)"
#: Seconds one cell of the report may run
CELL_TIMEOUT = 3600
#: The variables that set the BLAS and OpenMP thread pools; the report's kernel gets 1 in each
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class ReportFailed(RuntimeError):
    """The report's notebook failed; the message names the cell and the error, never a value."""


def _ledger(results) -> dict:
    """The released synthesizer's ledger (:meth:`ppmlib.mechanism.ledger.Ledger.to_dict`): as stored
    by :func:`write_state`, else computed by :func:`ppmlib.mechanism.ledger.of_release`, as the manifest's."""
    stored = getattr(results, "ledger", None)
    if stored is not None:
        return stored
    from ppmlib.mechanism.ledger import of_release
    return of_release(results[results.released], getattr(results, "delta", 1e-6)).to_dict()


def has_fits(results) -> bool:
    """The release came from model fits (False for the "nss-bins" scheme: no bounds, weights or diagnostics).

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results or StateResults
        With ``verdict`` (:func:`ppmlib.release.gate.diagnostics_verdict`, or the pipeline's ``NO_FITS``).

    Returns
    -------
    bool
    """
    return (getattr(results, "verdict", None) or {}).get("verdict") != "no fits"


def privacy_statement(results) -> list[str]:
    """What the release promises, exactly: the ledger's statement, the lines its manifest carries
    (``synthetic.json``'s ``ledger.statement``) and the command prints, word for word.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results or StateResults
        With ``released`` and ``delta`` (and the released member's ``guarantee``), or the ledger
        stored by :func:`write_state`.

    Returns
    -------
    list of str
        One line per number: the guarantee and whom it covers, what it does not cover, epsilon per
        dataset, basic and zCDP composition, the release as a whole.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> s = SimpleNamespace(name="CM", epsilon=2.0, guarantee="strict", synthetic=np.zeros((5, 3)))
    >>> class R(dict): released, delta = "CM", 1e-6
    >>> privacy_statement(R(CM=s))[3]
    'basic composition of m = 5 datasets: (10, 0)-DP'
    """
    return list(_ledger(results)["statement"])


def statement_html(lines) -> str:
    """The privacy statement's lines as the report shows them: one escaped list item each.

    Parameters
    ----------
    lines : sequence of str
        The ledger's statement (:meth:`ppmlib.mechanism.ledger.Ledger.statement`).

    Returns
    -------
    str
        A ``<ul class="ppm-privacy">``.
    """
    return '<ul class="ppm-privacy">' + "".join(f"<li>{text(line)}</li>" for line in lines) + "</ul>"


def _statement_list(results) -> str:
    return statement_html(privacy_statement(results))


def ledger_table(results) -> "pd.DataFrame":
    """The ledger's numbers as a table of one column (the release's privacy cost, term by term).

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results or StateResults
        As for :func:`privacy_statement`.

    Returns
    -------
    pandas.DataFrame
        Index: guarantee, covers, epsilon per dataset, m (a noisy release: k and the share of the
        budget choosing the bins' range), basic composition, rho, delta, the zCDP total at delta, and
        the release's (epsilon, delta).
    """
    import pandas as pd
    book = _ledger(results)
    noisy = book["epsilon_per_dataset"] is None     # one noisy release: no epsilon per dataset
    rows = {"guarantee": book["guarantee"], "covers": book["covers"],
            "epsilon per dataset": book["epsilon_per_dataset"], "m datasets": book["m"],
            **({"k: posterior draws behind the m datasets": book["k_draws"],
                "share of the budget choosing the bins' range": book.get("bounds_share")} if noisy else {}),
            "basic composition: epsilon (delta = 0)": book["basic_composition_epsilon"],
            ("zCDP: rho of the noisy release" if noisy else "zCDP: rho = m epsilon^2 / 8"): book["rho_zcdp"],
            "delta": book["delta"], "zCDP: epsilon at delta": book["zcdp_epsilon_total"],
            "the release: epsilon": book["release_epsilon"], "the release: delta": book["release_delta"]}
    return pd.DataFrame({"value": [v if isinstance(v, str) else "none" if v is None else f"{v:.4g}"
                                   for v in rows.values()]}, index=pd.Index(list(rows), name="ledger"))


def privacy_html(results) -> str:
    """The report's privacy section: :func:`privacy_statement`'s lines and :func:`ledger_table`, as HTML.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results or StateResults
        As for :func:`privacy_statement`.

    Returns
    -------
    str
        A ``<ul>`` of the statement's lines and a titled ``<table>``, every word escaped.
    """
    return _statement_list(results) + titled(ledger_table(results), "The privacy ledger of the release (as in synthetic.json)")


def overview(results: "Results") -> "pd.DataFrame":
    """One row per synthesizer: how it was made, Delta, epsilon per dataset and m * epsilon, and
    which one is released.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results
        The synthesizers of :func:`ppmlib.release.command.synthesize`, each with its m synthetic datasets;
        ``results.released`` (when set) names the released one.

    Returns
    -------
    pandas.DataFrame
        Indexed by synthesizer: made as, Delta, epsilon, m, m * epsilon, mean weight, min weight and
        released ("yes" on the released synthesizer's row, else "").
    """
    m = {name: r.synthetic.shape[0] for name, r in results.items()}
    if not has_fits(results):       # one noisy release: no Delta, no epsilon per dataset, no weights
        table = results.summary()[["made as"]].copy()
        table["m"] = [m[name] for name in table.index]
    else:
        table = results.summary()[["made as", "Delta", "epsilon", "mean weight", "min weight"]].copy()
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
    prepared : ppmlib.release.data.Prepared
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
        raise BadArgument(f"by = {by!r} is not among the synthesizers {list(results)}")
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
        to the column's units (:meth:`ppmlib.release.data.Prepared.original_units`).
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
    if prepared.model not in ("normal", "interactions"):
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

    from ppmlib.baselines.peers import frames_of
    from ppmlib.evaluate.disclosure import identification_risk
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



def cell_frames(results: "Results", prepared: "Prepared", name: str | None = None):
    """The data and the released synthesizer's m datasets as frames of the categorical predictors and
    the column in its units, for the per-cell fit (:func:`ppmlib.plots.cell_distributions`,
    :func:`ppmlib.evaluate.utility.cell_fit`); None without categorical predictors.

    Parameters
    ----------
    results, prepared
        As for :func:`drivers`.
    name : str, optional
        The synthesizer; None is the released one (``results.released``).

    Returns
    -------
    tuple or None
        (data, synthetic frames, keys, column).
    """
    from ppmlib.baselines.peers import frames_of
    keys = [p for p in prepared.predictors if is_categorical(prepared.table[p])]
    if not keys:
        return None
    data = prepared.table[[*keys, prepared.column]].reset_index(drop=True)
    chosen = results[name or results.released]
    return data, frames_of(prepared.original_units(chosen.synthetic), data, prepared.column), keys, prepared.column

# ---------------------------------------------------------------------------------------------
# escaping and titles
# ---------------------------------------------------------------------------------------------

def text(value) -> str:
    """``value`` as HTML text: markup in a column name, a level or a file name shows as itself.

    Parameters
    ----------
    value : object
        Anything; its ``str``.

    Returns
    -------
    str
        HTML-escaped (``<``, ``>``, ``&`` and quotes), with ``$`` escaped too so that MathJax leaves it alone.

    Examples
    --------
    >>> text("<script>alert(2)</script>")
    '&lt;script&gt;alert(2)&lt;/script&gt;'
    """
    return html.escape(str(value), quote=True).replace("$", "&#36;")


def titled(table: "pd.DataFrame", title: str, float_format: str = "{:.3g}") -> str:
    """A table as HTML with its title as the table's caption; every name and cell escaped.

    Parameters
    ----------
    table : pandas.DataFrame
        The table.
    title : str
        Its title (escaped too).
    float_format : str
        How numbers are shown.

    Returns
    -------
    str
        ``<table>`` with a ``<caption>``.
    """
    body = table.to_html(escape=True, border=0, float_format=float_format.format, na_rep="")
    start = body.index(">", body.index("<table")) + 1
    return f"{body[:start]}<caption>{text(title)}</caption>{body[start:]}".replace("$", "&#36;")


def _risk_line(measured: "pd.DataFrame", released: str) -> str:
    if {"EMR", "TMR"} - set(measured.columns):
        return "not measured: the model has no categorical predictors to match on"
    top = measured[["EMR", "TMR", "FMR"]].astype(float)
    worst = top["TMR"].idxmax()
    return (f"{text(released)}: TMR {top.loc[released, 'TMR']:.3g}, EMR {top.loc[released, 'EMR']:.3g} "
            f"(highest TMR of all synthesizers: {text(worst)}, {top.loc[worst, 'TMR']:.3g})")


def _driver_step(results, prepared: "Prepared") -> str:
    """Where the record with the largest bound sits, by percentile (never by value)."""
    chosen = results[results.released]
    bounds = {name: r.bounds for name, r in results.items()}
    top_record = int(np.argmax(bounds.get("Unweighted", chosen.bounds)))
    share = 100 * (np.argsort(np.argsort(prepared.values, kind="stable"), kind="stable")[top_record] + 1) / prepared.n
    return ("The records that drive Δ: the record with the largest bound sits at the "
            f"{share:.0f}th percentile of the column; its weight says how much the release protects it.")


def summary(results, prepared: "Prepared", measured: "pd.DataFrame") -> str:
    """The report's first block: the cost, the verdict, the utility and risk figures, what to read next.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results or the result of :func:`load_state`
        With ``released``, ``verdict`` (:func:`ppmlib.release.gate.diagnostics_verdict`) and
        optionally ``budget``.
    prepared : Prepared
        The data (its n).
    measured : pandas.DataFrame
        :func:`measures` of the results.

    Returns
    -------
    str
        HTML (a definition list), every name escaped.
    """
    chosen = results[results.released]
    m, n = chosen.synthetic.shape[0], prepared.n
    verdict = getattr(results, "verdict", None) or {"verdict": "passed" if not diagnostics_warning(results) else "failed",
                                                    "failing": [], "released_anyway": False}
    if verdict["verdict"] == "no fits":
        gate = text(verdict["gate"])
    elif verdict["verdict"] == "passed":
        gate = f"passed: every fit meets the gate ({GATE})"
    else:
        gate = (f"<strong>FAILED</strong> for {text(', '.join(verdict['failing']))} ({GATE})"
                + ("; released anyway as asked" if verdict.get("released_anyway") else ""))
    spmse = float(measured.loc[results.released, "S_pMSE logit"])
    next_steps = []
    if verdict["verdict"] == "failed":
        next_steps.append("Convergence: the failing fits' Δ and ε are not reliable; fit again with more draws "
                          "before publishing anything.")
    if spmse > 3:
        next_steps.append("Utility: S_pMSE is well above 1, so the synthetic column is easy to tell from the data; "
                          "compare the distributions and estimands below.")
    if has_fits(results):
        next_steps.append(_driver_step(results, prepared))
    next_steps.append(f"The words (LW, Δ, ε, removal neighbours, S_pMSE, TMR): {GLOSSARY}.")
    budget = getattr(results, "budget", None)
    rows = [
        ("Released", f"{text(chosen.name)}: m = {m} synthetic datasets of <code>{text(prepared.column)}</code> "
                     f"({n} records)"),
        ("Privacy", _statement_list(results)
                    + (f"<p>Budget: m · ε at most {budget:g}.</p>" if budget is not None else "")),
        ("Diagnostics", gate),
        ("Utility", f"S_pMSE (logit) of {text(chosen.name)}: {spmse:.3g} (about 1: the data and the synthetic "
                    "datasets cannot be told apart; larger: they can)"),
        ("Identification risk", _risk_line(measured, results.released)),
        ("Look next at", "<ul>" + "".join(f"<li>{step}</li>" for step in next_steps) + "</ul>"),
    ]
    items = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    return f'<section class="ppm-summary"><h2>Summary</h2><dl>{items}</dl></section>'


# ---------------------------------------------------------------------------------------------
# the results handed to the report's kernel: plain data, nothing that runs code when read
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Synthesized:
    """One synthesizer as the report reads it back: its numbers, no fit object.

    Attributes
    ----------
    name : str
    delta, epsilon : float
    bounds, weights : ndarray, shape (n,)
    synthetic : ndarray, shape (m, n)
        On the model's scale (log for the log models), as a Synthesis holds them.
    diagnostics : dict
    """
    name: str
    delta: float
    epsilon: float
    bounds: np.ndarray
    weights: np.ndarray
    synthetic: np.ndarray
    diagnostics: dict


class StateResults(dict):
    """name -> :class:`Synthesized`, with what the report needs of a lineup's results.

    Parameters
    ----------
    items : iterable of (str, Synthesized)
    released, budget, verdict, overview, risk, ledger
        As the attributes; ``overview`` is what :meth:`summary` returns.

    Attributes
    ----------
    released : str
    budget : float or None
    verdict : dict
    risk : pandas.DataFrame or None
        :func:`attribute_risk`, computed where the fits were.
    ledger : dict or None
        The released synthesizer's ledger, as the manifest holds it (:func:`privacy_statement`).
    """

    def __init__(self, items, *, released, budget, verdict, overview, risk, ledger=None):
        super().__init__(items)
        self.released, self.budget, self.verdict, self._overview, self.risk = released, budget, verdict, overview, risk
        self.ledger = ledger

    def summary(self) -> "pd.DataFrame":
        """The lineup's summary table as it was when the state was written.

        Returns
        -------
        pandas.DataFrame
        """
        return self._overview.copy()


STATE_JSON, STATE_ARRAYS, STATE_TABLE = "state.json", "state.npz", "table.parquet"


def _frame_json(table) -> dict | None:
    if table is None:
        return None
    return {**json.loads(table.to_json(orient="split", double_precision=15)), "index_name": table.index.name}


def _frame(data):
    import pandas as pd
    if data is None:
        return None
    return pd.DataFrame(data["data"], index=pd.Index(data["index"], name=data.get("index_name")),
                        columns=data["columns"])


def write_state(results, folder, H: int = 50) -> Path:
    """Write what the report needs of ``results`` into ``folder`` (0700) as plain data.

    ``state.json`` (names, numbers, small tables), ``state.npz`` (the arrays; read with
    ``allow_pickle=False``) and ``table.parquet`` (the data's used columns). These hold the
    confidential data: ``folder`` is the run's private staging folder, removed with it.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results
        Of :func:`ppmlib.release.command.synthesize` (with ``prepared``, ``released``, ``budget``).
    folder : str or PathLike
        An existing private folder.
    H : int
        Draws used by the attribute-risk estimator (:func:`attribute_risk`), computed here where
        the fits are.

    Returns
    -------
    pathlib.Path
        The folder.
    """
    folder = Path(folder)
    prepared = results.prepared
    arrays = {"values": np.asarray(prepared.values, float), "y": np.asarray(prepared.y, float)}
    if prepared.X is not None:
        arrays["X"] = np.asarray(prepared.X, float)
    names, fits = list(results), has_fits(results)
    for i, (name, r) in enumerate(results.items()):
        arrays.update({f"bounds_{i}": np.asarray(r.bounds if fits else (), float),
                       f"weights_{i}": np.asarray(r.weights if fits else (), float),
                       f"synthetic_{i}": np.asarray(r.synthetic, float)})
    np.savez(folder / STATE_ARRAYS, **arrays)
    prepared.table[[*prepared.predictors, prepared.column]].to_parquet(folder / STATE_TABLE)
    overview_table = _overview_of(results)
    meta = {
        "source": prepared.source, "column": prepared.column, "model": prepared.model,
        "predictors": list(prepared.predictors), "terms": list(prepared.terms), "dropped": prepared.dropped,
        "prior": prepared.prior, "released": results.released, "budget": getattr(results, "budget", None),
        "verdict": getattr(results, "verdict", None), "ledger": _ledger(results),
        "synthesizers": [{"name": name, "delta": float(r.delta) if fits else None,
                          "epsilon": float(r.epsilon) if fits else None,
                          "diagnostics": {k: (v if isinstance(v, str) else float(v)) for k, v in r.diagnostics.items()
                                          if isinstance(v, (int, float, str, np.number))}}
                         for name, r in results.items()],
        "order": names, "overview": _frame_json(overview_table),
        "risk": _frame_json(attribute_risk(results, prepared, H) if fits else None),
    }
    (folder / STATE_JSON).write_text(json.dumps(meta), encoding="utf-8")
    return folder


def _overview_of(results) -> "pd.DataFrame":
    """The lineup's summary as the report shows it; without fits, how the release was made (the registry's words)."""
    import pandas as pd
    if has_fits(results):
        return results.summary()[["made as", "Delta", "epsilon", "mean weight", "min weight"]]
    from ppmlib.mechanism.schemes import scheme
    return pd.DataFrame({"made as": [scheme(name).summary for name in results]}, index=pd.Index(list(results)))


def load_state(folder) -> tuple[StateResults, "Prepared"]:
    """Read back what :func:`write_state` wrote (no pickle: JSON, ``.npz`` without objects, Parquet).

    Parameters
    ----------
    folder : str or PathLike

    Returns
    -------
    (StateResults, Prepared)
        The synthesizers and the data, as the table functions of this module take them.
    """
    import pandas as pd

    from ppmlib.release.data import Prepared
    folder = Path(folder)
    meta = json.loads((folder / STATE_JSON).read_text(encoding="utf-8"))
    with np.load(folder / STATE_ARRAYS, allow_pickle=False) as stored:
        arrays = {key: stored[key] for key in stored.files}
    table = pd.read_parquet(folder / STATE_TABLE)
    model, values = meta["model"], arrays["values"]
    y = arrays["y"] if model not in ("poisson", "negbin") else arrays["y"].astype(np.int64)
    prepared = Prepared(meta["source"], meta["column"], model, tuple(meta["predictors"]), values, y, arrays.get("X"),
                        tuple(meta["terms"]), table, meta["dropped"], meta["prior"])
    items = [(s["name"], Synthesized(s["name"], s["delta"], s["epsilon"], arrays[f"bounds_{i}"],
                                     arrays[f"weights_{i}"], arrays[f"synthetic_{i}"], s["diagnostics"]))
             for i, s in enumerate(meta["synthesizers"])]
    results = StateResults(items, released=meta["released"], budget=meta["budget"], verdict=meta["verdict"],
                           overview=_frame(meta["overview"]), risk=_frame(meta["risk"]), ledger=meta["ledger"])
    return results, prepared


# ---------------------------------------------------------------------------------------------
# running the notebook
# ---------------------------------------------------------------------------------------------

def _notebook(params: dict):
    """The report notebook with ``params`` in its parameters cell."""
    import jupytext
    notebook = jupytext.read(REPORT_NOTEBOOK)
    cell = next(c for c in notebook.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    cell.source = "\n".join(f"{name} = {value!r}" for name, value in params.items())
    return notebook


def _client_class():
    """nbclient's NotebookClient, except that it leaves the process's signal handlers alone.

    NotebookClient installs its own SIGINT and SIGTERM handlers while the kernel runs (and resets
    them to the defaults afterwards): the command's handlers, which remove the staging folder and
    stop the kernel, would never run.
    """
    from contextlib import asynccontextmanager

    from nbclient import NotebookClient

    class Client(NotebookClient):
        @asynccontextmanager
        async def async_setup_kernel(self, **kwargs):
            cleanup_kc = kwargs.pop("cleanup_kc", self.owns_km)
            if self.km is None:
                self.km = self.create_kernel_manager()
            if not self.km.has_kernel:
                await self.async_start_new_kernel(**kwargs)
            if self.kc is None:
                await self.async_start_new_kernel_client()
            try:
                yield
            finally:
                if cleanup_kc:
                    await self._async_cleanup_kernel()

    return Client


def _execute(notebook, cwd: Path) -> None:
    """Run the notebook in a kernel that dies with this process, with its temporary files in ``cwd``."""
    import subprocess
    import tempfile
    from functools import partial

    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    from ppmlib import _children
    tmp = cwd / "tmp"
    tmp.mkdir(mode=0o700, exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}   # the kernel's inline figures
    env.update({"TMPDIR": str(tmp), "PYDEVD_DISABLE_FILE_VALIDATION": "1"})
    # one BLAS thread: the report's regressions and propensity fits are small, and a pool of BLAS
    # threads on a busy machine waited for itself (the coefficients' cell took seconds, not tenths)
    env.update({name: "1" for name in BLAS_THREADS})
    client = _client_class()(notebook, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=False)
    # this process's temporary files while the kernel runs (its connection file, say) go into the
    # private folder too, so that they go with it whatever stops the run
    saved, tempfile.tempdir = tempfile.tempdir, str(tmp)
    try:
        # the kernel's own chatter (its TCP warning, say) goes nowhere: not into the caller's output
        client.execute(cwd=str(cwd), env=env, preexec_fn=partial(_children.die_with_parent, os.getpid()),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except CellExecutionError as err:
        cell = next((i for i, c in enumerate(notebook.cells) if c.cell_type == "code"
                     and any(o.get("output_type") == "error" for o in c.get("outputs", []))), "?")
        raise ReportFailed(f"the report failed in its cell {cell}: {err.ename}: {err.evalue[:300]}") from None
    except (CellTimeoutError, DeadKernelError, RuntimeError) as err:
        raise ReportFailed(f"the report failed: {type(err).__name__}: {str(err)[:300]}") from None
    finally:
        tempfile.tempdir = saved


def _page(notebook) -> str:
    """The executed notebook as one HTML page: outputs only (no code, no prompts, no stderr)."""
    from nbconvert import HTMLExporter

    from ppmlib.release.staging import REPORT_MARK
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.get("outputs", []) if not (o.get("output_type") == "stream"
                                                                       and o.get("name") == "stderr")]
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(notebook)
    return body.replace("<head>", f"<head>\n{REPORT_MARK}", 1)


def write(results, target, private, *, resamples: int = 500, H: int = 50) -> Path:
    """The confidential report of ``results`` as one HTML page at ``target``.

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results
        Of :func:`ppmlib.release.command.synthesize`.
    target : str or PathLike
        The page (in the run's staging folder; published from there).
    private : str or PathLike
        A private folder for the report's inputs and the kernel's temporary files.
    resamples : int
        Bootstrap resamples of the data for its intervals.
    H : int
        Draws used by the attribute-risk estimator.

    Returns
    -------
    pathlib.Path
        ``target``, written 0600 (it summarizes the confidential data).

    Raises
    ------
    ReportFailed
        A cell failed, timed out, or the kernel died.
    """
    private, target = Path(private), Path(target)
    state = write_state(results, private, H=H)
    notebook = _notebook({"state": str(state), "B": int(resamples)})
    _execute(notebook, private)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(_page(notebook))
    return target
