"""The shipped CE-like sample is what the generator makes, and looks like the CE sample."""
import hashlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppmlib.datasets import ce_like

# SHA-256 of data/ce_like.csv before the lower tail was added (git show d8667a9:data/ce_like.csv)
PRE_TAIL_SHA256 = "eed6a5b3c8f879efd7df8ec0f21398f4f8b9589cbe000181ac4658c9bfe8895a"


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
    bulk = df["Income"].to_numpy() >= ce_like.TINY_MAX  # the tail of tiny incomes blurs the relation
    assert np.corrcoef(log_income[bulk], log_exp[bulk])[0, 1] > 0.4
    levels = {"Gender": 2, "Age": 5, "Education": 8, "Region": 4, "Urban": 2, "MaritalStatus": 5,
              "UrbanType": 3, "CBSA": 3, "Earner": 2, "UrbanRural": 2, "Race": 6}
    for column, k in levels.items():
        assert df[column].nunique() == k, column
    assert set(df["FamilySize"]) <= set(range(1, 12))
    assert ((df["UrbanRural"] == 1) == (df["Urban"] == "Urban")).all()


def test_log_scale_rounds_to_one_decimal():
    log_income, _ = ce_like.log_scale(ce_like.load())
    np.testing.assert_allclose(log_income, np.round(log_income, 1))


def test_the_shipped_lower_tail_is_what_its_card_says():
    # data/README.md: 18 units under $1,000, two of them at the $1 floor (log income 0), the largest
    # of them $366; the smallest income above the tail is the old minimum, $2,379
    income = ce_like.load()["Income"].to_numpy()
    tiny = np.sort(income[income < ce_like.TINY_MAX])
    assert len(tiny) == 18 and list(tiny[:3]) == [1, 1, 2] and tiny[-1] == 366
    assert income[income >= ce_like.TINY_MAX].min() == 2379


def test_without_the_tail_the_generator_makes_the_stand_in_shipped_before_it():
    # the tail is drawn after everything else, so with tiny_share = 0 the generator reproduces, byte
    # for byte, the data/ce_like.csv shipped before issue 22 (its SHA-256, from git history), and so
    # does load(lower_tail=False), which the chapters about the bulk read
    for before in (ce_like.generate(tiny_share=0.0), ce_like.load(lower_tail=False)):
        text = before.to_csv(index=False, lineterminator="\n").encode()
        assert hashlib.sha256(text).hexdigest() == PRE_TAIL_SHA256


def test_the_bulk_is_only_for_the_shipped_file(tmp_path):
    other = tmp_path / "other.csv"
    ce_like.load().to_csv(other, index=False)
    assert ce_like.load(other).equals(ce_like.load())
    with pytest.raises(ValueError, match="does not apply to another file"):
        ce_like.load(other, lower_tail=False)


def test_the_tail_takes_its_share_log_uniformly_and_leaves_every_other_value_alone():
    n, seed = 20_000, 3
    df = ce_like.generate(n, seed)
    untouched = ce_like.generate(n, seed, tiny_share=0.0)
    # every column but income, and the income of every unit outside the tail, as without the tail
    pd.testing.assert_frame_equal(df.drop(columns="Income"), untouched.drop(columns="Income"))
    in_tail = (df["Income"] != untouched["Income"]).to_numpy()
    # the tail's share: 1% (binomial sd 0.0007 at this n), its incomes $1 to $1,000, floored at $1
    assert abs(in_tail.mean() - 0.01) < 0.0025
    tail = df["Income"].to_numpy()[in_tail]
    assert tail.min() == 1 and tail.max() < ce_like.TINY_MAX
    # log-uniform: the mean log income is the interval's centre, log(1000) / 2 = 3.45 (sd 0.14 here)
    assert abs(np.log(tail).mean() - np.log(ce_like.TINY_MAX) / 2) < 0.45
