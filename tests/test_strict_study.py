"""The strict chapter's study helpers: the fit table's gate and the peers at their own totals."""
import numpy as np

from ppmlib.datasets import simulate
from ppmlib.studies import against_alternatives as alternatives
from ppmlib.studies import strict_privacy as strict


def _grid(draws):
    y = simulate.poisson(100, 100, seed=3)
    return strict.exact_grid(y, [1.0, 20.0], delta=1e-6, m=2, box={"lambda": (50.0, 200.0)}, draws=draws, seed=4,
                             names=("CM", "WCM"))


def test_the_fit_table_shows_every_fit_and_its_gate():
    """Exact draws pass the gate when there are enough of them (bulk and tail ESS >= 400) and fail
    it, still shown with their values, when there are not."""
    many, few = strict.fit_table(_grid(4000), delta=1e-6, m=2), strict.fit_table(_grid(200), delta=1e-6, m=2)
    for table in (many, few):
        assert {"CM", "WCM"} <= set(table["synthesizer"]) and set(table["total epsilon"].dropna()) == {1.0, 20.0}
        # the per-dataset epsilon is the ledger's: basic composition halves E for m = 2 at E = 1
        assert np.isclose(table.loc[table["total epsilon"] == 1.0, "per-dataset epsilon"].iloc[0], 0.5)
    assert many["gate"].all() and (many["max R-hat"] < 1.01).all()
    assert not few["gate"].any() and (few["min bulk ESS"] < 400).all()


def test_a_slow_peer_runs_only_at_its_own_totals():
    design = alternatives.count_design(simulate.poisson(200, 100, seed=5), model="poisson")
    every = strict.peer_grid(design, [1.0, 5.0], m=2, names=["Histogram"], seed=1)
    fewer = strict.peer_grid(design, [1.0, 5.0], m=2, names=["Histogram"], seed=1, only={"Histogram": [5.0]})
    none = strict.peer_grid(design, [1.0, 5.0], m=2, names=["Histogram"], seed=1, only={"Histogram": []})
    assert set(every) == {("Histogram", 1.0), ("Histogram", 5.0)}
    assert set(fewer) == {("Histogram", 5.0)} and none == {}
