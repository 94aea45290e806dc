"""The measure that sees shape: the per-cell Kolmogorov-Smirnov distance, against scipy."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppmlib.errors import BadArgument
from ppmlib.evaluate.utility import cell_ks, ks_distance


@pytest.mark.parametrize("seed", range(6))
def test_ks_distance_is_scipys_statistic_ties_included(seed):
    rng = np.random.default_rng(seed)
    a = np.round(rng.normal(size=rng.integers(1, 30)), 1)   # rounding makes ties within and across
    b = np.round(rng.normal(0.3, 1.5, size=rng.integers(1, 30)), 1)
    assert ks_distance(a, b) == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-15)
    assert ks_distance(b, a) == pytest.approx(stats.ks_2samp(b, a).statistic, abs=1e-15)


@pytest.mark.parametrize("a, b", [([1.0, 2.0], [0.0]), ([0.0, 0.0, 1.0], [0.0, 1.0, 1.0]), ([3.0], [3.0])])
def test_ks_distance_on_hand_cases(a, b):
    assert ks_distance(a, b) == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-15)


def test_cell_ks_is_the_mean_over_large_cells_of_the_mean_over_datasets():
    rng = np.random.default_rng(1)
    data = pd.DataFrame({"k": ["a"] * 30 + ["b"] * 25 + ["c"] * 5, "y": rng.normal(size=60)})
    one = pd.DataFrame({"k": ["a"] * 20 + ["b"] * 20, "y": rng.normal(0.5, 1, 40)})
    two = pd.DataFrame({"k": ["a"] * 40, "y": rng.exponential(size=40)})   # no record in cell b
    got = cell_ks(data, [one, two], ["k"], "y", min_records=20)
    cell = {k: data.loc[data.k == k, "y"] for k in "ab"}
    a = np.mean([stats.ks_2samp(cell["a"], f.loc[f.k == "a", "y"]).statistic for f in (one, two)])
    b = np.mean([stats.ks_2samp(cell["b"], one.loc[one.k == "b", "y"]).statistic, 1.0])
    assert got["cells"] == 2   # cell c has 5 records, fewer than 20: left out
    assert got["KS per cell"] == pytest.approx((a + b) / 2, abs=1e-12)
    assert cell_ks(data, data, ["k"], "y")["KS per cell"] == 0.0
    assert np.isnan(cell_ks(data, one, ["k"], "y", min_records=100)["KS per cell"])


def test_cell_ks_sees_a_second_mode_that_the_mean_and_sd_hide():
    rng = np.random.default_rng(2)
    n = 2000
    bimodal = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0) + rng.normal(0, 0.2, n)
    data = pd.DataFrame({"k": "a", "y": bimodal})
    normal = pd.DataFrame({"k": "a", "y": rng.normal(bimodal.mean(), bimodal.std(), n)})
    assert cell_ks(data, normal, ["k"], "y")["KS per cell"] > 0.08
    with pytest.raises(BadArgument, match="lack columns"):
        cell_ks(data, normal.drop(columns="k"), ["k"], "y")


def test_cell_fit_shows_the_largest_cells_quantiles_side_by_side():
    from ppmlib.evaluate.utility import cell_fit
    rng = np.random.default_rng(3)
    data = pd.DataFrame({"k": ["a"] * 10 + ["b"] * 30 + ["c"] * 20, "j": "x", "y": rng.normal(size=60)})
    one = pd.DataFrame({"k": ["b"] * 15 + ["c"] * 5, "j": "x", "y": rng.normal(size=20)})
    two = pd.DataFrame({"k": ["b"] * 10, "j": "x", "y": rng.normal(size=10)})
    table = cell_fit(data, [one, two], ["k", "j"], "y", largest=2, quantiles=(0.5,))
    assert table["cell"].tolist() == ["k=b, j=x", "k=c, j=x"] and table["records"].tolist() == [30, 20]
    b = data.loc[data.k == "b", "y"]
    assert table.loc[0, "data q0.5"] == pytest.approx(np.median(b))
    pooled = np.r_[one.loc[one.k == "b", "y"], two["y"]]
    assert table.loc[0, "synthetic q0.5"] == pytest.approx(np.median(pooled))
    assert table.loc[1, "KS"] == pytest.approx((stats.ks_2samp(data.loc[data.k == "c", "y"], one.loc[one.k == "c", "y"]).statistic
                                                + 1.0) / 2)
