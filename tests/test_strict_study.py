"""The strict chapter's study helpers: the fit table's gate and the peers at their own totals."""
import numpy as np
import pytest

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


def _peer_rows():
    import pandas as pd
    rows = []
    for E, mine, aim, hist, secs, sd in [(1.0, 2.0, 3.0, 1.0, 5.0, 1.3), (2.0, 1.4, 1.5, 1.0, 5.0, 1.0),
                                         (5.0, 0.9, 0.8, 0.5, 60.0, 1.05), (10.0, 0.7, 0.9, 0.5, 5.0, 1.0)]:
        rows += [{"file": "f", "total epsilon": E, "synthesizer": "mine", "S_pMSE logit": mine, "seconds": secs,
                  "SD log y ratio": sd},
                 {"file": "f", "total epsilon": E, "synthesizer": "AIM", "S_pMSE logit": aim, "seconds": 100.0,
                  "SD log y ratio": ""},
                 {"file": "f", "total epsilon": E, "synthesizer": "Histogram", "S_pMSE logit": hist, "seconds": 0.1,
                  "SD log y ratio": ""}]
    return pd.DataFrame(rows)


def test_target_cells_judges_each_target_where_it_is_asked():
    from ppmlib.studies.strict_privacy import target_cells
    cells = target_cells(_peer_rows(), "mine").set_index("total epsilon")
    assert cells["<= AIM"].tolist() == [True, True, False, True]
    assert cells["<= 1.5 histogram"].tolist() == [None, True, False, True]     # 1.4 <= 1.5, 0.9 > 0.75, 0.7 <= 0.75
    assert cells["<= half AIM's time"].tolist() == [True, True, False, True]
    assert cells["SD within 10%"].tolist() == [None, None, True, None]


def test_seed_summary_averages_over_seeds_and_counts_the_wins():
    import pandas as pd

    from ppmlib.studies.strict_privacy import seed_summary
    rows = [{"seed": s, "file": "f", "total epsilon": 2.0, "synthesizer": who, "S_pMSE logit": v, "coverage 95%": c}
            for s, (a, b) in enumerate([(1.0, 2.0), (3.0, 1.0), (2.0, 3.0)])
            for who, v, c in (("ppm NSS bins (x)", a, 1.0), ("Histogram", b, 0.5))]
    out = seed_summary(pd.DataFrame(rows)).loc[("f", 2.0)]
    assert out["NSS bins"] == 2.0 and out["histogram"] == 2.0 and out["ratio"] == 1.0
    assert out["seeds no worse"] == 2 and out["seeds"] == 3 and out["NSS bins coverage"] == 1.0


def test_target_cells_judge_seed_one_and_seed_targets_average_the_seeds_both_ran():
    import pandas as pd

    from ppmlib.studies.strict_privacy import seed_targets, target_cells
    extra = []
    for seed, mine, aim, hist, sd in [(2, 1.0, 0.5, 1.0, 1.2), (3, 0.6, 1.5, 0.4, 1.0)]:
        extra += [{"file": "f", "seed": seed, "total epsilon": 2.0, "synthesizer": who, "S_pMSE logit": v,
                   "seconds": 1.0, "SD log y ratio": s}
                  for who, v, s in (("mine", mine, sd), ("AIM", aim, None), ("Histogram", hist, None))]
    extra.append({"file": "f", "seed": 4, "total epsilon": 2.0, "synthesizer": "mine", "S_pMSE logit": 9.0,
                  "seconds": 1.0, "SD log y ratio": 1.0})                 # no AIM on seed 4: left out
    table = pd.concat([_peer_rows(), pd.DataFrame(extra)], ignore_index=True)
    assert target_cells(table, "mine").set_index("total epsilon")["<= AIM"].tolist() == [True, True, False, True]
    out = seed_targets(table, "mine").loc[("f", 2.0)]
    # seeds 1-3 at E = 2: mine 1.4, 1.0, 0.6 (mean 1.0); AIM 1.5, 0.5, 1.5 (mean 7/6); histogram 1.0, 1.0, 0.4 (0.8)
    assert out["candidate"] == pytest.approx(1.0) and out["AIM"] == pytest.approx(7 / 6)
    assert out["to AIM"] == pytest.approx(6 / 7) and out["to histogram"] == pytest.approx(1.25)
    assert out["worst seed to AIM"] == pytest.approx(2.0) and out["seeds"] == 3
    assert out["SD log y ratio"] == pytest.approx((1.0 + 1.2 + 1.0) / 3)
