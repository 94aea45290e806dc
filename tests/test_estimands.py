"""The analyst's estimands: least squares (ppmlib.evaluate.utility.ols) and the tables with Reiter's combining rules."""
import numpy as np
import pytest
from scipy import stats

from ppmlib.evaluate import estimands

from ppmlib.evaluate import utility


def test_ols_matches_polyfit_and_the_classical_variance():
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    y = 1.5 - 0.7 * x + rng.normal(0, 0.3, 200)
    beta, var = utility.ols(y, np.column_stack([np.ones(200), x]))
    np.testing.assert_allclose(beta, np.polyfit(x, y, 1)[::-1], rtol=1e-10)
    slope = stats.linregress(x, y)
    assert np.sqrt(var[1]) == pytest.approx(slope.stderr, rel=1e-10)
    assert np.sqrt(var[0]) == pytest.approx(slope.intercept_stderr, rel=1e-10)


def test_identical_synthetic_datasets_give_the_data_estimate_and_a_normal_interval():
    rng = np.random.default_rng(4)
    X = np.column_stack([np.ones(100), rng.normal(size=100)])
    y = X @ [2.0, 0.5] + rng.normal(0, 1, 100)
    table = estimands.coefficient_table(y, X, ["(Intercept)", "x"], {"copy": np.tile(y, (4, 1))})
    data, copy = table[table.source == "Data"], table[table.source == "copy"]
    np.testing.assert_allclose(copy["estimate"], data["estimate"], rtol=1e-12)
    # b = 0: T = v_bar and infinite degrees of freedom (the z interval), a little narrower than the t one
    half = (copy["high"] - copy["estimate"]).to_numpy()
    _, var = utility.ols(y, X)
    np.testing.assert_allclose(half, stats.norm.ppf(0.975) * np.sqrt(var), rtol=1e-10)


def test_summary_table_reports_the_data_value_and_the_spread_of_the_synthetic_datasets():
    values = np.arange(1.0, 101.0)
    synthetic = np.vstack([values + shift for shift in range(20)])
    table = estimands.summary_table(values, {"S": synthetic}, B=50, seed=1).set_index(["statistic", "source"])
    assert table.loc[("mean", "Data"), "estimate"] == 50.5
    assert table.loc[("90th pct", "Data"), "estimate"] == pytest.approx(np.percentile(values, 90))
    assert table.loc[("mean", "S"), "estimate"] == pytest.approx(50.5 + 9.5)        # median over the 20 shifts
    assert table.loc[("mean", "S"), "low"] == pytest.approx(50.5 + 0.475)           # 2.5th percentile of 0..19
