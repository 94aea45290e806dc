"""The salary re-weighting experiment: its summary, and the chapter's claims on the committed run."""
import pytest

from ppmlib.book import results
from ppmlib.studies import reweighting


def _row(data, c, seed, gain, rise=0.01, r=0.1):
    return {"data": data, "c": c, "seed": seed, "k": 0.99, "mean weight LW": 0.9, "mean weight LW_final": 0.9 + rise,
            "r at LW's maximum": r, "gap LW": 7.0, "gap LW_final": 7.0 - gain, "gain": gain}


def test_gain_by_setting_counts_the_seeds_where_lw_final_is_at_least_as_good():
    rows = [_row("a", 1.0, s, g) for s, g in enumerate([0.5, -0.2, 0.0])] + [_row("b", 0.5, 1, 1.0, rise=0.05, r=0.3)]
    table = reweighting.gain_by_setting(rows)
    assert table.loc[("a", 1.0), "LW_final at least as good"] == 2
    assert table.loc[("a", 1.0), "gain min"] == pytest.approx(-0.2)
    assert table.loc[("b", 0.5), "mean weight rise"] == pytest.approx(0.05)


def test_the_chapters_claims_hold_on_the_committed_experiment():
    run = results.read(results.RESULTS / "salary_reweighting.json")
    table = reweighting.gain_by_setting(run["rows"])
    assert table["seeds"].min() >= 4
    out = reweighting.gain_claims(table)
    out.check()
    assert [row["checked"] for row in out.rows] == [True, False]
    mixture = table.loc[[k for k in table.index if k[0].startswith("NB mixture") and k[1] == 1.0]].iloc[0]
    salary = table.loc[[k for k in table.index if k[0].startswith("salary")]]
    assert mixture["gain min"] > 0
    assert mixture["r at LW's maximum"] > salary["r at LW's maximum"].max()
