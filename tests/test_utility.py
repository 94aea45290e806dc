"""ppmlib.utility: statistics, bootstrap, intervals, tail distortion and the standardized gap, by hand."""
import numpy as np
import pandas as pd
import pytest

from ppmlib import utility


def test_statistics_by_hand():
    d = np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [10, 10, 10, 10, 10, 10, 10, 10, 10, 10]])
    s = utility.statistics(d)
    # numpy's linear interpolation (R's type 7): 15th pct of 1..10 is 1 + 0.15 * 9 = 2.35
    np.testing.assert_allclose(s["15th pct"], [2.35, 10])
    np.testing.assert_allclose(s["90th pct"], [9.1, 10])
    np.testing.assert_allclose(s["mean"], [5.5, 10])
    np.testing.assert_allclose(s["median"], [5.5, 10])


def test_bootstrap_is_seeded_resampling():
    y = np.arange(50.0)
    a, b = utility.bootstrap(y, 30, seed=1), utility.bootstrap(y, 30, seed=1)
    assert a.shape == (30, 50) and np.array_equal(a, b)
    assert set(np.unique(a)) <= set(y)


def test_intervals_and_tail_distortion():
    long = pd.DataFrame({
        "source": ["Data"] * 4 + ["LW"] * 4,
        "statistic": ["15th pct", "90th pct"] * 4,
        "value": [70, 130, 70, 130, 72, 127, 72, 127],
    })
    assert utility.tail_distortion(long, "LW") == pytest.approx(2 + 3)
    assert utility.tail_distortion(long, "Data") == 0
    table = utility.intervals(long)
    assert table.loc["15th pct", "LW"] == "72.0–72.0"
    with pytest.raises(ValueError, match="no source 'CW'"):
        utility.tail_distortion(long, "CW")


def test_standardized_gap_counts_bias_and_spread():
    import pandas as pd
    from ppmlib import utility
    long = pd.DataFrame({"source": ["Data"] * 3 + ["A"] * 2 + ["B"] * 2, "statistic": "mean",
                         "value": [9.0, 10.0, 11.0, 12.0, 12.0, 8.0, 12.0]})
    # data: centre 10, sd 1. A is biased by 2; B is centred but spread +-2: both RMSE 2
    assert utility.standardized_gap(long, "A", statistics=("mean",)) == pytest.approx(2.0)
    assert utility.standardized_gap(long, "B", statistics=("mean",)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="no source 'C'"):
        utility.standardized_gap(long, "C", statistics=("mean",))
