"""The shipped CE-like sample is what the generator makes, and looks like the CE sample."""
import numpy as np
from scipy import stats

from ppmlib import ce_like


def test_regenerates_the_shipped_file_byte_for_byte(tmp_path):
    fresh = ce_like.write(tmp_path / "ce_like.csv")
    assert fresh.read_bytes() == ce_like.DATA_FILE.read_bytes()
    assert not list(tmp_path.glob(".ce_like.*"))  # no temporary file left behind


def test_imitates_the_features_of_the_ce_sample():
    df = ce_like.load()
    assert len(df) == 994
    assert (df["Income"] > 0).all() and (df["Expenditure"] > 0).all()
    assert stats.skew(df["Income"]) > 2  # strongly right-skewed
    assert df["Income"].mean() > df["Income"].median()
    log_income, log_exp = ce_like.log_scale(df)
    bulk = df["Income"].to_numpy() >= ce_like.TINY_MAX
    assert np.corrcoef(log_income[bulk], log_exp[bulk])[0, 1] > 0.4
    # the CE's lower tail: about 1% of incomes between $1 and $1,000, floored at $1 (log income 0)
    assert 0.005 <= np.mean(~bulk) <= 0.03 and df["Income"].min() == 1
    levels = {"Gender": 2, "Age": 5, "Education": 8, "Region": 4, "Urban": 2, "MaritalStatus": 5,
              "UrbanType": 3, "CBSA": 3, "Earner": 2, "UrbanRural": 2, "Race": 6}
    for column, k in levels.items():
        assert df[column].nunique() == k, column
    assert set(df["FamilySize"]) <= set(range(1, 12))
    assert ((df["UrbanRural"] == 1) == (df["Urban"] == "Urban")).all()


def test_log_scale_rounds_to_one_decimal():
    log_income, _ = ce_like.log_scale(ce_like.load())
    np.testing.assert_allclose(log_income, np.round(log_income, 1))
